/* Half-precision to float32: IEEE binary16 (safetensors "F16") and bfloat16 ("BF16").
 * Exact for every input, including subnormals, infinities and NaNs (NaN payloads kept).
 * Sources may be unaligned (they point into a mapped file), so they are read bytewise. */
#ifndef ATN_FP16_H
#define ATN_FP16_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline float atn_f32_from_bits(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* binary16: 1 sign, 5 exponent (bias 15), 10 mantissa bits. */
static inline float atn_f16_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t man = h & 0x3ffu;
    uint32_t bits;
    if (exp == 0x1f) {
        bits = sign | 0x7f800000u | (man << 13);           /* inf / NaN */
    } else if (exp != 0) {
        bits = sign | ((exp + 112u) << 23) | (man << 13);  /* normal: rebias 15 -> 127 */
    } else {
        /* zero or subnormal: man * 2^-24 is exact in float32 */
        float f = (float)man * 5.9604644775390625e-8f;
        uint32_t u;
        memcpy(&u, &f, sizeof u);
        bits = sign | u;
    }
    return atn_f32_from_bits(bits);
}

/* bfloat16 is the top half of a float32. */
static inline float atn_bf16_to_f32(uint16_t h) {
    return atn_f32_from_bits((uint32_t)h << 16);
}

/* Converts count little-endian halves at src (any alignment) into dst. */
static inline void atn_f16_to_f32_array(float *dst, const void *src, size_t count) {
    const uint8_t *s = src;
    for (size_t i = 0; i < count; i++)
        dst[i] = atn_f16_to_f32((uint16_t)(s[2 * i] | s[2 * i + 1] << 8));
}

static inline void atn_bf16_to_f32_array(float *dst, const void *src, size_t count) {
    const uint8_t *s = src;
    for (size_t i = 0; i < count; i++)
        dst[i] = atn_bf16_to_f32((uint16_t)(s[2 * i] | s[2 * i + 1] << 8));
}

#endif
