/* report_yaml.c: the YAML documents of plc solve, explain, scale and
 * compile (--format yaml), written with compiler/yaml_out.
 *
 * Every document opens with plc_version and command, then the job (spec,
 * model, parameters, gpu, gpus, nodes, tokens_per_step, memory_limit,
 * objective). Output is deterministic: the same spec gives the same bytes;
 * the search's wall time appears only with --timing. solve adds the search
 * counts, `winner` (full estimate: time by component, memory by stage and
 * component) and `layouts`: a list ranked best first, each with its rank,
 * the layout's dimensions (as entries of the row), valid, fits, its figures (every valid candidate carries its
 * real prediction, fit or not), reason, and `ties`: the layouts with exactly
 * the same figures folded into that row (--top listings; --all lists every
 * candidate on its own row). compile adds `gates`: one entry per gate
 * checked (name, threshold, value, verdict, the threshold's source; the
 * regression gate with its baseline's figures), empty without gates. */
#include <stdio.h>
#include <string.h>

#include "compiler/cli/cli_int.h"

#include "compiler/solver/solver.h"
#include "compiler/plantools/plantools.h"

void plc_report_yaml_job(plc_yaml *y, const plc_job *job)
{
    plc_yaml_str(y, "spec", job->path ? job->path : "");
    plc_yaml_str(y, "model", job->model.name);
    plc_yaml_num(y, "parameters", (double)plc_params_total(&job->model));
    if (job->model.moe.experts > 0) plc_yaml_num(y, "active_parameters", (double)plc_params_active(&job->model));
    plc_yaml_str(y, "engine", plc_engine_name(job->train.engine));
    plc_yaml_str(y, "engine_profile", job->engine.describes);
    plc_yaml_str(y, "gpu", job->cluster.hw.name);
    plc_yaml_int(y, "gpus", plc_cluster_gpus(&job->cluster));
    plc_yaml_int(y, "nodes", job->cluster.nodes);
    plc_yaml_int(y, "sequences_per_step", job->train.global_batch);
    plc_yaml_int(y, "tokens_per_step", job->train.global_batch * job->model.seq_len);
    plc_yaml_num(y, "memory_limit", job->layout.memory_limit);
    plc_yaml_num(y, "memory_limit_bytes", job->layout.memory_limit * job->cluster.hw.mem_bytes);
    plc_yaml_str(y, "objective", plc_objective_name(job->layout.objective));
}

/* the dimensions as entries of the current mapping */
static void layout_entries(plc_yaml *y, const plc_layout *l)
{
    for (int d = 0; d < PLC_LD_COUNT; d++) {
        const plc_layout_dim dim = (plc_layout_dim)d;
        const int64_t v = plc_layout_get(l, dim);
        const plc_dim_kind k = plc_layout_dim_kind(dim);
        char text[32];
        if (PLC_LAYOUT_MOE_DIM(d) && v <= 1) continue; /* ep, etp: where more than 1 (plc_layout_text) */
        if (k == PLC_DIMK_DEGREE || k == PLC_DIMK_ZERO || k == PLC_DIMK_LAYERS) plc_yaml_int(y, plc_layout_dim_key(dim), v);
        else plc_yaml_str(y, plc_layout_dim_key(dim), plc_layout_value_text(dim, v, text, sizeof text));
    }
}

void plc_report_yaml_layout(plc_yaml *y, const char *key, const plc_layout *l)
{
    plc_yaml_map(y, key);
    layout_entries(y, l);
    plc_yaml_map_end(y);
}

