/* lower.c: the lowering driver. Checks the layout against the rulebook
 * (common/layout_rules.h), derives the per-rank sizes, builds the communicator groups and the
 * pipeline schedule, lowers one program per pipeline stage (units in
 * schedule order, sends and receives between chunks on different ranks),
 * places every buffer (compiler/lower/lower.h), and validates and checks the
 * result before handing it out. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "common/layout_rules.h"
#include "common/plan_io.h"
#include "compiler/lower/lower_int.h"
#include "compiler/frontend/frontend.h"
#include "compiler/plantools/plantools.h"

static void sizes(lw_ctx *c);

/* a buffer's elements are int64 products (rows x the widest of a row:
 * naive attention's scores, the logits, the FFN); past 2^48 bytes no device
 * holds it, and the products would soon overflow: refused */
static int too_large(lw_ctx *c)
{
    const plc_model *m = &c->m;
    const plc_layout *L = &c->L;
    double rows = (double)L->micro_batch * (double)(m->seq_len / L->cp);
    double wide = (double)(m->heads / L->tp) * (double)m->seq_len;
    double vocab = (double)plc_vocab_local(m->vocab, L->tp), ffn = (double)(m->ffn_hidden / L->tp);
    if (vocab > wide) wide = vocab;
    if (ffn > wide) wide = ffn;
    if ((double)m->hidden > wide) wide = (double)m->hidden;
    if (rows * wide * 4.0 <= 0x1p48) return 0;
    return lw_fail(c, "micro_batch = %lld makes buffers of %.3g bytes per rank, beyond any device's memory (2^48 bytes): "
                    "no plan is lowered for it", (long long)L->micro_batch, rows * wide * 4.0);
}

/* checks the layout against the rulebook, then derives the sizes */
static int derive(lw_ctx *c)
{
    const plc_model *m = &c->m;
    plc_layout *L = &c->L;
    /* every rule but the GPU count: a plan's world is its layout's */
    plc_rule_input in = {.model = m, .global_batch = c->job->train.global_batch, .precision = c->job->train.precision,
                         .precision_known = true, .layout = *L, .known = PLC_LD_ALL,
                         .engine = &c->job->engine, .engine_id = c->job->train.engine};
    if (c->job->train.precision == PLC_PREC_FP8)
        return lw_fail(c, "precision fp8 is modelled by plc solve and plc explain, but plrun has no fp8 kernels: "
                        "lower the plan with precision = bf16");
    plc_verdict v = plc_layout_rules(&in);
    if (v.rule != PLC_RULE_OK) {
        char why[256];
        return lw_fail(c, "%s", plc_rule_message(&in, v, why, sizeof why));
    }
    if (too_large(c)) return -1;
    sizes(c);
    return lw_moe_sizes(c);
}

/* the per-rank sizes of the layout (lw_ctx's derived sizes) */
static void sizes(lw_ctx *c)
{
    const plc_model *m = &c->m;
    plc_layout *L = &c->L;
    c->hd = m->hidden / m->heads;
    int64_t per_step = L->dp * L->micro_batch;
    c->M = c->job->train.global_batch / per_step;
    c->mb = L->micro_batch;
    c->S = m->seq_len;
    c->Sl = m->seq_len / L->cp;
    c->R = c->mb * c->Sl;
    if (L->tp == 1) L->sp = 0; /* nothing to split: the plan says so */
    c->sp = L->sp != 0;
    c->Rs = c->sp ? c->R / L->tp : c->R;
    c->h = m->hidden;
    c->Hl = m->heads / L->tp;
    c->KVl = m->kv_heads / L->tp;
    c->qd = c->Hl * c->hd;
    c->kvd = c->KVl * c->hd;
    c->Fl = m->ffn_hidden / L->tp;
    c->V = m->vocab;
    c->Vl = plc_vocab_local(m->vocab, L->tp); /* padded: the last shard's tail is zero rows */
    c->vocab_sharded = L->tp > 1;
    c->zero = L->dp * L->cp > 1 ? (int)L->zero : 0;
    c->nz = c->zero ? L->dp * L->cp : 1;
    bool bf16 = c->job->train.precision == PLC_PREC_BF16;
    c->act_dt = bf16 ? PLC_BF16 : PLC_F32;
    c->param_dt = c->act_dt;
    c->grad_dt = PLC_F32;
    c->loss_scale = 1.0 / ((double)c->job->train.global_batch * (double)m->seq_len);
}

