/* kernels/cpu/attention_tile.c: tile operations and the shared backward of
 * the CPU attention kernels (see attention_tile.h). */
#include "kernels/cpu/attention_tile.h"
#include "kernels/common/reduce.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* AVX2 without FMA: the same IEEE operations in the same order as the
 * baseline build, so both clones give identical bits. The inner loops are
 * element-wise (no reduction), so `omp simd` does not reassociate; it only
 * lifts GCC's -O2 cost model, which refuses loops of unknown trip count. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(PLC_NO_TILE_CLONES)
#define PLC_TILE_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define PLC_TILE_CLONES
#endif

/* Register blocking: TB_R rows by TB_C columns of the output stay in
 * registers while the reduction dimension streams past. Blocking changes
 * which elements are computed together, never the order of any element's
 * sum, so the bits are those of the plain loops. */
#define TB_R 4
#define TB_C 16

PLC_TILE_CLONES
void plc_attn_dot_tile(float *S, int64_t lds, const float *A, int64_t lda, int64_t m,
                       const float *B, int64_t ldb, int64_t n, int64_t hd, float *Bt)
{
    int64_t np = (n + TB_C - 1) / TB_C * TB_C; /* Bt columns, zero padded */
    for (int64_t j = 0; j < np; j++) /* read B along its rows */
        for (int64_t d = 0; d < hd; d++) Bt[d * np + j] = j < n ? B[j * ldb + d] : 0.0f;
    for (int64_t i0 = 0; i0 < m; i0 += TB_R) {
        const float *a[TB_R];
        for (int r = 0; r < TB_R; r++) a[r] = A + (i0 + r < m ? i0 + r : i0) * lda; /* spare rows: discarded */
        for (int64_t j0 = 0; j0 < np; j0 += TB_C) {
            float acc[TB_R][TB_C] = {{0}};
            for (int64_t d = 0; d < hd; d++) {
                const float *b = Bt + d * np + j0;
#pragma GCC unroll 4
                for (int r = 0; r < TB_R; r++) {
                    const float ar = a[r][d];
#pragma omp simd
                    for (int c = 0; c < TB_C; c++) acc[r][c] += ar * b[c];
                }
            }
            for (int r = 0; r < TB_R && i0 + r < m; r++)
                for (int c = 0; c < TB_C && j0 + c < n; c++) S[(i0 + r) * lds + j0 + c] = acc[r][c];
        }
    }
}

