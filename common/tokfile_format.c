/* tokfile_format.c: the token file's header, the model's rules on it, and
 * one streaming pass for the fingerprint the plan stores (tokfile_format.h).
 * It reads with stdio, not mmap, so that plc itself needs nothing else. */
#include "common/tokfile_format.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/crc32.h"
#include "common/errmsg.h"
#include "plc/le.h"

int plc_tokfile_parse_head(plc_tokfile_head *h, const uint8_t *b, size_t avail, uint64_t file_size, char *err,
                           size_t errlen)
{
    memset(h, 0, sizeof *h);
    if (avail > file_size) avail = (size_t)file_size;
    if (avail < 8)
        return plc_fail(err, errlen, "file too short (%llu bytes) for a token file header",
                        (unsigned long long)file_size);
    uint32_t magic = plc_get_le32(b), version = plc_get_le32(b + 4);
    if (magic == PLC_TOKFILE_MAGIC) {
        if (version != PLC_TOKFILE_VERSION)
            return plc_fail(err, errlen, "token file version %u is not supported (version %u is)", version,
                            PLC_TOKFILE_VERSION);
        if (avail < PLC_TOKFILE_HEADER)
            return plc_fail(err, errlen, "truncated header (%llu bytes, 32 needed)", (unsigned long long)file_size);
        h->token_bytes = plc_get_le32(b + 8);
        if (h->token_bytes != 2 && h->token_bytes != 4)
            return plc_fail(err, errlen, "token size %u bytes in the header; 2 or 4 expected", h->token_bytes);
        h->vocab = plc_get_le32(b + 12);
        h->count = plc_get_le64(b + 16);
        if (plc_get_le64(b + 24) != 0)
            return plc_fail(err, errlen, "reserved header field is not zero (damaged file?)");
        h->header_bytes = PLC_TOKFILE_HEADER;
    } else if (magic == PLC_LLMC_MAGIC) {
        if (version != 1)
            return plc_fail(err, errlen, "llm.c shard version %u is not supported (version 1, uint16 tokens, is)",
                            version);
        if (avail < PLC_LLMC_HEADER)
            return plc_fail(err, errlen, "truncated llm.c header (%llu bytes, 1024 needed)",
                            (unsigned long long)file_size);
        h->token_bytes = 2;
        h->vocab = 0;
        h->count = plc_get_le32(b + 8);
        h->header_bytes = PLC_LLMC_HEADER;
    } else {
        return plc_fail(err, errlen, "not a token file: magic 0x%08x, expected 0x%08x (\"PLTK\") or llm.c's %u", magic,
                        PLC_TOKFILE_MAGIC, PLC_LLMC_MAGIC);
    }
    uint64_t body = file_size - h->header_bytes;
    if (h->count > body / h->token_bytes || h->count * h->token_bytes != body)
        return plc_fail(err, errlen,
                        "header says %llu tokens of %u bytes (%llu bytes) but the file holds %llu bytes of tokens%s",
                        (unsigned long long)h->count, h->token_bytes,
                        h->count > UINT64_MAX / h->token_bytes ? 0ull : (unsigned long long)(h->count * h->token_bytes),
                        (unsigned long long)body, h->count > body / h->token_bytes ? ": truncated?" : "");
    return 0;
}

int plc_tokfile_fits_model(const plc_tokfile_head *h, int64_t vocab, int64_t seq_len, char *err, size_t errlen)
{
    if (h->vocab > (uint64_t)vocab)
        return plc_fail(err, errlen, "the tokens were made for a vocabulary of %u but the model's vocab is %lld",
                        h->vocab, (long long)vocab);
    if (h->count < 1 || (h->count - 1) / (uint64_t)seq_len == 0)
        return plc_fail(err, errlen, "%llu tokens, fewer than the seq_len + 1 = %lld one sample needs",
                        (unsigned long long)h->count, (long long)seq_len + 1);
    return 0;
}

/* reads until buf is full or the file ends; the bytes read */
static size_t fill(FILE *f, uint8_t *buf, size_t cap)
{
    size_t n = 0;
    while (n < cap) {
        size_t k = fread(buf + n, 1, cap - n, f);
        if (k == 0) break;
        n += k;
    }
    return n;
}

enum { SURVEY_CHUNK = 1 << 20 }; /* a multiple of 4: tokens never straddle two chunks */

/* opens a regular file for reading; its size in *size. NULL with err. A
 * FIFO or a device is refused before anything is read (O_NONBLOCK: opening
 * a FIFO does not wait for a writer). */
