/* test_lower_zero_bubble.c: the zero-bubble schedules end to end in the
 * compiler: their spellings, their rules in the rulebook (ZB_PP,
 * ZB_V_LAYERS, ZB_MICRO, ZB_ZERO), and the lowering's split backward: a
 * split plan makes exactly 1F1B's weight-gradient products, moves some of
 * them past a later micro-batch's work (the W units the order defers),
 * and a whole backward keeps them inside its own backward. */
#include <CUnit/CUnit.h>
#include <string.h>

#include "common/layout_rules.h"
#include "compiler/lower/lower.h"
#include "test_plan_util.h"

static void test_names(void)
{
    static const struct { plc_schedule s; const char *name; } want[] = {
        {PLC_SCHED_ZB_H1, "zb_h1"}, {PLC_SCHED_ZB_H2, "zb_h2"}, {PLC_SCHED_ZB_V, "zb_v"}, {PLC_SCHED_DUALPIPE_V, "dualpipe_v"}};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        CU_ASSERT_STRING_EQUAL(plc_schedule_name(want[i].s), want[i].name);
        CU_ASSERT(plc_schedule_splits(want[i].s));
    }
    CU_ASSERT(!plc_schedule_splits(PLC_SCHED_1F1B));
    CU_ASSERT(!plc_schedule_splits(PLC_SCHED_MODULAR));
    CU_ASSERT_PTR_NULL(plc_schedule_name(PLC_SCHED_COUNT));
}

/* the rule a layout breaks, and its message */
static plc_rule rule_of(const plc_job *job, plc_layout l, char *msg, size_t size)
{
    plc_verdict v = plc_layout_rules_job(job, &l);
    plc_layout_rules_job_message(job, &l, v, msg, size);
    return v.rule;
}

static void test_rules(void)
{
    plc_job job;
    char msg[400];
    tp_job(&job, 8, false, 8); /* 8 layers, 8 sequences: 8 micro-batches of 1 on dp 1 */
    job.cluster.gpus_per_node = 4;
    /* legal: zb_h1 and zb_h2 on any pipeline, zb_v and dualpipe_v on 2 pp equal chunks */
    CU_ASSERT_EQUAL(rule_of(&job, tp_layout(1, 1, 4, 1, 0, 1, PLC_RECOMPUTE_NONE, 1, PLC_SCHED_ZB_H1, 1), msg, sizeof msg),
                    PLC_RULE_OK);
    CU_ASSERT_EQUAL(rule_of(&job, tp_layout(1, 1, 4, 1, 0, 0, PLC_RECOMPUTE_NONE, 1, PLC_SCHED_ZB_V, 1), msg, sizeof msg),
                    PLC_RULE_OK);
    /* a pipeline of one stage has no bubble to fill */
    job.cluster.gpus_per_node = 1;
    CU_ASSERT_EQUAL(rule_of(&job, tp_layout(1, 1, 1, 1, 0, 0, PLC_RECOMPUTE_NONE, 1, PLC_SCHED_ZB_H2, 1), msg, sizeof msg),
                    PLC_RULE_ZB_PP);
    CU_ASSERT_STRING_EQUAL(msg, "schedule zb_h2 splits a pipeline's backwards and needs pp >= 2");
    /* 8 layers do not make 2 * 8 chunks */
    job.cluster.gpus_per_node = 8;
    CU_ASSERT_EQUAL(rule_of(&job, tp_layout(1, 1, 8, 1, 0, 0, PLC_RECOMPUTE_NONE, 1, PLC_SCHED_ZB_V, 1), msg, sizeof msg),
                    PLC_RULE_ZB_V_LAYERS);
    CU_ASSERT_STRING_EQUAL(msg, "schedule zb_v cuts the layers into 2 * pp = 16 equal chunks, but layers = 8");
    /* micro-batches: zb_v 2 pp, dualpipe_v 2 pp - 1 */
    job.cluster.gpus_per_node = 4;
    job.train.global_batch = 7;
    CU_ASSERT_EQUAL(rule_of(&job, tp_layout(1, 1, 4, 1, 0, 0, PLC_RECOMPUTE_NONE, 1, PLC_SCHED_ZB_V, 1), msg, sizeof msg),
                    PLC_RULE_ZB_MICRO);
    CU_ASSERT_STRING_EQUAL(msg, "schedule zb_v needs at least 2 * pp = 8 micro-batches, not 7");
    CU_ASSERT_EQUAL(
        rule_of(&job, tp_layout(1, 1, 4, 1, 0, 0, PLC_RECOMPUTE_NONE, 1, PLC_SCHED_DUALPIPE_V, 1), msg, sizeof msg),
        PLC_RULE_OK);
    job.train.global_batch = 6;
    CU_ASSERT_EQUAL(
        rule_of(&job, tp_layout(1, 1, 4, 1, 0, 0, PLC_RECOMPUTE_NONE, 1, PLC_SCHED_DUALPIPE_V, 1), msg, sizeof msg),
        PLC_RULE_ZB_MICRO);
    /* ZeRO 2 and 3 */
    job.train.global_batch = 8;
    CU_ASSERT_EQUAL(rule_of(&job, tp_layout(1, 1, 4, 1, 0, 2, PLC_RECOMPUTE_NONE, 1, PLC_SCHED_ZB_H1, 1), msg, sizeof msg),
                    PLC_RULE_ZB_ZERO);
    CU_ASSERT(strstr(msg, "schedule zb_h1 runs with zero = 0 or 1, not 2") == msg);
    /* vpp belongs to the interleaved schedule */
    CU_ASSERT_EQUAL(rule_of(&job, tp_layout(1, 1, 4, 1, 0, 0, PLC_RECOMPUTE_NONE, 2, PLC_SCHED_ZB_H1, 1), msg, sizeof msg),
                    PLC_RULE_VPP_SCHEDULE);
}

