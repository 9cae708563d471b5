/* time_model.c: one training step's time; see solver.h, docs/solver.md. */
#include <math.h>

#include "compiler/solver/solver_int.h"


/* Attention kernels. Tiled (flash) kernels run the score matmuls from on-chip
 * memory at the catalog's attention_efficiency (FlashAttention-2's forward +
 * backward share of peak on that GPU; v1 at a share of it: the
 * FlashAttention-2 paper measures v1 at 25-40% of A100 peak where v2 reaches
 * 50-73%), skip the masked half, and recompute the scores in the backward
 * (2.5x the forward FLOPs). The materialising kernels run two batched GEMMs
 * with the head dimension as inner size, over the full square, and move
 * every score element through HBM: bytes per element over forward and
 * backward. */
typedef struct attention_kernel {
    bool tiled;
    double tiled_share; /* of the catalog's attention_efficiency (FlashAttention-2) */
    double score_bytes; /* HBM traffic per score element, forward + backward, bf16 */
    int kernels_f;      /* launches per layer forward for the attention core */
} attention_kernel;

static const attention_kernel kernels[PLC_ATTN_COUNT] = {
    [PLC_ATTN_NAIVE] = {false, 0.0, 70.0, 7}, /* bmm, scale, mask, fp32 softmax, casts, bmm */
    [PLC_ATTN_FUSED] = {false, 0.0, 16.0, 3}, /* bmm, fused scale-mask-softmax, bmm */
    [PLC_ATTN_FLASH1] = {true, 0.59, 0.0, 1}, /* 0.50 / 0.85 of v2 (the previous calibration's ratio) */
    [PLC_ATTN_FLASH2] = {true, 1.0, 0.0, 1},
};

/* HBM bytes per element of the element-wise work, forward + backward:
 * fused RMSNorm reads x, writes y, and in the backward reads x and dy and
 * writes dx; the unfused one runs six kernels each way on an fp32 copy */
#define NORM_FUSED_BYTES_PER_ACT 5.0
#define NORM_UNFUSED_BYTES 108.0
/* bias + GELU, forward + backward: reads x, writes y; reads x and dy,
 * writes dx (the bias gradient's column sum reads dx again) */
#define GELU_BIAS_BYTES_PER_ACT 6.0
/* cross-entropy over the logits, forward + backward: logits out, fp32 upcast,
 * max, exp-sum, gradient, cast */
#define XENT_BYTES 24.0
/* fp8: each GEMM operand is cast (and its amax taken) before the GEMM: read
 * bf16, write fp8, per element, for the forward input and the backward's
 * output gradient */
#define FP8_CAST_BYTES 3.0

double plc_peak_flops(const plc_job *job)
{
    const plc_hw *hw = &job->cluster.hw;
    /* fp8 runs are measured against the bf16 peak: one scale for both */
    return job->train.precision == PLC_PREC_FP32 ? hw->flops_fp32 : hw->flops_bf16;
}

double plc_attention_efficiency(const plc_hw *hw, plc_attention a)
{
    return plc_share_or_one(hw->framework_eff) * plc_share_or_one(hw->attn_eff) * kernels[a].tiled_share;
}


/* an MoE layer's figures beyond a dense one (moe_model.c), averaged over
 * the layers by the MoE layers' share; nothing for a dense model */
static void moe_layer_times(const plc_job *job, const plc_layout *l, plc_layer_times *o)
{
    double share = plc_moe_layer_share(&job->model);
    if (share <= 0) return;
    plc_moe_times mt;
    plc_moe_layer_times(job, l, &mt);
    o->matmul_f += share * mt.matmul_f;
    o->matmul_b += share * mt.matmul_b;
    o->mem_f += share * mt.mem_f;
    o->mem_b += share * mt.mem_b;
    o->launch_f += share * mt.launch_f;
    o->launch_b += share * mt.launch_b;
    o->ep_f = share * mt.ep_f;
    o->ep_b = share * mt.ep_b;
}

