/* The counter-based generator of the random models (engine/core/random-model.c,
 * random-decoder.c): splitmix64's mixer over seed, tensor and element index, so that any
 * tool can recompute any element (bench/peer_torch.py does, in NumPy). */
#ifndef ATN_RANDOM_FILL_H
#define ATN_RANDOM_FILL_H

#include <stddef.h>
#include <stdint.h>

static inline uint64_t atn_random_mix64(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Fills count floats of tensor number t: center + scale * (2u - 1), u uniform in [0, 1)
 * from the top 24 bits of mix64(seed * golden + (t << 40) + index).  Returns p + count. */
static inline float *atn_random_fill(float *p, size_t count, uint64_t seed, uint64_t t, float center, float scale) {
    uint64_t base = seed * 0x9E3779B97F4A7C15ull + (t << 40);
    for (size_t i = 0; i < count; i++) {
        float u = (float)(atn_random_mix64(base + i) >> 40) * (1.0f / 16777216.0f);
        p[i] = center + scale * (2.0f * u - 1.0f);
    }
    return p + count;
}

#endif
