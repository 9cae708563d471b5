/* lower_schedule.c: pipeline placement (which layers form each virtual
 * chunk and which pipeline rank owns it) and the order in which each stage
 * runs its forward and backward units.
 *
 *   gpipe        pp contiguous chunks; all forwards, then all backwards
 *   1f1b         pp contiguous chunks; pp-1-p warm-up forwards, then one
 *                forward one backward, then the remaining backwards
 *   interleaved  pp*vpp chunks, chunk c on rank c mod pp; Megatron's
 *                interleaved 1F1B (micro-batches in groups of pp)
 *   layered      one chunk per layer, contiguous placement, breadth-first:
 *                every micro-batch through a layer before the next layer
 *                (layered gradient accumulation), backward likewise
 *   modular      one chunk per layer, layer i on rank i mod pp, breadth-first
 */
#include <stdio.h>

#include "compiler/lower_int.h"

static void add(lw_unit *u, int64_t *n, int bwd, int64_t chunk, int64_t micro)
{
    u[*n].bwd = (uint8_t)bwd;
    u[*n].chunk = (int32_t)chunk;
    u[*n].micro = (int32_t)micro;
    (*n)++;
}

int lw_schedule_build(const plc_layout *l, int64_t layers, int64_t M, plc_arena *a, lw_sched *s, char *err,
                      size_t errlen)
{
    int64_t pp = l->pp;
    int64_t nc;
    int looping; /* chunk c on rank c mod pp (else contiguous blocks) */
    switch (l->schedule) {
    case PLC_SCHED_GPIPE:
    case PLC_SCHED_1F1B: nc = pp; looping = 0; break;
    case PLC_SCHED_INTERLEAVED:
        nc = pp * l->vpp;
        looping = 1;
        if (M % pp) {
            snprintf(err, errlen, "the interleaved schedule needs the micro-batch count (%lld) to be a multiple of pp = %lld",
                     (long long)M, (long long)pp);
            return -1;
        }
        break;
    case PLC_SCHED_LAYERED: nc = layers; looping = 0; break;
    case PLC_SCHED_MODULAR: nc = layers; looping = 1; break;
    default: snprintf(err, errlen, "unknown pipeline schedule %d", (int)l->schedule); return -1;
    }
    if (layers % nc || nc % pp) {
        snprintf(err, errlen, "%lld layers cannot be split into %lld chunks over pp = %lld", (long long)layers,
                 (long long)nc, (long long)pp);
        return -1;
    }
    s->nchunks = nc;
    s->chunk_lo = PLC_NEW_ARRAY(a, int64_t, nc);
    s->chunk_hi = PLC_NEW_ARRAY(a, int64_t, nc);
    s->owner = PLC_NEW_ARRAY(a, int32_t, nc);
    int64_t per = layers / nc, per_rank = nc / pp;
    for (int64_t c = 0; c < nc; c++) {
        s->chunk_lo[c] = c * per;
        s->chunk_hi[c] = (c + 1) * per;
        s->owner[c] = (int32_t)(looping ? c % pp : c / per_rank);
    }
    s->order = PLC_NEW_ARRAY(a, lw_unit *, pp);
    s->norder = PLC_NEW_ARRAY(a, int64_t, pp);
    for (int64_t p = 0; p < pp; p++) {
        /* this rank's chunks in ascending order */
        int64_t *mine = PLC_NEW_ARRAY(a, int64_t, per_rank);
        int64_t k = 0;
        for (int64_t c = 0; c < nc; c++)
            if (s->owner[c] == p) mine[k++] = c;
        lw_unit *u = PLC_NEW_ARRAY(a, lw_unit, 2 * M * per_rank);
        int64_t n = 0;
        switch (l->schedule) {
        case PLC_SCHED_GPIPE:
            for (int64_t m = 0; m < M; m++) add(u, &n, 0, mine[0], m);
            for (int64_t m = 0; m < M; m++) add(u, &n, 1, mine[0], m);
            break;
        case PLC_SCHED_1F1B: {
            int64_t w = pp - 1 - p < M ? pp - 1 - p : M;
            for (int64_t m = 0; m < w; m++) add(u, &n, 0, mine[0], m);
            for (int64_t i = 0; i < M - w; i++) {
                add(u, &n, 0, mine[0], w + i);
                add(u, &n, 1, mine[0], i);
            }
            for (int64_t m = M - w; m < M; m++) add(u, &n, 1, mine[0], m);
            break;
        }
        case PLC_SCHED_INTERLEAVED: {
            int64_t vpp = per_rank, total = M * vpp;
            int64_t w = (pp - p - 1) * 2 + (vpp - 1) * pp;
            if (w > total) w = total;
#define IL_MICRO(k) (((k) / (pp * vpp)) * pp + (k) % pp)
#define IL_CHUNK_F(k) (((k) % (pp * vpp)) / pp)
#define IL_CHUNK_B(k) (vpp - 1 - IL_CHUNK_F(k))
            for (int64_t i = 0; i < w; i++) add(u, &n, 0, mine[IL_CHUNK_F(i)], IL_MICRO(i));
            for (int64_t i = 0; i < total - w; i++) {
                add(u, &n, 0, mine[IL_CHUNK_F(w + i)], IL_MICRO(w + i));
                add(u, &n, 1, mine[IL_CHUNK_B(i)], IL_MICRO(i));
            }
            for (int64_t i = total - w; i < total; i++) add(u, &n, 1, mine[IL_CHUNK_B(i)], IL_MICRO(i));
#undef IL_MICRO
#undef IL_CHUNK_F
#undef IL_CHUNK_B
            break;
        }
        case PLC_SCHED_LAYERED:
        case PLC_SCHED_MODULAR:
            for (int64_t j = 0; j < per_rank; j++)
                for (int64_t m = 0; m < M; m++) add(u, &n, 0, mine[j], m);
            for (int64_t j = per_rank - 1; j >= 0; j--)
                for (int64_t m = 0; m < M; m++) add(u, &n, 1, mine[j], m);
            break;
        default: break;
        }
        s->order[p] = u;
        s->norder[p] = n;
    }
    return 0;
}
