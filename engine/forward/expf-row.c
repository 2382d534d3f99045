/* The softmax's exponentials, four at a time, bit for bit glibc's expf (expf-row.h). */
#include "forward/expf-row.h"

#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define HAVE_X86 1
#else
#define HAVE_X86 0
#endif

static void scalar_part(float *row, float mx, int32_t j0, int32_t j1) {
    for (int32_t j = j0; j < j1; j++) {
        float x = row[j] - mx;
        row[j] = x < -110.0f ? 0.0f : expf(x);
    }
}

#if HAVE_X86
/* glibc's __exp2f_data as its expf reads it (EXP2F_TABLE_BITS 5, N = 32): the table
 * 2^(i/N) with i << 47 taken off, 1 / ln2 * N, the polynomial and the rounding shift
 * (sysdeps/ieee754/flt-32/e_expf.c and e_exp2f_data.c, glibc 2.27 on) */
static const uint64_t T[32] = {
    0x3ff0000000000000, 0x3fefd9b0d3158574, 0x3fefb5586cf9890f, 0x3fef9301d0125b51, 0x3fef72b83c7d517b,
    0x3fef54873168b9aa, 0x3fef387a6e756238, 0x3fef1e9df51fdee1, 0x3fef06fe0a31b715, 0x3feef1a7373aa9cb,
    0x3feedea64c123422, 0x3feece086061892d, 0x3feebfdad5362a27, 0x3feeb42b569d4f82, 0x3feeab07dd485429,
    0x3feea47eb03a5585, 0x3feea09e667f3bcd, 0x3fee9f75e8ec5f74, 0x3feea11473eb0187, 0x3feea589994cce13,
    0x3feeace5422aa0db, 0x3feeb737b0cdc5e5, 0x3feec49182a3f090, 0x3feed503b23e255d, 0x3feee89f995ad3ad,
    0x3feeff76f2fb5e47, 0x3fef199bdd85529c, 0x3fef3720dcef9069, 0x3fef5818dcfba487, 0x3fef7c97337b9b5f,
    0x3fefa4afa2a490da, 0x3fefd0765b6e4540,
};
static const uint64_t INV_LN2_N = 0x40471547652b82fe, C0 = 0x3ebc6af84b912394, C1 = 0x3f2ebfce50fac4f3,
                      C2 = 0x3f962e42ff0c52d6, SHIFT = 0x4338000000000000;

static double as_double(uint64_t u) {
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

/* expf of four floats in [-87, 0], each step glibc's expf's own:
 *   kd = fma(InvLn2N, x, SHIFT), ki = bits(kd), kd -= SHIFT, r = fma(InvLn2N, x, -kd),
 *   s = bits(T[ki % 32] + (ki << 47)), y = fma(fma(r, C0, C1), r * r, fma(r, C2, 1)) * s */
__attribute__((target("avx2,fma"))) static __m128 exp4(__m128 x) {
    const __m256d inv = _mm256_set1_pd(as_double(INV_LN2_N)), shift = _mm256_set1_pd(as_double(SHIFT));
    __m256d xd = _mm256_cvtps_pd(x);
    __m256d kd = _mm256_fmadd_pd(inv, xd, shift);
    __m256i ki = _mm256_castpd_si256(kd);
    kd = _mm256_sub_pd(kd, shift);
    __m256d r = _mm256_fmsub_pd(inv, xd, kd);
    __m256i idx = _mm256_and_si256(ki, _mm256_set1_epi64x(31));
    __m256i t = _mm256_i64gather_epi64((const long long *)T, idx, 8);
    t = _mm256_add_epi64(t, _mm256_slli_epi64(ki, 47));
    __m256d s = _mm256_castsi256_pd(t);
    __m256d z = _mm256_fmadd_pd(r, _mm256_set1_pd(as_double(C0)), _mm256_set1_pd(as_double(C1)));
    __m256d r2 = _mm256_mul_pd(r, r);
    __m256d y = _mm256_fmadd_pd(r, _mm256_set1_pd(as_double(C2)), _mm256_set1_pd(1.0));
    y = _mm256_fmadd_pd(z, r2, y);
    y = _mm256_mul_pd(y, s);
    return _mm256_cvtpd_ps(y);
}

__attribute__((target("avx2,fma"))) static void vector_row(float *row, float mx, int32_t n) {
    const __m128 vmx = _mm_set1_ps(mx), lo = _mm_set1_ps(-87.0f), zero = _mm_setzero_ps();
    int32_t j = 0;
    for (; j + 4 <= n; j += 4) {
        __m128 x = _mm_sub_ps(_mm_loadu_ps(row + j), vmx);
        /* all four in [-87, 0] (NaN fails both): glibc's main path; else the scalar loop */
        __m128 ok = _mm_and_ps(_mm_cmp_ps(x, lo, _CMP_GE_OQ), _mm_cmp_ps(x, zero, _CMP_LE_OQ));
        if (_mm_movemask_ps(ok) == 0xf)
            _mm_storeu_ps(row + j, exp4(x));
        else
            scalar_part(row, mx, j, j + 4);
    }
    scalar_part(row, mx, j, n);
}

static int vector_on;
static pthread_once_t vector_once = PTHREAD_ONCE_INIT;

/* AVX2 + FMA, and the vector path gives expf's bits on a spread of x in [-87, 0] (every
 * 4,099th float there, about 270,000, plus the ends) */
static void vector_check(void) {
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma"))
        return;
    float lo = -87.0f;
    uint32_t top;
    memcpy(&top, &lo, sizeof top);
    float v[4], want[4];
    int k = 0;
    for (uint32_t u = 0x80000000u;; u += 4099) {   /* -0 down to -87 */
        if (u > top)
            u = top;
        memcpy(&v[k], &u, sizeof u);
        want[k] = expf(v[k]);
        if (++k == 4) {
            float got[4];
            _mm_storeu_ps(got, exp4(_mm_loadu_ps(v)));
            if (memcmp(got, want, sizeof got))
                return;
            k = 0;
        }
        if (u == top)
            break;
    }
    vector_on = 1;
}
#endif

int atn_expf_row_vector(void) {
#if HAVE_X86
    pthread_once(&vector_once, vector_check);
    return vector_on;
#else
    return 0;
#endif
}

void atn_expf_row(float *row, float mx, int32_t n) {
#if HAVE_X86
    if (atn_expf_row_vector()) {
        vector_row(row, mx, n);
        return;
    }
#endif
    scalar_part(row, mx, 0, n);
}
