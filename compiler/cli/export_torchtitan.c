/* export_torchtitan.c: plc export --torchtitan's output, a torchtitan
 * configuration module (torchtitan at b5bcd76c6): a function returning its
 * Trainer.Config built on a base configuration, whose model shape it checks
 * against the spec's (_plc_model), with the parallelism, the pipeline split,
 * activation checkpointing, the AdamW groups, the LR schedule, steps, batch
 * and precision; a mixture of experts with its layers and experts checked
 * (_plc_moe), its router set to plc's and expert_parallel_degree. What
 * torchtitan cannot express (an auxiliary loss, capacity, etp > 1, latent
 * attention) is reported by the two checks (cli_int.h), which the
 * command turns into a refusal. */
#include <stdio.h>
#include <string.h>

#include "common/layout_rules.h"
#include "compiler/cli/cli_int.h"
#include "compiler/solver/solver.h"

/* torchtitan's stage split (torchtitan/distributed/pipeline_parallel.py,
 * _generate_llm_fqn_per_model_part): with layers_per_stage n and the
 * first and last stage counting the embedding and the head as fi and fo
 * layers, the layers plus fi + fo are dealt n to a stage and the ends hold
 * n - fi and n - fo, over the pp * vpp stages of an interleaved schedule
 * too (rank r running stages r, r + pp, ...: the "loop" style of
 * _get_pp_rank_to_stage_indices_mapping). plc's stages (plc_stage_layers
 * over pp * vpp, plc_rank_layers) are that with n the middle stages'
 * count (or stage 0's when it holds more, two stages), fi and fo what the
 * ends hold less; where an end holds more than the middle (few layers per
 * stage) each stage's modules are named instead. */
static void write_torchtitan_split(FILE *out, int64_t layers, const plc_layout *l)
{
    int64_t stages = l->pp * l->vpp;
    int64_t first = plc_stage_layers(layers, stages, 0), last = plc_stage_layers(layers, stages, stages - 1);
    int64_t n = stages > 2 ? plc_stage_layers_middle(layers, stages) : first;
    if (layers % stages == 0) {
        fprintf(out, "    p.pipeline_parallel_layers_per_stage = %lld\n", (long long)(layers / stages));
        fprintf(out, "    p.pipeline_parallel_first_stage_less_layers = 0\n");
        fprintf(out, "    p.pipeline_parallel_last_stage_less_layers = 0\n");
    } else if (first <= n && last <= n) {
        fprintf(out, "    p.pipeline_parallel_layers_per_stage = %lld\n", (long long)n);
        fprintf(out, "    p.pipeline_parallel_first_stage_less_layers = %lld\n", (long long)(n - first));
        fprintf(out, "    p.pipeline_parallel_last_stage_less_layers = %lld\n", (long long)(n - last));
    } else {
        fprintf(out, "    p.module_fqns_per_model_part = [\n");
        for (int64_t s = 0; s < stages; s++) {
            int64_t lo = plc_stage_first_layer(layers, stages, s), hi = lo + plc_stage_layers(layers, stages, s);
            fprintf(out, "        [%s", s == 0 ? "\"tok_embeddings\", " : "");
            for (int64_t i = lo; i < hi; i++) fprintf(out, "%s\"layers.%lld\"", i > lo ? ", " : "", (long long)i);
            fprintf(out, "%s],\n", s == stages - 1 ? ", \"norm\", \"lm_head\"" : "");
        }
        fprintf(out, "    ]\n");
    }
}

/* torchtitan at the commit its keys were read from (pytorch/torchtitan
 * b5bcd76c6, docs/engines/torchtitan-keys.txt) */
#define TORCHTITAN_AT "torchtitan b5bcd76c6"

