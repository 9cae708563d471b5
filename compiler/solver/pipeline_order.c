/* pipeline_order.c: chunks, owners and per-rank unit order of every pipeline
 * schedule (see solver.h). */
#include "compiler/solver/solver_int.h"
#include "common/layout_rules.h"

#include <stdlib.h>
#include <string.h>

int plc_pipe_shape_of(plc_schedule s, int64_t pp, int64_t vpp, int64_t layers, plc_pipe_shape *out)
{
    if (plc_schedule_splits(s)) { /* 1F1B's shape, its backwards split (plc_pipe_split_backward) */
        static const plc_pipe_split split[] = {PLC_SPLIT_ZB_H1, PLC_SPLIT_ZB_H2, PLC_SPLIT_ZB_V, PLC_SPLIT_DUALPIPE_V};
        if (plc_pipe_shape_of(PLC_SCHED_1F1B, pp, 1, layers, out)) return -1;
        return plc_pipe_split_backward(out, split[s - PLC_SCHED_ZB_H1]);
    }
    *out = (plc_pipe_shape){.schedule = s, .pp = pp, .vpp = 1, .layers = layers};
    if (pp < 1 || layers < 1) return -1;
    switch (s) {
    case PLC_SCHED_GPIPE:
    case PLC_SCHED_1F1B: out->nchunks = pp; break;
    case PLC_SCHED_INTERLEAVED:
        if (vpp < 1) return -1;
        out->vpp = vpp;
        out->nchunks = pp * vpp;
        out->looping = true;
        break;
    case PLC_SCHED_LAYERED: out->nchunks = layers; break;
    case PLC_SCHED_MODULAR: out->nchunks = layers; out->looping = true; break;
    default: return -1;
    }
    if (out->nchunks % pp) return -1;
    /* GPipe and 1F1B: one contiguous stage a rank, interleaved: vpp virtual
     * stages a rank, chunk c of plc_stage_layers(layers, nchunks, c) layers
     * (unequal where nchunks does not divide layers: rules PP_LAYERS and
     * VPP_LAYERS); the layer-major ones cut the layers into equal chunks */
    out->uneven = layers % out->nchunks != 0;
    if (out->uneven && (s == PLC_SCHED_LAYERED || s == PLC_SCHED_MODULAR || layers < out->nchunks)) return -1;
    out->per_rank = out->nchunks / pp;
    return 0;
}

int plc_pipe_split_backward(plc_pipe_shape *sh, plc_pipe_split split)
{
    if (sh->schedule != PLC_SCHED_1F1B || sh->split || split <= PLC_SPLIT_NONE || split > PLC_SPLIT_AUTO) return -1;
    if (split == PLC_SPLIT_ZB_V || split == PLC_SPLIT_DUALPIPE_V) {
        /* two chunks a rank, in a V: as many chunks as the layers take */
        if (sh->layers < 2 * sh->pp) return -1;
        sh->nchunks = 2 * sh->pp;
        sh->per_rank = 2;
        sh->uneven = sh->layers % sh->nchunks != 0;
    }
    sh->split = split;
    return 0;
}

int64_t plc_pipe_chunk_lo(const plc_pipe_shape *sh, int64_t c)
{
    return sh->uneven ? plc_stage_first_layer(sh->layers, sh->nchunks, c) : c * (sh->layers / sh->nchunks);
}

int64_t plc_pipe_chunk_hi(const plc_pipe_shape *sh, int64_t c)
{
    return sh->uneven ? plc_stage_first_layer(sh->layers, sh->nchunks, c) + plc_stage_layers(sh->layers, sh->nchunks, c)
                      : (c + 1) * (sh->layers / sh->nchunks);
}

int64_t plc_pipe_chunk_rank(const plc_pipe_shape *sh, int64_t c)
{
    if (sh->split == PLC_SPLIT_ZB_V || sh->split == PLC_SPLIT_DUALPIPE_V) return c < sh->pp ? c : 2 * sh->pp - 1 - c;
    return sh->looping ? c % sh->pp : c / sh->per_rank;
}

