/* plan_fold.h: folding of repeated plan records into loops (the writer) and
 * the name rule both writer and loader share. docs/plan-format.md describes
 * the records.
 *
 * A table (a program's buffers or instructions) is a list of rows of nfields
 * integers. A loop repeats a body of rows count times; each row of the body
 * carries a stride per field, added once per iteration, so iteration k of
 * the row is base + k * stride (wrapping 64-bit arithmetic). Loops nest: a
 * row inside several loops adds each enclosing loop's stride times that
 * loop's iteration. plc_fold_rows finds such loops in a finished table and
 * checks that expanding them gives the table back exactly; the lowering is
 * not involved. */
#ifndef PLC_PLAN_FOLD_H
#define PLC_PLAN_FOLD_H

#include <stddef.h>
#include <stdint.h>

#define PLC_FOLD_MAX_DEPTH 6   /* loops nested at most this deep */
#define PLC_FOLD_MAX_FIELDS 32 /* a stride mask is a u32 */
#define PLC_NAME_TOKENS 4      /* numbers in a buffer name that may stride */

typedef struct plc_fold_node {
    uint32_t loop;   /* 1: a loop header, followed by nitems items */
    uint32_t count;  /* loop: iterations, >= 2 */
    uint32_t nitems; /* loop: items of its body (a loop counts as one) */
    uint32_t row;    /* leaf: its row in the first iteration */
    uint32_t depth;  /* leaf: number of enclosing loops */
    const int64_t *stride[PLC_FOLD_MAX_DEPTH]; /* leaf: nfields strides per enclosing loop, outermost first */
} plc_fold_node;

typedef struct plc_fold_tree {
    plc_fold_node *nodes; /* preorder; the top level is a list of items */
    size_t n, cap;
    uint32_t top;         /* items at the top level */
    int64_t **pools;      /* stride arrays, one per loop */
    size_t npools, pcap;
    int oom;
} plc_fold_tree;

/* Folds rows v[nrows][nfields]. Rows i and j may be iterations of one
 * another only when cls[i] == cls[j] (fields that never stride, and for
 * buffers the name with its numbers taken out); key2 offers further
 * candidate periods (rows with the same layer). 0, or -1 on out of memory;
 * the result is checked against the rows (a failed check is -1 too). */
int plc_fold_rows(const int64_t *v, const uint64_t *cls, const uint64_t *key2, uint32_t nrows, uint32_t nfields,
                  plc_fold_tree *out);
void plc_fold_free(plc_fold_tree *t);

/* The numbers of a buffer name: its maximal runs of decimal digits, when
 * there are at most PLC_NAME_TOKENS of them and each is canonical (no
 * leading zero unless it is "0", at most 15 digits); otherwise none.
 * Returns the count and fills value, start and length of each. */
int plc_name_tokens(const char *s, size_t len, int64_t value[PLC_NAME_TOKENS], size_t start[PLC_NAME_TOKENS],
                    size_t tlen[PLC_NAME_TOKENS]);

/* FNV-1a of s with its numeric tokens left out (a name's class). */
uint64_t plc_name_class(const char *s, size_t len);

#endif
