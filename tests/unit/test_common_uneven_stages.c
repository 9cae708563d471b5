/* test_common_uneven_stages.c: pipeline stages of unequal layer counts
 * (plc_stage_layers and plc_rank_layers in common/layout_rules.h): the
 * split itself, over pp stages and over the pp * vpp virtual stages of the
 * interleaved schedule, the rules PP_LAYERS and VPP_LAYERS per engine
 * (uneven_stages in engines.yaml), and the analytic memory and time models
 * on BLOOM-176B's split, 70 layers on pp 12, and on Llama 3.1 405B's
 * interleaved one, 126 layers on pp 8 with vpp 2. */
#include <CUnit/CUnit.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/layout_rules.h"
#include "compiler/frontend/frontend_int.h"
#include "compiler/solver/solver.h"
#include "compiler/solver/solver_int.h"
#include "test_solver_fixtures.h"

/* the split: every layer placed once, in order, each stage at least one;
 * the ends never hold more than the middle unless the middle holds
 * floor(layers / pp) (few layers per stage) */
static void test_split(void)
{
    for (int64_t pp = 1; pp <= 40; pp++) {
        for (int64_t L = pp; L <= 300; L++) {
            int64_t sum = 0, lo = plc_stage_layers(L, pp, 0), hi = lo;
            for (int64_t s = 0; s < pp; s++) {
                int64_t n = plc_stage_layers(L, pp, s);
                CU_ASSERT_EQUAL(plc_stage_first_layer(L, pp, s), sum);
                CU_ASSERT_TRUE(n >= 1);
                sum += n;
                if (n < lo) lo = n;
                if (n > hi) hi = n;
            }
            CU_ASSERT_EQUAL(sum, L);
            CU_ASSERT_EQUAL(plc_rank_layers_most(L, pp, 1), hi);
            if (L % pp == 0) CU_ASSERT_EQUAL(hi - lo, 0);
            if (pp > 2 && plc_stage_layers_middle(L, pp) == (L + pp - 1) / pp) {
                CU_ASSERT_TRUE(plc_stage_layers(L, pp, 0) <= plc_stage_layers(L, pp, 1));
                CU_ASSERT_TRUE(plc_stage_layers(L, pp, pp - 1) <= plc_stage_layers(L, pp, 0));
            }
        }
    }
    /* BLOOM-176B: 5, 6 x 10, 5; Llama 3.1 405B: 15, 16 x 6, 15 on pp 8 and
     * 7, 8 x 14, 7 on pp 16 (one layer less on the first and last stage) */
    CU_ASSERT_EQUAL(plc_stage_layers(70, 12, 0), 5);
    CU_ASSERT_EQUAL(plc_stage_layers(70, 12, 1), 6);
    CU_ASSERT_EQUAL(plc_stage_layers(70, 12, 10), 6);
    CU_ASSERT_EQUAL(plc_stage_layers(70, 12, 11), 5);
    CU_ASSERT_EQUAL(plc_stage_layers(126, 8, 0), 15);
    CU_ASSERT_EQUAL(plc_stage_layers(126, 8, 3), 16);
    CU_ASSERT_EQUAL(plc_stage_layers(126, 8, 7), 15);
    CU_ASSERT_EQUAL(plc_stage_layers(126, 16, 0), 7);
    CU_ASSERT_EQUAL(plc_stage_layers(126, 16, 8), 8);
    CU_ASSERT_EQUAL(plc_stage_layers(126, 16, 15), 7);
    /* 10 on pp 4: 3 in the middle, the ends 2 and 2; 9: the first 2, the last 1 */
    CU_ASSERT_EQUAL(plc_stage_layers(10, 4, 0), 2);
    CU_ASSERT_EQUAL(plc_stage_layers(10, 4, 3), 2);
    CU_ASSERT_EQUAL(plc_stage_layers(9, 4, 0), 2);
    CU_ASSERT_EQUAL(plc_stage_layers(9, 4, 3), 1);
    /* pp 2: the odd layer on stage 0 (the last holds the head and loss) */
    CU_ASSERT_EQUAL(plc_stage_layers(7, 2, 0), 4);
    CU_ASSERT_EQUAL(plc_stage_layers(7, 2, 1), 3);
    /* 13 on pp 12: ceil would leave the ends one layer together; floor: 1 in
     * the middle, 2 and 1 at the ends */
    CU_ASSERT_EQUAL(plc_stage_layers_middle(13, 12), 1);
    CU_ASSERT_EQUAL(plc_stage_layers(13, 12, 0), 2);
    CU_ASSERT_EQUAL(plc_stage_layers(13, 12, 11), 1);

    /* the schedules' chunks: GPipe and 1F1B take the split; the
     * interleaved, layered and modular ones need equal chunks */
    plc_pipe_shape sh;
    CU_ASSERT_EQUAL(plc_pipe_shape_of(PLC_SCHED_1F1B, 12, 1, 70, &sh), 0);
    CU_ASSERT_TRUE(sh.uneven);
    CU_ASSERT_EQUAL(plc_pipe_chunk_lo(&sh, 0), 0);
    CU_ASSERT_EQUAL(plc_pipe_chunk_hi(&sh, 0), 5);
    CU_ASSERT_EQUAL(plc_pipe_chunk_lo(&sh, 1), 5);
    CU_ASSERT_EQUAL(plc_pipe_chunk_hi(&sh, 1), 11);
    CU_ASSERT_EQUAL(plc_pipe_chunk_hi(&sh, 11), 70);
    CU_ASSERT_EQUAL(plc_pipe_shape_of(PLC_SCHED_GPIPE, 12, 1, 70, &sh), 0);
    CU_ASSERT_EQUAL(plc_pipe_shape_of(PLC_SCHED_1F1B, 12, 1, 11, &sh), -1);
    CU_ASSERT_EQUAL(plc_pipe_shape_of(PLC_SCHED_INTERLEAVED, 12, 2, 70, &sh), 0); /* 24 virtual stages */
    CU_ASSERT_TRUE(sh.uneven);
    CU_ASSERT_EQUAL(plc_pipe_shape_of(PLC_SCHED_INTERLEAVED, 12, 6, 70, &sh), -1); /* 72 virtual stages */
    CU_ASSERT_EQUAL(plc_pipe_shape_of(PLC_SCHED_LAYERED, 12, 1, 70, &sh), -1);
    CU_ASSERT_EQUAL(plc_pipe_shape_of(PLC_SCHED_MODULAR, 12, 1, 70, &sh), -1);
    CU_ASSERT_EQUAL(plc_pipe_shape_of(PLC_SCHED_1F1B, 12, 1, 72, &sh), 0);
    CU_ASSERT_FALSE(sh.uneven);
    CU_ASSERT_EQUAL(plc_pipe_chunk_lo(&sh, 5), 30);
    /* 1F1B holds pp - s micro-batches on stage s whatever its layers */
    CU_ASSERT_EQUAL(plc_sched_inflight(PLC_SCHED_1F1B, 12, 1, 70, 64, 1), 11.0);
}