void plc_report_yaml_estimate(plc_yaml *y, const char *key, const plc_estimate *e, const plc_plan *plan)
{
    plc_yaml_map(y, key);
    plc_report_yaml_layout(y, "layout", &e->layout);
    plc_yaml_bool(y, "fits", e->fits);
    plc_yaml_num(y, "step_time_s", e->step_time_s);
    plc_yaml_num(y, "tokens_per_s", e->tokens_per_s);
    plc_yaml_num(y, "mfu", e->mfu);
    plc_yaml_int(y, "micro_batches", e->micro_batches);
    plc_yaml_num(y, "bubble_fraction", e->bubble_fraction);
    plc_yaml_map(y, "time_s");
    for (int c = 0; c < PLC_TIME_COUNT; c++) plc_yaml_num(y, plc_time_component_name((plc_time_component)c), e->time[c]);
    plc_yaml_map_end(y);
    plc_yaml_map(y, "memory");
    plc_yaml_num(y, "limit_bytes", e->limit_bytes);
    plc_yaml_num(y, "peak_bytes", e->peak_bytes);
    plc_yaml_int(y, "peak_stage", e->peak_stage);
    plc_yaml_seq(y, "stages");
    for (int s = 0; s < e->stages; s++) {
        plc_yaml_map(y, NULL);
        plc_yaml_int(y, "stage", s);
        plc_yaml_int(y, "layers", e->stage_layers[s]);
        plc_yaml_num(y, "parameters", e->stage_params[s]);
        double total = 0;
        plc_yaml_map(y, "predicted_bytes");
        for (int c = 0; c < PLC_MEM_COUNT; c++) {
            plc_yaml_num(y, plc_mem_component_name((plc_mem_component)c), e->stage_mem[s][c]);
            total += e->stage_mem[s][c];
        }
        plc_yaml_map_end(y);
        plc_yaml_num(y, "predicted_total_bytes", total);
        if (plan && s < plan->layout.pp)
            plc_yaml_num(y, "plan_arena_bytes", (double)plan->programs[plan->stage_program[s]].arena_bytes);
        plc_yaml_map_end(y);
    }
    plc_yaml_seq_end(y);
    plc_yaml_map_end(y);
    plc_yaml_map_end(y);
}

static void candidate(plc_yaml *y, int rank, const plc_candidate *c, const plc_candidate *ties, int nties, double limit)
{
    plc_yaml_map(y, NULL);
    plc_yaml_int(y, "rank", rank);
    layout_entries(y, &c->layout);
    plc_yaml_bool(y, "valid", c->valid);
    plc_yaml_bool(y, "fits", c->fits);
    if (c->valid) {
        plc_yaml_num(y, "memory_bytes", c->peak_bytes);
        /* plrun: "plan" (lowered to settle the fit) or "open" (the estimate
         * cannot tell the fit, and it was not settled); absent: the estimate */
        if (c->lowered || c->open) plc_yaml_str(y, "memory_from", c->lowered ? "plan" : "open");
        if (c->step_time_s > 0) {
            plc_yaml_num(y, "step_time_s", c->step_time_s);
            plc_yaml_num(y, "tokens_per_s", c->tokens_per_s);
            plc_yaml_num(y, "mfu", c->mfu);
        }
    }
    char reason[320] = "";
    if (!c->fits) {
        FILE *f = fmemopen(reason, sizeof reason - 1, "w");
        if (f) { plc_report_reason(f, c, limit); fclose(f); }
    }
    plc_yaml_str(y, "reason", reason);
    plc_yaml_seq(y, "ties");
    for (int i = 0; i < nties; i++) {
        char text[256] = "";
        FILE *f = fmemopen(text, sizeof text - 1, "w");
        if (f) { plc_report_tie_text(f, &c->layout, &ties[i].layout); fclose(f); }
        plc_yaml_str(y, NULL, text);
    }
    plc_yaml_seq_end(y);
    plc_yaml_map_end(y);
}

/* n candidates, at most rows rows, exact ties folded into one row unless
 * every candidate is asked for */
static void listing(plc_yaml *y, const plc_candidate *c, int64_t n, int64_t rows, double limit, bool fold)
{
    int rank = 0;
    for (int64_t i = 0; i < n && rank < rows;) {
        int64_t j = i + 1;
        while (fold && j < n && plc_report_tied(&c[i], &c[j])) j++;
        candidate(y, ++rank, &c[i], c + i + 1, (int)(j - i - 1), limit);
        i = j;
    }
}

