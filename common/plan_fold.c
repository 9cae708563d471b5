/* plan_fold.c: finds loops in a plan's tables for the writer (plan_fold.h).
 *
 * Top down and greedy: at each position of a sequence, candidate periods are
 * the distances to the next rows of the same class (and of the same key2);
 * a period holds while every row of the next body differs from its
 * counterpart by the same per-row, per-field stride, and the longest run of
 * iterations wins (most rows saved). The body of a chosen loop is then
 * folded the same way, its rows carrying the new stride; a row may join an
 * inner loop only with rows whose outer strides equal its own, so every
 * iteration of the outer loop repeats the inner loop exactly. The finished
 * tree is expanded and compared with the table before it is used. */
#include "common/plan_fold.h"

#include <stdlib.h>
#include <string.h>

#define CANDIDATES 8 /* periods tried per chain and position */
#define MIN_GAIN 4   /* rows a loop must save: smaller repeats stay rows, for readable dumps */

typedef struct seq {
    const uint32_t *orig; /* row of each position */
    uint32_t n;
    uint32_t depth;
    const int64_t *st[PLC_FOLD_MAX_DEPTH]; /* per enclosing loop: n x nfields strides */
} seq;

typedef struct ctx {
    const int64_t *v;
    const uint64_t *cls, *key2;
    uint32_t nf;
    plc_fold_tree *t;
    int64_t *d; /* scratch: a candidate body's strides */
    size_t dcap;
} ctx;

static plc_fold_node *push(plc_fold_tree *t)
{
    if (t->oom) return NULL;
    if (t->n == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 256;
        plc_fold_node *x = realloc(t->nodes, cap * sizeof *x);
        if (!x) {
            t->oom = 1;
            return NULL;
        }
        t->nodes = x;
        t->cap = cap;
    }
    plc_fold_node *x = &t->nodes[t->n++];
    memset(x, 0, sizeof *x);
    return x;
}

static int64_t *pool(plc_fold_tree *t, size_t n)
{
    if (t->oom) return NULL;
    if (t->npools == t->pcap) {
        size_t cap = t->pcap ? 2 * t->pcap : 64;
        int64_t **x = realloc(t->pools, cap * sizeof *x);
        if (!x) {
            t->oom = 1;
            return NULL;
        }
        t->pools = x;
        t->pcap = cap;
    }
    int64_t *p = malloc((n ? n : 1) * sizeof *p);
    if (!p) {
        t->oom = 1;
        return NULL;
    }
    t->pools[t->npools++] = p;
    return p;
}

/* positions a and b of s: same class, same enclosing strides; d = b - a */
static int match(const ctx *c, const seq *s, uint32_t a, uint32_t b, int64_t *d)
{
    uint32_t ra = s->orig[a], rb = s->orig[b], nf = c->nf;
    if (c->cls[ra] != c->cls[rb]) return 0;
    for (uint32_t l = 0; l < s->depth; l++)
        if (memcmp(s->st[l] + (size_t)a * nf, s->st[l] + (size_t)b * nf, nf * sizeof(int64_t))) return 0;
    const int64_t *va = c->v + (size_t)ra * nf, *vb = c->v + (size_t)rb * nf;
    for (uint32_t f = 0; f < nf; f++) d[f] = (int64_t)((uint64_t)vb[f] - (uint64_t)va[f]);
    return 1;
}

/* iterations of period L at i (1 if the period does not hold) */
static uint32_t iterations(ctx *c, const seq *s, uint32_t i, uint32_t L)
{
    uint32_t nf = c->nf;
    if ((size_t)L * nf > c->dcap) {
        size_t cap = (size_t)L * nf * 2;
        int64_t *d = realloc(c->d, cap * sizeof *d);
        if (!d) return 1;
        c->d = d;
        c->dcap = cap;
    }
    for (uint32_t j = 0; j < L; j++)
        if (!match(c, s, i + j, i + L + j, c->d + (size_t)j * nf)) return 1;
    uint32_t it = 2;
    int64_t tmp[PLC_FOLD_MAX_FIELDS];
    while ((uint64_t)i + (uint64_t)(it + 1) * L <= s->n && it < UINT32_MAX / 2) {
        uint32_t base = i + it * L;
        uint32_t j = 0;
        for (; j < L; j++)
            if (!match(c, s, base - L + j, base + j, tmp) || memcmp(tmp, c->d + (size_t)j * nf, nf * sizeof tmp[0]))
                break;
        if (j < L) break;
        it++;
    }
    return it;
}

