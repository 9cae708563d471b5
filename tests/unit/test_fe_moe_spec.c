/* test_fe_moe_spec.c: the model block's mixture-of-experts and latent-attention
 * keys resolved into plc_model (plc_moe, plc_mla): their defaults, their
 * values, -D overrides, and the checks between them (the messages
 * themselves are golden-tested in tests/errors/moe_*.plan and mla_keys.plan). */
#include <CUnit/CUnit.h>

#include "fe_test_util.h"

#define MOE_CLUSTER_TRAIN FE_CLUSTER FE_TRAIN FE_LAYOUT

/* a dense model has every MoE and MLA field zero */
static void test_dense_is_zero(void)
{
    fe_result r;
    fe_run(&r, FE_MODEL MOE_CLUSTER_TRAIN, NULL, 0);
    CU_ASSERT_EQUAL(r.errors, 0);
    CU_ASSERT_EQUAL(r.job.model.moe.experts, 0);
    CU_ASSERT_EQUAL(r.job.model.mla.kv_rank, 0);
    CU_ASSERT_EQUAL(r.job.model.mla.q_rank, 0);
    fe_done(&r);
}

/* Mixtral's keys: the widths default to ffn_hidden, the router to softmax */
static void test_defaults(void)
{
    fe_result r;
    fe_run(&r, "model \"m\" {\n layers = 4\n hidden = 256\n ffn_hidden = 688\n heads = 8\n vocab = 1000\n"
               " seq_len = 128\n experts = 8\n experts_per_token = 2\n}\n" MOE_CLUSTER_TRAIN, NULL, 0);
    CU_ASSERT_EQUAL(r.errors, 0);
    const plc_moe *e = &r.job.model.moe;
    CU_ASSERT_EQUAL(e->experts, 8);
    CU_ASSERT_EQUAL(e->top_k, 2);
    CU_ASSERT_EQUAL(e->shared_experts, 0);
    CU_ASSERT_EQUAL(e->expert_ffn_hidden, 688);
    CU_ASSERT_EQUAL(e->shared_ffn_hidden, 688);
    CU_ASSERT_EQUAL(e->dense_layers, 0);
    CU_ASSERT_EQUAL(e->moe_every, 1);
    CU_ASSERT_EQUAL(e->router, PLC_ROUTER_SOFTMAX);
    CU_ASSERT_EQUAL(e->router_groups, 0);
    CU_ASSERT_EQUAL(e->router_groups_top, 0);
    CU_ASSERT_DOUBLE_EQUAL(e->route_scale, 1.0, 0);
    CU_ASSERT_DOUBLE_EQUAL(e->aux_loss, 0.0, 0);
    CU_ASSERT_FALSE(e->expert_bias);
    CU_ASSERT_DOUBLE_EQUAL(e->capacity_factor, 0.0, 0); /* dropless */
    fe_done(&r);
}

#define DEEPSEEK_LIKE                                                                                         \
    "model \"m\" {\n layers = 6\n hidden = 256\n ffn_hidden = 1024\n heads = 8\n vocab = 1000\n seq_len = 128\n" \
    " experts = 16\n experts_per_token = 4\n shared_experts = 1\n expert_ffn_hidden = 64\n"                       \
    " shared_expert_ffn_hidden = 128\n dense_layers = 2\n moe_every = 2\n router = sigmoid\n"                    \
    " router_groups = 4\n router_groups_top = 2\n route_scale = 2.5\n aux_loss = 0.001\n expert_bias = on\n"     \
    " capacity_factor = 1.25\n q_lora_rank = 96\n kv_lora_rank = 32\n qk_nope_head_dim = 32\n"                  \
    " qk_rope_head_dim = 16\n v_head_dim = 32\n}\n"

