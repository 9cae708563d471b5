/* test_fixture_hw.h: the one machine the unit tests build in C. Every
 * test that needs a plc_hw starts from fixture_a100 and then sets, field by
 * field, the figures in which its machine differs (test_plan_util.h's small
 * "test-gpu", a test's own efficiencies); the catalog's entries
 * (examples/catalog.yaml) are the front end's, read by its own tests. */
#ifndef PLC_TEST_FIXTURE_HW_H
#define PLC_TEST_FIXTURE_HW_H

#include <string.h>

#include "plc/job.h"

/* A100-SXM4-80GB figures, efficiencies 1 and no overheads unless a test sets them */
static inline void fixture_a100(plc_hw *hw)
{
    memset(hw, 0, sizeof *hw);
    strcpy(hw->name, "A100-SXM4-80GB");
    hw->mem_bytes = 80.0 * 1073741824.0;
    hw->flops_bf16 = 312e12;
    hw->flops_fp32 = 19.5e12;
    hw->hbm_bw = 2039e9;
    hw->intra_node_bw = 300e9;
    hw->intra_node_lat = 5e-6;
    hw->inter_node_bw = 25e9;
    hw->inter_node_lat = 10e-6;
    hw->matmul_eff = 1; hw->hbm_eff = 1; hw->comm_eff = 1;
}

#endif
