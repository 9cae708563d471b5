/* compiler/solver/solver.h: the solver stage's public interface, what the other stages,
 * the tools and the tests may use; the sections below are named after the
 * files that implement them. Internal helpers: solver_int.h. */
#ifndef PLC_COMPILER_SOLVER_H
#define PLC_COMPILER_SOLVER_H

/* ---- solver.h -------------------------------------------------------------- */
/* the solver's public interface.
 *
 * plc_estimate_layout  predicts memory and step time of one concrete layout;
 * plc_solve            searches the space the spec's layout block allows;
 * plc_cost_*           the cost primitives the estimate is built from, for
 *                      the predicted timeline of `plc trace`.
 *
 * Units: bytes, seconds, FLOP. All figures are per rank unless named
 * otherwise. The models are described in docs/solver.md. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/layout_rules.h"
#include "common/tensors.h"
#include "plc/arena.h"
#include "plc/job.h"
#include "plc/status.h"

/* ---- memory ---------------------------------------------------------------- */

typedef enum plc_mem_component {
    PLC_MEM_WEIGHTS,     /* parameters held by the rank (bf16 or fp32) */
    PLC_MEM_GRADS,       /* gradient accumulation buffer */
    PLC_MEM_OPTIMIZER,   /* fp32 master copy (bf16 training), Adam m and v */
    PLC_MEM_ACTIVATIONS, /* saved for backward, all micro-batches in flight */
    PLC_MEM_LOGITS,      /* logits, softmax and their gradient (last stage) */
    PLC_MEM_TEMPORARIES, /* transient buffers of the layer being computed */
    PLC_MEM_COMM,        /* communication library buffers, gathered shards */
    PLC_MEM_WORKSPACE,   /* matmul and attention library workspaces */
    PLC_MEM_RESERVED,    /* runtime context, allocator fragmentation */
    PLC_MEM_COUNT
} plc_mem_component;

const char *plc_mem_component_name(plc_mem_component c);

/* pipeline stages an estimate reports individually; larger pp is rejected */
#define PLC_MAX_STAGES PLC_RULES_MAX_STAGES

/* ---- time ------------------------------------------------------------------- */

typedef enum plc_time_component {
    PLC_TIME_COMPUTE,     /* matmuls and attention core (recompute included) */
    PLC_TIME_MEMORY,      /* memory-bound ops: norms, activations, loss, optimizer */
    PLC_TIME_COMM_TP,     /* exposed tensor/sequence-parallel collectives */
    PLC_TIME_COMM_CP,     /* exposed context-parallel exchange */
    PLC_TIME_COMM_PP,     /* exposed pipeline send/recv */
    PLC_TIME_COMM_DP,     /* exposed data-parallel gradient reduction */
    PLC_TIME_COMM_ZERO,   /* exposed ZeRO parameter gathers */
    PLC_TIME_BUBBLE,      /* pipeline idle time, stage imbalance included */
    PLC_TIME_OVERHEAD,    /* kernel launches and per-step fixed costs */
    PLC_TIME_COMM_EP,     /* exposed expert-parallel dispatch and combine (MoE layers) */
    PLC_TIME_COUNT
} plc_time_component;

const char *plc_time_component_name(plc_time_component c);

/* ---- one layout's estimate ---------------------------------------------- */

typedef struct plc_estimate {
    plc_layout layout;
    bool valid;        /* the layout is legal for the job (divisibility, ...) */
    bool fits;         /* valid and peak_bytes <= limit_bytes */
    char reason[192];  /* why it is invalid or does not fit; "" otherwise */

    /* memory */
    double peak_bytes;  /* most loaded rank */
    int peak_stage;     /* pipeline stage of that rank */
    double limit_bytes; /* memory_limit x device memory */
    int stages;         /* = pp; entries of stage_mem in use */
    double stage_mem[PLC_MAX_STAGES][PLC_MEM_COUNT];
    double stage_params[PLC_MAX_STAGES]; /* parameters per rank of each stage */
    int64_t stage_layers[PLC_MAX_STAGES]; /* transformer layers per rank of each stage */

    /* time */
    double step_time_s;
    double time[PLC_TIME_COUNT]; /* sums to step_time_s */
    int64_t micro_batches;       /* per data-parallel rank per step */
    double bubble_fraction;      /* bubble / step time */
    double tokens_per_s;         /* whole cluster */
    double mfu;                  /* PaLM form, see plc_flops_per_token_palm */
    double model_flops;          /* PaLM FLOPs of one step, whole cluster */

    /* plrun: the stages whose fit the estimate cannot tell
     * (plc_memory_open) are the lowered plan's (lowered: a judge settled
     * the fit), or not yet (open: fits is the estimate's) */
    bool lowered, open;
} plc_estimate;

/* ---- the lowered plan, judge of plrun's fit ------------------------------------ */
/* plrun's memory is its plan's arena plus plc_runtime_fixed_bytes. The
 * replay (memory_plrun.c) counts the plan's short-lived buffers; the memory
 * plan (compiler/lower/memplan.c) places them up to PLC_PLACEMENT_ABOVE
 * above that count, and the count may exceed the placed arena by up to
 * PLC_PLACEMENT_BELOW (both shares of the dynamic part;
 * tests/unit/test_solver_memory_exact.c holds every stage of a sweep to them).
 * Where that band holds the memory limit, the estimate cannot tell fit from
 * no fit: a judge, when given, lowers the layout and the estimate takes each
 * stage's arena. The lowering comes after the solver, so the command line
 * passes it in. */
