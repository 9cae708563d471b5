/* test_solver_moe.c: the solver's mixture-of-experts accounting
 * (compiler/solver/moe_model.c) and the rules of ep and etp
 * (common/layout_rules.c), on jobs filled in directly: Mixtral-8x7B's
 * shape on H100-like nodes of 8 GPUs. */
#include <CUnit/CUnit.h>
#include <math.h>
#include <string.h>

#include "common/layout_rules.h"
#include "compiler/solver/solver_int.h"
#include "test_solver_fixtures.h"

/* Mixtral-8x7B: 32 layers, hidden 4096, 32 heads, 8 kv heads, 32000
 * tokens untied, 8 experts of 14336, top-2; nodes x 8 GPUs; an engine
 * profile with Megatron-Core's MoE figures (examples/engines.yaml) */
static void mixtral(plc_job *job, int64_t nodes)
{
    fixture_llama13b(job, nodes);
    fixture_model(&job->model, "mixtral-8x7b", 32, 4096, 14336, 32, 8, 32000, 4096, false);
    job->model.moe = (plc_moe){.experts = 8, .top_k = 2, .expert_ffn_hidden = 14336, .moe_every = 1, .route_scale = 1};
    job->cluster.hw.mem_bytes = 80.0 * 1073741824.0;
    job->cluster.hw.flops_bf16 = 989e12;
    job->cluster.hw.intra_node_bw = 450e9;
    job->cluster.hw.inter_node_bw = 50e9;
    job->train.global_batch = 1024;
    job->train.engine = PLC_ENGINE_MEGATRON;
    job->engine.moe = 2;
    job->engine.moe_etp = 1;
    job->engine.moe_dispatcher = 1;
    job->engine.moe_grouped_gemm = 1;
}

static plc_layout layout_of(int64_t dp, int64_t tp, int64_t pp, int64_t ep, int64_t etp)
{
    return (plc_layout){.dp = dp, .tp = tp, .pp = pp, .cp = 1, .ep = ep, .etp = etp, .vpp = 1, .micro_batch = 1,
                        .schedule = PLC_SCHED_1F1B, .attention = PLC_ATTN_FLASH2, .fused_rmsnorm = 1};
}

static plc_rule rule_of(const plc_job *job, plc_layout l)
{
    return plc_layout_rules_job(job, &l).rule;
}

/* Megatron-Core's checks, and a dense model's ep = etp = 1 */
static void test_rules(void)
{
    plc_job job;
    mixtral(&job, 4); /* 32 GPUs */
    CU_ASSERT_EQUAL(rule_of(&job, layout_of(8, 2, 2, 8, 1)), PLC_RULE_OK);
    CU_ASSERT_EQUAL(rule_of(&job, layout_of(8, 2, 2, 4, 2)), PLC_RULE_OK);
    CU_ASSERT_EQUAL(rule_of(&job, layout_of(8, 2, 2, 0, 0)), PLC_RULE_OK); /* 0 reads as 1 */
    CU_ASSERT_EQUAL(rule_of(&job, layout_of(16, 2, 1, 3, 1)), PLC_RULE_EP_EXPERTS);
    /* ep * etp = 16 does not divide dp * tp * cp = 8 */
    CU_ASSERT_EQUAL(rule_of(&job, layout_of(4, 2, 4, 8, 2)), PLC_RULE_EP_STAGE);
    plc_layout bad = layout_of(4, 2, 4, 8, 2);
    char msg[256];
    plc_layout_rules_job_message(&job, &bad, plc_layout_rules_job(&job, &bad), msg, sizeof msg);
    CU_ASSERT_PTR_NOT_NULL(strstr(msg, "ep * etp = 16 does not divide the dp * tp * cp = 8 ranks"));
    /* etp divides the experts' FFN width */
    job.model.moe.expert_ffn_hidden = 14335;
    CU_ASSERT_EQUAL(rule_of(&job, layout_of(8, 2, 2, 4, 2)), PLC_RULE_ETP_FFN);
    job.model.moe.expert_ffn_hidden = 14336;
    /* an engine without expert tensor parallelism (torchtitan's profile) */
    job.engine.moe_etp = 0;
    CU_ASSERT_EQUAL(rule_of(&job, layout_of(8, 2, 2, 4, 2)), PLC_RULE_ENGINE_ETP);
    CU_ASSERT_EQUAL(rule_of(&job, layout_of(8, 2, 2, 8, 1)), PLC_RULE_OK);
    /* an engine that runs MoE layers with ep = 1 only (plrun's) */
    job.engine.moe = 1;
    job.train.engine = PLC_ENGINE_PLRUN;
    CU_ASSERT_EQUAL(rule_of(&job, layout_of(8, 2, 2, 4, 2)), PLC_RULE_ENGINE_EP);
    CU_ASSERT_EQUAL(rule_of(&job, layout_of(8, 2, 2, 1, 1)), PLC_RULE_OK);
    plc_layout four = layout_of(8, 2, 2, 4, 2);
    plc_layout_rules_job_message(&job, &four, plc_layout_rules_job(&job, &four), msg, sizeof msg);
    CU_ASSERT_PTR_NOT_NULL(strstr(msg, "engine plrun runs mixture-of-experts layers with ep = 1 only"));
    /* an engine that runs no MoE layer */
    job.engine.moe = 0;
    job.train.engine = PLC_ENGINE_PLRUN;
    CU_ASSERT_EQUAL(rule_of(&job, layout_of(8, 2, 2, 1, 1)), PLC_RULE_ENGINE_MOE);
    plc_layout one = layout_of(8, 2, 2, 1, 1);
    plc_layout_rules_job_message(&job, &one, plc_layout_rules_job(&job, &one), msg, sizeof msg);
    CU_ASSERT_PTR_NOT_NULL(strstr(msg, "engine plrun does not run mixture-of-experts layers"));
    /* a dense model: ep = etp = 1 */
    plc_job dense;
    fixture_llama13b(&dense, 4);
    CU_ASSERT_EQUAL(rule_of(&dense, layout_of(8, 2, 2, 1, 1)), PLC_RULE_OK);
    CU_ASSERT_EQUAL(rule_of(&dense, layout_of(8, 2, 2, 2, 1)), PLC_RULE_EP_DENSE);
    CU_ASSERT_EQUAL(rule_of(&dense, layout_of(8, 2, 2, 1, 2)), PLC_RULE_EP_DENSE);
}

