/* engines.c: reads the engine profiles (frontend_int.h) with the front end's YAML
 * event reader. The figures come from PLC_ENGINE_FIGURES, the engine names
 * from plc_engine_names and the layout values from the .plan spellings, so
 * the file's vocabulary is the language's. */
#include "compiler/frontend/frontend_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/parse_num.h"

typedef struct figure {
    const char *key;
    double lo, hi;
    size_t offset;
} figure;

static const figure figures[] = {
#define FIGURE(member, key, lo, hi, what) {key, lo, hi, offsetof(plc_engine_profile, member)},
    PLC_ENGINE_FIGURES(FIGURE)
#undef FIGURE
};
enum { NFIGURES = sizeof figures / sizeof figures[0] };

typedef plc_yaml_reader reader;

/* a scalar's text, or NULL after reporting what was expected */
static const char *scalar(reader *r, const char *what)
{
    if (r->ev.type == YAML_SCALAR_EVENT) return plc_arena_strdup(r->a, plc_yr_scalar(r));
    plc_diag_error(r->d, plc_yr_event_loc(r), "expected %s", what);
    plc_yr_skip(r);
    return NULL;
}

/* the next key of the mapping being read, with the current event at its
 * value; false at the mapping's end or a YAML syntax error (r->failed). A
 * key that is not a scalar is reported as not `what`, skipped with its
 * value, and clears *ok. */
static bool next_key(reader *r, const char *what, const char **key, plc_loc *key_loc, bool *ok)
{
    for (;;) {
        if (!plc_yr_next(r) || r->ev.type == YAML_MAPPING_END_EVENT) return false;
        *key_loc = plc_yr_event_loc(r);
        *key = scalar(r, what);
        if (!plc_yr_next(r)) return false;
        if (*key) return true;
        plc_yr_skip(r);
        *ok = false;
    }
}

/* the values a layout dimension's .plan spelling may take: names for enum
 * kinds, on/off, or 0..3 for zero; returns the count */
static int dim_names(plc_layout_dim d, const char *const **names)
{
    static const char *const onoff[] = {"off", "on", NULL};
    static const char *const zero[] = {"0", "1", "2", "3", NULL};
    switch (plc_layout_dim_kind(d)) {
    case PLC_DIMK_ONOFF: *names = onoff; return 2;
    case PLC_DIMK_ZERO: *names = zero; return 4;
    case PLC_DIMK_SCHEDULE: *names = plc_schedule_names; return PLC_SCHED_COUNT;
    case PLC_DIMK_RECOMPUTE: *names = plc_recompute_names; return PLC_RECOMPUTE_COUNT;
    case PLC_DIMK_ATTENTION: *names = plc_attention_names; return PLC_ATTN_COUNT;
    case PLC_DIMK_DEGREE:
    case PLC_DIMK_LAYERS: break;
    }
    *names = NULL;
    return 0;
}

/* {key: value, source: "..."} or {values: [...], source: "..."}: the current
 * event is the MAPPING_START. Fills *value (a scalar, value_key "value") or
 * the sequence's scalars; *source is the source text (NULL when missing). */
typedef struct sourced {
    const char *value;      /* "value" */
    const char *values[64]; /* "values" */
    plc_loc value_locs[64];
    int nvalues;
    bool has_values;
    plc_loc value_loc;
    const char *source;
} sourced;

static bool read_sourced(reader *r, const char *name, const char *value_key, plc_loc at, sourced *s)
{
    memset(s, 0, sizeof *s);
    bool ok = true, want_list = strcmp(value_key, "values") == 0;
    if (r->ev.type != YAML_MAPPING_START_EVENT) {
        plc_diag_error(r->d, plc_yr_event_loc(r), "'%s' must be a mapping {%s: ..., source: \"...\"}", name, value_key);
        plc_yr_skip(r);
        return false;
    }
    plc_loc key_loc;
    const char *key;
    while (next_key(r, "'source' or the value", &key, &key_loc, &ok)) {
        if (strcmp(key, "source") == 0) {
            s->source = scalar(r, "the source as text");
            if (!s->source) ok = false;
        } else if (strcmp(key, value_key) == 0 && !want_list) {
            s->value_loc = plc_yr_event_loc(r);
            s->value = scalar(r, "a number");
            if (!s->value) ok = false;
        } else if (strcmp(key, value_key) == 0) {
            s->has_values = true;
            s->value_loc = plc_yr_event_loc(r);
            if (r->ev.type != YAML_SEQUENCE_START_EVENT) {
                plc_diag_error(r->d, s->value_loc, "'%s' lists its values: [a, b]", name);
                plc_yr_skip(r);
                ok = false;
                continue;
            }
            for (;;) {
                if (!plc_yr_next(r)) return false;
                if (r->ev.type == YAML_SEQUENCE_END_EVENT) break;
                plc_loc vl = plc_yr_event_loc(r);
                const char *v = scalar(r, "a value");
                if (!v) { ok = false; continue; }
                if (s->nvalues < 64) { s->value_locs[s->nvalues] = vl; s->values[s->nvalues++] = v; }
            }
        } else {
            plc_diag_error(r->d, key_loc, "unknown key '%s' in '%s'", plc_diag_quote(r->a, key, strlen(key)), name);
            plc_diag_hint(r->d, "'%s' holds %s and source", name, value_key);
            plc_yr_skip(r);
            ok = false;
        }
    }
    if (r->failed) return false;
    if (!s->source || !s->source[0]) {
        plc_diag_error(r->d, at, "'%s' lacks its source", name);
        plc_diag_hint(r->d, "every figure says where it comes from: source: \"the documentation or paper\"");
        ok = false;
    }
    if ((want_list && !s->has_values) || (!want_list && !s->value)) {
        plc_diag_error(r->d, at, "'%s' lacks its %s", name, value_key);
        ok = false;
    }
    return ok;
}

