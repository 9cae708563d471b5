/* compiler/solver/solver_int.h: the solver stage's internal interface, for its own files
 * (and unit tests): the public header plus what only the stage uses. */
#ifndef PLC_COMPILER_SOLVER_INT_H
#define PLC_COMPILER_SOLVER_INT_H

#include "compiler/solver/solver.h"

/* a catalog share (an efficiency), 1 where the catalog leaves it 0 */
static inline double plc_share_or_one(double x) { return x > 0 ? x : 1.0; }

/* The vocabulary a last-stage rank's logits and loss span: its shard of the
 * padded vocabulary, or all of it where the engine gathers the head's
 * output over the tp group before the loss (gathered_logits). The memory
 * and time models both take it from here. */
static inline int64_t plc_loss_vocab(const plc_job *job, const plc_layout *l)
{
    return job->engine.gathered_logits > 0 ? plc_vocab_padded(job->model.vocab, l->tp)
                                           : plc_vocab_local(job->model.vocab, l->tp);
}

/* ---- collectives.c --------------------------------------------------------- */
/* hierarchical latency-bandwidth costs of collectives and of
 * point-to-point messages, and which groups span nodes under the Megatron
 * rank order (tp fastest, then cp, dp, pp). The public primitives are
 * declared in compiler/solver/solver.h. */

#include <stdint.h>

/* One communicator group of the layout: its size and how its members lie on
 * the nodes. */
typedef struct plc_comm_group {
    int64_t size;
    int64_t per_node; /* members on each node it touches */
} plc_comm_group;

/* Group of a dimension whose ranks are `stride` apart (stride = product of the
 * faster dimensions) on nodes of gpus_per_node GPUs. */
plc_comm_group plc_group_place(int64_t size, int64_t stride, int64_t gpus_per_node);

typedef struct plc_layout_groups {
    plc_comm_group tp, cp, dp, pp, dpcp; /* dpcp: data x context, the gradient group */
} plc_layout_groups;

void plc_layout_groups_of(const plc_layout *l, int64_t gpus_per_node, plc_layout_groups *out);

/* Ring and tree costs separately (tests compare them; both take NVLS for
 * an in-node all-reduce where the catalog gives nvls_bus_bw and it is
 * faster); plc_cost_collective takes the better of the two. */
double plc_cost_collective_ring(const plc_hw *hw, plc_collective_kind kind, double bytes,
                                int64_t group_size, int64_t per_node);
double plc_cost_collective_tree(const plc_hw *hw, plc_collective_kind kind, double bytes,
                                int64_t group_size, int64_t per_node);

static inline double plc_cost_group(const plc_hw *hw, plc_collective_kind kind, double bytes,
                                    plc_comm_group g)
{
    return plc_cost_collective(hw, kind, bytes, g.size, g.per_node);
}

/* ---- time_model.c: losses of large runs ------------------------------------ */
/* the wait for the slowest node at the end of a step of `step` seconds
 * (catalog figure straggler_cv; docs/solver.md, "Losses of large runs") */
double plc_sync_loss(const plc_job *job, const plc_layout *l, double step);

/* ---- overlap.c ------------------------------------------------------------- */
/* what of each communication the engine hides under compute, the
 * overlap terms of the time model (docs/solver.md, "Overlap"). Each function
 * takes the communication's full cost and the compute it may run under, and
 * returns the exposed part: the whole cost when the engine's profile
 * (job->engine, docs/engines.md) does not overlap it; when it does, the part
 * that outlasts the compute plus overlap_sm_share of the hidden part (the
 * compute slowed by the SMs the collective's kernels hold). */

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

/* The same terms split (plc_overlap, solver.h): the exposed part, and the
 * charged figure the functions above return. */
plc_overlap plc_overlap_tp_split(const plc_job *job, const plc_layout *l, double comm, double gemm);
plc_overlap plc_overlap_grad_reduce_split(const plc_job *job, double comm, double first_layer, double window);
plc_overlap plc_overlap_param_gather_split(const plc_job *job, double comm, int64_t layers, double forward);
plc_overlap plc_overlap_layer_gathers_split(const plc_job *job, double gather, double entries, int64_t run,
                                            double per_layer);
