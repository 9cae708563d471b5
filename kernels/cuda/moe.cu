/* kernels/cuda/moe.cu: the mixture-of-experts kernels on the GPU, the
 * contract of kernels/kernels.h's MoE section (fp32 only): routing, the
 * permutation of token copies and back, the experts' matmuls over row
 * counts known only on the device, and the backwards.
 *
 * Every output element is computed by one thread in a fixed order (the
 * router's sums over experts in double, a copy's rows in j order), so the
 * results do not depend on launch timing. A copy's place in its expert's
 * block is found by one thread per expert scanning the copies in token
 * order (the CPU's order). The expert matmuls read the counts back to the
 * host (one small synchronous copy) and run one cuBLAS GEMM per expert. */
#include <stdlib.h>

#include "kernels/cuda/cuda_common.cuh"

#define MOE_THREADS 256
#define GRID_STRIDE(i, n) \
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < (n); i += (int64_t)gridDim.x * blockDim.x)

/* one thread per token: scores, its k experts (ties: the lower), weights */
__global__ void moe_scores_k(float *scores, int32_t *expert, float *weight, const float *logits, int64_t rows,
                             int64_t E, int64_t k, int router, float scale)
{
    GRID_STRIDE(t, rows)
    {
        const float *z = logits + t * E;
        float *p = scores + t * E;
        if (router == 0) {
            float mx = z[0];
            for (int64_t e = 1; e < E; e++) mx = z[e] > mx ? z[e] : mx;
            double sum = 0;
            for (int64_t e = 0; e < E; e++) sum += exp((double)z[e] - mx);
            for (int64_t e = 0; e < E; e++) p[e] = (float)(exp((double)z[e] - mx) / sum);
        } else {
            for (int64_t e = 0; e < E; e++) p[e] = (float)(1.0 / (1.0 + exp(-(double)z[e])));
        }
        int32_t *x = expert + t * k;
        for (int64_t j = 0; j < k; j++) {
            int64_t best = -1;
            for (int64_t e = 0; e < E; e++) {
                bool taken = false;
                for (int64_t i = 0; i < j; i++) taken |= x[i] == (int32_t)e;
                if (!taken && (best < 0 || p[e] > p[best])) best = e;
            }
            x[j] = (int32_t)best;
        }
        double sel = 0;
        for (int64_t j = 0; j < k; j++) sel += p[x[j]];
        for (int64_t j = 0; j < k; j++) weight[t * k + j] = (float)((double)scale * p[x[j]] / sel);
    }
}

/* one thread per expert: its copies' slots in token order; counts capped */
__global__ void moe_slots_k(int32_t *pos, int32_t *counts, const int32_t *expert, int64_t n, int64_t E,
                            int64_t capacity)
{
    GRID_STRIDE(e, E)
    {
        int64_t c = 0;
        for (int64_t i = 0; i < n; i++)
            if (expert[i] == (int32_t)e) pos[i] = (int32_t)c++;
        counts[e] = (int32_t)(c < capacity ? c : capacity);
    }
}

/* one thread: the blocks' offsets, the copies' rows and the dropped count */
__global__ void moe_place_k(int32_t *pos, long long *dropped, const int32_t *counts, const int32_t *expert, int64_t n,
                            int64_t E, int64_t capacity)
{
    if (blockIdx.x != 0 || threadIdx.x != 0) return;
    long long d = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t off = 0;
        for (int64_t e = 0; e < expert[i]; e++) off += counts[e];
        if (pos[i] < capacity) pos[i] = (int32_t)(off + pos[i]);
        else pos[i] = -1, d++;
    }
    *dropped = d;
}

