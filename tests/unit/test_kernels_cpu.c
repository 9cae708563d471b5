/* tests/unit/test_kernels_cpu.c: CPU kernels other than attention: forward
 * results against direct formulas, backward passes against finite
 * differences, AdamW against a hand-computed step, bf16 rounding. */
#include "kernels/kernels.h"
#include "kernels/common/bf16.h"
#include "kernels/common/expf.h"
#include "test_kernels_util.h"

/* ---- embedding ------------------------------------------------------------ */

static void test_embedding_shard(void)
{
    enum { V = 10, D = 3, R = 5 };
    float table[V * D], out[R * D], dtab[V * D] = {0}, dout[R * D];
    int32_t tok[R] = {1, 7, 1, 4, 9};
    tk_fill(table, V * D, 1, 1.0f);
    tk_fill(dout, R * D, 2, 1.0f);
    /* shard [4, 8): tokens 7 and 4 are in it */
    plc_k_embedding_forward(out, tok, table + 4 * D, R, D, 4, 4);
    for (int r = 0; r < R; r++)
        for (int c = 0; c < D; c++) {
            int in = tok[r] >= 4 && tok[r] < 8;
            CU_ASSERT_EQUAL(out[r * D + c], in ? table[tok[r] * D + c] : 0.0f);
        }
    /* full table backward: token 1 appears twice, its rows add up */
    plc_k_embedding_backward(dtab, dout, tok, R, D, 0, V);
    plc_k_embedding_backward(dtab, dout, tok, R, D, 0, V); /* accumulates */
    for (int c = 0; c < D; c++) {
        CU_ASSERT_DOUBLE_EQUAL(dtab[1 * D + c], 2 * (dout[0 * D + c] + dout[2 * D + c]), 1e-6);
        CU_ASSERT_DOUBLE_EQUAL(dtab[9 * D + c], 2 * dout[4 * D + c], 1e-6);
        CU_ASSERT_EQUAL(dtab[0 * D + c], 0.0f);
    }
    /* a shard receives only its own tokens */
    float dshard[4 * D] = {0};
    plc_k_embedding_backward(dshard, dout, tok, R, D, 4, 4);
    for (int c = 0; c < D; c++) {
        CU_ASSERT_EQUAL(dshard[(7 - 4) * D + c], dout[1 * D + c]);
        CU_ASSERT_EQUAL(dshard[(4 - 4) * D + c], dout[3 * D + c]);
        CU_ASSERT_EQUAL(dshard[1 * D + c], 0.0f);
    }
}

/* ---- RMSNorm ---------------------------------------------------------------- */

typedef struct { float *out, *rstd, *in, *w; int64_t rows, dim; float eps; } rms_ctx;
static void rms_fwd(void *p)
{
    rms_ctx *c = p;
    plc_k_rmsnorm_forward(c->out, c->rstd, c->in, c->w, c->rows, c->dim, c->eps);
}

