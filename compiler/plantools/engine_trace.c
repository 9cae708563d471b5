/* engine_trace.c: the simulated timeline of one training step of a spec's
 * layout under its engine (plc trace SPEC; plantools.h). A compiled plan is
 * plrun's program and plan_trace.c simulates it instruction by instruction;
 * Megatron-LM and FSDP2 have no plan, so this file lays out the time
 * model's own pieces instead: nothing here costs anything. Every duration is
 * a field of plc_step_parts (compiler/solver/time_model.c, which the
 * solver's step time is summed from), every order is plc_pipe_order's.
 *
 * One representative rank per pipeline stage (tp, cp and dp coordinate 0:
 * the others run the same timeline). Its compute stream runs the stage's
 * units in the schedule's order, each as soon as its inputs are there:
 *
 *   forward    [recv][zero-3 gather][forward][tp][cp][slowdown]
 *   backward   [recv][zero-3 gather][recompute][its tp, cp][backward][tp][cp][slowdown]
 *
 * where the bracketed communication is its exposed part (drawn on the
 * compute stream and mirrored on the "exposed comm" track), the hidden part
 * runs on the track of its kind beside the compute (tp/cp collectives,
 * param gathers, pipeline p2p), and "slowdown" is the compute slowed by the
 * SMs overlapped collectives hold (the engine's overlap_sm_share). After the
 * stage's last backward: the gradient reduction's exposed part (its hidden
 * buckets on their track under the backward), the optimizer, and ZeRO 1/2's
 * gather of the updated weights (hidden under the next step's forward,
 * drawn at this step's start).
 *
 * Depth-first schedules receive each message on the compute stream, exposed
 * part first, as the time model charges them; layer-major ones (layered,
 * modular) delay a unit's input by the message, as their makespan walk does,
 * and a wait that the message causes is drawn as exposed p2p. */
#include "compiler/plantools/plantools_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/chrome_trace.h"
#include "compiler/solver/solver.h"

enum { T_COMPUTE, T_TP, T_EXPOSED, T_GATHER, T_DP, T_P2P, T_COUNT };
static const char *const track_name[T_COUNT] = {"compute",       "tp/cp collectives", "exposed comm",
                                                "param gathers", "dp grad reduce",    "pipeline p2p"};

typedef enum kind { K_FORWARD, K_BACKWARD, K_RECOMPUTE, K_OPTIMIZER, K_SLOWDOWN, K_EXPOSED, K_HIDDEN, K_COUNT } kind;

typedef struct ev {
    double t0, t1;
    int32_t stage, micro, chunk; /* micro, chunk: -1 none */
    uint8_t track, kind;
    const char *what;
} ev;

typedef struct sim {
    const plc_layout *l;
    plc_step_parts P;
    plc_pipe_shape sh;
    int64_t M;            /* micro-batches */
    double whole;         /* share of layers recomputed whole */
    plc_engine_trace_summary *sum;
    ev *v;
    size_t n, cap;
    int failed;
} sim;

static void add(sim *S, int64_t stage, int track, kind k, int comm, const char *what, int64_t micro, int64_t chunk,
                double t0, double t1)
{
    if (!(t1 > t0) || S->failed) return;
    for (int mirror = 0; mirror < (k == K_EXPOSED ? 2 : 1); mirror++) {
        if (S->n == S->cap) {
            size_t cap = S->cap ? 2 * S->cap : 1024;
            ev *v = realloc(S->v, cap * sizeof *v);
            if (!v) {
                S->failed = 1;
                return;
            }
            S->v = v;
            S->cap = cap;
        }
        S->v[S->n++] = (ev){t0, t1, (int32_t)stage, (int32_t)micro, (int32_t)chunk,
                            (uint8_t)(mirror ? T_EXPOSED : track), (uint8_t)k, what};
    }
    plc_engine_trace_stage *st = &S->sum->stage[stage];
    double d = t1 - t0;
    switch (k) {
    case K_SLOWDOWN: st->slowdown_s += d; break;
    case K_EXPOSED: st->exposed_s[comm] += d; st->comm_s[comm] += d; break;
    case K_HIDDEN: st->comm_s[comm] += d; break;
    default: st->compute_s += d; break;
    }
    if (t1 > st->end_s && track == T_COMPUTE) st->end_s = t1;
}

/* a piece of the compute stream from t, returning its end */
static double piece(sim *S, int64_t r, double t, kind k, int comm, const char *what, int64_t mb, int64_t c, double d)
{
    if (!(d > 0)) return t;
    add(S, r, T_COMPUTE, k, comm, what, mb, c, t, t + d);
    return t + d;
}

