/* test_lower_unit.c: plrun's figures of a layer and of the head, measured
 * on the lowering of a template (compiler/lower/lower_unit.c), against the
 * buffers lower_layer.c makes, summed by hand for tp_job's small model
 * (hidden 32, ffn 64, 4 heads, 2 KV heads, vocabulary 64, 16 tokens; bf16,
 * so every buffer below is a multiple of 64 bytes and the plan's alignment
 * adds nothing except to the [rows] float statistics of 16 rows, 64 bytes). */
#include <CUnit/CUnit.h>
#include <math.h>
#include <string.h>

#include "compiler/solver/solver.h"
#include "test_plan_util.h"

static plc_unit_figures zero_figures_of(int dp, int zero, bool gpt, int tp, int sp, plc_recompute rc,
                                        plc_attention att)
{
    plc_job job;
    tp_job(&job, 4, false, 8 * dp);
    job.train.precision = PLC_PREC_BF16;
    if (gpt) job.model.arch = PLC_ARCH_GPT, job.model.positions = PLC_POS_LEARNED;
    plc_layout l = tp_layout(dp, tp, 1, 1, sp, zero, rc, 1, PLC_SCHED_1F1B, 1);
    l.attention = att;
    plc_unit_figures f;
    char err[256] = "";
    int rc_ = plc_lower_unit_figures(&job, &l, &f, err, sizeof err);
    if (rc_) fprintf(stderr, "\n%s\n", err);
    CU_ASSERT_EQUAL_FATAL(rc_, 0);
    return f;
}

static plc_unit_figures figures_of(bool gpt, int tp, int sp, plc_recompute rc, plc_attention att)
{
    return zero_figures_of(1, 0, gpt, tp, sp, rc, att);
}

/* R = 16 rows; X = a residual-stream block, 16 x 32 bf16 = 1024 bytes; a
 * [rows] float statistic 64 bytes; the logits 16 x 64 bf16 = 2048 bytes */
static void test_head(void)
{
    plc_unit_figures f = figures_of(false, 1, 0, PLC_RECOMPUTE_NONE, PLC_ATTN_FLASH2);
    CU_ASSERT_EQUAL(f.tokens, 64);
    CU_ASSERT_EQUAL(f.head_keep, 64 + 1024); /* 1/std of the final norm, the gradient into its output */
    /* at the loss: targets, the normed rows, 1/std, logits and their
     * gradient, row max, row sum and target logit */
    CU_ASSERT_EQUAL(f.head_peak, 64 + 1024 + 64 + 2048 + 2048 + 3 * 64);
    /* LayerNorm keeps the mean too */
    plc_unit_figures g = figures_of(true, 1, 0, PLC_RECOMPUTE_NONE, PLC_ATTN_FLASH2);
    CU_ASSERT_EQUAL(g.head_keep, 2 * 64 + 1024);
    /* tp 2 with sequence parallelism: the stream's blocks are 8 rows */
    plc_unit_figures s = figures_of(false, 2, 1, PLC_RECOMPUTE_NONE, PLC_ATTN_FLASH2);
    CU_ASSERT_EQUAL(s.head_keep, 64 + 512);
}

static void test_layer_kept(void)
{
    /* full recompute: the output only (the input is the previous layer's) */
    CU_ASSERT_EQUAL(figures_of(false, 1, 0, PLC_RECOMPUTE_FULL, PLC_ATTN_FLASH2).layer_kept, 1024);
    /* none, flash: hn 1024, 1/std 64, q 1024, k 512, v 512, att 1024,
     * log-sum-exp 4 heads x 16 x 4 = 256, x_mid 1024, hn2 1024, 1/std 64,
     * gate, up and SwiGLU 3 x 2048, the output 1024 */
    double kept = 1024 + 64 + 1024 + 512 + 512 + 1024 + 256 + 1024 + 1024 + 64 + 3 * 2048 + 1024;
    CU_ASSERT_EQUAL(figures_of(false, 1, 0, PLC_RECOMPUTE_NONE, PLC_ATTN_FLASH2).layer_kept, kept);
    /* the naive attention keeps its 4 x 16 x 16 probabilities instead, as
     * the fused one does; flash 1 and 2 alike keep the log-sum-exp */
    plc_unit_figures naive = figures_of(false, 1, 0, PLC_RECOMPUTE_NONE, PLC_ATTN_NAIVE);
    plc_unit_figures fused = figures_of(false, 1, 0, PLC_RECOMPUTE_NONE, PLC_ATTN_FUSED);
    plc_unit_figures f1 = figures_of(false, 1, 0, PLC_RECOMPUTE_NONE, PLC_ATTN_FLASH1);
    plc_unit_figures f2 = figures_of(false, 1, 0, PLC_RECOMPUTE_NONE, PLC_ATTN_FLASH2);
    CU_ASSERT_EQUAL(naive.layer_kept, kept - 256 + 4096);
    CU_ASSERT(memcmp(&naive, &fused, sizeof naive) == 0);
    CU_ASSERT(memcmp(&f1, &f2, sizeof f1) == 0);
    /* selective: neither the attention output nor its statistics */
    CU_ASSERT_EQUAL(figures_of(false, 1, 0, PLC_RECOMPUTE_SELECTIVE, PLC_ATTN_FLASH2).layer_kept, kept - 1024 - 256);
}