static FILE *open_regular(const char *path, uint64_t *size, char *err, size_t errlen)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        plc_fail(err, errlen, "cannot open: %s", strerror(errno));
        return NULL;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        plc_fail(err, errlen, "cannot read: %s", strerror(errno));
        close(fd);
        return NULL;
    }
    if (!S_ISREG(st.st_mode)) {
        plc_fail(err, errlen, "%s", S_ISDIR(st.st_mode) ? "a directory, not a token file" : "not a regular file");
        close(fd);
        return NULL;
    }
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        plc_fail(err, errlen, "cannot read: %s", strerror(errno));
        close(fd);
        return NULL;
    }
    *size = (uint64_t)st.st_size;
    return f;
}

int plc_tokfile_read_head(const char *path, plc_tokfile_head *h, uint64_t *size, char *err, size_t errlen)
{
    memset(h, 0, sizeof *h);
    FILE *f = open_regular(path, size, err, errlen);
    if (!f) return -1;
    uint8_t buf[PLC_LLMC_HEADER];
    size_t n = fill(f, buf, sizeof buf);
    int rc = ferror(f) ? plc_fail(err, errlen, "cannot read: %s", strerror(errno))
                       : plc_tokfile_parse_head(h, buf, n, *size, err, errlen);
    fclose(f);
    return rc;
}

int plc_tokfile_survey_file(const char *path, plc_tokfile_survey *s, char *err, size_t errlen)
{
    memset(s, 0, sizeof *s);
    FILE *f = open_regular(path, &s->size, err, errlen);
    if (!f) return -1;
    uint8_t *buf = malloc(SURVEY_CHUNK);
    if (!buf) {
        fclose(f);
        return plc_fail(err, errlen, "out of memory");
    }
    size_t n = fill(f, buf, SURVEY_CHUNK);
    int rc = plc_tokfile_parse_head(&s->head, buf, n, s->size, err, errlen);
    uint64_t at = 0; /* file offset of buf[0] */
    uint32_t crc = 0;
    while (rc == 0 && n > 0) {
        crc = plc_crc32(crc, buf, n);
        /* the tokens of this chunk: header_bytes and the chunk size are
         * multiples of the token size */
        uint64_t lo = at > s->head.header_bytes ? at : s->head.header_bytes;
        for (uint64_t o = lo; o + s->head.token_bytes <= at + n; o += s->head.token_bytes) {
            const uint8_t *p = buf + (o - at);
            uint32_t v = s->head.token_bytes == 2 ? (uint32_t)p[0] | (uint32_t)p[1] << 8 : plc_get_le32(p);
            if (v > s->max_token) { /* starting from 0 at index 0 */
                s->max_token = v;
                s->max_token_at = (o - s->head.header_bytes) / s->head.token_bytes;
            }
        }
        at += n;
        n = fill(f, buf, SURVEY_CHUNK);
    }
    if (rc == 0 && (ferror(f) || at != s->size))
        rc = plc_fail(err, errlen, "read failed after %llu of %llu bytes%s%s", (unsigned long long)at,
                      (unsigned long long)s->size, ferror(f) ? ": " : " (the file changed while it was read)",
                      ferror(f) ? strerror(errno) : "");
    s->crc32 = crc;
    free(buf);
    fclose(f);
    return rc;
}

int plc_file_fingerprint(const char *path, bool with_crc, uint64_t *size, uint32_t *crc, char *err, size_t errlen)
{
    *crc = 0;
    FILE *f = open_regular(path, size, err, errlen);
    if (!f) return -1;
    uint8_t *buf = with_crc ? malloc(SURVEY_CHUNK) : NULL;
    if (with_crc && !buf) {
        fclose(f);
        return plc_fail(err, errlen, "out of memory");
    }
    uint64_t at = 0;
    for (size_t n; with_crc && (n = fill(f, buf, SURVEY_CHUNK)) > 0; at += n) *crc = plc_crc32(*crc, buf, n);
    int rc = 0;
    if (with_crc && (ferror(f) || at != *size))
        rc = plc_fail(err, errlen, "read failed after %llu of %llu bytes%s%s", (unsigned long long)at,
                      (unsigned long long)*size, ferror(f) ? ": " : " (the file changed while it was read)",
                      ferror(f) ? strerror(errno) : "");
    free(buf);
    fclose(f);
    return rc;
}
