/* kernels/common/activations.h: SiLU, SwiGLU and GELU element math. */
#ifndef PLC_KERNELS_ACTIVATIONS_H
#define PLC_KERNELS_ACTIVATIONS_H

#include <math.h>
#include "kernels/common/hd.h"

PLC_HD float plc_sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }

/* silu(g) = g * sigmoid(g) (docs/model.md writes g / (1 + exp(-g))) */
PLC_HD float plc_silu(float g) { return g * plc_sigmoid(g); }

/* d silu / dg = s (1 + g (1 - s)), s = sigmoid(g) */
PLC_HD float plc_silu_grad(float g)
{
    float s = plc_sigmoid(g);
    return s * (1.0f + g * (1.0f - s));
}

/* SwiGLU backward for one element: accumulates into *dgate and *dup. */
PLC_HD void plc_swiglu_backward_element(float dout, float gate, float up, float *dgate, float *dup)
{
    float s = plc_sigmoid(gate);
    *dgate += dout * up * (s * (1.0f + gate * (1.0f - s)));
    *dup += dout * (gate * s);
}

/* GELU, tanh approximation (torch's F.gelu(x, approximate='tanh'), the
 * GPT-2 / Megatron activation), written as torch writes it:
 *   gelu(x) = 0.5 x (1 + tanh(u)),  u = k (x + a x^3),  k = sqrt(2/pi), a = 0.044715 */
#define PLC_GELU_K 0.7978845608028654f /* sqrt(2 / pi) */
#define PLC_GELU_A 0.044715f

PLC_HD float plc_gelu(float x)
{
    float u = PLC_GELU_K * (x + PLC_GELU_A * (x * x * x));
    return 0.5f * x * (1.0f + tanhf(u));
}

/* the exact derivative of the formula above:
 *   gelu'(x) = 0.5 (1 + t) + 0.5 x (1 - t^2) k (1 + 3 a x^2),  t = tanh(u)
 * Where t^2 rounds to 1 the second term is 0: written so, a huge |x| (whose
 * x^2 overflows) gives 0 or 1 instead of 0 * inf = NaN. */
PLC_HD float plc_gelu_grad(float x)
{
    float x2 = x * x;
    float t = tanhf(PLC_GELU_K * (x + PLC_GELU_A * (x2 * x)));
    float sech2 = 1.0f - t * t;
    float right = sech2 == 0.0f ? 0.0f : 0.5f * x * sech2 * (PLC_GELU_K * (1.0f + 3.0f * PLC_GELU_A * x2));
    return 0.5f * (1.0f + t) + right;
}

#endif
