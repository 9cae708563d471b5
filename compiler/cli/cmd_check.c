/* cmd_check.c: plc check FILE... validates specs, reporting every error. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/parse_num.h"
#include "compiler/cli/commands.h"
#include "compiler/frontend/spec.h"
#include "compiler/frontend/spec_load.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: plc check [OPTIONS] FILE...\n"
            "\n"
            "Checks .plan specs: syntax, keys, units, the hardware catalog entry and the\n"
            "contradictions the spec alone shows. Errors and warnings go to stderr in\n"
            "the form file:line:col: error: ..., with the source line and a caret.\n"
            "Prints 'FILE: ok' for each spec without errors (and 'FILE: N errors'\n"
            "to stderr otherwise). Exit status: 0 all specs are valid, 1 otherwise.\n"
            "\n"
            "options:\n"
            "  -q, --quiet         print nothing for valid specs\n"
            "  --max-errors N      stop printing errors of a file after N (default %d)\n"
            "%s"
            "  -h, --help          this text\n",
            PLC_DIAG_DEFAULT_MAX_ERRORS, plc_spec_options_help);
}

int plc_cmd_check(int argc, char **argv)
{
    plc_spec_opts opts;
    if (plc_spec_take_options(&argc, argv, &opts)) return PLC_EXIT_INPUT;
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
    int bad = 0;
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
        } else if (!quiet) {
            printf("%s: ok\n", files[i]);
        }
        plc_arena_free(&a);
    }
    return bad ? PLC_EXIT_INPUT : PLC_EXIT_OK;
}
