/* diag.c: prints diagnostics with the source line and a caret under the span. */
#include "compiler/frontend/frontend_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { LINE_WINDOW = 160, LINE_LEAD = 60 }; /* long lines are shown around the caret */

void plc_diag_init(plc_diag *d, FILE *out, int max_errors)
{
    memset(d, 0, sizeof *d);
    d->out = out;
    d->max_errors = max_errors > 0 ? max_errors : PLC_DIAG_DEFAULT_MAX_ERRORS;
}

/* Bytes of a source line as shown: printable ASCII, tabs and valid UTF-8
 * as they are; every other byte (controls, junk) escaped as \xNN, so that
 * nothing raw reaches the terminal. shown_width says how many columns a
 * byte takes there, for the caret line. */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
    size_t len = s[0] >= 0xf0 && s[0] <= 0xf4 ? 4 : s[0] >= 0xe0 ? 3 : s[0] >= 0xc2 && s[0] <= 0xdf ? 2 : 0;
    if (s[0] >= 0xf5 || len == 0 || len > n) return 0;
    for (size_t i = 1; i < len; i++)
        if ((s[i] & 0xc0) != 0x80) return 0;
    return len;
}
static bool escaped(unsigned char c) { return (c < 0x20 && c != '\t') || c == 0x7f; }

/* writes bytes [b, e) of text; returns the columns each took into cols (or NULL) */
static void show_bytes(FILE *out, const char *text, size_t b, size_t e, unsigned char *cols)
{
    for (size_t i = b; i < e;) {
        unsigned char c = (unsigned char)text[i];
        size_t u = c >= 0x80 ? utf8_seq((const unsigned char *)text + i, e - i) : 0;
        if (u) {
            if (out) fwrite(text + i, 1, u, out);
            if (cols) {
                cols[i - b] = 1;
                for (size_t k = 1; k < u; k++) cols[i - b + k] = 0;
            }
            i += u;
        } else if (c >= 0x80 || escaped(c)) {
            if (out) fprintf(out, "\\x%02x", c);
            if (cols) cols[i - b] = 4;
            i++;
        } else {
            if (out) fputc((char)c, out);
            if (cols) cols[i - b] = 1;
            i++;
        }
    }
}

/* the source line holding loc.begin, with a caret line under loc */
static void print_excerpt(FILE *out, plc_loc loc)
{
    const plc_source *src = loc.src;
    if (!src || !src->text || loc.begin > src->len) return;
    size_t ls = loc.begin, le = loc.begin;
    while (ls > 0 && src->text[ls - 1] != '\n') ls--;
    while (le < src->len && src->text[le] != '\n') le++;
    if (le > ls && src->text[le - 1] == '\r') le--;
    size_t caret_end = loc.end;
    if (caret_end > le || caret_end < loc.begin) caret_end = le;
    /* a window around the span on very long lines */
    size_t ws = ls, we = le;
    bool cut_left = false, cut_right = false;
    if (le - ls > LINE_WINDOW) {
        if (loc.begin > ls + LINE_LEAD) { ws = loc.begin - LINE_LEAD; cut_left = true; }
        if (le - ws > LINE_WINDOW) { we = ws + LINE_WINDOW; cut_right = true; }
        if (caret_end > we) caret_end = we;
    }
    fprintf(out, "%5d | %s", loc.first_line, cut_left ? "..." : "");
    unsigned char cols[LINE_WINDOW + 8];
    unsigned char *widths = we - ws <= LINE_WINDOW ? cols : malloc(we - ws + 1);
    show_bytes(out, src->text, ws, we, widths);
    fprintf(out, "%s\n      | %s", cut_right ? "..." : "", cut_left ? "   " : "");
    size_t b = loc.begin < we ? loc.begin : we;
    for (size_t i = ws; i < b; i++) {
        if (src->text[i] == '\t') fputc('\t', out);
        else for (int k = 0; widths && k < widths[i - ws]; k++) fputc(' ', out);
    }
    if (widths != cols) free(widths);
    fputc('^', out);
    for (size_t i = b + 1; i < caret_end; i++) fputc('~', out);
    fputc('\n', out);
}

/* "In file included from spec.plan:3:1:" (and "from" lines further out)
 * above a diagnostic in a file a spec includes */
