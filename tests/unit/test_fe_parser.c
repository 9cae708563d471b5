/* test_fe_parser.c: the bison parser: tree shapes, -D overrides, includes and
 * syntax errors with their locations. */
#include <CUnit/CUnit.h>
#include <sys/stat.h>
#include <unistd.h>

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


/* ---- include "path" ------------------------------------------------------------ */

/* a scratch directory holding files by name, removed by inc_done */
typedef struct inc_dir {
    char path[64];
    char *names[8];
    int n;
} inc_dir;

static void inc_file(inc_dir *d, const char *name, const char *text)
{
    char full[256];
    snprintf(full, sizeof full, "%s/%s", d->path, name);
    char *slash = strrchr(full, '/');
    *slash = '\0';
    mkdir(full, 0755); /* one level of subdirectory, when the name has one */
    *slash = '/';
    FILE *f = fopen(full, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs(text, f);
    fclose(f);
    d->names[d->n++] = strdup(full);
}

static void inc_init(inc_dir *d)
{
    memset(d, 0, sizeof *d);
    strcpy(d->path, "/tmp/plc-include-XXXXXX");
    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(d->path));
}

static void inc_done(inc_dir *d)
{
    for (int i = d->n - 1; i >= 0; i--) {
        remove(d->names[i]);
        char *slash = strrchr(d->names[i], '/');
        *slash = '\0';
        if (strcmp(d->names[i], d->path) != 0) rmdir(d->names[i]);
        free(d->names[i]);
    }
    rmdir(d->path);
}

/* parses file `name` of d (read from disk, as plc does) and resolves it */
static void inc_run(fe_result *r, inc_dir *d, const char *name)
{
    memset(r, 0, sizeof *r);
    plc_arena_init(&r->a);
    fe_sink s;
    plc_diag *dg = fe_sink_open(&s, 100);
    const plc_source *src = plc_source_read(&r->a, dg, plc_arena_printf(&r->a, "%s/%s", d->path, name));
    CU_ASSERT_PTR_NOT_NULL_FATAL(src);
    r->ast = plc_parse_source(&r->a, dg, src, &r->syntax_errors);
    if (!r->syntax_errors) {
        plc_resolve_opts o = {NULL, d->path, false};
        plc_resolve(&r->a, dg, r->ast, &o, &r->job);
    }
    fe_sink_close(&s);
    r->out = s.out;
    r->outlen = s.outlen;
    r->errors = dg->errors;
}

/* the included blocks stand where the include does, with their own file */
static void test_include_joins_blocks(void)
{
    inc_dir d;
    inc_init(&d);
    inc_file(&d, "shared/cluster.plan", "# the shared cluster\n" FE_CLUSTER);
    inc_file(&d, "spec.plan", FE_MODEL "include \"shared/cluster.plan\"\n" FE_TRAIN FE_LAYOUT);
    fe_result r;
    inc_run(&r, &d, "spec.plan");
    CU_ASSERT_EQUAL(r.syntax_errors, 0);
    CU_ASSERT_EQUAL(r.errors, 0);
    const char *kinds[] = {"model", "cluster", "train", "layout"};
    int i = 0;
    for (plc_block *b = r.ast->blocks; b && i < 4; b = b->next, i++) CU_ASSERT_STRING_EQUAL(b->kind, kinds[i]);
    CU_ASSERT_EQUAL(i, 4);
    plc_block *c = plc_ast_find_block(r.ast, "cluster");
    CU_ASSERT_FALSE(plc_ast_owns_block(r.ast, c));
    CU_ASSERT_TRUE(strstr(c->kind_loc.src->name, "/shared/cluster.plan") != NULL);
    CU_ASSERT_EQUAL(c->kind_loc.first_line, 2);
    CU_ASSERT_EQUAL(r.job.cluster.nodes, 2);
    CU_ASSERT_EQUAL(r.ast->includes->path_loc.first_line, 10);
    CU_ASSERT_EQUAL(r.ast->includes->path_loc.first_column, 9);
    /* fmt keeps the include line and prints none of the included blocks */
    size_t len;
    char *text = plc_fmt(&r.a, r.ast, &len);
    CU_ASSERT_TRUE(strncmp(text, "include \"shared/cluster.plan\"\n\nmodel", 36) == 0);
    CU_ASSERT_TRUE(strstr(text, "cluster {") == NULL);
    fe_done(&r);
    inc_done(&d);
}

