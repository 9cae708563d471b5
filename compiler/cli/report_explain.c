/* report_explain.c: plc explain: why the winner won. Memory per rank by stage
 * and component, the step-time breakdown, and for every layout dimension the
 * best candidate with another value there and why it lost. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/cli/cli_int.h"

#include "compiler/solver/solver.h"

/* ---- efficiencies and the largest uncertainty ----------------------------
 * The GEMM figures of the catalog were fitted on shapes with K from 256 to
 * 16384 and outputs (M x N) from 256 x 256 to about 7000 x 16000 (the
 * measurements its comments cite); a GEMM outside that is extrapolated. */
#define MEASURED_K_MIN 256.0
#define MEASURED_K_MAX 16384.0
#define MEASURED_AREA_MIN 65536.0
#define MEASURED_AREA_MAX 1.2e8

typedef struct eff_report {
    plc_gemm_shape g[PLC_LAYER_GEMMS];
    double eff[PLC_LAYER_GEMMS];
    double lo, hi;      /* the layer's GEMM efficiencies, of the precision's peak */
    double attn;        /* a tiled kernel's share of peak; 0 for materialising ones */
    double share;       /* of the step, the time the uncertainty concerns */
    char what[200];     /* the largest source of uncertainty */
} eff_report;

static bool outside_measured(const plc_gemm_shape *g)
{
    double area = (double)g->M * (double)g->N, k = (double)g->K;
    return k < MEASURED_K_MIN || k > MEASURED_K_MAX || area < MEASURED_AREA_MIN || area > MEASURED_AREA_MAX;
}

/* the candidates, each with the share of the step it concerns; the largest
 * is named */
static void eff_report_of(const plc_job *job, const plc_estimate *w, eff_report *r)
{
    const plc_hw *hw = &job->cluster.hw;
    plc_precision p = job->train.precision;
    memset(r, 0, sizeof *r);
    plc_layer_gemms(job, &w->layout, r->g);
    double t_all = 0, t_out = 0;
    int far = -1;
    r->lo = 1, r->hi = 0;
    for (int i = 0; i < PLC_LAYER_GEMMS; i++) {
        r->eff[i] = plc_matmul_efficiency(hw, p, r->g[i].M, r->g[i].N, r->g[i].K);
        r->lo = fmin(r->lo, r->eff[i]);
        r->hi = fmax(r->hi, r->eff[i]);
        double t = plc_cost_matmul(hw, p, r->g[i].M, r->g[i].N, r->g[i].K);
        t_all += t;
        if (outside_measured(&r->g[i])) { t_out += t; if (far < 0 || r->eff[i] < r->eff[far]) far = i; }
    }
    bool tiled = w->layout.attention == PLC_ATTN_FLASH1 || w->layout.attention == PLC_ATTN_FLASH2;
    r->attn = tiled ? plc_attention_efficiency(hw, w->layout.attention) : 0;
    double step = w->step_time_s > 0 ? w->step_time_s : 1;
    double compute = w->time[PLC_TIME_COMPUTE] / step;
    double comm = (w->time[PLC_TIME_COMM_TP] + w->time[PLC_TIME_COMM_CP] + w->time[PLC_TIME_COMM_PP] +
                   w->time[PLC_TIME_COMM_DP] + w->time[PLC_TIME_COMM_ZERO] + w->time[PLC_TIME_BUBBLE]) / step;
    bool calibrated_gpu = strncmp(hw->name, "A100", 4) == 0 || strncmp(hw->name, "H100", 4) == 0;
    r->share = compute;
    snprintf(r->what, sizeof r->what,
             "compute at framework_efficiency %.2f (fitted on calibration/; bench/fidelity --loso gives its out-of-sample error)",
             hw->framework_eff);
    if (!calibrated_gpu)
        snprintf(r->what, sizeof r->what, "compute: no measured run on %s; framework_efficiency is carried over from A100 and H100 runs",
                 hw->name);
    if (p == PLC_PREC_FP8)
        snprintf(r->what, sizeof r->what, "compute: fp8 GEMM efficiency is derived from the bf16 fits; calibration/ has no fp8 run");
    if (far >= 0 && t_all > 0 && compute * t_out / t_all > 0.5 * compute) {
        const plc_gemm_shape *g = &r->g[far];
        r->share = compute * t_out / t_all;
        snprintf(r->what, sizeof r->what,
                 "GEMM %s %lldx%lldx%lld (MxNxK) is outside the measured shapes (K %g-%g, MxN %g-%g): its %.0f%% is extrapolated",
                 g->name, (long long)g->M, (long long)g->N, (long long)g->K, MEASURED_K_MIN, MEASURED_K_MAX,
                 MEASURED_AREA_MIN, MEASURED_AREA_MAX, 100.0 * r->eff[far]);
    }
    if (comm > r->share) {
        const plc_engine_profile *e = &job->engine;
        bool overlaps = e->tp_overlap > 0 || e->grad_reduce_overlap > 0 || e->param_gather_overlap > 0 ||
                        e->p2p_overlap > 0;
        r->share = comm;
        if (overlaps)
            snprintf(r->what, sizeof r->what,
                     "exposed communication and bubble: how much of it the %s profile hides, what its hidden collectives "
                     "cost the compute under them (overlap_sm_share %.2f) and NCCL's efficiency at this scale",
                     plc_engine_name(job->train.engine), e->overlap_sm_share);
        else
            snprintf(r->what, sizeof r->what,
                     "exposed communication and bubble: the %s profile overlaps none of it; NCCL's efficiency at this scale",
                     plc_engine_name(job->train.engine));
    }
}

