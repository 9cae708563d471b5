/* test_kernels_moe.c: the mixture-of-experts kernels (kernels/cpu/moe.c)
 * against hand-worked routing, naive per-token loops and finite
 * differences; and the MoE layer's rows of the tensor table
 * (common/tensors.c). */
#include <CUnit/CUnit.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/tensors.h"
#include "kernels/kernels.h"

/* 3 tokens, 4 experts, top-2, softmax: hand-worked choices and places */
static void test_route_hand(void)
{
    const float z[12] = {0, 1, 2, 3, /* token 0: experts 3, 2 */
                         3, 2, 1, 0, /* token 1: experts 0, 1 */
                         0, 0, 5, 5}; /* token 2: a tie: experts 2 (the lower), 3 */
    float scores[12], w[6];
    int32_t ex[6], pos[6], counts[4];
    int64_t dropped = plc_k_moe_route(scores, ex, pos, w, counts, z, 3, 4, 2, 0, 3, 1.0f);
    CU_ASSERT_EQUAL(dropped, 0);
    const int32_t want_ex[6] = {3, 2, 0, 1, 2, 3};
    for (int i = 0; i < 6; i++) CU_ASSERT_EQUAL(ex[i], want_ex[i]);
    /* kept rows: e0 1, e1 1, e2 2, e3 2; blocks at 0, 1, 2, 4 */
    const int32_t want_counts[4] = {1, 1, 2, 2}, want_pos[6] = {4, 2, 0, 1, 3, 5};
    for (int i = 0; i < 4; i++) CU_ASSERT_EQUAL(counts[i], want_counts[i]);
    for (int i = 0; i < 6; i++) CU_ASSERT_EQUAL(pos[i], want_pos[i]);
    /* weights: the top-2 probabilities renormalised: e / (1 + e) and 1 / (1 + e) */
    double e = exp(1.0);
    CU_ASSERT_DOUBLE_EQUAL(w[0], e / (1 + e), 1e-6);
    CU_ASSERT_DOUBLE_EQUAL(w[1], 1 / (1 + e), 1e-6);
    CU_ASSERT_DOUBLE_EQUAL(w[4], 0.5, 1e-6);
    double sum = 0;
    for (int i = 0; i < 4; i++) sum += scores[i];
    CU_ASSERT_DOUBLE_EQUAL(sum, 1.0, 1e-6);
    /* capacity 1: the second copy for experts 2 and 3 is dropped, counted */
    dropped = plc_k_moe_route(scores, ex, pos, w, counts, z, 3, 4, 2, 0, 1, 2.0f);
    CU_ASSERT_EQUAL(dropped, 2);
    const int32_t cap_pos[6] = {3, 2, 0, 1, -1, -1};
    for (int i = 0; i < 6; i++) CU_ASSERT_EQUAL(pos[i], cap_pos[i]);
    CU_ASSERT_DOUBLE_EQUAL(w[4], 1.0, 1e-6); /* route scale 2 */
    /* sigmoid scores */
    plc_k_moe_route(scores, ex, pos, w, counts, z, 3, 4, 2, 1, 3, 1.0f);
    CU_ASSERT_DOUBLE_EQUAL(scores[3], 1 / (1 + exp(-3.0)), 1e-6);
    CU_ASSERT_EQUAL(ex[0], 3);
}

static double frand(unsigned *s)
{
    *s = *s * 1103515245u + 12345u;
    return ((*s >> 8) & 0xffff) / 65536.0 - 0.5;
}

/* the forward chain against a naive per-token loop: out_t = sum_j w_j
 * swiglu(x_t Wg_e, x_t Wu_e) Wd_e^T; and the permutation's backward
 * against its definition */