static void print_included_from(FILE *out, const plc_source *src)
{
    const char *lead = "In file included from";
    for (const plc_loc *at = src ? src->included_at : NULL; at && at->src; at = at->src->included_at) {
        fprintf(out, "%s %s:%d:%d%s\n", lead, at->src->name, at->first_line, at->first_column,
                at->src->included_at ? "," : ":");
        lead = "                 from";
    }
}

static void print_header(FILE *out, plc_loc loc, const char *what, const char *fmt, va_list ap)
{
    if (strcmp(what, "note") != 0) print_included_from(out, loc.src);
    if (loc.src) fprintf(out, "%s:%d:%d: %s: ", loc.src->name, loc.first_line, loc.first_column, what);
    else fprintf(out, "plc: %s: ", what);
    vfprintf(out, fmt, ap);
    fputc('\n', out);
    print_excerpt(out, loc);
}

struct plc_diag_entry {
    const plc_source *src;
    int src_rank; /* order of the source's first diagnostic */
    size_t begin;
    int seq;
    bool is_error;
    char *text;
    size_t len;
};

/* deferred mode keeps this many diagnostics; later ones are counted only */
enum { MAX_DEFERRED = 2000 };

static void print_cap_note(plc_diag *d, FILE *out)
{
    fprintf(out, "plc: note: too many errors (more than %d), the rest are not shown\n", d->max_errors);
    d->capped = true;
}

static bool cap_reached(plc_diag *d)
{
    if (d->sink) return false; /* decided when the entries are printed */
    if (d->errors <= d->max_errors) return false;
    if (!d->capped) print_cap_note(d, d->out);
    return true;
}

static void end_entry(plc_diag *d)
{
    if (!d->sink || d->out == d->sink) return;
    fclose(d->out);
    d->out = d->sink;
    plc_diag_entry *e = &d->entries[d->nentries - 1];
    e->text = d->cur_text;
    e->len = d->cur_len;
    d->cur_text = NULL;
}

/* while deferring: starts an entry that collects this diagnostic's lines */
static bool begin_entry(plc_diag *d, plc_loc loc, bool is_error)
{
    if (!d->sink) return true;
    end_entry(d);
    if (d->nentries == MAX_DEFERRED) return false;
    if (d->nentries == d->cap_entries) {
        int cap = d->cap_entries ? d->cap_entries * 2 : 32;
        plc_diag_entry *grown = realloc(d->entries, sizeof *grown * (size_t)cap);
        if (!grown) return false;
        d->entries = grown;
        d->cap_entries = cap;
    }
    FILE *f = open_memstream(&d->cur_text, &d->cur_len);
    if (!f) return false;
    plc_diag_entry *e = &d->entries[d->nentries];
    e->src_rank = loc.src == d->primary ? -1 : d->nentries;
    for (int i = 0; i < d->nentries; i++)
        if (d->entries[i].src == loc.src) { e->src_rank = d->entries[i].src_rank; break; }
    d->nentries++;
    e->src = loc.src;
    e->begin = loc.begin;
    e->seq = d->nentries;
    e->is_error = is_error;
    e->text = NULL;
    e->len = 0;
    d->out = f;
    return true;
}

void plc_diag_defer(plc_diag *d, const plc_source *primary)
{
    if (d->sink) return;
    d->sink = d->out;
    d->primary = primary;
}

static int cmp_entries(const void *a, const void *b)
{
    const plc_diag_entry *x = a, *y = b;
    if (x->src_rank != y->src_rank) return x->src_rank < y->src_rank ? -1 : 1;
    if (x->begin != y->begin) return x->begin < y->begin ? -1 : 1;
    return (x->seq > y->seq) - (x->seq < y->seq);
}

void plc_diag_flush(plc_diag *d)
{
    if (!d->sink) return;
    end_entry(d);
    FILE *out = d->sink;
    /* by source (in order of first diagnostic), then by place */
    plc_diag_entry *sorted = malloc(sizeof *sorted * (size_t)(d->nentries + 1));
    if (sorted) {
        if (d->nentries) memcpy(sorted, d->entries, sizeof *sorted * (size_t)d->nentries);
        qsort(sorted, (size_t)d->nentries, sizeof *sorted, cmp_entries);
    }
    for (int i = 0; i < d->nentries; i++) {
        plc_diag_entry *e = sorted ? &sorted[i] : &d->entries[i];
        if (!d->capped && e->is_error && d->printed_errors == d->max_errors) print_cap_note(d, out);
        if (!d->capped && e->text) fwrite(e->text, 1, e->len, out);
        if (e->is_error) d->printed_errors++;
        free(e->text);
    }
    if (!d->capped && d->errors > d->printed_errors && d->printed_errors >= d->max_errors) print_cap_note(d, out);
    free(sorted);
    free(d->entries);
    d->entries = NULL;
    d->nentries = d->cap_entries = 0;
    d->sink = NULL;
    d->out = out;
}

