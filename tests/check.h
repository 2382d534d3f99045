/* A tiny test harness: CHECK macros that report file:line and the values that differ,
 * and a summary.  Each test program is one meson test; exit 77 means skipped. */
#ifndef ATN_TEST_CHECK_H
#define ATN_TEST_CHECK_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int check_failures = 0;
static int check_count = 0;

#define CHECK(cond) do { check_count++; if (!(cond)) { check_failures++; \
    fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); } } while (0)

#define CHECK_MSG(cond, ...) do { check_count++; if (!(cond)) { check_failures++; \
    fprintf(stderr, "%s:%d: CHECK failed: %s: ", __FILE__, __LINE__, #cond); \
    fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } } while (0)

#define CHECK_NEAR(a, b, tol) do { double _a = (a), _b = (b); check_count++; \
    if (!(fabs(_a - _b) <= (tol))) { check_failures++; \
    fprintf(stderr, "%s:%d: %s = %.8g, expected %s = %.8g (tol %g)\n", __FILE__, __LINE__, \
            #a, _a, #b, _b, (double)(tol)); } } while (0)

#define CHECK_STR(a, b) do { const char *_a = (a), *_b = (b); check_count++; \
    if (!_a || !_b || strcmp(_a, _b) != 0) { check_failures++; \
    fprintf(stderr, "%s:%d: %s = \"%s\", expected \"%s\"\n", __FILE__, __LINE__, #a, \
            _a ? _a : "(null)", _b ? _b : "(null)"); } } while (0)

/* Compares two float arrays; prints the first differing values and the max difference. */
static inline int check_arrays_near(const char *what, const float *got, const float *want,
                                    size_t n, double tol, const char *file, int line) {
    double maxd = 0; size_t worst = 0, shown = 0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)got[i] - (double)want[i]);
        if (!(d <= maxd)) { maxd = d; worst = i; }
        if (!(d <= tol) && shown < 5) {
            fprintf(stderr, "%s:%d: %s[%zu] = %.8g, expected %.8g\n", file, line, what, i,
                    got[i], want[i]);
            shown++;
        }
    }
    check_count++;
    if (!(maxd <= tol)) {
        check_failures++;
        fprintf(stderr, "%s:%d: %s: max |diff| %.3g at %zu (tol %g)\n", file, line, what, maxd,
                worst, tol);
        return 0;
    }
    return 1;
}
#define CHECK_ARRAY_NEAR(what, got, want, n, tol) \
    check_arrays_near(what, got, want, n, tol, __FILE__, __LINE__)

static inline int check_summary(const char *name) {
    fprintf(stderr, "%s: %d checks, %d failed\n", name, check_count, check_failures);
    return check_failures ? 1 : 0;
}

#endif
