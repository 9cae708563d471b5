/* test_solver_memory.c: the memory model against the public estimator's
 * values (Fujii et al. 2024, "Accelerating Large Language Model Training
 * with 4D Parallelism and Memory Consumption Estimator"), Korthikanti's
 * activation structure, and the schedule's in-flight micro-batches. */
#include <CUnit/CUnit.h>
#include <stdlib.h>

#include "compiler/solver/solver.h"
#include "test_solver_fixtures.h"

#define GIB 1073741824.0

/* Llama-3.1-8B at s = 8192 on gpus/8 nodes, distributed optimizer (ZeRO 1),
 * fp32 gradients, flash attention, sequence parallelism */
static void llama31_8b(plc_job *job, int64_t gpus)
{
    memset(job, 0, sizeof *job);
    fixture_model(&job->model, "llama-3.1-8b", 32, 4096, 14336, 32, 8, 128256, 8192, false);
    fixture_a100(&job->cluster.hw);
    job->cluster.gpus_per_node = gpus < 8 ? gpus : 8;
    job->cluster.nodes = gpus / job->cluster.gpus_per_node;
    job->train.global_batch = 1024;
    job->train.precision = PLC_PREC_BF16;
    fixture_layout_auto(&job->layout);
}

static plc_layout layout_of(int64_t tp, int64_t cp, int64_t pp, int64_t mb, int64_t gpus)
{
    plc_layout l = {.tp = tp, .cp = cp, .pp = pp, .dp = gpus / (tp * cp * pp), .vpp = 1, .micro_batch = mb,
                    .sp = 1, .schedule = PLC_SCHED_1F1B, .recompute = PLC_RECOMPUTE_NONE, .zero = 1,
                    .attention = PLC_ATTN_FLASH2, .fused_rmsnorm = 1};
    return l;
}

/* weights + gradients + optimizer per rank: the estimator's own test values
 * (GiB), which leave the norm weights out (0.003 GiB at most here) */
static void test_estimator_static(void)
{
    struct { int64_t tp, cp, pp, mb, gpus; double gib; } cases[] = {
        {2, 1, 1, 1, 4, 44.8726}, {1, 2, 1, 1, 4, 67.3089}, {2, 1, 2, 1, 128, 11.9193}, {2, 2, 1, 2, 128, 23.1374}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        plc_job job;
        llama31_8b(&job, cases[i].gpus);
        plc_layout l = layout_of(cases[i].tp, cases[i].cp, cases[i].pp, cases[i].mb, cases[i].gpus);
        plc_estimate *e = calloc(1, sizeof *e);
        CU_ASSERT_EQUAL_FATAL(plc_estimate_layout(&job, &l, e), 0);
        CU_ASSERT_TRUE(e->valid);
        double st = e->stage_mem[0][PLC_MEM_WEIGHTS] + e->stage_mem[0][PLC_MEM_GRADS] + e->stage_mem[0][PLC_MEM_OPTIMIZER];
        CU_ASSERT_DOUBLE_EQUAL(st / GIB, cases[i].gib, 0.005);
        free(e);
    }
}

/* activations per layer with flash attention and SP: s b h (12 + 4k/a +
 * 8 f/h) / t bytes, plus flash's fp32 log-sum-exp */
static void test_estimator_activation_formula(void)
{
    plc_job job;
    llama31_8b(&job, 4);
    plc_layout l = layout_of(2, 1, 1, 1, 4);
    double s = 8192, h = 4096, t = 2, k = 8, a = 32, f = 14336;
    double formula = s * h * (12 + 4 * k / a + 8 * f / h) / t;
    double lse = s * a / t * 4;
    CU_ASSERT_DOUBLE_EQUAL(plc_act_layer_bytes(&job, &l, PLC_RECOMPUTE_NONE), formula + lse, 1.0);
    /* 32 layers: the estimator's 22.64 GiB for pp = 1 adds ~2.1 GiB of
     * logits and embeddings to the layers' 20.5 GiB */
    CU_ASSERT_DOUBLE_EQUAL(32 * formula / GIB, 20.5, 0.01);
}

/* Korthikanti et al.: SP divides all of a layer's activations by t; without
 * SP the norms stay replicated; selective recompute drops exactly the s x s
 * term; full recompute keeps only the layer input (2 s b h / t with SP). */
