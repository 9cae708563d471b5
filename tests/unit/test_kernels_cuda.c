/* tests/unit/test_kernels_cuda.c: the CUDA kernels against the CPU kernels
 * (the fp32 reference) when a GPU is present. Without one (or in a build
 * without CUDA) it prints one line saying so and registers no test. */
#include <CUnit/CUnit.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#ifdef PLC_HAVE_CUDA

#include <cuda_runtime.h>

#include "kernels/common/bf16.h"
#include "kernels/cuda/kernels_cuda.h"
#include "kernels/kernels.h"
#include "test_kernels_util.h"

static plc_cuda_ctx *ctx;

static void *dev_upload(const void *host, size_t bytes)
{
    void *d = NULL;
    CU_ASSERT_FATAL(cudaMalloc(&d, bytes ? bytes : 1) == cudaSuccess);
    cudaError_t e = host ? cudaMemcpy(d, host, bytes, cudaMemcpyHostToDevice) : cudaMemset(d, 0, bytes ? bytes : 1);
    CU_ASSERT_FATAL(e == cudaSuccess);
    return d;
}
#define UP(x, n) dev_upload((x), sizeof(*(x)) * (size_t)(n))
#define ZEROS(type, n) ((type *)dev_upload(NULL, sizeof(type) * (size_t)(n)))

/* |gpu - cpu| <= tol * max|cpu| everywhere; frees the device buffer. */
static void expect_close(const char *what, void *dev, const float *cpu, int64_t n, double tol)
{
    float *h = tk_alloc(n);
    CU_ASSERT_FATAL(cudaDeviceSynchronize() == cudaSuccess);
    CU_ASSERT_FATAL(cudaMemcpy(h, dev, sizeof(float) * (size_t)n, cudaMemcpyDeviceToHost) == cudaSuccess);
    double scale = tk_max_abs(cpu, n), err = tk_max_diff(h, cpu, n);
    if (!(err <= tol * scale)) fprintf(stderr, "\n  %s: max |gpu - cpu| = %g (scale %g)\n", what, err, scale);
    CU_ASSERT(err <= tol * scale);
    CU_ASSERT(scale > 0);
    free(h);
    cudaFree(dev);
}

/* int32 results equal; frees the device buffer */
static void expect_equal_i32(const char *what, int32_t *dev, const int32_t *cpu, int64_t n)
{
    int32_t *h = malloc(sizeof *h * (size_t)n);
    CU_ASSERT_FATAL(h != NULL);
    CU_ASSERT_FATAL(cudaDeviceSynchronize() == cudaSuccess);
    CU_ASSERT_FATAL(cudaMemcpy(h, dev, sizeof *h * (size_t)n, cudaMemcpyDeviceToHost) == cudaSuccess);
    int same = memcmp(h, cpu, sizeof *h * (size_t)n) == 0;
    if (!same) fprintf(stderr, "\n  %s: the GPU's integers differ from the CPU's\n", what);
    CU_ASSERT(same);
    free(h);
    cudaFree(dev);
}

/* the mixture-of-experts chain (kernels/cuda/moe.cu): route with a
 * capacity that drops copies, permute, expert matmuls, combine, and every
 * backward, against the CPU kernels; both routers */
