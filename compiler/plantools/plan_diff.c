/* plan_diff.c: plc diff's semantic comparison of two plans. First every
 * setting that differs (model, train, cluster, catalog figures, layout), by
 * the names of the .plan language, with old and new values; then the
 * predictions; then each stage's program (instruction counts by op and
 * communication volume by kind); then a unified diff of one rank's
 * instruction listing (diff -u on two temporary dumps). Two plans are equal
 * when their settings and every stage's instruction listing are. */
#include "compiler/plantools/plantools_int.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/plan_io.h"
#include "compiler/solver/solver.h"

/* ---- settings ------------------------------------------------------------- */

typedef struct settings {
    plc_plan_setting *s;
    int n, max;
} settings;

static void put(settings *S, const char *name, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void put(settings *S, const char *name, const char *fmt, ...)
{
    if (S->n >= S->max) return;
    plc_plan_setting *e = &S->s[S->n++];
    snprintf(e->name, sizeof e->name, "%s", name);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->text, sizeof e->text, fmt, ap);
    va_end(ap);
}

int plc_plan_settings(const plc_plan *p, plc_plan_setting *out, int max)
{
    settings S = {out, 0, max};
    const plc_model *m = &p->model;
    const plc_train *t = &p->train;
    put(&S, "model.name", "%s", m->name);
    put(&S, "model.layers", "%lld", (long long)m->layers);
    put(&S, "model.hidden", "%lld", (long long)m->hidden);
    put(&S, "model.ffn_hidden", "%lld", (long long)m->ffn_hidden);
    put(&S, "model.heads", "%lld", (long long)m->heads);
    put(&S, "model.kv_heads", "%lld", (long long)m->kv_heads);
    put(&S, "model.vocab", "%lld", (long long)m->vocab);
    put(&S, "model.seq_len", "%lld", (long long)m->seq_len);
    put(&S, "model.tie_embeddings", "%s", plc_word_onoff(m->tie_embeddings));
    put(&S, "model.norm_eps", "%g", m->norm_eps);
    put(&S, "model.rope_theta", "%g", m->rope_theta);
    put(&S, "cluster.gpu", "%s", p->hw.name);
    put(&S, "cluster.nodes", "%lld", (long long)p->nodes);
    put(&S, "cluster.gpus_per_node", "%lld", (long long)p->gpus_per_node);
    char q[64];
#define HW_SETTING(member, key, unit) put(&S, "cluster." key, "%s", plc_word_quantity(unit, p->hw.member, q, sizeof q));
    PLC_HW_FIELDS(HW_SETTING)
#undef HW_SETTING
    put(&S, "train.global_batch", "%lld", (long long)t->global_batch);
    put(&S, "train.steps", "%lld", (long long)t->steps);
    put(&S, "train.precision", "%s", plc_precision_name(t->precision) ? plc_precision_name(t->precision) : "?");
    put(&S, "train.seed", "%llu", (unsigned long long)t->seed);
    put(&S, "train.data", "%s", t->data_path ? t->data_path : "synthetic");
    put(&S, "train.adamw.beta1", "%g", t->beta1);
    put(&S, "train.adamw.beta2", "%g", t->beta2);
    put(&S, "train.adamw.eps", "%g", t->eps);
    put(&S, "train.adamw.weight_decay", "%g", t->weight_decay);
    put(&S, "train.lr.peak", "%g", t->lr_peak);
    put(&S, "train.lr.floor", "%g", t->lr_floor);
    put(&S, "train.lr.warmup", "%lld", (long long)t->warmup_steps);
    put(&S, "train.lr.decay_steps", "%lld", (long long)t->decay_steps);
    put(&S, "train.grad_clip", "%g", t->grad_clip);
    for (int d = 0; d < PLC_LAYOUT_NDIMS; d++) {
        char name[48], v[32];
        snprintf(name, sizeof name, "layout.%s", plc_layout_dim_names[d]);
        put(&S, name, "%s", plc_layout_dim_text(d, plc_layout_dim_value(&p->layout, d), v, sizeof v));
    }
    return S.n;
}

/* ---- program statistics ----------------------------------------------------- */

typedef struct prog_stats {
    uint64_t by_op[PLC_OP_COUNT];
    double comm_bytes[PLC_OP_COUNT]; /* bytes moved per rank, by collective or message kind */
} prog_stats;

