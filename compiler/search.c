/* search.c: legality of layouts, the estimate of one layout, and the search
 * over the space the spec's layout block allows.
 *
 * The search walks tp, pp, cp (dp follows from the GPU count), then ZeRO
 * stage; a memory lower bound (static state of the heaviest stage) prunes
 * whole subtrees before the inner dimensions (sp, schedule, vpp,
 * micro-batch, recompute, attention, fused RMSNorm) are walked. Each inner
 * candidate gets its memory figure; only those that fit (or, with --all,
 * every one) get a time figure. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "compiler/search.h"

#include "compiler/memory_model.h"
#include "compiler/model_math.h"
#include "compiler/schedule_model.h"
#include "compiler/time_model.h"

const char *const plc_layout_dim_names[PLC_LAYOUT_NDIMS] = {
    "dp", "tp", "pp", "cp", "sp", "vpp", "micro_batch", "schedule", "recompute", "zero",
    "attention", "fused_rmsnorm"};

enum { D_DP, D_TP, D_PP, D_CP, D_SP, D_VPP, D_MB, D_SCHED, D_RECOMPUTE, D_ZERO, D_ATTN, D_FRMS };

int64_t plc_layout_dim_value(const plc_layout *l, int dim)
{
    switch (dim) {
    case D_DP: return l->dp;
    case D_TP: return l->tp;
    case D_PP: return l->pp;
    case D_CP: return l->cp;
    case D_SP: return l->sp;
    case D_VPP: return l->vpp;
    case D_MB: return l->micro_batch;
    case D_SCHED: return l->schedule;
    case D_RECOMPUTE: return l->recompute;
    case D_ZERO: return l->zero;
    case D_ATTN: return l->attention;
    case D_FRMS: return l->fused_rmsnorm;
    default: return 0;
    }
}

const char *plc_layout_dim_text(int dim, int64_t v, char *buf, size_t size)
{
    const char *name = NULL;
    switch (dim) {
    case D_SCHED: name = plc_schedule_name((plc_schedule)v); break;
    case D_RECOMPUTE: name = plc_recompute_name((plc_recompute)v); break;
    case D_ATTN: name = plc_attention_name((plc_attention)v); break;
    case D_SP:
    case D_FRMS: name = v ? "on" : "off"; break;
    default: break;
    }
    if (name) snprintf(buf, size, "%s", name);
    else snprintf(buf, size, "%lld", (long long)v);
    return buf;
}

bool plc_layout_check(const plc_job *job, const plc_layout *l, char *why, size_t size)
{
    const plc_model *m = &job->model;
    const char *sched_why;
    int64_t gpus = plc_cluster_gpus(&job->cluster);
    /* why may be NULL (the search's fast path): the verdict only */
