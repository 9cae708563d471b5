/* yaml_reader.c: the event reader of the front end's YAML files (catalog.c,
 * engines.c): libyaml events with their place in the file for diagnostics,
 * and the one walk over such a file's top-level mapping of named entries. */
#include "compiler/frontend/frontend_int.h"

/* byte offset of a libyaml mark (line and column are 0-based). Marks mostly
 * move forward, so the search starts at the last line found: linear overall. */
static size_t mark_offset(plc_yaml_reader *r, yaml_mark_t m)
{
    const plc_source *src = r->src;
    if (m.line < r->line) { r->line = 0; r->line_start = 0; }
    size_t off = r->line_start;
    for (size_t line = r->line; line < m.line && off < src->len; off++)
        if (src->text[off] == '\n') {
            line++;
            r->line = line;
            r->line_start = off + 1;
        }
    off = r->line_start;
    for (size_t col = 0; col < m.column && off < src->len && src->text[off] != '\n'; col++) off++;
    return off;
}

/* the location of [b, e) on the line that starts at line_start (0-based line) */
plc_loc plc_yr_line_loc(const plc_yaml_reader *r, size_t line, size_t line_start, size_t b, size_t e)
{
    size_t le = b;
    while (le < r->src->len && r->src->text[le] != '\n') le++;
    if (e > le) e = le > b ? le : b + 1;
    plc_loc l = {(int)line + 1, (int)(b - line_start) + 1, (int)line + 1, (int)(e - line_start) + 1, b, e, r->src};
    return l;
}

plc_loc plc_yr_event_loc(plc_yaml_reader *r)
{
    size_t b = mark_offset(r, r->ev.start_mark);
    size_t line = r->line, ls = r->line_start;
    size_t e = mark_offset(r, r->ev.end_mark);
    return plc_yr_line_loc(r, line, ls, b, e > b ? e : b + 1);
}

bool plc_yr_next(plc_yaml_reader *r)
{
    if (r->have_event) yaml_event_delete(&r->ev);
    r->have_event = false;
    if (r->failed) return false;
    if (!yaml_parser_parse(&r->parser, &r->ev)) {
        r->failed = true;
        size_t off = mark_offset(r, r->parser.problem_mark);
        plc_diag_error(r->d, plc_yr_line_loc(r, r->line, r->line_start, off, off + 1), "YAML: %s%s%s",
                       r->parser.problem ? r->parser.problem : "syntax error",
                       r->parser.context ? " " : "", r->parser.context ? r->parser.context : "");
        return false;
    }
    r->have_event = true;
    if (r->ev.type == YAML_NO_EVENT) {
        r->failed = true;
        return false;
    }
    return true;
}

const char *plc_yr_scalar(const plc_yaml_reader *r)
{
    return (const char *)r->ev.data.scalar.value;
}

/* skips the value that starts at the current event (for error recovery) */
bool plc_yr_skip(plc_yaml_reader *r)
{
    int depth = 0;
    do {
        yaml_event_type_t t = r->ev.type;
        if (t == YAML_MAPPING_START_EVENT || t == YAML_SEQUENCE_START_EVENT) depth++;
        if (t == YAML_MAPPING_END_EVENT || t == YAML_SEQUENCE_END_EVENT) depth--;
        if (depth == 0) return true;
    } while (plc_yr_next(r));
    return false;
}


/* the top mapping's keys, each handed to top->entry at its value */
static void read_top(plc_yaml_reader *r, const plc_yr_top *top)
{
    /* stream start, document start, then the top mapping */
    if (!plc_yr_next(r) || r->ev.type != YAML_STREAM_START_EVENT) return;
    if (!plc_yr_next(r)) return;
    if (r->ev.type != YAML_DOCUMENT_START_EVENT) {
        plc_diag_error_file(r->d, r->src, "the %s is empty", top->file);
        return;
    }
    if (!plc_yr_next(r)) return;
    if (r->ev.type != YAML_MAPPING_START_EVENT) {
        plc_diag_error(r->d, plc_yr_event_loc(r), "expected a mapping of %s", top->mapping);
        return;
    }
    for (;;) {
        if (!plc_yr_next(r)) return;
        if (r->ev.type == YAML_MAPPING_END_EVENT) break;
        plc_loc name_loc = plc_yr_event_loc(r);
        if (r->ev.type != YAML_SCALAR_EVENT) {
            plc_diag_error(r->d, name_loc, "expected %s", top->name);
            if (!plc_yr_skip(r) || !plc_yr_next(r) || !plc_yr_skip(r)) return;
            continue;
        }
        const char *name = plc_arena_strdup(r->a, plc_yr_scalar(r)); /* outlives the event */
        if (!plc_yr_next(r)) return;
        if (!top->entry(r, name, name_loc, top->ctx)) return;
    }
}

int plc_yr_read_top(plc_arena *a, plc_diag *d, const plc_source *src, const plc_yr_top *top)
{
    int before = d->errors;
    plc_yaml_reader r = {.a = a, .d = d, .src = src};
    if (!yaml_parser_initialize(&r.parser)) {
        plc_diag_error_noloc(d, "cannot initialise the YAML parser");
        return 1;
    }
    yaml_parser_set_input_string(&r.parser, (const unsigned char *)src->text, src->len);
    read_top(&r, top);
    if (r.have_event) yaml_event_delete(&r.ev);
    yaml_parser_delete(&r.parser);
    return d->errors - before;
}