/* an error in an included file is shown there, under the include's place */
static void test_include_error_points_into_file(void)
{
    inc_dir d;
    inc_init(&d);
    inc_file(&d, "c.plan", "cluster {\n  nodes = 2 GiB\n}\n");
    inc_file(&d, "spec.plan", FE_MODEL "include \"c.plan\"\n" FE_TRAIN);
    fe_result r;
    inc_run(&r, &d, "spec.plan");
    char want[512];
    snprintf(want, sizeof want, "In file included from %s/spec.plan:10:1:\n%s/c.plan:2:13: error: ", d.path, d.path);
    CU_ASSERT_TRUE(fe_has(&r, want));
    CU_ASSERT_TRUE(fe_has(&r, "    2 |   nodes = 2 GiB\n      |             ^~~\n"));
    fe_done(&r);
    inc_done(&d);
}

/* a missing file and a cycle are errors at the include's path */
static void test_include_missing_and_cycle(void)
{
    inc_dir d;
    inc_init(&d);
    inc_file(&d, "missing.plan", "include \"nope.plan\"\n");
    inc_file(&d, "a.plan", "include \"b.plan\"\n");
    inc_file(&d, "b.plan", "\ninclude \"a.plan\"\n");
    inc_file(&d, "self.plan", "include \"self.plan\"\n");
    fe_result r;
    char want[512];
    inc_run(&r, &d, "missing.plan");
    CU_ASSERT_EQUAL(r.syntax_errors, 1);
    snprintf(want, sizeof want, "%s/missing.plan:1:9: error: cannot include '", d.path);
    CU_ASSERT_TRUE(fe_has(&r, want));
    CU_ASSERT_TRUE(fe_has(&r, "No such file or directory"));
    CU_ASSERT_TRUE(fe_has(&r, "    1 | include \"nope.plan\"\n      |         ^~~~~~~~~~~\n"));
    fe_done(&r);
    inc_run(&r, &d, "a.plan");
    CU_ASSERT_EQUAL(r.syntax_errors, 1);
    snprintf(want, sizeof want, "%s/b.plan:2:9: error: include cycle: %s/a.plan -> %s/b.plan -> %s/a.plan", d.path,
             d.path, d.path, d.path);
    CU_ASSERT_TRUE(fe_has(&r, want));
    fe_done(&r);
    inc_run(&r, &d, "self.plan");
    CU_ASSERT_EQUAL(r.syntax_errors, 1);
    CU_ASSERT_TRUE(fe_has(&r, "error: include cycle: "));
    fe_done(&r);
    inc_done(&d);
}

/* `include name` without quotes: the parser says how to write it */
static void test_include_needs_a_string(void)
{
    fe_result r;
    fe_run(&r, "include common\n" FE_MODEL, NULL, 0);
    CU_ASSERT_TRUE(r.syntax_errors >= 1);
    CU_ASSERT_TRUE(fe_has(&r, "t.plan:1:9: error: unexpected identifier, expected string"));
    CU_ASSERT_TRUE(fe_has(&r, "include names its file in double quotes"));
    fe_done(&r);
}

void register_test_fe_parser(void);
void register_test_fe_parser(void)
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
    CU_add_test(s, "include joins blocks", test_include_joins_blocks);
    CU_add_test(s, "include error in the file", test_include_error_points_into_file);
    CU_add_test(s, "include missing, cycle", test_include_missing_and_cycle);
    CU_add_test(s, "include needs a string", test_include_needs_a_string);
}
