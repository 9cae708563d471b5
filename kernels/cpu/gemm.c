/* kernels/cpu/gemm.c: the one single-threaded sgemm under every CPU kernel
 * (plc_sgemm, blas.h): an AVX-512 kernel of its own where the CPU runs
 * AVX-512, OpenBLAS elsewhere.
 *
 * Why its own: OpenBLAS runs its AVX2 kernels on CPUs it does not know or
 * when OPENBLAS_CORETYPE pins them, at up to half of what an AVX-512 core
 * does (on a core with two 512-bit FMA units; on the AMD development
 * machine, whose AVX-512 is two 256-bit halves, about 90%: docs/runtime.md,
 * Benchmarks), and its packing costs much on the small panels and attention tiles the
 * kernels cut (K of 32 to 2048, N of 32 to 512).
 *
 * The kernel (GotoBLAS's scheme, simplified): C is scaled by beta first
 * (for beta = 0 the first chunk of k writes C instead of adding to it);
 * then for each block of at most NC columns and each chunk of KC steps of
 * the reduction, op(B)'s chunk is packed into strips of 32 columns and,
 * for each 8 rows of op(A), a micro-kernel adds the 8 x 32 products into C
 * with one fused multiply-add per step and element. op(A) = A is read in
 * place; op(A) = A^T (and a last block of fewer than 8 rows, or any block
 * when alpha != 1) is packed first, times alpha.
 * So every element of C is one chain of FMAs over k = 0, 1, ..., K-1 in
 * order, starting from beta C: its bits depend on its own row of op(A),
 * column of op(B) and beta C only, not on M, N, the blocking, the panel a
 * caller cuts or the thread that runs it (docs/runtime.md, Determinism).
 * alpha multiplies op(A)'s elements (exact for alpha = 1, the matmuls').
 * plc_sgemm_packed runs the same blocks of rows and chunks of k against an
 * op(B) its caller packed once (the attention tiles), so its elements are
 * the same chains.
 *
 * The scratch is thread-local, packed op(B) and op(A)^T blocks of 512 KiB
 * each (touched as far as the shapes need), so a call allocates nothing
 * and cannot fail. PLC_GEMM=openblas in the environment selects OpenBLAS
 * on any CPU. */
#include "kernels/cpu/blas.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define PLC_GEMM_X86 1
#endif

enum { MR = 8, NR = 32, KC = 256, NC = 512, MC = 512 };

/* 0: not decided yet, 1: OpenBLAS, 2: AVX-512 */
static _Atomic int gemm_mode;

static int decide_mode(void)
{
    int mode = 1;
    const char *env = getenv("PLC_GEMM");
#ifdef PLC_GEMM_X86
    __builtin_cpu_init();
    if (!(env && strcmp(env, "openblas") == 0) && __builtin_cpu_supports("avx512f")) mode = 2;
#else
    (void)env;
#endif
    atomic_store_explicit(&gemm_mode, mode, memory_order_relaxed);
    return mode;
}

static int mode_now(void)
{
    int m = atomic_load_explicit(&gemm_mode, memory_order_relaxed);
    return m ? m : decide_mode();
}

int plc_sgemm_cut_free(void) { return mode_now() == 2; }

const char *plc_gemm_name(void)
{
    return mode_now() == 2 ? "plc AVX-512" : "OpenBLAS";
}

/* C's rows scaled by beta before a product that adds into them: beta = 1
 * leaves them, beta = 0 zeroes them unless the product's first chunk of k
 * overwrites them (overwrite) */
static void scale_c(float *C, int64_t ldc, int64_t m, int64_t n, float beta, int overwrite)
{
    for (int64_t i = 0; i < m && !overwrite && beta != 1.0f; i++) {
        float *c = C + i * ldc;
        if (beta == 0.0f) memset(c, 0, (size_t)n * sizeof *c);
        else for (int64_t j = 0; j < n; j++) c[j] *= beta;
    }
}

#ifdef PLC_GEMM_X86
/* C[0..8, 0..32) += A (8 rows: A[r * rs + k * ks]) . Bp (kc x 32, k-major),
 * or = when fresh (C is not read: the sums start from +0, as from a zeroed
 * C); columns past the masks are neither read nor written */
