/* lower_unit.c: plrun's figures of one layer and of the head, read off the
 * lowering itself, so that the solver's memory model (memory_plrun.c) has no
 * description of a layer's buffers of its own.
 *
 * A template of the layout (its shape, one layer, one pipeline stage, one
 * micro-batch: lw_lower_template) is lowered without a memory plan; its
 * visits run embedding, layer, head (forward and loss), head backward, layer
 * backward, embedding backward. Each buffer lives from its first to its
 * last use (plc_buffer_lifetimes, as the memory plan sees it) and counts
 * its size rounded up to the plan's 64-byte alignment; persistent buffers
 * (parameters, gradients, optimizer state) are not counted. A figure is a
 * sum of the buffers of one visit, or the highest such sum along it.
 *
 * The template's layer is entered from another key and left for another, so
 * ZeRO 3's gathered weights live from their first read to their last; the
 * pipeline's other cases (the stage in the layer already, or staying in it)
 * are the same buffers with those weights alive from the visit's start or
 * to its end: a weight is a buffer an all-gather of a parameter makes, a
 * gradient block one reduce-scattered at the visit's end. */
#include <stdio.h>
#include <stdlib.h>

#include "compiler/lower/lower_int.h"

enum { V_EMBED, V_LAYER, V_HEAD, V_HEAD_BWD, V_LAYER_BWD, V_EMBED_BWD, V_COUNT };

typedef struct meas {
    const plc_program *g;
    const bool *pers;
    const int32_t *first, *last;
    int32_t lo[V_COUNT], hi[V_COUNT]; /* visit v's own instructions: [lo, hi) */
    int32_t end[V_COUNT];             /* and the end of its lw_visit_end */
    bool *weight, *block;             /* per buffer: a gathered weight (ZeRO 3), a gradient block (ZeRO >= 2) */
} meas;

static double al(uint64_t bytes) { return (double)((bytes + PLC_PLAN_ALIGN - 1) / PLC_PLAN_ALIGN * PLC_PLAN_ALIGN); }

static bool counted(const meas *m, uint32_t b) { return !m->pers[b] && m->first[b] >= 0; }

static bool in(const meas *m, int v, int32_t i) { return i >= m->lo[v] && i < m->hi[v]; }

/* the buffers made in visit v and used after it */
static double kept(const meas *m, int v)
{
    double s = 0;
    for (uint32_t b = 0; b < m->g->nbuffers; b++)
        if (counted(m, b) && in(m, v, m->first[b]) && m->last[b] >= m->hi[v]) s += al(m->g->buffers[b].bytes);
    return s;
}

/* the buffers made in visit v and last used in visit w, but for ZeRO 3's
 * gathered weights (the template's w reads them again only because it
 * follows v at once: the replay counts a key's weights apart) */
static double handed(const meas *m, int v, int w)
{
    double s = 0;
    for (uint32_t b = 0; b < m->g->nbuffers; b++)
        if (counted(m, b) && !m->weight[b] && in(m, v, m->first[b]) && in(m, w, m->last[b]))
            s += al(m->g->buffers[b].bytes);
    return s;
}

/* the highest sum along visit v of the buffers made in it (but the
 * gradient blocks unless `blocks`), and of those made before it and alive
 * in it that pass `older` */
static double peak(const meas *m, int v, bool blocks, bool (*older)(const meas *, int, uint32_t))
{
    int32_t lo = m->lo[v], n = m->hi[v] - lo;
    if (n <= 0) return 0;
    double *d = calloc((size_t)n + 1, sizeof *d);
    if (!d) return -1;
    for (uint32_t b = 0; b < m->g->nbuffers; b++) {
        if (!counted(m, b) || m->first[b] >= m->hi[v] || m->last[b] < lo || (m->block[b] && !blocks)) continue;
        if (m->first[b] < lo && !older(m, v, b)) continue;
        int32_t f = m->first[b] < lo ? 0 : m->first[b] - lo, l = m->last[b] >= m->hi[v] ? n - 1 : m->last[b] - lo;
        d[f] += al(m->g->buffers[b].bytes);
        d[l + 1] -= al(m->g->buffers[b].bytes);
    }
    double cur = 0, best = 0;
    for (int32_t i = 0; i < n; i++) {
        cur += d[i];
        if (cur > best) best = cur;
    }
    free(d);
    return best;
}

/* how a visit of the layer is entered and left (plc_unit_figures) */
typedef struct visit_case {
    bool before, hold, blocks; /* blocks: count the gradient blocks */
} visit_case;

/* The highest sum along the layer's visit v (V_LAYER, V_LAYER_BWD) of the
 * buffers made in it and of those made before it whose last use is in it
 * (its input, kept bytes and incoming gradient), ZeRO 3's weights as case
 * k has them: those the visit does not read are alive throughout when the
 * stage was in the layer before. */
