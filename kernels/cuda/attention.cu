/* kernels/cuda/attention.cu: causal GQA attention, materialised form.
 * Forward: one block per query row. Backward, in order on the stream:
 * dv (needs the probabilities), then the score gradients written over the
 * probabilities together with dq, then dk. Every sum runs in a fixed order. */
#include "kernels/common/reduce.h"
#include "kernels/cuda/attention_shape.cuh"
#include "kernels/cuda/cuda_common.cuh"

template <typename T>
__global__ void attn_fwd_k(T *out, float *probs, const T *q, const T *k, const T *v, attn_dims s)
{
    extern __shared__ float qs[]; /* hd */
    __shared__ float scratch[PLC_ROW_THREADS];
    for (int64_t row = blockIdx.x; row < s.B * s.H * s.Tq; row += gridDim.x) {
        int64_t i = row % s.Tq, h = (row / s.Tq) % s.H, b = row / (s.Tq * s.H), kvh = h / s.group;
        float *p = probs + row * s.Tk;
        for (int64_t d = threadIdx.x; d < s.hd; d += blockDim.x) qs[d] = plc_ld(&q[attn_q_off(s, b, i, h) + d]);
        __syncthreads();
        float mx = -INFINITY;
        for (int64_t j = threadIdx.x; j < s.Tk; j += blockDim.x) {
            float sc = -INFINITY;
            if (attn_visible(s, i, j)) {
                const T *kj = k + attn_kv_off(s, b, j, kvh);
                float dot = 0;
                for (int64_t d = 0; d < s.hd; d++) dot += qs[d] * plc_ld(&kj[d]);
                sc = dot * s.scale;
            }
            p[j] = sc;
            mx = fmaxf(mx, sc);
        }
        mx = plc_block_max(mx, scratch);
        float sum = 0;
        for (int64_t j = threadIdx.x; j < s.Tk; j += blockDim.x) {
            p[j] = plc_exp_shifted(p[j], mx);
            sum += p[j];
        }
        sum = plc_block_sum(sum, scratch);
        float inv = sum > 0 ? 1.0f / sum : 0.0f;
        for (int64_t j = threadIdx.x; j < s.Tk; j += blockDim.x) p[j] *= inv;
        __syncthreads();
        for (int64_t d = threadIdx.x; d < s.hd; d += blockDim.x) {
            float acc = 0;
            for (int64_t j = 0; j < s.Tk; j++)
                if (p[j] != 0.0f) acc += p[j] * plc_ld(&v[attn_kv_off(s, b, j, kvh) + d]);
            plc_st(&out[attn_q_off(s, b, i, h) + d], acc);
        }
        __syncthreads();
    }
}

/* dv[b, j, kvh, d] += sum over heads of the group and queries of P * dout */
template <typename T> __global__ void attn_bwd_dv_k(T *dv, const T *dout, const float *probs, attn_dims s)
{
    int64_t n = s.B * s.Tk * s.Hkv * s.hd;
    for (int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; e < n; e += (int64_t)gridDim.x * blockDim.x) {
        int64_t d = e % s.hd, kvh = (e / s.hd) % s.Hkv, j = (e / (s.hd * s.Hkv)) % s.Tk, b = e / (s.hd * s.Hkv * s.Tk);
        float acc = 0;
        for (int64_t h = kvh * s.group; h < (kvh + 1) * s.group; h++)
            for (int64_t i = 0; i < s.Tq; i++) {
                float p = probs[((b * s.H + h) * s.Tq + i) * s.Tk + j];
                if (p != 0.0f) acc += p * plc_ld(&dout[attn_q_off(s, b, i, h) + d]);
            }
        plc_st(&dv[e], plc_ld(&dv[e]) + acc);
    }
}

/* probs row -> dS row (P (dP - D)), and dq += scale dS k */
template <typename T>
__global__ void attn_bwd_ds_dq_k(T *dq, float *probs, const T *dout, const T *k, const T *v, const T *out,
                                 attn_dims s)
{
    extern __shared__ float gs[]; /* dout row, hd */
    __shared__ float scratch[PLC_ROW_THREADS];
    for (int64_t row = blockIdx.x; row < s.B * s.H * s.Tq; row += gridDim.x) {
        int64_t i = row % s.Tq, h = (row / s.Tq) % s.H, b = row / (s.Tq * s.H), kvh = h / s.group;
        int64_t qo = attn_q_off(s, b, i, h);
        float *p = probs + row * s.Tk;
        float D = 0;
        for (int64_t d = threadIdx.x; d < s.hd; d += blockDim.x) {
            gs[d] = plc_ld(&dout[qo + d]);
            D += gs[d] * plc_ld(&out[qo + d]);
        }
        D = plc_block_sum(D, scratch); /* also publishes gs */
        for (int64_t j = threadIdx.x; j < s.Tk; j += blockDim.x) {
            if (p[j] == 0.0f) continue;
            const T *vj = v + attn_kv_off(s, b, j, kvh);
            float dp = 0;
            for (int64_t d = 0; d < s.hd; d++) dp += gs[d] * plc_ld(&vj[d]);
            p[j] = p[j] * (dp - D);
        }
        __syncthreads();
        for (int64_t d = threadIdx.x; d < s.hd; d += blockDim.x) {
            float acc = 0;
            for (int64_t j = 0; j < s.Tk; j++)
                if (p[j] != 0.0f) acc += p[j] * plc_ld(&k[attn_kv_off(s, b, j, kvh) + d]);
            plc_st(&dq[qo + d], plc_ld(&dq[qo + d]) + s.scale * acc);
        }
        __syncthreads();
    }
}

