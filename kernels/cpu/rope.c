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
#pragma omp parallel for schedule(static) if (T * half > 16384)
    for (int64_t t = 0; t < T; t++) {
        int32_t p = positions ? positions[t] : (int32_t)t;
        for (int64_t i = 0; i < half; i++)
            plc_rope_cos_sin(p, i, hd, theta, &cs[(t * half + i) * 2], &cs[(t * half + i) * 2 + 1]);
    }
    return cs;
}

int plc_k_rope_forward(float *out, const float *in, const int32_t *positions,
                       int64_t B, int64_t T, int64_t heads, int64_t hd, float theta)
{
    float *cs = rope_table(positions, T, hd, theta);
    if (!cs) return -1;
    int64_t half = hd / 2;
#pragma omp parallel for schedule(static) if (B * T * heads * hd > 32768)
    for (int64_t bt = 0; bt < B * T; bt++) {
        const float *c = cs + (bt % T) * half * 2;
        for (int64_t h = 0; h < heads; h++) {
            const float *x = in + (bt * heads + h) * hd;
            float *y = out + (bt * heads + h) * hd;
            for (int64_t i = 0; i < half; i++)
                plc_rope_rotate(x[2 * i], x[2 * i + 1], c[2 * i], c[2 * i + 1], &y[2 * i], &y[2 * i + 1]);
        }
    }
    free(cs);
    return 0;
}

int plc_k_rope_backward(float *din, const float *dout, const int32_t *positions,
                        int64_t B, int64_t T, int64_t heads, int64_t hd, float theta)
{
    float *cs = rope_table(positions, T, hd, theta);
    if (!cs) return -1;
    int64_t half = hd / 2;
#pragma omp parallel for schedule(static) if (B * T * heads * hd > 32768)
    for (int64_t bt = 0; bt < B * T; bt++) {
        const float *c = cs + (bt % T) * half * 2;
        for (int64_t h = 0; h < heads; h++) {
            const float *g = dout + (bt * heads + h) * hd;
            float *d = din + (bt * heads + h) * hd;
            for (int64_t i = 0; i < half; i++) {
                float a, b;
                plc_rope_rotate_inverse(g[2 * i], g[2 * i + 1], c[2 * i], c[2 * i + 1], &a, &b);
                d[2 * i] += a;
                d[2 * i + 1] += b;
            }
        }
    }
    free(cs);
    return 0;
}
