/* test_solver_head_dim.c: a head width apart from hidden / heads and qk-norm
 * (Qwen3; plc_model.head_dim, .qk_norm): parameter counts against Qwen3's
 * published ones, worked out by hand in the comments; the example spec
 * resolving to them; the attention FLOPs and GEMM shapes reading
 * heads x head_dim; the plan file carrying both fields; and plrun's
 * lowering refusing them with its reason. */
#include <CUnit/CUnit.h>
#include <math.h>

#include "compiler/solver/solver.h"
#include "fe_test_util.h"
#include "test_plan_util.h"
#include "test_solver_fixtures.h"

/* Qwen3-30B-A3B (its Hugging Face config): 48 layers, h 2048, 32 heads of
 * 128 (not 2048 / 32 = 64), 4 kv heads, qk-norm, 128 SwiGLU experts of 768,
 * top 8, vocab 151936, untied.
 *   attention: q 2048 x 4096 + k, v 2 x 2048 x 512 + o 4096 x 2048  18,874,368
 *   norms 2 x 2048 + qk-norm 2 x 128                                  4,352
 *   router 2048 x 128                                               262,144
 *   an expert 3 x 2048 x 768                                      4,718,592
 *   layer, all 128 experts                                      623,120,640
 *   layer, 8 experts                                             56,889,600
 *   embedding and head 2 x 151936 x 2048, final norm 2048       622,331,904
 *   total  48 x 623,120,640 + 622,331,904 = 30,532,122,624 (HF: 30.5B)
 *   active 48 x  56,889,600 + 622,331,904 =  3,353,032,704 (HF: 3.3B) */
static void qwen3_30b(plc_model *m)
{
    fixture_model(m, "qwen3-30b-a3b", 48, 2048, 6144, 32, 4, 151936, 4096, false);
    m->head_dim = 128;
    m->qk_norm = true;
    m->moe = (plc_moe){.experts = 128, .top_k = 8, .expert_ffn_hidden = 768, .shared_ffn_hidden = 768,
                       .moe_every = 1, .route_scale = 1, .aux_loss = 0.001};
}

static void test_qwen3_30b(void)
{
    plc_model m;
    qwen3_30b(&m);
    CU_ASSERT_EQUAL(plc_head_dim(&m), 128);
    CU_ASSERT_EQUAL(plc_params_attention(&m), 18874368LL);
    CU_ASSERT_EQUAL(plc_params_layer_norms(&m), 4352LL);
    CU_ASSERT_EQUAL(plc_params_moe_layer(&m, false), 623120640LL);
    CU_ASSERT_EQUAL(plc_params_moe_layer(&m, true), 56889600LL);
    CU_ASSERT_EQUAL(plc_params_total(&m), 30532122624LL);
    CU_ASSERT_EQUAL(plc_params_active(&m), 3353032704LL);
    /* the scores and the weighted values over 32 heads of 128 channels:
     * 2 x 32 x (128 + 128) x 4096, the full square */
    CU_ASSERT_DOUBLE_EQUAL(plc_flops_layer_attention_fwd(&m, false), 2.0 * 32 * 256 * 4096, 0.5);
    /* without qk-norm: 2 x 128 parameters a layer fewer */
    m.qk_norm = false;
    CU_ASSERT_EQUAL(plc_params_total(&m), 30532122624LL - 48 * 256);
}

/* Qwen3-235B-A22B: 94 layers, h 4096, 64 heads of 128, 4 kv heads,
 * qk-norm, 128 experts of 1536, top 8, vocab 151936, untied.
 *   attention: 2 x 4096 x 8192 + 2 x 4096 x 512                     71,303,168
 *   norms 2 x 4096 + 256, router 4096 x 128                            532,736
 *   an expert 3 x 4096 x 1536                                       18,874,368
 *   embedding and head 2 x 151936 x 4096, final norm 4096        1,244,663,808
 *   total  94 x (71,835,904 + 128 x 18,874,368) + 1,244,663,808 = 235,093,634,560
 *   active 94 x (71,835,904 +   8 x 18,874,368) + 1,244,663,808 =  22,190,763,520 */
static void test_qwen3_235b(void)
{
    plc_model m;
    fixture_model(&m, "qwen3-235b-a22b", 94, 4096, 12288, 64, 4, 151936, 4096, false);
    m.head_dim = 128;
    m.qk_norm = true;
    m.moe = (plc_moe){.experts = 128, .top_k = 8, .expert_ffn_hidden = 1536, .shared_ffn_hidden = 1536,
                      .moe_every = 1, .route_scale = 1};
    CU_ASSERT_EQUAL(plc_params_attention(&m), 71303168LL);
    CU_ASSERT_EQUAL(plc_params_total(&m), 235093634560LL);
    CU_ASSERT_EQUAL(plc_params_active(&m), 22190763520LL);
}

