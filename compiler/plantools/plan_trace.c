/* plan_trace.c: costs of instructions from the solver's primitives, and the
 * Chrome trace-event writer. */
#include "compiler/plantools/plantools_int.h"

#include <stdlib.h>
#include <string.h>

#include "common/chrome_trace.h"
#include "common/plan_io.h"
#include "compiler/solver/solver.h"

struct plc_trace_cost_ctx {
    int64_t *group_size, *group_per_node;
    bool pp_cross_node; /* neighbouring pipeline stages sit on different nodes */
};

plc_trace_cost_ctx *plc_trace_cost_ctx_new(const plc_plan *p)
{
    plc_trace_cost_ctx *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    size_t ng = p->ngroups ? p->ngroups : 1;
    c->group_size = calloc(ng, sizeof *c->group_size);
    c->group_per_node = calloc(ng, sizeof *c->group_per_node);
    if (!c->group_size || !c->group_per_node) {
        plc_trace_cost_ctx_free(c);
        return NULL;
    }
    const plc_layout *l = &p->layout;
    int64_t gpn = p->gpus_per_node > 0 ? p->gpus_per_node : 1;
    for (uint32_t g = 0; g < p->ngroups; g++) {
        const plc_group *gr = &p->groups[g];
        int64_t n = plc_plan_group_size(l, gr), on_node0 = 0;
        /* members of the group holding rank 0 (a member of every group) on node 0 */
        for (int64_t r = 0; r < gpn && r < p->world_size; r++) {
            const plc_group_seat seat = plc_group_seat_of(l, gr, plc_rank_to_coords(l, r));
            if (seat.member && seat.colour == 0) on_node0++;
        }
        c->group_size[g] = n;
        c->group_per_node[g] = on_node0 > 0 ? on_node0 : 1;
    }
    c->pp_cross_node = l->tp * l->cp * l->dp >= gpn;
    return c;
}

void plc_trace_cost_ctx_free(plc_trace_cost_ctx *c)
{
    if (!c) return;
    free(c->group_size);
    free(c->group_per_node);
    free(c);
}

static double buf_bytes(const plc_program *g, int32_t b) { return b >= 0 ? (double)g->buffers[b].bytes : 0.0; }

static double elem_size(const plc_program *g, int32_t b) { return b >= 0 ? (double)plc_dtype_size(g->buffers[b].dtype) : 4.0; }

double plc_trace_cost(void *ctx, const plc_plan *p, const plc_program *g, const plc_instr *in)
{
    plc_trace_cost_ctx *c = ctx;
    const plc_hw *hw = &p->hw;
    plc_precision prec = p->train.precision;
    const int64_t *a = in->arg;
    double launch = hw->kernel_launch;
    switch (in->op) {
    case PLC_OP_NOP:
    case PLC_OP_WAIT:
        return 0;
    case PLC_OP_MATMUL:
        return launch + plc_cost_matmul(hw, prec, a[0], a[1], a[2]);
    case PLC_OP_ATTN_FWD:
    case PLC_OP_ATTN_BWD: {
        /* QK^T and PV per head, causal (half the products) */
        double t = plc_cost_matmul(hw, prec, a[0] * a[3] * a[1], a[2], a[5]);
        double io = a[6] ? 0 : 4.0 * (double)(a[0] * a[3] * a[1]) * (double)a[2] * 2;
        double f = in->op == PLC_OP_ATTN_FWD ? 1.0 : 2.5;
        return launch + f * t + plc_cost_memory_bound(hw, f * io);
    }
    case PLC_OP_ALLREDUCE:
    case PLC_OP_REDUCE_SCATTER:
    case PLC_OP_ALLGATHER:
    case PLC_OP_BROADCAST: {
        if (in->group < 0 || !c) return 0;
        int64_t n = c->group_size[in->group];
        double es = elem_size(g, in->buf[0]);
        double bytes = (double)a[0] * es;
        plc_collective_kind k = PLC_COLL_ALL_REDUCE;
        if (in->op == PLC_OP_REDUCE_SCATTER) { k = PLC_COLL_REDUCE_SCATTER; bytes *= (double)n; }
        if (in->op == PLC_OP_ALLGATHER) { k = PLC_COLL_ALL_GATHER; bytes *= (double)n; }
        if (in->op == PLC_OP_BROADCAST) k = PLC_COLL_BROADCAST;
        return plc_cost_collective(hw, k, bytes, n, c->group_per_node[in->group]);
    }
    case PLC_OP_SEND:
    case PLC_OP_RECV:
        return plc_cost_p2p(hw, (double)a[0] * elem_size(g, in->buf[0]), c ? c->pp_cross_node : false);
    default: {
        /* memory-bound: every operand read or written once */
        double bytes = 0;
        for (int k = 0; k < PLC_INSTR_BUFS; k++) bytes += buf_bytes(g, in->buf[k]);
        return launch + plc_cost_memory_bound(hw, bytes);
    }
    }
}

