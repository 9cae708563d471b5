/* cmd_args.h: argument handling shared by the commands that take one input
 * file (solve, explain, scale, compile, dump, trace) or read plans (dump,
 * diff, trace), so their messages read the same. Each prints "plc CMD: error: ..." to stderr and
 * returns -1 on a user error; the caller then exits with PLC_EXIT_INPUT. */
#ifndef PLC_CMD_ARGS_H
#define PLC_CMD_ARGS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "plc/arena.h"
#include "plc/plan.h"

typedef void plc_usage_fn(FILE *out);

/* an argument the command's own options did not take: rejects an unknown
 * option (then prints the usage) or a second input file, else stores it in
 * *path. `what` names the input: "spec" or "plan". */
int plc_cmd_take_input(const char *cmd, const char *what, const char *arg, const char **path, plc_usage_fn *usage);

/* after the loop: "no WHAT given" and the usage when no input was named */
int plc_cmd_need_input(const char *cmd, const char *what, const char *path, plc_usage_fn *usage);

/* plc_plan_load_file into arena a, with the loader's message on failure */
int plc_cmd_load_plan(const char *cmd, plc_arena *a, const char *path, plc_plan *p);

/* --rank R of dump/diff/trace: a rank in [0, world) */
int plc_parse_rank(const char *cmd, const char *text, int64_t world, int64_t *out);

/* --format text|yaml: sets *yaml; -1 after a message for anything else */
int plc_cmd_parse_format(const char *cmd, const char *text, bool *yaml);

/* --svg FILE: draw(f, ctx) writes the picture, replacing FILE atomically
 * (common/atomic_file.h). 0, or 1 after "plc CMD: error: ..." (a file that
 * cannot be written is the user's to fix: exit 1) */
int plc_cmd_write_svg(const char *cmd, const char *path, void (*draw)(FILE *f, const void *ctx), const void *ctx);

#endif