void plc_layer_times_of(const plc_job *job, const plc_layout *l, plc_layer_times *o)
{
    const plc_model *m = &job->model;
    const plc_hw *hw = &job->cluster.hw;
    plc_precision p = job->train.precision;
    double a = plc_dtype_bytes_of(job).act;
    int64_t tp = l->tp;
    int64_t T = l->micro_batch * m->seq_len / l->cp; /* tokens per micro-batch per rank */
    int64_t h = m->hidden, f = m->ffn_hidden, hd = plc_head_dim(m);
    int64_t q = m->heads * hd, kv = m->kv_heads * hd;
    int64_t heads = m->heads / tp;
    double spd = (l->sp && tp > 1) ? (double)tp : 1.0;
    const attention_kernel *ak = &kernels[l->attention];
    *o = (plc_layer_times){0};

    bool gpt = m->arch == PLC_ARCH_GPT;
    /* linear layers: qkv, wo, gate+up (fc in GPT), down (proj); backward =
     * data and weight gradients, charged at the forward shape's efficiency */
    int64_t mlp_in = gpt ? f : 2 * f;
    plc_gemm_shape gemms[PLC_LAYER_GEMMS];
    plc_layer_gemms(job, l, gemms);
    o->matmul_f = 0;
    for (int i = 0; i < PLC_LAYER_GEMMS; i++) o->matmul_f += plc_cost_matmul(hw, p, gemms[i].M, gemms[i].N, gemms[i].K);
    o->matmul_b = 2.0 * o->matmul_f;

    /* attention core */
    double seqs = (double)l->micro_batch; /* sequences per micro-batch */
    double sq = (double)(m->seq_len / l->cp), skv = (double)m->seq_len;
    double attn_mem_f = 0, attn_mem_b = 0;
    if (ak->tiled) {
        double flops = 4.0 * sq * (skv + 1.0) / 2.0 * (double)(heads * hd) * seqs;
        /* the attention core stays in bf16 under fp8 (Transformer Engine's recipe) */
        plc_precision ap = p == PLC_PREC_FP8 ? PLC_PREC_BF16 : p;
        o->attn_f = flops / (plc_gemm_peak(hw, ap) * plc_attention_efficiency(hw, l->attention));
        o->attn_b = 2.5 * o->attn_f;
    } else {
        /* two batched GEMMs per head: (sq x hd) x (hd x skv) and (sq x skv) x (skv x hd) */
        plc_precision ap = p == PLC_PREC_FP8 ? PLC_PREC_BF16 : p;
        double one = plc_cost_matmul(hw, ap, (int64_t)sq, (int64_t)skv, hd) +
                     plc_cost_matmul(hw, ap, (int64_t)sq, hd, (int64_t)skv);
        o->attn_f = one * (double)heads * seqs;
        o->attn_b = 2.0 * o->attn_f;
        double elems = sq * skv * (double)heads * seqs;
        double bytes = elems * ak->score_bytes * (a / 2.0);
        attn_mem_f = bytes / 3.0;
        attn_mem_b = bytes * 2.0 / 3.0;
    }

    /* element-wise work, bytes per token */
    double norm = gpt || l->fused_rmsnorm ? NORM_FUSED_BYTES_PER_ACT * a : NORM_UNFUSED_BYTES * (a / 2.0);
    double norms = 2.0 * norm * (double)h / spd;
    /* qk-norm (Qwen3): the same norm over each head's q and k */
    double qk_norm = m->qk_norm ? norm * (double)(q + kv) / (double)tp : 0.0;
    double rope = m->positions == PLC_POS_ROPE ? 4.0 * (double)(q + kv) / (double)tp * a : 0.0; /* read + write, both passes */
    double mlp_act = gpt ? GELU_BIAS_BYTES_PER_ACT * (double)f / (double)tp * a
                         : 9.0 * (double)f / (double)tp * a;        /* silu(g) * u and its gradient */
    /* the other biases: added in place forward, a column sum backward */
    double biases = gpt ? 3.0 * ((double)(q + 2 * kv) / (double)tp + 2.0 * (double)h / spd) * a : 0.0;
    double residual = 2.0 * 5.0 * (double)h * a / spd;              /* two adds, forward and gradient */
    /* fp8 casts of the four GEMMs' inputs (forward) and output gradients
     * (backward) */
    double casts = p == PLC_PREC_FP8 ? FP8_CAST_BYTES * ((double)(2 * h) / spd + (double)(q + f) / (double)tp +
                                                         (double)(q + 2 * kv + mlp_in) / (double)tp + 2.0 * (double)h / spd)
                                     : 0.0;
    double per_token = norms + qk_norm + rope + mlp_act + biases + residual + casts;
    double elementwise = plc_cost_memory_bound(hw, (double)T * per_token);
    o->mem_f = elementwise / 3.0 + plc_cost_memory_bound(hw, attn_mem_f);
    o->mem_b = elementwise * 2.0 / 3.0 + plc_cost_memory_bound(hw, attn_mem_b);

    /* tensor parallelism: two all-reduces (or all-gather + reduce-scatter
     * pairs with sequence parallelism) each way, on the critical path */
    if (tp > 1) {
        plc_layout_groups g;
        plc_layout_groups_of(l, job->cluster.gpus_per_node, &g);
        double bytes = (double)T * (double)h * a;
        double one = l->sp ? plc_cost_group(hw, PLC_COLL_ALL_GATHER, bytes, g.tp) +
                                 plc_cost_group(hw, PLC_COLL_REDUCE_SCATTER, bytes, g.tp)
                           : plc_cost_group(hw, PLC_COLL_ALL_REDUCE, bytes, g.tp);
        plc_overlap of = plc_overlap_tp_split(job, l, 2.0 * one, o->matmul_f);
        plc_overlap ob = plc_overlap_tp_split(job, l, 2.0 * one, o->matmul_b);
        o->tp_comm = 2.0 * one;
        o->tp_f = of.charged;
        o->tp_b = ob.charged;
        o->tp_exposed_f = of.exposed;
        o->tp_exposed_b = ob.exposed;
    }
    /* context parallelism: ring exchange of K and V (and their gradients in
     * the backward), overlapped with the attention of the chunk in hand */
    if (l->cp > 1) {
        plc_layout_groups g;
        plc_layout_groups_of(l, job->cluster.gpus_per_node, &g);
        double bytes = (double)T * 2.0 * (double)kv / (double)tp * a;
        bool cross = g.cp.per_node < g.cp.size;
        double ring = (double)(l->cp - 1) * plc_cost_p2p(hw, bytes, cross);
        o->cp_ring_f = ring;
        o->cp_ring_b = 2.0 * ring;
        o->cp_f = fmax(0.0, ring - o->attn_f);
        o->cp_b = fmax(0.0, 2.0 * ring - o->attn_b);
    }

    int kernels_f = (gpt || l->fused_rmsnorm ? 2 : 12) + 4 /* gemms */ +
                    (m->positions == PLC_POS_ROPE ? 2 : 0) /* rope */ + (gpt ? 3 : 2) /* swiglu | bias+gelu, 2 biases */ +
                    2 /* residual */ + ak->kernels_f + (m->qk_norm ? (l->fused_rmsnorm ? 2 : 12) : 0) /* qk-norm */;
    o->launch_f = kernels_f * hw->kernel_launch;
    o->launch_b = 2.0 * o->launch_f;

    moe_layer_times(job, l, o);

    /* whole layers recomputed (full, block, every): their share of the
     * forward, averaged over the stage's layers */
    if (l->recompute == PLC_RECOMPUTE_SELECTIVE && job->engine.selective_ops > 0) {
        /* op-level selective checkpointing (torchtitan): the linears whose
         * output it does not save, the element-wise forward, and the
         * tensor-parallel collectives it does not save (with sp the
         * all-gathers, half of the forward's; without it the all-reduces);
         * attention's output is saved */
        plc_gemm_shape b[PLC_BLOCK_LINEARS_MAX];
        int n = plc_block_linears(job, l, b);
        for (int i = 0; i < n; i++)
            if (!plc_op_sac_saves(i)) o->recompute += plc_cost_matmul(hw, p, b[i].M, b[i].N, b[i].K);
        o->recompute += elementwise / 3.0 + (l->sp ? 0.5 : 1.0) * o->tp_f +
                        (double)(kernels_f - ak->kernels_f) * hw->kernel_launch;
    } else if (l->recompute == PLC_RECOMPUTE_SELECTIVE) {
        /* an engine with tiled attention keeps its few statistics and skips
         * the recompute; plrun's plan recomputes the attention core in the
         * backward whatever the kernel (lower_layer.c) */
        if (!ak->tiled || job->train.engine == PLC_ENGINE_PLRUN)
            o->recompute = o->attn_f + plc_cost_memory_bound(hw, attn_mem_f);
    } else {
        o->recompute = plc_recompute_share(m, l) * (o->matmul_f + o->attn_f + o->mem_f + o->tp_f + o->cp_f + o->launch_f +
                                                     o->ep_f);
    }
}

