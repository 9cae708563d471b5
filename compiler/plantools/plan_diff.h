/* plan_diff.h: the semantic comparison behind plc diff. */
#ifndef PLC_PLAN_DIFF_H
#define PLC_PLAN_DIFF_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "plc/plan.h"

/* Prints layout changes, predicted time and memory, per-stage program
 * changes (instruction counts by op, communication volume by kind) and,
 * with unified, `diff -u` of rank `rank`'s instruction listings.
 * Returns 0, or -1 after a message on stderr. */
int plc_plan_diff(FILE *out, const plc_plan *a, const plc_plan *b, const char *name_a, const char *name_b, int64_t rank,
                  bool unified);

#endif
