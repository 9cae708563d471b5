/* search.h: legality of a layout for a job, and the candidate values of each
 * layout dimension. plc_solve and plc_estimate_layout (compiler/solver/solver.h)
 * are implemented in search.c. */
#ifndef PLC_SEARCH_H
#define PLC_SEARCH_H

#include <stdbool.h>
#include <stddef.h>

#include "compiler/solver/solver.h"

/* true when l is legal for job (divisibility, schedule rules, GPU count);
 * otherwise false with the reason in why. */
bool plc_layout_check(const plc_job *job, const plc_layout *l, char *why, size_t size);

/* Orders candidates by the job's objective: negative when a is better. */
int plc_candidate_compare(const plc_job *job, const plc_candidate *a, const plc_candidate *b);

#endif
