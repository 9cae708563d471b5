/* plan_io.c: the plan file's writer and loader.
 *
 * Layout (all integers little-endian; docs/plan-format.md):
 *   header  magic[8] "PLCPLAN1", u32 version, u32 endian probe 0x01020304,
 *           u64 float probe (the bits of -1234.5678), u32 nsections,
 *           u32 crc32 of the section table
 *   table   nsections x { u32 id, u32 crc32, u64 offset, u64 size }
 *   then the sections META, GROUPS, PROGRAMS, STAGES, STRINGS (the table
 *   lists them by id: STRINGS=1, META, GROUPS, PROGRAMS, STAGES).
 * Fields are written one at a time with a fixed width, never as raw
 * structs; strings are (u64 offset, u64 length) into STRINGS, offset
 * UINT64_MAX for NULL. */
#include "common/plan_io.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/atomic_file.h"
#include "common/crc32.h"
#include "common/errmsg.h"
#include "plc/le.h"

#define HEADER_BYTES 32u
#define TABLE_ENTRY_BYTES 24u
#define NO_STRING UINT64_MAX
/* generous sanity bounds: a hostile count is rejected before it is used */
#define MAX_DIM (INT64_C(1) << 40)

uint64_t plc_fnv1a64(const void *data, size_t len)
{
    const unsigned char *p = data;
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

/* values of an enumerated layout dimension (stored as u32), 0 for a number
 * (stored as i64) */
static uint32_t layout_enum_count(plc_layout_dim d)
{
    switch (plc_layout_dim_kind(d)) {
    case PLC_DIMK_SCHEDULE: return PLC_SCHED_COUNT;
    case PLC_DIMK_RECOMPUTE: return PLC_RECOMPUTE_COUNT;
    case PLC_DIMK_ATTENTION: return PLC_ATTN_COUNT;
    default: return 0;
    }
}

/* ======================================================================== */
/* writer                                                                   */

typedef struct wbuf {
    uint8_t *data;
    size_t len, cap;
    int oom;
} wbuf;

static void wb_reserve(wbuf *b, size_t more)
{
    if (b->oom) return;
    if (b->len + more <= b->cap) return;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + more) cap *= 2;
    uint8_t *d = realloc(b->data, cap);
    if (!d) {
        b->oom = 1;
        return;
    }
    b->data = d;
    b->cap = cap;
}

static void wb_bytes(wbuf *b, const void *p, size_t n)
{
    wb_reserve(b, n);
    if (b->oom || n == 0) return;
    memcpy(b->data + b->len, p, n);
    b->len += n;
}

static void wb_u32(wbuf *b, uint32_t v)
{
    uint8_t x[4];
    plc_put_le32(x, v);
    wb_bytes(b, x, 4);
}

static void wb_u64(wbuf *b, uint64_t v)
{
    uint8_t x[8];
    plc_put_le64(x, v);
    wb_bytes(b, x, 8);
}

static void wb_i32(wbuf *b, int32_t v) { wb_u32(b, (uint32_t)v); }
static void wb_i64(wbuf *b, int64_t v) { wb_u64(b, (uint64_t)v); }

static void wb_f64(wbuf *b, double v)
{
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    wb_u64(b, u);
}

/* strings go to the string section; the field is (offset, length) */
static void wb_str(wbuf *b, wbuf *strings, const char *s, size_t len)
{
    if (!s) {
        wb_u64(b, NO_STRING);
        wb_u64(b, 0);
        return;
    }
    wb_u64(b, strings->len);
    wb_u64(b, len);
    wb_bytes(strings, s, len);
}

static void wb_cstr(wbuf *b, wbuf *strings, const char *s) { wb_str(b, strings, s, s ? strlen(s) : 0); }