/* the communicator groups of the layout (ids in c->groups) */
static void groups(lw_ctx *c)
{
    c->ngroups = 0;
    c->g_tp = lw_group(c, PLC_DIM_TP, 0, "tp");
    c->g_cp = lw_group(c, PLC_DIM_CP, 0, "cp");
    c->g_dpcp = lw_group(c, PLC_DIM_DP | PLC_DIM_CP, 0, "dp_cp");
    /* tied embeddings: the copies at the pipeline's ends, one when a rank
     * holds both (zb_v and dualpipe_v put chunks 0 and 2pp-1 on rank 0) */
    const lw_sched *s = &c->sched;
    bool apart = s->owner[0] != s->owner[s->nchunks - 1];
    c->g_embed = c->m.tie_embeddings && apart ? lw_group(c, PLC_DIM_PP, PLC_GROUP_PP_ENDS, "embed") : -1;
}

/* ---- one stage ------------------------------------------------------------------- */

static void send(lw_ctx *c, int32_t b, int32_t peer)
{
    int32_t i = lw_emit(c->P, PLC_OP_SEND, PLC_STREAM_COMM, LW_B(b), LW_A(c->Rs * c->h), 0.0);
    lw_last(c->P)->peer = peer;
    c->unit_send[c->unit_k] = i;
}

/* The input a unit receives from another stage, if any: its peer, or -1. */
static int32_t recv_peer(const lw_ctx *c, const lw_unit *u)
{
    const lw_sched *s = &c->sched;
    int64_t ch = u->chunk;
    if (u->w) return -1; /* a W needs only what its B kept */
    if (!u->bwd) return ch > 0 && s->owner[ch - 1] != c->stage ? s->owner[ch - 1] : -1;
    return ch < s->nchunks - 1 && s->owner[ch + 1] != c->stage ? s->owner[ch + 1] : -1;
}

/* Posts the RECV of unit u on the comm stream one unit early, so that the
 * transfer overlaps the current unit; the unit waits for it when it starts. */
static void prepost_recv(lw_ctx *c, const lw_unit *u)
{
    c->pre_buf = c->pre_op = -1;
    int32_t peer = recv_peer(c, u);
    if (peer < 0) return;
    const lw_sched *s = &c->sched;
    plc_phase saved = c->P->phase;
    int32_t layer = c->P->layer, micro = c->P->micro;
    lw_where(c->P, u->bwd ? PLC_PHASE_BACKWARD : PLC_PHASE_FORWARD,
             (int32_t)(u->bwd ? s->chunk_hi[u->chunk] - 1 : s->chunk_lo[u->chunk]), u->micro);
    c->pre_buf = lw_buf_here(c->P, c->m.layers, PLC_BUF_COMM, c->act_dt, c->Rs, c->h, u->bwd ? "dx_recv" : "x_recv");
    c->pre_op = lw_emit(c->P, PLC_OP_RECV, PLC_STREAM_COMM, LW_B(c->pre_buf), LW_A(c->Rs * c->h), 0.0);
    lw_last(c->P)->peer = peer;
    lw_where(c->P, saved, layer, micro);
}

/* the input received for the unit starting now (posted by prepost_recv) */
static int32_t take_recv(lw_ctx *c)
{
    lw_emit(c->P, PLC_OP_WAIT, PLC_STREAM_COMPUTE, NULL, 0, LW_NOARGS, 0.0);
    lw_last(c->P)->wait = c->pre_op;
    return c->pre_buf;
}

static void load_data(lw_ctx *c, bool *loaded, int64_t m)
{
    if (loaded[m]) return;
    loaded[m] = true;
    lw_where(c->P, PLC_PHASE_DATA, -1, (int32_t)m);
    c->tokens[m] = lw_buf(c->P, PLC_BUF_DATA, PLC_I32, c->R, 1, "m%lld.tokens", (long long)m);
    c->targets[m] = lw_buf(c->P, PLC_BUF_DATA, PLC_I32, c->R, 1, "m%lld.targets", (long long)m);
    lw_emit(c->P, PLC_OP_DATA_LOAD, PLC_STREAM_COMPUTE, LW_B(c->tokens[m], c->targets[m]), LW_A(m, c->mb, c->Sl), 0.0);
}

