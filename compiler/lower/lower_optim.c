/* lower_optim.c: the persistent state of a stage (parameters, gradients,
 * optimizer state, laid out by ZeRO stage) and the two ends of the step:
 * zeroing the accumulators first, and the optimizer epilogue last (global
 * gradient norm, clipping, AdamW, parameter all-gathers). */
#include <string.h>

#include "compiler/lower/lower_int.h"

#define TID(role, l) plc_tensor_id(&c->m, (role), (l))

static bool owns_chunk(const lw_ctx *c, int64_t chunk) { return c->sched.owner[chunk] == c->stage; }

int lw_key_tensors(const lw_ctx *c, int32_t key, int64_t out[LW_KEY_TENSORS])
{
    int n = 0;
    if (key == -1) {
        if (owns_chunk(c, 0)) {
            out[n++] = TID(PLC_ROLE_TOK_EMB, 0);
            if (c->learned_pos) out[n++] = TID(PLC_ROLE_POS_EMB, 0);
        }
    } else if (key == (int32_t)c->m.layers) {
        if (owns_chunk(c, c->sched.nchunks - 1)) {
            out[n++] = TID(PLC_ROLE_FINAL_NORM, 0);
            if (c->gpt) out[n++] = TID(PLC_ROLE_FINAL_NORM_B, 0);
            if (!c->m.tie_embeddings) out[n++] = TID(PLC_ROLE_LM_HEAD, 0);
            else if (!owns_chunk(c, 0)) out[n++] = TID(PLC_ROLE_TOK_EMB, 0);
        }
    } else {
        /* a layer's tensors have consecutive ids, its first norm first */
        int64_t first = TID(PLC_ROLE_ATTN_NORM, key), per = plc_layer_tensor_count(&c->m, key);
        for (int64_t i = 0; i < per; i++) out[n++] = first + i;
    }
    return n;
}

static void describe(lw_ctx *c, int32_t b, const lw_tensor *t, bool flat)
{
    plc_buffer *x = &c->P->bufs[b];
    x->tensor = (int32_t)t->info.id;
    x->shard = t->shard;
    x->shard_dims = t->shard == PLC_SHARD_NONE ? 0 : PLC_DIM_TP;
    x->nshards = t->shard == PLC_SHARD_NONE ? 1 : c->L.tp;
    if (flat) {
        x->flat_dims = PLC_DIM_DP | PLC_DIM_CP;
        x->flat_shards = c->nz;
    }
}

static int32_t persistent(lw_ctx *c, plc_buf_kind kind, plc_dtype dt, const lw_tensor *t, bool flat, const char *suffix)
{
    int32_t b = flat ? lw_buf(c->P, kind, dt, 1, t->chunk, "%s%s", t->info.name, suffix)
                     : lw_buf_padded(c->P, kind, dt, t->rows, t->cols, t->chunk * c->nz, "%s%s", t->info.name, suffix);
    describe(c, b, t, flat);
    c->P->persistent[b] = true;
    return b;
}

