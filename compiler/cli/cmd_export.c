/* cmd_export.c: plc export --megatron|--torchtitan SPEC|PLAN: hands the
 * chosen layout to the training engine a team runs today.
 *
 * --megatron writes a Megatron-LM launch script (torchrun pretrain_gpt.py
 * with the model shape, layout, recompute, optimizer sharding, overlap flags,
 * precision, batch sizes and optimizer settings); --torchtitan writes a
 * torchtitan configuration module (a function returning Trainer.Config with
 * the parallelism, activation-checkpoint and training fields set).
 *
 * What each engine can run is its profile's `runs` (engines.yaml, read by
 * plc_engine_profile_load: the same lists the search offers a spec with
 * train.engine = megatron or fsdp2). A plan whose layout the engine cannot
 * run is refused with the reason; for a spec the solver's best layout is
 * exported when the engine can run it, otherwise the best layout it can
 * run, and the script says so. The flags and keys
 * written are checked against the engines' own argument definitions,
 * listed in docs/engines/ with the commit they were read from. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/plan_io.h"
#include "compiler/cli/cli_int.h"
#include "compiler/plantools/plantools.h"
#include "plc/version.h"

/* what the export writes from */
typedef struct export_in {
    const char *source; /* the spec or plan named on the command line */
    plc_model model;
    plc_train train;
    int64_t nodes, gpus_per_node;
    plc_layout layout;
    double step_time_s, mfu;
    char note[512]; /* why another layout than the solver's best, or "" */
    const char *base; /* torchtitan: MODULE:FUNCTION of the base configuration */
    const plc_engine_profile *profile; /* the engine's: what it runs and overlaps */
} export_in;

typedef struct engine {
    const char *name;
    const char *option;
    plc_engine profile; /* whose engines.yaml profile says what it runs */
    void (*write)(FILE *out, const export_in *in);
} engine;

static void write_megatron(FILE *out, const export_in *in);
static void write_torchtitan(FILE *out, const export_in *in);

static const engine engines[] = {
    {"Megatron-LM", "--megatron", PLC_ENGINE_MEGATRON, write_megatron},
    {"torchtitan", "--torchtitan", PLC_ENGINE_FSDP2, write_torchtitan},
};

/* why an engine whose profile is p cannot run layout l of model m, or NULL
 * when it can: the first dimension whose value the profile does not offer,
 * or unequal stages (plc_rank_layers) beyond its uneven_stages */
static const char *cannot_run(const engine *e, const plc_engine_profile *p, const plc_model *m, const plc_layout *l,
                              char *buf, size_t size)
{
    int need = plc_uneven_stages_needed(m->layers, l);
    if (need > p->uneven_stages) {
        if (need == 2 && p->uneven_stages == 1)
            snprintf(buf, size,
                     "pp * vpp = %lld virtual stages of unequal layer counts (layers = %lld), which %s runs with vpp 1 "
                     "only (%s)",
                     (long long)(l->pp * l->vpp), (long long)m->layers, e->name, p->describes);
        else
            snprintf(buf, size, "pp = %lld stages of unequal layer counts (layers = %lld), which %s runs equal only (%s)",
                     (long long)l->pp, (long long)m->layers, e->name, p->describes);
        return buf;
    }
    static const char *const what[PLC_SCHED_COUNT] = {"GPipe", "1F1B", "interleaved 1F1B", "layered gradient accumulation",
                                                      "modular pipeline placement"};
    for (int d = 0; d < PLC_LD_COUNT; d++) {
        int64_t v = plc_layout_get(l, (plc_layout_dim)d);
        if (plc_engine_offers(p, (plc_layout_dim)d, v)) continue;
        char val[32], how[64] = "";
        if (d == PLC_LD_schedule && v >= 0 && v < PLC_SCHED_COUNT) snprintf(how, sizeof how, " (%s)", what[v]);
        snprintf(buf, size, "%s = %s%s, which %s has no equivalent for (%s)", plc_layout_dim_key((plc_layout_dim)d),
                 plc_layout_value_text((plc_layout_dim)d, v, val, sizeof val), how, e->name, p->describes);
        return buf;
    }
    return NULL;
}

