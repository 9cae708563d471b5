/* bench/kernels.c: the sgemm peak on this machine (the yardstick for
 * plrun's model FLOP/s) and the throughput of the other CPU kernels.
 * Usage: bench_kernels [--peak]   (threads: OMP_NUM_THREADS / OPENBLAS_NUM_THREADS;
 * --peak: the sgemm peak alone) */
#include "kernels/kernels.h"
#include "kernels/cpu/blas.h"

#include <cblas.h>
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static float *filled(int64_t n, float scale)
{
    float *p = malloc((size_t)n * sizeof *p);
    if (!p) {
        fprintf(stderr, "bench_kernels: out of memory\n");
        exit(1);
    }
    uint32_t s = 12345;
    for (int64_t i = 0; i < n; i++) {
        s = s * 1664525u + 1013904223u;
        p[i] = scale * ((float)(s >> 8) / 16777216.0f * 2.0f - 1.0f);
    }
    return p;
}

/* Runs fn until at least min_s seconds have passed (after one warm-up call);
 * returns seconds per call. */
typedef void (*bench_fn)(void *);
static double time_per_call(bench_fn fn, void *arg, double min_s)
{
    fn(arg);
    int calls = 0;
    double t0 = now(), t;
    do {
        fn(arg);
        calls++;
        t = now() - t0;
    } while (t < min_s);
    return t / calls;
}

/* ---- sgemm ---------------------------------------------------------------------- */
typedef struct { float *A, *B, *C; int64_t n; } gemm_arg;
static void run_blas(void *p)
{
    gemm_arg *g = p;
    int n = (int)g->n;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, g->A, n, g->B, n, 0.0f, g->C, n);
}
static void run_gemm(void *p)
{
    gemm_arg *g = p;
    plc_k_matmul(g->C, g->A, g->B, g->n, g->n, g->n, 0, 0, 1.0f, 0.0f);
}

/* ---- attention ---------------------------------------------------------------------- */
typedef struct { float *q, *k, *v, *out, *saved, *dout, *dq, *dk, *dv; int64_t B, T, H, Hkv, hd; int flash; } attn_arg;
static void run_attn(void *p)
{
    attn_arg *a = p;
    if (a->flash) {
        plc_k_attention_forward(a->out, NULL, a->saved, a->q, a->k, a->v, NULL, NULL, a->B, a->T, a->T, a->H, a->Hkv, a->hd);
        plc_k_attention_backward(a->dq, a->dk, a->dv, a->dout, a->q, a->k, a->v, a->out, NULL, a->saved, NULL, NULL,
                                 a->B, a->T, a->T, a->H, a->Hkv, a->hd);
    } else {
        plc_k_attention_forward(a->out, a->saved, NULL, a->q, a->k, a->v, NULL, NULL, a->B, a->T, a->T, a->H, a->Hkv, a->hd);
        plc_k_attention_backward(a->dq, a->dk, a->dv, a->dout, a->q, a->k, a->v, a->out, a->saved, NULL, NULL, NULL,
                                 a->B, a->T, a->T, a->H, a->Hkv, a->hd);
    }
}

/* ---- row kernels ----------------------------------------------------------------------- */
typedef struct { float *x, *w, *y, *rstd, *dy, *dx, *dw; int32_t *tgt; int64_t rows, dim; } row_arg;
static void run_rmsnorm(void *p)
{
    row_arg *r = p;
    plc_k_rmsnorm_forward(r->y, r->rstd, r->x, r->w, r->rows, r->dim, 1e-5f);
    plc_k_rmsnorm_backward(r->dx, r->dw, r->dy, r->x, r->w, r->rstd, r->rows, r->dim);
}
typedef struct { float *x, *w, *b, *y, *mean, *rstd, *dy, *dx, *dw, *db; int64_t rows, dim; } ln_arg;
static void run_layernorm(void *p)
{
    ln_arg *r = p;
    plc_k_layernorm_forward(r->y, r->mean, r->rstd, r->x, r->w, r->b, r->rows, r->dim, 1e-5f);
    plc_k_layernorm_backward(r->dx, r->dw, r->db, r->dy, r->x, r->w, r->mean, r->rstd, r->rows, r->dim);
}
/* a GPT MLP's element work: bias, GELU, their backwards */
static void run_bias_gelu(void *p)
{
    ln_arg *r = p;
    plc_k_bias_add(r->y, r->x, r->b, r->rows, r->dim);
    plc_k_gelu_forward(r->dx, r->y, r->rows * r->dim);
    plc_k_gelu_backward(r->dx, r->dy, r->y, r->rows * r->dim);
    plc_k_bias_backward(r->db, r->dx, r->rows, r->dim);
}
static void run_xent(void *p)
{
    row_arg *r = p;
    plc_k_cross_entropy(r->rstd, r->y, r->x, r->tgt, r->rows, r->dim, 1.0f);
}
typedef struct { float *p, *g, *m, *v; int64_t n; } adam_arg;
static void run_adamw(void *p)
{
    adam_arg *a = p;
    plc_k_adamw(a->p, a->g, a->m, a->v, a->n, 1e-4, 0.9, 0.95, 1e-8, 0.1, 10, 1.0f);
}

