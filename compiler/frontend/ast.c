/* ast.c: constructors and lookups for the syntax tree. */
#include "compiler/frontend/frontend_int.h"

#include <string.h>

plc_value *plc_value_new(plc_arena *a, plc_value_kind kind, plc_loc loc)
{
    plc_value *v = PLC_NEW(a, plc_value);
    v->kind = kind;
    v->loc = loc;
    return v;
}

void plc_value_set_add(plc_arena *a, plc_value *set, plc_value *item)
{
    /* grow by doubling; the old array stays in the arena */
    if ((set->nitems & (set->nitems - 1)) == 0) {
        int cap = set->nitems ? set->nitems * 2 : 4;
        plc_value **items = PLC_NEW_ARRAY(a, plc_value *, cap);
        if (set->nitems) memcpy(items, set->items, sizeof(*items) * (size_t)set->nitems);
        set->items = items;
    }
    set->items[set->nitems++] = item;
}

void plc_block_add_pair(plc_block *b, plc_pair *p)
{
    p->next = NULL;
    if (b->last_pair) b->last_pair->next = p;
    else b->pairs = p;
    b->last_pair = p;
}

void plc_ast_add_block(plc_ast *ast, plc_block *b)
{
    b->next = NULL;
    if (ast->last_block) ast->last_block->next = b;
    else ast->blocks = b;
    ast->last_block = b;
}

void plc_ast_add_comment(plc_arena *a, plc_ast *ast, plc_loc loc, bool own_line)
{
    if (ast->ncomments == ast->comments_cap) {
        int cap = ast->comments_cap ? ast->comments_cap * 2 : 16;
        plc_comment *c = PLC_NEW_ARRAY(a, plc_comment, cap);
        if (ast->ncomments) memcpy(c, ast->comments, sizeof(*c) * (size_t)ast->ncomments);
        ast->comments = c;
        ast->comments_cap = cap;
    }
    ast->comments[ast->ncomments].loc = loc;
    ast->comments[ast->ncomments].own_line = own_line;
    ast->ncomments++;
}

void plc_ast_add_include(plc_ast *ast, plc_include *inc)
{
    inc->next = NULL;
    if (ast->last_include) ast->last_include->next = inc;
    else ast->includes = inc;
    ast->last_include = inc;
}

bool plc_ast_owns_block(const plc_ast *ast, const plc_block *b) { return b->kind_loc.src == ast->src; }

plc_block *plc_ast_find_block(const plc_ast *ast, const char *kind)
{
    for (plc_block *b = ast->blocks; b; b = b->next)
        if (strcmp(b->kind, kind) == 0) return b;
    return NULL;
}

plc_pair *plc_block_find_pair(const plc_block *b, const char *key)
{
    for (plc_pair *p = b->pairs; p; p = p->next)
        if (strcmp(p->key, key) == 0) return p;
    return NULL;
}

const char *plc_value_source(plc_arena *a, const plc_value *v)
{
    const plc_source *s = v->loc.src;
    if (!s || v->loc.end < v->loc.begin || v->loc.end > s->len) return "";
    return plc_arena_strndup(a, s->text + v->loc.begin, v->loc.end - v->loc.begin);
}
