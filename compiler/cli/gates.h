/* gates.h: the CI gates of plc check and plc compile.
 *
 *   --max-memory 80%        the peak per rank (compile: the plan's exact one,
 *                           check: the predicted one) is at most 80% of the
 *                           device's memory
 *   --min-mfu 45%           the predicted MFU is at least 45%
 *   --baseline OLD.bin      compare with a plan compiled before (its recorded
 *   --max-regression 2%     prediction): throughput may drop by at most 2%
 *
 * A gate that fails prints "plc CMD: gate failed: ..." on stderr and the
 * command exits with PLC_EXIT_GATE (4); see commands.h. */
#ifndef PLC_GATES_H
#define PLC_GATES_H

#include <stdbool.h>
#include <stdio.h>

#include "compiler/solver/solver.h"
#include "plc/job.h"

typedef struct plc_gates {
    double max_memory;     /* fraction of device memory; 0: no gate */
    double min_mfu;        /* fraction; 0: no gate */
    const char *baseline;  /* plan file or NULL */
    double max_regression; /* fraction of throughput; < 0: not given */
} plc_gates;

/* the options above, for --help texts */
extern const char plc_gates_help[];

/* Takes the gate options out of argv (as plc_spec_take_options does).
 * Returns 0, or -1 after a message on stderr. */
int plc_gates_take_options(const char *cmd, int *argc, char **argv, plc_gates *g);
/* true when any gate is set */
bool plc_gates_any(const plc_gates *g);
/* The per-rank memory the memory gate judges, and its name in the report:
 * plc compile passes the plan's exact figure (the most loaded stage's arena
 * plus the runtime's fixed costs, the figure it decides fit on), plc check
 * the solver's estimate (NULL: e->peak_bytes, "predicted"). */
typedef struct plc_gate_memory {
    double peak_bytes;
    const char *what; /* "exact", "predicted" */
} plc_gate_memory;

/* Checks the gates against the chosen layout's estimate (and mem, see
 * above); prints one line per gate on out ("gate ...: pass") and each
 * failure on stderr. Returns 0 all pass, 1 a gate failed, -1 the baseline
 * is unreadable (message on stderr). */
int plc_gates_check(const char *cmd, const plc_gates *g, const plc_job *job, const plc_estimate *e,
                    const plc_gate_memory *mem, FILE *out);

#endif
