/* tensors.c: ids, names, shapes and initialisation of the global tensors
 * (the table of docs/model.md). */
#include "common/tensors.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define PLC_PER_LAYER 9
#define PLC_INIT_STD 0.02

/* roles of a layer's tensors, in id order */
static const plc_tensor_role layer_roles[PLC_PER_LAYER] = {
    PLC_ROLE_ATTN_NORM, PLC_ROLE_WQ,     PLC_ROLE_WK,   PLC_ROLE_WV,    PLC_ROLE_WO,
    PLC_ROLE_MLP_NORM,  PLC_ROLE_W_GATE, PLC_ROLE_W_UP, PLC_ROLE_W_DOWN,
};

const char *plc_tensor_role_name(plc_tensor_role r)
{
    static const char *const names[PLC_ROLE_COUNT] = {
        "tok_emb", "attn_norm", "wq",   "wk",     "wv",         "wo",
        "mlp_norm", "w_gate",   "w_up", "w_down", "final_norm", "lm_head",
    };
    return (unsigned)r < PLC_ROLE_COUNT ? names[r] : NULL;
}

int64_t plc_tensor_count(const plc_model *m)
{
    return 2 + PLC_PER_LAYER * m->layers + (m->tie_embeddings ? 0 : 1);
}

static void role_shape(const plc_model *m, plc_tensor_role role, int64_t shape[2], int *ndim)
{
    int64_t hd = m->heads > 0 ? m->hidden / m->heads : 0;
    int64_t q_out = m->heads * hd, kv_out = m->kv_heads * hd;
    *ndim = 2;
    shape[1] = 1;
    switch (role) {
    case PLC_ROLE_TOK_EMB: shape[0] = m->vocab; shape[1] = m->hidden; break;
    case PLC_ROLE_ATTN_NORM:
    case PLC_ROLE_MLP_NORM:
    case PLC_ROLE_FINAL_NORM: shape[0] = m->hidden; *ndim = 1; break;
    case PLC_ROLE_WQ: shape[0] = m->hidden; shape[1] = q_out; break;
    case PLC_ROLE_WK:
    case PLC_ROLE_WV: shape[0] = m->hidden; shape[1] = kv_out; break;
    case PLC_ROLE_WO: shape[0] = q_out; shape[1] = m->hidden; break;
    case PLC_ROLE_W_GATE:
    case PLC_ROLE_W_UP: shape[0] = m->hidden; shape[1] = m->ffn_hidden; break;
    case PLC_ROLE_W_DOWN: shape[0] = m->ffn_hidden; shape[1] = m->hidden; break;
    case PLC_ROLE_LM_HEAD: shape[0] = m->hidden; shape[1] = m->vocab; break;
    case PLC_ROLE_COUNT: shape[0] = 0; break;
    }
}

bool plc_tensor_get(const plc_model *m, int64_t id, plc_tensor_info *out)
{
    if (id < 0 || id >= plc_tensor_count(m)) return false;
    memset(out, 0, sizeof *out);
    out->id = id;
    out->layer = -1;
    int64_t last_layer_id = PLC_PER_LAYER * m->layers; /* ids 1 .. 9L are layers */
    if (id == 0) {
        out->role = PLC_ROLE_TOK_EMB;
    } else if (id <= last_layer_id) {
        out->layer = (id - 1) / PLC_PER_LAYER;
        out->role = layer_roles[(id - 1) % PLC_PER_LAYER];
    } else if (id == last_layer_id + 1) {
        out->role = PLC_ROLE_FINAL_NORM;
    } else {
        out->role = PLC_ROLE_LM_HEAD;
    }
    const char *rn = plc_tensor_role_name(out->role);
    if (out->layer >= 0)
        snprintf(out->name, sizeof out->name, "layers.%lld.%s", (long long)out->layer, rn);
    else
        snprintf(out->name, sizeof out->name, "%s", rn);
    role_shape(m, out->role, out->shape, &out->ndim);
    out->numel = out->shape[0] * out->shape[1];
    bool is_norm = out->ndim == 1;
    out->init = is_norm ? PLC_INIT_ONES : PLC_INIT_NORMAL;
    out->weight_decay = !is_norm;
    out->init_std = is_norm ? 0.0 : PLC_INIT_STD;
    if (out->role == PLC_ROLE_WO || out->role == PLC_ROLE_W_DOWN)
        out->init_std = PLC_INIT_STD / sqrt(2.0 * (double)m->layers);
    return true;
}

int64_t plc_tensor_id(const plc_model *m, plc_tensor_role role, int64_t layer)
{
    switch (role) {
    case PLC_ROLE_TOK_EMB: return 0;
    case PLC_ROLE_FINAL_NORM: return 1 + PLC_PER_LAYER * m->layers;
    case PLC_ROLE_LM_HEAD: return m->tie_embeddings ? -1 : 2 + PLC_PER_LAYER * m->layers;
    case PLC_ROLE_COUNT: return -1;
    default: break;
    }
    if (layer < 0 || layer >= m->layers) return -1;
    for (int i = 0; i < PLC_PER_LAYER; i++)
        if (layer_roles[i] == role) return 1 + PLC_PER_LAYER * layer + i;
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
