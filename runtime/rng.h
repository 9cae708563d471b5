/* rng.h: a counter-based random number generator (Philox-4x32-10).
 *
 * There is no generator state: every draw is a pure function of a key and a
 * counter, so any rank can compute any element of any random stream without
 * having drawn the ones before it. That is what makes initialisation and the
 * synthetic data independent of the parallel layout.
 *
 * Philox-4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2,
 * 3", SC 2011) maps a 128-bit counter and a 64-bit key to 128 random bits.
 * plc uses it as follows (docs/data.md repeats this):
 *
 *   key     = (seed & 0xffffffff, seed >> 32)
 *   counter = (index & 0xffffffff, index >> 32, stream, domain)
 *
 * `domain` separates the uses of the generator (weight init, data order,
 * synthetic chain, synthetic samples) so they never share a counter;
 * `stream` is the tensor id, the sample number, ... as each use defines. */
#ifndef PLC_RNG_H
#define PLC_RNG_H

#include <stdint.h>

/* the uses of the generator; never renumber (it would change every model) */
enum {
    PLC_RNG_INIT = 0,         /* weights: stream = tensor id, index = element */
    PLC_RNG_DATA_ORDER = 1,   /* token-file sample order: stream = epoch */
    PLC_RNG_SYNTH_CHAIN = 2,  /* synthetic Markov chain construction */
    PLC_RNG_SYNTH_SAMPLE = 3, /* synthetic samples: stream = sample (low 32 bits) */
};

typedef struct plc_rng_key {
    uint64_t seed;
    uint32_t stream;
    uint32_t domain;
} plc_rng_key;

/* the raw bijection: out = Philox-4x32-10(counter, key) */
void plc_philox4x32_10(const uint32_t counter[4], const uint32_t key[2], uint32_t out[4]);

/* 128 random bits for draw `index` of stream k */
void plc_rng_block(plc_rng_key k, uint64_t index, uint32_t out[4]);

/* first 32 bits of the block */
uint32_t plc_rng_u32(plc_rng_key k, uint64_t index);

/* uniform on [0, 1) with 53 random bits */
double plc_rng_uniform(plc_rng_key k, uint64_t index);

/* standard normal by Box-Muller (cosine branch) from the block's 2 x 32-bit
 * words as two uniforms in (0, 1); computed in double */
double plc_rng_normal(plc_rng_key k, uint64_t index);

#endif
