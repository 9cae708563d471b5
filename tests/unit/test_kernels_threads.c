/* tests/unit/test_kernels_threads.c: the CPU backend's determinism contract
 * (docs/runtime.md): every CPU kernel, forward and backward, gives bitwise
 * the same result with 1, 2, 3 and 4 OpenMP threads. Shapes cross every
 * kernel's "worth parallelising" threshold, and leave ragged last chunks,
 * tiles and GEMM panels. make test-determinism runs this suite under
 * several OpenBLAS core types (OPENBLAS_CORETYPE). */
#include "kernels/kernels.h"
#include "runtime/init.h"
#include "test_kernels_util.h"

#include <cblas.h>
#include <omp.h>

/* A case computes its outputs from fixed inputs into result[0 .. n). */
typedef void (*thread_case)(float *result);

static const int thread_counts[] = {2, 3, 4}; /* each against 1 */

/* A thread count is set for both OpenMP and OpenBLAS, as a user would set
 * OMP_NUM_THREADS and OPENBLAS_NUM_THREADS: the kernels must not depend on
 * either. */
static void set_threads(int n)
{
    omp_set_num_threads(n);
    openblas_set_num_threads(n);
}

/* runs the case with 1 thread, then `rounds` times with each other count */
static void compare_rounds(thread_case run, int64_t n, int rounds)
{
    int saved = omp_get_max_threads();
    float *ref = tk_alloc(n), *got = tk_alloc(n);
    set_threads(1);
    run(ref);
    for (size_t c = 0; c < sizeof thread_counts / sizeof thread_counts[0]; c++)
        for (int r = 0; r < rounds; r++) {
            set_threads(thread_counts[c]);
            memset(got, 0xff, sizeof(float) * (size_t)n);
            run(got);
            CU_ASSERT(memcmp(ref, got, sizeof(float) * (size_t)n) == 0);
        }
    omp_set_num_threads(saved);
    CU_ASSERT(tk_max_abs(ref, n) > 0);
    free(ref), free(got);
}

static void compare_thread_counts(thread_case run, int64_t n) { compare_rounds(run, n, 1); }

/* ---- cases ------------------------------------------------------------------ */

/* DIM is not a multiple of the 32-column chunks of the backward passes */
enum { ROWS = 300, DIM = 250, VOCAB = 50 };

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

/* T * hd / 2 crosses the RoPE table's threshold as well as the rotation's */
enum { RB = 1, RT = 1100, RH = 2, RHD = 32, RN = RB * RT * RH * RHD };
static void case_rope(float *res)
{
    float *in = tk_alloc(RN);
    int32_t *pos = malloc(RT * sizeof *pos);
    CU_ASSERT_FATAL(pos != NULL);
    for (int t = 0; t < RT; t++) pos[t] = 1000 + 3 * t;
    tk_fill(in, RN, 6, 1.0f);
    plc_k_rope_forward(res, in, pos, RB, RT, RH, RHD, 10000.0f);
    memset(res + RN, 0, sizeof(float) * RN);
    plc_k_rope_backward(res + RN, in, NULL, RB, RT, RH, RHD, 500000.0f);
    free(in), free(pos);
}

