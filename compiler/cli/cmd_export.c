/* cmd_export.c: plc export --megatron|--torchtitan SPEC|PLAN: hands the
 * spec's model and its layout to the training engine a team runs today.
 *
 * --megatron writes an executable Megatron-LM launch script (torchrun
 * pretrain_gpt.py) in the flags of Megatron-Core r0.8, the release the
 * megatron profile models; --torchtitan writes a torchtitan configuration
 * module (a function returning Trainer.Config) that checks its base's model
 * shape. Both carry the model's block (Llama or GPT), dropout 0, AdamW, the
 * learning-rate schedule, steps, batch and precision with the layout.
 *
 * A spec is solved with the engine's profile (engines.yaml, read by
 * plc_engine_profile_load: what the search offers a spec with train.engine
 * = megatron or fsdp2), as plc solve -D train.engine=E would, unless it
 * names that engine itself (load_for_engine). What is written is checked
 * three ways, and refused with the reason where it fails, never dropped:
 * the profile's runs lists (cannot_run), what the output's flags or keys
 * can say of a layout (layout_unsaid) and of the model and training
 * (model_unsaid). For a spec the best layout that passes is exported, with
 * a note when it is not the solver's best. The flags and keys written are
 * checked against the engines' own argument definitions, listed in
 * docs/engines/ with the commit they were read from (tests/e2e/export.sh). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/plan_io.h"
#include "compiler/cli/cli_int.h"
#include "compiler/frontend/frontend.h"
#include "compiler/plantools/plantools.h"
#include "plc/version.h"

/* what the export writes from */
typedef struct export_in {
    const char *source; /* the spec or plan named on the command line */
    plc_model model;
    plc_train train;
    int64_t nodes, gpus_per_node;
    plc_layout layout;
    double step_time_s, mfu, peak_bytes, limit_bytes;
    const char *predicted_by; /* whose model the figures are: "engine megatron's model (...)" */
    char note[512]; /* why another layout than the solver's best, or "" */
    const char *base; /* torchtitan: MODULE:FUNCTION of the base configuration */
    const plc_engine_profile *profile; /* the engine's: what it runs and overlaps */
} export_in;

/* why the output cannot say something: NULL when it can, else buf */
typedef const char *unsaid_fn(const plc_model *m, const plc_train *t, const plc_layout *l, const plc_engine_profile *p,
                              char *buf, size_t size);

typedef struct engine {
    const char *name;
    const char *option;
    plc_engine profile; /* whose engines.yaml profile says what it runs */
    /* unequal stages the output can write: 0 none, 1 over pp (vpp 1), 2 over
     * pp * vpp; the profile's uneven_stages is capped by it */
    int uneven;
    unsaid_fn *model_unsaid;  /* the model or training settings, before any solve */
    unsaid_fn *layout_unsaid; /* a layout the profile runs but the output cannot write */
    bool executable;          /* -o FILE is written mode 0755 (a launch script) */
    const char *flags;        /* whose flags or keys the output is written in */
    void (*write)(FILE *out, const export_in *in);
} engine;

static unsaid_fn megatron_model_unsaid, megatron_unsaid, torchtitan_model_unsaid, torchtitan_unsaid;
static void write_megatron(FILE *out, const export_in *in);
static void write_torchtitan(FILE *out, const export_in *in);

static const engine engines[] = {
    {"Megatron-LM", "--megatron", PLC_ENGINE_MEGATRON, 0, megatron_model_unsaid, megatron_unsaid, true,
     "Megatron-Core r0.8 (core_v0.8.0; --decoder-first-pipeline-num-layers came in core_r0.9.0)", write_megatron},
    {"torchtitan", "--torchtitan", PLC_ENGINE_FSDP2, 2, torchtitan_model_unsaid, torchtitan_unsaid, false,
     "torchtitan b5bcd76c6", write_torchtitan},
};

static int uneven_of(const engine *e, const plc_engine_profile *p)
{
    return p->uneven_stages < e->uneven ? (int)p->uneven_stages : e->uneven;
}

/* why engine e, whose profile is p, cannot run layout l of model m, or NULL
 * when it can: unequal stages (plc_rank_layers) beyond what both the profile
 * and the output allow, the first dimension whose value the profile does not
 * offer, or what the output cannot write (e->layout_unsaid) */
