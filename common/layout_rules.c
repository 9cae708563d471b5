/* layout_rules.c: the rulebook of layout_rules.h. Each rule is one test
 * below, in PLC_RULES order, skipped when an input it needs is unknown; its
 * wording is one case of plc_rule_message. */
#include "common/layout_rules.h"

#include <stdio.h>
#include <string.h>

static const char *const rule_keys[PLC_RULE_COUNT] = {
#define PLC_RULE_KEY(code, key, family) key,
    PLC_RULES(PLC_RULE_KEY)
#undef PLC_RULE_KEY
};

static const char *const rule_names[PLC_RULE_COUNT] = {
#define PLC_RULE_NAME(code, key, family) #code,
    PLC_RULES(PLC_RULE_NAME)
#undef PLC_RULE_NAME
};

static const char *const rule_families[PLC_RULE_COUNT] = {
#define PLC_RULE_FAMILY(code, key, family) family,
    PLC_RULES(PLC_RULE_FAMILY)
#undef PLC_RULE_FAMILY
};

uint64_t plc_rule_family_mask(plc_rule r)
{
    uint64_t mask = 0;
    if ((unsigned)r >= PLC_RULE_COUNT) return 0;
    for (int i = 0; i < PLC_RULE_COUNT; i++)
        if (strcmp(rule_families[i], rule_families[r]) == 0) mask |= 1ull << i;
    return mask;
}

const char *plc_rule_name(plc_rule r) { return (unsigned)r < PLC_RULE_COUNT ? rule_names[r] : "?"; }

static plc_verdict ok(void) { return (plc_verdict){PLC_RULE_OK, ""}; }
static plc_verdict broke_at(plc_rule r, const char *key) { return (plc_verdict){r, key}; }
static plc_verdict broke(plc_rule r) { return broke_at(r, rule_keys[r]); }

/* rule r, unless the caller skips it */
#define CHECK(in, r) (!((in)->skip >> (r) & 1u))

plc_verdict plc_model_rules(const plc_model *m)
{
    const struct { int64_t v; const char *key; } sizes[] = {
        {m->layers, "layers"}, {m->hidden, "hidden"},   {m->ffn_hidden, "ffn_hidden"}, {m->heads, "heads"},
        {m->kv_heads, "kv_heads"}, {m->vocab, "vocab"}, {m->seq_len, "seq_len"}};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        if (sizes[i].v < 1) return broke_at(PLC_RULE_MODEL_POSITIVE, sizes[i].key);
    /* a head_dim of its own (Qwen3) frees hidden from being heads' multiple */
    if (m->head_dim == 0 && m->hidden % m->heads) return broke(PLC_RULE_HEADS_HIDDEN);
    if (m->heads % m->kv_heads) return broke(PLC_RULE_KV_HEADS_HEADS);
    if (m->positions == PLC_POS_ROPE && plc_model_head_dim(m) % 2)
        return m->head_dim > 0 ? broke_at(PLC_RULE_HEAD_DIM_ODD, "head_dim") : broke(PLC_RULE_HEAD_DIM_ODD);
    return ok();
}

#define KNOWN(in, dim) (((in)->known & PLC_LD_BIT(dim)) != 0)

/* May the stages hold unequal layer counts (plc_rank_layers)? Where the
 * engine's profile says it splits them (uneven_stages): 1, with vpp 1 and
 * a GPipe or 1F1B schedule (contiguous stages, one chunk a rank); 2, also
 * with the interleaved schedule (its pp * vpp virtual stages split alike).
 * An unknown vpp or schedule does not refuse it (the front end's partial
 * check), an unknown engine does. */
static bool uneven_ok(const plc_rule_input *in)
{
    const plc_layout *l = &in->layout;
    int figure = in->engine ? in->engine->uneven_stages : 0;
    bool inter = KNOWN(in, schedule) && l->schedule == PLC_SCHED_INTERLEAVED;
    if (figure <= 0) return false;
    if (figure >= 2 && (inter || !KNOWN(in, schedule))) return true;
    if (KNOWN(in, vpp) && l->vpp != 1) return false;
    return !KNOWN(in, schedule) || l->schedule == PLC_SCHED_GPIPE || l->schedule == PLC_SCHED_1F1B;
}

