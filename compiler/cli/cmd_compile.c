/* cmd_compile.c: plc compile FILE [-o job.bin]: solve (or take the pinned
 * layout), lower, check, write the plan, print a one-screen summary. */
#include <stdio.h>
#include <string.h>

#include "common/plan_io.h"
#include "plc/status.h"
#include "compiler/cli/cli_int.h"
#include "compiler/lower/lower.h"
#include "compiler/solver/solver.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: plc compile [OPTIONS] FILE [-o PLAN]\n"
            "\n"
            "Picks the layout (the one the layout block pins, or the solver's best),\n"
            "lowers it to one static program per pipeline stage with a static memory\n"
            "plan, checks the programs (send/recv matching, collective order, an\n"
            "all-rank simulation that must terminate) and writes the plan file.\n"
            "A plan fits when every stage's exact arena plus the runtime's fixed\n"
            "costs (communication buffers, workspace, reserve) is within the memory\n"
            "limit; of the solver's best layouts the first whose plan fits is written.\n"
            "The memory gate judges that same exact figure (the most loaded stage's\n"
            "arena plus fixed costs), not the solver's estimate.\n"
            "Exit status: 0 written, 1 an error in the spec, options or output file,\n"
            "2 no layout fits (the per-stage figures on stderr), 3 an internal error\n"
            "(a compiler bug caught by the checks), 4 the plan was written but a\n"
            "gate failed.\n"
            "\n"
            "options:\n"
            "  -o PLAN             output file (default job.bin)\n"
            "  --format text|yaml  summary format (default text); yaml has the layout,\n"
            "                      predictions, memory by stage and component with each\n"
            "                      stage's exact arena, and the gate results\n"
            "  --expand            write every instruction and buffer on its own instead\n"
            "                      of folding repeated layers and micro-batches into\n"
            "                      loops (the same plan once loaded; docs/plan-format.md)\n"
            "%s"
            "%s"
            "  -h, --help          this text\n",
            plc_gates_help, plc_spec_options_help);
}

static double mib(double b) { return b / (1024.0 * 1024.0); }

static void summary(const char *path, const char *outp, const plc_plan *p, const plc_estimate *est,
                    const plc_memplan_stats *st, size_t file_bytes)
{
    printf("plc compile: %s -> %s\n", path, outp);
    printf("layout     ");
    plc_report_layout_line(stdout, &p->layout);
    printf("\n");
    printf("predicted  step %.4g s, %.4g tokens/s, MFU %.1f%%, %lld micro-batches per rank, bubble %.1f%%\n",
           est->step_time_s, est->tokens_per_s, 100.0 * est->mfu, (long long)est->micro_batches,
           100.0 * est->bubble_fraction);
    printf("memory     per rank, by stage: the plan's exact arena (state + activations and temporaries)\n"
           "           against the solver's estimate of the same buffers, and its full estimate\n"
           "           (with communication buffers, workspaces and reserved memory)\n");
    plc_report_memplan(stdout, p, est, st);
    uint64_t instrs = 0, bufs = 0;
    for (uint32_t i = 0; i < p->nprograms; i++) {
        instrs += p->programs[i].ninstrs;
        bufs += p->programs[i].nbuffers;
    }
    printf("plan       %lld ranks, %u programs, %llu instructions, %llu buffers, %u groups, %.2f MiB\n",
           (long long)p->world_size, p->nprograms, (unsigned long long)instrs, (unsigned long long)bufs, p->ngroups,
           mib((double)file_bytes));
}

