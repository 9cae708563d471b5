/* units.c: the unit table, number parsing and quantity evaluation. */
#include "compiler/frontend/frontend_int.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Decimal prefixes are powers of 10, binary ones powers of 2. Bit rates are
 * divided by 8 to give bytes per second. */
static const plc_unit units[] = {
    {"B", "B", PLC_UNIT_SIZE, 1.0},
    {"KB", "KB", PLC_UNIT_SIZE, 1e3},
    {"MB", "MB", PLC_UNIT_SIZE, 1e6},
    {"GB", "GB", PLC_UNIT_SIZE, 1e9},
    {"TB", "TB", PLC_UNIT_SIZE, 1e12},
    {"KiB", "KiB", PLC_UNIT_SIZE, 1024.0},
    {"MiB", "MiB", PLC_UNIT_SIZE, 1048576.0},
    {"GiB", "GiB", PLC_UNIT_SIZE, 1073741824.0},
    {"TiB", "TiB", PLC_UNIT_SIZE, 1099511627776.0},
    {"B/s", "B/s", PLC_UNIT_BANDWIDTH, 1.0},
    {"KB/s", "KB/s", PLC_UNIT_BANDWIDTH, 1e3},
    {"MB/s", "MB/s", PLC_UNIT_BANDWIDTH, 1e6},
    {"GB/s", "GB/s", PLC_UNIT_BANDWIDTH, 1e9},
    {"TB/s", "TB/s", PLC_UNIT_BANDWIDTH, 1e12},
    {"GiB/s", "GiB/s", PLC_UNIT_BANDWIDTH, 1073741824.0},
    {"Mbit/s", "Mbit/s", PLC_UNIT_BANDWIDTH, 1e6 / 8},
    {"Gbit/s", "Gbit/s", PLC_UNIT_BANDWIDTH, 1e9 / 8},
    {"Tbit/s", "Tbit/s", PLC_UNIT_BANDWIDTH, 1e12 / 8},
    {"Mb/s", "Mbit/s", PLC_UNIT_BANDWIDTH, 1e6 / 8},
    {"Gb/s", "Gbit/s", PLC_UNIT_BANDWIDTH, 1e9 / 8},
    {"Tb/s", "Tbit/s", PLC_UNIT_BANDWIDTH, 1e12 / 8},
    {"FLOPS", "FLOPS", PLC_UNIT_FLOPS, 1.0},
    {"GFLOPS", "GFLOPS", PLC_UNIT_FLOPS, 1e9},
    {"TFLOPS", "TFLOPS", PLC_UNIT_FLOPS, 1e12},
    {"PFLOPS", "PFLOPS", PLC_UNIT_FLOPS, 1e15},
    {"GFLOP/s", "GFLOPS", PLC_UNIT_FLOPS, 1e9},
    {"TFLOP/s", "TFLOPS", PLC_UNIT_FLOPS, 1e12},
    {"PFLOP/s", "PFLOPS", PLC_UNIT_FLOPS, 1e15},
    {"ns", "ns", PLC_UNIT_TIME, 1e-9},
    {"us", "us", PLC_UNIT_TIME, 1e-6},
    {"ms", "ms", PLC_UNIT_TIME, 1e-3},
    {"s", "s", PLC_UNIT_TIME, 1.0},
    {"%", "%", PLC_UNIT_PERCENT, 0.01},
    {"tokens", "tokens", PLC_UNIT_TOKENS, 1.0},
};

const plc_unit *plc_unit_find(const char *s, size_t len)
{
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (strlen(units[i].name) == len && memcmp(units[i].name, s, len) == 0) return &units[i];
    return NULL;
}

double plc_multiplier(const char *s, size_t len)
{
    if (len != 1) return 0;
    switch (s[0]) {
    case 'k': return 1e3;
    case 'M': return 1e6;
    case 'G': return 1e9;
    default: return 0;
    }
}

double plc_multiplier_binary(const char *s, size_t len)
{
    double m = plc_multiplier(s, len);
    return m == 1e3 ? 1024.0 : m == 1e6 ? 1048576.0 : m == 1e9 ? 1073741824.0 : 0;
}

int plc_edit_distance(const char *a, const char *b, int cap)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 64 || lb > 64) return cap + 1;
    int row[65];
    for (size_t j = 0; j <= lb; j++) row[j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        int diag = row[0];
        row[0] = (int)i;
        for (size_t j = 1; j <= lb; j++) {
            int up = row[j];
            int best = diag + (a[i - 1] != b[j - 1]);
            if (row[j] + 1 < best) best = row[j] + 1;
            if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb] > cap ? cap + 1 : row[lb];
}

const char *plc_unit_suggest(const char *s)
{
    const char *best = NULL;
    int best_d = 3; /* suggest within distance 2 */
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        int d = plc_edit_distance(s, units[i].name, 2);
        if (d < best_d) { best_d = d; best = units[i].canonical; }
    }
    return best;
}

const char *plc_unit_kind_describe(int kind)
{
    switch (kind) {
    case PLC_UNIT_COUNT: return "a plain number (multipliers k, M, G allowed)";
    case PLC_UNIT_SIZE: return "a size (B, KB, MB, GB, TB, KiB, MiB, GiB, TiB)";
    case PLC_UNIT_BANDWIDTH: return "a bandwidth (MB/s, GB/s, TB/s, Gbit/s, ...)";
    case PLC_UNIT_FLOPS: return "a FLOP rate (GFLOPS, TFLOPS, PFLOPS)";
    case PLC_UNIT_TIME: return "a time (ns, us, ms, s)";
    case PLC_UNIT_PERCENT: return "a share (a percentage such as 80%, or a fraction such as 0.8)";
    case PLC_UNIT_TOKENS: return "a token count (e.g. 4M tokens)";
    default: return "a number";
    }
}

