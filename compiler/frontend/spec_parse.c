/* spec_parse.c: reads sources and drives the scanner and parser, and
 * follows a spec's includes: each included file is parsed on its own (its
 * own scanner, its own locations) and its blocks join the including file's
 * tree where the include stands. */
#include "compiler/frontend/frontend_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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

/* how many files deep includes may nest (a spec, its shared blocks, theirs...) */
enum { PLC_INCLUDE_DEPTH_MAX = 16 };

plc_ast *plc_parse_source(plc_arena *a, plc_diag *diag, const plc_source *src, int *nerrors)
{
    plc_ast *ast = PLC_NEW(a, plc_ast);
    ast->src = src;
    const char *abs = plc_path_absolute(a, NULL, src->name);
    plc_include_frame self = {abs ? abs : src->name, src->name, NULL};
    plc_parse_ctx ctx = {.arena = a, .diag = diag, .src = src, .ast = ast, .line = 1, .col = 1,
                         .start_token = START_FILE, .files = &self};
    *nerrors = run_parser(&ctx);
    return ast;
}

/* "a.plan -> common.plan -> a.plan": the chain from the outermost file to
 * this one, then the file named again */
static const char *cycle_text(plc_arena *a, const plc_include_frame *f, const char *again)
{
    const char *text = again;
    for (; f; f = f->outer) text = plc_arena_printf(a, "%s -> %s", f->name, text);
    return text;
}

/* a relative name with "dir/.." steps taken out, as shown in messages
 * ("included/../a.plan" -> "a.plan"); kept as it is when a step would climb
 * above its start */
static const char *tidy_name(plc_arena *a, const char *name)
{
    if (name[0] == '/') return plc_path_normalise(a, name);
    int depth = 0;
    for (const char *p = name; *p;) {
        const char *end = strchr(p, '/');
        size_t k = end ? (size_t)(end - p) : strlen(p);
        if (k == 2 && p[0] == '.' && p[1] == '.') {
            if (--depth < 0) return name;
        } else if (k && !(k == 1 && p[0] == '.')) {
            depth++;
        }
        p += k + (end != NULL);
    }
    return plc_path_normalise(a, plc_arena_printf(a, "/%s", name)) + 1;
}

void plc_parse_include(plc_parse_ctx *ctx, plc_token path, plc_loc path_loc, plc_loc loc)
{
    plc_arena *a = ctx->arena;
    plc_include *inc = PLC_NEW(a, plc_include);
    inc->path = path.text;
    inc->path_loc = path_loc;
    inc->loc = loc;
    inc->lead_first = inc->lead_n = 0;
    inc->trail = -1;
    plc_ast_add_include(ctx->ast, inc);
    if (path.len == 0 || strlen(path.text) != path.len) {
        plc_diag_error(ctx->diag, path_loc, "an include names a file: a non-empty path without NUL bytes");
        ctx->syntax_errors++;
        return;
    }
    /* relative to the including file's directory, shown as such */
    const char *name = path.text;
    const char *slash = strrchr(ctx->src->name, '/');
    if (name[0] != '/' && slash)
        name = plc_arena_printf(a, "%.*s/%s", (int)(slash - ctx->src->name), ctx->src->name, path.text);
    name = tidy_name(a, name);
    const char *abs = plc_path_absolute(a, NULL, name);
    if (!abs) abs = name;
    for (const plc_include_frame *f = ctx->files; f; f = f->outer) {
        if (strcmp(f->path, abs) != 0) continue;
        plc_diag_error(ctx->diag, path_loc, "include cycle: %s", cycle_text(a, ctx->files, name));
        plc_diag_hint(ctx->diag, "a file may not include itself, directly or through the files it includes");
        ctx->syntax_errors++;
        return;
    }
    if (ctx->depth + 1 > PLC_INCLUDE_DEPTH_MAX) {
        plc_diag_error(ctx->diag, path_loc, "includes nest more than %d files deep", PLC_INCLUDE_DEPTH_MAX);
        ctx->syntax_errors++;
        return;
    }
    struct stat st;
    int failed = stat(name, &st), why = errno;
    if (failed || !S_ISREG(st.st_mode)) { /* a directory or a FIFO is no spec, and could block */
        plc_diag_error(ctx->diag, path_loc, "cannot include '%s': %s", plc_diag_quote(a, name, strlen(name)),
                       failed ? strerror(why) : "not a regular file");
        if (failed && (why == ENOENT || why == ENOTDIR) && path.text[0] != '/')
            plc_diag_hint(ctx->diag, "an include path is relative to the directory of the file that holds it");
        ctx->syntax_errors++;
        return;
    }
    plc_source *src = plc_source_read(a, ctx->diag, name);
    if (!src) {
        ctx->syntax_errors++;
        return;
    }
    src->included_at = &inc->loc;
    inc->src = src;
    /* the included file on its own: its blocks then join this file's tree */
    plc_ast *sub = PLC_NEW(a, plc_ast);
    sub->src = src;
    plc_include_frame frame = {abs, name, ctx->files};
    plc_parse_ctx sctx = {.arena = a, .diag = ctx->diag, .src = src, .ast = sub, .line = 1, .col = 1,
                          .start_token = START_FILE, .files = &frame, .depth = ctx->depth + 1};
    ctx->syntax_errors += run_parser(&sctx);
    for (plc_block *b = sub->blocks, *next; b; b = next) {
        next = b->next;
        plc_ast_add_block(ctx->ast, b);
    }
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
