/* tests/unit/test_kernels_attention.c: causal GQA attention, materialised
 * and flash forms: backward against finite differences, flash against
 * materialised, context-parallel query slices, GQA against repeated heads. */
#include "kernels/kernels.h"
#include "test_kernels_util.h"

typedef struct attn_case {
    int64_t B, Tq, Tk, H, Hkv, hd;
    const int32_t *q_pos, *k_pos;
    float *q, *k, *v, *out, *probs, *lse, *dout;
    int flash;
} attn_case;

static int64_t nq(const attn_case *c) { return c->B * c->Tq * c->H * c->hd; }
static int64_t nkv(const attn_case *c) { return c->B * c->Tk * c->Hkv * c->hd; }

static void attn_case_alloc(attn_case *c, uint64_t seed)
{
    c->q = tk_alloc(nq(c));
    c->k = tk_alloc(nkv(c));
    c->v = tk_alloc(nkv(c));
    c->out = tk_alloc(nq(c));
    c->dout = tk_alloc(nq(c));
    c->probs = tk_alloc(c->B * c->H * c->Tq * c->Tk);
    c->lse = tk_alloc(c->B * c->H * c->Tq);
    tk_fill(c->q, nq(c), seed, 1.0f);
    tk_fill(c->k, nkv(c), seed + 1, 1.0f);
    tk_fill(c->v, nkv(c), seed + 2, 1.0f);
    tk_fill(c->dout, nq(c), seed + 3, 1.0f);
}

static void attn_case_free(attn_case *c)
{
    free(c->q), free(c->k), free(c->v), free(c->out), free(c->dout), free(c->probs), free(c->lse);
}

static void attn_fwd(void *p)
{
    attn_case *c = p;
    plc_k_attention_forward(c->out, c->flash ? NULL : c->probs, c->flash ? c->lse : NULL, c->q, c->k, c->v, c->q_pos,
                            c->k_pos, c->B, c->Tq, c->Tk, c->H, c->Hkv, c->hd);
}

/* gradients (zeroed first) after a forward */
static void attn_bwd(attn_case *c, float *dq, float *dk, float *dv)
{
    memset(dq, 0, sizeof(float) * (size_t)nq(c));
    memset(dk, 0, sizeof(float) * (size_t)nkv(c));
    memset(dv, 0, sizeof(float) * (size_t)nkv(c));
    attn_fwd(c);
    plc_k_attention_backward(dq, dk, dv, c->dout, c->q, c->k, c->v, c->out, c->flash ? NULL : c->probs,
                             c->flash ? c->lse : NULL, c->q_pos, c->k_pos, c->B, c->Tq, c->Tk, c->H, c->Hkv, c->hd);
}

static void fd_case(int flash)
{
    attn_case c = {2, 5, 5, 4, 2, 8, NULL, NULL, 0, 0, 0, 0, 0, 0, 0, flash};
    attn_case_alloc(&c, 100);
    float *dq = tk_alloc(nq(&c)), *dk = tk_alloc(nkv(&c)), *dv = tk_alloc(nkv(&c));
    attn_bwd(&c, dq, dk, dv);
    tk_loss L = {attn_fwd, &c, c.out, c.dout, nq(&c)};
    tk_fd_check("attention dq", c.q, nq(&c), dq, &L, 1e-2f, 1e-3);
    tk_fd_check("attention dk", c.k, nkv(&c), dk, &L, 1e-2f, 1e-3);
    tk_fd_check("attention dv", c.v, nkv(&c), dv, &L, 1e-2f, 1e-3);
    /* causality: the first query sees only the first key */
    for (int64_t d = 0; d < c.hd; d++)
        CU_ASSERT_DOUBLE_EQUAL(c.out[d], c.v[d], 1e-6);
    free(dq), free(dk), free(dv);
    attn_case_free(&c);
}

static void test_materialised_fd(void) { fd_case(0); }
static void test_flash_fd(void) { fd_case(1); }

