/* exec_check.c: every instruction of a program checked against plan.h's
 * operand contract (plc_instr_check, common/plan_ops.c) before the first
 * step, plus what needs the communicator (group membership, the rank's own
 * stage, the slice an in-place allgather sends), so a wrong or hostile plan
 * fails with its location instead of reading outside a buffer. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "common/plan_io.h"
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

/* the instruction's group: this rank must be a member */
static int group_ok(checker *c)
{
    int32_t g = c->in->group;
    if (c->comm && c->comm->groups && !c->comm->groups[g].member)
        return bad(c, "this rank is not a member of group %d (%s)", g,
                   c->plan->groups[g].name ? c->plan->groups[g].name : "?");
    return 0;
}

/* The operand contract (plc_instr_check, shared with the plan validator),
 * then what only a rank can tell: its groups and its own stage. */
static int check_instr(checker *c)
{
    const plc_instr *in = c->in;
    char what[384];
    if (plc_instr_check(c->plan, c->prog, c->idx, what, sizeof what)) return bad(c, "%s", what);
    const plc_op_contract *k = plc_op_contract_of(in->op);
    if (k->comm == PLC_COMM_GROUP && group_ok(c)) return -1;
    if (in->op == PLC_OP_ALLGATHER && c->comm && c->comm->groups) {
        /* a source inside the destination (plan.h's in-place rules) must be
         * this rank's own slice: MPI's in-place allgather */
        const plc_buffer *dst = &c->prog->buffers[in->buf[0]], *src = &c->prog->buffers[in->buf[1]];
        const uint64_t slice = (uint64_t)in->arg[0] * plc_dtype_size(dst->dtype);
        const uint64_t own = dst->offset + (uint64_t)c->comm->groups[in->group].rank * slice;
        if (src->offset >= dst->offset && src->offset < dst->offset + dst->bytes && src->offset != own)
            return bad(c, "the source '%s' lies in the destination '%s' but is not this rank's slice (group rank %d)",
                       src->name ? src->name : "?", dst->name ? dst->name : "?", c->comm->groups[in->group].rank);
    }
    if (plc_op_comm(in->op) == PLC_COMM_PEER) {
        int64_t own = c->comm ? c->comm->coords.pp : -1;
        if (in->peer == own)
            return bad(c, "peer pipeline rank %d is this rank's own stage", in->peer);
    }
    return 0;
}

int plc_exec_check_program(const plc_plan *plan, const plc_program *prog, const plc_comm *comm,
                           char *err, size_t errlen)
{
    for (uint32_t b = 0; b < prog->nbuffers; b++) {
        const plc_buffer *buf = &prog->buffers[b];
        if ((unsigned)buf->dtype >= PLC_DTYPE_COUNT || buf->offset % PLC_PLAN_ALIGN ||
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
    checker c = {plan, prog, comm, 0, NULL, err, errlen};
    for (uint32_t i = 0; i < prog->ninstrs; i++) {
        c.idx = i;
        c.in = &prog->instrs[i];
        if (check_instr(&c)) return -1;
    }
    return 0;
}
