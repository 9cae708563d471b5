/* backend_cpu_bf16.h: how the CPU backend runs bf16 plans with its fp32
 * kernels, emulating the CUDA kernels' storage exactly.
 *
 * The CUDA kernels load bf16 operands, compute in fp32 and round each
 * output element once to bf16 (round to nearest, ties to even) when they
 * store it; a backward "+=" output is loaded, accumulated in fp32 and
 * rounded once. The CPU backend does the same around each fp32 kernel:
 *
 *     float *x = plc_bf16_in(st, x_ptr, dt, n);    widen an input
 *     float *y = plc_bf16_out(st, y_ptr, dt, n);   widen an output (its old
 *                                                  values too, for += and
 *                                                  for elements a kernel
 *                                                  leaves alone)
 *     kernel(y, x, ...);                           the fp32 kernel
 *     plc_bf16_finish(st, err, len);               round outputs back, free
 *
 * An fp32 operand is passed through untouched (no copy), so fp32 plans run
 * exactly as before. The same pointer viewed twice in one call (an output
 * aliasing an input, as RMSNorm and RoPE allow) shares one fp32 copy.
 *
 * The fp32 copies come from one staging area allocated when the backend is
 * created, sized by plc_bf16_stage_need() for the plan's largest
 * instruction, so no instruction allocates. */
#ifndef PLC_RUNTIME_BACKEND_CPU_BF16_H
#define PLC_RUNTIME_BACKEND_CPU_BF16_H

#include <stddef.h>
#include <stdint.h>

#include "plc/plan.h"

#define PLC_BF16_MAX_VIEWS PLC_INSTR_BUFS

typedef struct plc_bf16_view {
    const void *src;  /* the bf16 tensor */
    float *f32;       /* its fp32 copy in the staging area */
    int64_t n;        /* elements */
    int out;          /* rounded back by plc_bf16_finish */
} plc_bf16_view;

typedef struct plc_bf16_stage {
    float *base;      /* the staging area */
    size_t cap;       /* its size in floats */
    size_t used;      /* floats handed out to the current call */
    int nviews;
    plc_bf16_view views[PLC_BF16_MAX_VIEWS];
    char error[160];  /* set when a view did not fit; plc_bf16_finish reports it */
} plc_bf16_stage;

/* Floats of staging the plan's largest compute instruction needs: over the
 * instructions of every program, the sum of its distinct bf16 operands'
 * capacities (plus alignment). 0 for an fp32 plan. */
size_t plc_bf16_stage_need(const plc_plan *plan);

/* Allocates `floats` of staging (none for 0); 0, or -1 when out of memory. */
int plc_bf16_stage_init(plc_bf16_stage *st, size_t floats);
void plc_bf16_stage_free(plc_bf16_stage *st);

/* fp32 views of n elements stored as dt. NULL for a NULL pointer, and NULL
 * with st->error set when the staging area is exhausted or dt is neither
 * F32 nor BF16: check plc_bf16_failed before the kernel runs. */
const float *plc_bf16_in(plc_bf16_stage *st, const void *p, plc_dtype dt, int64_t n);
float *plc_bf16_out(plc_bf16_stage *st, void *p, plc_dtype dt, int64_t n);

/* non-zero when a view of this call failed (st->error says why) */
int plc_bf16_failed(const plc_bf16_stage *st);

/* Rounds every output view back to its bf16 tensor and releases all views.
 * Returns 0, or -1 with the message in err when a view of this call had
 * failed (nothing is written back then). */
int plc_bf16_finish(plc_bf16_stage *st, char *err, size_t errlen);

#endif
