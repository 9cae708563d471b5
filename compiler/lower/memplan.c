/* memplan.c: lifetimes and best-fit placement of a program's buffers.
 * No placement needs less than the largest live sum (the sizes of the
 * buffers alive at one instruction, summed); several greedy orders are
 * tried and the smallest region kept (see orders[] below); where it is
 * still more than 1% above, a skyline placement is tried and the smallest
 * jostled (pushed up, dropped down), and then a placement that uses the
 * pipeline's structure: each micro-batch's stash (what its forward keeps
 * for its backward) in a ring slot, the slots arranged so that the space
 * a backward frees adjoins the space its own buffers need (place_slots),
 * and last a bounded search that lifts the buffers in a box of time and
 * space around one above the line and sets them back (refine). */
#include "compiler/lower/lower_int.h"

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

/* ---- placement by decreasing size ------------------------------------------ */

typedef struct item {
    int32_t buf, first, last;
    uint64_t size, off;
    int64_t k1, k2; /* the order's keys, ascending, before the size and lifetime */
} item;

static int cmp_item(const void *a, const void *b)
{
    const item *x = a, *y = b;
    if (x->size != y->size) return x->size > y->size ? -1 : 1;
    int32_t lx = x->last - x->first, ly = y->last - y->first;
    if (lx != ly) return lx > ly ? -1 : 1;
    return (x->buf > y->buf) - (x->buf < y->buf);
}

/* equal sizes in order of first use: buffers made once per micro-batch
 * stack in time */
static int cmp_item_start(const void *a, const void *b)
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
static int cmp_item_keys(const void *a, const void *b)
{
    const item *x = a, *y = b;
    if (x->k1 != y->k1) return x->k1 < y->k1 ? -1 : 1;
    if (x->k2 != y->k2) return x->k2 < y->k2 ? -1 : 1;
    return cmp_item(a, b);
}

/* a placed buffer as the index keeps it: where it lies, when it starts */
typedef struct placed {
    uint64_t lo, hi;
    int32_t first;
} placed;

/* A list of placed buffers. */
typedef struct olist {
    placed *v;
    uint32_t n, cap;
} olist;

static int olist_add(olist *L, const item *x)
{
    if (L->n == L->cap) {
        uint32_t cap = L->cap ? L->cap * 2 : 8;
        placed *t = realloc(L->v, sizeof *t * cap);
        if (!t) return -1;
        L->v = t;
        L->cap = cap;
    }
    L->v[L->n++] = (placed){x->off, x->off + x->size, x->first};
    return 0;
}

#define START_BLOCK 64 /* instructions per list of buffers by first use */

/* The placed buffers, indexed by time: a segment tree over instructions
 * whose nodes hold the buffers whose lifetimes cover them (each buffer in
 * O(log n) disjoint nodes: the ones alive at an instruction are on its
 * leaf's path), and lists of buffers by the block of their first use. */
typedef struct index {
    uint32_t size; /* leaves: a power of two >= instructions */
    olist *node;   /* [2 * size] */
    olist *start;  /* [instructions / START_BLOCK + 1] */
} index;

static int index_add(index *X, const item *x)
{
    for (uint32_t lo = (uint32_t)x->first + X->size, hi = (uint32_t)x->last + 1 + X->size; lo < hi;
         lo >>= 1, hi >>= 1) {
        if ((lo & 1) && olist_add(&X->node[lo++], x)) return -1;
        if ((hi & 1) && olist_add(&X->node[--hi], x)) return -1;
    }
    return olist_add(&X->start[(uint32_t)x->first / START_BLOCK], x);
}

typedef struct span {
    uint64_t lo, hi;
} span;

/* sorts spans by lo in place: quicksort on the median of three, insertion
 * sort below 24 (the order among equal lo does not matter to the gaps) */
static void quick_spans(span *sp, size_t n)
{
    while (n > 24) {
        uint64_t a = sp[0].lo, b = sp[n / 2].lo, c = sp[n - 1].lo;
        uint64_t piv = a < b ? (b < c ? b : (a < c ? c : a)) : (a < c ? a : (b < c ? c : b));
        size_t i = 0, j = n - 1;
        for (;;) {
            while (sp[i].lo < piv) i++;
            while (sp[j].lo > piv) j--;
            if (i >= j) break;
            span t = sp[i];
            sp[i++] = sp[j];
            sp[j--] = t;
        }
        /* [0, j] <= piv <= [j + 1, n): the smaller part first, the larger in the loop */
        size_t left = j + 1;
        if (left < n - left) {
            quick_spans(sp, left);
            sp += left;
            n -= left;
        } else {
            quick_spans(sp + left, n - left);
            n = left;
        }
    }
    for (size_t i = 1; i < n; i++) {
        span x = sp[i];
        size_t j = i;
        for (; j > 0 && sp[j - 1].lo > x.lo; j--) sp[j] = sp[j - 1];
        sp[j] = x;
    }
}

