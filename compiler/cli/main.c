/* main.c: the plc driver; dispatches to one subcommand. */
#include <setjmp.h>
#include <stdio.h>
#include <string.h>

#include "compiler/cli/cli_int.h"
#include "plc/arena.h"
#include "plc/status.h"
#include "plc/version.h"

typedef struct command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} command;

static const command commands[] = {
    {"check",   plc_cmd_check,   "validate specs and report every error"},
    {"fmt",     plc_cmd_fmt,     "print a spec in canonical form (--check for CI)"},
    {"solve",   plc_cmd_solve,   "rank the layouts that fit, fastest first"},
    {"explain", plc_cmd_explain, "why the best layout won: memory and time breakdowns"},
    {"scale",   plc_cmd_scale,   "throughput and per-GPU return against cluster size"},
    {"compile", plc_cmd_compile, "solve and lower to a plan file (job.bin)"},
    {"dump",    plc_cmd_dump,    "print a plan in stable text form"},
    {"diff",    plc_cmd_diff,    "compare two plans semantically"},
    {"trace",   plc_cmd_trace,   "write a plan's predicted timeline (Chrome trace JSON)"},
    {"export",  plc_cmd_export,  "the layout as a Megatron-LM launch script or torchtitan config"},
};

static void usage(FILE *out)
{
    fprintf(out,
            "usage: plc COMMAND [ARGS]\n"
            "\n"
            "plc, the parallel-layout compiler for LLM training: reads a .plan spec,\n"
            "finds the fastest layout that fits in memory, and lowers it to a static\n"
            "per-rank plan that plrun executes.\n"
            "\n"
            "commands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(out, "  %-8s  %s\n", commands[i].name, commands[i].summary);
    fprintf(out,
            "\n"
            "Every command that reads a spec takes -D block.key=value overrides.\n"
            "Run 'plc COMMAND --help' for a command's options.\n"
            "Exit status: 0 ok; 1 an error of the input or the usage (spec, options,\n"
            "files, out of memory); 2 no layout fits; 3 an internal error only.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return PLC_EXIT_INPUT;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return PLC_EXIT_OK;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("plc %s\n", PLC_VERSION);
        return PLC_EXIT_OK;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        if (strcmp(argv[1], commands[i].name) != 0) continue;
        /* out of memory anywhere in the command: PLC_E_SYSTEM comes back here */
        static plc_oom_trap oom;
        if (setjmp(oom.at)) {
            fprintf(stderr, "plc %s: error: out of memory while %s (%zu bytes more were needed)\n", commands[i].name,
                    oom.doing, oom.bytes);
            return plc_status_exit(PLC_E_SYSTEM);
        }
        plc_oom_set_trap(&oom);
        plc_oom_doing("reading the input");
        int rc = commands[i].run(argc - 1, argv + 1);
        plc_oom_set_trap(NULL);
        return rc;
    }
    fprintf(stderr, "plc: error: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return PLC_EXIT_INPUT;
}