/* Expert parallelism, as Megatron-Core checks it (the mirror's
 * megatron/training/arguments.py, validate_args: "num_experts %
 * expert_model_parallel_size == 0"; megatron/core/parallel_state.py,
 * initialize_model_parallel: world_size % (expert_tensor_parallel_size *
 * expert_model_parallel_size * pipeline_model_parallel_size) == 0, the
 * expert grid tp-ep-dp-pp beside the attention's tp-cp-dp-pp, "MoE parallel
 * folding"): ep divides the routed experts, etp each expert's FFN width, and
 * ep * etp the dp * tp * cp ranks of a pipeline stage. A dense model runs
 * ep = etp = 1 only; ep and etp of 0 read as 1 (plc/job.h). */
static plc_verdict expert_rules(const plc_rule_input *in)
{
    const plc_model *m = in->model;
    const plc_layout *l = &in->layout;
    const bool ep = KNOWN(in, ep), etp = KNOWN(in, etp);
    if ((ep && l->ep < 0) || (etp && l->etp < 0)) return broke_at(PLC_RULE_DEGREE_POSITIVE, ep && l->ep < 0 ? "ep" : "etp");
    const int64_t e = plc_layout_ep(l), t = plc_layout_etp(l);
    if (m->moe.experts <= 0) {
        if (CHECK(in, PLC_RULE_EP_DENSE) && ((ep && e > 1) || (etp && t > 1)))
            return broke_at(PLC_RULE_EP_DENSE, ep && e > 1 ? "ep" : "etp");
        return ok();
    }
    /* with ep or etp in hand (a front end that pins neither leaves the
     * verdict to the solver, which refuses the job with it) */
    if (CHECK(in, PLC_RULE_ENGINE_MOE) && (ep || etp) && in->engine && in->engine->moe <= 0)
        return broke_at(PLC_RULE_ENGINE_MOE, ep ? "ep" : "etp");
    if (CHECK(in, PLC_RULE_ENGINE_EP) && ep && e > 1 && in->engine && in->engine->moe < 2)
        return broke(PLC_RULE_ENGINE_EP);
    if (CHECK(in, PLC_RULE_EP_EXPERTS) && ep && m->moe.experts % e) return broke(PLC_RULE_EP_EXPERTS);
    if (CHECK(in, PLC_RULE_ETP_FFN) && etp && m->moe.expert_ffn_hidden > 0 && m->moe.expert_ffn_hidden % t)
        return broke(PLC_RULE_ETP_FFN);
    if (CHECK(in, PLC_RULE_ENGINE_ETP) && etp && t > 1 && in->engine && in->engine->moe_etp <= 0)
        return broke(PLC_RULE_ENGINE_ETP);
    if (CHECK(in, PLC_RULE_EP_STAGE) && ep && etp && KNOWN(in, dp) && KNOWN(in, tp) && KNOWN(in, cp) &&
        (l->dp * l->tp * l->cp) % (e * t))
        return broke(PLC_RULE_EP_STAGE);
    return ok();
}

