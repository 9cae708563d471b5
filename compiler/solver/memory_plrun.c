/* memory_plrun.c: the dynamic memory of a plrun plan, stage by stage, without
 * lowering the whole plan.
 *
 * plrun's memory is the plan's arena: the persistent region (parameters,
 * gradients, optimizer state: memory_model.c's static state) and the largest
 * set of short-lived buffers alive at one instruction. This file counts that
 * set in two parts:
 *
 * - one layer and the head are the lowering's own: a template of the layout
 *   (one layer, one stage, one micro-batch) is lowered and measured with
 *   the plan's buffer lifetimes (plc_lower_unit_figures, lower_unit.c),
 *   which gives what a layer keeps for its backward, the highest point
 *   inside its forward and its backward, and the head's; this file holds
 *   no description of a layer's buffers;
 * - units (one chunk of layers for one micro-batch, forward or backward)
 *   are then replayed over the pipeline order (pipeline_order.c): the
 *   forward units held, the pipeline messages in flight, ZeRO's gathered
 *   weights, gradient blocks and shards, and the optimizer epilogue.
 *
 * Each buffer is rounded up to the memory plan's 64-byte alignment. The
 * template's figures are cached per shape (figures_cached), and a long step
 * is replayed for a few micro-batches and extended linearly, so the work is
 * O(1) in the number of micro-batches and the search stays fast;
 * tests/unit/test_solver_memory_exact.c holds the result against lowered plans.
 * What the replay does not see is the placement's fragmentation (memplan.c
 * packs buffers near, not always at, the live sum). */
#include "compiler/solver/solver_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/layout_rules.h"
#include "common/tensors.h"
#include "compiler/lower/lower.h"

static double al(double bytes) { return bytes <= 0 ? 0 : ceil(bytes / PLC_PLAN_ALIGN) * PLC_PLAN_ALIGN; }

/* the sizes the replay reads besides the unit figures */
typedef struct pm {
    double X;        /* one residual-stream block: a pipeline message */
    bool sp, zero2p; /* sequence parallelism; ZeRO >= 2 gradient blocks */
} pm;

/* the tp-local block of a tensor, ZeRO-padded to a multiple of nz */
static void block_of(const plc_model *m, int64_t id, int64_t tp, int64_t nz, double *padded, double *chunk)
{
    plc_tensor_role role;
    int64_t shape[2];
    int ndim;
    *padded = *chunk = 0;
    if (id < 0 || !plc_tensor_shape(m, id, &role, shape, &ndim)) return;
    plc_shard_kind k = tp > 1 ? plc_tensor_tp_split(role) : PLC_SHARD_NONE;
    int64_t rows = plc_shard_block(shape[0], k == PLC_SHARD_ROWS ? tp : 1);
    int64_t cols = plc_shard_block(ndim > 1 ? shape[1] : 1, k == PLC_SHARD_COLS ? tp : 1);
    int64_t n = rows * cols, c = (n + nz - 1) / nz;
    *chunk = (double)c;
    *padded = (double)(c * nz);
}

/* per-micro-batch figures of a stage's units */
typedef struct unit_fig {
    double S;        /* one layer's kept bytes and its output (the next layer's input) */
    /* by [before][hold]: the stage is still in the layer from an earlier
     * visit (ZeRO 3: its weights gathered then are alive), and its next
     * visit is of the same layer (they stay alive) */
    double fwd_peak[2][2]; /* highest point of a layer's forward above its input */
    double bwd_peak[2][2]; /* highest point of a layer's backward, from S and the incoming gradient */
    double bwd_acc[2];     /* the same, after the layer's own backward: its gradient blocks exist
                            * (ZeRO >= 2, counted apart) and are accumulated into */
    double grads;    /* ZeRO >= 2: one layer's gradient blocks and reduced shards */
    double shards;   /* of which the shards */
} unit_fig;

/* the replay of a stage's units */
typedef struct rp {
    pm *p;
    const plc_pipe_shape *sh;
    int64_t stage;        /* the rank (a chunk's layers: plc_pipe_chunk_lo, hi) */
    unit_fig u;
    double tokens, head_keep, head_peak, layer_w;
    double emb_peak, emb_bwd_peak; /* the embedding's forward and backward (plc_unit_figures) */
    double emb_blocks, emb_shards, head_blocks, head_shards; /* ZeRO >= 2 */
    double zero1_layer, zero1_emb, zero1_head; /* ZeRO 1: reduced gradient shards */
    bool at_end; /* sends waited for at the end of the step (plc_pipe_send_lag of the whole step) */
} rp;

/* a layout's figures, the same on every stage */
typedef struct figs {
    pm p;
    rp r;
    int casts_zero; /* effective ZeRO stage */
    int64_t nz;
    bool unlowered; /* the template was refused: no stage of the layout fits */
} figs;

/* A pending message buffer: freed when unit `until` starts. */
typedef struct msg {
    int64_t until;
    double bytes;
} msg;

