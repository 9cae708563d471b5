/* test_runtime_exec_dispatch.c: the executor on plans built by hand in memory:
 * buffer placement, flat dispatch, data loading, and the errors a wrong
 * program gets (with rank, instruction, op and location). */
#include <CUnit/CUnit.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/backend.h"
#include "runtime/comm.h"
#include "runtime/data.h"
#include "common/tensors.h"
#include "kernels/kernels.h"
#include "runtime/executor.h"
#include "runtime/init.h"
#include "runtime/shard.h"

/* a one-rank plan with room for a few buffers and instructions */
typedef struct hand_plan {
    plc_plan plan;
    plc_program prog;
    plc_buffer bufs[16];
    plc_instr ins[16];
    int32_t stage[1];
    plc_group group;
    plc_comm comm;
    plc_backend *be;
    plc_data *data;
    int no_fold; /* the backend folds no ZERO (backend.h) */
} hand_plan;

static void hp_init(hand_plan *h)
{
    memset(h, 0, sizeof *h);
    plc_plan *p = &h->plan;
    snprintf(p->model.name, sizeof p->model.name, "hand");
    p->model.layers = 1;
    p->model.hidden = 8;
    p->model.ffn_hidden = 16;
    p->model.heads = 2;
    p->model.kv_heads = 1;
    p->model.vocab = 16;
    p->model.seq_len = 4;
    p->model.norm_eps = 1e-5;
    p->model.rope_theta = 10000;
    p->train.global_batch = 2;
    p->train.precision = PLC_PREC_FP32;
    p->train.lr_peak = 1e-3;
    p->train.warmup_steps = 1;
    p->train.decay_steps = 10;
    p->train.steps = 10;
    p->train.seed = 7;
    p->train.beta1 = 0.9;
    p->train.beta2 = 0.999;
    p->train.eps = 1e-8;
    p->layout = (plc_layout){.dp = 1, .tp = 1, .pp = 1, .cp = 1, .vpp = 1, .micro_batch = 2};
    p->world_size = 1;
    h->group = (plc_group){PLC_DIM_DP, 0, "dp"};
    p->ngroups = 1;
    p->groups = &h->group;
    p->nprograms = 1;
    p->programs = &h->prog;
    p->stage_program = h->stage;
    h->prog.buffers = h->bufs;
    h->prog.instrs = h->ins;
    h->prog.loss_buf = -1;
    h->prog.gnorm_buf = -1;
}

/* adds a buffer of rows x cols elements at the next 64-byte offset */
static int32_t hp_buf(hand_plan *h, const char *name, plc_dtype t, int64_t rows, int64_t cols)
{
    plc_program *pr = &h->prog;
    plc_buffer *b = &pr->buffers[pr->nbuffers];
    memset(b, 0, sizeof *b);
    b->name = name;
    b->kind = PLC_BUF_TEMP;
    b->dtype = t;
    b->offset = pr->arena_bytes;
    b->rows = rows;
    b->cols = cols;
    b->bytes = (uint64_t)(rows * cols) * plc_dtype_size(t);
    b->tensor = -1;
    b->flat_shards = 1;
    pr->arena_bytes = (b->offset + b->bytes + 63) / 64 * 64;
    return (int32_t)pr->nbuffers++;
}

static plc_instr *hp_ins(hand_plan *h, plc_op op)
{
    plc_instr *in = &h->prog.instrs[h->prog.ninstrs++];
    memset(in, 0, sizeof *in);
    in->op = op;
    in->phase = PLC_PHASE_FORWARD;
    in->layer = -1;
    in->micro = -1;
    in->group = -1;
    in->peer = -1;
    in->wait = -1;
    for (int i = 0; i < PLC_INSTR_BUFS; i++) in->buf[i] = -1;
    return in;
}

static int hp_setup(hand_plan *h, plc_executor **x, char *err, size_t n)
{
    char e2[256];
    CU_ASSERT_FATAL(plc_comm_world_init(&h->comm, 0, NULL, e2, sizeof e2) == 0);
    CU_ASSERT_FATAL(plc_comm_setup(&h->comm, &h->plan, e2, sizeof e2) == 0);
    h->be = plc_backend_create("cpu", &h->comm, 1, &h->plan, e2, sizeof e2);
    CU_ASSERT_FATAL(h->be != NULL);
    if (h->no_fold) h->be->folds_zero = 0;
    CU_ASSERT_FATAL(plc_data_open_synthetic(&h->data, &h->plan.model, h->plan.train.seed, e2, sizeof e2) == 0);
    return plc_exec_create(x, &h->plan, &h->comm, h->be, h->data, err, n);
}

