/* test_runtime_step_graph.c: the cut of a step into the stretches the CUDA backend
 * records as graphs (runtime/step_graph.h): the eager ops, the spans of
 * transfers, the shortest run, on hand-made programs and on lowered ones
 * (the invariants the executor relies on). Host logic only: no GPU. */
#include <CUnit/CUnit.h>

#include "runtime/step_graph.h"
#include "test_plan_util.h"

/* a program of ops (no buffers: the cut reads ops, streams and waits) */
typedef struct {
    plc_instr in[64];
    plc_program p;
} mini;

static void mini_init(mini *m, const plc_op *ops, uint32_t n)
{
    memset(m, 0, sizeof *m);
    for (uint32_t i = 0; i < n; i++) {
        m->in[i].op = ops[i];
        m->in[i].wait = -1;
        m->in[i].group = -1;
        m->in[i].stream = PLC_STREAM_COMPUTE;
    }
    m->p.instrs = m->in;
    m->p.ninstrs = n;
    m->p.loss_buf = m->p.gnorm_buf = -1;
}

static void test_eager_ops(void)
{
    CU_ASSERT(plc_step_graph_eager_op(PLC_OP_DATA_LOAD, PLC_GRAPH_COMM));
    CU_ASSERT(plc_step_graph_eager_op(PLC_OP_DATA_LOAD, 0));
    CU_ASSERT(!plc_step_graph_eager_op(PLC_OP_DATA_LOAD, PLC_GRAPH_DATA_STAGED)); /* a device copy then */
    CU_ASSERT(plc_step_graph_eager_op(PLC_OP_ALLGATHER, PLC_GRAPH_DATA_STAGED));
    /* the step's scalars live in the backend's memory: recorded */
    CU_ASSERT(!plc_step_graph_eager_op(PLC_OP_ADAMW, 1));
    CU_ASSERT(!plc_step_graph_eager_op(PLC_OP_XENT_LOSS, 1));
    CU_ASSERT(!plc_step_graph_eager_op(PLC_OP_SUMSQ, 1));
    CU_ASSERT(!plc_step_graph_eager_op(PLC_OP_CLIP_SCALE, 0));
    CU_ASSERT(!plc_step_graph_eager_op(PLC_OP_MATMUL, 0));
    CU_ASSERT(!plc_step_graph_eager_op(PLC_OP_XENT_MAX, 0));
    CU_ASSERT(!plc_step_graph_eager_op(PLC_OP_ALLREDUCE, 1));
    CU_ASSERT(plc_step_graph_eager_op(PLC_OP_ALLREDUCE, 0)); /* NCCL < 2.9 */
    CU_ASSERT(plc_step_graph_eager_op(PLC_OP_SEND, 0));
}

/* DATA_LOAD | 5 compute | DATA_LOAD | 2 compute (too short) | DATA_LOAD | 4
 * compute (micro-batches: a DATA_LOAD each) */
static void test_runs_between_eager_ops(void)
{
    const plc_op ops[] = {PLC_OP_DATA_LOAD, PLC_OP_EMBED_FWD, PLC_OP_RMSNORM_FWD, PLC_OP_MATMUL, PLC_OP_XENT_MAX,
                          PLC_OP_XENT_SUMEXP, PLC_OP_DATA_LOAD, PLC_OP_MATMUL, PLC_OP_EMBED_BWD,
                          PLC_OP_DATA_LOAD, PLC_OP_SUMSQ, PLC_OP_CLIP_SCALE, PLC_OP_ADAMW, PLC_OP_ZERO};
    mini m;
    mini_init(&m, ops, 14);
    plc_step_segments s;
    CU_ASSERT_FATAL(plc_step_graph_plan(&m.p, 1, 4, &s) == 0);
    CU_ASSERT_EQUAL_FATAL(s.n, 2);
    CU_ASSERT_EQUAL(s.seg[0].first, 1);
    CU_ASSERT_EQUAL(s.seg[0].end, 6);
    CU_ASSERT_EQUAL(s.seg[1].first, 10);
    CU_ASSERT_EQUAL(s.seg[1].end, 14);
    CU_ASSERT_EQUAL(s.captured, 9);
    CU_ASSERT_EQUAL(s.seg_of[0], -1);
    CU_ASSERT_EQUAL(s.seg_of[3], 0);
    CU_ASSERT_EQUAL(s.seg_of[7], -1); /* a run of 2 < 4 */
    CU_ASSERT_EQUAL(s.seg_of[13], 1);
    plc_step_segments_free(&s);
    /* with a shortest run of 1, the pair is a graph too */
    CU_ASSERT_FATAL(plc_step_graph_plan(&m.p, 1, 1, &s) == 0);
    CU_ASSERT_EQUAL(s.n, 3);
    CU_ASSERT_EQUAL(s.seg_of[8], 1);
    plc_step_segments_free(&s);
}