int64_t plc_pipe_warmup(const plc_pipe_shape *sh, int64_t M, int64_t r)
{
    int64_t total = M * sh->per_rank, w;
    switch (sh->schedule) {
    case PLC_SCHED_1F1B:
        /* zb_h2: 2(pp - r) - 1 forwards before the first B (solver.h) */
        w = sh->split == PLC_SPLIT_ZB_H2 ? 2 * (sh->pp - r) - 2
          : sh->split == PLC_SPLIT_ZB_V  ? 2 * sh->pp - 1 /* 2pp forwards, over both chunks, before the first B */
          : sh->split == PLC_SPLIT_DUALPIPE_V ? 2 * sh->pp - 1 /* 2(pp-r-1) + 2(r+1) */
                                         : sh->pp - r - 1;
        break;
    /* Megatron: (pp - r - 1) * 2 + (vpp - 1) * pp warm-up chunks */
    case PLC_SCHED_INTERLEAVED: w = (sh->pp - r - 1) * 2 + (sh->vpp - 1) * sh->pp; break;
    default: w = total; break; /* every forward before any backward */
    }
    return w < total ? w : total;
}

/* the rank's chunk index (0 .. vpp - 1) of its k-th forward in the
 * interleaved order: micro-batches in groups of pp, each group through the
 * rank's chunks in order */
static int64_t il_chunk_f(int64_t pp, int64_t vpp, int64_t k) { return (k % (pp * vpp)) / pp; }

/* split orders: the most layers forwarded and not yet through W, over the
 * rank's layers */
static double split_inflight(const plc_pipe_shape *sh, int64_t M, int64_t r)
{
    plc_pipe_unit *u = malloc(sizeof *u * (size_t)plc_pipe_units(sh, M));
    if (!u || plc_pipe_order(sh, M, r, u)) {
        free(u);
        return (double)M; /* every micro-batch: never below the truth */
    }
    int64_t held = 0, most = 0, mine = 0;
    for (int64_t c = 0; c < sh->nchunks; c++)
        if (plc_pipe_chunk_rank(sh, c) == r) mine += plc_pipe_chunk_hi(sh, c) - plc_pipe_chunk_lo(sh, c);
    for (int64_t k = 0, n = plc_pipe_units(sh, M); k < n; k++) {
        int64_t layers = plc_pipe_chunk_hi(sh, u[k].chunk) - plc_pipe_chunk_lo(sh, u[k].chunk);
        held += !u[k].bwd && !u[k].w ? layers : u[k].w ? -layers : 0;
        if (held > most) most = held;
    }
    free(u);
    return (double)most / (double)mine;
}

double plc_pipe_inflight(const plc_pipe_shape *sh, int64_t M, int64_t r)
{
    if (sh->split) return split_inflight(sh, M, r);
    int64_t total = M * sh->per_rank, held = plc_pipe_warmup(sh, M, r) + 1;
    if (held > total) held = total;
    if (!sh->uneven || sh->per_rank == 1) return (double)held / (double)sh->per_rank;
    /* unequal virtual stages (interleaved): the held forwards' layers over
     * the rank's, as many whole-rank micro-batches as hold as much */
    int64_t mine = 0, kept = 0;
    for (int64_t j = 0; j < sh->per_rank; j++) {
        int64_t c = j * sh->pp + r;
        mine += plc_pipe_chunk_hi(sh, c) - plc_pipe_chunk_lo(sh, c);
    }
    for (int64_t k = 0; k < held; k++) {
        int64_t c = il_chunk_f(sh->pp, sh->vpp, k) * sh->pp + r;
        kept += plc_pipe_chunk_hi(sh, c) - plc_pipe_chunk_lo(sh, c);
    }
    return (double)kept / (double)mine;
}

static void add(plc_pipe_unit *u, int64_t *n, int bwd, int64_t chunk, int64_t micro)
{
    u[*n] = (plc_pipe_unit){.bwd = (uint8_t)bwd, .chunk = (int32_t)chunk, .micro = (int32_t)micro};
    (*n)++;
}

static void add_w(plc_pipe_unit *u, int64_t *n, int64_t chunk, int64_t micro)
{
    u[*n] = (plc_pipe_unit){.w = 1, .chunk = (int32_t)chunk, .micro = (int32_t)micro};
    (*n)++;
}

/* ZB-V (solver.h): rank r's chunks r (down the V) and 2pp-1-r (up it);
 * fills the pipeline down and up the V, then alternates the two chunks'
 * forward-B-W, and drains with B's first, the W's last. M >= 2pp. */
