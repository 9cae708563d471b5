/* export_megatron.c: plc export --megatron's output, a Megatron-LM launch
 * script (torchrun pretrain_gpt.py) in the flags of one Megatron-Core
 * release, the one the engine profile that was modelled describes: the
 * current release for engine megatron, r0.8 for megatron_r0_8 (the table
 * `releases`). It carries the spec's block (Llama or GPT; its experts and
 * latent attention), dropout 0, the optimizer and schedule, batch and
 * precision, and the layout (ep and etp included) with the profile's
 * overlap and dispatcher flags. What a release's flags cannot say is
 * reported by the two checks (cli_int.h), which the command turns into
 * a refusal. */
#include <stdio.h>
#include <string.h>

#include "common/layout_rules.h"
#include "compiler/cli/cli_int.h"
#include "compiler/solver/solver.h"

/* One row per release a profile models. Every flag a script of a release
 * carries is on that release's list, read from its
 * megatron/training/arguments.py at the commit named (tests/e2e/export.sh
 * and tests/unit/test_cli_export.c check it). */
typedef struct release {
    plc_engine engine; /* the profile modelling it (engines.yaml) */
    const char *name;
    const char *flags; /* the release's flag list, under docs/engines/ */
    /* --attention-backend chooses Transformer Engine's attention (0.19
     * asserts that NVTE_FLASH_ATTN and NVTE_FUSED_ATTN agree with it,
     * megatron/core/models/common/language_module/language_module.py);
     * false: the NVTE_* variables choose it (r0.8) */
    bool attention_backend;
    /* unequal stages: --account-for-embedding/loss-in-pipeline-split,
     * --decoder-first/last-pipeline-num-layers (vpp 1) and
     * --pipeline-model-parallel-layout (vpp > 1); false: equal only */
    bool uneven;
    const char *zero_why; /* why ZeRO 2 and 3 are not written */
    /* mixture of experts beyond r0.8's: --expert-tensor-parallel-size (the
     * experts' tp apart from the attention's; r0.8 shards them over tp),
     * --moe-ffn-hidden-size, --moe-layer-freq, shared experts, sigmoid and
     * group-limited routing, the top-k scaling factor, the expert bias, the
     * flex dispatcher and the EP all-to-all overlap; multi-latent attention */
    bool moe_current;
} release;

static const release releases[] = {
    {PLC_ENGINE_MEGATRON, "Megatron-Core 0.19 (core_v0.19.0, commit 5be9626709)", "megatron-core-0.19-flags.txt", true,
     true, "this export writes Megatron-LM's distributed optimizer (--use-distributed-optimizer, ZeRO 1) only, not "
           "Megatron-FSDP (--use-megatron-fsdp), whose buffers the profile does not model", true},
    {PLC_ENGINE_MEGATRON_R0_8, "Megatron-Core r0.8 (core_v0.8.0, commit baf94af3c6)", "megatron-core-r0.8-flags.txt",
     false, false, "Megatron-Core r0.8 shards the optimizer state only (--use-distributed-optimizer); it has no FSDP", false},
};

static const release *release_of(plc_engine e)
{
    for (size_t i = 0; i < sizeof releases / sizeof releases[0]; i++)
        if (releases[i].engine == e) return &releases[i];
    return &releases[0];
}

/* ---- mixture of experts ------------------------------------------------------
 * plc's MoE block (docs/model.md) in Megatron-Core's flags: the routed
 * experts' count, top-k and width, which layers (--moe-layer-freq), the
 * shared experts as one MLP of their summed width, the router (topk over
 * the logits then a softmax over the k, i.e. plc's renormalised softmax;
 * or sigmoid scores normalised over the k), group-limited routing, the
 * scale, the expert bias, the auxiliary loss, capacity or dropless; the
 * layout's ep and etp with the profile's dispatcher, grouped GEMM and
 * overlap. Read from megatron/training/arguments.py and
 * megatron/core/transformer/transformer_config.py of each release. */

static const char *const dispatcher_name[3] = {"allgather", "alltoall", "flex"};

static int64_t expert_width(const plc_model *m)
{
    return m->moe.expert_ffn_hidden > 0 ? m->moe.expert_ffn_hidden : m->ffn_hidden;
}

static int64_t shared_width(const plc_model *m)
{
    return m->moe.shared_ffn_hidden > 0 ? m->moe.shared_ffn_hidden : expert_width(m);
}

