/* catalog.c: reads the YAML hardware catalog with libyaml's event parser. */
#include "compiler/frontend/catalog.h"

#include <string.h>
#include <yaml.h>

#include "compiler/frontend/spec_keys.h"
#include "compiler/frontend/spec_parse.h"
#include "compiler/frontend/units.h"

typedef plc_hw_field hw_field;

const plc_hw_field plc_hw_fields[] = {
#define FIELD(member, key, unit) {key, unit, offsetof(plc_hw, member)},
    PLC_HW_FIELDS(FIELD)
#undef FIELD
};
#define hw_fields plc_hw_fields
enum { NFIELDS = sizeof plc_hw_fields / sizeof plc_hw_fields[0], MAX_ENTRIES = 256 };
const int plc_nhw_fields = NFIELDS;

typedef struct reader {
    plc_arena *a;
    plc_diag *d;
    const plc_source *src;
    yaml_parser_t parser;
    yaml_event_t ev;
    bool have_event;
    bool failed; /* a YAML error was reported: libyaml then hands out empty events */
    size_t line_start, line; /* a line start seen last: marks are found from there */
} reader;

/* byte offset of a libyaml mark (line and column are 0-based). Marks mostly
 * move forward, so the search starts at the last line found: linear overall. */
static size_t mark_offset(reader *r, yaml_mark_t m)
{
    const plc_source *src = r->src;
    if (m.line < r->line) { r->line = 0; r->line_start = 0; }
    size_t off = r->line_start;
    for (size_t line = r->line; line < m.line && off < src->len; off++)
        if (src->text[off] == '\n') {
            line++;
            r->line = line;
            r->line_start = off + 1;
        }
    off = r->line_start;
    for (size_t col = 0; col < m.column && off < src->len && src->text[off] != '\n'; col++) off++;
    return off;
}

/* the location of [b, e) on the line that starts at line_start (0-based line) */
static plc_loc line_loc(const reader *r, size_t line, size_t line_start, size_t b, size_t e)
{
    size_t le = b;
    while (le < r->src->len && r->src->text[le] != '\n') le++;
    if (e > le) e = le > b ? le : b + 1;
    plc_loc l = {(int)line + 1, (int)(b - line_start) + 1, (int)line + 1, (int)(e - line_start) + 1, b, e, r->src};
    return l;
}

static plc_loc event_loc(reader *r)
{
    size_t b = mark_offset(r, r->ev.start_mark);
    size_t line = r->line, ls = r->line_start;
    size_t e = mark_offset(r, r->ev.end_mark);
    return line_loc(r, line, ls, b, e > b ? e : b + 1);
}

static bool next_event(reader *r)
{
    if (r->have_event) yaml_event_delete(&r->ev);
    r->have_event = false;
    if (r->failed) return false;
    if (!yaml_parser_parse(&r->parser, &r->ev)) {
        r->failed = true;
        size_t off = mark_offset(r, r->parser.problem_mark);
        plc_diag_error(r->d, line_loc(r, r->line, r->line_start, off, off + 1), "YAML: %s%s%s",
                       r->parser.problem ? r->parser.problem : "syntax error",
                       r->parser.context ? " " : "", r->parser.context ? r->parser.context : "");
        return false;
    }
    r->have_event = true;
    if (r->ev.type == YAML_NO_EVENT) {
        r->failed = true;
        return false;
    }
    return true;
}

static const char *scalar_text(const reader *r)
{
    return (const char *)r->ev.data.scalar.value;
}

/* skips the value that starts at the current event (for error recovery) */
static bool skip_node(reader *r)
{
    int depth = 0;
    do {
        yaml_event_type_t t = r->ev.type;
        if (t == YAML_MAPPING_START_EVENT || t == YAML_SEQUENCE_START_EVENT) depth++;
        if (t == YAML_MAPPING_END_EVENT || t == YAML_SEQUENCE_END_EVENT) depth--;
        if (depth == 0) return true;
    } while (next_event(r));
    return false;
}

