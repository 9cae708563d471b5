/* test_fe_resolve.c: resolution into plc_job (defaults, units, choices) and
 * each semantic check with its message. */
#include <CUnit/CUnit.h>
#include <math.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/crc32.h"
#include "common/tokfile_format.h"

#include "compiler/frontend/frontend.h"
#include "compiler/frontend/frontend_int.h"
#include "fe_test_util.h"

#define VALID FE_MODEL FE_CLUSTER FE_TRAIN FE_LAYOUT

static void test_valid_and_defaults(void)
{
    fe_result r;
    fe_run(&r, VALID, NULL, 0);
    CU_ASSERT_EQUAL(r.errors, 0);
    CU_ASSERT_EQUAL(r.warnings, 0);
    const plc_job *j = &r.job;
    CU_ASSERT_STRING_EQUAL(j->model.name, "m");
    CU_ASSERT_EQUAL(j->model.layers, 4);
    CU_ASSERT_EQUAL(j->model.kv_heads, 4);
    CU_ASSERT_FALSE(j->model.tie_embeddings);
    CU_ASSERT_DOUBLE_EQUAL(j->model.norm_eps, 1e-5, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(j->model.rope_theta, 10000, 0);
    CU_ASSERT_EQUAL(plc_cluster_gpus(&j->cluster), 16);
    CU_ASSERT_STRING_EQUAL(j->cluster.hw.name, "A100-SXM4-80GB");
    CU_ASSERT_DOUBLE_EQUAL(j->cluster.hw.mem_bytes, 81920.0 * 1048576, 0);
    CU_ASSERT_DOUBLE_EQUAL(j->cluster.hw.flops_bf16, 312e12, 1);
    CU_ASSERT_DOUBLE_EQUAL(j->cluster.hw.inter_node_bw, 25e9, 1);
    CU_ASSERT_EQUAL(j->train.global_batch, 64);
    CU_ASSERT_EQUAL(j->train.precision, PLC_PREC_BF16);
    CU_ASSERT_EQUAL(j->train.engine, PLC_ENGINE_PLRUN);
    CU_ASSERT_DOUBLE_EQUAL(j->train.lr_peak, 3e-4, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(j->train.lr_floor, 3e-5, 1e-12);
    CU_ASSERT_EQUAL(j->train.decay_steps, 100);
    CU_ASSERT_EQUAL(j->train.seed, 1u);
    CU_ASSERT_PTR_NULL(j->train.data_path);
    CU_ASSERT_EQUAL(j->layout.tp.kind, PLC_CHOICE_AUTO);
    CU_ASSERT_EQUAL(j->layout.schedule.kind, PLC_CHOICE_AUTO);
    CU_ASSERT_DOUBLE_EQUAL(j->layout.memory_limit, 1.0, 0);
    CU_ASSERT_EQUAL(j->layout.objective, PLC_OBJ_TIME);
    fe_done(&r);
}

static void test_choices(void)
{
    fe_result r;
    fe_run(&r, FE_MODEL FE_CLUSTER FE_TRAIN
           "layout {\n tp in {4, 1, 2}\n pp in 1..4\n schedule in {interleaved, 1f1b}\n sp = on\n"
           " recompute = selective\n memory_limit = 0.9\n objective = memory\n}\n", NULL, 0);
    CU_ASSERT_EQUAL(r.errors, 0);
    const plc_layout_spec *l = &r.job.layout;
    CU_ASSERT_EQUAL(l->tp.kind, PLC_CHOICE_SET);
    CU_ASSERT_EQUAL(l->tp.n, 3);
    CU_ASSERT_EQUAL(l->tp.v[0], 1);
    CU_ASSERT_EQUAL(l->tp.v[2], 4);
    CU_ASSERT_EQUAL(l->pp.kind, PLC_CHOICE_RANGE);
    CU_ASSERT_EQUAL(l->pp.hi, 4);
    CU_ASSERT_EQUAL(l->schedule.n, 2);
    CU_ASSERT_EQUAL(l->schedule.v[0], PLC_SCHED_1F1B);
    CU_ASSERT_EQUAL(l->schedule.v[1], PLC_SCHED_INTERLEAVED);
    CU_ASSERT_EQUAL(l->sp.v[0], 1);
    CU_ASSERT_EQUAL(l->recompute.v[0], PLC_RECOMPUTE_SELECTIVE);
    CU_ASSERT_DOUBLE_EQUAL(l->memory_limit, 0.9, 1e-12);
    CU_ASSERT_EQUAL(l->objective, PLC_OBJ_MEMORY);
    fe_done(&r);
}

/* the gates block: thresholds as fractions, unset ones left at their
 * "not set" values (0, and no max_regression), 0% a real max_regression */
static void test_gates_block(void)
{
    fe_result r;
    fe_run(&r, VALID, NULL, 0);
    CU_ASSERT_EQUAL(r.errors, 0);
    CU_ASSERT_DOUBLE_EQUAL(r.job.gates.max_memory, 0, 0);
    CU_ASSERT_DOUBLE_EQUAL(r.job.gates.min_mfu, 0, 0);
    CU_ASSERT_FALSE(r.job.gates.has_regression);
    fe_done(&r);
    fe_run(&r, VALID "gates {\n max_memory = 80%\n min_mfu = 0.45\n max_regression = 0%\n}\n", NULL, 0);
    CU_ASSERT_EQUAL(r.errors, 0);
    CU_ASSERT_DOUBLE_EQUAL(r.job.gates.max_memory, 0.8, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(r.job.gates.min_mfu, 0.45, 1e-12);
    CU_ASSERT_TRUE(r.job.gates.has_regression);
    CU_ASSERT_DOUBLE_EQUAL(r.job.gates.max_regression, 0, 0);
    fe_done(&r);
    const char *d[] = {"gates.max_regression=2%"};
    fe_run(&r, VALID, d, 1);
    CU_ASSERT_EQUAL(r.errors, 0);
    CU_ASSERT_TRUE(r.job.gates.has_regression);
    CU_ASSERT_DOUBLE_EQUAL(r.job.gates.max_regression, 0.02, 1e-12);
    fe_done(&r);
}

static void test_tokens_to_sequences(void)
{
    fe_result r;
    const char *ok[] = {"train.global_batch = 16k tokens"};
    fe_run(&r, VALID, ok, 1);
    CU_ASSERT_EQUAL(r.errors, 0);
    CU_ASSERT_EQUAL(r.job.train.global_batch, 125); /* 16000 / 128 */
    fe_done(&r);
}

static void test_tokens_must_divide(void)
{
    fe_result r;
    const char *bad[] = {"train.global_batch = 1000 tokens"};
    fe_run(&r, VALID, bad, 1);
    CU_ASSERT_EQUAL(r.errors, 1);
    CU_ASSERT_TRUE(fe_has(&r, "global_batch = 1000 tokens is not a whole number of sequences of seq_len = 128"));
    CU_ASSERT_TRUE(fe_has(&r, "nearest: 896 tokens (7 sequences) or 1024 tokens (8 sequences)"));
    fe_done(&r);
    const char *good[] = {"train.global_batch = 1024 tokens"};
    fe_run(&r, VALID, good, 1);
    CU_ASSERT_EQUAL(r.errors, 0);
    CU_ASSERT_EQUAL(r.job.train.global_batch, 8);
    fe_done(&r);
}

/* 4M tokens is 4,000,000 where that makes whole sequences, else 4 x 2^20
 * (with a note); a sequence length of 8k is 8192 */
static void test_tokens_binary(void)
{
    fe_result r;
    const char *m4[] = {"model.seq_len = 4096", "train.global_batch = 4M tokens"};
    fe_run(&r, VALID, m4, 2);
    CU_ASSERT_EQUAL(r.errors, 0);
    CU_ASSERT_EQUAL(r.warnings, 0);
    CU_ASSERT_EQUAL(r.job.train.global_batch, 1024);
    CU_ASSERT_TRUE(fe_has(&r, "note: global_batch = 4M tokens read as 4 x 2^20 = 4194304 tokens: 1024 sequences"));
    fe_done(&r);
    const char *dec[] = {"model.seq_len = 1000", "train.global_batch = 4M tokens"};
    fe_run(&r, VALID, dec, 2);
    CU_ASSERT_EQUAL(r.errors, 0);
    CU_ASSERT_EQUAL(r.job.train.global_batch, 4000);
    CU_ASSERT_FALSE(fe_has(&r, "note:"));
    fe_done(&r);
    const char *k8[] = {"model.seq_len = 8k", "train.global_batch = 1M tokens"};
    fe_run(&r, VALID, k8, 2);
    CU_ASSERT_EQUAL(r.errors, 0);
    CU_ASSERT_EQUAL(r.job.model.seq_len, 8192);
    CU_ASSERT_EQUAL(r.job.train.global_batch, 128);
    CU_ASSERT_TRUE(fe_has(&r, "note: seq_len = 8k read as 8 x 2^10 = 8192 tokens"));
    fe_done(&r);
    /* neither reading divides: the hint offers a power of two */
    const char *none[] = {"model.seq_len = 8192", "train.global_batch = 1000000 tokens"};
    fe_run(&r, VALID, none, 2);
    CU_ASSERT_EQUAL(r.errors, 1);
    CU_ASSERT_TRUE(fe_has(&r, "(122 sequences) or 1007616 tokens (123 sequences); a power of two: 128 sequences (1048576 tokens)"));
    fe_done(&r);
}

/* a batch in sequences of more than 1e9 tokens a step: likely tokens without their unit */
static void test_batch_without_unit(void)
{
    fe_result r;
    const char *big[] = {"train.global_batch = 4M"};
    fe_run(&r, VALID, big, 1);
    CU_ASSERT_EQUAL(r.errors, 0);
    CU_ASSERT_EQUAL(r.warnings, 0); /* 5.12e8 tokens at seq_len = 128: plausible */
    fe_done(&r);
    const char *bigger[] = {"train.global_batch = 8M"}; /* 1.02e9 tokens */
    fe_run(&r, VALID, bigger, 1);
    CU_ASSERT_EQUAL(r.warnings, 1);
    CU_ASSERT_TRUE(fe_has(&r, "is 1.02e+09 tokens a step"));
    fe_done(&r);
}

/* mistakes in different blocks come in one run; a value in error skips only
 * the checks that read it */
static void test_independent_errors(void)
{
    fe_result r;
    const char *defs[] = {"model.kv_heads = 3", "train.lr.warmup = 500", "train.global_batch = 1000 tokens",
                          "layout.pp = 5", "layout.tp = 8"};
    fe_run(&r, VALID, defs, 5);
    CU_ASSERT_TRUE(fe_has(&r, "kv_heads = 3 does not divide heads = 8"));
    CU_ASSERT_TRUE(fe_has(&r, "'lr.warmup' = 500 is longer than the decay"));
    CU_ASSERT_TRUE(fe_has(&r, "global_batch = 1000 tokens is not a whole number"));
    CU_ASSERT_TRUE(fe_has(&r, "pp = 5 is more than layers = 4"));
    CU_ASSERT_FALSE(fe_has(&r, "kv_heads = 3; valid")); /* tp against kv_heads in error: skipped */
    CU_ASSERT_EQUAL(r.errors, 5); /* the four above and tp * pp against the 16 GPUs */
    fe_done(&r);
}

static void test_cluster_override(void)
{
    fe_result r;
    const char *defs[] = {"cluster.inter_node_bw = 400 Gbit/s", "cluster.memory = 40 GiB", "cluster.matmul_efficiency = 60%"};
    fe_run(&r, VALID, defs, 3);
    CU_ASSERT_EQUAL(r.errors, 0);
    CU_ASSERT_DOUBLE_EQUAL(r.job.cluster.hw.inter_node_bw, 50e9, 1);
    CU_ASSERT_DOUBLE_EQUAL(r.job.cluster.hw.mem_bytes, 40.0 * 1073741824, 0);
    CU_ASSERT_DOUBLE_EQUAL(r.job.cluster.hw.matmul_eff, 0.6, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(r.job.cluster.hw.flops_bf16, 312e12, 1); /* untouched */
    fe_done(&r);
}

/* overrides (one or two), the expected number of errors and one message */
static void expect_errors(const char *define, const char *define2, int n, const char *message)
{
    fe_result r;
    const char *defs[] = {define, define2};
    fe_run(&r, VALID, defs, define2 ? 2 : 1);
    CU_ASSERT_EQUAL(r.errors, n);
    if (!fe_has(&r, message)) {
        fprintf(stderr, "\n-D %s: expected \"%s\" in:\n%s\n", define, message, r.out ? r.out : "");
        CU_FAIL("message not found");
    }
    fe_done(&r);
}

static void expect_error(const char *define, const char *message) { expect_errors(define, NULL, 1, message); }

static void test_unknown_key(void) { expect_error("model.hiden = 4", "unknown key 'hiden' in block 'model'"); }
static void test_unknown_key_hint(void) { expect_error("model.hiden = 4", "hint: did you mean 'hidden'?"); }
static void test_wrong_unit(void) { expect_error("cluster.memory = 80 GB/s", "'memory' expects a size, not a bandwidth ('GB/s')"); }
static void test_missing_unit(void) { expect_error("cluster.hbm_bw = 2000", "'hbm_bw' needs a unit"); }
static void test_unknown_unit(void) { expect_error("cluster.memory = 80 GiBB", "unknown unit 'GiBB'"); }
static void test_unit_on_count(void) { expect_error("model.layers = 4 GiB", "'layers' is a plain number, not a size"); }
static void test_not_whole(void) { expect_error("train.steps = 1.5", "'steps' must be a whole number"); }
static void test_positive(void) { expect_error("model.layers = 0", "'layers' must be at least 1, not 0"); }
static void test_overflow(void) { expect_error("train.steps = 99999999999999999999", "number too large"); }
static void test_zero_range(void) { expect_error("layout.zero = 4", "'zero' must be between 0 and 3, not 4"); }
static void test_memory_limit(void) { expect_error("layout.memory_limit = 120%", "'memory_limit' must be above 0% and at most 100%"); }
static void test_bad_enum(void) { expect_error("layout.schedule = 1f2b", "unknown schedule '1f2b'"); }
static void test_bad_bool(void) { expect_error("model.tie_embeddings = yes", "'tie_embeddings' expects on or off"); }
static void test_type(void) { expect_error("cluster.gpu = A100", "'gpu' expects a \"string\", not a name"); }
static void test_kv_heads(void) { expect_error("model.kv_heads = 3", "kv_heads = 3 does not divide heads = 8; valid: 1, 2, 4, 8"); }
static void test_tp_heads(void) { expect_error("layout.tp = 16", "tp = 16 does not divide heads = 8; valid: 1, 2, 4"); }
/* plrun splits 4 layers over pp 3 as 1, 2, 1: only the 16 GPUs refuse it;
 * pp 8 leaves a stage without a layer */
static void test_pp_layers(void)
{
    expect_errors("layout.pp = 3", NULL, 1, "pp = 3 does not divide the 16 GPUs");
    expect_errors("layout.pp = 8", NULL, 1, "pp = 8 is more than layers = 4: every stage needs a layer; valid: 1 to 4");
}
static void test_cp_seq(void)
{
    expect_errors("layout.cp = 3", NULL, 2, "cp = 3 needs seq_len = 128 to split into 2 * cp = 6 equal chunks; valid: 1, 2, 4, 8, 16, 32, 64");
}
static void test_gpu_product(void) { expect_error("layout.cp = 32", "cp = 32 does not divide the 16 GPUs (nodes * gpus_per_node)"); }
static void test_dp_batch(void) { expect_errors("layout.dp = 16", "train.global_batch = 24", 1, "dp = 16 does not divide global_batch = 24 sequences"); }
static void test_mb_batch(void) { expect_error("layout.micro_batch = 3", "micro_batch = 3 does not divide global_batch = 64 sequences"); }
static void test_vpp_needs_pp(void) { expect_errors("layout.vpp = 2", "layout.pp = 1", 1, "vpp = 2 needs pipeline parallelism, but pp = 1"); }
static void test_vpp_schedule(void) { expect_errors("layout.vpp = 2", "layout.schedule = 1f1b", 1, "vpp = 2 needs schedule = interleaved, not 1f1b"); }
static void test_empty_set(void) { expect_error("layout.tp in {}", "empty set"); }
static void test_empty_range(void) { expect_error("layout.tp in 4..2", "empty range 4..2"); }
static void test_enum_range(void) { expect_error("layout.schedule in 1..2", "'schedule' takes a set, not a range"); }
static void test_lr_floor(void) { expect_error("train.lr.floor = 1", "'lr.floor' is above 'lr.peak'"); }
static void test_warmup(void) { expect_error("train.lr.warmup = 101", "'lr.warmup' = 101 is longer than the decay (steps = 100)"); }
static void test_beta(void) { expect_error("train.adamw.beta2 = 1", "'adamw.beta2' must be in [0, 1), not 1"); }
static void test_unknown_gpu(void) { expect_error("cluster.gpu = \"H100\"", "unknown GPU 'H100'"); }
static void test_block_name(void) { expect_error("cluster.nodes = 0", "'nodes' must be at least 1, not 0"); }
static void test_gates_range(void) { expect_error("gates.max_memory = 0%", "'max_memory' must be above 0% and at most 100%"); }
static void test_gates_regression_range(void) { expect_error("gates.max_regression = 150%", "'max_regression' must be at least 0% and at most 100%"); }
static void test_gates_unit(void) { expect_error("gates.min_mfu = 45 GB", "'min_mfu' expects a share, not a size ('GB')"); }

static void test_all_fixed_must_match(void)
{
    fe_result r;
    const char *defs[] = {"layout.dp = 2", "layout.tp = 2", "layout.pp = 2", "layout.cp = 1"};
    fe_run(&r, VALID, defs, 4);
    CU_ASSERT_EQUAL(r.errors, 1);
    CU_ASSERT_TRUE(fe_has(&r, "dp * tp * pp * cp = 8, but the cluster has 16 GPUs"));
    fe_done(&r);
}

static void test_duplicate_key(void)
{
    fe_result r;
    fe_run(&r, FE_MODEL FE_CLUSTER "train {\n  global_batch = 64\n  steps = 1\n  steps = 2\n}\n", NULL, 0);
    CU_ASSERT_EQUAL(r.errors, 1);
    CU_ASSERT_TRUE(fe_has(&r, "t.plan:18:3: error: duplicate key 'steps'"));
    CU_ASSERT_TRUE(fe_has(&r, "t.plan:17:3: note: 'steps' first set here"));
    fe_done(&r);
}

static void test_missing_key_and_block(void)
{
    fe_result r;
    fe_run(&r, "model \"m\" {\n  layers = 2\n}\n" FE_CLUSTER, NULL, 0);
    CU_ASSERT_TRUE(fe_has(&r, "t.plan:1:1: error: block 'model' lacks the required key 'hidden'"));
    CU_ASSERT_TRUE(fe_has(&r, "t.plan: error: missing block 'train'"));
    CU_ASSERT_EQUAL(r.errors, 6); /* hidden ffn_hidden heads vocab seq_len, train */
    fe_done(&r);
}

static void test_unknown_block(void)
{
    fe_result r;
    fe_run(&r, VALID "trian { }\n", NULL, 0);
    CU_ASSERT_EQUAL(r.errors, 1);
    CU_ASSERT_TRUE(fe_has(&r, "unknown block 'trian'"));
    CU_ASSERT_TRUE(fe_has(&r, "did you mean 'train'?"));
    fe_done(&r);
}

/* arch = gpt: learned positions and ffn_hidden = 4 x hidden unless told;
 * Llama keeps RoPE and its required ffn_hidden */
static void test_gpt_defaults(void)
{
    fe_result r;
    const char *gpt[] = {"model.arch = gpt"};
    fe_run(&r, VALID, gpt, 1);
    CU_ASSERT_EQUAL(r.errors, 0);
    CU_ASSERT_EQUAL(r.job.model.arch, PLC_ARCH_GPT);
    CU_ASSERT_EQUAL(r.job.model.positions, PLC_POS_LEARNED);
    CU_ASSERT_EQUAL(r.job.model.ffn_hidden, 688); /* FE_MODEL sets it: kept */
    fe_done(&r);
    const char *rope[] = {"model.arch = gpt", "model.positions = rope", "model.norm_eps = 1e-6"};
    fe_run(&r, VALID, rope, 3);
    CU_ASSERT_EQUAL(r.errors, 0);
    CU_ASSERT_EQUAL(r.job.model.positions, PLC_POS_ROPE);
    CU_ASSERT_DOUBLE_EQUAL(r.job.model.norm_eps, 1e-6, 1e-15);
    fe_done(&r);
    fe_run(&r, VALID, NULL, 0);
    CU_ASSERT_EQUAL(r.job.model.arch, PLC_ARCH_LLAMA);
    CU_ASSERT_EQUAL(r.job.model.positions, PLC_POS_ROPE);
    fe_done(&r);
    const char *text = "model \"g\" { arch = gpt layers = 2 hidden = 64 heads = 4 vocab = 100 seq_len = 16 }\n"
                       FE_CLUSTER FE_TRAIN;
    fe_run(&r, text, NULL, 0);
    CU_ASSERT_EQUAL(r.errors, 0);
    CU_ASSERT_EQUAL(r.job.model.ffn_hidden, 256);
    fe_done(&r);
    const char *llama = "model \"l\" { layers = 2 hidden = 64 heads = 4 vocab = 100 seq_len = 16 }\n"
                        FE_CLUSTER FE_TRAIN;
    fe_run(&r, llama, NULL, 0);
    CU_ASSERT_TRUE(fe_has(&r, "lacks the required key 'ffn_hidden'"));
    fe_done(&r);
    const char *bad[] = {"model.arch = gpt2"};
    fe_run(&r, VALID, bad, 1);
    CU_ASSERT_TRUE(fe_has(&r, "unknown arch 'gpt2'"));
    CU_ASSERT_TRUE(fe_has(&r, "did you mean 'gpt'?"));
    fe_done(&r);
}

/* train.engine: each name, a misspelling with its suggestion, a wrong type */
static void test_engine(void)
{
    const char *names[] = {"train.engine = plrun", "train.engine = megatron", "train.engine = fsdp2",
                           "train.engine = megatron_r0_8"};
    CU_ASSERT_EQUAL(sizeof names / sizeof names[0], PLC_ENGINE_COUNT);
    for (int e = 0; e < (int)(sizeof names / sizeof names[0]); e++) {
        fe_result r;
        fe_run(&r, VALID, &names[e], 1);
        CU_ASSERT_EQUAL(r.errors, 0);
        CU_ASSERT_EQUAL(r.job.train.engine, (plc_engine)e);
        CU_ASSERT_STRING_EQUAL(plc_engine_name(r.job.train.engine), names[e] + strlen("train.engine = "));
        fe_done(&r);
    }
    expect_error("train.engine = megatorn", "unknown engine 'megatorn'");
    expect_error("train.engine = megatorn", "did you mean 'megatron'? valid: plrun, megatron, fsdp2, megatron_r0_8");
    expect_error("train.engine = \"fsdp2\"", "'engine' expects one of plrun, megatron, fsdp2, megatron_r0_8, not a string");
    expect_error("layout.engine = fsdp2", "unknown key 'engine' in block 'layout'");
}

static void test_warnings(void)
{
    fe_result r;
    const char *defs[] = {"layout.sp = on", "layout.tp = 1", "layout.zero = 1", "layout.dp = 1"};
    fe_run(&r, VALID, defs, 4);
    CU_ASSERT_TRUE(fe_has(&r, "warning: sp = on has no effect with tp = 1"));
    CU_ASSERT_TRUE(fe_has(&r, "warning: zero = 1 has no effect with dp = 1"));
    CU_ASSERT_EQUAL(r.warnings, 2);
    fe_done(&r);
}

static void test_error_cap(void)
{
    /* 30 unknown keys: 20 printed, then one line saying the rest are hidden */
    char text[4096] = "model \"m\" {\n";
    for (int i = 0; i < 30; i++) sprintf(text + strlen(text), "  bad%d = 1\n", i);
    strcat(text, "}\n");
    plc_arena a;
    plc_arena_init(&a);
    fe_sink s;
    plc_diag *d = fe_sink_open(&s, 20);
    plc_source *src = plc_source_from_text(&a, "t.plan", text, strlen(text));
    int se;
    plc_ast *ast = plc_parse_source(&a, d, src, &se);
    plc_resolve_opts o = {NULL, "", false};
    plc_job job;
    plc_resolve(&a, d, ast, &o, &job);
    fe_sink_close(&s);
    int printed = 0;
    for (const char *p = s.out; (p = strstr(p, ": error: ")); p++) printed++;
    CU_ASSERT_EQUAL(printed, 20);
    CU_ASSERT_TRUE(d->errors > 30);
    CU_ASSERT_PTR_NOT_NULL(strstr(s.out, "too many errors"));
    free(s.out);
    plc_arena_free(&a);
}

/* a token file of n uint16 ids (id i = (i * 7) % mod, then one `last`) with
 * header vocabulary vocab; returns its CRC-32 */
static uint32_t write_tokens(const char *path, uint32_t vocab, int n, int mod, int last)
{
    uint8_t buf[32 + 2 * 512];
    CU_ASSERT_FATAL(n <= 512);
    memset(buf, 0, sizeof buf);
    const uint32_t head[4] = {PLC_TOKFILE_MAGIC, PLC_TOKFILE_VERSION, 2, vocab};
    for (int k = 0; k < 4; k++)
        for (int b = 0; b < 4; b++) buf[4 * k + b] = (uint8_t)(head[k] >> (8 * b));
    for (int b = 0; b < 4; b++) buf[16 + b] = (uint8_t)((uint32_t)n >> (8 * b));
    for (int i = 0; i < n; i++) {
        int v = i == n - 1 && last >= 0 ? last : (i * 7) % mod;
        buf[32 + 2 * i] = (uint8_t)v;
        buf[33 + 2 * i] = (uint8_t)(v >> 8);
    }
    FILE *f = fopen(path, "wb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT_EQUAL(fwrite(buf, 1, 32 + 2 * (size_t)n, f), 32 + 2 * (size_t)n);
    fclose(f);
    return plc_crc32(0, buf, 32 + 2 * (size_t)n);
}

/* resolves text with the spec in dir and the overrides; the errors, the
 * diagnostics in *out (freed by the caller) */
static int resolve_in(plc_arena *a, const char *text, const char *dir, const char *def, bool read_data, plc_job *job,
                      char **out)
{
    fe_sink s;
    plc_diag *d = fe_sink_open(&s, 100);
    plc_source *src = plc_source_from_text(a, "t.plan", text, strlen(text));
    int se;
    plc_ast *ast = plc_parse_source(a, d, src, &se);
    if (def) plc_spec_apply_defines(a, d, ast, &def, 1);
    plc_resolve_opts o = {NULL, dir, read_data};
    memset(job, 0, sizeof *job);
    int errors = plc_resolve(a, d, ast, &o, job);
    fe_sink_close(&s);
    *out = s.out;
    return errors;
}

/* A path in the spec is relative to the spec's directory, in -D to the cwd;
 * the job holds it relative to the spec's directory (an absolute one as
 * written), normalised, so that two checkouts give the same plan; the file
 * must be a token file that fits the model (vocab 1000, seq_len 128). */
static void test_data_path(void)
{
    char root[] = "/tmp/plc_resolve_data.XXXXXX";
    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(root));
    plc_arena a;
    plc_arena_init(&a);
    CU_ASSERT_EQUAL_FATAL(mkdir(plc_arena_printf(&a, "%s/specs", root), 0755), 0);
    CU_ASSERT_EQUAL_FATAL(mkdir(plc_arena_printf(&a, "%s/specs/llama", root), 0755), 0);
    uint32_t crc = write_tokens(plc_arena_printf(&a, "%s/specs/tok.bin", root), 1000, 200, 1000, -1);
    write_tokens(plc_arena_printf(&a, "%s/wide.bin", root), 0, 200, 900, 1500);   /* id 1500 at index 199 */
    write_tokens(plc_arena_printf(&a, "%s/gpt2.bin", root), 50257, 200, 900, -1); /* made for GPT-2 */
    write_tokens(plc_arena_printf(&a, "%s/short.bin", root), 1000, 100, 900, -1); /* < seq_len + 1 */
    const char *text = FE_MODEL FE_CLUSTER "train {\n  global_batch = 64\n  steps = 1\n  data = \"./../tok.bin\"\n}\n";
    const char *dir = plc_arena_printf(&a, "%s/specs/llama/../llama", root);
    plc_job job;
    char *out;

    CU_ASSERT_EQUAL(resolve_in(&a, text, dir, NULL, true, &job, &out), 0);
    free(out);
    CU_ASSERT_STRING_EQUAL(job.train.data_path, "../tok.bin");
    CU_ASSERT_EQUAL(job.train.data_size, 32 + 2 * 200);
    CU_ASSERT_EQUAL(job.train.data_crc32, crc);
    /* without read_data only the header is read: no fingerprint */
    CU_ASSERT_EQUAL(resolve_in(&a, text, dir, NULL, false, &job, &out), 0);
    free(out);
    CU_ASSERT_STRING_EQUAL(job.train.data_path, "../tok.bin");
    CU_ASSERT_EQUAL(job.train.data_size, 0);
    /* an absolute path is kept as written, normalised */
    const char *abs = plc_arena_printf(&a, "train.data = \"%s//specs/x/../tok.bin\"", root);
    CU_ASSERT_EQUAL(resolve_in(&a, text, dir, abs, true, &job, &out), 0);
    free(out);
    CU_ASSERT_STRING_EQUAL(job.train.data_path, plc_arena_printf(&a, "%s/specs/tok.bin", root));
    /* -D is relative to the working directory, stored relative to the spec */
    char cwd[4096];
    CU_ASSERT_PTR_NOT_NULL_FATAL(getcwd(cwd, sizeof cwd));
    const char *from_cwd = plc_arena_printf(&a, "train.data = \"%s\"",
                                            plc_path_relative(&a, cwd, plc_arena_printf(&a, "%s/specs/tok.bin", root)));
    CU_ASSERT_EQUAL(resolve_in(&a, text, dir, from_cwd, true, &job, &out), 0);
    free(out);
    CU_ASSERT_STRING_EQUAL(job.train.data_path, "../tok.bin");

    /* what plrun would refuse, at the value */
    CU_ASSERT_EQUAL(resolve_in(&a, text, dir, "train.data = \"nope.bin\"", true, &job, &out), 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "<command line>:1:14: error: token file \"nope.bin\": cannot open: No such file"));
    free(out);
    const char *wide = FE_MODEL FE_CLUSTER "train {\n  global_batch = 64\n  steps = 1\n  data = \"../../wide.bin\"\n}\n";
    CU_ASSERT_EQUAL(resolve_in(&a, wide, dir, NULL, true, &job, &out), 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "t.plan:18:10: error: token file \"../../wide.bin\": token id 1500 (at index 199) "
                                       "is outside the model's vocab of 1000"));
    free(out);
    CU_ASSERT_EQUAL(resolve_in(&a, wide, dir, NULL, false, &job, &out), 0); /* the header alone cannot tell */
    free(out);
    CU_ASSERT_EQUAL(resolve_in(&a, wide, dir, "train.data = \"/\"", false, &job, &out), 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "a directory, not a token file"));
    free(out);
    const char *gpt2 = plc_arena_printf(&a, "train.data = \"%s/gpt2.bin\"", root);
    CU_ASSERT_EQUAL(resolve_in(&a, text, dir, gpt2, false, &job, &out), 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "made for a vocabulary of 50257 but the model's vocab is 1000"));
    free(out);
    const char *shrt = plc_arena_printf(&a, "train.data = \"%s/short.bin\"", root);
    CU_ASSERT_EQUAL(resolve_in(&a, text, dir, shrt, true, &job, &out), 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "100 tokens, fewer than the seq_len + 1 = 129 one sample needs"));
    free(out);
    const char *names[] = {"specs/tok.bin", "wide.bin", "gpt2.bin", "short.bin", "specs/llama", "specs", ""};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        CU_ASSERT_EQUAL(remove(plc_arena_printf(&a, "%s/%s", root, names[i])), 0);
    plc_arena_free(&a);
}

