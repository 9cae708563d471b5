/* metrics.h: what plrun reports each step.
 *
 *  - a log line per step on stdout:
 *      step   12/1000  loss 4.123456  lr 3.000e-04  grad norm 1.2345  41.2k tok/s  3.21 GFLOP/s  98.1 ms
 *  - when stderr is a terminal, a progress line under it, redrawn in place:
 *      [########------------]  40%  step 400/1000  ETA 1m02s
 *  - with --metrics FILE, one JSON object per step and line:
 *      {"step":12,"loss":4.1234560012817383,"lr":0.00029999999999999997,
 *       "grad_norm":1.2345,"tokens_per_s":41234.5,"model_flops_per_s":3.21e9,"step_time_s":0.0981}
 *    a plan whose MoE layers have a capacity adds the token copies its
 *    routers dropped over it: "  dropped 12" in the line, "moe_dropped":12
 *    in JSON (never silently: the count is summed over every rank);
 *    numbers printed with %.17g (they read back to the same double); a
 *    non-finite value is written as null (JSON has no NaN).
 * Steps are reported 1-based in the log line and 0-based ("step") in JSON,
 * the index the learning-rate schedule uses. */
#ifndef PLC_METRICS_H
#define PLC_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct plc_step_metrics {
    int64_t step; /* 0-based */
    double loss, lr, grad_norm;
    double tokens_per_s, model_flops_per_s, step_time_s;
    bool moe_capped;     /* the plan's MoE layers have a capacity: moe_dropped is reported */
    int64_t moe_dropped; /* token copies dropped over an expert's capacity this step */
} plc_step_metrics;

typedef struct plc_metrics_log {
    FILE *out;      /* the log lines (stdout) */
    FILE *progress; /* the progress line, NULL when stderr is not a terminal */
    FILE *json;     /* --metrics FILE, or NULL */
    char *json_path;
    int64_t total_steps;
    int64_t steps_seen;
    double time_seen; /* seconds of the steps after the first (warm-up excluded from the ETA) */
    bool progress_shown;
} plc_metrics_log;

/* opens the log: json_path may be NULL; the file is created (truncated)
 * once here. out/progress are where lines go (normally stdout, and stderr
 * when isatty says it is a terminal; pass NULL for no progress line).
 * 0, or -1 with err. */
int plc_metrics_open(plc_metrics_log *l, FILE *out, FILE *progress, const char *json_path, int64_t total_steps,
                     char *err, size_t errlen);
/* the usual choice: stdout, and stderr if it is a terminal */
int plc_metrics_open_default(plc_metrics_log *l, const char *json_path, int64_t total_steps, char *err,
                             size_t errlen);
/* reports one step: log line, progress line, JSON line. 0, or -1 with err
 * when the JSON file cannot be written (the log line is still printed). */
int plc_metrics_step(plc_metrics_log *l, const plc_step_metrics *m, char *err, size_t errlen);
/* clears the progress line and closes the JSON file. 0, or -1 with err. */
int plc_metrics_close(plc_metrics_log *l, char *err, size_t errlen);

/* the pieces, for tests and other front ends: each returns what snprintf does */
int plc_metrics_format_line(char *buf, size_t n, const plc_step_metrics *m, int64_t total_steps);
int plc_metrics_format_json(char *buf, size_t n, const plc_step_metrics *m);
int plc_metrics_format_progress(char *buf, size_t n, int64_t done, int64_t total, double eta_s);
/* "950", "41.2k", "3.21M", "1.05G": a rate with an SI prefix */
int plc_format_si(char *buf, size_t n, double v);
/* "45s", "12m05s", "3h02m" */
int plc_format_duration(char *buf, size_t n, double seconds);

#endif
