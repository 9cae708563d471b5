/* report_nofit.c: "no layout fits", with its real reason. When no layout is
 * legal at all (no dp divides the batch, the degrees cannot multiply to the
 * GPU count, a pinned value), the rules that removed the combinations, each
 * with its count and an example, then the closest legal alternatives: the
 * nearest batch sizes and GPU counts, and the pins that, left to plc,
 * would make one legal. When layouts are legal but none fits in memory,
 * the closest candidates and what would make the closest one fit, found by
 * re-estimating variants of it (more recompute, a higher ZeRO stage,
 * smaller micro-batches, a leaner attention kernel, shorter sequences; a
 * variant that leaves the layout block's values says so) and by solving
 * again on larger clusters. */
#include <stdlib.h>
#include <string.h>

#include "compiler/cli/cli_int.h"
#include "compiler/plantools/plantools.h"

typedef struct variant {
    const char *what;
    plc_job job;
    plc_layout layout;
} variant;

/* " (outside the layout block's zero values)" when the variant's layout
 * takes a value the spec's layout block does not allow, else "" */
static const char *outside_block(const plc_job *job, const plc_layout *l, char *buf, size_t size)
{
    size_t n = 0;
    buf[0] = '\0';
    for (int d = 0; d < PLC_LD_COUNT; d++) {
        if (plc_choice_allows(plc_layout_spec_choice(&job->layout, (plc_layout_dim)d), plc_layout_get(l, (plc_layout_dim)d)))
            continue;
        if (n + 40 >= size) break;
        n += (size_t)snprintf(buf + n, size - n, "%s%s", n ? ", " : " (outside the layout block's ",
                              plc_layout_dim_key((plc_layout_dim)d));
    }
    if (n) snprintf(buf + n, size - n, " values)");
    return buf;
}

static void try_variant(FILE *out, const plc_job *spec, const variant *v, double *best_fix)
{
    plc_estimate *e = calloc(1, sizeof *e);
    if (!e) return;
    if (plc_estimate_layout_judged(&v->job, &v->layout, plc_cli_judge(), e) == 0 && e->valid) {
        char outside[160];
        fprintf(out, "  - %s%s: %s (%.1f GiB", v->what, outside_block(spec, &v->layout, outside, sizeof outside),
                e->fits ? "fits" : "still too large", e->peak_bytes / PLC_GIB);
        if (e->fits) fprintf(out, ", %.2f s/step, MFU %.1f%%", e->step_time_s, 100.0 * e->mfu);
        fputs(")\n", out);
        if (e->fits && best_fix) *best_fix = 1;
    }
    free(e);
}

/* ---- no legal layout --------------------------------------------------------- */

static void degrees_text(const plc_layout *l, char *buf, size_t size)
{
    snprintf(buf, size, "dp %lld, tp %lld, pp %lld, cp %lld", (long long)l->dp, (long long)l->tp, (long long)l->pp,
             (long long)l->cp);
}

enum { NEAR_STEPS = 256, NEAR_ROUNDED = 40, NEAR_UNITS = 128 };

/* v[0..n) by distance from own, nearest first (insertion: n is a few hundred) */
static void sort_by_distance(int64_t *v, int n, int64_t own)
{
    for (int i = 1; i < n; i++) {
        int64_t x = v[i], dx = x > own ? x - own : own - x;
        int j = i;
        for (; j > 0; j--) {
            int64_t y = v[j - 1], dy = y > own ? y - own : own - y;
            if (dy <= dx) break;
            v[j] = v[j - 1];
        }
        v[j] = x;
    }
}

/* The legal value of *field nearest its own, below (dir -1) or above (+1),
 * at least lo and at most hi: its neighbours one by one (NEAR_STEPS), then
 * the multiples nearest it of 2^j (the values people round to) and of each
 * of units[] (for a batch: the GPU count's divisors, each a dp it could
 * take). A bounded number of probes, so that it stays fast at any scale. */
