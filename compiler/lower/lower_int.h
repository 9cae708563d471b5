/* compiler/lower/lower_int.h: the lower stage's internal interface, for its own files
 * (and unit tests): the public header plus what only the stage uses. */
#ifndef PLC_COMPILER_LOWER_INT_H
#define PLC_COMPILER_LOWER_INT_H

#include "compiler/lower/lower.h"

/* ---- lower_int.h ----------------------------------------------------------- */
/* the lowering's internal state, shared by lower*.c.
 *
 * lower.c          driver: checks, groups, one program per stage, assembly
 * lower_emit.c     program builder: buffers and instructions
 * lower_schedule.c pipeline placement and the per-stage unit order (the
 *                  solver's pipeline_order.c, declared in solver.h)
 * lower_layer.c    embedding, transformer layer, head: forward, backward, recompute
 * lower_comm.c     tp/sp/cp collectives, gradient sync (dp, ZeRO), send/recv
 * lower_optim.c    the step epilogue: norm, clipping, AdamW, parameter gathers
 * lower_unit.c     plrun's figures of a layer and the head, from a lowered template
 * memplan*.c       the static memory plan (lower.h; its strategies: memplan_int.h)
 */

#include <stdbool.h>
#include <stdint.h>

#include "common/tensors.h"
#include "compiler/solver/solver.h"

/* ---- program builder ------------------------------------------------------ */
typedef struct lw_prog {
    plc_arena *a;
    plc_buffer *bufs;
    bool *persistent; /* placed in the persistent region (not by lifetime) */
    int32_t *alias_first, *alias_last; /* alias buffers: span of member buffers, else -1 */
    uint32_t nbufs, capb;
    plc_instr *ins;
    uint32_t nins, capi;
    /* source location stamped on new instructions */
    plc_phase phase;
    int32_t layer, micro;
} lw_prog;

