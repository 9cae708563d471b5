/* memory_model.c: per-rank, per-stage memory; see solver.h and
 * docs/solver.md for the accounting and its sources. */
#include "compiler/solver/solver_int.h"

#include <math.h>
#include <string.h>

/* cuBLAS keeps a workspace per handle and stream (32 MiB on Hopper) */
#define PLC_MATMUL_WORKSPACE (32.0 * 1024 * 1024)

/* communication library buffers: one set per communicator group */
static double comm_library_bytes(const plc_hw *hw, const plc_layout *l)
{
    int groups = (l->tp > 1) + (l->cp > 1) + (l->dp * l->cp > 1) + (l->pp > 1);
    /* the MoE layers' expert-parallel and expert-data-parallel groups */
    groups += (plc_layout_ep(l) > 1) + (plc_layout_edp(l) > 1 && plc_layout_edp(l) != l->dp * l->cp &&
                                        plc_layout_ep(l) * plc_layout_etp(l) > 1);
    return (double)groups * hw->comm_buffer;
}

double plc_runtime_fixed_bytes(const plc_job *job, const plc_layout *l)
{
    const plc_hw *hw = &job->cluster.hw;
    return comm_library_bytes(hw, l) + PLC_MATMUL_WORKSPACE + hw->runtime_reserved;
}

static double tokens_per_micro_batch(const plc_job *job, const plc_layout *l)
{
    return (double)l->micro_batch * (double)job->model.seq_len / (double)l->cp;
}

static bool materialises_scores(plc_attention a) { return a == PLC_ATTN_NAIVE || a == PLC_ATTN_FUSED; }

/* bytes per saved attention-score element: both paths keep the masked
 * scores and the probabilities the PV matmul reads (in the activation type);
 * the plain path also keeps the fp32 softmax output its backward reads */
static double score_bytes(plc_attention a, double act)
{
    return a == PLC_ATTN_NAIVE ? 4.0 + 2.0 * act : 2.0 * act;
}

double plc_act_layer_bytes(const plc_job *job, const plc_layout *l, plc_recompute policy)
{
    const plc_model *m = &job->model;
    double a = plc_dtype_bytes_of(job).act;
    double T = tokens_per_micro_batch(job, l);
    double tp = (double)l->tp;
    double spd = (l->sp && l->tp > 1) ? tp : 1.0; /* sequence-parallel share */
    double h = (double)m->hidden, f = (double)m->ffn_hidden;
    double hd = (double)plc_head_dim(m);
    double q = (double)m->heads * hd, kv = (double)m->kv_heads * hd;

    if (policy == PLC_RECOMPUTE_FULL) return T * h * a / spd; /* the layer input */

    if (policy == PLC_RECOMPUTE_SELECTIVE && job->engine.selective_ops > 0) {
        /* op-level selective checkpointing (torchtitan): the block's input,
         * the output of every second linear (plc_block_linears; a row-parallel
         * one's is the partial sum, h wide on every tp rank), the
         * reduce-scatters' outputs with sp, and the attention's output and
         * log-sum-exp (the s x s core of a non-tiled kernel as without
         * recompute); everything else is rebuilt in the backward */
        plc_gemm_shape b[PLC_BLOCK_LINEARS_MAX];
        int n = plc_block_linears(job, l, b);
        double kept = h * a / spd + q / tp * a;
        for (int i = 0; i < n; i++)
            if (plc_op_sac_saves(i)) kept += (double)b[i].N * a;
        if (l->sp && l->tp > 1) kept += 2.0 * h / tp * a;
        if (materialises_scores(l->attention))
            kept += (double)m->heads / tp * (double)m->seq_len * score_bytes(l->attention, a);
        else
            kept += (double)m->heads / tp * 4.0;
        return T * kept;
    }

    bool gpt = m->arch == PLC_ARCH_GPT;
    /* two norms: input and output each. RMSNorm unfused also keeps an fp32
     * copy of its input for the backward; LayerNorm keeps two fp32 statistics
     * (mean, 1/std) per row */
    double norm_extra = gpt ? 8.0 : l->fused_rmsnorm ? 0.0 : 4.0 * h;
    double norms = 2.0 * (2.0 * h * a + norm_extra) / spd;
    double qkv = (q + 2.0 * kv) / tp * a; /* after RoPE or the bias, read by the attention backward */
    double out = q / tp * a;              /* attention output = input of wo */
    /* qk-norm (Qwen3): its input, the projected q and k, and unfused as the
     * block's RMSNorms an fp32 copy of it */
    double qk_norm = m->qk_norm ? (q + kv) / tp * (a + (l->fused_rmsnorm ? 0.0 : 4.0)) : 0.0;
    double core = 0.0;
    if (materialises_scores(l->attention)) {
        if (policy == PLC_RECOMPUTE_NONE)
            core = (double)m->heads / tp * (double)m->seq_len * score_bytes(l->attention, a);
    } else {
        core = (double)m->heads / tp * 4.0; /* log-sum-exp, fp32 */
        if (l->attention == PLC_ATTN_FLASH1)
            core += (q + 2.0 * kv) / tp * a; /* v1's packed qkv copy (unpadded interface) */
    }
    /* SwiGLU: gate, up, silu(gate), product, or with the engine's fused
     * SwiGLU (fused_swiglu) its gate-and-up input and the product; GELU: its
     * input (fc + bias) and output (proj's input). Bias gradients are column
     * sums: nothing kept */
    double swiglu = job->engine.fused_swiglu > 0 ? 3.0 : 4.0;
    double mlp = (gpt ? 2.0 : swiglu) * f / tp * a;
    return T * (norms + qkv + qk_norm + out + core + mlp);
}