static void test_moe(void)
{
    enum { T = 24, H = 16, E = 4, K = 2, F = 8, SEQ = 6 };
    const int64_t P = T * K, cap = 10;
    for (int router = 0; router < 2; router++) {
        float z[T * E], x[T * H], W[E * H * F], dout[T * H], dw[T * K];
        tk_fill(z, T * E, 20 + router, 3.0f), tk_fill(x, T * H, 22, 1.0f), tk_fill(W, E * H * F, 23, 1.0f);
        tk_fill(dout, T * H, 24, 1.0f), tk_fill(dw, T * K, 25, 1.0f);
        float sc[T * E], wt[T * K], xp[P * H], g[P * F], y[P * H], out[T * H], dy[P * H], dwt[T * K], dz[T * E];
        float dx[T * H] = {0}, dW[E * H * F] = {0};
        int32_t ex[T * K], pos[T * K], cnt[E];
        int64_t dropped = plc_k_moe_route(sc, ex, pos, wt, cnt, z, T, E, K, router, cap, 1.5f);
        plc_k_moe_permute(xp, x, pos, T, H, K, P);
        plc_k_moe_matmul(g, xp, W, cnt, E, P, H, F, 0, 0.0f);
        plc_k_moe_matmul(y, g, W, cnt, E, P, F, H, 1, 0.0f);
        plc_k_moe_unpermute(out, y, pos, wt, T, H, K);
        plc_k_moe_unpermute_backward(dy, dwt, dout, y, pos, wt, T, H, K, P);
        plc_k_moe_permute_backward(dx, y, pos, T, H, K);
        plc_k_moe_matmul_dw(dW, xp, g, cnt, E, H, F);
        plc_k_moe_route_backward(dz, dw, sc, ex, NULL, T, E, K, router, SEQ, SEQ, 1.5f, 0.1f);
        float ch[T / SEQ * E];
        plc_k_moe_seq_counts(ch, ex, T, E, K, SEQ);

        float *dzl = UP(z, T * E), *dxh = UP(x, T * H), *dWt = UP(W, E * H * F), *ddo = UP(dout, T * H),
              *ddw = UP(dw, T * K);
        float *gsc = ZEROS(float, T * E), *gwt = ZEROS(float, T * K), *gxp = ZEROS(float, P * H),
              *gg = ZEROS(float, P * F), *gy = ZEROS(float, P * H), *gout = ZEROS(float, T * H),
              *gdy = ZEROS(float, P * H), *gdwt = ZEROS(float, T * K), *gdz = ZEROS(float, T * E),
              *gdx = ZEROS(float, T * H), *gdW = ZEROS(float, E * H * F);
        int32_t *gex = ZEROS(int32_t, T * K), *gpos = ZEROS(int32_t, T * K), *gcnt = ZEROS(int32_t, E);
        long long *gdrop = ZEROS(long long, 1), hdrop = -1;
        CU_ASSERT(plc_cuda_moe_route(gsc, gex, gpos, gwt, gcnt, dzl, T, E, K, router, cap, 1.5f, gdrop, NULL) == 0);
        CU_ASSERT(plc_cuda_moe_permute(gxp, dxh, gpos, T, H, K, P, NULL) == 0);
        CU_ASSERT(plc_cuda_moe_matmul(ctx, gg, gxp, dWt, gcnt, E, P, H, F, 0, 0.0f, NULL) == 0);
        CU_ASSERT(plc_cuda_moe_matmul(ctx, gy, gg, dWt, gcnt, E, P, F, H, 1, 0.0f, NULL) == 0);
        CU_ASSERT(plc_cuda_moe_unpermute(gout, gy, gpos, gwt, T, H, K, NULL) == 0);
        CU_ASSERT(plc_cuda_moe_unpermute_backward(gdy, gdwt, ddo, gy, gpos, gwt, T, H, K, P, NULL) == 0);
        CU_ASSERT(plc_cuda_moe_permute_backward(gdx, gy, gpos, T, H, K, NULL) == 0);
        CU_ASSERT(plc_cuda_moe_matmul_dw(ctx, gdW, gxp, gg, gcnt, E, H, F, NULL) == 0);
        CU_ASSERT(plc_cuda_moe_route_backward(gdz, ddw, gsc, gex, NULL, T, E, K, router, SEQ, SEQ, 1.5f, 0.1f, NULL) == 0);
        float *gch = ZEROS(float, T / SEQ * E);
        CU_ASSERT(plc_cuda_moe_seq_counts(gch, gex, T, E, K, SEQ, NULL) == 0);
        expect_close("moe sequence choices", gch, ch, T / SEQ * E, 0);
        CU_ASSERT_FATAL(cudaMemcpy(&hdrop, gdrop, sizeof hdrop, cudaMemcpyDeviceToHost) == cudaSuccess);
        CU_ASSERT_EQUAL(hdrop, dropped);
        expect_equal_i32("moe expert", gex, ex, T * K);
        expect_equal_i32("moe pos", gpos, pos, T * K);
        expect_equal_i32("moe counts", gcnt, cnt, E);
        expect_close("moe scores", gsc, sc, T * E, 1e-6);
        expect_close("moe weight", gwt, wt, T * K, 1e-6);
        expect_close("moe permute", gxp, xp, P * H, 0);
        expect_close("moe expert gate", gg, g, P * F, 1e-5);
        expect_close("moe expert out", gy, y, P * H, 1e-5);
        expect_close("moe combine", gout, out, T * H, 1e-5);
        expect_close("moe combine backward dy", gdy, dy, P * H, 1e-5);
        expect_close("moe combine backward dweight", gdwt, dwt, T * K, 1e-5);
        expect_close("moe permute backward", gdx, dx, T * H, 1e-5);
        expect_close("moe expert weight gradient", gdW, dW, E * H * F, 1e-5);
        expect_close("moe route backward", gdz, dz, T * E, 1e-5);
        cudaFree(dzl), cudaFree(dxh), cudaFree(dWt), cudaFree(ddo), cudaFree(ddw), cudaFree(gdrop);
    }
}

static void test_matmul(void)
{
    enum { M = 33, N = 17, K = 29 };
    float A[M * K], B[K * N], C0[M * N], C[M * N];
    tk_fill(A, M * K, 1, 1.0f), tk_fill(B, K * N, 2, 1.0f), tk_fill(C0, M * N, 3, 1.0f);
    for (int ta = 0; ta < 2; ta++)
        for (int tb = 0; tb < 2; tb++) {
            /* the same buffers read as transposed operands: shapes still fit */
            memcpy(C, C0, sizeof C);
            plc_k_matmul(C, A, B, M, N, K, ta, tb, 0.7f, 1.0f);
            float *dA = UP(A, M * K), *dB = UP(B, K * N), *dC = UP(C0, M * N);
            CU_ASSERT(plc_cuda_matmul(ctx, dC, PLC_CUDA_F32, dA, dB, PLC_CUDA_F32, M, N, K, ta, tb, 0.7f, 1.0f, NULL) == 0);
            expect_close("matmul", dC, C, M * N, 1e-5);
            cudaFree(dA), cudaFree(dB);
        }
}

