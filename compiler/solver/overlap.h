/* overlap.h: what of each communication the engine hides under compute, the
 * overlap terms of the time model (docs/solver.md, "Overlap"). Each function
 * takes the communication's full cost and the compute it may run under, and
 * returns the exposed part: the whole cost when the engine's profile
 * (job->engine, docs/engines.md) does not overlap it. */
#ifndef PLC_OVERLAP_H
#define PLC_OVERLAP_H

#include "plc/job.h"

/* A layer's tensor-parallel collectives in one direction (comm seconds)
 * against its matmuls (gemm seconds). With tp_overlap and sequence
 * parallelism the all-gathers and reduce-scatters are split into tp chunks
 * pipelined with the GEMM pieces (Transformer Engine userbuffers): the
 * first chunk is exposed, and whatever outlasts the GEMMs. */
double plc_overlap_tp(const plc_job *job, const plc_layout *l, double comm, double gemm);

/* The step's gradient reductions (comm seconds, the first layer's share
 * first_layer) against the backward that can hide them (window seconds).
 * With grad_reduce_overlap a layer's reduction runs once its gradients are
 * final, so only what outlasts the window, and at least the first layer's
 * (the last to be final), is exposed; without it all of it follows the
 * backward. */
double plc_overlap_grad_reduce(const plc_job *job, double comm, double first_layer, double window);

/* ZeRO 1 and 2: the all-gather of the updated weights after the optimizer
 * (comm seconds, over `layers` buckets) against the next step's first
 * forward pass through the stage (forward seconds). With
 * param_gather_overlap each bucket is gathered under the forward of the
 * layer before it (Megatron --overlap-param-gather): the first bucket is
 * exposed, and what outlasts the forward. */
double plc_overlap_param_gather(const plc_job *job, double comm, int64_t layers, double forward);

/* ZeRO 3: one layer's gather (gather seconds) each time a stage enters a
 * layer, `entries` times a step in runs of `run` layers (a pass through the
 * stage's layers), each under the compute of the layer before it (per_layer
 * seconds). With param_gather_overlap (prefetch on a side stream) the first
 * gather of each run is exposed and each other one beyond per_layer; without
 * it every gather is on the critical path. */
double plc_overlap_layer_gathers(const plc_job *job, double gather, double entries, int64_t run, double per_layer);

/* The pipeline's point-to-point messages of a step (count messages of msg
 * seconds) against the compute of one chunk (chunk seconds). With
 * p2p_overlap and the interleaved schedule a message is sent and received
 * while the rank runs another chunk: only what outlasts it is exposed. */
double plc_overlap_p2p(const plc_job *job, const plc_layout *l, double count, double msg, double chunk);

/* How many collectives a data-parallel gradient reduction or ZeRO 1/2
 * weight gather of `elems` elements is issued as: with the engine's
 * dp_bucket (elements) the flat buffer is cut into buckets of that size,
 * each one collective (Megatron's gradient buffer); without it (0) the
 * lowering's own count, `unbucketed` (a bucket per layer under ZeRO 0, a
 * collective per parameter tensor otherwise). Each collective pays its
 * latency, so this is what a many-node data-parallel group waits for. */
double plc_dp_collectives(const plc_job *job, double elems, double unbucketed);

#endif
