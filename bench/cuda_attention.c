/* bench/cuda_attention.c: plrun's CUDA flash attention alone, at the shape
 * of scripts/gpu/llama1b.plan's attention (16 sequences of 2048 tokens,
 * 32 heads over 8 kv heads of 64, bf16: the tensor-core kernels) and at
 * head dimension 128, timed with CUDA events (median of 10 after 2 warm-up
 * calls). FLOPs as scripts/gpu/peer.py counts them for PyTorch's SDPA, its
 * peer in the same check.sh call: the causal forward is 4 B H T^2 hd / 2,
 * forward plus backward 3.5 times that. Without the CUDA backend or a GPU
 * it prints one line saying so and exits 0. */
#include <stdio.h>

#ifndef PLC_HAVE_CUDA
int main(void)
{
    printf("cuda_attention: skipped: built without the CUDA backend\n");
    return 0;
}
#else

#include <cuda_runtime.h>
#include <stdint.h>
#include <stdlib.h>

#include "kernels/cuda/kernels_cuda.h"

enum { WARM = 2, REPS = 10 };

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

static int check(cudaError_t e, const char *what)
{
    if (e == cudaSuccess) return 0;
    fprintf(stderr, "cuda_attention: %s: %s\n", what, cudaGetErrorString(e));
    return -1;
}

/* one shape: forward, then forward + backward; 0, or -1 with a message */
static int run(int64_t B, int64_t T, int64_t H, int64_t Hkv, int64_t hd)
{
    int64_t nq = B * T * H * hd, nkv = B * T * Hkv * hd;
    void *q = NULL, *k = NULL, *v = NULL, *o = NULL, *g = NULL, *dq = NULL, *dk = NULL, *dv = NULL;
    float *lse = NULL;
    int rc = -1;
    if (check(cudaMalloc(&q, (size_t)nq * 2), "cudaMalloc") || check(cudaMalloc(&o, (size_t)nq * 2), "cudaMalloc") ||
        check(cudaMalloc(&g, (size_t)nq * 2), "cudaMalloc") || check(cudaMalloc(&dq, (size_t)nq * 2), "cudaMalloc") ||
        check(cudaMalloc(&k, (size_t)nkv * 2), "cudaMalloc") || check(cudaMalloc(&v, (size_t)nkv * 2), "cudaMalloc") ||
        check(cudaMalloc(&dk, (size_t)nkv * 2), "cudaMalloc") || check(cudaMalloc(&dv, (size_t)nkv * 2), "cudaMalloc") ||
        check(cudaMalloc((void **)&lse, (size_t)(B * H * T) * sizeof *lse), "cudaMalloc"))
        goto out;
    /* every byte 0x3c: bf16 0x3c3c (about 0.0115) everywhere, finite scores */
    if (check(cudaMemset(q, 0x3c, (size_t)nq * 2), "cudaMemset") || check(cudaMemset(k, 0x3c, (size_t)nkv * 2), "cudaMemset") ||
        check(cudaMemset(v, 0x3c, (size_t)nkv * 2), "cudaMemset") || check(cudaMemset(g, 0x3c, (size_t)nq * 2), "cudaMemset"))
        goto out;
    cudaEvent_t a, b;
    if (check(cudaEventCreate(&a), "cudaEventCreate") || check(cudaEventCreate(&b), "cudaEventCreate")) goto out;
    float t[2][REPS];
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < WARM + REPS; i++) {
            cudaEventRecord(a, NULL);
            if (plc_cuda_flash_attention_forward(o, lse, q, k, v, PLC_CUDA_BF16, NULL, NULL, B, T, T, H, Hkv, hd, NULL) ||
                (pass && plc_cuda_flash_attention_backward(dq, dk, dv, g, q, k, v, o, lse, PLC_CUDA_BF16, NULL, NULL, B,
                                                           T, T, H, Hkv, hd, NULL))) {
                fprintf(stderr, "cuda_attention: %s\n", plc_cuda_last_error());
                goto out;
            }
            cudaEventRecord(b, NULL);
            if (check(cudaEventSynchronize(b), "the kernels")) goto out;
            if (i >= WARM) cudaEventElapsedTime(&t[pass][i - WARM], a, b);
        }
    double fl = 4.0 * (double)B * (double)H * (double)T * (double)T * (double)hd / 2;
    for (int pass = 0; pass < 2; pass++) {
        qsort(t[pass], REPS, sizeof(float), cmp_float);
        double s = t[pass][REPS / 2] / 1e3;
        printf("{\"what\": \"plrun flash %s, hd %lld\", \"s\": %.6f, \"tflops\": %.1f}\n",
               pass ? "forward+backward" : "forward", (long long)hd, s, (pass ? 3.5 : 1.0) * fl / s / 1e12);
    }
    cudaEventDestroy(a), cudaEventDestroy(b);
    rc = 0;
out:
    cudaFree(q), cudaFree(k), cudaFree(v), cudaFree(o), cudaFree(g), cudaFree(dq), cudaFree(dk), cudaFree(dv);
    cudaFree(lse);
    return rc;
}

int main(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
        printf("cuda_attention: skipped: no CUDA GPU is available\n");
        return 0;
    }
    return run(16, 2048, 32, 8, 64) || run(8, 2048, 16, 8, 128) ? 1 : 0;
}
#endif
