/* kernels/cpu/attention.c: causal GQA attention, materialised form (keeps the
 * probabilities [B, H, Tq, Tk] for the backward, plc_k_attention_backward in
 * attention_tile.c). */
#include "kernels/cpu/attention_tile.h"
#include "kernels/cpu/blas.h"

#include <math.h>
#include <string.h>

int plc_attn_forward_probs(float *out, float *probs, const float *q, const float *k, const float *v,
                           const attn_shape *shape)
{
    const attn_shape s = *shape;
    const int64_t Tq = s.Tq, Tk = s.Tk, H = s.H, hd = s.hd, qld = H * hd, kld = s.Hkv * hd;
    /* dynamic: the causal tiles differ in work */
#pragma omp parallel for schedule(dynamic, 1)
    for (int64_t idx = 0; idx < attn_items(&s); idx++) {
        attn_item it = attn_item_at(&s, idx);
        int64_t b = it.b, h = it.h, kvh = it.kvh, i0 = it.i0, nq = it.nq;
        float *P = probs + ((b * H + h) * Tq + i0) * Tk; /* nq rows of Tk */
        /* with the standard causal positions, the keys past the tile's
         * last query are masked for every row: neither the scores nor
         * P V look at them */
        int64_t nkeys = s.index_causal && i0 + nq < Tk ? i0 + nq : Tk;
        plc_attn_dot_tile(P, Tk, q + attn_q_off(&s, b, i0, h), qld, nq, k + attn_kv_off(&s, b, 0, kvh), kld,
                          nkeys, hd);
        for (int64_t r = 0; r < nq; r++) { /* mask, scale and softmax of each row */
            int64_t i = i0 + r, nvis = s.index_causal && i + 1 < nkeys ? i + 1 : nkeys;
            float *p = P + r * Tk;
            if (!s.index_causal)
                for (int64_t j = 0; j < nvis; j++) p[j] = attn_visible(&s, i, j) ? p[j] : -INFINITY;
            plc_attn_softmax_row(p, nvis, s.scale);
            memset(p + nvis, 0, (size_t)(Tk - nvis) * sizeof *p);
        }
        plc_sgemm(0, 0, nq, hd, nkeys, 1.0f, P, Tk, v + attn_kv_off(&s, b, 0, kvh), kld, 0.0f,
                  out + attn_q_off(&s, b, i0, h), qld);
    }
    return 0;
}
