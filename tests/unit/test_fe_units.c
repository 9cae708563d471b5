/* test_fe_units.c: numbers, multipliers and units, and the YAML catalog. */
#include <CUnit/CUnit.h>
#include <math.h>

#include "compiler/frontend/frontend_int.h"
#include "fe_test_util.h"

static plc_quantity_status eval(const char *num, const char *w1, const char *w2, plc_quantity *q)
{
    const char *words[2] = {w1, w2};
    int n = w2 ? 2 : w1 ? 1 : 0, bad;
    return plc_quantity_eval(num, words, n, q, &bad);
}

static void test_units(void)
{
    plc_quantity q;
    CU_ASSERT_EQUAL(eval("80", "GiB", NULL, &q), PLC_QTY_OK);
    CU_ASSERT_EQUAL(q.kind, PLC_UNIT_SIZE);
    CU_ASSERT_DOUBLE_EQUAL(q.value, 85899345920.0, 0);
    CU_ASSERT_EQUAL(eval("80", "GB", NULL, &q), PLC_QTY_OK);
    CU_ASSERT_DOUBLE_EQUAL(q.value, 80e9, 0);
    CU_ASSERT_EQUAL(eval("200", "Gbit/s", NULL, &q), PLC_QTY_OK);
    CU_ASSERT_EQUAL(q.kind, PLC_UNIT_BANDWIDTH);
    CU_ASSERT_DOUBLE_EQUAL(q.value, 25e9, 0);
    CU_ASSERT_EQUAL(eval("200", "Gb/s", NULL, &q), PLC_QTY_OK);
    CU_ASSERT_DOUBLE_EQUAL(q.value, 25e9, 0);
    CU_ASSERT_EQUAL(eval("3.35", "TB/s", NULL, &q), PLC_QTY_OK);
    CU_ASSERT_DOUBLE_EQUAL(q.value, 3.35e12, 1);
    CU_ASSERT_EQUAL(eval("312", "TFLOPS", NULL, &q), PLC_QTY_OK);
    CU_ASSERT_EQUAL(q.kind, PLC_UNIT_FLOPS);
    CU_ASSERT_DOUBLE_EQUAL(q.value, 312e12, 0);
    CU_ASSERT_EQUAL(eval("5", "us", NULL, &q), PLC_QTY_OK);
    CU_ASSERT_EQUAL(q.kind, PLC_UNIT_TIME);
    CU_ASSERT_DOUBLE_EQUAL(q.value, 5e-6, 1e-18);
    CU_ASSERT_EQUAL(eval("80", "%", NULL, &q), PLC_QTY_OK);
    CU_ASSERT_DOUBLE_EQUAL(q.value, 0.8, 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(plc_multiplier("M", 1), 1e6, 0);
    CU_ASSERT_DOUBLE_EQUAL(plc_multiplier_binary("k", 1), 1024, 0);
    CU_ASSERT_DOUBLE_EQUAL(plc_multiplier_binary("M", 1), 1048576, 0);
    CU_ASSERT_DOUBLE_EQUAL(plc_multiplier_binary("G", 1), 1073741824.0, 0);
    CU_ASSERT_DOUBLE_EQUAL(plc_multiplier_binary("tokens", 6), 0, 0);
    CU_ASSERT_EQUAL(eval("4", "M", "tokens", &q), PLC_QTY_OK);
    CU_ASSERT_EQUAL(q.kind, PLC_UNIT_TOKENS);
    CU_ASSERT_TRUE(q.is_int);
    CU_ASSERT_EQUAL(q.ivalue, 4000000);
    CU_ASSERT_EQUAL(eval("1.5", "k", NULL, &q), PLC_QTY_OK);
    CU_ASSERT_EQUAL(q.kind, -1);
    CU_ASSERT_TRUE(q.is_int);
    CU_ASSERT_EQUAL(q.ivalue, 1500);
    CU_ASSERT_EQUAL(eval("80", "GiBB", NULL, &q), PLC_QTY_UNKNOWN_UNIT);
    CU_ASSERT_EQUAL(eval("80", "GiB", "tokens", &q), PLC_QTY_EXTRA_UNIT);
}

static void test_numbers(void)
{
    plc_number n;
    CU_ASSERT_TRUE(plc_number_parse("9223372036854775807", &n));
    CU_ASSERT_EQUAL(n.i, INT64_MAX);
    CU_ASSERT_FALSE(plc_number_parse("9223372036854775808", &n));
    CU_ASSERT_FALSE(plc_number_parse("1e999", &n));
    CU_ASSERT_TRUE(plc_number_parse("3e-4", &n));
    CU_ASSERT_FALSE(n.is_int);
    CU_ASSERT_DOUBLE_EQUAL(n.d, 3e-4, 1e-18);
    plc_quantity q;
    /* 9e18 fits, times G does not */
    CU_ASSERT_EQUAL(eval("9000000000000000000", "G", NULL, &q), PLC_QTY_OVERFLOW);
}

static void test_quantity_text(void)
{
    plc_quantity q;
    size_t bad;
    bool syntax;
    CU_ASSERT_EQUAL(plc_quantity_parse_text("81920 MiB", &q, &bad, &syntax), PLC_QTY_OK);
    CU_ASSERT_FALSE(syntax);
    CU_ASSERT_DOUBLE_EQUAL(q.value, 81920.0 * 1048576, 0);
    CU_ASSERT_EQUAL(plc_quantity_parse_text("19.5 TFLOPS", &q, &bad, &syntax), PLC_QTY_OK);
    CU_ASSERT_DOUBLE_EQUAL(q.value, 19.5e12, 1);
    plc_quantity_parse_text("fast", &q, &bad, &syntax);
    CU_ASSERT_TRUE(syntax);
    CU_ASSERT_EQUAL(plc_quantity_parse_text("80 GiBs", &q, &bad, &syntax), PLC_QTY_UNKNOWN_UNIT);
    CU_ASSERT_EQUAL(bad, 3u);
}

static void test_edit_distance(void)
{
    CU_ASSERT_EQUAL(plc_edit_distance("hiden", "hidden", 3), 1);
    CU_ASSERT_EQUAL(plc_edit_distance("abc", "abc", 3), 0);
    CU_ASSERT_EQUAL(plc_edit_distance("kitten", "sitting", 5), 3);
    CU_ASSERT_EQUAL(plc_edit_distance("a", "zzzzzz", 2), 3);
}

static int catalog_text(const char *text, plc_catalog *cat, char **out, plc_arena *a)
{
    fe_sink s;
    plc_diag *d = fe_sink_open(&s, 100);
    plc_source *src = plc_source_from_text(a, "cat.yaml", text, strlen(text));
    int errors = plc_catalog_parse(a, d, src, cat);
    fe_sink_close(&s);
    *out = s.out;
    return errors;
}

#define FIGURES                                                                                                        \
    "  memory: 80 GiB\n  bf16_flops: 312 TFLOPS\n  fp32_flops: 19.5 TFLOPS\n  hbm_bw: 2039 GB/s\n"                    \
    "  intra_node_bw: 600 GB/s\n  intra_node_latency: 5 us\n  inter_node_bw: 200 Gbit/s\n"                            \
    "  inter_node_latency: 10 us\n  matmul_efficiency: 0.75\n  matmul_half_dim: 1024\n  hbm_efficiency: 80%\n"         \
    "  comm_efficiency: 0.8\n  kernel_launch: 5 us\n  runtime_reserved: 2 GiB\n  comm_buffer: 512 MiB\n"

static void test_catalog(void)
{
    plc_arena a;
    plc_arena_init(&a);
    plc_catalog cat;
    char *out = NULL;
    /* every figure of PLC_HW_FIELDS, generated from the table */
    char text[4096] = "GPU-A:\n";
    for (int i = 0; i < plc_nhw_fields; i++) {
        const plc_hw_field *f = &plc_hw_fields[i];
        const char *v = f->unit == PLC_UNIT_SIZE ? "2 GiB" : f->unit == PLC_UNIT_BANDWIDTH ? "200 Gbit/s"
                      : f->unit == PLC_UNIT_FLOPS ? "312 TFLOPS" : f->unit == PLC_UNIT_TIME ? "5 us"
                      : f->unit == PLC_UNIT_PERCENT ? "80%" : "4";
        sprintf(text + strlen(text), "  %s: %s\n", f->key, v);
    }
    CU_ASSERT_EQUAL(catalog_text(text, &cat, &out, &a), 0);
    CU_ASSERT_EQUAL(cat.n, 1);
    const plc_hw *hw = plc_catalog_find(&cat, "GPU-A");
    CU_ASSERT_PTR_NOT_NULL_FATAL(hw);
    CU_ASSERT_DOUBLE_EQUAL(hw->mem_bytes, 2.0 * 1073741824, 0);
    CU_ASSERT_DOUBLE_EQUAL(hw->inter_node_bw, 25e9, 0);
    CU_ASSERT_DOUBLE_EQUAL(hw->hbm_eff, 0.8, 1e-15);
    CU_ASSERT_PTR_NULL(plc_catalog_find(&cat, "GPU-B"));
    free(out);
    plc_arena_free(&a);
}

static void test_catalog_errors(void)
{
    plc_arena a;
    plc_arena_init(&a);
    plc_catalog cat;
    char *out = NULL;
    /* a bandwidth for memory, an unknown figure, and the figures left out */
    CU_ASSERT_TRUE(catalog_text("X:\n  memory: 80 GB/s\n  colour: red\n", &cat, &out, &a) > 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "cat.yaml:2:11: error: 'memory' expects a size"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "cat.yaml:3:3: error: unknown figure 'colour'"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "cat.yaml:1:1: error: entry 'X' lacks 'bf16_flops'"));
    free(out);
    out = NULL;
    /* YAML syntax errors keep the file's position */
    CU_ASSERT_TRUE(catalog_text("X:\n  memory: [80\n", &cat, &out, &a) >= 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "cat.yaml:3:1: error: YAML: "));
    free(out);
    plc_arena_free(&a);
}