#define PLC_PLACEMENT_ABOVE 0.08
#define PLC_PLACEMENT_BELOW 0.02

typedef struct plc_judged plc_judged;
typedef struct plc_memory_judge {
    /* the arena bytes of the layout's stages s with stages[s], as lowered;
     * returns 0, or -1 when the layout does not lower (the estimate stands) */
    int (*arena)(void *ctx, const plc_job *job, const plc_layout *l, const bool *stages, double *arena_bytes);
    /* what the lowering refuses of a plrun job whatever the layout (a model
     * it has no instructions for): returns 0, or -1 with the reason in why;
     * NULL: nothing refused */
    int (*model)(const plc_job *job, char *why, size_t size);
    void *ctx;
    int64_t calls; /* layouts lowered */
    /* the solver's: what was lowered, by job and layout, so that nothing is
     * lowered twice (zero it with the rest; plc_memory_judge_free) */
    plc_judged *memo;
    int nmemo, capmemo;
} plc_memory_judge;

void plc_memory_judge_free(plc_memory_judge *j);

/* Predicts one layout. Returns 0 (the estimate is filled in, fit or not, and
 * out->valid says whether the layout is legal), or -1 when the job itself is
 * unusable (no GPUs, no layers; out->reason says why). */
int plc_estimate_layout(const plc_job *job, const plc_layout *l, plc_estimate *out);
/* the same, with plrun's fit settled by judge (NULL: by the estimate) where
 * the estimate cannot tell; -1 also when out of memory */
int plc_estimate_layout_judged(const plc_job *job, const plc_layout *l, plc_memory_judge *judge,
                               plc_estimate *out);

/* ---- search ------------------------------------------------------------- */

/* one evaluated candidate, compact (the full estimate is recomputed on demand) */
typedef struct plc_candidate {
    plc_layout layout;
    bool valid, fits;
    bool lowered, open; /* as plc_estimate's */
    double peak_bytes, step_time_s, tokens_per_s, mfu;
    /* the range of its throughput: measured / predicted between range_lo
     * and range_hi for ~80% of measured runs of its kind (plc_error_bar;
     * tokens_per_s and mfu times these, step_time_s over them); 0: none */
    double range_lo, range_hi;
    /* "" when it fits; otherwise why it is invalid, or a short note for one
     * that does not fit (plc_report_reason prints the figures) */
    const char *reason;
} plc_candidate;

/* ---- error bars ------------------------------------------------------------ */
/* How far measured throughput falls from the prediction for runs of one
 * kind (engine, GPU, GPU count), from the table the command line reads
 * (compiler/cli/report_range.c; the table is written by bench/fidelity
 * --error-bars from the leave-one-source-out residuals of calibration/:
 * docs/solver.md, "Error bars"). */
typedef struct plc_error_bar {
    double lo, hi;     /* measured / predicted throughput: 10th and 90th percentiles; 0: no range */
    int runs;          /* the calibration runs of the kind */
    char kind[96];     /* "megatron A100 65+ GPUs" */
    char sources[96];  /* the calibration sources of those runs */
    char table[256];   /* the table's path */
} plc_error_bar;

/* A region of the space: every candidate with one dimension at one value
 * ("tp = 2", "recompute = full"). explain shows, for each dimension, the best
 * candidate of the regions the winner is not in, and why it lost. */
typedef struct plc_region {
    int dim;       /* index into plc_layout_dim_names */
    int64_t value; /* enum value for schedule, recompute, attention */
    plc_candidate best; /* fitting and best by the objective, else closest to fitting */
} plc_region;

#define PLC_LAYOUT_NDIMS PLC_LD_COUNT
/* plc_layout_dim_names ("dp", "tp", ...): plc/job.h */
int64_t plc_layout_dim_value(const plc_layout *l, int dim);
/* the value of dimension dim as written in a .plan file ("flash2", "4", "on") */
const char *plc_layout_dim_text(int dim, int64_t value, char *buf, size_t size);

typedef struct plc_solve_opts {
    int top;   /* candidates kept in `ranked` (0: 10) */
    bool all;  /* keep every evaluated candidate, fit or not, in `all` (implies exhaustive) */
    /* estimate every legal candidate the memory bound leaves, so that
     * `regions`, `closest` and `fitting` cover the whole space (explain).
     * Otherwise (branch and bound) a subtree whose lower bound on the
     * objective is worse than the top-th best found so far is skipped and
     * counted as pruned: `ranked` is the same, the other fields cover only
     * the candidates estimated, and `regions` is empty. */
    bool exhaustive;
    /* plrun: lowers the kept candidates whose fit the estimate cannot tell
     * (plc_memory_judge): the first `settle` ranked (0: every one), each
     * region's best and a pinned layout; one that proves not to fit is
     * dropped and the search runs again. Candidates met but not kept (and
     * those of `all`) keep the estimate's fit, marked open. NULL: the
     * estimate decides every fit */
    plc_memory_judge *judge;
    int settle;
} plc_solve_opts;

