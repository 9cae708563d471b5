/* memplan.c: lifetimes and best-fit placement of a program's buffers. */
#include "compiler/lower/memplan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ALIGN 64u

static uint64_t align_up(uint64_t x) { return (x + ALIGN - 1) / ALIGN * ALIGN; }

void plc_buffer_lifetimes(const plc_program *prog, int32_t *first, int32_t *last)
{
    uint32_t n = prog->ninstrs;
    /* completion of each comm-stream instruction: the first later instruction waiting for it */
    int32_t *done = malloc(sizeof *done * (n ? n : 1));
    for (uint32_t i = 0; i < n; i++) done[i] = prog->instrs[i].stream == PLC_STREAM_COMM ? (int32_t)n - 1 : (int32_t)i;
    for (uint32_t j = 0; j < n; j++) {
        int32_t w = prog->instrs[j].wait;
        if (w >= 0 && prog->instrs[w].stream == PLC_STREAM_COMM && (int32_t)j < done[w] && (int32_t)j > w)
            done[w] = (int32_t)j;
    }
    for (uint32_t b = 0; b < prog->nbuffers; b++) first[b] = last[b] = -1;
    for (uint32_t i = 0; i < n; i++) {
        const plc_instr *in = &prog->instrs[i];
        for (int k = 0; k < PLC_INSTR_BUFS; k++) {
            int32_t b = in->buf[k];
            if (b < 0) continue;
            if (first[b] < 0) first[b] = (int32_t)i;
            if (done[i] > last[b]) last[b] = done[i];
        }
    }
    free(done);
}

typedef struct hole {
    uint64_t off, size;
} hole;

typedef struct allocator {
    hole *h;
    size_t n, cap;
    uint64_t top, peak;
} allocator;

static int64_t alloc_best_fit(allocator *A, uint64_t size)
{
    size_t best = A->n;
    for (size_t i = 0; i < A->n; i++)
        if (A->h[i].size >= size && (best == A->n || A->h[i].size < A->h[best].size)) best = i;
    uint64_t off;
    if (best < A->n) {
        off = A->h[best].off;
        A->h[best].off += size;
        A->h[best].size -= size;
        if (A->h[best].size == 0) {
            memmove(&A->h[best], &A->h[best + 1], sizeof *A->h * (A->n - best - 1));
            A->n--;
        }
    } else if (A->n && A->h[A->n - 1].off + A->h[A->n - 1].size == A->top) {
        /* the topmost hole touches the top: grow it */
        off = A->h[A->n - 1].off;
        A->top = off + size;
        A->n--;
    } else {
        off = A->top;
        A->top += size;
    }
    if (A->top > A->peak) A->peak = A->top;
    return (int64_t)off;
}

static int free_block(allocator *A, uint64_t off, uint64_t size)
{
    size_t i = 0;
    while (i < A->n && A->h[i].off < off) i++;
    if (A->n == A->cap) {
        size_t cap = A->cap ? A->cap * 2 : 64;
        hole *h = realloc(A->h, sizeof *h * cap);
        if (!h) return -1;
        A->h = h;
        A->cap = cap;
    }
    memmove(&A->h[i + 1], &A->h[i], sizeof *A->h * (A->n - i));
    A->h[i] = (hole){off, size};
    A->n++;
    /* merge with the next, then the previous */
    if (i + 1 < A->n && A->h[i].off + A->h[i].size == A->h[i + 1].off) {
        A->h[i].size += A->h[i + 1].size;
        memmove(&A->h[i + 1], &A->h[i + 2], sizeof *A->h * (A->n - i - 2));
        A->n--;
    }
    if (i > 0 && A->h[i - 1].off + A->h[i - 1].size == A->h[i].off) {
        A->h[i - 1].size += A->h[i].size;
        memmove(&A->h[i], &A->h[i + 1], sizeof *A->h * (A->n - i - 1));
        A->n--;
    }
    return 0;
}

