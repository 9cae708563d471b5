/* plan_check.h: compile-time checks of a lowered plan, run before any plan
 * is written: every SEND has its RECV (same count, posting order), every
 * collective is entered by all members of its communicator in the same
 * order with the same operation and count, and a simulation of all ranks'
 * programs terminates (compiler/plantools/plan_sim.h). A failure is a compiler bug;
 * the message names the rank and the instruction. */
#ifndef PLC_PLAN_CHECK_H
#define PLC_PLAN_CHECK_H

#include <stddef.h>

#include "plc/plan.h"
#include "plc/status.h"

/* worlds up to this size are simulated rank by rank; larger ones one rank
 * per stage (exact by symmetry, see plan_sim.h) */
#define PLC_CHECK_ALL_RANKS_MAX 64

/* PLC_OK, or the first failure in err: PLC_E_DEADLOCK when the ranks cannot
 * all finish, PLC_E_INTERNAL another violation, PLC_E_SYSTEM out of memory */
plc_status plc_plan_check(const plc_plan *p, char *err, size_t errlen);

#endif
