/* TEMPORARY placeholder so the driver links while the command is written. */
#include <stdio.h>
#include "compiler/commands.h"
int plc_cmd_scale(int argc, char **argv)
{
    (void)argc; (void)argv;
    fprintf(stderr, "plc: error: 'scale' is not built yet\n");
    return PLC_EXIT_INTERNAL;
}
