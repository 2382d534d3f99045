/* tanh and the tanh-form GELU over arrays (activation.h).
 *
 * Why: glibc's tanhf (through __expm1f) is about four times erff, and took a fifth of an
 * ALBERT-shaped forward on the cblas path (perf, docs/PERFORMANCE.md).  Here tanh is
 * Cephes' tanhf scheme, written so that the AVX2 + FMA code (8 floats) and the scalar code
 * (one float, fmaf where the vector code fuses) run the same operations in the same order
 * and so give the same bits: a forward's numbers do not depend on which one the CPU takes.
 * Every product that feeds a sum is an explicit fma in both, so the compiler's contraction
 * (gnu11 allows it) has nothing left to fuse differently.
 *
 *   a = |x|
 *   a < 0.625: a + a·(a²·P(a²)), P of degree 4 (Cephes' minimax coefficients)
 *   else:      1 - q, q = 2/(e + 1), e = exp(2 min(a, 43)) = 2^k · Q(r), 2a = k ln2 + r,
 *              |r| <= ln2/2, Q Cephes' expf polynomial (k <= 124: no overflow)
 *   then the sign of x ORed in (tanh(-0) = -0), and x itself back when x is NaN.
 * The GELU 0.5 v (1 + tanh z) takes 1 + tanh(z) as q itself for z <= -0.625 rather than
 * 1 - (1 - q): the float formula loses the negative tail's relative accuracy there (1.3e-5
 * at v = -3 with an exact tanhf), this keeps it, as the AVX-512 kernels' x/(1 + exp(-2z)). */
#include "forward/activation.h"
#include "attnscope.h"
#include "core/bits.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define ATN_HAVE_AVX2_BUILD 1
#endif

/* tanh: the odd polynomial below SMALL */
#define SMALL 0.625f
#define P4 -5.70498872745e-3f
#define P3 2.06390887954e-2f
#define P2 -5.37397155531e-2f
#define P1 1.33314422036e-1f
#define P0 -3.33332819422e-1f
/* exp(2 LIMIT) + 1 is finite and 2/(that) a normal float (9e-38); tanh is 1 in float from
   9.02 on, and the GELU takes 1 + tanh(z) as 0 below -LIMIT */
#define LIMIT 43.0f
/* exp: 2^k by rounding with the 1.5·2^23 constant (|2a·log2 e| < 2^22), Cody-Waite ln2 */
#define LOG2E 1.44269504088896341f
#define ROUND_MAGIC 12582912.0f
#define LN2_HI 0.693359375f
#define LN2_LO -2.12194440e-4f
#define E5 1.9875691500e-4f
#define E4 1.3981999507e-3f
#define E3 8.3334519073e-3f
#define E2 4.1665795894e-2f
#define E1 1.6666665459e-1f
#define E0 5.0000001201e-1f
/* GELU */
#define SQRT_2_OVER_PI 0.7978845608028654f
#define GELU_C 0.044715f

/* The parts of tanh both users take: for a = |x| (not NaN), *small = tanh(a) by the
 * polynomial (meant for a < SMALL) and *q = 2/(exp(2 min(a, LIMIT)) + 1) = 1 - tanh(a). */
static inline void tanh_parts(float a, float *small, float *q) {
    float z = a * a;
    float p = fmaf(P4, z, P3);
    p = fmaf(p, z, P2);
    p = fmaf(p, z, P1);
    p = fmaf(p, z, P0);
    *small = fmaf(p * z, a, a);
    float b = fminf(a, LIMIT);
    float y = b + b;
    float k = fmaf(y, LOG2E, ROUND_MAGIC) - ROUND_MAGIC;
    float r = fmaf(-k, LN2_HI, y);
    r = fmaf(-k, LN2_LO, r);
    float e = fmaf(E5, r, E4);
    e = fmaf(e, r, E3);
    e = fmaf(e, r, E2);
    e = fmaf(e, r, E1);
    e = fmaf(e, r, E0);
    e = fmaf(e, r * r, r + 1.0f);
    float scale = atn_f32_from_bits((uint32_t)((int32_t)k + 127) << 23);
    *q = 2.0f / fmaf(e, scale, 1.0f);   /* 2 / (exp(2b) + 1) */
}

