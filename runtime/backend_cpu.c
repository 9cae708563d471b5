/* backend_cpu.c: the reference backend. fp32 kernels of kernels/kernels.h on
 * host memory; collectives and send/recv through MPI (runtime/comm.c).
 * bf16 plans run with the same kernels: bf16 operands are widened to fp32
 * and outputs rounded back per operation, exactly as the CUDA kernels store
 * them (backend_cpu_bf16.h). */
#include <cblas.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/kernels.h"
#include "runtime/backend.h"
#include "runtime/backend_cpu_bf16.h"

typedef struct cpu_state {
    float *row_loss; /* per-row losses of XENT_LOSS, summed in double */
    int64_t row_loss_cap;
    plc_bf16_stage stage; /* fp32 views of bf16 operands, sized for the plan */
} cpu_state;

static cpu_state *st(plc_backend *be) { return (cpu_state *)be->impl; }

static void cpu_destroy(plc_backend *be)
{
    if (!be) return;
    if (be->impl) {
        free(st(be)->row_loss);
        plc_bf16_stage_free(&st(be)->stage);
    }
    free(be->impl);
    free(be);
}

/* ---- memory ---------------------------------------------------------------- */
static void *cpu_arena_alloc(plc_backend *be, uint64_t bytes)
{
    size_t n = (size_t)((bytes + PLC_PLAN_ALIGN - 1) / PLC_PLAN_ALIGN * PLC_PLAN_ALIGN);
    if (n == 0) n = PLC_PLAN_ALIGN;
    void *p = aligned_alloc(PLC_PLAN_ALIGN, n);
    if (!p) {
        plc_backend_fail(be, "cannot allocate the arena of %llu bytes", (unsigned long long)bytes);
        return NULL;
    }
    memset(p, 0, n); /* touch every page: the measured peak includes the arena */
    return p;
}
static void cpu_arena_free(plc_backend *be, void *p) { (void)be; free(p); }
static void *cpu_aux_alloc(plc_backend *be, size_t bytes)
{
    void *p = calloc(1, bytes ? bytes : 1);
    if (!p) plc_backend_fail(be, "out of memory (%zu bytes)", bytes);
    return p;
}
static void cpu_aux_free(plc_backend *be, void *p) { (void)be; free(p); }
static int cpu_copy_bytes(plc_backend *be, void *dst, const void *src, size_t bytes)
{
    (void)be;
    if (bytes) memmove(dst, src, bytes);
    return 0;
}
static int cpu_sync(plc_backend *be) { (void)be; return 0; }

/* ---- compute ------------------------------------------------------------------
 * Every op widens its bf16 operands to fp32 views, runs the fp32 kernel and
 * rounds its outputs back (backend_cpu_bf16.h); fp32 operands pass through. */
#define IN(p, dt, n) plc_bf16_in(&st(be)->stage, (p), (dt), (n))
#define OUT(p, dt, n) plc_bf16_out(&st(be)->stage, (p), (dt), (n))
/* rounds the outputs back; -1 with the message when a view had failed */
static int done(plc_backend *be)
{
    return plc_bf16_finish(&st(be)->stage, be->error, sizeof be->error);
}
/* after a kernel that could not allocate its scratch: releases the views
 * and fails with the message (the executor adds the instruction) */
static int no_scratch(plc_backend *be, const char *kernel)
{
    done(be);
    return plc_backend_fail(be, "out of memory for the scratch of %s", kernel);
}
/* before a kernel: give up (releasing the views) when a view failed */
#define VIEWS_OK(be) \
    do { if (plc_bf16_failed(&st(be)->stage)) return done(be); } while (0)

static int cpu_zero(plc_backend *be, void *dst, size_t bytes) { (void)be; memset(dst, 0, bytes); return 0; }

