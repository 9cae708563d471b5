/* test_solver_nofit_reasons.c: the search's record of why layouts were removed
 * (invalid_by, plc_invalid_message) and the legality probe the no-fit
 * report uses for its alternatives (plc_degrees_legal). */
#include <CUnit/CUnit.h>
#include <string.h>

#include "compiler/solver/solver.h"
#include "fe_test_util.h"

/* llama-7b shapes on 3 nodes of 8 (24 GPUs) with 128 sequences: no dp that
 * 24 leaves divides 128 with a tp and pp the model takes, for an engine of
 * equal stages (plrun runs pp 3 over 32 layers: dp 8) */
#define NOFIT_SPEC                                                                                      \
    "model \"m\" {\n layers = 32\n hidden = 4096\n ffn_hidden = 11008\n heads = 32\n vocab = 32000\n"   \
    " seq_len = 2048\n}\ncluster {\n gpu = \"A100-SXM4-80GB\"\n nodes = 3\n gpus_per_node = 8\n}\n"     \
    "train {\n global_batch = 128\n steps = 10\n}\n"

static void test_batch_reason(void)
{
    fe_result r;
    fe_run(&r, NOFIT_SPEC, NULL, 0);
    CU_ASSERT_EQUAL_FATAL(r.errors, 0);
    plc_solution s;
    CU_ASSERT_EQUAL_FATAL(plc_solve(&r.job, &r.a, &s), PLC_OK);
    CU_ASSERT_TRUE(s.nranked > 0); /* plrun: pp 3 (11, 11, 10 layers), dp 8 */
    r.job.engine.uneven_stages = 0;  /* an engine of equal stages */
    CU_ASSERT_EQUAL_FATAL(plc_solve(&r.job, &r.a, &s), PLC_OK);
    CU_ASSERT_EQUAL(s.nranked, 0);
    CU_ASSERT_EQUAL(s.nclosest, 0);
    CU_ASSERT_TRUE(s.invalid > 0);
    CU_ASSERT_TRUE(s.invalid_by[PLC_RULE_DP_BATCH] > 0);
    int64_t sum = 0;
    for (int i = 0; i < PLC_RULE_COUNT; i++) sum += s.invalid_by[i];
    CU_ASSERT_EQUAL(sum + s.invalid_dp_pinned, s.invalid);
    char msg[256];
    plc_invalid_message(&r.job, &s, PLC_RULE_DP_BATCH, msg, sizeof msg);
    CU_ASSERT_PTR_NOT_NULL(strstr(msg, "does not divide global_batch = 128"));
    /* no legal degrees here; 126 sequences or 16 GPUs have some */
    plc_layout ex;
    CU_ASSERT_FALSE(plc_degrees_legal(&r.job, &ex));
    plc_job j = r.job;
    j.train.global_batch = 126;
    CU_ASSERT_TRUE(plc_degrees_legal(&j, &ex));
    CU_ASSERT_EQUAL(ex.dp * ex.tp * ex.pp * ex.cp, 24);
    CU_ASSERT_EQUAL(126 % ex.dp, 0);
    j = r.job;
    j.cluster.nodes = 2;
    CU_ASSERT_TRUE(plc_degrees_legal(&j, &ex));
    fe_done(&r);
}

/* a pp the layers do not take is recorded under its rule, with an example
 * that names it (what plc explain prints): under plrun one stage more than
 * the layers; under an engine of equal stages one that does not divide them */
static void test_pp_rule(void)
{
    fe_result r;
    const char *defs[] = {"model.layers = 6", "cluster.nodes = 1", "train.global_batch = 64"};
    fe_run(&r, NOFIT_SPEC, defs, 3);
    CU_ASSERT_EQUAL_FATAL(r.errors, 0);
    plc_solution s;
    CU_ASSERT_EQUAL_FATAL(plc_solve(&r.job, &r.a, &s), PLC_OK);
    CU_ASSERT_TRUE(s.nranked > 0);
    CU_ASSERT_TRUE(s.invalid_by[PLC_RULE_PP_LAYERS] > 0);
    char msg[256];
    plc_invalid_message(&r.job, &s, PLC_RULE_PP_LAYERS, msg, sizeof msg);
    CU_ASSERT_PTR_NOT_NULL(strstr(msg, "pp = 8 is more than layers = 6"));
    fe_done(&r);
    const char *defs30[] = {"model.layers = 30", "cluster.nodes = 1", "train.global_batch = 64"};
    fe_run(&r, NOFIT_SPEC, defs30, 3);
    CU_ASSERT_EQUAL_FATAL(r.errors, 0);
    r.job.engine.uneven_stages = 0;
    CU_ASSERT_EQUAL_FATAL(plc_solve(&r.job, &r.a, &s), PLC_OK);
    CU_ASSERT_TRUE(s.nranked > 0);
    CU_ASSERT_TRUE(s.invalid_by[PLC_RULE_PP_LAYERS] > 0);
    plc_invalid_message(&r.job, &s, PLC_RULE_PP_LAYERS, msg, sizeof msg);
    CU_ASSERT_PTR_NOT_NULL(strstr(msg, "does not divide layers = 30"));
    fe_done(&r);
}

void register_test_solver_nofit_reasons(void);
void register_test_solver_nofit_reasons(void)
{
    CU_pSuite s = CU_add_suite("nofit_reasons", NULL, NULL);
    CU_add_test(s, "no dp divides the batch", test_batch_reason);
    CU_add_test(s, "the rule that removes a pp", test_pp_rule);
}
