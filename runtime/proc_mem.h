/* proc_mem.h: the process's measured memory, from /proc/self/status. */
#ifndef PLC_PROC_MEM_H
#define PLC_PROC_MEM_H

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

#endif