/* the model and training settings torchtitan cannot take, or NULL */
const char *plc_export_torchtitan_model_unsaid(const plc_model *m, const plc_train *t, const plc_layout *l,
                                               const plc_engine_profile *p, char *buf, size_t size)
{
    (void)l, (void)p;
    if (m->arch == PLC_ARCH_GPT)
        snprintf(buf, size, "arch = gpt: %s's decoders are Llama-family (torchtitan/models: RMSNorm, SwiGLU, RoPE, "
                            "no biases); it has no GPT block (LayerNorm, GELU, biases)", TORCHTITAN_AT);
    else if ((m->head_dim > 0 && m->head_dim * m->heads != m->hidden) || m->qk_norm)
        snprintf(buf, size, "%s: this export builds on %s's Llama 3 decoder, whose heads are dim / n_heads wide, "
                            "without qk-norm", m->qk_norm ? "qk_norm = on" : "head_dim apart from hidden / heads",
                 TORCHTITAN_AT);
    else if (m->positions != PLC_POS_ROPE)
        snprintf(buf, size, "positions = learned: %s's Llama 3 decoder has rotary positions only", TORCHTITAN_AT);
    else if (t->decay_steps != t->steps)
        snprintf(buf, size, "lr.decay_steps = %lld < steps = %lld (lr.floor held after): %s's LR scheduler "
                            "(components/optimizer/lr_scheduler.py) decays until the last step (training.steps)",
                 (long long)t->decay_steps, (long long)t->steps, TORCHTITAN_AT);
    else if (m->moe.experts > 0 && m->moe.aux_loss > 0)
        snprintf(buf, size, "aux_loss = %g: %s's MoE (torchtitan/models/common/moe.py) has no auxiliary "
                            "load-balancing loss; it balances without one, by a per-expert bias (load_balance_coeff, "
                            "its update rate)", m->moe.aux_loss, TORCHTITAN_AT);
    else if (m->moe.experts > 0 && m->moe.capacity_factor > 0)
        snprintf(buf, size, "capacity_factor = %g: %s's MoE routes every token (dropless; "
                            "torchtitan/models/common/moe.py has no expert capacity)", m->moe.capacity_factor,
                 TORCHTITAN_AT);
    else if (m->mla.kv_rank > 0)
        snprintf(buf, size, "kv_lora_rank = %lld (latent attention): %s's Llama-family decoders have no latent "
                            "attention in the model this module checks", (long long)m->mla.kv_rank, TORCHTITAN_AT);
    else if (t->precision == PLC_PREC_FP8)
        snprintf(buf, size, "precision = fp8: %s converts linears to float8 in the model spec a base configuration "
                            "builds (Float8LinearConverter), which this module does not rebuild; export bf16 and "
                            "choose a float8 base", TORCHTITAN_AT);
    else return NULL;
    return buf;
}

/* the ranks torchtitan's expert parallelism may borrow: dp_shard * cp * tp
 * (dp_replicate is outside; plc's ZeRO 0 replicates) */
static int64_t ep_room(const plc_layout *l)
{
    return (l->zero == 0 ? 1 : l->dp) * l->cp * l->tp;
}

/* a layout the fsdp2 profile may run but torchtitan's configuration cannot
 * say, or NULL */
