/* resolve.c: checks every block and key of a spec and fills the plc_job.
 * The cross-block checks (tp divides heads, degrees divide the GPU count,
 * ...) live in spec_checks.c. */
#include "compiler/frontend/frontend_int.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>


enum { MAX_KEYS = 64 };

typedef struct block_slots {
    const plc_block_def *def;
    const plc_block *block;        /* NULL when the block is absent */
    const plc_pair *pair[MAX_KEYS]; /* by key index; NULL when not given */
} block_slots;

typedef struct rctx {
    plc_arena *a;
    plc_diag *d;
    const plc_ast *ast;
    const plc_resolve_opts *o;
    uint64_t hw_set; /* bit i: the cluster block sets plc_hw_fields[i] */
    const plc_value *data;   /* train.data's value when it names a file */
    const char *data_open;   /* ... and where plc reads that file */
    /* bit k of bad[b]: key k of plc_block_defs[b] is missing or its value
     * had an error; the cross-block checks skip what reads it */
    uint64_t bad[8];
} rctx;

/* key of bs is unusable (missing or wrong): checks that read it are skipped */
static void mark_bad(rctx *r, const block_slots *bs, const char *key)
{
    int k = plc_key_index(bs->def, key);
    if (k >= 0 && k < 64) r->bad[bs->def - plc_block_defs] |= 1ull << k;
}

static bool is_bad(const rctx *r, const block_slots *bs, const char *key)
{
    int k = plc_key_index(bs->def, key);
    return k >= 0 && k < 64 && (r->bad[bs->def - plc_block_defs] >> k & 1u);
}

/* got, after marking key bad when it is below 0 (an error reported) */
static int noted(rctx *r, const block_slots *bs, const char *key, int got)
{
    if (got < 0) mark_bad(r, bs, key);
    return got;
}

static const char *quote(rctx *r, const char *s) { return plc_diag_quote(r->a, s, strlen(s)); }

static const char *value_kind_name(const plc_value *v)
{
    switch (v->kind) {
    case PLC_VAL_NUMBER: return "a number";
    case PLC_VAL_STRING: return "a string";
    case PLC_VAL_IDENT: return "a name";
    case PLC_VAL_SET: return "a set";
    case PLC_VAL_RANGE: return "a range";
    }
    return "a value";
}

/* ---- structure: blocks, keys, duplicates ---------------------------------- */

static void check_pairs(rctx *r, block_slots *bs)
{
    for (const plc_pair *p = bs->block->pairs; p; p = p->next) {
        int i = plc_key_index(bs->def, p->key);
        if (i < 0) {
            plc_diag_error(r->d, p->key_loc, "unknown key '%s' in block '%s'", quote(r, p->key), bs->def->kind);
            const char *s = plc_suggest_key(bs->def, p->key);
            if (s) plc_diag_hint(r->d, "did you mean '%s'?", s);
            else if (plc_block_def_find(p->key)) plc_diag_hint(r->d, "'%s' is a block, not a key", p->key);
            else {
                const char *names[MAX_KEYS];
                for (int k = 0; k < bs->def->nkeys; k++) names[k] = bs->def->keys[k].name;
                plc_diag_hint(r->d, "keys of '%s': %s", bs->def->kind, plc_join_names(r->a, names, bs->def->nkeys));
            }
            continue;
        }
        if (bs->pair[i]) {
            plc_diag_error(r->d, p->key_loc, "duplicate key '%s'", p->key);
            plc_diag_note(r->d, bs->pair[i]->key_loc, "'%s' first set here", p->key);
            continue;
        }
        bs->pair[i] = p;
    }
    for (int i = 0; i < bs->def->nkeys; i++) {
        const plc_key_def *k = &bs->def->keys[i];
        if (!k->required || bs->pair[i]) continue;
        mark_bad(r, bs, k->name);
        plc_diag_error(r->d, bs->block->kind_loc, "block '%s' lacks the required key '%s'", bs->def->kind, k->name);
        plc_diag_hint(r->d, "%s: %s", k->name, k->doc);
    }
}

static void collect_blocks(rctx *r, block_slots slots[])
{
    const char *kinds[8];
    for (int i = 0; i < plc_nblock_defs; i++) {
        slots[i].def = &plc_block_defs[i];
        kinds[i] = plc_block_defs[i].kind;
    }
    for (const plc_block *b = r->ast->blocks; b; b = b->next) {
        int i = 0;
        while (i < plc_nblock_defs && strcmp(plc_block_defs[i].kind, b->kind) != 0) i++;
        if (i == plc_nblock_defs) {
            plc_diag_error(r->d, b->kind_loc, "unknown block '%s'", quote(r, b->kind));
            const char *s = plc_suggest(b->kind, kinds, plc_nblock_defs);
            if (s) plc_diag_hint(r->d, "did you mean '%s'?", s);
            else plc_diag_hint(r->d, "blocks: %s", plc_join_names(r->a, kinds, plc_nblock_defs));
            continue;
        }
        if (slots[i].block) {
            plc_diag_error(r->d, b->kind_loc, "duplicate block '%s'", b->kind);
            plc_diag_note(r->d, slots[i].block->kind_loc, "first block '%s' is here", b->kind);
            continue;
        }
        if (b->name && !plc_block_defs[i].named) {
            plc_diag_error(r->d, b->name_loc, "block '%s' takes no name", b->kind);
            plc_diag_hint(r->d, "write '%s {'", b->kind);
        }
        slots[i].block = b;
        check_pairs(r, &slots[i]);
    }
    for (int i = 0; i < plc_nblock_defs; i++) {
        if (slots[i].block || !plc_block_defs[i].required) continue;
        plc_diag_error_file(r->d, r->ast->src, "missing block '%s'", plc_block_defs[i].kind);
        plc_diag_hint(r->d, "a spec has blocks model \"NAME\" { ... }, cluster { ... }, train { ... } and optionally layout { ... }");
    }
}

static const plc_pair *slot(const block_slots *bs, const char *key)
{
    if (!bs->block) return NULL;
    int i = plc_key_index(bs->def, key);
    return i >= 0 ? bs->pair[i] : NULL;
}

/* "hint: layers: number of transformer layers, e.g. layers = 32" */
static void doc_hint(rctx *r, const block_slots *bs, const char *key)
{
    int i = plc_key_index(bs->def, key);
    if (i >= 0) plc_diag_hint(r->d, "%s: %s", key, bs->def->keys[i].doc);
}

