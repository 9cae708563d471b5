/* test_runtime_bf16.c: how plrun runs bf16 plans on the CPU: the widening
 * layer (backend_cpu_bf16.h) through the CPU backend's ops, the staging
 * size taken from the plan, the bf16 MPI reductions (comm_bf16.h) and the
 * plan check's storage-dtype rule. */
#include <CUnit/CUnit.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/common/bf16.h"
#include "runtime/backend.h"
#include "runtime/backend_cpu_bf16.h"
#include "runtime/comm_bf16.h"
#include "runtime/executor.h"

/* bit patterns: 1.0 and its two bf16 neighbours above (ulp 2^-7 at 1) */
#define BF_ONE 0x3F80u
#define BF_ONE_UP1 0x3F81u
#define BF_ONE_UP2 0x3F82u

/* ---- a one-program plan whose instructions size the staging area ------- */
typedef struct mini_plan {
    plc_plan plan;
    plc_program prog;
    plc_buffer bufs[8];
    plc_instr ins[4];
    int32_t stage[1];
} mini_plan;

static void mp_init(mini_plan *m)
{
    memset(m, 0, sizeof *m);
    m->plan.nprograms = 1;
    m->plan.programs = &m->prog;
    m->plan.stage_program = m->stage;
    m->plan.layout = (plc_layout){.dp = 1, .tp = 1, .pp = 1, .cp = 1, .vpp = 1, .micro_batch = 1};
    m->plan.world_size = 1;
    m->prog.buffers = m->bufs;
    m->prog.instrs = m->ins;
    m->prog.loss_buf = m->prog.gnorm_buf = -1;
}

static int32_t mp_buf(mini_plan *m, plc_dtype t, int64_t rows, int64_t cols)
{
    plc_program *p = &m->prog;
    plc_buffer *b = &p->buffers[p->nbuffers];
    b->name = "b";
    b->kind = PLC_BUF_TEMP;
    b->dtype = t;
    b->offset = p->arena_bytes;
    b->rows = rows;
    b->cols = cols;
    b->bytes = (uint64_t)(rows * cols) * plc_dtype_size(t);
    b->tensor = -1;
    b->flat_shards = 1;
    p->arena_bytes = (b->offset + b->bytes + 63) / 64 * 64;
    return (int32_t)p->nbuffers++;
}

static plc_instr *mp_ins(mini_plan *m, plc_op op)
{
    plc_instr *in = &m->prog.instrs[m->prog.ninstrs++];
    memset(in, 0, sizeof *in);
    in->op = op;
    in->layer = in->micro = in->group = in->peer = in->wait = -1;
    for (int i = 0; i < PLC_INSTR_BUFS; i++) in->buf[i] = -1;
    return in;
}

/* a CPU backend whose staging holds one MATMUL over three bf16 [16 x 16]
 * buffers: 3 x 256 floats */
static plc_backend *cpu_with_staging(void)
{
    mini_plan m;
    mp_init(&m);
    int32_t c = mp_buf(&m, PLC_BF16, 16, 16), a = mp_buf(&m, PLC_BF16, 16, 16), b = mp_buf(&m, PLC_BF16, 16, 16);
    plc_instr *in = mp_ins(&m, PLC_OP_MATMUL);
    in->buf[0] = c; in->buf[1] = a; in->buf[2] = b;
    char err[256] = "";
    plc_backend *be = plc_backend_cpu_create(NULL, 1, &m.plan, err, sizeof err);
    CU_ASSERT_PTR_NOT_NULL(be);
    return be;
}

static void test_stage_need(void)
{
    mini_plan m;
    mp_init(&m);
    int32_t x = mp_buf(&m, PLC_BF16, 10, 10), y = mp_buf(&m, PLC_BF16, 1, 3), f = mp_buf(&m, PLC_F32, 50, 50);
    plc_instr *in = mp_ins(&m, PLC_OP_ADD); /* out aliases a: x counted once */
    in->buf[0] = x; in->buf[1] = x; in->buf[2] = y;
    in = mp_ins(&m, PLC_OP_COPY);           /* byte movers need no staging */
    in->buf[0] = x; in->buf[1] = x;
    in = mp_ins(&m, PLC_OP_SCALE);          /* fp32 operands pass through */
    in->buf[0] = f;
    /* 100 floats aligned to 112, 3 aligned to 16 */
    CU_ASSERT_EQUAL(plc_bf16_stage_need(&m.plan), 112 + 16);
    m.bufs[x].dtype = m.bufs[y].dtype = PLC_F32;
    CU_ASSERT_EQUAL(plc_bf16_stage_need(&m.plan), 0);
}

