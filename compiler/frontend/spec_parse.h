/* spec_parse.h: runs the flex scanner and bison parser (grammar/plan.{l,y})
 * over one source, producing a plc_ast and reporting syntax errors. */
#ifndef PLC_SPEC_PARSE_H
#define PLC_SPEC_PARSE_H

#include <stdbool.h>
#include <stddef.h>

#include "compiler/frontend/ast.h"
#include "compiler/frontend/diag.h"

/* a token's text as the scanner hands it to the parser */
typedef struct plc_token {
    const char *text; /* NUL-terminated copy in the arena (strings: unescaped) */
    size_t len;
    bool attached;    /* UNIT: touches the preceding number or unit */
} plc_token;

/* shared by the scanner and the parser (flex's yyextra) */
typedef struct plc_parse_ctx {
    plc_arena *arena;
    plc_diag *diag;
    const plc_source *src;
    plc_ast *ast;
    /* position of the next byte to scan, and of the current token */
    size_t pos;
    int line, col;
    size_t tok_pos;
    int tok_line, tok_col;
    int start_token;    /* handed to the parser first: selects file or -D */
    bool separated;     /* the next unit word came after blanks */
    int syntax_errors;
    plc_pair *define;   /* START_DEFINE: the parsed `block.key = value` */
} plc_parse_ctx;

/* Reads a whole file into the arena. Returns NULL (after an error through
 * diag, or a system message) when it cannot be read or is too large. */
plc_source *plc_source_read(plc_arena *a, plc_diag *diag, const char *path);
plc_source *plc_source_from_text(plc_arena *a, const char *name, const char *text, size_t len);

/* Parses a .plan source. Returns the tree (possibly partial) and sets
 * *nerrors to the number of syntax errors. */
plc_ast *plc_parse_source(plc_arena *a, plc_diag *diag, const plc_source *src, int *nerrors);

/* Parses one override `block.key=value` (the text of -D). NULL on error. */
plc_pair *plc_parse_define(plc_arena *a, plc_diag *diag, const plc_source *src);

/* For tests: scans src into tokens (bison token numbers from plan.tab.h),
 * up to max. Returns the count; values and locations are filled. */
typedef struct plc_lexeme {
    int kind;
    plc_token tok;
    plc_loc loc;
} plc_lexeme;
int plc_lex_source(plc_arena *a, plc_diag *diag, const plc_source *src, plc_lexeme *out, int max);

#endif