/* ---- values ---------------------------------------------------------------- */

static void wrong_type(rctx *r, const plc_pair *p, const char *want)
{
    plc_diag_error(r->d, p->value->loc, "'%s' expects %s, not %s", p->key, want, value_kind_name(p->value));
}

/* evaluates a NUMBER value's multiplier and unit; reports bad units/overflow */
static bool eval_number(rctx *r, const plc_value *v, plc_quantity *q)
{
    int bad;
    plc_quantity_status st = plc_quantity_eval(v->text, v->words, v->nwords, q, &bad);
    switch (st) {
    case PLC_QTY_OK: return true;
    case PLC_QTY_OVERFLOW:
        plc_diag_error(r->d, v->loc, "number too large");
        if (strpbrk(v->text, ".eE"))
            plc_diag_hint(r->d, "'%s' is beyond the range of a real number (about 1.8e308)", v->text);
        else
            plc_diag_hint(r->d, "whole numbers go up to 9223372036854775807");
        return false;
    case PLC_QTY_UNKNOWN_UNIT: {
        const char *w = v->words[bad - 1];
        plc_diag_error(r->d, v->word_locs[bad - 1], "unknown unit '%s'", quote(r, w));
        const char *s = plc_unit_suggest(w);
        if (s) plc_diag_hint(r->d, "did you mean '%s'?", s);
        else plc_diag_hint(r->d, "units: B KB MB GB TB KiB MiB GiB TiB, MB/s GB/s TB/s Gbit/s, TFLOPS, ns us ms s, %%, tokens; multipliers k M G");
        return false;
    }
    case PLC_QTY_EXTRA_UNIT:
        plc_diag_error(r->d, v->word_locs[bad - 1], "a second unit after '%s'", v->words[0]);
        plc_diag_hint(r->d, "only a multiplier (k, M, G) may come before a unit, as in 4M tokens");
        return false;
    }
    return false;
}

static void out_of_range_int(rctx *r, const plc_pair *p, int64_t v, int64_t lo, int64_t hi)
{
    if (hi - lo > 16 && v < lo) plc_diag_error(r->d, p->value->loc, "'%s' must be at least %lld, not %lld", p->key, (long long)lo, (long long)v);
    else if (hi - lo > 16) plc_diag_error(r->d, p->value->loc, "'%s' must be at most %lld, not %lld", p->key, (long long)hi, (long long)v);
    else plc_diag_error(r->d, p->value->loc, "'%s' must be between %lld and %lld, not %lld", p->key, (long long)lo, (long long)hi, (long long)v);
}

/* a plain whole number; 1 when given and valid, 0 when absent, -1 on error */
static int read_int(rctx *r, const block_slots *bs, const char *key, int64_t lo, int64_t hi, int64_t *out)
{
    const plc_pair *p = slot(bs, key);
    if (!p) return 0;
    const plc_value *v = p->value;
    if (v->kind != PLC_VAL_NUMBER) { wrong_type(r, p, "a whole number"); return -1; }
    plc_quantity q;
    if (!eval_number(r, v, &q)) return -1;
    if (q.kind != -1) {
        plc_diag_error(r->d, v->word_locs[v->nwords - 1], "'%s' is a plain number, not %s", key, plc_unit_kind_name(q.kind));
        return -1;
    }
    if (!q.is_int) {
        plc_diag_error(r->d, v->loc, "'%s' must be a whole number", key);
        doc_hint(r, bs, key);
        return -1;
    }
    if (q.ivalue < lo || q.ivalue > hi) {
        out_of_range_int(r, p, q.ivalue, lo, hi);
        doc_hint(r, bs, key);
        return -1;
    }
    *out = q.ivalue;
    return 1;
}

/* a plain number such as 3e-4; bounds: lo < v (lo_open) or lo <= v; v <= hi */
static int read_real(rctx *r, const block_slots *bs, const char *key, double lo, bool lo_open, double hi, bool hi_open,
                    double *out)
{
    const plc_pair *p = slot(bs, key);
    if (!p) return 0;
    const plc_value *v = p->value;
    if (v->kind != PLC_VAL_NUMBER) { wrong_type(r, p, "a number"); return -1; }
    plc_quantity q;
    if (!eval_number(r, v, &q)) return -1;
    if (q.kind != -1) {
        plc_diag_error(r->d, v->word_locs[v->nwords - 1], "'%s' is a plain number, not %s", key, plc_unit_kind_name(q.kind));
        return -1;
    }
    bool below = lo_open ? !(q.value > lo) : !(q.value >= lo);
    bool above = hi_open ? !(q.value < hi) : !(q.value <= hi);
    if (below || above) {
        const char *src = plc_value_source(r->a, v);
        if (isinf(hi)) plc_diag_error(r->d, v->loc, "'%s' must be %s %g, not %s", key, lo_open ? "above" : "at least", lo, src);
        else plc_diag_error(r->d, v->loc, "'%s' must be in %c%g, %g%c, not %s", key, lo_open ? '(' : '[', lo, hi,
                            hi_open ? ')' : ']', src);
        doc_hint(r, bs, key);
        return -1;
    }
    *out = q.value;
    return 1;
}

static const char *unit_example(int kind)
{
    switch (kind) {
    case PLC_UNIT_SIZE: return "80 GiB";
    case PLC_UNIT_BANDWIDTH: return "200 Gbit/s";
    case PLC_UNIT_FLOPS: return "312 TFLOPS";
    case PLC_UNIT_TIME: return "5 us";
    case PLC_UNIT_PERCENT: return "80%";
    default: return "8";
    }
}

/* a number with a unit of `kind`; a share may also be a plain fraction */
static int read_quantity(rctx *r, const block_slots *bs, const char *key, int kind, double *out)
{
    const plc_pair *p = slot(bs, key);
    if (!p) return 0;
    const plc_value *v = p->value;
    if (v->kind != PLC_VAL_NUMBER) { wrong_type(r, p, plc_unit_kind_name(kind)); return -1; }
    plc_quantity q;
    if (!eval_number(r, v, &q)) return -1;
    if (q.kind == -1 && kind != PLC_UNIT_PERCENT && kind != PLC_UNIT_COUNT) {
        plc_diag_error(r->d, v->loc, "'%s' needs a unit", key);
        plc_diag_hint(r->d, "'%s' expects %s, e.g. %s = %s", key, plc_unit_kind_describe(kind), key, unit_example(kind));
        return -1;
    }
    if (q.kind != -1 && q.kind != kind) {
        plc_diag_error(r->d, v->word_locs[v->nwords - 1], "'%s' expects %s, not %s ('%s')", key,
                       plc_unit_kind_name(kind), plc_unit_kind_name(q.kind), q.unit->name);
        plc_diag_hint(r->d, "'%s' expects %s, e.g. %s = %s", key, plc_unit_kind_describe(kind), key, unit_example(kind));
        return -1;
    }
    *out = q.value;
    return 1;
}