template <typename T> __global__ void attn_bwd_dk_k(T *dk, const T *q, const float *dscores, attn_dims s)
{
    int64_t n = s.B * s.Tk * s.Hkv * s.hd;
    for (int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; e < n; e += (int64_t)gridDim.x * blockDim.x) {
        int64_t d = e % s.hd, kvh = (e / s.hd) % s.Hkv, j = (e / (s.hd * s.Hkv)) % s.Tk, b = e / (s.hd * s.Hkv * s.Tk);
        float acc = 0;
        for (int64_t h = kvh * s.group; h < (kvh + 1) * s.group; h++)
            for (int64_t i = 0; i < s.Tq; i++) {
                float ds = dscores[((b * s.H + h) * s.Tq + i) * s.Tk + j];
                if (ds != 0.0f) acc += ds * plc_ld(&q[attn_q_off(s, b, i, h) + d]);
            }
        plc_st(&dk[e], plc_ld(&dk[e]) + s.scale * acc);
    }
}

static int attn_check(int64_t H, int64_t Hkv, int64_t hd)
{
    if (Hkv <= 0 || H % Hkv) return plc_cuda_fail("attention", "heads must be a multiple of kv heads");
    if (hd <= 0) return plc_cuda_fail("attention", "head dimension must be positive");
    return 0;
}

extern "C" int plc_cuda_attention_forward(void *out, float *probs, const void *q, const void *k, const void *v,
                                          plc_cuda_dtype dt, const int32_t *q_pos, const int32_t *k_pos,
                                          int64_t B, int64_t Tq, int64_t Tk, int64_t H, int64_t Hkv, int64_t hd,
                                          void *stream)
{
    if (attn_check(H, Hkv, hd)) return -1;
    attn_dims s = attn_dims_make(B, Tq, Tk, H, Hkv, hd, q_pos, k_pos);
    if (B * H * Tq <= 0) return 0;
    size_t shm = (size_t)hd * sizeof(float);
    PLC_DISPATCH(dt, T,
                 attn_fwd_k<T><<<plc_blocks(B * H * Tq, 1), PLC_ROW_THREADS, shm, plc_stream(stream)>>>(
                     (T *)out, probs, (const T *)q, (const T *)k, (const T *)v, s));
    return plc_cuda_check_launch(__func__);
}

extern "C" int plc_cuda_attention_backward(void *dq, void *dk, void *dv, const void *dout, const void *q,
                                           const void *k, const void *v, const void *out, float *probs,
                                           plc_cuda_dtype dt, int64_t B, int64_t Tq, int64_t Tk, int64_t H,
                                           int64_t Hkv, int64_t hd, void *stream)
{
    if (attn_check(H, Hkv, hd)) return -1;
    attn_dims s = attn_dims_make(B, Tq, Tk, H, Hkv, hd, NULL, NULL);
    if (B * H * Tq <= 0 || Tk <= 0) return 0;
    int64_t nkv = B * Tk * Hkv * hd;
    size_t shm = (size_t)hd * sizeof(float);
    cudaStream_t st = plc_stream(stream);
    PLC_DISPATCH(dt, T, {
        attn_bwd_dv_k<T><<<plc_blocks(nkv, 128), 128, 0, st>>>((T *)dv, (const T *)dout, probs, s);
        attn_bwd_ds_dq_k<T><<<plc_blocks(B * H * Tq, 1), PLC_ROW_THREADS, shm, st>>>(
            (T *)dq, probs, (const T *)dout, (const T *)k, (const T *)v, (const T *)out, s);
        attn_bwd_dk_k<T><<<plc_blocks(nkv, 128), 128, 0, st>>>((T *)dk, (const T *)q, probs, s);
    });
    return plc_cuda_check_launch(__func__);
}
