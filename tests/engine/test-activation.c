/* engine/forward/activation.c: tanh and the tanh-form GELU against double-precision libm.
 *
 * tanh: every 211th float of [0, FLT_MAX] (10 million, every binade) and every float of
 * [0.5, 1) (the binade where the polynomial hands over to exp, and the worst error), plus
 * the edges (±0, denormals, 0.625 and its neighbours, 9.0-9.1 where tanh reaches 1, the
 * clamp at 43, FLT_MAX, ±inf, NaN): at most 2 ulp from double tanh (measured 1.36 here;
 * glibc's tanhf 2.12 on the same points), odd bit for bit, exactly ±1 from 9.02 on.
 * GELU: a grid of 2^-16 over [-12, 12] and every 1021st float of [-12, 12] against
 * 0.5 v (1 + tanh z) in double: relative error at most 1.5e-6 for v >= -3 (measured
 * 8.3e-7; the float formula with glibc's tanhf has 1.2e-5 there, from 1 + tanh cancelling)
 * and at most 4 (1 + 2|z|) 2^-24 wherever |GELU| > 1e-30 (measured 2.8: z's own rounding,
 * amplified by exp), absolute at most 5e-7; the edges (±inf, NaN, huge and denormal v).
 * Both: the AVX2 code and the scalar code give the same bits on every point and for every
 * length and offset (tails), in place or not; atn_activate's gelu_tanh is this GELU (the
 * forward's numbers come from here). */
#include "check.h"
#include "forward/activation.h"
#include "forward/encoder.h"
#include "common/test-floats.h"

#include <float.h>
#include <stdint.h>

enum { BLOCK = 1 << 16 };
static float in[BLOCK], out[BLOCK], outs[BLOCK];

typedef struct {
    double max_ulp, libm_ulp;
    float worst;
    size_t points, mismatches;
} tanh_stats;

static void tanh_block(tanh_stats *s, size_t nb) {
    atn_tanh_array(out, in, nb);
    atn_tanh_array_scalar(outs, in, nb);
    for (size_t i = 0; i < nb; i++) {
        if (bits_of(out[i]) != bits_of(outs[i]))
            s->mismatches++;
        double e = tanh((double)in[i]);
        double u = ulp_error(out[i], e);
        if (u > s->max_ulp) {
            s->max_ulp = u;
            s->worst = in[i];
        }
        double ul = ulp_error(tanhf(in[i]), e);
        if (ul > s->libm_ulp)
            s->libm_ulp = ul;
    }
    s->points += nb;
}

/* bit patterns lo, lo + step, ... below hi */
static void tanh_sweep(tanh_stats *s, uint32_t lo, uint32_t hi, uint32_t step) {
    size_t nb = 0;
    for (uint64_t u = lo; u < hi; u += step) {
        in[nb++] = float_of((uint32_t)u);
        if (nb == BLOCK) {
            tanh_block(s, nb);
            nb = 0;
        }
    }
    if (nb)
        tanh_block(s, nb);
}

static void test_tanh_sweep(void) {
    tanh_stats s = {0};
    tanh_sweep(&s, 0, 0x7f800000u, 211);              /* all of [0, FLT_MAX] */
    tanh_sweep(&s, bits_of(0.5f), bits_of(1.0f), 1);        /* every float of [0.5, 1) */
    fprintf(stderr, "tanh: %zu points, max %.3f ulp at x = %.9g (glibc tanhf %.3f ulp), %zu AVX2/scalar mismatches\n",
            s.points, s.max_ulp, s.worst, s.libm_ulp, s.mismatches);
    CHECK_MSG(s.max_ulp <= 2.0, "max error %.3f ulp at %.9g", s.max_ulp, s.worst);
    CHECK_MSG(s.mismatches == 0, "%zu points where the AVX2 and scalar code differ", s.mismatches);

    /* odd, bit for bit, on every 97th point of the range */
    size_t odd_bad = 0, nb = 0;
    for (uint64_t u = 0; u < 0x7f800000u; u += 97) {
        in[nb++] = float_of((uint32_t)u);
        if (nb == BLOCK || u + 97 >= 0x7f800000u) {
            atn_tanh_array(out, in, nb);
            for (size_t i = 0; i < nb; i++)
                in[i] = -in[i];
            atn_tanh_array(outs, in, nb);
            for (size_t i = 0; i < nb; i++)
                odd_bad += bits_of(outs[i]) != (bits_of(out[i]) ^ 0x80000000u);
            nb = 0;
        }
    }
    CHECK_MSG(odd_bad == 0, "tanh(-x) != -tanh(x) at %zu points", odd_bad);
}

