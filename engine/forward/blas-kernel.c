/* Which OpenBLAS kernel runs, and which one should.
 *
 * Debian 12's OpenBLAS 0.3.21 does not know recent Intel/AMD CPU models and falls back to
 * its Prescott kernel, about 5x slower for sgemm.  The fix (OPENBLAS_CORETYPE) only works
 * if set before the library initialises, so the app re-executes itself (app/main.c); this
 * file only tells what is in use and what would be better. */
#include "attnscope.h"

#include <cblas.h>
#include <strings.h>
#include <string.h>


const char *atn_blas_core_name(void) {
    const char *name = openblas_get_corename();
    return name ? name : "unknown";
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
    if (atn_cpu_features()->avx512f)
        return "SkylakeX";
    if (core_in(core, avx2_cores))
        return NULL;
    if (atn_cpu_features()->avx2 && atn_cpu_features()->fma)
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
