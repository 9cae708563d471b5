/* plc/status.h: what an operation came to, as a value. Libraries return a
 * plc_status next to their message and neither print nor exit; commands
 * map it to the documented exit code with plc_status_exit. No caller
 * decides anything by reading message text. */
#ifndef PLC_STATUS_H
#define PLC_STATUS_H

typedef enum plc_status {
    PLC_OK = 0,
    PLC_E_INPUT,     /* the user's input is wrong: spec, layout, options, files named */
    PLC_E_NO_LAYOUT, /* no layout fits, or the one asked for does not */
    PLC_E_DEADLOCK,  /* a plan whose ranks cannot all finish a step */
    PLC_E_INTERNAL,  /* a bug caught by a check */
    PLC_E_SYSTEM,    /* the system failed: out of memory, an I/O error */
    PLC_STATUS_COUNT
} plc_status;

/* The exit codes of plc and plrun (README): 0 ok, 1 input or usage error
 * (a file that cannot be read or written is the user's to fix), 2 no layout
 * or does not fit, 3 internal errors only (a deadlocked plan is a compiler
 * bug). */
static inline int plc_status_exit(plc_status s)
{
    switch (s) {
    case PLC_OK: return 0;
    case PLC_E_INPUT: case PLC_E_SYSTEM: return 1;
    case PLC_E_NO_LAYOUT: return 2;
    case PLC_E_DEADLOCK: case PLC_E_INTERNAL: default: return 3;
    }
}

#endif