/* Memory's least certain part for an engine other than plrun (whose
 * memory is its plan's, exact): the share of the churning memory
 * (activations, logits, temporaries) a caching allocator loses to
 * fragmentation, on the peak stage, against the margin to the limit */
static double alloc_share(const plc_job *job, const plc_estimate *w)
{
    const double *c = w->stage_mem[w->peak_stage];
    return job->cluster.hw.alloc_overhead * (c[PLC_MEM_ACTIVATIONS] + c[PLC_MEM_LOGITS] + c[PLC_MEM_TEMPORARIES]);
}

static void memory_uncertainty(FILE *out, const plc_job *job, const plc_estimate *w)
{
    double share = alloc_share(job, w), margin = w->limit_bytes - w->peak_bytes;
    if (share <= 0) return;
    fprintf(out, "memory's least certain part: the allocator share, %.2f GiB on stage %d (alloc_overhead %.2f of "
                 "activations, logits and temporaries; engines.yaml gives its source); the peak is %.2f GiB %s the "
                 "limit%s\n\n",
            share / PLC_GIB, w->peak_stage, job->cluster.hw.alloc_overhead, fabs(margin) / PLC_GIB,
            margin >= 0 ? "below" : "above",
            fabs(margin) < share ? ", so whether it fits turns on that figure" : "");
}

static void efficiency_lines(FILE *out, const plc_job *job, const plc_estimate *w)
{
    const plc_hw *hw = &job->cluster.hw;
    eff_report r;
    eff_report_of(job, w, &r);
    fprintf(out, "efficiencies (catalog entry %s; each figure's source is its comment there, docs/solver.md):\n", hw->name);
    fprintf(out, "  GEMMs %.0f-%.0f%% of the %s peak (matmul_efficiency %.2f x framework_efficiency %.2f x shape: "
                 "matmul_half_dim %g, matmul_half_area %g)\n",
            100 * r.lo, 100 * r.hi, plc_precision_name(job->train.precision), hw->matmul_eff, hw->framework_eff,
            hw->matmul_half_dim, hw->matmul_half_area);
    if (r.attn > 0) fprintf(out, "  attention %s %.0f%% of peak (attention_efficiency %.2f);", plc_attention_name(w->layout.attention),
                            100 * r.attn, hw->attn_eff);
    else fprintf(out, "  attention %s as GEMMs and HBM traffic;", plc_attention_name(w->layout.attention));
    fprintf(out, " element-wise %.0f%% of HBM bandwidth; collectives %.0f%% of link bandwidth\n", 100 * hw->hbm_eff,
            100 * hw->comm_eff);
    fprintf(out, "largest uncertainty (%.0f%% of the step): %s\n", 100 * r.share, r.what);
}

static void efficiency_yaml(plc_yaml *y, const plc_job *job, const plc_estimate *w)
{
    const plc_hw *hw = &job->cluster.hw;
    eff_report r;
    eff_report_of(job, w, &r);
    plc_yaml_map(y, "efficiencies");
    plc_yaml_str(y, "catalog_entry", hw->name);
    plc_yaml_num(y, "gemm_min", r.lo);
    plc_yaml_num(y, "gemm_max", r.hi);
    plc_yaml_num(y, "matmul_efficiency", hw->matmul_eff);
    plc_yaml_num(y, "framework_efficiency", hw->framework_eff);
    plc_yaml_num(y, "matmul_half_dim", hw->matmul_half_dim);
    plc_yaml_num(y, "matmul_half_area", hw->matmul_half_area);
    plc_yaml_num(y, "attention", r.attn);
    plc_yaml_num(y, "hbm_efficiency", hw->hbm_eff);
    plc_yaml_num(y, "comm_efficiency", hw->comm_eff);
    plc_yaml_map(y, "uncertainty");
    plc_yaml_num(y, "step_share", r.share);
    plc_yaml_str(y, "source", r.what);
    plc_yaml_num(y, "alloc_share_bytes", alloc_share(job, w));
    plc_yaml_num(y, "memory_margin_bytes", w->limit_bytes - w->peak_bytes);
    plc_yaml_map_end(y);
    plc_yaml_map_end(y);
}

