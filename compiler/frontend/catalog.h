/* catalog.h: the hardware catalog, a YAML file (read with libyaml) mapping
 * entry names to figures:
 *
 *   A100-SXM4-80GB:
 *     memory: 80 GiB
 *     bf16_flops: 312 TFLOPS
 *     ...
 *
 * Every key of PLC_HW_FIELDS (plc/job.h) is required in every entry, written
 * with a unit of its kind. Errors are reported as catalog.yaml:line:col. */
#ifndef PLC_CATALOG_H
#define PLC_CATALOG_H

#include "compiler/frontend/diag.h"
#include "plc/arena.h"
#include "plc/job.h"

#include <stddef.h>

typedef struct plc_catalog {
    const plc_source *src;
    plc_hw *entries;
    int n;
} plc_catalog;

/* Reads and checks a catalog file. Returns the number of errors reported. */
int plc_catalog_load(plc_arena *a, plc_diag *d, const char *path, plc_catalog *out);
/* Same, from text already in memory (name is used in messages). */
int plc_catalog_parse(plc_arena *a, plc_diag *d, const plc_source *src, plc_catalog *out);

/* the figures of plc_hw, from PLC_HW_FIELDS: key, unit kind, offset */
typedef struct plc_hw_field {
    const char *key;
    int unit;
    size_t offset;
} plc_hw_field;
extern const plc_hw_field plc_hw_fields[];
extern const int plc_nhw_fields;

const plc_hw *plc_catalog_find(const plc_catalog *c, const char *name);
/* "A100-SXM4-40GB, A100-SXM4-80GB, ..." */
const char *plc_catalog_names(plc_arena *a, const plc_catalog *c);

#endif
