/* spec_keys.c: tables of blocks and keys (canonical order = fmt order). */
#include "compiler/frontend/frontend_int.h"

#include <string.h>

#include "plc/job.h"

/* the job's enum spellings are common/job.c's (plc/job.h); the optimizer
 * has one value and no enum */
const char *const plc_optimizer_names[] = {"adamw", NULL};

#define K(name, type, unit, names, req, doc) {name, type, unit, names, req, doc}

static const plc_key_def model_keys[] = {
    K("arch", PLC_KEY_ENUM, 0, plc_arch_names, false, "transformer block, llama or gpt; default llama"),
    K("layers", PLC_KEY_INT, 0, NULL, true, "number of transformer layers, e.g. layers = 32"),
    K("hidden", PLC_KEY_INT, 0, NULL, true, "model width, e.g. hidden = 4096"),
    K("ffn_hidden", PLC_KEY_INT, 0, NULL, false, "MLP inner width, e.g. ffn_hidden = 11008; default 4 x hidden with arch = gpt"),
    K("heads", PLC_KEY_INT, 0, NULL, true, "attention heads, e.g. heads = 32"),
    K("kv_heads", PLC_KEY_INT, 0, NULL, false, "key/value heads (grouped-query attention); default: heads"),
    K("head_dim", PLC_KEY_INT, 0, NULL, false, "each head's query/key/value width, e.g. head_dim = 128 (Qwen3); default hidden / heads"),
    K("qk_norm", PLC_KEY_BOOL, 0, NULL, false, "RMSNorm over each head's query and key (Qwen3); default off"),
    K("vocab", PLC_KEY_INT, 0, NULL, true, "vocabulary size, e.g. vocab = 32000"),
    K("seq_len", PLC_KEY_INT, 0, NULL, true, "tokens per sequence, e.g. seq_len = 2048"),
    K("positions", PLC_KEY_ENUM, 0, plc_positions_names, false, "rope or learned; default learned with arch = gpt, rope with llama"),
    K("tie_embeddings", PLC_KEY_BOOL, 0, NULL, false, "share input and output embeddings; default off"),
    K("norm_eps", PLC_KEY_REAL, 0, NULL, false, "RMSNorm (llama) or LayerNorm (gpt) epsilon; default 1e-5"),
    K("rope_theta", PLC_KEY_REAL, 0, NULL, false, "RoPE base (positions = rope); default 10000"),
    /* mixture of experts (docs/model.md): the keys after `experts` need it */
    K("experts", PLC_KEY_INT, 0, NULL, false, "routed experts of a mixture-of-experts model, e.g. experts = 8; default 0 (dense)"),
    K("experts_per_token", PLC_KEY_INT, 0, NULL, false, "routed experts a token is sent to (top-k), e.g. experts_per_token = 2"),
    K("shared_experts", PLC_KEY_INT, 0, NULL, false, "always-active experts of each MoE layer; default 0"),
    K("expert_ffn_hidden", PLC_KEY_INT, 0, NULL, false, "each routed expert's MLP width; default ffn_hidden"),
    K("shared_expert_ffn_hidden", PLC_KEY_INT, 0, NULL, false, "each shared expert's MLP width; default expert_ffn_hidden"),
    K("dense_layers", PLC_KEY_INT, 0, NULL, false, "the first k layers keep a dense MLP (first_k_dense_replace); default 0"),
    K("moe_every", PLC_KEY_INT, 0, NULL, false, "after dense_layers, every n-th layer is MoE, the others dense; default 1"),
    K("router", PLC_KEY_ENUM, 0, plc_router_names, false, "softmax or sigmoid scores before the top-k; default softmax"),
    K("router_groups", PLC_KEY_INT, 0, NULL, false, "group-limited routing: the experts in this many groups; default off"),
    K("router_groups_top", PLC_KEY_INT, 0, NULL, false, "groups a token's experts are chosen from, with router_groups"),
    K("route_scale", PLC_KEY_REAL, 0, NULL, false, "scale of the routed experts' output; default 1"),
    K("aux_loss", PLC_KEY_REAL, 0, NULL, false, "load-balancing loss coefficient, e.g. aux_loss = 0.01; default 0 (none)"),
    K("expert_bias", PLC_KEY_BOOL, 0, NULL, false, "auxiliary-loss-free balancing by a per-expert bias; default off"),
    K("capacity_factor", PLC_KEY_REAL, 0, NULL, false, "dropless, or tokens an expert takes over its fair share, e.g. 1.25; default dropless"),
    /* multi-head latent attention (DeepSeek-V2/V3): kv_lora_rank > 0 turns it on */
    K("q_lora_rank", PLC_KEY_INT, 0, NULL, false, "latent attention: rank of the query compression; default 0 (none)"),
    K("kv_lora_rank", PLC_KEY_INT, 0, NULL, false, "latent attention: rank of the shared key/value latent, e.g. 512; default 0 (off)"),
    K("qk_nope_head_dim", PLC_KEY_INT, 0, NULL, false, "latent attention: each head's query/key part without RoPE, e.g. 128"),
    K("qk_rope_head_dim", PLC_KEY_INT, 0, NULL, false, "latent attention: each head's decoupled RoPE query/key part, e.g. 64"),
    K("v_head_dim", PLC_KEY_INT, 0, NULL, false, "latent attention: each head's value width, e.g. 128"),
};

