/* report_load.c: what solve, explain and scale share: loading the spec and
 * reading a number option. */
#include <stdio.h>
#include <stdlib.h>

#include "common/parse_num.h"

#include "compiler/cli/cli_int.h"

int plc_report_load(plc_arena *a, const char *cmd, const char *path, const plc_spec_opts *opts, plc_job *job)
{
    int errors = plc_spec_load(a, path, opts, job);
    if (errors) {
        fprintf(stderr, "plc %s: %s: %d error%s\n", cmd, path, errors, errors == 1 ? "" : "s");
        return -1;
    }
    return 0;
}

int plc_report_parse_count(const char *cmd, const char *opt, const char *text, long lo, long hi, long *out)
{
    int64_t v;
    if (plc_parse_int(text, lo, hi, &v)) {
        fprintf(stderr, "plc %s: error: %s takes a number from %ld to %ld, not '%s'\n", cmd, opt, lo, hi, text);
        return -1;
    }
    *out = (long)v;
    return 0;
}
