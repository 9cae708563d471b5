/* spec_checks.h: contradictions visible in the spec alone, across blocks:
 * a fixed tp that does not divide heads, fixed degrees that do not divide
 * the GPU count, a token batch that is not whole sequences, ... */
#ifndef PLC_SPEC_CHECKS_H
#define PLC_SPEC_CHECKS_H

#include <stdbool.h>

#include "compiler/frontend/ast.h"
#include "compiler/frontend/diag.h"
#include "plc/job.h"

typedef struct plc_spec_facts {
    /* NULL when the block had errors (its checks are skipped) */
    const plc_model *model;
    const plc_cluster *cluster;
    plc_train *train; /* global_batch given in tokens is converted here */
    const plc_layout_spec *layout;
    bool batch_in_tokens;
    const plc_engine_profile *engine; /* train.engine's profile; NULL when unknown */
    plc_engine engine_id;
    /* for locations; NULL when absent */
    const plc_block *model_block, *cluster_block, *train_block, *layout_block;
} plc_spec_facts;

void plc_spec_check(plc_arena *a, plc_diag *d, plc_spec_facts *f);

/* "1, 2, 3, 4, 6, 12": the divisors of n (at most 32 shown) */
const char *plc_divisors_text(plc_arena *a, int64_t n);

#endif
