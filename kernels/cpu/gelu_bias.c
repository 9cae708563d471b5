/* kernels/cpu/gelu_bias.c: the GELU activation (tanh approximation,
 * kernels/common/activations.h) and the bias of a linear layer. The bias
 * gradient sums over rows, so it is split over columns: each thread owns a
 * column range and adds the rows in order, in double, and the result is the
 * same bits for any thread count. */
#include "kernels/kernels.h"
#include "kernels/cpu/simd.h"
#include "kernels/common/activations.h"

#include <omp.h>
#include <stdlib.h>

#define PAR_MIN 65536 /* elements below which threads cost more than they save */

void plc_k_gelu_forward(float *out, const float *in, int64_t n)
{
#pragma omp parallel for schedule(dynamic, PLC_EW_CHUNK) if (n > PAR_MIN)
    for (int64_t i = 0; i < n; i++) out[i] = plc_gelu(in[i]);
}

void plc_k_gelu_backward(float *din, const float *dout, const float *in, int64_t n)
{
#pragma omp parallel for schedule(dynamic, PLC_EW_CHUNK) if (n > PAR_MIN)
    for (int64_t i = 0; i < n; i++) din[i] += dout[i] * plc_gelu_grad(in[i]);
}

void plc_k_bias_add(float *out, const float *in, const float *bias, int64_t rows, int64_t cols)
{
#pragma omp parallel for schedule(dynamic, 16) if (rows * cols > PAR_MIN)
    for (int64_t r = 0; r < rows; r++) {
        const float *x = in + r * cols;
        float *y = out + r * cols;
        for (int64_t c = 0; c < cols; c++) y[c] = x[c] + bias[c];
    }
}

int plc_k_bias_backward(float *dbias, const float *dout, int64_t rows, int64_t cols)
{
    double *acc = calloc((size_t)(cols + 1), sizeof *acc); /* a double per column */
    if (!acc) return -1;
#pragma omp parallel if (rows * cols > PAR_MIN)
    {
        int64_t nt = omp_get_num_threads(), me = omp_get_thread_num();
        int64_t c0 = cols * me / nt, c1 = cols * (me + 1) / nt;
        for (int64_t r = 0; r < rows; r++) {
            const float *g = dout + r * cols;
            for (int64_t c = c0; c < c1; c++) acc[c] += (double)g[c];
        }
        for (int64_t c = c0; c < c1; c++) dbias[c] += (float)acc[c];
    }
    free(acc);
    return 0;
}
