/* time_model.h: predicted time of one training step of a layout, split into
 * compute, memory-bound work, exposed communication by kind, bubble and
 * overhead. See docs/solver.md for the formulas. */
#ifndef PLC_TIME_MODEL_H
#define PLC_TIME_MODEL_H

#include "compiler/solver/solver.h"

/* Per-micro-batch times of one layer on one rank, the pieces the step is
 * assembled from (also used by tests and explain). */
typedef struct plc_layer_times {
    double matmul_f, matmul_b;   /* linear layers */
    double attn_f, attn_b;       /* attention core (scores, softmax, PV) */
    double mem_f, mem_b;         /* memory-bound element-wise work */
    double tp_f, tp_b;           /* tensor/sequence-parallel collectives */
    double cp_f, cp_b;           /* exposed context-parallel exchange */
    double launch_f, launch_b;   /* kernel launch overhead */
    double recompute;            /* extra forward work the backward repeats */
} plc_layer_times;

void plc_layer_times_of(const plc_job *job, const plc_layout *l, plc_layer_times *out);

/* The forward GEMMs of one layer on one rank for one micro-batch, M x K by
 * K x N (the backward runs each twice: data and weight gradients). */
enum { PLC_LAYER_GEMMS = 4 };
typedef struct plc_gemm_shape {
    const char *name; /* "qkv", "attn-out", "mlp-in", "mlp-out" */
    int64_t M, N, K;
} plc_gemm_shape;
void plc_layer_gemms(const plc_job *job, const plc_layout *l, plc_gemm_shape out[PLC_LAYER_GEMMS]);

/* Fills est->step_time_s, time[], micro_batches, bubble_fraction,
 * tokens_per_s, mfu and model_flops (est->valid must be true). */
void plc_time_estimate(const plc_job *job, const plc_layout *l, plc_estimate *est);

/* Peak FLOP/s of the device in the job's precision. */
double plc_peak_flops(const plc_job *job);

#endif
