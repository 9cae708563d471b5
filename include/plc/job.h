/* plc/job.h: the resolved job, the one structure between the front end and
 * everything after it (solver, lowering, plan writer).
 *
 * The front end (compiler/frontend/spec_*.c) turns a .plan file, its -D overrides and
 * the hardware catalog into a plc_job with every unit converted to SI base
 * units (bytes, bytes/s, FLOP/s, seconds, fractions) and every default filled
 * in. Nothing downstream looks at the AST.
 */
#ifndef PLC_JOB_H
#define PLC_JOB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- enumerations (the spelling in .plan files is in plc_enum_name) ---- */

/* fp8: GEMMs in fp8 (E4M3 forward, E5M2 gradients) with per-tensor scales,
 * the rest in bf16, as Transformer Engine's recipe (docs/language.md) */
typedef enum plc_precision { PLC_PREC_BF16, PLC_PREC_FP32, PLC_PREC_FP8, PLC_PREC_COUNT } plc_precision;

typedef enum plc_schedule {
    PLC_SCHED_GPIPE,       /* all forwards, then all backwards */
    PLC_SCHED_1F1B,        /* one-forward-one-backward (PipeDream-flush) */
    PLC_SCHED_INTERLEAVED, /* 1F1B over vpp virtual stages per rank (Megatron) */
    PLC_SCHED_LAYERED,     /* layered gradient accumulation (Lamy-Poirier) */
    PLC_SCHED_MODULAR,     /* modular placement, layer i on rank i mod pp */
    /* zero-bubble: backwards split into B (input gradients) and W (weight
     * gradients), Qi et al. 2024 (compiler/solver/solver.h has the orders) */
    PLC_SCHED_ZB_H1,       /* 1F1B's stages and memory, W's deferred into the drain */
    PLC_SCHED_ZB_H2,       /* more forwards in the warm-up: no bubble, twice 1F1B's activations */
    PLC_SCHED_ZB_V,        /* two chunks a rank in a V (rank r: chunks r and 2pp-1-r) */
    PLC_SCHED_DUALPIPE_V,  /* DeepSeek's DualPipeV order on zb_v's chunks */
    PLC_SCHED_COUNT
} plc_schedule;

typedef enum plc_recompute {
    PLC_RECOMPUTE_NONE,
    PLC_RECOMPUTE_SELECTIVE, /* recompute attention core only (Korthikanti) */
    PLC_RECOMPUTE_FULL,      /* keep layer inputs, recompute whole layers */
    PLC_RECOMPUTE_BLOCK,     /* whole layers, the first recompute_layers of each (virtual) stage
                              * (Megatron --recompute-method block --recompute-num-layers k) */
    PLC_RECOMPUTE_EVERY,     /* whole layers, every recompute_layers-th of a rank's layers
                              * (torchtitan's selective layer checkpointing) */
    PLC_RECOMPUTE_COUNT
} plc_recompute;

typedef enum plc_attention {
    PLC_ATTN_NAIVE,  /* materialises s x s scores and probabilities */
    PLC_ATTN_FUSED,  /* fused softmax, still materialises s x s */
    PLC_ATTN_FLASH1, /* tiled, saves log-sum-exp only */
    PLC_ATTN_FLASH2,
    PLC_ATTN_COUNT
} plc_attention;

/* the runtime a plan or a prediction is for (docs/engines.md): plc's own
 * plrun, or an engine users run today, described by its profile in
 * engines.yaml (what it keeps, overlaps, recomputes and can run) */
typedef enum plc_engine {
    PLC_ENGINE_PLRUN,    /* plc's runtime: the plan is the program */
    PLC_ENGINE_MEGATRON, /* Megatron-LM, the current Megatron-Core release */
    PLC_ENGINE_FSDP2,    /* a PyTorch FSDP2 trainer (torchtitan) */
    PLC_ENGINE_MEGATRON_R0_8, /* Megatron-LM at Megatron-Core r0.8 (2024) */
    PLC_ENGINE_COUNT
} plc_engine;

