/* spec_parse.c: reads sources and drives the scanner and parser. */
#include "compiler/frontend/frontend_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan.tab.h"
#include "plan.lex.h"

/* a spec or catalog larger than this is refused rather than read */
enum { PLC_SOURCE_MAX = 256 * 1024 * 1024 };

plc_source *plc_source_from_text(plc_arena *a, const char *name, const char *text, size_t len)
{
    plc_source *s = PLC_NEW(a, plc_source);
    s->name = plc_arena_strdup(a, name);
    s->text = plc_arena_strndup(a, text, len);
    s->len = len;
    return s;
}

plc_source *plc_source_read(plc_arena *a, plc_diag *diag, const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        plc_diag_error_noloc(diag, "cannot open '%s': %s", path, strerror(errno));
        return NULL;
    }
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    if (!buf) { fclose(f); plc_diag_error_noloc(diag, "out of memory reading '%s'", path); return NULL; }
    for (;;) {
        if (len == cap) {
            if (cap >= PLC_SOURCE_MAX) {
                free(buf);
                fclose(f);
                plc_diag_error_noloc(diag, "'%s' is larger than %d MiB; not a spec", path, PLC_SOURCE_MAX >> 20);
                return NULL;
            }
            char *grown = realloc(buf, cap * 2);
            if (!grown) { free(buf); fclose(f); plc_diag_error_noloc(diag, "out of memory reading '%s'", path); return NULL; }
            buf = grown;
            cap *= 2;
        }
        errno = 0;
        size_t got = fread(buf + len, 1, cap - len, f);
        len += got;
        if (got == 0) break;
    }
    int read_errno = errno;
    bool failed = ferror(f);
    fclose(f);
    if (failed) {
        free(buf);
        plc_diag_error_noloc(diag, "cannot read '%s': %s", path, read_errno ? strerror(read_errno) : "read error");
        return NULL;
    }
    /* a UTF-8 byte-order mark, as some editors write, is not part of the spec */
    size_t skip = len >= 3 && memcmp(buf, "\xef\xbb\xbf", 3) == 0 ? 3 : 0;
    plc_source *s = plc_source_from_text(a, path, buf + skip, len - skip);
    free(buf);
    return s;
}

static int run_parser(plc_parse_ctx *ctx)
{
    yyscan_t scanner;
    if (yylex_init_extra(ctx, &scanner)) {
        plc_diag_error_noloc(ctx->diag, "cannot start the scanner");
        return 1;
    }
    YY_BUFFER_STATE buf = yy_scan_bytes(ctx->src->text, (int)ctx->src->len, scanner);
    int rc = yyparse(scanner, ctx);
    yy_delete_buffer(buf, scanner);
    yylex_destroy(scanner);
    if (rc != 0 && ctx->syntax_errors == 0) {
        /* only "memory exhausted" (bison's stack) gets here */
        plc_diag_error_noloc(ctx->diag, "%s: input too deeply nested", ctx->src->name);
        ctx->syntax_errors++;
    }
    return ctx->syntax_errors;
}

plc_ast *plc_parse_source(plc_arena *a, plc_diag *diag, const plc_source *src, int *nerrors)
{
    plc_ast *ast = PLC_NEW(a, plc_ast);
    ast->src = src;
    plc_parse_ctx ctx = {.arena = a, .diag = diag, .src = src, .ast = ast, .line = 1, .col = 1,
                         .start_token = START_FILE};
    *nerrors = run_parser(&ctx);
    return ast;
}

plc_pair *plc_parse_define(plc_arena *a, plc_diag *diag, const plc_source *src)
{
    plc_ast ast = {.src = src};
    plc_parse_ctx ctx = {.arena = a, .diag = diag, .src = src, .ast = &ast, .line = 1, .col = 1,
                         .start_token = START_DEFINE};
    if (run_parser(&ctx) != 0) return NULL;
    if (ast.ncomments) {
        plc_diag_error(diag, ast.comments[0].loc, "a comment is not allowed in an override");
        return NULL;
    }
    return ctx.define;
}