static void test_rmsnorm_rope_swiglu(void)
{
    enum { R = 12, D = 96, B = 2, T = 6, H = 2, HD = 8 };
    float in[R * D], w[D], out[R * D], rstd[R], dout[R * D], din[R * D] = {0}, dw[D] = {0};
    tk_fill(in, R * D, 4, 2.0f), tk_fill(w, D, 5, 1.0f), tk_fill(dout, R * D, 6, 1.0f);
    plc_k_rmsnorm_forward(out, rstd, in, w, R, D, 1e-5f);
    plc_k_rmsnorm_backward(din, dw, dout, in, w, rstd, R, D);
    float *di = UP(in, R * D), *dwt = UP(w, D), *dg = UP(dout, R * D);
    float *o = ZEROS(float, R * D), *rs = ZEROS(float, R), *gi = ZEROS(float, R * D), *gw = ZEROS(float, D);
    CU_ASSERT(plc_cuda_rmsnorm_forward(o, rs, di, dwt, PLC_CUDA_F32, R, D, 1e-5f, NULL) == 0);
    CU_ASSERT(plc_cuda_rmsnorm_backward(gi, gw, dg, di, dwt, rs, PLC_CUDA_F32, R, D, NULL) == 0);
    expect_close("rmsnorm out", o, out, R * D, 1e-5);
    expect_close("rmsnorm rstd", rs, rstd, R, 1e-5);
    expect_close("rmsnorm din", gi, din, R * D, 1e-5);
    expect_close("rmsnorm dweight", gw, dw, D, 1e-5);
    cudaFree(di), cudaFree(dwt), cudaFree(dg);

    enum { NR = B * T * H * HD };
    float x[NR], y[NR], g[NR], dx[NR] = {0};
    int32_t pos[T] = {5, 6, 7, 8, 9, 2047};
    tk_fill(x, NR, 7, 1.0f), tk_fill(g, NR, 8, 1.0f);
    plc_k_rope_forward(y, x, pos, B, T, H, HD, 10000.0f);
    plc_k_rope_backward(dx, g, pos, B, T, H, HD, 10000.0f);
    float *dxv = UP(x, NR), *dgv = UP(g, NR), *dy = ZEROS(float, NR), *ddx = ZEROS(float, NR);
    int32_t *dpos = UP(pos, T);
    CU_ASSERT(plc_cuda_rope_forward(dy, dxv, PLC_CUDA_F32, dpos, B, T, H, HD, 10000.0f, NULL) == 0);
    CU_ASSERT(plc_cuda_rope_backward(ddx, dgv, PLC_CUDA_F32, dpos, B, T, H, HD, 10000.0f, NULL) == 0);
    expect_close("rope forward", dy, y, NR, 1e-6);
    expect_close("rope backward", ddx, dx, NR, 1e-6);
    cudaFree(dxv), cudaFree(dgv), cudaFree(dpos);

    enum { N = 1000 };
    float a[N], b[N], c[N], s[N], dga[N] = {0}, dgb[N] = {0}, sum[N];
    tk_fill(a, N, 9, 4.0f), tk_fill(b, N, 10, 1.0f), tk_fill(c, N, 11, 1.0f);
    plc_k_swiglu_forward(s, a, b, N);
    plc_k_swiglu_backward(dga, dgb, c, a, b, N);
    plc_k_add(sum, a, b, N);
    plc_k_accumulate(sum, c, N);
    plc_k_scale(sum, 0.25f, N);
    float *da = UP(a, N), *db = UP(b, N), *dc = UP(c, N), *ds = ZEROS(float, N), *e1 = ZEROS(float, N),
          *e2 = ZEROS(float, N), *dsum = ZEROS(float, N);
    CU_ASSERT(plc_cuda_swiglu_forward(ds, da, db, PLC_CUDA_F32, N, NULL) == 0);
    CU_ASSERT(plc_cuda_swiglu_backward(e1, e2, dc, da, db, PLC_CUDA_F32, N, NULL) == 0);
    CU_ASSERT(plc_cuda_add(dsum, da, db, PLC_CUDA_F32, N, NULL) == 0);
    CU_ASSERT(plc_cuda_accumulate(dsum, dc, PLC_CUDA_F32, N, NULL) == 0);
    CU_ASSERT(plc_cuda_scale(dsum, 0.25f, PLC_CUDA_F32, N, NULL) == 0);
    expect_close("swiglu forward", ds, s, N, 1e-6);
    expect_close("swiglu dgate", e1, dga, N, 1e-6);
    expect_close("swiglu dup", e2, dgb, N, 1e-6);
    expect_close("add/accumulate/scale", dsum, sum, N, 1e-6);
    cudaFree(da), cudaFree(db), cudaFree(dc);
}

static void test_embedding_xent(void)
{
    enum { V = 40, D = 16, R = 20 };
    float table[V * D], dout[R * D], out[R * D], dt[V * D] = {0};
    int32_t tok[R];
    for (int r = 0; r < R; r++) tok[r] = (r * 7) % V;
    tok[3] = tok[4]; /* a repeated token */
    tk_fill(table, V * D, 12, 1.0f), tk_fill(dout, R * D, 13, 1.0f);
    plc_k_embedding_forward(out, tok, table + 10 * D, R, D, 10, 20);
    plc_k_embedding_backward(dt, dout, tok, R, D, 0, V);
    float *dtab = UP(table, V * D), *dg = UP(dout, R * D), *o = ZEROS(float, R * D), *gt = ZEROS(float, V * D);
    int32_t *dtok = UP(tok, R);
    CU_ASSERT(plc_cuda_embedding_forward(o, dtok, dtab + 10 * D, PLC_CUDA_F32, R, D, 10, 20, NULL) == 0);
    CU_ASSERT(plc_cuda_embedding_backward(gt, dg, PLC_CUDA_F32, dtok, R, D, 0, V, NULL) == 0);
    expect_close("embedding forward", o, out, R * D, 0);
    expect_close("embedding backward", gt, dt, V * D, 1e-6);
    cudaFree(dtab), cudaFree(dg);

    /* cross-entropy: fused, and pieces over the whole vocabulary */
    enum { XV = 700 };
    float *logits = tk_alloc(R * XV), *dl = tk_alloc(R * XV), loss[R];
    tk_fill(logits, R * XV, 14, 6.0f);
    plc_k_cross_entropy(loss, dl, logits, tok, R, XV, 0.1f);
    float *dlog = UP(logits, R * XV), *gl = ZEROS(float, R * XV), *gloss = ZEROS(float, R);
    CU_ASSERT(plc_cuda_cross_entropy(gloss, gl, dlog, PLC_CUDA_F32, dtok, R, XV, 0.1f, NULL) == 0);
    expect_close("cross-entropy loss", gloss, loss, R, 1e-5);
    expect_close("cross-entropy dlogits", gl, dl, R * XV, 1e-5);
    float *m = ZEROS(float, R), *s = ZEROS(float, R), *t = ZEROS(float, R), *l2 = ZEROS(float, R);
    CU_ASSERT(plc_cuda_xent_local_max(m, dlog, PLC_CUDA_F32, R, XV, NULL) == 0);
    CU_ASSERT(plc_cuda_xent_local_sumexp(s, t, dlog, PLC_CUDA_F32, m, dtok, R, XV, 0, NULL) == 0);
    CU_ASSERT(plc_cuda_xent_loss_grad(l2, dlog, dlog, PLC_CUDA_F32, m, s, t, dtok, R, XV, 0, 0.1f, NULL) == 0);
    expect_close("cross-entropy pieces loss", l2, loss, R, 1e-5);
    expect_close("cross-entropy pieces dlogits (in place)", dlog, dl, R * XV, 1e-5);
    cudaFree(m), cudaFree(s), cudaFree(t), cudaFree(dtok);
    free(logits), free(dl);
}

