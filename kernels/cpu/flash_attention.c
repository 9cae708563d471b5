/* kernels/cpu/flash_attention.c: causal GQA attention, tiled flash-style.
 * The forward walks key tiles with an online softmax and keeps only the
 * log-sum-exp per query; the backward (plc_k_attention_backward,
 * attention_kernel.c) recomputes the probabilities from it. */
#include "kernels/common/reduce.h"
#include "kernels/cpu/attention_tile.h"
#include "kernels/cpu/blas.h"

#include <omp.h>
#include <stdlib.h>
#include <string.h>

int plc_attn_forward_lse(float *out, float *lse, const float *q, const float *k, const float *v,
                         const attn_shape *shape)
{
    const attn_shape s = *shape;
    const int64_t Tq = s.Tq, Tk = s.Tk, H = s.H, hd = s.hd, qld = H * hd, kld = s.Hkv * hd;
    const int64_t per_thread = ATTN_TILE_Q * ATTN_TILE_K + ATTN_TILE_Q * hd;
    float *scratch = malloc((size_t)(omp_get_max_threads() * per_thread) * sizeof *scratch);
    if (!scratch) return -1;
#pragma omp parallel
    {
        float *S = scratch + omp_get_thread_num() * per_thread;
        float *acc = S + ATTN_TILE_Q * ATTN_TILE_K, m[ATTN_TILE_Q], l[ATTN_TILE_Q];
#pragma omp for schedule(dynamic, 1)
        for (int64_t idx = 0; idx < attn_items(&s); idx++) {
            attn_item it = attn_item_at(&s, idx);
            int64_t b = it.b, h = it.h, kvh = it.kvh, i0 = it.i0, nq = it.nq;
            memset(acc, 0, (size_t)(nq * hd) * sizeof *acc);
            for (int64_t r = 0; r < nq; r++) m[r] = -INFINITY, l[r] = 0.0f;
            for (int64_t j0 = 0; j0 < Tk; j0 += ATTN_TILE_K) {
                if (s.index_causal && j0 > i0 + nq - 1) break;
                int64_t nk = Tk - j0 < ATTN_TILE_K ? Tk - j0 : ATTN_TILE_K;
                plc_attn_dot_tile(S, ATTN_TILE_K, q + attn_q_off(&s, b, i0, h), qld, nq,
                                  k + attn_kv_off(&s, b, j0, kvh), kld, nk, hd);
                for (int64_t r = 0; r < nq; r++) { /* online softmax of the row */
                    float *row = S + r * ATTN_TILE_K, tmax = -INFINITY;
                    for (int64_t c = 0; c < nk; c++) {
                        row[c] = attn_visible(&s, i0 + r, j0 + c) ? row[c] * s.scale : -INFINITY;
                        tmax = fmaxf(tmax, row[c]);
                    }
                    if (tmax == -INFINITY) { /* the tile is masked for this query */
                        for (int64_t c = 0; c < nk; c++) row[c] = 0.0f;
                        continue;
                    }
                    float mnew = fmaxf(m[r], tmax), corr = plc_online_rescale(m[r], mnew);
                    if (corr != 1.0f) {
                        l[r] *= corr;
                        for (int64_t d = 0; d < hd; d++) acc[r * hd + d] *= corr;
                    }
                    for (int64_t c = 0; c < nk; c++) {
                        row[c] = plc_exp_shifted(row[c], mnew);
                        l[r] += row[c];
                    }
                    m[r] = mnew;
                }
                plc_attn_mul_acc(acc, hd, S, ATTN_TILE_K, 1, nq, v + attn_kv_off(&s, b, j0, kvh), kld, nk, hd, 1.0f);
            }
            for (int64_t r = 0; r < nq; r++) {
                float *oi = out + attn_q_off(&s, b, i0 + r, h);
                float *L = &lse[(b * H + h) * Tq + i0 + r];
                if (l[r] == 0.0f) { /* no visible key */
                    memset(oi, 0, (size_t)hd * sizeof *oi);
                    *L = -INFINITY;
                    continue;
                }
                float inv = 1.0f / l[r];
                for (int64_t d = 0; d < hd; d++) oi[d] = acc[r * hd + d] * inv;
                *L = m[r] + logf(l[r]);
            }
        }
    }
    free(scratch);
    return 0;
}
