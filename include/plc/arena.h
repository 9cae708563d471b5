/* plc/arena.h: a bump allocator. The compiler allocates everything that
 * lives as long as one command from an arena and frees it in one call. */
#ifndef PLC_ARENA_H
#define PLC_ARENA_H

#include <stddef.h>

typedef struct plc_arena_block plc_arena_block;

typedef struct plc_arena {
    plc_arena_block *head;
    size_t total; /* bytes handed out, for statistics */
} plc_arena;

void plc_arena_init(plc_arena *a);
void plc_arena_free(plc_arena *a);
/* zeroed, 16-byte aligned; aborts with a message when the system is out of memory */
void *plc_arena_alloc(plc_arena *a, size_t size);
char *plc_arena_strdup(plc_arena *a, const char *s);
char *plc_arena_strndup(plc_arena *a, const char *s, size_t n);
char *plc_arena_printf(plc_arena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define PLC_NEW(a, type) ((type *)plc_arena_alloc((a), sizeof(type)))
#define PLC_NEW_ARRAY(a, type, n) ((type *)plc_arena_alloc((a), sizeof(type) * (size_t)(n)))

#endif
