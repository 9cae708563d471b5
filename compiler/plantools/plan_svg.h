/* plan_svg.h: plc trace --svg: a plan's predicted timeline as a picture. */
#ifndef PLC_PLAN_SVG_H
#define PLC_PLAN_SVG_H

#include <stdbool.h>
#include <stdio.h>

#include "plc/plan.h"

/* Simulates the plan with the time model (as plc trace does) and draws one
 * row per rank (all_ranks) or per pipeline stage: the compute stream with
 * forward, backward, recompute, communication on the compute stream,
 * optimizer and other work in distinct colours over a bubble-coloured
 * background (idle time), and a thin comm-stream row below it. Returns 0, or
 * -1 with err. */
int plc_trace_svg(const plc_plan *p, bool all_ranks, FILE *out, char *err, size_t errlen);

#endif
