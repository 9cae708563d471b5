/* bench/search_speed.c: the solver's search speed, every layout dimension auto, one
 * core: Llama-2 70B on 4096 H100, Llama-3 405B on 16384 H100 and
 * DeepSeek-V3 (a mixture of experts: ep and etp searched too) on 2048 H100. Each case
 * runs the exhaustive search (its peer, in the same run) and the branch and
 * bound one, prints the best-of-N CPU time of each, their ratio, layouts
 * enumerated / evaluated / pruned, and whether the two rank the same top
 * candidates (layouts and figures). A third line repeats the 70B case at
 * 1e12 sequences per step: the time does not depend on the batch. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "compiler/solver/solver.h"

static void h100_cluster(plc_job *job, int64_t nodes)
{
    plc_hw *hw = &job->cluster.hw; /* examples/catalog.yaml's H100-SXM5-80GB */
    strcpy(hw->name, "H100-SXM5-80GB");
    hw->mem_bytes = 81559.0 * 1048576; hw->flops_bf16 = 989e12; hw->flops_fp32 = 67e12;
    hw->hbm_bw = 3.35e12; hw->intra_node_bw = 450e9; /* per direction */ hw->intra_node_lat = 4e-6;
    hw->inter_node_bw = 50e9; hw->inter_node_lat = 8e-6;
    hw->matmul_eff = 0.7; hw->matmul_half_dim = 64; hw->hbm_eff = 0.5; hw->comm_eff = 0.35;
    hw->kernel_launch = 4e-6; hw->runtime_reserved = 1.5 * 1073741824.0; hw->comm_buffer = 0.5 * 1073741824.0;
    job->cluster.nodes = nodes;
    job->cluster.gpus_per_node = 8;
    job->train.precision = PLC_PREC_BF16;
    job->layout.memory_limit = 0.9;
}

/* a Llama model of examples/NAME.plan on nodes x 8 H100, every layout
 * dimension auto */
static void llama_h100(plc_job *job, const char *path, const char *name, int64_t layers, int64_t hidden,
                       int64_t ffn, int64_t heads, int64_t vocab, int64_t seq, int64_t nodes, int64_t batch)
{
    memset(job, 0, sizeof *job);
    job->path = path;
    job->engine.grad_reduce_overlap = 1; /* plrun's profile (examples/engines.yaml) */
    plc_model *m = &job->model;
    strcpy(m->name, name);
    m->layers = layers; m->hidden = hidden; m->ffn_hidden = ffn; m->heads = heads; m->kv_heads = 8;
    m->vocab = vocab; m->seq_len = seq;
    h100_cluster(job, nodes);
    job->train.global_batch = batch;
}

static void llama70b_h100(plc_job *job)
{
    llama_h100(job, "llama70b-h100 (built in bench/search_speed.c)", "llama-2-70b", 80, 8192, 28672, 64, 32000, 4096,
               512, 1024);
}

static void llama405b_h100(plc_job *job) /* 16M tokens a step */
{
    llama_h100(job, "llama405b-h100 (built in bench/search_speed.c)", "llama-3-405b", 126, 16384, 53248, 128, 128256,
               8192, 2048, 2048);
}

/* DeepSeek-V3 (671B, 37B active: 61 layers, 3 dense, 256 routed experts of
 * 2048 + 1 shared, top-8 over 4 of 8 groups, latent attention) on 2048
 * H100, 15360 sequences of 4096 per step as in its report, every layout
 * dimension auto, ep and etp included, under an engine with Megatron-Core's
 * MoE figures and what it runs (examples/engines.yaml: all-to-all dispatch,
 * grouped GEMM, etp; unequal stages, as 61 layers need; 1F1B and
 * interleaved, ZeRO 0 and 1) */