const char *plc_unit_kind_name(int kind)
{
    switch (kind) {
    case PLC_UNIT_COUNT: return "a plain number";
    case PLC_UNIT_SIZE: return "a size";
    case PLC_UNIT_BANDWIDTH: return "a bandwidth";
    case PLC_UNIT_FLOPS: return "a FLOP rate";
    case PLC_UNIT_TIME: return "a time";
    case PLC_UNIT_PERCENT: return "a share";
    case PLC_UNIT_TOKENS: return "a token count";
    default: return "a number";
    }
}

bool plc_number_parse(const char *text, plc_number *out)
{
    bool is_int = strspn(text, "0123456789") == strlen(text);
    out->is_int = is_int;
    out->i = 0;
    errno = 0;
    if (is_int) {
        unsigned long long v = strtoull(text, NULL, 10);
        if (errno == ERANGE || v > (unsigned long long)INT64_MAX) return false;
        out->i = (int64_t)v;
        out->d = (double)v;
        return true;
    }
    out->d = strtod(text, NULL);
    if (errno == ERANGE && fabs(out->d) > 1.0) return false; /* underflow to 0 is fine */
    return isfinite(out->d);
}

plc_quantity_status plc_quantity_eval(const char *number, const char *const *words, int nwords,
                                      plc_quantity *q, int *bad_part)
{
    memset(q, 0, sizeof *q);
    q->kind = -1;
    q->mult = 1;
    *bad_part = 0;
    plc_number n;
    if (!plc_number_parse(number, &n)) return PLC_QTY_OVERFLOW;
    int w = 0;
    if (w < nwords) {
        double m = plc_multiplier(words[w], strlen(words[w]));
        if (m > 0) { q->mult = m; w++; }
    }
    if (w < nwords) {
        q->unit = plc_unit_find(words[w], strlen(words[w]));
        if (!q->unit) { *bad_part = w + 1; return PLC_QTY_UNKNOWN_UNIT; }
        q->kind = q->unit->kind;
        w++;
    }
    if (w < nwords) { *bad_part = w + 1; return nwords == 2 && w == 1 ? PLC_QTY_EXTRA_UNIT : PLC_QTY_UNKNOWN_UNIT; }
    double factor = q->mult * (q->unit ? q->unit->factor : 1.0);
    q->value = n.d * factor;
    if (!isfinite(q->value)) return PLC_QTY_OVERFLOW;
    /* exact integers: whole literal times a whole factor */
    if (n.is_int && factor >= 1 && factor == floor(factor)) {
        int64_t f = (int64_t)factor;
        if (n.i != 0 && f > INT64_MAX / n.i) return PLC_QTY_OVERFLOW;
        q->ivalue = n.i * f;
        q->is_int = true;
    } else if (q->value == floor(q->value) && fabs(q->value) < 9.0e15) {
        q->ivalue = (int64_t)q->value;
        q->is_int = true;
    }
    return PLC_QTY_OK;
}

plc_quantity_status plc_quantity_parse_text(const char *text, plc_quantity *q, size_t *bad_offset,
                                            bool *syntax_error)
{
    *syntax_error = false;
    *bad_offset = 0;
    const char *p = text;
    while (*p == ' ' || *p == '\t') p++;
    const char *num = p;
    while ((*p >= '0' && *p <= '9')) p++;
    if (p == num) { *syntax_error = true; *bad_offset = (size_t)(num - text); return PLC_QTY_OK; }
    if (*p == '.' && p[1] >= '0' && p[1] <= '9') { p++; while (*p >= '0' && *p <= '9') p++; }
    if ((*p == 'e' || *p == 'E') &&
        ((p[1] >= '0' && p[1] <= '9') || ((p[1] == '-' || p[1] == '+') && p[2] >= '0' && p[2] <= '9'))) {
        p += 2;
        while (*p >= '0' && *p <= '9') p++;
    }
    char numbuf[64];
    size_t nlen = (size_t)(p - num);
    if (nlen >= sizeof numbuf) { *bad_offset = (size_t)(num - text); return PLC_QTY_OVERFLOW; }
    memcpy(numbuf, num, nlen);
    numbuf[nlen] = '\0';
    char wordbuf[2][32];
    const char *words[2];
    size_t starts[2];
    int nwords = 0;
    for (;;) {
        while (*p == ' ' || *p == '\t') p++;
        if (!*p) break;
        const char *w = p;
        while (*p && *p != ' ' && *p != '\t') p++;
        size_t wl = (size_t)(p - w);
        if (nwords == 2 || wl >= sizeof wordbuf[0]) {
            *syntax_error = true;
            *bad_offset = (size_t)(w - text);
            return PLC_QTY_OK;
        }
        memcpy(wordbuf[nwords], w, wl);
        wordbuf[nwords][wl] = '\0';
        words[nwords] = wordbuf[nwords];
        starts[nwords] = (size_t)(w - text);
        nwords++;
    }
    int bad;
    plc_quantity_status st = plc_quantity_eval(numbuf, words, nwords, q, &bad);
    if (bad) *bad_offset = starts[bad - 1];
    else *bad_offset = (size_t)(num - text);
    return st;
}
