/* The one CPU-feature probe (attnscope.h, "CPU features"): what this CPU and its OS can run,
 * and which of the engine's vector paths the documented overrides leave on.  Every other
 * place asks here: the packed AVX-512 forward (forward/cpu-kernels.c), the AVX2 activations
 * (forward/activation.c), F16C rounding and the bf16/fp16 note (forward/precision.c), the
 * OpenBLAS core advice (forward/blas-kernel.c), the window's statistics (ui/atn-result.c)
 * and `attnscope devices` (which the test scripts read instead of /proc/cpuinfo). */
#include "attnscope.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>

/* The OS saves the AVX-512 state (XCR0: SSE, AVX, opmask, ZMM_Hi256, Hi16_ZMM).  libgcc's
   builtins check this too in recent versions; asked here so an older one cannot say yes. */
static bool os_saves_zmm(void) {
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d) || !((c >> 27) & 1))   /* OSXSAVE */
        return false;
    unsigned lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    (void)hi;
    return (lo & 0xe6) == 0xe6;
}

/* Bit `bit` of register reg (0 eax, 1 ebx, 2 ecx, 3 edx) of CPUID leaf/subleaf: for the
 * features whose __builtin_cpu_supports names clang does not know (f16c, avx512fp16,
 * avx512bf16), so that the file builds with both compilers (the fuzz build is clang's). */
static bool cpuid_bit(unsigned leaf, unsigned sub, int reg, int bit) {
    unsigned r[4];
    if (!__get_cpuid_count(leaf, sub, &r[0], &r[1], &r[2], &r[3]))
        return false;
    return (r[reg] >> bit) & 1;
}
#endif

static atn_cpu_flags flags;
static pthread_once_t flags_once = PTHREAD_ONCE_INIT;

static void probe(void) {
    atn_cpu_flags f = {0};
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_cpu_init();
    /* the builtins answer false for an AVX feature unless the OS saves the ymm state (XGETBV) */
    f.avx = __builtin_cpu_supports("avx");
    f.avx2 = __builtin_cpu_supports("avx2");
    f.fma = __builtin_cpu_supports("fma");
    f.f16c = cpuid_bit(1, 0, 2, 29) && f.avx;   /* VEX-encoded: needs the ymm state */
    bool zmm = os_saves_zmm();
    f.avx512f = __builtin_cpu_supports("avx512f") && zmm;
    f.avx512bw = __builtin_cpu_supports("avx512bw") && zmm;
    f.avx512vl = __builtin_cpu_supports("avx512vl") && zmm;
    f.avx512_bf16 = cpuid_bit(7, 1, 0, 5) && zmm;    /* CPUID.(7,1):EAX[5] */
    f.avx512_fp16 = cpuid_bit(7, 0, 3, 23) && zmm;   /* CPUID.(7,0):EDX[23] */
#endif
    const char *kernels = getenv("ATTNSCOPE_CPU_KERNELS");
    f.packed_kernels = f.avx512f && !(kernels && strcmp(kernels, "blas") == 0);
    f.avx2_activations = f.avx2 && f.fma && !getenv("ATTNSCOPE_NO_AVX2");
    f.f16c_rounding = f.f16c && !getenv("ATTNSCOPE_NO_F16C");
    flags = f;
}

const atn_cpu_flags *atn_cpu_features(void) {
    pthread_once(&flags_once, probe);
    return &flags;
}

static char names[160];
static pthread_once_t names_once = PTHREAD_ONCE_INIT;

static void make_names(void) {
    const atn_cpu_flags *f = atn_cpu_features();
    const struct { bool on; const char *name; } all[] = {
        {f->avx, "avx"}, {f->avx2, "avx2"}, {f->fma, "fma"}, {f->f16c, "f16c"},
        {f->avx512f, "avx512f"}, {f->avx512bw, "avx512bw"}, {f->avx512vl, "avx512vl"},
        {f->avx512_bf16, "avx512_bf16"}, {f->avx512_fp16, "avx512_fp16"},
    };
    size_t n = 0;
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (all[i].on)
            n += (size_t)snprintf(names + n, sizeof names - n, "%s%s", n ? " " : "", all[i].name);
}

const char *atn_cpu_features_str(void) {
    pthread_once(&names_once, make_names);
    return names;
}
