/* kernels/cpu/blas.h: how the CPU kernels call OpenBLAS. Always
 * single-threaded: the kernels' OpenMP threads take whole panels or tiles,
 * each one OpenBLAS call whose shapes do not depend on the thread count, so
 * neither do the results (docs/runtime.md, Determinism). Call
 * plc_blas_one_thread() before a parallel region that calls OpenBLAS, from
 * one thread. A pthread-built OpenBLAS (Debian's libopenblas0-pthread) is
 * safe to call from several threads at once: it locks its table of packing
 * buffers (driver/others/memory.c), and at one thread a call runs wholly on
 * the calling thread. */
#ifndef PLC_KERNELS_CPU_BLAS_H
#define PLC_KERNELS_CPU_BLAS_H

#include <cblas.h>
#include <stdint.h>

static inline void plc_blas_one_thread(void)
{
    if (openblas_get_num_threads() != 1) openblas_set_num_threads(1);
}

/* C[m, n] = alpha op(A)[m, k] op(B)[k, n] + beta C, row-major, op(X) = X or
 * X^T as cblas_sgemm: A is stored [m, k] (lda) or [k, m] when ta, B [k, n]
 * (ldb) or [n, k] when tb. Single-threaded; safe to call from several
 * threads at once on separate C. beta = 0 overwrites C. On a CPU with
 * AVX-512 (unless PLC_GEMM=openblas) it is plc's own kernel, whose every
 * element is one ordered chain of FMAs over k (kernels/cpu/gemm.c), else
 * OpenBLAS (call plc_blas_one_thread() first). */
void plc_sgemm(int ta, int tb, int64_t m, int64_t n, int64_t k, float alpha, const float *A, int64_t lda,
               const float *B, int64_t ldb, float beta, float *C, int64_t ldc);

/* 1 when plc_sgemm is plc's own kernel, whose every element of C has the
 * same bits however a caller cuts C into calls; 0 with OpenBLAS, whose
 * bits may change with the shapes of the calls */
int plc_sgemm_cut_free(void);

/* Products against one op(B) used many times (the attention tiles): op(B)
 * [k, n] is packed once into Bp (plc_sgemm_packed_len(k, n) floats), then
 * each plc_sgemm_packed multiplies a block of rows of op(A) by the columns
 * 0 .. n of its steps k0 .. k1:
 *   C[m, n] = op(A)[m, k1 - k0] op(B)[k0 .. k1, 0 .. n) + beta C,
 * op(A) = A stored [m, k1 - k0] (lda) or, when ta, [k1 - k0, m]; bk and bn
 * are the packed op(B)'s k and n. With plc's kernel an element of C is the
 * same chain of FMAs as plc_sgemm's over the same steps; with OpenBLAS it
 * is one cblas_sgemm call on op(B) copied row-major. Single-threaded. */
int64_t plc_sgemm_packed_len(int64_t k, int64_t n);
/* n floats aligned for packed operands (free()), or NULL */
float *plc_sgemm_scratch(int64_t n);
void plc_sgemm_pack(float *Bp, int tb, const float *B, int64_t ldb, int64_t k, int64_t n);
void plc_sgemm_packed(int ta, int64_t m, int64_t n, int64_t k0, int64_t k1, const float *A, int64_t lda,
                      const float *Bp, int64_t bk, int64_t bn, float beta, float *C, int64_t ldc);

/* rows per call that the kernel runs without waste (8 with plc's kernel,
 * 64 with OpenBLAS): the attention tiles cut their causal work this fine */
int64_t plc_sgemm_row_block(void);

/* which sgemm plc_sgemm runs: "plc AVX-512" or "OpenBLAS" */
const char *plc_gemm_name(void);

#endif