static const char *enum_text(rctx *r, const plc_value *v)
{
    /* `1f1b` scans as a number with a word attached; its spelling is the name */
    return v->kind == PLC_VAL_IDENT ? v->text : plc_value_source(r->a, v);
}

static int count_names(const char *const *names)
{
    int n = 0;
    while (names[n]) n++;
    return n;
}

/* one name of names[] from an identifier value; -1 after reporting */
static int enum_value(rctx *r, const char *key, const plc_value *v, const char *const *names)
{
    int n = count_names(names);
    if (v->kind == PLC_VAL_IDENT || v->kind == PLC_VAL_NUMBER) {
        const char *t = enum_text(r, v);
        for (int i = 0; i < n; i++)
            if (strcmp(names[i], t) == 0) return i;
        plc_diag_error(r->d, v->loc, "unknown %s '%s'", key, quote(r, t));
        const char *s = plc_suggest(t, names, n);
        if (s) plc_diag_hint(r->d, "did you mean '%s'? valid: %s", s, plc_join_names(r->a, names, n));
        else plc_diag_hint(r->d, "valid: %s", plc_join_names(r->a, names, n));
        return -1;
    }
    plc_diag_error(r->d, v->loc, "'%s' expects one of %s, not %s", key, plc_join_names(r->a, names, n), value_kind_name(v));
    return -1;
}

static int bool_value(rctx *r, const char *key, const plc_value *v)
{
    if (v->kind == PLC_VAL_IDENT) {
        if (!strcmp(v->text, "on") || !strcmp(v->text, "true")) return 1;
        if (!strcmp(v->text, "off") || !strcmp(v->text, "false")) return 0;
    }
    plc_diag_error(r->d, v->loc, "'%s' expects on or off, not %s", key,
                   v->kind == PLC_VAL_IDENT ? plc_arena_printf(r->a, "'%s'", quote(r, v->text)) : value_kind_name(v));
    plc_diag_hint(r->d, "on, off, true and false are accepted");
    return -1;
}

static int read_enum(rctx *r, const block_slots *bs, const char *key, const char *const *names, int *out)
{
    const plc_pair *p = slot(bs, key);
    if (!p) return 0;
    int i = enum_value(r, key, p->value, names);
    if (i < 0) return -1;
    *out = i;
    return 1;
}

static int read_bool(rctx *r, const block_slots *bs, const char *key, bool *out)
{
    const plc_pair *p = slot(bs, key);
    if (!p) return 0;
    int b = bool_value(r, key, p->value);
    if (b < 0) return -1;
    *out = b;
    return 1;
}

static int read_string(rctx *r, const block_slots *bs, const char *key, const plc_value **out)
{
    const plc_pair *p = slot(bs, key);
    if (!p) return 0;
    if (p->value->kind != PLC_VAL_STRING) {
        wrong_type(r, p, "a \"string\"");
        if (p->value->kind == PLC_VAL_IDENT) plc_diag_hint(r->d, "quote it: %s = \"%s\"", key, quote(r, p->value->text));
        return -1;
    }
    if (memchr(p->value->text, '\0', p->value->text_len) || p->value->text_len == 0) {
        plc_diag_error(r->d, p->value->loc, "'%s' must not be empty or hold a NUL byte", key);
        return -1;
    }
    *out = p->value;
    return 1;
}

/* ---- layout choices -------------------------------------------------------- */

typedef struct choice_domain {
    plc_key_type type;
    const char *const *names; /* CHOICE_ENUM */
    int64_t lo, hi;           /* CHOICE_INT */
    const char *hint;         /* CHOICE_INT: after a value out of range */
} choice_domain;