/* The replay's candidates for the peak, by the place in the code that
 * offers them, the phase of the step (warm-up, steady, cool-down,
 * epilogue), the unit's place in its run (first, last or another of one
 * chunk's consecutive forwards or backwards) and the rank's chunk: each
 * such slot's value grows linearly with the micro-batches once the step is
 * long enough (its candidates are one point of the schedule, or points
 * that grow alike), which is what lets a long step be extended from short
 * replays. A replay's slots are kept sparse, sorted by id. */
#define PHASES 4
#define RUNPOS 3
#define SITES 9
typedef struct slot {
    int64_t id;
    double peak; /* the largest value offered */
    double held; /* forward state held then */
} slot;

typedef struct slots {
    int64_t n, cap;
    slot *v; /* by id */
} slots;

/* grows s to hold n slots; false when out of memory */
static bool slots_reserve(slots *s, int64_t n)
{
    if (n <= s->cap) return true;
    slot *v = realloc(s->v, sizeof *v * (size_t)n);
    if (!v) return false;
    s->v = v;
    s->cap = n;
    return true;
}

/* a replay's scratch (one per thread, grown as needed): its offers, dense
 * by id while it runs, with a bitmap of the ids offered; the unit order and
 * the pending sends */
typedef struct scratch {
    slot *dense; /* peak < 0: not offered */
    uint64_t *seen;
    int64_t cap;
    plc_pipe_unit *order;
    msg *sends;
    int64_t units;
} scratch;

/* The lowering's keys (compiler/lower/lower_comm.c). ZeRO 3: a stage that
 * enters another layer (key) drops the weights it gathered; entering the
 * same layer again (a forward followed by the backward of the same layer)
 * keeps them. ZeRO >= 2: a key's gradient blocks are reduce-scattered at
 * the end of the last visit of the stage's run in it that makes them
 * (plc_pipe_grads_later), and stay alive with their shards through the
 * next visit. */
typedef struct keys {
    int64_t cur;    /* layer key now (-1 embedding, L head, INT64_MIN none) */
    double blocks;  /* ZeRO >= 2: gradient blocks of the current key, not yet reduced */
    double shards;  /* their reduce-scatter outputs */
    double pend;    /* blocks and shards reduced at the end of the last visit, alive through this one */
    bool chained;   /* the last enter kept the key: its gathered weights are still alive */
} keys;

static void enter(keys *K, int64_t key, double blocks_shards)
{
    K->chained = key == K->cur;
    if (K->chained) return;
    K->shards = blocks_shards;
    K->cur = key;
}

/* the end of visit i of unit k (lw_visit_end): what was reduced before it
 * is accumulated; the key's blocks are reduced unless a later visit of the
 * run makes more */
static void visit_end(keys *K, const plc_pipe_shape *sh, const plc_pipe_unit *order, int64_t total, int64_t k,
                      int64_t i)
{
    K->pend = 0;
    if (K->blocks <= 0) return; /* none open (ZeRO 0, 1 always) */
    bool grads;
    plc_pipe_visit(sh, &order[k], i, &grads);
    if (grads && !plc_pipe_grads_later(sh, order, total, k, i)) K->pend = K->blocks + K->shards, K->blocks = 0;
}

/* Replays rank r->stage's units for M micro-batches: returns the highest
 * live sum of short-lived buffers; *held gets the forward state held then.
 * live counts what outlives an instruction of the unit being replayed: the
 * forward state of held units, chunk outputs and gradients waiting for
 * their next unit or for their send to complete, posted receives, ZeRO 1
 * gradient shards; ZeRO 2/3's pending blocks are in keys. */
static void offer(scratch *o, int64_t id, double v, double stash)
{
    slot *x = &o->dense[id];
    o->seen[id >> 6] |= (uint64_t)1 << (id & 63);
    if (v > x->peak) x->peak = v, x->held = stash;
}

static inline int64_t rank_of(const plc_pipe_shape *sh, int64_t c)
{
    return sh->looping ? c % sh->pp : c / sh->per_rank;
}

/* does unit u get its input (forward) or its gradient (backward) from another rank? */
static bool receives(const plc_pipe_shape *sh, const plc_pipe_unit *u, int64_t stage)
{
    return !u->bwd ? u->chunk > 0 && rank_of(sh, u->chunk - 1) != stage
                   : u->chunk < sh->nchunks - 1 && rank_of(sh, u->chunk + 1) != stage;
}

/* the key the stage enters after visit j (of n layers) of unit k */
static int64_t key_after(const plc_pipe_shape *sh, const plc_pipe_unit *order, int64_t total, int64_t k,
                         int64_t j, int64_t n)
{
    const plc_pipe_unit *u = &order[k];
    int64_t nc = sh->nchunks;
    if (!u->bwd) {
        if (j + 1 < n) return plc_pipe_chunk_lo(sh, u->chunk) + j + 1;
        if (u->chunk == nc - 1) return sh->layers; /* the head */
    } else {
        if (j + 1 < n) return plc_pipe_chunk_hi(sh, u->chunk) - 2 - j;
        if (u->chunk == 0) return -1; /* the embedding */
    }
    if (k + 1 >= total) return INT64_MIN + 1; /* the epilogue */
    const plc_pipe_unit *v = &order[k + 1];
    if (!v->bwd) return v->chunk == 0 ? -1 : plc_pipe_chunk_lo(sh, v->chunk);
    return v->chunk == nc - 1 ? sh->layers : plc_pipe_chunk_hi(sh, v->chunk) - 1;
}

