/* kernels/cpu/optimizer.c: AdamW and the reductions behind gradient clipping. */
#include "kernels/kernels.h"
#include "kernels/common/adamw.h"
#include "kernels/common/reduce.h"
#include "kernels/cpu/simd.h"

/* Reductions split n into a fixed number of chunks (a function of n only),
 * sum each chunk in double, then add the chunk sums in order: the result is
 * the same bits for any thread count. */
#define REDUCE_CHUNKS 64

static double chunked_sum(const float *x, int64_t n, int squares)
{
    double part[REDUCE_CHUNKS];
#pragma omp parallel for schedule(dynamic, 1) if (n > 262144)
    for (int c = 0; c < REDUCE_CHUNKS; c++) {
        int64_t a = n * c / REDUCE_CHUNKS, b = n * (c + 1) / REDUCE_CHUNKS;
        part[c] = squares ? plc_sum_squares_f64(x + a, b - a) : plc_sum_f64(x + a, b - a);
    }
    double total = 0;
    for (int c = 0; c < REDUCE_CHUNKS; c++) total += part[c];
    return total;
}

double plc_k_sum(const float *x, int64_t n) { return chunked_sum(x, n, 0); }
double plc_k_sum_squares(const float *x, int64_t n) { return chunked_sum(x, n, 1); }

/* a chunk of AdamW as vector code: element-wise, correctly rounded square
 * root and division, no fused multiply-adds, so every lane has the bits of
 * the scalar update (kernels/cpu/simd.h); the kernels build without errno
 * (Makefile), so sqrtf is a vector instruction here. */
PLC_VECTOR_CLONES static void adamw_chunk(float *param, const float *grad, float *m, float *v, int64_t n,
                                          const plc_adamw_consts *c, float grad_scale)
{
    const plc_adamw_consts k = *c;
#pragma omp simd
    for (int64_t i = 0; i < n; i++) plc_adamw_element(&param[i], &m[i], &v[i], grad[i] * grad_scale, &k);
}

void plc_k_adamw(float *param, const float *grad, float *m, float *v, int64_t n,
                 double lr, double beta1, double beta2, double eps, double weight_decay,
                 int64_t t, float grad_scale)
{
    plc_adamw_consts c = plc_adamw_prepare(t, lr, beta1, beta2, eps, weight_decay);
    const int64_t chunks = (n + PLC_EW_CHUNK - 1) / PLC_EW_CHUNK;
#pragma omp parallel for schedule(dynamic, 1) if (n > 65536)
    for (int64_t ch = 0; ch < chunks; ch++) {
        int64_t i = ch * PLC_EW_CHUNK, len = n - i < PLC_EW_CHUNK ? n - i : PLC_EW_CHUNK;
        adamw_chunk(param + i, grad + i, m + i, v + i, len, &c, grad_scale);
    }
}
