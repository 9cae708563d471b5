/* kernels/cuda/kernels_cuda.h: the CUDA kernels of plrun, C-callable.
 *
 * The same operations and conventions as kernels/kernels.h (read it first):
 * row-major, int64_t lengths, forwards write, backwards ACCUMULATE (+=),
 * positions NULL = 0..T-1, mask k_pos <= q_pos, GQA head h reads kv head
 * h / (H / Hkv). Differences:
 *
 * - Every pointer is a DEVICE pointer (tokens, targets and positions too);
 *   `stream` is a cudaStream_t passed as void* (NULL = default stream).
 * - Activations are stored as `dt`: PLC_CUDA_F32 (float) or PLC_CUDA_BF16
 *   (bf16 as uint16_t, kernels/common/bf16.h), always computed in fp32.
 *   Per-row statistics (rstd, lse, the cross-entropy row values, losses),
 *   weight gradients of norms, biases and embeddings, and the optimizer's master
 *   weights, gradients and moments are always fp32.
 * - Every call returns 0, or -1 after recording a message that
 *   plc_cuda_last_error() returns (launch errors are checked right away;
 *   errors inside a kernel surface at the next synchronising call).
 * - Results do not depend on launch timing: no floating-point atomics;
 *   every output element is summed in a fixed order.
 * - Flash attention needs hd <= PLC_CUDA_MAX_HEAD_DIM.
 */
#ifndef PLC_KERNELS_CUDA_H
#define PLC_KERNELS_CUDA_H

#include <stdint.h>

#include "kernels/common/adamw.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum plc_cuda_dtype { PLC_CUDA_F32 = 0, PLC_CUDA_BF16 = 1 } plc_cuda_dtype;

#define PLC_CUDA_MAX_HEAD_DIM 128

/* Per-device state: the cuBLAS handle and a small reduction scratch. */
typedef struct plc_cuda_ctx plc_cuda_ctx;

int plc_cuda_device_count(void);          /* 0 when there is no usable GPU or driver */
plc_cuda_ctx *plc_cuda_create(int device); /* NULL on error (see plc_cuda_last_error) */
void plc_cuda_destroy(plc_cuda_ctx *ctx);
const char *plc_cuda_last_error(void);
int plc_cuda_synchronize(void *stream);

/* ---- casts -------------------------------------------------------------------- */
int plc_cuda_cast_f32_to_bf16(uint16_t *out, const float *in, int64_t n, void *stream);
int plc_cuda_cast_bf16_to_f32(float *out, const uint16_t *in, int64_t n, void *stream);

/* ---- matmul (cuBLAS, fp32 accumulation) ----------------------------------------
 * C[M, N] = alpha op(A) op(B) + beta C with the CPU meaning of trans_a/trans_b.
 * A and B are stored as ab_dt, C as c_dt (bf16 x bf16 -> fp32 C serves weight
 * gradients into fp32 buffers). */
int plc_cuda_matmul(plc_cuda_ctx *ctx, void *C, plc_cuda_dtype c_dt,
                    const void *A, const void *B, plc_cuda_dtype ab_dt,
                    int64_t M, int64_t N, int64_t K, int trans_a, int trans_b,
                    float alpha, float beta, void *stream);

/* ---- embedding: table and out as dt; dtable fp32 ------------------------------- */
int plc_cuda_embedding_forward(void *out, const int32_t *tokens, const void *table, plc_cuda_dtype dt,
                               int64_t rows, int64_t dim, int64_t vocab_start, int64_t vocab_local,
                               void *stream);
int plc_cuda_embedding_backward(float *dtable, const void *dout, plc_cuda_dtype dt,
                                const int32_t *tokens, int64_t rows, int64_t dim,
                                int64_t vocab_start, int64_t vocab_local, void *stream);

/* ---- RMSNorm: out, in, weight, din, dout as dt; rstd and dweight fp32 ---------- */
int plc_cuda_rmsnorm_forward(void *out, float *rstd, const void *in, const void *weight,
                             plc_cuda_dtype dt, int64_t rows, int64_t dim, float eps, void *stream);
int plc_cuda_rmsnorm_backward(void *din, float *dweight, const void *dout, const void *in,
                              const void *weight, const float *rstd, plc_cuda_dtype dt,
                              int64_t rows, int64_t dim, void *stream);

/* ---- RoPE (out may alias in; din must not alias dout) --------------------------- */
int plc_cuda_rope_forward(void *out, const void *in, plc_cuda_dtype dt, const int32_t *positions,
                          int64_t B, int64_t T, int64_t heads, int64_t hd, float theta, void *stream);
