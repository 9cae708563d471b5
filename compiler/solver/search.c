/* search.c: legality of layouts, the estimate of one layout, and the search
 * over the space the spec's layout block allows.
 *
 * The search walks tp, pp, cp (dp follows from the GPU count), then ZeRO
 * stage; a memory lower bound (static state of the heaviest stage) prunes
 * whole subtrees before the inner dimensions (sp, schedule, vpp,
 * micro-batch, recompute, attention, fused RMSNorm) are walked. Each inner
 * candidate gets its memory figure; only those that fit (or, with --all,
 * every one) get a time figure.
 *
 * Branch and bound (unless opts.exhaustive or opts.all): once `top`
 * candidates fit, a node (tp, pp, cp, zero, sp, schedule, vpp, micro-batch)
 * whose lower bound on the objective is worse than the top-th best is
 * skipped with its recompute x attention x fused-RMSNorm leaves, and then
 * each leaf by its own bound (its attention and RMSNorm known). The bounds
 * are admissible, so the ranking is the exhaustive one (ties included: a
 * leaf is skipped only when its bound is strictly worse, and the leaves that
 * are estimated are met in the same order):
 *   time:   every component of the step is non-negative, and the per-layer
 *           work of a micro-batch (plc_layer_times_of: linear layers,
 *           attention core, element-wise work, tp and cp exchanges, kernel
 *           launches) only grows with recompute; so the step takes at least
 *           micro-batches x layers per stage x the least per-layer work over
 *           the node's attention and RMSNorm choices, times 1 + the bubble
 *           ratio for the schedules whose closed form does not depend on the
 *           backward/forward ratio (GPipe, 1F1B, interleaved: their bubble is
 *           that ratio times the balanced stage's work, itself at least the
 *           layers' work);
 *   memory: plc_memory_lower_bound (static state and reserve).
 * A node that cannot fit is skipped too, by plc_memory_node_bound (the
 * static state, the runtime's fixed costs and the layer inputs of the
 * micro-batches in flight, which every recompute policy keeps), with every
 * larger micro-batch of it: the bound never falls as the micro-batch grows.
 * While nothing fits, only nodes no closer to fitting than the closest
 * candidates kept are skipped, so those are the exhaustive search's too.
 * This is what keeps the search's time flat in the global batch: a batch
 * of 1e12 sequences has 17 times the micro-batch values of 1024, and all
 * but the few smallest end the loop. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "compiler/solver/solver_int.h"


int64_t plc_layout_dim_value(const plc_layout *l, int dim) { return plc_layout_get(l, (plc_layout_dim)dim); }

const char *plc_layout_dim_text(int dim, int64_t v, char *buf, size_t size)
{
    return plc_layout_value_text((plc_layout_dim)dim, v, buf, size);
}

bool plc_layout_check(const plc_job *job, const plc_layout *l, char *why, size_t size)
{
    plc_verdict v = plc_layout_rules_job(job, l);
    if (v.rule == PLC_RULE_OK) {
        if (why && size) why[0] = '\0';
        return true;
    }
    /* why may be NULL (the search's fast path): the verdict only */
    if (why) plc_layout_rules_job_message(job, l, v, why, size);
    return false;
}

static int job_usable(const plc_job *job, char *why, size_t size)
{
    if (plc_cluster_gpus(&job->cluster) < 1) { snprintf(why, size, "the cluster has no GPUs"); return -1; }
    plc_verdict v = plc_model_rules(&job->model);
    if (v.rule != PLC_RULE_OK) {
        plc_rule_input in = {.model = &job->model};
        plc_rule_message(&in, v, why, size);
        return -1;
    }
    if (job->train.global_batch < 1) { snprintf(why, size, "global_batch must be positive"); return -1; }
    /* an engine that runs no MoE layer runs no layout of a model with experts */
    if (job->model.moe.experts > 0 && job->engine.moe <= 0) {
        plc_rule_input in = {.model = &job->model, .engine = &job->engine, .engine_id = job->train.engine};
        plc_rule_message(&in, (plc_verdict){PLC_RULE_ENGINE_MOE, "ep"}, why, size);
        return -1;
    }
    /* latent attention: plrun's lowering does not build it; the engines'
     * estimates cost it as the model's multi-head attention (docs/solver.md) */
    if (job->model.mla.kv_rank > 0 && job->train.engine == PLC_ENGINE_PLRUN) {
        snprintf(why, size, "latent attention (kv_lora_rank = %lld): engine plrun does not run it; solve with engine = "
                 "megatron or fsdp2", (long long)job->model.mla.kv_rank);
        return -1;
    }
    /* the solver models the heads; plrun's lowering runs hidden / heads only */
    if (job->train.engine == PLC_ENGINE_PLRUN && plc_model_plrun_heads(&job->model, why, size)) return -1;
    if (job->cluster.hw.mem_bytes <= 0 || job->cluster.hw.flops_bf16 <= 0 || job->cluster.hw.hbm_bw <= 0) {
        snprintf(why, size, "the hardware entry lacks memory, bf16_flops or hbm_bw");
        return -1;
    }
    return 0;
}

/* ---- plrun's fit, settled by the lowering ---------------------------------- */

/* a layout the judge lowered, for the rest of its life (a search run again
 * after a ranked candidate proved not to fit, the reports' estimates): the
 * plan depends on the model, the training setup, the cluster and the
 * layout, not on the memory limit */
struct plc_judged {
    plc_model model;
    plc_train train;
    plc_cluster cluster;
    plc_layout layout;
    bool ok;                     /* it lowered (else its estimate stands) */
    bool have[PLC_MAX_STAGES];   /* the stages whose memory was planned */
    double arena[PLC_MAX_STAGES];
};

void plc_memory_judge_free(plc_memory_judge *j)
{
    free(j->memo);
    j->memo = NULL;
    j->nmemo = j->capmemo = 0;
}

static plc_judged *memo_find(plc_memory_judge *j, const plc_job *job, const plc_layout *l)
{
    for (int i = 0; i < j->nmemo; i++) {
        plc_judged *m = &j->memo[i];
        if (plc_layout_equal(&m->layout, l) && !memcmp(&m->model, &job->model, sizeof m->model) &&
            !memcmp(&m->train, &job->train, sizeof m->train) && !memcmp(&m->cluster, &job->cluster, sizeof m->cluster))
            return m;
    }
    return NULL;
}

