/* memplan_skyline.c: placement on a skyline, best-fit strip packing with
 * the buffers fixed in time: the lowest stretch of the region's floor
 * takes the best-keyed buffer that fits in it. */
#include "compiler/lower/lower_int.h"

#include <stdlib.h>

/* A buffer as the skyline sees it: its sections of time, its key. */
typedef struct sky_item {
    int32_t buf;
    uint32_t fs, ls; /* first and last section it spans */
    uint64_t size;
    double key; /* its size times a power of its lifetime (rounded alike on every IEEE machine) */
} sky_item;

/* The skyline over sections of time (the spans between consecutive first
 * uses and ends of lifetimes): each section's floor, below which it is
 * taken, and how many unplaced buffers span it; a tree of minima finds the
 * lowest floor among the sections that still have some (the leftmost). */
typedef struct skyline {
    uint32_t ns, size;  /* sections; leaves of the tree, a power of two >= ns */
    uint64_t *floor;    /* [ns] */
    uint32_t *rem;      /* [ns] */
    uint32_t *tree;     /* [2 * size] a section of least floor among those with rem > 0, or UINT32_MAX */
} skyline;

static bool sky_less(const skyline *S, uint32_t a, uint32_t b)
{
    if (b == UINT32_MAX) return a != UINT32_MAX;
    if (a == UINT32_MAX) return false;
    return S->floor[a] != S->floor[b] ? S->floor[a] < S->floor[b] : a < b;
}

/* after the floors or counts of sections a..b changed */
static void sky_update(skyline *S, uint32_t a, uint32_t b)
{
    for (uint32_t s = a; s <= b; s++) S->tree[s + S->size] = S->rem[s] ? s : UINT32_MAX;
    for (uint32_t lo = (a + S->size) >> 1, hi = (b + S->size) >> 1; lo >= 1; lo >>= 1, hi >>= 1)
        for (uint32_t q = lo; q <= hi; q++) {
            uint32_t x = S->tree[2 * q], y = S->tree[2 * q + 1];
            S->tree[q] = sky_less(S, y, x) ? y : x;
        }
}

/* the larger key first, then the lower id */
static bool sky_better(const sky_item *x, const sky_item *y)
{
    return x->key != y->key ? x->key > y->key : x->buf < y->buf;
}

/* Places every buffer with a lifetime on a skyline: each step takes the
 * lowest floor (see skyline), widens it to the run of neighbouring
 * sections at that floor that unplaced buffers span, and sets there the
 * unplaced buffer lying inside the run of the largest key (its size times
 * its lifetime to the power given); where none lies inside, the
 * run is raised to the lower of its neighbours, the space below wasted.
 * Burke, Kendall and Whitwell's best-fit for strip packing (Operations
 * Research 52(4), 2004), the buffers fixed in time. Returns -1 when out of
 * memory. */
