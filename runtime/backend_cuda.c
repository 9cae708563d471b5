/* backend_cuda.c: the CUDA backend. The arena lives in device memory; the
 * kernels of kernels/cuda/kernels_cuda.h run on a compute stream;
 * collectives go through NCCL on a separate comm stream, one NCCL
 * communicator per plan group; pipeline send/recv through two world
 * communicators (forward, backward) with a stream each,
 * each built from a unique id broadcast over the group's MPI communicator.
 *
 * Stream order follows the plan: a transfer starts on the comm stream after
 * everything issued before it on the compute stream (an event), and a wait
 * makes the compute stream wait for the transfer's completion event, so the
 * host never blocks on communication. The step's scalars stay on the
 * device (kernels/cuda/step_scalars.cu): the loss sum, the squared norm and
 * the clip factor are computed there with the host's double arithmetic in
 * the host's order, and AdamW reads the step's constants from a table
 * written before each step (set_step) and the clip factor from device
 * memory, so no op of a step stops for the host.
 *
 * The backend runs the plan's buffers as they are typed: fp32 plans, and
 * bf16 plans (bf16 parameters and activations, fp32 gradients, optimizer
 * state and master weights), passing each op's storage dtype to the
 * kernels and ncclBfloat16 to NCCL. The CPU backend emulates the same bf16
 * storage, which is what tests/e2e/gpu.sh compares.
 *
 * Step graphs (runtime/step_graph.h): the executor records the stretches
 * of a step that stop nowhere for the host as CUDA graphs (stream capture
 * on the compute stream; the comm and p2p streams join the capture through
 * the events that order them, and rejoin it before its end) and replays
 * them from the second step on. NCCL >= 2.9 records its collectives in a
 * graph, so transfers are captured with the compute around them when both
 * the NCCL the backend was built with and the one it runs with are that
 * recent. Compiled only with PLC_HAVE_CUDA. */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/backend.h"

#ifndef PLC_HAVE_CUDA

plc_backend *plc_backend_cuda_create(plc_comm *comm, int threads, const plc_plan *plan, char *err,
                                     size_t errlen)
{
    (void)comm;
    (void)threads;
    (void)plan;
    snprintf(err, errlen,
             "plrun was built without the CUDA backend (nvcc was not found at build time); "
             "use --backend cpu");
    return NULL;
}

#else

#include <cuda_runtime.h>
#include <nccl.h>

#include "kernels/cuda/kernels_cuda.h"

typedef struct cuda_state {
    int device;
    plc_cuda_ctx *ctx;
    cudaStream_t compute, comm;
    cudaEvent_t issued;        /* marks the compute stream before a transfer */
    uint32_t ngroups;
    ncclComm_t *group_nccl;    /* per plan group; NULL when one member or not a member */
    /* pipeline send/recv, one world communicator and stream per direction
     * (forward activations, backward gradients): NCCL's send and recv block
     * their stream until the peer matches, so one stream for both
     * directions would deadlock 1F1B (a send of the next activation queued
     * behind the receive of a gradient that waits on the peer's send). */
    ncclComm_t p2p[2];
    cudaStream_t p2p_stream[2];
    int nslots;
    cudaEvent_t *slot_done;    /* per instruction index */
    unsigned char *slot_used;
    float *row_loss_dev;       /* XENT_LOSS per-row losses */
    int64_t row_loss_cap;
    double *dscratch;          /* one device double */
    /* the step's AdamW constants (plc_adamw_prepare on the host), with the
     * plan's weight decay [0] and without [1], in device memory, and the
     * values they were made from */
    plc_adamw_consts *adamw_dev;
    double step_lr, step_b1, step_b2, step_eps, step_wd;
    int64_t step_t;
    int step_set;
    long long *moe_dropped;    /* MOE_ROUTE's dropped copies (device), allocated at its first call */
} cuda_state;

static cuda_state *st(plc_backend *be) { return (cuda_state *)be->impl; }

