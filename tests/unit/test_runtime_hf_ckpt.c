/* test_runtime_hf_ckpt.c: Hugging Face checkpoints (runtime/hf_names.c).
 *
 * The expectations are written out here from transformers' own
 * conventions, not read from hf_names.c's table: the state-dict names of
 * LlamaForCausalLM and GPT2LMHeadModel, nn.Linear's [out, in], Conv1D's
 * [in, out] with c_attn = [q | k | v] by columns, and the q/k row order of
 * convert_llama_weights_to_hf.py's
 *   permute(w) = w.view(n_heads, hd // 2, 2, dim).transpose(1, 2).reshape(n_heads * hd, dim)
 * applied to Meta's [out, in] matrix (plc's [in, out] transposed). Then:
 * plc -> Hugging Face -> plc gives the same bytes; one attention score
 * computed with plc's RoPE kernel on plc's weights equals the score of
 * transformers' rotate-half RoPE on the file's weights; a missing tensor, a
 * wrong shape and a config.json of another model are refused, naming them. */
#include <CUnit/CUnit.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/tensors.h"
#include "kernels/common/bf16.h"
#include "kernels/kernels.h"
#include "runtime/hf_names.h"
#include "runtime/safetensors.h"

static plc_model llama_model(void)
{
    plc_model m;
    memset(&m, 0, sizeof m);
    m.layers = 2; m.hidden = 16; m.ffn_hidden = 24; m.heads = 4; m.kv_heads = 2; m.vocab = 11; m.seq_len = 8;
    m.tie_embeddings = false; m.norm_eps = 1e-5; m.rope_theta = 10000; m.arch = PLC_ARCH_LLAMA;
    m.positions = PLC_POS_ROPE;
    return m;
}

static plc_model gpt_model(void)
{
    plc_model m = llama_model();
    m.kv_heads = m.heads;
    m.arch = PLC_ARCH_GPT;
    m.positions = PLC_POS_LEARNED;
    m.tie_embeddings = true;
    return m;
}

/* every global tensor of m, filled with distinct values */
static float **make_weights(const plc_model *m)
{
    int64_t nt = plc_tensor_count(m);
    float **w = calloc((size_t)nt, sizeof *w);
    uint32_t s = 12345;
    for (int64_t t = 0; t < nt; t++) {
        plc_tensor_info ti;
        plc_tensor_get(m, t, &ti);
        w[t] = malloc((size_t)ti.numel * sizeof **w);
        for (int64_t e = 0; e < ti.numel; e++) {
            s = s * 1664525u + 1013904223u;
            w[t][e] = (float)((int32_t)(s >> 8) % 2000) / 1000.0f;
        }
    }
    return w;
}

static float **alloc_weights(const plc_model *m)
{
    int64_t nt = plc_tensor_count(m);
    float **w = calloc((size_t)nt, sizeof *w);
    for (int64_t t = 0; t < nt; t++) {
        plc_tensor_info ti;
        plc_tensor_get(m, t, &ti);
        w[t] = calloc((size_t)ti.numel, sizeof **w);
    }
    return w;
}

static void free_weights(const plc_model *m, float **w)
{
    for (int64_t t = 0; t < plc_tensor_count(m); t++) free(w[t]);
    free(w);
}

static const float *plc_w(const plc_model *m, float **w, plc_tensor_role r, int64_t l)
{
    return w[plc_tensor_id(m, r, l)];
}

static char dir_tpl[] = "/tmp/plc_hf_XXXXXX";
static char *dir;
static int suite_init(void) { return (dir = mkdtemp(dir_tpl)) ? 0 : -1; }
static int suite_clean(void)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* the file's tensor `name`, checked to be F32 of shape [r, c] (c < 0: 1-D [r]) */
static const float *hf_tensor(const plc_st_file *f, const char *name, int64_t r, int64_t c)
{
    const plc_st_tensor *t = plc_st_find(f, name);
    if (!t) {
        fprintf(stderr, "\n  missing %s\n", name);
        CU_FAIL("a Hugging Face tensor is missing");
        return NULL;
    }
    CU_ASSERT_EQUAL(t->dtype, PLC_ST_F32);
    CU_ASSERT_EQUAL(t->ndim, c < 0 ? 1 : 2);
    CU_ASSERT_EQUAL(t->shape[0], r);
    if (c >= 0) CU_ASSERT_EQUAL(t->shape[1], c);
    return (const float *)plc_st_data(f, t); /* the writer aligns F32 data */
}

