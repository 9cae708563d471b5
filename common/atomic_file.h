/* atomic_file.h: replace a file atomically: the one writer of every file
 * plc and plrun produce whole (plans, formatted specs, traces, checkpoints,
 * token files).
 *
 * Writes go to a temporary file next to the destination; commit flushes,
 * fsyncs, renames it over the destination and fsyncs the directory. Any
 * failure removes the temporary file, leaving the destination as it was. */
#ifndef PLC_ATOMIC_FILE_H
#define PLC_ATOMIC_FILE_H

#include <stddef.h>
#include <stdio.h>

typedef struct plc_atomic_file {
    FILE *f;          /* write through this */
    char *path;       /* destination */
    char *tmp_path;   /* the temporary file */
} plc_atomic_file;

/* 0, or -1 with err (nothing created); an existing destination that is not
 * a regular file (a device, a directory) is refused, never replaced */
int plc_atomic_open(plc_atomic_file *af, const char *path, char *err, size_t errlen);
/* 0, or -1 with err (temporary removed, destination untouched) */
int plc_atomic_commit(plc_atomic_file *af, char *err, size_t errlen);
/* gives up: closes and removes the temporary */
void plc_atomic_abort(plc_atomic_file *af);

/* Checks, before any work, that `path` can later be replaced by
 * plc_atomic_open/commit: it is absent or a regular file (not a directory,
 * not a device such as /dev/null) and its directory takes a new file (a temporary is created and removed). `what` names the option in
 * the message ("--trace"). 0, or -1 with err. */
int plc_check_output_file(const char *what, const char *path, char *err, size_t errlen);
/* The same for a directory of outputs: created when missing (its parent
 * must exist), and it must take a new file. 0, or -1 with err. */
int plc_prepare_output_dir(const char *what, const char *dir, char *err, size_t errlen);

#endif