/* cluster: the fixed keys, then one key per catalog figure (PLC_HW_FIELDS) */
static const plc_key_def cluster_keys[] = {
    K("gpu", PLC_KEY_STRING, 0, NULL, true, "catalog entry, e.g. gpu = \"A100-SXM4-80GB\""),
    K("catalog", PLC_KEY_STRING, 0, NULL, false, "hardware catalog file, relative to the spec"),
    K("nodes", PLC_KEY_INT, 0, NULL, false, "number of nodes; default 1"),
    K("gpus_per_node", PLC_KEY_INT, 0, NULL, false, "GPUs (ranks) per node; default 8"),
#define HW_KEY(member, key, unit) K(key, PLC_KEY_QUANTITY, unit, NULL, false, "overrides the catalog's " key),
    PLC_HW_FIELDS(HW_KEY)
#undef HW_KEY
};

static const plc_key_def train_keys[] = {
    K("global_batch", PLC_KEY_BATCH, 0, NULL, true, "sequences per optimizer step (or a token count: 4M tokens)"),
    K("steps", PLC_KEY_INT, 0, NULL, true, "optimizer steps, e.g. steps = 1000"),
    K("precision", PLC_KEY_ENUM, 0, plc_precision_names, false, "bf16, fp32 or fp8 (H100, H200); default bf16"),
    K("engine", PLC_KEY_ENUM, 0, plc_engine_names, false, "runtime the layout is for: plrun, megatron, megatron_r0_8 or fsdp2; default plrun"),
    K("seed", PLC_KEY_INT, 0, NULL, false, "seed of weights and synthetic data; default 1"),
    K("data", PLC_KEY_DATA, 0, NULL, false, "synthetic or a token file \"path\"; default synthetic"),
    K("optimizer", PLC_KEY_ENUM, 0, plc_optimizer_names, false, "adamw (the only one); default adamw"),
    K("adamw.beta1", PLC_KEY_REAL, 0, NULL, false, "AdamW first-moment decay in [0, 1); default 0.9"),
    K("adamw.beta2", PLC_KEY_REAL, 0, NULL, false, "AdamW second-moment decay in [0, 1); default 0.95"),
    K("adamw.eps", PLC_KEY_REAL, 0, NULL, false, "AdamW denominator epsilon; default 1e-8"),
    K("adamw.weight_decay", PLC_KEY_REAL, 0, NULL, false, "decoupled weight decay of matrices; default 0.1"),
    K("lr.peak", PLC_KEY_REAL, 0, NULL, false, "learning rate after warmup; default 3e-4"),
    K("lr.floor", PLC_KEY_REAL, 0, NULL, false, "learning rate after cosine decay; default lr.peak / 10"),
    K("lr.warmup", PLC_KEY_INT, 0, NULL, false, "linear warmup steps; default 0"),
    K("lr.decay_steps", PLC_KEY_INT, 0, NULL, false, "step where cosine decay ends; default steps"),
    K("grad_clip", PLC_KEY_REAL, 0, NULL, false, "global gradient-norm clip, 0 = off; default 1.0"),
};