static void memory_table(FILE *out, const plc_estimate *e)
{
    fprintf(out, "memory per rank, GiB (limit %.1f; peak %.2f on stage %d):\n", e->limit_bytes / PLC_GIB,
            e->peak_bytes / PLC_GIB, e->peak_stage);
    fprintf(out, "  %-6s %6s", "stage", "layers");
    for (int c = 0; c < PLC_MEM_COUNT; c++) fprintf(out, " %11s", plc_mem_component_name((plc_mem_component)c));
    fprintf(out, " %9s %12s\n", "total", "params/rank");
    for (int s = 0; s < e->stages; s++) {
        double total = 0;
        fprintf(out, "  %-6d %6lld", s, (long long)e->stage_layers[s]);
        for (int c = 0; c < PLC_MEM_COUNT; c++) {
            fprintf(out, " %11.2f", e->stage_mem[s][c] / PLC_GIB);
            total += e->stage_mem[s][c];
        }
        fprintf(out, " %9.2f %12.4g%s\n", total / PLC_GIB, e->stage_params[s], s == e->peak_stage ? "  <- peak" : "");
    }
}

/* the regions the winner is not in: for each dimension, the best candidate
 * with another value there; dimensions whose best is the same layout are
 * one group (a runner-up that differs in tp, sp and micro_batch at once is
 * shown once), each with that layout's full estimate */
typedef struct region_group {
    int dims[PLC_LAYOUT_NDIMS];
    int ndims;
    const plc_candidate *best;
    bool have_est;
    plc_estimate est;
} region_group;

static int region_groups(const plc_job *job, const plc_solution *s, const plc_estimate *w, region_group *g)
{
    int ng = 0;
    for (int d = 0; d < PLC_LAYOUT_NDIMS; d++) {
        int64_t mine = plc_layout_dim_value(&w->layout, d);
        const plc_region *best = NULL;
        for (int i = 0; i < s->nregions; i++) {
            const plc_region *r = &s->regions[i];
            if (r->dim != d || r->value == mine) continue;
            if (!best || plc_candidate_compare(job, &r->best, &best->best) < 0) best = r;
        }
        if (!best) continue;
        int k;
        for (k = 0; k < ng; k++)
            if (plc_layout_equal(&g[k].best->layout, &best->best.layout)) break;
        if (k == ng) {
            g[ng].ndims = 0;
            g[ng].best = &best->best;
            g[ng].have_est = best->best.valid && plc_estimate_layout_judged(job, &best->best.layout, plc_cli_judge(), &g[ng].est) == 0 &&
                             g[ng].est.valid;
            ng++;
        }
        g[k].dims[g[k].ndims++] = d;
    }
    return ng;
}

/* the memory component that grows most over the winner's at the peak stage */
static int worst_component(const plc_estimate *e, const plc_estimate *w)
{
    int worst = 0;
    double most = -1e300;
    for (int c = 0; c < PLC_MEM_COUNT; c++) {
        double grow = e->stage_mem[e->peak_stage][c] - w->stage_mem[w->peak_stage][c];
        if (grow > most) { most = grow; worst = c; }
    }
    return worst;
}

static void time_table(FILE *out, const plc_estimate *e)
{
    fprintf(out, "step time %.3f s (%lld micro-batches per data-parallel rank), %.0f tokens/s, MFU %.1f%%:\n",
            e->step_time_s, (long long)e->micro_batches, e->tokens_per_s, 100.0 * e->mfu);
    for (int c = 0; c < PLC_TIME_COUNT; c++) {
        if (e->time[c] <= 0) continue;
        fprintf(out, "  %-13s %9.3f s %6.1f%%\n", plc_time_component_name((plc_time_component)c), e->time[c],
                100.0 * e->time[c] / e->step_time_s);
    }
}

/* Regions the search has no estimate for: every layout there was pruned by
 * the memory lower bound (weights, gradients and optimizer state alone
 * exceed the limit). For the dimensions that bound depends on (tp, pp, cp,
 * zero), each value the layout block allows that no region holds is shown
 * through the winner moved there (dp taking up the GPUs left), estimated in
 * full, with the memory component that grows most. */
typedef struct empty_region {
    int dim;
    int64_t value;
    plc_estimate est;
} empty_region;

static bool has_region(const plc_solution *s, int dim, int64_t v)
{
    for (int i = 0; i < s->nregions; i++)
        if (s->regions[i].dim == dim && s->regions[i].value == v) return true;
    return false;
}

