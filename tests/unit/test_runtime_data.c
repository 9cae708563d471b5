/* test_runtime_data.c: token files (round trip, damaged headers), the sample order
 * (a permutation per epoch, the same for every dp x cp split), and the
 * synthetic Markov source (entropy rate against closed forms and samples). */
#include <CUnit/CUnit.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/data.h"
#include "runtime/json.h"
#include "runtime/safetensors.h"
#include "runtime/synthetic.h"
#include "runtime/tokfile.h"

static char tmpdir[256];

static int suite_init(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/plc_data_test.XXXXXX");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int suite_clean(void)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

static void tmp_path(char *out, size_t n, const char *name) { snprintf(out, n, "%s/%s", tmpdir, name); }

static void write_raw(const char *path, const void *bytes, size_t n)
{
    FILE *f = fopen(path, "wb");
    CU_ASSERT_FATAL(f != NULL);
    CU_ASSERT(fwrite(bytes, 1, n, f) == n);
    fclose(f);
}

static plc_model model(int64_t vocab, int64_t seq_len)
{
    plc_model m;
    memset(&m, 0, sizeof m);
    m.vocab = vocab;
    m.seq_len = seq_len;
    return m;
}

/* ---- token files ---- */

static void test_tokfile_round_trip(void)
{
    char path[512], err[512];
    uint32_t toks[1000];
    for (int i = 0; i < 1000; i++) toks[i] = (uint32_t)(i * 7919u) % 60000u;
    for (unsigned bytes = 2; bytes <= 4; bytes += 2) {
        tmp_path(path, sizeof path, bytes == 2 ? "t16.tok" : "t32.tok");
        CU_ASSERT_EQUAL_FATAL(plc_tokfile_write(path, toks, 1000, bytes, 60000, err, sizeof err), 0);
        plc_tokfile t;
        CU_ASSERT_EQUAL_FATAL(plc_tokfile_open(&t, path, err, sizeof err), 0);
        CU_ASSERT(t.count == 1000 && t.token_bytes == bytes && t.vocab == 60000);
        CU_ASSERT_EQUAL(t.map_size, 32 + 1000 * bytes);
        int same = 1;
        for (uint64_t i = 0; i < 1000; i++) same &= plc_tokfile_get(&t, i) == toks[i];
        CU_ASSERT(same);
        plc_tokfile_close(&t);
    }
    /* 32-bit tokens above 2^16 */
    uint32_t wide[3] = {70000, 0, 4000000000u};
    tmp_path(path, sizeof path, "wide.tok");
    CU_ASSERT_EQUAL(plc_tokfile_write(path, wide, 3, 4, 0, err, sizeof err), 0);
    plc_tokfile t;
    CU_ASSERT_EQUAL_FATAL(plc_tokfile_open(&t, path, err, sizeof err), 0);
    CU_ASSERT(plc_tokfile_get(&t, 0) == 70000 && plc_tokfile_get(&t, 2) == 4000000000u);
    plc_tokfile_close(&t);
    /* the writer refuses what does not fit */
    CU_ASSERT_EQUAL(plc_tokfile_write(path, wide, 3, 2, 0, err, sizeof err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "token 70000 at index 0"));
    CU_ASSERT_EQUAL(plc_tokfile_write(path, toks, 10, 4, 100, err, sizeof err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "limit 100"));
    CU_ASSERT_EQUAL(plc_tokfile_write(path, toks, 10, 3, 0, err, sizeof err), -1);
}

/* a header in plc's format with the given fields and `body` token bytes */
static void write_header(const char *path, uint32_t magic, uint32_t version, uint32_t bytes, uint64_t count,
                         uint64_t reserved, size_t body)
{
    unsigned char b[32 + 64] = {0};
    uint32_t w[4] = {magic, version, bytes, 0};
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) b[4 * i + j] = (unsigned char)(w[i] >> (8 * j));
    for (int j = 0; j < 8; j++) {
        b[16 + j] = (unsigned char)(count >> (8 * j));
        b[24 + j] = (unsigned char)(reserved >> (8 * j));
    }
    write_raw(path, b, 32 + body);
}

