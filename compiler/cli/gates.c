/* gates.c: the CI gates of plc check and compile (see cli_int.h).
 *
 * A gate's threshold comes from an option or from the spec's gates block
 * (the option wins); each gate prints one line naming the spec, so the log
 * of `plc check specs/NAME.plan ... --max-memory 80%` says which spec each line is
 * about. The regression gate compares with a plan compiled before: MFU and
 * tokens/s per GPU, figures that stay comparable when the cluster changes
 * (raw tokens/s grows with the GPU count and says nothing of efficiency),
 * and only for a baseline of the same model, cluster and engine unless told
 * otherwise. */
#include "compiler/cli/cli_int.h"

#include <stdlib.h>
#include <string.h>

#include "common/parse_num.h"
#include "common/plan_io.h"
#include "compiler/plantools/plantools.h"

const char plc_gates_help[] =
    "  --max-memory P      gate: peak per rank at most P of device memory (e.g. 80%)\n"
    "  --min-mfu P         gate: predicted MFU at least P (e.g. 45%)\n"
    "  --baseline PLAN     gate: compare MFU and tokens/s per GPU with a plan\n"
    "                      compiled before (same model, cluster and engine)\n"
    "  --max-regression P  ... allowing a drop of at most P (default 0%; MFU in\n"
    "                      points: 63% -> 61.5% is a 1.5% drop)\n"
    "  --regression-on F   the figure judged: mfu (default) or tokens-per-gpu\n"
    "  --allow-different[=model,cluster,engine]\n"
    "                      compare with a baseline that differs in these\n"
    "                      (all three when bare) with a note instead of an error\n"
    "                      (the spec's gates block sets max_memory, min_mfu and\n"
    "                      max_regression; an option overrides it)\n";

/* the regression gate's figures, by plc_gate_figure */
static const struct {
    const char *option; /* --regression-on's spelling */
    const char *name;   /* in reports */
} figures[] = {
    [PLC_GATE_ON_MFU] = {"mfu", "MFU"},
    [PLC_GATE_ON_TOKENS_PER_GPU] = {"tokens-per-gpu", "tokens/s per GPU"},
};

/* what a baseline is matched on, by bit of PLC_GATE_SAME_* */
static const struct {
    unsigned bit;
    const char *word;
} sameness[] = {
    {PLC_GATE_SAME_MODEL, "model"},
    {PLC_GATE_SAME_CLUSTER, "cluster"},
    {PLC_GATE_SAME_ENGINE, "engine"},
};
enum { NSAME = sizeof sameness / sizeof sameness[0] };

/* "80%" -> 0.8 */
static int percent(const char *cmd, const char *opt, const char *text, double *out)
{
    double v;
    if (plc_parse_real(text, "%", 0, 100, &v)) {
        fprintf(stderr, "plc %s: error: %s takes a percentage from 0%% to 100%% (e.g. 80%%), not '%s'\n", cmd, opt,
                text ? text : "");
        return -1;
    }
    *out = v / 100.0;
    return 0;
}

/* --allow-different's list: "model,cluster" -> bits */
static int allow_list(const char *cmd, const char *text, unsigned *out)
{
    *out = 0;
    const char *p = text;
    while (*p) {
        size_t n = strcspn(p, ",");
        int k = 0;
        while (k < NSAME && !(strlen(sameness[k].word) == n && !strncmp(p, sameness[k].word, n))) k++;
        if (k == NSAME) {
            fprintf(stderr, "plc %s: error: --allow-different takes model, cluster or engine (comma-separated), not '%.*s'\n",
                    cmd, (int)n, p);
            return -1;
        }
        *out |= sameness[k].bit;
        p += n + (p[n] == ',');
    }
    if (!*out) {
        fprintf(stderr, "plc %s: error: --allow-different= needs model, cluster or engine\n", cmd);
        return -1;
    }
    return 0;
}