static int empty_regions(const plc_job *job, const plc_solution *s, const plc_estimate *w, empty_region *out, int max)
{
    static const char *const dims[] = {"tp", "pp", "cp", "zero"};
    const plc_layout_spec *ls = &job->layout;
    const plc_choice *choice[] = {&ls->tp, &ls->pp, &ls->cp, &ls->zero};
    int64_t gpus = plc_cluster_gpus(&job->cluster);
    int n = 0;
    for (int k = 0; k < 4 && n < max; k++) {
        int d = 0;
        while (d < PLC_LAYOUT_NDIMS && strcmp(plc_layout_dim_names[d], dims[k])) d++;
        if (d == PLC_LAYOUT_NDIMS) continue;
        int64_t hi = k == 3 ? 3 : gpus;
        for (int64_t v = k == 3 ? 0 : 1; v <= hi && n < max; v++) {
            if ((k < 3 && gpus % v) || !plc_choice_allows(choice[k], v) || v == plc_layout_dim_value(&w->layout, d) ||
                has_region(s, d, v))
                continue;
            plc_layout l = w->layout;
            if (k == 0) l.tp = v;
            if (k == 1) l.pp = v;
            if (k == 2) l.cp = v;
            if (k == 3) l.zero = v;
            if (gpus % (l.tp * l.pp * l.cp)) continue;
            l.dp = gpus / (l.tp * l.pp * l.cp);
            if (l.pp == 1) { l.vpp = 1; if (l.schedule != PLC_SCHED_GPIPE) l.schedule = PLC_SCHED_1F1B; }
            if (job->train.global_batch % l.dp || (job->train.global_batch / l.dp) % l.micro_batch) l.micro_batch = 1;
            empty_region *e = &out[n];
            if (plc_estimate_layout_judged(job, &l, plc_cli_judge(), &e->est) || !e->est.valid || e->est.fits) continue;
            e->dim = d;
            e->value = v;
            n++;
        }
    }
    return n;
}

/* ---- the values of pp the search has no region for, and why ---------------
 * Every pp from 1 to the most stages (PLC_RULES_MAX_STAGES, at most the
 * GPUs) that no region holds is given its reason, the first that applies:
 * the layout block does not allow it; a rule on pp alone (GPU_COUNT: it
 * does not divide the GPUs; PP_LAYERS; PP_MAX); a rule on the winner
 * moved there (dp taking up the GPUs left, as empty_regions does); or the
 * memory bound, the winner moved there estimated over the limit. Values
 * with the same reason are one line, worded for the first of them. */
#define PP_WHY_MAX 16
typedef struct pp_why {
    const char *tag; /* the rule's name, "LAYOUT", "MEMORY" or "SEARCH" */
    char text[256];  /* worded for values[0] */
    int64_t n, values[12];
} pp_why;

typedef struct pp_report {
    int64_t most, searched[64];
    int nsearched, nwhy;
    pp_why why[PP_WHY_MAX];
} pp_report;

/* the winner moved to dimension d = v, dp taking up the GPUs left (false
 * when the other degrees leave no whole dp) */
static bool moved_there(const plc_job *job, const plc_estimate *w, int d, int64_t v, plc_layout *l)
{
    int64_t gpus = plc_cluster_gpus(&job->cluster);
    *l = w->layout;
    if (!strcmp(plc_layout_dim_names[d], "tp")) l->tp = v;
    else if (!strcmp(plc_layout_dim_names[d], "pp")) l->pp = v;
    else if (!strcmp(plc_layout_dim_names[d], "cp")) l->cp = v;
    else if (!strcmp(plc_layout_dim_names[d], "zero")) l->zero = v;
    if (gpus % (l->tp * l->pp * l->cp)) return false;
    l->dp = gpus / (l->tp * l->pp * l->cp);
    /* pp 1 runs no interleaving, where the layout block leaves that open */
    if (l->pp == 1 && plc_choice_allows(&job->layout.vpp, 1) &&
        plc_choice_allows(&job->layout.schedule, PLC_SCHED_1F1B)) {
        l->vpp = 1;
        if (l->schedule != PLC_SCHED_GPIPE) l->schedule = PLC_SCHED_1F1B;
    }
    if (job->train.global_batch % l->dp || (job->train.global_batch / l->dp) % l->micro_batch) l->micro_batch = 1;
    return true;
}

