/* kernels/cuda/gelu_bias.cu: GELU, tanh approximation (the element math of
 * kernels/common/activations.h), and the bias of a linear layer; the bias
 * gradient by column tiles whose row lanes are added in a fixed order
 * (cuda_common.cuh). No atomics: deterministic. */
#include "kernels/common/activations.h"
#include "kernels/cuda/cuda_common.cuh"

#define EW_THREADS 256
#define GRID_STRIDE(i, n) \
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < (n); i += (int64_t)gridDim.x * blockDim.x)

template <typename T> __global__ void gelu_fwd_k(T *out, const T *in, int64_t n)
{
    GRID_STRIDE(i, n) plc_st(&out[i], plc_gelu(plc_ld(&in[i])));
}
template <typename T> __global__ void gelu_bwd_k(T *din, const T *dout, const T *in, int64_t n)
{
    GRID_STRIDE(i, n) plc_st(&din[i], plc_ld(&din[i]) + plc_ld(&dout[i]) * plc_gelu_grad(plc_ld(&in[i])));
}
template <typename T> __global__ void bias_add_k(T *out, const T *in, const T *bias, int64_t rows, int64_t cols)
{
    GRID_STRIDE(i, rows * cols) plc_st(&out[i], plc_ld(&in[i]) + plc_ld(&bias[i % cols]));
}
template <typename T> __global__ void bias_bwd_k(float *dbias, const T *dout, int64_t rows, int64_t cols)
{
    __shared__ double scratch[PLC_COL_LANES][PLC_COL_TILE];
    for (int64_t c0 = (int64_t)blockIdx.x * PLC_COL_TILE; c0 < cols; c0 += (int64_t)gridDim.x * PLC_COL_TILE) {
        int64_t c = c0 + threadIdx.x;
        double acc = 0;
        if (c < cols)
            for (int64_t r = threadIdx.y; r < rows; r += PLC_COL_LANES) acc += (double)plc_ld(&dout[r * cols + c]);
        acc = plc_col_lanes_sum(acc, scratch);
        if (threadIdx.y == 0 && c < cols) dbias[c] += (float)acc;
    }
}

extern "C" int plc_cuda_gelu_forward(void *out, const void *in, plc_cuda_dtype dt, int64_t n, void *stream)
{
    if (n <= 0) return 0;
    PLC_DISPATCH(dt, T,
                 gelu_fwd_k<T><<<plc_blocks(n, EW_THREADS), EW_THREADS, 0, plc_stream(stream)>>>(
                     (T *)out, (const T *)in, n));
    return plc_cuda_check_launch(__func__);
}

extern "C" int plc_cuda_gelu_backward(void *din, const void *dout, const void *in, plc_cuda_dtype dt, int64_t n,
                                      void *stream)
{
    if (n <= 0) return 0;
    PLC_DISPATCH(dt, T,
                 gelu_bwd_k<T><<<plc_blocks(n, EW_THREADS), EW_THREADS, 0, plc_stream(stream)>>>(
                     (T *)din, (const T *)dout, (const T *)in, n));
    return plc_cuda_check_launch(__func__);
}

extern "C" int plc_cuda_bias_add(void *out, const void *in, const void *bias, plc_cuda_dtype dt, int64_t rows,
                                 int64_t cols, void *stream)
{
    if (rows <= 0 || cols <= 0) return 0;
    PLC_DISPATCH(dt, T,
                 bias_add_k<T><<<plc_blocks(rows * cols, EW_THREADS), EW_THREADS, 0, plc_stream(stream)>>>(
                     (T *)out, (const T *)in, (const T *)bias, rows, cols));
    return plc_cuda_check_launch(__func__);
}

extern "C" int plc_cuda_bias_backward(float *dbias, const void *dout, plc_cuda_dtype dt, int64_t rows, int64_t cols,
                                      void *stream)
{
    if (rows <= 0 || cols <= 0) return 0;
    PLC_DISPATCH(dt, T,
                 bias_bwd_k<T><<<plc_blocks(cols, PLC_COL_TILE), dim3(PLC_COL_TILE, PLC_COL_LANES), 0,
                                 plc_stream(stream)>>>(dbias, (const T *)dout, rows, cols));
    return plc_cuda_check_launch(__func__);
}