/* attention: CPU and CUDA, both forms, GQA and CP-style positions */
static void attention_case(int flash, int64_t Tq, const int32_t *qpos)
{
    const int64_t B = 2, Tk = 45, H = 4, Hkv = 2, hd = 32;
    int64_t nq = B * Tq * H * hd, nkv = B * Tk * Hkv * hd, np = B * H * Tq * Tk;
    float *q = tk_alloc(nq), *k = tk_alloc(nkv), *v = tk_alloc(nkv), *g = tk_alloc(nq);
    float *out = tk_alloc(nq), *saved = tk_alloc(np), *dq = tk_alloc(nq), *dk = tk_alloc(nkv), *dv = tk_alloc(nkv);
    tk_fill(q, nq, 20, 1.0f), tk_fill(k, nkv, 21, 1.0f), tk_fill(v, nkv, 22, 1.0f), tk_fill(g, nq, 23, 1.0f);
    float *dqv = UP(q, nq), *dkv = UP(k, nkv), *dvv = UP(v, nkv), *dgv = UP(g, nq);
    float *o = ZEROS(float, nq), *sv = ZEROS(float, np), *gq = ZEROS(float, nq), *gk = ZEROS(float, nkv),
          *gv = ZEROS(float, nkv);
    int32_t *dpos = qpos ? UP(qpos, Tq) : NULL;
    if (flash) {
        plc_k_attention_forward(out, NULL, saved, q, k, v, qpos, NULL, B, Tq, Tk, H, Hkv, hd);
        plc_k_attention_backward(dq, dk, dv, g, q, k, v, out, NULL, saved, qpos, NULL, B, Tq, Tk, H, Hkv, hd);
        CU_ASSERT(plc_cuda_flash_attention_forward(o, sv, dqv, dkv, dvv, PLC_CUDA_F32, dpos, NULL, B, Tq, Tk, H, Hkv,
                                                   hd, NULL) == 0);
        CU_ASSERT(plc_cuda_flash_attention_backward(gq, gk, gv, dgv, dqv, dkv, dvv, o, sv, PLC_CUDA_F32, dpos, NULL,
                                                    B, Tq, Tk, H, Hkv, hd, NULL) == 0);
        expect_close("flash lse", sv, saved, B * H * Tq, 1e-5);
    } else {
        plc_k_attention_forward(out, saved, NULL, q, k, v, qpos, NULL, B, Tq, Tk, H, Hkv, hd);
        plc_k_attention_backward(dq, dk, dv, g, q, k, v, out, saved, NULL, qpos, NULL, B, Tq, Tk, H, Hkv, hd);
        CU_ASSERT(plc_cuda_attention_forward(o, sv, dqv, dkv, dvv, PLC_CUDA_F32, dpos, NULL, B, Tq, Tk, H, Hkv, hd,
                                             NULL) == 0);
        CU_ASSERT(plc_cuda_attention_backward(gq, gk, gv, dgv, dqv, dkv, dvv, o, sv, PLC_CUDA_F32, B, Tq, Tk, H, Hkv,
                                              hd, NULL) == 0);
        cudaFree(sv);
    }
    expect_close("attention out", o, out, nq, 1e-5);
    expect_close("attention dq", gq, dq, nq, 1e-4);
    expect_close("attention dk", gk, dk, nkv, 1e-4);
    expect_close("attention dv", gv, dv, nkv, 1e-4);
    cudaFree(dqv), cudaFree(dkv), cudaFree(dvv), cudaFree(dgv);
    if (dpos) cudaFree(dpos);
    free(q), free(k), free(v), free(g), free(out), free(saved), free(dq), free(dk), free(dv);
}

static void test_attention(void)
{
    int32_t cp[20];
    for (int i = 0; i < 20; i++) cp[i] = 25 + i; /* the last 20 queries, full K/V */
    for (int flash = 0; flash < 2; flash++) {
        attention_case(flash, 45, NULL);
        attention_case(flash, 20, cp);
    }
}

/* bf16 flash attention on tensor cores (head dimension 64 and 128) against
 * the fp32 CPU kernels on the same bf16-exact inputs: 150 queries (tiles of
 * 64 and a partial one), GQA, CP-style positions; gradients added into
 * non-zero buffers; the backward twice gives the same bits. */
static uint16_t *bf16_up(float *x, int64_t n)
{
    uint16_t *h = calloc((size_t)n, sizeof *h);
    plc_k_cast_f32_to_bf16(h, x, n);
    plc_k_cast_bf16_to_f32(x, h, n); /* the CPU sees exactly what the GPU sees */
    uint16_t *d = UP(h, n);
    free(h);
    return d;
}

static void expect_close_bf16(const char *what, uint16_t *dev, const float *cpu, int64_t n, double tol)
{
    float *f = ZEROS(float, n);
    CU_ASSERT(plc_cuda_cast_bf16_to_f32(f, dev, n, NULL) == 0);
    expect_close(what, f, cpu, n, tol);
}

