/* safetensors.c: validating reader and atomic writer (see safetensors.h). */
#include "runtime/safetensors.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "common/errmsg.h"
#include "plc/le.h"
#include "common/atomic_file.h"
#include "runtime/file_map.h"
#include "runtime/json.h"

static const char *const dtype_names[PLC_ST_DTYPE_COUNT] = {
    "F64", "F32", "F16", "BF16", "I64", "I32", "I16", "I8", "U64", "U32", "U16", "U8", "BOOL",
};
static const unsigned char dtype_sizes[PLC_ST_DTYPE_COUNT] = {8, 4, 2, 2, 8, 4, 2, 1, 8, 4, 2, 1, 1};

const char *plc_st_dtype_name(plc_st_dtype d)
{
    return (unsigned)d < PLC_ST_DTYPE_COUNT ? dtype_names[d] : NULL;
}

size_t plc_st_dtype_size(plc_st_dtype d) { return (unsigned)d < PLC_ST_DTYPE_COUNT ? dtype_sizes[d] : 0; }

/* ---- reader ---- */

static int cmp_by_name(const void *a, const void *b)
{
    return strcmp(((const plc_st_tensor *)a)->name, ((const plc_st_tensor *)b)->name);
}

static int cmp_by_begin(const void *a, const void *b)
{
    const plc_st_tensor *x = *(const plc_st_tensor *const *)a, *y = *(const plc_st_tensor *const *)b;
    if (x->begin != y->begin) return x->begin < y->begin ? -1 : 1;
    return x->end < y->end ? -1 : x->end > y->end;
}

static bool nonneg_int(const plc_json *v) { return v && v->type == PLC_JSON_NUMBER && v->is_int && v->integer >= 0; }

/* one "name": {...} entry of the header */
static int parse_tensor(const plc_json *m, plc_st_tensor *t, uint64_t data_size, char *err, size_t errlen)
{
    t->name = m->key;
    if (m->type != PLC_JSON_OBJECT) return plc_fail(err, errlen, "tensor '%s': entry is not an object", t->name);
    const plc_json *dtype = NULL, *shape = NULL, *offsets = NULL;
    for (const plc_json *c = m->child; c; c = c->next) {
        const plc_json **slot = strcmp(c->key, "dtype") == 0         ? &dtype
                                : strcmp(c->key, "shape") == 0        ? &shape
                                : strcmp(c->key, "data_offsets") == 0 ? &offsets
                                                                      : NULL;
        if (!slot) return plc_fail(err, errlen, "tensor '%s': unknown field '%s'", t->name, c->key);
        if (*slot) return plc_fail(err, errlen, "tensor '%s': field '%s' given twice", t->name, c->key);
        *slot = c;
    }
    if (!dtype || dtype->type != PLC_JSON_STRING)
        return plc_fail(err, errlen, "tensor '%s': missing or non-string \"dtype\"", t->name);
    t->dtype = PLC_ST_DTYPE_COUNT;
    for (int d = 0; d < PLC_ST_DTYPE_COUNT; d++)
        if (strcmp(dtype->str, dtype_names[d]) == 0) t->dtype = (plc_st_dtype)d;
    if (t->dtype == PLC_ST_DTYPE_COUNT)
        return plc_fail(err, errlen, "tensor '%s': unsupported dtype \"%s\"", t->name, dtype->str);
    if (!shape || shape->type != PLC_JSON_ARRAY)
        return plc_fail(err, errlen, "tensor '%s': missing or non-array \"shape\"", t->name);
    if (shape->n > PLC_ST_MAX_DIMS)
        return plc_fail(err, errlen, "tensor '%s': %zu dimensions, at most %d supported", t->name, shape->n,
                        PLC_ST_MAX_DIMS);
    if (!offsets || offsets->type != PLC_JSON_ARRAY || offsets->n != 2 || !nonneg_int(offsets->child) ||
        !nonneg_int(offsets->child->next))
        return plc_fail(err, errlen, "tensor '%s': \"data_offsets\" must be two non-negative integers", t->name);
    t->begin = (uint64_t)offsets->child->integer;
    t->end = (uint64_t)offsets->child->next->integer;
    if (t->begin > t->end)
        return plc_fail(err, errlen, "tensor '%s': data_offsets [%llu, %llu] are reversed", t->name,
                        (unsigned long long)t->begin, (unsigned long long)t->end);
    if (t->end > data_size)
        return plc_fail(err, errlen, "tensor '%s': data_offsets end %llu is past the data section (%llu bytes)",
                        t->name, (unsigned long long)t->end, (unsigned long long)data_size);
    /* the byte size of the shape must equal the span, computed without overflow */
    uint64_t span = t->end - t->begin;
    t->ndim = (int)shape->n;
    bool has_zero = false;
    int i = 0;
    for (const plc_json *d = shape->child; d; d = d->next, i++) {
        if (!nonneg_int(d))
            return plc_fail(err, errlen, "tensor '%s': shape entries must be non-negative integers", t->name);
        t->shape[i] = d->integer;
        has_zero |= d->integer == 0;
    }
    uint64_t bytes = has_zero ? 0 : dtype_sizes[t->dtype];
    for (i = 0; !has_zero && i < t->ndim; i++) {
        if (bytes > span / (uint64_t)t->shape[i])
            return plc_fail(err, errlen, "tensor '%s': %s shape needs more than the %llu bytes data_offsets span",
                            t->name, dtype_names[t->dtype], (unsigned long long)span);
        bytes *= (uint64_t)t->shape[i];
    }
    if (bytes != span)
        return plc_fail(err, errlen, "tensor '%s': %s shape needs %llu bytes but data_offsets span %llu", t->name,
                        dtype_names[t->dtype], (unsigned long long)bytes, (unsigned long long)span);
    t->numel = (int64_t)(bytes / dtype_sizes[t->dtype]);
    return 0;
}