plc_verdict plc_layout_rules(const plc_rule_input *in)
{
    const plc_model *m = in->model;
    const plc_layout *l = &in->layout;
    /* a front end that checks the model itself skips the model family */
    plc_verdict v = CHECK(in, PLC_RULE_MODEL_POSITIVE) ? plc_model_rules(m) : ok();
    if (v.rule != PLC_RULE_OK) return v;

    /* each dimension in range */
    static const plc_layout_dim degrees[] = {PLC_LD_dp, PLC_LD_tp, PLC_LD_pp, PLC_LD_cp, PLC_LD_vpp, PLC_LD_micro_batch};
    for (size_t i = 0; i < sizeof degrees / sizeof degrees[0]; i++)
        if ((in->known & (1u << degrees[i])) && plc_layout_get(l, degrees[i]) < 1)
            return broke_at(PLC_RULE_DEGREE_POSITIVE, plc_layout_dim_key(degrees[i]));
    if (CHECK(in, PLC_RULE_ZERO_RANGE) && KNOWN(in, zero) && (l->zero < 0 || l->zero > 3)) return broke(PLC_RULE_ZERO_RANGE);
    if (KNOWN(in, schedule) && (unsigned)l->schedule >= PLC_SCHED_COUNT) return broke_at(PLC_RULE_ENUM_RANGE, "schedule");
    if (KNOWN(in, recompute) && (unsigned)l->recompute >= PLC_RECOMPUTE_COUNT)
        return broke_at(PLC_RULE_ENUM_RANGE, "recompute");
    if (KNOWN(in, attention) && (unsigned)l->attention >= PLC_ATTN_COUNT) return broke_at(PLC_RULE_ENUM_RANGE, "attention");
    if (KNOWN(in, sp) && (l->sp < 0 || l->sp > 1)) return broke_at(PLC_RULE_ENUM_RANGE, "sp");
    if (KNOWN(in, recompute_layers) && l->recompute_layers < 0) return broke_at(PLC_RULE_ENUM_RANGE, "recompute_layers");
    if (KNOWN(in, fused_rmsnorm) && (l->fused_rmsnorm < 0 || l->fused_rmsnorm > 1))
        return broke_at(PLC_RULE_ENUM_RANGE, "fused_rmsnorm");

    if (KNOWN(in, tp)) {
        if (CHECK(in, PLC_RULE_TP_HEADS) && m->heads % l->tp) return broke(PLC_RULE_TP_HEADS);
        if (CHECK(in, PLC_RULE_TP_KV_HEADS) && m->kv_heads % l->tp) return broke(PLC_RULE_TP_KV_HEADS);
        if (CHECK(in, PLC_RULE_TP_FFN) && m->ffn_hidden % l->tp) return broke(PLC_RULE_TP_FFN);
    }
    if (KNOWN(in, pp)) {
        if (CHECK(in, PLC_RULE_PP_MAX) && l->pp > PLC_RULES_MAX_STAGES) return broke(PLC_RULE_PP_MAX);
        /* equal stages, or unequal ones (plc_stage_layers) of a layer at least */
        if (CHECK(in, PLC_RULE_PP_LAYERS) && m->layers % l->pp && (!uneven_ok(in) || l->pp > m->layers))
            return broke(PLC_RULE_PP_LAYERS);
    }
    /* load-balanced context parallelism cuts the sequence into 2 cp chunks */
    if (CHECK(in, PLC_RULE_CP_SEQ) && KNOWN(in, cp) && l->cp > 1 && m->seq_len % (2 * l->cp)) return broke(PLC_RULE_CP_SEQ);
    /* the GPU count: the known degrees' product divides it, all four multiply to it */
    if (in->gpus > 0) {
        int64_t product = 1;
        int nknown = 0;
        const char *last = NULL;
        for (size_t i = 0; i < 4; i++) {
            if (!(in->known & (1u << degrees[i]))) continue;
            const int64_t v = plc_layout_get(l, degrees[i]);
            last = plc_layout_dim_key(degrees[i]);
            if (v > in->gpus) { product = in->gpus + 1; nknown = 4; break; }
            product *= v; /* each at most gpus: no overflow while product divides gpus */
            nknown++;
            if (in->gpus % product) break;
        }
        if (CHECK(in, PLC_RULE_GPU_COUNT) && nknown && (in->gpus % product || (nknown == 4 && product != in->gpus)))
            return broke_at(PLC_RULE_GPU_COUNT, last);
    }
    int64_t gb = in->global_batch;
    if (gb > 0) {
        if (CHECK(in, PLC_RULE_DP_BATCH) && KNOWN(in, dp) && gb % l->dp) return broke(PLC_RULE_DP_BATCH);
        if (CHECK(in, PLC_RULE_MB_BATCH) && KNOWN(in, micro_batch) && gb % l->micro_batch) return broke(PLC_RULE_MB_BATCH);
        if (CHECK(in, PLC_RULE_DP_MB_BATCH) && KNOWN(in, dp) && KNOWN(in, micro_batch) && gb % (l->dp * l->micro_batch)) return broke(PLC_RULE_DP_MB_BATCH);
    }
    /* sequence parallelism splits a micro-batch's rows evenly over tp */
    if (CHECK(in, PLC_RULE_SP_ROWS) && KNOWN(in, sp) && KNOWN(in, tp) && KNOWN(in, cp) && KNOWN(in, micro_batch) && l->sp && l->tp > 1 &&
        (l->micro_batch * (m->seq_len / l->cp)) % l->tp)
        return broke(PLC_RULE_SP_ROWS);

    v = expert_rules(in);
    if (v.rule != PLC_RULE_OK) return v;

    /* the pipeline schedule */
    bool sched = KNOWN(in, schedule), inter = sched && l->schedule == PLC_SCHED_INTERLEAVED;
    if (CHECK(in, PLC_RULE_VPP_SCHEDULE) && sched && KNOWN(in, vpp) && !inter && l->vpp != 1) return broke(PLC_RULE_VPP_SCHEDULE);
    if (CHECK(in, PLC_RULE_INTERLEAVED_PP) && inter && KNOWN(in, pp) && l->pp < 2) return broke(PLC_RULE_INTERLEAVED_PP);
    if (CHECK(in, PLC_RULE_VPP_PP1) && KNOWN(in, vpp) && KNOWN(in, pp) && l->vpp > 1 && l->pp == 1) return broke(PLC_RULE_VPP_PP1);
    if (CHECK(in, PLC_RULE_INTERLEAVED_VPP) && inter && KNOWN(in, vpp) && l->vpp < 2) return broke(PLC_RULE_INTERLEAVED_VPP);
    /* equal virtual stages, or unequal ones (uneven_stages 2) in the ceil form */
    if (CHECK(in, PLC_RULE_VPP_LAYERS) && KNOWN(in, pp) && KNOWN(in, vpp) && l->vpp > 1 && m->layers % (l->pp * l->vpp) &&
        (!uneven_ok(in) || !plc_stage_layers_ceil_form(m->layers, l->pp * l->vpp)))
        return broke(PLC_RULE_VPP_LAYERS);
    if (CHECK(in, PLC_RULE_INTERLEAVED_MICRO) && inter && gb > 0 && KNOWN(in, pp) && KNOWN(in, dp) && KNOWN(in, micro_batch) &&
        plc_micro_batches(gb, l) % l->pp)
        return broke(PLC_RULE_INTERLEAVED_MICRO);
    if (CHECK(in, PLC_RULE_MODULAR_PP) && sched && l->schedule == PLC_SCHED_MODULAR && KNOWN(in, pp) && l->pp < 2) return broke(PLC_RULE_MODULAR_PP);
    /* zero-bubble schedules (plc_pipe_split_backward): a pipeline; zb_v and
     * dualpipe_v cut the layers into 2 pp equal chunks and need enough
     * micro-batches to fill their V; the split backward's B makes the
     * norms' weight gradients (their fused kernel), which ZeRO 2 and 3
     * would reduce-scatter before its W adds the rest */
    bool zb = sched && plc_schedule_splits(l->schedule);
    bool vee = zb && (l->schedule == PLC_SCHED_ZB_V || l->schedule == PLC_SCHED_DUALPIPE_V);
    if (CHECK(in, PLC_RULE_ZB_PP) && zb && KNOWN(in, pp) && l->pp < 2) return broke(PLC_RULE_ZB_PP);
    if (CHECK(in, PLC_RULE_ZB_V_LAYERS) && vee && KNOWN(in, pp) && m->layers % (2 * l->pp)) return broke(PLC_RULE_ZB_V_LAYERS);
    if (CHECK(in, PLC_RULE_ZB_MICRO) && vee && gb > 0 && KNOWN(in, pp) && KNOWN(in, dp) && KNOWN(in, micro_batch) &&
        plc_micro_batches(gb, l) < 2 * l->pp - (l->schedule == PLC_SCHED_DUALPIPE_V))
        return broke(PLC_RULE_ZB_MICRO);
    if (CHECK(in, PLC_RULE_ZB_ZERO) && zb && KNOWN(in, zero) && l->zero >= 2) return broke(PLC_RULE_ZB_ZERO);

    /* recompute granularity: a layer count with block and every only, at
     * most the layers of a (virtual) stage */
    bool by_layers = KNOWN(in, recompute) && (l->recompute == PLC_RECOMPUTE_BLOCK || l->recompute == PLC_RECOMPUTE_EVERY);
    if (KNOWN(in, recompute_layers) && KNOWN(in, recompute)) {
        if (CHECK(in, PLC_RULE_RECOMPUTE_LAYERS_POLICY) && !by_layers && l->recompute_layers != 0)
            return broke(PLC_RULE_RECOMPUTE_LAYERS_POLICY);
        if (CHECK(in, PLC_RULE_RECOMPUTE_LAYERS_NEEDED) && by_layers && l->recompute_layers < 1)
            return broke(PLC_RULE_RECOMPUTE_LAYERS_NEEDED);
    }
    if (CHECK(in, PLC_RULE_RECOMPUTE_LAYERS_STAGE) && by_layers && KNOWN(in, recompute_layers) && KNOWN(in, pp) &&
        KNOWN(in, vpp) && l->pp >= 1 && l->vpp >= 1 &&
        l->recompute_layers > plc_recompute_layers_max(m->layers, l))
        return broke(PLC_RULE_RECOMPUTE_LAYERS_STAGE);

    if (CHECK(in, PLC_RULE_FLASH_FP32) && in->precision_known && in->precision == PLC_PREC_FP32 && KNOWN(in, attention) &&
        (l->attention == PLC_ATTN_FLASH1 || l->attention == PLC_ATTN_FLASH2))
        return broke(PLC_RULE_FLASH_FP32);
    /* the engine runs only the values its profile offers */
    if (CHECK(in, PLC_RULE_ENGINE_OFFERS) && in->engine)
        for (int d = 0; d < PLC_LD_COUNT; d++)
            if ((in->known >> d & 1u) && !plc_engine_offers(in->engine, (plc_layout_dim)d, plc_layout_get(l, (plc_layout_dim)d)))
                return broke_at(PLC_RULE_ENGINE_OFFERS, plc_layout_dim_key((plc_layout_dim)d));
    return ok();
}

