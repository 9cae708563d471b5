/* cmd_diff.c: plc diff A B [--rank R] [--no-listing]. */
#include <stdio.h>
#include <string.h>

#include "compiler/cli/cmd_args.h"
#include "compiler/cli/commands.h"
#include "compiler/plantools/plan_diff.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: plc diff A B [--rank R] [--no-listing]\n"
            "\n"
            "Compares two plans semantically: layout changes, predicted step time and\n"
            "memory, each pipeline stage's program (instruction counts by op,\n"
            "communication volume by kind), then a unified diff of the instruction\n"
            "listings (plc dump) of one rank.\n"
            "\n"
            "options:\n"
            "  --rank R       the rank whose listings are diffed (default 0)\n"
            "  --no-listing   leave out the unified diff\n"
            "  -h, --help     this text\n");
}

int plc_cmd_diff(int argc, char **argv)
{
    const char *paths[2] = {NULL, NULL}, *rank_text = NULL;
    int npaths = 0;
    bool listing = true;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) { usage(stdout); return PLC_EXIT_OK; }
        if (!strcmp(argv[i], "--no-listing")) { listing = false; continue; }
        if (!strcmp(argv[i], "--rank")) {
            if (i + 1 >= argc) {
                fprintf(stderr, "plc diff: error: --rank needs a number\n");
                return PLC_EXIT_INPUT;
            }
            rank_text = argv[++i];
            continue;
        }
        if (argv[i][0] == '-' && argv[i][1]) {
            fprintf(stderr, "plc diff: error: unknown option '%s'\n", argv[i]);
            usage(stderr);
            return PLC_EXIT_INPUT;
        }
        if (npaths == 2) {
            fprintf(stderr, "plc diff: error: two plans, not more ('%s')\n", argv[i]);
            return PLC_EXIT_INPUT;
        }
        paths[npaths++] = argv[i];
    }
    if (npaths != 2) {
        fprintf(stderr, "plc diff: error: two plans needed\n");
        usage(stderr);
        return PLC_EXIT_INPUT;
    }
    plc_arena a;
    plc_arena_init(&a);
    plc_plan p[2];
    int rc = PLC_EXIT_OK;
    for (int k = 0; k < 2 && rc == PLC_EXIT_OK; k++)
        if (plc_cmd_load_plan("diff", &a, paths[k], &p[k])) rc = PLC_EXIT_INPUT;
    int64_t rank = 0;
    int64_t world = p[0].world_size < p[1].world_size ? p[0].world_size : p[1].world_size;
    if (rc == PLC_EXIT_OK && rank_text && plc_parse_rank("diff", rank_text, world, &rank)) rc = PLC_EXIT_INPUT;
    if (rc == PLC_EXIT_OK && plc_plan_diff(stdout, &p[0], &p[1], paths[0], paths[1], rank, listing)) rc = PLC_EXIT_INTERNAL;
    plc_arena_free(&a);
    return rc;
}