static void test_tanh_edges(void) {
    const float xs[] = {0.0f, -0.0f, FLT_TRUE_MIN, -FLT_TRUE_MIN, 1e-40f, FLT_MIN, -FLT_MIN, 1e-20f, 1e-4f,
                        nextafterf(0.625f, 0.0f), 0.625f, nextafterf(0.625f, 1.0f), -0.625f, 1.0f, 2.0f,
                        9.0f, 9.01f, 9.02f, 9.1f, 10.0f, 42.99f, 43.0f, 43.01f, 88.0f, 1e10f, FLT_MAX, -FLT_MAX,
                        INFINITY, -INFINITY};
    size_t n = sizeof xs / sizeof xs[0];
    float got[sizeof xs / sizeof xs[0]], gots[sizeof xs / sizeof xs[0]];
    atn_tanh_array(got, xs, n);
    atn_tanh_array_scalar(gots, xs, n);
    CHECK(same_bits_n(got, gots, n));
    for (size_t i = 0; i < n; i++) {
        double e = tanh((double)xs[i]);
        CHECK_MSG(ulp_error(got[i], e) <= 2.0, "tanh(%.9g) = %.9g, double tanh %.9g", xs[i], got[i], e);
        CHECK_MSG(signbit(got[i]) == signbit(xs[i]), "tanh(%.9g) = %.9g has the wrong sign", xs[i], got[i]);
        if (fabsf(xs[i]) < 1e-4f)   /* tanh x = x to float precision */
            CHECK_MSG(bits_of(got[i]) == bits_of(xs[i]), "tanh(%.9g) = %.9g, not x", xs[i], got[i]);
        if (fabsf(xs[i]) >= 9.02f)   /* 1 - tanh(9.02) < 2^-25: rounds to 1 */
            CHECK_MSG(got[i] == copysignf(1.0f, xs[i]), "tanh(%.9g) = %.9g, not ±1", xs[i], got[i]);
    }
    CHECK(atn_tanh_scalar(INFINITY) == 1.0f && atn_tanh_scalar(-INFINITY) == -1.0f);
    CHECK(bits_of(atn_tanh_scalar(-0.0f)) == 0x80000000u && bits_of(atn_tanh_scalar(0.0f)) == 0);
    float nan_in[9], nan_out[9];
    for (int i = 0; i < 9; i++)
        nan_in[i] = i == 3 || i == 8 ? NAN : 0.5f * (float)i;
    nan_in[5] = -NAN;
    atn_tanh_array(nan_out, nan_in, 9);
    CHECK(isnan(nan_out[3]) && isnan(nan_out[5]) && isnan(nan_out[8]));
    CHECK(!isnan(nan_out[4]) && nan_out[4] == atn_tanh_scalar(2.0f));   /* a NaN lane does not spill */
    CHECK(isnan(atn_tanh_scalar(NAN)));
}

/* GELU in double: 0.5 v (1 + tanh z), the negative tail as v / (1 + exp(-2z)) (exactly
   the same function, without the cancellation) */
static double gelu_ref(double v, double *zo) {
    double z = 0.7978845608028654 * (v + 0.044715 * v * v * v);
    *zo = z;
    return z < 0 ? v / (1 + exp(-2 * z)) : 0.5 * v * (1 + tanh(z));
}

static void test_gelu_sweep(void) {
    double rel3 = 0, norm = 0, max_abs = 0, old3 = 0;
    float w3 = 0, wn = 0;
    size_t mismatches = 0, points = 0, nb = 0;
    /* a grid of 2^-16 over [-12, 12], then every 1021st float of [0, 12] and its negative
       (the bit patterns: mostly small v) */
    const uint32_t step = 1021, top = 0x41400000u;   /* 12.0f */
    const int64_t grid = 24 * 65536;
    for (int64_t t = 0; t <= grid + 2 * (int64_t)(top / step); t++) {
        float v;
        if (t <= grid)
            v = (float)(-12.0 + (double)t / 65536.0);
        else {
            int64_t j = t - grid - 1;
            v = float_of((uint32_t)((j / 2) * step));
            if (j & 1)
                v = -v;
        }
        in[nb++] = v;
        if (nb < BLOCK && t < grid + 2 * (int64_t)(top / step))
            continue;
        memcpy(out, in, nb * sizeof(float));
        memcpy(outs, in, nb * sizeof(float));
        atn_gelu_tanh(out, nb);
        atn_gelu_tanh_scalar(outs, nb);
        for (size_t i = 0; i < nb; i++) {
            mismatches += bits_of(out[i]) != bits_of(outs[i]);
            double z, r = gelu_ref(in[i], &z), e = fabs(out[i] - r);
            if (e > max_abs)
                max_abs = e;
            if (fabs(r) > 1e-30) {
                double re = e / fabs(r);
                if (in[i] >= -3.0f && re > rel3) {
                    rel3 = re;
                    w3 = in[i];
                }
                double nr = re / ((1 + 2 * fabs(z)) * ldexp(1.0, -24));
                if (nr > norm) {
                    norm = nr;
                    wn = in[i];
                }
                if (in[i] >= -3.0f) {
                    float vv = in[i];
                    float old = 0.5f * vv * (1.0f + tanhf(0.7978845608028654f * (vv + 0.044715f * vv * vv * vv)));
                    if (fabs(old - r) / fabs(r) > old3)
                        old3 = fabs(old - r) / fabs(r);
                }
            }
        }
        points += nb;
        nb = 0;
    }
    fprintf(stderr, "gelu_tanh: %zu points in [-12, 12]: max relative error %.3g for v >= -3 (at %.9g; "
            "float formula with glibc tanhf %.3g), %.2f (1 + 2|z|) 2^-24 where |GELU| > 1e-30 (at %.9g), "
            "max absolute %.3g, %zu AVX2/scalar mismatches\n", points, rel3, w3, old3, norm, wn, max_abs, mismatches);
    CHECK_MSG(rel3 <= 1.5e-6, "max relative error %.3g at %.9g", rel3, w3);
    CHECK_MSG(norm <= 4.0, "error %.2f (1 + 2|z|) 2^-24 at %.9g", norm, wn);
    CHECK_MSG(max_abs <= 5e-7, "max absolute error %.3g", max_abs);
    CHECK_MSG(mismatches == 0, "%zu points where the AVX2 and scalar code differ", mismatches);
}

