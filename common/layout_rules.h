/* layout_rules.h: the rulebook. What makes a model usable and a layout legal
 * for a job, stated once.
 *
 * Every part that needs a verdict asks here: the front end (spec_checks.c,
 * with only the dimensions the spec pins), the search (every candidate), the
 * lowering (the layout it is handed) and the schedule code. Each broken rule
 * comes back as a code and the layout or model key it is about, so callers
 * point at the right line without matching message text; plc_rule_message
 * words it.
 *
 * The vocabulary is never a constraint: it is padded to a multiple of tp
 * (plc_vocab_local), as Megatron's --make-vocab-size-divisible-by and llm.c
 * do. Padded rows of the embedding and columns of the head are zero, their
 * logits are left out of the softmax and their gradients are zero
 * (docs/model.md). */
#ifndef PLC_LAYOUT_RULES_H
#define PLC_LAYOUT_RULES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "plc/job.h"

/* pipeline stages a layout may have */
#define PLC_RULES_MAX_STAGES 128

/* X(code, key, family): every rule, in the order they are checked. key is
 * the model or layout key the rule is reported against; rules of one family
 * say the same thing from different sides (a front end reports one). */
#define PLC_RULES(X)                                              \
    X(OK,                "",            "ok")                     \
    /* the model alone */                                         \
    X(MODEL_POSITIVE,    "layers",      "model")                  \
    X(HEADS_HIDDEN,      "heads",       "model")                  \
    X(KV_HEADS_HEADS,    "kv_heads",    "model")                  \
    X(HEAD_DIM_ODD,      "heads",       "model")                  \
    /* each dimension in range */                                 \
    X(DEGREE_POSITIVE,   "dp",          "degree_positive")        \
    X(ZERO_RANGE,        "zero",        "zero_range")             \
    X(ENUM_RANGE,        "schedule",    "enum_range")             \
    /* the layout against the cluster, the model and the batch */ \
    X(TP_HEADS,          "tp",          "tp")                     \
    X(TP_KV_HEADS,       "tp",          "tp")                     \
    X(TP_FFN,            "tp",          "tp")                     \
    X(PP_MAX,            "pp",          "pp")                     \
    X(PP_LAYERS,         "pp",          "pp")                     \
    X(CP_SEQ,            "cp",          "cp_seq")                 \
    X(GPU_COUNT,         "dp",          "gpu_count")              \
    X(DP_BATCH,          "dp",          "batch")                  \
    X(MB_BATCH,          "micro_batch", "batch")                  \
    X(DP_MB_BATCH,       "micro_batch", "batch")                  \
    X(SP_ROWS,           "sp",          "sp_rows")                \
    /* expert parallelism (MoE layers) */                         \
    X(EP_DENSE,          "ep",          "ep_dense")               \
    X(EP_EXPERTS,        "ep",          "ep_experts")             \
    X(ETP_FFN,           "etp",         "etp_ffn")                \
    X(EP_STAGE,          "ep",          "ep_stage")               \
    /* the pipeline schedule */                                   \
    X(VPP_SCHEDULE,      "vpp",         "vpp_schedule")           \
    X(INTERLEAVED_PP,    "pp",          "interleaved_pp")         \
    X(VPP_PP1,           "vpp",         "vpp_pp1")                \
    X(INTERLEAVED_VPP,   "vpp",         "interleaved_vpp")        \
    X(VPP_LAYERS,        "vpp",         "vpp_layers")             \
    X(INTERLEAVED_MICRO, "micro_batch", "interleaved_micro")      \
    X(MODULAR_PP,        "pp",          "modular_pp")             \
    X(ZB_PP,             "pp",          "zb_pp")                  \
    X(ZB_V_LAYERS,       "pp",          "zb_v_layers")            \
    X(ZB_MICRO,          "micro_batch", "zb_micro")               \
    X(ZB_ZERO,           "zero",        "zb_zero")                \
    /* recompute granularity */                                   \
    X(RECOMPUTE_LAYERS_POLICY, "recompute_layers", "rl_policy")   \
    X(RECOMPUTE_LAYERS_NEEDED, "recompute_layers", "rl_needed")   \
    X(RECOMPUTE_LAYERS_STAGE,  "recompute_layers", "rl_stage")    \
    /* kernels */                                                 \
    X(FLASH_FP32,        "attention",   "flash_fp32")             \
    /* the engine: what its profile says it can run */            \
    X(ENGINE_OFFERS,     "schedule",    "engine")                 \
    X(ENGINE_MOE,        "ep",          "engine_moe")             \
    X(ENGINE_EP,         "ep",          "engine_ep")              \
    X(ENGINE_ETP,        "etp",         "engine_etp")

typedef enum plc_rule {
#define PLC_RULE_ENUM(code, key, family) PLC_RULE_##code,
    PLC_RULES(PLC_RULE_ENUM)
#undef PLC_RULE_ENUM
    PLC_RULE_COUNT
} plc_rule;