/* plrun's optimizer keeps an fp32 master copy where the parameters are not
 * one: bf16 parameters, or a ZeRO 1 or 2 shard of fp32 ones (the update
 * writes the shard, then the parameters are all-gathered from it); ZeRO 3's
 * fp32 parameter shard is its own master, and over zero_shards = dp * cp = 1
 * ZeRO shards nothing. The lowering (lower_optim.c) emits it and the memory
 * model counts it from this rule. */
static inline bool plc_plrun_keeps_master(bool bf16_params, int64_t zero, int64_t zero_shards)
{
    return bf16_params || (zero_shards > 1 && (zero == 1 || zero == 2));
}

typedef enum plc_objective {
    PLC_OBJ_TIME,   /* fastest step (the default) */
    PLC_OBJ_MEMORY, /* smallest peak memory */
    PLC_OBJ_COUNT
} plc_objective;

/* ---- hardware: one catalog entry after cluster overrides ----------------
 * X(member, key, unit) lists every figure. The catalog YAML and the cluster
 * block use `key`; the front end parses and checks them generically from
 * this table, so adding a figure here is all it takes to make it settable.
 * Units: PLC_UNIT_* from below. Values are stored in SI base units. */
#define PLC_HW_FIELDS(X)                                                       \
    X(mem_bytes,        "memory",             PLC_UNIT_SIZE)                   \
    X(flops_bf16,       "bf16_flops",         PLC_UNIT_FLOPS)                  \
    X(flops_fp32,       "fp32_flops",         PLC_UNIT_FLOPS)                  \
    X(flops_fp8,        "fp8_flops",          PLC_UNIT_FLOPS)                  \
    X(hbm_bw,           "hbm_bw",             PLC_UNIT_BANDWIDTH)              \
    X(intra_node_bw,    "intra_node_bw",      PLC_UNIT_BANDWIDTH)              \
    X(intra_node_lat,   "intra_node_latency", PLC_UNIT_TIME)                   \
    X(inter_node_bw,    "inter_node_bw",      PLC_UNIT_BANDWIDTH)              \
    X(inter_node_lat,   "inter_node_latency", PLC_UNIT_TIME)                   \
    X(matmul_eff,       "matmul_efficiency",  PLC_UNIT_PERCENT)                \
    X(matmul_half_dim,  "matmul_half_dim",    PLC_UNIT_COUNT)                  \
    X(matmul_half_area, "matmul_half_area",   PLC_UNIT_COUNT)                  \
    X(attn_eff,         "attention_efficiency", PLC_UNIT_PERCENT)              \
    X(framework_eff,    "framework_efficiency", PLC_UNIT_PERCENT)              \
    X(hbm_eff,          "hbm_efficiency",     PLC_UNIT_PERCENT)                \
    X(comm_eff,         "comm_efficiency",    PLC_UNIT_PERCENT)                \
    X(kernel_launch,    "kernel_launch",      PLC_UNIT_TIME)                   \
    X(runtime_reserved, "runtime_reserved",   PLC_UNIT_SIZE)                   \
    X(comm_buffer,      "comm_buffer",        PLC_UNIT_SIZE)                   \
    X(grad_bytes,       "grad_bytes",         PLC_UNIT_COUNT)                  \
    X(alloc_overhead,   "alloc_overhead",     PLC_UNIT_COUNT)                  \
    X(gpus_per_nic,     "gpus_per_nic",       PLC_UNIT_COUNT)                  \
    X(nvls_bus_bw,      "nvls_bus_bw",        PLC_UNIT_BANDWIDTH)              \
    X(straggler_cv,     "straggler_cv",       PLC_UNIT_COUNT)

typedef enum plc_unit_kind {
    PLC_UNIT_COUNT,     /* a plain number, k/M/G multipliers allowed */
    PLC_UNIT_SIZE,      /* bytes: B KB MB GB TB KiB MiB GiB TiB */
    PLC_UNIT_BANDWIDTH, /* bytes/s: GB/s, Gbit/s, ... */
    PLC_UNIT_FLOPS,     /* FLOP/s: TFLOPS, PFLOPS, ... */
    PLC_UNIT_TIME,      /* seconds: ns us ms s */
    PLC_UNIT_PERCENT,   /* a fraction: 80% is stored as 0.8 */
    PLC_UNIT_KIND_COUNT
} plc_unit_kind;

