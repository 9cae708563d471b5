/* kernels/cpu/attention_tile.h: the work items and tile operations both
 * attention forms are built from (their shared backward is
 * plc_k_attention_backward, in attention_kernel.c). Each product is one
 * single-threaded plc_sgemm or plc_sgemm_packed (kernels/cpu/blas.h) on
 * shapes fixed by the tile grid and the sgemm's block of rows, so an
 * output element's sum order depends on the shapes only, never on the
 * thread count (docs/runtime.md, Determinism). */
#ifndef PLC_KERNELS_CPU_ATTENTION_TILE_H
#define PLC_KERNELS_CPU_ATTENTION_TILE_H

#include <stdint.h>

#include "kernels/cpu/attention_shape.h"

#define ATTN_TILE_Q 64  /* query rows per tile */
#define ATTN_TILE_K 256 /* keys per tile */

/* The forwards' work items, one per (b, h, query tile): independent
 * outputs, taken by OpenMP threads in any order. */
typedef struct attn_item {
    int64_t b, h, kvh; /* batch row, query head and its kv head */
    int64_t i0, nq;    /* the tile's queries i0 .. i0 + nq */
} attn_item;

static inline int64_t attn_items(const attn_shape *s)
{
    return s->B * s->H * ((s->Tq + ATTN_TILE_Q - 1) / ATTN_TILE_Q);
}

static inline attn_item attn_item_at(const attn_shape *s, int64_t idx)
{
    int64_t qtiles = (s->Tq + ATTN_TILE_Q - 1) / ATTN_TILE_Q, qt = idx % qtiles;
    attn_item it = {idx / (qtiles * s->H), (idx / qtiles) % s->H, 0, qt * ATTN_TILE_Q, 0};
    it.kvh = it.h / s->group;
    it.nq = s->Tq - it.i0 < ATTN_TILE_Q ? s->Tq - it.i0 : ATTN_TILE_Q;
    return it;
}

/* The forwards of the two forms (plc_k_attention_forward,
 * attention_kernel.c, picks one):
 * attention.c keeps the probabilities, flash_attention.c the log-sum-exp.
 * 0, or -1 when out of memory for the tiles. Call plc_blas_one_thread()
 * first. */
int plc_attn_forward_probs(float *out, float *probs, const float *q, const float *k, const float *v,
                           const attn_shape *s);
int plc_attn_forward_lse(float *out, float *lse, const float *q, const float *k, const float *v,
                         const attn_shape *s);

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

#endif
