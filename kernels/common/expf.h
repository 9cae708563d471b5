/* kernels/common/expf.h: the exponential of every element-wise kernel
 * (softmax, SiLU, GELU, cross-entropy), CPU and CUDA alike.
 *
 * glibc's expf is a call per element that no loop vectorises; this one is
 * branch-free arithmetic that a compiler turns into vector code (the CPU
 * kernels' loops are `omp simd`), with the same bits in a vector lane as
 * in scalar code: no fused multiply-adds (ISO C's default -ffp-contract=off)
 * and round-to-nearest throughout. Cephes's expf: x = n ln2 + r with
 * |r| <= ln2 / 2 (ln2 in two parts), a degree-7 polynomial for e^r (about
 * 1 ulp), times 2^n built from its bits.
 * Range: exp(x) = 0 for x < -86.5 (true value below 2.9e-38, flushed
 * rather than denormal), +inf for x > ln(FLT_MAX); NaN stays NaN. */
#ifndef PLC_KERNELS_EXPF_H
#define PLC_KERNELS_EXPF_H

#include <math.h>
#include <stdint.h>
#include <string.h>
#include "kernels/common/hd.h"

#define PLC_EXPF_LO (-86.5f)
#define PLC_EXPF_HI 88.72283935546875f /* ln(FLT_MAX) rounded down */

PLC_HD float plc_expf(float x)
{
    /* NaN clamps to the low end here (no float-to-int of a NaN below) and is
     * returned as NaN at the end */
    float xc = x > PLC_EXPF_LO ? x : PLC_EXPF_LO;
    xc = xc > PLC_EXPF_HI ? PLC_EXPF_HI : xc;
    /* n = round(x / ln2): adding 1.5 * 2^23 rounds to an integer */
    float n = (xc * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
    float r = (xc - n * 0.693359375f) - n * -2.12194440e-4f;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = (p * (r * r) + r) + 1.0f;
    /* 2^n = 2^(n-1) * 2: n - 1 + 127 stays in [1, 254] for n in [-125, 128] */
    uint32_t bits = (uint32_t)((int32_t)n + 126) << 23;
    float scale;
    memcpy(&scale, &bits, sizeof scale);
    float y = p * scale * 2.0f;
    y = x < PLC_EXPF_LO ? 0.0f : y;
    y = x > PLC_EXPF_HI ? INFINITY : y;
    return x != x ? x : y;
}

#endif
