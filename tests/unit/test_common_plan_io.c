/* test_common_plan_io.c: the plan file: round trip, byte-identical determinism,
 * and a corrupted-plan suite (truncation at every length, flipped bits,
 * wrong version, hostile fields behind valid checksums): every damaged file
 * is rejected with a message, never a crash. */
#include <CUnit/CUnit.h>

#include "common/crc32.h"
#include "test_plan_util.h"

static int encode(const plc_plan *p, uint8_t **data, size_t *len)
{
    char err[256];
    int rc = plc_plan_encode(p, data, len, err, sizeof err);
    if (rc) fprintf(stderr, "\nencode: %s\n", err);
    return rc;
}

/* a small plan: 1 layer, 2 micro-batches, one rank */
static int small_plan(plc_arena *a, plc_plan *p, uint8_t **data, size_t *len)
{
    plc_job job;
    tp_job(&job, 1, false, 2);
    if (tp_lower(&job, tp_layout(1, 1, 1, 1, 0, 0, PLC_RECOMPUTE_NONE, 1, PLC_SCHED_1F1B, 1), a, p)) return -1;
    return encode(p, data, len);
}

static void test_round_trip(void)
{
    plc_job job;
    tp_job(&job, 4, true, 8);
    /* a token file's record: its path relative to the spec, size, CRC-32 */
    job.train.data_path = "../data/toks.bin";
    job.train.data_size = 0x123456789ull;
    job.train.data_crc32 = 0xdeadbeefu;
    plc_layout layouts[] = {
        tp_layout(1, 1, 1, 1, 0, 0, PLC_RECOMPUTE_NONE, 1, PLC_SCHED_1F1B, 1),
        tp_layout(2, 2, 2, 1, 1, 3, PLC_RECOMPUTE_FULL, 2, PLC_SCHED_INTERLEAVED, 1),
        tp_layout(1, 1, 1, 2, 0, 0, PLC_RECOMPUTE_SELECTIVE, 1, PLC_SCHED_GPIPE, 2),
    };
    /* the layout block travels with the plan: a set, a range, a pin, memory_limit, objective */
    job.layout.tp = (plc_choice){.kind = PLC_CHOICE_SET, .n = 3, .v = {1, 2, 4}};
    job.layout.zero = (plc_choice){.kind = PLC_CHOICE_RANGE, .lo = 0, .hi = 3};
    job.layout.schedule = (plc_choice){.kind = PLC_CHOICE_SET, .n = 1, .v = {PLC_SCHED_INTERLEAVED}};
    job.layout.memory_limit = 0.85;
    job.layout.objective = PLC_OBJ_MEMORY;
    for (size_t i = 0; i < sizeof layouts / sizeof layouts[0]; i++) {
        plc_arena a;
        plc_arena_init(&a);
        plc_plan p, q;
        uint8_t *d1 = NULL, *d2 = NULL;
        size_t n1 = 0, n2 = 0;
        char err[256];
        CU_ASSERT_FATAL(tp_lower(&job, layouts[i], &a, &p) == 0);
        CU_ASSERT_FATAL(encode(&p, &d1, &n1) == 0);
        int rc = plc_plan_decode(&a, d1, n1, &q, err, sizeof err);
        if (rc) fprintf(stderr, "\ndecode: %s\n", err);
        CU_ASSERT_FATAL(rc == 0);
        CU_ASSERT_FATAL(encode(&q, &d2, &n2) == 0);
        CU_ASSERT(n1 == n2 && memcmp(d1, d2, n1) == 0);
        for (uint32_t k = 0; k < q.nprograms; k++) /* every row, as plc dump --expand */
            q.programs[k].nbuf_folds = q.programs[k].ninstr_folds = 0;
        char *s1 = tp_dump(&p, -1), *s2 = tp_dump(&q, -1);
        CU_ASSERT(s1 && s2 && strcmp(s1, s2) == 0);
        CU_ASSERT(q.spec_len == p.spec_len && memcmp(q.spec_source, p.spec_source, p.spec_len) == 0);
        CU_ASSERT(q.layout.dp == p.layout.dp && q.layout.schedule == p.layout.schedule);
        CU_ASSERT(q.model.norm_eps == p.model.norm_eps && q.train.lr_peak == p.train.lr_peak);
        CU_ASSERT(q.constraints.tp.kind == PLC_CHOICE_SET && q.constraints.tp.n == 3 && q.constraints.tp.v[2] == 4);
        CU_ASSERT(q.constraints.zero.kind == PLC_CHOICE_RANGE && q.constraints.zero.hi == 3);
        CU_ASSERT(q.constraints.schedule.n == 1 && q.constraints.schedule.v[0] == PLC_SCHED_INTERLEAVED);
        CU_ASSERT(q.constraints.dp.kind == PLC_CHOICE_AUTO);
        CU_ASSERT(q.constraints.memory_limit == 0.85 && q.constraints.objective == PLC_OBJ_MEMORY);
        CU_ASSERT(q.pred.bubble_fraction == p.pred.bubble_fraction);
        CU_ASSERT(q.train.data_path && strcmp(q.train.data_path, "../data/toks.bin") == 0);
        CU_ASSERT(q.train.data_size == 0x123456789ull && q.train.data_crc32 == 0xdeadbeefu);
        CU_ASSERT_PTR_NOT_NULL(strstr(s1, "data=../data/toks.bin (4886718345 bytes, CRC-32 deadbeef)\n"));
        free(s1);
        free(s2);
        free(d1);
        free(d2);
        plc_arena_free(&a);
    }
}