/* what of model m's experts release r cannot say, or NULL */
static const char *moe_unsaid(const release *r, const plc_model *m, char *buf, size_t size)
{
    const plc_moe *e = &m->moe;
    if (!r->moe_current) {
        if (expert_width(m) != m->ffn_hidden)
            snprintf(buf, size, "expert_ffn_hidden = %lld with ffn_hidden = %lld: %s's experts take "
                                "--ffn-hidden-size (it has no --moe-ffn-hidden-size)",
                     (long long)expert_width(m), (long long)m->ffn_hidden, r->name);
        else if (e->shared_experts > 0)
            snprintf(buf, size, "shared_experts = %lld: %s has no shared experts "
                                "(no --moe-shared-expert-intermediate-size)", (long long)e->shared_experts, r->name);
        else if (e->dense_layers > 0 || e->moe_every > 1)
            snprintf(buf, size, "dense_layers = %lld, moe_every = %lld: %s makes every layer an MoE layer "
                                "(no --moe-layer-freq)", (long long)e->dense_layers, (long long)e->moe_every, r->name);
        else if (e->router == PLC_ROUTER_SIGMOID)
            snprintf(buf, size, "router = sigmoid: %s routes by a softmax only (no --moe-router-score-function)", r->name);
        else if (e->router_groups > 0)
            snprintf(buf, size, "router_groups = %lld: %s has no group-limited routing (no --moe-router-num-groups)",
                     (long long)e->router_groups, r->name);
        else if (e->route_scale != 1.0)
            snprintf(buf, size, "route_scale = %g: %s does not scale the routed experts' output "
                                "(no --moe-router-topk-scaling-factor)", e->route_scale, r->name);
        else if (e->expert_bias)
            snprintf(buf, size, "expert_bias = on: %s has no auxiliary-loss-free balancing "
                                "(no --moe-router-enable-expert-bias)", r->name);
        else return NULL;
        return buf;
    }
    if (e->router == PLC_ROUTER_SOFTMAX && e->top_k == 1)
        snprintf(buf, size, "router = softmax with experts_per_token = 1: plc weights the one expert by its "
                            "renormalised probability (1); %s raises 'Please use --moe-router-pre-softmax when topk "
                            "is 1', which weights by the softmax over all experts (transformer_config.py)", r->name);
    else if (e->router_groups > 0 && e->router_groups_top > 0 && e->top_k / e->router_groups_top != 2)
        snprintf(buf, size, "router_groups_top = %lld with experts_per_token = %lld: plc scores a group by its 2 best "
                            "experts, %s by its top-(topk / group_topk) = %lld (moe_utils.py, group_limited_topk)",
                 (long long)e->router_groups_top, (long long)e->top_k, r->name,
                 (long long)(e->top_k / e->router_groups_top));
    else if (e->expert_bias && e->router != PLC_ROUTER_SIGMOID)
        snprintf(buf, size, "expert_bias = on with router = softmax: %s's expert bias works with the sigmoid "
                            "score function only (transformer_config.py)", r->name);
    else return NULL;
    return buf;
}

/* the profile's token dispatcher, an index of dispatcher_name */
static int dispatcher_of(const plc_engine_profile *p)
{
    return p->moe_dispatcher >= 0 && p->moe_dispatcher <= 2 ? (int)p->moe_dispatcher : 1;
}

/* what of layout l's expert grid r0.8 cannot say under profile p, or NULL */
static const char *moe_r0_8_layout_unsaid(const release *r, const plc_layout *l, const plc_engine_profile *p,
                                          char *buf, size_t size)
{
    int64_t ep = plc_layout_ep(l), etp = plc_layout_etp(l);
    if (etp != l->tp)
        snprintf(buf, size, "etp = %lld with tp = %lld: %s shards the experts over the attention's tp (no "
                            "--expert-tensor-parallel-size)", (long long)etp, (long long)l->tp, r->name);
    else if (l->dp % ep)
        snprintf(buf, size, "ep = %lld with dp = %lld: %s carves the expert-parallel group out of the "
                            "data-parallel ranks and asserts that ep divides dp (megatron/core/parallel_state.py)",
                 (long long)ep, (long long)l->dp, r->name);
    else if (dispatcher_of(p) == 2)
        snprintf(buf, size, "the profile's dispatcher flex: %s offers allgather and alltoall", r->name);
    else if (p->moe_comm_overlap > 0)
        snprintf(buf, size, "the profile's moe_comm_overlap: %s has no --overlap-moe-expert-parallel-comm", r->name);
    else return NULL;
    return buf;
}

/* what of layout l's expert grid release r cannot say under profile p, or
 * NULL */