/* next position with the same key, per position; hash table of positions */
static uint32_t *next_same(const uint64_t *key, const seq *s)
{
    uint32_t *next = malloc(((size_t)s->n + 1) * sizeof *next);
    size_t cap = 16;
    while (cap < 2 * (size_t)s->n) cap *= 2;
    uint32_t *slot = malloc(cap * sizeof *slot); /* position + 1, 0 empty */
    if (!next || !slot) {
        free(next);
        free(slot);
        return NULL;
    }
    memset(slot, 0, cap * sizeof *slot);
    for (uint32_t p = s->n; p-- > 0;) {
        uint64_t k = key[s->orig[p]];
        size_t h = (size_t)(k * 0x9E3779B97F4A7C15ull >> 20) & (cap - 1);
        while (slot[h] && key[s->orig[slot[h] - 1]] != k) h = (h + 1) & (cap - 1);
        next[p] = slot[h] ? slot[h] - 1 : UINT32_MAX;
        slot[h] = p + 1;
    }
    free(slot);
    return next;
}

static int fold_seq(ctx *c, const seq *s, uint32_t *items);

static int leaf(ctx *c, const seq *s, uint32_t p)
{
    plc_fold_node *x = push(c->t);
    if (!x) return -1;
    x->row = s->orig[p];
    x->depth = s->depth;
    for (uint32_t l = 0; l < s->depth; l++) x->stride[l] = s->st[l] + (size_t)p * c->nf;
    return 0;
}

static int fold_seq(ctx *c, const seq *s, uint32_t *items)
{
    *items = 0;
    uint32_t *n1 = NULL, *n2 = NULL;
    if (s->depth < PLC_FOLD_MAX_DEPTH && s->n >= 2) {
        n1 = next_same(c->cls, s);
        n2 = next_same(c->key2, s);
        if (!n1 || !n2) {
            free(n1);
            free(n2);
            c->t->oom = 1;
            return -1;
        }
    }
    uint32_t i = 0;
    while (i < s->n) {
        uint32_t bestL = 0, bestIt = 1;
        uint64_t bestGain = 0;
        for (int chain = 0; n1 && chain < 2; chain++) {
            const uint32_t *nx = chain ? n2 : n1;
            uint32_t p = nx[i];
            for (int k = 0; k < CANDIDATES && p != UINT32_MAX; k++, p = nx[p]) {
                uint32_t L = p - i;
                if ((uint64_t)i + 2 * (uint64_t)L > s->n) break;
                if (L == bestL) continue;
                uint32_t it = iterations(c, s, i, L);
                uint64_t gain = (uint64_t)(it - 1) * L;
                if (it >= 2 && gain >= MIN_GAIN && gain > bestGain) {
                    bestGain = gain;
                    bestL = L;
                    bestIt = it;
                }
            }
        }
        if (bestIt < 2) {
            if (leaf(c, s, i)) break;
            (*items)++;
            i++;
            continue;
        }
        /* the loop: header, then its body folded one level deeper */
        size_t at = c->t->n;
        if (!push(c->t)) break;
        (void)iterations(c, s, i, bestL); /* c->d holds the strides of bestL again */
        int64_t *st = pool(c->t, (size_t)bestL * c->nf);
        if (!st) break;
        memcpy(st, c->d, (size_t)bestL * c->nf * sizeof *st);
        seq body = {.orig = s->orig + i, .n = bestL, .depth = s->depth + 1};
        for (uint32_t l = 0; l < s->depth; l++) body.st[l] = s->st[l] + (size_t)i * c->nf;
        body.st[s->depth] = st;
        uint32_t inner = 0;
        if (fold_seq(c, &body, &inner)) break;
        plc_fold_node *h = &c->t->nodes[at];
        h->loop = 1;
        h->count = bestIt;
        h->nitems = inner;
        (*items)++;
        i += bestIt * bestL;
    }
    free(n1);
    free(n2);
    return c->t->oom ? -1 : 0;
}

