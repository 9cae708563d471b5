/* kernels/cpu/attention_tile.c: the tile operations the CPU attention
 * kernels are built from (see attention_tile.h): products of tiles and a
 * row's softmax. The kernels themselves are attention.c and
 * flash_attention.c (the two forwards) and attention_kernel.c (kernels.h's
 * entry points: the forward that picks a form, the shared backward); this
 * file calls none of them. */
#include "kernels/cpu/attention_tile.h"
#include "kernels/common/reduce.h"
#include "kernels/cpu/blas.h"
#include "kernels/cpu/simd.h"

#include <math.h>

/* The tile products are single-threaded sgemm calls (kernels/cpu/blas.h):
 * the OpenMP threads of the callers take whole work items, so every
 * product is the same call whatever the thread count. */

void plc_attn_dot_tile(float *S, int64_t lds, const float *A, int64_t lda, int64_t m,
                       const float *B, int64_t ldb, int64_t n, int64_t hd)
{
    if (m == 0 || n == 0) return;
    plc_sgemm(0, 1, m, n, hd, 1.0f, A, lda, B, ldb, 0.0f, S, lds);
}

void plc_attn_mul_acc(float *Y, int64_t ldy, const float *W, int64_t wsi, int64_t wsj, int64_t m,
                      const float *X, int64_t ldx, int64_t n, int64_t hd, float alpha)
{
    if (m == 0 || n == 0) return;
    int tw = wsj != 1; /* W(i, j) = W[j * wsj + i]: W stored transposed */
    plc_sgemm(tw, 0, m, hd, n, alpha, W, tw ? wsj : wsi, X, ldx, 1.0f, Y, ldy);
}

PLC_VECTOR_CLONES void plc_attn_softmax_row(float *p, int64_t n, float scale)
{
    float mx[16];
    for (int l = 0; l < 16; l++) mx[l] = -INFINITY;
    int64_t j = 0;
    for (; j + 16 <= n; j += 16)
        for (int l = 0; l < 16; l++) {
            float x = p[j + l] * scale;
            p[j + l] = x;
            mx[l] = x > mx[l] ? x : mx[l];
        }
    for (int l = 0; j < n; j++, l++) {
        p[j] *= scale;
        mx[l] = p[j] > mx[l] ? p[j] : mx[l];
    }
    float max = mx[0];
    for (int l = 1; l < 16; l++) max = mx[l] > max ? mx[l] : max;
#pragma omp simd
    for (int64_t j = 0; j < n; j++) p[j] = plc_exp_shifted(p[j], max);
    /* the sum in double over 16 fixed lanes, combined in a fixed tree */
    double acc[16] = {0};
    for (j = 0; j + 16 <= n; j += 16)
        for (int l = 0; l < 16; l++) acc[l] += (double)p[j + l];
    for (int l = 0; j < n; j++, l++) acc[l] += (double)p[j];
    for (int w = 8; w >= 1; w /= 2)
        for (int l = 0; l < w; l++) acc[l] += acc[l + w];
    double sum = acc[0];
    float inv = sum > 0 ? (float)(1.0 / sum) : 0.0f; /* a row without keys stays 0 */
#pragma omp simd
    for (int64_t j = 0; j < n; j++) p[j] *= inv;
}
