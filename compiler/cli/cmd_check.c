/* cmd_check.c: plc check FILE... validates specs, reporting every error. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/parse_num.h"
#include "compiler/cli/cli_int.h"
#include "compiler/frontend/frontend.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: plc check [OPTIONS] FILE...\n"
            "\n"
            "Checks .plan specs: syntax, keys, units, the hardware catalog entry, the\n"
            "contradictions the spec alone shows and, as plc compile does, the token\n"
            "file of train.data (read whole: format, length, vocabulary, token ids;\n"
            "docs/data.md). Errors and warnings go to stderr in the form\n"
            "file:line:col: error: ..., with the source line and a caret.\n"
            "Prints 'FILE: ok' for each spec without errors (and 'FILE: N errors'\n"
            "to stderr otherwise). With a gate (an option, or the spec's gates block)\n"
            "each valid spec is also solved and its chosen layout's prediction checked\n"
            "against the gates, one line per gate naming the spec.\n"
            "Exit status: 0 all specs are valid (and pass the gates), 1 a spec has\n"
            "errors, 2 no layout fits a spec (with gates), 4 a gate failed.\n"
            "\n"
            "options:\n"
            "  -q, --quiet         print nothing for valid specs\n"
            "  --max-errors N      stop printing errors of a file after N (default %d)\n"
            "%s"
            "%s"
            "  -h, --help          this text\n",
            PLC_DIAG_DEFAULT_MAX_ERRORS, plc_gates_help, plc_spec_options_help);
}

/* solves a valid spec and checks its chosen layout against the gates: the
 * options' over the spec's gates block (none: nothing to do) */
static int gate(const char *file, const plc_job *job, const plc_gates *options, plc_arena *a)
{
    plc_gates gates;
    plc_gates_for_job(options, job, &gates);
    if (!plc_gates_any(&gates)) return PLC_EXIT_OK;
    plc_plan base;
    if (gates.baseline && plc_gates_baseline("check", &gates, job, a, &base)) return PLC_EXIT_INPUT;
    plc_solution s;
    plc_solve_opts so = {.top = 1, .all = false, .judge = plc_cli_judge()};
    if (plc_solve_opts_run(job, a, &so, &s)) {
        fprintf(stderr, "plc check: error: %s: the gates cannot be checked: %s\n", file, s.error);
        return PLC_EXIT_INPUT;
    }
    const plc_candidate *best = s.pinned ? &s.single : s.nranked ? &s.ranked[0] : NULL;
    if (!best || !best->fits) {
        if (!s.pinned) plc_report_no_fit(stderr, job, &s); /* why, and the closest alternatives */
        fprintf(stderr, "plc check: %s: no layout fits, the gates cannot be checked\n", file);
        return PLC_EXIT_NO_LAYOUT;
    }
    plc_estimate *e = malloc(sizeof *e);
    if (!e) return PLC_EXIT_INTERNAL;
    int rc = PLC_EXIT_OK;
    if (plc_estimate_layout_judged(job, &best->layout, plc_cli_judge(), e)) rc = PLC_EXIT_INTERNAL;
    else if (plc_gates_check("check", &gates, job, e, NULL, gates.baseline ? &base : NULL, stdout, NULL))
        rc = PLC_EXIT_GATE;
    free(e);
    return rc;
}

int plc_cmd_check(int argc, char **argv)
{
    plc_spec_opts opts;
    if (plc_spec_take_options(&argc, argv, &opts)) return PLC_EXIT_INPUT;
    opts.read_data = true; /* every check plc compile makes, the token file's too */
    plc_gates gates;
    if (plc_gates_take_options("check", &argc, argv, &gates)) return PLC_EXIT_INPUT;
    bool quiet = false;
    const char *files[256];
    int nfiles = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) { usage(stdout); return PLC_EXIT_OK; }
        if (!strcmp(argv[i], "-q") || !strcmp(argv[i], "--quiet")) { quiet = true; continue; }
        if (!strcmp(argv[i], "--max-errors") && i + 1 < argc) {
            int64_t n;
            if (plc_parse_int(argv[++i], 1, 100000, &n)) {
                fprintf(stderr, "plc check: error: --max-errors takes a number from 1 to 100000\n");
                return PLC_EXIT_INPUT;
            }
            opts.max_errors = (int)n;
            continue;
        }
        if (argv[i][0] == '-' && argv[i][1]) {
            fprintf(stderr, "plc check: error: unknown option '%s'\n", argv[i]);
            usage(stderr);
            return PLC_EXIT_INPUT;
        }
        if (nfiles == (int)(sizeof files / sizeof files[0])) {
            fprintf(stderr, "plc check: error: too many files (at most %d)\n", nfiles);
            return PLC_EXIT_INPUT;
        }
        files[nfiles++] = argv[i];
    }
    if (nfiles == 0) {
        fprintf(stderr, "plc check: error: no spec given\n");
        usage(stderr);
        return PLC_EXIT_INPUT;
    }
    if (gates.baseline && nfiles > 1) {
        fprintf(stderr, "plc check: error: --baseline compares one spec; %d given\n", nfiles);
        return PLC_EXIT_INPUT;
    }
    int bad = 0, nofit = 0, gated = 0, internal = 0;
    for (int i = 0; i < nfiles; i++) {
        plc_arena a;
        plc_arena_init(&a);
        plc_diag d;
        plc_diag_init(&d, stderr, opts.max_errors);
        plc_job job;
        int errors = plc_spec_load_diag(&a, files[i], &opts, &job, &d);
        if (errors) {
            fprintf(stderr, "%s: %d error%s, %d warning%s\n", files[i], errors, errors == 1 ? "" : "s", d.warnings,
                    d.warnings == 1 ? "" : "s");
            bad++;
        } else {
            if (!quiet) printf("%s: ok\n", files[i]);
            fflush(stdout);
            int g = gate(files[i], &job, &gates, &a);
            bad += g == PLC_EXIT_INPUT;
            internal += g == PLC_EXIT_INTERNAL;
            nofit += g == PLC_EXIT_NO_LAYOUT;
            gated += g == PLC_EXIT_GATE;
        }
        plc_arena_free(&a);
    }
    return internal ? PLC_EXIT_INTERNAL : bad ? PLC_EXIT_INPUT : nofit ? PLC_EXIT_NO_LAYOUT : gated ? PLC_EXIT_GATE : PLC_EXIT_OK;
}
