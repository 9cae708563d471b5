/* test_parser.c: the bison parser: tree shapes, -D overrides and syntax
 * errors with their locations. */
#include <CUnit/CUnit.h>

#include "fe_test_util.h"

static void test_blocks_and_pairs(void)
{
    fe_result r;
    fe_run(&r, "model \"llama\" {\n  layers = 32 hidden = 4096\n}\nlayout { pp in {1, 2, 4} tp in 1..8 lr.peak = 3e-4 }\n", NULL, 0);
    CU_ASSERT_EQUAL(r.syntax_errors, 0);
    plc_block *m = r.ast->blocks;
    CU_ASSERT_STRING_EQUAL(m->kind, "model");
    CU_ASSERT_STRING_EQUAL(m->name, "llama");
    CU_ASSERT_STRING_EQUAL(m->pairs->key, "layers");
    CU_ASSERT_EQUAL(m->pairs->value->kind, PLC_VAL_NUMBER);
    CU_ASSERT_STRING_EQUAL(m->pairs->value->text, "32");
    CU_ASSERT_STRING_EQUAL(m->pairs->next->key, "hidden");
    CU_ASSERT_PTR_NULL(m->pairs->next->next);
    plc_block *l = m->next;
    CU_ASSERT_STRING_EQUAL(l->kind, "layout");
    CU_ASSERT_PTR_NULL(l->name);
    plc_pair *pp = l->pairs;
    CU_ASSERT_TRUE(pp->in);
    CU_ASSERT_EQUAL(pp->value->kind, PLC_VAL_SET);
    CU_ASSERT_EQUAL(pp->value->nitems, 3);
    CU_ASSERT_STRING_EQUAL(pp->value->items[2]->text, "4");
    plc_pair *tp = pp->next;
    CU_ASSERT_EQUAL(tp->value->kind, PLC_VAL_RANGE);
    CU_ASSERT_STRING_EQUAL(tp->value->lo->text, "1");
    CU_ASSERT_STRING_EQUAL(tp->value->hi->text, "8");
    CU_ASSERT_STRING_EQUAL(tp->next->key, "lr.peak");
    CU_ASSERT_EQUAL(tp->next->key_loc.first_column, 37);
    CU_ASSERT_EQUAL(tp->next->key_loc.last_column, 44);
    fe_done(&r);
}

static void test_values(void)
{
    fe_result r;
    fe_run(&r, "x { a = 4M tokens b = \"s\" c = auto d = {on, off} e = {} f = {1, 2,} }", NULL, 0);
    CU_ASSERT_EQUAL(r.syntax_errors, 0);
    plc_pair *p = r.ast->blocks->pairs;
    CU_ASSERT_EQUAL(p->value->nwords, 2);
    CU_ASSERT_STRING_EQUAL(p->value->words[0], "M");
    CU_ASSERT_STRING_EQUAL(p->value->words[1], "tokens");
    CU_ASSERT_TRUE(p->value->attached);
    CU_ASSERT_EQUAL(p->value->loc.first_column, 9);
    CU_ASSERT_EQUAL(p->value->loc.last_column, 18);
    p = p->next;
    CU_ASSERT_EQUAL(p->value->kind, PLC_VAL_STRING);
    p = p->next;
    CU_ASSERT_EQUAL(p->value->kind, PLC_VAL_IDENT);
    CU_ASSERT_STRING_EQUAL(p->value->text, "auto");
    p = p->next;
    CU_ASSERT_EQUAL(p->value->nitems, 2);
    CU_ASSERT_EQUAL(p->value->items[0]->kind, PLC_VAL_IDENT);
    p = p->next;
    CU_ASSERT_EQUAL(p->value->kind, PLC_VAL_SET);
    CU_ASSERT_EQUAL(p->value->nitems, 0);
    p = p->next;
    CU_ASSERT_EQUAL(p->value->nitems, 2);
    fe_done(&r);
}

static void test_syntax_error_location(void)
{
    fe_result r;
    fe_run(&r, "model \"m\" {\n  layers = = 2\n}\n", NULL, 0);
    CU_ASSERT_EQUAL(r.syntax_errors, 1);
    CU_ASSERT_TRUE(fe_has(&r, "t.plan:2:12: error: unexpected '=', expected identifier, number, string or '{'"));
    CU_ASSERT_TRUE(fe_has(&r, "    2 |   layers = = 2\n      |            ^\n"));
    fe_done(&r);
}

/* after an error the parser resumes at the next block: both are reported */
static void test_recovery(void)
{
    fe_result r;
    fe_run(&r, "model { a = }\ntrain { b c }\nlayout { x = 1 }\n", NULL, 0);
    CU_ASSERT_EQUAL(r.syntax_errors, 2);
    CU_ASSERT_TRUE(fe_has(&r, "t.plan:1:13: error: unexpected '}'"));
    CU_ASSERT_TRUE(fe_has(&r, "t.plan:2:11: error: unexpected identifier, expected 'in', '=' or '.'"));
    /* the block after the errors is in the tree */
    CU_ASSERT_PTR_NOT_NULL(plc_ast_find_block(r.ast, "layout"));
    fe_done(&r);
}

