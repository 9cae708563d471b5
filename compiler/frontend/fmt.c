/* fmt.c: prints a syntax tree in canonical form, keeping its comments. Only
 * the file's own text is printed: an include stays an include line (the
 * blocks it brings are the included file's to format). */
#include "compiler/frontend/frontend_int.h"

#include <stdlib.h>
#include <string.h>


/* ---- a growing output buffer ------------------------------------------------ */

typedef struct buf {
    char *p;
    size_t len, cap;
} buf;

static void put(buf *b, const char *s, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (b->len + n + 1 > cap) cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p) abort();
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static void puts_(buf *b, const char *s) { put(b, s, strlen(s)); }
static void pad(buf *b, size_t n) { while (n--) put(b, " ", 1); }

/* ---- comment attachment -------------------------------------------------------- */

enum { EV_HEADER, EV_PAIR, EV_CLOSE, EV_INCLUDE };
typedef struct event {
    int kind;
    size_t begin;
    plc_block *block;
    plc_pair *pair;
    plc_include *inc;
} event;

typedef struct fmt_ctx {
    plc_ast *ast;
    int tail_first, tail_n; /* comments after the last block */
    int head_n;             /* leading comments of the first item that head the file */
    int *first_lead_first;  /* the first item's (include or block) leading comments */
    int first_lead_n;
} fmt_ctx;

static int event_order(const void *a, const void *b)
{
    const event *x = a, *y = b;
    return (x->begin > y->begin) - (x->begin < y->begin);
}

static void attach_comments(fmt_ctx *f)
{
    plc_ast *ast = f->ast;
    int nev = 0;
    for (plc_block *b = ast->blocks; b; b = b->next) {
        if (!plc_ast_owns_block(ast, b)) continue;
        b->head_trail = b->close_trail = -1;
        nev += 2;
        for (plc_pair *p = b->pairs; p; p = p->next) { p->trail = -1; nev++; }
    }
    for (plc_include *i = ast->includes; i; i = i->next) {
        i->trail = -1;
        nev++;
    }
    event *ev = calloc((size_t)nev + 1, sizeof *ev);
    if (!ev) abort();
    int n = 0;
    for (plc_block *b = ast->blocks; b; b = b->next) {
        if (!plc_ast_owns_block(ast, b)) continue;
        ev[n++] = (event){EV_HEADER, b->kind_loc.begin, b, NULL, NULL};
        for (plc_pair *p = b->pairs; p; p = p->next) ev[n++] = (event){EV_PAIR, p->loc.begin, b, p, NULL};
        ev[n++] = (event){EV_CLOSE, b->close_loc.begin, b, NULL, NULL};
    }
    for (plc_include *i = ast->includes; i; i = i->next) ev[n++] = (event){EV_INCLUDE, i->loc.begin, NULL, NULL, i};
    qsort(ev, (size_t)n, sizeof *ev, event_order);
    f->tail_first = -1;
    f->tail_n = 0;
    int e = 0; /* first event starting after the current comment */
    for (int c = 0; c < ast->ncomments; c++) {
        const plc_comment *cm = &ast->comments[c];
        while (e < n && ev[e].begin < cm->loc.begin) e++;
        if (cm->own_line || e == 0) {
            if (e == n) {
                if (f->tail_first < 0) f->tail_first = c;
                f->tail_n++;
                continue;
            }
            int *first, *count;
            if (ev[e].kind == EV_HEADER) { first = &ev[e].block->lead_first; count = &ev[e].block->lead_n; }
            else if (ev[e].kind == EV_INCLUDE) { first = &ev[e].inc->lead_first; count = &ev[e].inc->lead_n; }
            else if (ev[e].kind == EV_PAIR) { first = &ev[e].pair->lead_first; count = &ev[e].pair->lead_n; }
            else { first = &ev[e].block->close_lead_first; count = &ev[e].block->close_lead_n; }
            if (*count == 0) *first = c;
            (*count)++;
        } else {
            event *prev = &ev[e - 1];
            int *slot = prev->kind == EV_HEADER  ? &prev->block->head_trail
                      : prev->kind == EV_INCLUDE ? &prev->inc->trail
                      : prev->kind == EV_PAIR    ? &prev->pair->trail
                                                 : &prev->block->close_trail;
            if (*slot >= 0) { /* cannot happen: one comment per line; keep it anyway */
                if (f->tail_first < 0) f->tail_first = c;
                f->tail_n++;
            } else {
                *slot = c;
            }
        }
    }
    /* comments above the first item (include or block), ended by a blank
     * line, head the file */
    f->head_n = 0;
    f->first_lead_first = NULL;
    f->first_lead_n = 0;
    if (n > 0) {
        int *lead_first = ev[0].kind == EV_INCLUDE ? &ev[0].inc->lead_first : &ev[0].block->lead_first;
        int lead_n = ev[0].kind == EV_INCLUDE ? ev[0].inc->lead_n : ev[0].block->lead_n;
        f->first_lead_first = lead_first;
        f->first_lead_n = lead_n;
        const char *t = ast->src->text;
        for (int i = lead_n - 1; i >= 0; i--) {
            size_t end = ast->comments[*lead_first + i].loc.end;
            size_t next = i + 1 < lead_n ? ast->comments[*lead_first + i + 1].loc.begin : ev[0].begin;
            int newlines = 0;
            for (size_t k = end; k < next; k++) newlines += t[k] == '\n';
            if (newlines > 1) { f->head_n = i + 1; break; }
        }
    }
    free(ev);
}

