/* commands.h: the plc subcommands. Each takes (argc, argv) with argv[0] the
 * command's name, prints its own --help, and returns the process exit status
 * (README, "Exit status"): library results are a plc_status mapped with
 * plc_status_exit (include/plc/status.h) to 0 ok, 1 input, 2 no layout or
 * does not fit, 3 internal; a command adds 4 when a CI gate failed (check
 * and compile: --max-memory, --min-mfu, --max-regression;
 * compiler/cli/gates.h). plc diff follows diff(1) instead: 0 equal,
 * 1 different, 2 an error. */
#ifndef PLC_COMMANDS_H
#define PLC_COMMANDS_H

enum { PLC_EXIT_OK = 0, PLC_EXIT_INPUT = 1, PLC_EXIT_NO_LAYOUT = 2, PLC_EXIT_INTERNAL = 3, PLC_EXIT_GATE = 4 };

int plc_cmd_check(int argc, char **argv);   /* compiler/cli/cmd_check.c   */
int plc_cmd_fmt(int argc, char **argv);     /* compiler/cli/cmd_fmt.c     */
int plc_cmd_solve(int argc, char **argv);   /* compiler/cli/cmd_solve.c   */
int plc_cmd_explain(int argc, char **argv); /* compiler/cli/cmd_explain.c */
int plc_cmd_scale(int argc, char **argv);   /* compiler/cli/cmd_scale.c   */
int plc_cmd_compile(int argc, char **argv); /* compiler/cli/cmd_compile.c */
int plc_cmd_dump(int argc, char **argv);    /* compiler/cli/cmd_dump.c    */
int plc_cmd_diff(int argc, char **argv);    /* compiler/cli/cmd_diff.c    */
int plc_cmd_trace(int argc, char **argv);   /* compiler/cli/cmd_trace.c   */
int plc_cmd_export(int argc, char **argv);  /* compiler/cli/cmd_export.c  */

#endif
