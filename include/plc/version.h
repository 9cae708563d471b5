#ifndef PLC_VERSION_H
#define PLC_VERSION_H
#define PLC_VERSION "0.1.0"
#endif
