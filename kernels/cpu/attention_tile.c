/* kernels/cpu/attention_tile.c: tile operations of the CPU attention
 * kernels (see attention_tile.h) and the backward both forms share. */
#include "kernels/cpu/attention_tile.h"
#include "kernels/kernels.h"
#include "kernels/common/reduce.h"
#include "kernels/cpu/blas.h"
#include "kernels/cpu/simd.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

/* The tile products are single-threaded sgemm calls (kernels/cpu/blas.h):
 * the OpenMP threads of the callers take whole work items, so every
 * product is the same call whatever the thread count. */

void plc_attn_dot_tile(float *S, int64_t lds, const float *A, int64_t lda, int64_t m,
                       const float *B, int64_t ldb, int64_t n, int64_t hd)
{
    if (m == 0 || n == 0) return;
    plc_sgemm(0, 1, m, n, hd, 1.0f, A, lda, B, ldb, 0.0f, S, lds);
}

void plc_attn_mul_acc(float *Y, int64_t ldy, const float *W, int64_t wsi, int64_t wsj, int64_t m,
                      const float *X, int64_t ldx, int64_t n, int64_t hd, float alpha)
{
    if (m == 0 || n == 0) return;
    int tw = wsj != 1; /* W(i, j) = W[j * wsj + i]: W stored transposed */
    plc_sgemm(tw, 0, m, hd, n, alpha, W, tw ? wsj : wsi, X, ldx, 1.0f, Y, ldy);
}

PLC_VECTOR_CLONES void plc_attn_softmax_row(float *p, int64_t n, float scale)
{
    float max = -INFINITY;
#pragma omp simd reduction(max : max)
    for (int64_t j = 0; j < n; j++) {
        p[j] *= scale;
        max = p[j] > max ? p[j] : max;
    }
#pragma omp simd
    for (int64_t j = 0; j < n; j++) p[j] = plc_exp_shifted(p[j], max);
    double sum = plc_sum_f64(p, n);
    float inv = sum > 0 ? (float)(1.0 / sum) : 0.0f; /* a row without keys stays 0 */
#pragma omp simd
    for (int64_t j = 0; j < n; j++) p[j] *= inv;
}

/* dS[r, c] = scale * P[r, c] * (dP[r, c] - D[r]) in place of dP; masked
 * pairs (P = 0) give exactly 0 */
PLC_VECTOR_CLONES static void tile_ds(float *dS, int64_t ldd, const float *P, int64_t ldp, const float *D,
                                      int64_t nq, int64_t nk, float scale)
{
    for (int64_t r = 0; r < nq; r++) {
        float *d = dS + r * ldd;
        const float *p = P + r * ldp;
        float Dr = D[r];
#pragma omp simd
        for (int64_t c = 0; c < nk; c++) d[c] = p[c] == 0.0f ? 0.0f : scale * (p[c] * (d[c] - Dr));
    }
}

/* P of a tile recomputed from lse: exp(scale S - lse), 0 where masked */
static void tile_p_from_lse(float *P, const attn_shape *s, int64_t b, int64_t h, int64_t i0, int64_t nq,
                            int64_t j0, int64_t nk, const float *q, const float *k, const float *lse)
{
    int64_t kvh = h / s->group;
    plc_attn_dot_tile(P, ATTN_TILE_K, q + attn_q_off(s, b, i0, h), s->H * s->hd, nq,
                      k + attn_kv_off(s, b, j0, kvh), s->Hkv * s->hd, nk, s->hd);
    for (int64_t r = 0; r < nq; r++) {
        float L = lse[(b * s->H + h) * s->Tq + i0 + r], *p = P + r * ATTN_TILE_K;
        for (int64_t c = 0; c < nk; c++)
            p[c] = (L == -INFINITY || !attn_visible(s, i0 + r, j0 + c)) ? 0.0f : plc_expf(p[c] * s->scale - L);
    }
}

int plc_k_attention_forward(float *out, float *probs, float *lse,
                            const float *q, const float *k, const float *v,
                            const int32_t *q_pos, const int32_t *k_pos,
                            int64_t B, int64_t Tq, int64_t Tk,
                            int64_t H, int64_t Hkv, int64_t hd)
{
    const attn_shape s = attn_shape_make(B, Tq, Tk, H, Hkv, hd, q_pos, k_pos);
    plc_blas_one_thread();
    return probs ? plc_attn_forward_probs(out, probs, q, k, v, &s) : plc_attn_forward_lse(out, lse, q, k, v, &s);
}

