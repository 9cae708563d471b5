/* spec.c: the front end's entry points: command-line options, -D overrides,
 * and plc_spec_load (read, parse, override, resolve, check). */
#include "compiler/frontend/frontend_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>


const char plc_spec_options_help[] =
    "  -D BLOCK.KEY=VALUE  override a key of the spec, checked like the same line\n"
    "                      in the file (e.g. -D layout.tp=2 -D train.steps=50)\n"
    "  --catalog FILE      hardware catalog to use (default: $PLC_CATALOG, then\n"
    "                      cluster.catalog, then the built-in catalog found from\n"
    "                      plc's directory: ../share/plc or ../examples)\n";

int plc_spec_take_options(int *argc, char **argv, plc_spec_opts *opts)
{
    memset(opts, 0, sizeof *opts);
    int out = 1;
    for (int i = 1; i < *argc; i++) {
        const char *arg = argv[i];
        const char *def = NULL;
        if (strcmp(arg, "--") == 0) {
            while (i < *argc) argv[out++] = argv[i++];
            break;
        }
        if (strcmp(arg, "-D") == 0) {
            if (i + 1 >= *argc) {
                fprintf(stderr, "plc: error: -D needs an argument: -D block.key=value\n");
                return 1;
            }
            def = argv[++i];
        } else if (strncmp(arg, "-D", 2) == 0) {
            def = arg + 2;
        } else if (strcmp(arg, "--catalog") == 0) {
            if (i + 1 >= *argc) {
                fprintf(stderr, "plc: error: --catalog needs a file name\n");
                return 1;
            }
            opts->catalog_path = argv[++i];
            continue;
        } else if (strncmp(arg, "--catalog=", 10) == 0) {
            opts->catalog_path = arg + 10;
            continue;
        } else {
            argv[out++] = argv[i];
            continue;
        }
        if (opts->ndefines == PLC_MAX_DEFINES) {
            fprintf(stderr, "plc: error: more than %d -D overrides\n", PLC_MAX_DEFINES);
            return 1;
        }
        opts->defines[opts->ndefines++] = def;
    }
    argv[out] = NULL;
    *argc = out;
    return 0;
}

static plc_block *find_or_add_block(plc_arena *a, plc_ast *ast, const char *kind, plc_loc loc)
{
    plc_block *b = plc_ast_find_block(ast, kind);
    if (b) return b;
    b = PLC_NEW(a, plc_block);
    b->kind = plc_arena_strdup(a, kind);
    b->kind_loc = loc;
    b->loc = loc;
    plc_ast_add_block(ast, b);
    return b;
}

int plc_spec_apply_defines(plc_arena *a, plc_diag *d, plc_ast *ast, const char *const *defines, int n)
{
    int before = d->errors;
    for (int i = 0; i < n; i++) {
        plc_source *src = plc_source_from_text(a, "<command line>", defines[i], strlen(defines[i]));
        plc_pair *p = plc_parse_define(a, d, src);
        if (!p) continue;
        const char *dot = strchr(p->key, '.');
        if (!dot) {
            plc_diag_error(d, p->key_loc, "an override names its block: -D BLOCK.%s=...", p->key);
            plc_diag_hint(d, "for example -D layout.tp=2");
            continue;
        }
        /* split "block.key": the pair keeps the key, located after the dot */
        size_t blen = (size_t)(dot - p->key);
        plc_loc block_loc = plc_loc_of_range(src, p->key_loc.begin, p->key_loc.begin + blen);
        const char *kind = plc_arena_strndup(a, p->key, blen);
        p->key = dot + 1;
        p->key_loc = plc_loc_of_range(src, p->key_loc.begin + blen + 1, p->key_loc.end);
        p->overridden = true;
        plc_block *b = find_or_add_block(a, ast, kind, block_loc);
        plc_pair *old = plc_block_find_pair(b, p->key);
        if (old) {
            old->value = p->value;
            old->in = p->in;
            old->key_loc = p->key_loc;
            old->loc = p->loc;
            old->overridden = true;
        } else {
            plc_block_add_pair(b, p);
        }
    }
    return d->errors - before;
}

/* the directory part of path ("" when it has none) */
static const char *dir_of(plc_arena *a, const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash) return "";
    if (slash == path) return "/";
    return plc_arena_strndup(a, path, (size_t)(slash - path));
}

int plc_spec_load_diag(plc_arena *a, const char *path, const plc_spec_opts *opts, plc_job *job, plc_diag *d)
{
    int before = d->errors;
    memset(job, 0, sizeof *job);
    job->path = plc_arena_strdup(a, path);
    plc_source *src = plc_source_read(a, d, path);
    if (!src) return d->errors - before;
    job->source = src->text;
    job->source_len = src->len;
    int syntax_errors;
    plc_ast *ast = plc_parse_source(a, d, src, &syntax_errors);
    /* an override that does not parse is reported and left out */
    plc_spec_apply_defines(a, d, ast, opts ? opts->defines : NULL, opts ? opts->ndefines : 0);
    /* a tree with syntax errors is partial: resolving it would invent errors */
    if (syntax_errors) return d->errors - before;
    plc_resolve_opts ro = {NULL, dir_of(a, path), opts && opts->read_data};
    const char *env = getenv("PLC_CATALOG");
    ro.catalog_path = opts && opts->catalog_path ? opts->catalog_path : env && env[0] ? env : NULL;
    plc_resolve(a, d, ast, &ro, job);
    return d->errors - before;
}

int plc_spec_load(plc_arena *a, const char *path, const plc_spec_opts *opts, plc_job *job)
{
    plc_diag d;
    plc_diag_init(&d, stderr, opts ? opts->max_errors : 0);
    return plc_spec_load_diag(a, path, opts, job, &d);
}
