/* executor.c: the step loop of plrun, shared by every backend. See executor.h. */
#include "runtime/executor.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/errmsg.h"
#include "common/lr_schedule.h"
#include "common/tensors.h"
#include "kernels/kernels.h"
#include "runtime/data.h"
#include "runtime/init.h"
#include "runtime/shard.h"
#include "runtime/step_graph.h"

struct plc_executor {
    const plc_plan *plan;
    const plc_program *prog;
    int prog_id;
    plc_comm *comm;
    plc_backend *be;
    plc_rank_coords co;
    void *arena;
    void **ptr;              /* per buffer: its address in the arena */
    int64_t step;            /* the next step to run (0-based) */
    plc_lr_schedule lr;
    const plc_data *data;
    int32_t *host_tok, *host_tgt; /* a micro-batch, and two CP chunks of it */
    int32_t *chunk_tok, *chunk_tgt;
    int64_t host_cap;
    int64_t t_local;         /* tokens of a sequence on this rank (seq_len / cp) */
    int32_t *pos_local_host; /* absolute positions of this rank's tokens (cp > 1) */
    int32_t *pos_local, *pos_gathered; /* the same in backend memory; NULL when cp = 1 */
    int32_t *pos_rows;       /* backend memory: the position of each row of a micro-batch (POS_FWD/BWD) */
    int64_t pos_rows_n;
    uint8_t *pending;        /* per instruction: a started, unwaited transfer */
    double *issued;          /* per instruction: when it was started (trace) */
    plc_trace *trace;
    float *cp_scratch;       /* context-parallel attention over B > 1: one sequence's K/V */
    size_t cp_scratch_bytes;
    int fault_op;            /* PLC_FAULT_SKIP: op to skip (-1 none) ... */
    const char *fault_group; /* ... on the group of this name */
    int watch_scalars;       /* check XENT_LOSS / SUMSQ sums after each (host memory) */
    int64_t bad_instr;       /* the first instruction of this step whose sum is not finite, -1 */
    char nonfinite[320];     /* this rank's description of a non-finite step, "" when none */
    uint8_t *folded;         /* per instruction: a ZERO folded into a later op (ZERO folding) */
    uint8_t *fresh;          /* per instruction: its outputs that start from zero (backend.h) */
    plc_step_segments graph; /* step graphs: the segments (n = 0: none) ... */
    void **graphs;           /* ... and each one's graph once captured */
    int32_t **staged;        /* with graphs, per DATA_LOAD: its tokens then targets, uploaded at the step's start */
    int64_t steps_run;       /* steps this executor ran (the first is the warm-up) */
    int loss_owner;          /* this rank's loss sum counts for the job */
    int64_t moe_dropped;     /* token copies this rank's MoE routers dropped this step */
    int gnorm_owner;         /* this rank reports the gradient norm */
};

/* ---- positions for context parallelism -----------------------------------
 * The sequence is cut into 2 cp chunks; cp rank c holds chunks c and
 * 2 cp - 1 - c. The all-gathered K/V hold every rank's pair in rank order. */
static void cp_positions(int32_t *out, int64_t seq_len, int64_t cp, int64_t c)
{
    int64_t chunk = seq_len / (2 * cp);
    for (int64_t j = 0; j < chunk; j++) {
        out[j] = (int32_t)(c * chunk + j);
        out[chunk + j] = (int32_t)((2 * cp - 1 - c) * chunk + j);
    }
}

/* learned positions: row r of a micro-batch [B * t_local rows] is token
 * r % t_local of its sequence, at absolute position pos_local_host[r % t_local] */
static int setup_row_positions(plc_executor *x, char *err, size_t errlen)
{
    if (x->plan->model.positions != PLC_POS_LEARNED) return 0;
    x->pos_rows_n = x->plan->layout.micro_batch * x->t_local;
    int32_t *host = malloc((size_t)x->pos_rows_n * sizeof(int32_t));
    if (!host) return plc_fail(err, errlen, "out of memory");
    for (int64_t r = 0; r < x->pos_rows_n; r++) host[r] = x->pos_local_host[r % x->t_local];
    plc_backend *be = x->be;
    x->pos_rows = be->ops->aux_alloc(be, (size_t)x->pos_rows_n * sizeof(int32_t));
    int rc = 0;
    if (!x->pos_rows || be->ops->upload(be, x->pos_rows, host, (size_t)x->pos_rows_n * sizeof(int32_t)))
        rc = plc_fail(err, errlen, "positions: %s", be->error);
    free(host);
    return rc;
}

static int setup_positions(plc_executor *x, char *err, size_t errlen)
{
    const int64_t S = x->plan->model.seq_len, cp = x->plan->layout.cp;
    x->t_local = S / cp;
    x->pos_local_host = malloc((size_t)x->t_local * sizeof(int32_t));
    if (!x->pos_local_host) return plc_fail(err, errlen, "out of memory");
    if (cp == 1) {
        for (int64_t j = 0; j < S; j++) x->pos_local_host[j] = (int32_t)j;
        return setup_row_positions(x, err, errlen); /* other kernels take NULL for 0..T-1 */
    }
    if (S % (2 * cp))
        return plc_fail(err, errlen, "seq_len %lld is not a multiple of 2 cp = %lld", (long long)S,
                        (long long)(2 * cp));
    int32_t *gathered = malloc((size_t)S * sizeof(int32_t));
    if (!gathered) return plc_fail(err, errlen, "out of memory");
    cp_positions(x->pos_local_host, S, cp, x->co.cp);
    for (int64_t c = 0; c < cp; c++) cp_positions(gathered + c * x->t_local, S, cp, c);
    plc_backend *be = x->be;
    x->pos_local = be->ops->aux_alloc(be, (size_t)x->t_local * sizeof(int32_t));
    x->pos_gathered = be->ops->aux_alloc(be, (size_t)S * sizeof(int32_t));
    int rc = 0;
    if (!x->pos_local || !x->pos_gathered ||
        be->ops->upload(be, x->pos_local, x->pos_local_host, (size_t)x->t_local * sizeof(int32_t)) ||
        be->ops->upload(be, x->pos_gathered, gathered, (size_t)S * sizeof(int32_t)))
        rc = plc_fail(err, errlen, "positions: %s", be->error);
    free(gathered);
    return rc ? rc : setup_row_positions(x, err, errlen);
}

/* ---- ZERO folding ----------------------------------------------------------
 * With a backend that folds zeros (backend.h), a ZERO is skipped when the
 * next instruction that touches its bytes is an op that writes the whole
 * buffer: one that writes it anyway (XENT_LOSS's gradient of an unpadded
 * shard), or one that adds into it and is then called with its fresh bits
 * set (it writes 0 + its sum: the same bits). An op with several such
 * outputs (SWIGLU_BWD) folds all of their ZEROs or none. Decided
 * once, from the program, when the executor is created. */

/* elements that output slot k of `in` receives when the op can take it
 * from zero (*adds = 1: it adds into it; 0: it writes it whole), else -1 */
