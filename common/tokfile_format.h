/* tokfile_format.h: the token file's header and its fingerprint, shared by
 * plc (which checks the file named in train.data and stores its size and
 * CRC-32 in the plan) and plrun (which maps the file and checks both).
 * docs/data.md describes the format; runtime/tokfile.h maps the tokens.
 *
 * plc's format, version 1, all little-endian:
 *   offset  0  u32  magic 0x4b544c50 (the bytes "PLTK")
 *   offset  4  u32  version = 1
 *   offset  8  u32  token size in bytes: 2 (uint16) or 4 (uint32)
 *   offset 12  u32  vocabulary size the tokens were made for (0 = unknown)
 *   offset 16  u64  number of tokens
 *   offset 24  u64  reserved, 0
 *   offset 32       the tokens
 * The file is exactly 32 + count * token size bytes long.
 *
 * llm.c's shards are read too (a 256 x int32 header: magic 20240520,
 * version 1, token count; then uint16 tokens). */
#ifndef PLC_TOKFILE_FORMAT_H
#define PLC_TOKFILE_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PLC_TOKFILE_MAGIC 0x4b544c50u
#define PLC_TOKFILE_VERSION 1u
#define PLC_TOKFILE_HEADER 32u
#define PLC_LLMC_MAGIC 20240520u
#define PLC_LLMC_HEADER 1024u

/* what the header says */
typedef struct plc_tokfile_head {
    uint64_t header_bytes; /* where the tokens start */
    unsigned token_bytes;  /* 2 or 4 */
    uint32_t vocab;        /* from the header, 0 when unknown */
    uint64_t count;        /* number of tokens */
} plc_tokfile_head;

/* Reads the header from b[0..avail) of a file of file_size bytes (avail <
 * file_size when only the start was read; PLC_LLMC_HEADER bytes are always
 * enough) and checks it against the file's size: the magic, version, token
 * size, reserved field and a length that matches the count. 0, or -1 with
 * a message in err that does not name the file. */
int plc_tokfile_parse_head(plc_tokfile_head *h, const uint8_t *b, size_t avail, uint64_t file_size, char *err,
                           size_t errlen);

/* The rules plrun applies when it opens a token file for a model of
 * vocabulary vocab and sequences of seq_len tokens: the header's vocabulary
 * at most vocab, at least seq_len + 1 tokens. 0, or -1 with a message in err
 * (without the file's name). */
int plc_tokfile_fits_model(const plc_tokfile_head *h, int64_t vocab, int64_t seq_len, char *err, size_t errlen);

/* A token file as the plan records it: its size and the CRC-32 of all its
 * bytes (header included), and the largest token id in it. */
typedef struct plc_tokfile_survey {
    plc_tokfile_head head;
    uint64_t size;
    uint32_t crc32;
    uint32_t max_token;     /* largest token id (0 for an empty file) */
    uint64_t max_token_at;  /* its first index */
} plc_tokfile_survey;

/* Reads only the header of the file at path and checks it as above (a cheap
 * look, for commands that do not store the fingerprint); *size is the file's
 * size. 0, or -1 with a message in err that does not name the file. */
int plc_tokfile_read_head(const char *path, plc_tokfile_head *h, uint64_t *size, char *err, size_t errlen);

/* Reads the whole file at path once: its header (checked as above), size,
 * CRC-32 and largest token. 0, or -1 with a message in err that does not
 * name the file ("cannot open: No such file or directory", "not a token
 * file: ..."). */
int plc_tokfile_survey_file(const char *path, plc_tokfile_survey *s, char *err, size_t errlen);

/* The size of the file at path and, when with_crc, the CRC-32 of all its
 * bytes (*crc is 0 otherwise); no check of its contents. 0, or -1 with a
 * message in err that does not name the file. */
int plc_file_fingerprint(const char *path, bool with_crc, uint64_t *size, uint32_t *crc, char *err, size_t errlen);

/* "size 4128 bytes, CRC-32 0x1234abcd": how messages and plc dump write a
 * fingerprint */
#define PLC_TOKFILE_PRINT_FMT "%llu bytes, CRC-32 %08x"

#endif