/* embedding (first stage) and head with loss (last stage), per micro-batch,
 * forward + backward; *gather: the part of *last that is the all-gather of
 * the logits (gathered_logits), 0 without it */
static void ends_times(const plc_job *job, const plc_layout *l, double *first, double *last, double *gather)
{
    const plc_model *m = &job->model;
    const plc_hw *hw = &job->cluster.hw;
    double a = plc_dtype_bytes_of(job).act;
    int64_t T = l->micro_batch * m->seq_len / l->cp;
    double emb_bytes = (double)T * (double)m->hidden * (a + 4.0 + a); /* gather; scatter-add of grads */
    if (m->positions == PLC_POS_LEARNED) emb_bytes *= 2.0; /* the position table alike: add; column sums */
    *first = plc_cost_memory_bound(hw, emb_bytes);
    int64_t Vl = plc_vocab_local(m->vocab, l->tp); /* padded: the padding columns cost their share */
    plc_precision hp = job->train.precision == PLC_PREC_FP8 ? PLC_PREC_BF16 : job->train.precision; /* head in bf16 under fp8 */
    double head = 3.0 * plc_cost_matmul(hw, hp, T, Vl, m->hidden);
    double Vloss = (double)plc_loss_vocab(job, l); /* the shard, or all of it (gathered_logits) */
    double xent = plc_cost_memory_bound(hw, (double)T * Vloss * XENT_BYTES);
    *gather = 0;
    if (l->tp == 1) {
        *last = head + xent;
        return;
    }
    plc_layout_groups g;
    plc_layout_groups_of(l, job->cluster.gpus_per_node, &g);
    if (job->engine.gathered_logits > 0) {
        /* the head's output all-gathered over the tp group and concatenated
         * (a copy of the whole), its gradient split back to the rank's
         * slice (a copy, no communication), and the loss over the whole
         * padded vocabulary on every rank: tp times the shard's work */
        *gather = plc_cost_group(hw, PLC_COLL_ALL_GATHER, (double)T * Vloss * a, g.tp);
        double copies = plc_cost_memory_bound(hw, (double)T * (2.0 * Vloss + 2.0 * (double)Vl) * a);
        *last = head + *gather + copies + xent;
        return;
    }
    /* vocab-parallel loss on the shard: max and sum all-reduces, tiny */
    *last = head + xent +
            3.0 * plc_cost_group(hw, PLC_COLL_ALL_REDUCE, (double)T * 4.0, g.tp);
}

