/* parse_num.h: the one parser of numbers given on a command line, in
 * metadata or in a catalog entry (plc's and plrun's options, checkpoint
 * steps, engine figures). Spec values with units have their own grammar
 * (compiler/frontend/units.c), JSON its own (runtime/json.c). */
#ifndef PLC_PARSE_NUM_H
#define PLC_PARSE_NUM_H

#include <stdint.h>

/* text, all of it, as a decimal integer in [lo, hi]: 0 and *out set, or -1
 * (empty, trailing characters, out of range, overflow) with *out untouched */
int plc_parse_int(const char *text, int64_t lo, int64_t hi, int64_t *out);

/* text as a finite real number in [lo, hi] followed by exactly suffix ("" for
 * none, "%" for a percentage): 0 and *out set, or -1 (empty, no number,
 * other trailing characters, out of range, not finite, overflow) with *out
 * untouched */
int plc_parse_real(const char *text, const char *suffix, double lo, double hi, double *out);

#endif
