/* kernels/common/adamw.h: one AdamW element update, PyTorch's formulation
 * (torch.optim.AdamW, foreach=False): decoupled decay first, then
 *   param -= step_size * m / (sqrt(v) / bc2_sqrt + eps)
 * with step_size = lr / (1 - beta1^t) and bc2_sqrt = sqrt(1 - beta2^t).
 * The per-step scalars are derived in double once (as PyTorch does with
 * Python floats): 1 - 0.999f in fp32 would be off by 1.3e-5 relative. */
#ifndef PLC_KERNELS_ADAMW_H
#define PLC_KERNELS_ADAMW_H

#include <math.h>
#include <stdint.h>
#include "kernels/common/hd.h"

typedef struct plc_adamw_consts {
    float decay_keep;      /* 1 - lr * weight_decay */
    float beta1, one_minus_beta1;
    float beta2, one_minus_beta2;
    float eps;
    float step_size;       /* lr / (1 - beta1^t) */
    float bc2_sqrt;        /* sqrt(1 - beta2^t) */
} plc_adamw_consts;

/* t is the 1-based update count. */
PLC_HD plc_adamw_consts plc_adamw_prepare(int64_t t, double lr, double beta1, double beta2,
                                          double eps, double weight_decay)
{
    plc_adamw_consts c;
    c.decay_keep = (float)(1.0 - lr * weight_decay);
    c.beta1 = (float)beta1;
    c.one_minus_beta1 = (float)(1.0 - beta1);
    c.beta2 = (float)beta2;
    c.one_minus_beta2 = (float)(1.0 - beta2);
    c.eps = (float)eps;
    c.step_size = (float)(lr / (1.0 - pow(beta1, (double)t)));
    c.bc2_sqrt = (float)sqrt(1.0 - pow(beta2, (double)t));
    return c;
}

/* g is the (already clip-scaled) gradient of the element. */
PLC_HD void plc_adamw_element(float *param, float *m, float *v, float g, const plc_adamw_consts *c)
{
    float p = *param * c->decay_keep;
    float mn = c->beta1 * *m + c->one_minus_beta1 * g;
    float vn = c->beta2 * *v + c->one_minus_beta2 * g * g;
    float denom = sqrtf(vn) / c->bc2_sqrt + c->eps;
    *param = p - c->step_size * (mn / denom);
    *m = mn;
    *v = vn;
}

#endif