typedef struct plc_hw {
    char name[64]; /* catalog entry name, e.g. "A100-SXM4-80GB" */
#define PLC_HW_MEMBER(member, key, unit) double member;
    PLC_HW_FIELDS(PLC_HW_MEMBER)
#undef PLC_HW_MEMBER
} plc_hw;

typedef struct plc_cluster {
    plc_hw hw;
    int64_t nodes;
    int64_t gpus_per_node;
} plc_cluster;

static inline int64_t plc_cluster_gpus(const plc_cluster *c) { return c->nodes * c->gpus_per_node; }

/* ---- model ---------------------------------------------------------------- */

/* The transformer block (docs/model.md). Llama: RMSNorm, SwiGLU MLP, no
 * biases. GPT: LayerNorm with bias, GELU (tanh) MLP, biases on the q, k, v,
 * output and both MLP projections. The zero values are Llama's. */
typedef enum plc_arch { PLC_ARCH_LLAMA = 0, PLC_ARCH_GPT } plc_arch;
/* rotary positions, or a learned table of seq_len rows added to the token
 * embeddings */
typedef enum plc_positions { PLC_POS_ROPE = 0, PLC_POS_LEARNED } plc_positions;

/* Mixture of experts (docs/model.md, issue 35). experts == 0: a dense model,
 * every other field ignored. A layer is an MoE layer when it is not among
 * the first dense_layers and (layer - dense_layers) % moe_every == 0; its
 * feed-forward is a router over `experts` routed experts of width
 * expert_ffn_hidden (each the model's FFN kind: SwiGLU for Llama, GELU for
 * GPT), top_k of them a token, plus shared_experts always-active experts of
 * width shared_ffn_hidden each. Dense layers keep the model's ffn_hidden. */
typedef enum plc_router {
    PLC_ROUTER_SOFTMAX = 0, /* softmax over the experts' logits, then top-k (Mixtral, Qwen3) */
    PLC_ROUTER_SIGMOID      /* sigmoid scores, top-k, normalised over the k (DeepSeek-V3) */
} plc_router;

typedef struct plc_moe {
    int64_t experts;           /* routed experts; 0: dense */
    int64_t top_k;             /* routed experts a token is sent to */
    int64_t shared_experts;    /* always-active experts */
    int64_t expert_ffn_hidden; /* each routed expert's FFN width */
    int64_t shared_ffn_hidden; /* each shared expert's FFN width */
    int64_t dense_layers;      /* the first k layers are dense (DeepSeek's first_k_dense_replace) */
    int64_t moe_every;         /* every n-th layer after them is MoE; default 1 */
    plc_router router;
    int64_t router_groups;     /* group-limited routing: experts in groups, 0 = off */
    int64_t router_groups_top; /* groups a token may use */
    double route_scale;        /* the routed experts' output scale, default 1 */
    double aux_loss;           /* load-balancing loss coefficient, 0 = none */
    bool expert_bias;          /* auxiliary-loss-free balancing by a per-expert bias */
    double capacity_factor;    /* tokens an expert takes, over its fair share; 0 = dropless */
} plc_moe;

/* Multi-head latent attention (DeepSeek-V2/V3, Kimi-K2; issue 35): queries
 * through a rank-q_rank compression (0: none), keys and values through a
 * shared rank-kv_rank latent, each head's query/key of nope_head_dim +
 * rope_head_dim (the decoupled RoPE part, one rope key shared by the heads)
 * and its value of v_head_dim. kv_rank == 0: ordinary (grouped-query)
 * attention. */
typedef struct plc_mla {
    int64_t q_rank, kv_rank;
    int64_t nope_head_dim, rope_head_dim, v_head_dim;
} plc_mla;

