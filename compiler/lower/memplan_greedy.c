/* memplan_greedy.c: greedy placement in a fixed order: every buffer, in
 * the order's sequence, into the tightest (or lowest) gap that holds it
 * (memplan_gap.c). No order is always the tightest; the table of orders
 * below is what memplan.c's first pass tries, in turn. */
#include "compiler/lower/lower_int.h"

#include <stdlib.h>

typedef mp_item item;

int mp_cmp_size(const void *a, const void *b)
{
    const item *x = a, *y = b;
    if (x->size != y->size) return x->size > y->size ? -1 : 1;
    int32_t lx = x->last - x->first, ly = y->last - y->first;
    if (lx != ly) return lx > ly ? -1 : 1;
    return (x->buf > y->buf) - (x->buf < y->buf);
}

/* equal sizes in order of first use: buffers made once per micro-batch
 * stack in time */
int mp_cmp_start(const void *a, const void *b)
{
    const item *x = a, *y = b;
    if (x->size != y->size) return x->size > y->size ? -1 : 1;
    if (x->first != y->first) return x->first < y->first ? -1 : 1;
    return (x->buf > y->buf) - (x->buf < y->buf);
}

/* longest lifetimes first (greedy by breadth) */
static int cmp_item_long(const void *a, const void *b)
{
    const item *x = a, *y = b;
    int32_t lx = x->last - x->first, ly = y->last - y->first;
    if (lx != ly) return lx > ly ? -1 : 1;
    if (x->size != y->size) return x->size > y->size ? -1 : 1;
    return (x->buf > y->buf) - (x->buf < y->buf);
}

/* the keys an order sets, then decreasing size, longer lifetime, id */
int mp_cmp_keys(const void *a, const void *b)
{
    const item *x = a, *y = b;
    if (x->k1 != y->k1) return x->k1 < y->k1 ? -1 : 1;
    if (x->k2 != y->k2) return x->k2 < y->k2 ? -1 : 1;
    return mp_cmp_size(a, b);
}

/* No order of placement is always the tightest (decreasing size leaves
 * holes where equal buffers live first-in first-out, the sweep where
 * lifetimes nest, long-lived buffers in order of first use where short
 * ones are large, the buffers of the busiest instructions first where
 * large short-lived ones would otherwise sit below the long-lived). The
 * orders are tried in this sequence (memplan.c's passes say how many);
 * the smallest region is kept, the first on a tie. The first thirteen are
 * ranked on the 624 stages of tests/unit/test_solver_memory_exact.c: after the
 * first three, each is the one that brings the most further stages within
 * 1% of the largest live sum; the last four (by breadth) were added for
 * the 1044 stages of its later sweep. memplan_slots.c places the buffers
 * around the stashes as the third (index 2) does. */
const mp_order mp_orders[MP_NORDERS] = {
    /* cmp           long_life first_fit reversed breadth */
    {mp_cmp_size,    0,   false, false, false},
    {mp_cmp_keys,    200, true,  true,  false},
    {mp_cmp_keys,    50,  false, false, false},
    {mp_cmp_keys,    100, true,  true,  false},
    {mp_cmp_keys,    400, false, true,  false},
    {mp_cmp_start,   0,   false, true,  false},
    {mp_cmp_keys,    200, true,  false, false},
    {mp_cmp_start,   0,   false, false, false},
    {mp_cmp_keys,    100, false, false, false},
    {mp_cmp_keys,    400, true,  false, false},
    {mp_cmp_keys,    200, false, true,  false},
    {mp_cmp_keys,    50,  false, true,  false},
    {cmp_item_long,  0,   false, false, false},
    {mp_cmp_keys,    0,   false, false, true},
    {mp_cmp_keys,    0,   true,  false, true},
    {mp_cmp_keys,    0,   false, true,  true},
    {mp_cmp_keys,    0,   true,  true,  true},
};

/* Places every buffer with a lifetime in the order ord; *peak gets the
 * dynamic region's size. Returns -1 when out of memory. */
int mp_place_by_size(const mp_prog *G, mp_order ord, uint64_t *peak, uint32_t *peak_instr)
{
    plc_program *prog = G->prog;
    const int32_t *first = G->first, *last = G->last;
    const bool *persistent = G->persistent;
    uint32_t nb = prog->nbuffers, ni = prog->ninstrs ? prog->ninstrs : 1;
    item *it = malloc(sizeof *it * (nb ? nb : 1));
    mp_range_max R = {0};
    int rc = -1;
    if (!it) goto out;
    if (ord.breadth && mp_range_max_init(&R, G)) goto out;
    uint32_t n = 0;
    for (uint32_t b = 0; b < nb; b++) {
        if (persistent[b] || first[b] < 0) continue;
        int32_t f = ord.reversed ? (int32_t)ni - 1 - last[b] : first[b];
        int32_t l = ord.reversed ? (int32_t)ni - 1 - first[b] : last[b];
        bool lng = ord.long_life > 0 && l - f >= ord.long_life;
        it[n] = (item){(int32_t)b, f, l, mp_align_up(prog->buffers[b].bytes), 0, lng ? 0 : 1, lng ? f : 0};
        if (ord.breadth) {
            it[n].k1 = -(int64_t)mp_range_max_at(&R, first[b], last[b]);
            it[n].k2 = -(int64_t)l;
        }
        n++;
    }
    qsort(it, n, sizeof *it, ord.cmp);
    int32_t pf = 0;
    if (mp_place_items(it, n, 0, ni, ord.first_fit, peak, &pf)) goto out;
    *peak_instr = (uint32_t)(ord.reversed ? (int32_t)ni - 1 - pf : pf);
    for (uint32_t k = 0; k < n; k++) prog->buffers[it[k].buf].offset = G->base + it[k].off;
    rc = 0;
out:
    free(R.v);
    free(it);
    return rc;
}
