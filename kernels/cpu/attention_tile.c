/* kernels/cpu/attention_tile.c: tile operations and the shared backward of
 * the CPU attention kernels (see attention_tile.h). */
#include "kernels/cpu/attention_tile.h"
#include "kernels/common/reduce.h"
#include "kernels/cpu/blas.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The tile products are single-threaded OpenBLAS calls (kernels/cpu/blas.h):
 * the OpenMP threads of the callers take whole tiles, so every product is
 * the same call whatever the thread count. */

void plc_attn_dot_tile(float *S, int64_t lds, const float *A, int64_t lda, int64_t m,
                       const float *B, int64_t ldb, int64_t n, int64_t hd)
{
    if (m == 0 || n == 0) return;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)m, (int)n, (int)hd, 1.0f, A, (int)lda, B,
                (int)ldb, 0.0f, S, (int)lds);
}

void plc_attn_mul_acc(float *Y, int64_t ldy, const float *W, int64_t wsi, int64_t wsj, int64_t m,
                      const float *X, int64_t ldx, int64_t n, int64_t hd, float alpha)
{
    if (m == 0 || n == 0) return;
    int tw = wsj != 1; /* W(i, j) = W[j * wsj + i]: W stored transposed */
    cblas_sgemm(CblasRowMajor, tw ? CblasTrans : CblasNoTrans, CblasNoTrans, (int)m, (int)hd, (int)n, alpha,
                W, (int)(tw ? wsj : wsi), X, (int)ldx, 1.0f, Y, (int)ldy);
}

float *plc_attn_scratch(int64_t n)
{
    float *p = malloc((size_t)(n > 0 ? n : 1) * sizeof *p);
    if (!p) {
        fprintf(stderr, "plrun: out of memory for attention tiles\n");
        exit(1);
    }
    return p;
}

/* For a (query tile, key tile) of one head: P (from probs or lse) and
 * dS = P (dP - D), dP = dout . v. Rows i0.., keys j0... Masked pairs get 0. */
static void tile_p_ds(float *P, float *dS, const attn_shape *s, int64_t b, int64_t h,
                      int64_t i0, int64_t nq, int64_t j0, int64_t nk, const float *q, const float *k,
                      const float *v, const float *dout, const float *probs, const float *lse,
                      const float *D)
{
    int64_t kvh = h / s->group, qld = s->H * s->hd, kld = s->Hkv * s->hd;
    const float *qrow = q + attn_q_off(s, b, i0, h), *grow = dout + attn_q_off(s, b, i0, h);
    const float *krow = k + attn_kv_off(s, b, j0, kvh), *vrow = v + attn_kv_off(s, b, j0, kvh);
    if (probs) {
        for (int64_t r = 0; r < nq; r++)
            memcpy(P + r * ATTN_TILE_K, probs + ((b * s->H + h) * s->Tq + i0 + r) * s->Tk + j0,
                   (size_t)nk * sizeof *P);
    } else {
        plc_attn_dot_tile(P, ATTN_TILE_K, qrow, qld, nq, krow, kld, nk, s->hd);
        for (int64_t r = 0; r < nq; r++) {
            float L = lse[(b * s->H + h) * s->Tq + i0 + r];
            for (int64_t c = 0; c < nk; c++) {
                float *p = &P[r * ATTN_TILE_K + c];
                *p = (L == -INFINITY || !attn_visible(s, i0 + r, j0 + c)) ? 0.0f : expf(*p * s->scale - L);
            }
        }
    }
    plc_attn_dot_tile(dS, ATTN_TILE_K, grow, qld, nq, vrow, kld, nk, s->hd);
    for (int64_t r = 0; r < nq; r++)
        for (int64_t c = 0; c < nk; c++) {
            float p = P[r * ATTN_TILE_K + c];
            dS[r * ATTN_TILE_K + c] = p == 0.0f ? 0.0f : p * (dS[r * ATTN_TILE_K + c] - D[r]);
        }
}

/* D_i = dout_i . out_i for a query tile */
static void tile_D(float *D, const attn_shape *s, int64_t b, int64_t h, int64_t i0, int64_t nq,
                   const float *dout, const float *out)
{
    for (int64_t r = 0; r < nq; r++)
        D[r] = plc_dot(dout + attn_q_off(s, b, i0 + r, h), out + attn_q_off(s, b, i0 + r, h), s->hd);
}