void plc_diag_error(plc_diag *d, plc_loc loc, const char *fmt, ...)
{
    d->errors++;
    d->muted = cap_reached(d) || !begin_entry(d, loc, true);
    if (d->muted) return;
    va_list ap;
    va_start(ap, fmt);
    print_header(d->out, loc, "error", fmt, ap);
    va_end(ap);
}

void plc_diag_warning(plc_diag *d, plc_loc loc, const char *fmt, ...)
{
    d->warnings++;
    d->muted = (!d->sink && d->capped) || !begin_entry(d, loc, false);
    if (d->muted) return;
    va_list ap;
    va_start(ap, fmt);
    print_header(d->out, loc, "warning", fmt, ap);
    va_end(ap);
}

void plc_diag_note(plc_diag *d, plc_loc loc, const char *fmt, ...)
{
    if (d->muted) return;
    va_list ap;
    va_start(ap, fmt);
    print_header(d->out, loc, "note", fmt, ap);
    va_end(ap);
}

void plc_diag_info(plc_diag *d, plc_loc loc, const char *fmt, ...)
{
    d->muted = (!d->sink && d->capped) || !begin_entry(d, loc, false);
    if (d->muted) return;
    va_list ap;
    va_start(ap, fmt);
    print_header(d->out, loc, "note", fmt, ap);
    va_end(ap);
}

void plc_diag_hint(plc_diag *d, const char *fmt, ...)
{
    if (d->muted) return;
    va_list ap;
    va_start(ap, fmt);
    fputs("  hint: ", d->out);
    vfprintf(d->out, fmt, ap);
    fputc('\n', d->out);
    va_end(ap);
}

void plc_diag_error_noloc(plc_diag *d, const char *fmt, ...)
{
    plc_loc none = {0};
    d->errors++;
    d->muted = cap_reached(d) || !begin_entry(d, none, true);
    if (d->muted) return;
    va_list ap;
    va_start(ap, fmt);
    print_header(d->out, none, "error", fmt, ap);
    va_end(ap);
}

void plc_diag_error_file(plc_diag *d, const plc_source *src, const char *fmt, ...)
{
    d->errors++;
    /* sorts after every located diagnostic of the file */
    plc_loc end = {0, 0, 0, 0, src->len + 1, src->len + 1, src};
    d->muted = cap_reached(d) || !begin_entry(d, end, true);
    if (d->muted) return;
    va_list ap;
    va_start(ap, fmt);
    fprintf(d->out, "%s: error: ", src->name);
    vfprintf(d->out, fmt, ap);
    fputc('\n', d->out);
    va_end(ap);
}

const char *plc_diag_quote(plc_arena *a, const char *s, size_t len)
{
    enum { MAX_QUOTE = 40 };
    size_t n = len > MAX_QUOTE ? MAX_QUOTE : len;
    char *q = plc_arena_alloc(a, 4 * n + 4), *o = q;
    for (size_t i = 0; i < n;) {
        unsigned char c = (unsigned char)s[i];
        size_t u = c >= 0x80 ? utf8_seq((const unsigned char *)s + i, n - i) : 0;
        if (u) {
            memcpy(o, s + i, u);
            o += u;
            i += u;
        } else {
            if (c >= 0x80 || escaped(c) || c == '\t') o += sprintf(o, "\\x%02x", c);
            else *o++ = (char)c;
            i++;
        }
    }
    memcpy(o, len > MAX_QUOTE ? "..." : "", len > MAX_QUOTE ? 4 : 1);
    return q;
}

plc_loc plc_loc_of_range(const plc_source *src, size_t begin, size_t end)
{
    plc_loc l = {1, 1, 1, 1, begin, end, src};
    if (begin > src->len) begin = l.begin = src->len;
    if (end > src->len || end < begin) end = l.end = begin;
    for (size_t i = 0; i < end; i++) {
        if (i == begin) { l.first_line = l.last_line; l.first_column = l.last_column; }
        if (src->text[i] == '\n') { l.last_line++; l.last_column = 1; }
        else l.last_column++;
    }
    if (begin == end) { l.first_line = l.last_line; l.first_column = l.last_column; }
    return l;
}
