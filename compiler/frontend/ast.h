/* ast.h: the syntax tree of a .plan file, allocated in an arena.
 *
 * A file is a list of blocks; a block (`model "name" { ... }`) is a list of
 * pairs; a pair is `key = value` or `key in {set}` / `key in lo..hi`. Keys
 * may be dotted (`lr.peak`). Values keep their source spelling so that fmt
 * can print them back and resolve can point at them. */
#ifndef PLC_AST_H
#define PLC_AST_H

#include <stdbool.h>
#include <stddef.h>

#include "compiler/frontend/diag.h"
#include "plc/arena.h"

typedef enum plc_value_kind {
    PLC_VAL_NUMBER, /* 80, 1.5, 3e-4, with optional multiplier/unit words */
    PLC_VAL_STRING, /* "A100-SXM4-80GB" */
    PLC_VAL_IDENT,  /* auto, on, bf16, ... */
    PLC_VAL_SET,    /* {a, b, c} */
    PLC_VAL_RANGE   /* lo..hi */
} plc_value_kind;

#define PLC_MAX_UNIT_WORDS 2

typedef struct plc_value {
    plc_value_kind kind;
    plc_loc loc;
    const char *text; /* NUMBER: the digits; STRING: unescaped contents; IDENT: the name */
    size_t text_len;  /* STRING contents may hold NUL bytes */
    /* NUMBER: multiplier and unit words after the number */
    int nwords;
    const char *words[PLC_MAX_UNIT_WORDS];
    plc_loc word_locs[PLC_MAX_UNIT_WORDS];
    bool attached; /* the first word touches the number (80GiB, 4M, 1f1b) */
    /* SET */
    struct plc_value **items;
    int nitems;
    /* RANGE */
    struct plc_value *lo, *hi;
} plc_value;

typedef struct plc_pair {
    const char *key; /* dotted keys joined: "lr.peak" */
    plc_loc key_loc;
    bool in;         /* written `key in ...` */
    plc_value *value;
    plc_loc loc;     /* the whole pair */
    bool overridden; /* value replaced by a -D override */
    /* comments attached by fmt: own-line ones above, one at the line's end */
    int lead_first, lead_n, trail;
    struct plc_pair *next;
} plc_pair;

typedef struct plc_block {
    const char *kind; /* model, cluster, train, layout, ... */
    plc_loc kind_loc;
    const char *name; /* model "name"; NULL when absent */
    plc_loc name_loc;
    plc_loc loc;      /* header through closing brace */
    plc_loc close_loc;
    plc_pair *pairs, *last_pair;
    /* comments attached by fmt: above the header, after '{', above and after '}' */
    int lead_first, lead_n, head_trail, close_lead_first, close_lead_n, close_trail;
    struct plc_block *next;
} plc_block;

typedef struct plc_comment {
    plc_loc loc;      /* from '#' to the end of the line */
    bool own_line;    /* nothing but blanks before it on its line */
} plc_comment;

typedef struct plc_ast {
    const plc_source *src;
    plc_block *blocks, *last_block;
    plc_comment *comments;
    int ncomments, comments_cap;
} plc_ast;

plc_value *plc_value_new(plc_arena *a, plc_value_kind kind, plc_loc loc);
void plc_value_set_add(plc_arena *a, plc_value *set, plc_value *item);
void plc_block_add_pair(plc_block *b, plc_pair *p);
void plc_ast_add_block(plc_ast *ast, plc_block *b);
void plc_ast_add_comment(plc_arena *a, plc_ast *ast, plc_loc loc, bool own_line);

/* the block of this kind (the first one), or NULL */
plc_block *plc_ast_find_block(const plc_ast *ast, const char *kind);
/* the pair with this key in b (the first one), or NULL */
plc_pair *plc_block_find_pair(const plc_block *b, const char *key);

/* a value's source text exactly as written (from its location) */
const char *plc_value_source(plc_arena *a, const plc_value *v);

#endif