static plc_judged *memo_add(plc_memory_judge *j, const plc_job *job, const plc_layout *l)
{
    if (j->nmemo == j->capmemo) {
        int cap = j->capmemo ? j->capmemo * 2 : 16;
        plc_judged *n = realloc(j->memo, (size_t)cap * sizeof *n);
        if (!n) return NULL;
        j->memo = n, j->capmemo = cap;
    }
    plc_judged *m = &j->memo[j->nmemo++];
    memset(m, 0, sizeof *m);
    memcpy(&m->model, &job->model, sizeof m->model);
    memcpy(&m->train, &job->train, sizeof m->train);
    memcpy(&m->cluster, &job->cluster, sizeof m->cluster);
    m->layout = *l;
    return m;
}

/* where e's fit is open (plc_memory_open), the arenas of the layout lowered
 * before, or (lower) lowered now; otherwise e->open says it is not settled.
 * False only when out of memory. */
static bool settle(plc_memory_judge *judge, const plc_job *job, const plc_layout *l, bool lower, plc_estimate *e)
{
    bool open[PLC_MAX_STAGES] = {0};
    if (!judge || !plc_memory_open(job, l, e, open)) return true;
    plc_judged *m = memo_find(judge, job, l);
    bool known = m != NULL;
    for (int s = 0; m && m->ok && s < e->stages; s++) known &= !open[s] || m->have[s];
    if (known) {
        if (m->ok) plc_memory_take_arena(job, l, open, m->arena, e);
        return true;
    }
    if (!lower) {
        e->open = true;
        return true;
    }
    double arena[PLC_MAX_STAGES];
    judge->calls++;
    bool ok = judge->arena(judge->ctx, job, l, open, arena) == 0;
    if (!m) m = memo_add(judge, job, l);
    if (!m) return false;
    m->ok = ok;
    for (int s = 0; ok && s < e->stages; s++)
        if (open[s]) m->have[s] = true, m->arena[s] = arena[s];
    if (ok) plc_memory_take_arena(job, l, open, m->arena, e);
    return true;
}

/* rounding margin: the bound and the estimate sum the same terms in another order */
#define BOUND_MARGIN (1.0 - 1e-9)

/* cut > 0 (branch and bound, time objective): the time first, and the memory
 * only when the step is not slower than cut (returns false when it is) */
static bool estimate(const plc_job *job, const plc_layout *l, bool all_stages, bool always_time,
                     bool reasons, double cut, plc_memory_judge *judge, bool lower, plc_estimate *out)
{
    out->layout = *l;
    out->reason[0] = '\0';
    out->fits = false;
    out->peak_bytes = out->step_time_s = out->tokens_per_s = out->mfu = 0;
    out->valid = plc_layout_check(job, l, reasons ? out->reason : NULL, sizeof out->reason);
    if (!out->valid) return true;
    if (cut > 0) {
        plc_time_estimate(job, l, out);
        if (out->step_time_s * BOUND_MARGIN > cut) return false;
    }
    /* plrun's plan: every stage (the judge needs them all, since its arena
     * may peak on any) */
    plc_memory_estimate(job, l, all_stages, out);
    if (!settle(judge, job, l, lower, out)) return false;
    if (!out->fits && reasons)
        snprintf(out->reason, sizeof out->reason,
                 "needs %.1f GiB on a stage-%d rank, more than the %.1f GiB limit",
                 out->peak_bytes / 1073741824.0, out->peak_stage, out->limit_bytes / 1073741824.0);
    if (cut <= 0 && (out->fits || always_time)) plc_time_estimate(job, l, out);
    return true;
}

int plc_estimate_layout_judged(const plc_job *job, const plc_layout *l, plc_memory_judge *judge,
                               plc_estimate *out)
{
    memset(out, 0, sizeof *out);
    out->layout = *l;
    if (job_usable(job, out->reason, sizeof out->reason)) return -1;
    if (!estimate(job, l, true, true, true, 0, judge, true, out)) {
        snprintf(out->reason, sizeof out->reason, "out of memory");
        return -1;
    }
    return 0;
}