static const char *cannot_run(const engine *e, const plc_engine_profile *p, const plc_model *m, const plc_train *t,
                              const plc_layout *l, char *buf, size_t size)
{
    int need = plc_uneven_stages_needed(m->layers, l), can = uneven_of(e, p);
    if (need > can) {
        if (need == 2 && can == 1)
            snprintf(buf, size,
                     "pp * vpp = %lld virtual stages of unequal layer counts (layers = %lld), which %s runs with vpp 1 "
                     "only (%s)",
                     (long long)(l->pp * l->vpp), (long long)m->layers, e->name, p->describes);
        else if (can < p->uneven_stages)
            snprintf(buf, size, "pp = %lld stages of unequal layer counts (layers = %lld), which the %s flags this "
                                "export writes cannot say, though the %s runs them",
                     (long long)l->pp, (long long)m->layers, e->flags, p->describes);
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
    return e->layout_unsaid(m, t, l, p, buf, size);
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
            "%splc predicts %.4g s per step, MFU %.1f%% on %lld node%s x %lld GPUs,\n"
            "%s%.1f GiB on the most loaded GPU (limit %.1f GiB), by %s.\n",
            what, option, PLC_VERSION, in->source, comment, comment, lt, comment, in->step_time_s, 100.0 * in->mfu,
            (long long)in->nodes, plc_word_plural(in->nodes), (long long)in->gpus_per_node, comment,
            in->peak_bytes / 1073741824.0, in->limit_bytes / 1073741824.0, in->predicted_by);
    if (in->note[0]) fprintf(out, "%sNote: %s\n", comment, in->note);
}

/* ---- Megatron-LM ---------------------------------------------------------- */

/* The script is written in the flags of Megatron-Core r0.8 (tag core_v0.8.0,
 * NVIDIA/Megatron-LM commit baf94af3c6, megatron/training/arguments.py), the
 * release the built-in megatron profile models; tests/e2e/export.sh checks
 * every flag against docs/engines/megatron-core-r0.8-flags.txt, read from
 * that file. What those flags cannot say is refused (megatron_unsaid), never
 * dropped. */
#define MEGATRON_RELEASE "Megatron-Core r0.8 (core_v0.8.0, commit baf94af3c6)"

/* the model and training settings r0.8 cannot take, or NULL */
static const char *megatron_model_unsaid(const plc_model *m, const plc_train *t, const plc_layout *l,
                                         const plc_engine_profile *p, char *buf, size_t size)
{
    (void)m, (void)l, (void)p;
    if (t->warmup_steps >= t->decay_steps) {
        snprintf(buf, size, "lr.warmup = %lld is not below the decay's end (%lld steps): %s asserts "
                            "lr_warmup_steps < lr_decay_steps (megatron/training/optimizer_param_scheduler.py)",
                 (long long)t->warmup_steps, (long long)t->decay_steps, MEGATRON_RELEASE);
        return buf;
    }
    return NULL;
}

/* why r0.8's flags cannot express layout l of model m under profile p, or
 * NULL: what the profile's runs lists may allow but the release has no flag
 * or accepts no value for */
static const char *megatron_unsaid(const plc_model *m, const plc_train *t, const plc_layout *l,
                                   const plc_engine_profile *p, char *buf, size_t size)
{
    (void)m, (void)t;
    if (l->zero > 1)
        snprintf(buf, size, "zero = %lld: %s shards the optimizer state only (--use-distributed-optimizer); "
                            "it has no FSDP", (long long)l->zero, MEGATRON_RELEASE);
    else if (l->attention != PLC_ATTN_FUSED && l->attention != PLC_ATTN_FLASH2)
        snprintf(buf, size, "attention = %s: %s runs Transformer Engine's FlashAttention-2 path or its "
                            "unfused attention with the fused masked softmax (fused)", plc_attention_name(l->attention),
                 MEGATRON_RELEASE);
    else if (l->recompute == PLC_RECOMPUTE_EVERY)
        snprintf(buf, size, "recompute = every: %s checkpoints the first k layers of a stage (block) or all (uniform), "
                            "not every k-th", MEGATRON_RELEASE);
    else if (l->schedule == PLC_SCHED_INTERLEAVED && l->vpp > 1 && p->p2p_overlap <= 0 && l->pp <= 2)
        snprintf(buf, size, "interleaved with pp = %lld and p2p overlap off (the profile's p2p_overlap 0): %s "
                            "asserts pp > 2 with --no-overlap-p2p-communication", (long long)l->pp, MEGATRON_RELEASE);
    else return NULL;
    return buf;
}