/* a hidden part of a communication on its own track, from t */
static void hidden(sim *S, int64_t r, int track, int comm, const char *what, int64_t mb, int64_t c, double t, double d)
{
    if (d > 0) add(S, r, track, K_HIDDEN, comm, what, mb, c, t, t + d);
}

/* layers of chunk c (unequal stages where pp does not divide layers) */
static int64_t chunk_layers(const sim *S, int64_t c) { return plc_pipe_chunk_hi(&S->sh, c) - plc_pipe_chunk_lo(&S->sh, c); }

/* the ZeRO-3 gather of a unit: the depth-first (and pp = 1) form spreads
 * the step's gathers of a direction evenly over the rank's units of that
 * direction; the layer-major form charges each layer's gather over its
 * micro-batches, as the makespan walk does */
static plc_overlap unit_gather(const sim *S, int64_t c, bool bwd)
{
    const plc_step_parts *P = &S->P;
    if (S->l->pp > 1 && P->layer_major) {
        double g = (double)chunk_layers(S, c) * P->layer_gather / (double)S->M;
        return (plc_overlap){g, g, g};
    }
    const plc_overlap *o = bwd ? &P->gathers_b : &P->gathers_f;
    double share = 1.0 / ((double)S->M * (double)S->sh.per_rank);
    return (plc_overlap){o->comm * share, o->exposed * share, o->charged * share};
}

/* compute of `layers` layers from t with the tensor-parallel collectives
 * (exposed tp_exposed, tp_comm as they run, per layer) and the
 * context-parallel ring (cp_ring as it runs, cp_exposed of it exposed) of
 * one direction: the hidden parts beside the compute, the exposed ones
 * after it; returns the end */
static double with_comm(sim *S, int64_t r, double t, kind k, const char *what, int64_t mb, int64_t c, double compute,
                        double layers, double tp_exposed, double cp_ring, double cp_exposed)
{
    bool rc = k == K_RECOMPUTE;
    const char *tp = rc ? "tp collectives (recompute)" : "tp collectives", *cp = rc ? "cp ring (recompute)" : "cp ring";
    hidden(S, r, T_TP, PLC_ETRACE_TP, tp, mb, c, t, layers * (S->P.lt.tp_comm - tp_exposed));
    hidden(S, r, T_TP, PLC_ETRACE_CP, cp, mb, c, t, layers * (cp_ring - cp_exposed));
    t = piece(S, r, t, k, 0, what, mb, c, compute);
    t = piece(S, r, t, K_EXPOSED, PLC_ETRACE_TP, tp, mb, c, layers * tp_exposed);
    return piece(S, r, t, K_EXPOSED, PLC_ETRACE_CP, cp, mb, c, layers * cp_exposed);
}

/* one unit of rank r from t: its pieces, returning its end */
static double run_unit(sim *S, int64_t r, plc_pipe_unit u, bool recv, double t)
{
    const plc_step_parts *P = &S->P;
    const plc_layer_times *lt = &P->lt;
    int64_t mb = u.micro, c = u.chunk;
    double n = (double)chunk_layers(S, c), slow = 0;
    if (recv) { /* depth-first: the step's messages, one share each */
        double count = 2.0 * (double)S->M * (double)S->sh.vpp;
        double exposed = P->pp.exposed / count;
        hidden(S, r, T_P2P, PLC_ETRACE_PP, "p2p recv", mb, c, t - (P->pp.comm - P->pp.exposed) / count,
               (P->pp.comm - P->pp.exposed) / count);
        t = piece(S, r, t, K_EXPOSED, PLC_ETRACE_PP, "p2p recv", mb, c, exposed);
        slow += (P->pp.charged - P->pp.exposed) / count;
    }
    plc_overlap g = unit_gather(S, c, u.bwd);
    hidden(S, r, T_GATHER, PLC_ETRACE_GATHER, "zero-3 gather", mb, c, t, g.comm - g.exposed);
    t = piece(S, r, t, K_EXPOSED, PLC_ETRACE_GATHER, "zero-3 gather", mb, c, g.exposed);
    slow += g.charged - g.exposed;
    /* of the embedding and head, as the schedule simulator; the head's
     * includes the logits' all-gather (gathered_logits), drawn within it:
     * the split has no forward-only piece for it to be drawn apart */
    double ends_share = u.bwd ? 2.0 / 3.0 : 1.0 / 3.0;
    double ends = (c == 0 ? P->first * ends_share : 0.0) + (c == S->sh.nchunks - 1 ? P->last * ends_share : 0.0);
    double fwd_compute = lt->matmul_f + lt->attn_f + lt->mem_f + lt->launch_f;
    if (!u.bwd) {
        t = with_comm(S, r, t, K_FORWARD, "fwd", mb, c, n * fwd_compute + ends, n, lt->tp_exposed_f, lt->cp_ring_f, lt->cp_f);
        slow += n * (lt->tp_f - lt->tp_exposed_f);
    } else {
        /* whole layers recomputed repeat their forward's collectives */
        double w = n * S->whole;
        t = with_comm(S, r, t, K_RECOMPUTE, "recompute", mb, c, n * lt->recompute - w * (lt->tp_f + lt->cp_f), w,
                      lt->tp_exposed_f, lt->cp_ring_f, lt->cp_f);
        t = with_comm(S, r, t, K_BACKWARD, "bwd", mb, c, n * (lt->matmul_b + lt->attn_b + lt->mem_b + lt->launch_b) + ends,
                      n, lt->tp_exposed_b, lt->cp_ring_b, lt->cp_b);
        slow += w * (lt->tp_f - lt->tp_exposed_f) + n * (lt->tp_b - lt->tp_exposed_b);
    }
    return piece(S, r, t, K_SLOWDOWN, 0, "overlap slowdown", mb, c, slow);
}