const char *plc_export_torchtitan_unsaid(const plc_model *m, const plc_train *t, const plc_layout *l,
                                         const plc_engine_profile *p, char *buf, size_t size)
{
    (void)t, (void)p;
    if (m->moe.experts > 0 && plc_layout_etp(l) > 1)
        snprintf(buf, size, "etp = %lld: %s has no expert tensor parallelism (parallelism.expert_parallel_degree "
                            "only; the experts are whole on each rank of the ep group)", (long long)plc_layout_etp(l),
                 TORCHTITAN_AT);
    else if (m->moe.experts > 0 && ep_room(l) % plc_layout_ep(l))
        snprintf(buf, size, "ep = %lld with %s = %lld: %s borrows the expert-parallel ranks from FSDP, cp and tp "
                            "and asserts that ep divides dp_shard * cp * tp (torchtitan/distributed/parallel_dims.py)",
                 (long long)plc_layout_ep(l), l->zero == 0 ? "cp * tp (ZeRO 0: no FSDP shard)" : "dp * cp * tp",
                 (long long)ep_room(l), TORCHTITAN_AT);
    else if (l->recompute == PLC_RECOMPUTE_BLOCK || l->recompute == PLC_RECOMPUTE_EVERY)
        snprintf(buf, size, "recompute = %s: %s checkpoints every block (FullAC), chosen ops (SelectiveAC) or to a "
                            "memory budget, not chosen layers (torchtitan/distributed/activation_checkpoint.py)",
                 plc_recompute_name(l->recompute), TORCHTITAN_AT);
    else if (l->zero == 1)
        snprintf(buf, size, "zero = 1: %s shards with FSDP2 (ZeRO 2 or 3) or replicates (ZeRO 0)", TORCHTITAN_AT);
    else if (m->tie_embeddings && l->pp > 1)
        snprintf(buf, size, "tie_embeddings = on with pp = %lld: %s raises 'Weight tying is not supported with "
                            "Pipeline Parallel' (torchtitan/models/common/decoder.py)", (long long)l->pp, TORCHTITAN_AT);
    else if (l->schedule != PLC_SCHED_GPIPE && l->schedule != PLC_SCHED_1F1B && l->schedule != PLC_SCHED_INTERLEAVED &&
             l->pp > 1)
        snprintf(buf, size, "schedule = %s: %s runs GPipe, 1F1B and Interleaved1F1B", plc_schedule_name(l->schedule),
                 TORCHTITAN_AT);
    else return NULL;
    return buf;
}

/* the module's model check: the shape asserted against the base's model
 * (torchtitan builds it from its registry), the settings that carry no
 * shape written (RoPE theta and no scaling, the norms' epsilon, tying) */
static void write_torchtitan_model(FILE *out, const plc_model *m)
{
    /* a dense model's FFN width, asserted in every layer; an MoE model's
     * in its dense layers (the MoE layers' experts in _plc_moe) */
    char ffn[48];
    if (m->moe.experts > 0) ffn[0] = '\0';
    else snprintf(ffn, sizeof ffn, ", ffn_hidden=%lld", (long long)m->ffn_hidden);
    if (m->moe.experts > 0) fprintf(out, "_plc_dense_ffn_hidden = %lld\n\n\n", (long long)m->ffn_hidden);
    fprintf(out,
            "def _plc_model(config):\n"
            "    \"\"\"Sets the base's model to plc's where no shape changes, and checks\n"
            "    the shape, which torchtitan keeps in its model registry.\"\"\"\n"
            "    model_spec = config.model_spec\n"
            "    model = model_spec.model\n"
            "    want = dict(layers=%lld, hidden=%lld, vocab=%lld, heads=%lld, kv_heads=%lld%s)\n"
            "    got = dict(layers=len(model.layers), hidden=model.dim, vocab=model.vocab_size)\n"
            "    model.enable_weight_tying = %s\n"
            "    norm = model.norm\n"
            "    norm.eps = %.15g\n"
            "%s"
            "        if got != want:\n"
            "            raise ValueError(\"the base configuration's model is not plc's: %%s, plc's %%s\" %% (got, want))\n"
            "        rope = attention.rope\n"
            "        # plc rotates interleaved pairs, as ComplexRoPE does\n"
            "        if type(rope).__qualname__ != \"ComplexRoPE.Config\":\n"
            "            raise ValueError(\"plc's RoPE rotates interleaved pairs (ComplexRoPE), not %%s\" %% type(rope).__qualname__)\n"
            "        rope.theta = %.15g\n"
            "        rope.scaling = \"none\"\n"
            "        for norm in (block.attention_norm, block.ffn_norm):\n"
            "            norm.eps = %.15g\n"
            "\n\n",
            (long long)m->layers, (long long)m->hidden, (long long)m->vocab, (long long)m->heads, (long long)m->kv_heads,
            ffn, m->tie_embeddings ? "True" : "False", m->norm_eps,
            m->moe.experts > 0 ? "    for i, block in enumerate(model.layers):\n"
                                 "        attention = block.attention\n"
                                 "        got.update(heads=attention.n_heads, kv_heads=attention.n_kv_heads or attention.n_heads)\n"
                                 "        if i in moe_layers:\n"
                                 "            _plc_moe(i, block)\n"
                                 "        else:\n"
                                 "            if block.moe is not None:\n"
                                 "                raise ValueError(\"layer %d of the base's model has experts, plc's is dense\" % i)\n"
                                 "            ffn = block.feed_forward\n"
                                 "            linear = ffn.w1\n"
                                 "            got.update(dense_ffn_hidden=linear.out_features)\n"
                                 "            want.update(dense_ffn_hidden=_plc_dense_ffn_hidden)\n"
                               : "    for block in model.layers:\n"
                                 "        attention = block.attention\n"
                                 "        ffn = block.feed_forward\n"
                                 "        linear = ffn.w1\n"
                                 "        got.update(heads=attention.n_heads, kv_heads=attention.n_kv_heads or attention.n_heads,\n"
                                 "                   ffn_hidden=linear.out_features)\n",
            m->rope_theta, m->norm_eps);
}