static int parse_metadata(plc_st_file *f, const plc_json *m, char *err, size_t errlen)
{
    if (m->type != PLC_JSON_OBJECT) return plc_fail(err, errlen, "\"__metadata__\" is not an object");
    f->meta = PLC_NEW_ARRAY(&f->arena, plc_st_meta, m->n + 1);
    for (const plc_json *c = m->child; c; c = c->next) {
        if (c->type != PLC_JSON_STRING) return plc_fail(err, errlen, "metadata '%s' is not a string", c->key);
        f->meta[f->n_meta].key = c->key;
        f->meta[f->n_meta].value = c->str;
        f->n_meta++;
    }
    return 0;
}

static int check_layout(plc_st_file *f, char *err, size_t errlen)
{
    for (size_t i = 1; i < f->n_tensors; i++)
        if (strcmp(f->tensors[i - 1].name, f->tensors[i].name) == 0)
            return plc_fail(err, errlen, "tensor '%s' appears twice", f->tensors[i].name);
    /* sorted by start, each tensor must begin where the previous one ended */
    const plc_st_tensor **by_begin = PLC_NEW_ARRAY(&f->arena, const plc_st_tensor *, f->n_tensors + 1);
    for (size_t i = 0; i < f->n_tensors; i++) by_begin[i] = &f->tensors[i];
    qsort(by_begin, f->n_tensors, sizeof *by_begin, cmp_by_begin);
    uint64_t at = 0;
    for (size_t i = 0; i < f->n_tensors; i++) {
        const plc_st_tensor *t = by_begin[i];
        if (t->begin < at)
            return plc_fail(err, errlen, "tensor '%s' overlaps '%s' in the data section", t->name,
                            by_begin[i - 1]->name);
        if (t->begin > at)
            return plc_fail(err, errlen, "gap of %llu bytes before tensor '%s' in the data section",
                            (unsigned long long)(t->begin - at), t->name);
        at = t->end;
    }
    if (at != f->data_size)
        return plc_fail(err, errlen, "data section has %llu bytes but the tensors cover %llu",
                        (unsigned long long)f->data_size, (unsigned long long)at);
    return 0;
}