static void test_rmsnorm(void)
{
    enum { R = 3, D = 7 };
    float in[R * D], w[D], out[R * D], rstd[R], dout[R * D];
    tk_fill(in, R * D, 3, 1.5f);
    tk_fill(w, D, 4, 1.0f);
    tk_fill(dout, R * D, 5, 1.0f);
    rms_ctx c = {out, rstd, in, w, R, D, 1e-5f};
    rms_fwd(&c);
    for (int r = 0; r < R; r++) {
        double ss = 0;
        for (int k = 0; k < D; k++) ss += (double)in[r * D + k] * in[r * D + k];
        double s = 1.0 / sqrt(ss / D + 1e-5);
        CU_ASSERT_DOUBLE_EQUAL(rstd[r], s, 1e-6 * s);
        for (int k = 0; k < D; k++) CU_ASSERT_DOUBLE_EQUAL(out[r * D + k], in[r * D + k] * s * w[k], 1e-6);
    }
    float din[R * D] = {0}, dw[D] = {0};
    plc_k_rmsnorm_backward(din, dw, dout, in, w, rstd, R, D);
    tk_loss L = {rms_fwd, &c, out, dout, R * D};
    tk_fd_check("rmsnorm din", in, R * D, din, &L, 1e-2f, 1e-3);
    tk_fd_check("rmsnorm dweight", w, D, dw, &L, 1e-2f, 1e-3);
    /* accumulation: a second call doubles the gradient */
    float din2[R * D], dw2[D];
    memcpy(din2, din, sizeof din);
    memcpy(dw2, dw, sizeof dw);
    plc_k_rmsnorm_backward(din2, dw2, dout, in, w, rstd, R, D);
    CU_ASSERT(tk_max_diff(din2, din, R * D) > 0);
    for (int i = 0; i < R * D; i++) CU_ASSERT_DOUBLE_EQUAL(din2[i], 2 * din[i], 1e-6);
    for (int i = 0; i < D; i++) CU_ASSERT_DOUBLE_EQUAL(dw2[i], 2 * dw[i], 1e-6);
}

/* ---- matmul ------------------------------------------------------------------ */

/* every transpose and beta against a double reference; the larger shapes
 * span several GEMM panels with ragged edges (kernels/cpu/matmul.c) and, for
 * K > 256, several chunks of k in the sgemm (kernels/cpu/gemm.c: with
 * beta = 0 the first one writes C); C is strided (ldc > N) so a panel's
 * offsets are checked too. alpha = 1 reads op(A) = A in place, other alphas
 * pack it. */
static void check_matmul(int64_t M, int64_t N, int64_t K, int64_t ldc, float alpha)
{
    float *A = tk_alloc(M * K), *B = tk_alloc(K * N), *At = tk_alloc(K * M), *Bt = tk_alloc(N * K);
    float *C = tk_alloc(M * ldc), *C0 = tk_alloc(M * ldc), *ref = tk_alloc(M * ldc);
    tk_fill(A, M * K, 6, 1.0f);
    tk_fill(B, K * N, 7, 1.0f);
    tk_fill(C0, M * ldc, 8, 1.0f);
    for (int64_t i = 0; i < M; i++)
        for (int64_t k = 0; k < K; k++) At[k * M + i] = A[i * K + k];
    for (int64_t k = 0; k < K; k++)
        for (int64_t j = 0; j < N; j++) Bt[j * K + k] = B[k * N + j];
    for (int ta = 0; ta < 2; ta++)
        for (int tb = 0; tb < 2; tb++)
            for (int beta = 0; beta < 2; beta++) {
                memcpy(C, C0, sizeof(float) * (size_t)(M * ldc));
                plc_k_matmul_strided(C, ldc, ta ? At : A, ta ? M : K, tb ? Bt : B, tb ? K : N, M, N, K,
                                     ta, tb, alpha, (float)beta);
                for (int64_t i = 0; i < M; i++)
                    for (int64_t j = 0; j < ldc; j++) {
                        double s = 0;
                        for (int64_t k = 0; k < K && j < N; k++) s += (double)A[i * K + k] * B[k * N + j];
                        /* columns past N are not C's: they must stay as they were */
                        ref[i * ldc + j] = j < N ? (float)(alpha * s + beta * C0[i * ldc + j]) : C0[i * ldc + j];
                    }
                CU_ASSERT(tk_max_diff(C, ref, M * ldc) < 1e-6 * (double)K);
            }
    free(A), free(B), free(At), free(Bt), free(C), free(C0), free(ref);
}

static void test_matmul(void)
{
    check_matmul(5, 4, 3, 4, 0.5f);
    check_matmul(300, 270, 170, 275, 0.5f);
    check_matmul(67, 100, 600, 101, 1.0f);
    check_matmul(67, 100, 600, 101, 0.5f);
}

/* ---- RoPE --------------------------------------------------------------------- */

