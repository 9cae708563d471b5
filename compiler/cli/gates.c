/* gates.c: the CI gates of plc check and compile (see cli_int.h). */
#include "compiler/cli/cli_int.h"

#include <stdlib.h>
#include <string.h>

#include "common/parse_num.h"
#include "common/plan_io.h"
#include "compiler/plantools/plantools.h"

const char plc_gates_help[] =
    "  --max-memory P      gate: predicted peak per rank at most P of device memory\n"
    "  --min-mfu P         gate: predicted MFU at least P (e.g. 45%)\n"
    "  --baseline PLAN     gate: compare throughput with a plan compiled before ...\n"
    "  --max-regression P  ... allowing a drop of at most P (default 0%)\n";

/* "80%" -> 0.8 */
static int percent(const char *cmd, const char *opt, const char *text, double *out)
{
    double v;
    if (plc_parse_real(text, "%", 0, 100, &v)) {
        fprintf(stderr, "plc %s: error: %s takes a percentage from 0%% to 100%% (e.g. 80%%), not '%s'\n", cmd, opt,
                text ? text : "");
        return -1;
    }
    *out = v / 100.0;
    return 0;
}

int plc_gates_take_options(const char *cmd, int *argc, char **argv, plc_gates *g)
{
    memset(g, 0, sizeof *g);
    g->max_regression = -1;
    int out = 1;
    for (int i = 1; i < *argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < *argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--")) {
            while (i < *argc) argv[out++] = argv[i++];
            break;
        }
        if (!strcmp(a, "--max-memory")) {
            if (percent(cmd, a, v, &g->max_memory)) return -1;
        } else if (!strcmp(a, "--min-mfu")) {
            if (percent(cmd, a, v, &g->min_mfu)) return -1;
        } else if (!strcmp(a, "--max-regression")) {
            if (percent(cmd, a, v, &g->max_regression)) return -1;
        } else if (!strcmp(a, "--baseline")) {
            if (!v) {
                fprintf(stderr, "plc %s: error: --baseline needs a plan file\n", cmd);
                return -1;
            }
            g->baseline = v;
        } else {
            argv[out++] = argv[i];
            continue;
        }
        i++; /* the value */
    }
    *argc = out;
    argv[out] = NULL;
    if (g->max_regression >= 0 && !g->baseline) {
        fprintf(stderr, "plc %s: error: --max-regression needs --baseline PLAN\n", cmd);
        return -1;
    }
    return 0;
}

bool plc_gates_any(const plc_gates *g) { return g->max_memory > 0 || g->min_mfu > 0 || g->baseline; }

int plc_gates_check(const char *cmd, const plc_gates *g, const plc_job *job, const plc_estimate *e,
                    const plc_gate_memory *mem, FILE *out)
{
    int failed = 0;
    char p1[32], p2[32];
    if (g->max_memory > 0) {
        double peak = mem ? mem->peak_bytes : e->peak_bytes;
        const char *what = mem ? mem->what : "predicted";
        double share = peak / job->cluster.hw.mem_bytes;
        bool ok = share <= g->max_memory;
        fprintf(out, "gate memory: %s peak %.2f GiB per rank = %s of %.2f GiB, limit %s: %s\n", what,
                peak / 1073741824.0, plc_word_percent(share, p1, sizeof p1), job->cluster.hw.mem_bytes / 1073741824.0,
                plc_word_percent(g->max_memory, p2, sizeof p2), ok ? "pass" : "FAIL");
        fflush(out);
        if (!ok)
            fprintf(stderr, "plc %s: gate failed: %s: %s peak memory %s of the device, more than --max-memory %s\n",
                    cmd, job->path, what, p1, p2);
        failed += !ok;
    }
    if (g->min_mfu > 0) {
        bool ok = e->mfu >= g->min_mfu;
        fprintf(out, "gate MFU: %s, minimum %s: %s\n", plc_word_percent(e->mfu, p1, sizeof p1),
                plc_word_percent(g->min_mfu, p2, sizeof p2), ok ? "pass" : "FAIL");
        fflush(out);
        if (!ok) fprintf(stderr, "plc %s: gate failed: %s: predicted MFU %s, below --min-mfu %s\n", cmd, job->path, p1, p2);
        failed += !ok;
    }
    if (g->baseline) {
        plc_arena a;
        plc_arena_init(&a);
        plc_plan base;
        char err[512];
        if (plc_plan_load_file(&a, g->baseline, &base, err, sizeof err)) {
            fprintf(stderr, "plc %s: error: --baseline: %s\n", cmd, err);
            plc_arena_free(&a);
            return -1;
        }
        double old = base.pred.tokens_per_s, drop = old > 0 ? 1.0 - e->tokens_per_s / old : 0;
        double allowed = g->max_regression > 0 ? g->max_regression : 0;
        bool ok = drop <= allowed + 1e-12;
        char d[32];
        snprintf(d, sizeof d, "%+.2f%%", -100.0 * drop);
        fprintf(out, "gate regression: %.6g tokens/s against %.6g in %s (%s), allowed drop %s: %s\n", e->tokens_per_s,
                old, g->baseline, d, plc_word_percent(allowed, p2, sizeof p2), ok ? "pass" : "FAIL");
        fflush(out);
        if (!ok)
            fprintf(stderr, "plc %s: gate failed: %s: predicted throughput %.6g tokens/s is %.2f%% below the baseline's %.6g, more than --max-regression %s\n",
                    cmd, job->path, e->tokens_per_s, 100.0 * drop, old, p2);
        failed += !ok;
        plc_arena_free(&a);
    }
    return failed ? 1 : 0;
}
