/* test_solver_engines.c: the engine profiles loader (compiler/frontend/engines.c):
 * a complete profile, each way a file can be wrong and its message, and the
 * shipped examples/engines.yaml (every engine present, each figure sourced,
 * what each engine runs). */
#include <CUnit/CUnit.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/frontend/frontend_int.h"
#include "compiler/solver/solver.h"
#include "compiler/solver/solver_int.h"
#include "test_solver_fixtures.h"

typedef struct loaded {
    plc_arena a;
    plc_engine_set set;
    char *out;
    int errors;
} loaded;

static void parse(loaded *l, const char *text)
{
    plc_arena_init(&l->a);
    size_t len;
    l->out = NULL;
    FILE *f = open_memstream(&l->out, &len);
    plc_diag d;
    plc_diag_init(&d, f, 100);
    plc_source *src = plc_source_from_text(&l->a, "engines.yaml", text, strlen(text));
    l->errors = plc_engines_parse(&l->a, &d, src, &l->set);
    fclose(f);
}

static void done(loaded *l)
{
    free(l->out);
    plc_arena_free(&l->a);
}

/* every figure of PLC_ENGINE_FIGURES with a source, value 1 (0.5 for shares) */
static void profile_text(char *buf, size_t size, const char *name, const char *skip, const char *extra)
{
    size_t n = (size_t)snprintf(buf, size, "%s:\n  describes: Test engine 1.0\n", name);
#define LINE(member, key, lo, hi, what)                                                                   \
    if (!skip || strcmp(skip, key))                                                                       \
        n += (size_t)snprintf(buf + n, size - n, "  %s: {value: %g, source: \"the %s manual\"}\n", key, \
                              (hi) == 1 ? 1.0 : 2.0, key);
    PLC_ENGINE_FIGURES(LINE)
#undef LINE
    if (extra) snprintf(buf + n, size - n, "%s", extra);
}

static void expect(const char *text, const char *message)
{
    loaded l;
    parse(&l, text);
    CU_ASSERT(l.errors > 0);
    if (!l.out || !strstr(l.out, message)) {
        fprintf(stderr, "\nexpected \"%s\" in:\n%s\n", message, l.out ? l.out : "");
        CU_FAIL("message not found");
    }
    done(&l);
}

static void test_complete_profile(void)
{
    char text[4096];
    profile_text(text, sizeof text, "megatron", NULL,
                 "  runs:\n    schedule: {values: [1f1b, interleaved], source: \"schedules.py\"}\n"
                 "    zero: {values: [0, 1], source: \"the optimizer guide\"}\n"
                 "    sp: {values: [\"on\"], source: \"the TP guide\"}\n");
    loaded l;
    parse(&l, text);
    CU_ASSERT_EQUAL(l.errors, 0);
    if (l.errors) fprintf(stderr, "\n%s\n", l.out);
    CU_ASSERT_TRUE(l.set.has[PLC_ENGINE_MEGATRON]);
    CU_ASSERT_FALSE(l.set.has[PLC_ENGINE_PLRUN]);
    const plc_engine_profile *p = &l.set.profile[PLC_ENGINE_MEGATRON];
    CU_ASSERT_STRING_EQUAL(p->describes, "Test engine 1.0");
    CU_ASSERT_DOUBLE_EQUAL(p->tp_overlap, 1.0, 0);
    CU_ASSERT_DOUBLE_EQUAL(p->grad_bytes, 2.0, 0);
    CU_ASSERT_TRUE(plc_engine_offers(p, PLC_LD_schedule, PLC_SCHED_1F1B));
    CU_ASSERT_TRUE(plc_engine_offers(p, PLC_LD_schedule, PLC_SCHED_INTERLEAVED));
    CU_ASSERT_FALSE(plc_engine_offers(p, PLC_LD_schedule, PLC_SCHED_GPIPE));
    CU_ASSERT_TRUE(plc_engine_offers(p, PLC_LD_zero, 1));
    CU_ASSERT_FALSE(plc_engine_offers(p, PLC_LD_zero, 2));
    CU_ASSERT_FALSE(plc_engine_offers(p, PLC_LD_sp, 0));
    CU_ASSERT_TRUE(plc_engine_offers(p, PLC_LD_sp, 1));
    CU_ASSERT_TRUE(plc_engine_offers(p, PLC_LD_attention, PLC_ATTN_NAIVE)); /* not listed: every value */
    done(&l);
}

static void test_bad_files(void)
{
    char text[4096];
    expect("megatron: [1, 2\n", "error: YAML:");
    expect("- a\n- b\n", "expected a mapping of engine profiles");
    expect("megatorn: {}\n", "did you mean 'megatron'?");
    profile_text(text, sizeof text, "fsdp2", "tp_overlap", NULL);
    expect(text, "profile 'fsdp2' lacks 'tp_overlap'");
    /* a figure without its source */
    profile_text(text, sizeof text, "fsdp2", "p2p_overlap", "  p2p_overlap: {value: 0}\n");
    expect(text, "'p2p_overlap' lacks its source");
    profile_text(text, sizeof text, "fsdp2", "p2p_overlap", "  p2p_overlap: {value: 0, source: \"\"}\n");
    expect(text, "'p2p_overlap' lacks its source");
    profile_text(text, sizeof text, "fsdp2", "p2p_overlap", "  p2p_overlap: 1\n");
    expect(text, "'p2p_overlap' must be a mapping {value: ..., source: \"...\"}");
    profile_text(text, sizeof text, "fsdp2", "alloc_overhead", "  alloc_overhead: {value: 1.5, source: \"x\"}\n");
    expect(text, "'alloc_overhead' must be between 0 and 1");
    profile_text(text, sizeof text, "fsdp2", "alloc_overhead", "  alloc_overhead: {value: lots, source: \"x\"}\n");
    expect(text, "'alloc_overhead' must be a number, not 'lots'");
    profile_text(text, sizeof text, "fsdp2", NULL, "  tp_overlaps: {value: 1, source: \"x\"}\n");
    expect(text, "did you mean 'tp_overlap'?");
    /* runs */
    profile_text(text, sizeof text, "fsdp2", NULL, "  runs:\n    schedule: {values: [1f1b, zigzag], source: \"x\"}\n");
    expect(text, "unknown schedule 'zigzag'");
    profile_text(text, sizeof text, "fsdp2", NULL, "  runs:\n    zero: {values: [3]}\n");
    expect(text, "'zero' lacks its source");
    profile_text(text, sizeof text, "fsdp2", NULL, "  runs:\n    tp: {values: [1], source: \"x\"}\n");
    expect(text, "'runs' names the layout keys");
    profile_text(text, sizeof text, "fsdp2", NULL, "  runs:\n    zero: {values: [], source: \"x\"}\n");
    expect(text, "'zero' lists no value");
    char twice[8192];
    profile_text(text, sizeof text, "plrun", NULL, NULL);
    snprintf(twice, sizeof twice, "%s%s", text, text);
    expect(twice, "duplicate profile 'plrun'");
    char nodesc[4096];
    profile_text(text, sizeof text, "plrun", NULL, NULL);
    char *d = strstr(text, "  describes:");
    char *e = strchr(d, '\n');
    snprintf(nodesc, sizeof nodesc, "%.*s%s", (int)(d - text), text, e + 1);
    expect(nodesc, "profile 'plrun' lacks 'describes'");
}