#define BAD(...) do { if (why) snprintf(why, size, __VA_ARGS__); return false; } while (0)
    if (l->dp < 1 || l->tp < 1 || l->pp < 1 || l->cp < 1 || l->vpp < 1 || l->micro_batch < 1)
        BAD("every parallel degree and the micro-batch must be at least 1");
    if (l->zero < 0 || l->zero > 3) BAD("zero = %lld: the ZeRO stage is 0 to 3", (long long)l->zero);
    if ((unsigned)l->schedule >= PLC_SCHED_COUNT || (unsigned)l->recompute >= PLC_RECOMPUTE_COUNT ||
        (unsigned)l->attention >= PLC_ATTN_COUNT)
        BAD("unknown schedule, recompute or attention value");
    if (l->dp * l->tp * l->pp * l->cp != gpus)
        BAD("dp x tp x pp x cp = %lld, but the cluster has %lld GPUs",
            (long long)(l->dp * l->tp * l->pp * l->cp), (long long)gpus);
    if (m->heads % l->tp || m->kv_heads % l->tp)
        BAD("tp = %lld does not divide heads = %lld and kv_heads = %lld", (long long)l->tp,
            (long long)m->heads, (long long)m->kv_heads);
    if (m->ffn_hidden % l->tp)
        BAD("tp = %lld does not divide ffn_hidden = %lld", (long long)l->tp, (long long)m->ffn_hidden);
    if (l->pp > PLC_MAX_STAGES) BAD("pp = %lld: at most %d pipeline stages", (long long)l->pp, PLC_MAX_STAGES);
    if (m->seq_len % l->cp) BAD("cp = %lld does not divide seq_len = %lld", (long long)l->cp, (long long)m->seq_len);
    if (job->train.global_batch % l->dp)
        BAD("dp = %lld does not divide global_batch = %lld sequences", (long long)l->dp,
            (long long)job->train.global_batch);
    int64_t local = job->train.global_batch / l->dp;
    if (local % l->micro_batch)
        BAD("micro_batch = %lld does not divide the %lld sequences per data-parallel rank",
            (long long)l->micro_batch, (long long)local);
    if (!plc_sched_valid(l->schedule, l->pp, l->vpp, m->layers, local / l->micro_batch, &sched_why))
        BAD("%s (schedule %s, pp = %lld, vpp = %lld, layers = %lld, %lld micro-batches)", sched_why,
            plc_schedule_name(l->schedule), (long long)l->pp, (long long)l->vpp, (long long)m->layers,
            (long long)(local / l->micro_batch));
    if (job->train.precision == PLC_PREC_FP32 &&
        (l->attention == PLC_ATTN_FLASH1 || l->attention == PLC_ATTN_FLASH2))
        BAD("flash attention kernels need bf16; fp32 training uses naive or fused attention");
#undef BAD
    if (why && size) why[0] = '\0';
    return true;
}

static int job_usable(const plc_job *job, char *why, size_t size)
{
    const plc_model *m = &job->model;
    if (plc_cluster_gpus(&job->cluster) < 1) { snprintf(why, size, "the cluster has no GPUs"); return -1; }
    if (m->layers < 1 || m->hidden < 1 || m->heads < 1 || m->kv_heads < 1 || m->ffn_hidden < 1 ||
        m->vocab < 1 || m->seq_len < 1) {
        snprintf(why, size, "the model needs positive layers, hidden, heads, kv_heads, ffn_hidden, vocab and seq_len");
        return -1;
    }
    if (m->hidden % m->heads || m->heads % m->kv_heads) {
        snprintf(why, size, "heads must divide hidden and kv_heads must divide heads");
        return -1;
    }
    if (job->train.global_batch < 1) { snprintf(why, size, "global_batch must be positive"); return -1; }
    if (job->cluster.hw.mem_bytes <= 0 || job->cluster.hw.flops_bf16 <= 0 || job->cluster.hw.hbm_bw <= 0) {
        snprintf(why, size, "the hardware entry lacks memory, bf16_flops or hbm_bw");
        return -1;
    }
    return 0;
}

static void estimate(const plc_job *job, const plc_layout *l, bool all_stages, bool always_time,
                     bool reasons, plc_estimate *out)
{
    out->layout = *l;
    out->reason[0] = '\0';
    out->fits = false;
    out->peak_bytes = out->step_time_s = out->tokens_per_s = out->mfu = 0;
    out->valid = plc_layout_check(job, l, reasons ? out->reason : NULL, sizeof out->reason);
    if (!out->valid) return;
    plc_memory_estimate(job, l, all_stages, out);
    if (!out->fits && reasons)
        snprintf(out->reason, sizeof out->reason,
                 "needs %.1f GiB on a stage-%d rank, more than the %.1f GiB limit",
                 out->peak_bytes / 1073741824.0, out->peak_stage, out->limit_bytes / 1073741824.0);
    if (out->fits || always_time) plc_time_estimate(job, l, out);
}

int plc_estimate_layout(const plc_job *job, const plc_layout *l, plc_estimate *out)
{
    memset(out, 0, sizeof *out);
    out->layout = *l;
    if (job_usable(job, out->reason, sizeof out->reason)) return -1;
    estimate(job, l, true, true, true, out);
    return 0;
}

