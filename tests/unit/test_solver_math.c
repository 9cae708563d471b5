/* test_solver_math.c: parameter counts and FLOPs against known values. */
#include <CUnit/CUnit.h>
#include <math.h>

#include "compiler/solver/solver.h"
#include "test_solver_fixtures.h"

static void llama2_7b(plc_model *m) { fixture_model(m, "llama-2-7b", 32, 4096, 11008, 32, 32, 32000, 4096, false); }
static void llama2_70b(plc_model *m) { fixture_model(m, "llama-2-70b", 80, 8192, 28672, 64, 8, 32000, 4096, false); }

static void test_llama2_params(void)
{
    plc_model m;
    llama2_7b(&m);
    CU_ASSERT_EQUAL(plc_params_total(&m), 6738415616LL); /* Hugging Face's count: 6.74e9 */
    llama2_70b(&m);
    CU_ASSERT_EQUAL(plc_params_total(&m), 68976648192LL); /* 68.98e9 with GQA (8 KV heads) */
    CU_ASSERT_EQUAL(plc_params_layer_matrices(&m), 855638016LL);
}

static void test_tied_embeddings(void)
{
    plc_model m;
    llama2_7b(&m);
    int64_t untied = plc_params_total(&m);
    m.tie_embeddings = true;
    CU_ASSERT_EQUAL(untied - plc_params_total(&m), 32000LL * 4096);
}

/* every stage, summed, is the whole model; the tied head is a second copy
 * on the last stage when pp > 1 */
static void test_stage_params_sum(void)
{
    plc_model m;
    llama2_70b(&m);
    int64_t pps[] = {1, 2, 4, 8, 16, 80};
    for (int tied = 0; tied < 2; tied++) {
        m.tie_embeddings = tied;
        for (size_t i = 0; i < sizeof pps / sizeof pps[0]; i++) {
            double sum = 0;
            for (int64_t s = 0; s < pps[i]; s++) {
                plc_stage_params sp;
                plc_stage_params_of(&m, 1, pps[i], 1, s, &sp);
                CU_ASSERT_EQUAL(sp.layers, 80 / pps[i]);
                CU_ASSERT_EQUAL(sp.has_embedding, s == 0);
                CU_ASSERT_EQUAL(sp.has_head, s == pps[i] - 1);
                sum += plc_stage_params_total(&sp);
            }
            double expect = (double)plc_params_total(&m) + (tied && pps[i] > 1 ? 32000.0 * 8192 : 0);
            CU_ASSERT_DOUBLE_EQUAL(sum, expect, 0.5);
        }
    }
    /* tensor parallelism splits matrices and the vocabulary, not the norms */
    plc_stage_params a, b;
    m.tie_embeddings = false;
    plc_stage_params_of(&m, 1, 4, 1, 1, &a);
    plc_stage_params_of(&m, 8, 4, 1, 1, &b);
    CU_ASSERT_DOUBLE_EQUAL(b.layer_matrices * 8, a.layer_matrices, 1);
    CU_ASSERT_DOUBLE_EQUAL(b.norms, a.norms, 0);
    CU_ASSERT_DOUBLE_EQUAL(b.embedding, 0, 0); /* a middle stage */
}

/* 3 x the exact forward count = PaLM's 6N + 12 L h s, up to the input
 * embedding lookup and the norms (no matmul) that 6N counts */
static void test_flops(void)
{
    plc_model m;
    llama2_7b(&m);
    double exact = 3.0 * plc_flops_per_token_fwd(&m, false);
    double palm = plc_flops_per_token_palm(&m);
    double lookup_and_norms = 6.0 * (32000.0 * 4096 + 32.0 * 2 * 4096 + 4096);
    CU_ASSERT_DOUBLE_EQUAL(exact + lookup_and_norms, palm, 1.0);
    CU_ASSERT_DOUBLE_EQUAL(palm, 6.0 * 6738415616.0 + 12.0 * 32 * 4096 * 4096, 1.0);
    /* causal skipping halves the score FLOPs (up to the diagonal) */
    CU_ASSERT_DOUBLE_EQUAL(plc_flops_layer_attention_fwd(&m, true) / plc_flops_layer_attention_fwd(&m, false),
                           (4096.0 + 1) / 2 / 4096, 1e-12);
}

/* the calibration sheet's MFU follows from its step time with N = 14.0e9
 * (13B with a 128k untied vocabulary): tp1 pp1 mb1 on 64 GPUs, 26.539 s */
static void test_calibration_mfu_convention(void)
{
    plc_job job;
    fixture_llama13b(&job, 8);
    CU_ASSERT_DOUBLE_EQUAL(plc_params_total(&job.model) / 1e9, 14.0, 0.05);
    double tokens_per_s = 2048.0 * 2048 / 26.539;
    double mfu = tokens_per_s * plc_flops_per_token_palm(&job.model) / (64 * 312e12);
    CU_ASSERT_DOUBLE_EQUAL(mfu, 0.7057, 0.004);
}

void register_test_solver_math(void)
{
    CU_pSuite s = CU_add_suite("solver_math", NULL, NULL);
    CU_add_test(s, "Llama-2 7B and 70B parameter counts", test_llama2_params);
    CU_add_test(s, "tied embeddings", test_tied_embeddings);
    CU_add_test(s, "stage parameters sum to the model", test_stage_params_sum);
    CU_add_test(s, "FLOPs per token, exact and PaLM", test_flops);
    CU_add_test(s, "MFU convention of the calibration data", test_calibration_mfu_convention);
}
