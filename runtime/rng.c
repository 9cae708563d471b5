/* rng.c: Philox-4x32-10 and the draws built on it (see rng.h). */
#include "runtime/rng.h"

#include <math.h>

#define PHILOX_M0 0xD2511F53u
#define PHILOX_M1 0xCD9E8D57u
#define PHILOX_W0 0x9E3779B9u /* golden ratio */
#define PHILOX_W1 0xBB67AE85u /* sqrt(3) - 1 */

static void philox_round(uint32_t c[4], const uint32_t k[2])
{
    uint64_t p0 = (uint64_t)PHILOX_M0 * c[0];
    uint64_t p1 = (uint64_t)PHILOX_M1 * c[2];
    uint32_t hi0 = (uint32_t)(p0 >> 32), lo0 = (uint32_t)p0;
    uint32_t hi1 = (uint32_t)(p1 >> 32), lo1 = (uint32_t)p1;
    uint32_t n0 = hi1 ^ c[1] ^ k[0];
    uint32_t n2 = hi0 ^ c[3] ^ k[1];
    c[0] = n0;
    c[1] = lo1;
    c[2] = n2;
    c[3] = lo0;
}

void plc_philox4x32_10(const uint32_t counter[4], const uint32_t key[2], uint32_t out[4])
{
    uint32_t c[4] = {counter[0], counter[1], counter[2], counter[3]};
    uint32_t k[2] = {key[0], key[1]};
    for (int r = 0; r < 10; r++) {
        if (r > 0) { /* the key schedule bumps before rounds 2..10 */
            k[0] += PHILOX_W0;
            k[1] += PHILOX_W1;
        }
        philox_round(c, k);
    }
    for (int i = 0; i < 4; i++) out[i] = c[i];
}

void plc_rng_block(plc_rng_key k, uint64_t index, uint32_t out[4])
{
    const uint32_t counter[4] = {(uint32_t)index, (uint32_t)(index >> 32), k.stream, k.domain};
    const uint32_t key[2] = {(uint32_t)k.seed, (uint32_t)(k.seed >> 32)};
    plc_philox4x32_10(counter, key, out);
}

uint32_t plc_rng_u32(plc_rng_key k, uint64_t index)
{
    uint32_t b[4];
    plc_rng_block(k, index, b);
    return b[0];
}

double plc_rng_uniform(plc_rng_key k, uint64_t index)
{
    uint32_t b[4];
    plc_rng_block(k, index, b);
    uint64_t bits = (((uint64_t)b[0] << 32) | b[1]) >> 11;
    return (double)bits * 0x1p-53;
}

double plc_rng_normal(plc_rng_key k, uint64_t index)
{
    uint32_t b[4];
    plc_rng_block(k, index, b);
    /* u1 in (0, 1) so the logarithm is finite; u2 in [0, 1) */
    double u1 = ((double)b[0] + 0.5) * 0x1p-32;
    double u2 = (double)b[1] * 0x1p-32;
    return sqrt(-2.0 * log(u1)) * cos(2.0 * 3.14159265358979323846 * u2);
}