typedef struct { float *out, *in; const int32_t *pos; int64_t B, T, H, hd; } rope_ctx;
static void rope_fwd(void *p)
{
    rope_ctx *c = p;
    plc_k_rope_forward(c->out, c->in, c->pos, c->B, c->T, c->H, c->hd, 10000.0f);
}

static void test_rope(void)
{
    enum { B = 2, T = 5, H = 3, HD = 8, N = B * T * H * HD };
    float in[N], out[N], dout[N], din[N] = {0};
    tk_fill(in, N, 9, 1.0f);
    tk_fill(dout, N, 10, 1.0f);
    rope_ctx c = {out, in, NULL, B, T, H, HD};
    rope_fwd(&c);
    for (int b = 0; b < B; b++)
        for (int t = 0; t < T; t++)
            for (int h = 0; h < H; h++)
                for (int i = 0; i < HD / 2; i++) {
                    int64_t o = ((b * T + t) * H + h) * HD + 2 * i;
                    double a = t * pow(10000.0, -2.0 * i / HD);
                    double y0 = in[o] * cos(a) - in[o + 1] * sin(a);
                    double y1 = in[o] * sin(a) + in[o + 1] * cos(a);
                    CU_ASSERT_DOUBLE_EQUAL(out[o], y0, 1e-6);
                    CU_ASSERT_DOUBLE_EQUAL(out[o + 1], y1, 1e-6);
                }
    plc_k_rope_backward(din, dout, NULL, B, T, H, HD, 10000.0f);
    tk_loss L = {rope_fwd, &c, out, dout, N};
    tk_fd_check("rope din", in, N, din, &L, 1e-2f, 1e-3);
    /* the rotation is orthogonal: the backward of the forward is the input */
    float back[N] = {0};
    plc_k_rope_backward(back, out, NULL, B, T, H, HD, 10000.0f);
    CU_ASSERT(tk_max_diff(back, in, N) < 1e-6);

    /* explicit positions: a slice of a longer sequence, starting at 3 */
    enum { TL = 9 };
    float lin[B * TL * H * HD], lout[B * TL * H * HD], sout[N];
    tk_fill(lin, B * TL * H * HD, 11, 1.0f);
    plc_k_rope_forward(lout, lin, NULL, B, TL, H, HD, 10000.0f);
    int32_t pos[T] = {3, 4, 5, 6, 7};
    float sin_[N];
    for (int b = 0; b < B; b++)
        memcpy(sin_ + b * T * H * HD, lin + (b * TL + 3) * H * HD, sizeof(float) * T * H * HD);
    plc_k_rope_forward(sout, sin_, pos, B, T, H, HD, 10000.0f);
    for (int b = 0; b < B; b++)
        CU_ASSERT(memcmp(sout + b * T * H * HD, lout + (b * TL + 3) * H * HD,
                         sizeof(float) * T * H * HD) == 0);
    /* in place */
    memcpy(sout, in, sizeof in);
    plc_k_rope_forward(sout, sout, NULL, B, T, H, HD, 10000.0f);
    CU_ASSERT(memcmp(sout, out, sizeof out) == 0);
}

/* ---- SwiGLU --------------------------------------------------------------------- */

typedef struct { float *out, *gate, *up; int64_t n; } swiglu_ctx;
static void swiglu_fwd(void *p)
{
    swiglu_ctx *c = p;
    plc_k_swiglu_forward(c->out, c->gate, c->up, c->n);
}

static void test_swiglu(void)
{
    enum { N = 40 };
    float g[N], u[N], out[N], dout[N], dg[N] = {0}, du[N] = {0};
    tk_fill(g, N, 12, 4.0f);
    tk_fill(u, N, 13, 1.0f);
    tk_fill(dout, N, 14, 1.0f);
    swiglu_ctx c = {out, g, u, N};
    swiglu_fwd(&c);
    for (int i = 0; i < N; i++) CU_ASSERT_DOUBLE_EQUAL(out[i], g[i] / (1 + exp(-g[i])) * u[i], 1e-6);
    plc_k_swiglu_backward(dg, du, dout, g, u, N);
    tk_loss L = {swiglu_fwd, &c, out, dout, N};
    tk_fd_check("swiglu dgate", g, N, dg, &L, 1e-2f, 1e-3);
    tk_fd_check("swiglu dup", u, N, du, &L, 1e-2f, 1e-3);
}