int plc_memplan(plc_program *prog, const bool *persistent, const int32_t *alias_first, const int32_t *alias_last,
                plc_memplan_stats *st, char *err, size_t errlen)
{
    uint32_t nb = prog->nbuffers, ni = prog->ninstrs;
    memset(st, 0, sizeof *st);
    int rc = 0;
    /* 1. persistent region, id order */
    uint64_t top = 0;
    for (uint32_t b = 0; b < nb; b++) {
        if (!persistent[b] || alias_first[b] >= 0) continue;
        prog->buffers[b].offset = top;
        top = align_up(top + prog->buffers[b].bytes);
    }
    for (uint32_t b = 0; b < nb; b++) {
        if (alias_first[b] < 0) {
            st->bytes_by_kind[prog->buffers[b].kind] += prog->buffers[b].bytes;
            continue;
        }
        const plc_buffer *f = &prog->buffers[alias_first[b]], *l = &prog->buffers[alias_last[b]];
        if (!persistent[alias_first[b]] || !persistent[alias_last[b]] || l->offset < f->offset) {
            snprintf(err, errlen, "memory plan: alias '%s' does not cover persistent members", prog->buffers[b].name);
            return -1;
        }
        plc_buffer *x = &prog->buffers[b];
        x->offset = f->offset;
        if (x->bytes != l->offset + l->bytes - f->offset) {
            snprintf(err, errlen, "memory plan: alias '%s' spans %llu bytes, its members %llu", x->name,
                     (unsigned long long)x->bytes, (unsigned long long)(l->offset + l->bytes - f->offset));
            return -1;
        }
    }
    st->persistent_bytes = top;
    uint64_t base = top;

    /* 2. lifetimes, as start/end lists per instruction */
    int32_t *first = malloc(sizeof *first * (nb ? nb : 1)), *last = malloc(sizeof *last * (nb ? nb : 1));
    int32_t *start_head = malloc(sizeof(int32_t) * (ni + 1)), *end_head = malloc(sizeof(int32_t) * (ni + 1));
    int32_t *start_next = malloc(sizeof(int32_t) * (nb ? nb : 1)), *end_next = malloc(sizeof(int32_t) * (nb ? nb : 1));
    allocator A = {0};
    if (!first || !last || !start_head || !end_head || !start_next || !end_next) {
        snprintf(err, errlen, "memory plan: out of memory");
        rc = -1;
        goto out;
    }
    plc_buffer_lifetimes(prog, first, last);
    for (uint32_t i = 0; i <= ni; i++) start_head[i] = end_head[i] = -1;
    uint64_t unused_max = 0;
    for (uint32_t b = 0; b < nb; b++) {
        if (persistent[b]) continue;
        if (first[b] < 0) { /* never touched: shares the start of the dynamic region */
            prog->buffers[b].offset = base;
            if (prog->buffers[b].bytes > unused_max) unused_max = prog->buffers[b].bytes;
            continue;
        }
        st->dynamic_total += align_up(prog->buffers[b].bytes);
        start_next[b] = start_head[first[b]];
        start_head[first[b]] = (int32_t)b;
        end_next[b] = end_head[last[b]];
        end_head[last[b]] = (int32_t)b;
    }
    /* 3. sweep: at instruction i free what ended before i, then place what starts at i */
    for (uint32_t i = 0; i < ni; i++) {
        if (i > 0)
            for (int32_t b = end_head[i - 1]; b >= 0; b = end_next[b])
                if (free_block(&A, prog->buffers[b].offset - base, align_up(prog->buffers[b].bytes))) {
                    snprintf(err, errlen, "memory plan: out of memory");
                    rc = -1;
                    goto out;
                }
        uint64_t before = A.peak;
        for (int32_t b = start_head[i]; b >= 0; b = start_next[b])
            prog->buffers[b].offset = base + (uint64_t)alloc_best_fit(&A, align_up(prog->buffers[b].bytes));
        if (A.peak > before) st->peak_instr = i;
    }
    st->dynamic_peak = A.peak > unused_max ? A.peak : align_up(unused_max);
    prog->arena_bytes = base + st->dynamic_peak;
out:
    free(A.h);
    free(first);
    free(last);
    free(start_head);
    free(end_head);
    free(start_next);
    free(end_next);
    return rc;
}