#define CUDA_TRY(be, call)                                                                     \
    do {                                                                                       \
        cudaError_t e_ = (call);                                                               \
        if (e_ != cudaSuccess)                                                                 \
            return plc_backend_fail((be), "CUDA: %s: %s", #call, cudaGetErrorString(e_));      \
    } while (0)
#define NCCL_TRY(be, call)                                                                     \
    do {                                                                                       \
        ncclResult_t r_ = (call);                                                              \
        if (r_ != ncclSuccess)                                                                 \
            return plc_backend_fail((be), "NCCL: %s: %s", #call, ncclGetErrorString(r_));      \
    } while (0)
/* a kernel call of kernels_cuda.h */
#define K(be, call) ((call) == 0 ? 0 : plc_backend_fail((be), "CUDA kernel: %s", plc_cuda_last_error()))

static void cuda_destroy(plc_backend *be)
{
    if (!be) return;
    cuda_state *s = st(be);
    if (s) {
        for (uint32_t g = 0; g < s->ngroups; g++)
            if (s->group_nccl && s->group_nccl[g]) ncclCommDestroy(s->group_nccl[g]);
        for (int d = 0; d < 2; d++) {
            if (s->p2p[d]) ncclCommDestroy(s->p2p[d]);
            if (s->p2p_stream[d]) cudaStreamDestroy(s->p2p_stream[d]);
        }
        for (int i = 0; i < s->nslots; i++) cudaEventDestroy(s->slot_done[i]);
        free(s->slot_done);
        free(s->slot_used);
        free(s->group_nccl);
        if (s->row_loss_dev) cudaFree(s->row_loss_dev);
        if (s->dscratch) cudaFree(s->dscratch);
        if (s->adamw_dev) cudaFree(s->adamw_dev);
        if (s->moe_dropped) cudaFree(s->moe_dropped);
        if (s->issued) cudaEventDestroy(s->issued);
        if (s->compute) cudaStreamDestroy(s->compute);
        if (s->comm) cudaStreamDestroy(s->comm);
        if (s->ctx) plc_cuda_destroy(s->ctx);
        free(s);
    }
    free(be);
}

/* ---- memory ----------------------------------------------------------------- */
static void *cuda_arena_alloc(plc_backend *be, uint64_t bytes)
{
    void *p = NULL;
    cudaError_t e = cudaMalloc(&p, bytes ? bytes : 64);
    if (e != cudaSuccess) {
        plc_backend_fail(be, "cannot allocate the arena of %llu bytes on GPU %d: %s",
                         (unsigned long long)bytes, st(be)->device, cudaGetErrorString(e));
        return NULL;
    }
    if (cudaMemset(p, 0, bytes ? bytes : 64) != cudaSuccess) {
        cudaFree(p);
        plc_backend_fail(be, "cannot clear the arena");
        return NULL;
    }
    return p;
}
static void cuda_free(plc_backend *be, void *p) { (void)be; if (p) cudaFree(p); }
static void *cuda_aux_alloc(plc_backend *be, size_t bytes)
{
    void *p = NULL;
    if (cudaMalloc(&p, bytes ? bytes : 1) != cudaSuccess) {
        plc_backend_fail(be, "out of GPU memory (%zu bytes)", bytes);
        return NULL;
    }
    return p;
}
/* synchronous: the host may reuse its buffer right after */
static int cuda_upload(plc_backend *be, void *dst, const void *src, size_t bytes)
{
    CUDA_TRY(be, cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, st(be)->compute));
    CUDA_TRY(be, cudaStreamSynchronize(st(be)->compute));
    return 0;
}
static int cuda_download(plc_backend *be, void *dst, const void *src, size_t bytes)
{
    CUDA_TRY(be, cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, st(be)->compute));
    CUDA_TRY(be, cudaStreamSynchronize(st(be)->compute));
    return 0;
}
static int cuda_device_memory(plc_backend *be, double *in_use)
{
    size_t free_b = 0, total_b = 0;
    CUDA_TRY(be, cudaMemGetInfo(&free_b, &total_b));
    *in_use = (double)(total_b - free_b);
    return 0;
}

static int cuda_sync(plc_backend *be)
{
    CUDA_TRY(be, cudaStreamSynchronize(st(be)->compute));
    CUDA_TRY(be, cudaStreamSynchronize(st(be)->comm));
    for (int d = 0; d < 2; d++)
        if (st(be)->p2p_stream[d]) CUDA_TRY(be, cudaStreamSynchronize(st(be)->p2p_stream[d]));
    return 0;
}

/* ---- compute ------------------------------------------------------------------ */
#define S(be) ((void *)st(be)->compute)

static int cuda_zero(plc_backend *be, void *dst, size_t bytes)
{
    CUDA_TRY(be, cudaMemsetAsync(dst, 0, bytes, st(be)->compute));
    return 0;
}
static int cuda_copy(plc_backend *be, void *dst, const void *src, size_t bytes)
{
    CUDA_TRY(be, cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, st(be)->compute));
    return 0;
}
/* the kernels' storage type of a plan dtype (exec_check.c allows f32 and bf16) */
static plc_cuda_dtype cdt(plc_dtype dt) { return dt == PLC_BF16 ? PLC_CUDA_BF16 : PLC_CUDA_F32; }

