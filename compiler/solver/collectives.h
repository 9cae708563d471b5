/* collectives.h: hierarchical latency-bandwidth costs of collectives and of
 * point-to-point messages, and which groups span nodes under the Megatron
 * rank order (tp fastest, then cp, dp, pp). The public primitives are
 * declared in compiler/solver/solver.h. */
#ifndef PLC_COLLECTIVES_H
#define PLC_COLLECTIVES_H

#include <stdint.h>

#include "compiler/solver/solver.h"

/* One communicator group of the layout: its size and how its members lie on
 * the nodes. */
typedef struct plc_group {
    int64_t size;
    int64_t per_node; /* members on each node it touches */
} plc_group;

/* Group of a dimension whose ranks are `stride` apart (stride = product of the
 * faster dimensions) on nodes of gpus_per_node GPUs. */
plc_group plc_group_place(int64_t size, int64_t stride, int64_t gpus_per_node);

typedef struct plc_layout_groups {
    plc_group tp, cp, dp, pp, dpcp; /* dpcp: data x context, the gradient group */
} plc_layout_groups;

void plc_layout_groups_of(const plc_layout *l, int64_t gpus_per_node, plc_layout_groups *out);

/* Ring and tree costs separately (tests compare them); plc_cost_collective
 * takes the better of the two. */
double plc_cost_collective_ring(const plc_hw *hw, plc_collective_kind kind, double bytes,
                                int64_t group_size, int64_t per_node);
double plc_cost_collective_tree(const plc_hw *hw, plc_collective_kind kind, double bytes,
                                int64_t group_size, int64_t per_node);

static inline double plc_cost_group(const plc_hw *hw, plc_collective_kind kind, double bytes,
                                    plc_group g)
{
    return plc_cost_collective(hw, kind, bytes, g.size, g.per_node);
}

#endif
