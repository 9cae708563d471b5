/* report_range.c: the error bars of plc solve and plc explain.
 *
 * A prediction's range comes from one table, error_bars.csv (examples/,
 * installed beside the catalog; $PLC_ERROR_BARS names another, or "none"),
 * written by `make error-bars` (bench/fidelity --error-bars): per kind of
 * run (engine, GPU, GPU count) the 10th and 90th percentiles of measured
 * over predicted throughput of the calibration runs of that kind, each
 * predicted with the catalog figures fitted without its own source
 * (docs/solver.md, "Error bars"). Its columns:
 *
 *   engine,gpu,gpus_min,gpus_max,runs,lo,hi,sources
 *
 * engine is train.engine's name or *, gpu the catalog entry's part (the
 * name up to its first '-': A100, H100) or *, gpus_max 0 no upper bound;
 * lines starting with # are comments. The first row that matches the job
 * is its kind, so the table lists the narrow kinds before the wide ones.
 * Every candidate of one solve has the job's engine, GPU and GPU count,
 * hence the same relative range; this file attaches it, reorders the
 * ranked list by the pick rule (plc_pick_by_range, search.c) and words
 * which layouts lie within each other's range. It avoids any figure of
 * its own: a table without a matching row leaves the predictions bare. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "compiler/cli/cli_int.h"

#include "common/parse_num.h"
#include "compiler/solver/solver.h"

/* two candidates the ranked list folds into one row (report_text.c,
 * report_yaml.c and the within line) */
bool plc_report_tied(const plc_candidate *a, const plc_candidate *b)
{
    return a->valid && b->valid && a->fits == b->fits && a->step_time_s == b->step_time_s &&
           a->peak_bytes == b->peak_bytes;
}

static const char header[] = "engine,gpu,gpus_min,gpus_max,runs,lo,hi,sources";
enum { COL_ENGINE, COL_GPU, COL_MIN, COL_MAX, COL_RUNS, COL_LO, COL_HI, COL_SOURCES, NCOLS };

/* the table's path: $PLC_ERROR_BARS, else the built-in one; NULL (with
 * *why) when there is none */
static const char *table_path(plc_arena *a, const char **why)
{
    const char *env = getenv("PLC_ERROR_BARS");
    if (env && env[0]) {
        if (!strcmp(env, "none")) { *why = "PLC_ERROR_BARS=none"; return NULL; }
        return env;
    }
    const char *tried = "";
    const char *path = plc_builtin_data(a, "error_bars.csv", &tried);
    if (!path) *why = plc_arena_printf(a, "no error_bars.csv: tried %s", tried);
    return path;
}

/* splits line (its newline removed) at commas into f[NCOLS]; the count */
static int split(char *line, char **f)
{
    int n = 0;
    line[strcspn(line, "\r\n")] = '\0';
    for (char *p = line;; p++) {
        if (n < NCOLS) f[n] = p;
        n++;
        p = strchr(p, ',');
        if (!p) break;
        *p = '\0';
    }
    return n;
}

/* the catalog entry's part: its name up to the first '-' */
static bool gpu_matches(const char *want, const char *name)
{
    if (!strcmp(want, "*")) return true;
    size_t n = strcspn(name, "-");
    return strlen(want) == n && !strncasecmp(want, name, n);
}

