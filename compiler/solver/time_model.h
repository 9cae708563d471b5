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

/* Fills est->step_time_s, time[], micro_batches, bubble_fraction,
 * tokens_per_s, mfu and model_flops (est->valid must be true). */
void plc_time_estimate(const plc_job *job, const plc_layout *l, plc_estimate *est);

/* Peak FLOP/s of the device in the job's precision. */
double plc_peak_flops(const plc_job *job);

#endif