static void attention_tc_case(int64_t hd, int64_t Tq, const int32_t *qpos)
{
    const int64_t B = 2, Tk = 150, H = 4, Hkv = 2;
    int64_t nq = B * Tq * H * hd, nkv = B * Tk * Hkv * hd, nl = B * H * Tq;
    float *q = tk_alloc(nq), *k = tk_alloc(nkv), *v = tk_alloc(nkv), *g = tk_alloc(nq), *out = tk_alloc(nq);
    float *lse = tk_alloc(nl), *dq = tk_alloc(nq), *dk = tk_alloc(nkv), *dv = tk_alloc(nkv);
    tk_fill(q, nq, 40, 1.0f), tk_fill(k, nkv, 41, 1.0f), tk_fill(v, nkv, 42, 1.0f), tk_fill(g, nq, 43, 1.0f);
    tk_fill(dq, nq, 44, 0.5f), tk_fill(dk, nkv, 45, 0.5f), tk_fill(dv, nkv, 46, 0.5f);
    uint16_t *bq = bf16_up(q, nq), *bk = bf16_up(k, nkv), *bv = bf16_up(v, nkv), *bg = bf16_up(g, nq);
    uint16_t *bdq = bf16_up(dq, nq), *bdk = bf16_up(dk, nkv), *bdv = bf16_up(dv, nkv);
    uint16_t *bdq2 = bf16_up(dq, nq), *bdk2 = bf16_up(dk, nkv), *bdv2 = bf16_up(dv, nkv);
    uint16_t *bo = ZEROS(uint16_t, nq);
    float *dl = ZEROS(float, nl);
    int32_t *dpos = qpos ? UP(qpos, Tq) : NULL;
    plc_k_attention_forward(out, NULL, lse, q, k, v, qpos, NULL, B, Tq, Tk, H, Hkv, hd);
    plc_k_attention_backward(dq, dk, dv, g, q, k, v, out, NULL, lse, qpos, NULL, B, Tq, Tk, H, Hkv, hd);
    CU_ASSERT(plc_cuda_flash_attention_forward(bo, dl, bq, bk, bv, PLC_CUDA_BF16, dpos, NULL, B, Tq, Tk, H, Hkv, hd,
                                               NULL) == 0);
    CU_ASSERT(plc_cuda_flash_attention_backward(bdq, bdk, bdv, bg, bq, bk, bv, bo, dl, PLC_CUDA_BF16, dpos, NULL, B,
                                                Tq, Tk, H, Hkv, hd, NULL) == 0);
    CU_ASSERT(plc_cuda_flash_attention_backward(bdq2, bdk2, bdv2, bg, bq, bk, bv, bo, dl, PLC_CUDA_BF16, dpos, NULL,
                                                B, Tq, Tk, H, Hkv, hd, NULL) == 0);
    CU_ASSERT_FATAL(cudaDeviceSynchronize() == cudaSuccess);
    int64_t most = nq > nkv ? nq : nkv;
    uint16_t *x1 = calloc((size_t)most, 2), *x2 = calloc((size_t)most, 2);
    CU_ASSERT(cudaMemcpy(x1, bdq, (size_t)nq * 2, cudaMemcpyDeviceToHost) == cudaSuccess);
    CU_ASSERT(cudaMemcpy(x2, bdq2, (size_t)nq * 2, cudaMemcpyDeviceToHost) == cudaSuccess);
    CU_ASSERT(memcmp(x1, x2, (size_t)nq * 2) == 0);
    CU_ASSERT(cudaMemcpy(x1, bdk, (size_t)nkv * 2, cudaMemcpyDeviceToHost) == cudaSuccess);
    CU_ASSERT(cudaMemcpy(x2, bdk2, (size_t)nkv * 2, cudaMemcpyDeviceToHost) == cudaSuccess);
    CU_ASSERT(memcmp(x1, x2, (size_t)nkv * 2) == 0);
    free(x1), free(x2);
    fprintf(stderr, "\n  tensor-core attention, hd %lld, %lld queries%s:", (long long)hd, (long long)Tq,
            qpos ? " (CP positions)" : "");
    expect_close_bf16("tc attention out", bo, out, nq, 1e-2);
    expect_close("tc attention lse", dl, lse, nl, 1e-3);
    expect_close_bf16("tc attention dq", bdq, dq, nq, 1e-2);
    expect_close_bf16("tc attention dk", bdk, dk, nkv, 1e-2);
    expect_close_bf16("tc attention dv", bdv, dv, nkv, 1e-2);
    cudaFree(bq), cudaFree(bk), cudaFree(bv), cudaFree(bg), cudaFree(bdq2), cudaFree(bdk2), cudaFree(bdv2);
    if (dpos) cudaFree(dpos);
    free(q), free(k), free(v), free(g), free(out), free(lse), free(dq), free(dk), free(dv);
}

static void test_attention_tc(void)
{
    int32_t cp[70];
    for (int i = 0; i < 70; i++) cp[i] = 80 + i; /* the last 70 queries, full K/V */
    for (int64_t hd = 64; hd <= 128; hd += 64) {
        attention_tc_case(hd, 150, NULL);
        attention_tc_case(hd, 70, cp);
    }
}