/* hf[o][i] == plc[i][o] for plc [in, out] */
static int transposed(const float *hf, const float *plc, int64_t in, int64_t out)
{
    for (int64_t i = 0; i < in; i++)
        for (int64_t o = 0; o < out; o++)
            if (hf[o * in + i] != plc[i * out + o]) return 0;
    return 1;
}

/* convert_llama_weights_to_hf.py's permute on meta [n_heads*hd, dim]:
 * view (n_heads, hd/2, 2, dim), swap the middle axes, reshape back */
static void hf_permute(float *dst, const float *meta, int64_t n_heads, int64_t hd, int64_t dim)
{
    for (int64_t h = 0; h < n_heads; h++)
        for (int64_t p = 0; p < hd / 2; p++)
            for (int64_t t = 0; t < 2; t++)
                for (int64_t x = 0; x < dim; x++)
                    dst[((h * 2 + t) * (hd / 2) + p) * dim + x] = meta[((h * (hd / 2) + p) * 2 + t) * dim + x];
}

static int permuted(const float *hf, const float *plc, int64_t dim, int64_t n_heads, int64_t hd)
{
    int64_t out = n_heads * hd;
    float *meta = malloc((size_t)(out * dim) * sizeof *meta), *want = malloc((size_t)(out * dim) * sizeof *want);
    for (int64_t i = 0; i < dim; i++)
        for (int64_t o = 0; o < out; o++) meta[o * dim + i] = plc[i * out + o];
    hf_permute(want, meta, n_heads, hd, dim);
    int ok = memcmp(want, hf, (size_t)(out * dim) * sizeof *hf) == 0;
    free(meta);
    free(want);
    return ok;
}

static void write_and_open(const plc_model *m, float **w, const char *sub, plc_st_file *f)
{
    char d[256], path[300], err[512];
    snprintf(d, sizeof d, "%s/%s", dir, sub);
    if (plc_hf_write(m, (const float *const *)w, d, err, sizeof err)) fprintf(stderr, "\n  %s\n", err);
    snprintf(path, sizeof path, "%s/model.safetensors", d);
    int rc = plc_st_open(f, path, err, sizeof err);
    if (rc) fprintf(stderr, "\n  %s\n", err);
    CU_ASSERT_FATAL(rc == 0);
}

/* reads dir/sub back and compares every tensor's bytes with w */
static void round_trip(const plc_model *m, float **w, const char *sub)
{
    char d[256], err[512];
    snprintf(d, sizeof d, "%s/%s", dir, sub);
    float **back = alloc_weights(m);
    int rc = plc_hf_read(m, d, back, err, sizeof err);
    if (rc) fprintf(stderr, "\n  %s\n", err);
    CU_ASSERT_FATAL(rc == 0);
    for (int64_t t = 0; t < plc_tensor_count(m); t++) {
        plc_tensor_info ti;
        plc_tensor_get(m, t, &ti);
        if (memcmp(back[t], w[t], (size_t)ti.numel * sizeof(float))) {
            fprintf(stderr, "\n  %s differs after the round trip\n", ti.name);
            CU_FAIL("round trip");
        }
    }
    free_weights(m, back);
}