/* sorts spans by lo: LSD radix on lo / 64 (offsets are 64-byte aligned),
 * 8 bits a pass, as many passes as the largest offset needs, a pass left
 * out where every span has the same digit; quicksort below 64 spans */
static void sort_spans(span *sp, span *tmp, size_t n)
{
    if (n < 64) {
        quick_spans(sp, n);
        return;
    }
    uint64_t top = 0;
    for (size_t i = 0; i < n; i++)
        if (sp[i].lo > top) top = sp[i].lo;
    span *src = sp, *dst = tmp;
    for (unsigned shift = 6; shift < 64 && (top >> shift); shift += 8) {
        size_t count[256] = {0};
        for (size_t i = 0; i < n; i++) count[(src[i].lo >> shift) & 255]++;
        if (count[(src[0].lo >> shift) & 255] == n) continue;
        size_t sum = 0;
        for (size_t d = 0; d < 256; d++) {
            size_t c = count[d];
            count[d] = sum;
            sum += c;
        }
        for (size_t i = 0; i < n; i++) dst[count[(src[i].lo >> shift) & 255]++] = src[i];
        span *t = src;
        src = dst;
        dst = t;
    }
    if (src != sp) memcpy(sp, src, sizeof *sp * n);
}

/* The lowest-waste gap of at least x->size among the placed buffers alive
 * during x's lifetime (those alive at its first instruction, on its leaf's
 * path, and those starting after it and before its end), else the top of
 * them. sp and tmp have room for every placed buffer. */
static uint64_t best_gap(const index *X, const item *x, span *sp, span *tmp, bool first_fit)
{
    int32_t a = x->first, b = x->last;
    size_t ns = 0;
    for (uint32_t node = (uint32_t)a + X->size; node >= 1; node >>= 1)
        for (uint32_t j = 0; j < X->node[node].n; j++) sp[ns++] = (span){X->node[node].v[j].lo, X->node[node].v[j].hi};
    for (uint32_t q = (uint32_t)a / START_BLOCK; q <= (uint32_t)b / START_BLOCK; q++)
        for (uint32_t j = 0; j < X->start[q].n; j++) {
            const placed *y = &X->start[q].v[j];
            if (y->first > a && y->first <= b) sp[ns++] = (span){y->lo, y->hi};
        }
    sort_spans(sp, tmp, ns);
    uint64_t at = 0, best = UINT64_MAX, best_size = UINT64_MAX;
    for (size_t j = 0; j < ns; j++) {
        if (sp[j].lo > at && sp[j].lo - at >= x->size && sp[j].lo - at < best_size) {
            best_size = sp[j].lo - at;
            best = at;
            if (first_fit) break;
        }
        if (sp[j].hi > at) at = sp[j].hi;
    }
    return best != UINT64_MAX ? best : at;
}

/* An order of placement: a comparison of items, for cmp_item_keys the
 * lifetime from which a buffer counts as long-lived (those are placed
 * first, in order of first use, so that what is made once per micro-batch
 * stacks in time; the others after them, largest first), the fit, and the
 * direction of time (reversed: every lifetime mirrored, so that the order
 * of first use is that of last use from the end). */
typedef struct order {
    int (*cmp)(const void *, const void *);
    int32_t long_life;
    bool first_fit; /* the lowest gap that holds the buffer, not the tightest */
    bool reversed;
    bool breadth; /* keys: the largest live sum over the lifetime, largest first, then last use, latest first */
} order;

/* The live sum at each instruction (the sizes of the buffers alive there,
 * summed) into d[0, ninstrs), from its differences summed in place; d has
 * ninstrs + 1 zeroed entries. */
static void live_sums(const plc_program *prog, const int32_t *first, const int32_t *last, const bool *persistent,
                      uint64_t *d)
{
    for (uint32_t b = 0; b < prog->nbuffers; b++) {
        if (persistent[b] || first[b] < 0) continue;
        d[first[b]] += align_up(prog->buffers[b].bytes);
        d[last[b] + 1] -= align_up(prog->buffers[b].bytes); /* wraps; the sum undoes it */
    }
    for (uint32_t i = 1; i < prog->ninstrs; i++) d[i] += d[i - 1];
}

/* The largest live sum over any range of instructions: a tree of maxima,
 * the live sum at instruction i at leaf n + i, each node the larger of its
 * two children. */
typedef struct range_max {
    uint64_t *v; /* [2 * n + 1] */
    uint32_t n;
} range_max;

static int range_max_init(range_max *R, const plc_program *prog, const int32_t *first, const int32_t *last,
                          const bool *persistent)
{
    uint32_t n = prog->ninstrs ? prog->ninstrs : 1;
    R->n = n;
    R->v = calloc(2 * (size_t)n + 1, sizeof *R->v);
    if (!R->v) return -1;
    live_sums(prog, first, last, persistent, R->v + n);
    for (uint32_t i = n - 1; i >= 1; i--) R->v[i] = R->v[2 * i] > R->v[2 * i + 1] ? R->v[2 * i] : R->v[2 * i + 1];
    return 0;
}