/* Flash equals materialised within 1e-5 on shapes that cut through tiles. */
static void test_flash_matches_materialised(void)
{
    /* 65 = two full query tiles and one row, one full key tile and one key */
    attn_case m = {2, 65, 65, 6, 2, 16, NULL, NULL, 0, 0, 0, 0, 0, 0, 0, 0};
    attn_case_alloc(&m, 200);
    attn_case f = m;
    f.flash = 1;
    float *dq = tk_alloc(nq(&m)), *dk = tk_alloc(nkv(&m)), *dv = tk_alloc(nkv(&m));
    float *fq = tk_alloc(nq(&m)), *fk = tk_alloc(nkv(&m)), *fv = tk_alloc(nkv(&m));
    float *mout = tk_alloc(nq(&m));
    attn_bwd(&m, dq, dk, dv);
    memcpy(mout, m.out, sizeof(float) * (size_t)nq(&m));
    attn_bwd(&f, fq, fk, fv);
    CU_ASSERT(tk_max_diff(mout, f.out, nq(&m)) <= 1e-5);
    CU_ASSERT(tk_max_diff(dq, fq, nq(&m)) <= 1e-5);
    CU_ASSERT(tk_max_diff(dk, fk, nkv(&m)) <= 1e-5);
    CU_ASSERT(tk_max_diff(dv, fv, nkv(&m)) <= 1e-5);
    CU_ASSERT(tk_max_abs(dk, nkv(&m)) > 1e-2);
    /* lse is the log of the normaliser: probs = exp(score - lse) */
    int64_t b = 1, h = 3, i = 20, kvh = h / 3;
    double s = 0;
    for (int64_t d = 0; d < m.hd; d++)
        s += (double)m.q[((b * m.Tq + i) * m.H + h) * m.hd + d] * m.k[((b * m.Tk + 7) * m.Hkv + kvh) * m.hd + d];
    s /= sqrt((double)m.hd);
    double p = m.probs[((b * m.H + h) * m.Tq + i) * m.Tk + 7];
    CU_ASSERT_DOUBLE_EQUAL(p, exp(s - f.lse[(b * m.H + h) * m.Tq + i]), 1e-6);
    free(dq), free(dk), free(dv), free(fq), free(fk), free(fv), free(mout);
    attn_case_free(&m);
}

/* Context parallelism: queries split into two slices with their absolute
 * positions against the full K/V reproduce the rows of the unsplit result,
 * and the slices' dk/dv add up to the unsplit ones. */
static void cp_split(int flash)
{
    enum { T = 65, CUT = 23 }; /* the last key sits alone in its key tile */
    attn_case full = {2, T, T, 4, 2, 8, NULL, NULL, 0, 0, 0, 0, 0, 0, 0, flash};
    attn_case_alloc(&full, 300);
    float *dq = tk_alloc(nq(&full)), *dk = tk_alloc(nkv(&full)), *dv = tk_alloc(nkv(&full));
    attn_bwd(&full, dq, dk, dv);
    float *sk = tk_alloc(nkv(&full)), *sv = tk_alloc(nkv(&full));
    int32_t pos[T];
    for (int i = 0; i < T; i++) pos[i] = i;
    int64_t row = full.H * full.hd; /* floats per time step */
    for (int part = 0; part < 2; part++) {
        int64_t t0 = part ? CUT : 0, tq = part ? T - CUT : CUT;
        attn_case sl = full;
        sl.Tq = tq;
        sl.q_pos = pos + t0;
        sl.q = tk_alloc(nq(&sl)), sl.dout = tk_alloc(nq(&sl)), sl.out = tk_alloc(nq(&sl));
        sl.probs = tk_alloc(sl.B * sl.H * tq * T), sl.lse = tk_alloc(sl.B * sl.H * tq);
        for (int64_t b = 0; b < sl.B; b++) {
            memcpy(sl.q + b * tq * row, full.q + (b * T + t0) * row, sizeof(float) * (size_t)(tq * row));
            memcpy(sl.dout + b * tq * row, full.dout + (b * T + t0) * row, sizeof(float) * (size_t)(tq * row));
        }
        float *pq = tk_alloc(nq(&sl)), *pk = tk_alloc(nkv(&sl)), *pv = tk_alloc(nkv(&sl));
        attn_bwd(&sl, pq, pk, pv);
        for (int64_t b = 0; b < sl.B; b++) {
            CU_ASSERT(tk_max_diff(sl.out + b * tq * row, full.out + (b * T + t0) * row, tq * row) <= 1e-6);
            CU_ASSERT(tk_max_diff(pq + b * tq * row, dq + (b * T + t0) * row, tq * row) <= 1e-6);
        }
        plc_k_accumulate(sk, pk, nkv(&full));
        plc_k_accumulate(sv, pv, nkv(&full));
        free(pq), free(pk), free(pv);
        free(sl.q), free(sl.dout), free(sl.out), free(sl.probs), free(sl.lse);
    }
    CU_ASSERT(tk_max_diff(sk, dk, nkv(&full)) <= 1e-5);
    CU_ASSERT(tk_max_diff(sv, dv, nkv(&full)) <= 1e-5);
    free(sk), free(sv), free(dq), free(dk), free(dv);
    attn_case_free(&full);
}

static void test_cp_split_materialised(void) { cp_split(0); }
static void test_cp_split_flash(void) { cp_split(1); }

/* GQA (2 kv heads for 4 query heads) equals MHA whose kv heads repeat, and
 * the GQA dk is the sum of the repeated heads' dk. */