/* every key, as written */
static void test_every_key(void)
{
    fe_result r;
    fe_run(&r, DEEPSEEK_LIKE MOE_CLUSTER_TRAIN, NULL, 0);
    CU_ASSERT_EQUAL(r.errors, 0);
    CU_ASSERT_EQUAL(r.warnings, 0);
    const plc_moe *e = &r.job.model.moe;
    CU_ASSERT_EQUAL(e->experts, 16);
    CU_ASSERT_EQUAL(e->top_k, 4);
    CU_ASSERT_EQUAL(e->shared_experts, 1);
    CU_ASSERT_EQUAL(e->expert_ffn_hidden, 64);
    CU_ASSERT_EQUAL(e->shared_ffn_hidden, 128);
    CU_ASSERT_EQUAL(e->dense_layers, 2);
    CU_ASSERT_EQUAL(e->moe_every, 2);
    CU_ASSERT_EQUAL(e->router, PLC_ROUTER_SIGMOID);
    CU_ASSERT_EQUAL(e->router_groups, 4);
    CU_ASSERT_EQUAL(e->router_groups_top, 2);
    CU_ASSERT_DOUBLE_EQUAL(e->route_scale, 2.5, 0);
    CU_ASSERT_DOUBLE_EQUAL(e->aux_loss, 0.001, 0);
    CU_ASSERT_TRUE(e->expert_bias);
    CU_ASSERT_DOUBLE_EQUAL(e->capacity_factor, 1.25, 0);
    const plc_mla *l = &r.job.model.mla;
    CU_ASSERT_EQUAL(l->q_rank, 96);
    CU_ASSERT_EQUAL(l->kv_rank, 32);
    CU_ASSERT_EQUAL(l->nope_head_dim, 32);
    CU_ASSERT_EQUAL(l->rope_head_dim, 16);
    CU_ASSERT_EQUAL(l->v_head_dim, 32);
    CU_ASSERT_EQUAL(r.job.model.kv_heads, 8); /* every head its own key and value */
    fe_done(&r);
}

/* -D sets and overrides the keys as any other */
static void test_defines(void)
{
    const char *defs[] = {"model.experts=32", "model.capacity_factor=dropless", "model.router=softmax",
                          "model.router_groups=8"};
    fe_result r;
    fe_run(&r, DEEPSEEK_LIKE MOE_CLUSTER_TRAIN, defs, 4);
    CU_ASSERT_EQUAL(r.errors, 0);
    CU_ASSERT_EQUAL(r.job.model.moe.experts, 32);
    CU_ASSERT_DOUBLE_EQUAL(r.job.model.moe.capacity_factor, 0.0, 0);
    CU_ASSERT_EQUAL(r.job.model.moe.router, PLC_ROUTER_SOFTMAX);
    CU_ASSERT_EQUAL(r.job.model.moe.router_groups, 8);
    fe_done(&r);
}

/* one spec, one message per check: each counted once */
static void expect_error(const char *model_keys, const char *needle)
{
    char text[2048];
    snprintf(text, sizeof text,
             "model \"m\" {\n layers = 4\n hidden = 256\n ffn_hidden = 512\n heads = 8\n vocab = 1000\n"
             " seq_len = 128\n%s}\n" MOE_CLUSTER_TRAIN, model_keys);
    fe_result r;
    fe_run(&r, text, NULL, 0);
    CU_ASSERT_EQUAL(r.errors, 1);
    CU_ASSERT_TRUE(fe_has(&r, needle));
    if (r.errors != 1 || !fe_has(&r, needle)) fprintf(stderr, "\n--- %s:\n%s", model_keys, r.out ? r.out : "");
    fe_done(&r);
}

