/* memplan.c: the static memory plan of one program: the persistent region
 * (id order, aliases over their members), the buffers' lifetimes, and the
 * placement of every other buffer by a table of passes.
 *
 * No placement needs less than the largest live sum (the sizes of the
 * buffers alive at one instruction, summed: the bound). The passes below
 * run in the table's order, each on the programs its size admits, while
 * the region is above the bound (or more than 1% above it), and within its
 * budget of work; the smallest region is kept. Which strategy does what,
 * and where it lives: lower_int.h (its memplan section). This file alone
 * says which runs, in which order, and how much work each may spend. */
#include "compiler/lower/lower_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* the lifetimes the plan uses (lower.h) */
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

/* ---- the table of passes --------------------------------------------------- */

/* A program's work is its pairs of buffers with overlapping lifetimes
 * (mp_placement_work): one greedy placement visits about that many, at
 * about 13 ns a pair (one order over the programs of 1e5 to 2e6 pairs of
 * tests/unit/test_solver_memory_exact.c's sweep; make bench: Llama-2-70B on 4096
 * GPUs lowers in under a second).
 *
 * PLACE_BY_SIZE_WORK: above it a program is placed online (best-fit in
 *   instruction order), not by the greedy orders.
 * PLACE_ORDERS_WORK: the pairs the orders may visit together: three orders
 *   at the least, as many as this allows below it.
 * PLACE_RETRY_PAIRS, PLACE_RETRY_WORK: a region more than 1% above the
 *   bound has the orders left tried, up to PLACE_RETRY_WORK pairs counting
 *   those before (about 0.2 s): for a program placed by the orders if it
 *   has at most PLACE_RETRY_PAIRS pairs, for one placed online if it is
 *   also placed on mirrored time. (The layered Llama-2-70B stages of make
 *   bench, of 1.2e6 pairs, stay 1.04% above their bound with every order:
 *   they are left out.) Only a program of at most PLACE_RETRY_PAIRS pairs
 *   has the passes after that.
 * PLACE_MIRROR_WORK: up to this many pairs, a program placed online is also
 *   placed online on mirrored time (its cost grows with the holes, not the
 *   pairs: the largest plans of make bench are left to one sweep).
 * JOSTLE_WORK: the jostle's passes (two placements each).
 * SLOT_WORK: the ring slots, in each band order in turn, under
 *   SLOT_CEILINGS - 1 ceilings evenly between the bound and the region, each
 *   placement jostled up to SLOT_JOSTLE_PASSES times (so up to SLOT_TRY
 *   placements a try), while the pairs visited stay within SLOT_WORK (about
 *   0.2 s: every placement that 1e7 allowed with the first two band orders
 *   is still tried).
 * REFINE_WORK: the search's steps, each charged the program's pairs in the
 *   share of its buffers the step sets or keeps around them (about 6 ns a
 *   pair: at most about 0.3 s; the 59 programs of test_solver_memory_exact.c's
 *   sweep left above 1% take about 17 s together, and 14 of them come out
 *   smaller). */
#define PLACE_BY_SIZE_WORK 2e6
#define PLACE_ORDERS_WORK 2e6
#define PLACE_RETRY_PAIRS 1e6
#define PLACE_RETRY_WORK 2e7
#define PLACE_MIRROR_WORK 2e7
#define JOSTLE_WORK 1e7
#define SLOT_WORK 1.5e7
#define REFINE_WORK 5e7

#define SLOT_CEILINGS 4
#define SLOT_JOSTLE_PASSES 6
#define SLOT_TRY (1 + 2 * SLOT_JOSTLE_PASSES)           /* placements a try */
#define SLOT_TRIES ((SLOT_CEILINGS - 1) * MP_BAND_ORDERS) /* every ceiling in every band order */

/* the passes' shared state: the program, its bound and work */
typedef struct mp_run {
    mp_prog G;
    uint64_t bound;
    double work;
    uint64_t from; /* the region when the pass began */
} mp_run;

/* while a pass goes on */
typedef enum mp_gate {
    ALWAYS,
    ABOVE_BOUND, /* the region above the bound */
    ABOVE_1PCT,  /* the region more than 1% above the bound */
} mp_gate;

typedef enum mp_kind {
    ANEW, /* places every buffer anew: kept where its region is smaller */
    HELD, /* works on the placement held now and never grows it */
} mp_kind;

typedef struct mp_pass mp_pass;
/* Try t of a pass (t counts the tries of every pass with the same function
 * before it: the orders retried go on where the first pass stopped); peak
 * and peak_instr are the try's region (ANEW) or the one held
 * (HELD). Returns 0, 1 to end the pass (nothing placed), -1 when out
 * of memory. */
