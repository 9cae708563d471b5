/* plan_trace.h: the predicted timeline of a plan (plc trace): the
 * simulation of plan_sim.h with the solver's cost primitives, written as
 * Chrome trace-event JSON (Perfetto, chrome://tracing): one process per
 * rank, one thread per stream (0 compute, 1 comm). */
#ifndef PLC_PLAN_TRACE_H
#define PLC_PLAN_TRACE_H

#include <stdbool.h>
#include <stdio.h>

#include "compiler/plantools/plan_sim.h"

/* the time model's cost of one instruction (seconds); ctx from
 * plc_trace_cost_ctx_new */
typedef struct plc_trace_cost_ctx plc_trace_cost_ctx;
plc_trace_cost_ctx *plc_trace_cost_ctx_new(const plc_plan *p);
void plc_trace_cost_ctx_free(plc_trace_cost_ctx *c);
double plc_trace_cost(void *ctx, const plc_plan *p, const plc_program *g, const plc_instr *in);

typedef struct plc_trace_summary {
    double step_time_s;  /* end of the last rank */
    int64_t ranks;       /* ranks simulated */
    double *busy_s;      /* [ranks] compute-stream time of non-communication ops */
    double *comm_s;      /* [ranks] comm-stream busy time */
    int64_t *world_rank; /* [ranks] */
    int64_t events;
} plc_trace_summary;

void plc_trace_summary_free(plc_trace_summary *s);

/* Simulates the plan (cost NULL: the time model) and writes the JSON to out
 * (NULL: none). all_ranks as in plan_sim.h. Returns 0 or -1 with err. */
int plc_trace_run(const plc_plan *p, bool all_ranks, plc_sim_cost_fn cost, void *cost_ctx, FILE *out,
                  plc_trace_summary *sum, char *err, size_t errlen);

/* What one event stands for: an instruction (plc_trace_run), or a unit, the
 * consecutive instructions of a stream with the same phase and micro-batch
 * (a pipeline unit's forward or backward over its layers, named
 * "fwd m5 L0-9"), so the file grows with micro-batches, not instructions. */
typedef enum plc_trace_detail { PLC_TRACE_INSTRS, PLC_TRACE_UNITS } plc_trace_detail;
int plc_trace_run_as(const plc_plan *p, bool all_ranks, plc_trace_detail detail, FILE *out, plc_trace_summary *sum,
                     char *err, size_t errlen);

#endif
