/* kernels/cuda/flash_attention_tc.cu: causal GQA flash attention for bf16
 * on tensor cores (WMMA, sm_80 and later), head dimension 64 or 128.
 *
 * The same algorithm as flash_attention.cu, in tiles of 64 queries by 64
 * keys, with the four warps of a block each owning 16 rows:
 *
 *   forward   S = Q K^T, online softmax, O += P V; saves the log-sum-exp;
 *   dk, dv    a block per (b, kv head, 64 keys) over the group's heads and
 *             the query tiles in order: S^T = K Q^T, dP^T = V dO^T,
 *             dV += P^T dO, dK += dS^T Q;
 *   dq        a block per (b, head, 64 queries) over the key tiles in
 *             order: S, dP = dO V^T, dQ += dS K.
 *
 * Products take bf16 operands and add in fp32. Q, K, V and dO are bf16
 * already, so Q K^T and dO V^T are exact products added in fp32, as the
 * CPU reference adds them. P and dS are fp32; each is split into a bf16
 * head and a bf16 remainder (p = hi + lo to about 2^-17 relative) and
 * multiplied twice, so the results stay close to the fp32 reference
 * instead of carrying bf16 probabilities (tests/unit/test_kernels_cuda.c
 * holds them to it). Every output element is added in a fixed order and
 * written by one warp: no atomics, the same bits on every run. */
#include <cuda_bf16.h>
#include <mma.h>

#include "kernels/common/reduce.h"
#include "kernels/cuda/attention_shape.cuh"
#include "kernels/cuda/cuda_common.cuh"
#include "kernels/cuda/flash_attention_tc.cuh"

using namespace nvcuda;
typedef __nv_bfloat16 bf16;

#define TC_ROWS 64     /* queries (or keys) a block owns; 16 per warp */
#define TC_COLS 64     /* keys (or queries) of the tile walked */
#define TC_WARPS 4
#define TC_THREADS (TC_WARPS * 32)
#define TC_SLD (TC_COLS + 4) /* fp32 score tiles' row stride */
#define TC_PLD (TC_COLS + 8) /* bf16 probability tiles' row stride */

typedef wmma::fragment<wmma::matrix_a, 16, 16, 16, bf16, wmma::row_major> frag_a;
typedef wmma::fragment<wmma::matrix_b, 16, 16, 16, bf16, wmma::row_major> frag_b_row;
typedef wmma::fragment<wmma::matrix_b, 16, 16, 16, bf16, wmma::col_major> frag_b_col;
typedef wmma::fragment<wmma::accumulator, 16, 16, 16, float> frag_c;

template <int HD> struct tc_layout {
    static const int LD = HD + 8; /* bf16 row tiles' row stride */
    static const int OLD = HD + 4; /* fp32 output tiles' row stride */
    static const size_t ROWS = (size_t)TC_ROWS * LD * sizeof(bf16);
    static const size_t SCORES = (size_t)TC_ROWS * TC_SLD * sizeof(float);
    static const size_t PROBS = (size_t)TC_ROWS * TC_PLD * sizeof(bf16);
    static const size_t OUT = (size_t)TC_ROWS * OLD * sizeof(float);
    static const size_t VEC = (size_t)TC_ROWS * sizeof(float);
    /* forward: Q K V, S, P (hi, lo), O, the rescale factors */
    static const size_t FWD = 3 * ROWS + SCORES + 2 * PROBS + OUT + VEC;
    /* backward: four row tiles, S and dP (also the staging of the result),
     * four probability tiles (P hi/lo, dS hi/lo), L and D */
    static const size_t BWD = 4 * ROWS + 2 * SCORES + 4 * PROBS + 2 * VEC;
};

/* One tile of `TC_ROWS` rows of a [B, T, heads, HD] bf16 tensor into shared
 * memory, 16 bytes at a time; rows at or past `limit` are zero. */
