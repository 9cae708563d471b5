/* test_solver_trace.c: the solver's step time against `plc trace`'s
 * simulation of the lowered plan (every rank's program, the same cost
 * primitives, streams and dependencies), for a handful of small layouts:
 * depth-first and breadth-first schedules, tensor, sequence and data
 * parallelism, ZeRO 0 to 2, recompute. The estimate must stay within
 * TRACE_MARGIN of the simulation: the estimate is a closed form, the
 * simulation runs the real instruction lists, so they differ in detail
 * (per-op launch costs, the optimizer's and loss's exact kernels), but a
 * bubble or an overlap the estimate gets wrong shows up well beyond it. */
#include <CUnit/CUnit.h>
#include <math.h>
#include <stdio.h>

#include "compiler/plantools/plantools.h"
#include "compiler/solver/solver.h"
#include "test_plan_util.h"

#define TRACE_MARGIN 0.10

/* a 0.2B-parameter Llama-style model on 2 nodes x 8 A100-like GPUs, bf16,
 * big enough that matmuls, not launch latencies, set the pace */
static void trace_job(plc_job *job)
{
    tp_job(job, 8, false, 32);
    plc_model *m = &job->model;
    m->hidden = 1024;
    m->ffn_hidden = 2816;
    m->heads = 8;
    m->kv_heads = 8;
    m->vocab = 16384;
    m->seq_len = 1024;
    plc_hw *hw = &job->cluster.hw; /* tp_job's test-gpu with an A100's speeds */
    hw->flops_bf16 = 312e12;
    hw->hbm_bw = 2039e9;
    hw->intra_node_bw = 300e9;
    hw->hbm_eff = 0.7;
    hw->kernel_launch = 5e-6;
    hw->grad_bytes = 4;
    job->cluster.nodes = 2;
    job->cluster.gpus_per_node = 8;
    job->train.precision = PLC_PREC_BF16;
    job->layout.memory_limit = 1.0;
}

typedef struct trace_case {
    const char *name;
    plc_layout l;
} trace_case;

static void check_case(const plc_job *job, const trace_case *tc)
{
    plc_estimate est;
    CU_ASSERT_FATAL(plc_estimate_layout(job, &tc->l, &est) == 0);
    CU_ASSERT_FATAL(est.valid);
    plc_arena a;
    plc_arena_init(&a);
    plc_plan p;
    if (tp_lower(job, tc->l, &a, &p) != 0) {
        CU_FAIL("lowering failed");
        plc_arena_free(&a);
        return;
    }
    plc_trace_summary s;
    char err[256];
    CU_ASSERT_FATAL(plc_trace_run(&p, true, NULL, NULL, NULL, &s, err, sizeof err) == 0);
    double ratio = est.step_time_s / s.step_time_s;
    if (fabs(ratio - 1.0) > TRACE_MARGIN)
        fprintf(stderr, "\n%s: solver %.4f s, trace %.4f s (ratio %.3f, margin %.2f)\n", tc->name, est.step_time_s,
                s.step_time_s, ratio, TRACE_MARGIN);
    CU_ASSERT(fabs(ratio - 1.0) <= TRACE_MARGIN);
    plc_trace_summary_free(&s);
    plc_arena_free(&a);
}

static plc_layout flash(plc_layout l)
{
    l.attention = PLC_ATTN_FLASH2;
    l.fused_rmsnorm = 1;
    return l;
}

static void test_estimate_vs_trace(void)
{
    plc_job job;
    trace_job(&job);
    const plc_recompute NONE = PLC_RECOMPUTE_NONE, FULL = PLC_RECOMPUTE_FULL;
    /* dp, tp, pp, cp, sp, zero, recompute, vpp, schedule, micro-batch */
    const trace_case cases[] = {
        {"dp16 zero1", flash(tp_layout(16, 1, 1, 1, 0, 1, NONE, 1, PLC_SCHED_1F1B, 1))},
        {"dp8 tp2 sp zero0", flash(tp_layout(8, 2, 1, 1, 1, 0, NONE, 1, PLC_SCHED_1F1B, 1))},
        {"pp2 1f1b", flash(tp_layout(8, 1, 2, 1, 0, 1, NONE, 1, PLC_SCHED_1F1B, 1))},
        {"pp2 gpipe zero2", flash(tp_layout(8, 1, 2, 1, 0, 2, NONE, 1, PLC_SCHED_GPIPE, 1))},
        {"pp4 interleaved", flash(tp_layout(4, 1, 4, 1, 0, 1, NONE, 2, PLC_SCHED_INTERLEAVED, 1))},
        {"pp4 layered", flash(tp_layout(4, 1, 4, 1, 0, 1, NONE, 1, PLC_SCHED_LAYERED, 1))},
        {"pp4 modular", flash(tp_layout(4, 1, 4, 1, 0, 1, NONE, 1, PLC_SCHED_MODULAR, 1))},
        {"pp4 modular mb2 full", flash(tp_layout(4, 1, 4, 1, 0, 1, FULL, 1, PLC_SCHED_MODULAR, 2))},
        {"tp2 sp pp4 modular", flash(tp_layout(2, 2, 4, 1, 1, 1, NONE, 1, PLC_SCHED_MODULAR, 1))},
        {"pp8 modular, fewer micro-batches than stages", flash(tp_layout(2, 1, 8, 1, 0, 0, NONE, 1, PLC_SCHED_MODULAR, 4))},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) check_case(&job, &cases[i]);
}

void register_test_solver_trace(void)
{
    CU_pSuite s = CU_add_suite("solver_trace", NULL, NULL);
    CU_add_test(s, "step time: estimate against the simulated plan", test_estimate_vs_trace);
}
