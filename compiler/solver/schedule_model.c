/* schedule_model.c: pipeline schedules as per-rank orders of work units,
 * simulated to find the bubble; in-flight micro-batches per stage; the
 * zero-bubble orders built from op times (ZB-1p, ZB-2p).
 *
 * The chunks, their owners and each rank's order of work units come from
 * compiler/solver/solver.h, the same generator the lowering uses. A unit is
 * a forward, a backward (whole, or the B of a split one) or a W; each takes
 * its chunk's time as given, a message between ranks p2p more. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/solver/solver_int.h"


double plc_sched_inflight(plc_schedule s, int64_t pp, int64_t vpp, int64_t layers, int64_t micro, int64_t stage)
{
    plc_pipe_shape sh;
    if (plc_pipe_shape_of(s, pp, vpp, layers, &sh)) return (double)micro;
    return plc_pipe_inflight(&sh, micro, stage);
}

/* ---- simulation ----------------------------------------------------------- */

typedef struct sim {
    int64_t nchunks, micro;
    int32_t *chunk_rank;
    double *done[3];       /* F, B, W: [chunk * micro + mb], < 0 while not done */
    plc_pipe_unit **order; /* per rank, from plc_pipe_order */
    int64_t *next;
} sim;

/* the unit's slot in done[]: 0 forward, 1 backward (B or whole), 2 W */
static int kind_of(plc_pipe_unit u) { return u.w ? 2 : u.bwd ? 1 : 0; }

/* When unit u of rank r may start: when its inputs are done (the previous
 * chunk's forward, the next chunk's B or whole backward, p2p later across
 * ranks; its own forward; a W its own B) and the rank is free; -1 while an
 * input is not done. */
static double ready_at(const sim *S, plc_pipe_unit u, int64_t r, double free_at, double p2p)
{
    int64_t cell = (int64_t)u.chunk * S->micro + u.micro;
    double ready = free_at, d;
    switch (kind_of(u)) {
    case 0:
        if (u.chunk == 0) return ready;
        d = S->done[0][cell - S->micro];
        if (d < 0) return -1.0;
        if (S->chunk_rank[u.chunk - 1] != r) d += p2p;
        return d > ready ? d : ready;
    case 1:
        d = S->done[0][cell];
        if (d < 0) return -1.0;
        if (d > ready) ready = d;
        if (u.chunk == S->nchunks - 1) return ready;
        d = S->done[1][cell + S->micro];
        if (d < 0) return -1.0;
        if (S->chunk_rank[u.chunk + 1] != r) d += p2p;
        return d > ready ? d : ready;
    default:
        d = S->done[1][cell];
        if (d < 0) return -1.0;
        return d > ready ? d : ready;
    }
}

/* every rank's units in the order given (pp * plc_pipe_units each, rank by
 * rank), or, given NULL, in plc_pipe_order's */
