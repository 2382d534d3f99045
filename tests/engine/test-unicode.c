/* Canonical ordering in atn_ustr_nfd (engine/tokenize/unicode.c): each run of non-starters is sorted
 * by combining class, stably (Unicode 15, section 3.11, D108), checked on a worked example
 * and, as a property, on random runs of 1..300 marks (the short-run insertion sort and the
 * long-run counting sort); a flood of 30k U+0301 + 30k U+0316 after "a" (5-13 s with the
 * old insertion sort) reorders within a second.  The classes come from the UCD by hand:
 * U+0334 1, U+05B0 10, U+0327 202, U+1DCE 214, U+0316 220, U+0301 230, U+0345 240. */
#include "check.h"
#include "tokenize/unicode.h"

#include <time.h>

static const uint32_t marks[] = {0x0334, 0x05B0, 0x0327, 0x1DCE, 0x0316, 0x0301, 0x0345};
static const int classes[] = {1, 10, 202, 214, 220, 230, 240};
enum { N_MARKS = sizeof marks / sizeof marks[0] };

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static int class_of(uint32_t cp) {
    for (int i = 0; i < N_MARKS; i++)
        if (marks[i] == cp)
            return classes[i];
    return 0;
}

int main(void) {
    for (int i = 0; i < N_MARKS; i++)
        CHECK(atn_uc_ccc(marks[i]) == classes[i]);

    /* a + acute (230) + grave below (220) -> a, grave below, acute; spans follow */
    atn_uchar in3[] = {{'a', 0, 1}, {0x0301, 1, 3}, {0x0316, 3, 5}};
    atn_ustr out = {0};
    CHECK(atn_ustr_nfd(in3, 3, &out) && out.n == 3);
    CHECK(out.v[0].cp == 'a' && out.v[1].cp == 0x0316 && out.v[2].cp == 0x0301);
    CHECK(out.v[1].start == 3 && out.v[2].start == 1);

    /* random runs between starters: a permutation, classes non-decreasing within each run,
     * equal classes in their input order (the spans number the input) */
    srand(7);
    for (int trial = 0; trial < 300; trial++) {
        size_t n = 0;
        atn_uchar in[700];
        for (int run = 0; run < 2; run++) {
            in[n] = (atn_uchar){'b', (int32_t)n, (int32_t)n + 1};
            n++;
            int len = 1 + rand() % (trial < 150 ? 40 : 300);
            for (int k = 0; k < len; k++, n++)
                in[n] = (atn_uchar){marks[rand() % N_MARKS], (int32_t)n, (int32_t)n + 1};
        }
        CHECK(atn_ustr_nfd(in, n, &out) && out.n == n);
        bool ok = true;
        int seen[700] = {0};
        for (size_t i = 0; i < n; i++) {
            seen[out.v[i].start]++;
            if (class_of(out.v[i].cp) == 0) {
                ok &= out.v[i].cp == in[out.v[i].start].cp && in[out.v[i].start].cp == 'b' &&
                      (size_t)out.v[i].start == i;   /* starters do not move */
                continue;
            }
            ok &= in[out.v[i].start].cp == out.v[i].cp;
            if (i > 0 && class_of(out.v[i - 1].cp) != 0) {
                int a = class_of(out.v[i - 1].cp), b = class_of(out.v[i].cp);
                ok &= a < b || (a == b && out.v[i - 1].start < out.v[i].start);
            }
        }
        for (size_t i = 0; i < n; i++)
            ok &= seen[i] == 1;
        CHECK_MSG(ok, "trial %d: not a stable sort by class", trial);
    }

    /* the flood */
    size_t n = 1 + 60000;
    atn_uchar *flood = malloc(n * sizeof *flood);
    flood[0] = (atn_uchar){'a', 0, 1};
    for (size_t i = 1; i < n; i++)
        flood[i] = (atn_uchar){i <= 30000 ? 0x0301 : 0x0316, (int32_t)i, (int32_t)i + 1};
    double t0 = now();
    CHECK(atn_ustr_nfd(flood, n, &out) && out.n == n);
    double dt = now() - t0;
    CHECK_MSG(dt < 1.0, "60k marks took %.2f s", dt);
    CHECK(out.v[1].cp == 0x0316 && out.v[1].start == 30001 && out.v[30000].cp == 0x0316 &&
          out.v[30001].cp == 0x0301 && out.v[30001].start == 1 && out.v[60000].start == 30000);
    free(flood);
    free(out.v);
    return check_summary("engine-unicode");
}