static void report_value(reader *r, const hw_field *f, plc_loc loc, const char *text)
{
    plc_quantity q;
    size_t bad;
    bool syntax;
    plc_quantity_status st = plc_quantity_parse_text(text, &q, &bad, &syntax);
    /* the scalar may be quoted: point into it only when it is plain */
    bool plain = r->ev.data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
    plc_loc at = loc;
    if (plain && bad < loc.end - loc.begin) {
        at.begin += bad;
        at.first_column += (int)bad;
    }
    if (syntax) {
        plc_diag_error(r->d, at, "'%s' is not a quantity", f->key);
        plc_diag_hint(r->d, "write a number and a unit: %s", plc_unit_kind_describe(f->unit));
    } else if (st == PLC_QTY_OVERFLOW) {
        plc_diag_error(r->d, at, "number out of range");
    } else if (st != PLC_QTY_OK) {
        const char *sug = plc_unit_suggest(text + bad);
        plc_diag_error(r->d, at, "unknown unit");
        if (sug) plc_diag_hint(r->d, "did you mean '%s'?", sug);
        else plc_diag_hint(r->d, "'%s' expects %s", f->key, plc_unit_kind_describe(f->unit));
    }
}

/* checks a figure's value; stores it in *out */
static bool read_value(reader *r, const hw_field *f, double *out)
{
    plc_loc loc = event_loc(r);
    if (r->ev.type != YAML_SCALAR_EVENT) {
        plc_diag_error(r->d, loc, "'%s' must be a single value", f->key);
        skip_node(r);
        return false;
    }
    const char *text = scalar_text(r);
    plc_quantity q;
    size_t bad;
    bool syntax;
    plc_quantity_status st = plc_quantity_parse_text(text, &q, &bad, &syntax);
    if (syntax || st != PLC_QTY_OK) { report_value(r, f, loc, text); return false; }
    bool plain_ok = f->unit == PLC_UNIT_COUNT || f->unit == PLC_UNIT_PERCENT;
    if ((q.kind == -1 && !plain_ok) || (q.kind != -1 && q.kind != f->unit)) {
        plc_diag_error(r->d, loc, "'%s' expects %s", f->key, plc_unit_kind_describe(f->unit));
        if (q.kind != -1) plc_diag_hint(r->d, "'%s' is %s", q.unit->name, plc_unit_kind_describe(q.kind));
        return false;
    }
    if (q.value < 0 || (f->unit == PLC_UNIT_PERCENT && (q.value <= 0 || q.value > 1))) {
        plc_diag_error(r->d, loc, "'%s' is out of range", f->key);
        plc_diag_hint(r->d, f->unit == PLC_UNIT_PERCENT ? "a share is above 0 and at most 100%%"
                                                        : "figures are not negative");
        return false;
    }
    *out = q.value;
    return true;
}

/* one entry: a mapping of figures; the current event is its MAPPING_START */
static bool read_entry(reader *r, plc_hw *hw, plc_loc name_loc)
{
    bool seen[NFIELDS] = {false};
    plc_loc seen_at[NFIELDS];
    bool ok = true;
    for (;;) {
        if (!next_event(r)) return false;
        if (r->ev.type == YAML_MAPPING_END_EVENT) break;
        plc_loc key_loc = event_loc(r);
        if (r->ev.type != YAML_SCALAR_EVENT) {
            plc_diag_error(r->d, key_loc, "expected a figure name");
            if (!skip_node(r) || !next_event(r) || !skip_node(r)) return false;
            ok = false;
            continue;
        }
        const char *key = plc_arena_strdup(r->a, scalar_text(r));
        int idx = -1;
        for (int i = 0; i < NFIELDS; i++)
            if (strcmp(hw_fields[i].key, key) == 0) idx = i;
        if (idx < 0) {
            const char *names[NFIELDS];
            for (int i = 0; i < NFIELDS; i++) names[i] = hw_fields[i].key;
            plc_diag_error(r->d, key_loc, "unknown figure '%s'", plc_diag_quote(r->a, key, strlen(key)));
            const char *s = plc_suggest(key, names, NFIELDS);
            if (s) plc_diag_hint(r->d, "did you mean '%s'?", s);
            else plc_diag_hint(r->d, "figures: %s", plc_join_names(r->a, names, NFIELDS));
            ok = false;
            if (!next_event(r) || !skip_node(r)) return false;
            continue;
        }
        if (seen[idx]) {
            plc_diag_error(r->d, key_loc, "duplicate figure '%s'", key);
            plc_diag_note(r->d, seen_at[idx], "first given here");
            ok = false;
        }
        seen[idx] = true;
        seen_at[idx] = key_loc;
        if (!next_event(r)) return false;
        double v;
        if (read_value(r, &hw_fields[idx], &v)) *(double *)((char *)hw + hw_fields[idx].offset) = v;
        else ok = false;
    }
    for (int i = 0; i < NFIELDS; i++) {
        if (seen[i]) continue;
        plc_diag_error(r->d, name_loc, "entry '%s' lacks '%s'", hw->name, hw_fields[i].key);
        plc_diag_hint(r->d, "every entry gives every figure; '%s' is %s", hw_fields[i].key,
                      plc_unit_kind_describe(hw_fields[i].unit));
        ok = false;
    }
    return ok;
}

