/* plan_groups.c: which ranks belong to a plan's communicator group, stated
 * once (plan.h's group contract). plrun builds its communicators from it
 * (runtime/comm.c), the plan validator and the operand check size
 * collectives with it, and the simulator and the trace group ranks with it;
 * nothing else decides membership.
 *
 * A group varies some rank coordinates and fixes the others: the ranks with
 * equal fixed coordinates share one communicator, whose colour is the world
 * rank of its first member (the varying coordinates set to 0) and in which a
 * rank's index follows the world rank order (tp fastest, then cp, dp, pp).
 * PLC_GROUP_PP_ENDS keeps only pipeline ranks 0 and pp-1 of the varying pp
 * coordinate; it qualifies PLC_DIM_PP and means nothing without it, so the
 * validator refuses a group carrying the flag but not the dimension (here
 * such a group is taken as if the flag were absent). */
#include "plc/plan.h"

plc_group_seat plc_group_seat_of(const plc_layout *l, const plc_group *g, plc_rank_coords co)
{
    plc_group_seat s = {1, 0, 0, 1};
    plc_rank_coords fixed = co;
    if (g->dims & PLC_DIM_PP) {
        fixed.pp = 0;
        if (g->flags & PLC_GROUP_PP_ENDS) {
            s.size = l->pp > 1 ? 2 : 1;
            s.member = co.pp == 0 || co.pp == l->pp - 1;
            s.index = co.pp == 0 || !s.member ? 0 : s.size - 1;
        } else {
            s.size = l->pp;
            s.index = co.pp;
        }
    }
    if (g->dims & PLC_DIM_DP) { fixed.dp = 0; s.index = s.index * l->dp + co.dp; s.size *= l->dp; }
    if (g->dims & PLC_DIM_CP) { fixed.cp = 0; s.index = s.index * l->cp + co.cp; s.size *= l->cp; }
    if (g->dims & PLC_DIM_TP) { fixed.tp = 0; s.index = s.index * l->tp + co.tp; s.size *= l->tp; }
    s.colour = plc_coords_to_rank(l, fixed);
    return s;
}

int64_t plc_plan_group_size(const plc_layout *l, const plc_group *g)
{
    const plc_rank_coords first = {0, 0, 0, 0}; /* a member of every group */
    return plc_group_seat_of(l, g, first).size;
}
