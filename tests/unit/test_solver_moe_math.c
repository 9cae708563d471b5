/* test_solver_moe_math.c: parameter counts and FLOPs of mixture-of-experts and
 * latent-attention models (compiler/solver/model_math.c) against published
 * counts, worked out by hand in the comments, and the example specs
 * (examples/mixtral-8x7b-h100.plan, deepseek-v3-h100.plan) resolving to
 * the same counts. */
#include <CUnit/CUnit.h>
#include <math.h>

#include "compiler/cli/cli.h"
#include "compiler/solver/solver.h"
#include "fe_test_util.h"
#include "test_solver_fixtures.h"

/* Mixtral-8x7B: 32 layers, h 4096, 32 heads, 8 kv heads, experts of width
 * 14336, 8 experts top-2, vocab 32000, untied, SwiGLU.
 *   attention: q 4096^2 + k, v 2 x 4096 x 1024 + o 4096^2   41,943,040
 *   router 4096 x 8                                              32,768
 *   an expert 3 x 4096 x 14336                              176,160,768
 *   norms 2 x 4096                                                8,192
 *   layer, all 8 experts                                  1,451,270,144
 *   layer, 2 experts                                        394,305,536
 *   embedding and head 2 x 32000 x 4096                     262,144,000
 *   final norm                                                    4,096
 *   total  32 x 1,451,270,144 + 262,148,096  = 46,702,792,704
 *   active 32 x   394,305,536 + 262,148,096  = 12,879,925,248 */
static void mixtral(plc_model *m)
{
    fixture_model(m, "mixtral-8x7b", 32, 4096, 14336, 32, 8, 32000, 4096, false);
    m->moe = (plc_moe){.experts = 8, .top_k = 2, .expert_ffn_hidden = 14336, .shared_ffn_hidden = 14336,
                       .moe_every = 1, .route_scale = 1};
}

static void test_mixtral(void)
{
    plc_model m;
    mixtral(&m);
    CU_ASSERT_EQUAL(plc_moe_layer_count(&m), 32);
    CU_ASSERT_EQUAL(plc_params_attention(&m), 41943040LL);
    CU_ASSERT_EQUAL(plc_params_moe_layer(&m, false), 1451270144LL);
    CU_ASSERT_EQUAL(plc_params_moe_layer(&m, true), 394305536LL);
    CU_ASSERT_EQUAL(plc_params_total(&m), 46702792704LL);
    CU_ASSERT_EQUAL(plc_params_active(&m), 12879925248LL);
    char buf[32];
    CU_ASSERT_STRING_EQUAL(plc_count_text(plc_params_total(&m), buf, sizeof buf), "46,702,792,704");
    /* forward FLOPs per token: 2 x the active matmul weights of each layer
     * (attention, router, 2 experts), the attention scores 4 h s (full
     * square), the head 2 h V */
    double layer = 2.0 * (41943040.0 + 32768.0 + 2 * 176160768.0) + 4.0 * 4096 * 4096;
    CU_ASSERT_DOUBLE_EQUAL(plc_flops_per_token_fwd(&m, false), 32 * layer + 2.0 * 4096 * 32000, 1.0);
    /* MFU's form counts the active parameters */
    CU_ASSERT_DOUBLE_EQUAL(plc_flops_per_token_palm(&m), 6.0 * 12879925248.0 + 12.0 * 32 * 4096 * 4096, 1.0);
}

/* DeepSeek-V3 without its multi-token-prediction module: 61 layers, h 7168,
 * 128 heads of latent attention (q_rank 1536, kv_rank 512, nope 128, rope
 * 64, v 128), the first 3 layers dense (ffn 18432), the other 58 with 256
 * routed experts of 2048 (top 8) and 1 shared, vocab 129280, untied.
 *   attention: 7168 x 1536 + 1536 x 128 x 192
 *            + 7168 x (512 + 64) + 512 x 128 x (128 + 128)
 *            + 128 x 128 x 7168                              187,105,280
 *   norms 2 x 7168 + 1536 + 512                                  16,384
 *   dense layer: + 3 x 7168 x 18432                          583,483,392
 *   an expert 3 x 7168 x 2048                                 44,040,192
 *   MoE layer: + router 7168 x 256 + 257 experts          11,507,286,016
 *   MoE layer, active: + router + 9 experts                  585,318,400
 *   embedding and head 2 x 129280 x 7168, final norm 7168
 *   total  3 x 583,483,392 + 58 x 11,507,286,016 + 1,853,365,248 = 671,026,404,352
 *   active 3 x 583,483,392 + 58 x 585,318,400 + 1,853,365,248    =  37,552,282,624
 * DeepSeek reports 671B and 37B activated. */