typedef struct plc_solution {
    /* fitting candidates, best first by the spec's objective */
    plc_candidate *ranked;
    int nranked;
    /* with opts.all: every candidate, in enumeration order (those that do not
     * fit carry a time figure too) */
    plc_candidate *all;
    int64_t nall;
    /* the non-fitting candidates closest to fitting (smallest peak/limit), for
     * "no layout fits" output */
    plc_candidate closest[5];
    int nclosest;
    /* best candidate of each region */
    plc_region *regions;
    int nregions;
    /* the layout block pins every dimension: the one candidate is in `single`
     * (fit or not, with its time figure); ranked holds it too when it fits */
    bool pinned;
    plc_candidate single;
    /* counts */
    int64_t enumerated; /* combinations of the layout block's values */
    int64_t invalid;    /* rejected by divisibility and similar rules */
    /* of those, how many each rule removed (the first it broke), with the
     * first such (partial) layout and the dimensions it knew:
     * plc_invalid_message words it */
    int64_t invalid_by[PLC_RULE_COUNT];
    plc_layout invalid_example[PLC_RULE_COUNT];
    uint32_t invalid_known[PLC_RULE_COUNT];
    int64_t invalid_dp_pinned; /* the dp that the GPU count leaves is not one the layout block allows */
    int64_t pruned;     /* rejected by a lower bound (memory, or the objective), not estimated */
    int64_t pruned_objective; /* of those, by the objective's bound (branch and bound) */
    int64_t evaluated;  /* full estimates */
    int64_t fitting;    /* of those evaluated, the ones that fit */
    double seconds;     /* wall time of the search */
    int64_t lowered;    /* layouts the judge lowered to settle their fit */
    double limit_bytes; /* memory_limit x device memory */
    /* the range every candidate carries (its kind is the job's), set after
     * the search by the caller (report_range.c); bar.lo 0: none */
    plc_error_bar bar;
    char error[192];    /* why the job is unusable, when plc_solve says so */
} plc_solution;

/* "dp = 3 does not divide global_batch = 128": why rule r removed layouts in
 * s's search (its first example). Returns buf. */
const char *plc_invalid_message(const plc_job *job, const plc_solution *s, plc_rule r, char *buf, size_t size);

/* Is some dp, tp, pp, cp that the layout block allows legal for the job
 * (the rules over those four, the batch and the GPU count; a micro_batch
 * the block pins too)? The first such (degrees only) in *example. Cheap:
 * no estimate, for "what would make a layout legal" (plc_report_no_fit). */
bool plc_degrees_legal(const plc_job *job, plc_layout *example);

/* Searches the space of job->layout. Returns PLC_OK with out filled in
 * (nranked may be 0: nothing fits; ranked[0] is the answer otherwise), or
 * PLC_E_INPUT when the job is unusable, PLC_E_SYSTEM out of memory, with
 * out->error saying why (the solver prints nothing). Allocates from *a. */
plc_status plc_solve(const plc_job *job, plc_arena *a, plc_solution *out);
/* the same with options (opts NULL: top 10, not all, branch and bound) */
plc_status plc_solve_opts_run(const plc_job *job, plc_arena *a, const plc_solve_opts *opts,
                       plc_solution *out);

/* ---- cost primitives ------------------------------------------------------- */

typedef enum plc_collective_kind {
    PLC_COLL_ALL_REDUCE,
    PLC_COLL_REDUCE_SCATTER,
    PLC_COLL_ALL_GATHER,
    PLC_COLL_BROADCAST,
    PLC_COLL_KIND_COUNT
} plc_collective_kind;

const char *plc_collective_name(plc_collective_kind k);

/* Seconds for an M x K by K x N matmul (2MNK FLOP) at the catalog's
 * efficiency for that shape. */
double plc_cost_matmul(const plc_hw *hw, plc_precision p, int64_t M, int64_t N, int64_t K);
/* The share of plc_gemm_peak an M x K by K x N matmul reaches: the
 * catalog's matmul_efficiency, framework_efficiency and the shape terms
 * (matmul_half_dim for K, matmul_half_area for M x N; docs/solver.md). */
double plc_matmul_efficiency(const plc_hw *hw, plc_precision p, int64_t M, int64_t N, int64_t K);
/* Dense tensor-core peak FLOP/s of the GEMMs in precision p (fp8_flops, 0
 * where the GPU has no fp8). */
double plc_gemm_peak(const plc_hw *hw, plc_precision p);
/* The share of peak a tiled (flash) attention kernel reaches, forward and
 * backward: attention_efficiency scaled for the kernel, times
 * framework_efficiency. */
double plc_attention_efficiency(const plc_hw *hw, plc_attention a);

/* Seconds to move `bytes` through HBM (read + write counted by the caller). */
double plc_cost_memory_bound(const plc_hw *hw, double bytes);

/* Seconds for a collective over group_size ranks, ranks_per_node_in_group of
 * them on each node (group_size when the group is inside one node). `bytes` is
 * the full buffer: the all-reduced tensor, the gathered output, the scattered
 * input, the broadcast message. Best of ring and tree, hierarchical when the
 * group spans nodes. */
double plc_cost_collective(const plc_hw *hw, plc_collective_kind kind, double bytes,
                           int64_t group_size, int64_t ranks_per_node_in_group);

/* Seconds for one point-to-point message. */
double plc_cost_p2p(const plc_hw *hw, double bytes, bool cross_node);

/* ---- memory_model.c -------------------------------------------------------- */
/* bytes one rank holds at its peak, per pipeline stage and
 * component (weights, gradients, optimizer, activations, logits, temporaries,
 * communication buffers, workspaces, reserved). See docs/solver.md. */

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
/* plrun with a recompute policy it lowers: the dynamic memory is the plan's
 * own buffers (memory_plrun.c's replay), and a judge can settle the fit */
bool plc_memory_is_plan(const plc_job *job, const plc_layout *l);
/* plrun, after plc_memory_estimate of every stage: true when the band the
 * placement leaves (PLC_PLACEMENT_ABOVE, _BELOW) holds the limit on some
 * stage (open[s] marks those) and no stage is over it on any placement:
 * the estimate cannot tell fit from no fit */