/* ---- ordering --------------------------------------------------------------- */

int plc_candidate_compare(const plc_job *job, const plc_candidate *a, const plc_candidate *b)
{
    if (a->fits != b->fits) return a->fits ? -1 : 1;
    if (!a->fits) { /* closest to fitting first */
        if (a->valid != b->valid) return a->valid ? -1 : 1;
        return (a->peak_bytes > b->peak_bytes) - (a->peak_bytes < b->peak_bytes);
    }
    if (job->layout.objective == PLC_OBJ_MEMORY && a->peak_bytes != b->peak_bytes)
        return a->peak_bytes < b->peak_bytes ? -1 : 1;
    if (a->step_time_s != b->step_time_s) return a->step_time_s < b->step_time_s ? -1 : 1;
    if (a->peak_bytes != b->peak_bytes) return a->peak_bytes < b->peak_bytes ? -1 : 1;
    /* equal figures (a schedule that makes no difference at pp = 1, say):
     * the plainer layout first */
    const plc_layout *x = &a->layout, *y = &b->layout;
    int64_t kx[] = {x->schedule != PLC_SCHED_1F1B, x->zero, x->sp, x->recompute, x->tp, x->pp, x->cp, x->vpp};
    int64_t ky[] = {y->schedule != PLC_SCHED_1F1B, y->zero, y->sp, y->recompute, y->tp, y->pp, y->cp, y->vpp};
    for (size_t i = 0; i < sizeof kx / sizeof kx[0]; i++)
        if (kx[i] != ky[i]) return kx[i] < ky[i] ? -1 : 1;
    return 0;
}

/* ---- the search ------------------------------------------------------------- */

#define MAX_VALUES 256

typedef struct values { int n; int64_t v[MAX_VALUES]; } values;

static void add_value(values *vs, const plc_choice *c, int64_t x)
{
    if (vs->n < MAX_VALUES && plc_choice_allows(c, x)) vs->v[vs->n++] = x;
}

/* divisors of n that the choice allows (and, for explicit values that do not
 * divide n, nothing: they are invalid for every layout) */
static void divisors(values *vs, const plc_choice *c, int64_t n)
{
    vs->n = 0;
    for (int64_t d = 1; d <= n && vs->n < MAX_VALUES; d++)
        if (n % d == 0) add_value(vs, c, d);
}

static void enum_values(values *vs, const plc_choice *c, int64_t count)
{
    vs->n = 0;
    for (int64_t x = 0; x < count; x++) add_value(vs, c, x);
}

#define REGION_VALUES 64
typedef struct region_list { int n; plc_region r[REGION_VALUES]; } region_list;

typedef struct search {
    const plc_job *job;
    plc_arena *arena;
    plc_solve_opts opts;
    plc_solution *out;
    plc_estimate est; /* scratch */
    int64_t all_cap;
    region_list regions[PLC_LAYOUT_NDIMS];
} search;

static plc_candidate candidate_of(const plc_estimate *e)
{
    plc_candidate c = {.layout = e->layout, .valid = e->valid, .fits = e->fits,
                       .peak_bytes = e->peak_bytes, .step_time_s = e->step_time_s,
                       .tokens_per_s = e->tokens_per_s, .mfu = e->mfu, .reason = ""};
    return c;
}

static void keep_ranked(search *S, const plc_candidate *c)
{
    plc_solution *o = S->out;
    int top = S->opts.top;
    if (o->nranked == top && plc_candidate_compare(S->job, c, &o->ranked[top - 1]) >= 0) return;
    int i = o->nranked < top ? o->nranked++ : top - 1;
    while (i > 0 && plc_candidate_compare(S->job, c, &o->ranked[i - 1]) < 0) {
        o->ranked[i] = o->ranked[i - 1];
        i--;
    }
    o->ranked[i] = *c;
}

