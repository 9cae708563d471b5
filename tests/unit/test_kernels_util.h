/* tests/unit/test_kernels_util.h: helpers shared by the kernel tests:
 * a deterministic random fill and a finite-difference gradient check. */
#ifndef PLC_TEST_KERNELS_UTIL_H
#define PLC_TEST_KERNELS_UTIL_H

#include <CUnit/CUnit.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* splitmix64: reproducible test data without touching rand() */
static inline uint64_t tk_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* uniform in [-scale, scale) */
static inline void tk_fill(float *x, int64_t n, uint64_t seed, float scale)
{
    uint64_t s = seed;
    for (int64_t i = 0; i < n; i++)
        x[i] = scale * (float)((double)(tk_next(&s) >> 11) / 9007199254740992.0 * 2.0 - 1.0);
}

static inline float *tk_alloc(int64_t n)
{
    float *p = calloc((size_t)(n > 0 ? n : 1), sizeof *p);
    CU_ASSERT_FATAL(p != NULL);
    return p;
}

static inline double tk_max_abs(const float *x, int64_t n)
{
    double m = 0;
    for (int64_t i = 0; i < n; i++) m = fmax(m, fabs((double)x[i]));
    return m;
}

/* largest |a - b| */
static inline double tk_max_diff(const float *a, const float *b, int64_t n)
{
    double m = 0;
    for (int64_t i = 0; i < n; i++) m = fmax(m, fabs((double)a[i] - (double)b[i]));
    return m;
}

/* The scalar loss L = sum_i w_i out_i (in double) after running forward. */
typedef void (*tk_forward_fn)(void *ctx);
typedef struct tk_loss {
    tk_forward_fn forward;
    void *ctx;
    const float *out, *w; /* L = sum w * out */
    int64_t n_out;
} tk_loss;

static inline double tk_eval(const tk_loss *L)
{
    L->forward(L->ctx);
    double s = 0;
    for (int64_t i = 0; i < L->n_out; i++) s += (double)L->w[i] * (double)L->out[i];
    return s;
}

/* Central differences of L with respect to every element of x, against the
 * analytic gradient: |fd - an| <= tol * (max|an| + |an|) must hold for every
 * element (fp32 forward, so the error is measured against the gradient's
 * scale). Returns the worst ratio error / (max|an| + |an|). */
static inline double tk_fd_check(const char *what, float *x, int64_t n, const float *analytic,
                                 const tk_loss *L, float h, double tol)
{
    double gmax = tk_max_abs(analytic, n), worst = 0;
    for (int64_t j = 0; j < n; j++) {
        float saved = x[j];
        float xp = saved + h, xm = saved - h;
        x[j] = xp;
        double lp = tk_eval(L);
        x[j] = xm;
        double lm = tk_eval(L);
        x[j] = saved;
        double fd = (lp - lm) / ((double)xp - (double)xm);
        double err = fabs(fd - analytic[j]) / (gmax + fabs(analytic[j]) + 1e-30);
        if (err > worst) worst = err;
        if (err > tol) {
            fprintf(stderr, "\n  %s[%lld]: finite difference %.7g, backward %.7g\n", what,
                    (long long)j, fd, (double)analytic[j]);
        }
    }
    CU_ASSERT(gmax > 0); /* a zero gradient would make the check vacuous */
    CU_ASSERT(worst <= tol);
    tk_eval(L); /* leave the outputs of the unperturbed input behind */
    return worst;
}

#endif
