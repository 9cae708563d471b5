/* kernels/cpu/attention_kernel.c: the CPU attention kernels of kernels.h.
 * plc_k_attention_forward picks the form (attention.c keeps the
 * probabilities, flash_attention.c the log-sum-exp); plc_k_attention_backward
 * is the backward both forms share, built from attention_tile.c's tile
 * operations. The files below this one call nothing in it. */
#include "kernels/cpu/attention_tile.h"
#include "kernels/kernels.h"
#include "kernels/common/reduce.h"
#include "kernels/cpu/blas.h"
#include "kernels/cpu/simd.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>

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

/* One work item per (b, kv head). For each key tile j, its keys K_j and
 * V_j^T are packed once; then for each head of the group and each query
 * tile i, with its queries and output gradients packed,
 *   dP = dout_i V_j^T,  dS = P (dP - D) scale,  dq_i += dS K_j,
 * by blocks of plc_sgemm_row_block() query rows over the keys each block
 * sees, and by blocks of as many keys over the queries that see them,
 *   dk_j += dS^T q_i,  dv_j += P^T dout_i.
 * dk and dv of the kv head add the group's heads and query tiles in order;
 * dq's rows add the key tiles in order; no two items write the same row.
 * The keys a block skips are masked (P = dS = 0): skipped, they would add
 * exact zeros. */
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
    const int64_t qld = s->H * hd, kld = s->Hkv * hd, tile = ATTN_TILE_Q * ATTN_TILE_K, rb = plc_sgemm_row_block();
    const int64_t k_len = plc_sgemm_packed_len(ATTN_TILE_K, hd), vt_len = plc_sgemm_packed_len(hd, ATTN_TILE_K);
    const int64_t q_len = plc_sgemm_packed_len(ATTN_TILE_Q, hd);
    const int64_t per_thread = (k_len + vt_len + 2 * q_len + 2 * tile + s->group * Tq + 15) / 16 * 16;
    plc_blas_one_thread();
    float *scratch = plc_sgemm_scratch(omp_get_max_threads() * per_thread);
    if (!scratch) return -1;
#pragma omp parallel for schedule(dynamic, 1)
    for (int64_t idx = 0; idx < s->B * s->Hkv; idx++) {
        float *Kp = scratch + (size_t)omp_get_thread_num() * per_thread, *Vt = Kp + k_len, *Qp = Vt + vt_len;
        float *Gp = Qp + q_len, *Pbuf = Gp + q_len, *dS = Pbuf + tile, *D = dS + tile;
        const int64_t kvh = idx % s->Hkv, b = idx / s->Hkv, h0 = kvh * s->group;
        for (int64_t h = h0; h < h0 + s->group; h++) /* D_i = dout_i . out_i */
            for (int64_t i = 0; i < Tq; i++)
                D[(h - h0) * Tq + i] = plc_dot(dout + attn_q_off(s, b, i, h), out + attn_q_off(s, b, i, h), hd);
        for (int64_t j0 = 0; j0 < Tk; j0 += ATTN_TILE_K) {
            const int64_t nkt = Tk - j0 < ATTN_TILE_K ? Tk - j0 : ATTN_TILE_K;
            const float *kj = k + attn_kv_off(s, b, j0, kvh), *vj = v + attn_kv_off(s, b, j0, kvh);
            float *dkj = dk + attn_kv_off(s, b, j0, kvh), *dvj = dv + attn_kv_off(s, b, j0, kvh);
            plc_sgemm_pack(Kp, 0, kj, kld, nkt, hd);
            plc_sgemm_pack(Vt, 1, vj, kld, hd, nkt);
            for (int64_t h = h0; h < h0 + s->group; h++)
                for (int64_t i0 = 0; i0 < Tq; i0 += ATTN_TILE_Q) {
                    int64_t nq = Tq - i0 < ATTN_TILE_Q ? Tq - i0 : ATTN_TILE_Q, nk = nkt;
                    if (tile_masked(s, i0 + nq - 1, j0)) continue;
                    if (s->index_causal && i0 + nq - j0 < nk) nk = i0 + nq - j0; /* the rest is masked */
                    const float *qi = q + attn_q_off(s, b, i0, h), *gi = dout + attn_q_off(s, b, i0, h);
                    float *dqi = dq + attn_q_off(s, b, i0, h);
                    const float *P = Pbuf, *Di = D + (h - h0) * Tq + i0;
                    int64_t ldp = ATTN_TILE_K;
                    if (probs) {
                        P = probs + ((b * s->H + h) * Tq + i0) * Tk + j0;
                        ldp = Tk;
                    } else {
                        tile_p_from_lse(Pbuf, s, b, h, i0, nq, j0, nk, q, k, lse);
                    }
                    plc_sgemm_pack(Qp, 0, qi, qld, nq, hd);
                    plc_sgemm_pack(Gp, 0, gi, qld, nq, hd);
                    for (int64_t r0 = 0; r0 < nq; r0 += rb) { /* rows: dS and dq over the keys they see */
                        int64_t nr = nq - r0 < rb ? nq - r0 : rb;
                        int64_t kv = s->index_causal && i0 + r0 + nr - j0 < nk ? i0 + r0 + nr - j0 : nk;
                        if (kv <= 0) continue;
                        float *dSr = dS + r0 * ATTN_TILE_K;
                        plc_sgemm_packed(0, nr, kv, 0, hd, gi + r0 * qld, qld, Vt, hd, nkt, 0.0f, dSr, ATTN_TILE_K);
                        tile_ds(dSr, ATTN_TILE_K, P + r0 * ldp, ldp, Di + r0, nr, kv, s->scale);
                        plc_sgemm_packed(0, nr, hd, 0, kv, dSr, ATTN_TILE_K, Kp, nkt, hd, 1.0f, dqi + r0 * qld, qld);
                    }
                    for (int64_t c0 = 0; c0 < nk; c0 += rb) { /* keys: dk and dv over the queries that see them */
                        int64_t nc = nk - c0 < rb ? nk - c0 : rb;
                        int64_t qs = s->index_causal && j0 + c0 > i0 ? j0 + c0 - i0 : 0;
                        if (qs >= nq) continue;
                        plc_sgemm_packed(1, nc, hd, qs, nq, dS + qs * ATTN_TILE_K + c0, ATTN_TILE_K, Qp, nq, hd, 1.0f,
                                         dkj + c0 * kld, kld);
                        plc_sgemm_packed(1, nc, hd, qs, nq, P + qs * ldp + c0, ldp, Gp, nq, hd, 1.0f, dvj + c0 * kld,
                                         kld);
                    }
                }
        }
    }
    free(scratch);
    return 0;
}