static void test_builtin_catalog(void)
{
    plc_arena a;
    plc_arena_init(&a);
    fe_sink s;
    plc_diag *d = fe_sink_open(&s, 100);
    plc_catalog cat;
    int errors = plc_catalog_load(&a, d, "../examples/catalog.yaml", &cat);
    fe_sink_close(&s);
    char *out = s.out;
    CU_ASSERT_EQUAL(errors, 0);
    const char *names[] = {"A100-SXM4-40GB", "A100-SXM4-80GB", "H100-SXM5-80GB", "H200-SXM-141GB", "host-cpu"};
    for (int i = 0; i < 5; i++) CU_ASSERT_PTR_NOT_NULL(plc_catalog_find(&cat, names[i]));
    const plc_hw *h100 = plc_catalog_find(&cat, "H100-SXM5-80GB");
    if (h100) {
        CU_ASSERT_DOUBLE_EQUAL(h100->flops_bf16, 989e12, 0);
        CU_ASSERT_DOUBLE_EQUAL(h100->hbm_bw, 3.35e12, 1);
        CU_ASSERT_DOUBLE_EQUAL(h100->intra_node_bw, 450e9, 0); /* per direction */
        CU_ASSERT_DOUBLE_EQUAL(h100->inter_node_bw, 50e9, 0);
    }
    free(out);
    plc_arena_free(&a);
}

void register_test_fe_units(void);
void register_test_fe_units(void)
{
    CU_pSuite s = CU_add_suite("fe_units", NULL, NULL);
    CU_add_test(s, "units", test_units);
    CU_add_test(s, "numbers", test_numbers);
    CU_add_test(s, "quantity text", test_quantity_text);
    CU_add_test(s, "edit distance", test_edit_distance);
    CU_add_test(s, "catalog", test_catalog);
    CU_add_test(s, "catalog errors", test_catalog_errors);
    CU_add_test(s, "built-in catalog", test_builtin_catalog);
}