static plc_rule_input job_input(const plc_job *job, const plc_layout *l)
{
    return (plc_rule_input){.model = &job->model,
                            .gpus = plc_cluster_gpus(&job->cluster),
                            .global_batch = job->train.global_batch,
                            .precision = job->train.precision,
                            .precision_known = true,
                            .layout = *l,
                            .known = PLC_LD_ALL,
                            .engine = &job->engine,
                            .engine_id = job->train.engine};
}

plc_verdict plc_layout_rules_job(const plc_job *job, const plc_layout *l)
{
    plc_rule_input in = job_input(job, l);
    return plc_layout_rules(&in);
}

const char *plc_layout_rules_job_message(const plc_job *job, const plc_layout *l, plc_verdict v, char *buf,
                                         size_t size)
{
    plc_rule_input in = job_input(job, l);
    return plc_rule_message(&in, v, buf, size);
}

/* GPU_COUNT: the product of the known degrees against the cluster's GPUs */
static void gpu_count_message(const plc_rule_input *in, char *buf, size_t size)
{
    const plc_layout *l = &in->layout;
    int64_t product = 1;
    static const plc_layout_dim dims[4] = {PLC_LD_dp, PLC_LD_tp, PLC_LD_pp, PLC_LD_cp};
    char expr[64] = "";
    size_t len = 0;
    int nknown = 0;
    for (int i = 0; i < 4; i++) {
        if (!(in->known & (1u << dims[i]))) continue;
        if (product <= in->gpus) product *= plc_layout_get(l, dims[i]);
        len += (size_t)snprintf(expr + len, sizeof expr - len, "%s%s", nknown ? " * " : "", plc_layout_dim_key(dims[i]));
        nknown++;
    }
    if (nknown == 4 && product <= in->gpus)
        snprintf(buf, size, "%s = %lld, but the cluster has %lld GPUs (nodes * gpus_per_node)", expr,
                 (long long)product, (long long)in->gpus);
    else
        snprintf(buf, size, "%s = %lld does not divide the %lld GPUs (nodes * gpus_per_node)", expr,
                 (long long)product, (long long)in->gpus);
}

