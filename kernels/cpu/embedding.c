/* kernels/cpu/embedding.c: token embedding over a vocabulary shard. */
#include "kernels/kernels.h"

#include <omp.h>
#include <string.h>

void plc_k_embedding_forward(float *out, const int32_t *tokens, const float *table,
                             int64_t rows, int64_t dim,
                             int64_t vocab_start, int64_t vocab_local)
{
#pragma omp parallel for schedule(static) if (rows * dim > 65536)
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
 * threads. Columns can: each thread owns a contiguous range of columns and
 * adds the rows in order, so every element sees the same sequence of adds
 * whatever the number of threads. */
void plc_k_embedding_backward(float *dtable, const float *dout, const int32_t *tokens,
                              int64_t rows, int64_t dim,
                              int64_t vocab_start, int64_t vocab_local)
{
#pragma omp parallel if (rows * dim > 65536)
    {
        int64_t nt = omp_get_num_threads(), me = omp_get_thread_num();
        int64_t c0 = dim * me / nt, c1 = dim * (me + 1) / nt;
        for (int64_t r = 0; r < rows; r++) {
            int64_t id = (int64_t)tokens[r] - vocab_start;
            if (id < 0 || id >= vocab_local) continue;
            float *d = dtable + id * dim;
            const float *g = dout + r * dim;
            for (int64_t c = c0; c < c1; c++) d[c] += g[c];
        }
    }
}