void lw_setup_tensors(lw_ctx *c)
{
    int64_t L = c->m.layers;
    memset(c->T, 0, sizeof *c->T * (size_t)c->ntensors);
    /* which tensors live here */
    for (int32_t key = -1; key <= (int32_t)L; key++) {
        bool here = key < 0 || key == L;
        for (int64_t ch = 0; !here && ch < c->sched.nchunks; ch++)
            if (owns_chunk(c, ch) && key >= c->sched.chunk_lo[ch] && key < c->sched.chunk_hi[ch]) here = true;
        if (!here) continue;
        int64_t ids[LW_KEY_TENSORS];
        int n = lw_key_tensors(c, key, ids);
        for (int i = 0; i < n; i++) {
            lw_tensor *t = &c->T[ids[i]];
            t->present = true;
            plc_tensor_get(&c->m, ids[i], &t->info);
            t->shard = c->L.tp > 1 ? plc_tensor_tp_split(t->info.role) : PLC_SHARD_NONE;
            t->tp_sharded = t->shard != PLC_SHARD_NONE;
            /* blocks are padded where tp does not divide (the vocabulary) */
            t->rows = plc_shard_block(t->info.shape[0], t->shard == PLC_SHARD_ROWS ? c->L.tp : 1);
            t->cols = plc_shard_block(t->info.shape[1], t->shard == PLC_SHARD_COLS ? c->L.tp : 1);
            t->n = t->rows * t->cols;
            t->chunk = (t->n + c->nz - 1) / c->nz;
            t->gathered = t->full_grad = t->grad_shard = t->sync_op = -1;
            t->master = -1;
        }
    }
    bool bf16 = c->param_dt == PLC_BF16;
    /* parameters */
    for (int64_t id = 0; id < c->ntensors; id++)
        if (c->T[id].present) c->T[id].param = persistent(c, PLC_BUF_PARAM, c->param_dt, &c->T[id], c->zero == 3, "");
    /* gradients, bucket by bucket, each bucket followed by its alias */
    for (int32_t key = -1; key <= (int32_t)L; key++) {
        int64_t ids[LW_KEY_TENSORS];
        int n = lw_key_tensors(c, key, ids), k = 0;
        int32_t first = -1, last = -1;
        for (int i = 0; i < n; i++) {
            lw_tensor *t = &c->T[ids[i]];
            if (!t->present) continue;
            t->grad = persistent(c, PLC_BUF_GRAD, c->grad_dt, t, c->zero >= 2, ".grad");
            if (first < 0) first = t->grad;
            last = t->grad;
            k++;
        }
        c->bucket[key + 1] = -1;
        if (!k) continue;
        const char *name = key < 0 ? "embed" : key == L ? "head" : NULL;
        /* the members are laid out back to back, each PLC_PLAN_ALIGN-aligned (memplan.c) */
        uint64_t span = 0;
        for (int32_t m = first; m <= last; m++)
            span = m == last ? span + c->P->bufs[m].bytes
                             : (span + c->P->bufs[m].bytes + PLC_PLAN_ALIGN - 1) / PLC_PLAN_ALIGN * PLC_PLAN_ALIGN;
        int64_t cols = (int64_t)(span / plc_dtype_size(c->grad_dt));
        int32_t b = name ? lw_buf(c->P, PLC_BUF_GRAD, c->grad_dt, 1, cols, "%s.grad_bucket", name)
                         : lw_buf(c->P, PLC_BUF_GRAD, c->grad_dt, 1, cols, "layers.%d.grad_bucket", key);
        c->P->persistent[b] = true;
        c->P->alias_first[b] = first;
        c->P->alias_last[b] = last;
        c->bucket[key + 1] = b;
    }
    /* optimizer state: fp32 master where the parameters are not it (job.h) */
    for (int64_t id = 0; id < c->ntensors; id++) {
        lw_tensor *t = &c->T[id];
        if (!t->present) continue;
        if (plc_plrun_keeps_master(bf16, c->zero, c->nz)) t->master = persistent(c, PLC_BUF_MASTER, PLC_F32, t, c->zero >= 1, ".master");
        t->m = persistent(c, PLC_BUF_ADAM_M, PLC_F32, t, c->zero >= 1, ".adam_m");
        t->v = persistent(c, PLC_BUF_ADAM_V, PLC_F32, t, c->zero >= 1, ".adam_v");
    }
}

void lw_step_begin(lw_ctx *c)
{
    lw_where(c->P, PLC_PHASE_DATA, -1, -1);
    if (c->loss_buf >= 0) lw_emit(c->P, PLC_OP_ZERO, PLC_STREAM_COMPUTE, LW_B(c->loss_buf), LW_NOARGS, 0.0);
    for (int64_t k = 0; k < c->m.layers + 2; k++)
        if (c->bucket[k] >= 0) lw_emit(c->P, PLC_OP_ZERO, PLC_STREAM_COMPUTE, LW_B(c->bucket[k]), LW_NOARGS, 0.0);
}

/* the gradient buffer the optimizer reads */
static int32_t final_grad(const lw_ctx *c, const lw_tensor *t) { return c->zero == 1 ? t->grad_shard : t->grad; }

static int64_t opt_count(const lw_ctx *c, const lw_tensor *t) { return c->zero >= 1 ? t->chunk : t->n; }

static void allreduce(lw_ctx *c, int32_t group, int32_t b, int64_t count)
{
    if (group < 0) return;
    lw_emit(c->P, PLC_OP_ALLREDUCE, PLC_STREAM_COMPUTE, LW_B(b), LW_A(count, 0), 0.0);
    lw_last(c->P)->group = group;
}