static bool is_comm(plc_op op)
{
    return plc_op_comm(op) != PLC_COMM_NONE;
}

static void stats_of(const plc_plan *p, const plc_program *g, prog_stats *s)
{
    memset(s, 0, sizeof *s);
    for (uint32_t i = 0; i < g->ninstrs; i++) {
        const plc_instr *in = &g->instrs[i];
        s->by_op[in->op]++;
        if (!is_comm(in->op)) continue;
        double es = (double)plc_dtype_size(g->buffers[in->buf[0]].dtype);
        double bytes = (double)in->arg[0] * es;
        if ((in->op == PLC_OP_ALLGATHER || in->op == PLC_OP_REDUCE_SCATTER) && in->group >= 0)
            bytes *= (double)plc_plan_group_size(&p->layout, &p->groups[in->group]);
        s->comm_bytes[in->op] += bytes;
    }
}

static double mib(double b) { return b / (1024.0 * 1024.0); }

static const char *pct(double a, double b, char *buf, size_t n)
{
    if (a == 0 || a == b) buf[0] = 0;
    else snprintf(buf, n, " (%+.1f%%)", 100.0 * (b - a) / a);
    return buf;
}

/* a program's listing as text, for comparison and diff -u */
static char *listing(const plc_plan *p, uint32_t prog, size_t *len)
{
    char *text = NULL;
    FILE *f = open_memstream(&text, len);
    if (!f) return NULL;
    plc_dump_program(f, p, prog, false, false);
    if (fclose(f)) {
        free(text);
        return NULL;
    }
    return text;
}

static int write_temp(const char *text, size_t len, char *path)
{
    strcpy(path, "/tmp/plc-diff-XXXXXX");
    int fd = mkstemp(path);
    if (fd < 0) return -1;
    FILE *f = fdopen(fd, "w");
    if (!f) {
        close(fd);
        return -1;
    }
    fwrite(text, 1, len, f);
    return fclose(f);
}

static int unified_diff(FILE *out, const char *ta, size_t na, const char *tb, size_t nb, int64_t rank)
{
    char fa[64], fb[64];
    if (write_temp(ta, na, fa)) {
        fprintf(stderr, "plc diff: error: cannot write a temporary file\n");
        return -1;
    }
    if (write_temp(tb, nb, fb)) {
        remove(fa);
        fprintf(stderr, "plc diff: error: cannot write a temporary file\n");
        return -1;
    }
    fprintf(out, "program of rank %lld (instructions):\n", (long long)rank);
    fflush(out);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "diff -u --label a/rank%lld --label b/rank%lld '%s' '%s'", (long long)rank,
             (long long)rank, fa, fb);
    FILE *d = popen(cmd, "r");
    int rc = 0;
    if (!d) {
        fprintf(stderr, "plc diff: error: cannot run diff\n");
        rc = -1;
    } else {
        char buf[4096];
        size_t got;
        while ((got = fread(buf, 1, sizeof buf, d)) > 0) fwrite(buf, 1, got, out);
        int st = pclose(d);
        if (st == -1 || (st != 0 && st != 256)) { /* diff exits 1 when the files differ */
            fprintf(stderr, "plc diff: error: diff failed (is diffutils installed?)\n");
            rc = -1;
        }
    }
    remove(fa);
    remove(fb);
    return rc;
}

#define MAX_SETTINGS 96