static void put_comment(buf *b, const plc_ast *ast, int c)
{
    const plc_loc *l = &ast->comments[c].loc;
    size_t n = l->end - l->begin;
    const char *s = ast->src->text + l->begin;
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r')) n--;
    put(b, s, n);
}

/* ---- values ------------------------------------------------------------------- */

static void put_string(buf *b, const char *s, size_t n)
{
    put(b, "\"", 1);
    for (size_t i = 0; i < n; i++) {
        switch (s[i]) {
        case '"': puts_(b, "\\\""); break;
        case '\\': puts_(b, "\\\\"); break;
        case '\n': puts_(b, "\\n"); break;
        case '\t': puts_(b, "\\t"); break;
        default: put(b, s + i, 1);
        }
    }
    put(b, "\"", 1);
}

static void put_number(buf *b, const plc_value *v)
{
    puts_(b, v->text);
    for (int i = 0; i < v->nwords; i++) {
        const char *w = v->words[i];
        size_t wl = strlen(w);
        const plc_unit *u = plc_unit_find(w, wl);
        if (i == 0 && plc_multiplier(w, wl) > 0) {
            puts_(b, w); /* 4M */
        } else if (u) {
            if (u->kind != PLC_UNIT_PERCENT) put(b, " ", 1);
            puts_(b, u->canonical);
        } else {
            /* not a unit (1f1b, or a typo): keep the spacing as written */
            if (i > 0 || !v->attached) put(b, " ", 1);
            puts_(b, w);
        }
    }
}

static void put_value(buf *b, const plc_value *v)
{
    switch (v->kind) {
    case PLC_VAL_NUMBER: put_number(b, v); break;
    case PLC_VAL_STRING: put_string(b, v->text, v->text_len); break;
    case PLC_VAL_IDENT: puts_(b, v->text); break;
    case PLC_VAL_SET:
        put(b, "{", 1);
        for (int i = 0; i < v->nitems; i++) {
            if (i) puts_(b, ", ");
            put_value(b, v->items[i]);
        }
        put(b, "}", 1);
        break;
    case PLC_VAL_RANGE:
        put_number(b, v->lo);
        puts_(b, "..");
        put_number(b, v->hi);
        break;
    }
}

/* ---- blocks --------------------------------------------------------------------- */

/* order of a key within its block: table index, unknown keys after */
static int key_rank(const plc_block_def *def, const plc_pair *p)
{
    int i = def ? plc_key_index(def, p->key) : -1;
    return i >= 0 ? i : 1 << 20;
}

typedef struct ranked_pair {
    plc_pair *p;
    int rank, seq;
} ranked_pair;

static int cmp_ranked(const void *a, const void *b)
{
    const ranked_pair *x = a, *y = b;
    if (x->rank != y->rank) return x->rank < y->rank ? -1 : 1;
    return (x->seq > y->seq) - (x->seq < y->seq);
}

static void put_leading(buf *b, const plc_ast *ast, int first, int n, const char *indent)
{
    for (int i = 0; i < n; i++) {
        puts_(b, indent);
        put_comment(b, ast, first + i);
        put(b, "\n", 1);
    }
}

