/* lower_layer.c: the math of one micro-batch through the embedding, a
 * transformer layer and the head, forward and backward (docs/model.md):
 * the Llama block, or the GPT block (LayerNorm with bias, biases on every
 * projection, a GELU MLP, learned positions added to the embedding).
 *
 * Shapes: R = micro_batch x seq_len/cp rows; Rs = R/tp with sequence
 * parallelism (else R) rows of the residual stream; per tp rank Hl heads,
 * KVl KV heads and Fl FFN columns. Weights are stored [in, out]. Backward ops
 * accumulate, so every gradient is zeroed (or written by a beta = 0 matmul)
 * before it is accumulated into. */
#include "compiler/lower/lower_int.h"

#define TID(role, l) plc_tensor_id(&c->m, (role), (l))
#define B(...) LW_B(__VA_ARGS__)
#define A(...) LW_A(__VA_ARGS__)
#define COMPUTE PLC_STREAM_COMPUTE

/* ---- the GPT block's pieces ---------------------------------------------------- */

/* the norm of a block: RMSNorm, or LayerNorm with its bias and mean (GPT) */
static void norm_fwd(lw_ctx *c, int32_t out, int32_t *mean, int32_t rstd, int32_t in, plc_tensor_role w,
                     plc_tensor_role b, int64_t l, int64_t rows, const char *mean_name)
{
    if (!c->gpt) {
        lw_emit(c->P, PLC_OP_RMSNORM_FWD, COMPUTE, B(out, rstd, in, lw_weight(c, TID(w, l))), A(rows, c->h),
                c->m.norm_eps);
        return;
    }
    *mean = lw_act_buf(c, PLC_F32, rows, 1, mean_name);
    lw_emit(c->P, PLC_OP_LAYERNORM_FWD, COMPUTE,
            B(out, *mean, rstd, in, lw_weight(c, TID(w, l)), lw_weight(c, TID(b, l))), A(rows, c->h), c->m.norm_eps);
}

static void norm_bwd(lw_ctx *c, int32_t din, int32_t dout, int32_t in, int32_t mean, int32_t rstd, plc_tensor_role w,
                     plc_tensor_role b, int64_t l, int64_t rows)
{
    if (!c->gpt) {
        lw_emit(c->P, PLC_OP_RMSNORM_BWD, COMPUTE,
                B(din, lw_weight_grad(c, TID(w, l)), dout, in, lw_weight(c, TID(w, l)), rstd), A(rows, c->h), 0.0);
        return;
    }
    lw_emit(c->P, PLC_OP_LAYERNORM_BWD, COMPUTE,
            B(din, lw_weight_grad(c, TID(w, l)), lw_weight_grad(c, TID(b, l)), dout, in, lw_weight(c, TID(w, l)), mean,
              rstd),
            A(rows, c->h), 0.0);
}

/* ---- weight gradients (the W half of a backward) -------------------------------- */

static void wop_emit(lw_ctx *c, const lw_wop *w)
{
    int32_t g = lw_weight_grad(c, w->tensor);
    if (w->bias) lw_emit(c->P, PLC_OP_BIAS_BWD, COMPUTE, B(g, w->dy), A(w->K, w->N), 0.0);
    else lw_matmul(c, g, w->x, w->dy, w->M, w->N, w->K, 1, 0, 1.0);
}

/* a W product of layer l, micro-batch m: emitted now (a whole backward) or
 * recorded for the W unit (a split one) */
static void wop(lw_ctx *c, int64_t l, int64_t m, lw_wop w)
{
    if (!c->defer_w) {
        wop_emit(c, &w);
        return;
    }
    int64_t i = l * c->M + m;
    if (c->nwops[i] >= LW_LAYER_WOPS) { /* a lowering bug: more products than a layer has */
        c->visit_bad = true;
        return;
    }
    c->wops[i * LW_LAYER_WOPS + c->nwops[i]++] = w;
}

