/* kernels/cpu/pos_embedding.c: learned absolute position embeddings (the
 * GPT block's), added to the token embeddings. The backward sums the batch's
 * sequences (and any repeated position) into one table row, so it is split
 * over columns: each thread owns a column range; for each time step in
 * order it sums the sequences in order, in double, and adds that sum to the
 * step's row. The same bits for any thread count. */
#include "kernels/kernels.h"

#include <omp.h>
#include <stdlib.h>

#define PAR_MIN 65536 /* elements below which threads cost more than they save */

static inline int64_t position(const int32_t *positions, int64_t t)
{
    return positions ? (int64_t)positions[t] : t;
}

void plc_k_pos_embedding_forward(float *out, const float *in, const float *table,
                                 const int32_t *positions, int64_t B, int64_t T, int64_t dim)
{
#pragma omp parallel for schedule(dynamic, 16) if (B * T * dim > PAR_MIN)
    for (int64_t r = 0; r < B * T; r++) {
        const float *p = table + position(positions, r % T) * dim, *x = in + r * dim;
        float *y = out + r * dim;
        for (int64_t c = 0; c < dim; c++) y[c] = x[c] + p[c];
    }
}

int plc_k_pos_embedding_backward(float *dtable, const float *dout, const int32_t *positions,
                                 int64_t B, int64_t T, int64_t dim)
{
    double *acc = malloc((size_t)(dim + 1) * sizeof *acc); /* a double per column */
    if (!acc) return -1;
#pragma omp parallel if (B * T * dim > PAR_MIN)
    {
        int64_t nt = omp_get_num_threads(), me = omp_get_thread_num();
        int64_t c0 = dim * me / nt, c1 = dim * (me + 1) / nt;
        for (int64_t t = 0; t < T; t++) {
            for (int64_t c = c0; c < c1; c++) acc[c] = 0;
            for (int64_t b = 0; b < B; b++) {
                const float *g = dout + (b * T + t) * dim;
                for (int64_t c = c0; c < c1; c++) acc[c] += (double)g[c];
            }
            float *d = dtable + position(positions, t) * dim;
            for (int64_t c = c0; c < c1; c++) d[c] += (float)acc[c];
        }
    }
    free(acc);
    return 0;
}
