/* yaml_out.h: the one YAML writer of plc's --format yaml outputs (solve,
 * explain, scale, compile, diff), over the libyaml emitter. Block style,
 * keys in the order written, strings double-quoted, numbers plain.
 *
 * Usage: plc_yaml_begin opens a document whose top level is a mapping; the
 * key argument of each call names the entry in the enclosing mapping, or is
 * NULL inside a sequence. A failed emitter stays failed; plc_yaml_end reports
 * it once. The header every document starts with (plc_version, ...) is
 * written by plc_yaml_begin. */
#ifndef PLC_YAML_OUT_H
#define PLC_YAML_OUT_H

#include <stdbool.h>
#include <stdio.h>
#include <yaml.h>

typedef struct plc_yaml {
    yaml_emitter_t e;
    bool failed;
} plc_yaml;

/* starts the document and its top mapping with `plc_version` and `command` */
int plc_yaml_begin(plc_yaml *y, FILE *out, const char *command);
/* closes everything; 0, or -1 after a message on stderr */
int plc_yaml_end(plc_yaml *y);

void plc_yaml_str(plc_yaml *y, const char *key, const char *v);
void plc_yaml_int(plc_yaml *y, const char *key, long long v);
void plc_yaml_num(plc_yaml *y, const char *key, double v); /* %.6g; whole numbers below 2^53 exactly */
void plc_yaml_bool(plc_yaml *y, const char *key, bool v);
void plc_yaml_map(plc_yaml *y, const char *key);
void plc_yaml_map_end(plc_yaml *y);
void plc_yaml_seq(plc_yaml *y, const char *key);
void plc_yaml_seq_end(plc_yaml *y);

#endif