/* room in o for nids slot ids (words of 64 seen bits) and a step of
 * total units; false when out of memory */
static bool scratch_reserve(scratch *o, int64_t nids, int64_t words, int64_t total)
{
    if (o->cap < nids) {
        slot *d = realloc(o->dense, sizeof *d * (size_t)nids);
        if (d) o->dense = d;
        uint64_t *b = d ? realloc(o->seen, sizeof *b * (size_t)words) : NULL;
        if (b) o->seen = b;
        if (!d || !b) return false;
        for (int64_t i = o->cap; i < nids; i++) o->dense[i].peak = -1;
        for (int64_t i = (o->cap + 63) / 64; i < words; i++) o->seen[i] = 0;
        o->cap = nids;
    }
    if (o->units < total + 1) {
        plc_pipe_unit *u = realloc(o->order, sizeof *u * (size_t)(total + 1));
        if (u) o->order = u;
        msg *m = u ? realloc(o->sends, sizeof *m * (size_t)(total + 1)) : NULL;
        if (m) o->sends = m;
        if (!u || !m) return false;
        o->units = total + 1;
    }
    return true;
}

/* the offers of a replay, by id, into *out (out->n = 0 when out of
 * memory); o's slots are cleared for the next replay */
static void collect(scratch *o, int64_t words, slots *out)
{
    int64_t count = 0;
    for (int64_t w = 0; w < words; w++) count += __builtin_popcountll(o->seen[w]);
    bool room = slots_reserve(out, count);
    for (int64_t w = 0; w < words; w++)
        for (uint64_t bits = o->seen[w]; bits; bits &= bits - 1) {
            int64_t id = w * 64 + __builtin_ctzll(bits);
            if (room) out->v[out->n++] = (slot){id, o->dense[id].peak, o->dense[id].held};
            o->dense[id].peak = -1;
        }
    for (int64_t w = 0; w < words; w++) o->seen[w] = 0;
}

/* Replays rank r->stage's units for M micro-batches into *out (sparse
 * slots by id; out->n = 0 when out of memory). */
