/* kernels/cuda/elementwise.cu: casts, residual adds, scaling, SwiGLU, AdamW.
 * The element math is the CPU one, from the headers in kernels/common. */
#include "kernels/common/activations.h"
#include "kernels/common/adamw.h"
#include "kernels/cuda/cuda_common.cuh"

#define EW_THREADS 256
#define GRID_STRIDE(i, n) \
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < (n); i += (int64_t)gridDim.x * blockDim.x)

__global__ void cast_f32_bf16(uint16_t *out, const float *in, int64_t n)
{
    GRID_STRIDE(i, n) out[i] = plc_f32_to_bf16(in[i]);
}
__global__ void cast_bf16_f32(float *out, const uint16_t *in, int64_t n)
{
    GRID_STRIDE(i, n) out[i] = plc_bf16_to_f32(in[i]);
}

extern "C" int plc_cuda_cast_f32_to_bf16(uint16_t *out, const float *in, int64_t n, void *stream)
{
    if (n <= 0) return 0;
    cast_f32_bf16<<<plc_blocks(n, EW_THREADS), EW_THREADS, 0, plc_stream(stream)>>>(out, in, n);
    return plc_cuda_check_launch(__func__);
}
extern "C" int plc_cuda_cast_bf16_to_f32(float *out, const uint16_t *in, int64_t n, void *stream)
{
    if (n <= 0) return 0;
    cast_bf16_f32<<<plc_blocks(n, EW_THREADS), EW_THREADS, 0, plc_stream(stream)>>>(out, in, n);
    return plc_cuda_check_launch(__func__);
}

template <typename T> __global__ void add_k(T *out, const T *a, const T *b, int64_t n)
{
    GRID_STRIDE(i, n) plc_st(&out[i], plc_ld(&a[i]) + plc_ld(&b[i]));
}
template <typename T> __global__ void accumulate_k(T *y, const T *x, int64_t n)
{
    GRID_STRIDE(i, n) plc_st(&y[i], plc_ld(&y[i]) + plc_ld(&x[i]));
}
template <typename T> __global__ void scale_k(T *x, float s, int64_t n)
{
    GRID_STRIDE(i, n) plc_st(&x[i], plc_ld(&x[i]) * s);
}
template <typename T> __global__ void swiglu_fwd_k(T *out, const T *gate, const T *up, int64_t n)
{
    GRID_STRIDE(i, n) plc_st(&out[i], plc_silu(plc_ld(&gate[i])) * plc_ld(&up[i]));
}
template <typename T>
__global__ void swiglu_bwd_k(T *dgate, T *dup, const T *dout, const T *gate, const T *up, int64_t n)
{
    GRID_STRIDE(i, n)
    {
        float dg = plc_ld(&dgate[i]), du = plc_ld(&dup[i]);
        plc_swiglu_backward_element(plc_ld(&dout[i]), plc_ld(&gate[i]), plc_ld(&up[i]), &dg, &du);
        plc_st(&dgate[i], dg);
        plc_st(&dup[i], du);
    }
}

#define EW_LAUNCH(kernel, n, ...)                                                                   \
    do {                                                                                           \
        if ((n) <= 0) return 0;                                                                    \
        kernel<<<plc_blocks((n), EW_THREADS), EW_THREADS, 0, plc_stream(stream)>>>(__VA_ARGS__);   \
    } while (0)

extern "C" int plc_cuda_add(void *out, const void *a, const void *b, plc_cuda_dtype dt, int64_t n,
                            void *stream)
{
    PLC_DISPATCH(dt, T, EW_LAUNCH(add_k<T>, n, (T *)out, (const T *)a, (const T *)b, n));
    return plc_cuda_check_launch(__func__);
}
extern "C" int plc_cuda_accumulate(void *y, const void *x, plc_cuda_dtype dt, int64_t n, void *stream)
{
    PLC_DISPATCH(dt, T, EW_LAUNCH(accumulate_k<T>, n, (T *)y, (const T *)x, n));
    return plc_cuda_check_launch(__func__);
}
extern "C" int plc_cuda_scale(void *x, float s, plc_cuda_dtype dt, int64_t n, void *stream)
{
    PLC_DISPATCH(dt, T, EW_LAUNCH(scale_k<T>, n, (T *)x, s, n));
    return plc_cuda_check_launch(__func__);
}
extern "C" int plc_cuda_swiglu_forward(void *out, const void *gate, const void *up, plc_cuda_dtype dt,
                                       int64_t n, void *stream)
{
    PLC_DISPATCH(dt, T, EW_LAUNCH(swiglu_fwd_k<T>, n, (T *)out, (const T *)gate, (const T *)up, n));
    return plc_cuda_check_launch(__func__);
}
extern "C" int plc_cuda_swiglu_backward(void *dgate, void *dup, const void *dout, const void *gate,
                                        const void *up, plc_cuda_dtype dt, int64_t n, void *stream)
{
    PLC_DISPATCH(dt, T, EW_LAUNCH(swiglu_bwd_k<T>, n, (T *)dgate, (T *)dup, (const T *)dout,
                                  (const T *)gate, (const T *)up, n));
    return plc_cuda_check_launch(__func__);
}

__global__ void adamw_k(float *param, const float *grad, float *m, float *v, int64_t n,
                        plc_adamw_consts c, float grad_scale)
{
    GRID_STRIDE(i, n) plc_adamw_element(&param[i], &m[i], &v[i], grad[i] * grad_scale, &c);
}

/* the step's constants and the clip factor read from device memory, where
 * they were written before the step: a recorded graph replays with the
 * current step's values (runtime/step_graph.h) */
__global__ void adamw_dev_k(float *param, const float *grad, float *m, float *v, int64_t n,
                            const plc_adamw_consts *cp, const float *grad_scale)
{
    const plc_adamw_consts c = *cp;
    const float sc = *grad_scale;
    GRID_STRIDE(i, n) plc_adamw_element(&param[i], &m[i], &v[i], grad[i] * sc, &c);
}

extern "C" int plc_cuda_adamw_dev(float *param, const float *grad, float *m, float *v, int64_t n,
                                  const plc_adamw_consts *consts, const float *grad_scale, void *stream)
{
    EW_LAUNCH(adamw_dev_k, n, param, grad, m, v, n, consts, grad_scale);
    return plc_cuda_check_launch(__func__);
}

extern "C" int plc_cuda_adamw(float *param, const float *grad, float *m, float *v, int64_t n,
                              double lr, double beta1, double beta2, double eps, double weight_decay,
                              int64_t t, float grad_scale, void *stream)
{
    plc_adamw_consts c = plc_adamw_prepare(t, lr, beta1, beta2, eps, weight_decay);
    EW_LAUNCH(adamw_k, n, param, grad, m, v, n, c, grad_scale);
    return plc_cuda_check_launch(__func__);
}