static void deepseek_v3_h100(plc_job *job)
{
    memset(job, 0, sizeof *job);
    job->path = "deepseek-v3-h100 (built in bench/search_speed.c)";
    job->train.engine = PLC_ENGINE_MEGATRON;
    plc_engine_profile *e = &job->engine;
    e->grad_reduce_overlap = 1; e->fused_swiglu = 1; e->uneven_stages = 1;
    e->moe = 1; e->moe_etp = 1; e->moe_dispatcher = 1; e->moe_grouped_gemm = 1;
    /* what it runs (examples/engines.yaml's megatron runs:) */
    e->offers[PLC_LD_schedule] = 1u << PLC_SCHED_1F1B | 1u << PLC_SCHED_INTERLEAVED;
    e->offers[PLC_LD_zero] = 1u << 0 | 1u << 1;
    e->offers[PLC_LD_recompute] = 1u << PLC_RECOMPUTE_NONE | 1u << PLC_RECOMPUTE_SELECTIVE | 1u << PLC_RECOMPUTE_FULL |
                                  1u << PLC_RECOMPUTE_BLOCK;
    e->offers[PLC_LD_attention] = 1u << PLC_ATTN_FUSED | 1u << PLC_ATTN_FLASH2;
    e->offers[PLC_LD_fused_rmsnorm] = 1u << 1;
    plc_model *m = &job->model;
    strcpy(m->name, "deepseek-v3");
    m->layers = 61; m->hidden = 7168; m->ffn_hidden = 18432; m->heads = 128; m->kv_heads = 128;
    m->vocab = 129280; m->seq_len = 4096;
    m->moe = (plc_moe){.experts = 256, .top_k = 8, .shared_experts = 1, .expert_ffn_hidden = 2048,
                       .shared_ffn_hidden = 2048, .dense_layers = 3, .moe_every = 1, .router = PLC_ROUTER_SIGMOID,
                       .router_groups = 8, .router_groups_top = 4, .route_scale = 2.5, .expert_bias = true};
    m->mla = (plc_mla){.q_rank = 1536, .kv_rank = 512, .nope_head_dim = 128, .rope_head_dim = 64, .v_head_dim = 128};
    h100_cluster(job, 256);
    job->train.global_batch = 15360;
}

/* best-of-runs CPU seconds of one search; *s holds the last run's solution */
static double best_cpu(const plc_job *job, bool exhaustive, int runs, plc_arena *a, plc_solution *s)
{
    double best = 1e30;
    plc_solve_opts o = {.top = 10, .exhaustive = exhaustive};
    for (int run = 0; run < runs; run++) {
        if (run) plc_arena_free(a);
        plc_arena_init(a);
        clock_t c0 = clock(); /* this process's CPU time: fair on a busy machine */
        if (plc_solve_opts_run(job, a, &o, s)) { fprintf(stderr, "bench_search_speed: %s\n", s->error); exit(1); }
        double cpu = (double)(clock() - c0) / CLOCKS_PER_SEC;
        if (cpu < best) best = cpu;
    }
    return best;
}

static bool same_ranking(const plc_solution *x, const plc_solution *y)
{
    if (x->nranked != y->nranked) return false;
    for (int i = 0; i < x->nranked; i++) {
        const plc_candidate *a = &x->ranked[i], *b = &y->ranked[i];
        for (int d = 0; d < PLC_LD_COUNT; d++) /* field by field: padding bytes are not the layout */
            if (plc_layout_get(&a->layout, (plc_layout_dim)d) != plc_layout_get(&b->layout, (plc_layout_dim)d))
                return false;
        if (a->step_time_s != b->step_time_s || a->peak_bytes != b->peak_bytes) return false;
    }
    return true;
}

