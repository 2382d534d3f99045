/* Float32 bits and ulp distances: see test-floats.h. */
#include "test-floats.h"

#include <math.h>
#include <string.h>

uint32_t bits_of(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

float float_of(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

int same_bits_n(const float *a, const float *b, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (bits_of(a[i]) != bits_of(b[i]))
            return 0;
    return 1;
}

double ulp_error(float r, double e) {
    int ex;
    frexp(fabs(e), &ex);
    double ulp = ldexp(1.0, ex - 24);
    if (ulp < ldexp(1.0, -149))
        ulp = ldexp(1.0, -149);
    return fabs((double)r - e) / ulp;
}