/* transient buffers while one layer of one micro-batch runs its backward */
static double layer_temporaries(const plc_job *job, const plc_layout *l)
{
    const plc_model *m = &job->model;
    double a = plc_dtype_bytes_of(job).act;
    double T = tokens_per_micro_batch(job, l);
    double tp = (double)l->tp;
    double h = (double)m->hidden, f = (double)m->ffn_hidden;
    double hd = (double)plc_head_dim(m);
    double q = (double)m->heads * hd, kv = (double)m->kv_heads * hd;
    /* MLP gradients in flight: d(gate), d(up), d(product) | d(fc), d(gelu) */
    double mlp_grads = m->arch == PLC_ARCH_GPT ? 2.0 : 3.0;
    double t = T * (mlp_grads * f / tp + 2.0 * h + (q + 2.0 * kv) / tp) * a;
    bool whole = plc_recomputed_layers(m, l) > 0; /* some layers are recomputed whole */
    if (materialises_scores(l->attention)) {
        double scores = T * (double)m->heads / tp * (double)m->seq_len;
        t += scores * (a + (l->attention == PLC_ATTN_NAIVE ? 4.0 : 0.0)); /* score gradients */
        if (l->recompute == PLC_RECOMPUTE_SELECTIVE || whole) t += scores * score_bytes(l->attention, a);
    }
    if (whole) t += plc_act_layer_bytes(job, l, PLC_RECOMPUTE_NONE);
    /* op-level selective checkpointing rebuilds the rest of the layer for
     * its backward */
    if (l->recompute == PLC_RECOMPUTE_SELECTIVE && job->engine.selective_ops > 0)
        t += fmax(0.0, plc_act_layer_bytes(job, l, PLC_RECOMPUTE_NONE) -
                           plc_act_layer_bytes(job, l, PLC_RECOMPUTE_SELECTIVE));
    return t;
}

/* The last stage's head and loss, into c[PLC_MEM_LOGITS] (and
 * c[PLC_MEM_TEMPORARIES], a layer's backward temporaries, as given). Both
 * accountings hold the final norm's input and output of every micro-batch in
 * flight.
 * - plc's own (engine figure loss_peak_bytes 0): one sum of the fp32
 *   softmax kept for the backward of every micro-batch in flight, the
 *   logits and the fp32 gradient of the current one, and a layer's
 *   backward temporaries.
 * - an engine whose loss is read from its code (loss_peak_bytes > 0): each
 *   micro-batch in flight but the current one keeps loss_saved_bytes per
 *   logit for its backward; the current one's loss holds loss_peak_bytes
 *   at its own peak (its forward, or its backward with the gradient it
 *   makes). The loss's backward runs, and frees its buffers, before the
 *   layers' backward starts, so the stage's peak is the larger moment: the
 *   loss's, or a layer's backward beside the kept losses. */
