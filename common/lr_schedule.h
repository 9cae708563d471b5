/* lr_schedule.h: the learning-rate schedule of docs/model.md.
 *
 *   s <  warmup:       lr_peak * (s + 1) / warmup
 *   s >= decay_steps:  lr_floor
 *   otherwise:         lr_floor + (lr_peak - lr_floor)
 *                                 * (1 + cos(pi (s - warmup) / (decay_steps - warmup))) / 2
 *
 * s is the 0-based step. Computed in double; the PyTorch oracle evaluates the
 * same expression with Python floats. */
#ifndef PLC_LR_SCHEDULE_H
#define PLC_LR_SCHEDULE_H

#include <stdint.h>

#include "plc/job.h"

typedef struct plc_lr_schedule {
    double lr_peak, lr_floor;
    int64_t warmup_steps, decay_steps;
} plc_lr_schedule;

plc_lr_schedule plc_lr_schedule_from_train(const plc_train *t);

/* learning rate of 0-based step s (s < 0 is treated as 0) */
double plc_lr_at(const plc_lr_schedule *sch, int64_t s);

#endif