static void replay(const rp *r, int64_t M, slots *out)
{
    static _Thread_local scratch o; /* kept for the thread's life */
    const plc_pipe_shape *sh = r->sh;
    const pm *p = r->p;
    int64_t total = plc_pipe_units(sh, M), nc = sh->nchunks, L = sh->layers;
    int64_t nids = (int64_t)SITES * PHASES * RUNPOS * sh->per_rank, words = (nids + 63) / 64;
    out->n = 0;
    if (!scratch_reserve(&o, nids, words, total)) return;
    plc_pipe_unit *order = o.order;
    msg *sends = o.sends;
    if (plc_pipe_order(sh, M, r->stage, order)) return;
    int64_t first_b = total, last_f = 0; /* the phases: warm-up, steady, cool-down, after */
    for (int64_t k = total - 1; k >= 0; k--)
        if (order[k].bwd) first_b = k;
    for (int64_t k = 0; k < total; k++)
        if (!order[k].bwd) last_f = k;
    int phase = 0;
    int64_t nsend = 0, lag = r->at_end ? total : plc_pipe_send_lag(sh, M);
    double X = al(p->X), S = r->u.S;
    double live = 0, stash = 0;
    keys K = {.cur = INT64_MIN};
    double lw = r->layer_w, gb = r->u.grads - r->u.shards; /* a layer's gathered weights; its gradient blocks */
    double wheld = 0; /* the last layer visit's weights, alive for the next one */
#define BUMP(site, v) offer(&o, (((site) * PHASES + phase) * RUNPOS + pos) * sh->per_rank + mine, (v), stash)
    for (int64_t k = 0; k < total; k++) {
        const plc_pipe_unit *u = &order[k];
        phase = k < first_b ? 0 : k <= last_f ? 1 : 2;
        bool run_first = k == 0 || order[k - 1].bwd != order[k].bwd || order[k - 1].chunk != order[k].chunk;
        bool run_last = k == total - 1 || order[k + 1].bwd != order[k].bwd || order[k + 1].chunk != order[k].chunk;
        int pos = run_first ? 0 : run_last ? 1 : 2;
        int64_t mine = sh->looping ? order[k].chunk / sh->pp : order[k].chunk % sh->per_rank; /* the rank's j-th chunk */
        int64_t c = u->chunk, lo = plc_pipe_chunk_lo(sh, c), hi = plc_pipe_chunk_hi(sh, c), n = hi - lo;
        bool first_chunk = c == 0, last_chunk = c == nc - 1;
        const plc_pipe_unit *next = k + 1 < total ? &order[k + 1] : NULL;
        /* sends of the unit before the previous one are done */
        for (int64_t i = 0; i < nsend; i++)
            if (sends[i].until == k) live -= sends[i].bytes, sends[i] = sends[--nsend], i--;
        /* post the next unit's receive (its buffer is that unit's input;
         * the first unit's is posted before it) */
        if (k == 0 && receives(sh, u, r->stage)) live += X;
        if (next && receives(sh, next, r->stage)) live += X;
        double own = (double)n * S + (first_chunk ? r->tokens : 0) + (last_chunk ? r->head_keep : 0);
        if (!u->bwd) {
            /* the input is in live (received, or the previous chunk's output
             * on this rank), except the embedding's */
            double base = live;
            if (first_chunk) {
                enter(&K, -1, r->emb_shards);
                wheld = 0;
                BUMP(0, base + r->emb_peak + K.pend + K.blocks);
                base += r->tokens + X;
                visit_end(&K, sh, order, total, k, 0);
            }
            /* layers lo.. : the first two and the last two differ (keys);
             * those between are the same as the second */
            for (int64_t j = 0; j < n; j++) {
                if (j == 2 && n > 4) j = n - 2;
                enter(&K, lo + j, r->u.shards);
                bool hold = key_after(sh, order, total, k, j, n) == lo + j;
                BUMP(1, base + (double)j * S + r->u.fwd_peak[K.chained][hold] + K.pend + K.blocks);
                wheld = hold ? lw : 0;
                visit_end(&K, sh, order, total, k, first_chunk + j);
            }
            live = base + (double)n * S; /* with the chunk output */
            stash += own;
            if (last_chunk) {
                enter(&K, L, r->head_shards);
                wheld = 0;
                BUMP(2, live + r->head_peak + K.pend + K.blocks);
                K.blocks += r->head_blocks;
                live += r->head_keep;
                visit_end(&K, sh, order, total, k, first_chunk + n);
            } else if (rank_of(sh, c + 1) != r->stage) {
                if (k + lag < total) sends[nsend++] = (msg){k + lag, X}; /* else waited at the end: stays in live */
            }
        } else {
            if (last_chunk) { /* the head's backward: its gradient replaces the norm input */
                enter(&K, L, r->head_shards);
                live -= r->head_keep;
                visit_end(&K, sh, order, total, k, 0);
            }
            /* ZeRO 1, the chunk's last backward: each tensor's gradient
             * shard is reduced after its own backward (the head's first) */
            bool last_micro = r->zero1_layer > 0 && u->micro == M - 1;
            double head1 = last_micro && last_chunk ? r->zero1_head : 0;
            /* live: this unit's state, its incoming gradient, the rest */
            double tok = first_chunk ? r->tokens : 0;
            double base = live - (double)n * S - X - tok;
            for (int64_t j = 0; j < n; j++) {
                if (j == 2 && n > 4) j = n - 2;
                enter(&K, hi - 1 - j, r->u.shards);
                bool hold = key_after(sh, order, total, k, j, n) == hi - 1 - j;
                /* the same layer again: its blocks (if any) are accumulated into */
                double bp = K.chained && K.blocks > 0 ? r->u.bwd_acc[hold] : r->u.bwd_peak[K.chained][hold];
                wheld = hold ? lw : 0;
                BUMP(last_micro ? 7 : 3, base + tok + (double)(n - 1 - j) * S + bp + K.pend + K.blocks +
                            (last_micro ? (double)j * r->zero1_layer + head1 : 0));
                if (!K.chained || K.blocks == 0) K.blocks = gb;
                visit_end(&K, sh, order, total, k, last_chunk + j);
            }
            live = base + tok + X; /* the chunk input's gradient */
            stash -= own;
            if (first_chunk) {
                enter(&K, -1, r->emb_shards);
                wheld = 0;
                BUMP(last_micro ? 8 : 4, live + r->emb_bwd_peak + K.pend + r->emb_blocks +
                            (last_micro ? (double)n * r->zero1_layer + head1 : 0));
                K.blocks = r->emb_blocks;
                live -= tok + X;
                visit_end(&K, sh, order, total, k, last_chunk + n);
            } else if (rank_of(sh, c - 1) != r->stage) {
                if (k + lag < total) sends[nsend++] = (msg){k + lag, X};
            }
            if (last_micro) /* the chunk's last backward: its gradients reduced */
                live += (double)n * r->zero1_layer + (first_chunk ? r->zero1_emb : 0) + (last_chunk ? r->zero1_head : 0);
        }
        BUMP(5, live + K.pend + K.blocks + wheld);
    }
    /* the epilogue's switch: the last blocks reduce-scatter */
    enter(&K, INT64_MIN + 1, 0);
    phase = 3;
    int pos = 0;
    int64_t mine = 0;
    BUMP(6, live + K.pend);
#undef BUMP
    collect(&o, words, out);
}

