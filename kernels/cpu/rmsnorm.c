/* kernels/cpu/rmsnorm.c: RMSNorm forward and backward (docs/model.md). */
#include "kernels/kernels.h"
#include "kernels/common/reduce.h"
#include "kernels/cpu/simd.h"

#include <stdlib.h>

/* columns per work item of the weight gradient; rows per block of the
 * backward (and its share of the weight gradient) */
#define DW_CHUNK 32
#define DW_BLOCK 64

/* sum over c of dy[c] w[c] x[c] in double, over 8 fixed lanes */
static inline double dot3_f64(const float *dy, const float *w, const float *x, int64_t n)
{
    double acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    int64_t c = 0;
    for (; c + 8 <= n; c += 8)
        for (int l = 0; l < 8; l++) acc[l] += (double)dy[c + l] * w[c + l] * x[c + l];
    for (int l = 0; c < n; c++, l++) acc[l] += (double)dy[c] * w[c] * x[c];
    return ((acc[0] + acc[4]) + (acc[2] + acc[6])) + ((acc[1] + acc[5]) + (acc[3] + acc[7]));
}

/* a block of rows; the parallel loops call these per block (kernels/cpu/simd.h) */
PLC_VECTOR_CLONES static void fwd_rows(float *out, float *rstd, const float *in, const float *weight,
                                       int64_t rows, int64_t dim, float eps)
{
    for (int64_t r = 0; r < rows; r++) {
        const float *x = in + r * dim;
        float *y = out + r * dim;
        float s = plc_rms_rstd(plc_sum_squares_f64(x, dim), dim, eps);
#pragma omp simd
        for (int64_t c = 0; c < dim; c++) y[c] = (x[c] * s) * weight[c];
        if (rstd) rstd[r] = s;
    }
}

/* dx += s w dy - k x (set: dx = 0 + ...) for a block of rows; with part, also part[c] +=
 * dy[r, c] x[r, c] s[r] over its rows in order (the weight gradient's
 * share of the block) */
PLC_VECTOR_CLONES static void bwd_rows(float *din, double *part, const float *dout, const float *in,
                                       const float *weight, const float *rstd, int64_t rows, int64_t dim,
                                       int set)
{
    for (int64_t r = 0; r < rows; r++) {
        const float *x = in + r * dim, *dy = dout + r * dim;
        float *dx = din + r * dim;
        float s = rstd[r];
        float k = (float)(dot3_f64(dy, weight, x, dim) * (double)s * s * s / (double)dim);
#pragma omp simd
        for (int64_t c = 0; c < dim; c++) dx[c] = (set ? 0.0f : dx[c]) + (s * weight[c] * dy[c] - k * x[c]);
        if (!part) continue;
        double sd = s;
#pragma omp simd
        for (int64_t c = 0; c < dim; c++) part[c] += (double)dy[c] * x[c] * sd;
    }
}

/* acc[c] += dy[r, c] x[r, c] s[r] over rows r in order, for c < n: the
 * columns are independent lanes */
PLC_VECTOR_CLONES static void dw_columns(double *acc, const float *dout, const float *in, const float *rstd,
                                         int64_t rows, int64_t dim, int64_t n)
{
    for (int64_t r = 0; r < rows; r++) {
        const float *x = in + r * dim, *dy = dout + r * dim;
        double s = rstd[r];
#pragma omp simd
        for (int64_t c = 0; c < n; c++) acc[c] += (double)dy[c] * x[c] * s;
    }
}

/* dweight[c] += the sum of the blocks' shares, in block order */
PLC_VECTOR_CLONES static void dw_sum_parts(float *dweight, const double *parts, int64_t nparts, int64_t dim,
                                           int64_t c0, int64_t n)
{
    double acc[DW_CHUNK] = {0};
    for (int64_t p = 0; p < nparts; p++)
#pragma omp simd
        for (int64_t c = 0; c < n; c++) acc[c] += parts[p * dim + c0 + c];
    for (int64_t c = 0; c < n; c++) dweight[c0 + c] += (float)acc[c];
}

#define ROW_BLOCK 16

void plc_k_rmsnorm_forward(float *out, float *rstd, const float *in, const float *weight,
                           int64_t rows, int64_t dim, float eps)
{
    const int64_t blocks = (rows + ROW_BLOCK - 1) / ROW_BLOCK;
#pragma omp parallel for schedule(dynamic, 1) if (rows * dim > 32768)
    for (int64_t b = 0; b < blocks; b++) {
        int64_t r = b * ROW_BLOCK, n = rows - r < ROW_BLOCK ? rows - r : ROW_BLOCK;
        fwd_rows(out + r * dim, rstd ? rstd + r : NULL, in + r * dim, weight, n, dim, eps);
    }
}

/* y = x s w with s = (mean(x^2) + eps)^(-1/2):
 *   dx_c = s w_c dy_c - x_c s^3 / dim * sum_k(dy_k w_k x_k)
 *   dw_c = sum over rows of dy_c x_c s */
static void rmsnorm_backward(float *din, float *dweight, const float *dout, const float *in, const float *weight,
                             const float *rstd, int64_t rows, int64_t dim, int set)
{
    const int64_t blocks = (rows + DW_BLOCK - 1) / DW_BLOCK, nchunks = (dim + DW_CHUNK - 1) / DW_CHUNK;
    /* with din, one pass: each block of rows adds its share of the weight
     * gradient into a part of its own (zeroed), summed in block order after;
     * without din (or without the memory for the parts), the columns in
     * chunks, each adding its rows in order */
    double *parts = din && dweight ? calloc((size_t)(blocks * dim), sizeof *parts) : NULL;
    if (din) {
#pragma omp parallel for schedule(dynamic, 1) if (rows * dim > 32768)
        for (int64_t b = 0; b < blocks; b++) {
            int64_t r = b * DW_BLOCK, n = rows - r < DW_BLOCK ? rows - r : DW_BLOCK;
            bwd_rows(din + r * dim, parts ? parts + b * dim : NULL, dout + r * dim, in + r * dim, weight,
                     rstd + r, n, dim, set);
        }
    }
    if (dweight && parts) {
#pragma omp parallel for schedule(dynamic, 1) if (rows * dim > 32768)
        for (int64_t ch = 0; ch < nchunks; ch++) {
            int64_t c0 = ch * DW_CHUNK, n = dim - c0 < DW_CHUNK ? dim - c0 : DW_CHUNK;
            dw_sum_parts(dweight, parts, blocks, dim, c0, n);
        }
    } else if (dweight) {
#pragma omp parallel for schedule(dynamic, 1) if (rows * dim > 32768)
        for (int64_t ch = 0; ch < nchunks; ch++) {
            int64_t c0 = ch * DW_CHUNK, n = dim - c0 < DW_CHUNK ? dim - c0 : DW_CHUNK;
            double acc[DW_CHUNK] = {0};
            dw_columns(acc, dout + c0, in + c0, rstd, rows, dim, n);
            for (int64_t c = 0; c < n; c++) dweight[c0 + c] += (float)acc[c];
        }
    }
    free(parts);
}

void plc_k_rmsnorm_backward(float *din, float *dweight, const float *dout,
                            const float *in, const float *weight, const float *rstd,
                            int64_t rows, int64_t dim)
{
    rmsnorm_backward(din, dweight, dout, in, weight, rstd, rows, dim, 0);
}

void plc_k_rmsnorm_backward_set(float *din, float *dweight, const float *dout,
                                const float *in, const float *weight, const float *rstd,
                                int64_t rows, int64_t dim)
{
    rmsnorm_backward(din, dweight, dout, in, weight, rstd, rows, dim, 1);
}
