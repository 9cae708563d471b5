/* file_map.h: a whole file mapped read-only, for the validating readers
 * (token files, safetensors) that parse it in place. */
#ifndef PLC_FILE_MAP_H
#define PLC_FILE_MAP_H

#include <stddef.h>

/* maps the regular file at path: *map (NULL for an empty file, which cannot
 * be mapped) and its *size; the caller munmaps a non-NULL map. 0, or -1 with
 * "PATH: cannot open [WHAT]: ...", "PATH: not a regular file" or "PATH:
 * cannot map: ..." in err. what names the kind of file, or is NULL. */
int plc_map_file(const char *path, const char *what, void **map, size_t *size, char *err, size_t errlen);

#endif