static void gqa_vs_mha(int flash)
{
    attn_case g = {1, 9, 9, 4, 2, 8, NULL, NULL, 0, 0, 0, 0, 0, 0, 0, flash};
    attn_case_alloc(&g, 400);
    attn_case m = g;
    m.Hkv = 4;
    m.k = tk_alloc(nkv(&m)), m.v = tk_alloc(nkv(&m));
    m.out = tk_alloc(nq(&m)), m.probs = tk_alloc(m.B * m.H * m.Tq * m.Tk), m.lse = tk_alloc(m.B * m.H * m.Tq);
    for (int64_t t = 0; t < 9; t++)
        for (int64_t h = 0; h < 4; h++) {
            memcpy(m.k + (t * 4 + h) * 8, g.k + (t * 2 + h / 2) * 8, sizeof(float) * 8);
            memcpy(m.v + (t * 4 + h) * 8, g.v + (t * 2 + h / 2) * 8, sizeof(float) * 8);
        }
    float *gq = tk_alloc(nq(&g)), *gk = tk_alloc(nkv(&g)), *gv = tk_alloc(nkv(&g));
    float *mq = tk_alloc(nq(&m)), *mk = tk_alloc(nkv(&m)), *mv = tk_alloc(nkv(&m));
    attn_bwd(&g, gq, gk, gv);
    attn_bwd(&m, mq, mk, mv);
    CU_ASSERT(tk_max_diff(g.out, m.out, nq(&g)) <= 1e-6);
    CU_ASSERT(tk_max_diff(gq, mq, nq(&g)) <= 1e-6);
    for (int64_t t = 0; t < 9; t++)
        for (int64_t kh = 0; kh < 2; kh++)
            for (int64_t d = 0; d < 8; d++) {
                int64_t o = (t * 2 + kh) * 8 + d;
                CU_ASSERT_DOUBLE_EQUAL(gk[o], mk[(t * 4 + 2 * kh) * 8 + d] + mk[(t * 4 + 2 * kh + 1) * 8 + d], 1e-6);
                CU_ASSERT_DOUBLE_EQUAL(gv[o], mv[(t * 4 + 2 * kh) * 8 + d] + mv[(t * 4 + 2 * kh + 1) * 8 + d], 1e-6);
            }
    free(gq), free(gk), free(gv), free(mq), free(mk), free(mv);
    free(m.k), free(m.v), free(m.out), free(m.probs), free(m.lse);
    attn_case_free(&g);
}

static void test_gqa_materialised(void) { gqa_vs_mha(0); }
static void test_gqa_flash(void) { gqa_vs_mha(1); }

/* A query whose position precedes every key sees nothing: zero output, no
 * NaN, no gradient; Tq != Tk. */
static void test_empty_rows(void)
{
    int32_t qp[3] = {-1, 0, 2}, kp[4] = {0, 1, 2, 3};
    for (int flash = 0; flash < 2; flash++) {
        attn_case c = {1, 3, 4, 2, 1, 4, qp, kp, 0, 0, 0, 0, 0, 0, 0, flash};
        attn_case_alloc(&c, 500);
        float *dq = tk_alloc(nq(&c)), *dk = tk_alloc(nkv(&c)), *dv = tk_alloc(nkv(&c));
        attn_bwd(&c, dq, dk, dv);
        for (int64_t h = 0; h < 2; h++)
            for (int64_t d = 0; d < 4; d++) {
                CU_ASSERT_EQUAL(c.out[h * 4 + d], 0.0f);
                CU_ASSERT_EQUAL(dq[h * 4 + d], 0.0f);
                CU_ASSERT_DOUBLE_EQUAL(c.out[(1 * 2 + h) * 4 + d], c.v[d], 1e-6); /* sees key 0 only */
            }
        for (int64_t i = 0; i < nkv(&c); i++) CU_ASSERT(!isnan(dk[i]) && !isnan(dv[i]));
        CU_ASSERT_EQUAL(dk[3 * 4], 0.0f); /* key at position 3 is seen by nobody */
        if (flash) CU_ASSERT(c.lse[0] == -INFINITY);
        free(dq), free(dk), free(dv);
        attn_case_free(&c);
    }
}

void register_test_kernels_attention(void)
{
    CU_pSuite s = CU_add_suite("kernels_attention", NULL, NULL);
    CU_add_test(s, "materialised backward (finite differences, GQA)", test_materialised_fd);
    CU_add_test(s, "flash backward (finite differences, GQA)", test_flash_fd);
    CU_add_test(s, "flash equals materialised within 1e-5", test_flash_matches_materialised);
    CU_add_test(s, "context-parallel query split, materialised", test_cp_split_materialised);
    CU_add_test(s, "context-parallel query split, flash", test_cp_split_flash);
    CU_add_test(s, "GQA equals repeated kv heads, materialised", test_gqa_materialised);
    CU_add_test(s, "GQA equals repeated kv heads, flash", test_gqa_flash);
    CU_add_test(s, "queries that see no key, Tq != Tk", test_empty_rows);
}
