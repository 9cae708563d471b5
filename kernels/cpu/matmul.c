/* kernels/cpu/matmul.c: C = alpha op(A) op(B) + beta C, with results that
 * do not depend on the thread count.
 *
 * The parallelism is ours: C is cut into panels, each panel is one
 * single-threaded plc_sgemm call over the full K (kernels/cpu/blas.h), and
 * OpenMP threads take whole panels. With OpenBLAS under plc_sgemm the grid
 * is a function of (M, N, K) only (panel_grid below): whatever the thread
 * count, the same calls with the same arguments compute the same elements,
 * so C is the same bits. With plc's own kernel an element's bits do not
 * depend on the panel at all, and the grid follows the thread count
 * (cut_free_grid). (OpenBLAS's own threading splits a GEMM by its thread count, and on
 * its AVX2 kernels the bits change with that split; it is never used.)
 * M, N and K fit BLAS's int: plan validation checks every MATMUL. */
#include "kernels/kernels.h"
#include "kernels/cpu/blas.h"

#include <omp.h>

/* Panels are at most PANEL_MAX square. While there are fewer than
 * PANELS_WANTED of them, the longer side is halved (to a multiple of 16,
 * the widest sgemm micro-kernel), down to PANEL_MIN and as long as a panel
 * keeps PANEL_MIN_MACS multiply-adds: below that a thread costs more than
 * it saves. */
enum { PANEL_MAX = 512, PANEL_MIN = 128, PANELS_WANTED = 8, PANEL_ALIGN = 32 };
#define PANEL_MIN_MACS ((int64_t)1 << 20)

static int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
static int64_t imin(int64_t a, int64_t b) { return a < b ? a : b; }

/* rows and columns of a panel of C[M, N] for a reduction of K */
static void panel_grid(int64_t M, int64_t N, int64_t K, int64_t *pm, int64_t *pn)
{
    *pm = M < PANEL_MAX ? M : PANEL_MAX;
    *pn = N < PANEL_MAX ? N : PANEL_MAX;
    while (cdiv(M, *pm) * cdiv(N, *pn) < PANELS_WANTED) {
        int64_t *side = *pm >= *pn ? pm : pn, other = side == pm ? *pn : *pm;
        int64_t half = cdiv(cdiv(*side, 2), PANEL_ALIGN) * PANEL_ALIGN;
        if (half < PANEL_MIN || half >= *side || half * other * K < PANEL_MIN_MACS) break;
        *side = half;
    }
}

/* With plc's own sgemm every element of C has the same bits whatever
 * panel computes it (kernels/cpu/gemm.c), so the grid may follow the
 * thread count: two panels a thread (so that one that lost its core
 * holds the others back less), panels of at least 64 rows or columns.
 * Each panel packs the columns of op(B) it needs, and op(A)'s rows when
 * op(A) is A^T (A is read in place otherwise): a cut along M packs op(B)
 * again per panel (K x N), a cut along N packs A^T again or, for op(A) =
 * A, reads all of A again (M x K; a read costs about half a packing). So
 * the cut goes along N first, unless M >= N (op(A) = A^T) or M >= 2N
 * (op(A) = A), where the work done twice is smaller along M. One thread:
 * one call, nothing packed twice. */
static void cut_free_grid(int64_t M, int64_t N, int trans_a, int threads, int64_t *pm, int64_t *pn)
{
    int64_t want = threads > 1 ? 2 * (int64_t)threads : 1, gm, gn;
    if (trans_a ? M >= N : M >= 2 * N) {
        gm = imin(want, cdiv(M, 64));
        gn = imin(cdiv(want, gm), cdiv(N, 64));
    } else {
        gn = imin(want, cdiv(N, 64));
        gm = imin(cdiv(want, gn), cdiv(M, 64));
    }
    *pm = cdiv(cdiv(M, gm), 8) * 8;
    *pn = cdiv(cdiv(N, gn), 32) * 32;
}

void plc_k_matmul_strided(float *C, int64_t ldc, const float *A, int64_t lda,
                          const float *B, int64_t ldb,
                          int64_t M, int64_t N, int64_t K,
                          int trans_a, int trans_b, float alpha, float beta)
{
    if (M == 0 || N == 0) return;
    if (K == 0) { /* BLAS would scale C by beta; keep beta = 0 meaning "overwrite" */
        for (int64_t i = 0; i < M; i++)
            for (int64_t j = 0; j < N; j++)
                C[i * ldc + j] = beta == 0.0f ? 0.0f : beta * C[i * ldc + j];
        return;
    }
    plc_blas_one_thread();
    int64_t pm, pn;
    if (plc_sgemm_cut_free()) cut_free_grid(M, N, trans_a, omp_get_max_threads(), &pm, &pn);
    else panel_grid(M, N, K, &pm, &pn);
    const int64_t gm = cdiv(M, pm), gn = cdiv(N, pn);
    /* dynamic: which thread takes a panel never matters, and a thread
     * that lost its core does not hold the others back */
#pragma omp parallel for schedule(dynamic, 1) if (gm * gn > 1)
    for (int64_t p = 0; p < gm * gn; p++) {
        int64_t i0 = p / gn * pm, j0 = p % gn * pn;
        int64_t m = M - i0 < pm ? M - i0 : pm, n = N - j0 < pn ? N - j0 : pn;
        /* rows i0.. of op(A), columns j0.. of op(B) */
        const float *a = trans_a ? A + i0 : A + i0 * lda, *b = trans_b ? B + j0 * ldb : B + j0;
        plc_sgemm(trans_a, trans_b, m, n, K, alpha, a, lda, b, ldb, beta, C + i0 * ldc + j0, ldc);
    }
}

void plc_k_matmul(float *C, const float *A, const float *B,
                  int64_t M, int64_t N, int64_t K,
                  int trans_a, int trans_b, float alpha, float beta)
{
    plc_k_matmul_strided(C, N, A, trans_a ? M : K, B, trans_b ? K : N,
                         M, N, K, trans_a, trans_b, alpha, beta);
}