bool plc_memory_open(const plc_job *job, const plc_layout *l, const plc_estimate *est, bool *open);
/* takes arena[s], the lowered plan's arena, for each open stage s (the
 * dynamic components scaled to it), then the peak and the fit again; sets
 * est->lowered */
void plc_memory_take_arena(const plc_job *job, const plc_layout *l, const bool *open, const double *arena,
                           plc_estimate *est);

/* Bytes a rank of plrun holds outside its plan's arena: the communication
 * library's buffers (comm_buffer per group the rank belongs to), the matmul
 * workspace and the runtime's reserve (process baseline, CUDA context:
 * runtime_reserved), all figures the catalog measures. A lowered plan fits
 * when every stage's arena_bytes plus this is within the limit. */
double plc_runtime_fixed_bytes(const plc_job *job, const plc_layout *l);
/* plrun (memory_plrun.c): the plan's dynamic memory on a stage, as the
 * lowering would lay it out, in out[PLC_MEM_ACTIVATIONS] (forward state held
 * at the peak) and out[PLC_MEM_TEMPORARIES] (the rest of the peak); the
 * other components are left 0 */
void plc_plrun_stage_memory(const plc_job *job, const plc_layout *l, int64_t stage, double out[PLC_MEM_COUNT]);

/* A lower bound of the peak of any layout with these tp, pp, dp, cp and zero
 * (static state of the heaviest stage and reserved memory), for pruning;
 * _of: of a node whose dp, tp, pp, cp, ep, etp and zero are known. */
double plc_memory_lower_bound_of(const plc_job *job, const plc_layout *node);
double plc_memory_lower_bound(const plc_job *job, int64_t tp, int64_t pp, int64_t dp,
                              int64_t cp, int64_t zero);
/* A lower bound of the peak of any layout under the node l (every dimension
 * known but recompute, recompute_layers, attention and fused RMSNorm): that
 * bound, the runtime's fixed costs, and the layer inputs of the micro-batches
 * in flight on the first and last stage (what full recompute keeps, the
 * least any policy keeps). It never falls as the micro-batch grows. */
double plc_memory_node_bound(const plc_job *job, const plc_layout *l);

/* ---- model_math.c ---------------------------------------------------------- */
/* parameter counts and FLOPs of the transformer plc trains
 * (docs/model.md): the Llama block (GQA, SwiGLU, RMSNorm, RoPE) or the GPT
 * block (GQA, GELU MLP, LayerNorm with bias, biases on every projection,
 * learned or rotary positions), tied or untied embeddings. */

#include <stdbool.h>
#include <stdint.h>

#include "plc/job.h"

static inline int64_t plc_head_dim(const plc_model *m) { return plc_model_head_dim(m); }

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

/* The matrix products of one layer on one rank for one micro-batch, M x K
 * by K x N (the backward runs each twice: data and weight gradients), from
 * one table of the block's weights by tensors.h's role (model_math.c). A
 * product's name is its weights' role names joined by '+' ("wq+wk+wv").
 *
 * plc_layer_gemms: the GEMMs of plrun's lowering and Megatron, which
 * concatenate the weights that read the same input: wq+wk+wv, wo, the MLP's
 * first (w_gate+w_up, or w_fc) and its last (w_down, or w_proj).
 *
 * plc_block_linears: the same products as an eager PyTorch block calls them,
 * in execution order (Llama: wq, wk, wv, wo, w_gate, w_up, w_down, apart as
 * torchtitan's model calls them; GPT: wq+wk+wv as nanoGPT's c_attn, wo,
 * w_fc, w_proj). torchtitan's op-level selective checkpointing (engine
 * figure selective_ops) saves the output of the first, third, fifth, ... of
 * them and recomputes the others (plc_op_sac_saves). Returns the count. */
enum { PLC_LAYER_GEMMS = 4, PLC_BLOCK_LINEARS_MAX = 7 };
typedef struct plc_gemm_shape {
    char name[24];
    int64_t M, N, K;
} plc_gemm_shape;
void plc_layer_gemms(const plc_job *job, const plc_layout *l, plc_gemm_shape out[PLC_LAYER_GEMMS]);
int plc_block_linears(const plc_job *job, const plc_layout *l, plc_gemm_shape out[PLC_BLOCK_LINEARS_MAX]);
static inline bool plc_op_sac_saves(int linear) { return linear % 2 == 0; }


/* Parameters of one transformer layer, by how tensor parallelism holds them:
 * - weights: the matmul weights (q, k, v, o and the MLP's two or three);
 * - matrices: what tp splits: the weights, and in GPT the biases of the
 *   column-parallel projections (q, k, v, the MLP's first);
 * - norms: what every tp rank holds whole: the two norms (weight, and in GPT
 *   bias), and in GPT the biases of the row-parallel projections (o, the
 *   MLP's second), added once after their all-reduce. */
int64_t plc_params_layer_weights(const plc_model *m);
int64_t plc_params_layer_matrices(const plc_model *m);
int64_t plc_params_layer_norms(const plc_model *m);
static inline int64_t plc_params_layer(const plc_model *m)
{
    return plc_params_layer_matrices(m) + plc_params_layer_norms(m);
}
/* The attention's matmul weights of one layer: q, k, v, o of grouped-query
 * attention, or latent attention's (m->mla.kv_rank > 0): the query's down
 * [hidden, q_rank] and up [q_rank, heads (nope + rope)] projections (one
 * [hidden, heads (nope + rope)] without q_rank), the key/value latent's
 * down projection [hidden, kv_rank + rope] (the rope part one key shared by
 * the heads), its up projection [kv_rank, heads (nope + v)] and the output
 * [heads v, hidden]. Its two RMSNorms (q_rank, kv_rank) are in
 * plc_params_layer_norms. */
