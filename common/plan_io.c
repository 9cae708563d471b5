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
#include "common/plan_fold.h"
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
    /* mixture of experts, latent attention (all zero: a dense model) */
    const plc_moe *e = &m->moe;
    wb_i64(b, e->experts); wb_i64(b, e->top_k); wb_i64(b, e->shared_experts);
    wb_i64(b, e->expert_ffn_hidden); wb_i64(b, e->shared_ffn_hidden);
    wb_i64(b, e->dense_layers); wb_i64(b, e->moe_every);
    wb_u32(b, (uint32_t)e->router);
    wb_i64(b, e->router_groups); wb_i64(b, e->router_groups_top);
    wb_f64(b, e->route_scale); wb_f64(b, e->aux_loss);
    wb_u32(b, e->expert_bias ? 1u : 0u);
    wb_f64(b, e->capacity_factor);
    const plc_mla *a = &m->mla;
    wb_i64(b, a->q_rank); wb_i64(b, a->kv_rank);
    wb_i64(b, a->nope_head_dim); wb_i64(b, a->rope_head_dim); wb_i64(b, a->v_head_dim);
    /* the head width (0: hidden / heads) and qk-norm */
    wb_i64(b, m->head_dim);
    wb_u32(b, m->qk_norm ? 1u : 0u);
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
    wb_u64(b, t->data_size);
    wb_u32(b, t->data_crc32);
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
        if (PLC_LAYOUT_MOE_DIM(d) && v < 1) v = 1; /* ep, etp: 0 reads as 1 (plc/job.h) */
        if (layout_enum_count((plc_layout_dim)d)) wb_u32(b, (uint32_t)v);
        else wb_i64(b, v);
    }
    /* the layout block it was solved under: per dimension in the same
     * order, u32 kind (plc_choice_kind), then a set's u32 count and its
     * values or a range's bounds (i64 each); memory_limit f64, objective u32 */
    for (int d = 0; d < PLC_LD_COUNT; d++) {
        const plc_choice *ch = plc_layout_spec_choice(&p->constraints, (plc_layout_dim)d);
        wb_u32(b, (uint32_t)ch->kind);
        if (ch->kind == PLC_CHOICE_SET) {
            wb_u32(b, (uint32_t)ch->n);
            for (int i = 0; i < ch->n; i++) wb_i64(b, ch->v[i]);
        } else if (ch->kind == PLC_CHOICE_RANGE) {
            wb_i64(b, ch->lo);
            wb_i64(b, ch->hi);
        }
    }
    wb_f64(b, p->constraints.memory_limit);
    wb_u32(b, (uint32_t)p->constraints.objective);
    /* predictions */
    wb_f64(b, p->pred.step_time_s); wb_f64(b, p->pred.tokens_per_s); wb_f64(b, p->pred.mfu);
    wb_f64(b, p->pred.peak_bytes_estimate); wb_f64(b, p->pred.peak_bytes_plan);
    wb_f64(b, p->pred.bubble_fraction);
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

/* ---- the tables as rows of integers (the fields that may stride) ---------
 * instructions: op, stream, phase, layer, micro, group, peer, wait, buf[10],
 * arg[8], the bits of farg[2]; buffers: kind, dtype, bytes, rows, cols,
 * tensor, shard, shard_dims, nshards, flat_dims, flat_shards and the numbers
 * of the name (plc_name_tokens). A buffer's offset is not a field: offsets
 * follow the memory plan, not a stride, and are stored in a column. */
#define INSTR_FIELDS (8 + PLC_INSTR_BUFS + PLC_INSTR_ARGS + PLC_INSTR_FARGS)
#define BUFFER_FIELDS (11 + PLC_NAME_TOKENS)

static uint64_t mix(uint64_t h, uint64_t x) { return (h ^ x) * 0x100000001b3ull + (x >> 29); }

static void instr_row(const plc_instr *in, int64_t *f)
{
    f[0] = in->op; f[1] = in->stream; f[2] = in->phase; f[3] = in->layer; f[4] = in->micro;
    f[5] = in->group; f[6] = in->peer; f[7] = in->wait;
    for (int k = 0; k < PLC_INSTR_BUFS; k++) f[8 + k] = in->buf[k];
    for (int k = 0; k < PLC_INSTR_ARGS; k++) f[8 + PLC_INSTR_BUFS + k] = in->arg[k];
    for (int k = 0; k < PLC_INSTR_FARGS; k++) memcpy(&f[8 + PLC_INSTR_BUFS + PLC_INSTR_ARGS + k], &in->farg[k], 8);
}

static void buffer_row(const plc_buffer *x, int64_t *f)
{
    f[0] = x->kind; f[1] = x->dtype; f[2] = (int64_t)x->bytes; f[3] = x->rows; f[4] = x->cols; f[5] = x->tensor;
    f[6] = x->shard; f[7] = x->shard_dims; f[8] = x->nshards; f[9] = x->flat_dims; f[10] = x->flat_shards;
    int64_t tok[PLC_NAME_TOKENS] = {0};
    size_t st[PLC_NAME_TOKENS], tl[PLC_NAME_TOKENS];
    if (x->name) plc_name_tokens(x->name, strlen(x->name), tok, st, tl);
    for (int k = 0; k < PLC_NAME_TOKENS; k++) f[11 + k] = tok[k];
}