static void keep_closest(search *S, const plc_candidate *c)
{
    plc_solution *o = S->out;
    int cap = (int)(sizeof o->closest / sizeof o->closest[0]);
    if (o->nclosest == cap && plc_candidate_compare(S->job, c, &o->closest[cap - 1]) >= 0) return;
    int i = o->nclosest < cap ? o->nclosest++ : cap - 1;
    while (i > 0 && plc_candidate_compare(S->job, c, &o->closest[i - 1]) < 0) {
        o->closest[i] = o->closest[i - 1];
        i--;
    }
    o->closest[i] = *c;
}

static void keep_regions(search *S, const plc_candidate *c)
{
    for (int d = 0; d < PLC_LAYOUT_NDIMS; d++) {
        int64_t v = plc_layout_dim_value(&c->layout, d);
        region_list *rl = &S->regions[d];
        int i;
        for (i = 0; i < rl->n; i++)
            if (rl->r[i].value == v) break;
        if (i == rl->n) {
            if (rl->n == REGION_VALUES) continue;
            rl->r[rl->n++] = (plc_region){.dim = d, .value = v, .best = *c};
        } else if (plc_candidate_compare(S->job, c, &rl->r[i].best) < 0) {
            rl->r[i].best = *c;
        }
    }
}

static void keep_all(search *S, const plc_candidate *c)
{
    plc_solution *o = S->out;
    if (o->nall == S->all_cap) {
        int64_t cap = S->all_cap ? S->all_cap * 2 : 1024;
        plc_candidate *n = PLC_NEW_ARRAY(S->arena, plc_candidate, cap);
        if (o->nall) memcpy(n, o->all, (size_t)o->nall * sizeof *n);
        o->all = n;
        S->all_cap = cap;
    }
    o->all[o->nall++] = *c;
}

static void record(search *S, plc_candidate *c, const char *reason)
{
    c->reason = reason;
    if (c->fits) {
        S->out->fitting++;
        keep_ranked(S, c);
    } else if (c->valid) {
        keep_closest(S, c);
    }
    if (c->valid) keep_regions(S, c);
    if (S->opts.all) keep_all(S, c);
}

static const char *arena_reason(search *S, const char *text)
{
    return text[0] ? plc_arena_strdup(S->arena, text) : "";
}

/* one fully specified candidate */
static void evaluate(search *S, const plc_layout *l)
{
    estimate(S->job, l, false, S->opts.all, S->opts.all || S->out->pinned, &S->est);
    plc_candidate c = candidate_of(&S->est);
    if (!S->est.valid) {
        S->out->invalid++;
        /* reasons of invalid candidates are kept only where they are shown */
        record(S, &c, S->opts.all || S->out->pinned ? arena_reason(S, S->est.reason) : "invalid layout");
        return;
    }
    S->out->evaluated++;
    /* non-fitting reasons are formatted where they are printed (figures in the candidate) */
    record(S, &c, S->est.fits ? "" : "does not fit in memory");
}

typedef struct inner_values {
    values sp, sched, mb, rc, attn, frms, vpp_all;
} inner_values;

static int64_t count_inner(const plc_job *job, const inner_values *iv, int64_t pp, int64_t tp)
{
    int64_t per_sched = 0;
    for (int i = 0; i < iv->sched.n; i++) {
        int64_t nv = 0;
        for (int j = 0; j < iv->vpp_all.n; j++) {
            int64_t v = iv->vpp_all.v[j];
            if (iv->sched.v[i] == PLC_SCHED_INTERLEAVED ? (v >= 2 && job->model.layers % (pp * v) == 0) : v == 1) nv++;
        }
        per_sched += nv;
    }
    int64_t sp_n = 0;
    for (int i = 0; i < iv->sp.n; i++) if (!(iv->sp.v[i] == 1 && tp == 1 && iv->sp.n > 1)) sp_n++;
    return sp_n * per_sched * iv->mb.n * iv->rc.n * iv->attn.n * iv->frms.n;
}