static void write_meta(wbuf *b, wbuf *st, const plc_plan *p)
{
    wb_cstr(b, st, p->spec_path);
    wb_str(b, st, p->spec_source, p->spec_source ? p->spec_len : 0);
    wb_u64(b, p->spec_hash);
    /* model */
    const plc_model *m = &p->model;
    wb_str(b, st, m->name, strnlen(m->name, sizeof m->name));
    wb_i64(b, m->layers); wb_i64(b, m->hidden); wb_i64(b, m->ffn_hidden);
    wb_i64(b, m->heads); wb_i64(b, m->kv_heads); wb_i64(b, m->vocab); wb_i64(b, m->seq_len);
    wb_u32(b, m->tie_embeddings ? 1u : 0u);
    wb_f64(b, m->norm_eps); wb_f64(b, m->rope_theta);
    wb_u32(b, (uint32_t)m->arch); wb_u32(b, (uint32_t)m->positions);
    /* train */
    const plc_train *t = &p->train;
    wb_i64(b, t->global_batch);
    wb_u32(b, (uint32_t)t->precision);
    wb_f64(b, t->beta1); wb_f64(b, t->beta2); wb_f64(b, t->eps); wb_f64(b, t->weight_decay);
    wb_f64(b, t->lr_peak); wb_f64(b, t->lr_floor);
    wb_i64(b, t->warmup_steps); wb_i64(b, t->decay_steps);
    wb_f64(b, t->grad_clip);
    wb_i64(b, t->steps);
    wb_u64(b, t->seed);
    wb_cstr(b, st, t->data_path);
    /* hardware */
    wb_str(b, st, p->hw.name, strnlen(p->hw.name, sizeof p->hw.name));
#define PLC_HW_WRITE(member, key, unit) wb_f64(b, p->hw.member);
    PLC_HW_FIELDS(PLC_HW_WRITE)
#undef PLC_HW_WRITE
    wb_i64(b, p->nodes); wb_i64(b, p->gpus_per_node);
    /* layout */
    /* every field of PLC_LAYOUT_FIELDS in order: enumerations as u32,
     * numbers as i64 */
    const plc_layout *l = &p->layout;
    for (int d = 0; d < PLC_LD_COUNT; d++) {
        int64_t v = plc_layout_get(l, (plc_layout_dim)d);
        if (layout_enum_count((plc_layout_dim)d)) wb_u32(b, (uint32_t)v);
        else wb_i64(b, v);
    }
    /* predictions */
    wb_f64(b, p->pred.step_time_s); wb_f64(b, p->pred.tokens_per_s); wb_f64(b, p->pred.mfu);
    wb_f64(b, p->pred.peak_bytes_estimate); wb_f64(b, p->pred.peak_bytes_plan);
    wb_i64(b, p->world_size);
}

static void write_groups(wbuf *b, wbuf *st, const plc_plan *p)
{
    wb_u32(b, p->ngroups);
    for (uint32_t i = 0; i < p->ngroups; i++) {
        wb_u32(b, p->groups[i].dims);
        wb_u32(b, p->groups[i].flags);
        wb_cstr(b, st, p->groups[i].name);
    }
}

static void write_programs(wbuf *b, wbuf *st, const plc_plan *p)
{
    wb_u32(b, p->nprograms);
    for (uint32_t pi = 0; pi < p->nprograms; pi++) {
        const plc_program *g = &p->programs[pi];
        wb_u64(b, g->arena_bytes);
        wb_i32(b, g->loss_buf);
        wb_i32(b, g->gnorm_buf);
        wb_u32(b, g->nbuffers);
        wb_u32(b, g->ninstrs);
        for (uint32_t i = 0; i < g->nbuffers; i++) {
            const plc_buffer *x = &g->buffers[i];
            wb_cstr(b, st, x->name);
            wb_u32(b, (uint32_t)x->kind); wb_u32(b, (uint32_t)x->dtype);
            wb_u64(b, x->offset); wb_u64(b, x->bytes);
            wb_i64(b, x->rows); wb_i64(b, x->cols);
            wb_i32(b, x->tensor);
            wb_u32(b, (uint32_t)x->shard); wb_u32(b, x->shard_dims); wb_i64(b, x->nshards);
            wb_u32(b, x->flat_dims); wb_i64(b, x->flat_shards);
        }
        for (uint32_t i = 0; i < g->ninstrs; i++) {
            const plc_instr *in = &g->instrs[i];
            wb_u32(b, (uint32_t)in->op); wb_u32(b, (uint32_t)in->stream); wb_u32(b, (uint32_t)in->phase);
            wb_i32(b, in->layer); wb_i32(b, in->micro); wb_i32(b, in->group);
            wb_i32(b, in->peer); wb_i32(b, in->wait);
            for (int k = 0; k < PLC_INSTR_BUFS; k++) wb_i32(b, in->buf[k]);
            for (int k = 0; k < PLC_INSTR_ARGS; k++) wb_i64(b, in->arg[k]);
            for (int k = 0; k < PLC_INSTR_FARGS; k++) wb_f64(b, in->farg[k]);
        }
    }
}

