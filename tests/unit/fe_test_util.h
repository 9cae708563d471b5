/* fe_test_util.h: helpers for the front end's unit tests: run the parser and
 * resolver on a text and capture the diagnostics. */
#ifndef PLC_FE_TEST_UTIL_H
#define PLC_FE_TEST_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/frontend/frontend.h"

/* diagnostics printed into memory: fe_sink_open, then s->d to the front
 * end, then fe_sink_close (s->out then holds what was printed, freed by
 * the caller) */
typedef struct fe_sink {
    plc_diag d;
    FILE *f;
    char *out;
    size_t outlen;
} fe_sink;

static inline plc_diag *fe_sink_open(fe_sink *s, int max_errors)
{
    s->out = NULL;
    s->outlen = 0;
    s->f = open_memstream(&s->out, &s->outlen);
    plc_diag_init(&s->d, s->f, max_errors);
    return &s->d;
}

static inline void fe_sink_close(fe_sink *s) { fclose(s->f); }

typedef struct fe_result {
    plc_arena a;
    plc_job job;
    plc_ast *ast;
    int syntax_errors, errors, warnings;
    char *out; /* everything printed */
    size_t outlen;
} fe_result;

/* parses text as "t.plan", applies the overrides and resolves when it parsed */
static inline void fe_run(fe_result *r, const char *text, const char *const *defines, int ndefines)
{
    memset(r, 0, sizeof *r);
    plc_arena_init(&r->a);
    fe_sink s;
    plc_diag *d = fe_sink_open(&s, 100);
    plc_source *src = plc_source_from_text(&r->a, "t.plan", text, strlen(text));
    r->ast = plc_parse_source(&r->a, d, src, &r->syntax_errors);
    int derr = plc_spec_apply_defines(&r->a, d, r->ast, defines, ndefines);
    if (!r->syntax_errors && !derr) {
        plc_resolve_opts o = {NULL, "", false};
        plc_resolve(&r->a, d, r->ast, &o, &r->job);
    }
    fe_sink_close(&s);
    r->out = s.out;
    r->outlen = s.outlen;
    r->errors = d->errors;
    r->warnings = d->warnings;
}

static inline void fe_done(fe_result *r)
{
    free(r->out);
    plc_arena_free(&r->a);
}

static inline int fe_has(const fe_result *r, const char *needle) { return r->out && strstr(r->out, needle) != NULL; }

/* a valid spec assembled from four blocks */
#define FE_MODEL "model \"m\" {\n  layers = 4\n  hidden = 256\n  ffn_hidden = 688\n  heads = 8\n  kv_heads = 4\n  vocab = 1000\n  seq_len = 128\n}\n"
#define FE_CLUSTER "cluster {\n  gpu = \"A100-SXM4-80GB\"\n  nodes = 2\n  gpus_per_node = 8\n}\n"
#define FE_TRAIN "train {\n  global_batch = 64\n  steps = 100\n}\n"
#define FE_LAYOUT "layout {\n  tp = auto\n}\n"

#endif