/* the largest live sum over instructions a..b */
static uint64_t range_max_at(const range_max *R, int32_t a, int32_t b)
{
    uint64_t m = 0;
    for (uint32_t lo = (uint32_t)a + R->n, hi = (uint32_t)b + 1 + R->n; lo < hi; lo >>= 1, hi >>= 1) {
        if ((lo & 1) && R->v[lo] > m) m = R->v[lo];
        if (lo & 1) lo++;
        if ((hi & 1) && R->v[hi - 1] > m) m = R->v[hi - 1];
    }
    return m;
}

/* The time index's storage for a program of ni instructions and n items,
 * with room for the gap spans. */
typedef struct placer {
    index X;
    uint32_t nstart;
    span *sp, *tmp;
} placer;

static void placer_free(placer *P)
{
    if (P->X.node)
        for (uint32_t q = 0; q < 2 * P->X.size; q++) free(P->X.node[q].v);
    if (P->X.start)
        for (uint32_t q = 0; q < P->nstart; q++) free(P->X.start[q].v);
    free(P->X.node);
    free(P->X.start);
    free(P->sp);
    free(P->tmp);
}

static int placer_init(placer *P, uint32_t ni, uint32_t n)
{
    *P = (placer){.X = {.size = 1}, .nstart = ni / START_BLOCK + 1};
    while (P->X.size < ni) P->X.size *= 2;
    P->X.node = calloc(2 * (size_t)P->X.size, sizeof *P->X.node);
    P->X.start = calloc(P->nstart, sizeof *P->X.start);
    P->sp = malloc(sizeof *P->sp * (n ? n : 1));
    P->tmp = malloc(sizeof *P->tmp * (n ? n : 1));
    if (P->X.node && P->X.start && P->sp && P->tmp) return 0;
    placer_free(P);
    return -1;
}

/* Places the items in their order, each at the gap that holds it (the
 * tightest, or the lowest) among the items before it whose lifetimes
 * overlap its own; *peak gets the region's size and *peak_first the first
 * use of the item that sets it. Returns -1 when out of memory. */
static int place_items(item *it, uint32_t n, uint32_t npre, uint32_t ni, bool first_fit, uint64_t *peak,
                       int32_t *peak_first)
{
    placer P;
    if (placer_init(&P, ni, n)) return -1;
    int rc = 0;
    *peak = 0;
    *peak_first = 0;
    for (uint32_t k = 0; k < n && !rc; k++) {
        item *x = &it[k];
        if (k >= npre) x->off = best_gap(&P.X, x, P.sp, P.tmp, first_fit);
        if (x->off + x->size > *peak) {
            *peak = x->off + x->size;
            *peak_first = x->first;
        }
        rc = index_add(&P.X, x);
    }
    placer_free(&P);
    return rc;
}

/* Places every buffer with a lifetime in the order ord; *peak gets the
 * dynamic region's size. Returns -1 when out of memory. */
static int place_by_size(plc_program *prog, const int32_t *first, const int32_t *last, const bool *persistent,
                         uint64_t base, uint64_t *peak, uint32_t *peak_instr, order ord)
{
    uint32_t nb = prog->nbuffers, ni = prog->ninstrs ? prog->ninstrs : 1;
    item *it = malloc(sizeof *it * (nb ? nb : 1));
    range_max R = {0};
    int rc = -1;
    if (!it) goto out;
    if (ord.breadth && range_max_init(&R, prog, first, last, persistent)) goto out;
    uint32_t n = 0;
    for (uint32_t b = 0; b < nb; b++) {
        if (persistent[b] || first[b] < 0) continue;
        int32_t f = ord.reversed ? (int32_t)ni - 1 - last[b] : first[b];
        int32_t l = ord.reversed ? (int32_t)ni - 1 - first[b] : last[b];
        bool lng = ord.long_life > 0 && l - f >= ord.long_life;
        it[n] = (item){(int32_t)b, f, l, align_up(prog->buffers[b].bytes), 0, lng ? 0 : 1, lng ? f : 0};
        if (ord.breadth) {
            it[n].k1 = -(int64_t)range_max_at(&R, first[b], last[b]);
            it[n].k2 = -(int64_t)l;
        }
        n++;
    }
    qsort(it, n, sizeof *it, ord.cmp);
    int32_t pf = 0;
    if (place_items(it, n, 0, ni, ord.first_fit, peak, &pf)) goto out;
    *peak_instr = (uint32_t)(ord.reversed ? (int32_t)ni - 1 - pf : pf);
    for (uint32_t k = 0; k < n; k++) prog->buffers[it[k].buf].offset = base + it[k].off;
    rc = 0;
out:
    free(R.v);
    free(it);
    return rc;
}