static void pp_add(pp_report *r, const char *tag, int64_t v, const char *text)
{
    int i = 0;
    while (i < r->nwhy && strcmp(r->why[i].tag, tag)) i++;
    if (i == r->nwhy) {
        if (r->nwhy == PP_WHY_MAX) return;
        r->why[r->nwhy++] = (pp_why){.tag = tag};
        snprintf(r->why[i].text, sizeof r->why[i].text, "%s", text);
    }
    pp_why *y = &r->why[i];
    if (y->n < (int64_t)(sizeof y->values / sizeof y->values[0])) y->values[y->n] = v;
    y->n++;
}

static void pp_values(const plc_job *job, const plc_solution *s, const plc_estimate *w, pp_report *r)
{
    int pp_dim = 0;
    while (pp_dim < PLC_LAYOUT_NDIMS && strcmp(plc_layout_dim_names[pp_dim], "pp")) pp_dim++;
    int64_t gpus = plc_cluster_gpus(&job->cluster);
    memset(r, 0, sizeof *r);
    r->most = gpus < PLC_RULES_MAX_STAGES ? gpus : PLC_RULES_MAX_STAGES;
    if (pp_dim == PLC_LAYOUT_NDIMS) return;
    char msg[256];
    for (int64_t v = 1; v <= r->most; v++) {
        if (v == w->layout.pp || has_region(s, pp_dim, v)) {
            if (r->nsearched < 64) r->searched[r->nsearched++] = v;
            continue;
        }
        if (!plc_choice_allows(&job->layout.pp, v)) {
            pp_add(r, "LAYOUT", v, "the layout block does not allow it");
            continue;
        }
        plc_layout l = {.pp = v};
        plc_rule_input in = {.model = &job->model, .gpus = gpus, .global_batch = job->train.global_batch,
                             .precision = job->train.precision, .precision_known = true, .layout = l,
                             .known = PLC_LD_BIT(pp), .engine = &job->engine, .engine_id = job->train.engine};
        plc_verdict v1 = plc_layout_rules(&in);
        if (v1.rule != PLC_RULE_OK) {
            pp_add(r, plc_rule_name(v1.rule), v, plc_rule_message(&in, v1, msg, sizeof msg));
            continue;
        }
        if (!moved_there(job, w, pp_dim, v, &l)) { /* the winner's tp * cp leave no dp: its GPU count */
            in.layout = l;
            in.known = PLC_LD_BIT(tp) | PLC_LD_BIT(pp) | PLC_LD_BIT(cp);
            plc_verdict vg = plc_layout_rules(&in);
            if (vg.rule != PLC_RULE_OK) {
                char with[320];
                snprintf(with, sizeof with, "with the winner's tp and cp, %s", plc_rule_message(&in, vg, msg, sizeof msg));
                pp_add(r, plc_rule_name(vg.rule), v, with);
                continue;
            }
        }
        plc_verdict vw = plc_layout_rules_job(job, &l);
        if (vw.rule != PLC_RULE_OK) {
            char with[320];
            snprintf(with, sizeof with, "the winner moved there: %s", plc_layout_rules_job_message(job, &l, vw, msg, sizeof msg));
            pp_add(r, plc_rule_name(vw.rule), v, with);
            continue;
        }
        plc_estimate e;
        if (plc_estimate_layout_judged(job, &l, plc_cli_judge(), &e) == 0 && e.valid && !e.fits) {
            snprintf(msg, sizeof msg, "pruned by the memory bound: the winner moved there needs %.1f GiB against the "
                     "%.1f GiB limit", e.peak_bytes / PLC_GIB, e.limit_bytes / PLC_GIB);
            pp_add(r, "MEMORY", v, msg);
        } else {
            pp_add(r, "SEARCH", v, "no layout with it was estimated: each broke a rule above or a bound");
        }
    }
}

static void pp_values_text(FILE *out, const plc_job *job, const plc_solution *s, const plc_estimate *w)
{
    pp_report r;
    pp_values(job, s, w, &r);
    if (r.nwhy == 0) return;
    fprintf(out, "pp from 1 to %lld (the most stages): searched ", (long long)r.most);
    for (int i = 0; i < r.nsearched; i++) fprintf(out, "%s%lld", i ? ", " : "", (long long)r.searched[i]);
    fprintf(out, "%s; the others removed by:\n", r.nsearched ? "" : "none");
    for (int i = 0; i < r.nwhy; i++) {
        const pp_why *y = &r.why[i];
        int64_t shown = y->n < 12 ? y->n : 12;
        fprintf(out, "  %s, pp = ", y->tag);
        for (int64_t k = 0; k < shown; k++) fprintf(out, "%s%lld", k ? ", " : "", (long long)y->values[k]);
        if (y->n > shown) fprintf(out, ", ... (%lld values)", (long long)y->n);
        fprintf(out, ": %s%s\n", y->n > 1 ? "e.g. " : "", y->text);
    }
}

