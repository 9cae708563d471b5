/* moe_model.c: what a mixture-of-experts layer adds to the solver's memory
 * and time models (issue 35; docs/solver.md, "Mixture of experts").
 *
 * A dense model never reaches this file's figures: every function returns
 * zeros when model.moe.experts is 0, so a dense model's estimates are the
 * dense accounting unchanged. For a model with experts:
 *
 * - Parameters of a rank of a stage split in two. The routed experts of
 *   its MoE layers, each rank holding experts / ep of them, each sharded
 *   1 / etp, and their ZeRO shards over the expert-data-parallel group
 *   (edp = dp * tp * cp / (ep * etp): Megatron-Core's distributed optimizer
 *   over the expert grid, FSDP2's dp_shard over what ep leaves). And the
 *   rest (attention, norms, router, shared experts, dense FFNs), sharded
 *   over tp and ZeRO'd over dp * cp as a dense layer's. The rest is counted
 *   here from the dense model's stage accounting (plc_stage_params_of of
 *   the model without experts) less the dense FFNs the MoE layers replace,
 *   plus their router and shared experts, so it does not depend on how the
 *   model math counts an MoE layer.
 * - Activations: the router's fp32 scores and top-k choice, the dispatch
 *   buffers (top-k copies of each token: its permuted input, the experts'
 *   SwiGLU or GELU activations, their output before the combine), the
 *   shared experts', in place of the dense FFN's. Rows per rank: with a
 *   capacity factor c, c x the fair share (the capacity: what the engine
 *   allocates and drops beyond); dropless, the fair share (top-k copies of
 *   its tokens; x etp, an etp group's ranks each taking the rows of all its
 *   members): a rank holds many layers' buffers, and which rank is busiest
 *   changes from layer to layer, so its sum is the mean's. The time of a
 *   layer is the busiest rank's (the combine waits for it): dropless over
 *   ep > 1 its experts take the fair share x PLC_MOE_IMBALANCE, a stated
 *   factor (not fitted).
 * - Time, per MoE layer and micro-batch: the router GEMM, the experts'
 *   GEMMs at the shape model's efficiency for one expert's rows (a grouped
 *   GEMM runs each expert's tiles at that shape; without moe_grouped_gemm
 *   one launch per expert too), the shared experts, the permutation and
 *   un-permutation (memory-bound), and the dispatch and combine over the ep
 *   group (plc_cost_all_to_all: intra- and inter-node parts from where the
 *   group's members lie) and, with etp, the rows' all-gather and the
 *   outputs' reduce-scatter over the etp group, each way, with the engine's dispatcher
 *   (moe_dispatcher) and the share its overlap hides (moe_comm_overlap).
 *   The time model charges them per layer averaged over the model's layers
 *   (the share of MoE layers), as it charges every per-layer cost.
 */
#include <math.h>
#include <string.h>

#include "compiler/solver/solver_int.h"

/* dropless routing: the busiest expert's rows over the fair share */
#define PLC_MOE_IMBALANCE 1.2

static bool gpt(const plc_model *m) { return m->arch == PLC_ARCH_GPT; }

bool plc_moe_layer(const plc_model *m, int64_t layer)
{
    const plc_moe *e = &m->moe;
    if (e->experts <= 0 || layer < e->dense_layers) return false;
    int64_t every = e->moe_every > 0 ? e->moe_every : 1;
    return (layer - e->dense_layers) % every == 0;
}

int64_t plc_moe_layers_in(const plc_model *m, int64_t first, int64_t n)
{
    const plc_moe *e = &m->moe;
    if (e->experts <= 0 || n <= 0) return 0;
    int64_t every = e->moe_every > 0 ? e->moe_every : 1, d = e->dense_layers > 0 ? e->dense_layers : 0;
    int64_t lo = first > d ? first : d, hi = first + n - 1; /* MoE layers d, d + every, ... in [lo, hi] */
    if (lo > hi) return 0;
    return (hi - d) / every - (lo - d + every - 1) / every + 1;
}

/* one FFN of width f: gate, up, down (SwiGLU) or fc, proj with fc's bias (GPT) */
static double ffn_params(const plc_model *m, int64_t f)
{
    return gpt(m) ? 2.0 * (double)m->hidden * (double)f + (double)f : 3.0 * (double)m->hidden * (double)f;
}

double plc_moe_routed_params_layer(const plc_model *m)
{
    return m->moe.experts > 0 ? (double)m->moe.experts * ffn_params(m, m->moe.expert_ffn_hidden) : 0.0;
}