/* ---- the writer ----------------------------------------------------------------
 * Units (plc_trace_run_as with PLC_TRACE_UNITS) are gathered per rank and
 * written at the end: ranks whose units are identical (tensor- and
 * context-parallel peers usually are) share one track, named after all of
 * them, so the file grows with the distinct timelines, not the ranks. */

/* a unit: consecutive events of one rank's stream of one micro-batch and
 * phase (a micro-batch's data load counts as its forward) */
typedef struct unit {
    int open;
    int stream;
    plc_phase phase;
    int32_t micro, lo, hi; /* layers seen, -1 none */
    uint32_t first, count;
    double t0, t1;
} unit;

typedef struct rank_units {
    unit *v;
    size_t n, cap;
    uint64_t hash; /* of the sequence, to find identical ranks quickly */
} rank_units;

/* ---- overlap: communication under compute, and exposed ---------------------
 * Each rank's communication (collectives and messages, on either stream) is
 * split after the simulation against the rank's compute-stream busy time
 * (every op but communication): the parts under compute are overlapped, the
 * rest exposed, time in which the rank communicates and computes nothing.
 * The exposed parts go on a third track, EXPOSED_TRACK, attributed to the
 * instruction whose transfer they are; where transfers overlap each other
 * the time counts once, for the one that started first. */
enum { STREAMS = 2, EXPOSED_TRACK = 2, TRACKS = 3 };

typedef struct span {
    double t0, t1;
    uint32_t instr;
} span;

typedef struct spans {
    span *v;
    size_t n, cap;
} spans;

/* appends [t0, t1); with merge, extends the last span instead when the new
 * one starts inside it (consecutive compute ops); -1 out of memory */
static int spans_add(spans *s, double t0, double t1, uint32_t instr, bool merge)
{
    if (merge && s->n && t0 >= s->v[s->n - 1].t0 && t0 <= s->v[s->n - 1].t1) {
        if (t1 > s->v[s->n - 1].t1) s->v[s->n - 1].t1 = t1;
        return 0;
    }
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 64;
        span *v = realloc(s->v, cap * sizeof *v);
        if (!v) return -1;
        s->v = v;
        s->cap = cap;
    }
    s->v[s->n++] = (span){t0, t1, instr};
    return 0;
}

static int span_order(const void *a, const void *b)
{
    const span *x = a, *y = b;
    return x->t0 < y->t0 ? -1 : x->t0 > y->t0 ? 1 : x->instr < y->instr ? -1 : x->instr > y->instr;
}

typedef struct writer {
    const plc_plan *p;
    FILE *out;
    plc_trace_summary *sum;
    int64_t *index_of_rank; /* world rank -> summary index (only for simulated ranks) */
    plc_ctrace ct;
    unit *open;         /* [ranks shown][track] the units being gathered when aggregating, else NULL */
    rank_units *done;   /* [ranks shown] finished units */
    spans *busy, *comm; /* [ranks shown] compute-stream busy time; communication, per instruction */
    int failed;         /* out of memory while gathering */
} writer;

static int unit_same(const unit *a, const unit *b)
{
    return a->stream == b->stream && a->phase == b->phase && a->micro == b->micro && a->lo == b->lo &&
           a->hi == b->hi && a->first == b->first && a->count == b->count && a->t0 == b->t0 && a->t1 == b->t1;
}

static uint64_t mix(uint64_t h, uint64_t v) { return (h ^ v) * 1099511628211ull; }

