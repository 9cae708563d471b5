/* lower_emit.c: the program builder: buffers and instructions appended to
 * arena-backed arrays that double when full. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/lower/lower_int.h"

/* the arrays grow with realloc while a program is built (large blocks grow
 * in place); lw_prog_finish hands them to the arena */
static void *grow(void *p, size_t size)
{
    void *q = realloc(p, size);
    if (!q) plc_oom_raise(size); /* PLC_E_SYSTEM to the command (plc/arena.h) */
    return q;
}

static void grow_bufs(lw_prog *P)
{
    uint32_t cap = P->capb ? P->capb * 2 : 256;
    P->bufs = grow(P->bufs, sizeof *P->bufs * cap);
    P->persistent = grow(P->persistent, sizeof *P->persistent * cap);
    P->alias_first = grow(P->alias_first, sizeof *P->alias_first * cap);
    P->alias_last = grow(P->alias_last, sizeof *P->alias_last * cap);
    P->capb = cap;
}

void lw_prog_finish(lw_prog *P, plc_program *out)
{
    /* the tables become the arena's, cut to size (in place): a copy of an
     * expanded plan's instructions cost a fifth of a lowering, most of it
     * in the first touch of the copy's pages */
    P->bufs = grow(P->bufs, sizeof *P->bufs * (P->nbufs ? P->nbufs : 1));
    P->ins = grow(P->ins, sizeof *P->ins * (P->nins ? P->nins : 1));
    plc_arena_adopt(P->a, P->bufs);
    plc_arena_adopt(P->a, P->ins);
    out->buffers = P->bufs;
    out->instrs = P->ins;
    P->bufs = NULL;
    P->ins = NULL;
    lw_prog_free(P);
}

void lw_prog_free(lw_prog *P)
{
    free(P->bufs);
    free(P->persistent);
    free(P->alias_first);
    free(P->alias_last);
    free(P->ins);
    P->bufs = NULL;
    P->persistent = NULL;
    P->alias_first = P->alias_last = NULL;
    P->ins = NULL;
    P->nbufs = P->capb = P->nins = P->capi = 0;
}

static int32_t new_buf(lw_prog *P, plc_buf_kind kind, plc_dtype dt, int64_t rows, int64_t cols, int64_t elems,
                       const char *name)
{
    if (P->nbufs == P->capb) grow_bufs(P);
    int32_t id = (int32_t)P->nbufs++;
    plc_buffer *b = &P->bufs[id];
    memset(b, 0, sizeof *b);
    b->name = plc_arena_strdup(P->a, name);
    b->kind = kind;
    b->dtype = dt;
    b->rows = rows;
    b->cols = cols;
    int64_t n = rows * cols > elems ? rows * cols : elems;
    b->bytes = (uint64_t)n * plc_dtype_size(dt);
    b->tensor = -1;
    b->shard = PLC_SHARD_NONE;
    b->nshards = 1;
    b->flat_shards = 1;
    P->persistent[id] = false;
    P->alias_first[id] = P->alias_last[id] = -1;
    return id;
}

int32_t lw_buf(lw_prog *P, plc_buf_kind kind, plc_dtype dt, int64_t rows, int64_t cols, const char *fmt, ...)
{
    char name[128];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(name, sizeof name, fmt, ap);
    va_end(ap);
    return new_buf(P, kind, dt, rows, cols, 0, name);
}

int32_t lw_buf_padded(lw_prog *P, plc_buf_kind kind, plc_dtype dt, int64_t rows, int64_t cols, int64_t elems,
                      const char *fmt, ...)
{
    char name[128];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(name, sizeof name, fmt, ap);
    va_end(ap);
    return new_buf(P, kind, dt, rows, cols, elems, name);
}

/* v in decimal at p, which has room for it; returns the end */
static char *put_int(char *p, int64_t v)
{
    char t[24];
    int n = 0;
    uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    do t[n++] = (char)('0' + u % 10); while (u /= 10);
    if (v < 0) *p++ = '-';
    while (n) *p++ = t[--n];
    return p;
}

/* Most of a plan's buffers are named here, the lowering's hottest path
 * after the memory plan: the name is put together by hand, where a
 * formatted print cost a sixth of a lowering. */
int32_t lw_buf_here(lw_prog *P, int64_t layers, plc_buf_kind kind, plc_dtype dt, int64_t rows, int64_t cols,
                    const char *what)
{
    char name[128], *p = name;
    const char *where = P->layer < 0 ? "embed" : P->layer >= layers ? "head" : "L";
    size_t n = strlen(where);
    memcpy(p, where, n), p += n;
    if (P->layer >= 0 && P->layer < layers) p = put_int(p, P->layer);
    memcpy(p, ".m", 2), p += 2;
    p = put_int(p, P->micro);
    *p++ = '.';
    size_t room = (size_t)(name + sizeof name - 1 - p), w = strlen(what);
    if (w > room) w = room; /* as snprintf cut it */
    memcpy(p, what, w), p += w;
    *p = '\0';
    return new_buf(P, kind, dt, rows, cols, 0, name);
}

int32_t lw_emit(lw_prog *P, plc_op op, plc_stream s, const int32_t *bufs, int nbufs, const int64_t *args, int nargs,
                double f0)
{
    if (P->nins == P->capi) {
        uint32_t cap = P->capi ? P->capi * 2 : 1024;
        P->ins = grow(P->ins, sizeof *P->ins * cap);
        P->capi = cap;
    }
    int32_t idx = (int32_t)P->nins++;
    plc_instr *in = &P->ins[idx];
    memset(in, 0, sizeof *in);
    in->op = op;
    in->stream = s;
    in->phase = P->phase;
    in->layer = P->layer;
    in->micro = P->micro;
    in->group = -1;
    in->peer = -1;
    in->wait = -1;
    for (int k = 0; k < PLC_INSTR_BUFS; k++) in->buf[k] = k < nbufs ? bufs[k] : -1;
    for (int k = 0; k < nargs && k < PLC_INSTR_ARGS; k++) in->arg[k] = args[k];
    in->farg[0] = f0;
    return idx;
}

plc_instr *lw_last(lw_prog *P) { return &P->ins[P->nins - 1]; }

void lw_where(lw_prog *P, plc_phase ph, int32_t layer, int32_t micro)
{
    P->phase = ph;
    P->layer = layer;
    P->micro = micro;
}

/* the lowering's error (lower_int.h): below lower.c, lower_layer.c and
 * lower_moe.c, which all report through it */
int lw_fail(lw_ctx *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->err, c->errlen, fmt, ap);
    va_end(ap);
    return -1;
}
