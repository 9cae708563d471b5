/* test_cli_gates.c: the CI gates of plc check and compile (compiler/cli/gates.c):
 * the options taken out of argv, the spec's gates block under them, and the
 * regression gate's arithmetic (MFU in points, tokens/s per GPU as a share)
 * with the results compile's YAML carries. Loading and matching a baseline
 * file is tested end to end (tests/e2e/gates.sh). */
#include <CUnit/CUnit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/cli/cli_int.h"

/* takes the gate options out of a copy of args; returns its result */
static int take(plc_gates *g, int *argc, char **argv)
{
    return plc_gates_take_options("unit", argc, argv, g);
}

static void test_options(void)
{
    char *argv[] = {"check", "--min-mfu", "45%", "spec.plan", "--baseline", "old.bin", "--allow-different=cluster,engine",
                    "--regression-on", "tokens-per-gpu", "--max-regression", "2%", "-q", NULL};
    int argc = 12;
    plc_gates g;
    CU_ASSERT_EQUAL(take(&g, &argc, argv), 0);
    CU_ASSERT_EQUAL(argc, 3); /* check spec.plan -q */
    CU_ASSERT_STRING_EQUAL(argv[1], "spec.plan");
    CU_ASSERT_STRING_EQUAL(argv[2], "-q");
    CU_ASSERT_DOUBLE_EQUAL(g.min_mfu, 0.45, 1e-12);
    CU_ASSERT_STRING_EQUAL(g.baseline, "old.bin");
    CU_ASSERT_EQUAL(g.allow_different, (unsigned)(PLC_GATE_SAME_CLUSTER | PLC_GATE_SAME_ENGINE));
    CU_ASSERT_EQUAL(g.regression_on, PLC_GATE_ON_TOKENS_PER_GPU);
    CU_ASSERT_TRUE(g.has_regression);
    CU_ASSERT_DOUBLE_EQUAL(g.max_regression, 0.02, 1e-12);
    CU_ASSERT_STRING_EQUAL(g.from_regression, "--max-regression 2%");

    char *bare[] = {"compile", "--allow-different", "--baseline", "b.bin", NULL};
    argc = 4;
    CU_ASSERT_EQUAL(take(&g, &argc, bare), 0);
    CU_ASSERT_EQUAL(g.allow_different, (unsigned)(PLC_GATE_SAME_MODEL | PLC_GATE_SAME_CLUSTER | PLC_GATE_SAME_ENGINE));
    CU_ASSERT_EQUAL(g.regression_on, PLC_GATE_ON_MFU);
}

static void test_option_errors(void)
{
    plc_gates g;
    char *a1[] = {"check", "--allow-different=gpu", "--baseline", "b.bin", NULL};
    int argc = 4;
    CU_ASSERT_EQUAL(take(&g, &argc, a1), -1);
    char *a2[] = {"check", "--regression-on", "flops", "--baseline", "b.bin", NULL};
    argc = 5;
    CU_ASSERT_EQUAL(take(&g, &argc, a2), -1);
    char *a3[] = {"check", "--max-regression", "2%", NULL};
    argc = 3;
    CU_ASSERT_EQUAL(take(&g, &argc, a3), -1);
    char *a4[] = {"check", "--allow-different", NULL};
    argc = 2;
    CU_ASSERT_EQUAL(take(&g, &argc, a4), -1);
    char *a5[] = {"check", "--min-mfu", "45", NULL};
    argc = 3;
    CU_ASSERT_EQUAL(take(&g, &argc, a5), -1);
}

/* an option overrides the spec's key; the spec's fill the rest */
static void test_spec_under_options(void)
{
    plc_job job;
    memset(&job, 0, sizeof job);
    job.gates = (plc_gate_spec){.max_memory = 0.8, .min_mfu = 0.45, .max_regression = 0.03, .has_regression = true};
    char *argv[] = {"check", "--min-mfu", "30%", NULL};
    int argc = 3;
    plc_gates o, g;
    CU_ASSERT_EQUAL(take(&o, &argc, argv), 0);
    plc_gates_for_job(&o, &job, &g);
    CU_ASSERT_DOUBLE_EQUAL(g.min_mfu, 0.30, 1e-12);
    CU_ASSERT_STRING_EQUAL(g.from_mfu, "--min-mfu 30%");
    CU_ASSERT_DOUBLE_EQUAL(g.max_memory, 0.8, 1e-12);
    CU_ASSERT_STRING_EQUAL(g.from_memory, "gates.max_memory = 80%");
    CU_ASSERT_TRUE(g.has_regression);
    CU_ASSERT_DOUBLE_EQUAL(g.max_regression, 0.03, 1e-12);
    CU_ASSERT_STRING_EQUAL(g.from_regression, "gates.max_regression = 3%");
    /* no gates anywhere: nothing to check */
    memset(&job.gates, 0, sizeof job.gates);
    char *none[] = {"check", NULL};
    argc = 1;
    CU_ASSERT_EQUAL(take(&o, &argc, none), 0);
    plc_gates_for_job(&o, &job, &g);
    CU_ASSERT_FALSE(plc_gates_any(&g));
}

