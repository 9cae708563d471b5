/* model_math.h: parameter counts and FLOPs of the transformer plc trains
 * (docs/model.md): the Llama block (GQA, SwiGLU, RMSNorm, RoPE) or the GPT
 * block (GQA, GELU MLP, LayerNorm with bias, biases on every projection,
 * learned or rotary positions), tied or untied embeddings. */
#ifndef PLC_MODEL_MATH_H
#define PLC_MODEL_MATH_H

#include <stdbool.h>
#include <stdint.h>

#include "plc/job.h"

static inline int64_t plc_head_dim(const plc_model *m) { return m->hidden / m->heads; }

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
/* one norm: hidden (RMSNorm weight) or 2 hidden (LayerNorm weight and bias) */
int64_t plc_params_norm(const plc_model *m);
/* the learned position table [seq_len, hidden], 0 with RoPE */
int64_t plc_params_positions(const plc_model *m);
/* the embedding table [vocab, hidden], the head when untied, the position
 * table when learned */
int64_t plc_params_embedding(const plc_model *m);
/* all unique parameters of the model */
int64_t plc_params_total(const plc_model *m);

/* Parameters one rank of pipeline stage `stage` holds: its layers, the
 * embedding (and a learned position table) on stage 0, final norm and head
 * on the last stage (with tied embeddings and pp > 1 the last stage holds a
 * copy of the embedding as its head). Matrices and the vocabulary (padded to
 * a multiple of tp) are split over tp; norms, row-parallel biases and the
 * position table are replicated.
 * Every stage holds layers / pp layers (contiguous, interleaved or modular). */
typedef struct plc_stage_params {
    double layer_matrices; /* per rank, all its layers */
    double norms;          /* per rank: everything replicated over tp except the position table */
    double embedding;      /* per rank: input table and positions (stage 0), head (last) */
    int64_t layers;        /* transformer layers on the stage */
    bool has_embedding, has_head;
} plc_stage_params;

void plc_stage_params_of(const plc_model *m, int64_t tp, int64_t pp, int64_t stage,
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

/* Forward matmul FLOPs per token of one layer, excluding attention scores
 * (2 x its matmul weights; biases, norms and activations are not counted). */
double plc_flops_layer_linear_fwd(const plc_model *m);
/* Forward FLOPs per token of attention scores and weighted sum (QK^T, PV) in
 * one layer: 4 x hidden x context, context = seq_len when the kernel computes
 * the full square, (seq_len + 1) / 2 when it skips the masked half. */
double plc_flops_layer_attention_fwd(const plc_model *m, bool causal_skip);
/* Exact forward matmul FLOPs per token of the whole model (layers, attention
 * at the given causal handling, head). A training step costs 3x this (4x
 * with full recompute). */
double plc_flops_per_token_fwd(const plc_model *m, bool causal_skip);
/* The PaLM form used for MFU: 6 N + 12 L h s, N = plc_params_total. */
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
 * recompute = full, plc_recomputed_layers / (layers / pp) with block and
 * every, 0 otherwise. */
double plc_recompute_share(const plc_model *m, const plc_layout *l);

#endif
