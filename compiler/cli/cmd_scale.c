/* cmd_scale.c: plc scale FILE --gpus A..B: the best layout at each cluster
 * size from A to B GPUs (doubling), with throughput, MFU, per-GPU return and
 * time to train, and where returns diminish. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/parse_num.h"
#include "compiler/cli/cmd_args.h"
#include "compiler/cli/commands.h"
#include "compiler/cli/report.h"
#include "compiler/cli/report_load.h"

/* a doubling step whose added GPUs return less than this share of the
 * throughput they would add at perfect scaling counts as diminishing */
#define DIMINISHING_EFFICIENCY 0.8

static void usage(FILE *out)
{
    fprintf(out,
            "usage: plc scale [OPTIONS] FILE --gpus A..B\n"
            "\n"
            "Solves the spec at cluster sizes from A to B GPUs (A, 2A, 4A, ... and B),\n"
            "keeping the model, the global batch and the layout constraints (dp is free),\n"
            "and prints the best layout's throughput, MFU, tokens/s per GPU, the return of\n"
            "each step relative to perfect scaling, and the time to train train.steps.\n"
            "Sizes below one node use one partial node; larger ones whole nodes.\n"
            "Exit status: 0, 1 an error in the spec or options, 2 no layout fits at any size.\n"
            "\n"
            "options:\n"
            "  --gpus A..B         the range of cluster sizes (GPUs)\n"
            "%s"
            "  -h, --help          this text\n",
            plc_spec_options_help);
}

static int parse_range(const char *text, long *lo, long *hi)
{
    const char *dots = strstr(text, "..");
    if (!dots) return -1;
    char left[32];
    size_t n = (size_t)(dots - text);
    if (n == 0 || n >= sizeof left) return -1;
    memcpy(left, text, n);
    left[n] = '\0';
    int64_t a, b;
    if (plc_parse_int(left, 1, 1000000, &a) || plc_parse_int(dots + 2, a, 1000000, &b)) return -1;
    *lo = (long)a;
    *hi = (long)b;
    return 0;
}

int plc_cmd_scale(int argc, char **argv)
{
    plc_spec_opts opts;
    if (plc_spec_take_options(&argc, argv, &opts)) return PLC_EXIT_INPUT;
    const char *path = NULL, *range = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) { usage(stdout); return PLC_EXIT_OK; }
        if (!strcmp(argv[i], "--gpus")) {
            if (i + 1 >= argc) { fprintf(stderr, "plc scale: error: --gpus needs a range A..B\n"); return PLC_EXIT_INPUT; }
            range = argv[++i];
            continue;
        }
        if (!strncmp(argv[i], "--gpus=", 7)) { range = argv[i] + 7; continue; }
        if (plc_cmd_take_input("scale", "spec", argv[i], &path, usage)) return PLC_EXIT_INPUT;
    }
    if (plc_cmd_need_input("scale", "spec", path, usage)) return PLC_EXIT_INPUT;
    if (!range) {
        fprintf(stderr, "plc scale: error: --gpus A..B is required\n");
        usage(stderr);
        return PLC_EXIT_INPUT;
    }
    long lo, hi;
    if (parse_range(range, &lo, &hi)) {
        fprintf(stderr, "plc scale: error: --gpus takes a range A..B with 1 <= A <= B <= 1000000, not '%s'\n", range);
        return PLC_EXIT_INPUT;
    }
    plc_arena a;
    plc_arena_init(&a);
    plc_job job;
    int rc = PLC_EXIT_NO_LAYOUT;
    if (plc_report_load(&a, "scale", path, &opts, &job)) { rc = PLC_EXIT_INPUT; goto done; }
    plc_report_job_header(stdout, &job);
    printf("train.steps = %lld; per-GPU return = tokens/s per GPU relative to the first size that fits;\n"
           "step return = throughput gained by a step relative to perfect scaling\n\n",
           (long long)job.train.steps);
    printf("%7s %5s %12s %6s %11s %8s %8s %11s  %s\n", "GPUs", "nodes", "tokens/s", "MFU", "tok/s/GPU",
           "per-GPU", "step", "train h", "best layout");
    int64_t gpn = job.cluster.gpus_per_node;
    double first_per_gpu = 0, prev_tps = 0;
    long prev_n = 0, diminishing = 0;
    for (long n = lo;; n = n * 2 > hi && n < hi ? hi : n * 2) {
        plc_job j = job;
        j.layout.dp.kind = PLC_CHOICE_AUTO;
        if (n <= gpn) { j.cluster.nodes = 1; j.cluster.gpus_per_node = n; }
        else if (n % gpn == 0) j.cluster.nodes = n / gpn;
        else {
            printf("%7ld  skipped: not a multiple of gpus_per_node = %lld\n", n, (long long)gpn);
            if (n >= hi) break;
            continue;
        }
        plc_arena sa;
        plc_arena_init(&sa);
        plc_solution s;
        if (plc_solve(&j, &sa, &s) == 0 && s.nranked > 0) {
            const plc_candidate *c = &s.ranked[0];
            double per_gpu = c->tokens_per_s / (double)n;
            if (first_per_gpu == 0) first_per_gpu = per_gpu;
            char step[16] = "-";
            if (prev_tps > 0) {
                double eff = (c->tokens_per_s / prev_tps - 1.0) / ((double)n / (double)prev_n - 1.0);
                snprintf(step, sizeof step, "%.0f%%", 100.0 * eff);
                if (eff < DIMINISHING_EFFICIENCY && !diminishing) diminishing = n;
            }
            printf("%7ld %5lld %12.0f %5.1f%% %11.1f %7.0f%% %8s %11.2f  tp=%lld pp=%lld cp=%lld dp=%lld mb=%lld %s %s zero=%lld\n",
                   n, (long long)j.cluster.nodes, c->tokens_per_s, 100.0 * c->mfu, per_gpu,
                   100.0 * per_gpu / first_per_gpu, step, (double)job.train.steps * c->step_time_s / 3600.0,
                   (long long)c->layout.tp, (long long)c->layout.pp, (long long)c->layout.cp,
                   (long long)c->layout.dp, (long long)c->layout.micro_batch, plc_schedule_name(c->layout.schedule),
                   plc_recompute_name(c->layout.recompute), (long long)c->layout.zero);
            prev_tps = c->tokens_per_s;
            prev_n = n;
            rc = PLC_EXIT_OK;
        } else if (s.evaluated + s.pruned == 0) {
            printf("%7ld %5lld  no valid layout: %ld GPUs do not factor into tp x pp x cp x dp for this model and batch\n",
                   n, (long long)j.cluster.nodes, n);
        } else {
            printf("%7ld %5lld  no layout fits in memory\n", n, (long long)j.cluster.nodes);
        }
        plc_arena_free(&sa);
        if (n >= hi) break;
    }
    if (diminishing)
        printf("\nreturns diminish from %ld GPUs: the step there adds less than %.0f%% of perfect scaling\n",
               diminishing, 100.0 * DIMINISHING_EFFICIENCY);
    else if (rc == PLC_EXIT_OK)
        printf("\nno diminishing returns in this range (every step keeps at least %.0f%% of perfect scaling)\n",
               100.0 * DIMINISHING_EFFICIENCY);
done:
    plc_arena_free(&a);
    return rc;
}
