/* warm.c: the host libraries' workspaces, touched before the baseline.
 *
 * OpenMP creates its threads at the first parallel region, and OpenBLAS
 * takes a packing buffer from its table at each call and touches it as far
 * as that call's blocks reach: both would otherwise grow the resident set
 * during the first steps, after plrun measured its baseline, and count as
 * if they were the plan's. */
#include "runtime/warm.h"

#include <omp.h>
#include <stdlib.h>

#include "kernels/cpu/blas.h"

/* kernels/cpu/matmul.c's PANEL_MAX: no kernel GEMM is larger in M or N; K
 * of 512 covers OpenBLAS's K blocking (GEMM_Q, at most 512 for sgemm) */
enum { WARM_N = 512 };

int plc_warm_host_libraries(void)
{
    const size_t nn = (size_t)WARM_N * WARM_N;
    const int threads = omp_get_max_threads();
    /* A and B are only read: their pages stay the shared zero page */
    float *a = calloc(nn, sizeof *a), *b = calloc(nn, sizeof *b);
    float *c = calloc(nn * (size_t)threads, sizeof *c);
    int rc = a && b && c ? 0 : -1;
    if (!rc) {
        plc_blas_one_thread();
        /* every thread at once, so that each takes a buffer of its own */
#pragma omp parallel num_threads(threads)
        {
            float *mine = c + nn * (size_t)omp_get_thread_num();
#pragma omp barrier
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, WARM_N, WARM_N, WARM_N, 1.0f, a, WARM_N, b,
                        WARM_N, 0.0f, mine, WARM_N);
        }
    }
    free(a);
    free(b);
    free(c);
    return rc;
}
