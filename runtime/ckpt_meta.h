/* ckpt_meta.h: what a checkpoint's metadata must say before a resume uses
 * it (docs/checkpoint.md): the settings a resume compares with the plan,
 * the CRC-32 of the metadata and of each tensor. No MPI and no executor
 * here, so that the fuzzer (fuzz/) drives the same checks plrun runs. */
#ifndef PLC_RUNTIME_CKPT_META_H
#define PLC_RUNTIME_CKPT_META_H

#include <stddef.h>
#include <stdint.h>

#include "plc/plan.h"
#include "runtime/safetensors.h"

#define PLC_CKPT_VERSION "2"    /* metadata "version" written and read */
#define PLC_CKPT_VALUE_MAX 4096 /* longest setting value (a data path) */
#define PLC_CKPT_META_CRC_KEY "crc32.__metadata__"

/* the settings a resume compares, by spec name ("train.lr.peak"): how many,
 * the plan's value of the i-th as stored (its name returned), whether a
 * name is one, and the list for messages */
int plc_ckpt_nsettings(void);
const char *plc_ckpt_setting_value(const plc_plan *plan, int i, char *out, size_t n);
int plc_ckpt_setting_known(const char *name);
void plc_ckpt_settings_list(char *out, size_t n);

/* CRC-32 over the pairs kv[2i] = key, kv[2i+1] = value but its own key,
 * sorted by key, each as key NUL value NUL */
uint32_t plc_ckpt_meta_crc(const char **kv, size_t n);

/* A parsed checkpoint against the plan: format and version, the metadata's
 * checksum, every setting (but those in allow[0..nallow)), the step (into
 * *step). 0, or -1 with a message naming path and what is wrong. */
int plc_ckpt_check_file(const plc_st_file *f, const plc_plan *plan, const char *path, const char *const *allow,
                        int nallow, int64_t *step, char *err, size_t errlen);
/* tensor `name`'s bytes against its stored checksum (0 when absent: the
 * reader names a missing tensor). 0, or -1 naming the tensor. */
int plc_ckpt_check_tensor(const plc_st_file *f, const char *name, const char *path, char *err, size_t errlen);

#endif