static bool read_figure(reader *r, const figure *f, plc_loc at, plc_engine_profile *p)
{
    sourced s;
    if (!read_sourced(r, f->key, "value", at, &s)) return false;
    double v;
    if (plc_parse_real(s.value, "", -HUGE_VAL, HUGE_VAL, &v)) {
        plc_diag_error(r->d, s.value_loc, "'%s' must be a number, not '%s'", f->key,
                       plc_diag_quote(r->a, s.value, strlen(s.value)));
        return false;
    }
    if (!(v >= f->lo && v <= f->hi)) {
        plc_diag_error(r->d, s.value_loc, "'%s' must be between %g and %g", f->key, f->lo, f->hi);
        return false;
    }
    *(double *)((char *)p + f->offset) = v;
    return true;
}

/* runs: {dimension: {values: [...], source: ...}, ...} */
static bool read_runs(reader *r, plc_engine_profile *p)
{
    if (r->ev.type != YAML_MAPPING_START_EVENT) {
        plc_diag_error(r->d, plc_yr_event_loc(r), "'runs' must be a mapping of layout keys");
        plc_yr_skip(r);
        return false;
    }
    bool ok = true;
    plc_loc key_loc;
    const char *key;
    while (next_key(r, "a layout key", &key, &key_loc, &ok)) {
        int dim = -1;
        for (int d = 0; d < PLC_LD_COUNT; d++)
            if (strcmp(plc_layout_dim_key((plc_layout_dim)d), key) == 0) dim = d;
        const char *const *names = NULL;
        int n = dim >= 0 ? dim_names((plc_layout_dim)dim, &names) : 0;
        if (n == 0) {
            plc_diag_error(r->d, key_loc, "'runs' names the layout keys sp, schedule, recompute, zero, attention, "
                                          "fused_rmsnorm, not '%s'", plc_diag_quote(r->a, key, strlen(key)));
            plc_yr_skip(r);
            ok = false;
            continue;
        }
        sourced s;
        if (!read_sourced(r, key, "values", key_loc, &s)) { ok = false; continue; }
        uint64_t bits = 0;
        for (int i = 0; i < s.nvalues; i++) {
            int v = -1;
            for (int k = 0; k < n; k++)
                if (strcmp(names[k], s.values[i]) == 0) v = k;
            if (v < 0) {
                plc_diag_error(r->d, s.value_locs[i], "unknown %s '%s'", key,
                               plc_diag_quote(r->a, s.values[i], strlen(s.values[i])));
                plc_diag_hint(r->d, "valid: %s", plc_join_names(r->a, names, n));
                ok = false;
                continue;
            }
            bits |= 1ull << v;
        }
        if (ok && bits == 0) {
            plc_diag_error(r->d, s.value_loc, "'%s' lists no value: an engine runs at least one", key);
            ok = false;
        }
        p->offers[dim] = bits;
    }
    if (r->failed) return false;
    return ok;
}

/* one profile: the current event is its MAPPING_START */
static bool read_profile(reader *r, plc_engine_profile *p, const char *name, plc_loc name_loc)
{
    bool seen[NFIGURES] = {false}, describes = false, ok = true;
    plc_loc key_loc;
    const char *key;
    while (next_key(r, "a figure name", &key, &key_loc, &ok)) {
        if (strcmp(key, "describes") == 0) {
            const char *t = scalar(r, "a description such as \"Megatron-Core r0.8 profile\"");
            if (!t || !t[0] || strlen(t) >= sizeof p->describes) {
                if (t) plc_diag_error(r->d, key_loc, "'describes' must be 1 to %zu characters", sizeof p->describes - 1);
                ok = false;
            } else {
                snprintf(p->describes, sizeof p->describes, "%s", t);
                describes = true;
            }
            continue;
        }
        if (strcmp(key, "runs") == 0) {
            if (!read_runs(r, p)) ok = false;
            continue;
        }
        int idx = -1;
        for (int i = 0; i < NFIGURES; i++)
            if (strcmp(figures[i].key, key) == 0) idx = i;
        if (idx < 0) {
            const char *names[NFIGURES + 2];
            for (int i = 0; i < NFIGURES; i++) names[i] = figures[i].key;
            names[NFIGURES] = "describes";
            names[NFIGURES + 1] = "runs";
            plc_diag_error(r->d, key_loc, "unknown figure '%s'", plc_diag_quote(r->a, key, strlen(key)));
            const char *s = plc_suggest(key, names, NFIGURES + 2);
            if (s) plc_diag_hint(r->d, "did you mean '%s'?", s);
            else plc_diag_hint(r->d, "figures: %s", plc_join_names(r->a, names, NFIGURES + 2));
            plc_yr_skip(r);
            ok = false;
            continue;
        }
        if (seen[idx]) {
            plc_diag_error(r->d, key_loc, "duplicate figure '%s'", key);
            ok = false;
        }
        seen[idx] = true;
        if (!read_figure(r, &figures[idx], key_loc, p)) ok = false;
    }
    if (r->failed) return false;
    if (!describes) {
        plc_diag_error(r->d, name_loc, "profile '%s' lacks 'describes'", name);
        plc_diag_hint(r->d, "describes: the engine and version the figures are for");
        ok = false;
    }
    for (int i = 0; i < NFIGURES; i++) {
        if (seen[i]) continue;
        plc_diag_error(r->d, name_loc, "profile '%s' lacks '%s'", name, figures[i].key);
        plc_diag_hint(r->d, "every profile gives every figure with its source: %s: {value: N, source: \"...\"}",
                      figures[i].key);
        ok = false;
    }
    return ok;
}

