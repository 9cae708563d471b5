/* report_text.c: text output of plc solve (ranked table, "no layout fits"). */
#include <string.h>

#include "compiler/cli/cli_int.h"

#include <stdlib.h>

#include "compiler/solver/solver.h"
#include "compiler/plantools/plantools.h"

const char plc_report_tie_rule[] =
    "exact ties (same step time and memory) go to the plainer layout: 1f1b before other schedules, "
    "then lower zero, sp off, less recompute, then smaller tp, pp, cp and vpp";

void plc_report_tie_text(FILE *out, const plc_layout *kept, const plc_layout *tie)
{
    int n = 0;
    char v[32];
    for (int d = 0; d < PLC_LAYOUT_NDIMS; d++) {
        int64_t x = plc_layout_dim_value(tie, d);
        if (x == plc_layout_dim_value(kept, d)) continue;
        fprintf(out, "%s%s=%s", n++ ? " " : "", plc_layout_dim_names[d], plc_layout_dim_text(d, x, v, sizeof v));
    }
}

static const plc_job *sort_job; /* qsort has no context argument */
static int by_rank(const void *a, const void *b) { return plc_candidate_compare(sort_job, a, b); }

void plc_report_sort_all(const plc_job *job, plc_solution *s)
{
    sort_job = job;
    if (s->nall > 1) qsort(s->all, (size_t)s->nall, sizeof *s->all, by_rank);
    sort_job = NULL;
}

void plc_report_layout_line(FILE *out, const plc_layout *l)
{
    char text[512];
    fputs(plc_layout_text(l, text, sizeof text), out);
}

void plc_report_reason(FILE *out, const plc_candidate *c, double limit)
{
    if (c->fits) { fputs("fits", out); return; }
    if (!c->valid) { fputs(c->reason && c->reason[0] ? c->reason : "invalid layout", out); return; }
    fprintf(out, "needs %.1f GiB, %.1f GiB over the %.1f GiB limit", c->peak_bytes / PLC_GIB,
            (c->peak_bytes - limit) / PLC_GIB, limit / PLC_GIB);
    if (c->reason && strstr(c->reason, "alone")) fprintf(out, " (%s)", c->reason);
}

/* "6.74 B", "124.4 M", "93.4 K": a parameter count in the unit that shows it */
static const char *params_text(double n, char *buf, size_t size)
{
    if (n >= 1e9) snprintf(buf, size, "%.2f B", n / 1e9);
    else if (n >= 1e6) snprintf(buf, size, "%.1f M", n / 1e6);
    else if (n >= 1e3) snprintf(buf, size, "%.1f K", n / 1e3);
    else snprintf(buf, size, "%.0f", n);
    return buf;
}

void plc_report_job_header(FILE *out, const plc_job *job)
{
    const plc_model *m = &job->model;
    char params[80], active[32];
    params_text((double)plc_params_total(m), params, sizeof params);
    if (m->moe.experts > 0) /* "46.70 B parameters, 12.88 B active" */
        snprintf(params + strlen(params), sizeof params - strlen(params), " parameters, %s active",
                 params_text((double)plc_params_active(m), active, sizeof active));
    else strcat(params, " parameters");
    fprintf(out, "%s: model %s (%s), %lld x %s (%lld node%s), %lld sequences of %lld tokens per step\n",
            job->path ? job->path : "spec", m->name[0] ? m->name : "?", params,
            (long long)plc_cluster_gpus(&job->cluster), job->cluster.hw.name, (long long)job->cluster.nodes,
            job->cluster.nodes == 1 ? "" : "s", (long long)job->train.global_batch, (long long)m->seq_len);
    fprintf(out, "engine: %s (%s)\n", plc_engine_name(job->train.engine),
            job->engine.describes[0] ? job->engine.describes : "no profile");
}

/* the table's layout columns: one per dimension of PLC_LAYOUT_FIELDS, under
 * its key unless a shorter heading is given here; numbers right-aligned,
 * words left */
typedef struct layout_column {
    const char *head;
    int width;
} layout_column;
static const layout_column layout_columns[PLC_LD_COUNT] = {
    [PLC_LD_dp] = {"dp", 5}, [PLC_LD_sp] = {"sp", 3}, [PLC_LD_micro_batch] = {"mb", 4}, [PLC_LD_schedule] = {"schedule", -11},
    [PLC_LD_recompute] = {"recompute", -9}, [PLC_LD_recompute_layers] = {"rl", 3}, [PLC_LD_attention] = {"attn", -6}, [PLC_LD_fused_rmsnorm] = {"frms", 5},
};

static layout_column column_of(int d)
{
    layout_column c = layout_columns[d];
    if (!c.head) c.head = plc_layout_dim_key((plc_layout_dim)d);
    if (!c.width) c.width = plc_layout_dim_kind((plc_layout_dim)d) == PLC_DIMK_DEGREE ? 3 : 4;
    return c;
}