static int parse_file(plc_st_file *f, const void *buf, size_t size, char *err, size_t errlen)
{
    const uint8_t *b = buf;
    if (size < 8) return plc_fail(err, errlen, "file too short (%zu bytes) for a safetensors header", size);
    uint64_t n = plc_get_le64(b);
    if (n > PLC_ST_MAX_HEADER)
        return plc_fail(err, errlen, "header length %llu exceeds the %u-byte limit (not a safetensors file?)",
                        (unsigned long long)n, PLC_ST_MAX_HEADER);
    if (n > size - 8)
        return plc_fail(err, errlen, "header length %llu is past the end of the file (%zu bytes): truncated?",
                        (unsigned long long)n, size);
    if (n < 2) return plc_fail(err, errlen, "header of %llu bytes cannot hold a JSON object", (unsigned long long)n);
    f->data = b + 8 + n;
    f->data_size = size - 8 - n;
    const plc_json *root;
    char jerr[256];
    if (plc_json_parse(&f->arena, (const char *)b + 8, (size_t)n, &root, jerr, sizeof jerr))
        return plc_fail(err, errlen, "header: %s", jerr);
    if (root->type != PLC_JSON_OBJECT) return plc_fail(err, errlen, "header is not a JSON object");
    f->tensors = PLC_NEW_ARRAY(&f->arena, plc_st_tensor, root->n + 1);
    for (const plc_json *m = root->child; m; m = m->next) {
        if (strcmp(m->key, "__metadata__") == 0) {
            if (f->meta) return plc_fail(err, errlen, "\"__metadata__\" appears twice");
            if (parse_metadata(f, m, err, errlen)) return -1;
            continue;
        }
        if (m->key[0] == '\0') return plc_fail(err, errlen, "a tensor has an empty name");
        if (parse_tensor(m, &f->tensors[f->n_tensors], f->data_size, err, errlen)) return -1;
        f->n_tensors++;
    }
    qsort(f->tensors, f->n_tensors, sizeof *f->tensors, cmp_by_name);
    return check_layout(f, err, errlen);
}

int plc_st_parse(plc_st_file *f, const void *buf, size_t size, char *err, size_t errlen)
{
    memset(f, 0, sizeof *f);
    plc_arena_init(&f->arena);
    if (parse_file(f, buf, size, err, errlen) == 0) return 0;
    plc_st_close(f);
    return -1;
}

int plc_st_open(plc_st_file *f, const char *path, char *err, size_t errlen)
{
    memset(f, 0, sizeof *f);
    plc_arena_init(&f->arena);
    void *map;
    size_t size;
    if (plc_map_file(path, NULL, &map, &size, err, errlen)) return -1;
    char inner[512];
    static const uint8_t empty[1];
    f->map = map;
    f->map_size = size;
    if (parse_file(f, map ? map : empty, size, inner, sizeof inner) == 0) return 0;
    plc_fail(err, errlen, "%s: %s", path, inner);
    plc_st_close(f);
    return -1;
}

void plc_st_close(plc_st_file *f)
{
    if (f->map) munmap(f->map, f->map_size);
    plc_arena_free(&f->arena);
    memset(f, 0, sizeof *f);
}

const plc_st_tensor *plc_st_find(const plc_st_file *f, const char *name)
{
    plc_st_tensor key = {.name = name};
    return f->n_tensors ? bsearch(&key, f->tensors, f->n_tensors, sizeof key, cmp_by_name) : NULL;
}

const void *plc_st_data(const plc_st_file *f, const plc_st_tensor *t) { return f->data + t->begin; }

const char *plc_st_meta_get(const plc_st_file *f, const char *key)
{
    for (size_t i = 0; i < f->n_meta; i++)
        if (strcmp(f->meta[i].key, key) == 0) return f->meta[i].value;
    return NULL;
}

static void shape_str(char *out, size_t n, int ndim, const int64_t *shape)
{
    size_t at = 0;
    at += (size_t)snprintf(out, n, "[");
    for (int i = 0; i < ndim && at < n; i++)
        at += (size_t)snprintf(out + at, n - at, "%s%lld", i ? ", " : "", (long long)shape[i]);
    if (at < n) snprintf(out + at, n - at, "]");
}