plc_overlap plc_overlap_p2p_split(const plc_job *job, const plc_layout *l, double count, double msg, double chunk);

/* How many collectives a data-parallel gradient reduction or ZeRO 1/2
 * weight gather of `elems` elements is issued as: with the engine's
 * dp_bucket (elements) the flat buffer is cut into buckets of that size,
 * each one collective (Megatron's gradient buffer); without it (0) the
 * lowering's own count, `unbucketed` (a bucket per layer under ZeRO 0, a
 * collective per parameter tensor otherwise). Each collective pays its
 * latency, so this is what a many-node data-parallel group waits for. */
double plc_dp_collectives(const plc_job *job, double elems, double unbucketed);

/* ---- schedule_model.c ------------------------------------------------------ */
/* what a pipeline schedule costs: micro-batches in flight
 * (memory) and idle time (bubble), from simulating the schedule's order. */

#include <stdbool.h>
#include <stdint.h>

#include "plc/job.h"

/* Activations a rank of pipeline stage `stage` holds at its peak, in units of
 * "one micro-batch through all of the rank's layers" (plc_pipe_inflight). */
double plc_sched_inflight(plc_schedule s, int64_t pp, int64_t vpp, int64_t layers, int64_t micro, int64_t stage);

/* Result of simulating one step of the pipeline. */
typedef struct plc_sched_sim {
    double makespan;  /* first forward to last backward */
    double span_max;  /* the longest rank's own span, its first unit's start to its last unit's end */
    double busy_max;  /* busiest rank's compute time */
    double busy_mean;
    int64_t units;    /* (chunk, micro-batch, direction) units simulated */
} plc_sched_sim;

/* Simulates the schedule with per-layer forward time tf and backward time tb
 * (uniform), extra forward/backward time on the first and last stage
 * (embedding, head and loss), and p2p latency per hop between ranks. Every
 * rank runs its units in the schedule's order (plc_pipe_order), each as soon
 * as its inputs are ready. Returns 0, or -1 when the layers do not split into
 * the schedule's chunks or memory runs out. */
int plc_sched_simulate(plc_schedule s, int64_t pp, int64_t vpp, int64_t layers, int64_t micro,
                       double tf, double tb, double first_extra, double last_extra,
                       double p2p, plc_sched_sim *out);

/* The same over a shape (split ones too), with per-chunk times of a
 * forward, a backward (B of a split one) and a W (t_w read only for split
 * shapes, may be NULL otherwise), the times of each chunk taken as given:
 * the paper's op times are profiled per stage. Returns 0, or -1 when M does
 * not suit the order, memory runs out, or the order deadlocks. */
int plc_sched_simulate_shape(const plc_pipe_shape *sh, int64_t micro, const double *t_f, const double *t_b,
                             const double *t_w, double p2p, plc_sched_sim *out);

/* A zero-bubble order built from op times under a memory limit, after the
 * heuristic of Qi et al. 2024 (Sec. 3.2, the automatic scheduling its
 * ZB-1p and ZB-2p start from; not its ILP refinement): pp stages, stage s
 * taking t_f[s], t_b[s], t_w[s], messages p2p. Walking the ranks in time
 * order, a free rank runs its next B as soon as it can (the stage before
 * waits for it), else its next forward while fewer than `limit`
 * micro-batches are forwarded and not through W, else a W where the next B
 * or forward cannot start within a share of that W's time (1, 1/2, 0: three
 * candidates) or the limit holds the forwards back, else idles until one
 * can start. With the handcrafted zb_h1 and zb_h2 where they hold at most
 * `limit`, the candidate with the shortest span (then makespan), simulated
 * as a static plan runs it, wins: never worse than those. Writes its
 * orders (pp * 3M units, rank by rank) and figures. Returns 0, or -1 (no
 * candidate within the limit, memory). */
