/* compiler/plantools/plantools.h: the plantools stage's public interface, what the other stages,
 * the tools and the tests may use; the sections below are named after the
 * files that implement them. Internal helpers: plantools_int.h. */
#ifndef PLC_COMPILER_PLANTOOLS_H
#define PLC_COMPILER_PLANTOOLS_H

/* ---- plan_check.c ---------------------------------------------------------- */
/* compile-time checks of a lowered plan, run before any plan
 * is written: every SEND has its RECV (same count, posting order), every
 * collective is entered by all members of its communicator in the same
 * order with the same operation and count, and a simulation of all ranks'
 * programs terminates (compiler/plantools/plantools.h). A failure is a compiler bug;
 * the message names the rank and the instruction. */

#include <stddef.h>

#include "plc/plan.h"
#include "plc/status.h"

/* worlds up to this size are simulated rank by rank; larger ones one rank
 * per stage (exact by symmetry, see plan_sim.c below) */
#define PLC_CHECK_ALL_RANKS_MAX 64

/* PLC_OK, or the first failure in err: PLC_E_DEADLOCK when the ranks cannot
 * all finish, PLC_E_INTERNAL another violation; out of memory raises the
 * command's trap (plc_oom_raise, plc/arena.h) */
plc_status plc_plan_check(const plc_plan *p, char *err, size_t errlen);
/* its last part alone: do all ranks finish (PLC_OK), or PLC_E_DEADLOCK?
 * It reads no buffer offsets, so it runs on a plan not yet placed */
plc_status plc_plan_check_finishes(const plc_plan *p, char *err, size_t errlen);

/* ---- plan_diff.c ----------------------------------------------------------- */
/* the semantic comparison behind plc diff. */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "plc/plan.h"

/* One named setting of a plan as plc prints it ("train.lr.peak" = "0.003"):
 * every key of the spec the plan was compiled from, as resolved (defaults
 * filled in, -D overrides applied): model, train, cluster and every
 * catalog figure, and the layout block's constraints ("layout.tp" =
 * "{1, 2, 4}", "layout.memory_limit" = "90%"), named as in a .plan file.
 * The layout the solver picked is not a setting (plc_plan_layout_changes). */
typedef struct plc_plan_setting {
    char name[48];
    char text[192];
} plc_plan_setting;

/* the settings of p in a fixed order (the same names for every plan);
 * returns how many were written (at most max) */
int plc_plan_settings(const plc_plan *p, plc_plan_setting *out, int max);

/* a dimension of the picked layout that differs between plans a and b;
 * pinned: b's layout block fixes it to that value (else the solver chose it) */
typedef struct plc_layout_change {
    plc_layout_dim dim;
    int64_t old_value, new_value;
    bool pinned;
} plc_layout_change;

/* the changed dimensions in PLC_LAYOUT_FIELDS order (out holds
 * PLC_LD_COUNT); returns how many */
int plc_plan_layout_changes(const plc_plan *a, const plc_plan *b, plc_layout_change *out);

/* text: the full comparison; yaml: the same for bots; short: a few lines
 * for a pull-request comment (changed settings, layout with attribution,
 * predictions, peak memory per stage) */
typedef enum plc_diff_format { PLC_DIFF_TEXT, PLC_DIFF_YAML, PLC_DIFF_SHORT } plc_diff_format;

/* Prints every changed setting with old and new values, the changed layout
 * dimensions and who picked them, the predictions (step time, tokens/s,
 * MFU, bubble, peak memory), each pipeline stage's program changes (arena,
 * instruction counts by op, communication volume by kind) and, with
 * unified (text only), `diff -u` of rank `rank`'s instruction listings.
 * Returns 0 when the plans are equal (same settings, layout and programs),
 * 1 when they differ, -1 after a message on stderr. */
int plc_plan_diff(FILE *out, const plc_plan *a, const plc_plan *b, const char *name_a, const char *name_b, int64_t rank,
                  bool unified, plc_diff_format format);