/* The busiest stage per micro-batch (P->layers, P->busiest, P->ends) from
 * one layer's times and the ends' (P->tf, P->tb, P->first, P->last). */
static void busiest_stage_of(const plc_model *m, const plc_layout *l, plc_step_parts *P)
{
    const double first = P->first, last = P->last;
    double layer_mb = P->tf + P->tb;
    /* the busiest stage per micro-batch: with equal stages the last (head
     * and loss) or the first (embedding); with unequal ones
     * (plc_rank_layers) the most of its layers' work and its ends, over
     * the first, a middle and the last rank (the middle ones are alike) */
    int64_t layers, busiest;
    double ends;
    if (!plc_ranks_uneven(m->layers, l->pp, l->vpp)) {
        layers = m->layers / l->pp;
        ends = l->pp == 1 ? first + last : fmax(first, last);
        busiest = last >= first ? l->pp - 1 : 0;
    } else {
        busiest = l->pp - 1;
        layers = plc_rank_layers(m->layers, l->pp, l->vpp, busiest);
        ends = last;
        int64_t others[2] = {l->pp > 2 ? 1 : 0, 0};
        for (int i = 0; i < 2; i++) {
            int64_t s = others[i], n = plc_rank_layers(m->layers, l->pp, l->vpp, s);
            double e = s == 0 ? first : 0.0;
            if ((double)n * layer_mb + e > (double)layers * layer_mb + ends) { busiest = s; layers = n; ends = e; }
        }
    }
    P->layers = layers;
    P->busiest = busiest;
    P->ends = ends;
}