/* the gradient of the weight of the role += x^T dy */
static void wgrad(lw_ctx *c, plc_tensor_role role, int64_t l, int64_t m, int32_t x, int32_t dy, int64_t in,
                  int64_t out, int64_t rows)
{
    wop(c, l, m, (lw_wop){.tensor = TID(role, l), .x = x, .dy = dy, .M = in, .N = out, .K = rows});
}

/* x [rows, cols] += bias of the role (GPT only) */
static void bias_fwd(lw_ctx *c, int32_t x, plc_tensor_role role, int64_t l, int64_t rows, int64_t cols)
{
    if (c->gpt) lw_emit(c->P, PLC_OP_BIAS_ADD, COMPUTE, B(x, lw_weight(c, TID(role, l))), A(rows, cols), 0.0);
}

/* the bias's gradient += column sums of dout [rows, cols] (GPT only) */
static void bias_bwd(lw_ctx *c, int32_t dout, plc_tensor_role role, int64_t l, int64_t m, int64_t rows, int64_t cols)
{
    if (c->gpt) wop(c, l, m, (lw_wop){.bias = true, .tensor = TID(role, l), .x = -1, .dy = dout, .N = cols, .K = rows});
}

/* the residual stream's rows are a tp rank's block of the micro-batch (SP) */
static int64_t sp_rows(const lw_ctx *c) { return c->Rs != c->R; }

static int64_t attn_form(const lw_ctx *c) { return c->L.attention >= PLC_ATTN_FLASH1 ? 1 : 0; }

static int32_t attn_stats(lw_ctx *c, const char *what)
{
    int64_t Tk = c->Sl * c->L.cp;
    int64_t n = attn_form(c) ? c->mb * c->Hl * c->Sl : c->mb * c->Hl * c->Sl * Tk;
    return lw_buf_here(c->P, c->m.layers, PLC_BUF_ACT, PLC_F32, 1, n, what);
}

static void attn_fwd(lw_ctx *c, int32_t out, int32_t stats, const lw_act *a)
{
    lw_emit(c->P, PLC_OP_ATTN_FWD, COMPUTE, B(out, stats, a->q, a->k, a->v),
            A(c->mb, c->Sl, c->Sl * c->L.cp, c->Hl, c->KVl, c->hd, attn_form(c)), 0.0);
}

/* K or V of the local chunk -> the whole sequence (cp all-gather) */
static int32_t cp_gather(lw_ctx *c, int32_t local, const char *what)
{
    if (c->g_cp < 0) return local;
    int32_t full = lw_act_buf(c, c->act_dt, c->R * c->L.cp, c->kvd, what);
    lw_emit(c->P, PLC_OP_ALLGATHER, COMPUTE, B(full, local), A(c->R * c->kvd), 0.0);
    lw_last(c->P)->group = c->g_cp;
    return full;
}

static int32_t cp_scatter(lw_ctx *c, int32_t full, const char *what)
{
    if (c->g_cp < 0) return full;
    int32_t local = lw_tmp_buf(c, c->act_dt, c->R, c->kvd, what);
    lw_emit(c->P, PLC_OP_REDUCE_SCATTER, COMPUTE, B(local, full), A(c->R * c->kvd), 0.0);
    lw_last(c->P)->group = c->g_cp;
    return local;
}

/* ---- embedding ---------------------------------------------------------------- */

int32_t lw_embed_fwd(lw_ctx *c, int64_t m)
{
    lw_where(c->P, PLC_PHASE_FORWARD, -1, (int32_t)m);
    lw_switch_layer(c, -1);
    int64_t emb = TID(PLC_ROLE_TOK_EMB, 0);
    int32_t w = lw_weight(c, emb);
    int32_t e = lw_act_buf(c, c->act_dt, c->R, c->h, "embed");
    lw_emit(c->P, PLC_OP_EMBED_FWD, COMPUTE, B(e, c->tokens[m], w), A(c->R, c->h, c->Vl, c->vocab_sharded), 0.0);
    int32_t x0 = lw_tp_reduce_rows(c, e, c->h, "x0");
    if (c->learned_pos) /* once, on the reduced rows */
        lw_emit(c->P, PLC_OP_POS_FWD, COMPUTE, B(x0, lw_weight(c, TID(PLC_ROLE_POS_EMB, 0))), A(c->Rs, c->h, sp_rows(c)),
                0.0);
    lw_visit_end(c);
    return x0;
}

