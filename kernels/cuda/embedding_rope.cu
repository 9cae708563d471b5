/* kernels/cuda/embedding_rope.cu: token embedding over a vocabulary shard
 * and RoPE (kernels/common/rope.h). */
#include "kernels/common/rope.h"
#include "kernels/cuda/cuda_common.cuh"

#define THREADS 256
#define GRID_STRIDE(i, n) \
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < (n); i += (int64_t)gridDim.x * blockDim.x)

template <typename T>
__global__ void embedding_fwd_k(T *out, const int32_t *tokens, const T *table, int64_t rows, int64_t dim,
                                int64_t vocab_start, int64_t vocab_local)
{
    GRID_STRIDE(e, rows * dim)
    {
        int64_t r = e / dim, c = e % dim, id = (int64_t)tokens[r] - vocab_start;
        plc_st(&out[e], (id >= 0 && id < vocab_local) ? plc_ld(&table[id * dim + c]) : 0.0f);
    }
}

/* one thread per column, rows in order: deterministic without atomics */
template <typename T>
__global__ void embedding_bwd_k(float *dtable, const T *dout, const int32_t *tokens, int64_t rows,
                                int64_t dim, int64_t vocab_start, int64_t vocab_local)
{
    GRID_STRIDE(c, dim)
    {
        for (int64_t r = 0; r < rows; r++) {
            int64_t id = (int64_t)tokens[r] - vocab_start;
            if (id >= 0 && id < vocab_local) dtable[id * dim + c] += plc_ld(&dout[r * dim + c]);
        }
    }
}

extern "C" int plc_cuda_embedding_forward(void *out, const int32_t *tokens, const void *table,
                                          plc_cuda_dtype dt, int64_t rows, int64_t dim,
                                          int64_t vocab_start, int64_t vocab_local, void *stream)
{
    if (rows * dim <= 0) return 0;
    PLC_DISPATCH(dt, T,
                 embedding_fwd_k<T><<<plc_blocks(rows * dim, THREADS), THREADS, 0, plc_stream(stream)>>>(
                     (T *)out, tokens, (const T *)table, rows, dim, vocab_start, vocab_local));
    return plc_cuda_check_launch(__func__);
}

extern "C" int plc_cuda_embedding_backward(float *dtable, const void *dout, plc_cuda_dtype dt,
                                           const int32_t *tokens, int64_t rows, int64_t dim,
                                           int64_t vocab_start, int64_t vocab_local, void *stream)
{
    if (rows * dim <= 0) return 0;
    PLC_DISPATCH(dt, T,
                 embedding_bwd_k<T><<<plc_blocks(dim, 64), 64, 0, plc_stream(stream)>>>(
                     dtable, (const T *)dout, tokens, rows, dim, vocab_start, vocab_local));
    return plc_cuda_check_launch(__func__);
}

/* one thread per pair (2i, 2i+1) of a head */
template <typename T>
__global__ void rope_k(T *out, const T *in, const int32_t *positions, int64_t B, int64_t T_, int64_t heads,
                       int64_t hd, float theta, int inverse)
{
    int64_t half = hd / 2;
    GRID_STRIDE(e, B * T_ * heads * half)
    {
        int64_t i = e % half, t = (e / (half * heads)) % T_;
        int32_t p = positions ? positions[t] : (int32_t)t;
        float c, s, y0, y1;
        plc_rope_cos_sin(p, i, hd, theta, &c, &s);
        float x0 = plc_ld(&in[2 * e]), x1 = plc_ld(&in[2 * e + 1]);
        if (inverse) {
            plc_rope_rotate_inverse(x0, x1, c, s, &y0, &y1);
            y0 += plc_ld(&out[2 * e]); /* backward accumulates */
            y1 += plc_ld(&out[2 * e + 1]);
        } else {
            plc_rope_rotate(x0, x1, c, s, &y0, &y1);
        }
        plc_st(&out[2 * e], y0);
        plc_st(&out[2 * e + 1], y1);
    }
}

static int rope_launch(void *out, const void *in, plc_cuda_dtype dt, const int32_t *positions, int64_t B,
                       int64_t T_, int64_t heads, int64_t hd, float theta, int inverse, void *stream)
{
    int64_t n = B * T_ * heads * (hd / 2);
    if (n <= 0) return 0;
    if (hd % 2) return plc_cuda_fail("rope", "head dimension must be even");
    PLC_DISPATCH(dt, T,
                 rope_k<T><<<plc_blocks(n, THREADS), THREADS, 0, plc_stream(stream)>>>(
                     (T *)out, (const T *)in, positions, B, T_, heads, hd, theta, inverse));
    return plc_cuda_check_launch("rope");
}

extern "C" int plc_cuda_rope_forward(void *out, const void *in, plc_cuda_dtype dt, const int32_t *positions,
                                     int64_t B, int64_t T, int64_t heads, int64_t hd, float theta,
                                     void *stream)
{
    return rope_launch(out, in, dt, positions, B, T, heads, hd, theta, 0, stream);
}

extern "C" int plc_cuda_rope_backward(void *din, const void *dout, plc_cuda_dtype dt,
                                      const int32_t *positions, int64_t B, int64_t T, int64_t heads,
                                      int64_t hd, float theta, void *stream)
{
    return rope_launch(din, dout, dt, positions, B, T, heads, hd, theta, 1, stream);
}