int plc_sched_zb_auto(int64_t pp, int64_t M, int64_t limit, const double *t_f, const double *t_b, const double *t_w,
                      double p2p, plc_pipe_unit *order, plc_sched_sim *out);

/* Makespan of one step of a layer-major schedule (layered or modular):
 * per-layer forward time tf and backward tb per micro-batch, extra time per
 * micro-batch on the first and last layer (embedding; head and loss), p2p
 * seconds per message between ranks. O(layers), cheap enough for the
 * search; matches plc_sched_simulate's makespan (the unit tests compare
 * them). pp above PLC_SCHED_MAX_RANKS is treated as one rank. */
#define PLC_SCHED_MAX_RANKS 1024
double plc_sched_layer_major_makespan(plc_schedule s, int64_t pp, int64_t layers, int64_t micro, double tf,
                                      double tb, double first_extra, double last_extra, double p2p);

/* Idle share of a balanced pipeline: bubble / busy time of a rank, for tb/tf
 * = ratio. Closed forms (checked against the simulator in the tests) for
 * gpipe and 1f1b (pp-1)/m, interleaved (pp-1)/(vpp m), layered
 * (pp-1)((L/pp-1)m+1)/((L/pp)m), modular with m >= pp pp(pp-1)/(m L); the
 * simulator (memoised) for modular with fewer micro-batches than stages. */
double plc_sched_bubble_ratio(plc_schedule s, int64_t pp, int64_t vpp, int64_t layers,
                              int64_t micro, double ratio);

/* ---- moe_model.c ------------------------------------------------------------ */
/* What a mixture-of-experts layer adds to the memory and time models (the
 * file's header says how); zeros for a dense model. */

/* an all-to-all (collectives.c): bytes a rank sends over the n ranks,
 * inter_bytes of them as the network part counts them */
double plc_cost_all_to_all(const plc_hw *hw, double bytes, double inter_bytes, int64_t n, int64_t per_node);

/* is layer i (from 0) an MoE layer? MoE layers among [first, first + n) */
bool plc_moe_layer(const plc_model *m, int64_t layer);
int64_t plc_moe_layers_in(const plc_model *m, int64_t first, int64_t n);
/* the routed experts' parameters of one MoE layer, whole */
double plc_moe_routed_params_layer(const plc_model *m);

/* a rank of pipeline stage s: its MoE layers, its parameters but the routed
 * experts (tp-sharded, ZeRO over dp * cp) and its routed experts' (1 /
 * (ep * etp) of the stage's, ZeRO over edp) */
typedef struct plc_moe_stage {
    int64_t moe_layers;
    double dense, routed;
} plc_moe_stage;
void plc_moe_stage_params(const plc_model *m, const plc_layout *l, int64_t stage, plc_moe_stage *out);

/* rows a rank's experts take per MoE layer and micro-batch: the capacity,
 * or dropless the fair share x the stated imbalance */
double plc_moe_rows(const plc_job *job, const plc_layout *l);
/* bytes an MoE layer keeps for its backward per micro-batch beyond the
 * dense layer's (the router, the dispatched rows, the shared experts, less
 * the dense FFN) */
double plc_moe_act_layer_delta(const plc_job *job, const plc_layout *l);
/* MoE layers over all layers */
double plc_moe_layer_share(const plc_model *m);

/* one MoE layer, one micro-batch, beyond the dense layer's figures: GEMMs
 * (router, experts, shared experts, less the dense FFN), memory-bound work,
 * launches, the dispatch and combine as they run (a2a, both) and as
 * charged (ep_f, ep_b: less what the engine's overlap hides) */
typedef struct plc_moe_times {
    double matmul_f, matmul_b, mem_f, mem_b, launch_f, launch_b;
    double a2a, ep_f, ep_b;
} plc_moe_times;
void plc_moe_layer_times(const plc_job *job, const plc_layout *l, plc_moe_times *o);

#endif