static void sync_key(lw_ctx *c, int32_t key)
{
    int64_t ids[LW_KEY_TENSORS];
    int n = lw_key_tensors(c, key, ids);
    if (n) lw_grad_sync(c, c->bucket[key + 1], ids, n);
}

static void run_unit(lw_ctx *c, const lw_unit *u, const lw_unit *next, bool *loaded)
{
    const lw_sched *s = &c->sched;
    int64_t ch = u->chunk, m = u->micro, nc = s->nchunks;
    int64_t lo = s->chunk_lo[ch], hi = s->chunk_hi[ch];
    int32_t me = (int32_t)c->stage;
    /* the send of unit k - lag must have completed (plc_pipe_send_lag) */
    int64_t done = c->unit_k - c->send_lag;
    if (done >= 0 && c->unit_send[done] >= 0) {
        lw_emit(c->P, PLC_OP_WAIT, PLC_STREAM_COMPUTE, NULL, 0, LW_NOARGS, 0.0);
        lw_last(c->P)->wait = c->unit_send[done];
    }
    /* this unit's input arrived during the previous unit; post the next one's */
    int32_t received = -1;
    if (recv_peer(c, u) >= 0) {
        lw_where(c->P, u->bwd ? PLC_PHASE_BACKWARD : PLC_PHASE_FORWARD, (int32_t)(u->bwd ? hi - 1 : lo), (int32_t)m);
        received = take_recv(c);
    }
    if (next) prepost_recv(c, next);
    else c->pre_buf = c->pre_op = -1;

    bool last = c->last_bwd_micro[ch] == m;
    if (u->w) { /* the weight gradients its B left, key by key as B visited them */
        if (ch == nc - 1) { /* the head's came with its loss, its final norm's with B */
            lw_where(c->P, PLC_PHASE_BACKWARD, (int32_t)c->m.layers, (int32_t)m);
            lw_switch_layer(c, (int32_t)c->m.layers);
            lw_visit_end(c);
            if (last) sync_key(c, (int32_t)c->m.layers);
        }
        for (int64_t l = hi - 1; l >= lo; l--) {
            lw_layer_bwd_w(c, l, m);
            if (last) sync_key(c, (int32_t)l);
        }
        if (ch == 0) {
            lw_embed_bwd(c, m, c->dx_in[m]);
            if (last) sync_key(c, -1);
        }
        return;
    }
    if (!u->bwd) {
        if (ch == 0 || ch == nc - 1) load_data(c, loaded, m);
        int32_t x;
        if (ch == 0) {
            x = lw_embed_fwd(c, m);
        } else if (s->owner[ch - 1] != me) {
            x = received;
        } else {
            x = c->x_out[(ch - 1) * c->M + m];
        }
        for (int64_t l = lo; l < hi; l++) x = lw_layer_fwd(c, l, m, x, false);
        if (ch == nc - 1) {
            lw_head_fwd_bwd(c, m, x);
        } else if (s->owner[ch + 1] != me) {
            lw_where(c->P, PLC_PHASE_FORWARD, (int32_t)(hi - 1), (int32_t)m);
            send(c, x, s->owner[ch + 1]);
        } else {
            c->x_out[ch * c->M + m] = x;
        }
        return;
    }
    bool split = c->sched.sh.split != PLC_SPLIT_NONE; /* B only: the grads are synced after the W's */
    if (split) last = false;
    c->defer_w = split;
    int32_t dx;
    if (ch == nc - 1) {
        dx = lw_head_bwd(c, m);
        if (last) sync_key(c, (int32_t)c->m.layers);
    } else if (s->owner[ch + 1] != me) {
        dx = received;
    } else {
        dx = c->dx_in[(ch + 1) * c->M + m];
    }
    for (int64_t l = hi - 1; l >= lo; l--) {
        dx = split ? lw_layer_bwd_b(c, l, m, dx) : lw_layer_bwd(c, l, m, dx);
        if (last) sync_key(c, (int32_t)l);
    }
    c->defer_w = false;
    if (ch == 0 && split) { /* the embedding's gradients are all W's: its visit waits for them */
        c->dx_in[m] = dx;
        lw_where(c->P, PLC_PHASE_BACKWARD, -1, (int32_t)m);
        lw_switch_layer(c, -1);
        lw_visit_end(c);
    } else if (ch == 0) {
        lw_embed_bwd(c, m, dx);
        if (last) sync_key(c, -1);
    } else if (s->owner[ch - 1] != me) {
        lw_where(c->P, PLC_PHASE_BACKWARD, (int32_t)lo, (int32_t)m);
        send(c, dx, s->owner[ch - 1]);
    } else {
        c->dx_in[ch * c->M + m] = dx;
    }
}