static int cuda_embed_fwd(plc_backend *be, void *out, const int32_t *tok, const void *table,
                          plc_dtype dt, int64_t rows, int64_t dim, int64_t vs, int64_t vl)
{
    return K(be, plc_cuda_embedding_forward(out, tok, table, cdt(dt), rows, dim, vs, vl, S(be)));
}
static int cuda_embed_bwd(plc_backend *be, float *dtable, const void *dout, plc_dtype dt,
                          const int32_t *tok, int64_t rows, int64_t dim, int64_t vs, int64_t vl)
{
    return K(be, plc_cuda_embedding_backward(dtable, dout, cdt(dt), tok, rows, dim, vs, vl, S(be)));
}
static int cuda_rmsnorm_fwd(plc_backend *be, void *out, float *rstd, const void *in,
                            const void *w, plc_dtype dt, int64_t rows, int64_t dim, float eps)
{
    return K(be, plc_cuda_rmsnorm_forward(out, rstd, in, w, cdt(dt), rows, dim, eps, S(be)));
}
static int cuda_rmsnorm_bwd(plc_backend *be, void *din, float *dw, const void *dout,
                            const void *in, const void *w, const float *rstd, plc_dtype dt,
                            int64_t rows, int64_t dim)
{
    return K(be, plc_cuda_rmsnorm_backward(din, dw, dout, in, w, rstd, cdt(dt), rows, dim, S(be)));
}
static int cuda_matmul(plc_backend *be, void *C, plc_dtype c_dt, const void *A, const void *B,
                       plc_dtype ab_dt, int64_t M, int64_t N, int64_t Kd, int ta, int tb, float beta)
{
    return K(be, plc_cuda_matmul(st(be)->ctx, C, cdt(c_dt), A, B, cdt(ab_dt), M, N, Kd, ta, tb, 1.0f,
                                 beta, S(be)));
}
static int cuda_rope_fwd(plc_backend *be, void *out, const void *in, plc_dtype dt,
                         const int32_t *pos, int64_t B, int64_t T, int64_t H, int64_t hd,
                         float theta)
{
    return K(be, plc_cuda_rope_forward(out, in, cdt(dt), pos, B, T, H, hd, theta, S(be)));
}
static int cuda_rope_bwd(plc_backend *be, void *din, const void *dout, plc_dtype dt,
                         const int32_t *pos, int64_t B, int64_t T, int64_t H, int64_t hd,
                         float theta)
{
    return K(be, plc_cuda_rope_backward(din, dout, cdt(dt), pos, B, T, H, hd, theta, S(be)));
}
static int cuda_layernorm_fwd(plc_backend *be, void *out, float *mean, float *rstd, const void *in,
                              const void *w, const void *bias, plc_dtype dt, int64_t rows, int64_t dim,
                              float eps)
{
    return K(be, plc_cuda_layernorm_forward(out, mean, rstd, in, w, bias, cdt(dt), rows, dim, eps, S(be)));
}
static int cuda_layernorm_bwd(plc_backend *be, void *din, float *dw, float *db, const void *dout,
                              const void *in, const void *w, const float *mean, const float *rstd,
                              plc_dtype dt, int64_t rows, int64_t dim)
{
    return K(be, plc_cuda_layernorm_backward(din, dw, db, dout, in, w, mean, rstd, cdt(dt), rows, dim, S(be)));
}
static int cuda_gelu_fwd(plc_backend *be, void *out, const void *in, plc_dtype dt, int64_t n)
{
    return K(be, plc_cuda_gelu_forward(out, in, cdt(dt), n, S(be)));
}
static int cuda_gelu_bwd(plc_backend *be, void *din, const void *dout, const void *in, plc_dtype dt,
                         int64_t n)
{
    return K(be, plc_cuda_gelu_backward(din, dout, in, cdt(dt), n, S(be)));
}
static int cuda_bias_add(plc_backend *be, void *x, const void *bias, plc_dtype dt, int64_t rows,
                         int64_t cols)
{
    return K(be, plc_cuda_bias_add(x, x, bias, cdt(dt), rows, cols, S(be)));
}
static int cuda_bias_bwd(plc_backend *be, float *dbias, const void *dout, plc_dtype dt, int64_t rows,
                         int64_t cols)
{
    return K(be, plc_cuda_bias_backward(dbias, dout, cdt(dt), rows, cols, S(be)));
}
static int cuda_pos_fwd(plc_backend *be, void *x, const void *table, plc_dtype dt, const int32_t *pos,
                        int64_t rows, int64_t dim, int64_t table_rows)
{
    (void)table_rows;
    return K(be, plc_cuda_pos_embedding_forward(x, x, table, cdt(dt), pos, 1, rows, dim, S(be)));
}
static int cuda_pos_bwd(plc_backend *be, float *dtable, const void *dout, plc_dtype dt, const int32_t *pos,
                        int64_t rows, int64_t dim)
{
    return K(be, plc_cuda_pos_embedding_backward(dtable, dout, cdt(dt), pos, 1, rows, dim, S(be)));
}
static int cuda_attn_fwd(plc_backend *be, int flash, void *out, float *stats, const void *q,
                         const void *k, const void *v, plc_dtype dt, const int32_t *qp,
                         const int32_t *kp, int64_t B, int64_t Tq, int64_t Tk, int64_t H,
                         int64_t Hkv, int64_t hd)
{
    if (flash)
        return K(be, plc_cuda_flash_attention_forward(out, stats, q, k, v, cdt(dt), qp, kp, B, Tq,
                                                      Tk, H, Hkv, hd, S(be)));
    return K(be, plc_cuda_attention_forward(out, stats, q, k, v, cdt(dt), qp, kp, B, Tq, Tk, H, Hkv,
                                            hd, S(be)));
}
static int cuda_attn_bwd(plc_backend *be, int flash, void *dq, void *dk, void *dv,
                         const void *dout, const void *q, const void *k, const void *v,
                         const void *out, const float *stats, plc_dtype dt, const int32_t *qp,
                         const int32_t *kp, int64_t B, int64_t Tq, int64_t Tk, int64_t H,
                         int64_t Hkv, int64_t hd)
{
    if (flash)
        return K(be, plc_cuda_flash_attention_backward(dq, dk, dv, dout, q, k, v, out, stats,
                                                       cdt(dt), qp, kp, B, Tq, Tk, H, Hkv, hd,
                                                       S(be)));
    /* the materialised backward works in the probabilities' memory; the
     * plan reads them once, in this backward */
    return K(be, plc_cuda_attention_backward(dq, dk, dv, dout, q, k, v, out, (float *)stats,
                                             cdt(dt), B, Tq, Tk, H, Hkv, hd, S(be)));
}
static int cuda_swiglu_fwd(plc_backend *be, void *out, const void *g, const void *u, plc_dtype dt,
                           int64_t n)
{
    return K(be, plc_cuda_swiglu_forward(out, g, u, cdt(dt), n, S(be)));
}
static int cuda_swiglu_bwd(plc_backend *be, void *dg, void *du, const void *dout, const void *g,
                           const void *u, plc_dtype dt, int64_t n)
{
    return K(be, plc_cuda_swiglu_backward(dg, du, dout, g, u, cdt(dt), n, S(be)));
}
static int cuda_add(plc_backend *be, void *out, const void *a, const void *b, plc_dtype dt, int64_t n)
{
    return K(be, plc_cuda_add(out, a, b, cdt(dt), n, S(be)));
}
static int cuda_accumulate(plc_backend *be, void *y, const void *x, plc_dtype dt, int64_t n)
{
    return K(be, plc_cuda_accumulate(y, x, cdt(dt), n, S(be)));
}
static int cuda_scale(plc_backend *be, void *x, float s, plc_dtype dt, int64_t n)
{
    return K(be, plc_cuda_scale(x, s, cdt(dt), n, S(be)));
}
static int cuda_xent_max(plc_backend *be, float *row_max, const void *logits, plc_dtype dt,
                         int64_t rows, int64_t vl)
{
    return K(be, plc_cuda_xent_local_max(row_max, logits, cdt(dt), rows, vl, S(be)));
}
static int cuda_xent_sumexp(plc_backend *be, float *row_sum, float *tl, const void *logits,
                            plc_dtype dt, const int32_t *targets, const float *row_max,
                            int64_t rows, int64_t vl, int64_t vs)
{
    return K(be, plc_cuda_xent_local_sumexp(row_sum, tl, logits, cdt(dt), row_max, targets, rows, vl,
                                            vs, S(be)));
}
/* the per-row losses are summed in double, in row order, into the loss sum,
 * on the device, exactly as the CPU backend does on the host */
