/* model_math.c: the model's arithmetic below both the memory and the time
 * model: bytes per element of each precision, the layer's matrix products
 * (one table, by tensors.h's roles), parameter counts and FLOPs; see
 * solver.h. */
#include "compiler/solver/solver_int.h"

#include <stdio.h>
#include <string.h>

#include "common/layout_rules.h"
#include "common/tensors.h"

static bool is_gpt(const plc_model *m) { return m->arch == PLC_ARCH_GPT; }

plc_dtype_bytes plc_dtype_bytes_of(const plc_job *job)
{
    plc_dtype_bytes d;
    if (job->train.precision == PLC_PREC_FP32) {
        d = (plc_dtype_bytes){.weight = 4, .grad = 4, .optimizer = 8, .act = 4};
    } else {
        d = (plc_dtype_bytes){.weight = 2, .grad = 4, .optimizer = 12, .act = 2};
        if (job->train.precision == PLC_PREC_FP8) d.fp8_weights = 2;
    }
    if (job->cluster.hw.grad_bytes > 0) d.grad = job->cluster.hw.grad_bytes;
    return d;
}

/* ---- the block's matrix products ------------------------------------------
 * One row per weight, in the order the block runs them. call: the GEMM an
 * eager PyTorch block runs it in (plc_block_linears); fused: the GEMM of
 * plrun's lowering and Megatron (plc_layer_gemms). Each weight's shape
 * ([in, out]) and how tensor parallelism splits it come from tensors.h. */
typedef struct block_linear {
    plc_tensor_role role;
    int call, fused;
} block_linear;

static const block_linear llama_linears[] = {
    {PLC_ROLE_WQ, 0, 0},     {PLC_ROLE_WK, 1, 0},   {PLC_ROLE_WV, 2, 0},     {PLC_ROLE_WO, 3, 1},
    {PLC_ROLE_W_GATE, 4, 2}, {PLC_ROLE_W_UP, 5, 2}, {PLC_ROLE_W_DOWN, 6, 3},
};
static const block_linear gpt_linears[] = {
    {PLC_ROLE_WQ, 0, 0}, {PLC_ROLE_WK, 0, 0}, {PLC_ROLE_WV, 0, 0}, {PLC_ROLE_WO, 1, 1},
    {PLC_ROLE_W_FC, 2, 2}, {PLC_ROLE_W_PROJ, 3, 3},
};

/* appends "+name" (or name to an empty one), cut at size */
static void name_append(char *to, size_t size, const char *name)
{
    size_t len = strlen(to), add = strlen(name);
    if (len && len + 1 < size) to[len++] = '+';
    if (len + add >= size) add = size - 1 - len;
    memcpy(to + len, name, add);
    to[len + add] = '\0';
}

/* the products, grouped by the call or the fused column; returns the count */
static int block_products(const plc_job *job, const plc_layout *l, bool fused, plc_gemm_shape *g)
{
    const plc_model *m = &job->model;
    const block_linear *rows = is_gpt(m) ? gpt_linears : llama_linears;
    const int nrows = is_gpt(m) ? (int)(sizeof gpt_linears / sizeof *gpt_linears)
                                : (int)(sizeof llama_linears / sizeof *llama_linears);
    const int64_t T = l->micro_batch * m->seq_len / l->cp;
    int n = 0;
    for (int i = 0; i < nrows; i++) {
        const int k = fused ? rows[i].fused : rows[i].call;
        int64_t shape[2];
        int ndim;
        plc_tensor_role_shape(m, rows[i].role, shape, &ndim);
        int64_t K = shape[0], N = shape[1];
        const plc_shard_kind split = plc_tensor_tp_split(rows[i].role);
        if (split == PLC_SHARD_COLS) N /= l->tp;
        if (split == PLC_SHARD_ROWS) K /= l->tp;
        if (k == n) { /* a new product */
            g[n].M = T, g[n].N = N, g[n].K = K;
            g[n++].name[0] = '\0';
        } else { /* one more weight reading the same input */
            g[k].N += N;
        }
        name_append(g[k].name, sizeof g[k].name, plc_tensor_role_name(m, rows[i].role));
    }
    return n;
}

void plc_layer_gemms(const plc_job *job, const plc_layout *l, plc_gemm_shape g[PLC_LAYER_GEMMS])
{
    block_products(job, l, true, g);
}

int plc_block_linears(const plc_job *job, const plc_layout *l, plc_gemm_shape g[PLC_BLOCK_LINEARS_MAX])
{
    return block_products(job, l, false, g);
}

/* ---- parameters --------------------------------------------------------------
 * One layer's parts: attention (grouped-query or latent), an MLP of a width
 * (SwiGLU: gate, up, down; GPT: fc, proj with their biases), and for an
 * MoE layer the router and the experts, each an MLP of the model's kind
 * (docs/model.md has the formulas). */

int64_t plc_params_attention(const plc_model *m)
{
    const plc_mla *a = &m->mla;
    if (a->kv_rank == 0) {
        int64_t hd = plc_head_dim(m);
        return m->hidden * m->heads * hd + 2 * m->hidden * m->kv_heads * hd + m->heads * hd * m->hidden;
    }
    int64_t qk = m->heads * (a->nope_head_dim + a->rope_head_dim);
    int64_t q = a->q_rank > 0 ? m->hidden * a->q_rank + a->q_rank * qk : m->hidden * qk;
    /* the latent and the shared RoPE key in one down-projection, the
     * latent up to every head's non-RoPE key and value */
    int64_t kv = m->hidden * (a->kv_rank + a->rope_head_dim) + a->kv_rank * m->heads * (a->nope_head_dim + a->v_head_dim);
    int64_t o = m->heads * a->v_head_dim * m->hidden;
    return q + kv + o;
}