static void test_elementwise(void)
{
    float a[5] = {1, 2, 3, 4, 5}, b[5] = {0.5f, -1, 2, 0, 1}, o[5];
    plc_k_add(o, a, b, 5);
    CU_ASSERT_EQUAL(o[1], 1.0f);
    plc_k_accumulate(o, a, 5);
    CU_ASSERT_EQUAL(o[2], 8.0f);
    plc_k_scale(o, 0.5f, 5);
    CU_ASSERT_EQUAL(o[4], 5.5f);
    plc_k_zero(o, 5);
    CU_ASSERT_EQUAL(o[0], 0.0f);
    CU_ASSERT_DOUBLE_EQUAL(plc_k_sum(a, 5), 15.0, 0);
    CU_ASSERT_DOUBLE_EQUAL(plc_k_sum_squares(a, 5), 55.0, 0);
}

/* ---- cross-entropy ------------------------------------------------------------------ */

typedef struct { float *loss, *logits; const int32_t *tgt; int64_t rows, V; } xent_ctx;
static void xent_fwd(void *p)
{
    xent_ctx *c = p;
    plc_k_cross_entropy(c->loss, NULL, c->logits, c->tgt, c->rows, c->V, 1.0f);
}

static void test_cross_entropy(void)
{
    enum { R = 4, V = 9 };
    float logits[R * V], loss[R], d[R * V], w[R] = {0.25f, 0.25f, 0.25f, 0.25f};
    int32_t tgt[R] = {0, 8, 3, 3};
    tk_fill(logits, R * V, 15, 3.0f);
    logits[5] = 80.0f; /* a large logit: the max shift must keep exp finite */
    plc_k_cross_entropy(loss, d, logits, tgt, R, V, 0.25f);
    for (int r = 0; r < R; r++) {
        double m = -INFINITY, s = 0;
        for (int c = 0; c < V; c++) m = fmax(m, logits[r * V + c]);
        for (int c = 0; c < V; c++) s += exp(logits[r * V + c] - m);
        CU_ASSERT_DOUBLE_EQUAL(loss[r], log(s) + m - logits[r * V + tgt[r]], 1e-5);
    }
    xent_ctx c = {loss, logits, tgt, R, V};
    tk_loss L = {xent_fwd, &c, loss, w, R};
    tk_fd_check("cross-entropy dlogits", logits, R * V, d, &L, 1e-2f, 1e-3);
    /* in place: dlogits written over the logits */
    float inplace[R * V];
    memcpy(inplace, logits, sizeof logits);
    plc_k_cross_entropy(NULL, inplace, inplace, tgt, R, V, 0.25f);
    CU_ASSERT(memcmp(inplace, d, sizeof d) == 0);
}

/* Two vocabulary shards combined by hand (MAX of maxes, SUM of sums and
 * target logits) reproduce the unsharded loss and gradient. */
