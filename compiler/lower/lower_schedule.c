/* lower_schedule.c: the lowering's view of the pipeline schedule: chunks,
 * their owners and each stage's unit order, all from the one generator in
 * compiler/solver/solver.h (which also feeds the schedule simulator and the
 * memory model's in-flight counts). */
#include <stdio.h>

#include "compiler/lower/lower_int.h"

int lw_schedule_build(const plc_layout *l, int64_t layers, int64_t M, plc_arena *a, lw_sched *s, char *err,
                      size_t errlen)
{
    plc_pipe_shape sh;
    /* chunk c holds layers [plc_pipe_chunk_lo, plc_pipe_chunk_hi): equal, or
     * unequal where pp * vpp does not divide layers (plc_stage_layers: the
     * ends hold fewer; rules PP_LAYERS and VPP_LAYERS) */
    if (plc_pipe_shape_of(l->schedule, l->pp, l->vpp, layers, &sh)) {
        snprintf(err, errlen, "%lld layers do not split into the chunks of schedule %s over pp = %lld",
                 (long long)layers, plc_schedule_name(l->schedule), (long long)l->pp);
        return -1;
    }
    int64_t nc = sh.nchunks, pp = l->pp;
    s->nchunks = nc;
    s->sh = sh;
    s->chunk_lo = PLC_NEW_ARRAY(a, int64_t, nc);
    s->chunk_hi = PLC_NEW_ARRAY(a, int64_t, nc);
    s->owner = PLC_NEW_ARRAY(a, int32_t, nc);
    for (int64_t c = 0; c < nc; c++) {
        s->chunk_lo[c] = plc_pipe_chunk_lo(&sh, c);
        s->chunk_hi[c] = plc_pipe_chunk_hi(&sh, c);
        s->owner[c] = (int32_t)plc_pipe_chunk_rank(&sh, c);
    }
    s->order = PLC_NEW_ARRAY(a, lw_unit *, pp);
    s->norder = PLC_NEW_ARRAY(a, int64_t, pp);
    for (int64_t p = 0; p < pp; p++) {
        s->norder[p] = plc_pipe_units(&sh, M);
        s->order[p] = PLC_NEW_ARRAY(a, lw_unit, s->norder[p]);
        if (plc_pipe_order(&sh, M, p, s->order[p])) {
            snprintf(err, errlen, "%lld micro-batches do not suit schedule %s over pp = %lld",
                     (long long)M, plc_schedule_name(l->schedule), (long long)pp);
            return -1;
        }
    }
    return 0;
}