/* The split of a rank with vpp virtual stages: the sum of its stages'
 * layers over pp * vpp, every layer placed once, each rank at least vpp;
 * vpp 1 is plc_stage_layers; the middle ranks alike; the most is the
 * largest rank; ranks unequal exactly where pp * vpp does not divide. */
static void test_rank_split(void)
{
    for (int64_t pp = 1; pp <= 24; pp++) {
        for (int64_t vpp = 1; vpp <= 6; vpp++) {
            for (int64_t L = pp * vpp; L <= 200; L++) {
                int64_t sum = 0, hi = 0, lo = L;
                for (int64_t r = 0; r < pp; r++) {
                    int64_t n = plc_rank_layers(L, pp, vpp, r), want = 0;
                    for (int64_t v = 0; v < vpp; v++) want += plc_stage_layers(L, pp * vpp, r + v * pp);
                    CU_ASSERT_EQUAL(n, want);
                    CU_ASSERT_TRUE(n >= vpp);
                    if (vpp == 1) CU_ASSERT_EQUAL(n, plc_stage_layers(L, pp, r));
                    if (r > 1 && r < pp - 1) CU_ASSERT_EQUAL(n, plc_rank_layers(L, pp, vpp, 1));
                    sum += n;
                    if (n > hi) hi = n;
                    if (n < lo) lo = n;
                }
                CU_ASSERT_EQUAL(sum, L);
                CU_ASSERT_EQUAL(plc_rank_layers_most(L, pp, vpp), hi);
                CU_ASSERT_EQUAL(plc_ranks_uneven(L, pp, vpp), L % (pp * vpp) != 0);
                if (L % (pp * vpp) == 0) CU_ASSERT_EQUAL(hi - lo, 0);
            }
        }
    }
    /* Llama 3.1 405B, 126 layers on pp 8 with 2 stages a rank (torchtitan's
     * default for Interleaved1F1B): virtual stages 7, 8 x 14, 7, so rank 0
     * holds 7 + 8, ranks 1 to 6 8 + 8, rank 7 8 + 7 */
    CU_ASSERT_EQUAL(plc_rank_layers(126, 8, 2, 0), 15);
    CU_ASSERT_EQUAL(plc_rank_layers(126, 8, 2, 1), 16);
    CU_ASSERT_EQUAL(plc_rank_layers(126, 8, 2, 6), 16);
    CU_ASSERT_EQUAL(plc_rank_layers(126, 8, 2, 7), 15);
    /* pp dividing the layers but not pp * vpp: 120 on pp 8, vpp 2 (virtual
     * stages 4, 8 x 14, 4): ranks 12, 16 x 6, 12 */
    CU_ASSERT_EQUAL(plc_rank_layers(120, 8, 2, 0), 12);
    CU_ASSERT_EQUAL(plc_rank_layers(120, 8, 2, 3), 16);
    CU_ASSERT_EQUAL(plc_rank_layers(120, 8, 2, 7), 12);
    /* the interleaved chunks: chunk c holds virtual stage c, on rank c mod 8 */
    plc_pipe_shape sh;
    CU_ASSERT_EQUAL(plc_pipe_shape_of(PLC_SCHED_INTERLEAVED, 8, 2, 126, &sh), 0);
    CU_ASSERT_TRUE(sh.uneven);
    CU_ASSERT_EQUAL(plc_pipe_chunk_hi(&sh, 0), 7);
    CU_ASSERT_EQUAL(plc_pipe_chunk_lo(&sh, 8), 63);
    CU_ASSERT_EQUAL(plc_pipe_chunk_hi(&sh, 8), 71);
    CU_ASSERT_EQUAL(plc_pipe_chunk_lo(&sh, 15), 119);
    CU_ASSERT_EQUAL(plc_pipe_chunk_hi(&sh, 15), 126);
    CU_ASSERT_EQUAL(plc_pipe_chunk_rank(&sh, 15), 7);
    /* the recompute_layers limits: block the largest virtual stage (8),
     * every the largest rank (16) */
    plc_layout l = {.pp = 8, .vpp = 2, .recompute = PLC_RECOMPUTE_BLOCK};
    CU_ASSERT_EQUAL(plc_recompute_layers_max(126, &l), 8);
    l.recompute = PLC_RECOMPUTE_EVERY;
    CU_ASSERT_EQUAL(plc_recompute_layers_max(126, &l), 16);
    CU_ASSERT_EQUAL(plc_uneven_stages_needed(126, &l), 2);
    l.vpp = 1;
    CU_ASSERT_EQUAL(plc_uneven_stages_needed(126, &l), 1);
    CU_ASSERT_EQUAL(plc_uneven_stages_needed(128, &l), 0);
}

