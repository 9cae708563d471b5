/* kernels/cpu/embedding.c: token embedding over a vocabulary shard. */
#include "kernels/kernels.h"

#include <string.h>

void plc_k_embedding_forward(float *out, const int32_t *tokens, const float *table,
                             int64_t rows, int64_t dim,
                             int64_t vocab_start, int64_t vocab_local)
{
#pragma omp parallel for schedule(dynamic, 16) if (rows * dim > 65536)
    for (int64_t r = 0; r < rows; r++) {
        int64_t id = (int64_t)tokens[r] - vocab_start;
        float *o = out + r * dim;
        if (id >= 0 && id < vocab_local)
            memcpy(o, table + id * dim, (size_t)dim * sizeof *o);
        else
            memset(o, 0, (size_t)dim * sizeof *o);
    }
}

/* Several rows may carry the same token, so rows cannot be split across
 * threads. Columns can: the work items are fixed chunks of EMB_CHUNK
 * columns, each adding the rows in order, so every element sees the same
 * sequence of adds whatever the number of threads. */
#define EMB_CHUNK 32

void plc_k_embedding_backward(float *dtable, const float *dout, const int32_t *tokens,
                              int64_t rows, int64_t dim,
                              int64_t vocab_start, int64_t vocab_local)
{
    const int64_t nchunks = (dim + EMB_CHUNK - 1) / EMB_CHUNK;
#pragma omp parallel for schedule(dynamic, 1) if (rows * dim > 65536)
    for (int64_t ch = 0; ch < nchunks; ch++) {
        int64_t c0 = ch * EMB_CHUNK, c1 = dim - c0 < EMB_CHUNK ? dim : c0 + EMB_CHUNK;
        for (int64_t r = 0; r < rows; r++) {
            int64_t id = (int64_t)tokens[r] - vocab_start;
            if (id < 0 || id >= vocab_local) continue;
            float *d = dtable + id * dim;
            const float *g = dout + r * dim;
            for (int64_t c = c0; c < c1; c++) d[c] += g[c];
        }
    }
}
