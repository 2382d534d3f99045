/* AVX-512 kernels for the CPU forward pass (engine/forward/cpu-kernels.h).
 *
 * Why not cblas_sgemm: OpenBLAS repacks the weight matrix on every call, so each forward
 * streams all layer weights from memory twice over (read, packed copy) before computing,
 * and at 8 tokens that packing is most of the time.  Here every weight is packed once per
 * model into 64-column panels; the micro-kernel reads the activations in place (row-major,
 * broadcast one element at a time) and the packed panel in order, 6 rows x 64 columns
 * of accumulators (24 zmm registers).  The bias is the accumulators' initial value and the
 * activation and residual are applied to each tile while it is in L1.  Measured on the
 * AVX-512 EPYC this project runs on, one thread: 180-190 GFLOP/s at [128..512, 768] x
 * [768, 3072] against OpenBLAS Cooperlake's 150-165, and twice OpenBLAS at 8 rows.
 *
 * The kernels carry a target("avx512f") attribute; atn_cpu_kernels_usable (generic code)
 * checks the CPU before any of them runs. */
#include "forward/cpu-kernels.h"
#include "attnscope.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
bool atn_cpu_kernels_usable(void) { return atn_cpu_features()->packed_kernels; }

#include <immintrin.h>

/* Every function below that uses AVX-512 carries this (a function attribute, not a pragma
 * or -mavx512f, so that the file builds the same with gcc and clang and nothing outside
 * these functions uses AVX-512). */
#define TGT __attribute__((target("avx512f,fma")))
#define ALWAYS static inline __attribute__((always_inline)) TGT

enum { KC_MAX = 768 };   /* depth of one pass over a panel: 768 x 64 floats = 192 KB, half of L2 */

/* ---- element-wise functions on 16 floats --------------------------------------- */

/* exp(x), Cephes' expf polynomial on r = x - n ln2 (|r| <= ln2/2), scaled by 2^n with
 * vscalefps, which also gives correct underflow (denormals, then exactly 0: masked keys
 * get weight 0) and overflow (inf).  Measured against exp() in double over [-87, 88] on a
 * 1e-4 grid: max relative error 1.18e-7 (one ulp).  NaN stays NaN. */
ALWAYS __m512 vexp(__m512 x) {
    x = _mm512_max_ps(_mm512_set1_ps(-120.0f), x);   /* operand order keeps NaN */
    x = _mm512_min_ps(_mm512_set1_ps(89.0f), x);
    __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                    _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x);
    r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
    __m512 p = _mm512_set1_ps(1.9875691500e-4f);
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.3981999507e-3f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073e-3f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894e-2f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459e-1f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201e-1f));
    p = _mm512_fmadd_ps(p, _mm512_mul_ps(r, r), _mm512_add_ps(r, _mm512_set1_ps(1.0f)));
    return _mm512_scalef_ps(p, n);
}

/* GELU, erf form: 0.5 x (1 + erf(x/√2)).  With u = |x|/√2, erfc(u) = t exp(-u² + P(t)),
 * t = 1/(1 + u/2) (Numerical Recipes' erfcc, fractional error < 1.2e-7 for all u), and
 * 1 + erf(x/√2) = 2 - erfc(u) for x >= 0, erfc(u) for x < 0, so the negative tail keeps
 * its relative accuracy (the direct 1 + erf loses it).  Measured against 0.5 x erfc(-x/√2)
 * in double on a 1e-4 grid: max relative error 5.0e-7 for x >= -3, 8.1e-7 for x >= -5,
 * 2.1e-6 for x >= -10 (where |GELU| < 1e-22); max absolute error 2.4e-7 (half an ulp
 * near x = 5).  The float 0.5 x (1 + erff(x/√2)) of the cblas path: 1.1e-5 for x >= -3. */