float atn_tanh_scalar(float x) {
    if (isnan(x))
        return x;
    uint32_t sign = atn_f32_bits(x) & 0x80000000u;
    float a = atn_f32_from_bits(atn_f32_bits(x) & 0x7fffffffu), small, q;
    tanh_parts(a, &small, &q);
    float m = a < SMALL ? small : 1.0f - q;
    return atn_f32_from_bits(atn_f32_bits(m) | sign);
}

void atn_tanh_array_scalar(float *dst, const float *src, size_t count) {
    for (size_t i = 0; i < count; i++)
        dst[i] = atn_tanh_scalar(src[i]);
}

/* 0.5 v u with u = 1 + tanh(z): 1 + tanh(z) for |z| < SMALL, 2 - q for z >= SMALL, q for
 * z <= -SMALL (no cancellation in the negative tail), 0 below -LIMIT. */
static inline float gelu_tanh_one(float v) {
    float v3 = (v * v) * v;
    float z = SQRT_2_OVER_PI * fmaf(GELU_C, v3, v);
    uint32_t sign = atn_f32_bits(z) & 0x80000000u;
    float a = atn_f32_from_bits(atn_f32_bits(z) & 0x7fffffffu), small, q;
    tanh_parts(a, &small, &q);
    float u = a < SMALL ? 1.0f + atn_f32_from_bits(atn_f32_bits(small) | sign) : z > 0.0f ? 2.0f - q : q;
    if (z < -LIMIT)
        u = 0.0f;
    return (0.5f * v) * u;
}

void atn_gelu_tanh_scalar(float *x, size_t count) {
    for (size_t i = 0; i < count; i++)
        x[i] = gelu_tanh_one(x[i]);
}

#ifdef ATN_HAVE_AVX2_BUILD
#define TGT __attribute__((target("avx2,fma")))
#define ALWAYS static inline __attribute__((always_inline)) TGT