static void write_stages(wbuf *b, const plc_plan *p)
{
    uint32_t n = p->stage_program ? (uint32_t)p->layout.pp : 0;
    wb_u32(b, n);
    for (uint32_t i = 0; i < n; i++) wb_i32(b, p->stage_program[i]);
}

int plc_plan_encode(const plc_plan *p, uint8_t **data, size_t *len, char *err, size_t errlen)
{
    /* one buffer, sized up front: header, table, META, GROUPS, PROGRAMS,
     * STAGES, then STRINGS (collected on the way); the table, in id order,
     * is filled in last */
    size_t table_at = HEADER_BYTES, body_at = HEADER_BYTES + (size_t)PLC_SEC_COUNT_ * TABLE_ENTRY_BYTES;
    size_t estimate = body_at + 4096 + 32 * (size_t)p->ngroups + 8 * (size_t)(p->layout.pp + 1);
    for (uint32_t i = 0; i < p->nprograms; i++)
        estimate += 28 + 88 * (size_t)p->programs[i].nbuffers + 152 * (size_t)p->programs[i].ninstrs;
    wbuf out = {0}, strings = {0};
    wb_reserve(&out, estimate);
    uint8_t zero[256] = {0};
    wb_bytes(&out, zero, body_at);
    size_t off[PLC_SEC_COUNT_ + 1], size[PLC_SEC_COUNT_ + 1];
    off[PLC_SEC_META] = out.len;
    write_meta(&out, &strings, p);
    off[PLC_SEC_GROUPS] = out.len;
    write_groups(&out, &strings, p);
    off[PLC_SEC_PROGRAMS] = out.len;
    write_programs(&out, &strings, p);
    off[PLC_SEC_STAGES] = out.len;
    write_stages(&out, p);
    off[PLC_SEC_STRINGS] = out.len;
    wb_bytes(&out, strings.data, strings.len);
    size_t end = out.len;
    size[PLC_SEC_META] = off[PLC_SEC_GROUPS] - off[PLC_SEC_META];
    size[PLC_SEC_GROUPS] = off[PLC_SEC_PROGRAMS] - off[PLC_SEC_GROUPS];
    size[PLC_SEC_PROGRAMS] = off[PLC_SEC_STAGES] - off[PLC_SEC_PROGRAMS];
    size[PLC_SEC_STAGES] = off[PLC_SEC_STRINGS] - off[PLC_SEC_STAGES];
    size[PLC_SEC_STRINGS] = end - off[PLC_SEC_STRINGS];
    int oom = out.oom | strings.oom;
    free(strings.data);
    if (oom) {
        free(out.data);
        return plc_fail(err, errlen, "out of memory while encoding the plan");
    }
    uint8_t *d = out.data;
    memcpy(d, PLC_PLAN_MAGIC, 8);
    plc_put_le32(d + 8, PLC_PLAN_VERSION);
    plc_put_le32(d + 12, PLC_PLAN_ENDIAN_PROBE);
    double probe = PLC_PLAN_FLOAT_PROBE;
    uint64_t bits;
    memcpy(&bits, &probe, sizeof bits);
    plc_put_le64(d + 16, bits);
    plc_put_le32(d + 24, PLC_SEC_COUNT_);
    for (int s = 1; s <= PLC_SEC_COUNT_; s++) {
        uint8_t *e = d + table_at + (size_t)(s - 1) * TABLE_ENTRY_BYTES;
        plc_put_le32(e, (uint32_t)s);
        plc_put_le32(e + 4, plc_crc32(0, d + off[s], size[s]));
        plc_put_le64(e + 8, off[s]);
        plc_put_le64(e + 16, size[s]);
    }
    plc_put_le32(d + 28, plc_crc32(0, d + table_at, (size_t)PLC_SEC_COUNT_ * TABLE_ENTRY_BYTES));
    *data = d;
    *len = end;
    return 0;
}

