/* compiler/cli/cli_int.h: the cli stage's internal interface, for its own files
 * (and unit tests): the public header plus what only the stage uses. */
#ifndef PLC_COMPILER_CLI_INT_H
#define PLC_COMPILER_CLI_INT_H

#include "compiler/cli/cli.h"

/* ---- cmd_args.c ------------------------------------------------------------ */
/* argument handling shared by the commands that take one input
 * file (solve, explain, scale, compile, dump, trace) or read plans (dump,
 * diff, trace), so their messages read the same. Each prints "plc CMD: error: ..." to stderr and
 * returns -1 on a user error; the caller then exits with PLC_EXIT_INPUT. */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "common/atomic_file.h"
#include "plc/arena.h"
#include "plc/plan.h"

typedef void plc_usage_fn(FILE *out);

/* an argument the command's own options did not take: rejects an unknown
 * option (then prints the usage) or a second input file, else stores it in
 * *path. `what` names the input: "spec" or "plan". */
int plc_cmd_take_input(const char *cmd, const char *what, const char *arg, const char **path, plc_usage_fn *usage);

/* after the loop: "no WHAT given" and the usage when no input was named */
int plc_cmd_need_input(const char *cmd, const char *what, const char *path, plc_usage_fn *usage);

/* plc_plan_load_file into arena a, with the loader's message on failure */
int plc_cmd_load_plan(const char *cmd, plc_arena *a, const char *path, plc_plan *p);

/* --rank R of dump/diff/trace: a rank in [0, world) */
int plc_parse_rank(const char *cmd, const char *text, int64_t world, int64_t *out);

/* --format text|yaml: sets *yaml; -1 after a message for anything else */
int plc_cmd_parse_format(const char *cmd, const char *text, bool *yaml);

/* the value of option argv[*i], the next argument (*i steps onto it), or
 * NULL after "plc CMD: error: OPTION needs WHAT" when there is none */
const char *plc_cmd_value(const char *cmd, int argc, char **argv, int *i, const char *what);

/* The one opener of every file a command writes whole (-o FILE, --svg
 * FILE): "-" is standard output (never a file named "-"), anything else is
 * replaced atomically (common/atomic_file.h). open: 0, or 1 after
 * "plc CMD: error: ..." (a file that cannot be written is the user's to
 * fix: exit 1); write through out->f. close: commits (or flushes standard
 * output), 0 or 1 after the message; abort gives up, leaving the file as it
 * was. */
typedef struct plc_cmd_out {
    FILE *f;
    bool to_stdout;
    plc_atomic_file af;
} plc_cmd_out;
bool plc_cmd_is_stdout(const char *path);
/* is the file a compiled plan (its magic bytes), not a spec? Plans and
 * specs are told apart by content, never by name; an unreadable file goes
 * the plan's way, whose loader names the reason */
bool plc_cmd_is_plan_file(const char *path);
int plc_cmd_out_open(const char *cmd, const char *path, plc_cmd_out *out);
int plc_cmd_out_close(const char *cmd, plc_cmd_out *out);
void plc_cmd_out_abort(plc_cmd_out *out);

/* --svg FILE: draw(f, ctx) writes the picture through plc_cmd_out_open
 * ("-": standard output). 0, or 1 after "plc CMD: error: ..." */
int plc_cmd_write_svg(const char *cmd, const char *path, void (*draw)(FILE *f, const void *ctx), const void *ctx);

/* the lowering (plc_lower_arena) as the solver's judge of plrun's fit, for
 * every command that solves or estimates; judge->calls counts the layouts
 * lowered in this process */
struct plc_memory_judge;
struct plc_memory_judge *plc_cli_judge(void);

/* ---- cmd_*.c --------------------------------------------------------------- */
/* the plc subcommands. Each takes (argc, argv) with argv[0] the
 * command's name, prints its own --help, and returns the process exit status
 * (README, "Exit status"): library results are a plc_status mapped with
 * plc_status_exit (include/plc/status.h) to 0 ok, 1 input, 2 no layout or
 * does not fit, 3 internal; a command adds 4 when a CI gate failed (check
 * and compile: --max-memory, --min-mfu, --max-regression;
 * compiler/cli/cli_int.h). plc diff follows diff(1) instead: 0 equal,
 * 1 different, 2 an error. */

