/* memplan_online.c: online best-fit, the placement for programs too large
 * for the greedy orders: a sweep in instruction order that frees what
 * ended and places what starts in the smallest hole that fits; and the
 * same sweep on mirrored time (last use read backwards as first use). Its
 * cost grows with the holes, not with the pairs of overlapping lifetimes. */
#include "compiler/lower/lower_int.h"

#include <stdlib.h>
#include <string.h>

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


/* Places every buffer with a lifetime by sweeping the program: at each
 * instruction, frees what ended before it, then places what starts there in
 * the smallest hole that fits (online best-fit). The fallback for programs
 * too large for mp_place_by_size. Returns -1 when out of memory. */
int mp_place_online(const mp_prog *G, uint64_t *peak, uint32_t *peak_instr)
{
    plc_program *prog = G->prog;
    const int32_t *first = G->first, *last = G->last;
    const bool *persistent = G->persistent;
    uint64_t base = G->base;
    uint32_t nb = prog->nbuffers, ni = prog->ninstrs;
    int32_t *start_head = malloc(sizeof(int32_t) * (ni + 1)), *end_head = malloc(sizeof(int32_t) * (ni + 1));
    int32_t *start_next = malloc(sizeof(int32_t) * (nb ? nb : 1)), *end_next = malloc(sizeof(int32_t) * (nb ? nb : 1));
    allocator A = {0};
    int rc = -1;
    if (!start_head || !end_head || !start_next || !end_next) goto out;
    for (uint32_t i = 0; i <= ni; i++) start_head[i] = end_head[i] = -1;
    for (uint32_t b = 0; b < nb; b++) {
        if (persistent[b] || first[b] < 0) continue;
        start_next[b] = start_head[first[b]];
        start_head[first[b]] = (int32_t)b;
        end_next[b] = end_head[last[b]];
        end_head[last[b]] = (int32_t)b;
    }
    for (uint32_t i = 0; i < ni; i++) {
        if (i > 0)
            for (int32_t b = end_head[i - 1]; b >= 0; b = end_next[b])
                if (free_block(&A, prog->buffers[b].offset - base, mp_align_up(prog->buffers[b].bytes))) goto out;
        uint64_t before = A.peak;
        for (int32_t b = start_head[i]; b >= 0; b = start_next[b])
            prog->buffers[b].offset = base + (uint64_t)alloc_best_fit(&A, mp_align_up(prog->buffers[b].bytes));
        if (A.peak > before) *peak_instr = i;
    }
    *peak = A.peak;
    rc = 0;
out:
    free(A.h);
    free(start_head);
    free(end_head);
    free(start_next);
    free(end_next);
    return rc;
}

/* The online sweep on mirrored time (last use read backwards as first
 * use), kept where its region is smaller than *peak, the placement the
 * buffers hold now. Returns -1 when out of memory. */
int mp_place_online_mirrored(const mp_prog *G, uint64_t *peak, uint32_t *peak_instr)
{
    plc_program *prog = G->prog;
    const int32_t *first = G->first, *last = G->last;
    uint32_t nb = prog->nbuffers, ni = prog->ninstrs;
    int32_t *mf = malloc(sizeof *mf * (nb ? nb : 1)), *ml = malloc(sizeof *ml * (nb ? nb : 1));
    uint64_t *held = malloc(sizeof *held * (nb ? nb : 1));
    int rc = -1;
    if (!mf || !ml || !held) goto out;
    for (uint32_t b = 0; b < nb; b++) {
        held[b] = prog->buffers[b].offset;
        mf[b] = first[b] < 0 ? -1 : (int32_t)ni - 1 - last[b];
        ml[b] = first[b] < 0 ? -1 : (int32_t)ni - 1 - first[b];
    }
    uint64_t pk = 0;
    uint32_t at = 0;
    mp_prog M = *G;
    M.first = mf;
    M.last = ml;
    if (mp_place_online(&M, &pk, &at)) goto out;
    if (pk < *peak) {
        *peak = pk;
        *peak_instr = ni - 1 - at;
    } else {
        for (uint32_t b = 0; b < nb; b++) prog->buffers[b].offset = held[b];
    }
    rc = 0;
out:
    free(mf);
    free(ml);
    free(held);
    return rc;
}
