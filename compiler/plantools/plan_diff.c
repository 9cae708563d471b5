/* plan_diff.c: plc diff's semantic comparison of two plans. First every
 * setting that differs, the spec's keys as they were resolved (model,
 * train, cluster, catalog figures, and the layout block's constraints:
 * each dimension's choice, memory_limit, objective), by the names of the
 * .plan language, with old and new values; then the layout the solver
 * picked, each changed dimension attributed (pinned by the new spec, or
 * chosen by the solver); then the predictions; then each stage's program
 * (arena, instruction counts by op and communication volume by kind);
 * then a unified diff of one rank's instruction listing (diff -u on two
 * temporary dumps). Two plans are equal when their settings, layouts and
 * every stage's instruction listing are. The same comparison prints as
 * text, as YAML for bots, or in a few lines for a pull-request comment. */
#include "compiler/plantools/plantools_int.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/plan_io.h"

/* ---- settings -------------------------------------------------------------
 * One row per key of the spec that the plan keeps: its name, how its value
 * is spelled and where it lies in the plan. The catalog figures
 * (PLC_HW_FIELDS) and the layout block's dimensions (PLC_LAYOUT_FIELDS) are
 * added from their own tables; a key added to a row here, or to either
 * table, is compared and printed with no other change. */
typedef enum setting_type {
    ST_INT,     /* int64_t */
    ST_SEED,    /* uint64_t */
    ST_CRC,     /* uint32_t, hex */
    ST_REAL,    /* double, %g */
    ST_ONOFF,   /* bool */
    ST_NAME,    /* char[] */
    ST_PATH,    /* const char *, NULL: synthetic */
    ST_PREC,    /* plc_precision */
    ST_ARCH,    /* plc_arch */
    ST_POS,     /* plc_positions */
    ST_PERCENT, /* double, a share */
    ST_OBJ,     /* plc_objective */
    ST_ROUTER,  /* plc_router */
    ST_CAPACITY /* double, 0: dropless */
} setting_type;

typedef struct setting_row {
    const char *name;
    setting_type type;
    size_t at; /* offsetof(plc_plan, ...) */
} setting_row;