static void pp_values_yaml(plc_yaml *y, const plc_job *job, const plc_solution *s, const plc_estimate *w)
{
    pp_report r;
    pp_values(job, s, w, &r);
    plc_yaml_map(y, "pp_values");
    plc_yaml_int(y, "most", r.most);
    plc_yaml_seq(y, "searched");
    for (int i = 0; i < r.nsearched; i++) plc_yaml_int(y, NULL, r.searched[i]);
    plc_yaml_seq_end(y);
    plc_yaml_seq(y, "removed");
    for (int i = 0; i < r.nwhy; i++) {
        plc_yaml_map(y, NULL);
        plc_yaml_str(y, "by", r.why[i].tag);
        plc_yaml_int(y, "count", r.why[i].n);
        plc_yaml_int(y, "first", r.why[i].values[0]);
        plc_yaml_str(y, "reason", r.why[i].text);
        plc_yaml_map_end(y);
    }
    plc_yaml_seq_end(y);
    plc_yaml_map_end(y);
}

/* the degrees the rules removed before any estimate: each rule by name with
 * its count and an example ("4 by PP_LAYERS, e.g. pp = 128 is more than
 * layers = 126: every stage needs a layer") */
static void removed_by_rules(FILE *out, const plc_job *job, const plc_solution *s)
{
    if (s->invalid == 0) return;
    fprintf(out, "removed by the rules (%lld layouts; a rule on dp, tp, pp or cp counts its combination once):\n",
            (long long)s->invalid);
    for (int r = 0; r < PLC_RULE_COUNT; r++) {
        if (s->invalid_by[r] == 0) continue;
        char msg[256];
        fprintf(out, "  - %lld by %s, e.g. %s\n", (long long)s->invalid_by[r], plc_rule_name((plc_rule)r),
                plc_invalid_message(job, s, (plc_rule)r, msg, sizeof msg));
    }
    if (s->invalid_dp_pinned > 0)
        fprintf(out, "  - %lld: the dp that the GPU count leaves is not a value the layout block allows\n",
                (long long)s->invalid_dp_pinned);
}

/* the winner's range and the layouts within it (report_range.c) */
static void range_lines(FILE *out, const plc_solution *s, const plc_estimate *w, const char *no_range)
{
    fputc('\n', out);
    plc_report_bar_line(out, s, no_range);
    if (!(s->bar.lo > 0)) return;
    fprintf(out, "predicted: %.0f tokens/s (range %.0f..%.0f), MFU %.1f%% (range %.1f..%.1f%%), step %.3f s (range "
                 "%.3f..%.3f s)\n",
            w->tokens_per_s, w->tokens_per_s * s->bar.lo, w->tokens_per_s * s->bar.hi, 100.0 * w->mfu,
            100.0 * w->mfu * s->bar.lo, 100.0 * w->mfu * s->bar.hi, w->step_time_s, w->step_time_s / s->bar.hi,
            w->step_time_s / s->bar.lo);
    if (!s->pinned) plc_report_within_line(out, s->ranked, s->nranked, true, s->nranked, "; plc solve --top K lists more");
}