/* after rank r's last backward at t: the gradient reduction, the optimizer
 * and ZeRO 1/2's weight gather */
static double run_tail(sim *S, int64_t r, double t)
{
    const plc_step_parts *P = &S->P;
    const char *red = P->dp_all_reduce ? "dp all-reduce" : "dp reduce-scatter";
    double h = P->dp.comm - P->dp.exposed;
    if (h > 0) { /* the hidden buckets, back to back, under the backward before t */
        int64_t nb = (int64_t)fmin(fmax(P->dp_pieces, 1.0), (double)(2 * P->layers));
        for (int64_t b = 0; b < nb; b++)
            hidden(S, r, T_DP, PLC_ETRACE_DP, red, -1, -1, t - h + h * (double)b / (double)nb, h / (double)nb);
    }
    t = piece(S, r, t, K_EXPOSED, PLC_ETRACE_DP, red, -1, -1, P->dp.exposed);
    t = piece(S, r, t, K_SLOWDOWN, 0, "overlap slowdown", -1, -1, P->dp.charged - P->dp.exposed);
    t = piece(S, r, t, K_OPTIMIZER, 0, "optimizer", -1, -1, P->optimizer);
    const plc_overlap *z = &P->zero_gather;
    hidden(S, r, T_GATHER, PLC_ETRACE_GATHER, "param all-gather (for the next step)", -1, -1, 0.0, z->comm - z->exposed);
    t = piece(S, r, t, K_EXPOSED, PLC_ETRACE_GATHER, "param all-gather", -1, -1, z->exposed);
    return piece(S, r, t, K_SLOWDOWN, 0, "overlap slowdown", -1, -1, z->charged - z->exposed);
}

/* every stage's units in plc_pipe_order's order, each when its inputs are
 * there (as plc_sched_simulate); PLC_E_INTERNAL when the order deadlocks */