static void test_checks(void)
{
    expect_error(" experts = 8\n", "experts = 8 needs 'experts_per_token'");
    expect_error(" experts = 8\n experts_per_token = 9\n", "experts_per_token = 9 is more than experts = 8");
    expect_error(" experts_per_token = 2\n", "'experts_per_token' needs 'experts'");
    expect_error(" experts = 0\n aux_loss = 0.01\n", "'aux_loss' needs 'experts'");
    expect_error(" experts = 8\n experts_per_token = 2\n dense_layers = 4\n", "leaves no MoE layer");
    expect_error(" experts = 8\n experts_per_token = 2\n router_groups = 3\n", "router_groups = 3 does not divide experts = 8");
    expect_error(" experts = 8\n experts_per_token = 2\n router_groups = 4\n", "needs 'router_groups_top'");
    expect_error(" experts = 8\n experts_per_token = 2\n router_groups_top = 4\n", "'router_groups_top' needs 'router_groups'");
    expect_error(" experts = 8\n experts_per_token = 2\n router_groups = 4\n router_groups_top = 5\n",
                 "router_groups_top = 5 is more than router_groups = 4");
    expect_error(" experts = 8\n experts_per_token = 6\n router_groups = 4\n router_groups_top = 2\n",
                 "experts_per_token = 6 is more than the 4 experts");
    expect_error(" experts = 8\n experts_per_token = 2\n shared_expert_ffn_hidden = 64\n",
                 "'shared_expert_ffn_hidden' needs 'shared_experts'");
    expect_error(" experts = 4096\n experts_per_token = 2\n expert_ffn_hidden = 4096\n", "MLP columns a layer");
    expect_error(" experts = 8\n experts_per_token = 2\n capacity_factor = 0\n", "'capacity_factor' must be in (0, 1024]");
    expect_error(" kv_lora_rank = 64\n qk_nope_head_dim = 32\n qk_rope_head_dim = 16\n", "needs v_head_dim");
    expect_error(" q_lora_rank = 64\n", "'q_lora_rank' needs 'kv_lora_rank'");
    expect_error(" kv_lora_rank = 64\n qk_nope_head_dim = 32\n qk_rope_head_dim = 15\n v_head_dim = 32\n",
                 "qk_rope_head_dim = 15 is odd");
    expect_error(" kv_heads = 4\n kv_lora_rank = 64\n qk_nope_head_dim = 32\n qk_rope_head_dim = 16\n v_head_dim = 32\n",
                 "kv_heads = 4 with latent attention");
    expect_error(" positions = learned\n kv_lora_rank = 64\n qk_nope_head_dim = 32\n qk_rope_head_dim = 16\n"
                 " v_head_dim = 32\n", "latent attention needs positions = rope");
}

/* a key in error does not hide the other checks, nor report twice */
static void test_independent(void)
{
    fe_result r;
    fe_run(&r, "model \"m\" {\n layers = 4\n hidden = 256\n ffn_hidden = 512\n heads = 8\n vocab = 1000\n seq_len = 128\n"
               " experts = 8\n experts_per_token = two\n router = softmx\n dense_layers = 9\n"
               " kv_lora_rank = 16\n}\n" MOE_CLUSTER_TRAIN, NULL, 0);
    CU_ASSERT_EQUAL(r.errors, 4);
    CU_ASSERT_TRUE(fe_has(&r, "'experts_per_token' expects a whole number"));
    CU_ASSERT_TRUE(fe_has(&r, "unknown router 'softmx'"));
    CU_ASSERT_TRUE(fe_has(&r, "dense_layers = 9 leaves no MoE layer of layers = 4"));
    CU_ASSERT_TRUE(fe_has(&r, "needs qk_nope_head_dim, qk_rope_head_dim, v_head_dim"));
    fe_done(&r);
}

void register_test_fe_moe_spec(void);
void register_test_fe_moe_spec(void)
{
    CU_pSuite s = CU_add_suite("moe_spec", NULL, NULL);
    CU_add_test(s, "a dense model has no experts", test_dense_is_zero);
    CU_add_test(s, "MoE defaults", test_defaults);
    CU_add_test(s, "every MoE and MLA key", test_every_key);
    CU_add_test(s, "-D overrides", test_defines);
    CU_add_test(s, "consistency checks", test_checks);
    CU_add_test(s, "independent errors", test_independent);
}
