/* plan_validate.c: semantic checks of a plan, shared by the loader (a damaged
 * or hostile file) and the compiler (a lowering bug must never reach a file).
 * After these pass, every buffer lies inside its program's arena and every
 * instruction touches only elements inside its buffers, with the dtypes the
 * op expects, so the runtime can execute without further bounds checks. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "common/errmsg.h"
#include "common/plan_io.h"

#define MAX_DIM (INT64_C(1) << 40)

int64_t plc_plan_group_size(const plc_layout *l, const plc_group *g)
{
    if (g->flags & PLC_GROUP_PP_ENDS) return l->pp > 1 ? 2 : 1;
    int64_t n = 1;
    if (g->dims & PLC_DIM_TP) n *= l->tp;
    if (g->dims & PLC_DIM_CP) n *= l->cp;
    if (g->dims & PLC_DIM_DP) n *= l->dp;
    if (g->dims & PLC_DIM_PP) n *= l->pp;
    return n;
}

/* saturating product: an absurd operand count fails the capacity check
 * instead of wrapping around */
static int64_t mul(int64_t a, int64_t b)
{
    if (a <= 0 || b <= 0) return a < 0 || b < 0 ? INT64_MAX : 0;
    if (a > INT64_MAX / b) return INT64_MAX;
    return a * b;
}

static int64_t mul3(int64_t a, int64_t b, int64_t c) { return mul(mul(a, b), c); }
static int64_t mul4(int64_t a, int64_t b, int64_t c, int64_t d) { return mul(mul(a, b), mul(c, d)); }

typedef enum dclass { DC_ANY, DC_FLOAT, DC_I32, DC_F64, DC_F32 } dclass;

typedef struct vctx {
    const plc_plan *plan;
    const plc_program *prog;
    uint32_t pi, ii;
    const plc_instr *in;
    char *err;
    size_t errlen;
} vctx;