static int simulate_orders(const plc_pipe_shape *sh, int64_t micro, const plc_pipe_unit *given, const double *t_f,
                           const double *t_b, const double *t_w, double p2p, plc_sched_sim *out)
{
    memset(out, 0, sizeof *out);
    int64_t pp = sh->pp;
    if (micro < 1 || pp < 1) return -1;
    sim S = {.micro = micro, .nchunks = sh->nchunks};
    int64_t cells = S.nchunks * micro, per_rank = plc_pipe_units(sh, micro);
    int kinds = sh->split ? 3 : 2;
    S.chunk_rank = calloc((size_t)S.nchunks, sizeof *S.chunk_rank);
    for (int k = 0; k < kinds; k++) S.done[k] = malloc((size_t)cells * sizeof *S.done[k]);
    S.order = calloc((size_t)pp, sizeof *S.order);
    S.next = calloc((size_t)pp, sizeof *S.next);
    plc_pipe_unit *pool = malloc((size_t)(pp * per_rank) * sizeof *pool);
    double *free_at = calloc((size_t)pp, sizeof *free_at);
    double *start = malloc((size_t)pp * sizeof *start);
    double *busy = calloc((size_t)pp, sizeof *busy);
    int rc = -1;
    if (!S.chunk_rank || !S.done[0] || !S.done[1] || (sh->split && !S.done[2]) || !S.order || !S.next || !pool ||
        !free_at || !start || !busy)
        goto done;
    for (int64_t r = 0; r < pp; r++) {
        S.order[r] = pool + r * per_rank;
        start[r] = -1.0;
        if (given) memcpy(S.order[r], given + r * per_rank, sizeof *pool * (size_t)per_rank);
        else if (plc_pipe_order(sh, micro, r, S.order[r])) goto done;
    }
    for (int64_t c = 0; c < S.nchunks; c++) S.chunk_rank[c] = (int32_t)plc_pipe_chunk_rank(sh, c);
    for (int k = 0; k < kinds; k++)
        for (int64_t i = 0; i < cells; i++) S.done[k][i] = -1.0;

    int64_t remaining = pp * per_rank;
    while (remaining > 0) {
        int64_t progress = 0;
        for (int64_t r = 0; r < pp; r++) {
            while (S.next[r] < per_rank) {
                plc_pipe_unit u = S.order[r][S.next[r]];
                double ready = ready_at(&S, u, r, free_at[r], p2p);
                if (ready < 0) break;
                int kind = kind_of(u);
                double t = (kind == 0 ? t_f : kind == 1 ? t_b : t_w)[u.chunk];
                if (start[r] < 0) start[r] = ready;
                S.done[kind][(int64_t)u.chunk * micro + u.micro] = ready + t;
                free_at[r] = ready + t;
                busy[r] += t;
                S.next[r]++;
                remaining--;
                progress++;
            }
        }
        if (progress == 0) goto done; /* an order that deadlocks: a bug, reported */
    }
    double makespan = 0, span = 0, bmax = 0, bsum = 0;
    for (int64_t r = 0; r < pp; r++) {
        if (free_at[r] > makespan) makespan = free_at[r];
        if (free_at[r] - start[r] > span) span = free_at[r] - start[r];
        if (busy[r] > bmax) bmax = busy[r];
        bsum += busy[r];
    }
    out->makespan = makespan;
    out->span_max = span;
    out->busy_max = bmax;
    out->busy_mean = bsum / (double)pp;
    out->units = pp * per_rank;
    rc = 0;
done:
    free(S.chunk_rank);
    for (int k = 0; k < 3; k++) free(S.done[k]);
    free(S.order); free(S.next); free(pool); free(free_at); free(start); free(busy);
    return rc;
}

int plc_sched_simulate_shape(const plc_pipe_shape *sh, int64_t micro, const double *t_f, const double *t_b,
                             const double *t_w, double p2p, plc_sched_sim *out)
{
    return simulate_orders(sh, micro, NULL, t_f, t_b, t_w, p2p, out);
}

/* ---- zero-bubble orders built from op times --------------------------------- */

#define NEVER 1e300

typedef struct zb_rank {
    int64_t nf, nb, nw;    /* F, B, W placed so far (each in micro-batch order) */
    double free;           /* when the rank is next free */
    bool blocked;          /* waits on a rank that has not placed its unit yet */
} zb_rank;

/* rank s's next F and B: when each can start (a lower bound where the
 * unit it waits for is not placed yet, *known false), NEVER when none is
 * left or (F) the memory limit holds it back */
static double zb_ready_f(const zb_rank *R, const double *df, int64_t s, int64_t M, int64_t limit, double tf_prev,
                         double p2p, bool *known)
{
    const zb_rank *z = &R[s];
    *known = true;
    if (z->nf >= M || z->nf - z->nw >= limit) return NEVER;
    if (s == 0) return 0.0;
    if (R[s - 1].nf > z->nf) return df[(s - 1) * M + z->nf] + p2p;
    *known = false;
    return R[s - 1].free + tf_prev + p2p;
}

