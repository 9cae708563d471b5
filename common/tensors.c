/* tensors.c: ids, names, shapes and initialisation of the global tensors
 * (the table of docs/model.md). */
#include "common/tensors.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define PLC_INIT_STD 0.02

static bool is_gpt(const plc_model *m) { return m->arch == PLC_ARCH_GPT; }

/* roles of a layer's tensors, in id order */
static const plc_tensor_role llama_roles[] = {
    PLC_ROLE_ATTN_NORM, PLC_ROLE_WQ,     PLC_ROLE_WK,   PLC_ROLE_WV,    PLC_ROLE_WO,
    PLC_ROLE_MLP_NORM,  PLC_ROLE_W_GATE, PLC_ROLE_W_UP, PLC_ROLE_W_DOWN,
};
static const plc_tensor_role gpt_roles[] = {
    PLC_ROLE_ATTN_NORM, PLC_ROLE_ATTN_NORM_B, PLC_ROLE_WQ,     PLC_ROLE_BQ,     PLC_ROLE_WK,     PLC_ROLE_BK,
    PLC_ROLE_WV,        PLC_ROLE_BV,          PLC_ROLE_WO,     PLC_ROLE_BO,     PLC_ROLE_MLP_NORM, PLC_ROLE_MLP_NORM_B,
    PLC_ROLE_W_FC,      PLC_ROLE_B_FC,        PLC_ROLE_W_PROJ, PLC_ROLE_B_PROJ,
};
static const plc_tensor_role moe_roles[] = {
    PLC_ROLE_ATTN_NORM, PLC_ROLE_WQ,       PLC_ROLE_WK,     PLC_ROLE_WV,       PLC_ROLE_WO,
    PLC_ROLE_MLP_NORM,  PLC_ROLE_ROUTER,   PLC_ROLE_EXP_GATE, PLC_ROLE_EXP_UP, PLC_ROLE_EXP_DOWN,
    PLC_ROLE_SH_GATE,   PLC_ROLE_SH_UP,    PLC_ROLE_SH_DOWN,
};
#define NROLES(a) ((int64_t)(sizeof(a) / sizeof((a)[0])))

static int64_t per_layer(const plc_model *m) { return is_gpt(m) ? NROLES(gpt_roles) : NROLES(llama_roles); }
int64_t plc_tensors_per_layer(const plc_model *m) { return per_layer(m); }

static int64_t moe_every(const plc_model *m) { return m->moe.moe_every > 0 ? m->moe.moe_every : 1; }

bool plc_layer_is_moe(const plc_model *m, int64_t layer)
{
    if (m->moe.experts <= 0 || layer < m->moe.dense_layers || layer >= m->layers) return false;
    return (layer - m->moe.dense_layers) % moe_every(m) == 0;
}

/* MoE layers among layers [0, l) */
static int64_t moe_before(const plc_model *m, int64_t l)
{
    if (m->moe.experts <= 0 || l <= m->moe.dense_layers) return 0;
    return (l - m->moe.dense_layers + moe_every(m) - 1) / moe_every(m);
}

static int64_t moe_per_layer(const plc_model *m) { return m->moe.shared_experts > 0 ? 13 : 10; }

int64_t plc_layer_tensor_count(const plc_model *m, int64_t layer)
{
    if (layer < 0 || layer >= m->layers) return 0;
    return plc_layer_is_moe(m, layer) ? moe_per_layer(m) : per_layer(m);
}

static const plc_tensor_role *layer_roles(const plc_model *m, int64_t layer)
{
    if (plc_layer_is_moe(m, layer)) return moe_roles;
    return is_gpt(m) ? gpt_roles : llama_roles;
}
/* ids before the first layer: tok_emb, and pos_emb when positions are learned */
static int64_t first_layer_id(const plc_model *m) { return 1 + (m->positions == PLC_POS_LEARNED); }
/* the first id of layer l (l = layers: the final norm's) */
static int64_t layer_base(const plc_model *m, int64_t l)
{
    int64_t moe = moe_before(m, l);
    return first_layer_id(m) + per_layer(m) * (l - moe) + moe_per_layer(m) * moe;
}
/* the final norm's tensors: weight, and bias in GPT */
static int64_t final_norm_id(const plc_model *m) { return layer_base(m, m->layers); }
static int64_t lm_head_id(const plc_model *m) { return final_norm_id(m) + 1 + is_gpt(m); }