/* expands items from node *at against the rows from *row on; k: iterations */
static int check(const ctx *c, size_t *at, uint32_t nitems, int64_t *k, uint32_t depth, uint32_t *row, uint32_t nrows)
{
    const plc_fold_tree *t = c->t;
    for (uint32_t it = 0; it < nitems; it++) {
        if (*at >= t->n) return -1;
        const plc_fold_node *x = &t->nodes[*at];
        if (x->loop) {
            size_t body = *at + 1, end = body;
            for (uint32_t r = 0; r < x->count; r++) {
                end = body;
                k[depth] = r;
                if (check(c, &end, x->nitems, k, depth + 1, row, nrows)) return -1;
            }
            *at = end;
            continue;
        }
        if (*row >= nrows || x->depth != depth) return -1;
        const int64_t *base = c->v + (size_t)x->row * c->nf, *want = c->v + (size_t)*row * c->nf;
        for (uint32_t f = 0; f < c->nf; f++) {
            uint64_t val = (uint64_t)base[f];
            for (uint32_t l = 0; l < depth; l++) val += (uint64_t)k[l] * (uint64_t)x->stride[l][f];
            if ((int64_t)val != want[f]) return -1;
        }
        if (c->cls[x->row] != c->cls[*row]) return -1;
        (*row)++;
        (*at)++;
    }
    return 0;
}

int plc_fold_rows(const int64_t *v, const uint64_t *cls, const uint64_t *key2, uint32_t nrows, uint32_t nfields,
                  plc_fold_tree *out)
{
    memset(out, 0, sizeof *out);
    if (nfields > PLC_FOLD_MAX_FIELDS) return -1;
    uint32_t *orig = malloc(((size_t)nrows + 1) * sizeof *orig);
    if (!orig) return -1;
    for (uint32_t i = 0; i < nrows; i++) orig[i] = i;
    ctx c = {.v = v, .cls = cls, .key2 = key2, .nf = nfields, .t = out};
    seq s = {.orig = orig, .n = nrows};
    int rc = fold_seq(&c, &s, &out->top);
    free(c.d);
    free(orig);
    if (rc == 0) {
        size_t at = 0;
        uint32_t row = 0;
        int64_t k[PLC_FOLD_MAX_DEPTH] = {0};
        if (check(&c, &at, out->top, k, 0, &row, nrows) || row != nrows || at != out->n) rc = -1;
    }
    if (rc) plc_fold_free(out);
    return rc;
}

void plc_fold_free(plc_fold_tree *t)
{
    for (size_t i = 0; i < t->npools; i++) free(t->pools[i]);
    free(t->pools);
    free(t->nodes);
    memset(t, 0, sizeof *t);
}

int plc_name_tokens(const char *s, size_t len, int64_t value[PLC_NAME_TOKENS], size_t start[PLC_NAME_TOKENS],
                    size_t tlen[PLC_NAME_TOKENS])
{
    int n = 0;
    for (size_t i = 0; i < len;) {
        if (s[i] < '0' || s[i] > '9') {
            i++;
            continue;
        }
        size_t j = i;
        int64_t x = 0;
        while (j < len && s[j] >= '0' && s[j] <= '9') {
            if (j - i < 15) x = 10 * x + (s[j] - '0');
            j++;
        }
        if (n == PLC_NAME_TOKENS || j - i > 15 || (s[i] == '0' && j - i > 1)) return 0;
        value[n] = x;
        start[n] = i;
        tlen[n] = j - i;
        n++;
        i = j;
    }
    return n;
}

uint64_t plc_name_class(const char *s, size_t len)
{
    int64_t v[PLC_NAME_TOKENS];
    size_t st[PLC_NAME_TOKENS], tl[PLC_NAME_TOKENS];
    int n = s ? plc_name_tokens(s, len, v, st, tl) : 0;
    uint64_t h = s ? 0xcbf29ce484222325ull : 1;
    int t = 0;
    for (size_t i = 0; s && i < len; i++) {
        if (t < n && i == st[t]) {
            h = (h ^ 0x100) * 0x100000001b3ull; /* a number stands here */
            i += tl[t++] - 1;
            continue;
        }
        h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
    }
    return h;
}
