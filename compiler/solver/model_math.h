/* model_math.h: parameter counts and FLOPs of a Llama-style transformer
 * (GQA, SwiGLU, RMSNorm, RoPE, tied or untied embeddings; docs/model.md). */
#ifndef PLC_MODEL_MATH_H
#define PLC_MODEL_MATH_H

#include <stdbool.h>
#include <stdint.h>

#include "plc/job.h"

static inline int64_t plc_head_dim(const plc_model *m) { return m->hidden / m->heads; }

/* parameters of one transformer layer: its matrices, and its two norms */
int64_t plc_params_layer_matrices(const plc_model *m);
int64_t plc_params_layer_norms(const plc_model *m);
static inline int64_t plc_params_layer(const plc_model *m)
{
    return plc_params_layer_matrices(m) + plc_params_layer_norms(m);
}
/* the embedding table [vocab, hidden] (and the head when untied) */
int64_t plc_params_embedding(const plc_model *m);
/* all unique parameters of the model */
int64_t plc_params_total(const plc_model *m);

/* Parameters one rank of pipeline stage `stage` holds: its layers, the
 * embedding on stage 0, final norm and head on the last stage (with tied
 * embeddings and pp > 1 the last stage holds a copy of the embedding as its
 * head). Matrices and the vocabulary (padded to a multiple of tp) are split
 * over tp; norms are replicated.
 * Every stage holds layers / pp layers (contiguous, interleaved or modular). */
typedef struct plc_stage_params {
    double layer_matrices; /* per rank, all its layers */
    double norms;          /* per rank */
    double embedding;      /* per rank: input table (stage 0), head (last) */
    int64_t layers;        /* transformer layers on the stage */
    bool has_embedding, has_head;
} plc_stage_params;

void plc_stage_params_of(const plc_model *m, int64_t tp, int64_t pp, int64_t stage,
                         plc_stage_params *out);
static inline double plc_stage_params_total(const plc_stage_params *s)
{
    return s->layer_matrices + s->norms + s->embedding;
}

/* parameter tensors of a layer (two norms, q, k, v, o, gate, up, down) */
#define PLC_LAYER_TENSORS 9
/* parameter tensors a rank of the stage holds (the collectives over them
 * are issued one per tensor) */
int64_t plc_stage_tensors(const plc_model *m, int64_t pp, const plc_stage_params *s);

/* Forward matmul FLOPs per token of one layer, excluding attention scores
 * (2 x its matrix parameters). */
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

#endif