/* how the stage enters and leaves the layer matters only to ZeRO's buffers */
static void test_visit_cases(void)
{
    for (int rc = PLC_RECOMPUTE_NONE; rc <= PLC_RECOMPUTE_FULL; rc++) {
        plc_unit_figures z0 = zero_figures_of(2, 0, false, 1, 0, rc, PLC_ATTN_FLASH2);
        for (int b = 0; b < 2; b++) {
            CU_ASSERT_EQUAL(z0.bwd_acc[b], z0.bwd_peak[0][0]);
            for (int h = 0; h < 2; h++) {
                CU_ASSERT_EQUAL(z0.fwd_peak[b][h], z0.fwd_peak[0][0]);
                CU_ASSERT_EQUAL(z0.bwd_peak[b][h], z0.bwd_peak[0][0]);
            }
        }
        /* ZeRO 3, the layer's weights gathered before and kept: all alive
         * throughout, bf16 blocks of 64 + 2048 + 1024 + 1024 + 2048 + 64 +
         * 3 x 4096 bytes (the norms, q, k, v, o, the MLP's three) */
        plc_unit_figures z3 = zero_figures_of(2, 3, false, 1, 0, rc, PLC_ATTN_FLASH2);
        double w = 64 + 2048 + 1024 + 1024 + 2048 + 64 + 3 * 4096;
        CU_ASSERT_EQUAL(z3.fwd_peak[1][1], z0.fwd_peak[0][0] + w);
        CU_ASSERT(z3.fwd_peak[0][0] < z3.fwd_peak[0][1] && z3.fwd_peak[0][1] <= z3.fwd_peak[1][1]);
        CU_ASSERT(z3.fwd_peak[0][0] <= z3.fwd_peak[1][0] && z3.fwd_peak[1][0] <= z3.fwd_peak[1][1]);
        CU_ASSERT_EQUAL(z3.layer_kept, z0.layer_kept);
        /* ZeRO 2: the gradient blocks (fp32) made by the backward, not
         * counted when they exist already */
        plc_unit_figures z2 = zero_figures_of(2, 2, false, 1, 0, rc, PLC_ATTN_FLASH2);
        CU_ASSERT_EQUAL(z2.bwd_acc[0], z0.bwd_peak[0][0]);
        CU_ASSERT(z2.bwd_peak[0][0] > z2.bwd_acc[0] && z2.bwd_peak[0][0] <= z2.bwd_acc[0] + 2 * w);
        CU_ASSERT_EQUAL(z2.fwd_peak[0][0], z0.fwd_peak[0][0]);
        /* ZeRO 1's shards are made between the visits: its figures are
         * ZeRO 0's (the solver's cache of templates takes them as one) */
        plc_unit_figures z1 = zero_figures_of(2, 1, false, 1, 0, rc, PLC_ATTN_FLASH2);
        CU_ASSERT(memcmp(&z1, &z0, sizeof z0) == 0);
    }
}

/* a micro-batch whose buffers no device could hold (past 2^48 bytes) is
 * refused by the lowering, and the solver's estimate of plrun's memory
 * says it fits nowhere: a finite peak above the limit, never NaN (the
 * solver once took 0 x infinity for a fit) */
static void test_too_large(void)
{
    plc_job job;
    int64_t mb = (int64_t)1 << 37; /* 2^41 rows x 64 wide x 4 bytes = 2^49 */
    tp_job(&job, 4, false, 64 * mb); /* 8 GPUs: dp 8, 8 micro-batches */
    plc_layout l = tp_layout(8, 1, 1, 1, 0, 0, PLC_RECOMPUTE_NONE, 1, PLC_SCHED_1F1B, 1);
    l.micro_batch = mb;
    l.attention = PLC_ATTN_NAIVE;
    plc_unit_figures f;
    char err[256] = "";
    CU_ASSERT_NOT_EQUAL(plc_lower_unit_figures(&job, &l, &f, err, sizeof err), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "beyond any device's memory"));
    plc_estimate est;
    CU_ASSERT_EQUAL_FATAL(plc_estimate_layout(&job, &l, &est), 0);
    CU_ASSERT_FATAL(est.valid);
    CU_ASSERT(isfinite(est.peak_bytes));
    CU_ASSERT(est.peak_bytes > est.limit_bytes);
    CU_ASSERT_FALSE(est.fits);
    /* the same layout with a micro-batch of one lowers */
    l.micro_batch = 1;
    CU_ASSERT_EQUAL(plc_lower_unit_figures(&job, &l, &f, err, sizeof err), 0);
}

void register_test_lower_unit(void);
void register_test_lower_unit(void)
{
    CU_pSuite s = CU_add_suite("lower_unit", NULL, NULL);
    CU_add_test(s, "the head's figures are its lowered buffers", test_head);
    CU_add_test(s, "a layer's kept bytes are its lowered buffers, by recompute policy", test_layer_kept);
    CU_add_test(s, "a layer's peaks by how the stage enters and leaves it: ZeRO's weights and blocks", test_visit_cases);
    CU_add_test(s, "buffers past any device's memory: refused, and the estimate fits nowhere", test_too_large);
}