/* The search asks for the same stage many times (the held state stops
 * depending on the micro-batches past the warm-up, and most layouts share
 * their per-layer figures with others): answers are memoised per thread,
 * keyed by everything a replay reads. A short step's answer is kept by its
 * micro-batch count; a long step's is kept as lines, one per slot that can
 * hold the peak, valid for any count past the replays they come from. */
/* the caches' hash of a key: its 64-bit words, mixed one by one (a key's
 * size is a multiple of 8 bytes, with no padding: memcmp compares it too) */
static uint64_t hash_words(const void *key, size_t bytes)
{
    uint64_t h = 1469598103934665603ull, w;
    for (size_t i = 0; i + sizeof w <= bytes; i += sizeof w) {
        memcpy(&w, (const char *)key + i, sizeof w);
        h = (h ^ w) * 0x9E3779B97F4A7C15ull;
        h ^= h >> 29;
    }
    return h;
}

typedef struct replay_key {
    int64_t ints[8]; /* with the micro-batches, or -1 for the lines */
    double figs[32];
} replay_key;

typedef struct line {
    double peak, slope; /* the slot's value at m0 micro-batches, and its growth per step */
    double held, hslope;
} line;

#define REPLAY_CACHE 2048
typedef struct replay_entry {
    bool used;
    replay_key key;
    double peak, held;        /* short steps: the answer */
    int64_t m0, step, nlines; /* long steps */
    line *lines;              /* owned by the entry */
} replay_entry;

static uint64_t key_of(const rp *r, int64_t M, replay_key *k)
{
    const pm *p = r->p;
    memset(k, 0, sizeof *k);
    int64_t ints[8] = {r->sh->schedule, r->sh->pp, r->sh->vpp, r->sh->layers, r->stage, M, 0,
                       (int64_t)r->at_end | (int64_t)p->sp << 1 | (int64_t)p->zero2p << 2};
    double figs[32] = {r->u.S, r->u.fwd_peak[0][0], r->u.fwd_peak[0][1], r->u.fwd_peak[1][0], r->u.fwd_peak[1][1],
                       r->u.bwd_peak[0][0], r->u.bwd_peak[0][1], r->u.bwd_peak[1][0], r->u.bwd_peak[1][1],
                       r->u.bwd_acc[0], r->u.bwd_acc[1], r->u.grads, r->u.shards, r->tokens, r->head_keep,
                       r->head_peak, r->layer_w, r->emb_blocks, r->emb_shards, r->head_blocks, r->head_shards,
                       r->zero1_layer, r->zero1_emb, r->zero1_head, p->X, r->emb_peak, r->emb_bwd_peak};
    memcpy(k->ints, ints, sizeof ints);
    memcpy(k->figs, figs, sizeof figs);
    return hash_words(k, sizeof *k);
}

/* the entry for key k: a hit (*hit), the slot to fill, or NULL */
static replay_entry *entry_of(const replay_key *k, uint64_t hsh, bool *hit)
{
    static _Thread_local replay_entry *cache;
    if (!cache) cache = calloc(REPLAY_CACHE, sizeof *cache); /* one per thread, kept for its life */
    replay_entry *e = cache ? &cache[hsh % REPLAY_CACHE] : NULL;
    *hit = e && e->used && memcmp(&e->key, k, sizeof *k) == 0;
    return e;
}

/* the thread's slot buffers for the replays compared */
static _Thread_local slots bufs[3];

/* the peak of a short step of M micro-batches, and the forward state held then */
static void short_step(const rp *r, int64_t M, double *peak, double *held)
{
    replay_key k;
    bool hit;
    replay_entry *e = entry_of(&k, key_of(r, M, &k), &hit);
    if (hit) {
        *peak = e->peak, *held = e->held;
        return;
    }
    slots *a = &bufs[0];
    replay(r, M, a);
    *peak = *held = 0;
    for (int64_t i = 0; i < a->n; i++)
        if (a->v[i].peak > *peak) *peak = a->v[i].peak, *held = a->v[i].held;
    if (!e) return;
    free(e->lines);
    *e = (replay_entry){.used = true, .key = k, .peak = *peak, .held = *held};
}

/* do three replays, a step apart, offer the same slots, each grown by the
 * same amount? */
static bool linear(const slots *a, const slots *b, const slots *c)
{
    if (a->n != b->n || b->n != c->n) return false;
    for (int64_t i = 0; i < a->n; i++) {
        const slot *x = &a->v[i], *y = &b->v[i], *z = &c->v[i];
        if (x->id != y->id || y->id != z->id) return false;
        double d1 = y->peak - x->peak, d2 = z->peak - y->peak;
        if (fabs(d2 - d1) > 1e-9 * z->peak + 64) return false;
    }
    return true;
}

