/* Which OpenBLAS kernel runs, and which one should.
 *
 * Debian 12's OpenBLAS 0.3.21 does not know recent Intel/AMD CPU models and falls back to
 * its Prescott kernel, about 5x slower for sgemm.  The fix (OPENBLAS_CORETYPE) only works
 * if set before the library initialises, so the app re-executes itself (app/main.c); this
 * file only tells what is in use and what would be better. */
#include "attnscope.h"

#include <cblas.h>
#include <cpuid.h>
#include <strings.h>
#include <string.h>


const char *atn_blas_core_name(void) {
    const char *name = openblas_get_corename();
    return name ? name : "unknown";
}

static bool cpu_has_avx512f(void) {
    unsigned a, b, c, d;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d))
        return false;
    return (b >> 16) & 1;
}

/* AVX2 and FMA, and the OS saves the YMM state (checked by the compiler builtin). */
static bool cpu_has_avx2(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}

static bool os_saves_zmm(void) {
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d) || !((c >> 27) & 1))  /* OSXSAVE */
        return false;
    unsigned lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return (lo & 0xe6) == 0xe6;   /* SSE, AVX, opmask, ZMM_Hi256, Hi16_ZMM */
}

static bool core_in(const char *core, const char *const *list) {
    for (int i = 0; list[i]; i++)
        if (strcasecmp(core, list[i]) == 0)
            return true;
    return false;
}

const char *atn_blas_better_core(void) {
    const char *core = atn_blas_core_name();
    static const char *const avx512_cores[] = {"SkylakeX", "Cooperlake", "SapphireRapids", NULL};
    static const char *const avx2_cores[] = {"Haswell", "Zen", "Skylake", "Excavator", NULL};
    /* Measured on an AVX-512 EPYC: SkylakeX 300-350 GFLOP/s with 2 threads, Haswell ~190,
       Prescott ~70, at bert-base's GEMM shapes. */
    if (core_in(core, avx512_cores))
        return NULL;
    if (cpu_has_avx512f() && os_saves_zmm())
        return "SkylakeX";
    if (core_in(core, avx2_cores))
        return NULL;
    if (cpu_has_avx2())
        return "Haswell";
    return NULL;
}

const char *atn_version(void) {
#ifdef ATN_VERSION
    return ATN_VERSION;
#else
    return "0.1.0";
#endif
}
