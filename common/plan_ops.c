/* plan_ops.c: the operand contract of every op (plan.h) as one table, and
 * plc_instr_check, which holds an instruction to it. The plan validator
 * (plan_validate.c, every load and every lowering) and plrun's check before
 * the first step (runtime/exec_check.c) both call plc_instr_check; nothing
 * else states what an op's operands are. */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>

#include "common/plan_io.h"

#define MAX_DIM (INT64_C(1) << 40)

/* row-building shorthands: a slot's type, optional flag and factors */
#define B(t, ...) {PLC_OPD_##t, 0, {__VA_ARGS__}}
#define OPT(t, ...) {PLC_OPD_##t, 1, {__VA_ARGS__}}
#define ONE PLC_FAC_ONE
#define A0 PLC_FAC_A0
#define A1 PLC_FAC_A1
#define A2 PLC_FAC_A2
#define A3 PLC_FAC_A3
#define A4 PLC_FAC_A4
#define A5 PLC_FAC_A5
#define GRP PLC_FAC_GROUP
#define KEYS PLC_FAC_KEYS
#define NOCOUNT PLC_FAC_ZERO
#define DIM PLC_ARG_DIM
#define POS PLC_ARG_POS
#define FLAG PLC_ARG_FLAG
/* the comm column */
#define LOCAL PLC_COMM_NONE
#define COLL PLC_COMM_GROUP
#define PEER PLC_COMM_PEER
/* written slots and in-place pairs (plan.h) */
#define W0 (1u << 0)
#define W1 (1u << 1)
#define W2 (1u << 2)
#define W3 (1u << 3)
#define W4 (1u << 4)
#define W5 (1u << 5)
#define NOIP 0, {{0}}
#define IP1(w, r) 1, {{w, r}}
#define IP2(w1, r1, w2, r2) 2, {{w1, r1}, {w2, r2}}
/* attention: q/out [B,Tq,H,hd], k/v [B,Tk,KV,hd], stats [B,H,Tq] or [B,H,Tq,Tk] */
#define NQ A0, A1, A3, A5
#define NK A0, A2, A4, A5
#define NS A0, A3, A1, KEYS

