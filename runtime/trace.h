/* trace.h: the measured timeline of plrun (--trace FILE).
 *
 * Every executed instruction becomes one complete event ("ph":"X") of the
 * Chrome trace-event JSON, written by common/chrome_trace.h, the writer
 * `plc trace` uses for the predicted timeline: pid = world rank,
 * tid = stream (0 compute, 1 comm), name = the op, args = instruction index,
 * layer, micro-batch, phase and step. Communication events span from the
 * start of the non-blocking call to the completion of its wait. Rank 0
 * gathers the events of every rank and writes the file atomically. plrun
 * creates the trace right after a barrier, so the ranks' origins agree. */
#ifndef PLC_RUNTIME_TRACE_H
#define PLC_RUNTIME_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "plc/plan.h"
#include "runtime/comm.h"

typedef struct plc_trace_event {
    double t0, t1;  /* seconds since the trace's origin */
    int32_t instr;  /* index in the rank's program */
    int32_t step;
} plc_trace_event;

typedef struct plc_trace {
    double origin;   /* plc_trace_now() at creation */
    size_t n, cap, max_events;
    plc_trace_event *ev;
    size_t dropped;
} plc_trace;

double plc_trace_now(void); /* monotonic seconds */

void plc_trace_init(plc_trace *t, size_t max_events);
void plc_trace_free(plc_trace *t);
void plc_trace_record(plc_trace *t, int32_t instr, int32_t step, double t0, double t1);

/* Collective over the world: gathers every rank's events on rank 0, which
 * writes `path`. Returns 0, or -1 with a message (on rank 0). */
int plc_trace_write(plc_trace *t, plc_comm *comm, const plc_plan *plan, const char *path,
                    char *err, size_t errlen);

#endif
