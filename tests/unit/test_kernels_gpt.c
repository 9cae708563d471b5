/* tests/unit/test_kernels_gpt.c: the CPU kernels of the GPT block
 * (LayerNorm, GELU, bias, learned positions): forward results against known
 * values and direct formulas, backward passes against central finite
 * differences, and bitwise-equal results for 1, 2, 3 and 4 OpenMP threads
 * on shapes past the kernels' parallel thresholds.
 *
 * With PLC_KERNEL_EXPORT=FILE set, a further suite "kernels_gpt_export"
 * writes the inputs and outputs of fixed cases to FILE (safetensors) for
 * the PyTorch check, tests/oracle/kernels_gpt_oracle.py (run by
 * tests/e2e/kernels_gpt_oracle.sh). */
#include "kernels/kernels.h"
#include "kernels/common/activations.h"
#include "kernels/common/layernorm.h"
#include "runtime/safetensors.h"
#include "test_kernels_util.h"

#include <omp.h>

/* ---- GELU ---------------------------------------------------------------- */

/* gelu(x) in double, written independently of the header */
static double gelu_ref(double x)
{
    return 0.5 * x * (1.0 + tanh(sqrt(2.0 / acos(-1.0)) * (x + 0.044715 * x * x * x)));
}

static void test_gelu_values(void)
{
    /* 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), evaluated in double
     * by Python's math module */
    static const double known[][2] = {
        {-3.0, -0.0036373920817729943}, {-1.0, -0.15880800939172324}, {-0.5, -0.15428599017485606},
        {0.0, 0.0}, {0.5, 0.34571400982514394}, {1.0, 0.8411919906082768},
        {2.0, 1.954597694087775}, {3.0, 2.996362607918227},
    };
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        CU_ASSERT_DOUBLE_EQUAL(plc_gelu((float)known[i][0]), known[i][1], 1e-6);
        CU_ASSERT_DOUBLE_EQUAL(gelu_ref(known[i][0]), known[i][1], 1e-15);
    }
    /* the negative tail keeps its relative accuracy where 1 + tanh(u)
     * would cancel in fp32 (at x = -5 it is about 1e-7); past -5 the double
     * reference cancels too */
    for (double x = -3.0; x >= -5.0; x -= 1.0) {
        double h = 1e-6, fd = (gelu_ref(x + h) - gelu_ref(x - h)) / (2 * h);
        CU_ASSERT(fabs(plc_gelu((float)x) / gelu_ref(x) - 1.0) < 1e-5);
        CU_ASSERT(fabs(plc_gelu_grad((float)x) / fd - 1.0) < 1e-4);
    }
    /* far tails: identity and zero, no NaN where x^2 overflows */
    CU_ASSERT_EQUAL(plc_gelu(20.0f), 20.0f);
    CU_ASSERT_EQUAL(plc_gelu(-20.0f), -0.0f);
    CU_ASSERT_EQUAL(plc_gelu_grad(1e20f), 1.0f);
    CU_ASSERT_EQUAL(plc_gelu_grad(-1e20f), 0.0f);
    CU_ASSERT_EQUAL(plc_gelu_grad(0.0f), 0.5f);
    /* the derivative against central differences of the double formula */
    double worst = 0;
    for (int i = -400; i <= 400; i++) {
        double x = i / 50.0, h = 1e-5;
        double fd = (gelu_ref(x + h) - gelu_ref(x - h)) / (2 * h);
        worst = fmax(worst, fabs(fd - plc_gelu_grad((float)x)));
    }
    CU_ASSERT(worst < 1e-6);
}

typedef struct { float *out, *in; int64_t n; } gelu_ctx;
static void gelu_fwd(void *p)
{
    gelu_ctx *c = p;
    plc_k_gelu_forward(c->out, c->in, c->n);
}

static void test_gelu_kernels(void)
{
    enum { N = 40 };
    float in[N], out[N], dout[N], din[N];
    tk_fill(in, N, 1, 4.0f);
    tk_fill(dout, N, 2, 1.0f);
    tk_fill(din, N, 3, 1.0f); /* the backward accumulates onto this */
    float din0[N];
    memcpy(din0, din, sizeof din);
    gelu_ctx c = {out, in, N};
    gelu_fwd(&c);
    for (int i = 0; i < N; i++) CU_ASSERT_DOUBLE_EQUAL(out[i], gelu_ref(in[i]), 1e-6);
    plc_k_gelu_backward(din, dout, in, N);
    float grad[N];
    for (int i = 0; i < N; i++) grad[i] = din[i] - din0[i];
    tk_loss L = {gelu_fwd, &c, out, dout, N};
    tk_fd_check("gelu din", in, N, grad, &L, 1e-2f, 1e-3);
    /* in place */
    float x[N];
    memcpy(x, in, sizeof x);
    plc_k_gelu_forward(x, x, N);
    CU_ASSERT(memcmp(x, out, sizeof x) == 0);
}