static int64_t fold_extent(const plc_executor *x, const plc_instr *in, int k, int *adds)
{
    const int64_t *a = in->arg;
    *adds = 1;
    switch (in->op) {
    case PLC_OP_RMSNORM_BWD:
        return k == 0 ? a[0] * a[1] : -1;
    case PLC_OP_ROPE_BWD:
        return k == 0 ? a[0] * a[1] * a[2] * a[3] : -1;
    case PLC_OP_SWIGLU_BWD:
        return k <= 1 ? a[0] : -1;
    case PLC_OP_XENT_LOSS: { /* a padded shard's columns past the vocabulary stay as they are */
        int64_t vs = a[2] ? x->co.tp * a[1] : 0;
        *adds = 0;
        return k == 0 && x->plan->model.vocab - vs >= a[1] ? a[0] * a[1] : -1;
    }
    default:
        return -1;
    }
}

static unsigned fold_all_outputs(plc_op op)
{
    return op == PLC_OP_SWIGLU_BWD ? 3u : 1u;
}

static int bytes_overlap(const plc_buffer *u, const plc_buffer *v)
{
    return u->offset < v->offset + v->bytes && v->offset < u->offset + u->bytes;
}

static int is_comm_op(plc_op op);

static int fold_zeros(plc_executor *x)
{
    const plc_program *p = x->prog;
    const size_t n = p->ninstrs ? p->ninstrs : 1;
    x->folded = calloc(n, 1);
    x->fresh = calloc(n, 1);
    int32_t *into = malloc(n * sizeof *into); /* per ZERO: the op it folds into, -1 */
    uint8_t *cand = calloc(n, 1);             /* per op: its outputs with a foldable ZERO */
    int rc = x->folded && x->fresh && into && cand ? 0 : -1;
    for (uint32_t z = 0; !rc && x->be->folds_zero && z < p->ninstrs; z++) {
        const plc_instr *zi = &p->instrs[z];
        into[z] = -1;
        if (zi->op != PLC_OP_ZERO || p->buffers[zi->buf[0]].dtype != PLC_F32) continue;
        const plc_buffer *b = &p->buffers[zi->buf[0]];
        for (uint32_t c = z + 1; c < p->ninstrs; c++) {
            const plc_instr *in = &p->instrs[c];
            int slot = -1, other = 0;
            for (int k = 0; k < PLC_INSTR_BUFS; k++) {
                if (in->buf[k] < 0) continue;
                if (in->buf[k] == zi->buf[0] && slot < 0) slot = k;
                else if (bytes_overlap(&p->buffers[in->buf[k]], b)) other = 1;
            }
            if (slot < 0 && !other) continue;
            int adds = 0;
            int64_t elems = slot >= 0 && !other && !is_comm_op(in->op) ? fold_extent(x, in, slot, &adds) : -1;
            if (elems >= 0 && (uint64_t)elems * sizeof(float) == b->bytes) {
                into[z] = (int32_t)c;
                if (adds) cand[c] |= (uint8_t)(1u << slot);
            }
            break; /* only the first instruction touching the bytes decides */
        }
    }
    for (uint32_t z = 0; !rc && x->be->folds_zero && z < p->ninstrs; z++) {
        if (into[z] < 0) continue;
        const plc_instr *c = &p->instrs[into[z]];
        int adds = 0;
        fold_extent(x, c, 0, &adds);
        if (adds && cand[into[z]] != fold_all_outputs(c->op)) continue;
        x->folded[z] = 1;
        x->fresh[into[z]] = adds ? cand[into[z]] : 0;
    }
    free(into);
    free(cand);
    return rc;
}

/* ---- creation ------------------------------------------------------------- */

/* Fault injection for the equivalence test's negative check:
 * PLC_FAULT_SKIP=OP@GROUP (e.g. ALLREDUCE@tp) skips every such instruction,
 * so a test can show that a wrong lowering changes the loss curve. */
static int parse_fault(plc_executor *x, char *err, size_t errlen)
{
    x->fault_op = -1;
    const char *f = getenv("PLC_FAULT_SKIP");
    if (!f || !*f) return 0;
    const char *at = strchr(f, '@');
    if (!at) return plc_fail(err, errlen, "PLC_FAULT_SKIP=%s: expected OP@GROUP, e.g. ALLREDUCE@tp", f);
    for (int op = 0; op < PLC_OP_COUNT; op++) {
        const char *name = plc_op_name((plc_op)op);
        if (name && strlen(name) == (size_t)(at - f) && strncmp(name, f, (size_t)(at - f)) == 0) x->fault_op = op;
    }
    if (x->fault_op < 0) return plc_fail(err, errlen, "PLC_FAULT_SKIP=%s: unknown op", f);
    x->fault_group = at + 1;
    return 0;
}

static int faulted(const plc_executor *x, const plc_instr *in)
{
    if (x->fault_op < 0 || (int)in->op != x->fault_op || in->group < 0) return 0;
    const char *g = x->plan->groups[in->group].name;
    return g && strcmp(g, x->fault_group) == 0;
}

static int program_of_rank(const plc_plan *plan, int64_t rank)
{
    plc_rank_coords co = plc_rank_to_coords(&plan->layout, rank);
    return plan->stage_program[co.pp];
}

int plc_exec_create(plc_executor **out, const plc_plan *plan, plc_comm *comm, plc_backend *be,
                    const plc_data *data, char *err, size_t errlen)
{
    *out = NULL;
    plc_executor *x = calloc(1, sizeof *x);
    if (!x) return plc_fail(err, errlen, "out of memory");
    x->plan = plan;
    x->comm = comm;
    x->be = be;
    x->co = plc_rank_to_coords(&plan->layout, comm->rank);
    x->data = data;
    x->lr = plc_lr_schedule_from_train(&plan->train);
    x->prog_id = plan->stage_program[x->co.pp];
    if (x->prog_id < 0 || (uint32_t)x->prog_id >= plan->nprograms) {
        long long stage = (long long)x->co.pp;
        free(x);
        return plc_fail(err, errlen, "pipeline stage %lld has no program", stage);
    }
    x->prog = &plan->programs[x->prog_id];
    x->watch_scalars = strcmp(be->ops->name, "cpu") == 0; /* its buffers are host memory */
    *out = x;
    if (parse_fault(x, err, errlen)) return -1;

    if (plc_exec_check_program(plan, x->prog, comm, err, errlen)) return -1;
    for (uint32_t i = 0; i < x->prog->ninstrs && !be->ops->moe_route; i++)
        if (x->prog->instrs[i].op >= PLC_OP_MOE_ROUTE && x->prog->instrs[i].op <= PLC_OP_MOE_SEQ_COUNTS)
            return plc_fail(err, errlen,
                            "rank %d: the plan has mixture-of-experts layers, which the %s backend does not run: "
                            "run it with --backend cpu", comm->rank, be->ops->name);

    /* which ranks report: each token's loss is counted by tensor-parallel
     * rank 0 only (its shards all hold the same loss); the gradient norm by
     * the lowest rank whose program computes it */
    x->loss_owner = x->co.tp == 0 && x->prog->loss_buf >= 0;
    x->gnorm_owner = 0;
    for (int64_t r = 0; r < plan->world_size; r++)
        if (plan->programs[program_of_rank(plan, r)].gnorm_buf >= 0) {
            x->gnorm_owner = r == comm->rank;
            break;
        }

    x->arena = be->ops->arena_alloc(be, x->prog->arena_bytes);
    if (!x->arena) return plc_fail(err, errlen, "rank %d: %s", comm->rank, be->error);
    x->ptr = calloc(x->prog->nbuffers ? x->prog->nbuffers : 1, sizeof *x->ptr);
    x->pending = calloc(x->prog->ninstrs ? x->prog->ninstrs : 1, 1);
    x->issued = calloc(x->prog->ninstrs ? x->prog->ninstrs : 1, sizeof *x->issued);
    if (!x->ptr || !x->pending || !x->issued || fold_zeros(x)) return plc_fail(err, errlen, "out of memory");
    for (uint32_t b = 0; b < x->prog->nbuffers; b++)
        x->ptr[b] = (char *)x->arena + x->prog->buffers[b].offset;
    return setup_positions(x, err, errlen);
}

