/* test_fe_lexer.c: the flex scanner: tokens, numbers with units, strings,
 * comments and exact locations. */
#include <CUnit/CUnit.h>

#include "fe_test_util.h"
#include "plan.tab.h"

typedef struct lexed {
    plc_arena a;
    plc_lexeme t[64];
    int n, errors;
    char *out; /* the diagnostics */
} lexed;

static void lex(lexed *l, const char *text)
{
    plc_arena_init(&l->a);
    fe_sink s;
    plc_diag *d = fe_sink_open(&s, 100);
    plc_source *src = plc_source_from_text(&l->a, "t.plan", text, strlen(text));
    l->n = plc_lex_source(&l->a, d, src, l->t, 64);
    fe_sink_close(&s);
    l->out = s.out;
    l->errors = d->errors;
}

static void unlex(lexed *l)
{
    free(l->out);
    plc_arena_free(&l->a);
}

static void test_tokens(void)
{
    lexed l;
    lex(&l, "model \"x\" { a.b = {1, 2} c in 1..8 }");
    int want[] = {IDENT, STRING, '{', IDENT, '.', IDENT, '=', '{', NUMBER, ',', NUMBER, '}', IDENT, IN, NUMBER, DOTDOT, NUMBER, '}'};
    CU_ASSERT_EQUAL(l.n, (int)(sizeof want / sizeof want[0]));
    for (int i = 0; i < l.n && i < (int)(sizeof want / sizeof want[0]); i++) CU_ASSERT_EQUAL(l.t[i].kind, want[i]);
    CU_ASSERT_STRING_EQUAL(l.t[1].tok.text, "x");
    CU_ASSERT_EQUAL(l.errors, 0);
    unlex(&l);
}

/* `include` is a keyword; a longer word that starts with it is a name */
static void test_include_keyword(void)
{
    lexed l;
    lex(&l, "include \"a.plan\" includes = 1");
    CU_ASSERT_EQUAL(l.n, 5);
    CU_ASSERT_EQUAL(l.t[0].kind, INCLUDE);
    CU_ASSERT_EQUAL(l.t[0].loc.last_column, 8);
    CU_ASSERT_EQUAL(l.t[1].kind, STRING);
    CU_ASSERT_STRING_EQUAL(l.t[1].tok.text, "a.plan");
    CU_ASSERT_EQUAL(l.t[2].kind, IDENT);
    CU_ASSERT_STRING_EQUAL(l.t[2].tok.text, "includes");
    unlex(&l);
}

static void test_numbers_and_units(void)
{
    lexed l;
    lex(&l, "a = 80 GiB b = 80GiB c = 4M tokens d = 1.5e-4 e = 80% f = 200 Gbit/s g = 1f1b");
    /* a = NUMBER UNIT */
    CU_ASSERT_EQUAL(l.t[2].kind, NUMBER);
    CU_ASSERT_STRING_EQUAL(l.t[2].tok.text, "80");
    CU_ASSERT_EQUAL(l.t[3].kind, UNIT);
    CU_ASSERT_STRING_EQUAL(l.t[3].tok.text, "GiB");
    CU_ASSERT_FALSE(l.t[3].tok.attached);
    /* b = 80GiB: attached */
    CU_ASSERT_EQUAL(l.t[4].kind, IDENT);
    CU_ASSERT_EQUAL(l.t[7].kind, UNIT);
    CU_ASSERT_TRUE(l.t[7].tok.attached);
    /* c = 4M tokens: two unit words */
    CU_ASSERT_STRING_EQUAL(l.t[10].tok.text, "4");
    CU_ASSERT_STRING_EQUAL(l.t[11].tok.text, "M");
    CU_ASSERT_STRING_EQUAL(l.t[12].tok.text, "tokens");
    CU_ASSERT_EQUAL(l.t[12].kind, UNIT);
    /* d = 1.5e-4: one number */
    CU_ASSERT_EQUAL(l.t[15].kind, NUMBER);
    CU_ASSERT_STRING_EQUAL(l.t[15].tok.text, "1.5e-4");
    CU_ASSERT_EQUAL(l.t[16].kind, IDENT);
    /* e = 80% */
    CU_ASSERT_STRING_EQUAL(l.t[19].tok.text, "%");
    /* f = 200 Gbit/s */
    CU_ASSERT_STRING_EQUAL(l.t[23].tok.text, "Gbit/s");
    /* g = 1f1b: number with an attached word */
    CU_ASSERT_STRING_EQUAL(l.t[26].tok.text, "1");
    CU_ASSERT_STRING_EQUAL(l.t[27].tok.text, "f1b");
    CU_ASSERT_EQUAL(l.n, 28);
    unlex(&l);
}