/* ---- LayerNorm ------------------------------------------------------------ */

static void test_layernorm_values(void)
{
    /* x = (1, 2, 3, 4): mean 2.5, biased variance 1.25 */
    float x[4] = {1, 2, 3, 4}, w[4] = {1, 2, 0.5f, -1}, b[4] = {0, 1, 0, 0.5f}, y[4], m, s;
    plc_k_layernorm_forward(y, &m, &s, x, w, b, 1, 4, 1e-5f);
    double rstd = 1.0 / sqrt(1.25 + 1e-5);
    CU_ASSERT_EQUAL(m, 2.5f);
    CU_ASSERT_DOUBLE_EQUAL(s, rstd, 1e-7);
    for (int c = 0; c < 4; c++) CU_ASSERT_DOUBLE_EQUAL(y[c], (x[c] - 2.5) * rstd * w[c] + b[c], 1e-6);
    /* a constant row normalises to the bias, rstd = 1/sqrt(eps) */
    float k[3] = {7, 7, 7}, w3[3] = {3, 3, 3}, b3[3] = {0.25f, -1, 2}, y3[3];
    plc_k_layernorm_forward(y3, &m, &s, k, w3, b3, 1, 3, 1e-4f);
    CU_ASSERT_EQUAL(m, 7.0f);
    CU_ASSERT_DOUBLE_EQUAL(s, 100.0, 1e-4);
    for (int c = 0; c < 3; c++) CU_ASSERT_EQUAL(y3[c], b3[c]);
    /* the row statistics survive a large offset (two-pass variance) */
    float big[4] = {1e4f + 1, 1e4f + 2, 1e4f + 3, 1e4f + 4};
    plc_ln_row_stats(big, 4, 0.0f, &m, &s);
    CU_ASSERT_EQUAL(m, 1e4f + 2.5f);
    CU_ASSERT_DOUBLE_EQUAL(s, 1.0 / sqrt(1.25), 1e-7);
}

typedef struct { float *out, *mean, *rstd, *in, *w, *b; int64_t rows, dim; float eps; } ln_ctx;
static void ln_fwd(void *p)
{
    ln_ctx *c = p;
    plc_k_layernorm_forward(c->out, c->mean, c->rstd, c->in, c->w, c->b, c->rows, c->dim, c->eps);
}

static void test_layernorm_backward(void)
{
    enum { R = 3, D = 7 };
    float in[R * D], w[D], b[D], out[R * D], mean[R], rstd[R], dout[R * D];
    tk_fill(in, R * D, 4, 1.5f), tk_fill(w, D, 5, 1.0f), tk_fill(b, D, 6, 1.0f), tk_fill(dout, R * D, 7, 1.0f);
    for (int c = 0; c < D; c++) in[c] += 3.0f; /* a row with a large mean */
    ln_ctx c = {out, mean, rstd, in, w, b, R, D, 1e-5f};
    ln_fwd(&c);
    for (int r = 0; r < R; r++) {
        double m = 0, v = 0;
        for (int k = 0; k < D; k++) m += in[r * D + k];
        m /= D;
        for (int k = 0; k < D; k++) v += (in[r * D + k] - m) * (in[r * D + k] - m);
        double s = 1.0 / sqrt(v / D + 1e-5);
        CU_ASSERT_DOUBLE_EQUAL(mean[r], m, 1e-6);
        CU_ASSERT_DOUBLE_EQUAL(rstd[r], s, 1e-6 * s);
        for (int k = 0; k < D; k++) CU_ASSERT_DOUBLE_EQUAL(out[r * D + k], (in[r * D + k] - m) * s * w[k] + b[k], 1e-5);
    }
    float din[R * D] = {0}, dw[D] = {0}, db[D] = {0};
    plc_k_layernorm_backward(din, dw, db, dout, in, w, mean, rstd, R, D);
    tk_loss L = {ln_fwd, &c, out, dout, R * D};
    tk_fd_check("layernorm din", in, R * D, din, &L, 1e-2f, 1e-3);
    tk_fd_check("layernorm dweight", w, D, dw, &L, 1e-2f, 1e-3);
    tk_fd_check("layernorm dbias", b, D, db, &L, 1e-2f, 1e-3);
    /* the gradient of each row sums to 0 over its columns (shift invariance) */
    for (int r = 0; r < R; r++) {
        double s = 0;
        for (int k = 0; k < D; k++) s += din[r * D + k];
        CU_ASSERT(fabs(s) < 1e-5);
    }
    /* accumulation, and NULL outputs */
    float din2[R * D], dw2[D], db2[D];
    memcpy(din2, din, sizeof din), memcpy(dw2, dw, sizeof dw), memcpy(db2, db, sizeof db);
    plc_k_layernorm_backward(din2, dw2, db2, dout, in, w, mean, rstd, R, D);
    for (int i = 0; i < R * D; i++) CU_ASSERT_DOUBLE_EQUAL(din2[i], 2 * din[i], 1e-6);
    for (int i = 0; i < D; i++) {
        CU_ASSERT_DOUBLE_EQUAL(dw2[i], 2 * dw[i], 1e-6);
        CU_ASSERT_DOUBLE_EQUAL(db2[i], 2 * db[i], 1e-6);
    }
    float only_db[D] = {0};
    plc_k_layernorm_backward(NULL, NULL, only_db, dout, in, w, mean, rstd, R, D);
    CU_ASSERT(memcmp(only_db, db, sizeof db) == 0);
}