static plc_status lower_all(lw_ctx *c, plc_plan *out, plc_memplan_stats *stage_stats);

static int lower_stage(lw_ctx *c, int64_t stage, plc_program *out, plc_memplan_stats *st)
{
    plc_arena *a = c->a;
    lw_prog *P = PLC_NEW(a, lw_prog);
    P->a = a;
    c->P = P;
    c->stage = stage;
    c->cur_key = -2;
    c->npend = 0;
    c->nout = 0;
    int64_t M = c->M, nc = c->sched.nchunks, L = c->m.layers;
    c->T = PLC_NEW_ARRAY(a, lw_tensor, c->ntensors);
    c->acts = PLC_NEW_ARRAY(a, lw_act, L * M);
    c->x_out = PLC_NEW_ARRAY(a, int32_t, nc * M);
    c->dx_in = PLC_NEW_ARRAY(a, int32_t, nc * M);
    c->tokens = PLC_NEW_ARRAY(a, int32_t, M);
    c->targets = PLC_NEW_ARRAY(a, int32_t, M);
    c->head_dx = PLC_NEW_ARRAY(a, int32_t, M);
    c->head_x = PLC_NEW_ARRAY(a, int32_t, M);
    c->head_rstd = PLC_NEW_ARRAY(a, int32_t, M);
    c->head_mean = PLC_NEW_ARRAY(a, int32_t, M);
    c->last_bwd_micro = PLC_NEW_ARRAY(a, int32_t, nc);
    c->bucket = PLC_NEW_ARRAY(a, int32_t, L + 2);
    int64_t nunits = c->sched.norder[stage];
    c->unit_send = PLC_NEW_ARRAY(a, int32_t, nunits ? nunits : 1);
    for (int64_t i = 0; i < nunits; i++) c->unit_send[i] = -1;
    for (int64_t i = 0; i < nc; i++) c->last_bwd_micro[i] = -1;
    const lw_unit *order = c->sched.order[stage];
    bool split = c->sched.sh.split != PLC_SPLIT_NONE;
    for (int64_t i = 0; i < c->sched.norder[stage]; i++) /* the last unit making each chunk's weight gradients */
        if (split ? order[i].w : order[i].bwd) c->last_bwd_micro[order[i].chunk] = order[i].micro;
    c->wops = split ? PLC_NEW_ARRAY(a, lw_wop, L * M * LW_LAYER_WOPS) : NULL;
    c->nwops = split ? PLC_NEW_ARRAY(a, int32_t, L * M) : NULL;
    c->defer_w = false;

    lw_setup_tensors(c);
    bool last_stage = c->sched.owner[nc - 1] == stage;
    c->loss_buf = -1;
    if (last_stage) {
        c->loss_buf = lw_buf(P, PLC_BUF_SCALAR, PLC_F64, 1, 1, "loss_sum");
        P->persistent[c->loss_buf] = true;
    }
    c->gnorm_buf = lw_buf(P, PLC_BUF_SCALAR, PLC_F64, 1, 1, "grad_sumsq");
    P->persistent[c->gnorm_buf] = true;

    lw_step_begin(c);
    bool *loaded = PLC_NEW_ARRAY(a, bool, M);
    if (nunits) prepost_recv(c, &order[0]);
    c->visit = 0;
    c->visit_bad = false;
    for (int64_t i = 0; i < nunits; i++) {
        c->unit_k = i;
        c->visit_i = 0;
        run_unit(c, &order[i], i + 1 < nunits ? &order[i + 1] : NULL, loaded);
        if (c->visit_i != plc_pipe_visits(&c->sched.sh, &order[i])) c->visit_bad = true;
    }
    for (int64_t k = nunits - c->send_lag > 0 ? nunits - c->send_lag : 0; k < nunits; k++)
        if (c->unit_send[k] >= 0) lw_track(c, c->unit_send[k]);
    if (!c->tpl) lw_epilogue(c); /* a template's figures are its visits' */
    if (c->visit_bad) {
        snprintf(c->err, c->errlen, "stage %lld's layer visits are not its pipeline order's, or left gradient blocks open",
                 (long long)stage);
        return -1;
    }

    memset(out, 0, sizeof *out);
    out->buffers = P->bufs;
    out->nbuffers = P->nbufs;
    out->instrs = P->ins;
    out->ninstrs = P->nins;
    out->loss_buf = c->loss_buf;
    out->gnorm_buf = c->gnorm_buf;
    int rc = 0;
    if (!c->place || c->place[stage]) rc = plc_memplan(out, P->persistent, P->alias_first, P->alias_last, st, c->err, c->errlen);
    else memset(st, 0, sizeof *st);
    if (c->tpl) c->tpl->persistent = P->persistent, P->persistent = NULL; /* the template's measure reads them */
    lw_prog_finish(P, out);
    return rc;
}

