/* memplan_search.c: searches around the placement the buffers hold now,
 * neither of which ever grows its region: the jostle (every buffer pushed
 * up, then dropped down) and ruin and recreate (a box of buffers around
 * one above a line lifted and set back). */
#include "compiler/lower/lower_int.h"

#include <stdlib.h>
#include <string.h>

typedef mp_item item;

/* by offset, then decreasing size, then id */
static int cmp_item_off(const void *a, const void *b)
{
    const item *x = a, *y = b;
    if (x->off != y->off) return x->off < y->off ? -1 : 1;
    if (x->size != y->size) return x->size > y->size ? -1 : 1;
    return (x->buf > y->buf) - (x->buf < y->buf);
}

/* One jostle of the placement the buffers hold now (region *peak): every
 * buffer pushed up against the top, highest first (the lowest gap of
 * mirrored offsets), then dropped down, lowest first, each into the lowest
 * gap that holds it. Neither push raises the region (a buffer's place
 * before the push stays free for it), and the holes the first leaves low
 * take buffers from the top in the second: the region never grows, and
 * the buffers keep their new places. Returns -1 when out of memory. */
int mp_jostle(const mp_prog *G, uint64_t *peak, uint32_t *peak_instr)
{
    plc_program *prog = G->prog;
    const int32_t *first = G->first, *last = G->last;
    const bool *persistent = G->persistent;
    uint64_t base = G->base;
    uint32_t nb = prog->nbuffers, ni = prog->ninstrs ? prog->ninstrs : 1, n = 0;
    item *it = malloc(sizeof *it * (nb ? nb : 1));
    if (!it) return -1;
    for (uint32_t b = 0; b < nb; b++) {
        if (persistent[b] || first[b] < 0) continue;
        uint64_t size = mp_align_up(prog->buffers[b].bytes);
        it[n++] = (item){(int32_t)b, first[b], last[b], size, *peak - (prog->buffers[b].offset - base + size), 0, 0};
    }
    uint64_t up = 0, down = 0;
    int32_t pf = 0;
    int rc = -1;
    qsort(it, n, sizeof *it, cmp_item_off);
    if (mp_place_items(it, n, 0, ni, true, &up, &pf)) goto out;
    for (uint32_t k = 0; k < n; k++) it[k].off = up - it[k].off - it[k].size;
    qsort(it, n, sizeof *it, cmp_item_off);
    if (mp_place_items(it, n, 0, ni, true, &down, &pf)) goto out;
    if (down <= *peak) {
        *peak = down;
        *peak_instr = (uint32_t)pf;
        for (uint32_t k = 0; k < n; k++) prog->buffers[it[k].buf].offset = base + it[k].off;
    }
    rc = 0;
out:
    free(it);
    return rc;
}

/* ---- ruin and recreate ----------------------------------------------------- */

/* The search's own steering (its budget of pairs is memplan.c's): the goal
 * bound + bound / REFINE_LINE, at most REFINE_STEPS steps, the highest of
 * REFINE_PICK buffers drawn per step (three: a stage fewer within 1%). */
#define REFINE_LINE 100
#define REFINE_STEPS 1000
#define REFINE_PICK 2

/* A fixed-seed generator (xorshift64*): the search takes the same steps on
 * every run. */
static uint64_t next_rand(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 2685821657736338717ull;
}

/* how far an item's top rises above line */
static uint64_t above(const item *x, uint64_t line)
{
    return x->off + x->size > line ? x->off + x->size - line : 0;
}

/* by key (the order of recreation), then id */
static int cmp_item_k1(const void *a, const void *b)
{
    const item *x = a, *y = b;
    if (x->k1 != y->k1) return x->k1 < y->k1 ? -1 : 1;
    return (x->buf > y->buf) - (x->buf < y->buf);
}

/* A search around the placement the buffers hold now (region *peak), for
 * the programs the orders, skyline, jostle and ring slots leave more than
 * 1% above the bound. It works toward a line an eighth of the way from
 * the region down to the bound (not below the goal, bound + bound /
 * REFINE_LINE), and from each line reached to the next: each step takes
 * the highest of REFINE_PICK buffers drawn among those that rise above
 * the line, lifts every buffer that shares a window of time around it (up
 * to its lifetime more on either side) and reaches above a height below
 * it (a box of random extent), and sets them back one by one among the
 * others alive in the window, each in the tightest or the lowest gap that
 * holds it (largest first, in order of first use, longest-lived first, or
 * in a random order): ruin and recreate (Schrimpf et al., Journal of
 * Computational Physics 159(2), 2000). A step is kept where the region
 * does not grow and the tops above the line, summed, do not rise; the
 * search ends at the goal, after REFINE_STEPS steps, or past work_budget
 * pairs (each step charged the program's pairs, work, in the share of its
 * buffers the step sets or keeps around them). The region never grows.
 * Returns -1 when out of memory. */
