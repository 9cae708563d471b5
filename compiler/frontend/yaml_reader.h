/* yaml_reader.h: a libyaml event reader that knows where each event is in
 * the file, so that errors in the catalog and the engine profiles are
 * reported as FILE:LINE:COL like spec errors. One event at a time: r->ev is
 * the current one; plc_yr_next reports a YAML syntax error once and then
 * stays failed. */
#ifndef PLC_YAML_READER_H
#define PLC_YAML_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <yaml.h>

#include "compiler/frontend/diag.h"
#include "plc/arena.h"

typedef struct plc_yaml_reader {
    plc_arena *a;
    plc_diag *d;
    const plc_source *src;
    yaml_parser_t parser;
    yaml_event_t ev;
    bool have_event;
    bool failed; /* a YAML error was reported: libyaml then hands out empty events */
    size_t line_start, line; /* a line start seen last: marks are found from there */
} plc_yaml_reader;

/* the location of [b, e) on the line that starts at line_start (0-based line) */
plc_loc plc_yr_line_loc(const plc_yaml_reader *r, size_t line, size_t line_start, size_t b, size_t e);
/* the current event's location */
plc_loc plc_yr_event_loc(plc_yaml_reader *r);
/* the next event; false at a (reported) syntax error or the end */
bool plc_yr_next(plc_yaml_reader *r);
/* the current scalar event's text */
const char *plc_yr_scalar(const plc_yaml_reader *r);
/* skips the node that starts at the current event (error recovery) */
bool plc_yr_skip(plc_yaml_reader *r);

#endif
