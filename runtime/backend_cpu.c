/* backend_cpu.c: the reference backend. fp32 kernels of kernels/kernels.h on
 * host memory; collectives and send/recv through MPI (runtime/comm.c). */
#include <cblas.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/kernels.h"
#include "runtime/backend.h"

typedef struct cpu_state {
    float *row_loss; /* per-row losses of XENT_LOSS, summed in double */
    int64_t row_loss_cap;
} cpu_state;

static cpu_state *st(plc_backend *be) { return (cpu_state *)be->impl; }

static void cpu_destroy(plc_backend *be)
{
    if (!be) return;
    if (be->impl) free(st(be)->row_loss);
    free(be->impl);
    free(be);
}

/* ---- memory ---------------------------------------------------------------- */
static void *cpu_arena_alloc(plc_backend *be, uint64_t bytes)
{
    size_t n = (size_t)((bytes + 63) / 64 * 64);
    if (n == 0) n = 64;
    void *p = aligned_alloc(64, n);
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

/* ---- compute ----------------------------------------------------------------- */
static int cpu_zero(plc_backend *be, void *dst, size_t bytes) { (void)be; memset(dst, 0, bytes); return 0; }

static int cpu_embed_fwd(plc_backend *be, float *out, const int32_t *tokens, const float *table,
                         int64_t rows, int64_t dim, int64_t vs, int64_t vl)
{
    (void)be;
    plc_k_embedding_forward(out, tokens, table, rows, dim, vs, vl);
    return 0;
}
static int cpu_embed_bwd(plc_backend *be, float *dtable, const float *dout, const int32_t *tokens,
                         int64_t rows, int64_t dim, int64_t vs, int64_t vl)
{
    (void)be;
    plc_k_embedding_backward(dtable, dout, tokens, rows, dim, vs, vl);
    return 0;
}
static int cpu_rmsnorm_fwd(plc_backend *be, float *out, float *rstd, const float *in,
                           const float *w, int64_t rows, int64_t dim, float eps)
{
    (void)be;
    plc_k_rmsnorm_forward(out, rstd, in, w, rows, dim, eps);
    return 0;
}
static int cpu_rmsnorm_bwd(plc_backend *be, float *din, float *dw, const float *dout,
                           const float *in, const float *w, const float *rstd, int64_t rows,
                           int64_t dim)
{
    (void)be;
    plc_k_rmsnorm_backward(din, dw, dout, in, w, rstd, rows, dim);
    return 0;
}
static int cpu_matmul(plc_backend *be, float *C, const float *A, const float *B, int64_t M,
                      int64_t N, int64_t K, int ta, int tb, float beta)
{
    (void)be;
    plc_k_matmul(C, A, B, M, N, K, ta, tb, 1.0f, beta);
    return 0;
}
static int cpu_rope_fwd(plc_backend *be, float *out, const float *in, const int32_t *pos,
                        int64_t B, int64_t T, int64_t H, int64_t hd, float theta)
{
    (void)be;
    plc_k_rope_forward(out, in, pos, B, T, H, hd, theta);
    return 0;
}
static int cpu_rope_bwd(plc_backend *be, float *din, const float *dout, const int32_t *pos,
                        int64_t B, int64_t T, int64_t H, int64_t hd, float theta)
{
    (void)be;
    plc_k_rope_backward(din, dout, pos, B, T, H, hd, theta);
    return 0;
}
static int cpu_attn_fwd(plc_backend *be, int flash, float *out, float *stats, const float *q,
                        const float *k, const float *v, const int32_t *qp, const int32_t *kp,
                        int64_t B, int64_t Tq, int64_t Tk, int64_t H, int64_t Hkv, int64_t hd)
{
    (void)be;
    if (flash)
        plc_k_flash_attention_forward(out, stats, q, k, v, qp, kp, B, Tq, Tk, H, Hkv, hd);
    else
        plc_k_attention_forward(out, stats, q, k, v, qp, kp, B, Tq, Tk, H, Hkv, hd);
    return 0;
}
static int cpu_attn_bwd(plc_backend *be, int flash, float *dq, float *dk, float *dv,
                        const float *dout, const float *q, const float *k, const float *v,
                        const float *out, const float *stats, const int32_t *qp,
                        const int32_t *kp, int64_t B, int64_t Tq, int64_t Tk, int64_t H,
                        int64_t Hkv, int64_t hd)
{
    (void)be;
    if (flash)
        plc_k_flash_attention_backward(dq, dk, dv, dout, q, k, v, out, stats, qp, kp, B, Tq, Tk,
                                       H, Hkv, hd);
    else /* the probabilities already hold the mask */
        plc_k_attention_backward(dq, dk, dv, dout, q, k, v, out, stats, B, Tq, Tk, H, Hkv, hd);
    return 0;
}
static int cpu_swiglu_fwd(plc_backend *be, float *out, const float *g, const float *u, int64_t n)
{
    (void)be;
    plc_k_swiglu_forward(out, g, u, n);
    return 0;
}
static int cpu_swiglu_bwd(plc_backend *be, float *dg, float *du, const float *dout,
                          const float *g, const float *u, int64_t n)
{
    (void)be;
    plc_k_swiglu_backward(dg, du, dout, g, u, n);
    return 0;
}
static int cpu_add(plc_backend *be, float *out, const float *a, const float *b, int64_t n)
{
    (void)be;
    plc_k_add(out, a, b, n);
    return 0;
}
static int cpu_accumulate(plc_backend *be, float *y, const float *x, int64_t n)
{
    (void)be;
    plc_k_accumulate(y, x, n);
    return 0;
}
static int cpu_scale(plc_backend *be, float *x, float s, int64_t n)
{
    (void)be;
    plc_k_scale(x, s, n);
    return 0;
}
static int cpu_xent_max(plc_backend *be, float *row_max, const float *logits, int64_t rows,
                        int64_t vl)
{
    (void)be;
    plc_k_xent_local_max(row_max, logits, rows, vl);
    return 0;
}
static int cpu_xent_sumexp(plc_backend *be, float *row_sum, float *tl, const float *logits,
                           const int32_t *targets, const float *row_max, int64_t rows,
                           int64_t vl, int64_t vs)
{
    (void)be;
    plc_k_xent_local_sumexp(row_sum, tl, logits, row_max, targets, rows, vl, vs);
    return 0;
}
static int cpu_xent_loss(plc_backend *be, float *dlogits, double *loss_sum, const float *logits,
                         const int32_t *targets, const float *row_max, const float *row_sum,
                         const float *tl, int64_t rows, int64_t vl, int64_t vs, float grad_scale)
{
    cpu_state *s = st(be);
    if (rows > s->row_loss_cap) {
        float *p = realloc(s->row_loss, (size_t)rows * sizeof *p);
        if (!p) return plc_backend_fail(be, "out of memory");
        s->row_loss = p;
        s->row_loss_cap = rows;
    }
    plc_k_xent_loss_grad(s->row_loss, dlogits, logits, row_max, row_sum, tl, targets, rows, vl,
                         vs, grad_scale);
    double sum = 0; /* rows in order: deterministic */
    for (int64_t r = 0; r < rows; r++) sum += s->row_loss[r];
    *loss_sum += sum;
    return 0;
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
static int cpu_adamw(plc_backend *be, void *param, plc_dtype pt, const void *grad, plc_dtype gt,
                     float *m, float *v, const float *scale, float *master, int64_t n, double lr,
                     double b1, double b2, double eps, double wd, int64_t t)
{
    if (pt != PLC_F32 || gt != PLC_F32 || master)
        return plc_backend_fail(be, "the CPU backend updates fp32 parameters only");
    plc_k_adamw((float *)param, (const float *)grad, m, v, n, lr, b1, b2, eps, wd, t, *scale);
    return 0;
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
    .comm_start = cpu_comm_start,
    .comm_wait = cpu_comm_wait,
};

plc_backend *plc_backend_cpu_create(plc_comm *comm, int threads, char *err, size_t errlen)
{
    plc_backend *be = calloc(1, sizeof *be);
    cpu_state *s = calloc(1, sizeof *s);
    if (!be || !s) {
        free(be);
        free(s);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    be->ops = &cpu_ops;
    be->comm = comm;
    be->threads = threads;
    be->impl = s;
    if (threads > 0) { /* both OpenMP (our kernels) and OpenBLAS's own pool */
        omp_set_num_threads(threads);
        openblas_set_num_threads(threads);
    }
    return be;
}