int plc_report_find_bar(const char *cmd, const char *path, const char *engine, const char *gpu, int64_t gpus,
                        plc_error_bar *out)
{
    memset(out, 0, sizeof *out);
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "plc %s: error: cannot read the error-bar table %s (set PLC_ERROR_BARS to another, or to none)\n",
                cmd, path);
        return -1;
    }
    char line[1024], *c[NCOLS];
    int lineno = 0, rc = 0;
    bool seen_header = false;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        const char *t = line + strspn(line, " \t");
        if (*t == '#' || *t == '\n' || *t == '\r' || !*t) continue;
        if (!seen_header) {
            line[strcspn(line, "\r\n")] = '\0';
            if (strcmp(line, header)) {
                fprintf(stderr, "plc %s: error: %s:%d: the header is not '%s'\n", cmd, path, lineno, header);
                rc = -1;
                break;
            }
            seen_header = true;
            continue;
        }
        int n = split(line, c);
        int64_t lo_gpus, hi_gpus, runs;
        double lo, hi;
        if (n != NCOLS) {
            fprintf(stderr, "plc %s: error: %s:%d: %d fields, the header has %d\n", cmd, path, lineno, n, NCOLS);
            rc = -1;
            break;
        }
        if (plc_parse_int(c[COL_MIN], 1, INT64_MAX, &lo_gpus) || plc_parse_int(c[COL_MAX], 0, INT64_MAX, &hi_gpus) ||
            plc_parse_int(c[COL_RUNS], 1, 1000000000, &runs) || plc_parse_real(c[COL_LO], "", 1e-3, 1e3, &lo) ||
            plc_parse_real(c[COL_HI], "", 1e-3, 1e3, &hi) || lo > hi || (hi_gpus && hi_gpus < lo_gpus)) {
            fprintf(stderr,
                    "plc %s: error: %s:%d: gpus_min, gpus_max, runs are whole numbers (gpus_min >= 1, gpus_max 0 "
                    "for no bound or >= gpus_min), lo <= hi positive factors\n",
                    cmd, path, lineno);
            rc = -1;
            break;
        }
        if (out->lo > 0) continue; /* the first match stands; the rest is still checked */
        if (strcmp(c[COL_ENGINE], "*") && strcmp(c[COL_ENGINE], engine)) continue;
        if (!gpu_matches(c[COL_GPU], gpu) || gpus < lo_gpus || (hi_gpus && gpus > hi_gpus)) continue;
        out->lo = lo;
        out->hi = hi;
        out->runs = (int)runs;
        char gpus_text[48];
        if (lo_gpus == 1 && !hi_gpus) snprintf(gpus_text, sizeof gpus_text, "any GPU count");
        else if (!hi_gpus) snprintf(gpus_text, sizeof gpus_text, "%lld+ GPUs", (long long)lo_gpus);
        else snprintf(gpus_text, sizeof gpus_text, "%lld-%lld GPUs", (long long)lo_gpus, (long long)hi_gpus);
        snprintf(out->kind, sizeof out->kind, "%s, %s, %s", strcmp(c[COL_ENGINE], "*") ? c[COL_ENGINE] : "any engine",
                 strcmp(c[COL_GPU], "*") ? c[COL_GPU] : "any GPU", gpus_text);
        size_t k = 0; /* "A;B" as "A, B" */
        for (const char *p = c[COL_SOURCES]; *p && k + 3 < sizeof out->sources; p++) {
            if (*p == ';') { out->sources[k++] = ','; out->sources[k++] = ' '; }
            else out->sources[k++] = *p;
        }
        out->sources[k] = '\0';
        snprintf(out->table, sizeof out->table, "%s", path);
    }
    if (rc == 0 && ferror(f)) {
        fprintf(stderr, "plc %s: error: cannot read the error-bar table %s\n", cmd, path);
        rc = -1;
    }
    if (rc == 0 && !seen_header) {
        fprintf(stderr, "plc %s: error: %s: no header line '%s'\n", cmd, path, header);
        rc = -1;
    }
    fclose(f);
    if (rc) memset(out, 0, sizeof *out);
    return rc;
}

static void set_range(plc_candidate *c, const plc_error_bar *b)
{
    c->range_lo = c->valid && c->step_time_s > 0 ? b->lo : 0;
    c->range_hi = c->valid && c->step_time_s > 0 ? b->hi : 0;
}