__attribute__((target("avx512f"))) static void kernel_8x32(int64_t kc, const float *A, int64_t rs, int64_t ks,
                                                           const float *Bp, float *C, int64_t ldc,
                                                           __mmask16 m0, __mmask16 m1, int fresh)
{
    __m512 c[MR][2];
    const float *a[MR];
    const __mmask16 l0 = fresh ? 0 : m0, l1 = fresh ? 0 : m1;
#pragma GCC unroll 8
    for (int r = 0; r < MR; r++) {
        a[r] = A + r * rs;
        c[r][0] = _mm512_maskz_loadu_ps(l0, C + r * ldc);
        c[r][1] = _mm512_maskz_loadu_ps(l1, C + r * ldc + 16);
    }
    for (int64_t k = 0, off = 0; k < kc; k++, off += ks) {
        __m512 b0 = _mm512_load_ps(Bp + k * NR), b1 = _mm512_load_ps(Bp + k * NR + 16);
#pragma GCC unroll 8
        for (int r = 0; r < MR; r++) {
            __m512 av = _mm512_set1_ps(a[r][off]);
            c[r][0] = _mm512_fmadd_ps(av, b0, c[r][0]);
            c[r][1] = _mm512_fmadd_ps(av, b1, c[r][1]);
        }
    }
#pragma GCC unroll 8
    for (int r = 0; r < MR; r++) {
        _mm512_mask_storeu_ps(C + r * ldc, m0, c[r][0]);
        _mm512_mask_storeu_ps(C + r * ldc + 16, m1, c[r][1]);
    }
}

static __mmask16 mask_of(int64_t w) { return w >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << w) - 1u); }

/* op(B)[k0 .. k0+kc, j0 .. j0+nc) into strips of NR columns, zero-padded.
 * Copies only (the bits of B): rows of B through two masked vector moves,
 * B^T through 16 x 16 transposes of vectors (a last partial block of
 * columns or of k steps element by element). */
__attribute__((target("avx512f"))) static void transpose_16x16(float *dst, int64_t ldd, const float *src,
                                                              int64_t lds)
{
    __m512 r[16], t[16];
    for (int i = 0; i < 16; i++) r[i] = _mm512_loadu_ps(src + i * lds);
    /* three rounds of pairwise interleaves, then 128-bit lane shuffles */
    for (int i = 0; i < 16; i += 2) {
        t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
        t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
    }
    for (int i = 0; i < 16; i += 4) {
        r[i] = _mm512_shuffle_ps(t[i], t[i + 2], 0x44);
        r[i + 1] = _mm512_shuffle_ps(t[i], t[i + 2], 0xEE);
        r[i + 2] = _mm512_shuffle_ps(t[i + 1], t[i + 3], 0x44);
        r[i + 3] = _mm512_shuffle_ps(t[i + 1], t[i + 3], 0xEE);
    }
    for (int i = 0; i < 4; i++) {
        t[i] = _mm512_shuffle_f32x4(r[i], r[i + 4], 0x88);
        t[i + 4] = _mm512_shuffle_f32x4(r[i], r[i + 4], 0xDD);
        t[i + 8] = _mm512_shuffle_f32x4(r[i + 8], r[i + 12], 0x88);
        t[i + 12] = _mm512_shuffle_f32x4(r[i + 8], r[i + 12], 0xDD);
    }
    for (int i = 0; i < 4; i++) {
        r[i] = _mm512_shuffle_f32x4(t[i], t[i + 8], 0x88);
        r[i + 8] = _mm512_shuffle_f32x4(t[i], t[i + 8], 0xDD);
        r[i + 4] = _mm512_shuffle_f32x4(t[i + 4], t[i + 12], 0x88);
        r[i + 12] = _mm512_shuffle_f32x4(t[i + 4], t[i + 12], 0xDD);
    }
    for (int i = 0; i < 16; i++) _mm512_storeu_ps(dst + i * ldd, r[i]);
}