#define AT(member) offsetof(plc_plan, member)
static const setting_row model_cluster_rows[] = {
    {"model.name", ST_NAME, AT(model.name)},
    {"model.arch", ST_ARCH, AT(model.arch)},
    {"model.layers", ST_INT, AT(model.layers)},
    {"model.hidden", ST_INT, AT(model.hidden)},
    {"model.ffn_hidden", ST_INT, AT(model.ffn_hidden)},
    {"model.heads", ST_INT, AT(model.heads)},
    {"model.kv_heads", ST_INT, AT(model.kv_heads)},
    {"model.head_dim", ST_INT, AT(model.head_dim)},
    {"model.qk_norm", ST_ONOFF, AT(model.qk_norm)},
    {"model.vocab", ST_INT, AT(model.vocab)},
    {"model.seq_len", ST_INT, AT(model.seq_len)},
    {"model.positions", ST_POS, AT(model.positions)},
    {"model.tie_embeddings", ST_ONOFF, AT(model.tie_embeddings)},
    {"model.norm_eps", ST_REAL, AT(model.norm_eps)},
    {"model.rope_theta", ST_REAL, AT(model.rope_theta)},
    {"model.experts", ST_INT, AT(model.moe.experts)},
    {"model.experts_per_token", ST_INT, AT(model.moe.top_k)},
    {"model.shared_experts", ST_INT, AT(model.moe.shared_experts)},
    {"model.expert_ffn_hidden", ST_INT, AT(model.moe.expert_ffn_hidden)},
    {"model.shared_expert_ffn_hidden", ST_INT, AT(model.moe.shared_ffn_hidden)},
    {"model.dense_layers", ST_INT, AT(model.moe.dense_layers)},
    {"model.moe_every", ST_INT, AT(model.moe.moe_every)},
    {"model.router", ST_ROUTER, AT(model.moe.router)},
    {"model.router_groups", ST_INT, AT(model.moe.router_groups)},
    {"model.router_groups_top", ST_INT, AT(model.moe.router_groups_top)},
    {"model.route_scale", ST_REAL, AT(model.moe.route_scale)},
    {"model.aux_loss", ST_REAL, AT(model.moe.aux_loss)},
    {"model.expert_bias", ST_ONOFF, AT(model.moe.expert_bias)},
    {"model.capacity_factor", ST_CAPACITY, AT(model.moe.capacity_factor)},
    {"model.q_lora_rank", ST_INT, AT(model.mla.q_rank)},
    {"model.kv_lora_rank", ST_INT, AT(model.mla.kv_rank)},
    {"model.qk_nope_head_dim", ST_INT, AT(model.mla.nope_head_dim)},
    {"model.qk_rope_head_dim", ST_INT, AT(model.mla.rope_head_dim)},
    {"model.v_head_dim", ST_INT, AT(model.mla.v_head_dim)},
    {"cluster.gpu", ST_NAME, AT(hw.name)},
    {"cluster.nodes", ST_INT, AT(nodes)},
    {"cluster.gpus_per_node", ST_INT, AT(gpus_per_node)},
};
static const setting_row train_rows[] = {
    {"train.global_batch", ST_INT, AT(train.global_batch)},
    {"train.steps", ST_INT, AT(train.steps)},
    {"train.precision", ST_PREC, AT(train.precision)},
    {"train.seed", ST_SEED, AT(train.seed)},
    {"train.data", ST_PATH, AT(train.data_path)},
    {"train.data.bytes", ST_SEED, AT(train.data_size)}, /* the content, not its location */
    {"train.data.crc32", ST_CRC, AT(train.data_crc32)},
    {"train.adamw.beta1", ST_REAL, AT(train.beta1)},
    {"train.adamw.beta2", ST_REAL, AT(train.beta2)},
    {"train.adamw.eps", ST_REAL, AT(train.eps)},
    {"train.adamw.weight_decay", ST_REAL, AT(train.weight_decay)},
    {"train.lr.peak", ST_REAL, AT(train.lr_peak)},
    {"train.lr.floor", ST_REAL, AT(train.lr_floor)},
    {"train.lr.warmup", ST_INT, AT(train.warmup_steps)},
    {"train.lr.decay_steps", ST_INT, AT(train.decay_steps)},
    {"train.grad_clip", ST_REAL, AT(train.grad_clip)},
};
static const setting_row layout_rows[] = { /* after the dimensions' choices */
    {"layout.memory_limit", ST_PERCENT, AT(constraints.memory_limit)},
    {"layout.objective", ST_OBJ, AT(constraints.objective)},
};
#undef AT

typedef struct settings {
    plc_plan_setting *s;
    int n, max;
} settings;

static plc_plan_setting *next(settings *S, const char *name)
{
    if (S->n >= S->max) return NULL;
    plc_plan_setting *e = &S->s[S->n++];
    snprintf(e->name, sizeof e->name, "%s", name);
    e->text[0] = '\0';
    return e;
}

/* an enumeration's or a switch's spelling ("?" for a value out of range) */
static void put_word(plc_plan_setting *e, const char *word) { snprintf(e->text, sizeof e->text, "%s", word ? word : "?"); }