typedef struct plc_model {
    char name[64];
    int64_t layers, hidden, ffn_hidden, heads, kv_heads, vocab, seq_len;
    bool tie_embeddings;
    double norm_eps;   /* RMSNorm or LayerNorm epsilon, default 1e-5 */
    double rope_theta; /* default 10000 */
    plc_arch arch;           /* default PLC_ARCH_LLAMA */
    plc_positions positions; /* default PLC_POS_ROPE */
    plc_moe moe;             /* experts == 0: dense */
    plc_mla mla;             /* kv_rank == 0: not latent attention */
    /* Each (grouped-query) head's query, key and value width; 0: hidden /
     * heads. Qwen3 sets it apart (30B-A3B: hidden 2048, 32 heads of 128),
     * so the q projection is [hidden, heads * head_dim], the output one
     * [heads * head_dim, hidden]. Unused with latent attention. */
    int64_t head_dim;
    /* qk-norm (Qwen3): an RMSNorm over each head's query and over each
     * head's key, after the projections and before RoPE, with weights of
     * head_dim (one for the queries, one for the keys, shared by the heads) */
    bool qk_norm;
} plc_model;

/* the head width the model's attention uses (plc_model.head_dim) */
static inline int64_t plc_model_head_dim(const plc_model *m)
{
    return m->head_dim > 0 ? m->head_dim : m->heads > 0 ? m->hidden / m->heads : 0;
}

/* plrun's lowering runs heads of hidden / heads channels without qk-norm:
 * 0, or -1 with the reason in why (the lowering's refusal and the solver's
 * under engine plrun, one sentence) */
int plc_model_plrun_heads(const plc_model *m, char *why, size_t size);

/* ---- training ------------------------------------------------------------- */

typedef struct plc_train {
    int64_t global_batch; /* sequences per optimizer step (tokens are converted) */
    plc_precision precision;
    /* AdamW */
    double beta1, beta2, eps, weight_decay;
    /* learning rate: linear warmup to lr_peak over warmup_steps, then cosine
     * decay to lr_floor at decay_steps (default: steps), constant after. */
    double lr_peak, lr_floor;
    int64_t warmup_steps, decay_steps;
    double grad_clip; /* global gradient-norm clip, 0 = off */
    int64_t steps;
    uint64_t seed;
    /* the token file: its path relative to the spec's directory, or absolute
     * as the spec wrote it, normalised (docs/data.md); NULL: the synthetic
     * source. Its size and the CRC-32 of its bytes are what plc compile read
     * (0 and 0 until a command reads the whole file). */
    const char *data_path;
    uint64_t data_size;
    uint32_t data_crc32;
    plc_engine engine;     /* default PLC_ENGINE_PLRUN */
} plc_train;

/* ---- layout constraints ----------------------------------------------------
 * Each layout dimension is a plc_choice: auto (any valid value), a single
 * value, a set {a, b, c} or a range lo..hi. Enum-valued dimensions (schedule,
 * recompute, attention) hold enum values; on/off dimensions hold 0/1. */
#define PLC_CHOICE_MAX 32

typedef enum plc_choice_kind {
    PLC_CHOICE_AUTO,
    PLC_CHOICE_SET, /* a single value is a set of one */
    PLC_CHOICE_RANGE
} plc_choice_kind;

typedef struct plc_choice {
    plc_choice_kind kind;
    int n;                     /* PLC_CHOICE_SET: number of values */
    int64_t v[PLC_CHOICE_MAX]; /* PLC_CHOICE_SET: the values, ascending */
    int64_t lo, hi;            /* PLC_CHOICE_RANGE: inclusive bounds */
} plc_choice;

static inline bool plc_choice_allows(const plc_choice *c, int64_t x)
{
    switch (c->kind) {
    case PLC_CHOICE_AUTO: return true;
    case PLC_CHOICE_RANGE: return x >= c->lo && x <= c->hi;
    case PLC_CHOICE_SET:
        for (int i = 0; i < c->n; i++)
            if (c->v[i] == x) return true;
        return false;
    }
    return false;
}

