/* commands.h: the plc subcommands. Each takes (argc, argv) with argv[0] the
 * command's name, prints its own --help, and returns the process exit status:
 *   0 success, 1 an error in the input (spec, plan, options),
 *   2 no layout fits (solve, explain, compile), 3 an internal or system error. */
#ifndef PLC_COMMANDS_H
#define PLC_COMMANDS_H

enum { PLC_EXIT_OK = 0, PLC_EXIT_INPUT = 1, PLC_EXIT_NO_LAYOUT = 2, PLC_EXIT_INTERNAL = 3 };

int plc_cmd_check(int argc, char **argv);   /* compiler/cli/cmd_check.c   */
int plc_cmd_fmt(int argc, char **argv);     /* compiler/cli/cmd_fmt.c     */
int plc_cmd_solve(int argc, char **argv);   /* compiler/cli/cmd_solve.c   */
int plc_cmd_explain(int argc, char **argv); /* compiler/cli/cmd_explain.c */
int plc_cmd_scale(int argc, char **argv);   /* compiler/cli/cmd_scale.c   */
int plc_cmd_compile(int argc, char **argv); /* compiler/cli/cmd_compile.c */
int plc_cmd_dump(int argc, char **argv);    /* compiler/cli/cmd_dump.c    */
int plc_cmd_diff(int argc, char **argv);    /* compiler/cli/cmd_diff.c    */
int plc_cmd_trace(int argc, char **argv);   /* compiler/cli/cmd_trace.c   */

#endif