void lw_embed_bwd(lw_ctx *c, int64_t m, int32_t dx0)
{
    lw_where(c->P, PLC_PHASE_BACKWARD, -1, (int32_t)m);
    lw_switch_layer(c, -1);
    int64_t emb = TID(PLC_ROLE_TOK_EMB, 0);
    if (c->learned_pos)
        lw_emit(c->P, PLC_OP_POS_BWD, COMPUTE, B(lw_weight_grad(c, TID(PLC_ROLE_POS_EMB, 0)), dx0),
                A(c->Rs, c->h, sp_rows(c)), 0.0);
    int32_t d = lw_tp_allgather_rows(c, dx0, c->h, "d_embed");
    int32_t g = lw_weight_grad(c, emb);
    lw_emit(c->P, PLC_OP_EMBED_BWD, COMPUTE, B(g, c->tokens[m], d), A(c->R, c->h, c->Vl, c->vocab_sharded), 0.0);
    lw_visit_end(c);
}

/* ---- transformer layer ------------------------------------------------------------ */

static void attention_core(lw_ctx *c, lw_act *a, plc_phase ph)
{
    plc_phase saved = c->P->phase;
    c->P->phase = ph;
    a->att = lw_act_buf(c, c->act_dt, c->R, c->qd, "att");
    a->stats = attn_stats(c, attn_form(c) ? "lse" : "probs");
    attn_fwd(c, a->att, a->stats, a);
    c->P->phase = saved;
}