/* an MoE model's check: which layers have experts (plc_layer_is_moe), the
 * experts' count and widths asserted (shared experts as torchtitan's one
 * FeedForward of their summed width, as DeepSeek's), the router set to
 * plc's: its score, top-k renormalised over the k (route_norm), scale,
 * groups scored by their best 2 (torchtitan's _get_node_limited_routing_scores,
 * as plc's), the expert bias on or off */
static void write_torchtitan_moe(FILE *out, const plc_model *m)
{
    const plc_moe *e = &m->moe;
    int64_t width = e->expert_ffn_hidden > 0 ? e->expert_ffn_hidden : m->ffn_hidden;
    int64_t shared = e->shared_experts * (e->shared_ffn_hidden > 0 ? e->shared_ffn_hidden : width);
    char groups[32] = "None", groups_top[32] = "None";
    if (e->router_groups > 0) {
        snprintf(groups, sizeof groups, "%lld", (long long)e->router_groups);
        snprintf(groups_top, sizeof groups_top, "%lld", (long long)e->router_groups_top);
    }
    fprintf(out, "moe_layers = {");
    for (int64_t i = 0, k = 0; i < m->layers; i++)
        if (plc_layer_is_moe(m, i)) fprintf(out, "%s%lld", k++ ? ", " : "", (long long)i);
    fprintf(out,
            "}\n\n\n"
            "def _plc_moe(i, block):\n"
            "    \"\"\"Checks layer i's experts against plc's and sets its router to plc's.\"\"\"\n"
            "    moe = block.moe\n"
            "    if moe is None:\n"
            "        raise ValueError(\"layer %%d of the base's model is dense, plc's has experts\" %% i)\n"
            "    routed = moe.routed_experts\n"
            "    experts = routed.inner_experts\n"
            "    router = moe.router\n"
            "    ffn = moe.shared_experts\n"
            "    shared = 0\n"
            "    if ffn is not None:\n"
            "        linear = ffn.w1\n"
            "        shared = linear.out_features\n"
            "    want = dict(experts=%lld, expert_ffn_hidden=%lld, shared_ffn_hidden=%lld)\n"
            "    got = dict(experts=moe.num_experts, expert_ffn_hidden=experts.hidden_dim, shared_ffn_hidden=shared)\n"
            "    if got != want or experts.num_experts != moe.num_experts or router.num_experts != moe.num_experts:\n"
            "        raise ValueError(\"layer %%d's experts are not plc's: %%s, plc's %%s\" %% (i, got, want))\n"
            "    router.top_k = %lld\n"
            "    router.score_func = \"%s\"\n"
            "    router.route_norm = True\n"
            "    router.route_scale = %.15g\n"
            "    router.num_expert_groups = %s\n"
            "    router.num_limited_groups = %s\n",
            (long long)e->experts, (long long)width, (long long)shared, (long long)e->top_k,
            e->router == PLC_ROUTER_SIGMOID ? "sigmoid" : "softmax", e->route_scale,
            groups, groups_top);
    /* the expert bias: torchtitan's load_balance_coeff is its update rate
     * (None: no bias); plc states no rate, so the base's, else torchtitan's
     * default 1e-3 */
    if (e->expert_bias)
        fprintf(out, "    if moe.load_balance_coeff is None:\n"
                     "        moe.load_balance_coeff = 1e-3\n\n\n");
    else fprintf(out, "    moe.load_balance_coeff = None\n\n\n");
}