template <int HD>
__device__ void tc_load(bf16 *dst, const uint16_t *src, const attn_dims &s, int64_t b, int64_t r0, int64_t limit,
                        int64_t head, bool is_q)
{
    const int chunks = HD / 8;
    for (int e = threadIdx.x; e < TC_ROWS * chunks; e += blockDim.x) {
        int r = e / chunks, c = e % chunks;
        int64_t t = r0 + r;
        uint4 x = make_uint4(0, 0, 0, 0);
        if (t < limit) x = *(const uint4 *)(src + (is_q ? attn_q_off(s, b, t, head) : attn_kv_off(s, b, t, head)) + c * 8);
        *(uint4 *)(dst + r * tc_layout<HD>::LD + c * 8) = x;
    }
}

/* dst (16 x 64, fp32, stride TC_SLD) = A (16 x HD rows) times B^T, B given
 * as 64 rows of HD: the warp's scores against a tile. */
template <int HD>
__device__ void tc_abt(float *dst, const bf16 *a, const bf16 *b)
{
    const int LD = tc_layout<HD>::LD;
#pragma unroll
    for (int n = 0; n < TC_COLS / 16; n++) {
        frag_c acc;
        wmma::fill_fragment(acc, 0.0f);
#pragma unroll
        for (int k = 0; k < HD / 16; k++) {
            frag_a fa;
            frag_b_col fb;
            wmma::load_matrix_sync(fa, a + k * 16, LD);
            wmma::load_matrix_sync(fb, b + n * 16 * LD + k * 16, LD);
            wmma::mma_sync(acc, fa, fb, acc);
        }
        wmma::store_matrix_sync(dst + n * 16, acc, TC_SLD, wmma::mem_row_major);
    }
}

/* acc[d] (16 x HD) += P (16 x 64, hi and lo parts) times B (64 rows of HD) */
template <int HD>
__device__ void tc_pb(frag_c *acc, const bf16 *p_hi, const bf16 *p_lo, const bf16 *b)
{
    const int LD = tc_layout<HD>::LD;
#pragma unroll
    for (int k = 0; k < TC_COLS / 16; k++) {
        frag_a hi, lo;
        wmma::load_matrix_sync(hi, p_hi + k * 16, TC_PLD);
        wmma::load_matrix_sync(lo, p_lo + k * 16, TC_PLD);
#pragma unroll
        for (int d = 0; d < HD / 16; d++) {
            frag_b_row fb;
            wmma::load_matrix_sync(fb, b + k * 16 * LD + d * 16, LD);
            wmma::mma_sync(acc[d], hi, fb, acc[d]);
            wmma::mma_sync(acc[d], lo, fb, acc[d]);
        }
    }
}

__device__ __forceinline__ void tc_split(bf16 *hi, bf16 *lo, float x)
{
    bf16 h = __float2bfloat16_rn(x);
    *hi = h;
    *lo = __float2bfloat16_rn(x - __bfloat162float(h));
}

/* fragments (16 x HD) through the warp's staging rows into a [B, T, heads,
 * HD] tensor: dst += scale * acc */
template <int HD>
__device__ void tc_add_out(uint16_t *dst, frag_c *acc, float *stage, float scale, const attn_dims &s, int64_t b,
                           int64_t r0, int64_t limit, int64_t head, bool is_q)
{
    const int OLD = tc_layout<HD>::OLD;
    int lane = threadIdx.x % 32;
#pragma unroll
    for (int d = 0; d < HD / 16; d++) wmma::store_matrix_sync(stage + d * 16, acc[d], OLD, wmma::mem_row_major);
    __syncwarp();
    for (int e = lane; e < 16 * HD; e += 32) {
        int r = e / HD, d = e % HD;
        int64_t t = r0 + r;
        if (t >= limit) continue;
        uint16_t *p = dst + (is_q ? attn_q_off(s, b, t, head) : attn_kv_off(s, b, t, head)) + d;
        plc_st(p, plc_ld(p) + scale * stage[r * OLD + d]);
    }
    __syncwarp();
}