static void test_cross_entropy_sharded(void)
{
    enum { R = 3, V = 10, V0 = 6, V1 = V - V0 };
    float logits[R * V], s0[R * V0], s1[R * V1], loss[R], d[R * V];
    int32_t tgt[R] = {2, 7, 9};
    tk_fill(logits, R * V, 16, 5.0f);
    for (int r = 0; r < R; r++) {
        memcpy(s0 + r * V0, logits + r * V, sizeof(float) * V0);
        memcpy(s1 + r * V1, logits + r * V + V0, sizeof(float) * V1);
    }
    plc_k_cross_entropy(loss, d, logits, tgt, R, V, 0.5f);

    float m0[R], m1[R], gm[R], sum0[R], sum1[R], t0[R], t1[R], gs[R], gt[R];
    plc_k_xent_local_max(m0, s0, R, V0);
    plc_k_xent_local_max(m1, s1, R, V1);
    for (int r = 0; r < R; r++) gm[r] = fmaxf(m0[r], m1[r]);
    plc_k_xent_local_sumexp(sum0, t0, s0, gm, tgt, R, V0, 0);
    plc_k_xent_local_sumexp(sum1, t1, s1, gm, tgt, R, V1, V0);
    for (int r = 0; r < R; r++) {
        gs[r] = sum0[r] + sum1[r];
        gt[r] = t0[r] + t1[r];
        CU_ASSERT_EQUAL(gt[r], logits[r * V + tgt[r]]);
    }
    float l0[R], l1[R], d0[R * V0], d1[R * V1];
    plc_k_xent_loss_grad(l0, d0, s0, gm, gs, gt, tgt, R, V0, 0, 0.5f);
    plc_k_xent_loss_grad(l1, d1, s1, gm, gs, gt, tgt, R, V1, V0, 0.5f);
    for (int r = 0; r < R; r++) {
        CU_ASSERT_DOUBLE_EQUAL(l0[r], loss[r], 1e-5);
        CU_ASSERT_EQUAL(l0[r], l1[r]);
        CU_ASSERT(tk_max_diff(d0 + r * V0, d + r * V, V0) < 1e-6);
        CU_ASSERT(tk_max_diff(d1 + r * V1, d + r * V + V0, V1) < 1e-6);
    }
}

/* ---- AdamW ---------------------------------------------------------------------------- */

static void test_adamw(void)
{
    /* step 1 by hand: p = 1 * (1 - 0.1 * 0.1) = 0.99; m = 0.05; v = 0.00025;
     * m_hat = 0.5, v_hat = 0.25 -> p = 0.99 - 0.1 * 0.5 / (0.5 + 1e-8) = 0.89 */
    float p = 1.0f, g = 0.5f, m = 0.0f, v = 0.0f;
    plc_k_adamw(&p, &g, &m, &v, 1, 0.1, 0.9, 0.999, 1e-8, 0.1, 1, 1.0f);
    CU_ASSERT_DOUBLE_EQUAL(p, 0.89, 1e-6);
    CU_ASSERT_DOUBLE_EQUAL(m, 0.05, 5e-9);
    CU_ASSERT_DOUBLE_EQUAL(v, 0.00025, 3e-11);
    /* step 2, gradient clipped by half, no weight decay, in double by hand */
    float g2 = -2.0f;
    plc_k_adamw(&p, &g2, &m, &v, 1, 0.01, 0.9, 0.999, 1e-8, 0.0, 2, 0.5f);
    double gg = -1.0, mm = 0.9 * 0.05 + 0.1 * gg, vv = 0.999 * 0.00025 + 0.001 * gg * gg;
    double mh = mm / (1 - 0.81), vh = vv / (1 - 0.999 * 0.999);
    double pp = 0.89 - 0.01 * mh / (sqrt(vh) + 1e-8);
    CU_ASSERT_DOUBLE_EQUAL(m, mm, 1e-6 * fabs(mm));
    CU_ASSERT_DOUBLE_EQUAL(v, vv, 1e-7 * vv);
    CU_ASSERT_DOUBLE_EQUAL(p, pp, 2e-6);
}

/* ---- bf16 ------------------------------------------------------------------------------ */

