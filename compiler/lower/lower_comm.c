/* lower_comm.c: communication in the lowering.
 *
 * Tensor and sequence parallelism (Megatron): column-parallel inputs are
 * all-gathered over tp with sp; row-parallel outputs are all-reduced over
 * tp, or reduce-scattered with sp. These run on the compute stream: the
 * next instruction needs their result.
 *
 * Gradients: ZeRO 0 keeps whole gradient blocks, all-reduced over dp x cp
 * in one bucket per layer right after the stage's last backward of that
 * layer, on the comm stream (overlapping the rest of the backward). ZeRO 1
 * reduce-scatters each block at the same point. ZeRO 2 and 3 compute each
 * run of backwards of a layer into a temporary block, reduce-scatter it when
 * the stage moves to another layer, and add the shard into the persistent
 * gradient shard one layer later (so the reduce-scatter overlaps that
 * layer's backward). ZeRO 3 all-gathers a layer's weights when the stage
 * enters the layer and drops them when it leaves. */
#include <stdio.h>
#include <string.h>

#include "common/plan_io.h"
#include "compiler/lower/lower_int.h"

int32_t lw_group(lw_ctx *c, uint32_t dims, uint32_t flags, const char *name)
{
    plc_group g = {dims, flags, name};
    if (plc_plan_group_size(&c->L, &g) <= 1) return -1;
    for (uint32_t i = 0; i < c->ngroups; i++)
        if (c->groups[i].dims == dims && c->groups[i].flags == flags) return (int32_t)i;
    c->groups[c->ngroups] = g;
    return (int32_t)c->ngroups++;
}

static int32_t collective(lw_ctx *c, plc_op op, plc_stream s, int32_t group, int32_t dst, int32_t src, int64_t count)
{
    int32_t idx = src >= 0 ? lw_emit(c->P, op, s, LW_B(dst, src), LW_A(count), 0.0)
                           : lw_emit(c->P, op, s, LW_B(dst), LW_A(count), 0.0);
    lw_last(c->P)->group = group;
    return idx;
}

int32_t lw_tp_allgather_rows(lw_ctx *c, int32_t src, int64_t cols, const char *what)
{
    if (!c->sp || c->g_tp < 0) return src;
    const plc_buffer *b = &c->P->bufs[src];
    int32_t dst = lw_buf_here(c->P, c->m.layers, b->kind, b->dtype, c->R, cols, what);
    collective(c, PLC_OP_ALLGATHER, PLC_STREAM_COMPUTE, c->g_tp, dst, src, c->Rs * cols);
    return dst;
}

int32_t lw_tp_reduce_rows(lw_ctx *c, int32_t partial, int64_t cols, const char *what)
{
    if (c->g_tp < 0) return partial;
    if (!c->sp) {
        collective(c, PLC_OP_ALLREDUCE, PLC_STREAM_COMPUTE, c->g_tp, partial, -1, c->R * cols);
        return partial;
    }
    const plc_buffer *b = &c->P->bufs[partial];
    int32_t dst = lw_buf_here(c->P, c->m.layers, b->kind, b->dtype, c->Rs, cols, what);
    collective(c, PLC_OP_REDUCE_SCATTER, PLC_STREAM_COMPUTE, c->g_tp, dst, partial, c->Rs * cols);
    return dst;
}

void lw_track(lw_ctx *c, int32_t op)
{
    if (c->nout == c->capout) {
        int32_t cap = c->capout ? c->capout * 2 : 256;
        int32_t *n = PLC_NEW_ARRAY(c->a, int32_t, cap);
        if (c->nout) memcpy(n, c->outstanding, sizeof *n * (size_t)c->nout);
        c->outstanding = n;
        c->capout = cap;
    }
    c->outstanding[c->nout++] = op;
}

void lw_wait_all(lw_ctx *c)
{
    for (int32_t i = 0; i < c->nout; i++) {
        lw_emit(c->P, PLC_OP_WAIT, PLC_STREAM_COMPUTE, NULL, 0, LW_NOARGS, 0.0);
        lw_last(c->P)->wait = c->outstanding[i];
    }
    c->nout = 0;
}

int32_t lw_weight(lw_ctx *c, int64_t tid)
{
    lw_tensor *t = &c->T[tid];
    if (c->zero < 3) return t->param;
    if (t->gathered >= 0) return t->gathered;
    /* ZeRO 3: all-gather the block for as long as the stage stays in this layer */
    t->gathered = lw_buf_padded(c->P, PLC_BUF_COMM, c->param_dt, t->rows, t->cols, t->chunk * c->nz, "%s.gathered",
                                t->info.name);
    collective(c, PLC_OP_ALLGATHER, PLC_STREAM_COMPUTE, c->g_dpcp, t->gathered, t->param, t->chunk);
    return t->gathered;
}

int32_t lw_weight_grad(lw_ctx *c, int64_t tid)
{
    lw_tensor *t = &c->T[tid];
    if (c->zero < 2) return t->grad;
    if (t->full_grad < 0) {
        t->full_grad = lw_buf_padded(c->P, PLC_BUF_TEMP, c->grad_dt, t->rows, t->cols, t->chunk * c->nz,
                                     "%s.grad_block", t->info.name);
        lw_emit(c->P, PLC_OP_ZERO, PLC_STREAM_COMPUTE, LW_B(t->full_grad), LW_NOARGS, 0.0);
    }
    return t->full_grad;
}