static void test_optimizer_bf16(void)
{
    enum { N = 5000 };
    float p[N], gr[N], m[N] = {0}, v[N] = {0};
    tk_fill(p, N, 30, 1.0f), tk_fill(gr, N, 31, 1.0f);
    float *dp = UP(p, N), *dg = UP(gr, N), *dm = ZEROS(float, N), *dv = ZEROS(float, N);
    for (int t = 1; t <= 3; t++) {
        plc_k_adamw(p, gr, m, v, N, 1e-2, 0.9, 0.95, 1e-8, 0.1, t, 0.5f);
        CU_ASSERT(plc_cuda_adamw(dp, dg, dm, dv, N, 1e-2, 0.9, 0.95, 1e-8, 0.1, t, 0.5f, NULL) == 0);
    }
    double *dres = ZEROS(double, 1), res = 0;
    CU_ASSERT(plc_cuda_sum_squares(ctx, dres, dg, N, NULL) == 0);
    CU_ASSERT(cudaMemcpy(&res, dres, sizeof res, cudaMemcpyDeviceToHost) == cudaSuccess);
    CU_ASSERT_DOUBLE_EQUAL(res, plc_k_sum_squares(gr, N), 1e-9 * res);
    cudaFree(dres);
    expect_close("adamw param", dp, p, N, 1e-6);
    expect_close("adamw m", dm, m, N, 1e-6);
    expect_close("adamw v", dv, v, N, 1e-6);

    /* casts: bitwise the CPU's rounding; bf16 flash near the fp32 result */
    uint16_t h[N], hg[N];
    plc_k_cast_f32_to_bf16(h, gr, N);
    uint16_t *dh = ZEROS(uint16_t, N);
    CU_ASSERT(plc_cuda_cast_f32_to_bf16(dh, dg, N, NULL) == 0);
    CU_ASSERT(cudaMemcpy(hg, dh, sizeof hg, cudaMemcpyDeviceToHost) == cudaSuccess);
    CU_ASSERT(memcmp(h, hg, sizeof h) == 0);
    float back[N];
    plc_k_cast_bf16_to_f32(back, h, N);
    float *dback = ZEROS(float, N);
    CU_ASSERT(plc_cuda_cast_bf16_to_f32(dback, dh, N, NULL) == 0);
    expect_close("bf16 -> f32", dback, back, N, 0);

    const int64_t B = 1, T = 40, H = 2, hd = 16, n = B * T * H * hd;
    float *q = tk_alloc(n), *o32 = tk_alloc(n), *lse = tk_alloc(B * H * T);
    uint16_t *qb = calloc((size_t)n, sizeof *qb);
    tk_fill(q, n, 32, 1.0f);
    plc_k_cast_f32_to_bf16(qb, q, n);
    plc_k_cast_bf16_to_f32(q, qb, n); /* inputs exactly representable in bf16 */
    plc_k_attention_forward(o32, NULL, lse, q, q, q, NULL, NULL, B, T, T, H, H, hd);
    uint16_t *dq = UP(qb, n), *dob = ZEROS(uint16_t, n);
    float *dl = ZEROS(float, B * H * T), *of = ZEROS(float, n);
    CU_ASSERT(plc_cuda_flash_attention_forward(dob, dl, dq, dq, dq, PLC_CUDA_BF16, NULL, NULL, B, T, T, H, H, hd,
                                               NULL) == 0);
    CU_ASSERT(plc_cuda_cast_bf16_to_f32(of, dob, n, NULL) == 0);
    expect_close("bf16 flash forward", of, o32, n, 1e-2);
    expect_close("bf16 flash lse", dl, lse, B * H * T, 1e-2);
    cudaFree(dg), cudaFree(dh), cudaFree(dq), cudaFree(dob); /* dp, dm, dv: freed by expect_close */
    free(q), free(o32), free(lse), free(qb);
}