/* a reduce-scatter on the comm stream started at 2, waited for at 8: a
 * DATA_LOAD at 5 inside its span makes the span eager; without it the span
 * is inside one graph */
static void test_transfer_spans(void)
{
    plc_op ops[] = {PLC_OP_MATMUL, PLC_OP_MATMUL, PLC_OP_REDUCE_SCATTER, PLC_OP_MATMUL, PLC_OP_MATMUL,
                    PLC_OP_DATA_LOAD, PLC_OP_MATMUL, PLC_OP_MATMUL, PLC_OP_WAIT, PLC_OP_MATMUL, PLC_OP_MATMUL,
                    PLC_OP_MATMUL, PLC_OP_MATMUL};
    mini m;
    mini_init(&m, ops, 13);
    m.in[2].stream = PLC_STREAM_COMM;
    m.in[8].wait = 2;
    plc_step_segments s;
    CU_ASSERT_FATAL(plc_step_graph_plan(&m.p, 1, 2, &s) == 0);
    CU_ASSERT_EQUAL_FATAL(s.n, 2); /* 0-1 and 9-12; 2..8 eager */
    CU_ASSERT_EQUAL(s.seg[0].first, 0);
    CU_ASSERT_EQUAL(s.seg[0].end, 2);
    CU_ASSERT_EQUAL(s.seg[1].first, 9);
    CU_ASSERT_EQUAL(s.seg[1].end, 13);
    for (uint32_t i = 2; i <= 8; i++) CU_ASSERT_EQUAL(s.seg_of[i], -1);
    plc_step_segments_free(&s);

    ops[5] = PLC_OP_MATMUL;
    mini_init(&m, ops, 13);
    m.in[2].stream = PLC_STREAM_COMM;
    m.in[8].wait = 2;
    CU_ASSERT_FATAL(plc_step_graph_plan(&m.p, 1, 2, &s) == 0);
    CU_ASSERT_EQUAL(s.n, 1);
    CU_ASSERT_EQUAL(s.captured, 13);
    plc_step_segments_free(&s);
    /* transfers that the backend cannot record: the transfer and its span */
    CU_ASSERT_FATAL(plc_step_graph_plan(&m.p, 0, 2, &s) == 0);
    CU_ASSERT_EQUAL_FATAL(s.n, 2);
    CU_ASSERT_EQUAL(s.seg[0].end, 2);
    CU_ASSERT_EQUAL(s.seg[1].first, 9);
    plc_step_segments_free(&s);
}

/* a transfer waited for only at the step's end: its span runs to the last
 * instruction, so an eager op after it makes all of that eager */
static void test_span_to_step_end(void)
{
    const plc_op ops[] = {PLC_OP_MATMUL, PLC_OP_MATMUL, PLC_OP_ALLREDUCE, PLC_OP_MATMUL, PLC_OP_MATMUL,
                          PLC_OP_DATA_LOAD, PLC_OP_MATMUL};
    mini m;
    mini_init(&m, ops, 7);
    m.in[2].stream = PLC_STREAM_COMM;
    plc_step_segments s;
    CU_ASSERT_FATAL(plc_step_graph_plan(&m.p, 1, 2, &s) == 0);
    CU_ASSERT_EQUAL_FATAL(s.n, 1);
    CU_ASSERT_EQUAL(s.seg[0].first, 0);
    CU_ASSERT_EQUAL(s.seg[0].end, 2);
    plc_step_segments_free(&s);
    /* the same on the compute stream completes where it starts */
    m.in[2].stream = PLC_STREAM_COMPUTE;
    CU_ASSERT_FATAL(plc_step_graph_plan(&m.p, 1, 2, &s) == 0);
    CU_ASSERT_EQUAL_FATAL(s.n, 1);
    CU_ASSERT_EQUAL(s.seg[0].end, 5);
    plc_step_segments_free(&s);
}

/* every program of lowered plans: segments ordered and disjoint, no eager op
 * inside one, every transfer started in a segment completed in it and every
 * wait inside one for a transfer it started */