/* the shipped file: the three engines, and what each one runs */
static void test_shipped_profiles(void)
{
    plc_arena a;
    plc_arena_init(&a);
    size_t len;
    char *out = NULL;
    FILE *f = open_memstream(&out, &len);
    plc_diag d;
    plc_diag_init(&d, f, 100);
    plc_engine_set set;
    int errors = plc_engines_load(&a, &d, "../examples/engines.yaml", &set);
    fclose(f);
    CU_ASSERT_EQUAL(errors, 0);
    if (errors) fprintf(stderr, "\n%s\n", out);
    for (int e = 0; e < PLC_ENGINE_COUNT; e++) CU_ASSERT_TRUE(set.has[e]);
    const plc_engine_profile *pl = &set.profile[PLC_ENGINE_PLRUN], *mg = &set.profile[PLC_ENGINE_MEGATRON],
                             *fs = &set.profile[PLC_ENGINE_FSDP2];
    /* plrun: a static plan, nothing overlapped that the lowering does not */
    CU_ASSERT_DOUBLE_EQUAL(pl->alloc_overhead, 0, 0);
    CU_ASSERT_DOUBLE_EQUAL(pl->tp_overlap + pl->param_gather_overlap + pl->p2p_overlap, 0, 0);
    CU_ASSERT_DOUBLE_EQUAL(pl->grad_reduce_overlap, 1, 0);
    for (int s = 0; s < PLC_SCHED_COUNT; s++) CU_ASSERT_TRUE(plc_engine_offers(pl, PLC_LD_schedule, s));
    for (int z = 0; z < 4; z++) CU_ASSERT_TRUE(plc_engine_offers(pl, PLC_LD_zero, z));
    /* Megatron-Core: 1F1B and interleaved, the distributed optimizer, TE kernels */
    CU_ASSERT_FALSE(plc_engine_offers(mg, PLC_LD_schedule, PLC_SCHED_GPIPE));
    CU_ASSERT_FALSE(plc_engine_offers(mg, PLC_LD_schedule, PLC_SCHED_LAYERED));
    CU_ASSERT_TRUE(plc_engine_offers(mg, PLC_LD_schedule, PLC_SCHED_INTERLEAVED));
    CU_ASSERT_TRUE(plc_engine_offers(mg, PLC_LD_zero, 1));
    CU_ASSERT_FALSE(plc_engine_offers(mg, PLC_LD_zero, 3));
    CU_ASSERT_FALSE(plc_engine_offers(mg, PLC_LD_attention, PLC_ATTN_NAIVE));
    CU_ASSERT_DOUBLE_EQUAL(mg->fused_swiglu, 1, 0);
    /* Megatron-Core 0.19 against r0.8: the same figures and runs lists but
     * the pipeline split (docs/engines.md: 0.19 splits unequal stages, with
     * the interleaved schedule too; r0.8 equal stages only) */
    const plc_engine_profile *m8 = &set.profile[PLC_ENGINE_MEGATRON_R0_8];
    CU_ASSERT_DOUBLE_EQUAL(mg->uneven_stages, 2, 0);
    CU_ASSERT_DOUBLE_EQUAL(m8->uneven_stages, 0, 0);
    plc_engine_profile same = *m8;
    same.uneven_stages = mg->uneven_stages;
    memcpy(same.describes, mg->describes, sizeof same.describes);
    CU_ASSERT_EQUAL(memcmp(&same, mg, sizeof same), 0);
    /* FSDP2: sharded data parallelism, SDPA's flash kernel */
    CU_ASSERT_FALSE(plc_engine_offers(fs, PLC_LD_zero, 0));
    CU_ASSERT_FALSE(plc_engine_offers(fs, PLC_LD_zero, 1));
    CU_ASSERT_TRUE(plc_engine_offers(fs, PLC_LD_zero, 3));
    CU_ASSERT_FALSE(plc_engine_offers(fs, PLC_LD_attention, PLC_ATTN_FUSED));
    CU_ASSERT_DOUBLE_EQUAL(fs->param_gather_overlap, 1, 0);
    CU_ASSERT_DOUBLE_EQUAL(fs->selective_ops + fs->sharded_master, 2, 0);
    CU_ASSERT_DOUBLE_EQUAL(pl->selective_ops + pl->sharded_master + mg->selective_ops + mg->sharded_master, 0, 0);
    free(out);
    plc_arena_free(&a);
}

/* the shipped profiles, loaded once per test */
static bool shipped(plc_arena *a, plc_engine_set *set)
{
    plc_diag d;
    plc_diag_init(&d, stderr, 100);
    return plc_engines_load(a, &d, "../examples/engines.yaml", set) == 0;
}

/* the rulebook per engine: a layout the engine cannot run breaks
 * ENGINE_OFFERS at the key that says why; the search offers none */
static void test_legality_per_engine(void)
{
    plc_arena a;
    plc_arena_init(&a);
    plc_engine_set set;
    CU_ASSERT_FATAL(shipped(&a, &set));
    plc_job job;
    fixture_llama13b(&job, 2);
    plc_layout l = {.dp = 16, .tp = 1, .pp = 1, .cp = 1, .vpp = 1, .micro_batch = 1, .schedule = PLC_SCHED_GPIPE,
                    .recompute = PLC_RECOMPUTE_FULL, .zero = 1, .attention = PLC_ATTN_FLASH2, .fused_rmsnorm = 1};
    job.train.engine = PLC_ENGINE_PLRUN;
    job.engine = set.profile[PLC_ENGINE_PLRUN];
    CU_ASSERT_EQUAL(plc_layout_rules_job(&job, &l).rule, PLC_RULE_OK);
    job.train.engine = PLC_ENGINE_MEGATRON;
    job.engine = set.profile[PLC_ENGINE_MEGATRON];
    plc_verdict v = plc_layout_rules_job(&job, &l);
    CU_ASSERT_EQUAL(v.rule, PLC_RULE_ENGINE_OFFERS);
    CU_ASSERT_STRING_EQUAL(v.key, "schedule");
    char msg[256];
    plc_layout_rules_job_message(&job, &l, v, msg, sizeof msg);
    CU_ASSERT_STRING_EQUAL(msg, "engine megatron does not run schedule = gpipe; it runs 1f1b, interleaved");
    l.schedule = PLC_SCHED_1F1B;
    CU_ASSERT_EQUAL(plc_layout_rules_job(&job, &l).rule, PLC_RULE_OK);
    job.train.engine = PLC_ENGINE_FSDP2;
    job.engine = set.profile[PLC_ENGINE_FSDP2];
    v = plc_layout_rules_job(&job, &l);
    CU_ASSERT_EQUAL(v.rule, PLC_RULE_ENGINE_OFFERS);
    CU_ASSERT_STRING_EQUAL(v.key, "zero");
    l.zero = 3;
    CU_ASSERT_EQUAL(plc_layout_rules_job(&job, &l).rule, PLC_RULE_OK);

    /* the search over everything: only what each engine runs */
    for (int e = 0; e < PLC_ENGINE_COUNT; e++) {
        job.train.engine = (plc_engine)e;
        job.engine = set.profile[e];
        job.layout.tp.kind = PLC_CHOICE_SET; job.layout.tp.n = 2; job.layout.tp.v[0] = 1; job.layout.tp.v[1] = 2;
        job.layout.pp.kind = PLC_CHOICE_SET; job.layout.pp.n = 2; job.layout.pp.v[0] = 1; job.layout.pp.v[1] = 2;
        fixture_pin(&job.layout.cp, 1);
        fixture_pin(&job.layout.micro_batch, 1);
        plc_solve_opts o = {.top = 5, .all = true};
        plc_solution sol;
        CU_ASSERT_EQUAL_FATAL(plc_solve_opts_run(&job, &a, &o, &sol), PLC_OK);
        CU_ASSERT(sol.nall > 0);
        int64_t seen[PLC_LD_COUNT] = {0};
        for (int64_t i = 0; i < sol.nall; i++) {
            const plc_layout *c = &sol.all[i].layout;
            for (int d = 0; d < PLC_LD_COUNT; d++) {
                int64_t x = plc_layout_get(c, (plc_layout_dim)d);
                CU_ASSERT_TRUE(plc_engine_offers(&job.engine, (plc_layout_dim)d, x));
                if (x >= 0 && x < 64) seen[d] |= 1ll << x;
            }
        }
        /* and every value it runs is offered somewhere (zero beyond dp = 1 included) */
        CU_ASSERT_EQUAL(seen[PLC_LD_schedule] & (int64_t)job.engine.offers[PLC_LD_schedule],
                        (int64_t)job.engine.offers[PLC_LD_schedule]);
        CU_ASSERT_EQUAL(seen[PLC_LD_zero] & (int64_t)job.engine.offers[PLC_LD_zero], (int64_t)job.engine.offers[PLC_LD_zero]);
    }
    plc_arena_free(&a);
}

