/* kernels/cpu/matmul.c: C = alpha op(A) op(B) + beta C through OpenBLAS. */
#include "kernels/kernels.h"

#include <cblas.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

static int blas_dim(int64_t v, const char *what)
{
    if (v < 0 || v > INT_MAX) {
        fprintf(stderr, "plrun: matmul %s = %lld does not fit BLAS's int\n", what, (long long)v);
        exit(1);
    }
    return (int)v;
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
    cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
                trans_b ? CblasTrans : CblasNoTrans,
                blas_dim(M, "M"), blas_dim(N, "N"), blas_dim(K, "K"), alpha,
                A, blas_dim(lda, "lda"), B, blas_dim(ldb, "ldb"), beta, C, blas_dim(ldc, "ldc"));
}

void plc_k_matmul(float *C, const float *A, const float *B,
                  int64_t M, int64_t N, int64_t K,
                  int trans_a, int trans_b, float alpha, float beta)
{
    plc_k_matmul_strided(C, N, A, trans_a ? M : K, B, trans_b ? K : N,
                         M, N, K, trans_a, trans_b, alpha, beta);
}
