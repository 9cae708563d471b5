/* kernels/common/activations.h: SiLU, SwiGLU and GELU element math. */
#ifndef PLC_KERNELS_ACTIVATIONS_H
#define PLC_KERNELS_ACTIVATIONS_H

#include <math.h>
#include "kernels/common/expf.h"
#include "kernels/common/hd.h"

PLC_HD float plc_sigmoid(float x) { return 1.0f / (1.0f + plc_expf(-x)); }

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
 * GPT-2 / Megatron activation):
 *   gelu(x) = 0.5 x (1 + tanh(u)),  u = k (x + a x^3),  k = sqrt(2/pi), a = 0.044715
 * evaluated as x * s with s = 0.5 (1 + tanh(u)) = sigmoid(2u), from one
 * e = exp(-2|u|) in [0, 1]: s and 1 - s are 1/(1 + e) and e/(1 + e) (which
 * is which follows the sign of u). No cancellation in either tail, and
 * an exponential (kernels/common/expf.h) costs far less than a tanhf. */
#define PLC_GELU_K 0.7978845608028654f /* sqrt(2 / pi) */
#define PLC_GELU_A 0.044715f

/* s = sigmoid(2u) and, if wanted, 1 - s */
PLC_HD float plc_gelu_gate(float x, float *one_minus_s)
{
    float u = PLC_GELU_K * (x + PLC_GELU_A * (x * x * x));
    float e = plc_expf(-2.0f * fabsf(u)), d = 1.0f + e;
    float big = 1.0f / d, small = e / d;
    if (one_minus_s) *one_minus_s = u >= 0.0f ? small : big;
    return u >= 0.0f ? big : small;
}

PLC_HD float plc_gelu(float x) { return x * plc_gelu_gate(x, (float *)0); }

/* the exact derivative of the formula above:
 *   gelu'(x) = s + 2 x s (1 - s) k (1 + 3 a x^2)
 * (0.5 (1 - tanh(u)^2) = 2 s (1 - s)). Where s (1 - s) is 0 the second term
 * is 0: written so, a huge |x| (whose x^2 overflows) gives 0 or 1 instead of
 * 0 * inf = NaN. */
PLC_HD float plc_gelu_grad(float x)
{
    float r, s = plc_gelu_gate(x, &r);
    float sr = s * r;
    return sr == 0.0f ? s : s + 2.0f * x * sr * (PLC_GELU_K * (1.0f + 3.0f * PLC_GELU_A * (x * x)));
}

#endif