static void head_memory(const plc_job *job, const plc_layout *l, double inflight, double c[PLC_MEM_COUNT])
{
    const plc_engine_profile *e = &job->engine;
    double a = plc_dtype_bytes_of(job).act;
    double T = tokens_per_micro_batch(job, l);
    double spd = (l->sp && l->tp > 1) ? (double)l->tp : 1.0;
    double elems = T * (double)plc_loss_vocab(job, l);
    double norm = inflight * 2.0 * T * (double)job->model.hidden * a / spd;
    if (e->loss_peak_bytes <= 0) {
        c[PLC_MEM_LOGITS] = inflight * elems * 4.0 + elems * (a + 4.0) + norm;
        return;
    }
    double held = (inflight > 1 ? inflight - 1 : 0) * elems * e->loss_saved_bytes + norm;
    double loss = held + elems * e->loss_peak_bytes;
    if (loss >= held + c[PLC_MEM_TEMPORARIES]) {
        c[PLC_MEM_LOGITS] = loss;
        c[PLC_MEM_TEMPORARIES] = 0;
    } else {
        c[PLC_MEM_LOGITS] = held;
    }
}

/* weights, gradients and optimizer state of params parameters ZeRO-sharded
 * over `shard` ranks */
static void static_state_over(const plc_job *job, const plc_layout *l, double params, double shard, double *w,
                              double *g, double *o)
{
    plc_dtype_bytes d = plc_dtype_bytes_of(job);
    /* an engine whose ZeRO 3 shard is the fp32 master (sharded_master:
     * FSDP2's mixed precision casts it when it gathers) keeps no bf16 shard:
     * the weights are the master, and the optimizer holds Adam's m and v */
    if (l->zero >= 3 && job->engine.sharded_master > 0 && job->train.precision == PLC_PREC_BF16) {
        d.weight = 4.0;
        d.optimizer = 8.0;
    }
    *w = params * (d.weight + d.fp8_weights) / (l->zero >= 3 ? shard : 1.0);
    *g = params * d.grad / (l->zero >= 2 ? shard : 1.0);
    /* plrun keeps an fp32 master shard of fp32 parameters under ZeRO 1
     * and 2 too (job.h); the bf16 figure has its master already */
    double master = job->train.engine == PLC_ENGINE_PLRUN && job->train.precision == PLC_PREC_FP32 &&
                            plc_plrun_keeps_master(false, l->zero, l->dp * l->cp)
                        ? 4.0
                        : 0.0;
    *o = params * (d.optimizer + master) / (l->zero >= 1 ? shard : 1.0);
}

/* The static state of a rank of stage s holding sp's parameters: sharded
 * over dp * cp; with experts (moe_model.c), the routed experts' over the
 * expert-data-parallel group and the rest over dp * cp. */
static void static_state(const plc_job *job, const plc_layout *l, int64_t stage, const plc_stage_params *sp,
                         double *w, double *g, double *o)
{
    if (job->model.moe.experts <= 0) {
        static_state_over(job, l, plc_stage_params_total(sp), (double)(l->dp * l->cp), w, g, o);
        return;
    }
    plc_moe_stage ms;
    plc_moe_stage_params(&job->model, l, stage, &ms);
    double ew, eg, eo;
    static_state_over(job, l, ms.dense, (double)(l->dp * l->cp), w, g, o);
    static_state_over(job, l, ms.routed, (double)plc_layout_edp(l), &ew, &eg, &eo);
    *w += ew, *g += eg, *o += eo;
}

/* the parameters a rank of the stage holds (its routed experts' share with experts) */
static double stage_params_held(const plc_job *job, const plc_layout *l, int64_t stage, const plc_stage_params *sp)
{
    if (job->model.moe.experts <= 0) return plc_stage_params_total(sp);
    plc_moe_stage ms;
    plc_moe_stage_params(&job->model, l, stage, &ms);
    return ms.dense + ms.routed;
}