__attribute__((target("avx512f"))) static void pack_b(float *Bp, int tb, const float *B, int64_t ldb,
                                                     int64_t k0, int64_t kc, int64_t j0, int64_t nc)
{
    for (int64_t s = 0; s * NR < nc; s++) {
        float *dst = Bp + s * kc * NR;
        int64_t w = nc - s * NR < NR ? nc - s * NR : NR, j = j0 + s * NR;
        if (!tb) {
            __mmask16 m0 = mask_of(w), m1 = mask_of(w - 16 > 0 ? w - 16 : 0);
            for (int64_t k = 0; k < kc; k++) {
                const float *src = B + (k0 + k) * ldb + j;
                _mm512_store_ps(dst + k * NR, _mm512_maskz_loadu_ps(m0, src));
                _mm512_store_ps(dst + k * NR + 16, _mm512_maskz_loadu_ps(m1, src + 16));
            }
            continue;
        }
        if (w < NR) memset(dst, 0, (size_t)(kc * NR) * sizeof *dst);
        int64_t c = 0;
        for (; c + 16 <= w; c += 16) {
            const float *src = B + (j + c) * ldb + k0;
            int64_t k = 0;
            for (; k + 16 <= kc; k += 16) transpose_16x16(dst + k * NR + c, NR, src + k, ldb);
            for (int64_t cc = 0; cc < 16; cc++)
                for (int64_t kk = k; kk < kc; kk++) dst[kk * NR + c + cc] = src[cc * ldb + kk];
        }
        for (; c < w; c++) {
            const float *src = B + (j + c) * ldb + k0;
            for (int64_t k = 0; k < kc; k++) dst[k * NR + c] = src[k];
        }
    }
}

/* alpha op(A)[i0 .. i0+mc, k0 .. k0+kc) for op(A) = A^T, as blocks of MR rows
 * (kc steps of MR floats each, the last block zero-padded): A's rows are
 * read whole, lda apart, once per chunk instead of once per block; each
 * element is alpha times A's (one rounding, as in scalar code) */
__attribute__((target("avx512f"))) static void pack_a_t(float *Ap, const float *A, int64_t lda, float alpha,
                                                       int64_t i0, int64_t mc, int64_t k0, int64_t kc)
{
    if (mc % MR) memset(Ap + mc / MR * MR * kc, 0, (size_t)(MR * kc) * sizeof *Ap);
    const __m256 va = _mm256_set1_ps(alpha);
    const int64_t full = mc / MR;
    for (int64_t k = 0; k < kc; k++) {
        const float *src = A + (k0 + k) * lda + i0;
        float *dst = Ap + k * MR;
        for (int64_t b = 0; b < full; b++)
            _mm256_store_ps(dst + b * MR * kc, _mm256_mul_ps(va, _mm256_loadu_ps(src + b * MR)));
        for (int64_t r = 0; r < mc - full * MR; r++) dst[full * MR * kc + r] = alpha * src[full * MR + r];
    }
}

/* the same for op(A) = A (one block: rows of a partial block, or alpha != 1;
 * full blocks are read in place) */
static void pack_a_n(float *Ap, const float *A, int64_t lda, float alpha, int64_t i0, int64_t mc, int64_t k0,
                     int64_t kc)
{
    if (mc % MR) memset(Ap + mc / MR * MR * kc, 0, (size_t)(MR * kc) * sizeof *Ap);
    for (int64_t i = 0; i < mc; i++) {
        const float *src = A + (i0 + i) * lda + k0;
        float *dst = Ap + i / MR * MR * kc + i % MR;
        for (int64_t k = 0; k < kc; k++) dst[k * MR] = alpha * src[k];
    }
}

static _Thread_local _Alignas(64) float packed_b[KC * NC];
static _Thread_local _Alignas(64) float packed_at[MC * KC];

/* One block of mr <= MR rows of op(A) (a[r * ars + k * aks], kc steps)
 * against the nc columns of packed op(B) (strips bstride floats apart):
 * C's rows += or = (fresh) their products. A last block of fewer than MR
 * rows runs through a full tile, so no row past it is touched. When
 * next_a is set (A read in place, lda apart), the next block's rows of
 * this chunk are fetched while this one runs, a share per strip (MR rows
 * x kc / 16 lines), so that its first strip does not wait on memory. */