static const char *moe_layout_unsaid(const release *r, const plc_model *m, const plc_layout *l,
                                     const plc_engine_profile *p, char *buf, size_t size)
{
    double cf = m->moe.capacity_factor;
    if (!r->moe_current && moe_r0_8_layout_unsaid(r, l, p, buf, size)) return buf;
    if (l->tp > 1 && !l->sp)
        snprintf(buf, size, "sp = off with tp = %lld: %s raises 'During training, performance may degrade if MoE "
                            "and tensor parallelism are enabled without also enabling sequence parallelism' "
                            "(megatron/core/transformer/moe/moe_layer.py)", (long long)l->tp, r->name);
    else if (r->moe_current && m->arch == PLC_ARCH_GPT && plc_layout_etp(l) > 1)
        snprintf(buf, size, "etp = %lld with arch = gpt (biased experts): %s asserts 'Bias in Moe is only "
                            "supported when ETP==1' (transformer_config.py)", (long long)plc_layout_etp(l), r->name);
    else if (!r->moe_current && cf > 0 && dispatcher_of(p) == 0)
        snprintf(buf, size, "capacity_factor = %g under the allgather dispatcher: %s raises "
                            "'moe_expert_capacity_factor only works with alltoall token dispatcher' "
                            "(transformer_config.py); 0.19 drops in the router, under any", cf, r->name);
    else if (cf > 0 && l->tp * l->cp > 1)
        snprintf(buf, size, "capacity_factor = %g with tp * cp = %lld: plc caps an expert's share of a "
                            "micro-batch's tokens, %s of each rank's sequence shard (get_capacity over the "
                            "router's local tokens, megatron/core/transformer/moe/moe_utils.py)",
                 cf, (long long)(l->tp * l->cp), r->name);
    else return NULL;
    return buf;
}

/* --moe-layer-freq: Megatron-Core's integer N makes layer i an MoE layer
 * when i % N == 0, as plc without dense_layers; with them, the list form
 * (arguments.py, moe_freq_type: "([0]*3+[1]*58)", digits, brackets, + and *
 * only) */
static void write_layer_freq(FILE *out, const plc_model *m)
{
    int64_t d = m->moe.dense_layers, e = m->moe.moe_every > 1 ? m->moe.moe_every : 1;
    if (d <= 0) {
        if (e > 1) fprintf(out, "    --moe-layer-freq %lld\n", (long long)e);
        return;
    }
    int64_t n = m->layers - d, groups = n / e, rest = n % e;
    fprintf(out, "    --moe-layer-freq \"([0]*%lld", (long long)d);
    if (e == 1) fprintf(out, "+[1]*%lld", (long long)n);
    else if (groups > 0) fprintf(out, "+([1]+[0]*%lld)*%lld", (long long)(e - 1), (long long)groups);
    if (e > 1 && rest > 0) fprintf(out, "+[1]+[0]*%lld", (long long)(rest - 1));
    fprintf(out, ")\"\n");
}

/* multi-latent attention (docs/model.md): 0.19's MLA flags. Megatron-Core
 * rotates the RoPE halves and raises "rotary_interleaved does not work with
 * multi_latent_attention" (transformer_config.py); plc rotates interleaved
 * pairs. The two are the same model up to one fixed permutation of the
 * RoPE dimensions, which come from linear projections (the rope rows of
 * the query projection w_uq, or w_q, and of w_dkv) and meet only in q . k:
 * the script says so, and a checkpoint moved between the two permutes
 * those rows, as Hugging Face's Llama conversion does. --rope-type rope: MLA's default is YaRN; the
 * softmax scale is then 1/sqrt(qk_head_dim + qk_pos_emb_head_dim), plc's. */
static void write_mla(FILE *out, const plc_model *m)
{
    const plc_mla *a = &m->mla;
    fprintf(out, "    --multi-latent-attention");
    if (a->q_rank > 0) fprintf(out, " --q-lora-rank %lld", (long long)a->q_rank);
    fprintf(out, " --kv-lora-rank %lld\n", (long long)a->kv_rank);
    fprintf(out, "    --qk-head-dim %lld --qk-pos-emb-head-dim %lld --v-head-dim %lld\n", (long long)a->nope_head_dim,
            (long long)a->rope_head_dim, (long long)a->v_head_dim);
}