enum { PLC_EXIT_OK = 0, PLC_EXIT_INPUT = 1, PLC_EXIT_NO_LAYOUT = 2, PLC_EXIT_INTERNAL = 3, PLC_EXIT_GATE = 4 };

int plc_cmd_check(int argc, char **argv);   /* compiler/cli/cmd_check.c   */
int plc_cmd_fmt(int argc, char **argv);     /* compiler/cli/cmd_fmt.c     */
int plc_cmd_solve(int argc, char **argv);   /* compiler/cli/cmd_solve.c   */
int plc_cmd_explain(int argc, char **argv); /* compiler/cli/cmd_explain.c */
int plc_cmd_scale(int argc, char **argv);   /* compiler/cli/cmd_scale.c   */
int plc_cmd_compile(int argc, char **argv); /* compiler/cli/cmd_compile.c */
int plc_cmd_dump(int argc, char **argv);    /* compiler/cli/cmd_dump.c    */
int plc_cmd_diff(int argc, char **argv);    /* compiler/cli/cmd_diff.c    */
int plc_cmd_trace(int argc, char **argv);   /* compiler/cli/cmd_trace.c   */
int plc_cmd_export(int argc, char **argv);  /* compiler/cli/cmd_export.c  */

/* ---- gates.c --------------------------------------------------------------- */
/* the CI gates of plc check and plc compile.
 *
 *   --max-memory 80%        the peak per rank (compile: the plan's exact one,
 *                           check: the predicted one) is at most 80% of the
 *                           device's memory
 *   --min-mfu 45%           the predicted MFU is at least 45%
 *   --baseline OLD.bin      compare with a plan compiled before (its recorded
 *   --max-regression 2%     prediction): the figure --regression-on names
 *   --regression-on F       (mfu, the default, or tokens-per-gpu) may drop
 *                           by at most 2% (MFU: 2 points; tokens/s per GPU:
 *                           2% of the baseline's); MFU and tokens/s per GPU
 *                           are both reported, and the memory headroom
 *   --allow-different[=W]   a baseline of another model, cluster or engine
 *                           (W: a comma list of model, cluster, engine;
 *                           none: all three) is compared with a note, not
 *                           refused
 *
 * The spec's gates block (max_memory, min_mfu, max_regression) sets the same
 * thresholds; an option overrides the spec's key. Every line names the spec.
 * A gate that fails prints "plc CMD: gate failed: ..." on stderr and the
 * command exits with PLC_EXIT_GATE (4); see the cmd_*.c section above. */

#include <stdbool.h>
#include <stdio.h>

#include "compiler/solver/solver.h"
#include "plc/job.h"

/* the figure the regression gate judges */
typedef enum plc_gate_figure { PLC_GATE_ON_MFU, PLC_GATE_ON_TOKENS_PER_GPU } plc_gate_figure;

/* what a baseline may differ in (bits of plc_gates.allow_different) */
enum { PLC_GATE_SAME_MODEL = 1, PLC_GATE_SAME_CLUSTER = 2, PLC_GATE_SAME_ENGINE = 4 };

typedef struct plc_gates {
    double max_memory;     /* fraction of device memory; 0: no gate */
    double min_mfu;        /* fraction; 0: no gate */
    const char *baseline;  /* plan file or NULL */
    double max_regression; /* fraction (MFU: points), when has_regression */
    bool has_regression;
    plc_gate_figure regression_on;
    unsigned allow_different; /* PLC_GATE_SAME_* bits the baseline may differ in */
    /* where each threshold came from: "--max-memory 80%" or "gates.max_memory = 80%" */
    char from_memory[48], from_mfu[48], from_regression[48];
} plc_gates;

/* the options above, for --help texts */
extern const char plc_gates_help[];

/* Takes the gate options out of argv (as plc_spec_take_options does).
 * Returns 0, or -1 after a message on stderr. */
int plc_gates_take_options(const char *cmd, int *argc, char **argv, plc_gates *g);
/* the gates of one spec: the options' thresholds over the gates block's */
void plc_gates_for_job(const plc_gates *options, const plc_job *job, plc_gates *out);
/* true when any gate is set */
bool plc_gates_any(const plc_gates *g);