/* a weight-gradient product: a matmul of a layer's backward with the first
 * operand transposed (dW += X^T dY) */
static bool wgrad(const plc_plan *p, const plc_instr *in)
{
    return in->op == PLC_OP_MATMUL && in->phase == PLC_PHASE_BACKWARD && in->layer >= 0 &&
           in->layer < p->model.layers && in->arg[3] == 1;
}

/* On program g: the weight-gradient products, and how many of them run
 * after a backward computation of a later micro-batch (deferred W's; the
 * receives posted one unit ahead do not count) */
static void count(const plc_plan *p, uint32_t g, int64_t *products, int64_t *deferred)
{
    const plc_program *pr = &p->programs[g];
    *products = *deferred = 0;
    int32_t latest_bwd = -1; /* the highest micro-batch a backward instruction has run for so far */
    for (uint32_t i = 0; i < pr->ninstrs; i++) {
        const plc_instr *in = &pr->instrs[i];
        if (wgrad(p, in)) {
            (*products)++;
            if (in->micro < latest_bwd) (*deferred)++;
        } else if (in->phase == PLC_PHASE_BACKWARD && in->layer >= 0 && in->layer < p->model.layers &&
                   in->stream == PLC_STREAM_COMPUTE && in->op != PLC_OP_WAIT && in->micro > latest_bwd)
            latest_bwd = in->micro;
    }
}

static void test_split_lowering(void)
{
    static const plc_schedule split[] = {PLC_SCHED_ZB_H1, PLC_SCHED_ZB_H2, PLC_SCHED_ZB_V, PLC_SCHED_DUALPIPE_V};
    for (int gpt = 0; gpt < 2; gpt++) {
        plc_job job;
        tp_job(&job, 4, false, 8);
        if (gpt) {
            job.model.arch = PLC_ARCH_GPT;
            job.model.positions = PLC_POS_LEARNED;
        }
        plc_arena a;
        plc_arena_init(&a);
        plc_plan ref;
        CU_ASSERT_FATAL(tp_lower(&job, tp_layout(1, 1, 2, 1, 0, 0, PLC_RECOMPUTE_NONE, 1, PLC_SCHED_1F1B, 1), &a, &ref) == 0);
        int64_t ref_products = 0, ref_deferred = 0;
        for (uint32_t g = 0; g < ref.nprograms; g++) {
            int64_t n, d;
            count(&ref, g, &n, &d);
            ref_products += n;
            ref_deferred += d;
        }
        /* 1F1B: every W product inside its own backward; Llama 7 a layer, GPT 12 (weights and biases: biases
         * are column sums, not matmuls, so 6 products) */
        CU_ASSERT_EQUAL(ref_deferred, 0);
        CU_ASSERT_EQUAL(ref_products, (gpt ? 6 : 7) * 4 * 8);
        for (size_t s = 0; s < sizeof split / sizeof split[0]; s++) {
            plc_plan p;
            CU_ASSERT_FATAL(tp_lower(&job, tp_layout(1, 1, 2, 1, 0, 0, PLC_RECOMPUTE_NONE, 1, split[s], 1), &a, &p) == 0);
            int64_t products = 0, deferred = 0;
            for (uint32_t g = 0; g < p.nprograms; g++) {
                int64_t n, d;
                count(&p, g, &n, &d);
                products += n;
                deferred += d;
            }
            CU_ASSERT_EQUAL(products, ref_products);
            if (deferred == 0) fprintf(stderr, "\n  schedule %s defers no W\n", plc_schedule_name(split[s]));
            CU_ASSERT(deferred > 0);
        }
        plc_arena_free(&a);
    }
}

void register_test_lower_zero_bubble(void)
{
    CU_pSuite s = CU_add_suite("zero_bubble", NULL, NULL);
    CU_add_test(s, "schedule names", test_names);
    CU_add_test(s, "rules", test_rules);
    CU_add_test(s, "split lowering", test_split_lowering);
}