/* the script's words on the experts: how Megatron-Core routes as plc does */
static void moe_comment(char *buf, size_t size, const release *r, const plc_model *m)
{
    const plc_moe *e = &m->moe;
    snprintf(buf, size,
             "# Experts: %lld routed of width %lld, %lld a token%s, in %lld of %lld layers; routed as plc's:\n"
             "# %s%s.\n",
             (long long)e->experts, (long long)expert_width(m), (long long)e->top_k,
             e->shared_experts > 0 ? ", and shared ones" : "", (long long)plc_moe_layer_count(m), (long long)m->layers,
             e->router == PLC_ROUTER_SIGMOID ? "sigmoid scores, the top k normalised over the k"
                                             : "the top k of the logits, then a softmax over the k (plc's renormalised softmax)",
             e->expert_bias && r->moe_current
                 ? ";\n# the expert bias at Megatron-Core's update rate (--moe-router-bias-update-rate, default 1e-3)"
                 : "");
}

/* the model's experts: what MoE layers are and how they route */
static void write_moe_model(FILE *out, const release *r, const plc_model *m)
{
    const plc_moe *e = &m->moe;
    fprintf(out, "    # mixture of experts\n");
    fprintf(out, "    --num-experts %lld --moe-router-topk %lld\n", (long long)e->experts, (long long)e->top_k);
    if (r->moe_current) {
        fprintf(out, "    --moe-ffn-hidden-size %lld\n", (long long)expert_width(m));
        write_layer_freq(out, m);
        if (e->shared_experts > 0)
            fprintf(out, "    --moe-shared-expert-intermediate-size %lld\n", (long long)(e->shared_experts * shared_width(m)));
        fprintf(out, "    --moe-router-score-function %s\n", e->router == PLC_ROUTER_SIGMOID ? "sigmoid" : "softmax");
        if (e->router_groups > 0)
            fprintf(out, "    --moe-router-num-groups %lld --moe-router-group-topk %lld\n", (long long)e->router_groups,
                    (long long)e->router_groups_top);
        if (e->route_scale != 1.0) fprintf(out, "    --moe-router-topk-scaling-factor %g\n", e->route_scale);
        if (e->expert_bias) fprintf(out, "    --moe-router-enable-expert-bias\n");
    }
    if (e->aux_loss > 0)
        fprintf(out, "    --moe-router-load-balancing-type aux_loss --moe-aux-loss-coeff %g\n", e->aux_loss);
    else fprintf(out, "    --moe-router-load-balancing-type none\n");
    if (e->capacity_factor > 0)
        fprintf(out, "    --moe-expert-capacity-factor %g --moe-token-drop-policy position\n", e->capacity_factor);
}

/* the layout's expert grid and the profile's dispatcher, grouped GEMM and
 * overlap */
static void write_moe_layout(FILE *out, const release *r, const plc_layout *l, const plc_engine_profile *p)
{
    int dispatcher = dispatcher_of(p);
    fprintf(out, "    --expert-model-parallel-size %lld", (long long)plc_layout_ep(l));
    if (r->moe_current) fprintf(out, " --expert-tensor-parallel-size %lld", (long long)plc_layout_etp(l));
    fprintf(out, "\n    --moe-token-dispatcher-type %s%s%s\n", dispatcher_name[dispatcher],
            dispatcher == 2 ? " --moe-flex-dispatcher-backend deepep" : "", p->moe_grouped_gemm > 0 ? " --moe-grouped-gemm" : "");
    if (r->moe_current && p->moe_comm_overlap > 0)
        fprintf(out, "    --overlap-moe-expert-parallel-comm --delay-wgrad-compute\n");
}

/* the model and training settings release r cannot take, or NULL */
static const char *model_unsaid(const release *r, const plc_model *m, const plc_train *t, const plc_engine_profile *p,
                                char *buf, size_t size)
{
    if (m->moe.experts > 0 && moe_unsaid(r, m, buf, size)) return buf;
    if (m->moe.experts > 0 && !r->moe_current && p && p->moe_grouped_gemm > 0 && t->precision != PLC_PREC_BF16 &&
        t->precision != PLC_PREC_FP8) {
        snprintf(buf, size, "precision = %s with the profile's grouped GEMM: %s asserts 'Currently GroupedGEMM for "
                            "MoE only supports bf16 dtype' (megatron/training/arguments.py)",
                 plc_precision_name(t->precision), r->name);
        return buf;
    }
    if (m->mla.kv_rank > 0 && !r->moe_current) {
        snprintf(buf, size, "kv_lora_rank = %lld (latent attention): %s has no multi-latent attention "
                            "(no --multi-latent-attention)", (long long)m->mla.kv_rank, r->name);
        return buf;
    }
    if (t->warmup_steps >= t->decay_steps) {
        snprintf(buf, size, "lr.warmup = %lld is not below the decay's end (%lld steps): %s asserts "
                            "lr_warmup_steps < lr_decay_steps (megatron/training/optimizer_param_scheduler.py)",
                 (long long)t->warmup_steps, (long long)t->decay_steps, r->name);
        return buf;
    }
    return NULL;
}