int plc_gates_take_options(const char *cmd, int *argc, char **argv, plc_gates *g)
{
    memset(g, 0, sizeof *g);
    bool has_on = false;
    int out = 1;
    for (int i = 1; i < *argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < *argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--")) {
            while (i < *argc) argv[out++] = argv[i++];
            break;
        }
        if (!strcmp(a, "--allow-different")) {
            g->allow_different = PLC_GATE_SAME_MODEL | PLC_GATE_SAME_CLUSTER | PLC_GATE_SAME_ENGINE;
            continue;
        }
        if (!strncmp(a, "--allow-different=", 18)) {
            if (allow_list(cmd, a + 18, &g->allow_different)) return -1;
            continue;
        }
        if (!strcmp(a, "--max-memory")) {
            if (percent(cmd, a, v, &g->max_memory)) return -1;
            snprintf(g->from_memory, sizeof g->from_memory, "--max-memory %s", v);
        } else if (!strcmp(a, "--min-mfu")) {
            if (percent(cmd, a, v, &g->min_mfu)) return -1;
            snprintf(g->from_mfu, sizeof g->from_mfu, "--min-mfu %s", v);
        } else if (!strcmp(a, "--max-regression")) {
            if (percent(cmd, a, v, &g->max_regression)) return -1;
            g->has_regression = true;
            snprintf(g->from_regression, sizeof g->from_regression, "--max-regression %s", v);
        } else if (!strcmp(a, "--regression-on")) {
            int k = 0;
            while (k < 2 && !(v && !strcmp(v, figures[k].option))) k++;
            if (k == 2) {
                fprintf(stderr, "plc %s: error: --regression-on takes mfu or tokens-per-gpu%s%s%s\n", cmd,
                        v ? ", not '" : "", v ? v : "", v ? "'" : "");
                return -1;
            }
            g->regression_on = (plc_gate_figure)k;
            has_on = true;
        } else if (!strcmp(a, "--baseline")) {
            if (!v) {
                fprintf(stderr, "plc %s: error: --baseline needs a plan file\n", cmd);
                return -1;
            }
            g->baseline = v;
        } else {
            argv[out++] = argv[i];
            continue;
        }
        i++; /* the value */
    }
    *argc = out;
    argv[out] = NULL;
    const char *lone = g->has_regression ? "--max-regression" : has_on ? "--regression-on"
                       : g->allow_different ? "--allow-different" : NULL;
    if (lone && !g->baseline) {
        fprintf(stderr, "plc %s: error: %s needs --baseline PLAN\n", cmd, lone);
        return -1;
    }
    return 0;
}

void plc_gates_for_job(const plc_gates *o, const plc_job *job, plc_gates *g)
{
    *g = *o;
    const plc_gate_spec *s = &job->gates;
    char p[32];
    if (!o->max_memory && s->max_memory > 0) {
        g->max_memory = s->max_memory;
        snprintf(g->from_memory, sizeof g->from_memory, "gates.max_memory = %s", plc_word_percent(s->max_memory, p, sizeof p));
    }
    if (!o->min_mfu && s->min_mfu > 0) {
        g->min_mfu = s->min_mfu;
        snprintf(g->from_mfu, sizeof g->from_mfu, "gates.min_mfu = %s", plc_word_percent(s->min_mfu, p, sizeof p));
    }
    if (!o->has_regression && s->has_regression) {
        g->max_regression = s->max_regression;
        g->has_regression = true;
        snprintf(g->from_regression, sizeof g->from_regression, "gates.max_regression = %s",
                 plc_word_percent(s->max_regression, p, sizeof p));
    }
    if (!g->has_regression) snprintf(g->from_regression, sizeof g->from_regression, "the default 0%%");
}

bool plc_gates_any(const plc_gates *g) { return g->max_memory > 0 || g->min_mfu > 0 || g->baseline; }

/* ---- the baseline ------------------------------------------------------------ */