static void put_rows(settings *S, const plc_plan *p, const setting_row *rows, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        plc_plan_setting *e = next(S, rows[i].name);
        if (!e) return;
        const void *at = (const char *)p + rows[i].at;
        switch (rows[i].type) {
        case ST_INT: snprintf(e->text, sizeof e->text, "%lld", (long long)*(const int64_t *)at); break;
        case ST_SEED: snprintf(e->text, sizeof e->text, "%llu", (unsigned long long)*(const uint64_t *)at); break;
        case ST_CRC: snprintf(e->text, sizeof e->text, "%08x", (unsigned)*(const uint32_t *)at); break;
        case ST_REAL: snprintf(e->text, sizeof e->text, "%g", *(const double *)at); break;
        case ST_PERCENT: plc_word_percent(*(const double *)at, e->text, sizeof e->text); break;
        case ST_NAME: snprintf(e->text, sizeof e->text, "%s", (const char *)at); break;
        case ST_PATH: put_word(e, *(const char *const *)at ? *(const char *const *)at : "synthetic"); break;
        case ST_ONOFF: put_word(e, plc_word_onoff(*(const bool *)at)); break;
        case ST_PREC: put_word(e, plc_precision_name(*(const plc_precision *)at)); break;
        case ST_ARCH: put_word(e, plc_arch_name(*(const plc_arch *)at)); break;
        case ST_POS: put_word(e, plc_positions_name(*(const plc_positions *)at)); break;
        case ST_OBJ: put_word(e, plc_objective_name(*(const plc_objective *)at)); break;
        case ST_ROUTER: {
            unsigned r = (unsigned)*(const plc_router *)at;
            put_word(e, r <= PLC_ROUTER_SIGMOID ? plc_router_names[r] : NULL);
            break;
        }
        case ST_CAPACITY:
            if (*(const double *)at > 0) snprintf(e->text, sizeof e->text, "%g", *(const double *)at);
            else put_word(e, "dropless");
            break;
        }
    }
}

int plc_plan_settings(const plc_plan *p, plc_plan_setting *out, int max)
{
    settings S = {out, 0, max};
    put_rows(&S, p, model_cluster_rows, sizeof model_cluster_rows / sizeof model_cluster_rows[0]);
    plc_plan_setting *e;
#define HW_SETTING(member, key, unit)                                                                         \
    if ((e = next(&S, "cluster." key))) plc_word_quantity(unit, p->hw.member, e->text, sizeof e->text);
    PLC_HW_FIELDS(HW_SETTING)
#undef HW_SETTING
    put_rows(&S, p, train_rows, sizeof train_rows / sizeof train_rows[0]);
    for (int d = 0; d < PLC_LD_COUNT; d++) {
        char name[48];
        snprintf(name, sizeof name, "layout.%s", plc_layout_dim_key((plc_layout_dim)d));
        if ((e = next(&S, name)))
            plc_word_choice((plc_layout_dim)d, plc_layout_spec_choice(&p->constraints, (plc_layout_dim)d), e->text,
                            sizeof e->text);
    }
    put_rows(&S, p, layout_rows, sizeof layout_rows / sizeof layout_rows[0]);
    return S.n;
}