static void expect_open_error(const char *path, const char *why)
{
    plc_tokfile t;
    char err[512] = "";
    int rc = plc_tokfile_open(&t, path, err, sizeof err);
    CU_ASSERT_EQUAL(rc, -1);
    if (rc == 0) plc_tokfile_close(&t);
    if (!strstr(err, why) || !strstr(err, path)) {
        fprintf(stderr, "message '%s' lacks '%s' or the path\n", err, why);
        CU_FAIL("error message");
    }
}

static void test_tokfile_damaged(void)
{
    char path[512];
    tmp_path(path, sizeof path, "bad.tok");
    write_header(path, 0x12345678, 1, 2, 4, 0, 8);
    expect_open_error(path, "not a token file");
    write_header(path, PLC_TOKFILE_MAGIC, 2, 2, 4, 0, 8);
    expect_open_error(path, "version 2 is not supported");
    write_header(path, PLC_TOKFILE_MAGIC, 1, 3, 4, 0, 12);
    expect_open_error(path, "token size 3");
    write_header(path, PLC_TOKFILE_MAGIC, 1, 2, 4, 9, 8);
    expect_open_error(path, "reserved");
    write_header(path, PLC_TOKFILE_MAGIC, 1, 2, 5, 0, 8);
    expect_open_error(path, "truncated?");
    write_header(path, PLC_TOKFILE_MAGIC, 1, 2, 3, 0, 8);
    expect_open_error(path, "holds 8 bytes");
    write_header(path, PLC_TOKFILE_MAGIC, 1, 4, UINT64_MAX / 2, 0, 8); /* count * size overflows */
    expect_open_error(path, "truncated?");
    write_raw(path, "PLTK\1\0\0\0", 8);
    expect_open_error(path, "truncated header");
    write_raw(path, "PL", 2);
    expect_open_error(path, "too short");
    write_raw(path, "", 0);
    expect_open_error(path, "too short");
    tmp_path(path, sizeof path, "missing.tok");
    expect_open_error(path, "cannot open");
    expect_open_error(tmpdir, "not a regular file");
}

static void test_tokfile_llmc(void)
{
    /* an llm.c shard: 256 int32 header (magic, version 1, count), uint16 tokens */
    unsigned char b[1024 + 10] = {0};
    uint32_t h[3] = {PLC_LLMC_MAGIC, 1, 5};
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 4; j++) b[4 * i + j] = (unsigned char)(h[i] >> (8 * j));
    for (int i = 0; i < 5; i++) {
        b[1024 + 2 * i] = (unsigned char)(1000 + i);
        b[1024 + 2 * i + 1] = (unsigned char)((1000 + i) >> 8);
    }
    char path[512], err[512];
    tmp_path(path, sizeof path, "shard.bin");
    write_raw(path, b, sizeof b);
    plc_tokfile t;
    CU_ASSERT_EQUAL_FATAL(plc_tokfile_open(&t, path, err, sizeof err), 0);
    CU_ASSERT(t.count == 5 && t.token_bytes == 2 && plc_tokfile_get(&t, 4) == 1004);
    plc_tokfile_close(&t);
    write_raw(path, b, sizeof b - 1);
    expect_open_error(path, "holds 9 bytes");
    b[4] = 7;
    write_raw(path, b, sizeof b);
    expect_open_error(path, "llm.c shard version 7");
}

/* ---- sample order ---- */

/* a file of n tokens, token i = i % vocab, for a source over it */
static plc_data *file_source(const char *name, uint64_t n, int64_t vocab, int64_t seq_len, uint64_t seed)
{
    char path[512], err[512];
    tmp_path(path, sizeof path, name);
    uint32_t *toks = malloc(n * sizeof *toks);
    for (uint64_t i = 0; i < n; i++) toks[i] = (uint32_t)(i % (uint64_t)vocab);
    CU_ASSERT_EQUAL(plc_tokfile_write(path, toks, n, 4, 0, err, sizeof err), 0);
    free(toks);
    plc_model m = model(vocab, seq_len);
    plc_data *d = NULL;
    if (plc_data_open_file(&d, path, &m, seed, err, sizeof err)) fprintf(stderr, "%s\n", err);
    return d;
}