/* the baseline: MFU 63.17% on 32 GPUs; the new plan on 128 GPUs */
static int regression(plc_gate_figure on, double allowed, double mfu_new, double tps_new, plc_gate_results *res)
{
    plc_job job;
    memset(&job, 0, sizeof job);
    job.path = "s.plan";
    job.cluster.nodes = 16;
    job.cluster.gpus_per_node = 8;
    job.cluster.hw.mem_bytes = 80.0 * 1073741824.0;
    job.layout.memory_limit = 0.9;
    plc_plan base;
    memset(&base, 0, sizeof base);
    base.nodes = 4;
    base.gpus_per_node = 8;
    base.pred.mfu = 0.6317;
    base.pred.tokens_per_s = 32 * 4500.0;
    plc_estimate *e = calloc(1, sizeof *e);
    e->mfu = mfu_new;
    e->tokens_per_s = tps_new;
    e->peak_bytes = 60.0 * 1073741824.0;
    plc_gates g;
    memset(&g, 0, sizeof g);
    g.baseline = "old.bin";
    g.regression_on = on;
    g.has_regression = true;
    g.max_regression = allowed;
    snprintf(g.from_regression, sizeof g.from_regression, "--max-regression %g%%", 100 * allowed);
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    int rc = plc_gates_check("unit", &g, &job, e, NULL, &base, out, res);
    fclose(out);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "s.plan: gate regression: MFU 63.17% -> "));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "s.plan: headroom: predicted peak 60.00 GiB per rank against the 72.00 GiB limit"));
    free(text);
    free(e);
    return rc;
}

static void test_regression(void)
{
    plc_gate_results res;
    /* 63.17% -> 61.69%: 1.48 points, passes at 2% though tokens/s per GPU fell 2.3% */
    CU_ASSERT_EQUAL(regression(PLC_GATE_ON_MFU, 0.02, 0.6169, 128 * 4396.5, &res), 0);
    CU_ASSERT_EQUAL(res.n, 2);
    CU_ASSERT_STRING_EQUAL(res.r[0].name, "regression");
    CU_ASSERT_DOUBLE_EQUAL(res.r[0].value, 0.0148, 1e-9);
    CU_ASSERT_TRUE(res.r[0].pass);
    CU_ASSERT_DOUBLE_EQUAL(res.tpg_old, 4500, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(res.tpg_new, 4396.5, 1e-9);
    CU_ASSERT_STRING_EQUAL(res.r[1].name, "headroom");
    CU_ASSERT_TRUE(res.r[1].pass);
    CU_ASSERT_DOUBLE_EQUAL(res.r[1].value, 0.75, 1e-12);
    /* the same plans judged on tokens/s per GPU: a 2.3% drop fails at 2% */
    CU_ASSERT_EQUAL(regression(PLC_GATE_ON_TOKENS_PER_GPU, 0.02, 0.6169, 128 * 4396.5, &res), 1);
    CU_ASSERT_DOUBLE_EQUAL(res.r[0].value, 1 - 4396.5 / 4500, 1e-12);
    CU_ASSERT_FALSE(res.r[0].pass);
    /* more tokens/s but 9.8 points less MFU: fails on MFU */
    CU_ASSERT_EQUAL(regression(PLC_GATE_ON_MFU, 0.02, 0.5336, 128 * 12090.0, &res), 1);
    CU_ASSERT_FALSE(res.r[0].pass);
}

void register_test_cli_gates(void);
void register_test_cli_gates(void)
{
    CU_pSuite s = CU_add_suite("gates", NULL, NULL);
    CU_add_test(s, "options taken out of argv", test_options);
    CU_add_test(s, "option errors", test_option_errors);
    CU_add_test(s, "the spec's gates under the options", test_spec_under_options);
    CU_add_test(s, "regression on MFU points and tokens/s per GPU", test_regression);
}