ALWAYS __m512 vgelu_erf(__m512 x) {
    __m512 u = _mm512_mul_ps(_mm512_abs_ps(x), _mm512_set1_ps(0.70710678118654752f));
    __m512 t = _mm512_div_ps(_mm512_set1_ps(1.0f), _mm512_fmadd_ps(u, _mm512_set1_ps(0.5f), _mm512_set1_ps(1.0f)));
    __m512 p = _mm512_set1_ps(0.17087277f);
    p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(-0.82215223f));
    p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(1.48851587f));
    p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(-1.13520398f));
    p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(0.27886807f));
    p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(-0.18628806f));
    p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(0.09678418f));
    p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(0.37409196f));
    p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(1.00002368f));
    p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(-1.26551223f));
    /* -u² + P(t) as -x·x/2 + P(t) in one fma: one rounding, not three */
    __m512 y = _mm512_mul_ps(t, vexp(_mm512_fmadd_ps(_mm512_mul_ps(x, _mm512_set1_ps(-0.5f)), x, p)));   /* erfc(u) */
    __m512 half_xy = _mm512_mul_ps(_mm512_mul_ps(_mm512_set1_ps(0.5f), x), y);
    __mmask16 neg = _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_LT_OQ);
    return _mm512_mask_blend_ps(neg, _mm512_sub_ps(x, half_xy), half_xy);
}

/* GELU, tanh form: 0.5 x (1 + tanh(z)) = x / (1 + exp(-2z)), z = √(2/π)(x + 0.044715 x³). */
ALWAYS __m512 vgelu_tanh(__m512 x) {
    __m512 x3 = _mm512_mul_ps(_mm512_mul_ps(x, x), x);
    __m512 z = _mm512_mul_ps(_mm512_set1_ps(0.7978845608028654f), _mm512_fmadd_ps(x3, _mm512_set1_ps(0.044715f), x));
    __m512 e = vexp(_mm512_mul_ps(z, _mm512_set1_ps(-2.0f)));
    return _mm512_div_ps(x, _mm512_add_ps(_mm512_set1_ps(1.0f), e));
}

ALWAYS __m512 vact(__m512 x, int act) {
    switch (act) {
    case ATN_ACT_GELU: return vgelu_erf(x);
    case ATN_ACT_GELU_TANH: return vgelu_tanh(x);
    case ATN_ACT_RELU: return _mm512_max_ps(x, _mm512_setzero_ps());
    default: return x;
    }
}

ALWAYS __mmask16 tail_mask(int32_t count) { return count >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << count) - 1); }

/* ---- the micro-kernel --------------------------------------------------------- */

/* C[MR, 16·NV] = init + A[MR, K] · B[K, 16·NV].  A row-major (row stride lda), B row-major
 * with row stride ldb (a packed panel: 64; V: d), the last of the NV vectors masked by
 * tail.  init: bias row (NULL: 0); acc: start from C instead (the second and later passes
 * over K).  While it runs it prefetches lpi cache lines per step, for the first npf steps,
 * from pf into L2: the next stretch of the packed weights. */
#define LD(p, v) ((v) == NV - 1 ? _mm512_maskz_loadu_ps(tail, (p) + 16 * (v)) : _mm512_loadu_ps((p) + 16 * (v)))
#define ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5)