int mp_refine(const mp_prog *G, uint64_t bound, double work, double work_budget, uint64_t *peak,
              uint32_t *peak_instr)
{
    plc_program *prog = G->prog;
    const int32_t *first = G->first, *last = G->last;
    const bool *persistent = G->persistent;
    uint64_t base = G->base;
    uint32_t nb = prog->nbuffers, n = 0;
    item *cur = malloc(sizeof *cur * (nb ? nb : 1)), *trial = malloc(sizeof *trial * (nb ? nb : 1));
    uint32_t *over_at = malloc(sizeof *over_at * (nb ? nb : 1)), *at = malloc(sizeof *at * (nb ? nb : 1));
    int rc = -1;
    if (!cur || !trial || !over_at || !at) goto out;
    for (uint32_t b = 0; b < nb; b++) {
        if (persistent[b] || first[b] < 0) continue;
        at[b] = n;
        cur[n++] = (item){(int32_t)b, first[b], last[b], mp_align_up(prog->buffers[b].bytes),
                          prog->buffers[b].offset - base, 0, 0};
    }
    uint64_t goal = bound + bound / REFINE_LINE, seed = 0x9e3779b97f4a7c15ull, region = 0, over = 0, line = 0;
    for (uint32_t k = 0; k < n; k++)
        if (cur[k].off + cur[k].size > region) region = cur[k].off + cur[k].size;
    double spent = 0;
    for (int step = 0; step < REFINE_STEPS && region > goal && spent <= work_budget; step++) {
        if (over == 0) { /* the next line */
            line = bound + (region - bound) * 7 / 8;
            if (line < goal) line = goal;
            for (uint32_t k = 0; k < n; k++) over += above(&cur[k], line);
        }
        uint32_t nover = 0;
        for (uint32_t k = 0; k < n; k++)
            if (cur[k].off + cur[k].size > line) over_at[nover++] = k;
        const item *x = &cur[over_at[next_rand(&seed) % nover]];
        for (int c = 1; c < REFINE_PICK; c++) { /* the highest of REFINE_PICK drawn */
            const item *y = &cur[over_at[next_rand(&seed) % nover]];
            if (y->off + y->size > x->off + x->size) x = y;
        }
        int32_t span = x->last - x->first + 1;
        int32_t w0 = x->first - (int32_t)(next_rand(&seed) % (uint64_t)span);
        int32_t w1 = x->last + (int32_t)(next_rand(&seed) % (uint64_t)span);
        uint64_t lo = x->off - x->off * (next_rand(&seed) % 64) / 64;
        int how = (int)(next_rand(&seed) % 4);
        /* the lifted, keyed in the order how names, and the time they span */
        uint32_t nl = n, nfix = 0;
        int32_t t0 = INT32_MAX, t1 = -1;
        for (uint32_t k = 0; k < n; k++) {
            const item *y = &cur[k];
            if (y->last < w0 || y->first > w1 || y->off + y->size <= lo) continue;
            trial[--nl] = *y;
            trial[nl].k1 = how == 0   ? -(int64_t)y->size
                           : how == 1 ? y->first
                           : how == 2 ? y->first - y->last
                                      : (int64_t)(next_rand(&seed) >> 1);
            if (y->first < t0) t0 = y->first;
            if (y->last > t1) t1 = y->last;
        }
        /* the others that share that time stay where they are; the region
         * apart from the lifted */
        uint64_t rest = 0, o = over;
        for (uint32_t k = 0; k < n; k++) {
            const item *y = &cur[k];
            if (y->last < w0 || y->first > w1 || y->off + y->size <= lo) {
                if (y->off + y->size > rest) rest = y->off + y->size;
                if (y->last >= t0 && y->first <= t1) trial[nfix++] = *y;
            } else {
                o -= above(y, line);
            }
        }
        /* time counted from t0, the fixed ones clipped to t0..t1 */
        uint32_t nlift = n - nl;
        memmove(trial + nfix, trial + nl, sizeof *trial * nlift);
        for (uint32_t q = 0; q < nfix + nlift; q++) {
            trial[q].first = trial[q].first > t0 ? trial[q].first - t0 : 0;
            trial[q].last = (trial[q].last < t1 ? trial[q].last : t1) - t0;
        }
        qsort(trial + nfix, nlift, sizeof *trial, cmp_item_k1);
        uint64_t pk = 0;
        int32_t pf = 0;
        if (mp_place_items(trial, nfix + nlift, nfix, (uint32_t)(t1 - t0 + 1), next_rand(&seed) & 1, &pk, &pf)) goto out;
        spent += work * (double)(nfix + nlift) / (double)n;
        for (uint32_t q = nfix; q < nfix + nlift; q++) o += above(&trial[q], line);
        if (pk < rest) pk = rest;
        if (pk <= region && o <= over) {
            over = o;
            region = pk;
            for (uint32_t q = nfix; q < nfix + nlift; q++) cur[at[trial[q].buf]].off = trial[q].off;
        }
    }
    if (region < *peak) {
        *peak = region;
        for (uint32_t k = 0; k < n; k++) {
            prog->buffers[cur[k].buf].offset = base + cur[k].off;
            if (cur[k].off + cur[k].size == region) *peak_instr = (uint32_t)cur[k].first;
        }
    }
    rc = 0;
out:
    free(cur);
    free(trial);
    free(over_at);
    free(at);
    return rc;
}
