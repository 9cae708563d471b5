/* cmd_args.c: see cli_int.h. */
#include "compiler/cli/cli_int.h"

#include <stdlib.h>
#include <string.h>

#include "common/atomic_file.h"
#include "common/parse_num.h"
#include "common/plan_io.h"
#include "compiler/lower/lower.h"
#include "compiler/solver/solver.h"

int plc_cmd_take_input(const char *cmd, const char *what, const char *arg, const char **path, plc_usage_fn *usage)
{
    if (arg[0] == '-' && arg[1]) {
        fprintf(stderr, "plc %s: error: unknown option '%s'\n", cmd, arg);
        usage(stderr);
        return -1;
    }
    if (*path) {
        fprintf(stderr, "plc %s: error: one %s at a time ('%s' and '%s')\n", cmd, what, *path, arg);
        return -1;
    }
    *path = arg;
    return 0;
}

int plc_cmd_need_input(const char *cmd, const char *what, const char *path, plc_usage_fn *usage)
{
    if (path) return 0;
    fprintf(stderr, "plc %s: error: no %s given\n", cmd, what);
    usage(stderr);
    return -1;
}

int plc_cmd_load_plan(const char *cmd, plc_arena *a, const char *path, plc_plan *p)
{
    char err[512];
    if (plc_plan_load_file(a, path, p, err, sizeof err) == 0) return 0;
    fprintf(stderr, "plc %s: error: %s\n", cmd, err);
    return -1;
}

int plc_parse_rank(const char *cmd, const char *text, int64_t world, int64_t *out)
{
    int64_t v;
    if (plc_parse_int(text, 0, world - 1, &v)) {
        fprintf(stderr, "plc %s: error: --rank '%s' is not a rank of this plan (0..%lld)\n", cmd, text,
                (long long)world - 1);
        return -1;
    }
    *out = v;
    return 0;
}

const char *plc_cmd_value(const char *cmd, int argc, char **argv, int *i, const char *what)
{
    if (*i + 1 >= argc) {
        fprintf(stderr, "plc %s: error: %s needs %s\n", cmd, argv[*i], what);
        return NULL;
    }
    return argv[++*i];
}

int plc_cmd_parse_format(const char *cmd, const char *text, bool *yaml)
{
    if (text && !strcmp(text, "yaml")) *yaml = true;
    else if (text && !strcmp(text, "text")) *yaml = false;
    else {
        fprintf(stderr, "plc %s: error: --format takes text or yaml%s%s%s\n", cmd, text ? ", not '" : "", text ? text : "",
                text ? "'" : "");
        return -1;
    }
    return 0;
}

bool plc_cmd_is_stdout(const char *path) { return path && !strcmp(path, "-"); }

bool plc_cmd_is_plan_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return true;
    char magic[8];
    bool plan = fread(magic, 1, sizeof magic, f) == sizeof magic && !memcmp(magic, PLC_PLAN_MAGIC, sizeof magic);
    fclose(f);
    return plan;
}

int plc_cmd_out_open(const char *cmd, const char *path, plc_cmd_out *out)
{
    memset(out, 0, sizeof *out);
    if (plc_cmd_is_stdout(path)) {
        out->to_stdout = true;
        out->f = stdout;
        return 0;
    }
    char err[512];
    if (plc_atomic_open(&out->af, path, err, sizeof err)) {
        fprintf(stderr, "plc %s: error: %s\n", cmd, err);
        return 1;
    }
    out->f = out->af.f;
    return 0;
}

int plc_cmd_out_close(const char *cmd, plc_cmd_out *out)
{
    char err[512];
    if (out->to_stdout) {
        if (fflush(stdout) == 0 && !ferror(stdout)) return 0;
        fprintf(stderr, "plc %s: error: writing to standard output failed\n", cmd);
        return 1;
    }
    if (plc_atomic_commit(&out->af, err, sizeof err)) {
        fprintf(stderr, "plc %s: error: %s\n", cmd, err);
        return 1;
    }
    return 0;
}

void plc_cmd_out_abort(plc_cmd_out *out)
{
    if (!out->to_stdout) plc_atomic_abort(&out->af);
}

int plc_cmd_write_svg(const char *cmd, const char *path, void (*draw)(FILE *f, const void *ctx), const void *ctx)
{
    plc_cmd_out o;
    if (plc_cmd_out_open(cmd, path, &o)) return 1;
    draw(o.f, ctx);
    return plc_cmd_out_close(cmd, &o);
}

plc_memory_judge *plc_cli_judge(void)
{
    /* its memo lives as long as the process */
    static plc_memory_judge judge = {.arena = plc_lower_arena, .model = plc_lower_model_check};
    return &judge;
}