/* the relative path a plan stores: lexical, from one directory to a file */
static void test_path_relative(void)
{
    plc_arena a;
    plc_arena_init(&a);
    CU_ASSERT_STRING_EQUAL(plc_path_relative(&a, "/a/b", "/a/c/d"), "../c/d");
    CU_ASSERT_STRING_EQUAL(plc_path_relative(&a, "/a", "/a/x"), "x");
    CU_ASSERT_STRING_EQUAL(plc_path_relative(&a, "/a", "/ab"), "../ab");
    CU_ASSERT_STRING_EQUAL(plc_path_relative(&a, "/a/b", "/a"), "..");
    CU_ASSERT_STRING_EQUAL(plc_path_relative(&a, "/a", "/a"), ".");
    CU_ASSERT_STRING_EQUAL(plc_path_relative(&a, "/", "/x/y"), "x/y");
    CU_ASSERT_STRING_EQUAL(plc_path_relative(&a, "/x/y/z", "/"), "../../..");
    plc_arena_free(&a);
}

/* lexical normalisation: what a plan stores for a file name */
static void test_path_normalise(void)
{
    plc_arena a;
    plc_arena_init(&a);
    CU_ASSERT_STRING_EQUAL(plc_path_normalise(&a, "/a//b/./c/../d/"), "/a/b/d");
    CU_ASSERT_STRING_EQUAL(plc_path_normalise(&a, "/../.."), "/");
    CU_ASSERT_STRING_EQUAL(plc_path_normalise(&a, "/x/.."), "/");
    CU_ASSERT_STRING_EQUAL(plc_path_normalise(&a, "/..a/.b/c.."), "/..a/.b/c..");
    CU_ASSERT_STRING_EQUAL(plc_path_absolute(&a, "/s", "../t/x.bin"), "/t/x.bin");
    CU_ASSERT_STRING_EQUAL(plc_path_absolute(&a, "/s", "/u/x.bin"), "/u/x.bin");
    CU_ASSERT_STRING_EQUAL(plc_path_base("specs/x.plan"), "x.plan");
    CU_ASSERT_STRING_EQUAL(plc_path_base("x.plan"), "x.plan");
    plc_arena_free(&a);
}

