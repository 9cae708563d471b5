/* overlap.c: the overlap terms of the time model (solver_int.h). Each engine
 * figure is read here only, so an overlap is modelled in one place.
 *
 * An overlapped collective is not free: its kernels hold a share of the SMs
 * (engine figure overlap_sm_share: Transformer Engine's userbuffers run on
 * 16 SMs, NCCL on one SM per channel) for as long as they run, so the
 * compute under them slows by that share of the hidden time. Each term
 * below returns the exposed part plus that cost (charged). */
#include "compiler/solver/solver_int.h"

#include <math.h>

static double max2(double a, double b) { return a > b ? a : b; }

/* what a collective of `comm` seconds costs the critical path when
 * `exposed` of it is not hidden */
static double charged(const plc_job *job, double comm, double exposed)
{
    double share = job->engine.overlap_sm_share > 0 ? job->engine.overlap_sm_share : 0.0;
    return exposed + share * max2(0.0, comm - exposed);
}

/* each term as its split (exposed, charged): the time model reads the
 * charged figure, the simulated timeline (plantools' engine trace) draws
 * the exposed part on the compute stream, the slowdown (charged - exposed)
 * beside it and the hidden part (comm - exposed) on the communication
 * stream */
static plc_overlap none(double comm) { return (plc_overlap){comm, comm, comm}; }

static plc_overlap split(const plc_job *job, double comm, double exposed)
{
    return (plc_overlap){comm, exposed, charged(job, comm, exposed)};
}

plc_overlap plc_overlap_tp_split(const plc_job *job, const plc_layout *l, double comm, double gemm)
{
    if (!(job->engine.tp_overlap > 0) || !l->sp || l->tp < 2) return none(comm);
    /* the all-gathers (half the bytes) run as ring exchanges on the copy
     * engines (Transformer Engine: num_sm 1): only the reduce-scatters'
     * half of the hidden time holds SMs */
    double exposed = max2(comm / (double)l->tp, comm - gemm);
    return (plc_overlap){comm, exposed, exposed + 0.5 * (charged(job, comm, exposed) - exposed)};
}

double plc_overlap_tp(const plc_job *job, const plc_layout *l, double comm, double gemm)
{
    return plc_overlap_tp_split(job, l, comm, gemm).charged;
}

plc_overlap plc_overlap_grad_reduce_split(const plc_job *job, double comm, double first_layer, double window)
{
    if (!(job->engine.grad_reduce_overlap > 0)) return none(comm);
    return split(job, comm, max2(first_layer, comm - window));
}

double plc_overlap_grad_reduce(const plc_job *job, double comm, double first_layer, double window)
{
    return plc_overlap_grad_reduce_split(job, comm, first_layer, window).charged;
}

plc_overlap plc_overlap_param_gather_split(const plc_job *job, double comm, int64_t layers, double forward)
{
    if (!(job->engine.param_gather_overlap > 0) || layers < 1) return none(comm);
    return split(job, comm, max2(comm / (double)layers, comm - forward));
}

double plc_overlap_param_gather(const plc_job *job, double comm, int64_t layers, double forward)
{
    return plc_overlap_param_gather_split(job, comm, layers, forward).charged;
}

plc_overlap plc_overlap_layer_gathers_split(const plc_job *job, double gather, double entries, int64_t run,
                                            double per_layer)
{
    if (!(job->engine.param_gather_overlap > 0) || run < 1) return none(entries * gather);
    double runs = entries / (double)run, one = max2(0.0, gather - per_layer);
    return (plc_overlap){entries * gather, runs * gather + (entries - runs) * one,
                         runs * gather + (entries - runs) * charged(job, gather, one)};
}

double plc_overlap_layer_gathers(const plc_job *job, double gather, double entries, int64_t run, double per_layer)
{
    return plc_overlap_layer_gathers_split(job, gather, entries, run, per_layer).charged;
}

double plc_dp_collectives(const plc_job *job, double elems, double unbucketed)
{
    if (!(job->engine.dp_bucket > 0)) return unbucketed;
    return max2(1.0, ceil(elems / job->engine.dp_bucket));
}

plc_overlap plc_overlap_p2p_split(const plc_job *job, const plc_layout *l, double count, double msg, double chunk)
{
    if (!(job->engine.p2p_overlap > 0) || l->schedule != PLC_SCHED_INTERLEAVED) return none(count * msg);
    return (plc_overlap){count * msg, count * max2(0.0, msg - chunk), count * charged(job, msg, max2(0.0, msg - chunk))};
}

double plc_overlap_p2p(const plc_job *job, const plc_layout *l, double count, double msg, double chunk)
{
    return plc_overlap_p2p_split(job, l, count, msg, chunk).charged;
}