/* Mixtral's parameters: the routed experts and the rest add up to the
 * 46,702,792,704 of issue 35 on one rank; ep and etp shard the experts */
static void test_stage_params(void)
{
    plc_job job;
    mixtral(&job, 1);
    plc_layout l = layout_of(1, 1, 1, 1, 1);
    plc_moe_stage ms;
    plc_moe_stage_params(&job.model, &l, 0, &ms);
    CU_ASSERT_EQUAL(ms.moe_layers, 32);
    CU_ASSERT_DOUBLE_EQUAL(ms.routed, 45097156608.0, 0.5);
    CU_ASSERT_DOUBLE_EQUAL(ms.dense + ms.routed, 46702792704.0, 0.5);
    l = layout_of(2, 2, 2, 4, 2);
    plc_moe_stage_params(&job.model, &l, 1, &ms);
    CU_ASSERT_EQUAL(ms.moe_layers, 16);
    CU_ASSERT_DOUBLE_EQUAL(ms.routed, 45097156608.0 / 2 / 8, 0.5);
    /* dense_layers and moe_every choose the MoE layers */
    job.model.moe.dense_layers = 3;
    job.model.moe.moe_every = 2;
    CU_ASSERT_FALSE(plc_moe_layer(&job.model, 2));
    CU_ASSERT_TRUE(plc_moe_layer(&job.model, 3));
    CU_ASSERT_FALSE(plc_moe_layer(&job.model, 4));
    CU_ASSERT_EQUAL(plc_moe_layers_in(&job.model, 0, 32), 15); /* 3, 5, ..., 31 */
    /* a dense model has none */
    plc_job dense;
    fixture_llama13b(&dense, 1);
    plc_moe_stage_params(&dense.model, &l, 0, &ms);
    CU_ASSERT_EQUAL(ms.moe_layers, 0);
    CU_ASSERT_EQUAL(ms.routed, 0);
    CU_ASSERT_EQUAL(plc_moe_layer_share(&dense.model), 0);
}

