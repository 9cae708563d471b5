/* crc32.h: CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320), the
 * checksum of every plan section. */
#ifndef PLC_CRC32_H
#define PLC_CRC32_H

#include <stddef.h>
#include <stdint.h>

/* crc of data[0..len); pass 0 to start, or a previous result to continue */
uint32_t plc_crc32(uint32_t crc, const void *data, size_t len);

#endif
