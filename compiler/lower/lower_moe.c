/* lower_moe.c: the feed-forward of a mixture-of-experts layer (model.moe,
 * docs/model.md), forward and backward, as static instructions whose
 * extents are bounds and whose counts travel at run time.
 *
 * Shapes: R rows of the micro-batch (hn2 gathered whole on every tp rank),
 * E experts, k = top_k, Fel = expert_ffn_hidden / tp and Fsl =
 * shared_experts * shared_ffn_hidden / tp columns per tp rank (expert
 * tensor parallelism = tp: each expert's FFN is split like the dense MLP).
 * The router is replicated: every tp rank routes the same tokens the same
 * way. Token copies are permuted into P rows, expert e's block after those
 * of experts < e; P is the bound: R k rows when dropless (no expert takes
 * more than R), min(R k, E C) with a capacity of C = ceil(cf R k / E) rows
 * per expert, copies past it dropped (and counted by plrun).
 *
 *   logits [R,E] = hn2 router            MOE_ROUTE -> scores, expert, pos, weight, counts
 *   xp [P,h] = permute(hn2)              MOE_PERMUTE
 *   g, u [P,Fel] = xp W_gate_e, xp W_up_e                          MOE_MM
 *   s = swiglu(g, u);  y [P,h] = s W_down_e^T                      MOE_MM (transposed)
 *   out [R,h] = sum_j weight_j y[pos_j] (+ the shared experts' MLP)  MOE_UNPERMUTE
 *
 * The backward runs it in reverse; the combine weights' gradient is summed
 * over tp (each rank holds a part of y), and the load-balancing loss
 * enters at MOE_ROUTE_BWD. The router's gradients are whole on every tp
 * rank: without sp its input gradient is added after the tp reduction and
 * its weight gradient is the replicated tensor's; with sp (whose reduction
 * scatters rows, and whose replicated gradients are summed over tp) the
 * logits' gradient is scaled by 1/tp first and both join the partial sums. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>

#include "compiler/lower/lower_int.h"

#define TID(role, l) plc_tensor_id(&c->m, (role), (l))
#define B(...) LW_B(__VA_ARGS__)
#define A(...) LW_A(__VA_ARGS__)
#define COMPUTE PLC_STREAM_COMPUTE

static int say(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int say(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

int plc_lower_model_check(const plc_job *job, char *err, size_t errlen)
{
    const plc_model *m = &job->model;
    const plc_moe *e = &m->moe;
    if (e->experts <= 0) return 0;
    if (m->arch != PLC_ARCH_LLAMA)
        return say(err, errlen, "plrun lowers mixture-of-experts layers in the Llama block only (arch = llama); engine = megatron or fsdp2 runs the rest");
    if (job->train.precision != PLC_PREC_FP32)
        return say(err, errlen, "plrun runs mixture-of-experts layers in fp32 only (precision = fp32); engine = megatron or fsdp2 runs them in bf16");
    if (e->top_k < 1 || e->top_k > e->experts)
        return say(err, errlen, "experts_per_token = %lld must lie in 1 .. experts = %lld", (long long)e->top_k,
                   (long long)e->experts);
    if (e->expert_ffn_hidden <= 0)
        return say(err, errlen, "the experts' FFN width is %lld", (long long)e->expert_ffn_hidden);
    if (e->shared_experts > 0 && e->shared_ffn_hidden <= 0)
        return say(err, errlen, "%lld shared experts of width %lld", (long long)e->shared_experts,
                   (long long)e->shared_ffn_hidden);
    if (e->router_groups > 0)
        return say(err, errlen,
                   "group-limited routing (router_groups = %lld) is modelled but not lowered: plrun has no kernel for it",
                   (long long)e->router_groups);
    if (e->expert_bias)
        return say(err, errlen,
                   "expert-bias balancing is modelled but not lowered: plrun has no update rule for the bias; use aux_loss");
    return 0;
}

int lw_moe_sizes(lw_ctx *c)
{
    const plc_moe *e = &c->m.moe;
    c->E = c->topk = c->Fel = c->Fsl = c->moe_cap = c->moe_rows = 0;
    if (e->experts <= 0) return 0;
    const plc_layout *L = &c->L;
    if (plc_lower_model_check(c->job, c->err, c->errlen)) return -1;
    if (plc_layout_ep(L) > 1)
        return lw_fail(c, "ep = %lld: the lowering runs ep = 1 only (each rank holds every expert); the all-to-all dispatch over ep is not lowered yet",
                     (long long)plc_layout_ep(L));
    if (plc_layout_etp(L) != L->tp)
        return lw_fail(c, "etp = %lld with tp = %lld: the lowering splits each expert's FFN over tp like the dense MLP, so etp must equal tp",
                     (long long)plc_layout_etp(L), (long long)L->tp);
    if (e->expert_ffn_hidden % L->tp)
        return lw_fail(c, "tp = %lld does not divide the experts' FFN width %lld", (long long)L->tp,
                     (long long)e->expert_ffn_hidden);
    int64_t shared = e->shared_experts * e->shared_ffn_hidden;
    if (shared % L->tp)
        return lw_fail(c, "tp = %lld does not divide the shared experts' width %lld", (long long)L->tp, (long long)shared);
    c->E = e->experts;
    c->topk = e->top_k;
    c->Fel = e->expert_ffn_hidden / L->tp;
    c->Fsl = shared / L->tp;
    int64_t routed = c->R * c->topk;
    if (e->capacity_factor > 0) {
        c->moe_cap = (int64_t)ceil(e->capacity_factor * (double)routed / (double)c->E);
        if (c->moe_cap < 1) c->moe_cap = 1;
        if (c->moe_cap > c->R) c->moe_cap = c->R; /* a token sends one copy to an expert at most */
        c->moe_rows = c->E * c->moe_cap < routed ? c->E * c->moe_cap : routed;
    } else {
        c->moe_cap = c->R;
        c->moe_rows = routed;
    }
    return 0;
}