static void hp_free(hand_plan *h, plc_executor *x)
{
    plc_exec_destroy(x);
    h->be->ops->destroy(h->be);
    plc_data_close(h->data);
    plc_comm_finalize(&h->comm);
}

/* C = A B, then C += 1 * (C scaled by 2): every placement and op checked */
static void test_matmul_add_scale(void)
{
    hand_plan h;
    hp_init(&h);
    int32_t A = hp_buf(&h, "A", PLC_F32, 2, 3), B = hp_buf(&h, "B", PLC_F32, 3, 2);
    int32_t C = hp_buf(&h, "C", PLC_F32, 2, 2), D = hp_buf(&h, "D", PLC_F32, 2, 2);
    plc_instr *in = hp_ins(&h, PLC_OP_MATMUL);
    in->buf[0] = C; in->buf[1] = A; in->buf[2] = B;
    in->arg[0] = 2; in->arg[1] = 2; in->arg[2] = 3;
    in = hp_ins(&h, PLC_OP_COPY);
    in->buf[0] = D; in->buf[1] = C;
    in = hp_ins(&h, PLC_OP_SCALE);
    in->buf[0] = D; in->arg[0] = 4; in->farg[0] = 2.0;
    in = hp_ins(&h, PLC_OP_ADD);
    in->buf[0] = C; in->buf[1] = C; in->buf[2] = D; in->arg[0] = 4;

    plc_executor *x;
    char err[512];
    CU_ASSERT_FATAL(hp_setup(&h, &x, err, sizeof err) == 0);
    float a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {1, 0, 0, 1, 1, 1};
    memcpy(plc_exec_buffer(x, A), a, sizeof a);
    memcpy(plc_exec_buffer(x, B), b, sizeof b);
    /* buffers sit at their planned offsets in one arena */
    CU_ASSERT_EQUAL((char *)plc_exec_buffer(x, B) - (char *)plc_exec_buffer(x, A), (long)h.bufs[B].offset);
    plc_step_stats st;
    CU_ASSERT_FATAL(plc_exec_step(x, &st, err, sizeof err) == 0);
    const float *c = plc_exec_buffer(x, C);
    /* A B = [[4, 5], [10, 11]]; C = 3 * A B */
    CU_ASSERT_DOUBLE_EQUAL(c[0], 12, 0);
    CU_ASSERT_DOUBLE_EQUAL(c[1], 15, 0);
    CU_ASSERT_DOUBLE_EQUAL(c[2], 30, 0);
    CU_ASSERT_DOUBLE_EQUAL(c[3], 33, 0);
    CU_ASSERT_EQUAL(plc_exec_next_step(x), 1);
    CU_ASSERT_TRUE(isnan(st.grad_norm)); /* this plan computes no norm */
    hp_free(&h, x);
}

/* ZERO, ZERO, SWIGLU_BWD into the two zeroed buffers (with reader, an ADD
 * reads the first of them in between); out receives dgate, dup and the
 * ADD's sum, after a step over outputs that held garbage */