int plc_plan_diff(FILE *out, const plc_plan *a, const plc_plan *b, const char *name_a, const char *name_b, int64_t rank,
                  bool unified, plc_diff_format format)
{
    const plc_layout *la = &a->layout, *lb = &b->layout;
    plc_plan_setting sa[MAX_SETTINGS], sb[MAX_SETTINGS];
    int ns = plc_plan_settings(a, sa, MAX_SETTINGS);
    plc_plan_settings(b, sb, MAX_SETTINGS);
    int changed = 0;
    for (int i = 0; i < ns; i++) changed += strcmp(sa[i].text, sb[i].text) != 0;

    /* programs: equal when every stage's listing is */
    int64_t stages = la->pp > lb->pp ? la->pp : lb->pp;
    bool programs_differ = la->pp != lb->pp;
    for (int64_t s = 0; s < stages && !programs_differ; s++) {
        size_t na = 0, nb = 0;
        char *ta = listing(a, (uint32_t)a->stage_program[s], &na), *tb = listing(b, (uint32_t)b->stage_program[s], &nb);
        if (!ta || !tb) {
            free(ta);
            free(tb);
            fprintf(stderr, "plc diff: error: out of memory\n");
            return -1;
        }
        programs_differ = na != nb || memcmp(ta, tb, na) != 0;
        free(ta);
        free(tb);
    }
    bool differ = changed || programs_differ;
    bool yaml = format == PLC_DIFF_YAML;
    plc_yaml y;

    if (yaml) {
        plc_yaml_begin(&y, out, "diff");
        plc_yaml_str(&y, "a", name_a);
        plc_yaml_str(&y, "b", name_b);
        plc_yaml_bool(&y, "equal", !differ);
        plc_yaml_seq(&y, "changes");
        for (int i = 0; i < ns; i++) {
            if (!strcmp(sa[i].text, sb[i].text)) continue;
            plc_yaml_map(&y, NULL);
            plc_yaml_str(&y, "setting", sa[i].name);
            plc_yaml_str(&y, "old", sa[i].text);
            plc_yaml_str(&y, "new", sb[i].text);
            plc_yaml_map_end(&y);
        }
        plc_yaml_seq_end(&y);
        plc_yaml_map(&y, "predicted");
        const char *pn[] = {"step_time_s", "tokens_per_s", "mfu", "peak_bytes_plan", "peak_bytes_estimate"};
        double pa[] = {a->pred.step_time_s, a->pred.tokens_per_s, a->pred.mfu, a->pred.peak_bytes_plan,
                       a->pred.peak_bytes_estimate};
        double pb[] = {b->pred.step_time_s, b->pred.tokens_per_s, b->pred.mfu, b->pred.peak_bytes_plan,
                       b->pred.peak_bytes_estimate};
        for (int i = 0; i < 5; i++) {
            plc_yaml_map(&y, pn[i]);
            plc_yaml_num(&y, "old", pa[i]);
            plc_yaml_num(&y, "new", pb[i]);
            plc_yaml_map_end(&y);
        }
        plc_yaml_map_end(&y);
        plc_yaml_seq(&y, "stages");
    } else {
        fprintf(out, "--- %s\n+++ %s\n", name_a, name_b);
        if (changed) {
            fprintf(out, "settings: %d changed\n", changed);
            for (int i = 0; i < ns; i++)
                if (strcmp(sa[i].text, sb[i].text))
                    fprintf(out, "  %-26s %s -> %s\n", sa[i].name, sa[i].text, sb[i].text);
        } else {
            fprintf(out, "settings: all equal%s\n",
                    a->spec_hash != b->spec_hash ? " (the spec texts differ in comments or formatting only)" : "");
        }
        char p1[32], p2[32], p3[32];
        fprintf(out, "predicted:\n");
        fprintf(out, "  step time        %.6g s -> %.6g s%s\n", a->pred.step_time_s, b->pred.step_time_s,
                pct(a->pred.step_time_s, b->pred.step_time_s, p1, sizeof p1));
        fprintf(out, "  tokens/s         %.6g -> %.6g%s\n", a->pred.tokens_per_s, b->pred.tokens_per_s,
                pct(a->pred.tokens_per_s, b->pred.tokens_per_s, p2, sizeof p2));
        fprintf(out, "  MFU              %.2f%% -> %.2f%%\n", 100 * a->pred.mfu, 100 * b->pred.mfu);
        fprintf(out, "  peak (plan)      %.2f MiB -> %.2f MiB%s\n", mib(a->pred.peak_bytes_plan),
                mib(b->pred.peak_bytes_plan), pct(a->pred.peak_bytes_plan, b->pred.peak_bytes_plan, p3, sizeof p3));
        fprintf(out, "  peak (solver)    %.2f MiB -> %.2f MiB\n", mib(a->pred.peak_bytes_estimate),
                mib(b->pred.peak_bytes_estimate));
    }

    for (int64_t s = 0; s < stages; s++) {
        const plc_program *ga = s < la->pp ? &a->programs[a->stage_program[s]] : NULL;
        const plc_program *gb = s < lb->pp ? &b->programs[b->stage_program[s]] : NULL;
        if (yaml) {
            plc_yaml_map(&y, NULL);
            plc_yaml_int(&y, "stage", s);
            if (!ga || !gb) {
                plc_yaml_str(&y, "only_in", ga ? name_a : name_b);
                plc_yaml_map_end(&y);
                continue;
            }
        } else {
            fprintf(out, "stage %lld:\n", (long long)s);
            if (!ga || !gb) {
                fprintf(out, "  only in %s\n", ga ? name_a : name_b);
                continue;
            }
        }
        prog_stats xa, xb;
        stats_of(a, ga, &xa);
        stats_of(b, gb, &xb);
        if (yaml) {
            plc_yaml_map(&y, "instructions");
            plc_yaml_int(&y, "old", ga->ninstrs);
            plc_yaml_int(&y, "new", gb->ninstrs);
            plc_yaml_map_end(&y);
            plc_yaml_map(&y, "arena_bytes");
            plc_yaml_num(&y, "old", (double)ga->arena_bytes);
            plc_yaml_num(&y, "new", (double)gb->arena_bytes);
            plc_yaml_map_end(&y);
            plc_yaml_seq(&y, "ops");
            for (int op = 0; op < PLC_OP_COUNT; op++) {
                if (xa.by_op[op] == xb.by_op[op] && xa.comm_bytes[op] == xb.comm_bytes[op]) continue;
                plc_yaml_map(&y, NULL);
                plc_yaml_str(&y, "op", plc_op_name((plc_op)op));
                plc_yaml_int(&y, "old", (long long)xa.by_op[op]);
                plc_yaml_int(&y, "new", (long long)xb.by_op[op]);
                if (is_comm((plc_op)op)) {
                    plc_yaml_num(&y, "old_bytes", xa.comm_bytes[op]);
                    plc_yaml_num(&y, "new_bytes", xb.comm_bytes[op]);
                }
                plc_yaml_map_end(&y);
            }
            plc_yaml_seq_end(&y);
            plc_yaml_map_end(&y);
            continue;
        }
        char p1[32];
        fprintf(out, "  instructions     %u -> %u\n", ga->ninstrs, gb->ninstrs);
        fprintf(out, "  buffers          %u -> %u\n", ga->nbuffers, gb->nbuffers);
        fprintf(out, "  arena            %.2f MiB -> %.2f MiB%s\n", mib((double)ga->arena_bytes), mib((double)gb->arena_bytes),
                pct((double)ga->arena_bytes, (double)gb->arena_bytes, p1, sizeof p1));
        for (int op = 0; op < PLC_OP_COUNT; op++)
            if (xa.by_op[op] != xb.by_op[op])
                fprintf(out, "  %-16s %llu -> %llu\n", plc_op_name((plc_op)op), (unsigned long long)xa.by_op[op],
                        (unsigned long long)xb.by_op[op]);
        for (int op = 0; op < PLC_OP_COUNT; op++)
            if (is_comm((plc_op)op) && (xa.comm_bytes[op] || xb.comm_bytes[op]))
                fprintf(out, "  %-16s %.3f MiB -> %.3f MiB per rank%s\n", plc_op_name((plc_op)op), mib(xa.comm_bytes[op]),
                        mib(xb.comm_bytes[op]), xa.comm_bytes[op] != xb.comm_bytes[op] ? "" : " (same)");
    }
    if (yaml) {
        plc_yaml_seq_end(&y);
        if (plc_yaml_end(&y)) return -1;
        return differ ? 1 : 0;
    }
    if (!unified || !programs_differ) return differ ? 1 : 0;
    if (rank >= a->world_size || rank >= b->world_size) {
        fprintf(stderr, "plc diff: error: rank %lld is not in both plans (%lld and %lld ranks)\n", (long long)rank,
                (long long)a->world_size, (long long)b->world_size);
        return -1;
    }
    plc_rank_coords ca = plc_rank_to_coords(la, rank), cb = plc_rank_to_coords(lb, rank);
    size_t na = 0, nb = 0;
    char *ta = listing(a, (uint32_t)a->stage_program[ca.pp], &na), *tb = listing(b, (uint32_t)b->stage_program[cb.pp], &nb);
    int rc = ta && tb ? unified_diff(out, ta, na, tb, nb, rank) : -1;
    if (!ta || !tb) fprintf(stderr, "plc diff: error: out of memory\n");
    free(ta);
    free(tb);
    return rc ? -1 : 1;
}
