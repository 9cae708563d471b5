/* paths.h: the front end's file names, decided in one place.
 *
 * Two rules live here. A file named in a spec (a token file, a catalog) is
 * made absolute against a directory and normalised lexically ("." and ".."
 * removed, repeated slashes folded; symbolic links are not followed), so what
 * a plan stores does not depend on the working directory plc ran in. The
 * built-in hardware catalog (and the engine profiles beside it,
 * engines.yaml) is found relative to the running program, never through a
 * path fixed at build time:
 *
 *   PROGRAM_DIR/../share/plc/catalog.yaml        installed (make install)
 *   PROGRAM_DIR/PLC_TREE_DATADIR/catalog.yaml    in the build tree
 *
 * PLC_TREE_DATADIR is the relative path from the build's bin/ to examples/
 * (the Makefile passes it; "../examples" for bin/plc). */
#ifndef PLC_PATHS_H
#define PLC_PATHS_H

#include "plc/arena.h"

/* "/a//b/./c/../d" -> "/a/b/d" (no file system access); path is absolute */
const char *plc_path_normalise(plc_arena *a, const char *path);

/* path made absolute against dir, itself taken against the working directory
 * when relative (dir NULL or "": the working directory), then normalised.
 * NULL when the working directory cannot be read. */
const char *plc_path_absolute(plc_arena *a, const char *dir, const char *path);

/* the part after the last '/' ("x.plan" for "specs/x.plan") */
const char *plc_path_base(const char *path);

/* The built-in catalog beside the running program, or NULL when none of the
 * places above holds one; *tried is set to the places looked at, as text for
 * a message ("A, B"). */
const char *plc_builtin_catalog(plc_arena *a, const char **tried);
/* the same for any data file installed beside the catalog ("engines.yaml") */
const char *plc_builtin_data(plc_arena *a, const char *name, const char **tried);

#endif
