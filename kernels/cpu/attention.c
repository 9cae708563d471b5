/* kernels/cpu/attention.c: causal GQA attention, materialised form (keeps the
 * probabilities [B, H, Tq, Tk] for the backward, plc_k_attention_backward in
 * attention_kernel.c).
 *
 * A work item is one (b, kv head). Its keys (K^T) and values are packed
 * once (plc_sgemm_pack), then each block of plc_sgemm_row_block() query
 * rows of each head of the group takes its scores against the keys it can
 * see, their softmax, and its P V over those keys only: with the standard
 * causal positions a block computes nothing above the diagonal but the
 * rest of its last block of keys. */
#include "kernels/cpu/attention_tile.h"
#include "kernels/cpu/blas.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

int plc_attn_forward_probs(float *out, float *probs, const float *q, const float *k, const float *v,
                           const attn_shape *shape)
{
    const attn_shape s = *shape;
    const int64_t Tq = s.Tq, Tk = s.Tk, H = s.H, hd = s.hd, qld = H * hd, kld = s.Hkv * hd;
    const int64_t kt_len = plc_sgemm_packed_len(hd, Tk), v_len = plc_sgemm_packed_len(Tk, hd);
    const int64_t rb = plc_sgemm_row_block();
    float *scratch = plc_sgemm_scratch(omp_get_max_threads() * (kt_len + v_len));
    if (!scratch) return -1;
    /* with the standard causal positions no query sees a key past Tq */
    const int64_t nkeys = s.index_causal && Tq < Tk ? Tq : Tk;
#pragma omp parallel for schedule(dynamic, 1)
    for (int64_t idx = 0; idx < s.B * s.Hkv; idx++) {
        float *Kt = scratch + (size_t)omp_get_thread_num() * (kt_len + v_len), *Vp = Kt + kt_len;
        const int64_t b = idx / s.Hkv, kvh = idx % s.Hkv;
        plc_sgemm_pack(Kt, 1, k + attn_kv_off(&s, b, 0, kvh), kld, hd, nkeys);
        plc_sgemm_pack(Vp, 0, v + attn_kv_off(&s, b, 0, kvh), kld, nkeys, hd);
        for (int64_t h = kvh * s.group; h < (kvh + 1) * s.group; h++)
            for (int64_t r0 = 0; r0 < Tq; r0 += rb) {
                int64_t nr = Tq - r0 < rb ? Tq - r0 : rb;
                int64_t nk = s.index_causal && r0 + nr < nkeys ? r0 + nr : nkeys; /* keys the block sees */
                float *Pr = probs + ((b * H + h) * Tq + r0) * Tk;
                plc_sgemm_packed(0, nr, nk, 0, hd, q + attn_q_off(&s, b, r0, h), qld, Kt, hd, nkeys, 0.0f, Pr, Tk);
                /* each row's softmax runs over whole vectors: the keys past
                 * the row's last visible one, up to a multiple of 16, are
                 * masked (-inf: exp gives 0, the sums do not change) */
                const int64_t npad = (nk + 15) / 16 * 16 < Tk ? (nk + 15) / 16 * 16 : Tk;
                for (int64_t r = 0; r < nr; r++) { /* mask, scale and softmax of each row */
                    int64_t i = r0 + r, nvis = s.index_causal && i + 1 < nk ? i + 1 : nk;
                    float *p = Pr + r * Tk;
                    if (!s.index_causal)
                        for (int64_t j = 0; j < nvis; j++) p[j] = attn_visible(&s, i, j) ? p[j] : -INFINITY;
                    for (int64_t j = nvis; j < npad; j++) p[j] = -INFINITY;
                    plc_attn_softmax_row(p, npad, s.scale);
                    /* with the standard causal positions the backward
                     * reads no key past the block's: the rest is left */
                    if (!s.index_causal) memset(p + npad, 0, (size_t)(Tk - npad) * sizeof *p);
                }
                plc_sgemm_packed(0, nr, hd, 0, nk, Pr, Tk, Vp, nkeys, hd, 0.0f, out + attn_q_off(&s, b, r0, h), qld);
            }
    }
    free(scratch);
    return 0;
}