const char *plc_tensor_role_name(const plc_model *m, plc_tensor_role r)
{
    static const char *const names[PLC_ROLE_COUNT] = {
        "tok_emb", "attn_norm", "wq",   "wk",     "wv",     "wo",     "mlp_norm", "w_gate",       "w_up",
        "w_down",  "final_norm", "lm_head", "pos_emb", "ln1_b", "bq", "bk", "bv", "bo", "ln2_b", "w_fc",
        "b_fc",    "w_proj",     "b_proj",  "final_norm_b", "router", "experts.w_gate", "experts.w_up",
        "experts.w_down", "shared.w_gate", "shared.w_up", "shared.w_down",
    };
    if (is_gpt(m)) {
        if (r == PLC_ROLE_ATTN_NORM) return "ln1_w";
        if (r == PLC_ROLE_MLP_NORM) return "ln2_w";
        if (r == PLC_ROLE_FINAL_NORM) return "final_norm_w";
    }
    return (unsigned)r < PLC_ROLE_COUNT ? names[r] : NULL;
}

int64_t plc_tensor_count(const plc_model *m) { return lm_head_id(m) + (m->tie_embeddings ? 0 : 1); }

void plc_tensor_role_shape(const plc_model *m, plc_tensor_role role, int64_t shape[2], int *ndim)
{
    int64_t hd = plc_model_head_dim(m);
    int64_t q_out = m->heads * hd, kv_out = m->kv_heads * hd;
    *ndim = 2;
    shape[1] = 1;
    switch (role) {
    case PLC_ROLE_TOK_EMB: shape[0] = m->vocab; shape[1] = m->hidden; break;
    case PLC_ROLE_POS_EMB: shape[0] = m->seq_len; shape[1] = m->hidden; break;
    case PLC_ROLE_ATTN_NORM:
    case PLC_ROLE_MLP_NORM:
    case PLC_ROLE_FINAL_NORM:
    case PLC_ROLE_ATTN_NORM_B:
    case PLC_ROLE_MLP_NORM_B:
    case PLC_ROLE_FINAL_NORM_B:
    case PLC_ROLE_BO:
    case PLC_ROLE_B_PROJ: shape[0] = m->hidden; *ndim = 1; break;
    case PLC_ROLE_BQ: shape[0] = q_out; *ndim = 1; break;
    case PLC_ROLE_BK:
    case PLC_ROLE_BV: shape[0] = kv_out; *ndim = 1; break;
    case PLC_ROLE_B_FC: shape[0] = m->ffn_hidden; *ndim = 1; break;
    case PLC_ROLE_WQ: shape[0] = m->hidden; shape[1] = q_out; break;
    case PLC_ROLE_WK:
    case PLC_ROLE_WV: shape[0] = m->hidden; shape[1] = kv_out; break;
    case PLC_ROLE_WO: shape[0] = q_out; shape[1] = m->hidden; break;
    case PLC_ROLE_W_GATE:
    case PLC_ROLE_W_UP:
    case PLC_ROLE_W_FC: shape[0] = m->hidden; shape[1] = m->ffn_hidden; break;
    case PLC_ROLE_W_DOWN:
    case PLC_ROLE_W_PROJ: shape[0] = m->ffn_hidden; shape[1] = m->hidden; break;
    case PLC_ROLE_LM_HEAD: shape[0] = m->hidden; shape[1] = m->vocab; break;
    case PLC_ROLE_ROUTER: shape[0] = m->hidden; shape[1] = m->moe.experts; break;
    case PLC_ROLE_EXP_GATE:
    case PLC_ROLE_EXP_UP:
    case PLC_ROLE_EXP_DOWN: shape[0] = m->moe.experts * m->hidden; shape[1] = m->moe.expert_ffn_hidden; break;
    case PLC_ROLE_SH_GATE:
    case PLC_ROLE_SH_UP: shape[0] = m->hidden; shape[1] = m->moe.shared_experts * m->moe.shared_ffn_hidden; break;
    case PLC_ROLE_SH_DOWN: shape[0] = m->moe.shared_experts * m->moe.shared_ffn_hidden; shape[1] = m->hidden; break;
    case PLC_ROLE_COUNT: shape[0] = 0; break;
    }
}