/* ---- bias ------------------------------------------------------------------ */

typedef struct { float *out, *in, *bias; int64_t rows, cols; } bias_ctx;
static void bias_fwd(void *p)
{
    bias_ctx *c = p;
    plc_k_bias_add(c->out, c->in, c->bias, c->rows, c->cols);
}

static void test_bias(void)
{
    enum { R = 5, C = 6 };
    float in[R * C], bias[C], out[R * C], dout[R * C], db[C];
    tk_fill(in, R * C, 8, 1.0f), tk_fill(bias, C, 9, 1.0f), tk_fill(dout, R * C, 10, 1.0f), tk_fill(db, C, 11, 1.0f);
    bias_ctx c = {out, in, bias, R, C};
    bias_fwd(&c);
    for (int r = 0; r < R; r++)
        for (int k = 0; k < C; k++) CU_ASSERT_EQUAL(out[r * C + k], in[r * C + k] + bias[k]);
    float db0[C];
    memcpy(db0, db, sizeof db);
    plc_k_bias_backward(db, dout, R, C);
    float grad[C];
    for (int k = 0; k < C; k++) {
        double s = 0;
        for (int r = 0; r < R; r++) s += dout[r * C + k];
        CU_ASSERT_DOUBLE_EQUAL(db[k], db0[k] + s, 1e-6);
        grad[k] = db[k] - db0[k];
    }
    tk_loss L = {bias_fwd, &c, out, dout, R * C};
    tk_fd_check("bias dbias", bias, C, grad, &L, 1e-2f, 1e-4);
    /* in place */
    float x[R * C];
    memcpy(x, in, sizeof x);
    plc_k_bias_add(x, x, bias, R, C);
    CU_ASSERT(memcmp(x, out, sizeof x) == 0);
}

/* ---- learned positions ------------------------------------------------------ */

typedef struct { float *out, *in, *table; const int32_t *pos; int64_t B, T, dim; } pos_ctx;
static void pos_fwd(void *p)
{
    pos_ctx *c = p;
    plc_k_pos_embedding_forward(c->out, c->in, c->table, c->pos, c->B, c->T, c->dim);
}