extern "C" int plc_cuda_moe_route(float *scores, int32_t *expert, int32_t *pos, float *weight, int32_t *counts,
                                  const float *logits, int64_t rows, int64_t E, int64_t k, int router,
                                  int64_t capacity, float scale, long long *dropped_dev, void *stream)
{
    if (rows <= 0) return 0;
    cudaStream_t s = plc_stream(stream);
    moe_scores_k<<<plc_blocks(rows, MOE_THREADS), MOE_THREADS, 0, s>>>(scores, expert, weight, logits, rows, E, k,
                                                                      router, scale);
    if (plc_cuda_check_launch(__func__)) return -1;
    moe_slots_k<<<plc_blocks(E, 64), 64, 0, s>>>(pos, counts, expert, rows * k, E, capacity);
    if (plc_cuda_check_launch(__func__)) return -1;
    moe_place_k<<<1, 1, 0, s>>>(pos, dropped_dev, counts, expert, rows * k, E, capacity);
    return plc_cuda_check_launch(__func__);
}

/* one block per sequence: f_e in shared memory, then a thread per token */
__global__ void moe_route_bwd_k(float *dlogits, const float *dweight, const float *scores, const int32_t *expert,
                                const float *choices, int64_t E, int64_t k, int router, int64_t seq_rows,
                                int64_t seq_full, float scale, float aux)
{
    extern __shared__ double f[]; /* [E] */
    const int64_t t0 = (int64_t)blockIdx.x * seq_rows;
    for (int64_t e = threadIdx.x; e < E; e += blockDim.x) {
        double c = 0;
        if (choices) c = choices[(int64_t)blockIdx.x * E + e];
        else
            for (int64_t i = t0 * k; i < (t0 + seq_rows) * k; i++) c += expert[i] == (int32_t)e;
        f[e] = c / (double)(seq_full * k);
    }
    __syncthreads();
    const double ae = (double)aux * (double)E;
    for (int64_t t = t0 + threadIdx.x; t < t0 + seq_rows; t += blockDim.x) {
        const float *p = scores + t * E;
        const int32_t *x = expert + t * k;
        const float *dw = dweight + t * k;
        double sel = 0, qg = 0, all = 0, sa = 0;
        for (int64_t j = 0; j < k; j++) sel += p[x[j]];
        for (int64_t j = 0; j < k; j++) qg += p[x[j]] / sel * dw[j];
        if (router != 0)
            for (int64_t e = 0; e < E; e++) all += p[e];
        if (router != 0 && aux != 0)
            for (int64_t e = 0; e < E; e++) sa += p[e] / all * ae * f[e];
        /* g_e: the combine weights' part (experts among the k), then the
         * load-balancing loss's, as the CPU kernel sums them */
#define MOE_G(e, g)                                                                    \
    double g = 0;                                                                      \
    for (int64_t j = 0; j < k; j++)                                                    \
        if (x[j] == (int32_t)(e)) g += (double)scale * (dw[j] - qg) / sel;             \
    if (aux != 0) g += router == 0 ? ae * f[e] : (ae * f[e] - sa) / all;
        float *dz = dlogits + t * E;
        if (router == 0) {
            double pg = 0;
            for (int64_t e = 0; e < E; e++) {
                MOE_G(e, g)
                pg += p[e] * g;
            }
            for (int64_t e = 0; e < E; e++) {
                MOE_G(e, g)
                dz[e] = (float)(p[e] * (g - pg));
            }
        } else {
            for (int64_t e = 0; e < E; e++) {
                MOE_G(e, g)
                dz[e] = (float)(g * p[e] * (1.0 - p[e]));
            }
        }
#undef MOE_G
    }
}

extern "C" int plc_cuda_moe_route_backward(float *dlogits, const float *dweight, const float *scores,
                                           const int32_t *expert, const float *choices, int64_t rows, int64_t E,
                                           int64_t k, int router, int64_t seq_rows, int64_t seq_full, float scale,
                                           float aux, void *stream)
{
    if (rows <= 0) return 0;
    if (E * (int64_t)sizeof(double) > 48 * 1024) return plc_cuda_fail(__func__, "too many experts for shared memory");
    moe_route_bwd_k<<<(unsigned)(rows / seq_rows), 128, (size_t)E * sizeof(double), plc_stream(stream)>>>(
        dlogits, dweight, scores, expert, choices, E, k, router, seq_rows, seq_full, scale, aux);
    return plc_cuda_check_launch(__func__);
}