int64_t plc_params_attention(const plc_model *m);

/* Mixture of experts (docs/model.md). A layer is MoE when it is not among
 * the first dense_layers and (layer - dense_layers) % moe_every == 0; the
 * others are dense (plc_params_layer). plc_params_moe_mlp: the router
 * [hidden, experts] and the experts' MLPs (each the model's MLP kind, GPT's
 * with its biases), all of them or the active ones (top_k routed and the
 * shared); 0 for a dense model. plc_params_moe_layer: an MoE layer whole
 * (attention, norms, the router and the experts, all or active). The
 * per-expert bias of aux-loss-free balancing is a buffer without gradient,
 * not a parameter (as Megatron-Core's). */
int64_t plc_moe_layer_count(const plc_model *m); /* which: plc_layer_is_moe, common/tensors.h */
int64_t plc_params_moe_mlp(const plc_model *m, bool active);
int64_t plc_params_moe_layer(const plc_model *m, bool active);

/* one norm: hidden (RMSNorm weight) or 2 hidden (LayerNorm weight and bias) */
int64_t plc_params_norm(const plc_model *m);
/* the learned position table [seq_len, hidden], 0 with RoPE */
int64_t plc_params_positions(const plc_model *m);
/* the embedding table [vocab, hidden], the head when untied, the position
 * table when learned */
int64_t plc_params_embedding(const plc_model *m);
/* all unique parameters of the model */
int64_t plc_params_total(const plc_model *m);
/* the parameters a token runs through: plc_params_total but for the MoE
 * layers' routed experts, of which top_k count (the router, the shared
 * experts and the dense layers always do); plc_params_total for a dense
 * model */
int64_t plc_params_active(const plc_model *m);
/* "46,702,792,704": a count with its thousands grouped; returns buf */
#include <stddef.h>
const char *plc_count_text(int64_t n, char *buf, size_t size);

/* Parameters one rank of pipeline stage `stage` holds: its layers, the
 * embedding (and a learned position table) on stage 0, final norm and head
 * on the last stage (with tied embeddings and pp > 1 the last stage holds a
 * copy of the embedding as its head). Matrices and the vocabulary (padded to
 * a multiple of tp) are split over tp; norms, row-parallel biases and the
 * position table are replicated.
 * A rank of stage `stage` holds plc_rank_layers(layers, pp, vpp, stage) layers
 * (common/layout_rules.h: layers / pp when pp * vpp divides layers;
 * contiguous, interleaved or modular; vpp 1 but for the interleaved schedule). */
typedef struct plc_stage_params {
    double layer_matrices; /* per rank, all its layers */
    double norms;          /* per rank: everything replicated over tp except the position table */
    double embedding;      /* per rank: input table and positions (stage 0), head (last) */
    int64_t layers;        /* transformer layers on the stage */
    bool has_embedding, has_head;
} plc_stage_params;

void plc_stage_params_of(const plc_model *m, int64_t tp, int64_t pp, int64_t vpp, int64_t stage,
                         plc_stage_params *out);
static inline double plc_stage_params_total(const plc_stage_params *s)
{
    return s->layer_matrices + s->norms + s->embedding;
}

/* parameter tensors of a Llama layer (two norms, q, k, v, o, gate, up, down) */
#define PLC_LAYER_TENSORS 9
/* parameter tensors of a layer of the model's block: PLC_LAYER_TENSORS, or
 * 16 for GPT (two norms of weight and bias, q, k, v, o, fc, proj with
 * their biases) */
int64_t plc_layer_tensors(const plc_model *m);
/* parameter tensors a rank of the stage holds (the collectives over them
 * are issued one per tensor) */
int64_t plc_stage_tensors(const plc_model *m, int64_t pp, const plc_stage_params *s);

/* Forward matmul FLOPs per token of one dense layer, excluding attention
 * scores (2 x its matmul weights; biases, norms and activations are not
 * counted). */
double plc_flops_layer_linear_fwd(const plc_model *m);
/* The same of one MoE layer: attention's projections, the router, the
 * top_k routed experts and the shared ones (top-k, softmax and the
 * weighting are not counted). */
double plc_flops_moe_layer_linear_fwd(const plc_model *m);
/* Forward FLOPs per token of attention scores and weighted sum (QK^T, PV) in
 * one layer: 2 x heads x (qk + v) x context, with qk = v = hidden / heads
 * (4 x hidden x context) or latent attention's qk = nope + rope and v;
 * context = seq_len when the kernel computes the full square,
 * (seq_len + 1) / 2 when it skips the masked half. */
double plc_flops_layer_attention_fwd(const plc_model *m, bool causal_skip);
/* Exact forward matmul FLOPs per token of the whole model (layers, attention
 * at the given causal handling, head). A training step costs 3x this (4x
 * with full recompute). */
double plc_flops_per_token_fwd(const plc_model *m, bool causal_skip);
/* The PaLM form used for MFU: 6 N + 12 L h s, N = plc_params_active (all
 * parameters of a dense model); with latent attention 6 L s heads (qk + v)
 * for the attention term. */