/* per expert: C [P,N] = A [P,K] W_e (+ beta C), W_e [K,N] or, transposed, [N,K] */
static void expert_mm(lw_ctx *c, int32_t C, int32_t Am, int32_t W, int32_t counts, int64_t K, int64_t N, int transw,
                      double beta)
{
    lw_emit(c->P, PLC_OP_MOE_MM, COMPUTE, B(C, Am, W, counts), A(c->E, c->moe_rows, K, N, transw), beta);
}

/* per expert: dW_e [K,N] += A_e^T B_e */
static void expert_dw(lw_ctx *c, int32_t dW, int32_t Am, int32_t Bm, int32_t counts, int64_t K, int64_t N)
{
    lw_emit(c->P, PLC_OP_MOE_MM_DW, COMPUTE, B(dW, Am, Bm, counts), A(c->E, c->moe_rows, K, N), 0.0);
}

int32_t lw_moe_fwd(lw_ctx *c, int64_t l, lw_act *a, bool recompute)
{
    lw_moe_act *e = &a->moe;
    const plc_moe *mo = &c->m.moe;
    int64_t R = c->R, h = c->h, E = c->E, k = c->topk, P = c->moe_rows;
    /* the router */
    int32_t logits = lw_tmp_buf(c, PLC_F32, R, E, "router_logits");
    lw_matmul(c, logits, a->hn2, lw_weight(c, TID(PLC_ROLE_ROUTER, l)), R, E, h, 0, 0, 0.0);
    e->scores = lw_act_buf(c, PLC_F32, R, E, "router_scores");
    e->expert = lw_act_buf(c, PLC_I32, R, k, "expert");
    e->pos = lw_act_buf(c, PLC_I32, R, k, "expert_pos");
    e->weight = lw_act_buf(c, PLC_F32, R, k, "expert_weight");
    e->counts = lw_act_buf(c, PLC_I32, E, 1, "expert_counts");
    lw_emit(c->P, PLC_OP_MOE_ROUTE, COMPUTE, B(e->scores, e->expert, e->pos, e->weight, e->counts, logits),
            A(R, E, k, mo->router == PLC_ROUTER_SIGMOID, c->moe_cap, P, !recompute), mo->route_scale);
    /* the routed experts */
    e->xp = lw_act_buf(c, PLC_F32, P, h, "expert_in");
    lw_emit(c->P, PLC_OP_MOE_PERMUTE, COMPUTE, B(e->xp, a->hn2, e->pos), A(R, h, k, P), 0.0);
    e->g = lw_act_buf(c, PLC_F32, P, c->Fel, "expert_gate");
    e->u = lw_act_buf(c, PLC_F32, P, c->Fel, "expert_up");
    expert_mm(c, e->g, e->xp, lw_weight(c, TID(PLC_ROLE_EXP_GATE, l)), e->counts, h, c->Fel, 0, 0.0);
    expert_mm(c, e->u, e->xp, lw_weight(c, TID(PLC_ROLE_EXP_UP, l)), e->counts, h, c->Fel, 0, 0.0);
    e->s = lw_act_buf(c, PLC_F32, P, c->Fel, "expert_swiglu");
    lw_emit(c->P, PLC_OP_SWIGLU_FWD, COMPUTE, B(e->s, e->g, e->u), A(P * c->Fel), 0.0);
    e->y = lw_act_buf(c, PLC_F32, P, h, "expert_out");
    expert_mm(c, e->y, e->s, lw_weight(c, TID(PLC_ROLE_EXP_DOWN, l)), e->counts, c->Fel, h, 1, 0.0);
    /* the shared experts: one SwiGLU MLP */
    if (c->Fsl > 0) {
        a->g = lw_act_buf(c, PLC_F32, R, c->Fsl, "shared_gate");
        a->u = lw_act_buf(c, PLC_F32, R, c->Fsl, "shared_up");
        lw_matmul(c, a->g, a->hn2, lw_weight(c, TID(PLC_ROLE_SH_GATE, l)), R, c->Fsl, h, 0, 0, 0.0);
        lw_matmul(c, a->u, a->hn2, lw_weight(c, TID(PLC_ROLE_SH_UP, l)), R, c->Fsl, h, 0, 0, 0.0);
        a->s = lw_act_buf(c, PLC_F32, R, c->Fsl, "shared_swiglu");
        lw_emit(c->P, PLC_OP_SWIGLU_FWD, COMPUTE, B(a->s, a->g, a->u), A(R * c->Fsl), 0.0);
    }
    if (recompute) return -1;
    int32_t out = lw_tmp_buf(c, PLC_F32, R, h, "moe_out");
    lw_emit(c->P, PLC_OP_MOE_UNPERMUTE, COMPUTE, B(out, e->y, e->pos, e->weight), A(R, h, k, P), 0.0);
    if (c->Fsl > 0) lw_matmul(c, out, a->s, lw_weight(c, TID(PLC_ROLE_SH_DOWN, l)), R, h, c->Fsl, 0, 0, 1.0);
    return out;
}