/* ep and etp are columns of a model with experts only (PLC_LAYOUT_MOE_DIM) */
static bool column_shown(const plc_job *job, int d)
{
    return !PLC_LAYOUT_MOE_DIM(d) || job->model.moe.experts > 0;
}

static void table_header(FILE *out, const plc_job *job)
{
    fprintf(out, "%4s", "rank");
    for (int d = 0; d < PLC_LD_COUNT; d++)
        if (column_shown(job, d)) fprintf(out, " %*s", column_of(d).width, column_of(d).head);
    fprintf(out, " %9s %9s %12s %6s %11s  %s\n", "mem GiB", "step s", "tokens/s", "MFU", "MFU range", "notes");
}

static void table_row(FILE *out, const plc_job *job, int rank, const plc_candidate *c, const plc_candidate *ties,
                      int nties, double limit)
{
    fprintf(out, "%4d", rank);
    for (int d = 0; d < PLC_LD_COUNT; d++) {
        char v[32];
        if (!column_shown(job, d)) continue;
        fprintf(out, " %*s", column_of(d).width,
                plc_layout_value_text((plc_layout_dim)d, plc_layout_get(&c->layout, (plc_layout_dim)d), v, sizeof v));
    }
    fprintf(out, " %9.2f", c->peak_bytes / PLC_GIB);
    if (c->valid && c->step_time_s > 0)
        fprintf(out, " %9.3f %12.0f %5.1f%%", c->step_time_s, c->tokens_per_s, 100.0 * c->mfu);
    else
        fprintf(out, " %9s %12s %6s", "-", "-", "-");
    if (c->range_lo > 0) {
        char r[32];
        snprintf(r, sizeof r, "%.1f..%.1f%%", 100.0 * c->mfu * c->range_lo, 100.0 * c->mfu * c->range_hi);
        fprintf(out, " %11s", r);
    } else {
        fprintf(out, " %11s", "-");
    }
    if (!c->fits) {
        fputs("  ", out);
        plc_report_reason(out, c, limit);
    }
    /* plrun: memory from the lowered plan, or a fit the estimate cannot tell and nothing settled */
    if (c->lowered) fputs("  mem: the plan's", out);
    if (c->open) fputs("  fit: not settled", out);
    for (int i = 0; i < nties; i++) {
        fputs(i ? ", " : "  tie: ", out);
        plc_report_tie_text(out, &c->layout, &ties[i].layout);
    }
    fputc('\n', out);
}

/* n candidates, at most rows rows, exact ties folded into one row unless
 * every candidate is asked for */
static void table(FILE *out, const plc_job *job, const plc_candidate *c, int64_t n, int64_t rows, double limit, bool fold)
{
    int rank = 0;
    for (int64_t i = 0; i < n && rank < rows;) {
        int64_t j = i + 1;
        while (fold && j < n && plc_report_tied(&c[i], &c[j])) j++;
        table_row(out, job, ++rank, &c[i], c + i + 1, (int)(j - i - 1), limit);
        i = j;
    }
}

void plc_report_solve_text(FILE *out, const plc_job *job, const plc_solution *s, const plc_report_opts *o)
{
    char pc[32];
    plc_report_job_header(out, job);
    fprintf(out, "memory limit %.1f GiB per rank (%s of %.1f GiB); objective: %s\n", s->limit_bytes / PLC_GIB,
            plc_word_percent(job->layout.memory_limit, pc, sizeof pc), job->cluster.hw.mem_bytes / PLC_GIB,
            plc_objective_name(job->layout.objective));
    plc_report_bar_line(out, s, o->no_range);
    if (s->pinned) {
        fprintf(out, "the layout block pins every dimension: one layout evaluated\n\n");
        table_header(out, job);
        table(out, job, &s->single, 1, 1, s->limit_bytes, false);
        return;
    }
    fprintf(out, "searched %lld layouts", (long long)s->enumerated);
    if (o->timing) fprintf(out, " in %.3f s", s->seconds);
    fprintf(out, ": %lld invalid, %lld pruned by the memory bound, %lld by the %s bound, %lld estimated, %lld fit",
            (long long)s->invalid, (long long)(s->pruned - s->pruned_objective), (long long)s->pruned_objective,
            plc_objective_name(job->layout.objective), (long long)s->evaluated, (long long)s->fitting);
    /* plrun: the layouts whose fit the estimate could not tell (solver.h, plc_memory_judge) */
    if (s->lowered) fprintf(out, "; %lld lowered to settle the fit", (long long)s->lowered);
    fputs("\n\n", out);
    table_header(out, job);
    if (o->all) {
        table(out, job, s->all, s->nall, s->nall, s->limit_bytes, false);
        plc_report_within_line(out, s->all, s->nall, false, s->nall, NULL);
    } else {
        table(out, job, s->ranked, s->nranked, o->top, s->limit_bytes, true);
        plc_report_within_line(out, s->ranked, s->nranked, true, o->top, "; --top K lists more");
    }
}