/* tanh_parts on 8 floats (a >= 0; NaN lanes give something finite, replaced by callers) */
ALWAYS void vtanh_parts(__m256 a, __m256 *small, __m256 *q) {
    __m256 z = _mm256_mul_ps(a, a);
    __m256 p = _mm256_fmadd_ps(_mm256_set1_ps(P4), z, _mm256_set1_ps(P3));
    p = _mm256_fmadd_ps(p, z, _mm256_set1_ps(P2));
    p = _mm256_fmadd_ps(p, z, _mm256_set1_ps(P1));
    p = _mm256_fmadd_ps(p, z, _mm256_set1_ps(P0));
    *small = _mm256_fmadd_ps(_mm256_mul_ps(p, z), a, a);
    /* minps gives its second operand when the first is NaN, as fminf(NaN, LIMIT) does */
    __m256 b = _mm256_min_ps(a, _mm256_set1_ps(LIMIT));
    __m256 y = _mm256_add_ps(b, b);
    __m256 magic = _mm256_set1_ps(ROUND_MAGIC);
    __m256 k = _mm256_sub_ps(_mm256_fmadd_ps(y, _mm256_set1_ps(LOG2E), magic), magic);
    __m256 r = _mm256_fnmadd_ps(k, _mm256_set1_ps(LN2_HI), y);
    r = _mm256_fnmadd_ps(k, _mm256_set1_ps(LN2_LO), r);
    __m256 e = _mm256_fmadd_ps(_mm256_set1_ps(E5), r, _mm256_set1_ps(E4));
    e = _mm256_fmadd_ps(e, r, _mm256_set1_ps(E3));
    e = _mm256_fmadd_ps(e, r, _mm256_set1_ps(E2));
    e = _mm256_fmadd_ps(e, r, _mm256_set1_ps(E1));
    e = _mm256_fmadd_ps(e, r, _mm256_set1_ps(E0));
    e = _mm256_fmadd_ps(e, _mm256_mul_ps(r, r), _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
    __m256i ki = _mm256_add_epi32(_mm256_cvtps_epi32(k), _mm256_set1_epi32(127));
    __m256 scale = _mm256_castsi256_ps(_mm256_slli_epi32(ki, 23));
    *q = _mm256_div_ps(_mm256_set1_ps(2.0f), _mm256_fmadd_ps(e, scale, _mm256_set1_ps(1.0f)));
}

ALWAYS __m256 vtanh(__m256 x) {
    const __m256 sign_mask = _mm256_castsi256_ps(_mm256_set1_epi32((int)0x80000000u));
    __m256 sign = _mm256_and_ps(x, sign_mask);
    __m256 a = _mm256_andnot_ps(sign_mask, x), small, q;
    vtanh_parts(a, &small, &q);
    __m256 is_small = _mm256_cmp_ps(a, _mm256_set1_ps(SMALL), _CMP_LT_OQ);
    __m256 m = _mm256_blendv_ps(_mm256_sub_ps(_mm256_set1_ps(1.0f), q), small, is_small);
    m = _mm256_or_ps(m, sign);
    return _mm256_blendv_ps(m, x, _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
}

TGT static void tanh_array_avx2(float *dst, const float *src, size_t count) {
    size_t i = 0;
    for (; i + 8 <= count; i += 8)
        _mm256_storeu_ps(dst + i, vtanh(_mm256_loadu_ps(src + i)));
    atn_tanh_array_scalar(dst + i, src + i, count - i);
}

TGT static void gelu_tanh_avx2(float *x, size_t count) {
    const __m256 sign_mask = _mm256_castsi256_ps(_mm256_set1_epi32((int)0x80000000u));
    const __m256 one = _mm256_set1_ps(1.0f);
    size_t i = 0;
    for (; i + 8 <= count; i += 8) {
        __m256 v = _mm256_loadu_ps(x + i);
        __m256 v3 = _mm256_mul_ps(_mm256_mul_ps(v, v), v);
        __m256 z = _mm256_mul_ps(_mm256_set1_ps(SQRT_2_OVER_PI), _mm256_fmadd_ps(_mm256_set1_ps(GELU_C), v3, v));
        __m256 sign = _mm256_and_ps(z, sign_mask);
        __m256 a = _mm256_andnot_ps(sign_mask, z), small, q;
        vtanh_parts(a, &small, &q);
        __m256 tail = _mm256_blendv_ps(q, _mm256_sub_ps(_mm256_set1_ps(2.0f), q),
                                       _mm256_cmp_ps(z, _mm256_setzero_ps(), _CMP_GT_OQ));
        __m256 u = _mm256_blendv_ps(tail, _mm256_add_ps(one, _mm256_or_ps(small, sign)),
                                    _mm256_cmp_ps(a, _mm256_set1_ps(SMALL), _CMP_LT_OQ));
        u = _mm256_andnot_ps(_mm256_cmp_ps(z, _mm256_set1_ps(-LIMIT), _CMP_LT_OQ), u);
        _mm256_storeu_ps(x + i, _mm256_mul_ps(_mm256_mul_ps(_mm256_set1_ps(0.5f), v), u));
    }
    atn_gelu_tanh_scalar(x + i, count - i);
}

#endif

bool atn_activation_uses_avx2(void) {
#ifdef ATN_HAVE_AVX2_BUILD
    return atn_cpu_features()->avx2_activations;
#else
    return false;
#endif
}

void atn_tanh_array(float *dst, const float *src, size_t count) {
#ifdef ATN_HAVE_AVX2_BUILD
    if (atn_activation_uses_avx2()) {
        tanh_array_avx2(dst, src, count);
        return;
    }
#endif
    atn_tanh_array_scalar(dst, src, count);
}

void atn_gelu_tanh(float *x, size_t count) {
#ifdef ATN_HAVE_AVX2_BUILD
    if (atn_activation_uses_avx2()) {
        gelu_tanh_avx2(x, count);
        return;
    }
#endif
    atn_gelu_tanh_scalar(x, count);
}