/* an MLP's matmul weights at a width: gate, up, down | fc, proj */
static int64_t mlp_weights(const plc_model *m, int64_t width) { return (is_gpt(m) ? 2 : 3) * m->hidden * width; }

/* ... and GPT's biases: fc's (width, column-parallel) and proj's (hidden) */
static int64_t mlp_params(const plc_model *m, int64_t width)
{
    return mlp_weights(m, width) + (is_gpt(m) ? width + m->hidden : 0);
}

int64_t plc_params_layer_weights(const plc_model *m)
{
    return plc_params_attention(m) + mlp_weights(m, m->ffn_hidden);
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
    /* latent attention's RMSNorms of the query and key/value latents */
    int64_t latent = m->mla.kv_rank > 0 ? m->mla.q_rank + m->mla.kv_rank : 0;
    /* qk-norm's RMSNorms of a query head and of a key head (Qwen3) */
    int64_t qk_norm = m->qk_norm ? 2 * plc_head_dim(m) : 0;
    return 2 * plc_params_norm(m) + row_biases + latent + qk_norm;
}

int64_t plc_moe_layer_count(const plc_model *m)
{
    const plc_moe *e = &m->moe;
    int64_t every = e->moe_every > 0 ? e->moe_every : 1;
    if (e->experts == 0 || e->dense_layers >= m->layers) return 0;
    return (m->layers - e->dense_layers + every - 1) / every;
}

/* the share of the layers that are MoE layers (the time model's and the
 * search's weight of the expert terms) */
double plc_moe_layer_share(const plc_model *m)
{
    return m->moe.experts > 0 && m->layers > 0 ? (double)plc_moe_layer_count(m) / (double)m->layers : 0.0;
}

int64_t plc_params_moe_mlp(const plc_model *m, bool active)
{
    const plc_moe *e = &m->moe;
    if (e->experts == 0) return 0;
    int64_t routed = (active ? e->top_k : e->experts) * mlp_params(m, e->expert_ffn_hidden);
    int64_t shared = e->shared_experts * mlp_params(m, e->shared_ffn_hidden);
    return m->hidden * e->experts + routed + shared; /* the router [hidden, experts], then the experts */
}

int64_t plc_params_moe_layer(const plc_model *m, bool active)
{
    return plc_params_layer(m) - mlp_params(m, m->ffn_hidden) + plc_params_moe_mlp(m, active);
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

/* the layers (dense ones and MoE ones, all or the active experts), the
 * embedding and the final norm */
static int64_t params_model(const plc_model *m, bool active)
{
    int64_t moe = plc_moe_layer_count(m);
    return (m->layers - moe) * plc_params_layer(m) + moe * plc_params_moe_layer(m, active) + plc_params_embedding(m) +
           plc_params_norm(m);
}

int64_t plc_params_total(const plc_model *m) { return params_model(m, false); }
int64_t plc_params_active(const plc_model *m) { return params_model(m, true); }

const char *plc_count_text(int64_t n, char *buf, size_t size)
{
    char digits[24];
    int len = snprintf(digits, sizeof digits, "%lld", (long long)(n < 0 ? -n : n)), at = 0;
    char out[40];
    if (n < 0) out[at++] = '-';
    for (int i = 0; i < len; i++) {
        if (i && (len - i) % 3 == 0) out[at++] = ',';
        out[at++] = digits[i];
    }
    out[at] = '\0';
    snprintf(buf, size, "%s", out);
    return buf;
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

int64_t plc_layer_tensors(const plc_model *m)
{
    return (is_gpt(m) ? 16 : PLC_LAYER_TENSORS) + (m->qk_norm ? 2 : 0); /* qk-norm: q_norm, k_norm */
}

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

double plc_flops_moe_layer_linear_fwd(const plc_model *m)
{
    const plc_moe *e = &m->moe;
    double experts = (double)(e->top_k * mlp_weights(m, e->expert_ffn_hidden) +
                              e->shared_experts * mlp_weights(m, e->shared_ffn_hidden));
    double router = (double)(m->hidden * e->experts);
    return 2.0 * ((double)plc_params_attention(m) + router + experts);
}

/* the channels of a head's query/key and of its value */
static void head_widths(const plc_model *m, double *qk, double *v)
{
    if (m->mla.kv_rank > 0) {
        *qk = (double)(m->mla.nope_head_dim + m->mla.rope_head_dim);
        *v = (double)m->mla.v_head_dim;
    } else {
        *qk = *v = (double)plc_head_dim(m);
    }
}

double plc_flops_layer_attention_fwd(const plc_model *m, bool causal_skip)
{
    double s = (double)m->seq_len;
    double context = causal_skip ? (s + 1.0) / 2.0 : s;
    double qk, v;
    head_widths(m, &qk, &v);
    return 2.0 * (double)m->heads * (qk + v) * context; /* QK^T, then PV */
}

double plc_flops_per_token_fwd(const plc_model *m, bool causal_skip)
{
    double moe = (double)plc_moe_layer_count(m), dense = (double)m->layers - moe;
    double attention = plc_flops_layer_attention_fwd(m, causal_skip);
    double layers = moe > 0 ? dense * (plc_flops_layer_linear_fwd(m) + attention) +
                                  moe * (plc_flops_moe_layer_linear_fwd(m) + attention)
                            : (double)m->layers * (plc_flops_layer_linear_fwd(m) + attention);
    double head = 2.0 * (double)m->hidden * (double)m->vocab;
    return layers + head;
}

double plc_flops_per_token_palm(const plc_model *m)
{
    double qk, v;
    head_widths(m, &qk, &v);
    return 6.0 * (double)plc_params_active(m) +
           6.0 * (double)m->layers * (double)m->heads * (qk + v) * (double)m->seq_len;
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