/* One pipeline message between neighbouring stages (0 without a pipeline). */
static double pp_message_of(const plc_job *job, const plc_layout *l, const plc_layout_groups *gp, plc_dtype_bytes d)
{
    const plc_model *m = &job->model;
    const plc_hw *hw = &job->cluster.hw;
    const plc_layout_groups g = *gp;
    double msg = 0;
    if (l->pp > 1) {
        double spd = (l->sp && l->tp > 1) ? (double)l->tp : 1.0;
        double bytes = (double)(l->micro_batch * m->seq_len / l->cp) * (double)m->hidden * d.act / spd;
        bool ring = l->schedule == PLC_SCHED_MODULAR || l->schedule == PLC_SCHED_INTERLEAVED;
        double nodes = (double)g.pp.size / (double)g.pp.per_node; /* nodes the pp group spans */
        double hops = ring ? (double)l->pp : (double)(l->pp - 1);
        double cross = nodes <= 1.0 ? 0.0 : (ring ? nodes : nodes - 1.0) / hops;
        /* Megatron-LM's scatter/gather (engine figure p2p_scatter_gather;
         * without sp, whose message is the sequence shard already): each
         * tp rank sends 1/tp of the message over its own link and the
         * receiving stage all-gathers the pieces over the tp group */
        bool split = job->engine.p2p_scatter_gather > 0 && l->tp > 1 && !l->sp;
        double sent = split ? bytes / (double)l->tp : bytes;
        msg = cross * plc_cost_p2p(hw, sent, true) + (1.0 - cross) * plc_cost_p2p(hw, sent, false) +
              (split ? plc_cost_group(hw, PLC_COLL_ALL_GATHER, bytes, g.tp) : 0.0);
    }
    return msg;
}

/* The pipeline's idle time (P->bubble) and the messages' exposed share
 * (P->pp_exposed, P->pp; P->makespan for the layer-major schedules), from
 * the figures already in P; *gathers_exposed, the ZeRO-3 gathers' exposed
 * time, is replaced by the layer-major makespan's share where it applies. */
static void pipeline_bubble_of(const plc_job *job, const plc_layout *l, plc_step_parts *P, double *gathers_io)
{
    const plc_model *m = &job->model;
    const int64_t micro = P->micro, layers = P->layers;
    const double tf = P->tf, tb = P->tb, first = P->first, last = P->last, msg = P->msg;
    const double layer_gather = P->layer_gather, busy = P->busy, layer_mb = tf + tb;
    const bool layer_major = P->layer_major;
    double gathers_exposed = *gathers_io;
    double bubble = 0, pp_exposed = 0;
    if (l->pp > 1 && layer_major) {
        /* breadth-first schedules: the step's makespan from the schedule's
         * own order (fill, the wait at the turn from forward to backward
         * behind the head and loss, rounds that wait for the ring when
         * messages outlast the slack), without and with the messages and
         * the ZeRO-3 gathers (spread over the layer's micro-batches: a
         * gather while the rank waits for its input costs nothing) */
        double mk0 = plc_sched_layer_major_makespan(l->schedule, l->pp, m->layers, micro, tf, tb, first, last, 0);
        double mk1 = plc_sched_layer_major_makespan(l->schedule, l->pp, m->layers, micro, tf, tb, first, last, msg);
        double mk2 = layer_gather > 0 ? plc_sched_layer_major_makespan(l->schedule, l->pp, m->layers, micro,
                                                                       tf + layer_gather / (double)micro,
                                                                       tb + layer_gather / (double)micro,
                                                                       first, last, msg)
                                      : mk1;
        bubble = fmax(0.0, mk0 - busy);
        pp_exposed = fmax(0.0, mk1 - mk0);
        gathers_exposed = fmax(0.0, mk2 - mk1);
        P->makespan = mk2;
    }
    if (l->pp > 1 && !layer_major) {
        /* depth-first schedules: the closed forms' idle share of a balanced
         * pipeline (stage imbalance is in the busiest stage's work: the
         * ends term of the components below), and every message a unit
         * receives waited for. The balanced pipeline's stage is the mean
         * one, layers / pp layers and the ends shared; with unequal stages
         * (plc_stage_layers) this is an approximation: a GPipe or 1F1B
         * pipeline of stage times t_s idles sum(t_s) - max(t_s) on its
         * busiest stage, which the form charges as (pp - 1) mean(t_s),
         * max(t_s) - mean(t_s) more, as with equal stages whose ends differ
         * (docs/solver.md); the interleaved form likewise charges its
         * (pp - 1) / (micro vpp) on the mean rank where the virtual stages
         * are unequal (plc_rank_layers) */
        double ratio = tf > 0 ? tb / tf : 2.0;
        double bubble_ratio = plc_sched_bubble_ratio(l->schedule, l->pp, l->vpp, m->layers, micro,
                                                     round(ratio * 2.0) / 2.0);
        double balanced_mb = (double)m->layers / (double)l->pp * layer_mb + (first + last) / (double)l->pp;
        /* ZeRO 3's gathers run on the compute stream inside the units, so
         * the fill and drain wait for them too (the simulated timeline,
         * plc trace SPEC, shows them there) */
        double unit_stalls = l->zero >= 3 ? gathers_exposed : 0.0;
        bubble = bubble_ratio * ((double)micro * balanced_mb + unit_stalls);
        P->pp = plc_overlap_p2p_split(job, l, 2.0 * (double)micro * (double)l->vpp, msg,
                                      (double)layers / (double)l->vpp * tf);
        pp_exposed = P->pp.charged;
    }
    P->bubble = bubble;
    P->pp_exposed = pp_exposed;
    *gathers_io = gathers_exposed;
}