/* ---- plan_dump.c ----------------------------------------------------------- */
/* the stable text form of a plan (plc dump, plc diff, golden
 * tests). One line per group, buffer and instruction; nothing in it depends
 * on the machine, the time or memory addresses, so dumps diff well. */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "plc/plan.h"

/* the header: spec, model, training settings, layout, predictions, groups,
 * stage map */
void plc_dump_header(FILE *out, const plc_plan *p);

/* one program: its buffers (with_buffers) and its instructions, the loops
 * the plan file folded (plan.h's plc_fold) shown once, their first
 * iteration between "loop Nx {" and "}"; a program without folds prints
 * every row. numbered
 * prints instruction indices (unnumbered listings give waits as a distance
 * back, so that inserting an instruction changes few lines: plc diff) */
void plc_dump_program(FILE *out, const plc_plan *p, uint32_t program, bool with_buffers, bool numbered);

/* one instruction line (no newline): "   123 bwd   L3  m1  MATMUL  ..." */
void plc_dump_instr(FILE *out, const plc_plan *p, const plc_program *g, uint32_t index, bool numbered);

/* everything (rank < 0), or the header and the program of one world rank */
void plc_dump_plan(FILE *out, const plc_plan *p, int64_t rank, bool with_buffers);

/* ---- plan_sim.c ------------------------------------------------------------ */
/* a discrete-event simulation of every rank's program, shared
 * by the compile-time checks (plan_check, zero costs: does it terminate, do
 * sends and receives match, do all members enter each collective in the
 * same order) and by `plc trace` (the time model's costs: the predicted
 * timeline).
 *
 * Semantics, as plan.h states them: compute-stream instructions run in list
 * order, each after the previous one; a compute-stream SEND/RECV or
 * collective blocks until all its parties have posted it. Comm-stream
 * instructions are posted when reached and complete when matched, without
 * blocking the list; an instruction with wait >= 0 starts after that
 * instruction completed. Point-to-point messages between two ranks match in
 * posting order; the n-th call of each member of a communicator matches the
 * n-th call of every other member, and must be the same operation with the
 * same count. A comm stream carries one collective at a time; messages
 * travel independently.
 *
 * Ranks. With all_ranks, every world rank is simulated. Otherwise one rank
 * per pipeline stage (tp = cp = dp = 0): the ranks of a stage run the same
 * program and meet each other only in groups without PLC_DIM_PP, where
 * they arrive in lock-step, so those collectives complete as soon as the
 * representative arrives; what couples stages (send/recv, groups with PP)
 * is simulated exactly. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "plc/plan.h"
#include "plc/status.h"

/* seconds an instruction takes once it can start (for a collective or a
 * message: once every party has arrived) */
typedef double (*plc_sim_cost_fn)(void *ctx, const plc_plan *p, const plc_program *g, const plc_instr *in);
/* called for every instruction that takes time, as it is scheduled */
typedef void (*plc_sim_event_fn)(void *ctx, int64_t world_rank, int64_t stage, uint32_t instr,
                                 const plc_instr *in, double start, double end);

typedef struct plc_sim_opts {
    bool all_ranks;
    plc_sim_cost_fn cost; /* NULL: every instruction takes 0 s */
    void *cost_ctx;
    plc_sim_event_fn event; /* NULL: none */
    void *event_ctx;
} plc_sim_opts;

typedef struct plc_sim_result {
    double end_time;     /* when the last rank finished the step */
    int64_t ranks;       /* ranks simulated */
    int64_t instructions;/* instructions executed over all simulated ranks */
} plc_sim_result;

/* Returns PLC_OK, or with the first violation in err, naming the world
 * rank, the instruction index and the op: PLC_E_DEADLOCK when the ranks
 * cannot all finish (naming every blocked rank), PLC_E_INTERNAL any other
 * violation. An allocation the system refuses raises the command's trap
 * (plc_oom_raise, plc/arena.h), as the lowering's do. */
