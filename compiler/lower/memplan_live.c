/* memplan_live.c: measures of a program that the placement strategies and
 * the table of passes read: the live sum at each instruction (the sizes of
 * the buffers alive there, summed), its largest value (the bound: no
 * placement needs less, and one that needs no more is optimal), its
 * largest value over a range of instructions, and the pairs of buffers
 * whose lifetimes overlap (what a greedy placement costs). Sizes are
 * rounded up to PLC_PLAN_ALIGN, as placed. */
#include "compiler/lower/lower_int.h"

#include <stdlib.h>

/* from the live sum's differences, summed in place */
void mp_live_sums(const mp_prog *G, uint64_t *d)
{
    const plc_program *prog = G->prog;
    for (uint32_t b = 0; b < prog->nbuffers; b++) {
        if (G->persistent[b] || G->first[b] < 0) continue;
        d[G->first[b]] += mp_align_up(prog->buffers[b].bytes);
        d[G->last[b] + 1] -= mp_align_up(prog->buffers[b].bytes); /* wraps; the sum undoes it */
    }
    for (uint32_t i = 1; i < prog->ninstrs; i++) d[i] += d[i - 1];
}

int mp_range_max_init(mp_range_max *R, const mp_prog *G)
{
    uint32_t n = G->prog->ninstrs ? G->prog->ninstrs : 1;
    R->n = n;
    R->v = calloc(2 * (size_t)n + 1, sizeof *R->v);
    if (!R->v) return -1;
    mp_live_sums(G, R->v + n);
    for (uint32_t i = n - 1; i >= 1; i--) R->v[i] = R->v[2 * i] > R->v[2 * i + 1] ? R->v[2 * i] : R->v[2 * i + 1];
    return 0;
}

uint64_t mp_range_max_at(const mp_range_max *R, int32_t a, int32_t b)
{
    uint64_t m = 0;
    for (uint32_t lo = (uint32_t)a + R->n, hi = (uint32_t)b + 1 + R->n; lo < hi; lo >>= 1, hi >>= 1) {
        if ((lo & 1) && R->v[lo] > m) m = R->v[lo];
        if (lo & 1) lo++;
        if ((hi & 1) && R->v[hi - 1] > m) m = R->v[hi - 1];
    }
    return m;
}

uint64_t mp_live_bound(const mp_prog *G)
{
    uint64_t *d = calloc((size_t)G->prog->ninstrs + 1, sizeof *d), bound = 0;
    if (!d) return 0;
    mp_live_sums(G, d);
    for (uint32_t i = 0; i < G->prog->ninstrs; i++)
        if (d[i] > bound) bound = d[i];
    free(d);
    return bound;
}

/* for each buffer, the buffers alive when it starts (each is merged once
 * when it is placed) */
double mp_placement_work(const mp_prog *G)
{
    uint32_t nb = G->prog->nbuffers, ni = G->prog->ninstrs;
    int64_t *delta = calloc(ni + 1, sizeof *delta);
    uint32_t *starts = calloc(ni + 1, sizeof *starts);
    double work = 1e300;
    if (delta && starts) {
        for (uint32_t b = 0; b < nb; b++) {
            if (G->persistent[b] || G->first[b] < 0) continue;
            delta[G->first[b]]++;
            delta[G->last[b] + 1]--;
            starts[G->first[b]]++;
        }
        int64_t live = 0;
        work = 0;
        for (uint32_t i = 0; i < ni; i++) {
            live += delta[i];
            work += (double)starts[i] * (double)live;
        }
    }
    free(delta);
    free(starts);
    return work;
}
