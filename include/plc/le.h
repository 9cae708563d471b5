/* plc/le.h: little-endian integers in byte buffers, the byte order of every
 * file plc and plrun write (plan files, token files, safetensors). Written
 * byte by byte so they work on any host byte order and any alignment. */
#ifndef PLC_LE_H
#define PLC_LE_H

#include <stdint.h>

static inline uint32_t plc_get_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t plc_get_le64(const uint8_t *p)
{
    return (uint64_t)plc_get_le32(p) | (uint64_t)plc_get_le32(p + 4) << 32;
}

static inline void plc_put_le32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static inline void plc_put_le64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}

#endif