static void winner(const plc_solution *s)
{
    if (!s->nranked) { printf("  winner: none fits\n"); return; }
    const plc_candidate *c = &s->ranked[0];
    printf("  winner: tp=%lld pp=%lld cp=%lld dp=%lld ep=%lld etp=%lld mb=%lld %s vpp=%lld %s zero=%lld %s, %.2f s/step, MFU %.1f%%\n",
           (long long)c->layout.tp, (long long)c->layout.pp, (long long)c->layout.cp, (long long)c->layout.dp,
           (long long)plc_layout_ep(&c->layout), (long long)plc_layout_etp(&c->layout),
           (long long)c->layout.micro_batch, plc_schedule_name(c->layout.schedule), (long long)c->layout.vpp,
           plc_recompute_text(&c->layout, (char[24]){0}, 24), (long long)c->layout.zero,
           plc_attention_name(c->layout.attention), c->step_time_s, 100.0 * c->mfu);
}

/* returns the branch and bound's CPU seconds */
static double run_case(const char *title, const plc_job *job, double target_s, int exhaustive_runs)
{
    plc_arena ae, ab;
    plc_solution se, sb;
    double te = exhaustive_runs > 0 ? best_cpu(job, true, exhaustive_runs, &ae, &se) : 0;
    double tb = best_cpu(job, false, 7, &ab, &sb);
    printf("solver: %s, every layout dimension auto, %lld sequences per step\n", title,
           (long long)job->train.global_batch);
    if (exhaustive_runs > 0)
        printf("  exhaustive:       %8.3f s CPU (best of %d); %lld enumerated, %lld invalid, %lld pruned by memory, "
               "%lld evaluated (%.2fM/s)\n",
               te, exhaustive_runs, (long long)se.enumerated, (long long)se.invalid, (long long)se.pruned,
               (long long)se.evaluated, (double)se.evaluated / te / 1e6);
    else
        printf("  exhaustive:       not run (it estimates every layout: minutes; tests/unit/test_solver_moe.c checks "
               "the branch and bound against it on a smaller MoE job)\n");
    printf("  branch and bound: %8.3f s CPU (best of 7); %lld enumerated, %lld invalid, %lld pruned "
           "(%lld by the time bound), %lld evaluated\n",
           tb, (long long)sb.enumerated, (long long)sb.invalid, (long long)sb.pruned,
           (long long)sb.pruned_objective, (long long)sb.evaluated);
    if (exhaustive_runs > 0)
        printf("  speed-up %.1fx (exhaustive / branch and bound); target < %.2f s: %s; same top %d as exhaustive: %s\n",
               te / tb, target_s, tb < target_s ? "met" : "MISSED", sb.nranked, same_ranking(&se, &sb) ? "yes" : "NO");
    else
        printf("  target < %.2f s: %s\n", target_s, tb < target_s ? "met" : "MISSED");
    winner(&sb);
    if (exhaustive_runs > 0) plc_arena_free(&ae);
    plc_arena_free(&ab);
    return tb;
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0); /* each line as it is measured */
    double load[3] = {0, 0, 0};
    FILE *f = fopen("/proc/loadavg", "r");
    if (f) {
        if (fscanf(f, "%lf %lf %lf", &load[0], &load[1], &load[2]) != 3) load[0] = load[1] = load[2] = 0;
        fclose(f);
    }
    printf("solver: load average %.2f %.2f %.2f (CPU time, best of N, is reported)\n", load[0], load[1], load[2]);
    plc_job job;
    llama70b_h100(&job);
    double t_small = run_case("Llama-2 70B on 4096 H100", &job, 0.1, 3);
    job.train.global_batch = 1000000000000; /* 1e12 sequences: 17 times the space, the same time */
    double t_huge = run_case("Llama-2 70B on 4096 H100", &job, 0.1, 3);
    printf("  1e12 against 1024 sequences per step: %.2fx the branch and bound's time\n", t_huge / t_small);
    llama405b_h100(&job);
    run_case("Llama-3 405B on 16384 H100", &job, 0.5, 3);
    deepseek_v3_h100(&job);
    /* beside its dense peer above; its exhaustive search would estimate
     * every one of some 1e8 layouts */
    run_case("DeepSeek-V3 on 2048 H100 (mixture of experts: ep, etp)", &job, 1.0, 0);
    return 0;
}