static void layout_text(char *buf, size_t size, const plc_layout *l)
{
    FILE *f = fmemopen(buf, size, "w");
    if (!f) { buf[0] = 0; return; }
    plc_report_layout_line(f, l);
    fclose(f);
}

/* the opening lines both outputs share, each line after the first behind
 * comment ("# " for a shell script, "" inside a Python docstring): what
 * wrote it from what, the layout, plc's prediction and the note */
static void write_header(FILE *out, const export_in *in, const char *comment, const char *what, const char *option)
{
    char lt[512];
    layout_text(lt, sizeof lt, &in->layout);
    fprintf(out,
            "%s written by plc export %s (plc %s) from %s.\n"
            "%.1s\n"
            "%sLayout: %s\n"
            "%splc predicts %.4g s per step, MFU %.1f%% on %lld node%s x %lld GPUs.\n",
            what, option, PLC_VERSION, in->source, comment, comment, lt, comment, in->step_time_s, 100.0 * in->mfu,
            (long long)in->nodes, plc_word_plural(in->nodes), (long long)in->gpus_per_node);
    if (in->note[0]) fprintf(out, "%sNote: %s\n", comment, in->note);
}

/* ---- Megatron-LM ---------------------------------------------------------- */

static void write_megatron(FILE *out, const export_in *in)
{
    const plc_model *m = &in->model;
    const plc_train *t = &in->train;
    const plc_layout *l = &in->layout;
    static const char *const backend[PLC_ATTN_COUNT] = {"unfused", "fused", "flash", "flash"};
    fputs("#!/usr/bin/env bash\n# ", out);
    write_header(out, in, "# ", "Megatron-LM launch script", "--megatron");
    const plc_engine_profile *p = in->profile;
    bool tp_overlap = p->tp_overlap > 0 && l->sp && l->tp > 1;
    fprintf(out,
            "#\n"
            "# The overlaps are the engine profile's (%s):\n"
            "# gradient reduction %s the backward (--overlap-grad-reduce); with the\n"
            "# distributed optimizer, parameter gathers %s the next forward\n"
            "# (--overlap-param-gather); tensor-parallel communication %s\n"
            "# (--tp-comm-overlap: Transformer Engine userbuffers, with sequence\n"
            "# parallelism); interleaved pipeline messages %s compute.\n"
            "# RMSNorm is %s.\n"
            "# Attention kernel: plc's %s -> --attention-backend %s.\n"
            "# Data: %s.\n"
            "#\n"
            "# Run it on every node with NODE_RANK and MASTER_ADDR set, MEGATRON_LM\n"
            "# naming a Megatron-LM checkout (flags checked against commit d98e8a6, see\n"
            "# docs/engines/megatron-lm-flags.txt). Extra arguments are passed on.\n"
            "set -euo pipefail\n"
            ": \"${MEGATRON_LM:?set MEGATRON_LM to a Megatron-LM checkout}\"\n"
            "NNODES=%lld\n"
            "GPUS_PER_NODE=%lld\n"
            "\n"
            "ARGS=(\n",
            p->describes, p->grad_reduce_overlap > 0 ? "runs under" : "waits for", p->param_gather_overlap > 0 ? "run under" : "precede",
            tp_overlap ? "runs under the GEMMs" : "is not overlapped", p->p2p_overlap > 0 ? "run under" : "wait for",
            l->fused_rmsnorm ? "fused (Transformer Engine's kernel)" : "unfused in plc's prediction; Megatron-LM fuses it regardless",
            plc_attention_name(l->attention), backend[l->attention],
            t->data_path ? "plc's token file; --data-path wants a Megatron indexed dataset prefix (.bin/.idx): convert it first"
                         : "synthetic in plc; Megatron-LM's mock dataset with the null tokenizer here",
            (long long)in->nodes, (long long)in->gpus_per_node);
    fprintf(out, "    # model\n");
    fprintf(out, "    --num-layers %lld --hidden-size %lld --ffn-hidden-size %lld\n", (long long)m->layers,
            (long long)m->hidden, (long long)m->ffn_hidden);
    fprintf(out, "    --num-attention-heads %lld\n", (long long)m->heads);
    if (m->kv_heads != m->heads) fprintf(out, "    --group-query-attention --num-query-groups %lld\n", (long long)m->kv_heads);
    fprintf(out, "    --seq-length %lld --max-position-embeddings %lld\n", (long long)m->seq_len, (long long)m->seq_len);
    fprintf(out, "    --position-embedding-type rope --rotary-base %g\n", m->rope_theta);
    fprintf(out, "    --normalization RMSNorm --norm-epsilon %g\n", m->norm_eps);
    fprintf(out, "    --swiglu --disable-bias-linear\n");
    if (!m->tie_embeddings) fprintf(out, "    --untie-embeddings-and-output-weights\n");
    fprintf(out, "    --attention-backend %s\n", backend[l->attention]);
    fprintf(out, "    # layout\n");
    fprintf(out, "    --tensor-model-parallel-size %lld --pipeline-model-parallel-size %lld --context-parallel-size %lld\n",
            (long long)l->tp, (long long)l->pp, (long long)l->cp);
    if (l->sp && l->tp > 1) fprintf(out, "    --sequence-parallel%s\n", tp_overlap ? " --tp-comm-overlap" : "");
    if (l->pp > 1 && m->layers % l->pp) /* unequal stages: the ends' counts, the middle ones share the rest */
        fprintf(out, "    --decoder-first-pipeline-num-layers %lld --decoder-last-pipeline-num-layers %lld\n",
                (long long)plc_stage_layers(m->layers, l->pp, 0), (long long)plc_stage_layers(m->layers, l->pp, l->pp - 1));
    if (l->schedule == PLC_SCHED_INTERLEAVED && l->vpp > 1)
        fprintf(out, "    --num-virtual-stages-per-pipeline-rank %lld%s\n", (long long)l->vpp,
                p->p2p_overlap > 0 ? "" : " --no-overlap-p2p-communication");
    if (l->recompute == PLC_RECOMPUTE_SELECTIVE) fprintf(out, "    --recompute-granularity selective\n");
    if (l->recompute == PLC_RECOMPUTE_FULL)
        fprintf(out, "    --recompute-granularity full --recompute-method uniform --recompute-num-layers 1\n");
    if (l->recompute == PLC_RECOMPUTE_BLOCK)
        fprintf(out, "    --recompute-granularity full --recompute-method block --recompute-num-layers %lld\n",
                (long long)l->recompute_layers);
    const char *grad = p->grad_reduce_overlap > 0 ? " --overlap-grad-reduce" : "";
    switch (l->zero) {
    case 0:
        if (grad[0]) fprintf(out, "   %s\n", grad);
        break;
    case 1:
        fprintf(out, "    --use-distributed-optimizer%s%s\n", grad, p->param_gather_overlap > 0 ? " --overlap-param-gather" : "");
        break;
    case 2: fprintf(out, "    --use-megatron-fsdp --data-parallel-sharding-strategy optim_grads\n"); break;
    default: fprintf(out, "    --use-megatron-fsdp --data-parallel-sharding-strategy optim_grads_params\n"); break;
    }
    fprintf(out, "    # training\n");
    if (t->precision == PLC_PREC_BF16 || t->precision == PLC_PREC_FP8) fprintf(out, "    --bf16\n");
    if (t->precision == PLC_PREC_FP8) fprintf(out, "    --fp8-format hybrid\n");
    fprintf(out, "    --micro-batch-size %lld --global-batch-size %lld --train-iters %lld\n", (long long)l->micro_batch,
            (long long)t->global_batch, (long long)t->steps);
    fprintf(out, "    --lr %g --min-lr %g --lr-decay-style cosine --lr-warmup-iters %lld --lr-decay-iters %lld\n", t->lr_peak,
            t->lr_floor, (long long)t->warmup_steps, (long long)t->decay_steps);
    fprintf(out, "    --adam-beta1 %g --adam-beta2 %g --adam-eps %g --weight-decay %g --clip-grad %g\n", t->beta1, t->beta2,
            t->eps, t->weight_decay, t->grad_clip);
    fprintf(out, "    --seed %llu\n", (unsigned long long)t->seed);
    if (t->data_path)
        fprintf(out, "    --data-path \"%s\" --tokenizer-type NullTokenizer --vocab-size %lld\n", t->data_path,
                (long long)m->vocab);
    else
        fprintf(out, "    --mock-data --tokenizer-type NullTokenizer --vocab-size %lld\n", (long long)m->vocab);
    fprintf(out, "    --eval-iters 0\n");
    fprintf(out,
            ")\n"
            "\n"
            "exec torchrun --nnodes \"$NNODES\" --nproc-per-node \"$GPUS_PER_NODE\" \\\n"
            "    --node-rank \"${NODE_RANK:-0}\" --master-addr \"${MASTER_ADDR:-localhost}\" --master-port \"${MASTER_PORT:-6000}\" \\\n"
            "    \"$MEGATRON_LM/pretrain_gpt.py\" \"${ARGS[@]}\" \"$@\"\n");
}