static int cpu_embed_fwd(plc_backend *be, void *out, const int32_t *tokens, const void *table,
                         plc_dtype dt, int64_t rows, int64_t dim, int64_t vs, int64_t vl)
{
    float *o = OUT(out, dt, rows * dim);
    const float *t = IN(table, dt, vl * dim);
    VIEWS_OK(be);
    plc_k_embedding_forward(o, tokens, t, rows, dim, vs, vl);
    return done(be);
}
static int cpu_embed_bwd(plc_backend *be, float *dtable, const void *dout, plc_dtype dt,
                         const int32_t *tokens, int64_t rows, int64_t dim, int64_t vs, int64_t vl)
{
    const float *d = IN(dout, dt, rows * dim);
    VIEWS_OK(be);
    plc_k_embedding_backward(dtable, d, tokens, rows, dim, vs, vl);
    return done(be);
}
static int cpu_rmsnorm_fwd(plc_backend *be, void *out, float *rstd, const void *in,
                           const void *w, plc_dtype dt, int64_t rows, int64_t dim, float eps)
{
    const float *x = IN(in, dt, rows * dim), *wf = IN(w, dt, dim);
    float *o = OUT(out, dt, rows * dim); /* may alias in: one shared view */
    VIEWS_OK(be);
    plc_k_rmsnorm_forward(o, rstd, x, wf, rows, dim, eps);
    return done(be);
}
static int cpu_rmsnorm_bwd(plc_backend *be, void *din, float *dw, const void *dout,
                           const void *in, const void *w, const float *rstd, plc_dtype dt,
                           int64_t rows, int64_t dim)
{
    float *di = OUT(din, dt, rows * dim);
    const float *d = IN(dout, dt, rows * dim), *x = IN(in, dt, rows * dim), *wf = IN(w, dt, dim);
    VIEWS_OK(be);
    if (be->fresh & 1) plc_k_rmsnorm_backward_set(di, dw, d, x, wf, rstd, rows, dim);
    else plc_k_rmsnorm_backward(di, dw, d, x, wf, rstd, rows, dim);
    return done(be);
}
static int cpu_layernorm_fwd(plc_backend *be, void *out, float *mean, float *rstd, const void *in,
                             const void *w, const void *bias, plc_dtype dt, int64_t rows, int64_t dim,
                             float eps)
{
    const float *x = IN(in, dt, rows * dim), *wf = IN(w, dt, dim), *bf = IN(bias, dt, dim);
    float *o = OUT(out, dt, rows * dim);
    VIEWS_OK(be);
    plc_k_layernorm_forward(o, mean, rstd, x, wf, bf, rows, dim, eps);
    return done(be);
}
static int cpu_layernorm_bwd(plc_backend *be, void *din, float *dw, float *db, const void *dout,
                             const void *in, const void *w, const float *mean, const float *rstd,
                             plc_dtype dt, int64_t rows, int64_t dim)
{
    float *di = din ? OUT(din, dt, rows * dim) : NULL;
    const float *d = IN(dout, dt, rows * dim), *x = IN(in, dt, rows * dim), *wf = IN(w, dt, dim);
    VIEWS_OK(be);
    if (plc_k_layernorm_backward(di, dw, db, d, x, wf, mean, rstd, rows, dim))
        return no_scratch(be, "the LayerNorm backward");
    return done(be);
}
/* the element-wise ops of one output y and one or two inputs, n elements
 * each: f1(y, a) or f2(y, a, b) (y may alias an input: one shared view) */