static void test_order_is_permutation(void)
{
    const uint64_t sizes[] = {1, 2, 3, 37, 64, 65, 1000};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        uint64_t W = sizes[s];
        plc_data *d = file_source("perm.tok", W * 4 + 1, 1000, 4, 11);
        CU_ASSERT_FATAL(d != NULL);
        char *seen = calloc(W, 1);
        int ok = 1;
        for (int epoch = 0; epoch < 3; epoch++) {
            memset(seen, 0, W);
            for (uint64_t k = 0; k < W; k++) {
                int64_t w = plc_data_window_of(d, epoch * W + k);
                ok &= w >= 0 && (uint64_t)w < W && !seen[w];
                if (w >= 0 && (uint64_t)w < W) seen[w] = 1;
            }
        }
        CU_ASSERT(ok);
        if (W == 1000) { /* shuffled, and differently in the next epoch */
            int moved = 0, differs = 0;
            for (uint64_t k = 0; k < W; k++) {
                moved += plc_data_window_of(d, k) != (int64_t)k;
                differs += plc_data_window_of(d, k) != plc_data_window_of(d, W + k);
            }
            CU_ASSERT(moved > 900 && differs > 900);
        }
        free(seen);
        plc_data_close(d);
    }
}

/* fetches the whole batch split dp ways over samples and cp ways over
 * positions and checks the pieces against one fetch of everything */
static void check_splits(const plc_data *d, int64_t B, int64_t S)
{
    char err[512];
    int32_t *full_x = malloc(sizeof(int32_t) * (size_t)(B * S)), *full_y = malloc(sizeof(int32_t) * (size_t)(B * S));
    int32_t *px = malloc(sizeof(int32_t) * (size_t)(B * S)), *py = malloc(sizeof(int32_t) * (size_t)(B * S));
    for (int64_t step = 0; step < 3; step++) {
        CU_ASSERT_EQUAL_FATAL(plc_data_fetch(d, step, B, 0, B, 0, S, full_x, full_y, err, sizeof err), 0);
        /* within a sample the targets are the inputs shifted by one */
        int shifted = 1;
        for (int64_t i = 0; i < B; i++)
            for (int64_t p = 0; p + 1 < S; p++) shifted &= full_y[i * S + p] == full_x[i * S + p + 1];
        CU_ASSERT(shifted);
        const int64_t dps[] = {1, 2, 3, 6}, cps[] = {1, 2, 3, 4};
        for (int a = 0; a < 4; a++)
            for (int c = 0; c < 4; c++) {
                int64_t dp = dps[a], cp = cps[c], bs = B / dp, ss = S / cp;
                int same = 1;
                for (int64_t r = 0; r < dp; r++)
                    for (int64_t q = 0; q < cp; q++) {
                        CU_ASSERT_EQUAL_FATAL(
                            plc_data_fetch(d, step, B, r * bs, bs, q * ss, ss, px, py, err, sizeof err), 0);
                        for (int64_t i = 0; i < bs; i++)
                            for (int64_t p = 0; p < ss; p++) {
                                int64_t at = (r * bs + i) * S + q * ss + p;
                                same &= px[i * ss + p] == full_x[at] && py[i * ss + p] == full_y[at];
                            }
                    }
                CU_ASSERT(same);
            }
    }
    /* another step is another batch */
    CU_ASSERT_EQUAL(plc_data_fetch(d, 0, B, 0, B, 0, S, full_x, full_y, err, sizeof err), 0);
    CU_ASSERT_EQUAL(plc_data_fetch(d, 1, B, 0, B, 0, S, px, py, err, sizeof err), 0);
    CU_ASSERT_NOT_EQUAL(memcmp(full_x, px, sizeof(int32_t) * (size_t)(B * S)), 0);
    free(full_x);
    free(full_y);
    free(px);
    free(py);
}

static void test_order_same_for_every_split(void)
{
    plc_data *d = file_source("split.tok", 12 * 50 + 1, 97, 12, 3);
    CU_ASSERT_FATAL(d != NULL);
    check_splits(d, 6, 12);
    /* the window is the file's tokens at window * seq_len */
    char err[512];
    int32_t x[12], y[12];
    CU_ASSERT_EQUAL(plc_data_fetch(d, 2, 6, 5, 1, 0, 12, x, y, err, sizeof err), 0);
    int64_t w = plc_data_window_of(d, 2 * 6 + 5);
    for (int p = 0; p < 12; p++) {
        CU_ASSERT_EQUAL(x[p], (w * 12 + p) % 97);
        CU_ASSERT_EQUAL(y[p], (w * 12 + p + 1) % 97);
    }
    plc_data_close(d);

    plc_model m = model(50, 12);
    CU_ASSERT_EQUAL_FATAL(plc_data_open_synthetic(&d, &m, 3, err, sizeof err), 0);
    check_splits(d, 6, 12);
    plc_data_close(d);
}

