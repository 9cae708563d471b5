/* backend.h: what a compute backend (CPU, CUDA) provides to the executor.
 *
 * The executor (runtime/executor.c) is the one code path for every backend:
 * it loads the plan, places buffers, resolves every instruction's operands
 * to pointers inside the arena and calls the backend through this vtable.
 * A backend owns only "how": where the arena lives (host or device memory),
 * the kernels, and how collectives move bytes (MPI or NCCL).
 *
 * Pointers handed to the ops point into the backend's own arena (device
 * memory for CUDA). Every op returns 0 on success, or non-zero after writing
 * a message with plc_backend_fail(); the executor adds the instruction's
 * location. Ops run in issue order on the backend's compute stream; the
 * executor calls synchronize() before it reads results on the host.
 *
 * Precision (docs/runtime.md, "Precision"): a bf16 plan stores parameters
 * and activations as bf16 and keeps gradients, optimizer state, master
 * weights and statistics fp32. The CUDA kernels read and write bf16
 * directly; the CPU backend emulates them exactly (backend_cpu_bf16.h).
 */
#ifndef PLC_RUNTIME_BACKEND_H
#define PLC_RUNTIME_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "plc/plan.h"
#include "runtime/comm.h"

typedef struct plc_backend plc_backend;

typedef struct plc_backend_ops {
    const char *name;
    void (*destroy)(plc_backend *be);

    /* memory: one arena per rank (zero-filled and touched, so that the
     * process's measured peak includes it), small auxiliary allocations
     * (positions), and copies between host and backend memory */
    void *(*arena_alloc)(plc_backend *be, uint64_t bytes);
    void (*arena_free)(plc_backend *be, void *arena);
    void *(*aux_alloc)(plc_backend *be, size_t bytes);
    void (*aux_free)(plc_backend *be, void *p);
    int (*upload)(plc_backend *be, void *dst, const void *host_src, size_t bytes);
    int (*download)(plc_backend *be, void *host_dst, const void *src, size_t bytes);
    int (*synchronize)(plc_backend *be);
    /* bytes in use on the rank's device (its whole memory less what is
     * free: the context and the libraries' allocations too); NULL where the
     * arena is host memory, whose use the process's resident set shows */
    int (*device_memory)(plc_backend *be, double *in_use);

    /* compute: the contracts are plan.h's table and kernels/kernels.h.
     * Storage types follow kernels/cuda/kernels_cuda.h: the tensors typed
     * void * are stored as `dt` (PLC_F32 or PLC_BF16, the dtype of the
     * instruction's buffers, which the executor checked are alike); the
     * tensors typed float * (statistics, weight gradients of norms and
     * embeddings) are always fp32. Compute is fp32 either way. */
    int (*zero)(plc_backend *be, void *dst, size_t bytes);
    int (*copy)(plc_backend *be, void *dst, const void *src, size_t bytes);
    int (*embed_fwd)(plc_backend *be, void *out, const int32_t *tokens, const void *table,
                     plc_dtype dt, int64_t rows, int64_t dim, int64_t vocab_start,
                     int64_t vocab_local);
    int (*embed_bwd)(plc_backend *be, float *dtable, const void *dout, plc_dtype dt,
                     const int32_t *tokens, int64_t rows, int64_t dim, int64_t vocab_start,
                     int64_t vocab_local);
    int (*rmsnorm_fwd)(plc_backend *be, void *out, float *rstd, const void *in,
                       const void *weight, plc_dtype dt, int64_t rows, int64_t dim, float eps);
    int (*rmsnorm_bwd)(plc_backend *be, void *din, float *dweight, const void *dout,
                       const void *in, const void *weight, const float *rstd, plc_dtype dt,
                       int64_t rows, int64_t dim);
    /* C is stored as c_dt, A and B as ab_dt (bf16 x bf16 -> fp32 C: weight gradients) */
    int (*matmul)(plc_backend *be, void *C, plc_dtype c_dt, const void *A, const void *B,
                  plc_dtype ab_dt, int64_t M, int64_t N, int64_t K, int trans_a, int trans_b,
                  float beta);
    int (*rope_fwd)(plc_backend *be, void *out, const void *in, plc_dtype dt,
                    const int32_t *positions, int64_t B, int64_t T, int64_t heads, int64_t hd,
                    float theta);
    int (*rope_bwd)(plc_backend *be, void *din, const void *dout, plc_dtype dt,
                    const int32_t *positions, int64_t B, int64_t T, int64_t heads, int64_t hd,
                    float theta);
    /* flash: stats is lse [B,H,Tq]; otherwise probs [B,H,Tq,Tk] */
    int (*attn_fwd)(plc_backend *be, int flash, void *out, float *stats, const void *q,
                    const void *k, const void *v, plc_dtype dt, const int32_t *q_pos,
                    const int32_t *k_pos, int64_t B, int64_t Tq, int64_t Tk, int64_t H,
                    int64_t Hkv, int64_t hd);
    int (*attn_bwd)(plc_backend *be, int flash, void *dq, void *dk, void *dv, const void *dout,
                    const void *q, const void *k, const void *v, const void *out,
                    const float *stats, plc_dtype dt, const int32_t *q_pos, const int32_t *k_pos,
                    int64_t B, int64_t Tq, int64_t Tk, int64_t H, int64_t Hkv, int64_t hd);
    int (*swiglu_fwd)(plc_backend *be, void *out, const void *gate, const void *up, plc_dtype dt,
                      int64_t n);
    int (*swiglu_bwd)(plc_backend *be, void *dgate, void *dup, const void *dout,
                      const void *gate, const void *up, plc_dtype dt, int64_t n);
    /* the GPT block: LayerNorm (mean, rstd, dweight, dbias fp32; din,
     * dweight, dbias may be NULL), GELU, a linear layer's bias (dbias fp32),
     * learned positions (rows of x at positions[r], dtable fp32) */
    int (*layernorm_fwd)(plc_backend *be, void *out, float *mean, float *rstd, const void *in,
                         const void *weight, const void *bias, plc_dtype dt, int64_t rows,
                         int64_t dim, float eps);
    int (*layernorm_bwd)(plc_backend *be, void *din, float *dweight, float *dbias,
                         const void *dout, const void *in, const void *weight, const float *mean,
                         const float *rstd, plc_dtype dt, int64_t rows, int64_t dim);
    int (*gelu_fwd)(plc_backend *be, void *out, const void *in, plc_dtype dt, int64_t n);
    int (*gelu_bwd)(plc_backend *be, void *din, const void *dout, const void *in, plc_dtype dt,
                    int64_t n);
    int (*bias_add)(plc_backend *be, void *x, const void *bias, plc_dtype dt, int64_t rows,
                    int64_t cols);
    int (*bias_bwd)(plc_backend *be, float *dbias, const void *dout, plc_dtype dt, int64_t rows,
                    int64_t cols);
    int (*pos_fwd)(plc_backend *be, void *x, const void *table, plc_dtype dt,
                   const int32_t *positions, int64_t rows, int64_t dim, int64_t table_rows);
    int (*pos_bwd)(plc_backend *be, float *dtable, const void *dout, plc_dtype dt,
                   const int32_t *positions, int64_t rows, int64_t dim);
    int (*add)(plc_backend *be, void *out, const void *a, const void *b, plc_dtype dt, int64_t n);
    int (*accumulate)(plc_backend *be, void *y, const void *x, plc_dtype dt, int64_t n);
    int (*scale)(plc_backend *be, void *x, float s, plc_dtype dt, int64_t n);
    int (*xent_max)(plc_backend *be, float *row_max, const void *logits, plc_dtype dt,
                    int64_t rows, int64_t vocab_local);
    int (*xent_sumexp)(plc_backend *be, float *row_sum, float *target_logit, const void *logits,
                       plc_dtype dt, const int32_t *targets, const float *row_max, int64_t rows,
                       int64_t vocab_local, int64_t vocab_start);
    /* dlogits written (may alias logits), *loss_sum += sum of the rows' losses */
    int (*xent_loss)(plc_backend *be, void *dlogits, double *loss_sum, const void *logits,
                     plc_dtype dt, const int32_t *targets, const float *row_max,
                     const float *row_sum, const float *target_logit, int64_t rows,
                     int64_t vocab_local, int64_t vocab_start, float grad_scale);
    /* gradients are fp32 in every plan */
    int (*sumsq)(plc_backend *be, double *acc, const float *x, int64_t n);
    /* *scale = min(1, max_norm / sqrt(*sumsq)), or 1 when max_norm is 0 */
    int (*clip_scale)(plc_backend *be, float *scale, const double *sumsq, double max_norm);
    /* master (fp32, may be NULL) is updated and param re-cast from it when given */
    int (*adamw)(plc_backend *be, void *param, plc_dtype param_dtype, const void *grad,
                 plc_dtype grad_dtype, float *m, float *v, const float *scale, float *master,
                 int64_t n, double lr, double beta1, double beta2, double eps,
                 double weight_decay, int64_t t);
    int (*cast)(plc_backend *be, void *dst, plc_dtype dst_dtype, const void *src,
                plc_dtype src_dtype, int64_t n);

    /* mixture of experts (kernels/kernels.h's MoE section; fp32 only). NULL
     * in a backend that does not run them: the executor refuses the plan.
     * moe_route adds the copies it dropped to *dropped (a host counter). */
    int (*moe_route)(plc_backend *be, float *scores, int32_t *expert, int32_t *pos, float *weight,
                     int32_t *counts, const float *logits, int64_t rows, int64_t E, int64_t k,
                     int router, int64_t capacity, float scale, int64_t *dropped);
    int (*moe_route_bwd)(plc_backend *be, float *dlogits, const float *dweight, const float *scores,
                         const int32_t *expert, const float *choices, int64_t rows, int64_t E, int64_t k,
                         int router, int64_t seq_rows, int64_t seq_full, float scale, float aux);
    int (*moe_seq_counts)(plc_backend *be, float *choices, const int32_t *expert, int64_t rows, int64_t E,
                          int64_t k, int64_t seq_rows);
    int (*moe_permute)(plc_backend *be, float *xp, const float *x, const int32_t *pos, int64_t rows,
                       int64_t h, int64_t k, int64_t prow);
    int (*moe_permute_bwd)(plc_backend *be, float *dx, const float *dxp, const int32_t *pos,
                           int64_t rows, int64_t h, int64_t k);
    int (*moe_unpermute)(plc_backend *be, float *out, const float *y, const int32_t *pos,
                         const float *weight, int64_t rows, int64_t h, int64_t k);
    int (*moe_unpermute_bwd)(plc_backend *be, float *dy, float *dweight, const float *dout,
                             const float *y, const int32_t *pos, const float *weight, int64_t rows,
                             int64_t h, int64_t k, int64_t prow);
    int (*moe_matmul)(plc_backend *be, float *C, const float *A, const float *W, const int32_t *counts,
                      int64_t E, int64_t prow, int64_t K, int64_t N, int transw, float beta);
    int (*moe_matmul_dw)(plc_backend *be, float *dW, const float *A, const float *B,
                         const int32_t *counts, int64_t E, int64_t K, int64_t N);

    /* communication: start the call as request `slot` (an instruction index);
     * wait() completes it (no-op for a free slot) */
    int (*comm_start)(plc_backend *be, const plc_comm_call *call, int slot);
    int (*comm_wait)(plc_backend *be, int slot);

    /* before each step (NULL where not needed): the step's learning rate
     * and Adam's 1-based step count, which every ADAMW of the step then
     * passes too; a backend that keeps them in device memory writes them
     * here, before anything of the step runs, so that a recorded graph
     * reads the current step's values */
    int (*set_step)(plc_backend *be, const plc_train *train, double lr, int64_t t);

    /* step graphs (runtime/step_graph.h; NULL where the backend has none):
     * between graph_begin and graph_end the ops are recorded, not run;
     * graph_end ends the recording either way and gives the graph, ready to
     * launch, or fails; graph_launch runs it on the compute stream */
    int (*graph_begin)(plc_backend *be);
    int (*graph_end)(plc_backend *be, void **graph);
    int (*graph_launch)(plc_backend *be, void *graph);
    void (*graph_free)(plc_backend *be, void *graph);
} plc_backend_ops;