/* static state: the experts' over ep x etp and, under ZeRO, over edp */
static void test_expert_state(void)
{
    plc_job job;
    mixtral(&job, 4);
    plc_estimate a, b;
    plc_layout la = layout_of(16, 2, 1, 4, 1), lb = layout_of(16, 2, 1, 8, 1);
    la.zero = lb.zero = 1;
    memset(&a, 0, sizeof a), memset(&b, 0, sizeof b);
    a.valid = b.valid = true;
    plc_memory_estimate(&job, &la, true, &a);
    plc_memory_estimate(&job, &lb, true, &b);
    double routed = 45097156608.0;
    plc_dtype_bytes d = plc_dtype_bytes_of(&job);
    /* weights: the routed experts 1/4 then 1/8 of them */
    CU_ASSERT_DOUBLE_EQUAL(a.stage_mem[0][PLC_MEM_WEIGHTS] - b.stage_mem[0][PLC_MEM_WEIGHTS],
                           routed * d.weight * (1.0 / 4 - 1.0 / 8), 1.0);
    /* ZeRO 1: their optimizer state over edp = 32 / 4 = 8, then 32 / 8 = 4:
     * the same bytes per rank (each rank's experts over fewer shards) */
    CU_ASSERT_DOUBLE_EQUAL(a.stage_mem[0][PLC_MEM_OPTIMIZER], b.stage_mem[0][PLC_MEM_OPTIMIZER], 1.0);
    CU_ASSERT_EQUAL(plc_layout_edp(&la), 8);
    /* the dispatch buffers: a capacity of 2 x the fair share holds more
     * than dropless's stated imbalance */
    double dropless = plc_moe_act_layer_delta(&job, &la);
    job.model.moe.capacity_factor = 2.0;
    CU_ASSERT_TRUE(plc_moe_act_layer_delta(&job, &la) > dropless);
    CU_ASSERT_DOUBLE_EQUAL(plc_moe_rows(&job, &la), 2.0 * 2 * 4096, 1e-9);
}

/* dispatch and combine: inside a node over NVLink, across nodes slower;
 * flex sends a token once per node; an overlapped dispatcher hides it */
static void test_dispatch(void)
{
    plc_job job;
    mixtral(&job, 4);
    job.model.moe.experts = 64; /* room for ep = 16 */
    plc_layout in_node = layout_of(32, 1, 1, 8, 1), across = layout_of(32, 1, 1, 16, 1);
    plc_moe_times a, b, f;
    plc_moe_layer_times(&job, &in_node, &a);
    plc_moe_layer_times(&job, &across, &b);
    CU_ASSERT_TRUE(a.a2a > 0);
    CU_ASSERT_TRUE(b.a2a > a.a2a);
    double bytes = 4096.0 * 4096 * 2 * 2; /* tokens x hidden x bf16 x top-k */
    /* dropless: the busiest rank receives 1.2 x its share (the stated imbalance) */
    CU_ASSERT_DOUBLE_EQUAL(a.a2a, 2.0 * plc_cost_all_to_all(&job.cluster.hw, 1.2 * bytes, 1.2 * bytes, 8, 8), 1e-12);
    job.model.moe.capacity_factor = 1.0;
    plc_moe_layer_times(&job, &in_node, &f);
    CU_ASSERT_DOUBLE_EQUAL(f.a2a, 2.0 * plc_cost_all_to_all(&job.cluster.hw, bytes, bytes, 8, 8), 1e-12);
    job.model.moe.capacity_factor = 0;
    job.engine.moe_dispatcher = 2;
    plc_moe_layer_times(&job, &across, &f);
    CU_ASSERT_TRUE(f.a2a <= b.a2a);
    job.engine.moe_comm_overlap = 1;
    plc_moe_layer_times(&job, &across, &f);
    CU_ASSERT_EQUAL(f.ep_f, 0);
    CU_ASSERT_TRUE(f.a2a > 0);
    /* no expert parallelism: no exchange */
    plc_layout none = layout_of(32, 1, 1, 1, 1);
    plc_moe_layer_times(&job, &none, &a);
    CU_ASSERT_EQUAL(a.a2a, 0);
    /* the step charges it as ep-comm; a dense model has none */
    job.engine.moe_comm_overlap = 0;
    plc_estimate e;
    memset(&e, 0, sizeof e);
    e.valid = true;
    plc_time_estimate(&job, &across, &e);
    CU_ASSERT_TRUE(e.time[PLC_TIME_COMM_EP] > 0);
    plc_job dense;
    fixture_llama13b(&dense, 4);
    plc_layout dl = layout_of(32, 1, 1, 1, 1);
    memset(&e, 0, sizeof e);
    e.valid = true;
    plc_time_estimate(&dense, &dl, &e);
    CU_ASSERT_EQUAL(e.time[PLC_TIME_COMM_EP], 0);
}