/* bf16 values survive widening and rounding back unchanged, fp32 operands
 * are used in place */
static void test_round_trip(void)
{
    plc_bf16_stage st;
    CU_ASSERT_EQUAL_FATAL(plc_bf16_stage_init(&st, 64), 0);
    uint16_t v[6] = {BF_ONE, 0x8000u /* -0 */, 0x0001u /* smallest subnormal */, 0x7F80u /* +inf */,
                     0xC2F7u /* -123.5 */, 0x7F7Fu /* largest finite */};
    uint16_t before[6];
    memcpy(before, v, sizeof v);
    float *f = plc_bf16_out(&st, v, PLC_BF16, 6);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT_EQUAL(f[0], 1.0f);
    CU_ASSERT_EQUAL(f[4], -123.5f);
    CU_ASSERT_TRUE(isinf(f[3]));
    char err[160] = "";
    CU_ASSERT_EQUAL(plc_bf16_finish(&st, err, sizeof err), 0);
    CU_ASSERT_EQUAL(memcmp(v, before, sizeof v), 0);
    float g[2] = {1.5f, 2.5f};
    CU_ASSERT_PTR_EQUAL(plc_bf16_in(&st, g, PLC_F32, 2), g);
    CU_ASSERT_EQUAL(st.used, 0);
    plc_bf16_stage_free(&st);
}

/* outputs round to nearest, ties to even, once per operation */
static void test_round_nearest_even(void)
{
    plc_bf16_stage st;
    CU_ASSERT_EQUAL_FATAL(plc_bf16_stage_init(&st, 64), 0);
    uint16_t v[4] = {0, 0, 0, 0};
    float *f = plc_bf16_out(&st, v, PLC_BF16, 4);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    f[0] = 1.0f + 0x1p-8f;        /* halfway between 1 and 1+2^-7: to even 1 */
    f[1] = 1.0f + 3 * 0x1p-8f;    /* halfway between 1+2^-7 (odd) and 1+2^-6: up */
    f[2] = 1.0f + 0x1p-8f + 0x1p-20f; /* just above halfway: up */
    f[3] = -(1.0f + 0x1p-8f);     /* sign symmetric */
    char err[160] = "";
    CU_ASSERT_EQUAL(plc_bf16_finish(&st, err, sizeof err), 0);
    CU_ASSERT_EQUAL(v[0], BF_ONE);
    CU_ASSERT_EQUAL(v[1], BF_ONE_UP2);
    CU_ASSERT_EQUAL(v[2], BF_ONE_UP1);
    CU_ASSERT_EQUAL(v[3], BF_ONE | 0x8000u);
    plc_bf16_stage_free(&st);
}

/* C += A B with bf16 C: the three products of 2^-9 are summed in fp32 and
 * rounded once (1 + 3*2^-9 -> 1 + 2^-7); rounding after each product would
 * leave C at 1, since 2^-9 is below half an ulp. */
static void test_accumulate_rounds_once(void)
{
    plc_backend *be = cpu_with_staging();
    CU_ASSERT_PTR_NOT_NULL_FATAL(be);
    uint16_t C[1] = {BF_ONE}, A[3], B[3];
    for (int i = 0; i < 3; i++) {
        A[i] = plc_f32_to_bf16(0x1p-9f);
        B[i] = BF_ONE;
    }
    CU_ASSERT_EQUAL(be->ops->matmul(be, C, PLC_BF16, A, B, PLC_BF16, 1, 1, 3, 0, 0, 1.0f), 0);
    CU_ASSERT_EQUAL(C[0], BF_ONE_UP1);
    /* the same through ACCUMULATE, element-wise */
    uint16_t y[2] = {BF_ONE, BF_ONE}, x[2] = {plc_f32_to_bf16(0x1p-8f), plc_f32_to_bf16(0x1p-9f)};
    CU_ASSERT_EQUAL(be->ops->accumulate(be, y, x, PLC_BF16, 2), 0);
    CU_ASSERT_EQUAL(y[0], BF_ONE); /* exactly halfway: to even */
    CU_ASSERT_EQUAL(y[1], BF_ONE); /* below halfway */
    /* fp32 C from bf16 A and B (weight gradients): no rounding of C */
    float Cf[1] = {1.0f};
    CU_ASSERT_EQUAL(be->ops->matmul(be, Cf, PLC_F32, A, B, PLC_BF16, 1, 1, 3, 0, 0, 1.0f), 0);
    CU_ASSERT_EQUAL(Cf[0], 1.0f + 3 * 0x1p-9f);
    be->ops->destroy(be);
}