static double layer_peak(const meas *m, int v, visit_case k)
{
    int32_t lo = m->lo[v], n = m->hi[v] - lo;
    double *d = calloc((size_t)(n > 0 ? n : 0) + 1, sizeof *d);
    if (!d) return -1;
    double unread = 0; /* the layer's weights this visit does not read */
    for (uint32_t b = 0; b < m->g->nbuffers; b++)
        if (counted(m, b) && m->weight[b] && in(m, V_LAYER, m->first[b])) unread += al(m->g->buffers[b].bytes);
    for (uint32_t b = 0; b < m->g->nbuffers; b++) {
        if (!counted(m, b) || (m->block[b] && !k.blocks)) continue;
        int32_t f = m->first[b], l = m->last[b];
        if (in(m, v, f) && m->weight[b]) {
            unread -= al(m->g->buffers[b].bytes);
            if (k.before) f = lo;
            if (k.hold) l = m->hi[v] - 1;
        } else if (!in(m, v, f) && !(f < lo && in(m, v, l))) {
            continue;
        }
        f = f < lo ? 0 : f - lo;
        l = l >= m->hi[v] ? n - 1 : l - lo;
        d[f] += al(m->g->buffers[b].bytes);
        d[l + 1] -= al(m->g->buffers[b].bytes);
    }
    double cur = k.before ? unread : 0, best = cur;
    for (int32_t i = 0; i < n; i++) {
        cur += d[i];
        if (cur > best) best = cur;
    }
    free(d);
    return best;
}

/* marks the gathered weights and the gradient blocks */
static void kinds(meas *m)
{
    const plc_program *g = m->g;
    for (uint32_t i = 0; i < g->ninstrs; i++) {
        const plc_instr *in = &g->instrs[i];
        int32_t dst = in->buf[0], src = in->buf[1];
        if (in->op == PLC_OP_ALLGATHER && src >= 0 && m->pers[src] && m->first[dst] == (int32_t)i) m->weight[dst] = true;
        if (in->op == PLC_OP_REDUCE_SCATTER && in->stream == PLC_STREAM_COMM && src >= 0 && !m->pers[src])
            for (int v = 0; v < V_COUNT; v++)
                if ((int32_t)i >= m->hi[v] && (int32_t)i < m->end[v]) m->block[src] = true;
    }
}

/* the micro-batch's data (loaded before the step's first visit): the
 * embedding reads the tokens, and the head the targets last */
static bool data(const meas *m, int v, uint32_t b)
{
    (void)v;
    return m->g->buffers[b].kind == PLC_BUF_DATA;
}
static bool data_read_last(const meas *m, int v, uint32_t b) { return data(m, v, b) && in(m, v, m->last[b]); }
static bool none(const meas *m, int v, uint32_t b)
{
    (void)m, (void)v, (void)b;
    return false;
}

int plc_lower_unit_figures(const plc_job *job, const plc_layout *l, plc_unit_figures *out, char *err, size_t errlen)
{
    plc_arena a;
    plc_arena_init(&a);
    lw_template t = {0};
    plc_program g;
    int rc = lw_lower_template(job, l, &a, &t, &g, err, errlen);
    bool whole = t.visits >= V_COUNT; /* every visit begun and ended */
    for (int v = 0; v < V_COUNT; v++) whole &= t.began[v];
    if (rc == 0 && !whole) {
        snprintf(err, errlen, "the template's lowering has %d whole visits, not %d", (int)t.visits, V_COUNT);
        rc = -1;
    }
    size_t nb = rc == 0 && g.nbuffers ? g.nbuffers : 1;
    int32_t *first = rc == 0 ? malloc(sizeof *first * nb) : NULL;
    int32_t *last = first ? malloc(sizeof *last * nb) : NULL;
    bool *weight = last ? calloc(nb, sizeof *weight) : NULL, *block = weight ? calloc(nb, sizeof *block) : NULL;
    if (rc == 0 && !block) snprintf(err, errlen, "out of memory"), rc = -1;
    if (rc == 0) {
        plc_buffer_lifetimes(&g, first, last);
        meas m = {.g = &g, .pers = t.persistent, .first = first, .last = last, .weight = weight, .block = block};
        for (int v = 0; v < V_COUNT; v++) m.lo[v] = t.start[v], m.hi[v] = t.at[v][0], m.end[v] = t.at[v][1];
        kinds(&m);
        double tokens = 0;
        for (uint32_t b = 0; b < g.nbuffers; b++)
            if (counted(&m, b) && data_read_last(&m, V_EMBED_BWD, b)) tokens += al(g.buffers[b].bytes);
        *out = (plc_unit_figures){.layer_kept = kept(&m, V_LAYER),
                                  .embed_peak = peak(&m, V_EMBED, true, data),
                                  .embed_bwd_peak = peak(&m, V_EMBED_BWD, false, none),
                                  .head_peak = peak(&m, V_HEAD, true, data_read_last),
                                  .head_keep = handed(&m, V_HEAD, V_HEAD_BWD),
                                  .tokens = tokens};
        bool fail = out->head_peak < 0 || out->embed_peak < 0 || out->embed_bwd_peak < 0;
        for (int b = 0; b < 2; b++)
            for (int h = 0; h < 2; h++) {
                out->fwd_peak[b][h] = layer_peak(&m, V_LAYER, (visit_case){b, h, true});
                out->bwd_peak[b][h] = layer_peak(&m, V_LAYER_BWD, (visit_case){b, h, true});
                fail |= out->fwd_peak[b][h] < 0 || out->bwd_peak[b][h] < 0;
            }
        for (int h = 0; h < 2; h++) out->bwd_acc[h] = layer_peak(&m, V_LAYER_BWD, (visit_case){true, h, false});
        if (fail || out->bwd_acc[0] < 0 || out->bwd_acc[1] < 0) snprintf(err, errlen, "out of memory"), rc = -1;
    }
    free(first);
    free(last);
    free(weight);
    free(block);
    free(t.persistent);
    plc_arena_free(&a);
    return rc;
}