/* MoE layers a rank of pipeline stage `stage` holds (its virtual stages) */
static int64_t stage_moe_layers(const plc_model *m, const plc_layout *l, int64_t stage)
{
    int64_t pp = l->pp > 0 ? l->pp : 1, vpp = l->vpp > 0 ? l->vpp : 1, n = 0;
    for (int64_t v = 0; v < vpp; v++) {
        int64_t vs = stage + v * pp;
        n += plc_moe_layers_in(m, plc_stage_first_layer(m->layers, pp * vpp, vs), plc_stage_layers(m->layers, pp * vpp, vs));
    }
    return n;
}

void plc_moe_stage_params(const plc_model *m, const plc_layout *l, int64_t stage, plc_moe_stage *out)
{
    memset(out, 0, sizeof *out);
    if (m->moe.experts <= 0) return;
    plc_model dense = *m;
    memset(&dense.moe, 0, sizeof dense.moe);
    plc_stage_params sp;
    plc_stage_params_of(&dense, l->tp, l->pp, l->vpp, stage, &sp);
    int64_t k = stage_moe_layers(m, l, stage);
    double tp = (double)l->tp;
    const plc_moe *e = &m->moe;
    /* per MoE layer, tp-sharded: the shared experts replace the dense FFN;
     * the router (experts x hidden) is replicated */
    double per_layer = (e->shared_experts * ffn_params(m, e->shared_ffn_hidden) - ffn_params(m, m->ffn_hidden)) / tp +
                       (double)e->experts * (double)m->hidden;
    out->moe_layers = k;
    out->dense = plc_stage_params_total(&sp) + (double)k * per_layer;
    out->routed = (double)k * plc_moe_routed_params_layer(m) /
                  (double)(plc_layout_ep(l) * plc_layout_etp(l));
}

/* tokens entering a rank's MoE layer per micro-batch (its sequence-parallel share) */
static double tokens_in(const plc_job *job, const plc_layout *l)
{
    double T = (double)l->micro_batch * (double)job->model.seq_len / (double)l->cp;
    return l->sp && l->tp > 1 ? T / (double)l->tp : T;
}

double plc_moe_rows(const plc_job *job, const plc_layout *l)
{
    const plc_moe *e = &job->model.moe;
    if (e->experts <= 0) return 0.0;
    /* an etp group's ranks each run its experts' 1 / etp on the rows of
     * all its etp ranks' tokens */
    double fair = tokens_in(job, l) * (double)e->top_k * (double)plc_layout_etp(l);
    return e->capacity_factor > 0 ? fair * e->capacity_factor : fair;
}

double plc_moe_act_layer_delta(const plc_job *job, const plc_layout *l)
{
    const plc_model *m = &job->model;
    const plc_moe *e = &m->moe;
    if (e->experts <= 0) return 0.0;
    double a = plc_dtype_bytes_of(job).act;
    double T = (double)l->micro_batch * (double)m->seq_len / (double)l->cp, tp = (double)l->tp;
    double h = (double)m->hidden, swiglu = job->engine.fused_swiglu > 0 ? 3.0 : 4.0;
    double per_ffn = gpt(m) ? 2.0 : swiglu; /* ffn-wide tensors kept per row */
    double rows = plc_moe_rows(job, l);
    /* router: fp32 scores, top-k weights (fp32) and indices (int64) */
    double router = tokens_in(job, l) * ((double)e->experts * 4.0 + (double)e->top_k * 12.0);
    /* dispatched rows: permuted input, expert activations, expert output */
    double experts = rows * (2.0 * h + per_ffn * (double)e->expert_ffn_hidden / (double)plc_layout_etp(l)) * a;
    double shared = T * (double)e->shared_experts * per_ffn * (double)e->shared_ffn_hidden / tp * a;
    double dense_ffn = T * per_ffn * (double)m->ffn_hidden / tp * a;
    return router + experts + shared - dense_ffn;
}