/* Standard causal positions let tiles above the diagonal be skipped. */
static int tile_masked(const attn_shape *s, int64_t i_last, int64_t j0)
{
    return s->index_causal && j0 > i_last;
}

void plc_attn_backward(float *dq, float *dk, float *dv, const float *dout,
                       const float *q, const float *k, const float *v, const float *out,
                       const float *probs, const float *lse, const attn_shape *s)
{
    int64_t hd = s->hd, qld = s->H * hd, kld = s->Hkv * hd;
    plc_blas_one_thread();
    int64_t qtiles = (s->Tq + ATTN_TILE_Q - 1) / ATTN_TILE_Q, ktiles = (s->Tk + ATTN_TILE_K - 1) / ATTN_TILE_K;
    /* pass 1: dq, one work item per (b, h, query tile), key tiles in order */
#pragma omp parallel
    {
        float *P = plc_attn_scratch(ATTN_TILE_Q * ATTN_TILE_K), *dS = plc_attn_scratch(ATTN_TILE_Q * ATTN_TILE_K);
        float D[ATTN_TILE_Q];
#pragma omp for schedule(static)
        for (int64_t idx = 0; idx < s->B * s->H * qtiles; idx++) {
            int64_t qt = idx % qtiles, h = (idx / qtiles) % s->H, b = idx / (qtiles * s->H);
            int64_t i0 = qt * ATTN_TILE_Q, nq = s->Tq - i0 < ATTN_TILE_Q ? s->Tq - i0 : ATTN_TILE_Q;
            tile_D(D, s, b, h, i0, nq, dout, out);
            for (int64_t j0 = 0; j0 < s->Tk; j0 += ATTN_TILE_K) {
                if (tile_masked(s, i0 + nq - 1, j0)) break;
                int64_t nk = s->Tk - j0 < ATTN_TILE_K ? s->Tk - j0 : ATTN_TILE_K;
                tile_p_ds(P, dS, s, b, h, i0, nq, j0, nk, q, k, v, dout, probs, lse, D);
                plc_attn_mul_acc(dq + attn_q_off(s, b, i0, h), qld, dS, ATTN_TILE_K, 1, nq,
                                 k + attn_kv_off(s, b, j0, h / s->group), kld, nk, hd, s->scale);
            }
        }
        free(P), free(dS);
    }
    /* pass 2: dk and dv, one work item per (b, kv head, key tile); the
     * group's heads and the query tiles add in order */
#pragma omp parallel
    {
        float *P = plc_attn_scratch(ATTN_TILE_Q * ATTN_TILE_K), *dS = plc_attn_scratch(ATTN_TILE_Q * ATTN_TILE_K);
        float D[ATTN_TILE_Q];
#pragma omp for schedule(static)
        for (int64_t idx = 0; idx < s->B * s->Hkv * ktiles; idx++) {
            int64_t kt = idx % ktiles, kvh = (idx / ktiles) % s->Hkv, b = idx / (ktiles * s->Hkv);
            int64_t j0 = kt * ATTN_TILE_K, nk = s->Tk - j0 < ATTN_TILE_K ? s->Tk - j0 : ATTN_TILE_K;
            for (int64_t h = kvh * s->group; h < (kvh + 1) * s->group; h++)
                for (int64_t i0 = 0; i0 < s->Tq; i0 += ATTN_TILE_Q) {
                    int64_t nq = s->Tq - i0 < ATTN_TILE_Q ? s->Tq - i0 : ATTN_TILE_Q;
                    if (tile_masked(s, i0 + nq - 1, j0)) continue;
                    tile_D(D, s, b, h, i0, nq, dout, out);
                    tile_p_ds(P, dS, s, b, h, i0, nq, j0, nk, q, k, v, dout, probs, lse, D);
                    /* dv_j += sum_i P_ij dout_i; dk_j += scale sum_i dS_ij q_i (W transposed) */
                    plc_attn_mul_acc(dv + attn_kv_off(s, b, j0, kvh), kld, P, 1, ATTN_TILE_K, nk,
                                     dout + attn_q_off(s, b, i0, h), qld, nq, hd, 1.0f);
                    plc_attn_mul_acc(dk + attn_kv_off(s, b, j0, kvh), kld, dS, 1, ATTN_TILE_K, nk,
                                     q + attn_q_off(s, b, i0, h), qld, nq, hd, s->scale);
                }
        }
        free(P), free(dS);
    }
}