/* Standard causal positions let tiles above the diagonal be skipped. */
static int tile_masked(const attn_shape *s, int64_t i_last, int64_t j0)
{
    return s->index_causal && j0 > i_last;
}

/* One work item per (b, kv head): for each head of its group and each
 * (query tile, key tile), dP = dout V^T, dS = P (dP - D) scale, and
 *   dq_i += dS K_j,  dk_j += dS^T q_i,  dv_j += P^T dout_i.
 * dk and dv of the kv head add the group's heads and query tiles in order;
 * dq's rows add the key tiles in order; no two items write the same row. */
int plc_k_attention_backward(float *dq, float *dk, float *dv, const float *dout,
                             const float *q, const float *k, const float *v,
                             const float *out, const float *probs, const float *lse,
                             const int32_t *q_pos, const int32_t *k_pos,
                             int64_t B, int64_t Tq, int64_t Tk,
                             int64_t H, int64_t Hkv, int64_t hd)
{
    /* the mask is in probs (zeros) or applied to the recomputed tiles; the
     * positions also let tiles above the diagonal be skipped */
    const attn_shape shape = attn_shape_make(B, Tq, Tk, H, Hkv, hd, q_pos, k_pos), *s = &shape;
    const int64_t qld = s->H * hd, kld = s->Hkv * hd, tile = ATTN_TILE_Q * ATTN_TILE_K;
    plc_blas_one_thread();
    const int nthreads = omp_get_max_threads();
    float *scratch = malloc((size_t)nthreads * 2 * tile * sizeof *scratch);
    if (!scratch) return -1;
#pragma omp parallel for schedule(dynamic, 1)
    for (int64_t idx = 0; idx < s->B * s->Hkv; idx++) {
        float *Pbuf = scratch + (size_t)omp_get_thread_num() * 2 * tile, *dS = Pbuf + tile;
        float D[ATTN_TILE_Q];
        int64_t kvh = idx % s->Hkv, b = idx / s->Hkv;
        for (int64_t h = kvh * s->group; h < (kvh + 1) * s->group; h++)
            for (int64_t i0 = 0; i0 < s->Tq; i0 += ATTN_TILE_Q) {
                int64_t nq = s->Tq - i0 < ATTN_TILE_Q ? s->Tq - i0 : ATTN_TILE_Q;
                const float *qi = q + attn_q_off(s, b, i0, h), *gi = dout + attn_q_off(s, b, i0, h);
                float *dqi = dq + attn_q_off(s, b, i0, h);
                for (int64_t r = 0; r < nq; r++) /* D_i = dout_i . out_i */
                    D[r] = plc_dot(gi + r * qld, out + attn_q_off(s, b, i0 + r, h), hd);
                for (int64_t j0 = 0; j0 < s->Tk; j0 += ATTN_TILE_K) {
                    if (tile_masked(s, i0 + nq - 1, j0)) break;
                    int64_t nk = s->Tk - j0 < ATTN_TILE_K ? s->Tk - j0 : ATTN_TILE_K;
                    if (s->index_causal && i0 + nq - j0 < nk) nk = i0 + nq - j0; /* the rest is masked */
                    const float *kj = k + attn_kv_off(s, b, j0, kvh), *vj = v + attn_kv_off(s, b, j0, kvh);
                    const float *P = Pbuf;
                    int64_t ldp = ATTN_TILE_K;
                    if (probs) {
                        P = probs + ((b * s->H + h) * s->Tq + i0) * s->Tk + j0;
                        ldp = s->Tk;
                    } else {
                        tile_p_from_lse(Pbuf, s, b, h, i0, nq, j0, nk, q, k, lse);
                    }
                    plc_attn_dot_tile(dS, ATTN_TILE_K, gi, qld, nq, vj, kld, nk, hd);
                    tile_ds(dS, ATTN_TILE_K, P, ldp, D, nq, nk, s->scale);
                    plc_sgemm(0, 0, nq, hd, nk, 1.0f, dS, ATTN_TILE_K, kj, kld, 1.0f, dqi, qld);
                    plc_sgemm(1, 0, nk, hd, nq, 1.0f, dS, ATTN_TILE_K, qi, qld, 1.0f,
                              dk + attn_kv_off(s, b, j0, kvh), kld);
                    plc_sgemm(1, 0, nk, hd, nq, 1.0f, P, ldp, gi, qld, 1.0f, dv + attn_kv_off(s, b, j0, kvh), kld);
                }
            }
    }
    free(scratch);
    return 0;
}
