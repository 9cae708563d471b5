/* model_math.c: parameter counts and FLOPs; see solver.h. */
#include "compiler/solver/solver_int.h"

#include "common/layout_rules.h"

static bool is_gpt(const plc_model *m) { return m->arch == PLC_ARCH_GPT; }

int64_t plc_params_layer_weights(const plc_model *m)
{
    int64_t hd = plc_head_dim(m);
    int64_t q = m->hidden * m->heads * hd;
    int64_t kv = 2 * m->hidden * m->kv_heads * hd;
    int64_t o = m->heads * hd * m->hidden;
    int64_t mlp = (is_gpt(m) ? 2 : 3) * m->hidden * m->ffn_hidden; /* fc, proj | gate, up, down */
    return q + kv + o + mlp;
}

int64_t plc_params_layer_matrices(const plc_model *m)
{
    int64_t column_biases = is_gpt(m) ? (m->heads + 2 * m->kv_heads) * plc_head_dim(m) + m->ffn_hidden : 0;
    return plc_params_layer_weights(m) + column_biases;
}

int64_t plc_params_norm(const plc_model *m) { return (is_gpt(m) ? 2 : 1) * m->hidden; }

int64_t plc_params_layer_norms(const plc_model *m)
{
    int64_t row_biases = is_gpt(m) ? 2 * m->hidden : 0;
    return 2 * plc_params_norm(m) + row_biases;
}

int64_t plc_params_positions(const plc_model *m)
{
    return m->positions == PLC_POS_LEARNED ? m->seq_len * m->hidden : 0;
}

int64_t plc_params_embedding(const plc_model *m)
{
    int64_t table = m->vocab * m->hidden;
    return (m->tie_embeddings ? table : 2 * table) + plc_params_positions(m);
}

int64_t plc_params_total(const plc_model *m)
{
    return m->layers * plc_params_layer(m) + plc_params_embedding(m) + plc_params_norm(m);
}

void plc_stage_params_of(const plc_model *m, int64_t tp, int64_t pp, int64_t vpp, int64_t stage,
                         plc_stage_params *out)
{
    int64_t layers = plc_rank_layers(m->layers, pp, vpp, stage);
    /* the vocabulary padded to a multiple of tp (common/layout_rules.h) */
    double table = (double)plc_vocab_local(m->vocab, tp) * (double)m->hidden;
    out->layers = layers;
    out->layer_matrices = (double)layers * (double)plc_params_layer_matrices(m) / (double)tp;
    out->norms = (double)layers * (double)plc_params_layer_norms(m);
    out->embedding = 0;
    out->has_embedding = stage == 0;
    out->has_head = stage == pp - 1;
    if (out->has_embedding) out->embedding += table + (double)plc_params_positions(m);
    if (out->has_head) {
        out->norms += (double)plc_params_norm(m); /* final norm */
        /* untied: the head; tied with pp > 1: the last stage keeps a copy of
         * the table (its gradient is all-reduced with stage 0's) */
        if (!m->tie_embeddings || pp > 1) out->embedding += table;
    }
}

int64_t plc_layer_tensors(const plc_model *m) { return is_gpt(m) ? 16 : PLC_LAYER_TENSORS; }

int64_t plc_stage_tensors(const plc_model *m, int64_t pp, const plc_stage_params *s)
{
    /* layers; the embedding table and a learned position table (stage 0);
     * the final norm (weight, and bias in GPT) and the head (untied) or the
     * tied table's copy (pp > 1) on the last stage */
    int64_t first = s->has_embedding ? 1 + (plc_params_positions(m) > 0) : 0;
    int64_t head = s->has_head ? (is_gpt(m) ? 2 : 1) + (!m->tie_embeddings || pp > 1) : 0;
    return plc_layer_tensors(m) * s->layers + first + head;
}

double plc_flops_layer_linear_fwd(const plc_model *m)
{
    return 2.0 * (double)plc_params_layer_weights(m);
}

double plc_flops_layer_attention_fwd(const plc_model *m, bool causal_skip)
{
    double s = (double)m->seq_len;
    double context = causal_skip ? (s + 1.0) / 2.0 : s;
    return 4.0 * (double)m->hidden * context;
}

double plc_flops_per_token_fwd(const plc_model *m, bool causal_skip)
{
    double layer = plc_flops_layer_linear_fwd(m) + plc_flops_layer_attention_fwd(m, causal_skip);
    double head = 2.0 * (double)m->hidden * (double)m->vocab;
    return (double)m->layers * layer + head;
}

double plc_flops_per_token_palm(const plc_model *m)
{
    return 6.0 * (double)plc_params_total(m) +
           12.0 * (double)m->layers * (double)m->hidden * (double)m->seq_len;
}

double plc_flops_per_token_megatron(const plc_model *m)
{
    double L = (double)m->layers, h = (double)m->hidden, s = (double)m->seq_len, V = (double)m->vocab;
    return 96.0 * L * h * h * (1.0 + s / (6.0 * h) + V / (16.0 * L * h));
}

double plc_recompute_share(const plc_model *m, const plc_layout *l)
{
    int64_t per_rank = plc_rank_layers_most(m->layers, l->pp > 0 ? l->pp : 1, l->vpp > 0 ? l->vpp : 1);
    return per_rank > 0 ? (double)plc_recomputed_layers(m, l) / (double)per_rank : 0.0;
}
