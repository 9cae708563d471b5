/* kernels/kernels.h: the CPU compute kernels of plrun (fp32, the reference).
 *
 * The model's math is fixed by docs/model.md. Conventions for every kernel:
 *
 * - fp32, row-major, every length is int64_t. Activations are [rows, cols]
 *   with rows = B * T. Attention tensors are [B, T, heads, hd].
 * - Forward kernels WRITE their outputs.
 * - Backward kernels ACCUMULATE (+=) into every gradient output (llm.c
 *   convention); the caller zeroes a gradient buffer when it must start at 0.
 *   A gradient output never aliases an input of the same call unless a
 *   kernel says so.
 * - Results are bitwise independent of the thread count (docs/runtime.md,
 *   Determinism): work is split into items fixed by the shapes alone (rows,
 *   heads, tiles, chunks of columns, GEMM panels), never by the thread count,
 *   and never inside a reduction; the one exception is the GEMM's panel grid
 *   under plc's own sgemm, whose elements have the same bits in any panel
 *   (kernels/cpu/matmul.c). Reductions use fixed blockings
 *   (kernels/common/reduce.h). Every sgemm is single-threaded, one call per
 *   GEMM panel or attention tile (plc_sgemm, kernels/cpu/blas.h).
 * - Positions (RoPE, learned position tables, attention masks) are int32
 *   per time step and shared by every sequence of the batch; NULL means 0,
 *   1, ..., T-1. Context-parallel ranks pass the absolute positions of the
 *   slice they hold.
 * - Token ids and targets are int32 and must lie in [0, vocab); the kernels
 *   do not check them (the data loader does).
 * - Kernels allocate no memory that grows with the tensors except small
 *   per-call tables (RoPE: T * hd floats; attention: a few tiles per
 *   thread; column sums: a double per column), so the planned arena is the
 *   working set. A kernel that allocates returns int: 0, or -1 when that
 *   allocation failed (then it has changed no output). No kernel prints or
 *   exits; plan validation keeps shapes inside what they take (e.g. BLAS's
 *   int).
 */
