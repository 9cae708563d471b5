/* backend.c: picking a backend by name, and the shared failure helper. */
#include "runtime/backend.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int plc_backend_fail(plc_backend *be, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(be->error, sizeof be->error, fmt, ap);
    va_end(ap);
    return -1;
}

plc_backend *plc_backend_create(const char *name, plc_comm *comm, int threads,
                                const plc_plan *plan, char *err, size_t errlen)
{
    if (strcmp(name, "cpu") == 0) return plc_backend_cpu_create(comm, threads, plan, err, errlen);
    if (strcmp(name, "cuda") == 0) return plc_backend_cuda_create(comm, threads, plan, err, errlen);
    snprintf(err, errlen, "unknown backend '%s' (valid: cpu, cuda)", name);
    return NULL;
}
