/* lower.h: lowering of one concrete layout to a plan (include/plc/plan.h):
 * a static instruction program per pipeline stage for one training step,
 * the communicator groups, and the static memory plan of every program.
 *
 * The lowered plan is validated (plc_plan_validate) and checked
 * (compiler/plantools/plan_check.h: send/recv matching, collective order, a
 * simulation of all ranks terminates) before plc_lower returns it. */
#ifndef PLC_LOWER_H
#define PLC_LOWER_H

#include <stddef.h>

#include "plc/arena.h"
#include "plc/job.h"
#include "compiler/lower/memplan.h"
#include "plc/plan.h"
#include "plc/status.h"

/* Lowers job + layout to *out (allocated in *a). pred may be NULL (zeros);
 * stage_stats, when not NULL, receives layout->pp memory-plan summaries.
 * Returns PLC_OK, or with a message in err: PLC_E_INPUT the layout breaks
 * a rule (common/layout_rules.h), PLC_E_INTERNAL or PLC_E_DEADLOCK a
 * compiler bug caught by the checks, PLC_E_SYSTEM out of memory. */
plc_status plc_lower(const plc_job *job, const plc_layout *layout, const plc_prediction *pred, plc_arena *a,
              plc_plan *out, plc_memplan_stats *stage_stats, char *err, size_t errlen);

#endif