#ifndef PLC_KERNELS_H
#define PLC_KERNELS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- embedding (vocab-sharded for vocab-parallel tensor parallelism) ----
 * table is this rank's shard [vocab_local, dim] holding the ids
 * [vocab_start, vocab_start + vocab_local). A token outside the shard gives
 * a zero row (the TP all-reduce adds the owner's row) and no gradient. */
void plc_k_embedding_forward(float *out, const int32_t *tokens, const float *table,
                             int64_t rows, int64_t dim,
                             int64_t vocab_start, int64_t vocab_local);
/* dtable[tok - vocab_start, :] += dout[r, :] for every row r whose token is
 * in the shard; rows are added in order (deterministic). */
void plc_k_embedding_backward(float *dtable, const float *dout, const int32_t *tokens,
                              int64_t rows, int64_t dim,
                              int64_t vocab_start, int64_t vocab_local);

/* ---- RMSNorm: out = in / sqrt(mean(in^2) + eps) * weight, per row ------
 * rstd [rows] receives 1 / sqrt(mean(in^2) + eps) (may be NULL). out may
 * alias in. */
void plc_k_rmsnorm_forward(float *out, float *rstd, const float *in, const float *weight,
                           int64_t rows, int64_t dim, float eps);
/* din += d out / d in, dweight += sum over rows of dout * in * rstd.
 * rstd is the forward's. din or dweight may be NULL (not wanted). */
void plc_k_rmsnorm_backward(float *din, float *dweight, const float *dout,
                            const float *in, const float *weight, const float *rstd,
                            int64_t rows, int64_t dim);
/* The "_set" forms of the accumulating backwards write their gradient
 * outputs as if these had been zeroed first (0 + the sum, the same bits),
 * instead of adding: the executor folds a plan's ZERO into its next op
 * (docs/runtime.md, ZERO folding). Here din is written; dweight is added. */
void plc_k_rmsnorm_backward_set(float *din, float *dweight, const float *dout,
                                const float *in, const float *weight, const float *rstd,
                                int64_t rows, int64_t dim);

/* ---- LayerNorm: out = (in - mean) * rstd * weight + bias, per row ----------
 * torch.nn.LayerNorm's math (kernels/common/layernorm.h): biased variance,
 * rstd = 1 / sqrt(var + eps). mean and rstd [rows] receive the row
 * statistics the backward needs (fp32, two per row). out may alias in. */
void plc_k_layernorm_forward(float *out, float *mean, float *rstd, const float *in,
                             const float *weight, const float *bias,
                             int64_t rows, int64_t dim, float eps);
/* din += d out / d in; dweight += sum over rows of dout * xhat; dbias += sum
 * over rows of dout. mean and rstd are the forward's. din, dweight or dbias
 * may be NULL (not wanted). */
int plc_k_layernorm_backward(float *din, float *dweight, float *dbias, const float *dout,
                              const float *in, const float *weight,
                              const float *mean, const float *rstd,
                              int64_t rows, int64_t dim);

/* ---- matmul through cblas_sgemm (OpenBLAS) --------------------------------
 * C[M, N] = alpha * op(A) op(B) + beta * C, op(X) = X or X^T. OpenMP
 * threads take panels of C; each is one cblas_sgemm with OpenBLAS set to a
 * single thread (the call sets it), so call it from one thread at a time,
 * as every kernel that uses OpenBLAS (attention too).
 * op(A) is [M, K]: A is stored [M, K], or [K, M] when trans_a.
 * op(B) is [K, N]: B is stored [K, N], or [N, K] when trans_b.
 * beta = 0 overwrites C (C may hold garbage), beta = 1 accumulates: the
 * backward of y = x @ W is  dx += dy @ W^T  (trans_b, beta 1) and
 * dW += x^T @ dy  (trans_a, beta 1). */
void plc_k_matmul(float *C, const float *A, const float *B,
                  int64_t M, int64_t N, int64_t K,
                  int trans_a, int trans_b, float alpha, float beta);
/* The same with explicit leading dimensions (row strides, in elements). */
void plc_k_matmul_strided(float *C, int64_t ldc, const float *A, int64_t lda,
                          const float *B, int64_t ldb,
                          int64_t M, int64_t N, int64_t K,
                          int trans_a, int trans_b, float alpha, float beta);

/* ---- RoPE on interleaved pairs (2i, 2i+1) of every head -----------------
 * x is [B, T, heads, hd] (hd even); the pair i of position p turns by
 * p * theta^(-2i/hd) (computed in double, see kernels/common/rope.h).
 * out may alias in. */
int plc_k_rope_forward(float *out, const float *in, const int32_t *positions,
                        int64_t B, int64_t T, int64_t heads, int64_t hd, float theta);
/* din += R^T dout (the inverse rotation). din must not alias dout. */
int plc_k_rope_backward(float *din, const float *dout, const int32_t *positions,
                         int64_t B, int64_t T, int64_t heads, int64_t hd, float theta);
/* din = R^T dout (the _set form, see plc_k_rmsnorm_backward_set) */
int plc_k_rope_backward_set(float *din, const float *dout, const int32_t *positions,
                            int64_t B, int64_t T, int64_t heads, int64_t hd, float theta);

/* ---- causal attention with GQA --------------------------------------------
 * q, out: [B, Tq, H, hd]; k, v: [B, Tk, Hkv, hd]; H a multiple of Hkv, query
 * head h reads kv head h / (H / Hkv). Scale 1/sqrt(hd). Query i sees key j
 * iff k_pos[j] <= q_pos[i] (absolute positions; NULL = 0..Tq-1 / 0..Tk-1).
 * Tq != Tk is allowed: a context-parallel rank holds a slice of the queries
 * and the full gathered K/V. A query that sees no key gets a zero output
 * (and lse = -inf). */

/* Two forms: materialised, where probs [B, H, Tq, Tk] receives the softmax
 * (0 where masked; with NULL positions a row is written only up to the
 * keys its block of rows sees, rounded up to 16, the rest left as it was:
 * the backward reads no further), and tiled flash-style, an online softmax over key tiles
 * where lse [B, H, Tq] receives the natural log-sum-exp of each query's
 * scaled scores. Exactly one of probs and lse is non-NULL: it picks the
 * form. */
int plc_k_attention_forward(float *out, float *probs, float *lse,
                            const float *q, const float *k, const float *v,
                            const int32_t *q_pos, const int32_t *k_pos,
                            int64_t B, int64_t Tq, int64_t Tk,
                            int64_t H, int64_t Hkv, int64_t hd);
/* The backward of both forms: dq, dk, dv += gradients. out is the
 * forward's output; the probabilities are read from probs (materialised,
 * which holds the mask) or recomputed from lse (flash): exactly one of the
 * two is non-NULL. The positions are the forward's (with NULL ones the
 * tiles above the diagonal are skipped). */
int plc_k_attention_backward(float *dq, float *dk, float *dv, const float *dout,
                             const float *q, const float *k, const float *v,
                             const float *out, const float *probs, const float *lse,
                             const int32_t *q_pos, const int32_t *k_pos,
                             int64_t B, int64_t Tq, int64_t Tk,
                             int64_t H, int64_t Hkv, int64_t hd);

/* ---- SwiGLU on separate buffers: out = silu(gate) * up, n elements -------- */
void plc_k_swiglu_forward(float *out, const float *gate, const float *up, int64_t n);
/* dgate += dout * up * silu'(gate), dup += dout * silu(gate). */
void plc_k_swiglu_backward(float *dgate, float *dup, const float *dout,
                           const float *gate, const float *up, int64_t n);
/* dgate and dup written (the _set form, see plc_k_rmsnorm_backward_set) */
void plc_k_swiglu_backward_set(float *dgate, float *dup, const float *dout,
                               const float *gate, const float *up, int64_t n);

/* ---- GELU, tanh approximation (kernels/common/activations.h), n elements ----
 * out = gelu(in), out may alias in; din += dout * gelu'(in). */
void plc_k_gelu_forward(float *out, const float *in, int64_t n);
void plc_k_gelu_backward(float *din, const float *dout, const float *in, int64_t n);

/* ---- bias of a linear layer: x [rows, cols], bias [cols] -------------------
 * out[r, c] = in[r, c] + bias[c] (out may alias in); the backward is
 * dbias[c] += sum over rows of dout[r, c] (the input's gradient is dout). */
void plc_k_bias_add(float *out, const float *in, const float *bias, int64_t rows, int64_t cols);
int plc_k_bias_backward(float *dbias, const float *dout, int64_t rows, int64_t cols);

/* ---- learned absolute positions: x [B, T, dim], table [positions, dim] -----
 * out[b, t, :] = in[b, t, :] + table[p_t, :] with p_t = positions[t] (the
 * absolute positions convention above: NULL = 0..T-1, a context-parallel
 * rank passes those of the chunks it holds); out may alias in. The caller
 * keeps positions inside the table. The backward is
 * dtable[p_t, :] += sum over b of dout[b, t, :] (the input's gradient is
 * dout); a position listed twice adds both time steps. */
void plc_k_pos_embedding_forward(float *out, const float *in, const float *table,
                                 const int32_t *positions, int64_t B, int64_t T, int64_t dim);
int plc_k_pos_embedding_backward(float *dtable, const float *dout, const int32_t *positions,
                                  int64_t B, int64_t T, int64_t dim);

/* ---- element-wise ---------------------------------------------------------- */
void plc_k_add(float *out, const float *a, const float *b, int64_t n); /* out = a + b (may alias) */
void plc_k_accumulate(float *y, const float *x, int64_t n);             /* y += x */
void plc_k_scale(float *x, float s, int64_t n);                         /* x *= s */
void plc_k_zero(float *x, int64_t n);                                   /* x = 0 */

/* ---- cross-entropy, in pieces that work for a vocabulary sharded over TP ----
 * logits [rows, V_local] hold the ids [vocab_start, vocab_start + V_local).
 * Sharded use: (1) local max -> all-reduce MAX -> (2) local sum of
 * exp(logit - global max) and target logit -> all-reduce SUM of both ->
 * (3) loss and dlogits. Unsharded: vocab_start = 0, V_local = V, no
 * reductions (or plc_k_cross_entropy below). */
/* (1) row_max[r] = max over the shard of logits[r, :]. */
void plc_k_xent_local_max(float *row_max, const float *logits, int64_t rows, int64_t V_local);
/* (2) row_sum[r] = sum over the shard of exp(logits[r, c] - global_max[r]);
 * target_logit[r] = logits[r, targets[r] - vocab_start] when the target is
 * in this shard, else 0 (so a SUM over shards yields the target logit). */
void plc_k_xent_local_sumexp(float *row_sum, float *target_logit, const float *logits,
                             const float *global_max, const int32_t *targets,
                             int64_t rows, int64_t V_local, int64_t vocab_start);
/* (3) loss[r] = log(global_sum[r]) + global_max[r] - target_logit[r] (may be
 * NULL); dlogits = (softmax - onehot(target)) * grad_scale, WRITTEN for the
 * local shard (may be NULL; may alias logits for an in-place gradient). */
void plc_k_xent_loss_grad(float *loss, float *dlogits, const float *logits,
                          const float *global_max, const float *global_sum,
                          const float *target_logit, const int32_t *targets,
                          int64_t rows, int64_t V_local, int64_t vocab_start,
                          float grad_scale);
/* Fused unsharded cross-entropy from the same pieces: loss [rows] (may be
 * NULL), dlogits [rows, V] written (may be NULL or alias logits). */
void plc_k_cross_entropy(float *loss, float *dlogits, const float *logits,
                         const int32_t *targets, int64_t rows, int64_t V, float grad_scale);

/* ---- reductions (double accumulation, fixed blocking) ---------------------- */
double plc_k_sum(const float *x, int64_t n);          /* sum of x */
double plc_k_sum_squares(const float *x, int64_t n);  /* sum of x^2, for the gradient norm */

/* ---- AdamW (PyTorch's formulation, decoupled weight decay) ----------------
 * For every element, g = grad * grad_scale (grad_scale = clip factor, 1 when
 * not clipping), then
 *   param *= 1 - lr * weight_decay
 *   m = beta1 m + (1 - beta1) g,   v = beta2 v + (1 - beta2) g^2
 *   param -= lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)
 * t is the 1-based update count (the first update is t = 1; docs/model.md's
 * 0-based step s has t = s + 1). The hyperparameters are doubles: pass
 * them as the spec wrote them (0.999, not 0.999f, whose 1 - beta2 is off by
 * 1.3e-5 relative); the per-step scalars are derived in double. */
void plc_k_adamw(float *param, const float *grad, float *m, float *v, int64_t n,
                 double lr, double beta1, double beta2, double eps, double weight_decay,
                 int64_t t, float grad_scale);

/* ---- bf16 casts (round to nearest even; NaN stays NaN) ---------------------- */
void plc_k_cast_f32_to_bf16(uint16_t *out, const float *in, int64_t n);
void plc_k_cast_bf16_to_f32(float *out, const uint16_t *in, int64_t n);

/* ---- mixture of experts (kernels/cpu/moe.c; docs/model.md) ------------------
 * rows tokens, E experts, top-k each. Routing: scores = softmax(logits) over
 * the E experts (router 0) or sigmoid(logits) (router 1); a token's k
 * experts are its k highest scores (ties: the lower expert); its combine
 * weights are those k scores normalised to sum 1, times `scale`. Its copy
 * for its j-th expert e takes the next free row of e's block of the
 * permuted buffer, tokens in order; a copy past `capacity` rows of its
 * expert is dropped (pos = -1, weight kept for the gradient's sake but
 * unused). Expert e's block starts after the kept rows of experts < e. */

/* writes scores, expert, pos, weight and counts; returns the copies dropped */
int64_t plc_k_moe_route(float *scores, int32_t *expert, int32_t *pos, float *weight, int32_t *counts,
                        const float *logits, int64_t rows, int64_t E, int64_t k, int router,
                        int64_t capacity, float scale);
/* dlogits (written) from dweight, plus the gradient of the load-balancing
 * loss aux * E * sum_e f_e * sum_t p_te over each sequence (seq_rows rows
 * here, seq_full in all: more under context parallelism): f_e its share of
 * the sequence's seq_full * k choices taking e, counted from `expert`, or
 * read from choices [seqs, E] (the sequence's whole count) when not NULL;
 * p_te the softmax probability (router 0) or the score over the token's
 * sum of scores (router 1). */
void plc_k_moe_route_backward(float *dlogits, const float *dweight, const float *scores,
                              const int32_t *expert, const float *choices, int64_t rows, int64_t E,
                              int64_t k, int router, int64_t seq_rows, int64_t seq_full, float scale,
                              float aux);
/* choices [rows / seq_rows, E] = each sequence's copies per expert */
void plc_k_moe_seq_counts(float *choices, const int32_t *expert, int64_t rows, int64_t E, int64_t k,
                          int64_t seq_rows);
/* xp [prow, h] = each token's copies at their rows, other rows zero */
void plc_k_moe_permute(float *xp, const float *x, const int32_t *pos, int64_t rows, int64_t h,
                       int64_t k, int64_t prow);
/* dx [rows, h] += the rows of dxp of each token's copies, in j order */
void plc_k_moe_permute_backward(float *dx, const float *dxp, const int32_t *pos, int64_t rows,
                                int64_t h, int64_t k);
/* out [rows, h] = sum over j of weight[t, j] y[pos[t, j]] (dropped copies: none) */
void plc_k_moe_unpermute(float *out, const float *y, const int32_t *pos, const float *weight,
                         int64_t rows, int64_t h, int64_t k);
/* dy [prow, h] = weight dout at the copies' rows, other rows zero;
 * dweight [rows, k] = dout . y at the copy's row (0 for a dropped one) */
void plc_k_moe_unpermute_backward(float *dy, float *dweight, const float *dout, const float *y,
                                  const int32_t *pos, const float *weight, int64_t rows,
                                  int64_t h, int64_t k, int64_t prow);
/* per expert e, on its counts[e] rows (blocks in expert order):
 * C_e = A_e W_e + beta C_e, W_e [K, N] the e-th block of W, or A_e W_e^T
 * (W_e [N, K]) when transw; beta 0 zeroes C's rows past the counted ones */
void plc_k_moe_matmul(float *C, const float *A, const float *W, const int32_t *counts, int64_t E,
                      int64_t prow, int64_t K, int64_t N, int transw, float beta);
/* dW_e [K, N] += A_e^T B_e */
void plc_k_moe_matmul_dw(float *dW, const float *A, const float *B, const int32_t *counts,
                         int64_t E, int64_t K, int64_t N);

#ifdef __cplusplus
}
#endif

#endif /* PLC_KERNELS_H */
