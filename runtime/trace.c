/* trace.c: measured timeline as Chrome trace-event JSON. See trace.h. */
#include "runtime/trace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/atomic_file.h"
#include "common/chrome_trace.h"

double plc_trace_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void plc_trace_init(plc_trace *t, size_t max_events)
{
    memset(t, 0, sizeof *t);
    t->origin = plc_trace_now();
    t->max_events = max_events;
}

void plc_trace_free(plc_trace *t)
{
    free(t->ev);
    memset(t, 0, sizeof *t);
}

void plc_trace_record(plc_trace *t, int32_t instr, int32_t step, double t0, double t1)
{
    if (t->n == t->cap) {
        if (t->n >= t->max_events) { t->dropped++; return; }
        size_t cap = t->cap ? t->cap * 2 : 1024;
        if (cap > t->max_events) cap = t->max_events;
        plc_trace_event *ev = realloc(t->ev, cap * sizeof *ev);
        if (!ev) { t->dropped++; return; }
        t->ev = ev;
        t->cap = cap;
    }
    t->ev[t->n++] = (plc_trace_event){t0, t1, instr, step};
}

static void write_events(plc_ctrace *ct, const plc_plan *plan, int rank, const plc_trace_event *ev, size_t n)
{
    plc_rank_coords co = plc_rank_to_coords(&plan->layout, rank);
    const plc_program *p = &plan->programs[plan->stage_program[co.pp]];
    for (size_t i = 0; i < n; i++) {
        if (ev[i].instr < 0 || (uint32_t)ev[i].instr >= p->ninstrs) continue;
        plc_ctrace_instr(ct, rank, (uint32_t)ev[i].instr, &p->instrs[ev[i].instr], ev[i].t0, ev[i].t1, ev[i].step);
    }
}

int plc_trace_write(plc_trace *t, plc_comm *comm, const plc_plan *plan, const char *path,
                    char *err, size_t errlen)
{
    if (comm->rank == 0) {
        plc_atomic_file af;
        if (plc_atomic_open(&af, path, err, errlen)) {
            /* still receive the others' events so that no rank blocks */
            for (int r = 1; r < comm->size; r++) {
                uint64_t n;
                plc_comm_recv_bytes(comm, &n, sizeof n, r, 7001);
                plc_trace_event *ev = malloc(n ? n * sizeof *ev : 1);
                plc_comm_recv_bytes(comm, ev, n * sizeof *ev, r, 7002);
                free(ev);
            }
            return -1;
        }
        plc_ctrace ct;
        plc_ctrace_begin(&ct, af.f, "plrun --trace", comm->size, comm->size);
        for (int r = 0; r < comm->size; r++) plc_ctrace_rank(&ct, &plan->layout, r);
        write_events(&ct, plan, 0, t->ev, t->n);
        for (int r = 1; r < comm->size; r++) {
            uint64_t n = 0;
            if (plc_comm_recv_bytes(comm, &n, sizeof n, r, 7001)) break;
            plc_trace_event *ev = malloc(n ? n * sizeof *ev : 1);
            if (!ev) { plc_atomic_abort(&af); snprintf(err, errlen, "out of memory"); return -1; }
            plc_comm_recv_bytes(comm, ev, n * sizeof *ev, r, 7002);
            write_events(&ct, plan, r, ev, n);
            free(ev);
        }
        plc_ctrace_end(&ct);
        return plc_atomic_commit(&af, err, errlen);
    }
    uint64_t n = t->n;
    if (plc_comm_send_bytes(comm, &n, sizeof n, 0, 7001) ||
        plc_comm_send_bytes(comm, t->ev, n * sizeof *t->ev, 0, 7002)) {
        snprintf(err, errlen, "rank %d: sending the trace failed", comm->rank);
        return -1;
    }
    return 0;
}