static double zb_ready_b(const zb_rank *R, const double *df, const double *db, int64_t s, int64_t pp, int64_t M,
                         double tb_next, double p2p, bool *known)
{
    const zb_rank *z = &R[s];
    *known = true;
    if (z->nb >= M || z->nb >= z->nf) return NEVER; /* its own forward first */
    double own = df[s * M + z->nb];
    if (s == pp - 1) return own;
    if (R[s + 1].nb > z->nb) {
        double d = db[(s + 1) * M + z->nb] + p2p;
        return d > own ? d : own;
    }
    *known = false;
    double lb = R[s + 1].free + tb_next + p2p;
    return lb > own ? lb : own;
}

/* One greedy order (plc_sched_zb_auto): a W fills a gap of at least gap x
 * its time. 0, or -1 when the ranks wait on each other (no order). */
static int zb_greedy(int64_t pp, int64_t M, int64_t limit, double gap, const double *t_f, const double *t_b,
                     const double *t_w, double p2p, zb_rank *R, double *df, double *db, plc_pipe_unit *order)
{
    int64_t per = 3 * M;
    memset(R, 0, sizeof *R * (size_t)pp);
    for (int64_t placed = 0; placed < pp * per;) {
        int64_t s = -1;
        for (int64_t q = 0; q < pp; q++)
            if (!R[q].blocked && R[q].nw < M && (s < 0 || R[q].free < R[s].free)) s = q;
        if (s < 0) return -1; /* every rank waits on another */
        zb_rank *z = &R[s];
        double t = z->free;
        bool fk, bk;
        double rf = zb_ready_f(R, df, s, M, limit, s > 0 ? t_f[s - 1] : 0.0, p2p, &fk);
        double rb = zb_ready_b(R, df, db, s, pp, M, s < pp - 1 ? t_b[s + 1] : 0.0, p2p, &bk);
        bool w_left = z->nw < z->nb, f_held = z->nf < M && z->nf - z->nw >= limit;
        double next = rf < rb ? rf : rb;
        int kind;
        if (bk && rb <= t) kind = 1;      /* B first: the stage before waits for it */
        else if (fk && rf <= t) kind = 0; /* then F, within the memory limit */
        else if (w_left && (next >= t + gap * t_w[s] || f_held)) kind = 2; /* W fills a gap, or frees memory */
        else if (next < NEVER && next > t) {
            z->free = next; /* idle until the earliest it can go on */
            continue;
        } else {
            z->blocked = true;
            continue;
        }
        int64_t pos = z->nf + z->nb + z->nw, j = kind == 0 ? z->nf++ : kind == 1 ? z->nb++ : z->nw++;
        double dur = (kind == 0 ? t_f : kind == 1 ? t_b : t_w)[s];
        if (kind == 0) df[s * M + j] = t + dur;
        if (kind == 1) db[s * M + j] = t + dur;
        order[s * per + pos] = (plc_pipe_unit){.bwd = (uint8_t)(kind == 1), .w = (uint8_t)(kind == 2),
                                               .chunk = (int32_t)s, .micro = (int32_t)j};
        z->free = t + dur;
        for (int64_t q = 0; q < pp; q++) R[q].blocked = false;
        placed++;
    }
    return 0;
}

/* the most micro-batches any rank holds forwarded and not through W */
static int64_t zb_peak(const plc_pipe_unit *order, int64_t pp, int64_t per)
{
    int64_t most = 0;
    for (int64_t q = 0; q < pp; q++)
        for (int64_t k = 0, held = 0; k < per; k++) {
            held += order[q * per + k].w ? -1 : !order[q * per + k].bwd;
            if (held > most) most = held;
        }
    return most;
}