static plc_status lower_placing(const plc_job *job, const plc_layout *layout, const plc_prediction *pred,
                                plc_arena *a, const bool *place, plc_plan *out, plc_memplan_stats *stage_stats,
                                char *err, size_t errlen);

plc_status plc_lower(const plc_job *job, const plc_layout *layout, const plc_prediction *pred, plc_arena *a,
                     plc_plan *out, plc_memplan_stats *stage_stats, char *err, size_t errlen)
{
    return lower_placing(job, layout, pred, a, NULL, out, stage_stats, err, errlen);
}

/* the judge lowers every stage (the pipeline check picks the sends' lag
 * from all of them) and plans the memory of the stages asked for only: the
 * placement is most of the lowering's time */
int plc_lower_arena(void *ctx, const plc_job *job, const plc_layout *l, const bool *stages, double *arena_bytes)
{
    (void)ctx;
    /* a step too long to lower within a solve keeps its estimate */
    if (l->dp < 1 || l->micro_batch < 1 ||
        2.0 * (double)(job->train.global_batch / (l->dp * l->micro_batch)) * (double)(l->pp * l->vpp) >
            PLC_LOWER_ARENA_MAX_UNITS)
        return -1;
    plc_arena a;
    plc_arena_init(&a);
    plc_plan p;
    char err[512];
    int rc = lower_placing(job, l, NULL, &a, stages, &p, NULL, err, sizeof err) == PLC_OK ? 0 : -1;
    for (uint32_t s = 0; rc == 0 && s < p.nprograms; s++) arena_bytes[s] = (double)p.programs[s].arena_bytes;
    plc_arena_free(&a);
    return rc;
}

int lw_lower_template(const plc_job *job, const plc_layout *l, plc_arena *a, lw_template *t, plc_program *out,
                      char *err, size_t errlen)
{
    static const bool unplaced[1] = {false};
    lw_ctx *c = PLC_NEW(a, lw_ctx);
    c->job = job;
    c->m = job->model;
    c->m.layers = 1;
    c->L = *l;
    c->L.pp = c->L.vpp = 1;
    c->L.schedule = PLC_SCHED_1F1B;
    c->gpt = c->m.arch == PLC_ARCH_GPT;
    c->learned_pos = c->m.positions == PLC_POS_LEARNED;
    c->a = a;
    c->err = err;
    c->errlen = errlen;
    c->place = unplaced;
    c->tpl = t;
    if (too_large(c)) return -1;
    sizes(c);
    c->M = 1; /* one micro-batch: the step's batch does not shape a layer */
    if (job->train.precision == PLC_PREC_FP8) c->act_dt = c->param_dt = PLC_BF16; /* as solved: fp8 matmuls, bf16 activations */
    if (c->m.moe.experts > 0) c->m.moe.dense_layers = 0; /* the template's layer is an MoE layer, as most are */
    if (lw_moe_sizes(c)) return -1;
    c->ntensors = plc_tensor_count(&c->m);
    if (lw_schedule_build(&c->L, c->m.layers, c->M, a, &c->sched, err, errlen)) return -1;
    c->send_lag = plc_pipe_send_lag(&c->sched.sh, c->M);
    groups(c);
    plc_memplan_stats st;
    return lower_stage(c, 0, out, &st);
}