static void unit_flush(writer *w, int64_t k, unit *u)
{
    if (!u->open) return;
    u->open = 0;
    rank_units *r = &w->done[k];
    if (r->n == r->cap) {
        size_t cap = r->cap ? 2 * r->cap : 64;
        unit *v = realloc(r->v, cap * sizeof *v);
        if (!v) {
            w->failed = 1;
            return;
        }
        r->v = v;
        r->cap = cap;
    }
    r->v[r->n++] = *u;
    uint64_t bits[2];
    memcpy(&bits[0], &u->t0, sizeof bits[0]);
    memcpy(&bits[1], &u->t1, sizeof bits[1]);
    r->hash = mix(mix(mix(mix(r->hash ? r->hash : 14695981039346656037ull, (uint64_t)u->first), u->count),
                      bits[0]),
                  bits[1]);
}

/* adds instruction i (or, on EXPOSED_TRACK, its exposed part) to unit u of track */
static void unit_add(writer *w, int64_t k, unit *u, int stream, uint32_t i, const plc_instr *in, double start, double end)
{
    const int load_then_forward = u->phase == PLC_PHASE_DATA && in->phase == PLC_PHASE_FORWARD;
    if (u->open && u->micro == in->micro && load_then_forward) u->phase = PLC_PHASE_FORWARD;
    if (u->open && (u->phase != in->phase || u->micro != in->micro)) unit_flush(w, k, u);
    if (!u->open) *u = (unit){1, stream, in->phase, in->micro, -1, -1, i, 0, start, end};
    if (in->layer >= 0) {
        if (u->lo < 0 || in->layer < u->lo) u->lo = in->layer;
        if (in->layer > u->hi) u->hi = in->layer;
    }
    u->count++;
    if (start < u->t0) u->t0 = start;
    if (end > u->t1) u->t1 = end;
}

/* "fwd m5 L0-9": phase, micro-batch, layers */
static void unit_name(const writer *w, const unit *u, char *name, size_t len)
{
    const char *ph = plc_phase_name(u->phase);
    int n = snprintf(name, len, "%s", ph ? ph : "?");
    if (u->micro >= 0 && n > 0 && (size_t)n < len) n += snprintf(name + n, len - (size_t)n, " m%d", u->micro);
    if (u->lo >= 0 && n > 0 && (size_t)n < len) {
        if (u->lo == w->p->model.layers && u->hi == u->lo) snprintf(name + n, len - (size_t)n, " head");
        else if (u->hi == u->lo) snprintf(name + n, len - (size_t)n, " L%d", u->lo);
        else snprintf(name + n, len - (size_t)n, " L%d-%d", u->lo, u->hi);
    }
}

static int same_units(const rank_units *a, const rank_units *b)
{
    if (a->n != b->n || a->hash != b->hash) return 0;
    for (size_t i = 0; i < a->n; i++)
        if (!unit_same(&a->v[i], &b->v[i])) return 0;
    return 1;
}

/* every distinct timeline once, under the ranks that share it; -1 out of memory */
static int write_units(writer *w, int64_t n)
{
    int64_t *group = malloc((size_t)n * sizeof *group), *members = malloc((size_t)n * sizeof *members);
    if (!group || !members) {
        free(group);
        free(members);
        return -1;
    }
    for (int64_t k = 0; k < n; k++) {
        group[k] = k;
        for (int64_t j = 0; j < k; j++)
            if (group[j] == j && same_units(&w->done[j], &w->done[k])) {
                group[k] = j;
                break;
            }
    }
    for (int64_t k = 0; k < n; k++) {
        if (group[k] != k) continue;
        size_t m = 0;
        for (int64_t j = k; j < n; j++)
            if (group[j] == k) members[m++] = w->sum->world_rank[j];
        plc_ctrace_ranks(&w->ct, &w->p->layout, members, m);
        const rank_units *r = &w->done[k];
        for (size_t i = 0; i < r->n; i++) {
            char name[96];
            unit_name(w, &r->v[i], name, sizeof name);
            plc_ctrace_span(&w->ct, members[0], r->v[i].stream, name, r->v[i].first, r->v[i].count, r->v[i].t0,
                            r->v[i].t1);
        }
    }
    free(group);
    free(members);
    return 0;
}

