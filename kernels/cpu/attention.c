/* kernels/cpu/attention.c: causal GQA attention, materialised form (keeps the
 * probabilities [B, H, Tq, Tk] for the backward). */
#include "kernels/kernels.h"
#include "kernels/common/reduce.h"
#include "kernels/cpu/attention_tile.h"
#include "kernels/cpu/blas.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void plc_k_attention_forward(float *out, float *probs,
                             const float *q, const float *k, const float *v,
                             const int32_t *q_pos, const int32_t *k_pos,
                             int64_t B, int64_t Tq, int64_t Tk,
                             int64_t H, int64_t Hkv, int64_t hd)
{
    attn_shape s = attn_shape_make(B, Tq, Tk, H, Hkv, hd, q_pos, k_pos);
    plc_blas_one_thread();
    int64_t qtiles = (Tq + ATTN_TILE_Q - 1) / ATTN_TILE_Q, qld = H * hd, kld = Hkv * hd;
    /* one work item per (b, h, query tile): independent outputs */
#pragma omp parallel
    {
#pragma omp for schedule(static)
        for (int64_t idx = 0; idx < B * H * qtiles; idx++) {
            int64_t qt = idx % qtiles, h = (idx / qtiles) % H, b = idx / (qtiles * H), kvh = h / s.group;
            int64_t i0 = qt * ATTN_TILE_Q, nq = Tq - i0 < ATTN_TILE_Q ? Tq - i0 : ATTN_TILE_Q;
            float *P = probs + ((b * H + h) * Tq + i0) * Tk; /* nq rows of Tk */
            /* with the standard causal positions, the keys past the tile's
             * last query are masked for every row: neither the scores nor
             * P V look at them */
            int64_t nkeys = s.index_causal && i0 + nq < Tk ? i0 + nq : Tk;
            plc_attn_dot_tile(P, Tk, q + attn_q_off(&s, b, i0, h), qld, nq, k + attn_kv_off(&s, b, 0, kvh),
                              kld, nkeys, hd);
            for (int64_t r = 0; r < nq; r++) { /* mask, scale and softmax of each row */
                int64_t i = i0 + r, nvis = s.index_causal && i + 1 < nkeys ? i + 1 : nkeys;
                float *p = P + r * Tk, max = -INFINITY;
                for (int64_t j = 0; j < nvis; j++) {
                    p[j] = attn_visible(&s, i, j) ? p[j] * s.scale : -INFINITY;
                    max = p[j] > max ? p[j] : max;
                }
                double sum = 0;
                for (int64_t j = 0; j < nvis; j++) {
                    p[j] = plc_exp_shifted(p[j], max);
                    sum += p[j];
                }
                float inv = sum > 0 ? (float)(1.0 / sum) : 0.0f; /* a row without keys stays 0 */
                for (int64_t j = 0; j < nvis; j++) p[j] *= inv;
                for (int64_t j = nvis; j < Tk; j++) p[j] = 0.0f;
                memset(out + attn_q_off(&s, b, i, h), 0, (size_t)hd * sizeof *out);
            }
            plc_attn_mul_acc(out + attn_q_off(&s, b, i0, h), qld, P, Tk, 1, nq,
                             v + attn_kv_off(&s, b, 0, kvh), kld, nkeys, hd, 1.0f);
        }
    }
}

void plc_k_attention_backward(float *dq, float *dk, float *dv, const float *dout,
                              const float *q, const float *k, const float *v,
                              const float *out, const float *probs,
                              int64_t B, int64_t Tq, int64_t Tk,
                              int64_t H, int64_t Hkv, int64_t hd)
{
    /* the mask is in probs (zeros); positions are unknown here */
    attn_shape s = attn_shape_make(B, Tq, Tk, H, Hkv, hd, NULL, NULL);
    s.index_causal = 0;
    plc_attn_backward(dq, dk, dv, dout, q, k, v, out, probs, NULL, &s);
}
