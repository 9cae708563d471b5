/* resolve.h: from the syntax tree (plus the hardware catalog) to a plc_job:
 * every key checked against its block's table (spec_keys.c), units converted
 * to SI, defaults filled in, and the contradictions that the spec alone
 * shows reported.
 *
 * Defaults (also in docs/language.md):
 *
 *   model    kv_heads = heads, tie_embeddings = off, norm_eps = 1e-5,
 *            rope_theta = 10000
 *   cluster  nodes = 1, gpus_per_node = 8, catalog: see spec.c;
 *            every catalog figure can be overridden here
 *   train    precision = bf16, seed = 1, data = synthetic, optimizer = adamw,
 *            adamw.beta1 = 0.9, adamw.beta2 = 0.95, adamw.eps = 1e-8,
 *            adamw.weight_decay = 0.1, lr.peak = 3e-4, lr.floor = lr.peak/10,
 *            lr.warmup = 0, lr.decay_steps = steps, grad_clip = 1.0
 *   layout   every dimension auto, memory_limit = 100%, objective = time
 *
 * Required: model layers hidden ffn_hidden heads vocab seq_len; cluster gpu;
 * train global_batch steps. The layout block is optional. */
#ifndef PLC_RESOLVE_H
#define PLC_RESOLVE_H

#include "compiler/frontend/ast.h"
#include "compiler/frontend/diag.h"
#include "plc/job.h"

typedef struct plc_resolve_opts {
    const char *catalog_path; /* --catalog or $PLC_CATALOG, NULL if neither */
    const char *spec_dir;     /* directory of the spec ("" for the cwd) */
} plc_resolve_opts;

/* Fills *job from the tree. Returns the number of errors reported. */
int plc_resolve(plc_arena *a, plc_diag *d, const plc_ast *ast, const plc_resolve_opts *o, plc_job *job);

#endif
