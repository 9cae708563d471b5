/* init.h: deterministic weight initialisation, layout-independent.
 *
 * Element e (global row-major index) of tensor t gets
 *   ones:   1
 *   normal: std * plc_rng_normal({seed, stream = t, domain = PLC_RNG_INIT}, e)
 * rounded once to float. Any shard of the global tensor is filled with exactly
 * the values the whole tensor would hold there. */
#ifndef PLC_INIT_H
#define PLC_INIT_H

#include <stdint.h>

#include "common/tensors.h"

/* a rectangle of a global [rows, cols] tensor (1-D tensors are [n, 1]) */
typedef struct plc_shard {
    int64_t row0, rows;
    int64_t col0, cols;
} plc_shard;

/* fills dst[(r - row0) * shard.cols + (c - col0)] for every (r, c) of the
 * shard of a global tensor of shape global_shape; returns 0, or -1 when the
 * shard does not lie inside the tensor (dst untouched). */
int plc_init_tensor(float *dst, uint64_t seed, int64_t tensor_id, const int64_t global_shape[2],
                    plc_shard shard, double std, plc_init_kind kind);

/* fills dst[0..n) with elements [e0, e0 + n) of the flattened tensor (the
 * form a ZeRO shard of a flat buffer takes) */
void plc_init_range(float *dst, uint64_t seed, int64_t tensor_id, int64_t e0, int64_t n, double std,
                    plc_init_kind kind);

/* the same, with shape, std and kind taken from the model's tensor table;
 * returns -1 when the id or the shard is out of range */
int plc_init_model_tensor(float *dst, const plc_model *m, uint64_t seed, int64_t tensor_id,
                          plc_shard shard);

#endif
