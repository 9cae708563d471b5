/* kernels/cuda/flash_attention.cu: causal GQA attention, tiled flash-style.
 *
 * Forward: a block per (b, h, tile of FA_QT queries) walks tiles of FA_KT
 * keys held in shared memory with an online softmax; it saves only the
 * log-sum-exp per query. Backward: dq by (b, h, query tile) over key tiles;
 * dk and dv by (b, kv head, key tile) over the group's heads and the query
 * tiles in order. Each thread owns fixed output elements and adds its terms
 * in a fixed order: no atomics, the same bits on every run.
 *
 * These are the fp32 kernels and the fallback: bf16 with head dimension 64
 * or 128 runs on tensor cores (flash_attention_tc.cu). */
#include "kernels/common/reduce.h"
#include "kernels/cuda/attention_shape.cuh"
#include "kernels/cuda/cuda_common.cuh"
#include "kernels/cuda/flash_attention_tc.cuh"

#define FA_QT 16       /* queries per tile */
#define FA_KT 16       /* keys per tile */
#define FA_THREADS 128
#define FA_PER_THREAD (FA_QT * PLC_CUDA_MAX_HEAD_DIM / FA_THREADS) /* owned (row, d) elements */

template <typename T>
__device__ void load_rows(float *dst, const T *src, const attn_dims &s, int64_t b, int64_t r0, int64_t nrows,
                          int64_t limit, int64_t head, bool is_q)
{
    for (int64_t e = threadIdx.x; e < nrows * s.hd; e += blockDim.x) {
        int64_t r = e / s.hd, d = e % s.hd, t = r0 + r;
        float x = 0.0f;
        if (t < limit) x = plc_ld(&src[(is_q ? attn_q_off(s, b, t, head) : attn_kv_off(s, b, t, head)) + d]);
        dst[e] = x;
    }
}

__device__ __forceinline__ float row_dot(const float *a, const float *b, int64_t n)
{
    float acc = 0;
    for (int64_t d = 0; d < n; d++) acc += a[d] * b[d];
    return acc;
}

template <typename T>
__global__ void flash_fwd_k(T *out, float *lse, const T *q, const T *k, const T *v, attn_dims s)
{
    extern __shared__ float sm[];
    float *qs = sm, *ks = qs + FA_QT * s.hd, *vs = ks + FA_KT * s.hd;
    float *S = vs + FA_KT * s.hd;          /* [FA_QT][FA_KT + 1] */
    float *m = S + FA_QT * (FA_KT + 1), *l = m + FA_QT, *corr = l + FA_QT;
    int64_t qtiles = (s.Tq + FA_QT - 1) / FA_QT;
    int64_t qt = blockIdx.x % qtiles, h = (blockIdx.x / qtiles) % s.H, b = blockIdx.x / (qtiles * s.H);
    int64_t kvh = h / s.group, i0 = qt * FA_QT;
    int64_t i_last = (i0 + FA_QT < s.Tq ? i0 + FA_QT : s.Tq) - 1;

    load_rows(qs, q, s, b, i0, FA_QT, s.Tq, h, true);
    if (threadIdx.x < FA_QT) m[threadIdx.x] = -INFINITY, l[threadIdx.x] = 0.0f;
    float acc[FA_PER_THREAD];
    for (int a = 0; a < FA_PER_THREAD; a++) acc[a] = 0.0f;

    for (int64_t j0 = 0; j0 < s.Tk; j0 += FA_KT) {
        if (tile_all_masked(s, i_last, j0)) break;
        __syncthreads(); /* previous tile fully used */
        load_rows(ks, k, s, b, j0, FA_KT, s.Tk, kvh, false);
        load_rows(vs, v, s, b, j0, FA_KT, s.Tk, kvh, false);
        __syncthreads();
        for (int e = threadIdx.x; e < FA_QT * FA_KT; e += blockDim.x) {
            int r = e / FA_KT, c = e % FA_KT;
            int64_t i = i0 + r, j = j0 + c;
            float sc = -INFINITY;
            if (i < s.Tq && j < s.Tk && attn_visible(s, i, j)) sc = row_dot(qs + r * s.hd, ks + c * s.hd, s.hd) * s.scale;
            S[r * (FA_KT + 1) + c] = sc;
        }
        __syncthreads();
        if (threadIdx.x < FA_QT) { /* online softmax, one row per thread */
            int r = threadIdx.x;
            float *row = S + r * (FA_KT + 1), tmax = -INFINITY;
            for (int c = 0; c < FA_KT; c++) tmax = fmaxf(tmax, row[c]);
            if (tmax == -INFINITY) {
                for (int c = 0; c < FA_KT; c++) row[c] = 0.0f;
                corr[r] = 1.0f;
            } else {
                float mnew = fmaxf(m[r], tmax), cr = plc_online_rescale(m[r], mnew), sum = 0;
                for (int c = 0; c < FA_KT; c++) {
                    row[c] = plc_exp_shifted(row[c], mnew);
                    sum += row[c];
                }
                l[r] = l[r] * cr + sum;
                m[r] = mnew;
                corr[r] = cr;
            }
        }
        __syncthreads();
        for (int a = 0; a < FA_PER_THREAD; a++) {
            int64_t e = threadIdx.x + (int64_t)a * FA_THREADS;
            if (e >= FA_QT * s.hd) break;
            int64_t r = e / s.hd, d = e % s.hd;
            float x = acc[a] * corr[r];
            for (int c = 0; c < FA_KT; c++) x += S[r * (FA_KT + 1) + c] * vs[c * s.hd + d];
            acc[a] = x;
        }
    }
    __syncthreads();
    for (int a = 0; a < FA_PER_THREAD; a++) {
        int64_t e = threadIdx.x + (int64_t)a * FA_THREADS;
        if (e >= FA_QT * s.hd) break;
        int64_t r = e / s.hd, d = e % s.hd, i = i0 + r;
        if (i >= s.Tq) continue;
        plc_st(&out[attn_q_off(s, b, i, h) + d], l[r] > 0.0f ? acc[a] / l[r] : 0.0f);
    }
    if (threadIdx.x < FA_QT && i0 + threadIdx.x < s.Tq) {
        int r = threadIdx.x;
        lse[(b * s.H + h) * s.Tq + i0 + r] = l[r] > 0.0f ? m[r] + logf(l[r]) : -INFINITY;
    }
}

