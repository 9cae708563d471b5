/* memplan_gap.c: the core every greedy strategy shares: items placed one
 * at a time in a given order, each into the tightest (or the lowest) gap
 * that holds it among the items placed before it whose lifetimes overlap
 * its own. The placed items are indexed by time (a segment tree over
 * instructions, and lists by block of first use), so that finding a gap
 * visits only the items alive during the new one's lifetime. */
#include "compiler/lower/lower_int.h"

#include <stdlib.h>
#include <string.h>

typedef mp_item item;

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

_Static_assert(PLC_PLAN_ALIGN == 1u << 6, "sort_spans skips the 6 low bits of an aligned offset");

/* sorts spans by lo: LSD radix on lo / 64 (offsets are PLC_PLAN_ALIGN-aligned),
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

/* lower_int.h says what it does */
int mp_place_items(item *it, uint32_t n, uint32_t npre, uint32_t ni, bool first_fit, uint64_t *peak,
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
