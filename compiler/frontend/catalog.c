/* catalog.c: reads the YAML hardware catalog with libyaml's event parser
 * (frontend_int.h). */
#include "compiler/frontend/frontend_int.h"

#include <string.h>


typedef plc_hw_field hw_field;

const plc_hw_field plc_hw_fields[] = {
#define FIELD(member, key, unit) {key, unit, offsetof(plc_hw, member)},
    PLC_HW_FIELDS(FIELD)
#undef FIELD
};
#define hw_fields plc_hw_fields
enum { NFIELDS = sizeof plc_hw_fields / sizeof plc_hw_fields[0], MAX_ENTRIES = 256 };
const int plc_nhw_fields = NFIELDS;

static void report_value(plc_yaml_reader *r, const hw_field *f, plc_loc loc, const char *text)
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
static bool read_value(plc_yaml_reader *r, const hw_field *f, double *out)
{
    plc_loc loc = plc_yr_event_loc(r);
    if (r->ev.type != YAML_SCALAR_EVENT) {
        plc_diag_error(r->d, loc, "'%s' must be a single value", f->key);
        plc_yr_skip(r);
        return false;
    }
    const char *text = plc_yr_scalar(r);
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
static bool read_entry(plc_yaml_reader *r, plc_hw *hw, plc_loc name_loc)
{
    bool seen[NFIELDS] = {false};
    plc_loc seen_at[NFIELDS];
    bool ok = true;
    for (;;) {
        if (!plc_yr_next(r)) return false;
        if (r->ev.type == YAML_MAPPING_END_EVENT) break;
        plc_loc key_loc = plc_yr_event_loc(r);
        if (r->ev.type != YAML_SCALAR_EVENT) {
            plc_diag_error(r->d, key_loc, "expected a figure name");
            if (!plc_yr_skip(r) || !plc_yr_next(r) || !plc_yr_skip(r)) return false;
            ok = false;
            continue;
        }
        const char *key = plc_arena_strdup(r->a, plc_yr_scalar(r));
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
            if (!plc_yr_next(r) || !plc_yr_skip(r)) return false;
            continue;
        }
        if (seen[idx]) {
            plc_diag_error(r->d, key_loc, "duplicate figure '%s'", key);
            plc_diag_note(r->d, seen_at[idx], "first given here");
            ok = false;
        }
        seen[idx] = true;
        seen_at[idx] = key_loc;
        if (!plc_yr_next(r)) return false;
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

/* the catalog being read, and where each entry's name was */
typedef struct catalog_ctx {
    plc_catalog *out;
    plc_loc *name_locs;
} catalog_ctx;

/* one entry NAME: {figures}; the current event is its value */
static bool read_named_entry(plc_yaml_reader *r, const char *name, plc_loc name_loc, void *vctx)
{
    catalog_ctx *c = vctx;
    plc_catalog *out = c->out;
    size_t len = strlen(name);
    bool name_ok = true;
    if (len == 0 || len >= sizeof out->entries[0].name) {
        plc_diag_error(r->d, name_loc, "entry name must be 1 to %zu characters", sizeof out->entries[0].name - 1);
        name_ok = false;
    }
    for (int i = 0; i < out->n && name_ok; i++)
        if (strcmp(out->entries[i].name, name) == 0) {
            plc_diag_error(r->d, name_loc, "duplicate entry '%s'", name);
            plc_diag_note(r->d, c->name_locs[i], "first defined here");
            name_ok = false;
        }
    if (out->n == MAX_ENTRIES) {
        plc_diag_error(r->d, name_loc, "more than %d entries", MAX_ENTRIES);
        return false;
    }
    plc_hw hw;
    memset(&hw, 0, sizeof hw);
    if (name_ok) memcpy(hw.name, name, len + 1);
    if (r->ev.type != YAML_MAPPING_START_EVENT) {
        plc_diag_error(r->d, plc_yr_event_loc(r), "entry '%s' must be a mapping of figures",
                       plc_diag_quote(r->a, name, len));
        return plc_yr_skip(r);
    }
    if (!read_entry(r, &hw, name_loc) && r->failed) return false;
    if (name_ok) {
        c->name_locs[out->n] = name_loc;
        out->entries[out->n++] = hw;
    }
    return true;
}

int plc_catalog_parse(plc_arena *a, plc_diag *d, const plc_source *src, plc_catalog *out)
{
    memset(out, 0, sizeof *out);
    out->src = src;
    out->entries = PLC_NEW_ARRAY(a, plc_hw, MAX_ENTRIES);
    catalog_ctx c = {out, PLC_NEW_ARRAY(a, plc_loc, MAX_ENTRIES)};
    plc_yr_top top = {"catalog", "catalog entries (NAME: {figures})", "an entry name", read_named_entry, &c};
    return plc_yr_read_top(a, d, src, &top);
}

int plc_catalog_load(plc_arena *a, plc_diag *d, const char *path, plc_catalog *out)
{
    memset(out, 0, sizeof *out);
    plc_source *src = plc_source_read(a, d, path);
    return src ? plc_catalog_parse(a, d, src, out) : 1;
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
