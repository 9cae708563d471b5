/* plan_dump.c: plc dump's text form. */
#include "compiler/plantools/plantools_int.h"

#include <inttypes.h>

#include "common/plan_io.h"
#include "common/tokfile_format.h"

/* a group's PLC_DIM_* bits by the layout dimensions' names */
static void dims_text(FILE *out, uint32_t dims)
{
    static const plc_layout_dim bit_dim[4] = {PLC_LD_tp, PLC_LD_cp, PLC_LD_dp, PLC_LD_pp}; /* PLC_DIM_TP .. _PP */
    int any = 0;
    for (int i = 0; i < 4; i++)
        if (dims & (1u << i)) {
            fprintf(out, "%s%s", any ? "," : "", plc_layout_dim_key(bit_dim[i]));
            any = 1;
        }
    if (!any) fputc('-', out);
}

void plc_dump_header(FILE *out, const plc_plan *p)
{
    const plc_model *m = &p->model;
    const plc_layout *l = &p->layout;
    const plc_train *t = &p->train;
    fprintf(out, "plan version %u\n", p->version);
    fprintf(out, "spec %s (%" PRIu64 " bytes, fnv1a64 %016" PRIx64 ")\n", p->spec_path ? p->spec_path : "-", p->spec_len,
            p->spec_hash);
    fprintf(out, "model %s: layers=%lld hidden=%lld ffn_hidden=%lld heads=%lld kv_heads=%lld vocab=%lld seq_len=%lld "
                 "tie_embeddings=%s norm_eps=%g rope_theta=%g\n",
            m->name, (long long)m->layers, (long long)m->hidden, (long long)m->ffn_hidden, (long long)m->heads,
            (long long)m->kv_heads, (long long)m->vocab, (long long)m->seq_len, plc_word_onoff(m->tie_embeddings),
            m->norm_eps, m->rope_theta);
    if (m->head_dim > 0 || m->qk_norm) /* a head width of its own, qk-norm (Qwen3) */
        fprintf(out, "heads: head_dim=%lld qk_norm=%s\n", (long long)m->head_dim, plc_word_onoff(m->qk_norm));
    const plc_moe *e = &m->moe;
    if (e->experts > 0) {
        fprintf(out, "moe: experts=%lld experts_per_token=%lld shared_experts=%lld expert_ffn_hidden=%lld "
                     "shared_expert_ffn_hidden=%lld dense_layers=%lld moe_every=%lld router=%s router_groups=%lld "
                     "router_groups_top=%lld route_scale=%g aux_loss=%g expert_bias=%s capacity_factor=",
                (long long)e->experts, (long long)e->top_k, (long long)e->shared_experts, (long long)e->expert_ffn_hidden,
                (long long)e->shared_ffn_hidden, (long long)e->dense_layers, (long long)e->moe_every,
                plc_router_names[e->router], (long long)e->router_groups, (long long)e->router_groups_top, e->route_scale,
                e->aux_loss, plc_word_onoff(e->expert_bias));
        if (e->capacity_factor > 0) fprintf(out, "%g\n", e->capacity_factor);
        else fputs("dropless\n", out);
    }
    const plc_mla *a = &m->mla;
    if (a->kv_rank > 0)
        fprintf(out, "latent attention: q_lora_rank=%lld kv_lora_rank=%lld qk_nope_head_dim=%lld qk_rope_head_dim=%lld "
                     "v_head_dim=%lld\n",
                (long long)a->q_rank, (long long)a->kv_rank, (long long)a->nope_head_dim, (long long)a->rope_head_dim,
                (long long)a->v_head_dim);
    fprintf(out, "train: global_batch=%lld precision=%s steps=%lld seed=%llu lr=%g..%g warmup=%lld decay=%lld "
                 "betas=%g,%g eps=%g weight_decay=%g grad_clip=%g data=%s",
            (long long)t->global_batch, plc_precision_name(t->precision) ? plc_precision_name(t->precision) : "?",
            (long long)t->steps, (unsigned long long)t->seed, t->lr_peak, t->lr_floor, (long long)t->warmup_steps,
            (long long)t->decay_steps, t->beta1, t->beta2, t->eps, t->weight_decay, t->grad_clip,
            t->data_path ? t->data_path : "synthetic");
    if (t->data_path)
        fprintf(out, " (" PLC_TOKFILE_PRINT_FMT ")", (unsigned long long)t->data_size, t->data_crc32);
    fputc('\n', out);
    fprintf(out, "cluster: %s x %lld node%s x %lld per node\n", p->hw.name, (long long)p->nodes,
            plc_word_plural(p->nodes), (long long)p->gpus_per_node);
    char text[512];
    fprintf(out, "layout: %s\n", plc_layout_text(l, text, sizeof text));
    fprintf(out, "predicted: step %.6g s, %.6g tokens/s, MFU %.2f%%, peak %.0f bytes (solver), %.0f bytes (plan)\n",
            p->pred.step_time_s, p->pred.tokens_per_s, 100.0 * p->pred.mfu, p->pred.peak_bytes_estimate,
            p->pred.peak_bytes_plan);
    fprintf(out, "world %lld ranks (rank = tp + tp*(cp + cp*(dp + dp*pp)))\n", (long long)p->world_size);
    for (uint32_t i = 0; i < p->ngroups; i++) {
        fprintf(out, "group %u %s: dims=", i, p->groups[i].name ? p->groups[i].name : "?");
        dims_text(out, p->groups[i].dims);
        fprintf(out, "%s size=%lld\n", p->groups[i].flags & PLC_GROUP_PP_ENDS ? " pipeline-ends" : "",
                (long long)plc_plan_group_size(&p->layout, &p->groups[i]));
    }
    for (int64_t s = 0; s < l->pp; s++) fprintf(out, "stage %lld: program %d\n", (long long)s, p->stage_program[s]);
}