/* true when the choice pins exactly one value (stored in *out) */
static inline bool plc_choice_fixed(const plc_choice *c, int64_t *out)
{
    if (c->kind == PLC_CHOICE_SET && c->n == 1) { *out = c->v[0]; return true; }
    if (c->kind == PLC_CHOICE_RANGE && c->lo == c->hi) { *out = c->lo; return true; }
    return false;
}

/* X(name, type, kind, what): every layout dimension, in the order of the
 * .plan language, the plan file and `plc solve`'s columns. kind says how its
 * values are spelled, bounded and stored (PLC_DIMK_*). The concrete layout,
 * the layout block's choices, the front end's parsing, the plan file's
 * fields and the search's dimensions are all generated from this list, so a
 * new dimension is one line here plus the rules that concern it
 * (common/layout_rules.c). */
#define PLC_LAYOUT_FIELDS(X)                                                                             \
    X(dp,            int64_t,       DEGREE,    "data-parallel degree")                                  \
    X(tp,            int64_t,       DEGREE,    "tensor-parallel degree")                                \
    X(pp,            int64_t,       DEGREE,    "pipeline stages")                                       \
    X(cp,            int64_t,       DEGREE,    "context-parallel degree")                               \
    X(ep,            int64_t,       DEGREE,    "expert-parallel degree (MoE layers' routed experts)")   \
    X(etp,           int64_t,       DEGREE,    "expert tensor-parallel degree (MoE layers' experts)")   \
    X(sp,            int64_t,       ONOFF,     "sequence parallelism (needs tp > 1 to matter)")         \
    X(vpp,           int64_t,       DEGREE,    "virtual stages per pipeline rank (interleaved)")        \
    X(micro_batch,   int64_t,       DEGREE,    "sequences per micro-batch per data-parallel rank")      \
    X(schedule,      plc_schedule,  SCHEDULE,  "pipeline schedule")                                     \
    X(recompute,     plc_recompute, RECOMPUTE, "activation recompute policy")                           \
    X(recompute_layers, int64_t,    LAYERS,    "k of recompute = block, n of every; 0 otherwise")       \
    X(zero,          int64_t,       ZERO,      "ZeRO stage 0..3")                                       \
    X(attention,     plc_attention, ATTENTION, "attention kernel")                                      \
    X(fused_rmsnorm, int64_t,       ONOFF,     "fused RMSNorm kernel")

/* ep and etp concern a model with experts only: a dense model has ep = etp
 * = 1, and a layout built field by field that leaves them 0 reads as 1
 * (plc_layout_ep, plc_layout_etp). Texts and tables write them where they
 * are more than 1 (plc_layout_text) or the model has experts (plc solve's
 * table), so a dense model's outputs do not show them. The expert grid
 * (Megatron-Core's "MoE parallel folding"): the dp * tp * cp ranks of a
 * pipeline stage regroup, for the MoE layers, into etp (innermost) x ep x
 * edp, edp = dp * tp * cp / (ep * etp) the expert-data-parallel degree. */
#define PLC_LAYOUT_MOE_DIM(d) ((d) == PLC_LD_ep || (d) == PLC_LD_etp)

/* how a dimension's values are spelled and bounded */
typedef enum plc_dim_kind {
    PLC_DIMK_DEGREE,    /* a whole number from 1 */
    PLC_DIMK_ONOFF,     /* on/off, stored 1/0 */
    PLC_DIMK_ZERO,      /* 0..3 */
    PLC_DIMK_SCHEDULE,  /* plc_schedule */
    PLC_DIMK_RECOMPUTE, /* plc_recompute */
    PLC_DIMK_ATTENTION, /* plc_attention */
    PLC_DIMK_LAYERS     /* a count of layers from 0 */
} plc_dim_kind;

