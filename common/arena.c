/* arena.c: bump allocation in blocks that grow; one free releases all; the
 * out-of-memory trap (arena.h).
 * Blocks of many megabytes (an expanded plan's instruction table) ask Linux
 * for huge pages: their first touch then costs a few faults, not one per
 * 4 KiB page. */
#if defined(__linux__) && !defined(_DEFAULT_SOURCE)
#define _DEFAULT_SOURCE /* madvise */
#endif
#include "plc/arena.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

struct plc_arena_owned {
    plc_arena_owned *next;
    void *p;
};

struct plc_arena_block {
    plc_arena_block *next;
    size_t used, cap;
    _Alignas(16) unsigned char data[];
};

enum { ARENA_MIN_BLOCK = 64 * 1024, HUGE_PAGE = 2 * 1024 * 1024 };

/* a hint only: where huge pages are off or unknown nothing changes */
static void advise_huge(void *p, size_t n)
{
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (n < 4 * (size_t)HUGE_PAGE) return;
    uintptr_t lo = ((uintptr_t)p + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1);
    uintptr_t hi = ((uintptr_t)p + n) & ~(uintptr_t)(HUGE_PAGE - 1);
    if (hi > lo) (void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
#else
    (void)p;
    (void)n;
#endif
}

static plc_oom_trap *trap;
static const char *doing;

void plc_oom_set_trap(plc_oom_trap *t) { trap = t; }
void plc_oom_doing(const char *what) { doing = what; }

_Noreturn void plc_oom_raise(size_t bytes)
{
    if (!trap) abort(); /* no command to tell: the library does not print */
    plc_oom_trap *t = trap;
    trap = NULL; /* a failure while reporting it must not jump back here */
    t->bytes = bytes;
    t->doing = doing ? doing : "starting";
    longjmp(t->at, 1);
}

void plc_arena_init(plc_arena *a)
{
    a->head = NULL;
    a->owned = NULL;
    a->total = 0;
}

void plc_arena_free(plc_arena *a)
{
    for (plc_arena_owned *o = a->owned; o; o = o->next) free(o->p); /* the list itself is in the blocks */
    a->owned = NULL;
    plc_arena_block *b = a->head;
    while (b) {
        plc_arena_block *next = b->next;
        free(b);
        b = next;
    }
    a->head = NULL;
    a->total = 0;
}

void *plc_arena_alloc(plc_arena *a, size_t size)
{
    size_t need = (size + 15) & ~(size_t)15;
    if (need < size || size > SIZE_MAX - sizeof(plc_arena_block)) plc_oom_raise(size);
    plc_arena_block *b = a->head;
    if (!b || b->cap - b->used < need) {
        size_t cap = need > ARENA_MIN_BLOCK ? need : ARENA_MIN_BLOCK;
        if (b && b->cap * 2 > cap && b->cap < (SIZE_MAX / 4)) cap = b->cap * 2;
        b = malloc(sizeof(*b) + cap);
        if (!b) plc_oom_raise(sizeof(*b) + cap); /* not a bug: more than the machine has */
        b->next = a->head;
        b->used = 0;
        b->cap = cap;
        a->head = b;
        advise_huge(b->data, cap);
    }
    void *p = b->data + b->used;
    b->used += need;
    a->total += need;
    memset(p, 0, need);
    return p;
}

void plc_arena_adopt(plc_arena *a, void *p)
{
    if (!p) return;
    plc_arena_owned *o = plc_arena_alloc(a, sizeof *o);
    o->p = p;
    o->next = a->owned;
    a->owned = o;
}

char *plc_arena_strndup(plc_arena *a, const char *s, size_t n)
{
    char *p = plc_arena_alloc(a, n + 1);
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

char *plc_arena_strdup(plc_arena *a, const char *s) { return plc_arena_strndup(a, s, strlen(s)); }

char *plc_arena_printf(plc_arena *a, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) return plc_arena_strdup(a, "");
    char *p = plc_arena_alloc(a, (size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(p, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return p;
}