static void put_block(buf *b, const plc_ast *ast, plc_block *blk, int skip_lead)
{
    put_leading(b, ast, blk->lead_first + skip_lead, blk->lead_n - skip_lead, "");
    puts_(b, blk->kind);
    if (blk->name) {
        put(b, " ", 1);
        put_string(b, blk->name, strlen(blk->name));
    }
    puts_(b, " {");
    if (blk->head_trail >= 0) {
        puts_(b, "  ");
        put_comment(b, ast, blk->head_trail);
    }
    put(b, "\n", 1);

    const plc_block_def *def = plc_block_def_find(blk->kind);
    int n = 0;
    for (plc_pair *p = blk->pairs; p; p = p->next) n++;
    ranked_pair *rp = calloc((size_t)n + 1, sizeof *rp);
    if (!rp) abort();
    n = 0;
    size_t key_w = 0;
    for (plc_pair *p = blk->pairs; p; p = p->next) {
        rp[n] = (ranked_pair){p, key_rank(def, p), n};
        if (strlen(p->key) > key_w) key_w = strlen(p->key);
        n++;
    }
    qsort(rp, (size_t)n, sizeof *rp, cmp_ranked);
    /* each pair's line without its comment, to align trailing comments */
    buf *lines = calloc((size_t)n + 1, sizeof *lines);
    if (!lines) abort();
    size_t comment_col = 0;
    for (int i = 0; i < n; i++) {
        plc_pair *p = rp[i].p;
        bool in = p->value->kind == PLC_VAL_SET || p->value->kind == PLC_VAL_RANGE;
        puts_(&lines[i], "  ");
        puts_(&lines[i], p->key);
        pad(&lines[i], key_w - strlen(p->key));
        puts_(&lines[i], in ? " in " : " = ");
        put_value(&lines[i], p->value);
        if (p->trail >= 0 && lines[i].len > comment_col) comment_col = lines[i].len;
    }
    for (int i = 0; i < n; i++) {
        plc_pair *p = rp[i].p;
        if (p->lead_n && i > 0) put(b, "\n", 1);
        put_leading(b, ast, p->lead_first, p->lead_n, "  ");
        put(b, lines[i].p, lines[i].len);
        if (p->trail >= 0) {
            pad(b, comment_col - lines[i].len + 2);
            put_comment(b, ast, p->trail);
        }
        put(b, "\n", 1);
        free(lines[i].p);
    }
    free(lines);
    free(rp);
    if (blk->close_lead_n && n > 0) put(b, "\n", 1);
    put_leading(b, ast, blk->close_lead_first, blk->close_lead_n, "  ");
    put(b, "}", 1);
    if (blk->close_trail >= 0) {
        puts_(b, "  ");
        put_comment(b, ast, blk->close_trail);
    }
    put(b, "\n", 1);
}

static int block_rank(const plc_block *blk)
{
    for (int i = 0; i < plc_nblock_defs; i++)
        if (strcmp(plc_block_defs[i].kind, blk->kind) == 0) return i;
    return 1 << 20;
}

/* the include lines, in the order written, before every block */
static void put_includes(buf *b, const plc_ast *ast, const fmt_ctx *f)
{
    for (const plc_include *i = ast->includes; i; i = i->next) {
        int skip = &i->lead_first == f->first_lead_first ? f->head_n : 0;
        put_leading(b, ast, i->lead_first + skip, i->lead_n - skip, "");
        puts_(b, "include ");
        put_string(b, i->path, strlen(i->path));
        if (i->trail >= 0) {
            puts_(b, "  ");
            put_comment(b, ast, i->trail);
        }
        put(b, "\n", 1);
    }
}

char *plc_fmt(plc_arena *a, plc_ast *ast, size_t *len)
{
    fmt_ctx f = {.ast = ast};
    attach_comments(&f);
    buf b = {0};
    put(&b, "", 0);
    int n = 0;
    for (plc_block *blk = ast->blocks; blk; blk = blk->next) n += plc_ast_owns_block(ast, blk);
    ranked_pair *order = calloc((size_t)n + 1, sizeof *order); /* .p unused: blocks by seq */
    plc_block **blocks = calloc((size_t)n + 1, sizeof *blocks);
    if (!order || !blocks) abort();
    n = 0;
    for (plc_block *blk = ast->blocks; blk; blk = blk->next) {
        if (!plc_ast_owns_block(ast, blk)) continue;
        blocks[n] = blk;
        order[n] = (ranked_pair){NULL, block_rank(blk), n};
        n++;
    }
    qsort(order, (size_t)n, sizeof *order, cmp_ranked);
    if (f.head_n) {
        put_leading(&b, ast, *f.first_lead_first, f.head_n, "");
        put(&b, "\n", 1);
    }
    put_includes(&b, ast, &f);
    for (int i = 0; i < n; i++) {
        plc_block *blk = blocks[order[i].seq];
        if (i > 0 || ast->includes) put(&b, "\n", 1);
        put_block(&b, ast, blk, &blk->lead_first == f.first_lead_first ? f.head_n : 0);
    }
    if (f.tail_n) {
        if (n > 0 || ast->includes) put(&b, "\n", 1);
        put_leading(&b, ast, f.tail_first, f.tail_n, "");
    }
    free(order);
    free(blocks);
    char *out = plc_arena_strndup(a, b.p, b.len);
    *len = b.len;
    free(b.p);
    return out;
}
