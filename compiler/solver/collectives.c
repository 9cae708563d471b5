/* collectives.c: alpha-beta costs of collectives, hierarchical across nodes.
 *
 * Bandwidths in the catalog are per GPU and per direction: intra_node_bw is
 * one GPU's NVLink bandwidth, inter_node_bw one GPU's share of the network
 * (one NIC per GPU, as in DGX-style nodes). comm_eff scales both.
 *
 * A group with r members on each of k nodes runs hierarchically: the
 * intra-node part over r ranks at NVLink speed, the inter-node part over k
 * ranks (one per node and rail) on 1/r of the data each, all r rails in
 * parallel. Ring: bandwidth-optimal, latency linear in the ranks. Tree:
 * (double binary tree, all-reduce and broadcast only) latency logarithmic,
 * bandwidth term without the (n-1)/n saving. */
#include <math.h>

#include "compiler/solver/solver_int.h"

const char *plc_collective_name(plc_collective_kind k)
{
    static const char *const names[] = {"all-reduce", "reduce-scatter", "all-gather", "broadcast"};
    return (unsigned)k < PLC_COLL_KIND_COUNT ? names[k] : "?";
}

static double eff_of(const plc_hw *hw) { return hw->comm_eff > 0 ? hw->comm_eff : 1.0; }

/* data volume factor per rank of one ring phase, and phases per collective */
static double ring_phase_volume(int64_t n) { return n > 1 ? (double)(n - 1) / (double)n : 0.0; }
static int ring_phases(plc_collective_kind kind) { return kind == PLC_COLL_ALL_REDUCE ? 2 : 1; }

/* one flat ring over n ranks on one kind of link */
static double flat_ring(plc_collective_kind kind, double bytes, int64_t n, double bw, double lat)
{
    if (n <= 1 || bytes <= 0) return 0.0;
    if (kind == PLC_COLL_BROADCAST) /* pipelined chain */
        return bytes / bw + (double)(n - 1) * lat;
    int phases = ring_phases(kind);
    return phases * (ring_phase_volume(n) * bytes / bw + (double)(n - 1) * lat);
}

static double flat_tree(plc_collective_kind kind, double bytes, int64_t n, double bw, double lat)
{
    if (n <= 1 || bytes <= 0) return 0.0;
    double depth = ceil(log2((double)n));
    if (kind == PLC_COLL_ALL_REDUCE) return 2.0 * (bytes / bw + depth * lat);
    return bytes / bw + depth * lat; /* broadcast */
}

typedef double (*flat_fn)(plc_collective_kind, double, int64_t, double, double);

static double hierarchical(const plc_hw *hw, plc_collective_kind kind, double bytes,
                           int64_t group_size, int64_t per_node, flat_fn inter_algo)
{
    if (group_size <= 1 || bytes <= 0) return 0.0;
    double e = eff_of(hw);
    double bw_in = hw->intra_node_bw * e, bw_out = hw->inter_node_bw * e;
    if (per_node <= 0 || per_node > group_size) per_node = group_size;
    int64_t nodes = group_size / per_node;
    if (nodes <= 1) /* inside one node: NVLink ring (NCCL's choice there) */
        return flat_ring(kind, bytes, group_size, bw_in, hw->intra_node_lat);
    double r = (double)per_node;
    double t = 0.0;
    switch (kind) {
    case PLC_COLL_ALL_REDUCE:
        /* reduce-scatter in node, all-reduce of 1/r across nodes, all-gather in node */
        t += 2.0 * flat_ring(PLC_COLL_REDUCE_SCATTER, bytes, per_node, bw_in, hw->intra_node_lat);
        t += inter_algo(kind, bytes / r, nodes, bw_out, hw->inter_node_lat);
        break;
    case PLC_COLL_REDUCE_SCATTER:
    case PLC_COLL_ALL_GATHER:
        t += flat_ring(kind, bytes, per_node, bw_in, hw->intra_node_lat);
        t += flat_ring(kind, bytes / r, nodes, bw_out, hw->inter_node_lat);
        break;
    case PLC_COLL_BROADCAST:
        t += inter_algo(kind, bytes / r, nodes, bw_out, hw->inter_node_lat);
        t += flat_ring(PLC_COLL_ALL_GATHER, bytes, per_node, bw_in, hw->intra_node_lat);
        break;
    default: break;
    }
    return t;
}