/* the MoE layers' activations beyond the dense layers' for one micro-batch
 * in flight on a rank of stage s (its layers, r of them recomputed whole,
 * which keep their input only): those not recomputed, in the MoE layers'
 * share of them */
static double moe_act_stage(const plc_job *job, const plc_layout *l, int64_t stage, int64_t layers, int64_t r)
{
    if (job->model.moe.experts <= 0 || layers <= 0) return 0.0;
    plc_moe_stage ms;
    plc_moe_stage_params(&job->model, l, stage, &ms);
    double kept = (double)(layers - r) / (double)layers;
    return kept * (double)ms.moe_layers * plc_moe_act_layer_delta(job, l);
}

bool plc_memory_is_plan(const plc_job *job, const plc_layout *l)
{
    return job->train.engine == PLC_ENGINE_PLRUN && l->recompute <= PLC_RECOMPUTE_FULL;
}

static double dynamic_of(const double *c)
{
    return c[PLC_MEM_ACTIVATIONS] + c[PLC_MEM_LOGITS] + c[PLC_MEM_TEMPORARIES];
}

static double total_of(const double *c)
{
    double t = 0;
    for (int k = 0; k < PLC_MEM_COUNT; k++) t += c[k];
    return t;
}

/* The stages the search estimates (all_stages false), which bound the
 * others. In the engines' models, with equal stages, the first and last:
 * middle stages hold no embedding or head, no more layers and no more
 * micro-batches in flight than the first. With unequal ones
 * (plc_rank_layers) a middle rank holds more layers than the ends, and
 * rank 1 bounds the middle ones (as many layers, in virtual stages of
 * equal size with vpp > 1, and the most micro-batches in flight). plrun's
 * own buffers: every stage, since a middle one can peak above all of
 * these (its pipeline receives in flight, ZeRO 3's gathers at its point of
 * the interleaved order: tests/unit/test_solver_memory_exact.c). */
static bool bounds_others(const plc_job *job, const plc_layout *l, int64_t s)
{
    return s == 0 || s == l->pp - 1 || plc_memory_is_plan(job, l) ||
           (s == 1 && plc_ranks_uneven(job->model.layers, l->pp, l->vpp));
}

/* the most loaded stage of those filled in (all, or those that bound the
 * others), and the fit */
static void peak_of(const plc_job *job, const plc_layout *l, bool all_stages, plc_estimate *est)
{
    est->peak_bytes = 0;
    est->peak_stage = 0;
    for (int64_t s = 0; s < l->pp; s++) {
        if (!all_stages && !bounds_others(job, l, s)) continue;
        double total = total_of(est->stage_mem[s]);
        if (total > est->peak_bytes) { est->peak_bytes = total; est->peak_stage = (int)s; }
    }
    est->fits = est->valid && est->peak_bytes <= est->limit_bytes;
}

