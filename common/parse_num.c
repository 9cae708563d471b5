/* parse_num.c: whole numbers from text; see parse_num.h. */
#include "common/parse_num.h"

#include <errno.h>
#include <stdlib.h>

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
