/* proc_mem.h: the process's measured memory, from /proc/self/status. */
#ifndef PLC_PROC_MEM_H
#define PLC_PROC_MEM_H

/* peak resident set (VmHWM) and current resident set (VmRSS) in bytes;
 * 0 where /proc is not available */
double plc_proc_peak_bytes(void);
double plc_proc_rss_bytes(void);

#endif
