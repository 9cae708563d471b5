/* compiler/cli/export_int.h: what plc export's command (cmd_export.c) and
 * its writers share: the input a writer reads, the header both outputs open
 * with, and each engine's output: export_megatron.c (a Megatron-LM launch
 * script in the flags of the Megatron-Core release its profile models: the
 * current one for engine megatron, r0.8 for megatron_r0_8) and export_torchtitan.c (a
 * torchtitan configuration module). A writer's checks say what its output
 * cannot express, so that the command refuses it instead of dropping it. */
#ifndef PLC_COMPILER_CLI_EXPORT_INT_H
#define PLC_COMPILER_CLI_EXPORT_INT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "plc/job.h"

/* what the export writes from */
typedef struct plc_export_in {
    const char *source; /* the spec or plan named on the command line */
    plc_model model;
    plc_train train;
    int64_t nodes, gpus_per_node;
    plc_layout layout;
    double step_time_s, mfu, peak_bytes, limit_bytes;
    const char *predicted_by; /* whose model the figures are: "engine megatron's model (...)" */
    char note[512]; /* why another layout than the solver's best, or "" */
    const char *base; /* torchtitan: MODULE:FUNCTION of the base configuration */
    const plc_engine_profile *profile; /* the engine's: what it runs and overlaps */
} plc_export_in;

/* why the output cannot say something of model m, training t, layout l
 * (NULL: a check of the model and training only) under profile p: NULL when
 * it can, else buf */
typedef const char *plc_export_unsaid_fn(const plc_model *m, const plc_train *t, const plc_layout *l,
                                         const plc_engine_profile *p, char *buf, size_t size);

/* ---- export_header.c -------------------------------------------------------
 * the opening lines both outputs share, each line after the first behind
 * comment ("# " for a shell script, "" inside a Python docstring): what
 * wrote it from what, the layout, plc's prediction and the note */
void plc_export_header(FILE *out, const plc_export_in *in, const char *comment, const char *what, const char *option);

/* ---- export_megatron.c -----------------------------------------------------
 * one set a release: the current Megatron-Core (engine megatron) and r0.8
 * (engine megatron_r0_8) */
plc_export_unsaid_fn plc_export_megatron_model_unsaid, plc_export_megatron_unsaid;
void plc_export_megatron_write(FILE *out, const plc_export_in *in);
plc_export_unsaid_fn plc_export_megatron_r0_8_model_unsaid, plc_export_megatron_r0_8_unsaid;
void plc_export_megatron_r0_8_write(FILE *out, const plc_export_in *in);

/* ---- export_torchtitan.c --------------------------------------------------- */
plc_export_unsaid_fn plc_export_torchtitan_model_unsaid, plc_export_torchtitan_unsaid;
void plc_export_torchtitan_write(FILE *out, const plc_export_in *in);

#endif
