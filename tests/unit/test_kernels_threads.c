/* tests/unit/test_kernels_threads.c: every CPU kernel gives bitwise the same
 * result with 1, 3 and 4 OpenMP threads. Shapes are large enough to pass
 * the kernels' "worth parallelising" thresholds. */
#include "kernels/kernels.h"
#include "test_kernels_util.h"

#include <cblas.h>
#include <omp.h>

/* A case computes its outputs from fixed inputs into result[0 .. n). */
typedef void (*thread_case)(float *result);

static void compare_thread_counts(thread_case run, int64_t n)
{
    int saved = omp_get_max_threads();
    float *ref = tk_alloc(n), *got = tk_alloc(n);
    omp_set_num_threads(1);
    run(ref);
    static const int counts[] = {3, 4};
    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
        omp_set_num_threads(counts[c]);
        memset(got, 0xff, sizeof(float) * (size_t)n);
        run(got);
        CU_ASSERT(memcmp(ref, got, sizeof(float) * (size_t)n) == 0);
    }
    omp_set_num_threads(saved);
    CU_ASSERT(tk_max_abs(ref, n) > 0);
    free(ref), free(got);
}

/* ---- cases ------------------------------------------------------------------ */

enum { ROWS = 300, DIM = 256, VOCAB = 50 };

static void fill_tokens(int32_t *tok, int64_t n, int32_t vocab)
{
    for (int64_t i = 0; i < n; i++) tok[i] = (int32_t)((i * 7919 + 13) % vocab);
}

static void case_embedding(float *res)
{
    float *table = tk_alloc(VOCAB * DIM), *dout = tk_alloc(ROWS * DIM);
    int32_t tok[ROWS];
    fill_tokens(tok, ROWS, VOCAB);
    tk_fill(table, VOCAB * DIM, 1, 1.0f);
    tk_fill(dout, ROWS * DIM, 2, 1.0f);
    plc_k_embedding_forward(res, tok, table, ROWS, DIM, 0, VOCAB);
    memset(res + ROWS * DIM, 0, sizeof(float) * ROWS * DIM);
    plc_k_embedding_backward(res + ROWS * DIM, dout, tok, ROWS, DIM, 10, 30); /* repeated tokens */
    free(table), free(dout);
}

static void case_rmsnorm(float *res)
{
    float *in = tk_alloc(ROWS * DIM), *w = tk_alloc(DIM), *dout = tk_alloc(ROWS * DIM);
    tk_fill(in, ROWS * DIM, 3, 2.0f);
    tk_fill(w, DIM, 4, 1.0f);
    tk_fill(dout, ROWS * DIM, 5, 1.0f);
    float *out = res, *rstd = res + ROWS * DIM, *din = rstd + ROWS, *dw = din + ROWS * DIM;
    plc_k_rmsnorm_forward(out, rstd, in, w, ROWS, DIM, 1e-5f);
    memset(din, 0, sizeof(float) * (ROWS * DIM + DIM));
    plc_k_rmsnorm_backward(din, dw, dout, in, w, rstd, ROWS, DIM);
    free(in), free(w), free(dout);
}

enum { RB = 2, RT = 128, RH = 8, RHD = 32, RN = RB * RT * RH * RHD };
static void case_rope(float *res)
{
    float *in = tk_alloc(RN);
    int32_t pos[RT];
    for (int t = 0; t < RT; t++) pos[t] = 1000 + 3 * t;
    tk_fill(in, RN, 6, 1.0f);
    plc_k_rope_forward(res, in, pos, RB, RT, RH, RHD, 10000.0f);
    memset(res + RN, 0, sizeof(float) * RN);
    plc_k_rope_backward(res + RN, in, NULL, RB, RT, RH, RHD, 500000.0f);
    free(in);
}

enum { AB = 2, AT = 70, AH = 4, AKV = 2, AHD = 16, AQ = AB * AT * AH * AHD, AKVN = AB * AT * AKV * AHD };
static void case_attention(float *res, int flash)
{
    float *q = tk_alloc(AQ), *k = tk_alloc(AKVN), *v = tk_alloc(AKVN), *dout = tk_alloc(AQ);
    float *saved = tk_alloc(AB * AH * AT * AT);
    tk_fill(q, AQ, 7, 1.0f), tk_fill(k, AKVN, 8, 1.0f), tk_fill(v, AKVN, 9, 1.0f), tk_fill(dout, AQ, 10, 1.0f);
    float *out = res, *dq = out + AQ, *dk = dq + AQ, *dv = dk + AKVN;
    memset(dq, 0, sizeof(float) * (AQ + 2 * AKVN));
    if (flash) {
        plc_k_flash_attention_forward(out, saved, q, k, v, NULL, NULL, AB, AT, AT, AH, AKV, AHD);
        plc_k_flash_attention_backward(dq, dk, dv, dout, q, k, v, out, saved, NULL, NULL,
                                       AB, AT, AT, AH, AKV, AHD);
    } else {
        plc_k_attention_forward(out, saved, q, k, v, NULL, NULL, AB, AT, AT, AH, AKV, AHD);
        plc_k_attention_backward(dq, dk, dv, dout, q, k, v, out, saved, AB, AT, AT, AH, AKV, AHD);
    }
    free(q), free(k), free(v), free(dout), free(saved);
}
static void case_attention_materialised(float *res) { case_attention(res, 0); }
static void case_attention_flash(float *res) { case_attention(res, 1); }