static void check_program(const plc_program *p, unsigned caps)
{
    plc_step_segments s;
    CU_ASSERT_FATAL(plc_step_graph_plan(p, caps, PLC_STEP_GRAPH_MIN_RUN, &s) == 0);
    uint32_t prev_end = 0, captured = 0;
    for (uint32_t g = 0; g < s.n; g++) {
        CU_ASSERT(s.seg[g].first >= prev_end);
        CU_ASSERT(s.seg[g].end - s.seg[g].first >= PLC_STEP_GRAPH_MIN_RUN);
        prev_end = s.seg[g].end;
        captured += s.seg[g].end - s.seg[g].first;
    }
    CU_ASSERT_EQUAL(captured, s.captured);
    for (uint32_t i = 0; i < p->ninstrs; i++) {
        const plc_instr *in = &p->instrs[i];
        int32_t g = s.seg_of[i];
        if (g < 0) continue;
        CU_ASSERT(i >= s.seg[g].first && i < s.seg[g].end);
        CU_ASSERT(!plc_step_graph_eager_op(in->op, caps));
        if (in->wait >= 0) {
            CU_ASSERT_EQUAL(s.seg_of[in->wait], g);
        }
        if (plc_op_comm(in->op) != PLC_COMM_NONE && in->stream == PLC_STREAM_COMM) {
            uint32_t w = p->ninstrs;
            for (uint32_t k = i + 1; k < p->ninstrs && w == p->ninstrs; k++)
                if (p->instrs[k].wait == (int32_t)i) w = k;
            if (w < p->ninstrs) {
                CU_ASSERT_EQUAL(s.seg_of[w], g);
            } else { /* completed at the segment's (the step's) end */
                CU_ASSERT_EQUAL(s.seg[g].end, p->ninstrs);
            }
        }
    }
    plc_step_segments_free(&s);
}

static void test_lowered_plans(void)
{
    const struct { int dp, tp, pp, zero, mb; } cases[] = {{1, 1, 1, 0, 1}, {2, 2, 1, 1, 2}, {1, 2, 2, 0, 4}, {4, 1, 2, 3, 2}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        plc_job job;
        tp_job(&job, 4, false, 8 * cases[c].dp * cases[c].mb);
        plc_arena a;
        plc_arena_init(&a);
        plc_plan p;
        CU_ASSERT_FATAL(tp_lower(&job, tp_layout(cases[c].dp, cases[c].tp, cases[c].pp, 1, 0, cases[c].zero,
                                                 PLC_RECOMPUTE_NONE, 1, PLC_SCHED_1F1B, cases[c].mb),
                                 &a, &p) == 0);
        uint32_t total = 0;
        for (uint32_t k = 0; k < p.nprograms; k++) {
            check_program(&p.programs[k], 1);
            check_program(&p.programs[k], 0);
            plc_step_segments s;
            CU_ASSERT_FATAL(plc_step_graph_plan(&p.programs[k], 1, PLC_STEP_GRAPH_MIN_RUN, &s) == 0);
            total += s.captured;
            if (c == 0) { /* one rank: all of it but the micro-batches' uploads */
                uint32_t loads = 0;
                for (uint32_t i = 0; i < p.programs[k].ninstrs; i++) loads += p.programs[k].instrs[i].op == PLC_OP_DATA_LOAD;
                CU_ASSERT(loads > 1);
                CU_ASSERT(s.n >= 1 && s.n <= loads + 1); /* a stretch before the first load, one after each */
                CU_ASSERT_EQUAL(s.captured, p.programs[k].ninstrs - loads);
            }
            plc_step_segments_free(&s);
        }
        CU_ASSERT(total > 0); /* the forward and backward are recorded */
        /* with the micro-batches staged and the transfers recorded, every
         * rank's step is one graph */
        for (uint32_t k = 0; k < p.nprograms; k++) {
            check_program(&p.programs[k], PLC_GRAPH_COMM | PLC_GRAPH_DATA_STAGED);
            plc_step_segments s;
            CU_ASSERT_FATAL(plc_step_graph_plan(&p.programs[k], PLC_GRAPH_COMM | PLC_GRAPH_DATA_STAGED,
                                                PLC_STEP_GRAPH_MIN_RUN, &s) == 0);
            CU_ASSERT_EQUAL(s.n, 1);
            CU_ASSERT_EQUAL(s.captured, p.programs[k].ninstrs);
            plc_step_segments_free(&s);
        }
        plc_arena_free(&a);
    }
}

void register_test_runtime_step_graph(void);
void register_test_runtime_step_graph(void)
{
    CU_pSuite s = CU_add_suite("step_graph", NULL, NULL);
    CU_add_test(s, "the ops that run eagerly", test_eager_ops);
    CU_add_test(s, "runs between eager ops, the shortest run", test_runs_between_eager_ops);
    CU_add_test(s, "a transfer's span", test_transfer_spans);
    CU_add_test(s, "a span to the step's end", test_span_to_step_end);
    CU_add_test(s, "lowered plans: the executor's invariants", test_lowered_plans);
}