void plc_exec_destroy(plc_executor *x)
{
    if (!x) return;
    if (x->arena) x->be->ops->arena_free(x->be, x->arena);
    if (x->pos_local) x->be->ops->aux_free(x->be, x->pos_local);
    if (x->pos_gathered) x->be->ops->aux_free(x->be, x->pos_gathered);
    if (x->pos_rows) x->be->ops->aux_free(x->be, x->pos_rows);
    if (x->cp_scratch) x->be->ops->aux_free(x->be, x->cp_scratch);
    free(x->pos_local_host);
    free(x->ptr);
    free(x->folded);
    free(x->fresh);
    for (uint32_t g = 0; x->graphs && g < x->graph.n; g++)
        if (x->graphs[g]) x->be->ops->graph_free(x->be, x->graphs[g]);
    free(x->graphs);
    for (uint32_t i = 0; x->staged && i < x->prog->ninstrs; i++)
        if (x->staged[i]) x->be->ops->aux_free(x->be, x->staged[i]);
    free(x->staged);
    plc_step_segments_free(&x->graph);
    free(x->pending);
    free(x->issued);
    free(x->chunk_tok);
    free(x->chunk_tgt);
    free(x->host_tok);
    free(x->host_tgt);
    free(x);
}

int64_t plc_exec_next_step(const plc_executor *x) { return x->step; }
const char *plc_exec_nonfinite(const plc_executor *x) { return x->nonfinite; }
void plc_exec_set_next_step(plc_executor *x, int64_t step) { x->step = step; }
const plc_program *plc_exec_program(const plc_executor *x) { return x->prog; }
int plc_exec_program_id(const plc_executor *x) { return x->prog_id; }
void *plc_exec_buffer(const plc_executor *x, int32_t id)
{
    return id >= 0 && (uint32_t)id < x->prog->nbuffers ? x->ptr[id] : NULL;
}
plc_backend *plc_exec_backend(const plc_executor *x) { return x->be; }
void plc_exec_set_trace(plc_executor *x, plc_trace *tr) { x->trace = tr; }

int plc_exec_set_graphs(plc_executor *x, int on, char *mode, size_t len, char *err, size_t errlen)
{
    const plc_backend_ops *o = x->be->ops;
    if (!on || !o->graph_begin) {
        snprintf(mode, len, "%s", !o->graph_begin ? "eager (no step graphs on this backend)" : "eager (--no-graph)");
        return 0;
    }
    if (x->fault_op >= 0) {
        snprintf(mode, len, "eager (PLC_FAULT_SKIP)");
        return 0;
    }
    /* every DATA_LOAD's batch goes to a staging buffer of its own at the
     * step's start, and the instruction copies it in: no break in the graphs */
    x->staged = calloc(x->prog->ninstrs ? x->prog->ninstrs : 1, sizeof *x->staged);
    if (!x->staged) return plc_fail(err, errlen, "out of memory");
    for (uint32_t i = 0; i < x->prog->ninstrs; i++) {
        const plc_instr *in = &x->prog->instrs[i];
        if (in->op != PLC_OP_DATA_LOAD) continue;
        x->staged[i] = x->be->ops->aux_alloc(x->be, (size_t)(2 * in->arg[1] * in->arg[2]) * sizeof(int32_t));
        if (!x->staged[i]) return plc_fail(err, errlen, "the micro-batches' staging: %s", x->be->error);
    }
    unsigned caps = PLC_GRAPH_DATA_STAGED | (x->be->graph_comm ? PLC_GRAPH_COMM : 0);
    if (plc_step_graph_plan(x->prog, caps, PLC_STEP_GRAPH_MIN_RUN, &x->graph))
        return plc_fail(err, errlen, "out of memory");
    x->graphs = calloc(x->graph.n ? x->graph.n : 1, sizeof *x->graphs);
    if (!x->graphs) return plc_fail(err, errlen, "out of memory");
    snprintf(mode, len, "%u graph%s over %u of %u instructions, captured after the warm-up step; transfers %s",
             x->graph.n, x->graph.n == 1 ? "" : "s", x->graph.captured, x->prog->ninstrs,
             x->be->graph_comm ? "inside them" : "eager (NCCL < 2.9)");
    return 0;
}

/* ---- initialisation --------------------------------------------------------- */
/* Weights are generated run by run (shard.h) and never exist whole on the
 * host: a host arena's fp32 buffers are written in place, anything else
 * goes through a staging chunk. On a host arena the chunk is small, so
 * initialisation adds nothing to a rank's measured peak beyond the arena;
 * a device arena's chunk is large (host memory the plan does not count), so
 * that each upload moves megabytes. The runs are a row each (a few thousand
 * elements), so they are queued as pieces and generated together, one
 * piece a thread: every element depends on its index alone, so the values
 * are the same on any number of threads. */
enum {
    INIT_CHUNK_HOST = 4096,       /* elements per staged copy into a host arena */
    INIT_CHUNK_DEVICE = 1 << 20,  /* elements per upload to a device arena */
    INIT_PIECE = 1 << 14,         /* elements one thread generates at a time */
    INIT_PIECES = 1024,           /* pieces queued before they are generated */
};

typedef struct init_piece {
    float *dst;     /* where the piece goes: the staging chunk or the arena */
    int64_t global; /* its first element in the whole tensor */
    int64_t n;
} init_piece;

typedef struct init_ctx {
    plc_backend *be;
    void *dst;               /* the buffer in the arena */
    plc_dtype dtype;
    uint64_t seed;
    int32_t tensor;
    double std;
    plc_init_kind kind;
    int direct;              /* write straight into dst (host memory, fp32) */
    int64_t start, fill;     /* the staged elements: local offset, count */
    int64_t cap;             /* elements the staging chunk holds */
    float *stage;
    uint16_t *half;
    init_piece *piece;       /* queued, not yet generated */
    int npieces;
    int rc;
} init_ctx;

/* generates the queued pieces */
static void init_generate(init_ctx *c)
{
    const init_piece *pc = c->piece;
#pragma omp parallel for schedule(dynamic) if (c->npieces > 1)
    for (int i = 0; i < c->npieces; i++) plc_init_range(pc[i].dst, c->seed, c->tensor, pc[i].global, pc[i].n, c->std, c->kind);
    c->npieces = 0;
}