static void test_llama_names_and_layouts(void)
{
    plc_model m = llama_model();
    float **w = make_weights(&m);
    plc_st_file f;
    write_and_open(&m, w, "llama", &f);
    const int64_t H = 16, F = 24, V = 11, hd = 4, nh = 4, nkv = 2;
    /* 2 + 9 per layer + lm_head (untied) */
    CU_ASSERT_EQUAL(f.n_tensors, 2 + 9 * 2 + 1);
    const float *t = hf_tensor(&f, "model.embed_tokens.weight", V, H);
    if (t) CU_ASSERT(memcmp(t, plc_w(&m, w, PLC_ROLE_TOK_EMB, 0), (size_t)(V * H) * 4) == 0);
    t = hf_tensor(&f, "lm_head.weight", V, H);
    if (t) CU_ASSERT(transposed(t, plc_w(&m, w, PLC_ROLE_LM_HEAD, 0), H, V));
    t = hf_tensor(&f, "model.norm.weight", H, -1);
    if (t) CU_ASSERT(memcmp(t, plc_w(&m, w, PLC_ROLE_FINAL_NORM, 0), (size_t)H * 4) == 0);
    for (int64_t l = 0; l < 2; l++) {
        char n[128];
#define NAME(s) (snprintf(n, sizeof n, "model.layers.%lld.%s", (long long)l, s), n)
        t = hf_tensor(&f, NAME("input_layernorm.weight"), H, -1);
        if (t) CU_ASSERT(memcmp(t, plc_w(&m, w, PLC_ROLE_ATTN_NORM, l), (size_t)H * 4) == 0);
        t = hf_tensor(&f, NAME("post_attention_layernorm.weight"), H, -1);
        if (t) CU_ASSERT(memcmp(t, plc_w(&m, w, PLC_ROLE_MLP_NORM, l), (size_t)H * 4) == 0);
        t = hf_tensor(&f, NAME("self_attn.q_proj.weight"), nh * hd, H);
        if (t) CU_ASSERT(permuted(t, plc_w(&m, w, PLC_ROLE_WQ, l), H, nh, hd));
        t = hf_tensor(&f, NAME("self_attn.k_proj.weight"), nkv * hd, H);
        if (t) CU_ASSERT(permuted(t, plc_w(&m, w, PLC_ROLE_WK, l), H, nkv, hd));
        t = hf_tensor(&f, NAME("self_attn.v_proj.weight"), nkv * hd, H);
        if (t) CU_ASSERT(transposed(t, plc_w(&m, w, PLC_ROLE_WV, l), H, nkv * hd));
        t = hf_tensor(&f, NAME("self_attn.o_proj.weight"), H, nh * hd);
        if (t) CU_ASSERT(transposed(t, plc_w(&m, w, PLC_ROLE_WO, l), nh * hd, H));
        t = hf_tensor(&f, NAME("mlp.gate_proj.weight"), F, H);
        if (t) CU_ASSERT(transposed(t, plc_w(&m, w, PLC_ROLE_W_GATE, l), H, F));
        t = hf_tensor(&f, NAME("mlp.up_proj.weight"), F, H);
        if (t) CU_ASSERT(transposed(t, plc_w(&m, w, PLC_ROLE_W_UP, l), H, F));
        t = hf_tensor(&f, NAME("mlp.down_proj.weight"), H, F); /* [hidden, ffn] */
        if (t) CU_ASSERT(transposed(t, plc_w(&m, w, PLC_ROLE_W_DOWN, l), F, H));
#undef NAME
    }
    plc_st_close(&f);
    round_trip(&m, w, "llama");
    free_weights(&m, w);
}

/* transformers' LlamaRotaryEmbedding + apply_rotary_pos_emb on one head:
 * out[i] = x[i] cos - x[i + hd/2] sin, out[i + hd/2] = x[i + hd/2] cos + x[i] sin,
 * angle p * theta^(-2i/hd), i < hd/2 */
static void rotate_half_rope(double *out, const double *x, int64_t hd, int p, double theta)
{
    for (int64_t i = 0; i < hd / 2; i++) {
        double a = p * pow(theta, -2.0 * (double)i / (double)hd), c = cos(a), s = sin(a);
        out[i] = x[i] * c - x[i + hd / 2] * s;
        out[i + hd / 2] = x[i + hd / 2] * c + x[i] * s;
    }
}

/* One attention score q(p1) . k(p2) of layer 1, head 3 (kv head 1): plc's
 * weights through plc's RoPE kernel (interleaved pairs), against the
 * Hugging Face file's weights through rotate-half RoPE. */