static void test_gelu_edges(void) {
    float v[] = {INFINITY, -INFINITY, NAN, 0.0f, -0.0f, 1e20f, -1e20f, -FLT_MAX, FLT_MAX, 3e12f, -3e12f, -20.0f,
                 -10.5f, 1e-40f, -1e-40f, 1.0f, -1.0f};
    size_t n = sizeof v / sizeof v[0];
    float g[sizeof v / sizeof v[0]], gs[sizeof v / sizeof v[0]];
    memcpy(g, v, sizeof v);
    memcpy(gs, v, sizeof v);
    atn_gelu_tanh(g, n);
    atn_gelu_tanh_scalar(gs, n);
    CHECK(same_bits_n(g, gs, n));
    CHECK(g[0] == INFINITY);
    CHECK(isnan(g[1]));   /* -inf · (1 + tanh(-inf)) = -inf · 0, as torch gives */
    CHECK(isnan(g[2]));
    CHECK(bits_of(g[3]) == 0 && bits_of(g[4]) == 0x80000000u);
    CHECK(g[5] == 1e20f && g[8] == FLT_MAX && g[9] == 3e12f);
    CHECK(g[6] == 0.0f && g[7] == 0.0f && g[10] == 0.0f && g[11] == 0.0f && g[12] == 0.0f);
    CHECK(g[13] == 0.5f * 1e-40f && g[14] == -0.5f * 1e-40f);   /* 0.5 v for tiny v, denormals kept */
    double z;
    CHECK_NEAR(g[15], gelu_ref(1.0, &z), 1e-7);
    CHECK_NEAR(g[16], gelu_ref(-1.0, &z), 1e-7);
}

/* Every length 0..40 at every offset 0..8, in place: the vector body and the scalar tail
   together give the scalar bits; nothing outside [off, off + len) is written. */
static void test_tails_and_dispatch(void) {
    float buf[64], ref[64], src[64];
    for (int i = 0; i < 64; i++)
        src[i] = -6.0f + 0.37f * (float)i;
    int bad = 0;
    for (int off = 0; off < 8; off++)
        for (int len = 0; len <= 40; len++) {
            memcpy(buf, src, sizeof buf);
            memcpy(ref, src, sizeof ref);
            atn_gelu_tanh(buf + off, (size_t)len);
            atn_gelu_tanh_scalar(ref + off, (size_t)len);
            bad += !same_bits_n(buf, ref, 64);
            memcpy(buf, src, sizeof buf);
            atn_tanh_array(buf + off, buf + off, (size_t)len);   /* in place */
            atn_tanh_array_scalar(ref, src, 64);
            for (int i = 0; i < 64; i++)
                bad += bits_of(buf[i]) != bits_of(i >= off && i < off + len ? ref[i] : src[i]);
        }
    CHECK_MSG(bad == 0, "%d lengths/offsets where the arrays differ from the scalar code", bad);

    /* the forward's activation is this GELU */
    float a[37], b[37];
    for (int i = 0; i < 37; i++)
        a[i] = b[i] = -4.0f + 0.25f * (float)i;
    atn_activate(a, 37, ATN_ACT_GELU_TANH);
    atn_gelu_tanh_scalar(b, 37);
    CHECK(same_bits_n(a, b, 37));
    fprintf(stderr, "activation: %s code\n", atn_activation_uses_avx2() ? "AVX2 + FMA" : "scalar");
}

int main(void) {
    test_tanh_edges();
    test_gelu_edges();
    test_tails_and_dispatch();
    test_tanh_sweep();
    test_gelu_sweep();
    return check_summary("engine-activation");
}