int plc_sched_zb_auto(int64_t pp, int64_t M, int64_t limit, const double *t_f, const double *t_b, const double *t_w,
                      double p2p, plc_pipe_unit *order, plc_sched_sim *out)
{
    memset(out, 0, sizeof *out);
    plc_pipe_shape sh;
    if (M < 1 || limit < 1 || plc_pipe_shape_of(PLC_SCHED_1F1B, pp, 1, pp, &sh) ||
        plc_pipe_split_backward(&sh, PLC_SPLIT_AUTO))
        return -1;
    int64_t per = plc_pipe_units(&sh, M);
    zb_rank *R = calloc((size_t)pp, sizeof *R);
    double *df = malloc(sizeof *df * (size_t)(pp * M)), *db = malloc(sizeof *db * (size_t)(pp * M));
    plc_pipe_unit *cand = malloc(sizeof *cand * (size_t)(pp * per));
    int rc = -1;
    if (!R || !df || !db || !cand) goto done;
    /* the candidates: the greedy order with a W filling gaps of its whole
     * time, half of it, any; the handcrafted orders within the limit
     * (zb_h1 holds pp, zb_h2 2 pp). The shortest span wins. */
    static const double gaps[] = {1.0, 0.5, 0.0};
    static const plc_pipe_split hand[] = {PLC_SPLIT_ZB_H1, PLC_SPLIT_ZB_H2};
    int ncand = (int)(sizeof gaps / sizeof gaps[0] + sizeof hand / sizeof hand[0]);
    for (int i = 0; i < ncand; i++) {
        int g = (int)(sizeof gaps / sizeof gaps[0]);
        if (i < g) {
            if (zb_greedy(pp, M, limit, gaps[i], t_f, t_b, t_w, p2p, R, df, db, cand)) continue;
        } else {
            plc_pipe_shape hs;
            if (plc_pipe_shape_of(PLC_SCHED_1F1B, pp, 1, pp, &hs) || plc_pipe_split_backward(&hs, hand[i - g])) continue;
            bool ok = true;
            for (int64_t q = 0; q < pp && ok; q++) ok = plc_pipe_order(&hs, M, q, cand + q * per) == 0;
            if (!ok) continue;
        }
        if (zb_peak(cand, pp, per) > limit) continue;
        plc_sched_sim r;
        if (simulate_orders(&sh, M, cand, t_f, t_b, t_w, p2p, &r)) continue;
        if (rc == 0 && (r.span_max > out->span_max || (r.span_max == out->span_max && r.makespan >= out->makespan)))
            continue;
        *out = r;
        memcpy(order, cand, sizeof *cand * (size_t)(pp * per));
        rc = 0;
    }
done:
    free(R);
    free(df);
    free(db);
    free(cand);
    return rc;
}

int plc_sched_simulate(plc_schedule s, int64_t pp, int64_t vpp, int64_t layers, int64_t micro,
                       double tf, double tb, double first_extra, double last_extra,
                       double p2p, plc_sched_sim *out)
{
    memset(out, 0, sizeof *out);
    plc_pipe_shape sh;
    if (micro < 1 || plc_pipe_shape_of(s, pp, vpp, layers, &sh)) return -1;
    double *t_f = calloc((size_t)sh.nchunks, sizeof *t_f), *t_b = calloc((size_t)sh.nchunks, sizeof *t_b);
    double *t_w = sh.split ? calloc((size_t)sh.nchunks, sizeof *t_w) : NULL;
    int rc = -1;
    if (t_f && t_b && (t_w || !sh.split)) {
        for (int64_t c = 0; c < sh.nchunks; c++) {
            double n = (double)(plc_pipe_chunk_hi(&sh, c) - plc_pipe_chunk_lo(&sh, c)); /* its layers */
            t_f[c] = tf * n;
            t_b[c] = tb * n;
            /* a split backward: the weight-gradient GEMMs are half of a
             * layer's backward GEMMs (W); the embedding's and the head's
             * backward stay with B below */
            if (t_w) t_w[c] = t_b[c] / 2.0, t_b[c] -= t_w[c];
        }
        /* embedding and head: on the first and last chunk */
        t_f[0] += first_extra / 3.0;
        t_b[0] += first_extra * 2.0 / 3.0;
        t_f[sh.nchunks - 1] += last_extra / 3.0;
        t_b[sh.nchunks - 1] += last_extra * 2.0 / 3.0;
        rc = plc_sched_simulate_shape(&sh, micro, t_f, t_b, t_w, p2p, out);
    }
    free(t_f);
    free(t_b);
    free(t_w);
    return rc;
}