static void test_llama_rope_score(void)
{
    plc_model m = llama_model();
    float **w = make_weights(&m);
    plc_st_file f;
    write_and_open(&m, w, "llama_rope", &f);
    const int64_t H = 16, hd = 4, nh = 4, nkv = 2, head = 3, kvh = head / (nh / nkv);
    const int pos[2] = {5, 2};
    float x[2][16];
    for (int r = 0; r < 2; r++)
        for (int i = 0; i < H; i++) x[r][i] = (float)sin(1.0 + i * 0.7 + r * 3.1);
    const float *wq = plc_w(&m, w, PLC_ROLE_WQ, 1), *wk = plc_w(&m, w, PLC_ROLE_WK, 1);
    /* plc: q = x @ wq [1, nh*hd], k = x @ wk, rotated by the CPU kernel */
    float q[16] = {0}, k[8] = {0};
    for (int64_t o = 0; o < nh * hd; o++)
        for (int64_t i = 0; i < H; i++) q[o] += x[0][i] * wq[i * nh * hd + o];
    for (int64_t o = 0; o < nkv * hd; o++)
        for (int64_t i = 0; i < H; i++) k[o] += x[1][i] * wk[i * nkv * hd + o];
    int32_t p0 = pos[0], p1 = pos[1];
    CU_ASSERT_FATAL(plc_k_rope_forward(q, q, &p0, 1, 1, nh, hd, 10000.0f) == 0);
    CU_ASSERT_FATAL(plc_k_rope_forward(k, k, &p1, 1, 1, nkv, hd, 10000.0f) == 0);
    double plc_score = 0;
    for (int64_t d = 0; d < hd; d++) plc_score += (double)q[head * hd + d] * k[kvh * hd + d];
    /* Hugging Face: q = q_proj.weight @ x, split by heads, rotate-half */
    const float *hq = hf_tensor(&f, "model.layers.1.self_attn.q_proj.weight", nh * hd, H);
    const float *hk = hf_tensor(&f, "model.layers.1.self_attn.k_proj.weight", nkv * hd, H);
    CU_ASSERT_FATAL(hq && hk);
    double qh[4] = {0}, kh[4] = {0}, qr[4], kr[4];
    for (int64_t d = 0; d < hd; d++)
        for (int64_t i = 0; i < H; i++) {
            qh[d] += (double)hq[(head * hd + d) * H + i] * x[0][i];
            kh[d] += (double)hk[(kvh * hd + d) * H + i] * x[1][i];
        }
    rotate_half_rope(qr, qh, hd, pos[0], 10000.0);
    rotate_half_rope(kr, kh, hd, pos[1], 10000.0);
    double hf_score = 0;
    for (int64_t d = 0; d < hd; d++) hf_score += qr[d] * kr[d];
    CU_ASSERT(fabs(plc_score) > 1e-3); /* a score that could differ */
    CU_ASSERT_DOUBLE_EQUAL(plc_score, hf_score, 1e-5 * (1 + fabs(hf_score)));
    /* and without the permutation it would not match */
    double unperm = 0, qu[4], ku[4], qur[4], kur[4];
    for (int64_t d = 0; d < hd; d++) {
        qu[d] = qh[(d % 2) * (hd / 2) + d / 2];
        ku[d] = kh[(d % 2) * (hd / 2) + d / 2];
    }
    rotate_half_rope(qur, qu, hd, pos[0], 10000.0);
    rotate_half_rope(kur, ku, hd, pos[1], 10000.0);
    for (int64_t d = 0; d < hd; d++) unperm += qur[d] * kur[d];
    CU_ASSERT(fabs(unperm - plc_score) > 1e-4);
    plc_st_close(&f);
    free_weights(&m, w);
}

