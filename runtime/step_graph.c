/* step_graph.c: the cut of a step into capturable stretches. See
 * step_graph.h for the rules; this file applies them in three passes:
 * the ops that run eagerly by themselves, then the spans of transfers that
 * hold one of them (to a fixed point: spans overlap), then the runs. */
#include "runtime/step_graph.h"

#include <stdlib.h>
#include <string.h>

int plc_step_graph_eager_op(plc_op op, unsigned caps)
{
    if (op == PLC_OP_DATA_LOAD) return !(caps & PLC_GRAPH_DATA_STAGED);
    /* the MoE ops whose CUDA form reads a run-time count back to the host:
     * the route its dropped copies, the expert matmuls each expert's rows
     * (kernels/cuda/moe.cu), which a recorded graph cannot replay */
    if (op == PLC_OP_MOE_ROUTE || op == PLC_OP_MOE_MM || op == PLC_OP_MOE_MM_DW) return 1;
    return plc_op_comm(op) != PLC_COMM_NONE && !(caps & PLC_GRAPH_COMM);
}

/* the instruction that completes transfer c: the compute stream's own
 * transfers complete where they start; the others at the first later
 * instruction that waits for them, or at the step's end (n) */
static uint32_t wait_point(const plc_program *p, uint32_t c)
{
    if (p->instrs[c].stream != PLC_STREAM_COMM) return c;
    for (uint32_t i = c + 1; i < p->ninstrs; i++)
        if (p->instrs[i].wait == (int32_t)c) return i;
    return p->ninstrs;
}

void plc_step_segments_free(plc_step_segments *s)
{
    if (!s) return;
    free(s->seg);
    free(s->seg_of);
    memset(s, 0, sizeof *s);
}

int plc_step_graph_plan(const plc_program *p, unsigned caps, uint32_t min_run, plc_step_segments *out)
{
    memset(out, 0, sizeof *out);
    const uint32_t n = p->ninstrs;
    unsigned char *eager = calloc(n ? n : 1, 1);
    uint32_t *wp = malloc((n ? n : 1) * sizeof *wp);
    out->seg_of = malloc((n ? n : 1) * sizeof *out->seg_of);
    out->seg = malloc((n / 2 + 1) * sizeof *out->seg);
    if (!eager || !wp || !out->seg_of || !out->seg) {
        free(eager);
        free(wp);
        plc_step_segments_free(out);
        return -1;
    }
    for (uint32_t i = 0; i < n; i++) {
        eager[i] = (unsigned char)plc_step_graph_eager_op(p->instrs[i].op, caps);
        wp[i] = plc_op_comm(p->instrs[i].op) != PLC_COMM_NONE ? wait_point(p, i) : i;
    }
    /* a span [c, wait point] with an eager instruction in it runs eagerly
     * whole; a span to the step's end covers the instructions up to n - 1 */
    for (int changed = 1; changed;) {
        changed = 0;
        for (uint32_t c = 0; c < n; c++) {
            if (wp[c] == c) continue;
            uint32_t last = wp[c] < n ? wp[c] : n - 1, any = 0;
            for (uint32_t i = c; i <= last && !any; i++) any = eager[i];
            if (!any) continue;
            for (uint32_t i = c; i <= last; i++)
                if (!eager[i]) eager[i] = 1, changed = 1;
        }
    }
    for (uint32_t i = 0; i < n; i++) out->seg_of[i] = -1;
    for (uint32_t i = 0; i < n;) {
        if (eager[i]) { i++; continue; }
        uint32_t e = i;
        while (e < n && !eager[e]) e++;
        if (e - i >= (min_run ? min_run : 1)) {
            for (uint32_t k = i; k < e; k++) out->seg_of[k] = (int32_t)out->n;
            out->seg[out->n].first = i;
            out->seg[out->n].end = e;
            out->n++;
            out->captured += e - i;
        }
        i = e;
    }
    free(eager);
    free(wp);
    return 0;
}
