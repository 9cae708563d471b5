/* kernels/cuda/layernorm.cu: LayerNorm (kernels/common/layernorm.h). One
 * block per row for the forward and din, the row sums in double over a
 * fixed tree; dweight and dbias by column tiles whose row lanes are added in
 * a fixed order (cuda_common.cuh). No atomics: deterministic. */
#include "kernels/common/layernorm.h"
#include "kernels/cuda/cuda_common.cuh"

template <typename T>
__global__ void layernorm_fwd_k(T *out, float *mean, float *rstd, const T *in, const T *weight, const T *bias,
                                int64_t rows, int64_t dim, float eps)
{
    __shared__ double scratch[PLC_ROW_THREADS];
    for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
        const T *x = in + r * dim;
        double s = 0;
        for (int64_t c = threadIdx.x; c < dim; c += blockDim.x) s += (double)plc_ld(&x[c]);
        double m = plc_block_sum_f64(s, scratch) / (double)dim, v = 0;
        for (int64_t c = threadIdx.x; c < dim; c += blockDim.x) {
            double d = (double)plc_ld(&x[c]) - m;
            v += d * d;
        }
        float rs = plc_ln_rstd(plc_block_sum_f64(v, scratch) / (double)dim, eps), mf = (float)m;
        for (int64_t c = threadIdx.x; c < dim; c += blockDim.x)
            plc_st(&out[r * dim + c],
                   plc_ln_forward_element(plc_ld(&x[c]), mf, rs, plc_ld(&weight[c]), plc_ld(&bias[c])));
        if (threadIdx.x == 0) {
            if (mean) mean[r] = mf;
            if (rstd) rstd[r] = rs;
        }
    }
}

template <typename T>
__global__ void layernorm_bwd_din_k(T *din, const T *dout, const T *in, const T *weight, const float *mean,
                                    const float *rstd, int64_t rows, int64_t dim)
{
    __shared__ double scratch[PLC_ROW_THREADS];
    for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
        const T *x = in + r * dim, *dy = dout + r * dim;
        float m = mean[r], s = rstd[r];
        double a = 0, b = 0;
        for (int64_t c = threadIdx.x; c < dim; c += blockDim.x) {
            double g = (double)plc_ld(&dy[c]) * (double)plc_ld(&weight[c]);
            a += g;
            b += g * (double)plc_ln_xhat(plc_ld(&x[c]), m, s);
        }
        float mg = (float)(plc_block_sum_f64(a, scratch) / (double)dim);
        float mgx = (float)(plc_block_sum_f64(b, scratch) / (double)dim);
        for (int64_t c = threadIdx.x; c < dim; c += blockDim.x) {
            float g = plc_ln_backward_element(plc_ld(&dy[c]), plc_ld(&x[c]), plc_ld(&weight[c]), m, s, mg, mgx);
            plc_st(&din[r * dim + c], plc_ld(&din[r * dim + c]) + g);
        }
    }
}

template <typename T>
__global__ void layernorm_bwd_params_k(float *dweight, float *dbias, const T *dout, const T *in, const float *mean,
                                       const float *rstd, int64_t rows, int64_t dim)
{
    __shared__ double scratch[PLC_COL_LANES][PLC_COL_TILE];
    for (int64_t c0 = (int64_t)blockIdx.x * PLC_COL_TILE; c0 < dim; c0 += (int64_t)gridDim.x * PLC_COL_TILE) {
        int64_t c = c0 + threadIdx.x;
        double w = 0, b = 0;
        if (c < dim)
            for (int64_t r = threadIdx.y; r < rows; r += PLC_COL_LANES) {
                double dy = (double)plc_ld(&dout[r * dim + c]);
                w += dy * (double)plc_ln_xhat(plc_ld(&in[r * dim + c]), mean[r], rstd[r]);
                b += dy;
            }
        w = plc_col_lanes_sum(w, scratch);
        b = plc_col_lanes_sum(b, scratch);
        if (threadIdx.y == 0 && c < dim) {
            if (dweight) dweight[c] += (float)w;
            if (dbias) dbias[c] += (float)b;
        }
    }
}

extern "C" int plc_cuda_layernorm_forward(void *out, float *mean, float *rstd, const void *in, const void *weight,
                                          const void *bias, plc_cuda_dtype dt, int64_t rows, int64_t dim, float eps,
                                          void *stream)
{
    if (rows <= 0 || dim <= 0) return 0;
    PLC_DISPATCH(dt, T,
                 layernorm_fwd_k<T><<<plc_blocks(rows, 1), PLC_ROW_THREADS, 0, plc_stream(stream)>>>(
                     (T *)out, mean, rstd, (const T *)in, (const T *)weight, (const T *)bias, rows, dim, eps));
    return plc_cuda_check_launch(__func__);
}

extern "C" int plc_cuda_layernorm_backward(void *din, float *dweight, float *dbias, const void *dout,
                                           const void *in, const void *weight, const float *mean,
                                           const float *rstd, plc_cuda_dtype dt, int64_t rows, int64_t dim,
                                           void *stream)
{
    if (rows <= 0 || dim <= 0) return 0;
    if (din)
        PLC_DISPATCH(dt, T,
                     layernorm_bwd_din_k<T><<<plc_blocks(rows, 1), PLC_ROW_THREADS, 0, plc_stream(stream)>>>(
                         (T *)din, (const T *)dout, (const T *)in, (const T *)weight, mean, rstd, rows, dim));
    if (dweight || dbias)
        PLC_DISPATCH(dt, T,
                     layernorm_bwd_params_k<T><<<plc_blocks(dim, PLC_COL_TILE), dim3(PLC_COL_TILE, PLC_COL_LANES),
                                                 0, plc_stream(stream)>>>(dweight, dbias, (const T *)dout,
                                                                          (const T *)in, mean, rstd, rows, dim));
    return plc_cuda_check_launch(__func__);
}
