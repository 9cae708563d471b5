/* kernels/cuda/cross_entropy.cu: softmax cross-entropy in the pieces of the
 * CPU API (vocab-sharded use) and fused; one block per row. */
#include "kernels/cuda/cuda_common.cuh"

template <typename T> __device__ float row_max(const T *x, int64_t V, float *scratch)
{
    float m = -INFINITY;
    for (int64_t c = threadIdx.x; c < V; c += blockDim.x) m = fmaxf(m, plc_ld(&x[c]));
    return plc_block_max(m, scratch);
}

template <typename T> __device__ float row_sumexp(const T *x, int64_t V, float max, float *scratch)
{
    float s = 0;
    for (int64_t c = threadIdx.x; c < V; c += blockDim.x) s += expf(plc_ld(&x[c]) - max);
    return plc_block_sum(s, scratch);
}

template <typename T> __device__ float target_logit_of(const T *x, int32_t target, int64_t V, int64_t vocab_start)
{
    int64_t t = (int64_t)target - vocab_start;
    return (t >= 0 && t < V) ? plc_ld(&x[t]) : 0.0f;
}

/* all reads of x happen before the first write (in-place gradients) */
template <typename T>
__device__ void row_loss_grad(float *loss, T *d, const T *x, float max, float sum, float tl, int32_t target,
                              int64_t V, int64_t vocab_start, float grad_scale)
{
    if (loss && threadIdx.x == 0) *loss = logf(sum) + max - tl;
    if (!d) return;
    float inv = 1.0f / sum;
    int64_t t = (int64_t)target - vocab_start;
    for (int64_t c = threadIdx.x; c < V; c += blockDim.x) {
        float g = expf(plc_ld(&x[c]) - max) * inv * grad_scale;
        if (c == t) g -= grad_scale;
        plc_st(&d[c], g);
    }
}

template <typename T> __global__ void xent_max_k(float *out, const T *logits, int64_t rows, int64_t V)
{
    __shared__ float scratch[PLC_ROW_THREADS];
    for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
        float m = row_max(logits + r * V, V, scratch);
        if (threadIdx.x == 0) out[r] = m;
    }
}

template <typename T>
__global__ void xent_sumexp_k(float *row_sum, float *tlogit, const T *logits, const float *gmax,
                              const int32_t *targets, int64_t rows, int64_t V, int64_t vocab_start)
{
    __shared__ float scratch[PLC_ROW_THREADS];
    for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
        float s = row_sumexp(logits + r * V, V, gmax[r], scratch);
        if (threadIdx.x == 0) {
            row_sum[r] = s;
            tlogit[r] = target_logit_of(logits + r * V, targets[r], V, vocab_start);
        }
    }
}

template <typename T>
__global__ void xent_loss_grad_k(float *loss, T *dlogits, const T *logits, const float *gmax, const float *gsum,
                                 const float *tlogit, const int32_t *targets, int64_t rows, int64_t V,
                                 int64_t vocab_start, float grad_scale)
{
    for (int64_t r = blockIdx.x; r < rows; r += gridDim.x)
        row_loss_grad(loss ? loss + r : NULL, dlogits ? dlogits + r * V : NULL, logits + r * V, gmax[r], gsum[r],
                      tlogit[r], targets[r], V, vocab_start, grad_scale);
}

template <typename T>
__global__ void xent_fused_k(float *loss, T *dlogits, const T *logits, const int32_t *targets, int64_t rows,
                             int64_t V, float grad_scale)
{
    __shared__ float scratch[PLC_ROW_THREADS];
    for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
        const T *x = logits + r * V;
        float tl = target_logit_of(x, targets[r], V, 0);
        float m = row_max(x, V, scratch);
        float s = row_sumexp(x, V, m, scratch); /* ends with a barrier: reads are done */
        row_loss_grad(loss ? loss + r : NULL, dlogits ? dlogits + r * V : NULL, x, m, s, tl, targets[r], V, 0,
                      grad_scale);
        __syncthreads();
    }
}

#define ROW_LAUNCH(kernel, ...) \
    kernel<<<plc_blocks(rows, 1), PLC_ROW_THREADS, 0, plc_stream(stream)>>>(__VA_ARGS__)

extern "C" int plc_cuda_xent_local_max(float *row_max_out, const void *logits, plc_cuda_dtype dt, int64_t rows,
                                       int64_t V_local, void *stream)
{
    if (rows <= 0) return 0;
    PLC_DISPATCH(dt, T, ROW_LAUNCH(xent_max_k<T>, row_max_out, (const T *)logits, rows, V_local));
    return plc_cuda_check_launch(__func__);
}

extern "C" int plc_cuda_xent_local_sumexp(float *row_sum, float *target_logit, const void *logits,
                                          plc_cuda_dtype dt, const float *global_max, const int32_t *targets,
                                          int64_t rows, int64_t V_local, int64_t vocab_start, void *stream)
{
    if (rows <= 0) return 0;
    PLC_DISPATCH(dt, T, ROW_LAUNCH(xent_sumexp_k<T>, row_sum, target_logit, (const T *)logits, global_max,
                                   targets, rows, V_local, vocab_start));
    return plc_cuda_check_launch(__func__);
}

extern "C" int plc_cuda_xent_loss_grad(float *loss, void *dlogits, const void *logits, plc_cuda_dtype dt,
                                       const float *global_max, const float *global_sum,
                                       const float *target_logit, const int32_t *targets, int64_t rows,
                                       int64_t V_local, int64_t vocab_start, float grad_scale, void *stream)
{
    if (rows <= 0) return 0;
    PLC_DISPATCH(dt, T, ROW_LAUNCH(xent_loss_grad_k<T>, loss, (T *)dlogits, (const T *)logits, global_max,
                                   global_sum, target_logit, targets, rows, V_local, vocab_start, grad_scale));
    return plc_cuda_check_launch(__func__);
}

extern "C" int plc_cuda_cross_entropy(float *loss, void *dlogits, const void *logits, plc_cuda_dtype dt,
                                      const int32_t *targets, int64_t rows, int64_t V, float grad_scale,
                                      void *stream)
{
    if (rows <= 0) return 0;
    PLC_DISPATCH(dt, T, ROW_LAUNCH(xent_fused_k<T>, loss, (T *)dlogits, (const T *)logits, targets, rows, V,
                                   grad_scale));
    return plc_cuda_check_launch(__func__);
}