plc_status plc_sim_run(const plc_plan *p, const plc_sim_opts *opts, plc_sim_result *res, char *err, size_t errlen);

/* ---- plan_svg.c ------------------------------------------------------------ */
/* plc trace --svg: a plan's predicted timeline as a picture. */

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

/* ---- plan_trace.c ---------------------------------------------------------- */
/* the predicted timeline of a plan (plc trace): the
 * simulation of plan_sim.c with the solver's cost primitives, written as
 * Chrome trace-event JSON (Perfetto, chrome://tracing): one process per
 * rank, one thread per stream (0 compute, 1 comm). */

#include <stdbool.h>
#include <stdio.h>

/* the time model's cost of one instruction (seconds); ctx from
 * plc_trace_cost_ctx_new */
typedef struct plc_trace_cost_ctx plc_trace_cost_ctx;
plc_trace_cost_ctx *plc_trace_cost_ctx_new(const plc_plan *p);
void plc_trace_cost_ctx_free(plc_trace_cost_ctx *c);
double plc_trace_cost(void *ctx, const plc_plan *p, const plc_program *g, const plc_instr *in);

typedef struct plc_trace_summary {
    double step_time_s;  /* end of the last rank */
    int64_t ranks;       /* ranks simulated */
    double *busy_s;      /* [ranks] compute-stream time of non-communication ops */
    double *comm_s;      /* [ranks] comm-stream busy time */
    double *comm_union_s; /* [ranks] time in which any communication runs (either stream) */
    double *exposed_s;   /* [ranks] of it, the time the compute stream is not busy: exposed */
    int64_t *world_rank; /* [ranks] */
    int64_t instrs;      /* instructions simulated */
    int64_t events;      /* events written to the file (metadata included; 0 without one) */
} plc_trace_summary;

void plc_trace_summary_free(plc_trace_summary *s);

/* Simulates the plan (cost NULL: the time model) and writes the JSON to out
 * (NULL: none). all_ranks as in plc_sim_opts. Returns 0 or -1 with err. */
int plc_trace_run(const plc_plan *p, bool all_ranks, plc_sim_cost_fn cost, void *cost_ctx, FILE *out,
                  plc_trace_summary *sum, char *err, size_t errlen);

/* What one event stands for: an instruction (plc_trace_run), or a unit, the
 * consecutive instructions of a stream with the same phase and micro-batch
 * (a pipeline unit's forward or backward over its layers, named
 * "fwd m5 L0-9"), so the file grows with micro-batches, not instructions. */
typedef enum plc_trace_detail { PLC_TRACE_INSTRS, PLC_TRACE_UNITS } plc_trace_detail;
int plc_trace_run_as(const plc_plan *p, bool all_ranks, plc_trace_detail detail, FILE *out, plc_trace_summary *sum,
                     char *err, size_t errlen);

/* ---- engine_trace.c -------------------------------------------------------- */
/* the simulated timeline of one step of a spec's layout under its engine
 * (plc trace SPEC): the time model's pieces (plc_step_parts) laid out in
 * the schedule's order (plc_pipe_order) for one rank per pipeline stage,
 * each communication hidden on its own track where the engine overlaps it
 * and exposed on the compute stream where it does not (docs/engines.md,
 * "The simulated timeline"). */

#include <stdio.h>

#include "plc/job.h"
#include "plc/status.h"

/* the communication the timeline draws, by kind */
typedef enum plc_etrace_comm {
    PLC_ETRACE_TP,     /* tensor-parallel collectives */
    PLC_ETRACE_CP,     /* context-parallel ring exchange */
    PLC_ETRACE_PP,     /* pipeline messages */
    PLC_ETRACE_DP,     /* gradient reduction */
    PLC_ETRACE_GATHER, /* ZeRO weight gathers (3: per layer; 1, 2: after the optimizer) */
    PLC_ETRACE_COMM_COUNT
} plc_etrace_comm;