static bool is_comm_op(plc_op op)
{
    return plc_op_comm(op) != PLC_COMM_NONE;
}

static void on_event(void *ctx, int64_t rank, int64_t stage, uint32_t i, const plc_instr *in, double start, double end)
{
    (void)stage;
    writer *w = ctx;
    int64_t k = w->index_of_rank[rank];
    if (in->stream == PLC_STREAM_COMM) w->sum->comm_s[k] += end - start;
    else if (!is_comm_op(in->op)) w->sum->busy_s[k] += end - start;
    w->sum->instrs++;
    if (end > start && (is_comm_op(in->op) ? spans_add(&w->comm[k], start, end, i, false)
                        : in->stream != PLC_STREAM_COMM ? spans_add(&w->busy[k], start, end, i, true) : 0))
        w->failed = 1;
    if (!w->out || end <= start) return;
    int stream = in->stream == PLC_STREAM_COMM;
    if (w->open) unit_add(w, k, &w->open[TRACKS * k + stream], stream, i, in, start, end);
    else plc_ctrace_instr(&w->ct, rank, i, in, start, end, -1);
}

/* exposed part [a, b) of instruction i of rank k (summary index) */
static void exposed_piece(writer *w, int64_t k, uint32_t i, double a, double b)
{
    w->sum->exposed_s[k] += b - a;
    if (!w->out) return;
    int64_t rank = w->sum->world_rank[k];
    int64_t stage = plc_rank_to_coords(&w->p->layout, rank).pp;
    const plc_instr *in = &w->p->programs[w->p->stage_program[stage]].instrs[i];
    if (w->open) {
        unit_add(w, k, &w->open[TRACKS * k + EXPOSED_TRACK], EXPOSED_TRACK, i, in, a, b);
    } else {
        const char *op = plc_op_name(in->op);
        char name[48];
        snprintf(name, sizeof name, "exposed %s", op ? op : "?");
        plc_ctrace_span(&w->ct, rank, EXPOSED_TRACK, name, i, 1, a, b);
    }
}

/* splits rank k's communication against its busy time, in time order */
static void split_exposed(writer *w, int64_t k)
{
    spans *busy = &w->busy[k], *comm = &w->comm[k];
    if (busy->n) qsort(busy->v, busy->n, sizeof *busy->v, span_order);
    if (comm->n) qsort(comm->v, comm->n, sizeof *comm->v, span_order);
    double covered = -1e300; /* communication time up to here is counted */
    size_t j = 0;            /* first busy span that may end after the cursor */
    for (size_t c = 0; c < comm->n; c++) {
        double a = comm->v[c].t0 > covered ? comm->v[c].t0 : covered, b = comm->v[c].t1;
        if (b <= a) continue;
        w->sum->comm_union_s[k] += b - a;
        covered = b;
        while (j < busy->n && busy->v[j].t1 <= a) j++;
        for (size_t q = j; a < b; q++) {
            double bs = q < busy->n ? busy->v[q].t0 : b, be = q < busy->n ? busy->v[q].t1 : b;
            if (bs > b) bs = b;
            if (bs > a) exposed_piece(w, k, comm->v[c].instr, a, bs);
            if (be > a) a = be;
            if (q >= busy->n) break;
        }
    }
}

void plc_trace_summary_free(plc_trace_summary *s)
{
    free(s->busy_s);
    free(s->comm_s);
    free(s->exposed_s);
    free(s->comm_union_s);
    free(s->world_rank);
    memset(s, 0, sizeof *s);
}

static int trace_run(const plc_plan *p, bool all_ranks, plc_trace_detail detail, plc_sim_cost_fn cost,
                     void *cost_ctx, FILE *out, plc_trace_summary *sum, char *err, size_t errlen);

int plc_trace_run(const plc_plan *p, bool all_ranks, plc_sim_cost_fn cost, void *cost_ctx, FILE *out,
                  plc_trace_summary *sum, char *err, size_t errlen)
{
    return trace_run(p, all_ranks, PLC_TRACE_INSTRS, cost, cost_ctx, out, sum, err, errlen);
}