static plc_status simulate(sim *S, char *err, size_t errlen)
{
    int64_t pp = S->l->pp, M = S->M, nc = S->sh.nchunks, cells = nc * M;
    int64_t per_rank = plc_pipe_units(&S->sh, M);
    bool delay = S->P.layer_major && pp > 1; /* messages delay the input (else received on the compute stream) */
    plc_pipe_unit *order = malloc((size_t)(pp * per_rank) * sizeof *order);
    double *done = malloc((size_t)cells * 2 * sizeof *done), *free_at = calloc((size_t)pp, sizeof *free_at);
    int64_t *next = calloc((size_t)pp, sizeof *next);
    plc_status rc = PLC_E_SYSTEM;
    if (!order || !done || !free_at || !next) {
        snprintf(err, errlen, "out of memory simulating %lld pipeline units", (long long)(cells * 2));
        goto out;
    }
    for (int64_t i = 0; i < 2 * cells; i++) done[i] = -1.0;
    for (int64_t r = 0; r < pp; r++)
        if (plc_pipe_order(&S->sh, M, r, order + r * per_rank)) {
            snprintf(err, errlen, "the schedule has no order for %lld micro-batches", (long long)M);
            rc = PLC_E_INTERNAL;
            goto out;
        }
    int64_t remaining = 2 * cells;
    while (remaining > 0) {
        int64_t progress = 0;
        for (int64_t r = 0; r < pp; r++) {
            while (next[r] < per_rank) {
                plc_pipe_unit u = order[r * per_rank + next[r]];
                int64_t cell = (int64_t)u.chunk * M + u.micro;
                /* the unit it waits for on another chunk, if any */
                int64_t dep = u.bwd ? (u.chunk < nc - 1 ? cell + M : -1) : (u.chunk > 0 ? cell - M : -1);
                double own = u.bwd ? done[cell] : 0.0; /* a backward needs its own forward */
                if (own < 0) break;
                double in = dep >= 0 ? done[(u.bwd ? cells : 0) + dep] : 0.0;
                if (in < 0) break;
                bool remote = dep >= 0 && plc_pipe_chunk_rank(&S->sh, dep / M) != r;
                double ready = fmax(free_at[r], own), t;
                if (remote && delay) {
                    double arrive = in + S->P.msg, before = fmax(ready, in);
                    if (arrive > before) add(S, r, T_COMPUTE, K_EXPOSED, PLC_ETRACE_PP, "p2p wait", u.micro, u.chunk,
                                             before, arrive);
                    hidden(S, r, T_P2P, PLC_ETRACE_PP, "p2p recv", u.micro, u.chunk, in,
                           S->P.msg - fmax(0.0, arrive - before));
                    t = run_unit(S, r, u, false, fmax(ready, arrive));
                } else {
                    t = run_unit(S, r, u, remote, fmax(ready, in));
                }
                done[(u.bwd ? cells : 0) + cell] = t;
                free_at[r] = t;
                next[r]++;
                remaining--;
                progress++;
            }
        }
        if (progress == 0) {
            snprintf(err, errlen, "the pipeline order deadlocks (a bug)");
            rc = PLC_E_INTERNAL;
            goto out;
        }
    }
    for (int64_t r = 0; r < pp; r++) run_tail(S, r, free_at[r]);
    rc = S->failed ? PLC_E_SYSTEM : PLC_OK;
    if (S->failed) snprintf(err, errlen, "out of memory gathering the timeline's events");
out:
    free(order);
    free(done);
    free(free_at);
    free(next);
    return rc;
}

static int ev_order(const void *a, const void *b)
{
    const ev *x = a, *y = b;
    if (x->stage != y->stage) return x->stage < y->stage ? -1 : 1;
    if (x->track != y->track) return x->track < y->track ? -1 : 1;
    return x->t0 < y->t0 ? -1 : x->t0 > y->t0;
}

/* returns the number of events written */
static int64_t write_json(const sim *S, const plc_job *job, FILE *f)
{
    const plc_layout *l = S->l;
    plc_ctrace ct;
    plc_ctrace_begin(&ct, f, "plc trace (engine timeline)", l->tp * l->cp * l->dp * l->pp, l->pp);
    for (int64_t r = 0; r < l->pp; r++) {
        int64_t rank = plc_coords_to_rank(l, (plc_rank_coords){0, 0, 0, r});
        char name[160];
        snprintf(name, sizeof name, "stage %lld: rank %lld (tp 0 cp 0 dp 0 pp %lld), %s", (long long)r,
                 (long long)rank, (long long)r, plc_engine_name(job->train.engine));
        plc_ctrace_process(&ct, rank, name);
        for (int k = 0; k < T_COUNT; k++) plc_ctrace_thread(&ct, rank, k, track_name[k]);
    }
    uint32_t idx = 0;
    for (size_t i = 0; i < S->n; i++) {
        const ev *e = &S->v[i];
        char name[96];
        int len = snprintf(name, sizeof name, "%s%s", e->kind == K_EXPOSED ? "exposed " : "", e->what);
        if (e->micro >= 0 && len > 0 && (size_t)len < sizeof name)
            snprintf(name + len, sizeof name - (size_t)len, " m%d c%d", e->micro, e->chunk);
        int64_t rank = plc_coords_to_rank(l, (plc_rank_coords){0, 0, 0, e->stage});
        idx = (i > 0 && S->v[i - 1].stage == e->stage) ? idx + 1 : 0;
        plc_ctrace_span(&ct, rank, e->track, name, idx, 1, e->t0, e->t1);
    }
    plc_ctrace_end(&ct);
    return ct.events;
}

