/* chrome_trace.c: Chrome trace-event JSON; see chrome_trace.h. */
#include "common/chrome_trace.h"

static const char *sep(plc_ctrace *t)
{
    const char *s = t->first ? "" : ",";
    t->first = 0;
    return s;
}

void plc_ctrace_begin(plc_ctrace *t, FILE *f, const char *generator, int64_t world_size, int64_t ranks_shown)
{
    t->f = f;
    t->first = 1;
    fprintf(f, "{\"displayTimeUnit\":\"ms\",\"otherData\":{\"generator\":\"%s\",\"world_size\":%lld,"
               "\"ranks_shown\":%lld},\n\"traceEvents\":[",
            generator, (long long)world_size, (long long)ranks_shown);
}

void plc_ctrace_rank(plc_ctrace *t, const plc_layout *l, int64_t rank)
{
    plc_rank_coords c = plc_rank_to_coords(l, rank);
    fprintf(t->f, "%s\n{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%lld,\"args\":{\"name\":\"rank %lld "
                  "(tp %lld cp %lld dp %lld pp %lld)\"}},",
            sep(t), (long long)rank, (long long)rank, (long long)c.tp, (long long)c.cp, (long long)c.dp,
            (long long)c.pp);
    fprintf(t->f, "\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%lld,\"tid\":0,\"args\":{\"name\":\"compute\"}},",
            (long long)rank);
    fprintf(t->f, "\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%lld,\"tid\":1,\"args\":{\"name\":\"comm\"}}",
            (long long)rank);
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

void plc_ctrace_span(plc_ctrace *t, int64_t rank, int stream, const char *name, plc_phase phase, uint32_t first,
                     uint32_t count, double t0, double t1)
{
    const char *cat = plc_phase_name(phase);
    double dur = (t1 - t0) * 1e6;
    fprintf(t->f, "%s\n{\"name\":\"%s\",\"cat\":\"%s\",\"ph\":\"X\",\"pid\":%lld,\"tid\":%d,\"ts\":%.3f,\"dur\":%.3f,"
                  "\"args\":{\"first\":%u,\"instrs\":%u}}",
            sep(t), name, cat ? cat : "?", (long long)rank, stream, t0 * 1e6, dur < 0 ? 0.0 : dur, first, count);
}

void plc_ctrace_end(plc_ctrace *t) { fprintf(t->f, "\n]}\n"); }