/* ENGINE_OFFERS: the value of dimension `key` the engine does not run, and
 * those it does */
static void engine_offers_message(const plc_rule_input *in, const char *key, char *buf, size_t size)
{
    const plc_layout *l = &in->layout;
    plc_layout_dim d = PLC_LD_COUNT;
    for (int i = 0; i < PLC_LD_COUNT; i++)
        if (strcmp(plc_layout_dim_key((plc_layout_dim)i), key) == 0) d = (plc_layout_dim)i;
    char val[32], runs[160] = "";
    size_t n = 0;
    for (int64_t x = 0; x < 64 && d < PLC_LD_COUNT && in->engine; x++) {
        if (!(in->engine->offers[d] >> x & 1u)) continue;
        n += (size_t)snprintf(runs + n, n < sizeof runs ? sizeof runs - n : 0, "%s%s", n ? ", " : "",
                              plc_layout_value_text(d, x, val, sizeof val));
    }
    snprintf(buf, size, "engine %s does not run %s = %s; it runs %s", plc_engine_name(in->engine_id), key,
             plc_layout_value_text(d, d < PLC_LD_COUNT ? plc_layout_get(l, d) : 0, val, sizeof val), runs);
}

const char *plc_rule_message(const plc_rule_input *in, plc_verdict v, char *buf, size_t size)
{
    const plc_model *m = in->model;
    const plc_layout *l = &in->layout;
#define SAY(...) snprintf(buf, size, __VA_ARGS__)
#define LL(x) ((long long)(x))
    switch (v.rule) {
    case PLC_RULE_OK: SAY("the layout is legal"); break;
    case PLC_RULE_MODEL_POSITIVE: SAY("%s must be at least 1", v.key); break;
    case PLC_RULE_HEADS_HIDDEN: SAY("heads = %lld does not divide hidden = %lld", LL(m->heads), LL(m->hidden)); break;
    case PLC_RULE_KV_HEADS_HEADS:
        SAY("kv_heads = %lld does not divide heads = %lld", LL(m->kv_heads), LL(m->heads));
        break;
    case PLC_RULE_HEAD_DIM_ODD:
        if (m->head_dim > 0) SAY("head_dim = %lld is odd", LL(m->head_dim));
        else SAY("head dimension hidden / heads = %lld is odd", LL(m->hidden / m->heads));
        break;
    case PLC_RULE_DEGREE_POSITIVE: SAY("%s must be at least 1", v.key); break;
    case PLC_RULE_ZERO_RANGE: SAY("zero = %lld: the ZeRO stage is 0 to 3", LL(l->zero)); break;
    case PLC_RULE_ENUM_RANGE: SAY("%s has a value out of range", v.key); break;
    case PLC_RULE_GPU_COUNT: gpu_count_message(in, buf, size); break;
    case PLC_RULE_TP_HEADS: SAY("tp = %lld does not divide heads = %lld", LL(l->tp), LL(m->heads)); break;
    case PLC_RULE_TP_KV_HEADS: SAY("tp = %lld does not divide kv_heads = %lld", LL(l->tp), LL(m->kv_heads)); break;
    case PLC_RULE_TP_FFN: SAY("tp = %lld does not divide ffn_hidden = %lld", LL(l->tp), LL(m->ffn_hidden)); break;
    case PLC_RULE_PP_MAX: SAY("pp = %lld: at most %d pipeline stages", LL(l->pp), PLC_RULES_MAX_STAGES); break;
    case PLC_RULE_PP_LAYERS:
        if (!in->engine || in->engine->uneven_stages <= 0)
            SAY("pp = %lld does not divide layers = %lld; engine %s runs equal stages only", LL(l->pp),
                LL(m->layers), plc_engine_name(in->engine_id));
        else if (l->pp > m->layers)
            SAY("pp = %lld is more than layers = %lld: every stage needs a layer", LL(l->pp), LL(m->layers));
        else if (KNOWN(in, schedule) && l->schedule != PLC_SCHED_GPIPE && l->schedule != PLC_SCHED_1F1B)
            SAY("pp = %lld does not divide layers = %lld; engine %s runs unequal stages with schedule %s only, not %s",
                LL(l->pp), LL(m->layers), plc_engine_name(in->engine_id),
                in->engine->uneven_stages >= 2 ? "gpipe, 1f1b or interleaved" : "gpipe or 1f1b",
                plc_schedule_name(l->schedule));
        else
            SAY("pp = %lld does not divide layers = %lld; unequal stages need vpp = 1, not %lld", LL(l->pp),
                LL(m->layers), LL(l->vpp));
        break;
    case PLC_RULE_CP_SEQ:
        SAY("cp = %lld needs seq_len = %lld to split into 2 * cp = %lld equal chunks", LL(l->cp), LL(m->seq_len),
            LL(2 * l->cp));
        break;
    case PLC_RULE_DP_BATCH:
        SAY("dp = %lld does not divide global_batch = %lld sequences", LL(l->dp), LL(in->global_batch));
        break;
    case PLC_RULE_MB_BATCH:
        SAY("micro_batch = %lld does not divide global_batch = %lld sequences", LL(l->micro_batch),
            LL(in->global_batch));
        break;
    case PLC_RULE_DP_MB_BATCH:
        SAY("dp * micro_batch = %lld does not divide global_batch = %lld sequences", LL(l->dp * l->micro_batch),
            LL(in->global_batch));
        break;
    case PLC_RULE_SP_ROWS:
        SAY("sequence parallelism needs micro_batch * seq_len / cp = %lld rows to divide by tp = %lld",
            LL(l->micro_batch * (m->seq_len / l->cp)), LL(l->tp));
        break;
    case PLC_RULE_EP_DENSE:
        SAY("%s = %lld needs a model with experts; a dense model runs ep = etp = 1", v.key,
            LL(strcmp(v.key, "etp") == 0 ? l->etp : l->ep));
        break;
    case PLC_RULE_EP_EXPERTS:
        SAY("ep = %lld does not divide experts = %lld", LL(plc_layout_ep(l)), LL(m->moe.experts));
        break;
    case PLC_RULE_ETP_FFN:
        SAY("etp = %lld does not divide expert_ffn_hidden = %lld", LL(plc_layout_etp(l)), LL(m->moe.expert_ffn_hidden));
        break;
    case PLC_RULE_EP_STAGE:
        SAY("ep * etp = %lld does not divide the dp * tp * cp = %lld ranks of a pipeline stage (the experts' grid "
            "regroups them)", LL(plc_layout_ep(l) * plc_layout_etp(l)), LL(l->dp * l->tp * l->cp));
        break;
    case PLC_RULE_ENGINE_MOE:
        SAY("engine %s does not run mixture-of-experts layers (%s); solve with engine = megatron or fsdp2",
            plc_engine_name(in->engine_id), in->engine ? in->engine->describes : "no profile");
        break;
    case PLC_RULE_ENGINE_EP:
        SAY("engine %s runs mixture-of-experts layers with ep = 1 only (every rank holds all of its stage's "
            "experts): ep = %lld",
            plc_engine_name(in->engine_id), LL(plc_layout_ep(l)));
        break;
    case PLC_RULE_ENGINE_ETP:
        SAY("engine %s has no expert tensor parallelism: etp = %lld, it runs etp = 1", plc_engine_name(in->engine_id),
            LL(plc_layout_etp(l)));
        break;
    case PLC_RULE_VPP_SCHEDULE:
        SAY("vpp = %lld needs schedule = interleaved, not %s", LL(l->vpp), plc_schedule_name(l->schedule));
        break;
    case PLC_RULE_VPP_PP1: SAY("vpp = %lld needs pipeline parallelism, but pp = 1", LL(l->vpp)); break;
    case PLC_RULE_INTERLEAVED_PP: SAY("the interleaved schedule needs pp >= 2"); break;
    case PLC_RULE_INTERLEAVED_VPP: SAY("the interleaved schedule needs vpp >= 2"); break;
    case PLC_RULE_VPP_LAYERS:
        if (uneven_ok(in)) {
            int64_t n = l->pp * l->vpp, mid = (m->layers + n - 1) / n;
            SAY("pp * vpp = %lld does not divide layers = %lld, and unequal virtual stages need layers >= %lld: "
                "ceil(layers / (pp * vpp)) = %lld on each but the first and last, a layer at least on those",
                LL(n), LL(m->layers), LL((n - 2) * mid + 2), LL(mid));
        } else
            SAY("pp * vpp = %lld does not divide layers = %lld", LL(l->pp * l->vpp), LL(m->layers));
        break;
    case PLC_RULE_INTERLEAVED_MICRO:
        SAY("the interleaved schedule needs the micro-batch count (%lld) to be a multiple of pp = %lld",
            LL(plc_micro_batches(in->global_batch, l)), LL(l->pp));
        break;
    case PLC_RULE_MODULAR_PP: SAY("modular placement needs pp >= 2"); break;
    case PLC_RULE_ZB_PP: SAY("schedule %s splits a pipeline's backwards and needs pp >= 2", plc_schedule_name(l->schedule)); break;
    case PLC_RULE_ZB_V_LAYERS:
        SAY("schedule %s cuts the layers into 2 * pp = %lld equal chunks, but layers = %lld", plc_schedule_name(l->schedule),
            LL(2 * l->pp), LL(m->layers));
        break;
    case PLC_RULE_ZB_MICRO:
        SAY("schedule %s needs at least %s = %lld micro-batches, not %lld", plc_schedule_name(l->schedule),
            l->schedule == PLC_SCHED_DUALPIPE_V ? "2 * pp - 1" : "2 * pp",
            LL(2 * l->pp - (l->schedule == PLC_SCHED_DUALPIPE_V)), LL(plc_micro_batches(in->global_batch, l)));
        break;
    case PLC_RULE_ZB_ZERO:
        SAY("schedule %s runs with zero = 0 or 1, not %lld: its B makes the norms' weight gradients, which zero >= 2 "
            "would reduce-scatter before its W adds the rest", plc_schedule_name(l->schedule), LL(l->zero));
        break;
    case PLC_RULE_RECOMPUTE_LAYERS_POLICY:
        SAY("recompute_layers = %lld needs recompute = block or every, not %s", LL(l->recompute_layers),
            plc_recompute_name(l->recompute));
        break;
    case PLC_RULE_RECOMPUTE_LAYERS_NEEDED:
        SAY("recompute = %s needs recompute_layers >= 1 (%s)", plc_recompute_name(l->recompute),
            l->recompute == PLC_RECOMPUTE_BLOCK ? "the first k layers of each stage" : "every n-th layer");
        break;
    case PLC_RULE_RECOMPUTE_LAYERS_STAGE:
        if (l->recompute == PLC_RECOMPUTE_BLOCK)
            SAY("recompute_layers = %lld is more than the %lld layers of a stage (layers / (pp * vpp); of the largest "
                "where they are unequal)",
                LL(l->recompute_layers), LL(plc_recompute_layers_max(m->layers, l)));
        else
            SAY("recompute_layers = %lld is more than the %lld layers of a rank (layers / pp; of the largest rank "
                "where they are unequal)", LL(l->recompute_layers), LL(plc_recompute_layers_max(m->layers, l)));
        break;
    case PLC_RULE_FLASH_FP32:
        SAY("attention = %s needs bf16; fp32 training uses naive or fused attention", plc_attention_name(l->attention));
        break;
    case PLC_RULE_ENGINE_OFFERS: engine_offers_message(in, v.key, buf, size); break;
    case PLC_RULE_COUNT: SAY("unknown rule"); break;
    }
#undef SAY
#undef LL
    return buf;
}