static void test_deterministic(void)
{
    plc_job job;
    tp_job(&job, 4, false, 8);
    plc_layout l = tp_layout(2, 2, 2, 1, 1, 1, PLC_RECOMPUTE_SELECTIVE, 1, PLC_SCHED_1F1B, 1);
    uint8_t *d[2] = {NULL, NULL};
    size_t n[2] = {0, 0};
    for (int k = 0; k < 2; k++) {
        plc_arena a;
        plc_arena_init(&a);
        plc_plan p;
        CU_ASSERT_FATAL(tp_lower(&job, l, &a, &p) == 0);
        CU_ASSERT_FATAL(encode(&p, &d[k], &n[k]) == 0);
        plc_arena_free(&a);
    }
    CU_ASSERT(n[0] == n[1] && memcmp(d[0], d[1], n[0]) == 0);
    free(d[0]);
    free(d[1]);
}

static int decode_fails(const uint8_t *data, size_t len, const char *expect)
{
    plc_arena a;
    plc_arena_init(&a);
    plc_plan q;
    char err[512] = "";
    int rc = plc_plan_decode(&a, data, len, &q, err, sizeof err);
    plc_arena_free(&a);
    if (rc == 0) return 0;
    if (!err[0]) return 0;
    if (expect && !strstr(err, expect)) {
        fprintf(stderr, "\nexpected '%s' in: %s\n", expect, err);
        return 0;
    }
    return 1;
}

static void test_truncations(void)
{
    plc_arena a;
    plc_arena_init(&a);
    plc_plan p;
    uint8_t *d = NULL;
    size_t n = 0;
    CU_ASSERT_FATAL(small_plan(&a, &p, &d, &n) == 0);
    int all = 1;
    for (size_t len = 0; len < n; len++) all &= decode_fails(d, len, NULL);
    CU_ASSERT(all);
    free(d);
    plc_arena_free(&a);
}

static void test_flipped_bits(void)
{
    plc_arena a;
    plc_arena_init(&a);
    plc_plan p;
    uint8_t *d = NULL;
    size_t n = 0;
    CU_ASSERT_FATAL(small_plan(&a, &p, &d, &n) == 0);
    int all = 1;
    /* every bit of the header and table, then a spread of bits through the sections */
    for (size_t bit = 0; bit < n * 8; bit += bit < 8 * 160 ? 1 : 61) {
        d[bit / 8] ^= (uint8_t)(1u << (bit % 8));
        all &= decode_fails(d, n, NULL);
        d[bit / 8] ^= (uint8_t)(1u << (bit % 8));
    }
    CU_ASSERT(all);
    free(d);
    plc_arena_free(&a);
}