static void fold_case(int fold, int reader, float out[3][8])
{
    hand_plan h;
    hp_init(&h);
    h.no_fold = !fold;
    int32_t dg = hp_buf(&h, "dg", PLC_F32, 1, 8), du = hp_buf(&h, "du", PLC_F32, 1, 8);
    int32_t dy = hp_buf(&h, "dy", PLC_F32, 1, 8), g = hp_buf(&h, "g", PLC_F32, 1, 8);
    int32_t u = hp_buf(&h, "u", PLC_F32, 1, 8), t = hp_buf(&h, "t", PLC_F32, 1, 8);
    hp_ins(&h, PLC_OP_ZERO)->buf[0] = dg;
    hp_ins(&h, PLC_OP_ZERO)->buf[0] = du;
    plc_instr *in;
    if (reader) {
        in = hp_ins(&h, PLC_OP_ADD);
        in->buf[0] = t; in->buf[1] = dg; in->buf[2] = dy; in->arg[0] = 8;
    }
    in = hp_ins(&h, PLC_OP_SWIGLU_BWD);
    in->buf[0] = dg; in->buf[1] = du; in->buf[2] = dy; in->buf[3] = g; in->buf[4] = u; in->arg[0] = 8;
    plc_executor *x;
    char err[512];
    CU_ASSERT_FATAL(hp_setup(&h, &x, err, sizeof err) == 0);
    /* dy = 0 against a negative up gives -0 products: a zeroed buffer adds
     * them into +0 */
    float vy[8] = {0, 0, 1, -1, 0.5f, 2, -3, 0}, vg[8] = {1, -1, 0.5f, 2, -2, 0, 3, -0.5f};
    float vu[8] = {-2, 3, 1, -1, 2, -0.5f, 1, -4}, junk[8];
    for (int i = 0; i < 8; i++) junk[i] = 1e30f;
    memcpy(plc_exec_buffer(x, dy), vy, sizeof vy);
    memcpy(plc_exec_buffer(x, g), vg, sizeof vg);
    memcpy(plc_exec_buffer(x, u), vu, sizeof vu);
    memcpy(plc_exec_buffer(x, dg), junk, sizeof junk);
    memcpy(plc_exec_buffer(x, du), junk, sizeof junk);
    memcpy(plc_exec_buffer(x, t), junk, sizeof junk);
    plc_step_stats st;
    CU_ASSERT_FATAL(plc_exec_step(x, &st, err, sizeof err) == 0);
    memcpy(out[0], plc_exec_buffer(x, dg), sizeof out[0]);
    memcpy(out[1], plc_exec_buffer(x, du), sizeof out[1]);
    memcpy(out[2], plc_exec_buffer(x, t), sizeof out[2]);
    hp_free(&h, x);
}

/* ZERO folding: the folded step gives the bits of the step with its ZEROs
 * run, +0 included; a ZERO whose buffer is read before the op still runs */
static void test_zero_folding(void)
{
    float folded[3][8], plain[3][8];
    fold_case(1, 0, folded);
    fold_case(0, 0, plain);
    CU_ASSERT_EQUAL(memcmp(folded[0], plain[0], sizeof folded[0]), 0);
    CU_ASSERT_EQUAL(memcmp(folded[1], plain[1], sizeof folded[1]), 0);
    CU_ASSERT_FALSE(signbit(folded[0][0])); /* 0 + (-0) */
    CU_ASSERT_TRUE(folded[0][2] != 0.0f && fabsf(folded[0][2]) < 1e3f);
    fold_case(1, 1, folded);
    fold_case(0, 1, plain);
    CU_ASSERT_EQUAL(memcmp(folded, plain, sizeof folded), 0);
    CU_ASSERT_DOUBLE_EQUAL(folded[2][3], -1.0, 0); /* t = 0 + dy: the ZERO ran */
}

/* DATA_LOAD gives the same tokens the data source does for the step */
static void test_data_load(void)
{
    hand_plan h;
    hp_init(&h);
    int32_t tok = hp_buf(&h, "tokens", PLC_I32, 1, 8), tgt = hp_buf(&h, "targets", PLC_I32, 1, 8);
    plc_instr *in = hp_ins(&h, PLC_OP_DATA_LOAD);
    in->phase = PLC_PHASE_DATA;
    in->buf[0] = tok; in->buf[1] = tgt;
    in->arg[0] = 0; in->arg[1] = 2; in->arg[2] = 4;
    plc_executor *x;
    char err[512];
    CU_ASSERT_FATAL(hp_setup(&h, &x, err, sizeof err) == 0);
    plc_step_stats st;
    CU_ASSERT_FATAL(plc_exec_step(x, &st, err, sizeof err) == 0);
    CU_ASSERT_FATAL(plc_exec_step(x, &st, err, sizeof err) == 0); /* step 1 */
    int32_t want_tok[8], want_tgt[8];
    CU_ASSERT_FATAL(plc_data_fetch(h.data, 1, 2, 0, 2, 0, 4, want_tok, want_tgt, err, sizeof err) == 0);
    CU_ASSERT_EQUAL(memcmp(plc_exec_buffer(x, tok), want_tok, sizeof want_tok), 0);
    CU_ASSERT_EQUAL(memcmp(plc_exec_buffer(x, tgt), want_tgt, sizeof want_tgt), 0);
    hp_free(&h, x);
}

