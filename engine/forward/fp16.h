/* Half-precision to float32: IEEE binary16 (safetensors "F16") and bfloat16 ("BF16").
 * Exact for every input, including subnormals, infinities and NaNs (NaN payloads kept).
 * Sources may be unaligned (they point into a mapped file), so they are read bytewise. */
#ifndef ATN_FP16_H
#define ATN_FP16_H

#include "core/bits.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* binary16: 1 sign, 5 exponent (bias 15), 10 mantissa bits.  Written without branches so
 * the array loop below vectorises; no arithmetic on float32 subnormals (slow on x86, and
 * wrong under flush-to-zero). */
static inline float atn_f16_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t em = h & 0x7fffu;
    uint32_t normal = (em << 13) + (112u << 23);        /* rebias the exponent 15 -> 127 */
    float sub = (float)em * 5.9604644775390625e-8f;     /* zero/subnormal: man * 2^-24, exact */
    uint32_t sub_bits = atn_f32_bits(sub);
    uint32_t special = (em << 13) | 0x7f800000u;        /* inf / NaN, payload kept */
    uint32_t is_sub = 0u - (uint32_t)(em < 0x0400u), is_special = 0u - (uint32_t)(em >= 0x7c00u);
    uint32_t bits = (sub_bits & is_sub) | (special & is_special) |
                    (normal & ~(is_sub | is_special));
    return atn_f32_from_bits(sign | bits);
}

/* bfloat16 is the top half of a float32. */
static inline float atn_bf16_to_f32(uint16_t h) {
    return atn_f32_from_bits((uint32_t)h << 16);
}

/* Converts count little-endian halves at src (any alignment) into dst. */
static inline void atn_f16_to_f32_array(float *dst, const void *src, size_t count) {
    const uint8_t *s = src;
    for (size_t i = 0; i < count; i++) {
        uint16_t h;
        memcpy(&h, s + 2 * i, sizeof h);   /* little-endian host (checked in safetensors.c) */
        dst[i] = atn_f16_to_f32(h);
    }
}

static inline void atn_bf16_to_f32_array(float *dst, const void *src, size_t count) {
    const uint8_t *s = src;
    for (size_t i = 0; i < count; i++) {
        uint16_t h;
        memcpy(&h, s + 2 * i, sizeof h);
        dst[i] = atn_bf16_to_f32(h);
    }
}

#endif