static bool choice_element(rctx *r, const char *key, const plc_value *v, const choice_domain *dom, int64_t *out)
{
    if (v->kind == PLC_VAL_IDENT && strcmp(v->text, "auto") == 0) {
        plc_diag_error(r->d, v->loc, "'auto' cannot be part of a set");
        plc_diag_hint(r->d, "write %s = auto, or list the values", key);
        return false;
    }
    if (dom->type == PLC_KEY_CHOICE_ENUM) {
        int i = enum_value(r, key, v, dom->names);
        if (i < 0 && strcmp(key, "attention") == 0 && v->kind == PLC_VAL_IDENT && strcmp(v->text, "mla") == 0)
            plc_diag_hint(r->d, "the layout's attention is the kernel; latent attention is the model's: "
                                "kv_lora_rank = N with its head widths (docs/language.md)");
        *out = i;
        return i >= 0;
    }
    if (dom->type == PLC_KEY_CHOICE_BOOL) {
        int b = bool_value(r, key, v);
        *out = b;
        return b >= 0;
    }
    if (v->kind != PLC_VAL_NUMBER) {
        plc_diag_error(r->d, v->loc, "'%s' expects a whole number, not %s", key, value_kind_name(v));
        return false;
    }
    plc_quantity q;
    if (!eval_number(r, v, &q)) return false;
    if (q.kind != -1 || !q.is_int) {
        plc_diag_error(r->d, v->loc, "'%s' expects a whole number", key);
        return false;
    }
    if (q.ivalue < dom->lo || q.ivalue > dom->hi) {
        if (dom->hi - dom->lo > 16)
            plc_diag_error(r->d, v->loc, "'%s' must be at %s %lld, not %lld", key, q.ivalue < dom->lo ? "least" : "most",
                           (long long)(q.ivalue < dom->lo ? dom->lo : dom->hi), (long long)q.ivalue);
        else
            plc_diag_error(r->d, v->loc, "'%s' must be between %lld and %lld, not %lld", key, (long long)dom->lo,
                           (long long)dom->hi, (long long)q.ivalue);
        if (dom->hint) plc_diag_hint(r->d, "%s", dom->hint);
        return false;
    }
    *out = q.ivalue;
    return true;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static int read_choice(rctx *r, const block_slots *bs, const char *key, const choice_domain *dom, plc_choice *out)
{
    memset(out, 0, sizeof *out);
    out->kind = PLC_CHOICE_AUTO;
    const plc_pair *p = slot(bs, key);
    if (!p) return 0;
    const plc_value *v = p->value;
    if (v->kind == PLC_VAL_IDENT && strcmp(v->text, "auto") == 0) return 1;
    if (v->kind == PLC_VAL_RANGE) {
        if (dom->type != PLC_KEY_CHOICE_INT) {
            plc_diag_error(r->d, v->loc, "'%s' takes a set, not a range", key);
            plc_diag_hint(r->d, "list the values: %s in {a, b}", key);
            return -1;
        }
        int64_t lo, hi;
        if (!choice_element(r, key, v->lo, dom, &lo) || !choice_element(r, key, v->hi, dom, &hi)) return -1;
        if (lo > hi) {
            plc_diag_error(r->d, v->loc, "empty range %lld..%lld", (long long)lo, (long long)hi);
            plc_diag_hint(r->d, "a range is lo..hi with lo <= hi");
            return -1;
        }
        out->kind = PLC_CHOICE_RANGE;
        out->lo = lo;
        out->hi = hi;
        return 1;
    }
    out->kind = PLC_CHOICE_SET;
    if (v->kind != PLC_VAL_SET) {
        if (!choice_element(r, key, v, dom, &out->v[0])) return -1;
        out->n = 1;
        return 1;
    }
    if (v->nitems == 0) {
        plc_diag_error(r->d, v->loc, "empty set");
        plc_diag_hint(r->d, "write %s = auto to let the solver choose", key);
        return -1;
    }
    if (v->nitems > PLC_CHOICE_MAX) {
        plc_diag_error(r->d, v->items[PLC_CHOICE_MAX]->loc, "a set holds at most %d values", PLC_CHOICE_MAX);
        plc_diag_hint(r->d, "use a range lo..hi or auto");
        return -1;
    }
    bool ok = true;
    for (int i = 0; i < v->nitems; i++) {
        int64_t x;
        if (!choice_element(r, key, v->items[i], dom, &x)) { ok = false; continue; }
        bool dup = false;
        for (int j = 0; j < out->n; j++)
            if (out->v[j] == x) dup = true;
        if (dup) {
            plc_diag_warning(r->d, v->items[i]->loc, "value listed twice in '%s'", key);
            continue;
        }
        out->v[out->n++] = x;
    }
    if (!ok) return -1;
    qsort(out->v, (size_t)out->n, sizeof out->v[0], cmp_i64);
    return 1;
}

/* the readers above, each marking its key bad after an error */
static int get_int(rctx *r, const block_slots *bs, const char *key, int64_t lo, int64_t hi, int64_t *out)
{
    return noted(r, bs, key, read_int(r, bs, key, lo, hi, out));
}
static int get_real(rctx *r, const block_slots *bs, const char *key, double lo, bool lo_open, double hi, bool hi_open,
                    double *out)
{
    return noted(r, bs, key, read_real(r, bs, key, lo, lo_open, hi, hi_open, out));
}
static int get_quantity(rctx *r, const block_slots *bs, const char *key, int kind, double *out)
{
    return noted(r, bs, key, read_quantity(r, bs, key, kind, out));
}
static int get_enum(rctx *r, const block_slots *bs, const char *key, const char *const *names, int *out)
{
    return noted(r, bs, key, read_enum(r, bs, key, names, out));
}
static int get_bool(rctx *r, const block_slots *bs, const char *key, bool *out)
{
    return noted(r, bs, key, read_bool(r, bs, key, out));
}
static int get_string(rctx *r, const block_slots *bs, const char *key, const plc_value **out)
{
    return noted(r, bs, key, read_string(r, bs, key, out));
}
static int get_choice(rctx *r, const block_slots *bs, const char *key, const choice_domain *dom, plc_choice *out)
{
    return noted(r, bs, key, read_choice(r, bs, key, dom, out));
}

/* ---- blocks ------------------------------------------------------------------ */

/* A sequence length with k or M is read the binary way, as people mean
 * it (8k: 8192, not 8000), with a note that says so. */
static void seq_len_binary(rctx *r, const block_slots *bs, plc_model *m)
{
    const plc_pair *p = slot(bs, "seq_len");
    const plc_value *v = p->value;
    plc_number n;
    if (v->nwords != 1 || !plc_number_parse(v->text, &n)) return;
    double bin = plc_multiplier_binary(v->words[0], strlen(v->words[0])), x = n.d * bin;
    if (bin == 0) return;
    if (x != floor(x) || x > (double)(1 << 24)) {
        plc_diag_error(r->d, v->loc, "seq_len = %s read as %s x %.0f is %s", plc_value_source(r->a, v), v->text, bin,
                       x != floor(x) ? "not a whole number" : "more than 16777216");
        plc_diag_hint(r->d, "a sequence length reads k as 1024 and M as 1048576; write the number of tokens");
        mark_bad(r, bs, "seq_len");
        return;
    }
    m->seq_len = (int64_t)x;
    plc_diag_info(r->d, v->loc, "seq_len = %s read as %s x 2^%d = %lld tokens", plc_value_source(r->a, v), v->text,
                  bin == 1024 ? 10 : bin == 1048576 ? 20 : 30, (long long)m->seq_len);
    double dec = n.d * plc_multiplier(v->words[0], strlen(v->words[0]));
    plc_diag_hint(r->d, "a sequence length counts in powers of two; write seq_len = %.0f for %.0f tokens", dec, dec);
}

/* capacity_factor: dropless (0), or a number of fair shares above 0 */
static int read_capacity(rctx *r, const block_slots *bs, double *out)
{
    const plc_pair *p = slot(bs, "capacity_factor");
    if (!p) return 0;
    const plc_value *v = p->value;
    if (v->kind == PLC_VAL_IDENT && strcmp(v->text, "dropless") == 0) {
        *out = 0;
        return 1;
    }
    if (v->kind == PLC_VAL_NUMBER) return read_real(r, bs, "capacity_factor", 0, true, 1024, false, out);
    plc_diag_error(r->d, v->loc, "'capacity_factor' expects dropless or a number, not %s",
                   v->kind == PLC_VAL_IDENT ? plc_arena_printf(r->a, "'%s'", quote(r, v->text)) : value_kind_name(v));
    const char *const dropless[] = {"dropless"};
    if (v->kind == PLC_VAL_IDENT && plc_suggest(v->text, dropless, 1)) plc_diag_hint(r->d, "did you mean 'dropless'?");
    else plc_diag_hint(r->d, "dropless routes every token to its experts; a number such as 1.25 lets an expert take "
                             "that many fair shares of the tokens and drops the rest");
    return -1;
}

/* The mixture-of-experts keys (docs/model.md), each in its range; how they
 * agree with each other and with the rest of the model is spec_checks.c's
 * (check_moe). The expert widths default to the model's ffn_hidden. */
static void resolve_moe(rctx *r, const block_slots *bs, plc_model *m)
{
    plc_moe *e = &m->moe;
    memset(e, 0, sizeof *e);
    e->moe_every = 1;
    e->route_scale = 1;
    get_int(r, bs, "experts", 0, 1 << 14, &e->experts);
    get_int(r, bs, "experts_per_token", 1, 1 << 14, &e->top_k);
    get_int(r, bs, "shared_experts", 0, 1 << 10, &e->shared_experts);
    e->expert_ffn_hidden = m->ffn_hidden;
    if (get_int(r, bs, "expert_ffn_hidden", 1, 1 << 22, &e->expert_ffn_hidden) == 0 && is_bad(r, bs, "ffn_hidden"))
        mark_bad(r, bs, "expert_ffn_hidden");
    e->shared_ffn_hidden = e->expert_ffn_hidden;
    if (get_int(r, bs, "shared_expert_ffn_hidden", 1, 1 << 22, &e->shared_ffn_hidden) == 0 &&
        is_bad(r, bs, "expert_ffn_hidden"))
        mark_bad(r, bs, "shared_expert_ffn_hidden");
    get_int(r, bs, "dense_layers", 0, 1 << 14, &e->dense_layers);
    get_int(r, bs, "moe_every", 1, 1 << 14, &e->moe_every);
    int router = PLC_ROUTER_SOFTMAX;
    get_enum(r, bs, "router", plc_router_names, &router);
    e->router = (plc_router)router;
    get_int(r, bs, "router_groups", 1, 1 << 14, &e->router_groups);
    get_int(r, bs, "router_groups_top", 1, 1 << 14, &e->router_groups_top);
    get_real(r, bs, "route_scale", 0, true, 1e6, false, &e->route_scale);
    get_real(r, bs, "aux_loss", 0, false, 1e6, false, &e->aux_loss);
    get_bool(r, bs, "expert_bias", &e->expert_bias);
    noted(r, bs, "capacity_factor", read_capacity(r, bs, &e->capacity_factor));
}

/* Multi-head latent attention's keys (docs/model.md), each in its range;
 * kv_lora_rank > 0 turns it on, and check_mla (spec_checks.c) checks the
 * rest against it. */
static void resolve_mla(rctx *r, const block_slots *bs, plc_model *m)
{
    plc_mla *a = &m->mla;
    memset(a, 0, sizeof *a);
    get_int(r, bs, "q_lora_rank", 0, 1 << 16, &a->q_rank);
    get_int(r, bs, "kv_lora_rank", 0, 1 << 16, &a->kv_rank);
    get_int(r, bs, "qk_nope_head_dim", 1, 1 << 10, &a->nope_head_dim);
    get_int(r, bs, "qk_rope_head_dim", 1, 1 << 10, &a->rope_head_dim);
    get_int(r, bs, "v_head_dim", 1, 1 << 10, &a->v_head_dim);
}

static void resolve_model(rctx *r, const block_slots *bs, plc_model *m)
{
    snprintf(m->name, sizeof m->name, "%s", "model");
    if (bs->block && bs->block->name) {
        if (strlen(bs->block->name) >= sizeof m->name || strlen(bs->block->name) == 0)
            plc_diag_error(r->d, bs->block->name_loc, "model name must be 1 to %zu characters", sizeof m->name - 1);
        else snprintf(m->name, sizeof m->name, "%s", bs->block->name);
    }
    /* sane limits, far beyond any real model, so that every product of
     * shapes (parameters, activations) stays well inside 64 bits */
    int arch = PLC_ARCH_LLAMA;
    bool arch_ok = get_enum(r, bs, "arch", plc_arch_names, &arch) >= 0;
    m->arch = (plc_arch)arch;
    bool gpt = m->arch == PLC_ARCH_GPT;
    get_int(r, bs, "layers", 1, 1 << 14, &m->layers);
    get_int(r, bs, "hidden", 1, 1 << 20, &m->hidden);
    /* the GPT block's MLP is 4 x hidden unless told; Llama's SwiGLU width has no rule */
    if (get_int(r, bs, "ffn_hidden", 1, 1 << 22, &m->ffn_hidden) == 0) {
        if (gpt && !is_bad(r, bs, "hidden")) m->ffn_hidden = 4 * m->hidden;
        else mark_bad(r, bs, "ffn_hidden");
        if (!gpt && bs->block && arch_ok) { /* a misspelt arch is reported already */
            const plc_key_def *k = &bs->def->keys[plc_key_index(bs->def, "ffn_hidden")];
            plc_diag_error(r->d, bs->block->kind_loc, "block 'model' lacks the required key 'ffn_hidden'");
            plc_diag_hint(r->d, "%s: %s", k->name, k->doc);
        }
    }
    get_int(r, bs, "heads", 1, 1 << 16, &m->heads);
    if (get_int(r, bs, "kv_heads", 1, 1 << 16, &m->kv_heads) == 0) {
        m->kv_heads = m->heads;
        if (is_bad(r, bs, "heads")) mark_bad(r, bs, "kv_heads");
    }
    m->head_dim = 0;
    get_int(r, bs, "head_dim", 1, 1 << 10, &m->head_dim);
    m->qk_norm = false;
    get_bool(r, bs, "qk_norm", &m->qk_norm);
    get_int(r, bs, "vocab", 1, 1 << 24, &m->vocab);
    if (get_int(r, bs, "seq_len", 1, 1 << 24, &m->seq_len) > 0) seq_len_binary(r, bs, m);
    int positions = gpt ? PLC_POS_LEARNED : PLC_POS_ROPE;
    get_enum(r, bs, "positions", plc_positions_names, &positions);
    m->positions = (plc_positions)positions;
    m->tie_embeddings = false;
    get_bool(r, bs, "tie_embeddings", &m->tie_embeddings);
    m->norm_eps = 1e-5;
    get_real(r, bs, "norm_eps", 0, true, 1, false, &m->norm_eps);
    m->rope_theta = 10000;
    get_real(r, bs, "rope_theta", 0, true, 1e12, false, &m->rope_theta);
    const plc_pair *theta = slot(bs, "rope_theta");
    if (theta && m->positions == PLC_POS_LEARNED) {
        plc_diag_warning(r->d, theta->key_loc, "'rope_theta' does nothing with learned positions");
        plc_diag_hint(r->d, "set positions = rope to use rotary positions, or drop rope_theta");
    }
    resolve_moe(r, bs, m);
    resolve_mla(r, bs, m);
}

/* a token count's binary reading (4M tokens: 4 x 2^20), when it has a
 * multiplier and that reading is whole; 0 otherwise */
static int64_t tokens_binary(const plc_value *v)
{
    plc_number n;
    if (v->nwords != 2 || !plc_number_parse(v->text, &n)) return 0;
    double bin = plc_multiplier_binary(v->words[0], strlen(v->words[0])), x = n.d * bin;
    return bin > 0 && x == floor(x) && x <= 9.0e15 ? (int64_t)x : 0;
}

static void resolve_train(rctx *r, const block_slots *bs, plc_train *t, bool *batch_in_tokens, int64_t *binary)
{
    *binary = 0;
    const int64_t big = INT64_C(1) << 40;
    *batch_in_tokens = false;
    const plc_pair *gb = slot(bs, "global_batch");
    if (gb) {
        plc_quantity q;
        const plc_value *v = gb->value;
        bool read = false;
        if (v->kind != PLC_VAL_NUMBER) wrong_type(r, gb, "a number of sequences or a token count");
        else if (eval_number(r, v, &q)) {
            if (q.kind != -1 && q.kind != PLC_UNIT_TOKENS) {
                plc_diag_error(r->d, v->word_locs[v->nwords - 1], "'global_batch' expects sequences or tokens, not %s ('%s')",
                               plc_unit_kind_name(q.kind), q.unit->name);
                plc_diag_hint(r->d, "write sequences (global_batch = 1024) or tokens (global_batch = 4M tokens)");
            } else if (!q.is_int || q.ivalue < 1 || q.ivalue > big) {
                plc_diag_error(r->d, v->loc, "'global_batch' must be a whole number between 1 and %lld", (long long)big);
            } else {
                t->global_batch = q.ivalue;
                *batch_in_tokens = q.kind == PLC_UNIT_TOKENS;
                if (*batch_in_tokens) *binary = tokens_binary(v);
                read = true;
            }
        }
        if (!read) mark_bad(r, bs, "global_batch");
    }
    get_int(r, bs, "steps", 1, 1 << 30, &t->steps);
    int prec = PLC_PREC_BF16, opt = 0;
    get_enum(r, bs, "precision", plc_precision_names, &prec);
    t->precision = (plc_precision)prec;
    get_enum(r, bs, "optimizer", plc_optimizer_names, &opt);
    int engine = PLC_ENGINE_PLRUN;
    get_enum(r, bs, "engine", plc_engine_names, &engine);
    t->engine = (plc_engine)engine;
    int64_t seed = 1;
    get_int(r, bs, "seed", 0, INT64_MAX, &seed);
    t->seed = (uint64_t)seed;
    t->data_path = NULL;
    const plc_pair *data = slot(bs, "data");
    if (data) {
        const plc_value *v = data->value;
        if (v->kind == PLC_VAL_IDENT && strcmp(v->text, "synthetic") == 0) {
            t->data_path = NULL;
        } else if (v->kind == PLC_VAL_STRING && v->text_len > 0 && !memchr(v->text, '\0', v->text_len)) {
            /* relative to the spec's directory in the file, to the cwd in -D;
             * the plan stores it relative to the spec's directory, an
             * absolute path as written, both normalised (docs/data.md) */
            const char *dir = data->overridden ? NULL : r->o->spec_dir;
            const char *abs = plc_path_absolute(r->a, dir, v->text);
            const char *spec_abs = plc_path_absolute(r->a, r->o->spec_dir, ".");
            if (!abs || !spec_abs) {
                plc_diag_error(r->d, v->loc,
                               "cannot resolve the token file's path: the working directory is unreadable");
            } else {
                t->data_path = v->text[0] == '/' ? abs : plc_path_relative(r->a, spec_abs, abs);
                r->data = v;
                /* plc reads what plrun will: the stored path, beside the
                 * spec (-D: the absolute path, for its message) */
                const char *sdir = r->o->spec_dir;
                if (data->overridden || t->data_path[0] == '/') r->data_open = abs;
                else if (!sdir || !sdir[0]) r->data_open = t->data_path;
                else r->data_open = plc_arena_printf(r->a, "%s/%s", sdir, t->data_path);
            }
        } else {
            plc_diag_error(r->d, v->loc, "'data' expects synthetic or a token file \"path\"");
            if (v->kind == PLC_VAL_IDENT) plc_diag_hint(r->d, "quote a path: data = \"%s\"", quote(r, v->text));
        }
    }
    t->beta1 = 0.9;
    t->beta2 = 0.95;
    t->eps = 1e-8;
    t->weight_decay = 0.1;
    get_real(r, bs, "adamw.beta1", 0, false, 1, true, &t->beta1);
    get_real(r, bs, "adamw.beta2", 0, false, 1, true, &t->beta2);
    get_real(r, bs, "adamw.eps", 0, true, 1, false, &t->eps);
    get_real(r, bs, "adamw.weight_decay", 0, false, 10, false, &t->weight_decay);
    t->lr_peak = 3e-4;
    get_real(r, bs, "lr.peak", 0, true, 100, false, &t->lr_peak);
    t->lr_floor = t->lr_peak / 10;
    if (get_real(r, bs, "lr.floor", 0, false, INFINITY, false, &t->lr_floor) > 0 && !is_bad(r, bs, "lr.peak") &&
        t->lr_floor > t->lr_peak) {
        plc_diag_error(r->d, slot(bs, "lr.floor")->value->loc, "'lr.floor' is above 'lr.peak' (%g)", t->lr_peak);
        plc_diag_hint(r->d, "the learning rate decays from lr.peak down to lr.floor");
    }
    t->warmup_steps = 0;
    get_int(r, bs, "lr.warmup", 0, 1 << 30, &t->warmup_steps);
    t->decay_steps = t->steps;
    int has_decay = get_int(r, bs, "lr.decay_steps", 1, 1 << 30, &t->decay_steps);
    bool decay_known = has_decay > 0 || (has_decay == 0 && !is_bad(r, bs, "steps"));
    if (decay_known && t->decay_steps > 0 && t->warmup_steps > t->decay_steps) {
        const plc_pair *w = slot(bs, "lr.warmup");
        plc_diag_error(r->d, w->value->loc, "'lr.warmup' = %lld is longer than the decay (%s = %lld)",
                       (long long)t->warmup_steps, has_decay > 0 ? "lr.decay_steps" : "steps", (long long)t->decay_steps);
        plc_diag_hint(r->d, "warmup ends before cosine decay does: lr.warmup <= lr.decay_steps");
    }
    t->grad_clip = 1.0;
    get_real(r, bs, "grad_clip", 0, false, 1e6, false, &t->grad_clip);
}

static void resolve_layout(rctx *r, const block_slots *bs, plc_layout_spec *l)
{
    const choice_domain degree = {PLC_KEY_CHOICE_INT, NULL, 1, 1 << 20,
                                  "degrees and micro-batch sizes are whole numbers from 1, or auto"};
    const choice_domain onoff = {PLC_KEY_CHOICE_BOOL, NULL, 0, 1, NULL};
    const choice_domain zero = {PLC_KEY_CHOICE_INT, NULL, 0, 3,
                                "ZeRO stage 0: none, 1: optimizer state sharded, 2: and gradients, 3: and weights"};
    const choice_domain schedule = {PLC_KEY_CHOICE_ENUM, plc_schedule_names, 0, 0, NULL};
    const choice_domain recompute = {PLC_KEY_CHOICE_ENUM, plc_recompute_names, 0, 0, NULL};
    const choice_domain attention = {PLC_KEY_CHOICE_ENUM, plc_attention_names, 0, 0, NULL};
    const choice_domain layers = {PLC_KEY_CHOICE_INT, NULL, 0, 1 << 14,
                                  "recompute_layers: k of recompute = block, n of every (>= 1); 0 with the other policies"};
    for (int d = 0; d < PLC_LD_COUNT; d++) {
        const choice_domain *dom = &degree;
        switch (plc_layout_dim_kind((plc_layout_dim)d)) {
        case PLC_DIMK_DEGREE: dom = &degree; break;
        case PLC_DIMK_ONOFF: dom = &onoff; break;
        case PLC_DIMK_ZERO: dom = &zero; break;
        case PLC_DIMK_SCHEDULE: dom = &schedule; break;
        case PLC_DIMK_RECOMPUTE: dom = &recompute; break;
        case PLC_DIMK_ATTENTION: dom = &attention; break;
        case PLC_DIMK_LAYERS: dom = &layers; break;
        }
        get_choice(r, bs, plc_layout_dim_key((plc_layout_dim)d), dom,
                   plc_layout_spec_choice_mut(l, (plc_layout_dim)d));
    }
    l->memory_limit = 1.0;
    if (get_quantity(r, bs, "memory_limit", PLC_UNIT_PERCENT, &l->memory_limit) > 0 &&
        !(l->memory_limit > 0 && l->memory_limit <= 1)) {
        plc_diag_error(r->d, slot(bs, "memory_limit")->value->loc, "'memory_limit' must be above 0%% and at most 100%%");
        plc_diag_hint(r->d, "a share of device memory: 90%% or 0.9");
    }
    int obj = PLC_OBJ_TIME;
    get_enum(r, bs, "objective", plc_objective_names, &obj);
    l->objective = (plc_objective)obj;
}

/* ---- CI gates ----------------------------------------------------------------- */

/* one threshold of the gates block: a share in (0, 100%], or [0, 100%] for
 * max_regression; true when set */
static bool get_gate(rctx *r, const block_slots *bs, const char *key, bool zero_ok, double *out)
{
    double v;
    if (get_quantity(r, bs, key, PLC_UNIT_PERCENT, &v) <= 0) return false;
    if (!(v <= 1 && (zero_ok ? v >= 0 : v > 0))) {
        plc_diag_error(r->d, slot(bs, key)->value->loc, "'%s' must be %s 0%% and at most 100%%", key,
                       zero_ok ? "at least" : "above");
        plc_diag_hint(r->d, "a percentage: %s = %s", key, zero_ok ? "2%" : "80%");
        return false;
    }
    *out = v;
    return true;
}

static void resolve_gates(rctx *r, const block_slots *bs, plc_gate_spec *g)
{
    memset(g, 0, sizeof *g);
    get_gate(r, bs, "max_memory", false, &g->max_memory);
    get_gate(r, bs, "min_mfu", false, &g->min_mfu);
    g->has_regression = get_gate(r, bs, "max_regression", true, &g->max_regression);
}

/* ---- cluster and catalog ----------------------------------------------------- */

static bool hw_value_ok(const plc_hw_field *f, double v)
{
    if (f->unit == PLC_UNIT_PERCENT) return v > 0 && v <= 1;
    return v >= 0 && v <= 1e30; /* 1e30 bytes, FLOPS, seconds: beyond any machine */
}

/* the catalog file: --catalog/$PLC_CATALOG, cluster.catalog, then the built-in
 * one beside the program (frontend.h) */
static bool load_catalog(rctx *r, const block_slots *bs, plc_catalog *cat)
{
    const plc_value *cv = NULL;
    int got = get_string(r, bs, "catalog", &cv);
    if (got < 0) return false;
    const char *path = r->o->catalog_path;
    if (!path && cv) {
        const plc_pair *p = slot(bs, "catalog");
        if (cv->text[0] == '/' || p->overridden || !r->o->spec_dir || !r->o->spec_dir[0]) path = cv->text;
        else path = plc_arena_printf(r->a, "%s/%s", r->o->spec_dir, cv->text);
        FILE *f = fopen(path, "rb");
        if (!f) {
            plc_diag_error(r->d, cv->loc, "cannot open the catalog '%s'", quote(r, path));
            plc_diag_hint(r->d, "a relative catalog path is relative to the spec's directory");
            return false;
        }
        fclose(f);
    }
    if (!path) {
        const char *tried;
        path = plc_builtin_catalog(r->a, &tried);
        if (!path) {
            plc_diag_error_noloc(r->d, "no hardware catalog found: looked for the built-in one at %s", tried);
            plc_diag_hint(r->d, "name a catalog with --catalog FILE or the environment variable PLC_CATALOG");
            return false;
        }
    }
    return plc_catalog_load(r->a, r->d, path, cat) == 0;
}

/* true when the GPU's figures are known: its catalog entry, with every
 * override of the block valid */
static bool resolve_cluster(rctx *r, const block_slots *bs, plc_cluster *c)
{
    bool figures_ok = true;
    c->nodes = 1;
    c->gpus_per_node = 8;
    get_int(r, bs, "nodes", 1, 1 << 20, &c->nodes);
    get_int(r, bs, "gpus_per_node", 1, 1 << 12, &c->gpus_per_node);
    /* overrides of catalog figures, applied after the entry is found */
    double over[64];
    bool has[64] = {false};
    for (int i = 0; i < plc_nhw_fields && i < 64; i++) {
        const plc_hw_field *f = &plc_hw_fields[i];
        int got = get_quantity(r, bs, f->key, f->unit, &over[i]);
        if (got < 0) figures_ok = false;
        if (got <= 0) continue;
        if (!hw_value_ok(f, over[i])) {
            mark_bad(r, bs, f->key);
            figures_ok = false;
            plc_diag_error(r->d, slot(bs, f->key)->value->loc, "'%s' is out of range", f->key);
            plc_diag_hint(r->d, f->unit == PLC_UNIT_PERCENT ? "a share is above 0 and at most 100%%"
                                                            : "figures are not negative and at most 1e30");
            continue;
        }
        has[i] = true;
        r->hw_set |= 1ull << i;
    }
    const plc_value *gpu = NULL;
    if (get_string(r, bs, "gpu", &gpu) <= 0) return false;
    plc_catalog cat;
    if (!load_catalog(r, bs, &cat)) {
        mark_bad(r, bs, "gpu");
        return false;
    }
    const plc_hw *hw = plc_catalog_find(&cat, gpu->text);
    if (!hw) {
        plc_diag_error(r->d, gpu->loc, "unknown GPU '%s' (not in %s)", quote(r, gpu->text), cat.src->name);
        const char **names = PLC_NEW_ARRAY(r->a, const char *, cat.n + 1);
        for (int i = 0; i < cat.n; i++) names[i] = cat.entries[i].name;
        const char *s = plc_suggest(gpu->text, names, cat.n);
        if (s) plc_diag_hint(r->d, "did you mean '%s'?", s);
        plc_diag_hint(r->d, "known: %s", plc_catalog_names(r->a, &cat));
        mark_bad(r, bs, "gpu");
        return false;
    }
    c->hw = *hw;
    for (int i = 0; i < plc_nhw_fields && i < 64; i++)
        if (has[i]) *(double *)((char *)&c->hw + plc_hw_fields[i].offset) = over[i];
    return figures_ok;
}

/* ---- the engine's profile ---------------------------------------------------- */

/* The profile of train.engine from engines.yaml ($PLC_ENGINES, beside the
 * catalog named by --catalog/$PLC_CATALOG, else the built-in one). Its
 * alloc_overhead and grad_bytes (when above 0) replace the catalog's; a
 * value the cluster block sets replaces both. */
static bool resolve_engine(rctx *r, const block_slots *train, plc_job *job, bool cluster_ok)
{
    plc_engine e = job->train.engine;
    const plc_pair *p = slot(train, "engine");
    if (plc_engine_profile_load(r->a, r->d, e, p ? &p->value->loc : NULL, r->o->catalog_path, &job->engine))
        return false;
    if (!cluster_ok) return true;
    for (int i = 0; i < plc_nhw_fields && i < 64; i++) {
        if (r->hw_set >> i & 1u) continue;
        size_t off = plc_hw_fields[i].offset;
        double *to = (double *)((char *)&job->cluster.hw + off);
        if (off == offsetof(plc_hw, alloc_overhead) && job->engine.alloc_overhead > 0) *to = job->engine.alloc_overhead;
        if (off == offsetof(plc_hw, grad_bytes) && job->engine.grad_bytes > 0) *to = job->engine.grad_bytes;
    }
    return true;
}

/* ---- the job ------------------------------------------------------------------ */

int plc_resolve(plc_arena *a, plc_diag *d, const plc_ast *ast, const plc_resolve_opts *o, plc_job *job)
{
    int before = d->errors;
    plc_diag_defer(d, ast->src);
    rctx r = {a, d, ast, o, 0, NULL, NULL, {0}};
    block_slots slots[8];
    memset(slots, 0, sizeof slots);
    collect_blocks(&r, slots);
    const block_slots *model = &slots[0], *cluster = &slots[1], *train = &slots[2], *layout = &slots[3];
    const block_slots *gates = &slots[4];

    resolve_model(&r, model, &job->model);
    bool hw_known = cluster->block && resolve_cluster(&r, cluster, &job->cluster);
    bool batch_in_tokens;
    int64_t batch_binary;
    resolve_train(&r, train, &job->train, &batch_in_tokens, &batch_binary);
    /* the token file's own errors do not hide the checks of the other keys;
     * its fit to the model reads only the model's vocab and seq_len */
    bool shape_ok = model->block && !is_bad(&r, model, "vocab") && !is_bad(&r, model, "seq_len");
    if (r.data)
        plc_data_file_check(d, r.data->loc, r.data->text, r.data_open, shape_ok ? &job->model : NULL, o->read_data,
                            &job->train);
    bool engine_ok = train->block && !is_bad(&r, train, "engine") && resolve_engine(&r, train, job, hw_known);
    resolve_layout(&r, layout, &job->layout);
    resolve_gates(&r, gates, &job->gates);

    /* cross-block checks read every value that is valid: a key in error
     * (bad) skips only the checks that read it */
    plc_spec_facts f = {.model = model->block ? &job->model : NULL,
                        .cluster = cluster->block ? &job->cluster : NULL,
                        .hw_known = hw_known,
                        .train = train->block ? &job->train : NULL,
                        .layout = &job->layout,
                        .batch_in_tokens = batch_in_tokens,
                        .batch_tokens_binary = batch_binary,
                        .engine = engine_ok ? &job->engine : NULL,
                        .engine_id = job->train.engine,
                        .model_block = model->block,
                        .cluster_block = cluster->block,
                        .train_block = train->block,
                        .layout_block = layout->block};
    memcpy(f.bad, r.bad, sizeof f.bad);
    plc_spec_check(a, d, &f);
    plc_diag_flush(d);
    return d->errors - before;
}
