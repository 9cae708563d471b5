/* synthetic.c: the random Markov chain, its entropy rate, and its samples. */
#include "runtime/synthetic.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/errmsg.h"
#include "runtime/rng.h"

/* streams of the chain-construction domain */
enum { CHAIN_CYCLE = 0, CHAIN_SUCCESSOR = 1, CHAIN_WEIGHT = 2 };

#define PI_TOLERANCE 1e-14
#define PI_MAX_ITERATIONS 1000000

void plc_markov_free(plc_markov *mc)
{
    free(mc->succ);
    free(mc->prob);
    free(mc->cum);
    free(mc->pi);
    free(mc->pi_cum);
    memset(mc, 0, sizeof *mc);
}

static int alloc_chain(plc_markov *mc, int64_t vocab, int k, char *err, size_t errlen)
{
    memset(mc, 0, sizeof *mc);
    mc->vocab = vocab;
    mc->k = k;
    size_t n = (size_t)vocab * (size_t)k;
    mc->succ = malloc(n * sizeof *mc->succ);
    mc->prob = malloc(n * sizeof *mc->prob);
    mc->cum = malloc(n * sizeof *mc->cum);
    mc->pi = malloc((size_t)vocab * sizeof *mc->pi);
    mc->pi_cum = malloc((size_t)vocab * sizeof *mc->pi_cum);
    if (!mc->succ || !mc->prob || !mc->cum || !mc->pi || !mc->pi_cum) {
        plc_markov_free(mc);
        return plc_fail(err, errlen, "synthetic source: out of memory for a chain over %lld tokens", (long long)vocab);
    }
    return 0;
}

/* stationary distribution by power iteration on the lazy chain (I + P) / 2,
 * which has the same fixed point and converges for every irreducible chain,
 * periodic ones included; then the entropy rate and the sampling tables */
static int finish_chain(plc_markov *mc, char *err, size_t errlen)
{
    int64_t V = mc->vocab;
    int k = mc->k;
    double *next = malloc((size_t)V * sizeof *next);
    if (!next) return plc_fail(err, errlen, "synthetic source: out of memory");
    for (int64_t i = 0; i < V; i++) mc->pi[i] = 1.0 / (double)V;
    bool converged = false;
    for (int it = 0; it < PI_MAX_ITERATIONS && !converged; it++) {
        for (int64_t i = 0; i < V; i++) next[i] = 0.5 * mc->pi[i];
        for (int64_t i = 0; i < V; i++)
            for (int j = 0; j < k; j++) next[mc->succ[i * k + j]] += 0.5 * mc->pi[i] * mc->prob[i * k + j];
        double total = 0, change = 0;
        for (int64_t i = 0; i < V; i++) total += next[i];
        for (int64_t i = 0; i < V; i++) {
            next[i] /= total; /* keep the rounding drift out of the sum */
            change += fabs(next[i] - mc->pi[i]);
            mc->pi[i] = next[i];
        }
        converged = change < PI_TOLERANCE;
    }
    free(next);
    if (!converged)
        return plc_fail(err, errlen,
                        "synthetic source: the stationary distribution did not converge (reducible chain?)");
    double h = 0, run = 0;
    for (int64_t i = 0; i < V; i++) {
        double hi = 0, c = 0;
        for (int j = 0; j < k; j++) {
            double p = mc->prob[i * k + j];
            if (p > 0) hi -= p * log(p);
            c += p;
            mc->cum[i * k + j] = c;
        }
        mc->cum[i * k + k - 1] = 1.0; /* a uniform below 1 always lands in the row */
        h += mc->pi[i] * hi;
        run += mc->pi[i];
        mc->pi_cum[i] = run;
    }
    mc->pi_cum[V - 1] = 1.0;
    mc->entropy_rate = h;
    return 0;
}

/* uniform integer in [0, n) from 32 random bits (multiply-shift, no modulo) */
static int64_t below(uint32_t r, int64_t n) { return (int64_t)(((uint64_t)r * (uint64_t)n) >> 32); }