/* The GPT block's tensors are named as Hugging Face's GPT-2 state dict
 * names them (after "h.{l}." in a layer), whose Conv1D stores [in, out]
 * as plc does. q, k and v are the column blocks of HF's c_attn, kept apart
 * (their own names); lm_head (untied) keeps plc's [hidden, vocab] and its
 * plc name, since HF's lm_head.weight is the transpose. NULL: plc's name. */
static const char *gpt_hf_name(plc_tensor_role r)
{
    switch (r) {
    case PLC_ROLE_TOK_EMB: return "wte.weight";
    case PLC_ROLE_POS_EMB: return "wpe.weight";
    case PLC_ROLE_ATTN_NORM: return "ln_1.weight";
    case PLC_ROLE_ATTN_NORM_B: return "ln_1.bias";
    case PLC_ROLE_WQ: return "attn.q.weight";
    case PLC_ROLE_BQ: return "attn.q.bias";
    case PLC_ROLE_WK: return "attn.k.weight";
    case PLC_ROLE_BK: return "attn.k.bias";
    case PLC_ROLE_WV: return "attn.v.weight";
    case PLC_ROLE_BV: return "attn.v.bias";
    case PLC_ROLE_WO: return "attn.c_proj.weight";
    case PLC_ROLE_BO: return "attn.c_proj.bias";
    case PLC_ROLE_MLP_NORM: return "ln_2.weight";
    case PLC_ROLE_MLP_NORM_B: return "ln_2.bias";
    case PLC_ROLE_W_FC: return "mlp.c_fc.weight";
    case PLC_ROLE_B_FC: return "mlp.c_fc.bias";
    case PLC_ROLE_W_PROJ: return "mlp.c_proj.weight";
    case PLC_ROLE_B_PROJ: return "mlp.c_proj.bias";
    case PLC_ROLE_FINAL_NORM: return "ln_f.weight";
    case PLC_ROLE_FINAL_NORM_B: return "ln_f.bias";
    default: return NULL;
    }
}

static bool is_norm_weight(plc_tensor_role r)
{
    return r == PLC_ROLE_ATTN_NORM || r == PLC_ROLE_MLP_NORM || r == PLC_ROLE_FINAL_NORM;
}

/* the role and layer of tensor id (in range) */
static plc_tensor_role role_of(const plc_model *m, int64_t id, int64_t *layer)
{
    int64_t first = first_layer_id(m), fin = final_norm_id(m);
    *layer = -1;
    if (id == 0) return PLC_ROLE_TOK_EMB;
    if (id < first) return PLC_ROLE_POS_EMB;
    if (id < fin) { /* the last layer whose base is at most id */
        int64_t lo = 0, hi = m->layers - 1;
        while (lo < hi) {
            int64_t mid = lo + (hi - lo + 1) / 2;
            if (layer_base(m, mid) <= id) lo = mid;
            else hi = mid - 1;
        }
        *layer = lo;
        return layer_roles(m, lo)[id - layer_base(m, lo)];
    }
    if (id == fin) return PLC_ROLE_FINAL_NORM;
    if (id < lm_head_id(m)) return PLC_ROLE_FINAL_NORM_B;
    return PLC_ROLE_LM_HEAD;
}

bool plc_tensor_shape(const plc_model *m, int64_t id, plc_tensor_role *role, int64_t shape[2], int *ndim)
{
    if (id < 0 || id >= plc_tensor_count(m)) return false;
    int64_t layer;
    *role = role_of(m, id, &layer);
    plc_tensor_role_shape(m, *role, shape, ndim);
    return true;
}