typedef struct plc_engine_trace_stage {
    double end_s;     /* the stage's last piece of work */
    double compute_s; /* forward, backward, recompute (embedding and head in them), optimizer */
    double slowdown_s; /* compute slowed by overlapped collectives (overlap_sm_share) */
    double comm_s[PLC_ETRACE_COMM_COUNT];    /* each kind's communication as it runs */
    double exposed_s[PLC_ETRACE_COMM_COUNT]; /* of it, on the compute stream */
} plc_engine_trace_stage;

typedef struct plc_engine_trace_summary {
    double step_time_s; /* the timeline's end: the last stage to finish */
    double predicted_s; /* the time model's step time of the layout (plc_estimate_layout) */
    int64_t stages;
    int64_t spans;  /* pieces of the timeline (what the picture draws) */
    int64_t events; /* events written to the JSON file (metadata included; 0 without one) */
    plc_engine_trace_stage *stage; /* [stages] */
} plc_engine_trace_summary;

void plc_engine_trace_summary_free(plc_engine_trace_summary *s);

/* the most pipeline units (a micro-batch's forward or backward through one
 * chunk) a spec's timeline draws: about 2e6 events, 200 MB of JSON */
#define PLC_ENGINE_TRACE_MAX_UNITS 1000000

/* Simulates one step of layout l (legal for job) and writes it as Chrome
 * trace JSON to json and as an SVG picture to svg (either NULL: none).
 * PLC_OK with *sum filled in (free it with plc_engine_trace_summary_free);
 * PLC_E_INPUT an illegal layout or one whose step has more than
 * PLC_ENGINE_TRACE_MAX_UNITS units, PLC_E_SYSTEM out of memory,
 * PLC_E_INTERNAL a schedule that deadlocks; err says why. */
plc_status plc_engine_trace(const plc_job *job, const plc_layout *l, FILE *json, FILE *svg,
                            plc_engine_trace_summary *sum, char *err, size_t errlen);

/* ---- svg.c ----------------------------------------------------------------- */
/* the one SVG writer of plc's pictures (plc trace --svg, plc scale
 * --svg, plc explain --svg): standalone SVG 1.1 documents that a browser
 * opens and a README embeds, with the text in a system sans-serif font.
 * Coordinates are pixels; text is XML-escaped here. */

#include <stdio.h>

/* the document: a white canvas w x h with a title (the tooltip and the
 * accessible name) */
void plc_svg_begin(FILE *out, double w, double h, const char *title);
void plc_svg_end(FILE *out);
/* a filled rectangle; tip (may be NULL) becomes its tooltip */
void plc_svg_rect(FILE *out, double x, double y, double w, double h, const char *fill, const char *tip);
/* a line; dash NULL for solid */
void plc_svg_line(FILE *out, double x1, double y1, double x2, double y2, const char *stroke, double width, const char *dash);
/* a polyline through n points */
void plc_svg_polyline(FILE *out, const double *x, const double *y, int n, const char *stroke, double width);
void plc_svg_circle(FILE *out, double x, double y, double r, const char *fill);
/* text at (x, y) baseline; anchor "start", "middle" or "end"; printf format */
void plc_svg_text(FILE *out, double x, double y, double size, const char *anchor, const char *fill, const char *fmt, ...)
    __attribute__((format(printf, 7, 8)));
/* text wrapped at spaces into lines no wider than max_w (estimated), the
 * first on baseline y, the next line_h below; out NULL only counts. Returns
 * the number of lines (a picture's subtitle is never cut at its edge). */
int plc_svg_text_wrapped(FILE *out, double x, double y, double size, double line_h, const char *fill, double max_w,
                         const char *text);
/* a picture's legend: for each of the n entries that has a name (NULL or
 * "" are left out), a square of its colour and its name, left to right from
 * (x, y), wrapping to a new row line_h lower before max_x; out NULL only
 * counts. Returns the number of rows. */
int plc_svg_legend(FILE *out, double x, double y, double max_x, double line_h, int n, const char *const *colors,
                   const char *const *names);
