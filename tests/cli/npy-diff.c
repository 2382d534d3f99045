/* npy-diff GOT WANT TOL: exit 0 when two float32 .npy files have the same shape and every
 * value agrees within TOL; prints the max difference either way. */
#include "attnscope.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: npy-diff GOT WANT TOL\n");
        return 2;
    }
    float *a, *b;
    int64_t sa[8], sb[8];
    int na, nb;
    atn_error err = {0};
    if (atn_npy_read_f32(argv[1], &a, sa, &na, 8, &err) || atn_npy_read_f32(argv[2], &b, sb, &nb, 8, &err)) {
        fprintf(stderr, "%s\n", err.message);
        return 1;
    }
    size_t count = 1;
    if (na != nb) {
        fprintf(stderr, "dimensions differ: %d vs %d\n", na, nb);
        return 1;
    }
    for (int i = 0; i < na; i++) {
        if (sa[i] != sb[i]) {
            fprintf(stderr, "shape differs in dimension %d: %lld vs %lld\n", i, (long long)sa[i], (long long)sb[i]);
            return 1;
        }
        count *= (size_t)sa[i];
    }
    double tol = atof(argv[3]), worst = 0;
    for (size_t i = 0; i < count; i++) {
        double d = fabs((double)a[i] - b[i]);
        if (!(d <= worst))
            worst = d;
    }
    printf("max |diff| %.3g over %zu values\n", worst, count);
    free(a);
    free(b);
    return worst <= tol ? 0 : 1;
}
