/* kernels/cpu/attention_shape.h: indexing shared by the two attention forms.
 * q/out/dout rows are [B, Tq, H, hd]; k/v rows [B, Tk, Hkv, hd]. */
#ifndef PLC_KERNELS_CPU_ATTENTION_SHAPE_H
#define PLC_KERNELS_CPU_ATTENTION_SHAPE_H

#include <math.h>
#include <stdint.h>

typedef struct attn_shape {
    int64_t B, Tq, Tk, H, Hkv, hd;
    int64_t group; /* query heads per kv head */
    float scale;   /* 1 / sqrt(hd) */
    const int32_t *q_pos, *k_pos;
    int index_causal; /* positions are the indices (both NULL): tiles above the diagonal are masked */
} attn_shape;

static inline attn_shape attn_shape_make(int64_t B, int64_t Tq, int64_t Tk, int64_t H, int64_t Hkv,
                                         int64_t hd, const int32_t *q_pos, const int32_t *k_pos)
{
    attn_shape s = {B, Tq, Tk, H, Hkv, hd, H / Hkv, (float)(1.0 / sqrt((double)hd)), q_pos, k_pos,
                    !q_pos && !k_pos};
    return s;
}

/* offset of query row (b, i, h) and of key/value row (b, j, kvh) */
static inline int64_t attn_q_off(const attn_shape *s, int64_t b, int64_t i, int64_t h)
{
    return ((b * s->Tq + i) * s->H + h) * s->hd;
}
static inline int64_t attn_kv_off(const attn_shape *s, int64_t b, int64_t j, int64_t kvh)
{
    return ((b * s->Tk + j) * s->Hkv + kvh) * s->hd;
}

/* the causal mask on absolute positions */
static inline int attn_visible(const attn_shape *s, int64_t i, int64_t j)
{
    int64_t qp = s->q_pos ? s->q_pos[i] : i;
    int64_t kp = s->k_pos ? s->k_pos[j] : j;
    return kp <= qp;
}

/* y += a x over hd elements */
static inline void attn_axpy(float *y, float a, const float *x, int64_t n)
{
    for (int64_t c = 0; c < n; c++) y[c] += a * x[c];
}

#endif