static void test_gpt_names_and_layouts(void)
{
    plc_model m = gpt_model();
    float **w = make_weights(&m);
    plc_st_file f;
    write_and_open(&m, w, "gpt", &f);
    const int64_t H = 16, F = 24, V = 11, S = 8;
    /* wte, wpe, 12 per layer (c_attn fused), ln_f weight and bias; tied: no lm_head */
    CU_ASSERT_EQUAL(f.n_tensors, 2 + 12 * 2 + 2);
    CU_ASSERT_PTR_NULL(plc_st_find(&f, "lm_head.weight"));
    const float *t = hf_tensor(&f, "transformer.wte.weight", V, H);
    if (t) CU_ASSERT(memcmp(t, plc_w(&m, w, PLC_ROLE_TOK_EMB, 0), (size_t)(V * H) * 4) == 0);
    t = hf_tensor(&f, "transformer.wpe.weight", S, H);
    if (t) CU_ASSERT(memcmp(t, plc_w(&m, w, PLC_ROLE_POS_EMB, 0), (size_t)(S * H) * 4) == 0);
    t = hf_tensor(&f, "transformer.ln_f.bias", H, -1);
    if (t) CU_ASSERT(memcmp(t, plc_w(&m, w, PLC_ROLE_FINAL_NORM_B, 0), (size_t)H * 4) == 0);
    for (int64_t l = 0; l < 2; l++) {
        char n[128];
#define NAME(s) (snprintf(n, sizeof n, "transformer.h.%lld.%s", (long long)l, s), n)
        /* Conv1D [in, out]; c_attn's columns are q, k, v */
        t = hf_tensor(&f, NAME("attn.c_attn.weight"), H, 3 * H);
        const plc_tensor_role qkv[3] = {PLC_ROLE_WQ, PLC_ROLE_WK, PLC_ROLE_WV};
        const plc_tensor_role bqkv[3] = {PLC_ROLE_BQ, PLC_ROLE_BK, PLC_ROLE_BV};
        for (int part = 0; t && part < 3; part++) {
            const float *p = plc_w(&m, w, qkv[part], l);
            int ok = 1;
            for (int64_t i = 0; i < H; i++)
                for (int64_t o = 0; o < H; o++) ok &= t[i * 3 * H + part * H + o] == p[i * H + o];
            CU_ASSERT(ok);
        }
        t = hf_tensor(&f, NAME("attn.c_attn.bias"), 3 * H, -1);
        for (int part = 0; t && part < 3; part++)
            CU_ASSERT(memcmp(t + part * H, plc_w(&m, w, bqkv[part], l), (size_t)H * 4) == 0);
        t = hf_tensor(&f, NAME("attn.c_proj.weight"), H, H);
        if (t) CU_ASSERT(memcmp(t, plc_w(&m, w, PLC_ROLE_WO, l), (size_t)(H * H) * 4) == 0);
        t = hf_tensor(&f, NAME("mlp.c_fc.weight"), H, F);
        if (t) CU_ASSERT(memcmp(t, plc_w(&m, w, PLC_ROLE_W_FC, l), (size_t)(H * F) * 4) == 0);
        t = hf_tensor(&f, NAME("mlp.c_proj.weight"), F, H);
        if (t) CU_ASSERT(memcmp(t, plc_w(&m, w, PLC_ROLE_W_PROJ, l), (size_t)(F * H) * 4) == 0);
        t = hf_tensor(&f, NAME("ln_1.weight"), H, -1);
        if (t) CU_ASSERT(memcmp(t, plc_w(&m, w, PLC_ROLE_ATTN_NORM, l), (size_t)H * 4) == 0);
        t = hf_tensor(&f, NAME("ln_2.bias"), H, -1);
        if (t) CU_ASSERT(memcmp(t, plc_w(&m, w, PLC_ROLE_MLP_NORM_B, l), (size_t)H * 4) == 0);
        CU_ASSERT_PTR_NOT_NULL(hf_tensor(&f, NAME("ln_1.bias"), H, -1));
        CU_ASSERT_PTR_NOT_NULL(hf_tensor(&f, NAME("ln_2.weight"), H, -1));
        CU_ASSERT_PTR_NOT_NULL(hf_tensor(&f, NAME("attn.c_proj.bias"), H, -1));
        CU_ASSERT_PTR_NOT_NULL(hf_tensor(&f, NAME("mlp.c_fc.bias"), F, -1));
        CU_ASSERT_PTR_NOT_NULL(hf_tensor(&f, NAME("mlp.c_proj.bias"), H, -1));
#undef NAME
    }
    plc_st_close(&f);
    round_trip(&m, w, "gpt");
    free_weights(&m, w);
}

/* IEEE half of a float that is exactly representable as one */
static uint16_t f32_to_half_exact(float f)
{
    if (f == 0) return signbit(f) ? 0x8000 : 0;
    int e;
    float m = frexpf(fabsf(f), &e); /* f = m 2^e, m in [0.5, 1) */
    uint16_t s = signbit(f) ? 0x8000 : 0;
    if (e - 1 < -14) return (uint16_t)(s | (uint16_t)lrintf(ldexpf(fabsf(f), 24))); /* subnormal */
    return (uint16_t)(s | (uint16_t)((e - 1 + 15) << 10) | (uint16_t)(lrintf(ldexpf(m, 11)) - 1024));
}