/* why release r's flags cannot express layout l of model m under profile
 * p, or NULL: what the profile's runs lists may allow but the release has
 * no flag or accepts no value for */
static const char *layout_unsaid(const release *r, const plc_model *m, const plc_layout *l, const plc_engine_profile *p,
                                 char *buf, size_t size)
{
    if (m->moe.experts > 0 && moe_layout_unsaid(r, m, l, p, buf, size)) return buf;
    if (!r->uneven && plc_uneven_stages_needed(m->layers, l))
        snprintf(buf, size, "pp * vpp = %lld stages of unequal layer counts (layers = %lld): %s asserts that pp divides "
                            "layers (and pp * vpp with the interleaved schedule)",
                 (long long)(l->pp * l->vpp), (long long)m->layers, r->name);
    else if (l->zero > 1)
        snprintf(buf, size, "zero = %lld: %s", (long long)l->zero, r->zero_why);
    else if (l->attention != PLC_ATTN_FUSED && l->attention != PLC_ATTN_FLASH2)
        snprintf(buf, size, "attention = %s: %s runs Transformer Engine's FlashAttention-2 path or its "
                            "unfused attention with the fused masked softmax (fused)", plc_attention_name(l->attention),
                 r->name);
    else if (l->recompute == PLC_RECOMPUTE_EVERY)
        snprintf(buf, size, "recompute = every: %s checkpoints the first k layers of a stage (block) or all (uniform), "
                            "not every k-th", r->name);
    else if (l->schedule == PLC_SCHED_INTERLEAVED && l->vpp > 1 && p->p2p_overlap <= 0 && l->pp <= 2)
        snprintf(buf, size, "interleaved with pp = %lld and p2p overlap off (the profile's p2p_overlap 0): %s "
                            "asserts pp > 2 with --no-overlap-p2p-communication", (long long)l->pp, r->name);
    else return NULL;
    return buf;
}

/* Does --account-for-embedding-in-pipeline-split with
 * --account-for-loss-in-pipeline-split split the layers as plc does? Those
 * count the embedding and the loss as a layer each: (layers + 2) / n on
 * each of the n = pp * vpp virtual stages, one fewer on the first and the
 * last (megatron/core/transformer/transformer_block.py,
 * get_num_layers_to_build); *per is that count. */
static bool account_split(int64_t layers, int64_t n, int64_t *per)
{
    if (n < 2 || (layers + 2) % n) return false;
    *per = (layers + 2) / n;
    for (int64_t s = 0; s < n; s++)
        if (plc_stage_layers(layers, n, s) != *per - (s == 0) - (s == n - 1)) return false;
    return true;
}

/* the pipeline split's flags: equal (virtual) stages, the account flags
 * where they give plc's split, else --decoder-first/last-pipeline-num-layers
 * (vpp 1: with a virtual pipeline Megatron wants those counts divisible by
 * vpp) or --pipeline-model-parallel-layout, one entry a virtual stage in
 * order v * pp + r ("E" the embedding, "t" a layer, "L" the loss: 32
 * layers on 12 virtual stages, "Et*1|(t*3|)*10,t*1L") */
static void write_split(FILE *out, const plc_model *m, const plc_layout *l, const plc_engine_profile *p)
{
    int64_t n = l->pp * l->vpp, per;
    bool inter = l->schedule == PLC_SCHED_INTERLEAVED && l->vpp > 1;
    const char *p2p = inter && p->p2p_overlap <= 0 ? " --no-overlap-p2p-communication" : "";
    if (!plc_uneven_stages_needed(m->layers, l)) {
        if (inter) fprintf(out, "    --num-layers-per-virtual-pipeline-stage %lld%s\n", (long long)(m->layers / n), p2p);
        return;
    }
    if (account_split(m->layers, n, &per)) {
        fprintf(out, "    --account-for-embedding-in-pipeline-split --account-for-loss-in-pipeline-split\n");
        if (inter) fprintf(out, "    --num-layers-per-virtual-pipeline-stage %lld%s\n", (long long)per, p2p);
        return;
    }
    if (!inter) {
        fprintf(out, "    --decoder-first-pipeline-num-layers %lld --decoder-last-pipeline-num-layers %lld\n",
                (long long)plc_stage_layers(m->layers, l->pp, 0), (long long)plc_stage_layers(m->layers, l->pp, l->pp - 1));
        return;
    }
    int64_t first = plc_stage_layers(m->layers, n, 0), mid = plc_stage_layers_middle(m->layers, n),
            last = plc_stage_layers(m->layers, n, n - 1);
    fprintf(out, "    --pipeline-model-parallel-layout \"Et*%lld|(t*%lld|)*%lld,t*%lldL\"%s\n", (long long)first,
            (long long)mid, (long long)(n - 2), (long long)last, p2p);
}