/* an output that aliases an input shares one fp32 copy (out = a + b, out == a) */
static void test_aliasing(void)
{
    plc_backend *be = cpu_with_staging();
    CU_ASSERT_PTR_NOT_NULL_FATAL(be);
    uint16_t a[3], b[3];
    for (int i = 0; i < 3; i++) {
        a[i] = plc_f32_to_bf16((float)(i + 1));
        b[i] = plc_f32_to_bf16(0.5f);
    }
    CU_ASSERT_EQUAL(be->ops->add(be, a, a, b, PLC_BF16, 3), 0);
    for (int i = 0; i < 3; i++) CU_ASSERT_EQUAL(plc_bf16_to_f32(a[i]), (float)(i + 1) + 0.5f);
    /* RMSNorm in place: out = in */
    uint16_t x[4], w[4];
    float rstd[1];
    for (int i = 0; i < 4; i++) {
        x[i] = plc_f32_to_bf16(2.0f);
        w[i] = BF_ONE;
    }
    CU_ASSERT_EQUAL(be->ops->rmsnorm_fwd(be, x, rstd, x, w, PLC_BF16, 1, 4, 1e-6f), 0);
    for (int i = 0; i < 4; i++) CU_ASSERT_EQUAL(x[i], BF_ONE); /* 2 / rms(2) = 1 within bf16 */
    CU_ASSERT_DOUBLE_EQUAL(rstd[0], 0.5, 1e-6);
    be->ops->destroy(be);
}

/* more than the staging holds: a clear error, and nothing is written */
static void test_staging_exhausted(void)
{
    char err[256] = "";
    plc_backend *be = plc_backend_cpu_create(NULL, 1, NULL, err, sizeof err); /* no staging */
    CU_ASSERT_PTR_NOT_NULL_FATAL(be);
    uint16_t y[2] = {BF_ONE, BF_ONE}, x[2] = {BF_ONE, BF_ONE};
    CU_ASSERT_NOT_EQUAL(be->ops->accumulate(be, y, x, PLC_BF16, 2), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(be->error, "staging"));
    CU_ASSERT_EQUAL(y[0], BF_ONE);
    /* fp32 needs none */
    float yf[2] = {1, 2}, xf[2] = {3, 4};
    CU_ASSERT_EQUAL(be->ops->accumulate(be, yf, xf, PLC_F32, 2), 0);
    CU_ASSERT_EQUAL(yf[1], 6.0f);
    be->ops->destroy(be);
}

/* AdamW on a bf16 parameter: the master is updated, the parameter is the
 * master rounded; without a master it is refused */
static void test_adamw_master(void)
{
    plc_backend *be = cpu_with_staging();
    CU_ASSERT_PTR_NOT_NULL_FATAL(be);
    float master[2] = {1.0f, -2.0f}, grad[2] = {0.5f, -0.25f}, m[2] = {0, 0}, v[2] = {0, 0}, scale = 1.0f;
    uint16_t param[2] = {BF_ONE, plc_f32_to_bf16(-2.0f)};
    CU_ASSERT_EQUAL(be->ops->adamw(be, param, PLC_BF16, grad, PLC_F32, m, v, &scale, master, 2, 1e-2,
                                   0.9, 0.95, 1e-8, 0.0, 1), 0);
    CU_ASSERT_DOUBLE_EQUAL(master[0], 0.99, 1e-6); /* the first step moves by lr */
    CU_ASSERT_DOUBLE_EQUAL(master[1], -1.99, 1e-6);
    for (int i = 0; i < 2; i++) CU_ASSERT_EQUAL(param[i], plc_f32_to_bf16(master[i]));
    CU_ASSERT_NOT_EQUAL(be->ops->adamw(be, param, PLC_BF16, grad, PLC_F32, m, v, &scale, NULL, 2, 1e-2,
                                       0.9, 0.95, 1e-8, 0.0, 2), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(be->error, "master"));
    be->ops->destroy(be);
}