static void init_flush(init_ctx *c)
{
    init_generate(c);
    if (c->fill && !c->rc) {
        const size_t es = plc_dtype_size(c->dtype);
        const void *src = c->stage;
        if (c->dtype == PLC_BF16) { /* round to nearest even, as the master copy's values */
            plc_k_cast_f32_to_bf16(c->half, c->stage, c->fill);
            src = c->half;
        }
        if (c->be->ops->upload(c->be, (char *)c->dst + (size_t)c->start * es, src, (size_t)c->fill * es))
            c->rc = -1;
    }
    c->fill = 0;
}

/* queues elements global .. global+n-1 of the tensor for dst, in pieces */
static void init_queue(init_ctx *c, float *dst, int64_t global, int64_t n)
{
    for (int64_t done = 0; done < n;) {
        if (c->npieces == INIT_PIECES) init_generate(c);
        int64_t k = n - done < INIT_PIECE ? n - done : INIT_PIECE;
        c->piece[c->npieces++] = (init_piece){dst + done, global + done, k};
        done += k;
    }
}

static void init_run(void *ctx, int64_t local, int64_t global, int64_t n)
{
    init_ctx *c = ctx;
    if (c->direct) {
        init_queue(c, (float *)c->dst + local, global, n);
        return;
    }
    while (n > 0) {
        if (c->fill && (local != c->start + c->fill || c->fill == c->cap)) init_flush(c);
        if (!c->fill) c->start = local;
        int64_t k = c->cap - c->fill < n ? c->cap - c->fill : n;
        init_queue(c, c->stage + c->fill, global, k);
        c->fill += k;
        local += k;
        global += k;
        n -= k;
    }
}

static int init_buffers(plc_executor *x, init_ctx *cp, char *err, size_t errlen)
{
    const plc_plan *plan = x->plan;
    plc_backend *be = x->be;
    init_ctx c = *cp;
    for (uint32_t b = 0; b < x->prog->nbuffers; b++) {
        const plc_buffer *buf = &x->prog->buffers[b];
        if ((buf->kind != PLC_BUF_PARAM && buf->kind != PLC_BUF_MASTER) || buf->tensor < 0) continue;
        plc_tensor_info ti;
        if (!plc_tensor_get(&plan->model, buf->tensor, &ti))
            return plc_fail(err, errlen, "buffer '%s' names tensor %d, which the model does not have",
                            buf->name ? buf->name : "?", buf->tensor);
        plc_shard_region r;
        if (plc_shard_region_of(buf, &plan->layout, x->co, ti.shape[0], ti.shape[1], &r, err, errlen))
            return -1;
        if (buf->dtype != PLC_F32 && buf->dtype != PLC_BF16)
            return plc_fail(err, errlen, "buffer '%s': initialising %s parameters is not supported",
                            buf->name ? buf->name : "?", plc_dtype_name(buf->dtype));
        /* the padding stays as the arena was created: zero */
        c.dst = x->ptr[b];
        c.dtype = buf->dtype;
        c.tensor = buf->tensor;
        c.std = ti.init_std;
        c.kind = ti.init;
        c.direct = x->watch_scalars && buf->dtype == PLC_F32; /* host memory */
        plc_shard_each_run(&r, ti.shape[1], init_run, &c);
        init_flush(&c);
        if (c.rc) return plc_fail(err, errlen, "rank %d: %s", x->comm->rank, be->error);
    }
    return be->ops->synchronize(be) ? plc_fail(err, errlen, "%s", be->error) : 0;
}

int plc_exec_init_weights(plc_executor *x, char *err, size_t errlen)
{
    init_ctx c;
    memset(&c, 0, sizeof c);
    c.be = x->be;
    c.seed = x->plan->train.seed;
    c.cap = x->watch_scalars ? INIT_CHUNK_HOST : INIT_CHUNK_DEVICE; /* watch_scalars: a host arena */
    c.stage = malloc((size_t)c.cap * sizeof *c.stage);
    c.half = malloc((size_t)c.cap * sizeof *c.half);
    c.piece = malloc(INIT_PIECES * sizeof *c.piece);
    int rc = c.stage && c.half && c.piece
                 ? init_buffers(x, &c, err, errlen)
                 : plc_fail(err, errlen, "rank %d: out of host memory for the weights' staging chunk", x->comm->rank);
    free(c.stage);
    free(c.half);
    free(c.piece);
    return rc;
}

/* ---- the step --------------------------------------------------------------- */

/* DATA_LOAD: samples j0 .. j0+mb-1 of the step (j0 from the data-parallel
 * rank and the micro-batch), positions of this rank's context chunks */
static int load_micro_batch(plc_executor *x, const plc_instr *in, int32_t *dst_tok, int32_t *dst_tgt, char *err,
                            size_t errlen)
{
    const plc_plan *plan = x->plan;
    const int64_t mb = in->arg[1], T = in->arg[2], S = plan->model.seq_len, cp = plan->layout.cp;
    const int64_t rows = mb * T;
    if (rows > x->host_cap) {
        free(x->host_tok);
        free(x->host_tgt);
        free(x->chunk_tok);
        free(x->chunk_tgt);
        x->host_tok = malloc((size_t)rows * sizeof(int32_t));
        x->host_tgt = malloc((size_t)rows * sizeof(int32_t));
        x->chunk_tok = malloc((size_t)rows * sizeof(int32_t));
        x->chunk_tgt = malloc((size_t)rows * sizeof(int32_t));
        if (!x->host_tok || !x->host_tgt || !x->chunk_tok || !x->chunk_tgt)
            return plc_fail(err, errlen, "out of memory");
        x->host_cap = rows;
    }
    const int64_t gb = plan->train.global_batch, per_dp = gb / plan->layout.dp;
    const int64_t j0 = x->co.dp * per_dp + in->arg[0] * mb;
    if (cp == 1) {
        if (plc_data_fetch(x->data, x->step, gb, j0, mb, 0, S, x->host_tok, x->host_tgt, err, errlen))
            return -1;
    } else {
        /* chunks c and 2cp-1-c of every sequence, side by side */
        const int64_t chunk = S / (2 * cp);
        for (int half = 0; half < 2; half++) {
            int64_t c = half ? 2 * cp - 1 - x->co.cp : x->co.cp;
            if (plc_data_fetch(x->data, x->step, gb, j0, mb, c * chunk, chunk, x->chunk_tok,
                               x->chunk_tgt, err, errlen))
                return -1;
            for (int64_t i = 0; i < mb; i++) {
                memcpy(x->host_tok + i * T + half * chunk, x->chunk_tok + i * chunk, (size_t)chunk * sizeof(int32_t));
                memcpy(x->host_tgt + i * T + half * chunk, x->chunk_tgt + i * chunk, (size_t)chunk * sizeof(int32_t));
            }
        }
    }
    plc_backend *be = x->be;
    if (be->ops->upload(be, dst_tok, x->host_tok, (size_t)rows * sizeof(int32_t)) ||
        be->ops->upload(be, dst_tgt, x->host_tgt, (size_t)rows * sizeof(int32_t)))
        return plc_fail(err, errlen, "%s", be->error);
    return 0;
}

static int is_comm_op(plc_op op)
{
    return plc_op_comm(op) != PLC_COMM_NONE;
}

static int wait_for(plc_executor *x, int32_t idx)
{
    if (idx < 0 || !x->pending[idx]) return 0;
    if (x->be->ops->comm_wait(x->be, idx)) return -1;
    x->pending[idx] = 0;
    if (x->trace) plc_trace_record(x->trace, idx, (int32_t)x->step, x->issued[idx], plc_trace_now() - x->trace->origin);
    return 0;
}