/* one thread per (sequence, expert), its copies in order */
__global__ void moe_seq_counts_k(float *choices, const int32_t *expert, int64_t seqs, int64_t E, int64_t k,
                                 int64_t seq_rows)
{
    GRID_STRIDE(i, seqs * E)
    {
        int64_t b = i / E, e = i % E;
        float c = 0;
        for (int64_t j = b * seq_rows * k; j < (b + 1) * seq_rows * k; j++) c += expert[j] == (int32_t)e ? 1.0f : 0.0f;
        choices[i] = c;
    }
}

extern "C" int plc_cuda_moe_seq_counts(float *choices, const int32_t *expert, int64_t rows, int64_t E, int64_t k,
                                       int64_t seq_rows, void *stream)
{
    int64_t seqs = rows / seq_rows;
    if (seqs <= 0) return 0;
    moe_seq_counts_k<<<plc_blocks(seqs * E, MOE_THREADS), MOE_THREADS, 0, plc_stream(stream)>>>(choices, expert, seqs,
                                                                                              E, k, seq_rows);
    return plc_cuda_check_launch(__func__);
}

__global__ void moe_scatter_k(float *xp, const float *x, const int32_t *pos, int64_t n, int64_t h, int64_t k)
{
    GRID_STRIDE(i, n * h)
    {
        int64_t c = i % h, tj = i / h;
        if (pos[tj] >= 0) xp[(int64_t)pos[tj] * h + c] = x[(tj / k) * h + c];
    }
}

extern "C" int plc_cuda_moe_permute(float *xp, const float *x, const int32_t *pos, int64_t rows, int64_t h,
                                    int64_t k, int64_t prow, void *stream)
{
    cudaStream_t s = plc_stream(stream);
    cudaError_t e = cudaMemsetAsync(xp, 0, (size_t)(prow * h) * sizeof(float), s);
    if (e != cudaSuccess) return plc_cuda_fail("cudaMemsetAsync", cudaGetErrorString(e));
    if (rows <= 0) return 0;
    moe_scatter_k<<<plc_blocks(rows * k * h, MOE_THREADS), MOE_THREADS, 0, s>>>(xp, x, pos, rows * k, h, k);
    return plc_cuda_check_launch(__func__);
}

__global__ void moe_gather_k(float *out, const float *y, const int32_t *pos, const float *weight, int64_t rows,
                             int64_t h, int64_t k, int accumulate)
{
    GRID_STRIDE(i, rows * h)
    {
        int64_t c = i % h, t = i / h;
        float o = accumulate ? out[i] : 0.0f;
        for (int64_t j = 0; j < k; j++) {
            int32_t r = pos[t * k + j];
            if (r < 0) continue;
            float v = y[(int64_t)r * h + c];
            if (weight) o += weight[t * k + j] * v;
            else o += v;
        }
        out[i] = o;
    }
}

extern "C" int plc_cuda_moe_permute_backward(float *dx, const float *dxp, const int32_t *pos, int64_t rows,
                                             int64_t h, int64_t k, void *stream)
{
    if (rows <= 0) return 0;
    moe_gather_k<<<plc_blocks(rows * h, MOE_THREADS), MOE_THREADS, 0, plc_stream(stream)>>>(dx, dxp, pos, NULL,
                                                                                            rows, h, k, 1);
    return plc_cuda_check_launch(__func__);
}

extern "C" int plc_cuda_moe_unpermute(float *out, const float *y, const int32_t *pos, const float *weight,
                                      int64_t rows, int64_t h, int64_t k, void *stream)
{
    if (rows <= 0) return 0;
    moe_gather_k<<<plc_blocks(rows * h, MOE_THREADS), MOE_THREADS, 0, plc_stream(stream)>>>(out, y, pos, weight,
                                                                                            rows, h, k, 0);
    return plc_cuda_check_launch(__func__);
}