static void test_pos_embedding(void)
{
    enum { P = 8, B = 2, T = 4, D = 3 };
    /* a context-parallel rank of cp = 2 holding chunks 1 and 2 of 4 */
    const int32_t pos[T] = {2, 3, 4, 5};
    float table[P * D], in[B * T * D], out[B * T * D], dout[B * T * D], dtab[P * D] = {0};
    tk_fill(table, P * D, 12, 1.0f), tk_fill(in, B * T * D, 13, 1.0f), tk_fill(dout, B * T * D, 14, 1.0f);
    pos_ctx c = {out, in, table, pos, B, T, D};
    pos_fwd(&c);
    for (int b = 0; b < B; b++)
        for (int t = 0; t < T; t++)
            for (int k = 0; k < D; k++)
                CU_ASSERT_EQUAL(out[(b * T + t) * D + k], in[(b * T + t) * D + k] + table[pos[t] * D + k]);
    plc_k_pos_embedding_backward(dtab, dout, pos, B, T, D);
    for (int p = 0; p < P; p++)
        for (int k = 0; k < D; k++) {
            float expect = p >= 2 && p < 6 ? dout[(p - 2) * D + k] + dout[(T + p - 2) * D + k] : 0.0f;
            CU_ASSERT_EQUAL(dtab[p * D + k], expect);
        }
    tk_loss L = {pos_fwd, &c, out, dout, B * T * D};
    tk_fd_check("position dtable", table, P * D, dtab, &L, 1e-2f, 1e-4);
    /* NULL positions are 0..T-1; a repeated position adds both steps */
    float out0[B * T * D], d0[P * D] = {0};
    plc_k_pos_embedding_forward(out0, in, table, NULL, B, T, D);
    for (int i = 0; i < B * T * D; i++) CU_ASSERT_EQUAL(out0[i], in[i] + table[(i / D % T) * D + i % D]);
    const int32_t rep[T] = {1, 1, 0, 7};
    plc_k_pos_embedding_backward(d0, dout, rep, B, T, D);
    for (int k = 0; k < D; k++) {
        double s = 0;
        for (int b = 0; b < B; b++) s += dout[(b * T + 0) * D + k] + dout[(b * T + 1) * D + k];
        CU_ASSERT_DOUBLE_EQUAL(d0[1 * D + k], s, 1e-6);
        CU_ASSERT_EQUAL(d0[2 * D + k], 0.0f);
    }
}

/* ---- thread counts ----------------------------------------------------------
 * Shapes past every threshold: rows x dim = 76800 (LayerNorm's 32768, the
 * others' 65536), and B x T x dim = 153600. */
enum { TR = 300, TD = 256, TN = TR * TD, TB = 2, TT = 150, TP = 400 };

typedef void (*thread_case)(float *result);

static void compare_threads(thread_case run, int64_t n)
{
    int saved = omp_get_max_threads();
    float *ref = tk_alloc(n), *got = tk_alloc(n);
    omp_set_num_threads(1);
    run(ref);
    for (int t = 2; t <= 4; t++) {
        omp_set_num_threads(t);
        memset(got, 0xff, sizeof(float) * (size_t)n);
        run(got);
        CU_ASSERT(memcmp(ref, got, sizeof(float) * (size_t)n) == 0);
    }
    omp_set_num_threads(saved);
    CU_ASSERT(tk_max_abs(ref, n) > 0);
    free(ref), free(got);
}

static void case_layernorm(float *res)
{
    float *in = tk_alloc(TN), *w = tk_alloc(TD), *b = tk_alloc(TD), *dout = tk_alloc(TN);
    tk_fill(in, TN, 20, 2.0f), tk_fill(w, TD, 21, 1.0f), tk_fill(b, TD, 22, 1.0f), tk_fill(dout, TN, 23, 1.0f);
    float *out = res, *mean = out + TN, *rstd = mean + TR, *din = rstd + TR, *dw = din + TN, *db = dw + TD;
    plc_k_layernorm_forward(out, mean, rstd, in, w, b, TR, TD, 1e-5f);
    memset(din, 0, sizeof(float) * (TN + 2 * TD));
    plc_k_layernorm_backward(din, dw, db, dout, in, w, mean, rstd, TR, TD);
    free(in), free(w), free(b), free(dout);
}

static void case_gelu_bias(float *res)
{
    float *in = tk_alloc(TN), *bias = tk_alloc(TD), *dout = tk_alloc(TN);
    tk_fill(in, TN, 24, 4.0f), tk_fill(bias, TD, 25, 1.0f), tk_fill(dout, TN, 26, 1.0f);
    plc_k_bias_add(res, in, bias, TR, TD);
    plc_k_gelu_forward(res + TN, res, TN);
    memset(res + 2 * TN, 0, sizeof(float) * (TN + TD));
    plc_k_gelu_backward(res + 2 * TN, dout, res, TN);
    plc_k_bias_backward(res + 3 * TN, res + 2 * TN, TR, TD);
    free(in), free(bias), free(dout);
}

static void case_positions(float *res)
{
    enum { N = TB * TT * TD };
    float *in = tk_alloc(N), *table = tk_alloc(TP * TD), *dout = tk_alloc(N);
    int32_t pos[TT];
    for (int t = 0; t < TT; t++) pos[t] = t < TT / 2 ? 10 + t : 300 + t - TT / 2; /* two chunks */
    tk_fill(in, N, 27, 1.0f), tk_fill(table, TP * TD, 28, 1.0f), tk_fill(dout, N, 29, 1.0f);
    plc_k_pos_embedding_forward(res, in, table, pos, TB, TT, TD);
    memset(res + N, 0, sizeof(float) * TP * TD);
    plc_k_pos_embedding_backward(res + N, dout, pos, TB, TT, TD);
    plc_k_pos_embedding_backward(res + N, res, NULL, TB, TT, TD);
    free(in), free(table), free(dout);
}