static int start_comm(plc_executor *x, uint32_t i, const plc_instr *in)
{
    plc_comm_call call;
    memset(&call, 0, sizeof call);
    call.op = in->op;
    call.group = in->group;
    call.count = in->arg[0];
    call.dtype = x->prog->buffers[in->buf[0]].dtype;
    call.dst = x->ptr[in->buf[0]];
    if (in->op == PLC_OP_REDUCE_SCATTER || in->op == PLC_OP_ALLGATHER) call.src = x->ptr[in->buf[1]];
    call.reduce_max = in->op == PLC_OP_ALLREDUCE && in->arg[1] == 1;
    call.root = (int)in->arg[1];
    if (plc_op_comm(in->op) == PLC_COMM_PEER) {
        plc_rank_coords peer = x->co;
        peer.pp = in->peer;
        call.peer = (int)plc_coords_to_rank(&x->plan->layout, peer);
        /* a send and its receive carry the same micro-batch and direction */
        call.tag = (in->micro + 1) * 2 + (in->phase == PLC_PHASE_BACKWARD);
    }
    if (x->trace) x->issued[i] = plc_trace_now() - x->trace->origin;
    if (x->be->ops->comm_start(x->be, &call, (int)i)) return -1;
    x->pending[i] = 1;
    /* only the comm stream runs asynchronously */
    return in->stream == PLC_STREAM_COMM ? 0 : wait_for(x, (int32_t)i);
}

#define PTR(k) (in->buf[k] < 0 ? NULL : x->ptr[in->buf[k]])
#define FP(k) ((float *)PTR(k))
#define IP(k) ((const int32_t *)PTR(k))
#define DP(k) ((double *)PTR(k))
/* storage dtype of operand k (F32 or BF16 for compute operands; exec_check.c
 * checked that the operands stored "as dt" in backend.h agree) */
#define DT(k) (x->prog->buffers[in->buf[k]].dtype)

/* Cross-entropy over a shard of the padded vocabulary (docs/model.md): the
 * shard's columns at ids >= vocab are padding. Each row runs on its real
 * columns only, so padding takes no part in the max or the softmax sum, and
 * the padding columns of the logits' gradient are zeroed. Only the last
 * shards of a vocabulary tp does not divide get here. */
static int xent_padded(plc_executor *x, const plc_instr *in, int64_t vocab_start, int64_t real)
{
    plc_backend *be = x->be;
    const plc_backend_ops *o = be->ops;
    const int64_t rows = in->arg[0], vl = in->arg[1];
    const int il = in->op == PLC_OP_XENT_MAX ? 1 : 2;
    const size_t es = plc_dtype_size(DT(il));
#define ROW(k, r) ((char *)PTR(k) + (size_t)((r) * vl) * es)
    for (int64_t r = 0; r < rows; r++) {
        int rc = 0;
        switch (in->op) {
        case PLC_OP_XENT_MAX:
            rc = o->xent_max(be, FP(0) + r, ROW(1, r), DT(1), 1, real);
            break;
        case PLC_OP_XENT_SUMEXP:
            rc = o->xent_sumexp(be, FP(0) + r, FP(1) + r, ROW(2, r), DT(2), IP(3) + r, FP(4) + r, 1, real,
                                vocab_start);
            break;
        default: /* XENT_LOSS */
            rc = o->xent_loss(be, ROW(0, r), DP(1), ROW(2, r), DT(2), IP(3) + r, FP(4) + r, FP(5) + r, FP(6) + r,
                              1, real, vocab_start, (float)in->farg[0]) ||
                 o->zero(be, ROW(0, r) + (size_t)real * es, (size_t)(vl - real) * es);
            break;
        }
        if (rc) return -1;
    }
#undef ROW
    return 0;
}

/* Context-parallel attention over B > 1 sequences: the all-gathered K/V
 * (and dK/dV) are laid out [cp][B][T/cp][KV][hd], the kernels want one
 * sequence's keys contiguous. Each sequence's keys are gathered into
 * scratch, the kernel runs per sequence, and dK/dV are added back. Tensors
 * are addressed in bytes: their storage is dt (f32 or bf16); the
 * statistics are f32. */
static int attn_cp_batched(plc_executor *x, const plc_instr *in)
{
    plc_backend *be = x->be;
    const plc_backend_ops *o = be->ops;
    const int64_t *a = in->arg;
    const int64_t B = a[0], Tq = a[1], Tk = a[2], H = a[3], KV = a[4], hd = a[5];
    const int flash = (int)a[6], fwd = in->op == PLC_OP_ATTN_FWD;
    const plc_dtype dt = DT(0);
    const size_t es = plc_dtype_size(dt);
    const int64_t cp = Tk / Tq, piece = Tq * KV * hd, seq_k = Tk * KV * hd;
    const int64_t seq_q = Tq * H * hd, seq_s = flash ? H * Tq : H * Tq * Tk;
    const size_t need = (size_t)(fwd ? 2 : 4) * (size_t)seq_k * es;
    if (need > x->cp_scratch_bytes) {
        if (x->cp_scratch) o->aux_free(be, x->cp_scratch);
        x->cp_scratch = o->aux_alloc(be, need);
        x->cp_scratch_bytes = x->cp_scratch ? need : 0;
        if (!x->cp_scratch) return -1;
    }
#define AT(p, elems) ((char *)(p) + (size_t)(elems) * es)
    char *kb = (char *)x->cp_scratch, *vb = AT(kb, seq_k), *dkb = AT(vb, seq_k), *dvb = AT(dkb, seq_k);
    const int ik = fwd ? 3 : 5, iv = fwd ? 4 : 6;
    for (int64_t b = 0; b < B; b++) {
        for (int64_t c = 0; c < cp; c++) {
            int64_t src = (c * B + b) * piece;
            if (o->copy(be, AT(kb, c * piece), AT(PTR(ik), src), (size_t)piece * es) ||
                o->copy(be, AT(vb, c * piece), AT(PTR(iv), src), (size_t)piece * es))
                return -1;
        }
        if (fwd) {
            if (o->attn_fwd(be, flash, AT(PTR(0), b * seq_q), FP(1) + b * seq_s, AT(PTR(2), b * seq_q), kb,
                            vb, dt, x->pos_local, x->pos_gathered, 1, Tq, Tk, H, KV, hd))
                return -1;
            continue;
        }
        if (o->zero(be, dkb, (size_t)(2 * seq_k) * es) ||
            o->attn_bwd(be, flash, AT(PTR(0), b * seq_q), dkb, dvb, AT(PTR(3), b * seq_q),
                        AT(PTR(4), b * seq_q), kb, vb, AT(PTR(7), b * seq_q), FP(8) + b * seq_s, dt,
                        x->pos_local, x->pos_gathered, 1, Tq, Tk, H, KV, hd))
            return -1;
        for (int64_t c = 0; c < cp; c++) {
            int64_t dst = (c * B + b) * piece;
            if (o->accumulate(be, AT(PTR(1), dst), AT(dkb, c * piece), dt, piece) ||
                o->accumulate(be, AT(PTR(2), dst), AT(dvb, c * piece), dt, piece))
                return -1;
        }
    }
#undef AT
    return 0;
}

