/* kernels/common/activations.h: SiLU and SwiGLU element math. */
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

#endif
