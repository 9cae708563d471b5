/* tokfile.h: token files, the on-disk training data (docs/data.md),
 * mapped read-only. The format and its checks are common/tokfile_format.h,
 * shared with plc. */
#ifndef PLC_TOKFILE_H
#define PLC_TOKFILE_H

#include <stddef.h>
#include <stdint.h>

#include "common/tokfile_format.h"

typedef struct plc_tokfile {
    void *map;
    size_t map_size;
    const uint8_t *tokens; /* first token */
    unsigned token_bytes;  /* 2 or 4 */
    uint32_t vocab;        /* from the header, 0 when unknown */
    uint64_t count;
} plc_tokfile;

/* maps and validates a token file; messages name the file. 0, or -1 with err. */
int plc_tokfile_open(plc_tokfile *t, const char *path, char *err, size_t errlen);
void plc_tokfile_close(plc_tokfile *t);

static inline uint32_t plc_tokfile_get(const plc_tokfile *t, uint64_t i)
{
    const uint8_t *p = t->tokens + i * t->token_bytes;
    uint32_t v = (uint32_t)p[0] | (uint32_t)p[1] << 8;
    if (t->token_bytes == 4) v |= (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
    return v;
}

/* writes tokens[0..n) in plc's format, atomically. token_bytes is 2 or 4;
 * every token must fit it and be < vocab when vocab != 0. 0, or -1 with err. */
int plc_tokfile_write(const char *path, const uint32_t *tokens, uint64_t n, unsigned token_bytes, uint32_t vocab,
                      char *err, size_t errlen);

#endif