/* ---- layer-major schedules: the makespan without a unit-level simulation --- */

/* A rank running one chunk (one layer) for all m micro-batches sees its
 * inputs as a stream: the first at `first`, then one every `gap` (the
 * producer's pace). It starts when both it and the first input are there,
 * runs units of `unit` seconds, never ahead of its inputs, and hands its
 * outputs on as a stream of the same form (the mean spacing). */
typedef struct stream { double first, gap; } stream;

/* fmax is a libm call here (no -ffast-math); the walk is the search's hot
 * path and its figures are never NaN */
static inline double max2(double a, double b) { return a > b ? a : b; }

static stream run_chunk(double *free_at, stream in, double m, double unit)
{
    double start = max2(*free_at, in.first);
    double last = max2(start + m * unit, in.first + (m - 1.0) * in.gap + unit);
    *free_at = last;
    stream out = {start + unit, m > 1.0 ? (last - (start + unit)) / (m - 1.0) : 0.0};
    return out;
}

/* State of the walk after a round of layers: every rank's free time and the
 * stream handed on. */
typedef struct walk {
    double *free_at;
    int64_t pp;
    stream in;
} walk;

/* Once a whole round (one layer on every rank) shifts the state by the
 * same amount everywhere, with the same spacing, every later round of
 * plain layers does too (the walk is a max-plus map: shifting its input
 * shifts its output): returns that shift, or -1. */
static double uniform_shift(const walk *w, const double *before, stream in_before)
{
    double shift = w->in.first - in_before.first;
    double tol = 1e-12 * (fabs(w->in.first) + 1e-30);
    if (fabs(w->in.gap - in_before.gap) > tol) return -1.0;
    for (int64_t r = 0; r < w->pp; r++)
        if (fabs((w->free_at[r] - before[r]) - shift) > tol) return -1.0;
    return shift;
}

/* Layer-major schedules run every micro-batch through a layer before the
 * next layer (layered: contiguous stages; modular: layer i on rank i mod
 * pp), backward in reverse. Walking the layers in order, each one is a
 * stream through its rank; runs of identical work are skipped once they
 * repeat (layered: a rank's layers after its first run back to back;
 * modular: rounds after the pipeline's pace is set), so the cost is
 * O(pp) rounds, not O(layers x micro-batches) units as in the unit-level
 * simulation (plc_sched_simulate, which the unit tests compare it with). */
double plc_sched_layer_major_makespan(plc_schedule s, int64_t pp, int64_t layers, int64_t micro, double tf,
                                      double tb, double first_extra, double last_extra, double p2p)
{
    double m = (double)micro;
    if (pp <= 1 || layers % pp || pp > PLC_SCHED_MAX_RANKS)
        return m * ((double)layers * (tf + tb) + first_extra + last_extra); /* one rank */
    double free_at[PLC_SCHED_MAX_RANKS] = {0}, before[PLC_SCHED_MAX_RANKS];
    int64_t per = layers / pp;
    bool layered = s == PLC_SCHED_LAYERED;
    walk w = {free_at, pp, {0.0, 0.0}};
    for (int dir = 0; dir < 2; dir++) { /* forward, then backward from the last layer */
        double t = dir == 0 ? tf : tb;
        double share = dir == 0 ? 1.0 / 3.0 : 2.0 / 3.0; /* of the extras, as the simulator */
        w.in = (stream){0.0, 0.0}; /* the data (forward) or the loss (backward): all there */
        int64_t prev = -1;
        stream in_before = w.in;
        for (int64_t i = 0; i < layers; i++) {
            int64_t l = dir == 0 ? i : layers - 1 - i;
            int64_t r = layered ? l / per : l % pp;
            bool plain = l != 0 && l != layers - 1;
            if (layered && plain && prev == r) {
                /* the rest of this rank's block: its own outputs, back to back */
                int64_t left = 0; /* plain layers left on this rank after this one */
                while (i + 1 + left < layers) {
                    int64_t l2 = dir == 0 ? i + 1 + left : layers - 2 - i - left;
                    if (l2 / per != r || l2 == 0 || l2 == layers - 1) break;
                    left++;
                }
                free_at[r] += (double)(left + 1) * m * t;
                w.in = (stream){free_at[r] - m * t + t, t};
                i += left;
                continue;
            }
            if (!layered && i % pp == 0) {
                memcpy(before, free_at, (size_t)pp * sizeof *before);
                in_before = w.in;
            }
            if (prev >= 0 && prev != r) w.in.first += p2p;
            double unit = t + (l == 0 ? first_extra * share : 0.0) + (l == layers - 1 ? last_extra * share : 0.0);
            w.in = run_chunk(&free_at[r], w.in, m, unit);
            prev = r;
            if (!layered && i % pp == pp - 1 && i >= pp) {
                /* a whole plain round done: skip the plain rounds that repeat it */
                double shift = uniform_shift(&w, before, in_before);
                int64_t rounds_left = (layers - 1 - i) / pp - 1; /* the last round holds an end layer */
                if (shift >= 0 && rounds_left > 0) {
                    for (int64_t q = 0; q < pp; q++) free_at[q] += (double)rounds_left * shift;
                    w.in.first += (double)rounds_left * shift;
                    i += rounds_left * pp;
                }
            }
        }
    }
    double makespan = 0;
    for (int64_t r = 0; r < pp; r++) makespan = max2(makespan, free_at[r]);
    return makespan;
}

