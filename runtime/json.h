/* json.h: a small, strict JSON (RFC 8259) parser for safetensors headers and
 * the JSON-lines files plc reads back in tests.
 *
 * The input is a byte buffer with a length (no terminating NUL needed). The
 * tree lives in the caller's arena. Every malformed input gives an error
 * message with its byte offset; nesting is limited so that hostile input
 * cannot exhaust the stack. */
#ifndef PLC_JSON_H
#define PLC_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "plc/arena.h"

typedef enum plc_json_type {
    PLC_JSON_NULL,
    PLC_JSON_BOOL,
    PLC_JSON_NUMBER,
    PLC_JSON_STRING,
    PLC_JSON_ARRAY,
    PLC_JSON_OBJECT,
} plc_json_type;

#define PLC_JSON_MAX_DEPTH 64
#define PLC_JSON_MAX_VALUES (1 << 22)

typedef struct plc_json plc_json;
struct plc_json {
    plc_json_type type;
    bool boolean;
    double number;
    bool is_int;     /* the literal is an integer that fits in int64 ... */
    int64_t integer; /* ... and this is its exact value */
    const char *str; /* STRING: decoded, NUL-terminated (\u0000 is refused) */
    size_t str_len;
    const char *key; /* the member's name when this value sits in an object */
    size_t n;        /* ARRAY/OBJECT: number of children */
    plc_json *child; /* first child; children chain through next */
    plc_json *next;
};

/* parses text[0..len) as one JSON value (surrounding white space allowed);
 * 0 on success, -1 with a message in err */
int plc_json_parse(plc_arena *a, const char *text, size_t len, const plc_json **out, char *err,
                   size_t errlen);

/* member `key` of an object, NULL when absent or not an object */
const plc_json *plc_json_get(const plc_json *obj, const char *key);

/* writes s[0..n) as a JSON string literal (quotes included) to f */
void plc_json_write_string(FILE *f, const char *s, size_t n);

#endif