struct plc_backend {
    const plc_backend_ops *ops;
    plc_comm *comm;    /* groups and MPI (both backends use MPI for setup) */
    int threads;       /* CPU threads (OpenMP), 0 = library default */
    char error[512];   /* the last failure's message */
    void *impl;        /* backend-private state */
    /* ZERO folding (docs/runtime.md): a backend that sets folds_zero lets
     * the executor skip a ZERO whose buffer the next op that touches it
     * writes whole. For an op that adds into an output (RMSNORM_BWD's din,
     * ROPE_BWD, SWIGLU_BWD), the executor sets bit k of fresh
     * (output k, in the op's operand order) for that call: the op writes
     * 0 + its sum there instead of adding. fresh is 0 between calls. */
    int folds_zero;
    unsigned fresh;
    /* the backend's graphs may hold its transfers (NCCL >= 2.9 on CUDA) */
    int graph_comm;
};

/* records a failure message; returns -1 for `return plc_backend_fail(...)` */
int plc_backend_fail(plc_backend *be, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* creates the named backend ("cpu" or "cuda") for a plan on this rank; NULL
 * with a message in err on failure (unknown name, no GPU, CUDA not built) */
plc_backend *plc_backend_create(const char *name, plc_comm *comm, int threads,
                                const plc_plan *plan, char *err, size_t errlen);

/* plan may be NULL (no bf16 staging then); with a plan, the CPU backend sizes
 * its bf16 staging for the largest instruction once, here */
plc_backend *plc_backend_cpu_create(plc_comm *comm, int threads, const plc_plan *plan, char *err,
                                    size_t errlen);
plc_backend *plc_backend_cuda_create(plc_comm *comm, int threads, const plc_plan *plan,
                                     char *err, size_t errlen);

#endif