static void test_threads_layernorm(void) { compare_threads(case_layernorm, 2 * TN + 2 * TR + 2 * TD); }
static void test_threads_gelu_bias(void) { compare_threads(case_gelu_bias, 3 * TN + TD); }
static void test_threads_positions(void) { compare_threads(case_positions, TB * TT * TD + TP * TD); }

/* ---- export for the PyTorch check -------------------------------------------
 * Fixed cases, each input and output stored under "<case>.<name>":
 *   ln.*   LayerNorm [R, D]: x, w, b, dy -> y, mean, rstd, dx, dw, db (eps 1e-5)
 *   gelu.* [R, F]: x, dy -> y, dx
 *   lin.*  a linear layer with bias, y = x @ W + bias (W stored [in, out]):
 *          x [R, D], w [D, F], bias [F], dy [R, F] -> y, dx, dw, dbias
 *   pos.*  positions: x [B, T, D], table [P, D], positions [T] (I32), dy -> y, dtable */
enum { XR = 24, XD = 40, XF = 72, XB = 3, XT = 8, XP = 32 };

static const char *export_path(void) { return getenv("PLC_KERNEL_EXPORT"); }

typedef struct { plc_st_writer w; char err[256]; int failed; } exporter;

static void put(exporter *e, const char *name, int ndim, const int64_t *shape, const void *data, plc_st_dtype dt)
{
    if (plc_st_writer_add(&e->w, name, dt, ndim, shape, data, e->err, sizeof e->err) != 0) e->failed = 1;
}
#define PUT(e, name, data, ...) put((e), (name), (int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), \
                                    (int64_t[]){__VA_ARGS__}, (data), PLC_ST_F32)