static void expect_create_error(hand_plan *h, const char *needle1, const char *needle2)
{
    plc_executor *x = NULL;
    char err[512] = "";
    CU_ASSERT_NOT_EQUAL(hp_setup(h, &x, err, sizeof err), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, needle1));
    if (needle2) CU_ASSERT_PTR_NOT_NULL(strstr(err, needle2));
    if (!strstr(err, needle1) || (needle2 && !strstr(err, needle2))) fprintf(stderr, "\n  got: %s\n", err);
    hp_free(h, x);
}

/* wrong programs fail before the first step, naming where */
static void test_errors(void)
{
    hand_plan h;
    hp_init(&h);
    int32_t A = hp_buf(&h, "A", PLC_F32, 2, 3), C = hp_buf(&h, "C", PLC_F32, 2, 2);
    hp_ins(&h, PLC_OP_NOP);
    plc_instr *in = hp_ins(&h, PLC_OP_MATMUL);
    in->phase = PLC_PHASE_BACKWARD;
    in->layer = 1; /* the head of the one-layer model */
    in->micro = 1;
    in->buf[0] = C; in->buf[1] = A; in->buf[2] = A;
    in->arg[0] = 2; in->arg[1] = 2; in->arg[2] = 3; /* B would need 3 x 2 = 6: fits */
    in->arg[1] = 4;                                 /* now C needs 8 and B 12 */
    expect_create_error(&h, "rank 0: instruction 1 (MATMUL, layer 1, micro-batch 1, bwd)", "buf0 'C'");

    hp_init(&h);
    hp_buf(&h, "A", PLC_F32, 2, 3);
    in = hp_ins(&h, PLC_OP_ZERO);
    in->buf[0] = 5; /* no such buffer */
    expect_create_error(&h, "instruction 0 (ZERO", "is not a buffer");

    hp_init(&h);
    hp_buf(&h, "A", PLC_F32, 2, 3);
    in = hp_ins(&h, PLC_OP_NOP);
    in->op = (plc_op)200;
    expect_create_error(&h, "instruction 0 (op 200", "unknown op");

    hp_init(&h);
    A = hp_buf(&h, "A", PLC_F32, 2, 3);
    in = hp_ins(&h, PLC_OP_ALLREDUCE);
    in->buf[0] = A; in->arg[0] = 6; in->group = 4;
    expect_create_error(&h, "ALLREDUCE", "group 4 does not exist");

    hp_init(&h);
    A = hp_buf(&h, "A", PLC_F32, 2, 3);
    h.bufs[A].offset = 8; /* not aligned */
    expect_create_error(&h, "buffer 0 'A'", "outside the arena");

    hp_init(&h);
    A = hp_buf(&h, "A", PLC_F32, 2, 3);
    in = hp_ins(&h, PLC_OP_WAIT);
    in->wait = 0; /* itself */
    expect_create_error(&h, "instruction 0 (WAIT", "does not come before it");

    /* in-place rules (plan.h): a matmul may not write its own input */
    hp_init(&h);
    C = hp_buf(&h, "C", PLC_F32, 2, 2);
    in = hp_ins(&h, PLC_OP_MATMUL);
    in->buf[0] = C; in->buf[1] = C; in->buf[2] = C;
    in->arg[0] = 2; in->arg[1] = 2; in->arg[2] = 2;
    expect_create_error(&h, "instruction 0 (MATMUL", "overlaps buf0 'C', which the op writes; they may not share bytes");

    /* ADD may run in place, but not shifted against its input */
    hp_init(&h);
    A = hp_buf(&h, "X", PLC_F32, 1, 64);
    int32_t Y = hp_buf(&h, "Y", PLC_F32, 1, 32);
    h.bufs[Y].offset = h.bufs[A].offset + 64; /* inside X, 16 elements on */
    in = hp_ins(&h, PLC_OP_ADD);
    in->buf[0] = Y; in->buf[1] = A; in->buf[2] = A; in->arg[0] = 32;
    expect_create_error(&h, "instruction 0 (ADD", "in place they must start at the same byte");
}

