/* tokfile.c: reading (mmap, validated) and writing token files. */
#include "runtime/tokfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/atomic_file.h"

__attribute__((format(printf, 3, 4))) static int fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

static uint32_t le32(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }
static uint64_t le64(const uint8_t *p) { return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32; }

/* fills t from the header in b[0..size); 0, or -1 with err (without the path) */
static int parse_header(plc_tokfile *t, const uint8_t *b, size_t size, char *err, size_t errlen)
{
    if (size < 8) return fail(err, errlen, "file too short (%zu bytes) for a token file header", size);
    uint32_t magic = le32(b), version = le32(b + 4);
    uint64_t header;
    if (magic == PLC_TOKFILE_MAGIC) {
        if (version != PLC_TOKFILE_VERSION)
            return fail(err, errlen, "token file version %u is not supported (this plrun reads version %u)", version,
                        PLC_TOKFILE_VERSION);
        if (size < PLC_TOKFILE_HEADER) return fail(err, errlen, "truncated header (%zu bytes, 32 needed)", size);
        t->token_bytes = le32(b + 8);
        if (t->token_bytes != 2 && t->token_bytes != 4)
            return fail(err, errlen, "token size %u bytes in the header; 2 or 4 expected", t->token_bytes);
        t->vocab = le32(b + 12);
        t->count = le64(b + 16);
        if (le64(b + 24) != 0) return fail(err, errlen, "reserved header field is not zero (damaged file?)");
        header = PLC_TOKFILE_HEADER;
    } else if (magic == PLC_LLMC_MAGIC) {
        if (version != 1)
            return fail(err, errlen, "llm.c shard version %u is not supported (version 1, uint16 tokens, is)", version);
        if (size < PLC_LLMC_HEADER) return fail(err, errlen, "truncated llm.c header (%zu bytes, 1024 needed)", size);
        t->token_bytes = 2;
        t->vocab = 0;
        t->count = le32(b + 8);
        header = PLC_LLMC_HEADER;
    } else {
        return fail(err, errlen, "not a token file: magic 0x%08x, expected 0x%08x (\"PLTK\") or llm.c's %u", magic,
                    PLC_TOKFILE_MAGIC, PLC_LLMC_MAGIC);
    }
    uint64_t body = size - header;
    if (t->count > body / t->token_bytes || t->count * t->token_bytes != body)
        return fail(err, errlen, "header says %llu tokens of %u bytes (%llu bytes) but the file holds %llu bytes of tokens%s",
                    (unsigned long long)t->count, t->token_bytes,
                    t->count > UINT64_MAX / t->token_bytes ? 0ull : (unsigned long long)(t->count * t->token_bytes),
                    (unsigned long long)body, t->count > body / t->token_bytes ? ": truncated?" : "");
    t->tokens = b + header;
    return 0;
}

int plc_tokfile_open(plc_tokfile *t, const char *path, char *err, size_t errlen)
{
    memset(t, 0, sizeof *t);
    int fd = open(path, O_RDONLY);
    if (fd < 0) return fail(err, errlen, "%s: cannot open token file: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return fail(err, errlen, "%s: not a regular file", path);
    }
    size_t size = (size_t)st.st_size;
    void *map = NULL;
    if (size > 0) {
        map = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (map == MAP_FAILED) {
            int e = errno;
            close(fd);
            return fail(err, errlen, "%s: cannot map: %s", path, strerror(e));
        }
    }
    close(fd);
    char inner[400];
    static const uint8_t empty[1];
    if (parse_header(t, map ? map : empty, size, inner, sizeof inner) != 0) {
        if (map) munmap(map, size);
        memset(t, 0, sizeof *t);
        return fail(err, errlen, "%s: %s", path, inner);
    }
    t->map = map;
    t->map_size = size;
    return 0;
}

void plc_tokfile_close(plc_tokfile *t)
{
    if (t->map) munmap(t->map, t->map_size);
    memset(t, 0, sizeof *t);
}

static void put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}

int plc_tokfile_write(const char *path, const uint32_t *tokens, uint64_t n, unsigned token_bytes, uint32_t vocab,
                      char *err, size_t errlen)
{
    if (token_bytes != 2 && token_bytes != 4) return fail(err, errlen, "%s: token size must be 2 or 4 bytes", path);
    uint64_t limit = token_bytes == 2 ? 65536u : (uint64_t)UINT32_MAX + 1;
    if (vocab && vocab < limit) limit = vocab;
    for (uint64_t i = 0; i < n; i++)
        if (tokens[i] >= limit)
            return fail(err, errlen, "%s: token %u at index %llu does not fit (limit %llu)", path, tokens[i],
                        (unsigned long long)i, (unsigned long long)limit);
    uint8_t h[PLC_TOKFILE_HEADER] = {0};
    put32(h, PLC_TOKFILE_MAGIC);
    put32(h + 4, PLC_TOKFILE_VERSION);
    put32(h + 8, token_bytes);
    put32(h + 12, vocab);
    put32(h + 16, (uint32_t)n);
    put32(h + 20, (uint32_t)(n >> 32));
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
        return fail(err, errlen, "%s: write failed: %s", path, strerror(e));
    }
    return plc_atomic_commit(&af, err, errlen);
}