/* the script's comments on what differs from plc's run: the warm-up's
 * first step, the experts and latent attention, the padded vocabulary
 * (each empty where nothing differs) */
typedef struct script_notes {
    char warmup[256], moe_note[1024], vocab_pad[256];
} script_notes;

static void notes_of(const release *r, const plc_export_in *in, script_notes *s)
{
    const plc_model *m = &in->model;
    const plc_train *t = &in->train;
    const plc_layout *l = &in->layout;
    *s = (script_notes){{0}, {0}, {0}};
    /* OptimizerParamScheduler (megatron/training/optimizer_param_scheduler.py)
     * is stepped after each iteration from num_steps 0 */
    if (t->warmup_steps > 0)
        snprintf(s->warmup, sizeof s->warmup,
                 "# Warm-up: Megatron-LM's step s trains at lr * s / %lld, plc's at\n"
                 "# lr * (s + 1) / %lld (its scheduler starts at step 0); the cosine\n"
                 "# decay to --min-lr at --lr-decay-iters is the same.\n",
                 (long long)t->warmup_steps, (long long)t->warmup_steps);
    if (m->moe.experts > 0) moe_comment(s->moe_note, sizeof s->moe_note, r, m);
    if (m->mla.kv_rank > 0) {
        size_t k = strlen(s->moe_note);
        snprintf(s->moe_note + k, sizeof s->moe_note - k,
                 "# Latent attention: Megatron-Core's MLA rotates RoPE halves, plc interleaved\n"
                 "# pairs: the same model up to a permutation of the rope rows of the query\n"
                 "# projection and the kv down-projection (permute them to move a checkpoint).\n");
    }
    int64_t padded = (m->vocab + l->tp - 1) / l->tp * l->tp;
    if (padded != m->vocab)
        snprintf(s->vocab_pad, sizeof s->vocab_pad,
                 "# Vocabulary: %lld ids padded to %lld over tp = %lld, as plc's; Megatron-LM's\n"
                 "# %lld padding logits enter its softmax, plc's are left out.\n",
                 (long long)m->vocab, (long long)padded, (long long)l->tp, (long long)(padded - m->vocab));
}