/* the profiles being read, and where each was given */
typedef struct engines_ctx {
    plc_engine_set *out;
    plc_loc locs[PLC_ENGINE_COUNT];
} engines_ctx;

/* one ENGINE: {figures}; the current event is its value */
static bool read_named_profile(reader *r, const char *name, plc_loc name_loc, void *vctx)
{
    engines_ctx *c = vctx;
    plc_engine_set *out = c->out;
    int e = -1;
    for (int i = 0; i < PLC_ENGINE_COUNT; i++)
        if (strcmp(plc_engine_names[i], name) == 0) e = i;
    if (e < 0) {
        plc_diag_error(r->d, name_loc, "unknown engine '%s'", plc_diag_quote(r->a, name, strlen(name)));
        const char *s = plc_suggest(name, plc_engine_names, PLC_ENGINE_COUNT);
        if (s) plc_diag_hint(r->d, "did you mean '%s'?", s);
        else plc_diag_hint(r->d, "engines: %s", plc_join_names(r->a, plc_engine_names, PLC_ENGINE_COUNT));
        return plc_yr_skip(r);
    }
    if (out->has[e]) {
        plc_diag_error(r->d, name_loc, "duplicate profile '%s'", name);
        plc_diag_note(r->d, c->locs[e], "first given here");
        return plc_yr_skip(r);
    }
    if (r->ev.type != YAML_MAPPING_START_EVENT) {
        plc_diag_error(r->d, plc_yr_event_loc(r), "profile '%s' must be a mapping of figures", name);
        return plc_yr_skip(r);
    }
    plc_engine_profile p;
    memset(&p, 0, sizeof p);
    bool ok = read_profile(r, &p, name, name_loc);
    if (r->failed) return false;
    if (ok) {
        out->profile[e] = p;
        out->has[e] = true;
        c->locs[e] = name_loc;
    }
    return true;
}

int plc_engines_parse(plc_arena *a, plc_diag *d, const plc_source *src, plc_engine_set *out)
{
    memset(out, 0, sizeof *out);
    out->src = src;
    engines_ctx c = {.out = out};
    plc_yr_top top = {"engine profiles file", "engine profiles (ENGINE: {figures})", "an engine name",
                      read_named_profile, &c};
    return plc_yr_read_top(a, d, src, &top);
}

int plc_engines_load(plc_arena *a, plc_diag *d, const char *path, plc_engine_set *out)
{
    memset(out, 0, sizeof *out);
    plc_source *src = plc_source_read(a, d, path);
    return src ? plc_engines_parse(a, d, src, out) : 1;
}

int plc_engine_profile_load(plc_arena *a, plc_diag *d, plc_engine e, const plc_loc *at, const char *catalog,
                            plc_engine_profile *out)
{
    int before = d->errors;
    const char *tried;
    const char *path = plc_engines_find(a, catalog, &tried);
    if (!path) {
        plc_diag_error_noloc(d, "no engine profiles found: looked for engines.yaml at %s", tried);
        plc_diag_hint(d, "name a profiles file with the environment variable PLC_ENGINES, or put the engines.yaml "
                         "of plc's examples/ beside the catalog");
        return d->errors - before;
    }
    plc_engine_set set;
    if (plc_engines_load(a, d, path, &set)) return d->errors - before;
    if (!set.has[e]) {
        if (at) plc_diag_error(d, *at, "no profile for engine '%s' in %s", plc_engine_name(e), path);
        else plc_diag_error_noloc(d, "no profile for engine '%s' (the default) in %s", plc_engine_name(e), path);
        plc_diag_hint(d, "a profiles file gives %s (docs/engines.md)", plc_join_names(a, plc_engine_names, PLC_ENGINE_COUNT));
        return d->errors - before;
    }
    *out = set.profile[e];
    return 0;
}