/* A long step's lines, from replays at m1, m1 + step, ...: a slot is
 * extended only once it grows linearly (a third replay checks it, and the
 * pair moves up a step while it does not: an interleaved warm-up can
 * outlast the first pair). Lines no other beats in value and growth both
 * are kept, by slot id. NULL when out of memory. */
static const replay_entry *long_step(const rp *r, int64_t m1, int64_t step)
{
    replay_key k;
    bool hit;
    replay_entry *e = entry_of(&k, key_of(r, -1, &k), &hit);
    if (hit) return e;
    slots *a = &bufs[0], *b = &bufs[1], *c = &bufs[2];
    replay(r, m1, a);
    replay(r, m1 + step, b);
    for (int tries = 0; tries < 8; tries++) {
        replay(r, m1 + 2 * step, c);
        bool lin = linear(a, b, c);
        slots *t = a;
        a = b, b = c, c = t;
        m1 += step;
        if (lin) break;
    }
    /* a and b are m1 and m1 + step: the slots offered in both, as lines */
    line *v = malloc(sizeof *v * (size_t)(a->n ? a->n : 1));
    if (!v) return NULL;
    int64_t n = 0;
    for (int64_t i = 0, j = 0; i < a->n && j < b->n;) {
        const slot *x = &a->v[i], *y = &b->v[j];
        if (x->id != y->id) {
            if (x->id < y->id) i++;
            else j++;
            continue;
        }
        line ln = {x->peak, y->peak - x->peak, x->held, y->held - x->held};
        bool beaten = false; /* by an earlier line (the first of equals is kept) */
        for (int64_t q = 0; q < n && !beaten; q++)
            beaten = v[q].peak >= ln.peak && v[q].slope >= ln.slope;
        if (!beaten) {
            int64_t w = 0; /* drop the earlier lines this one beats strictly */
            for (int64_t q = 0; q < n; q++)
                if (!(ln.peak >= v[q].peak && ln.slope >= v[q].slope && (ln.peak > v[q].peak || ln.slope > v[q].slope)))
                    v[w++] = v[q];
            n = w;
            v[n++] = ln;
        }
        i++, j++;
    }
    if (!e) {
        free(v);
        return NULL;
    }
    free(e->lines);
    *e = (replay_entry){.used = true, .key = k, .m0 = m1, .step = step, .nlines = n, .lines = v};
    return e;
}

/* The lowered template's figures, memoised per thread by what shapes the
 * template's visits (the model's shape, the layout's tp, cp, sp,
 * micro-batch, recompute; whether attention keeps its probabilities; ZeRO 2
 * and 3 with their shards, whose blocks and gathered weights are buffers of
 * the visits, while ZeRO 1's shards are made between them; fp32 or not): a
 * template's lowering costs some 40 us, and a search shares it among many
 * layouts. */
#define UNIT_KEY 28
#define UNIT_CACHE 16384
typedef struct unit_entry {
    bool used;
    int64_t key[UNIT_KEY];
    plc_unit_figures f;
    bool lowered;
} unit_entry;

/* false when the lowering refuses the template (buffers past any memory,
 * or a lowering bug) */
static bool unit_figures_cached(const plc_job *job, const plc_layout *l, plc_unit_figures *uf)
{
    static _Thread_local unit_entry *cache;
    const plc_model *m = &job->model;
    int64_t nzs = l->dp * l->cp, zero = nzs > 1 && l->zero >= 2 ? l->zero : 0;
    int64_t k[UNIT_KEY] = {m->hidden, m->ffn_hidden, m->heads, m->kv_heads, m->vocab, m->seq_len, m->arch,
                           m->positions, m->tie_embeddings, l->tp, l->cp, l->sp && l->tp > 1, l->micro_batch, zero,
                           zero ? nzs : 1, l->recompute, l->attention >= PLC_ATTN_FLASH1,
                           job->train.precision == PLC_PREC_FP32, plc_layout_ep(l), plc_layout_etp(l),
                           /* a mixture-of-experts layer's shape (compiler/lower/lower_moe.c) */
                           m->moe.experts, m->moe.top_k, m->moe.expert_ffn_hidden,
                           m->moe.shared_experts * m->moe.shared_ffn_hidden, (int64_t)(m->moe.capacity_factor * 1e6),
                           m->moe.router, m->moe.expert_bias, m->moe.router_groups};
    uint64_t h = hash_words(k, sizeof k);
    if (!cache) cache = calloc(UNIT_CACHE, sizeof *cache); /* one per thread, kept for its life */
    unit_entry *e = cache ? &cache[h % UNIT_CACHE] : NULL;
    if (e && e->used && memcmp(e->key, k, sizeof k) == 0) {
        *uf = e->f;
        return e->lowered;
    }
    char err[256];
    bool lowered = plc_lower_unit_figures(job, l, uf, err, sizeof err) == 0;
    if (!lowered) memset(uf, 0, sizeof *uf);
    if (e) e->used = true, memcpy(e->key, k, sizeof k), e->f = *uf, e->lowered = lowered;
    return lowered;
}

