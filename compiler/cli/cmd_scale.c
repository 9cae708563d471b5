/* cmd_scale.c: plc scale FILE --gpus A..B: the best layout at each cluster
 * size from A to B GPUs (doubling), with throughput, MFU, per-GPU return and
 * time to train, and where returns diminish. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/parse_num.h"
#include "compiler/cli/cli_int.h"

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
            "  --format text|yaml  output format (default text); yaml lists 'sizes'\n"
            "  --svg FILE          also draw throughput, MFU and per-GPU return against\n"
            "                      GPUs as an SVG picture ('-': to standard output, in\n"
            "                      place of the report)\n"
            "%s"
            "  -h, --help          this text\n",
            plc_spec_options_help);
}

/* one cluster size of the sweep */
typedef enum { POINT_OK, POINT_SKIPPED, POINT_INVALID, POINT_NO_FIT } point_status;
static const char *const point_status_names[] = {"ok", "skipped", "no valid layout", "no layout fits"};

typedef struct scale_point {
    long gpus;
    int64_t nodes;
    point_status status;
    plc_candidate c;       /* the best layout (POINT_OK) */
    double per_gpu;        /* tokens/s per GPU */
    double per_gpu_return; /* per_gpu relative to the first size that fits */
    double step_return;    /* gain of this step relative to perfect scaling; -1 for the first */
} scale_point;

/* solves the job at A, 2A, 4A, ... and B GPUs (at most max points); a job
 * the solver refuses at any size (error[0] set) stops it */