static void write_megatron(FILE *out, const export_in *in)
{
    const plc_model *m = &in->model;
    const plc_train *t = &in->train;
    const plc_layout *l = &in->layout;
    bool gpt = m->arch == PLC_ARCH_GPT, rope = m->positions == PLC_POS_ROPE;
    fputs("#!/usr/bin/env bash\n# ", out);
    write_header(out, in, "# ", "Megatron-LM launch script", "--megatron");
    const plc_engine_profile *p = in->profile;
    bool tp_overlap = p->tp_overlap > 0 && l->sp && l->tp > 1;
    /* OptimizerParamScheduler (megatron/training/optimizer_param_scheduler.py)
     * is stepped after each iteration from num_steps 0 */
    char warmup[256] = "";
    if (t->warmup_steps > 0)
        snprintf(warmup, sizeof warmup,
                 "# Warm-up: Megatron-LM's step s trains at lr * s / %lld, plc's at\n"
                 "# lr * (s + 1) / %lld (its scheduler starts at step 0); the cosine\n"
                 "# decay to --min-lr at --lr-decay-iters is the same.\n",
                 (long long)t->warmup_steps, (long long)t->warmup_steps);
    char vocab_pad[256] = "";
    int64_t padded = (m->vocab + l->tp - 1) / l->tp * l->tp;
    if (padded != m->vocab)
        snprintf(vocab_pad, sizeof vocab_pad,
                 "# Vocabulary: %lld ids padded to %lld over tp = %lld, as plc's; Megatron-LM's\n"
                 "# %lld padding logits enter its softmax, plc's are left out.\n",
                 (long long)m->vocab, (long long)padded, (long long)l->tp, (long long)(padded - m->vocab));
    fprintf(out,
            "#\n"
            "# The model is plc's %s block: %s.\n"
            "# Dropout is off (plc's model has none; Megatron-LM's default is 0.1).\n"
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
            "# release's (docs/engines/megatron-core-r0.8-flags.txt). Extra arguments are passed on.\n"
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
            warmup,
            p->describes, p->grad_reduce_overlap > 0 ? "runs under" : "waits for", p->param_gather_overlap > 0 ? "run under" : "precede",
            tp_overlap ? "runs under the GEMMs" : "is not overlapped", p->p2p_overlap > 0 ? "run under" : "wait for",
            plc_attention_name(l->attention),
            l->attention == PLC_ATTN_FLASH2 ? "Transformer Engine's flash-attn path (NVTE_FLASH_ATTN=1, NVTE_FUSED_ATTN=0)"
                                            : "Transformer Engine's unfused attention with the fused masked softmax "
                                              "(NVTE_FLASH_ATTN=0, NVTE_FUSED_ATTN=0)",
            vocab_pad,
            t->data_path ? "plc's token file; --data-path wants a Megatron indexed dataset prefix (.bin/.idx): convert it first"
                         : "synthetic in plc; Megatron-LM's mock dataset with the null tokenizer here",
            MEGATRON_RELEASE, (long long)in->nodes, (long long)in->gpus_per_node,
            l->attention == PLC_ATTN_FLASH2 ? "export NVTE_FLASH_ATTN=1 NVTE_FUSED_ATTN=0\n"
                                            : "export NVTE_FLASH_ATTN=0 NVTE_FUSED_ATTN=0\n");
    fprintf(out, "    # model\n");
    fprintf(out, "    --num-layers %lld --hidden-size %lld --ffn-hidden-size %lld\n", (long long)m->layers,
            (long long)m->hidden, (long long)m->ffn_hidden);
    fprintf(out, "    --num-attention-heads %lld\n", (long long)m->heads);
    if (m->kv_heads != m->heads) fprintf(out, "    --group-query-attention --num-query-groups %lld\n", (long long)m->kv_heads);
    fprintf(out, "    --seq-length %lld --max-position-embeddings %lld\n", (long long)m->seq_len, (long long)m->seq_len);
    if (rope) /* plc rotates interleaved pairs (docs/model.md); the fused RoPE kernel rotates halves only */
        fprintf(out, "    --position-embedding-type rope --rotary-base %g --rotary-interleaved --no-rope-fusion\n",
                m->rope_theta);
    else fprintf(out, "    --position-embedding-type learned_absolute\n");
    if (gpt) fprintf(out, "    --normalization LayerNorm --norm-epsilon %g\n", m->norm_eps);
    else fprintf(out, "    --normalization RMSNorm --norm-epsilon %g\n", m->norm_eps);
    if (!gpt) fprintf(out, "    --swiglu --disable-bias-linear\n");
    if (!m->tie_embeddings) fprintf(out, "    --untie-embeddings-and-output-weights\n");
    fprintf(out, "    --attention-dropout 0 --hidden-dropout 0\n");
    fprintf(out, "    --init-method-std 0.02\n");
    fprintf(out, "    # layout\n");
    fprintf(out, "    --tensor-model-parallel-size %lld --pipeline-model-parallel-size %lld --context-parallel-size %lld\n",
            (long long)l->tp, (long long)l->pp, (long long)l->cp);
    if (l->sp && l->tp > 1) fprintf(out, "    --sequence-parallel%s\n", tp_overlap ? " --tp-comm-overlap" : "");
    if (l->schedule == PLC_SCHED_INTERLEAVED && l->vpp > 1)
        fprintf(out, "    --num-layers-per-virtual-pipeline-stage %lld%s\n", (long long)(m->layers / (l->pp * l->vpp)),
                p->p2p_overlap > 0 ? "" : " --no-overlap-p2p-communication");
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

/* torchtitan at the commit its keys were read from (pytorch/torchtitan
 * b5bcd76c6, docs/engines/torchtitan-keys.txt) */
#define TORCHTITAN_AT "torchtitan b5bcd76c6"

/* the model and training settings torchtitan cannot take, or NULL */
static const char *torchtitan_model_unsaid(const plc_model *m, const plc_train *t, const plc_layout *l,
                                           const plc_engine_profile *p, char *buf, size_t size)
{
    (void)l, (void)p;
    if (m->arch == PLC_ARCH_GPT)
        snprintf(buf, size, "arch = gpt: %s's decoders are Llama-family (torchtitan/models: RMSNorm, SwiGLU, RoPE, "
                            "no biases); it has no GPT block (LayerNorm, GELU, biases)", TORCHTITAN_AT);
    else if (m->positions != PLC_POS_ROPE)
        snprintf(buf, size, "positions = learned: %s's Llama 3 decoder has rotary positions only", TORCHTITAN_AT);
    else if (t->decay_steps != t->steps)
        snprintf(buf, size, "lr.decay_steps = %lld < steps = %lld (lr.floor held after): %s's LR scheduler "
                            "(components/optimizer/lr_scheduler.py) decays until the last step (training.steps)",
                 (long long)t->decay_steps, (long long)t->steps, TORCHTITAN_AT);
    else if (t->precision == PLC_PREC_FP8)
        snprintf(buf, size, "precision = fp8: %s converts linears to float8 in the model spec a base configuration "
                            "builds (Float8LinearConverter), which this module does not rebuild; export bf16 and "
                            "choose a float8 base", TORCHTITAN_AT);
    else return NULL;
    return buf;
}

/* a layout the fsdp2 profile may run but torchtitan's configuration cannot
 * say, or NULL */
static const char *torchtitan_unsaid(const plc_model *m, const plc_train *t, const plc_layout *l,
                                     const plc_engine_profile *p, char *buf, size_t size)
{
    (void)t, (void)p;
    if (l->recompute == PLC_RECOMPUTE_BLOCK || l->recompute == PLC_RECOMPUTE_EVERY)
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
    fprintf(out,
            "def _plc_model(config):\n"
            "    \"\"\"Sets the base's model to plc's where no shape changes, and checks\n"
            "    the shape, which torchtitan keeps in its model registry.\"\"\"\n"
            "    model_spec = config.model_spec\n"
            "    model = model_spec.model\n"
            "    want = dict(layers=%lld, hidden=%lld, vocab=%lld, heads=%lld, kv_heads=%lld, ffn_hidden=%lld)\n"
            "    got = dict(layers=len(model.layers), hidden=model.dim, vocab=model.vocab_size)\n"
            "    model.enable_weight_tying = %s\n"
            "    norm = model.norm\n"
            "    norm.eps = %.15g\n"
            "    for block in model.layers:\n"
            "        attention = block.attention\n"
            "        ffn = block.feed_forward\n"
            "        linear = ffn.w1\n"
            "        got.update(heads=attention.n_heads, kv_heads=attention.n_kv_heads or attention.n_heads,\n"
            "                   ffn_hidden=linear.out_features)\n"
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
            (long long)m->ffn_hidden, m->tie_embeddings ? "True" : "False", m->norm_eps, m->rope_theta, m->norm_eps);
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
            "The model is the base configuration %s's, checked against plc's\n"
            "(layers=%lld hidden=%lld ffn_hidden=%lld heads=%lld kv_heads=%lld vocab=%lld)\n"
            "by _plc_model, which also sets RoPE theta %g without scaling, the norms'\n"
            "epsilon %g and tied embeddings %s; a base of another shape stops the run.\n"
            "What plc assumed of the engine: ZeRO stage %lld as %s; %s;\n"
            "torchtitan picks its attention kernel (plc assumed %s).\n"
            "AdamW as plc's: no weight decay on the norms' weights. The LR warms up\n"
            "linearly over %lld steps and decays by a cosine to %g at the last step, as plc's.\n"
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
            plc_attention_name(l->attention), (long long)t->warmup_steps, t->lr_floor, (long long)in->nodes,
            (long long)in->gpus_per_node, fn);
    if (colon)
        fprintf(out, "from %.*s import %s as base_config\n", (int)(colon - in->base), in->base, colon + 1);
    fprintf(out, "from torchtitan.components.optimizer import LRSchedulersContainer, OptimizersContainer, ParamGroupConfig\n");
    fprintf(out, "from torchtitan.distributed.activation_checkpoint import FullAC, SelectiveAC\n\n\n");
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

/* ---- the command ------------------------------------------------------------------ */

static void usage(FILE *out)
{
    fprintf(out,
            "usage: plc export --megatron|--torchtitan [OPTIONS] SPEC|PLAN\n"
            "\n"
            "Writes the spec's model and layout for a training engine: --megatron an\n"
            "executable Megatron-LM launch script in Megatron-Core r0.8's flags,\n"
            "--torchtitan a torchtitan configuration module. Both carry the model's\n"
            "block (Llama or GPT), dropout 0, AdamW, the learning-rate schedule,\n"
            "steps, batch and precision with the layout. A spec is solved with the\n"
            "engine's profile (engines.yaml: megatron, fsdp2; PLC_ENGINES names\n"
            "another file), as with -D train.engine=megatron or fsdp2, unless it\n"
            "names that engine itself; a spec naming another engine is refused. A\n"
            "plan (plrun's) is exported as compiled, with plrun's figures. What the\n"
            "engine or its flags cannot say is refused with the reason.\n"
            "Exit status: 0 written, 1 an error in the input or options, or a\n"
            "setting the engine cannot take, 2 no layout the engine can run fits.\n"
            "\n"
            "options:\n"
            "  --megatron            Megatron-LM launch script\n"
            "  --torchtitan          torchtitan configuration module\n"
            "  -o FILE               output file (default: standard output)\n"
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

/* the first fitting candidate of s, best first, that engine e can run
 * (cannot_run); *first_no says why the solver's best cannot, or NULL */
static const plc_candidate *best_runnable(const engine *e, const plc_engine_profile *p, const plc_job *job,
                                          const plc_solution *s, const char **first_no, char *why, size_t size)
{
    *first_no = NULL;
    char buf[256];
    if (s->pinned) {
        if (!s->single.fits) return NULL;
        const char *no = cannot_run(e, p, &job->model, &job->train, &s->single.layout, why, size);
        *first_no = no;
        return no ? NULL : &s->single;
    }
    for (int i = 0; i < s->nranked; i++) {
        const char *no = cannot_run(e, p, &job->model, &job->train, &s->ranked[i].layout, i ? buf : why, i ? sizeof buf : size);
        if (!no) return &s->ranked[i];
        if (!i) *first_no = no;
    }
    return NULL;
}

/* the engine the spec names (train.engine after the -D overrides), or
 * NULL when it names none or does not parse (the load that follows reports
 * that) */
static const char *named_engine(plc_arena *a, const char *path, const plc_spec_opts *opts)
{
    FILE *quiet = fopen("/dev/null", "w");
    if (!quiet) return NULL;
    plc_diag d;
    plc_diag_init(&d, quiet, 0);
    const char *name = NULL;
    plc_source *src = plc_source_read(a, &d, path);
    int nerrors = 0;
    plc_ast *ast = src ? plc_parse_source(a, &d, src, &nerrors) : NULL;
    if (ast && !nerrors && !plc_spec_apply_defines(a, &d, ast, opts->defines, opts->ndefines)) {
        plc_block *b = plc_ast_find_block(ast, "train");
        plc_pair *pr = b ? plc_block_find_pair(b, "engine") : NULL;
        if (pr && (pr->value->kind == PLC_VAL_IDENT || pr->value->kind == PLC_VAL_STRING))
            name = plc_arena_strndup(a, pr->value->text, pr->value->text_len);
    }
    plc_diag_flush(&d);
    fclose(quiet);
    return name;
}

/* loads the spec for engine e: as the spec says when it names e's engine,
 * as with -D train.engine=E when it names none, refused when it names
 * another (plrun included: no export targets plc's own runtime) */
static int load_for_engine(plc_arena *a, const engine *e, const char *path, const plc_spec_opts *opts, plc_job *job)
{
    const char *ename = plc_engine_name(e->profile);
    const char *named = named_engine(a, path, opts);
    if (named && strcmp(named, ename)) {
        fprintf(stderr,
                "plc export: error: %s: train.engine = %s, but %s exports for engine %s\n"
                "  hint: export with the option of the spec's engine, or solve for %s with -D train.engine=%s\n",
                path, named, e->option, ename, ename, ename);
        return PLC_EXIT_INPUT;
    }
    plc_spec_opts o = *opts;
    if (!named) {
        if (o.ndefines >= PLC_MAX_DEFINES) {
            fprintf(stderr, "plc export: error: too many -D options (at most %d with the engine's)\n",
                    PLC_MAX_DEFINES - 1);
            return PLC_EXIT_INPUT;
        }
        o.defines[o.ndefines++] = plc_arena_printf(a, "train.engine=%s", ename);
    }
    if (plc_report_load(a, "export", path, &o, job)) {
        if (!named)
            fprintf(stderr, "  hint: %s solves as with -D train.engine=%s (the spec names no engine); where its layout "
                            "block pins a value that engine does not run, widen it (-D layout.KEY=auto)\n",
                    e->option, ename);
        return PLC_EXIT_INPUT;
    }
    fprintf(stderr, "plc export: modelling engine %s (%s): %s\n", ename, job->engine.describes,
            named ? "the spec's train.engine"
                  : plc_arena_printf(a, "the spec names none, so solved as with -D train.engine=%s", ename));
    return PLC_EXIT_OK;
}

/* the spec's best layout that engine e (profile p) can run, solved with
 * e's profile, into in */
static int from_spec(plc_arena *a, const engine *e, const plc_engine_profile *p, const char *path,
                     const plc_spec_opts *opts, export_in *in)
{
    plc_job job;
    int rc = load_for_engine(a, e, path, opts, &job);
    if (rc) return rc;
    char why[256];
    const char *no = e->model_unsaid(&job.model, &job.train, NULL, p, why, sizeof why);
    if (no) {
        fprintf(stderr, "plc export: error: %s: %s cannot train this spec: %s\n", path, e->name, no);
        return PLC_EXIT_INPUT;
    }
    plc_solution s;
    if (plc_solve(&job, a, &s)) return PLC_EXIT_INPUT;
    const plc_candidate *best = s.pinned ? (s.single.fits ? &s.single : NULL) : s.nranked ? &s.ranked[0] : NULL;
    const plc_candidate *run = best_runnable(e, p, &job, &s, &no, why, sizeof why);
    if (best && !run) {
        /* the ranked list may be cut short: search again within what e runs */
        plc_job j2 = job;
        j2.engine.uneven_stages = uneven_of(e, p);
        plc_solution s2;
        const char *no2;
        char why2[256];
        if (restrict_to_profile(&j2.layout, p) && plc_solve(&j2, a, &s2) == 0)
            run = best_runnable(e, p, &j2, &s2, &no2, why2, sizeof why2);
        if (!run) {
            fprintf(stderr, "plc export: error: %s: the best layout uses %s, and no layout %s can run fits\n"
                            "  hint: %s runs ", path, no, e->name, e->name);
            offers_text(stderr, p);
            fputs("; widen the spec's layout block to let the solver use them\n", stderr);
            return PLC_EXIT_NO_LAYOUT;
        }
    }
    if (!best) {
        fprintf(stderr, "plc export: error: %s: no layout fits under engine %s's model%s%s\n", path,
                plc_engine_name(e->profile), s.pinned && s.single.reason && s.single.reason[0] ? ": " : "",
                s.pinned && s.single.reason ? s.single.reason : "");
        fprintf(stderr, "  hint: plc solve %s -D train.engine=%s shows the layouts it tried\n", path,
                plc_engine_name(e->profile));
        return PLC_EXIT_NO_LAYOUT;
    }
    if (run != best) {
        char lt[512];
        layout_text(lt, sizeof lt, &best->layout);
        snprintf(in->note, sizeof in->note,
                 "plc's best layout (%s, %.4g s per step) uses %s; this is the best layout %s can run (%+.2f%% step time).",
                 lt, best->step_time_s, no, e->name, 100.0 * (run->step_time_s / best->step_time_s - 1.0));
        fprintf(stderr, "plc export: note: %s\n", in->note);
    }
    in->model = job.model;
    in->train = job.train;
    in->nodes = job.cluster.nodes;
    in->gpus_per_node = job.cluster.gpus_per_node;
    in->layout = run->layout;
    in->step_time_s = run->step_time_s;
    in->mfu = run->mfu;
    in->peak_bytes = run->peak_bytes;
    in->limit_bytes = s.limit_bytes;
    in->predicted_by = plc_arena_printf(a, "engine %s's model (%s)", plc_engine_name(e->profile), p->describes);
    return PLC_EXIT_OK;
}

/* a compiled plan: plrun's program, its layout exported as compiled; the
 * figures are the plan's (plrun's), which the header says */
static int from_plan(plc_arena *a, const engine *e, const plc_engine_profile *prof, const char *path, export_in *in)
{
    plc_plan p;
    if (plc_cmd_load_plan("export", a, path, &p)) return PLC_EXIT_INPUT;
    char why[256];
    const char *no = e->model_unsaid(&p.model, &p.train, NULL, prof, why, sizeof why);
    if (no) {
        fprintf(stderr, "plc export: error: %s: %s cannot train this plan's model: %s\n", path, e->name, no);
        return PLC_EXIT_INPUT;
    }
    no = cannot_run(e, prof, &p.model, &p.train, &p.layout, why, sizeof why);
    if (no) {
        fprintf(stderr,
                "plc export: error: %s: the plan's layout uses %s\n"
                "  hint: export the spec instead (plc export %s SPEC): it picks the best layout %s can run\n",
                path, no, e->option, e->name);
        return PLC_EXIT_INPUT;
    }
    fprintf(stderr, "plc export: note: %s is a plan for plrun: its figures are plrun's; export the spec for engine %s's\n",
            path, plc_engine_name(e->profile));
    in->model = p.model;
    in->train = p.train;
    in->nodes = p.nodes;
    in->gpus_per_node = p.gpus_per_node;
    in->layout = p.layout;
    in->step_time_s = p.pred.step_time_s;
    in->mfu = p.pred.mfu;
    in->peak_bytes = p.pred.peak_bytes_plan;
    in->limit_bytes = p.hw.mem_bytes; /* a plan keeps no memory_limit: the device's */
    in->predicted_by = "the plan (plrun's)";
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
    int rc = plc_engine_profile_load(&a, &d, e->profile, NULL, &prof) ? PLC_EXIT_INPUT
             : is_plan(path) ? from_plan(&a, e, &prof, path, &in)
                             : from_spec(&a, e, &prof, path, &opts, &in);
    if (rc == PLC_EXIT_OK) {
        FILE *out = outp ? fopen(outp, "w") : stdout;
        /* a launch script is run: rwxr-xr-x, whatever the umask */
        if (out && outp && e->executable && fchmod(fileno(out), 0755)) {
            fprintf(stderr, "plc export: error: cannot make %s executable\n", outp);
            fclose(out);
            out = NULL;
        }
        if (!out) {
            fprintf(stderr, "plc export: error: cannot write %s\n", outp);
            rc = PLC_EXIT_INPUT;
        } else {
            e->write(out, &in);
            if (outp && fclose(out)) {
                fprintf(stderr, "plc export: error: writing %s failed\n", outp);
                rc = PLC_EXIT_INTERNAL;
            }
        }
    }
    plc_arena_free(&a);
    return rc;
}
