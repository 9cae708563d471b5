/* report_load.h: spec loading and option parsing shared by solve, explain
 * and scale. */
#ifndef PLC_REPORT_LOAD_H
#define PLC_REPORT_LOAD_H

#include "compiler/frontend/spec.h"

/* plc_spec_load with a summary line on failure; 0 or -1 */
int plc_report_load(plc_arena *a, const char *cmd, const char *path, const plc_spec_opts *opts, plc_job *job);
/* a decimal number in [lo, hi], or -1 after an error message */
int plc_report_parse_count(const char *cmd, const char *opt, const char *text, long lo, long hi, long *out);

#endif
