/* plan_io.h: the plan file (job.bin), written by plc and read by plc dump,
 * plc diff, plc trace and plrun. docs/plan-format.md describes the bytes.
 *
 * Every function returns 0 on success, or -1 with a one-line message in
 * err (never crashing on a damaged or hostile file). */
#ifndef PLC_PLAN_IO_H
#define PLC_PLAN_IO_H

#include <stddef.h>
#include <stdint.h>

#include "plc/arena.h"
#include "plc/plan.h"
#include "plc/status.h"

/* section ids, in file order */
enum {
    PLC_SEC_STRINGS = 1, /* string bytes, referenced as (offset, length) */
    PLC_SEC_META = 2,    /* spec, model, train, hardware, layout, predictions */
    PLC_SEC_GROUPS = 3,  /* communicator groups */
    PLC_SEC_PROGRAMS = 4,/* buffers and instructions of every program */
    PLC_SEC_STAGES = 5,  /* program of each pipeline rank */
    PLC_SEC_COUNT_ = 5
};

#define PLC_PLAN_ENDIAN_PROBE 0x01020304u
#define PLC_PLAN_FLOAT_PROBE (-1234.5678) /* bit pattern 0xC0934A456D5CFAAD */

/* How the tables are written: loops folded (docs/plan-format.md), or every
 * row on its own. Both load to the same plan. */
typedef enum plc_plan_form { PLC_PLAN_FOLDED, PLC_PLAN_EXPANDED } plc_plan_form;

/* Serialises p into a malloc'd buffer (*data, *len; the caller frees),
 * folded (plc_plan_encode) or as asked. The bytes depend only on the plan's
 * content and the form: the same plan gives the same file. Returns 0, -2
 * out of memory, -1 a folded table failed its check (an internal error). */
int plc_plan_encode(const plc_plan *p, uint8_t **data, size_t *len, char *err, size_t errlen);
int plc_plan_encode_as(const plc_plan *p, plc_plan_form form, uint8_t **data, size_t *len, char *err, size_t errlen);

/* plc_plan_encode + an atomic write (common/atomic_file.h).
 * PLC_OK; PLC_E_SYSTEM when the file cannot be written or memory runs out
 * (err says why); PLC_E_INTERNAL when the plan cannot be encoded. */
plc_status plc_plan_write_file(const plc_plan *p, const char *path, char *err, size_t errlen);
plc_status plc_plan_write_file_as(const plc_plan *p, plc_plan_form form, const char *path, char *err, size_t errlen);

/* Parses and validates (plc_plan_validate) a plan from memory; everything in
 * *out is allocated in *a. */
int plc_plan_decode(plc_arena *a, const uint8_t *data, size_t len, plc_plan *out, char *err,
                    size_t errlen);

/* Reads PATH and decodes it. */
int plc_plan_load_file(plc_arena *a, const char *path, plc_plan *out, char *err, size_t errlen);

/* Semantic checks shared by the loader and the compiler (before writing):
 * layout and world size, groups, stage map, every buffer inside its arena,
 * every instruction's op, stream, phase, buffer ids, wait, group and peer,
 * and every operand's element count and dtype against its buffer. */
int plc_plan_validate(const plc_plan *p, char *err, size_t errlen);

/* Instruction idx of program g against the operand contract (plan.h's
 * table, common/plan_ops.c): 0, or -1 with what is wrong in err, without a
 * location (the caller names it). Buffers are taken as validated. */
int plc_instr_check(const plc_plan *p, const plc_program *g, uint32_t idx, char *err, size_t errlen);

/* FNV-1a 64 of a byte string (the spec hash) */
uint64_t plc_fnv1a64(const void *data, size_t len);

#endif
