/* spec.h: the front end's one entry point: a .plan file (plus -D overrides
 * and the hardware catalog) in, a resolved plc_job out.
 *
 * Diagnostics (file:line:col: error: ..., source line, caret) are printed to
 * stderr as they are found; every error of the file is reported (capped),
 * then plc_spec_load returns the number of errors (0 on success). */
#ifndef PLC_SPEC_H
#define PLC_SPEC_H

#include "plc/arena.h"
#include "plc/job.h"

#define PLC_MAX_DEFINES 64

typedef struct plc_spec_opts {
    const char *catalog_path; /* --catalog FILE; NULL: PLC_CATALOG, the spec's
                                 cluster.catalog, then the built-in catalog */
    const char *defines[PLC_MAX_DEFINES]; /* "block.key=value" from -D */
    int ndefines;
    int max_errors; /* 0: the default cap */
} plc_spec_opts;

/* Removes the spec options (-D X, -DX, --catalog FILE) from argv, compacting
 * it and updating *argc; fills *opts. Returns 0, or 1 after printing an
 * error (too many -D, missing argument). */
int plc_spec_take_options(int *argc, char **argv, plc_spec_opts *opts);

/* One line of help text describing the options above, for --help texts. */
extern const char plc_spec_options_help[];

/* Loads, resolves and checks a spec. Everything in *job is allocated in *a. */
int plc_spec_load(plc_arena *a, const char *path, const plc_spec_opts *opts, plc_job *job);

#endif