/* a world size that differs from the plan's is refused */
static void test_world_size(void)
{
    hand_plan h;
    hp_init(&h);
    h.plan.world_size = 4;
    h.plan.layout.dp = 4;
    char err[512];
    CU_ASSERT_FATAL(plc_comm_world_init(&h.comm, 0, NULL, err, sizeof err) == 0);
    CU_ASSERT_NOT_EQUAL(plc_comm_setup(&h.comm, &h.plan, err, sizeof err), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "the plan is for 4 ranks"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "mpirun -np 4"));
    plc_comm_finalize(&h.comm);
}

/* shard geometry: rows, columns, and ZeRO's flat range on top of a tp block */
static void test_shard_regions(void)
{
    plc_layout l = {.dp = 2, .tp = 2, .pp = 1, .cp = 1, .vpp = 1, .micro_batch = 1};
    plc_buffer b;
    memset(&b, 0, sizeof b);
    b.name = "w";
    b.dtype = PLC_F32;
    b.shard = PLC_SHARD_COLS;
    b.shard_dims = PLC_DIM_TP;
    b.nshards = 2;
    b.flat_shards = 1;
    b.rows = 4;
    b.cols = 3;
    b.bytes = 48;
    plc_shard_region r;
    char err[256];
    plc_rank_coords co = {1, 0, 1, 0};
    CU_ASSERT_FATAL(plc_shard_region_of(&b, &l, co, 4, 6, &r, err, sizeof err) == 0);
    CU_ASSERT_EQUAL(r.col0, 3);
    CU_ASSERT_EQUAL(r.cols, 3);
    CU_ASSERT_EQUAL(r.rows, 4);
    CU_ASSERT_FALSE(r.flat);

    /* flat over dp on top: the block has 12 elements, 2 chunks of 6 */
    b.flat_dims = PLC_DIM_DP;
    b.flat_shards = 2;
    b.rows = 1;
    b.cols = 6;
    b.bytes = 24;
    CU_ASSERT_FATAL(plc_shard_region_of(&b, &l, co, 4, 6, &r, err, sizeof err) == 0);
    CU_ASSERT_TRUE(r.flat);
    CU_ASSERT_EQUAL(r.e0, 6);
    CU_ASSERT_EQUAL(r.n, 6);
    float global[24], local[6];
    for (int i = 0; i < 24; i++) global[i] = (float)i;
    plc_shard_scatter(local, global, &r, 6);
    /* block elements 6..11 are rows 2..3 of columns 3..5 */
    const float want[6] = {15, 16, 17, 21, 22, 23};
    CU_ASSERT_EQUAL(memcmp(local, want, sizeof want), 0);
    float back[24] = {0};
    plc_shard_gather(back, local, &r, 6);
    CU_ASSERT_EQUAL(back[15], 15);
    CU_ASSERT_EQUAL(back[23], 23);
    CU_ASSERT_EQUAL(back[14], 0);

    /* a shape that does not match its shard is refused */
    b.cols = 5;
    CU_ASSERT_NOT_EQUAL(plc_shard_region_of(&b, &l, co, 4, 6, &r, err, sizeof err), 0);
}

/* The weights: generated in parallel pieces (executor.c) with the values of
 * the serial generator, on 1 and 4 threads, fp32 written in place and bf16
 * through the staging chunk. The table has 4096 rows of 64, so its runs
 * (a row each) overflow the queue of pieces several times. */
