/* cmd_dump.c: plc dump PLAN [--rank R] [--no-buffers] [--expand]. */
#include <stdio.h>
#include <string.h>

#include "compiler/cli/cli_int.h"
#include "compiler/plantools/plantools.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: plc dump PLAN [--rank R] [--no-buffers] [--expand]\n"
            "\n"
            "Prints a plan in a stable text form that diffs well: the header (spec,\n"
            "model, layout, predictions, groups, stage map), then each program's\n"
            "buffers (name, kind, dtype, shape, arena offset and size, global tensor\n"
            "and shard) and instructions, one a line: index, phase, layer, micro-batch,\n"
            "op (comm: on the communication stream), buffer operands, integer\n"
            "arguments, float arguments, group, peer and wait. Layers and micro-batches\n"
            "that the plan file folds into loops are shown once: the first iteration\n"
            "between \"loop Nx {\" and \"}\", each next iteration stepping its layer,\n"
            "micro-batch, buffers and waits (docs/plan-format.md).\n"
            "\n"
            "options:\n"
            "  --rank R       only the program that world rank R runs\n"
            "  --no-buffers   leave out the buffer table\n"
            "  --expand       every iteration of every loop, one row a line\n"
            "  -h, --help     this text\n");
}

int plc_cmd_dump(int argc, char **argv)
{
    const char *path = NULL, *rank_text = NULL;
    bool buffers = true, expand = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) { usage(stdout); return PLC_EXIT_OK; }
        if (!strcmp(argv[i], "--no-buffers")) { buffers = false; continue; }
        if (!strcmp(argv[i], "--expand")) { expand = true; continue; }
        if (!strcmp(argv[i], "--rank")) {
            if (!(rank_text = plc_cmd_value("dump", argc, argv, &i, "a number"))) return PLC_EXIT_INPUT;
            continue;
        }
        if (plc_cmd_take_input("dump", "plan", argv[i], &path, usage)) return PLC_EXIT_INPUT;
    }
    if (plc_cmd_need_input("dump", "plan", path, usage)) return PLC_EXIT_INPUT;
    plc_arena a;
    plc_arena_init(&a);
    plc_plan p;
    int rc = PLC_EXIT_OK;
    int64_t rank = -1;
    if (plc_cmd_load_plan("dump", &a, path, &p)) {
        rc = PLC_EXIT_INPUT;
    } else if (rank_text && plc_parse_rank("dump", rank_text, p.world_size, &rank)) {
        rc = PLC_EXIT_INPUT;
    } else {
        for (uint32_t i = 0; expand && i < p.nprograms; i++) /* the rows are expanded; forget the loops */
            p.programs[i].nbuf_folds = p.programs[i].ninstr_folds = 0;
        plc_dump_plan(stdout, &p, rank, buffers);
    }
    plc_arena_free(&a);
    return rc;
}