static int cuda_xent_loss(plc_backend *be, void *dlogits, double *loss_sum, const void *logits,
                          plc_dtype dt, const int32_t *targets, const float *row_max,
                          const float *row_sum, const float *tl, int64_t rows, int64_t vl,
                          int64_t vs, float grad_scale)
{
    cuda_state *s = st(be);
    if (rows > s->row_loss_cap) { /* the warm-up step's: none while a graph is recorded */
        if (s->row_loss_dev) cudaFree(s->row_loss_dev);
        s->row_loss_dev = NULL;
        s->row_loss_cap = 0;
        CUDA_TRY(be, cudaMalloc((void **)&s->row_loss_dev, (size_t)rows * sizeof(float)));
        s->row_loss_cap = rows;
    }
    if (K(be, plc_cuda_xent_loss_grad(s->row_loss_dev, dlogits, logits, cdt(dt), row_max, row_sum,
                                      tl, targets, rows, vl, vs, grad_scale, S(be))))
        return -1;
    return K(be, plc_cuda_sum_rows_f64(loss_sum, s->row_loss_dev, rows, S(be)));
}
static int cuda_sumsq(plc_backend *be, double *acc, const float *x, int64_t n)
{
    cuda_state *s = st(be);
    if (K(be, plc_cuda_sum_squares(s->ctx, s->dscratch, x, n, S(be)))) return -1;
    return K(be, plc_cuda_add_f64(acc, s->dscratch, S(be)));
}
static int cuda_clip_scale(plc_backend *be, float *scale, const double *sumsq, double max_norm)
{
    return K(be, plc_cuda_clip_scale(scale, sumsq, max_norm, S(be)));
}
/* the step's AdamW constants, written before anything of the step runs (the
 * compute stream is idle: the previous step ended with a synchronize) */
static int cuda_set_step(plc_backend *be, const plc_train *t, double lr, int64_t step_t)
{
    cuda_state *s = st(be);
    plc_adamw_consts c[2] = {plc_adamw_prepare(step_t, lr, t->beta1, t->beta2, t->eps, t->weight_decay),
                             plc_adamw_prepare(step_t, lr, t->beta1, t->beta2, t->eps, 0.0)};
    if (!s->adamw_dev) CUDA_TRY(be, cudaMalloc((void **)&s->adamw_dev, sizeof c));
    if (cuda_upload(be, s->adamw_dev, c, sizeof c)) return -1;
    s->step_lr = lr;
    s->step_b1 = t->beta1;
    s->step_b2 = t->beta2;
    s->step_eps = t->eps;
    s->step_wd = t->weight_decay;
    s->step_t = step_t;
    s->step_set = 1;
    return 0;
}
/* a bf16 parameter is updated through its fp32 master copy and rounded from
 * it again (the CPU backend does the same) */
