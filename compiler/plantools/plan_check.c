/* plan_check.c: the compile-time checks.
 *
 * 1. Stream hazards, per program: while a comm-stream instruction is in
 *    flight (from its issue to the first instruction that waits for it), no
 *    other instruction may touch its buffers (or the gradient bucket they
 *    belong to). The memory plan keeps other buffers out of that memory.
 * 2. A zero-cost simulation of all ranks (plan_sim.c): messages match,
 *    collectives are entered in the same order, and the step terminates. */
#include "compiler/plantools/plantools_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plc/arena.h"


/* uses of each buffer, as instruction indices in ascending order (CSR) */
typedef struct uses {
    uint32_t *start; /* [nbuffers + 1] */
    uint32_t *idx;
} uses;

static int build_uses(const plc_program *g, uses *u)
{
    uint32_t nb = g->nbuffers;
    u->start = calloc((size_t)nb + 1, sizeof *u->start);
    size_t total = 0;
    if (!u->start) return -1;
    for (uint32_t i = 0; i < g->ninstrs; i++)
        for (int k = 0; k < PLC_INSTR_BUFS; k++)
            if (g->instrs[i].buf[k] >= 0) {
                u->start[g->instrs[i].buf[k] + 1]++;
                total++;
            }
    for (uint32_t b = 0; b < nb; b++) u->start[b + 1] += u->start[b];
    u->idx = malloc(sizeof *u->idx * (total ? total : 1));
    uint32_t *fill = malloc(sizeof *fill * ((size_t)nb + 1));
    if (!u->idx || !fill) {
        free(fill);
        return -1;
    }
    memcpy(fill, u->start, sizeof *fill * ((size_t)nb + 1));
    for (uint32_t i = 0; i < g->ninstrs; i++)
        for (int k = 0; k < PLC_INSTR_BUFS; k++) {
            int32_t b = g->instrs[i].buf[k];
            /* an instruction naming a buffer twice is recorded twice; harmless */
            if (b >= 0) u->idx[fill[b]++] = i;
        }
    free(fill);
    return 0;
}

/* first use of buffer b after instruction i, or UINT32_MAX */
static uint32_t next_use(const uses *u, int32_t b, uint32_t i)
{
    uint32_t lo = u->start[b], hi = u->start[b + 1];
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (u->idx[mid] <= i) lo = mid + 1;
        else hi = mid;
    }
    return lo < u->start[b + 1] ? u->idx[lo] : UINT32_MAX;
}

static bool is_bucket(const plc_buffer *b) { return b->kind == PLC_BUF_GRAD && b->tensor < 0; }

static int check_hazards(const plc_plan *p, uint32_t pi, char *err, size_t errlen)
{
    const plc_program *g = &p->programs[pi];
    uint32_t n = g->ninstrs;
    uint32_t *done = malloc(sizeof *done * (n ? n : 1));
    uses u = {0};
    int rc = 0;
    if (!done || build_uses(g, &u)) /* an outcome for the command's trap (plc/arena.h) */
        plc_oom_raise(sizeof *done * (n ? n : 1) + sizeof *u.idx * (size_t)n * PLC_INSTR_BUFS);
    for (uint32_t i = 0; i < n; i++) done[i] = n;
    for (uint32_t j = 0; j < n; j++) {
        int32_t w = g->instrs[j].wait;
        if (w >= 0 && j < done[w]) done[w] = j;
    }
    for (uint32_t i = 0; i < n && !rc; i++) {
        const plc_instr *in = &g->instrs[i];
        if (in->stream != PLC_STREAM_COMM) continue;
        for (int k = 0; k < PLC_INSTR_BUFS && !rc; k++) {
            int32_t b = in->buf[k];
            if (b < 0) continue;
            /* the buffer itself, and the buffers sharing its memory through a bucket */
            const plc_buffer *x = &g->buffers[b];
            bool grad = x->kind == PLC_BUF_GRAD;
            for (uint32_t o = grad ? 0 : (uint32_t)b; o < (grad ? g->nbuffers : (uint32_t)b + 1) && !rc; o++) {
                const plc_buffer *y = &g->buffers[o];
                bool related = (int32_t)o == b;
                if (!related && (is_bucket(x) || is_bucket(y)) && x->kind == PLC_BUF_GRAD && y->kind == PLC_BUF_GRAD)
                    related = x->offset < y->offset + y->bytes && y->offset < x->offset + x->bytes;
                if (!related) continue;
                uint32_t j = next_use(&u, (int32_t)o, i);
                if (j < done[i]) {
                    snprintf(err, errlen,
                             "program %u instruction %u (%s) touches buffer '%s' while comm instruction %u (%s) is in "
                             "flight (until instruction %u)",
                             pi, j, plc_op_name(g->instrs[j].op), y->name ? y->name : "?", i, plc_op_name(in->op),
                             done[i]);
                    rc = -1;
                }
            }
        }
    }
    free(done);
    free(u.start);
    free(u.idx);
    return rc;
}

plc_status plc_plan_check(const plc_plan *p, char *err, size_t errlen)
{
    for (uint32_t pi = 0; pi < p->nprograms; pi++)
        if (check_hazards(p, pi, err, errlen)) return PLC_E_INTERNAL;
    return plc_plan_check_finishes(p, err, errlen);
}

plc_status plc_plan_check_finishes(const plc_plan *p, char *err, size_t errlen)
{
    plc_sim_opts o = {0};
    o.all_ranks = p->world_size <= PLC_CHECK_ALL_RANKS_MAX;
    plc_sim_result r;
    return plc_sim_run(p, &o, &r, err, errlen);
}