/* PLC_LD_dp, PLC_LD_tp, ...: a dimension's index in PLC_LAYOUT_FIELDS order */
typedef enum plc_layout_dim {
#define PLC_LAYOUT_DIM_ENUM(name, type, kind, what) PLC_LD_##name,
    PLC_LAYOUT_FIELDS(PLC_LAYOUT_DIM_ENUM)
#undef PLC_LAYOUT_DIM_ENUM
    PLC_LD_COUNT
} plc_layout_dim;

typedef struct plc_layout_spec {
#define PLC_LAYOUT_CHOICE(name, type, kind, what) plc_choice name;
    PLC_LAYOUT_FIELDS(PLC_LAYOUT_CHOICE)
#undef PLC_LAYOUT_CHOICE
    double memory_limit;     /* share of device memory a rank may use, default 1.0 */
    plc_objective objective; /* default PLC_OBJ_TIME */
} plc_layout_spec;

/* one concrete layout: what the solver picks and the lowering consumes */
typedef struct plc_layout {
#define PLC_LAYOUT_MEMBER(name, type, kind, what) type name;
    PLC_LAYOUT_FIELDS(PLC_LAYOUT_MEMBER)
#undef PLC_LAYOUT_MEMBER
} plc_layout;

/* dimension d of a layout as a number (enum values for schedule, ...) */
static inline int64_t plc_layout_get(const plc_layout *l, plc_layout_dim d)
{
    switch (d) {
#define PLC_LAYOUT_GET(name, type, kind, what) case PLC_LD_##name: return (int64_t)l->name;
        PLC_LAYOUT_FIELDS(PLC_LAYOUT_GET)
#undef PLC_LAYOUT_GET
    case PLC_LD_COUNT: break;
    }
    return 0;
}

static inline void plc_layout_set(plc_layout *l, plc_layout_dim d, int64_t v)
{
    switch (d) {
#define PLC_LAYOUT_SET(name, type, kind, what) case PLC_LD_##name: l->name = (type)v; break;
        PLC_LAYOUT_FIELDS(PLC_LAYOUT_SET)
#undef PLC_LAYOUT_SET
    case PLC_LD_COUNT: break;
    }
}

static inline int64_t plc_layout_ep(const plc_layout *l) { return l->ep > 1 ? l->ep : 1; }
static inline int64_t plc_layout_etp(const plc_layout *l) { return l->etp > 1 ? l->etp : 1; }
/* the expert-data-parallel degree: dp * tp * cp / (ep * etp) */
static inline int64_t plc_layout_edp(const plc_layout *l)
{
    int64_t stage = l->dp * l->tp * l->cp, e = plc_layout_ep(l) * plc_layout_etp(l);
    return e > 0 && stage % e == 0 ? stage / e : 1;
}

/* the layout block's choice of dimension d */
static inline const plc_choice *plc_layout_spec_choice(const plc_layout_spec *ls, plc_layout_dim d)
{
    switch (d) {
#define PLC_LAYOUT_CHOICE_OF(name, type, kind, what) case PLC_LD_##name: return &ls->name;
        PLC_LAYOUT_FIELDS(PLC_LAYOUT_CHOICE_OF)
#undef PLC_LAYOUT_CHOICE_OF
    case PLC_LD_COUNT: break;
    }
    return NULL;
}

static inline plc_choice *plc_layout_spec_choice_mut(plc_layout_spec *ls, plc_layout_dim d)
{
    return (plc_choice *)plc_layout_spec_choice(ls, d);
}

/* "dp", "tp", ..., "micro_batch": the keys of the dimensions in .plan files,
 * in PLC_LAYOUT_FIELDS order; the key of dimension d (NULL out of range);
 * its kind */
extern const char *const plc_layout_dim_names[PLC_LD_COUNT];
const char *plc_layout_dim_key(plc_layout_dim d);
plc_dim_kind plc_layout_dim_kind(plc_layout_dim d);
/* value v of dimension d as a .plan file writes it ("4", "on", "flash2") */
const char *plc_layout_value_text(plc_layout_dim d, int64_t v, char *buf, size_t size);
/* every dimension of l as "dp=1 tp=2 ... fused_rmsnorm=on", in list order */
const char *plc_layout_text(const plc_layout *l, char *buf, size_t size);