/* T = 70: three query tiles of 32 and two key tiles of 64, both ragged */
enum { AB = 2, AT = 70, AH = 4, AKV = 2, AHD = 16, AQ = AB * AT * AH * AHD, AKVN = AB * AT * AKV * AHD };
static void case_attention(float *res, int flash)
{
    float *q = tk_alloc(AQ), *k = tk_alloc(AKVN), *v = tk_alloc(AKVN), *dout = tk_alloc(AQ);
    float *saved = tk_alloc(AB * AH * AT * AT);
    tk_fill(q, AQ, 7, 1.0f), tk_fill(k, AKVN, 8, 1.0f), tk_fill(v, AKVN, 9, 1.0f), tk_fill(dout, AQ, 10, 1.0f);
    float *out = res, *dq = out + AQ, *dk = dq + AQ, *dv = dk + AKVN;
    memset(dq, 0, sizeof(float) * (AQ + 2 * AKVN));
    if (flash) {
        plc_k_attention_forward(out, NULL, saved, q, k, v, NULL, NULL, AB, AT, AT, AH, AKV, AHD);
        plc_k_attention_backward(dq, dk, dv, dout, q, k, v, out, NULL, saved, NULL, NULL, AB, AT, AT, AH, AKV,
                                 AHD);
    } else {
        plc_k_attention_forward(out, saved, NULL, q, k, v, NULL, NULL, AB, AT, AT, AH, AKV, AHD);
        plc_k_attention_backward(dq, dk, dv, dout, q, k, v, out, saved, NULL, NULL, NULL, AB, AT, AT, AH, AKV,
                                 AHD);
    }
    free(q), free(k), free(v), free(dout), free(saved);
}
static void case_attention_materialised(float *res) { case_attention(res, 0); }
static void case_attention_flash(float *res) { case_attention(res, 1); }

enum { EN = 100003 };
static void case_elementwise(float *res)
{
    float *a = tk_alloc(EN), *b = tk_alloc(EN), *g = tk_alloc(EN);
    uint16_t *h = malloc(EN * sizeof *h);
    CU_ASSERT_FATAL(h != NULL);
    tk_fill(a, EN, 11, 3.0f), tk_fill(b, EN, 12, 1.0f), tk_fill(g, EN, 13, 1.0f);
    plc_k_swiglu_forward(res, a, b, EN);
    memset(res + EN, 0, sizeof(float) * 2 * EN);
    plc_k_swiglu_backward(res + EN, res + 2 * EN, g, a, b, EN);
    plc_k_add(res + 3 * EN, a, b, EN);
    plc_k_accumulate(res + 3 * EN, g, EN);
    plc_k_scale(res + 3 * EN, 0.3f, EN);
    plc_k_cast_f32_to_bf16(h, res + 3 * EN, EN);
    plc_k_cast_bf16_to_f32(res + 4 * EN, h, EN);
    free(a), free(b), free(g), free(h);
}

enum { XR = 64, XV = 1000, XS0 = 300, XS = 500 }; /* the shard [XS0, XS0 + XS) */
static void case_cross_entropy(float *res)
{
    float *logits = tk_alloc(XR * XV);
    int32_t tgt[XR];
    fill_tokens(tgt, XR, XV);
    tk_fill(logits, XR * XV, 14, 4.0f);
    plc_k_cross_entropy(res, res + XR, logits, tgt, XR, XV, 1.0f / XR);
    /* the sharded pieces, on a shard of the vocabulary */
    float *m = res + XR + XR * XV, *s = m + XR, *t = s + XR, *loss = t + XR, *d = loss + XR;
    plc_k_xent_local_max(m, logits, XR, XS);
    plc_k_xent_local_sumexp(s, t, logits, m, tgt, XR, XS, XS0);
    plc_k_xent_loss_grad(loss, d, logits, m, s, t, tgt, XR, XS, XS0, 0.25f);
    free(logits);
}

enum { ON = 300001 };
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

/* the runtime's parameter initialisation (runtime/init.c) */
enum { IN_N = 70001 };
static void case_init(float *res) { plc_init_range(res, 7, 3, 12345, IN_N, 0.02, PLC_INIT_NORMAL); }

/* GEMM panels (kernels/cpu/matmul.c): M and N span several panels with
 * ragged last ones, for every transpose, beta 0 and 1, and a strided C; a
 * shape below the parallel threshold is one panel. */