__attribute__((target("avx512f"))) static void row_block(const float *a, int64_t ars, int64_t aks, int64_t mr,
                                                        const float *Bp, int64_t bstride, int64_t nc, int64_t kc,
                                                        float *C, int64_t ldc, int fresh, const float *next_a,
                                                        int64_t lda)
{
    _Alignas(64) float tile[MR * NR];
    const int64_t strips = (nc + NR - 1) / NR, lines = MR * ((kc + 15) / 16), per = (lines + strips - 1) / strips;
    for (int64_t s = 0; s < strips; s++) {
        int64_t w = nc - s * NR < NR ? nc - s * NR : NR;
        const float *bs = Bp + s * bstride;
        __mmask16 m0 = mask_of(w), m1 = mask_of(w - 16 > 0 ? w - 16 : 0);
        float *c = C + s * NR;
        if (next_a)
            for (int64_t l = s * per; l < (s + 1) * per && l < lines; l++)
                __builtin_prefetch(next_a + l % MR * lda + l / MR * 16, 0, 3);
        if (mr == MR) {
            kernel_8x32(kc, a, ars, aks, bs, c, ldc, m0, m1, fresh);
            continue;
        }
        memset(tile, 0, sizeof tile);
        for (int64_t r = 0; r < mr && !fresh; r++) memcpy(tile + r * NR, c + r * ldc, (size_t)w * sizeof *c);
        kernel_8x32(kc, a, ars, aks, bs, tile, NR, m0, m1, 0);
        for (int64_t r = 0; r < mr; r++) memcpy(c + r * ldc, tile + r * NR, (size_t)w * sizeof *c);
    }
}

/* op(A)'s block of mr rows at row i0, chunk k0 .. k0+kc: packed into Ap
 * (MR x kc) when op(A) = A^T, a partial block or alpha != 1; else A's
 * rows in place. Sets a, ars, aks. */
static void a_block(const float *A, int64_t lda, int ta, float alpha, int64_t i0, int64_t mr, int64_t k0,
                    int64_t kc, float *Ap, const float **a, int64_t *ars, int64_t *aks)
{
    if (ta) {
        pack_a_t(Ap, A, lda, alpha, i0, mr, k0, kc);
        *a = Ap, *ars = 1, *aks = MR;
    } else if (mr < MR || alpha != 1.0f) {
        pack_a_n(Ap, A, lda, alpha, i0, mr, k0, kc);
        *a = Ap, *ars = 1, *aks = MR;
    } else {
        *a = A + i0 * lda + k0, *ars = lda, *aks = 1;
    }
}

static void gemm_avx512(int ta, int tb, int64_t m, int64_t n, int64_t k, float alpha, const float *A,
                        int64_t lda, const float *B, int64_t ldb, float beta, float *C, int64_t ldc)
{
    _Alignas(64) float Ap[MR * KC];
    /* beta = 0 with k > 0: the first chunk of k writes C without reading it */
    const int overwrite = beta == 0.0f && k > 0;
    scale_c(C, ldc, m, n, beta, overwrite);
    for (int64_t j0 = 0; j0 < n; j0 += NC) {
        int64_t nc = n - j0 < NC ? n - j0 : NC;
        for (int64_t k0 = 0; k0 < k; k0 += KC) {
            int64_t kc = k - k0 < KC ? k - k0 : KC;
            pack_b(packed_b, tb, B, ldb, k0, kc, j0, nc);
            for (int64_t ib = 0; ib < m; ib += MC) {
                int64_t mc = m - ib < MC ? m - ib : MC;
                /* op(A) = A^T: packed for the whole row block (a step of k
                 * per row of A, lda apart, is slow to read in place: a
                 * power-of-two lda maps the steps onto a few cache sets) */
                if (ta) pack_a_t(packed_at, A, lda, alpha, ib, mc, k0, kc);
                for (int64_t i0 = ib; i0 < ib + mc; i0 += MR) {
                    int64_t mr = ib + mc - i0 < MR ? ib + mc - i0 : MR, ars = 1, aks = MR;
                    const float *a = packed_at + (i0 - ib) * kc;
                    if (!ta) a_block(A, lda, 0, alpha, i0, mr, k0, kc, Ap, &a, &ars, &aks);
                    const float *next = !ta && i0 + 2 * MR <= ib + mc ? A + (i0 + MR) * lda + k0 : NULL;
                    row_block(a, ars, aks, mr, packed_b, kc * NR, nc, kc, C + i0 * ldc + j0, ldc,
                              overwrite && k0 == 0, next, lda);
                }
            }
        }
    }
}