template <int HD>
__global__ void __launch_bounds__(TC_THREADS) tc_fwd_k(uint16_t *out, float *lse, const uint16_t *q,
                                                       const uint16_t *k, const uint16_t *v, attn_dims s)
{
    typedef tc_layout<HD> L;
    extern __shared__ __align__(128) unsigned char smem[];
    bf16 *qs = (bf16 *)smem, *ks = (bf16 *)(smem + L::ROWS), *vs = (bf16 *)(smem + 2 * L::ROWS);
    float *S = (float *)(smem + 3 * L::ROWS);
    bf16 *ph = (bf16 *)((unsigned char *)S + L::SCORES), *pl = (bf16 *)((unsigned char *)ph + L::PROBS);
    float *O = (float *)((unsigned char *)pl + L::PROBS), *corr = (float *)((unsigned char *)O + L::OUT);

    int64_t qtiles = (s.Tq + TC_ROWS - 1) / TC_ROWS;
    int64_t qt = blockIdx.x % qtiles, h = (blockIdx.x / qtiles) % s.H, b = blockIdx.x / (qtiles * s.H);
    int64_t kvh = h / s.group, i0 = qt * TC_ROWS;
    int64_t i_last = (i0 + TC_ROWS < s.Tq ? i0 + TC_ROWS : s.Tq) - 1;
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32, w0 = warp * 16;
    int r = lane >> 1, half = lane & 1, row = w0 + r; /* softmax: two lanes a row */
    int64_t i = i0 + row;

    tc_load<HD>(qs, q, s, b, i0, s.Tq, h, true);
    for (int e = threadIdx.x; e < TC_ROWS * L::OLD; e += blockDim.x) O[e] = 0.0f;
    float m = -INFINITY, l = 0.0f;

    for (int64_t j0 = 0; j0 < s.Tk; j0 += TC_COLS) {
        if (tile_all_masked(s, i_last, j0)) break;
        __syncthreads(); /* the previous tile fully used */
        tc_load<HD>(ks, k, s, b, j0, s.Tk, kvh, false);
        tc_load<HD>(vs, v, s, b, j0, s.Tk, kvh, false);
        __syncthreads();
        tc_abt<HD>(S + w0 * TC_SLD, qs + w0 * L::LD, ks);
        __syncwarp();

        float x[32], tmax = -INFINITY;
        const float *srow = S + row * TC_SLD + half * 32;
#pragma unroll
        for (int t = 0; t < 32; t++) {
            int64_t j = j0 + half * 32 + t;
            x[t] = (i < s.Tq && j < s.Tk && attn_visible(s, i, j)) ? srow[t] * s.scale : -INFINITY;
            tmax = fmaxf(tmax, x[t]);
        }
        tmax = fmaxf(tmax, __shfl_xor_sync(0xffffffffu, tmax, 1));
        float mnew = fmaxf(m, tmax), c = 1.0f, sum = 0.0f;
        if (mnew != -INFINITY) c = plc_online_rescale(m, mnew);
        bf16 *hrow = ph + row * TC_PLD + half * 32, *lrow = pl + row * TC_PLD + half * 32;
#pragma unroll
        for (int t = 0; t < 32; t++) {
            float p = mnew == -INFINITY ? 0.0f : plc_exp_shifted(x[t], mnew);
            sum += p;
            tc_split(&hrow[t], &lrow[t], p);
        }
        sum += __shfl_xor_sync(0xffffffffu, sum, 1);
        l = l * c + sum;
        m = mnew;
        if (!half) corr[row] = c;
        __syncwarp();
        for (int e = lane; e < 16 * HD; e += 32) O[(w0 + e / HD) * L::OLD + e % HD] *= corr[w0 + e / HD];
        __syncwarp();

        frag_c acc[HD / 16];
#pragma unroll
        for (int d = 0; d < HD / 16; d++)
            wmma::load_matrix_sync(acc[d], O + w0 * L::OLD + d * 16, L::OLD, wmma::mem_row_major);
        tc_pb<HD>(acc, ph + w0 * TC_PLD, pl + w0 * TC_PLD, vs);
#pragma unroll
        for (int d = 0; d < HD / 16; d++)
            wmma::store_matrix_sync(O + w0 * L::OLD + d * 16, acc[d], L::OLD, wmma::mem_row_major);
        __syncwarp();
    }
    if (!half) corr[row] = l; /* the row sums, for the lanes that write */
    __syncwarp();
    for (int e = lane; e < 16 * HD; e += 32) {
        int rr = e / HD, d = e % HD;
        int64_t ii = i0 + w0 + rr;
        if (ii >= s.Tq) continue;
        float ll = corr[w0 + rr];
        plc_st(&out[attn_q_off(s, b, ii, h) + d], ll > 0.0f ? O[(w0 + rr) * L::OLD + d] / ll : 0.0f);
    }
    if (!half && i < s.Tq) lse[(b * s.H + h) * s.Tq + i] = l > 0.0f ? m + logf(l) : -INFINITY;
}

