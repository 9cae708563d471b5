/* kernels/cpu/cross_entropy.c: softmax cross-entropy in pieces that also
 * serve a vocabulary sharded across tensor-parallel ranks. */
#include "kernels/kernels.h"
#include "kernels/common/expf.h"
#include "kernels/cpu/simd.h"

#include <math.h>
#include <stddef.h>

#define PAR_MIN_ROWS 4
/* exponentials per block of the row sum: a multiple of SUM_LANES */
#define EXP_BLOCK 512
#define SUM_LANES 8

/* The row loops are vector code (kernels/cpu/simd.h): the maximum is exact
 * in any order, the exponential is plc_expf (the same bits in every lane),
 * and the sum of a row adds element c into lane c % SUM_LANES, in order,
 * in double, lanes combined in a fixed tree: a function of V only. */
PLC_VECTOR_CLONES static float row_max(const float *x, int64_t V)
{
    float m = -INFINITY;
#pragma omp simd reduction(max : m)
    for (int64_t c = 0; c < V; c++) m = x[c] > m ? x[c] : m;
    return m;
}

PLC_VECTOR_CLONES static void row_sumexp(float *sum, float *target_logit, const float *x, float max,
                                         int32_t target, int64_t V, int64_t vocab_start)
{
    double acc[SUM_LANES] = {0};
    float e[EXP_BLOCK];
    for (int64_t c0 = 0; c0 < V; c0 += EXP_BLOCK) {
        int64_t n = V - c0 < EXP_BLOCK ? V - c0 : EXP_BLOCK;
#pragma omp simd
        for (int64_t c = 0; c < n; c++) e[c] = plc_expf(x[c0 + c] - max);
        for (int64_t c = n; c < (n + SUM_LANES - 1) / SUM_LANES * SUM_LANES; c++) e[c] = 0.0f;
        for (int64_t c = 0; c < n; c += SUM_LANES)
#pragma omp simd
            for (int l = 0; l < SUM_LANES; l++) acc[l] += (double)e[c + l];
    }
    *sum = (float)(((acc[0] + acc[4]) + (acc[2] + acc[6])) + ((acc[1] + acc[5]) + (acc[3] + acc[7])));
    int64_t t = (int64_t)target - vocab_start;
    *target_logit = (t >= 0 && t < V) ? x[t] : 0.0f;
}

/* x and d may be the same row (in-place gradient) */
PLC_VECTOR_CLONES static void row_loss_grad(float *loss, float *d, const float *x, float max, float sum,
                                            float target_logit, int32_t target, int64_t V,
                                            int64_t vocab_start, float grad_scale)
{
    if (loss) *loss = logf(sum) + max - target_logit;
    if (!d) return;
    float inv = 1.0f / sum;
#pragma omp simd
    for (int64_t c = 0; c < V; c++) d[c] = plc_expf(x[c] - max) * inv * grad_scale;
    int64_t t = (int64_t)target - vocab_start;
    if (t >= 0 && t < V) d[t] -= grad_scale;
}

void plc_k_xent_local_max(float *rmax, const float *logits, int64_t rows, int64_t V_local)
{
#pragma omp parallel for schedule(dynamic, 8) if (rows >= PAR_MIN_ROWS)
    for (int64_t r = 0; r < rows; r++) rmax[r] = row_max(logits + r * V_local, V_local);
}

void plc_k_xent_local_sumexp(float *row_sum, float *target_logit, const float *logits,
                             const float *global_max, const int32_t *targets,
                             int64_t rows, int64_t V_local, int64_t vocab_start)
{
#pragma omp parallel for schedule(dynamic, 8) if (rows >= PAR_MIN_ROWS)
    for (int64_t r = 0; r < rows; r++)
        row_sumexp(&row_sum[r], &target_logit[r], logits + r * V_local, global_max[r],
                   targets[r], V_local, vocab_start);
}

void plc_k_xent_loss_grad(float *loss, float *dlogits, const float *logits,
                          const float *global_max, const float *global_sum,
                          const float *target_logit, const int32_t *targets,
                          int64_t rows, int64_t V_local, int64_t vocab_start,
                          float grad_scale)
{
#pragma omp parallel for schedule(dynamic, 8) if (rows >= PAR_MIN_ROWS)
    for (int64_t r = 0; r < rows; r++)
        row_loss_grad(loss ? &loss[r] : NULL, dlogits ? dlogits + r * V_local : NULL,
                      logits + r * V_local, global_max[r], global_sum[r], target_logit[r],
                      targets[r], V_local, vocab_start, grad_scale);
}

void plc_k_cross_entropy(float *loss, float *dlogits, const float *logits,
                         const int32_t *targets, int64_t rows, int64_t V, float grad_scale)
{
#pragma omp parallel for schedule(dynamic, 8) if (rows >= PAR_MIN_ROWS)
    for (int64_t r = 0; r < rows; r++) {
        const float *x = logits + r * V;
        float max = row_max(x, V), sum, tl;
        row_sumexp(&sum, &tl, x, max, targets[r], V, 0);
        row_loss_grad(loss ? &loss[r] : NULL, dlogits ? dlogits + r * V : NULL, x, max, sum, tl,
                      targets[r], V, 0, grad_scale);
    }
}