/* What a rule is checked against. Dimensions whose bit (1u << PLC_LD_x) is
 * not in `known` are unknown: a rule that needs one is skipped, so the front
 * end can check a spec that pins only some dimensions. gpus and
 * global_batch (sequences) are unknown when 0; precision when
 * !precision_known. */
typedef struct plc_rule_input {
    const plc_model *model;
    int64_t gpus;
    int64_t global_batch;
    plc_precision precision;
    bool precision_known;
    plc_layout layout;
    uint32_t known;
    uint64_t skip; /* bit r: rule r is not checked (a front end reporting every broken rule) */
    /* the engine's profile (what it runs: plc_engine_offers); NULL: every value */
    const plc_engine_profile *engine;
    plc_engine engine_id; /* for messages */
} plc_rule_input;

#define PLC_LD_BIT(dim) (1u << PLC_LD_##dim)
#define PLC_LD_ALL ((1u << PLC_LD_COUNT) - 1u)

/* a verdict: the first rule broken (PLC_RULE_OK: none) and the key it is
 * about ("tp", "micro_batch", "heads", ...) */
typedef struct plc_verdict {
    plc_rule rule;
    const char *key;
} plc_verdict;

/* the model's own rules (positive sizes, heads divide hidden, kv_heads
 * divide heads, even head dimension) */
plc_verdict plc_model_rules(const plc_model *m);

/* the model's rules, then every layout rule whose inputs are known */
plc_verdict plc_layout_rules(const plc_rule_input *in);

/* the whole job against one concrete layout (every dimension known) */
plc_verdict plc_layout_rules_job(const plc_job *job, const plc_layout *l);

/* One sentence for a broken rule, with the numbers involved: "tp = 3 does
 * not divide heads = 4". Returns buf. */
const char *plc_rule_message(const plc_rule_input *in, plc_verdict v, char *buf, size_t size);

/* the same sentence for a concrete layout of a job */
const char *plc_layout_rules_job_message(const plc_job *job, const plc_layout *l, plc_verdict v, char *buf,
                                         size_t size);

/* "PP_LAYERS": the rule's name, for tests and debugging */
const char *plc_rule_name(plc_rule r);

/* the rules of r's family, as skip bits */
uint64_t plc_rule_family_mask(plc_rule r);

/* ---- the vocabulary --------------------------------------------------------
 * Rows of the vocabulary each of tp ranks holds: ceil(vocab / tp). Rank t
 * holds ids [t * local, (t + 1) * local); ids >= vocab are padding. The
 * padded vocabulary is tp * local. (The block rule of every tp split,
 * plc_shard_block in plc/job.h.) */
static inline int64_t plc_vocab_local(int64_t vocab, int64_t tp) { return plc_shard_block(vocab, tp); }
static inline int64_t plc_vocab_padded(int64_t vocab, int64_t tp) { return plc_vocab_local(vocab, tp) * (tp > 1 ? tp : 1); }

/* ---- layers per pipeline stage ----------------------------------------------
 * Stage s of pp holds plc_stage_layers(layers, pp, s) consecutive layers,
 * from layer plc_stage_first_layer(layers, pp, s). When pp divides layers
 * every stage holds layers / pp. Otherwise (an engine with uneven_stages:
 * rule PP_LAYERS) the middle stages hold ceil(layers / pp) each and the
 * first and last share the rest, the first taking the odd layer: the two
 * ends, which also hold the embedding and the head and loss, get the fewer
 * layers, as Meta did for Llama 3.1 405B (126 layers on pp 8: 15, 16 x 6,
 * 15) and as BLOOM-176B's 70 layers run on pp 12 (5, 6 x 10, 5). Equal
 * middle stages are what Megatron-Core's
 * --decoder-first/last-pipeline-num-layers can express, and torchtitan's
 * first/last_stage_less_layers too (plc export). Where ceil leaves an end
 * stage empty (few layers per stage: 13 on pp 12) the middle stages hold
 * floor(layers / pp) instead. With pp = 2 stage 0 takes the odd layer.
 * With the interleaved schedule the split is over the pp * vpp virtual
 * stages, rank r holding virtual stages r, r + pp, ... (plc_rank_layers),
 * in the ceil form only (plc_stage_layers_ceil_form: rule VPP_LAYERS):
 * floor's ends would hold many times a middle stage's layers (80 layers
 * on 64 virtual stages: 9, 1 x 62, 9). */
static inline int64_t plc_stage_layers_middle(int64_t layers, int64_t pp)
{
    if (pp <= 2) return 0;
    int64_t mid = (layers + pp - 1) / pp;
    return layers - (pp - 2) * mid >= 2 ? mid : layers / pp;
}

/* is the split over n > 2 stages the ceil form (middle stages
 * ceil(layers / n), the ends no more and a layer at least)? */
static inline bool plc_stage_layers_ceil_form(int64_t layers, int64_t n)
{
    return n > 2 && plc_stage_layers_middle(layers, n) == (layers + n - 1) / n;
}