static void test_wrong_version_and_magic(void)
{
    plc_arena a;
    plc_arena_init(&a);
    plc_plan p;
    uint8_t *d = NULL;
    size_t n = 0;
    CU_ASSERT_FATAL(small_plan(&a, &p, &d, &n) == 0);
    d[8] = PLC_PLAN_VERSION + 1; /* a newer version */
    char newer[32];
    snprintf(newer, sizeof newer, "version %u", PLC_PLAN_VERSION + 1);
    CU_ASSERT(decode_fails(d, n, newer));
    d[8] = PLC_PLAN_VERSION;
    d[8] = 1; /* a plan of the first format (no loops): refused, recompile */
    char older[80];
    snprintf(older, sizeof older, "version 1, but this build reads version %u: recompile", PLC_PLAN_VERSION);
    CU_ASSERT(decode_fails(d, n, older));
    d[8] = PLC_PLAN_VERSION;
    d[0] = 'X';
    CU_ASSERT(decode_fails(d, n, "not a plan file"));
    d[0] = 'P';
    d[12] = 0x03; /* byte-order probe */
    CU_ASSERT(decode_fails(d, n, "byte-order"));
    d[12] = 0x04;
    d[20] ^= 1; /* float probe */
    CU_ASSERT(decode_fails(d, n, "float-format"));
    d[20] ^= 1;
    CU_ASSERT(decode_fails(d, 5, "not a plan file"));
    free(d);
    plc_arena_free(&a);
}

/* rewrites the CRCs after a deliberate edit, so only the loader's semantic
 * checks stand between the edit and the runtime */
static void fix_crcs(uint8_t *d, size_t n)
{
    for (int s = 0; s < PLC_SEC_COUNT_; s++) {
        uint8_t *e = d + 32 + 24 * s;
        uint64_t off = 0, size = 0;
        for (int i = 7; i >= 0; i--) {
            off = off << 8 | e[8 + i];
            size = size << 8 | e[16 + i];
        }
        if (off > n || size > n - off) continue;
        uint32_t c = plc_crc32(0, d + off, (size_t)size);
        for (int i = 0; i < 4; i++) e[4 + i] = (uint8_t)(c >> (8 * i));
    }
    uint32_t c = plc_crc32(0, d + 32, 24 * PLC_SEC_COUNT_);
    for (int i = 0; i < 4; i++) d[28 + i] = (uint8_t)(c >> (8 * i));
}

static void test_section_offsets(void)
{
    plc_arena a;
    plc_arena_init(&a);
    plc_plan p;
    uint8_t *d = NULL;
    size_t n = 0;
    CU_ASSERT_FATAL(small_plan(&a, &p, &d, &n) == 0);
    /* PROGRAMS section (entry 3) offset far past the end */
    uint8_t saved = d[32 + 24 * 3 + 8 + 5];
    d[32 + 24 * 3 + 8 + 5] = 0x7f;
    fix_crcs(d, n);
    CU_ASSERT(decode_fails(d, n, "outside"));
    d[32 + 24 * 3 + 8 + 5] = saved;
    fix_crcs(d, n);
    /* huge instruction count in the first program */
    plc_arena b;
    plc_arena_init(&b);
    plc_plan q;
    char err[256];
    CU_ASSERT_FATAL(plc_plan_decode(&b, d, n, &q, err, sizeof err) == 0);
    plc_arena_free(&b);
    /* the program header follows u32 nprograms: u64 arena, i32, i32, u32 nbuf, u32 ninstr */
    uint64_t off = 0;
    for (int i = 7; i >= 0; i--) off = off << 8 | d[32 + 24 * 3 + 8 + i];
    uint8_t *ninstr = d + off + 4 + 8 + 4 + 4 + 4;
    ninstr[3] = 0x7f;
    fix_crcs(d, n);
    CU_ASSERT(decode_fails(d, n, "at most"));
    ninstr[3] = 0;
    ninstr[0]++; /* one more than the records expand to */
    fix_crcs(d, n);
    CU_ASSERT(decode_fails(d, n, "expand to"));
    free(d);
    plc_arena_free(&a);
}

/* 4 layers, 8 micro-batches, pipelined: loops over layers and micro-batches */
static int looped_plan(plc_arena *a, plc_plan *p)
{
    plc_job job;
    tp_job(&job, 4, false, 8);
    return tp_lower(&job, tp_layout(1, 1, 2, 1, 0, 0, PLC_RECOMPUTE_NONE, 1, PLC_SCHED_1F1B, 1), a, p);
}