ALWAYS void ukr(const int MR, const int NV, int32_t K, const float *A, size_t lda, const float *B, size_t ldb,
                float *C, size_t ldc, __mmask16 tail, const float *init, bool acc, const char *pf, int32_t npf,
                int lpi) {
    __m512 z = _mm512_setzero_ps();
    __m512 i0 = z, i1 = z, i2 = z, i3 = z;
    if (init) {
        if (NV > 0) i0 = LD(init, 0);
        if (NV > 1) i1 = LD(init, 1);
        if (NV > 2) i2 = LD(init, 2);
        if (NV > 3) i3 = LD(init, 3);
    }
#define DECL(r)                                                                                            \
    __m512 c##r##0 = i0, c##r##1 = i1, c##r##2 = i2, c##r##3 = i3;                                         \
    const float *a##r = A + (size_t)(MR > r ? r : 0) * lda;                                                \
    if (acc && MR > r) {                                                                                   \
        const float *cr = C + (size_t)r * ldc;                                                             \
        if (NV > 0) c##r##0 = LD(cr, 0);                                                                   \
        if (NV > 1) c##r##1 = LD(cr, 1);                                                                   \
        if (NV > 2) c##r##2 = LD(cr, 2);                                                                   \
        if (NV > 3) c##r##3 = LD(cr, 3);                                                                   \
    }
    ROWS(DECL)
    for (int32_t kk = 0; kk < K; kk++) {
        if (kk < npf) {
            const char *p = pf + (size_t)kk * lpi * 64;
            _mm_prefetch(p, _MM_HINT_T1);
            for (int l = 1; l < lpi; l++)
                _mm_prefetch(p + 64 * l, _MM_HINT_T1);
        }
        __m512 b0 = z, b1 = z, b2 = z, b3 = z;
        if (NV > 0) b0 = LD(B, 0);
        if (NV > 1) b1 = LD(B, 1);
        if (NV > 2) b2 = LD(B, 2);
        if (NV > 3) b3 = LD(B, 3);
        B += ldb;
#define FMA(r)                                                                                             \
        if (MR > r) {                                                                                      \
            __m512 a = _mm512_set1_ps(a##r[kk]);                                                           \
            if (NV > 0) c##r##0 = _mm512_fmadd_ps(a, b0, c##r##0);                                         \
            if (NV > 1) c##r##1 = _mm512_fmadd_ps(a, b1, c##r##1);                                         \
            if (NV > 2) c##r##2 = _mm512_fmadd_ps(a, b2, c##r##2);                                         \
            if (NV > 3) c##r##3 = _mm512_fmadd_ps(a, b3, c##r##3);                                         \
        }
        ROWS(FMA)
    }
#define ST(p, v, x) ((v) == NV - 1 ? _mm512_mask_storeu_ps((p) + 16 * (v), tail, x) : _mm512_storeu_ps((p) + 16 * (v), x))
#define STORE(r)                                                                                           \
    if (MR > r) {                                                                                          \
        float *cr = C + (size_t)r * ldc;                                                                   \
        if (NV > 0) ST(cr, 0, c##r##0);                                                                    \
        if (NV > 1) ST(cr, 1, c##r##1);                                                                    \
        if (NV > 2) ST(cr, 2, c##r##2);                                                                    \
        if (NV > 3) ST(cr, 3, c##r##3);                                                                    \
    }
    ROWS(STORE)
#undef DECL
#undef FMA
#undef STORE
#undef ST
}

/* One call of the micro-kernel for runtime mr (1..6) and nv (1..4). */
TGT static void ukr_any(int mr, int nv, int32_t K, const float *A, size_t lda, const float *B, size_t ldb, float *C,
                    size_t ldc, __mmask16 tail, const float *init, bool acc, const char *pf, int32_t npf, int lpi) {
#define CASE(m, v) case (m) * 8 + (v): ukr(m, v, K, A, lda, B, ldb, C, ldc, tail, init, acc, pf, npf, lpi); return;
#define CASES(m) CASE(m, 1) CASE(m, 2) CASE(m, 3) CASE(m, 4)
    switch (mr * 8 + nv) {
        CASES(1) CASES(2) CASES(3) CASES(4) CASES(5) CASES(6)
    default: return;
    }
#undef CASES
#undef CASE
}

/* ---- products against packed weights ------------------------------------------ */

void atn_pack_weight(float *dst, const float *w, int32_t o, int32_t i, int32_t p0, int32_t p1) {
    for (int32_t p = p0; p < p1; p++) {
        float *panel = dst + (size_t)p * i * ATN_PANEL;
        for (int32_t j = 0; j < ATN_PANEL; j++) {
            int32_t row = p * ATN_PANEL + j;
            if (row < o) {
                const float *src = w + (size_t)row * i;
                for (int32_t c = 0; c < i; c++)
                    panel[(size_t)c * ATN_PANEL + j] = src[c];
            } else {
                for (int32_t c = 0; c < i; c++)
                    panel[(size_t)c * ATN_PANEL + j] = 0.0f;
            }
        }
    }
}

/* Residual and activation on one tile [mr, w] of the output, while it is in L1. */
TGT static void tile_epilogue(float *c, size_t ldc, const float *res, size_t ldr, int mr, int32_t w, int act) {
    for (int r = 0; r < mr; r++) {
        float *cr = c + (size_t)r * ldc;
        const float *rr = res ? res + (size_t)r * ldr : NULL;
        for (int32_t j = 0; j < w; j += 16) {
            __mmask16 m = tail_mask(w - j);
            __m512 x = _mm512_maskz_loadu_ps(m, cr + j);
            if (rr)
                x = _mm512_add_ps(x, _mm512_maskz_loadu_ps(m, rr + j));
            if (act >= 0)
                x = vact(x, act);
            _mm512_mask_storeu_ps(cr + j, m, x);
        }
    }
}

TGT void atn_gemm_packed(float *out, size_t ldo, const float *a, size_t lda, const float *wp, const float *bias,
                     const float *res, size_t ldr, int32_t m, int32_t o, int32_t i, int32_t p0, int32_t p1,
                     int act) {
    int32_t n_kc = (i + KC_MAX - 1) / KC_MAX, kc0 = (i + n_kc - 1) / n_kc;
    int32_t blocks = (m + 5) / 6;
    for (int32_t p = p0; p < p1; p++) {
        int32_t col = p * ATN_PANEL, w = o - col < ATN_PANEL ? o - col : ATN_PANEL;
        int nv = (w + 15) / 16;
        __mmask16 tail = tail_mask(w - 16 * (nv - 1));
        const float *panel = wp + (size_t)p * i * ATN_PANEL;
        const float *b_p = bias ? bias + col : NULL;
        for (int32_t kb = 0; kb < i; kb += kc0) {
            int32_t kc = i - kb < kc0 ? i - kb : kc0;
            const float *B = panel + (size_t)kb * ATN_PANEL;
            bool last_kb = kb + kc >= i;
            /* prefetch what comes next (the rest of this panel, then the next panel; both
               follow B in memory), spread over this pass's row blocks */
            const char *next = (const char *)(B + (size_t)kc * ATN_PANEL);
            bool more = !last_kb || p + 1 < p1;
            int32_t lines = more ? kc * ATN_PANEL * 4 / 64 : 0;
            int32_t per_block = (lines + blocks - 1) / blocks;
            int lpi = per_block > kc ? (per_block + kc - 1) / kc : 1;
            lpi = lpi > 4 ? 4 : lpi;
            int32_t npf = (per_block + lpi - 1) / lpi;
            for (int32_t r = 0, blk = 0; r < m; r += 6, blk++) {
                int mr = m - r < 6 ? m - r : 6;
                float *c = out + (size_t)r * ldo + col;
                ukr_any(mr, nv, kc, a + (size_t)r * lda + kb, lda, B, ATN_PANEL, c, ldo, tail, b_p, kb > 0,
                        next + (size_t)blk * per_block * 64, npf, lpi);
                if (last_kb && (res || act >= 0))
                    tile_epilogue(c, ldo, res ? res + (size_t)r * ldr + col : NULL, ldr, mr, w, act);
            }
        }
    }
}

/* ---- attention ---------------------------------------------------------------- */

static int32_t pad64(int32_t n) { return (n + ATN_PANEL - 1) / ATN_PANEL * ATN_PANEL; }

size_t atn_attention_scratch_floats(int32_t n, int32_t kd) {
    return (size_t)pad64(n) * (size_t)kd + 6 * (size_t)pad64(n);
}

/* p[j] = softmax_j(s[j]·scale + mask_add[j]), max-subtracted, the sum in double. */
TGT static void softmax_row(float *p, const float *s, const float *mask_add, int32_t n, float scale) {
    __m512 vs = _mm512_set1_ps(scale), mx = _mm512_set1_ps(-INFINITY);
    for (int32_t j = 0; j < n; j += 16) {
        __mmask16 m = tail_mask(n - j);
        __m512 x = _mm512_add_ps(_mm512_mul_ps(_mm512_maskz_loadu_ps(m, s + j), vs), _mm512_maskz_loadu_ps(m, mask_add + j));
        _mm512_mask_storeu_ps(p + j, m, x);
        mx = _mm512_mask_max_ps(mx, m, mx, x);
    }
    __m512 vmax = _mm512_set1_ps(_mm512_reduce_max_ps(mx));
    __m512d sum_lo = _mm512_setzero_pd(), sum_hi = _mm512_setzero_pd();
    for (int32_t j = 0; j < n; j += 16) {
        __mmask16 m = tail_mask(n - j);
        __m512 e = _mm512_maskz_mov_ps(m, vexp(_mm512_sub_ps(_mm512_maskz_loadu_ps(m, p + j), vmax)));
        _mm512_mask_storeu_ps(p + j, m, e);
        sum_lo = _mm512_add_pd(sum_lo, _mm512_cvtps_pd(_mm512_castps512_ps256(e)));
        sum_hi = _mm512_add_pd(sum_hi, _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(e), 1))));
    }
    __m512 inv = _mm512_set1_ps((float)(1.0 / _mm512_reduce_add_pd(_mm512_add_pd(sum_lo, sum_hi))));
    for (int32_t j = 0; j < n; j += 16) {
        __mmask16 m = tail_mask(n - j);
        _mm512_mask_storeu_ps(p + j, m, _mm512_mul_ps(_mm512_maskz_loadu_ps(m, p + j), inv));
    }
}

TGT void atn_attention_rows(float *ctx, float *att_h, const float *q, const float *k, const float *v, size_t ld,
                        const float *mask_add, int32_t n, int32_t kd, int32_t r0, int32_t r1, float scale,
                        float *scratch, bool repack) {
    int32_t np = pad64(n), panels = np / ATN_PANEL;
    float *kp = scratch;                    /* K^T packed: [panels][kd][64], zero past n */
    float *s = scratch + (size_t)np * kd;   /* [6][np] raw scores of a block of query rows */
    if (repack)
        for (int32_t p = 0; p < panels; p++)
            for (int32_t j = 0; j < ATN_PANEL; j++) {
                int32_t key = p * ATN_PANEL + j;
                float *dst = kp + (size_t)p * kd * ATN_PANEL + j;
                if (key < n) {
                    const float *src = k + (size_t)key * ld;
                    for (int32_t c = 0; c < kd; c++)
                        dst[(size_t)c * ATN_PANEL] = src[c];
                } else {
                    for (int32_t c = 0; c < kd; c++)
                        dst[(size_t)c * ATN_PANEL] = 0.0f;
                }
            }
    for (int32_t r = r0; r < r1; r += 6) {
        int mr = r1 - r < 6 ? r1 - r : 6;
        /* s[mr][np] = Q[r.., :] K^T */
        for (int32_t p = 0; p < panels; p++)
            ukr_any(mr, 4, kd, q + (size_t)r * ld, ld, kp + (size_t)p * kd * ATN_PANEL, ATN_PANEL,
                    s + (size_t)p * ATN_PANEL, np, 0xFFFF, NULL, false, NULL, 0, 1);
        for (int i = 0; i < mr; i++)
            softmax_row(att_h + (size_t)(r + i) * n, s + (size_t)i * np, mask_add + (size_t)(r + i) * n, n, scale);
        /* ctx[r.., :] = P[r.., :] V, 64 columns at a time */
        for (int32_t c0 = 0; c0 < kd; c0 += ATN_PANEL) {
            int32_t w = kd - c0 < ATN_PANEL ? kd - c0 : ATN_PANEL;
            int nv = (w + 15) / 16;
            ukr_any(mr, nv, n, att_h + (size_t)r * n, (size_t)n, v + c0, ld, ctx + (size_t)r * ld + c0, ld,
                    tail_mask(w - 16 * (nv - 1)), NULL, false, NULL, 0, 1);
        }
    }
}

/* ---- LayerNorm ---------------------------------------------------------------- */

TGT bool atn_layernorm_rows(float *out, const float *in, const float *res, const float *g, const float *b, int32_t r0,
                        int32_t r1, int32_t d, float eps) {
    __mmask16 bad = 0;
    for (int32_t r = r0; r < r1; r++) {
        const float *x = in + (size_t)r * d;
        const float *xr = res ? res + (size_t)r * d : NULL;
        float *y = out + (size_t)r * d;
        __m512 acc = _mm512_setzero_ps();
        for (int32_t c = 0; c < d; c += 16) {
            __mmask16 m = tail_mask(d - c);
            __m512 t = _mm512_maskz_loadu_ps(m, x + c);
            if (xr) {
                t = _mm512_add_ps(t, _mm512_maskz_loadu_ps(m, xr + c));
                _mm512_mask_storeu_ps(y + c, m, t);
            }
            acc = _mm512_add_ps(acc, t);
        }
        const float *src = xr ? y : x;
        float mean = (float)((double)_mm512_reduce_add_ps(acc) / d);
        __m512 vm = _mm512_set1_ps(mean), var = _mm512_setzero_ps();
        for (int32_t c = 0; c < d; c += 16) {
            __mmask16 m = tail_mask(d - c);
            __m512 t = _mm512_maskz_sub_ps(m, _mm512_maskz_loadu_ps(m, src + c), vm);
            var = _mm512_fmadd_ps(t, t, var);
        }
        __m512 rstd = _mm512_set1_ps((float)(1.0 / sqrt((double)_mm512_reduce_add_ps(var) / d + eps)));
        for (int32_t c = 0; c < d; c += 16) {
            __mmask16 m = tail_mask(d - c);
            __m512 t = _mm512_mul_ps(_mm512_sub_ps(_mm512_maskz_loadu_ps(m, src + c), vm), rstd);
            __m512 gv = g ? _mm512_maskz_loadu_ps(m, g + c) : _mm512_set1_ps(1.0f);
            __m512 bv = b ? _mm512_maskz_loadu_ps(m, b + c) : _mm512_setzero_ps();
            t = _mm512_fmadd_ps(t, gv, bv);
            _mm512_mask_storeu_ps(y + c, m, t);
            __m512 zero_if_finite = _mm512_sub_ps(t, t);   /* NaN for NaN and +-inf */
            bad |= _mm512_mask_cmp_ps_mask(m, zero_if_finite, zero_if_finite, _CMP_UNORD_Q);
        }
    }
    return bad == 0;
}

#else   /* not x86-64 with GCC: the cblas_sgemm path only */

bool atn_cpu_kernels_usable(void) { return false; }
void atn_pack_weight(float *dst, const float *w, int32_t o, int32_t i, int32_t p0, int32_t p1) {}
void atn_gemm_packed(float *out, size_t ldo, const float *a, size_t lda, const float *wp, const float *bias,
                     const float *res, size_t ldr, int32_t m, int32_t o, int32_t i, int32_t p0, int32_t p1,
                     int act) {}
size_t atn_attention_scratch_floats(int32_t n, int32_t kd) { return 0; }
void atn_attention_rows(float *ctx, float *att_h, const float *q, const float *k, const float *v, size_t ld,
                        const float *mask_add, int32_t n, int32_t kd, int32_t r0, int32_t r1, float scale,
                        float *scratch, bool repack) {}
bool atn_layernorm_rows(float *out, const float *in, const float *res, const float *g, const float *b, int32_t r0,
                        int32_t r1, int32_t d, float eps) { return true; }
#endif