int32_t lw_layer_fwd(lw_ctx *c, int64_t l, int64_t m, int32_t x_in, bool recompute)
{
    lw_where(c->P, recompute ? PLC_PHASE_RECOMPUTE : PLC_PHASE_FORWARD, (int32_t)l, (int32_t)m);
    lw_switch_layer(c, (int32_t)l);
    lw_act *a = &c->acts[l * c->M + m];
    a->x_in = x_in;
    int64_t R = c->R, Rs = c->Rs, h = c->h;
    /* attention block */
    a->hn = lw_act_buf(c, c->act_dt, Rs, h, "hn");
    a->rstd1 = lw_act_buf(c, PLC_F32, Rs, 1, "rstd1");
    norm_fwd(c, a->hn, &a->mean1, a->rstd1, x_in, PLC_ROLE_ATTN_NORM, PLC_ROLE_ATTN_NORM_B, l, Rs, "mean1");
    a->hn = lw_tp_allgather_rows(c, a->hn, h, "hn_full");
    /* q and k before RoPE are temporaries; with learned positions they are kept */
    bool rope = c->m.positions == PLC_POS_ROPE;
    int32_t q = rope ? lw_tmp_buf(c, c->act_dt, R, c->qd, "q_pre") : lw_act_buf(c, c->act_dt, R, c->qd, "q");
    int32_t k = rope ? lw_tmp_buf(c, c->act_dt, R, c->kvd, "k_pre") : lw_act_buf(c, c->act_dt, R, c->kvd, "k");
    a->v = lw_act_buf(c, c->act_dt, R, c->kvd, "v");
    lw_matmul(c, q, a->hn, lw_weight(c, TID(PLC_ROLE_WQ, l)), R, c->qd, h, 0, 0, 0.0);
    lw_matmul(c, k, a->hn, lw_weight(c, TID(PLC_ROLE_WK, l)), R, c->kvd, h, 0, 0, 0.0);
    lw_matmul(c, a->v, a->hn, lw_weight(c, TID(PLC_ROLE_WV, l)), R, c->kvd, h, 0, 0, 0.0);
    bias_fwd(c, q, PLC_ROLE_BQ, l, R, c->qd);
    bias_fwd(c, k, PLC_ROLE_BK, l, R, c->kvd);
    bias_fwd(c, a->v, PLC_ROLE_BV, l, R, c->kvd);
    a->q = q;
    int32_t kr = k;
    if (rope) {
        a->q = lw_act_buf(c, c->act_dt, R, c->qd, "q");
        kr = lw_act_buf(c, c->act_dt, R, c->kvd, "k");
        lw_emit(c->P, PLC_OP_ROPE_FWD, COMPUTE, B(a->q, q), A(c->mb, c->Sl, c->Hl, c->hd), c->m.rope_theta);
        lw_emit(c->P, PLC_OP_ROPE_FWD, COMPUTE, B(kr, k), A(c->mb, c->Sl, c->KVl, c->hd), c->m.rope_theta);
    }
    a->k = cp_gather(c, kr, "k_full");
    a->v = cp_gather(c, a->v, "v_full");
    attention_core(c, a, c->P->phase);
    int32_t o = lw_tmp_buf(c, c->act_dt, R, h, "attn_out");
    lw_matmul(c, o, a->att, lw_weight(c, TID(PLC_ROLE_WO, l)), R, h, c->qd, 0, 0, 0.0);
    o = lw_tp_reduce_rows(c, o, h, "attn_out_rs");
    bias_fwd(c, o, PLC_ROLE_BO, l, Rs, h); /* replicated: added once, after the reduction */
    a->x_mid = lw_act_buf(c, c->act_dt, Rs, h, "x_mid");
    lw_emit(c->P, PLC_OP_ADD, COMPUTE, B(a->x_mid, x_in, o), A(Rs * h), 0.0);
    /* MLP block */
    a->hn2 = lw_act_buf(c, c->act_dt, Rs, h, "hn2");
    a->rstd2 = lw_act_buf(c, PLC_F32, Rs, 1, "rstd2");
    norm_fwd(c, a->hn2, &a->mean2, a->rstd2, a->x_mid, PLC_ROLE_MLP_NORM, PLC_ROLE_MLP_NORM_B, l, Rs, "mean2");
    a->hn2 = lw_tp_allgather_rows(c, a->hn2, h, "hn2_full");
    if (plc_layer_is_moe(&c->m, l)) { /* router and experts (lower_moe.c) */
        int32_t d = lw_moe_fwd(c, l, a, recompute);
        if (recompute) return -1;
        d = lw_tp_reduce_rows(c, d, h, "mlp_out_rs");
        int32_t x_out = lw_act_buf(c, c->act_dt, Rs, h, "x_out");
        lw_emit(c->P, PLC_OP_ADD, COMPUTE, B(x_out, a->x_mid, d), A(Rs * h), 0.0);
        lw_visit_end(c);
        return x_out;
    }
    if (c->gpt) { /* fc + bias, GELU */
        a->g = lw_act_buf(c, c->act_dt, R, c->Fl, "fc");
        lw_matmul(c, a->g, a->hn2, lw_weight(c, TID(PLC_ROLE_W_FC, l)), R, c->Fl, h, 0, 0, 0.0);
        bias_fwd(c, a->g, PLC_ROLE_B_FC, l, R, c->Fl);
        a->s = lw_act_buf(c, c->act_dt, R, c->Fl, "gelu");
        lw_emit(c->P, PLC_OP_GELU_FWD, COMPUTE, B(a->s, a->g), A(R * c->Fl), 0.0);
        if (recompute) return -1;
        int32_t d = lw_tmp_buf(c, c->act_dt, R, h, "mlp_out");
        lw_matmul(c, d, a->s, lw_weight(c, TID(PLC_ROLE_W_PROJ, l)), R, h, c->Fl, 0, 0, 0.0);
        d = lw_tp_reduce_rows(c, d, h, "mlp_out_rs");
        bias_fwd(c, d, PLC_ROLE_B_PROJ, l, Rs, h);
        int32_t x_out = lw_act_buf(c, c->act_dt, Rs, h, "x_out");
        lw_emit(c->P, PLC_OP_ADD, COMPUTE, B(x_out, a->x_mid, d), A(Rs * h), 0.0);
        lw_visit_end(c);
        return x_out;
    }
    a->g = lw_act_buf(c, c->act_dt, R, c->Fl, "gate");
    a->u = lw_act_buf(c, c->act_dt, R, c->Fl, "up");
    lw_matmul(c, a->g, a->hn2, lw_weight(c, TID(PLC_ROLE_W_GATE, l)), R, c->Fl, h, 0, 0, 0.0);
    lw_matmul(c, a->u, a->hn2, lw_weight(c, TID(PLC_ROLE_W_UP, l)), R, c->Fl, h, 0, 0, 0.0);
    a->s = lw_act_buf(c, c->act_dt, R, c->Fl, "swiglu");
    lw_emit(c->P, PLC_OP_SWIGLU_FWD, COMPUTE, B(a->s, a->g, a->u), A(R * c->Fl), 0.0);
    if (recompute) return -1; /* the layer output is not needed again */
    int32_t d = lw_tmp_buf(c, c->act_dt, R, h, "mlp_out");
    lw_matmul(c, d, a->s, lw_weight(c, TID(PLC_ROLE_W_DOWN, l)), R, h, c->Fl, 0, 0, 0.0);
    d = lw_tp_reduce_rows(c, d, h, "mlp_out_rs");
    int32_t x_out = lw_act_buf(c, c->act_dt, Rs, h, "x_out");
    lw_emit(c->P, PLC_OP_ADD, COMPUTE, B(x_out, a->x_mid, d), A(Rs * h), 0.0);
    lw_visit_end(c);
    return x_out;
}

