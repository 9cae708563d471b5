/* fuzz_spec.c: libFuzzer harness of the .plan front end. The input is a spec:
 * scanner, parser, resolution against the catalog and the semantic checks
 * run exactly as `plc check` runs them, with diagnostics (source line,
 * caret, escaped bytes) formatted into /dev/null. A crash, a sanitizer
 * report or a leak is a bug; any number of diagnostics is fine. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "compiler/frontend/frontend.h"
#include "plc/arena.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static FILE *sink;
    if (!sink) sink = fopen("/dev/null", "w");
    plc_arena a;
    plc_arena_init(&a);
    plc_diag d;
    plc_diag_init(&d, sink, 0);
    plc_source *src = plc_source_from_text(&a, "fuzz.plan", (const char *)data, size);
    int syntax_errors = 0;
    plc_ast *ast = plc_parse_source(&a, &d, src, &syntax_errors);
    if (ast && !syntax_errors) {
        plc_resolve_opts ro = {NULL, "", false};
        plc_job job;
        memset(&job, 0, sizeof job);
        plc_resolve(&a, &d, ast, &ro, &job);
    }
    plc_arena_free(&a);
    return 0;
}