/* The log-sum-exp and D = rowsum(dO * O) of TC_ROWS queries of head h
 * (dO already in shared memory); padded rows get -inf and 0. A warp takes
 * a row at a time, its lanes reading along it, summed by a fixed
 * butterfly: every lane ends with the same bits. */
template <int HD>
__device__ void tc_lse_d(float *Ls, float *Ds, const bf16 *gs, const float *lse, const uint16_t *out,
                         const attn_dims &s, int64_t b, int64_t h, int64_t i0)
{
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    for (int r = warp; r < TC_ROWS; r += TC_WARPS) {
        int64_t i = i0 + r;
        float dd = 0.0f;
        if (i < s.Tq) {
            const uint16_t *o = out + attn_q_off(s, b, i, h);
            for (int d = lane; d < HD; d += 32) dd += __bfloat162float(gs[r * tc_layout<HD>::LD + d]) * plc_ld(&o[d]);
        }
        for (int m = 16; m > 0; m >>= 1) dd += __shfl_xor_sync(0xffffffffu, dd, m);
        if (lane == 0) {
            Ls[r] = i < s.Tq ? lse[(b * s.H + h) * s.Tq + i] : -INFINITY;
            Ds[r] = dd;
        }
    }
}

/* p and dS of one (query i, key j) pair from its score and dP */
__device__ __forceinline__ float tc_pair(const attn_dims &s, int64_t i, int64_t j, float score, float dp, float L,
                                         float D, float *p_out)
{
    float p = 0.0f;
    if (i < s.Tq && j < s.Tk && L != -INFINITY && attn_visible(s, i, j)) p = expf(score * s.scale - L);
    *p_out = p;
    return p * (dp - D);
}