/* dS for one (query, key) pair; 0 where masked or padded */
__device__ __forceinline__ float pair_ds(const attn_dims &s, const float *qr, const float *gr, const float *kr,
                                         const float *vr, float L, float D, int64_t i, int64_t j, float *p_out)
{
    *p_out = 0.0f;
    if (i >= s.Tq || j >= s.Tk || L == -INFINITY || !attn_visible(s, i, j)) return 0.0f;
    float p = expf(row_dot(qr, kr, s.hd) * s.scale - L);
    *p_out = p;
    return p * (row_dot(gr, vr, s.hd) - D);
}

template <typename T>
__device__ void load_lse_D(float *L, float *D, const float *gs, const float *lse, const T *out, const attn_dims &s,
                           int64_t b, int64_t h, int64_t i0)
{
    if (threadIdx.x < FA_QT) {
        int r = threadIdx.x;
        int64_t i = i0 + r;
        float dd = 0, ll = -INFINITY;
        if (i < s.Tq) {
            ll = lse[(b * s.H + h) * s.Tq + i];
            const T *o = out + attn_q_off(s, b, i, h);
            for (int64_t d = 0; d < s.hd; d++) dd += gs[r * s.hd + d] * plc_ld(&o[d]);
        }
        L[r] = ll;
        D[r] = dd;
    }
}

template <typename T>
__global__ void flash_bwd_dq_k(T *dq, const T *dout, const T *q, const T *k, const T *v, const T *out,
                               const float *lse, attn_dims s)
{
    extern __shared__ float sm[];
    float *qs = sm, *gs = qs + FA_QT * s.hd, *ks = gs + FA_QT * s.hd, *vs = ks + FA_KT * s.hd;
    float *dS = vs + FA_KT * s.hd, *L = dS + FA_QT * (FA_KT + 1), *D = L + FA_QT;
    int64_t qtiles = (s.Tq + FA_QT - 1) / FA_QT;
    int64_t qt = blockIdx.x % qtiles, h = (blockIdx.x / qtiles) % s.H, b = blockIdx.x / (qtiles * s.H);
    int64_t kvh = h / s.group, i0 = qt * FA_QT;
    int64_t i_last = (i0 + FA_QT < s.Tq ? i0 + FA_QT : s.Tq) - 1;

    load_rows(qs, q, s, b, i0, FA_QT, s.Tq, h, true);
    load_rows(gs, dout, s, b, i0, FA_QT, s.Tq, h, true);
    __syncthreads();
    load_lse_D(L, D, gs, lse, out, s, b, h, i0);
    float acc[FA_PER_THREAD];
    for (int a = 0; a < FA_PER_THREAD; a++) acc[a] = 0.0f;

    for (int64_t j0 = 0; j0 < s.Tk; j0 += FA_KT) {
        if (tile_all_masked(s, i_last, j0)) break;
        __syncthreads();
        load_rows(ks, k, s, b, j0, FA_KT, s.Tk, kvh, false);
        load_rows(vs, v, s, b, j0, FA_KT, s.Tk, kvh, false);
        __syncthreads();
        for (int e = threadIdx.x; e < FA_QT * FA_KT; e += blockDim.x) {
            int r = e / FA_KT, c = e % FA_KT;
            float p;
            dS[r * (FA_KT + 1) + c] = pair_ds(s, qs + r * s.hd, gs + r * s.hd, ks + c * s.hd, vs + c * s.hd, L[r],
                                              D[r], i0 + r, j0 + c, &p);
        }
        __syncthreads();
        for (int a = 0; a < FA_PER_THREAD; a++) {
            int64_t e = threadIdx.x + (int64_t)a * FA_THREADS;
            if (e >= FA_QT * s.hd) break;
            int64_t r = e / s.hd, d = e % s.hd;
            for (int c = 0; c < FA_KT; c++) acc[a] += dS[r * (FA_KT + 1) + c] * ks[c * s.hd + d];
        }
    }
    for (int a = 0; a < FA_PER_THREAD; a++) {
        int64_t e = threadIdx.x + (int64_t)a * FA_THREADS;
        if (e >= FA_QT * s.hd) break;
        int64_t r = e / s.hd, d = e % s.hd, i = i0 + r;
        if (i >= s.Tq) continue;
        T *dst = &dq[attn_q_off(s, b, i, h) + d];
        plc_st(dst, plc_ld(dst) + s.scale * acc[a]);
    }
}