/* the folded and the expanded file load to the same plan, row for row */
static void test_folded_equals_expanded(void)
{
    plc_arena a;
    plc_arena_init(&a);
    plc_plan p, qf, qx;
    uint8_t *df = NULL, *dx = NULL;
    size_t nf = 0, nx = 0;
    char err[256];
    CU_ASSERT_FATAL(looped_plan(&a, &p) == 0);
    CU_ASSERT_FATAL(plc_plan_encode_as(&p, PLC_PLAN_FOLDED, &df, &nf, err, sizeof err) == 0);
    CU_ASSERT_FATAL(plc_plan_encode_as(&p, PLC_PLAN_EXPANDED, &dx, &nx, err, sizeof err) == 0);
    CU_ASSERT(2 * nf < nx); /* folding pays even at 4 layers and 8 micro-batches */
    CU_ASSERT_FATAL(plc_plan_decode(&a, df, nf, &qf, err, sizeof err) == 0);
    CU_ASSERT_FATAL(plc_plan_decode(&a, dx, nx, &qx, err, sizeof err) == 0);
    uint32_t loops = 0;
    for (uint32_t pi = 0; pi < p.nprograms; pi++) {
        const plc_program *g = &p.programs[pi], *f = &qf.programs[pi], *x = &qx.programs[pi];
        CU_ASSERT_FATAL(f->ninstrs == g->ninstrs && x->ninstrs == g->ninstrs && f->nbuffers == g->nbuffers);
        CU_ASSERT(memcmp(f->instrs, g->instrs, g->ninstrs * sizeof *g->instrs) == 0);
        CU_ASSERT(memcmp(x->instrs, g->instrs, g->ninstrs * sizeof *g->instrs) == 0);
        for (uint32_t i = 0; i < g->nbuffers; i++) {
            const plc_buffer *b = &g->buffers[i], *c = &f->buffers[i];
            CU_ASSERT(strcmp(b->name, c->name) == 0 && b->offset == c->offset && b->bytes == c->bytes &&
                      b->kind == c->kind && b->rows == c->rows && b->cols == c->cols && b->tensor == c->tensor);
        }
        loops += f->ninstr_folds + f->nbuf_folds;
        CU_ASSERT(x->ninstr_folds == 0 && x->nbuf_folds == 0);
    }
    CU_ASSERT(loops > 0);
    free(df);
    free(dx);
    plc_arena_free(&a);
}

/* the first loop record at the top of program 0's buffer items (top-level
 * buffer leaves are 84 bytes), or NULL */
static uint8_t *first_buffer_loop(uint8_t *d)
{
    uint64_t off = 0;
    for (int i = 7; i >= 0; i--) off = off << 8 | d[32 + 24 * 3 + 8 + i];
    uint8_t *at = d + off + 4 + 8 + 4 + 4 + 4 + 4;
    uint32_t nitems = (uint32_t)at[0] | (uint32_t)at[1] << 8 | (uint32_t)at[2] << 16 | (uint32_t)at[3] << 24;
    at += 8;
    for (uint32_t i = 0; i < nitems; i++, at += 84)
        if (at[0] == 1) return at;
    return NULL;
}