int plc_report_solve_yaml(FILE *out, const plc_job *job, const plc_solution *s, const plc_report_opts *o,
                          const plc_estimate *winner)
{
    plc_yaml y;
    if (plc_yaml_begin(&y, out, "solve")) return -1;
    plc_report_yaml_job(&y, job);
    plc_yaml_bool(&y, "pinned", s->pinned);
    plc_yaml_int(&y, "enumerated", s->enumerated);
    plc_yaml_int(&y, "invalid", s->invalid);
    /* the rules that removed the invalid layouts, each with an example */
    plc_yaml_seq(&y, "invalid_by_rule");
    for (int r = 0; r < PLC_RULE_COUNT; r++) {
        if (s->invalid_by[r] == 0) continue;
        char msg[256];
        plc_yaml_map(&y, NULL);
        plc_yaml_str(&y, "rule", plc_rule_name((plc_rule)r));
        plc_yaml_int(&y, "layouts", s->invalid_by[r]);
        plc_yaml_str(&y, "example", plc_invalid_message(job, s, (plc_rule)r, msg, sizeof msg));
        plc_yaml_map_end(&y);
    }
    plc_yaml_seq_end(&y);
    plc_yaml_int(&y, "pruned", s->pruned);
    plc_yaml_int(&y, "pruned_by_objective", s->pruned_objective);
    plc_yaml_int(&y, "evaluated", s->evaluated);
    plc_yaml_int(&y, "fitting", s->fitting);
    if (o->timing) plc_yaml_num(&y, "search_seconds", s->seconds);
    if (winner) plc_report_yaml_estimate(&y, "winner", winner, NULL);
    plc_yaml_seq(&y, "layouts");
    if (s->pinned) listing(&y, &s->single, 1, 1, s->limit_bytes, false);
    else if (o->all) listing(&y, s->all, s->nall, s->nall, s->limit_bytes, false);
    else if (s->nranked) listing(&y, s->ranked, s->nranked, o->top, s->limit_bytes, true);
    else listing(&y, s->closest, s->nclosest, s->nclosest, s->limit_bytes, true); /* nothing fits: the closest */
    plc_yaml_seq_end(&y);
    return plc_yaml_end(&y);
}

void plc_report_yaml_gates(plc_yaml *y, const plc_gate_results *res)
{
    plc_yaml_seq(y, "gates");
    for (int i = 0; i < res->n; i++) {
        const plc_gate_result *g = &res->r[i];
        plc_yaml_map(y, NULL);
        plc_yaml_str(y, "name", g->name);
        plc_yaml_num(y, "threshold", g->threshold);
        plc_yaml_num(y, "value", g->value);
        plc_yaml_str(y, "verdict", g->pass ? "pass" : "fail");
        plc_yaml_str(y, "from", g->from);
        if (!strcmp(g->name, "regression")) {
            plc_yaml_str(y, "baseline", res->baseline);
            plc_yaml_str(y, "figure", res->on == PLC_GATE_ON_MFU ? "mfu" : "tokens-per-gpu");
            plc_yaml_map(y, "mfu");
            plc_yaml_num(y, "baseline", res->mfu_old);
            plc_yaml_num(y, "plan", res->mfu_new);
            plc_yaml_map_end(y);
            plc_yaml_map(y, "tokens_per_s_per_gpu");
            plc_yaml_num(y, "baseline", res->tpg_old);
            plc_yaml_num(y, "plan", res->tpg_new);
            plc_yaml_map_end(y);
        }
        if (!strcmp(g->name, "headroom")) {
            plc_yaml_num(y, "peak_bytes", res->peak_bytes);
            plc_yaml_num(y, "limit_bytes", res->limit_bytes);
        }
        plc_yaml_map_end(y);
    }
    plc_yaml_seq_end(y);
}