/* the GPT block's ops: LayerNorm, GELU, bias, learned positions */
static void test_gpt_block(void)
{
    enum { R = 40, D = 300 }; /* D past one block of PLC_ROW_THREADS, not a multiple of the column tile */
    float *in = tk_alloc(R * D), w[D], b[D], *dout = tk_alloc(R * D), *out = tk_alloc(R * D), mean[R], rstd[R];
    float *din = tk_alloc(R * D), dw[D] = {0}, db[D] = {0};
    tk_fill(in, R * D, 60, 2.0f), tk_fill(w, D, 61, 1.0f), tk_fill(b, D, 62, 1.0f), tk_fill(dout, R * D, 63, 1.0f);
    for (int i = 0; i < R * D; i++) in[i] += (float)(i / D); /* rows with different means */
    plc_k_layernorm_forward(out, mean, rstd, in, w, b, R, D, 1e-5f);
    plc_k_layernorm_backward(din, dw, db, dout, in, w, mean, rstd, R, D);
    float *di = UP(in, R * D), *dwt = UP(w, D), *dbs = UP(b, D), *dg = UP(dout, R * D);
    float *o = ZEROS(float, R * D), *gm = ZEROS(float, R), *gr = ZEROS(float, R), *gi = ZEROS(float, R * D),
          *gw = ZEROS(float, D), *gb = ZEROS(float, D);
    CU_ASSERT(plc_cuda_layernorm_forward(o, gm, gr, di, dwt, dbs, PLC_CUDA_F32, R, D, 1e-5f, NULL) == 0);
    CU_ASSERT(plc_cuda_layernorm_backward(gi, gw, gb, dg, di, dwt, gm, gr, PLC_CUDA_F32, R, D, NULL) == 0);
    expect_close("layernorm out", o, out, R * D, 1e-5);
    expect_close("layernorm mean", gm, mean, R, 1e-6);
    expect_close("layernorm rstd", gr, rstd, R, 1e-6);
    expect_close("layernorm din", gi, din, R * D, 1e-5);
    expect_close("layernorm dweight", gw, dw, D, 1e-5);
    expect_close("layernorm dbias", gb, db, D, 1e-5);

    /* bf16 storage: inputs exactly representable, fp32 statistics */
    uint16_t *hb = calloc((size_t)R * D, sizeof *hb), wb[D], bb[D];
    plc_k_cast_f32_to_bf16(hb, in, R * D), plc_k_cast_f32_to_bf16(wb, w, D), plc_k_cast_f32_to_bf16(bb, b, D);
    plc_k_cast_bf16_to_f32(in, hb, R * D), plc_k_cast_bf16_to_f32(w, wb, D), plc_k_cast_bf16_to_f32(b, bb, D);
    plc_k_layernorm_forward(out, mean, rstd, in, w, b, R, D, 1e-5f);
    uint16_t *dhb = UP(hb, R * D), *dwb = UP(wb, D), *dbb = UP(bb, D), *ob = ZEROS(uint16_t, R * D);
    float *of = ZEROS(float, R * D), *rb = ZEROS(float, R);
    CU_ASSERT(plc_cuda_layernorm_forward(ob, NULL, rb, dhb, dwb, dbb, PLC_CUDA_BF16, R, D, 1e-5f, NULL) == 0);
    CU_ASSERT(plc_cuda_cast_bf16_to_f32(of, ob, R * D, NULL) == 0);
    expect_close("bf16 layernorm out", of, out, R * D, 1e-2);
    expect_close("bf16 layernorm rstd", rb, rstd, R, 1e-6);
    cudaFree(dhb), cudaFree(dwb), cudaFree(dbb), cudaFree(ob), free(hb);
    cudaFree(di), cudaFree(dwt), cudaFree(dbs), cudaFree(dg);

    /* GELU and a bias over rows and columns that fill no tile exactly */
    enum { BR = 70, BC = 45, N = BR * BC };
    float *x = tk_alloc(N), *g = tk_alloc(N), bias[BC], *y = tk_alloc(N), *gl = tk_alloc(N), *dx = tk_alloc(N);
    float dbias[BC] = {0};
    tk_fill(x, N, 64, 6.0f), tk_fill(g, N, 65, 1.0f), tk_fill(bias, BC, 66, 1.0f), tk_fill(dx, N, 67, 1.0f);
    float *dxv = UP(dx, N);
    plc_k_bias_add(y, x, bias, BR, BC);
    plc_k_gelu_forward(gl, y, N);
    plc_k_gelu_backward(dx, g, y, N);
    plc_k_bias_backward(dbias, dx, BR, BC);
    float *xv = UP(x, N), *gv = UP(g, N), *bv = UP(bias, BC), *yv = ZEROS(float, N), *glv = ZEROS(float, N);
    float *dbv = ZEROS(float, BC), *dbv2 = ZEROS(float, BC);
    CU_ASSERT(plc_cuda_bias_add(yv, xv, bv, PLC_CUDA_F32, BR, BC, NULL) == 0);
    CU_ASSERT(plc_cuda_gelu_forward(glv, yv, PLC_CUDA_F32, N, NULL) == 0);
    CU_ASSERT(plc_cuda_gelu_backward(dxv, gv, yv, PLC_CUDA_F32, N, NULL) == 0);
    CU_ASSERT(plc_cuda_bias_backward(dbv, dxv, PLC_CUDA_F32, BR, BC, NULL) == 0);
    CU_ASSERT(plc_cuda_bias_backward(dbv2, dxv, PLC_CUDA_F32, BR, BC, NULL) == 0);
    float h1[BC], h2[BC]; /* no atomics: two runs give the same bits */
    CU_ASSERT(cudaMemcpy(h1, dbv, sizeof h1, cudaMemcpyDeviceToHost) == cudaSuccess);
    CU_ASSERT(cudaMemcpy(h2, dbv2, sizeof h2, cudaMemcpyDeviceToHost) == cudaSuccess);
    CU_ASSERT(memcmp(h1, h2, sizeof h1) == 0);
    cudaFree(dbv2);
    expect_close("bias add", yv, y, N, 1e-6);
    expect_close("gelu forward", glv, gl, N, 1e-6);
    expect_close("gelu backward", dxv, dx, N, 1e-6);
    expect_close("bias backward", dbv, dbias, BC, 1e-6);
    cudaFree(xv), cudaFree(gv), cudaFree(bv);

    /* positions of a context-parallel rank, and NULL = 0..T-1 */
    enum { PB = 3, PT = 8, PD = 70, PP = 32, PN = PB * PT * PD };
    int32_t pos[PT] = {4, 5, 6, 7, 24, 25, 26, 27};
    float *px = tk_alloc(PN), *tab = tk_alloc(PP * PD), *pg = tk_alloc(PN), *py = tk_alloc(PN), *py0 = tk_alloc(PN);
    float *dtab = tk_alloc(PP * PD);
    tk_fill(px, PN, 68, 1.0f), tk_fill(tab, PP * PD, 69, 1.0f), tk_fill(pg, PN, 70, 1.0f);
    plc_k_pos_embedding_forward(py, px, tab, pos, PB, PT, PD);
    plc_k_pos_embedding_forward(py0, px, tab, NULL, PB, PT, PD);
    plc_k_pos_embedding_backward(dtab, pg, pos, PB, PT, PD);
    plc_k_pos_embedding_backward(dtab, pg, NULL, PB, PT, PD);
    float *pxv = UP(px, PN), *tv = UP(tab, PP * PD), *pgv = UP(pg, PN), *pyv = ZEROS(float, PN);
    float *py0v = ZEROS(float, PN), *dtv = ZEROS(float, PP * PD);
    int32_t *dpos = UP(pos, PT);
    CU_ASSERT(plc_cuda_pos_embedding_forward(pyv, pxv, tv, PLC_CUDA_F32, dpos, PB, PT, PD, NULL) == 0);
    CU_ASSERT(plc_cuda_pos_embedding_forward(py0v, pxv, tv, PLC_CUDA_F32, NULL, PB, PT, PD, NULL) == 0);
    CU_ASSERT(plc_cuda_pos_embedding_backward(dtv, pgv, PLC_CUDA_F32, dpos, PB, PT, PD, NULL) == 0);
    CU_ASSERT(plc_cuda_pos_embedding_backward(dtv, pgv, PLC_CUDA_F32, NULL, PB, PT, PD, NULL) == 0);
    expect_close("positions forward", pyv, py, PN, 0);
    expect_close("positions forward, default positions", py0v, py0, PN, 0);
    expect_close("positions backward", dtv, dtab, PP * PD, 0); /* the CPU's order of adds */
    cudaFree(pxv), cudaFree(tv), cudaFree(pgv), cudaFree(dpos);
    free(in), free(dout), free(out), free(din), free(x), free(g), free(y), free(gl), free(dx);
    free(px), free(tab), free(pg), free(py), free(py0), free(dtab);
}

/* The step's scalars on the device (step_scalars.cu, adamw_dev): the host's
 * double arithmetic to the bit, and AdamW recorded in a CUDA graph once and
 * replayed over three steps with its constants rewritten in device memory
 * before each launch: the same bits as the eager kernel given each step's
 * values (nothing of a step is baked into the graph). */
