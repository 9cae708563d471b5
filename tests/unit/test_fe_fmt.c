/* test_fe_fmt.c: plc fmt's canonical form, comment keeping, idempotence. */
#include <CUnit/CUnit.h>

#include "compiler/frontend/frontend.h"
#include "fe_test_util.h"

static char *fmt_text(plc_arena *a, const char *text)
{
    plc_diag d;
    plc_diag_init(&d, stderr, 100);
    plc_source *src = plc_source_from_text(a, "t.plan", text, strlen(text));
    int errors;
    plc_ast *ast = plc_parse_source(a, &d, src, &errors);
    if (errors) return NULL;
    size_t len;
    return plc_fmt(a, ast, &len);
}

static void test_canonical(void)
{
    plc_arena a;
    plc_arena_init(&a);
    const char *in =
        "# header\n\n"
        "layout { pp = {1,2}  tp=auto   memory_limit = 90 %}\n"
        "train { steps = 10 global_batch = 4 M  tokens # batch\n}\n"
        "# about the model\n"
        "model \"m\" { heads = 4 layers = 2   # two\n"
        "  # width\n  hidden = 64\n  mystery = 1f1b\n}\n"
        "cluster { inter_node_bw = 200 Gb/s gpu = \"x\" memory = 80GiB }\n"
        "# the end\n";
    const char *want =
        "# header\n\n"
        "# about the model\n"
        "model \"m\" {\n"
        "  layers  = 2  # two\n"
        "\n"
        "  # width\n"
        "  hidden  = 64\n"
        "  heads   = 4\n"
        "  mystery = 1f1b\n"
        "}\n\n"
        "cluster {\n"
        "  gpu           = \"x\"\n"
        "  memory        = 80 GiB\n"
        "  inter_node_bw = 200 Gbit/s\n"
        "}\n\n"
        "train {\n"
        "  global_batch = 4M tokens  # batch\n"
        "  steps        = 10\n"
        "}\n\n"
        "layout {\n"
        "  tp           = auto\n"
        "  pp           in {1, 2}\n"
        "  memory_limit = 90%\n"
        "}\n\n"
        "# the end\n";
    char *out = fmt_text(&a, in);
    CU_ASSERT_PTR_NOT_NULL_FATAL(out);
    if (strcmp(out, want)) fprintf(stderr, "\ngot:\n%s\nwant:\n%s\n", out, want);
    CU_ASSERT_STRING_EQUAL(out, want);
    /* formatting the canonical form changes nothing */
    char *again = fmt_text(&a, out);
    CU_ASSERT_STRING_EQUAL(again, out);
    plc_arena_free(&a);
}

static void test_examples_idempotent(void)
{
    const char *files[] = {"../examples/tiny.plan", "../examples/llama70b-h100.plan", "../examples/calibration-llama13b.plan"};
    for (int i = 0; i < 3; i++) {
        plc_arena a;
        plc_arena_init(&a);
        plc_diag d;
        plc_diag_init(&d, stderr, 100);
        plc_source *src = plc_source_read(&a, &d, files[i]);
        CU_ASSERT_PTR_NOT_NULL_FATAL(src);
        char *out = fmt_text(&a, src->text);
        CU_ASSERT_PTR_NOT_NULL_FATAL(out);
        /* the examples are kept canonical */
        CU_ASSERT_STRING_EQUAL(out, src->text);
        plc_arena_free(&a);
    }
}

static void test_every_comment_kept(void)
{
    plc_arena a;
    plc_arena_init(&a);
    const char *in = "# a\nmodel { # b\n  # c\n  x = 1 # d\n  # e\n} # f\n# g\n";
    char *out = fmt_text(&a, in);
    CU_ASSERT_PTR_NOT_NULL_FATAL(out);
    const char *marks[] = {"# a", "# b", "# c", "# d", "# e", "# f", "# g"};
    for (int i = 0; i < 7; i++) CU_ASSERT_PTR_NOT_NULL(strstr(out, marks[i]));
    CU_ASSERT_STRING_EQUAL(fmt_text(&a, out), out);
    plc_arena_free(&a);
}

void register_test_fe_fmt(void);
void register_test_fe_fmt(void)
{
    CU_pSuite s = CU_add_suite("fe_fmt", NULL, NULL);
    CU_add_test(s, "canonical form", test_canonical);
    CU_add_test(s, "examples are canonical", test_examples_idempotent);
    CU_add_test(s, "every comment kept", test_every_comment_kept);
}
