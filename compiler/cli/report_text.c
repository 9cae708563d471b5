/* report_text.c: text output of plc solve (ranked table, "no layout fits"). */
#include <string.h>

#include "compiler/cli/report.h"

#include "compiler/solver/model_math.h"

void plc_report_layout_line(FILE *out, const plc_layout *l)
{
    fprintf(out, "dp=%lld tp=%lld pp=%lld cp=%lld sp=%s vpp=%lld micro_batch=%lld schedule=%s recompute=%s zero=%lld attention=%s fused_rmsnorm=%s",
            (long long)l->dp, (long long)l->tp, (long long)l->pp, (long long)l->cp, l->sp ? "on" : "off",
            (long long)l->vpp, (long long)l->micro_batch, plc_schedule_name(l->schedule),
            plc_recompute_name(l->recompute), (long long)l->zero, plc_attention_name(l->attention),
            l->fused_rmsnorm ? "on" : "off");
}

void plc_report_reason(FILE *out, const plc_candidate *c, double limit)
{
    if (c->fits) { fputs("fits", out); return; }
    if (!c->valid) { fputs(c->reason && c->reason[0] ? c->reason : "invalid layout", out); return; }
    fprintf(out, "needs %.1f GiB, %.1f GiB over the %.1f GiB limit", c->peak_bytes / PLC_GIB,
            (c->peak_bytes - limit) / PLC_GIB, limit / PLC_GIB);
    if (c->reason && strstr(c->reason, "alone")) fprintf(out, " (%s)", c->reason);
}

void plc_report_job_header(FILE *out, const plc_job *job)
{
    const plc_model *m = &job->model;
    fprintf(out, "%s: model %s (%.2f B parameters), %lld x %s (%lld node%s), %lld sequences of %lld tokens per step\n",
            job->path ? job->path : "spec", m->name[0] ? m->name : "?", (double)plc_params_total(m) / 1e9,
            (long long)plc_cluster_gpus(&job->cluster), job->cluster.hw.name, (long long)job->cluster.nodes,
            job->cluster.nodes == 1 ? "" : "s", (long long)job->train.global_batch, (long long)m->seq_len);
}

static void table_header(FILE *out)
{
    fprintf(out, "%4s %5s %3s %3s %3s %3s %3s %4s %-11s %-9s %4s %-6s %5s %9s %9s %12s %6s\n", "rank", "dp", "tp",
            "pp", "cp", "sp", "vpp", "mb", "schedule", "recompute", "zero", "attn", "frms", "mem GiB",
            "step s", "tokens/s", "MFU");
}

static void table_row(FILE *out, int rank, const plc_candidate *c, double limit)
{
    const plc_layout *l = &c->layout;
    fprintf(out, "%4d %5lld %3lld %3lld %3lld %3s %3lld %4lld %-11s %-9s %4lld %-6s %5s %9.2f", rank,
            (long long)l->dp, (long long)l->tp, (long long)l->pp, (long long)l->cp, l->sp ? "on" : "off",
            (long long)l->vpp, (long long)l->micro_batch, plc_schedule_name(l->schedule),
            plc_recompute_name(l->recompute), (long long)l->zero, plc_attention_name(l->attention),
            l->fused_rmsnorm ? "on" : "off", c->peak_bytes / PLC_GIB);
    if (c->valid && c->step_time_s > 0)
        fprintf(out, " %9.3f %12.0f %5.1f%%", c->step_time_s, c->tokens_per_s, 100.0 * c->mfu);
    else
        fprintf(out, " %9s %12s %6s", "-", "-", "-");
    if (!c->fits) {
        fputs("  ", out);
        plc_report_reason(out, c, limit);
    }
    fputc('\n', out);
}

void plc_report_solve_text(FILE *out, const plc_job *job, const plc_solution *s, int top, bool all)
{
    plc_report_job_header(out, job);
    fprintf(out, "memory limit %.1f GiB per rank (%.0f%% of %.1f GiB); objective: %s\n", s->limit_bytes / PLC_GIB,
            100.0 * job->layout.memory_limit, job->cluster.hw.mem_bytes / PLC_GIB,
            plc_objective_name(job->layout.objective));
    if (s->pinned) {
        fprintf(out, "the layout block pins every dimension: one layout evaluated\n\n");
        table_header(out);
        table_row(out, 1, &s->single, s->limit_bytes);
        return;
    }
    fprintf(out, "searched %lld layouts in %.3f s: %lld invalid, %lld pruned by the memory bound, "
                 "%lld by the %s bound, %lld estimated, %lld fit\n\n",
            (long long)s->enumerated, s->seconds, (long long)s->invalid, (long long)(s->pruned - s->pruned_objective),
            (long long)s->pruned_objective, plc_objective_name(job->layout.objective), (long long)s->evaluated,
            (long long)s->fitting);
    table_header(out);
    if (all) {
        for (int64_t i = 0; i < s->nall; i++) table_row(out, (int)(i + 1), &s->all[i], s->limit_bytes);
        return;
    }
    int n = s->nranked < top ? s->nranked : top;
    for (int i = 0; i < n; i++) table_row(out, i + 1, &s->ranked[i], s->limit_bytes);
}