static const char *buf_name(const plc_program *g, int32_t b) { return g->buffers[b].name ? g->buffers[b].name : "?"; }

static void dump_buffer(FILE *out, const plc_program *g, uint32_t i)
{
    const plc_buffer *b = &g->buffers[i];
    fprintf(out, "  buf %u %s %s %s [%lld x %lld] @%" PRIu64 " +%" PRIu64, i, buf_name(g, (int32_t)i),
            plc_buf_kind_name(b->kind), plc_dtype_name(b->dtype), (long long)b->rows, (long long)b->cols, b->offset,
            b->bytes);
    if (b->tensor >= 0) {
        fprintf(out, " tensor=%d", b->tensor);
        if (b->shard != PLC_SHARD_NONE) {
            static const char *const k[] = {"none", "rows", "cols", "flat"};
            fprintf(out, " shard=%s/", k[b->shard]);
            dims_text(out, b->shard_dims);
            fprintf(out, "/%lld", (long long)b->nshards);
        }
        if (b->flat_shards > 1) {
            fprintf(out, " zero=");
            dims_text(out, b->flat_dims);
            fprintf(out, "/%lld", (long long)b->flat_shards);
        }
    }
    fputc('\n', out);
}

void plc_dump_instr(FILE *out, const plc_plan *p, const plc_program *g, uint32_t index, bool numbered)
{
    const plc_instr *in = &g->instrs[index];
    char where[24];
    if (in->layer < 0) snprintf(where, sizeof where, "-");
    else if (in->layer == p->model.layers) snprintf(where, sizeof where, "head");
    else snprintf(where, sizeof where, "L%d", in->layer);
    char micro[16];
    if (in->micro < 0) snprintf(micro, sizeof micro, "-");
    else snprintf(micro, sizeof micro, "m%d", in->micro);
    if (numbered) fprintf(out, "%6u ", index);
    fprintf(out, "%-9s %-5s %-4s %s%s", plc_phase_name(in->phase), where, micro,
            in->stream == PLC_STREAM_COMM ? "comm:" : "", plc_op_name(in->op));
    int nb = 0;
    for (int k = 0; k < PLC_INSTR_BUFS; k++)
        if (in->buf[k] >= 0) nb = k + 1;
    for (int k = 0; k < nb; k++) fprintf(out, "%s%s", k ? ", " : " ", in->buf[k] >= 0 ? buf_name(g, in->buf[k]) : "-");
    int na = 0;
    for (int k = 0; k < PLC_INSTR_ARGS; k++)
        if (in->arg[k]) na = k + 1;
    if (na) {
        fprintf(out, " (");
        for (int k = 0; k < na; k++) fprintf(out, "%s%lld", k ? " " : "", (long long)in->arg[k]);
        fputc(')', out);
    }
    if (in->farg[0] != 0 || in->farg[1] != 0) fprintf(out, " f=%.9g", in->farg[0]);
    if (in->farg[1] != 0) fprintf(out, ",%.9g", in->farg[1]);
    if (in->group >= 0) fprintf(out, " group=%s", p->groups[in->group].name ? p->groups[in->group].name : "?");
    if (in->peer >= 0) fprintf(out, " peer=%d", in->peer);
    if (in->wait >= 0 && numbered) fprintf(out, " wait=%d", in->wait);
    if (in->wait >= 0 && !numbered) fprintf(out, " wait=%d back", (int)index - in->wait);
}

