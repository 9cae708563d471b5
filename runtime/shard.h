/* shard.h: where a PARAM-family buffer of a rank lies in its global tensor.
 *
 * plan.h defines two levels. First a block of the global [R, C] tensor: the
 * whole tensor, a block of rows or of columns (tensor parallelism), with the
 * index combined from the rank coordinates in shard_dims. Then, when
 * flat_shards > 1 (ZeRO), a range of the block's row-major flattening, the
 * index from the coordinates in flat_dims. (The single-level
 * PLC_SHARD_FLAT is the flat range of the whole tensor.) Initialisation,
 * checkpoints and the oracle export map buffers to global elements here. */
#ifndef PLC_RUNTIME_SHARD_H
#define PLC_RUNTIME_SHARD_H

#include <stddef.h>
#include <stdint.h>

#include "plc/plan.h"

typedef struct plc_shard_region {
    int64_t row0, rows;  /* the real part of the block: a rectangle of the [R, C] tensor */
    int64_t col0, cols;
    int64_t brows, bcols; /* the block as stored: rows x cols plus zero padding
                             where the split does not divide (plc_shard_block) */
    int flat;            /* 1: only elements [e0, e0 + n) of the block's flattening */
    int64_t e0, n;       /* n excludes the zero padding at the end of the block */
    int64_t capacity;    /* elements the buffer holds (block size, or the flat chunk) */
    int64_t stored;      /* elements of the buffer inside the block (padding included) */
    int64_t real;        /* elements of the global tensor the region holds */
} plc_shard_region;

/* the region of buffer b held by the rank with coordinates co, for a global
 * tensor of shape [R, C]; -1 with a message when the buffer's shape does not
 * match its shard (a damaged or inconsistent plan) */
int plc_shard_region_of(const plc_buffer *b, const plc_layout *l, plc_rank_coords co, int64_t R,
                        int64_t C, plc_shard_region *out, char *err, size_t errlen);

/* copies between a local shard (local[], the buffer's elements in order)
 * and the full global tensor global[R * C] */
void plc_shard_scatter(float *local, const float *global, const plc_shard_region *r, int64_t C);
void plc_shard_gather(float *global, const float *local, const plc_shard_region *r, int64_t C);

/* copies the real part of the block (a [rows, cols] array) to a local
 * shard, padding untouched */
void plc_shard_block_to_local(float *local, const float *block, const plc_shard_region *r);

/* calls fn for each run of consecutive global elements of a region, in
 * local order: its local offset, its offset in the flattened global
 * [R, C] tensor and its length (padding is skipped) */
void plc_shard_each_run(const plc_shard_region *r, int64_t C,
                        void (*fn)(void *ctx, int64_t local, int64_t global, int64_t n), void *ctx);

#endif