template <int HD>
__global__ void __launch_bounds__(TC_THREADS) tc_bwd_dq_k(uint16_t *dq, const uint16_t *dout, const uint16_t *q,
                                                          const uint16_t *k, const uint16_t *v,
                                                          const uint16_t *out, const float *lse, attn_dims s)
{
    typedef tc_layout<HD> L;
    extern __shared__ __align__(128) unsigned char smem[];
    bf16 *qs = (bf16 *)smem, *gs = (bf16 *)(smem + L::ROWS), *ks = (bf16 *)(smem + 2 * L::ROWS),
         *vs = (bf16 *)(smem + 3 * L::ROWS);
    float *S = (float *)(smem + 4 * L::ROWS), *dP = (float *)((unsigned char *)S + L::SCORES);
    bf16 *dsh = (bf16 *)((unsigned char *)dP + L::SCORES), *dsl = (bf16 *)((unsigned char *)dsh + L::PROBS);
    float *Ls = (float *)(smem + L::BWD - 2 * L::VEC), *Ds = Ls + TC_ROWS; /* (two probability tiles unused) */

    int64_t qtiles = (s.Tq + TC_ROWS - 1) / TC_ROWS;
    int64_t qt = blockIdx.x % qtiles, h = (blockIdx.x / qtiles) % s.H, b = blockIdx.x / (qtiles * s.H);
    int64_t kvh = h / s.group, i0 = qt * TC_ROWS;
    int64_t i_last = (i0 + TC_ROWS < s.Tq ? i0 + TC_ROWS : s.Tq) - 1;
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32, w0 = warp * 16;
    int r = lane >> 1, half = lane & 1, row = w0 + r;
    int64_t i = i0 + row;

    tc_load<HD>(qs, q, s, b, i0, s.Tq, h, true);
    tc_load<HD>(gs, dout, s, b, i0, s.Tq, h, true);
    __syncthreads();
    tc_lse_d<HD>(Ls, Ds, gs, lse, out, s, b, h, i0);
    frag_c acc[HD / 16];
#pragma unroll
    for (int d = 0; d < HD / 16; d++) wmma::fill_fragment(acc[d], 0.0f);

    for (int64_t j0 = 0; j0 < s.Tk; j0 += TC_COLS) {
        if (tile_all_masked(s, i_last, j0)) break;
        __syncthreads();
        tc_load<HD>(ks, k, s, b, j0, s.Tk, kvh, false);
        tc_load<HD>(vs, v, s, b, j0, s.Tk, kvh, false);
        __syncthreads();
        tc_abt<HD>(S + w0 * TC_SLD, qs + w0 * L::LD, ks);
        tc_abt<HD>(dP + w0 * TC_SLD, gs + w0 * L::LD, vs);
        __syncwarp();
        float Lr = Ls[row], Dr = Ds[row];
#pragma unroll 8
        for (int t = 0; t < 32; t++) {
            int c = half * 32 + t;
            float p, ds = tc_pair(s, i, j0 + c, S[row * TC_SLD + c], dP[row * TC_SLD + c], Lr, Dr, &p);
            tc_split(&dsh[row * TC_PLD + c], &dsl[row * TC_PLD + c], ds);
        }
        __syncwarp();
        tc_pb<HD>(acc, dsh + w0 * TC_PLD, dsl + w0 * TC_PLD, ks);
    }
    __syncthreads(); /* S and dP become the staging rows */
    tc_add_out<HD>(dq, acc, S + w0 * L::OLD, s.scale, s, b, i0 + w0, s.Tq, h, true);
}