enum { EN = 100000 };
static void case_elementwise(float *res)
{
    float *a = tk_alloc(EN), *b = tk_alloc(EN), *g = tk_alloc(EN);
    tk_fill(a, EN, 11, 3.0f), tk_fill(b, EN, 12, 1.0f), tk_fill(g, EN, 13, 1.0f);
    plc_k_swiglu_forward(res, a, b, EN);
    memset(res + EN, 0, sizeof(float) * 2 * EN);
    plc_k_swiglu_backward(res + EN, res + 2 * EN, g, a, b, EN);
    plc_k_add(res + 3 * EN, a, b, EN);
    plc_k_accumulate(res + 3 * EN, g, EN);
    plc_k_scale(res + 3 * EN, 0.3f, EN);
    free(a), free(b), free(g);
}

enum { XR = 64, XV = 1000 };
static void case_cross_entropy(float *res)
{
    float *logits = tk_alloc(XR * XV);
    int32_t tgt[XR];
    fill_tokens(tgt, XR, XV);
    tk_fill(logits, XR * XV, 14, 4.0f);
    plc_k_cross_entropy(res, res + XR, logits, tgt, XR, XV, 1.0f / XR);
    float *m = res + XR + XR * XV, *s = m + XR, *t = s + XR;
    plc_k_xent_local_max(m, logits, XR, XV);
    plc_k_xent_local_sumexp(s, t, logits, m, tgt, XR, XV, 0);
    free(logits);
}

enum { ON = 300000 };
static void case_optimizer(float *res)
{
    float *p = res, *m = res + ON, *v = res + 2 * ON, *g = tk_alloc(ON);
    tk_fill(p, ON, 15, 1.0f), tk_fill(g, ON, 16, 1.0f);
    memset(m, 0, sizeof(float) * 2 * ON);
    double ss = plc_k_sum_squares(g, ON), s = plc_k_sum(g, ON);
    for (int64_t t = 1; t <= 2; t++)
        plc_k_adamw(p, g, m, v, ON, 1e-3, 0.9, 0.95, 1e-8, 0.1, t, (float)(1.0 / sqrt(ss)));
    memcpy(res + 3 * ON, &ss, sizeof ss);
    memcpy(res + 3 * ON + 2, &s, sizeof s);
    free(g);
}

/* OpenBLAS threads on its own pool; its sgemm splits the output, not K. */
enum { MM = 200, MN = 150, MK = 170 };
static void case_matmul(float *res)
{
    float *A = tk_alloc(MM * MK), *B = tk_alloc(MK * MN);
    tk_fill(A, MM * MK, 17, 1.0f), tk_fill(B, MK * MN, 18, 1.0f);
    plc_k_matmul(res, A, B, MM, MN, MK, 0, 0, 1.0f, 0.0f);
    plc_k_matmul(res, A, A, MM, MM > MN ? MN : MM, MK, 0, 1, 1.0f, 1.0f);
    free(A), free(B);
}

static void test_embedding(void) { compare_thread_counts(case_embedding, 2 * ROWS * DIM); }
static void test_rmsnorm(void) { compare_thread_counts(case_rmsnorm, 2 * ROWS * DIM + ROWS + DIM); }
static void test_rope(void) { compare_thread_counts(case_rope, 2 * RN); }
static void test_materialised(void) { compare_thread_counts(case_attention_materialised, 2 * AQ + 2 * AKVN); }
static void test_flash(void) { compare_thread_counts(case_attention_flash, 2 * AQ + 2 * AKVN); }
static void test_elementwise(void) { compare_thread_counts(case_elementwise, 4 * EN); }
static void test_cross_entropy(void) { compare_thread_counts(case_cross_entropy, XR + XR * XV + 3 * XR); }
static void test_optimizer(void) { compare_thread_counts(case_optimizer, 3 * ON + 4); }

static void test_matmul(void)
{
    float *ref = tk_alloc(MM * MN), *got = tk_alloc(MM * MN);
    openblas_set_num_threads(1);
    case_matmul(ref);
    openblas_set_num_threads(4);
    case_matmul(got);
    openblas_set_num_threads(omp_get_num_procs());
    CU_ASSERT(memcmp(ref, got, sizeof(float) * MM * MN) == 0);
    free(ref), free(got);
}

void register_test_kernels_threads(void)
{
    CU_pSuite s = CU_add_suite("kernels_threads", NULL, NULL);
    CU_add_test(s, "embedding: bitwise equal for 1, 3, 4 threads", test_embedding);
    CU_add_test(s, "rmsnorm: bitwise equal for 1, 3, 4 threads", test_rmsnorm);
    CU_add_test(s, "rope: bitwise equal for 1, 3, 4 threads", test_rope);
    CU_add_test(s, "attention: bitwise equal for 1, 3, 4 threads", test_materialised);
    CU_add_test(s, "flash attention: bitwise equal for 1, 3, 4 threads", test_flash);
    CU_add_test(s, "swiglu, add, scale: bitwise equal for 1, 3, 4 threads", test_elementwise);
    CU_add_test(s, "cross-entropy: bitwise equal for 1, 3, 4 threads", test_cross_entropy);
    CU_add_test(s, "sums and adamw: bitwise equal for 1, 3, 4 threads", test_optimizer);
    CU_add_test(s, "matmul: bitwise equal for 1 and 4 OpenBLAS threads", test_matmul);
}
