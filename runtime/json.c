/* json.c: recursive-descent JSON parser with a depth limit (see json.h). */
#include "runtime/json.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

typedef struct parser {
    plc_arena *arena;
    const char *s;
    size_t len, pos;
    size_t values;
    char *err;
    size_t errlen;
} parser;

__attribute__((format(printf, 2, 3))) static int fail(parser *p, const char *fmt, ...)
{
    if (p->err && p->errlen) {
        int n = snprintf(p->err, p->errlen, "JSON byte %zu: ", p->pos);
        if (n >= 0 && (size_t)n < p->errlen) {
            va_list ap;
            va_start(ap, fmt);
            vsnprintf(p->err + n, p->errlen - (size_t)n, fmt, ap);
            va_end(ap);
        }
    }
    return -1;
}

static void skip_ws(parser *p)
{
    while (p->pos < p->len) {
        char c = p->s[p->pos];
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r') break;
        p->pos++;
    }
}

static bool at_end(const parser *p) { return p->pos >= p->len; }

static int expect_word(parser *p, const char *w)
{
    size_t n = strlen(w);
    if (p->len - p->pos < n || memcmp(p->s + p->pos, w, n) != 0) return fail(p, "invalid literal");
    p->pos += n;
    return 0;
}

static int hex4(parser *p, unsigned *out)
{
    if (p->len - p->pos < 4) return fail(p, "truncated \\u escape");
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        char c = p->s[p->pos + i];
        unsigned d;
        if (c >= '0' && c <= '9') d = (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f') d = (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F') d = (unsigned)(c - 'A' + 10);
        else return fail(p, "bad hex digit in \\u escape");
        v = v * 16 + d;
    }
    p->pos += 4;
    *out = v;
    return 0;
}