typedef void (*ew1_fn)(float *y, const float *a, int64_t n);
typedef void (*ew2_fn)(float *y, const float *a, const float *b, int64_t n);
static int elementwise(plc_backend *be, ew1_fn f1, ew2_fn f2, void *y, const void *a, const void *b, plc_dtype dt,
                       int64_t n)
{
    const float *af = IN(a, dt, n), *bf = IN(b, dt, n); /* b may be NULL: no view */
    float *yf = OUT(y, dt, n);
    VIEWS_OK(be);
    if (f2) f2(yf, af, bf, n);
    else f1(yf, af, n);
    return done(be);
}
static int cpu_gelu_fwd(plc_backend *be, void *out, const void *in, plc_dtype dt, int64_t n)
{
    return elementwise(be, plc_k_gelu_forward, NULL, out, in, NULL, dt, n);
}
static int cpu_gelu_bwd(plc_backend *be, void *din, const void *dout, const void *in, plc_dtype dt,
                        int64_t n)
{
    return elementwise(be, NULL, plc_k_gelu_backward, din, dout, in, dt, n);
}
static int cpu_swiglu_fwd(plc_backend *be, void *out, const void *g, const void *u, plc_dtype dt,
                          int64_t n)
{
    return elementwise(be, NULL, plc_k_swiglu_forward, out, g, u, dt, n);
}
static int cpu_add(plc_backend *be, void *out, const void *a, const void *b, plc_dtype dt, int64_t n)
{
    return elementwise(be, NULL, plc_k_add, out, a, b, dt, n);
}
static int cpu_accumulate(plc_backend *be, void *y, const void *x, plc_dtype dt, int64_t n)
{
    return elementwise(be, plc_k_accumulate, NULL, y, x, NULL, dt, n);
}
static int cpu_bias_add(plc_backend *be, void *x, const void *bias, plc_dtype dt, int64_t rows,
                        int64_t cols)
{
    float *xf = OUT(x, dt, rows * cols);
    const float *bf = IN(bias, dt, cols);
    VIEWS_OK(be);
    plc_k_bias_add(xf, xf, bf, rows, cols);
    return done(be);
}
static int cpu_bias_bwd(plc_backend *be, float *dbias, const void *dout, plc_dtype dt, int64_t rows,
                        int64_t cols)
{
    const float *d = IN(dout, dt, rows * cols);
    VIEWS_OK(be);
    if (plc_k_bias_backward(dbias, d, rows, cols)) return no_scratch(be, "the bias backward");
    return done(be);
}
static int cpu_pos_fwd(plc_backend *be, void *x, const void *table, plc_dtype dt, const int32_t *pos,
                       int64_t rows, int64_t dim, int64_t table_rows)
{
    float *xf = OUT(x, dt, rows * dim);
    const float *t = IN(table, dt, table_rows * dim);
    VIEWS_OK(be);
    plc_k_pos_embedding_forward(xf, xf, t, pos, 1, rows, dim);
    return done(be);
}
static int cpu_pos_bwd(plc_backend *be, float *dtable, const void *dout, plc_dtype dt, const int32_t *pos,
                       int64_t rows, int64_t dim)
{
    const float *d = IN(dout, dt, rows * dim);
    VIEWS_OK(be);
    if (plc_k_pos_embedding_backward(dtable, d, pos, 1, rows, dim))
        return no_scratch(be, "the position embedding backward");
    return done(be);
}
static int cpu_matmul(plc_backend *be, void *C, plc_dtype c_dt, const void *A, const void *B,
                      plc_dtype ab_dt, int64_t M, int64_t N, int64_t K, int ta, int tb, float beta)
{
    float *c = OUT(C, c_dt, M * N);
    const float *a = IN(A, ab_dt, M * K), *b = IN(B, ab_dt, K * N);
    VIEWS_OK(be);
    plc_k_matmul(c, a, b, M, N, K, ta, tb, 1.0f, beta);
    return done(be);
}
static int cpu_rope_fwd(plc_backend *be, void *out, const void *in, plc_dtype dt,
                        const int32_t *pos, int64_t B, int64_t T, int64_t H, int64_t hd,
                        float theta)
{
    const float *x = IN(in, dt, B * T * H * hd);
    float *o = OUT(out, dt, B * T * H * hd);
    VIEWS_OK(be);
    if (plc_k_rope_forward(o, x, pos, B, T, H, hd, theta)) return no_scratch(be, "RoPE (its table)");
    return done(be);
}
static int cpu_rope_bwd(plc_backend *be, void *din, const void *dout, plc_dtype dt,
                        const int32_t *pos, int64_t B, int64_t T, int64_t H, int64_t hd,
                        float theta)
{
    float *di = OUT(din, dt, B * T * H * hd);
    const float *d = IN(dout, dt, B * T * H * hd);
    VIEWS_OK(be);
    if ((be->fresh & 1 ? plc_k_rope_backward_set : plc_k_rope_backward)(di, d, pos, B, T, H, hd, theta))
        return no_scratch(be, "RoPE (its table)");
    return done(be);
}
static int cpu_attn_fwd(plc_backend *be, int flash, void *out, float *stats, const void *q,
                        const void *k, const void *v, plc_dtype dt, const int32_t *qp,
                        const int32_t *kp, int64_t B, int64_t Tq, int64_t Tk, int64_t H,
                        int64_t Hkv, int64_t hd)
{
    const int64_t nq = B * Tq * H * hd, nk = B * Tk * Hkv * hd;
    float *o = OUT(out, dt, nq);
    const float *qf = IN(q, dt, nq), *kf = IN(k, dt, nk), *vf = IN(v, dt, nk);
    VIEWS_OK(be);
    /* stats: the log-sum-exp (flash) or the probabilities */
    if (plc_k_attention_forward(o, flash ? NULL : stats, flash ? stats : NULL, qf, kf, vf, qp, kp, B, Tq, Tk, H,
                                Hkv, hd))
        return no_scratch(be, "the attention forward (its tiles)");
    return done(be);
}
static int cpu_attn_bwd(plc_backend *be, int flash, void *dq, void *dk, void *dv,
                        const void *dout, const void *q, const void *k, const void *v,
                        const void *out, const float *stats, plc_dtype dt, const int32_t *qp,
                        const int32_t *kp, int64_t B, int64_t Tq, int64_t Tk, int64_t H,
                        int64_t Hkv, int64_t hd)
{
    const int64_t nq = B * Tq * H * hd, nk = B * Tk * Hkv * hd;
    float *dqf = OUT(dq, dt, nq), *dkf = OUT(dk, dt, nk), *dvf = OUT(dv, dt, nk);
    const float *d = IN(dout, dt, nq), *qf = IN(q, dt, nq), *kf = IN(k, dt, nk),
                *vf = IN(v, dt, nk), *o = IN(out, dt, nq);
    VIEWS_OK(be);
    /* stats: the forward's log-sum-exp (flash) or probabilities */
    if (plc_k_attention_backward(dqf, dkf, dvf, d, qf, kf, vf, o, flash ? NULL : stats, flash ? stats : NULL, qp,
                                 kp, B, Tq, Tk, H, Hkv, hd))
        return no_scratch(be, "the attention backward (its tiles)");
    return done(be);
}
static int cpu_swiglu_bwd(plc_backend *be, void *dg, void *du, const void *dout, const void *g,
                          const void *u, plc_dtype dt, int64_t n)
{
    float *dgf = OUT(dg, dt, n), *duf = OUT(du, dt, n);
    const float *d = IN(dout, dt, n), *gf = IN(g, dt, n), *uf = IN(u, dt, n);
    VIEWS_OK(be);
    /* fresh comes for both outputs or none (ZERO folding) */
    if (be->fresh) plc_k_swiglu_backward_set(dgf, duf, d, gf, uf, n);
    else plc_k_swiglu_backward(dgf, duf, d, gf, uf, n);
    return done(be);
}
static int cpu_scale(plc_backend *be, void *x, float s, plc_dtype dt, int64_t n)
{
    float *xf = OUT(x, dt, n);
    VIEWS_OK(be);
    plc_k_scale(xf, s, n);
    return done(be);
}
static int cpu_xent_max(plc_backend *be, float *row_max, const void *logits, plc_dtype dt,
                        int64_t rows, int64_t vl)
{
    const float *l = IN(logits, dt, rows * vl);
    VIEWS_OK(be);
    plc_k_xent_local_max(row_max, l, rows, vl);
    return done(be);
}
static int cpu_xent_sumexp(plc_backend *be, float *row_sum, float *tl, const void *logits,
                           plc_dtype dt, const int32_t *targets, const float *row_max,
                           int64_t rows, int64_t vl, int64_t vs)
{
    const float *l = IN(logits, dt, rows * vl);
    VIEWS_OK(be);
    plc_k_xent_local_sumexp(row_sum, tl, l, row_max, targets, rows, vl, vs);
    return done(be);
}
static int cpu_xent_loss(plc_backend *be, void *dlogits, double *loss_sum, const void *logits,
                         plc_dtype dt, const int32_t *targets, const float *row_max,
                         const float *row_sum, const float *tl, int64_t rows, int64_t vl,
                         int64_t vs, float grad_scale)
{
    cpu_state *s = st(be);
    if (rows > s->row_loss_cap) {
        float *p = realloc(s->row_loss, (size_t)rows * sizeof *p);
        if (!p) return plc_backend_fail(be, "out of memory");
        s->row_loss = p;
        s->row_loss_cap = rows;
    }
    const float *l = IN(logits, dt, rows * vl);
    float *dl = OUT(dlogits, dt, rows * vl); /* may alias logits */
    VIEWS_OK(be);
    plc_k_xent_loss_grad(s->row_loss, dl, l, row_max, row_sum, tl, targets, rows, vl, vs,
                         grad_scale);
    double sum = 0; /* rows in order: deterministic */
    for (int64_t r = 0; r < rows; r++) sum += s->row_loss[r];
    *loss_sum += sum;
    return done(be);
}
static int cpu_sumsq(plc_backend *be, double *acc, const float *x, int64_t n)
{
    (void)be;
    *acc += plc_k_sum_squares(x, n);
    return 0;
}
static int cpu_clip_scale(plc_backend *be, float *scale, const double *sumsq, double max_norm)
{
    (void)be;
    double norm = sqrt(*sumsq);
    /* docs/checkpoint.md's convention, shared with the oracle: multiply by
     * max_norm / norm when norm > max_norm > 0 (no epsilon) */
    *scale = max_norm > 0 && norm > max_norm ? (float)(max_norm / norm) : 1.0f;
    return 0;
}
/* a bf16 parameter is updated through its fp32 master copy and rounded
 * from it again, as on the GPU */
