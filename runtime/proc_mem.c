/* proc_mem.c: VmHWM and VmRSS of this process, resetting VmHWM, and the
 * allocator's threshold for blocks mapped on their own. */
#include "runtime/proc_mem.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

static double status_kib(const char *key)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return 0;
    char line[256];
    double v = 0;
    size_t n = strlen(key);
    while (fgets(line, sizeof line, f))
        if (strncmp(line, key, n) == 0 && line[n] == ':') {
            sscanf(line + n + 1, "%lf", &v);
            break;
        }
    fclose(f);
    return v * 1024.0;
}

double plc_proc_peak_bytes(void) { return status_kib("VmHWM"); }
double plc_proc_rss_bytes(void) { return status_kib("VmRSS"); }
double plc_proc_rss_file_bytes(void) { return status_kib("RssFile"); }

int plc_proc_reset_peak(void)
{
    FILE *f = fopen("/proc/self/clear_refs", "w");
    if (!f) return -1;
    int ok = fputs("5", f) >= 0; /* 5: reset the peak resident set size */
    return fclose(f) == 0 && ok ? 0 : -1;
}

int plc_proc_unmap_large_frees(size_t bytes)
{
#ifdef __GLIBC__
    return bytes <= INT_MAX && mallopt(M_MMAP_THRESHOLD, (int)bytes) == 1 ? 0 : -1;
#else
    (void)bytes;
    return -1;
#endif
}