/* the layout dimensions, from PLC_LAYOUT_FIELDS: a kind's key type and names */
#define LAYOUT_TYPE_DEGREE PLC_KEY_CHOICE_INT
#define LAYOUT_TYPE_ZERO PLC_KEY_CHOICE_INT
#define LAYOUT_TYPE_ONOFF PLC_KEY_CHOICE_BOOL
#define LAYOUT_TYPE_SCHEDULE PLC_KEY_CHOICE_ENUM
#define LAYOUT_TYPE_RECOMPUTE PLC_KEY_CHOICE_ENUM
#define LAYOUT_TYPE_ATTENTION PLC_KEY_CHOICE_ENUM
#define LAYOUT_TYPE_LAYERS PLC_KEY_CHOICE_INT
#define LAYOUT_NAMES_DEGREE NULL
#define LAYOUT_NAMES_ZERO NULL
#define LAYOUT_NAMES_ONOFF NULL
#define LAYOUT_NAMES_SCHEDULE plc_schedule_names
#define LAYOUT_NAMES_RECOMPUTE plc_recompute_names
#define LAYOUT_NAMES_ATTENTION plc_attention_names
#define LAYOUT_NAMES_LAYERS NULL
#define LAYOUT_KEY(name, type, kind, what) K(#name, LAYOUT_TYPE_##kind, 0, LAYOUT_NAMES_##kind, false, what),

static const plc_key_def layout_keys[] = {
    PLC_LAYOUT_FIELDS(LAYOUT_KEY)
    K("memory_limit", PLC_KEY_QUANTITY, PLC_UNIT_PERCENT, NULL, false, "share of device memory; default 100%"),
    K("objective", PLC_KEY_ENUM, 0, plc_objective_names, false, "time or memory; default time"),
};

/* CI thresholds (plc check and compile); the command line's gate options
 * override each (compiler/cli/gates.c) */
static const plc_key_def gates_keys[] = {
    K("max_memory", PLC_KEY_QUANTITY, PLC_UNIT_PERCENT, NULL, false, "gate: peak per rank at most this share of device memory, e.g. 80%"),
    K("min_mfu", PLC_KEY_QUANTITY, PLC_UNIT_PERCENT, NULL, false, "gate: predicted MFU at least this, e.g. 45%"),
    K("max_regression", PLC_KEY_QUANTITY, PLC_UNIT_PERCENT, NULL, false, "gate: with --baseline, a drop of at most this, e.g. 2%"),
};

#define N(a) ((int)(sizeof(a) / sizeof((a)[0])))
const plc_block_def plc_block_defs[] = {
    {"model", true, true, model_keys, N(model_keys)},
    {"cluster", false, true, cluster_keys, N(cluster_keys)},
    {"train", false, true, train_keys, N(train_keys)},
    {"layout", false, false, layout_keys, N(layout_keys)},
    {"gates", false, false, gates_keys, N(gates_keys)},
};
const int plc_nblock_defs = N(plc_block_defs);

const plc_block_def *plc_block_def_find(const char *kind)
{
    for (int i = 0; i < plc_nblock_defs; i++)
        if (strcmp(plc_block_defs[i].kind, kind) == 0) return &plc_block_defs[i];
    return NULL;
}

int plc_key_index(const plc_block_def *def, const char *key)
{
    for (int i = 0; i < def->nkeys; i++)
        if (strcmp(def->keys[i].name, key) == 0) return i;
    return -1;
}

const char *plc_suggest(const char *word, const char *const *cands, int n)
{
    int len = (int)strlen(word);
    /* short words: one edit; longer ones: two (a transposition), or a third of the length */
    int cap = len <= 3 ? 1 : len / 3 > 2 ? len / 3 : 2;
    if (cap > 3) cap = 3;
    const char *best = NULL;
    int best_d = cap + 1;
    for (int i = 0; i < n; i++) {
        int d = plc_edit_distance(word, cands[i], cap);
        if (d < best_d) { best_d = d; best = cands[i]; }
    }
    return best;
}

const char *plc_suggest_key(const plc_block_def *def, const char *key)
{
    const char *names[64] = {0};
    int n = 0;
    for (int i = 0; i < def->nkeys && n < 64; i++) names[n++] = def->keys[i].name;
    const char *s = plc_suggest(key, names, n);
    if (s) return s;
    /* `beta1` for `adamw.beta1`: match the last component */
    for (int i = 0; i < n; i++) {
        const char *dot = strrchr(names[i], '.');
        if (dot && strcmp(dot + 1, key) == 0) return names[i];
    }
    return NULL;
}

const char *plc_join_names(plc_arena *a, const char *const *names, int n)
{
    size_t len = 1;
    for (int i = 0; i < n && names[i]; i++) len += strlen(names[i]) + 2;
    char *s = plc_arena_alloc(a, len);
    for (int i = 0; i < n && names[i]; i++) {
        if (i) strcat(s, ", ");
        strcat(s, names[i]);
    }
    return s;
}