static plc_status lower_placing(const plc_job *job, const plc_layout *layout, const plc_prediction *pred,
                                plc_arena *a, const bool *place, plc_plan *out, plc_memplan_stats *stage_stats,
                                char *err, size_t errlen)
{
    /* the model block describes latent attention (docs/model.md); the
     * lowering has no instructions for it yet (mixture-of-experts layers:
     * plc_lower_model_check, lower_moe.c) */
    if (job->model.mla.kv_rank > 0) {
        snprintf(err, errlen, "the model has latent attention: the lowering has no instructions for its projections yet");
        return PLC_E_INPUT;
    }
    if (plc_model_plrun_heads(&job->model, err, errlen)) return PLC_E_INPUT;
    lw_ctx *c = PLC_NEW(a, lw_ctx);
    c->place = place;
    c->job = job;
    c->gpt = job->model.arch == PLC_ARCH_GPT;
    c->learned_pos = job->model.positions == PLC_POS_LEARNED;
    c->m = job->model;
    c->L = *layout;
    c->a = a;
    c->err = err;
    c->errlen = errlen;
    if (derive(c)) return PLC_E_INPUT;
    c->ntensors = plc_tensor_count(&c->m);
    if (lw_schedule_build(&c->L, c->m.layers, c->M, a, &c->sched, err, errlen)) return PLC_E_INTERNAL;

    memset(out, 0, sizeof *out);
    out->version = PLC_PLAN_VERSION;
    out->spec_path = job->path ? plc_path_base(job->path) : NULL; /* the file name: not the cwd's view of it */
    out->spec_source = job->source;
    out->spec_len = job->source ? job->source_len : 0;
    out->spec_hash = plc_fnv1a64(job->source ? job->source : "", out->spec_len);
    out->model = job->model;
    out->train = job->train;
    out->hw = job->cluster.hw;
    out->nodes = job->cluster.nodes;
    out->gpus_per_node = job->cluster.gpus_per_node;
    out->layout = c->L;
    out->constraints = job->layout;
    if (pred) out->pred = *pred;
    out->world_size = c->L.dp * c->L.tp * c->L.pp * c->L.cp;
    /* Sends are waited for plc_pipe_send_lag units after they start, which
     * keeps their buffers short-lived and every rank moving; a plan the
     * check below still finds deadlocked waits for them at the end of the
     * step. */
    for (int attempt = 0; attempt < 2; attempt++) {
        c->send_lag = attempt == 0 ? plc_pipe_send_lag(&c->sched.sh, c->M) : INT64_MAX / 2;
        groups(c);
        plc_status rc = lower_all(c, out, stage_stats);
        if (rc != PLC_E_DEADLOCK || attempt == 1) return rc;
    }
    return PLC_E_INTERNAL;
}

/* lowers every stage into *out; PLC_E_DEADLOCK: retry with sends waited
 * for at the end of the step */
static plc_status lower_all(lw_ctx *c, plc_plan *out, plc_memplan_stats *stage_stats)
{
    plc_arena *a = c->a;
    char *err = c->err;
    size_t errlen = c->errlen;
    out->nprograms = (uint32_t)c->L.pp;
    out->programs = PLC_NEW_ARRAY(a, plc_program, c->L.pp);
    out->stage_program = PLC_NEW_ARRAY(a, int32_t, c->L.pp);
    double peak = 0;
    for (int64_t s = 0; s < c->L.pp; s++) {
        plc_memplan_stats st;
        if (lower_stage(c, s, &out->programs[s], &st)) return PLC_E_INTERNAL;
        if (stage_stats) stage_stats[s] = st;
        out->stage_program[s] = (int32_t)s;
        if ((double)out->programs[s].arena_bytes > peak) peak = (double)out->programs[s].arena_bytes;
    }
    out->pred.peak_bytes_plan = peak;
    out->ngroups = c->ngroups;
    out->groups = PLC_NEW_ARRAY(a, plc_group, c->ngroups ? c->ngroups : 1);
    memcpy(out->groups, c->groups, sizeof *out->groups * c->ngroups);

    char inner[400];
    if (c->place) { /* the judge's lowering: does every rank finish? */
        plc_status st = plc_plan_check_finishes(out, inner, sizeof inner);
        if (st != PLC_OK) snprintf(err, errlen, "the lowered plan fails its check: %s", inner);
        return st;
    }
    if (plc_plan_validate(out, inner, sizeof inner)) {
        snprintf(err, errlen, "the lowered plan is invalid: %s", inner);
        return PLC_E_INTERNAL;
    }
    plc_status st = plc_plan_check(out, inner, sizeof inner);
    if (st != PLC_OK) snprintf(err, errlen, "the lowered plan fails its check: %s", inner);
    return st;
}
