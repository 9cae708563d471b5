/* backend_cpu_bf16.c: fp32 views of bf16 tensors for the CPU backend. See
 * backend_cpu_bf16.h. */
#include "runtime/backend_cpu_bf16.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/kernels.h"

/* views start on 64-byte boundaries, like arena buffers */
#define VIEW_ALIGN 16 /* floats */

static size_t aligned_floats(int64_t n) { return ((size_t)n + VIEW_ALIGN - 1) / VIEW_ALIGN * VIEW_ALIGN; }

/* the ops whose operands the CPU backend widens (every compute op but the
 * byte movers, casts and communication, which handle dtypes themselves) */
static int widens(plc_op op)
{
    if (plc_op_comm(op) != PLC_COMM_NONE) return 0;
    switch (op) {
    case PLC_OP_NOP: case PLC_OP_WAIT: case PLC_OP_ZERO: case PLC_OP_COPY: case PLC_OP_DATA_LOAD:
    case PLC_OP_CAST:
        return 0;
    default:
        return 1;
    }
}

size_t plc_bf16_stage_need(const plc_plan *plan)
{
    size_t need = 0;
    for (uint32_t p = 0; p < plan->nprograms; p++) {
        const plc_program *prog = &plan->programs[p];
        for (uint32_t i = 0; i < prog->ninstrs; i++) {
            const plc_instr *in = &prog->instrs[i];
            if (!widens(in->op)) continue;
            size_t sum = 0;
            for (int k = 0; k < PLC_INSTR_BUFS; k++) {
                int32_t id = in->buf[k];
                if (id < 0 || (uint32_t)id >= prog->nbuffers || prog->buffers[id].dtype != PLC_BF16) continue;
                int seen = 0; /* an operand named twice is widened once */
                for (int j = 0; j < k; j++) seen |= in->buf[j] == id;
                if (!seen) sum += aligned_floats((int64_t)(prog->buffers[id].bytes / 2));
            }
            if (sum > need) need = sum;
        }
    }
    return need;
}

int plc_bf16_stage_init(plc_bf16_stage *st, size_t floats)
{
    memset(st, 0, sizeof *st);
    if (floats == 0) return 0;
    st->base = aligned_alloc(64, floats * sizeof(float)); /* a multiple of 64 bytes */
    if (!st->base) return -1;
    memset(st->base, 0, floats * sizeof(float)); /* touched: the measured peak includes it */
    st->cap = floats;
    return 0;
}

void plc_bf16_stage_free(plc_bf16_stage *st)
{
    free(st->base);
    memset(st, 0, sizeof *st);
}

int plc_bf16_failed(const plc_bf16_stage *st) { return st->error[0] != 0; }

static float *view(plc_bf16_stage *st, const void *p, plc_dtype dt, int64_t n, int out)
{
    if (!p) return NULL;
    if (dt == PLC_F32) return (float *)(uintptr_t)p; /* fp32 storage: the tensor itself */
    if (dt != PLC_BF16) {
        snprintf(st->error, sizeof st->error, "a compute operand is %s (f32 or bf16 expected)",
                 plc_dtype_name(dt) ? plc_dtype_name(dt) : "?");
        return NULL;
    }
    if (n < 0) n = 0;
    for (int i = 0; i < st->nviews; i++) {
        plc_bf16_view *v = &st->views[i];
        if (v->src != p) continue;
        if (n > v->n) {
            snprintf(st->error, sizeof st->error,
                     "a bf16 tensor is used with %lld and %lld elements in one operation",
                     (long long)v->n, (long long)n);
            return NULL;
        }
        v->out |= out;
        return v->f32;
    }
    size_t need = aligned_floats(n);
    if (st->nviews == PLC_BF16_MAX_VIEWS || need > st->cap - st->used) {
        snprintf(st->error, sizeof st->error,
                 "the bf16 staging area (%zu floats, sized for the plan) cannot hold %lld more elements",
                 st->cap, (long long)n);
        return NULL;
    }
    plc_bf16_view *v = &st->views[st->nviews++];
    v->src = p;
    v->f32 = st->base + st->used;
    v->n = n;
    v->out = out;
    st->used += need;
    plc_k_cast_bf16_to_f32(v->f32, (const uint16_t *)p, n);
    return v->f32;
}

const float *plc_bf16_in(plc_bf16_stage *st, const void *p, plc_dtype dt, int64_t n)
{
    return view(st, p, dt, n, 0);
}

float *plc_bf16_out(plc_bf16_stage *st, void *p, plc_dtype dt, int64_t n)
{
    return view(st, p, dt, n, 1);
}

int plc_bf16_finish(plc_bf16_stage *st, char *err, size_t errlen)
{
    int failed = plc_bf16_failed(st);
    if (failed) snprintf(err, errlen, "%s", st->error);
    st->error[0] = 0;
    if (!failed)
        for (int i = 0; i < st->nviews; i++) {
            const plc_bf16_view *v = &st->views[i];
            if (v->out) plc_k_cast_f32_to_bf16((uint16_t *)(uintptr_t)v->src, v->f32, v->n);
        }
    st->nviews = 0;
    st->used = 0;
    return failed ? -1 : 0;
}
