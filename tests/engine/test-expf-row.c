/* The softmax's exponentials four at a time (engine/forward/expf-row.c) against the scalar
 * loop they replace, x = row[j] - mx; row[j] = x < -110 ? 0 : expf(x), bit for bit: every
 * 613th float from -0 down to -120 (about 1.8 million, the fallback below -87 included),
 * the ends of the vector range, NaN, the infinities, positive x, subnormals, and rows of
 * every length 0..11 (the tail) with a row maximum.  On a CPU with AVX2 and FMA the vector
 * path must be on (its self-check against this libm's expf passed): otherwise this test
 * would check only the scalar fallback.  (Session 17 compared all 1,129,912,177 floats in
 * [-110, -0] once: no difference.) */
#include "check.h"
#include "forward/expf-row.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static float want_of(float v, float mx) {
    float x = v - mx;
    return x < -110.0f ? 0.0f : expf(x);
}

static int same_bits(float a, float b) {
    return memcmp(&a, &b, sizeof a) == 0;
}

/* atn_expf_row over v[0..n) with mx; the number of cells whose bits differ from want_of */
static int row_differs(const float *v, int32_t n, float mx) {
    float row[64];
    memcpy(row, v, (size_t)n * sizeof *row);
    atn_expf_row(row, mx, n);
    int bad = 0;
    for (int32_t j = 0; j < n; j++)
        if (!same_bits(row[j], want_of(v[j], mx))) {
            if (bad++ < 3)
                fprintf(stderr, "x = %a - %a: got %a, want %a\n", v[j], mx, row[j], want_of(v[j], mx));
        }
    return bad;
}

int main(void) {
#if defined(__x86_64__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        CHECK_MSG(atn_expf_row_vector(), "AVX2 + FMA but the vector path is off (its self-check against expf failed)");
#endif
    printf("vector path: %s\n", atn_expf_row_vector() ? "on" : "off");

    /* a sweep of x from -0 to -120, 64 at a time (mx = 0) */
    float lo = -120.0f, v[64];
    uint32_t top;
    memcpy(&top, &lo, sizeof top);
    int bad = 0, k = 0;
    long count = 0;
    for (uint64_t u = 0x80000000u; u <= top; u += 613) {
        uint32_t b = (uint32_t)u;
        memcpy(&v[k], &b, sizeof b);
        if (++k == 64)
            bad += row_differs(v, 64, 0.0f), count += k, k = 0;
    }
    bad += row_differs(v, k, 0.0f), count += k;
    CHECK_MSG(bad == 0, "%d of %ld swept exponents differ from expf's", bad, count);

    /* the edges of the vector range and what must take the scalar loop */
    const float special[] = {-87.0f, nextafterf(-87.0f, 0.0f), nextafterf(-87.0f, -INFINITY), -0.0f, 0.0f,
                             -FLT_MIN, -FLT_TRUE_MIN, -1e-30f, NAN, -INFINITY, INFINITY, 1.0f, 0.5f, 88.0f,
                             -103.5f, -103.97f, -109.99f, -110.0f, -110.01f, -FLT_MAX, -3.0f, -1.0f};
    int ns = (int)(sizeof special / sizeof special[0]);
    for (int s = 0; s < ns; s++) {   /* each special in every lane of a group of four */
        float g[8] = {-1.5f, -2.5f, -0.25f, -7.0f, -1.5f, -2.5f, -0.25f, -7.0f};
        for (int lane = 0; lane < 4; lane++) {
            g[lane] = special[s];
            CHECK_MSG(row_differs(g, 8, 0.0f) == 0, "special x = %a in lane %d", special[s], lane);
            g[lane] = -1.0f;
        }
    }
    /* rows of every length (the tail after the groups of four) with a row maximum */
    for (int32_t n = 0; n < 12; n++) {
        float r[12], mx = -FLT_MAX;
        for (int32_t j = 0; j < n; j++) {
            r[j] = (float)((j * 37) % 11) * 1.7f - 9.0f;
            mx = r[j] > mx ? r[j] : mx;
        }
        CHECK_MSG(row_differs(r, n, n ? mx : 0.0f) == 0, "a row of %d", n);
    }
    /* a causal row: scores + ATN_MASK_MIN after the diagonal, as the softmax adds it */
    float c[40], mx = -FLT_MAX;
    for (int32_t j = 0; j < 40; j++) {
        c[j] = (float)j * 0.3f - 4.0f + (j > 17 ? -3.4028234663852886e38f : 0.0f);
        mx = c[j] > mx ? c[j] : mx;
    }
    CHECK(row_differs(c, 40, mx) == 0);
    return check_summary("engine-expf-row");
}
