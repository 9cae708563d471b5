/* compiler/frontend/frontend_int.h: the frontend stage's internal interface, for its own files
 * (and unit tests): the public header plus what only the stage uses. */
#ifndef PLC_COMPILER_FRONTEND_INT_H
#define PLC_COMPILER_FRONTEND_INT_H

#include "compiler/frontend/frontend.h"

/* ---- data_file.c ------------------------------------------------------------ */
/* Checks the token file of train.data (written: the path as the spec or -D
 * wrote it, for messages; open_path: where plc reads it) as plrun will;
 * m is NULL when the model block has errors (the checks against the model
 * are left out). With read_all the whole file is read and its size and
 * CRC-32 are stored in t->data_size and t->data_crc32. Errors point at at. */
#include <stdbool.h>
void plc_data_file_check(plc_diag *d, plc_loc at, const char *written, const char *open_path, const plc_model *m,
                         bool read_all, plc_train *t);

/* ---- catalog.c ------------------------------------------------------------- */
/* the hardware catalog, a YAML file (read with libyaml) mapping
 * entry names to figures:
 *
 *   A100-SXM4-80GB:
 *     memory: 80 GiB
 *     bf16_flops: 312 TFLOPS
 *     ...
 *
 * Every key of PLC_HW_FIELDS (plc/job.h) is required in every entry, written
 * with a unit of its kind. Errors are reported as catalog.yaml:line:col. */

#include "plc/arena.h"
#include "plc/job.h"

#include <stddef.h>

typedef struct plc_catalog {
    const plc_source *src;
    plc_hw *entries;
    int n;
} plc_catalog;

/* Reads and checks a catalog file. Returns the number of errors reported. */
int plc_catalog_load(plc_arena *a, plc_diag *d, const char *path, plc_catalog *out);
/* Same, from text already in memory (name is used in messages). */
int plc_catalog_parse(plc_arena *a, plc_diag *d, const plc_source *src, plc_catalog *out);

/* the figures of plc_hw, from PLC_HW_FIELDS: key, unit kind, offset */
typedef struct plc_hw_field {
    const char *key;
    int unit;
    size_t offset;
} plc_hw_field;
extern const plc_hw_field plc_hw_fields[];
extern const int plc_nhw_fields;

const plc_hw *plc_catalog_find(const plc_catalog *c, const char *name);
/* "A100-SXM4-40GB, A100-SXM4-80GB, ..." */
const char *plc_catalog_names(plc_arena *a, const plc_catalog *c);

/* ---- engines.c ------------------------------------------------------------- */
/* the engine profiles, a YAML file beside the hardware catalog
 * (examples/engines.yaml, installed as share/plc/engines.yaml) read with
 * libyaml. One profile per engine of train.engine:
 *
 *   megatron:
 *     describes: Megatron-Core r0.8 profile
 *     tp_overlap: {value: 1, source: "..."}      # every PLC_ENGINE_FIGURES key
 *     ...
 *     runs:                                      # optional, per layout key
 *       schedule: {values: [1f1b, interleaved], source: "..."}
 *
 * Every figure is required, each with a non-empty source; `runs` names the
 * values of a layout dimension (sp, schedule, recompute, zero, attention,
 * fused_rmsnorm) the engine can run, spelled as in .plan files, with its
 * source; a dimension it does not name runs every value. Errors are reported
 * as engines.yaml:line:col, like the catalog's. */

#include "plc/arena.h"
#include "plc/job.h"

typedef struct plc_engine_set {
    const plc_source *src;
    bool has[PLC_ENGINE_COUNT];
    plc_engine_profile profile[PLC_ENGINE_COUNT];
} plc_engine_set;

/* Reads and checks a profiles file. Returns the number of errors reported. */
int plc_engines_load(plc_arena *a, plc_diag *d, const char *path, plc_engine_set *out);
/* Same, from text already in memory. */
int plc_engines_parse(plc_arena *a, plc_diag *d, const plc_source *src, plc_engine_set *out);

/* ---- spec_checks.c --------------------------------------------------------- */
/* contradictions visible in the spec alone, across blocks:
 * a fixed tp that does not divide heads, fixed degrees that do not divide
 * the GPU count, a token batch that is not whole sequences, ... */

#include <stdbool.h>

#include "plc/job.h"

