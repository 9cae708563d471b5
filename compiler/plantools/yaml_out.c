/* yaml_out.c: plc's YAML writer (see plantools.h). */
#include "compiler/plantools/plantools_int.h"

#include <math.h>
#include <string.h>

#include "plc/version.h"

static void emit(plc_yaml *y, yaml_event_t *ev)
{
    if (y->failed) { yaml_event_delete(ev); return; }
    if (!yaml_emitter_emit(&y->e, ev)) y->failed = true;
}

static void scalar(plc_yaml *y, const char *text, bool plain)
{
    yaml_event_t ev;
    yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)text, (int)strlen(text), plain, !plain,
                                 plain ? YAML_PLAIN_SCALAR_STYLE : YAML_DOUBLE_QUOTED_SCALAR_STYLE);
    emit(y, &ev);
}

static void key(plc_yaml *y, const char *k)
{
    if (k) scalar(y, k, true);
}

static int write_handler(void *data, unsigned char *buffer, size_t size)
{
    return fwrite(buffer, 1, size, (FILE *)data) == size;
}

int plc_yaml_begin(plc_yaml *y, FILE *out, const char *command)
{
    memset(y, 0, sizeof *y);
    if (!yaml_emitter_initialize(&y->e)) {
        fprintf(stderr, "plc: error: cannot start the YAML emitter\n");
        y->failed = true;
        return -1;
    }
    yaml_emitter_set_output(&y->e, write_handler, out);
    yaml_emitter_set_unicode(&y->e, 1);
    yaml_emitter_set_width(&y->e, -1);
    yaml_event_t ev;
    yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING);
    emit(y, &ev);
    yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 0);
    emit(y, &ev);
    plc_yaml_map(y, NULL);
    plc_yaml_str(y, "plc_version", PLC_VERSION);
    plc_yaml_str(y, "command", command);
    return 0;
}

int plc_yaml_end(plc_yaml *y)
{
    plc_yaml_map_end(y);
    yaml_event_t ev;
    yaml_document_end_event_initialize(&ev, 1);
    emit(y, &ev);
    yaml_stream_end_event_initialize(&ev);
    emit(y, &ev);
    int rc = 0;
    if (y->failed) {
        fprintf(stderr, "plc: error: YAML output failed: %s\n", y->e.problem ? y->e.problem : "write error");
        rc = -1;
    }
    yaml_emitter_delete(&y->e);
    return rc;
}

void plc_yaml_str(plc_yaml *y, const char *k, const char *v)
{
    key(y, k);
    scalar(y, v ? v : "", false);
}

void plc_yaml_int(plc_yaml *y, const char *k, long long v)
{
    char b[32];
    snprintf(b, sizeof b, "%lld", v);
    key(y, k);
    scalar(y, b, true);
}

void plc_yaml_num(plc_yaml *y, const char *k, double v)
{
    char b[64];
    if (v == floor(v) && fabs(v) < 9007199254740992.0) snprintf(b, sizeof b, "%.0f", v);
    else snprintf(b, sizeof b, "%.6g", v);
    key(y, k);
    scalar(y, b, true);
}

void plc_yaml_bool(plc_yaml *y, const char *k, bool v)
{
    key(y, k);
    scalar(y, v ? "true" : "false", true);
}

/* a block mapping or sequence under key k, and its end */
static void block_start(plc_yaml *y, const char *k, bool seq)
{
    key(y, k);
    yaml_event_t ev;
    if (seq) yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_SEQUENCE_STYLE);
    else yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_MAPPING_STYLE);
    emit(y, &ev);
}

static void block_end(plc_yaml *y, bool seq)
{
    yaml_event_t ev;
    if (seq) yaml_sequence_end_event_initialize(&ev);
    else yaml_mapping_end_event_initialize(&ev);
    emit(y, &ev);
}

void plc_yaml_map(plc_yaml *y, const char *k) { block_start(y, k, false); }
void plc_yaml_map_end(plc_yaml *y) { block_end(y, false); }
void plc_yaml_seq(plc_yaml *y, const char *k) { block_start(y, k, true); }
void plc_yaml_seq_end(plc_yaml *y) { block_end(y, true); }
