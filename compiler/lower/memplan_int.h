/* compiler/lower/memplan_int.h: the memory plan's internal interface, for
 * the memplan*.c files only: the placement strategies and what they share.
 *
 * memplan.c         the entry point (persistent region, aliases, lifetimes)
 *                   and the table of passes: which strategy runs in which
 *                   order, on which programs, and how much work it may spend
 * memplan_live.c    measures of a program: live sums, the bound no placement
 *                   beats, the largest live sum over a range, the pairs of
 *                   overlapping lifetimes (the work of a greedy placement)
 * memplan_gap.c     the placed buffers indexed by time, and the placement of
 *                   items in order, each into the tightest or lowest gap
 * memplan_greedy.c  the greedy orders (comparisons and the table of 17 orders)
 * memplan_online.c  online best-fit, on time and on mirrored time
 * memplan_skyline.c the skyline (best-fit strip packing)
 * memplan_slots.c   each micro-batch's stash in a ring slot
 * memplan_search.c  jostle and ruin-and-recreate: searches around the
 *                   placement the buffers hold now
 *
 * Every strategy places the non-persistent buffers with a lifetime at
 * base + an offset, each size rounded up to PLC_PLAN_ALIGN, and says the
 * region it needs (*peak) and the first use of the buffer that sets it
 * (*peak_instr). Each returns -1 when out of memory. */
#ifndef PLC_COMPILER_MEMPLAN_INT_H
#define PLC_COMPILER_MEMPLAN_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "compiler/lower/lower.h"

static inline uint64_t mp_align_up(uint64_t x) { return (x + PLC_PLAN_ALIGN - 1) / PLC_PLAN_ALIGN * PLC_PLAN_ALIGN; }

/* A program as placement sees it: the buffers' lifetimes
 * (plc_buffer_lifetimes), which are persistent, and where the dynamic
 * region starts. */
typedef struct mp_prog {
    plc_program *prog;
    const int32_t *first, *last;
    const bool *persistent;
    uint64_t base;
} mp_prog;

/* a buffer to place: its lifetime, size and (once placed) offset */
typedef struct mp_item {
    int32_t buf, first, last;
    uint64_t size, off;
    int64_t k1, k2; /* an order's keys, ascending, before the size and lifetime */
} mp_item;

/* ---- memplan_live.c -------------------------------------------------------- */
/* The live sum at each instruction into d[0, ninstrs); d has ninstrs + 1
 * zeroed entries. */
void mp_live_sums(const mp_prog *G, uint64_t *d);
/* the largest live sum (0 when out of memory) */
uint64_t mp_live_bound(const mp_prog *G);
/* the pairs of buffers with overlapping lifetimes, roughly: the work of one
 * greedy placement (1e300 when out of memory) */
double mp_placement_work(const mp_prog *G);

/* The largest live sum over any range of instructions: a tree of maxima,
 * the live sum at instruction i at leaf n + i, each node the larger of its
 * two children. */
typedef struct mp_range_max {
    uint64_t *v; /* [2 * n + 1] */
    uint32_t n;
} mp_range_max;
int mp_range_max_init(mp_range_max *R, const mp_prog *G);
uint64_t mp_range_max_at(const mp_range_max *R, int32_t a, int32_t b); /* over instructions a..b */

/* ---- memplan_gap.c --------------------------------------------------------- */
/* Places the items in their order (those from npre on; the first npre stay
 * where they are), each at the gap that holds it (the tightest, or with
 * first_fit the lowest) among the items before it whose lifetimes overlap
 * its own, over ni instructions; *peak gets the region's size and
 * *peak_first the first use of the item that sets it. */
int mp_place_items(mp_item *it, uint32_t n, uint32_t npre, uint32_t ni, bool first_fit, uint64_t *peak,
                   int32_t *peak_first);

/* ---- memplan_greedy.c ------------------------------------------------------ */
int mp_cmp_size(const void *a, const void *b);  /* decreasing size, longer lifetime, id */
int mp_cmp_start(const void *a, const void *b); /* decreasing size, first use, id */
int mp_cmp_keys(const void *a, const void *b);  /* k1, k2, then as mp_cmp_size */

/* An order of placement: a comparison of items, for mp_cmp_keys the
 * lifetime from which a buffer counts as long-lived (those are placed
 * first, in order of first use, so that what is made once per micro-batch
 * stacks in time; the others after them, largest first), the fit, and the
 * direction of time (reversed: every lifetime mirrored, so that the order
 * of first use is that of last use from the end). */
typedef struct mp_order {
    int (*cmp)(const void *, const void *);
    int32_t long_life;
    bool first_fit; /* the lowest gap that holds the buffer, not the tightest */
    bool reversed;
    bool breadth; /* keys: the largest live sum over the lifetime, largest first, then last use, latest first */
} mp_order;

#define MP_NORDERS 17
extern const mp_order mp_orders[MP_NORDERS];
int mp_place_by_size(const mp_prog *G, mp_order ord, uint64_t *peak, uint32_t *peak_instr);

/* ---- memplan_online.c ------------------------------------------------------ */
int mp_place_online(const mp_prog *G, uint64_t *peak, uint32_t *peak_instr);
int mp_place_online_mirrored(const mp_prog *G, uint64_t *peak, uint32_t *peak_instr);

/* ---- memplan_skyline.c ----------------------------------------------------- */
/* keyed by size times lifetime to the power given */
int mp_place_skyline(const mp_prog *G, int power, uint64_t *peak, uint32_t *peak_instr);

/* ---- memplan_slots.c ------------------------------------------------------- */
/* how the long-lived buffers that share time with the stashes are packed
 * in a band below the ring slots */
typedef enum mp_band_order {
    MP_BAND_BY_FIRST_USE, /* what is made once per micro-batch stacks in time */
    MP_BAND_NONE,
    MP_BAND_BY_SIZE, /* largest first: tighter where the band holds many buffers of a few sizes (under
                      * ZeRO 2 and 3, each layer's gradient blocks, made once per micro-batch) */
} mp_band_order;
#define MP_BAND_ORDERS (MP_BAND_BY_SIZE + 1)
/* Returns 1 where the stashes do not form a ring (nothing placed). */
int mp_place_slots(const mp_prog *G, uint64_t ceiling, int32_t long_life, mp_band_order band, uint64_t *peak,
                   uint32_t *peak_instr);

/* ---- memplan_search.c ------------------------------------------------------ */
/* Both start from the placement the buffers hold now (region *peak) and
 * never grow it. */
int mp_jostle(const mp_prog *G, uint64_t *peak, uint32_t *peak_instr);
/* down toward bound, within work_budget pairs (work: the program's pairs) */
int mp_refine(const mp_prog *G, uint64_t bound, double work, double work_budget, uint64_t *peak,
              uint32_t *peak_instr);

#endif