/* the shipped profiles (examples/engines.yaml), loaded once for the suite */
static plc_arena profiles_arena;
static plc_engine_set profiles;

static int load_profiles(void)
{
    plc_arena_init(&profiles_arena);
    plc_diag d;
    plc_diag_init(&d, stderr, 100);
    return plc_engines_load(&profiles_arena, &d, "../examples/engines.yaml", &profiles) == 0 ? 0 : -1;
}

static int free_profiles(void)
{
    plc_arena_free(&profiles_arena);
    return 0;
}

/* a 70-layer Llama of 13B's width on 3 x 8 A100: pp 12, dp 2, 1F1B,
 * no recompute, ZeRO 1, 64 micro-batches of one sequence per rank */
static void job70(plc_job *job, plc_engine e, int64_t vocab, plc_layout *l)
{
    fixture_llama13b(job, 3);
    job->model.layers = 70;
    job->model.vocab = vocab;
    job->train.global_batch = 128;
    job->train.engine = e;
    job->engine = profiles.profile[e];
    *l = (plc_layout){.dp = 2, .tp = 1, .pp = 12, .cp = 1, .vpp = 1, .micro_batch = 1, .schedule = PLC_SCHED_1F1B,
                      .recompute = PLC_RECOMPUTE_NONE, .zero = 1, .attention = PLC_ATTN_FLASH2, .fused_rmsnorm = 1};
}