__global__ void moe_unpermute_bwd_k(float *dy, float *dweight, const float *dout, const float *y,
                                    const int32_t *pos, const float *weight, int64_t n, int64_t h, int64_t k)
{
    GRID_STRIDE(tj, n)
    {
        int32_t r = pos[tj];
        if (r < 0) {
            dweight[tj] = 0;
            continue;
        }
        const float *d = dout + (tj / k) * h;
        float w = weight[tj];
        double dot = 0;
        for (int64_t c = 0; c < h; c++) {
            dy[(int64_t)r * h + c] = w * d[c];
            dot += (double)d[c] * y[(int64_t)r * h + c];
        }
        dweight[tj] = (float)dot;
    }
}

extern "C" int plc_cuda_moe_unpermute_backward(float *dy, float *dweight, const float *dout, const float *y,
                                               const int32_t *pos, const float *weight, int64_t rows, int64_t h,
                                               int64_t k, int64_t prow, void *stream)
{
    cudaStream_t s = plc_stream(stream);
    cudaError_t e = cudaMemsetAsync(dy, 0, (size_t)(prow * h) * sizeof(float), s);
    if (e != cudaSuccess) return plc_cuda_fail("cudaMemsetAsync", cudaGetErrorString(e));
    if (rows <= 0) return 0;
    moe_unpermute_bwd_k<<<plc_blocks(rows * k, MOE_THREADS), MOE_THREADS, 0, s>>>(dy, dweight, dout, y, pos, weight,
                                                                                 rows * k, h, k);
    return plc_cuda_check_launch(__func__);
}

/* the rows of each expert, read back to the host */
static int host_counts(int32_t *host, const int32_t *counts, int64_t E, cudaStream_t s)
{
    cudaError_t e = cudaMemcpyAsync(host, counts, (size_t)E * sizeof *host, cudaMemcpyDeviceToHost, s);
    if (e == cudaSuccess) e = cudaStreamSynchronize(s);
    return e == cudaSuccess ? 0 : plc_cuda_fail("the experts' row counts", cudaGetErrorString(e));
}

extern "C" int plc_cuda_moe_matmul(plc_cuda_ctx *ctx, float *C, const float *A, const float *W,
                                   const int32_t *counts, int64_t E, int64_t prow, int64_t K, int64_t N, int transw,
                                   float beta, void *stream)
{
    int32_t *n = (int32_t *)malloc((size_t)(E > 0 ? E : 1) * sizeof *n);
    if (!n) return plc_cuda_fail(__func__, "out of host memory");
    int rc = host_counts(n, counts, E, plc_stream(stream));
    int64_t r = 0;
    for (int64_t e = 0; rc == 0 && e < E; e++) {
        if (n[e] > 0)
            rc = plc_cuda_matmul(ctx, C + r * N, PLC_CUDA_F32, A + r * K, W + e * K * N, PLC_CUDA_F32, n[e], N, K, 0,
                                 transw, 1.0f, beta, stream);
        r += n[e];
    }
    free(n);
    if (rc == 0 && beta == 0 && r < prow) {
        cudaError_t e = cudaMemsetAsync(C + r * N, 0, (size_t)((prow - r) * N) * sizeof(float), plc_stream(stream));
        if (e != cudaSuccess) return plc_cuda_fail("cudaMemsetAsync", cudaGetErrorString(e));
    }
    return rc;
}

extern "C" int plc_cuda_moe_matmul_dw(plc_cuda_ctx *ctx, float *dW, const float *A, const float *B,
                                      const int32_t *counts, int64_t E, int64_t K, int64_t N, void *stream)
{
    int32_t *n = (int32_t *)malloc((size_t)(E > 0 ? E : 1) * sizeof *n);
    if (!n) return plc_cuda_fail(__func__, "out of host memory");
    int rc = host_counts(n, counts, E, plc_stream(stream));
    int64_t r = 0;
    for (int64_t e = 0; rc == 0 && e < E; e++) {
        if (n[e] > 0)
            rc = plc_cuda_matmul(ctx, dW + e * K * N, PLC_CUDA_F32, A + r * K, B + r * N, PLC_CUDA_F32, K, N, n[e], 1,
                                 0, 1.0f, 1.0f, stream);
        r += n[e];
    }
    free(n);
    return rc;
}