PLC_TILE_CLONES
void plc_attn_mul_acc(float *Y, int64_t ldy, const float *W, int64_t wsi, int64_t wsj, int64_t m,
                      const float *X, int64_t ldx, int64_t n, int64_t hd, float alpha)
{
    int64_t hd_blocked = hd / TB_C * TB_C;
    for (int64_t i0 = 0; i0 < m; i0 += TB_R) {
        int nr = m - i0 < TB_R ? (int)(m - i0) : TB_R;
        for (int64_t d0 = 0; d0 < hd_blocked; d0 += TB_C) {
            float acc[TB_R][TB_C];
            for (int r = 0; r < TB_R; r++)
                for (int c = 0; c < TB_C; c++) acc[r][c] = r < nr ? Y[(i0 + r) * ldy + d0 + c] : 0.0f;
            for (int64_t j = 0; j < n; j++) {
                const float *x = X + j * ldx + d0;
                float w[TB_R];
                for (int r = 0; r < TB_R; r++) w[r] = r < nr ? W[(i0 + r) * wsi + j * wsj] * alpha : 0.0f;
#pragma GCC unroll 4
                for (int r = 0; r < TB_R; r++) {
                    const float wr = w[r];
#pragma omp simd
                    for (int c = 0; c < TB_C; c++) acc[r][c] += wr * x[c];
                }
            }
            for (int r = 0; r < nr; r++)
                for (int c = 0; c < TB_C; c++) Y[(i0 + r) * ldy + d0 + c] = acc[r][c];
        }
        for (int r = 0; r < nr; r++) /* the columns past the last full block */
            for (int64_t j = 0; j < n; j++) {
                float w = W[(i0 + r) * wsi + j * wsj] * alpha;
                float *restrict y = Y + (i0 + r) * ldy;
                const float *restrict x = X + j * ldx;
                for (int64_t d = hd_blocked; d < hd; d++) y[d] += w * x[d];
            }
    }
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
static void tile_p_ds(float *P, float *dS, float *Bt, const attn_shape *s, int64_t b, int64_t h,
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
        plc_attn_dot_tile(P, ATTN_TILE_K, qrow, qld, nq, krow, kld, nk, s->hd, Bt);
        for (int64_t r = 0; r < nq; r++) {
            float L = lse[(b * s->H + h) * s->Tq + i0 + r];
            for (int64_t c = 0; c < nk; c++) {
                float *p = &P[r * ATTN_TILE_K + c];
                *p = (L == -INFINITY || !attn_visible(s, i0 + r, j0 + c)) ? 0.0f : expf(*p * s->scale - L);
            }
        }
    }
    plc_attn_dot_tile(dS, ATTN_TILE_K, grow, qld, nq, vrow, kld, nk, s->hd, Bt);
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
    int64_t qtiles = (s->Tq + ATTN_TILE_Q - 1) / ATTN_TILE_Q, ktiles = (s->Tk + ATTN_TILE_K - 1) / ATTN_TILE_K;
    /* pass 1: dq, one work item per (b, h, query tile), key tiles in order */
#pragma omp parallel
    {
        float *P = plc_attn_scratch(ATTN_TILE_Q * ATTN_TILE_K), *dS = plc_attn_scratch(ATTN_TILE_Q * ATTN_TILE_K);
        float *Bt = plc_attn_scratch(hd * ATTN_TILE_K), D[ATTN_TILE_Q];
#pragma omp for schedule(static)
        for (int64_t idx = 0; idx < s->B * s->H * qtiles; idx++) {
            int64_t qt = idx % qtiles, h = (idx / qtiles) % s->H, b = idx / (qtiles * s->H);
            int64_t i0 = qt * ATTN_TILE_Q, nq = s->Tq - i0 < ATTN_TILE_Q ? s->Tq - i0 : ATTN_TILE_Q;
            tile_D(D, s, b, h, i0, nq, dout, out);
            for (int64_t j0 = 0; j0 < s->Tk; j0 += ATTN_TILE_K) {
                if (tile_masked(s, i0 + nq - 1, j0)) break;
                int64_t nk = s->Tk - j0 < ATTN_TILE_K ? s->Tk - j0 : ATTN_TILE_K;
                tile_p_ds(P, dS, Bt, s, b, h, i0, nq, j0, nk, q, k, v, dout, probs, lse, D);
                plc_attn_mul_acc(dq + attn_q_off(s, b, i0, h), qld, dS, ATTN_TILE_K, 1, nq,
                                 k + attn_kv_off(s, b, j0, h / s->group), kld, nk, hd, s->scale);
            }
        }
        free(P), free(dS), free(Bt);
    }
    /* pass 2: dk and dv, one work item per (b, kv head, key tile); the
     * group's heads and the query tiles add in order */
#pragma omp parallel
    {
        float *P = plc_attn_scratch(ATTN_TILE_Q * ATTN_TILE_K), *dS = plc_attn_scratch(ATTN_TILE_Q * ATTN_TILE_K);
        float *Bt = plc_attn_scratch(hd * ATTN_TILE_K), D[ATTN_TILE_Q];
#pragma omp for schedule(static)
        for (int64_t idx = 0; idx < s->B * s->Hkv * ktiles; idx++) {
            int64_t kt = idx % ktiles, kvh = (idx / ktiles) % s->Hkv, b = idx / (ktiles * s->Hkv);
            int64_t j0 = kt * ATTN_TILE_K, nk = s->Tk - j0 < ATTN_TILE_K ? s->Tk - j0 : ATTN_TILE_K;
            for (int64_t h = kvh * s->group; h < (kvh + 1) * s->group; h++)
                for (int64_t i0 = 0; i0 < s->Tq; i0 += ATTN_TILE_Q) {
                    int64_t nq = s->Tq - i0 < ATTN_TILE_Q ? s->Tq - i0 : ATTN_TILE_Q;
                    if (tile_masked(s, i0 + nq - 1, j0)) continue;
                    tile_D(D, s, b, h, i0, nq, dout, out);
                    tile_p_ds(P, dS, Bt, s, b, h, i0, nq, j0, nk, q, k, v, dout, probs, lse, D);
                    /* dv_j += sum_i P_ij dout_i; dk_j += scale sum_i dS_ij q_i (W transposed) */
                    plc_attn_mul_acc(dv + attn_kv_off(s, b, j0, kvh), kld, P, 1, ATTN_TILE_K, nk,
                                     dout + attn_q_off(s, b, i0, h), qld, nq, hd, 1.0f);
                    plc_attn_mul_acc(dk + attn_kv_off(s, b, j0, kvh), kld, dS, 1, ATTN_TILE_K, nk,
                                     q + attn_q_off(s, b, i0, h), qld, nq, hd, s->scale);
                }
        }
        free(P), free(dS), free(Bt);
    }
}