/* a tick step of 1, 2 or 5 x 10^k giving about `ticks` ticks over range */
double plc_svg_tick_step(double range, int ticks);

/* A timeline row binned into pixel columns (plc trace --svg, of a plan or
 * of a spec): cover[columns][kinds] holds the seconds of each kind in each
 * column of bin seconds. bin_add adds [start, end) of a kind;
 * binned_row draws the row from x0 (px pixels a column, at y, h high): a
 * column takes the colour of the kind with most time in it when it is more
 * than half busy (else nothing: the background shows), and runs of one
 * colour become one rectangle, so the picture stays small whatever the
 * number of events. */
void plc_svg_bin_add(float *cover, int columns, int kinds, double bin, int kind, double start, double end);
void plc_svg_binned_row(FILE *out, const float *cover, int columns, int kinds, const char *const *colors, double bin,
                        double x0, double px, double y, double h);

/* ---- words.c --------------------------------------------------------------- */
/* plc's one output vocabulary. Every command prints switches as
 * on/off, counts with their plural, percentages exactly (77.5%, not 78%),
 * and figures with the units of the .plan language, through these helpers.
 * Each writes into buf (size bytes) and returns it. */

#include <stddef.h>
#include <stdint.h>

#include "plc/job.h"

/* "on" / "off" */
const char *plc_word_onoff(int64_t v);
/* "" or "s" for a count */
const char *plc_word_plural(long long n);
/* a fraction as a percentage with up to 4 significant digits: 0.775 -> "77.5%" */
const char *plc_word_percent(double frac, char *buf, size_t size);
/* v as printed with that many decimals: 0 when it rounds to zero, so that
 * a tiny negative (1 - 0.977 - 0.023 in floating point) never prints as
 * "-0.0" */
double plc_word_shown(double v, int decimals);
/* a value of a unit kind (SI base units) in the spelling of the .plan
 * language: 85899345920 -> "80 GiB", 2.5e11 -> "250 GB/s", 0.8 -> "80%" */
const char *plc_word_quantity(plc_unit_kind kind, double v, char *buf, size_t size);
/* a layout block's choice of dimension d as the .plan language writes its
 * value: "auto", "4", "{1, 2, 4}", "0..1", "flash2" */
const char *plc_word_choice(plc_layout_dim d, const plc_choice *c, char *buf, size_t size);

/* ---- yaml_out.c ------------------------------------------------------------ */
/* the one YAML writer of plc's --format yaml outputs (solve,
 * explain, scale, compile, diff), over the libyaml emitter. Block style,
 * keys in the order written, strings double-quoted, numbers plain.
 *
 * Usage: plc_yaml_begin opens a document whose top level is a mapping; the
 * key argument of each call names the entry in the enclosing mapping, or is
 * NULL inside a sequence. A failed emitter stays failed; plc_yaml_end reports
 * it once. The header every document starts with (plc_version, ...) is
 * written by plc_yaml_begin. */

#include <stdbool.h>
#include <stdio.h>
#include <yaml.h>

typedef struct plc_yaml {
    yaml_emitter_t e;
    bool failed;
} plc_yaml;

/* starts the document and its top mapping with `plc_version` and `command` */
int plc_yaml_begin(plc_yaml *y, FILE *out, const char *command);
/* closes everything; 0, or -1 after a message on stderr */
int plc_yaml_end(plc_yaml *y);

void plc_yaml_str(plc_yaml *y, const char *key, const char *v);
void plc_yaml_int(plc_yaml *y, const char *key, long long v);
void plc_yaml_num(plc_yaml *y, const char *key, double v); /* %.6g; whole numbers below 2^53 exactly */
void plc_yaml_bool(plc_yaml *y, const char *key, bool v);
void plc_yaml_map(plc_yaml *y, const char *key);
void plc_yaml_map_end(plc_yaml *y);
void plc_yaml_seq(plc_yaml *y, const char *key);
void plc_yaml_seq_end(plc_yaml *y);

#endif
