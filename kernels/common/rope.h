/* kernels/common/rope.h: rotary position embedding on interleaved pairs.
 * Pair i (elements 2i, 2i+1) of a head at position p turns by the angle
 * p * theta^(-2i/hd) (docs/model.md). The angle, cos and sin are computed in
 * double and rounded once to float: at position 2048 an fp32 angle would
 * already be off by ~1e-4 rad, more than the oracle's tolerance. */
#ifndef PLC_KERNELS_ROPE_H
#define PLC_KERNELS_ROPE_H

#include <math.h>
#include <stdint.h>
#include "kernels/common/hd.h"

PLC_HD double plc_rope_angle(int32_t pos, int64_t pair, int64_t hd, double theta)
{
    return (double)pos * pow(theta, -2.0 * (double)pair / (double)hd);
}

PLC_HD void plc_rope_cos_sin(int32_t pos, int64_t pair, int64_t hd, double theta, float *c, float *s)
{
    double a = plc_rope_angle(pos, pair, hd, theta);
    *c = (float)cos(a);
    *s = (float)sin(a);
}

/* (y0, y1) = R(angle) (x0, x1) */
PLC_HD void plc_rope_rotate(float x0, float x1, float c, float s, float *y0, float *y1)
{
    *y0 = x0 * c - x1 * s;
    *y1 = x0 * s + x1 * c;
}

/* (y0, y1) = R(angle)^T (x0, x1): the backward of plc_rope_rotate */
PLC_HD void plc_rope_rotate_inverse(float x0, float x1, float c, float s, float *y0, float *y1)
{
    *y0 = x0 * c + x1 * s;
    *y1 = -x0 * s + x1 * c;
}

#endif
