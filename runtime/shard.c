/* shard.c: buffer <-> global tensor geometry. See shard.h. */
#include "runtime/shard.h"

#include <stdio.h>
#include <string.h>

/* index of this rank among the ranks that vary in `dims`, in rank order */
static int64_t dims_index(uint32_t dims, const plc_layout *l, plc_rank_coords co, int64_t *n)
{
    int64_t idx = 0, cnt = 1;
    if (dims & PLC_DIM_PP) { idx = idx * l->pp + co.pp; cnt *= l->pp; }
    if (dims & PLC_DIM_DP) { idx = idx * l->dp + co.dp; cnt *= l->dp; }
    if (dims & PLC_DIM_CP) { idx = idx * l->cp + co.cp; cnt *= l->cp; }
    if (dims & PLC_DIM_TP) { idx = idx * l->tp + co.tp; cnt *= l->tp; }
    *n = cnt;
    return idx;
}

static void flat_range(plc_shard_region *out, int64_t N, int64_t j, int64_t n)
{
    int64_t chunk = (N + n - 1) / n;
    out->flat = 1;
    out->e0 = j * chunk;
    out->n = out->e0 >= N ? 0 : (N - out->e0 < chunk ? N - out->e0 : chunk);
    out->capacity = chunk;
}

/* the real part [lo, lo + len) of block i of a dimension of n over `shards` */
static void split(int64_t n, int64_t shards, int64_t i, int64_t *lo, int64_t *len, int64_t *block)
{
    *block = plc_shard_block(n, shards);
    *lo = i * *block;
    *len = *lo >= n ? 0 : (n - *lo < *block ? n - *lo : *block);
}

/* real elements among the first e of a [brows, bcols] block whose real part is [rows, cols] */
static int64_t real_before(const plc_shard_region *r, int64_t e)
{
    int64_t row = e / r->bcols, col = e % r->bcols;
    if (row >= r->rows) return r->rows * r->cols;
    return row * r->cols + (col < r->cols ? col : r->cols);
}

int plc_shard_region_of(const plc_buffer *b, const plc_layout *l, plc_rank_coords co, int64_t R,
                        int64_t C, plc_shard_region *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    int64_t n = 1, i = 0;
    if (b->shard != PLC_SHARD_NONE) i = dims_index(b->shard_dims, l, co, &n);
    if (b->shard != PLC_SHARD_NONE && b->nshards != n) {
        snprintf(err, errlen, "buffer '%s': %lld shards, but its shard dims give %lld",
                 b->name ? b->name : "?", (long long)b->nshards, (long long)n);
        return -1;
    }
    out->rows = out->brows = R;
    out->cols = out->bcols = C;
    switch (b->shard) {
    case PLC_SHARD_NONE: break;
    case PLC_SHARD_ROWS: split(R, n, i, &out->row0, &out->rows, &out->brows); break;
    case PLC_SHARD_COLS: split(C, n, i, &out->col0, &out->cols, &out->bcols); break;
    case PLC_SHARD_FLAT:
        flat_range(out, R * C, i, n);
        break;
    default:
        goto bad;
    }
    if (!out->flat) out->capacity = out->brows * out->bcols;
    if (b->shard != PLC_SHARD_FLAT && b->flat_shards > 1) {
        int64_t fn = 1, j = dims_index(b->flat_dims, l, co, &fn);
        if (fn != b->flat_shards) {
            snprintf(err, errlen, "buffer '%s': %lld flat shards, but its flat dims give %lld",
                     b->name ? b->name : "?", (long long)b->flat_shards, (long long)fn);
            return -1;
        }
        flat_range(out, out->brows * out->bcols, j, fn);
    }
    out->stored = out->flat ? out->n : out->capacity;
    out->real = out->flat ? real_before(out, out->e0 + out->n) - real_before(out, out->e0) : out->rows * out->cols;
    int64_t local = b->rows * b->cols;
    if (out->flat ? local < out->capacity : local != out->capacity) goto bad;
    if ((uint64_t)out->capacity * sizeof(float) > b->bytes && b->dtype == PLC_F32) goto bad;
    return 0;
bad:
    snprintf(err, errlen,
             "buffer '%s' (%lld x %lld) does not match shard %lld of %lld of its global tensor "
             "[%lld, %lld]",
             b->name ? b->name : "?", (long long)b->rows, (long long)b->cols, (long long)i,
             (long long)n, (long long)R, (long long)C);
    return -1;
}

/* visits the runs of consecutive global elements of a region: local offset,
 * global offset, length */
#define FOR_EACH_RUN(r, C, BODY)                                                              \
    do {                                                                                      \
        int64_t base_ = (r)->flat ? (r)->e0 : 0;                                              \
        int64_t e_ = base_, end_ = (r)->flat ? (r)->e0 + (r)->n : (r)->brows * (r)->bcols;    \
        while (e_ < end_) {                                                                   \
            int64_t row_ = e_ / (r)->bcols, col_ = e_ % (r)->bcols;                           \
            if (row_ >= (r)->rows) break;               /* padding rows to the end */         \
            if (col_ >= (r)->cols) { e_ += (r)->bcols - col_; continue; } /* padding cols */  \
            int64_t len_ = (r)->cols - col_;                                                  \
            if (len_ > end_ - e_) len_ = end_ - e_;                                           \
            int64_t lo_ = e_ - base_;                                                         \
            int64_t go_ = ((r)->row0 + row_) * (C) + (r)->col0 + col_;                        \
            BODY;                                                                             \
            e_ += len_;                                                                       \
        }                                                                                     \
    } while (0)

void plc_shard_scatter(float *local, const float *global, const plc_shard_region *r, int64_t C)
{
    FOR_EACH_RUN(r, C, memcpy(local + lo_, global + go_, (size_t)len_ * sizeof *local));
}

void plc_shard_each_run(const plc_shard_region *r, int64_t C,
                        void (*fn)(void *ctx, int64_t local, int64_t global, int64_t n), void *ctx)
{
    FOR_EACH_RUN(r, C, fn(ctx, lo_, go_, len_));
}

void plc_shard_gather(float *global, const float *local, const plc_shard_region *r, int64_t C)
{
    FOR_EACH_RUN(r, C, memcpy(global + go_, local + lo_, (size_t)len_ * sizeof *local));
}

void plc_shard_block_to_local(float *local, const float *block, const plc_shard_region *r)
{
    plc_shard_region at_origin = *r;
    at_origin.row0 = at_origin.col0 = 0;
    plc_shard_scatter(local, block, &at_origin, r->cols);
}
