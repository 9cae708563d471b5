/* cmd_explain.c: plc explain FILE: why the best layout won. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/cli/cli_int.h"
#include "compiler/lower/lower.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: plc explain [OPTIONS] FILE\n"
            "\n"
            "Solves the spec and explains the winner: memory per rank by pipeline stage\n"
            "and component, the step-time breakdown (compute, memory-bound work,\n"
            "exposed communication by kind, bubble), and for every layout dimension the\n"
            "best layout with another value there and why it lost: the step-time\n"
            "components that make it slower, or, where nothing fits, the memory\n"
            "component that does not; exact ties and the rule that breaks them; and\n"
            "each pp the search did not reach, with the rule that removed it.\n"
            "Exit status: 0, 1 an error in the spec or options, 2 no layout fits.\n"
            "\n"
            "options:\n"
            "  --format text|yaml  output format (default text)\n"
            "  --svg FILE          also draw the winner's memory per stage by component\n"
            "                      against the limit as an SVG picture ('-': to standard\n"
            "                      output, in place of the report)\n"
            "%s"
            "  -h, --help          this text\n",
            plc_spec_options_help);
}

/* what the memory picture draws */
typedef struct explain_picture {
    const plc_job *job;
    const plc_estimate *winner;
    const plc_plan *plan;
} explain_picture;

static void draw_explain(FILE *f, const void *ctx)
{
    const explain_picture *p = ctx;
    plc_report_explain_svg(f, p->job, p->winner, p->plan);
}

int plc_cmd_explain(int argc, char **argv)
{
    plc_spec_opts opts;
    if (plc_spec_take_options(&argc, argv, &opts)) return PLC_EXIT_INPUT;
    const char *path = NULL, *svg = NULL;
    bool yaml = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) { usage(stdout); return PLC_EXIT_OK; }
        if (!strcmp(argv[i], "--svg")) {
            if (!(svg = plc_cmd_value("explain", argc, argv, &i, "a file name"))) return PLC_EXIT_INPUT;
            continue;
        }
        if (!strcmp(argv[i], "--format")) {
            if (plc_cmd_parse_format("explain", i + 1 < argc ? argv[++i] : NULL, &yaml)) return PLC_EXIT_INPUT;
            continue;
        }
        if (plc_cmd_take_input("explain", "spec", argv[i], &path, usage)) return PLC_EXIT_INPUT;
    }
    if (plc_cmd_need_input("explain", "spec", path, usage)) return PLC_EXIT_INPUT;
    if (yaml && plc_cmd_is_stdout(svg)) {
        fprintf(stderr, "plc explain: error: --svg - and --format yaml would both write standard output\n");
        return PLC_EXIT_INPUT;
    }
    plc_arena a;
    plc_arena_init(&a);
    plc_job job;
    int rc = PLC_EXIT_OK;
    plc_estimate *w = NULL;
    if (plc_report_load(&a, "explain", path, &opts, &job)) { rc = PLC_EXIT_INPUT; goto done; }
    plc_solution s;
    plc_solve_opts so = {.exhaustive = true, .judge = plc_cli_judge()}; /* every region's best, for the runners-up */
    plc_status ss = plc_solve_opts_run(&job, &a, &so, &s);
    if (ss != PLC_OK) {
        fprintf(stderr, "plc explain: error: %s\n", s.error);
        rc = plc_status_exit(ss);
        goto done;
    }
    /* the error bars and the pick among overlapping ranges (report_range.c) */
    const char *no_range = NULL;
    if (plc_report_ranges(&a, "explain", &job, &s, &no_range)) { rc = PLC_EXIT_INPUT; goto done; }
    const plc_candidate *best = s.pinned ? &s.single : (s.nranked ? &s.ranked[0] : NULL);
    if (!best || !best->valid) {
        plc_report_opts ro = {.top = 0, .no_range = no_range};
        plc_report_solve_text(stdout, &job, &s, &ro);
        if (s.pinned) printf("\nthe pinned layout is invalid: %s\n", s.single.reason);
        else plc_report_no_fit(stdout, &job, &s);
        rc = PLC_EXIT_NO_LAYOUT;
        goto done;
    }
    w = malloc(sizeof *w);
    if (!w || plc_estimate_layout_judged(&job, &best->layout, plc_cli_judge(), w)) { rc = PLC_EXIT_INTERNAL; goto done; }
    /* the winner lowered: its static memory plan is the exact peak the
     * solver's estimate is compared with */
    plc_explain_plan lowered = {.no_range = no_range};
    plc_plan *plan = PLC_NEW(&a, plc_plan);
    plc_memplan_stats *st = PLC_NEW_ARRAY(&a, plc_memplan_stats, w->layout.pp);
    plc_prediction pred = {w->step_time_s, w->tokens_per_s, w->mfu, w->peak_bytes, 0, w->bubble_fraction};
    char err[512];
    if (job.train.engine != PLC_ENGINE_PLRUN) {
        /* a plan is plrun's program: another engine's memory is the estimate */
        snprintf(err, sizeof err, "plans are plrun's, and train.engine = %s", plc_engine_name(job.train.engine));
        lowered.why = err;
    } else if (plc_lower(&job, &w->layout, &pred, &a, plan, st, err, sizeof err) == 0) {
        lowered.plan = plan;
        lowered.stats = st;
    } else {
        lowered.why = err;
    }
    if (svg) {
        const explain_picture pic = {&job, w, lowered.plan};
        if (plc_cmd_write_svg("explain", svg, draw_explain, &pic)) {
            rc = PLC_EXIT_INPUT;
            goto done;
        }
        if (plc_cmd_is_stdout(svg)) { /* the picture is the output: no report */
            if (!w->fits) {
                fprintf(stderr, "plc explain: the pinned layout does not fit: %s\n", w->reason);
                rc = PLC_EXIT_NO_LAYOUT;
            }
            goto done;
        }
    }
    if (yaml) {
        plc_yaml y;
        plc_yaml_begin(&y, stdout, "explain");
        plc_report_explain_yaml(&y, &job, &s, w, &lowered);
        if (plc_yaml_end(&y)) rc = PLC_EXIT_INTERNAL;
    } else {
        plc_report_explain(stdout, &job, &s, w, &lowered);
    }
    if (!w->fits) {
        fprintf(yaml ? stderr : stdout, "\nthe pinned layout does not fit: %s\n", w->reason);
        rc = PLC_EXIT_NO_LAYOUT;
    }
done:
    free(w);
    plc_arena_free(&a);
    return rc;
}
