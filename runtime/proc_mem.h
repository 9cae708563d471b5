/* proc_mem.h: the process's measured memory, from /proc/self/status, and
 * the allocator setting that lets large freed blocks leave it. */
#ifndef PLC_PROC_MEM_H
#define PLC_PROC_MEM_H

#include <stddef.h>

/* peak resident set (VmHWM) and current resident set (VmRSS) in bytes;
 * 0 where /proc is not available */
double plc_proc_peak_bytes(void);
double plc_proc_rss_bytes(void);
/* the file-backed part of the resident set (RssFile): the program's and
 * the libraries' code and read-only data, faulted in as code first runs */
double plc_proc_rss_file_bytes(void);

/* sets the peak (VmHWM) back to the current resident set (Linux's
 * /proc/self/clear_refs); 0, or -1 where that is not possible */
int plc_proc_reset_peak(void);

/* Heap blocks of at least `bytes` are mapped on their own and unmapped when
 * freed, at a threshold that stays put (glibc's M_MMAP_THRESHOLD). glibc's
 * default raises its threshold to the size of every such block freed (up
 * to 32 MiB): a library's large temporaries then come from the heap, which
 * keeps every page they ever reached resident, and they land higher in it
 * as the order of allocations and frees changes from step to step. 0, or
 * -1 where the allocator has no such setting. */
int plc_proc_unmap_large_frees(size_t bytes);

#endif