static void zb_v_order(int64_t pp, int64_t M, int64_t r, plc_pipe_unit *u, int64_t *n)
{
    int64_t c0 = r, c1 = 2 * pp - 1 - r, f0 = 0, f1 = 0, b0 = 0, b1 = 0;
    for (int64_t i = 0; i < 2 * (pp - r) - 1; i++) add(u, n, 0, c0, f0++);
    for (int64_t i = 0; i < r; i++) {
        add(u, n, 0, c1, f1++);
        add(u, n, 0, c0, f0++);
    }
    for (int64_t i = 0; i < pp - r; i++) {
        add(u, n, 0, c1, f1++);
        add(u, n, 1, c1, b1);
        add_w(u, n, c1, b1++);
    }
    while (f1 < f0 || f0 < M) {
        if (f0 < M) add(u, n, 0, c0, f0++);
        add(u, n, 1, c0, b0);
        add_w(u, n, c0, b0++);
        add(u, n, 0, c1, f1++);
        add(u, n, 1, c1, b1);
        add_w(u, n, c1, b1++);
    }
    int64_t w0 = b0, w1 = b1;
    for (int64_t i = 0; i < r; i++) {
        add(u, n, 1, c0, b0++);
        add(u, n, 1, c1, b1++);
    }
    for (int64_t i = 0; i < pp - r; i++) {
        add(u, n, 1, c0, b0++);
        add_w(u, n, c0, w0++);
    }
    while (w1 < b1) add_w(u, n, c1, w1++);
    while (w0 < b0) add_w(u, n, c0, w0++);
}

/* DualPipe-V (solver.h): ZB-V's chunks, DeepSeek's DualPipeV order. The
 * W's of split backwards wait in a queue, first in, first out. */
typedef struct dpv {
    plc_pipe_unit *u;
    int64_t *n, chunk[2], f[2], b[2];
    plc_pipe_unit *wq; /* the deferred W's */
    int64_t wq_head, wq_tail;
} dpv;

static void dpv_f(dpv *d, int k) { add(d->u, d->n, 0, d->chunk[k], d->f[k]++); }

/* a backward of chunk k: B and its W at once, or B with its W deferred */
static void dpv_b(dpv *d, int k, bool split)
{
    add(d->u, d->n, 1, d->chunk[k], d->b[k]);
    if (split) d->wq[d->wq_tail++] = (plc_pipe_unit){.w = 1, .chunk = (int32_t)d->chunk[k], .micro = (int32_t)d->b[k]};
    else add_w(d->u, d->n, d->chunk[k], d->b[k]);
    d->b[k]++;
}

static void dpv_w(dpv *d) { d->u[(*d->n)++] = d->wq[d->wq_head++]; }

static void dualpipe_v_order(int64_t pp, int64_t M, int64_t r, plc_pipe_unit *u, int64_t *n, plc_pipe_unit *wq)
{
    dpv d = {.u = u, .n = n, .chunk = {r, 2 * pp - 1 - r}, .wq = wq};
    for (int64_t i = 0; i < 2 * (pp - r - 1); i++) dpv_f(&d, 0); /* forwards down the V */
    for (int64_t i = 0; i < r + 1; i++) dpv_f(&d, 0), dpv_f(&d, 1);
    for (int64_t i = 0; i < pp - r - 1; i++) { /* the first backwards up the V split, their W's filling in */
        dpv_b(&d, 1, true);
        dpv_w(&d);
        dpv_f(&d, 1);
    }
    for (int64_t i = 0; i < M - 2 * pp + r + 1; i++) { /* steady: F0 B1 F1 B0, whole backwards */
        dpv_f(&d, 0);
        dpv_b(&d, 1, false);
        dpv_f(&d, 1);
        dpv_b(&d, 0, false);
    }
    for (int64_t i = 0; i < pp - r - 1; i++) {
        dpv_b(&d, 1, false);
        dpv_f(&d, 1);
        dpv_b(&d, 0, false);
    }
    /* the drain: backwards split from its middle on (odd ranks one B earlier) */
    bool split = false;
    for (int64_t i = 0, k = r + 1; i < k; i++) {
        if (i == k / 2 && r % 2 == 1) split = true;
        dpv_b(&d, 1, split);
        if (i == k / 2 && r % 2 == 0) split = true;
        dpv_b(&d, 0, split);
    }
    for (int64_t i = 0; i < pp - r - 1; i++) {
        dpv_w(&d);
        dpv_b(&d, 0, true);
    }
    while (d.wq_head < d.wq_tail) dpv_w(&d);
}

/* The zero-bubble orders of one chunk a rank (solver.h): w + 1 forwards,
 * then every B followed by the next forward while any is left and the W of
 * the micro-batch `defer` B's back (zb_h1: that W before the forward, zb_h2
 * after it); the deferred W's at the end. */