/* the search's node memory bound (plc_memory_node_bound) lies at or below
 * the estimate of every leaf under it, for each engine's memory model (the
 * plrun replay and the closed form of the others), so pruning by it never
 * drops a layout that fits */
static void test_node_memory_bound(void)
{
    plc_arena a;
    plc_arena_init(&a);
    plc_engine_set set;
    CU_ASSERT_FATAL(shipped(&a, &set));
    int64_t checked = 0, tight = 0;
    /* each shipped profile, then Megatron's with the head's output gathered
     * (gathered_logits: more leaf memory the bound does not count) */
    for (int e = 0; e <= PLC_ENGINE_COUNT; e++) {
        for (int gpt = 0; gpt < 2; gpt++) {
            plc_job job;
            fixture_llama13b(&job, 1);
            if (gpt) { /* the GPT block, tied embeddings, fp32 */
                fixture_model(&job.model, "gpt-1b", 24, 2048, 8192, 16, 16, 50257, 1024, true);
                job.model.arch = PLC_ARCH_GPT;
                job.model.positions = PLC_POS_LEARNED;
                job.train.precision = PLC_PREC_FP32;
            }
            job.train.engine = e < PLC_ENGINE_COUNT ? (plc_engine)e : PLC_ENGINE_MEGATRON;
            job.engine = set.profile[job.train.engine];
            if (e == PLC_ENGINE_COUNT) job.engine.gathered_logits = 1;
            job.train.global_batch = 64;
            job.layout.micro_batch = (plc_choice){.kind = PLC_CHOICE_SET, .n = 3, .v = {1, 2, 8}};
            plc_solve_opts o = {.top = 5, .all = true};
            plc_solution sol;
            CU_ASSERT_EQUAL_FATAL(plc_solve_opts_run(&job, &a, &o, &sol), PLC_OK);
            for (int64_t i = 0; i < sol.nall; i++) {
                const plc_candidate *c = &sol.all[i];
                if (!c->valid) continue;
                double bound = plc_memory_node_bound(&job, &c->layout);
                CU_ASSERT_TRUE(bound <= c->peak_bytes * (1 + 1e-9));
                if (bound > c->peak_bytes) printf("\n    node bound %.0f above the estimate %.0f\n", bound, c->peak_bytes);
                checked++;
                tight += bound > 0.5 * c->peak_bytes;
            }
        }
    }
    CU_ASSERT_TRUE(checked > 1000);
    CU_ASSERT_TRUE(tight > checked / 4); /* and it is not vacuous */
    printf("\n    %lld leaves, bound above half the estimate on %lld\n", (long long)checked, (long long)tight);
    plc_arena_free(&a);
}

/* Llama-13B on 2 x 8 A100: dp 2, tp 8 with sequence parallelism, 1F1B
 * over pp 1, ZeRO 1, one micro-batch of 2048 tokens */
static void overlap_job(plc_job *job, plc_layout *l)
{
    fixture_llama13b(job, 2);
    *l = (plc_layout){.dp = 2, .tp = 8, .pp = 1, .cp = 1, .sp = 1, .vpp = 1, .micro_batch = 1,
                      .schedule = PLC_SCHED_1F1B, .recompute = PLC_RECOMPUTE_NONE, .zero = 1,
                      .attention = PLC_ATTN_FLASH2, .fused_rmsnorm = 1};
}