void plc_memory_estimate(const plc_job *job, const plc_layout *l, bool all_stages, plc_estimate *est)
{
    const plc_model *m = &job->model;
    const plc_hw *hw = &job->cluster.hw;
    plc_dtype_bytes d = plc_dtype_bytes_of(job);
    int64_t local = job->train.global_batch / l->dp;
    int64_t micro = local / l->micro_batch;
    /* layers recomputed whole keep their input; the others what the policy
     * keeps (selective: all but the scores; block, every: everything) */
    double act_full = plc_act_layer_bytes(job, l, PLC_RECOMPUTE_FULL);
    double act_kept = plc_act_layer_bytes(job, l, l->recompute == PLC_RECOMPUTE_SELECTIVE ? PLC_RECOMPUTE_SELECTIVE
                                                                                          : PLC_RECOMPUTE_NONE);
    double temps = layer_temporaries(job, l);
    /* plrun's plan holds the gathered weights and gradient blocks of ZeRO
     * among its own buffers (the replay below counts them) */
    bool plan_buffers = plc_memory_is_plan(job, l);
    double comm = comm_library_bytes(hw, l);
    double layer_w = (double)plc_params_layer_matrices(m) / (double)l->tp;
    if (l->zero >= 3 && !plan_buffers) comm += 2.0 * layer_w * d.weight; /* gathered layer + prefetch */
    if (l->zero == 2 && !plan_buffers) comm += layer_w * d.grad;         /* one layer's grads before reduce-scatter */

    est->stages = (int)l->pp;
    est->limit_bytes = job->layout.memory_limit * hw->mem_bytes;
    est->lowered = est->open = false;
    for (int64_t s = 0; s < l->pp; s++) {
        plc_stage_params sp;
        plc_stage_params_of(m, l->tp, l->pp, l->vpp, s, &sp);
        est->stage_layers[s] = sp.layers;
        if (!all_stages && !bounds_others(job, l, s)) { /* bounded by others */
            memset(est->stage_mem[s], 0, sizeof est->stage_mem[s]);
            continue;
        }
        double *c = est->stage_mem[s];
        est->stage_params[s] = stage_params_held(job, l, s, &sp);
        static_state(job, l, s, &sp, &c[PLC_MEM_WEIGHTS], &c[PLC_MEM_GRADS], &c[PLC_MEM_OPTIMIZER]);
        double inflight = plc_sched_inflight(l->schedule, l->pp, l->vpp, m->layers, micro, s);
        int64_t r = plc_recomputed_layers_of(l, sp.layers); /* of the stage's layers, recomputed whole */
        c[PLC_MEM_ACTIVATIONS] = inflight * ((double)(sp.layers - r) * act_kept + (double)r * act_full);
        c[PLC_MEM_ACTIVATIONS] += inflight * moe_act_stage(job, l, s, sp.layers, r);
        c[PLC_MEM_LOGITS] = 0;
        c[PLC_MEM_TEMPORARIES] = temps;
        if (sp.has_head) head_memory(job, l, inflight, c);
        /* plrun: the plan's own buffers (the recompute policies it lowers) */
        if (plan_buffers) {
            double dyn[PLC_MEM_COUNT];
            plc_plrun_stage_memory(job, l, s, dyn);
            c[PLC_MEM_ACTIVATIONS] = dyn[PLC_MEM_ACTIVATIONS];
            c[PLC_MEM_LOGITS] = 0;
            c[PLC_MEM_TEMPORARIES] = dyn[PLC_MEM_TEMPORARIES];
        }
        /* a caching allocator (not plc's static plan) loses a share of the
         * memory that churns every micro-batch to fragmentation */
        double frag = hw->alloc_overhead * (c[PLC_MEM_ACTIVATIONS] + c[PLC_MEM_LOGITS] + c[PLC_MEM_TEMPORARIES]);
        c[PLC_MEM_RESERVED] = hw->runtime_reserved + frag;
        c[PLC_MEM_COMM] = comm;
        c[PLC_MEM_WORKSPACE] = PLC_MATMUL_WORKSPACE; /* with comm_library_bytes and runtime_reserved: plc_runtime_fixed_bytes */
    }
    peak_of(job, l, all_stages, est);
}

bool plc_memory_open(const plc_job *job, const plc_layout *l, const plc_estimate *est, bool *open)
{
    if (!est->valid || est->lowered || !plc_memory_is_plan(job, l)) return false;
    /* each stage's arena lies within [estimate - BELOW x dynamic, estimate
     * + ABOVE x dynamic]: open where the limit is inside */
    bool any = false;
    for (int s = 0; s < est->stages; s++) {
        const double *c = est->stage_mem[s];
        if (total_of(c) - PLC_PLACEMENT_BELOW * dynamic_of(c) > est->limit_bytes) return false; /* cannot fit */
        open[s] = total_of(c) + PLC_PLACEMENT_ABOVE * dynamic_of(c) > est->limit_bytes;
        any |= open[s];
    }
    return any;
}