/* folds one table: rows, classes and keys built here; tree in *t */
static int fold_table(const plc_program *g, int instrs, plc_fold_tree *t)
{
    uint32_t n = instrs ? g->ninstrs : g->nbuffers, nf = instrs ? INSTR_FIELDS : BUFFER_FIELDS;
    int64_t *v = malloc(((size_t)n * nf + 1) * sizeof *v);
    uint64_t *cls = malloc(((size_t)n + 1) * sizeof *cls), *key2 = malloc(((size_t)n + 1) * sizeof *key2);
    int rc = -1;
    if (v && cls && key2) {
        for (uint32_t i = 0; i < n; i++) {
            int64_t *f = v + (size_t)i * nf;
            if (instrs) {
                const plc_instr *in = &g->instrs[i];
                instr_row(in, f);
                uint64_t h = 0xcbf29ce484222325ull;
                h = mix(h, in->op); h = mix(h, in->stream); h = mix(h, in->phase);
                h = mix(h, (uint64_t)in->group); h = mix(h, (uint64_t)in->peer);
                h = mix(h, (uint64_t)f[INSTR_FIELDS - 2]); h = mix(h, (uint64_t)f[INSTR_FIELDS - 1]);
                cls[i] = h;
                key2[i] = mix(h, (uint64_t)in->layer + 0x51);
            } else {
                const plc_buffer *x = &g->buffers[i];
                buffer_row(x, f);
                uint64_t h = plc_name_class(x->name, x->name ? strlen(x->name) : 0);
                h = mix(h, x->kind); h = mix(h, x->dtype);
                cls[i] = h;
                key2[i] = mix(h, (uint64_t)f[11] + 0x51);
            }
        }
        rc = plc_fold_rows(v, cls, key2, n, nf, t);
    }
    free(v);
    free(cls);
    free(key2);
    return rc;
}

static void write_buffer_leaf(wbuf *b, wbuf *st, const plc_buffer *x)
{
    wb_u32(b, 0);
    wb_cstr(b, st, x->name);
    wb_u32(b, (uint32_t)x->kind); wb_u32(b, (uint32_t)x->dtype);
    wb_u64(b, x->bytes);
    wb_i64(b, x->rows); wb_i64(b, x->cols);
    wb_i32(b, x->tensor);
    wb_u32(b, (uint32_t)x->shard); wb_u32(b, x->shard_dims); wb_i64(b, x->nshards);
    wb_u32(b, x->flat_dims); wb_i64(b, x->flat_shards);
}

static void write_instr_leaf(wbuf *b, const plc_instr *in)
{
    wb_u32(b, 0);
    wb_u32(b, (uint32_t)in->op); wb_u32(b, (uint32_t)in->stream); wb_u32(b, (uint32_t)in->phase);
    wb_i32(b, in->layer); wb_i32(b, in->micro); wb_i32(b, in->group);
    wb_i32(b, in->peer); wb_i32(b, in->wait);
    for (int k = 0; k < PLC_INSTR_BUFS; k++) wb_i32(b, in->buf[k]);
    for (int k = 0; k < PLC_INSTR_ARGS; k++) wb_i64(b, in->arg[k]);
    for (int k = 0; k < PLC_INSTR_FARGS; k++) wb_f64(b, in->farg[k]);
}