typedef int (*mp_try)(const mp_run *R, const mp_pass *p, int t, uint64_t *peak, uint32_t *peak_instr);

struct mp_pass {
    const char *name;
    mp_try fn;
    mp_kind kind;
    double over, upto; /* applies to programs of more than over, at most upto pairs */
    mp_gate gate;
    int tries;      /* at most */
    int free_tries; /* made whatever the budget */
    int cost;       /* placements a try makes, each about the program's pairs */
    double budget;  /* try t is made where (t + 1) * cost * pairs stay within it */
};

static int try_order(const mp_run *R, const mp_pass *p, int t, uint64_t *peak, uint32_t *peak_instr)
{
    (void)p;
    return mp_place_by_size(&R->G, mp_orders[t], peak, peak_instr);
}

static int try_online(const mp_run *R, const mp_pass *p, int t, uint64_t *peak, uint32_t *peak_instr)
{
    (void)p, (void)t;
    return mp_place_online(&R->G, peak, peak_instr);
}

static int try_online_mirrored(const mp_run *R, const mp_pass *p, int t, uint64_t *peak, uint32_t *peak_instr)
{
    (void)p, (void)t;
    return mp_place_online_mirrored(&R->G, peak, peak_instr);
}

/* by size times lifetime, then by size times its cube */
static int try_skyline(const mp_run *R, const mp_pass *p, int t, uint64_t *peak, uint32_t *peak_instr)
{
    (void)p;
    return mp_place_skyline(&R->G, 1 + 2 * t, peak, peak_instr);
}

static int try_jostle(const mp_run *R, const mp_pass *p, int t, uint64_t *peak, uint32_t *peak_instr)
{
    (void)p, (void)t;
    return mp_jostle(&R->G, peak, peak_instr);
}

/* ceiling 1 + t / MP_BAND_ORDERS of SLOT_CEILINGS - 1 between the bound and
 * the region the pass began with, band order t % MP_BAND_ORDERS; jostled
 * while more than 1% above the bound */
static int try_slots(const mp_run *R, const mp_pass *p, int t, uint64_t *peak, uint32_t *peak_instr)
{
    (void)p;
    uint64_t c = (uint64_t)(1 + t / MP_BAND_ORDERS), bound = R->bound;
    int r = mp_place_slots(&R->G, bound + (R->from - bound) * c / SLOT_CEILINGS, mp_orders[2].long_life,
                           (mp_band_order)(t % MP_BAND_ORDERS), peak, peak_instr);
    for (int j = 0; !r && j < SLOT_JOSTLE_PASSES && *peak - bound > bound / 100; j++)
        if (mp_jostle(&R->G, peak, peak_instr)) return -1;
    return r;
}

static int try_refine(const mp_run *R, const mp_pass *p, int t, uint64_t *peak, uint32_t *peak_instr)
{
    (void)t;
    return mp_refine(&R->G, R->bound, R->work, p->budget, peak, peak_instr);
}

/* The passes, in order. A program of at most PLACE_BY_SIZE_WORK pairs is
 * placed by the greedy orders, then (while above the bound) online; a
 * larger one online, and up to PLACE_MIRROR_WORK pairs also on mirrored
 * time. The orders left are retried while more than 1% above the bound;
 * then, for a program of at most PLACE_RETRY_PAIRS pairs, still more than
 * 1% above: the skyline by two keys, the smallest region jostled, the ring
 * slots, and the search around the smallest (ruin and recreate). */
static const mp_pass passes[] = {
    /* name              try                  kind  over                upto                while        tries       free cost      budget */
    {"greedy orders",    try_order,           ANEW, -1,                 PLACE_BY_SIZE_WORK, ABOVE_BOUND, MP_NORDERS, 3, 1,        PLACE_ORDERS_WORK},
    {"online",           try_online,          ANEW, -1,                 HUGE_VAL,           ABOVE_BOUND, 1,          1, 1,        0},
    {"online mirrored",  try_online_mirrored, HELD, PLACE_BY_SIZE_WORK, HUGE_VAL,           ALWAYS,      1,          0, 1,        PLACE_MIRROR_WORK},
    {"orders retried",   try_order,           ANEW, -1,                 PLACE_RETRY_PAIRS,  ABOVE_1PCT,  MP_NORDERS, 0, 1,        PLACE_RETRY_WORK},
    {"orders retried",   try_order,           ANEW, PLACE_BY_SIZE_WORK, PLACE_MIRROR_WORK,  ABOVE_1PCT,  MP_NORDERS, 0, 1,        PLACE_RETRY_WORK},
    {"skyline",          try_skyline,         ANEW, -1,                 PLACE_RETRY_PAIRS,  ABOVE_1PCT,  2,          2, 1,        0},
    {"jostle",           try_jostle,          HELD, -1,                 PLACE_RETRY_PAIRS,  ABOVE_1PCT,  2,          0, 2,        JOSTLE_WORK},
    {"ring slots",       try_slots,           ANEW, -1,                 PLACE_RETRY_PAIRS,  ABOVE_1PCT,  SLOT_TRIES, 0, SLOT_TRY, SLOT_WORK},
    {"ruin & recreate",  try_refine,          HELD, -1,                 PLACE_RETRY_PAIRS,  ABOVE_1PCT,  1,          0, 1,        REFINE_WORK},
};
#define NPASSES ((int)(sizeof passes / sizeof passes[0]))

