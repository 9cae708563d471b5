/* kernels/common/bf16.h: bfloat16 <-> fp32, round to nearest, ties to even.
 * bf16 is the top half of an fp32; NaN stays a (quiet) NaN, overflow rounds
 * to infinity as IEEE rounding does. */
#ifndef PLC_KERNELS_BF16_H
#define PLC_KERNELS_BF16_H

#include <stdint.h>
#include <string.h>
#include "kernels/common/hd.h"

PLC_HD uint16_t plc_f32_to_bf16(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    if ((u & 0x7fffffffu) > 0x7f800000u)           /* NaN: keep sign, force quiet bit */
        return (uint16_t)((u >> 16) | 0x0040u);
    uint32_t lsb = (u >> 16) & 1u;                  /* ties go to the even result */
    return (uint16_t)((u + 0x7fffu + lsb) >> 16);
}

PLC_HD float plc_bf16_to_f32(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

#endif
