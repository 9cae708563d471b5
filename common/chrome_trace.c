/* chrome_trace.c: Chrome trace-event JSON; see chrome_trace.h. */
#include "common/chrome_trace.h"

/* the separator before an event, which it counts */
static const char *sep(plc_ctrace *t)
{
    const char *s = t->first ? "" : ",";
    t->first = 0;
    t->events++;
    return s;
}

void plc_ctrace_begin(plc_ctrace *t, FILE *f, const char *generator, int64_t world_size, int64_t ranks_shown)
{
    t->f = f;
    t->first = 1;
    t->exposed_track = 0;
    t->events = 0;
    fprintf(f, "{\"displayTimeUnit\":\"ms\",\"otherData\":{\"generator\":\"%s\",\"world_size\":%lld,"
               "\"ranks_shown\":%lld},\n\"traceEvents\":[",
            generator, (long long)world_size, (long long)ranks_shown);
}

/* the names of a rank's threads: 2 or 3 events after the process name,
 * whose separator comes before them */
static void thread_names(plc_ctrace *t, int64_t pid)
{
    t->events += t->exposed_track ? 3 : 2;
    fprintf(t->f, "\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%lld,\"tid\":0,\"args\":{\"name\":\"compute\"}},",
            (long long)pid);
    fprintf(t->f, "\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%lld,\"tid\":1,\"args\":{\"name\":\"comm\"}}",
            (long long)pid);
    if (t->exposed_track)
        fprintf(t->f, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%lld,\"tid\":2,\"args\":{\"name\":"
                      "\"exposed comm\"}}",
                (long long)pid);
}

void plc_ctrace_rank(plc_ctrace *t, const plc_layout *l, int64_t rank)
{
    plc_rank_coords c = plc_rank_to_coords(l, rank);
    fprintf(t->f, "%s\n{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%lld,\"args\":{\"name\":\"rank %lld "
                  "(tp %lld cp %lld dp %lld pp %lld)\"}},",
            sep(t), (long long)rank, (long long)rank, (long long)c.tp, (long long)c.cp, (long long)c.dp,
            (long long)c.pp);
    thread_names(t, rank);
}

/* "0-3,8": runs of consecutive ranks */
static void rank_runs(FILE *f, const int64_t *r, size_t n)
{
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j + 1 < n && r[j + 1] == r[j] + 1) j++;
        fprintf(f, "%s%lld", i ? "," : "", (long long)r[i]);
        if (j > i) fprintf(f, "-%lld", (long long)r[j]);
        i = j + 1;
    }
}

void plc_ctrace_ranks(plc_ctrace *t, const plc_layout *l, const int64_t *ranks, size_t n)
{
    if (n == 1) {
        plc_ctrace_rank(t, l, ranks[0]);
        return;
    }
    plc_rank_coords c = plc_rank_to_coords(l, ranks[0]);
    fprintf(t->f, "%s\n{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%lld,\"args\":{\"name\":\"ranks ", sep(t),
            (long long)ranks[0]);
    rank_runs(t->f, ranks, n);
    fprintf(t->f, " (pp %lld, one timeline)\",\"ranks\":[", (long long)c.pp);
    for (size_t i = 0; i < n; i++) fprintf(t->f, "%s%lld", i ? "," : "", (long long)ranks[i]);
    fprintf(t->f, "]}},");
    thread_names(t, ranks[0]);
}

void plc_ctrace_instr(plc_ctrace *t, int64_t rank, uint32_t idx, const plc_instr *in, double t0, double t1,
                      int32_t step)
{
    const char *name = plc_op_name(in->op), *phase = plc_phase_name(in->phase);
    double dur = (t1 - t0) * 1e6;
    fprintf(t->f, "%s\n{\"name\":\"%s\",\"cat\":\"%s\",\"ph\":\"X\",\"pid\":%lld,\"tid\":%d,\"ts\":%.3f,\"dur\":%.3f,"
                  "\"args\":{\"instr\":%u,\"layer\":%d,\"micro\":%d",
            sep(t), name ? name : "?", phase ? phase : "?", (long long)rank, (int)in->stream, t0 * 1e6,
            dur < 0 ? 0.0 : dur, idx, in->layer, in->micro);
    if (step >= 0) fprintf(t->f, ",\"step\":%d", step);
    fprintf(t->f, "}}");
}

void plc_ctrace_span(plc_ctrace *t, int64_t rank, int stream, const char *name, uint32_t first, uint32_t count,
                     double t0, double t1)
{
    double dur = (t1 - t0) * 1e6;
    fprintf(t->f, "%s\n{\"name\":\"%s\",\"ph\":\"X\",\"pid\":%lld,\"tid\":%d,\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"first\":%u",
            sep(t), name, (long long)rank, stream, t0 * 1e6, dur < 0 ? 0.0 : dur, first);
    if (count != 1) fprintf(t->f, ",\"instrs\":%u", count);
    fprintf(t->f, "}}");
}

void plc_ctrace_process(plc_ctrace *t, int64_t pid, const char *name)
{
    fprintf(t->f, "%s\n{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%lld,\"args\":{\"name\":\"%s\"}}", sep(t),
            (long long)pid, name);
}

void plc_ctrace_thread(plc_ctrace *t, int64_t pid, int tid, const char *name)
{
    fprintf(t->f, "%s\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%lld,\"tid\":%d,\"args\":{\"name\":\"%s\"}}",
            sep(t), (long long)pid, tid, name);
}

void plc_ctrace_end(plc_ctrace *t) { fprintf(t->f, "\n]}\n"); }
