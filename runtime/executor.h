/* executor.h: runs a rank's program of a plan, step after step.
 *
 * One code path for every backend: the executor picks this rank's program,
 * checks every instruction against the operand contract of plan.h, places
 * every buffer at its planned offset in one arena, initialises the weights,
 * and for each step walks the instruction list with a flat dispatch on the
 * op, calling the backend (runtime/backend.h). Communication instructions on
 * the comm stream are started asynchronously and waited for where the plan
 * says (an instruction's `wait`, PLC_OP_WAIT, and the end of the step). */
#ifndef PLC_RUNTIME_EXECUTOR_H
#define PLC_RUNTIME_EXECUTOR_H

#include <stddef.h>
#include <stdint.h>

#include "plc/plan.h"
#include "runtime/backend.h"
#include "runtime/comm.h"
#include "runtime/data.h"
#include "runtime/trace.h"

typedef struct plc_executor plc_executor;

/* what one step produced, for the whole job (identical on every rank) */
typedef struct plc_step_stats {
    int64_t step;        /* 0-based */
    double loss;         /* mean cross-entropy over the global batch */
    double grad_norm;    /* global L2 norm before clipping (NAN when the plan has none) */
    double lr;
    double step_time_s;  /* wall time of the slowest rank */
    int nonfinite_rank;  /* the lowest rank whose loss or norm sum is not finite, -1 */
    int64_t moe_dropped; /* token copies the MoE routers dropped over an expert's capacity (tp replicas once) */
} plc_step_stats;

/* Builds the executor of this rank (comm must be set up for the plan).
 * Checks the program and allocates the arena; 0, or -1 with a message. */
int plc_exec_create(plc_executor **out, const plc_plan *plan, plc_comm *comm, plc_backend *be,
                    const plc_data *data, char *err, size_t errlen);
void plc_exec_destroy(plc_executor *x);

/* Initialises every PARAM (and MASTER) buffer from the layout-independent
 * generator; optimizer state and gradients start at zero. */
int plc_exec_init_weights(plc_executor *x, char *err, size_t errlen);

/* Runs the transfers of one step, and nothing else, over the arena as it
 * is (before the weights: zeros), in the step's order with its waits:
 * every rank at once, like a step. MPI sets up its connections and the
 * workspaces of these message sizes, so that they are in place before
 * plrun measures its baseline (docs/runtime.md, Reports). */
int plc_exec_warm_comm(plc_executor *x, char *err, size_t errlen);

/* Runs step `x->step` and advances. 0, or -1 with a message that names the
 * rank, the instruction index, the op and its source location. */
int plc_exec_step(plc_executor *x, plc_step_stats *stats, char *err, size_t errlen);

/* after a step whose stats name this rank as nonfinite_rank: where
 * ("rank 1: instruction 57 (XENT_LOSS, micro-batch 0, forward): the loss
 * sum is nan at step 12"); "" otherwise */
const char *plc_exec_nonfinite(const plc_executor *x);

/* accessors for checkpoints, tracing and reports */
int64_t plc_exec_next_step(const plc_executor *x);
void plc_exec_set_next_step(plc_executor *x, int64_t step);
const plc_program *plc_exec_program(const plc_executor *x);
int plc_exec_program_id(const plc_executor *x);
void *plc_exec_buffer(const plc_executor *x, int32_t id); /* backend memory */
plc_backend *plc_exec_backend(const plc_executor *x);
void plc_exec_set_trace(plc_executor *x, plc_trace *tr);

/* Step graphs (runtime/step_graph.h): with on, and a backend that records
 * graphs, cuts the program into segments that every step after the first
 * replays; a step with a trace runs eagerly. `mode` gets the words for
 * plrun's setup line ("eager (--no-graph)", "12 graphs over ..."). 0, or -1
 * with a message. */
int plc_exec_set_graphs(plc_executor *x, int on, char *mode, size_t len, char *err, size_t errlen);

/* Checks a program against the operand contract (exec_check.c); `rank` and
 * the coordinates only label messages and pick group sizes. */
int plc_exec_check_program(const plc_plan *plan, const plc_program *prog, const plc_comm *comm,
                           char *err, size_t errlen);
/* "rank 3: instruction 42 (MATMUL, layer 2, micro-batch 1, backward)" */
void plc_exec_describe(char *out, size_t len, int rank, const plc_program *prog, uint32_t idx);

#endif