static const plc_op_contract contracts[PLC_OP_COUNT] = {
    [PLC_OP_NOP] = {{{0}}, {0}, LOCAL, 0, NOIP},
    [PLC_OP_WAIT] = {{{0}}, {0}, LOCAL, 0, NOIP},
    [PLC_OP_ZERO] = {{B(ANY, NOCOUNT)}, {0}, LOCAL, W0, NOIP},
    [PLC_OP_COPY] = {{B(ANY, NOCOUNT), B(ANY, NOCOUNT)}, {0}, LOCAL, W0, IP1(0, 1)},
    [PLC_OP_DATA_LOAD] = {{B(I32, A1, A2), B(I32, A1, A2)}, {DIM, POS, POS}, LOCAL, W0 | W1, NOIP},
    [PLC_OP_EMBED_FWD] = {{B(STORAGE, A0, A1), B(I32, A0), B(STORAGE, A2, A1)}, {DIM, DIM, DIM, FLAG}, LOCAL, W0, NOIP},
    [PLC_OP_EMBED_BWD] = {{B(F32, A2, A1), B(I32, A0), B(STORAGE, A0, A1)}, {DIM, DIM, DIM, FLAG}, LOCAL, W0, NOIP},
    [PLC_OP_RMSNORM_FWD] = {{B(STORAGE, A0, A1), OPT(F32, A0), B(STORAGE, A0, A1), B(STORAGE, A1)}, {DIM, DIM}, LOCAL, W0 | W1, IP1(0, 2)},
    [PLC_OP_RMSNORM_BWD] = {{OPT(STORAGE, A0, A1), OPT(F32, A1), B(STORAGE, A0, A1), B(STORAGE, A0, A1),
                             B(STORAGE, A1), B(F32, A0)},
                            {DIM, DIM},
                            LOCAL, W0 | W1, NOIP},
    [PLC_OP_MATMUL] = {{B(ACC, A0, A1), B(STORAGE, A0, A2), B(STORAGE, A2, A1)}, {DIM, DIM, DIM, FLAG, FLAG}, LOCAL, W0, NOIP},
    [PLC_OP_ROPE_FWD] = {{B(STORAGE, A0, A1, A2, A3), B(STORAGE, A0, A1, A2, A3)}, {POS, POS, POS, POS}, LOCAL, W0, IP1(0, 1)},
    [PLC_OP_ROPE_BWD] = {{B(STORAGE, A0, A1, A2, A3), B(STORAGE, A0, A1, A2, A3)}, {POS, POS, POS, POS}, LOCAL, W0, NOIP},
    [PLC_OP_ATTN_FWD] = {{B(STORAGE, NQ), B(F32, NS), B(STORAGE, NQ), B(STORAGE, NK), B(STORAGE, NK)},
                         {POS, POS, POS, POS, POS, POS, FLAG},
                         LOCAL, W0 | W1, NOIP},
    [PLC_OP_ATTN_BWD] = {{B(STORAGE, NQ), B(STORAGE, NK), B(STORAGE, NK), B(STORAGE, NQ), B(STORAGE, NQ),
                          B(STORAGE, NK), B(STORAGE, NK), B(STORAGE, NQ), B(F32, NS)},
                         {POS, POS, POS, POS, POS, POS, FLAG},
                         LOCAL, W0 | W1 | W2, NOIP},
    [PLC_OP_SWIGLU_FWD] = {{B(STORAGE, A0), B(STORAGE, A0), B(STORAGE, A0)}, {DIM}, LOCAL, W0, NOIP},
    [PLC_OP_SWIGLU_BWD] = {{B(STORAGE, A0), B(STORAGE, A0), B(STORAGE, A0), B(STORAGE, A0), B(STORAGE, A0)},
                           {DIM},
                           LOCAL, W0 | W1, NOIP},
    [PLC_OP_LAYERNORM_FWD] = {{B(STORAGE, A0, A1), B(F32, A0), B(F32, A0), B(STORAGE, A0, A1), B(STORAGE, A1),
                               B(STORAGE, A1)},
                              {DIM, DIM},
                              LOCAL, W0 | W1 | W2, NOIP},
    [PLC_OP_LAYERNORM_BWD] = {{OPT(STORAGE, A0, A1), OPT(F32, A1), OPT(F32, A1), B(STORAGE, A0, A1),
                               B(STORAGE, A0, A1), B(STORAGE, A1), B(F32, A0), B(F32, A0)},
                              {DIM, DIM},
                              LOCAL, W0 | W1 | W2, NOIP},
    [PLC_OP_BIAS_ADD] = {{B(STORAGE, A0, A1), B(STORAGE, A1)}, {DIM, DIM}, LOCAL, W0, NOIP},
    [PLC_OP_BIAS_BWD] = {{B(F32, A1), B(STORAGE, A0, A1)}, {DIM, DIM}, LOCAL, W0, NOIP},
    [PLC_OP_GELU_FWD] = {{B(STORAGE, A0), B(STORAGE, A0)}, {DIM}, LOCAL, W0, NOIP},
    [PLC_OP_GELU_BWD] = {{B(STORAGE, A0), B(STORAGE, A0), B(STORAGE, A0)}, {DIM}, LOCAL, W0, NOIP},
    [PLC_OP_POS_FWD] = {{B(STORAGE, A0, A1), B(STORAGE, A1)}, {DIM, DIM, FLAG}, LOCAL, W0, NOIP},
    [PLC_OP_POS_BWD] = {{B(F32, A1), B(STORAGE, A0, A1)}, {DIM, DIM, FLAG}, LOCAL, W0, NOIP},
    [PLC_OP_ADD] = {{B(STORAGE, A0), B(STORAGE, A0), B(STORAGE, A0)}, {DIM}, LOCAL, W0, IP2(0, 1, 0, 2)},
    [PLC_OP_ACCUMULATE] = {{B(STORAGE, A0), B(STORAGE, A0)}, {DIM}, LOCAL, W0, NOIP},
    [PLC_OP_SCALE] = {{B(STORAGE, A0)}, {DIM}, LOCAL, W0, NOIP},
    [PLC_OP_XENT_MAX] = {{B(F32, A0), B(STORAGE, A0, A1)}, {DIM, DIM}, LOCAL, W0, NOIP},
    [PLC_OP_XENT_SUMEXP] = {{B(F32, A0), B(F32, A0), B(STORAGE, A0, A1), B(I32, A0), B(F32, A0)},
                            {DIM, DIM, FLAG},
                            LOCAL, W0 | W1, NOIP},
    [PLC_OP_XENT_LOSS] = {{OPT(STORAGE, A0, A1), B(F64, ONE), B(STORAGE, A0, A1), B(I32, A0), B(F32, A0), B(F32, A0),
                           B(F32, A0)},
                          {DIM, DIM, FLAG},
                          LOCAL, W0 | W1, IP1(0, 2)},
    [PLC_OP_SUMSQ] = {{B(F64, ONE), B(F32, A0)}, {DIM}, LOCAL, W0, NOIP},
    [PLC_OP_CLIP_SCALE] = {{B(F32, ONE), B(F64, ONE)}, {0}, LOCAL, W0, NOIP},
    [PLC_OP_ADAMW] = {{B(FLOAT, A0), B(F32, A0), B(F32, A0), B(F32, A0), B(F32, ONE), OPT(F32, A0)}, {DIM, FLAG}, LOCAL, W0 | W2 | W3 | W5, NOIP},
    [PLC_OP_CAST] = {{B(ANY, A0), B(ANY, A0)}, {DIM}, LOCAL, W0, NOIP},
    [PLC_OP_ALLREDUCE] = {{B(ANY, A0)}, {DIM, FLAG}, COLL, W0, NOIP},
    [PLC_OP_REDUCE_SCATTER] = {{B(ANY, A0), B(ANY, A0, GRP)}, {DIM}, COLL, W0, NOIP},
    [PLC_OP_ALLGATHER] = {{B(ANY, A0, GRP), B(ANY, A0)}, {DIM}, COLL, W0, NOIP},
    [PLC_OP_BROADCAST] = {{B(ANY, A0)}, {DIM, DIM}, COLL, W0, NOIP},
    [PLC_OP_SEND] = {{B(ANY, A0)}, {DIM}, PEER, 0, NOIP},
    [PLC_OP_RECV] = {{B(ANY, A0)}, {DIM}, PEER, W0, NOIP},
    /* mixture of experts (f32): E experts, top-k, prow permuted rows */
    [PLC_OP_MOE_ROUTE] = {{B(F32, A0, A1), B(I32, A0, A2), B(I32, A0, A2), B(F32, A0, A2), B(I32, A1), B(F32, A0, A1)},
                          {DIM, POS, POS, FLAG, POS, POS, FLAG},
                          LOCAL, W0 | W1 | W2 | W3 | W4, NOIP},
    [PLC_OP_MOE_ROUTE_BWD] = {{B(F32, A0, A1), B(F32, A0, A2), B(F32, A0, A1), B(I32, A0, A2), OPT(F32, PLC_FAC_A6, A1)},
                              {DIM, POS, POS, FLAG, POS, POS, POS},
                              LOCAL, W0, NOIP},
    [PLC_OP_MOE_PERMUTE] = {{B(F32, A3, A1), B(F32, A0, A1), B(I32, A0, A2)}, {DIM, DIM, POS, DIM}, LOCAL, W0, NOIP},
    [PLC_OP_MOE_PERMUTE_BWD] = {{B(F32, A0, A1), B(F32, A3, A1), B(I32, A0, A2)}, {DIM, DIM, POS, DIM}, LOCAL, W0, NOIP},
    [PLC_OP_MOE_UNPERMUTE] = {{B(F32, A0, A1), B(F32, A3, A1), B(I32, A0, A2), B(F32, A0, A2)},
                              {DIM, DIM, POS, DIM},
                              LOCAL, W0, NOIP},
    [PLC_OP_MOE_UNPERMUTE_BWD] = {{B(F32, A3, A1), B(F32, A0, A2), B(F32, A0, A1), B(F32, A3, A1), B(I32, A0, A2),
                                   B(F32, A0, A2)},
                                  {DIM, DIM, POS, DIM},
                                  LOCAL, W0 | W1, NOIP},
    [PLC_OP_MOE_MM] = {{B(F32, A1, A3), B(F32, A1, A2), B(F32, A0, A2, A3), B(I32, A0)},
                       {POS, DIM, DIM, DIM, FLAG},
                       LOCAL, W0, NOIP},
    [PLC_OP_MOE_MM_DW] = {{B(F32, A0, A2, A3), B(F32, A1, A2), B(F32, A1, A3), B(I32, A0)},
                          {POS, DIM, DIM, DIM},
                          LOCAL, W0, NOIP},
    [PLC_OP_MOE_SEQ_COUNTS] = {{B(F32, A4, A1), B(I32, A0, A2)}, {DIM, POS, POS, POS, POS}, LOCAL, W0, NOIP},
};