static bool gate_open(mp_gate g, uint64_t peak, uint64_t bound)
{
    switch (g) {
    case ABOVE_BOUND: return peak > bound;
    case ABOVE_1PCT: return peak - bound > bound / 100;
    case ALWAYS: break;
    }
    return true;
}

/* Runs the passes over the program; *peak gets the smallest region, the
 * buffers its placement (best: the placement kept, which the buffers hold
 * between tries). Returns -1 when out of memory. */
static int run_passes(mp_run *R, uint64_t *best, uint64_t *peak, uint32_t *peak_instr)
{
    plc_program *prog = R->G.prog;
    int made[NPASSES] = {0};
    uint64_t pk = 0;
    uint32_t at = 0;
    *peak = UINT64_MAX;
    for (int i = 0; i < NPASSES; i++) {
        const mp_pass *p = &passes[i];
        if (!(R->work > p->over && R->work <= p->upto)) continue;
        int t = 0;
        for (int j = 0; j < i; j++) t += passes[j].fn == p->fn ? made[j] : 0;
        R->from = *peak;
        for (; t < p->tries && gate_open(p->gate, *peak, R->bound) &&
               (t < p->free_tries || (double)((t + 1) * p->cost) * R->work <= p->budget);
             t++, made[i]++) {
            bool anew = p->kind == ANEW;
            int r = anew ? p->fn(R, p, t, &pk, &at) : p->fn(R, p, t, peak, peak_instr);
            if (r < 0) return -1;
            bool keep = !anew || (r == 0 && pk < *peak);
            if (anew && keep) {
                *peak = pk;
                *peak_instr = at;
            }
            for (uint32_t b = 0; b < prog->nbuffers; b++) {
                if (keep) best[b] = prog->buffers[b].offset;
                else prog->buffers[b].offset = best[b];
            }
            if (r == 1) break;
        }
    }
    return 0;
}

int plc_memplan(plc_program *prog, const bool *persistent, const int32_t *alias_first, const int32_t *alias_last,
                plc_memplan_stats *st, char *err, size_t errlen)
{
    uint32_t nb = prog->nbuffers;
    memset(st, 0, sizeof *st);
    int rc = 0;
    /* 1. persistent region, id order */
    uint64_t top = 0;
    for (uint32_t b = 0; b < nb; b++) {
        if (!persistent[b] || alias_first[b] >= 0) continue;
        prog->buffers[b].offset = top;
        top = mp_align_up(top + prog->buffers[b].bytes);
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
    uint64_t dyn_peak = 0;
    if (!first || !last) {
        snprintf(err, errlen, "memory plan: out of memory");
        rc = -1;
        goto out;
    }
    plc_buffer_lifetimes(prog, first, last);
    uint64_t unused_max = 0;
    for (uint32_t b = 0; b < nb; b++) {
        if (persistent[b]) continue;
        if (first[b] < 0) { /* never touched: shares the start of the dynamic region */
            prog->buffers[b].offset = base;
            if (prog->buffers[b].bytes > unused_max) unused_max = prog->buffers[b].bytes;
            continue;
        }
        st->dynamic_total += mp_align_up(prog->buffers[b].bytes);
    }
    /* 3. placement */
    mp_run R = {.G = {prog, first, last, persistent, base}};
    R.work = mp_placement_work(&R.G);
    R.bound = mp_live_bound(&R.G);
    st->by_size = R.work <= PLACE_BY_SIZE_WORK;
    uint64_t *best = malloc(sizeof *best * (nb ? nb : 1));
    int placed = best ? run_passes(&R, best, &dyn_peak, &st->peak_instr) : -1;
    free(best);
    if (placed) {
        snprintf(err, errlen, "memory plan: out of memory");
        rc = -1;
        goto out;
    }
    st->dynamic_peak = dyn_peak > unused_max ? dyn_peak : mp_align_up(unused_max);
    prog->arena_bytes = base + st->dynamic_peak;
out:
    free(first);
    free(last);
    return rc;
}