static void test_step_scalars_graph(void)
{
    enum { R = 3001, N = 4099 };
    float rows[R];
    tk_fill(rows, R, 21, 3.0f);
    double acc = 1.25, part = 0.1875, host = acc;
    for (int r = 0; r < R; r++) host += (double)rows[r];
    double *dacc = UP(&acc, 1), *dpart = UP(&part, 1);
    float *drows = UP(rows, R);
    CU_ASSERT(plc_cuda_sum_rows_f64(dacc, drows, R, NULL) == 0);
    double got = 0;
    CU_ASSERT_FATAL(cudaMemcpy(&got, dacc, sizeof got, cudaMemcpyDeviceToHost) == cudaSuccess);
    CU_ASSERT(memcmp(&got, &host, sizeof got) == 0);
    host += part;
    CU_ASSERT(plc_cuda_add_f64(dacc, dpart, NULL) == 0);
    CU_ASSERT_FATAL(cudaMemcpy(&got, dacc, sizeof got, cudaMemcpyDeviceToHost) == cudaSuccess);
    CU_ASSERT(memcmp(&got, &host, sizeof got) == 0);
    const double sumsqs[] = {0.0, 0.7, 2.0, 1e6, 123.456}, norms[] = {0.0, 1.0, 5.0};
    float *dscale = ZEROS(float, 1);
    for (size_t i = 0; i < sizeof sumsqs / sizeof sumsqs[0]; i++)
        for (size_t j = 0; j < sizeof norms / sizeof norms[0]; j++) {
            double nrm = sqrt(sumsqs[i]);
            float want = norms[j] > 0 && nrm > norms[j] ? (float)(norms[j] / nrm) : 1.0f, f = 0;
            double *dss = UP(&sumsqs[i], 1);
            CU_ASSERT(plc_cuda_clip_scale(dscale, dss, norms[j], NULL) == 0);
            CU_ASSERT_FATAL(cudaMemcpy(&f, dscale, sizeof f, cudaMemcpyDeviceToHost) == cudaSuccess);
            CU_ASSERT(memcmp(&f, &want, sizeof f) == 0);
            cudaFree(dss);
        }
    cudaFree(dacc), cudaFree(dpart), cudaFree(drows);

    float p[N], g[N], zero[N], sc = 0.75f;
    tk_fill(p, N, 22, 1.0f), tk_fill(g, N, 23, 1.0f);
    memset(zero, 0, sizeof zero);
    float *gp = UP(p, N), *gm = UP(zero, N), *gv = UP(zero, N), *gg = UP(g, N); /* the graph's */
    float *ep = UP(p, N), *em = UP(zero, N), *ev = UP(zero, N);                  /* the eager one's */
    float *dsc = UP(&sc, 1);
    plc_adamw_consts *table = (plc_adamw_consts *)dev_upload(NULL, sizeof(plc_adamw_consts));
    cudaStream_t stream;
    CU_ASSERT_FATAL(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) == cudaSuccess);
    cudaGraph_t graph = NULL;
    cudaGraphExec_t exec = NULL;
    CU_ASSERT_FATAL(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal) == cudaSuccess);
    CU_ASSERT(plc_cuda_adamw_dev(gp, gg, gm, gv, N, table, dsc, stream) == 0);
    CU_ASSERT_FATAL(cudaStreamEndCapture(stream, &graph) == cudaSuccess);
    CU_ASSERT_FATAL(cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess);
    for (int64_t t = 1; t <= 3; t++) {
        double lr = 1e-2 / (double)t; /* a schedule: different every step */
        plc_adamw_consts c = plc_adamw_prepare(t, lr, 0.9, 0.95, 1e-8, 0.1);
        CU_ASSERT_FATAL(cudaMemcpyAsync(table, &c, sizeof c, cudaMemcpyHostToDevice, stream) == cudaSuccess);
        CU_ASSERT_FATAL(cudaGraphLaunch(exec, stream) == cudaSuccess);
        CU_ASSERT(plc_cuda_adamw(ep, gg, em, ev, N, lr, 0.9, 0.95, 1e-8, 0.1, t, sc, stream) == 0);
    }
    CU_ASSERT_FATAL(cudaStreamSynchronize(stream) == cudaSuccess);
    float a[N], b[N];
    float *pairs[3][2] = {{gp, ep}, {gm, em}, {gv, ev}};
    for (int k = 0; k < 3; k++) {
        CU_ASSERT_FATAL(cudaMemcpy(a, pairs[k][0], sizeof a, cudaMemcpyDeviceToHost) == cudaSuccess);
        CU_ASSERT_FATAL(cudaMemcpy(b, pairs[k][1], sizeof b, cudaMemcpyDeviceToHost) == cudaSuccess);
        CU_ASSERT(memcmp(a, b, sizeof a) == 0);
    }
    CU_ASSERT(memcmp(a, zero, sizeof a) != 0); /* the update ran */
    cudaGraphExecDestroy(exec), cudaGraphDestroy(graph), cudaStreamDestroy(stream);
    cudaFree(gp), cudaFree(gm), cudaFree(gv), cudaFree(gg), cudaFree(ep), cudaFree(em), cudaFree(ev);
    cudaFree(dsc), cudaFree(table), cudaFree(dscale);
}

static int suite_init(void) { return (ctx = plc_cuda_create(0)) ? 0 : 1; }
static int suite_clean(void)
{
    plc_cuda_destroy(ctx);
    ctx = NULL;
    return 0;
}

void register_test_kernels_cuda(void)
{
    if (plc_cuda_device_count() == 0) {
        printf("cuda kernels: skipped, no GPU\n");
        return;
    }
    CU_pSuite s = CU_add_suite("cuda_kernels", suite_init, suite_clean);
    CU_add_test(s, "matmul against the CPU", test_matmul);
    CU_add_test(s, "rmsnorm, rope, swiglu, adds against the CPU", test_rmsnorm_rope_swiglu);
    CU_add_test(s, "embedding and cross-entropy against the CPU", test_embedding_xent);
    CU_add_test(s, "attention (both forms, GQA, CP positions) against the CPU", test_attention);
    CU_add_test(s, "adamw, sum of squares, bf16 casts and bf16 flash", test_optimizer_bf16);
    CU_add_test(s, "bf16 flash attention on tensor cores against the fp32 CPU kernels", test_attention_tc);
    CU_add_test(s, "layernorm, gelu, bias, positions (GPT block) against the CPU", test_gpt_block);
    CU_add_test(s, "the step's scalars on the device; AdamW replayed from a graph", test_step_scalars_graph);
    CU_add_test(s, "mixture-of-experts route, permutation, expert matmuls, combine and backwards against the CPU", test_moe);
}

#else

void register_test_kernels_cuda(void)
{
    printf("cuda kernels: skipped, built without CUDA\n");
}

#endif
