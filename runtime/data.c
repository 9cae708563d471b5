/* data.c: the two data sources behind one fetch, and the sample order of
 * token files (a keyed permutation of windows per epoch). */
#include "runtime/data.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/errmsg.h"
#include "runtime/rng.h"
#include "runtime/synthetic.h"
#include "runtime/tokfile.h"

struct plc_data {
    int64_t vocab, seq_len;
    uint64_t seed;
    bool synthetic;
    plc_tokfile file;
    uint64_t windows; /* token files: whole windows in the file */
    plc_markov chain;
    char describe[320];
};

#define FEISTEL_ROUNDS 6

/* a source of model m's shape, or NULL after a message in err */
static plc_data *data_new(const plc_model *m, uint64_t seed, char *err, size_t errlen)
{
    if (m->vocab < 2 || m->vocab > INT32_MAX) {
        plc_fail(err, errlen, "data: vocab %lld out of range", (long long)m->vocab);
        return NULL;
    }
    if (m->seq_len < 1) {
        plc_fail(err, errlen, "data: seq_len %lld out of range", (long long)m->seq_len);
        return NULL;
    }
    plc_data *d = calloc(1, sizeof *d);
    if (!d) {
        plc_fail(err, errlen, "data: out of memory");
        return NULL;
    }
    d->vocab = m->vocab;
    d->seq_len = m->seq_len;
    d->seed = seed;
    return d;
}

int plc_data_open_file(plc_data **out, const char *path, const plc_model *m, uint64_t seed, char *err, size_t errlen)
{
    plc_data *d = data_new(m, seed, err, errlen);
    if (!d) return -1;
    if (plc_tokfile_open(&d->file, path, err, errlen)) {
        free(d);
        return -1;
    }
    /* the rules plc compile checked too (common/tokfile_format.h) */
    plc_tokfile_head h = {.token_bytes = d->file.token_bytes, .vocab = d->file.vocab, .count = d->file.count};
    char why[300];
    if (plc_tokfile_fits_model(&h, m->vocab, m->seq_len, why, sizeof why)) {
        plc_fail(err, errlen, "%s: %s", path, why);
        plc_data_close(d);
        return -1;
    }
    /* windows of seq_len + 1 tokens start every seq_len tokens (the target of
     * one window's last position is the next window's first input) */
    d->windows = (d->file.count - 1) / (uint64_t)m->seq_len;
    snprintf(d->describe, sizeof d->describe, "token file %s: %llu tokens, %llu samples of %lld per epoch", path,
             (unsigned long long)d->file.count, (unsigned long long)d->windows, (long long)m->seq_len);
    *out = d;
    return 0;
}

int plc_data_open_synthetic(plc_data **out, const plc_model *m, uint64_t seed, char *err, size_t errlen)
{
    plc_data *d = data_new(m, seed, err, errlen);
    if (!d) return -1;
    d->synthetic = true;
    if (plc_markov_build(&d->chain, m->vocab, PLC_SYNTH_SUCCESSORS, seed, err, errlen)) {
        free(d);
        return -1;
    }
    snprintf(d->describe, sizeof d->describe,
             "synthetic source: entropy rate %.4f nats/token (Markov chain over %lld tokens, %d successors each)",
             d->chain.entropy_rate, (long long)m->vocab, d->chain.k);
    *out = d;
    return 0;
}

int plc_data_open(plc_data **out, const plc_model *m, const plc_train *t, char *err, size_t errlen)
{
    if (t->data_path) return plc_data_open_file(out, t->data_path, m, t->seed, err, errlen);
    return plc_data_open_synthetic(out, m, t->seed, err, errlen);
}

/* dir/rel, or rel when dir is "" ; false when it does not fit */
static bool join(char *out, size_t outlen, const char *dir, const char *rel)
{
    int n = dir[0] ? snprintf(out, outlen, "%s/%s", dir, rel) : snprintf(out, outlen, "%s", rel);
    return n >= 0 && (size_t)n < outlen;
}

int plc_data_locate(const char *stored, const char *plan_path, const char *data_root, char *out, size_t outlen,
                    char *err, size_t errlen)
{
    if (stored[0] == '/' || data_root) {
        if (!join(out, outlen, stored[0] == '/' ? "" : data_root, stored))
            return plc_fail(err, errlen, "token file %s: path too long", stored);
        return 0;
    }
    /* beside the plan, then the working directory */
    char dir[4096];
    const char *slash = strrchr(plan_path, '/');
    size_t k = slash ? (size_t)(slash - plan_path) : 0;
    if (slash && k == 0) k = 1; /* a plan in / */
    if (k >= sizeof dir) return plc_fail(err, errlen, "plan %s: path too long", plan_path);
    memcpy(dir, plan_path, k);
    dir[k] = '\0';
    if (!join(out, outlen, dir, stored)) return plc_fail(err, errlen, "token file %s: path too long", stored);
    if (access(out, F_OK) == 0) return 0;
    char beside[4096];
    snprintf(beside, sizeof beside, "%s", out);
    if (!dir[0]) /* the plan is in the working directory: one place */
        return plc_fail(err, errlen,
                        "token file %s (train.data, relative to the spec's directory) not found beside the plan: "
                        "%s does not exist; give --data-root DIR, DIR being what the path is relative to",
                        stored, beside);
    snprintf(out, outlen, "%s", stored);
    if (access(out, F_OK) == 0) return 0;
    return plc_fail(err, errlen,
                    "token file %s (train.data, relative to the spec's directory) not found beside the plan (%s) "
                    "nor in the working directory (%s); give --data-root DIR, DIR being what the path is "
                    "relative to",
                    stored, beside, stored);
}