static void test_fetch_errors(void)
{
    char err[512];
    plc_data *d = file_source("err.tok", 101, 50, 10, 1);
    CU_ASSERT_FATAL(d != NULL);
    int32_t x[100], y[100];
    CU_ASSERT_EQUAL(plc_data_fetch(d, 0, 4, 3, 2, 0, 10, x, y, err, sizeof err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "outside a batch of 4"));
    CU_ASSERT_EQUAL(plc_data_fetch(d, 0, 4, 0, 1, 5, 6, x, y, err, sizeof err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "outside a sequence of 10"));
    CU_ASSERT_EQUAL(plc_data_fetch(d, -1, 4, 0, 1, 0, 1, x, y, err, sizeof err), -1);
    CU_ASSERT_EQUAL(plc_data_fetch(d, 0, 4, 0, 0, 0, 0, x, y, err, sizeof err), 0); /* nothing asked: fine */
    plc_data_close(d);

    /* tokens beyond the model's vocabulary: found when read */
    d = file_source("vocab.tok", 101, 50, 10, 1);
    CU_ASSERT_FATAL(d != NULL);
    plc_data_close(d);
    char path[512];
    tmp_path(path, sizeof path, "vocab.tok");
    plc_model small = model(20, 10);
    CU_ASSERT_EQUAL_FATAL(plc_data_open_file(&d, path, &small, 1, err, sizeof err), 0);
    int failed = 0;
    for (int64_t j = 0; j < 10 && !failed; j++) failed = plc_data_fetch(d, 0, 10, j, 1, 0, 10, x, y, err, sizeof err) != 0;
    CU_ASSERT(failed);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, ">= the model's vocab 20"));
    plc_data_close(d);
    /* a header vocabulary larger than the model's: refused at open */
    uint32_t toks[40] = {0};
    CU_ASSERT_EQUAL(plc_tokfile_write(path, toks, 40, 2, 30000, err, sizeof err), 0);
    CU_ASSERT_EQUAL(plc_data_open_file(&d, path, &small, 1, err, sizeof err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "vocabulary of 30000"));
    /* too few tokens for one sample */
    CU_ASSERT_EQUAL(plc_tokfile_write(path, toks, 10, 2, 0, err, sizeof err), 0);
    CU_ASSERT_EQUAL(plc_data_open_file(&d, path, &small, 1, err, sizeof err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "fewer than the seq_len + 1 = 11"));
}

/* ---- synthetic source ---- */

static double h2(double p) { return -(p * log(p) + (1 - p) * log(1 - p)); }

