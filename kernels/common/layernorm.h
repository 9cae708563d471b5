/* kernels/common/layernorm.h: LayerNorm math shared by the C and CUDA
 * kernels (torch.nn.LayerNorm: biased variance, eps inside the root).
 *
 *   y = xhat * w + b,   xhat = (x - mean) * rstd,   rstd = 1 / sqrt(var + eps)
 *
 * mean and var are computed in double (two passes: the mean, then the
 * centred squares) and rounded once to fp32; forward and backward both use
 * the rounded pair, which is what the forward saves (two floats per row).
 * The backward of one row, with g = dy * w:
 *
 *   dx = rstd * (g - mean(g) - xhat * mean(g * xhat))
 *   dw += dy * xhat,   db += dy          (summed over rows)
 *
 * The row sums here run over four fixed lanes (as kernels/common/reduce.h),
 * so a row's statistics do not depend on who computes them. */
#ifndef PLC_KERNELS_LAYERNORM_H
#define PLC_KERNELS_LAYERNORM_H

#include <math.h>
#include <stdint.h>
#include "kernels/common/hd.h"
#include "kernels/common/reduce.h"

/* 1 / sqrt(var + eps), var the biased variance of the row */
PLC_HD float plc_ln_rstd(double var, float eps) { return (float)(1.0 / sqrt(var + (double)eps)); }

/* the row's mean and rstd, both rounded once from double */
PLC_HD void plc_ln_row_stats(const float *x, int64_t dim, float eps, float *mean, float *rstd)
{
    double m = plc_sum_f64(x, dim) / (double)dim;
    double acc[4] = {0, 0, 0, 0};
    int64_t i = 0;
    for (; i + 4 <= dim; i += 4)
        for (int l = 0; l < 4; l++) {
            double d = (double)x[i + l] - m;
            acc[l] += d * d;
        }
    for (int l = 0; i < dim; i++, l++) {
        double d = (double)x[i] - m;
        acc[l] += d * d;
    }
    double var = ((acc[0] + acc[2]) + (acc[1] + acc[3])) / (double)dim;
    *mean = (float)m;
    *rstd = plc_ln_rstd(var, eps);
}

PLC_HD float plc_ln_xhat(float x, float mean, float rstd) { return (x - mean) * rstd; }

PLC_HD float plc_ln_forward_element(float x, float mean, float rstd, float w, float b)
{
    return plc_ln_xhat(x, mean, rstd) * w + b;
}

/* dx of one element, given the row's mg = mean(g) and mgx = mean(g * xhat) */
PLC_HD float plc_ln_backward_element(float dy, float x, float w, float mean, float rstd, float mg, float mgx)
{
    return rstd * ((dy * w - mg) - plc_ln_xhat(x, mean, rstd) * mgx);
}

/* mean(g) and mean(g * xhat) of one row, in double over four fixed lanes */
PLC_HD void plc_ln_backward_row(const float *dy, const float *x, const float *w, int64_t dim, float mean,
                                float rstd, float *mg, float *mgx)
{
    double a[4] = {0, 0, 0, 0}, b[4] = {0, 0, 0, 0};
    for (int64_t i = 0; i < dim; i++) {
        int l = (int)(i & 3);
        double g = (double)dy[i] * (double)w[i];
        a[l] += g;
        b[l] += g * (double)plc_ln_xhat(x[i], mean, rstd);
    }
    *mg = (float)(((a[0] + a[2]) + (a[1] + a[3])) / (double)dim);
    *mgx = (float)(((b[0] + b[2]) + (b[1] + b[3])) / (double)dim);
}

#endif