void lw_epilogue(lw_ctx *c)
{
    lw_prog *P = c->P;
    lw_where(P, PLC_PHASE_GRAD_SYNC, -1, -1);
    lw_switch_layer(c, -2); /* ZeRO 2/3: reduce-scatter what is pending */
    lw_flush_pending(c);
    lw_wait_all(c);
    bool first = owns_chunk(c, 0), last = owns_chunk(c, c->sched.nchunks - 1);

    /* tied embeddings over pipeline ends: both copies get the summed gradient */
    if (c->m.tie_embeddings && c->g_embed >= 0 && (first || last)) {
        lw_tensor *t = &c->T[TID(PLC_ROLE_TOK_EMB, 0)];
        allreduce(c, c->g_embed, final_grad(c, t), opt_count(c, t));
    }
    /* sequence parallelism: norm weights saw only this rank's rows */
    if (c->sp && c->g_tp >= 0)
        for (int64_t id = 0; id < c->ntensors; id++) {
            lw_tensor *t = &c->T[id];
            if (t->present && !t->tp_sharded) allreduce(c, c->g_tp, final_grad(c, t), opt_count(c, t));
        }

    /* global norm: each element counted once. tp-sharded tensors are summed
     * over tp first; tp-replicated ones (norm weights) are then added once per
     * tp group; the sum then runs over the pipeline (and over dp x cp when
     * ZeRO shards the gradients). The last stage skips its tied copy. */
    lw_where(P, PLC_PHASE_OPTIMIZER, -1, -1);
    int32_t acc = c->gnorm_buf;
    lw_emit(P, PLC_OP_ZERO, PLC_STREAM_COMPUTE, LW_B(acc), LW_NOARGS, 0.0);
    int64_t tok = TID(PLC_ROLE_TOK_EMB, 0);
    for (int pass = 0; pass < 2; pass++) {
        for (int64_t id = 0; id < c->ntensors; id++) {
            lw_tensor *t = &c->T[id];
            if (!t->present || t->tp_sharded != (pass == 0)) continue;
            if (id == tok && !first) continue;
            lw_emit(P, PLC_OP_SUMSQ, PLC_STREAM_COMPUTE, LW_B(acc, final_grad(c, t)), LW_A(opt_count(c, t)), 0.0);
        }
        if (pass == 0) allreduce(c, c->g_tp, acc, 1);
    }
    uint32_t dims = PLC_DIM_PP | (c->zero >= 1 ? PLC_DIM_DP | PLC_DIM_CP : 0);
    allreduce(c, lw_group(c, dims, 0, c->zero >= 1 ? "dp_cp_pp" : "pp"), acc, 1);
    int32_t scale = lw_buf(P, PLC_BUF_SCALAR, PLC_F32, 1, 1, "clip_scale");
    lw_emit(P, PLC_OP_CLIP_SCALE, PLC_STREAM_COMPUTE, LW_B(scale, acc), LW_NOARGS, c->job->train.grad_clip);

    /* AdamW, then the gathers that rebuild whole parameters from shards */
    for (int64_t id = 0; id < c->ntensors; id++) {
        lw_tensor *t = &c->T[id];
        if (!t->present) continue;
        lw_where(P, PLC_PHASE_OPTIMIZER, (int32_t)t->info.layer, -1);
        int64_t n = opt_count(c, t);
        int64_t decay = t->info.weight_decay ? 1 : 0;
        int32_t g = final_grad(c, t);
        if (c->zero == 0 || c->zero == 3) {
            lw_emit(P, PLC_OP_ADAMW, PLC_STREAM_COMPUTE, LW_B(t->param, g, t->m, t->v, scale, t->master),
                    LW_A(n, decay), 0.0);
            continue;
        }
        /* ZeRO 1/2: update the fp32 master shard, all-gather the parameters */
        lw_emit(P, PLC_OP_ADAMW, PLC_STREAM_COMPUTE, LW_B(t->master, g, t->m, t->v, scale, -1), LW_A(n, decay), 0.0);
        int32_t src = t->master;
        if (c->param_dt != PLC_F32) {
            src = lw_buf(P, PLC_BUF_COMM, c->param_dt, 1, t->chunk, "%s.shard_cast", t->info.name);
            lw_emit(P, PLC_OP_CAST, PLC_STREAM_COMPUTE, LW_B(src, t->master), LW_A(t->chunk), 0.0);
        }
        lw_emit(P, PLC_OP_ALLGATHER, PLC_STREAM_COMM, LW_B(t->param, src), LW_A(t->chunk), 0.0);
        lw_last(P)->group = c->g_dpcp;
        lw_track(c, (int32_t)P->nins - 1);
    }
    lw_where(P, PLC_PHASE_OPTIMIZER, -1, -1);
    lw_wait_all(c);
}