void plc_moe_layer_times(const plc_job *job, const plc_layout *l, plc_moe_times *o)
{
    memset(o, 0, sizeof *o);
    const plc_model *m = &job->model;
    const plc_moe *e = &m->moe;
    if (e->experts <= 0) return;
    const plc_hw *hw = &job->cluster.hw;
    const plc_engine_profile *eng = &job->engine;
    plc_precision p = job->train.precision;
    double a = plc_dtype_bytes_of(job).act;
    int64_t ep = plc_layout_ep(l), etp = plc_layout_etp(l), h = m->hidden;
    double Tin = tokens_in(job, l), rows = plc_moe_rows(job, l);
    /* dropless over ep > 1: the busiest rank's rows gate the combine */
    double busiest = e->capacity_factor <= 0 && ep > 1 ? rows * PLC_MOE_IMBALANCE : rows;
    int64_t local = e->experts / ep;                           /* experts a rank holds */
    int64_t per_expert = (int64_t)ceil(busiest / (double)local); /* rows of each */
    int64_t fe = e->expert_ffn_hidden / etp, up = gpt(m) ? fe : 2 * fe;

    /* the dense FFN's two GEMMs, which the MoE block replaces: plc_layer_gemms'
     * gate and up (fc) and down (proj), T x h into the tp shard and back */
    int64_t T = l->micro_batch * m->seq_len / l->cp, fd = m->ffn_hidden / l->tp;
    double dense = plc_cost_matmul(hw, p, T, gpt(m) ? fd : 2 * fd, h) + plc_cost_matmul(hw, p, T, h, fd);
    /* router: (T x h) x (h x experts) */
    double router = plc_cost_matmul(hw, p, (int64_t)ceil(Tin), e->experts, h);
    double experts = (double)local * (plc_cost_matmul(hw, p, per_expert, up, h) + plc_cost_matmul(hw, p, per_expert, h, fe));
    double shared = 0;
    if (e->shared_experts > 0) {
        int64_t fs = e->shared_experts * e->shared_ffn_hidden / l->tp;
        shared = plc_cost_matmul(hw, p, T, gpt(m) ? fs : 2 * fs, h) + plc_cost_matmul(hw, p, T, h, fs);
    }
    o->matmul_f = router + experts + shared - dense;
    o->matmul_b = 2.0 * (router + experts + shared) - 2.0 * dense;
    /* permute and un-permute (read and write h per row, each way), the
     * experts' activation function on their rows, the weighted sum */
    double bytes = busiest * (double)h * a * 4.0 + busiest * (double)fe * a * (gpt(m) ? 3.0 : 9.0) / 3.0;
    o->mem_f = plc_cost_memory_bound(hw, bytes);
    o->mem_b = 2.0 * o->mem_f;
    int launches = 6 + (eng->moe_grouped_gemm > 0 ? 2 : 2 * (int)local);
    o->launch_f = launches * hw->kernel_launch;
    o->launch_b = 2.0 * o->launch_f;

    /* dispatch and combine over the ep group: the ep ranks lie etp apart
     * (Megatron-Core's expert grid: etp fastest, then ep); then, with etp,
     * the rows all-gathered over the etp group (its consecutive ranks) and
     * the experts' outputs reduce-scattered back */
    double etp_one = 0;
    if (etp > 1) {
        plc_comm_group tg = plc_group_place(etp, 1, job->cluster.gpus_per_node);
        double rows_bytes = rows * (double)h * a;
        etp_one = 0.5 * (plc_cost_collective(hw, PLC_COLL_ALL_GATHER, rows_bytes, etp, tg.per_node) +
                         plc_cost_collective(hw, PLC_COLL_REDUCE_SCATTER, rows_bytes, etp, tg.per_node));
    }
    if (ep > 1 || etp > 1) {
        plc_comm_group grp = plc_group_place(ep, etp * 1, job->cluster.gpus_per_node);
        double tok_bytes = Tin * (double)h * a;
        double one = 0;
        if (ep <= 1) {
            /* no exchange over ep */
        } else if (eng->moe_dispatcher < 0.5) {
            /* all-gather of every rank's tokens, reduce-scatter of the outputs */
            one = 0.5 * (plc_cost_collective(hw, PLC_COLL_ALL_GATHER, tok_bytes * (double)ep, ep, grp.per_node) +
                         plc_cost_collective(hw, PLC_COLL_REDUCE_SCATTER, tok_bytes * (double)ep, ep, grp.per_node));
        } else {
            /* top-k copies a token; flex (DeepEP) sends a token once per
             * node its experts are on, forwarded over NVLink there */
            int64_t nodes = grp.size / (grp.per_node > 0 ? grp.per_node : 1);
            double node_copies = (double)e->top_k;
            if (eng->moe_dispatcher > 1.5) {
                node_copies = fmin((double)e->top_k, (double)nodes);
                if (e->router_groups_top > 0) node_copies = fmin(node_copies, (double)e->router_groups_top);
            }
            /* the busiest rank receives its share x the imbalance */
            double skew = rows > 0 ? busiest / rows : 1.0;
            one = plc_cost_all_to_all(hw, skew * tok_bytes * (double)e->top_k, skew * tok_bytes * node_copies, ep,
                                      grp.per_node);
        }
        one += etp_one;
        /* dispatch + combine forward, their gradients backward */
        double share = eng->moe_comm_overlap > 0 ? eng->moe_comm_overlap : 0.0;
        o->a2a = 2.0 * one;
        o->ep_f = 2.0 * one * (1.0 - share);
        o->ep_b = 2.0 * one * (1.0 - share);
    }
}
