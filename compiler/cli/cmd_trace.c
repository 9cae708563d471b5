/* cmd_trace.c: plc trace PLAN [-o trace.json] [--ranks all|stages] [--full],
 * and plc trace SPEC: a compiled plan (its magic bytes) is simulated
 * instruction by instruction; anything else is read as a spec, solved (or
 * its pinned layout taken), and its engine's timeline simulated from the
 * time model's pieces (compiler/plantools/engine_trace.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/atomic_file.h"
#include "compiler/cli/cli_int.h"
#include "compiler/plantools/plantools.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: plc trace PLAN [-o FILE] [--ranks all|stages] [--full | --svg]\n"
            "       plc trace SPEC [SPEC OPTIONS] [-o FILE] [--svg]\n"
            "\n"
            "Simulates one training step of every rank's program with the time\n"
            "model's costs (matmuls from FLOPs and the catalog's efficiency,\n"
            "memory-bound ops from bytes, collectives and messages from the\n"
            "hierarchical latency-bandwidth model): compute and communication\n"
            "streams, waits, messages and collectives synchronising the ranks.\n"
            "Writes Chrome trace-event JSON (open it in Perfetto or chrome://tracing):\n"
            "one process per rank, one thread per stream, one event per unit: the\n"
            "consecutive instructions of a stream with the same micro-batch and\n"
            "phase (\"fwd m5 L0-9\"; a micro-batch's data load is in its forward),\n"
            "so the file grows with micro-batches, not with micro-batches x layers.\n"
            "Ranks with identical timelines (tensor- and context-parallel peers,\n"
            "usually) share one process, named after all of them (\"ranks 0-11\").\n"
            "Communication the rank's compute stream does not run under (what it\n"
            "waits for) is drawn again on a third thread, \"exposed comm\".\n"
            "Prints the predicted step time and, per stage, the shares of the step\n"
            "that compute, exposed communication and other idle time take, and the\n"
            "communication that runs under compute.\n"
            "\n"
            "options:\n"
            "  -o FILE         output (default trace.json, trace.svg with --svg; '-' for stdout)\n"
            "  --svg           draw the timeline as an SVG picture instead: one row per\n"
            "                  rank, forward, backward, recompute, communication and\n"
            "                  idle time (bubbles) in distinct colours\n"
            "  --ranks all     every rank (the default up to %d ranks)\n"
            "  --ranks stages  one rank per pipeline stage (the default above that;\n"
            "                  the other ranks of a stage run the same timeline)\n"
            "  --full          the whole timeline: one event per instruction, one\n"
            "                  process per rank\n"
            "  -h, --help      this text\n"
            "\n"
            "A spec (a .plan file, not a compiled plan) is solved, or its pinned layout\n"
            "taken, and one step is simulated for the engine it names (train.engine:\n"
            "plrun, megatron, fsdp2) from the time model's own pieces, one rank per\n"
            "pipeline stage: the compute stream runs forward, recompute and backward\n"
            "per micro-batch and chunk in the schedule's order; tensor- and\n"
            "context-parallel collectives, ZeRO weight gathers, gradient reductions\n"
            "and pipeline messages run on tracks of their own where the engine\n"
            "overlaps them, and are drawn on the compute stream (\"exposed ...\", and\n"
            "again on the \"exposed comm\" track) where it does not; \"overlap\n"
            "slowdown\" is the compute slowed by the SMs overlapped collectives hold\n"
            "(the engine's overlap_sm_share). Prints the simulated step time beside\n"
            "the solver's (equal where pp = 1 or the schedule is layered or modular;\n"
            "for gpipe, 1f1b and interleaved the solver's bubble is a closed form of\n"
            "a balanced pipeline, and docs/engines.md gives the bound) and, per stage,\n"
            "compute, slowdown and each kind of communication, exposed of total.\n"
            "A step of more than 1,000,000 units (micro-batches x chunks, each way)\n"
            "is refused. --ranks and --full apply to plans only.\n"
            "\n"
            "spec options:\n"
            "%s",
            PLC_CHECK_ALL_RANKS_MAX, plc_spec_options_help);
}

static const char *const comm_name[PLC_ETRACE_COMM_COUNT] = {"tp", "cp", "pp", "dp", "gather"};

/* plc trace SPEC: solve (or take the pinned layout) and simulate */
static int trace_spec(const char *path, const plc_spec_opts *opts, const char *outp, bool svg)
{
    plc_arena a;
    plc_arena_init(&a);
    plc_job job;
    int rc = PLC_EXIT_OK;
    if (plc_report_load(&a, "trace", path, opts, &job)) { rc = PLC_EXIT_INPUT; goto done; }
    plc_solution s;
    plc_status ss = plc_solve_opts_run(&job, &a, &(plc_solve_opts){.judge = plc_cli_judge(), .settle = 1}, &s);
    if (ss != PLC_OK) {
        fprintf(stderr, "plc trace: error: %s\n", s.error);
        rc = plc_status_exit(ss);
        goto done;
    }
    const plc_candidate *best = s.pinned ? &s.single : (s.nranked ? &s.ranked[0] : NULL);
    if (!best || !best->valid) {
        fprintf(stderr, "plc trace: error: %s\n", s.pinned ? s.single.reason : "no layout fits (plc solve shows the closest)");
        rc = PLC_EXIT_NO_LAYOUT;
        goto done;
    }
    char err[512], lt[512];
    plc_cmd_out o;
    if (plc_cmd_out_open("trace", outp, &o)) {
        rc = PLC_EXIT_INPUT;
        goto done;
    }
    plc_engine_trace_summary sum;
    plc_status ts = plc_engine_trace(&job, &best->layout, svg ? NULL : o.f, svg ? o.f : NULL, &sum, err, sizeof err);
    if (ts != PLC_OK) {
        fprintf(stderr, "plc trace: error: %s\n", err);
        plc_cmd_out_abort(&o);
        rc = plc_status_exit(ts);
        goto done;
    }
    if (plc_cmd_out_close("trace", &o)) {
        rc = PLC_EXIT_INPUT;
    } else {
        FILE *info = o.to_stdout ? stderr : stdout;
        fprintf(info, "plc trace: %s -> %s: engine %s, %s%s, %lld stage%s simulated, ", path, outp,
                plc_engine_name(job.train.engine), plc_layout_text(&best->layout, lt, sizeof lt),
                s.pinned ? " (pinned)" : " (the solver's pick)", (long long)sum.stages, plc_word_plural(sum.stages));
        if (svg) fprintf(info, "%lld span%s drawn\n", (long long)sum.spans, plc_word_plural(sum.spans));
        else fprintf(info, "%lld event%s in the file\n", (long long)sum.events, plc_word_plural(sum.events));
        double diff = sum.predicted_s > 0 ? 100.0 * (sum.step_time_s / sum.predicted_s - 1.0) : 0.0;
        fprintf(info, "step       %.6g s simulated (the solver's estimate: %.6g s, %+.3f%%)\n", sum.step_time_s,
                sum.predicted_s, plc_word_shown(diff, 3));
        for (int64_t k = 0; k < sum.stages; k++) {
            const plc_engine_trace_stage *st = &sum.stage[k];
            double tot = sum.step_time_s > 0 ? sum.step_time_s : 1;
            fprintf(info, "stage %-4lld compute %5.1f%%, slowdown %4.1f%%; comm exposed/total:", (long long)k,
                    plc_word_shown(100 * st->compute_s / tot, 1), plc_word_shown(100 * st->slowdown_s / tot, 1));
            for (int c = 0; c < PLC_ETRACE_COMM_COUNT; c++)
                if (st->comm_s[c] > 0)
                    fprintf(info, " %s %.3g/%.3g s", comm_name[c], st->exposed_s[c], st->comm_s[c]);
            fprintf(info, "\n");
        }
    }
    plc_engine_trace_summary_free(&sum);
done:
    plc_arena_free(&a);
    return rc;
}