static bool nearest_one(const plc_job *job, int64_t *field, int dir, int64_t lo, int64_t hi, const int64_t *units,
                        int nunits, int64_t *found, plc_layout *ex)
{
    const int64_t own = *field;
    int64_t cand[NEAR_STEPS + 2 * NEAR_ROUNDED + NEAR_UNITS];
    int n = 0;
    for (int64_t k = 1; k <= NEAR_STEPS; k++) {
        int64_t v = own + dir * k;
        if (v >= lo && v <= hi) cand[n++] = v;
    }
    for (int j = 1; j < 62 && n < NEAR_STEPS + 2 * NEAR_ROUNDED; j++) {
        int64_t m = INT64_C(1) << j;
        if (m > hi) break;
        int64_t v = dir < 0 ? own / m * m : (own / m + 1) * m;
        if (dir < 0 && v == own) v -= m;
        if (v >= lo && v <= hi && (dir < 0 ? v < own - NEAR_STEPS : v > own + NEAR_STEPS)) cand[n++] = v;
    }
    for (int u = 0; u < nunits && u < NEAR_UNITS; u++) {
        int64_t unit = units[u];
        if (unit < 2 || unit > hi) continue;
        int64_t v = dir < 0 ? (own - 1) / unit * unit : (own / unit + 1) * unit;
        if (v >= lo && v <= hi && (dir < 0 ? v < own - NEAR_STEPS : v > own + NEAR_STEPS)) cand[n++] = v;
    }
    sort_by_distance(cand, n, own);
    bool ok = false;
    for (int i = 0; i < n && !ok; i++) {
        if (i > 0 && cand[i] == cand[i - 1]) continue;
        *field = cand[i];
        ok = plc_degrees_legal(job, ex);
        if (ok) *found = cand[i];
    }
    *field = own;
    return ok;
}

/* "  - nodes = 8192 (65536 GPUs: dp 1024, ...) or 16384 (...)": the nearest
 * legal values of *field below and above its own; per: GPUs per unit of
 * the field (0: not a GPU count) */
static void nearest_legal(FILE *out, const plc_job *job, int64_t *field, int64_t hi, const int64_t *units, int nunits,
                          const char *what, int64_t per)
{
    int shown = 0;
    for (int dir = -1; dir <= 1; dir += 2) {
        int64_t v;
        plc_layout ex;
        if (!nearest_one(job, field, dir, 1, hi, units, nunits, &v, &ex)) continue;
        char deg[96];
        degrees_text(&ex, deg, sizeof deg);
        if (shown++) fputs(" or ", out);
        else fprintf(out, "  - %s = ", what);
        if (per > 0) fprintf(out, "%lld (%lld GPUs: %s)", (long long)v, (long long)(v * per), deg);
        else fprintf(out, "%lld (%s)", (long long)v, deg);
    }
    if (shown) fputc('\n', out);
}

/* Every combination of the degrees broke a rule: which rules, how often,
 * and the closest legal alternatives. */
static void report_no_legal(FILE *out, const plc_job *job, const plc_solution *s)
{
    int64_t gpus = plc_cluster_gpus(&job->cluster), batch = job->train.global_batch;
    fprintf(out, "no layout fits: no layout that the layout block allows is legal on %lld GPUs with global_batch = %lld "
                 "sequences\n",
            (long long)gpus, (long long)batch);
    if (s->invalid > 0) {
        fprintf(out, "why (the rules that removed the %lld layout%s searched):\n", (long long)s->invalid,
                s->invalid == 1 ? "" : "s");
        bool shown[PLC_RULE_COUNT] = {false};
        for (;;) {
            int best = -1;
            for (int r = 0; r < PLC_RULE_COUNT; r++)
                if (!shown[r] && s->invalid_by[r] > 0 && (best < 0 || s->invalid_by[r] > s->invalid_by[best])) best = r;
            if (best < 0) break;
            shown[best] = true;
            char msg[256];
            fprintf(out, "  - %lld of them, e.g. %s\n", (long long)s->invalid_by[best],
                    plc_invalid_message(job, s, (plc_rule)best, msg, sizeof msg));
        }
        if (s->invalid_dp_pinned > 0)
            fprintf(out, "  - %lld of them: the dp that the GPU count leaves (GPUs / (tp * pp * cp)) is not a value the "
                         "layout block allows\n", (long long)s->invalid_dp_pinned);
    } else {
        fprintf(out, "why: the layout block's values of dp, tp, pp and cp cannot multiply to the %lld GPUs\n", (long long)gpus);
    }
    fprintf(out, "closest legal alternatives:\n");
    plc_job alt = *job;
    /* the resolver's limits: 2^40 sequences, 2^20 nodes; a batch is tried
     * at multiples of the GPU count's largest divisors (each a dp) */
    int64_t units[NEAR_UNITS];
    int nunits = 0;
    for (int64_t d = 1; d <= gpus / d; d++) {
        if (gpus % d) continue;
        if (nunits < NEAR_UNITS) units[nunits++] = gpus / d;
    }
    nearest_legal(out, &alt, &alt.train.global_batch, INT64_C(1) << 40, units, nunits, "global_batch", 0);
    nearest_legal(out, &alt, &alt.cluster.nodes, INT64_C(1) << 20, NULL, 0, "nodes", alt.cluster.gpus_per_node);
    /* the degrees the spec restricts, each left to plc */
    static const plc_layout_dim dims[] = {PLC_LD_dp, PLC_LD_tp, PLC_LD_pp, PLC_LD_cp, PLC_LD_micro_batch};
    for (size_t i = 0; i < sizeof dims / sizeof dims[0]; i++) {
        plc_choice *c = plc_layout_spec_choice_mut(&alt.layout, dims[i]);
        if (c->kind == PLC_CHOICE_AUTO) continue;
        plc_choice kept = *c;
        c->kind = PLC_CHOICE_AUTO;
        plc_layout ex;
        if (plc_degrees_legal(&alt, &ex)) {
            char deg[96];
            degrees_text(&ex, deg, sizeof deg);
            fprintf(out, "  - %s = auto instead of the layout block's values (%s)\n", plc_layout_dim_key(dims[i]), deg);
        }
        *c = kept;
    }
}