int plc_st_read(const plc_st_file *f, const char *name, plc_st_dtype dtype, int ndim, const int64_t *shape,
                void *dst, char *err, size_t errlen)
{
    const plc_st_tensor *t = plc_st_find(f, name);
    if (!t) return plc_fail(err, errlen, "tensor '%s' is missing", name);
    if (t->dtype != dtype)
        return plc_fail(err, errlen, "tensor '%s' has dtype %s, expected %s", name, dtype_names[t->dtype],
                        plc_st_dtype_name(dtype) ? plc_st_dtype_name(dtype) : "?");
    bool same = t->ndim == ndim;
    for (int i = 0; same && i < ndim; i++) same = t->shape[i] == shape[i];
    if (!same) {
        char want[160], got[160];
        shape_str(want, sizeof want, ndim, shape);
        shape_str(got, sizeof got, t->ndim, t->shape);
        return plc_fail(err, errlen, "tensor '%s' has shape %s, expected %s", name, got, want);
    }
    if (t->end > t->begin) memcpy(dst, plc_st_data(f, t), (size_t)(t->end - t->begin));
    return 0;
}

/* ---- writer ---- */

struct plc_st_entry {
    const char *name;
    plc_st_dtype dtype;
    int ndim;
    int64_t shape[PLC_ST_MAX_DIMS];
    uint64_t bytes;
    const void *data;
};

struct plc_st_meta_node {
    const char *key, *value;
    struct plc_st_meta_node *next;
};

void plc_st_writer_init(plc_st_writer *w)
{
    memset(w, 0, sizeof *w);
    plc_arena_init(&w->arena);
}

void plc_st_writer_free(plc_st_writer *w)
{
    free(w->entries);
    plc_arena_free(&w->arena);
    memset(w, 0, sizeof *w);
}

int plc_st_writer_add(plc_st_writer *w, const char *name, plc_st_dtype dtype, int ndim, const int64_t *shape,
                      const void *data, char *err, size_t errlen)
{
    if (!name || !*name) return plc_fail(err, errlen, "safetensors: empty tensor name");
    if (strcmp(name, "__metadata__") == 0) return plc_fail(err, errlen, "safetensors: '__metadata__' is reserved");
    if ((unsigned)dtype >= PLC_ST_DTYPE_COUNT) return plc_fail(err, errlen, "safetensors: '%s': bad dtype", name);
    if (ndim < 0 || ndim > PLC_ST_MAX_DIMS)
        return plc_fail(err, errlen, "safetensors: '%s': %d dimensions (0..%d supported)", name, ndim, PLC_ST_MAX_DIMS);
    for (size_t i = 0; i < w->n_entries; i++)
        if (strcmp(w->entries[i].name, name) == 0) return plc_fail(err, errlen, "safetensors: '%s' added twice", name);
    struct plc_st_entry e = {.name = plc_arena_strdup(&w->arena, name), .dtype = dtype, .ndim = ndim, .data = data};
    uint64_t bytes = dtype_sizes[dtype];
    for (int i = 0; i < ndim; i++) {
        if (shape[i] < 0) return plc_fail(err, errlen, "safetensors: '%s': negative dimension", name);
        e.shape[i] = shape[i];
        if (shape[i] && bytes > UINT64_MAX / (uint64_t)shape[i])
            return plc_fail(err, errlen, "safetensors: '%s': too large", name);
        bytes *= (uint64_t)shape[i];
    }
    e.bytes = bytes;
    struct plc_st_entry *grown = realloc(w->entries, (w->n_entries + 1) * sizeof *grown);
    if (!grown) return plc_fail(err, errlen, "safetensors: out of memory");
    w->entries = grown;
    w->entries[w->n_entries++] = e;
    return 0;
}

void plc_st_writer_meta(plc_st_writer *w, const char *key, const char *value)
{
    for (struct plc_st_meta_node *m = w->meta; m; m = m->next)
        if (strcmp(m->key, key) == 0) {
            m->value = plc_arena_strdup(&w->arena, value);
            return;
        }
    struct plc_st_meta_node *m = PLC_NEW(&w->arena, struct plc_st_meta_node);
    m->key = plc_arena_strdup(&w->arena, key);
    m->value = plc_arena_strdup(&w->arena, value);
    m->next = w->meta;
    w->meta = m;
    w->n_meta++;
}