int mp_place_skyline(const mp_prog *G, int power, uint64_t *peak, uint32_t *peak_instr)
{
    plc_program *prog = G->prog;
    const int32_t *first = G->first, *last = G->last;
    const bool *persistent = G->persistent;
    uint64_t base = G->base;
    uint32_t nb = prog->nbuffers, ni = prog->ninstrs, n = 0;
    uint32_t *sec = calloc((size_t)ni + 1, sizeof *sec);
    sky_item *it = malloc(sizeof *it * (nb ? nb : 1));
    uint32_t *bstart = NULL, *bcount = NULL, *pos = NULL;
    skyline S = {0};
    int rc = -1;
    if (!sec || !it) goto out;
    /* sections: sec[t] is the section of instruction t */
    for (uint32_t b = 0; b < nb; b++) {
        if (persistent[b] || first[b] < 0) continue;
        sec[first[b]] = 1;
        sec[last[b] + 1] = 1;
    }
    for (uint32_t t = 0, c = 0; t <= ni; t++) {
        c += sec[t];
        sec[t] = c ? c - 1 : 0;
    }
    S.ns = sec[ni] + 1;
    for (S.size = 1; S.size < S.ns; S.size *= 2) {}
    S.floor = calloc(S.ns, sizeof *S.floor);
    S.rem = calloc(S.ns, sizeof *S.rem);
    S.tree = malloc(sizeof *S.tree * 2 * S.size);
    bstart = calloc((size_t)S.ns + 1, sizeof *bstart);
    bcount = calloc(S.ns, sizeof *bcount);
    pos = malloc(sizeof *pos * (nb ? nb : 1));
    if (!S.floor || !S.rem || !S.tree || !bstart || !bcount || !pos) goto out;
    for (uint32_t b = 0; b < nb; b++) {
        if (persistent[b] || first[b] < 0) continue;
        uint64_t size = mp_align_up(prog->buffers[b].bytes);
        double life = (double)(last[b] - first[b]) + 1, key = (double)size;
        for (int p = 0; p < power; p++) key *= life;
        it[n] = (sky_item){(int32_t)b, sec[first[b]], sec[last[b]], size, key};
        bcount[it[n].fs]++;
        for (uint32_t s = it[n].fs; s <= it[n].ls; s++) S.rem[s]++;
        n++;
    }
    /* the unplaced buffers by first section: bucket s at pos[bstart[s], bstart[s] + bcount[s]) */
    for (uint32_t s = 0; s < S.ns; s++) bstart[s + 1] = bstart[s] + bcount[s];
    for (uint32_t s = 0; s < S.ns; s++) bcount[s] = 0;
    for (uint32_t k = 0; k < n; k++) pos[bstart[it[k].fs] + bcount[it[k].fs]++] = k;
    for (uint32_t q = 0; q < 2 * S.size; q++) S.tree[q] = UINT32_MAX;
    sky_update(&S, 0, S.ns - 1);
    *peak = 0;
    *peak_instr = 0;
    for (uint32_t left = n; left;) {
        uint32_t s0 = S.tree[1], t0 = s0, t1 = s0;
        uint64_t fl = S.floor[s0];
        while (t0 > 0 && S.rem[t0 - 1] && S.floor[t0 - 1] == fl) t0--;
        while (t1 + 1 < S.ns && S.rem[t1 + 1] && S.floor[t1 + 1] == fl) t1++;
        uint32_t bi = UINT32_MAX, bj = 0;
        for (uint32_t s = t0; s <= t1; s++)
            for (uint32_t j = bstart[s]; j < bstart[s] + bcount[s]; j++) {
                const sky_item *x = &it[pos[j]];
                if (x->ls <= t1 && (bi == UINT32_MAX || sky_better(x, &it[bi]))) bi = pos[j], bj = j;
            }
        if (bi == UINT32_MAX) { /* nothing lies inside: raise the run to its lower neighbour */
            uint64_t to = UINT64_MAX;
            if (t0 > 0 && S.rem[t0 - 1]) to = S.floor[t0 - 1];
            if (t1 + 1 < S.ns && S.rem[t1 + 1] && S.floor[t1 + 1] < to) to = S.floor[t1 + 1];
            if (to == UINT64_MAX) goto out; /* cannot happen: a buffer spanning s0 lies in the run */
            for (uint32_t s = t0; s <= t1; s++) S.floor[s] = to;
            sky_update(&S, t0, t1);
            continue;
        }
        sky_item *x = &it[bi];
        uint32_t fb = x->fs, lastj = bstart[fb] + --bcount[fb];
        pos[bj] = pos[lastj];
        prog->buffers[x->buf].offset = base + fl;
        if (fl + x->size > *peak) {
            *peak = fl + x->size;
            *peak_instr = (uint32_t)first[x->buf];
        }
        for (uint32_t s = x->fs; s <= x->ls; s++) {
            S.floor[s] = fl + x->size;
            S.rem[s]--;
        }
        sky_update(&S, x->fs, x->ls);
        left--;
    }
    rc = 0;
out:
    free(sec);
    free(it);
    free(S.floor);
    free(S.rem);
    free(S.tree);
    free(bstart);
    free(bcount);
    free(pos);
    return rc;
}