static size_t put_utf8(char *o, unsigned cp)
{
    if (cp < 0x80) { o[0] = (char)cp; return 1; }
    if (cp < 0x800) {
        o[0] = (char)(0xC0 | (cp >> 6));
        o[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (char)(0xE0 | (cp >> 12));
        o[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (char)(0xF0 | (cp >> 18));
    o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    o[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* p->pos is on the opening quote; decoded text never exceeds the raw text */
static int parse_string(parser *p, const char **out, size_t *out_len)
{
    p->pos++; /* the quote */
    size_t start = p->pos;
    size_t end = start;
    while (end < p->len && p->s[end] != '"') end += p->s[end] == '\\' ? 2 : 1;
    if (end >= p->len) return fail(p, "unterminated string");
    char *o = plc_arena_alloc(p->arena, end - start + 1);
    size_t n = 0;
    while (p->s[p->pos] != '"') {
        unsigned char c = (unsigned char)p->s[p->pos];
        if (c < 0x20) return fail(p, "control character in string");
        if (c != '\\') {
            o[n++] = (char)c;
            p->pos++;
            continue;
        }
        p->pos++;
        char e = p->s[p->pos++];
        switch (e) {
        case '"': o[n++] = '"'; break;
        case '\\': o[n++] = '\\'; break;
        case '/': o[n++] = '/'; break;
        case 'b': o[n++] = '\b'; break;
        case 'f': o[n++] = '\f'; break;
        case 'n': o[n++] = '\n'; break;
        case 'r': o[n++] = '\r'; break;
        case 't': o[n++] = '\t'; break;
        case 'u': {
            unsigned cp;
            if (hex4(p, &cp)) return -1;
            if (cp >= 0xD800 && cp <= 0xDBFF) { /* high surrogate: a low one must follow */
                unsigned lo;
                if (p->len - p->pos < 2 || p->s[p->pos] != '\\' || p->s[p->pos + 1] != 'u')
                    return fail(p, "unpaired surrogate in \\u escape");
                p->pos += 2;
                if (hex4(p, &lo)) return -1;
                if (lo < 0xDC00 || lo > 0xDFFF) return fail(p, "unpaired surrogate in \\u escape");
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
                return fail(p, "unpaired surrogate in \\u escape");
            }
            if (cp == 0) return fail(p, "\\u0000 is not allowed in strings");
            /* \uXXXX is 6 raw bytes and at most 3 decoded; a pair 12 and 4 */
            n += put_utf8(o + n, cp);
            break;
        }
        default: p->pos--; return fail(p, "invalid escape '\\%c'", e);
        }
    }
    p->pos++; /* closing quote */
    o[n] = '\0';
    *out = o;
    *out_len = n;
    return 0;
}

static bool is_digit(char c) { return c >= '0' && c <= '9'; }

static int parse_number(parser *p, plc_json *v)
{
    size_t start = p->pos;
    bool integral = true;
    if (p->pos < p->len && p->s[p->pos] == '-') p->pos++;
    if (at_end(p) || !is_digit(p->s[p->pos])) return fail(p, "invalid number");
    if (p->s[p->pos] == '0') p->pos++;
    else
        while (!at_end(p) && is_digit(p->s[p->pos])) p->pos++;
    if (!at_end(p) && p->s[p->pos] == '.') {
        integral = false;
        p->pos++;
        if (at_end(p) || !is_digit(p->s[p->pos])) return fail(p, "digit expected after '.'");
        while (!at_end(p) && is_digit(p->s[p->pos])) p->pos++;
    }
    if (!at_end(p) && (p->s[p->pos] == 'e' || p->s[p->pos] == 'E')) {
        integral = false;
        p->pos++;
        if (!at_end(p) && (p->s[p->pos] == '+' || p->s[p->pos] == '-')) p->pos++;
        if (at_end(p) || !is_digit(p->s[p->pos])) return fail(p, "digit expected in exponent");
        while (!at_end(p) && is_digit(p->s[p->pos])) p->pos++;
    }
    char *text = plc_arena_strndup(p->arena, p->s + start, p->pos - start);
    v->type = PLC_JSON_NUMBER;
    v->number = strtod(text, NULL); /* the grammar is checked above; overflow gives +-inf */
    if (integral) {
        errno = 0;
        long long i = strtoll(text, NULL, 10);
        if (errno == 0) {
            v->is_int = true;
            v->integer = i;
        }
    }
    return 0;
}

static int parse_value(parser *p, plc_json *v, int depth);

static int parse_container(parser *p, plc_json *v, int depth, bool object)
{
    char close = object ? '}' : ']';
    v->type = object ? PLC_JSON_OBJECT : PLC_JSON_ARRAY;
    if (depth >= PLC_JSON_MAX_DEPTH) return fail(p, "nesting deeper than %d", PLC_JSON_MAX_DEPTH);
    p->pos++; /* the opening bracket */
    skip_ws(p);
    if (!at_end(p) && p->s[p->pos] == close) {
        p->pos++;
        return 0;
    }
    plc_json **tail = &v->child;
    for (;;) {
        skip_ws(p);
        plc_json *item = PLC_NEW(p->arena, plc_json);
        if (object) {
            if (at_end(p) || p->s[p->pos] != '"') return fail(p, "member name expected");
            size_t klen;
            if (parse_string(p, &item->key, &klen)) return -1;
            skip_ws(p);
            if (at_end(p) || p->s[p->pos] != ':') return fail(p, "':' expected");
            p->pos++;
            skip_ws(p);
        }
        if (parse_value(p, item, depth + 1)) return -1;
        *tail = item;
        tail = &item->next;
        v->n++;
        skip_ws(p);
        if (at_end(p)) return fail(p, "unterminated %s", object ? "object" : "array");
        char c = p->s[p->pos++];
        if (c == close) return 0;
        if (c != ',') {
            p->pos--;
            return fail(p, "',' or '%c' expected", close);
        }
    }
}

static int parse_value(parser *p, plc_json *v, int depth)
{
    if (++p->values > PLC_JSON_MAX_VALUES) return fail(p, "more than %d values", PLC_JSON_MAX_VALUES);
    skip_ws(p);
    if (at_end(p)) return fail(p, "value expected, found the end of the text");
    switch (p->s[p->pos]) {
    case '{': return parse_container(p, v, depth, true);
    case '[': return parse_container(p, v, depth, false);
    case '"': v->type = PLC_JSON_STRING; return parse_string(p, &v->str, &v->str_len);
    case 't': v->type = PLC_JSON_BOOL; v->boolean = true; return expect_word(p, "true");
    case 'f': v->type = PLC_JSON_BOOL; return expect_word(p, "false");
    case 'n': v->type = PLC_JSON_NULL; return expect_word(p, "null");
    default: {
        unsigned char c = (unsigned char)p->s[p->pos];
        if (c == '-' || is_digit((char)c)) return parse_number(p, v);
        if (c >= 0x21 && c < 0x7f) return fail(p, "unexpected character '%c'", c);
        return fail(p, "unexpected byte 0x%02x", c);
    }
    }
}

int plc_json_parse(plc_arena *a, const char *text, size_t len, const plc_json **out, char *err,
                   size_t errlen)
{
    parser p = {a, text, len, 0, 0, err, errlen};
    plc_json *root = PLC_NEW(a, plc_json);
    if (parse_value(&p, root, 0)) return -1;
    skip_ws(&p);
    if (!at_end(&p)) return fail(&p, "unexpected text after the value");
    *out = root;
    return 0;
}

const plc_json *plc_json_get(const plc_json *obj, const char *key)
{
    if (!obj || obj->type != PLC_JSON_OBJECT) return NULL;
    for (const plc_json *c = obj->child; c; c = c->next)
        if (strcmp(c->key, key) == 0) return c;
    return NULL;
}

void plc_json_write_string(FILE *f, const char *s, size_t n)
{
    fputc('"', f);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
        else if (c < 0x20) fprintf(f, "\\u%04x", c);
        else fputc(c, f);
    }
    fputc('"', f);
}