static int cpu_adamw(plc_backend *be, void *param, plc_dtype pt, const void *grad, plc_dtype gt,
                     float *m, float *v, const float *scale, float *master, int64_t n, double lr,
                     double b1, double b2, double eps, double wd, int64_t t)
{
    float *target = master ? master : pt == PLC_F32 ? (float *)param : NULL;
    if (!target)
        return plc_backend_fail(be, "a %s parameter needs an fp32 master copy", plc_dtype_name(pt));
    if (pt != PLC_F32 && pt != PLC_BF16)
        return plc_backend_fail(be, "cannot update %s parameters", plc_dtype_name(pt));
    const float *g = IN(grad, gt, n);
    VIEWS_OK(be);
    plc_k_adamw(target, g, m, v, n, lr, b1, b2, eps, wd, t, *scale);
    if (master && pt == PLC_BF16) plc_k_cast_f32_to_bf16((uint16_t *)param, master, n);
    else if (master) memmove(param, master, (size_t)n * sizeof(float));
    return done(be);
}
static int cpu_cast(plc_backend *be, void *dst, plc_dtype dt, const void *src, plc_dtype stt,
                    int64_t n)
{
    if (dt == PLC_BF16 && stt == PLC_F32)
        plc_k_cast_f32_to_bf16((uint16_t *)dst, (const float *)src, n);
    else if (dt == PLC_F32 && stt == PLC_BF16)
        plc_k_cast_bf16_to_f32((float *)dst, (const uint16_t *)src, n);
    else if (dt == stt)
        memmove(dst, src, (size_t)n * plc_dtype_size(dt));
    else
        return plc_backend_fail(be, "no cast from %s to %s", plc_dtype_name(stt), plc_dtype_name(dt));
    return 0;
}

