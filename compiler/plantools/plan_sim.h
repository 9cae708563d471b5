/* plan_sim.h: a discrete-event simulation of every rank's program, shared
 * by the compile-time checks (plan_check, zero costs: does it terminate, do
 * sends and receives match, do all members enter each collective in the
 * same order) and by `plc trace` (the time model's costs: the predicted
 * timeline).
 *
 * Semantics, as plan.h states them: compute-stream instructions run in list
 * order, each after the previous one; a compute-stream SEND/RECV or
 * collective blocks until all its parties have posted it. Comm-stream
 * instructions are posted when reached and complete when matched, without
 * blocking the list; an instruction with wait >= 0 starts after that
 * instruction completed. Point-to-point messages between two ranks match in
 * posting order; the n-th call of each member of a communicator matches the
 * n-th call of every other member, and must be the same operation with the
 * same count. A comm stream carries one collective at a time; messages
 * travel independently.
 *
 * Ranks. With all_ranks, every world rank is simulated. Otherwise one rank
 * per pipeline stage (tp = cp = dp = 0): the ranks of a stage run the same
 * program and meet each other only in groups without PLC_DIM_PP, where
 * they arrive in lock-step, so those collectives complete as soon as the
 * representative arrives; what couples stages (send/recv, groups with PP)
 * is simulated exactly. */
#ifndef PLC_PLAN_SIM_H
#define PLC_PLAN_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "plc/plan.h"
#include "plc/status.h"

/* seconds an instruction takes once it can start (for a collective or a
 * message: once every party has arrived) */
typedef double (*plc_sim_cost_fn)(void *ctx, const plc_plan *p, const plc_program *g, const plc_instr *in);
/* called for every instruction that takes time, as it is scheduled */
typedef void (*plc_sim_event_fn)(void *ctx, int64_t world_rank, int64_t stage, uint32_t instr,
                                 const plc_instr *in, double start, double end);

typedef struct plc_sim_opts {
    bool all_ranks;
    plc_sim_cost_fn cost; /* NULL: every instruction takes 0 s */
    void *cost_ctx;
    plc_sim_event_fn event; /* NULL: none */
    void *event_ctx;
} plc_sim_opts;

typedef struct plc_sim_result {
    double end_time;     /* when the last rank finished the step */
    int64_t ranks;       /* ranks simulated */
    int64_t instructions;/* instructions executed over all simulated ranks */
} plc_sim_result;

/* Returns PLC_OK, or with the first violation in err, naming the world
 * rank, the instruction index and the op: PLC_E_DEADLOCK when the ranks
 * cannot all finish (naming every blocked rank), PLC_E_SYSTEM out of
 * memory, PLC_E_INTERNAL any other violation. */
plc_status plc_sim_run(const plc_plan *p, const plc_sim_opts *opts, plc_sim_result *res, char *err, size_t errlen);

#endif
