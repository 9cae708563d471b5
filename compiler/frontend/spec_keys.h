/* spec_keys.h: the blocks and keys of the .plan language, in canonical
 * order. resolve.c checks pairs against these tables and fmt.c prints keys
 * in this order, so this is the one place a key is added. */
#ifndef PLC_SPEC_KEYS_H
#define PLC_SPEC_KEYS_H

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

extern const char *const plc_schedule_names[];
extern const char *const plc_recompute_names[];
extern const char *const plc_attention_names[];
extern const char *const plc_precision_names[];
extern const char *const plc_objective_names[];
extern const char *const plc_optimizer_names[];
extern const char *const plc_engine_names[];    /* plc_engine order */
extern const char *const plc_arch_names[];      /* plc_arch order */
extern const char *const plc_positions_names[]; /* plc_positions order */

#endif
