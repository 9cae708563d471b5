/* compiler/frontend/frontend.h: the frontend stage's public interface, what the other stages,
 * the tools and the tests may use; the sections below are named after the
 * files that implement them. Internal helpers: frontend_int.h. */
#ifndef PLC_COMPILER_FRONTEND_H
#define PLC_COMPILER_FRONTEND_H

/* ---- diag.c ---------------------------------------------------------------- */
/* compiler-style diagnostics shared by the .plan front end and the
 * YAML catalog reader:
 *
 *   file:line:col: error: message
 *       3 | source line
 *         |   ^~~~~
 *     hint: ...
 *
 * Locations are 1-based lines and columns (a tab counts as one column) plus
 * byte offsets into the source, which is how the printer finds the line. */

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "plc/arena.h"

/* one input text: a spec file, a catalog, or a -D override (<command line>) */
typedef struct plc_source {
    const char *name; /* as shown in diagnostics */
    const char *text; /* NUL-terminated; may contain NUL bytes before len */
    size_t len;
    /* a file a spec includes: the include line's place (an error in the file
     * is preceded by "In file included from" it); NULL otherwise */
    const struct plc_loc *included_at;
} plc_source;

/* a span [begin, end) of a source; last_column is one past the last column */
typedef struct plc_loc {
    int first_line, first_column, last_line, last_column;
    size_t begin, end;
    const plc_source *src;
} plc_loc;

typedef struct plc_diag_entry plc_diag_entry;

typedef struct plc_diag {
    FILE *out;        /* where diagnostics go (while deferring: the current entry) */
    int errors, warnings;
    int max_errors;   /* printing stops after this many errors */
    bool muted;       /* the last error/warning was not printed: drop its notes too */
    bool capped;      /* "too many errors" was printed */
    int printed_errors;
    /* deferred mode: diagnostics are kept and printed sorted by place */
    FILE *sink;
    const plc_source *primary;
    plc_diag_entry *entries;
    int nentries, cap_entries;
    char *cur_text;
    size_t cur_len;
} plc_diag;

enum { PLC_DIAG_DEFAULT_MAX_ERRORS = 20 };

void plc_diag_init(plc_diag *d, FILE *out, int max_errors);

/* From defer to flush, diagnostics are held back and then printed in the
 * order of their place, so that checks running in any order still report top
 * to bottom: those in `primary` (the spec) first, then each other source
 * (overrides, the catalog) in the order of its first diagnostic. */
void plc_diag_defer(plc_diag *d, const plc_source *primary);
void plc_diag_flush(plc_diag *d);