static float from_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static void test_bf16(void)
{
    CU_ASSERT_EQUAL(plc_f32_to_bf16(1.0f), 0x3f80);
    CU_ASSERT_EQUAL(plc_f32_to_bf16(-1.5f), 0xbfc0);
    CU_ASSERT_EQUAL(plc_f32_to_bf16(from_bits(0x3f808000u)), 0x3f80); /* tie, even below */
    CU_ASSERT_EQUAL(plc_f32_to_bf16(from_bits(0x3f818000u)), 0x3f82); /* tie, even above */
    CU_ASSERT_EQUAL(plc_f32_to_bf16(from_bits(0x3f808001u)), 0x3f81); /* above the tie */
    CU_ASSERT_EQUAL(plc_f32_to_bf16(from_bits(0x3f807fffu)), 0x3f80); /* below the tie */
    CU_ASSERT_EQUAL(plc_f32_to_bf16(from_bits(0x00018000u)), 0x0002); /* subnormal tie */
    CU_ASSERT_EQUAL(plc_f32_to_bf16(from_bits(0x00008000u)), 0x0000);
    CU_ASSERT_EQUAL(plc_f32_to_bf16(from_bits(0x7f7fffffu)), 0x7f80); /* FLT_MAX rounds to inf */
    CU_ASSERT_EQUAL(plc_f32_to_bf16(INFINITY), 0x7f80);
    CU_ASSERT_EQUAL(plc_f32_to_bf16(-INFINITY), 0xff80);
    uint16_t nan = plc_f32_to_bf16(from_bits(0x7f800001u)); /* signalling NaN, low payload */
    CU_ASSERT(isnan(plc_bf16_to_f32(nan)));
    CU_ASSERT_EQUAL(plc_bf16_to_f32(0x4049), 3.140625f);
    /* array casts and the round trip of representable values */
    float x[4] = {1.0f, 3.140625f, -0.0f, 65280.0f}, y[4];
    uint16_t h[4];
    plc_k_cast_f32_to_bf16(h, x, 4);
    plc_k_cast_bf16_to_f32(y, h, 4);
    CU_ASSERT(memcmp(x, y, sizeof x) == 0);
}

/* plc_expf (kernels/common/expf.h) against exp in double: within 2 ulp
 * over its range, and its edges: 0 below -86.5, inf above ln(FLT_MAX),
 * NaN through, exp(0) = 1 */
static void test_expf(void)
{
    double worst = 0;
    for (float x = -86.4f; x < 88.7f; x += 0.01234f) {
        double t = exp((double)x), rel = fabs((double)plc_expf(x) - t) / t;
        if (rel > worst) worst = rel;
    }
    CU_ASSERT(worst < 2.0 * 5.96e-8);
    CU_ASSERT(plc_expf(0.0f) == 1.0f);
    CU_ASSERT(plc_expf(-INFINITY) == 0.0f);
    CU_ASSERT(plc_expf(-100.0f) == 0.0f);
    CU_ASSERT(isinf(plc_expf(89.0f)) && plc_expf(89.0f) > 0);
    CU_ASSERT(isfinite(plc_expf(88.72f)));
    CU_ASSERT(isnan(plc_expf(NAN)));
}

void register_test_kernels_cpu(void)
{
    CU_pSuite s = CU_add_suite("kernels", NULL, NULL);
    CU_add_test(s, "embedding over a vocabulary shard", test_embedding_shard);
    CU_add_test(s, "rmsnorm forward and backward (finite differences)", test_rmsnorm);
    CU_add_test(s, "matmul transposes, beta, ragged panels, strided C", test_matmul);
    CU_add_test(s, "rope forward, positions, backward (finite differences)", test_rope);
    CU_add_test(s, "swiglu backward (finite differences)", test_swiglu);
    CU_add_test(s, "add, accumulate, scale, sums", test_elementwise);
    CU_add_test(s, "cross-entropy loss and dlogits (finite differences)", test_cross_entropy);
    CU_add_test(s, "cross-entropy over two vocabulary shards", test_cross_entropy_sharded);
    CU_add_test(s, "adamw against hand-computed steps", test_adamw);
    CU_add_test(s, "bf16 round to nearest even", test_bf16);
    CU_add_test(s, "plc_expf: 2 ulp over its range, its edges", test_expf);
}