/* the search walks ep and etp: every ranked layout keeps the rules and
 * some use expert parallelism; an engine without MoE is refused */
static void test_search(void)
{
    plc_job job;
    mixtral(&job, 4);
    plc_arena arena;
    plc_arena_init(&arena);
    plc_arena *a = &arena;
    plc_solution s;
    CU_ASSERT_EQUAL(plc_solve(&job, a, &s), PLC_OK);
    CU_ASSERT_TRUE(s.nranked > 0);
    for (int i = 0; i < s.nranked; i++) {
        CU_ASSERT_EQUAL(plc_layout_rules_job(&job, &s.ranked[i].layout).rule, PLC_RULE_OK);
        CU_ASSERT_TRUE(s.ranked[i].layout.ep >= 1 && s.ranked[i].layout.etp >= 1);
    }
    CU_ASSERT_TRUE(s.invalid_by[PLC_RULE_EP_STAGE] > 0);
    /* the layout block's ep and etp: only those values */
    job.layout.ep = (plc_choice){.kind = PLC_CHOICE_SET, .n = 2, .v = {4, 8}};
    fixture_pin(&job.layout.etp, 2);
    CU_ASSERT_EQUAL(plc_solve(&job, a, &s), PLC_OK);
    CU_ASSERT_TRUE(s.nranked > 0);
    for (int i = 0; i < s.nranked; i++) {
        const plc_layout *l = &s.ranked[i].layout;
        CU_ASSERT_TRUE((l->ep == 4 || l->ep == 8) && l->etp == 2);
        CU_ASSERT_EQUAL((l->dp * l->tp * l->cp) % (l->ep * l->etp), 0);
    }
    job.engine.moe = 0;
    job.train.engine = PLC_ENGINE_PLRUN;
    CU_ASSERT_EQUAL(plc_solve(&job, a, &s), PLC_E_INPUT);
    CU_ASSERT_PTR_NOT_NULL(strstr(s.error, "does not run mixture-of-experts layers"));
    plc_arena_free(a);
}

/* the branch and bound ranks what the exhaustive search ranks, ep and
 * etp walked (its bounds stay admissible with the MoE layers' work) */
static void test_bound_exact(void)
{
    plc_job job;
    mixtral(&job, 2);
    job.layout.pp = (plc_choice){.kind = PLC_CHOICE_SET, .n = 2, .v = {1, 2}};
    job.layout.cp = (plc_choice){.kind = PLC_CHOICE_SET, .n = 1, .v = {1}};
    plc_arena a1, a2;
    plc_arena_init(&a1);
    plc_arena_init(&a2);
    plc_solution ex, bb;
    plc_solve_opts oe = {.top = 10, .exhaustive = true}, ob = {.top = 10};
    CU_ASSERT_EQUAL(plc_solve_opts_run(&job, &a1, &oe, &ex), PLC_OK);
    CU_ASSERT_EQUAL(plc_solve_opts_run(&job, &a2, &ob, &bb), PLC_OK);
    CU_ASSERT_TRUE(bb.nranked > 0);
    CU_ASSERT_EQUAL(ex.nranked, bb.nranked);
    CU_ASSERT_EQUAL(ex.enumerated, bb.enumerated);
    CU_ASSERT_TRUE(bb.evaluated < ex.evaluated);
    for (int i = 0; i < ex.nranked && i < bb.nranked; i++) {
        CU_ASSERT_TRUE(plc_layout_equal(&ex.ranked[i].layout, &bb.ranked[i].layout));
        CU_ASSERT_EQUAL(ex.ranked[i].step_time_s, bb.ranked[i].step_time_s);
        CU_ASSERT_EQUAL(ex.ranked[i].peak_bytes, bb.ranked[i].peak_bytes);
    }
    plc_arena_free(&a1);
    plc_arena_free(&a2);
}

void register_test_solver_moe(void)
{
    CU_pSuite s = CU_add_suite("solver_moe", NULL, NULL);
    CU_add_test(s, "ep and etp rules", test_rules);
    CU_add_test(s, "parameters of a stage", test_stage_params);
    CU_add_test(s, "expert state and dispatch buffers", test_expert_state);
    CU_add_test(s, "dispatch and combine", test_dispatch);
    CU_add_test(s, "the search over ep and etp", test_search);
    CU_add_test(s, "branch and bound against the exhaustive search", test_bound_exact);
}
