/* pipeline_order.h: the one definition of a pipeline schedule: which layers
 * form each chunk, which pipeline rank owns it, and the order in which each
 * rank runs its forward and backward units. The lowering emits its programs
 * in this order, the schedule simulator (schedule_model.c) times it and the
 * memory model takes its in-flight counts from plc_pipe_warmup, so the
 * three cannot disagree.
 *
 *   gpipe        pp contiguous chunks; all forwards, then all backwards
 *   1f1b         pp contiguous chunks; pp-1-r warm-up forwards, then one
 *                forward one backward, then the remaining backwards
 *   interleaved  pp*vpp chunks, chunk c on rank c mod pp; Megatron's
 *                interleaved 1F1B (micro-batches in groups of pp)
 *   layered      one chunk per layer, contiguous placement, breadth-first:
 *                every micro-batch through a layer before the next layer
 *                (layered gradient accumulation), backward likewise
 *   modular      one chunk per layer, layer i on rank i mod pp, breadth-first
 *
 * A unit is (direction, chunk, micro-batch). Forward of chunk c needs the
 * forward of c-1 for the same micro-batch; backward of c needs backward of
 * c+1 and forward of c. The layout must have passed the rulebook
 * (common/layout_rules.h). */
#ifndef PLC_PIPELINE_ORDER_H
#define PLC_PIPELINE_ORDER_H

#include <stdbool.h>
#include <stdint.h>

#include "plc/job.h"

typedef struct plc_pipe_unit {
    uint8_t bwd;   /* 0 forward, 1 backward */
    int32_t chunk; /* global chunk id */
    int32_t micro;
} plc_pipe_unit;

typedef struct plc_pipe_shape {
    plc_schedule schedule;
    int64_t pp, vpp, layers;
    int64_t nchunks;  /* chunks over all ranks */
    int64_t per_rank; /* chunks per rank */
    bool looping;     /* chunk c on rank c mod pp (else contiguous blocks) */
} plc_pipe_shape;

/* The chunks of a schedule; -1 when the layers do not split (a layout the
 * rulebook refuses). vpp counts only for the interleaved schedule. */
int plc_pipe_shape_of(plc_schedule s, int64_t pp, int64_t vpp, int64_t layers, plc_pipe_shape *out);

/* pipeline rank owning chunk c; its layers [lo, hi) */
int64_t plc_pipe_chunk_rank(const plc_pipe_shape *sh, int64_t c);
static inline int64_t plc_pipe_chunk_lo(const plc_pipe_shape *sh, int64_t c) { return c * (sh->layers / sh->nchunks); }
static inline int64_t plc_pipe_chunk_hi(const plc_pipe_shape *sh, int64_t c) { return (c + 1) * (sh->layers / sh->nchunks); }

/* units a rank runs per step with M micro-batches: 2 M per_rank */
static inline int64_t plc_pipe_units(const plc_pipe_shape *sh, int64_t M) { return 2 * M * sh->per_rank; }

/* forward units rank r runs before its first backward */
int64_t plc_pipe_warmup(const plc_pipe_shape *sh, int64_t M, int64_t r);

/* Micro-batches rank r holds activations of at its peak, in units of "one
 * micro-batch through all of the rank's layers": (warm-up + 1) forward
 * units, at most all of them, over its chunks. O(1) in M. */
double plc_pipe_inflight(const plc_pipe_shape *sh, int64_t M, int64_t r);

/* Writes rank r's plc_pipe_units(sh, M) units in execution order. Returns 0,
 * or -1 when M does not suit the schedule (interleaved: a multiple of pp). */
int plc_pipe_order(const plc_pipe_shape *sh, int64_t M, int64_t r, plc_pipe_unit *out);

#endif