/* ---- bubble ratio, memoised for the simulated schedules ----------------- */

#define MEMO_SIZE 4096
typedef struct memo_entry {
    bool used;
    plc_schedule s;
    int64_t pp, layers, micro;
    double ratio, value;
} memo_entry;

/* Per-thread memo would be needed for a threaded search; plc is single-threaded. */
static memo_entry memo[MEMO_SIZE];

double plc_sched_bubble_ratio(plc_schedule s, int64_t pp, int64_t vpp, int64_t layers,
                              int64_t micro, double ratio)
{
    if (pp <= 1) return 0.0;
    switch (s) {
    case PLC_SCHED_GPIPE:
    case PLC_SCHED_1F1B: return (double)(pp - 1) / (double)micro;
    case PLC_SCHED_INTERLEAVED: return (double)(pp - 1) / (double)(micro * vpp);
    case PLC_SCHED_LAYERED: {
        /* a stage starts once the one before has run all but the last
         * micro-batch of all but its last layer: (pp-1)((L/pp-1)m+1) units of
         * idle each way against (L/pp)m busy ones */
        if (layers % pp) break;
        double per = (double)(layers / pp), m = (double)micro;
        return (double)(pp - 1) * ((per - 1.0) * m + 1.0) / (per * m);
    }
    case PLC_SCHED_MODULAR:
        /* with at least pp micro-batches a layer's input arrives before it is
         * needed: only the fill and drain, pp - 1 layers each way */
        if (micro >= pp && layers % pp == 0) return (double)pp * (double)(pp - 1) / ((double)micro * (double)layers);
        break;
    default: break;
    }
    uint64_t h = (uint64_t)s * 1000003u ^ (uint64_t)pp * 7919u ^ (uint64_t)layers * 104729u ^
                 (uint64_t)micro * 2654435761u ^ (uint64_t)(ratio * 1000.0);
    memo_entry *e = &memo[h % MEMO_SIZE];
    if (e->used && e->s == s && e->pp == pp && e->layers == layers && e->micro == micro &&
        e->ratio == ratio)
        return e->value;
    plc_sched_sim r;
    double value = 1e9; /* invalid: an enormous bubble, never chosen */
    if (plc_sched_simulate(s, pp, 1, layers, micro, 1.0, ratio, 0, 0, 0, &r) == 0 && r.busy_max > 0)
        value = (r.makespan - r.busy_max) / r.busy_max;
    *e = (memo_entry){true, s, pp, layers, micro, ratio, value};
    return value;
}
