/* kernels/cpu/rmsnorm.c: RMSNorm forward and backward (docs/model.md). */
#include "kernels/kernels.h"
#include "kernels/common/reduce.h"

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

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
        /* a column range per thread; each column adds its rows in order */
#pragma omp parallel if (rows * dim > 32768)
        {
            int64_t nt = omp_get_num_threads(), me = omp_get_thread_num();
            int64_t c0 = dim * me / nt, c1 = dim * (me + 1) / nt;
            double *acc = calloc((size_t)(c1 - c0 + 1), sizeof *acc);
            if (!acc) {
                fprintf(stderr, "plrun: out of memory in rmsnorm backward\n");
                exit(1);
            }
            for (int64_t r = 0; r < rows; r++) {
                const float *x = in + r * dim, *dy = dout + r * dim;
                double s = rstd[r];
                for (int64_t c = c0; c < c1; c++) acc[c - c0] += (double)dy[c] * x[c] * s;
            }
            for (int64_t c = c0; c < c1; c++) dweight[c] += (float)acc[c - c0];
            free(acc);
        }
    }
}
