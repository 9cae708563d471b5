/* report_explain.c: plc explain: why the winner won. Memory per rank by stage
 * and component, the step-time breakdown, and for every layout dimension the
 * best candidate with another value there and why it lost. */
#include <string.h>

#include "compiler/cli/report.h"

#include "compiler/cli/report_memplan.h"
#include "compiler/solver/search.h"

static void memory_table(FILE *out, const plc_estimate *e)
{
    fprintf(out, "memory per rank, GiB (limit %.1f; peak %.2f on stage %d):\n", e->limit_bytes / PLC_GIB,
            e->peak_bytes / PLC_GIB, e->peak_stage);
    fprintf(out, "  %-6s", "stage");
    for (int c = 0; c < PLC_MEM_COUNT; c++) fprintf(out, " %11s", plc_mem_component_name((plc_mem_component)c));
    fprintf(out, " %9s %12s\n", "total", "params/rank");
    for (int s = 0; s < e->stages; s++) {
        double total = 0;
        fprintf(out, "  %-6d", s);
        for (int c = 0; c < PLC_MEM_COUNT; c++) {
            fprintf(out, " %11.2f", e->stage_mem[s][c] / PLC_GIB);
            total += e->stage_mem[s][c];
        }
        fprintf(out, " %9.2f %12.4g%s\n", total / PLC_GIB, e->stage_params[s], s == e->peak_stage ? "  <- peak" : "");
    }
}

static void time_table(FILE *out, const plc_estimate *e)
{
    fprintf(out, "step time %.3f s (%lld micro-batches per data-parallel rank), %.0f tokens/s, MFU %.1f%%:\n",
            e->step_time_s, (long long)e->micro_batches, e->tokens_per_s, 100.0 * e->mfu);
    for (int c = 0; c < PLC_TIME_COUNT; c++) {
        if (e->time[c] <= 0) continue;
        fprintf(out, "  %-13s %9.3f s %6.1f%%\n", plc_time_component_name((plc_time_component)c), e->time[c],
                100.0 * e->time[c] / e->step_time_s);
    }
}

void plc_report_explain(FILE *out, const plc_job *job, const plc_solution *s, const plc_estimate *w,
                        const plc_explain_plan *lowered)
{
    plc_report_job_header(out, job);
    fputs("winner: ", out);
    plc_report_layout_line(out, &w->layout);
    fputs("\n\n", out);
    memory_table(out, w);
    fputc('\n', out);
    if (lowered && lowered->plan) {
        fputs("memory against the lowered plan (plc compile), per rank: the plan's exact arena\n"
              "(state + activations and temporaries at their peak) against the solver's estimate\n"
              "of the same buffers (weights to temporaries), and its full estimate:\n", out);
        plc_report_memplan(out, lowered->plan, w, lowered->stats);
        fputc('\n', out);
    } else if (lowered && lowered->why) {
        fprintf(out, "the plan's exact memory is not available: %s\n\n", lowered->why);
    }
    time_table(out, w);
    if (s->pinned) {
        fprintf(out, "\nthe layout block pins every dimension: no other layout was considered\n");
        return;
    }
    fprintf(out, "\nsearched %lld layouts (%lld fit); best of each rejected region:\n", (long long)s->enumerated,
            (long long)s->fitting);
    char a[32], b[32];
    for (int d = 0; d < PLC_LAYOUT_NDIMS; d++) {
        int64_t mine = plc_layout_dim_value(&w->layout, d);
        const plc_region *best = NULL;
        for (int i = 0; i < s->nregions; i++) {
            const plc_region *r = &s->regions[i];
            if (r->dim != d || r->value == mine) continue;
            if (!best || plc_candidate_compare(job, &r->best, &best->best) < 0) best = r;
        }
        if (!best) continue;
        fprintf(out, "  %s = %s (winner: %s): ", plc_layout_dim_names[d],
                plc_layout_dim_text(d, best->value, a, sizeof a), plc_layout_dim_text(d, mine, b, sizeof b));
        const plc_candidate *c = &best->best;
        if (c->fits) {
            if (job->layout.objective == PLC_OBJ_MEMORY)
                fprintf(out, "%.2f GiB vs %.2f GiB, ", c->peak_bytes / PLC_GIB, w->peak_bytes / PLC_GIB);
            fprintf(out, "%.3f s/step, %+.1f%% slower, MFU %.1f%%\n", c->step_time_s,
                    100.0 * (c->step_time_s / w->step_time_s - 1.0), 100.0 * c->mfu);
        } else {
            fputs("does not fit: ", out);
            plc_report_reason(out, c, s->limit_bytes);
            fputc('\n', out);
        }
        fputs("      ", out);
        plc_report_layout_line(out, &c->layout);
        fputc('\n', out);
    }
}
