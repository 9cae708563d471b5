/* plan.y: the pure parser of .plan files (and of -D overrides).
 *
 *   file   := (block | include)*
 *   block  := IDENT STRING? '{' pair* '}'
 *   include:= 'include' STRING
 *   pair   := key '=' value | key 'in' (set | range)
 *   key    := IDENT ('.' IDENT)*
 *   value  := NUMBER UNIT? UNIT? | STRING | IDENT | set | range
 *   set    := '{' (scalar (',' scalar)* ','?)? '}'
 *   range  := NUMBER '..' NUMBER
 *
 * Syntax errors are reported with the expected tokens; the parser recovers at
 * the next pair or block so that one run shows every error of a file. */
%require "3.8"
%define api.pure full
%define api.location.type {plc_loc}
%define parse.error custom
%locations
%expect 0

%code requires {
#include "compiler/frontend/frontend_int.h"
#define YYLLOC_DEFAULT(cur, rhs, n)                                            \
    do {                                                                       \
        if (n) {                                                               \
            (cur).first_line = YYRHSLOC(rhs, 1).first_line;                    \
            (cur).first_column = YYRHSLOC(rhs, 1).first_column;                \
            (cur).begin = YYRHSLOC(rhs, 1).begin;                              \
            (cur).last_line = YYRHSLOC(rhs, n).last_line;                      \
            (cur).last_column = YYRHSLOC(rhs, n).last_column;                  \
            (cur).end = YYRHSLOC(rhs, n).end;                                  \
            (cur).src = YYRHSLOC(rhs, 1).src;                                  \
        } else {                                                               \
            (cur).first_line = (cur).last_line = YYRHSLOC(rhs, 0).last_line;   \
            (cur).first_column = (cur).last_column = YYRHSLOC(rhs, 0).last_column; \
            (cur).begin = (cur).end = YYRHSLOC(rhs, 0).end;                    \
            (cur).src = YYRHSLOC(rhs, 0).src;                                  \
        }                                                                      \
    } while (0)
}

%code provides {
int yylex(YYSTYPE *yylval, YYLTYPE *yylloc, void *scanner);
}

%param {void *scanner}
%parse-param {plc_parse_ctx *ctx}

%union {
    plc_token tok;
    plc_value *value;
    plc_pair *pair;
    plc_block *block;
}

%code {
#include <string.h>

static void yyerror(YYLTYPE *loc, void *scanner, plc_parse_ctx *ctx, const char *msg);
static plc_value *number_value(plc_parse_ctx *ctx, plc_token num, YYLTYPE loc);
static void number_add_word(plc_value *v, plc_token word, YYLTYPE loc);
static plc_pair *new_pair(plc_parse_ctx *ctx, plc_token key, YYLTYPE key_loc, bool in, plc_value *v, YYLTYPE loc);
}

%token START_FILE START_DEFINE
%token <tok> IDENT "identifier" NUMBER "number" STRING "string" UNIT "unit"
%token IN "'in'" DOTDOT "'..'" INCLUDE "'include'"
%token '=' "'='" '{' "'{'" '}' "'}'" ',' "','" '.' "'.'"

%type <tok> key block_name
%type <value> value scalar quantity set set_items range
%type <pair> pair
%type <block> block_head

%%

start
    : START_FILE file
    | START_DEFINE pair     { ctx->define = $2; }
    ;

file
    : %empty
    | file block
    | file include
    ;

include
    : INCLUDE STRING    { plc_parse_include(ctx, $2, @2, @$); }
    ;

block
    : block_head '{' pairs '}'  { $1->close_loc = @4; $1->loc.last_line = @4.last_line;
                                  $1->loc.last_column = @4.last_column; $1->loc.end = @4.end; }
    | error '}'
    ;

block_head
    : IDENT block_name {
        plc_block *b = PLC_NEW(ctx->arena, plc_block);
        b->kind = $1.text;
        b->kind_loc = @1;
        b->name = $2.text;
        b->name_loc = @2;
        b->loc = @$;
        plc_ast_add_block(ctx->ast, b);
        $$ = b;
      }
    ;

block_name
    : %empty    { $$.text = NULL; $$.len = 0; }
    | STRING    { $$ = $1; }
    ;

pairs
    : %empty
    | pairs pair    { plc_block_add_pair(ctx->ast->last_block, $2); }
    | pairs error
    ;

pair
    : key '=' value     { $$ = new_pair(ctx, $1, @1, false, $3, @$); }
    | key IN set        { $$ = new_pair(ctx, $1, @1, true, $3, @$); }
    | key IN range      { $$ = new_pair(ctx, $1, @1, true, $3, @$); }
    ;

key
    : IDENT             { $$ = $1; }
    | key '.' IDENT     { $$.text = plc_arena_printf(ctx->arena, "%s.%s", $1.text, $3.text);
                          $$.len = strlen($$.text); $$.attached = false; }
    ;

value
    : scalar
    | set
    | range
    ;