static void read_catalog(reader *r, plc_catalog *out)
{
    plc_loc *name_locs = PLC_NEW_ARRAY(r->a, plc_loc, MAX_ENTRIES);
    out->entries = PLC_NEW_ARRAY(r->a, plc_hw, MAX_ENTRIES);
    /* stream start, document start, then the top mapping */
    if (!next_event(r) || r->ev.type != YAML_STREAM_START_EVENT) return;
    if (!next_event(r)) return;
    if (r->ev.type != YAML_DOCUMENT_START_EVENT) {
        plc_diag_error_file(r->d, r->src, "the catalog is empty");
        return;
    }
    if (!next_event(r)) return;
    if (r->ev.type != YAML_MAPPING_START_EVENT) {
        plc_diag_error(r->d, event_loc(r), "expected a mapping of catalog entries (NAME: {figures})");
        return;
    }
    for (;;) {
        if (!next_event(r)) return;
        if (r->ev.type == YAML_MAPPING_END_EVENT) break;
        plc_loc name_loc = event_loc(r);
        if (r->ev.type != YAML_SCALAR_EVENT) {
            plc_diag_error(r->d, name_loc, "expected an entry name");
            return;
        }
        const char *name = plc_arena_strdup(r->a, scalar_text(r)); /* outlives the event */
        size_t len = strlen(name);
        bool name_ok = true;
        if (len == 0 || len >= sizeof out->entries[0].name) {
            plc_diag_error(r->d, name_loc, "entry name must be 1 to %zu characters", sizeof out->entries[0].name - 1);
            name_ok = false;
        }
        for (int i = 0; i < out->n && name_ok; i++)
            if (strcmp(out->entries[i].name, name) == 0) {
                plc_diag_error(r->d, name_loc, "duplicate entry '%s'", name);
                plc_diag_note(r->d, name_locs[i], "first defined here");
                name_ok = false;
            }
        if (out->n == MAX_ENTRIES) {
            plc_diag_error(r->d, name_loc, "more than %d entries", MAX_ENTRIES);
            return;
        }
        plc_hw hw;
        memset(&hw, 0, sizeof hw);
        if (name_ok) memcpy(hw.name, name, len + 1);
        if (!next_event(r)) return;
        if (r->ev.type != YAML_MAPPING_START_EVENT) {
            plc_diag_error(r->d, event_loc(r), "entry '%s' must be a mapping of figures",
                           plc_diag_quote(r->a, name, len));
            if (!skip_node(r)) return;
            continue;
        }
        if (!read_entry(r, &hw, name_loc) && r->failed) return;
        if (name_ok) {
            name_locs[out->n] = name_loc;
            out->entries[out->n++] = hw;
        }
    }
}

int plc_catalog_parse(plc_arena *a, plc_diag *d, const plc_source *src, plc_catalog *out)
{
    int before = d->errors;
    memset(out, 0, sizeof *out);
    out->src = src;
    reader r = {.a = a, .d = d, .src = src};
    if (!yaml_parser_initialize(&r.parser)) {
        plc_diag_error_noloc(d, "cannot initialise the YAML parser");
        return 1;
    }
    yaml_parser_set_input_string(&r.parser, (const unsigned char *)src->text, src->len);
    read_catalog(&r, out);
    if (r.have_event) yaml_event_delete(&r.ev);
    yaml_parser_delete(&r.parser);
    return d->errors - before;
}

int plc_catalog_load(plc_arena *a, plc_diag *d, const char *path, plc_catalog *out)
{
    memset(out, 0, sizeof *out);
    int before = d->errors;
    plc_source *src = plc_source_read(a, d, path);
    if (!src) return d->errors - before;
    return plc_catalog_parse(a, d, src, out);
}

const plc_hw *plc_catalog_find(const plc_catalog *c, const char *name)
{
    for (int i = 0; i < c->n; i++)
        if (strcmp(c->entries[i].name, name) == 0) return &c->entries[i];
    return NULL;
}

const char *plc_catalog_names(plc_arena *a, const plc_catalog *c)
{
    const char **names = PLC_NEW_ARRAY(a, const char *, c->n + 1);
    for (int i = 0; i < c->n; i++) names[i] = c->entries[i].name;
    return plc_join_names(a, names, c->n);
}