int plc_cmd_trace(int argc, char **argv)
{
    plc_spec_opts opts;
    if (plc_spec_take_options(&argc, argv, &opts)) return PLC_EXIT_INPUT;
    const char *path = NULL, *outp = NULL, *ranks = NULL;
    bool svg = false, full = false;
    plc_trace_detail detail = PLC_TRACE_UNITS;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) { usage(stdout); return PLC_EXIT_OK; }
        if (!strcmp(argv[i], "--svg")) { svg = true; continue; }
        if (!strcmp(argv[i], "--full")) {
            detail = PLC_TRACE_INSTRS;
            full = true;
            continue;
        }
        if (!strcmp(argv[i], "-o") || !strcmp(argv[i], "--ranks")) {
            const char **v = !strcmp(argv[i], "-o") ? &outp : &ranks;
            if (!(*v = plc_cmd_value("trace", argc, argv, &i, "a value"))) return PLC_EXIT_INPUT;
            continue;
        }
        if (plc_cmd_take_input("trace", "plan", argv[i], &path, usage)) return PLC_EXIT_INPUT;
    }
    if (plc_cmd_need_input("trace", "plan", path, usage)) return PLC_EXIT_INPUT;
    if (!outp) outp = svg ? "trace.svg" : "trace.json";
    if (!plc_cmd_is_plan_file(path)) {
        if (ranks || full) {
            fprintf(stderr, "plc trace: error: %s applies to compiled plans; %s is a spec\n", ranks ? "--ranks" : "--full",
                    path);
            return PLC_EXIT_INPUT;
        }
        return trace_spec(path, &opts, outp, svg);
    }
    if (opts.ndefines || opts.catalog_path) {
        fprintf(stderr, "plc trace: error: -D and --catalog apply to specs; %s is a compiled plan\n", path);
        return PLC_EXIT_INPUT;
    }
    if (ranks && strcmp(ranks, "all") && strcmp(ranks, "stages")) {
        fprintf(stderr, "plc trace: error: --ranks takes all or stages, not '%s'\n", ranks);
        return PLC_EXIT_INPUT;
    }
    plc_arena a;
    plc_arena_init(&a);
    plc_plan p;
    if (plc_cmd_load_plan("trace", &a, path, &p)) {
        plc_arena_free(&a);
        return PLC_EXIT_INPUT;
    }
    bool all = ranks ? !strcmp(ranks, "all") : p.world_size <= PLC_CHECK_ALL_RANKS_MAX;
    if (all && p.world_size > 4096) {
        fprintf(stderr, "plc trace: error: --ranks all shows at most 4096 ranks, this plan has %lld; use --ranks stages\n",
                (long long)p.world_size);
        plc_arena_free(&a);
        return PLC_EXIT_INPUT;
    }
    char err[512];
    plc_cmd_out o;
    if (plc_cmd_out_open("trace", outp, &o)) {
        plc_arena_free(&a);
        return PLC_EXIT_INPUT;
    }
    plc_trace_summary sum;
    int rc = PLC_EXIT_OK;
    if (svg) {
        if (plc_trace_svg(&p, all && p.world_size <= 512, o.f, err, sizeof err)) {
            fprintf(stderr, "plc trace: error: %s\n", err);
            rc = PLC_EXIT_INPUT;
            plc_cmd_out_abort(&o);
        } else if (plc_cmd_out_close("trace", &o)) {
            rc = PLC_EXIT_INPUT;
        }
        if (rc == PLC_EXIT_OK) fprintf(o.to_stdout ? stderr : stdout, "plc trace: %s -> %s\n", path, outp);
        plc_arena_free(&a);
        return rc;
    }
    if (plc_trace_run_as(&p, all, detail, o.f, &sum, err, sizeof err)) {
        fprintf(stderr, "plc trace: error: %s\n", err);
        rc = PLC_EXIT_INPUT;
        plc_cmd_out_abort(&o);
    } else if (plc_cmd_out_close("trace", &o)) {
        rc = PLC_EXIT_INPUT; /* a full disk, a vanished directory: the user's */
    }
    if (rc == PLC_EXIT_OK) {
        FILE *info = o.to_stdout ? stderr : stdout;
        fprintf(info, "plc trace: %s -> %s: %lld rank%s simulated (%lld instructions), %lld event%s in the file\n",
                path, outp, (long long)sum.ranks, plc_word_plural(sum.ranks), (long long)sum.instrs,
                (long long)sum.events, plc_word_plural(sum.events));
        fprintf(info, "step       %.6g s predicted by the simulation (the solver's estimate: %.6g s)\n",
                sum.step_time_s, p.pred.step_time_s);
        for (int64_t k = 0; k < sum.ranks; k++) {
            plc_rank_coords c = plc_rank_to_coords(&p.layout, sum.world_rank[k]);
            if (c.tp || c.cp || c.dp) continue; /* one line per stage */
            double st = sum.step_time_s > 0 ? sum.step_time_s : 1;
            double busy = sum.busy_s[k] / st, exposed = sum.exposed_s[k] / st;
            double hidden = (sum.comm_union_s[k] - sum.exposed_s[k]) / st;
            fprintf(info,
                    "stage %-4lld compute busy %5.1f%%, exposed communication %5.1f%%, other idle (bubble, waits) "
                    "%5.1f%%; communication under compute %5.1f%%\n",
                    (long long)c.pp, plc_word_shown(100 * busy, 1), plc_word_shown(100 * exposed, 1),
                    plc_word_shown(100 * (1 - busy - exposed), 1), plc_word_shown(100 * hidden, 1));
        }
        plc_trace_summary_free(&sum);
    }
    plc_arena_free(&a);
    return rc;
}