/* one difference between the baseline and the job: "model.layers  32 -> 40" */
typedef struct same_diff {
    unsigned bit;
    char text[160];
} same_diff;

static int add_int(same_diff *d, int n, unsigned bit, const char *key, int64_t old, int64_t now)
{
    if (old == now) return n;
    d[n].bit = bit;
    snprintf(d[n].text, sizeof d[n].text, "%-20s %lld -> %lld", key, (long long)old, (long long)now);
    return n + 1;
}

static int add_str(same_diff *d, int n, unsigned bit, const char *key, const char *old, const char *now)
{
    if (!strcmp(old, now)) return n;
    d[n].bit = bit;
    snprintf(d[n].text, sizeof d[n].text, "%-20s %s -> %s", key, old, now);
    return n + 1;
}

/* every difference of model shape, cluster and engine; d holds 16 */
static int differences(const plc_plan *b, const plc_job *job, same_diff *d)
{
    const plc_model *o = &b->model, *m = &job->model;
    const unsigned M = PLC_GATE_SAME_MODEL, C = PLC_GATE_SAME_CLUSTER;
    int n = 0;
    n = add_str(d, n, M, "model.arch", o->arch == PLC_ARCH_GPT ? "gpt" : "llama", m->arch == PLC_ARCH_GPT ? "gpt" : "llama");
    n = add_int(d, n, M, "model.layers", o->layers, m->layers);
    n = add_int(d, n, M, "model.hidden", o->hidden, m->hidden);
    n = add_int(d, n, M, "model.ffn_hidden", o->ffn_hidden, m->ffn_hidden);
    n = add_int(d, n, M, "model.heads", o->heads, m->heads);
    n = add_int(d, n, M, "model.kv_heads", o->kv_heads, m->kv_heads);
    n = add_int(d, n, M, "model.vocab", o->vocab, m->vocab);
    n = add_int(d, n, M, "model.seq_len", o->seq_len, m->seq_len);
    n = add_str(d, n, M, "model.positions", o->positions == PLC_POS_LEARNED ? "learned" : "rope",
                m->positions == PLC_POS_LEARNED ? "learned" : "rope");
    n = add_str(d, n, M, "model.tie_embeddings", plc_word_onoff(o->tie_embeddings), plc_word_onoff(m->tie_embeddings));
    n = add_str(d, n, C, "cluster.gpu", b->hw.name, job->cluster.hw.name);
    n = add_int(d, n, C, "cluster.nodes", b->nodes, job->cluster.nodes);
    n = add_int(d, n, C, "cluster.gpus_per_node", b->gpus_per_node, job->cluster.gpus_per_node);
    /* a plan is plrun's program (plc compile writes no other engine's) */
    n = add_str(d, n, PLC_GATE_SAME_ENGINE, "train.engine", plc_engine_name(PLC_ENGINE_PLRUN),
                plc_engine_name(job->train.engine));
    return n;
}

/* "model and cluster" (list: "model,cluster"): the categories of bits */
static const char *words(unsigned bits, bool list, char *buf, size_t size)
{
    buf[0] = 0;
    int k = 0, n = 0;
    for (int i = 0; i < NSAME; i++) n += (bits & sameness[i].bit) != 0;
    for (int i = 0; i < NSAME; i++) {
        if (!(bits & sameness[i].bit)) continue;
        size_t len = strlen(buf);
        snprintf(buf + len, size - len, "%s%s", k == 0 ? "" : list ? "," : k + 1 == n ? " and " : ", ", sameness[i].word);
        k++;
    }
    return buf;
}