static inline int64_t plc_stage_layers(int64_t layers, int64_t pp, int64_t stage)
{
    if (pp <= 1) return layers;
    int64_t ends = layers - (pp - 2) * plc_stage_layers_middle(layers, pp);
    if (stage == 0) return ends - ends / 2;
    if (stage == pp - 1) return ends / 2;
    return plc_stage_layers_middle(layers, pp);
}

static inline int64_t plc_stage_first_layer(int64_t layers, int64_t pp, int64_t stage)
{
    if (stage <= 0) return 0;
    return plc_stage_layers(layers, pp, 0) + (stage - 1) * plc_stage_layers_middle(layers, pp);
}

/* Layers of pipeline rank `rank` of pp, each rank holding vpp virtual
 * stages (vpp > 1: the interleaved schedule): the sum of
 * plc_stage_layers(layers, pp * vpp, v) over its virtual stages v = rank,
 * rank + pp, ..., rank + (vpp - 1) pp, as torchtitan splits an interleaved
 * pipeline (Llama 3.1 405B's 126 layers on pp 8, vpp 2: virtual stages 7,
 * 8 x 14, 7; ranks 15, 16 x 6, 15). vpp 1 is plc_stage_layers. */
static inline int64_t plc_rank_layers(int64_t layers, int64_t pp, int64_t vpp, int64_t rank)
{
    if (vpp <= 1) return plc_stage_layers(layers, pp, rank);
    int64_t n = 0;
    for (int64_t v = 0; v < vpp; v++) n += plc_stage_layers(layers, pp * vpp, rank + v * pp);
    return n;
}

/* do the ranks hold unequal layer counts (pp * vpp does not divide layers)? */
static inline bool plc_ranks_uneven(int64_t layers, int64_t pp, int64_t vpp)
{
    int64_t chunks = (pp > 0 ? pp : 1) * (vpp > 0 ? vpp : 1);
    return layers % chunks != 0;
}

/* The uneven_stages figure an engine needs to run layout l's stages
 * (include/plc/job.h): 0 where pp * vpp divides layers, 1 for unequal
 * stages with vpp 1, 2 for unequal virtual stages (vpp > 1). */
static inline int plc_uneven_stages_needed(int64_t layers, const plc_layout *l)
{
    if (!plc_ranks_uneven(layers, l->pp, l->vpp)) return 0;
    return l->vpp > 1 ? 2 : 1;
}

/* the most layers a rank holds: rank 0's, the last's or a middle rank's
 * (the middle ranks hold only middle virtual stages, alike) */
static inline int64_t plc_rank_layers_most(int64_t layers, int64_t pp, int64_t vpp)
{
    int64_t most = 0, ranks[3] = {0, pp > 2 ? 1 : 0, pp > 1 ? pp - 1 : 0};
    for (int i = 0; i < 3; i++) {
        int64_t n = plc_rank_layers(layers, pp, vpp, ranks[i]);
        if (n > most) most = n;
    }
    return most;
}

/* The most recompute_layers may be: with block (Megatron counts per
 * virtual stage) the layers of the largest virtual stage, else of the
 * rank with the most layers (rule RECOMPUTE_LAYERS_STAGE, the search's
 * values). */
static inline int64_t plc_recompute_layers_max(int64_t layers, const plc_layout *l)
{
    int64_t pp = l->pp > 0 ? l->pp : 1, vpp = l->vpp > 0 ? l->vpp : 1;
    return l->recompute == PLC_RECOMPUTE_BLOCK ? plc_rank_layers_most(layers, pp * vpp, 1)
                                               : plc_rank_layers_most(layers, pp, vpp);
}

/* Whole layers of one pipeline stage's rank that recompute = block / every
 * recomputes (per_rank layers on the rank: plc_rank_layers): block, the first
 * recompute_layers of each of its vpp chunks (Megatron counts per virtual
 * stage); every, each recompute_layers-th of its layers; full, all; 0
 * otherwise. */
static inline int64_t plc_recomputed_layers_of(const plc_layout *l, int64_t per_rank)
{
    int64_t vpp = l->vpp > 0 ? l->vpp : 1, k = l->recompute_layers;
    switch (l->recompute) {
    case PLC_RECOMPUTE_FULL: return per_rank;
    case PLC_RECOMPUTE_BLOCK: return k < 1 ? 0 : (k * vpp < per_rank ? k * vpp : per_rank);
    case PLC_RECOMPUTE_EVERY: return k < 1 ? 0 : per_rank / k;
    default: return 0;
    }
}

/* the same on the rank with the most layers */
static inline int64_t plc_recomputed_layers(const plc_model *m, const plc_layout *l)
{
    return plc_recomputed_layers_of(l, plc_rank_layers_most(m->layers, l->pp > 0 ? l->pp : 1, l->vpp > 0 ? l->vpp : 1));
}

/* Micro-batches per data-parallel rank per step (0 when the batch does not
 * split: a rule says why). */
static inline int64_t plc_micro_batches(int64_t global_batch, const plc_layout *l)
{
    int64_t per = l->dp * l->micro_batch;
    return per > 0 && global_batch % per == 0 ? global_batch / per : 0;
}

#endif
