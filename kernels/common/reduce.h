/* kernels/common/reduce.h: deterministic reductions and scalar helpers for
 * normalisation and softmax. Every sum here has a fixed association order
 * (lanes of 8 or 4, combined in a fixed tree) that depends only on n, never
 * on threads, so a result is the same bits wherever it is computed. */
#ifndef PLC_KERNELS_REDUCE_H
#define PLC_KERNELS_REDUCE_H

#include <math.h>
#include <stdint.h>
#include "kernels/common/expf.h"
#include "kernels/common/hd.h"

/* dot product in fp32 over 8 fixed lanes (vectorisable without fast-math) */
PLC_HD float plc_dot(const float *a, const float *b, int64_t n)
{
    float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (int l = 0; l < 8; l++) acc[l] += a[i + l] * b[i + l];
    for (int l = 0; i < n; i++, l++) acc[l] += a[i] * b[i];
    return ((acc[0] + acc[4]) + (acc[2] + acc[6])) + ((acc[1] + acc[5]) + (acc[3] + acc[7]));
}

/* sum of x in double over 4 fixed lanes */
PLC_HD double plc_sum_f64(const float *x, int64_t n)
{
    double acc[4] = {0, 0, 0, 0};
    int64_t i = 0;
    for (; i + 4 <= n; i += 4)
        for (int l = 0; l < 4; l++) acc[l] += (double)x[i + l];
    for (int l = 0; i < n; i++, l++) acc[l] += (double)x[i];
    return (acc[0] + acc[2]) + (acc[1] + acc[3]);
}

/* sum of x^2 in double over 4 fixed lanes */
PLC_HD double plc_sum_squares_f64(const float *x, int64_t n)
{
    double acc[4] = {0, 0, 0, 0};
    int64_t i = 0;
    for (; i + 4 <= n; i += 4)
        for (int l = 0; l < 4; l++) acc[l] += (double)x[i + l] * (double)x[i + l];
    for (int l = 0; i < n; i++, l++) acc[l] += (double)x[i] * (double)x[i];
    return (acc[0] + acc[2]) + (acc[1] + acc[3]);
}

/* RMSNorm: 1 / sqrt(mean(x^2) + eps) from the row's sum of squares */
PLC_HD float plc_rms_rstd(double sum_squares, int64_t dim, float eps)
{
    return (float)(1.0 / sqrt(sum_squares / (double)dim + (double)eps));
}

/* exp(x - max) that is 0 for a masked score (x = -inf) or an empty row */
PLC_HD float plc_exp_shifted(float x, float max)
{
    return (x == -INFINITY) ? 0.0f : plc_expf(x - max);
}

/* Online softmax: fold a new running maximum in. Returns the factor that
 * rescales the old running sum and accumulator (0 when nothing was seen). */
PLC_HD float plc_online_rescale(float old_max, float new_max)
{
    return (old_max == -INFINITY) ? 0.0f : plc_expf(old_max - new_max);
}

#endif
