/* report_memplan.c: the plan's exact memory per stage against the solver's
 * estimate; see cli_int.h. */
#include "compiler/cli/cli_int.h"

#include <stdbool.h>

static double mib(double b) { return b / (1024.0 * 1024.0); }

void plc_report_memplan(FILE *out, const plc_plan *p, const plc_estimate *est, const plc_memplan_stats *st)
{
    for (int64_t s = 0; s < p->layout.pp; s++) {
        const plc_program *g = &p->programs[p->stage_program[s]];
        double same = 0, full = 0;
        for (int c = 0; c < PLC_MEM_COUNT; c++) {
            full += est->stage_mem[s][c];
            if (c <= PLC_MEM_TEMPORARIES) same += est->stage_mem[s][c];
        }
        double plan = (double)g->arena_bytes;
        fprintf(out, "  stage %-3lld plan %9.2f MiB (%.2f + %.2f)   solver %9.2f MiB (%+.1f%%)   full estimate %9.2f MiB\n",
                (long long)s, mib(plan), mib((double)st[s].persistent_bytes), mib((double)st[s].dynamic_peak),
                mib(same), plan > 0 ? 100.0 * (same - plan) / plan : 0.0, mib(full));
        if (s == 7 && p->layout.pp > 9) {
            fprintf(out, "  ... %lld more stages\n", (long long)(p->layout.pp - 8));
            break;
        }
    }
}

int plc_report_plan_fit(FILE *out, const plc_plan *p, double fixed, double limit)
{
    int over = 0, shown = 0;
    for (int64_t s = 0; s < p->layout.pp; s++)
        if ((double)p->programs[p->stage_program[s]].arena_bytes + fixed > limit) over++;
    for (int64_t s = 0; s < p->layout.pp; s++) {
        double arena = (double)p->programs[p->stage_program[s]].arena_bytes, need = arena + fixed;
        bool bad = need > limit;
        if (over ? !bad : shown == 8) {
            if (!over && p->layout.pp > 9) {
                fprintf(out, "  ... %lld more stages\n", (long long)(p->layout.pp - 8));
                break;
            }
            continue;
        }
        fprintf(out, "  stage %-3lld arena %9.2f MiB + fixed %8.2f MiB = %9.2f MiB  %s limit %9.2f MiB\n",
                (long long)s, mib(arena), mib(fixed), mib(need), bad ? "over the" : "within the", mib(limit));
        shown++;
    }
    return over;
}