template <typename T>
__global__ void flash_bwd_dkdv_k(T *dk, T *dv, const T *dout, const T *q, const T *k, const T *v, const T *out,
                                 const float *lse, attn_dims s)
{
    extern __shared__ float sm[];
    float *ks = sm, *vs = ks + FA_KT * s.hd, *qs = vs + FA_KT * s.hd, *gs = qs + FA_QT * s.hd;
    float *P = gs + FA_QT * s.hd, *dS = P + FA_QT * (FA_KT + 1), *L = dS + FA_QT * (FA_KT + 1), *D = L + FA_QT;
    int64_t ktiles = (s.Tk + FA_KT - 1) / FA_KT;
    int64_t kt = blockIdx.x % ktiles, kvh = (blockIdx.x / ktiles) % s.Hkv, b = blockIdx.x / (ktiles * s.Hkv);
    int64_t j0 = kt * FA_KT;

    load_rows(ks, k, s, b, j0, FA_KT, s.Tk, kvh, false);
    load_rows(vs, v, s, b, j0, FA_KT, s.Tk, kvh, false);
    float adk[FA_PER_THREAD], adv[FA_PER_THREAD]; /* FA_KT == FA_QT: same element count */
    for (int a = 0; a < FA_PER_THREAD; a++) adk[a] = adv[a] = 0.0f;

    for (int64_t h = kvh * s.group; h < (kvh + 1) * s.group; h++)
        for (int64_t i0 = 0; i0 < s.Tq; i0 += FA_QT) {
            int64_t i_last = (i0 + FA_QT < s.Tq ? i0 + FA_QT : s.Tq) - 1;
            if (tile_all_masked(s, i_last, j0)) continue;
            __syncthreads();
            load_rows(qs, q, s, b, i0, FA_QT, s.Tq, h, true);
            load_rows(gs, dout, s, b, i0, FA_QT, s.Tq, h, true);
            __syncthreads();
            load_lse_D(L, D, gs, lse, out, s, b, h, i0);
            __syncthreads();
            for (int e = threadIdx.x; e < FA_QT * FA_KT; e += blockDim.x) {
                int r = e / FA_KT, c = e % FA_KT;
                float p;
                float ds = pair_ds(s, qs + r * s.hd, gs + r * s.hd, ks + c * s.hd, vs + c * s.hd, L[r], D[r], i0 + r,
                                   j0 + c, &p);
                P[r * (FA_KT + 1) + c] = p;
                dS[r * (FA_KT + 1) + c] = ds;
            }
            __syncthreads();
            for (int a = 0; a < FA_PER_THREAD; a++) {
                int64_t e = threadIdx.x + (int64_t)a * FA_THREADS;
                if (e >= FA_KT * s.hd) break;
                int64_t c = e / s.hd, d = e % s.hd;
                for (int r = 0; r < FA_QT; r++) {
                    adv[a] += P[r * (FA_KT + 1) + c] * gs[r * s.hd + d];
                    adk[a] += dS[r * (FA_KT + 1) + c] * qs[r * s.hd + d];
                }
            }
        }
    for (int a = 0; a < FA_PER_THREAD; a++) {
        int64_t e = threadIdx.x + (int64_t)a * FA_THREADS;
        if (e >= FA_KT * s.hd) break;
        int64_t c = e / s.hd, d = e % s.hd, j = j0 + c;
        if (j >= s.Tk) continue;
        int64_t o = attn_kv_off(s, b, j, kvh) + d;
        plc_st(&dk[o], plc_ld(&dk[o]) + s.scale * adk[a]);
        plc_st(&dv[o], plc_ld(&dv[o]) + adv[a]);
    }
}

