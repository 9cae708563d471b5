/* memory_model.h: bytes one rank holds at its peak, per pipeline stage and
 * component (weights, gradients, optimizer, activations, logits, temporaries,
 * communication buffers, workspaces, reserved). See docs/solver.md. */
#ifndef PLC_MEMORY_MODEL_H
#define PLC_MEMORY_MODEL_H

#include "compiler/solver/solver.h"

/* Bytes per element of the tensors of a precision. bf16 training: bf16
 * weights and activations, gradients accumulated in grad_bytes (fp32 unless
 * the catalog's grad_bytes says otherwise), fp32 master copy, Adam m and v
 * (2 + 4 + 12). fp32 training: 4 + 4 + 8. fp8 training (Transformer Engine's
 * recipe): as bf16, plus the fp8 copies of the linear layers' weights and
 * of their transposes that the GEMMs read (fp8_weights: 1 + 1), kept for the
 * step; activations are counted in bf16 (an upper bound: the recipe saves
 * the fp8 casts of the linear layers' inputs). */
typedef struct plc_dtype_bytes {
    double weight, grad, optimizer, act;
    double fp8_weights; /* bytes per parameter of the fp8 copies, 0 outside fp8 */
} plc_dtype_bytes;

plc_dtype_bytes plc_dtype_bytes_of(const plc_job *job);

/* Saved activation bytes of one transformer layer for one micro-batch on one
 * rank, without recompute effects beyond the layer itself:
 *   policy none: everything the backward reads; selective: the attention
 *   scores are recomputed; full: only the layer input. (block and every
 *   recompute some layers whole, plc_recomputed_layers: those keep what full
 *   keeps, the others what none keeps.) */
double plc_act_layer_bytes(const plc_job *job, const plc_layout *l, plc_recompute policy);

/* Fills est->stage_mem, stage_params, peak_bytes, peak_stage, limit_bytes and
 * fits (est->valid must already be true). all_stages false: only the first
 * and last stage (which bound the others) are filled in, for the search. */
void plc_memory_estimate(const plc_job *job, const plc_layout *l, bool all_stages, plc_estimate *est);

/* Bytes a rank of plrun holds outside its plan's arena: the communication
 * library's buffers (comm_buffer per group the rank belongs to), the matmul
 * workspace and the runtime's reserve (process baseline, CUDA context:
 * runtime_reserved), all figures the catalog measures. A lowered plan fits
 * when every stage's arena_bytes plus this is within the limit. */
double plc_runtime_fixed_bytes(const plc_job *job, const plc_layout *l);

/* A lower bound of the peak of any layout with these tp, pp, dp, cp and zero
 * (static state of the heaviest stage and reserved memory), for pruning. */
double plc_memory_lower_bound(const plc_job *job, int64_t tp, int64_t pp, int64_t dp,
                              int64_t cp, int64_t zero);

#endif
