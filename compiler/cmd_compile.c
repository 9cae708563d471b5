/* cmd_compile.c: plc compile FILE [-o job.bin]: solve (or take the pinned
 * layout), lower, check, write the plan, print a one-screen summary. */
#include <stdio.h>
#include <string.h>

#include "common/plan_io.h"
#include "compiler/cmd_args.h"
#include "compiler/commands.h"
#include "compiler/lower.h"
#include "compiler/report.h"
#include "compiler/report_load.h"
#include "compiler/report_memplan.h"
#include "compiler/solver.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: plc compile [OPTIONS] FILE [-o PLAN]\n"
            "\n"
            "Picks the layout (the one the layout block pins, or the solver's best),\n"
            "lowers it to one static program per pipeline stage with a static memory\n"
            "plan, checks the programs (send/recv matching, collective order, an\n"
            "all-rank simulation that must terminate) and writes the plan file.\n"
            "Exit status: 0 written, 1 an error in the spec or options, 2 no layout\n"
            "fits, 3 an internal error (a compiler bug caught by the checks).\n"
            "\n"
            "options:\n"
            "  -o PLAN       output file (default job.bin)\n"
            "%s"
            "  -h, --help    this text\n",
            plc_spec_options_help);
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
    const char *path = NULL, *outp = "job.bin";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) { usage(stdout); return PLC_EXIT_OK; }
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
    plc_solution sol;
    plc_solve_opts so = {.top = 1, .all = false};
    if (plc_solve_opts_run(&job, &a, &so, &sol)) { rc = PLC_EXIT_INPUT; goto done; }
    plc_layout layout;
    if (sol.pinned) {
        if (!sol.single.valid) {
            fprintf(stderr, "plc compile: error: the pinned layout is invalid: %s\n", sol.single.reason);
            rc = PLC_EXIT_INPUT;
            goto done;
        }
        if (!sol.single.fits) {
            fprintf(stderr, "plc compile: error: the pinned layout does not fit: %s\n", sol.single.reason);
            rc = PLC_EXIT_NO_LAYOUT;
            goto done;
        }
        layout = sol.single.layout;
    } else {
        if (sol.nranked == 0) {
            plc_report_no_fit(stderr, &job, &sol);
            fprintf(stderr, "plc compile: error: no layout fits\n");
            rc = PLC_EXIT_NO_LAYOUT;
            goto done;
        }
        layout = sol.ranked[0].layout;
    }
    plc_estimate *est = PLC_NEW(&a, plc_estimate);
    if (plc_estimate_layout(&job, &layout, est)) {
        fprintf(stderr, "plc compile: error: %s\n", est->reason);
        rc = PLC_EXIT_INPUT;
        goto done;
    }
    plc_prediction pred = {est->step_time_s, est->tokens_per_s, est->mfu, est->peak_bytes, 0};
    plc_plan plan;
    plc_memplan_stats *st = PLC_NEW_ARRAY(&a, plc_memplan_stats, layout.pp);
    char err[512];
    if (plc_lower(&job, &layout, &pred, &a, &plan, st, err, sizeof err)) {
        bool bug = strncmp(err, "internal error", 14) == 0;
        fprintf(stderr, "plc compile: %s%s\n", bug ? "" : "error: ", err);
        rc = bug ? PLC_EXIT_INTERNAL : PLC_EXIT_INPUT;
        goto done;
    }
    if (plc_plan_write_file(&plan, outp, err, sizeof err)) {
        fprintf(stderr, "plc compile: error: %s\n", err);
        rc = PLC_EXIT_INPUT; /* the output path or the disk, not a bug */
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
    summary(path, outp, &plan, est, st, bytes);
done:
    plc_arena_free(&a);
    return rc;
}