double plc_flops_per_token_palm(const plc_model *m);
/* The Megatron form (Narayanan et al. 2021, eq. 3), per token:
 *   96 L h^2 (1 + s / (6 h) + V / (16 L h)) = 96 L h^2 + 16 L h s + 6 h V,
 * the paper's 96 B s L h^2 (...) per batch of B sequences divided by B s.
 * Written for the GPT block with a 4h MLP, kv_heads = heads and the full
 * attention square; it counts the recompute forward of full recompute (4
 * passes over the layers, 3 over the head), so its "utilisation" is a
 * hardware FLOP utilisation. It reads only L, h, s and V. */
double plc_flops_per_token_megatron(const plc_model *m);

/* Share of a rank's layers recomputed whole in the backward: 1 with
 * recompute = full, plc_recomputed_layers / (its layers) with block and
 * every, 0 otherwise; on the stage with the most layers where they are
 * unequal. */
double plc_recompute_share(const plc_model *m, const plc_layout *l);

/* ---- pipeline_order.c ------------------------------------------------------ */
/* the one definition of a pipeline schedule: which layers
 * form each chunk, which pipeline rank owns it, and the order in which each
 * rank runs its forward and backward units. The lowering emits its programs
 * in this order, the schedule simulator (schedule_model.c) times it and the
 * memory model takes its in-flight counts from plc_pipe_warmup, so the
 * three cannot disagree.
 *
 *   gpipe        pp contiguous chunks; all forwards, then all backwards
 *   1f1b         pp contiguous chunks; pp-1-r warm-up forwards, then one
 *                forward one backward, then the remaining backwards
 *   interleaved  pp*vpp chunks, chunk c on rank c mod pp; Megatron's
 *                interleaved 1F1B (micro-batches in groups of pp)
 *   layered      one chunk per layer, contiguous placement, breadth-first:
 *                every micro-batch through a layer before the next layer
 *                (layered gradient accumulation), backward likewise
 *   modular      one chunk per layer, layer i on rank i mod pp, breadth-first
 *
 * A unit is (kind, chunk, micro-batch). Forward of chunk c needs the
 * forward of c-1 for the same micro-batch; backward of c needs backward of
 * c+1 and forward of c. The layout must have passed the rulebook
 * (common/layout_rules.h).
 *
 * Zero-bubble orders (plc_pipe_split, on 1F1B's chunks) split each backward
 * into B (the gradients of the inputs: what the stage before waits for)
 * and W (the gradients of the weights: needed by nobody in the step, so
 * free to fill the bubbles). W of (c, m) needs B of (c, m) and sends and
 * receives nothing. Qi et al., "Zero Bubble Pipeline Parallelism" (arXiv
 * 2401.10241, ICLR 2024), Sec. 3.1, the handcrafted schedules:
 *
 *   zb_h1   1F1B's pp-1-r warm-up forwards, then forward, B, and the W of
 *           the micro-batch r B's back (rank r defers r W's, so every rank
 *           holds pp micro-batches, 1F1B's peak); the deferred W's last.
 *           Bubble (pp-1)(T_F + T_B - T_W), a third of 1F1B's when F, B
 *           and W take equal time.
 *   zb_h2   2(pp-r)-1 forwards before the first B, then B, forward and the
 *           W of the micro-batch 2r B's back: every rank busy from its
 *           first unit to its last when F, B and W take equal time (a
 *           parallelogram), holding 2pp micro-batches at its peak.
 *           Bubble (pp-1)(T_F + T_B - 2 T_W), counted over each rank's own
 *           span (the paper's post-validated optimizer step lets the next
 *           step's forwards start on rank 0 while the last rank drains).
 *   zb_v    2pp chunks, rank r holding chunk r and chunk 2pp-1-r (a V: the
 *           first and the last chunk on rank 0); Qi et al., Sec. 6 (ZB-V),
 *           the order torch.distributed.pipelining's ScheduleZBVZeroBubble
 *           runs: 2(pp-r)-1 forwards of chunk r, r pairs of forwards (chunk
 *           2pp-1-r, chunk r), pp-r forward-B-W of chunk 2pp-1-r, then
 *           forward-B-W of each chunk in turn, the drain's B's before its
 *           W's. M >= 2pp. No bubble when F, B and W take equal time (each
 *           chunk half a stage), holding pp micro-batches' activations at
 *           its peak, 1F1B's.
 *   dualpipe_v  zb_v's chunks; the order of DualPipeV in DeepSeek's DualPipe
 *           repository (deepseek-ai/DualPipe, dualpipev.py), the
 *           micro-batches counted once (its num_chunks is twice plc's M):
 *           2(pp-r-1) forwards of chunk r, r+1 pairs of forwards (r, then
 *           2pp-1-r), pp-r-1 split B's of chunk 2pp-1-r each followed by a
 *           deferred W and a forward, then M-2pp+r+1 rounds of F(r),
 *           B(2pp-1-r), F(2pp-1-r), B(r) with whole backwards, pp-r-1 rounds
 *           without F(r), r+1 pairs of B's split from the middle pair on,
 *           pp-r-1 deferred W's each followed by a split B of chunk r, the
 *           W's left. The overlap of one micro-batch's forward with
 *           another's backward (its point) is not modelled: the units run
 *           one after the other. M >= 2pp-1. Its peak: pp + 1/2
 *           micro-batches of the rank's layers. */

#include <stdbool.h>
#include <stdint.h>

#include "plc/job.h"

typedef struct plc_pipe_unit {
    uint8_t bwd;   /* 1: a backward (B of a split one, or a whole one); 0: a forward or a W */
    uint8_t w;     /* 1: the weight-gradient half (W) of a split backward */
    int32_t chunk; /* global chunk id */
    int32_t micro;
} plc_pipe_unit;

