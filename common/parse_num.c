/* parse_num.c: numbers from text; see parse_num.h. */
#include "common/parse_num.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

int plc_parse_int(const char *text, int64_t lo, int64_t hi, int64_t *out)
{
    if (!text || !*text) return -1;
    char *end;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (errno || *end || v < lo || v > hi) return -1;
    *out = v;
    return 0;
}

int plc_parse_real(const char *text, const char *suffix, double lo, double hi, double *out)
{
    if (!text || !*text) return -1;
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (end == text || strcmp(end, suffix) || !isfinite(v) || !(v >= lo && v <= hi)) return -1;
    if (errno == ERANGE && fabs(v) > 1.0) return -1; /* overflow; underflow to 0 is a number */
    *out = v;
    return 0;
}