void plc_report_explain(FILE *out, const plc_job *job, const plc_solution *s, const plc_estimate *w,
                        const plc_explain_plan *lowered)
{
    plc_report_job_header(out, job);
    fputs("winner: ", out);
    plc_report_layout_line(out, &w->layout);
    fputs("\n\n", out);
    memory_table(out, w);
    fputc('\n', out);
    if (lowered && lowered->plan) {
        fputs("memory against the lowered plan (plc compile), per rank: the plan's exact arena\n"
              "(state + activations and temporaries at their peak) against the solver's estimate\n"
              "of the same buffers (weights to temporaries), and its full estimate:\n", out);
        plc_report_memplan(out, lowered->plan, w, lowered->stats);
        fputc('\n', out);
    } else if (lowered && lowered->why) {
        fprintf(out, "the plan's exact memory is not available: %s\n", lowered->why);
        memory_uncertainty(out, job, w);
    }
    time_table(out, w);
    fputc('\n', out);
    efficiency_lines(out, job, w);
    range_lines(out, s, w, lowered ? lowered->no_range : NULL);
    if (s->pinned) {
        fprintf(out, "\nthe layout block pins every dimension: no other layout was considered\n");
        return;
    }
    fprintf(out, "\nsearched %lld layouts (%lld fit); ties: %s.\n", (long long)s->enumerated, (long long)s->fitting,
            plc_report_tie_rule);
    removed_by_rules(out, job, s);
    pp_values_text(out, job, s, w);
    fputs("best of each rejected region (a dimension at another value than the winner's) and why it loses:\n",
          out);
    region_group g[PLC_LAYOUT_NDIMS];
    int ng = region_groups(job, s, w, g);
    char a[32], b[32];
    for (int i = 0; i < ng; i++) {
        const plc_candidate *c = g[i].best;
        fputs("  ", out);
        for (int k = 0; k < g[i].ndims; k++) {
            int d = g[i].dims[k];
            fprintf(out, "%s%s = %s", k ? ", " : "", plc_layout_dim_names[d],
                    plc_layout_dim_text(d, plc_layout_dim_value(&c->layout, d), a, sizeof a));
        }
        fputs(" (winner: ", out);
        for (int k = 0; k < g[i].ndims; k++) {
            int d = g[i].dims[k];
            fprintf(out, "%s%s = %s", k ? ", " : "", plc_layout_dim_names[d],
                    plc_layout_dim_text(d, plc_layout_dim_value(&w->layout, d), b, sizeof b));
        }
        fputs(")\n      ", out);
        const plc_estimate *e = &g[i].est;
        if (!c->valid) {
            fprintf(out, "no valid layout: %s\n", c->reason && c->reason[0] ? c->reason : "invalid");
        } else if (!c->fits) {
            fputs("nothing fits: ", out);
            plc_report_reason(out, c, s->limit_bytes);
            if (g[i].have_est) {
                int worst = worst_component(e, w);
                fprintf(out, "; %s %.1f GiB on stage %d (winner %.1f GiB)", plc_mem_component_name((plc_mem_component)worst),
                        e->stage_mem[e->peak_stage][worst] / PLC_GIB, e->peak_stage,
                        w->stage_mem[w->peak_stage][worst] / PLC_GIB);
            }
            fputc('\n', out);
        } else {
            double dt = c->step_time_s - w->step_time_s;
            if (job->layout.objective == PLC_OBJ_MEMORY)
                fprintf(out, "%.2f GiB against %.2f GiB, ", c->peak_bytes / PLC_GIB, w->peak_bytes / PLC_GIB);
            if (dt == 0) {
                fprintf(out, "ties with the winner (%.3f s/step); the tie-break rule picks the winner\n", c->step_time_s);
            } else {
                fprintf(out, "%+.3f s/step (%+.2f%%), MFU %.1f%%", dt, 100.0 * dt / w->step_time_s, 100.0 * c->mfu);
                if (g[i].have_est) {
                    int n = 0;
                    for (int k = 0; k < PLC_TIME_COUNT; k++) {
                        double d = e->time[k] - w->time[k];
                        if (fabs(d) < 5e-4 * w->step_time_s) continue;
                        fprintf(out, "%s%+.3f s %s", n++ ? ", " : ": ", d, plc_time_component_name((plc_time_component)k));
                    }
                }
                if (c->range_lo > 0) { /* the error bars (report_range.c) */
                    plc_candidate wc = {.valid = true, .fits = true, .tokens_per_s = w->tokens_per_s,
                                        .range_lo = s->bar.lo, .range_hi = s->bar.hi};
                    fputs(plc_ranges_overlap(c, &wc) ? "; within the prediction's error" : "; beyond the prediction's error",
                          out);
                }
                fputc('\n', out);
            }
        }
        fputs("      best there: ", out);
        plc_report_layout_line(out, &c->layout);
        fputc('\n', out);
    }
    empty_region *er = malloc(16 * sizeof *er);
    int ne = er ? empty_regions(job, s, w, er, 16) : 0;
    for (int i = 0; i < ne; i++) {
        const plc_estimate *e = &er[i].est;
        int d = er[i].dim, worst = worst_component(e, w);
        fprintf(out, "  %s = %s (winner: %s = %s)\n", plc_layout_dim_names[d], plc_layout_dim_text(d, er[i].value, a, sizeof a),
                plc_layout_dim_names[d], plc_layout_dim_text(d, plc_layout_dim_value(&w->layout, d), b, sizeof b));
        fprintf(out, "      nothing fits: pruned by the memory bound; the winner moved there needs %.1f GiB, %.1f GiB over "
                     "the %.1f GiB limit; %s %.1f GiB on stage %d (winner %.1f GiB)\n",
                e->peak_bytes / PLC_GIB, (e->peak_bytes - e->limit_bytes) / PLC_GIB, e->limit_bytes / PLC_GIB,
                plc_mem_component_name((plc_mem_component)worst), e->stage_mem[e->peak_stage][worst] / PLC_GIB,
                e->peak_stage, w->stage_mem[w->peak_stage][worst] / PLC_GIB);
        fputs("      for example: ", out);
        plc_report_layout_line(out, &e->layout);
        fputc('\n', out);
    }
    free(er);
}

