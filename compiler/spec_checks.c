/* spec_checks.c: cross-block checks of a resolved spec. Each error names the
 * numbers involved and, where one exists, lists the values that would work. */
#include "compiler/spec_checks.h"

#include <string.h>

static int64_t gcd64(int64_t a, int64_t b)
{
    while (b) {
        int64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

const char *plc_divisors_text(plc_arena *a, int64_t n)
{
    enum { MAX_SHOWN = 32, MAX_DIVISORS = 16384 };
    /* divisors up to sqrt(n) ascending, and their co-divisors (descending) */
    int64_t *small = PLC_NEW_ARRAY(a, int64_t, MAX_DIVISORS), *large = PLC_NEW_ARRAY(a, int64_t, MAX_DIVISORS);
    int ns = 0, nl = 0;
    for (int64_t k = 1; k <= n / k && nl < MAX_DIVISORS; k++) {
        if (n % k) continue;
        small[ns++] = k;
        if (k != n / k) large[nl++] = n / k;
    }
    char *s = plc_arena_alloc(a, (MAX_SHOWN + 2) * 24);
    size_t len = 0;
    int total = ns + nl;
    for (int i = 0; i < total && i < MAX_SHOWN; i++) {
        int64_t v = i < ns ? small[i] : large[nl - 1 - (i - ns)];
        len += (size_t)sprintf(s + len, "%s%lld", i ? ", " : "", (long long)v);
    }
    if (total > MAX_SHOWN) strcpy(s + len, ", ...");
    return s;
}

/* where to point for key: its value, or the block header when defaulted */
static plc_loc at(const plc_block *b, const char *key)
{
    plc_pair *p = b ? plc_block_find_pair(b, key) : NULL;
    if (p) return p->value->loc;
    return b ? b->kind_loc : (plc_loc){0};
}

static bool fixed(const plc_choice *c, int64_t *v) { return plc_choice_fixed(c, v); }

static void check_model(plc_diag *d, plc_arena *a, const plc_spec_facts *f)
{
    const plc_model *m = f->model;
    if (m->hidden % m->heads) {
        plc_diag_error(d, at(f->model_block, "heads"), "heads = %lld does not divide hidden = %lld", (long long)m->heads,
                       (long long)m->hidden);
        plc_diag_hint(d, "the head dimension is hidden / heads, a whole number");
        return;
    }
    if (m->heads % m->kv_heads) {
        plc_diag_error(d, at(f->model_block, "kv_heads"), "kv_heads = %lld does not divide heads = %lld; valid: %s",
                       (long long)m->kv_heads, (long long)m->heads, plc_divisors_text(a, m->heads));
        plc_diag_hint(d, "grouped-query attention shares each key/value head among heads / kv_heads query heads");
    }
    if ((m->hidden / m->heads) % 2) {
        plc_diag_error(d, at(f->model_block, "heads"), "head dimension hidden / heads = %lld is odd",
                       (long long)(m->hidden / m->heads));
        plc_diag_hint(d, "RoPE rotates pairs of channels, so the head dimension must be even");
    }
}

static void check_tokens(plc_diag *d, plc_spec_facts *f)
{
    plc_train *t = f->train;
    int64_t s = f->model->seq_len;
    if (t->global_batch % s) {
        int64_t lo = t->global_batch / s;
        plc_diag_error(d, at(f->train_block, "global_batch"),
                       "global_batch = %lld tokens is not a whole number of sequences of seq_len = %lld",
                       (long long)t->global_batch, (long long)s);
        if (lo > 0)
            plc_diag_hint(d, "nearest: %lld tokens (%lld sequences) or %lld tokens (%lld sequences)", (long long)(lo * s),
                          (long long)lo, (long long)((lo + 1) * s), (long long)(lo + 1));
        else
            plc_diag_hint(d, "one sequence is %lld tokens", (long long)s);
        t->global_batch = 0;
        return;
    }
    t->global_batch /= s;
}

/* a tensor-parallel degree must divide heads, kv_heads and ffn_hidden */
static const char *tp_conflict(const plc_model *m, int64_t tp, int64_t *what)
{
    if (m->heads % tp) { *what = m->heads; return "heads"; }
    if (m->kv_heads % tp) { *what = m->kv_heads; return "kv_heads"; }
    if (m->ffn_hidden % tp) { *what = m->ffn_hidden; return "ffn_hidden"; }
    return NULL;
}

static void check_layout_model(plc_diag *d, plc_arena *a, const plc_spec_facts *f)
{
    const plc_model *m = f->model;
    const plc_layout_spec *l = f->layout;
    int64_t tp_ok = gcd64(gcd64(m->heads, m->kv_heads), m->ffn_hidden);
    int64_t v = 0, what = 0;
    if (fixed(&l->tp, &v)) {
        const char *name = tp_conflict(m, v, &what);
        if (name) {
            plc_diag_error(d, at(f->layout_block, "tp"), "tp = %lld does not divide %s = %lld; valid: %s", (long long)v,
                           name, (long long)what, plc_divisors_text(a, tp_ok));
            plc_diag_hint(d, "tensor parallelism splits heads, kv_heads and ffn_hidden evenly across tp ranks");
        }
    } else if (l->tp.kind == PLC_CHOICE_SET) {
        bool any = false;
        for (int i = 0; i < l->tp.n; i++)
            if (!tp_conflict(m, l->tp.v[i], &what)) any = true;
        if (!any) {
            plc_diag_error(d, at(f->layout_block, "tp"), "no value of tp divides heads, kv_heads and ffn_hidden; valid: %s",
                           plc_divisors_text(a, tp_ok));
        }
    }
    int64_t vpp = 1, pp = 0;
    bool vpp_fixed = fixed(&l->vpp, &vpp);
    if (fixed(&l->pp, &pp)) {
        if (m->layers % pp) {
            plc_diag_error(d, at(f->layout_block, "pp"), "pp = %lld does not divide layers = %lld; valid: %s", (long long)pp,
                           (long long)m->layers, plc_divisors_text(a, m->layers));
            plc_diag_hint(d, "every pipeline stage holds the same number of layers");
        } else if (vpp_fixed && m->layers % (pp * vpp)) {
            plc_diag_error(d, at(f->layout_block, "vpp"), "pp * vpp = %lld does not divide layers = %lld",
                           (long long)(pp * vpp), (long long)m->layers);
            plc_diag_hint(d, "each of the pp * vpp virtual stages holds the same number of layers");
        }
        if (vpp_fixed && vpp > 1 && pp == 1) {
            plc_diag_error(d, at(f->layout_block, "vpp"), "vpp = %lld needs pipeline parallelism, but pp = 1",
                           (long long)vpp);
        }
    }
    int64_t sched = 0;
    if (vpp_fixed && vpp > 1 && fixed(&l->schedule, &sched) && sched != PLC_SCHED_INTERLEAVED) {
        plc_diag_error(d, at(f->layout_block, "vpp"), "vpp = %lld needs schedule = interleaved, not %s", (long long)vpp,
                       plc_schedule_name((plc_schedule)sched));
        plc_diag_hint(d, "virtual pipeline stages exist only in the interleaved schedule");
    }
    int64_t cp = 0;
    if (fixed(&l->cp, &cp) && m->seq_len % cp) {
        plc_diag_error(d, at(f->layout_block, "cp"), "cp = %lld does not divide seq_len = %lld; valid: %s", (long long)cp,
                       (long long)m->seq_len, plc_divisors_text(a, m->seq_len));
    }
    int64_t sp = 0, tp = 0;
    if (fixed(&l->sp, &sp) && sp == 1 && fixed(&l->tp, &tp) && tp == 1) {
        plc_diag_warning(d, at(f->layout_block, "sp"), "sp = on has no effect with tp = 1");
        plc_diag_hint(d, "sequence parallelism splits the tensor-parallel group's activations");
    }
}

static void check_layout_cluster(plc_diag *d, const plc_spec_facts *f)
{
    const plc_layout_spec *l = f->layout;
    int64_t gpus = plc_cluster_gpus(f->cluster);
    const char *names[4] = {"dp", "tp", "pp", "cp"};
    const plc_choice *dims[4] = {&l->dp, &l->tp, &l->pp, &l->cp};
    int64_t product = 1;
    int nfixed = 0;
    char expr[64] = "";
    const char *last = NULL;
    for (int i = 0; i < 4; i++) {
        int64_t v;
        if (!fixed(dims[i], &v)) continue;
        product *= v; /* each degree is at most 2^20: no overflow in four */
        snprintf(expr + strlen(expr), sizeof expr - strlen(expr), "%s%s", nfixed ? " * " : "", names[i]);
        nfixed++;
        last = names[i];
    }
    if (!nfixed) return;
    if (nfixed == 4 && product != gpus) {
        plc_diag_error(d, at(f->layout_block, last), "%s = %lld, but the cluster has %lld GPUs (nodes * gpus_per_node)",
                       expr, (long long)product, (long long)gpus);
        plc_diag_hint(d, "leave dp = auto and plc uses dp = GPUs / (tp * pp * cp)");
    } else if (gpus % product) {
        plc_diag_error(d, at(f->layout_block, last), "%s = %lld does not divide the %lld GPUs (nodes * gpus_per_node)",
                       expr, (long long)product, (long long)gpus);
        plc_diag_hint(d, "every rank belongs to one group of each kind, so the degrees' product divides the GPU count");
    }
    int64_t tp = 0;
    if (fixed(&l->tp, &tp) && tp > f->cluster->gpus_per_node && tp <= gpus) {
        plc_diag_warning(d, at(f->layout_block, "tp"), "tp = %lld spans nodes (gpus_per_node = %lld)", (long long)tp,
                         (long long)f->cluster->gpus_per_node);
        plc_diag_hint(d, "tensor parallelism communicates every layer; across the network it is slow");
    }
}

static void check_layout_train(plc_diag *d, const plc_spec_facts *f)
{
    const plc_layout_spec *l = f->layout;
    int64_t gb = f->train->global_batch, dp = 0, mb = 0, zero = 0;
    bool dp_fixed = fixed(&l->dp, &dp), mb_fixed = fixed(&l->micro_batch, &mb);
    if (gb <= 0) return;
    if (dp_fixed && gb % dp) {
        plc_diag_error(d, at(f->layout_block, "dp"), "dp = %lld does not divide global_batch = %lld sequences",
                       (long long)dp, (long long)gb);
        plc_diag_hint(d, "every data-parallel rank takes the same number of sequences per step");
    } else if (mb_fixed && gb % mb) {
        plc_diag_error(d, at(f->layout_block, "micro_batch"), "micro_batch = %lld does not divide global_batch = %lld sequences",
                       (long long)mb, (long long)gb);
    } else if (dp_fixed && mb_fixed && gb % (dp * mb)) {
        plc_diag_error(d, at(f->layout_block, "micro_batch"),
                       "dp * micro_batch = %lld does not divide global_batch = %lld sequences", (long long)(dp * mb),
                       (long long)gb);
        plc_diag_hint(d, "each data-parallel rank runs global_batch / (dp * micro_batch) micro-batches per step");
    }
    if (fixed(&l->zero, &zero) && zero > 0 && dp_fixed && dp == 1) {
        plc_diag_warning(d, at(f->layout_block, "zero"), "zero = %lld has no effect with dp = 1", (long long)zero);
        plc_diag_hint(d, "ZeRO shards optimizer state across data-parallel ranks");
    }
}

/* a sane limit on the tokens of one step, so that activation sizes stay
 * far inside 64 bits */
#define PLC_MAX_STEP_TOKENS (INT64_C(1) << 40)
static void check_step_tokens(plc_diag *d, plc_spec_facts *f)
{
    const plc_train *t = f->train;
    if (t->global_batch <= PLC_MAX_STEP_TOKENS / f->model->seq_len) return;
    plc_diag_error(d, at(f->train_block, "global_batch"),
                   "global_batch = %lld sequences of seq_len = %lld is more than %lld tokens per step",
                   (long long)t->global_batch, (long long)f->model->seq_len, (long long)PLC_MAX_STEP_TOKENS);
    f->train = NULL;
}

void plc_spec_check(plc_arena *a, plc_diag *d, plc_spec_facts *f)
{
    if (f->model) check_model(d, a, f);
    if (f->train && f->batch_in_tokens) {
        if (f->model) check_tokens(d, f);
        else f->train = NULL;
    }
    if (f->train && f->model && f->train->global_batch > 0) check_step_tokens(d, f);
    if (f->layout && f->model) check_layout_model(d, a, f);
    if (f->layout && f->cluster) check_layout_cluster(d, f);
    if (f->layout && f->train) check_layout_train(d, f);
}