static void deepseek_v3(plc_model *m)
{
    fixture_model(m, "deepseek-v3", 61, 7168, 18432, 128, 128, 129280, 4096, false);
    m->moe = (plc_moe){.experts = 256, .top_k = 8, .shared_experts = 1, .expert_ffn_hidden = 2048,
                       .shared_ffn_hidden = 2048, .dense_layers = 3, .moe_every = 1, .router = PLC_ROUTER_SIGMOID,
                       .router_groups = 8, .router_groups_top = 4, .route_scale = 2.5, .aux_loss = 1e-4,
                       .expert_bias = true};
    m->mla = (plc_mla){.q_rank = 1536, .kv_rank = 512, .nope_head_dim = 128, .rope_head_dim = 64, .v_head_dim = 128};
}

static void test_deepseek_v3(void)
{
    plc_model m;
    deepseek_v3(&m);
    CU_ASSERT_EQUAL(plc_moe_layer_count(&m), 58);
    CU_ASSERT_FALSE(plc_layer_is_moe(&m, 2));
    CU_ASSERT_TRUE(plc_layer_is_moe(&m, 3));
    CU_ASSERT_EQUAL(plc_params_attention(&m), 187105280LL);
    CU_ASSERT_EQUAL(plc_params_layer(&m), 583483392LL);
    CU_ASSERT_EQUAL(plc_params_moe_layer(&m, false), 11507286016LL);
    CU_ASSERT_EQUAL(plc_params_moe_layer(&m, true), 585318400LL);
    CU_ASSERT_EQUAL(plc_params_total(&m), 671026404352LL);
    CU_ASSERT_EQUAL(plc_params_active(&m), 37552282624LL);
    /* latent attention's scores: 2 x heads x (qk 192 + v 128) x context */
    CU_ASSERT_DOUBLE_EQUAL(plc_flops_layer_attention_fwd(&m, false), 2.0 * 128 * 320 * 4096, 0);
    double dense = 2.0 * (187105280.0 + 3.0 * 7168 * 18432), moe = 2.0 * (187105280.0 + 7168.0 * 256 + 9 * 44040192.0);
    double attn = 2.0 * 128 * 320 * 4096;
    CU_ASSERT_DOUBLE_EQUAL(plc_flops_per_token_fwd(&m, false), 3 * (dense + attn) + 58 * (moe + attn) + 2.0 * 7168 * 129280,
                           1.0);
}

/* which layers are MoE: after dense_layers, every moe_every-th */
static void test_layer_pattern(void)
{
    plc_model m;
    mixtral(&m);
    m.layers = 10;
    m.moe.dense_layers = 1;
    m.moe.moe_every = 3; /* layers 1, 4, 7 */
    CU_ASSERT_EQUAL(plc_moe_layer_count(&m), 3);
    int64_t n = 0;
    for (int64_t i = 0; i < m.layers; i++) n += plc_layer_is_moe(&m, i);
    CU_ASSERT_EQUAL(n, 3);
    CU_ASSERT_TRUE(plc_layer_is_moe(&m, 1) && plc_layer_is_moe(&m, 4) && plc_layer_is_moe(&m, 7));
    CU_ASSERT_FALSE(plc_layer_is_moe(&m, 0) || plc_layer_is_moe(&m, 2) || plc_layer_is_moe(&m, 9));
    /* 7 dense layers, 3 MoE ones */
    CU_ASSERT_EQUAL(plc_params_total(&m), 7 * plc_params_layer(&m) + 3 * plc_params_moe_layer(&m, false) +
                                              plc_params_embedding(&m) + plc_params_norm(&m));
}

/* a dense model: active = total, and nothing MoE */
static void test_dense_unchanged(void)
{
    plc_model m;
    fixture_model(&m, "llama-7b", 32, 4096, 11008, 32, 32, 32000, 2048, false);
    CU_ASSERT_EQUAL(plc_moe_layer_count(&m), 0);
    CU_ASSERT_EQUAL(plc_params_moe_mlp(&m, false), 0);
    CU_ASSERT_EQUAL(plc_params_total(&m), 6738415616LL); /* Llama-7B's published count */
    CU_ASSERT_EQUAL(plc_params_active(&m), plc_params_total(&m));
}

