/* safetensors.h: reading and writing the safetensors format.
 *
 * Layout of a file (https://github.com/huggingface/safetensors):
 *   8 bytes     N, the header length, unsigned little-endian
 *   N bytes     JSON object: name -> {"dtype", "shape", "data_offsets": [begin, end]},
 *               plus an optional "__metadata__" object of string -> string
 *   the rest    the data section; offsets are relative to its start
 *
 * plc writes F32 global tensors (checkpoints, docs/checkpoint.md) and I32
 * token batches (the oracle export, docs/data.md). The writer sorts names,
 * packs tensors contiguously in name order, pads the header with spaces to a
 * multiple of 8 bytes, and replaces the destination atomically (temporary
 * file in the same directory, fsync, rename, fsync of the directory), so a
 * crash leaves either the old file or the new one, never a partial file.
 *
 * The reader checks everything before use: header length within the file,
 * valid JSON, known dtypes, non-negative shapes whose byte size matches the
 * offsets, offsets inside the data section, no two tensors overlapping and
 * no gap (the data section is exactly covered), no duplicate names. A damaged
 * file gives an error message, never a crash. */
#ifndef PLC_SAFETENSORS_H
#define PLC_SAFETENSORS_H

#include <stddef.h>
#include <stdint.h>

#include "plc/arena.h"

typedef enum plc_st_dtype {
    PLC_ST_F64,
    PLC_ST_F32,
    PLC_ST_F16,
    PLC_ST_BF16,
    PLC_ST_I64,
    PLC_ST_I32,
    PLC_ST_I16,
    PLC_ST_I8,
    PLC_ST_U64,
    PLC_ST_U32,
    PLC_ST_U16,
    PLC_ST_U8,
    PLC_ST_BOOL,
    PLC_ST_DTYPE_COUNT
} plc_st_dtype;

#define PLC_ST_MAX_DIMS 8
#define PLC_ST_MAX_HEADER (100u << 20) /* the limit of the reference implementation */

const char *plc_st_dtype_name(plc_st_dtype d); /* "F32", ... */
size_t plc_st_dtype_size(plc_st_dtype d);      /* bytes per element */

typedef struct plc_st_tensor {
    const char *name;
    plc_st_dtype dtype;
    int ndim;
    int64_t shape[PLC_ST_MAX_DIMS];
    int64_t numel;
    uint64_t begin, end; /* byte range within the data section */
} plc_st_tensor;

typedef struct plc_st_meta {
    const char *key, *value;
} plc_st_meta;

/* a parsed file; tensors sorted by name */
typedef struct plc_st_file {
    plc_arena arena;
    void *map; /* the mapping made by plc_st_open (NULL after plc_st_parse) */
    size_t map_size;
    const uint8_t *data; /* start of the data section */
    uint64_t data_size;
    size_t n_tensors;
    plc_st_tensor *tensors;
    size_t n_meta;
    plc_st_meta *meta;
} plc_st_file;

/* parses and validates buf[0..size); buf must outlive f. 0, or -1 with err. */
int plc_st_parse(plc_st_file *f, const void *buf, size_t size, char *err, size_t errlen);
/* maps and parses a file; messages name the file. 0, or -1 with err. */
int plc_st_open(plc_st_file *f, const char *path, char *err, size_t errlen);
void plc_st_close(plc_st_file *f);

const plc_st_tensor *plc_st_find(const plc_st_file *f, const char *name);
/* start of a tensor's bytes: not necessarily aligned for its type; copy out */
const void *plc_st_data(const plc_st_file *f, const plc_st_tensor *t);
const char *plc_st_meta_get(const plc_st_file *f, const char *key);

/* copies tensor `name` into dst after checking that it exists, has dtype
 * `dtype` and exactly the given shape. 0, or -1 with err. */
int plc_st_read(const plc_st_file *f, const char *name, plc_st_dtype dtype, int ndim,
                const int64_t *shape, void *dst, char *err, size_t errlen);

/* ---- writer ---- */

typedef struct plc_st_writer {
    plc_arena arena;
    struct plc_st_entry *entries; /* in the order added */
    size_t n_entries;
    struct plc_st_meta_node *meta;
    size_t n_meta;
} plc_st_writer;

void plc_st_writer_init(plc_st_writer *w);
void plc_st_writer_free(plc_st_writer *w);
/* adds a tensor; `data` (numel * dtype size bytes) is referenced, not copied,
 * and must stay valid until plc_st_writer_save. -1 with err on a duplicate or
 * empty name, a bad dtype, more than PLC_ST_MAX_DIMS dims or a negative dim. */
int plc_st_writer_add(plc_st_writer *w, const char *name, plc_st_dtype dtype, int ndim,
                      const int64_t *shape, const void *data, char *err, size_t errlen);
/* adds a "__metadata__" string pair (a later pair with the same key wins) */
void plc_st_writer_meta(plc_st_writer *w, const char *key, const char *value);
/* writes the file atomically; 0, or -1 with err (the destination untouched) */
int plc_st_writer_save(plc_st_writer *w, const char *path, char *err, size_t errlen);

#endif