static void test_export(void)
{
    exporter e = {.failed = 0};
    plc_st_writer_init(&e.w);
    /* LayerNorm, with a row offset so the mean matters */
    float *x = tk_alloc(XR * XD), *w = tk_alloc(XD), *b = tk_alloc(XD), *dy = tk_alloc(XR * XD);
    float *y = tk_alloc(XR * XD), *mean = tk_alloc(XR), *rstd = tk_alloc(XR), *dx = tk_alloc(XR * XD);
    float *dw = tk_alloc(XD), *db = tk_alloc(XD);
    tk_fill(x, XR * XD, 40, 2.0f), tk_fill(w, XD, 41, 1.0f), tk_fill(b, XD, 42, 1.0f), tk_fill(dy, XR * XD, 43, 1.0f);
    for (int i = 0; i < XR * XD; i++) x[i] += (float)(i / XD) * 0.5f;
    plc_k_layernorm_forward(y, mean, rstd, x, w, b, XR, XD, 1e-5f);
    plc_k_layernorm_backward(dx, dw, db, dy, x, w, mean, rstd, XR, XD);
    PUT(&e, "ln.x", x, XR, XD), PUT(&e, "ln.w", w, XD), PUT(&e, "ln.b", b, XD), PUT(&e, "ln.dy", dy, XR, XD);
    PUT(&e, "ln.y", y, XR, XD), PUT(&e, "ln.mean", mean, XR), PUT(&e, "ln.rstd", rstd, XR);
    PUT(&e, "ln.dx", dx, XR, XD), PUT(&e, "ln.dw", dw, XD), PUT(&e, "ln.db", db, XD);

    /* GELU over a wide range */
    float *gx = tk_alloc(XR * XF), *gdy = tk_alloc(XR * XF), *gy = tk_alloc(XR * XF), *gdx = tk_alloc(XR * XF);
    tk_fill(gx, XR * XF, 44, 6.0f), tk_fill(gdy, XR * XF, 45, 1.0f);
    plc_k_gelu_forward(gy, gx, XR * XF);
    plc_k_gelu_backward(gdx, gdy, gx, XR * XF);
    PUT(&e, "gelu.x", gx, XR, XF), PUT(&e, "gelu.dy", gdy, XR, XF), PUT(&e, "gelu.y", gy, XR, XF);
    PUT(&e, "gelu.dx", gdx, XR, XF);

    /* a linear layer with bias: matmul then bias, and their backwards */
    float *lw = tk_alloc(XD * XF), *lb = tk_alloc(XF), *ly = tk_alloc(XR * XF), *ldy = tk_alloc(XR * XF);
    float *ldx = tk_alloc(XR * XD), *ldw = tk_alloc(XD * XF), *ldb = tk_alloc(XF);
    tk_fill(lw, XD * XF, 46, 0.3f), tk_fill(lb, XF, 47, 1.0f), tk_fill(ldy, XR * XF, 48, 1.0f);
    plc_k_matmul(ly, x, lw, XR, XF, XD, 0, 0, 1.0f, 0.0f);
    plc_k_bias_add(ly, ly, lb, XR, XF);
    plc_k_matmul(ldx, ldy, lw, XR, XD, XF, 0, 1, 1.0f, 1.0f);
    plc_k_matmul(ldw, x, ldy, XD, XF, XR, 1, 0, 1.0f, 1.0f);
    plc_k_bias_backward(ldb, ldy, XR, XF);
    PUT(&e, "lin.x", x, XR, XD), PUT(&e, "lin.w", lw, XD, XF), PUT(&e, "lin.bias", lb, XF);
    PUT(&e, "lin.dy", ldy, XR, XF), PUT(&e, "lin.y", ly, XR, XF), PUT(&e, "lin.dx", ldx, XR, XD);
    PUT(&e, "lin.dw", ldw, XD, XF), PUT(&e, "lin.dbias", ldb, XF);

    /* positions of a context-parallel rank (cp = 2 of T = 16: chunks 1, 2) */
    float *px = tk_alloc(XB * XT * XD), *pt = tk_alloc(XP * XD), *pdy = tk_alloc(XB * XT * XD);
    float *py = tk_alloc(XB * XT * XD), *pdt = tk_alloc(XP * XD);
    int32_t pos[XT] = {4, 5, 6, 7, 8, 9, 10, 11};
    tk_fill(px, XB * XT * XD, 49, 1.0f), tk_fill(pt, XP * XD, 50, 1.0f), tk_fill(pdy, XB * XT * XD, 51, 1.0f);
    plc_k_pos_embedding_forward(py, px, pt, pos, XB, XT, XD);
    plc_k_pos_embedding_backward(pdt, pdy, pos, XB, XT, XD);
    PUT(&e, "pos.x", px, XB, XT, XD), PUT(&e, "pos.table", pt, XP, XD), PUT(&e, "pos.dy", pdy, XB, XT, XD);
    PUT(&e, "pos.y", py, XB, XT, XD), PUT(&e, "pos.dtable", pdt, XP, XD);
    put(&e, "pos.positions", 1, (int64_t[]){XT}, pos, PLC_ST_I32);

    if (!e.failed && plc_st_writer_save(&e.w, export_path(), e.err, sizeof e.err) != 0) e.failed = 1;
    if (e.failed) fprintf(stderr, "\n  export: %s\n", e.err);
    CU_ASSERT(!e.failed);
    plc_st_writer_free(&e.w);
    float *bufs[] = {x, w, b, dy, y, mean, rstd, dx, dw, db, gx, gdy, gy, gdx, lw, lb, ly, ldy, ldx, ldw, ldb,
                     px, pt, pdy, py, pdt};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) free(bufs[i]);
}

void register_test_kernels_gpt(void)
{
    CU_pSuite s = CU_add_suite("kernels_gpt", NULL, NULL);
    CU_add_test(s, "gelu known values and exact derivative", test_gelu_values);
    CU_add_test(s, "gelu kernels (finite differences)", test_gelu_kernels);
    CU_add_test(s, "layernorm of known rows", test_layernorm_values);
    CU_add_test(s, "layernorm backward (finite differences)", test_layernorm_backward);
    CU_add_test(s, "bias add and gradient (finite differences)", test_bias);
    CU_add_test(s, "learned positions, CP chunks, backward (finite differences)", test_pos_embedding);
    CU_add_test(s, "layernorm: same bits for 1-4 threads", test_threads_layernorm);
    CU_add_test(s, "gelu and bias: same bits for 1-4 threads", test_threads_gelu_bias);
    CU_add_test(s, "positions: same bits for 1-4 threads", test_threads_positions);
    if (export_path()) {
        CU_pSuite x = CU_add_suite("kernels_gpt_export", NULL, NULL);
        CU_add_test(x, "export fixed cases for tests/oracle/kernels_gpt_oracle.py", test_export);
    }
}