/* GPT experts carry their biases: fc (width) and proj (hidden) each */
static void test_gpt_experts(void)
{
    plc_model m;
    fixture_model(&m, "gpt-moe", 2, 64, 256, 4, 4, 100, 32, true);
    m.arch = PLC_ARCH_GPT;
    m.positions = PLC_POS_LEARNED;
    m.moe = (plc_moe){.experts = 4, .top_k = 1, .expert_ffn_hidden = 128, .shared_ffn_hidden = 128, .moe_every = 1,
                      .route_scale = 1};
    int64_t expert = 2 * 64 * 128 + 128 + 64;
    CU_ASSERT_EQUAL(plc_params_moe_mlp(&m, false), 64 * 4 + 4 * expert);
    CU_ASSERT_EQUAL(plc_params_moe_mlp(&m, true), 64 * 4 + expert);
    int64_t dense_mlp = 2 * 64 * 256 + 256 + 64;
    CU_ASSERT_EQUAL(plc_params_moe_layer(&m, false), plc_params_layer(&m) - dense_mlp + 64 * 4 + 4 * expert);
}

/* latent attention without a query compression: one [hidden, heads (nope + rope)] projection */
static void test_mla_without_q_rank(void)
{
    plc_model m;
    fixture_model(&m, "mla", 2, 256, 512, 8, 8, 100, 32, false);
    m.mla = (plc_mla){.kv_rank = 32, .nope_head_dim = 16, .rope_head_dim = 8, .v_head_dim = 16};
    int64_t want = 256 * 8 * 24 + 256 * (32 + 8) + 32 * 8 * (16 + 16) + 8 * 16 * 256;
    CU_ASSERT_EQUAL(plc_params_attention(&m), want);
    CU_ASSERT_EQUAL(plc_params_layer_norms(&m), 2 * 256 + 32);
}

/* the examples resolve to the counts above */
static void example_counts(const char *path, int64_t total, int64_t active)
{
    FILE *f = fopen(path, "rb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    static char text[16384];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    fe_result r;
    fe_run(&r, text, NULL, 0);
    CU_ASSERT_EQUAL(r.errors, 0);
    if (r.errors) fprintf(stderr, "%s", r.out);
    CU_ASSERT_EQUAL(plc_params_total(&r.job.model), total);
    CU_ASSERT_EQUAL(plc_params_active(&r.job.model), active);
    fe_done(&r);
}

static void test_examples(void)
{
    example_counts("../examples/mixtral-8x7b-h100.plan", 46702792704LL, 12879925248LL);
    example_counts("../examples/deepseek-v3-h100.plan", 671026404352LL, 37552282624LL);
}

/* the reports' header says both counts for an MoE model, one for a dense one */
static void header_of(const plc_model *m, char *buf, size_t size)
{
    plc_job job;
    memset(&job, 0, sizeof job);
    job.model = *m;
    strcpy(job.cluster.hw.name, "H100-SXM5-80GB");
    job.cluster.nodes = 1;
    job.cluster.gpus_per_node = 8;
    job.train.global_batch = 8;
    FILE *f = fmemopen(buf, size, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    plc_report_job_header(f, &job);
    fclose(f);
}

static void test_report_header(void)
{
    char buf[1024];
    plc_model m;
    mixtral(&m);
    header_of(&m, buf, sizeof buf);
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "model mixtral-8x7b (46.70 B parameters, 12.88 B active),"));
    fixture_model(&m, "llama-7b", 32, 4096, 11008, 32, 32, 32000, 2048, false);
    header_of(&m, buf, sizeof buf);
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "model llama-7b (6.74 B parameters),"));
}

void register_test_solver_moe_math(void);
void register_test_solver_moe_math(void)
{
    CU_pSuite s = CU_add_suite("moe_math", NULL, NULL);
    CU_add_test(s, "Mixtral-8x7B parameters and FLOPs", test_mixtral);
    CU_add_test(s, "DeepSeek-V3 parameters and FLOPs", test_deepseek_v3);
    CU_add_test(s, "dense_layers and moe_every", test_layer_pattern);
    CU_add_test(s, "a dense model unchanged", test_dense_unchanged);
    CU_add_test(s, "GPT experts' biases", test_gpt_experts);
    CU_add_test(s, "latent attention without q_lora_rank", test_mla_without_q_rank);
    CU_add_test(s, "the examples' counts", test_examples);
    CU_add_test(s, "the report header's counts", test_report_header);
}