static void test_chain_naive(void)
{
    enum { T = 6, H = 5, E = 3, K = 2, F = 4, P = T * K };
    unsigned s = 7;
    float z[T * E], x[T * H], Wg[E * H * F], Wu[E * H * F], Wd[E * H * F];
    for (int i = 0; i < T * E; i++) z[i] = (float)frand(&s) * 4;
    for (int i = 0; i < T * H; i++) x[i] = (float)frand(&s);
    for (int i = 0; i < E * H * F; i++) Wg[i] = (float)frand(&s), Wu[i] = (float)frand(&s), Wd[i] = (float)frand(&s);
    float scores[T * E], w[T * K], xp[P * H], g[P * F], u[P * F], sw[P * F], y[P * H], out[T * H];
    int32_t ex[T * K], pos[T * K], counts[E];
    plc_k_moe_route(scores, ex, pos, w, counts, z, T, E, K, 0, T, 1.0f);
    plc_k_moe_permute(xp, x, pos, T, H, K, P);
    plc_k_moe_matmul(g, xp, Wg, counts, E, P, H, F, 0, 0.0f);
    plc_k_moe_matmul(u, xp, Wu, counts, E, P, H, F, 0, 0.0f);
    plc_k_swiglu_forward(sw, g, u, P * F);
    plc_k_moe_matmul(y, sw, Wd, counts, E, P, F, H, 1, 0.0f);
    plc_k_moe_unpermute(out, y, pos, w, T, H, K);
    double worst = 0;
    for (int t = 0; t < T; t++)
        for (int c = 0; c < H; c++) {
            double ref = 0;
            for (int j = 0; j < K; j++) {
                int e = ex[t * K + j];
                for (int f = 0; f < F; f++) {
                    double gg = 0, uu = 0;
                    for (int i = 0; i < H; i++) {
                        gg += (double)x[t * H + i] * Wg[(e * H + i) * F + f];
                        uu += (double)x[t * H + i] * Wu[(e * H + i) * F + f];
                    }
                    ref += w[t * K + j] * gg / (1 + exp(-gg)) * uu * Wd[(e * H + c) * F + f];
                }
            }
            worst = fmax(worst, fabs(ref - out[t * H + c]));
        }
    CU_ASSERT(worst < 1e-5);
    /* permute backward: dx_t = sum over its copies of dxp's rows */
    float dx[T * H];
    memset(dx, 0, sizeof dx);
    plc_k_moe_permute_backward(dx, y, pos, T, H, K);
    for (int t = 0; t < T; t++) {
        double ref = 0;
        for (int j = 0; j < K; j++) ref += y[pos[t * K + j] * H + 1];
        CU_ASSERT_DOUBLE_EQUAL(dx[t * H + 1], ref, 1e-6);
    }
    /* the weight gradient: dW_e += A_e^T B_e, against a loop */
    float dW[E * H * F];
    memset(dW, 0, sizeof dW);
    plc_k_moe_matmul_dw(dW, xp, g, counts, E, H, F);
    int e = ex[0];
    int64_t r0 = 0;
    for (int k = 0; k < e; k++) r0 += counts[k];
    double ref = 0;
    for (int64_t r = r0; r < r0 + counts[e]; r++) ref += (double)xp[r * H + 2] * g[r * F + 3];
    CU_ASSERT_DOUBLE_EQUAL(dW[(e * H + 2) * F + 3], ref, 1e-5);
    /* rows past the routed ones: zero */
    CU_ASSERT_EQUAL(counts[0] + counts[1] + counts[2], P);
}

/* L(z) = sum dw . w(z) + aux E sum_seq sum_e f_e sum_t p_te(z) (f fixed):
 * the route backward against central differences, both routers */
static double route_objective(const float *z, const float *dw, int T, int E, int K, int router, int seq, float scale,
                              float aux, const double *f)
{
    float scores[64], w[32];
    int32_t ex[32], pos[32], counts[8];
    plc_k_moe_route(scores, ex, pos, w, counts, z, T, E, K, router, T, scale);
    double L = 0;
    for (int i = 0; i < T * K; i++) L += (double)dw[i] * w[i];
    for (int t = 0; t < T; t++) {
        double all = 0;
        for (int e = 0; e < E; e++) all += scores[t * E + e];
        for (int e = 0; e < E; e++)
            L += aux * E * f[(t / seq) * E + e] * scores[t * E + e] / (router ? all : 1.0);
    }
    return L;
}

static void test_route_backward_fd(void)
{
    enum { T = 6, E = 4, K = 2, SEQ = 3 };
    for (int router = 0; router < 2; router++) {
        unsigned s = 3 + (unsigned)router;
        float z[T * E], dw[T * K], scores[T * E], w[T * K], dz[T * E];
        int32_t ex[T * K], pos[T * K], counts[E];
        for (int i = 0; i < T * E; i++) z[i] = (float)frand(&s) * 3;
        for (int i = 0; i < T * K; i++) dw[i] = (float)frand(&s);
        const float scale = 1.5f, aux = 0.3f;
        plc_k_moe_route(scores, ex, pos, w, counts, z, T, E, K, router, T, scale);
        double f[(T / SEQ) * E];
        memset(f, 0, sizeof f);
        for (int t = 0; t < T; t++)
            for (int j = 0; j < K; j++) f[(t / SEQ) * E + ex[t * K + j]] += 1.0 / (SEQ * K);
        plc_k_moe_route_backward(dz, dw, scores, ex, NULL, T, E, K, router, SEQ, SEQ, scale, aux);
        /* the same from the sequences' counted choices (as cp's all-reduced ones) */
        float ch[(T / SEQ) * E], dz2[T * E];
        plc_k_moe_seq_counts(ch, ex, T, E, K, SEQ);
        for (int b = 0; b < T / SEQ; b++)
            for (int e = 0; e < E; e++) CU_ASSERT_DOUBLE_EQUAL(ch[b * E + e], f[b * E + e] * SEQ * K, 1e-6);
        plc_k_moe_route_backward(dz2, dw, scores, ex, ch, T, E, K, router, SEQ, SEQ, scale, aux);
        CU_ASSERT(memcmp(dz, dz2, sizeof dz) == 0);
        double worst = 0;
        for (int i = 0; i < T * E; i++) {
            float zp[T * E], zm[T * E];
            memcpy(zp, z, sizeof z);
            memcpy(zm, z, sizeof z);
            const float h = 1e-2f;
            zp[i] += h;
            zm[i] -= h;
            double fd = (route_objective(zp, dw, T, E, K, router, SEQ, scale, aux, f) -
                         route_objective(zm, dw, T, E, K, router, SEQ, scale, aux, f)) / (2.0 * h);
            worst = fmax(worst, fabs(fd - dz[i]));
        }
        CU_ASSERT(worst < 2e-3);
    }
}