/* field by field (a struct comparison would read padding) */
static inline bool plc_layout_equal(const plc_layout *a, const plc_layout *b)
{
#define PLC_LAYOUT_SAME(name, type, kind, what) a->name == b->name &&
    return PLC_LAYOUT_FIELDS(PLC_LAYOUT_SAME) true;
#undef PLC_LAYOUT_SAME
}
/* value v of dimension d as written in a .plan file ("flash2", "4", "on"); returns buf */
const char *plc_layout_value_text(plc_layout_dim d, int64_t v, char *buf, size_t size);
/* a layout's recompute policy with its layer count: "full", "block:4", "every:2" */
const char *plc_recompute_text(const plc_layout *l, char *buf, size_t size);

/* Rows (columns) of a block when a dimension of n splits over `shards`:
 * ceil(n / shards). The last blocks may hold fewer real rows (the padded
 * vocabulary, docs/model.md); the rest of their block is zero padding. */
static inline int64_t plc_shard_block(int64_t n, int64_t shards)
{
    return shards > 1 ? (n + shards - 1) / shards : n;
}

/* ---- the engine's profile ----------------------------------------------------
 * What the runtime named by train.engine keeps, overlaps and can run, read
 * from engines.yaml (docs/engines.md; compiler/frontend/frontend_int.h), every
 * figure with its source. X(member, key, lo, hi, what) lists the figures; a
 * zero profile is plc's own accounting with nothing overlapped beyond it. */
#define PLC_ENGINE_FIGURES(X)                                                                                  \
    X(fused_swiglu,         "fused_swiglu",         0, 1, "1: a fused SwiGLU keeps its input and output only") \
    X(alloc_overhead,       "alloc_overhead",       0, 1, "share of per-micro-batch memory lost to the allocator") \
    X(grad_bytes,           "grad_bytes",           0, 8, "bytes per gradient element (0: the precision's)")   \
    X(tp_overlap,           "tp_overlap",           0, 1, "1: tp collectives run under the GEMMs (with sp)")  \
    X(grad_reduce_overlap,  "grad_reduce_overlap",  0, 1, "1: gradient reductions run under the backward")   \
    X(param_gather_overlap, "param_gather_overlap", 0, 1, "1: ZeRO weight gathers run under compute")        \
    X(p2p_overlap,          "p2p_overlap",          0, 1, "1: pipeline sends and receives run under compute")  \
    X(p2p_scatter_gather,   "p2p_scatter_gather",   0, 1, "1: a pipeline message (no sp) is sent 1/tp per tp rank") \
    X(overlap_sm_share,     "overlap_sm_share",     0, 1, "share of the SMs an overlapped collective holds")  \
    X(dp_bucket,            "dp_bucket",            0, 1e12, "elements per data-parallel bucket (0: per tensor)") \
    X(dp_reduce_bytes,      "dp_reduce_bytes",      0, 8, "bytes per gradient element reduced (0: grad_bytes)") \
    X(dp_allreduce_always,  "dp_allreduce_always",  0, 1, "1: ZeRO 1, 2 all-reduce the gradients (no reduce-scatter)") \
    X(gathered_logits,      "gathered_logits",      0, 1, "1: the loss spans the whole vocabulary on every tp rank") \
    X(selective_ops,        "selective_ops",        0, 1, "1: selective saves every second linear's output, not the attention core (op-level SAC)") \
    X(sharded_master,       "sharded_master",       0, 1, "1: under ZeRO 3 the fp32 shard is the master; no bf16 shard is kept") \
    X(uneven_stages,        "uneven_stages",        0, 2, "1: pipeline stages may hold unequal layer counts (vpp 1, GPipe or 1F1B); 2: also interleaved") \
    X(loss_saved_bytes,     "loss_saved_bytes",     0, 16, "bytes per logit the loss keeps for its backward, per micro-batch in flight") \
    X(loss_peak_bytes,      "loss_peak_bytes",      0, 32, "bytes per logit at the loss's own peak (0: plc's summed accounting)") \
    X(moe,                  "moe",                  0, 2, "1: runs mixture-of-experts layers with ep = 1; 2: with expert parallelism (ep > 1) too")  \
    X(moe_etp,              "moe_etp",              0, 1, "1: expert tensor parallelism separate from tp (etp > 1)") \
    X(moe_dispatcher,       "moe_dispatcher",       0, 2, "token dispatcher: 0 all-gather, 1 all-to-all, 2 flex (DeepEP)") \
    X(moe_comm_overlap,     "moe_comm_overlap",     0, 1, "share of the dispatch and combine hidden under another micro-batch's compute") \
    X(moe_grouped_gemm,     "moe_grouped_gemm",     0, 1, "1: a rank's experts run as one grouped GEMM (0: one GEMM per expert)")