static void rule_message(const plc_job *job, const plc_layout *l, plc_rule rule, const char *want)
{
    plc_verdict v = plc_layout_rules_job(job, l);
    CU_ASSERT_EQUAL(v.rule, rule);
    char msg[256];
    plc_layout_rules_job_message(job, l, v, msg, sizeof msg);
    if (want && strcmp(msg, want)) {
        fprintf(stderr, "\nexpected \"%s\", got \"%s\"\n", want, msg);
        CU_FAIL("message");
    }
}

/* PP_LAYERS per engine: plrun runs 70 layers on pp 12 (its own lowering:
 * 5, 6 x 10, 5); a megatron profile with uneven_stages 1 (Megatron-Core
 * r0.9 to r0.10: unequal stages with vpp 1) runs them with GPipe or 1F1B,
 * not interleaved; Megatron-Core 0.19 and fsdp2 interleaved too; r0.8
 * equal stages only */
static void test_rule_per_engine(void)
{
    CU_ASSERT_EQUAL(profiles.profile[PLC_ENGINE_PLRUN].uneven_stages, 2);
    CU_ASSERT_EQUAL(profiles.profile[PLC_ENGINE_MEGATRON].uneven_stages, 2);
    CU_ASSERT_EQUAL(profiles.profile[PLC_ENGINE_MEGATRON_R0_8].uneven_stages, 0);
    CU_ASSERT_EQUAL(profiles.profile[PLC_ENGINE_FSDP2].uneven_stages, 2);
    plc_job job;
    plc_layout l;
    job70(&job, PLC_ENGINE_PLRUN, 128000, &l);
    rule_message(&job, &l, PLC_RULE_OK, NULL);
    job70(&job, PLC_ENGINE_MEGATRON, 128000, &l);
    job.engine.uneven_stages = 1;
    rule_message(&job, &l, PLC_RULE_OK, NULL);
    l.schedule = PLC_SCHED_INTERLEAVED;
    l.vpp = 2;
    rule_message(&job, &l, PLC_RULE_PP_LAYERS,
                 "pp = 12 does not divide layers = 70; engine megatron runs unequal stages with schedule gpipe or 1f1b "
                 "only, not interleaved");
    job70(&job, PLC_ENGINE_FSDP2, 128000, &l);
    l.zero = 3;
    l.schedule = PLC_SCHED_GPIPE;
    rule_message(&job, &l, PLC_RULE_OK, NULL);
    /* every stage needs a layer */
    job.model.layers = 11;
    rule_message(&job, &l, PLC_RULE_PP_LAYERS, "pp = 12 is more than layers = 11: every stage needs a layer");
    /* the front end's partial check: vpp unknown does not refuse, a known
     * vpp of 2 does */
    job70(&job, PLC_ENGINE_MEGATRON, 128000, &l);
    job.engine.uneven_stages = 1;
    plc_rule_input in = {.model = &job.model, .layout = l, .known = PLC_LD_BIT(pp), .engine = &job.engine,
                         .engine_id = PLC_ENGINE_MEGATRON};
    CU_ASSERT_EQUAL(plc_layout_rules(&in).rule, PLC_RULE_OK);
    in.known |= PLC_LD_BIT(vpp);
    in.layout.vpp = 2;
    CU_ASSERT_EQUAL(plc_layout_rules(&in).rule, PLC_RULE_PP_LAYERS);
    /* block recompute may name up to the most layers of a stage (6) */
    l.recompute = PLC_RECOMPUTE_BLOCK;
    l.recompute_layers = 6;
    CU_ASSERT_EQUAL(plc_layout_rules_job(&job, &l).rule, PLC_RULE_OK);
    l.recompute_layers = 7;
    CU_ASSERT_EQUAL(plc_layout_rules_job(&job, &l).rule, PLC_RULE_RECOMPUTE_LAYERS_STAGE);
}

