/* synthetic.h: the synthetic data source, a fixed random Markov chain.
 *
 * Every token has `successors` distinct next tokens with random
 * probabilities (Dirichlet(1) weights); one of them follows a random cycle
 * through the whole vocabulary, so the chain is irreducible and has a unique
 * stationary distribution pi. Its entropy rate
 *     H = sum_i pi_i * H(P_i)       (nats per token)
 * is the lowest mean cross-entropy any model can reach on samples that start
 * from pi: a trained model's loss should approach it.
 *
 * Sample g (a global sample number) is a pure function of (seed, g): its
 * first token is drawn from pi and each next one from the current row, with
 * uniforms from the counter-based generator (stream = g). See docs/data.md. */
#ifndef PLC_SYNTHETIC_H
#define PLC_SYNTHETIC_H

#include <stddef.h>
#include <stdint.h>

#define PLC_SYNTH_SUCCESSORS 4

typedef struct plc_markov {
    int64_t vocab;
    int k;           /* successors per token */
    int32_t *succ;   /* [vocab, k] next tokens */
    double *prob;    /* [vocab, k] their probabilities (each row sums to 1) */
    double *cum;     /* [vocab, k] running sums of prob, for sampling */
    double *pi;      /* [vocab] stationary distribution */
    double *pi_cum;  /* [vocab] running sums of pi */
    double entropy_rate;
} plc_markov;

/* the random chain of the synthetic source. 0, or -1 with err. */
int plc_markov_build(plc_markov *mc, int64_t vocab, int successors, uint64_t seed, char *err, size_t errlen);

/* a chain from explicit rows (for tests): rows must be probability vectors
 * over distinct in-range successors, and the chain must converge to one
 * stationary distribution. 0, or -1 with err. */
int plc_markov_from_rows(plc_markov *mc, int64_t vocab, int k, const int32_t *succ, const double *prob, char *err,
                         size_t errlen);

void plc_markov_free(plc_markov *mc);

/* tokens 0 .. len-1 of sample g */
void plc_markov_sample(const plc_markov *mc, uint64_t seed, uint64_t g, int64_t len, int32_t *out);

/* tokens [from, from + n) of sample g, without storing the prefix */
void plc_markov_sample_range(const plc_markov *mc, uint64_t seed, uint64_t g, int64_t from, int64_t n, int32_t *out);

/* probability of the transition a -> b (0 when b is not a successor of a) */
double plc_markov_prob(const plc_markov *mc, int32_t a, int32_t b);

#endif
