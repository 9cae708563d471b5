/* kernels/cuda/rmsnorm.cu: RMSNorm, one block per row; dweight by tiles of
 * columns, each column's rows in a fixed order (no atomics, deterministic). */
#include "kernels/common/reduce.h"
#include "kernels/cuda/cuda_common.cuh"

template <typename T>
__global__ void rmsnorm_fwd_k(T *out, float *rstd, const T *in, const T *weight, int64_t rows, int64_t dim,
                              float eps)
{
    __shared__ float scratch[PLC_ROW_THREADS];
    for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
        const T *x = in + r * dim;
        float ss = 0;
        for (int64_t c = threadIdx.x; c < dim; c += blockDim.x) {
            float v = plc_ld(&x[c]);
            ss += v * v;
        }
        float s = plc_rms_rstd((double)plc_block_sum(ss, scratch), dim, eps);
        for (int64_t c = threadIdx.x; c < dim; c += blockDim.x)
            plc_st(&out[r * dim + c], (plc_ld(&x[c]) * s) * plc_ld(&weight[c]));
        if (rstd && threadIdx.x == 0) rstd[r] = s;
    }
}

template <typename T>
__global__ void rmsnorm_bwd_din_k(T *din, const T *dout, const T *in, const T *weight, const float *rstd,
                                  int64_t rows, int64_t dim)
{
    __shared__ float scratch[PLC_ROW_THREADS];
    for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
        const T *x = in + r * dim, *dy = dout + r * dim;
        float s = rstd[r], dot = 0;
        for (int64_t c = threadIdx.x; c < dim; c += blockDim.x)
            dot += plc_ld(&dy[c]) * plc_ld(&weight[c]) * plc_ld(&x[c]);
        dot = plc_block_sum(dot, scratch);
        float k = dot * s * s * s / (float)dim;
        for (int64_t c = threadIdx.x; c < dim; c += blockDim.x) {
            float g = s * plc_ld(&weight[c]) * plc_ld(&dy[c]) - k * plc_ld(&x[c]);
            plc_st(&din[r * dim + c], plc_ld(&din[r * dim + c]) + g);
        }
    }
}

/* dweight: a block of PLC_COL_TILE x PLC_COL_LANES threads per tile of
 * columns (cuda_common.cuh's column sums: a fixed order whatever the grid) */
template <typename T>
__global__ void rmsnorm_bwd_dw_k(float *dweight, const T *dout, const T *in, const float *rstd, int64_t rows,
                                 int64_t dim)
{
    __shared__ double scratch[PLC_COL_LANES][PLC_COL_TILE];
    for (int64_t c0 = (int64_t)blockIdx.x * PLC_COL_TILE; c0 < dim; c0 += (int64_t)gridDim.x * PLC_COL_TILE) {
        int64_t c = c0 + threadIdx.x;
        double acc = 0;
        if (c < dim)
            for (int64_t r = threadIdx.y; r < rows; r += PLC_COL_LANES)
                acc += (double)(plc_ld(&dout[r * dim + c]) * plc_ld(&in[r * dim + c]) * rstd[r]);
        acc = plc_col_lanes_sum(acc, scratch);
        if (threadIdx.y == 0 && c < dim) dweight[c] += (float)acc;
    }
}

extern "C" int plc_cuda_rmsnorm_forward(void *out, float *rstd, const void *in, const void *weight,
                                        plc_cuda_dtype dt, int64_t rows, int64_t dim, float eps, void *stream)
{
    if (rows <= 0) return 0;
    PLC_DISPATCH(dt, T,
                 rmsnorm_fwd_k<T><<<plc_blocks(rows, 1), PLC_ROW_THREADS, 0, plc_stream(stream)>>>(
                     (T *)out, rstd, (const T *)in, (const T *)weight, rows, dim, eps));
    return plc_cuda_check_launch(__func__);
}

extern "C" int plc_cuda_rmsnorm_backward(void *din, float *dweight, const void *dout, const void *in,
                                         const void *weight, const float *rstd, plc_cuda_dtype dt,
                                         int64_t rows, int64_t dim, void *stream)
{
    if (rows <= 0) return 0;
    if (din)
        PLC_DISPATCH(dt, T,
                     rmsnorm_bwd_din_k<T><<<plc_blocks(rows, 1), PLC_ROW_THREADS, 0, plc_stream(stream)>>>(
                         (T *)din, (const T *)dout, (const T *)in, (const T *)weight, rstd, rows, dim));
    if (dweight)
        PLC_DISPATCH(dt, T,
                     rmsnorm_bwd_dw_k<T><<<plc_blocks(dim, PLC_COL_TILE), dim3(PLC_COL_TILE, PLC_COL_LANES), 0,
                                           plc_stream(stream)>>>(dweight, (const T *)dout, (const T *)in, rstd,
                                                                 rows, dim));
    return plc_cuda_check_launch(__func__);
}
