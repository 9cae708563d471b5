/* lr_schedule.c: linear warmup, cosine decay to a floor, constant after. */
#include "common/lr_schedule.h"

#include <math.h>

#define PLC_PI 3.14159265358979323846

plc_lr_schedule plc_lr_schedule_from_train(const plc_train *t)
{
    plc_lr_schedule s = {t->lr_peak, t->lr_floor, t->warmup_steps, t->decay_steps};
    return s;
}

double plc_lr_at(const plc_lr_schedule *sch, int64_t s)
{
    if (s < 0) s = 0;
    if (s < sch->warmup_steps) return sch->lr_peak * (double)(s + 1) / (double)sch->warmup_steps;
    if (s >= sch->decay_steps) return sch->lr_floor;
    /* here warmup <= s < decay_steps, so the denominator is positive */
    double progress = (double)(s - sch->warmup_steps) / (double)(sch->decay_steps - sch->warmup_steps);
    return sch->lr_floor + (sch->lr_peak - sch->lr_floor) * (1.0 + cos(PLC_PI * progress)) / 2.0;
}
