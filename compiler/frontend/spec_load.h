/* spec_load.h: plc_spec_load with the caller's diagnostics sink, so that a
 * command can count warnings too (plc check) or capture output (tests). */
#ifndef PLC_SPEC_LOAD_H
#define PLC_SPEC_LOAD_H

#include "compiler/frontend/ast.h"
#include "compiler/frontend/diag.h"
#include "compiler/frontend/spec.h"

/* Loads path with opts into *job, reporting through d. Returns the number of
 * errors found. */
int plc_spec_load_diag(plc_arena *a, const char *path, const plc_spec_opts *opts, plc_job *job, plc_diag *d);

/* Applies the -D overrides to a parsed tree: each replaces the value of its
 * key, or adds the pair (and the block) when absent. Returns the number of
 * errors (syntax errors in an override, a missing block part). */
int plc_spec_apply_defines(plc_arena *a, plc_diag *d, plc_ast *ast, const char *const *defines, int n);

#endif
