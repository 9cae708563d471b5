/* plan_diff.h: the semantic comparison behind plc diff. */
#ifndef PLC_PLAN_DIFF_H
#define PLC_PLAN_DIFF_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "plc/plan.h"

/* One named setting of a plan as plc prints it ("train.lr.peak" = "0.003"):
 * every model, train, cluster and layout key and every catalog figure the
 * plan was compiled with, named as in a .plan file. */
typedef struct plc_plan_setting {
    char name[48];
    char text[64];
} plc_plan_setting;

/* the settings of p in a fixed order (the same names for every plan);
 * returns how many were written (at most max) */
int plc_plan_settings(const plc_plan *p, plc_plan_setting *out, int max);

typedef enum plc_diff_format { PLC_DIFF_TEXT, PLC_DIFF_YAML } plc_diff_format;

/* Prints every changed setting with old and new values, the predictions,
 * each pipeline stage's program changes (instruction counts by op,
 * communication volume by kind) and, with unified (text only), `diff -u` of
 * rank `rank`'s instruction listings. Returns 0 when the plans are equal
 * (same settings, same programs), 1 when they differ, -1 after a message
 * on stderr. */
int plc_plan_diff(FILE *out, const plc_plan *a, const plc_plan *b, const char *name_a, const char *name_b, int64_t rank,
                  bool unified, plc_diff_format format);

#endif