/* ---- placement in ring slots ----------------------------------------------- */

/* A micro-batch's stash: the buffers a forward instruction of the
 * micro-batch creates on the compute stream and a later phase of the same
 * micro-batch (its recompute or backward) reads last. */
static bool is_stash(const plc_program *prog, int32_t first, int32_t last)
{
    const plc_instr *i0 = &prog->instrs[first], *i1 = &prog->instrs[last];
    return i0->micro >= 0 && i0->micro == i1->micro && i0->phase == PLC_PHASE_FORWARD &&
           i1->phase != PLC_PHASE_FORWARD && i0->stream == PLC_STREAM_COMPUTE;
}

#define MAX_SLOTS 64

/* Places the stashes in ring slots, the other buffers around them: where
 * at most k micro-batches hold a stash at once and the micro-batches of
 * each residue mod k hold theirs one after another, micro-batch m's stash
 * takes slot m mod k, its buffers side by side in order of first use, so
 * that a backward frees its slot from the end its last layer lies at.
 * Slots 0 to k - 2 are stacked with that end up, slot k - 1 hangs from the
 * ceiling (the region's top, at least the slots' sum) with that end down,
 * so that the space a backward frees joins the middle, where the buffers
 * it makes are placed (those of orders[2], in its order; see below). With
 * a band, the long-lived ones among the others (orders[2]'s) that share
 * time with a stash are first packed in a band below the slots, lowest gap
 * first, in the order band names, so that the middle is left to the
 * short-lived (those alive only before the first stash or after the last,
 * such as the gradient shards of the step's end, would raise the band
 * where no slot needs it: they are placed with the others). Returns 1
 * where the stashes do not form a ring (or need more than MAX_SLOTS
 * slots), -1 when out of memory. */
typedef enum band_order {
    BAND_BY_FIRST_USE, /* what is made once per micro-batch stacks in time */
    BAND_NONE,
    BAND_BY_SIZE, /* largest first: tighter where the band holds many buffers of a few sizes (under
                   * ZeRO 2 and 3, each layer's gradient blocks, made once per micro-batch) */
} band_order;