static int ifail(vctx *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int ifail(vctx *v, const char *fmt, ...)
{
    if (v->err && v->errlen) {
        const char *op = plc_op_name(v->in->op);
        int n = snprintf(v->err, v->errlen, "program %u instruction %u (%s): ", v->pi, v->ii, op ? op : "?");
        if (n < 0) n = 0;
        if ((size_t)n < v->errlen) {
            va_list ap;
            va_start(ap, fmt);
            vsnprintf(v->err + n, v->errlen - (size_t)n, fmt, ap);
            va_end(ap);
        }
    }
    return -1;
}

static int dtype_ok(plc_dtype t, dclass c)
{
    switch (c) {
    case DC_ANY: return 1;
    case DC_FLOAT: return t == PLC_F32 || t == PLC_BF16;
    case DC_I32: return t == PLC_I32;
    case DC_F64: return t == PLC_F64;
    case DC_F32: return t == PLC_F32;
    }
    return 0;
}

/* buffer operand `slot` must exist, have dtype class c and hold `elems` */
static int need(vctx *v, int slot, int64_t elems, dclass c)
{
    int32_t id = v->in->buf[slot];
    if (id < 0) return ifail(v, "operand buf%d is missing", slot);
    const plc_buffer *b = &v->prog->buffers[id];
    if (!dtype_ok(b->dtype, c))
        return ifail(v, "operand buf%d ('%s') has dtype %s, which this op does not take", slot,
                     b->name ? b->name : "?", plc_dtype_name(b->dtype));
    int64_t cap = (int64_t)(b->bytes / plc_dtype_size(b->dtype));
    if (elems > cap)
        return ifail(v, "operand buf%d ('%s') holds %lld elements, the op touches %lld", slot,
                     b->name ? b->name : "?", (long long)cap, (long long)elems);
    return 0;
}

static int opt(vctx *v, int slot, int64_t elems, dclass c)
{
    return v->in->buf[slot] < 0 ? 0 : need(v, slot, elems, c);
}

/* args[0..n) must lie in [lo, MAX_DIM] */
static int args_in(vctx *v, int n, int64_t lo)
{
    for (int k = 0; k < n; k++)
        if (v->in->arg[k] < lo || v->in->arg[k] > MAX_DIM)
            return ifail(v, "arg%d = %lld is out of range", k, (long long)v->in->arg[k]);
    return 0;
}

static int flag_arg(vctx *v, int k)
{
    if (v->in->arg[k] != 0 && v->in->arg[k] != 1)
        return ifail(v, "arg%d = %lld must be 0 or 1", k, (long long)v->in->arg[k]);
    return 0;
}

static int64_t group_size_of(vctx *v)
{
    return plc_plan_group_size(&v->plan->layout, &v->plan->groups[v->in->group]);
}

static int check_operands(vctx *v)
{
    const plc_instr *in = v->in;
    const int64_t *a = in->arg;
    int bad = 0;
#define NEED(slot, n, c) bad |= need(v, slot, n, c)
    switch (in->op) {
    case PLC_OP_NOP:
    case PLC_OP_WAIT:
        return 0;
    case PLC_OP_ZERO:
        NEED(0, 0, DC_ANY);
        return bad;
    case PLC_OP_COPY: {
        NEED(0, 0, DC_ANY);
        NEED(1, 0, DC_ANY);
        if (bad) return bad;
        const plc_buffer *d = &v->prog->buffers[in->buf[0]], *s = &v->prog->buffers[in->buf[1]];
        if (d->bytes != s->bytes || d->dtype != s->dtype)
            return ifail(v, "COPY between buffers of different size or dtype ('%s', '%s')", d->name ? d->name : "?",
                         s->name ? s->name : "?");
        return 0;
    }
    case PLC_OP_DATA_LOAD:
        if (args_in(v, 3, 0) || a[1] < 1 || a[2] < 1) return ifail(v, "bad micro-batch arguments");
        NEED(0, mul(a[1], a[2]), DC_I32);
        NEED(1, mul(a[1], a[2]), DC_I32);
        return bad;
    case PLC_OP_EMBED_FWD:
    case PLC_OP_EMBED_BWD:
        if (args_in(v, 4, 0) || flag_arg(v, 3)) return -1;
        NEED(0, in->op == PLC_OP_EMBED_FWD ? mul(a[0], a[1]) : mul(a[2], a[1]), DC_FLOAT);
        NEED(1, a[0], DC_I32);
        NEED(2, in->op == PLC_OP_EMBED_FWD ? mul(a[2], a[1]) : mul(a[0], a[1]), DC_FLOAT);
        return bad;
    case PLC_OP_RMSNORM_FWD:
        if (args_in(v, 2, 0)) return -1;
        NEED(0, mul(a[0], a[1]), DC_FLOAT);
        NEED(1, a[0], DC_F32);
        NEED(2, mul(a[0], a[1]), DC_FLOAT);
        NEED(3, a[1], DC_FLOAT);
        return bad;
    case PLC_OP_RMSNORM_BWD:
        if (args_in(v, 2, 0)) return -1;
        NEED(0, mul(a[0], a[1]), DC_FLOAT);
        NEED(1, a[1], DC_FLOAT);
        NEED(2, mul(a[0], a[1]), DC_FLOAT);
        NEED(3, mul(a[0], a[1]), DC_FLOAT);
        NEED(4, a[1], DC_FLOAT);
        NEED(5, a[0], DC_F32);
        return bad;
    case PLC_OP_MATMUL:
        if (args_in(v, 3, 0) || flag_arg(v, 3) || flag_arg(v, 4)) return -1;
        NEED(0, mul(a[0], a[1]), DC_FLOAT);
        NEED(1, mul(a[0], a[2]), DC_FLOAT);
        NEED(2, mul(a[2], a[1]), DC_FLOAT);
        return bad;
    case PLC_OP_ROPE_FWD:
    case PLC_OP_ROPE_BWD:
        if (args_in(v, 4, 1)) return -1;
        if (a[3] % 2) return ifail(v, "head dimension %lld is odd", (long long)a[3]);
        NEED(0, mul4(a[0], a[1], a[2], a[3]), DC_FLOAT);
        NEED(1, mul4(a[0], a[1], a[2], a[3]), DC_FLOAT);
        return bad;
    case PLC_OP_ATTN_FWD:
    case PLC_OP_ATTN_BWD: {
        if (args_in(v, 6, 1) || flag_arg(v, 6)) return -1;
        int64_t B = a[0], Tq = a[1], Tk = a[2], H = a[3], KV = a[4], hd = a[5];
        if (H % KV) return ifail(v, "%lld heads do not divide into %lld KV heads", (long long)H, (long long)KV);
        if (Tk % Tq) return ifail(v, "Tk = %lld is not a multiple of Tq = %lld", (long long)Tk, (long long)Tq);
        int64_t nq = mul4(B, Tq, H, hd), nk = mul4(B, Tk, KV, hd);
        int64_t ns = a[6] ? mul3(B, H, Tq) : mul4(B, H, Tq, Tk);
        if (in->op == PLC_OP_ATTN_FWD) {
            NEED(0, nq, DC_FLOAT); NEED(1, ns, DC_F32); NEED(2, nq, DC_FLOAT);
            NEED(3, nk, DC_FLOAT); NEED(4, nk, DC_FLOAT);
        } else {
            NEED(0, nq, DC_FLOAT); NEED(1, nk, DC_FLOAT); NEED(2, nk, DC_FLOAT);
            NEED(3, nq, DC_FLOAT); NEED(4, nq, DC_FLOAT); NEED(5, nk, DC_FLOAT);
            NEED(6, nk, DC_FLOAT); NEED(7, nq, DC_FLOAT); NEED(8, ns, DC_F32);
        }
        return bad;
    }
    case PLC_OP_SWIGLU_FWD:
        if (args_in(v, 1, 0)) return -1;
        for (int s = 0; s < 3; s++) NEED(s, a[0], DC_FLOAT);
        return bad;
    case PLC_OP_SWIGLU_BWD:
        if (args_in(v, 1, 0)) return -1;
        for (int s = 0; s < 5; s++) NEED(s, a[0], DC_FLOAT);
        return bad;
    case PLC_OP_ADD:
        if (args_in(v, 1, 0)) return -1;
        for (int s = 0; s < 3; s++) NEED(s, a[0], DC_FLOAT);
        return bad;
    case PLC_OP_ACCUMULATE:
        if (args_in(v, 1, 0)) return -1;
        NEED(0, a[0], DC_ANY);
        NEED(1, a[0], DC_ANY);
        if (!bad && v->prog->buffers[in->buf[0]].dtype != v->prog->buffers[in->buf[1]].dtype)
            return ifail(v, "ACCUMULATE between different dtypes");
        return bad;
    case PLC_OP_SCALE:
        if (args_in(v, 1, 0)) return -1;
        NEED(0, a[0], DC_ANY);
        if (!bad && v->prog->buffers[in->buf[0]].dtype == PLC_I32) return ifail(v, "SCALE of integers");
        return bad;
    case PLC_OP_XENT_MAX:
        if (args_in(v, 2, 0)) return -1;
        NEED(0, a[0], DC_F32);
        NEED(1, mul(a[0], a[1]), DC_FLOAT);
        return bad;
    case PLC_OP_XENT_SUMEXP:
        if (args_in(v, 2, 0) || flag_arg(v, 2)) return -1;
        NEED(0, a[0], DC_F32); NEED(1, a[0], DC_F32); NEED(2, mul(a[0], a[1]), DC_FLOAT);
        NEED(3, a[0], DC_I32); NEED(4, a[0], DC_F32);
        return bad;
    case PLC_OP_XENT_LOSS:
        if (args_in(v, 2, 0) || flag_arg(v, 2)) return -1;
        NEED(0, mul(a[0], a[1]), DC_FLOAT); NEED(1, 1, DC_F64); NEED(2, mul(a[0], a[1]), DC_FLOAT);
        NEED(3, a[0], DC_I32); NEED(4, a[0], DC_F32); NEED(5, a[0], DC_F32); NEED(6, a[0], DC_F32);
        return bad;
    case PLC_OP_SUMSQ:
        if (args_in(v, 1, 0)) return -1;
        NEED(0, 1, DC_F64);
        NEED(1, a[0], DC_FLOAT);
        return bad;
    case PLC_OP_CLIP_SCALE:
        NEED(0, 1, DC_F32);
        NEED(1, 1, DC_F64);
        return bad;
    case PLC_OP_ADAMW:
        if (args_in(v, 1, 0) || flag_arg(v, 1)) return -1;
        NEED(0, a[0], DC_FLOAT); NEED(1, a[0], DC_F32); NEED(2, a[0], DC_F32); NEED(3, a[0], DC_F32);
        NEED(4, 1, DC_F32);
        bad |= opt(v, 5, a[0], DC_F32);
        return bad;
    case PLC_OP_CAST:
        if (args_in(v, 1, 0)) return -1;
        NEED(0, a[0], DC_ANY);
        NEED(1, a[0], DC_ANY);
        return bad;
    case PLC_OP_ALLREDUCE:
        if (args_in(v, 1, 0)) return -1;
        if (a[1] != 0 && a[1] != 1) return ifail(v, "reduction %lld is neither 0 (sum) nor 1 (max)", (long long)a[1]);
        NEED(0, a[0], DC_ANY);
        return bad;
    case PLC_OP_REDUCE_SCATTER:
    case PLC_OP_ALLGATHER: {
        if (args_in(v, 1, 0)) return -1;
        int64_t n = group_size_of(v);
        int scattered = in->op == PLC_OP_REDUCE_SCATTER ? 1 : 0; /* the slot holding count*size */
        NEED(0, scattered ? a[0] : mul(a[0], n), DC_ANY);
        NEED(1, scattered ? mul(a[0], n) : a[0], DC_ANY);
        if (!bad && v->prog->buffers[in->buf[0]].dtype != v->prog->buffers[in->buf[1]].dtype)
            return ifail(v, "source and destination dtypes differ");
        return bad;
    }
    case PLC_OP_BROADCAST:
        if (args_in(v, 2, 0)) return -1;
        if (a[1] >= group_size_of(v)) return ifail(v, "root %lld is outside the group", (long long)a[1]);
        NEED(0, a[0], DC_ANY);
        return bad;
    case PLC_OP_SEND:
    case PLC_OP_RECV:
        if (args_in(v, 1, 0)) return -1;
        NEED(0, a[0], DC_ANY);
        return bad;
    case PLC_OP_COUNT:
        break;
    }
#undef NEED
    return ifail(v, "unknown op");
}

static int is_collective(plc_op op)
{
    return op == PLC_OP_ALLREDUCE || op == PLC_OP_REDUCE_SCATTER || op == PLC_OP_ALLGATHER ||
           op == PLC_OP_BROADCAST;
}

static int validate_program(const plc_plan *p, uint32_t pi, char *err, size_t errlen)
{
    const plc_program *g = &p->programs[pi];
    int64_t ntensors = 2 + 9 * p->model.layers + (p->model.tie_embeddings ? 0 : 1);
    for (uint32_t i = 0; i < g->nbuffers; i++) {
        const plc_buffer *b = &g->buffers[i];
        const char *name = b->name ? b->name : "?";
        if (b->offset % 64)
            return plc_fail(err, errlen, "program %u buffer %u ('%s'): offset %llu is not 64-byte aligned", pi, i, name,
                            (unsigned long long)b->offset);
        if (b->offset > g->arena_bytes || b->bytes > g->arena_bytes - b->offset)
            return plc_fail(
                err, errlen, "program %u buffer %u ('%s'): bytes [%llu, +%llu) lie outside the %llu-byte arena", pi, i,
                name, (unsigned long long)b->offset, (unsigned long long)b->bytes, (unsigned long long)g->arena_bytes);
        if (b->rows < 0 || b->cols < 0 || b->rows > MAX_DIM || b->cols > MAX_DIM ||
            (uint64_t)mul3(b->rows, b->cols, (int64_t)plc_dtype_size(b->dtype)) > b->bytes)
            return plc_fail(err, errlen, "program %u buffer %u ('%s'): shape %lld x %lld does not fit in %llu bytes",
                            pi, i, name, (long long)b->rows, (long long)b->cols, (unsigned long long)b->bytes);
        if (b->tensor < -1 || b->tensor >= ntensors)
            return plc_fail(err, errlen, "program %u buffer %u ('%s'): tensor id %d out of range", pi, i, name,
                            b->tensor);
        if (b->nshards < 0 || b->nshards > MAX_DIM || b->flat_shards < 0 || b->flat_shards > MAX_DIM ||
            b->shard_dims > 15 || b->flat_dims > 15)
            return plc_fail(err, errlen, "program %u buffer %u ('%s'): bad shard description", pi, i, name);
    }
    if (g->loss_buf < -1 || g->loss_buf >= (int32_t)g->nbuffers ||
        (g->loss_buf >= 0 && (g->buffers[g->loss_buf].dtype != PLC_F64 || g->buffers[g->loss_buf].bytes < 8)))
        return plc_fail(err, errlen, "program %u: loss buffer %d is not an F64 scalar of the program", pi, g->loss_buf);
    if (g->gnorm_buf < -1 || g->gnorm_buf >= (int32_t)g->nbuffers ||
        (g->gnorm_buf >= 0 && (g->buffers[g->gnorm_buf].dtype != PLC_F64 || g->buffers[g->gnorm_buf].bytes < 8)))
        return plc_fail(err, errlen, "program %u: norm buffer %d is not an F64 scalar of the program", pi,
                        g->gnorm_buf);

    for (uint32_t i = 0; i < g->ninstrs; i++) {
        const plc_instr *in = &g->instrs[i];
        vctx v = {p, g, pi, i, in, err, errlen};
        if ((unsigned)in->op >= PLC_OP_COUNT || (unsigned)in->stream >= PLC_STREAM_COUNT ||
            (unsigned)in->phase >= PLC_PHASE_COUNT)
            return plc_fail(err, errlen, "program %u instruction %u: op, stream or phase out of range", pi, i);
        for (int k = 0; k < PLC_INSTR_BUFS; k++)
            if (in->buf[k] < -1 || in->buf[k] >= (int32_t)g->nbuffers)
                return ifail(&v, "buf%d = %d is not a buffer id (the program has %u)", k, in->buf[k], g->nbuffers);
        if (in->wait < -1 || in->wait >= (int32_t)i)
            return ifail(&v, "waits for instruction %d, which does not come before it", in->wait);
        if (in->op == PLC_OP_WAIT && in->wait < 0) return ifail(&v, "WAIT without an instruction to wait for");
        if (in->group < -1 || in->group >= (int32_t)p->ngroups)
            return ifail(&v, "group %d is not a group id (the plan has %u)", in->group, p->ngroups);
        if (is_collective(in->op) && in->group < 0) return ifail(&v, "collective without a group");
        if (in->peer < -1 || in->peer >= p->layout.pp)
            return ifail(&v, "peer %d is not a pipeline rank (pp = %lld)", in->peer, (long long)p->layout.pp);
        if ((in->op == PLC_OP_SEND || in->op == PLC_OP_RECV) && in->peer < 0) return ifail(&v, "no peer");
        for (int k = 0; k < PLC_INSTR_FARGS; k++)
            if (in->farg[k] != in->farg[k]) return ifail(&v, "farg%d is NaN", k);
        if (in->layer < -1 || in->layer > p->model.layers) return ifail(&v, "layer %d out of range", in->layer);
        if (check_operands(&v)) return -1;
    }
    return 0;
}

int plc_plan_validate(const plc_plan *p, char *err, size_t errlen)
{
    const plc_model *m = &p->model;
    const plc_layout *l = &p->layout;
    if (m->layers < 1 || m->hidden < 1 || m->ffn_hidden < 1 || m->heads < 1 || m->kv_heads < 1 || m->vocab < 1 ||
        m->seq_len < 1 || m->layers > MAX_DIM || m->hidden > MAX_DIM || m->ffn_hidden > MAX_DIM ||
        m->heads > MAX_DIM || m->kv_heads > MAX_DIM || m->vocab > MAX_DIM || m->seq_len > MAX_DIM ||
        m->layers > (INT32_MAX - 3) / 9)
        return plc_fail(err, errlen, "damaged plan: model dimensions out of range");
    if (p->train.global_batch < 1 || p->train.global_batch > MAX_DIM)
        return plc_fail(err, errlen, "damaged plan: global batch %lld out of range", (long long)p->train.global_batch);
    const int64_t dims[] = {l->dp, l->tp, l->pp, l->cp, l->vpp, l->micro_batch};
    for (size_t i = 0; i < sizeof dims / sizeof dims[0]; i++)
        if (dims[i] < 1 || dims[i] > (1 << 20))
            return plc_fail(err, errlen, "damaged plan: layout dimension out of range");
    /* bounds that keep every per-rank and per-stage table small */
    if (l->pp > 1024 || l->pp > m->layers)
        return plc_fail(err, errlen, "damaged plan: pp = %lld (at most 1024 and the layer count)", (long long)l->pp);
    if (l->dp * l->tp > (INT64_C(1) << 22) / (l->pp * l->cp))
        return plc_fail(err, errlen, "damaged plan: more than %lld ranks", (long long)(INT64_C(1) << 22));
    if (l->zero < 0 || l->zero > 3 || l->sp < 0 || l->sp > 1)
        return plc_fail(err, errlen, "damaged plan: zero or sp out of range");
    if (p->world_size != l->dp * l->tp * l->pp * l->cp)
        return plc_fail(err, errlen, "damaged plan: world size %lld is not dp*tp*pp*cp = %lld",
                        (long long)p->world_size, (long long)(l->dp * l->tp * l->pp * l->cp));
    for (uint32_t i = 0; i < p->ngroups; i++)
        if (p->groups[i].dims == 0 || p->groups[i].dims > 15 || p->groups[i].flags > PLC_GROUP_PP_ENDS)
            return plc_fail(err, errlen, "damaged plan: group %u has dims 0x%x flags 0x%x", i, p->groups[i].dims,
                            p->groups[i].flags);
    if (!p->stage_program) return plc_fail(err, errlen, "damaged plan: no stage map");
    for (int64_t s = 0; s < l->pp; s++)
        if (p->stage_program[s] < 0 || (uint32_t)p->stage_program[s] >= p->nprograms)
            return plc_fail(err, errlen, "damaged plan: stage %lld runs program %d, the plan has %u", (long long)s,
                            p->stage_program[s], p->nprograms);
    for (uint32_t pi = 0; pi < p->nprograms; pi++)
        if (validate_program(p, pi, err, errlen)) return -1;
    return 0;
}