bool plc_tensor_get(const plc_model *m, int64_t id, plc_tensor_info *out)
{
    if (id < 0 || id >= plc_tensor_count(m)) return false;
    memset(out, 0, sizeof *out);
    out->id = id;
    out->role = role_of(m, id, &out->layer);
    const char *rn = plc_tensor_role_name(m, out->role);
    const char *hf = is_gpt(m) ? gpt_hf_name(out->role) : NULL;
    if (hf && out->layer >= 0)
        snprintf(out->name, sizeof out->name, "h.%lld.%s", (long long)out->layer, hf);
    else if (hf)
        snprintf(out->name, sizeof out->name, "%s", hf);
    else if (out->layer >= 0)
        snprintf(out->name, sizeof out->name, "layers.%lld.%s", (long long)out->layer, rn);
    else
        snprintf(out->name, sizeof out->name, "%s", rn);
    plc_tensor_role_shape(m, out->role, out->shape, &out->ndim);
    out->numel = out->shape[0] * out->shape[1];
    /* matrices and tables: normal, decayed; norm weights: ones; biases: zeros */
    bool vector = out->ndim == 1;
    out->init = !vector ? PLC_INIT_NORMAL : is_norm_weight(out->role) ? PLC_INIT_ONES : PLC_INIT_ZEROS;
    out->weight_decay = !vector;
    out->init_std = vector ? 0.0 : PLC_INIT_STD;
    if (out->role == PLC_ROLE_WO || out->role == PLC_ROLE_W_DOWN || out->role == PLC_ROLE_W_PROJ ||
        out->role == PLC_ROLE_EXP_DOWN || out->role == PLC_ROLE_SH_DOWN)
        out->init_std = PLC_INIT_STD / sqrt(2.0 * (double)m->layers);
    return true;
}

int64_t plc_tensor_id(const plc_model *m, plc_tensor_role role, int64_t layer)
{
    switch (role) {
    case PLC_ROLE_TOK_EMB: return 0;
    case PLC_ROLE_POS_EMB: return m->positions == PLC_POS_LEARNED ? 1 : -1;
    case PLC_ROLE_FINAL_NORM: return final_norm_id(m);
    case PLC_ROLE_FINAL_NORM_B: return is_gpt(m) ? final_norm_id(m) + 1 : -1;
    case PLC_ROLE_LM_HEAD: return m->tie_embeddings ? -1 : lm_head_id(m);
    case PLC_ROLE_COUNT: return -1;
    default: break;
    }
    if (layer < 0 || layer >= m->layers) return -1;
    for (int64_t i = 0; i < plc_layer_tensor_count(m, layer); i++)
        if (layer_roles(m, layer)[i] == role) return layer_base(m, layer) + i;
    return -1;
}

int64_t plc_tensor_find(const plc_model *m, const char *name)
{
    plc_tensor_info t;
    for (int64_t id = 0; plc_tensor_get(m, id, &t); id++)
        if (strcmp(t.name, name) == 0) return id;
    return -1;
}

int64_t plc_model_param_count(const plc_model *m)
{
    int64_t total = 0;
    plc_tensor_info t;
    for (int64_t id = 0; plc_tensor_get(m, id, &t); id++) total += t.numel;
    return total;
}

plc_shard_kind plc_tensor_tp_split(plc_tensor_role r)
{
    switch (r) {
    case PLC_ROLE_WQ: case PLC_ROLE_WK: case PLC_ROLE_WV: case PLC_ROLE_W_GATE: case PLC_ROLE_W_UP:
    case PLC_ROLE_W_FC: case PLC_ROLE_LM_HEAD: case PLC_ROLE_EXP_GATE: case PLC_ROLE_EXP_UP:
    case PLC_ROLE_EXP_DOWN: case PLC_ROLE_SH_GATE: case PLC_ROLE_SH_UP: return PLC_SHARD_COLS;
    case PLC_ROLE_WO: case PLC_ROLE_W_DOWN: case PLC_ROLE_SH_DOWN: case PLC_ROLE_W_PROJ: case PLC_ROLE_TOK_EMB:
    case PLC_ROLE_BQ: case PLC_ROLE_BK: case PLC_ROLE_BV: case PLC_ROLE_B_FC: return PLC_SHARD_ROWS;
    default: return PLC_SHARD_NONE;
    }
}