int plc_data_check_record(const char *path, const plc_train *t, bool with_crc, char *err, size_t errlen)
{
    uint64_t size;
    uint32_t crc;
    char why[300];
    if (plc_file_fingerprint(path, with_crc, &size, &crc, why, sizeof why))
        return plc_fail(err, errlen, "token file %s: %s", path, why);
    if (size == t->data_size && (!with_crc || crc == t->data_crc32)) return 0;
    /* a file of another size: its checksum too, for the message */
    if (!with_crc && plc_file_fingerprint(path, true, &size, &crc, why, sizeof why))
        return plc_fail(err, errlen, "token file %s: %s", path, why);
    return plc_fail(err, errlen,
                    "token file %s is not the one the plan was compiled with: the plan's %s had "
                    PLC_TOKFILE_PRINT_FMT ", this file has " PLC_TOKFILE_PRINT_FMT
                    "; recompile the plan with this file, or give the one it was compiled with (--data-root DIR)",
                    path, t->data_path, (unsigned long long)t->data_size, t->data_crc32, (unsigned long long)size,
                    crc);
}

void plc_data_close(plc_data *d)
{
    if (!d) return;
    plc_tokfile_close(&d->file);
    plc_markov_free(&d->chain);
    free(d);
}

const char *plc_data_describe(const plc_data *d) { return d->describe; }

double plc_data_entropy_rate(const plc_data *d) { return d->synthetic ? d->chain.entropy_rate : NAN; }

int64_t plc_data_seq_len(const plc_data *d) { return d->seq_len; }

int64_t plc_data_vocab(const plc_data *d) { return d->vocab; }

/* a keyed bijection of [0, n): a balanced Feistel network on the smallest
 * even number of bits covering n, cycle-walking until the value lands in
 * range (fewer than 4 walks on average) */
static uint64_t permute(uint64_t x, uint64_t n, plc_rng_key key)
{
    int bits = 2;
    while (bits < 64 && (1ull << bits) < n) bits += 2;
    int half = bits / 2;
    uint64_t mask = (1ull << half) - 1;
    do {
        uint64_t l = x >> half, r = x & mask;
        for (int round = 0; round < FEISTEL_ROUNDS; round++) {
            uint64_t f = plc_rng_u32(key, ((uint64_t)round << 32) | r) & mask;
            uint64_t t = r;
            r = l ^ f;
            l = t;
        }
        x = (l << half) | r;
    } while (x >= n);
    return x;
}

int64_t plc_data_window_of(const plc_data *d, uint64_t g)
{
    if (d->synthetic) return -1;
    uint64_t epoch = g / d->windows, k = g % d->windows;
    plc_rng_key key = {d->seed, (uint32_t)epoch, PLC_RNG_DATA_ORDER};
    return (int64_t)permute(k, d->windows, key);
}

int plc_data_fetch(const plc_data *d, int64_t step, int64_t global_batch, int64_t sample0, int64_t n_samples,
                   int64_t pos0, int64_t n_pos, int32_t *tokens, int32_t *targets, char *err, size_t errlen)
{
    if (step < 0 || global_batch < 1 || sample0 < 0 || n_samples < 0 || sample0 > global_batch - n_samples)
        return plc_fail(err, errlen, "data: samples [%lld, %lld) of step %lld are outside a batch of %lld",
                        (long long)sample0, (long long)(sample0 + n_samples), (long long)step, (long long)global_batch);
    if (pos0 < 0 || n_pos < 0 || pos0 > d->seq_len - n_pos)
        return plc_fail(err, errlen, "data: positions [%lld, %lld) are outside a sequence of %lld", (long long)pos0,
                        (long long)(pos0 + n_pos), (long long)d->seq_len);
    for (int64_t i = 0; i < n_samples; i++) {
        uint64_t g = (uint64_t)step * (uint64_t)global_batch + (uint64_t)(sample0 + i);
        int32_t *tk = tokens + i * n_pos, *tg = targets + i * n_pos;
        if (d->synthetic) {
            /* n_pos + 1 consecutive tokens: inputs are the first n_pos, targets the last n_pos */
            if (n_pos == 0) continue;
            plc_markov_sample_range(&d->chain, d->seed, g, pos0, n_pos, tk);
            plc_markov_sample_range(&d->chain, d->seed, g, pos0 + n_pos, 1, &tg[n_pos - 1]);
            for (int64_t p = 0; p + 1 < n_pos; p++) tg[p] = tk[p + 1];
            continue;
        }
        uint64_t start = (uint64_t)plc_data_window_of(d, g) * (uint64_t)d->seq_len + (uint64_t)pos0;
        for (int64_t p = 0; p < n_pos; p++) {
            uint32_t a = plc_tokfile_get(&d->file, start + (uint64_t)p);
            uint32_t b = plc_tokfile_get(&d->file, start + (uint64_t)p + 1);
            if (a >= (uint64_t)d->vocab || b >= (uint64_t)d->vocab) {
                uint64_t at = start + (uint64_t)p + (a >= (uint64_t)d->vocab ? 0 : 1);
                return plc_fail(err, errlen,
                                "data: token %u at index %llu of the token file is >= the model's vocab %lld",
                                plc_tokfile_get(&d->file, at), (unsigned long long)at, (long long)d->vocab);
            }
            tk[p] = (int32_t)a;
            tg[p] = (int32_t)b;
        }
    }
    return 0;
}