/* The sgemm peak: the faster of OpenBLAS's own threaded sgemm and
 * plc_k_matmul (plrun's matmul: plc's AVX-512 kernel where the CPU has it,
 * kernels/cpu/gemm.c), over square sizes, at OpenMP's thread count. */
static double sgemm_peak(double min_s)
{
    double peak = 0;
    int64_t sizes[] = {256, 512, 1024, 2048};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        int64_t n = sizes[i];
        gemm_arg g = {filled(n * n, 1), filled(n * n, 1), filled(n * n, 1), n};
        openblas_set_num_threads(omp_get_max_threads());
        double gf = 2.0 * n * n * n / time_per_call(run_blas, &g, min_s) / 1e9;
        double gp = 2.0 * n * n * n / time_per_call(run_gemm, &g, min_s) / 1e9;
        if (gf > peak) peak = gf;
        if (gp > peak) peak = gp;
        printf("sgemm %4lld^3: %8.1f GFLOP/s (OpenBLAS threaded), plc_k_matmul %8.1f GFLOP/s\n",
               (long long)n, gf, gp);
        free(g.A), free(g.B), free(g.C);
    }
    printf("sgemm peak: %.1f GFLOP/s\n", peak);
    return peak;
}

int main(int argc, char **argv)
{
    printf("plrun's sgemm: %s\n", plc_gemm_name());
    printf("threads: %d (OpenMP)\n", omp_get_max_threads());
    if (argc > 1 && strcmp(argv[1], "--peak") == 0) { /* bench/plrun_vs_torch.sh: the yardstick only */
        sgemm_peak(0.3);
        return 0;
    }
    if (argc > 1) {
        fprintf(stderr, "usage: bench_kernels [--peak]\n");
        return 1;
    }
    double peak = sgemm_peak(0.5);

    /* causal attention, forward + backward, in model FLOPs: 12 hd per
     * visible (query, key) pair (QK^T and PV forward, twice that backward) */
    /* B, T, H, Hkv, hd: small tiles, long heads, and the attention of
     * bench/plrun_vs_torch.sh's two models */
    static const int64_t shapes[][5] = {{32, 64, 4, 2, 16}, {2, 256, 8, 8, 64}, {16, 128, 8, 4, 32}, {8, 256, 8, 4, 32}};
    for (size_t c = 0; c < sizeof shapes / sizeof shapes[0]; c++)
        for (int flash = 1; flash >= 0; flash--) {
            attn_arg a = {0};
            a.B = shapes[c][0], a.T = shapes[c][1], a.H = shapes[c][2], a.Hkv = shapes[c][3], a.hd = shapes[c][4];
            a.flash = flash;
            int64_t n = a.B * a.T * a.H * a.hd, nkv = a.B * a.T * a.Hkv * a.hd;
            a.q = filled(n, 1), a.k = filled(nkv, 1), a.v = filled(nkv, 1), a.dout = filled(n, 1);
            a.out = filled(n, 0), a.dq = filled(n, 0), a.dk = filled(nkv, 0), a.dv = filled(nkv, 0);
            a.saved = filled(a.B * a.H * a.T * a.T, 0);
            double s = time_per_call(run_attn, &a, 0.5);
            double flops = 12.0 * a.hd * a.B * a.H * (a.T * (a.T + 1) / 2.0);
            printf("%s attention fwd+bwd B=%lld T=%lld H=%lld Hkv=%lld hd=%lld: %.2f ms, %.1f GFLOP/s (%.0f%% of sgemm peak)\n",
                   flash ? "flash       " : "materialised", (long long)a.B, (long long)a.T, (long long)a.H,
                   (long long)a.Hkv, (long long)a.hd, s * 1e3, flops / s / 1e9, 100 * flops / s / 1e9 / peak);
            free(a.q), free(a.k), free(a.v), free(a.dout), free(a.out), free(a.dq), free(a.dk), free(a.dv), free(a.saved);
        }

    row_arg r = {0};
    r.rows = 4096, r.dim = 1024;
    int64_t n = r.rows * r.dim;
    r.x = filled(n, 1), r.w = filled(r.dim, 1), r.y = filled(n, 0), r.rstd = filled(r.rows, 0);
    r.dy = filled(n, 1), r.dx = filled(n, 0), r.dw = filled(r.dim, 0);
    double s = time_per_call(run_rmsnorm, &r, 0.3);
    printf("rmsnorm fwd+bwd %lldx%lld: %.2f ms, %.1f GB/s\n", (long long)r.rows, (long long)r.dim, s * 1e3,
           7.0 * n * sizeof(float) / s / 1e9); /* x twice, dy twice, w, y, dx r+w */
    free(r.x), free(r.y), free(r.dy), free(r.dx), free(r.w), free(r.rstd), free(r.dw);

    ln_arg l = {0};
    l.rows = 4096, l.dim = 1024;
    l.x = filled(n, 1), l.w = filled(l.dim, 1), l.b = filled(l.dim, 1), l.y = filled(n, 0);
    l.mean = filled(l.rows, 0), l.rstd = filled(l.rows, 0), l.dy = filled(n, 1), l.dx = filled(n, 0);
    l.dw = filled(l.dim, 0), l.db = filled(l.dim, 0);
    s = time_per_call(run_layernorm, &l, 0.3);
    printf("layernorm fwd+bwd %lldx%lld: %.2f ms, %.1f GB/s\n", (long long)l.rows, (long long)l.dim, s * 1e3,
           8.0 * n * sizeof(float) / s / 1e9); /* x three times, dy twice, y, dx r+w */
    s = time_per_call(run_bias_gelu, &l, 0.3);
    printf("bias+gelu fwd+bwd %lldx%lld: %.2f ms, %.1f GB/s\n", (long long)l.rows, (long long)l.dim, s * 1e3,
           9.0 * n * sizeof(float) / s / 1e9); /* x, y w+r+r, dx w+r+w+r, dy */
    free(l.x), free(l.w), free(l.b), free(l.y), free(l.mean), free(l.rstd), free(l.dy), free(l.dx), free(l.dw);
    free(l.db);

    r.rows = 512, r.dim = 32000;
    n = r.rows * r.dim;
    r.x = filled(n, 4), r.y = filled(n, 0), r.rstd = filled(r.rows, 0);
    r.tgt = malloc((size_t)r.rows * sizeof *r.tgt);
    for (int64_t i = 0; i < r.rows; i++) r.tgt[i] = (int32_t)(i * 7919 % r.dim);
    s = time_per_call(run_xent, &r, 0.3);
    printf("cross-entropy %lld rows x %lld vocab: %.2f ms, %.1f Mlogit/s\n", (long long)r.rows, (long long)r.dim,
           s * 1e3, n / s / 1e6);
    free(r.x), free(r.y), free(r.rstd), free(r.tgt);

    adam_arg a = {filled(1 << 22, 1), filled(1 << 22, 1), filled(1 << 22, 0), filled(1 << 22, 0), 1 << 22};
    s = time_per_call(run_adamw, &a, 0.3);
    printf("adamw %lld params: %.2f ms, %.1f Mparam/s\n", (long long)a.n, s * 1e3, a.n / s / 1e6);
    free(a.p), free(a.g), free(a.m), free(a.v);
    return 0;
}