/* Data-parallel gradient reduction, the ZeRO gathers and the optimizer
 * (P->dp, P->dp_exposed, P->zero_gather, P->zero_exposed, P->optimizer). */
static void dp_and_optimizer_of(const plc_job *job, const plc_layout *l, const plc_layout_groups *gp, plc_dtype_bytes d,
                                double layer_params, double gathers_exposed, plc_step_parts *P)
{
    const plc_model *m = &job->model;
    const plc_hw *hw = &job->cluster.hw;
    const plc_layout_groups g = *gp;
    const int64_t micro = P->micro, layers = P->layers;
    const double tf = P->tf, tb = P->tb;
    const bool layer_major = P->layer_major;
    /* data-parallel gradient reduction and ZeRO gathers over data x
     * context, as plc's lowering issues them: one collective per parameter
     * tensor (so each pays its latency), reductions on the communication
     * stream behind the backward, ZeRO 1 and 2 gathers of the updated
     * weights after the optimizer, ZeRO 3 gathers of a layer's weights on
     * the compute stream whenever a stage enters the layer. */
    double params = 0, tensors = 0;
    /* the ends, and a middle stage (which holds the fewest unless the
     * ranks' layers are unequal: plc_rank_layers) */
    int64_t ends_stages[3] = {0, l->pp - 1, l->pp > 2 && plc_ranks_uneven(m->layers, l->pp, l->vpp) ? 1 : 0};
    for (int i = 0; i < 3; i++) {
        plc_stage_params sp;
        plc_stage_params_of(m, l->tp, l->pp, l->vpp, ends_stages[i], &sp);
        double p = plc_stage_params_total(&sp);
        if (p > params) { params = p; tensors = (double)plc_stage_tensors(m, l->pp, &sp); }
    }
    bool lga = layer_major;
    bool per_mb = l->zero >= 2 && !lga; /* ZeRO 2, 3: each run of backwards of a layer reduced */
    P->dp_per_mb = per_mb;
    double dp_exposed = 0, zero_exposed = 0, zeroing;
    if (g.dpcp.size > 1) {
        /* ZeRO 0 all-reduces the gradients, the others reduce-scatter them,
         * unless the engine all-reduces under ZeRO 1 and 2 too
         * (dp_allreduce_always); on the wire in dp_reduce_bytes per element
         * where the engine casts them for the reduction, else grad_bytes */
        bool all = l->zero == 0 || (l->zero <= 2 && job->engine.dp_allreduce_always > 0);
        P->dp_all_reduce = all;
        double wire = job->engine.dp_reduce_bytes > 0 ? job->engine.dp_reduce_bytes : d.grad;
        double grads = params * wire, weights = params * d.weight;
        plc_collective_kind red = all ? PLC_COLL_ALL_REDUCE : PLC_COLL_REDUCE_SCATTER;
        /* ZeRO 0 reduces one bucket per layer, the others one tensor at a
         * time, unless the engine buckets them (flush reductions only) */
        double pieces = l->zero == 0 ? (double)layers + 1.0 : tensors;
        if (!per_mb) pieces = plc_dp_collectives(job, params, pieces);
        P->dp_pieces = (per_mb ? (double)micro : 1.0) * pieces;
        double dp_comm = (per_mb ? (double)micro : 1.0) * pieces * plc_cost_group(hw, red, grads / pieces, g.dpcp);
        /* a layer's reduction starts once its gradients are final: during
         * the last micro-batch's backward (flush schedules), every
         * micro-batch's (per-micro-batch reductions), or the whole
         * layer-major backward (LGA). The first layer's come last: nothing
         * hides its reduction. */
        double bwd_mb = (double)layers * tb;
        double window = (lga || per_mb) ? (double)micro * bwd_mb : bwd_mb;
        P->dp = plc_overlap_grad_reduce_split(job, dp_comm, dp_comm / (double)layers, window);
        dp_exposed = P->dp.charged;
        if (l->zero == 1 || l->zero == 2) {
            P->zero_gather = plc_overlap_param_gather_split(
                job, pieces * plc_cost_group(hw, PLC_COLL_ALL_GATHER, weights / pieces, g.dpcp), layers,
                (double)layers * tf);
            zero_exposed = P->zero_gather.charged;
        }
        if (l->zero == 3) zero_exposed = gathers_exposed;
    }
    P->dp_exposed = dp_exposed;
    P->zero_exposed = zero_exposed;
    /* gradient buffers zeroed for the step (ZeRO 2, 3: a layer's block for
     * each run of backwards) */
    double zeroed = l->zero >= 2 ? (per_mb ? (double)micro : 1.0) * layer_params * (double)layers : params;
    zeroing = plc_cost_memory_bound(hw, zeroed * d.grad);

    /* optimizer: AdamW over the rank's shard, memory-bound */
    double shard = l->zero >= 1 ? (double)g.dpcp.size : 1.0;
    double opt_bytes = params / shard * (d.grad + (d.optimizer + d.weight) * 2.0);
    P->optimizer = plc_cost_memory_bound(hw, opt_bytes) + zeroing;
}

