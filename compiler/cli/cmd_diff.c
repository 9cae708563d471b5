/* cmd_diff.c: plc diff A B [--rank R] [--no-listing] [--format text|yaml|short].
 * A and B are plans or specs, told apart by content (a plan starts with its
 * magic bytes), not by name: a spec is solved and lowered as plc compile
 * would, in memory, and passed through the plan file's encoder and loader,
 * so it compares as the plan compile would write. Exit status as diff(1):
 * 0 equal, 1 different, 2 trouble (an unreadable plan, a spec that has
 * errors or no fit, a bad option), 3 an internal error. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/plan_io.h"
#include "compiler/cli/cli_int.h"
#include "compiler/plantools/plantools.h"

enum { DIFF_EQUAL = 0, DIFF_DIFFERENT = 1, DIFF_TROUBLE = 2, DIFF_INTERNAL = 3 };

static void usage(FILE *out)
{
    fprintf(out,
            "usage: plc diff A B [--rank R] [--no-listing] [--format text|yaml|short] [-D ...]\n"
            "\n"
            "Compares two plans semantically: every setting that differs (model, train,\n"
            "cluster and the catalog figures used, the layout block's constraints: each\n"
            "dimension's pin, set or range, memory_limit, objective) with old and new\n"
            "values; each dimension of the picked layout that changed, pinned by the\n"
            "spec or chosen by the solver; predicted step time, MFU, bubble and memory;\n"
            "each pipeline stage's program (arena, instruction counts by op,\n"
            "communication volume by kind); then a unified diff of the instruction\n"
            "listings (plc dump) of one rank.\n"
            "A or B may be a spec (a file that is not a plan): it is solved and lowered\n"
            "as plc compile would, in memory; -D and --catalog apply to every spec.\n"
            "Exit status, as diff(1): 0 the plans are equal, 1 they differ, 2 an error\n"
            "(an unreadable plan, a spec with errors or no layout that fits, a bad\n"
            "option), 3 an internal error.\n"
            "\n"
            "options:\n"
            "  --rank R            the rank whose listings are diffed (default 0)\n"
            "  --no-listing        leave out the unified diff\n"
            "  --format text|yaml|short\n"
            "                      output format (default text); yaml lists 'changes',\n"
            "                      'layout' (with 'by: spec|solver'), 'predicted' and\n"
            "                      each stage's arena; short is a few lines for a\n"
            "                      pull-request comment\n"
            "%s"
            "  -h, --help          this text\n",
            plc_spec_options_help);
}

/* a spec compiled as plc compile would, through the plan file's bytes */
static int spec_plan(plc_arena *a, const char *path, const plc_spec_opts *opts, plc_plan *p)
{
    plc_job job;
    if (plc_report_load(a, "diff", path, opts, &job)) return DIFF_TROUBLE;
    plc_compiled cp;
    int rc = plc_cli_compile("diff", &job, a, &cp);
    if (rc != PLC_EXIT_OK) return rc == PLC_EXIT_INTERNAL ? DIFF_INTERNAL : DIFF_TROUBLE;
    uint8_t *data = NULL;
    size_t len = 0;
    char err[512];
    plc_oom_doing("encoding the plan");
    if (plc_plan_encode(&cp.plan, &data, &len, err, sizeof err) ||
        plc_plan_decode(a, data, len, p, err, sizeof err)) {
        fprintf(stderr, "plc diff: internal error: %s: %s\n", path, err);
        free(data);
        return DIFF_INTERNAL;
    }
    free(data);
    return DIFF_EQUAL;
}

int plc_cmd_diff(int argc, char **argv)
{
    plc_spec_opts opts;
    if (plc_spec_take_options(&argc, argv, &opts)) return DIFF_TROUBLE;
    const char *paths[2] = {NULL, NULL}, *rank_text = NULL;
    int npaths = 0;
    bool listing = true;
    plc_diff_format format = PLC_DIFF_TEXT;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) { usage(stdout); return PLC_EXIT_OK; }
        if (!strcmp(argv[i], "--no-listing")) { listing = false; continue; }
        if (!strcmp(argv[i], "--format")) {
            const char *f = i + 1 < argc ? argv[++i] : "";
            if (!strcmp(f, "yaml")) format = PLC_DIFF_YAML;
            else if (!strcmp(f, "text")) format = PLC_DIFF_TEXT;
            else if (!strcmp(f, "short")) format = PLC_DIFF_SHORT;
            else {
                fprintf(stderr, "plc diff: error: --format takes text, yaml or short, not '%s'\n", f);
                return DIFF_TROUBLE;
            }
            continue;
        }
        if (!strcmp(argv[i], "--rank")) {
            if (!(rank_text = plc_cmd_value("diff", argc, argv, &i, "a number"))) return DIFF_TROUBLE;
            continue;
        }
        if (argv[i][0] == '-' && argv[i][1]) {
            fprintf(stderr, "plc diff: error: unknown option '%s'\n", argv[i]);
            usage(stderr);
            return DIFF_TROUBLE;
        }
        if (npaths == 2) {
            fprintf(stderr, "plc diff: error: two plans or specs, not more ('%s')\n", argv[i]);
            return DIFF_TROUBLE;
        }
        paths[npaths++] = argv[i];
    }
    if (npaths != 2) {
        fprintf(stderr, "plc diff: error: two plans or specs needed\n");
        usage(stderr);
        return DIFF_TROUBLE;
    }
    bool is_plan[2] = {plc_cmd_is_plan_file(paths[0]), plc_cmd_is_plan_file(paths[1])};
    if ((opts.ndefines || opts.catalog_path) && is_plan[0] && is_plan[1]) {
        fprintf(stderr, "plc diff: error: -D and --catalog apply to specs, and %s and %s are both plans\n", paths[0],
                paths[1]);
        return DIFF_TROUBLE;
    }
    plc_arena a;
    plc_arena_init(&a);
    plc_plan p[2];
    int rc = DIFF_EQUAL;
    for (int k = 0; k < 2 && rc == DIFF_EQUAL; k++) {
        if (is_plan[k]) {
            if (plc_cmd_load_plan("diff", &a, paths[k], &p[k])) rc = DIFF_TROUBLE;
        } else {
            rc = spec_plan(&a, paths[k], &opts, &p[k]);
        }
    }
    int64_t rank = 0;
    if (rc == DIFF_EQUAL) {
        int64_t world = p[0].world_size < p[1].world_size ? p[0].world_size : p[1].world_size;
        if (rank_text && plc_parse_rank("diff", rank_text, world, &rank)) rc = DIFF_TROUBLE;
    }
    if (rc == DIFF_EQUAL) {
        int d = plc_plan_diff(stdout, &p[0], &p[1], paths[0], paths[1], rank, listing, format);
        rc = d < 0 ? DIFF_TROUBLE : d ? DIFF_DIFFERENT : DIFF_EQUAL;
    }
    plc_arena_free(&a);
    return rc;
}