static int cuda_adamw(plc_backend *be, void *param, plc_dtype pt, const void *grad, plc_dtype gt,
                      float *m, float *v, const float *scale, float *master, int64_t n, double lr,
                      double b1, double b2, double eps, double wd, int64_t t)
{
    float *target = master ? master : pt == PLC_F32 ? (float *)param : NULL;
    if (!target)
        return plc_backend_fail(be, "a %s parameter needs an fp32 master copy", plc_dtype_name(pt));
    if (gt != PLC_F32 || (pt != PLC_F32 && pt != PLC_BF16))
        return plc_backend_fail(be, "the CUDA optimizer takes fp32 gradients and f32/bf16 parameters, "
                                    "not %s and %s", plc_dtype_name(gt), plc_dtype_name(pt));
    /* the constants of the table set_step wrote: the same values, or the
     * executor broke its contract (backend.h) */
    cuda_state *s = st(be);
    if (!s->step_set || lr != s->step_lr || t != s->step_t || b1 != s->step_b1 || b2 != s->step_b2 ||
        eps != s->step_eps || (wd != s->step_wd && wd != 0.0))
        return plc_backend_fail(be, "AdamW at step %lld with lr %g: not the step the backend's table was written "
                                    "for (step %lld, lr %g)", (long long)t, lr, (long long)s->step_t, s->step_lr);
    const plc_adamw_consts *c = s->adamw_dev + (wd == s->step_wd ? 0 : 1);
    if (K(be, plc_cuda_adamw_dev(target, (const float *)grad, m, v, n, c, scale, S(be)))) return -1;
    if (master && pt == PLC_BF16) return K(be, plc_cuda_cast_f32_to_bf16((uint16_t *)param, master, n, S(be)));
    if (master) return cuda_copy(be, param, master, (size_t)n * sizeof(float));
    return 0;
}
static int cuda_cast(plc_backend *be, void *dst, plc_dtype dt, const void *src, plc_dtype sdt, int64_t n)
{
    if (dt == PLC_BF16 && sdt == PLC_F32)
        return K(be, plc_cuda_cast_f32_to_bf16((uint16_t *)dst, (const float *)src, n, S(be)));
    if (dt == PLC_F32 && sdt == PLC_BF16)
        return K(be, plc_cuda_cast_bf16_to_f32((float *)dst, (const uint16_t *)src, n, S(be)));
    if (dt == sdt) return cuda_copy(be, dst, src, (size_t)n * plc_dtype_size(dt));
    return plc_backend_fail(be, "no cast from %s to %s", plc_dtype_name(sdt), plc_dtype_name(dt));
}

/* ---- communication: NCCL on the comm stream ---------------------------------------- */
static int nccl_type(plc_dtype t, ncclDataType_t *out)
{
    switch (t) {
    case PLC_F32: *out = ncclFloat32; return 0;
    case PLC_F64: *out = ncclFloat64; return 0;
    case PLC_I32: *out = ncclInt32; return 0;
    case PLC_BF16: *out = ncclBfloat16; return 0;
    default: return -1;
    }
}

static int ensure_slot(plc_backend *be, int slot)
{
    cuda_state *s = st(be);
    if (slot < s->nslots) return 0;
    int n = s->nslots ? s->nslots : 64;
    while (n <= slot) n *= 2;
    cudaEvent_t *ev = realloc(s->slot_done, (size_t)n * sizeof *ev);
    if (!ev) return plc_backend_fail(be, "out of memory");
    s->slot_done = ev;
    unsigned char *used = realloc(s->slot_used, (size_t)n);
    if (!used) return plc_backend_fail(be, "out of memory");
    s->slot_used = used;
    for (int i = s->nslots; i < n; i++) {
        s->slot_used[i] = 0;
        CUDA_TRY(be, cudaEventCreateWithFlags(&s->slot_done[i], cudaEventDisableTiming));
        s->nslots = i + 1;
    }
    return 0;
}

