/* test_solver_time.c: collective costs at known sizes, rank placement,
 * schedule bubbles (simulation against closed forms), and time-model
 * mechanisms. */
#include <CUnit/CUnit.h>
#include <math.h>
#include <stdlib.h>

#include "compiler/solver/solver_int.h"
#include "test_solver_fixtures.h"

static plc_hw simple_hw(void)
{
    plc_hw hw;
    memset(&hw, 0, sizeof hw);
    hw.intra_node_bw = 100e9;
    hw.inter_node_bw = 10e9;
    hw.comm_eff = 1;
    return hw;
}

static void test_ring_costs(void)
{
    plc_hw hw = simple_hw();
    double B = 1e9;
    /* inside a node: ring all-reduce moves 2 (n-1)/n of the buffer */
    CU_ASSERT_DOUBLE_EQUAL(plc_cost_collective(&hw, PLC_COLL_ALL_REDUCE, B, 8, 8), 2 * 7.0 / 8 * B / 100e9, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(plc_cost_collective(&hw, PLC_COLL_ALL_GATHER, B, 8, 8), 7.0 / 8 * B / 100e9, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(plc_cost_collective(&hw, PLC_COLL_REDUCE_SCATTER, B, 8, 8), 7.0 / 8 * B / 100e9, 1e-12);
    /* two nodes of 8: reduce-scatter and all-gather in the node, all-reduce of
     * 1/8 across the nodes on 8 rails */
    double two = 2 * 7.0 / 8 * B / 100e9 + 2 * 0.5 * (B / 8) / 10e9;
    CU_ASSERT_DOUBLE_EQUAL(plc_cost_collective_ring(&hw, PLC_COLL_ALL_REDUCE, B, 16, 8), two, 1e-12);
    /* one rank per node: all traffic over the network */
    CU_ASSERT_DOUBLE_EQUAL(plc_cost_collective_ring(&hw, PLC_COLL_ALL_REDUCE, B, 4, 1), 2 * 0.75 * B / 10e9, 1e-12);
    /* comm efficiency scales bandwidth */
    hw.comm_eff = 0.5;
    CU_ASSERT_DOUBLE_EQUAL(plc_cost_collective(&hw, PLC_COLL_ALL_GATHER, B, 8, 8), 2 * 7.0 / 8 * B / 100e9, 1e-12);
    /* trivial groups cost nothing */
    CU_ASSERT_DOUBLE_EQUAL(plc_cost_collective(&hw, PLC_COLL_ALL_REDUCE, B, 1, 1), 0, 0);
}

static void test_tree_for_small_messages(void)
{
    plc_hw hw = simple_hw();
    hw.inter_node_lat = 10e-6;
    hw.intra_node_lat = 2e-6;
    /* 1 KiB over 64 nodes: ring pays 2 x 63 latencies, tree 2 x 6 */
    double ring = plc_cost_collective_ring(&hw, PLC_COLL_ALL_REDUCE, 1024, 64, 1);
    double tree = plc_cost_collective_tree(&hw, PLC_COLL_ALL_REDUCE, 1024, 64, 1);
    CU_ASSERT_DOUBLE_EQUAL(ring, 2 * (63.0 / 64 * 1024 / 10e9 + 63 * 10e-6), 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(tree, 2 * (1024 / 10e9 + 6 * 10e-6), 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(plc_cost_collective(&hw, PLC_COLL_ALL_REDUCE, 1024, 64, 1), tree, 1e-15);
    /* large messages: the ring's bandwidth term wins */
    CU_ASSERT_TRUE(plc_cost_collective_ring(&hw, PLC_COLL_ALL_REDUCE, 1e9, 64, 1) <
                   plc_cost_collective_tree(&hw, PLC_COLL_ALL_REDUCE, 1e9, 64, 1));
    /* p2p */
    CU_ASSERT_DOUBLE_EQUAL(plc_cost_p2p(&hw, 1e6, true), 1e6 / 10e9 + 10e-6, 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(plc_cost_p2p(&hw, 1e6, false), 1e6 / 100e9 + 2e-6, 1e-15);
}

/* Megatron order: tp fastest, then cp, dp, pp */
static void test_group_placement(void)
{
    plc_layout l = {.tp = 4, .cp = 2, .dp = 8, .pp = 4};
    plc_layout_groups g;
    plc_layout_groups_of(&l, 8, &g);
    CU_ASSERT_EQUAL(g.tp.per_node, 4);  /* inside a node */
    CU_ASSERT_EQUAL(g.cp.per_node, 2);  /* stride 4: two per node */
    CU_ASSERT_EQUAL(g.dp.per_node, 1);  /* stride 8: one per node */
    CU_ASSERT_EQUAL(g.pp.per_node, 1);
    CU_ASSERT_EQUAL(g.dpcp.size, 16);
    CU_ASSERT_EQUAL(g.dpcp.per_node, 2);
    plc_layout m = {.tp = 1, .cp = 1, .dp = 64, .pp = 1};
    plc_layout_groups_of(&m, 8, &g);
    CU_ASSERT_EQUAL(g.dp.per_node, 8);
}

/* simulated bubbles of uniform pipelines against the closed forms:
 * gpipe and 1f1b (p-1)/m, interleaved (p-1)/(v m) */
/* the layer-major makespan (O(layers) streams) against the unit-level
 * simulation, with messages, an embedding and a heavy head, and fewer
 * micro-batches than stages: equal to rounding */
static void test_layer_major_makespan(void)
{
    const plc_schedule scheds[] = {PLC_SCHED_LAYERED, PLC_SCHED_MODULAR};
    const double p2ps[] = {0, 0.3, 2.5}, heads[] = {0, 1.7, 9};
    for (int si = 0; si < 2; si++)
        for (int64_t pp = 2; pp <= 8; pp *= 2)
            for (int64_t L = pp; L <= 32; L *= 2)
                for (int64_t m = 1; m <= 16; m *= 2)
                    for (int ci = 0; ci < 3; ci++)
                        for (int ei = 0; ei < 3; ei++) {
                            plc_sched_sim r;
                            double e = heads[ei], d = 0.3 * e;
                            CU_ASSERT_EQUAL_FATAL(plc_sched_simulate(scheds[si], pp, 1, L, m, 1.0, 2.1, d, e, p2ps[ci], &r), 0);
                            double f = plc_sched_layer_major_makespan(scheds[si], pp, L, m, 1.0, 2.1, d, e, p2ps[ci]);
                            CU_ASSERT_DOUBLE_EQUAL(f, r.makespan, 1e-9 * r.makespan);
                        }
    /* one stage: everything back to back */
    CU_ASSERT_DOUBLE_EQUAL(plc_sched_layer_major_makespan(PLC_SCHED_MODULAR, 1, 8, 4, 1.0, 2.0, 0.5, 1.5, 3.0),
                           4 * (8 * 3.0 + 2.0), 1e-12);
}

static void test_bubbles(void)
{
    plc_sched_sim r;
    int64_t pps[] = {2, 4, 8};
    int64_t ms[] = {8, 16, 64};
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            int64_t p = pps[i], m = ms[j];
            for (int s = PLC_SCHED_GPIPE; s <= PLC_SCHED_1F1B; s++) {
                CU_ASSERT_EQUAL_FATAL(plc_sched_simulate(s, p, 1, 32, m, 1.0, 2.0, 0, 0, 0, &r), 0);
                CU_ASSERT_DOUBLE_EQUAL(r.makespan, (double)(m + p - 1) * 3.0 * 32 / p, 1e-9);
                CU_ASSERT_DOUBLE_EQUAL((r.makespan - r.busy_max) / r.busy_max,
                                       plc_sched_bubble_ratio(s, p, 1, 32, m, 2.0), 1e-9);
            }
            CU_ASSERT_EQUAL_FATAL(plc_sched_simulate(PLC_SCHED_INTERLEAVED, p, 2, 32, m, 1.0, 2.0, 0, 0, 0, &r), 0);
            double sim = (r.makespan - r.busy_max) / r.busy_max;
            double closed = plc_sched_bubble_ratio(PLC_SCHED_INTERLEAVED, p, 2, 32, m, 2.0);
            CU_ASSERT_DOUBLE_EQUAL(sim, closed, 0.02 + 0.1 * closed);
        }
    /* layer-major schedules: the closed forms against the simulation */
    int64_t lm[][3] = {{4, 32, 8}, {8, 80, 16}, {16, 80, 32}, {2, 40, 2}, {4, 32, 3}};
    for (size_t i = 0; i < sizeof lm / sizeof lm[0]; i++) {
        int64_t p = lm[i][0], L = lm[i][1], m = lm[i][2];
        for (int s = PLC_SCHED_LAYERED; s <= PLC_SCHED_MODULAR; s++) {
            CU_ASSERT_EQUAL_FATAL(plc_sched_simulate(s, p, 1, L, m, 1.0, 2.0, 0, 0, 0, &r), 0);
            CU_ASSERT_DOUBLE_EQUAL((r.makespan - r.busy_max) / r.busy_max, plc_sched_bubble_ratio(s, p, 1, L, m, 2.0), 1e-9);
        }
    }
    /* modular placement with layer-major order: a bubble of about one
     * layer per stage, far below 1f1b's */
    double mod = plc_sched_bubble_ratio(PLC_SCHED_MODULAR, 4, 1, 32, 8, 2.0);
    CU_ASSERT_TRUE(mod < 0.5 * plc_sched_bubble_ratio(PLC_SCHED_1F1B, 4, 1, 32, 8, 2.0));
    CU_ASSERT_TRUE(mod > 0);
    /* layered gradient accumulation on contiguous stages waits for whole stages */
    CU_ASSERT_TRUE(plc_sched_bubble_ratio(PLC_SCHED_LAYERED, 4, 1, 32, 8, 2.0) >
                   plc_sched_bubble_ratio(PLC_SCHED_1F1B, 4, 1, 32, 8, 2.0));
    CU_ASSERT_DOUBLE_EQUAL(plc_sched_bubble_ratio(PLC_SCHED_LAYERED, 1, 1, 32, 8, 2.0), 0, 0);
    /* invalid: interleaved needs m a multiple of pp */
    CU_ASSERT_EQUAL(plc_sched_simulate(PLC_SCHED_INTERLEAVED, 4, 2, 32, 6, 1, 2, 0, 0, 0, &r), -1);
}

static void test_inflight(void)
{
    CU_ASSERT_DOUBLE_EQUAL(plc_sched_inflight(PLC_SCHED_1F1B, 8, 1, 32, 64, 0), 8, 0);
    CU_ASSERT_DOUBLE_EQUAL(plc_sched_inflight(PLC_SCHED_1F1B, 8, 1, 32, 64, 7), 1, 0);
    CU_ASSERT_DOUBLE_EQUAL(plc_sched_inflight(PLC_SCHED_1F1B, 8, 1, 32, 4, 0), 4, 0);
    CU_ASSERT_DOUBLE_EQUAL(plc_sched_inflight(PLC_SCHED_GPIPE, 8, 1, 32, 64, 3), 64, 0);
    /* interleaved, Megatron's warm-up: (p-1)*2 + (v-1)*p + 1 chunks of 1/v */
    CU_ASSERT_DOUBLE_EQUAL(plc_sched_inflight(PLC_SCHED_INTERLEAVED, 4, 2, 32, 64, 0), (6 + 4 + 1) / 2.0, 1e-12);
    /* the closed form is the peak of forwards not yet matched by their
     * backward in the generated order itself */
    const plc_schedule scheds[] = {PLC_SCHED_GPIPE, PLC_SCHED_1F1B, PLC_SCHED_INTERLEAVED, PLC_SCHED_LAYERED,
                                   PLC_SCHED_MODULAR};
    for (size_t si = 0; si < sizeof scheds / sizeof scheds[0]; si++)
        for (int64_t pp = 2; pp <= 4; pp *= 2)
            for (int64_t M = pp; M <= 3 * pp; M += pp) {
                plc_pipe_shape sh;
                CU_ASSERT_EQUAL_FATAL(plc_pipe_shape_of(scheds[si], pp, 2, 16, &sh), 0);
                plc_pipe_unit u[2 * 12 * 16];
                for (int64_t r = 0; r < pp; r++) {
                    CU_ASSERT_EQUAL_FATAL(plc_pipe_order(&sh, M, r, u), 0);
                    int64_t live = 0, peak = 0;
                    for (int64_t i = 0; i < plc_pipe_units(&sh, M); i++) {
                        live += u[i].bwd ? -1 : 1;
                        if (live > peak) peak = live;
                    }
                    CU_ASSERT_DOUBLE_EQUAL(plc_pipe_inflight(&sh, M, r), (double)peak / (double)sh.per_rank, 1e-12);
                }
            }
}

/* the step-time model's mechanisms: recompute costs about a forward,
 * flash beats materialised attention, and the figures add up */
static void test_time_mechanisms(void)
{
    plc_job job;
    fixture_llama13b(&job, 8);
    plc_layout l = {.tp = 2, .cp = 1, .pp = 2, .dp = 16, .vpp = 1, .micro_batch = 1, .sp = 1,
                    .schedule = PLC_SCHED_1F1B, .zero = 1, .attention = PLC_ATTN_FLASH2, .fused_rmsnorm = 1};
    plc_estimate *e = calloc(1, sizeof *e);
    plc_time_estimate(&job, &l, e);
    double sum = 0;
    for (int c = 0; c < PLC_TIME_COUNT; c++) sum += e->time[c];
    CU_ASSERT_DOUBLE_EQUAL(sum, e->step_time_s, 1e-9);
    CU_ASSERT_TRUE(e->time[PLC_TIME_BUBBLE] > 0 && e->time[PLC_TIME_COMM_TP] > 0);
    CU_ASSERT_DOUBLE_EQUAL(e->tokens_per_s, 2048.0 * 2048 / e->step_time_s, 1e-6);
    double base = e->step_time_s;
    l.recompute = PLC_RECOMPUTE_FULL;
    plc_time_estimate(&job, &l, e);
    CU_ASSERT_TRUE(e->step_time_s > base * 1.2 && e->step_time_s < base * 1.45);
    l.recompute = PLC_RECOMPUTE_NONE;
    l.attention = PLC_ATTN_NAIVE;
    plc_time_estimate(&job, &l, e);
    CU_ASSERT_TRUE(e->step_time_s > base * 1.1);
    /* matmul cost: 2 M N K at the shape's efficiency */
    plc_hw hw = job.cluster.hw;
    hw.matmul_half_dim = 0;
    CU_ASSERT_DOUBLE_EQUAL(plc_cost_matmul(&hw, PLC_PREC_BF16, 1024, 1024, 1024), 2.0 * 1024 * 1024 * 1024 / (312e12 * 0.7), 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(plc_cost_memory_bound(&hw, 2039e9), 1.0 / 0.5, 1e-12);
    free(e);
}

/* the GEMM shape model and the attention shares, with known values */
static void test_efficiency_functions(void)
{
    plc_hw hw = {0};
    hw.flops_bf16 = 989e12;
    hw.flops_fp8 = 1979e12;
    hw.matmul_eff = 0.85;
    hw.matmul_half_dim = 250;
    hw.matmul_half_area = 1.2e6;
    hw.framework_eff = 0.8;
    hw.attn_eff = 0.4;
    /* 4096^3: 0.8 x 0.85 x 4096 / 4346 x 4096^2 / (4096^2 + 1.2e6) */
    double e4 = plc_matmul_efficiency(&hw, PLC_PREC_BF16, 4096, 4096, 4096);
    CU_ASSERT_DOUBLE_EQUAL(e4, 0.8 * 0.85 * (4096.0 / 4346.0) * (16777216.0 / 17977216.0), 1e-12);
    /* efficiency keeps rising with the shape, below the asymptote */
    double e2 = plc_matmul_efficiency(&hw, PLC_PREC_BF16, 2048, 2048, 2048);
    double e16 = plc_matmul_efficiency(&hw, PLC_PREC_BF16, 16384, 16384, 16384);
    CU_ASSERT_TRUE(e2 < e4 && e4 < e16 && e16 < 0.8 * 0.85);
    /* K and the output area act separately: a short K costs more than a
     * narrow output of the same FLOPs here */
    CU_ASSERT_TRUE(plc_matmul_efficiency(&hw, PLC_PREC_BF16, 8192, 8192, 256) <
                   plc_matmul_efficiency(&hw, PLC_PREC_BF16, 8192, 256, 8192));
    /* fp8: the fp8 peak, and the K half point scaled by the peaks' ratio */
    CU_ASSERT_DOUBLE_EQUAL(plc_gemm_peak(&hw, PLC_PREC_FP8), 1979e12, 0);
    double k8 = 250.0 * 1979.0 / 989.0;
    CU_ASSERT_DOUBLE_EQUAL(plc_matmul_efficiency(&hw, PLC_PREC_FP8, 4096, 4096, 4096),
                           0.8 * 0.85 * (4096.0 / (4096.0 + k8)) * (16777216.0 / 17977216.0), 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(plc_cost_matmul(&hw, PLC_PREC_BF16, 4096, 4096, 4096), 2.0 * 4096.0 * 4096 * 4096 / (989e12 * e4),
                           1e-15);
    /* attention: FlashAttention-2 at the catalog's share, v1 at 0.59 of it */
    CU_ASSERT_DOUBLE_EQUAL(plc_attention_efficiency(&hw, PLC_ATTN_FLASH2), 0.8 * 0.4, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(plc_attention_efficiency(&hw, PLC_ATTN_FLASH1), 0.8 * 0.4 * 0.59, 1e-12);
    /* figures left at 0 apply no factor */
    plc_hw bare = {0};
    bare.flops_bf16 = 312e12;
    CU_ASSERT_DOUBLE_EQUAL(plc_matmul_efficiency(&bare, PLC_PREC_BF16, 64, 64, 64), 1.0, 0);
}

/* fp8 on an H100-like device: the GEMMs at the fp8 peak make the step
 * faster, the fp8 weight copies make the memory larger; attention and the
 * head stay at the bf16 rate */
static void test_fp8_time_and_memory(void)
{
    plc_job job;
    fixture_llama13b(&job, 8);
    job.cluster.hw.flops_bf16 = 989e12;
    job.cluster.hw.flops_fp8 = 1979e12;
    plc_layout l = {.dp = 64, .tp = 1, .pp = 1, .cp = 1, .vpp = 1, .micro_batch = 1, .schedule = PLC_SCHED_1F1B,
                    .recompute = PLC_RECOMPUTE_NONE, .zero = 1, .attention = PLC_ATTN_FLASH2, .fused_rmsnorm = 1};
    plc_layer_times b, f;
    plc_layer_times_of(&job, &l, &b);
    job.train.precision = PLC_PREC_FP8;
    plc_layer_times_of(&job, &l, &f);
    /* half the GEMM time at half_dim 64 scaled by the peaks' ratio: a
     * little more than half */
    CU_ASSERT_TRUE(f.matmul_f < 0.55 * b.matmul_f && f.matmul_f > 0.5 * b.matmul_f);
    CU_ASSERT_DOUBLE_EQUAL(f.attn_f, b.attn_f, 1e-15);
    CU_ASSERT_TRUE(f.mem_f > b.mem_f); /* the casts */
    plc_dtype_bytes d = plc_dtype_bytes_of(&job);
    CU_ASSERT_DOUBLE_EQUAL(d.fp8_weights, 2.0, 0);
    CU_ASSERT_DOUBLE_EQUAL(d.weight, 2.0, 0);
    /* MFU stays on the bf16 scale */
    CU_ASSERT_DOUBLE_EQUAL(plc_peak_flops(&job), 989e12, 0);
}

/* When ranks wait for their pipeline sends (plc_pipe_send_lag): the lag run
 * unit by unit on the whole step agrees with the one the lowering and the
 * memory replay take, steps to 32 pp long included (longer than the
 * LAG_STEP ones run whole); GPipe, 1F1B, interleaved and layered wait two
 * units after each send, modular at the end of all but its short steps. */
static void test_send_lag(void)
{
    static const plc_schedule scheds[] = {PLC_SCHED_GPIPE, PLC_SCHED_1F1B, PLC_SCHED_INTERLEAVED, PLC_SCHED_LAYERED,
                                          PLC_SCHED_MODULAR};
    int checked = 0, later = 0;
    for (int si = 0; si < 5; si++)
        for (int64_t pp = 2; pp <= 8; pp++)
            for (int64_t vpp = 2; vpp <= 3; vpp++)
                for (int64_t layers = 8; layers <= 24; layers += 8) {
                    plc_pipe_shape sh;
                    if (plc_pipe_shape_of(scheds[si], pp, vpp, layers, &sh)) continue;
                    if (scheds[si] != PLC_SCHED_INTERLEAVED && vpp > 2) continue;
                    for (int64_t M = pp; M <= 32 * pp; M += pp > 4 ? 3 * pp : pp) {
                        int64_t n = plc_pipe_units(&sh, M), run = plc_pipe_send_lag_run(&sh, M);
                        int64_t lag = plc_pipe_send_lag(&sh, M);
                        CU_ASSERT_FATAL(run == 2 || run == n);
                        CU_ASSERT(lag == run);
                        if (scheds[si] != PLC_SCHED_MODULAR) CU_ASSERT(lag == 2);
                        later += lag == n;
                        checked++;
                    }
                }
    CU_ASSERT(checked > 300);
    CU_ASSERT(later > 0); /* modular waits at the end of its longer steps */
}

/* the layer's matrix products from the one table of its weights: the
 * fused GEMMs (plrun, Megatron) and the eager calls (torchtitan, nanoGPT)
 * are the same weights grouped two ways, with tensors.h's shapes and splits */
static void test_block_products(void)
{
    plc_job job;
    fixture_llama13b(&job, 1); /* h 5120, ffn 13824, 40 heads, 40 kv heads */
    plc_layout l = {.dp = 1, .tp = 4, .pp = 1, .cp = 2, .vpp = 1, .micro_batch = 2};
    const int64_t T = 2 * 2048 / 2, h = 5120, f = 13824;
    plc_gemm_shape g[PLC_LAYER_GEMMS], b[PLC_BLOCK_LINEARS_MAX];
    plc_layer_gemms(&job, &l, g);
    const char *fused[] = {"wq+wk+wv", "wo", "w_gate+w_up", "w_down"};
    const int64_t fN[] = {3 * h / 4, h, 2 * f / 4, h}, fK[] = {h, h / 4, h, f / 4};
    for (int i = 0; i < PLC_LAYER_GEMMS; i++) {
        CU_ASSERT_STRING_EQUAL(g[i].name, fused[i]);
        CU_ASSERT_EQUAL(g[i].M, T);
        CU_ASSERT_EQUAL(g[i].N, fN[i]);
        CU_ASSERT_EQUAL(g[i].K, fK[i]);
    }
    CU_ASSERT_EQUAL_FATAL(plc_block_linears(&job, &l, b), 7);
    const char *calls[] = {"wq", "wk", "wv", "wo", "w_gate", "w_up", "w_down"};
    int64_t sumN = 0;
    for (int i = 0; i < 7; i++) {
        CU_ASSERT_STRING_EQUAL(b[i].name, calls[i]);
        sumN += b[i].N;
    }
    CU_ASSERT_EQUAL(sumN, g[0].N + g[1].N + g[2].N + g[3].N);
    CU_ASSERT_EQUAL(b[6].K, f / 4); /* row parallel: the input is split */

    job.model.arch = PLC_ARCH_GPT; /* nanoGPT: one c_attn call, fc, proj */
    CU_ASSERT_EQUAL_FATAL(plc_block_linears(&job, &l, b), 4);
    plc_layer_gemms(&job, &l, g);
    const char *gpt[] = {"wq+wk+wv", "wo", "w_fc", "w_proj"};
    for (int i = 0; i < 4; i++) {
        CU_ASSERT_STRING_EQUAL(b[i].name, gpt[i]);
        CU_ASSERT_STRING_EQUAL(g[i].name, gpt[i]);
        CU_ASSERT(b[i].M == g[i].M && b[i].N == g[i].N && b[i].K == g[i].K);
    }
    CU_ASSERT_EQUAL(g[2].N, f / 4);
}

void register_test_solver_time(void)
{
    CU_pSuite s = CU_add_suite("solver_time", NULL, NULL);
    CU_add_test(s, "ring collectives, hierarchical", test_ring_costs);
    CU_add_test(s, "GEMM and attention efficiency", test_efficiency_functions);
    CU_add_test(s, "fp8: time and memory", test_fp8_time_and_memory);
    CU_add_test(s, "tree for small messages, p2p", test_tree_for_small_messages);
    CU_add_test(s, "group placement from the rank order", test_group_placement);
    CU_add_test(s, "bubbles: simulation and closed forms", test_bubbles);
    CU_add_test(s, "layer-major makespan against the simulation", test_layer_major_makespan);
    CU_add_test(s, "in-flight micro-batches", test_inflight);
    CU_add_test(s, "pipeline sends waited for as soon as every rank still finishes", test_send_lag);
    CU_add_test(s, "time-model mechanisms", test_time_mechanisms);
    CU_add_test(s, "the layer's matrix products: one table, fused and eager", test_block_products);
}