void plc_report_no_fit(FILE *out, const plc_job *job, const plc_solution *s)
{
    char pc[32];
    if (s->nclosest == 0) {
        report_no_legal(out, job, s);
        return;
    }
    fprintf(out, "no layout fits in %.1f GiB per rank (%s of %.1f GiB)\n", s->limit_bytes / PLC_GIB,
            plc_word_percent(job->layout.memory_limit, pc, sizeof pc), job->cluster.hw.mem_bytes / PLC_GIB);
    fprintf(out, "closest candidates:\n");
    for (int i = 0; i < s->nclosest; i++) {
        fputs("  ", out);
        plc_report_layout_line(out, &s->closest[i].layout);
        fputs("\n      ", out);
        plc_report_reason(out, &s->closest[i], s->limit_bytes);
        fputc('\n', out);
    }
    const plc_layout *base = &s->closest[0].layout;
    fprintf(out, "what would make the closest one fit:\n");
    double fixed = 0;
    variant v;
    if (base->recompute != PLC_RECOMPUTE_FULL) {
        v = (variant){"recompute = full", *job, *base};
        v.layout.recompute = PLC_RECOMPUTE_FULL;
        try_variant(out, job, &v, &fixed);
    }
    for (int64_t z = base->zero + 1; z <= 3; z++) {
        static const char *names[] = {"", "zero = 1", "zero = 2", "zero = 3"};
        v = (variant){names[z], *job, *base};
        v.layout.zero = z;
        try_variant(out, job, &v, &fixed);
    }
    if (base->micro_batch > 1) {
        v = (variant){"micro_batch = 1", *job, *base};
        v.layout.micro_batch = 1;
        try_variant(out, job, &v, &fixed);
    }
    if (job->train.precision == PLC_PREC_BF16 && (base->attention != PLC_ATTN_FLASH2 || !base->fused_rmsnorm)) {
        v = (variant){"attention = flash2, fused_rmsnorm = on", *job, *base};
        v.layout.attention = PLC_ATTN_FLASH2;
        v.layout.fused_rmsnorm = 1;
        try_variant(out, job, &v, &fixed);
    }
    if (base->tp > 1 && !base->sp) {
        v = (variant){"sp = on", *job, *base};
        v.layout.sp = 1;
        try_variant(out, job, &v, &fixed);
    }
    for (int64_t div = 2; div <= 4; div *= 2) {
        if (job->model.seq_len % (div * base->cp)) break;
        static const char *names[] = {"", "", "seq_len halved", "", "seq_len quartered"};
        v = (variant){names[div], *job, *base};
        v.job.model.seq_len = job->model.seq_len / div;
        try_variant(out, job, &v, &fixed);
    }
    /* larger clusters: solve again with dp free */
    for (int64_t mult = 2; mult <= 16; mult *= 2) {
        plc_job big = *job;
        big.cluster.nodes *= mult;
        big.layout.dp.kind = PLC_CHOICE_AUTO;
        plc_arena a;
        plc_arena_init(&a);
        plc_solution bs;
        if (plc_solve_opts_run(&big, &a, &(plc_solve_opts){.judge = plc_cli_judge(), .settle = 1}, &bs) == 0 && bs.nranked > 0) {
            fprintf(out, "  - %lld GPUs (%lld nodes): fits with ", (long long)plc_cluster_gpus(&big.cluster),
                    (long long)big.cluster.nodes);
            plc_report_layout_line(out, &bs.ranked[0].layout);
            fprintf(out, " (%.1f GiB, MFU %.1f%%)\n", bs.ranked[0].peak_bytes / PLC_GIB, 100.0 * bs.ranked[0].mfu);
            plc_arena_free(&a);
            fixed = 1;
            break;
        }
        plc_arena_free(&a);
    }
    if (!fixed) fprintf(out, "  nothing tried here fits: the model needs a larger device or a smaller model\n");
}
