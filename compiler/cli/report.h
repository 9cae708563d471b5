/* report.h: how the solver's results are printed (text tables, YAML) by
 * plc solve, explain and scale. */
#ifndef PLC_REPORT_H
#define PLC_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include "compiler/lower/memplan.h"
#include "compiler/solver/solver.h"
#include "plc/plan.h"

#define PLC_GIB 1073741824.0

/* one-line description of a layout: "dp=8 tp=2 pp=4 cp=1 sp=on vpp=1 mb=1 1f1b ..." */
void plc_report_layout_line(FILE *out, const plc_layout *l);
/* "needs 85.3 GiB, 5.1 GiB over the 80.2 GiB limit" and the like */
void plc_report_reason(FILE *out, const plc_candidate *c, double limit_bytes);

/* plc solve, text: header, search statistics, ranked table (or every
 * candidate with all) */
void plc_report_solve_text(FILE *out, const plc_job *job, const plc_solution *s, int top, bool all);
/* the "no layout fits" report: closest candidates and what would make them
 * fit (re-estimates variants of them) */
void plc_report_no_fit(FILE *out, const plc_job *job, const plc_solution *s);

/* plc solve --format yaml (libyaml emitter). Returns 0, or -1 on an emitter
 * error (message on stderr). */
int plc_report_solve_yaml(FILE *out, const plc_job *job, const plc_solution *s, int top, bool all);

/* the winner lowered to a plan, for explain's comparison of the solver's
 * memory estimate with the plan's exact peak (plan NULL: why says why not) */
typedef struct plc_explain_plan {
    const plc_plan *plan;
    const plc_memplan_stats *stats; /* plan->layout.pp entries */
    const char *why;
} plc_explain_plan;

/* plc explain: memory by stage and component, the same against the lowered
 * plan, time breakdown, regions */
void plc_report_explain(FILE *out, const plc_job *job, const plc_solution *s, const plc_estimate *winner,
                        const plc_explain_plan *lowered);

/* header line describing the job */
void plc_report_job_header(FILE *out, const plc_job *job);

#endif
