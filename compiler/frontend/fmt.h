/* fmt.h: the canonical form of a .plan file (plc fmt).
 *
 * Blocks in the order model, cluster, train, layout (unknown blocks after, as
 * written); keys in the order of spec_keys.c (unknown keys after, as
 * written); one pair per line, two-space indent, '=' aligned within a block;
 * sets and ranges written with `in`; multipliers attached (4M), units after
 * one space (80 GiB) except % (80%), unit spellings canonical (Gb/s ->
 * Gbit/s); numbers and names kept as written. Comments are kept: a comment on
 * its own line stays above the pair or block that follows it, a comment at
 * the end of a line stays at the end of that pair's line (aligned within the
 * block). One blank line between blocks, and above a commented pair. */
#ifndef PLC_FMT_H
#define PLC_FMT_H

#include <stddef.h>

#include "compiler/frontend/ast.h"

/* the canonical text of ast (which must have parsed without errors) */
char *plc_fmt(plc_arena *a, plc_ast *ast, size_t *len);

#endif