int plc_cmd_compile(int argc, char **argv)
{
    plc_spec_opts opts;
    if (plc_spec_take_options(&argc, argv, &opts)) return PLC_EXIT_INPUT;
    opts.read_data = true; /* the plan stores the token file's size and CRC-32 */
    plc_gates gates;
    if (plc_gates_take_options("compile", &argc, argv, &gates)) return PLC_EXIT_INPUT;
    const char *path = NULL, *outp = "job.bin";
    bool yaml = false;
    plc_plan_form form = PLC_PLAN_FOLDED;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) { usage(stdout); return PLC_EXIT_OK; }
        if (!strcmp(argv[i], "--format")) {
            if (plc_cmd_parse_format("compile", i + 1 < argc ? argv[++i] : NULL, &yaml)) return PLC_EXIT_INPUT;
            continue;
        }
        if (!strcmp(argv[i], "--expand")) {
            form = PLC_PLAN_EXPANDED;
            continue;
        }
        if (!strcmp(argv[i], "-o")) {
            if (i + 1 >= argc) {
                fprintf(stderr, "plc compile: error: -o needs a file name\n");
                return PLC_EXIT_INPUT;
            }
            outp = argv[++i];
            continue;
        }
        if (plc_cmd_take_input("compile", "spec", argv[i], &path, usage)) return PLC_EXIT_INPUT;
    }
    if (plc_cmd_need_input("compile", "spec", path, usage)) return PLC_EXIT_INPUT;
    plc_arena a;
    plc_arena_init(&a);
    int rc = PLC_EXIT_OK;
    plc_job job;
    if (plc_report_load(&a, "compile", path, &opts, &job)) { rc = PLC_EXIT_INPUT; goto done; }
    if (job.train.engine != PLC_ENGINE_PLRUN) {
        /* a plan is plrun's program; another engine's layout is a prediction */
        fprintf(stderr, "plc compile: error: %s: train.engine = %s, but a plan runs on plrun\n", path,
                plc_engine_name(job.train.engine));
        fprintf(stderr, "  hint: plc solve and plc explain predict %s's layouts (plc export writes its flags); "
                        "compile with -D train.engine=plrun\n", plc_engine_name(job.train.engine));
        rc = PLC_EXIT_INPUT;
        goto done;
    }
    plc_solution sol;
    /* the solver's best few: the first whose plan fits exactly is compiled */
    plc_solve_opts so = {.top = 8, .all = false, .judge = plc_cli_judge()};
    plc_oom_doing("solving the spec");
    plc_status ss = plc_solve_opts_run(&job, &a, &so, &sol);
    if (ss != PLC_OK) {
        fprintf(stderr, "plc compile: error: %s\n", sol.error);
        rc = plc_status_exit(ss);
        goto done;
    }
    const plc_candidate *cands;
    int ncands;
    if (sol.pinned) {
        if (!sol.single.valid) {
            fprintf(stderr, "plc compile: error: the pinned layout is invalid: %s\n", sol.single.reason);
            rc = PLC_EXIT_INPUT;
            goto done;
        }
        /* whether it fits is the plan's to say (below), with its exact
         * figures per stage, not the estimate's */
        cands = &sol.single;
        ncands = 1;
    } else {
        if (sol.nranked == 0) {
            plc_report_no_fit(stderr, &job, &sol);
            fprintf(stderr, "plc compile: error: no layout fits\n");
            rc = PLC_EXIT_NO_LAYOUT;
            goto done;
        }
        cands = sol.ranked;
        ncands = sol.nranked;
    }
    /* For plrun memory is exact: a plan fits when every stage's arena plus
     * the runtime's fixed costs is within the limit. */
    const double limit = job.layout.memory_limit * job.cluster.hw.mem_bytes;
    plc_estimate *est = PLC_NEW(&a, plc_estimate);
    plc_plan plan;
    plc_memplan_stats *st = NULL;
    plc_layout layout;
    double fixed = 0;
    int chosen = -1;
    char err[512];
    for (int k = 0; k < ncands && chosen < 0; k++) {
        layout = cands[k].layout;
        if (plc_estimate_layout(&job, &layout, est)) {
            fprintf(stderr, "plc compile: error: %s\n", est->reason);
            rc = PLC_EXIT_INPUT;
            goto done;
        }
        plc_prediction pred = {est->step_time_s, est->tokens_per_s, est->mfu, est->peak_bytes, 0};
        st = PLC_NEW_ARRAY(&a, plc_memplan_stats, layout.pp);
        plc_oom_doing("lowering the plan");
        plc_status ls = plc_lower(&job, &layout, &pred, &a, &plan, st, err, sizeof err);
        if (ls != PLC_OK) {
            bool bug = ls == PLC_E_INTERNAL || ls == PLC_E_DEADLOCK;
            fprintf(stderr, "plc compile: %s%s\n", bug ? "internal error: " : "error: ", err);
            rc = plc_status_exit(ls);
            goto done;
        }
        fixed = plc_runtime_fixed_bytes(&job, &layout);
        bool fits = true;
        for (uint32_t s = 0; s < plan.nprograms; s++)
            if ((double)plan.programs[s].arena_bytes + fixed > limit) fits = false;
        if (fits) {
            chosen = k;
            break;
        }
        bool last = k + 1 == ncands;
        if (sol.pinned || last) {
            fprintf(stderr, "plc compile: error: the %s plan does not fit in memory: per rank, by stage\n",
                    sol.pinned ? "pinned layout's" : ncands > 1 ? "best layouts'" : "best layout's");
            plc_report_plan_fit(stderr, &plan, fixed, limit);
            fprintf(stderr, "  (fixed = communication buffers, matmul workspace and the runtime's reserve;\n"
                            "   the solver's estimate was %.2f GiB on its most loaded stage)\n",
                    est->peak_bytes / 1073741824.0);
            rc = PLC_EXIT_NO_LAYOUT;
            goto done;
        }
    }
    plc_oom_doing("writing the plan");
    plc_status ws = plc_plan_write_file_as(&plan, form, outp, err, sizeof err);
    if (ws != PLC_OK) {
        fprintf(stderr, "plc compile: %s%s\n", plc_status_exit(ws) == 3 ? "internal error: " : "error: ", err);
        rc = plc_status_exit(ws);
        goto done;
    }
    FILE *f = fopen(outp, "rb");
    size_t bytes = 0;
    if (f) {
        fseek(f, 0, SEEK_END);
        long n = ftell(f);
        bytes = n > 0 ? (size_t)n : 0;
        fclose(f);
    }
    /* the exact per-rank need: the most loaded stage's arena plus the fixed costs */
    double exact_peak = 0;
    for (uint32_t p = 0; p < plan.nprograms; p++)
        if ((double)plan.programs[p].arena_bytes + fixed > exact_peak) exact_peak = (double)plan.programs[p].arena_bytes + fixed;
    if (yaml) {
        plc_yaml y;
        plc_yaml_begin(&y, stdout, "compile");
        plc_report_yaml_job(&y, &job);
        plc_yaml_str(&y, "plan", outp);
        plc_yaml_num(&y, "plan_bytes", (double)bytes);
        plc_yaml_int(&y, "ranks", plan.world_size);
        plc_yaml_num(&y, "fixed_bytes", fixed);
        plc_yaml_num(&y, "exact_peak_bytes", exact_peak);
        plc_report_yaml_estimate(&y, "layout", est, &plan);
        if (plc_yaml_end(&y)) rc = PLC_EXIT_INTERNAL;
    } else {
        summary(path, outp, &plan, est, st, bytes);
        printf("fits       per rank: arena + %.2f MiB fixed (communication buffers, workspace, runtime reserve)\n"
               "           against the %.2f MiB limit\n", mib(fixed), mib(limit));
        plc_report_plan_fit(stdout, &plan, fixed, limit);
    }
    if (plc_gates_any(&gates)) {
        plc_gate_memory mem = {exact_peak, "exact"};
        int g = plc_gates_check("compile", &gates, &job, est, &mem, yaml ? stderr : stdout);
        if (g < 0) rc = PLC_EXIT_INPUT;
        else if (g > 0 && rc == PLC_EXIT_OK) rc = PLC_EXIT_GATE;
    }
done:
    plc_arena_free(&a);
    return rc;
}