/* head_dim = hidden / heads given outright changes nothing */
static void test_dense_unchanged(void)
{
    plc_model a, b;
    fixture_model(&a, "llama-7b", 32, 4096, 11008, 32, 32, 32000, 2048, false);
    b = a;
    b.head_dim = 128;
    CU_ASSERT_EQUAL(plc_params_total(&a), 6738415616LL);
    CU_ASSERT_EQUAL(plc_params_total(&b), plc_params_total(&a));
    CU_ASSERT_DOUBLE_EQUAL(plc_flops_per_token_fwd(&b, true), plc_flops_per_token_fwd(&a, true), 0.0);
    char why[256];
    CU_ASSERT_EQUAL(plc_model_plrun_heads(&b, why, sizeof why), 0);
}

/* the fused q/k/v product's width and the output projection's depth are
 * heads x head_dim (over tp), not hidden */
static void test_gemm_shapes(void)
{
    plc_job job;
    memset(&job, 0, sizeof job);
    fixture_model(&job.model, "qwen3-dense", 4, 2048, 6144, 32, 4, 1000, 256, false);
    job.model.head_dim = 128;
    plc_layout l;
    memset(&l, 0, sizeof l);
    l.tp = 2; l.cp = 1; l.micro_batch = 1;
    plc_gemm_shape g[PLC_LAYER_GEMMS];
    plc_layer_gemms(&job, &l, g);
    CU_ASSERT_EQUAL(g[0].K, 2048);
    CU_ASSERT_EQUAL(g[0].N, (32 + 2 * 4) * 128 / 2);
    CU_ASSERT_EQUAL(g[1].K, 32 * 128 / 2);
    CU_ASSERT_EQUAL(g[1].N, 2048);
}

/* the memory and time models: the attention's activations and the
 * elementwise work read heads x head_dim, and qk-norm adds its input (and
 * unfused its fp32 copy) and a norm pass over q and k */
static void test_memory_and_time(void)
{
    plc_job job;
    fixture_llama13b(&job, 1);
    job.cluster.hw.kernel_launch = 5e-6;
    plc_layout l;
    memset(&l, 0, sizeof l);
    l.dp = 1; l.tp = 2; l.pp = 1; l.cp = 1; l.vpp = 1; l.micro_batch = 1;
    l.attention = PLC_ATTN_FLASH2;
    double T = (double)job.model.seq_len, a = 2.0;
    double base = plc_act_layer_bytes(&job, &l, PLC_RECOMPUTE_NONE);
    plc_layer_times t0, t1;
    plc_layer_times_of(&job, &l, &t0);
    /* llama-13b's 40 heads of 128, then of 256: the q, k, v, and the
     * attention output kept grow by (q + 2 kv + q) / tp x a per token */
    job.model.head_dim = 256;
    double wide = plc_act_layer_bytes(&job, &l, PLC_RECOMPUTE_NONE);
    CU_ASSERT_DOUBLE_EQUAL(wide - base, T * (40.0 * 128 * 4) / 2 * a, 1.0);
    plc_layer_times_of(&job, &l, &t1);
    CU_ASSERT(t1.matmul_f > t0.matmul_f);
    CU_ASSERT(t1.attn_f > 1.99 * t0.attn_f && t1.attn_f < 2.01 * t0.attn_f);
    /* qk-norm: the input of q and k, plus an fp32 copy unfused */
    job.model.qk_norm = true;
    double qk = plc_act_layer_bytes(&job, &l, PLC_RECOMPUTE_NONE);
    double qk_width = 40.0 * 256 + 40.0 * 256; /* kv_heads = heads in this fixture */
    CU_ASSERT_DOUBLE_EQUAL(qk - wide, T * qk_width / 2 * (a + (l.fused_rmsnorm ? 0.0 : 4.0)), 1.0);
    plc_layer_times t2;
    plc_layer_times_of(&job, &l, &t2);
    CU_ASSERT(t2.mem_f > t1.mem_f);
    CU_ASSERT(t2.launch_f > t1.launch_f);
    CU_ASSERT_EQUAL(plc_layer_tensors(&job.model), PLC_LAYER_TENSORS + 2);
}