double plc_cost_collective_ring(const plc_hw *hw, plc_collective_kind kind, double bytes,
                                int64_t group_size, int64_t per_node)
{
    return hierarchical(hw, kind, bytes, group_size, per_node, flat_ring);
}

double plc_cost_collective_tree(const plc_hw *hw, plc_collective_kind kind, double bytes,
                                int64_t group_size, int64_t per_node)
{
    if (kind != PLC_COLL_ALL_REDUCE && kind != PLC_COLL_BROADCAST)
        return plc_cost_collective_ring(hw, kind, bytes, group_size, per_node);
    return hierarchical(hw, kind, bytes, group_size, per_node, flat_tree);
}

double plc_cost_collective(const plc_hw *hw, plc_collective_kind kind, double bytes,
                           int64_t group_size, int64_t ranks_per_node_in_group)
{
    if (group_size <= 1 || bytes <= 0) return 0.0;
    double t = plc_cost_collective_ring(hw, kind, bytes, group_size, ranks_per_node_in_group);
    if (kind == PLC_COLL_ALL_REDUCE || kind == PLC_COLL_BROADCAST) {
        double tree = plc_cost_collective_tree(hw, kind, bytes, group_size, ranks_per_node_in_group);
        if (tree < t) t = tree;
    }
    /* one launch of the collective kernel */
    return t + hw->kernel_launch;
}

double plc_cost_p2p(const plc_hw *hw, double bytes, bool cross_node)
{
    if (bytes <= 0) return 0.0;
    double e = eff_of(hw);
    if (cross_node) return bytes / (hw->inter_node_bw * e) + hw->inter_node_lat;
    return bytes / (hw->intra_node_bw * e) + hw->intra_node_lat;
}

plc_comm_group plc_group_place(int64_t size, int64_t stride, int64_t gpus_per_node)
{
    plc_comm_group g = {size, size};
    if (size <= 1) return g;
    if (stride >= gpus_per_node) {
        g.per_node = 1;
    } else {
        int64_t fit = gpus_per_node / stride; /* members that share a node */
        g.per_node = fit < size ? fit : size;
        if (g.per_node < 1) g.per_node = 1;
    }
    return g;
}

void plc_layout_groups_of(const plc_layout *l, int64_t gpn, plc_layout_groups *out)
{
    out->tp = plc_group_place(l->tp, 1, gpn);
    out->cp = plc_group_place(l->cp, l->tp, gpn);
    out->dp = plc_group_place(l->dp, l->tp * l->cp, gpn);
    out->pp = plc_group_place(l->pp, l->tp * l->cp * l->dp, gpn);
    /* data x context: contiguous in rank order after tp */
    out->dpcp = plc_group_place(l->dp * l->cp, l->tp, gpn);
}

/* An all-to-all over n ranks, per_node of them on each node it touches, a
 * rank sending bytes spread evenly over the n (its own share stays): the
 * share for its node's other members goes over NVLink, the rest over the
 * network, both at once. inter_bytes replaces bytes for the network part
 * where a dispatcher sends a token once per node and forwards it inside
 * (DeepEP); else pass bytes. */
double plc_cost_all_to_all(const plc_hw *hw, double bytes, double inter_bytes, int64_t n, int64_t per_node)
{
    if (n <= 1 || bytes <= 0) return 0.0;
    if (per_node <= 0 || per_node > n) per_node = n;
    double e = eff_of(hw);
    double intra = bytes * (double)(per_node - 1) / (double)n;
    double inter = inter_bytes * (double)(n - per_node) / (double)n;
    double t = intra / (hw->intra_node_bw * e) + hw->intra_node_lat;
    if (inter > 0) t = fmax(t, inter / (hw->inter_node_bw * e) + hw->inter_node_lat);
    return t + hw->kernel_launch;
}