void plc_memory_take_arena(const plc_job *job, const plc_layout *l, const bool *open, const double *arena,
                           plc_estimate *est)
{
    const plc_hw *hw = &job->cluster.hw;
    for (int s = 0; s < est->stages; s++) {
        if (!open[s]) continue; /* fits on the estimate, which stays */
        /* the static state is exact: the rest of the arena is the dynamic
         * part, shared among its components as the replay shares it */
        double *c = est->stage_mem[s];
        double dyn = dynamic_of(c);
        double target = fmax(0, arena[s] - c[PLC_MEM_WEIGHTS] - c[PLC_MEM_GRADS] - c[PLC_MEM_OPTIMIZER]);
        if (dyn > 0) {
            for (int k = PLC_MEM_ACTIVATIONS; k <= PLC_MEM_TEMPORARIES; k++) c[k] *= target / dyn;
        } else {
            c[PLC_MEM_TEMPORARIES] = target;
        }
        c[PLC_MEM_RESERVED] = hw->runtime_reserved + hw->alloc_overhead * target;
    }
    est->lowered = true;
    est->open = false;
    peak_of(job, l, true, est);
}

/* weights, gradients and optimizer state of a rank of stage `stage` (its
 * parameters in *sp), for the bounds below */
static double stage_state(const plc_job *job, const plc_layout *l, int64_t stage, plc_stage_params *sp)
{
    plc_stage_params_of(&job->model, l->tp, l->pp, l->vpp, stage, sp);
    double w, g, o;
    static_state(job, l, stage, sp, &w, &g, &o);
    return w + g + o;
}

double plc_memory_lower_bound(const plc_job *job, int64_t tp, int64_t pp, int64_t dp,
                              int64_t cp, int64_t zero)
{
    plc_layout l = {.dp = dp, .tp = tp, .pp = pp, .cp = cp, .zero = zero};
    return plc_memory_lower_bound_of(job, &l);
}

double plc_memory_lower_bound_of(const plc_job *job, const plc_layout *node)
{
    int64_t pp = node->pp;
    plc_layout l = {.dp = node->dp, .tp = node->tp, .pp = pp, .cp = node->cp, .ep = node->ep, .etp = node->etp,
                    .zero = node->zero, .vpp = 1, .micro_batch = 1};
    plc_stage_params sp;
    /* the ends' state with vpp 1; where the engine runs unequal virtual
     * stages (uneven_stages 2) an end may hold fewer layers with some vpp
     * (plc_rank_layers): the least any vpp gives, so that the bound holds
     * for every vpp */
    int64_t ends[2] = {0, pp - 1};
    double most = 0;
    for (int i = 0; i < 2; i++) {
        l.vpp = 1;
        double state = stage_state(job, &l, ends[i], &sp);
        for (int64_t v = 2; job->engine.uneven_stages >= 2 && pp > 1 && pp * v <= job->model.layers; v++) {
            l.vpp = v;
            double s = stage_state(job, &l, ends[i], &sp);
            if (s < state) state = s;
        }
        if (state > most) most = state;
    }
    return most + job->cluster.hw.runtime_reserved;
}

double plc_memory_node_bound(const plc_job *job, const plc_layout *l)
{
    const plc_model *m = &job->model;
    int64_t micro = job->train.global_batch / l->dp / l->micro_batch;
    double act = plc_act_layer_bytes(job, l, PLC_RECOMPUTE_FULL);
    double best = 0;
    int64_t stages[2] = {0, l->pp - 1};
    for (int i = 0; i < 2; i++) {
        plc_stage_params sp;
        double state = stage_state(job, l, stages[i], &sp);
        /* at the stage's first backward every forward before it still holds
         * its layers' inputs (plc_sched_inflight: in micro-batches of the
         * whole stage) */
        double held = plc_sched_inflight(l->schedule, l->pp, l->vpp, m->layers, micro, stages[i]) *
                      (double)sp.layers * act;
        if (state + held > best) best = state + held;
    }
    return best + plc_runtime_fixed_bytes(job, l); /* comm buffers, workspace, reserve */
}

const char *plc_mem_component_name(plc_mem_component c)
{
    static const char *const names[] = {"weights", "grads", "optimizer", "activations", "logits",
                                         "temporaries", "comm", "workspace", "reserved"};
    return (unsigned)c < PLC_MEM_COUNT ? names[c] : "?";
}