/* the example spec resolves to the counts above */
static void test_example(void)
{
    FILE *f = fopen("../examples/qwen3-30b-a3b-h100.plan", "rb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    static char text[16384];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    fe_result r;
    fe_run(&r, text, NULL, 0);
    CU_ASSERT_EQUAL(r.errors, 0);
    if (r.errors) fprintf(stderr, "%s", r.out);
    CU_ASSERT_EQUAL(r.job.model.head_dim, 128);
    CU_ASSERT(r.job.model.qk_norm);
    CU_ASSERT_EQUAL(plc_params_total(&r.job.model), 30532122624LL);
    CU_ASSERT_EQUAL(plc_params_active(&r.job.model), 3353032704LL);
    fe_done(&r);
}

/* the front end: head_dim frees hidden from being a multiple of heads */
static void test_front_end(void)
{
    const char *spec = "model \"q\" {\n  layers = 2\n  hidden = 2000\n  ffn_hidden = 512\n  heads = 32\n"
                       "  kv_heads = 4\n%s  vocab = 1000\n  seq_len = 128\n}\n"
                       "cluster {\n  gpu = \"A100-SXM4-80GB\"\n}\ntrain {\n  global_batch = 64\n  steps = 10\n}\n";
    char text[1024];
    fe_result r;
    snprintf(text, sizeof text, spec, "  head_dim = 64\n  qk_norm = on\n");
    fe_run(&r, text, NULL, 0);
    CU_ASSERT_EQUAL(r.errors, 0);
    if (r.errors) fprintf(stderr, "%s", r.out);
    CU_ASSERT_EQUAL(r.job.model.head_dim, 64);
    CU_ASSERT(r.job.model.qk_norm);
    fe_done(&r);
    snprintf(text, sizeof text, spec, "");
    fe_run(&r, text, NULL, 0);
    CU_ASSERT_EQUAL(r.errors, 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "heads = 32 does not divide hidden = 2000"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "unless head_dim sets it"));
    CU_ASSERT_EQUAL(r.job.model.head_dim, 0);
    CU_ASSERT(!r.job.model.qk_norm);
    fe_done(&r);
}

/* plrun's lowering refuses both, saying why */
static void test_lowering_refuses(void)
{
    for (int qk = 0; qk < 2; qk++) {
        plc_job job;
        tp_job(&job, 4, false, 2);
        if (qk) job.model.qk_norm = true;
        else job.model.head_dim = 2 * plc_model_head_dim(&job.model);
        plc_arena a;
        plc_arena_init(&a);
        plc_plan p;
        plc_layout l = tp_layout(1, 1, 1, 1, 0, 0, PLC_RECOMPUTE_NONE, 1, PLC_SCHED_1F1B, 1);
        char err[512] = "";
        CU_ASSERT(plc_lower(&job, &l, NULL, &a, &p, NULL, err, sizeof err) != 0);
        CU_ASSERT_PTR_NOT_NULL(strstr(err, "plrun's lowering runs head_dim = hidden / heads only"));
        CU_ASSERT_PTR_NOT_NULL(strstr(err, qk ? "qk_norm = on" : "head_dim = "));
        plc_arena_free(&a);
    }
}

/* the plan file keeps both fields and refuses a head_dim out of range */
static void test_plan_fields(void)
{
    for (int bad = 0; bad < 2; bad++) {
        plc_job job;
        tp_job(&job, 4, false, 2);
        plc_arena a;
        plc_arena_init(&a);
        plc_plan p, q;
        CU_ASSERT_FATAL(tp_lower(&job, tp_layout(1, 1, 1, 1, 0, 0, PLC_RECOMPUTE_NONE, 1, PLC_SCHED_1F1B, 1), &a, &p) == 0);
        p.model.head_dim = bad ? 2048 : 96; /* set after lowering: the file format is what is tested */
        p.model.qk_norm = true;
        uint8_t *d = NULL;
        size_t n = 0;
        char err[256] = "";
        CU_ASSERT_FATAL(plc_plan_encode(&p, &d, &n, err, sizeof err) == 0);
        int rc = plc_plan_decode(&a, d, n, &q, err, sizeof err);
        if (bad) {
            CU_ASSERT(rc != 0);
            CU_ASSERT_PTR_NOT_NULL(strstr(err, "head_dim 2048 out of range"));
        } else {
            CU_ASSERT_FATAL(rc == 0);
            CU_ASSERT_EQUAL(q.model.head_dim, 96);
            CU_ASSERT(q.model.qk_norm);
            char *s = tp_dump(&q, -1);
            CU_ASSERT_PTR_NOT_NULL(s);
            if (s) CU_ASSERT_PTR_NOT_NULL(strstr(s, "\nheads: head_dim=96 qk_norm=on\n"));
            free(s);
        }
        free(d);
        plc_arena_free(&a);
    }
}

void register_test_solver_head_dim(void);
void register_test_solver_head_dim(void)
{
    CU_pSuite s = CU_add_suite("head_dim", NULL, NULL);
    CU_add_test(s, "Qwen3-30B-A3B parameters", test_qwen3_30b);
    CU_add_test(s, "Qwen3-235B-A22B parameters", test_qwen3_235b);
    CU_add_test(s, "head_dim = hidden / heads changes nothing", test_dense_unchanged);
    CU_add_test(s, "GEMM shapes read heads x head_dim", test_gemm_shapes);
    CU_add_test(s, "memory and time models", test_memory_and_time);
    CU_add_test(s, "the Qwen3 example's counts", test_example);
    CU_add_test(s, "front end", test_front_end);
    CU_add_test(s, "plrun's lowering refuses", test_lowering_refuses);
    CU_add_test(s, "plan file fields", test_plan_fields);
}