/* how a shape's backwards are ordered: whole, or split into B and W by one
 * of the zero-bubble orders above */
typedef enum plc_pipe_split {
    PLC_SPLIT_NONE,
    PLC_SPLIT_ZB_H1,
    PLC_SPLIT_ZB_H2,
    PLC_SPLIT_ZB_V,
    PLC_SPLIT_DUALPIPE_V,
    PLC_SPLIT_AUTO, /* an order built from op times (plc_sched_zb_auto); plc_pipe_order has none */
} plc_pipe_split;

typedef struct plc_pipe_shape {
    plc_schedule schedule;
    int64_t pp, vpp, layers;
    int64_t nchunks;  /* chunks over all ranks */
    int64_t per_rank; /* chunks per rank */
    bool looping;     /* chunk c on rank c mod pp (else contiguous blocks) */
    bool uneven;      /* GPipe, 1F1B, interleaved: chunks of plc_stage_layers over nchunks, unequal */
    plc_pipe_split split; /* PLC_SPLIT_NONE but after plc_pipe_split_backward */
} plc_pipe_shape;

/* The chunks of a schedule; -1 when the layers do not split (a layout the
 * rulebook refuses). vpp counts only for the interleaved schedule. GPipe,
 * 1F1B and interleaved take any layers >= nchunks (unequal stages,
 * common/layout_rules.h); the others chunks of equal size. */
int plc_pipe_shape_of(plc_schedule s, int64_t pp, int64_t vpp, int64_t layers, plc_pipe_shape *out);

/* pipeline rank owning chunk c; its layers [lo, hi) */
int64_t plc_pipe_chunk_rank(const plc_pipe_shape *sh, int64_t c);
int64_t plc_pipe_chunk_lo(const plc_pipe_shape *sh, int64_t c);
int64_t plc_pipe_chunk_hi(const plc_pipe_shape *sh, int64_t c);

/* units a rank runs per step with M micro-batches: 2 M per_rank */
static inline int64_t plc_pipe_units(const plc_pipe_shape *sh, int64_t M)
{
    return (sh->split ? 3 : 2) * M * sh->per_rank;
}

/* Turns a 1F1B shape into the zero-bubble order `split` (its B and W
 * units; zb_v re-cuts the layers into 2pp chunks, as plc_stage_layers
 * splits them, and needs layers >= 2pp); -1 for another schedule or
 * PLC_SPLIT_NONE (dualpipe_v: as zb_v). plc_pipe_shape_of makes them for
 * the schedules zb_h1, zb_h2, zb_v and dualpipe_v (the shape's schedule
 * stays 1F1B's), which the lowering emits with B and W units. */
int plc_pipe_split_backward(plc_pipe_shape *sh, plc_pipe_split split);

/* forward units rank r runs before its first backward, less one (the
 * forward that opens its steady phase) */
int64_t plc_pipe_warmup(const plc_pipe_shape *sh, int64_t M, int64_t r);

/* Micro-batches rank r holds activations of at its peak, in units of "one
 * micro-batch through all of the rank's layers": (warm-up + 1) forward
 * units, at most all of them, over its chunks (with unequal chunks, those
 * units' layers over the rank's layers, at its first backward). O(1) in M.
 * Split orders: the most micro-batches forwarded whose W has not run (one
 * waiting for its W alone holds less: its W's inputs), O(M). */
double plc_pipe_inflight(const plc_pipe_shape *sh, int64_t M, int64_t r);

/* Writes rank r's plc_pipe_units(sh, M) units in execution order. Returns 0,
 * or -1 when M does not suit the schedule (interleaved: a multiple of pp;
 * zb_v: M >= 2pp; dualpipe_v: M >= 2pp-1). */
int plc_pipe_order(const plc_pipe_shape *sh, int64_t M, int64_t r, plc_pipe_unit *out);

/* A unit's visits: the stretches of it spent in one key (layer l, -1 the
 * embedding, layers the head), in order: a forward [the embedding, chunk 0]
 * lo .. hi-1 [the head, last chunk: the loss and its backward]; a backward
 * [the head's final norm, last chunk] hi-1 .. lo [the embedding, chunk 0].
 * plc_pipe_visit gives visit i's key and whether it makes weight gradients
 * (every backward visit, and the head's forward). ZeRO 2/3 reduce-scatter a
 * key's gradient blocks after the last visit that makes them in the
 * stage's run of visits to that key: plc_pipe_grads_later says whether,
 * after visit i of unit k, a later visit of the same run makes more.
 * Split orders: a W unit visits what its B visits, in the same order, and
 * makes the weight gradients; its B makes none. */
int64_t plc_pipe_visits(const plc_pipe_shape *sh, const plc_pipe_unit *u);
int64_t plc_pipe_visit(const plc_pipe_shape *sh, const plc_pipe_unit *u, int64_t i, bool *grads);
bool plc_pipe_grads_later(const plc_pipe_shape *sh, const plc_pipe_unit *order, int64_t total, int64_t k, int64_t i);

/* When a rank waits for the pipeline messages it sent: those of its unit k
 * at the start of its unit k + lag, the last lag units' at the end of the
 * step. 2 where every rank then finishes, each receive posted one unit
 * ahead of its unit and a send complete only once its receive is posted
 * (the rendezvous protocol of large messages): GPipe, 1F1B, interleaved,
 * layered, and modular on a short step. Else plc_pipe_units(sh, M), the end
 * of the step (modular's receivers take a message a sweep of the
 * micro-batches after it is sent). The lowering and the memory replay take
 * it from here. */