/* the MPI operations: widen, add in fp32, round once; commutative bit for bit */
static void test_mpi_ops(void)
{
    uint16_t in[4] = {BF_ONE, BF_ONE, plc_f32_to_bf16(-3.0f), plc_f32_to_bf16(1e30f)};
    uint16_t io[4] = {plc_f32_to_bf16(0x1p-8f), plc_f32_to_bf16(3 * 0x1p-8f), plc_f32_to_bf16(3.0f),
                      plc_f32_to_bf16(1e30f)};
    int len = 4;
    MPI_Datatype t = MPI_UINT16_T;
    plc_bf16_mpi_sum(in, io, &len, &t);
    CU_ASSERT_EQUAL(io[0], BF_ONE);     /* 1 + 2^-8: tie, to even */
    CU_ASSERT_EQUAL(io[1], BF_ONE_UP2); /* 1 + 3 2^-8: tie, to even (up) */
    CU_ASSERT_EQUAL(io[2], 0);          /* -3 + 3 = +0 */
    CU_ASSERT_EQUAL(plc_bf16_to_f32(io[3]), 2 * plc_bf16_to_f32(in[3])); /* doubling is exact */
    /* commutative for every pair of a sample of bit patterns */
    srand(7);
    int mismatches = 0, wrong = 0;
    for (int i = 0; i < 4096; i++) {
        uint16_t a = (uint16_t)(rand() & 0xFFFF), b = (uint16_t)(rand() & 0xFFFF);
        if ((a & 0x7F80u) == 0x7F80u || (b & 0x7F80u) == 0x7F80u) continue; /* inf/NaN */
        uint16_t x = a, y = b;
        int one = 1;
        plc_bf16_mpi_sum(&a, &y, &one, &t); /* y = a + b */
        plc_bf16_mpi_sum(&b, &x, &one, &t); /* x = b + a */
        mismatches += x != y;
        wrong += y != plc_f32_to_bf16(plc_bf16_to_f32(a) + plc_bf16_to_f32(b));
    }
    CU_ASSERT_EQUAL(mismatches, 0);
    CU_ASSERT_EQUAL(wrong, 0);
    /* max: the larger, negatives included; a NaN wins from either side */
    uint16_t mi[3] = {plc_f32_to_bf16(-1.0f), plc_f32_to_bf16(2.0f), 0x7FC0u};
    uint16_t mo[3] = {plc_f32_to_bf16(-2.0f), 0x7FC0u, plc_f32_to_bf16(5.0f)};
    len = 3;
    plc_bf16_mpi_max(mi, mo, &len, &t);
    CU_ASSERT_EQUAL(plc_bf16_to_f32(mo[0]), -1.0f);
    CU_ASSERT_TRUE(isnan(plc_bf16_to_f32(mo[1])));
    CU_ASSERT_TRUE(isnan(plc_bf16_to_f32(mo[2])));
}

/* the plan check: a compute op's "as dt" operands share one storage dtype */
static void test_check_storage(void)
{
    mini_plan m;
    mp_init(&m);
    int32_t c = mp_buf(&m, PLC_F32, 4, 4), a = mp_buf(&m, PLC_BF16, 4, 4), b = mp_buf(&m, PLC_BF16, 4, 4);
    plc_instr *in = mp_ins(&m, PLC_OP_MATMUL);
    in->buf[0] = c; in->buf[1] = a; in->buf[2] = b;
    in->arg[0] = in->arg[1] = in->arg[2] = 4;
    char err[512] = "";
    CU_ASSERT_EQUAL(plc_exec_check_program(&m.plan, &m.prog, NULL, err, sizeof err), 0); /* f32 C, bf16 A B */
    m.bufs[b].dtype = PLC_F32; /* bf16 A with f32 B */
    m.bufs[b].bytes *= 2;
    m.prog.arena_bytes += 64;
    CU_ASSERT_NOT_EQUAL(plc_exec_check_program(&m.plan, &m.prog, NULL, err, sizeof err), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "expected bf16"));
    in->op = PLC_OP_ADD; /* I32 storage is refused by name */
    in->arg[0] = 4;
    m.bufs[c].dtype = PLC_I32;
    CU_ASSERT_NOT_EQUAL(plc_exec_check_program(&m.plan, &m.prog, NULL, err, sizeof err), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "f32 or bf16"));
}

void register_test_runtime_bf16(void)
{
    CU_pSuite s = CU_add_suite("bf16_runtime", NULL, NULL);
    CU_add_test(s, "staging sized from the plan's largest instruction", test_stage_need);
    CU_add_test(s, "widen and round back is the identity; fp32 in place", test_round_trip);
    CU_add_test(s, "outputs round to nearest even", test_round_nearest_even);
    CU_add_test(s, "accumulating outputs round once", test_accumulate_rounds_once);
    CU_add_test(s, "aliased operands share one view", test_aliasing);
    CU_add_test(s, "exhausted staging is an error", test_staging_exhausted);
    CU_add_test(s, "AdamW through the fp32 master", test_adamw_master);
    CU_add_test(s, "MPI bf16 sum and max", test_mpi_ops);
    CU_add_test(s, "plan check: one storage dtype per op", test_check_storage);
}
