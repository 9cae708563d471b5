/* parse_num.h: the one parser of whole numbers given on a command line or
 * in metadata (plc's and plrun's options, checkpoint steps). Spec values
 * with units have their own grammar (compiler/frontend/units.c). */
#ifndef PLC_PARSE_NUM_H
#define PLC_PARSE_NUM_H

#include <stdint.h>

/* text, all of it, as a decimal integer in [lo, hi]: 0 and *out set, or -1
 * (empty, trailing characters, out of range, overflow) with *out untouched */
int plc_parse_int(const char *text, int64_t lo, int64_t hi, int64_t *out);

#endif
