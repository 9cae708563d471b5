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
 * lower_moe.c      a mixture-of-experts layer's feed-forward: router, top-k,
 *                  permutation, expert and shared-expert FFNs, combine
 * lower_comm.c     tp/sp/cp collectives, gradient sync (dp, ZeRO), send/recv
 * lower_optim.c    the step epilogue: norm, clipping, AdamW, parameter gathers
 * lower_unit.c     plrun's figures of a layer and the head, from a lowered template
 * memplan*.c       the static memory plan (lower.h; its strategies: the
 *                  last section below)
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

/* an MoE layer's activations (lower_moe.c): the router's scores [R, E],
 * each token copy's expert, permuted row and weight [R, k], the rows kept
 * per expert [E]; the permuted rows xp [P, h], the experts' gate, up,
 * SwiGLU [P, Fel] and output y [P, h] */
typedef struct lw_moe_act {
    int32_t scores, expert, pos, weight, counts, xp, g, u, s, y;
} lw_moe_act;

/* activations of one (layer, micro-batch) kept from forward to backward */
typedef struct lw_act {
    int32_t x_in, rstd1, hn, q, k, v, att, stats, x_mid, rstd2, hn2, g, u, s;
    int32_t mean1, mean2; /* LayerNorm (GPT); g is then fc + bias, s its GELU */
    lw_moe_act moe;       /* an MoE layer's; g, u, s are then its shared experts' */
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
    /* mixture of experts (lower_moe.c): experts, top-k, the expert and
     * shared FFN widths per tp rank, an expert's capacity in rows and the
     * rows of the permuted buffers (the bound: R k dropless) */
    int64_t E, topk, Fel, Fsl, moe_cap, moe_rows;

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

/* the layer lowerings' emitters (lower_layer.c, lower_moe.c): an
 * activation or temporary buffer of the current key, a zero fill, and
 * C[M,N] = op(A) op(B) + beta C on the compute stream */
static inline int32_t lw_act_buf(lw_ctx *c, plc_dtype dt, int64_t rows, int64_t cols, const char *what)
{
    return lw_buf_here(c->P, c->m.layers, PLC_BUF_ACT, dt, rows, cols, what);
}

static inline int32_t lw_tmp_buf(lw_ctx *c, plc_dtype dt, int64_t rows, int64_t cols, const char *what)
{
    return lw_buf_here(c->P, c->m.layers, PLC_BUF_TEMP, dt, rows, cols, what);
}

static inline void lw_zero(lw_ctx *c, int32_t b) { lw_emit(c->P, PLC_OP_ZERO, PLC_STREAM_COMPUTE, LW_B(b), LW_NOARGS, 0.0); }

static inline void lw_matmul(lw_ctx *c, int32_t C, int32_t Am, int32_t Bm, int64_t M, int64_t N, int64_t K, int ta,
                             int tb, double beta)
{
    lw_emit(c->P, PLC_OP_MATMUL, PLC_STREAM_COMPUTE, LW_B(C, Am, Bm), LW_A(M, N, K, ta, tb), beta);
}

/* the lowering's error: the message into c->err; returns -1 (lower_emit.c) */
int lw_fail(lw_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

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

/* lower_moe.c: lw_moe_sizes checks what the lowering runs of model.moe
 * and sets the sizes above (0, or -1 with a message in c->err); the
 * forward returns the feed-forward's output before the tp reduction (-1
 * in a recompute, which stops once the backward's activations are back);
 * the backward returns d(hn2) after it */
int lw_moe_sizes(lw_ctx *c);
int32_t lw_moe_fwd(lw_ctx *c, int64_t l, lw_act *a, bool recompute);
int32_t lw_moe_bwd(lw_ctx *c, int64_t l, lw_act *a, int32_t dd);

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

/* ---- memplan*.c ------------------------------------------------------------
 * the memory plan's internals, for the memplan*.c files only: the placement
 * strategies and what they share.
 *
 * memplan.c         the entry point (persistent region, aliases, lifetimes)
 *                   and the table of passes: which strategy runs in which
 *                   order, on which programs, and how much work it may spend
 * memplan_live.c    measures of a program: live sums, the bound no placement
 *                   beats, the largest live sum over a range, the pairs of
 *                   overlapping lifetimes (the work of a greedy placement)
 * memplan_gap.c     the placed buffers indexed by time, and the placement of
 *                   items in order, each into the tightest or lowest gap
 * memplan_greedy.c  the greedy orders (comparisons and the table of 17 orders)
 * memplan_online.c  online best-fit, on time and on mirrored time
 * memplan_skyline.c the skyline (best-fit strip packing)
 * memplan_slots.c   each micro-batch's stash in a ring slot
 * memplan_search.c  jostle and ruin-and-recreate: searches around the
 *                   placement the buffers hold now
 *
 * Every strategy places the non-persistent buffers with a lifetime at
 * base + an offset, each size rounded up to PLC_PLAN_ALIGN, and says the
 * region it needs (*peak) and the first use of the buffer that sets it
 * (*peak_instr). Each returns -1 when out of memory. */
#include <stdbool.h>
#include <stdint.h>


static inline uint64_t mp_align_up(uint64_t x) { return (x + PLC_PLAN_ALIGN - 1) / PLC_PLAN_ALIGN * PLC_PLAN_ALIGN; }

/* A program as placement sees it: the buffers' lifetimes
 * (plc_buffer_lifetimes), which are persistent, and where the dynamic
 * region starts. */
typedef struct mp_prog {
    plc_program *prog;
    const int32_t *first, *last;
    const bool *persistent;
    uint64_t base;
} mp_prog;

/* a buffer to place: its lifetime, size and (once placed) offset */
typedef struct mp_item {
    int32_t buf, first, last;
    uint64_t size, off;
    int64_t k1, k2; /* an order's keys, ascending, before the size and lifetime */
} mp_item;

/* ---- memplan_live.c -------------------------------------------------------- */
/* The live sum at each instruction into d[0, ninstrs); d has ninstrs + 1
 * zeroed entries. */
void mp_live_sums(const mp_prog *G, uint64_t *d);
/* the largest live sum (0 when out of memory) */
uint64_t mp_live_bound(const mp_prog *G);
/* the pairs of buffers with overlapping lifetimes, roughly: the work of one
 * greedy placement (1e300 when out of memory) */
double mp_placement_work(const mp_prog *G);

/* The largest live sum over any range of instructions: a tree of maxima,
 * the live sum at instruction i at leaf n + i, each node the larger of its
 * two children. */
typedef struct mp_range_max {
    uint64_t *v; /* [2 * n + 1] */
    uint32_t n;
} mp_range_max;
int mp_range_max_init(mp_range_max *R, const mp_prog *G);
uint64_t mp_range_max_at(const mp_range_max *R, int32_t a, int32_t b); /* over instructions a..b */

/* ---- memplan_gap.c --------------------------------------------------------- */
/* Places the items in their order (those from npre on; the first npre stay
 * where they are), each at the gap that holds it (the tightest, or with
 * first_fit the lowest) among the items before it whose lifetimes overlap
 * its own, over ni instructions; *peak gets the region's size and
 * *peak_first the first use of the item that sets it. */
int mp_place_items(mp_item *it, uint32_t n, uint32_t npre, uint32_t ni, bool first_fit, uint64_t *peak,
                   int32_t *peak_first);

/* ---- memplan_greedy.c ------------------------------------------------------ */
int mp_cmp_size(const void *a, const void *b);  /* decreasing size, longer lifetime, id */
int mp_cmp_start(const void *a, const void *b); /* decreasing size, first use, id */
int mp_cmp_keys(const void *a, const void *b);  /* k1, k2, then as mp_cmp_size */

/* An order of placement: a comparison of items, for mp_cmp_keys the
 * lifetime from which a buffer counts as long-lived (those are placed
 * first, in order of first use, so that what is made once per micro-batch
 * stacks in time; the others after them, largest first), the fit, and the
 * direction of time (reversed: every lifetime mirrored, so that the order
 * of first use is that of last use from the end). */
typedef struct mp_order {
    int (*cmp)(const void *, const void *);
    int32_t long_life;
    bool first_fit; /* the lowest gap that holds the buffer, not the tightest */
    bool reversed;
    bool breadth; /* keys: the largest live sum over the lifetime, largest first, then last use, latest first */
} mp_order;

#define MP_NORDERS 17
extern const mp_order mp_orders[MP_NORDERS];
int mp_place_by_size(const mp_prog *G, mp_order ord, uint64_t *peak, uint32_t *peak_instr);

/* ---- memplan_online.c ------------------------------------------------------ */
int mp_place_online(const mp_prog *G, uint64_t *peak, uint32_t *peak_instr);
int mp_place_online_mirrored(const mp_prog *G, uint64_t *peak, uint32_t *peak_instr);

/* ---- memplan_skyline.c ----------------------------------------------------- */
/* keyed by size times lifetime to the power given */
int mp_place_skyline(const mp_prog *G, int power, uint64_t *peak, uint32_t *peak_instr);

/* ---- memplan_slots.c ------------------------------------------------------- */
/* how the long-lived buffers that share time with the stashes are packed
 * in a band below the ring slots */
typedef enum mp_band_order {
    MP_BAND_BY_FIRST_USE, /* what is made once per micro-batch stacks in time */
    MP_BAND_NONE,
    MP_BAND_BY_SIZE, /* largest first: tighter where the band holds many buffers of a few sizes (under
                      * ZeRO 2 and 3, each layer's gradient blocks, made once per micro-batch) */
} mp_band_order;
#define MP_BAND_ORDERS (MP_BAND_BY_SIZE + 1)
/* Returns 1 where the stashes do not form a ring (nothing placed). */
int mp_place_slots(const mp_prog *G, uint64_t ceiling, int32_t long_life, mp_band_order band, uint64_t *peak,
                   uint32_t *peak_instr);

/* ---- memplan_search.c ------------------------------------------------------ */
/* Both start from the placement the buffers hold now (region *peak) and
 * never grow it. */
int mp_jostle(const mp_prog *G, uint64_t *peak, uint32_t *peak_instr);
/* down toward bound, within work_budget pairs (work: the program's pairs) */
int mp_refine(const mp_prog *G, uint64_t bound, double work, double work_budget, uint64_t *peak,
              uint32_t *peak_instr);

#endif