/* damaged loop records behind valid checksums */
static void test_hostile_loops(void)
{
    struct {
        int field;     /* byte offset in the loop record (tag, count, nitems, first leaf's stride mask) */
        uint32_t value;
        const char *expect;
    } cases[] = {
        {0, 7, "neither a row"},          {4, 1, "at least 2"},
        {4, 0x7fffffff, "more than"},     {8, 0, "at least 2, 1"},
        {8, 0x7fffffff, "section PROGRAMS"},     {12 + 84, 0x80000000u, "beyond"},
        {12 + 84, 1u << 14, "a number the buffer name does not have"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        plc_arena a;
        plc_arena_init(&a);
        plc_plan p;
        uint8_t *d = NULL;
        size_t n = 0;
        CU_ASSERT_FATAL(looped_plan(&a, &p) == 0);
        CU_ASSERT_FATAL(encode(&p, &d, &n) == 0);
        uint8_t *loop = first_buffer_loop(d);
        CU_ASSERT_FATAL(loop != NULL);
        uint8_t *f = loop + cases[i].field;
        for (int k = 0; k < 4; k++) f[k] = (uint8_t)(cases[i].value >> (8 * k));
        fix_crcs(d, n);
        CU_ASSERT(decode_fails(d, n, cases[i].expect));
        free(d);
        plc_arena_free(&a);
    }
    /* one iteration more than written: the rows no longer add up */
    plc_arena a;
    plc_arena_init(&a);
    plc_plan p;
    uint8_t *d = NULL;
    size_t n = 0;
    CU_ASSERT_FATAL(looped_plan(&a, &p) == 0);
    CU_ASSERT_FATAL(encode(&p, &d, &n) == 0);
    uint8_t *loop = first_buffer_loop(d);
    CU_ASSERT_FATAL(loop != NULL);
    loop[4]++;
    fix_crcs(d, n);
    CU_ASSERT(decode_fails(d, n, "expand to"));
    free(d);
    plc_arena_free(&a);
}

/* edits of the decoded plan, re-encoded with valid checksums */
typedef void (*edit_fn)(plc_plan *p);

static void e_offset(plc_plan *p) { p->programs[0].buffers[3].offset = p->programs[0].arena_bytes; }
static void e_align(plc_plan *p) { p->programs[0].buffers[3].offset += 8; }
static void e_bufid(plc_plan *p) { p->programs[0].instrs[10].buf[0] = (int32_t)p->programs[0].nbuffers; }
static void e_wait(plc_plan *p) { p->programs[0].instrs[10].wait = 10; }
static void e_group(plc_plan *p) { p->programs[0].instrs[10].group = (int32_t)p->ngroups; }
static void e_peer(plc_plan *p) { p->programs[0].instrs[10].peer = (int32_t)p->layout.pp; }
static void e_op(plc_plan *p) { p->programs[0].instrs[10].op = (plc_op)(PLC_OP_COUNT + 3); }
static void e_world(plc_plan *p) { p->world_size = 7; }
static void e_stage(plc_plan *p) { p->stage_program[0] = 5; }
static void e_rows(plc_plan *p) { p->programs[0].buffers[2].rows = 1 << 20; }

static void e_choice_kind(plc_plan *p) { p->constraints.tp.kind = (plc_choice_kind)7; }
static void e_choice_order(plc_plan *p) { p->constraints.tp = (plc_choice){.kind = PLC_CHOICE_SET, .n = 2, .v = {4, 2}}; }
static void e_choice_enum(plc_plan *p)
{
    p->constraints.schedule = (plc_choice){.kind = PLC_CHOICE_SET, .n = 1, .v = {PLC_SCHED_COUNT}};
}
static void e_choice_range(plc_plan *p) { p->constraints.pp = (plc_choice){.kind = PLC_CHOICE_RANGE, .lo = 4, .hi = 2}; }
static void e_memory_limit(plc_plan *p) { p->constraints.memory_limit = 1.5; }

static void find_matmul(plc_plan *p, plc_instr **out)
{
    for (uint32_t i = 0; i < p->programs[0].ninstrs; i++)
        if (p->programs[0].instrs[i].op == PLC_OP_MATMUL) {
            *out = &p->programs[0].instrs[i];
            return;
        }
}
static void e_operand(plc_plan *p)
{
    plc_instr *m = NULL;
    find_matmul(p, &m);
    if (m) m->arg[0] *= 1000; /* M far beyond the buffers */
}
static void e_dtype(plc_plan *p)
{
    plc_instr *m = NULL;
    find_matmul(p, &m);
    if (m) p->programs[0].buffers[m->buf[1]].dtype = PLC_I32;
}

static void test_hostile_fields(void)
{
    struct {
        edit_fn f;
        const char *expect;
    } cases[] = {
        {e_offset, "outside"}, {e_align, "aligned"},  {e_bufid, "not a buffer id"}, {e_wait, "does not come before"},
        {e_group, "not a group id"}, {e_peer, "not a pipeline rank"}, {e_op, "out of range"},
        {e_world, "world size"}, {e_stage, "stage 0 runs program 5"}, {e_rows, "does not fit"},
        {e_operand, "the op touches"}, {e_dtype, "dtype"},
        {e_choice_kind, "tp has choice kind 7"}, {e_choice_order, "tp set holds 2, out of range or out of order"},
        {e_choice_enum, "schedule set holds 9"}, {e_choice_range, "pp range 4..2"}, {e_memory_limit, "memory_limit 1.5"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        plc_arena a;
        plc_arena_init(&a);
        plc_plan p;
        uint8_t *d = NULL;
        size_t n = 0;
        CU_ASSERT_FATAL(small_plan(&a, &p, &d, &n) == 0);
        free(d);
        cases[i].f(&p);
        CU_ASSERT_FATAL(encode(&p, &d, &n) == 0);
        CU_ASSERT(decode_fails(d, n, cases[i].expect));
        free(d);
        plc_arena_free(&a);
    }
}

static void test_file_errors(void)
{
    plc_arena a;
    plc_arena_init(&a);
    plc_plan p;
    char err[512];
    CU_ASSERT(plc_plan_load_file(&a, "no/such/plan.bin", &p, err, sizeof err) == -1);
    CU_ASSERT(strstr(err, "cannot open") != NULL);
    CU_ASSERT(plc_plan_load_file(&a, "unit/main.c", &p, err, sizeof err) == -1);
    CU_ASSERT(strstr(err, "not a plan file") != NULL);
    plc_arena_free(&a);
}

/* the op table's comm column: the collectives on a group, SEND/RECV with a
 * peer, nothing else; and a lowered plan agrees (a group on exactly the
 * collectives, a peer on exactly the messages) */
static void test_comm_column(void)
{
    const plc_op coll[] = {PLC_OP_ALLREDUCE, PLC_OP_REDUCE_SCATTER, PLC_OP_ALLGATHER, PLC_OP_BROADCAST};
    int ncoll = 0, npeer = 0;
    for (int op = 0; op < PLC_OP_COUNT; op++) {
        plc_comm_kind k = plc_op_comm((plc_op)op);
        CU_ASSERT(k == plc_op_contract_of((plc_op)op)->comm);
        ncoll += k == PLC_COMM_GROUP;
        npeer += k == PLC_COMM_PEER;
    }
    CU_ASSERT_EQUAL(ncoll, 4);
    CU_ASSERT_EQUAL(npeer, 2);
    for (size_t i = 0; i < sizeof coll / sizeof coll[0]; i++) CU_ASSERT_EQUAL(plc_op_comm(coll[i]), PLC_COMM_GROUP);
    CU_ASSERT_EQUAL(plc_op_comm(PLC_OP_SEND), PLC_COMM_PEER);
    CU_ASSERT_EQUAL(plc_op_comm(PLC_OP_RECV), PLC_COMM_PEER);
    CU_ASSERT_EQUAL(plc_op_comm(PLC_OP_MATMUL), PLC_COMM_NONE);
    CU_ASSERT_EQUAL(plc_op_comm(PLC_OP_COUNT), PLC_COMM_NONE);
    CU_ASSERT_EQUAL(plc_op_comm((plc_op)-1), PLC_COMM_NONE);

    plc_job job;
    tp_job(&job, 4, true, 4);
    plc_arena a;
    plc_arena_init(&a);
    plc_plan p;
    int seen[3] = {0};
    if (!tp_lower(&job, tp_layout(2, 2, 2, 1, 1, 0, PLC_RECOMPUTE_NONE, 1, PLC_SCHED_1F1B, 1), &a, &p)) {
        for (uint32_t g = 0; g < p.nprograms; g++)
            for (uint32_t i = 0; i < p.programs[g].ninstrs; i++) {
                const plc_instr *in = &p.programs[g].instrs[i];
                plc_comm_kind k = plc_op_comm(in->op);
                seen[k]++;
                CU_ASSERT_EQUAL(in->group >= 0, k == PLC_COMM_GROUP);
                if (k == PLC_COMM_PEER) CU_ASSERT(in->peer >= 0 && in->peer < p.layout.pp);
            }
    } else
        CU_FAIL("lowering failed");
    CU_ASSERT(seen[PLC_COMM_NONE] > 0 && seen[PLC_COMM_GROUP] > 0 && seen[PLC_COMM_PEER] > 0);
    plc_arena_free(&a);
}

void register_test_common_plan_io(void);
void register_test_common_plan_io(void)
{
    CU_pSuite s = CU_add_suite("plan_io", NULL, NULL);
    CU_add_test(s, "round trip: decode(encode(p)) encodes to the same bytes", test_round_trip);
    CU_add_test(s, "the same layout lowered twice: byte-identical plans", test_deterministic);
    CU_add_test(s, "truncation at every length is rejected", test_truncations);
    CU_add_test(s, "flipped bits are rejected", test_flipped_bits);
    CU_add_test(s, "wrong version, magic and probes", test_wrong_version_and_magic);
    CU_add_test(s, "section offsets and counts out of range", test_section_offsets);
    CU_add_test(s, "hostile fields behind valid checksums", test_hostile_fields);
    CU_add_test(s, "folded and expanded files load to the same plan", test_folded_equals_expanded);
    CU_add_test(s, "damaged loop records behind valid checksums", test_hostile_loops);
    CU_add_test(s, "missing and foreign files", test_file_errors);
    CU_add_test(s, "the op table's comm column, and a lowered plan agrees", test_comm_column);
}