void plc_export_torchtitan_write(FILE *out, const plc_export_in *in)
{
    const plc_model *m = &in->model;
    const plc_train *t = &in->train;
    const plc_layout *l = &in->layout;
    static const char *const sched[PLC_SCHED_COUNT] = {"GPipe", "1F1B", "Interleaved1F1B", "", "", "", "", "", ""};
    char fn[80] = "plc_";
    size_t k = strlen(fn);
    for (const char *c = m->name; *c && k + 1 < sizeof fn; c++)
        fn[k++] = (*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') ? *c : (*c >= 'A' && *c <= 'Z') ? (char)(*c - 'A' + 'a') : '_';
    fn[k] = 0;
    const char *colon = strchr(in->base, ':');
    fputs("\"\"\"", out);
    plc_export_header(out, in, "", "torchtitan configuration", "--torchtitan");
    fprintf(out,
            "\n"
            "The model is the base configuration %s's, checked against plc's\n"
            "(layers=%lld hidden=%lld ffn_hidden=%lld heads=%lld kv_heads=%lld vocab=%lld)\n"
            "by _plc_model, which also sets RoPE theta %g without scaling, the norms'\n"
            "epsilon %g and tied embeddings %s; a base of another shape stops the run.\n"
            "What plc assumed of the engine: ZeRO stage %lld as %s; %s;\n"
            "torchtitan picks its attention kernel (plc assumed %s).\n"
            "AdamW as plc's: no weight decay on the norms' weights. The LR warms up\n"
            "linearly over %lld steps and decays by a cosine to %g at the last step, as plc's.\n"
            "Data: %s; the dataloader and tokenizer\n"
            "are the base's (torchtitan reads Hugging Face datasets), of vocabulary %lld.\n"
            "Keys checked against torchtitan commit b5bcd76 (docs/engines/torchtitan-keys.txt).\n"
            "\n"
            "Run with this file on the module path, for example\n"
            "  torchrun --nnodes %lld --nproc-per-node %lld -m torchtitan.train --module MODULE --config %s\n"
            "\"\"\"\n",
            in->base, (long long)m->layers, (long long)m->hidden, (long long)m->ffn_hidden, (long long)m->heads,
            (long long)m->kv_heads, (long long)m->vocab, m->rope_theta, m->norm_eps, m->tie_embeddings ? "on" : "off",
            (long long)l->zero,
            l->zero == 0   ? "replicated data parallelism (DDP)"
            : l->zero == 2 ? "FSDP2 keeping parameters gathered after forward (fsdp_reshard_after_forward = never)"
                           : "FSDP2 (parameters, gradients and optimizer state sharded)",
            l->recompute == PLC_RECOMPUTE_SELECTIVE
                ? "selective recompute as torchtitan's SelectiveAC (op-level: it keeps every second matmul's output and SDPA's, recomputes the rest)"
                : l->recompute == PLC_RECOMPUTE_FULL ? "full recompute as FullAC (every block)"
                                                     : "no activation checkpointing",
            plc_attention_name(l->attention), (long long)t->warmup_steps, t->lr_floor,
            t->data_path ? "plc's token file, which torchtitan does not read" : "synthetic in plc",
            (long long)m->vocab, (long long)in->nodes,
            (long long)in->gpus_per_node, fn);
    if (colon)
        fprintf(out, "from %.*s import %s as base_config\n", (int)(colon - in->base), in->base, colon + 1);
    fprintf(out, "from torchtitan.components.optimizer import LRSchedulersContainer, OptimizersContainer, ParamGroupConfig\n");
    fprintf(out, "from torchtitan.distributed.activation_checkpoint import FullAC, SelectiveAC\n\n\n");
    if (m->moe.experts > 0) write_torchtitan_moe(out, m);
    write_torchtitan_model(out, m);
    fprintf(out, "def %s():\n", fn);
    fprintf(out, "    config = base_config()\n");
    fprintf(out, "    _plc_model(config)\n");
    fprintf(out, "    p = config.parallelism\n");
    int64_t dp = l->dp;
    fprintf(out, "    p.data_parallel_replicate_degree = %lld\n", (long long)(l->zero == 0 ? dp : 1));
    fprintf(out, "    p.data_parallel_shard_degree = %lld\n", (long long)(l->zero == 0 ? 1 : dp));
    fprintf(out, "    p.fsdp_reshard_after_forward = \"%s\"\n", l->zero == 2 ? "never" : "default");
    fprintf(out, "    p.tensor_parallel_degree = %lld\n", (long long)l->tp);
    fprintf(out, "    p.enable_sequence_parallel = %s\n", l->sp && l->tp > 1 ? "True" : "False");
    fprintf(out, "    p.context_parallel_degree = %lld\n", (long long)l->cp);
    if (m->moe.experts > 0) fprintf(out, "    p.expert_parallel_degree = %lld\n", (long long)plc_layout_ep(l));
    /* context parallelism needs the spmd_types backend (torchtitan/distributed/context_parallel/api.py) */
    if (l->cp > 1) fprintf(out, "    p.spmd_backend = \"spmd_types\"\n");
    fprintf(out, "    p.pipeline_parallel_degree = %lld\n", (long long)l->pp);
    if (l->pp > 1) {
        int64_t micro = t->global_batch / (dp * l->micro_batch);
        fprintf(out, "    p.pipeline_parallel_schedule = \"%s\"\n", sched[l->schedule]);
        write_torchtitan_split(out, m->layers, l);
        fprintf(out, "    p.num_pp_microbatches = %lld\n", (long long)micro);
    }
    fprintf(out, "    config.activation_checkpoint = %s\n",
            l->recompute == PLC_RECOMPUTE_FULL        ? "FullAC.Config()"
            : l->recompute == PLC_RECOMPUTE_SELECTIVE ? "SelectiveAC.Config()"
                                                      : "None");
    fprintf(out, "    tr = config.training\n");
    fprintf(out, "    tr.num_tokens_per_microbatch_per_dp_rank = %lld\n", (long long)(l->micro_batch * m->seq_len));
    fprintf(out, "    tr.num_tokens_per_train_step = %lld\n", (long long)(t->global_batch * m->seq_len));
    fprintf(out, "    tr.max_context_length = %lld\n", (long long)m->seq_len);
    fprintf(out, "    tr.steps = %lld\n", (long long)t->steps);
    if (t->grad_clip > 0) fprintf(out, "    tr.max_norm = %.15g\n", t->grad_clip);
    else fprintf(out, "    tr.max_norm = float(\"inf\")  # plc's grad_clip 0: no clipping\n");
    fprintf(out, "    tr.mixed_precision_param = \"%s\"\n", t->precision == PLC_PREC_FP32 ? "float32" : "bfloat16");
    fprintf(out, "    tr.mixed_precision_reduce = \"float32\"\n");
    fprintf(out,
            "    adamw = dict(lr=%.15g, betas=(%.15g, %.15g), eps=%.15g, weight_decay=%.15g)\n"
            "    config.optimizer = OptimizersContainer.Config(param_groups=[\n"
            "        ParamGroupConfig(pattern=r\"norm\\.weight$\", optimizer_name=\"AdamW\",\n"
            "                         optimizer_kwargs=dict(adamw, weight_decay=0.0)),\n"
            "        ParamGroupConfig(pattern=r\".*\", optimizer_name=\"AdamW\", optimizer_kwargs=adamw),\n"
            "    ])\n"
            "    config.lr_scheduler = LRSchedulersContainer.Config(\n"
            "        warmup_steps=%lld, decay_type=\"cosine\", min_lr_factor=%.15g)\n",
            t->lr_peak, t->beta1, t->beta2, t->eps, t->weight_decay, (long long)t->warmup_steps,
            t->lr_peak > 0 ? t->lr_floor / t->lr_peak : 0.0);
    fprintf(out, "    config.debug.seed = %llu\n", (unsigned long long)t->seed);
    fprintf(out, "    return config\n");
}

