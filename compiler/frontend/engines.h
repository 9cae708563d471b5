/* engines.h: the engine profiles, a YAML file beside the hardware catalog
 * (examples/engines.yaml, installed as share/plc/engines.yaml) read with
 * libyaml. One profile per engine of train.engine:
 *
 *   megatron:
 *     describes: Megatron-Core r0.8 profile
 *     tp_overlap: {value: 1, source: "..."}      # every PLC_ENGINE_FIGURES key
 *     ...
 *     runs:                                      # optional, per layout key
 *       schedule: {values: [1f1b, interleaved], source: "..."}
 *
 * Every figure is required, each with a non-empty source; `runs` names the
 * values of a layout dimension (sp, schedule, recompute, zero, attention,
 * fused_rmsnorm) the engine can run, spelled as in .plan files, with its
 * source; a dimension it does not name runs every value. Errors are reported
 * as engines.yaml:line:col, like the catalog's. */
#ifndef PLC_ENGINES_H
#define PLC_ENGINES_H

#include "compiler/frontend/diag.h"
#include "plc/arena.h"
#include "plc/job.h"

typedef struct plc_engine_set {
    const plc_source *src;
    bool has[PLC_ENGINE_COUNT];
    plc_engine_profile profile[PLC_ENGINE_COUNT];
} plc_engine_set;

/* Reads and checks a profiles file. Returns the number of errors reported. */
int plc_engines_load(plc_arena *a, plc_diag *d, const char *path, plc_engine_set *out);
/* Same, from text already in memory. */
int plc_engines_parse(plc_arena *a, plc_diag *d, const plc_source *src, plc_engine_set *out);

#endif