/* the combine's backward: dy = w dout at the copies, dweight = dout . y */
static void test_unpermute_backward(void)
{
    enum { T = 4, H = 3, K = 2, P = T * K };
    unsigned s = 11;
    float y[P * H], dout[T * H], w[T * K], dy[P * H], dwt[T * K];
    int32_t pos[T * K] = {0, 5, 1, -1, 2, 3, 4, 6};
    for (int i = 0; i < P * H; i++) y[i] = (float)frand(&s);
    for (int i = 0; i < T * H; i++) dout[i] = (float)frand(&s);
    for (int i = 0; i < T * K; i++) w[i] = (float)frand(&s);
    memset(dy, 0x7f, sizeof dy); /* written whole, including the unused row 7 */
    plc_k_moe_unpermute_backward(dy, dwt, dout, y, pos, w, T, H, K, P);
    CU_ASSERT_DOUBLE_EQUAL(dy[5 * H + 2], w[1] * dout[0 * H + 2], 1e-7);
    CU_ASSERT_EQUAL(dy[7 * H], 0.0f);
    CU_ASSERT_EQUAL(dwt[3], 0.0f); /* a dropped copy */
    double dot = 0;
    for (int c = 0; c < H; c++) dot += (double)dout[2 * H + c] * y[2 * H + c];
    CU_ASSERT_DOUBLE_EQUAL(dwt[4], dot, 1e-6);
}

/* an MoE model's tensor table: dense and MoE layers' ids back to back,
 * names found again, shapes and the tp split of the expert tensors */
static void test_tensor_table(void)
{
    plc_model m = {.layers = 4, .hidden = 32, .ffn_hidden = 64, .heads = 4, .kv_heads = 2, .vocab = 64, .seq_len = 16};
    m.moe = (plc_moe){.experts = 4, .top_k = 2, .shared_experts = 1, .expert_ffn_hidden = 16, .shared_ffn_hidden = 8,
                      .dense_layers = 1, .moe_every = 2};
    CU_ASSERT(!plc_layer_is_moe(&m, 0));
    CU_ASSERT(plc_layer_is_moe(&m, 1));
    CU_ASSERT(!plc_layer_is_moe(&m, 2));
    CU_ASSERT(plc_layer_is_moe(&m, 3));
    CU_ASSERT_EQUAL(plc_layer_tensor_count(&m, 1), 13);
    /* tok_emb, 9 + 13 + 9 + 13, final_norm, lm_head */
    CU_ASSERT_EQUAL(plc_tensor_count(&m), 1 + 44 + 2);
    plc_tensor_info t;
    int64_t prev_layer = -1, total = 0;
    for (int64_t id = 0; plc_tensor_get(&m, id, &t); id++) {
        CU_ASSERT_EQUAL(plc_tensor_find(&m, t.name), id);
        CU_ASSERT_EQUAL(plc_tensor_id(&m, t.role, t.layer), id);
        CU_ASSERT(t.layer >= prev_layer || t.layer == -1);
        if (t.layer >= 0) prev_layer = t.layer;
        total += t.numel;
    }
    CU_ASSERT_EQUAL(plc_model_param_count(&m), total);
    int64_t id = plc_tensor_find(&m, "layers.3.experts.w_down");
    CU_ASSERT(id > 0 && plc_tensor_get(&m, id, &t));
    CU_ASSERT_EQUAL(t.shape[0], 4 * 32);
    CU_ASSERT_EQUAL(t.shape[1], 16);
    CU_ASSERT_EQUAL(plc_tensor_tp_split(t.role), PLC_SHARD_COLS);
    CU_ASSERT_EQUAL(plc_tensor_find(&m, "layers.2.w_gate") > 0, 1);
    CU_ASSERT_EQUAL(plc_tensor_find(&m, "layers.2.router"), -1);
    id = plc_tensor_find(&m, "layers.1.shared.w_down");
    CU_ASSERT(plc_tensor_get(&m, id, &t) && t.shape[0] == 8 && t.shape[1] == 32);
    CU_ASSERT_EQUAL(plc_tensor_tp_split(t.role), PLC_SHARD_ROWS);
}

void register_test_kernels_moe(void)
{
    CU_pSuite s = CU_add_suite("moe_kernels", NULL, NULL);
    CU_add_test(s, "route by hand", test_route_hand);
    CU_add_test(s, "chain against a naive loop", test_chain_naive);
    CU_add_test(s, "route backward against finite differences", test_route_backward_fd);
    CU_add_test(s, "unpermute backward", test_unpermute_backward);
    CU_add_test(s, "MoE tensor table", test_tensor_table);
}