enum { MM = 300, MN = 270, MK = 170, MLD = 280, MSMALL = 20 };
enum { MM_OUT = 4 * 2 * MM * MLD + MSMALL * MSMALL };
static void case_matmul(float *res)
{
    float *A = tk_alloc(MM * MK), *B = tk_alloc(MK * MN);
    tk_fill(A, MM * MK, 17, 1.0f), tk_fill(B, MK * MN, 18, 1.0f);
    float *C = res;
    for (int ta = 0; ta < 2; ta++)
        for (int tb = 0; tb < 2; tb++)
            for (int beta = 0; beta < 2; beta++, C += MM * MLD) {
                /* the stored shapes differ with the transposes; the same
                 * data read as [MK, MM] or [MN, MK] suits every case */
                tk_fill(C, MM * MLD, 19, 1.0f);
                plc_k_matmul_strided(C, MLD, A, ta ? MM : MK, B, tb ? MK : MN, MM, MN, MK, ta, tb,
                                     0.75f, (float)beta);
            }
    plc_k_matmul(C, A, B, MSMALL, MSMALL, MSMALL, 0, 0, 1.0f, 0.0f);
    free(A), free(B);
}

static void test_embedding(void) { compare_thread_counts(case_embedding, 2 * ROWS * DIM); }
static void test_rmsnorm(void) { compare_thread_counts(case_rmsnorm, 2 * ROWS * DIM + ROWS + DIM); }
static void test_rope(void) { compare_thread_counts(case_rope, 2 * RN); }
static void test_materialised(void) { compare_thread_counts(case_attention_materialised, 2 * AQ + 2 * AKVN); }
static void test_flash(void) { compare_thread_counts(case_attention_flash, 2 * AQ + 2 * AKVN); }
static void test_elementwise(void) { compare_thread_counts(case_elementwise, 5 * EN); }
static void test_cross_entropy(void) { compare_thread_counts(case_cross_entropy, 5 * XR + XR * XV + XR * XS); }
static void test_optimizer(void) { compare_thread_counts(case_optimizer, 3 * ON + 4); }
static void test_init(void) { compare_thread_counts(case_init, IN_N); }

/* Many rounds: OpenBLAS is called from several threads at once, so a
 * data race in it would show as a difference. The kernel runs OpenBLAS
 * single-threaded whatever it was set to, and that leaves OpenMP's thread
 * count alone. */
static void test_matmul(void)
{
    compare_rounds(case_matmul, MM_OUT, 10);
    set_threads(3);
    float *C = tk_alloc(MM_OUT);
    case_matmul(C);
    CU_ASSERT(openblas_get_num_threads() == 1);
    CU_ASSERT(omp_get_max_threads() == 3);
    free(C);
}

void register_test_kernels_threads(void)
{
    CU_pSuite s = CU_add_suite("kernels_threads", NULL, NULL);
    CU_add_test(s, "embedding fwd/bwd: bitwise equal for 1, 2, 3, 4 threads", test_embedding);
    CU_add_test(s, "rmsnorm fwd/bwd: bitwise equal for 1, 2, 3, 4 threads", test_rmsnorm);
    CU_add_test(s, "rope fwd/bwd: bitwise equal for 1, 2, 3, 4 threads", test_rope);
    CU_add_test(s, "attention fwd/bwd: bitwise equal for 1, 2, 3, 4 threads", test_materialised);
    CU_add_test(s, "flash attention fwd/bwd: bitwise equal for 1, 2, 3, 4 threads", test_flash);
    CU_add_test(s, "swiglu, add, scale, casts: bitwise equal for 1, 2, 3, 4 threads", test_elementwise);
    CU_add_test(s, "cross-entropy, fused and sharded: bitwise equal for 1, 2, 3, 4 threads", test_cross_entropy);
    CU_add_test(s, "sums and adamw: bitwise equal for 1, 2, 3, 4 threads", test_optimizer);
    CU_add_test(s, "parameter init: bitwise equal for 1, 2, 3, 4 threads", test_init);
    CU_add_test(s, "matmul panels, all transposes: bitwise equal for 1, 2, 3, 4 threads, 10 rounds", test_matmul);
}