/* a 126-layer Llama of 13B's width on 8 A100 under fsdp2: pp 8, vpp 2,
 * interleaved, dp 1, ZeRO 3, no recompute, 16 micro-batches of one
 * sequence, a 1000-token vocabulary */
static void job126(plc_job *job, plc_engine e, plc_layout *l)
{
    fixture_llama13b(job, 1);
    job->model.layers = 126;
    job->model.vocab = 1000;
    job->train.global_batch = 16;
    job->train.engine = e;
    job->engine = profiles.profile[e];
    *l = (plc_layout){.dp = 1, .tp = 1, .pp = 8, .cp = 1, .vpp = 2, .micro_batch = 1, .schedule = PLC_SCHED_INTERLEAVED,
                      .recompute = PLC_RECOMPUTE_NONE, .zero = 3, .attention = PLC_ATTN_FLASH2, .fused_rmsnorm = 1};
}

/* Interleaved unequal virtual stages (126 layers on pp 8, vpp 2) per
 * engine: fsdp2, megatron and plrun (uneven_stages 2) run them, a profile
 * with uneven_stages 1 does not; VPP_LAYERS where pp divides the layers but pp * vpp does not;
 * every virtual stage needs a layer; the layered schedule not at all. */
static void test_rule_interleaved(void)
{
    plc_job job;
    plc_layout l;
    job126(&job, PLC_ENGINE_FSDP2, &l);
    rule_message(&job, &l, PLC_RULE_OK, NULL);
    job.model.layers = 120;
    rule_message(&job, &l, PLC_RULE_OK, NULL);
    l.vpp = 16;
    rule_message(&job, &l, PLC_RULE_VPP_LAYERS,
                 "pp * vpp = 128 does not divide layers = 120, and unequal virtual stages need layers >= 128: "
                 "ceil(layers / (pp * vpp)) = 1 on each but the first and last, a layer at least on those");
    /* the floor form is refused: 80 layers on 32 virtual stages would be
     * 10, 2 x 30, 10 */
    job.model.layers = 80;
    l.vpp = 4;
    rule_message(&job, &l, PLC_RULE_VPP_LAYERS,
                 "pp * vpp = 32 does not divide layers = 80, and unequal virtual stages need layers >= 92: "
                 "ceil(layers / (pp * vpp)) = 3 on each but the first and last, a layer at least on those");
    job.model.layers = 126;
    l.vpp = 1;
    l.schedule = PLC_SCHED_LAYERED;
    rule_message(&job, &l, PLC_RULE_PP_LAYERS,
                 "pp = 8 does not divide layers = 126; engine fsdp2 runs unequal stages with schedule gpipe, 1f1b or "
                 "interleaved only, not layered");
    job126(&job, PLC_ENGINE_MEGATRON, &l);
    l.zero = 1;
    rule_message(&job, &l, PLC_RULE_OK, NULL);
    job.engine.uneven_stages = 1;
    rule_message(&job, &l, PLC_RULE_PP_LAYERS,
                 "pp = 8 does not divide layers = 126; engine megatron runs unequal stages with schedule gpipe or 1f1b "
                 "only, not interleaved");
    job.model.layers = 120;
    rule_message(&job, &l, PLC_RULE_VPP_LAYERS, "pp * vpp = 16 does not divide layers = 120");
    job126(&job, PLC_ENGINE_PLRUN, &l);
    l.zero = 1;
    rule_message(&job, &l, PLC_RULE_OK, NULL);
    l.schedule = PLC_SCHED_MODULAR;
    l.vpp = 1;
    rule_message(&job, &l, PLC_RULE_PP_LAYERS,
                 "pp = 8 does not divide layers = 126; engine plrun runs unequal stages with schedule gpipe, 1f1b or "
                 "interleaved only, not modular");
    /* recompute = every may name up to the largest rank's 16 layers */
    job126(&job, PLC_ENGINE_FSDP2, &l);
    job.engine.offers[PLC_LD_recompute] |= 1u << PLC_RECOMPUTE_EVERY; /* a profile that runs it (fsdp2's does not) */
    l.recompute = PLC_RECOMPUTE_EVERY;
    l.recompute_layers = 16;
    CU_ASSERT_EQUAL(plc_layout_rules_job(&job, &l).rule, PLC_RULE_OK);
    l.recompute_layers = 17;
    CU_ASSERT_EQUAL(plc_layout_rules_job(&job, &l).rule, PLC_RULE_RECOMPUTE_LAYERS_STAGE);
}

