/* kernels/cpu/rmsnorm.c: RMSNorm forward and backward (docs/model.md). */
#include "kernels/kernels.h"
#include "kernels/common/reduce.h"

/* columns per work item of the weight gradient */
#define DW_CHUNK 32

void plc_k_rmsnorm_forward(float *out, float *rstd, const float *in, const float *weight,
                           int64_t rows, int64_t dim, float eps)
{
#pragma omp parallel for schedule(static) if (rows * dim > 32768)
    for (int64_t r = 0; r < rows; r++) {
        const float *x = in + r * dim;
        float *y = out + r * dim;
        float s = plc_rms_rstd(plc_sum_squares_f64(x, dim), dim, eps);
        for (int64_t c = 0; c < dim; c++) y[c] = (x[c] * s) * weight[c];
        if (rstd) rstd[r] = s;
    }
}

/* y = x s w with s = (mean(x^2) + eps)^(-1/2):
 *   dx_c = s w_c dy_c - x_c s^3 / dim * sum_k(dy_k w_k x_k)
 *   dw_c = sum over rows of dy_c x_c s */
void plc_k_rmsnorm_backward(float *din, float *dweight, const float *dout,
                            const float *in, const float *weight, const float *rstd,
                            int64_t rows, int64_t dim)
{
    if (din) {
#pragma omp parallel for schedule(static) if (rows * dim > 32768)
        for (int64_t r = 0; r < rows; r++) {
            const float *x = in + r * dim, *dy = dout + r * dim;
            float *dx = din + r * dim;
            float s = rstd[r];
            double dot = 0;
            for (int64_t c = 0; c < dim; c++) dot += (double)dy[c] * weight[c] * x[c];
            float k = (float)(dot * (double)s * s * s / (double)dim);
            for (int64_t c = 0; c < dim; c++) dx[c] += s * weight[c] * dy[c] - k * x[c];
        }
    }
    if (dweight) {
        /* fixed chunks of columns; each column adds its rows in order */
        const int64_t nchunks = (dim + DW_CHUNK - 1) / DW_CHUNK;
#pragma omp parallel for schedule(static) if (rows * dim > 32768)
        for (int64_t ch = 0; ch < nchunks; ch++) {
            int64_t c0 = ch * DW_CHUNK, n = dim - c0 < DW_CHUNK ? dim - c0 : DW_CHUNK;
            double acc[DW_CHUNK] = {0};
            for (int64_t r = 0; r < rows; r++) {
                const float *x = in + r * dim + c0, *dy = dout + r * dim + c0;
                double s = rstd[r];
                for (int64_t c = 0; c < n; c++) acc[c] += (double)dy[c] * x[c] * s;
            }
            for (int64_t c = 0; c < n; c++) dweight[c0 + c] += (float)acc[c];
        }
    }
}