static void test_init_weights(void)
{
    hand_plan h;
    hp_init(&h);
    h.plan.model.vocab = 4096;
    h.plan.model.hidden = 64;
    plc_tensor_info ti;
    CU_ASSERT_FATAL(plc_tensor_get(&h.plan.model, 0, &ti));
    CU_ASSERT_FATAL(ti.init == PLC_INIT_NORMAL);
    const int64_t rows = ti.shape[0], cols = ti.shape[1], n = rows * cols;
    CU_ASSERT_FATAL(n > 4 * 16384);
    int32_t ids[2] = {hp_buf(&h, "w32", PLC_F32, rows, cols), hp_buf(&h, "w16", PLC_BF16, rows, cols)};
    for (int i = 0; i < 2; i++) {
        h.bufs[ids[i]].kind = PLC_BUF_PARAM;
        h.bufs[ids[i]].tensor = 0;
    }
    float *want = malloc((size_t)n * sizeof *want);
    uint16_t *want16 = malloc((size_t)n * sizeof *want16);
    CU_ASSERT_FATAL(want && want16);
    const int64_t shape[2] = {rows, cols};
    const plc_shard whole = {.row0 = 0, .rows = rows, .col0 = 0, .cols = cols};
    CU_ASSERT_FATAL(plc_init_tensor(want, h.plan.train.seed, 0, shape, whole, ti.init_std, ti.init) == 0);
    plc_k_cast_f32_to_bf16(want16, want, n);
    char err[256];
    plc_executor *x = NULL;
    CU_ASSERT_FATAL(hp_setup(&h, &x, err, sizeof err) == 0);
    const int saved = omp_get_max_threads();
    for (int threads = 1; threads <= 4; threads += 3) {
        memset(plc_exec_buffer(x, ids[0]), 0, (size_t)n * sizeof(float));
        memset(plc_exec_buffer(x, ids[1]), 0, (size_t)n * sizeof(uint16_t));
        omp_set_num_threads(threads);
        CU_ASSERT_EQUAL_FATAL(plc_exec_init_weights(x, err, sizeof err), 0);
        CU_ASSERT_EQUAL(memcmp(plc_exec_buffer(x, ids[0]), want, (size_t)n * sizeof(float)), 0);
        CU_ASSERT_EQUAL(memcmp(plc_exec_buffer(x, ids[1]), want16, (size_t)n * sizeof(uint16_t)), 0);
    }
    omp_set_num_threads(saved);
    free(want);
    free(want16);
    hp_free(&h, x);
}

/* communicator groups follow Megatron's rank order (tp fastest, then cp,
 * dp, pp): members of one group share a colour, indices run in rank order */
/* the GPU check of the CUDA backend: the node's ranks compare the bus ids
 * of the GPUs they picked; a single process is a node of one */
static void test_node_keys(void)
{
    char keys[4][PLC_NODE_KEY] = {"0000:19:00.0", "0000:3B:00.0", "", ""};
    int i = -1, j = -1;
    CU_ASSERT(plc_keys_first_pair(&keys[0][0], 4, &i, &j) == 0); /* empty keys (no bus id) match nothing */
    CU_ASSERT(i == -1 && j == -1);
    strcpy(keys[3], "0000:19:00.0");
    strcpy(keys[2], "0000:3B:00.0");
    CU_ASSERT(plc_keys_first_pair(&keys[0][0], 4, &i, &j) == 1 && i == 1 && j == 2); /* the later one first */
    CU_ASSERT(plc_keys_first_pair(&keys[0][0], 2, &i, &j) == 0);
    memset(keys[2], 'x', PLC_NODE_KEY); /* the whole key is compared, not past it */
    memset(keys[1], 'x', PLC_NODE_KEY);
    CU_ASSERT(plc_keys_first_pair(&keys[0][0], 3, &i, &j) == 1 && i == 1 && j == 2);
    keys[2][PLC_NODE_KEY - 1] = 'y';
    CU_ASSERT(plc_keys_first_pair(&keys[0][0], 3, &i, &j) == 0);
    plc_comm c;
    char err[256];
    CU_ASSERT_FATAL(plc_comm_world_init(&c, 0, NULL, err, sizeof err) == 0);
    int index = -1, a = -1, b = -1;
    CU_ASSERT(plc_comm_node(&c, &index) == 1 && index == 0);
    CU_ASSERT(plc_comm_node_shared(&c, "0000:19:00.0", &a, &b) == 0);
    plc_comm_finalize(&c);
}

void register_test_runtime_exec_dispatch(void)
{
    CU_pSuite s = CU_add_suite("exec_dispatch", NULL, NULL);
    CU_add_test(s, "matmul, copy, scale, add at planned offsets", test_matmul_add_scale);
    CU_add_test(s, "DATA_LOAD matches the data source", test_data_load);
    CU_add_test(s, "ZERO folding gives the bits of the ZEROs run", test_zero_folding);
    CU_add_test(s, "invalid instructions name their location", test_errors);
    CU_add_test(s, "world size must match the plan", test_world_size);
    CU_add_test(s, "shard regions (tp block, ZeRO flat range)", test_shard_regions);
    CU_add_test(s, "ranks of a node that picked the same GPU", test_node_keys);
    CU_add_test(s, "weights: parallel pieces give the serial generator's values", test_init_weights);
}
