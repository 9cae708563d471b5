/* exec_check.c: every instruction of a program checked against plan.h's
 * operand contract before the first step, so a wrong or hostile plan fails
 * with its location instead of reading outside a buffer. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "runtime/executor.h"

void plc_exec_describe(char *out, size_t len, int rank, const plc_program *prog, uint32_t idx)
{
    const plc_instr *in = &prog->instrs[idx];
    const char *op = plc_op_name(in->op);
    const char *phase = plc_phase_name(in->phase);
    char layer[32] = "", micro[32] = "";
    if (in->layer >= 0) snprintf(layer, sizeof layer, ", layer %d", in->layer);
    if (in->micro >= 0) snprintf(micro, sizeof micro, ", micro-batch %d", in->micro);
    char opbuf[32];
    if (!op) {
        snprintf(opbuf, sizeof opbuf, "op %d", (int)in->op);
        op = opbuf;
    }
    snprintf(out, len, "rank %d: instruction %u (%s%s%s, %s)", rank, idx, op, layer, micro,
             phase ? phase : "unknown phase");
}

typedef struct checker {
    const plc_plan *plan;
    const plc_program *prog;
    const plc_comm *comm;
    uint32_t idx;
    const plc_instr *in;
    char *err;
    size_t errlen;
    int storage; /* the instruction's storage dtype (see STORAGE) */
} checker;