static void write_script(const release *r, FILE *out, const plc_export_in *in)
{
    const plc_model *m = &in->model;
    const plc_train *t = &in->train;
    const plc_layout *l = &in->layout;
    bool gpt = m->arch == PLC_ARCH_GPT, rope = m->positions == PLC_POS_ROPE;
    fputs("#!/usr/bin/env bash\n# ", out);
    plc_export_header(out, in, "# ", "Megatron-LM launch script", "--megatron");
    const plc_engine_profile *p = in->profile;
    bool tp_overlap = p->tp_overlap > 0 && l->sp && l->tp > 1;
    script_notes s;
    notes_of(r, in, &s);
    const char *warmup = s.warmup, *moe_note = s.moe_note, *vocab_pad = s.vocab_pad;
    fprintf(out,
            "#\n"
            "# The model is plc's %s block: %s.\n"
            "# Dropout is off (plc's model has none; Megatron-LM's default is 0.1).\n"
            "%s"
            "%s"
            "#\n"
            "# The overlaps are the engine profile's (%s):\n"
            "# gradient reduction %s the backward (--overlap-grad-reduce); with the\n"
            "# distributed optimizer, parameter gathers %s the next forward\n"
            "# (--overlap-param-gather); tensor-parallel communication %s\n"
            "# (--tp-comm-overlap: Transformer Engine userbuffers, with sequence\n"
            "# parallelism); interleaved pipeline messages %s compute.\n"
            "# Attention: plc's %s -> %s.\n"
            "%s"
            "# Data: %s.\n"
            "#\n"
            "# Run it on every node with NODE_RANK and MASTER_ADDR set, MEGATRON_LM\n"
            "# naming a checkout of %s: the flags are that\n"
            "# release's (docs/engines/%s). Extra arguments are passed on.\n"
            "set -euo pipefail\n"
            ": \"${MEGATRON_LM:?set MEGATRON_LM to a Megatron-LM checkout}\"\n"
            "NNODES=%lld\n"
            "GPUS_PER_NODE=%lld\n"
            "export CUDA_DEVICE_MAX_CONNECTIONS=1\n"
            "%s"
            "\n"
            "ARGS=(\n",
            gpt ? "GPT" : "Llama",
            gpt ? "LayerNorm with bias, a GELU MLP (tanh form: Megatron's fused bias-GELU), biases on every linear"
                : "RMSNorm, a SwiGLU MLP, no biases",
            moe_note, warmup,
            p->describes, p->grad_reduce_overlap > 0 ? "runs under" : "waits for", p->param_gather_overlap > 0 ? "run under" : "precede",
            tp_overlap ? "runs under the GEMMs" : "is not overlapped", p->p2p_overlap > 0 ? "run under" : "wait for",
            plc_attention_name(l->attention),
            l->attention == PLC_ATTN_FLASH2
                ? (r->attention_backend ? "Transformer Engine's flash-attn path, FlashAttention-2 (--attention-backend flash)"
                                        : "Transformer Engine's flash-attn path (NVTE_FLASH_ATTN=1, NVTE_FUSED_ATTN=0)")
                : (r->attention_backend ? "Transformer Engine's unfused attention with the fused masked softmax "
                                          "(--attention-backend unfused)"
                                        : "Transformer Engine's unfused attention with the fused masked softmax "
                                          "(NVTE_FLASH_ATTN=0, NVTE_FUSED_ATTN=0)"),
            vocab_pad,
            t->data_path ? "plc's token file; --data-path wants a Megatron indexed dataset prefix (.bin/.idx): convert it first"
                         : "synthetic in plc; Megatron-LM's mock dataset with the null tokenizer here",
            r->name, r->flags, (long long)in->nodes, (long long)in->gpus_per_node,
            r->attention_backend              ? ""
            : l->attention == PLC_ATTN_FLASH2 ? "export NVTE_FLASH_ATTN=1 NVTE_FUSED_ATTN=0\n"
                                              : "export NVTE_FLASH_ATTN=0 NVTE_FUSED_ATTN=0\n");
    fprintf(out, "    # model\n");
    fprintf(out, "    --num-layers %lld --hidden-size %lld --ffn-hidden-size %lld\n", (long long)m->layers,
            (long long)m->hidden, (long long)m->ffn_hidden);
    fprintf(out, "    --num-attention-heads %lld\n", (long long)m->heads);
    bool mla = m->mla.kv_rank > 0;
    if (mla) write_mla(out, m);
    else if (m->kv_heads != m->heads)
        fprintf(out, "    --group-query-attention --num-query-groups %lld\n", (long long)m->kv_heads);
    if (m->head_dim > 0) fprintf(out, "    --kv-channels %lld\n", (long long)m->head_dim); /* each head's width */
    if (m->qk_norm) fprintf(out, "    --qk-layernorm\n"); /* with --normalization RMSNorm: an RMSNorm a head */
    fprintf(out, "    --seq-length %lld --max-position-embeddings %lld\n", (long long)m->seq_len, (long long)m->seq_len);
    if (mla) /* Megatron-Core's MLA rotates halves (rotary_interleaved is refused with it) */
        fprintf(out, "    --position-embedding-type rope --rope-type rope --rotary-base %g\n", m->rope_theta);
    else if (rope) /* plc rotates interleaved pairs (docs/model.md); the fused RoPE kernel rotates halves only */
        fprintf(out, "    --position-embedding-type rope --rotary-base %g --rotary-interleaved --no-rope-fusion\n",
                m->rope_theta);
    else fprintf(out, "    --position-embedding-type learned_absolute\n");
    if (gpt) fprintf(out, "    --normalization LayerNorm --norm-epsilon %g\n", m->norm_eps);
    else fprintf(out, "    --normalization RMSNorm --norm-epsilon %g\n", m->norm_eps);
    if (!gpt) fprintf(out, "    --swiglu --disable-bias-linear\n");
    if (!m->tie_embeddings) fprintf(out, "    --untie-embeddings-and-output-weights\n");
    fprintf(out, "    --attention-dropout 0 --hidden-dropout 0\n");
    fprintf(out, "    --init-method-std 0.02\n");
    if (m->moe.experts > 0) write_moe_model(out, r, m);
    fprintf(out, "    # layout\n");
    fprintf(out, "    --tensor-model-parallel-size %lld --pipeline-model-parallel-size %lld --context-parallel-size %lld\n",
            (long long)l->tp, (long long)l->pp, (long long)l->cp);
    if (r->attention_backend)
        fprintf(out, "    %s\n", l->attention == PLC_ATTN_FLASH2 ? "--attention-backend flash --flash-attention-version 2"
                                                                  : "--attention-backend unfused");
    if (l->sp && l->tp > 1) fprintf(out, "    --sequence-parallel%s\n", tp_overlap ? " --tp-comm-overlap" : "");
    if (m->moe.experts > 0) write_moe_layout(out, r, l, p);
    write_split(out, m, l, p);
    if (l->recompute == PLC_RECOMPUTE_SELECTIVE) fprintf(out, "    --recompute-granularity selective\n");
    if (l->recompute == PLC_RECOMPUTE_FULL)
        fprintf(out, "    --recompute-granularity full --recompute-method uniform --recompute-num-layers 1\n");
    if (l->recompute == PLC_RECOMPUTE_BLOCK)
        fprintf(out, "    --recompute-granularity full --recompute-method block --recompute-num-layers %lld\n",
                (long long)l->recompute_layers);
    const char *grad = p->grad_reduce_overlap > 0 ? " --overlap-grad-reduce" : "";
    if (l->zero == 1)
        fprintf(out, "    --use-distributed-optimizer%s%s\n", grad, p->param_gather_overlap > 0 ? " --overlap-param-gather" : "");
    else if (grad[0]) fprintf(out, "   %s\n", grad);
    fprintf(out, "    # training\n");
    if (t->precision == PLC_PREC_BF16 || t->precision == PLC_PREC_FP8) fprintf(out, "    --bf16\n");
    if (t->precision == PLC_PREC_FP8) fprintf(out, "    --fp8-format hybrid\n");
    fprintf(out, "    --micro-batch-size %lld --global-batch-size %lld --train-iters %lld\n", (long long)l->micro_batch,
            (long long)t->global_batch, (long long)t->steps);
    fprintf(out, "    --optimizer adam --lr %g --min-lr %g --lr-decay-style cosine --lr-warmup-iters %lld --lr-decay-iters %lld\n",
            t->lr_peak, t->lr_floor, (long long)t->warmup_steps, (long long)t->decay_steps);
    fprintf(out, "    --adam-beta1 %g --adam-beta2 %g --adam-eps %g --weight-decay %g --clip-grad %g\n", t->beta1, t->beta2,
            t->eps, t->weight_decay, t->grad_clip);
    fprintf(out, "    --seed %llu\n", (unsigned long long)t->seed);
    /* the null tokenizer adds its end-of-document id to --vocab-size
     * (megatron/training/tokenizer/tokenizer.py, _NullTokenizer.vocab_size);
     * padded to a multiple of tp only, as plc's (docs/model.md) */
    if (t->data_path) fprintf(out, "    --data-path \"%s\"\n", t->data_path);
    else fprintf(out, "    --mock-data\n");
    fprintf(out, "    --tokenizer-type NullTokenizer --vocab-size %lld --make-vocab-size-divisible-by 1\n",
            (long long)(m->vocab - 1));
    fprintf(out, "    --eval-iters 0\n");
    fprintf(out,
            ")\n"
            "\n"
            "exec torchrun --nnodes \"$NNODES\" --nproc-per-node \"$GPUS_PER_NODE\" \\\n"
            "    --node-rank \"${NODE_RANK:-0}\" --master-addr \"${MASTER_ADDR:-localhost}\" --master-port \"${MASTER_PORT:-6000}\" \\\n"
            "    \"$MEGATRON_LM/pretrain_gpt.py\" \"${ARGS[@]}\" \"$@\"\n");
}