int plc_cuda_rope_backward(void *din, const void *dout, plc_cuda_dtype dt, const int32_t *positions,
                           int64_t B, int64_t T, int64_t heads, int64_t hd, float theta, void *stream);

/* ---- attention: q, k, v, out, dout, dq, dk, dv as dt; probs, lse fp32 ----------- */
int plc_cuda_attention_forward(void *out, float *probs, const void *q, const void *k, const void *v,
                               plc_cuda_dtype dt, const int32_t *q_pos, const int32_t *k_pos,
                               int64_t B, int64_t Tq, int64_t Tk, int64_t H, int64_t Hkv, int64_t hd,
                               void *stream);
/* NOTE: uses probs as scratch and leaves the score gradients in it. */
int plc_cuda_attention_backward(void *dq, void *dk, void *dv, const void *dout,
                                const void *q, const void *k, const void *v, const void *out,
                                float *probs, plc_cuda_dtype dt,
                                int64_t B, int64_t Tq, int64_t Tk, int64_t H, int64_t Hkv, int64_t hd,
                                void *stream);
int plc_cuda_flash_attention_forward(void *out, float *lse, const void *q, const void *k, const void *v,
                                     plc_cuda_dtype dt, const int32_t *q_pos, const int32_t *k_pos,
                                     int64_t B, int64_t Tq, int64_t Tk, int64_t H, int64_t Hkv,
                                     int64_t hd, void *stream);
int plc_cuda_flash_attention_backward(void *dq, void *dk, void *dv, const void *dout,
                                      const void *q, const void *k, const void *v, const void *out,
                                      const float *lse, plc_cuda_dtype dt,
                                      const int32_t *q_pos, const int32_t *k_pos,
                                      int64_t B, int64_t Tq, int64_t Tk, int64_t H, int64_t Hkv,
                                      int64_t hd, void *stream);

/* ---- element-wise (all tensors of a call as dt) ---------------------------------- */
int plc_cuda_swiglu_forward(void *out, const void *gate, const void *up, plc_cuda_dtype dt,
                            int64_t n, void *stream);
int plc_cuda_swiglu_backward(void *dgate, void *dup, const void *dout, const void *gate,
                             const void *up, plc_cuda_dtype dt, int64_t n, void *stream);
int plc_cuda_add(void *out, const void *a, const void *b, plc_cuda_dtype dt, int64_t n, void *stream);
int plc_cuda_accumulate(void *y, const void *x, plc_cuda_dtype dt, int64_t n, void *stream);
int plc_cuda_scale(void *x, float s, plc_cuda_dtype dt, int64_t n, void *stream);

/* ---- the GPT block's ops (kernels/kernels.h gives their math) -------------------
 * LayerNorm: out, in, weight, bias, din, dout as dt; mean, rstd, dweight,
 * dbias fp32. din, dweight or dbias may be NULL. */
int plc_cuda_layernorm_forward(void *out, float *mean, float *rstd, const void *in, const void *weight,
                               const void *bias, plc_cuda_dtype dt, int64_t rows, int64_t dim, float eps,
                               void *stream);
int plc_cuda_layernorm_backward(void *din, float *dweight, float *dbias, const void *dout, const void *in,
                                const void *weight, const float *mean, const float *rstd, plc_cuda_dtype dt,
                                int64_t rows, int64_t dim, void *stream);
/* GELU (tanh approximation), every tensor as dt */
int plc_cuda_gelu_forward(void *out, const void *in, plc_cuda_dtype dt, int64_t n, void *stream);
int plc_cuda_gelu_backward(void *din, const void *dout, const void *in, plc_cuda_dtype dt, int64_t n,
                           void *stream);
/* bias of a linear layer: out, in, bias, dout as dt; dbias fp32 */
int plc_cuda_bias_add(void *out, const void *in, const void *bias, plc_cuda_dtype dt, int64_t rows,
                      int64_t cols, void *stream);
int plc_cuda_bias_backward(float *dbias, const void *dout, plc_cuda_dtype dt, int64_t rows, int64_t cols,
                           void *stream);
/* learned positions: out, in, table, dout as dt; dtable fp32 */
int plc_cuda_pos_embedding_forward(void *out, const void *in, const void *table, plc_cuda_dtype dt,
                                   const int32_t *positions, int64_t B, int64_t T, int64_t dim, void *stream);
int plc_cuda_pos_embedding_backward(float *dtable, const void *dout, plc_cuda_dtype dt,
                                    const int32_t *positions, int64_t B, int64_t T, int64_t dim, void *stream);

/* ---- cross-entropy: logits, dlogits as dt; row values and loss fp32 -------------- */
int plc_cuda_xent_local_max(float *row_max, const void *logits, plc_cuda_dtype dt,
                            int64_t rows, int64_t V_local, void *stream);