int plc_gates_baseline(const char *cmd, const plc_gates *g, const plc_job *job, plc_arena *a, plc_plan *base)
{
    char err[512];
    if (plc_plan_load_file(a, g->baseline, base, err, sizeof err)) {
        fprintf(stderr, "plc %s: error: --baseline: %s\n", cmd, err);
        return -1;
    }
    same_diff d[16];
    int n = differences(base, job, d);
    unsigned differ = 0, refused = 0;
    for (int i = 0; i < n; i++) differ |= d[i].bit;
    refused = differ & ~g->allow_different;
    if (!differ) return 0;
    char w[64], l[64];
    if (refused) {
        fprintf(stderr, "plc %s: error: %s: the baseline %s is for another %s (baseline -> this spec):\n", cmd,
                job->path, g->baseline, words(refused, false, w, sizeof w));
        for (int i = 0; i < n; i++)
            if (d[i].bit & refused) fprintf(stderr, "  %s\n", d[i].text);
        fprintf(stderr, "  hint: compare with a plan of the same %s, or pass --allow-different=%s to compare anyway\n",
                w, words(refused, true, l, sizeof l));
        return -1;
    }
    fprintf(stderr, "plc %s: note: %s: the baseline %s is for another %s (allowed; baseline -> this spec):\n", cmd,
            job->path, g->baseline, words(differ, false, w, sizeof w));
    for (int i = 0; i < n; i++) fprintf(stderr, "  %s\n", d[i].text);
    return 0;
}

/* ---- the gates ------------------------------------------------------------------ */

static void add_result(plc_gate_results *res, const char *name, const char *from, double threshold, double value,
                       bool pass)
{
    if (!res || res->n >= (int)(sizeof res->r / sizeof res->r[0])) return;
    res->r[res->n++] = (plc_gate_result){name, from, threshold, value, pass};
}

/* the regression gate and the headroom line; returns 1 when the gate failed */
static int regression(const char *cmd, const plc_gates *g, const plc_job *job, const plc_estimate *e, double peak,
                      const char *what, const plc_plan *base, FILE *out, plc_gate_results *res)
{
    const char *spec = job->path;
    const double gpus_old = (double)(base->nodes * base->gpus_per_node), gpus_new = (double)plc_cluster_gpus(&job->cluster);
    const double mfu_old = base->pred.mfu, mfu_new = e->mfu;
    const double tpg_old = gpus_old > 0 ? base->pred.tokens_per_s / gpus_old : 0;
    const double tpg_new = gpus_new > 0 ? e->tokens_per_s / gpus_new : 0;
    const double tpg_change = tpg_old > 0 ? tpg_new / tpg_old - 1 : 0;
    /* MFU drops in points, tokens/s per GPU as a share of the baseline's */
    const double drop = g->regression_on == PLC_GATE_ON_MFU ? mfu_old - mfu_new : -tpg_change;
    const double allowed = g->has_regression ? g->max_regression : 0;
    const bool ok = drop <= allowed + 1e-12;
    char p1[32], p2[32], p3[32];
    fprintf(out, "%s: gate regression: MFU %s -> %s (%+.2f points), tokens/s per GPU %.6g -> %.6g (%+.2f%%), "
                 "against %s; on %s, allowed drop %s: %s\n",
            spec, plc_word_percent(mfu_old, p1, sizeof p1), plc_word_percent(mfu_new, p2, sizeof p2),
            100.0 * (mfu_new - mfu_old), tpg_old, tpg_new, 100.0 * tpg_change, g->baseline,
            g->regression_on == PLC_GATE_ON_MFU ? "MFU" : "tokens/s per GPU", plc_word_percent(allowed, p3, sizeof p3),
            ok ? "pass" : "FAIL");
    fflush(out);
    if (!ok) {
        if (g->regression_on == PLC_GATE_ON_MFU)
            fprintf(stderr, "plc %s: gate failed: %s: predicted MFU %s is %.2f points below the baseline's %s (%s), "
                            "more than %s\n",
                    cmd, spec, p2, 100.0 * drop, p1, g->baseline, g->from_regression);
        else
            fprintf(stderr, "plc %s: gate failed: %s: predicted %.6g tokens/s per GPU is %.2f%% below the baseline's "
                            "%.6g (%s), more than %s\n",
                    cmd, spec, tpg_new, 100.0 * drop, tpg_old, g->baseline, g->from_regression);
    }
    if (res) {
        res->baseline = g->baseline;
        res->on = g->regression_on;
        res->mfu_old = mfu_old;
        res->mfu_new = mfu_new;
        res->tpg_old = tpg_old;
        res->tpg_new = tpg_new;
    }
    add_result(res, "regression", g->from_regression, allowed, drop, ok);
    /* the memory headroom: the new plan's peak against its own limit */
    const double dev = job->cluster.hw.mem_bytes, limit = job->layout.memory_limit * dev;
    const bool fits = peak <= limit;
    fprintf(out, "%s: headroom: %s peak %.2f GiB per rank against the %.2f GiB limit (memory_limit %s): %.2f GiB "
                 "(%s of the limit) %s\n",
            spec, what, peak / 1073741824.0, limit / 1073741824.0, plc_word_percent(job->layout.memory_limit, p1, sizeof p1),
            (fits ? limit - peak : peak - limit) / 1073741824.0,
            plc_word_percent(limit > 0 ? (fits ? limit - peak : peak - limit) / limit : 0, p2, sizeof p2),
            fits ? "to spare" : "OVER");
    fflush(out);
    if (res) {
        res->peak_bytes = peak;
        res->limit_bytes = limit;
    }
    add_result(res, "headroom", "layout.memory_limit", job->layout.memory_limit, dev > 0 ? peak / dev : 0, fits);
    if (!fits)
        fprintf(stderr, "plc %s: gate failed: %s: %s peak memory is over the spec's memory_limit\n", cmd, spec, what);
    return !ok + !fits;
}