int plc_markov_build(plc_markov *mc, int64_t vocab, int successors, uint64_t seed, char *err, size_t errlen)
{
    if (vocab < 2 || vocab > INT32_MAX)
        return plc_fail(err, errlen, "synthetic source: vocabulary of %lld tokens (2 .. 2^31-1 supported)",
                        (long long)vocab);
    if (successors < 1) return plc_fail(err, errlen, "synthetic source: successors must be at least 1");
    int k = successors < vocab ? successors : (int)vocab;
    if (alloc_chain(mc, vocab, k, err, errlen)) return -1;

    /* one random cycle through every token (Sattolo's algorithm) */
    int32_t *cycle = malloc((size_t)vocab * sizeof *cycle);
    if (!cycle) {
        plc_markov_free(mc);
        return plc_fail(err, errlen, "synthetic source: out of memory");
    }
    for (int64_t i = 0; i < vocab; i++) cycle[i] = (int32_t)i;
    plc_rng_key kc = {seed, CHAIN_CYCLE, PLC_RNG_SYNTH_CHAIN};
    for (int64_t i = vocab - 1; i > 0; i--) {
        int64_t j = below(plc_rng_u32(kc, (uint64_t)i), i); /* j < i: a single cycle */
        int32_t t = cycle[i];
        cycle[i] = cycle[j];
        cycle[j] = t;
    }
    plc_rng_key ks = {seed, CHAIN_SUCCESSOR, PLC_RNG_SYNTH_CHAIN};
    plc_rng_key kw = {seed, CHAIN_WEIGHT, PLC_RNG_SYNTH_CHAIN};
    for (int64_t i = 0; i < vocab; i++) {
        int32_t *row = &mc->succ[i * k];
        row[0] = cycle[i];
        /* further successors: distinct random tokens, by rejection; the
         * counter advances with every try, so the result is deterministic */
        uint64_t tries = 0;
        for (int j = 1; j < k; j++) {
            int32_t cand;
            bool fresh;
            do {
                cand = (int32_t)below(plc_rng_u32(ks, ((uint64_t)i << 20) + tries++), vocab);
                fresh = true;
                for (int q = 0; q < j; q++) fresh &= row[q] != cand;
            } while (!fresh);
            row[j] = cand;
        }
        /* Dirichlet(1) probabilities: normalised exponential weights */
        double total = 0;
        for (int j = 0; j < k; j++) {
            double u = 1.0 - plc_rng_uniform(kw, (uint64_t)(i * k + j)); /* in (0, 1] */
            mc->prob[i * k + j] = -log(u) + 1e-12;                       /* strictly positive */
            total += mc->prob[i * k + j];
        }
        for (int j = 0; j < k; j++) mc->prob[i * k + j] /= total;
    }
    free(cycle);
    if (finish_chain(mc, err, errlen)) {
        plc_markov_free(mc);
        return -1;
    }
    return 0;
}

int plc_markov_from_rows(plc_markov *mc, int64_t vocab, int k, const int32_t *succ, const double *prob, char *err,
                         size_t errlen)
{
    if (vocab < 1 || vocab > INT32_MAX || k < 1 || k > vocab)
        return plc_fail(err, errlen, "markov chain: bad sizes (vocab %lld, k %d)", (long long)vocab, k);
    for (int64_t i = 0; i < vocab; i++) {
        double total = 0;
        for (int j = 0; j < k; j++) {
            int32_t s = succ[i * k + j];
            double p = prob[i * k + j];
            if (s < 0 || s >= vocab)
                return plc_fail(err, errlen, "markov chain: row %lld: successor %d out of range", (long long)i, s);
            if (!(p >= 0 && p <= 1))
                return plc_fail(err, errlen, "markov chain: row %lld: probability %g", (long long)i, p);
            for (int q = 0; q < j; q++)
                if (succ[i * k + q] == s)
                    return plc_fail(err, errlen, "markov chain: row %lld: successor %d twice", (long long)i, s);
            total += p;
        }
        if (fabs(total - 1.0) > 1e-9)
            return plc_fail(err, errlen, "markov chain: row %lld sums to %.17g, not 1", (long long)i, total);
    }
    if (alloc_chain(mc, vocab, k, err, errlen)) return -1;
    memcpy(mc->succ, succ, (size_t)(vocab * k) * sizeof *succ);
    memcpy(mc->prob, prob, (size_t)(vocab * k) * sizeof *prob);
    if (finish_chain(mc, err, errlen)) {
        plc_markov_free(mc);
        return -1;
    }
    return 0;
}

double plc_markov_prob(const plc_markov *mc, int32_t a, int32_t b)
{
    if (a < 0 || a >= mc->vocab) return 0;
    for (int j = 0; j < mc->k; j++)
        if (mc->succ[(int64_t)a * mc->k + j] == b) return mc->prob[(int64_t)a * mc->k + j];
    return 0;
}

/* first index i with u < cum[i] (cum ascending, cum[n-1] = 1 > u) */
static int64_t search(const double *cum, int64_t n, double u)
{
    int64_t lo = 0, hi = n - 1;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (u < cum[mid]) hi = mid;
        else lo = mid + 1;
    }
    return lo;
}

void plc_markov_sample_range(const plc_markov *mc, uint64_t seed, uint64_t g, int64_t from, int64_t n, int32_t *out)
{
    /* stream = low 32 bits of g; the high bits go to the top of the index */
    plc_rng_key key = {seed, (uint32_t)g, PLC_RNG_SYNTH_SAMPLE};
    uint64_t base = (g >> 32) << 32;
    int k = mc->k;
    int32_t cur = (int32_t)search(mc->pi_cum, mc->vocab, plc_rng_uniform(key, base));
    for (int64_t t = 0; t < from + n; t++) {
        if (t > 0) {
            double u = plc_rng_uniform(key, base + (uint64_t)t);
            cur = mc->succ[(int64_t)cur * k + search(&mc->cum[(int64_t)cur * k], k, u)];
        }
        if (t >= from) out[t - from] = cur;
    }
}

void plc_markov_sample(const plc_markov *mc, uint64_t seed, uint64_t g, int64_t len, int32_t *out)
{
    plc_markov_sample_range(mc, seed, g, 0, len, out);
}