static int bad(checker *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int bad(checker *c, const char *fmt, ...)
{
    char where[160], what[320];
    plc_exec_describe(where, sizeof where, c->comm ? c->comm->rank : 0, c->prog, c->idx);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    snprintf(c->err, c->errlen, "%s: %s", where, what);
    return -1;
}

#define ANY_DTYPE (-1)
/* the compute op's storage dtype, f32 or bf16: that of its reference
 * operand (storage_operand), which its other "as dt" operands of
 * runtime/backend.h must share; statistics and weight gradients stay F */
#define STORAGE (-2)

static int storage_operand(plc_op op)
{
    switch (op) {
    case PLC_OP_EMBED_FWD: case PLC_OP_RMSNORM_FWD: case PLC_OP_ROPE_FWD: case PLC_OP_ROPE_BWD:
    case PLC_OP_ATTN_FWD: case PLC_OP_ATTN_BWD: case PLC_OP_SWIGLU_FWD: case PLC_OP_SWIGLU_BWD:
    case PLC_OP_ADD: case PLC_OP_ACCUMULATE: case PLC_OP_SCALE:
        return 0;
    case PLC_OP_MATMUL: case PLC_OP_XENT_MAX:
        return 1;
    case PLC_OP_EMBED_BWD: case PLC_OP_RMSNORM_BWD: case PLC_OP_XENT_SUMEXP: case PLC_OP_XENT_LOSS:
        return 2;
    default:
        return -1;
    }
}

/* Operand buf[k] must exist (unless optional and -1), have dtype `dt` and
 * hold at least `elems` elements. */
static int need(checker *c, int k, int dt, int64_t elems, int optional)
{
    int32_t id = c->in->buf[k];
    if (id < 0) {
        if (optional && id == -1) return 0;
        return bad(c, "operand buf%d is missing", k);
    }
    if ((uint32_t)id >= c->prog->nbuffers)
        return bad(c, "operand buf%d = %d is not a buffer (the program has %u)", k, id,
                   c->prog->nbuffers);
    const plc_buffer *b = &c->prog->buffers[id];
    if (dt == STORAGE) dt = c->storage;
    if (dt != ANY_DTYPE && (int)b->dtype != dt)
        return bad(c, "operand buf%d '%s' is %s, expected %s", k, b->name ? b->name : "?",
                   plc_dtype_name(b->dtype) ? plc_dtype_name(b->dtype) : "?",
                   plc_dtype_name((plc_dtype)dt));
    if (elems < 0) return bad(c, "operand buf%d: negative size %lld", k, (long long)elems);
    size_t es = plc_dtype_size(b->dtype);
    uint64_t bytes;
    if (__builtin_mul_overflow((uint64_t)elems, (uint64_t)es, &bytes) || bytes > b->bytes)
        return bad(c, "operand buf%d '%s' holds %llu bytes, the operation needs %lld elements of %zu bytes",
                   k, b->name ? b->name : "?", (unsigned long long)b->bytes, (long long)elems, es);
    return 0;
}

/* product of non-negative sizes, -1 on overflow or a negative factor */
static int64_t prod(int n, ...)
{
    va_list ap;
    va_start(ap, n);
    int64_t r = 1;
    for (int i = 0; i < n; i++) {
        int64_t v = va_arg(ap, int64_t);
        if (r >= 0 && (v < 0 || __builtin_mul_overflow(r, v, &r))) r = -1;
    }
    va_end(ap);
    return r;
}

static int group_ok(checker *c, int *gsize)
{
    int32_t g = c->in->group;
    if (g < 0 || (uint32_t)g >= c->plan->ngroups)
        return bad(c, "group %d does not exist (the plan has %u)", g, c->plan->ngroups);
    if (c->comm && c->comm->groups && !c->comm->groups[g].member)
        return bad(c, "this rank is not a member of group %d (%s)", g,
                   c->plan->groups[g].name ? c->plan->groups[g].name : "?");
    *gsize = c->comm && c->comm->groups ? c->comm->groups[g].size : 1;
    return 0;
}

static int check_instr(checker *c)
{
    const plc_instr *in = c->in;
    const int64_t *a = in->arg;
    const plc_model *m = &c->plan->model;
    const int64_t cp = c->plan->layout.cp;
    enum { F = PLC_F32, I = PLC_I32, D = PLC_F64, S = STORAGE };
    int gs = 1;

    if ((unsigned)in->op >= PLC_OP_COUNT) return bad(c, "unknown op %d", (int)in->op);
    if ((unsigned)in->stream >= PLC_STREAM_COUNT) return bad(c, "unknown stream %d", (int)in->stream);
    if ((unsigned)in->phase >= PLC_PHASE_COUNT) return bad(c, "unknown phase %d", (int)in->phase);
    if (in->wait >= 0 && (uint32_t)in->wait >= c->idx)
        return bad(c, "waits for instruction %d, which does not come before it", in->wait);
    if (in->wait < -1) return bad(c, "invalid wait %d", in->wait);
    int ref = storage_operand(in->op);
    if (ref >= 0) {
        if (need(c, ref, ANY_DTYPE, 0, 0)) return -1;
        const plc_buffer *b = &c->prog->buffers[in->buf[ref]];
        if (b->dtype != PLC_F32 && b->dtype != PLC_BF16)
            return bad(c, "operand buf%d '%s' is %s; compute operands are f32 or bf16", ref,
                       b->name ? b->name : "?", plc_dtype_name(b->dtype) ? plc_dtype_name(b->dtype) : "?");
        c->storage = (int)b->dtype;
    }

    switch (in->op) {
    case PLC_OP_NOP: return 0;
    case PLC_OP_WAIT: return in->wait < 0 ? bad(c, "WAIT without an instruction to wait for") : 0;
    case PLC_OP_ZERO: return need(c, 0, ANY_DTYPE, 0, 0);
    case PLC_OP_COPY: {
        if (need(c, 0, ANY_DTYPE, 0, 0) || need(c, 1, ANY_DTYPE, 0, 0)) return -1;
        const plc_buffer *d = &c->prog->buffers[in->buf[0]], *s = &c->prog->buffers[in->buf[1]];
        if (d->bytes < s->bytes) return bad(c, "COPY of %llu bytes into a buffer of %llu",
                                            (unsigned long long)s->bytes, (unsigned long long)d->bytes);
        return 0;
    }
    case PLC_OP_DATA_LOAD: {
        int64_t mb = a[1], T = a[2];
        int64_t per_dp = c->plan->train.global_batch / c->plan->layout.dp;
        if (mb <= 0 || a[0] < 0 || (a[0] + 1) * mb > per_dp)
            return bad(c, "micro-batch %lld of %lld sequences lies outside the %lld sequences of a data-parallel rank",
                       (long long)a[0], (long long)mb, (long long)per_dp);
        if (T * cp != m->seq_len)
            return bad(c, "local sequence length %lld x cp %lld is not seq_len %lld", (long long)T,
                       (long long)cp, (long long)m->seq_len);
        return need(c, 0, I, prod(2, mb, T), 0) || need(c, 1, I, prod(2, mb, T), 0);
    }
    case PLC_OP_EMBED_FWD:
    case PLC_OP_EMBED_BWD: {
        int64_t rows = a[0], h = a[1], vl = a[2];
        int64_t shards = a[3] ? c->plan->layout.tp : 1;
        if (vl != plc_shard_block(m->vocab, shards))
            return bad(c, "vocab_local %lld is not the vocabulary of %lld over %lld shards (padded: %lld)",
                       (long long)vl, (long long)m->vocab, (long long)shards,
                       (long long)plc_shard_block(m->vocab, shards));
        int out = in->op == PLC_OP_EMBED_FWD ? 0 : 2, w = in->op == PLC_OP_EMBED_FWD ? 2 : 0;
        return need(c, out, S, prod(2, rows, h), 0) || need(c, 1, I, rows, 0) ||
               need(c, w, in->op == PLC_OP_EMBED_FWD ? S : F, prod(2, vl, h), 0);
    }
    case PLC_OP_RMSNORM_FWD:
        if (in->farg[0] <= 0) return bad(c, "RMSNorm epsilon %g is not positive", in->farg[0]);
        return need(c, 0, S, prod(2, a[0], a[1]), 0) || need(c, 1, F, a[0], 1) ||
               need(c, 2, S, prod(2, a[0], a[1]), 0) || need(c, 3, S, a[1], 0);
    case PLC_OP_RMSNORM_BWD:
        return need(c, 0, S, prod(2, a[0], a[1]), 1) || need(c, 1, F, a[1], 1) ||
               need(c, 2, S, prod(2, a[0], a[1]), 0) || need(c, 3, S, prod(2, a[0], a[1]), 0) ||
               need(c, 4, S, a[1], 0) || need(c, 5, F, a[0], 0);
    case PLC_OP_MATMUL: { /* C may be f32 with bf16 A and B (weight gradients) */
        if (need(c, 0, ANY_DTYPE, 0, 0)) return -1;
        int c_dt = c->prog->buffers[in->buf[0]].dtype == PLC_F32 ? F : S;
        return need(c, 0, c_dt, prod(2, a[0], a[1]), 0) || need(c, 1, S, prod(2, a[0], a[2]), 0) ||
               need(c, 2, S, prod(2, a[2], a[1]), 0);
    }
    case PLC_OP_ROPE_FWD:
    case PLC_OP_ROPE_BWD: {
        int64_t n = prod(4, a[0], a[1], a[2], a[3]);
        if (a[3] % 2) return bad(c, "head dimension %lld is odd", (long long)a[3]);
        if (cp > 1 && a[1] * cp != m->seq_len)
            return bad(c, "RoPE over %lld positions, but a context-parallel rank holds %lld",
                       (long long)a[1], (long long)(m->seq_len / cp));
        if (in->farg[0] <= 0) return bad(c, "RoPE theta %g is not positive", in->farg[0]);
        return need(c, 0, S, n, 0) || need(c, 1, S, n, 0);
    }
    case PLC_OP_ATTN_FWD:
    case PLC_OP_ATTN_BWD: {
        int64_t B = a[0], Tq = a[1], Tk = a[2], H = a[3], KV = a[4], hd = a[5];
        if (H <= 0 || KV <= 0 || H % KV) return bad(c, "%lld heads do not group over %lld kv heads", (long long)H, (long long)KV);
        if (a[6] != 0 && a[6] != 1) return bad(c, "attention form %lld (0 or 1)", (long long)a[6]);
        if (!(Tk == Tq && (cp == 1 || Tq * cp == m->seq_len)) && !(cp > 1 && Tk == Tq * cp && Tk == m->seq_len))
            return bad(c, "attention of %lld queries over %lld keys does not match seq_len %lld with cp %lld",
                       (long long)Tq, (long long)Tk, (long long)m->seq_len, (long long)cp);
        int64_t nq = prod(4, B, Tq, H, hd), nk = prod(4, B, Tk, KV, hd);
        int64_t ns = a[6] ? prod(3, B, H, Tq) : prod(4, B, H, Tq, Tk);
        if (in->op == PLC_OP_ATTN_FWD)
            return need(c, 0, S, nq, 0) || need(c, 1, F, ns, 0) || need(c, 2, S, nq, 0) ||
                   need(c, 3, S, nk, 0) || need(c, 4, S, nk, 0);
        return need(c, 0, S, nq, 0) || need(c, 1, S, nk, 0) || need(c, 2, S, nk, 0) ||
               need(c, 3, S, nq, 0) || need(c, 4, S, nq, 0) || need(c, 5, S, nk, 0) ||
               need(c, 6, S, nk, 0) || need(c, 7, S, nq, 0) || need(c, 8, F, ns, 0);
    }
    case PLC_OP_SWIGLU_FWD:
        return need(c, 0, S, a[0], 0) || need(c, 1, S, a[0], 0) || need(c, 2, S, a[0], 0);
    case PLC_OP_SWIGLU_BWD:
        return need(c, 0, S, a[0], 0) || need(c, 1, S, a[0], 0) || need(c, 2, S, a[0], 0) ||
               need(c, 3, S, a[0], 0) || need(c, 4, S, a[0], 0);
    case PLC_OP_ADD:
        return need(c, 0, S, a[0], 0) || need(c, 1, S, a[0], 0) || need(c, 2, S, a[0], 0);
    case PLC_OP_ACCUMULATE:
        return need(c, 0, S, a[0], 0) || need(c, 1, S, a[0], 0);
    case PLC_OP_SCALE:
        return need(c, 0, S, a[0], 0);
    case PLC_OP_XENT_MAX:
        return need(c, 0, F, a[0], 0) || need(c, 1, S, prod(2, a[0], a[1]), 0);
    case PLC_OP_XENT_SUMEXP:
        return need(c, 0, F, a[0], 0) || need(c, 1, F, a[0], 0) ||
               need(c, 2, S, prod(2, a[0], a[1]), 0) || need(c, 3, I, a[0], 0) ||
               need(c, 4, F, a[0], 0);
    case PLC_OP_XENT_LOSS:
        return need(c, 0, S, prod(2, a[0], a[1]), 1) || need(c, 1, D, 1, 0) ||
               need(c, 2, S, prod(2, a[0], a[1]), 0) || need(c, 3, I, a[0], 0) ||
               need(c, 4, F, a[0], 0) || need(c, 5, F, a[0], 0) || need(c, 6, F, a[0], 0);
    case PLC_OP_SUMSQ:
        return need(c, 0, D, 1, 0) || need(c, 1, F, a[0], 0);
    case PLC_OP_CLIP_SCALE:
        return need(c, 0, F, 1, 0) || need(c, 1, D, 1, 0);
    case PLC_OP_ADAMW:
        return need(c, 0, ANY_DTYPE, a[0], 0) || need(c, 1, ANY_DTYPE, a[0], 0) ||
               need(c, 2, F, a[0], 0) || need(c, 3, F, a[0], 0) || need(c, 4, F, 1, 0) ||
               need(c, 5, F, a[0], 1);
    case PLC_OP_CAST:
        return need(c, 0, ANY_DTYPE, a[0], 0) || need(c, 1, ANY_DTYPE, a[0], 0);
    case PLC_OP_ALLREDUCE:
        if (a[1] != 0 && a[1] != 1) return bad(c, "ALLREDUCE reduction %lld (0 sum, 1 max)", (long long)a[1]);
        return group_ok(c, &gs) || need(c, 0, ANY_DTYPE, a[0], 0);
    case PLC_OP_REDUCE_SCATTER:
        return group_ok(c, &gs) || need(c, 0, ANY_DTYPE, a[0], 0) ||
               need(c, 1, ANY_DTYPE, prod(2, a[0], (int64_t)gs), 0);
    case PLC_OP_ALLGATHER:
        return group_ok(c, &gs) || need(c, 0, ANY_DTYPE, prod(2, a[0], (int64_t)gs), 0) ||
               need(c, 1, ANY_DTYPE, a[0], 0);
    case PLC_OP_BROADCAST:
        if (group_ok(c, &gs)) return -1;
        if (a[1] < 0 || a[1] >= gs) return bad(c, "broadcast root %lld outside a group of %d", (long long)a[1], gs);
        return need(c, 0, ANY_DTYPE, a[0], 0);
    case PLC_OP_SEND:
    case PLC_OP_RECV: {
        int64_t pp = c->plan->layout.pp, own = c->comm ? c->comm->coords.pp : 0;
        if (in->peer < 0 || in->peer >= pp || in->peer == own)
            return bad(c, "peer pipeline rank %d is not another of the %lld stages", in->peer, (long long)pp);
        return need(c, 0, ANY_DTYPE, a[0], 0);
    }
    default:
        return bad(c, "unknown op %d", (int)in->op);
    }
}

int plc_exec_check_program(const plc_plan *plan, const plc_program *prog, const plc_comm *comm,
                           char *err, size_t errlen)
{
    for (uint32_t b = 0; b < prog->nbuffers; b++) {
        const plc_buffer *buf = &prog->buffers[b];
        if ((unsigned)buf->dtype >= PLC_DTYPE_COUNT || buf->offset % 64 ||
            buf->offset > prog->arena_bytes || buf->bytes > prog->arena_bytes - buf->offset) {
            snprintf(err, errlen, "buffer %u '%s' (%llu bytes at offset %llu) lies outside the arena of %llu bytes",
                     b, buf->name ? buf->name : "?", (unsigned long long)buf->bytes,
                     (unsigned long long)buf->offset, (unsigned long long)prog->arena_bytes);
            return -1;
        }
    }
    for (int k = 0; k < 2; k++) {
        int32_t id = k ? prog->gnorm_buf : prog->loss_buf;
        if (id >= 0 && ((uint32_t)id >= prog->nbuffers || prog->buffers[id].dtype != PLC_F64)) {
            snprintf(err, errlen, "the program's %s buffer %d is not an F64 buffer", k ? "grad-norm" : "loss", id);
            return -1;
        }
    }
    checker c = {plan, prog, comm, 0, NULL, err, errlen, PLC_F32};
    for (uint32_t i = 0; i < prog->ninstrs; i++) {
        c.idx = i;
        c.in = &prog->instrs[i];
        if (check_instr(&c)) return -1;
    }
    return 0;
}