/* a word after a number is the next key when '=' or 'in' follows it */
static void test_key_after_number(void)
{
    lexed l;
    lex(&l, "layers = 40   hidden = 5120\npp in {1}\nx = 2 tp in {1}");
    int want[] = {IDENT, '=', NUMBER, IDENT, '=', NUMBER, IDENT, IN, '{', NUMBER, '}', IDENT, '=', NUMBER, IDENT, IN, '{', NUMBER, '}'};
    CU_ASSERT_EQUAL(l.n, (int)(sizeof want / sizeof want[0]));
    for (int i = 0; i < l.n && i < (int)(sizeof want / sizeof want[0]); i++) CU_ASSERT_EQUAL(l.t[i].kind, want[i]);
    unlex(&l);
}

static void test_locations(void)
{
    lexed l;
    lex(&l, "# c\n\tkey = 80 GiB\n  other");
    CU_ASSERT_EQUAL(l.t[0].loc.first_line, 2);
    CU_ASSERT_EQUAL(l.t[0].loc.first_column, 2); /* a tab is one column */
    CU_ASSERT_EQUAL(l.t[0].loc.last_column, 5);
    CU_ASSERT_EQUAL(l.t[2].loc.first_column, 8);
    CU_ASSERT_EQUAL(l.t[3].loc.first_column, 11); /* the unit, not its blank */
    CU_ASSERT_EQUAL(l.t[3].loc.last_column, 14);
    CU_ASSERT_EQUAL(l.t[3].loc.begin, 14u);
    CU_ASSERT_EQUAL(l.t[4].loc.first_line, 3);
    CU_ASSERT_EQUAL(l.t[4].loc.first_column, 3);
    unlex(&l);
}

static void test_strings(void)
{
    lexed l;
    lex(&l, "a = \"q\\\"x\\\\y\" b = \"open");
    CU_ASSERT_EQUAL(l.t[2].kind, STRING);
    CU_ASSERT_STRING_EQUAL(l.t[2].tok.text, "q\"x\\y");
    CU_ASSERT_EQUAL(l.t[5].kind, STRING);
    CU_ASSERT_EQUAL(l.errors, 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(l.out, "t.plan:1:19: error: unterminated string"));
    unlex(&l);
}

static void test_bad_bytes(void)
{
    lexed l;
    const char text[] = "a = 1 @ b\x01 = 2";
    lex(&l, text);
    CU_ASSERT_EQUAL(l.errors, 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(l.out, "t.plan:1:7: error: unexpected character '@'"));
    CU_ASSERT_PTR_NOT_NULL(strstr(l.out, "unexpected byte 0x01"));
    /* NUL bytes inside the text are scanned, not taken as its end */
    unlex(&l);
    plc_arena a;
    plc_arena_init(&a);
    fe_sink s;
    plc_diag *d = fe_sink_open(&s, 100);
    plc_source *src = plc_source_from_text(&a, "t.plan", "a\0b", 3);
    plc_lexeme t[8];
    int n = plc_lex_source(&a, d, src, t, 8);
    fe_sink_close(&s);
    CU_ASSERT_EQUAL(n, 2);
    CU_ASSERT_EQUAL(d->errors, 1);
    free(s.out);
    plc_arena_free(&a);
}

static void test_comments_recorded(void)
{
    fe_result r;
    fe_run(&r, "# head\nmodel \"m\" { # after brace\n  layers = 2 # end\n}\n", NULL, 0);
    CU_ASSERT_EQUAL(r.ast->ncomments, 3);
    CU_ASSERT_TRUE(r.ast->comments[0].own_line);
    CU_ASSERT_FALSE(r.ast->comments[1].own_line);
    CU_ASSERT_EQUAL(r.ast->comments[2].loc.first_line, 3);
    CU_ASSERT_EQUAL(r.ast->comments[2].loc.first_column, 14);
    fe_done(&r);
}

void register_test_fe_lexer(void);
void register_test_fe_lexer(void)
{
    CU_pSuite s = CU_add_suite("lexer", NULL, NULL);
    CU_add_test(s, "tokens", test_tokens);
    CU_add_test(s, "include keyword", test_include_keyword);
    CU_add_test(s, "numbers and units", test_numbers_and_units);
    CU_add_test(s, "key after a number", test_key_after_number);
    CU_add_test(s, "locations", test_locations);
    CU_add_test(s, "strings", test_strings);
    CU_add_test(s, "bad bytes", test_bad_bytes);
    CU_add_test(s, "comments", test_comments_recorded);
}