/* each overlap figure hides what overlap.h says, and only that */
static void test_overlap_terms(void)
{
    plc_job job;
    plc_layout l;
    overlap_job(&job, &l);
    plc_layer_times t0, t1;
    plc_layer_times_of(&job, &l, &t0);
    job.engine.tp_overlap = 1;
    plc_layer_times_of(&job, &l, &t1);
    CU_ASSERT(t0.tp_f > 0);
    /* the first of tp = 8 chunks, or what outlasts the GEMMs */
    double want_f = fmax(t0.tp_f / 8.0, t0.tp_f - t0.matmul_f), want_b = fmax(t0.tp_b / 8.0, t0.tp_b - t0.matmul_b);
    CU_ASSERT_DOUBLE_EQUAL(t1.tp_f, want_f, 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(t1.tp_b, want_b, 1e-15);
    CU_ASSERT(t1.tp_f < t0.tp_f);
    CU_ASSERT_DOUBLE_EQUAL(t1.matmul_f, t0.matmul_f, 0);
    /* without sequence parallelism Megatron's overlap does not apply */
    l.sp = 0;
    plc_layer_times_of(&job, &l, &t1);
    job.engine.tp_overlap = 0;
    plc_layer_times_of(&job, &l, &t0);
    CU_ASSERT_DOUBLE_EQUAL(t1.tp_f, t0.tp_f, 0);
    l.sp = 1;

    /* gradient reduction: exposed entirely without the overlap */
    plc_estimate e0, e1;
    job.engine.grad_reduce_overlap = 0;
    CU_ASSERT_EQUAL(plc_estimate_layout(&job, &l, &e0), 0);
    job.engine.grad_reduce_overlap = 1;
    CU_ASSERT_EQUAL(plc_estimate_layout(&job, &l, &e1), 0);
    CU_ASSERT(e0.time[PLC_TIME_COMM_DP] > e1.time[PLC_TIME_COMM_DP]);
    CU_ASSERT_DOUBLE_EQUAL(e0.time[PLC_TIME_COMPUTE], e1.time[PLC_TIME_COMPUTE], 0);
    CU_ASSERT_DOUBLE_EQUAL(e0.step_time_s - e0.time[PLC_TIME_COMM_DP], e1.step_time_s - e1.time[PLC_TIME_COMM_DP], 1e-12);

    /* ZeRO 1's weight gather: first bucket exposed, or what outlasts a forward */
    job.engine.param_gather_overlap = 1;
    plc_estimate e2;
    CU_ASSERT_EQUAL(plc_estimate_layout(&job, &l, &e2), 0);
    double gather = e1.time[PLC_TIME_COMM_ZERO];
    plc_layer_times_of(&job, &l, &t0);
    double tf = t0.matmul_f + t0.attn_f + t0.mem_f + t0.tp_f + t0.cp_f + t0.launch_f;
    CU_ASSERT(gather > 0);
    CU_ASSERT_DOUBLE_EQUAL(e2.time[PLC_TIME_COMM_ZERO], fmax(gather / 40.0, gather - 40.0 * tf), 1e-12);

    /* ZeRO 3 layer gathers, prefetched: at most the unhidden ones */
    l.zero = 3;
    job.engine.param_gather_overlap = 0;
    CU_ASSERT_EQUAL(plc_estimate_layout(&job, &l, &e0), 0);
    job.engine.param_gather_overlap = 1;
    CU_ASSERT_EQUAL(plc_estimate_layout(&job, &l, &e1), 0);
    CU_ASSERT(e1.time[PLC_TIME_COMM_ZERO] < e0.time[PLC_TIME_COMM_ZERO]);
    /* 2 x micro-batches passes of 40 layers: one gather per pass exposed at least */
    CU_ASSERT(e1.time[PLC_TIME_COMM_ZERO] >= e0.time[PLC_TIME_COMM_ZERO] / 40.0 * (1 - 1e-12));

    /* interleaved pipeline messages hidden under another chunk */
    overlap_job(&job, &l);
    l.dp = 1; l.pp = 2; l.vpp = 2; l.schedule = PLC_SCHED_INTERLEAVED;
    job.engine.p2p_overlap = 0;
    CU_ASSERT_EQUAL(plc_estimate_layout(&job, &l, &e0), 0);
    CU_ASSERT(e0.valid);
    job.engine.p2p_overlap = 1;
    CU_ASSERT_EQUAL(plc_estimate_layout(&job, &l, &e1), 0);
    CU_ASSERT(e0.time[PLC_TIME_COMM_PP] > 0);
    CU_ASSERT_DOUBLE_EQUAL(e1.time[PLC_TIME_COMM_PP], 0, 0); /* 512 KiB messages under 10 layers of compute */
    l.schedule = PLC_SCHED_1F1B; l.vpp = 1; /* 1F1B waits for its messages */
    CU_ASSERT_EQUAL(plc_estimate_layout(&job, &l, &e1), 0);
    CU_ASSERT(e1.time[PLC_TIME_COMM_PP] > 0);
}

/* the step with an engine figure at 0 (*off) and at `on` (*with; the
 * figure is left at `on`) */
static void estimate_off_on(plc_job *job, const plc_layout *l, double *figure, double on, plc_estimate *off,
                            plc_estimate *with)
{
    *figure = 0;
    CU_ASSERT_EQUAL(plc_estimate_layout(job, l, off), 0);
    *figure = on;
    CU_ASSERT_EQUAL(plc_estimate_layout(job, l, with), 0);
}

/* an engine figure that does not apply to layout l: component c of the
 * step is the same with the figure at `on` and at 0 */
static void assert_figure_inert(plc_job *job, const plc_layout *l, double *figure, double on, plc_time_component c)
{
    plc_estimate e0, e1;
    estimate_off_on(job, l, figure, on, &e0, &e1);
    CU_ASSERT_DOUBLE_EQUAL(e1.time[c], e0.time[c], 0);
}

/* p2p_scatter_gather (Megatron-LM 2021-2022): without sequence parallelism
 * a pipeline message crosses the node boundary as tp pieces of 1/tp, one per
 * rank and link, and is all-gathered over NVLink on arrival; with sp (the
 * message is the sequence shard already) or tp = 1 it changes nothing */
static void test_p2p_scatter_gather(void)
{
    plc_job job;
    plc_layout l;
    overlap_job(&job, &l);
    l.dp = 1; l.pp = 2; l.sp = 0; /* tp 8 fills a node: the hop crosses nodes */
    plc_estimate e0, e1;
    estimate_off_on(&job, &l, &job.engine.p2p_scatter_gather, 1, &e0, &e1);
    const plc_hw *hw = &job.cluster.hw;
    double bytes = 2048.0 * 5120.0 * 2.0, e = hw->comm_eff;
    double whole = bytes / (hw->inter_node_bw * e) + hw->inter_node_lat;
    double split = bytes / 8.0 / (hw->inter_node_bw * e) + hw->inter_node_lat +
                   plc_cost_collective(hw, PLC_COLL_ALL_GATHER, bytes, 8, 8);
    CU_ASSERT(split < whole / 2.0);
    CU_ASSERT_DOUBLE_EQUAL(e1.time[PLC_TIME_COMM_PP] / e0.time[PLC_TIME_COMM_PP], split / whole, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(e1.time[PLC_TIME_COMPUTE], e0.time[PLC_TIME_COMPUTE], 0);
    /* sequence parallelism: the figure does not apply */
    l.sp = 1;
    assert_figure_inert(&job, &l, &job.engine.p2p_scatter_gather, 1, PLC_TIME_COMM_PP);
}

/* overlap_sm_share: an overlapped collective slows the compute under it by
 * the share of the SMs it holds, so a term costs its exposed part plus that
 * share of the hidden part; nothing changes where nothing is overlapped */
static void test_overlap_sm_share(void)
{
    plc_job job;
    plc_layout l;
    overlap_job(&job, &l);
    job.engine.tp_overlap = 1;
    double comm = 2e-3, gemm = 5e-3;
    double exposed = fmax(comm / 8.0, comm - gemm);
    CU_ASSERT_DOUBLE_EQUAL(plc_overlap_tp(&job, &l, comm, gemm), exposed, 1e-15);
    job.engine.overlap_sm_share = 0.12;
    /* tp: only the reduce-scatters' half holds SMs (the all-gathers run on
     * the copy engines) */
    CU_ASSERT_DOUBLE_EQUAL(plc_overlap_tp(&job, &l, comm, gemm), exposed + 0.06 * (comm - exposed), 1e-15);
    /* a collective longer than its compute: exposed beyond it, the rest charged */
    CU_ASSERT_DOUBLE_EQUAL(plc_overlap_tp(&job, &l, 8e-3, gemm), 3e-3 + 0.06 * 5e-3, 1e-15);
    job.engine.grad_reduce_overlap = 1;
    CU_ASSERT_DOUBLE_EQUAL(plc_overlap_grad_reduce(&job, 1.0, 0.1, 4.0), 0.1 + 0.12 * 0.9, 1e-15);
    /* not overlapped: the whole cost, whatever the share */
    job.engine.grad_reduce_overlap = 0;
    CU_ASSERT_DOUBLE_EQUAL(plc_overlap_grad_reduce(&job, 1.0, 0.1, 4.0), 1.0, 0);
    job.engine.param_gather_overlap = 1;
    CU_ASSERT_DOUBLE_EQUAL(plc_overlap_param_gather(&job, 1.0, 40, 4.0), 1.0 / 40.0 + 0.12 * 39.0 / 40.0, 1e-15);
    /* the step: a profile that overlaps pays for it, the compute itself unchanged */
    plc_estimate e0, e1;
    estimate_off_on(&job, &l, &job.engine.overlap_sm_share, 0.12, &e0, &e1);
    CU_ASSERT(e1.time[PLC_TIME_COMM_TP] > e0.time[PLC_TIME_COMM_TP]);
    CU_ASSERT(e1.time[PLC_TIME_COMM_ZERO] > e0.time[PLC_TIME_COMM_ZERO]);
    CU_ASSERT_DOUBLE_EQUAL(e1.time[PLC_TIME_COMPUTE], e0.time[PLC_TIME_COMPUTE], 0);
}

/* dp_bucket: the data-parallel reduction and ZeRO 1 gather as buckets, one
 * collective (one latency) each, instead of one per parameter tensor */
static void test_dp_bucket(void)
{
    plc_job job;
    plc_layout l;
    overlap_job(&job, &l);
    CU_ASSERT_DOUBLE_EQUAL(plc_dp_collectives(&job, 1e9, 500), 500, 0); /* 0: the lowering's count */
    job.engine.dp_bucket = 4e7;
    CU_ASSERT_DOUBLE_EQUAL(plc_dp_collectives(&job, 1e9, 500), 25, 0);
    CU_ASSERT_DOUBLE_EQUAL(plc_dp_collectives(&job, 1e6, 500), 1, 0); /* at least one */
    /* fewer collectives, less latency: the exposed reduction and gather
     * shrink, nothing else moves */
    plc_estimate e0, e1;
    estimate_off_on(&job, &l, &job.engine.dp_bucket, 4e7, &e0, &e1);
    CU_ASSERT(e1.time[PLC_TIME_COMM_DP] < e0.time[PLC_TIME_COMM_DP]);
    CU_ASSERT(e1.time[PLC_TIME_COMM_ZERO] < e0.time[PLC_TIME_COMM_ZERO]);
    CU_ASSERT_DOUBLE_EQUAL(e1.time[PLC_TIME_COMPUTE], e0.time[PLC_TIME_COMPUTE], 0);
    /* ZeRO 2 reduces per micro-batch: the figure does not apply */
    l.zero = 2;
    assert_figure_inert(&job, &l, &job.engine.dp_bucket, 4e7, PLC_TIME_COMM_DP);
}

/* dp_reduce_bytes, dp_allreduce_always (the Hagemann sweep's code): under
 * ZeRO 1 the data-parallel reduction of the stage's N gradient elements is
 * an all-reduce of 4 bytes each over the dp group instead of a
 * reduce-scatter of grad_bytes; at 0 it is the reduce-scatter, and the
 * figures move no memory. ZeRO 3 reduce-scatters whatever the figure. */
static void test_dp_reduce_kind(void)
{
    plc_job job;
    plc_layout l;
    overlap_job(&job, &l);
    job.cluster.hw.grad_bytes = 2; /* bf16 gradients, as the sweep's */
    job.engine.dp_bucket = 1e12;   /* one collective */
    plc_layout_groups g;
    plc_layout_groups_of(&l, job.cluster.gpus_per_node, &g);
    plc_stage_params sp;
    plc_stage_params_of(&job.model, l.tp, l.pp, l.vpp, 0, &sp);
    double n = plc_stage_params_total(&sp);
    const plc_hw *hw = &job.cluster.hw;
    double rs = plc_cost_group(hw, PLC_COLL_REDUCE_SCATTER, n * 2.0, g.dpcp);
    double ar = plc_cost_group(hw, PLC_COLL_ALL_REDUCE, n * 4.0, g.dpcp);
    CU_ASSERT(ar > 2.0 * rs);
    plc_step_parts P;
    plc_estimate e0, e1;
    plc_step_parts_of(&job, &l, &P);
    CU_ASSERT_EQUAL(plc_estimate_layout(&job, &l, &e0), 0);
    CU_ASSERT_DOUBLE_EQUAL(P.dp.comm, rs, rs * 1e-12);
    CU_ASSERT_FALSE(P.dp_all_reduce);
    job.engine.dp_reduce_bytes = 4;
    job.engine.dp_allreduce_always = 1;
    plc_step_parts_of(&job, &l, &P);
    CU_ASSERT_EQUAL(plc_estimate_layout(&job, &l, &e1), 0);
    CU_ASSERT_DOUBLE_EQUAL(P.dp.comm, ar, ar * 1e-12);
    CU_ASSERT_TRUE(P.dp_all_reduce);
    CU_ASSERT(e1.time[PLC_TIME_COMM_DP] > e0.time[PLC_TIME_COMM_DP]);
    CU_ASSERT_DOUBLE_EQUAL(e1.time[PLC_TIME_COMPUTE], e0.time[PLC_TIME_COMPUTE], 0);
    CU_ASSERT_DOUBLE_EQUAL(e1.time[PLC_TIME_COMM_ZERO], e0.time[PLC_TIME_COMM_ZERO], 0);
    CU_ASSERT_DOUBLE_EQUAL(e1.peak_bytes, e0.peak_bytes, 0);
    l.zero = 3;
    job.engine.dp_reduce_bytes = 0;
    assert_figure_inert(&job, &l, &job.engine.dp_allreduce_always, 1, PLC_TIME_COMM_DP);
}

/* a fused SwiGLU keeps 3 ffn-wide tensors per token, not 4 */
static void test_fused_swiglu_memory(void)
{
    plc_job job;
    plc_layout l;
    overlap_job(&job, &l);
    double a0 = plc_act_layer_bytes(&job, &l, PLC_RECOMPUTE_NONE);
    job.engine.fused_swiglu = 1;
    double a1 = plc_act_layer_bytes(&job, &l, PLC_RECOMPUTE_NONE);
    /* 2048 tokens x 13824 / 8 columns x 2 bytes */
    CU_ASSERT_DOUBLE_EQUAL(a0 - a1, 2048.0 * 1728.0 * 2.0, 0);
    /* full recompute keeps the layer input either way */
    CU_ASSERT_DOUBLE_EQUAL(plc_act_layer_bytes(&job, &l, PLC_RECOMPUTE_FULL), 2048.0 * 5120.0 * 2.0 / 8.0, 0);
}

/* op-level selective checkpointing (selective_ops, torchtitan's 'op'
 * policy) keeps the block input, the outputs of wq, wv, w1 and w2 (the
 * first, third, fifth and seventh linear; w2's the partial sum, h wide),
 * the two reduce-scatters' outputs under sp, attention's output and its
 * log-sum-exp; in time it repeats wk, wo and w3 with the element-wise
 * forward, never the attention */
static void test_selective_ops(void)
{
    plc_job job;
    plc_layout l;
    overlap_job(&job, &l); /* 13B, tp 8 with sp, 2048 tokens, flash2 */
    job.train.engine = PLC_ENGINE_FSDP2;
    l.recompute = PLC_RECOMPUTE_SELECTIVE;
    double meg = plc_act_layer_bytes(&job, &l, PLC_RECOMPUTE_SELECTIVE);
    job.engine.selective_ops = 1;
    double op = plc_act_layer_bytes(&job, &l, PLC_RECOMPUTE_SELECTIVE);
    double per_token = 2.0 * (640 /* input */ + 640 /* wq */ + 640 /* wv */ + 640 /* attention */ + 1728 /* w1 */ +
                              5120 /* w2 */ + 2 * 640 /* reduce-scatters */) +
                       5 * 4.0; /* log-sum-exp of 40 / 8 heads */
    CU_ASSERT_DOUBLE_EQUAL(op, 2048.0 * per_token, 0);
    CU_ASSERT(op < meg && op > plc_act_layer_bytes(&job, &l, PLC_RECOMPUTE_FULL));
    /* the other policies keep what they kept */
    job.engine.selective_ops = 0;
    double none = plc_act_layer_bytes(&job, &l, PLC_RECOMPUTE_NONE);
    job.engine.selective_ops = 1;
    CU_ASSERT_DOUBLE_EQUAL(plc_act_layer_bytes(&job, &l, PLC_RECOMPUTE_NONE), none, 0);

    /* time, at tp 1: the three linears it does not save and no attention */
    l.tp = 1, l.sp = 0, l.dp = 16;
    plc_layer_times t0, t1, tn;
    job.engine.selective_ops = 0;
    plc_layer_times_of(&job, &l, &t0);
    job.engine.selective_ops = 1;
    plc_layer_times_of(&job, &l, &t1);
    l.recompute = PLC_RECOMPUTE_NONE;
    plc_layer_times_of(&job, &l, &tn);
    CU_ASSERT_DOUBLE_EQUAL(t0.recompute, 0, 0); /* Megatron's selective with flash2: nothing to repeat */
    plc_gemm_shape b[PLC_BLOCK_LINEARS_MAX];
    CU_ASSERT_EQUAL_FATAL(plc_block_linears(&job, &l, b), 7);
    CU_ASSERT_STRING_EQUAL(b[1].name, "wk");
    const plc_hw *hw = &job.cluster.hw;
    double gemms = plc_cost_matmul(hw, job.train.precision, b[1].M, b[1].N, b[1].K) +
                   plc_cost_matmul(hw, job.train.precision, b[3].M, b[3].N, b[3].K) +
                   plc_cost_matmul(hw, job.train.precision, b[5].M, b[5].N, b[5].K);
    /* the element-wise forward is the whole memory-bound forward under
     * flash2; every launch of the forward but attention's one */
    CU_ASSERT(gemms > 0 && tn.mem_f > 0);
    CU_ASSERT_DOUBLE_EQUAL(t1.recompute, gemms + tn.mem_f + tn.launch_f - hw->kernel_launch, 1e-12 * t1.recompute);
    CU_ASSERT(t1.recompute < tn.matmul_f); /* less than repeating the layer's linears */
    CU_ASSERT_DOUBLE_EQUAL(t1.matmul_f, tn.matmul_f, 0);
}

/* an engine whose ZeRO 3 shard is the fp32 master (sharded_master, FSDP2)
 * keeps 4 + 4 + 8 bytes per parameter over the shards, not 2 + 4 + 12;
 * below ZeRO 3 nothing changes */
static void test_sharded_master(void)
{
    plc_job job;
    plc_layout l;
    overlap_job(&job, &l);
    job.train.engine = PLC_ENGINE_FSDP2;
    l.tp = 1, l.sp = 0, l.dp = 16, l.zero = 3;
    for (int z = 3; z >= 2; z--) {
        l.zero = z;
        plc_estimate e0, e1;
        job.engine.sharded_master = 0;
        CU_ASSERT_EQUAL_FATAL(plc_estimate_layout(&job, &l, &e0), 0);
        job.engine.sharded_master = 1;
        CU_ASSERT_EQUAL_FATAL(plc_estimate_layout(&job, &l, &e1), 0);
        double p = e0.stage_params[0], w = e1.stage_mem[0][PLC_MEM_WEIGHTS], o = e1.stage_mem[0][PLC_MEM_OPTIMIZER];
        if (z == 3) {
            CU_ASSERT_DOUBLE_EQUAL(w, p * 4.0 / 16.0, 1e-6 * w);
            CU_ASSERT_DOUBLE_EQUAL(o, p * 8.0 / 16.0, 1e-6 * o);
            CU_ASSERT_DOUBLE_EQUAL(e0.stage_mem[0][PLC_MEM_WEIGHTS] + e0.stage_mem[0][PLC_MEM_OPTIMIZER] - w - o,
                                   p * 2.0 / 16.0, 1e-6 * w);
        } else {
            CU_ASSERT_DOUBLE_EQUAL(w, e0.stage_mem[0][PLC_MEM_WEIGHTS], 0);
            CU_ASSERT_DOUBLE_EQUAL(o, e0.stage_mem[0][PLC_MEM_OPTIMIZER], 0);
        }
        CU_ASSERT_DOUBLE_EQUAL(e1.stage_mem[0][PLC_MEM_GRADS], e0.stage_mem[0][PLC_MEM_GRADS], 0);
    }
}

/* the loss read from an engine's code (loss_saved_bytes, loss_peak_bytes):
 * the last stage holds the larger of two moments, the loss's (its peak
 * bytes per logit for the current micro-batch, its saved bytes for each
 * other one in flight) or a layer's backward beside the saved losses, never
 * their sum; plc's own accounting (peak 0) sums 4 per micro-batch in flight
 * + 2 + 4 and the temporaries */
static void test_loss_moments(void)
{
    plc_job job;
    plc_layout l;
    overlap_job(&job, &l); /* tp 8, sp, pp 1, one micro-batch of 2048 tokens */
    job.train.engine = PLC_ENGINE_MEGATRON; /* the analytic memory model */
    const double T = 2048.0, elems = T * (double)plc_vocab_local(128000, 8);
    const double norm1 = 2.0 * T * (double)job.model.hidden * 2.0 / 8.0; /* final norm in and out, sp */
    plc_estimate e0, e1;
    CU_ASSERT_EQUAL_FATAL(plc_estimate_layout(&job, &l, &e0), 0);
    CU_ASSERT_DOUBLE_EQUAL(e0.stage_mem[0][PLC_MEM_LOGITS], elems * (4.0 + 2.0 + 4.0) + norm1, 1.0);
    double temps = e0.stage_mem[0][PLC_MEM_TEMPORARIES];
    CU_ASSERT(temps > 0 && temps < 6.0 * elems);
    /* Megatron-Core's vocab-parallel loss: 6 bytes at its peak, 4 saved */
    job.engine.loss_saved_bytes = 4, job.engine.loss_peak_bytes = 6;
    CU_ASSERT_EQUAL_FATAL(plc_estimate_layout(&job, &l, &e1), 0);
    CU_ASSERT_DOUBLE_EQUAL(e1.stage_mem[0][PLC_MEM_LOGITS], 6.0 * elems + norm1, 1.0);
    CU_ASSERT_DOUBLE_EQUAL(e1.stage_mem[0][PLC_MEM_TEMPORARIES], 0, 0);
    for (int c = 0; c < PLC_MEM_COUNT; c++)
        if (c != PLC_MEM_LOGITS && c != PLC_MEM_TEMPORARIES && c != PLC_MEM_RESERVED)
            CU_ASSERT_DOUBLE_EQUAL(e1.stage_mem[0][c], e0.stage_mem[0][c], 0);
    CU_ASSERT(e1.peak_bytes < e0.peak_bytes);
    /* a loss smaller than a layer's backward: the layer's moment, the
     * temporaries as before and the norm's buffers only */
    job.engine.loss_peak_bytes = 0.5 * temps / elems;
    CU_ASSERT_EQUAL_FATAL(plc_estimate_layout(&job, &l, &e1), 0);
    CU_ASSERT_DOUBLE_EQUAL(e1.stage_mem[0][PLC_MEM_LOGITS], norm1, 1.0);
    CU_ASSERT_DOUBLE_EQUAL(e1.stage_mem[0][PLC_MEM_TEMPORARIES], temps, 0);
    /* GPipe over two stages, 8 micro-batches: the last stage keeps the
     * saved loss of the 7 others in flight at either moment */
    job.engine.loss_peak_bytes = 6;
    l.pp = 2, l.dp = 1, l.schedule = PLC_SCHED_GPIPE;
    CU_ASSERT_EQUAL_FATAL(plc_estimate_layout(&job, &l, &e1), 0);
    int64_t micro = job.train.global_batch / l.dp / l.micro_batch;
    CU_ASSERT_FATAL(micro > 1);
    double n = (double)micro;
    CU_ASSERT_DOUBLE_EQUAL(e1.stage_mem[1][PLC_MEM_LOGITS], (n - 1.0) * 4.0 * elems + 6.0 * elems + n * norm1,
                           1e-9 * e1.stage_mem[1][PLC_MEM_LOGITS]);
    CU_ASSERT_DOUBLE_EQUAL(e1.stage_mem[0][PLC_MEM_LOGITS], 0, 0); /* no head on the first stage */
}

/* the layout at tp (sequence parallel above 1, 16 GPUs) estimated without
 * (e0) and with (e1) a gathered head output */
static void gathered_pair(plc_job *job, plc_layout *l, int tp, plc_estimate *e0, plc_estimate *e1)
{
    l->tp = tp;
    l->sp = tp > 1;
    l->dp = 16 / tp;
    job->engine.gathered_logits = 0;
    CU_ASSERT_EQUAL_FATAL(plc_estimate_layout(job, l, e0), 0);
    job->engine.gathered_logits = 1;
    CU_ASSERT_EQUAL_FATAL(plc_estimate_layout(job, l, e1), 0);
}

/* a gathered head output (gathered_logits): the last stage's loss spans
 * all tp shards of the vocabulary on every rank, nothing else changes, and
 * at tp = 1 there is nothing to gather */
static void test_gathered_logits_memory(void)
{
    plc_job job;
    plc_layout l;
    overlap_job(&job, &l); /* tp 8, sp, pp 1, one micro-batch of 2048 tokens */
    job.train.engine = PLC_ENGINE_MEGATRON; /* the analytic memory model */
    for (int tp = 8; tp >= 1; tp -= 7) {
        plc_estimate e0, e1;
        gathered_pair(&job, &l, tp, &e0, &e1);
        /* fp32 softmax (one micro-batch in flight), bf16 logits and fp32
         * gradient: 10 bytes per element over tp - 1 more shards */
        double more = 2048.0 * (double)(plc_vocab_padded(128000, tp) - plc_vocab_local(128000, tp)) * (4.0 + 2.0 + 4.0);
        CU_ASSERT_DOUBLE_EQUAL(e1.stage_mem[0][PLC_MEM_LOGITS] - e0.stage_mem[0][PLC_MEM_LOGITS], more, 1.0);
        for (int c = 0; c < PLC_MEM_COUNT; c++)
            if (c != PLC_MEM_LOGITS && c != PLC_MEM_RESERVED)
                CU_ASSERT_DOUBLE_EQUAL(e1.stage_mem[0][c], e0.stage_mem[0][c], 0);
        CU_ASSERT(tp == 1 ? e1.peak_bytes == e0.peak_bytes : e1.peak_bytes > e0.peak_bytes);
    }
}

/* a gathered head output (gathered_logits) in time: per micro-batch the
 * logits' all-gather over the tp group, the concatenating copy and the
 * gradient's slice, and the loss over the whole padded vocabulary instead
 * of the shard and its two all-reduces (XENT_BYTES = 24 per element); the
 * all-gather counts as tp communication; nothing at tp = 1 */
static void test_gathered_logits_time(void)
{
    plc_job job;
    plc_layout l;
    overlap_job(&job, &l); /* tp 8, sp, pp 1, one micro-batch of 2048 tokens */
    job.train.engine = PLC_ENGINE_MEGATRON;
    const plc_hw *hw = &job.cluster.hw;
    for (int tp = 8; tp >= 1; tp -= 7) {
        plc_estimate e0, e1;
        gathered_pair(&job, &l, tp, &e0, &e1);
        if (tp == 1) {
            CU_ASSERT_EQUAL(e1.step_time_s, e0.step_time_s);
            continue;
        }
        plc_layout_groups g;
        plc_layout_groups_of(&l, job.cluster.gpus_per_node, &g);
        double T = 2048.0, Vl = (double)plc_vocab_local(128000, tp), Vp = (double)plc_vocab_padded(128000, tp);
        double gather = plc_cost_group(hw, PLC_COLL_ALL_GATHER, T * Vp * 2.0, g.tp);
        double more = gather + plc_cost_memory_bound(hw, T * (2.0 * Vp + 2.0 * Vl) * 2.0) +
                      plc_cost_memory_bound(hw, T * Vp * 24.0) - plc_cost_memory_bound(hw, T * Vl * 24.0) -
                      3.0 * plc_cost_group(hw, PLC_COLL_ALL_REDUCE, T * 4.0, g.tp);
        double micro = (double)e0.micro_batches;
        CU_ASSERT(gather > 0 && more > gather);
        CU_ASSERT_DOUBLE_EQUAL(e1.step_time_s - e0.step_time_s, micro * more, 1e-12 * e0.step_time_s);
        CU_ASSERT_DOUBLE_EQUAL(e1.time[PLC_TIME_COMM_TP] - e0.time[PLC_TIME_COMM_TP], micro * gather,
                               1e-12 * e0.step_time_s);
        CU_ASSERT(e1.mfu < e0.mfu);
    }
}

/* recompute granularities: the layers each recomputes, their memory and
 * time against none and full, the rules, and the search's choice of k */
static void test_recompute_granularity(void)
{
    plc_job job;
    plc_layout l;
    overlap_job(&job, &l); /* 40 layers on one stage */
    job.train.engine = PLC_ENGINE_MEGATRON; /* Megatron's granularities, its analytic memory */
    plc_estimate none, full, blk, evy;
    CU_ASSERT_EQUAL(plc_estimate_layout(&job, &l, &none), 0);
    l.recompute = PLC_RECOMPUTE_FULL;
    CU_ASSERT_EQUAL(plc_estimate_layout(&job, &l, &full), 0);
    l.recompute = PLC_RECOMPUTE_BLOCK;
    l.recompute_layers = 10;
    CU_ASSERT_EQUAL(plc_recomputed_layers(&job.model, &l), 10);
    CU_ASSERT_EQUAL(plc_estimate_layout(&job, &l, &blk), 0);
    l.recompute = PLC_RECOMPUTE_EVERY;
    l.recompute_layers = 4;
    CU_ASSERT_EQUAL(plc_recomputed_layers(&job.model, &l), 10);
    CU_ASSERT_EQUAL(plc_estimate_layout(&job, &l, &evy), 0);
    CU_ASSERT_TRUE(blk.valid && evy.valid && none.valid && full.valid);
    /* memory: 10 layers keep their input, 30 everything */
    l.recompute = PLC_RECOMPUTE_NONE;
    double a_none = plc_act_layer_bytes(&job, &l, PLC_RECOMPUTE_NONE), a_full = plc_act_layer_bytes(&job, &l, PLC_RECOMPUTE_FULL);
    CU_ASSERT_DOUBLE_EQUAL(none.stage_mem[0][PLC_MEM_ACTIVATIONS], 40.0 * a_none, 1.0);
    CU_ASSERT_DOUBLE_EQUAL(blk.stage_mem[0][PLC_MEM_ACTIVATIONS], 10.0 * a_full + 30.0 * a_none, 1.0);
    CU_ASSERT_DOUBLE_EQUAL(evy.stage_mem[0][PLC_MEM_ACTIVATIONS], blk.stage_mem[0][PLC_MEM_ACTIVATIONS], 0);
    /* the recomputed layer's temporaries, as under full */
    CU_ASSERT_DOUBLE_EQUAL(blk.stage_mem[0][PLC_MEM_TEMPORARIES], full.stage_mem[0][PLC_MEM_TEMPORARIES], 0);
    /* time: a quarter of full's extra forward work */
    for (int k = 0; k < PLC_TIME_COUNT; k++) {
        if (k == PLC_TIME_COMM_DP || k == PLC_TIME_COMM_ZERO || k == PLC_TIME_BUBBLE) continue; /* windows */
        double extra_full = full.time[k] - none.time[k], extra_blk = blk.time[k] - none.time[k];
        CU_ASSERT_DOUBLE_EQUAL(extra_blk, 0.25 * extra_full, 1e-9 * (1.0 + fabs(full.time[k])));
    }
    CU_ASSERT(full.time[PLC_TIME_COMPUTE] > blk.time[PLC_TIME_COMPUTE]);
    CU_ASSERT(blk.time[PLC_TIME_COMPUTE] > none.time[PLC_TIME_COMPUTE]);

    /* the rules */
    l.recompute = PLC_RECOMPUTE_BLOCK;
    l.recompute_layers = 41;
    plc_verdict v = plc_layout_rules_job(&job, &l);
    CU_ASSERT_EQUAL(v.rule, PLC_RULE_RECOMPUTE_LAYERS_STAGE);
    CU_ASSERT_STRING_EQUAL(v.key, "recompute_layers");
    l.recompute_layers = 0;
    CU_ASSERT_EQUAL(plc_layout_rules_job(&job, &l).rule, PLC_RULE_RECOMPUTE_LAYERS_NEEDED);
    l.recompute = PLC_RECOMPUTE_FULL;
    l.recompute_layers = 3;
    v = plc_layout_rules_job(&job, &l);
    CU_ASSERT_EQUAL(v.rule, PLC_RULE_RECOMPUTE_LAYERS_POLICY);
    char msg[256];
    plc_layout_rules_job_message(&job, &l, v, msg, sizeof msg);
    CU_ASSERT_STRING_EQUAL(msg, "recompute_layers = 3 needs recompute = block or every, not full");
    /* block counts per virtual stage: pp 2 x vpp 2 leaves 10 layers a chunk */
    l = (plc_layout){.dp = 1, .tp = 8, .pp = 2, .cp = 1, .sp = 1, .vpp = 2, .micro_batch = 1,
                     .schedule = PLC_SCHED_INTERLEAVED, .recompute = PLC_RECOMPUTE_BLOCK, .recompute_layers = 11,
                     .zero = 0, .attention = PLC_ATTN_FLASH2, .fused_rmsnorm = 1};
    CU_ASSERT_EQUAL(plc_layout_rules_job(&job, &l).rule, PLC_RULE_RECOMPUTE_LAYERS_STAGE);
    l.recompute_layers = 3;
    CU_ASSERT_EQUAL(plc_recomputed_layers(&job.model, &l), 6);
    /* the plrun profile does not run them */
    plc_arena a;
    plc_arena_init(&a);
    plc_engine_set set;
    CU_ASSERT_FATAL(shipped(&a, &set));
    job.engine = set.profile[PLC_ENGINE_PLRUN];
    CU_ASSERT_EQUAL(plc_layout_rules_job(&job, &l).rule, PLC_RULE_ENGINE_OFFERS);

    /* the search's k: the fewest layers that fit, as an exhaustive search finds */
    job.train.engine = PLC_ENGINE_MEGATRON;
    job.engine = set.profile[PLC_ENGINE_MEGATRON];
    fixture_pin(&job.layout.tp, 1);
    fixture_pin(&job.layout.pp, 1);
    fixture_pin(&job.layout.cp, 1);
    fixture_pin(&job.layout.zero, 1);
    fixture_pin(&job.layout.micro_batch, 4);
    fixture_pin(&job.layout.sp, 0);
    fixture_pin(&job.layout.attention, PLC_ATTN_FLASH2);
    fixture_pin(&job.layout.recompute, PLC_RECOMPUTE_BLOCK);
    for (double limit = 0.5; limit <= 1.0; limit += 0.125) {
        job.layout.memory_limit = limit;
        plc_solution quick, all;
        plc_solve_opts oq = {.top = 1}, oa = {.top = 1, .exhaustive = true};
        CU_ASSERT_EQUAL_FATAL(plc_solve_opts_run(&job, &a, &oq, &quick), PLC_OK);
        CU_ASSERT_EQUAL_FATAL(plc_solve_opts_run(&job, &a, &oa, &all), PLC_OK);
        CU_ASSERT_EQUAL(quick.nranked, all.nranked);
        if (quick.nranked && all.nranked) {
            CU_ASSERT_EQUAL(quick.ranked[0].layout.recompute_layers, all.ranked[0].layout.recompute_layers);
            CU_ASSERT_DOUBLE_EQUAL(quick.ranked[0].step_time_s, all.ranked[0].step_time_s, 0);
        }
    }
    plc_arena_free(&a);
}

void register_test_solver_engines(void);
void register_test_solver_engines(void)
{
    CU_pSuite s = CU_add_suite("engines", NULL, NULL);
    CU_add_test(s, "complete profile", test_complete_profile);
    CU_add_test(s, "bad files", test_bad_files);
    CU_add_test(s, "shipped profiles", test_shipped_profiles);
    CU_add_test(s, "legality per engine", test_legality_per_engine);
    CU_add_test(s, "node memory bound", test_node_memory_bound);
    CU_add_test(s, "overlap terms", test_overlap_terms);
    CU_add_test(s, "dp bucket", test_dp_bucket);
    CU_add_test(s, "dp reduction kind and bytes", test_dp_reduce_kind);
    CU_add_test(s, "p2p scatter/gather", test_p2p_scatter_gather);
    CU_add_test(s, "overlap SM share", test_overlap_sm_share);
    CU_add_test(s, "fused SwiGLU memory", test_fused_swiglu_memory);
    CU_add_test(s, "gathered logits memory", test_gathered_logits_memory);
    CU_add_test(s, "gathered logits time", test_gathered_logits_time);
    CU_add_test(s, "the loss as its own moment", test_loss_moments);
    CU_add_test(s, "op-level selective checkpointing", test_selective_ops);
    CU_add_test(s, "ZeRO 3 shard as the master", test_sharded_master);
    CU_add_test(s, "recompute granularity", test_recompute_granularity);
}