/* ---- torchtitan --------------------------------------------------------------- */

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

static void write_torchtitan(FILE *out, const export_in *in)
{
    const plc_model *m = &in->model;
    const plc_train *t = &in->train;
    const plc_layout *l = &in->layout;
    static const char *const sched[PLC_SCHED_COUNT] = {"GPipe", "1F1B", "Interleaved1F1B", "", ""};
    char fn[80] = "plc_";
    size_t k = strlen(fn);
    for (const char *c = m->name; *c && k + 1 < sizeof fn; c++)
        fn[k++] = (*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') ? *c : (*c >= 'A' && *c <= 'Z') ? (char)(*c - 'A' + 'a') : '_';
    fn[k] = 0;
    const char *colon = strchr(in->base, ':');
    fputs("\"\"\"", out);
    write_header(out, in, "", "torchtitan configuration", "--torchtitan");
    fprintf(out,
            "\n"
            "The model comes from the base configuration %s: it must be plc's model,\n"
            "layers=%lld hidden=%lld ffn_hidden=%lld heads=%lld kv_heads=%lld vocab=%lld seq_len=%lld\n"
            "(torchtitan keeps the model shape in its model registry, which plc does not write).\n"
            "What plc assumed of the engine: ZeRO stage %lld as %s; %s;\n"
            "torchtitan picks its attention kernel (plc assumed %s).\n"
            "Keys checked against torchtitan commit b5bcd76 (docs/engines/torchtitan-keys.txt).\n"
            "\n"
            "Run with this file on the module path, for example\n"
            "  torchrun --nnodes %lld --nproc-per-node %lld -m torchtitan.train --module MODULE --config %s\n"
            "\"\"\"\n",
            in->base, (long long)m->layers, (long long)m->hidden, (long long)m->ffn_hidden, (long long)m->heads,
            (long long)m->kv_heads, (long long)m->vocab, (long long)m->seq_len, (long long)l->zero,
            l->zero == 0   ? "replicated data parallelism (DDP)"
            : l->zero == 2 ? "FSDP2 keeping parameters gathered after forward (fsdp_reshard_after_forward = never)"
                           : "FSDP2 (parameters, gradients and optimizer state sharded)",
            l->recompute == PLC_RECOMPUTE_SELECTIVE
                ? "selective recompute as torchtitan's SelectiveAC (op-level: it keeps every second matmul's output and SDPA's, recomputes the rest)"
                : l->recompute == PLC_RECOMPUTE_FULL  ? "full recompute as FullAC (every block)"
                : l->recompute == PLC_RECOMPUTE_EVERY ? "every n-th block checkpointed (torchtitan's layer-selective AC; "
                                                        "set it by hand: this module leaves activation_checkpoint None)"
                                                      : "no activation checkpointing",
            plc_attention_name(l->attention), (long long)in->nodes, (long long)in->gpus_per_node, fn);
    if (colon)
        fprintf(out, "from %.*s import %s as base_config\n", (int)(colon - in->base), in->base, colon + 1);
    fprintf(out, "from torchtitan.distributed.activation_checkpoint import FullAC, SelectiveAC\n\n\n");
    fprintf(out, "def %s():\n", fn);
    fprintf(out, "    config = base_config()\n");
    fprintf(out, "    p = config.parallelism\n");
    int64_t dp = l->dp;
    fprintf(out, "    p.data_parallel_replicate_degree = %lld\n", (long long)(l->zero == 0 ? dp : 1));
    fprintf(out, "    p.data_parallel_shard_degree = %lld\n", (long long)(l->zero == 0 ? 1 : dp));
    if (l->zero == 2) fprintf(out, "    p.fsdp_reshard_after_forward = \"never\"\n");
    fprintf(out, "    p.tensor_parallel_degree = %lld\n", (long long)l->tp);
    fprintf(out, "    p.enable_sequence_parallel = %s\n", l->sp && l->tp > 1 ? "True" : "False");
    fprintf(out, "    p.context_parallel_degree = %lld\n", (long long)l->cp);
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
    fprintf(out, "    tr.max_norm = %g\n", t->grad_clip);
    fprintf(out, "    tr.mixed_precision_param = \"%s\"\n", t->precision == PLC_PREC_FP32 ? "float32" : "bfloat16");
    if (t->precision == PLC_PREC_FP8)
        fprintf(out, "    # precision fp8: plc modelled the linear layers in fp8; add torchtitan's float8 converter to\n"
                     "    # the model's converters (this file does not set it: its configuration differs by version)\n");
    fprintf(out, "    config.debug.seed = %llu\n", (unsigned long long)t->seed);
    fprintf(out, "    return config\n");
}

/* ---- the command ------------------------------------------------------------------ */

static void usage(FILE *out)
{
    fprintf(out,
            "usage: plc export --megatron|--torchtitan [OPTIONS] SPEC|PLAN\n"
            "\n"
            "Writes the layout for a training engine: --megatron a Megatron-LM launch\n"
            "script (torchrun pretrain_gpt.py with the model shape, layout, virtual\n"
            "stages, sequence parallelism, recompute, distributed optimizer, overlap\n"
            "flags, precision and batch sizes), --torchtitan a torchtitan configuration\n"
            "module (parallelism, activation checkpointing, training). What an\n"
            "engine can run is its profile's runs list (engines.yaml: megatron,\n"
            "fsdp2; PLC_ENGINES names another file). A plan is exported as\n"
            "compiled, or refused when the profile does not run its layout\n"
            "(modular pipelines, ZeRO 1 for torchtitan, ...); for a spec the\n"
            "solver's best layout is exported, or the best one the engine can run,\n"
            "and the output says so.\n"
            "Exit status: 0 written, 1 an error in the input or options (a plan the\n"
            "engine cannot run), 2 no layout the engine can run fits.\n"
            "\n"
            "options:\n"
            "  --megatron            Megatron-LM launch script\n"
            "  --torchtitan          torchtitan configuration module\n"
            "  -o FILE               output file (default, and '-': standard output)\n"
            "  --base MODULE:FUNC    torchtitan: the configuration holding the model\n"
            "                        (default torchtitan.models.llama3.config_registry:llama3_8b)\n"
            "%s"
            "  -h, --help            this text\n",
            plc_spec_options_help);
}

static bool is_plan(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return false;
    char magic[8] = {0};
    size_t got = fread(magic, 1, sizeof magic, f);
    fclose(f);
    return got == sizeof magic && !memcmp(magic, PLC_PLAN_MAGIC, sizeof magic);
}

/* the spec's layout block narrowed to what profile p runs: false when a
 * dimension keeps no value */
static bool restrict_to_profile(plc_layout_spec *ls, const plc_engine_profile *p)
{
    for (int d = 0; d < PLC_LD_COUNT; d++) {
        if (!p->offers[d]) continue;
        plc_choice *c = plc_layout_spec_choice_mut(ls, (plc_layout_dim)d);
        plc_choice r = {.kind = PLC_CHOICE_SET};
        for (int64_t v = 0; v < 64 && r.n < PLC_CHOICE_MAX; v++)
            if ((p->offers[d] >> v & 1u) && plc_choice_allows(c, v)) r.v[r.n++] = v;
        if (!r.n) return false;
        *c = r;
    }
    return true;
}

/* "schedule 1f1b interleaved; ...; zero 0 1; ...": what profile p runs */
static void offers_text(FILE *out, const plc_engine_profile *p)
{
    const char *sep = "";
    for (int d = 0; d < PLC_LD_COUNT; d++) {
        if (!p->offers[d]) continue;
        fprintf(out, "%s%s", sep, plc_layout_dim_key((plc_layout_dim)d));
        for (int64_t v = 0; v < 64; v++) {
            char val[32];
            if (p->offers[d] >> v & 1u) fprintf(out, " %s", plc_layout_value_text((plc_layout_dim)d, v, val, sizeof val));
        }
        sep = "; ";
    }
}

static const plc_candidate *best_of(const plc_solution *s)
{
    return s->pinned ? (s->single.fits ? &s->single : NULL) : s->nranked ? &s->ranked[0] : NULL;
}

/* the spec's best layout that engine e (profile p) can run, into in */
static int from_spec(plc_arena *a, const engine *e, const plc_engine_profile *p, const char *path,
                     const plc_spec_opts *opts, export_in *in)
{
    plc_job job;
    if (plc_report_load(a, "export", path, opts, &job)) return PLC_EXIT_INPUT;
    plc_solution s;
    if (plc_solve(&job, a, &s)) return PLC_EXIT_INPUT;
    const plc_candidate *best = best_of(&s);
    char why[256];
    const char *no = best ? cannot_run(e, p, &job.model, &best->layout, why, sizeof why) : NULL;
    if (no) {
        plc_job j2 = job;
        j2.engine.uneven_stages = p->uneven_stages; /* the rulebook's stages for the target engine */
        plc_solution s2;
        const plc_candidate *alt = NULL;
        if (restrict_to_profile(&j2.layout, p) && plc_solve(&j2, a, &s2) == 0) alt = best_of(&s2);
        if (!alt) {
            fprintf(stderr, "plc export: error: %s: the best layout uses %s, and no layout %s can run fits\n"
                            "  hint: %s runs ", path, no, e->name, e->name);
            offers_text(stderr, p);
            fputs("; widen the spec's layout block to let the solver use them\n", stderr);
            return PLC_EXIT_NO_LAYOUT;
        }
        char lt[512];
        layout_text(lt, sizeof lt, &best->layout);
        snprintf(in->note, sizeof in->note,
                 "plc's best layout (%s, %.4g s per step) uses %s; this is the best layout %s can run (%+.2f%% step time).",
                 lt, best->step_time_s, no, e->name, 100.0 * (alt->step_time_s / best->step_time_s - 1.0));
        fprintf(stderr, "plc export: note: %s\n", in->note);
        best = alt;
    }
    if (!best) {
        fprintf(stderr, "plc export: error: %s: no layout fits\n", path);
        return PLC_EXIT_NO_LAYOUT;
    }
    in->model = job.model;
    in->train = job.train;
    in->nodes = job.cluster.nodes;
    in->gpus_per_node = job.cluster.gpus_per_node;
    in->layout = best->layout;
    in->step_time_s = best->step_time_s;
    in->mfu = best->mfu;
    return PLC_EXIT_OK;
}

static int from_plan(plc_arena *a, const engine *e, const plc_engine_profile *prof, const char *path, export_in *in)
{
    plc_plan p;
    if (plc_cmd_load_plan("export", a, path, &p)) return PLC_EXIT_INPUT;
    char why[256];
    const char *no = cannot_run(e, prof, &p.model, &p.layout, why, sizeof why);
    if (no) {
        fprintf(stderr,
                "plc export: error: %s: the plan's layout uses %s\n"
                "  hint: export the spec instead (plc export %s SPEC): it picks the best layout %s can run\n",
                path, no, e->option, e->name);
        return PLC_EXIT_INPUT;
    }
    in->model = p.model;
    in->train = p.train;
    in->nodes = p.nodes;
    in->gpus_per_node = p.gpus_per_node;
    in->layout = p.layout;
    in->step_time_s = p.pred.step_time_s;
    in->mfu = p.pred.mfu;
    return PLC_EXIT_OK;
}

int plc_cmd_export(int argc, char **argv)
{
    plc_spec_opts opts;
    if (plc_spec_take_options(&argc, argv, &opts)) return PLC_EXIT_INPUT;
    const char *path = NULL, *outp = NULL;
    const engine *e = NULL;
    export_in in;
    memset(&in, 0, sizeof in);
    in.base = "torchtitan.models.llama3.config_registry:llama3_8b";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) { usage(stdout); return PLC_EXIT_OK; }
        const engine *pick = NULL;
        for (size_t k = 0; k < sizeof engines / sizeof engines[0]; k++)
            if (!strcmp(argv[i], engines[k].option)) pick = &engines[k];
        if (pick) {
            if (e && e != pick) {
                fprintf(stderr, "plc export: error: one engine at a time (%s and %s)\n", e->option, pick->option);
                return PLC_EXIT_INPUT;
            }
            e = pick;
            continue;
        }
        if (!strcmp(argv[i], "-o") || !strcmp(argv[i], "--base")) {
            if (i + 1 >= argc) {
                fprintf(stderr, "plc export: error: %s needs a value\n", argv[i]);
                return PLC_EXIT_INPUT;
            }
            if (!strcmp(argv[i], "-o")) outp = argv[++i];
            else in.base = argv[++i];
            continue;
        }
        if (plc_cmd_take_input("export", "spec or plan", argv[i], &path, usage)) return PLC_EXIT_INPUT;
    }
    if (!e) {
        fprintf(stderr, "plc export: error: name the engine: --megatron or --torchtitan\n");
        usage(stderr);
        return PLC_EXIT_INPUT;
    }
    if (plc_cmd_need_input("export", "spec or plan", path, usage)) return PLC_EXIT_INPUT;
    const char *colon = strchr(in.base, ':');
    if (!colon || colon == in.base || !colon[1] || strchr(colon + 1, ':')) {
        fprintf(stderr, "plc export: error: --base takes MODULE:FUNCTION, not '%s'\n", in.base);
        return PLC_EXIT_INPUT;
    }
    in.source = path;
    plc_arena a;
    plc_arena_init(&a);
    plc_engine_profile prof;
    plc_diag d;
    plc_diag_init(&d, stderr, 0);
    in.profile = &prof;
    const char *env_catalog = getenv("PLC_CATALOG");
    const char *catalog = opts.catalog_path ? opts.catalog_path : env_catalog && env_catalog[0] ? env_catalog : NULL;
    int rc = plc_engine_profile_load(&a, &d, e->profile, NULL, catalog, &prof) ? PLC_EXIT_INPUT
             : is_plan(path) ? from_plan(&a, e, &prof, path, &in)
                             : from_spec(&a, e, &prof, path, &opts, &in);
    if (rc == PLC_EXIT_OK) {
        plc_cmd_out o;
        if (plc_cmd_out_open("export", outp ? outp : "-", &o)) {
            rc = PLC_EXIT_INPUT;
        } else {
            e->write(o.f, &in);
            if (plc_cmd_out_close("export", &o)) rc = PLC_EXIT_INPUT;
        }
    }
    plc_arena_free(&a);
    return rc;
}