static int cuda_comm_start(plc_backend *be, const plc_comm_call *call, int slot)
{
    cuda_state *s = st(be);
    plc_comm *c = be->comm;
    ncclDataType_t type;
    if (nccl_type(call->dtype, &type)) return plc_backend_fail(be, "no NCCL type for this dtype");
    if (ensure_slot(be, slot)) return -1;
    size_t count = (size_t)call->count, esz = plc_dtype_size(call->dtype);
    ncclComm_t nc = NULL;
    cudaStream_t stream = s->comm;
    if (plc_op_comm(call->op) == PLC_COMM_PEER) {
        int dir = call->tag & 1; /* comm.h: the tag's low bit is the direction */
        if (!s->p2p[dir] || call->peer < 0 || call->peer >= c->size || call->peer == c->rank)
            return plc_backend_fail(be, "%s: no peer rank %d", plc_op_name(call->op), call->peer);
        nc = s->p2p[dir];
        stream = s->p2p_stream[dir];
    } else {
        if (call->group < 0 || (uint32_t)call->group >= s->ngroups)
            return plc_backend_fail(be, "group %d does not exist", call->group);
        nc = s->group_nccl[call->group];
        if (!nc) { /* one member: a copy on the compute stream, or nothing */
            if ((call->op == PLC_OP_REDUCE_SCATTER || call->op == PLC_OP_ALLGATHER) && call->dst != call->src)
                return cuda_copy(be, call->dst, call->src, count * esz);
            return 0;
        }
    }
    /* the transfer sees everything issued before it on the compute stream */
    CUDA_TRY(be, cudaEventRecord(s->issued, s->compute));
    CUDA_TRY(be, cudaStreamWaitEvent(stream, s->issued, 0));
    switch (call->op) {
    case PLC_OP_ALLREDUCE:
        NCCL_TRY(be, ncclAllReduce(call->dst, call->dst, count, type, call->reduce_max ? ncclMax : ncclSum, nc, stream));
        break;
    case PLC_OP_REDUCE_SCATTER:
        NCCL_TRY(be, ncclReduceScatter(call->src, call->dst, count, type, ncclSum, nc, stream));
        break;
    case PLC_OP_ALLGATHER:
        NCCL_TRY(be, ncclAllGather(call->src, call->dst, count, type, nc, stream));
        break;
    case PLC_OP_BROADCAST:
        NCCL_TRY(be, ncclBroadcast(call->dst, call->dst, count, type, call->root, nc, stream));
        break;
    case PLC_OP_SEND:
        NCCL_TRY(be, ncclSend(call->dst, count, type, call->peer, nc, stream));
        break;
    case PLC_OP_RECV:
        NCCL_TRY(be, ncclRecv(call->dst, count, type, call->peer, nc, stream));
        break;
    default:
        return plc_backend_fail(be, "%s is not a communication op", plc_op_name(call->op));
    }
    CUDA_TRY(be, cudaEventRecord(s->slot_done[slot], stream));
    s->slot_used[slot] = 1;
    return 0;
}

/* the compute stream waits; the host does not */
static int cuda_comm_wait(plc_backend *be, int slot)
{
    cuda_state *s = st(be);
    if (slot < 0 || slot >= s->nslots || !s->slot_used[slot]) return 0;
    CUDA_TRY(be, cudaStreamWaitEvent(s->compute, s->slot_done[slot], 0));
    s->slot_used[slot] = 0;
    return 0;
}

/* ---- step graphs: stream capture on the compute stream ------------------------ */
static int cuda_graph_begin(plc_backend *be)
{
    /* thread-local: another thread's unsafe calls (none in plrun) do not
     * break this capture, and this thread's fail it loudly */
    CUDA_TRY(be, cudaStreamBeginCapture(st(be)->compute, cudaStreamCaptureModeThreadLocal));
    return 0;
}
static int cuda_graph_end(plc_backend *be, void **graph)
{
    cudaGraph_t g = NULL;
    cudaGraphExec_t exec = NULL;
    *graph = NULL;
    CUDA_TRY(be, cudaStreamEndCapture(st(be)->compute, &g));
    cudaError_t e = cudaGraphInstantiate(&exec, g, 0);
    cudaGraphDestroy(g);
    if (e != cudaSuccess)
        return plc_backend_fail(be, "CUDA: cudaGraphInstantiate: %s", cudaGetErrorString(e));
    *graph = exec;
    return 0;
}
static int cuda_graph_launch(plc_backend *be, void *graph)
{
    CUDA_TRY(be, cudaGraphLaunch((cudaGraphExec_t)graph, st(be)->compute));
    return 0;
}
static void cuda_graph_free(plc_backend *be, void *graph)
{
    (void)be;
    if (graph) cudaGraphExecDestroy((cudaGraphExec_t)graph);
}