void plc_diag_error(plc_diag *d, plc_loc loc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void plc_diag_warning(plc_diag *d, plc_loc loc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* a note with its own location (e.g. "first defined here") */
void plc_diag_note(plc_diag *d, plc_loc loc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* a note of its own, not under an error or warning ("FILE:L:C: note: ...",
 * in place; hints may follow): what plc read where a value has two
 * readings. Counted neither as an error nor as a warning. */
void plc_diag_info(plc_diag *d, plc_loc loc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* "  hint: ..." under the last error or warning */
void plc_diag_hint(plc_diag *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* an error with no place in a source: "plc: error: ..." */
void plc_diag_error_noloc(plc_diag *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* an error about a whole source: "file: error: ..." */
void plc_diag_error_file(plc_diag *d, const plc_source *src, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* user text made safe to quote in a message: at most 40 bytes (then "..."),
 * control bytes shown as '?'. Allocated in *a. */
const char *plc_diag_quote(plc_arena *a, const char *s, size_t len);

/* location of the byte range [begin, end) of src, computed by scanning */
plc_loc plc_loc_of_range(const plc_source *src, size_t begin, size_t end);

/* ---- ast.c ----------------------------------------------------------------- */
/* the syntax tree of a .plan file, allocated in an arena.
 *
 * A file is a list of blocks; a block (`model "name" { ... }`) is a list of
 * pairs; a pair is `key = value` or `key in {set}` / `key in lo..hi`. Keys
 * may be dotted (`lr.peak`). Values keep their source spelling so that fmt
 * can print them back and resolve can point at them. */

#include <stdbool.h>
#include <stddef.h>

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

/* `include "path"` at the top level of a file: the blocks of the file it
 * names (a path relative to the including file's directory) join the
 * including file's at that place, as if written there, each keeping its
 * own locations (so diagnostics point into the included file) */
typedef struct plc_include {
    const char *path;      /* as written */
    plc_loc path_loc, loc; /* the string; the whole line */
    const plc_source *src; /* the file read; NULL when it could not be */
    /* comments attached by fmt: above it, at the line's end */
    int lead_first, lead_n, trail;
    struct plc_include *next;
} plc_include;

/* A parsed file. blocks holds the blocks of its includes too, in order (a
 * block is the file's own when its kind_loc.src is src); includes and
 * comments are the file's own only. */
typedef struct plc_ast {
    const plc_source *src;
    plc_block *blocks, *last_block;
    plc_include *includes, *last_include;
    plc_comment *comments;
    int ncomments, comments_cap;
} plc_ast;

plc_value *plc_value_new(plc_arena *a, plc_value_kind kind, plc_loc loc);
void plc_value_set_add(plc_arena *a, plc_value *set, plc_value *item);
void plc_block_add_pair(plc_block *b, plc_pair *p);
void plc_ast_add_block(plc_ast *ast, plc_block *b);
void plc_ast_add_comment(plc_arena *a, plc_ast *ast, plc_loc loc, bool own_line);
void plc_ast_add_include(plc_ast *ast, plc_include *inc);
/* whether b was written in the file of ast (not in one it includes) */
bool plc_ast_owns_block(const plc_ast *ast, const plc_block *b);

/* the block of this kind (the first one), or NULL */
plc_block *plc_ast_find_block(const plc_ast *ast, const char *kind);
/* the pair with this key in b (the first one), or NULL */
plc_pair *plc_block_find_pair(const plc_block *b, const char *key);

/* a value's source text exactly as written (from its location) */
const char *plc_value_source(plc_arena *a, const plc_value *v);

/* ---- fmt.c ----------------------------------------------------------------- */
/* the canonical form of a .plan file (plc fmt).
 *
 * Blocks in the order model, cluster, train, layout (unknown blocks after, as
 * written); keys in the order of spec_keys.c (unknown keys after, as
 * written); one pair per line, two-space indent, '=' aligned within a block;
 * sets and ranges written with `in`; multipliers attached (4M), units after
 * one space (80 GiB) except % (80%), unit spellings canonical (Gb/s ->
 * Gbit/s); numbers and names kept as written. Comments are kept: a comment on
 * its own line stays above the pair or block that follows it, a comment at
 * the end of a line stays at the end of that pair's line (aligned within the
 * block). One blank line between blocks, and above a commented pair. */

#include <stddef.h>

/* the canonical text of ast (which must have parsed without errors) */
char *plc_fmt(plc_arena *a, plc_ast *ast, size_t *len);

/* ---- paths.c --------------------------------------------------------------- */
/* the front end's file names, decided in one place.
 *
 * Two rules live here. A file named in a spec (a token file, a catalog) is
 * made absolute against a directory and normalised lexically ("." and ".."
 * removed, repeated slashes folded; symbolic links are not followed); a
 * token file's path is then stored relative to the spec's directory
 * (plc_path_relative), so what a plan stores depends neither on the working
 * directory plc ran in nor on where the checkout lies. The
 * built-in hardware catalog (and the engine profiles beside it,
 * engines.yaml) is found relative to the running program, never through a
 * path fixed at build time:
 *
 *   PROGRAM_DIR/../share/plc/catalog.yaml        installed (make install)
 *   PROGRAM_DIR/PLC_TREE_DATADIR/catalog.yaml    in the build tree
 *
 * PLC_TREE_DATADIR is the relative path from the build's bin/ to examples/
 * (the Makefile passes it; "../examples" for bin/plc). */

#include <stdint.h>

#include "plc/arena.h"

/* "/a//b/./c/../d" -> "/a/b/d" (no file system access); path is absolute */
const char *plc_path_normalise(plc_arena *a, const char *path);

/* path made absolute against dir, itself taken against the working directory
 * when relative (dir NULL or "": the working directory), then normalised.
 * NULL when the working directory cannot be read. */
const char *plc_path_absolute(plc_arena *a, const char *dir, const char *path);

/* to relative to the directory from, both absolute and normalised (no file
 * system access): ("/a/b", "/a/c/d") -> "../c/d", ("/a", "/a/x") -> "x",
 * ("/a", "/a") -> "." */
const char *plc_path_relative(plc_arena *a, const char *from, const char *to);

/* the part after the last '/' ("x.plan" for "specs/x.plan") */
const char *plc_path_base(const char *path);

/* The built-in catalog beside the running program, or NULL when none of the
 * places above holds one; *tried is set to the places looked at, as text for
 * a message ("A, B"). */
const char *plc_builtin_catalog(plc_arena *a, const char **tried);
/* the same for any data file installed beside the catalog ("engines.yaml") */
const char *plc_builtin_data(plc_arena *a, const char *name, const char **tried);

/* The engine profiles file, looked for in this order: $PLC_ENGINES (returned
 * as it is), engines.yaml in the directory of catalog (the catalog named by
 * --catalog or $PLC_CATALOG; NULL: none), then the built-in engines.yaml
 * beside the program (the places above). NULL when none is found, with
 * *tried set to the places looked at. */
const char *plc_engines_find(plc_arena *a, const char *catalog, const char **tried);

/* CRC-32 (zlib's, common/crc32.h) of a whole file: 0, or -1 when it cannot
 * be read */
int plc_file_crc32(const char *path, uint32_t *crc);

/* ---- engines.c (the profiles' one lookup) ----------------------------------- */
#include "plc/job.h"

/* The profile of engine e from the engine profiles file (plc_engines_find:
 * $PLC_ENGINES, beside catalog, then built in; docs/engines.md). What a
 * spec's train.engine gets and what plc export checks a layout against.
 * Returns 0, or the number of errors reported on d; a file without that
 * profile is reported at *at (the spec's train.engine) when at is not NULL. */
int plc_engine_profile_load(plc_arena *a, plc_diag *d, plc_engine e, const plc_loc *at, const char *catalog,
                            plc_engine_profile *out);

/* ---- resolve.c ------------------------------------------------------------- */
/* from the syntax tree (plus the hardware catalog) to a plc_job:
 * every key checked against its block's table (spec_keys.c), units converted
 * to SI, defaults filled in, and the contradictions that the spec alone
 * shows reported.
 *
 * Defaults (also in docs/language.md):
 *
 *   model    kv_heads = heads, tie_embeddings = off, norm_eps = 1e-5,
 *            rope_theta = 10000
 *   cluster  nodes = 1, gpus_per_node = 8, catalog: see spec.c;
 *            every catalog figure can be overridden here
 *   train    precision = bf16, seed = 1, data = synthetic, optimizer = adamw,
 *            adamw.beta1 = 0.9, adamw.beta2 = 0.95, adamw.eps = 1e-8,
 *            adamw.weight_decay = 0.1, lr.peak = 3e-4, lr.floor = lr.peak/10,
 *            lr.warmup = 0, lr.decay_steps = steps, grad_clip = 1.0
 *   layout   every dimension auto, memory_limit = 100%, objective = time
 *
 * Required: model layers hidden ffn_hidden heads vocab seq_len; cluster gpu;
 * train global_batch steps. The layout block is optional. */

#include "plc/job.h"

typedef struct plc_resolve_opts {
    const char *catalog_path; /* --catalog or $PLC_CATALOG, NULL if neither */
    const char *spec_dir;     /* directory of the spec ("" for the cwd) */
    bool read_data;           /* read the whole token file (plc_spec_opts) */
} plc_resolve_opts;

/* Fills *job from the tree. Returns the number of errors reported. */
int plc_resolve(plc_arena *a, plc_diag *d, const plc_ast *ast, const plc_resolve_opts *o, plc_job *job);

/* ---- spec.c ---------------------------------------------------------------- */
/* the front end's one entry point: a .plan file (plus -D overrides
 * and the hardware catalog) in, a resolved plc_job out.
 *
 * Diagnostics (file:line:col: error: ..., source line, caret) are printed to
 * stderr as they are found; every error of the file is reported (capped),
 * then plc_spec_load returns the number of errors (0 on success). */

#include "plc/arena.h"
#include "plc/job.h"

#define PLC_MAX_DEFINES 64

typedef struct plc_spec_opts {
    const char *catalog_path; /* --catalog FILE; NULL: PLC_CATALOG, the spec's
                                 cluster.catalog, then the built-in catalog */
    const char *defines[PLC_MAX_DEFINES]; /* "block.key=value" from -D */
    int ndefines;
    int max_errors; /* 0: the default cap */
    bool read_data; /* read the whole token file of train.data: its size and
                       CRC-32 into the job, its largest token checked (plc
                       compile, plc check); otherwise only its header */
} plc_spec_opts;

/* Removes the spec options (-D X, -DX, --catalog FILE) from argv, compacting
 * it and updating *argc; fills *opts. Returns 0, or 1 after printing an
 * error (too many -D, missing argument). */
int plc_spec_take_options(int *argc, char **argv, plc_spec_opts *opts);

/* One line of help text describing the options above, for --help texts. */
extern const char plc_spec_options_help[];

/* Loads, resolves and checks a spec. Everything in *job is allocated in *a. */
int plc_spec_load(plc_arena *a, const char *path, const plc_spec_opts *opts, plc_job *job);

/* ---- spec.c, continued ------------------------------------------------------ */
/* plc_spec_load with the caller's diagnostics sink, so that a
 * command can count warnings too (plc check) or capture output (tests). */

/* Loads path with opts into *job, reporting through d. Returns the number of
 * errors found. */
int plc_spec_load_diag(plc_arena *a, const char *path, const plc_spec_opts *opts, plc_job *job, plc_diag *d);

/* Applies the -D overrides to a parsed tree: each replaces the value of its
 * key, or adds the pair (and the block) when absent. Returns the number of
 * errors (syntax errors in an override, a missing block part). */
int plc_spec_apply_defines(plc_arena *a, plc_diag *d, plc_ast *ast, const char *const *defines, int n);

/* ---- spec_parse.c ---------------------------------------------------------- */
/* runs the flex scanner and bison parser (grammar/plan.{l,y})
 * over one source, producing a plc_ast and reporting syntax errors. */

#include <stdbool.h>
#include <stddef.h>

/* a token's text as the scanner hands it to the parser */
typedef struct plc_token {
    const char *text; /* NUL-terminated copy in the arena (strings: unescaped) */
    size_t len;
    bool attached;    /* UNIT: touches the preceding number or unit */
} plc_token;

/* the files being parsed, innermost first: what an include may not name again */
typedef struct plc_include_frame {
    const char *path; /* absolute, normalised */
    const char *name; /* as shown */
    const struct plc_include_frame *outer;
} plc_include_frame;

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
    const plc_include_frame *files; /* this file and the ones including it */
    int depth;          /* includes between the spec and this file */
} plc_parse_ctx;

/* the parser's action for `include "path"` (path_loc: the string, loc: the
 * line): reads the file relative to the including file's directory, parses
 * it and appends its blocks to ctx->ast; a missing or unreadable file, a
 * cycle, or too deep a nesting is an error at the include */
void plc_parse_include(plc_parse_ctx *ctx, plc_token path, plc_loc path_loc, plc_loc loc);

/* Reads a whole file into the arena. Returns NULL (after an error through
 * diag, or a system message) when it cannot be read or is too large. */
plc_source *plc_source_read(plc_arena *a, plc_diag *diag, const char *path);
plc_source *plc_source_from_text(plc_arena *a, const char *name, const char *text, size_t len);

/* Parses a .plan source, and the files it includes. Returns the tree
 * (possibly partial) and sets *nerrors to the number of syntax errors
 * (include errors among them). */
plc_ast *plc_parse_source(plc_arena *a, plc_diag *diag, const plc_source *src, int *nerrors);

/* Parses one override `block.key=value` (the text of -D). NULL on error. */
plc_pair *plc_parse_define(plc_arena *a, plc_diag *diag, const plc_source *src);

/* For tests: scans src into tokens (bison token numbers from the generated
 * build/gen/plan.tab.h),
 * up to max. Returns the count; values and locations are filled. */
typedef struct plc_lexeme {
    int kind;
    plc_token tok;
    plc_loc loc;
} plc_lexeme;
int plc_lex_source(plc_arena *a, plc_diag *diag, const plc_source *src, plc_lexeme *out, int max);

#endif
