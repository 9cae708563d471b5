/* plan_dump.h: the stable text form of a plan (plc dump, plc diff, golden
 * tests). One line per group, buffer and instruction; nothing in it depends
 * on the machine, the time or memory addresses, so dumps diff well. */
#ifndef PLC_PLAN_DUMP_H
#define PLC_PLAN_DUMP_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "plc/plan.h"

/* the header: spec, model, training settings, layout, predictions, groups,
 * stage map */
void plc_dump_header(FILE *out, const plc_plan *p);

/* one program: its buffers (with_buffers) and its instructions, the loops
 * the plan file folded (plan.h's plc_fold) shown once, their first
 * iteration between "loop Nx {" and "}"; a program without folds prints
 * every row. numbered
 * prints instruction indices (unnumbered listings give waits as a distance
 * back, so that inserting an instruction changes few lines: plc diff) */
void plc_dump_program(FILE *out, const plc_plan *p, uint32_t program, bool with_buffers, bool numbered);

/* one instruction line (no newline): "   123 bwd   L3  m1  MATMUL  ..." */
void plc_dump_instr(FILE *out, const plc_plan *p, const plc_program *g, uint32_t index, bool numbered);

/* everything (rank < 0), or the header and the program of one world rank */
void plc_dump_plan(FILE *out, const plc_plan *p, int64_t rank, bool with_buffers);

#endif
