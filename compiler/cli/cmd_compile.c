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
            "  -o PLAN             output file (default job.bin; a plan is binary, so not\n"
            "                      '-': --format yaml prints the summary on standard output)\n"
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
                    const plc_memplan_stats *st, size_t file_bytes);

/* the text summary with the plan's fit, stage by stage */
static void summary_text(const char *path, const char *outp, const plc_plan *p, const plc_estimate *est,
                         const plc_memplan_stats *st, size_t bytes, double fixed, double limit)
{
    summary(path, outp, p, est, st, bytes);
    printf("fits       per rank: arena + %.2f MiB fixed (communication buffers, workspace, runtime reserve)\n"
           "           against the %.2f MiB limit\n", mib(fixed), mib(limit));
    plc_report_plan_fit(stdout, p, fixed, limit);
}

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
    plc_gates gate_opts;
    if (plc_gates_take_options("compile", &argc, argv, &gate_opts)) return PLC_EXIT_INPUT;
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
            if (!(outp = plc_cmd_value("compile", argc, argv, &i, "a file name"))) return PLC_EXIT_INPUT;
            continue;
        }
        if (plc_cmd_take_input("compile", "spec", argv[i], &path, usage)) return PLC_EXIT_INPUT;
    }
    if (plc_cmd_need_input("compile", "spec", path, usage)) return PLC_EXIT_INPUT;
    if (plc_cmd_is_stdout(outp)) {
        fprintf(stderr, "plc compile: error: -o - : a plan is a binary file, not for standard output; name a file "
                        "(plc dump FILE prints it as text)\n");
        return PLC_EXIT_INPUT;
    }
    plc_arena a;
    plc_arena_init(&a);
    int rc = PLC_EXIT_OK;
    plc_job job;
    if (plc_report_load(&a, "compile", path, &opts, &job)) { rc = PLC_EXIT_INPUT; goto done; }
    /* the gates: the options' over the spec's; a baseline is matched first */
    plc_gates gates;
    plc_gates_for_job(&gate_opts, &job, &gates);
    plc_plan base;
    if (gates.baseline && plc_gates_baseline("compile", &gates, &job, &a, &base)) { rc = PLC_EXIT_INPUT; goto done; }
    plc_compiled cp;
    rc = plc_cli_compile("compile", &job, &a, &cp);
    if (rc != PLC_EXIT_OK) goto done;
    plc_plan plan = cp.plan;
    plc_estimate *est = cp.est;
    plc_memplan_stats *st = cp.stats;
    double fixed = cp.fixed, limit = cp.limit;
    char err[512];
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
    /* the gates first: their lines go to stdout after the text summary, to
     * stderr before the YAML, which carries their results */
    plc_gate_results gres = {0};
    int gated = 0;
    if (!yaml) summary_text(path, outp, &plan, est, st, bytes, fixed, limit);
    if (plc_gates_any(&gates)) {
        plc_gate_memory mem = {exact_peak, "exact"};
        gated = plc_gates_check("compile", &gates, &job, est, &mem, gates.baseline ? &base : NULL,
                                yaml ? stderr : stdout, &gres);
    }
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
        plc_report_yaml_gates(&y, &gres);
        if (plc_yaml_end(&y)) rc = PLC_EXIT_INTERNAL;
    }
    if (gated && rc == PLC_EXIT_OK) rc = PLC_EXIT_GATE;
done:
    plc_arena_free(&a);
    return rc;
}