/* ---- mixture of experts (fp32 on host memory: the kernels as they are) ------- */
static int cpu_moe_route(plc_backend *be, float *scores, int32_t *expert, int32_t *pos, float *weight,
                         int32_t *counts, const float *logits, int64_t rows, int64_t E, int64_t k, int router,
                         int64_t capacity, float scale, int64_t *dropped)
{
    *dropped += plc_k_moe_route(scores, expert, pos, weight, counts, logits, rows, E, k, router, capacity, scale);
    return done(be);
}
static int cpu_moe_route_bwd(plc_backend *be, float *dlogits, const float *dweight, const float *scores,
                             const int32_t *expert, const float *choices, int64_t rows, int64_t E, int64_t k,
                             int router, int64_t seq_rows, int64_t seq_full, float scale, float aux)
{
    plc_k_moe_route_backward(dlogits, dweight, scores, expert, choices, rows, E, k, router, seq_rows, seq_full, scale,
                             aux);
    return done(be);
}
static int cpu_moe_seq_counts(plc_backend *be, float *choices, const int32_t *expert, int64_t rows, int64_t E,
                              int64_t k, int64_t seq_rows)
{
    plc_k_moe_seq_counts(choices, expert, rows, E, k, seq_rows);
    return done(be);
}
static int cpu_moe_permute(plc_backend *be, float *xp, const float *x, const int32_t *pos, int64_t rows, int64_t h,
                           int64_t k, int64_t prow)
{
    plc_k_moe_permute(xp, x, pos, rows, h, k, prow);
    return done(be);
}
static int cpu_moe_permute_bwd(plc_backend *be, float *dx, const float *dxp, const int32_t *pos, int64_t rows,
                               int64_t h, int64_t k)
{
    plc_k_moe_permute_backward(dx, dxp, pos, rows, h, k);
    return done(be);
}
static int cpu_moe_unpermute(plc_backend *be, float *out, const float *y, const int32_t *pos, const float *weight,
                             int64_t rows, int64_t h, int64_t k)
{
    plc_k_moe_unpermute(out, y, pos, weight, rows, h, k);
    return done(be);
}
static int cpu_moe_unpermute_bwd(plc_backend *be, float *dy, float *dweight, const float *dout, const float *y,
                                 const int32_t *pos, const float *weight, int64_t rows, int64_t h, int64_t k,
                                 int64_t prow)
{
    plc_k_moe_unpermute_backward(dy, dweight, dout, y, pos, weight, rows, h, k, prow);
    return done(be);
}
static int cpu_moe_matmul(plc_backend *be, float *C, const float *A, const float *W, const int32_t *counts, int64_t E,
                          int64_t prow, int64_t K, int64_t N, int transw, float beta)
{
    plc_k_moe_matmul(C, A, W, counts, E, prow, K, N, transw, beta);
    return done(be);
}
static int cpu_moe_matmul_dw(plc_backend *be, float *dW, const float *A, const float *B, const int32_t *counts,
                             int64_t E, int64_t K, int64_t N)
{
    plc_k_moe_matmul_dw(dW, A, B, counts, E, K, N);
    return done(be);
}

