/* plc/arena.h: a bump allocator. The compiler allocates everything that
 * lives as long as one command from an arena and frees it in one call. */
#ifndef PLC_ARENA_H
#define PLC_ARENA_H

#include <setjmp.h>
#include <stddef.h>

typedef struct plc_arena_block plc_arena_block;

typedef struct plc_arena_owned plc_arena_owned;

typedef struct plc_arena {
    plc_arena_block *head;
    plc_arena_owned *owned; /* malloc'd tables handed to the arena (plc_arena_adopt) */
    size_t total;           /* bytes handed out, for statistics */
} plc_arena;

void plc_arena_init(plc_arena *a);
void plc_arena_free(plc_arena *a);
/* zeroed, 16-byte aligned; when the system is out of memory, raises
 * PLC_E_SYSTEM to the command's trap (below) */
void *plc_arena_alloc(plc_arena *a, size_t size);
char *plc_arena_strdup(plc_arena *a, const char *s);
char *plc_arena_strndup(plc_arena *a, const char *s, size_t n);
char *plc_arena_printf(plc_arena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* p (from malloc or realloc; NULL is ignored) is freed with the arena: a
 * table grown in place becomes the arena's without a copy */
void plc_arena_adopt(plc_arena *a, void *p);

/* Out of memory. An allocation the system refuses (an arena block, or
 * another growing table of the compiler) is an outcome, PLC_E_SYSTEM
 * (plc/status.h), that no library prints or exits on: the command (plc's and
 * plrun's main) sets a trap before it starts, names what it is doing as it
 * goes, and on plc_oom_raise regains control at the trap, as Lua's
 * LUA_ERRMEM does, to report "out of memory while <doing>" with exit 1.
 * Without a trap the process aborts. One trap per process: the compiler
 * and the runtime allocate from one thread. */
typedef struct plc_oom_trap {
    jmp_buf at;         /* setjmp(trap.at) returns PLC_E_SYSTEM after a failure */
    size_t bytes;       /* the allocation that failed */
    const char *doing;  /* what the command was doing ("lowering the plan") */
} plc_oom_trap;
void plc_oom_set_trap(plc_oom_trap *t);   /* NULL: none */
void plc_oom_doing(const char *what);     /* a static string, for the message */
_Noreturn void plc_oom_raise(size_t bytes);

#define PLC_NEW(a, type) ((type *)plc_arena_alloc((a), sizeof(type)))
#define PLC_NEW_ARRAY(a, type, n) ((type *)plc_arena_alloc((a), sizeof(type) * (size_t)(n)))

#endif
