/* report_memplan.h: the lowered plan's exact memory against the solver's
 * estimate, per pipeline stage (plc compile and plc explain print it). */
#ifndef PLC_REPORT_MEMPLAN_H
#define PLC_REPORT_MEMPLAN_H

#include <stdio.h>

#include "compiler/lower/memplan.h"
#include "compiler/solver/solver.h"
#include "plc/plan.h"

/* One line per stage (the first eight when there are more than nine; the
 * caller prints the heading): the
 * plan's exact arena (persistent state + activations and temporaries at
 * their peak) against the solver's estimate of the same buffers (weights
 * to temporaries) and its full estimate. st has p->layout.pp entries. */
void plc_report_memplan(FILE *out, const plc_plan *p, const plc_estimate *est, const plc_memplan_stats *st);

/* The plan's exact need per stage: arena + fixed (plc_runtime_fixed_bytes)
 * against limit, one line per stage (all of them over the limit, else the
 * first eight). Returns the number of stages over the limit. */
int plc_report_plan_fit(FILE *out, const plc_plan *p, double fixed, double limit);

#endif