int plc_report_ranges(plc_arena *a, const char *cmd, const plc_job *job, plc_solution *s, const char **none)
{
    const char *why = NULL;
    *none = NULL;
    const char *path = table_path(a, &why);
    if (!path) { *none = why; return 0; }
    if (plc_report_find_bar(cmd, path, plc_engine_name(job->train.engine), job->cluster.hw.name,
                            plc_cluster_gpus(&job->cluster), &s->bar))
        return -1;
    if (!(s->bar.lo > 0)) {
        *none = plc_arena_printf(a, "no row of %s matches engine %s, GPU %s, %lld GPUs", path,
                                 plc_engine_name(job->train.engine), job->cluster.hw.name,
                                 (long long)plc_cluster_gpus(&job->cluster));
        return 0;
    }
    for (int i = 0; i < s->nranked; i++) set_range(&s->ranked[i], &s->bar);
    for (int64_t i = 0; i < s->nall; i++) set_range(&s->all[i], &s->bar);
    for (int i = 0; i < s->nclosest; i++) set_range(&s->closest[i], &s->bar);
    set_range(&s->single, &s->bar);
    for (int i = 0; i < s->nregions; i++) set_range(&s->regions[i].best, &s->bar);
    plc_pick_by_range(job, s->ranked, s->nranked);
    if (s->nall > 1) plc_pick_by_range(job, s->all, (int)(s->nall < INT32_MAX ? s->nall : INT32_MAX));
    return 0;
}

void plc_report_bar_line(FILE *out, const plc_solution *s, const char *none)
{
    if (!(s->bar.lo > 0)) {
        fprintf(out, "error bars: none (%s)\n", none ? none : "no table");
        return;
    }
    fprintf(out,
            "error bars: measured/predicted throughput %.2f..%.2f, the 10th-90th percentile over %d calibration "
            "runs of kind %s (%s), each predicted out of sample; table %s\n",
            s->bar.lo, s->bar.hi, s->bar.runs, s->bar.kind, s->bar.sources, s->bar.table);
}

int plc_report_within(const plc_candidate *c, int64_t n, bool fold, int64_t rows, int *ranks, int max)
{
    int k = 0, rank = 0;
    for (int64_t i = 0; i < n && rank < rows;) {
        int64_t j = i + 1;
        while (fold && j < n && plc_report_tied(&c[i], &c[j])) j++;
        rank++;
        if (c[i].fits && (i == 0 || plc_ranges_overlap(&c[i], &c[0]))) {
            if (k < max) ranks[k] = rank;
            k++;
        }
        i = j;
    }
    return k;
}

void plc_report_within_line(FILE *out, const plc_candidate *c, int64_t n, bool fold, int64_t rows, const char *more)
{
    enum { LIST = 16 };
    int ranks[LIST];
    if (n < 1 || !(c[0].range_lo > 0) || !c[0].fits) return;
    int k = plc_report_within(c, n, fold, rows, ranks, LIST);
    int shown = 0, last = 0;
    for (int64_t i = 0; i < n && shown < rows; shown++) { /* rows printed */
        int64_t j = i + 1;
        while (fold && j < n && plc_report_tied(&c[i], &c[j])) j++;
        if (c[i].fits && (i == 0 || plc_ranges_overlap(&c[i], &c[0]))) last = shown + 1;
        i = j;
    }
    if (shown < 2) return;
    if (k == 1) {
        fputs("layout 1 is ahead of the others shown by more than the prediction's error\n", out);
        return;
    }
    fputs("layouts ", out);
    if (last == k) { /* 1..k */
        fprintf(out, "1-%d", k);
    } else {
        int m = k < LIST ? k : LIST;
        for (int i = 0; i < m; i++) fprintf(out, "%s%d", i ? (i == m - 1 && k == m ? " and " : ", ") : "", ranks[i]);
        if (k > m) fprintf(out, " and %d more", k - m);
    }
    fprintf(out, " are within the prediction's error of each other (their ranges overlap layout 1's)%s\n",
            k == shown && more ? more : "");
}