int32_t lw_layer_bwd(lw_ctx *c, int64_t l, int64_t m, int32_t dx_out)
{
    bool saved = c->defer_w;
    c->defer_w = false;
    int32_t dx = lw_layer_bwd_b(c, l, m, dx_out);
    c->defer_w = saved;
    return dx;
}

void lw_layer_bwd_w(lw_ctx *c, int64_t l, int64_t m)
{
    lw_where(c->P, PLC_PHASE_BACKWARD, (int32_t)l, (int32_t)m);
    lw_switch_layer(c, (int32_t)l);
    int64_t i = l * c->M + m;
    for (int32_t k = 0; k < c->nwops[i]; k++) wop_emit(c, &c->wops[i * LW_LAYER_WOPS + k]);
    c->nwops[i] = 0;
    lw_visit_end(c);
}

int32_t lw_layer_bwd_b(lw_ctx *c, int64_t l, int64_t m, int32_t dx_out)
{
    lw_act *a = &c->acts[l * c->M + m];
    if (c->L.recompute == PLC_RECOMPUTE_FULL) lw_layer_fwd(c, l, m, a->x_in, true);
    lw_where(c->P, PLC_PHASE_BACKWARD, (int32_t)l, (int32_t)m);
    lw_switch_layer(c, (int32_t)l);
    int64_t R = c->R, Rs = c->Rs, h = c->h, Fl = c->Fl;
    /* MLP block: dd = d(loss)/d(mlp_out) = dx_out */
    bias_bwd(c, dx_out, PLC_ROLE_B_PROJ, l, m, Rs, h);
    int32_t dd = lw_tp_allgather_rows(c, dx_out, h, "d_mlp_out");
    int32_t dh2;
    bool moe = plc_layer_is_moe(&c->m, l);
    if (moe) {
        dh2 = lw_moe_bwd(c, l, a, dd); /* reduced over tp */
    } else if (c->gpt) {
        int32_t ds = lw_tmp_buf(c, c->act_dt, R, Fl, "d_gelu");
        lw_matmul(c, ds, dd, lw_weight(c, TID(PLC_ROLE_W_PROJ, l)), R, Fl, h, 0, 1, 0.0);
        wgrad(c, PLC_ROLE_W_PROJ, l, m, a->s, dd, Fl, h, R);
        int32_t dfc = lw_tmp_buf(c, c->act_dt, R, Fl, "d_fc");
        lw_zero(c, dfc);
        lw_emit(c->P, PLC_OP_GELU_BWD, COMPUTE, B(dfc, ds, a->g), A(R * Fl), 0.0);
        bias_bwd(c, dfc, PLC_ROLE_B_FC, l, m, R, Fl);
        dh2 = lw_tmp_buf(c, c->act_dt, R, h, "d_hn2");
        lw_matmul(c, dh2, dfc, lw_weight(c, TID(PLC_ROLE_W_FC, l)), R, h, Fl, 0, 1, 0.0);
        wgrad(c, PLC_ROLE_W_FC, l, m, a->hn2, dfc, h, Fl, R);
    } else {
        int32_t ds = lw_tmp_buf(c, c->act_dt, R, Fl, "d_swiglu");
        lw_matmul(c, ds, dd, lw_weight(c, TID(PLC_ROLE_W_DOWN, l)), R, Fl, h, 0, 1, 0.0);
        wgrad(c, PLC_ROLE_W_DOWN, l, m, a->s, dd, Fl, h, R);
        int32_t dg = lw_tmp_buf(c, c->act_dt, R, Fl, "d_gate"), du = lw_tmp_buf(c, c->act_dt, R, Fl, "d_up");
        lw_zero(c, dg);
        lw_zero(c, du);
        lw_emit(c->P, PLC_OP_SWIGLU_BWD, COMPUTE, B(dg, du, ds, a->g, a->u), A(R * Fl), 0.0);
        dh2 = lw_tmp_buf(c, c->act_dt, R, h, "d_hn2");
        lw_matmul(c, dh2, dg, lw_weight(c, TID(PLC_ROLE_W_GATE, l)), R, h, Fl, 0, 1, 0.0);
        lw_matmul(c, dh2, du, lw_weight(c, TID(PLC_ROLE_W_UP, l)), R, h, Fl, 0, 1, 1.0);
        wgrad(c, PLC_ROLE_W_GATE, l, m, a->hn2, dg, h, Fl, R);
        wgrad(c, PLC_ROLE_W_UP, l, m, a->hn2, du, h, Fl, R);
    }
    if (!moe) dh2 = lw_tp_reduce_rows(c, dh2, h, "d_hn2_rs");
    int32_t dx_mid = lw_tmp_buf(c, c->act_dt, Rs, h, "d_x_mid");
    lw_emit(c->P, PLC_OP_COPY, COMPUTE, B(dx_mid, dx_out), LW_NOARGS, 0.0);
    norm_bwd(c, dx_mid, dh2, a->x_mid, a->mean2, a->rstd2, PLC_ROLE_MLP_NORM, PLC_ROLE_MLP_NORM_B, l, Rs);
    /* attention block */
    bias_bwd(c, dx_mid, PLC_ROLE_BO, l, m, Rs, h);
    int32_t dout = lw_tp_allgather_rows(c, dx_mid, h, "d_attn_out");
    if (c->L.recompute == PLC_RECOMPUTE_SELECTIVE) attention_core(c, a, PLC_PHASE_RECOMPUTE);
    int32_t datt = lw_tmp_buf(c, c->act_dt, R, c->qd, "d_att");
    lw_matmul(c, datt, dout, lw_weight(c, TID(PLC_ROLE_WO, l)), R, c->qd, h, 0, 1, 0.0);
    wgrad(c, PLC_ROLE_WO, l, m, a->att, dout, c->qd, h, R);
    int64_t Rk = R * c->L.cp;
    int32_t dq = lw_tmp_buf(c, c->act_dt, R, c->qd, "d_q"), dk = lw_tmp_buf(c, c->act_dt, Rk, c->kvd, "d_k_full"),
            dv = lw_tmp_buf(c, c->act_dt, Rk, c->kvd, "d_v_full");
    lw_zero(c, dq);
    lw_zero(c, dk);
    lw_zero(c, dv);
    lw_emit(c->P, PLC_OP_ATTN_BWD, COMPUTE, B(dq, dk, dv, datt, a->q, a->k, a->v, a->att, a->stats),
            A(c->mb, c->Sl, c->Sl * c->L.cp, c->Hl, c->KVl, c->hd, attn_form(c)), 0.0);
    dk = cp_scatter(c, dk, "d_k");
    dv = cp_scatter(c, dv, "d_v");
    int32_t dq0 = dq, dk0 = dk;
    if (c->m.positions == PLC_POS_ROPE) {
        dq0 = lw_tmp_buf(c, c->act_dt, R, c->qd, "d_q_pre");
        dk0 = lw_tmp_buf(c, c->act_dt, R, c->kvd, "d_k_pre");
        lw_zero(c, dq0);
        lw_zero(c, dk0);
        lw_emit(c->P, PLC_OP_ROPE_BWD, COMPUTE, B(dq0, dq), A(c->mb, c->Sl, c->Hl, c->hd), c->m.rope_theta);
        lw_emit(c->P, PLC_OP_ROPE_BWD, COMPUTE, B(dk0, dk), A(c->mb, c->Sl, c->KVl, c->hd), c->m.rope_theta);
    }
    bias_bwd(c, dq0, PLC_ROLE_BQ, l, m, R, c->qd);
    bias_bwd(c, dk0, PLC_ROLE_BK, l, m, R, c->kvd);
    bias_bwd(c, dv, PLC_ROLE_BV, l, m, R, c->kvd);
    int32_t dh = lw_tmp_buf(c, c->act_dt, R, h, "d_hn");
    lw_matmul(c, dh, dq0, lw_weight(c, TID(PLC_ROLE_WQ, l)), R, h, c->qd, 0, 1, 0.0);
    lw_matmul(c, dh, dk0, lw_weight(c, TID(PLC_ROLE_WK, l)), R, h, c->kvd, 0, 1, 1.0);
    lw_matmul(c, dh, dv, lw_weight(c, TID(PLC_ROLE_WV, l)), R, h, c->kvd, 0, 1, 1.0);
    wgrad(c, PLC_ROLE_WQ, l, m, a->hn, dq0, h, c->qd, R);
    wgrad(c, PLC_ROLE_WK, l, m, a->hn, dk0, h, c->kvd, R);
    wgrad(c, PLC_ROLE_WV, l, m, a->hn, dv, h, c->kvd, R);
    dh = lw_tp_reduce_rows(c, dh, h, "d_hn_rs");
    int32_t dx_in = lw_tmp_buf(c, c->act_dt, Rs, h, "d_x_in");
    lw_emit(c->P, PLC_OP_COPY, COMPUTE, B(dx_in, dx_mid), LW_NOARGS, 0.0);
    norm_bwd(c, dx_in, dh, a->x_in, a->mean1, a->rstd1, PLC_ROLE_ATTN_NORM, PLC_ROLE_ATTN_NORM_B, l, Rs);
    lw_visit_end(c);
    return dx_in;
}

