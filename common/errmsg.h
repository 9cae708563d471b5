/* errmsg.h: how a function with (char *err, size_t errlen) parameters
 * reports a failure: it formats a message into the caller's buffer and
 * returns -1. */
#ifndef PLC_ERRMSG_H
#define PLC_ERRMSG_H

#include <stddef.h>

/* writes the printf-style message into err[0..errlen) (truncated to fit;
 * nothing is written when err is NULL or errlen is 0) and returns -1, so a
 * caller can write `return plc_fail(err, errlen, "...", ...);` */
int plc_fail(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
