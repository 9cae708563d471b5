/* kernels/cpu/elementwise.c: SwiGLU, residual adds, scaling, bf16 casts. */
#include "kernels/kernels.h"
#include "kernels/common/activations.h"
#include "kernels/common/bf16.h"
#include "kernels/cpu/simd.h"

#include <string.h>

#define PAR_MIN 65536 /* below this many elements threads cost more than they save */

PLC_VECTOR_CLONES static void swiglu_fwd_chunk(float *out, const float *gate, const float *up, int64_t n)
{
#pragma omp simd
    for (int64_t i = 0; i < n; i++) out[i] = plc_silu(gate[i]) * up[i];
}

/* set: the outputs written as 0 + their sums (see plc_k_swiglu_backward_set) */
PLC_VECTOR_CLONES static void swiglu_bwd_chunk(float *dgate, float *dup, const float *dout, const float *gate,
                                               const float *up, int64_t n, int set)
{
    if (set) {
#pragma omp simd
        for (int64_t i = 0; i < n; i++) {
            float g = 0.0f, u = 0.0f;
            plc_swiglu_backward_element(dout[i], gate[i], up[i], &g, &u);
            dgate[i] = g;
            dup[i] = u;
        }
        return;
    }
#pragma omp simd
    for (int64_t i = 0; i < n; i++) plc_swiglu_backward_element(dout[i], gate[i], up[i], &dgate[i], &dup[i]);
}

void plc_k_swiglu_forward(float *out, const float *gate, const float *up, int64_t n)
{
    const int64_t chunks = (n + PLC_EW_CHUNK - 1) / PLC_EW_CHUNK;
#pragma omp parallel for schedule(dynamic, 1) if (n > PAR_MIN)
    for (int64_t c = 0; c < chunks; c++) {
        int64_t i = c * PLC_EW_CHUNK, m = n - i < PLC_EW_CHUNK ? n - i : PLC_EW_CHUNK;
        swiglu_fwd_chunk(out + i, gate + i, up + i, m);
    }
}

static void swiglu_backward(float *dgate, float *dup, const float *dout, const float *gate, const float *up,
                            int64_t n, int set)
{
    const int64_t chunks = (n + PLC_EW_CHUNK - 1) / PLC_EW_CHUNK;
#pragma omp parallel for schedule(dynamic, 1) if (n > PAR_MIN)
    for (int64_t c = 0; c < chunks; c++) {
        int64_t i = c * PLC_EW_CHUNK, m = n - i < PLC_EW_CHUNK ? n - i : PLC_EW_CHUNK;
        swiglu_bwd_chunk(dgate + i, dup + i, dout + i, gate + i, up + i, m, set);
    }
}

void plc_k_swiglu_backward(float *dgate, float *dup, const float *dout,
                           const float *gate, const float *up, int64_t n)
{
    swiglu_backward(dgate, dup, dout, gate, up, n, 0);
}

void plc_k_swiglu_backward_set(float *dgate, float *dup, const float *dout,
                               const float *gate, const float *up, int64_t n)
{
    swiglu_backward(dgate, dup, dout, gate, up, n, 1);
}

void plc_k_add(float *out, const float *a, const float *b, int64_t n)
{
#pragma omp parallel for schedule(dynamic, PLC_EW_CHUNK) if (n > PAR_MIN)
    for (int64_t i = 0; i < n; i++) out[i] = a[i] + b[i];
}

void plc_k_accumulate(float *y, const float *x, int64_t n)
{
#pragma omp parallel for schedule(dynamic, PLC_EW_CHUNK) if (n > PAR_MIN)
    for (int64_t i = 0; i < n; i++) y[i] += x[i];
}

void plc_k_scale(float *x, float s, int64_t n)
{
#pragma omp parallel for schedule(dynamic, PLC_EW_CHUNK) if (n > PAR_MIN)
    for (int64_t i = 0; i < n; i++) x[i] *= s;
}

void plc_k_zero(float *x, int64_t n)
{
    if (n > 0) memset(x, 0, (size_t)n * sizeof *x);
}

void plc_k_cast_f32_to_bf16(uint16_t *out, const float *in, int64_t n)
{
#pragma omp parallel for schedule(dynamic, PLC_EW_CHUNK) if (n > PAR_MIN)
    for (int64_t i = 0; i < n; i++) out[i] = plc_f32_to_bf16(in[i]);
}

void plc_k_cast_bf16_to_f32(float *out, const uint16_t *in, int64_t n)
{
#pragma omp parallel for schedule(dynamic, PLC_EW_CHUNK) if (n > PAR_MIN)
    for (int64_t i = 0; i < n; i++) out[i] = plc_bf16_to_f32(in[i]);
}