/* The baseline plan (g->baseline) loaded into arena a and matched against
 * the job: its model's shape, cluster (GPU, nodes, GPUs per node) and engine.
 * A difference not allowed (--allow-different) is refused: a message naming
 * each difference and -1 (exit 1); an allowed one is a note on stderr.
 * Returns 0 with *base filled, or -1. */
int plc_gates_baseline(const char *cmd, const plc_gates *g, const plc_job *job, plc_arena *a, plc_plan *base);

/* The per-rank memory the memory gate judges, and its name in the report:
 * plc compile passes the plan's exact figure (the most loaded stage's arena
 * plus the runtime's fixed costs, the figure it decides fit on), plc check
 * the solver's estimate (NULL: e->peak_bytes, "predicted"). */
typedef struct plc_gate_memory {
    double peak_bytes;
    const char *what; /* "exact", "predicted" */
} plc_gate_memory;

/* one gate's outcome, for the YAML (compile --format yaml: `gates`) */
typedef struct plc_gate_result {
    const char *name; /* "memory", "mfu", "regression", "headroom" */
    const char *from; /* the threshold's source (plc_gates.from_*), "" for headroom */
    double threshold; /* memory, headroom: the most share of device memory; mfu: the least MFU;
                       * regression: the most drop (points of MFU or a share of tokens/s per GPU) */
    double value;     /* the same figure for the new plan */
    bool pass;
} plc_gate_result;

typedef struct plc_gate_results {
    int n;
    plc_gate_result r[4];
    /* with a baseline: its figures against the new ones */
    const char *baseline;
    plc_gate_figure on;
    double mfu_old, mfu_new, tpg_old, tpg_new; /* tpg: tokens/s per GPU */
    double peak_bytes, limit_bytes;            /* the headroom's figures */
} plc_gate_results;

/* Checks the gates against the chosen layout's estimate (and mem, see
 * above; base: the baseline from plc_gates_baseline, or NULL); prints one
 * line per gate on out ("SPEC: gate ...: pass") and each failure on stderr;
 * fills res when not NULL. Returns 0 all pass, 1 a gate failed. */
int plc_gates_check(const char *cmd, const plc_gates *g, const plc_job *job, const plc_estimate *e,
                    const plc_gate_memory *mem, const plc_plan *base, FILE *out, plc_gate_results *res);

/* res as the `gates` mapping of a YAML document (report_yaml.c) */
void plc_report_yaml_gates(plc_yaml *y, const plc_gate_results *res);

/* ---- report_load.c --------------------------------------------------------- */
/* spec loading and option parsing shared by solve, explain
 * and scale. */

#include "compiler/frontend/frontend.h"

/* plc_spec_load with a summary line on failure; 0 or -1 */
int plc_report_load(plc_arena *a, const char *cmd, const char *path, const plc_spec_opts *opts, plc_job *job);
/* a decimal number in [lo, hi], or -1 after an error message */
int plc_report_parse_count(const char *cmd, const char *opt, const char *text, long lo, long hi, long *out);

/* ---- report_range.c -------------------------------------------------------- */
/* the error bars of solve and explain: the table error_bars.csv
 * ($PLC_ERROR_BARS, "none" for no ranges, else the built-in one), the
 * range of the job's kind on every candidate, the pick rule applied, and
 * the lines that word them (docs/solver.md, "Error bars"). */

/* the first row of the table at path matching engine, the GPU's catalog
 * name and the GPU count, in *out (out->lo 0: no row matches); -1 after a
 * message on stderr when the table cannot be read or is malformed */
int plc_report_find_bar(const char *cmd, const char *path, const char *engine, const char *gpu, int64_t gpus,
                        plc_error_bar *out);
/* s->bar and every candidate's range from the table, then the pick rule
 * (plc_pick_by_range) on s->ranked; 0 (*none says why when there is no
 * range), or -1 after a message (a malformed table: exit 1) */
int plc_report_ranges(plc_arena *a, const char *cmd, const plc_job *job, plc_solution *s, const char **none);
/* the `error_bars` mapping of a YAML document (report_yaml.c) */
void plc_report_yaml_bar(plc_yaml *y, const plc_solution *s, const char *none);
/* "error bars: measured/predicted throughput 0.93..1.06 (...)" */
void plc_report_bar_line(FILE *out, const plc_solution *s, const char *none);
/* the ranks (tie-folded rows, the first `rows` of them) whose range
 * overlaps rank 1's, rank 1 included, the first max of them in ranks;
 * their count */
