/* kernels/cpu/rope.c: RoPE forward (rotation) and backward (inverse rotation). */
#include "kernels/kernels.h"
#include "kernels/common/rope.h"

#include <stdlib.h>

/* cos/sin table [T, hd/2, 2], shared by every batch and head; NULL when
 * out of memory */
static float *rope_table(const int32_t *positions, int64_t T, int64_t hd, float theta)
{
    int64_t half = hd / 2;
    float *cs = malloc((size_t)(T * half * 2 + 1) * sizeof *cs);
    if (!cs) return NULL;
#pragma omp parallel for schedule(dynamic, 16) if (T * half > 16384)
    for (int64_t t = 0; t < T; t++) {
        int32_t p = positions ? positions[t] : (int32_t)t;
        for (int64_t i = 0; i < half; i++)
            plc_rope_cos_sin(p, i, hd, theta, &cs[(t * half + i) * 2], &cs[(t * half + i) * 2 + 1]);
    }
    return cs;
}

/* The table of positions 0 .. T-1 (positions NULL, every call of a plan
 * without context parallelism) is kept between calls, per calling thread:
 * its T pow, cos and sin in double cost as much as the rotation itself. */
static _Thread_local struct {
    float *cs;
    int64_t T, hd;
    float theta;
} kept;

static float *table_for(const int32_t *positions, int64_t T, int64_t hd, float theta)
{
    if (positions) return rope_table(positions, T, hd, theta);
    if (!kept.cs || kept.T != T || kept.hd != hd || kept.theta != theta) {
        float *cs = rope_table(NULL, T, hd, theta);
        if (!cs) return NULL;
        free(kept.cs);
        kept.cs = cs, kept.T = T, kept.hd = hd, kept.theta = theta;
    }
    return kept.cs;
}

/* one head's pairs: y = R x (mode 0), y += R^T x (1) or y = 0 + R^T x (2).
 * Scalar on purpose: GCC
 * vectorises the pairs into fused multiply-add-subtracts (vfmaddsub), whose
 * bits would differ from the other kernels' and the CUDA backend's. */
static void rotate_head(float *y, const float *x, const float *c, int64_t half, int mode)
{
    for (int64_t i = 0; i < half; i++) {
        if (mode == 0) {
            plc_rope_rotate(x[2 * i], x[2 * i + 1], c[2 * i], c[2 * i + 1], &y[2 * i], &y[2 * i + 1]);
            continue;
        }
        float a, b;
        plc_rope_rotate_inverse(x[2 * i], x[2 * i + 1], c[2 * i], c[2 * i + 1], &a, &b);
        float y0 = mode == 2 ? 0.0f : y[2 * i], y1 = mode == 2 ? 0.0f : y[2 * i + 1];
        y[2 * i] = y0 + a;
        y[2 * i + 1] = y1 + b;
    }
}

/* rotate_head's mode over every pair of every head of every row (y may
 * alias x in the forward) */
static int rope_apply(float *y, const float *x, const int32_t *positions, int64_t B, int64_t T,
                      int64_t heads, int64_t hd, float theta, int mode)
{
    float *cs = table_for(positions, T, hd, theta);
    if (!cs) return -1;
    int64_t half = hd / 2;
#pragma omp parallel for schedule(dynamic, 16) if (B * T * heads * hd > 32768)
    for (int64_t bt = 0; bt < B * T; bt++) {
        const float *c = cs + (bt % T) * half * 2;
        for (int64_t h = 0; h < heads; h++)
            rotate_head(y + (bt * heads + h) * hd, x + (bt * heads + h) * hd, c, half, mode);
    }
    if (positions) free(cs);
    return 0;
}

int plc_k_rope_forward(float *out, const float *in, const int32_t *positions,
                       int64_t B, int64_t T, int64_t heads, int64_t hd, float theta)
{
    return rope_apply(out, in, positions, B, T, heads, hd, theta, 0);
}

int plc_k_rope_backward(float *din, const float *dout, const int32_t *positions,
                        int64_t B, int64_t T, int64_t heads, int64_t hd, float theta)
{
    return rope_apply(din, dout, positions, B, T, heads, hd, theta, 1);
}

int plc_k_rope_backward_set(float *din, const float *dout, const int32_t *positions,
                            int64_t B, int64_t T, int64_t heads, int64_t hd, float theta)
{
    return rope_apply(din, dout, positions, B, T, heads, hd, theta, 2);
}
