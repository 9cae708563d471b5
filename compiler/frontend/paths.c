/* paths.c: absolute, normalised file names for what a spec names, and the
 * data plc ships with (the hardware catalog, the engine profiles), found
 * relative to the running program's own location, never by a fixed path, so
 * a copied install prefix keeps working (the lookup order in frontend.h). */
#include "compiler/frontend/frontend_int.h"
#include "common/crc32.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef PLC_TREE_DATADIR
#define PLC_TREE_DATADIR "../examples"
#endif

enum { PATH_BUF = 4096 };

const char *plc_path_normalise(plc_arena *a, const char *path)
{
    size_t n = strlen(path);
    char *out = plc_arena_alloc(a, n + 2);
    size_t len = 0; /* out[0..len) is "/c1/c2..." with no trailing slash */
    const char *p = path;
    while (*p) {
        while (*p == '/') p++;
        const char *end = p;
        while (*end && *end != '/') end++;
        size_t k = (size_t)(end - p);
        if (k == 0 || (k == 1 && p[0] == '.')) {
            /* nothing, or "." */
        } else if (k == 2 && p[0] == '.' && p[1] == '.') {
            while (len > 0 && out[len - 1] != '/') len--;
            if (len > 0) len--; /* the slash before the dropped component */
        } else {
            out[len++] = '/';
            memcpy(out + len, p, k);
            len += k;
        }
        p = end;
    }
    if (len == 0) out[len++] = '/';
    out[len] = '\0';
    return out;
}

const char *plc_path_absolute(plc_arena *a, const char *dir, const char *path)
{
    if (path[0] == '/') return plc_path_normalise(a, path);
    const char *base = dir && dir[0] ? dir : ".";
    if (base[0] != '/') {
        char cwd[PATH_BUF];
        if (!getcwd(cwd, sizeof cwd)) return NULL;
        base = plc_arena_printf(a, "%s/%s", cwd, base);
    }
    return plc_path_normalise(a, plc_arena_printf(a, "%s/%s", base, path));
}

const char *plc_path_relative(plc_arena *a, const char *from, const char *to)
{
    /* the longest common run of whole components */
    size_t common = 0;
    for (size_t i = 0;; i++) {
        bool from_end = from[i] == '\0' || from[i] == '/', to_end = to[i] == '\0' || to[i] == '/';
        if (from_end && to_end) common = i;
        if (from[i] != to[i] || from[i] == '\0') break;
    }
    const char *up = from + common, *down = to + common;
    size_t ups = 0; /* the components of from past the common part */
    for (const char *p = up; *p; p++)
        if (*p == '/' && p[1]) ups++;
    if (*down == '/') down++;
    char *out = plc_arena_alloc(a, 3 * ups + strlen(down) + 2);
    size_t len = 0;
    for (size_t i = 0; i < ups; i++) {
        memcpy(out + len, "../", 3);
        len += 3;
    }
    size_t k = strlen(down);
    memcpy(out + len, down, k);
    len += k;
    if (len == 0) out[len++] = '.';
    else if (out[len - 1] == '/') len--; /* "../" alone */
    out[len] = '\0';
    return out;
}

const char *plc_path_base(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* the places the built-in data is looked for, relative to the directory of
 * the running program: installed (PREFIX/bin -> PREFIX/share/plc), then the
 * source tree's examples/ for its bin/ */
static const char *const builtin_places[] = {"../share/plc", PLC_TREE_DATADIR};

const char *plc_builtin_data(plc_arena *a, const char *name, const char **tried)
{
    char exe[PATH_BUF];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0 || (size_t)n >= sizeof exe - 1) {
        *tried = "nothing: the running program's own path is unknown (/proc/self/exe)";
        return NULL;
    }
    exe[n] = '\0';
    const char *slash = strrchr(exe, '/');
    const char *dir = slash && slash != exe ? plc_arena_strndup(a, exe, (size_t)(slash - exe)) : "/";
    const char *list = "";
    for (size_t i = 0; i < sizeof builtin_places / sizeof builtin_places[0]; i++) {
        const char *path = plc_path_absolute(a, dir, plc_arena_printf(a, "%s/%s", builtin_places[i], name));
        if (access(path, R_OK) == 0) return path;
        list = plc_arena_printf(a, "%s%s%s", list, i ? ", " : "", path);
    }
    *tried = list;
    return NULL;
}

const char *plc_builtin_catalog(plc_arena *a, const char **tried) { return plc_builtin_data(a, "catalog.yaml", tried); }

const char *plc_engines_find(plc_arena *a, const char *catalog, const char **tried)
{
    const char *env = getenv("PLC_ENGINES");
    if (env && env[0]) return env;
    const char *beside = NULL;
    if (catalog && catalog[0]) {
        const char *slash = strrchr(catalog, '/');
        const char *dir = slash ? plc_arena_strndup(a, catalog, (size_t)(slash - catalog + 1)) : "";
        beside = plc_arena_printf(a, "%sengines.yaml", dir);
        if (access(beside, R_OK) == 0) return beside;
    }
    const char *builtin_tried;
    const char *path = plc_builtin_data(a, "engines.yaml", &builtin_tried);
    if (path) return path;
    *tried = beside ? plc_arena_printf(a, "%s (beside the catalog), %s", beside, builtin_tried) : builtin_tried;
    return NULL;
}

int plc_file_crc32(const char *path, uint32_t *crc)
{
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    unsigned char buf[1 << 14];
    uint32_t c = 0;
    size_t got;
    while ((got = fread(buf, 1, sizeof buf, f)) > 0) c = plc_crc32(c, buf, got);
    int bad = ferror(f);
    fclose(f);
    if (bad) return -1;
    *crc = c;
    return 0;
}