/* ---- the entry points, one set a release ------------------------------------------ */

#define RELEASE_ENTRIES(suffix, engine)                                                                                 \
    const char *plc_export_megatron##suffix##_model_unsaid(const plc_model *m, const plc_train *t, const plc_layout *l, \
                                                           const plc_engine_profile *p, char *buf, size_t size)         \
    {                                                                                                                   \
        (void)l;                                                                                                        \
        return model_unsaid(release_of(engine), m, t, p, buf, size);                                                    \
    }                                                                                                                   \
    const char *plc_export_megatron##suffix##_unsaid(const plc_model *m, const plc_train *t, const plc_layout *l,       \
                                                     const plc_engine_profile *p, char *buf, size_t size)               \
    {                                                                                                                   \
        (void)t;                                                                                                        \
        return layout_unsaid(release_of(engine), m, l, p, buf, size);                                                   \
    }                                                                                                                   \
    void plc_export_megatron##suffix##_write(FILE *out, const plc_export_in *in)                                        \
    {                                                                                                                   \
        write_script(release_of(engine), out, in);                                                                      \
    }

RELEASE_ENTRIES(, PLC_ENGINE_MEGATRON)
RELEASE_ENTRIES(_r0_8, PLC_ENGINE_MEGATRON_R0_8)