int plc_estimate_layout(const plc_job *job, const plc_layout *l, plc_estimate *out)
{
    return plc_estimate_layout_judged(job, l, NULL, out);
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

/* ---- the pick with error bars ------------------------------------------------ */

bool plc_ranges_overlap(const plc_candidate *a, const plc_candidate *b)
{
    if (!(a->range_lo > 0 && b->range_lo > 0)) return false;
    return a->tokens_per_s * a->range_hi >= b->tokens_per_s * b->range_lo &&
           b->tokens_per_s * b->range_hi >= a->tokens_per_s * a->range_lo;
}

int plc_pick_by_range(const plc_job *job, plc_candidate *ranked, int n)
{
    if (n < 2 || job->layout.objective == PLC_OBJ_MEMORY || !(ranked[0].range_lo > 0)) return 0;
    int pick = 0;
    for (int i = 1; i < n; i++)
        if (ranked[i].fits && plc_ranges_overlap(&ranked[i], &ranked[0]) &&
            ranked[i].tokens_per_s * ranked[i].range_lo > ranked[pick].tokens_per_s * ranked[pick].range_lo)
            pick = i;
    if (pick) {
        plc_candidate c = ranked[pick];
        memmove(ranked + 1, ranked, (size_t)pick * sizeof *ranked);
        ranked[0] = c;
    }
    return pick;
}

/* ---- the search ------------------------------------------------------------- */

#define MAX_VALUES 256

typedef struct values { int n; int64_t v[MAX_VALUES]; } values;

static void add_value(values *vs, const plc_choice *c, int64_t x)
{
    if (vs->n < MAX_VALUES && plc_choice_allows(c, x)) vs->v[vs->n++] = x;
}

/* divisors of n that the choice allows, ascending (and, for explicit values
 * that do not divide n, nothing: they are invalid for every layout). Trial
 * division up to sqrt(n), so a batch of 1e12 sequences costs a millisecond. */
static void divisors(values *vs, const plc_choice *c, int64_t n)
{
    int64_t large[MAX_VALUES];
    int nl = 0;
    vs->n = 0;
    if (c->kind == PLC_CHOICE_SET) { /* the values given, ascending */
        for (int i = 0; i < c->n; i++)
            if (c->v[i] >= 1 && n % c->v[i] == 0) add_value(vs, c, c->v[i]);
        return;
    }
    if (c->kind == PLC_CHOICE_RANGE && c->hi - c->lo < MAX_VALUES) { /* a short range: its values */
        for (int64_t d = c->lo < 1 ? 1 : c->lo; d <= c->hi && d <= n; d++)
            if (n % d == 0) add_value(vs, c, d);
        return;
    }
    for (int64_t d = 1; d <= n / d; d++) {
        if (n % d) continue;
        add_value(vs, c, d);
        if (d != n / d && nl < MAX_VALUES && plc_choice_allows(c, n / d)) large[nl++] = n / d;
    }
    for (int i = nl - 1; i >= 0; i--)
        if (vs->n < MAX_VALUES) vs->v[vs->n++] = large[i];
}

/* the vpp values to try: the divisors of layers (equal virtual stages);
 * where the engine runs unequal ones (uneven_stages 2) every value a set or
 * a short range gives, up to layers (rule VPP_LAYERS says which pp take
 * them) */
static void vpp_values(const plc_job *job, values *vs, const plc_choice *c)
{
    int64_t layers = job->model.layers;
    if (job->engine.uneven_stages < 2) {
        divisors(vs, c, layers);
        return;
    }
    vs->n = 0;
    if (c->kind == PLC_CHOICE_SET) { /* the values given, ascending */
        for (int i = 0; i < c->n; i++)
            if (c->v[i] >= 1 && c->v[i] <= layers) add_value(vs, c, c->v[i]);
        return;
    }
    if (c->kind == PLC_CHOICE_RANGE && c->hi - c->lo < MAX_VALUES) {
        for (int64_t d = c->lo < 1 ? 1 : c->lo; d <= c->hi && d <= layers; d++) add_value(vs, c, d);
        return;
    }
    divisors(vs, c, layers);
}

/* divisors(vs, c, n) for n dividing a number whose ascending divisors are
 * all[0..nall): the same values in the same order, without trial division
 * (the micro-batch values of every dp, from the global batch's divisors) */
static void divisors_among(values *vs, const plc_choice *c, int64_t n, const int64_t *all, int64_t nall)
{
    if (c->kind == PLC_CHOICE_SET || (c->kind == PLC_CHOICE_RANGE && c->hi - c->lo < MAX_VALUES)) {
        divisors(vs, c, n);
        return;
    }
    int64_t large[MAX_VALUES];
    int nl = 0;
    vs->n = 0;
    for (int64_t i = 0; i < nall && all[i] <= n / all[i]; i++) {
        int64_t d = all[i];
        if (n % d) continue;
        add_value(vs, c, d);
        if (d != n / d && nl < MAX_VALUES && plc_choice_allows(c, n / d)) large[nl++] = n / d;
    }
    for (int i = nl - 1; i >= 0; i--)
        if (vs->n < MAX_VALUES) vs->v[vs->n++] = large[i];
}

/* every divisor of n, ascending, malloc'd (NULL when out of memory) */
static int64_t *all_divisors(int64_t n, int64_t *count)
{
    int64_t cap = 64, k = 0, nl = 0;
    int64_t *small = malloc((size_t)cap * sizeof *small), *large = malloc((size_t)cap * sizeof *large);
    for (int64_t d = 1; small && large && d <= n / d; d++) {
        if (n % d) continue;
        if (k == cap || nl == cap) {
            cap *= 2;
            int64_t *s2 = realloc(small, (size_t)cap * sizeof *s2);
            if (s2) small = s2;
            int64_t *l2 = s2 ? realloc(large, (size_t)cap * sizeof *l2) : NULL;
            if (l2) large = l2;
            if (!s2 || !l2) { free(small); free(large); return NULL; }
        }
        small[k++] = d;
        if (d != n / d) large[nl++] = n / d;
    }
    if (!small || !large) { free(small); free(large); return NULL; }
    int64_t *all = realloc(small, (size_t)(k + nl + 1) * sizeof *all);
    if (!all) { free(small); free(large); return NULL; }
    for (int64_t i = nl - 1; i >= 0; i--) all[k++] = large[i];
    free(large);
    *count = k;
    return all;
}

static plc_rule_input rule_input(const plc_job *job, const plc_layout *l, uint32_t known)
{
    return (plc_rule_input){.model = &job->model, .gpus = plc_cluster_gpus(&job->cluster),
                            .global_batch = job->train.global_batch, .precision = job->train.precision,
                            .precision_known = true, .layout = *l, .known = known,
                            .engine = &job->engine, .engine_id = job->train.engine};
}

/* does the partial layout l (the dimensions in `known`) break a rule? */
static bool breaks_rule(const plc_job *job, const plc_layout *l, uint32_t known)
{
    plc_rule_input in = rule_input(job, l, known);
    return plc_layout_rules(&in).rule != PLC_RULE_OK;
}

/* breaks_rule, with the layouts it removes (n: 1, or the leaves under a
 * node) counted in out->invalid and invalid_by, so that "no layout fits"
 * and plc explain can say which rule removed what */
static bool rejected(plc_solution *out, const plc_job *job, const plc_layout *l, uint32_t known, int64_t n)
{
    plc_rule_input in = rule_input(job, l, known);
    plc_verdict v = plc_layout_rules(&in);
    if (v.rule == PLC_RULE_OK) return false;
    out->invalid += n;
    if (out->invalid_by[v.rule] == 0) {
        out->invalid_example[v.rule] = *l;
        out->invalid_known[v.rule] = known;
    }
    out->invalid_by[v.rule] += n;
    return true;
}

const char *plc_invalid_message(const plc_job *job, const plc_solution *s, plc_rule r, char *buf, size_t size)
{
    plc_rule_input in = rule_input(job, &s->invalid_example[r], s->invalid_known[r]);
    plc_verdict v = plc_layout_rules(&in);
    if (v.rule != r) v = (plc_verdict){r, ""};
    return plc_rule_message(&in, v, buf, size);
}

/* keeps the values of dimension d that break no rule on their own (the
 * engine's profile: the search offers only what the engine runs) */
static void legal_alone(const plc_job *job, values *vs, plc_layout_dim d)
{
    int n = 0;
    for (int i = 0; i < vs->n; i++) {
        plc_layout l = {0};
        plc_layout_set(&l, d, vs->v[i]);
        if (!breaks_rule(job, &l, 1u << d)) vs->v[n++] = vs->v[i];
    }
    vs->n = n;
}

static void enum_values(values *vs, const plc_choice *c, int64_t count)
{
    vs->n = 0;
    for (int64_t x = 0; x < count; x++) add_value(vs, c, x);
}

/* the recompute_layers values of a layout l (recompute, pp and vpp known)
 * that the layout block allows and the rulebook accepts: 0 for the policies
 * without a layer count, 1 .. the stage's layers for block and every */
static void layer_values(const plc_job *job, const plc_layout *l, values *vs)
{
    const plc_choice *c = &job->layout.recompute_layers;
    vs->n = 0;
    bool by_layers = l->recompute == PLC_RECOMPUTE_BLOCK || l->recompute == PLC_RECOMPUTE_EVERY;
    if (!by_layers) {
        add_value(vs, c, 0);
        return;
    }
    int64_t most = plc_recompute_layers_max(job->model.layers, l);
    /* block with every layer and every 1st layer are recompute = full: the
     * search offers them as full (a pinned value is still estimated) */
    int64_t lo = l->recompute == PLC_RECOMPUTE_EVERY && most > 1 ? 2 : 1;
    int64_t hi = l->recompute == PLC_RECOMPUTE_BLOCK && most > 1 ? most - 1 : most;
    if (plc_choice_fixed(c, &lo)) hi = lo;
    for (int64_t k = lo; k <= hi && vs->n < MAX_VALUES; k++) add_value(vs, c, k);
}

#define REGION_VALUES 64
typedef struct region_list { int n; plc_region r[REGION_VALUES]; } region_list;

/* per-layer work of one micro-batch (forward + backward, without recompute)
 * for each attention and fused-RMSNorm choice of a node, and the least */
typedef struct node_work {
    double least; /* -1 until computed */
    double by[PLC_ATTN_COUNT][2];
} node_work;

typedef struct search {
    const plc_job *job;
    plc_memory_judge *judge; /* plrun's open fits: settled after the search */
    bool oom;                /* a lowered layout could not be kept */
    plc_arena *arena;
    plc_solve_opts opts;
    plc_solution *out;
    plc_estimate est; /* scratch */
    int64_t all_cap;
    bool bound; /* branch and bound (see the file header) */
    struct node_work work[2][MAX_VALUES]; /* walk_inner's work_cache for the (tp, pp, cp) in hand */
    /* a model with experts: the work above is its dense layers' (of
     * dense_job, the job without experts: the same figures less the MoE
     * layers' own, plc_layer_times_of), computed once for every (ep, etp);
     * moe_work adds, per sp and micro-batch index, the MoE layers' share
     * for the (ep, etp) in hand (-1 until computed) */
    plc_job dense_job;
    double moe_work[2][MAX_VALUES];
    region_list regions[PLC_LAYOUT_NDIMS];
} search;

static plc_candidate candidate_of(const plc_estimate *e)
{
    plc_candidate c = {.layout = e->layout, .valid = e->valid, .fits = e->fits, .lowered = e->lowered, .open = e->open,
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
    if (c->valid && !S->bound) keep_regions(S, c);
    if (S->opts.all) keep_all(S, c);
}

static const char *arena_reason(search *S, const char *text)
{
    return text[0] ? plc_arena_strdup(S->arena, text) : "";
}

/* one fully specified candidate */
static void evaluate(search *S, const plc_layout *l);

/* does l (every dimension known) fit, by the memory model alone? */
static bool fits_memory(search *S, const plc_layout *l)
{
    if (!plc_layout_check(S->job, l, NULL, 0)) return false;
    S->est.valid = true;
    plc_memory_estimate(S->job, l, false, &S->est);
    return S->est.fits;
}

/* the leaves of l over its recompute_layers values. Block and every trade
 * memory for time monotonically in the layer count (more layers recomputed:
 * less memory, more time, never the other way), so of one node's values
 * only the one that recomputes the fewest layers and still fits is
 * estimated (found by bisection on the memory model; the most-recomputing
 * value when the objective is memory or nothing fits): every other value
 * does not fit or is dominated, and counts as pruned. --all estimates every
 * value. */
static void walk_layers(search *S, plc_layout *l)
{
    values ks;
    layer_values(S->job, l, &ks);
    if (ks.n == 0) return;
    if (S->opts.all || ks.n == 1) {
        for (int i = 0; i < ks.n; i++) {
            l->recompute_layers = ks.v[i];
            evaluate(S, l);
        }
        return;
    }
    /* most recomputing first: block's largest k, every's smallest n */
    bool block = l->recompute == PLC_RECOMPUTE_BLOCK;
    int most = block ? ks.n - 1 : 0, least = block ? 0 : ks.n - 1, pick = most;
    if (S->job->layout.objective == PLC_OBJ_TIME) {
        l->recompute_layers = ks.v[most];
        if (fits_memory(S, l)) {
            /* bisect between least (may not fit) and most (fits) */
            int lo = least, hi = most; /* invariant: hi fits, lo does not (unless equal) */
            l->recompute_layers = ks.v[lo];
            if (fits_memory(S, l)) hi = lo;
            while (block ? hi - lo > 1 : lo - hi > 1) {
                int mid = (lo + hi) / 2;
                l->recompute_layers = ks.v[mid];
                if (fits_memory(S, l)) hi = mid;
                else lo = mid;
            }
            pick = hi;
        }
    }
    S->out->pruned += ks.n - 1;
    l->recompute_layers = ks.v[pick];
    evaluate(S, l);
}

/* one fully specified candidate */
static void evaluate(search *S, const plc_layout *l)
{
    /* branch and bound: a leaf slower than the top-th best cannot be ranked,
     * whether it fits or not, so its memory is not estimated (it counts as
     * pruned by the time bound: its own time is one) */
    double cut = 0;
    if (S->bound && S->out->nranked == S->opts.top && S->job->layout.objective == PLC_OBJ_TIME)
        cut = S->out->ranked[S->opts.top - 1].step_time_s;
    if (!estimate(S->job, l, false, S->opts.all, S->opts.all || S->out->pinned, cut, S->judge, false, &S->est)) {
        S->out->pruned++;
        S->out->pruned_objective++;
        return;
    }
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

/* inner leaves per (recompute x attention x fused RMSNorm), counting each
 * layer count of block and every, for the statistics */
static int64_t rc_leaves(const plc_job *job, const inner_values *iv, int64_t pp, int64_t vpp)
{
    int64_t n = 0;
    for (int i = 0; i < iv->rc.n; i++) {
        plc_layout l = {.recompute = (plc_recompute)iv->rc.v[i], .pp = pp, .vpp = vpp};
        values ks;
        layer_values(job, &l, &ks);
        n += ks.n;
    }
    return n * iv->attn.n * iv->frms.n;
}

/* the vpp values of a schedule: those the rulebook allows with pp */
static bool vpp_fits_schedule(const plc_job *job, plc_schedule sched, int64_t vpp, int64_t pp)
{
    plc_layout l = {.schedule = sched, .vpp = vpp, .pp = pp};
    return !breaks_rule(job, &l, PLC_LD_BIT(schedule) | PLC_LD_BIT(vpp) | PLC_LD_BIT(pp));
}

/* The inner dimensions of a node that no candidate was estimated for (the
 * memory bound removed it), as the leanest values the layout block allows:
 * the "closest" layout of a no-fit report, so that what the report suggests
 * keeps the spec's pins. */
static void lean_inner(const plc_job *job, const inner_values *iv, plc_layout *l)
{
    static const int64_t rc_order[] = {PLC_RECOMPUTE_FULL, PLC_RECOMPUTE_BLOCK, PLC_RECOMPUTE_EVERY,
                                       PLC_RECOMPUTE_SELECTIVE, PLC_RECOMPUTE_NONE};
    static const int64_t attn_order[] = {PLC_ATTN_FLASH2, PLC_ATTN_FLASH1, PLC_ATTN_FUSED, PLC_ATTN_NAIVE};
    const plc_layout_spec *ls = &job->layout;
    l->micro_batch = iv->mb.n ? iv->mb.v[0] : 1;
    l->sp = iv->sp.n ? iv->sp.v[l->tp > 1 ? iv->sp.n - 1 : 0] : 0; /* on splits activations, with tp > 1 */
    l->fused_rmsnorm = iv->frms.n ? iv->frms.v[iv->frms.n - 1] : 0;
    l->schedule = plc_choice_allows(&ls->schedule, PLC_SCHED_1F1B) || !iv->sched.n ? PLC_SCHED_1F1B
                                                                                   : (plc_schedule)iv->sched.v[0];
    l->vpp = 1;
    for (int j = 0; j < iv->vpp_all.n; j++)
        if (vpp_fits_schedule(job, l->schedule, iv->vpp_all.v[j], l->pp)) { l->vpp = iv->vpp_all.v[j]; break; }
    l->recompute = PLC_RECOMPUTE_FULL;
    for (size_t i = 0; i < sizeof rc_order / sizeof rc_order[0]; i++)
        if (plc_choice_allows(&ls->recompute, rc_order[i])) { l->recompute = (plc_recompute)rc_order[i]; break; }
    l->attention = PLC_ATTN_FLASH2;
    for (size_t i = 0; i < sizeof attn_order / sizeof attn_order[0]; i++)
        if (plc_choice_allows(&ls->attention, attn_order[i])) { l->attention = (plc_attention)attn_order[i]; break; }
    values ks;
    layer_values(job, l, &ks);
    l->recompute_layers = ks.n ? ks.v[ks.n - 1] : 0; /* the most recomputed */
}

static int64_t count_inner(const plc_job *job, const inner_values *iv, int64_t pp, int64_t tp)
{
    int64_t per_sched = 0; /* leaves under each (schedule, vpp) */
    for (int i = 0; i < iv->sched.n; i++)
        for (int j = 0; j < iv->vpp_all.n; j++)
            if (vpp_fits_schedule(job, (plc_schedule)iv->sched.v[i], iv->vpp_all.v[j], pp))
                per_sched += rc_leaves(job, iv, pp, iv->vpp_all.v[j]);
    int64_t sp_n = 0;
    for (int i = 0; i < iv->sp.n; i++) if (!(iv->sp.v[i] == 1 && tp == 1 && iv->sp.n > 1)) sp_n++;
    return sp_n * per_sched * iv->mb.n;
}

/* fills w for the layout l (tp, cp, sp, micro-batch known) */
static void layer_work(const plc_job *job, plc_layout l, const inner_values *iv, node_work *w)
{
    w->least = INFINITY;
    l.recompute = PLC_RECOMPUTE_NONE;
    for (int f = 0; f < iv->attn.n; f++) {
        l.attention = (plc_attention)iv->attn.v[f];
        for (int g = 0; g < iv->frms.n; g++) {
            l.fused_rmsnorm = iv->frms.v[g];
            plc_layer_times t;
            plc_layer_times_of(job, &l, &t);
            double x = t.matmul_f + t.matmul_b + t.attn_f + t.attn_b + t.mem_f + t.mem_b + t.tp_f + t.tp_b +
                       t.cp_f + t.cp_b + t.launch_f + t.launch_b + t.ep_f + t.ep_b;
            w->by[l.attention][l.fused_rmsnorm ? 1 : 0] = x;
            if (x < w->least) w->least = x;
        }
    }
}

/* a lower bound on the step time of every leaf under the node l (all but
 * recompute, attention and fused RMSNorm known, or all but recompute);
 * work: the least per-layer work of those leaves (layer_work) */
static double time_lower_bound(const plc_job *job, const plc_layout *l, double work)
{
    int64_t micro = job->train.global_batch / l->dp / l->micro_batch;
    /* the rank with the most layers works at least this much; the bubble
     * is charged on the mean rank (time_model.c), mean / most of it */
    int64_t most = plc_rank_layers_most(job->model.layers, l->pp, l->vpp);
    double busy = (double)micro * (double)most * work;
    double mean = (double)job->model.layers / (double)l->pp;
    double bubble = 0;
    if (l->pp > 1 && (l->schedule == PLC_SCHED_GPIPE || l->schedule == PLC_SCHED_1F1B ||
                      l->schedule == PLC_SCHED_INTERLEAVED))
        bubble = plc_sched_bubble_ratio(l->schedule, l->pp, l->vpp, job->model.layers, micro, 2.0);
    return busy * (1.0 + bubble * (mean / (double)most));
}


/* may the node l be skipped? (branch and bound; mem_bound: the memory
 * lower bound of its (tp, pp, cp, dp, zero), work: as time_lower_bound's) */
static bool worse_than_top(const search *S, const plc_layout *l, double mem_bound, double work)
{
    const plc_solution *o = S->out;
    if (!S->bound || o->nranked < S->opts.top) return false;
    const plc_candidate *kth = &o->ranked[S->opts.top - 1];
    if (S->job->layout.objective == PLC_OBJ_MEMORY) return mem_bound * BOUND_MARGIN > kth->peak_bytes;
    return time_lower_bound(S->job, l, work) * BOUND_MARGIN > kth->step_time_s;
}

/* does the node base (micro-batch iv->mb.v[d]) not fit by plc_memory_node_bound,
 * and (while nothing fits) is it also no closer to fitting than the closest
 * candidates kept so far? Then neither fits nor is closer any larger
 * micro-batch of the same node (the bound never falls as the micro-batch
 * grows, and the values are ascending: divisors() and the front end sort
 * them): the leaves of all count as pruned, and the caller leaves the
 * micro-batch loop. */
static bool beyond_memory(search *S, const plc_layout *base, const inner_values *iv, int d, int64_t leaves)
{
    const plc_solution *o = S->out;
    double bound = plc_memory_node_bound(S->job, base) * BOUND_MARGIN;
    if (bound <= o->limit_bytes) return false;
    int cap = (int)(sizeof o->closest / sizeof o->closest[0]);
    if (o->nranked == 0 && (o->nclosest < cap || bound <= o->closest[cap - 1].peak_bytes)) return false;
    S->out->pruned += (int64_t)(iv->mb.n - d) * leaves;
    return true;
}

/* layer_work by sp and micro-batch index of one (tp, pp, cp), computed when
 * first needed (it does not depend on the ZeRO stage, schedule or vpp) */
typedef node_work work_cache[2][MAX_VALUES];

/* the MoE layers' share of the per-layer work of node l (sp and
 * micro-batch known; ep, etp too): added to the dense work of the node */
static double moe_work(search *S, const plc_layout *l, int d)
{
    if (S->job->model.moe.experts <= 0) return 0.0;
    double *w = &S->moe_work[l->sp ? 1 : 0][d];
    if (*w >= 0) return *w;
    double share = plc_moe_layer_share(&S->job->model);
    plc_moe_times mt;
    plc_moe_layer_times(S->job, l, &mt);
    *w = share * (mt.matmul_f + mt.matmul_b + mt.mem_f + mt.mem_b + mt.launch_f + mt.launch_b + mt.ep_f + mt.ep_b);
    return *w;
}

static void walk_inner(search *S, plc_layout base, const inner_values *iv, double mem_bound, work_cache work)
{
    const plc_job *job = S->job;
    const uint32_t outer = PLC_LD_BIT(dp) | PLC_LD_BIT(tp) | PLC_LD_BIT(pp) | PLC_LD_BIT(cp) | PLC_LD_BIT(ep) |
                           PLC_LD_BIT(etp) | PLC_LD_BIT(zero);
    for (int a = 0; a < iv->sp.n; a++) {
        base.sp = iv->sp.v[a];
        if (base.sp == 1 && base.tp == 1 && iv->sp.n > 1) continue; /* same as sp off */
        for (int b = 0; b < iv->sched.n; b++) {
            base.schedule = (plc_schedule)iv->sched.v[b];
            for (int c = 0; c < iv->vpp_all.n; c++) {
                base.vpp = iv->vpp_all.v[c];
                if (!vpp_fits_schedule(job, base.schedule, base.vpp, base.pp)) continue; /* not a value of this schedule */
                const int64_t leaves = rc_leaves(job, iv, base.pp, base.vpp); /* under each micro-batch */
                for (int d = 0; d < iv->mb.n; d++) {
                    base.micro_batch = iv->mb.v[d];
                    uint32_t known = outer | PLC_LD_BIT(sp) | PLC_LD_BIT(schedule) | PLC_LD_BIT(vpp) |
                                     PLC_LD_BIT(micro_batch);
                    /* the bounds first: a skipped node needs no legality
                     * check (its leaves count as pruned, legal or not) */
                    if (S->bound && beyond_memory(S, &base, iv, d, leaves)) break;
                    node_work *w = &work[base.sp ? 1 : 0][d];
                    double extra = 0; /* moe_work, once the dense work is known */
                    if (S->bound && S->out->nranked == S->opts.top) {
                        if (w->least < 0) layer_work(&S->dense_job, base, iv, w);
                        extra = moe_work(S, &base, d);
                        if (worse_than_top(S, &base, mem_bound, w->least + extra)) {
                            int64_t n = leaves;
                            S->out->pruned += n;
                            S->out->pruned_objective += n;
                            continue;
                        }
                    }
                    /* every inner combination is invalid for the same reason */
                    if (!S->opts.all && rejected(S->out, job, &base, known, leaves))
                        continue;
                    for (int e = 0; e < iv->rc.n; e++) {
                        base.recompute = (plc_recompute)iv->rc.v[e];
                        for (int f = 0; f < iv->attn.n; f++) {
                            base.attention = (plc_attention)iv->attn.v[f];
                            for (int g = 0; g < iv->frms.n; g++) {
                                base.fused_rmsnorm = iv->frms.v[g];
                                /* the leaf's own bound (its attention and RMSNorm) */
                                if (S->bound && S->out->nranked == S->opts.top && w->least >= 0 &&
                                    worse_than_top(S, &base, mem_bound,
                                                   w->by[base.attention][base.fused_rmsnorm ? 1 : 0] + extra)) {
                                    values ks;
                                    layer_values(job, &base, &ks);
                                    S->out->pruned += ks.n;
                                    S->out->pruned_objective += ks.n;
                                    continue;
                                }
                                walk_layers(S, &base);
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

/* every dimension pinned (recompute_layers also when the others leave it
 * one value: 0 with a policy that counts no layers) */
static bool all_pinned(const plc_job *job, const plc_layout_spec *ls, plc_layout *l)
{
    for (int d = 0; d < PLC_LD_COUNT; d++) {
        int64_t v;
        if (d == PLC_LD_recompute_layers) continue;
        /* a dense model's ep and etp are 1, pinned or not */
        if (PLC_LAYOUT_MOE_DIM(d) && job->model.moe.experts <= 0 &&
            !plc_choice_fixed(plc_layout_spec_choice(ls, (plc_layout_dim)d), &v)) {
            plc_layout_set(l, (plc_layout_dim)d, 1);
            continue;
        }
        if (!plc_choice_fixed(plc_layout_spec_choice(ls, (plc_layout_dim)d), &v)) return false;
        plc_layout_set(l, (plc_layout_dim)d, v);
    }
    int64_t v;
    if (plc_choice_fixed(&ls->recompute_layers, &v)) {
        l->recompute_layers = v;
        return true;
    }
    if (l->pp < 1 || l->vpp < 1) return false;
    values ks;
    layer_values(job, l, &ks);
    if (ks.n != 1) return false;
    l->recompute_layers = ks.v[0];
    return true;
}

/* a kept candidate whose fit is open, lowered (or with lower false, taken
 * from a lowering done before); true when it proves not to fit */
static bool settle_kept(search *S, plc_candidate *c, bool lower)
{
    if (!c->open) return false;
    plc_estimate *e = &S->est;
    memset(e, 0, sizeof *e);
    if (!estimate(S->job, &c->layout, true, true, false, 0, S->judge, lower, e)) {
        S->oom = true;
        return false;
    }
    bool dropped = c->fits && !e->fits;
    const char *reason = c->reason;
    *c = candidate_of(e);
    c->reason = e->fits ? reason : "does not fit in memory";
    return dropped;
}

/* the kept candidates whose fit is open: the first opts.settle ranked (0:
 * all), the regions' bests and a pinned layout. True when one proved not to
 * fit: the search runs again, which knows it now */
static bool settle_results(search *S)
{
    plc_solution *o = S->out;
    if (!S->judge) return false;
    bool dropped = false;
    int n = S->opts.settle > 0 && S->opts.settle < o->nranked ? S->opts.settle : o->nranked;
    for (int i = 0; i < n; i++) dropped |= settle_kept(S, &o->ranked[i], true);
    for (int i = 0; i < o->nregions; i++) dropped |= settle_kept(S, &o->regions[i].best, true);
    if (o->pinned) settle_kept(S, &o->single, true);
    for (int64_t i = 0; i < o->nall; i++) settle_kept(S, &o->all[i], false); /* those lowered above */
    /* the memory objective ranks by the peak, which may have moved */
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && plc_candidate_compare(S->job, &o->ranked[j], &o->ranked[j - 1]) < 0; j--) {
            plc_candidate t = o->ranked[j];
            o->ranked[j] = o->ranked[j - 1];
            o->ranked[j - 1] = t;
        }
    return dropped;
}

static plc_status search_once(const plc_job *job, plc_arena *a, const plc_solve_opts *opts, plc_solution *out,
                              bool *again);

/* the ep and etp values to try: 1 for a dense model; for a model with
 * experts the divisors of the routed experts (ep) and of an expert's FFN
 * width (etp) the layout block allows, those the engine runs (rules
 * ENGINE_EP, ENGINE_ETP); each (ep, etp) is then kept where ep * etp divides the
 * stage's dp * tp * cp ranks (rule EP_STAGE) */
static void expert_values(const plc_job *job, values *eps, values *etps)
{
    const plc_moe *moe = &job->model.moe;
    if (moe->experts <= 0) {
        eps->n = etps->n = 1;
        eps->v[0] = etps->v[0] = 1;
        return;
    }
    divisors(eps, &job->layout.ep, moe->experts);
    legal_alone(job, eps, PLC_LD_ep);
    divisors(etps, &job->layout.etp, moe->expert_ffn_hidden > 0 ? moe->expert_ffn_hidden : 1);
    legal_alone(job, etps, PLC_LD_etp);
}

plc_status plc_solve_opts_run(const plc_job *job, plc_arena *a, const plc_solve_opts *opts, plc_solution *out)
{
    double t0 = now_s();
    plc_memory_judge *judge = opts ? opts->judge : NULL;
    int64_t calls = judge ? judge->calls : 0;
    plc_status rc = PLC_OK;
    bool again = true;
    while (again && rc == PLC_OK) rc = search_once(job, a, opts, out, &again);
    out->lowered = judge ? judge->calls - calls : 0;
    out->seconds = now_s() - t0;
    return rc;
}

static plc_status search_once(const plc_job *job, plc_arena *a, const plc_solve_opts *opts, plc_solution *out,
                              bool *again)
{
    *again = false;
    memset(out, 0, sizeof *out);
    if (job_usable(job, out->error, sizeof out->error)) return PLC_E_INPUT;
    /* plrun: a model its lowering refuses runs in no layout; said as the
     * reason, not as every layout failing to fit */
    if (job->train.engine == PLC_ENGINE_PLRUN && opts && opts->judge && opts->judge->model &&
        opts->judge->model(job, out->error, sizeof out->error))
        return PLC_E_INPUT;
    search *S = calloc(1, sizeof *S);
    if (!S) {
        snprintf(out->error, sizeof out->error, "out of memory");
        return PLC_E_SYSTEM;
    }
    S->job = job;
    S->dense_job = *job;
    memset(&S->dense_job.model.moe, 0, sizeof S->dense_job.model.moe);
    S->arena = a;
    S->out = out;
    S->opts = opts ? *opts : (plc_solve_opts){0};
    S->judge = S->opts.judge;
    if (S->opts.top <= 0) S->opts.top = 10;
    S->bound = !S->opts.all && !S->opts.exhaustive;
    out->ranked = PLC_NEW_ARRAY(a, plc_candidate, S->opts.top);
    out->limit_bytes = job->layout.memory_limit * job->cluster.hw.mem_bytes;

    const plc_layout_spec *ls = &job->layout;
    const plc_model *m = &job->model;
    int64_t gpus = plc_cluster_gpus(&job->cluster);
    plc_layout pinned_layout;
    if (all_pinned(job, ls, &pinned_layout)) {
        out->pinned = true;
        evaluate(S, &pinned_layout);
        /* the single candidate, fit or not, with its time */
        plc_estimate *e = &S->est;
        if (e->valid && !e->fits) plc_time_estimate(job, &pinned_layout, e);
        out->single = candidate_of(e);
        out->single.reason = arena_reason(S, e->reason);
    } else {
        inner_values iv;
        values tps, pps, cps, zeros, eps, etps;
        expert_values(job, &eps, &etps);
        divisors(&tps, &ls->tp, gpus);
        enum_values(&iv.sp, &ls->sp, 2);
        enum_values(&iv.sched, &ls->schedule, PLC_SCHED_COUNT);
        /* the zero-bubble schedules are searched only where the layout block
         * names them: the memory replay (memory_plrun.c) does not yet hold
         * a split backward's tensors until its W */
        if (ls->schedule.kind == PLC_CHOICE_AUTO) {
            int keep = 0;
            for (int i = 0; i < iv.sched.n; i++)
                if (!plc_schedule_splits((plc_schedule)iv.sched.v[i])) iv.sched.v[keep++] = iv.sched.v[i];
            iv.sched.n = keep;
        }
        enum_values(&iv.rc, &ls->recompute, PLC_RECOMPUTE_COUNT);
        enum_values(&iv.attn, &ls->attention, PLC_ATTN_COUNT);
        enum_values(&iv.frms, &ls->fused_rmsnorm, 2);
        legal_alone(job, &iv.frms, PLC_LD_fused_rmsnorm);
        if (m->arch == PLC_ARCH_GPT && iv.frms.n > 1) iv.frms.n = 1; /* LayerNorm: the choice changes nothing */
        enum_values(&zeros, &ls->zero, 4);
        vpp_values(job, &iv.vpp_all, &ls->vpp);
        int64_t nbatch_div = 0;
        int64_t *batch_div = all_divisors(job->train.global_batch, &nbatch_div);
        if (!batch_div) {
            free(S);
            snprintf(out->error, sizeof out->error, "out of memory");
            return PLC_E_SYSTEM;
        }
        if (job->train.precision == PLC_PREC_FP32 && ls->attention.kind == PLC_CHOICE_AUTO)
            enum_values(&iv.attn, &ls->attention, PLC_ATTN_FLASH1); /* naive, fused */
        legal_alone(job, &iv.sp, PLC_LD_sp);
        legal_alone(job, &iv.sched, PLC_LD_schedule);
        legal_alone(job, &iv.rc, PLC_LD_recompute);
        legal_alone(job, &iv.attn, PLC_LD_attention);
        legal_alone(job, &zeros, PLC_LD_zero);
        for (int i = 0; i < tps.n; i++) {
            int64_t tp = tps.v[i];
            plc_layout part = {.tp = tp};
            if (rejected(out, job, &part, PLC_LD_BIT(tp), 1)) continue;
            divisors(&pps, &ls->pp, gpus / tp);
            for (int j = 0; j < pps.n; j++) {
                int64_t pp = pps.v[j];
                part.pp = pp;
                if (rejected(out, job, &part, PLC_LD_BIT(tp) | PLC_LD_BIT(pp), 1)) continue;
                divisors(&cps, &ls->cp, gpus / (tp * pp));
                for (int k = 0; k < cps.n; k++) {
                    int64_t cp = cps.v[k];
                    int64_t dp = gpus / (tp * pp * cp);
                    part.cp = cp;
                    part.dp = dp;
                    if (!plc_choice_allows(&ls->dp, dp)) {
                        out->invalid++;
                        out->invalid_dp_pinned++;
                        continue;
                    }
                    const uint32_t degrees = PLC_LD_BIT(tp) | PLC_LD_BIT(pp) | PLC_LD_BIT(cp) | PLC_LD_BIT(dp);
                    if (rejected(out, job, &part, degrees, 1))
                        continue;
                    divisors_among(&iv.mb, &ls->micro_batch, job->train.global_batch / dp, batch_div, nbatch_div);
                    for (int w = 0; w < 2; w++)
                        for (int d = 0; d < iv.mb.n; d++) S->work[w][d].least = -1;
                    for (int e = 0; e < eps.n * etps.n; e++) {
                        part.ep = eps.v[eps.n - 1 - e / etps.n]; /* the most expert parallelism first: the bound tightens sooner */
                        part.etp = etps.v[e % etps.n];
                        if (rejected(out, job, &part, degrees | PLC_LD_BIT(ep) | PLC_LD_BIT(etp), 1)) continue;
                        for (int w = 0; w < 2; w++)
                            for (int d = 0; d < iv.mb.n; d++) S->moe_work[w][d] = -1;
                        for (int z = 0; z < zeros.n; z++) {
                            int64_t zero = zeros.v[z];
                            /* without data or context parallelism every stage is the same */
                            if (dp * cp == 1 && zero > zeros.v[0]) continue;
                            plc_layout base = {.dp = dp, .tp = tp, .pp = pp, .cp = cp, .ep = part.ep, .etp = part.etp,
                                               .zero = zero};
                            double bound = plc_memory_lower_bound_of(job, &base);
                            if (bound > out->limit_bytes) {
                                int64_t n = count_inner(job, &iv, pp, tp);
                                out->pruned += n;
                                if (n > 0) { /* a representative for "closest" output */
                                    plc_candidate c = {.layout = base, .valid = true, .peak_bytes = bound,
                                                       .reason = "weights, gradients and optimizer state alone exceed the limit"};
                                    lean_inner(job, &iv, &c.layout);
                                    keep_closest(S, &c);
                                }
                                continue;
                            }
                            walk_inner(S, base, &iv, bound, S->work);
                        }
                    }
                }
            }
        }
        free(batch_div);
    }
    out->enumerated = out->invalid + out->pruned + out->evaluated;
    int nregions = 0;
    for (int d = 0; d < PLC_LAYOUT_NDIMS; d++) nregions += S->regions[d].n;
    out->regions = PLC_NEW_ARRAY(a, plc_region, nregions ? nregions : 1);
    for (int d = 0; d < PLC_LAYOUT_NDIMS; d++)
        for (int i = 0; i < S->regions[d].n; i++) out->regions[out->nregions++] = S->regions[d].r[i];
    *again = settle_results(S);
    bool oom = S->oom;
    free(S);
    if (oom) {
        snprintf(out->error, sizeof out->error, "out of memory");
        return PLC_E_SYSTEM;
    }
    return PLC_OK;
}

bool plc_degrees_legal(const plc_job *job, plc_layout *example)
{
    const plc_layout_spec *ls = &job->layout;
    int64_t gpus = plc_cluster_gpus(&job->cluster), mb = 0;
    uint32_t mb_bit = plc_choice_fixed(&ls->micro_batch, &mb) ? PLC_LD_BIT(micro_batch) : 0;
    values tps, pps, cps;
    divisors(&tps, &ls->tp, gpus);
    for (int i = 0; i < tps.n; i++) {
        plc_layout part = {.tp = tps.v[i], .micro_batch = mb};
        if (breaks_rule(job, &part, PLC_LD_BIT(tp))) continue;
        divisors(&pps, &ls->pp, gpus / part.tp);
        for (int j = 0; j < pps.n; j++) {
            part.pp = pps.v[j];
            if (breaks_rule(job, &part, PLC_LD_BIT(tp) | PLC_LD_BIT(pp))) continue;
            divisors(&cps, &ls->cp, gpus / (part.tp * part.pp));
            for (int k = 0; k < cps.n; k++) {
                part.cp = cps.v[k];
                part.dp = gpus / (part.tp * part.pp * part.cp);
                uint32_t known = PLC_LD_BIT(tp) | PLC_LD_BIT(pp) | PLC_LD_BIT(cp) | PLC_LD_BIT(dp) | mb_bit;
                if (!plc_choice_allows(&ls->dp, part.dp) || breaks_rule(job, &part, known)) continue;
                if (example) *example = part;
                return true;
            }
        }
    }
    return false;
}

plc_status plc_solve(const plc_job *job, plc_arena *a, plc_solution *out)
{
    return plc_solve_opts_run(job, a, NULL, out);
}
