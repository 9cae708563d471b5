/* chrome_trace.h: the one writer of Chrome trace-event JSON (what Perfetto
 * and chrome://tracing open), for the predicted timeline of `plc trace` and
 * the measured one of `plrun --trace` alike: pid = world rank, tid = stream
 * (0 compute, 1 comm; plc trace adds 2, the communication not under
 * compute: exposed comm), one complete event ("ph":"X") per instruction named
 * by its op, with the instruction index, layer, micro-batch, phase and (for
 * measured timelines) step as args. */
#ifndef PLC_CHROME_TRACE_H
#define PLC_CHROME_TRACE_H

#include <stdint.h>
#include <stdio.h>

#include "plc/plan.h"

typedef struct plc_ctrace {
    FILE *f;
    int first;            /* no event written yet */
    int exposed_track;    /* name tid 2 "exposed comm" too (plc trace's communication not under compute) */
    int64_t events;       /* events written so far (metadata included): what the file holds */
} plc_ctrace;

/* the header; generator names the writer ("plc trace", "plrun --trace");
 * set exposed_track after it to name a third track on every rank */
void plc_ctrace_begin(plc_ctrace *t, FILE *f, const char *generator, int64_t world_size, int64_t ranks_shown);
/* names the process of a rank (its coordinates) and its two streams */
void plc_ctrace_rank(plc_ctrace *t, const plc_layout *l, int64_t rank);
/* the same for a track that stands for n ranks with one timeline (rank
 * order): pid = ranks[0], named "ranks 0-3,8 (pp 0)", the list in args.ranks */
void plc_ctrace_ranks(plc_ctrace *t, const plc_layout *l, const int64_t *ranks, size_t n);
/* instruction idx of a rank's program ran from t0 to t1 (seconds); step < 0: none */
void plc_ctrace_instr(plc_ctrace *t, int64_t rank, uint32_t idx, const plc_instr *in, double t0, double t1,
                      int32_t step);
/* a span standing for count instructions from index first (plc trace's
 * aggregated form), named as given (its first word is the phase); compact:
 * no cat, and args.instrs only when count is not 1 */
void plc_ctrace_span(plc_ctrace *t, int64_t rank, int stream, const char *name, uint32_t first, uint32_t count,
                     double t0, double t1);
/* a process (pid) and a thread (tid of pid) named as given, for timelines
 * whose tracks are not a plan's two streams (plc trace of a spec) */
void plc_ctrace_process(plc_ctrace *t, int64_t pid, const char *name);
void plc_ctrace_thread(plc_ctrace *t, int64_t pid, int tid, const char *name);
void plc_ctrace_end(plc_ctrace *t);

#endif
