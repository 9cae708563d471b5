/* cmd_fmt.c: plc fmt [--check | --write] FILE... prints specs in canonical form. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/atomic_file.h"
#include "compiler/cli/cli_int.h"
#include "compiler/frontend/frontend.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: plc fmt [--check | --write] FILE...\n"
            "\n"
            "Prints a .plan spec in canonical form: blocks in the order model, cluster,\n"
            "train, layout; keys in a fixed order, one per line, '=' aligned; units\n"
            "spelled one way; comments kept. Formatting twice changes nothing.\n"
            "\n"
            "options:\n"
            "  --check      print nothing; for each file not in canonical form say so on\n"
            "               stderr (with the first line that differs) and exit 1\n"
            "  -w, --write  rewrite the files in place\n"
            "  -h, --help   this text\n"
            "\n"
            "Without --check or --write, one FILE is printed to stdout.\n"
            "A file with syntax errors is not formatted (exit 1).\n");
}

/* first line where a and b differ (1-based) */
static int first_difference(const char *a, size_t alen, const char *b, size_t blen)
{
    int line = 1;
    for (size_t i = 0; i < alen && i < blen; i++) {
        if (a[i] != b[i]) return line;
        if (a[i] == '\n') line++;
    }
    return line;
}

static int write_file(const char *path, const char *text, size_t len)
{
    char err[512];
    plc_atomic_file af;
    if (plc_atomic_open(&af, path, err, sizeof err) == 0) {
        if (fwrite(text, 1, len, af.f) == len) {
            if (plc_atomic_commit(&af, err, sizeof err) == 0) return 0;
        } else {
            snprintf(err, sizeof err, "cannot write '%s': %s", path, strerror(errno));
            plc_atomic_abort(&af);
        }
    }
    fprintf(stderr, "plc fmt: error: %s\n", err);
    return 1;
}

int plc_cmd_fmt(int argc, char **argv)
{
    bool check = false, write = false;
    const char *files[256];
    int nfiles = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) { usage(stdout); return PLC_EXIT_OK; }
        if (!strcmp(argv[i], "--check")) { check = true; continue; }
        if (!strcmp(argv[i], "-w") || !strcmp(argv[i], "--write")) { write = true; continue; }
        if (argv[i][0] == '-' && argv[i][1]) {
            fprintf(stderr, "plc fmt: error: unknown option '%s'\n", argv[i]);
            usage(stderr);
            return PLC_EXIT_INPUT;
        }
        if (nfiles == (int)(sizeof files / sizeof files[0])) {
            fprintf(stderr, "plc fmt: error: too many files (at most %d)\n", nfiles);
            return PLC_EXIT_INPUT;
        }
        files[nfiles++] = argv[i];
    }
    if (check && write) {
        fprintf(stderr, "plc fmt: error: --check and --write exclude each other\n");
        return PLC_EXIT_INPUT;
    }
    if (nfiles == 0 || (nfiles > 1 && !check && !write)) {
        fprintf(stderr, nfiles ? "plc fmt: error: several files need --check or --write\n" : "plc fmt: error: no spec given\n");
        usage(stderr);
        return PLC_EXIT_INPUT;
    }
    int status = PLC_EXIT_OK;
    for (int i = 0; i < nfiles; i++) {
        plc_arena a;
        plc_arena_init(&a);
        plc_diag d;
        plc_diag_init(&d, stderr, 0);
        plc_source *src = plc_source_read(&a, &d, files[i]);
        int errors = 1;
        plc_ast *ast = src ? plc_parse_source(&a, &d, src, &errors) : NULL;
        if (!ast || errors) {
            if (ast) fprintf(stderr, "%s: not formatted: fix the syntax errors first\n", files[i]);
            status = PLC_EXIT_INPUT;
            plc_arena_free(&a);
            continue;
        }
        size_t len;
        char *text = plc_fmt(&a, ast, &len);
        bool same = len == src->len && memcmp(text, src->text, len) == 0;
        if (check) {
            if (!same) {
                fprintf(stderr, "%s: not in canonical form (first difference at line %d); run plc fmt --write %s\n",
                        files[i], first_difference(text, len, src->text, src->len), files[i]);
                status = PLC_EXIT_INPUT;
            }
        } else if (write) {
            if (!same && write_file(files[i], text, len)) status = PLC_EXIT_INTERNAL;
        } else if (fwrite(text, 1, len, stdout) != len) {
            status = PLC_EXIT_INTERNAL;
        }
        plc_arena_free(&a);
    }
    return status;
}