typedef struct plc_engine_profile {
    char describes[96]; /* "Megatron-Core r0.8 profile" */
#define PLC_ENGINE_MEMBER(member, key, lo, hi, what) double member;
    PLC_ENGINE_FIGURES(PLC_ENGINE_MEMBER)
#undef PLC_ENGINE_MEMBER
    /* what it can run: bit v of offers[d] set when value v of layout
     * dimension d is offered (dimensions of kind ONOFF, ZERO, SCHEDULE,
     * RECOMPUTE, ATTENTION); 0: every value */
    uint64_t offers[PLC_LD_COUNT];
} plc_engine_profile;

/* does the profile run value v of layout dimension d? */
static inline bool plc_engine_offers(const plc_engine_profile *p, plc_layout_dim d, int64_t v)
{
    if ((unsigned)d >= PLC_LD_COUNT || p->offers[d] == 0) return true;
    return v >= 0 && v < 64 && ((p->offers[d] >> v) & 1u);
}

/* ---- CI gates the spec sets (the `gates` block; compiler/cli/gates.c) -----
 * Fractions; 0: not set (max_regression: unless has_regression, as 0% is a
 * threshold). The command line's gate options override them one by one. */
typedef struct plc_gate_spec {
    double max_memory;     /* peak per rank at most this share of device memory */
    double min_mfu;        /* predicted MFU at least this */
    double max_regression; /* against a --baseline: a drop of at most this */
    bool has_regression;
} plc_gate_spec;

/* ---- the whole job -------------------------------------------------------- */

typedef struct plc_job {
    const char *path;   /* spec file as given on the command line */
    const char *source; /* spec text exactly as read (embedded in plans) */
    size_t source_len;
    plc_model model;
    plc_cluster cluster;
    plc_train train;
    plc_layout_spec layout;
    plc_engine_profile engine; /* train.engine's profile */
    plc_gate_spec gates;       /* the gates block */
} plc_job;

/* the spellings of enum values in .plan files, in enum order, each list
 * ending in NULL (common/job.c, the one place they are written) */
extern const char *const plc_schedule_names[];
extern const char *const plc_recompute_names[];
extern const char *const plc_attention_names[];
extern const char *const plc_precision_names[];
extern const char *const plc_objective_names[];
extern const char *const plc_engine_names[];
extern const char *const plc_arch_names[];
extern const char *const plc_positions_names[];
extern const char *const plc_router_names[];

/* names of enum values as written in .plan files ("1f1b", "selective", ...);
 * NULL for an out-of-range value. */
const char *plc_schedule_name(plc_schedule s);
/* a zero-bubble schedule: its backwards split into B and W units */
static inline bool plc_schedule_splits(plc_schedule s) { return s >= PLC_SCHED_ZB_H1 && s <= PLC_SCHED_DUALPIPE_V; }
const char *plc_recompute_name(plc_recompute r);
const char *plc_attention_name(plc_attention a);
const char *plc_precision_name(plc_precision p);
const char *plc_objective_name(plc_objective o);
const char *plc_engine_name(plc_engine e);
const char *plc_arch_name(plc_arch a);
const char *plc_positions_name(plc_positions p);

#endif