static void split_order(int64_t M, int64_t w, int64_t defer, bool w_first, int64_t chunk, plc_pipe_unit *u,
                        int64_t *n)
{
    int64_t f = 0, wd = 0;
    for (; f < w + 1 && f < M; f++) add(u, n, 0, chunk, f);
    for (int64_t b = 0; b < M; b++) {
        add(u, n, 1, chunk, b);
        if (!w_first && f < M) add(u, n, 0, chunk, f++);
        for (; wd <= b - defer; wd++) add_w(u, n, chunk, wd);
        if (w_first && f < M) add(u, n, 0, chunk, f++);
    }
    for (; wd < M; wd++) add_w(u, n, chunk, wd);
}

int plc_pipe_order(const plc_pipe_shape *sh, int64_t M, int64_t r, plc_pipe_unit *u)
{
    int64_t pp = sh->pp, per = sh->per_rank, n = 0;
    /* interleaved groups micro-batches by pp (rule INTERLEAVED_MICRO) */
    if (M < 1 || r < 0 || r >= pp || (sh->schedule == PLC_SCHED_INTERLEAVED && M % pp)) return -1;
    if (sh->split == PLC_SPLIT_AUTO) return -1; /* built from op times: plc_sched_zb_auto */
    if (sh->split == PLC_SPLIT_ZB_V) {
        if (M < 2 * pp) return -1; /* the V's fill and drain need 2pp micro-batches */
        zb_v_order(pp, M, r, u, &n);
        return 0;
    }
    if (sh->split == PLC_SPLIT_DUALPIPE_V) {
        if (M < 2 * pp - 1) return -1;
        plc_pipe_unit *wq = malloc(sizeof *wq * (size_t)(2 * M));
        if (!wq) return -1;
        dualpipe_v_order(pp, M, r, u, &n, wq);
        free(wq);
        return 0;
    }
    /* this rank's j-th chunk, in ascending order */
#define MINE(j) (sh->looping ? (j) * pp + r : r * per + (j))
    int64_t w = plc_pipe_warmup(sh, M, r);
    switch (sh->schedule) {
    case PLC_SCHED_1F1B:
        if (sh->split) {
            bool h1 = sh->split == PLC_SPLIT_ZB_H1;
            split_order(M, w, h1 ? r : 2 * r, h1, MINE(0), u, &n);
            break;
        }
        for (int64_t m = 0; m < w; m++) add(u, &n, 0, MINE(0), m);
        for (int64_t i = 0; i < M - w; i++) {
            add(u, &n, 0, MINE(0), w + i);
            add(u, &n, 1, MINE(0), i);
        }
        for (int64_t m = M - w; m < M; m++) add(u, &n, 1, MINE(0), m);
        break;
    case PLC_SCHED_INTERLEAVED: {
        /* the k-th forward (backward) of the rank: micro-batches in groups of
         * pp, each group through the rank's chunks in order (reverse order
         * for backwards) */
        int64_t vpp = per, total = M * vpp;
#define IL_MICRO(k) (((k) / (pp * vpp)) * pp + (k) % pp)
#define IL_CHUNK_F(k) il_chunk_f(pp, vpp, k)
#define IL_CHUNK_B(k) (vpp - 1 - IL_CHUNK_F(k))
        for (int64_t i = 0; i < w; i++) add(u, &n, 0, MINE(IL_CHUNK_F(i)), IL_MICRO(i));
        for (int64_t i = 0; i < total - w; i++) {
            add(u, &n, 0, MINE(IL_CHUNK_F(w + i)), IL_MICRO(w + i));
            add(u, &n, 1, MINE(IL_CHUNK_B(i)), IL_MICRO(i));
        }
        for (int64_t i = total - w; i < total; i++) add(u, &n, 1, MINE(IL_CHUNK_B(i)), IL_MICRO(i));
#undef IL_MICRO
#undef IL_CHUNK_F
#undef IL_CHUNK_B
        break;
    }
    case PLC_SCHED_GPIPE:
    case PLC_SCHED_LAYERED:
    case PLC_SCHED_MODULAR:
    default:
        /* all forwards, chunk by chunk (layer-major), then all backwards */
        for (int64_t j = 0; j < per; j++)
            for (int64_t m = 0; m < M; m++) add(u, &n, 0, MINE(j), m);
        for (int64_t j = per - 1; j >= 0; j--)
            for (int64_t m = 0; m < M; m++) add(u, &n, 1, MINE(j), m);
        break;
    }
#undef MINE
    return 0;
}

