/* compiler/cli/cli.h: the cli stage's public interface, what the other stages,
 * the tools and the tests may use; the sections below are named after the
 * files that implement them. Internal helpers: cli_int.h. */
#ifndef PLC_COMPILER_CLI_H
#define PLC_COMPILER_CLI_H

/* ---- report_text.c, report_yaml.c, report_nofit.c, report_explain.c -------- */
/* how the solver's results are printed (text tables, YAML) by
 * plc solve, explain and scale. */

#include <stdbool.h>
#include <stdio.h>

#include "compiler/lower/lower.h"
#include "compiler/solver/solver.h"
#include "compiler/plantools/plantools.h"
#include "plc/plan.h"

#define PLC_GIB 1073741824.0

/* one-line description of a layout: "dp=8 tp=2 pp=4 cp=1 sp=on vpp=1 mb=1 1f1b ..." */
void plc_report_layout_line(FILE *out, const plc_layout *l);
/* "needs 85.3 GiB, 5.1 GiB over the 80.2 GiB limit" and the like */
void plc_report_reason(FILE *out, const plc_candidate *c, double limit_bytes);

/* what a listing shows: the top K distinct rows, or every candidate (all,
 * after plc_report_sort_all); timing adds the search's wall time (left out
 * by default so that the output of the same spec is the same every run) */
typedef struct plc_report_opts {
    int top;
    bool all;
    bool timing;
    const char *no_range; /* why the predictions carry no range (report_range.c), NULL: they do */
} plc_report_opts;

/* sorts s->all by rank: fitting candidates by the objective, then the rest
 * by how close they come to fitting, invalid ones last */
void plc_report_sort_all(const plc_job *job, plc_solution *s);

/* Exact ties: two candidates with the same validity, fit, step time and
 * memory. Listings print a run of ties as one row, the first (the plainer
 * layout, see plc_report_tie_rule) naming how the others differ. */
bool plc_report_tied(const plc_candidate *a, const plc_candidate *b);
/* the dimensions where tie differs from kept: "recompute=selective" */
void plc_report_tie_text(FILE *out, const plc_layout *kept, const plc_layout *tie);
/* the solver's tie-break rule in words */
extern const char plc_report_tie_rule[];

/* plc solve, text: header, search statistics, ranked table (or every
 * candidate with all) */
void plc_report_solve_text(FILE *out, const plc_job *job, const plc_solution *s, const plc_report_opts *o);
/* the "no layout fits" report: closest candidates and what would make them
 * fit (re-estimates variants of them) */
void plc_report_no_fit(FILE *out, const plc_job *job, const plc_solution *s);

/* plc solve --format yaml. winner (NULL when nothing fits) adds its full
 * estimate: time and memory by stage and component. Returns 0, or -1 on an
 * emitter error (message on stderr). */
int plc_report_solve_yaml(FILE *out, const plc_job *job, const plc_solution *s, const plc_report_opts *o,
                          const plc_estimate *winner);

/* the winner lowered to a plan, for explain's comparison of the solver's
 * memory estimate with the plan's exact peak (plan NULL: why says why not) */
typedef struct plc_explain_plan {
    const plc_plan *plan;
    const plc_memplan_stats *stats; /* plan->layout.pp entries */
    const char *why;
    const char *no_range; /* why the predictions carry no range (report_range.c), NULL: they do */
} plc_explain_plan;

/* plc explain: memory by stage and component, the same against the lowered
 * plan, time breakdown, regions */
void plc_report_explain(FILE *out, const plc_job *job, const plc_solution *s, const plc_estimate *winner,
                        const plc_explain_plan *lowered);

/* plc explain --format yaml: the entries of the document (the caller opens
 * and closes it) */
void plc_report_explain_yaml(plc_yaml *y, const plc_job *job, const plc_solution *s, const plc_estimate *winner,
                             const plc_explain_plan *lowered);

/* YAML pieces shared by solve, explain, scale and compile:
 * the job (spec, model, parameters, gpu, gpus, nodes, tokens_per_step,
 * memory_limit, objective) as entries of the current mapping; */
void plc_report_yaml_job(plc_yaml *y, const plc_job *job);
/* a layout as a mapping under key (NULL inside a sequence); */
void plc_report_yaml_layout(plc_yaml *y, const char *key, const plc_layout *l);
/* an estimate as a mapping under key: layout, fit, time by component,
 * memory by stage and component; with plan, each stage's exact arena */
void plc_report_yaml_estimate(plc_yaml *y, const char *key, const plc_estimate *e, const plc_plan *plan);

/* Pictures (compiler/cli/report_svg.c), standalone SVG: plc scale --svg draws
 * throughput (with perfect scaling), MFU and per-GPU return against GPUs
 * for n sizes (NAN where nothing fits); plc explain --svg the memory per
 * rank of each pipeline stage by component against the limit, with the
 * plan's exact arena (plan may be NULL). */
void plc_report_scale_svg(FILE *out, const plc_job *job, int n, const double *gpus, const double *tokens_per_s,
                          const double *mfu, const double *per_gpu_return);
void plc_report_explain_svg(FILE *out, const plc_job *job, const plc_estimate *winner, const plc_plan *plan);

/* header line describing the job */
void plc_report_job_header(FILE *out, const plc_job *job);

#endif