int plc_plan_layout_changes(const plc_plan *a, const plc_plan *b, plc_layout_change *out)
{
    int n = 0;
    for (int d = 0; d < PLC_LD_COUNT; d++) {
        int64_t x = plc_layout_get(&a->layout, (plc_layout_dim)d), y = plc_layout_get(&b->layout, (plc_layout_dim)d);
        if (x == y) continue;
        int64_t fixed;
        out[n++] = (plc_layout_change){(plc_layout_dim)d, x, y,
                                       plc_choice_fixed(plc_layout_spec_choice(&b->constraints, (plc_layout_dim)d),
                                                        &fixed) && fixed == y};
    }
    return n;
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

#define MAX_SETTINGS 128

/* what two plans differ in, gathered once for every format */
typedef struct comparison {
    plc_plan_setting sa[MAX_SETTINGS], sb[MAX_SETTINGS];
    int nsettings, changed;
    plc_layout_change layout[PLC_LD_COUNT];
    int nlayout;
    bool programs_differ, differ;
    int64_t stages; /* the larger pp */
} comparison;

static bool setting_changed(const comparison *c, int i) { return strcmp(c->sa[i].text, c->sb[i].text) != 0; }

static const char *by_whom(const plc_layout_change *ch) { return ch->pinned ? "pinned by the spec" : "chosen by the solver"; }

/* a stage's arena, or -1 for a stage the plan does not have */
static double stage_arena(const plc_plan *p, int64_t s)
{
    return s < p->layout.pp ? (double)p->programs[p->stage_program[s]].arena_bytes : -1;
}

static int compare(const plc_plan *a, const plc_plan *b, comparison *c)
{
    c->nsettings = plc_plan_settings(a, c->sa, MAX_SETTINGS);
    int nb = plc_plan_settings(b, c->sb, MAX_SETTINGS);
    if (c->nsettings >= MAX_SETTINGS || nb != c->nsettings) {
        fprintf(stderr, "plc diff: internal error: %d and %d settings (room for %d)\n", c->nsettings, nb, MAX_SETTINGS);
        return -1;
    }
    c->changed = 0;
    for (int i = 0; i < c->nsettings; i++) c->changed += setting_changed(c, i);
    c->nlayout = plc_plan_layout_changes(a, b, c->layout);
    /* programs: equal when every stage's listing is */
    const plc_layout *la = &a->layout, *lb = &b->layout;
    c->stages = la->pp > lb->pp ? la->pp : lb->pp;
    c->programs_differ = la->pp != lb->pp;
    for (int64_t s = 0; s < c->stages && !c->programs_differ; s++) {
        size_t na = 0, nb2 = 0;
        char *ta = listing(a, (uint32_t)a->stage_program[s], &na), *tb = listing(b, (uint32_t)b->stage_program[s], &nb2);
        if (!ta || !tb) {
            free(ta);
            free(tb);
            fprintf(stderr, "plc diff: error: out of memory\n");
            return -1;
        }
        c->programs_differ = na != nb2 || memcmp(ta, tb, na) != 0;
        free(ta);
        free(tb);
    }
    c->differ = c->changed || c->nlayout || c->programs_differ;
    return 0;
}

/* ---- short: a pull-request comment ------------------------------------------ */

/* "%.2f UNIT" of a byte count in the unit of the larger of a pair (MiB
 * below a GiB), so the two read side by side; a negative count is "(none)" */
static const char *bytes_text(double v, double pair_max, char *buf, size_t size)
{
    double unit = pair_max >= 1073741824.0 ? 1073741824.0 : 1048576.0;
    if (v < 0) snprintf(buf, size, "(none)");
    else snprintf(buf, size, "%.2f %s", v / unit, unit > 1048576.0 ? "GiB" : "MiB");
    return buf;
}

static void print_short(FILE *out, const plc_plan *a, const plc_plan *b, const char *name_a, const char *name_b,
                        const comparison *c)
{
    char v1[32], v2[32], p1[32];
    fprintf(out, "%s -> %s: %s\n", name_a, name_b, c->differ ? "different" : "equal");
    fprintf(out, "settings   ");
    if (!c->changed) fprintf(out, "none changed\n");
    for (int i = 0, k = 0; i < c->nsettings; i++) {
        if (!setting_changed(c, i)) continue;
        k++;
        fprintf(out, "%s%s %s -> %s%s", k > 1 ? ", " : "", c->sa[i].name, c->sa[i].text, c->sb[i].text,
                k == c->changed ? "\n" : "");
    }
    fprintf(out, "layout     ");
    if (!c->nlayout) fprintf(out, "unchanged\n");
    for (int i = 0; i < c->nlayout; i++) {
        const plc_layout_change *ch = &c->layout[i];
        fprintf(out, "%s%s %s -> %s (%s)%s", i ? ", " : "", plc_layout_dim_key(ch->dim),
                plc_layout_value_text(ch->dim, ch->old_value, v1, sizeof v1),
                plc_layout_value_text(ch->dim, ch->new_value, v2, sizeof v2), by_whom(ch),
                i + 1 == c->nlayout ? "\n" : "");
    }
    fprintf(out, "predicted  step %.4g s -> %.4g s%s, MFU %.2f%% -> %.2f%%, bubble %.1f%% -> %.1f%%\n",
            a->pred.step_time_s, b->pred.step_time_s, pct(a->pred.step_time_s, b->pred.step_time_s, p1, sizeof p1),
            100 * a->pred.mfu, 100 * b->pred.mfu, 100 * a->pred.bubble_fraction, 100 * b->pred.bubble_fraction);
    fprintf(out, "memory     ");
    for (int64_t s = 0; s < c->stages; s++) {
        double x = stage_arena(a, s), y = stage_arena(b, s);
        double most = x > y ? x : y;
        char bx[32], by[32];
        fprintf(out, "%sstage %lld %s -> %s%s", s ? ", " : "", (long long)s, bytes_text(x, most, bx, sizeof bx),
                bytes_text(y, most, by, sizeof by), x > 0 && y >= 0 ? pct(x, y, p1, sizeof p1) : "");
    }
    fprintf(out, " (plan arena per rank)\n");
    if (c->programs_differ && !c->changed && !c->nlayout)
        fprintf(out, "programs   the instruction listings differ (plc diff %s %s shows how)\n", name_a, name_b);
}

/* ---- yaml and text ---------------------------------------------------------- */

static void yaml_old_new(plc_yaml *y, const char *key, double old_v, double new_v)
{
    plc_yaml_map(y, key);
    plc_yaml_num(y, "old", old_v);
    plc_yaml_num(y, "new", new_v);
    plc_yaml_map_end(y);
}

static void yaml_head(plc_yaml *y, const plc_plan *a, const plc_plan *b, const char *name_a, const char *name_b,
                      const comparison *c)
{
    char v[32];
    plc_yaml_str(y, "a", name_a);
    plc_yaml_str(y, "b", name_b);
    plc_yaml_bool(y, "equal", !c->differ);
    plc_yaml_seq(y, "changes");
    for (int i = 0; i < c->nsettings; i++) {
        if (!setting_changed(c, i)) continue;
        plc_yaml_map(y, NULL);
        plc_yaml_str(y, "setting", c->sa[i].name);
        plc_yaml_str(y, "old", c->sa[i].text);
        plc_yaml_str(y, "new", c->sb[i].text);
        plc_yaml_map_end(y);
    }
    plc_yaml_seq_end(y);
    plc_yaml_seq(y, "layout");
    for (int i = 0; i < c->nlayout; i++) {
        const plc_layout_change *ch = &c->layout[i];
        plc_yaml_map(y, NULL);
        plc_yaml_str(y, "dimension", plc_layout_dim_key(ch->dim));
        plc_yaml_str(y, "old", plc_layout_value_text(ch->dim, ch->old_value, v, sizeof v));
        plc_yaml_str(y, "new", plc_layout_value_text(ch->dim, ch->new_value, v, sizeof v));
        plc_yaml_str(y, "by", ch->pinned ? "spec" : "solver");
        plc_yaml_map_end(y);
    }
    plc_yaml_seq_end(y);
    plc_yaml_map(y, "predicted");
    yaml_old_new(y, "step_time_s", a->pred.step_time_s, b->pred.step_time_s);
    yaml_old_new(y, "tokens_per_s", a->pred.tokens_per_s, b->pred.tokens_per_s);
    yaml_old_new(y, "mfu", a->pred.mfu, b->pred.mfu);
    yaml_old_new(y, "bubble_fraction", a->pred.bubble_fraction, b->pred.bubble_fraction);
    yaml_old_new(y, "peak_bytes_plan", a->pred.peak_bytes_plan, b->pred.peak_bytes_plan);
    yaml_old_new(y, "peak_bytes_estimate", a->pred.peak_bytes_estimate, b->pred.peak_bytes_estimate);
    plc_yaml_map_end(y);
}

static void text_head(FILE *out, const plc_plan *a, const plc_plan *b, const char *name_a, const char *name_b,
                      const comparison *c)
{
    fprintf(out, "--- %s\n+++ %s\n", name_a, name_b);
    if (c->changed) {
        fprintf(out, "settings: %d changed\n", c->changed);
        for (int i = 0; i < c->nsettings; i++)
            if (setting_changed(c, i)) fprintf(out, "  %-26s %s -> %s\n", c->sa[i].name, c->sa[i].text, c->sb[i].text);
    } else {
        fprintf(out, "settings: all equal%s\n",
                a->spec_hash != b->spec_hash
                    ? " (the spec texts differ where no setting does: comments, formatting, defaults written out)"
                    : "");
    }
    if (c->nlayout) {
        fprintf(out, "layout: %d changed\n", c->nlayout);
        for (int i = 0; i < c->nlayout; i++) {
            const plc_layout_change *ch = &c->layout[i];
            char name[48], v1[32], v2[32], both[80];
            snprintf(name, sizeof name, "layout.%s", plc_layout_dim_key(ch->dim));
            snprintf(both, sizeof both, "%s -> %s", plc_layout_value_text(ch->dim, ch->old_value, v1, sizeof v1),
                     plc_layout_value_text(ch->dim, ch->new_value, v2, sizeof v2));
            fprintf(out, "  %-26s %-16s %s\n", name, both, by_whom(ch));
        }
    } else {
        fprintf(out, "layout: unchanged\n");
    }
    char p1[32], p2[32], p3[32];
    fprintf(out, "predicted:\n");
    fprintf(out, "  step time        %.6g s -> %.6g s%s\n", a->pred.step_time_s, b->pred.step_time_s,
            pct(a->pred.step_time_s, b->pred.step_time_s, p1, sizeof p1));
    fprintf(out, "  tokens/s         %.6g -> %.6g%s\n", a->pred.tokens_per_s, b->pred.tokens_per_s,
            pct(a->pred.tokens_per_s, b->pred.tokens_per_s, p2, sizeof p2));
    fprintf(out, "  MFU              %.2f%% -> %.2f%%\n", 100 * a->pred.mfu, 100 * b->pred.mfu);
    fprintf(out, "  bubble           %.2f%% -> %.2f%%\n", 100 * a->pred.bubble_fraction, 100 * b->pred.bubble_fraction);
    fprintf(out, "  peak (plan)      %.2f MiB -> %.2f MiB%s\n", mib(a->pred.peak_bytes_plan), mib(b->pred.peak_bytes_plan),
            pct(a->pred.peak_bytes_plan, b->pred.peak_bytes_plan, p3, sizeof p3));
    fprintf(out, "  peak (solver)    %.2f MiB -> %.2f MiB\n", mib(a->pred.peak_bytes_estimate),
            mib(b->pred.peak_bytes_estimate));
}

/* one stage's program changes */
static void yaml_stage(plc_yaml *y, const plc_plan *a, const plc_plan *b, const char *name_a, const char *name_b,
                       int64_t s)
{
    const plc_program *ga = s < a->layout.pp ? &a->programs[a->stage_program[s]] : NULL;
    const plc_program *gb = s < b->layout.pp ? &b->programs[b->stage_program[s]] : NULL;
    plc_yaml_map(y, NULL);
    plc_yaml_int(y, "stage", s);
    if (!ga || !gb) {
        plc_yaml_str(y, "only_in", ga ? name_a : name_b);
        plc_yaml_map(y, "arena_bytes");
        plc_yaml_num(y, ga ? "old" : "new", (double)(ga ? ga : gb)->arena_bytes);
        plc_yaml_map_end(y);
        plc_yaml_map_end(y);
        return;
    }
    prog_stats xa, xb;
    stats_of(a, ga, &xa);
    stats_of(b, gb, &xb);
    plc_yaml_map(y, "instructions");
    plc_yaml_int(y, "old", ga->ninstrs);
    plc_yaml_int(y, "new", gb->ninstrs);
    plc_yaml_map_end(y);
    yaml_old_new(y, "arena_bytes", (double)ga->arena_bytes, (double)gb->arena_bytes);
    plc_yaml_seq(y, "ops");
    for (int op = 0; op < PLC_OP_COUNT; op++) {
        if (xa.by_op[op] == xb.by_op[op] && xa.comm_bytes[op] == xb.comm_bytes[op]) continue;
        plc_yaml_map(y, NULL);
        plc_yaml_str(y, "op", plc_op_name((plc_op)op));
        plc_yaml_int(y, "old", (long long)xa.by_op[op]);
        plc_yaml_int(y, "new", (long long)xb.by_op[op]);
        if (is_comm((plc_op)op)) {
            plc_yaml_num(y, "old_bytes", xa.comm_bytes[op]);
            plc_yaml_num(y, "new_bytes", xb.comm_bytes[op]);
        }
        plc_yaml_map_end(y);
    }
    plc_yaml_seq_end(y);
    plc_yaml_map_end(y);
}

static void text_stage(FILE *out, const plc_plan *a, const plc_plan *b, const char *name_a, const char *name_b,
                       int64_t s)
{
    const plc_program *ga = s < a->layout.pp ? &a->programs[a->stage_program[s]] : NULL;
    const plc_program *gb = s < b->layout.pp ? &b->programs[b->stage_program[s]] : NULL;
    fprintf(out, "stage %lld:\n", (long long)s);
    if (!ga || !gb) {
        fprintf(out, "  only in %s\n", ga ? name_a : name_b);
        return;
    }
    prog_stats xa, xb;
    stats_of(a, ga, &xa);
    stats_of(b, gb, &xb);
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

int plc_plan_diff(FILE *out, const plc_plan *a, const plc_plan *b, const char *name_a, const char *name_b, int64_t rank,
                  bool unified, plc_diff_format format)
{
    comparison *c = calloc(1, sizeof *c);
    if (!c) {
        fprintf(stderr, "plc diff: error: out of memory\n");
        return -1;
    }
    if (compare(a, b, c)) {
        free(c);
        return -1;
    }
    int result = c->differ ? 1 : 0;
    if (format == PLC_DIFF_SHORT) {
        print_short(out, a, b, name_a, name_b, c);
        free(c);
        return result;
    }
    if (format == PLC_DIFF_YAML) {
        plc_yaml y;
        plc_yaml_begin(&y, out, "diff");
        yaml_head(&y, a, b, name_a, name_b, c);
        plc_yaml_seq(&y, "stages");
        for (int64_t s = 0; s < c->stages; s++) yaml_stage(&y, a, b, name_a, name_b, s);
        plc_yaml_seq_end(&y);
        free(c);
        return plc_yaml_end(&y) ? -1 : result;
    }
    text_head(out, a, b, name_a, name_b, c);
    for (int64_t s = 0; s < c->stages; s++) text_stage(out, a, b, name_a, name_b, s);
    bool programs_differ = c->programs_differ;
    free(c);
    if (!unified || !programs_differ) return result;
    if (rank >= a->world_size || rank >= b->world_size) {
        fprintf(stderr, "plc diff: error: rank %lld is not in both plans (%lld and %lld ranks)\n", (long long)rank,
                (long long)a->world_size, (long long)b->world_size);
        return -1;
    }
    plc_rank_coords ca = plc_rank_to_coords(&a->layout, rank), cb = plc_rank_to_coords(&b->layout, rank);
    size_t na = 0, nb = 0;
    char *ta = listing(a, (uint32_t)a->stage_program[ca.pp], &na), *tb = listing(b, (uint32_t)b->stage_program[cb.pp], &nb);
    int rc = ta && tb ? unified_diff(out, ta, na, tb, nb, rank) : -1;
    if (!ta || !tb) fprintf(stderr, "plc diff: error: out of memory\n");
    free(ta);
    free(tb);
    return rc ? -1 : 1;
}
