/* kernels/cuda/context.cu: device context (cuBLAS handle, reduction scratch),
 * error reporting, and matmul through cublasGemmEx. */
#include <cublas_v2.h>
#include <stdio.h>
#include <stdlib.h>

#include "kernels/cuda/cuda_common.cuh"

#define PLC_SUMSQ_BLOCKS 256 /* fixed: the blocking of plc_cuda_sum_squares */

struct plc_cuda_ctx {
    int device;
    cublasHandle_t blas;
    double *partials; /* PLC_SUMSQ_BLOCKS doubles on the device */
    /* cuBLAS's workspace, set after every cublasSetStream (which resets it
     * to the library's pool): owned here, so that a GEMM recorded in a CUDA
     * graph never allocates (NVIDIA's advice for graph capture) and a graph
     * replays into memory that outlives it. The size of cuBLAS's own
     * default, so the same algorithms are picked: 32 MiB on Hopper and
     * later, 4 MiB before. */
    void *blas_ws;
    size_t blas_ws_bytes;
};

static char last_error[512] = "no error";

extern "C" const char *plc_cuda_last_error(void) { return last_error; }

int plc_cuda_fail(const char *what, const char *message)
{
    snprintf(last_error, sizeof last_error, "%s: %s", what, message);
    return -1;
}

int plc_cuda_check_launch(const char *what)
{
    cudaError_t e = cudaGetLastError();
    return e == cudaSuccess ? 0 : plc_cuda_fail(what, cudaGetErrorString(e));
}

extern "C" int plc_cuda_device_count(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        cudaGetLastError(); /* clear the sticky "no device / no driver" error */
        return 0;
    }
    return n;
}

extern "C" plc_cuda_ctx *plc_cuda_create(int device)
{
    cudaError_t e = cudaSetDevice(device);
    if (e != cudaSuccess) {
        plc_cuda_fail("cudaSetDevice", cudaGetErrorString(e));
        return NULL;
    }
    plc_cuda_ctx *ctx = (plc_cuda_ctx *)calloc(1, sizeof *ctx);
    if (!ctx) {
        plc_cuda_fail("plc_cuda_create", "out of host memory");
        return NULL;
    }
    ctx->device = device;
    cublasStatus_t s = cublasCreate(&ctx->blas);
    if (s != CUBLAS_STATUS_SUCCESS) {
        plc_cuda_fail("cublasCreate", cublasGetStatusString(s));
        free(ctx);
        return NULL;
    }
    /* fp32 GEMMs stay fp32 (no TF32): the CPU reference is fp32 */
    cublasSetMathMode(ctx->blas, CUBLAS_DEFAULT_MATH);
    int major = 0;
    if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess) major = 0;
    ctx->blas_ws_bytes = (size_t)(major >= 9 ? 32 : 4) << 20;
    e = cudaMalloc((void **)&ctx->partials, PLC_SUMSQ_BLOCKS * sizeof(double));
    if (e == cudaSuccess) e = cudaMalloc(&ctx->blas_ws, ctx->blas_ws_bytes);
    if (e != cudaSuccess) {
        plc_cuda_fail("cudaMalloc", cudaGetErrorString(e));
        cudaFree(ctx->partials);
        cublasDestroy(ctx->blas);
        free(ctx);
        return NULL;
    }
    return ctx;
}

extern "C" void plc_cuda_destroy(plc_cuda_ctx *ctx)
{
    if (!ctx) return;
    cudaFree(ctx->partials);
    cudaFree(ctx->blas_ws);
    cublasDestroy(ctx->blas);
    free(ctx);
}

extern "C" int plc_cuda_synchronize(void *stream)
{
    cudaError_t e = cudaStreamSynchronize(plc_stream(stream));
    return e == cudaSuccess ? 0 : plc_cuda_fail("cudaStreamSynchronize", cudaGetErrorString(e));
}

/* Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T, so cuBLAS
 * gets B first; the leading dimensions are the row-major row lengths. */
extern "C" int plc_cuda_matmul(plc_cuda_ctx *ctx, void *C, plc_cuda_dtype c_dt,
                               const void *A, const void *B, plc_cuda_dtype ab_dt,
                               int64_t M, int64_t N, int64_t K, int trans_a, int trans_b,
                               float alpha, float beta, void *stream)
{
    if (M <= 0 || N <= 0) return 0;
    if (M > INT32_MAX || N > INT32_MAX || K > INT32_MAX || K < 0)
        return plc_cuda_fail("plc_cuda_matmul", "dimension does not fit cuBLAS's int");
    if (K == 0)
        return plc_cuda_fail("plc_cuda_matmul", "K = 0 is not supported");
    cudaDataType ab = ab_dt == PLC_CUDA_BF16 ? CUDA_R_16BF : CUDA_R_32F;
    cudaDataType ct = c_dt == PLC_CUDA_BF16 ? CUDA_R_16BF : CUDA_R_32F;
    cublasStatus_t s = cublasSetStream(ctx->blas, plc_stream(stream));
    if (s != CUBLAS_STATUS_SUCCESS) return plc_cuda_fail("cublasSetStream", cublasGetStatusString(s));
    s = cublasSetWorkspace(ctx->blas, ctx->blas_ws, ctx->blas_ws_bytes);
    if (s != CUBLAS_STATUS_SUCCESS) return plc_cuda_fail("cublasSetWorkspace", cublasGetStatusString(s));
    int lda = (int)(trans_a ? M : K), ldb = (int)(trans_b ? K : N);
    s = cublasGemmEx(ctx->blas, trans_b ? CUBLAS_OP_T : CUBLAS_OP_N, trans_a ? CUBLAS_OP_T : CUBLAS_OP_N,
                     (int)N, (int)M, (int)K, &alpha, B, ab, ldb, A, ab, lda, &beta, C, ct, (int)N,
                     CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    return s == CUBLAS_STATUS_SUCCESS ? 0 : plc_cuda_fail("cublasGemmEx", cublasGetStatusString(s));
}

/* ---- sum of squares: fixed grid, fixed per-thread striding, fixed trees ---------- */

__global__ void sumsq_partials(double *partials, const float *x, int64_t n)
{
    __shared__ double sh[256];
    double acc = 0;
    for (int64_t i = (int64_t)blockIdx.x * 256 + threadIdx.x; i < n; i += (int64_t)PLC_SUMSQ_BLOCKS * 256)
        acc += (double)x[i] * (double)x[i];
    sh[threadIdx.x] = acc;
    __syncthreads();
    for (unsigned s = 128; s > 0; s >>= 1) {
        if (threadIdx.x < s) sh[threadIdx.x] += sh[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) partials[blockIdx.x] = sh[0];
}

__global__ void sumsq_final(double *result, const double *partials)
{
    if (threadIdx.x != 0 || blockIdx.x != 0) return;
    double s = 0;
    for (int b = 0; b < PLC_SUMSQ_BLOCKS; b++) s += partials[b];
    *result = s;
}

extern "C" int plc_cuda_sum_squares(plc_cuda_ctx *ctx, double *result, const float *x, int64_t n,
                                    void *stream)
{
    sumsq_partials<<<PLC_SUMSQ_BLOCKS, 256, 0, plc_stream(stream)>>>(ctx->partials, x, n);
    sumsq_final<<<1, 1, 0, plc_stream(stream)>>>(result, ctx->partials);
    return plc_cuda_check_launch("plc_cuda_sum_squares");
}