void plc_step_parts_of(const plc_job *job, const plc_layout *l, plc_step_parts *out)
{
    const plc_model *m = &job->model;
    const plc_hw *hw = &job->cluster.hw;
    plc_dtype_bytes d = plc_dtype_bytes_of(job);
    plc_step_parts *P = out;
    *P = (plc_step_parts){0};
    plc_layer_times_of(job, l, &P->lt);
    const plc_layer_times lt = P->lt;
    int64_t micro = job->train.global_batch / l->dp / l->micro_batch;
    P->micro = micro;
    double first, last;
    ends_times(job, l, &first, &last, &P->logits_gather);
    P->first = first;
    P->last = last;

    double tf = lt.matmul_f + lt.attn_f + lt.mem_f + lt.tp_f + lt.cp_f + lt.launch_f + lt.ep_f;
    double tb = lt.matmul_b + lt.attn_b + lt.mem_b + lt.tp_b + lt.cp_b + lt.launch_b + lt.recompute + lt.ep_b;
    P->tf = tf;
    P->tb = tb;
    double layer_mb = tf + tb;
    busiest_stage_of(m, l, P);
    const int64_t layers = P->layers;

    plc_layout_groups g;
    plc_layout_groups_of(l, job->cluster.gpus_per_node, &g);

    /* pipeline send/recv of activations (forward) and their gradients
     * (backward): the mean cost of a hop between neighbouring ranks, which
     * crosses a node boundary only between the last stage on a node and
     * the first on the next (and, for the schedules whose chunks wrap
     * around from the last rank to the first, on the way back) */
    bool layer_major = l->schedule == PLC_SCHED_LAYERED || l->schedule == PLC_SCHED_MODULAR;
    P->layer_major = layer_major;
    double msg = pp_message_of(job, l, &g, d);
    P->msg = msg;
    /* ZeRO 3: plc's lowering gathers a layer's weights (one collective per
     * tensor) on the compute stream whenever the stage enters the layer:
     * for every micro-batch each way with depth-first schedules, once per
     * step each way with layer-major ones (LGA) */
    double layer_params = (double)plc_params_layer(m) / (double)l->tp;
    double layer_gather = 0;
    if (l->zero >= 3 && g.dpcp.size > 1)
        layer_gather = (double)plc_layer_tensors(m) *
                       plc_cost_group(hw, PLC_COLL_ALL_GATHER, layer_params * d.weight / (double)plc_layer_tensors(m), g.dpcp);
    P->layer_gather = layer_gather;
    double busy = (double)micro * ((double)layers * layer_mb + P->ends); /* the busiest rank's work */
    P->busy = busy;
    double entries = (layer_major ? 2.0 : 2.0 * (double)micro) * (double)layers;
    P->gathers_f = plc_overlap_layer_gathers_split(job, layer_gather, entries / 2.0, layers, tf);
    P->gathers_b = plc_overlap_layer_gathers_split(job, layer_gather, entries / 2.0, layers, tb);
    double gathers_exposed = P->gathers_f.charged + P->gathers_b.charged;
    pipeline_bubble_of(job, l, P, &gathers_exposed);

    dp_and_optimizer_of(job, l, &g, d, layer_params, gathers_exposed, P);
}

/* Synchronisation and stragglers (docs/solver.md, "Losses of large runs"):
 * every step ends in a collective over all the nodes (the gradient
 * reduction, the pipeline's flush), so it lasts as long as the slowest
 * node's step. With node step times spread around their mean by a
 * coefficient of variation cv (catalog figure straggler_cv: clocks under
 * power and thermal limits, OS and network jitter), the expected maximum
 * over n nodes exceeds the mean by about cv sqrt(2 ln n) of it (the
 * extreme-value bound of n normal samples). The loss grows with the nodes
 * a layout spans, nothing on one node. */