int64_t plc_pipe_send_lag(const plc_pipe_shape *sh, int64_t M);
/* the same, the step run unit by unit whatever its length (O(M): for the
 * tests); -1 when out of memory */
int64_t plc_pipe_send_lag_run(const plc_pipe_shape *sh, int64_t M);

/* ---- search.c -------------------------------------------------------------- */
/* legality of a layout for a job, and the candidate values of each
 * layout dimension. plc_solve and plc_estimate_layout (compiler/solver/solver.h)
 * are implemented in search.c. */

#include <stdbool.h>
#include <stddef.h>

/* true when l is legal for job (divisibility, schedule rules, GPU count);
 * otherwise false with the reason in why. */
bool plc_layout_check(const plc_job *job, const plc_layout *l, char *why, size_t size);

/* Orders candidates by the job's objective: negative when a is better. */
int plc_candidate_compare(const plc_job *job, const plc_candidate *a, const plc_candidate *b);

/* The pick with error bars (docs/solver.md, "Error bars"): among the ranked
 * candidates whose throughput range overlaps the first's, the one with the
 * best lower bound (the most tokens/s at range_lo; equal bounds: the
 * earlier in plc_candidate_compare's order) moves to the front; the others
 * keep their order. Nothing moves under objective = memory or without
 * ranges. Returns the index the pick had. */
int plc_pick_by_range(const plc_job *job, plc_candidate *ranked, int n);

/* whether the throughput ranges of a and b overlap (both have one) */
bool plc_ranges_overlap(const plc_candidate *a, const plc_candidate *b);

/* ---- time_model.c ---------------------------------------------------------- */
/* predicted time of one training step of a layout, split into
 * compute, memory-bound work, exposed communication by kind, bubble and
 * overhead. See docs/solver.md for the formulas. */

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
    /* the communication behind tp_* and cp_*: the tensor-parallel
     * collectives of one direction as they run (tp_comm) and the part the
     * GEMMs do not hide (tp_exposed_*; tp_* adds the overlapped compute's
     * slowdown), the context-parallel ring exchange each way */
    double tp_comm, tp_exposed_f, tp_exposed_b;
    double cp_ring_f, cp_ring_b;
    /* MoE layers (moe_model.c), averaged over the layers: the dispatch and
     * combine as charged each way (their compute is in matmul_*, mem_*,
     * launch_*); 0 for a dense model */
    double ep_f, ep_b;
} plc_layer_times;

void plc_layer_times_of(const plc_job *job, const plc_layout *l, plc_layer_times *out);


/* An overlapped communication as the time model charges it: it runs for
 * comm seconds, exposed of them on the critical path (the rest hidden under
 * compute), and the step pays charged = exposed plus overlap_sm_share of the
 * hidden part (the compute under it slowed by the SMs its kernels hold;
 * compiler/solver/overlap.c). Without the engine's overlap all three are
 * equal. */
typedef struct plc_overlap {
    double comm, exposed, charged;
} plc_overlap;

/* The pieces plc_time_estimate assembles one step from, for the busiest
 * stage, each as the time model computes it: the simulated timeline of a
 * spec (plc trace SPEC, compiler/plantools/engine_trace.c) lays the same
 * pieces out in the schedule's order. */
typedef struct plc_step_parts {
    plc_layer_times lt;       /* one layer, one micro-batch */
    int64_t micro, layers;    /* micro-batches per step; transformer layers of the busiest stage */
    int64_t busiest;          /* that stage: the most work per micro-batch (layers and ends) */
    double first, last;       /* embedding (first stage), head and loss (last stage): per micro-batch, forward + backward */
    double logits_gather;     /* of last: the logits' all-gather over tp (gathered_logits), else 0 */
    double ends;              /* the busiest stage's share of those per micro-batch (0 in the middle) */
    double tf, tb;            /* one layer, one micro-batch, forward and backward (recompute included) as charged */
    bool layer_major;         /* layered or modular schedule */
    double msg;               /* one pipeline message */
    plc_overlap pp;           /* depth-first schedules: the step's messages a stage receives */
    double layer_gather;      /* ZeRO 3: one layer's weight gather */
    plc_overlap gathers_f, gathers_b; /* ZeRO 3, depth-first or pp = 1: the step's gathers each way */
    double makespan;          /* pp > 1 layer-major: the schedule's makespan, messages and gathers included */
    plc_overlap dp;           /* gradient reduction */
    double dp_pieces;         /* collectives it is issued as */
    bool dp_per_mb;           /* reduced after every micro-batch's backward (ZeRO 2, 3 depth-first) */
    bool dp_all_reduce;       /* an all-reduce (ZeRO 0, or dp_allreduce_always), else a reduce-scatter */
    plc_overlap zero_gather;  /* ZeRO 1, 2: the updated weights' gather */
    double optimizer;         /* AdamW and the gradient buffers' zeroing */
    double busy;              /* the busiest stage's work */
    double bubble, pp_exposed, dp_exposed, zero_exposed; /* the step's components of those names */
} plc_step_parts;

void plc_step_parts_of(const plc_job *job, const plc_layout *l, plc_step_parts *out);

/* Fills est->step_time_s, time[], micro_batches, bubble_fraction,
 * tokens_per_s, mfu and model_flops (est->valid must be true). */
void plc_time_estimate(const plc_job *job, const plc_layout *l, plc_estimate *est);

/* Peak FLOP/s of the device in the job's precision. */
double plc_peak_flops(const plc_job *job);

#endif