/* Hugging Face checkpoints on the hub are BF16 or F16: the written file
 * converted tensor by tensor reads back as those values widened */
static void test_half_precision_files(void)
{
    /* the test's encoder against IEEE half's known bit patterns */
    CU_ASSERT_EQUAL(f32_to_half_exact(1.0f), 0x3C00);
    CU_ASSERT_EQUAL(f32_to_half_exact(-2.0f), 0xC000);
    CU_ASSERT_EQUAL(f32_to_half_exact(0.5f), 0x3800);
    CU_ASSERT_EQUAL(f32_to_half_exact(65504.0f), 0x7BFF);
    CU_ASSERT_EQUAL(f32_to_half_exact(0x1p-24f), 0x0001);
    CU_ASSERT_EQUAL(f32_to_half_exact(0x1p-14f), 0x0400);
    plc_model m = llama_model();
    float **w = make_weights(&m); /* multiples of 1/1000 up to 2: exact in F16 only after rounding */
    int64_t nt = plc_tensor_count(&m);
    /* round every weight to a value exact in both bf16 and f16: 8 significant bits, |x| >= 2^-14 or 0 */
    for (int64_t t = 0; t < nt; t++) {
        plc_tensor_info ti;
        plc_tensor_get(&m, t, &ti);
        for (int64_t e = 0; e < ti.numel; e++) {
            float x = w[t][e];
            if (fabsf(x) < 0x1p-14f) { w[t][e] = 0; continue; }
            int ex;
            float mant = frexpf(x, &ex);
            w[t][e] = ldexpf(roundf(ldexpf(mant, 8)), ex - 8);
        }
    }
    plc_st_file f;
    write_and_open(&m, w, "half_src", &f);
    for (int kind = 0; kind < 2; kind++) {
        plc_st_writer wr;
        plc_st_writer_init(&wr);
        uint16_t **halves = calloc(f.n_tensors, sizeof *halves);
        char err[512], path[300];
        for (size_t i = 0; i < f.n_tensors; i++) {
            const plc_st_tensor *t = &f.tensors[i];
            const float *src = plc_st_data(&f, t);
            halves[i] = malloc((size_t)t->numel * sizeof **halves);
            for (int64_t e = 0; e < t->numel; e++)
                halves[i][e] = kind == 0 ? plc_f32_to_bf16(src[e]) : f32_to_half_exact(src[e]);
            CU_ASSERT(plc_st_writer_add(&wr, t->name, kind == 0 ? PLC_ST_BF16 : PLC_ST_F16, t->ndim, t->shape,
                                        halves[i], err, sizeof err) == 0);
        }
        snprintf(path, sizeof path, "%s/half_%d.safetensors", dir, kind);
        CU_ASSERT_FATAL(plc_st_writer_save(&wr, path, err, sizeof err) == 0);
        float **back = alloc_weights(&m);
        int rc = plc_hf_read(&m, path, back, err, sizeof err);
        if (rc) fprintf(stderr, "\n  %s\n", err);
        CU_ASSERT(rc == 0);
        for (int64_t t = 0; t < nt && rc == 0; t++) {
            plc_tensor_info ti;
            plc_tensor_get(&m, t, &ti);
            CU_ASSERT(memcmp(back[t], w[t], (size_t)ti.numel * sizeof(float)) == 0);
        }
        free_weights(&m, back);
        for (size_t i = 0; i < f.n_tensors; i++) free(halves[i]);
        free(halves);
        plc_st_writer_free(&wr);
    }
    plc_st_close(&f);
    free_weights(&m, w);
}

/* writes a safetensors file of the given tensors (all zero) at path */
static void write_file(const char *path, int n, const char *const *names, const int64_t (*shapes)[2],
                       const int *ndims)
{
    plc_st_writer wr;
    plc_st_writer_init(&wr);
    static float zeros[4096];
    char err[256];
    for (int i = 0; i < n; i++) CU_ASSERT(plc_st_writer_add(&wr, names[i], PLC_ST_F32, ndims[i], shapes[i], zeros, err, sizeof err) == 0);
    CU_ASSERT(plc_st_writer_save(&wr, path, err, sizeof err) == 0);
    plc_st_writer_free(&wr);
}

