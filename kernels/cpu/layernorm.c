/* kernels/cpu/layernorm.c: LayerNorm forward and backward (the math is
 * kernels/common/layernorm.h). Rows are independent in the forward and in
 * din; dweight and dbias sum over rows, so they are split over columns
 * instead: each thread owns a column range and adds the rows in order, in
 * double, and the result is the same bits for any thread count. */
#include "kernels/kernels.h"
#include "kernels/common/layernorm.h"

#include <omp.h>
#include <stdlib.h>

#define PAR_MIN 32768 /* elements below which threads cost more than they save */

void plc_k_layernorm_forward(float *out, float *mean, float *rstd, const float *in,
                             const float *weight, const float *bias,
                             int64_t rows, int64_t dim, float eps)
{
#pragma omp parallel for schedule(dynamic, 16) if (rows * dim > PAR_MIN)
    for (int64_t r = 0; r < rows; r++) {
        const float *x = in + r * dim;
        float *y = out + r * dim;
        float m, s;
        plc_ln_row_stats(x, dim, eps, &m, &s);
        for (int64_t c = 0; c < dim; c++) y[c] = plc_ln_forward_element(x[c], m, s, weight[c], bias[c]);
        if (mean) mean[r] = m;
        if (rstd) rstd[r] = s;
    }
}

int plc_k_layernorm_backward(float *din, float *dweight, float *dbias, const float *dout,
                             const float *in, const float *weight,
                             const float *mean, const float *rstd,
                             int64_t rows, int64_t dim)
{
    if (din) {
#pragma omp parallel for schedule(dynamic, 16) if (rows * dim > PAR_MIN)
        for (int64_t r = 0; r < rows; r++) {
            const float *x = in + r * dim, *dy = dout + r * dim;
            float *dx = din + r * dim;
            float mg, mgx;
            plc_ln_backward_row(dy, x, weight, dim, mean[r], rstd[r], &mg, &mgx);
            for (int64_t c = 0; c < dim; c++)
                dx[c] += plc_ln_backward_element(dy[c], x[c], weight[c], mean[r], rstd[r], mg, mgx);
        }
    }
    if (!dweight && !dbias) return 0;
    double *acc = calloc((size_t)(2 * dim + 1), sizeof *acc); /* [dweight | dbias], a double per column */
    if (!acc) return -1;
#pragma omp parallel if (rows * dim > PAR_MIN)
    {
        int64_t nt = omp_get_num_threads(), me = omp_get_thread_num();
        int64_t c0 = dim * me / nt, c1 = dim * (me + 1) / nt;
        for (int64_t r = 0; r < rows; r++) {
            const float *x = in + r * dim, *dy = dout + r * dim;
            float m = mean[r], s = rstd[r];
            for (int64_t c = c0; c < c1; c++) {
                acc[c] += (double)dy[c] * (double)plc_ln_xhat(x[c], m, s);
                acc[dim + c] += (double)dy[c];
            }
        }
        for (int64_t c = c0; c < c1; c++) {
            if (dweight) dweight[c] += (float)acc[c];
            if (dbias) dbias[c] += (float)acc[dim + c];
        }
    }
    free(acc);
    return 0;
}
