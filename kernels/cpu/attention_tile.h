/* kernels/cpu/attention_tile.h: the tile operations both attention forms are
 * built from, and the shared backward. Each product is one single-threaded
 * plc_sgemm (kernels/cpu/blas.h) on shapes fixed by the tile grid, so an
 * output element's sum order depends on the shapes only, never on the
 * thread count (docs/runtime.md, Determinism). */
#ifndef PLC_KERNELS_CPU_ATTENTION_TILE_H
#define PLC_KERNELS_CPU_ATTENTION_TILE_H

#include <stdint.h>

#include "kernels/cpu/attention_shape.h"

#define ATTN_TILE_Q 64  /* query rows per tile */
#define ATTN_TILE_K 256 /* keys per tile */

/* S[i * lds + j] = sum over d of A[i * lda + d] * B[j * ldb + d]
 * for i < m, j < n. */
void plc_attn_dot_tile(float *S, int64_t lds, const float *A, int64_t lda, int64_t m,
                       const float *B, int64_t ldb, int64_t n, int64_t hd);

/* Y[i * ldy + d] += alpha * sum over j < n of W(i, j) * X[j * ldx + d]
 * for i < m, d < hd, where W(i, j) = W[i * wsi + j * wsj] and either wsi or
 * wsj is 1. Masked pairs carry weight 0 and add exactly 0 (X is finite). */
void plc_attn_mul_acc(float *Y, int64_t ldy, const float *W, int64_t wsi, int64_t wsj, int64_t m,
                      const float *X, int64_t ldx, int64_t n, int64_t hd, float alpha);

/* A row of scores p[0 .. n) (masked ones -inf) times scale, in place, to its
 * softmax; a row with no visible key becomes 0. */
void plc_attn_softmax_row(float *p, int64_t n, float scale);

/* The backward of both forms: probabilities from probs ([B, H, Tq, Tk],
 * materialised) when it is not NULL, else recomputed from lse (flash).
 * Returns 0, or -1 when out of memory for its tiles (nothing added then). */
int plc_attn_backward(float *dq, float *dk, float *dv, const float *dout,
                      const float *q, const float *k, const float *v, const float *out,
                      const float *probs, const float *lse, const attn_shape *s);

#endif