int32_t lw_buf(lw_prog *P, plc_buf_kind kind, plc_dtype dt, int64_t rows, int64_t cols, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
/* a buffer holding at least `elems` elements (padding for flat shards) */
int32_t lw_buf_padded(lw_prog *P, plc_buf_kind kind, plc_dtype dt, int64_t rows, int64_t cols, int64_t elems,
                      const char *fmt, ...) __attribute__((format(printf, 7, 8)));
/* appends an instruction; returns its index */
int32_t lw_emit(lw_prog *P, plc_op op, plc_stream s, const int32_t *bufs, int nbufs, const int64_t *args,
                int nargs, double f0);
#define LW_B(...) ((const int32_t[]){__VA_ARGS__}), (int)(sizeof((const int32_t[]){__VA_ARGS__}) / sizeof(int32_t))
#define LW_A(...) ((const int64_t[]){__VA_ARGS__}), (int)(sizeof((const int64_t[]){__VA_ARGS__}) / sizeof(int64_t))
#define LW_NOARGS NULL, 0
plc_instr *lw_last(lw_prog *P);
/* hands the built arrays to the arena (out->buffers, out->instrs) and frees the rest */
void lw_prog_finish(lw_prog *P, plc_program *out);
void lw_prog_free(lw_prog *P);
/* a buffer of the current layer and micro-batch (model of `layers`
 * layers), named <where>.<what>: "L3.m1.q", "embed.m0.embed", "head.m2.logits" */
int32_t lw_buf_here(lw_prog *P, int64_t layers, plc_buf_kind kind, plc_dtype dt, int64_t rows, int64_t cols,
                    const char *what);
void lw_where(lw_prog *P, plc_phase ph, int32_t layer, int32_t micro);

/* ---- pipeline schedule -------------------------------------------------------- */
typedef plc_pipe_unit lw_unit;

typedef struct lw_sched {
    int64_t nchunks;
    int64_t *chunk_lo, *chunk_hi; /* layers [lo, hi) of each chunk */
    int32_t *owner;               /* pipeline rank of each chunk */
    lw_unit **order;              /* [pp] units of each stage, in execution order */
    int64_t *norder;
    plc_pipe_shape sh;            /* the schedule's shape, for its visits (solver.h) */
} lw_sched;

int lw_schedule_build(const plc_layout *l, int64_t layers, int64_t micro_batches, plc_arena *a, lw_sched *out,
                      char *err, size_t errlen);

/* ---- per tensor state on the stage being lowered -------------------------- */
typedef struct lw_tensor {
    bool present;
    plc_tensor_info info;
    int64_t rows, cols; /* tp-local block */
    int64_t n;          /* rows * cols */
    int64_t chunk;      /* ZeRO flat shard size: ceil(n / nz) */
    bool tp_sharded;    /* distinct per tp rank (else replicated over tp) */
    plc_shard_kind shard;
    int32_t param;       /* PARAM: the tp-local block (ZeRO 3: its flat shard) */
    int32_t grad;        /* GRAD accumulator: the block (ZeRO <= 1) or the shard (ZeRO >= 2) */
    int32_t master, m, v;
    int32_t gathered;    /* ZeRO 3: the gathered block while it is in use, else -1 */
    int32_t gather_op;   /* instruction that gathered it */
    int32_t full_grad;   /* ZeRO 2/3: this micro-batch run's block gradient, else -1 */
    int32_t grad_shard;  /* ZeRO 1: reduce-scattered shard, else -1 */
    int32_t sync_op;     /* comm instruction completing this tensor's gradient, -1 none */
} lw_tensor;

/* activations of one (layer, micro-batch) kept from forward to backward */
typedef struct lw_act {
    int32_t x_in, rstd1, hn, q, k, v, att, stats, x_mid, rstd2, hn2, g, u, s;
    int32_t mean1, mean2; /* LayerNorm (GPT); g is then fc + bias, s its GELU */
} lw_act;

/* A weight-gradient product of a layer's backward, recorded by its B half
 * (lw_layer_bwd_b) for its W half (lw_layer_bwd_w): the gradient of
 * `tensor` += x^T dy ([M, K]^T [K, N] -> [M, N]), or, with bias set, the
 * column sums of dy [rows = K, cols = N] (GPT's biases). */
typedef struct lw_wop {
    bool bias;
    int64_t tensor;
    int32_t x, dy;
    int64_t M, N, K;
} lw_wop;
#define LW_LAYER_WOPS 16 /* the most of one layer: GPT's 12 (6 weights, 6 biases) */

/* A template's lowering (lw_lower_template): where each visit of the stage
 * begins and ends, and which buffers are persistent. start[v] is the
 * instruction count when visit v enters its key (lw_switch_layer), at[v][0]
 * when its own instructions end (before lw_visit_end's gradient
 * reductions), at[v][1] when its lw_visit_end is done. */
#define LW_TEMPLATE_VISITS 8
typedef struct lw_template {
    int32_t start[LW_TEMPLATE_VISITS];
    bool began[LW_TEMPLATE_VISITS];
    int32_t at[LW_TEMPLATE_VISITS][2];
    int32_t visits;
    bool *persistent; /* per buffer, malloc'd: the caller frees it */
} lw_template;

/* deferred ACCUMULATE of a reduce-scattered gradient (ZeRO 2/3) */
typedef struct lw_pending_acc {
    int32_t tensor, src, op;
    int32_t visit; /* the stage's visit it was issued at the end of */
} lw_pending_acc;

typedef struct lw_ctx {
    const plc_job *job;
    plc_model m;
    plc_layout L;
    plc_arena *a;
    char *err;
    size_t errlen;

    /* derived sizes */
    int64_t M;              /* micro-batches per step per data-parallel rank */
    int64_t mb, S, Sl;      /* micro_batch, seq_len, local seq_len (S / cp) */
    int64_t R, Rs;          /* rows of a micro-batch; rows of the residual stream (R / tp with sp) */
    int64_t h, hd, Hl, KVl, qd, kvd, Fl, V, Vl;
    int64_t nz;             /* ZeRO shards: dp * cp, or 1 when zero is 0 */
    int zero;               /* effective ZeRO stage (0 when dp * cp == 1) */
    bool sp, vocab_sharded;
    plc_dtype act_dt, param_dt, grad_dt;
    double loss_scale;      /* 1 / (global_batch * seq_len) */

    /* groups: ids in the plan, -1 when the group has one member */
    plc_group groups[16];
    uint32_t ngroups;
    int32_t g_tp, g_cp, g_dpcp, g_embed;

    lw_sched sched;

    /* the stage being lowered */
    int64_t stage;
    lw_prog *P;
    int64_t ntensors;
    lw_tensor *T;
    lw_act *acts;          /* [layers][M], valid for this stage's layers */
    int32_t *x_out;        /* [chunks][M]: output of a forward chunk kept for the next chunk */
    int32_t *dx_in;        /* [chunks][M]: input gradient of a backward chunk for the previous chunk */
    int32_t *tokens, *targets; /* [M] data buffers of this stage */
    int32_t *head_dx;      /* [M] gradient into the final norm output (head backward done early) */
    int32_t *head_x;       /* [M] input of the final norm */
    int32_t *head_rstd;    /* [M] */
    int32_t *head_mean;    /* [M] LayerNorm (GPT) */
    bool gpt, learned_pos; /* the GPT block; a learned position table */
    int32_t *last_bwd_micro; /* [chunks] micro-batch of the stage's last backward of each chunk */
    int32_t loss_buf, gnorm_buf;
    int32_t *bucket;       /* [layers + 2]: gradient bucket of key k-1 (-1 embed .. L head), -1 none */
    int32_t cur_key;       /* layer whose gathered weights / gradient blocks are live (-2 none) */
    lw_pending_acc *pend;  /* ZeRO 2/3: reduce-scatters whose accumulation is deferred */
    int32_t npend, cappend;
    int64_t unit_k, visit_i; /* the unit being lowered (its index in the order), its visit */
    int32_t visit;         /* visits the stage has ended */
    bool visit_bad;        /* a visit not the pipeline order's, or a block left open (a lowering bug) */
    int32_t *outstanding;  /* comm instructions not yet waited for */
    int32_t nout, capout;
    int32_t pre_buf, pre_op;   /* RECV posted for the next unit, -1 none */
    int64_t send_lag;         /* a unit's sends are waited for this many units later (plc_pipe_send_lag) */
    const bool *place;        /* the stages whose memory is planned (NULL: all; else the plan is neither validated nor checked, only run to its end) */
    int32_t *unit_send;       /* each unit's SEND (its output or input gradient), -1 none */
    lw_template *tpl;         /* a template's lowering: its visit marks, else NULL */
    lw_wop *wops;             /* [layers][M][LW_LAYER_WOPS]: a split B's weight-gradient products, for its W */
    int32_t *nwops;           /* [layers][M] */
    bool defer_w;             /* the backward being lowered is split: its W products wait for the W unit */
} lw_ctx;

/* lower.c: lowers job + layout's template, one layer on one stage for one
 * micro-batch (pp = 1, no layout rules checked), into *out, without a memory
 * plan, marking its visits in *t: 0 the embedding, 1 the layer, 2 the head's
 * forward and loss, 3 the head's backward, 4 the layer's backward, 5 the
 * embedding's backward. Returns 0, or -1 with a message in err. */
int lw_lower_template(const plc_job *job, const plc_layout *l, plc_arena *a, lw_template *t, plc_program *out,
                      char *err, size_t errlen);

/* lower_layer.c */
int32_t lw_embed_fwd(lw_ctx *c, int64_t m);
void lw_embed_bwd(lw_ctx *c, int64_t m, int32_t dx0);
int32_t lw_layer_fwd(lw_ctx *c, int64_t l, int64_t m, int32_t x_in, bool recompute);
/* a layer's backward: its B half (input gradients; the norms' weight
 * gradients, which their fused kernel makes with the input gradient) and
 * its W half (weight and bias gradients). With c->defer_w unset the B half
 * emits each W product as soon as its inputs exist (a whole backward, B and
 * W at once); set, it records them and lw_layer_bwd_w emits them later. */
int32_t lw_layer_bwd_b(lw_ctx *c, int64_t l, int64_t m, int32_t dx_out);
void lw_layer_bwd_w(lw_ctx *c, int64_t l, int64_t m);
int32_t lw_layer_bwd(lw_ctx *c, int64_t l, int64_t m, int32_t dx_out); /* whole: B and W at once */
void lw_head_fwd_bwd(lw_ctx *c, int64_t m, int32_t x);
int32_t lw_head_bwd(lw_ctx *c, int64_t m);

/* lower_comm.c */
int32_t lw_group(lw_ctx *c, uint32_t dims, uint32_t flags, const char *name);
int32_t lw_tp_allgather_rows(lw_ctx *c, int32_t src, int64_t cols, const char *what); /* sp: [Rs] -> [R] */
int32_t lw_tp_reduce_rows(lw_ctx *c, int32_t partial, int64_t cols, const char *what); /* row-parallel out */
int32_t lw_weight(lw_ctx *c, int64_t tensor);       /* the block to compute with (ZeRO 3: gathers) */
int32_t lw_weight_grad(lw_ctx *c, int64_t tensor);  /* the block gradient to accumulate into */
void lw_switch_layer(lw_ctx *c, int32_t key);       /* ends the live weights of other layers */
void lw_visit_end(lw_ctx *c);                       /* ZeRO 2/3: the gradient blocks' reduce-scatter */
void lw_flush_pending(lw_ctx *c);                   /* emits deferred ZeRO 2/3 accumulations */
void lw_grad_sync(lw_ctx *c, int32_t bucket, const int64_t *tensors, int n); /* after a last backward */
void lw_track(lw_ctx *c, int32_t comm_instr);       /* a comm op to wait for before the epilogue */
void lw_wait_all(lw_ctx *c);

/* lower_optim.c */
void lw_step_begin(lw_ctx *c);  /* zero accumulators and the loss */
void lw_epilogue(lw_ctx *c);    /* norms, clipping, AdamW, parameter all-gathers */
#define LW_KEY_TENSORS PLC_MAX_LAYER_TENSORS /* the most tensors of one key */
int lw_key_tensors(const lw_ctx *c, int32_t key, int64_t out[LW_KEY_TENSORS]); /* tensors of a layer key (-1 embed, L head) here */
void lw_setup_tensors(lw_ctx *c); /* persistent buffers of the stage */

#endif