const plc_op_contract *plc_op_contract_of(plc_op op)
{
    return (unsigned)op < PLC_OP_COUNT ? &contracts[op] : NULL;
}

plc_comm_kind plc_op_comm(plc_op op)
{
    return (unsigned)op < PLC_OP_COUNT ? (plc_comm_kind)contracts[op].comm : PLC_COMM_NONE;
}

static int fail(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (err && errlen) vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

/* saturating product of the slot's factors; -1: no count */
static int64_t count_of(const plc_operand_rule *r, const plc_instr *in, int64_t group)
{
    int64_t n = 1;
    for (int k = 0; k < 4; k++) {
        int64_t f;
        switch ((plc_opd_factor)r->fac[k]) {
        case PLC_FAC_ONE: f = 1; break;
        case PLC_FAC_GROUP: f = group; break;
        case PLC_FAC_KEYS: f = in->arg[6] ? 1 : in->arg[2]; break;
        case PLC_FAC_ZERO: return -1;
        default: f = in->arg[r->fac[k] - PLC_FAC_A0]; break;
        }
        if (f < 0) return INT64_MAX;
        if (f && n > INT64_MAX / f) return INT64_MAX;
        n *= f;
    }
    return n;
}

/* the bytes operand k touches: its count of elements, or the whole buffer */
static void span_of(const plc_program *g, const plc_op_contract *c, const plc_instr *in, int64_t group, int k,
                    uint64_t *lo, uint64_t *hi)
{
    const plc_buffer *b = &g->buffers[in->buf[k]];
    int64_t n = count_of(&c->buf[k], in, group);
    uint64_t bytes = n < 0 ? b->bytes : (uint64_t)n * plc_dtype_size(b->dtype);
    *lo = b->offset;
    *hi = b->offset + (bytes < b->bytes ? bytes : b->bytes);
}

/* written slot w may be slot k in place */
static int in_place(const plc_op_contract *c, int w, int k)
{
    for (int i = 0; i < c->ninplace; i++)
        if ((c->inplace[i][0] == w && c->inplace[i][1] == k) || (c->inplace[i][0] == k && c->inplace[i][1] == w))
            return 1;
    return 0;
}

static const char *bname(const plc_buffer *b) { return b->name ? b->name : "?"; }
static const char *dname(int t) { return plc_dtype_name((plc_dtype)t) ? plc_dtype_name((plc_dtype)t) : "?"; }
static int is_float(int t) { return t == PLC_F32 || t == PLC_BF16; }

/* the instruction's fields each name something that exists: stream, phase,
 * buffers, the instruction waited for, group, peer, layer, and arguments in
 * the ranges their kinds allow */
static int check_fields(const plc_plan *p, const plc_program *g, uint32_t idx, const plc_op_contract *c, char *err,
                        size_t errlen)
{
    const plc_instr *in = &g->instrs[idx];
    const int64_t *a = in->arg;
    const plc_model *m = &p->model;
    if ((unsigned)in->stream >= PLC_STREAM_COUNT || (unsigned)in->phase >= PLC_PHASE_COUNT)
        return fail(err, errlen, "stream %d or phase %d out of range", (int)in->stream, (int)in->phase);
    for (int k = 0; k < PLC_INSTR_BUFS; k++)
        if (in->buf[k] < -1 || in->buf[k] >= (int32_t)g->nbuffers)
            return fail(err, errlen, "buf%d = %d is not a buffer id (the program has %u)", k, in->buf[k], g->nbuffers);
    if (in->wait < -1 || in->wait >= (int32_t)idx)
        return fail(err, errlen, "waits for instruction %d, which does not come before it", in->wait);
    if (in->op == PLC_OP_WAIT && in->wait < 0) return fail(err, errlen, "WAIT without an instruction to wait for");
    if (in->group < -1 || in->group >= (int32_t)p->ngroups)
        return fail(err, errlen, "group %d does not exist: not a group id (the plan has %u)", in->group, p->ngroups);
    if (c->comm == PLC_COMM_GROUP && in->group < 0) return fail(err, errlen, "collective without a group");
    if (in->peer < -1 || in->peer >= p->layout.pp)
        return fail(err, errlen, "peer %d is not a pipeline rank (pp = %lld)", in->peer, (long long)p->layout.pp);
    if (c->comm == PLC_COMM_PEER && in->peer < 0) return fail(err, errlen, "no peer");
    for (int k = 0; k < PLC_INSTR_FARGS; k++)
        if (in->farg[k] != in->farg[k]) return fail(err, errlen, "farg%d is NaN", k);
    if (in->layer < -1 || in->layer > m->layers) return fail(err, errlen, "layer %d out of range", in->layer);
    for (int k = 0; k < PLC_INSTR_ARGS; k++) {
        int64_t v = a[k];
        switch ((plc_arg_kind)c->arg[k]) {
        case PLC_ARG_DIM:
            if (v < 0 || v > MAX_DIM) return fail(err, errlen, "arg%d = %lld is out of range", k, (long long)v);
            break;
        case PLC_ARG_POS:
            if (v < 1 || v > MAX_DIM) return fail(err, errlen, "arg%d = %lld is out of range", k, (long long)v);
            break;
        case PLC_ARG_FLAG:
            if (v != 0 && v != 1) return fail(err, errlen, "arg%d = %lld must be 0 or 1", k, (long long)v);
            break;
        case PLC_ARG_FREE: break;
        }
    }
    return 0;
}

/* each operand the row names is present (unless optional), of the dtype the
 * row asks for, and holds the elements the op touches */
static int check_operands(const plc_program *g, const plc_instr *in, const plc_op_contract *c, int64_t group, char *err,
                          size_t errlen)
{
    /* the storage dtype: that of the first STORAGE operand present */
    int storage = -1;
    for (int k = 0; k < PLC_INSTR_BUFS && storage < 0; k++)
        if (c->buf[k].type == PLC_OPD_STORAGE && in->buf[k] >= 0) {
            const plc_buffer *b = &g->buffers[in->buf[k]];
            if (!is_float(b->dtype))
                return fail(err, errlen, "operand buf%d '%s' has dtype %s; compute operands are f32 or bf16", k,
                            bname(b), dname(b->dtype));
            storage = b->dtype;
        }
    for (int k = 0; k < PLC_INSTR_BUFS; k++) {
        const plc_operand_rule *r = &c->buf[k];
        if (r->type == PLC_OPD_UNUSED) continue;
        if (in->buf[k] < 0) {
            if (r->optional) continue;
            return fail(err, errlen, "operand buf%d is missing", k);
        }
        const plc_buffer *b = &g->buffers[in->buf[k]];
        int t = b->dtype, ok = 1, want = -1;
        switch ((plc_opd_type)r->type) {
        case PLC_OPD_STORAGE: ok = t == storage; want = storage; break;
        case PLC_OPD_ACC: ok = t == PLC_F32 || t == storage; want = storage; break;
        case PLC_OPD_FLOAT: ok = is_float(t); break;
        case PLC_OPD_F32: ok = t == PLC_F32; want = PLC_F32; break;
        case PLC_OPD_I32: ok = t == PLC_I32; want = PLC_I32; break;
        case PLC_OPD_F64: ok = t == PLC_F64; want = PLC_F64; break;
        case PLC_OPD_ANY: ok = (unsigned)t < PLC_DTYPE_COUNT; break;
        case PLC_OPD_UNUSED: break;
        }
        if (!ok) {
            if (want >= 0)
                return fail(err, errlen, "operand buf%d '%s' has dtype %s, expected %s", k, bname(b), dname(t), dname(want));
            return fail(err, errlen, "operand buf%d '%s' has dtype %s, which this op does not take", k, bname(b), dname(t));
        }
        int64_t need = count_of(r, in, group);
        int64_t cap = (int64_t)(b->bytes / plc_dtype_size(b->dtype));
        if (need > cap)
            return fail(err, errlen, "operand buf%d '%s' holds %lld elements, the op touches %lld", k, bname(b),
                        (long long)cap, (long long)need);
    }
    return 0;
}

/* in-place rules (plan.h): a written operand shares bytes with another only
 * as the row allows */
static int check_overlaps(const plc_program *g, const plc_instr *in, const plc_op_contract *c, int64_t group, char *err,
                          size_t errlen)
{
    for (int w = 0; w < PLC_INSTR_BUFS; w++) {
        if (!(c->writes >> w & 1u) || in->buf[w] < 0) continue;
        uint64_t w0, w1;
        span_of(g, c, in, group, w, &w0, &w1);
        for (int k = 0; k < PLC_INSTR_BUFS; k++) {
            if (k == w || in->buf[k] < 0 || c->buf[k].type == PLC_OPD_UNUSED) continue;
            if ((c->writes >> k & 1u) && k < w) continue; /* this pair was seen from k */
            uint64_t k0, k1;
            span_of(g, c, in, group, k, &k0, &k1);
            if (w1 <= k0 || k1 <= w0) continue;
            if (k0 == w0 && in_place(c, w, k)) continue;
            if (in->op == PLC_OP_ALLGATHER && k == 1 && k0 >= w0 && k1 <= w1 && (k0 - w0) % (k1 - k0) == 0)
                continue; /* one slice of the destination; plrun checks it is the rank's own */
            return fail(err, errlen, "operand buf%d '%s' overlaps buf%d '%s', which the op writes; %s", k,
                        bname(&g->buffers[in->buf[k]]), w, bname(&g->buffers[in->buf[w]]),
                        in_place(c, w, k) ? "in place they must start at the same byte" : "they may not share bytes");
        }
    }
    return 0;
}

/* the rules a row does not state: an op's arguments against the model, the
 * layout and its own operands */
static int check_op_rules(const plc_plan *p, const plc_program *g, const plc_instr *in, int64_t group, char *err,
                          size_t errlen)
{
    const int64_t *a = in->arg;
    const plc_model *m = &p->model;
    const int64_t cp = p->layout.cp;
    const plc_buffer *b0 = in->buf[0] >= 0 ? &g->buffers[in->buf[0]] : NULL;
    const plc_buffer *b1 = in->buf[1] >= 0 ? &g->buffers[in->buf[1]] : NULL;
    switch (in->op) {
    case PLC_OP_COPY:
        if (b0->bytes != b1->bytes || b0->dtype != b1->dtype)
            return fail(err, errlen, "COPY between buffers of different size or dtype ('%s', '%s')", bname(b0), bname(b1));
        break;
    case PLC_OP_DATA_LOAD: {
        int64_t per_dp = p->train.global_batch / p->layout.dp;
        if ((a[0] + 1) * a[1] > per_dp)
            return fail(err, errlen, "micro-batch %lld of %lld sequences lies outside the %lld sequences of a data-parallel rank",
                        (long long)a[0], (long long)a[1], (long long)per_dp);
        if (a[2] * cp != m->seq_len)
            return fail(err, errlen, "local sequence length %lld x cp %lld is not seq_len %lld", (long long)a[2],
                        (long long)cp, (long long)m->seq_len);
        break;
    }
    case PLC_OP_EMBED_FWD:
    case PLC_OP_EMBED_BWD: {
        int64_t shards = a[3] ? p->layout.tp : 1;
        if (a[2] != plc_shard_block(m->vocab, shards))
            return fail(err, errlen, "vocab_local %lld is not the vocabulary of %lld over %lld shards (padded: %lld)",
                        (long long)a[2], (long long)m->vocab, (long long)shards,
                        (long long)plc_shard_block(m->vocab, shards));
        break;
    }
    case PLC_OP_RMSNORM_FWD:
        if (!(in->farg[0] > 0)) return fail(err, errlen, "RMSNorm epsilon %g is not positive", in->farg[0]);
        break;
    case PLC_OP_LAYERNORM_FWD:
        if (!(in->farg[0] > 0)) return fail(err, errlen, "LayerNorm epsilon %g is not positive", in->farg[0]);
        break;
    case PLC_OP_POS_FWD:
    case PLC_OP_POS_BWD: {
        /* the table has seq_len rows; the rows of x are micro-batch rows of
         * seq_len / cp tokens each, or a tp rank's block of them */
        const plc_buffer *table = in->op == PLC_OP_POS_FWD ? b1 : b0;
        int64_t shards = a[2] ? p->layout.tp : 1;
        if (m->positions != PLC_POS_LEARNED) return fail(err, errlen, "learned positions in a model with RoPE");
        if ((int64_t)(table->bytes / plc_dtype_size(table->dtype)) < m->seq_len * a[1])
            return fail(err, errlen, "position table '%s' holds fewer than seq_len %lld rows of %lld", bname(table),
                        (long long)m->seq_len, (long long)a[1]);
        if ((a[0] * shards) % (m->seq_len / cp))
            return fail(err, errlen, "%lld rows x %lld shards are not whole sequences of %lld tokens", (long long)a[0],
                        (long long)shards, (long long)(m->seq_len / cp));
        break;
    }
    case PLC_OP_ROPE_FWD:
    case PLC_OP_ROPE_BWD:
        if (a[3] % 2) return fail(err, errlen, "head dimension %lld is odd", (long long)a[3]);
        if (cp > 1 && a[1] * cp != m->seq_len)
            return fail(err, errlen, "RoPE over %lld positions, but a context-parallel rank holds %lld", (long long)a[1],
                        (long long)(m->seq_len / cp));
        if (!(in->farg[0] > 0)) return fail(err, errlen, "RoPE theta %g is not positive", in->farg[0]);
        break;
    case PLC_OP_MATMUL:
        /* the CPU kernels' sgemm (kernels/cpu/blas.h) and cuBLAS take int
         * dimensions and leading dimensions, which here are M, N and K */
        for (int k = 0; k < 3; k++)
            if (a[k] > INT_MAX)
                return fail(err, errlen, "matmul dimension arg%d = %lld does not fit BLAS's int (at most %d)", k,
                            (long long)a[k], INT_MAX);
        break;
    case PLC_OP_ATTN_FWD:
    case PLC_OP_ATTN_BWD: {
        int64_t Tq = a[1], Tk = a[2], H = a[3], KV = a[4];
        if (H % KV) return fail(err, errlen, "%lld heads do not group over %lld kv heads", (long long)H, (long long)KV);
        /* the tile products' leading dimensions: H hd, KV hd and Tk */
        if (Tk > INT_MAX || (H > 0 && a[5] > INT_MAX / H))
            return fail(err, errlen, "attention of %lld keys and %lld x %lld head elements does not fit BLAS's int",
                        (long long)Tk, (long long)H, (long long)a[5]);
        if (!(Tk == Tq && (cp == 1 || Tq * cp == m->seq_len)) && !(cp > 1 && Tk == Tq * cp && Tk == m->seq_len))
            return fail(err, errlen, "attention of %lld queries over %lld keys does not match seq_len %lld with cp %lld",
                        (long long)Tq, (long long)Tk, (long long)m->seq_len, (long long)cp);
        break;
    }
    case PLC_OP_REDUCE_SCATTER:
    case PLC_OP_ALLGATHER:
        if (b0->dtype != b1->dtype) return fail(err, errlen, "source and destination dtypes differ");
        break;
    case PLC_OP_MOE_ROUTE:
        if (a[2] > a[1]) return fail(err, errlen, "top-%lld of %lld experts", (long long)a[2], (long long)a[1]);
        if (a[5] < a[0] * a[2] && a[5] < a[1] * a[4])
            return fail(err, errlen, "%lld permuted rows hold neither the %lld routed rows nor %lld experts' capacity of %lld",
                        (long long)a[5], (long long)(a[0] * a[2]), (long long)a[1], (long long)a[4]);
        if (in->buf[2] >= 0 && in->buf[2] == in->buf[1]) return fail(err, errlen, "MOE_ROUTE's expert and pos share a buffer");
        break;
    case PLC_OP_MOE_ROUTE_BWD:
    case PLC_OP_MOE_SEQ_COUNTS: {
        int64_t seqs = in->op == PLC_OP_MOE_SEQ_COUNTS ? a[4] : a[6];
        if (a[2] > a[1]) return fail(err, errlen, "top-%lld of %lld experts", (long long)a[2], (long long)a[1]);
        if (a[4 - (in->op == PLC_OP_MOE_SEQ_COUNTS)] * seqs != a[0])
            return fail(err, errlen, "%lld rows are not %lld sequences of %lld", (long long)a[0], (long long)seqs,
                        (long long)a[4 - (in->op == PLC_OP_MOE_SEQ_COUNTS)]);
        if (in->op == PLC_OP_MOE_ROUTE_BWD && a[5] < a[4])
            return fail(err, errlen, "a whole sequence of %lld rows is shorter than its %lld rows here", (long long)a[5],
                        (long long)a[4]);
        break;
    }
    case PLC_OP_MOE_MM:
    case PLC_OP_MOE_MM_DW:
        for (int k = 1; k < 4; k++)
            if (a[k] > INT_MAX)
                return fail(err, errlen, "expert matmul dimension arg%d = %lld does not fit BLAS's int (at most %d)", k,
                            (long long)a[k], INT_MAX);
        break;
    case PLC_OP_BROADCAST:
        if (a[1] >= group) return fail(err, errlen, "root %lld is outside the group of %lld", (long long)a[1], (long long)group);
        break;
    default: break;
    }
    return 0;
}

int plc_instr_check(const plc_plan *p, const plc_program *g, uint32_t idx, char *err, size_t errlen)
{
    const plc_instr *in = &g->instrs[idx];
    const plc_op_contract *c = plc_op_contract_of(in->op);
    if (!c) return fail(err, errlen, "unknown op %d (out of range)", (int)in->op);
    if (check_fields(p, g, idx, c, err, errlen)) return -1;
    int64_t group = c->comm == PLC_COMM_GROUP && in->group >= 0 ? plc_plan_group_size(&p->layout, &p->groups[in->group]) : 1;
    if (check_operands(g, in, c, group, err, errlen)) return -1;
    if (check_overlaps(g, in, c, group, err, errlen)) return -1;
    return check_op_rules(p, g, in, group, err, errlen);
}