static void test_unexpected_end(void)
{
    fe_result r;
    fe_run(&r, "model \"m\" {\n  layers = 2\n", NULL, 0);
    CU_ASSERT_EQUAL(r.syntax_errors, 1);
    CU_ASSERT_TRUE(fe_has(&r, "t.plan:2:13: error: unexpected end of input, expected identifier or '}'"));
    fe_done(&r);
}

static void test_nested_block_hint(void)
{
    fe_result r;
    fe_run(&r, "train { lr { peak = 1 } }", NULL, 0);
    CU_ASSERT_TRUE(r.syntax_errors >= 1);
    CU_ASSERT_TRUE(fe_has(&r, "hint: blocks do not nest"));
    fe_done(&r);
}

static void test_define_replaces_and_adds(void)
{
    fe_result r;
    const char *defs[] = {"layout.tp=2", "train.steps = 7", "layout.pp in {1, 2}"};
    fe_run(&r, FE_MODEL FE_CLUSTER FE_TRAIN FE_LAYOUT, defs, 3);
    CU_ASSERT_EQUAL(r.errors, 0);
    int64_t tp = 0;
    CU_ASSERT_TRUE(plc_choice_fixed(&r.job.layout.tp, &tp));
    CU_ASSERT_EQUAL(tp, 2);
    CU_ASSERT_EQUAL(r.job.train.steps, 7);
    CU_ASSERT_EQUAL(r.job.layout.pp.kind, PLC_CHOICE_SET);
    CU_ASSERT_EQUAL(r.job.layout.pp.n, 2);
    fe_done(&r);
}

static void test_define_adds_block(void)
{
    fe_result r;
    const char *defs[] = {"layout.tp=4"};
    fe_run(&r, FE_MODEL FE_CLUSTER FE_TRAIN, defs, 1);
    CU_ASSERT_EQUAL(r.errors, 0);
    int64_t tp = 0;
    CU_ASSERT_TRUE(plc_choice_fixed(&r.job.layout.tp, &tp));
    CU_ASSERT_EQUAL(tp, 4);
    fe_done(&r);
}

static void test_define_errors(void)
{
    fe_result r;
    const char *bad_syntax[] = {"layout.tp=="};
    fe_run(&r, FE_MODEL FE_CLUSTER FE_TRAIN, bad_syntax, 1);
    CU_ASSERT_TRUE(fe_has(&r, "<command line>:1:11: error: unexpected '='"));
    fe_done(&r);
    const char *no_block[] = {"tp=2"};
    fe_run(&r, FE_MODEL FE_CLUSTER FE_TRAIN, no_block, 1);
    CU_ASSERT_TRUE(fe_has(&r, "<command line>:1:1: error: an override names its block"));
    fe_done(&r);
    /* a value error is checked like in the file, shown against the override */
    const char *bad_value[] = {"layout.zero=7"};
    fe_run(&r, FE_MODEL FE_CLUSTER FE_TRAIN, bad_value, 1);
    CU_ASSERT_EQUAL(r.errors, 1);
    CU_ASSERT_TRUE(fe_has(&r, "<command line>:1:13: error: 'zero' must be between 0 and 3, not 7"));
    CU_ASSERT_TRUE(fe_has(&r, "    1 | layout.zero=7\n      |             ^\n"));
    fe_done(&r);
    const char *bad_key[] = {"train.stpes=3"};
    fe_run(&r, FE_MODEL FE_CLUSTER FE_TRAIN, bad_key, 1);
    CU_ASSERT_TRUE(fe_has(&r, "<command line>:1:7: error: unknown key 'stpes' in block 'train'"));
    CU_ASSERT_TRUE(fe_has(&r, "did you mean 'steps'?"));
    fe_done(&r);
}

static void test_deep_nesting_is_an_error(void)
{
    enum { DEPTH = 100000 };
    char *text = malloc(DEPTH + 32);
    strcpy(text, "layout { tp = ");
    size_t n = strlen(text);
    memset(text + n, '{', DEPTH);
    text[n + DEPTH] = '\0';
    fe_result r;
    fe_run(&r, text, NULL, 0);
    CU_ASSERT_TRUE(r.syntax_errors >= 1);
    fe_done(&r);
    free(text);
}

void register_test_parser(void);
void register_test_parser(void)
{
    CU_pSuite s = CU_add_suite("parser", NULL, NULL);
    CU_add_test(s, "blocks and pairs", test_blocks_and_pairs);
    CU_add_test(s, "values", test_values);
    CU_add_test(s, "syntax error location", test_syntax_error_location);
    CU_add_test(s, "error recovery", test_recovery);
    CU_add_test(s, "unexpected end", test_unexpected_end);
    CU_add_test(s, "nested block hint", test_nested_block_hint);
    CU_add_test(s, "-D replaces and adds", test_define_replaces_and_adds);
    CU_add_test(s, "-D adds a block", test_define_adds_block);
    CU_add_test(s, "-D errors", test_define_errors);
    CU_add_test(s, "deep nesting", test_deep_nesting_is_an_error);
}
