/* kernels/cuda/pos_embedding.cu: learned absolute position embeddings added
 * to the token embeddings. The backward gives each column one thread that,
 * for each time step in order, sums the sequences in order in double and
 * adds the sum to the step's row (the CPU kernel's order): no atomics, and
 * a position listed twice is still summed by one thread. */
#include "kernels/cuda/cuda_common.cuh"

#define THREADS 256
#define GRID_STRIDE(i, n) \
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < (n); i += (int64_t)gridDim.x * blockDim.x)

__device__ __forceinline__ int64_t position_of(const int32_t *positions, int64_t t)
{
    return positions ? (int64_t)positions[t] : t;
}

template <typename T>
__global__ void pos_fwd_k(T *out, const T *in, const T *table, const int32_t *positions, int64_t B, int64_t T_,
                          int64_t dim)
{
    GRID_STRIDE(e, B * T_ * dim)
    {
        int64_t c = e % dim, t = (e / dim) % T_;
        plc_st(&out[e], plc_ld(&in[e]) + plc_ld(&table[position_of(positions, t) * dim + c]));
    }
}

template <typename T>
__global__ void pos_bwd_k(float *dtable, const T *dout, const int32_t *positions, int64_t B, int64_t T_,
                          int64_t dim)
{
    GRID_STRIDE(c, dim)
    {
        for (int64_t t = 0; t < T_; t++) {
            double acc = 0;
            for (int64_t b = 0; b < B; b++) acc += (double)plc_ld(&dout[(b * T_ + t) * dim + c]);
            dtable[position_of(positions, t) * dim + c] += (float)acc;
        }
    }
}

extern "C" int plc_cuda_pos_embedding_forward(void *out, const void *in, const void *table, plc_cuda_dtype dt,
                                              const int32_t *positions, int64_t B, int64_t T, int64_t dim,
                                              void *stream)
{
    if (B * T * dim <= 0) return 0;
    PLC_DISPATCH(dt, S,
                 pos_fwd_k<S><<<plc_blocks(B * T * dim, THREADS), THREADS, 0, plc_stream(stream)>>>(
                     (S *)out, (const S *)in, (const S *)table, positions, B, T, dim));
    return plc_cuda_check_launch(__func__);
}

extern "C" int plc_cuda_pos_embedding_backward(float *dtable, const void *dout, plc_cuda_dtype dt,
                                               const int32_t *positions, int64_t B, int64_t T, int64_t dim,
                                               void *stream)
{
    if (B * T * dim <= 0) return 0;
    PLC_DISPATCH(dt, S,
                 pos_bwd_k<S><<<plc_blocks(dim, 64), 64, 0, plc_stream(stream)>>>(dtable, (const S *)dout,
                                                                                  positions, B, T, dim));
    return plc_cuda_check_launch(__func__);
}