/* a mixture-of-experts op (plan.h's MOE_* rows; fp32 only) */
static int run_moe(plc_executor *x, const plc_instr *in)
{
    plc_backend *be = x->be;
    const plc_backend_ops *o = be->ops;
    const int64_t *a = in->arg;
    const float s0 = (float)in->farg[0];
    if (!o->moe_route)
        return plc_backend_fail(be, "the %s backend does not run mixture-of-experts ops (run it with --backend cpu)",
                                o->name);
    int64_t uncounted = 0;
    switch (in->op) {
    case PLC_OP_MOE_ROUTE:
        return o->moe_route(be, FP(0), (int32_t *)PTR(1), (int32_t *)PTR(2), FP(3), (int32_t *)PTR(4), FP(5), a[0],
                            a[1], a[2], (int)a[3], a[4], s0, a[6] ? &x->moe_dropped : &uncounted);
    case PLC_OP_MOE_ROUTE_BWD:
        return o->moe_route_bwd(be, FP(0), FP(1), FP(2), IP(3), FP(4), a[0], a[1], a[2], (int)a[3], a[4], a[5], s0,
                                (float)in->farg[1]);
    case PLC_OP_MOE_SEQ_COUNTS:
        return o->moe_seq_counts(be, FP(0), IP(1), a[0], a[1], a[2], a[3]);
    case PLC_OP_MOE_PERMUTE:
        return o->moe_permute(be, FP(0), FP(1), IP(2), a[0], a[1], a[2], a[3]);
    case PLC_OP_MOE_PERMUTE_BWD:
        return o->moe_permute_bwd(be, FP(0), FP(1), IP(2), a[0], a[1], a[2]);
    case PLC_OP_MOE_UNPERMUTE:
        return o->moe_unpermute(be, FP(0), FP(1), IP(2), FP(3), a[0], a[1], a[2]);
    case PLC_OP_MOE_UNPERMUTE_BWD:
        return o->moe_unpermute_bwd(be, FP(0), FP(1), FP(2), FP(3), IP(4), FP(5), a[0], a[1], a[2], a[3]);
    case PLC_OP_MOE_MM:
        return o->moe_matmul(be, FP(0), FP(1), FP(2), IP(3), a[0], a[1], a[2], a[3], (int)a[4], s0);
    case PLC_OP_MOE_MM_DW:
        return o->moe_matmul_dw(be, FP(0), FP(1), FP(2), IP(3), a[0], a[2], a[3]);
    default:
        return plc_backend_fail(be, "op %d is not a mixture-of-experts op", (int)in->op);
    }
}

