/* plan_validate.c: semantic checks of a plan, shared by the loader (a damaged
 * or hostile file) and the compiler (a lowering bug must never reach a file).
 * After these pass, every buffer lies inside its program's arena and every
 * instruction touches only elements inside its buffers, with the dtypes the
 * op expects (plc_instr_check, the operand contract of plan_ops.c), so the
 * runtime can execute without further bounds checks. */
#include <stdio.h>
#include <string.h>

#include "common/errmsg.h"
#include "common/plan_io.h"
#include "common/tensors.h"

#define MAX_DIM (INT64_C(1) << 40)

/* saturating product: an absurd shape fails the size check instead of
 * wrapping around */
static int64_t mul(int64_t a, int64_t b)
{
    if (a <= 0 || b <= 0) return a < 0 || b < 0 ? INT64_MAX : 0;
    if (a > INT64_MAX / b) return INT64_MAX;
    return a * b;
}

static int64_t mul3(int64_t a, int64_t b, int64_t c) { return mul(mul(a, b), c); }

static int validate_program(const plc_plan *p, uint32_t pi, char *err, size_t errlen)
{
    const plc_program *g = &p->programs[pi];
    int64_t ntensors = plc_tensor_count(&p->model);
    for (uint32_t i = 0; i < g->nbuffers; i++) {
        const plc_buffer *b = &g->buffers[i];
        const char *name = b->name ? b->name : "?";
        if (b->offset % PLC_PLAN_ALIGN)
            return plc_fail(err, errlen, "program %u buffer %u ('%s'): offset %llu is not %u-byte aligned", pi, i, name,
                            (unsigned long long)b->offset, PLC_PLAN_ALIGN);
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
        char what[384];
        if (plc_instr_check(p, g, i, what, sizeof what)) {
            const char *op = plc_op_name(g->instrs[i].op);
            return plc_fail(err, errlen, "program %u instruction %u (%s): %s", pi, i, op ? op : "?", what);
        }
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
    for (uint32_t i = 0; i < p->ngroups; i++) {
        const plc_group *g = &p->groups[i];
        if (g->dims == 0 || g->dims > 15 || g->flags > PLC_GROUP_PP_ENDS)
            return plc_fail(err, errlen, "damaged plan: group %u has dims 0x%x flags 0x%x", i, g->dims, g->flags);
        if ((g->flags & PLC_GROUP_PP_ENDS) && !(g->dims & PLC_DIM_PP))
            return plc_fail(err, errlen, "damaged plan: group %u (%s) keeps the pipeline ends but does not vary over pp",
                            i, g->name ? g->name : "?");
    }
    if (!p->stage_program) return plc_fail(err, errlen, "damaged plan: no stage map");
    for (int64_t s = 0; s < l->pp; s++)
        if (p->stage_program[s] < 0 || (uint32_t)p->stage_program[s] >= p->nprograms)
            return plc_fail(err, errlen, "damaged plan: stage %lld runs program %d, the plan has %u", (long long)s,
                            p->stage_program[s], p->nprograms);
    for (uint32_t pi = 0; pi < p->nprograms; pi++)
        if (validate_program(p, pi, err, errlen)) return -1;
    return 0;
}