int plc_cuda_xent_local_sumexp(float *row_sum, float *target_logit, const void *logits,
                               plc_cuda_dtype dt, const float *global_max, const int32_t *targets,
                               int64_t rows, int64_t V_local, int64_t vocab_start, void *stream);
int plc_cuda_xent_loss_grad(float *loss, void *dlogits, const void *logits, plc_cuda_dtype dt,
                            const float *global_max, const float *global_sum,
                            const float *target_logit, const int32_t *targets,
                            int64_t rows, int64_t V_local, int64_t vocab_start,
                            float grad_scale, void *stream);
int plc_cuda_cross_entropy(float *loss, void *dlogits, const void *logits, plc_cuda_dtype dt,
                           const int32_t *targets, int64_t rows, int64_t V, float grad_scale,
                           void *stream);

/* ---- reductions and optimizer (fp32) ----------------------------------------------
 * *result (a device double) = sum of x^2, with a fixed blocking. */
int plc_cuda_sum_squares(plc_cuda_ctx *ctx, double *result, const float *x, int64_t n, void *stream);
int plc_cuda_adamw(float *param, const float *grad, float *m, float *v, int64_t n,
                   double lr, double beta1, double beta2, double eps, double weight_decay,
                   int64_t t, float grad_scale, void *stream);
/* the same update with the step's constants (plc_adamw_prepare, computed
 * on the host) and the clip factor both in device memory */
int plc_cuda_adamw_dev(float *param, const float *grad, float *m, float *v, int64_t n,
                       const plc_adamw_consts *consts, const float *grad_scale, void *stream);

/* ---- the step's scalars on the device (step_scalars.cu; one thread each, the
 * host's double arithmetic in the host's order) ------------------------------------
 * *acc += x[0] + ... + x[n-1], widened to double and added in order */
int plc_cuda_sum_rows_f64(double *acc, const float *x, int64_t n, void *stream);
/* *acc += *x */
int plc_cuda_add_f64(double *acc, const double *x, void *stream);
/* *scale = max_norm > 0 && sqrt(*sumsq) > max_norm ? max_norm / sqrt(*sumsq) : 1 */
int plc_cuda_clip_scale(float *scale, const double *sumsq, double max_norm, void *stream);

/* ---- mixture of experts (kernels/cuda/moe.cu; fp32): kernels.h's MoE section.
 * The route writes the copies it dropped to *dropped_dev (device); the
 * expert matmuls read the counts back to the host (synchronising the
 * stream) and run one cuBLAS GEMM per expert. */
int plc_cuda_moe_route(float *scores, int32_t *expert, int32_t *pos, float *weight, int32_t *counts,
                       const float *logits, int64_t rows, int64_t E, int64_t k, int router, int64_t capacity,
                       float scale, long long *dropped_dev, void *stream);
int plc_cuda_moe_route_backward(float *dlogits, const float *dweight, const float *scores, const int32_t *expert,
                                const float *choices, int64_t rows, int64_t E, int64_t k, int router,
                                int64_t seq_rows, int64_t seq_full, float scale, float aux, void *stream);
int plc_cuda_moe_seq_counts(float *choices, const int32_t *expert, int64_t rows, int64_t E, int64_t k,
                            int64_t seq_rows, void *stream);
int plc_cuda_moe_permute(float *xp, const float *x, const int32_t *pos, int64_t rows, int64_t h, int64_t k,
                         int64_t prow, void *stream);
int plc_cuda_moe_permute_backward(float *dx, const float *dxp, const int32_t *pos, int64_t rows, int64_t h,
                                  int64_t k, void *stream);
int plc_cuda_moe_unpermute(float *out, const float *y, const int32_t *pos, const float *weight, int64_t rows,
                           int64_t h, int64_t k, void *stream);
int plc_cuda_moe_unpermute_backward(float *dy, float *dweight, const float *dout, const float *y,
                                    const int32_t *pos, const float *weight, int64_t rows, int64_t h, int64_t k,
                                    int64_t prow, void *stream);
int plc_cuda_moe_matmul(plc_cuda_ctx *ctx, float *C, const float *A, const float *W, const int32_t *counts,
                        int64_t E, int64_t prow, int64_t K, int64_t N, int transw, float beta, void *stream);
int plc_cuda_moe_matmul_dw(plc_cuda_ctx *ctx, float *dW, const float *A, const float *B, const int32_t *counts,
                           int64_t E, int64_t K, int64_t N, void *stream);

#ifdef __cplusplus
}
#endif

#endif /* PLC_KERNELS_CUDA_H */