static void expect_read_error(const plc_model *m, const char *path, const char *n1, const char *n2)
{
    float **w = alloc_weights(m);
    char err[600] = "";
    CU_ASSERT_NOT_EQUAL(plc_hf_read(m, path, w, err, sizeof err), 0);
    int ok = strstr(err, n1) && (!n2 || strstr(err, n2));
    CU_ASSERT(ok);
    if (!ok) fprintf(stderr, "\n  got: %s\n", err);
    free_weights(m, w);
}

static void test_errors(void)
{
    plc_model m = llama_model();
    float **w = make_weights(&m);
    char d[256], path[300], cmd[700];
    snprintf(d, sizeof d, "%s/err", dir);
    char msg[512];
    CU_ASSERT_FATAL(plc_hf_write(&m, (const float *const *)w, d, msg, sizeof msg) == 0);
    /* a model with another head count: config.json says so */
    plc_model other = m;
    other.heads = 8;
    expect_read_error(&other, d, "num_attention_heads", "8");
    /* settings beside the shape that change what the weights compute */
    plc_model theta = m;
    theta.rope_theta = 500000;
    expect_read_error(&theta, d, "rope_theta is 10000", "model.rope_theta = 500000");
    snprintf(path, sizeof path, "%s/config.json", d);
    FILE *cf = fopen(path, "w");
    CU_ASSERT_FATAL(cf != NULL);
    fputs("{\"model_type\": \"llama\", \"hidden_size\": 16, \"rope_scaling\": {\"rope_type\": \"llama3\"}}", cf);
    fclose(cf);
    expect_read_error(&m, d, "rope_scaling is set", NULL);
    cf = fopen(path, "w");
    CU_ASSERT_FATAL(cf != NULL);
    fputs("{\"model_type\": \"llama\", \"tie_word_embeddings\": true}", cf);
    fclose(cf);
    expect_read_error(&m, d, "tie_word_embeddings is true", "model.tie_embeddings = false");
    cf = fopen(path, "w");
    CU_ASSERT_FATAL(cf != NULL);
    fputs("{\"model_type\": \"llama\", \"attention_bias\": true}", cf);
    fclose(cf);
    expect_read_error(&m, d, "attention_bias is true", NULL);
    /* a config.json of only defaults reads */
    cf = fopen(path, "w");
    CU_ASSERT_FATAL(cf != NULL);
    fputs("{\"model_type\": \"llama\", \"rope_scaling\": null}", cf);
    fclose(cf);
    float **ok = alloc_weights(&m);
    CU_ASSERT(plc_hf_read(&m, d, ok, msg, sizeof msg) == 0);
    free_weights(&m, ok);
    /* only a file: a tensor missing, named with plc's name */
    snprintf(path, sizeof path, "%s/lone/x.safetensors", dir);
    snprintf(cmd, sizeof cmd, "mkdir -p %s/lone", dir);
    CU_ASSERT(system(cmd) == 0);
    const char *names[] = {"model.embed_tokens.weight"};
    const int64_t shapes[][2] = {{11, 16}};
    const int nd[] = {2};
    write_file(path, 1, names, shapes, nd);
    expect_read_error(&m, path, "model.layers.0.input_layernorm.weight", "layers.0.attn_norm");
    /* a wrong shape: both shapes named */
    const int64_t wrong[][2] = {{12, 16}};
    write_file(path, 1, names, wrong, nd);
    expect_read_error(&m, path, "model.embed_tokens.weight has shape [12, 16]", "[11, 16]");
    /* no model.safetensors in a directory */
    snprintf(cmd, sizeof cmd, "%s/lone", dir);
    expect_read_error(&m, cmd, "no model.safetensors", NULL);
    /* tied checkpoint, untied model */
    plc_model tied = m;
    tied.tie_embeddings = true;
    snprintf(d, sizeof d, "%s/tied", dir);
    float **wt = make_weights(&tied);
    CU_ASSERT_FATAL(plc_hf_write(&tied, (const float *const *)wt, d, msg, sizeof msg) == 0);
    snprintf(path, sizeof path, "%s/tied/model.safetensors", dir);
    expect_read_error(&m, path, "tie_word_embeddings is true", "model.tie_embeddings = false");
    snprintf(cmd, sizeof cmd, "%s/tied/config.json", dir);
    CU_ASSERT(unlink(cmd) == 0); /* without config.json the tensors tell */
    expect_read_error(&m, path, "lm_head.weight", "ties its embeddings");
    free_weights(&tied, wt);
    /* GPT blocks without a GPT-2 counterpart */
    plc_model g = gpt_model();
    g.positions = PLC_POS_ROPE;
    CU_ASSERT_NOT_EQUAL(plc_hf_supported(&g, msg, sizeof msg), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(msg, "learned positions"));
    free_weights(&m, w);
}