/* Memory of 126 layers on pp 8, vpp 2 (job126), derived by hand. Virtual
 * stages 7, 8 x 14, 7: rank 0 holds chunks 0 (7 layers) and 8 (8), ranks
 * 1 to 6 two of 8, rank 7 chunks 7 (8) and 15 (7): 15, 16 x 6, 15 layers.
 * Interleaved warm-up (Megatron's, plc_pipe_warmup): (8 - r - 1) 2 + 8
 * forwards, so at its first backward rank r holds 23 - 2r forwards, the
 * k-th of its chunk (k mod 16) / 8: rank 0 holds k = 0..7 and 16..22 of
 * chunk 0 (15 x 7 = 105 layers) and k = 8..15 of chunk 8 (8 x 8 = 64):
 * 169 layers' activations; rank 1 21 x 8 = 168; rank 2 19 x 8 = 152; rank
 * 7 holds 9, 8 of chunk 7 (64) and one of chunk 15 (7): 71. Weights:
 * rank 1 holds 16 layers, rank 0 15 and the 1000 x 5120 table. A layer's
 * weights (318M) outweigh one layer's activations, so rank 1 is the peak
 * (with or without all_stages: ranks 0, 1 and 7 stand for the rest). */
static void test_memory_interleaved(void)
{
    plc_job job;
    plc_layout l;
    job126(&job, PLC_ENGINE_FSDP2, &l);
    CU_ASSERT_EQUAL(plc_layout_rules_job(&job, &l).rule, PLC_RULE_OK);
    for (int all = 0; all < 2; all++) {
        plc_estimate est;
        memset(&est, 0, sizeof est);
        est.valid = true;
        plc_memory_estimate(&job, &l, all, &est);
        for (int s = 0; s < 8; s++) CU_ASSERT_EQUAL(est.stage_layers[s], s == 0 || s == 7 ? 15 : 16);
        CU_ASSERT_EQUAL(est.peak_stage, 1);
        double act0 = est.stage_mem[0][PLC_MEM_ACTIVATIONS], act1 = est.stage_mem[1][PLC_MEM_ACTIVATIONS];
        double act2 = est.stage_mem[2][PLC_MEM_ACTIVATIONS], act7 = est.stage_mem[7][PLC_MEM_ACTIVATIONS];
        CU_ASSERT_DOUBLE_EQUAL(act0 / act1, 169.0 / 168.0, 1e-12);
        CU_ASSERT_DOUBLE_EQUAL(act7 / act1, 71.0 / 168.0, 1e-12);
        if (all) CU_ASSERT_DOUBLE_EQUAL(act2 / act1, 152.0 / 168.0, 1e-12);
        double layer = (double)plc_params_layer(&job.model);
        CU_ASSERT_DOUBLE_EQUAL(est.stage_params[1], 16.0 * layer, 1.0);
        CU_ASSERT_DOUBLE_EQUAL(est.stage_params[0], 15.0 * layer + 1000.0 * 5120.0, 1.0);
    }
    /* ranks 0, 1 and pp - 1 bound the others: the peak without all_stages
     * is the peak over every rank, for every layer count from 40 to 130
     * on pp 4 and 8 with vpp 2 and 3 that the rules take (a 128k
     * vocabulary too, whose head outweighs a layer) */
    for (int64_t vocab = 1000; vocab <= 128000; vocab += 127000)
        for (int64_t pp = 4; pp <= 8; pp += 4)
            for (int64_t vpp = 2; vpp <= 3; vpp++)
                for (int64_t L = 40; L <= 130; L++) {
                    plc_job j;
                    plc_layout k;
                    job126(&j, PLC_ENGINE_FSDP2, &k);
                    j.model.layers = L;
                    j.model.vocab = vocab;
                    k.pp = pp;
                    k.dp = 8 / pp;
                    k.vpp = vpp;
                    if (plc_layout_rules_job(&j, &k).rule != PLC_RULE_OK) continue;
                    plc_estimate a, b;
                    fixture_peaks(&j, &k, &a, &b);
                    CU_ASSERT_DOUBLE_EQUAL(a.peak_bytes, b.peak_bytes, 0.0);
                }
    /* the held forwards in whole-rank micro-batches */
    CU_ASSERT_DOUBLE_EQUAL(plc_sched_inflight(PLC_SCHED_INTERLEAVED, 8, 2, 126, 16, 0), 169.0 / 15.0, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(plc_sched_inflight(PLC_SCHED_INTERLEAVED, 8, 2, 126, 16, 1), 21.0 / 2.0, 1e-12);
    /* the state-only lower bound holds for every vpp (fsdp2 runs unequal
     * virtual stages: an end may hold fewer layers than with vpp 1) */
    plc_estimate est;
    memset(&est, 0, sizeof est);
    est.valid = true;
    plc_memory_estimate(&job, &l, true, &est);
    CU_ASSERT_TRUE(plc_memory_lower_bound(&job, 1, 8, 1, 1, 3) <= est.peak_bytes);
}

/* Step time of 126 layers on pp 8, vpp 2: a middle rank's 16 layers are the
 * busiest (the ends hold 15 and a small table or head) */
static void test_time_interleaved(void)
{
    plc_job job;
    plc_layout l;
    job126(&job, PLC_ENGINE_FSDP2, &l);
    plc_step_parts P;
    plc_step_parts_of(&job, &l, &P);
    double mb = P.tf + P.tb;
    CU_ASSERT_EQUAL(P.micro, 16);
    CU_ASSERT_EQUAL(P.busiest, 1);
    CU_ASSERT_EQUAL(P.layers, 16);
    CU_ASSERT_DOUBLE_EQUAL(P.busy, 16.0 * 16.0 * mb, 1e-12 * P.busy);
    plc_estimate est;
    memset(&est, 0, sizeof est);
    plc_time_estimate(&job, &l, &est);
    CU_ASSERT_TRUE(est.step_time_s >= P.busy + P.bubble);
}

/* Memory of 70 layers on pp 12 (5, 6 x 10, 5) with 1F1B: stage s holds
 * 12 - s micro-batches in flight, so the layer activations held are
 * 12 x 5 = 60 layers' worth on stage 0, 11 x 6 = 66 on stage 1, 10 x 6 = 60
 * on stage 2 and 1 x 5 on stage 11. With a 1000-token vocabulary the
 * embedding (5.1M parameters) is far below a layer (13B / 40 = 318M), so
 * stage 1 (6 layers, 66 in flight) holds more than stage 0 (5 layers and
 * the table, 60 in flight) in every component: it is the peak, found with
 * or without all_stages (without, stages 0, 1 and 11 are evaluated). */
static void test_memory(void)
{
    plc_job job;
    plc_layout l;
    job70(&job, PLC_ENGINE_MEGATRON, 1000, &l);
    for (int all = 0; all < 2; all++) {
        plc_estimate est;
        memset(&est, 0, sizeof est);
        est.valid = true;
        plc_memory_estimate(&job, &l, all, &est);
        CU_ASSERT_EQUAL(est.peak_stage, 1);
        double act0 = est.stage_mem[0][PLC_MEM_ACTIVATIONS], act1 = est.stage_mem[1][PLC_MEM_ACTIVATIONS];
        double act2 = est.stage_mem[2][PLC_MEM_ACTIVATIONS], act11 = est.stage_mem[11][PLC_MEM_ACTIVATIONS];
        CU_ASSERT_DOUBLE_EQUAL(act1 / act0, 66.0 / 60.0, 1e-12);
        if (all) CU_ASSERT_DOUBLE_EQUAL(act2 / act0, 1.0, 1e-12); /* else stage 1 stands for the middle ones */
        CU_ASSERT_DOUBLE_EQUAL(act11 / act0, 5.0 / 60.0, 1e-12);
        /* every stage's layer count, evaluated or not (plc explain prints them) */
        for (int s = 0; s < 12; s++) CU_ASSERT_EQUAL(est.stage_layers[s], s == 0 || s == 11 ? 5 : 6);
        /* weights: 6 layers on stage 1 against 5 and the table on stage 0 */
        double layer = (double)plc_params_layer(&job.model);
        CU_ASSERT_DOUBLE_EQUAL(est.stage_params[1], 6.0 * layer, 1.0);
        CU_ASSERT_DOUBLE_EQUAL(est.stage_params[0], 5.0 * layer + 1000.0 * 5120.0, 1.0);
    }
}

/* Step time of 70 layers on pp 12. Per micro-batch a middle stage works
 * 6 (tf + tb), stage 0 5 (tf + tb) + first, stage 11 5 (tf + tb) + last.
 * With a 1000-token vocabulary the head and loss are far below one layer,
 * so a middle stage is the busiest: busy = micro x 6 (tf + tb), no ends.
 * With 128000 tokens the head (5120 x 128000 = 655M weights, two layers'
 * worth) makes the last stage the busiest: micro x (5 (tf + tb) + last).
 * The bubble is 1F1B's closed form, (pp - 1) / micro of micro x (70 / 12
 * (tf + tb) + (first + last) / 12). */
static void test_time(void)
{
    plc_job job;
    plc_layout l;
    job70(&job, PLC_ENGINE_MEGATRON, 1000, &l);
    plc_step_parts P;
    plc_step_parts_of(&job, &l, &P);
    double mb = P.tf + P.tb, M = (double)P.micro;
    CU_ASSERT_EQUAL(P.micro, 64);
    CU_ASSERT_TRUE(P.last < mb);
    CU_ASSERT_EQUAL(P.busiest, 1);
    CU_ASSERT_EQUAL(P.layers, 6);
    CU_ASSERT_DOUBLE_EQUAL(P.ends, 0.0, 0.0);
    CU_ASSERT_DOUBLE_EQUAL(P.busy, M * 6.0 * mb, 1e-12 * P.busy);
    double bubble = 11.0 / M * M * (70.0 / 12.0 * mb + (P.first + P.last) / 12.0);
    CU_ASSERT_DOUBLE_EQUAL(P.bubble, bubble, 1e-9 * bubble);

    job70(&job, PLC_ENGINE_MEGATRON, 128000, &l);
    plc_step_parts_of(&job, &l, &P);
    mb = P.tf + P.tb;
    CU_ASSERT_TRUE(P.last > mb);
    CU_ASSERT_EQUAL(P.busiest, 11);
    CU_ASSERT_EQUAL(P.layers, 5);
    CU_ASSERT_DOUBLE_EQUAL(P.ends, P.last, 0.0);
    CU_ASSERT_DOUBLE_EQUAL(P.busy, M * (5.0 * mb + P.last), 1e-12 * P.busy);
    /* the step: the busiest stage's work, its bubble and the rest */
    plc_estimate est;
    memset(&est, 0, sizeof est);
    plc_time_estimate(&job, &l, &est);
    CU_ASSERT_TRUE(est.step_time_s >= P.busy + P.bubble);
    /* 72 layers (6 a stage) work more than 70 on every stage */
    job.model.layers = 72;
    plc_step_parts Q;
    plc_step_parts_of(&job, &l, &Q);
    CU_ASSERT_EQUAL(Q.layers, 6);
    CU_ASSERT_TRUE(Q.busy > P.busy);
}

void register_test_common_uneven_stages(void);
void register_test_common_uneven_stages(void)
{
    CU_pSuite s = CU_add_suite("uneven stages", load_profiles, free_profiles);
    CU_add_test(s, "the split", test_split);
    CU_add_test(s, "the split over virtual stages", test_rank_split);
    CU_add_test(s, "rule per engine", test_rule_per_engine);
    CU_add_test(s, "rule per engine, interleaved", test_rule_interleaved);
    CU_add_test(s, "memory of 126 layers on pp 8, vpp 2", test_memory_interleaved);
    CU_add_test(s, "step time of 126 layers on pp 8, vpp 2", test_time_interleaved);
    CU_add_test(s, "memory of 70 layers on pp 12", test_memory);
    CU_add_test(s, "step time of 70 layers on pp 12", test_time);
}