int32_t lw_moe_bwd(lw_ctx *c, int64_t l, lw_act *a, int32_t dd)
{
    lw_moe_act *e = &a->moe;
    const plc_moe *mo = &c->m.moe;
    int64_t R = c->R, h = c->h, E = c->E, k = c->topk, P = c->moe_rows, Fel = c->Fel;
    /* the combine: the experts' rows and the weights */
    int32_t dy = lw_tmp_buf(c, PLC_F32, P, h, "d_expert_out"), dw = lw_tmp_buf(c, PLC_F32, R, k, "d_expert_weight");
    lw_emit(c->P, PLC_OP_MOE_UNPERMUTE_BWD, COMPUTE, B(dy, dw, dd, e->y, e->pos, e->weight), A(R, h, k, P), 0.0);
    if (c->g_tp >= 0) { /* each tp rank's y is a part of the experts' output */
        lw_emit(c->P, PLC_OP_ALLREDUCE, COMPUTE, B(dw), A(R * k, 0), 0.0);
        lw_last(c->P)->group = c->g_tp;
    }
    /* the experts, in reverse */
    int64_t down = TID(PLC_ROLE_EXP_DOWN, l), gate = TID(PLC_ROLE_EXP_GATE, l), up = TID(PLC_ROLE_EXP_UP, l);
    int32_t ds = lw_tmp_buf(c, PLC_F32, P, Fel, "d_expert_swiglu");
    expert_mm(c, ds, dy, lw_weight(c, down), e->counts, h, Fel, 0, 0.0);
    expert_dw(c, lw_weight_grad(c, down), dy, e->s, e->counts, h, Fel);
    int32_t dg = lw_tmp_buf(c, PLC_F32, P, Fel, "d_expert_gate"), du = lw_tmp_buf(c, PLC_F32, P, Fel, "d_expert_up");
    lw_zero(c, dg);
    lw_zero(c, du);
    lw_emit(c->P, PLC_OP_SWIGLU_BWD, COMPUTE, B(dg, du, ds, e->g, e->u), A(P * Fel), 0.0);
    int32_t dxp = lw_tmp_buf(c, PLC_F32, P, h, "d_expert_in");
    expert_mm(c, dxp, dg, lw_weight(c, gate), e->counts, Fel, h, 1, 0.0);
    expert_mm(c, dxp, du, lw_weight(c, up), e->counts, Fel, h, 1, 1.0);
    expert_dw(c, lw_weight_grad(c, gate), e->xp, dg, e->counts, h, Fel);
    expert_dw(c, lw_weight_grad(c, up), e->xp, du, e->counts, h, Fel);
    int32_t dh2 = lw_tmp_buf(c, PLC_F32, R, h, "d_hn2");
    lw_zero(c, dh2);
    lw_emit(c->P, PLC_OP_MOE_PERMUTE_BWD, COMPUTE, B(dh2, dxp, e->pos), A(R, h, k, P), 0.0);
    /* the shared experts */
    if (c->Fsl > 0) {
        int64_t sg = TID(PLC_ROLE_SH_GATE, l), su = TID(PLC_ROLE_SH_UP, l), sd = TID(PLC_ROLE_SH_DOWN, l);
        int32_t dss = lw_tmp_buf(c, PLC_F32, R, c->Fsl, "d_shared_swiglu");
        lw_matmul(c, dss, dd, lw_weight(c, sd), R, c->Fsl, h, 0, 1, 0.0);
        lw_matmul(c, lw_weight_grad(c, sd), a->s, dd, c->Fsl, h, R, 1, 0, 1.0);
        int32_t dsg = lw_tmp_buf(c, PLC_F32, R, c->Fsl, "d_shared_gate"), dsu = lw_tmp_buf(c, PLC_F32, R, c->Fsl, "d_shared_up");
        lw_zero(c, dsg);
        lw_zero(c, dsu);
        lw_emit(c->P, PLC_OP_SWIGLU_BWD, COMPUTE, B(dsg, dsu, dss, a->g, a->u), A(R * c->Fsl), 0.0);
        lw_matmul(c, dh2, dsg, lw_weight(c, sg), R, h, c->Fsl, 0, 1, 1.0);
        lw_matmul(c, dh2, dsu, lw_weight(c, su), R, h, c->Fsl, 0, 1, 1.0);
        lw_matmul(c, lw_weight_grad(c, sg), a->hn2, dsg, h, c->Fsl, R, 1, 0, 1.0);
        lw_matmul(c, lw_weight_grad(c, su), a->hn2, dsu, h, c->Fsl, R, 1, 0, 1.0);
    }
    /* the router: the weights' gradient and the load-balancing loss's */
    int32_t choices = -1; /* cp: each sequence's choices per expert, summed over its chunks */
    if (c->g_cp >= 0 && mo->aux_loss > 0) {
        choices = lw_tmp_buf(c, PLC_F32, c->mb, E, "expert_choices");
        lw_emit(c->P, PLC_OP_MOE_SEQ_COUNTS, COMPUTE, B(choices, e->expert), A(R, E, k, c->Sl, c->mb), 0.0);
        lw_emit(c->P, PLC_OP_ALLREDUCE, COMPUTE, B(choices), A(c->mb * E, 0), 0.0);
        lw_last(c->P)->group = c->g_cp;
    }
    int32_t dlogits = lw_tmp_buf(c, PLC_F32, R, E, "d_router_logits");
    lw_emit(c->P, PLC_OP_MOE_ROUTE_BWD, COMPUTE, B(dlogits, dw, e->scores, e->expert, choices),
            A(R, E, k, mo->router == PLC_ROUTER_SIGMOID, c->Sl, c->S, c->mb), mo->route_scale);
    lw_last(c->P)->farg[1] = mo->aux_loss * c->loss_scale;
    int64_t router = TID(PLC_ROLE_ROUTER, l);
    if (c->sp) lw_emit(c->P, PLC_OP_SCALE, COMPUTE, B(dlogits), A(R * E), 1.0 / (double)c->L.tp);
    lw_matmul(c, lw_weight_grad(c, router), a->hn2, dlogits, h, E, R, 1, 0, 1.0);
    if (c->sp) lw_matmul(c, dh2, dlogits, lw_weight(c, router), R, h, E, 0, 1, 1.0); /* a tp-th of it per rank */
    dh2 = lw_tp_reduce_rows(c, dh2, h, "d_hn2_rs");
    if (!c->sp) lw_matmul(c, dh2, dlogits, lw_weight(c, router), R, h, E, 0, 1, 1.0); /* whole: after */
    return dh2;
}