/* the visits of a unit, in order (solver.h): forward [embedding] lo .. hi-1
 * [head]; backward [head] hi-1 .. lo [embedding] */
int64_t plc_pipe_visits(const plc_pipe_shape *sh, const plc_pipe_unit *u)
{
    int64_t c = u->chunk;
    return plc_pipe_chunk_hi(sh, c) - plc_pipe_chunk_lo(sh, c) + (c == 0) + (c == sh->nchunks - 1);
}

int64_t plc_pipe_visit(const plc_pipe_shape *sh, const plc_pipe_unit *u, int64_t i, bool *grads)
{
    int64_t c = u->chunk, lo = plc_pipe_chunk_lo(sh, c), hi = plc_pipe_chunk_hi(sh, c);
    bool emb = c == 0, head = c == sh->nchunks - 1;
    /* a W visits what its B does and makes the weight gradients B leaves */
    bool back = u->bwd || u->w, makes = u->w || (u->bwd && !sh->split);
    int64_t first = back ? head : emb; /* the visit of layer hi-1 (backward) or lo (forward) */
    if (i < first) {
        *grads = makes; /* the head's final norm makes gradients; the embedding's forward none */
        return back ? sh->layers : -1;
    }
    if (i - first < hi - lo) {
        *grads = makes;
        return back ? hi - 1 - (i - first) : lo + (i - first);
    }
    *grads = !back || makes; /* the head's forward (the loss and its backward), the embedding's backward */
    return back ? -1 : sh->layers;
}

bool plc_pipe_grads_later(const plc_pipe_shape *sh, const plc_pipe_unit *order, int64_t total, int64_t k, int64_t i)
{
    bool grads;
    int64_t key = plc_pipe_visit(sh, &order[k], i, &grads);
    for (i++; k < total; k++, i = 0)
        for (int64_t n = plc_pipe_visits(sh, &order[k]); i < n; i++) {
            if (plc_pipe_visit(sh, &order[k], i, &grads) != key) return false;
            if (grads) return true;
        }
    return false;
}

/* ---- when a rank waits for its sends ----------------------------------- */

/* the message unit u of rank r receives from another rank: its id (the
 * receiving unit), or -1 */
static int64_t msg_in(const plc_pipe_shape *sh, int64_t M, int64_t r, const plc_pipe_unit *u)
{
    if (u->w) return -1; /* a W sends and receives nothing */
    int64_t c = u->chunk, from = u->bwd ? c + 1 : c - 1;
    if (from < 0 || from >= sh->nchunks || plc_pipe_chunk_rank(sh, from) == r) return -1;
    return ((int64_t)u->bwd * sh->nchunks + c) * M + u->micro;
}

/* the message unit u of rank r sends to another rank, or -1 */
static int64_t msg_out(const plc_pipe_shape *sh, int64_t M, int64_t r, const plc_pipe_unit *u)
{
    if (u->w) return -1;
    int64_t c = u->chunk, to = u->bwd ? c - 1 : c + 1;
    if (to < 0 || to >= sh->nchunks || plc_pipe_chunk_rank(sh, to) == r) return -1;
    return ((int64_t)u->bwd * sh->nchunks + to) * M + u->micro;
}

/* Runs every rank's units with sends waited for lag units after they are
 * posted (at the start of unit k + lag; the rest at the end of the step),
 * receives posted one unit ahead and waited for when their unit starts;
 * a send completes only once its receive is posted. Returns whether every
 * rank finishes (no rank waits forever). */