int plc_gates_check(const char *cmd, const plc_gates *g, const plc_job *job, const plc_estimate *e,
                    const plc_gate_memory *mem, const plc_plan *base, FILE *out, plc_gate_results *res)
{
    int failed = 0;
    char p1[32], p2[32];
    const char *spec = job->path;
    const double peak = mem ? mem->peak_bytes : e->peak_bytes;
    const char *what = mem ? mem->what : "predicted";
    if (res) memset(res, 0, sizeof *res);
    if (g->max_memory > 0) {
        double share = peak / job->cluster.hw.mem_bytes;
        bool ok = share <= g->max_memory;
        fprintf(out, "%s: gate memory: %s peak %.2f GiB per rank = %s of %.2f GiB, limit %s: %s\n", spec, what,
                peak / 1073741824.0, plc_word_percent(share, p1, sizeof p1), job->cluster.hw.mem_bytes / 1073741824.0,
                plc_word_percent(g->max_memory, p2, sizeof p2), ok ? "pass" : "FAIL");
        fflush(out);
        if (!ok)
            fprintf(stderr, "plc %s: gate failed: %s: %s peak memory %s of the device, more than %s\n", cmd, spec, what,
                    p1, g->from_memory);
        add_result(res, "memory", g->from_memory, g->max_memory, share, ok);
        failed += !ok;
    }
    if (g->min_mfu > 0) {
        bool ok = e->mfu >= g->min_mfu;
        fprintf(out, "%s: gate MFU: %s, minimum %s: %s\n", spec, plc_word_percent(e->mfu, p1, sizeof p1),
                plc_word_percent(g->min_mfu, p2, sizeof p2), ok ? "pass" : "FAIL");
        fflush(out);
        if (!ok) fprintf(stderr, "plc %s: gate failed: %s: predicted MFU %s, below %s\n", cmd, spec, p1, g->from_mfu);
        add_result(res, "mfu", g->from_mfu, g->min_mfu, e->mfu, ok);
        failed += !ok;
    }
    if (base) failed += regression(cmd, g, job, e, peak, what, base, out, res);
    return failed ? 1 : 0;
}