/* the items of a table: every row a leaf (expanded), or the folded tree */
static void write_items(wbuf *b, wbuf *st, const plc_program *g, int instrs, const plc_fold_tree *t)
{
    uint32_t n = instrs ? g->ninstrs : g->nbuffers, nf = instrs ? INSTR_FIELDS : BUFFER_FIELDS;
    size_t count = t ? t->n : n;
    for (size_t i = 0; i < count; i++) {
        const plc_fold_node *x = t ? &t->nodes[i] : NULL;
        if (x && x->loop) {
            wb_u32(b, 1);
            wb_u32(b, x->count);
            wb_u32(b, x->nitems);
            continue;
        }
        uint32_t row = x ? x->row : (uint32_t)i;
        if (instrs) write_instr_leaf(b, &g->instrs[row]);
        else write_buffer_leaf(b, st, &g->buffers[row]);
        for (uint32_t l = 0; x && l < x->depth; l++) {
            uint32_t mask = 0;
            for (uint32_t f = 0; f < nf; f++)
                if (x->stride[l][f]) mask |= 1u << f;
            wb_u32(b, mask);
            for (uint32_t f = 0; f < nf; f++)
                if (x->stride[l][f]) wb_i64(b, x->stride[l][f]);
        }
    }
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static int write_programs(wbuf *b, wbuf *st, const plc_plan *p, plc_plan_form form)
{
    wb_u32(b, p->nprograms);
    for (uint32_t pi = 0; pi < p->nprograms; pi++) {
        const plc_program *g = &p->programs[pi];
        plc_fold_tree tb = {0}, ti = {0};
        if (form == PLC_PLAN_FOLDED && (fold_table(g, 0, &tb) || fold_table(g, 1, &ti))) {
            plc_fold_free(&tb);
            return -1;
        }
        int folded = form == PLC_PLAN_FOLDED;
        /* offsets: the distinct values, ascending, then an index per buffer */
        uint64_t *offs = malloc(((size_t)g->nbuffers + 1) * sizeof *offs);
        if (!offs) {
            plc_fold_free(&tb);
            plc_fold_free(&ti);
            return -1;
        }
        for (uint32_t i = 0; i < g->nbuffers; i++) offs[i] = g->buffers[i].offset;
        qsort(offs, g->nbuffers, sizeof *offs, cmp_u64);
        uint32_t noffs = 0;
        for (uint32_t i = 0; i < g->nbuffers; i++)
            if (noffs == 0 || offs[noffs - 1] != offs[i]) offs[noffs++] = offs[i];
        uint32_t width = noffs <= 65536 ? 2 : 4;
        wb_u64(b, g->arena_bytes);
        wb_i32(b, g->loss_buf);
        wb_i32(b, g->gnorm_buf);
        wb_u32(b, g->nbuffers);
        wb_u32(b, g->ninstrs);
        wb_u32(b, folded ? tb.top : g->nbuffers);
        wb_u32(b, folded ? ti.top : g->ninstrs);
        write_items(b, st, g, 0, folded ? &tb : NULL);
        wb_u32(b, noffs);
        for (uint32_t i = 0; i < noffs; i++) wb_u64(b, offs[i]);
        for (uint32_t i = 0; i < g->nbuffers; i++) {
            const uint64_t *at = bsearch(&g->buffers[i].offset, offs, noffs, sizeof *offs, cmp_u64);
            uint32_t k = (uint32_t)(at - offs);
            if (width == 2) {
                uint8_t x[2] = {(uint8_t)k, (uint8_t)(k >> 8)};
                wb_bytes(b, x, 2);
            } else {
                wb_u32(b, k);
            }
        }
        free(offs);
        write_items(b, st, g, 1, folded ? &ti : NULL);
        plc_fold_free(&tb);
        plc_fold_free(&ti);
    }
    return 0;
}

static void write_stages(wbuf *b, const plc_plan *p)
{
    uint32_t n = p->stage_program ? (uint32_t)p->layout.pp : 0;
    wb_u32(b, n);
    for (uint32_t i = 0; i < n; i++) wb_i32(b, p->stage_program[i]);
}

int plc_plan_encode(const plc_plan *p, uint8_t **data, size_t *len, char *err, size_t errlen)
{
    return plc_plan_encode_as(p, PLC_PLAN_FOLDED, data, len, err, errlen);
}

int plc_plan_encode_as(const plc_plan *p, plc_plan_form form, uint8_t **data, size_t *len, char *err, size_t errlen)
{
    /* one buffer, sized up front: header, table, META, GROUPS, PROGRAMS,
     * STAGES, then STRINGS (collected on the way); the table, in id order,
     * is filled in last */
    size_t table_at = HEADER_BYTES, body_at = HEADER_BYTES + (size_t)PLC_SEC_COUNT_ * TABLE_ENTRY_BYTES;
    size_t estimate = body_at + 4096 + 32 * (size_t)p->ngroups + 8 * (size_t)(p->layout.pp + 1);
    for (uint32_t i = 0; i < p->nprograms && form == PLC_PLAN_EXPANDED; i++)
        estimate += 36 + 88 * (size_t)p->programs[i].nbuffers + 156 * (size_t)p->programs[i].ninstrs;
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
    int fold_failed = write_programs(&out, &strings, p, form);
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
        plc_fail(err, errlen, "out of memory while encoding the plan");
        return -2;
    }
    if (fold_failed) {
        free(out.data);
        return plc_fail(err, errlen, "cannot encode the plan: a folded table failed its check");
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
    return plc_plan_write_file_as(p, PLC_PLAN_FOLDED, path, err, errlen);
}

plc_status plc_plan_write_file_as(const plc_plan *p, plc_plan_form form, const char *path, char *err, size_t errlen)
{
    uint8_t *data = NULL;
    size_t len = 0;
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) { /* the rename would replace /dev/null or a directory */
        plc_fail(err, errlen, "%s: %s", path,
                 S_ISDIR(st.st_mode) ? "is a directory; give a file name" : "not a regular file; refusing to replace it");
        return PLC_E_INPUT;
    }
    int enc = plc_plan_encode_as(p, form, &data, &len, err, errlen);
    if (enc) return enc == -2 ? PLC_E_SYSTEM : PLC_E_INTERNAL;
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

/* can value v stand in a choice of dimension d? (the value's spelling and
 * bounds: an enumeration's values, on/off, ZeRO's stages, a whole number) */
static bool choice_value_ok(plc_layout_dim d, int64_t v)
{
    uint32_t count = layout_enum_count(d);
    if (count) return v >= 0 && v < (int64_t)count;
    switch (plc_layout_dim_kind(d)) {
    case PLC_DIMK_ONOFF: return v == 0 || v == 1;
    case PLC_DIMK_ZERO: return v >= 0 && v <= 3;
    case PLC_DIMK_DEGREE: return v >= 1 && v <= MAX_DIM;
    default: return v >= 0 && v <= MAX_DIM;
    }
}

static void read_constraints(rcur *c, plc_layout_spec *ls)
{
    for (int d = 0; d < PLC_LD_COUNT && !c->failed; d++) {
        plc_choice *ch = plc_layout_spec_choice_mut(ls, (plc_layout_dim)d);
        const char *key = plc_layout_dim_key((plc_layout_dim)d);
        uint32_t kind = rc_u32(c);
        if (kind > PLC_CHOICE_RANGE) {
            rc_fail(c, "the layout block's %s has choice kind %u", key, kind);
            return;
        }
        ch->kind = (plc_choice_kind)kind;
        if (ch->kind == PLC_CHOICE_SET) {
            uint32_t n = rc_u32(c);
            if (!c->failed && (n < 1 || n > PLC_CHOICE_MAX)) {
                rc_fail(c, "the layout block's %s is a set of %u values (1 to %d)", key, n, PLC_CHOICE_MAX);
                return;
            }
            ch->n = (int)n;
            for (uint32_t i = 0; i < n && !c->failed; i++) {
                ch->v[i] = rc_i64(c);
                if (c->failed) break;
                if (!choice_value_ok((plc_layout_dim)d, ch->v[i]) || (i && ch->v[i] <= ch->v[i - 1]))
                    rc_fail(c, "the layout block's %s set holds %lld, out of range or out of order", key,
                            (long long)ch->v[i]);
            }
        } else if (ch->kind == PLC_CHOICE_RANGE) {
            ch->lo = rc_i64(c);
            ch->hi = rc_i64(c);
            if (!c->failed && (!choice_value_ok((plc_layout_dim)d, ch->lo) ||
                               !choice_value_ok((plc_layout_dim)d, ch->hi) || ch->lo > ch->hi))
                rc_fail(c, "the layout block's %s range %lld..%lld is out of range", key, (long long)ch->lo,
                        (long long)ch->hi);
        }
    }
    ls->memory_limit = rc_f64(c);
    uint32_t objective = rc_u32(c);
    if (c->failed) return;
    if (!(ls->memory_limit > 0 && ls->memory_limit <= 1))
        rc_fail(c, "memory_limit %g is not a share of memory above 0 and at most 1", ls->memory_limit);
    else if (objective >= PLC_OBJ_COUNT) rc_fail(c, "objective %u out of range", objective);
    else ls->objective = (plc_objective)objective;
}

/* the model's MoE fields, each in the range the front end admits
 * (docs/model.md); a dense model's are all zero but moe_every and
 * route_scale, which it ignores */
static void read_moe(rcur *c, plc_model *m)
{
    plc_moe *e = &m->moe;
    e->experts = rc_i64(c); e->top_k = rc_i64(c); e->shared_experts = rc_i64(c);
    e->expert_ffn_hidden = rc_i64(c); e->shared_ffn_hidden = rc_i64(c);
    e->dense_layers = rc_i64(c); e->moe_every = rc_i64(c);
    uint32_t router = rc_u32(c);
    e->router_groups = rc_i64(c); e->router_groups_top = rc_i64(c);
    e->route_scale = rc_f64(c); e->aux_loss = rc_f64(c);
    uint32_t bias = rc_u32(c);
    e->capacity_factor = rc_f64(c);
    if (c->failed) return;
    if (router > PLC_ROUTER_SIGMOID) { rc_fail(c, "router %u out of range", router); return; }
    if (bias > 1) { rc_fail(c, "expert_bias is %u, not 0 or 1", bias); return; }
    e->router = (plc_router)router;
    e->expert_bias = bias == 1;
    if (e->experts < 0 || e->experts > (1 << 14)) { rc_fail(c, "experts %lld out of range", (long long)e->experts); return; }
    if (e->experts == 0) return;
    if (e->top_k < 1 || e->top_k > e->experts)
        rc_fail(c, "experts_per_token %lld is not 1 to experts = %lld", (long long)e->top_k, (long long)e->experts);
    else if (e->shared_experts < 0 || e->shared_experts > 1024 || e->expert_ffn_hidden < 1 ||
             e->expert_ffn_hidden > (1 << 22) || e->shared_ffn_hidden < 0 || e->shared_ffn_hidden > (1 << 22) ||
             (e->shared_experts > 0 && e->shared_ffn_hidden < 1) || e->experts * e->expert_ffn_hidden > (1 << 23) ||
             e->shared_experts * e->shared_ffn_hidden > (1 << 23))
        rc_fail(c, "the experts' counts or widths are out of range");
    else if (e->dense_layers < 0 || e->dense_layers >= m->layers || e->moe_every < 1)
        rc_fail(c, "dense_layers %lld or moe_every %lld out of range for %lld layers", (long long)e->dense_layers,
                (long long)e->moe_every, (long long)m->layers);
    else if (e->router_groups < 0 || (e->router_groups > 0 && e->experts % e->router_groups) ||
             e->router_groups_top < 0 || e->router_groups_top > e->router_groups)
        rc_fail(c, "router_groups %lld, router_groups_top %lld out of range for %lld experts",
                (long long)e->router_groups, (long long)e->router_groups_top, (long long)e->experts);
    else if (!(e->route_scale > 0 && e->route_scale <= 1e6) || !(e->aux_loss >= 0 && e->aux_loss <= 1e6) ||
             !(e->capacity_factor >= 0 && e->capacity_factor <= 1024))
        rc_fail(c, "route_scale %g, aux_loss %g or capacity_factor %g out of range", e->route_scale, e->aux_loss,
                e->capacity_factor);
}

/* latent attention's fields: all zero, or kv_rank and the head widths at
 * least 1 (q_rank 0: no query compression) */
static void read_mla(rcur *c, plc_model *m)
{
    plc_mla *a = &m->mla;
    a->q_rank = rc_i64(c); a->kv_rank = rc_i64(c);
    a->nope_head_dim = rc_i64(c); a->rope_head_dim = rc_i64(c); a->v_head_dim = rc_i64(c);
    if (c->failed) return;
    const int64_t big = 1 << 16;
    if (a->kv_rank == 0) {
        if (a->q_rank || a->nope_head_dim || a->rope_head_dim || a->v_head_dim)
            rc_fail(c, "latent attention's widths are set but kv_lora_rank is 0");
        return;
    }
    if (a->kv_rank < 0 || a->kv_rank > big || a->q_rank < 0 || a->q_rank > big || a->nope_head_dim < 1 ||
        a->nope_head_dim > 1024 || a->rope_head_dim < 2 || a->rope_head_dim > 1024 || a->rope_head_dim % 2 ||
        a->v_head_dim < 1 || a->v_head_dim > 1024)
        rc_fail(c, "latent attention's ranks or head widths are out of range");
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
    read_moe(c, m);
    read_mla(c, m);
    m->head_dim = rc_i64(c);
    uint32_t qk_norm = rc_u32(c);
    if (!c->failed && (m->head_dim < 0 || m->head_dim > 1024 || (m->head_dim > 0 && m->mla.kv_rank > 0)))
        rc_fail(c, "head_dim %lld out of range (0 to 1024, 0 with latent attention)", (long long)m->head_dim);
    if (qk_norm > 1) rc_fail(c, "qk_norm is %u, not 0 or 1", qk_norm);
    m->qk_norm = qk_norm == 1;
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
    t->data_size = rc_u64(c);
    t->data_crc32 = rc_u32(c);
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
    read_constraints(c, &p->constraints);
    p->pred.step_time_s = rc_f64(c); p->pred.tokens_per_s = rc_f64(c); p->pred.mfu = rc_f64(c);
    p->pred.peak_bytes_estimate = rc_f64(c); p->pred.peak_bytes_plan = rc_f64(c);
    p->pred.bubble_fraction = rc_f64(c);
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

/* ---- folded tables: a count pass, then an expanding pass ------------------
 * The count pass reads the items once (a loop's body once), checks their
 * structure and totals the rows and loops without allocating; only when the
 * totals equal the program's counts are the tables allocated and the items
 * read again, each loop's body once per iteration with that iteration's
 * strides added. Every expanded row gets the same checks as a stored one. */
#define MAX_ROWS (UINT32_C(1) << 25) /* rows per table after expansion */
/* a leaf's fixed part after its tag: an instruction's fields, a buffer's
 * name (offset, length) and fields */
#define INSTR_LEAF_BYTES (4 * 8 + 4 * PLC_INSTR_BUFS + 8 * PLC_INSTR_ARGS + 8 * PLC_INSTR_FARGS)
#define BUFFER_LEAF_BYTES (16 + 4 + 4 + 8 + 8 + 8 + 4 + 4 + 4 + 8 + 4 + 8)

typedef struct expand {
    plc_program *g;
    uint32_t pi;
    int instrs;     /* 0: the buffer table, 1: the instruction table */
    int emit;       /* 0: the count pass */
    uint64_t rows;  /* rows read (count pass: totalled) */
    uint32_t loops; /* loops met (count pass) or recorded */
    plc_fold *folds;
    uint32_t nfolds; /* room in folds */
    int64_t k[PLC_FOLD_MAX_DEPTH];
} expand;

static int fits_i32(int64_t v) { return v >= INT32_MIN && v <= INT32_MAX; }

/* one leaf: its fields, then one stride mask and strides per enclosing loop */
static void read_leaf(rcur *c, expand *e, uint32_t depth)
{
    uint32_t nf = e->instrs ? INSTR_FIELDS : BUFFER_FIELDS;
    int64_t f[PLC_FOLD_MAX_FIELDS] = {0};
    const char *name = NULL;
    uint64_t name_len = 0;
    int64_t tok[PLC_NAME_TOKENS] = {0};
    size_t tst[PLC_NAME_TOKENS], ttl[PLC_NAME_TOKENS];
    int ntok = 0;
    /* the fixed part is checked once against the section, then read in place */
    if (!rc_need(c, e->instrs ? INSTR_LEAF_BYTES : BUFFER_LEAF_BYTES)) return;
    const uint8_t *q = c->p + c->pos;
    if (e->instrs) {
        for (int k = 0; k < 3; k++, q += 4) f[k] = plc_get_le32(q);
        for (int k = 3; k < 8 + PLC_INSTR_BUFS; k++, q += 4) f[k] = (int32_t)plc_get_le32(q);
        for (int k = 8 + PLC_INSTR_BUFS; k < INSTR_FIELDS; k++, q += 8) f[k] = (int64_t)plc_get_le64(q);
        c->pos += INSTR_LEAF_BYTES;
    } else {
        uint64_t off = plc_get_le64(q);
        name_len = plc_get_le64(q + 8);
        q += 16;
        if (off != NO_STRING) {
            if (off > c->strings_len || name_len > c->strings_len - off) {
                rc_fail(c, "program %u buffer name (offset %llu, length %llu) lies outside the %zu-byte string section",
                        e->pi, (unsigned long long)off, (unsigned long long)name_len, c->strings_len);
                return;
            }
            name = (const char *)c->strings + off;
            ntok = plc_name_tokens(name, (size_t)name_len, tok, tst, ttl);
        }
        f[0] = plc_get_le32(q); f[1] = plc_get_le32(q + 4); f[2] = (int64_t)plc_get_le64(q + 8);
        f[3] = (int64_t)plc_get_le64(q + 16); f[4] = (int64_t)plc_get_le64(q + 24); f[5] = (int32_t)plc_get_le32(q + 32);
        f[6] = plc_get_le32(q + 36); f[7] = plc_get_le32(q + 40); f[8] = (int64_t)plc_get_le64(q + 44);
        f[9] = plc_get_le32(q + 52); f[10] = (int64_t)plc_get_le64(q + 56);
        for (int k = 0; k < PLC_NAME_TOKENS; k++) f[11 + k] = tok[k];
        c->pos += BUFFER_LEAF_BYTES;
    }
    for (uint32_t l = 0; l < depth && !c->failed; l++) {
        uint32_t mask = rc_u32(c);
        if (nf < 32 && mask >> nf) {
            rc_fail(c, "program %u: stride mask 0x%x names fields beyond the %u of a row", e->pi, mask, nf);
            return;
        }
        if (!e->instrs && (mask >> (11 + ntok)))
            rc_fail(c, "program %u: a stride for a number the buffer name does not have", e->pi);
        if (!rc_need(c, 8 * (size_t)__builtin_popcount(mask))) return;
        for (const uint8_t *s = c->p + c->pos; mask; mask &= mask - 1, s += 8, c->pos += 8) {
            int b = __builtin_ctz(mask);
            f[b] = (int64_t)((uint64_t)f[b] + (uint64_t)e->k[l] * plc_get_le64(s));
        }
    }
    if (c->failed) return;
    uint64_t r = e->rows++;
    if (!e->emit) return;
    if (r >= (e->instrs ? e->g->ninstrs : e->g->nbuffers)) { /* the count pass saw the same bytes: never */
        rc_fail(c, "program %u: the second reading found more rows than the first", e->pi);
        return;
    }
    uint32_t i = (uint32_t)r;
    if (e->instrs) {
        plc_instr *in = &e->g->instrs[i];
        if (f[0] < 0 || f[0] >= PLC_OP_COUNT) rc_fail(c, "program %u instruction %u: op %lld out of range", e->pi, i, (long long)f[0]);
        if (f[1] < 0 || f[1] >= PLC_STREAM_COUNT) rc_fail(c, "program %u instruction %u: stream %lld out of range", e->pi, i, (long long)f[1]);
        if (f[2] < 0 || f[2] >= PLC_PHASE_COUNT) rc_fail(c, "program %u instruction %u: phase %lld out of range", e->pi, i, (long long)f[2]);
        for (int k = 3; k < 8 + PLC_INSTR_BUFS; k++)
            if (!fits_i32(f[k])) rc_fail(c, "program %u instruction %u: field %d is %lld, outside 32 bits", e->pi, i, k, (long long)f[k]);
        in->op = (plc_op)f[0]; in->stream = (plc_stream)f[1]; in->phase = (plc_phase)f[2];
        in->layer = (int32_t)f[3]; in->micro = (int32_t)f[4]; in->group = (int32_t)f[5];
        in->peer = (int32_t)f[6]; in->wait = (int32_t)f[7];
        for (int k = 0; k < PLC_INSTR_BUFS; k++) in->buf[k] = (int32_t)f[8 + k];
        for (int k = 0; k < PLC_INSTR_ARGS; k++) in->arg[k] = f[8 + PLC_INSTR_BUFS + k];
        for (int k = 0; k < PLC_INSTR_FARGS; k++) memcpy(&in->farg[k], &f[8 + PLC_INSTR_BUFS + PLC_INSTR_ARGS + k], 8);
        return;
    }
    plc_buffer *x = &e->g->buffers[i];
    if (f[0] < 0 || f[0] >= PLC_BUF_KIND_COUNT) rc_fail(c, "program %u buffer %u: kind %lld out of range", e->pi, i, (long long)f[0]);
    if (f[1] < 0 || f[1] >= PLC_DTYPE_COUNT) rc_fail(c, "program %u buffer %u: dtype %lld out of range", e->pi, i, (long long)f[1]);
    if (f[6] < 0 || f[6] > PLC_SHARD_FLAT) rc_fail(c, "program %u buffer %u: shard kind %lld out of range", e->pi, i, (long long)f[6]);
    if (!fits_i32(f[5]) || f[7] < 0 || f[7] > UINT32_MAX || f[9] < 0 || f[9] > UINT32_MAX)
        rc_fail(c, "program %u buffer %u: tensor or shard dimensions outside 32 bits", e->pi, i);
    for (int k = 0; k < ntok; k++)
        if (f[11 + k] < 0 || f[11 + k] > INT64_C(999999999999999))
            rc_fail(c, "program %u buffer %u: a number of the name leaves 0..10^15", e->pi, i);
    if (c->failed) return;
    x->kind = (plc_buf_kind)f[0]; x->dtype = (plc_dtype)f[1]; x->bytes = (uint64_t)f[2];
    x->rows = f[3]; x->cols = f[4]; x->tensor = (int32_t)f[5]; x->shard = (plc_shard_kind)f[6];
    x->shard_dims = (uint32_t)f[7]; x->nshards = f[8]; x->flat_dims = (uint32_t)f[9]; x->flat_shards = f[10];
    if (!name) return;
    int moved = 0;
    for (int k = 0; k < ntok; k++) moved |= f[11 + k] != tok[k];
    if (!moved) {
        x->name = plc_arena_strndup(c->arena, name, (size_t)name_len);
        return;
    }
    char buf[512];
    size_t n = 0, from = 0;
    for (int k = 0; k <= ntok && n < sizeof buf; k++) {
        size_t upto = k < ntok ? tst[k] : (size_t)name_len;
        size_t seg = upto - from < sizeof buf - n ? upto - from : sizeof buf - n;
        memcpy(buf + n, name + from, seg);
        n += seg;
        if (k < ntok) {
            char digits[20];
            int w = 0;
            uint64_t v = (uint64_t)f[11 + k];
            do digits[w++] = (char)('0' + v % 10); while ((v /= 10) && w < 20);
            for (; w > 0 && n < sizeof buf; n++) buf[n] = digits[--w];
            from = tst[k] + ttl[k];
        }
    }
    if (n >= sizeof buf) {
        rc_fail(c, "program %u buffer %u: name longer than %zu bytes", e->pi, i, sizeof buf - 1);
        return;
    }
    x->name = plc_arena_strndup(c->arena, buf, n);
}

static void read_items(rcur *c, expand *e, uint32_t nitems, uint32_t depth)
{
    for (uint32_t it = 0; it < nitems && !c->failed; it++) {
        uint32_t tag = rc_u32(c);
        if (tag == 0) {
            read_leaf(c, e, depth);
            if (e->rows > MAX_ROWS) rc_fail(c, "program %u: more than %u rows in a table", e->pi, MAX_ROWS);
            continue;
        }
        uint32_t count = rc_u32(c), body_items = rc_u32(c);
        if (c->failed) return;
        if (tag != 1) {
            rc_fail(c, "program %u: record tag %u is neither a row (0) nor a loop (1)", e->pi, tag);
            return;
        }
        if (count < 2 || body_items < 1 || depth >= PLC_FOLD_MAX_DEPTH) {
            rc_fail(c, "program %u: loop of %u iterations over %u items at depth %u (at least 2, 1, at most %d deep)",
                    e->pi, count, body_items, depth, PLC_FOLD_MAX_DEPTH - 1);
            return;
        }
        uint64_t first = e->rows;
        if (!e->emit) {
            e->loops++;
            read_items(c, e, body_items, depth + 1);
            uint64_t body = e->rows - first;
            if (c->failed) return;
            if (body > MAX_ROWS || (uint64_t)count * body > MAX_ROWS) {
                rc_fail(c, "program %u: a loop expands to more than %u rows", e->pi, MAX_ROWS);
                return;
            }
            e->rows = first + (uint64_t)count * body;
            continue;
        }
        int outer_first = 1;
        for (uint32_t l = 0; l < depth; l++) outer_first &= e->k[l] == 0;
        if (outer_first && e->loops >= e->nfolds) {
            rc_fail(c, "program %u: the second reading found more loops than the first", e->pi);
            return;
        }
        plc_fold *fold = outer_first ? &e->folds[e->loops++] : NULL;
        size_t start = c->pos, end = c->pos;
        for (uint32_t r = 0; r < count && !c->failed; r++) {
            c->pos = start;
            e->k[depth] = r;
            read_items(c, e, body_items, depth + 1);
            end = c->pos;
            if (fold && r == 0) *fold = (plc_fold){(uint32_t)first, (uint32_t)(e->rows - first), count, depth};
        }
        e->k[depth] = 0;
        c->pos = end;
    }
}

/* the count pass over one table's items from c->pos: rows and loops */
static void count_items(rcur *c, expand *e, uint32_t nitems, uint32_t declared, const char *what)
{
    e->emit = 0;
    e->rows = 0;
    e->loops = 0;
    read_items(c, e, nitems, 0);
    if (!c->failed && e->rows != declared)
        rc_fail(c, "program %u: the %s expand to %llu, the program declares %u", e->pi, what,
                (unsigned long long)e->rows, declared);
}

static void emit_items(rcur *c, expand *e, uint32_t nitems, uint32_t nloops, plc_fold **folds)
{
    e->emit = 1;
    e->rows = 0;
    e->loops = 0;
    e->folds = PLC_NEW_ARRAY(c->arena, plc_fold, nloops ? nloops : 1);
    e->nfolds = nloops;
    *folds = e->folds;
    read_items(c, e, nitems, 0);
}

static void read_programs(rcur *c, plc_plan *p)
{
    p->nprograms = rc_count(c, 36, "programs");
    if (c->failed) return;
    p->programs = PLC_NEW_ARRAY(c->arena, plc_program, p->nprograms ? p->nprograms : 1);
    for (uint32_t pi = 0; pi < p->nprograms && !c->failed; pi++) {
        plc_program *g = &p->programs[pi];
        g->arena_bytes = rc_u64(c);
        g->loss_buf = rc_i32(c);
        g->gnorm_buf = rc_i32(c);
        uint32_t nb = rc_u32(c), ni = rc_u32(c), bitems = rc_u32(c), iitems = rc_u32(c);
        if (c->failed) return;
        if (nb > MAX_ROWS || ni > MAX_ROWS) {
            rc_fail(c, "program %u claims %u buffers and %u instructions (at most %u each)", pi, nb, ni, MAX_ROWS);
            return;
        }
        expand e = {.g = g, .pi = pi};
        size_t buffers_at = c->pos;
        e.instrs = 0;
        count_items(c, &e, bitems, nb, "buffer records");
        uint32_t bloops = e.loops;
        uint32_t noffs = rc_u32(c);
        if (c->failed) return;
        if (noffs > nb || (noffs == 0 && nb > 0)) {
            rc_fail(c, "program %u: %u distinct offsets for %u buffers", pi, noffs, nb);
            return;
        }
        uint32_t width = noffs <= 65536 ? 2 : 4;
        if ((uint64_t)noffs * 8 + (uint64_t)nb * width > c->len - c->pos) {
            rc_fail(c, "program %u: the offsets of %u buffers do not fit in the %zu bytes left", pi, nb, c->len - c->pos);
            return;
        }
        size_t offsets_at = c->pos;
        c->pos += (size_t)noffs * 8 + (size_t)nb * width;
        size_t instrs_at = c->pos;
        e.instrs = 1;
        count_items(c, &e, iitems, ni, "instruction records");
        uint32_t iloops = e.loops;
        size_t end = c->pos;
        if (c->failed) return;
        g->nbuffers = nb;
        g->ninstrs = ni;
        g->buffers = PLC_NEW_ARRAY(c->arena, plc_buffer, nb ? nb : 1);
        g->instrs = PLC_NEW_ARRAY(c->arena, plc_instr, ni ? ni : 1);
        c->pos = buffers_at;
        e.instrs = 0;
        emit_items(c, &e, bitems, bloops, &g->buf_folds);
        g->nbuf_folds = bloops;
        c->pos = offsets_at;
        uint64_t *offs = PLC_NEW_ARRAY(c->arena, uint64_t, noffs ? noffs : 1);
        for (uint32_t i = 0; i < noffs; i++) {
            offs[i] = rc_u64(c);
            if (i > 0 && offs[i] <= offs[i - 1]) rc_fail(c, "program %u: offset table not strictly ascending", pi);
        }
        for (uint32_t i = 0; i < nb && !c->failed; i++) {
            uint32_t k;
            if (width == 2) {
                k = (uint32_t)c->p[c->pos] | (uint32_t)c->p[c->pos + 1] << 8;
                c->pos += 2;
            } else {
                k = rc_u32(c);
            }
            if (k >= noffs) rc_fail(c, "program %u buffer %u: offset index %u of %u", pi, i, k, noffs);
            else g->buffers[i].offset = offs[k];
        }
        c->pos = instrs_at;
        e.instrs = 1;
        emit_items(c, &e, iitems, iloops, &g->instr_folds);
        g->ninstr_folds = iloops;
        if (!c->failed && c->pos != end) rc_fail(c, "program %u: the second reading ended elsewhere", pi);
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
