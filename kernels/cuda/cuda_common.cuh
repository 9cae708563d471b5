/* kernels/cuda/cuda_common.cuh: helpers shared by the CUDA kernel files:
 * storage loads/stores (fp32 or bf16 as uint16_t, through the shared
 * kernels/common/bf16.h), error recording, launch geometry, and a block
 * reduction with a fixed order. */
#ifndef PLC_KERNELS_CUDA_COMMON_CUH
#define PLC_KERNELS_CUDA_COMMON_CUH

#include <cuda_runtime.h>
#include <stdint.h>

#include "kernels/common/bf16.h"
#include "kernels/cuda/kernels_cuda.h"

/* ---- storage ----------------------------------------------------------------- */
__device__ __forceinline__ float plc_ld(const float *p) { return *p; }
__device__ __forceinline__ float plc_ld(const uint16_t *p) { return plc_bf16_to_f32(*p); }
__device__ __forceinline__ void plc_st(float *p, float x) { *p = x; }
__device__ __forceinline__ void plc_st(uint16_t *p, float x) { *p = plc_f32_to_bf16(x); }

/* ---- errors ------------------------------------------------------------------- */
/* Records "what: message" for plc_cuda_last_error(); returns -1. */
int plc_cuda_fail(const char *what, const char *message);
/* After a launch: 0, or -1 with the launch error recorded. */
int plc_cuda_check_launch(const char *what);

static inline cudaStream_t plc_stream(void *s) { return (cudaStream_t)s; }

/* blocks of `threads` to cover n items, capped (kernels use grid-stride loops) */
static inline unsigned plc_blocks(int64_t n, int threads)
{
    int64_t b = (n + threads - 1) / threads;
    if (b < 1) b = 1;
    if (b > 65535) b = 65535;
    return (unsigned)b;
}

/* Dispatch a templated launch on the storage type. */
#define PLC_DISPATCH(dt, T, ...)                                                          \
    do {                                                                                  \
        if ((dt) == PLC_CUDA_F32) {                                                       \
            typedef float T;                                                              \
            __VA_ARGS__;                                                                  \
        } else if ((dt) == PLC_CUDA_BF16) {                                               \
            typedef uint16_t T;                                                           \
            __VA_ARGS__;                                                                  \
        } else {                                                                          \
            return plc_cuda_fail(__func__, "unknown dtype");                              \
        }                                                                                 \
    } while (0)

/* ---- block reductions (fixed tree: same order on every run) ----------------------
 * blockDim.x must be a power of two <= 1024; `scratch` has blockDim.x floats.
 * Every thread gets the result. */
__device__ __forceinline__ float plc_block_sum(float x, float *scratch)
{
    scratch[threadIdx.x] = x;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) scratch[threadIdx.x] += scratch[threadIdx.x + s];
        __syncthreads();
    }
    float r = scratch[0];
    __syncthreads();
    return r;
}

__device__ __forceinline__ float plc_block_max(float x, float *scratch)
{
    scratch[threadIdx.x] = x;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) scratch[threadIdx.x] = fmaxf(scratch[threadIdx.x], scratch[threadIdx.x + s]);
        __syncthreads();
    }
    float r = scratch[0];
    __syncthreads();
    return r;
}

#define PLC_ROW_THREADS 256 /* threads of the row-per-block kernels */

/* block sum in double, the same fixed tree; `scratch` has blockDim.x doubles */
__device__ __forceinline__ double plc_block_sum_f64(double x, double *scratch)
{
    scratch[threadIdx.x] = x;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) scratch[threadIdx.x] += scratch[threadIdx.x + s];
        __syncthreads();
    }
    double r = scratch[0];
    __syncthreads();
    return r;
}

/* ---- column sums over rows (weight and bias gradients) ---------------------------
 * A block of PLC_COL_TILE x PLC_COL_LANES threads owns PLC_COL_TILE columns;
 * lane j (threadIdx.y) adds rows j, j + PLC_COL_LANES, ... in order, and the
 * lanes are then added in lane order: the same order whatever the grid. */
#define PLC_COL_TILE 32
#define PLC_COL_LANES 32 /* a block of 1024 threads: enough rows in flight to keep memory busy */

/* the column's total in the threads with threadIdx.y == 0 (others get 0) */
__device__ __forceinline__ double plc_col_lanes_sum(double x, double (*scratch)[PLC_COL_TILE])
{
    scratch[threadIdx.y][threadIdx.x] = x;
    __syncthreads();
    double r = 0;
    if (threadIdx.y == 0)
        for (int l = 0; l < PLC_COL_LANES; l++) r += scratch[l][threadIdx.x];
    __syncthreads();
    return r;
}

#endif
