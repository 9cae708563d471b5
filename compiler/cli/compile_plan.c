/* compile_plan.c: the plan plc compile writes, built in memory. The solver's
 * best layouts (or the layout block's pinned one) are lowered in order and
 * the first whose plan fits exactly is kept: every stage's arena plus the
 * runtime's fixed costs (communication buffers, workspace, reserve) within
 * memory_limit x device memory. plc compile writes it; plc diff compares a
 * spec through it, so a spec and the plan compiled from it diff as equal. */
#include <stdio.h>

#include "compiler/cli/cli_int.h"
#include "compiler/lower/lower.h"

int plc_cli_compile(const char *cmd, const plc_job *job, plc_arena *a, plc_compiled *out)
{
    if (job->train.engine != PLC_ENGINE_PLRUN) {
        /* a plan is plrun's program; another engine's layout is a prediction */
        fprintf(stderr, "plc %s: error: %s: train.engine = %s, but a plan runs on plrun\n", cmd, job->path,
                plc_engine_name(job->train.engine));
        fprintf(stderr, "  hint: plc solve and plc explain predict %s's layouts (plc export writes its flags); "
                        "compile with -D train.engine=plrun\n", plc_engine_name(job->train.engine));
        return PLC_EXIT_INPUT;
    }
    char why[256];
    if (plc_lower_model_check(job, why, sizeof why)) { /* what no layout changes: said before the search */
        fprintf(stderr, "plc %s: error: %s: %s\n", cmd, job->path, why);
        return PLC_EXIT_INPUT;
    }
    plc_solution sol;
    /* the solver's best few: the first whose plan fits exactly is compiled */
    plc_solve_opts so = {.top = 8, .all = false, .judge = plc_cli_judge()};
    plc_oom_doing("solving the spec");
    plc_status ss = plc_solve_opts_run(job, a, &so, &sol);
    if (ss != PLC_OK) {
        fprintf(stderr, "plc %s: error: %s\n", cmd, sol.error);
        return plc_status_exit(ss);
    }
    const plc_candidate *cands;
    int ncands;
    if (sol.pinned) {
        if (!sol.single.valid) {
            fprintf(stderr, "plc %s: error: the pinned layout is invalid: %s\n", cmd, sol.single.reason);
            return PLC_EXIT_INPUT;
        }
        /* whether it fits is the plan's to say (below), with its exact
         * figures per stage, not the estimate's */
        cands = &sol.single;
        ncands = 1;
    } else {
        if (sol.nranked == 0) {
            plc_report_no_fit(stderr, job, &sol);
            fprintf(stderr, "plc %s: error: no layout fits\n", cmd);
            return PLC_EXIT_NO_LAYOUT;
        }
        cands = sol.ranked;
        ncands = sol.nranked;
    }
    /* For plrun memory is exact: a plan fits when every stage's arena plus
     * the runtime's fixed costs is within the limit. */
    out->limit = job->layout.memory_limit * job->cluster.hw.mem_bytes;
    out->est = PLC_NEW(a, plc_estimate);
    char err[512];
    for (int k = 0; k < ncands; k++) {
        plc_layout layout = cands[k].layout;
        plc_estimate *est = out->est;
        if (plc_estimate_layout(job, &layout, est)) {
            fprintf(stderr, "plc %s: error: %s\n", cmd, est->reason);
            return PLC_EXIT_INPUT;
        }
        plc_prediction pred = {est->step_time_s, est->tokens_per_s, est->mfu, est->peak_bytes, 0, est->bubble_fraction};
        out->stats = PLC_NEW_ARRAY(a, plc_memplan_stats, layout.pp);
        plc_oom_doing("lowering the plan");
        plc_status ls = plc_lower(job, &layout, &pred, a, &out->plan, out->stats, err, sizeof err);
        if (ls != PLC_OK) {
            bool bug = ls == PLC_E_INTERNAL || ls == PLC_E_DEADLOCK;
            fprintf(stderr, "plc %s: %s%s\n", cmd, bug ? "internal error: " : "error: ", err);
            return plc_status_exit(ls);
        }
        out->fixed = plc_runtime_fixed_bytes(job, &layout);
        bool fits = true;
        for (uint32_t s = 0; s < out->plan.nprograms; s++)
            if ((double)out->plan.programs[s].arena_bytes + out->fixed > out->limit) fits = false;
        if (fits) return PLC_EXIT_OK;
        if (sol.pinned || k + 1 == ncands) {
            fprintf(stderr, "plc %s: error: the %s plan does not fit in memory: per rank, by stage\n", cmd,
                    sol.pinned ? "pinned layout's" : ncands > 1 ? "best layouts'" : "best layout's");
            plc_report_plan_fit(stderr, &out->plan, out->fixed, out->limit);
            fprintf(stderr, "  (fixed = communication buffers, matmul workspace and the runtime's reserve;\n"
                            "   the solver's estimate was %.2f GiB on its most loaded stage)\n",
                    est->peak_bytes / 1073741824.0);
            return PLC_EXIT_NO_LAYOUT;
        }
    }
    return PLC_EXIT_NO_LAYOUT; /* not reached: the last candidate returns above */
}