static int run_compute(plc_executor *x, const plc_instr *in, char *err, size_t errlen)
{
    plc_backend *be = x->be;
    const plc_backend_ops *o = be->ops;
    const int64_t *a = in->arg;
    const plc_plan *plan = x->plan;
    const int64_t tp_rank = x->co.tp;
    const int cp = plan->layout.cp > 1;
    if (in->op == PLC_OP_XENT_MAX || in->op == PLC_OP_XENT_SUMEXP || in->op == PLC_OP_XENT_LOSS) {
        /* the real columns of this shard of the padded vocabulary (XENT_MAX
         * has no sharded flag: its shard is the same as the other two's) */
        int sharded = in->op == PLC_OP_XENT_MAX ? plan->layout.tp > 1 : a[2] != 0;
        int64_t vs = sharded ? tp_rank * a[1] : 0, real = plan->model.vocab - vs;
        if (real < a[1]) return xent_padded(x, in, vs, real < 0 ? 0 : real);
    }
    switch (in->op) {
    case PLC_OP_NOP:
    case PLC_OP_WAIT:
        return 0;
    case PLC_OP_ZERO: /* a folded one: its op starts from zero itself */
        if (x->folded[in - x->prog->instrs]) return 0;
        return o->zero(be, PTR(0), x->prog->buffers[in->buf[0]].bytes);
    case PLC_OP_COPY:
        return o->copy(be, PTR(0), PTR(1), x->prog->buffers[in->buf[1]].bytes);
    case PLC_OP_DATA_LOAD: {
        int32_t *staged = x->staged ? x->staged[in - x->prog->instrs] : NULL;
        if (staged) { /* uploaded at the step's start: a device copy, which a graph records */
            const size_t bytes = (size_t)(a[1] * a[2]) * sizeof(int32_t);
            return o->copy(be, PTR(0), staged, bytes) || o->copy(be, PTR(1), (char *)staged + bytes, bytes);
        }
        return load_micro_batch(x, in, (int32_t *)PTR(0), (int32_t *)PTR(1), err, errlen) ? 1 : 0;
    }
    case PLC_OP_EMBED_FWD:
        return o->embed_fwd(be, PTR(0), IP(1), PTR(2), DT(0), a[0], a[1], a[3] ? tp_rank * a[2] : 0, a[2]);
    case PLC_OP_EMBED_BWD:
        return o->embed_bwd(be, FP(0), PTR(2), DT(2), IP(1), a[0], a[1], a[3] ? tp_rank * a[2] : 0, a[2]);
    case PLC_OP_RMSNORM_FWD:
        return o->rmsnorm_fwd(be, PTR(0), FP(1), PTR(2), PTR(3), DT(0), a[0], a[1], (float)in->farg[0]);
    case PLC_OP_RMSNORM_BWD:
        return o->rmsnorm_bwd(be, PTR(0), FP(1), PTR(2), PTR(3), PTR(4), FP(5), DT(2), a[0], a[1]);
    case PLC_OP_MATMUL:
        return o->matmul(be, PTR(0), DT(0), PTR(1), PTR(2), DT(1), a[0], a[1], a[2], (int)a[3], (int)a[4],
                         (float)in->farg[0]);
    case PLC_OP_ROPE_FWD:
        return o->rope_fwd(be, PTR(0), PTR(1), DT(0), cp ? x->pos_local : NULL, a[0], a[1], a[2], a[3],
                           (float)in->farg[0]);
    case PLC_OP_ROPE_BWD:
        return o->rope_bwd(be, PTR(0), PTR(1), DT(0), cp ? x->pos_local : NULL, a[0], a[1], a[2], a[3],
                           (float)in->farg[0]);
    case PLC_OP_ATTN_FWD:
    case PLC_OP_ATTN_BWD: {
        const int32_t *qp = cp ? x->pos_local : NULL;
        const int32_t *kp = cp ? (a[2] == a[1] ? x->pos_local : x->pos_gathered) : NULL;
        if (a[2] != a[1] && a[0] > 1) return attn_cp_batched(x, in);
        if (in->op == PLC_OP_ATTN_FWD)
            return o->attn_fwd(be, (int)a[6], PTR(0), FP(1), PTR(2), PTR(3), PTR(4), DT(0), qp, kp, a[0],
                               a[1], a[2], a[3], a[4], a[5]);
        return o->attn_bwd(be, (int)a[6], PTR(0), PTR(1), PTR(2), PTR(3), PTR(4), PTR(5), PTR(6), PTR(7),
                           FP(8), DT(0), qp, kp, a[0], a[1], a[2], a[3], a[4], a[5]);
    }
    case PLC_OP_SWIGLU_FWD:
        return o->swiglu_fwd(be, PTR(0), PTR(1), PTR(2), DT(0), a[0]);
    case PLC_OP_SWIGLU_BWD:
        return o->swiglu_bwd(be, PTR(0), PTR(1), PTR(2), PTR(3), PTR(4), DT(0), a[0]);
    case PLC_OP_LAYERNORM_FWD:
        return o->layernorm_fwd(be, PTR(0), FP(1), FP(2), PTR(3), PTR(4), PTR(5), DT(0), a[0], a[1],
                                (float)in->farg[0]);
    case PLC_OP_LAYERNORM_BWD:
        return o->layernorm_bwd(be, PTR(0), FP(1), FP(2), PTR(3), PTR(4), PTR(5), FP(6), FP(7), DT(3), a[0], a[1]);
    case PLC_OP_BIAS_ADD:
        return o->bias_add(be, PTR(0), PTR(1), DT(0), a[0], a[1]);
    case PLC_OP_BIAS_BWD:
        return o->bias_bwd(be, FP(0), PTR(1), DT(1), a[0], a[1]);
    case PLC_OP_GELU_FWD:
        return o->gelu_fwd(be, PTR(0), PTR(1), DT(0), a[0]);
    case PLC_OP_GELU_BWD:
        return o->gelu_bwd(be, PTR(0), PTR(1), PTR(2), DT(0), a[0]);
    case PLC_OP_POS_FWD:
    case PLC_OP_POS_BWD: {
        /* the rows' positions: a sequence-parallel block starts tp_rank blocks in */
        int64_t row0 = a[2] ? tp_rank * a[0] : 0;
        if (!x->pos_rows || row0 + a[0] > x->pos_rows_n)
            return plc_backend_fail(be, "%lld rows from row %lld exceed the micro-batch's %lld positions",
                                    (long long)a[0], (long long)row0, (long long)x->pos_rows_n);
        if (in->op == PLC_OP_POS_FWD)
            return o->pos_fwd(be, PTR(0), PTR(1), DT(0), x->pos_rows + row0, a[0], a[1], plan->model.seq_len);
        return o->pos_bwd(be, FP(0), PTR(1), DT(1), x->pos_rows + row0, a[0], a[1]);
    }
    case PLC_OP_ADD:
        return o->add(be, PTR(0), PTR(1), PTR(2), DT(0), a[0]);
    case PLC_OP_ACCUMULATE:
        return o->accumulate(be, PTR(0), PTR(1), DT(0), a[0]);
    case PLC_OP_SCALE:
        return o->scale(be, PTR(0), (float)in->farg[0], DT(0), a[0]);
    case PLC_OP_XENT_MAX:
        return o->xent_max(be, FP(0), PTR(1), DT(1), a[0], a[1]);
    case PLC_OP_XENT_SUMEXP:
        return o->xent_sumexp(be, FP(0), FP(1), PTR(2), DT(2), IP(3), FP(4), a[0], a[1],
                              a[2] ? tp_rank * a[1] : 0);
    case PLC_OP_XENT_LOSS:
        return o->xent_loss(be, PTR(0), DP(1), PTR(2), DT(2), IP(3), FP(4), FP(5), FP(6), a[0], a[1],
                            a[2] ? tp_rank * a[1] : 0, (float)in->farg[0]);
    case PLC_OP_SUMSQ:
        return o->sumsq(be, DP(0), FP(1), a[0]);
    case PLC_OP_CLIP_SCALE:
        return o->clip_scale(be, FP(0), DP(1), in->farg[0]);
    case PLC_OP_ADAMW: {
        const plc_train *t = &plan->train;
        double lr = plc_lr_at(&x->lr, x->step);
        return o->adamw(be, PTR(0), x->prog->buffers[in->buf[0]].dtype, PTR(1),
                        x->prog->buffers[in->buf[1]].dtype, FP(2), FP(3), FP(4), FP(5), a[0], lr,
                        t->beta1, t->beta2, t->eps, a[1] ? t->weight_decay : 0.0, x->step + 1);
    }
    case PLC_OP_CAST:
        return o->cast(be, PTR(0), x->prog->buffers[in->buf[0]].dtype, PTR(1),
                       x->prog->buffers[in->buf[1]].dtype, a[0]);
    case PLC_OP_MOE_ROUTE:
    case PLC_OP_MOE_ROUTE_BWD:
    case PLC_OP_MOE_PERMUTE:
    case PLC_OP_MOE_PERMUTE_BWD:
    case PLC_OP_MOE_UNPERMUTE:
    case PLC_OP_MOE_UNPERMUTE_BWD:
    case PLC_OP_MOE_MM:
    case PLC_OP_MOE_MM_DW:
    case PLC_OP_MOE_SEQ_COUNTS:
        return run_moe(x, in);
    default:
        return plc_backend_fail(be, "op %d is not a compute op", (int)in->op);
    }
}

static int instr_error(plc_executor *x, uint32_t i, const char *what, char *err, size_t errlen)
{
    char where[160];
    plc_exec_describe(where, sizeof where, x->comm->rank, x->prog, i);
    return plc_fail(err, errlen, "%s: %s", where, what);
}

static int read_scalar(plc_executor *x, int32_t id, double *out)
{
    *out = 0;
    if (id < 0) return 0;
    return x->be->ops->download(x->be, out, x->ptr[id], sizeof *out);
}

/* one instruction of the step: its wait, then the op (started, for a transfer) */
static int run_instr(plc_executor *x, uint32_t i, char *err, size_t errlen)
{
    const plc_program *p = x->prog;
    plc_backend *be = x->be;
    x->comm->watch_instr = (int64_t)i;
    const plc_instr *in = &p->instrs[i];
    if (in->wait >= 0 && wait_for(x, in->wait)) return instr_error(x, (uint32_t)in->wait, be->error, err, errlen);
    if (faulted(x, in)) return 0;
    if (is_comm_op(in->op)) {
        if (start_comm(x, i, in)) return instr_error(x, i, be->error, err, errlen);
        return 0;
    }
    double t0 = x->trace ? plc_trace_now() - x->trace->origin : 0;
    char derr[400] = "";
    be->fresh = x->fresh[i];
    int rc = run_compute(x, in, derr, sizeof derr);
    be->fresh = 0;
    if (rc) return instr_error(x, i, derr[0] ? derr : be->error, err, errlen);
    if (x->watch_scalars && x->bad_instr < 0 && (in->op == PLC_OP_XENT_LOSS || in->op == PLC_OP_SUMSQ)) {
        const double *sum = in->op == PLC_OP_SUMSQ ? DP(0) : DP(1);
        if (sum && !isfinite(*sum)) x->bad_instr = i;
    }
    if (x->trace) {
        if (be->ops->synchronize(be)) return instr_error(x, i, be->error, err, errlen);
        plc_trace_record(x->trace, (int32_t)i, (int32_t)x->step, t0, plc_trace_now() - x->trace->origin);
    }
    return 0;
}

/* Segment g of the step graphs: launched, or first recorded and then
 * launched. The recording holds its instructions and the completion of
 * every transfer started in it (step_graph.h: nothing else is pending at
 * its end). Its arguments are the same every step: what changes from step
 * to step is in memory written before the step starts (DATA_LOAD copies
 * from its staging buffer; ADAMW's values are the backend's, from
 * set_step). Every lazy allocation (cuBLAS, NCCL, the CP scratch, the
 * loss rows) was made by the warm-up step, so none happens while recording. */