plc_status plc_plan_write_file(const plc_plan *p, const char *path, char *err, size_t errlen)
{
    uint8_t *data = NULL;
    size_t len = 0;
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) { /* the rename would replace /dev/null or a directory */
        plc_fail(err, errlen, "%s: %s", path,
                 S_ISDIR(st.st_mode) ? "is a directory; give a file name" : "not a regular file; refusing to replace it");
        return PLC_E_INPUT;
    }
    if (plc_plan_encode(p, &data, &len, err, errlen)) return PLC_E_INTERNAL;
    plc_atomic_file af;
    int rc = plc_atomic_open(&af, path, err, errlen);
    if (rc == 0) {
        if (fwrite(data, 1, len, af.f) != len) {
            plc_fail(err, errlen, "cannot write %s: %s", path, strerror(errno));
            plc_atomic_abort(&af);
            rc = -1;
        } else {
            rc = plc_atomic_commit(&af, err, errlen);
        }
    }
    free(data);
    return rc ? PLC_E_SYSTEM : PLC_OK; /* the user's to fix: a missing directory, a full disk */
}

/* ======================================================================== */
/* reader: a bounds-checked cursor over one section                         */

typedef struct rcur {
    const uint8_t *p;
    size_t len, pos;
    const char *section;
    const uint8_t *strings;
    size_t strings_len;
    plc_arena *arena;
    char *err;
    size_t errlen;
    int failed;
} rcur;

static int rc_need(rcur *c, size_t n)
{
    if (c->failed) return 0;
    if (c->len - c->pos < n) {
        plc_fail(c->err, c->errlen, "damaged plan: section %s is truncated at byte %zu", c->section, c->pos);
        c->failed = 1;
        return 0;
    }
    return 1;
}

static uint32_t rc_u32(rcur *c)
{
    if (!rc_need(c, 4)) return 0;
    const uint8_t *x = c->p + c->pos;
    c->pos += 4;
    return plc_get_le32(x);
}

static uint64_t rc_u64(rcur *c)
{
    uint64_t lo = rc_u32(c);
    uint64_t hi = rc_u32(c);
    return lo | hi << 32;
}

static int32_t rc_i32(rcur *c) { return (int32_t)rc_u32(c); }
static int64_t rc_i64(rcur *c) { return (int64_t)rc_u64(c); }

