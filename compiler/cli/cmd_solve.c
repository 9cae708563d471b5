/* cmd_solve.c: plc solve FILE [--top K] [--all] [--format text|yaml] [--timing]. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/cli/cli_int.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: plc solve [OPTIONS] FILE\n"
            "\n"
            "Searches every layout the spec's layout block allows and ranks those that\n"
            "fit in memory by predicted step time (or by memory with objective = memory);\n"
            "among the layouts whose ranges overlap the fastest one's, the one with the\n"
            "best lower bound on throughput is ranked first. The ranges come from the\n"
            "error-bar table ($PLC_ERROR_BARS, \"none\" for none; else the built-in\n"
            "error_bars.csv).\n"
            "When the block pins every dimension, that one layout is evaluated and\n"
            "printed, fit or not. When nothing fits, prints the closest candidates and\n"
            "what would make them fit. Subtrees whose lower bound cannot reach the K\n"
            "best are skipped (branch and bound: the same ranking as estimating every\n"
            "layout; the counts line says how many each bound pruned).\n"
            "Exit status: 0 a layout fits, 1 an error in the spec or options,\n"
            "2 no layout fits.\n"
            "\n"
            "options:\n"
            "  --top K             print the K best layouts (default 10), each with the\n"
            "                      range of its prediction (error bars: docs/solver.md);\n"
            "                      layouts with exactly the same figures share one row\n"
            "                      ('tie: ...')\n"
            "  --all               estimate and print every candidate, ranked, including\n"
            "                      those that do not fit, with their prediction and reason\n"
            "  --format text|yaml  output format (default text); yaml is a document\n"
            "                      with the winner's full estimate and a list 'layouts'\n"
            "  --timing            include the search's wall time (left out by default\n"
            "                      so that the output is the same every run)\n"
            "%s"
            "  -h, --help          this text\n",
            plc_spec_options_help);
}

int plc_cmd_solve(int argc, char **argv)
{
    plc_spec_opts opts;
    if (plc_spec_take_options(&argc, argv, &opts)) return PLC_EXIT_INPUT;
    const char *path = NULL;
    long top = 10;
    bool all = false, yaml = false, timing = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) { usage(stdout); return PLC_EXIT_OK; }
        if (!strcmp(argv[i], "--all")) { all = true; continue; }
        if (!strcmp(argv[i], "--timing")) { timing = true; continue; }
        if (!strcmp(argv[i], "--top") || !strcmp(argv[i], "--format")) {
            bool is_top = !strcmp(argv[i], "--top");
            const char *v = plc_cmd_value("solve", argc, argv, &i, "a value");
            if (!v) return PLC_EXIT_INPUT;
            if (is_top ? plc_report_parse_count("solve", "--top", v, 1, 100000, &top)
                       : plc_cmd_parse_format("solve", v, &yaml))
                return PLC_EXIT_INPUT;
            continue;
        }
        if (plc_cmd_take_input("solve", "spec", argv[i], &path, usage)) return PLC_EXIT_INPUT;
    }
    if (plc_cmd_need_input("solve", "spec", path, usage)) return PLC_EXIT_INPUT;
    plc_arena a;
    plc_arena_init(&a);
    plc_job job;
    int rc = PLC_EXIT_OK;
    if (plc_report_load(&a, "solve", path, &opts, &job)) { rc = PLC_EXIT_INPUT; goto done; }
    plc_solution s;
    /* more than K kept, so that K rows remain after ties are folded */
    plc_solve_opts so = {.top = (int)(top < 10000 ? top * 8 : top), .all = all, .judge = plc_cli_judge(), .settle = (int)top};
    plc_status ss = plc_solve_opts_run(&job, &a, &so, &s);
    if (ss != PLC_OK) {
        fprintf(stderr, "plc solve: error: %s\n", s.error);
        rc = plc_status_exit(ss);
        goto done;
    }
    if (all) plc_report_sort_all(&job, &s);
    /* the error bars and the pick among overlapping ranges (report_range.c) */
    const char *no_range = NULL;
    if (plc_report_ranges(&a, "solve", &job, &s, &no_range)) { rc = PLC_EXIT_INPUT; goto done; }
    plc_report_opts ro = {.top = (int)top, .all = all, .timing = timing, .no_range = no_range};
    bool none = s.pinned ? !s.single.fits : s.nranked == 0;
    if (yaml) {
        const plc_candidate *best = s.pinned ? &s.single : s.nranked ? &s.ranked[0] : NULL;
        plc_estimate *w = NULL;
        if (best && best->valid) {
            w = malloc(sizeof *w);
            if (!w || plc_estimate_layout_judged(&job, &best->layout, plc_cli_judge(), w)) {
                free(w);
                w = NULL;
            }
        }
        if (plc_report_solve_yaml(stdout, &job, &s, &ro, w)) rc = PLC_EXIT_INTERNAL;
        free(w);
        if (none && rc == PLC_EXIT_OK) {
            if (s.pinned) fprintf(stderr, "plc solve: the pinned layout does not fit\n");
            else fprintf(stderr, "plc solve: no layout fits\n");
        }
    } else {
        plc_report_solve_text(stdout, &job, &s, &ro);
        if (none) {
            fputc('\n', stdout);
            if (s.pinned) {
                if (!s.single.valid) printf("the pinned layout is invalid: %s\n", s.single.reason);
                else printf("the pinned layout does not fit\n");
            } else {
                plc_report_no_fit(stdout, &job, &s);
            }
        }
    }
    if (none && rc == PLC_EXIT_OK) rc = PLC_EXIT_NO_LAYOUT;
done:
    plc_arena_free(&a);
    return rc;
}