static int flash_check(int64_t H, int64_t Hkv, int64_t hd)
{
    if (Hkv <= 0 || H % Hkv) return plc_cuda_fail("flash attention", "heads must be a multiple of kv heads");
    if (hd <= 0 || hd > PLC_CUDA_MAX_HEAD_DIM)
        return plc_cuda_fail("flash attention", "head dimension must be in 1..PLC_CUDA_MAX_HEAD_DIM (128)");
    return 0;
}

static size_t fwd_smem(int64_t hd)
{
    return (size_t)((FA_QT + 2 * FA_KT) * hd + FA_QT * (FA_KT + 1) + 3 * FA_QT) * sizeof(float);
}
static size_t bwd_smem(int64_t hd)
{
    return (size_t)((2 * FA_QT + 2 * FA_KT) * hd + 2 * FA_QT * (FA_KT + 1) + 2 * FA_QT) * sizeof(float);
}

extern "C" int plc_cuda_flash_attention_forward(void *out, float *lse, const void *q, const void *k, const void *v,
                                                plc_cuda_dtype dt, const int32_t *q_pos, const int32_t *k_pos,
                                                int64_t B, int64_t Tq, int64_t Tk, int64_t H, int64_t Hkv,
                                                int64_t hd, void *stream)
{
    if (flash_check(H, Hkv, hd)) return -1;
    if (B * H * Tq <= 0) return 0;
    const void *tensors[] = {out, q, k, v};
    if (plc_cuda_flash_tc_applies(dt, hd, tensors, 4))
        return plc_cuda_flash_tc_forward(out, lse, q, k, v, q_pos, k_pos, B, Tq, Tk, H, Hkv, hd, stream);
    attn_dims s = attn_dims_make(B, Tq, Tk, H, Hkv, hd, q_pos, k_pos);
    int64_t blocks = B * H * ((Tq + FA_QT - 1) / FA_QT);
    if (blocks > 2147483647) return plc_cuda_fail(__func__, "grid too large");
    PLC_DISPATCH(dt, T,
                 flash_fwd_k<T><<<(unsigned)blocks, FA_THREADS, fwd_smem(hd), plc_stream(stream)>>>(
                     (T *)out, lse, (const T *)q, (const T *)k, (const T *)v, s));
    return plc_cuda_check_launch(__func__);
}

extern "C" int plc_cuda_flash_attention_backward(void *dq, void *dk, void *dv, const void *dout, const void *q,
                                                 const void *k, const void *v, const void *out, const float *lse,
                                                 plc_cuda_dtype dt, const int32_t *q_pos, const int32_t *k_pos,
                                                 int64_t B, int64_t Tq, int64_t Tk, int64_t H, int64_t Hkv,
                                                 int64_t hd, void *stream)
{
    if (flash_check(H, Hkv, hd)) return -1;
    if (B * H * Tq <= 0 || Tk <= 0) return 0;
    const void *tensors[] = {dq, dk, dv, dout, q, k, v, out};
    if (plc_cuda_flash_tc_applies(dt, hd, tensors, 8))
        return plc_cuda_flash_tc_backward(dq, dk, dv, dout, q, k, v, out, lse, q_pos, k_pos, B, Tq, Tk, H, Hkv, hd,
                                          stream);
    attn_dims s = attn_dims_make(B, Tq, Tk, H, Hkv, hd, q_pos, k_pos);
    int64_t qblocks = B * H * ((Tq + FA_QT - 1) / FA_QT), kblocks = B * Hkv * ((Tk + FA_KT - 1) / FA_KT);
    if (qblocks > 2147483647 || kblocks > 2147483647) return plc_cuda_fail(__func__, "grid too large");
    cudaStream_t st = plc_stream(stream);
    PLC_DISPATCH(dt, T, {
        flash_bwd_dq_k<T><<<(unsigned)qblocks, FA_THREADS, bwd_smem(hd), st>>>(
            (T *)dq, (const T *)dout, (const T *)q, (const T *)k, (const T *)v, (const T *)out, lse, s);
        flash_bwd_dkdv_k<T><<<(unsigned)kblocks, FA_THREADS, bwd_smem(hd), st>>>(
            (T *)dk, (T *)dv, (const T *)dout, (const T *)q, (const T *)k, (const T *)v, (const T *)out, lse, s);
    });
    return plc_cuda_check_launch(__func__);
}