static void scale_run(const plc_job *job, long lo, long hi, scale_point *pts, int *npts, long *diminishing,
                      char *error, size_t error_size)
{
    int64_t gpn = job->cluster.gpus_per_node;
    double first_per_gpu = 0, prev_tps = 0;
    long prev_n = 0;
    for (long n = lo; *npts < 64; n = n * 2 > hi && n < hi ? hi : n * 2) {
        scale_point *p = &pts[(*npts)++];
        memset(p, 0, sizeof *p);
        p->gpus = n;
        p->step_return = -1;
        plc_job j = *job;
        j.layout.dp.kind = PLC_CHOICE_AUTO;
        if (n <= gpn) { j.cluster.nodes = 1; j.cluster.gpus_per_node = n; }
        else if (n % gpn == 0) j.cluster.nodes = n / gpn;
        else {
            p->status = POINT_SKIPPED;
            if (n >= hi) break;
            continue;
        }
        p->nodes = j.cluster.nodes;
        plc_arena sa;
        plc_arena_init(&sa);
        plc_solution s;
        plc_status st = plc_solve_opts_run(&j, &sa, &(plc_solve_opts){.judge = plc_cli_judge(), .settle = 1}, &s);
        if (st != PLC_OK && s.error[0]) {
            snprintf(error, error_size, "%s", s.error);
            plc_arena_free(&sa);
            return;
        }
        if (st == PLC_OK && s.nranked > 0) {
            p->status = POINT_OK;
            p->c = s.ranked[0];
            p->c.reason = "";
            p->per_gpu = p->c.tokens_per_s / (double)n;
            if (first_per_gpu == 0) first_per_gpu = p->per_gpu;
            p->per_gpu_return = p->per_gpu / first_per_gpu;
            if (prev_tps > 0) {
                p->step_return = (p->c.tokens_per_s / prev_tps - 1.0) / ((double)n / (double)prev_n - 1.0);
                if (p->step_return < DIMINISHING_EFFICIENCY && !*diminishing) *diminishing = n;
            }
            prev_tps = p->c.tokens_per_s;
            prev_n = n;
        } else {
            p->status = s.evaluated + s.pruned == 0 ? POINT_INVALID : POINT_NO_FIT;
        }
        plc_arena_free(&sa);
        if (n >= hi) break;
    }
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

/* what the scaling picture draws: one point per size that ran */
typedef struct scale_picture {
    const plc_job *job;
    int n;
    double gpus[64], tokens_per_s[64], mfu[64], per_gpu_return[64];
} scale_picture;

static void draw_scale(FILE *f, const void *ctx)
{
    const scale_picture *p = ctx;
    plc_report_scale_svg(f, p->job, p->n, p->gpus, p->tokens_per_s, p->mfu, p->per_gpu_return);
}

int plc_cmd_scale(int argc, char **argv)
{
    plc_spec_opts opts;
    if (plc_spec_take_options(&argc, argv, &opts)) return PLC_EXIT_INPUT;
    const char *path = NULL, *range = NULL, *svg = NULL;
    bool yaml = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) { usage(stdout); return PLC_EXIT_OK; }
        if (!strcmp(argv[i], "--format")) {
            if (plc_cmd_parse_format("scale", i + 1 < argc ? argv[++i] : NULL, &yaml)) return PLC_EXIT_INPUT;
            continue;
        }
        if (!strcmp(argv[i], "--gpus")) {
            if (!(range = plc_cmd_value("scale", argc, argv, &i, "a range A..B"))) return PLC_EXIT_INPUT;
            continue;
        }
        if (!strncmp(argv[i], "--gpus=", 7)) { range = argv[i] + 7; continue; }
        if (!strcmp(argv[i], "--svg")) {
            if (!(svg = plc_cmd_value("scale", argc, argv, &i, "a file name"))) return PLC_EXIT_INPUT;
            continue;
        }
        if (plc_cmd_take_input("scale", "spec", argv[i], &path, usage)) return PLC_EXIT_INPUT;
    }
    if (plc_cmd_need_input("scale", "spec", path, usage)) return PLC_EXIT_INPUT;
    if (yaml && plc_cmd_is_stdout(svg)) {
        fprintf(stderr, "plc scale: error: --svg - and --format yaml would both write standard output\n");
        return PLC_EXIT_INPUT;
    }
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
    scale_point pts[64];
    int npts = 0;
    long diminishing = 0;
    char error[sizeof ((plc_solution *)0)->error] = "";
    scale_run(&job, lo, hi, pts, &npts, &diminishing, error, sizeof error);
    if (error[0]) {
        fprintf(stderr, "plc scale: error: %s\n", error);
        rc = PLC_EXIT_INPUT;
        goto done;
    }
    for (int i = 0; i < npts; i++)
        if (pts[i].status == POINT_OK) rc = PLC_EXIT_OK;
    if (svg && npts > 0) {
        scale_picture pic = {&job, 0, {0}, {0}, {0}, {0}};
        double *g = pic.gpus, *t = pic.tokens_per_s, *m = pic.mfu, *r = pic.per_gpu_return;
        int n = 0;
        for (int i = 0; i < npts; i++) {
            if (pts[i].status == POINT_SKIPPED) continue;
            bool ok = pts[i].status == POINT_OK;
            g[n] = (double)pts[i].gpus;
            t[n] = ok ? pts[i].c.tokens_per_s : NAN;
            m[n] = ok ? pts[i].c.mfu : NAN;
            r[n] = ok ? pts[i].per_gpu_return : NAN;
            n++;
        }
        pic.n = n;
        if (n > 0 && plc_cmd_write_svg("scale", svg, draw_scale, &pic)) {
            rc = PLC_EXIT_INPUT;
            goto done;
        }
        if (plc_cmd_is_stdout(svg)) goto done; /* the picture is the output: no report */
    }
    if (yaml) {
        plc_yaml y;
        plc_yaml_begin(&y, stdout, "scale");
        plc_report_yaml_job(&y, &job);
        plc_yaml_num(&y, "diminishing_efficiency", DIMINISHING_EFFICIENCY);
        if (diminishing) plc_yaml_int(&y, "diminishing_from_gpus", diminishing);
        plc_yaml_seq(&y, "sizes");
        for (int i = 0; i < npts; i++) {
            const scale_point *p = &pts[i];
            plc_yaml_map(&y, NULL);
            plc_yaml_int(&y, "gpus", p->gpus);
            plc_yaml_int(&y, "nodes", p->nodes);
            plc_yaml_str(&y, "status", point_status_names[p->status]);
            if (p->status == POINT_OK) {
                plc_yaml_num(&y, "tokens_per_s", p->c.tokens_per_s);
                plc_yaml_num(&y, "mfu", p->c.mfu);
                plc_yaml_num(&y, "tokens_per_s_per_gpu", p->per_gpu);
                plc_yaml_num(&y, "per_gpu_return", p->per_gpu_return);
                if (p->step_return >= 0) plc_yaml_num(&y, "step_return", p->step_return);
                plc_yaml_num(&y, "step_time_s", p->c.step_time_s);
                plc_yaml_num(&y, "train_hours", (double)job.train.steps * p->c.step_time_s / 3600.0);
                plc_report_yaml_layout(&y, "layout", &p->c.layout);
            }
            plc_yaml_map_end(&y);
        }
        plc_yaml_seq_end(&y);
        if (plc_yaml_end(&y)) rc = PLC_EXIT_INTERNAL;
        goto done;
    }
    plc_report_job_header(stdout, &job);
    printf("train.steps = %lld; per-GPU return = tokens/s per GPU relative to the first size that fits;\n"
           "step return = throughput gained by a step relative to perfect scaling\n\n",
           (long long)job.train.steps);
    printf("%7s %5s %12s %6s %11s %8s %8s %11s  %s\n", "GPUs", "nodes", "tokens/s", "MFU", "tok/s/GPU",
           "per-GPU", "step", "train h", "best layout");
    for (int i = 0; i < npts; i++) {
        const scale_point *p = &pts[i];
        const plc_candidate *c = &p->c;
        switch (p->status) {
        case POINT_SKIPPED:
            printf("%7ld  skipped: not a multiple of gpus_per_node = %lld\n", p->gpus, (long long)job.cluster.gpus_per_node);
            break;
        case POINT_INVALID:
            printf("%7ld %5lld  no valid layout: %ld GPUs do not factor into tp x pp x cp x dp for this model and batch\n",
                   p->gpus, (long long)p->nodes, p->gpus);
            break;
        case POINT_NO_FIT: printf("%7ld %5lld  no layout fits in memory\n", p->gpus, (long long)p->nodes); break;
        case POINT_OK: {
            char step[16] = "-";
            if (p->step_return >= 0) snprintf(step, sizeof step, "%.0f%%", 100.0 * p->step_return);
            printf("%7ld %5lld %12.0f %5.1f%% %11.1f %7.0f%% %8s %11.2f  tp=%lld pp=%lld cp=%lld dp=%lld mb=%lld %s %s zero=%lld\n",
                   p->gpus, (long long)p->nodes, c->tokens_per_s, 100.0 * c->mfu, p->per_gpu, 100.0 * p->per_gpu_return,
                   step, (double)job.train.steps * c->step_time_s / 3600.0, (long long)c->layout.tp,
                   (long long)c->layout.pp, (long long)c->layout.cp, (long long)c->layout.dp,
                   (long long)c->layout.micro_batch, plc_schedule_name(c->layout.schedule),
                   plc_recompute_text(&c->layout, (char[24]){0}, 24), (long long)c->layout.zero);
            break;
        }
        }
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