/* The figures of a layout that do not depend on the stage: one layer's, the
 * embedding's and the head's (the template's), ZeRO's block and shard sizes
 * (into f->r, f->p). */
static void figures(const plc_job *job, const plc_layout *l, figs *f)
{
    pm p = {0};
    rp r = {0};
    const plc_model *m = &job->model;
    plc_dtype_bytes d = plc_dtype_bytes_of(job);
    int64_t tp = l->tp, nzs = l->dp * l->cp;
    int zero = nzs > 1 ? (int)l->zero : 0;
    int64_t nz = zero ? nzs : 1;
    p.sp = l->sp && tp > 1;
    double R = (double)(l->micro_batch * (m->seq_len / l->cp));
    p.X = (p.sp ? R / (double)tp : R) * (double)m->hidden * d.act;
    p.zero2p = zero >= 2;

    /* one layer and the head, as the lowering makes them */
    plc_unit_figures uf;
    f->unlowered = !unit_figures_cached(job, l, &uf);
    unit_fig u = {.S = uf.layer_kept}; /* kept, with its output: the next layer's input */
    memcpy(u.fwd_peak, uf.fwd_peak, sizeof u.fwd_peak);
    memcpy(u.bwd_peak, uf.bwd_peak, sizeof u.bwd_peak);
    memcpy(u.bwd_acc, uf.bwd_acc, sizeof u.bwd_acc);
    r.tokens = uf.tokens;
    r.head_keep = uf.head_keep;
    r.head_peak = uf.head_peak;
    r.emb_peak = uf.embed_peak;
    r.emb_bwd_peak = uf.embed_bwd_peak;

    /* ZeRO's per-tensor sizes: a layer's gathered weights (3), its gradient
     * blocks and reduced shards (>= 2), its reduced shards (1) */
    int64_t first = plc_tensor_id(m, PLC_ROLE_ATTN_NORM, 0), per = plc_tensors_per_layer(m);
    for (int64_t i = 0; zero && i < per; i++) {
        double padded, chunk;
        block_of(m, first + i, tp, nz, &padded, &chunk);
        if (zero >= 3) r.layer_w += al(padded * d.weight);
        if (zero >= 2) u.grads += al(padded * 4.0) + al(chunk * 4.0), u.shards += al(chunk * 4.0);
        if (zero == 1) r.zero1_layer += al(chunk * 4.0);
    }
    r.u = u;
    { /* the head's, the embedding's: ZeRO >= 2 blocks, ZeRO 1 shards */
        int64_t ids[5] = {plc_tensor_id(m, PLC_ROLE_TOK_EMB, 0), plc_tensor_id(m, PLC_ROLE_POS_EMB, 0),
                          plc_tensor_id(m, PLC_ROLE_FINAL_NORM, 0), plc_tensor_id(m, PLC_ROLE_FINAL_NORM_B, 0),
                          m->tie_embeddings ? (l->pp > 1 ? plc_tensor_id(m, PLC_ROLE_TOK_EMB, 0) : -1)
                                            : plc_tensor_id(m, PLC_ROLE_LM_HEAD, 0)};
        for (int i = 0; i < 5; i++) {
            double padded, chunk;
            block_of(m, ids[i], tp, nz, &padded, &chunk);
            if (i < 2 && p.zero2p) r.emb_blocks += al(padded * 4.0), r.emb_shards += al(chunk * 4.0);
            if (i >= 2 && i < 4 && p.zero2p) r.head_blocks += al(padded * 4.0), r.head_shards += al(chunk * 4.0);
            if (zero == 1) *(i < 2 ? &r.zero1_emb : &r.zero1_head) += al(chunk * 4.0);
        }
        if (p.zero2p) { /* the head's weight: the output projection, or the tied embedding's read by the head */
            double W, c0;
            block_of(m, m->tie_embeddings ? ids[0] : ids[4], tp, nz, &W, &c0);
            r.head_blocks += al(W * 4.0), r.head_shards += al(c0 * 4.0);
        }
    }
    f->p = p;
    f->r = r;
    f->casts_zero = zero;
    f->nz = nz;
}

typedef struct figs_key {
    int64_t v[34];
} figs_key;

#define FIGS_CACHE 512
typedef struct figs_entry {
    bool used;
    figs_key key;
    figs f;
} figs_entry;