static double rc_f64(rcur *c)
{
    uint64_t u = rc_u64(c);
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

static int rc_fail(rcur *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int rc_fail(rcur *c, const char *fmt, ...)
{
    if (c->failed) return -1;
    if (c->err && c->errlen) {
        int n = snprintf(c->err, c->errlen, "damaged plan: section %s: ", c->section);
        if (n < 0) n = 0;
        if ((size_t)n < c->errlen) {
            va_list ap;
            va_start(ap, fmt);
            vsnprintf(c->err + n, c->errlen - (size_t)n, fmt, ap);
            va_end(ap);
        }
    }
    c->failed = 1;
    return -1;
}

/* a string reference, copied into the arena with a terminating NUL */
static const char *rc_str(rcur *c, uint64_t *len_out)
{
    uint64_t off = rc_u64(c), len = rc_u64(c);
    if (c->failed) return NULL;
    if (off == NO_STRING) {
        if (len_out) *len_out = 0;
        return NULL;
    }
    if (off > c->strings_len || len > c->strings_len - off) {
        rc_fail(c, "string (offset %llu, length %llu) lies outside the %zu-byte string section",
                (unsigned long long)off, (unsigned long long)len, c->strings_len);
        return NULL;
    }
    if (len_out) *len_out = len;
    return plc_arena_strndup(c->arena, (const char *)c->strings + off, (size_t)len);
}

static void rc_name(rcur *c, char *dst, size_t cap)
{
    const char *s = rc_str(c, NULL);
    if (c->failed) return;
    if (!s) s = "";
    if (strlen(s) >= cap) {
        rc_fail(c, "name '%.20s...' longer than %zu bytes", s, cap - 1);
        return;
    }
    strcpy(dst, s);
}

/* a record count: each record takes at least min_bytes, so a count the
 * section cannot hold is rejected before anything is allocated */
static uint32_t rc_count(rcur *c, size_t min_bytes, const char *what)
{
    uint32_t n = rc_u32(c);
    if (c->failed) return 0;
    if (min_bytes && n > (c->len - c->pos) / min_bytes) {
        rc_fail(c, "%u %s do not fit in the %zu bytes left", n, what, c->len - c->pos);
        return 0;
    }
    return n;
}

static void read_meta(rcur *c, plc_plan *p)
{
    p->spec_path = rc_str(c, NULL);
    p->spec_source = rc_str(c, &p->spec_len);
    p->spec_hash = rc_u64(c);
    plc_model *m = &p->model;
    rc_name(c, m->name, sizeof m->name);
    m->layers = rc_i64(c); m->hidden = rc_i64(c); m->ffn_hidden = rc_i64(c);
    m->heads = rc_i64(c); m->kv_heads = rc_i64(c); m->vocab = rc_i64(c); m->seq_len = rc_i64(c);
    uint32_t tie = rc_u32(c);
    if (tie > 1) rc_fail(c, "tie_embeddings is %u, not 0 or 1", tie);
    m->tie_embeddings = tie == 1;
    m->norm_eps = rc_f64(c); m->rope_theta = rc_f64(c);
    uint32_t arch = rc_u32(c), positions = rc_u32(c);
    if (arch > PLC_ARCH_GPT) rc_fail(c, "arch %u out of range", arch);
    if (positions > PLC_POS_LEARNED) rc_fail(c, "positions %u out of range", positions);
    m->arch = (plc_arch)arch;
    m->positions = (plc_positions)positions;
    plc_train *t = &p->train;
    t->global_batch = rc_i64(c);
    uint32_t prec = rc_u32(c);
    if (prec >= PLC_PREC_COUNT) rc_fail(c, "precision %u out of range", prec);
    t->precision = (plc_precision)prec;
    t->beta1 = rc_f64(c); t->beta2 = rc_f64(c); t->eps = rc_f64(c); t->weight_decay = rc_f64(c);
    t->lr_peak = rc_f64(c); t->lr_floor = rc_f64(c);
    t->warmup_steps = rc_i64(c); t->decay_steps = rc_i64(c);
    t->grad_clip = rc_f64(c);
    t->steps = rc_i64(c);
    t->seed = rc_u64(c);
    t->data_path = rc_str(c, NULL);
    rc_name(c, p->hw.name, sizeof p->hw.name);
#define PLC_HW_READ(member, key, unit) p->hw.member = rc_f64(c);
    PLC_HW_FIELDS(PLC_HW_READ)
#undef PLC_HW_READ
    p->nodes = rc_i64(c); p->gpus_per_node = rc_i64(c);
    plc_layout *l = &p->layout;
    for (int d = 0; d < PLC_LD_COUNT; d++) {
        uint32_t count = layout_enum_count((plc_layout_dim)d);
        int64_t v = 0;
        if (count) {
            uint32_t e = rc_u32(c);
            if (e >= count) rc_fail(c, "%s %u out of range", plc_layout_dim_key((plc_layout_dim)d), e);
            else v = e;
        } else {
            v = rc_i64(c);
        }
        plc_layout_set(l, (plc_layout_dim)d, v);
    }
    p->pred.step_time_s = rc_f64(c); p->pred.tokens_per_s = rc_f64(c); p->pred.mfu = rc_f64(c);
    p->pred.peak_bytes_estimate = rc_f64(c); p->pred.peak_bytes_plan = rc_f64(c);
    p->world_size = rc_i64(c);
    if (!c->failed && c->pos != c->len) rc_fail(c, "%zu unexpected bytes at the end", c->len - c->pos);
}

static void read_groups(rcur *c, plc_plan *p)
{
    p->ngroups = rc_count(c, 24, "groups");
    if (c->failed) return;
    p->groups = PLC_NEW_ARRAY(c->arena, plc_group, p->ngroups ? p->ngroups : 1);
    for (uint32_t i = 0; i < p->ngroups && !c->failed; i++) {
        p->groups[i].dims = rc_u32(c);
        p->groups[i].flags = rc_u32(c);
        p->groups[i].name = rc_str(c, NULL);
    }
    if (!c->failed && c->pos != c->len) rc_fail(c, "%zu unexpected bytes at the end", c->len - c->pos);
}

#define BUFFER_RECORD_BYTES (16 + 4 + 4 + 8 + 8 + 8 + 8 + 4 + 4 + 4 + 8 + 4 + 8)
#define INSTR_RECORD_BYTES (4 * 8 + 4 * PLC_INSTR_BUFS + 8 * PLC_INSTR_ARGS + 8 * PLC_INSTR_FARGS)

static void read_programs(rcur *c, plc_plan *p)
{
    p->nprograms = rc_count(c, 24, "programs");
    if (c->failed) return;
    p->programs = PLC_NEW_ARRAY(c->arena, plc_program, p->nprograms ? p->nprograms : 1);
    for (uint32_t pi = 0; pi < p->nprograms && !c->failed; pi++) {
        plc_program *g = &p->programs[pi];
        g->arena_bytes = rc_u64(c);
        g->loss_buf = rc_i32(c);
        g->gnorm_buf = rc_i32(c);
        uint32_t nb = rc_u32(c), ni = rc_u32(c);
        if (c->failed) return;
        size_t left = c->len - c->pos;
        if ((uint64_t)nb * BUFFER_RECORD_BYTES + (uint64_t)ni * INSTR_RECORD_BYTES > left) {
            rc_fail(c, "program %u claims %u buffers and %u instructions, more than the %zu bytes left",
                    pi, nb, ni, left);
            return;
        }
        g->nbuffers = nb;
        g->ninstrs = ni;
        g->buffers = PLC_NEW_ARRAY(c->arena, plc_buffer, nb ? nb : 1);
        g->instrs = PLC_NEW_ARRAY(c->arena, plc_instr, ni ? ni : 1);
        for (uint32_t i = 0; i < nb && !c->failed; i++) {
            plc_buffer *x = &g->buffers[i];
            x->name = rc_str(c, NULL);
            uint32_t kind = rc_u32(c), dtype = rc_u32(c);
            x->offset = rc_u64(c); x->bytes = rc_u64(c);
            x->rows = rc_i64(c); x->cols = rc_i64(c);
            x->tensor = rc_i32(c);
            uint32_t shard = rc_u32(c);
            x->shard_dims = rc_u32(c); x->nshards = rc_i64(c);
            x->flat_dims = rc_u32(c); x->flat_shards = rc_i64(c);
            if (kind >= PLC_BUF_KIND_COUNT) rc_fail(c, "program %u buffer %u: kind %u out of range", pi, i, kind);
            if (dtype >= PLC_DTYPE_COUNT) rc_fail(c, "program %u buffer %u: dtype %u out of range", pi, i, dtype);
            if (shard > PLC_SHARD_FLAT) rc_fail(c, "program %u buffer %u: shard kind %u out of range", pi, i, shard);
            x->kind = (plc_buf_kind)kind;
            x->dtype = (plc_dtype)dtype;
            x->shard = (plc_shard_kind)shard;
        }
        for (uint32_t i = 0; i < ni && !c->failed; i++) {
            plc_instr *in = &g->instrs[i];
            uint32_t op = rc_u32(c), stream = rc_u32(c), phase = rc_u32(c);
            in->layer = rc_i32(c); in->micro = rc_i32(c); in->group = rc_i32(c);
            in->peer = rc_i32(c); in->wait = rc_i32(c);
            for (int k = 0; k < PLC_INSTR_BUFS; k++) in->buf[k] = rc_i32(c);
            for (int k = 0; k < PLC_INSTR_ARGS; k++) in->arg[k] = rc_i64(c);
            for (int k = 0; k < PLC_INSTR_FARGS; k++) in->farg[k] = rc_f64(c);
            if (op >= PLC_OP_COUNT) rc_fail(c, "program %u instruction %u: op %u out of range", pi, i, op);
            if (stream >= PLC_STREAM_COUNT) rc_fail(c, "program %u instruction %u: stream %u out of range", pi, i, stream);
            if (phase >= PLC_PHASE_COUNT) rc_fail(c, "program %u instruction %u: phase %u out of range", pi, i, phase);
            in->op = (plc_op)op;
            in->stream = (plc_stream)stream;
            in->phase = (plc_phase)phase;
        }
    }
    if (!c->failed && c->pos != c->len) rc_fail(c, "%zu unexpected bytes at the end", c->len - c->pos);
}

static void read_stages(rcur *c, plc_plan *p)
{
    uint32_t n = rc_count(c, 4, "stages");
    if (c->failed) return;
    if (p->layout.pp < 1 || (uint64_t)n != (uint64_t)p->layout.pp) {
        rc_fail(c, "%u stage entries for pp = %lld", n, (long long)p->layout.pp);
        return;
    }
    p->stage_program = PLC_NEW_ARRAY(c->arena, int32_t, n);
    for (uint32_t i = 0; i < n; i++) p->stage_program[i] = rc_i32(c);
    if (!c->failed && c->pos != c->len) rc_fail(c, "%zu unexpected bytes at the end", c->len - c->pos);
}

static const char *section_name(uint32_t id)
{
    static const char *const names[] = {"?", "STRINGS", "META", "GROUPS", "PROGRAMS", "STAGES"};
    return id <= PLC_SEC_COUNT_ ? names[id] : "?";
}

int plc_plan_decode(plc_arena *a, const uint8_t *data, size_t len, plc_plan *out, char *err,
                    size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (len < HEADER_BYTES)
        return plc_fail(err, errlen, "not a plan file: %zu bytes, shorter than the %u-byte header", len, HEADER_BYTES);
    if (memcmp(data, PLC_PLAN_MAGIC, 8) != 0)
        return plc_fail(err, errlen, "not a plan file: the magic bytes are not \"%s\"", PLC_PLAN_MAGIC);
    uint32_t version = plc_get_le32(data + 8);
    if (version != PLC_PLAN_VERSION)
        return plc_fail(err, errlen,
                        "plan format version %u, but this build reads version %u: recompile the spec with this plc",
                        version, PLC_PLAN_VERSION);
    if (plc_get_le32(data + 12) != PLC_PLAN_ENDIAN_PROBE)
        return plc_fail(err, errlen, "damaged plan: the byte-order probe reads 0x%08x, not 0x%08x",
                        plc_get_le32(data + 12), PLC_PLAN_ENDIAN_PROBE);
    double probe;
    uint64_t probe_bits = plc_get_le64(data + 16);
    memcpy(&probe, &probe_bits, sizeof probe);
    if (probe != PLC_PLAN_FLOAT_PROBE)
        return plc_fail(err, errlen,
                        "damaged plan: the float-format probe reads %g, not %g (IEEE 754 binary64 expected)", probe,
                        PLC_PLAN_FLOAT_PROBE);
    uint32_t nsec = plc_get_le32(data + 24);
    if (nsec != PLC_SEC_COUNT_)
        return plc_fail(err, errlen, "damaged plan: %u sections, version %u plans have %u", nsec, version,
                        PLC_SEC_COUNT_);
    size_t table_bytes = (size_t)nsec * TABLE_ENTRY_BYTES;
    if (len - HEADER_BYTES < table_bytes)
        return plc_fail(err, errlen, "damaged plan: the section table is truncated (%zu bytes in the file)", len);
    const uint8_t *table = data + HEADER_BYTES;
    if (plc_crc32(0, table, table_bytes) != plc_get_le32(data + 28))
        return plc_fail(err, errlen, "damaged plan: the section table fails its checksum");

    const uint8_t *sec_data[PLC_SEC_COUNT_ + 1] = {0};
    size_t sec_len[PLC_SEC_COUNT_ + 1] = {0};
    for (uint32_t i = 0; i < nsec; i++) {
        const uint8_t *e = table + (size_t)i * TABLE_ENTRY_BYTES;
        uint32_t id = plc_get_le32(e), crc = plc_get_le32(e + 4);
        uint64_t off = plc_get_le64(e + 8), size = plc_get_le64(e + 16);
        if (id != i + 1)
            return plc_fail(err, errlen, "damaged plan: section table entry %u has id %u, expected %u", i, id, i + 1);
        if (off > len || size > len - off)
            return plc_fail(err, errlen,
                            "damaged plan: section %s (offset %llu, %llu bytes) lies outside the %zu-byte file",
                            section_name(id), (unsigned long long)off, (unsigned long long)size, len);
        if (off < HEADER_BYTES + table_bytes)
            return plc_fail(err, errlen, "damaged plan: section %s overlaps the header", section_name(id));
        if (plc_crc32(0, data + off, (size_t)size) != crc)
            return plc_fail(err, errlen, "damaged plan: section %s fails its CRC32 check", section_name(id));
        sec_data[id] = data + off;
        sec_len[id] = (size_t)size;
    }

    rcur c = {.strings = sec_data[PLC_SEC_STRINGS], .strings_len = sec_len[PLC_SEC_STRINGS],
              .arena = a, .err = err, .errlen = errlen};
    static const int order[] = {PLC_SEC_META, PLC_SEC_GROUPS, PLC_SEC_PROGRAMS, PLC_SEC_STAGES};
    for (size_t k = 0; k < sizeof order / sizeof order[0]; k++) {
        int id = order[k];
        c.p = sec_data[id];
        c.len = sec_len[id];
        c.pos = 0;
        c.section = section_name((uint32_t)id);
        switch (id) {
        case PLC_SEC_META: read_meta(&c, out); break;
        case PLC_SEC_GROUPS: read_groups(&c, out); break;
        case PLC_SEC_PROGRAMS: read_programs(&c, out); break;
        case PLC_SEC_STAGES: read_stages(&c, out); break;
        }
        if (c.failed) return -1;
    }
    out->version = version;
    return plc_plan_validate(out, err, errlen);
}

int plc_plan_load_file(plc_arena *a, const char *path, plc_plan *out, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) return plc_fail(err, errlen, "cannot open %s: %s", path, strerror(errno));
    uint8_t *data = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len == cap) {
            cap = cap ? cap * 2 : 1 << 16;
            uint8_t *d = realloc(data, cap);
            if (!d) {
                free(data);
                fclose(f);
                return plc_fail(err, errlen, "out of memory reading %s", path);
            }
            data = d;
        }
        size_t r = fread(data + len, 1, cap - len, f);
        len += r;
        if (r == 0) break;
    }
    int read_error = ferror(f);
    fclose(f);
    if (read_error) {
        free(data);
        return plc_fail(err, errlen, "cannot read %s", path);
    }
    char inner[512];
    int rc = plc_plan_decode(a, data, len, out, inner, sizeof inner);
    free(data);
    if (rc) return plc_fail(err, errlen, "%s: %s", path, inner);
    return 0;
}