static int place_slots(plc_program *prog, const int32_t *first, const int32_t *last, const bool *persistent,
                       uint64_t base, uint64_t ceiling, int32_t long_life, band_order band, uint64_t *peak,
                       uint32_t *peak_instr)
{
    uint32_t nb = prog->nbuffers, ni = prog->ninstrs ? prog->ninstrs : 1, n = 0, ns = 0;
    int32_t nm = 0;
    for (uint32_t i = 0; i < prog->ninstrs; i++)
        if (prog->instrs[i].micro + 1 > nm) nm = prog->instrs[i].micro + 1;
    item *it = malloc(sizeof *it * (nb ? nb : 1));
    int32_t *mf = malloc(sizeof *mf * ((size_t)nm + 1)), *ml = malloc(sizeof *ml * ((size_t)nm + 1));
    uint64_t *msz = calloc((size_t)nm + 1, sizeof *msz), slot_sz[MAX_SLOTS] = {0}, slot_base[MAX_SLOTS] = {0};
    int rc = -1;
    if (!it || !mf || !ml || !msz) goto out;
    for (int32_t m = 0; m < nm; m++) mf[m] = INT32_MAX, ml[m] = -1;
    /* the stashes first, keyed by micro-batch and first use; the others
     * keyed as orders[2] keys them, long-lived only where they share time
     * with a stash (see above) */
    int32_t sf = INT32_MAX, sl = -1; /* the stashes' first and last use */
    for (int pass = 0; pass < 2; pass++)
        for (uint32_t b = 0; b < nb; b++) {
            if (persistent[b] || first[b] < 0) continue;
            bool stash = is_stash(prog, first[b], last[b]);
            if (stash != (pass == 0)) continue;
            uint64_t size = align_up(prog->buffers[b].bytes);
            bool lng = last[b] - first[b] >= long_life && first[b] <= sl && last[b] >= sf;
            int32_t m = prog->instrs[first[b]].micro;
            it[n++] = stash ? (item){(int32_t)b, first[b], last[b], size, 0, m, first[b]}
                            : (item){(int32_t)b, first[b], last[b], size, 0, lng ? 0 : 1, lng ? first[b] : 0};
            if (!stash) continue;
            ns++;
            msz[m] += size;
            if (first[b] < mf[m]) mf[m] = first[b];
            if (last[b] > ml[m]) ml[m] = last[b];
            if (first[b] < sf) sf = first[b];
            if (last[b] > sl) sl = last[b];
        }
    /* k: the most stashes alive at the start of one */
    int32_t k = 1;
    for (int32_t m = 0; m < nm; m++) {
        int32_t c = 0;
        for (int32_t q = 0; q < nm && ml[m] >= 0; q++) c += ml[q] >= 0 && mf[q] <= mf[m] && ml[q] >= mf[m];
        if (c > k) k = c;
    }
    rc = 1;
    if (k > MAX_SLOTS) goto out;
    for (int32_t m = 0; m < nm; m++) /* a slot's stashes one after another */
        for (int32_t q = m + k; q < nm && ml[m] >= 0; q += k)
            if (ml[q] >= 0 && ml[m] >= mf[q] && ml[q] >= mf[m]) goto out;
    for (int32_t m = 0; m < nm; m++)
        if (msz[m] > slot_sz[m % k]) slot_sz[m % k] = msz[m];
    qsort(it + ns, n - ns, sizeof *it, cmp_item_keys);
    int32_t pf = 0;
    uint32_t npre = ns;
    uint64_t band_top = 0;
    if (band != BAND_NONE) {
        while (npre < n && it[npre].k1 == 0) npre++;
        rc = -1;
        if (band == BAND_BY_SIZE) qsort(it + ns, npre - ns, sizeof *it, cmp_item_start);
        if (place_items(it + ns, npre - ns, 0, ni, true, &band_top, &pf)) goto out;
    }
    for (int32_t j = 0; j < k; j++) slot_base[j] = j ? slot_base[j - 1] + slot_sz[j - 1] : band_top;
    ceiling = ceiling / ALIGN * ALIGN; /* the slot hanging from it keeps its buffers aligned */
    if (ceiling < slot_base[k - 1] + slot_sz[k - 1]) ceiling = slot_base[k - 1] + slot_sz[k - 1];
    qsort(it, ns, sizeof *it, cmp_item_keys);
    uint64_t in = 0; /* bytes of the micro-batch's stash placed */
    for (uint32_t q = 0; q < ns; q++) {
        int32_t m = (int32_t)it[q].k1, j = m % k;
        if (q == 0 || it[q - 1].k1 != it[q].k1) in = 0;
        it[q].off = k > 1 && j == k - 1 ? ceiling - in - it[q].size : slot_base[j] + in;
        in += it[q].size;
    }
    rc = -1;
    if (place_items(it, n, npre, ni, false, peak, &pf)) goto out;
    if (ns && *peak < ceiling) *peak = ceiling;
    *peak_instr = (uint32_t)pf;
    for (uint32_t q = 0; q < n; q++) prog->buffers[it[q].buf].offset = base + it[q].off;
    rc = 0;
out:
    free(it);
    free(mf);
    free(ml);
    free(msz);
    return rc;
}

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
static int jostle(plc_program *prog, const int32_t *first, const int32_t *last, const bool *persistent,
                  uint64_t base, uint64_t *peak, uint32_t *peak_instr)
{
    uint32_t nb = prog->nbuffers, ni = prog->ninstrs ? prog->ninstrs : 1, n = 0;
    item *it = malloc(sizeof *it * (nb ? nb : 1));
    if (!it) return -1;
    for (uint32_t b = 0; b < nb; b++) {
        if (persistent[b] || first[b] < 0) continue;
        uint64_t size = align_up(prog->buffers[b].bytes);
        it[n++] = (item){(int32_t)b, first[b], last[b], size, *peak - (prog->buffers[b].offset - base + size), 0, 0};
    }
    uint64_t up = 0, down = 0;
    int32_t pf = 0;
    int rc = -1;
    qsort(it, n, sizeof *it, cmp_item_off);
    if (place_items(it, n, 0, ni, true, &up, &pf)) goto out;
    for (uint32_t k = 0; k < n; k++) it[k].off = up - it[k].off - it[k].size;
    qsort(it, n, sizeof *it, cmp_item_off);
    if (place_items(it, n, 0, ni, true, &down, &pf)) goto out;
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

/* ---- placement on a skyline ------------------------------------------------ */

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
static int place_skyline(plc_program *prog, const int32_t *first, const int32_t *last, const bool *persistent,
                         uint64_t base, uint64_t *peak, uint32_t *peak_instr, int power)
{
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
        uint64_t size = align_up(prog->buffers[b].bytes);
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
 * too large for place_by_size. Returns -1 when out of memory. */
static int place_online(plc_program *prog, const int32_t *first, const int32_t *last, const bool *persistent,
                        uint64_t base, uint64_t *peak, uint32_t *peak_instr)
{
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
                if (free_block(&A, prog->buffers[b].offset - base, align_up(prog->buffers[b].bytes))) goto out;
        uint64_t before = A.peak;
        for (int32_t b = start_head[i]; b >= 0; b = start_next[b])
            prog->buffers[b].offset = base + (uint64_t)alloc_best_fit(&A, align_up(prog->buffers[b].bytes));
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

/* The work of place_by_size, roughly: for each buffer, the buffers alive
 * when it starts (each is merged once when it is placed). */
static double placement_work(const plc_program *prog, const int32_t *first, const int32_t *last,
                             const bool *persistent)
{
    uint32_t nb = prog->nbuffers, ni = prog->ninstrs;
    int64_t *delta = calloc(ni + 1, sizeof *delta);
    uint32_t *starts = calloc(ni + 1, sizeof *starts);
    double work = 1e300;
    if (delta && starts) {
        for (uint32_t b = 0; b < nb; b++) {
            if (persistent[b] || first[b] < 0) continue;
            delta[first[b]]++;
            delta[last[b] + 1]--;
            starts[first[b]]++;
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

/* above this many overlapping pairs, placement is online best-fit: greedy
 * placement costs about 13 ns a pair (one order over the programs of
 * 1e5 to 2e6 pairs of tests/unit/test_memory_exact.c's sweep; make bench:
 * Llama-2-70B on 4096 GPUs lowers in under a second) */
#define PLACE_BY_SIZE_WORK 2e6
/* the pairs all orders together may visit: three orders at the least, as
 * many as this allows below it */
#define PLACE_ORDERS_WORK 2e6
/* A program whose smallest region is more than 1% above the largest live
 * sum tries further orders, up to PLACE_RETRY_WORK pairs in all (about
 * 0.2 s): one placed by the orders if it has at most PLACE_RETRY_PAIRS
 * pairs, one placed online if it is also placed on mirrored time. (The
 * layered Llama-2-70B stages of make bench, of 1.2e6 pairs, stay 1.04%
 * above their bound with every order: they are left out.) */
#define PLACE_RETRY_PAIRS 1e6
#define PLACE_RETRY_WORK 2e7

/* A program of at most PLACE_RETRY_PAIRS pairs still more than 1% above
 * the bound after the orders is jostled (see jostle) up to JOSTLE_PASSES
 * times, each pass two placements, within JOSTLE_WORK pairs in all. */
#define JOSTLE_PASSES 2
#define JOSTLE_WORK 1e7

/* Still more than 1% above after that, a program of at most
 * PLACE_RETRY_PAIRS pairs is placed in ring slots (place_slots), in each
 * band_order in turn, under SLOT_CEILINGS - 1 ceilings evenly between the
 * bound and the region, each placement jostled up to SLOT_JOSTLE_PASSES
 * times (SLOT_TRY placements at most), while the pairs visited stay within
 * SLOT_WORK (about 0.2 s: every placement that 1e7 allowed with the first
 * two band orders is still tried); the smallest region is kept. */
#define SLOT_CEILINGS 4
#define SLOT_BANDS (BAND_BY_SIZE + 1) /* every band_order */
#define SLOT_JOSTLE_PASSES 6
#define SLOT_TRY (1 + 2 * SLOT_JOSTLE_PASSES)
#define SLOT_WORK 1.5e7

/* Still more than 1% above after that, a program of at most
 * PLACE_RETRY_PAIRS pairs is searched (refine) down toward the goal
 * bound + bound / REFINE_LINE: up to REFINE_STEPS steps, each charged the
 * program's pairs in the share of its buffers the step sets or keeps
 * around them, up to REFINE_WORK pairs in all (about 6 ns a pair: at most
 * about 0.3 s; the 59 programs of tests/unit/test_memory_exact.c's sweep
 * left above 1% take about 17 s together, and 14 of them come out
 * smaller). */
#define REFINE_LINE 100
#define REFINE_STEPS 1000
#define REFINE_WORK 5e7
#define REFINE_PICK 2 /* buffers drawn per step, the highest taken (three: a stage fewer within 1%) */

/* up to this many pairs, a program placed online is also placed online on
 * mirrored time (its cost grows with the holes, not the pairs: the largest
 * plans of make bench are left to one sweep) */
#define PLACE_MIRROR_WORK 2e7

/* The online sweep on mirrored time (last use read backwards as first
 * use), kept where its region is smaller than *peak, the placement the
 * buffers hold now. Returns -1 when out of memory. */
static int place_online_mirrored(plc_program *prog, const int32_t *first, const int32_t *last, const bool *persistent,
                                 uint64_t base, uint64_t *peak, uint32_t *peak_instr)
{
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
    if (place_online(prog, mf, ml, persistent, base, &pk, &at)) goto out;
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

/* No order of placement is always the tightest (decreasing size leaves
 * holes where equal buffers live first-in first-out, the sweep where
 * lifetimes nest, long-lived buffers in order of first use where short
 * ones are large, the buffers of the busiest instructions first where
 * large short-lived ones would otherwise sit below the long-lived). The
 * orders are tried in this order, the first three always, the others
 * while the pairs visited stay within PLACE_ORDERS_WORK, then the online
 * sweep, then (see PLACE_RETRY_WORK) the orders left; the smallest region
 * is kept, the first on a tie. The search stops at a region equal to the
 * largest live sum (no placement is smaller). The first thirteen are
 * ranked on the 624 stages of tests/unit/test_memory_exact.c: after the
 * first three, each is the one that brings the most further stages within
 * 1% of the largest live sum; the last four (by breadth) were added for
 * the 1044 stages of its later sweep. A program of at most
 * PLACE_RETRY_PAIRS pairs still more than 1% above the bound is then
 * placed on a skyline (place_skyline, by two keys), the smallest region
 * jostled (JOSTLE_PASSES), then in ring slots (place_slots, SLOT_WORK),
 * and the smallest searched around (refine, REFINE_WORK). */
static const order orders[] = {
    {cmp_item, 0, false, false, false},       {cmp_item_keys, 200, true, true, false},
    {cmp_item_keys, 50, false, false, false}, {cmp_item_keys, 100, true, true, false},
    {cmp_item_keys, 400, false, true, false}, {cmp_item_start, 0, false, true, false},
    {cmp_item_keys, 200, true, false, false}, {cmp_item_start, 0, false, false, false},
    {cmp_item_keys, 100, false, false, false}, {cmp_item_keys, 400, true, false, false},
    {cmp_item_keys, 200, false, true, false}, {cmp_item_keys, 50, false, true, false},
    {cmp_item_long, 0, false, false, false},  {cmp_item_keys, 0, false, false, true},
    {cmp_item_keys, 0, true, false, true},    {cmp_item_keys, 0, false, true, true},
    {cmp_item_keys, 0, true, true, true},
};

/* ---- ruin and recreate ----------------------------------------------------- */

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
 * search ends at the goal, after REFINE_STEPS steps, or past REFINE_WORK
 * pairs. The region never grows. Returns -1 when out of memory. */
static int refine(plc_program *prog, const int32_t *first, const int32_t *last, const bool *persistent,
                  uint64_t base, uint64_t bound, double work, uint64_t *peak, uint32_t *peak_instr)
{
    uint32_t nb = prog->nbuffers, n = 0;
    item *cur = malloc(sizeof *cur * (nb ? nb : 1)), *trial = malloc(sizeof *trial * (nb ? nb : 1));
    uint32_t *over_at = malloc(sizeof *over_at * (nb ? nb : 1)), *at = malloc(sizeof *at * (nb ? nb : 1));
    int rc = -1;
    if (!cur || !trial || !over_at || !at) goto out;
    for (uint32_t b = 0; b < nb; b++) {
        if (persistent[b] || first[b] < 0) continue;
        at[b] = n;
        cur[n++] = (item){(int32_t)b, first[b], last[b], align_up(prog->buffers[b].bytes),
                          prog->buffers[b].offset - base, 0, 0};
    }
    uint64_t goal = bound + bound / REFINE_LINE, seed = 0x9e3779b97f4a7c15ull, region = 0, over = 0, line = 0;
    for (uint32_t k = 0; k < n; k++)
        if (cur[k].off + cur[k].size > region) region = cur[k].off + cur[k].size;
    double spent = 0;
    for (int step = 0; step < REFINE_STEPS && region > goal && spent <= REFINE_WORK; step++) {
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
        if (place_items(trial, nfix + nlift, nfix, (uint32_t)(t1 - t0 + 1), next_rand(&seed) & 1, &pk, &pf)) goto out;
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

/* The largest live sum: no placement needs less, and one that needs no
 * more is optimal. 0 when out of memory (the search then stops early). */
static uint64_t live_bound(const plc_program *prog, const int32_t *first, const int32_t *last, const bool *persistent)
{
    uint64_t *d = calloc((size_t)prog->ninstrs + 1, sizeof *d), bound = 0;
    if (!d) return 0;
    live_sums(prog, first, last, persistent, d);
    for (uint32_t i = 0; i < prog->ninstrs; i++)
        if (d[i] > bound) bound = d[i];
    free(d);
    return bound;
}

/* Keeps the placement the buffers hold now in best where its region pk is
 * smaller than *peak. */
static void keep_smaller(const plc_program *prog, uint64_t *best, uint64_t pk, uint32_t at, uint64_t *peak,
                         uint32_t *peak_instr)
{
    if (pk >= *peak) return;
    *peak = pk;
    *peak_instr = at;
    for (uint32_t b = 0; b < prog->nbuffers; b++) best[b] = prog->buffers[b].offset;
}

/* Places every non-persistent buffer with a lifetime above base; *peak gets
 * the dynamic region's size. Returns -1 when out of memory. */
static int memplan_place(plc_program *prog, const int32_t *first, const int32_t *last, const bool *persistent,
                         uint64_t base, uint64_t *peak, uint32_t *peak_instr, plc_memplan_stats *st)
{
    uint32_t nb = prog->nbuffers;
    double work = placement_work(prog, first, last, persistent), spent = 0;
    uint64_t bound = live_bound(prog, first, last, persistent), pk = 0;
    uint64_t *best = malloc(sizeof *best * (nb ? nb : 1));
    int v = 0, norders = (int)(sizeof orders / sizeof orders[0]), rc = -1;
    uint32_t at = 0;
    if (!best) return -1;
    *peak = UINT64_MAX;
    st->by_size = work <= PLACE_BY_SIZE_WORK;
    if (st->by_size) {
        for (; v < norders && *peak > bound && (v < 3 || spent + work <= PLACE_ORDERS_WORK); v++, spent += work) {
            if (place_by_size(prog, first, last, persistent, base, &pk, &at, orders[v])) goto out;
            keep_smaller(prog, best, pk, at, peak, peak_instr);
        }
        if (*peak > bound) {
            if (place_online(prog, first, last, persistent, base, &pk, &at)) goto out;
            keep_smaller(prog, best, pk, at, peak, peak_instr);
        }
    } else {
        if (place_online(prog, first, last, persistent, base, peak, peak_instr)) goto out;
        if (work <= PLACE_MIRROR_WORK && place_online_mirrored(prog, first, last, persistent, base, peak, peak_instr))
            goto out;
        for (uint32_t b = 0; b < nb; b++) best[b] = prog->buffers[b].offset;
    }
    /* the retry: further orders while the region is more than 1% above the bound */
    bool retry = st->by_size ? work <= PLACE_RETRY_PAIRS : work <= PLACE_MIRROR_WORK;
    for (; retry && v < norders && *peak - bound > bound / 100 && spent + work <= PLACE_RETRY_WORK;
         v++, spent += work) {
        if (place_by_size(prog, first, last, persistent, base, &pk, &at, orders[v])) goto out;
        keep_smaller(prog, best, pk, at, peak, peak_instr);
    }
    /* the skyline, by size times lifetime and by size times its cube, while
     * more than 1% above the bound */
    for (int k = 0; st->by_size && work <= PLACE_RETRY_PAIRS && k < 2 && *peak - bound > bound / 100; k++) {
        if (place_skyline(prog, first, last, persistent, base, &pk, &at, 1 + 2 * k)) goto out;
        keep_smaller(prog, best, pk, at, peak, peak_instr);
    }
    for (uint32_t b = 0; b < nb; b++)
        if (!persistent[b] && first[b] >= 0) prog->buffers[b].offset = best[b];
    /* the jostle of the smallest: while more than 1% above the bound */
    for (int p = 0; st->by_size && work <= PLACE_RETRY_PAIRS && p < JOSTLE_PASSES && *peak - bound > bound / 100 && (p + 1) * 2 * work <= JOSTLE_WORK;
         p++)
        if (jostle(prog, first, last, persistent, base, peak, peak_instr)) goto out;
    /* the ring slots under ceilings between the bound and the region, in
     * each band order, each jostled, while more than 1% above the bound */
    uint64_t from = *peak;
    for (int c = 1, v = 0, r = 0; st->by_size && work <= PLACE_RETRY_PAIRS && !r && c < SLOT_CEILINGS &&
                                  *peak - bound > bound / 100 &&
                                  ((c - 1) * SLOT_BANDS + v + 1) * SLOT_TRY * work <= SLOT_WORK;
         c += v == SLOT_BANDS - 1, v = (v + 1) % SLOT_BANDS) {
        for (uint32_t b = 0; b < nb; b++) best[b] = prog->buffers[b].offset;
        r = place_slots(prog, first, last, persistent, base, bound + (from - bound) * (uint64_t)c / SLOT_CEILINGS,
                        orders[2].long_life, (band_order)v, &pk, &at);
        if (r < 0) goto out;
        for (int p = 0; !r && p < SLOT_JOSTLE_PASSES && pk - bound > bound / 100; p++)
            if (jostle(prog, first, last, persistent, base, &pk, &at)) goto out;
        if (!r && pk < *peak) {
            *peak = pk;
            *peak_instr = at;
        } else {
            for (uint32_t b = 0; b < nb; b++) prog->buffers[b].offset = best[b];
        }
    }
    /* the search around the smallest, while more than 1% above the bound */
    if (st->by_size && work <= PLACE_RETRY_PAIRS && *peak - bound > bound / 100 &&
        refine(prog, first, last, persistent, base, bound, work, peak, peak_instr))
        goto out;
    rc = 0;
out:
    free(best);
    return rc;
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
        st->dynamic_total += align_up(prog->buffers[b].bytes);
    }
    /* 3. placement */
    if (memplan_place(prog, first, last, persistent, base, &dyn_peak, &st->peak_instr, st)) {
        snprintf(err, errlen, "memory plan: out of memory");
        rc = -1;
        goto out;
    }
    st->dynamic_peak = dyn_peak > unused_max ? dyn_peak : align_up(unused_max);
    prog->arena_bytes = base + st->dynamic_peak;
out:
    free(first);
    free(last);
    return rc;
}