/* ---- mixture of experts (fp32; kernels/cuda/moe.cu) ---------------------------- */
static int cuda_moe_route(plc_backend *be, float *scores, int32_t *expert, int32_t *pos, float *weight,
                          int32_t *counts, const float *logits, int64_t rows, int64_t E, int64_t k, int router,
                          int64_t capacity, float scale, int64_t *dropped)
{
    cuda_state *s = st(be);
    if (!s->moe_dropped) CUDA_TRY(be, cudaMalloc((void **)&s->moe_dropped, sizeof *s->moe_dropped));
    if (K(be, plc_cuda_moe_route(scores, expert, pos, weight, counts, logits, rows, E, k, router, capacity, scale,
                                 s->moe_dropped, S(be))))
        return -1;
    long long d = 0;
    CUDA_TRY(be, cudaMemcpyAsync(&d, s->moe_dropped, sizeof d, cudaMemcpyDeviceToHost, s->compute));
    CUDA_TRY(be, cudaStreamSynchronize(s->compute));
    *dropped += (int64_t)d;
    return 0;
}
static int cuda_moe_route_bwd(plc_backend *be, float *dlogits, const float *dweight, const float *scores,
                              const int32_t *expert, const float *choices, int64_t rows, int64_t E, int64_t k,
                              int router, int64_t seq_rows, int64_t seq_full, float scale, float aux)
{
    return K(be, plc_cuda_moe_route_backward(dlogits, dweight, scores, expert, choices, rows, E, k, router, seq_rows,
                                             seq_full, scale, aux, S(be)));
}
static int cuda_moe_seq_counts(plc_backend *be, float *choices, const int32_t *expert, int64_t rows, int64_t E,
                               int64_t k, int64_t seq_rows)
{
    return K(be, plc_cuda_moe_seq_counts(choices, expert, rows, E, k, seq_rows, S(be)));
}
static int cuda_moe_permute(plc_backend *be, float *xp, const float *x, const int32_t *pos, int64_t rows, int64_t h,
                            int64_t k, int64_t prow)
{
    return K(be, plc_cuda_moe_permute(xp, x, pos, rows, h, k, prow, S(be)));
}
static int cuda_moe_permute_bwd(plc_backend *be, float *dx, const float *dxp, const int32_t *pos, int64_t rows,
                                int64_t h, int64_t k)
{
    return K(be, plc_cuda_moe_permute_backward(dx, dxp, pos, rows, h, k, S(be)));
}
static int cuda_moe_unpermute(plc_backend *be, float *out, const float *y, const int32_t *pos, const float *weight,
                              int64_t rows, int64_t h, int64_t k)
{
    return K(be, plc_cuda_moe_unpermute(out, y, pos, weight, rows, h, k, S(be)));
}
static int cuda_moe_unpermute_bwd(plc_backend *be, float *dy, float *dweight, const float *dout, const float *y,
                                  const int32_t *pos, const float *weight, int64_t rows, int64_t h, int64_t k,
                                  int64_t prow)
{
    return K(be, plc_cuda_moe_unpermute_backward(dy, dweight, dout, y, pos, weight, rows, h, k, prow, S(be)));
}
static int cuda_moe_matmul(plc_backend *be, float *C, const float *A, const float *W, const int32_t *counts,
                           int64_t E, int64_t prow, int64_t Kd, int64_t N, int transw, float beta)
{
    return K(be, plc_cuda_moe_matmul(st(be)->ctx, C, A, W, counts, E, prow, Kd, N, transw, beta, S(be)));
}
static int cuda_moe_matmul_dw(plc_backend *be, float *dW, const float *A, const float *B, const int32_t *counts,
                              int64_t E, int64_t Kd, int64_t N)
{
    return K(be, plc_cuda_moe_matmul_dw(st(be)->ctx, dW, A, B, counts, E, Kd, N, S(be)));
}

static const plc_backend_ops cuda_ops = {
    .name = "cuda",
    .destroy = cuda_destroy,
    .arena_alloc = cuda_arena_alloc,
    .arena_free = cuda_free,
    .aux_alloc = cuda_aux_alloc,
    .aux_free = cuda_free,
    .upload = cuda_upload,
    .download = cuda_download,
    .synchronize = cuda_sync,
    .device_memory = cuda_device_memory,
    .zero = cuda_zero,
    .copy = cuda_copy,
    .embed_fwd = cuda_embed_fwd,
    .embed_bwd = cuda_embed_bwd,
    .rmsnorm_fwd = cuda_rmsnorm_fwd,
    .rmsnorm_bwd = cuda_rmsnorm_bwd,
    .matmul = cuda_matmul,
    .rope_fwd = cuda_rope_fwd,
    .rope_bwd = cuda_rope_bwd,
    .attn_fwd = cuda_attn_fwd,
    .attn_bwd = cuda_attn_bwd,
    .swiglu_fwd = cuda_swiglu_fwd,
    .swiglu_bwd = cuda_swiglu_bwd,
    .layernorm_fwd = cuda_layernorm_fwd,
    .layernorm_bwd = cuda_layernorm_bwd,
    .gelu_fwd = cuda_gelu_fwd,
    .gelu_bwd = cuda_gelu_bwd,
    .bias_add = cuda_bias_add,
    .bias_bwd = cuda_bias_bwd,
    .pos_fwd = cuda_pos_fwd,
    .pos_bwd = cuda_pos_bwd,
    .add = cuda_add,
    .accumulate = cuda_accumulate,
    .scale = cuda_scale,
    .xent_max = cuda_xent_max,
    .xent_sumexp = cuda_xent_sumexp,
    .xent_loss = cuda_xent_loss,
    .sumsq = cuda_sumsq,
    .clip_scale = cuda_clip_scale,
    .adamw = cuda_adamw,
    .cast = cuda_cast,
    .moe_route = cuda_moe_route,
    .moe_route_bwd = cuda_moe_route_bwd,
    .moe_seq_counts = cuda_moe_seq_counts,
    .moe_permute = cuda_moe_permute,
    .moe_permute_bwd = cuda_moe_permute_bwd,
    .moe_unpermute = cuda_moe_unpermute,
    .moe_unpermute_bwd = cuda_moe_unpermute_bwd,
    .moe_matmul = cuda_moe_matmul,
    .moe_matmul_dw = cuda_moe_matmul_dw,
    .comm_start = cuda_comm_start,
    .comm_wait = cuda_comm_wait,
    .set_step = cuda_set_step,
    .graph_begin = cuda_graph_begin,
    .graph_end = cuda_graph_end,
    .graph_launch = cuda_graph_launch,
    .graph_free = cuda_graph_free,
};