static void test_divisors(void)
{
    plc_arena a;
    plc_arena_init(&a);
    CU_ASSERT_STRING_EQUAL(plc_divisors_text(&a, 12), "1, 2, 3, 4, 6, 12");
    CU_ASSERT_STRING_EQUAL(plc_divisors_text(&a, 1), "1");
    CU_ASSERT_STRING_EQUAL(plc_divisors_text(&a, 49), "1, 7, 49");
    plc_arena_free(&a);
}

void register_test_fe_resolve(void);
void register_test_fe_resolve(void)
{
    CU_pSuite s = CU_add_suite("resolve", NULL, NULL);
    CU_add_test(s, "valid spec and defaults", test_valid_and_defaults);
    CU_add_test(s, "layout choices", test_choices);
    CU_add_test(s, "token batch", test_tokens_to_sequences);
    CU_add_test(s, "gates block", test_gates_block);
    CU_add_test(s, "gates range", test_gates_range);
    CU_add_test(s, "gates max_regression range", test_gates_regression_range);
    CU_add_test(s, "gates unit", test_gates_unit);
    CU_add_test(s, "token batch divides", test_tokens_must_divide);
    CU_add_test(s, "token batch binary reading", test_tokens_binary);
    CU_add_test(s, "batch without a unit", test_batch_without_unit);
    CU_add_test(s, "independent errors in one run", test_independent_errors);
    CU_add_test(s, "cluster overrides", test_cluster_override);
    CU_add_test(s, "unknown key", test_unknown_key);
    CU_add_test(s, "unknown key hint", test_unknown_key_hint);
    CU_add_test(s, "wrong unit", test_wrong_unit);
    CU_add_test(s, "missing unit", test_missing_unit);
    CU_add_test(s, "unknown unit", test_unknown_unit);
    CU_add_test(s, "unit on a count", test_unit_on_count);
    CU_add_test(s, "whole number", test_not_whole);
    CU_add_test(s, "positive", test_positive);
    CU_add_test(s, "overflow", test_overflow);
    CU_add_test(s, "zero range", test_zero_range);
    CU_add_test(s, "memory limit", test_memory_limit);
    CU_add_test(s, "bad enum", test_bad_enum);
    CU_add_test(s, "bad bool", test_bad_bool);
    CU_add_test(s, "value type", test_type);
    CU_add_test(s, "kv_heads divides heads", test_kv_heads);
    CU_add_test(s, "tp divides heads", test_tp_heads);
    CU_add_test(s, "pp divides layers", test_pp_layers);
    CU_add_test(s, "2 cp divides seq_len", test_cp_seq);
    CU_add_test(s, "degrees divide GPUs", test_gpu_product);
    CU_add_test(s, "all degrees fixed", test_all_fixed_must_match);
    CU_add_test(s, "dp divides batch", test_dp_batch);
    CU_add_test(s, "micro_batch divides batch", test_mb_batch);
    CU_add_test(s, "vpp needs pp", test_vpp_needs_pp);
    CU_add_test(s, "vpp needs interleaved", test_vpp_schedule);
    CU_add_test(s, "empty set", test_empty_set);
    CU_add_test(s, "empty range", test_empty_range);
    CU_add_test(s, "enum range", test_enum_range);
    CU_add_test(s, "lr floor", test_lr_floor);
    CU_add_test(s, "warmup", test_warmup);
    CU_add_test(s, "beta", test_beta);
    CU_add_test(s, "unknown gpu", test_unknown_gpu);
    CU_add_test(s, "nodes", test_block_name);
    CU_add_test(s, "duplicate key", test_duplicate_key);
    CU_add_test(s, "missing key and block", test_missing_key_and_block);
    CU_add_test(s, "unknown block", test_unknown_block);
    CU_add_test(s, "arch = gpt and its defaults", test_gpt_defaults);
    CU_add_test(s, "engine", test_engine);
    CU_add_test(s, "warnings", test_warnings);
    CU_add_test(s, "error cap", test_error_cap);
    CU_add_test(s, "data path", test_data_path);
    CU_add_test(s, "relative path", test_path_relative);
    CU_add_test(s, "path normalise", test_path_normalise);
    CU_add_test(s, "divisors", test_divisors);
}