void plc_report_explain_yaml(plc_yaml *y, const plc_job *job, const plc_solution *s, const plc_estimate *w,
                             const plc_explain_plan *lowered)
{
    plc_report_yaml_job(y, job);
    plc_report_yaml_bar(y, s, lowered ? lowered->no_range : NULL);
    plc_report_yaml_estimate(y, "winner", w, lowered ? lowered->plan : NULL);
    if (s->bar.lo > 0) {
        plc_yaml_map(y, "winner_range");
        plc_yaml_num(y, "tokens_per_s_lo", w->tokens_per_s * s->bar.lo);
        plc_yaml_num(y, "tokens_per_s_hi", w->tokens_per_s * s->bar.hi);
        plc_yaml_num(y, "mfu_lo", w->mfu * s->bar.lo);
        plc_yaml_num(y, "mfu_hi", w->mfu * s->bar.hi);
        plc_yaml_num(y, "step_time_s_lo", w->step_time_s / s->bar.hi);
        plc_yaml_num(y, "step_time_s_hi", w->step_time_s / s->bar.lo);
        plc_yaml_map_end(y);
    }
    efficiency_yaml(y, job, w);
    plc_yaml_str(y, "tie_rule", plc_report_tie_rule);
    if (!s->pinned) pp_values_yaml(y, job, s, w);
    plc_yaml_seq(y, "regions");
    region_group g[PLC_LAYOUT_NDIMS];
    int ng = s->pinned ? 0 : region_groups(job, s, w, g);
    char a[32];
    for (int i = 0; i < ng; i++) {
        const plc_candidate *c = g[i].best;
        const plc_estimate *e = &g[i].est;
        plc_yaml_map(y, NULL);
        plc_yaml_map(y, "where");
        for (int k = 0; k < g[i].ndims; k++) {
            int d = g[i].dims[k];
            plc_yaml_str(y, plc_layout_dim_names[d], plc_layout_dim_text(d, plc_layout_dim_value(&c->layout, d), a, sizeof a));
        }
        plc_yaml_map_end(y);
        plc_report_yaml_layout(y, "best", &c->layout);
        plc_yaml_bool(y, "valid", c->valid);
        plc_yaml_bool(y, "fits", c->fits);
        if (c->valid) plc_yaml_num(y, "memory_bytes", c->peak_bytes);
        if (g[i].have_est) {
            plc_yaml_num(y, "step_time_s", e->step_time_s);
            plc_yaml_num(y, "step_time_delta_s", e->step_time_s - w->step_time_s);
            if (c->fits && c->range_lo > 0) {
                plc_candidate wc = {.valid = true, .fits = true, .tokens_per_s = w->tokens_per_s,
                                    .range_lo = s->bar.lo, .range_hi = s->bar.hi};
                plc_yaml_bool(y, "within_error", plc_ranges_overlap(c, &wc));
            }
            plc_yaml_map(y, "time_delta_s");
            for (int k = 0; k < PLC_TIME_COUNT; k++)
                plc_yaml_num(y, plc_time_component_name((plc_time_component)k), e->time[k] - w->time[k]);
            plc_yaml_map_end(y);
            if (!c->fits) {
                int worst = worst_component(e, w);
                plc_yaml_str(y, "does_not_fit", plc_mem_component_name((plc_mem_component)worst));
                plc_yaml_num(y, "over_limit_bytes", e->peak_bytes - e->limit_bytes);
            }
        } else if (!c->fits) {
            char reason[320] = "";
            FILE *f = fmemopen(reason, sizeof reason - 1, "w");
            if (f) { plc_report_reason(f, c, s->limit_bytes); fclose(f); }
            plc_yaml_str(y, "reason", reason);
        }
        plc_yaml_map_end(y);
    }
    empty_region *er = s->pinned ? NULL : malloc(16 * sizeof *er);
    int ne = er ? empty_regions(job, s, w, er, 16) : 0;
    for (int i = 0; i < ne; i++) {
        const plc_estimate *e = &er[i].est;
        plc_yaml_map(y, NULL);
        plc_yaml_map(y, "where");
        plc_yaml_str(y, plc_layout_dim_names[er[i].dim], plc_layout_dim_text(er[i].dim, er[i].value, a, sizeof a));
        plc_yaml_map_end(y);
        plc_report_yaml_layout(y, "example", &e->layout);
        plc_yaml_bool(y, "valid", true);
        plc_yaml_bool(y, "fits", false);
        plc_yaml_bool(y, "pruned", true);
        plc_yaml_num(y, "memory_bytes", e->peak_bytes);
        plc_yaml_str(y, "does_not_fit", plc_mem_component_name((plc_mem_component)worst_component(e, w)));
        plc_yaml_num(y, "over_limit_bytes", e->peak_bytes - e->limit_bytes);
        plc_yaml_map_end(y);
    }
    free(er);
    plc_yaml_seq_end(y);
}