/* rows [start, end) of a table, loops shown once: their first iteration
 * between "loop Nx {" and "}" (folds in order of first, plan.h) */
typedef struct fold_walk {
    FILE *out;
    const plc_plan *p;
    const plc_program *g;
    const plc_fold *folds;
    uint32_t nfolds, next;
    bool instrs, numbered;
} fold_walk;

static void walk_rows(fold_walk *w, uint32_t start, uint32_t end, int depth)
{
    for (uint32_t i = start; i < end;) {
        if (w->next < w->nfolds && w->folds[w->next].first == i) {
            plc_fold f = w->folds[w->next++];
            fprintf(w->out, "%*sloop %ux { # %s %u..%u: %u a time\n", 2 * depth, "", f.count,
                    w->instrs ? "instructions" : "buffers", f.first, f.first + f.count * f.body - 1, f.body);
            walk_rows(w, i, i + f.body, depth + 1);
            fprintf(w->out, "%*s}\n", 2 * depth, "");
            i += f.count * f.body;
            continue;
        }
        fprintf(w->out, "%*s", 2 * depth, "");
        if (w->instrs) {
            plc_dump_instr(w->out, w->p, w->g, i, w->numbered);
            fputc('\n', w->out);
        } else {
            dump_buffer(w->out, w->g, i);
        }
        i++;
    }
}

void plc_dump_program(FILE *out, const plc_plan *p, uint32_t pi, bool with_buffers, bool numbered)
{
    const plc_program *g = &p->programs[pi];
    fprintf(out, "program %u: arena %" PRIu64 " bytes, %u buffers, %u instructions, loss=%s gnorm=%s\n", pi,
            g->arena_bytes, g->nbuffers, g->ninstrs, g->loss_buf >= 0 ? buf_name(g, g->loss_buf) : "-",
            g->gnorm_buf >= 0 ? buf_name(g, g->gnorm_buf) : "-");
    if (with_buffers) {
        fold_walk w = {out, p, g, g->buf_folds, g->nbuf_folds, 0, false, numbered};
        walk_rows(&w, 0, g->nbuffers, 0);
    }
    fold_walk w = {out, p, g, g->instr_folds, g->ninstr_folds, 0, true, numbered};
    walk_rows(&w, 0, g->ninstrs, 0);
}

void plc_dump_plan(FILE *out, const plc_plan *p, int64_t rank, bool with_buffers)
{
    plc_dump_header(out, p);
    if (rank >= 0) {
        plc_rank_coords c = plc_rank_to_coords(&p->layout, rank);
        fprintf(out, "rank %lld: tp=%lld cp=%lld dp=%lld pp=%lld\n", (long long)rank, (long long)c.tp, (long long)c.cp,
                (long long)c.dp, (long long)c.pp);
        plc_dump_program(out, p, (uint32_t)p->stage_program[c.pp], with_buffers, true);
        return;
    }
    for (uint32_t i = 0; i < p->nprograms; i++) plc_dump_program(out, p, i, with_buffers, true);
}
