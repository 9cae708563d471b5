/* cmd_dump.c: plc dump PLAN [--rank R] [--no-buffers]. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/plan_io.h"
#include "compiler/commands.h"
#include "compiler/plan_dump.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: plc dump PLAN [--rank R] [--no-buffers]\n"
            "\n"
            "Prints a plan in a stable text form that diffs well: the header (spec,\n"
            "model, layout, predictions, groups, stage map), then each program's\n"
            "buffers (name, kind, dtype, shape, arena offset and size, global tensor\n"
            "and shard) and instructions, one a line: index, phase, layer, micro-batch,\n"
            "op (comm: on the communication stream), buffer operands, integer\n"
            "arguments, float arguments, group, peer and wait.\n"
            "\n"
            "options:\n"
            "  --rank R       only the program that world rank R runs\n"
            "  --no-buffers   leave out the buffer table\n"
            "  -h, --help     this text\n");
}

/* a rank number in [0, world) or -1 after a message */
int plc_parse_rank(const char *cmd, const char *text, int64_t world, int64_t *out)
{
    char *end;
    long long v = strtoll(text, &end, 10);
    if (!*text || *end || v < 0 || v >= world) {
        fprintf(stderr, "plc %s: error: --rank '%s' is not a rank of this plan (0..%lld)\n", cmd, text,
                (long long)world - 1);
        return -1;
    }
    *out = v;
    return 0;
}

int plc_cmd_dump(int argc, char **argv)
{
    const char *path = NULL, *rank_text = NULL;
    bool buffers = true;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) { usage(stdout); return PLC_EXIT_OK; }
        if (!strcmp(argv[i], "--no-buffers")) { buffers = false; continue; }
        if (!strcmp(argv[i], "--rank")) {
            if (i + 1 >= argc) {
                fprintf(stderr, "plc dump: error: --rank needs a number\n");
                return PLC_EXIT_INPUT;
            }
            rank_text = argv[++i];
            continue;
        }
        if (argv[i][0] == '-' && argv[i][1]) {
            fprintf(stderr, "plc dump: error: unknown option '%s'\n", argv[i]);
            usage(stderr);
            return PLC_EXIT_INPUT;
        }
        if (path) {
            fprintf(stderr, "plc dump: error: one plan at a time ('%s' and '%s')\n", path, argv[i]);
            return PLC_EXIT_INPUT;
        }
        path = argv[i];
    }
    if (!path) {
        fprintf(stderr, "plc dump: error: no plan given\n");
        usage(stderr);
        return PLC_EXIT_INPUT;
    }
    plc_arena a;
    plc_arena_init(&a);
    plc_plan p;
    char err[512];
    int rc = PLC_EXIT_OK;
    int64_t rank = -1;
    if (plc_plan_load_file(&a, path, &p, err, sizeof err)) {
        fprintf(stderr, "plc dump: error: %s\n", err);
        rc = PLC_EXIT_INPUT;
    } else if (rank_text && plc_parse_rank("dump", rank_text, p.world_size, &rank)) {
        rc = PLC_EXIT_INPUT;
    } else {
        plc_dump_plan(stdout, &p, rank, buffers);
    }
    plc_arena_free(&a);
    return rc;
}