/* ---- head and loss -------------------------------------------------------------- */

/* Final norm, logits, cross-entropy and the logits' backward, all at once,
 * so the [rows, vocab] buffers live only inside this call; the gradient into
 * the final norm's output waits for the backward unit. */
void lw_head_fwd_bwd(lw_ctx *c, int64_t m, int32_t x)
{
    int32_t L = (int32_t)c->m.layers;
    lw_where(c->P, PLC_PHASE_FORWARD, L, (int32_t)m);
    lw_switch_layer(c, L);
    int64_t R = c->R, Rs = c->Rs, h = c->h, Vl = c->Vl;
    bool tied = c->m.tie_embeddings;
    int64_t wid = tied ? TID(PLC_ROLE_TOK_EMB, 0) : TID(PLC_ROLE_LM_HEAD, 0);
    int32_t xf = lw_act_buf(c, c->act_dt, Rs, h, "xf"), rstd = lw_act_buf(c, PLC_F32, Rs, 1, "rstd_f");
    int32_t mean = -1;
    norm_fwd(c, xf, &mean, rstd, x, PLC_ROLE_FINAL_NORM, PLC_ROLE_FINAL_NORM_B, 0, Rs, "mean_f");
    xf = lw_tp_allgather_rows(c, xf, h, "xf_full");
    int32_t W = lw_weight(c, wid);
    int32_t logits = lw_tmp_buf(c, c->act_dt, R, Vl, "logits");
    lw_matmul(c, logits, xf, W, R, Vl, h, 0, tied ? 1 : 0, 0.0);
    int32_t rowmax = lw_tmp_buf(c, PLC_F32, R, 1, "rowmax"), rowsum = lw_tmp_buf(c, PLC_F32, R, 1, "rowsum"),
            tlogit = lw_tmp_buf(c, PLC_F32, R, 1, "target_logit");
    lw_emit(c->P, PLC_OP_XENT_MAX, COMPUTE, B(rowmax, logits), A(R, Vl), 0.0);
    if (c->vocab_sharded) {
        lw_emit(c->P, PLC_OP_ALLREDUCE, COMPUTE, B(rowmax), A(R, 1), 0.0);
        lw_last(c->P)->group = c->g_tp;
    }
    lw_emit(c->P, PLC_OP_XENT_SUMEXP, COMPUTE, B(rowsum, tlogit, logits, c->targets[m], rowmax),
            A(R, Vl, c->vocab_sharded), 0.0);
    if (c->vocab_sharded) {
        lw_emit(c->P, PLC_OP_ALLREDUCE, COMPUTE, B(rowsum), A(R, 0), 0.0);
        lw_last(c->P)->group = c->g_tp;
        lw_emit(c->P, PLC_OP_ALLREDUCE, COMPUTE, B(tlogit), A(R, 0), 0.0);
        lw_last(c->P)->group = c->g_tp;
    }
    lw_where(c->P, PLC_PHASE_BACKWARD, L, (int32_t)m);
    int32_t dlogits = lw_tmp_buf(c, c->act_dt, R, Vl, "d_logits");
    lw_zero(c, dlogits);
    lw_emit(c->P, PLC_OP_XENT_LOSS, COMPUTE, B(dlogits, c->loss_buf, logits, c->targets[m], rowmax, rowsum, tlogit),
            A(R, Vl, c->vocab_sharded), c->loss_scale);
    int32_t dxf = lw_tmp_buf(c, c->act_dt, R, h, "d_xf");
    if (tied) {
        lw_matmul(c, dxf, dlogits, W, R, h, Vl, 0, 0, 0.0);
        lw_matmul(c, lw_weight_grad(c, wid), dlogits, xf, Vl, h, R, 1, 0, 1.0);
    } else {
        lw_matmul(c, dxf, dlogits, W, R, h, Vl, 0, 1, 0.0);
        lw_matmul(c, lw_weight_grad(c, wid), xf, dlogits, h, Vl, R, 1, 0, 1.0);
    }
    c->head_dx[m] = lw_tp_reduce_rows(c, dxf, h, "d_xf_rs");
    c->head_x[m] = x;
    c->head_rstd[m] = rstd;
    c->head_mean[m] = mean;
    lw_visit_end(c);
}

int32_t lw_head_bwd(lw_ctx *c, int64_t m)
{
    int32_t L = (int32_t)c->m.layers;
    lw_where(c->P, PLC_PHASE_BACKWARD, L, (int32_t)m);
    lw_switch_layer(c, L);
    int32_t dx = lw_tmp_buf(c, c->act_dt, c->Rs, c->h, "d_x_final");
    lw_zero(c, dx);
    norm_bwd(c, dx, c->head_dx[m], c->head_x[m], c->head_mean[m], c->head_rstd[m], PLC_ROLE_FINAL_NORM,
             PLC_ROLE_FINAL_NORM_B, 0, c->Rs);
    lw_visit_end(c);
    return dx;
}