/* ZeRO 2/3's gradient blocks: a layer's (or the embedding's, the head's)
 * blocks are made by its backward and accumulated into while the stage
 * stays in the layer; after the last visit of that run that makes them
 * (plc_pipe_grads_later), they are reduce-scattered on the communication
 * stream into shards, and the shards' accumulation into the gradient
 * waits until the end of the next visit, which the reduction overlaps.
 * Block and shard live until then. */

/* emits the deferred accumulations of the reduce-scatters issued before
 * visit `before` of the stage */
static void flush_before(lw_ctx *c, int32_t before)
{
    int32_t keep = 0;
    for (int32_t i = 0; i < c->npend; i++) {
        lw_pending_acc *p = &c->pend[i];
        if (p->visit >= before) {
            c->pend[keep++] = *p;
            continue;
        }
        lw_tensor *t = &c->T[p->tensor];
        lw_emit(c->P, PLC_OP_ACCUMULATE, PLC_STREAM_COMPUTE, LW_B(t->grad, p->src), LW_A(t->chunk), 0.0);
        lw_last(c->P)->wait = p->op;
        t->sync_op = -1;
    }
    c->npend = keep;
}

void lw_flush_pending(lw_ctx *c) { flush_before(c, INT32_MAX); }

/* reduce-scatters the open gradient blocks, their accumulation deferred
 * past visit `visit` */
static void reduce_blocks(lw_ctx *c, int32_t visit)
{
    for (int64_t id = 0; id < c->ntensors; id++) {
        lw_tensor *t = &c->T[id];
        if (!t->present || t->full_grad < 0) continue;
        int32_t shard = lw_buf(c->P, PLC_BUF_COMM, c->grad_dt, 1, t->chunk, "%s.grad_rs", t->info.name);
        int32_t op = collective(c, PLC_OP_REDUCE_SCATTER, PLC_STREAM_COMM, c->g_dpcp, shard, t->full_grad, t->chunk);
        if (c->npend == c->cappend) {
            int32_t cap = c->cappend ? c->cappend * 2 : 64;
            lw_pending_acc *n = PLC_NEW_ARRAY(c->a, lw_pending_acc, cap);
            if (c->npend) memcpy(n, c->pend, sizeof *n * (size_t)c->npend);
            c->pend = n;
            c->cappend = cap;
        }
        c->pend[c->npend++] = (lw_pending_acc){(int32_t)id, shard, op, visit};
        t->full_grad = -1;
    }
}

void lw_switch_layer(lw_ctx *c, int32_t key)
{
    if (c->tpl && c->visit < LW_TEMPLATE_VISITS && !c->tpl->began[c->visit])
        c->tpl->began[c->visit] = true, c->tpl->start[c->visit] = (int32_t)c->P->nins;
    if (key == c->cur_key) return;
    c->cur_key = key;
    if (c->zero < 2) return;
    for (int64_t id = 0; id < c->ntensors; id++) {
        lw_tensor *t = &c->T[id];
        t->gathered = -1;
        if (t->present && t->full_grad >= 0) c->visit_bad = true; /* the visits' ends reduce every block */
    }
}

void lw_visit_end(lw_ctx *c)
{
    bool mark = c->tpl && c->visit < LW_TEMPLATE_VISITS;
    if (mark) c->tpl->at[c->visit][0] = (int32_t)c->P->nins;
    const lw_unit *order = c->sched.order[c->stage];
    bool grads;
    int64_t key = plc_pipe_visit(&c->sched.sh, &order[c->unit_k], c->visit_i, &grads);
    if (key != c->cur_key) c->visit_bad = true;
    if (c->zero >= 2) {
        flush_before(c, c->visit);
        if (grads && !plc_pipe_grads_later(&c->sched.sh, order, c->sched.norder[c->stage], c->unit_k, c->visit_i))
            reduce_blocks(c, c->visit);
    }
    if (mark) c->tpl->at[c->visit][1] = (int32_t)c->P->nins, c->tpl->visits = c->visit + 1;
    c->visit++;
    c->visit_i++;
}

void lw_grad_sync(lw_ctx *c, int32_t bucket, const int64_t *tensors, int n)
{
    if (c->zero >= 2 || c->g_dpcp < 0) return;
    plc_phase saved = c->P->phase;
    c->P->phase = PLC_PHASE_GRAD_SYNC;
    if (c->zero == 0) {
        if (bucket >= 0) {
            int64_t count = (int64_t)(c->P->bufs[bucket].bytes / plc_dtype_size(c->grad_dt));
            int32_t op = collective(c, PLC_OP_ALLREDUCE, PLC_STREAM_COMM, c->g_dpcp, bucket, -1, count);
            lw_track(c, op);
        }
    } else {
        for (int i = 0; i < n; i++) {
            lw_tensor *t = &c->T[tensors[i]];
            t->grad_shard = lw_buf(c->P, PLC_BUF_COMM, c->grad_dt, 1, t->chunk, "%s.grad_shard", t->info.name);
            int32_t op = collective(c, PLC_OP_REDUCE_SCATTER, PLC_STREAM_COMM, c->g_dpcp, t->grad_shard, t->grad,
                                    t->chunk);
            t->sync_op = op;
            lw_track(c, op);
        }
    }
    c->P->phase = saved;
}
