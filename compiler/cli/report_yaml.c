/* report_yaml.c: plc solve --format yaml, written with the libyaml emitter.
 *
 * The document is a mapping: spec, model, gpus, memory_limit_bytes,
 * objective, the search counts, and `layouts`: a list of mappings with the
 * layout's dimensions and its figures (fits, memory_bytes, step_time_s,
 * tokens_per_s, mfu, reason). */
#include <stdio.h>
#include <string.h>
#include <yaml.h>

#include "compiler/cli/report.h"

#include "compiler/solver/model_math.h"

typedef struct emitter {
    yaml_emitter_t e;
    bool failed;
} emitter;

static void emit(emitter *em, yaml_event_t *ev)
{
    if (em->failed) { yaml_event_delete(ev); return; }
    if (!yaml_emitter_emit(&em->e, ev)) em->failed = true;
}

static void scalar(emitter *em, const char *text, bool plain)
{
    yaml_event_t ev;
    yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)text, (int)strlen(text), plain, !plain,
                                 plain ? YAML_PLAIN_SCALAR_STYLE : YAML_DOUBLE_QUOTED_SCALAR_STYLE);
    emit(em, &ev);
}

static void key_str(emitter *em, const char *k, const char *v) { scalar(em, k, true); scalar(em, v, false); }
static void key_plain(emitter *em, const char *k, const char *v) { scalar(em, k, true); scalar(em, v, true); }
static void key_int(emitter *em, const char *k, long long v)
{
    char b[32];
    snprintf(b, sizeof b, "%lld", v);
    key_plain(em, k, b);
}
static void key_num(emitter *em, const char *k, double v, const char *fmt)
{
    char b[64];
    snprintf(b, sizeof b, fmt, v);
    key_plain(em, k, b);
}
static void key_bool(emitter *em, const char *k, bool v) { key_plain(em, k, v ? "true" : "false"); }

static void map_start(emitter *em)
{
    yaml_event_t ev;
    yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_MAPPING_STYLE);
    emit(em, &ev);
}
static void map_end(emitter *em)
{
    yaml_event_t ev;
    yaml_mapping_end_event_initialize(&ev);
    emit(em, &ev);
}

static void candidate(emitter *em, const plc_candidate *c, double limit)
{
    const plc_layout *l = &c->layout;
    map_start(em);
    key_int(em, "dp", l->dp);
    key_int(em, "tp", l->tp);
    key_int(em, "pp", l->pp);
    key_int(em, "cp", l->cp);
    key_bool(em, "sp", l->sp);
    key_int(em, "vpp", l->vpp);
    key_int(em, "micro_batch", l->micro_batch);
    key_str(em, "schedule", plc_schedule_name(l->schedule));
    key_str(em, "recompute", plc_recompute_name(l->recompute));
    key_int(em, "zero", l->zero);
    key_str(em, "attention", plc_attention_name(l->attention));
    key_bool(em, "fused_rmsnorm", l->fused_rmsnorm);
    key_bool(em, "valid", c->valid);
    key_bool(em, "fits", c->fits);
    key_num(em, "memory_bytes", c->peak_bytes, "%.0f");
    key_num(em, "memory_gib", c->peak_bytes / PLC_GIB, "%.3f");
    key_num(em, "step_time_s", c->step_time_s, "%.6g");
    key_num(em, "tokens_per_s", c->tokens_per_s, "%.6g");
    key_num(em, "mfu", c->mfu, "%.5f");
    char reason[320] = "";
    if (!c->fits) {
        FILE *f = fmemopen(reason, sizeof reason - 1, "w");
        if (f) { plc_report_reason(f, c, limit); fclose(f); }
    }
    key_str(em, "reason", reason);
    map_end(em);
}

static int write_handler(void *data, unsigned char *buffer, size_t size)
{
    return fwrite(buffer, 1, size, (FILE *)data) == size;
}

int plc_report_solve_yaml(FILE *out, const plc_job *job, const plc_solution *s, int top, bool all)
{
    emitter em = {.failed = false};
    if (!yaml_emitter_initialize(&em.e)) { fprintf(stderr, "plc: error: cannot start the YAML emitter\n"); return -1; }
    yaml_emitter_set_output(&em.e, write_handler, out);
    yaml_emitter_set_unicode(&em.e, 1);
    yaml_event_t ev;
    yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING);
    emit(&em, &ev);
    yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 0);
    emit(&em, &ev);
    map_start(&em);
    key_str(&em, "spec", job->path ? job->path : "");
    key_str(&em, "model", job->model.name);
    key_num(&em, "parameters", (double)plc_params_total(&job->model), "%.0f");
    key_str(&em, "gpu", job->cluster.hw.name);
    key_int(&em, "gpus", plc_cluster_gpus(&job->cluster));
    key_num(&em, "memory_limit_bytes", s->limit_bytes, "%.0f");
    key_str(&em, "objective", plc_objective_name(job->layout.objective));
    key_bool(&em, "pinned", s->pinned);
    key_int(&em, "enumerated", s->enumerated);
    key_int(&em, "invalid", s->invalid);
    key_int(&em, "pruned", s->pruned);
    key_int(&em, "pruned_by_objective", s->pruned_objective);
    key_int(&em, "evaluated", s->evaluated);
    key_int(&em, "fitting", s->fitting);
    key_num(&em, "search_seconds", s->seconds, "%.6f");
    scalar(&em, "layouts", true);
    yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_SEQUENCE_STYLE);
    emit(&em, &ev);
    if (s->pinned) {
        candidate(&em, &s->single, s->limit_bytes);
    } else if (all) {
        for (int64_t i = 0; i < s->nall; i++) candidate(&em, &s->all[i], s->limit_bytes);
    } else {
        int n = s->nranked < top ? s->nranked : top;
        for (int i = 0; i < n; i++) candidate(&em, &s->ranked[i], s->limit_bytes);
        if (n == 0) /* nothing fits: the closest ones, marked as not fitting */
            for (int i = 0; i < s->nclosest; i++) candidate(&em, &s->closest[i], s->limit_bytes);
    }
    yaml_sequence_end_event_initialize(&ev);
    emit(&em, &ev);
    map_end(&em);
    yaml_document_end_event_initialize(&ev, 1);
    emit(&em, &ev);
    yaml_stream_end_event_initialize(&ev);
    emit(&em, &ev);
    int rc = 0;
    if (em.failed) {
        fprintf(stderr, "plc: error: YAML output failed: %s\n", em.e.problem ? em.e.problem : "write error");
        rc = -1;
    }
    yaml_emitter_delete(&em.e);
    return rc;
}