template <int HD>
__global__ void __launch_bounds__(TC_THREADS) tc_bwd_dkdv_k(uint16_t *dk, uint16_t *dv, const uint16_t *dout,
                                                            const uint16_t *q, const uint16_t *k,
                                                            const uint16_t *v, const uint16_t *out,
                                                            const float *lse, attn_dims s)
{
    typedef tc_layout<HD> L;
    extern __shared__ __align__(128) unsigned char smem[];
    bf16 *ks = (bf16 *)smem, *vs = (bf16 *)(smem + L::ROWS), *qs = (bf16 *)(smem + 2 * L::ROWS),
         *gs = (bf16 *)(smem + 3 * L::ROWS);
    float *St = (float *)(smem + 4 * L::ROWS), *dPt = (float *)((unsigned char *)St + L::SCORES);
    bf16 *ph = (bf16 *)((unsigned char *)dPt + L::SCORES), *pl = (bf16 *)((unsigned char *)ph + L::PROBS);
    bf16 *dsh = (bf16 *)((unsigned char *)pl + L::PROBS), *dsl = (bf16 *)((unsigned char *)dsh + L::PROBS);
    float *Ls = (float *)(smem + L::BWD - 2 * L::VEC), *Ds = Ls + TC_ROWS;

    int64_t ktiles = (s.Tk + TC_ROWS - 1) / TC_ROWS;
    int64_t kt = blockIdx.x % ktiles, kvh = (blockIdx.x / ktiles) % s.Hkv, b = blockIdx.x / (ktiles * s.Hkv);
    int64_t j0 = kt * TC_ROWS;
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32, w0 = warp * 16;
    int r = lane >> 1, half = lane & 1, row = w0 + r; /* a key row of the warp */
    int64_t j = j0 + row;

    tc_load<HD>(ks, k, s, b, j0, s.Tk, kvh, false);
    tc_load<HD>(vs, v, s, b, j0, s.Tk, kvh, false);
    frag_c adk[HD / 16], adv[HD / 16];
#pragma unroll
    for (int d = 0; d < HD / 16; d++) wmma::fill_fragment(adk[d], 0.0f), wmma::fill_fragment(adv[d], 0.0f);

    for (int64_t h = kvh * s.group; h < (kvh + 1) * s.group; h++)
        for (int64_t i0 = 0; i0 < s.Tq; i0 += TC_COLS) {
            int64_t i_last = (i0 + TC_COLS < s.Tq ? i0 + TC_COLS : s.Tq) - 1;
            if (tile_all_masked(s, i_last, j0)) continue;
            __syncthreads();
            tc_load<HD>(qs, q, s, b, i0, s.Tq, h, true);
            tc_load<HD>(gs, dout, s, b, i0, s.Tq, h, true);
            __syncthreads();
            tc_lse_d<HD>(Ls, Ds, gs, lse, out, s, b, h, i0);
            __syncthreads();
            tc_abt<HD>(St + w0 * TC_SLD, ks + w0 * L::LD, qs);  /* S^T: the warp's keys against the queries */
            tc_abt<HD>(dPt + w0 * TC_SLD, vs + w0 * L::LD, gs); /* dP^T = V dO^T */
            __syncwarp();
#pragma unroll 8
            for (int t = 0; t < 32; t++) {
                int c = half * 32 + t;
                float p, ds = tc_pair(s, i0 + c, j, St[row * TC_SLD + c], dPt[row * TC_SLD + c], Ls[c], Ds[c], &p);
                tc_split(&ph[row * TC_PLD + c], &pl[row * TC_PLD + c], p);
                tc_split(&dsh[row * TC_PLD + c], &dsl[row * TC_PLD + c], ds);
            }
            __syncwarp();
            tc_pb<HD>(adv, ph + w0 * TC_PLD, pl + w0 * TC_PLD, gs); /* dV += P^T dO */
            tc_pb<HD>(adk, dsh + w0 * TC_PLD, dsl + w0 * TC_PLD, qs); /* dK += dS^T Q */
        }
    __syncthreads(); /* St and dPt become the staging rows */
    tc_add_out<HD>(dk, adk, St + w0 * L::OLD, s.scale, s, b, j0 + w0, s.Tk, kvh, false);
    tc_add_out<HD>(dv, adv, St + w0 * L::OLD, 1.0f, s, b, j0 + w0, s.Tk, kvh, false);
}

static bool aligned16(const void *p) { return ((uintptr_t)p & 15u) == 0; }

extern "C" bool plc_cuda_flash_tc_applies(plc_cuda_dtype dt, int64_t hd, const void *const *ptrs, int n)
{
    if (dt != PLC_CUDA_BF16 || (hd != 64 && hd != 128)) return false;
    for (int a = 0; a < n; a++)
        if (!aligned16(ptrs[a])) return false;
    return true;
}

/* a kernel's dynamic shared memory beyond the default 48 KiB, set once */
template <typename K> static int tc_smem(K kernel, size_t bytes)
{
    if (cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes) != cudaSuccess)
        return plc_cuda_fail("flash attention (tensor cores)", cudaGetErrorString(cudaGetLastError()));
    return 0;
}