/* ---- communication: MPI on host memory --------------------------------------- */
static int cpu_comm_start(plc_backend *be, const plc_comm_call *call, int slot)
{
    return plc_comm_start(be->comm, call, slot, be->error, sizeof be->error);
}
static int cpu_comm_wait(plc_backend *be, int slot)
{
    return plc_comm_wait(be->comm, slot, be->error, sizeof be->error);
}

static const plc_backend_ops cpu_ops = {
    .name = "cpu",
    .destroy = cpu_destroy,
    .arena_alloc = cpu_arena_alloc,
    .arena_free = cpu_arena_free,
    .aux_alloc = cpu_aux_alloc,
    .aux_free = cpu_aux_free,
    .upload = cpu_copy_bytes,
    .download = cpu_copy_bytes,
    .synchronize = cpu_sync,
    .zero = cpu_zero,
    .copy = cpu_copy_bytes,
    .embed_fwd = cpu_embed_fwd,
    .embed_bwd = cpu_embed_bwd,
    .rmsnorm_fwd = cpu_rmsnorm_fwd,
    .rmsnorm_bwd = cpu_rmsnorm_bwd,
    .matmul = cpu_matmul,
    .rope_fwd = cpu_rope_fwd,
    .rope_bwd = cpu_rope_bwd,
    .attn_fwd = cpu_attn_fwd,
    .attn_bwd = cpu_attn_bwd,
    .swiglu_fwd = cpu_swiglu_fwd,
    .swiglu_bwd = cpu_swiglu_bwd,
    .layernorm_fwd = cpu_layernorm_fwd,
    .layernorm_bwd = cpu_layernorm_bwd,
    .gelu_fwd = cpu_gelu_fwd,
    .gelu_bwd = cpu_gelu_bwd,
    .bias_add = cpu_bias_add,
    .bias_bwd = cpu_bias_bwd,
    .pos_fwd = cpu_pos_fwd,
    .pos_bwd = cpu_pos_bwd,
    .add = cpu_add,
    .accumulate = cpu_accumulate,
    .scale = cpu_scale,
    .xent_max = cpu_xent_max,
    .xent_sumexp = cpu_xent_sumexp,
    .xent_loss = cpu_xent_loss,
    .sumsq = cpu_sumsq,
    .clip_scale = cpu_clip_scale,
    .adamw = cpu_adamw,
    .cast = cpu_cast,
    .moe_route = cpu_moe_route,
    .moe_route_bwd = cpu_moe_route_bwd,
    .moe_seq_counts = cpu_moe_seq_counts,
    .moe_permute = cpu_moe_permute,
    .moe_permute_bwd = cpu_moe_permute_bwd,
    .moe_unpermute = cpu_moe_unpermute,
    .moe_unpermute_bwd = cpu_moe_unpermute_bwd,
    .moe_matmul = cpu_moe_matmul,
    .moe_matmul_dw = cpu_moe_matmul_dw,
    .comm_start = cpu_comm_start,
    .comm_wait = cpu_comm_wait,
};

plc_backend *plc_backend_cpu_create(plc_comm *comm, int threads, const plc_plan *plan, char *err,
                                    size_t errlen)
{
    plc_backend *be = calloc(1, sizeof *be);
    cpu_state *s = calloc(1, sizeof *s);
    size_t staging = plan ? plc_bf16_stage_need(plan) : 0;
    if (!be || !s || plc_bf16_stage_init(&s->stage, staging)) {
        free(be);
        free(s);
        snprintf(err, errlen, "out of memory (bf16 staging of %zu bytes)", staging * sizeof(float));
        return NULL;
    }
    be->ops = &cpu_ops;
    be->comm = comm;
    be->threads = threads;
    be->impl = s;
    be->folds_zero = 1;
    /* The kernels' OpenMP threads do all the parallel work; OpenBLAS runs
     * single-threaded inside GEMM panels of a fixed grid, so no result
     * depends on the thread count (kernels/cpu/matmul.c). */
    if (threads > 0) omp_set_num_threads(threads);
    openblas_set_num_threads(1);
    return be;
}
