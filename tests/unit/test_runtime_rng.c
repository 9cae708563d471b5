/* test_runtime_rng.c: Philox known answers, draw statistics, layout-independent
 * initialisation and the tensor table of docs/model.md. */
#include <CUnit/CUnit.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/tensors.h"
#include "runtime/init.h"
#include "runtime/rng.h"

/* Random123's kat_vectors for philox4x32 10: counter, key, expected */
static void test_philox_known_answers(void)
{
    static const uint32_t kat[3][10] = {
        {0, 0, 0, 0, 0, 0, 0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8},
        {0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0x408f276d,
         0x41c83b0e, 0xa20bc7c6, 0x6d5451fd},
        {0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 0xa4093822, 0x299f31d0, 0xd16cfe09,
         0x94fdcceb, 0x5001e420, 0x24126ea1},
    };
    for (int i = 0; i < 3; i++) {
        uint32_t out[4];
        plc_philox4x32_10(&kat[i][0], &kat[i][4], out);
        for (int j = 0; j < 4; j++) CU_ASSERT_EQUAL(out[j], kat[i][6 + j]);
    }
}

/* the draws plc defines on top of Philox, fixed once computed: changing them
 * changes every model plc has ever initialised */
static void test_draw_known_answers(void)
{
    plc_rng_key k = {1234, 7, PLC_RNG_INIT};
    uint32_t b[4];
    plc_rng_block(k, 5, b);
    /* the block is Philox of counter (index lo, index hi, stream, domain), key (seed lo, seed hi) */
    uint32_t ctr[4] = {5, 0, 7, PLC_RNG_INIT}, key[2] = {1234, 0}, ref[4];
    plc_philox4x32_10(ctr, key, ref);
    CU_ASSERT_EQUAL(memcmp(b, ref, sizeof b), 0);
    CU_ASSERT_EQUAL(plc_rng_u32(k, 5), b[0]);

    plc_rng_key k2 = {0x0123456789abcdefull, 3, PLC_RNG_SYNTH_SAMPLE};
    CU_ASSERT_EQUAL(plc_rng_u32(k2, 0x100000002ull), 0x93b500f6u);
    CU_ASSERT_DOUBLE_EQUAL(plc_rng_uniform(k2, 42), 0.97137208279529808, 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(plc_rng_normal(k2, 42), 0.14557215455694283, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(plc_rng_normal(k2, 43), 0.78869698811195432, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(plc_rng_normal(k, 0), 1.012834536398139, 1e-12);
}

static void test_uniform_statistics(void)
{
    const int n = 1 << 20;
    plc_rng_key k = {99, 1, PLC_RNG_DATA_ORDER};
    double sum = 0, sum2 = 0, lo = 1, hi = 0;
    for (int i = 0; i < n; i++) {
        double u = plc_rng_uniform(k, (uint64_t)i);
        sum += u;
        sum2 += u * u;
        if (u < lo) lo = u;
        if (u > hi) hi = u;
    }
    double mean = sum / n, var = sum2 / n - mean * mean;
    /* standard errors: 0.29 / sqrt(n) = 2.8e-4 for the mean, 8.6e-5 for the variance */
    CU_ASSERT(fabs(mean - 0.5) < 1.5e-3);
    CU_ASSERT(fabs(var - 1.0 / 12.0) < 5e-4);
    CU_ASSERT(lo >= 0.0 && lo < 1e-4);
    CU_ASSERT(hi < 1.0 && hi > 1 - 1e-4);
}

static void test_normal_statistics(void)
{
    const int n = 1 << 20;
    plc_rng_key k = {7, 2, PLC_RNG_INIT};
    double sum = 0, sum2 = 0, sum4 = 0;
    int beyond2 = 0, finite = 0;
    for (int i = 0; i < n; i++) {
        double z = plc_rng_normal(k, (uint64_t)i);
        finite += isfinite(z) != 0;
        sum += z;
        sum2 += z * z;
        sum4 += z * z * z * z;
        beyond2 += fabs(z) > 2.0;
    }
    CU_ASSERT_EQUAL(finite, n);
    double mean = sum / n, var = sum2 / n - mean * mean;
    CU_ASSERT(fabs(mean) < 5e-3);
    CU_ASSERT(fabs(var - 1.0) < 7e-3);
    CU_ASSERT(fabs(sum4 / n - 3.0) < 0.05);                  /* kurtosis of a normal */
    CU_ASSERT(fabs((double)beyond2 / n - 0.0455003) < 2e-3); /* P(|z| > 2) */
}

static plc_model small_model(bool tied)
{
    plc_model m;
    memset(&m, 0, sizeof m);
    m.layers = 3;
    m.hidden = 16;
    m.ffn_hidden = 40;
    m.heads = 4;
    m.kv_heads = 2;
    m.vocab = 50;
    m.seq_len = 8;
    m.tie_embeddings = tied;
    return m;
}

static void test_tensor_table(void)
{
    plc_model m = small_model(false);
    CU_ASSERT_EQUAL(plc_tensor_count(&m), 2 + 9 * 3 + 1);
    plc_tensor_info t;
    CU_ASSERT_FATAL(plc_tensor_get(&m, 0, &t));
    CU_ASSERT_STRING_EQUAL(t.name, "tok_emb");
    CU_ASSERT(t.shape[0] == 50 && t.shape[1] == 16 && t.ndim == 2 && t.weight_decay);
    CU_ASSERT_FATAL(plc_tensor_get(&m, 1 + 9 * 2 + 3, &t));
    CU_ASSERT_STRING_EQUAL(t.name, "layers.2.wv");
    CU_ASSERT(t.shape[0] == 16 && t.shape[1] == 2 * 4 && t.layer == 2);
    CU_ASSERT_FATAL(plc_tensor_get(&m, 1 + 9 * 1 + 4, &t));
    CU_ASSERT_STRING_EQUAL(t.name, "layers.1.wo");
    CU_ASSERT_DOUBLE_EQUAL(t.init_std, 0.02 / sqrt(6.0), 1e-15);
    CU_ASSERT_FATAL(plc_tensor_get(&m, 1 + 9 * 0 + 5, &t));
    CU_ASSERT_STRING_EQUAL(t.name, "layers.0.mlp_norm");
    CU_ASSERT(t.ndim == 1 && t.numel == 16 && t.init == PLC_INIT_ONES && !t.weight_decay);
    CU_ASSERT_FATAL(plc_tensor_get(&m, 1 + 9 * 0 + 8, &t));
    CU_ASSERT(t.shape[0] == 40 && t.shape[1] == 16 && t.role == PLC_ROLE_W_DOWN);
    CU_ASSERT_FATAL(plc_tensor_get(&m, 28, &t));
    CU_ASSERT_STRING_EQUAL(t.name, "final_norm");
    CU_ASSERT_FATAL(plc_tensor_get(&m, 29, &t));
    CU_ASSERT_STRING_EQUAL(t.name, "lm_head");
    CU_ASSERT(t.shape[0] == 16 && t.shape[1] == 50);
    CU_ASSERT_FALSE(plc_tensor_get(&m, 30, &t));
    CU_ASSERT_FALSE(plc_tensor_get(&m, -1, &t));
    CU_ASSERT_EQUAL(plc_tensor_find(&m, "layers.2.w_up"), 1 + 9 * 2 + 7);
    CU_ASSERT_EQUAL(plc_tensor_find(&m, "layers.3.w_up"), -1);
    CU_ASSERT_EQUAL(plc_tensor_id(&m, PLC_ROLE_W_GATE, 1), 1 + 9 + 6);
    CU_ASSERT_EQUAL(plc_tensor_id(&m, PLC_ROLE_LM_HEAD, 0), 29);
    int64_t per_layer = 16 * 16 + 2 * 16 * 8 + 16 * 16 + 3 * 16 * 40 + 2 * 16;
    CU_ASSERT_EQUAL(plc_model_param_count(&m), 2 * 50 * 16 + 3 * per_layer + 16);

    plc_model tied = small_model(true);
    CU_ASSERT_EQUAL(plc_tensor_count(&tied), 29);
    CU_ASSERT_EQUAL(plc_tensor_id(&tied, PLC_ROLE_LM_HEAD, 0), -1);
    CU_ASSERT_EQUAL(plc_tensor_find(&tied, "lm_head"), -1);
}

/* any grid of shards, and any flat range, reproduces the whole tensor bit for bit */
static void test_init_shard_independent(void)
{
    plc_model m = small_model(false);
    int64_t id = 1 + 9 + 6; /* layers.1.w_gate [16, 40] */
    plc_tensor_info t;
    CU_ASSERT_FATAL(plc_tensor_get(&m, id, &t));
    int64_t R = t.shape[0], C = t.shape[1];
    float *full = malloc(sizeof(float) * (size_t)(R * C));
    float *part = malloc(sizeof(float) * (size_t)(R * C));
    CU_ASSERT_FATAL(full && part);
    plc_shard whole = {0, R, 0, C};
    CU_ASSERT_EQUAL(plc_init_model_tensor(full, &m, 5, id, whole), 0);

    const int64_t row_cuts[] = {0, 3, 8, 16}, col_cuts[] = {0, 10, 11, 25, 40};
    for (int ri = 0; ri < 3; ri++)
        for (int ci = 0; ci < 4; ci++) {
            plc_shard s = {row_cuts[ri], row_cuts[ri + 1] - row_cuts[ri], col_cuts[ci],
                           col_cuts[ci + 1] - col_cuts[ci]};
            CU_ASSERT_EQUAL_FATAL(plc_init_model_tensor(part, &m, 5, id, s), 0);
            for (int64_t r = 0; r < s.rows; r++)
                for (int64_t c = 0; c < s.cols; c++)
                    CU_ASSERT_EQUAL(memcmp(&part[r * s.cols + c], &full[(s.row0 + r) * C + s.col0 + c],
                                           sizeof(float)), 0);
        }
    /* flat ranges (ZeRO-style) */
    plc_init_range(part, 5, id, 0, 100, t.init_std, t.init);
    plc_init_range(part + 100, 5, id, 100, R * C - 100, t.init_std, t.init);
    CU_ASSERT_EQUAL(memcmp(part, full, sizeof(float) * (size_t)(R * C)), 0);

    /* shards outside the tensor are refused */
    plc_shard bad = {10, 7, 0, 1};
    CU_ASSERT_EQUAL(plc_init_model_tensor(part, &m, 5, id, bad), -1);
    plc_shard neg = {0, 1, -1, 2};
    CU_ASSERT_EQUAL(plc_init_model_tensor(part, &m, 5, id, neg), -1);
    CU_ASSERT_EQUAL(plc_init_model_tensor(part, &m, 5, 999, whole), -1);

    /* another seed or another tensor gives other values */
    CU_ASSERT_EQUAL(plc_init_model_tensor(part, &m, 6, id, whole), 0);
    CU_ASSERT_NOT_EQUAL(memcmp(part, full, sizeof(float) * (size_t)(R * C)), 0);
    CU_ASSERT_EQUAL(plc_init_model_tensor(part, &m, 5, id + 1, whole), 0); /* w_up, same shape */
    CU_ASSERT_NOT_EQUAL(memcmp(part, full, sizeof(float) * (size_t)(R * C)), 0);
    free(full);
    free(part);
}

static double sample_std(const float *x, int64_t n)
{
    double s = 0, s2 = 0;
    for (int64_t i = 0; i < n; i++) {
        s += x[i];
        s2 += (double)x[i] * x[i];
    }
    double mean = s / n;
    return sqrt(s2 / n - mean * mean);
}

static void test_init_kinds(void)
{
    plc_model m = small_model(true);
    m.vocab = 4096;
    m.hidden = 64;
    plc_tensor_info t;
    float *buf = malloc(sizeof(float) * 4096 * 64);
    CU_ASSERT_FATAL(buf != NULL);
    for (int64_t id = 0; plc_tensor_get(&m, id, &t); id++) {
        plc_shard s = {0, t.shape[0], 0, t.shape[1]};
        CU_ASSERT_EQUAL_FATAL(plc_init_model_tensor(buf, &m, 1, id, s), 0);
        if (t.init == PLC_INIT_ONES) {
            for (int64_t i = 0; i < t.numel; i++) CU_ASSERT_EQUAL(buf[i], 1.0f);
        } else if (t.numel >= 4096) {
            /* relative standard error of a std estimate: 1 / sqrt(2 n) */
            double rel = fabs(sample_std(buf, t.numel) / t.init_std - 1.0);
            CU_ASSERT(rel < 5.0 / sqrt(2.0 * (double)t.numel));
        }
    }
    free(buf);
}

void register_test_runtime_rng(void);
void register_test_runtime_rng(void)
{
    CU_pSuite s = CU_add_suite("rng", NULL, NULL);
    CU_add_test(s, "philox known answers", test_philox_known_answers);
    CU_add_test(s, "draw known answers", test_draw_known_answers);
    CU_add_test(s, "uniform statistics", test_uniform_statistics);
    CU_add_test(s, "normal statistics", test_normal_statistics);
    CU_add_test(s, "tensor table", test_tensor_table);
    CU_add_test(s, "init shard independent", test_init_shard_independent);
    CU_add_test(s, "init kinds", test_init_kinds);
}