/* ---- the picture: each row binned into pixel columns (plc_svg_binned_row) */
enum { COLUMNS = 1000, PK_HIDDEN = K_COUNT, PK_COUNT = K_COUNT + PLC_ETRACE_COMM_COUNT };
/* the kinds drawn, each with its colour and legend name, then idle (the
 * legend's last entry); K_HIDDEN has neither: a hidden event is drawn as
 * its communication kind (hidden_kind). Tableau 10 plus cyan: no two
 * entries alike (tests/e2e/pictures.sh measures them). */
#define IDLE_COLOR "#f3ecc8"
static const char *const pk_color[PK_COUNT + 1] = {
    "#4e79a7", "#f28e2b", "#b07aa1", "#59a14f", "#ff9da7", "#e15759", NULL, /* K_HIDDEN: by kind below */
    "#76b7b2", "#9c755f", "#edc948", "#bab0ac", "#17becf", IDLE_COLOR};
static const char *const pk_name[PK_COUNT + 1] = {
    "forward", "backward", "recompute", "optimizer", "overlap slowdown", "exposed comm", NULL,
    "tp", "cp", "pp p2p", "dp reduce", "param gathers", "idle"};

/* the comm kind of a hidden event, from its name's track and text */
static int hidden_kind(const ev *e)
{
    switch (e->track) {
    case T_TP: return PK_HIDDEN + (strncmp(e->what, "cp", 2) ? PLC_ETRACE_TP : PLC_ETRACE_CP);
    case T_GATHER: return PK_HIDDEN + PLC_ETRACE_GATHER;
    case T_DP: return PK_HIDDEN + PLC_ETRACE_DP;
    default: return PK_HIDDEN + PLC_ETRACE_PP;
    }
}

static plc_status write_svg(const sim *S, const plc_job *job, const plc_engine_trace_summary *sum, FILE *out)
{
    int64_t rows = S->l->pp;
    float *cover = calloc((size_t)rows * 2 * COLUMNS * PK_COUNT, sizeof *cover);
    if (!cover) return PLC_E_SYSTEM;
    double T = sum->step_time_s > 0 ? sum->step_time_s : 1, bin = T / COLUMNS;
    for (size_t i = 0; i < S->n; i++) {
        const ev *e = &S->v[i];
        if (e->track == T_EXPOSED) continue; /* drawn on the compute row */
        int k = e->track == T_COMPUTE ? e->kind : hidden_kind(e), row = e->track != T_COMPUTE;
        float *c = cover + ((size_t)e->stage * 2 + (size_t)row) * COLUMNS * PK_COUNT;
        plc_svg_bin_add(c, COLUMNS, PK_COUNT, bin, k, e->t0, e->t1);
    }
    double width = 1200, left = 170, right = 30;
    char title[256], lt[512], sub[640];
    snprintf(sub, sizeof sub, "%s; one row per stage; thin rows: hidden communication",
             plc_layout_text(S->l, lt, sizeof lt));
    /* the header: title, subtitle and legend, each as many lines as it takes */
    int sub_lines = plc_svg_text_wrapped(NULL, 12, 44, 11.5, 15, "#444444", width - 24, sub);
    double legend_y = 44 + 15 * (sub_lines - 1) + 12;
    int legend_rows = plc_svg_legend(NULL, 12, legend_y, width - 12, 18, PK_COUNT + 1, pk_color, pk_name);
    double top = legend_y + 18 * legend_rows + 16;
    double row_h = fmax(10.0, fmin(40.0, 480.0 / (double)rows)), comp_h = row_h * 0.62, comm_h = row_h * 0.22;
    double height = top + (double)rows * row_h + 50, px = (width - left - right) / COLUMNS;
    snprintf(title, sizeof title, "plc trace: simulated step of %s under %s, %.4g s", job->path ? job->path : "spec",
             plc_engine_name(job->train.engine), T);
    plc_svg_begin(out, width, height, title);
    plc_svg_text(out, 12, 24, 15, "start", "#222222", "Simulated step under %s: %.4g s (time model: %.4g s)",
                 plc_engine_name(job->train.engine), T, sum->predicted_s);
    plc_svg_text_wrapped(out, 12, 44, 11.5, 15, "#444444", width - 24, sub);
    plc_svg_legend(out, 12, legend_y, width - 12, 18, PK_COUNT + 1, pk_color, pk_name);
    for (int64_t r = 0; r < rows; r++) {
        double y = top + (double)r * row_h;
        plc_svg_rect(out, left, y, width - left - right, comp_h, IDLE_COLOR, NULL);
        const float *c = cover + (size_t)r * 2 * COLUMNS * PK_COUNT;
        plc_svg_binned_row(out, c, COLUMNS, PK_COUNT, pk_color, bin, left, px, y, comp_h);
        plc_svg_binned_row(out, c + COLUMNS * PK_COUNT, COLUMNS, PK_COUNT, pk_color, bin, left, px, y + comp_h + 1, comm_h);
        plc_svg_text(out, left - 8, y + comp_h * 0.8, row_h < 14 ? row_h * 0.8 : 11.5, "end", "#333333", "stage %lld",
                     (long long)r);
    }
    double axis_y = top + (double)rows * row_h + 8, step = plc_svg_tick_step(T, 8);
    plc_svg_line(out, left, axis_y, width - right, axis_y, "#555555", 1, NULL);
    for (int i = 0; (double)i * step <= T * 1.0001; i++) {
        double x = left + (double)i * step * (width - left - right) / T;
        plc_svg_line(out, x, axis_y, x, axis_y + 5, "#555555", 1, NULL);
        plc_svg_text(out, x, axis_y + 18, 11, "middle", "#333333", "%g s", (double)i * step);
    }
    plc_svg_end(out);
    free(cover);
    return PLC_OK;
}