double plc_sync_loss(const plc_job *job, const plc_layout *l, double step)
{
    double cv = job->cluster.hw.straggler_cv;
    int64_t gpn = job->cluster.gpus_per_node > 0 ? job->cluster.gpus_per_node : 1;
    int64_t gpus = l->dp * l->tp * l->pp * l->cp;
    double nodes = ceil((double)gpus / (double)gpn);
    if (!(cv > 0) || nodes < 2 || step <= 0) return 0.0;
    return step * cv * sqrt(2.0 * log(nodes));
}

void plc_time_estimate(const plc_job *job, const plc_layout *l, plc_estimate *est)
{
    const plc_model *m = &job->model;
    plc_step_parts P;
    plc_step_parts_of(job, l, &P);
    const plc_layer_times lt = P.lt;
    int64_t micro = P.micro, layers = P.layers;

    double *t = est->time;
    for (int k = 0; k < PLC_TIME_COUNT; k++) t[k] = 0;
    double per_mb_layers = (double)micro * (double)layers;
    double recompute_compute = 0, recompute_mem = 0;
    double whole = plc_recompute_share(m, l); /* share of layers recomputed whole */
    if (l->recompute == PLC_RECOMPUTE_SELECTIVE) {
        recompute_compute = lt.recompute;
    } else {
        recompute_compute = whole * (lt.matmul_f + lt.attn_f);
        recompute_mem = whole * lt.mem_f;
    }
    t[PLC_TIME_COMPUTE] = per_mb_layers * (lt.matmul_f + lt.matmul_b + lt.attn_f + lt.attn_b + recompute_compute);
    t[PLC_TIME_MEMORY] = per_mb_layers * (lt.mem_f + lt.mem_b + recompute_mem) + P.optimizer;
    t[PLC_TIME_COMM_TP] = per_mb_layers * (lt.tp_f + lt.tp_b + whole * lt.tp_f);
    t[PLC_TIME_COMM_CP] = per_mb_layers * (lt.cp_f + lt.cp_b + whole * lt.cp_f);
    t[PLC_TIME_OVERHEAD] = per_mb_layers * (lt.launch_f + lt.launch_b + whole * lt.launch_f);
    t[PLC_TIME_COMM_EP] = per_mb_layers * (lt.ep_f + lt.ep_b + whole * lt.ep_f);
    /* embedding and head work of the busiest stage counts as compute, the
     * logits' all-gather (gathered_logits) as tp communication where the
     * head's stage is the busiest */
    double logits_gather = P.busiest == l->pp - 1 ? P.logits_gather : 0.0;
    t[PLC_TIME_COMPUTE] += (double)micro * (P.ends - logits_gather);
    t[PLC_TIME_COMM_TP] += (double)micro * logits_gather;
    t[PLC_TIME_COMM_PP] = P.pp_exposed;
    t[PLC_TIME_COMM_DP] = P.dp_exposed;
    t[PLC_TIME_COMM_ZERO] = P.zero_exposed;
    t[PLC_TIME_BUBBLE] = P.bubble;

    double step = 0;
    for (int k = 0; k < PLC_TIME_COUNT; k++) step += t[k];
    /* the wait for the slowest node, counted as overhead */
    double sync = plc_sync_loss(job, l, step);
    t[PLC_TIME_OVERHEAD] += sync;
    step += sync;
    est->step_time_s = step;
    est->micro_batches = micro;
    est->bubble_fraction = step > 0 ? P.bubble / step : 0;
    double tokens = (double)job->train.global_batch * (double)m->seq_len;
    est->tokens_per_s = step > 0 ? tokens / step : 0;
    est->model_flops = tokens * plc_flops_per_token_palm(m);
    double gpus = (double)(l->dp * l->tp * l->pp * l->cp);
    est->mfu = step > 0 ? est->model_flops / step / (gpus * plc_peak_flops(job)) : 0;
}

const char *plc_time_component_name(plc_time_component c)
{
    static const char *const names[] = {"compute", "memory-bound", "tp-comm", "cp-comm", "pp-comm",
                                        "dp-comm", "zero-gather", "bubble", "overhead", "ep-comm"};
    return (unsigned)c < PLC_TIME_COUNT ? names[c] : "?";
}