/* one NCCL communicator from an id that the group's first member makes */
static int nccl_init(plc_backend *be, MPI_Comm mpi, int size, int rank, ncclComm_t *out)
{
    ncclUniqueId id;
    if (rank == 0) NCCL_TRY(be, ncclGetUniqueId(&id));
    if (MPI_Bcast(&id, (int)sizeof id, MPI_BYTE, 0, mpi) != MPI_SUCCESS)
        return plc_backend_fail(be, "broadcasting the NCCL id over MPI failed");
    NCCL_TRY(be, ncclCommInitRank(out, size, id, rank));
    return 0;
}

static int cuda_setup(plc_backend *be)
{
    cuda_state *s = st(be);
    plc_comm *c = be->comm;
    int count = plc_cuda_device_count();
    if (count <= 0)
        return plc_backend_fail(be, "no CUDA GPU is available on this machine (rank %d); "
                                    "--backend cuda needs one GPU per rank, use --backend cpu", c->rank);
    /* the rank's index on its node (MPI's, the one the node's ranks agree
     * on) picks among the GPUs it sees: all of the node's, or the one a
     * launcher bound to it (srun --gpus-per-task=1) */
    int index, on_node = plc_comm_node(c, &index);
    s->device = index % count;
    /* NCCL refuses two ranks of one communicator on one GPU ("invalid
     * usage", seen with 2 ranks on one H200: bench/gpu-results.md): the
     * node's ranks compare the bus ids of the GPUs they picked, and all of
     * them stop on a pair that shares one */
    char bus[PLC_NODE_KEY] = "";
    if (cudaDeviceGetPCIBusId(bus, (int)sizeof bus, s->device) != cudaSuccess) bus[0] = '\0';
    int a, b, shared = plc_comm_node_shared(c, bus, &a, &b);
    if (shared < 0) return plc_backend_fail(be, "rank %d: the ranks of its node could not compare their GPUs", c->rank);
    if (shared)
        return plc_backend_fail(be, "ranks %d and %d share a GPU: %d ranks on this node see %d GPU%s, and NCCL needs a "
                                    "GPU for each rank; start at most %d rank%s a node, bind a GPU to each rank "
                                    "(srun --gpus-per-task=1), or use --backend cpu",
                                a, b, on_node, count, count == 1 ? "" : "s", count, count == 1 ? "" : "s");
    CUDA_TRY(be, cudaSetDevice(s->device));
    s->ctx = plc_cuda_create(s->device);
    if (!s->ctx) return plc_backend_fail(be, "GPU %d: %s", s->device, plc_cuda_last_error());
    CUDA_TRY(be, cudaStreamCreateWithFlags(&s->compute, cudaStreamNonBlocking));
    CUDA_TRY(be, cudaStreamCreateWithFlags(&s->comm, cudaStreamNonBlocking));
    CUDA_TRY(be, cudaEventCreateWithFlags(&s->issued, cudaEventDisableTiming));
    CUDA_TRY(be, cudaMalloc((void **)&s->dscratch, sizeof(double)));
    /* NCCL records collectives in a graph from 2.9 on: the headers' and
     * the library's version both */
    int nccl_version = 0;
    be->graph_comm = NCCL_VERSION_CODE >= NCCL_VERSION(2, 9, 0) && ncclGetVersion(&nccl_version) == ncclSuccess &&
                     nccl_version >= NCCL_VERSION(2, 9, 0);
    s->ngroups = c->ngroups;
    s->group_nccl = calloc(c->ngroups ? c->ngroups : 1, sizeof *s->group_nccl);
    if (!s->group_nccl) return plc_backend_fail(be, "out of memory");
    if (!c->use_mpi || c->size == 1) return 0;
    /* every rank walks the groups in the same order, as MPI_Comm_split did */
    for (uint32_t g = 0; g < c->ngroups; g++) {
        const plc_comm_group *cg = &c->groups[g];
        if (!cg->member || cg->size == 1) continue;
        if (nccl_init(be, cg->mpi, cg->size, cg->rank, &s->group_nccl[g])) return -1;
    }
    for (int d = 0; d < 2; d++) {
        CUDA_TRY(be, cudaStreamCreateWithFlags(&s->p2p_stream[d], cudaStreamNonBlocking));
        if (nccl_init(be, MPI_COMM_WORLD, c->size, c->rank, &s->p2p[d])) return -1;
    }
    return 0;
}

plc_backend *plc_backend_cuda_create(plc_comm *comm, int threads, const plc_plan *plan, char *err,
                                     size_t errlen)
{
    plc_backend *be = calloc(1, sizeof *be);
    cuda_state *s = calloc(1, sizeof *s);
    if (!be || !s) {
        free(be);
        free(s);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    be->ops = &cuda_ops;
    be->comm = comm;
    be->threads = threads;
    be->impl = s;
    /* the host's share of the work (generating the weights) on the rank's
     * share of the node's cores, as the CPU backend's kernels */
    if (threads > 0) omp_set_num_threads(threads);
    (void)plan; /* every plan the executor checks runs: fp32 or bf16 storage */
    if (cuda_setup(be)) {
        snprintf(err, errlen, "%s", be->error);
        cuda_destroy(be);
        return NULL;
    }
    return be;
}

#endif /* PLC_HAVE_CUDA */
