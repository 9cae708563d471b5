/* test_lower_moe_plan.c: the plan file carries the model's mixture-of-experts and
 * latent-attention fields (format version 5, META after positions): a round
 * trip keeps every field, plc dump prints them, and the loader refuses
 * fields out of range behind valid checksums. The plan is a dense one's
 * (the lowering has no MoE layer yet) with the fields set after lowering:
 * the file format is what is tested. */
#include <CUnit/CUnit.h>

#include <math.h>

#include "compiler/plantools/plantools.h"
#include "test_plan_util.h"

static void moe_fields(plc_model *m)
{
    m->moe = (plc_moe){.experts = 16, .top_k = 4, .shared_experts = 1, .expert_ffn_hidden = 24,
                       .shared_ffn_hidden = 48, .dense_layers = 1, .moe_every = 2, .router = PLC_ROUTER_SIGMOID,
                       .router_groups = 4, .router_groups_top = 2, .route_scale = 2.5, .aux_loss = 1e-4,
                       .expert_bias = true, .capacity_factor = 1.25};
    m->mla = (plc_mla){.q_rank = 24, .kv_rank = 16, .nope_head_dim = 8, .rope_head_dim = 4, .v_head_dim = 8};
}

/* lowers the 4-layer test job, sets the fields, encodes; 0 on success */
static int moe_plan(plc_arena *a, plc_plan *p, uint8_t **data, size_t *len, void (*edit)(plc_model *))
{
    plc_job job;
    tp_job(&job, 4, false, 2);
    if (tp_lower(&job, tp_layout(1, 1, 1, 1, 0, 0, PLC_RECOMPUTE_NONE, 1, PLC_SCHED_1F1B, 1), a, p)) return -1;
    moe_fields(&p->model);
    if (edit) edit(&p->model);
    char err[256];
    return plc_plan_encode(p, data, len, err, sizeof err);
}

static void test_round_trip(void)
{
    plc_arena a;
    plc_arena_init(&a);
    plc_plan p, q;
    uint8_t *d = NULL;
    size_t n = 0;
    char err[256];
    CU_ASSERT_FATAL(moe_plan(&a, &p, &d, &n, NULL) == 0);
    int rc = plc_plan_decode(&a, d, n, &q, err, sizeof err);
    if (rc) fprintf(stderr, "\ndecode: %s\n", err);
    CU_ASSERT_FATAL(rc == 0);
    CU_ASSERT_EQUAL(q.version, 5u);
    CU_ASSERT(memcmp(&q.model.mla, &p.model.mla, sizeof q.model.mla) == 0);
    const plc_moe *e = &q.model.moe;
    CU_ASSERT(e->experts == 16 && e->top_k == 4 && e->shared_experts == 1 && e->expert_ffn_hidden == 24);
    CU_ASSERT(e->shared_ffn_hidden == 48 && e->dense_layers == 1 && e->moe_every == 2);
    CU_ASSERT(e->router == PLC_ROUTER_SIGMOID && e->router_groups == 4 && e->router_groups_top == 2);
    CU_ASSERT(e->route_scale == 2.5 && e->aux_loss == 1e-4 && e->expert_bias && e->capacity_factor == 1.25);
    char *s = tp_dump(&q, -1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    CU_ASSERT_PTR_NOT_NULL(strstr(s, "\nmoe: experts=16 experts_per_token=4 shared_experts=1 expert_ffn_hidden=24 "
                                     "shared_expert_ffn_hidden=48 dense_layers=1 moe_every=2 router=sigmoid "
                                     "router_groups=4 router_groups_top=2 route_scale=2.5 aux_loss=0.0001 "
                                     "expert_bias=on capacity_factor=1.25\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(s, "\nlatent attention: q_lora_rank=24 kv_lora_rank=16 qk_nope_head_dim=8 "
                                     "qk_rope_head_dim=4 v_head_dim=8\n"));
    free(s);
    free(d);
    plc_arena_free(&a);
}

static void top_k_above(plc_model *m) { m->moe.top_k = 17; }
static void groups_not_dividing(plc_model *m) { m->moe.router_groups = 3; }
static void all_dense(plc_model *m) { m->moe.dense_layers = 4; }
static void bad_router(plc_model *m) { m->moe.router = (plc_router)7; }
static void nan_scale(plc_model *m) { m->moe.route_scale = NAN; }
static void wide_experts(plc_model *m) { m->moe.expert_ffn_hidden = 1 << 22; }
static void odd_rope(plc_model *m) { m->mla.rope_head_dim = 3; }
static void widths_without_rank(plc_model *m) { m->mla.kv_rank = 0; }

/* each hostile field, written with valid checksums, is refused by name */
static void test_refused(void)
{
    const struct { void (*edit)(plc_model *); const char *says; } cases[] = {
        {top_k_above, "experts_per_token 17"},
        {groups_not_dividing, "router_groups 3"},
        {all_dense, "dense_layers 4"},
        {bad_router, "router 7 out of range"},
        {nan_scale, "route_scale"},
        {wide_experts, "the experts' counts or widths"},
        {odd_rope, "latent attention's ranks or head widths"},
        {widths_without_rank, "kv_lora_rank is 0"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        plc_arena a;
        plc_arena_init(&a);
        plc_plan p, q;
        uint8_t *d = NULL;
        size_t n = 0;
        char err[256] = "";
        CU_ASSERT_FATAL(moe_plan(&a, &p, &d, &n, cases[i].edit) == 0);
        CU_ASSERT(plc_plan_decode(&a, d, n, &q, err, sizeof err) != 0);
        CU_ASSERT_PTR_NOT_NULL(strstr(err, cases[i].says));
        if (!strstr(err, cases[i].says)) fprintf(stderr, "\ncase %zu: %s\n", i, err);
        free(d);
        plc_arena_free(&a);
    }
}

/* plc diff's settings name the MoE and MLA keys as the language does */
static void test_settings(void)
{
    plc_plan p;
    memset(&p, 0, sizeof p);
    moe_fields(&p.model);
    static plc_plan_setting set[128];
    int n = plc_plan_settings(&p, set, 128);
    CU_ASSERT_FATAL(n < 128);
    const char *want[][2] = {{"model.experts", "16"},         {"model.experts_per_token", "4"},
                             {"model.router", "sigmoid"},     {"model.expert_bias", "on"},
                             {"model.capacity_factor", "1.25"}, {"model.kv_lora_rank", "16"},
                             {"model.shared_expert_ffn_hidden", "48"}};
    for (size_t w = 0; w < sizeof want / sizeof want[0]; w++) {
        bool found = false;
        for (int i = 0; i < n; i++)
            if (!strcmp(set[i].name, want[w][0])) found = !strcmp(set[i].text, want[w][1]);
        CU_ASSERT(found);
        if (!found) fprintf(stderr, "\nsetting %s is not %s\n", want[w][0], want[w][1]);
    }
    p.model.moe.capacity_factor = 0;
    plc_plan_settings(&p, set, 128);
    bool dropless = false;
    for (int i = 0; i < n; i++)
        if (!strcmp(set[i].name, "model.capacity_factor")) dropless = !strcmp(set[i].text, "dropless");
    CU_ASSERT(dropless);
}

void register_test_lower_moe_plan(void);
void register_test_lower_moe_plan(void)
{
    CU_pSuite s = CU_add_suite("moe_plan", NULL, NULL);
    CU_add_test(s, "MoE and MLA fields round trip", test_round_trip);
    CU_add_test(s, "hostile MoE and MLA fields refused", test_refused);
    CU_add_test(s, "plc diff's settings", test_settings);
}