template <int HD>
static int tc_forward(uint16_t *out, float *lse, const uint16_t *q, const uint16_t *k, const uint16_t *v,
                      const attn_dims &s, cudaStream_t st)
{
    int64_t blocks = s.B * s.H * ((s.Tq + TC_ROWS - 1) / TC_ROWS);
    if (blocks > 2147483647) return plc_cuda_fail("flash attention (tensor cores)", "grid too large");
    if (tc_smem(tc_fwd_k<HD>, tc_layout<HD>::FWD)) return -1;
    tc_fwd_k<HD><<<(unsigned)blocks, TC_THREADS, tc_layout<HD>::FWD, st>>>(out, lse, q, k, v, s);
    return plc_cuda_check_launch("flash attention forward (tensor cores)");
}

template <int HD>
static int tc_backward(uint16_t *dq, uint16_t *dk, uint16_t *dv, const uint16_t *dout, const uint16_t *q,
                       const uint16_t *k, const uint16_t *v, const uint16_t *out, const float *lse,
                       const attn_dims &s, cudaStream_t st)
{
    int64_t qblocks = s.B * s.H * ((s.Tq + TC_ROWS - 1) / TC_ROWS);
    int64_t kblocks = s.B * s.Hkv * ((s.Tk + TC_ROWS - 1) / TC_ROWS);
    if (qblocks > 2147483647 || kblocks > 2147483647)
        return plc_cuda_fail("flash attention (tensor cores)", "grid too large");
    if (tc_smem(tc_bwd_dq_k<HD>, tc_layout<HD>::BWD) || tc_smem(tc_bwd_dkdv_k<HD>, tc_layout<HD>::BWD)) return -1;
    tc_bwd_dq_k<HD><<<(unsigned)qblocks, TC_THREADS, tc_layout<HD>::BWD, st>>>(dq, dout, q, k, v, out, lse, s);
    tc_bwd_dkdv_k<HD><<<(unsigned)kblocks, TC_THREADS, tc_layout<HD>::BWD, st>>>(dk, dv, dout, q, k, v, out, lse,
                                                                                   s);
    return plc_cuda_check_launch("flash attention backward (tensor cores)");
}

extern "C" int plc_cuda_flash_tc_forward(void *out, float *lse, const void *q, const void *k, const void *v,
                                         const int32_t *q_pos, const int32_t *k_pos, int64_t B, int64_t Tq,
                                         int64_t Tk, int64_t H, int64_t Hkv, int64_t hd, void *stream)
{
    attn_dims s = attn_dims_make(B, Tq, Tk, H, Hkv, hd, q_pos, k_pos);
    if (hd == 64)
        return tc_forward<64>((uint16_t *)out, lse, (const uint16_t *)q, (const uint16_t *)k, (const uint16_t *)v, s,
                              plc_stream(stream));
    return tc_forward<128>((uint16_t *)out, lse, (const uint16_t *)q, (const uint16_t *)k, (const uint16_t *)v, s,
                           plc_stream(stream));
}

extern "C" int plc_cuda_flash_tc_backward(void *dq, void *dk, void *dv, const void *dout, const void *q,
                                          const void *k, const void *v, const void *out, const float *lse,
                                          const int32_t *q_pos, const int32_t *k_pos, int64_t B, int64_t Tq,
                                          int64_t Tk, int64_t H, int64_t Hkv, int64_t hd, void *stream)
{
    attn_dims s = attn_dims_make(B, Tq, Tk, H, Hkv, hd, q_pos, k_pos);
#define TC_BWD_ARGS                                                                                          \
    (uint16_t *)dq, (uint16_t *)dk, (uint16_t *)dv, (const uint16_t *)dout, (const uint16_t *)q,               \
        (const uint16_t *)k, (const uint16_t *)v, (const uint16_t *)out, lse, s, plc_stream(stream)
    if (hd == 64) return tc_backward<64>(TC_BWD_ARGS);
    return tc_backward<128>(TC_BWD_ARGS);
#undef TC_BWD_ARGS
}
