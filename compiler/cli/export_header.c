/* export_header.c: the opening lines of every file plc export writes (what
 * wrote it from what, the layout, plc's prediction and the note), below
 * both the command (cmd_export.c) and the writers (export_megatron.c,
 * export_torchtitan.c), so that neither calls back into the other. */
#include <stdio.h>

#include "compiler/cli/cli_int.h"
#include "compiler/plantools/plantools.h"
#include "plc/version.h"

void plc_export_header(FILE *out, const plc_export_in *in, const char *comment, const char *what, const char *option)
{
    char lt[512];
    fprintf(out,
            "%s written by plc export %s (plc %s) from %s.\n"
            "%.1s\n"
            "%sLayout: %s\n"
            "%splc predicts %.4g s per step, MFU %.1f%% on %lld node%s x %lld GPUs,\n"
            "%s%.1f GiB on the most loaded GPU (limit %.1f GiB), by %s.\n",
            what, option, PLC_VERSION, in->source, comment, comment, plc_layout_text(&in->layout, lt, sizeof lt),
            comment, in->step_time_s, 100.0 * in->mfu, (long long)in->nodes, plc_word_plural(in->nodes),
            (long long)in->gpus_per_node, comment, in->peak_bytes / 1073741824.0, in->limit_bytes / 1073741824.0,
            in->predicted_by);
    if (in->note[0]) fprintf(out, "%sNote: %s\n", comment, in->note);
}