static void figures_cached(const plc_job *job, const plc_layout *l, figs *f)
{
    static _Thread_local figs_entry *cache;
    const plc_model *m = &job->model;
    plc_dtype_bytes d = plc_dtype_bytes_of(job);
    figs_key k;
    memset(&k, 0, sizeof k);
    int64_t nzs = l->dp * l->cp, zero = nzs > 1 ? l->zero : 0;
    int64_t v[34] = {m->hidden, m->ffn_hidden, m->heads, m->kv_heads, m->vocab, m->seq_len, m->layers, m->arch,
                     m->positions, m->tie_embeddings, l->tp, l->cp, l->sp, l->micro_batch, zero, zero ? nzs : 1,
                     l->recompute, l->attention, l->pp > 1, (int64_t)(d.act * 8), (int64_t)(d.weight * 8),
                     (int64_t)(d.fp8_weights * 8), l->schedule, 0,
                     /* the expert dimensions and an MoE layer's shape (compiler/lower/lower_moe.c) */
                     plc_layout_ep(l), plc_layout_etp(l), m->moe.experts, m->moe.top_k, m->moe.expert_ffn_hidden,
                     m->moe.shared_experts * m->moe.shared_ffn_hidden, (int64_t)(m->moe.capacity_factor * 1e6),
                     m->moe.router, m->moe.dense_layers, m->moe.moe_every};
    memcpy(k.v, v, sizeof v);
    uint64_t h = hash_words(&k, sizeof k);
    if (!cache) cache = calloc(FIGS_CACHE, sizeof *cache); /* one per thread, kept for its life */
    figs_entry *e = cache ? &cache[h % FIGS_CACHE] : NULL;
    if (e && e->used && memcmp(&e->key, &k, sizeof k) == 0) {
        *f = e->f;
    } else {
        figures(job, l, f);
        if (e) e->used = true, e->key = k, e->f = *f;
    }
    f->r.p = &f->p;
}


void plc_plrun_stage_memory(const plc_job *job, const plc_layout *l, int64_t stage, double out[PLC_MEM_COUNT])
{
    const plc_model *m = &job->model;
    plc_dtype_bytes d = plc_dtype_bytes_of(job);
    for (int k = 0; k < PLC_MEM_COUNT; k++) out[k] = 0;
    figs f;
    figures_cached(job, l, &f);
    if (f.unlowered) { /* no figures: the layout fits nowhere (finite: 0 x it is 0, not NaN) */
        out[PLC_MEM_TEMPORARIES] = 0x1p100;
        return;
    }
    int zero = f.casts_zero;
    int64_t nz = f.nz;
    plc_pipe_shape sh;
    int64_t M = job->train.global_batch / (l->dp * l->micro_batch);
    if (M < 1 || plc_pipe_shape_of(l->schedule, l->pp, l->vpp, m->layers, &sh)) return;
    rp r = f.r;
    r.sh = &sh;
    r.stage = stage;
    r.at_end = plc_pipe_send_lag(&sh, M) >= plc_pipe_units(&sh, M); /* messages held to the end of the step */
    /* The whole step is replayed when it is short. A longer one repeats
     * itself once the warm-up is over: the held forward state stops growing
     * (1F1B, interleaved) or grows by one unit per micro-batch (all forwards
     * first), and messages waited for at the end grow by a fixed amount per
     * micro-batch; so the peak of two shorter replays, far enough apart to be
     * past any change of where the peak lies, is extended linearly. */
    int64_t step = l->schedule == PLC_SCHED_INTERLEAVED ? l->pp : 1;
    int64_t big = (int64_t)1 << 20, w = plc_pipe_warmup(&sh, big, stage);
    bool saturates = w < big * sh.per_rank; /* 1F1B, interleaved: the held state stops growing */
    int64_t M1 = saturates ? (w + 1 + sh.per_rank - 1) / sh.per_rank + 2 : 4;
    M1 = (M1 + step - 1) / step * step;
    double dyn = 0, held = 0;
    const replay_entry *e = NULL;
    /* the short replays wait for their sends as the step does: all at the
     * end, or two units later each (else the whole step is replayed) */
    bool extends = r.at_end || (plc_pipe_send_lag(&sh, M1) == 2 && plc_pipe_send_lag(&sh, M1 + step) == 2 &&
                                plc_pipe_send_lag(&sh, M1 + 2 * step) == 2);
    if (M > M1 + 2 * step && !(saturates && !r.at_end) && extends) e = long_step(&r, M1, step);
    if (e && M >= e->m0) {
        double k = (double)(M - e->m0) / (double)e->step;
        for (int64_t i = 0; i < e->nlines; i++) {
            const line *x = &e->lines[i];
            double v = x->peak + k * x->slope;
            if (v > dyn) dyn = v, held = x->held + k * x->hslope;
        }
    } else { /* short, or past the warm-up the peak repeats */
        if (M > M1 + 2 * step && saturates && !r.at_end && extends) M = M1;
        short_step(&r, M, &dyn, &held);
    }

    /* the optimizer epilogue: ZeRO 1 keeps every reduced gradient shard
     * until AdamW reads it; ZeRO 1/2 in bf16 cast every shard before the
     * gathers */
    plc_stage_params spar;
    plc_stage_params_of(m, l->tp, l->pp, l->vpp, stage, &spar);
    double params = plc_stage_params_total(&spar);
    double epi = zero == 2 && d.act < 4 ? params / (double)nz * d.act : 0;
    double peak = fmax(dyn, epi);
    out[PLC_MEM_ACTIVATIONS] = held;
    out[PLC_MEM_TEMPORARIES] = peak - held;
}
