/* test_solver_scale.c: the terms of the time model that grow with the size
 * of the run or the machine (docs/solver.md, "Losses of large runs" and
 * the collectives): NICs shared by the groups that communicate at once,
 * NVLS in-switch all-reduces, and the wait for the slowest node. */
#include <CUnit/CUnit.h>
#include <math.h>
#include <stdlib.h>

#include "compiler/solver/solver_int.h"
#include "test_solver_fixtures.h"

/* two GPUs on one NIC: every inter-node term at half the bandwidth, the
 * NVLink terms unchanged */
static void test_shared_nics(void)
{
    plc_hw hw;
    memset(&hw, 0, sizeof hw);
    hw.intra_node_bw = 100e9;
    hw.inter_node_bw = 10e9;
    hw.comm_eff = 1;
    double B = 1e9;
    double in_node = plc_cost_collective_ring(&hw, PLC_COLL_ALL_REDUCE, B, 8, 8);
    double one_nic = plc_cost_collective_ring(&hw, PLC_COLL_ALL_REDUCE, B, 16, 8);
    double p2p = plc_cost_p2p(&hw, B, true);
    hw.gpus_per_nic = 1; /* the same as 0: a NIC per GPU */
    CU_ASSERT_DOUBLE_EQUAL(plc_cost_collective_ring(&hw, PLC_COLL_ALL_REDUCE, B, 16, 8), one_nic, 1e-15);
    hw.gpus_per_nic = 2;
    CU_ASSERT_DOUBLE_EQUAL(plc_cost_collective_ring(&hw, PLC_COLL_ALL_REDUCE, B, 8, 8), in_node, 1e-15);
    /* two nodes of 8: the in-node parts as before, the all-reduce of 1/8
     * across the nodes at 5 GB/s a GPU */
    double two = 2 * 7.0 / 8 * B / 100e9 + 2 * 0.5 * (B / 8) / 5e9;
    CU_ASSERT_DOUBLE_EQUAL(plc_cost_collective_ring(&hw, PLC_COLL_ALL_REDUCE, B, 16, 8), two, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(plc_cost_p2p(&hw, B, true), 2 * p2p, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(plc_cost_p2p(&hw, B, false), B / 100e9, 1e-15);
}

/* NVLS: an in-node all-reduce at the measured bus bandwidth where that
 * beats the ring, the in-node half of a hierarchical all-reduce alike;
 * other collectives and entries without it (0) keep the ring */
static void test_nvls(void)
{
    plc_hw hw;
    memset(&hw, 0, sizeof hw);
    hw.intra_node_bw = 450e9;
    hw.inter_node_bw = 50e9;
    hw.comm_eff = 0.8;
    double B = 1e9;
    double ring8 = 2 * 7.0 / 8 * B / 360e9;
    CU_ASSERT_DOUBLE_EQUAL(plc_cost_collective_ring(&hw, PLC_COLL_ALL_REDUCE, B, 8, 8), ring8, 1e-12);
    double ring16 = plc_cost_collective_ring(&hw, PLC_COLL_ALL_REDUCE, B, 16, 8);
    double gather = plc_cost_collective_ring(&hw, PLC_COLL_ALL_GATHER, B, 8, 8);
    hw.nvls_bus_bw = 470e9;
    /* bus bandwidth 2 (n-1)/n B / t = 470 GB/s */
    double nvls8 = 2 * 7.0 / 8 * B / 470e9;
    CU_ASSERT_DOUBLE_EQUAL(plc_cost_collective_ring(&hw, PLC_COLL_ALL_REDUCE, B, 8, 8), nvls8, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(plc_cost_collective(&hw, PLC_COLL_ALL_REDUCE, B, 8, 8), nvls8, 1e-12);
    /* two nodes: the in-node reduce-scatter + all-gather replaced by NVLS */
    CU_ASSERT_DOUBLE_EQUAL(plc_cost_collective_ring(&hw, PLC_COLL_ALL_REDUCE, B, 16, 8), ring16 - ring8 + nvls8, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(plc_cost_collective_ring(&hw, PLC_COLL_ALL_GATHER, B, 8, 8), gather, 1e-15);
    /* a switch slower than the ring is not taken */
    hw.nvls_bus_bw = 100e9;
    CU_ASSERT_DOUBLE_EQUAL(plc_cost_collective_ring(&hw, PLC_COLL_ALL_REDUCE, B, 8, 8), ring8, 1e-12);
}

/* the slowest of n nodes: cv sqrt(2 ln n) of the step, nothing on one node */
static void test_sync_loss(void)
{
    plc_job job;
    fixture_llama13b(&job, 8);
    plc_layout l = {.tp = 2, .cp = 1, .pp = 2, .dp = 16, .vpp = 1, .micro_batch = 1, .sp = 1,
                    .schedule = PLC_SCHED_1F1B, .zero = 1, .attention = PLC_ATTN_FLASH2, .fused_rmsnorm = 1};
    plc_estimate *e = calloc(1, sizeof *e);
    plc_time_estimate(&job, &l, e);
    double base = e->step_time_s, overhead = e->time[PLC_TIME_OVERHEAD];
    CU_ASSERT_DOUBLE_EQUAL(plc_sync_loss(&job, &l, base), 0, 0); /* straggler_cv 0: off */

    job.cluster.hw.straggler_cv = 0.01;
    CU_ASSERT_DOUBLE_EQUAL(plc_sync_loss(&job, &l, 10.0), 10.0 * 0.01 * sqrt(2 * log(8.0)), 1e-12);
    plc_time_estimate(&job, &l, e);
    double loss = base * 0.01 * sqrt(2 * log(8.0));
    CU_ASSERT_DOUBLE_EQUAL(e->step_time_s, base + loss, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(e->time[PLC_TIME_OVERHEAD], overhead + loss, 1e-9);
    double sum = 0;
    for (int c = 0; c < PLC_TIME_COUNT; c++) sum += e->time[c];
    CU_ASSERT_DOUBLE_EQUAL(sum, e->step_time_s, 1e-9);

    /* it grows with the nodes the layout spans */
    plc_layout wide = l, one = l;
    wide.dp = 64; /* 32 nodes */
    CU_ASSERT_DOUBLE_EQUAL(plc_sync_loss(&job, &wide, 10.0), 10.0 * 0.01 * sqrt(2 * log(32.0)), 1e-12);
    CU_ASSERT_TRUE(plc_sync_loss(&job, &wide, 10.0) > plc_sync_loss(&job, &l, 10.0));
    one.dp = 2; /* 8 GPUs: one node, no one to wait for */
    CU_ASSERT_DOUBLE_EQUAL(plc_sync_loss(&job, &one, 10.0), 0, 0);
    /* a partly filled last node counts as a node */
    one.dp = 3; /* 12 GPUs: 2 nodes */
    CU_ASSERT_DOUBLE_EQUAL(plc_sync_loss(&job, &one, 10.0), 10.0 * 0.01 * sqrt(2 * log(2.0)), 1e-12);
    free(e);
}

void register_test_solver_scale(void)
{
    CU_pSuite s = CU_add_suite("solver_scale", NULL, NULL);
    CU_add_test(s, "NICs shared by concurrent groups", test_shared_nics);
    CU_add_test(s, "NVLS for in-node all-reduces", test_nvls);
    CU_add_test(s, "synchronisation loss grows with the nodes", test_sync_loss);
}
