/* cmd_diff.c: plc diff A B [--rank R] [--no-listing] [--format text|yaml].
 * Exit status as diff(1): 0 equal, 1 different, 2 trouble (an unreadable
 * plan, a bad option), 3 an internal error. */
#include <stdio.h>
#include <string.h>

#include "compiler/cli/cli_int.h"
#include "compiler/plantools/plantools.h"

enum { DIFF_EQUAL = 0, DIFF_DIFFERENT = 1, DIFF_TROUBLE = 2 };

static void usage(FILE *out)
{
    fprintf(out,
            "usage: plc diff A B [--rank R] [--no-listing] [--format text|yaml]\n"
            "\n"
            "Compares two plans semantically: every setting that differs (model, train,\n"
            "cluster and the catalog figures used, layout) with old and new values,\n"
            "predicted step time and memory, each pipeline stage's program (instruction\n"
            "counts by op, communication volume by kind), then a unified diff of the\n"
            "instruction listings (plc dump) of one rank.\n"
            "Exit status, as diff(1): 0 the plans are equal, 1 they differ, 2 an error\n"
            "(an unreadable plan, a bad option), 3 an internal error.\n"
            "\n"
            "options:\n"
            "  --rank R            the rank whose listings are diffed (default 0)\n"
            "  --no-listing        leave out the unified diff\n"
            "  --format text|yaml  output format (default text); yaml lists 'changes'\n"
            "  -h, --help          this text\n");
}

int plc_cmd_diff(int argc, char **argv)
{
    const char *paths[2] = {NULL, NULL}, *rank_text = NULL;
    int npaths = 0;
    bool listing = true;
    plc_diff_format format = PLC_DIFF_TEXT;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) { usage(stdout); return PLC_EXIT_OK; }
        if (!strcmp(argv[i], "--no-listing")) { listing = false; continue; }
        if (!strcmp(argv[i], "--format")) {
            const char *f = i + 1 < argc ? argv[++i] : "";
            if (!strcmp(f, "yaml")) format = PLC_DIFF_YAML;
            else if (!strcmp(f, "text")) format = PLC_DIFF_TEXT;
            else {
                fprintf(stderr, "plc diff: error: --format takes text or yaml, not '%s'\n", f);
                return DIFF_TROUBLE;
            }
            continue;
        }
        if (!strcmp(argv[i], "--rank")) {
            if (i + 1 >= argc) {
                fprintf(stderr, "plc diff: error: --rank needs a number\n");
                return DIFF_TROUBLE;
            }
            rank_text = argv[++i];
            continue;
        }
        if (argv[i][0] == '-' && argv[i][1]) {
            fprintf(stderr, "plc diff: error: unknown option '%s'\n", argv[i]);
            usage(stderr);
            return DIFF_TROUBLE;
        }
        if (npaths == 2) {
            fprintf(stderr, "plc diff: error: two plans, not more ('%s')\n", argv[i]);
            return DIFF_TROUBLE;
        }
        paths[npaths++] = argv[i];
    }
    if (npaths != 2) {
        fprintf(stderr, "plc diff: error: two plans needed\n");
        usage(stderr);
        return DIFF_TROUBLE;
    }
    plc_arena a;
    plc_arena_init(&a);
    plc_plan p[2];
    int rc = PLC_EXIT_OK;
    for (int k = 0; k < 2 && rc == PLC_EXIT_OK; k++)
        if (plc_cmd_load_plan("diff", &a, paths[k], &p[k])) rc = DIFF_TROUBLE;
    int64_t rank = 0;
    int64_t world = p[0].world_size < p[1].world_size ? p[0].world_size : p[1].world_size;
    if (rc == PLC_EXIT_OK && rank_text && plc_parse_rank("diff", rank_text, world, &rank)) rc = DIFF_TROUBLE;
    if (rc == PLC_EXIT_OK) {
        int d = plc_plan_diff(stdout, &p[0], &p[1], paths[0], paths[1], rank, listing, format);
        rc = d < 0 ? DIFF_TROUBLE : d ? DIFF_DIFFERENT : DIFF_EQUAL;
    }
    plc_arena_free(&a);
    return rc;
}