static void test_korthikanti_structure(void)
{
    plc_job job;
    fixture_llama13b(&job, 8);
    plc_layout one = {.tp = 1, .cp = 1, .pp = 1, .dp = 64, .vpp = 1, .micro_batch = 2, .sp = 0,
                      .attention = PLC_ATTN_FUSED, .fused_rmsnorm = 1};
    plc_layout four = one;
    four.tp = 4; four.dp = 16; four.sp = 1;
    for (int r = 0; r < PLC_RECOMPUTE_COUNT; r++)
        CU_ASSERT_DOUBLE_EQUAL(plc_act_layer_bytes(&job, &four, r) * 4, plc_act_layer_bytes(&job, &one, r), 1.0);
    four.sp = 0; /* replicated norms: 4 s b h more than the sharded share */
    double s = 2048, b = 2, h = 5120;
    CU_ASSERT_DOUBLE_EQUAL(plc_act_layer_bytes(&job, &four, PLC_RECOMPUTE_NONE) -
                               plc_act_layer_bytes(&job, &one, PLC_RECOMPUTE_NONE) / 4,
                           2 * 2 * 2 * s * b * h * 3 / 4, 1.0);
    double scores = 40.0 * s * s * b * 4; /* scores and probabilities, bf16 */
    CU_ASSERT_DOUBLE_EQUAL(plc_act_layer_bytes(&job, &one, PLC_RECOMPUTE_NONE) -
                               plc_act_layer_bytes(&job, &one, PLC_RECOMPUTE_SELECTIVE),
                           scores, 1.0);
    CU_ASSERT_DOUBLE_EQUAL(plc_act_layer_bytes(&job, &one, PLC_RECOMPUTE_FULL), 2 * s * b * h, 0.5);
    /* flash attention keeps no s x s term: selective changes nothing */
    one.attention = PLC_ATTN_FLASH2;
    CU_ASSERT_DOUBLE_EQUAL(plc_act_layer_bytes(&job, &one, PLC_RECOMPUTE_NONE),
                           plc_act_layer_bytes(&job, &one, PLC_RECOMPUTE_SELECTIVE), 0.0);
    /* the fused RMSNorm keeps no fp32 copy of its input: 2 x 4 h per token less */
    plc_layout unfused = one;
    unfused.fused_rmsnorm = 0;
    CU_ASSERT_DOUBLE_EQUAL(plc_act_layer_bytes(&job, &unfused, PLC_RECOMPUTE_NONE) -
                               plc_act_layer_bytes(&job, &one, PLC_RECOMPUTE_NONE),
                           s * b * 2 * 4 * h, 1.0);
}

/* The GPT block against Korthikanti et al. (2022), eq. 1 without dropout
 * (plc has none): s b h (34 + 5 a s / h) less the two dropout masks of
 * s b h bytes and the a s^2 b one = s b h (32 + 4 a s / h), plus what the
 * paper leaves out: LayerNorm's two fp32 statistics per row, twice. Bias
 * gradients keep nothing; with SP everything but nothing else divides by t. */
static void test_gpt_korthikanti(void)
{
    plc_job job;
    fixture_llama13b(&job, 128);
    fixture_model(&job.model, "gpt3-175b", 96, 12288, 4 * 12288, 96, 96, 51200, 2048, true);
    job.model.arch = PLC_ARCH_GPT;
    job.model.positions = PLC_POS_LEARNED;
    plc_layout one = {.tp = 1, .cp = 1, .pp = 1, .dp = 1024, .vpp = 1, .micro_batch = 1, .sp = 0,
                      .attention = PLC_ATTN_FUSED, .fused_rmsnorm = 0};
    double s = 2048, b = 1, h = 12288, a = 96;
    double want = s * b * h * (32 + 4 * a * s / h) + 2 * 8 * s * b;
    CU_ASSERT_DOUBLE_EQUAL(plc_act_layer_bytes(&job, &one, PLC_RECOMPUTE_NONE), want, 1.0);
    one.fused_rmsnorm = 1; /* an RMSNorm choice: no effect on LayerNorm */
    CU_ASSERT_DOUBLE_EQUAL(plc_act_layer_bytes(&job, &one, PLC_RECOMPUTE_NONE), want, 1.0);
    plc_layout eight = one;
    eight.tp = 8; eight.dp = 128; eight.sp = 1;
    CU_ASSERT_DOUBLE_EQUAL(plc_act_layer_bytes(&job, &eight, PLC_RECOMPUTE_NONE) * 8, want, 1.0);
    CU_ASSERT_DOUBLE_EQUAL(plc_act_layer_bytes(&job, &one, PLC_RECOMPUTE_FULL), 2 * s * b * h, 0.5);
    /* the Llama block of the same shapes keeps more in its MLP (gate, up,
     * silu, product over ffn_hidden against GELU's input and output) */
    job.model.arch = PLC_ARCH_LLAMA;
    CU_ASSERT_TRUE(plc_act_layer_bytes(&job, &one, PLC_RECOMPUTE_NONE) > want);
}

