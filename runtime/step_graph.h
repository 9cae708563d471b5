/* step_graph.h: which stretches of a rank's step a backend may capture as a
 * graph once and replay every later step (docs/runtime.md, "Step graphs").
 *
 * A captured stretch is replayed with the arguments it was captured with,
 * so it may hold only instructions whose every argument is the same from
 * step to step and which never stop for the host. A backend with graphs
 * keeps the step's scalars in its own memory (the loss and squared-norm
 * sums, the clip factor, and AdamW's learning rate and step count, written
 * before each step: backend.h's set_step), so the instructions that run
 * eagerly, outside any graph, are only:
 *   DATA_LOAD   the host reads the step's batch and uploads it (unless
 *               staged: PLC_GRAPH_DATA_STAGED below);
 *   a transfer  when the backend cannot record its collectives;
 *   MOE_ROUTE, MOE_MM, MOE_MM_DW
 *               the mixture of experts' run-time counts: the CUDA forms
 *               read the dropped copies and each expert's rows back to
 *               the host;
 *   a transfer's whole span (its start through the instruction that waits
 *               for it) when anything in that span runs eagerly: a graph
 *               neither starts a transfer it does not wait for nor waits for
 *               one it did not start.
 * The rest falls into maximal runs of consecutive instructions; runs shorter
 * than a minimum run eagerly too (a graph launch costs about as much as a
 * few kernel launches). Pure host logic over the program: no backend. */
#ifndef PLC_RUNTIME_STEP_GRAPH_H
#define PLC_RUNTIME_STEP_GRAPH_H

#include <stdint.h>

#include "plc/plan.h"

/* instructions [first, end) of the program, captured as one graph */
typedef struct plc_step_segment {
    uint32_t first, end;
} plc_step_segment;

typedef struct plc_step_segments {
    plc_step_segment *seg;
    uint32_t n;
    uint32_t captured;  /* instructions inside segments */
    int32_t *seg_of;    /* per instruction: its segment, or -1 (eager) */
} plc_step_segments;

/* the shortest run worth a graph */
enum { PLC_STEP_GRAPH_MIN_RUN = 4 };

/* what the executor and backend can record (a bit set):
 * PLC_GRAPH_COMM         the backend records its transfers;
 * PLC_GRAPH_DATA_STAGED  the executor uploads every micro-batch to a staging
 *                        buffer at the step's start, and DATA_LOAD is then a
 *                        device copy: no longer eager */
enum { PLC_GRAPH_COMM = 1, PLC_GRAPH_DATA_STAGED = 2 };

/* 1 when `op` runs eagerly by itself (the list above, less what caps
 * allows) */
int plc_step_graph_eager_op(plc_op op, unsigned caps);

/* Cuts the program into segments (min_run: the shortest one kept).
 * 0, or -1 when out of memory. */
int plc_step_graph_plan(const plc_program *prog, unsigned caps, uint32_t min_run, plc_step_segments *out);
void plc_step_segments_free(plc_step_segments *s);

#endif