typedef struct plc_spec_facts {
    /* NULL when the block is absent. A block with errors is still here: a
     * check runs when every value it reads is good (not in bad[]), so that
     * one run reports every independent error */
    const plc_model *model;
    const plc_cluster *cluster;
    bool hw_known;    /* the cluster's GPU figures (catalog entry and overrides) are good */
    plc_train *train; /* global_batch given in tokens is converted here */
    const plc_layout_spec *layout;
    bool batch_in_tokens;
    /* a token count written with k, M or G read the binary way (4M tokens:
     * 4 x 2^20), when that is whole; 0 otherwise */
    int64_t batch_tokens_binary;
    const plc_engine_profile *engine; /* train.engine's profile; NULL when unknown */
    plc_engine engine_id;
    /* for locations; NULL when absent */
    const plc_block *model_block, *cluster_block, *train_block, *layout_block;
    /* bit k of bad[b]: key k of plc_block_defs[b] (model, cluster, train,
     * layout, ...) is missing or its value had an error */
    uint64_t bad[8];
} plc_spec_facts;

void plc_spec_check(plc_arena *a, plc_diag *d, plc_spec_facts *f);

/* "1, 2, 3, 4, 6, 12": the divisors of n (at most 32 shown) */
const char *plc_divisors_text(plc_arena *a, int64_t n);

/* ---- spec_keys.c ----------------------------------------------------------- */
/* the blocks and keys of the .plan language, in canonical
 * order. resolve.c checks pairs against these tables and fmt.c prints keys
 * in this order, so this is the one place a key is added. */

#include <stdbool.h>

typedef enum plc_key_type {
    PLC_KEY_INT,        /* a whole number (k/M/G multipliers allowed) */
    PLC_KEY_REAL,       /* a plain number such as 1e-5 */
    PLC_KEY_QUANTITY,   /* a number with a unit of kind `unit` */
    PLC_KEY_ENUM,       /* one name of `names` */
    PLC_KEY_BOOL,       /* on/off/true/false */
    PLC_KEY_STRING,     /* "text" */
    PLC_KEY_DATA,       /* synthetic or "path" */
    PLC_KEY_BATCH,      /* sequences, or a token count (4M tokens) */
    PLC_KEY_CHOICE_INT, /* layout: auto, n, {set}, lo..hi */
    PLC_KEY_CHOICE_ENUM,
    PLC_KEY_CHOICE_BOOL
} plc_key_type;

typedef struct plc_key_def {
    const char *name;
    plc_key_type type;
    int unit;                 /* PLC_KEY_QUANTITY: plc_unit_kind */
    const char *const *names; /* ENUM kinds: the spellings, NULL-terminated */
    bool required;
    const char *doc;          /* one line, for hints */
} plc_key_def;

typedef struct plc_block_def {
    const char *kind;
    bool named;    /* takes a "name" after the kind */
    bool required;
    const plc_key_def *keys;
    int nkeys;
} plc_block_def;

extern const plc_block_def plc_block_defs[];
extern const int plc_nblock_defs;

const plc_block_def *plc_block_def_find(const char *kind);
/* index of key in def, or -1 */
int plc_key_index(const plc_block_def *def, const char *key);

/* the candidate closest to word by edit distance (at most 1/3 of its length,
 * and at least 1), or NULL */
const char *plc_suggest(const char *word, const char *const *cands, int n);
const char *plc_suggest_key(const plc_block_def *def, const char *key);

/* ", "-joined names (enum values, keys) in a static-free arena string */
#include "plc/arena.h"
const char *plc_join_names(plc_arena *a, const char *const *names, int n);

/* the enum spellings are in plc/job.h (common/job.c) */
extern const char *const plc_optimizer_names[];

/* ---- units.c --------------------------------------------------------------- */
/* numbers, multipliers and units of .plan files and the catalog.
 *
 * A quantity is a number, an optional multiplier (k M G) and an optional
 * unit: `80 GiB`, `200 Gbit/s`, `4M tokens`, `80%`, `5 us`. Values are
 * converted to SI base units (bytes, bytes/s, FLOP/s, seconds, fractions). */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "plc/job.h"

/* A unit kind beyond plc_unit_kind: token counts, only for train.global_batch. */
#define PLC_UNIT_TOKENS ((int)PLC_UNIT_KIND_COUNT)

typedef struct plc_unit {
    const char *name;      /* spelling as written */
    const char *canonical; /* spelling plc fmt writes */
    int kind;              /* plc_unit_kind or PLC_UNIT_TOKENS */
    double factor;         /* to SI base units */
} plc_unit;

/* the unit spelled exactly s[0..len), or NULL */
const plc_unit *plc_unit_find(const char *s, size_t len);
/* the multiplier k, M or G spelled s[0..len) (1e3, 1e6, 1e9), or 0 */
double plc_multiplier(const char *s, size_t len);
/* the same multiplier read the binary way (2^10, 2^20, 2^30), or 0: what a
 * sequence length (8k = 8192) and, where the decimal reading does not make
 * whole sequences, a token count (4M tokens = 4 x 2^20) mean */
