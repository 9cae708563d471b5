/* solver.h: the solver's public interface.
 *
 * plc_estimate_layout  predicts memory and step time of one concrete layout;
 * plc_solve            searches the space the spec's layout block allows;
 * plc_cost_*           the cost primitives the estimate is built from, for
 *                      the predicted timeline of `plc trace`.
 *
 * Units: bytes, seconds, FLOP. All figures are per rank unless named
 * otherwise. The models are described in docs/solver.md. */
#ifndef PLC_SOLVER_H
#define PLC_SOLVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/layout_rules.h"
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

    /* time */
    double step_time_s;
    double time[PLC_TIME_COUNT]; /* sums to step_time_s */
    int64_t micro_batches;       /* per data-parallel rank per step */
    double bubble_fraction;      /* bubble / step time */
    double tokens_per_s;         /* whole cluster */
    double mfu;                  /* PaLM form, see plc_flops_per_token_palm */
    double model_flops;          /* PaLM FLOPs of one step, whole cluster */
} plc_estimate;

/* Predicts one layout. Returns 0 (the estimate is filled in, fit or not, and
 * out->valid says whether the layout is legal), or -1 when the job itself is
 * unusable (no GPUs, no layers; out->reason says why). */
int plc_estimate_layout(const plc_job *job, const plc_layout *l, plc_estimate *out);

/* ---- search ------------------------------------------------------------- */

/* one evaluated candidate, compact (the full estimate is recomputed on demand) */
typedef struct plc_candidate {
    plc_layout layout;
    bool valid, fits;
    double peak_bytes, step_time_s, tokens_per_s, mfu;
    /* "" when it fits; otherwise why it is invalid, or a short note for one
     * that does not fit (plc_report_reason prints the figures) */
    const char *reason;
} plc_candidate;

/* A region of the space: every candidate with one dimension at one value
 * ("tp = 2", "recompute = full"). explain shows, for each dimension, the best
 * candidate of the regions the winner is not in, and why it lost. */
typedef struct plc_region {
    int dim;       /* index into plc_layout_dim_names */
    int64_t value; /* enum value for schedule, recompute, attention */
    plc_candidate best; /* fitting and best by the objective, else closest to fitting */
} plc_region;

#define PLC_LAYOUT_NDIMS PLC_LD_COUNT
/* "dp", "tp", ... in the order of PLC_LAYOUT_FIELDS */
extern const char *const plc_layout_dim_names[PLC_LAYOUT_NDIMS];
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
    int64_t pruned;     /* rejected by a lower bound (memory, or the objective), not estimated */
    int64_t pruned_objective; /* of those, by the objective's bound (branch and bound) */
    int64_t evaluated;  /* full estimates */
    int64_t fitting;    /* of those evaluated, the ones that fit */
    double seconds;     /* wall time of the search */
    double limit_bytes; /* memory_limit x device memory */
    char error[192];    /* why the job is unusable, when plc_solve says so */
} plc_solution;

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

#endif
