/* A float32's bits and back: the one bit cast the engine's float code uses (rounding to
 * bf16/fp16, half-precision decoding, the tanh/GELU sign and exponent tricks).  memcpy,
 * not a union or a pointer cast, so no aliasing rule is broken; compilers turn it into a
 * register move.  Engine-internal (not in engine/include). */
#ifndef ATN_BITS_H
#define ATN_BITS_H

#include <stdint.h>
#include <string.h>

static inline uint32_t atn_f32_bits(float x) {
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

static inline float atn_f32_from_bits(uint32_t u) {
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

#endif
