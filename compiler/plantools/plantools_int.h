/* compiler/plantools/plantools_int.h: the plantools stage's internal interface, for its own files
 * (and unit tests): the public header plus what only the stage uses. */
#ifndef PLC_COMPILER_PLANTOOLS_INT_H
#define PLC_COMPILER_PLANTOOLS_INT_H

#include "compiler/plantools/plantools.h"

#endif