static int cmp_entry(const void *a, const void *b)
{
    return strcmp(((const struct plc_st_entry *)a)->name, ((const struct plc_st_entry *)b)->name);
}

static int cmp_meta(const void *a, const void *b)
{
    return strcmp((*(struct plc_st_meta_node *const *)a)->key, (*(struct plc_st_meta_node *const *)b)->key);
}

/* the JSON header, unpadded, into a malloc'd buffer */
static char *build_header(plc_st_writer *w, size_t *len)
{
    char *text = NULL;
    FILE *f = open_memstream(&text, len);
    if (!f) return NULL;
    fputc('{', f);
    bool first = true;
    if (w->n_meta) { /* "__metadata__" sorts before every lower-case name; position is free anyway */
        struct plc_st_meta_node **ms = PLC_NEW_ARRAY(&w->arena, struct plc_st_meta_node *, w->n_meta);
        size_t i = 0;
        for (struct plc_st_meta_node *m = w->meta; m; m = m->next) ms[i++] = m;
        qsort(ms, w->n_meta, sizeof *ms, cmp_meta);
        fputs("\"__metadata__\":{", f);
        for (i = 0; i < w->n_meta; i++) {
            if (i) fputc(',', f);
            plc_json_write_string(f, ms[i]->key, strlen(ms[i]->key));
            fputc(':', f);
            plc_json_write_string(f, ms[i]->value, strlen(ms[i]->value));
        }
        fputc('}', f);
        first = false;
    }
    uint64_t at = 0;
    for (size_t i = 0; i < w->n_entries; i++) {
        const struct plc_st_entry *e = &w->entries[i];
        if (!first) fputc(',', f);
        first = false;
        plc_json_write_string(f, e->name, strlen(e->name));
        fprintf(f, ":{\"dtype\":\"%s\",\"shape\":[", dtype_names[e->dtype]);
        for (int d = 0; d < e->ndim; d++) fprintf(f, "%s%lld", d ? "," : "", (long long)e->shape[d]);
        fprintf(f, "],\"data_offsets\":[%llu,%llu]}", (unsigned long long)at, (unsigned long long)(at + e->bytes));
        at += e->bytes;
    }
    fputc('}', f);
    fflush(f); /* updates *len */
    /* pad with spaces so that the data section starts 8-byte aligned */
    while ((*len + 8) % 8 != 0) {
        fputc(' ', f);
        fflush(f);
    }
    if (fclose(f) != 0) {
        free(text);
        return NULL;
    }
    return text;
}

int plc_st_writer_save(plc_st_writer *w, const char *path, char *err, size_t errlen)
{
    qsort(w->entries, w->n_entries, sizeof *w->entries, cmp_entry);
    size_t hlen = 0;
    char *header = build_header(w, &hlen);
    if (!header) return plc_fail(err, errlen, "%s: cannot build the safetensors header", path);
    if (hlen > PLC_ST_MAX_HEADER) {
        free(header);
        return plc_fail(err, errlen, "%s: header of %zu bytes exceeds the safetensors limit", path, hlen);
    }
    plc_atomic_file af;
    if (plc_atomic_open(&af, path, err, errlen)) {
        free(header);
        return -1;
    }
    uint8_t len8[8];
    plc_put_le64(len8, hlen);
    bool ok = fwrite(len8, 1, 8, af.f) == 8 && fwrite(header, 1, hlen, af.f) == hlen;
    free(header);
    for (size_t i = 0; ok && i < w->n_entries; i++) {
        const struct plc_st_entry *e = &w->entries[i];
        if (e->bytes) ok = fwrite(e->data, 1, (size_t)e->bytes, af.f) == e->bytes;
    }
    if (!ok) {
        int e = errno;
        plc_atomic_abort(&af);
        return plc_fail(err, errlen, "%s: write failed: %s", path, strerror(e));
    }
    return plc_atomic_commit(&af, err, errlen);
}
