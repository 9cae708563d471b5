/* kernels/cuda/attention_shape.cuh: indexing shared by the CUDA attention
 * kernels (the layout of kernels/kernels.h: q/out [B, Tq, H, hd], k/v
 * [B, Tk, Hkv, hd], probs [B, H, Tq, Tk], lse [B, H, Tq]). */
#ifndef PLC_KERNELS_CUDA_ATTENTION_SHAPE_CUH
#define PLC_KERNELS_CUDA_ATTENTION_SHAPE_CUH

#include <math.h>
#include <stdint.h>

struct attn_dims {
    int64_t B, Tq, Tk, H, Hkv, hd, group;
    float scale;
    const int32_t *q_pos, *k_pos;
};

static inline attn_dims attn_dims_make(int64_t B, int64_t Tq, int64_t Tk, int64_t H, int64_t Hkv, int64_t hd,
                                       const int32_t *q_pos, const int32_t *k_pos)
{
    attn_dims d = {B, Tq, Tk, H, Hkv, hd, H / Hkv, (float)(1.0 / sqrt((double)hd)), q_pos, k_pos};
    return d;
}

__device__ __forceinline__ int64_t attn_q_off(const attn_dims &s, int64_t b, int64_t i, int64_t h)
{
    return ((b * s.Tq + i) * s.H + h) * s.hd;
}
__device__ __forceinline__ int64_t attn_kv_off(const attn_dims &s, int64_t b, int64_t j, int64_t kvh)
{
    return ((b * s.Tk + j) * s.Hkv + kvh) * s.hd;
}
__device__ __forceinline__ bool attn_visible(const attn_dims &s, int64_t i, int64_t j)
{
    int64_t qp = s.q_pos ? s.q_pos[i] : i, kp = s.k_pos ? s.k_pos[j] : j;
    return kp <= qp;
}
/* Standard causal positions let a whole tile of keys from j0 on be skipped
 * for queries up to i_last. */
__device__ __forceinline__ bool tile_all_masked(const attn_dims &s, int64_t i_last, int64_t j0)
{
    return !s.q_pos && !s.k_pos && j0 > i_last;
}

#endif