int plc_report_within(const plc_candidate *c, int64_t n, bool fold, int64_t rows, int *ranks, int max);
/* "layouts 1-3 are within the prediction's error of each other ...", with
 * the suffix `more` when every row shown is; nothing without ranges */
void plc_report_within_line(FILE *out, const plc_candidate *c, int64_t n, bool fold, int64_t rows, const char *more);

/* ---- report_memplan.c ------------------------------------------------------ */
/* the lowered plan's exact memory against the solver's
 * estimate, per pipeline stage (plc compile and plc explain print it). */

#include <stdio.h>

#include "compiler/lower/lower.h"
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

/* ---- compile_plan.c -------------------------------------------------------- */
/* the plan plc compile writes, built in memory (compile, and diff of a spec) */

/* the plan, the solver's estimate of its layout, the memory plan's figures
 * per stage ([layout.pp]), the runtime's fixed bytes per rank and the limit
 * (memory_limit x device memory); all in the caller's arena */
typedef struct plc_compiled {
    plc_plan plan;
    plc_estimate *est;
    plc_memplan_stats *stats;
    double fixed, limit;
} plc_compiled;

/* Solves job (or takes its pinned layout) and lowers the first of the
 * solver's best layouts whose plan fits exactly. PLC_EXIT_OK, or the exit
 * status after "plc CMD: error: ..." on stderr: 1 an engine other than
 * plrun or an invalid pinned layout, 2 nothing fits (the per-stage figures
 * or the no-fit report first), 3 a lowering bug. */
int plc_cli_compile(const char *cmd, const plc_job *job, plc_arena *a, plc_compiled *out);

/* ---- export_*.c -------------------------------------------------------------
 * what plc export's command (cmd_export.c) and
 * its writers share: the input a writer reads, the header both outputs open
 * with, and each engine's output: export_megatron.c (a Megatron-LM launch
 * script in the flags of the Megatron-Core release its profile models: the
 * current one for engine megatron, r0.8 for megatron_r0_8) and export_torchtitan.c (a
 * torchtitan configuration module). A writer's checks say what its output
 * cannot express, so that the command refuses it instead of dropping it. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "plc/job.h"

/* what the export writes from */
typedef struct plc_export_in {
    const char *source; /* the spec or plan named on the command line */
    plc_model model;
    plc_train train;
    int64_t nodes, gpus_per_node;
    plc_layout layout;
    double step_time_s, mfu, peak_bytes, limit_bytes;
    const char *predicted_by; /* whose model the figures are: "engine megatron's model (...)" */
    char note[512]; /* why another layout than the solver's best, or "" */
    const char *base; /* torchtitan: MODULE:FUNCTION of the base configuration */
    const plc_engine_profile *profile; /* the engine's: what it runs and overlaps */
} plc_export_in;

/* why the output cannot say something of model m, training t, layout l
 * (NULL: a check of the model and training only) under profile p: NULL when
 * it can, else buf */
typedef const char *plc_export_unsaid_fn(const plc_model *m, const plc_train *t, const plc_layout *l,
                                         const plc_engine_profile *p, char *buf, size_t size);

/* ---- export_header.c -------------------------------------------------------
 * the opening lines both outputs share, each line after the first behind
 * comment ("# " for a shell script, "" inside a Python docstring): what
 * wrote it from what, the layout, plc's prediction and the note */
void plc_export_header(FILE *out, const plc_export_in *in, const char *comment, const char *what, const char *option);

/* ---- export_megatron.c -----------------------------------------------------
 * one set a release: the current Megatron-Core (engine megatron) and r0.8
 * (engine megatron_r0_8) */
plc_export_unsaid_fn plc_export_megatron_model_unsaid, plc_export_megatron_unsaid;
void plc_export_megatron_write(FILE *out, const plc_export_in *in);
plc_export_unsaid_fn plc_export_megatron_r0_8_model_unsaid, plc_export_megatron_r0_8_unsaid;
void plc_export_megatron_r0_8_write(FILE *out, const plc_export_in *in);

/* ---- export_torchtitan.c --------------------------------------------------- */
plc_export_unsaid_fn plc_export_torchtitan_model_unsaid, plc_export_torchtitan_unsaid;
void plc_export_torchtitan_write(FILE *out, const plc_export_in *in);

#endif
