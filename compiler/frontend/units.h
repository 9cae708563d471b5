/* units.h: numbers, multipliers and units of .plan files and the catalog.
 *
 * A quantity is a number, an optional multiplier (k M G) and an optional
 * unit: `80 GiB`, `200 Gbit/s`, `4M tokens`, `80%`, `5 us`. Values are
 * converted to SI base units (bytes, bytes/s, FLOP/s, seconds, fractions). */
#ifndef PLC_UNITS_H
#define PLC_UNITS_H

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

#endif