static void walk_inner(search *S, plc_layout base, const inner_values *iv)
{
    const plc_job *job = S->job;
    for (int a = 0; a < iv->sp.n; a++) {
        base.sp = iv->sp.v[a];
        if (base.sp == 1 && base.tp == 1 && iv->sp.n > 1) continue; /* same as sp off */
        for (int b = 0; b < iv->sched.n; b++) {
            base.schedule = (plc_schedule)iv->sched.v[b];
            for (int c = 0; c < iv->vpp_all.n; c++) {
                base.vpp = iv->vpp_all.v[c];
                bool inter = base.schedule == PLC_SCHED_INTERLEAVED;
                if (inter ? (base.vpp < 2 || job->model.layers % (base.pp * base.vpp)) : base.vpp != 1)
                    continue; /* not a value of this schedule */
                for (int d = 0; d < iv->mb.n; d++) {
                    base.micro_batch = iv->mb.v[d];
                    const char *why;
                    int64_t micro = job->train.global_batch / base.dp / base.micro_batch;
                    if (!S->opts.all && !plc_sched_valid(base.schedule, base.pp, base.vpp, job->model.layers, micro, &why)) {
                        /* every inner combination is invalid for the same reason */
                        S->out->invalid += (int64_t)iv->rc.n * iv->attn.n * iv->frms.n;
                        continue;
                    }
                    for (int e = 0; e < iv->rc.n; e++) {
                        base.recompute = (plc_recompute)iv->rc.v[e];
                        for (int f = 0; f < iv->attn.n; f++) {
                            base.attention = (plc_attention)iv->attn.v[f];
                            for (int g = 0; g < iv->frms.n; g++) {
                                base.fused_rmsnorm = iv->frms.v[g];
                                evaluate(S, &base);
                            }
                        }
                    }
                }
            }
        }
    }
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static bool all_pinned(const plc_layout_spec *ls, plc_layout *l)
{
    int64_t v[PLC_LAYOUT_NDIMS];
    const plc_choice *c[PLC_LAYOUT_NDIMS] = {&ls->dp, &ls->tp, &ls->pp, &ls->cp, &ls->sp, &ls->vpp,
                                             &ls->micro_batch, &ls->schedule, &ls->recompute,
                                             &ls->zero, &ls->attention, &ls->fused_rmsnorm};
    for (int i = 0; i < PLC_LAYOUT_NDIMS; i++)
        if (!plc_choice_fixed(c[i], &v[i])) return false;
    *l = (plc_layout){.dp = v[0], .tp = v[1], .pp = v[2], .cp = v[3], .sp = v[4], .vpp = v[5],
                      .micro_batch = v[6], .schedule = (plc_schedule)v[7],
                      .recompute = (plc_recompute)v[8], .zero = v[9],
                      .attention = (plc_attention)v[10], .fused_rmsnorm = v[11]};
    return true;
}

int plc_solve_opts_run(const plc_job *job, plc_arena *a, const plc_solve_opts *opts, plc_solution *out)
{
    double t0 = now_s();
    memset(out, 0, sizeof *out);
    char why[192];
    if (job_usable(job, why, sizeof why)) {
        fprintf(stderr, "plc: error: %s\n", why);
        return -1;
    }
    search *S = calloc(1, sizeof *S);
    if (!S) { fprintf(stderr, "plc: error: out of memory\n"); return -1; }
    S->job = job;
    S->arena = a;
    S->out = out;
    S->opts = opts ? *opts : (plc_solve_opts){0};
    if (S->opts.top <= 0) S->opts.top = 10;
    out->ranked = PLC_NEW_ARRAY(a, plc_candidate, S->opts.top);
    out->limit_bytes = job->layout.memory_limit * job->cluster.hw.mem_bytes;

    const plc_layout_spec *ls = &job->layout;
    const plc_model *m = &job->model;
    int64_t gpus = plc_cluster_gpus(&job->cluster);
    plc_layout pinned_layout;
    if (all_pinned(ls, &pinned_layout)) {
        out->pinned = true;
        evaluate(S, &pinned_layout);
        /* the single candidate, fit or not, with its time */
        plc_estimate *e = &S->est;
        if (e->valid && !e->fits) plc_time_estimate(job, &pinned_layout, e);
        out->single = candidate_of(e);
        out->single.reason = arena_reason(S, e->reason);
    } else {
        inner_values iv;
        values tps, pps, cps, zeros;
        divisors(&tps, &ls->tp, gpus);
        enum_values(&iv.sp, &ls->sp, 2);
        enum_values(&iv.sched, &ls->schedule, PLC_SCHED_COUNT);
        enum_values(&iv.rc, &ls->recompute, PLC_RECOMPUTE_COUNT);
        enum_values(&iv.attn, &ls->attention, PLC_ATTN_COUNT);
        enum_values(&iv.frms, &ls->fused_rmsnorm, 2);
        enum_values(&zeros, &ls->zero, 4);
        divisors(&iv.vpp_all, &ls->vpp, m->layers);
        if (job->train.precision == PLC_PREC_FP32 && ls->attention.kind == PLC_CHOICE_AUTO)
            enum_values(&iv.attn, &ls->attention, PLC_ATTN_FLASH1); /* naive, fused */
        for (int i = 0; i < tps.n; i++) {
            int64_t tp = tps.v[i];
            if (m->heads % tp || m->kv_heads % tp || m->ffn_hidden % tp) { out->invalid++; continue; }
            divisors(&pps, &ls->pp, gpus / tp);
            for (int j = 0; j < pps.n; j++) {
                int64_t pp = pps.v[j];
                if (m->layers % pp || pp > PLC_MAX_STAGES) { out->invalid++; continue; }
                divisors(&cps, &ls->cp, gpus / (tp * pp));
                for (int k = 0; k < cps.n; k++) {
                    int64_t cp = cps.v[k];
                    int64_t dp = gpus / (tp * pp * cp);
                    if (m->seq_len % cp || !plc_choice_allows(&ls->dp, dp) ||
                        job->train.global_batch % dp) {
                        out->invalid++;
                        continue;
                    }
                    divisors(&iv.mb, &ls->micro_batch, job->train.global_batch / dp);
                    for (int z = 0; z < zeros.n; z++) {
                        int64_t zero = zeros.v[z];
                        /* without data or context parallelism every stage is the same */
                        if (dp * cp == 1 && zero > 0 && zeros.n > 1) continue;
                        plc_layout base = {.dp = dp, .tp = tp, .pp = pp, .cp = cp, .zero = zero};
                        double bound = plc_memory_lower_bound(job, tp, pp, dp, cp, zero);
                        if (bound > out->limit_bytes) {
                            int64_t n = count_inner(job, &iv, pp, tp);
                            out->pruned += n;
                            if (n > 0) { /* a representative for "closest" output */
                                plc_candidate c = {.layout = base, .valid = true, .peak_bytes = bound,
                                                   .reason = "weights, gradients and optimizer state alone exceed the limit"};
                                c.layout.vpp = 1; c.layout.micro_batch = 1;
                                c.layout.schedule = PLC_SCHED_1F1B;
                                c.layout.recompute = PLC_RECOMPUTE_FULL;
                                c.layout.attention = PLC_ATTN_FLASH2;
                                c.layout.fused_rmsnorm = 1;
                                keep_closest(S, &c);
                            }
                            continue;
                        }
                        walk_inner(S, base, &iv);
                    }
                }
            }
        }
    }
    out->enumerated = out->invalid + out->pruned + out->evaluated;
    int nregions = 0;
    for (int d = 0; d < PLC_LAYOUT_NDIMS; d++) nregions += S->regions[d].n;
    out->regions = PLC_NEW_ARRAY(a, plc_region, nregions ? nregions : 1);
    for (int d = 0; d < PLC_LAYOUT_NDIMS; d++)
        for (int i = 0; i < S->regions[d].n; i++) out->regions[out->nregions++] = S->regions[d].r[i];
    free(S);
    out->seconds = now_s() - t0;
    return 0;
}

int plc_solve(const plc_job *job, plc_arena *a, plc_solution *out)
{
    return plc_solve_opts_run(job, a, NULL, out);
}