static void test_markov_two_state(void)
{
    /* P = [[0.7, 0.3], [0.1, 0.9]]: pi = (b, a) / (a + b) = (0.25, 0.75) */
    const int32_t succ[4] = {0, 1, 1, 0};
    const double prob[4] = {0.7, 0.3, 0.9, 0.1};
    plc_markov mc;
    char err[256];
    CU_ASSERT_EQUAL_FATAL(plc_markov_from_rows(&mc, 2, 2, succ, prob, err, sizeof err), 0);
    CU_ASSERT_DOUBLE_EQUAL(mc.pi[0], 0.25, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(mc.pi[1], 0.75, 1e-12);
    double expect = 0.25 * h2(0.3) + 0.75 * h2(0.1);
    CU_ASSERT_DOUBLE_EQUAL(mc.entropy_rate, expect, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(mc.entropy_rate, 0.39652830555730956, 1e-9); /* the same, as a number */
    plc_markov_free(&mc);

    /* a deterministic 3-cycle is periodic: pi is still uniform, entropy 0 */
    const int32_t cyc[3] = {1, 2, 0};
    const double one[3] = {1, 1, 1};
    CU_ASSERT_EQUAL_FATAL(plc_markov_from_rows(&mc, 3, 1, cyc, one, err, sizeof err), 0);
    CU_ASSERT_DOUBLE_EQUAL(mc.pi[2], 1.0 / 3, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(mc.entropy_rate, 0.0, 0);
    plc_markov_free(&mc);

    const double bad[4] = {0.7, 0.2, 0.9, 0.1};
    CU_ASSERT_EQUAL(plc_markov_from_rows(&mc, 2, 2, succ, bad, err, sizeof err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "row 0 sums to"));
    const int32_t dup[4] = {0, 0, 1, 0};
    CU_ASSERT_EQUAL(plc_markov_from_rows(&mc, 2, 2, dup, prob, err, sizeof err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "twice"));
}

static void test_markov_random_chain(void)
{
    plc_markov mc;
    char err[256];
    const int64_t V = 64;
    CU_ASSERT_EQUAL_FATAL(plc_markov_build(&mc, V, 4, 7, err, sizeof err), 0);
    CU_ASSERT_EQUAL(mc.k, 4);
    /* rows are distributions over distinct successors; pi is stationary */
    double pisum = 0;
    double *next = calloc((size_t)V, sizeof *next);
    for (int64_t i = 0; i < V; i++) {
        double s = 0;
        for (int j = 0; j < 4; j++) {
            s += mc.prob[i * 4 + j];
            next[mc.succ[i * 4 + j]] += mc.pi[i] * mc.prob[i * 4 + j];
            for (int q = 0; q < j; q++) CU_ASSERT(mc.succ[i * 4 + q] != mc.succ[i * 4 + j]);
        }
        CU_ASSERT_DOUBLE_EQUAL(s, 1.0, 1e-12);
        pisum += mc.pi[i];
    }
    CU_ASSERT_DOUBLE_EQUAL(pisum, 1.0, 1e-12);
    double resid = 0;
    for (int64_t i = 0; i < V; i++) resid += fabs(next[i] - mc.pi[i]);
    CU_ASSERT(resid < 1e-12);
    free(next);
    CU_ASSERT(mc.entropy_rate > 0.5 && mc.entropy_rate < log(4.0));

    /* the mean negative log-likelihood of sampled transitions estimates the
     * entropy rate: 64 x 512 transitions give a standard error near 0.004 */
    const int64_t len = 513;
    int32_t *seq = malloc(sizeof(int32_t) * (size_t)len);
    double nll = 0;
    int64_t n = 0;
    for (uint64_t g = 0; g < 64; g++) {
        plc_markov_sample(&mc, 7, g, len, seq);
        for (int64_t t = 0; t + 1 < len; t++) {
            double p = plc_markov_prob(&mc, seq[t], seq[t + 1]);
            CU_ASSERT_FATAL(p > 0);
            nll -= log(p);
            n++;
        }
    }
    CU_ASSERT(fabs(nll / (double)n - mc.entropy_rate) < 0.03);
    /* first tokens follow pi: total variation of 40000 draws (expected near 0.02) */
    double counts[64] = {0}, tv = 0;
    for (uint64_t g = 0; g < 40000; g++) {
        int32_t first;
        plc_markov_sample_range(&mc, 7, g, 0, 1, &first);
        counts[first] += 1.0 / 40000;
    }
    for (int64_t i = 0; i < V; i++) tv += 0.5 * fabs(counts[i] - mc.pi[i]);
    CU_ASSERT(tv < 0.04);
    /* a range of a sample is that part of the whole sample */
    int32_t part[100];
    plc_markov_sample(&mc, 7, 5, len, seq);
    plc_markov_sample_range(&mc, 7, 5, 300, 100, part);
    CU_ASSERT_EQUAL(memcmp(part, seq + 300, sizeof part), 0);
    /* known answer: the start of sample 0 (fixed once computed) */
    plc_markov_sample(&mc, 7, 0, 8, seq);
    const int32_t kat[8] = {46, 10, 31, 60, 8, 45, 9, 1};
    CU_ASSERT_EQUAL(memcmp(seq, kat, sizeof kat), 0);
    CU_ASSERT_DOUBLE_EQUAL(mc.entropy_rate, 1.0781572438853457, 1e-12);
    free(seq);

    /* the same seed builds the same chain; another seed another one */
    plc_markov again, other;
    CU_ASSERT_EQUAL_FATAL(plc_markov_build(&again, V, 4, 7, err, sizeof err), 0);
    CU_ASSERT_EQUAL_FATAL(plc_markov_build(&other, V, 4, 8, err, sizeof err), 0);
    CU_ASSERT_EQUAL(memcmp(again.succ, mc.succ, sizeof(int32_t) * (size_t)(V * 4)), 0);
    CU_ASSERT_NOT_EQUAL(memcmp(other.succ, mc.succ, sizeof(int32_t) * (size_t)(V * 4)), 0);
    plc_markov_free(&again);
    plc_markov_free(&other);
    plc_markov_free(&mc);

    /* a vocabulary smaller than the successor count, and a large one */
    CU_ASSERT_EQUAL(plc_markov_build(&mc, 3, 4, 1, err, sizeof err), 0);
    CU_ASSERT_EQUAL(mc.k, 3);
    plc_markov_free(&mc);
    CU_ASSERT_EQUAL(plc_markov_build(&mc, 32000, 4, 1, err, sizeof err), 0);
    CU_ASSERT(mc.entropy_rate > 0.5 && mc.entropy_rate < log(4.0));
    plc_markov_free(&mc);
    CU_ASSERT_EQUAL(plc_markov_build(&mc, 1, 4, 1, err, sizeof err), -1);
}

static void test_synthetic_source(void)
{
    plc_model m = model(64, 16);
    plc_data *d;
    char err[256];
    CU_ASSERT_EQUAL_FATAL(plc_data_open_synthetic(&d, &m, 7, err, sizeof err), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(plc_data_describe(d), "synthetic source: entropy rate "));
    CU_ASSERT_DOUBLE_EQUAL(plc_data_entropy_rate(d), 1.0781572438853457, 1e-12); /* the chain above */
    CU_ASSERT_EQUAL(plc_data_window_of(d, 3), -1);
    /* sample j of step s is chain sample g = s * B + j */
    plc_markov mc;
    CU_ASSERT_EQUAL_FATAL(plc_markov_build(&mc, 64, 4, 7, err, sizeof err), 0);
    int32_t x[16], y[16], ref[17];
    CU_ASSERT_EQUAL(plc_data_fetch(d, 3, 5, 2, 1, 0, 16, x, y, err, sizeof err), 0);
    plc_markov_sample(&mc, 7, 3 * 5 + 2, 17, ref);
    CU_ASSERT_EQUAL(memcmp(x, ref, sizeof x), 0);
    CU_ASSERT_EQUAL(memcmp(y, ref + 1, sizeof y), 0);
    plc_markov_free(&mc);
    plc_data_close(d);

    plc_train t;
    memset(&t, 0, sizeof t);
    t.seed = 7;
    CU_ASSERT_EQUAL(plc_data_open(&d, &m, &t, err, sizeof err), 0);
    CU_ASSERT(!isnan(plc_data_entropy_rate(d)));
    plc_data_close(d);
    t.data_path = "/nonexistent/tokens.bin";
    CU_ASSERT_EQUAL(plc_data_open(&d, &m, &t, err, sizeof err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "/nonexistent/tokens.bin: cannot open"));
}

static void test_exports(void)
{
    char path[512], err[512];
    plc_model m = model(40, 6);
    m.layers = 2;
    m.hidden = 8;
    m.ffn_hidden = 12;
    m.heads = 2;
    m.kv_heads = 1;
    m.norm_eps = 1e-5;
    m.rope_theta = 10000;
    plc_train t;
    memset(&t, 0, sizeof t);
    t.global_batch = 3;
    t.lr_peak = 1e-3;
    t.beta1 = 0.9;
    t.seed = 5;
    plc_data *d;
    CU_ASSERT_EQUAL_FATAL(plc_data_open(&d, &m, &t, err, sizeof err), 0);
    CU_ASSERT_EQUAL(plc_data_seq_len(d), 6);
    CU_ASSERT_EQUAL(plc_data_vocab(d), 40);
    char *cfg = plc_oracle_config_json(&m, &t, 4);
    CU_ASSERT_FATAL(cfg != NULL);
    plc_arena a;
    plc_arena_init(&a);
    const plc_json *v;
    CU_ASSERT_EQUAL_FATAL(plc_json_parse(&a, cfg, strlen(cfg), &v, err, sizeof err), 0);
    CU_ASSERT_EQUAL(plc_json_get(v, "steps")->integer, 4);
    CU_ASSERT_EQUAL(plc_json_get(v, "kv_heads")->integer, 1);
    CU_ASSERT_EQUAL(plc_json_get(v, "tie_embeddings")->type, PLC_JSON_BOOL);
    CU_ASSERT(plc_json_get(v, "beta1")->number == 0.9);
    CU_ASSERT_STRING_EQUAL(plc_json_get(v, "arch")->str, "llama");
    CU_ASSERT_STRING_EQUAL(plc_json_get(v, "positions")->str, "rope");
    CU_ASSERT_EQUAL(v->n, 23);

    /* batches: what the oracle reads is what plc_data_fetch gives */
    tmp_path(path, sizeof path, "batches.safetensors");
    CU_ASSERT_EQUAL_FATAL(plc_data_export_batches(d, path, 4, 3, cfg, err, sizeof err), 0);
    plc_st_file f;
    CU_ASSERT_EQUAL_FATAL(plc_st_open(&f, path, err, sizeof err), 0);
    CU_ASSERT_EQUAL(f.n_tensors, 8);
    CU_ASSERT_STRING_EQUAL(plc_st_meta_get(&f, "config"), cfg);
    int32_t x[18], y[18], fx[18], fy[18];
    int64_t shape[2] = {3, 6};
    CU_ASSERT_EQUAL(plc_st_read(&f, "step3.tokens", PLC_ST_I32, 2, shape, fx, err, sizeof err), 0);
    CU_ASSERT_EQUAL(plc_st_read(&f, "step3.targets", PLC_ST_I32, 2, shape, fy, err, sizeof err), 0);
    CU_ASSERT_EQUAL(plc_data_fetch(d, 3, 3, 0, 3, 0, 6, x, y, err, sizeof err), 0);
    CU_ASSERT(memcmp(x, fx, sizeof x) == 0 && memcmp(y, fy, sizeof y) == 0);
    plc_st_close(&f);
    plc_arena_free(&a);
    free(cfg);
    plc_data_close(d);

    /* a token file of the chain: every transition is one of the chain's */
    tmp_path(path, sizeof path, "chain.tok");
    CU_ASSERT_EQUAL_FATAL(plc_synthetic_write_tokens(path, 40, 5, 5000, err, sizeof err), 0);
    plc_tokfile tf;
    plc_markov mc;
    CU_ASSERT_EQUAL_FATAL(plc_tokfile_open(&tf, path, err, sizeof err), 0);
    CU_ASSERT_EQUAL_FATAL(plc_markov_build(&mc, 40, PLC_SYNTH_SUCCESSORS, 5, err, sizeof err), 0);
    CU_ASSERT(tf.count == 5000 && tf.vocab == 40 && tf.token_bytes == 2);
    int valid = 1;
    for (uint64_t i = 0; i + 1 < tf.count; i++)
        valid &= plc_markov_prob(&mc, (int32_t)plc_tokfile_get(&tf, i), (int32_t)plc_tokfile_get(&tf, i + 1)) > 0;
    CU_ASSERT(valid);
    plc_markov_free(&mc);
    plc_tokfile_close(&tf);
}

/* ---- finding the plan's token file, and checking it is the plan's ---- */

static void test_locate(void)
{
    char out[4096], err[1024], plan[512], sub[512], file[512];
    tmp_path(sub, sizeof sub, "run");
    CU_ASSERT_EQUAL_FATAL(mkdir(sub, 0755), 0);
    tmp_path(plan, sizeof plan, "run/job.bin");
    tmp_path(file, sizeof file, "run/toks.bin");
    uint32_t toks[40];
    for (int i = 0; i < 40; i++) toks[i] = (uint32_t)i;
    CU_ASSERT_EQUAL_FATAL(plc_tokfile_write(file, toks, 40, 2, 64, err, sizeof err), 0);
    /* beside the plan */
    CU_ASSERT_EQUAL(plc_data_locate("toks.bin", plan, NULL, out, sizeof out, err, sizeof err), 0);
    CU_ASSERT_STRING_EQUAL(out, file);
    /* --data-root wins, and is the only place looked at */
    CU_ASSERT_EQUAL(plc_data_locate("../run/toks.bin", plan, "/elsewhere", out, sizeof out, err, sizeof err), 0);
    CU_ASSERT_STRING_EQUAL(out, "/elsewhere/../run/toks.bin");
    /* an absolute path is opened as it is */
    CU_ASSERT_EQUAL(plc_data_locate(file, "x/job.bin", "/elsewhere", out, sizeof out, err, sizeof err), 0);
    CU_ASSERT_STRING_EQUAL(out, file);
    /* neither beside the plan nor in the working directory: both named */
    CU_ASSERT_EQUAL(plc_data_locate("nope.bin", plan, NULL, out, sizeof out, err, sizeof err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "nope.bin"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "run/nope.bin"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "--data-root"));
    /* a plan named without a directory: the working directory */
    CU_ASSERT_EQUAL(plc_data_locate("nope.bin", "job.bin", NULL, out, sizeof out, err, sizeof err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "nope.bin does not exist"));

    /* the record: size and CRC-32 of all the file's bytes */
    plc_tokfile_survey sv;
    CU_ASSERT_EQUAL_FATAL(plc_tokfile_survey_file(file, &sv, err, sizeof err), 0);
    CU_ASSERT_EQUAL(sv.size, 32 + 2 * 40);
    CU_ASSERT_EQUAL(sv.max_token, 39);
    CU_ASSERT_EQUAL(sv.max_token_at, 39);
    CU_ASSERT_EQUAL(sv.head.vocab, 64);
    plc_train t;
    memset(&t, 0, sizeof t);
    t.data_path = "toks.bin";
    t.data_size = sv.size;
    t.data_crc32 = sv.crc32;
    CU_ASSERT_EQUAL(plc_data_check_record(file, &t, true, err, sizeof err), 0);
    toks[7] = 8; /* same size, other content */
    CU_ASSERT_EQUAL_FATAL(plc_tokfile_write(file, toks, 40, 2, 64, err, sizeof err), 0);
    CU_ASSERT_EQUAL(plc_data_check_record(file, &t, false, err, sizeof err), 0); /* the size alone agrees */
    CU_ASSERT_EQUAL(plc_data_check_record(file, &t, true, err, sizeof err), -1);
    char want[200];
    snprintf(want, sizeof want, "the plan's toks.bin had 112 bytes, CRC-32 %08x, this file has 112 bytes", sv.crc32);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, want));
    CU_ASSERT_EQUAL_FATAL(plc_tokfile_write(file, toks, 39, 2, 64, err, sizeof err), 0);
    CU_ASSERT_EQUAL(plc_data_check_record(file, &t, false, err, sizeof err), -1); /* the size differs */
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "this file has 110 bytes, CRC-32 "));
    /* a FIFO is refused without waiting for a writer */
    char fifo[512];
    tmp_path(fifo, sizeof fifo, "run/fifo");
    CU_ASSERT_EQUAL_FATAL(mkfifo(fifo, 0600), 0);
    CU_ASSERT_EQUAL(plc_tokfile_survey_file(fifo, &sv, err, sizeof err), -1);
    CU_ASSERT_STRING_EQUAL(err, "not a regular file");
    CU_ASSERT_EQUAL(plc_data_check_record(fifo, &t, true, err, sizeof err), -1);
    remove(fifo);
    remove(file);
    rmdir(sub);
}

void register_test_runtime_data(void);
void register_test_runtime_data(void)
{
    CU_pSuite s = CU_add_suite("data", suite_init, suite_clean);
    CU_add_test(s, "token file round trip", test_tokfile_round_trip);
    CU_add_test(s, "token file damaged", test_tokfile_damaged);
    CU_add_test(s, "token file llm.c shard", test_tokfile_llmc);
    CU_add_test(s, "order is a permutation", test_order_is_permutation);
    CU_add_test(s, "order same for every split", test_order_same_for_every_split);
    CU_add_test(s, "fetch errors", test_fetch_errors);
    CU_add_test(s, "markov two-state", test_markov_two_state);
    CU_add_test(s, "markov random chain", test_markov_random_chain);
    CU_add_test(s, "synthetic source", test_synthetic_source);
    CU_add_test(s, "exports", test_exports);
    CU_add_test(s, "locate and record", test_locate);
}
