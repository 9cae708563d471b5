/* tokfile.c: reading (mmap, validated) and writing token files. */
#include "runtime/tokfile.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "common/errmsg.h"
#include "plc/le.h"
#include "common/atomic_file.h"
#include "runtime/file_map.h"

int plc_tokfile_open(plc_tokfile *t, const char *path, char *err, size_t errlen)
{
    memset(t, 0, sizeof *t);
    void *map;
    size_t size;
    if (plc_map_file(path, "token file", &map, &size, err, errlen)) return -1;
    char inner[400];
    static const uint8_t empty[1];
    plc_tokfile_head h;
    if (plc_tokfile_parse_head(&h, map ? map : empty, map ? size : 0, size, inner, sizeof inner) != 0) {
        if (map) munmap(map, size);
        memset(t, 0, sizeof *t);
        return plc_fail(err, errlen, "%s: %s", path, inner);
    }
    t->map = map;
    t->map_size = size;
    t->tokens = (const uint8_t *)map + h.header_bytes;
    t->token_bytes = h.token_bytes;
    t->vocab = h.vocab;
    t->count = h.count;
    return 0;
}

void plc_tokfile_close(plc_tokfile *t)
{
    if (t->map) munmap(t->map, t->map_size);
    memset(t, 0, sizeof *t);
}

int plc_tokfile_write(const char *path, const uint32_t *tokens, uint64_t n, unsigned token_bytes, uint32_t vocab,
                      char *err, size_t errlen)
{
    if (token_bytes != 2 && token_bytes != 4) return plc_fail(err, errlen, "%s: token size must be 2 or 4 bytes", path);
    uint64_t limit = token_bytes == 2 ? 65536u : (uint64_t)UINT32_MAX + 1;
    if (vocab && vocab < limit) limit = vocab;
    for (uint64_t i = 0; i < n; i++)
        if (tokens[i] >= limit)
            return plc_fail(err, errlen, "%s: token %u at index %llu does not fit (limit %llu)", path, tokens[i],
                            (unsigned long long)i, (unsigned long long)limit);
    uint8_t h[PLC_TOKFILE_HEADER] = {0};
    plc_put_le32(h, PLC_TOKFILE_MAGIC);
    plc_put_le32(h + 4, PLC_TOKFILE_VERSION);
    plc_put_le32(h + 8, token_bytes);
    plc_put_le32(h + 12, vocab);
    plc_put_le64(h + 16, n);
    plc_atomic_file af;
    if (plc_atomic_open(&af, path, err, errlen)) return -1;
    bool ok = fwrite(h, 1, sizeof h, af.f) == sizeof h;
    uint8_t buf[4096];
    size_t fill = 0;
    for (uint64_t i = 0; ok && i < n; i++) {
        for (unsigned b = 0; b < token_bytes; b++) buf[fill++] = (uint8_t)(tokens[i] >> (8 * b));
        if (fill == sizeof buf) {
            ok = fwrite(buf, 1, fill, af.f) == fill;
            fill = 0;
        }
    }
    if (ok && fill) ok = fwrite(buf, 1, fill, af.f) == fill;
    if (!ok) {
        int e = errno;
        plc_atomic_abort(&af);
        return plc_fail(err, errlen, "%s: write failed: %s", path, strerror(e));
    }
    return plc_atomic_commit(&af, err, errlen);
}