/* 1F1B: the first stage holds pp micro-batches, the last one; gpipe all */
static void test_inflight_and_stages(void)
{
    plc_job job;
    fixture_llama13b(&job, 8);
    /* the analytic model of an engine's memory (plrun's replays its plan:
     * test_solver_memory_exact.c) */
    job.train.engine = PLC_ENGINE_MEGATRON;
    plc_layout l = {.tp = 2, .cp = 1, .pp = 4, .dp = 8, .vpp = 1, .micro_batch = 1, .sp = 1,
                    .schedule = PLC_SCHED_1F1B, .zero = 1, .attention = PLC_ATTN_FLASH2, .fused_rmsnorm = 1};
    plc_estimate *e = calloc(1, sizeof *e);
    CU_ASSERT_EQUAL_FATAL(plc_estimate_layout(&job, &l, e), 0);
    CU_ASSERT_EQUAL(e->stages, 4);
    double layer = plc_act_layer_bytes(&job, &l, PLC_RECOMPUTE_NONE);
    for (int s = 0; s < 4; s++)
        CU_ASSERT_DOUBLE_EQUAL(e->stage_mem[s][PLC_MEM_ACTIVATIONS], (4 - s) * 10 * layer, 1.0);
    CU_ASSERT_TRUE(e->stage_mem[3][PLC_MEM_LOGITS] > 0);
    CU_ASSERT_DOUBLE_EQUAL(e->stage_mem[1][PLC_MEM_LOGITS], 0, 0);
    /* the peak is the largest stage total */
    double peak = 0;
    for (int s = 0; s < 4; s++) {
        double t = 0;
        for (int c = 0; c < PLC_MEM_COUNT; c++) t += e->stage_mem[s][c];
        if (t > peak) peak = t;
    }
    CU_ASSERT_DOUBLE_EQUAL(e->peak_bytes, peak, 1.0);
    l.schedule = PLC_SCHED_GPIPE;
    CU_ASSERT_EQUAL_FATAL(plc_estimate_layout(&job, &l, e), 0);
    CU_ASSERT_DOUBLE_EQUAL(e->stage_mem[2][PLC_MEM_ACTIVATIONS], 256 * 10 * layer, 1.0);
    CU_ASSERT_FALSE(e->fits); /* 256 micro-batches in flight */
    free(e);
}

/* ZeRO stages shard optimizer, then gradients, then weights over dp x cp;
 * fits means peak <= memory_limit x device memory */
static void test_zero_and_limit(void)
{
    plc_job job;
    fixture_llama13b(&job, 8);
    plc_layout l = {.tp = 1, .cp = 1, .pp = 1, .dp = 64, .vpp = 1, .micro_batch = 1,
                    .schedule = PLC_SCHED_1F1B, .attention = PLC_ATTN_FLASH2, .fused_rmsnorm = 1};
    plc_estimate *e = calloc(1, sizeof *e);
    double n = (double)plc_params_total(&job.model);
    double expect[4][3] = {{2 * n, 4 * n, 12 * n}, {2 * n, 4 * n, 12 * n / 64}, {2 * n, 4 * n / 64, 12 * n / 64},
                           {2 * n / 64, 4 * n / 64, 12 * n / 64}};
    for (int z = 0; z < 4; z++) {
        l.zero = z;
        plc_estimate_layout(&job, &l, e);
        CU_ASSERT_DOUBLE_EQUAL(e->stage_mem[0][PLC_MEM_WEIGHTS], expect[z][0], 1.0);
        CU_ASSERT_DOUBLE_EQUAL(e->stage_mem[0][PLC_MEM_GRADS], expect[z][1], 1.0);
        CU_ASSERT_DOUBLE_EQUAL(e->stage_mem[0][PLC_MEM_OPTIMIZER], expect[z][2], 1.0);
    }
    CU_ASSERT_TRUE(e->fits);
    job.layout.memory_limit = e->peak_bytes / job.cluster.hw.mem_bytes * 0.99;
    plc_estimate_layout(&job, &l, e);
    CU_ASSERT_FALSE(e->fits);
    CU_ASSERT_TRUE(e->valid);
    CU_ASSERT_PTR_NOT_NULL(strstr(e->reason, "GiB"));
    free(e);
}

void register_test_solver_memory(void)
{
    CU_pSuite s = CU_add_suite("solver_memory", NULL, NULL);
    CU_add_test(s, "public estimator: weights, gradients, optimizer", test_estimator_static);
    CU_add_test(s, "public estimator: activation formula", test_estimator_activation_formula);
    CU_add_test(s, "Korthikanti: SP, selective and full recompute", test_korthikanti_structure);
    CU_add_test(s, "the GPT block: Korthikanti without dropout", test_gpt_korthikanti);
    CU_add_test(s, "in-flight micro-batches per stage", test_inflight_and_stages);
    CU_add_test(s, "ZeRO stages and the memory limit", test_zero_and_limit);
}
