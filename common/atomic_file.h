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

/* 0, or -1 with err (nothing created) */
int plc_atomic_open(plc_atomic_file *af, const char *path, char *err, size_t errlen);
/* 0, or -1 with err (temporary removed, destination untouched) */
int plc_atomic_commit(plc_atomic_file *af, char *err, size_t errlen);
/* gives up: closes and removes the temporary */
void plc_atomic_abort(plc_atomic_file *af);

#endif