/* plc_sgemm_packed on plc's kernel: chunks of KC steps of k, as gemm_avx512
 * (the same chains of FMAs) */
static void packed_avx512(int ta, int64_t m, int64_t n, int64_t k0, int64_t k1, const float *A, int64_t lda,
                          const float *Bp, int64_t bk, float beta, float *C, int64_t ldc)
{
    _Alignas(64) float Ap[MR * KC];
    const int64_t k = k1 - k0;
    const int overwrite = beta == 0.0f && k > 0;
    scale_c(C, ldc, m, n, beta, overwrite);
    for (int64_t c0 = 0; c0 < k; c0 += KC) {
        int64_t kc = k - c0 < KC ? k - c0 : KC;
        for (int64_t i0 = 0; i0 < m; i0 += MR) {
            int64_t mr = m - i0 < MR ? m - i0 : MR, ars, aks;
            const float *a;
            a_block(A, lda, ta, 1.0f, i0, mr, c0, kc, Ap, &a, &ars, &aks);
            row_block(a, ars, aks, mr, Bp + (k0 + c0) * NR, bk * NR, n, kc, C + i0 * ldc, ldc,
                      overwrite && c0 == 0, NULL, lda);
        }
    }
}
#endif

void plc_sgemm(int ta, int tb, int64_t m, int64_t n, int64_t k, float alpha, const float *A, int64_t lda,
              const float *B, int64_t ldb, float beta, float *C, int64_t ldc)
{
    if (m <= 0 || n <= 0) return;
#ifdef PLC_GEMM_X86
    if (mode_now() == 2) {
        gemm_avx512(ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
        return;
    }
#endif
    cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, (int)m, (int)n,
                (int)k, alpha, A, (int)lda, B, (int)ldb, beta, C, (int)ldc);
}

int64_t plc_sgemm_packed_len(int64_t k, int64_t n) { return k * ((n + NR - 1) / NR) * NR; }

float *plc_sgemm_scratch(int64_t n)
{
    return aligned_alloc(64, (size_t)((n + 15) / 16 * 16 + 16) * sizeof(float));
}

int64_t plc_sgemm_row_block(void) { return mode_now() == 2 ? MR : 64; }

void plc_sgemm_pack(float *Bp, int tb, const float *B, int64_t ldb, int64_t k, int64_t n)
{
    if (k <= 0 || n <= 0) return;
#ifdef PLC_GEMM_X86
    if (mode_now() == 2) {
        pack_b(Bp, tb, B, ldb, 0, k, 0, n);
        return;
    }
#endif
    for (int64_t i = 0; i < k; i++) /* OpenBLAS: op(B) row-major, n apart */
        for (int64_t j = 0; j < n; j++) Bp[i * n + j] = tb ? B[j * ldb + i] : B[i * ldb + j];
}

void plc_sgemm_packed(int ta, int64_t m, int64_t n, int64_t k0, int64_t k1, const float *A, int64_t lda,
                      const float *Bp, int64_t bk, int64_t bn, float beta, float *C, int64_t ldc)
{
    if (m <= 0 || n <= 0) return;
#ifdef PLC_GEMM_X86
    if (mode_now() == 2) {
        (void)bn;
        packed_avx512(ta, m, n, k0, k1, A, lda, Bp, bk, beta, C, ldc);
        return;
    }
#endif
    (void)bk;
    if (k1 <= k0) { /* BLAS would scale C by beta; keep beta = 0 meaning "overwrite" */
        scale_c(C, ldc, m, n, beta, 0);
        return;
    }
    cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, CblasNoTrans, (int)m, (int)n, (int)(k1 - k0), 1.0f, A,
                (int)lda, Bp + k0 * bn, (int)bn, beta, C, (int)ldc);
}
