/* test_solver_search.c: the search never answers with a layout that does not
 * fit, ranks by the objective, honours the layout block, prunes soundly. */
#include <CUnit/CUnit.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/solver/solver.h"
#include "test_solver_fixtures.h"

static void test_solve_ranks_fitting_layouts(void)
{
    plc_job job;
    fixture_llama13b(&job, 8);
    plc_arena a;
    plc_arena_init(&a);
    plc_solution s;
    plc_solve_opts o = {.top = 20, .all = true};
    CU_ASSERT_EQUAL_FATAL(plc_solve_opts_run(&job, &a, &o, &s), 0);
    CU_ASSERT_TRUE_FATAL(s.nranked > 0);
    CU_ASSERT_EQUAL(s.enumerated, s.invalid + s.pruned + s.evaluated);
    for (int i = 0; i < s.nranked; i++) {
        CU_ASSERT_TRUE(s.ranked[i].fits);
        CU_ASSERT_TRUE(s.ranked[i].peak_bytes <= s.limit_bytes);
        if (i) CU_ASSERT_TRUE(s.ranked[i - 1].step_time_s <= s.ranked[i].step_time_s);
    }
    /* no candidate that fits beats the winner; the winner re-estimates the same */
    int64_t fits = 0;
    for (int64_t i = 0; i < s.nall; i++) {
        if (!s.all[i].fits) continue;
        fits++;
        CU_ASSERT_TRUE(s.all[i].step_time_s >= s.ranked[0].step_time_s);
    }
    CU_ASSERT_EQUAL(fits, s.fitting);
    plc_estimate *e = calloc(1, sizeof *e);
    plc_estimate_layout(&job, &s.ranked[0].layout, e);
    CU_ASSERT_TRUE(e->fits);
    CU_ASSERT_DOUBLE_EQUAL(e->step_time_s, s.ranked[0].step_time_s, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(e->peak_bytes, s.ranked[0].peak_bytes, 1.0);
    /* pruning is sound: every pruned subtree's bound exceeds the limit, so
     * no estimated candidate with the same (tp, pp, cp, zero) fits either */
    CU_ASSERT_TRUE(s.pruned > 0);
    free(e);
    plc_arena_free(&a);
}

static void test_constraints_and_objective(void)
{
    plc_job job;
    fixture_llama13b(&job, 8);
    fixture_pin(&job.layout.tp, 2);
    fixture_pin(&job.layout.attention, PLC_ATTN_FLASH2);
    job.layout.pp.kind = PLC_CHOICE_RANGE;
    job.layout.pp.lo = 2;
    job.layout.pp.hi = 4;
    job.layout.objective = PLC_OBJ_MEMORY;
    plc_arena a;
    plc_arena_init(&a);
    plc_solution s;
    CU_ASSERT_EQUAL_FATAL(plc_solve(&job, &a, &s), 0);
    CU_ASSERT_TRUE_FATAL(s.nranked > 1);
    for (int i = 0; i < s.nranked; i++) {
        CU_ASSERT_EQUAL(s.ranked[i].layout.tp, 2);
        CU_ASSERT_TRUE(s.ranked[i].layout.pp >= 2 && s.ranked[i].layout.pp <= 4);
        CU_ASSERT_EQUAL(s.ranked[i].layout.attention, PLC_ATTN_FLASH2);
        if (i) CU_ASSERT_TRUE(s.ranked[i - 1].peak_bytes <= s.ranked[i].peak_bytes);
    }
    plc_arena_free(&a);
}

static void test_invalid_and_pinned(void)
{
    plc_job job;
    fixture_llama13b(&job, 8);
    plc_layout l = {.tp = 3, .cp = 1, .pp = 1, .dp = 21, .vpp = 1, .micro_batch = 1, .schedule = PLC_SCHED_1F1B,
                    .attention = PLC_ATTN_FLASH2};
    char why[192];
    CU_ASSERT_FALSE(plc_layout_check(&job, &l, why, sizeof why));
    l.tp = 8; l.dp = 8;
    l.pp = 5; /* divides the 40 layers, but 8 x 8 x 5 is not the 64 GPUs */
    CU_ASSERT_FALSE(plc_layout_check(&job, &l, why, sizeof why));
    CU_ASSERT_PTR_NOT_NULL(strstr(why, "GPUs"));
    l.pp = 1; l.dp = 8; l.schedule = PLC_SCHED_INTERLEAVED; l.vpp = 2;
    CU_ASSERT_FALSE(plc_layout_check(&job, &l, why, sizeof why));
    CU_ASSERT_PTR_NOT_NULL(strstr(why, "interleaved"));
    /* every dimension pinned: one layout, evaluated fit or not */
    plc_layout_spec *ls = &job.layout;
    fixture_pin(&ls->dp, 64); fixture_pin(&ls->tp, 1); fixture_pin(&ls->pp, 1); fixture_pin(&ls->cp, 1);
    fixture_pin(&ls->sp, 0); fixture_pin(&ls->vpp, 1); fixture_pin(&ls->micro_batch, 8);
    fixture_pin(&ls->schedule, PLC_SCHED_1F1B); fixture_pin(&ls->recompute, PLC_RECOMPUTE_NONE);
    fixture_pin(&ls->zero, 1); fixture_pin(&ls->attention, PLC_ATTN_NAIVE); fixture_pin(&ls->fused_rmsnorm, 0);
    plc_arena a;
    plc_arena_init(&a);
    plc_solution s;
    CU_ASSERT_EQUAL_FATAL(plc_solve(&job, &a, &s), 0);
    CU_ASSERT_TRUE(s.pinned);
    CU_ASSERT_TRUE(s.single.valid);
    CU_ASSERT_FALSE(s.single.fits);
    CU_ASSERT_TRUE(s.single.step_time_s > 0);
    CU_ASSERT_EQUAL(s.nranked, 0);
    plc_arena_free(&a);
}

static void test_nothing_fits(void)
{
    plc_job job;
    fixture_model(&job.model, "llama-2-70b", 80, 8192, 28672, 64, 8, 32000, 4096, false);
    fixture_a100(&job.cluster.hw);
    job.cluster.hw.mem_bytes = 40.0 * 1073741824.0;
    job.cluster.nodes = 1;
    job.cluster.gpus_per_node = 4;
    job.train.global_batch = 64;
    job.train.precision = PLC_PREC_BF16;
    fixture_layout_auto(&job.layout);
    plc_arena a;
    plc_arena_init(&a);
    plc_solution s;
    CU_ASSERT_EQUAL_FATAL(plc_solve(&job, &a, &s), 0);
    CU_ASSERT_EQUAL(s.nranked, 0);
    CU_ASSERT_TRUE(s.nclosest > 0);
    for (int i = 1; i < s.nclosest; i++) CU_ASSERT_TRUE(s.closest[i - 1].peak_bytes <= s.closest[i].peak_bytes);
    plc_arena_free(&a);
    /* an unusable job is an error, not a crash */
    job.model.layers = 0;
    plc_arena_init(&a);
    CU_ASSERT_EQUAL(plc_solve(&job, &a, &s), PLC_E_INPUT);
    CU_ASSERT_STRING_EQUAL(s.error, "layers must be at least 1"); /* told, not printed */
    plc_arena_free(&a);
}

/* ---- branch and bound against the exhaustive search ------------------------ */

/* solves job both ways with the same top and asserts the same ranking: the
 * same layouts in the same order (tie-breaks included) with the same
 * figures; returns the leaves the objective's bound skipped */
static int64_t assert_same_ranking(const plc_job *job, int top)
{
    plc_arena ea, ba;
    plc_arena_init(&ea);
    plc_arena_init(&ba);
    plc_solution e, b;
    plc_solve_opts eo = {.top = top, .exhaustive = true}, bo = {.top = top};
    CU_ASSERT_EQUAL_FATAL(plc_solve_opts_run(job, &ea, &eo, &e), 0);
    CU_ASSERT_EQUAL_FATAL(plc_solve_opts_run(job, &ba, &bo, &b), 0);
    CU_ASSERT_EQUAL(e.pruned_objective, 0);
    CU_ASSERT_EQUAL(e.enumerated, b.enumerated);
    CU_ASSERT_EQUAL(b.enumerated, b.invalid + b.pruned + b.evaluated);
    CU_ASSERT_TRUE(b.evaluated <= e.evaluated);
    CU_ASSERT_EQUAL_FATAL(e.nranked, b.nranked);
    for (int i = 0; i < e.nranked; i++) {
        const plc_candidate *x = &e.ranked[i], *y = &b.ranked[i];
        for (int d = 0; d < PLC_LD_COUNT; d++) /* field by field: padding bytes are not the layout */
            CU_ASSERT_EQUAL(plc_layout_get(&x->layout, (plc_layout_dim)d), plc_layout_get(&y->layout, (plc_layout_dim)d));
        CU_ASSERT_EQUAL(x->step_time_s, y->step_time_s);
        CU_ASSERT_EQUAL(x->peak_bytes, y->peak_bytes);
        CU_ASSERT_EQUAL(x->tokens_per_s, y->tokens_per_s);
        CU_ASSERT_EQUAL(x->mfu, y->mfu);
        CU_ASSERT_EQUAL(x->fits, y->fits);
    }
    if (e.nranked == 0) { /* nothing fits: the same closest candidates */
        CU_ASSERT_EQUAL_FATAL(e.nclosest, b.nclosest);
        for (int i = 0; i < e.nclosest; i++) {
            for (int d = 0; d < PLC_LD_COUNT; d++)
                CU_ASSERT_EQUAL(plc_layout_get(&e.closest[i].layout, (plc_layout_dim)d),
                                plc_layout_get(&b.closest[i].layout, (plc_layout_dim)d));
            CU_ASSERT_EQUAL(e.closest[i].peak_bytes, b.closest[i].peak_bytes);
        }
    }
    CU_ASSERT_TRUE(e.nregions > 0); /* explain's regions: the exhaustive search's only */
    CU_ASSERT_EQUAL(b.nregions, 0);
    int64_t skipped = b.pruned_objective;
    plc_arena_free(&ea);
    plc_arena_free(&ba);
    return skipped;
}

/* small spaces: models, clusters, precisions, constraints, objectives, top */
static void test_bound_matches_exhaustive(void)
{
    int64_t skipped = 0;
    static const int tops[] = {1, 3, 10, 40};
    for (int obj = 0; obj < 2; obj++) {
        for (int t = 0; t < 4; t++) {
            plc_job job;
            /* Llama 13B on 2 and 8 nodes */
            fixture_llama13b(&job, 2);
            job.layout.objective = obj ? PLC_OBJ_MEMORY : PLC_OBJ_TIME;
            skipped += assert_same_ranking(&job, tops[t]);
            fixture_llama13b(&job, 8);
            job.layout.objective = obj ? PLC_OBJ_MEMORY : PLC_OBJ_TIME;
            job.layout.memory_limit = 0.6; /* fewer fit */
            skipped += assert_same_ranking(&job, tops[t]);
            /* nothing fits (32k-token sequences in 32 GiB of 80): the
             * closest candidates, pruned by the node memory bound */
            fixture_llama13b(&job, 1);
            job.layout.objective = obj ? PLC_OBJ_MEMORY : PLC_OBJ_TIME;
            job.model.seq_len = 32768;
            job.layout.memory_limit = 0.4;
            skipped += assert_same_ranking(&job, tops[t]);
            /* constraints: pp and cp ranges, flash attention only, ZeRO 1 */
            fixture_llama13b(&job, 4);
            job.layout.objective = obj ? PLC_OBJ_MEMORY : PLC_OBJ_TIME;
            job.layout.pp = (plc_choice){.kind = PLC_CHOICE_RANGE, .lo = 2, .hi = 8};
            job.layout.cp = (plc_choice){.kind = PLC_CHOICE_RANGE, .lo = 1, .hi = 2};
            fixture_pin(&job.layout.zero, 1);
            job.layout.attention = (plc_choice){.kind = PLC_CHOICE_SET, .n = 2,
                                                .v = {PLC_ATTN_FLASH1, PLC_ATTN_FLASH2}};
            skipped += assert_same_ranking(&job, tops[t]);
            /* a grouped-query model with a long context on 16 A100, fp32 */
            fixture_model(&job.model, "gqa-3b", 24, 3072, 8192, 24, 8, 32000, 8192, true);
            fixture_a100(&job.cluster.hw);
            job.cluster.hw.matmul_eff = 0.6;
            job.cluster.hw.matmul_half_dim = 128;
            job.cluster.hw.kernel_launch = 5e-6;
            job.cluster.nodes = 2;
            job.cluster.gpus_per_node = 8;
            job.train.global_batch = 96;
            job.train.precision = obj ? PLC_PREC_FP32 : PLC_PREC_BF16;
            fixture_layout_auto(&job.layout);
            job.layout.objective = obj ? PLC_OBJ_MEMORY : PLC_OBJ_TIME;
            skipped += assert_same_ranking(&job, tops[t]);
        }
    }
    CU_ASSERT_TRUE(skipped > 0); /* the bound did skip leaves */
}

/* The search costs the same for 2^10 and 2^40 (1.1e12) sequences per step.
 * With the micro-batch values capped (1..8) the space is the same: divisors
 * by trial division to sqrt, schedule figures in closed form. With the
 * micro-batch left auto the space grows with the batch's divisors, but the
 * node memory bound leaves each node's micro-batch loop at the first value
 * that cannot fit, so the layouts estimated stay as many. */
static double solve_seconds(int64_t global_batch, bool auto_micro, int64_t *enumerated, int64_t *evaluated,
                            plc_layout *best)
{
    plc_job job;
    fixture_llama13b(&job, 8);
    job.train.global_batch = global_batch;
    if (!auto_micro) job.layout.micro_batch = (plc_choice){.kind = PLC_CHOICE_RANGE, .lo = 1, .hi = 8};
    plc_arena a;
    plc_arena_init(&a);
    plc_solution s;
    CU_ASSERT_EQUAL_FATAL(plc_solve(&job, &a, &s), 0);
    CU_ASSERT_TRUE_FATAL(s.nranked > 0);
    *enumerated = s.enumerated;
    *evaluated = s.evaluated;
    *best = s.ranked[0].layout;
    double t = s.seconds;
    plc_arena_free(&a);
    return t;
}

static void test_batch_independent(void)
{
    for (int auto_micro = 0; auto_micro < 2; auto_micro++) {
        int64_t n_small, n_huge, e_small, e_huge;
        plc_layout b_small, b_huge;
        double t_small = solve_seconds(1024, auto_micro, &n_small, &e_small, &b_small);
        double t_huge = solve_seconds((int64_t)1 << 40, auto_micro, &n_huge, &e_huge, &b_huge);
        printf("\n    micro-batch %s: 2^10 sequences: %lld layouts, %lld estimated in %.3f s; "
               "2^40: %lld layouts, %lld estimated in %.3f s",
               auto_micro ? "auto" : "1..8", (long long)n_small, (long long)e_small, t_small, (long long)n_huge,
               (long long)e_huge, t_huge);
        if (!auto_micro) CU_ASSERT_EQUAL(n_small, n_huge);
        /* the branch and bound's work (its thresholds follow the figures,
         * which do depend on the batch) stays within a factor of two; with
         * the micro-batch auto, three: until something fits, the leaves of
         * the first nodes are estimated at every micro-batch for the closest
         * candidates (40 values at 2^40, 11 at 2^10; measured 1588 and 626
         * leaves, and 5330 at 2^40 without the node memory bound) */
        int64_t f = auto_micro ? 3 : 2;
        CU_ASSERT_TRUE(e_huge <= f * e_small && e_small <= f * e_huge);
    }
    printf("\n");
    /* no assertion on the seconds: a shared machine makes timed tests flaky;
     * the counts above are the work, and bench_search_speed reports the times */
}

void register_test_solver_search(void)
{
    CU_pSuite s = CU_add_suite("solver_search", NULL, NULL);
    CU_add_test(s, "ranked layouts fit and are ordered", test_solve_ranks_fitting_layouts);
    CU_add_test(s, "constraints and the memory objective", test_constraints_and_objective);
    CU_add_test(s, "branch and bound ranks as the exhaustive search", test_bound_matches_exhaustive);
    CU_add_test(s, "invalid and pinned layouts", test_invalid_and_pinned);
    CU_add_test(s, "nothing fits; unusable job", test_nothing_fits);
    CU_add_test(s, "search time does not grow with the batch", test_batch_independent);
}