void plc_engine_trace_summary_free(plc_engine_trace_summary *s)
{
    free(s->stage);
    memset(s, 0, sizeof *s);
}

plc_status plc_engine_trace(const plc_job *job, const plc_layout *l, FILE *json, FILE *svg,
                            plc_engine_trace_summary *sum, char *err, size_t errlen)
{
    memset(sum, 0, sizeof *sum);
    char why[192];
    if (!plc_layout_check(job, l, why, sizeof why)) {
        snprintf(err, errlen, "the layout is not legal: %s", why);
        return PLC_E_INPUT;
    }
    sim S = {.l = l, .sum = sum};
    plc_step_parts_of(job, l, &S.P);
    S.M = S.P.micro;
    S.whole = plc_recompute_share(&job->model, l);
    if (plc_pipe_shape_of(l->schedule, l->pp, l->vpp, job->model.layers, &S.sh)) {
        snprintf(err, errlen, "the schedule does not split %lld layers", (long long)job->model.layers);
        return PLC_E_INPUT;
    }
    int64_t units = 2 * S.sh.nchunks * S.M; /* a step's forwards and backwards over all stages */
    if (S.M > PLC_ENGINE_TRACE_MAX_UNITS || units > PLC_ENGINE_TRACE_MAX_UNITS) {
        snprintf(err, errlen,
                 "one step of this layout has %lld pipeline units (%lld micro-batches through %lld chunks, each way); "
                 "a timeline draws at most %d: pin a larger layout.micro_batch or a smaller train.global_batch",
                 (long long)units, (long long)S.M, (long long)S.sh.nchunks, PLC_ENGINE_TRACE_MAX_UNITS);
        return PLC_E_INPUT;
    }
    plc_estimate *est = malloc(sizeof *est);
    sum->stage = calloc((size_t)l->pp, sizeof *sum->stage);
    if (!est || !sum->stage) {
        free(est);
        plc_engine_trace_summary_free(sum);
        snprintf(err, errlen, "out of memory");
        return PLC_E_SYSTEM;
    }
    sum->stages = l->pp;
    plc_status rc = plc_estimate_layout(job, l, est) ? PLC_E_INPUT : simulate(&S, err, errlen);
    if (rc == PLC_E_INPUT) snprintf(err, errlen, "%s", est->reason);
    if (rc == PLC_OK) {
        sum->predicted_s = est->step_time_s;
        for (int64_t r = 0; r < l->pp; r++)
            if (sum->stage[r].end_s > sum->step_time_s) sum->step_time_s = sum->stage[r].end_s;
        qsort(S.v, S.n, sizeof *S.v, ev_order);
        sum->spans = (int64_t)S.n;
        if (json) sum->events = write_json(&S, job, json);
        if (svg) rc = write_svg(&S, job, sum, svg);
        if (rc != PLC_OK) snprintf(err, errlen, "out of memory drawing the timeline");
    }
    free(est);
    free(S.v);
    if (rc != PLC_OK) plc_engine_trace_summary_free(sum);
    return rc;
}
