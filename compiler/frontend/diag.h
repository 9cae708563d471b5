/* diag.h: compiler-style diagnostics shared by the .plan front end and the
 * YAML catalog reader:
 *
 *   file:line:col: error: message
 *       3 | source line
 *         |   ^~~~~
 *     hint: ...
 *
 * Locations are 1-based lines and columns (a tab counts as one column) plus
 * byte offsets into the source, which is how the printer finds the line. */
#ifndef PLC_DIAG_H
#define PLC_DIAG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "plc/arena.h"

/* one input text: a spec file, a catalog, or a -D override (<command line>) */
typedef struct plc_source {
    const char *name; /* as shown in diagnostics */
    const char *text; /* NUL-terminated; may contain NUL bytes before len */
    size_t len;
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

#endif