static int run_segment(plc_executor *x, uint32_t g, char *err, size_t errlen)
{
    plc_backend *be = x->be;
    const plc_step_segment *sg = &x->graph.seg[g];
    if (!x->graphs[g]) {
        if (be->ops->graph_begin(be))
            return plc_fail(err, errlen, "rank %d: recording instructions %u..%u as a graph: %s", x->comm->rank,
                            sg->first, sg->end - 1, be->error);
        int rc = 0;
        for (uint32_t i = sg->first; i < sg->end && !rc; i++) rc = run_instr(x, i, err, errlen);
        for (uint32_t i = sg->first; i < sg->end && !rc; i++)
            if (wait_for(x, (int32_t)i)) rc = instr_error(x, i, be->error, err, errlen);
        void *graph = NULL;
        int erc = be->ops->graph_end(be, &graph); /* ends the recording after a failure too */
        if (rc) {
            if (graph) be->ops->graph_free(be, graph);
            return -1;
        }
        if (erc)
            return plc_fail(err, errlen, "rank %d: recording instructions %u..%u as a graph: %s (plrun --no-graph "
                                         "runs them eagerly)", x->comm->rank, sg->first, sg->end - 1, be->error);
        x->graphs[g] = graph;
    }
    x->comm->watch_instr = (int64_t)sg->first;
    if (be->ops->graph_launch(be, x->graphs[g]))
        return plc_fail(err, errlen, "rank %d: the graph of instructions %u..%u: %s", x->comm->rank, sg->first,
                        sg->end - 1, be->error);
    return 0;
}

int plc_exec_step(plc_executor *x, plc_step_stats *stats, char *err, size_t errlen)
{
    const plc_program *p = x->prog;
    plc_backend *be = x->be;
    double t_start = plc_trace_now();
    x->bad_instr = -1;
    x->nonfinite[0] = '\0';
    x->comm->watch_step = x->step;
    if (be->ops->set_step && be->ops->set_step(be, &x->plan->train, plc_lr_at(&x->lr, x->step), x->step + 1))
        return plc_fail(err, errlen, "rank %d: the step's values: %s", x->comm->rank, be->error);
    for (uint32_t i = 0; x->staged && i < p->ninstrs; i++) {
        if (!x->staged[i]) continue;
        const plc_instr *in = &p->instrs[i];
        const int64_t rows = in->arg[1] * in->arg[2];
        char derr[400] = "";
        if (load_micro_batch(x, in, x->staged[i], x->staged[i] + rows, derr, sizeof derr))
            return instr_error(x, i, derr[0] ? derr : be->error, err, errlen);
    }
    /* the warm-up step, a traced step or one that watches its sums on the
     * host runs eagerly; the others replay the step graphs */
    const int graphs = x->graph.n && x->steps_run > 0 && !x->trace && !x->watch_scalars;
    for (uint32_t i = 0; i < p->ninstrs;) {
        int32_t g = graphs ? x->graph.seg_of[i] : -1;
        if (g >= 0) {
            if (run_segment(x, (uint32_t)g, err, errlen)) return -1;
            i = x->graph.seg[g].end;
            continue;
        }
        if (run_instr(x, i, err, errlen)) return -1;
        i++;
    }
    for (uint32_t i = 0; i < p->ninstrs; i++)
        if (wait_for(x, (int32_t)i)) return instr_error(x, i, be->error, err, errlen);
    if (be->ops->synchronize(be)) return plc_fail(err, errlen, "rank %d: %s", x->comm->rank, be->error);

    /* the job's loss and norm, reduced once per step */
    double loss = 0, sumsq = 0, vals[4];
    if (read_scalar(x, p->loss_buf, &loss) || read_scalar(x, p->gnorm_buf, &sumsq))
        return plc_fail(err, errlen, "rank %d: %s", x->comm->rank, be->error);
    vals[0] = x->loss_owner ? loss : 0;
    vals[1] = x->gnorm_owner ? sumsq : 0;
    vals[2] = x->gnorm_owner ? 1 : 0;
    vals[3] = x->co.tp == 0 ? (double)x->moe_dropped : 0; /* tp ranks route the same tokens */
    x->moe_dropped = 0;
    /* the lowest rank whose own sums are not finite describes where */
    const int bad_loss = x->loss_owner && !isfinite(loss), bad_norm = x->gnorm_owner && !isfinite(sumsq);
    if (bad_loss || bad_norm) {
        char where[200];
        if (x->bad_instr >= 0) plc_exec_describe(where, sizeof where, x->comm->rank, p, (uint32_t)x->bad_instr);
        else snprintf(where, sizeof where, "rank %d", x->comm->rank);
        snprintf(x->nonfinite, sizeof x->nonfinite, "%s: the %s is %g at step %lld", where,
                 bad_loss ? "loss sum" : "squared gradient norm", bad_loss ? loss : sumsq, (long long)x->step);
    }
    double mx[2] = {plc_trace_now() - t_start,
                    x->nonfinite[0] ? (double)(x->comm->size - x->comm->rank) : 0.0};
    x->comm->watch_instr = -2; /* the step's reductions */
    if (plc_comm_sum_f64(x->comm, vals, 4) || plc_comm_max_f64(x->comm, mx, 2))
        return plc_fail(err, errlen, "rank %d: the reduction of the step's loss failed: %s", x->comm->rank,
                        x->comm->error);
    x->comm->watch_instr = -1;
    double elapsed = mx[0];
    const plc_plan *plan = x->plan;
    stats->step = x->step;
    stats->loss = vals[0] / ((double)plan->train.global_batch * (double)plan->model.seq_len);
    stats->grad_norm = vals[2] > 0 ? sqrt(vals[1]) : NAN;
    stats->lr = plc_lr_at(&x->lr, x->step);
    stats->step_time_s = elapsed;
    stats->nonfinite_rank = mx[1] > 0 ? x->comm->size - (int)mx[1] : -1;
    stats->moe_dropped = (int64_t)vals[3];
    x->step++;
    x->steps_run++;
    return 0;
}

int plc_exec_warm_comm(plc_executor *x, char *err, size_t errlen)
{
    const plc_program *p = x->prog;
    plc_backend *be = x->be;
    for (uint32_t i = 0; i < p->ninstrs; i++) {
        const plc_instr *in = &p->instrs[i];
        x->comm->watch_instr = (int64_t)i;
        if (in->wait >= 0 && wait_for(x, in->wait)) return instr_error(x, (uint32_t)in->wait, be->error, err, errlen);
        if (!is_comm_op(in->op) || faulted(x, in)) continue;
        if (start_comm(x, i, in)) return instr_error(x, i, be->error, err, errlen);
    }
    for (uint32_t i = 0; i < p->ninstrs; i++)
        if (wait_for(x, (int32_t)i)) return instr_error(x, i, be->error, err, errlen);
    x->comm->watch_instr = -1;
    return be->ops->synchronize(be) ? plc_fail(err, errlen, "rank %d: %s", x->comm->rank, be->error) : 0;
}