int plc_trace_run_as(const plc_plan *p, bool all_ranks, plc_trace_detail detail, FILE *out, plc_trace_summary *sum,
                     char *err, size_t errlen)
{
    return trace_run(p, all_ranks, detail, NULL, NULL, out, sum, err, errlen);
}

static int trace_run(const plc_plan *p, bool all_ranks, plc_trace_detail detail, plc_sim_cost_fn cost,
                     void *cost_ctx, FILE *out, plc_trace_summary *sum, char *err, size_t errlen)
{
    memset(sum, 0, sizeof *sum);
    int64_t n = all_ranks ? p->world_size : p->layout.pp;
    sum->ranks = n;
    sum->busy_s = calloc((size_t)n, sizeof *sum->busy_s);
    sum->comm_s = calloc((size_t)n, sizeof *sum->comm_s);
    sum->exposed_s = calloc((size_t)n, sizeof *sum->exposed_s);
    sum->comm_union_s = calloc((size_t)n, sizeof *sum->comm_union_s);
    sum->world_rank = calloc((size_t)n, sizeof *sum->world_rank);
    writer w = {p,    out,  sum, calloc((size_t)p->world_size, sizeof(int64_t)), {0}, NULL, NULL,
                calloc((size_t)n, sizeof(spans)), calloc((size_t)n, sizeof(spans)), 0};
    if (detail == PLC_TRACE_UNITS && out) {
        w.open = calloc(TRACKS * (size_t)n, sizeof *w.open);
        w.done = calloc((size_t)n, sizeof *w.done);
        if (!w.open || !w.done) {
            free(w.open);
            free(w.done);
            snprintf(err, errlen, "out of memory");
            free(w.index_of_rank);
            plc_trace_summary_free(sum);
            return -1;
        }
    }
    plc_trace_cost_ctx *own = NULL;
    int rc = -1;
    if (!sum->busy_s || !sum->comm_s || !sum->exposed_s || !sum->comm_union_s || !sum->world_rank ||
        !w.index_of_rank || !w.busy || !w.comm) {
        snprintf(err, errlen, "out of memory");
        goto done;
    }
    for (int64_t k = 0; k < n; k++) {
        int64_t r = all_ranks ? k : plc_coords_to_rank(&p->layout, (plc_rank_coords){0, 0, 0, k});
        sum->world_rank[k] = r;
        w.index_of_rank[r] = k;
    }
    if (!cost) {
        own = plc_trace_cost_ctx_new(p);
        if (!own) {
            snprintf(err, errlen, "out of memory");
            goto done;
        }
        cost = plc_trace_cost;
        cost_ctx = own;
    }
    if (out) {
        plc_ctrace_begin(&w.ct, out, "plc trace", p->world_size, n);
        w.ct.exposed_track = 1;
        for (int64_t k = 0; !w.open && k < n; k++) plc_ctrace_ranks(&w.ct, &p->layout, &sum->world_rank[k], 1);
    }
    plc_sim_opts o = {all_ranks, cost, cost_ctx, on_event, &w};
    plc_sim_result res;
    if (plc_sim_run(p, &o, &res, err, errlen)) goto done;
    sum->step_time_s = res.end_time;
    for (int64_t k = 0; w.open && k < n; k++)
        for (int st = 0; st < STREAMS; st++) unit_flush(&w, k, &w.open[TRACKS * k + st]);
    for (int64_t k = 0; !w.failed && k < n; k++) {
        split_exposed(&w, k);
        if (w.open) unit_flush(&w, k, &w.open[TRACKS * k + EXPOSED_TRACK]);
    }
    if (w.failed || (w.open && write_units(&w, n))) {
        snprintf(err, errlen, "out of memory while gathering the trace's units");
        goto done;
    }
    if (out) {
        plc_ctrace_end(&w.ct);
        sum->events = w.ct.events;
    }
    rc = 0;
done:
    plc_trace_cost_ctx_free(own);
    for (int64_t k = 0; w.done && k < n; k++) free(w.done[k].v);
    for (int64_t k = 0; w.busy && w.comm && k < n; k++) {
        free(w.busy[k].v);
        free(w.comm[k].v);
    }
    free(w.busy);
    free(w.comm);
    free(w.done);
    free(w.open);
    free(w.index_of_rank);
    if (rc) plc_trace_summary_free(sum);
    return rc;
}