double plc_multiplier_binary(const char *s, size_t len);
/* the known unit spelling closest to s (edit distance), or NULL */
const char *plc_unit_suggest(const char *s);
/* "a size (B, KB, MB, GB, KiB, MiB, GiB, ...)" for messages */
const char *plc_unit_kind_describe(int kind);
/* "a size" */
const char *plc_unit_kind_name(int kind);

typedef struct plc_number {
    bool is_int; /* written as a whole number (no '.', no exponent) */
    int64_t i;   /* valid when is_int */
    double d;    /* always valid */
} plc_number;

/* Parses a plain decimal literal ("123", "1.5", "3e-4"). Returns false when it
 * does not fit (an integer above INT64_MAX, a double that overflows). */
bool plc_number_parse(const char *text, plc_number *out);

typedef enum plc_quantity_status {
    PLC_QTY_OK,
    PLC_QTY_OVERFLOW,     /* the number (times the multiplier) does not fit */
    PLC_QTY_UNKNOWN_UNIT, /* bad_part names the word */
    PLC_QTY_EXTRA_UNIT    /* two words where the first is not a multiplier */
} plc_quantity_status;

typedef struct plc_quantity {
    int kind;          /* -1: a plain number (multiplier allowed); else a unit kind */
    double value;      /* in SI base units */
    bool is_int;       /* value is exactly the whole number ivalue */
    int64_t ivalue;
    const plc_unit *unit; /* NULL for a plain number */
    double mult;          /* 1, or the multiplier */
} plc_quantity;

/* Evaluates number + up to two words (multiplier, unit). *bad_part is the index
 * (1 or 2) of the offending word for UNKNOWN_UNIT/EXTRA_UNIT, 0 otherwise. */
plc_quantity_status plc_quantity_eval(const char *number, const char *const *words, int nwords,
                                      plc_quantity *q, int *bad_part);

/* Parses a whole quantity from text such as "80 GiB" or "312 TFLOPS" (the
 * catalog's scalars). Returns the status; *bad_offset is where the problem is. */
plc_quantity_status plc_quantity_parse_text(const char *text, plc_quantity *q, size_t *bad_offset,
                                            bool *syntax_error);

/* Levenshtein distance, capped (returns cap+1 when larger) */
int plc_edit_distance(const char *a, const char *b, int cap);

/* ---- yaml_reader.c --------------------------------------------------------- */
/* a libyaml event reader that knows where each event is in
 * the file, so that errors in the catalog and the engine profiles are
 * reported as FILE:LINE:COL like spec errors. One event at a time: r->ev is
 * the current one; plc_yr_next reports a YAML syntax error once and then
 * stays failed. */

#include <stdbool.h>
#include <stddef.h>
#include <yaml.h>

#include "plc/arena.h"

typedef struct plc_yaml_reader {
    plc_arena *a;
    plc_diag *d;
    const plc_source *src;
    yaml_parser_t parser;
    yaml_event_t ev;
    bool have_event;
    bool failed; /* a YAML error was reported: libyaml then hands out empty events */
    size_t line_start, line; /* a line start seen last: marks are found from there */
} plc_yaml_reader;

/* the location of [b, e) on the line that starts at line_start (0-based line) */
plc_loc plc_yr_line_loc(const plc_yaml_reader *r, size_t line, size_t line_start, size_t b, size_t e);
/* the current event's location */
plc_loc plc_yr_event_loc(plc_yaml_reader *r);
/* the next event; false at a (reported) syntax error or the end */
bool plc_yr_next(plc_yaml_reader *r);
/* the current scalar event's text */
const char *plc_yr_scalar(const plc_yaml_reader *r);
/* skips the node that starts at the current event (error recovery) */
bool plc_yr_skip(plc_yaml_reader *r);

/* A file whose top level maps names to entries (the catalog, the engine
 * profiles). For each key, entry(r, name, name_loc, ctx) is called with the
 * current event at the key's value, which it consumes; it returns false to
 * stop reading (after a YAML syntax error). The texts name the file in
 * messages: "the <file> is empty", "expected a mapping of <mapping>",
 * "expected <name>" for a key that is not a scalar. */
typedef struct plc_yr_top {
    const char *file;    /* "catalog" */
    const char *mapping; /* "catalog entries (NAME: {figures})" */
    const char *name;    /* "an entry name" */
    bool (*entry)(plc_yaml_reader *r, const char *name, plc_loc name_loc, void *ctx);
    void *ctx;
} plc_yr_top;

/* Reads src with libyaml (one parser, set up and freed here), walking its
 * top mapping with top. Returns the number of errors reported. */
int plc_yr_read_top(plc_arena *a, plc_diag *d, const plc_source *src, const plc_yr_top *top);

#endif