scalar
    : quantity
    | STRING    { $$ = plc_value_new(ctx->arena, PLC_VAL_STRING, @1); $$->text = $1.text; $$->text_len = $1.len; }
    | IDENT     { $$ = plc_value_new(ctx->arena, PLC_VAL_IDENT, @1); $$->text = $1.text; $$->text_len = $1.len; }
    ;

quantity
    : NUMBER            { $$ = number_value(ctx, $1, @1); }
    | NUMBER UNIT       { $$ = number_value(ctx, $1, @$); number_add_word($$, $2, @2); }
    | NUMBER UNIT UNIT  { $$ = number_value(ctx, $1, @$); number_add_word($$, $2, @2); number_add_word($$, $3, @3); }
    ;

set
    : '{' '}'               { $$ = plc_value_new(ctx->arena, PLC_VAL_SET, @$); }
    | '{' set_items '}'     { $$ = $2; $$->loc = @$; }
    | '{' set_items ',' '}' { $$ = $2; $$->loc = @$; }
    ;

set_items
    : scalar                { $$ = plc_value_new(ctx->arena, PLC_VAL_SET, @$); plc_value_set_add(ctx->arena, $$, $1); }
    | set_items ',' scalar  { $$ = $1; plc_value_set_add(ctx->arena, $$, $3); }
    ;

range
    : NUMBER DOTDOT NUMBER {
        $$ = plc_value_new(ctx->arena, PLC_VAL_RANGE, @$);
        $$->lo = number_value(ctx, $1, @1);
        $$->hi = number_value(ctx, $3, @3);
      }
    ;

%%

static plc_value *number_value(plc_parse_ctx *ctx, plc_token num, YYLTYPE loc)
{
    plc_value *v = plc_value_new(ctx->arena, PLC_VAL_NUMBER, loc);
    v->text = num.text;
    v->text_len = num.len;
    return v;
}

static void number_add_word(plc_value *v, plc_token word, YYLTYPE loc)
{
    if (v->nwords == 0) v->attached = word.attached;
    v->words[v->nwords] = word.text;
    v->word_locs[v->nwords] = loc;
    v->nwords++;
}

static plc_pair *new_pair(plc_parse_ctx *ctx, plc_token key, YYLTYPE key_loc, bool in, plc_value *v, YYLTYPE loc)
{
    plc_pair *p = PLC_NEW(ctx->arena, plc_pair);
    p->key = key.text;
    p->key_loc = key_loc;
    p->in = in;
    p->value = v;
    p->loc = loc;
    return p;
}

static void yyerror(YYLTYPE *loc, void *scanner, plc_parse_ctx *ctx, const char *msg)
{
    (void)scanner;
    plc_diag_error(ctx->diag, *loc, "%s", msg);
    ctx->syntax_errors++;
}

/* "unexpected X, expected Y or Z", plus a hint for the common mistakes */
static int yyreport_syntax_error(const yypcontext_t *pc, void *scanner, plc_parse_ctx *ctx)
{
    (void)scanner;
    enum { MAX_EXPECTED = 6 };
    yysymbol_kind_t expected[MAX_EXPECTED];
    int n = yypcontext_expected_tokens(pc, expected, MAX_EXPECTED);
    yysymbol_kind_t got = yypcontext_token(pc);
    const YYLTYPE *loc = yypcontext_location(pc);
    char msg[512];
    size_t len = 0;
    if (got == YYSYMBOL_YYEOF)
        len = (size_t)snprintf(msg, sizeof msg, "unexpected end of input");
    else
        len = (size_t)snprintf(msg, sizeof msg, "unexpected %s", yysymbol_name(got));
    if (n > 0) {
        for (int i = 0; i < n && len < sizeof msg; i++)
            len += (size_t)snprintf(msg + len, sizeof msg - len, "%s%s", i == 0 ? ", expected " : i == n - 1 ? " or " : ", ",
                                    yysymbol_name(expected[i]));
    }
    plc_diag_error(ctx->diag, *loc, "%s", msg);
    ctx->syntax_errors++;
    bool want_value = false, want_eq = false;
    for (int i = 0; i < n; i++) {
        if (expected[i] == YYSYMBOL_NUMBER) want_value = true;
        if (expected[i] == YYSYMBOL_IN) want_eq = true;
    }
    if (got == YYSYMBOL_YYUNDEF) return 0;
    if (n == 1 && expected[0] == YYSYMBOL_STRING) {
        plc_diag_hint(ctx->diag, "an include names its file in double quotes: include \"common.plan\"");
        return 0;
    }
    if (want_eq && strcmp(yysymbol_name(got), "'{'") == 0)
        plc_diag_hint(ctx->diag, "blocks do not nest; write dotted keys instead, e.g. lr.peak = 3e-4");
    else if (want_eq)
        plc_diag_hint(ctx->diag, "a pair is 'key = value' or 'key in {set}'");
    else if (want_value && got == YYSYMBOL_UNIT)
        plc_diag_hint(ctx->diag, "a number takes at most a multiplier and a unit, e.g. 4M tokens");
    else if (want_value)
        plc_diag_hint(ctx->diag, "a value is a number (with a unit), a \"string\", a name, a set {a, b} or a range lo..hi");
    return 0;
}