/* "%lld" or ".0." as "{l}" */
static void layer_pattern(char *dst, size_t n, const char *src, const char *layer)
{
    const char *at = strstr(src, layer);
    if (!at) { snprintf(dst, n, "%s", src); return; }
    snprintf(dst, n, "%.*s%s%s", (int)(at - src), src, layer[0] == '%' ? "{l}" : ".{l}.", at + strlen(layer));
}

/* docs/checkpoint.md's two tables hold every row of hf_names.c's, as
 * "| `plc tensor` | `Hugging Face name` | shape | transform" */
static void test_docs_tables(void)
{
    FILE *f = fopen("../docs/checkpoint.md", "r");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    static char doc[1 << 17];
    size_t len = fread(doc, 1, sizeof doc - 1, f);
    doc[len] = '\0';
    fclose(f);
    const plc_arch arches[2] = {PLC_ARCH_LLAMA, PLC_ARCH_GPT};
    for (int a = 0; a < 2; a++) {
        plc_model m = a == 0 ? llama_model() : gpt_model();
        m.layers = 1;
        m.tie_embeddings = false; /* lm_head has a row too */
        plc_tensor_role role;
        const char *pattern;
        plc_hf_transform t;
        int rows = 0;
        for (int r = 0; plc_hf_table_row(arches[a], r, &role, &pattern, &t); r++, rows++) {
            plc_tensor_info ti;
            CU_ASSERT_FATAL(plc_tensor_get(&m, plc_tensor_id(&m, role, 0), &ti));
            char plc_name[96], hf_name[128], line[300];
            layer_pattern(plc_name, sizeof plc_name, ti.name, ".0.");
            layer_pattern(hf_name, sizeof hf_name, pattern, "%lld");
            snprintf(line, sizeof line, "| `%s` | `%s` | ", plc_name, hf_name);
            const char *at = strstr(doc, line);
            const char *end = at ? strchr(at, '\n') : NULL;
            const char *cell = at ? strstr(at + strlen(line), "| ") : NULL;
            int ok = at && cell && end && cell < end &&
                     !strncmp(cell + 2, plc_hf_transform_name(t), strlen(plc_hf_transform_name(t)));
            if (!ok) fprintf(stderr, "\n  docs/checkpoint.md lacks the row %s... %s\n", line, plc_hf_transform_name(t));
            CU_ASSERT(ok);
        }
        CU_ASSERT_EQUAL(rows, a == 0 ? 12 : 21);
    }
}

void register_test_runtime_hf_ckpt(void);
void register_test_runtime_hf_ckpt(void)
{
    CU_pSuite s = CU_add_suite("hf_ckpt", suite_init, suite_clean);
    CU_add_test(s, "Llama: transformers' names, shapes, q/k permutation; round trip", test_llama_names_and_layouts);
    CU_add_test(s, "Llama: an attention score under plc's RoPE equals rotate-half's", test_llama_rope_score);
    CU_add_test(s, "GPT-2: names, Conv1D layouts, fused c_attn; round trip", test_gpt_names_and_layouts);
    CU_add_test(s, "BF16 and F16 files are widened exactly", test_half_precision_files);
    CU_add_test(s, "docs/checkpoint.md's tables hold every row of hf_names.c's", test_docs_tables);
    CU_add_test(s, "errors name the tensor, the shapes or the config key", test_errors);
}
