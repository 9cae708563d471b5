/* spec_checks.c: cross-block checks of a resolved spec. Legality is the
 * rulebook's (common/layout_rules.h), checked over the dimensions the spec
 * pins; this file adds where to point, the values that would work and a
 * hint, and the warnings about settings that do nothing. */
#include "compiler/frontend/frontend_int.h"

#include <string.h>

#include "common/layout_rules.h"

static int64_t gcd64(int64_t a, int64_t b)
{
    while (b) {
        int64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

const char *plc_divisors_text(plc_arena *a, int64_t n)
{
    enum { MAX_SHOWN = 32, MAX_DIVISORS = 16384 };
    /* divisors up to sqrt(n) ascending, and their co-divisors (descending) */
    int64_t *small = PLC_NEW_ARRAY(a, int64_t, MAX_DIVISORS), *large = PLC_NEW_ARRAY(a, int64_t, MAX_DIVISORS);
    int ns = 0, nl = 0;
    for (int64_t k = 1; k <= n / k && nl < MAX_DIVISORS; k++) {
        if (n % k) continue;
        small[ns++] = k;
        if (k != n / k) large[nl++] = n / k;
    }
    char *s = plc_arena_alloc(a, (MAX_SHOWN + 2) * 24);
    size_t len = 0;
    int total = ns + nl;
    for (int i = 0; i < total && i < MAX_SHOWN; i++) {
        int64_t v = i < ns ? small[i] : large[nl - 1 - (i - ns)];
        len += (size_t)sprintf(s + len, "%s%lld", i ? ", " : "", (long long)v);
    }
    if (total > MAX_SHOWN) strcpy(s + len, ", ...");
    return s;
}

/* where to point for key: its value, or the block header when defaulted */
static plc_loc at(const plc_block *b, const char *key)
{
    plc_pair *p = b ? plc_block_find_pair(b, key) : NULL;
    if (p) return p->value->loc;
    return b ? b->kind_loc : (plc_loc){0};
}

static bool fixed(const plc_choice *c, int64_t *v) { return plc_choice_fixed(c, v); }


/* what tp must divide: heads, kv_heads and ffn_hidden, less those in error
 * (whose rules the input skips) */
static int64_t tp_divisor(const plc_rule_input *in)
{
    const plc_model *m = in->model;
    int64_t g = 0;
    if (!(in->skip >> PLC_RULE_TP_HEADS & 1u)) g = gcd64(g, m->heads);
    if (!(in->skip >> PLC_RULE_TP_KV_HEADS & 1u)) g = gcd64(g, m->kv_heads);
    if (!(in->skip >> PLC_RULE_TP_FFN & 1u)) g = gcd64(g, m->ffn_hidden);
    return g > 0 ? g : 1;
}

/* a broken rule, reported at its key with the hints a user needs */
static void report(plc_diag *d, plc_arena *a, const plc_spec_facts *f, const plc_rule_input *in, plc_verdict v)
{
    const plc_model *m = in->model;
    char msg[256];
    plc_rule_message(in, v, msg, sizeof msg);
    bool model_key = v.rule <= PLC_RULE_HEAD_DIM_ODD;
    plc_loc loc = model_key ? at(f->model_block, v.key) : at(f->layout_block, v.key);
    switch (v.rule) {
    case PLC_RULE_KV_HEADS_HEADS:
        plc_diag_error(d, loc, "%s; valid: %s", msg, plc_divisors_text(a, m->heads));
        plc_diag_hint(d, "grouped-query attention shares each key/value head among heads / kv_heads query heads");
        break;
    case PLC_RULE_HEADS_HIDDEN:
        plc_diag_error(d, loc, "%s", msg);
        plc_diag_hint(d, "the head dimension is hidden / heads, a whole number, unless head_dim sets it");
        break;
    case PLC_RULE_HEAD_DIM_ODD:
        plc_diag_error(d, loc, "%s", msg);
        plc_diag_hint(d, "RoPE rotates pairs of channels, so the head dimension must be even");
        break;
    case PLC_RULE_TP_HEADS:
    case PLC_RULE_TP_KV_HEADS:
    case PLC_RULE_TP_FFN:
        plc_diag_error(d, loc, "%s; valid: %s", msg, plc_divisors_text(a, tp_divisor(in)));
        plc_diag_hint(d, "tensor parallelism splits heads, kv_heads and ffn_hidden evenly across tp ranks");
        break;
    case PLC_RULE_PP_LAYERS:
        if (in->engine && in->engine->uneven_stages > 0 && in->layout.pp > m->layers) { /* unequal stages: any pp up to layers */
            plc_diag_error(d, loc, "%s; valid: 1 to %lld", msg, (long long)m->layers);
            plc_diag_hint(d, "engine %s splits the layers unequally where pp does not divide them (the first and last "
                             "stages hold fewer: uneven_stages, engines.yaml), but every stage holds a layer at least",
                          plc_engine_name(in->engine_id));
            break;
        }
        plc_diag_error(d, loc, "%s; valid: %s", msg, plc_divisors_text(a, m->layers));
        plc_diag_hint(d, "stages hold equal layer counts, unless the engine's profile has uneven_stages "
                         "(engines.yaml): 1 with vpp = 1 and schedule gpipe or 1f1b, 2 also with interleaved");
        break;
    case PLC_RULE_VPP_LAYERS:
        plc_diag_error(d, loc, "%s", msg);
        plc_diag_hint(d, "each of the pp * vpp virtual stages holds the same number of layers, unless the "
                         "engine's profile has uneven_stages 2 (engines.yaml): then the middle ones may hold "
                         "ceil(layers / (pp * vpp)) and the first and last the rest");
        break;
    case PLC_RULE_VPP_SCHEDULE:
        plc_diag_error(d, loc, "%s", msg);
        plc_diag_hint(d, "virtual pipeline stages exist only in the interleaved schedule");
        break;
    case PLC_RULE_CP_SEQ:
        plc_diag_error(d, loc, "%s; valid: %s", msg, plc_divisors_text(a, m->seq_len % 2 ? 1 : m->seq_len / 2));
        plc_diag_hint(d, "each cp rank holds two of the 2 * cp chunks, so causal work is even");
        break;
    case PLC_RULE_GPU_COUNT:
        plc_diag_error(d, loc, "%s", msg);
        if ((in->known & (PLC_LD_BIT(dp) | PLC_LD_BIT(tp) | PLC_LD_BIT(pp) | PLC_LD_BIT(cp))) ==
            (PLC_LD_BIT(dp) | PLC_LD_BIT(tp) | PLC_LD_BIT(pp) | PLC_LD_BIT(cp))) /* all four pinned */
            plc_diag_hint(d, "leave dp = auto and plc uses dp = GPUs / (tp * pp * cp)");
        else
            plc_diag_hint(d, "every rank belongs to one group of each kind, so the degrees' product divides the GPU count");
        break;
    case PLC_RULE_DP_BATCH:
        plc_diag_error(d, loc, "%s", msg);
        plc_diag_hint(d, "every data-parallel rank takes the same number of sequences per step");
        break;
    case PLC_RULE_RECOMPUTE_LAYERS_POLICY:
    case PLC_RULE_RECOMPUTE_LAYERS_NEEDED:
    case PLC_RULE_RECOMPUTE_LAYERS_STAGE:
        plc_diag_error(d, loc, "%s", msg);
        plc_diag_hint(d, "recompute = block recomputes the first recompute_layers layers of each stage, every each "
                         "recompute_layers-th layer; leave recompute_layers = auto to let plc choose");
        break;
    case PLC_RULE_ENGINE_OFFERS:
        plc_diag_error(d, loc, "%s", msg);
        plc_diag_hint(d, "the engine's profile (engines.yaml, docs/engines.md) lists what it runs; "
                         "set train.engine to another engine or %s to a value it runs", v.key);
        break;
    case PLC_RULE_DP_MB_BATCH:
        plc_diag_error(d, loc, "%s", msg);
        plc_diag_hint(d, "each data-parallel rank runs global_batch / (dp * micro_batch) micro-batches per step");
        break;
    default:
        plc_diag_error(d, loc, "%s", msg);
        break;
    }
}

/* ---- what the checks know ------------------------------------------------
 * Each check reads only values that are good: a block that is present, a
 * key without an error (plc_spec_facts.bad). A broken check skips what
 * reads its value, and the rest go on, so one run reports every
 * independent mistake. */

enum { B_MODEL, B_CLUSTER, B_TRAIN, B_LAYOUT }; /* plc_block_defs order */

typedef struct known_facts {
    int64_t batch;        /* sequences per step; 0: unknown */
    bool precision_known;
    uint64_t skip;        /* layout rules that read a value in error */
} known_facts;

static bool good(const plc_spec_facts *f, int b, const char *key)
{
    const void *present[] = {f->model, f->cluster, f->train, f->layout};
    if (!present[b]) return false;
    int k = plc_key_index(&plc_block_defs[b], key);
    return k >= 0 && (k >= 64 || !(f->bad[b] >> k & 1u));
}

/* the layout rules that read each model value: skipped when it is wrong */
static const struct {
    const char *key;
    plc_rule rules[4]; /* PLC_RULE_OK ends the list */
} model_readers[] = {
    {"heads", {PLC_RULE_TP_HEADS}},
    {"kv_heads", {PLC_RULE_TP_KV_HEADS}},
    {"ffn_hidden", {PLC_RULE_TP_FFN}},
    {"layers", {PLC_RULE_PP_LAYERS, PLC_RULE_VPP_LAYERS, PLC_RULE_RECOMPUTE_LAYERS_STAGE}},
    {"seq_len", {PLC_RULE_CP_SEQ, PLC_RULE_SP_ROWS}},
};

static void skip_readers(known_facts *k, const char *key)
{
    for (size_t i = 0; i < sizeof model_readers / sizeof model_readers[0]; i++) {
        if (strcmp(model_readers[i].key, key) != 0) continue;
        for (int j = 0; j < 4 && model_readers[i].rules[j] != PLC_RULE_OK; j++) k->skip |= 1ull << model_readers[i].rules[j];
    }
}

/* The model's own rules read hidden, heads, kv_heads and positions (and
 * that every size is positive); they run when those are good, and a broken
 * one skips the layout rules that read its key. */
static void check_model(plc_diag *d, plc_arena *a, const plc_spec_facts *f, known_facts *k)
{
    k->skip |= plc_rule_family_mask(PLC_RULE_MODEL_POSITIVE); /* checked here, not again by the layout rules */
    for (size_t i = 0; i < sizeof model_readers / sizeof model_readers[0]; i++)
        if (!good(f, B_MODEL, model_readers[i].key)) skip_readers(k, model_readers[i].key);
    const char *core[] = {"hidden", "heads", "kv_heads", "head_dim", "positions", "arch"};
    for (size_t i = 0; i < sizeof core / sizeof core[0]; i++)
        if (!good(f, B_MODEL, core[i])) return;
    plc_model m = *f->model;
    int64_t *sizes[] = {&m.layers, &m.ffn_hidden, &m.vocab, &m.seq_len};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        if (*sizes[i] < 1) *sizes[i] = 1; /* a size in error (reported): positive for the rules above */
    plc_verdict v = plc_model_rules(&m);
    plc_rule_input in = {.model = &m};
    if (v.rule == PLC_RULE_OK || v.rule == PLC_RULE_MODEL_POSITIVE) return;
    report(d, a, f, &in, v);
    skip_readers(k, v.key);
}

/* ---- mixture of experts and latent attention -------------------------------
 * The keys' agreement with each other and with the model (docs/model.md).
 * Each check reads good values only; every broken one is reported. */

static bool given(const plc_spec_facts *f, const char *key)
{
    return f->model_block && plc_block_find_pair(f->model_block, key) != NULL;
}

/* the keys that describe an MoE layer, all meaningless without `experts` */
static const char *const moe_keys[] = {
    "experts_per_token", "shared_experts", "expert_ffn_hidden", "shared_expert_ffn_hidden", "dense_layers",
    "moe_every", "router", "router_groups", "router_groups_top", "route_scale", "aux_loss", "expert_bias",
    "capacity_factor"};

/* a product of a count and a width past which the parameter arithmetic
 * would leave 64 bits: far above any model (Kimi-K2: 384 x 2048) */
#define PLC_MAX_EXPERT_WIDTH (INT64_C(1) << 23)

static void check_expert_width(plc_diag *d, const plc_spec_facts *f, const char *count_key, int64_t count,
                               const char *width_key, int64_t width)
{
    if (!good(f, B_MODEL, count_key) || !good(f, B_MODEL, width_key) || count * width <= PLC_MAX_EXPERT_WIDTH) return;
    plc_diag_error(d, at(f->model_block, given(f, width_key) ? width_key : count_key),
                   "%s = %lld experts of %s = %lld is more than %lld MLP columns a layer", count_key, (long long)count,
                   width_key, (long long)width, (long long)PLC_MAX_EXPERT_WIDTH);
    plc_diag_hint(d, "the widest models have a few hundred experts of a few thousand columns each");
}

static void check_router_groups(plc_diag *d, plc_arena *a, const plc_spec_facts *f)
{
    const plc_moe *e = &f->model->moe;
    bool groups = given(f, "router_groups") && good(f, B_MODEL, "router_groups");
    bool top = given(f, "router_groups_top") && good(f, B_MODEL, "router_groups_top");
    if (given(f, "router_groups_top") && !given(f, "router_groups")) {
        plc_diag_error(d, at(f->model_block, "router_groups_top"), "'router_groups_top' needs 'router_groups'");
        plc_diag_hint(d, "group-limited routing puts the experts in router_groups groups and sends a token to "
                         "experts of its router_groups_top best groups");
        return;
    }
    if (!groups) return;
    if (e->experts % e->router_groups) {
        plc_diag_error(d, at(f->model_block, "router_groups"), "router_groups = %lld does not divide experts = %lld; valid: %s",
                       (long long)e->router_groups, (long long)e->experts, plc_divisors_text(a, e->experts));
        plc_diag_hint(d, "the experts fall into router_groups groups of equal size");
        return;
    }
    if (!given(f, "router_groups_top")) {
        plc_diag_error(d, at(f->model_block, "router_groups"), "router_groups = %lld needs 'router_groups_top'",
                       (long long)e->router_groups);
        plc_diag_hint(d, "router_groups_top: the groups a token's experts come from (DeepSeek-V3: 4 of 8)");
        return;
    }
    if (!top) return;
    if (e->router_groups_top > e->router_groups) {
        plc_diag_error(d, at(f->model_block, "router_groups_top"), "router_groups_top = %lld is more than router_groups = %lld",
                       (long long)e->router_groups_top, (long long)e->router_groups);
        plc_diag_hint(d, "a token's experts come from router_groups_top of the router_groups groups");
        return;
    }
    int64_t reach = e->router_groups_top * (e->experts / e->router_groups);
    if (good(f, B_MODEL, "experts_per_token") && e->top_k > reach) {
        plc_diag_error(d, at(f->model_block, "experts_per_token"),
                       "experts_per_token = %lld is more than the %lld experts of router_groups_top = %lld groups",
                       (long long)e->top_k, (long long)reach, (long long)e->router_groups_top);
        plc_diag_hint(d, "each group holds experts / router_groups = %lld experts",
                      (long long)(e->experts / e->router_groups));
    }
}

static void check_moe(plc_diag *d, plc_arena *a, const plc_spec_facts *f)
{
    const plc_model *m = f->model;
    const plc_moe *e = &m->moe;
    if (!good(f, B_MODEL, "experts")) return;
    if (e->experts == 0) {
        for (size_t i = 0; i < sizeof moe_keys / sizeof moe_keys[0]; i++) {
            if (!given(f, moe_keys[i])) continue;
            plc_diag_error(d, plc_block_find_pair(f->model_block, moe_keys[i])->key_loc,
                           "'%s' needs 'experts' (a mixture-of-experts model)", moe_keys[i]);
            plc_diag_hint(d, "set experts = N, the routed experts of each MoE layer, or drop %s", moe_keys[i]);
        }
        return;
    }
    if (!given(f, "experts_per_token")) {
        plc_diag_error(d, at(f->model_block, "experts"), "experts = %lld needs 'experts_per_token'", (long long)e->experts);
        plc_diag_hint(d, "experts_per_token: the routed experts each token is sent to (Mixtral: 2, DeepSeek-V3: 8)");
    } else if (good(f, B_MODEL, "experts_per_token") && e->top_k > e->experts) {
        plc_diag_error(d, at(f->model_block, "experts_per_token"), "experts_per_token = %lld is more than experts = %lld",
                       (long long)e->top_k, (long long)e->experts);
        plc_diag_hint(d, "a token goes to experts_per_token of the experts routed experts");
    }
    if (given(f, "shared_expert_ffn_hidden") && good(f, B_MODEL, "shared_experts") && e->shared_experts == 0) {
        plc_diag_error(d, at(f->model_block, "shared_expert_ffn_hidden"), "'shared_expert_ffn_hidden' needs 'shared_experts'");
        plc_diag_hint(d, "set shared_experts = N, the always-active experts of each MoE layer, or drop shared_expert_ffn_hidden");
    }
    if (good(f, B_MODEL, "dense_layers") && good(f, B_MODEL, "layers") && e->dense_layers >= m->layers) {
        plc_diag_error(d, at(f->model_block, "dense_layers"), "dense_layers = %lld leaves no MoE layer of layers = %lld",
                       (long long)e->dense_layers, (long long)m->layers);
        plc_diag_hint(d, "the first dense_layers layers keep a dense MLP; at most layers - 1 = %lld", (long long)(m->layers - 1));
    }
    check_expert_width(d, f, "experts", e->experts, "expert_ffn_hidden", e->expert_ffn_hidden);
    if (good(f, B_MODEL, "shared_experts") && e->shared_experts > 0)
        check_expert_width(d, f, "shared_experts", e->shared_experts, "shared_expert_ffn_hidden", e->shared_ffn_hidden);
    check_router_groups(d, a, f);
}

/* the keys of latent attention's shape, meaningless without kv_lora_rank */
static const char *const mla_keys[] = {"q_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"};

/* a head width past which heads x width would leave the model's sizes (hidden's limit x 4) */
#define PLC_MAX_MLA_WIDTH (INT64_C(1) << 22)

/* head_dim and qk_norm (Qwen3) describe grouped-query heads of the Llama
 * block: not latent attention's (whose widths are its own keys), not GPT's */
static void check_head_keys(plc_diag *d, const plc_spec_facts *f)
{
    const plc_model *m = f->model;
    const char *keys[] = {"head_dim", "qk_norm"};
    for (size_t i = 0; i < 2; i++) {
        if (!given(f, keys[i]) || !good(f, B_MODEL, keys[i])) continue;
        if (i == 1 && !m->qk_norm) continue;
        if (good(f, B_MODEL, "kv_lora_rank") && m->mla.kv_rank > 0) {
            plc_diag_error(d, plc_block_find_pair(f->model_block, keys[i])->key_loc,
                           "'%s' with latent attention (kv_lora_rank = %lld)", keys[i], (long long)m->mla.kv_rank);
            plc_diag_hint(d, "latent attention's head widths are qk_nope_head_dim, qk_rope_head_dim and v_head_dim; "
                             "drop %s", keys[i]);
        } else if (i == 1 && good(f, B_MODEL, "arch") && m->arch != PLC_ARCH_LLAMA) {
            plc_diag_error(d, plc_block_find_pair(f->model_block, keys[i])->key_loc, "qk_norm = on needs arch = llama");
            plc_diag_hint(d, "plc describes qk-norm as Qwen3's: an RMSNorm over each head of the Llama block");
        }
    }
    if (given(f, "head_dim") && good(f, B_MODEL, "head_dim") && good(f, B_MODEL, "heads") &&
        m->heads * m->head_dim > PLC_MAX_MLA_WIDTH) {
        plc_diag_error(d, at(f->model_block, "head_dim"), "heads = %lld of %lld channels each is more than %lld",
                       (long long)m->heads, (long long)m->head_dim, (long long)PLC_MAX_MLA_WIDTH);
        plc_diag_hint(d, "Qwen3-235B-A22B has 64 heads of 128 channels");
    }
}

static void check_mla(plc_diag *d, const plc_spec_facts *f)
{
    const plc_model *m = f->model;
    const plc_mla *l = &m->mla;
    check_head_keys(d, f);
    if (!good(f, B_MODEL, "kv_lora_rank")) return;
    if (l->kv_rank == 0) {
        for (size_t i = 0; i < sizeof mla_keys / sizeof mla_keys[0]; i++) {
            if (!given(f, mla_keys[i])) continue;
            plc_diag_error(d, plc_block_find_pair(f->model_block, mla_keys[i])->key_loc,
                           "'%s' needs 'kv_lora_rank' (latent attention)", mla_keys[i]);
            plc_diag_hint(d, "kv_lora_rank = N (> 0) turns on multi-head latent attention; or drop %s", mla_keys[i]);
        }
        return;
    }
    char missing[96] = "";
    for (size_t i = 1; i < sizeof mla_keys / sizeof mla_keys[0]; i++) {
        if (given(f, mla_keys[i])) continue;
        if (missing[0]) strcat(missing, ", ");
        strcat(missing, mla_keys[i]);
    }
    if (missing[0]) {
        plc_diag_error(d, at(f->model_block, "kv_lora_rank"), "latent attention (kv_lora_rank = %lld) needs %s",
                       (long long)l->kv_rank, missing);
        plc_diag_hint(d, "DeepSeek-V3: qk_nope_head_dim = 128, qk_rope_head_dim = 64, v_head_dim = 128");
    }
    if (given(f, "qk_rope_head_dim") && good(f, B_MODEL, "qk_rope_head_dim") && l->rope_head_dim % 2) {
        plc_diag_error(d, at(f->model_block, "qk_rope_head_dim"), "qk_rope_head_dim = %lld is odd", (long long)l->rope_head_dim);
        plc_diag_hint(d, "RoPE rotates pairs of channels, so its part of the head must be even");
    }
    if (good(f, B_MODEL, "arch") && m->arch != PLC_ARCH_LLAMA) {
        plc_diag_error(d, at(f->model_block, "kv_lora_rank"), "latent attention needs arch = llama");
        plc_diag_hint(d, "plc describes latent attention in the Llama block (RMSNorm, SwiGLU, no biases), as DeepSeek's");
    } else if (good(f, B_MODEL, "positions") && m->positions != PLC_POS_ROPE) {
        plc_diag_error(d, at(f->model_block, "positions"), "latent attention needs positions = rope");
        plc_diag_hint(d, "its queries and keys carry a decoupled RoPE part of qk_rope_head_dim channels");
    }
    if (given(f, "kv_heads") && good(f, B_MODEL, "kv_heads") && good(f, B_MODEL, "heads") && m->kv_heads != m->heads) {
        plc_diag_error(d, at(f->model_block, "kv_heads"), "kv_heads = %lld with latent attention, where every head has "
                       "its own key and value", (long long)m->kv_heads);
        plc_diag_hint(d, "latent attention shares the kv_lora_rank latent instead of key/value heads; drop kv_heads");
    }
    const struct { const char *key; int64_t width; } widths[] = {
        {"qk_nope_head_dim", l->nope_head_dim + l->rope_head_dim}, {"v_head_dim", l->v_head_dim}};
    for (size_t i = 0; i < 2; i++) {
        if (!good(f, B_MODEL, "heads") || !given(f, widths[i].key) || !good(f, B_MODEL, widths[i].key)) continue;
        if (!good(f, B_MODEL, "qk_rope_head_dim")) continue;
        if (m->heads * widths[i].width <= PLC_MAX_MLA_WIDTH) continue;
        plc_diag_error(d, at(f->model_block, widths[i].key), "heads = %lld of %lld channels each is more than %lld",
                       (long long)m->heads, (long long)widths[i].width, (long long)PLC_MAX_MLA_WIDTH);
        plc_diag_hint(d, "DeepSeek-V3 has 128 heads of 192 query/key and 128 value channels");
    }
}

/* the power of two nearest to x >= 1 (by ratio) */
static int64_t pow2_nearest(double x)
{
    int64_t p = 1;
    while (p <= INT64_MAX / 2 && (double)(2 * p) <= x) p *= 2;
    return (double)(2 * p) / x < x / (double)p ? 2 * p : p;
}

/* A token count is read as decimal (4M = 4,000,000) when that makes whole
 * sequences; else, when it has a multiplier whose binary reading does (4M
 * at seq_len 4096: 4 x 2^20 = 1024 sequences), that way, with a note. */
static void check_tokens(plc_diag *d, plc_arena *a, plc_spec_facts *f, known_facts *k)
{
    plc_train *t = f->train;
    int64_t s = f->model->seq_len, bin = f->batch_tokens_binary;
    plc_loc loc = at(f->train_block, "global_batch");
    if (t->global_batch % s && bin > 0 && bin % s == 0) {
        const plc_pair *p = plc_block_find_pair(f->train_block, "global_batch");
        const char *w = p->value->words[0];
        plc_diag_info(d, loc, "global_batch = %s read as %s x 2^%d = %lld tokens: %lld sequences of seq_len = %lld",
                      plc_value_source(a, p->value), p->value->text, w[0] == 'k' ? 10 : w[0] == 'M' ? 20 : 30,
                      (long long)bin, (long long)(bin / s), (long long)s);
        plc_diag_hint(d, "read as %lld, the decimal count is not a whole number of sequences; "
                         "global_batch = %lld (sequences) says the same without a unit",
                      (long long)t->global_batch, (long long)(bin / s));
        t->global_batch = bin;
    }
    if (t->global_batch % s) {
        int64_t lo = t->global_batch / s;
        plc_diag_error(d, loc, "global_batch = %lld tokens is not a whole number of sequences of seq_len = %lld",
                       (long long)t->global_batch, (long long)s);
        if (lo > 0) {
            int64_t p2 = pow2_nearest((double)t->global_batch / (double)s);
            char two[128] = "";
            if (p2 != lo && p2 != lo + 1 && p2 <= INT64_MAX / s)
                snprintf(two, sizeof two, "; a power of two: %lld sequences (%lld tokens)", (long long)p2, (long long)(p2 * s));
            plc_diag_hint(d, "nearest: %lld tokens (%lld sequences) or %lld tokens (%lld sequences)%s", (long long)(lo * s),
                          (long long)lo, (long long)((lo + 1) * s), (long long)(lo + 1), two);
        } else {
            plc_diag_hint(d, "one sequence is %lld tokens", (long long)s);
        }
        t->global_batch = 0;
        return;
    }
    t->global_batch /= s;
    k->batch = t->global_batch;
}

/* a batch in sequences of more than this many tokens a step is likely a
 * token count written without its unit (global_batch = 4M) */
#define PLC_MANY_STEP_TOKENS 1e9
static void check_batch_unit(plc_diag *d, plc_arena *a, const plc_spec_facts *f, const known_facts *k)
{
    const plc_pair *p = plc_block_find_pair(f->train_block, "global_batch");
    double tokens = (double)k->batch * (double)f->model->seq_len;
    if (tokens <= PLC_MANY_STEP_TOKENS) return;
    plc_diag_warning(d, at(f->train_block, "global_batch"),
                     "global_batch = %lld sequences of seq_len = %lld is %.3g tokens a step", (long long)k->batch,
                     (long long)f->model->seq_len, tokens);
    plc_diag_hint(d, "a global_batch without a unit counts sequences; a token count takes its unit: global_batch = %s tokens",
                  p ? plc_value_source(a, p->value) : "N");
}

/* the layout rules over the dimensions the spec pins, every broken one
 * reported once: after a rule breaks it is skipped and the rest checked
 * again */
static void check_layout_rules(plc_diag *d, plc_arena *a, const plc_spec_facts *f, const known_facts *k)
{
    const plc_layout_spec *ls = f->layout;
    bool gpus_known = f->cluster && good(f, B_CLUSTER, "nodes") && good(f, B_CLUSTER, "gpus_per_node");
    plc_rule_input in = {.model = f->model,
                         .gpus = gpus_known ? plc_cluster_gpus(f->cluster) : 0,
                         .global_batch = k->batch,
                         .precision = f->train ? f->train->precision : PLC_PREC_BF16,
                         .precision_known = k->precision_known,
                         .engine = f->engine,
                         .engine_id = f->engine_id,
                         .skip = k->skip};
    /* an engine in error: whether it splits stages unevenly is unknown */
    if (!f->engine && f->train) in.skip |= 1ull << PLC_RULE_PP_LAYERS | 1ull << PLC_RULE_VPP_LAYERS;
    for (int dim = 0; dim < PLC_LD_COUNT; dim++) {
        int64_t v;
        if (!good(f, B_LAYOUT, plc_layout_dim_key((plc_layout_dim)dim))) continue;
        if (!fixed(plc_layout_spec_choice(ls, (plc_layout_dim)dim), &v)) continue;
        plc_layout_set(&in.layout, (plc_layout_dim)dim, v);
        in.known |= 1u << dim;
    }
    for (int round = 0; round < PLC_RULE_COUNT; round++) {
        plc_verdict r = plc_layout_rules(&in);
        if (r.rule == PLC_RULE_OK) break;
        report(d, a, f, &in, r);
        if (in.skip >> r.rule & 1u) break; /* a rule without a skip test: reported once */
        in.skip |= plc_rule_family_mask(r.rule);
    }
    /* a set of tp values none of which is legal */
    uint64_t tp_rules = 1ull << PLC_RULE_TP_HEADS | 1ull << PLC_RULE_TP_KV_HEADS | 1ull << PLC_RULE_TP_FFN;
    if (ls->tp.kind == PLC_CHOICE_SET && ls->tp.n > 1 && good(f, B_LAYOUT, "tp") && !(k->skip & tp_rules)) {
        bool any = false;
        for (int i = 0; i < ls->tp.n && !any; i++) {
            plc_rule_input one = {.model = f->model, .layout = {.tp = ls->tp.v[i]}, .known = PLC_LD_BIT(tp), .skip = k->skip};
            any = plc_layout_rules(&one).rule == PLC_RULE_OK;
        }
        const plc_model *m = f->model;
        if (!any)
            plc_diag_error(d, at(f->layout_block, "tp"), "no value of tp divides heads, kv_heads and ffn_hidden; valid: %s",
                           plc_divisors_text(a, gcd64(gcd64(m->heads, m->kv_heads), m->ffn_hidden)));
    }
}

/* a set of values of which the engine runs none */
static void check_engine_sets(plc_diag *d, plc_arena *a, const plc_spec_facts *f)
{
    for (int k = 0; k < PLC_LD_COUNT; k++) {
        const plc_choice *c = plc_layout_spec_choice(f->layout, (plc_layout_dim)k);
        int64_t one;
        if (!good(f, B_LAYOUT, plc_layout_dim_key((plc_layout_dim)k))) continue;
        if (c->kind == PLC_CHOICE_AUTO || plc_choice_fixed(c, &one) || f->engine->offers[k] == 0) continue;
        bool any = false;
        for (int64_t x = 0; x < 64 && !any; x++) any = plc_choice_allows(c, x) && plc_engine_offers(f->engine, (plc_layout_dim)k, x);
        if (any) continue;
        plc_rule_input in = {.model = f->model, .engine = f->engine, .engine_id = f->engine_id,
                             .known = 1u << k};
        plc_layout_set(&in.layout, (plc_layout_dim)k, c->kind == PLC_CHOICE_SET ? c->v[0] : c->lo);
        plc_verdict v = {PLC_RULE_ENGINE_OFFERS, plc_layout_dim_key((plc_layout_dim)k)};
        char msg[256];
        plc_rule_message(&in, v, msg, sizeof msg);
        const char *runs = strstr(msg, "; it runs ");
        plc_diag_error(d, at(f->layout_block, v.key), "engine %s runs no value %s allows%s",
                       plc_engine_name(f->engine_id), v.key, runs ? runs : "");
        (void)a;
    }
}

/* settings that are legal but do nothing, or cost more than they look */
static void check_layout_warnings(plc_diag *d, const plc_spec_facts *f)
{
    const plc_layout_spec *l = f->layout;
    int64_t sp = 0, tp = 0, zero = 0, dp = 0, frms = 0;
    bool sp_ok = good(f, B_LAYOUT, "sp") && fixed(&l->sp, &sp), tp_ok = good(f, B_LAYOUT, "tp") && fixed(&l->tp, &tp);
    if (sp_ok && sp == 1 && tp_ok && tp == 1) {
        plc_diag_warning(d, at(f->layout_block, "sp"), "sp = on has no effect with tp = 1");
        plc_diag_hint(d, "sequence parallelism splits the tensor-parallel group's activations");
    }
    if (f->cluster && good(f, B_CLUSTER, "nodes") && good(f, B_CLUSTER, "gpus_per_node") && tp_ok &&
        tp > f->cluster->gpus_per_node && tp <= plc_cluster_gpus(f->cluster)) {
        plc_diag_warning(d, at(f->layout_block, "tp"), "tp = %lld spans nodes (gpus_per_node = %lld)", (long long)tp,
                         (long long)f->cluster->gpus_per_node);
        plc_diag_hint(d, "tensor parallelism communicates every layer; across the network it is slow");
    }
    if (f->model && good(f, B_MODEL, "arch") && f->model->arch == PLC_ARCH_GPT && good(f, B_LAYOUT, "fused_rmsnorm") &&
        fixed(&l->fused_rmsnorm, &frms) && frms == 1) {
        plc_diag_warning(d, at(f->layout_block, "fused_rmsnorm"), "fused_rmsnorm = on has no effect with arch = gpt");
        plc_diag_hint(d, "the GPT block normalises with LayerNorm, one kernel each way");
    }
    if (f->train && good(f, B_LAYOUT, "zero") && fixed(&l->zero, &zero) && zero > 0 && good(f, B_LAYOUT, "dp") &&
        fixed(&l->dp, &dp) && dp == 1) {
        plc_diag_warning(d, at(f->layout_block, "zero"), "zero = %lld has no effect with dp = 1", (long long)zero);
        plc_diag_hint(d, "ZeRO shards optimizer state across data-parallel ranks");
    }
}

/* a sane limit on the tokens of one step: token counts stay exact in a
 * double (the solver's arithmetic), which still admits 1e12 sequences of
 * 2048 tokens */
#define PLC_MAX_STEP_TOKENS (INT64_C(1) << 53)
static void check_step_tokens(plc_diag *d, plc_spec_facts *f, known_facts *k)
{
    if (k->batch <= PLC_MAX_STEP_TOKENS / f->model->seq_len) return;
    plc_diag_error(d, at(f->train_block, "global_batch"),
                   "global_batch = %lld sequences of seq_len = %lld is more than %lld tokens per step",
                   (long long)k->batch, (long long)f->model->seq_len, (long long)PLC_MAX_STEP_TOKENS);
    k->batch = 0;
}

/* fp8 needs a GPU with fp8 tensor cores: a catalog entry with fp8_flops */
static void check_precision(plc_diag *d, plc_spec_facts *f)
{
    if (f->train->precision != PLC_PREC_FP8 || f->cluster->hw.flops_fp8 > 0) return;
    plc_diag_error(d, at(f->train_block, "precision"), "precision = fp8 needs fp8 tensor cores, and %s has none",
                   f->cluster->hw.name);
    plc_diag_hint(d, "fp8 runs on H100 and H200 (the catalog's fp8_flops); use bf16 here");
}

void plc_spec_check(plc_arena *a, plc_diag *d, plc_spec_facts *f)
{
    known_facts k = {.precision_known = f->train && good(f, B_TRAIN, "precision")};
    bool seq_ok = f->model && good(f, B_MODEL, "seq_len");
    if (k.precision_known && f->cluster && f->hw_known) check_precision(d, f);
    if (f->model) check_model(d, a, f, &k);
    if (f->model) check_moe(d, a, f);
    if (f->model) check_mla(d, f);
    if (f->train && good(f, B_TRAIN, "global_batch")) {
        if (!f->batch_in_tokens) k.batch = f->train->global_batch;
        else if (seq_ok) check_tokens(d, a, f, &k);
    }
    if (k.batch > 0 && seq_ok) check_step_tokens(d, f, &k);
    if (k.batch > 0 && seq_ok && !f->batch_in_tokens) check_batch_unit(d, a, f, &k);
    if (f->layout && f->model) check_layout_rules(d, a, f, &k);
    if (f->layout && f->model && f->engine) check_engine_sets(d, a, f);
    if (f->layout) check_layout_warnings(d, f);
}
