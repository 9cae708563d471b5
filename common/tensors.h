/* tensors.h: the table of global model tensors of docs/model.md.
 *
 * One function maps a tensor id to its name, shape and role, from the model
 * dimensions alone. Initialisation, checkpoints, the lowering and the PyTorch
 * oracle all name and shape tensors through it, so they cannot disagree. */
#ifndef PLC_TENSORS_H
#define PLC_TENSORS_H

#include <stdbool.h>
#include <stdint.h>

#include "plc/job.h"
#include "plc/plan.h"

/* what a tensor is within its layer (or the model) */
typedef enum plc_tensor_role {
    PLC_ROLE_TOK_EMB,
    PLC_ROLE_ATTN_NORM,
    PLC_ROLE_WQ,
    PLC_ROLE_WK,
    PLC_ROLE_WV,
    PLC_ROLE_WO,
    PLC_ROLE_MLP_NORM,
    PLC_ROLE_W_GATE,
    PLC_ROLE_W_UP,
    PLC_ROLE_W_DOWN,
    PLC_ROLE_FINAL_NORM,
    PLC_ROLE_LM_HEAD,
    /* the GPT block's own (arch = gpt; pos_emb with positions = learned) */
    PLC_ROLE_POS_EMB,
    PLC_ROLE_ATTN_NORM_B,
    PLC_ROLE_BQ,
    PLC_ROLE_BK,
    PLC_ROLE_BV,
    PLC_ROLE_BO,
    PLC_ROLE_MLP_NORM_B,
    PLC_ROLE_W_FC,
    PLC_ROLE_B_FC,
    PLC_ROLE_W_PROJ,
    PLC_ROLE_B_PROJ,
    PLC_ROLE_FINAL_NORM_B,
    /* a mixture-of-experts layer's feed-forward (model.moe, docs/model.md):
     * the router [hidden, experts]; the routed experts' three matrices, each
     * expert's [hidden, expert_ffn_hidden] block stacked, [experts * hidden,
     * expert_ffn_hidden] (w_down stored transposed: an expert's output is
     * s @ w_down_e^T); the shared experts as one SwiGLU MLP of width
     * shared_experts * shared_ffn_hidden */
    PLC_ROLE_ROUTER,
    PLC_ROLE_EXP_GATE,
    PLC_ROLE_EXP_UP,
    PLC_ROLE_EXP_DOWN,
    PLC_ROLE_SH_GATE,
    PLC_ROLE_SH_UP,
    PLC_ROLE_SH_DOWN,
    PLC_ROLE_COUNT
} plc_tensor_role;

/* how a tensor is initialised */
typedef enum plc_init_kind {
    PLC_INIT_ONES,   /* norm weights */
    PLC_INIT_NORMAL, /* matrices and tables: normal(0, init_std) */
    PLC_INIT_ZEROS,  /* biases (GPT block) */
} plc_init_kind;

#define PLC_TENSOR_NAME_MAX 64

typedef struct plc_tensor_info {
    int64_t id;
    plc_tensor_role role;
    int64_t layer; /* -1 for tensors outside the layers */
    char name[PLC_TENSOR_NAME_MAX];
    int ndim;         /* 1 (norm weights, biases) or 2 (matrices, tables) */
    int64_t shape[2]; /* shape[1] = 1 for 1-D tensors */
    int64_t numel;
    plc_init_kind init;
    double init_std;   /* 0.02, or 0.02 / sqrt(2 L) for wo, w_down and w_proj; 0 for ones and zeros */
    bool weight_decay; /* AdamW decoupled decay applies (matrices and tables only) */
} plc_tensor_info;

/* Global tensor ids, in order: tok_emb; pos_emb (learned positions); the
 * layers, 9 tensors each (an MoE layer: plc_layer_tensor_count) (Llama: attn_norm, wq, wk, wv, wo, mlp_norm,
 * w_gate, w_up, w_down) or 16 (GPT: ln1_w, ln1_b, wq, bq, wk, bk, wv, bv,
 * wo, bo, ln2_w, ln2_b, w_fc, b_fc, w_proj, b_proj); the final norm
 * (final_norm, or final_norm_w and final_norm_b); lm_head when untied.
 * Names are docs/model.md's: Llama's `tok_emb`, `layers.{l}.wq`, ...; the
 * GPT block's Hugging Face GPT-2's (`wte.weight`, `h.{l}.ln_1.weight`,
 * `h.{l}.mlp.c_fc.weight`, ...; q, k, v as `h.{l}.attn.q.weight`, ...). */

/* tensors of one dense layer: 9 (Llama) or 16 (GPT); at most PLC_MAX_LAYER_TENSORS */
#define PLC_MAX_LAYER_TENSORS 16
int64_t plc_tensors_per_layer(const plc_model *m);

/* Mixture of experts (plc_moe, plc/job.h). A layer is an MoE layer when the
 * model has experts, the layer is not among the first dense_layers and
 * (layer - dense_layers) % moe_every == 0. An MoE layer (Llama block) holds
 * attn_norm, wq, wk, wv, wo, mlp_norm, router, experts.w_gate,
 * experts.w_up, experts.w_down, and with shared experts shared.w_gate,
 * shared.w_up, shared.w_down: 10 or 13 tensors, in that id order, in place
 * of the dense layer's 9. */
bool plc_layer_is_moe(const plc_model *m, int64_t layer);
/* tensors of layer `layer` (9, 10, 13 or 16), 0 out of range */
int64_t plc_layer_tensor_count(const plc_model *m, int64_t layer);

/* number of global tensors: 2 + 9 L for Llama, plus lm_head when
 * embeddings are untied; GPT: 3 + 16 L, one more with learned positions */
int64_t plc_tensor_count(const plc_model *m);

/* fills *out for tensor `id`; false when id is out of range */
bool plc_tensor_get(const plc_model *m, int64_t id, plc_tensor_info *out);

/* the role and shape of tensor `id` without its name (cheap: the memory
 * model sizes tensors in the search's inner loop); false when out of range */
bool plc_tensor_shape(const plc_model *m, int64_t id, plc_tensor_role *role, int64_t shape[2], int *ndim);

/* the shape of a role's tensor ([in, out] for a matrix; [n], ndim 1, for a
 * vector), the same in every layer */
void plc_tensor_role_shape(const plc_model *m, plc_tensor_role role, int64_t shape[2], int *ndim);

/* id of the tensor of a role (layer ignored outside the layers), -1 when the
 * model has no such tensor (lm_head when tied, a layer out of range) */
int64_t plc_tensor_id(const plc_model *m, plc_tensor_role role, int64_t layer);

/* id of the tensor called `name`, -1 when none is */
int64_t plc_tensor_find(const plc_model *m, const char *name);

/* How tensor parallelism splits a tensor of a role (Megatron): column
 * parallel q/k/v/gate/up/fc and lm_head; row parallel wo/down/proj, the
 * vocabulary-parallel embedding and the column-parallel biases (stored [n]:
 * split with their columns); norms, the row-parallel biases (added once,
 * after the reduction) and the position table are replicated. The lowering
 * lays tensors out by it and the memory model sizes them by it. */
plc_shard_kind plc_tensor_tp_split(plc_tensor_role r);

/* total number of parameters (elements of all global tensors) */
int64_t plc_model_param_count(const plc_model *m);

/* name of a role as used in tensor names ("wq", "attn_norm", ...); the
 * GPT block names its norms ln1_w, ln2_w and final_norm_w */
const char *plc_tensor_role_name(const plc_model *m, plc_tensor_role r);

#endif