static bool sends_finish(const plc_pipe_shape *sh, int64_t M, int64_t lag, plc_pipe_unit *const *order, int64_t n,
                         uint8_t *state, int64_t *pos)
{
    int64_t pp = sh->pp, nmsg = 2 * sh->nchunks * M;
    enum { SENT = 1, POSTED = 2 };
    memset(state, 0, (size_t)nmsg);
    for (int64_t r = 0; r < pp; r++) {
        pos[r] = 0;
        int64_t x = n ? msg_in(sh, M, r, &order[r][0]) : -1;
        if (x >= 0) state[x] |= POSTED;
    }
    for (bool moved = true; moved;) {
        moved = false;
        for (int64_t r = 0; r < pp; r++)
            for (;;) {
                int64_t p = pos[r];
                if (p > n) break;
                if (p == n) { /* the end of the step: every send not yet waited for */
                    bool done = true;
                    for (int64_t k = n - lag > 0 ? n - lag : 0; k < n && done; k++) {
                        int64_t x = msg_out(sh, M, r, &order[r][k]);
                        if (x >= 0 && !(state[x] & POSTED)) done = false;
                    }
                    if (!done) break;
                    pos[r] = n + 1, moved = true;
                    break;
                }
                int64_t old = p - lag >= 0 ? msg_out(sh, M, r, &order[r][p - lag]) : -1;
                int64_t in = msg_in(sh, M, r, &order[r][p]);
                if ((old >= 0 && !(state[old] & POSTED)) || (in >= 0 && !(state[in] & SENT))) break;
                int64_t next = p + 1 < n ? msg_in(sh, M, r, &order[r][p + 1]) : -1;
                if (next >= 0) state[next] |= POSTED;
                int64_t out = msg_out(sh, M, r, &order[r][p]);
                if (out >= 0) state[out] |= SENT;
                pos[r] = p + 1, moved = true;
            }
    }
    for (int64_t r = 0; r < pp; r++)
        if (pos[r] != n + 1) return false;
    return true;
}

int64_t plc_pipe_send_lag_run(const plc_pipe_shape *sh, int64_t M)
{
    int64_t n = plc_pipe_units(sh, M), pp = sh->pp;
    if (n <= 2) return 2;
    plc_pipe_unit **order = calloc((size_t)pp, sizeof *order);
    uint8_t *state = malloc((size_t)(2 * sh->nchunks * M));
    int64_t *pos = malloc(sizeof *pos * (size_t)pp), lag = -1;
    bool ok = order && state && pos;
    for (int64_t r = 0; ok && r < pp; r++) {
        order[r] = malloc(sizeof **order * (size_t)n);
        ok = order[r] && plc_pipe_order(sh, M, r, order[r]) == 0;
    }
    /* two units if every rank finishes so, else the end of the step: a
     * longer lag finishes where the receivers take their messages a sweep
     * of the micro-batches later (modular on a longer step), but the
     * senders then stall until those receives are posted */
    if (ok) lag = sends_finish(sh, M, 2, order, n, state, pos) ? 2 : n;
    for (int64_t r = 0; order && r < pp; r++) free(order[r]);
    free(order), free(state), free(pos);
    return lag;
}

/* a step longer than this is not run unit by unit (a multiple of pp, as
 * interleaved groups micro-batches by pp) */
#define LAG_STEP(pp) (8 * (pp))
#define LAG_MEMO 1024

typedef struct lag_memo {
    int64_t schedule, split, pp, nchunks, M, lag; /* lag 0: unused */
} lag_memo;

int64_t plc_pipe_send_lag(const plc_pipe_shape *sh, int64_t M)
{
    int64_t n = plc_pipe_units(sh, M), pp = sh->pp;
    if (n <= 2) return 2;
    /* A longer step repeats the units of a shorter one: a lag of 2 that
     * holds over LAG_STEP micro-batches holds over more (tests/unit/
     * test_solver_time.c runs steps to 32 pp), one that does not holds over
     * none longer. The work stays O(1) in M. */
    if (M > LAG_STEP(pp)) return plc_pipe_send_lag(sh, LAG_STEP(pp)) == 2 ? 2 : n;
    /* the search asks for few shapes many times: remembered per thread */
    static _Thread_local lag_memo memo[LAG_MEMO];
    uint64_t h = ((((((uint64_t)sh->schedule * 4u + (uint64_t)sh->split) * 0x9E3779B97F4A7C15ull) ^ (uint64_t)pp) * 0x9E3779B97F4A7C15ull ^
                   (uint64_t)sh->nchunks) * 0x9E3779B97F4A7C15ull ^ (uint64_t)M) * 0x9E3779B97F4A7C15ull;
    lag_memo *e = &memo[(h >> 32) % LAG_MEMO];
    if (e->lag && e->schedule == sh->schedule && e->split == sh->split && e->pp == pp && e->nchunks == sh->nchunks &&
        e->M == M)
        return e->lag;
    int64_t lag = plc_pipe_send_lag_run(sh, M);
    if (lag < 0) return n; /* out of memory: the end of the step, always safe */
    *e = (lag_memo){sh->schedule, sh->split, pp, sh->nchunks, M, lag};
    return lag;
}
