/* Milliseconds per forward pass, GPU against CPU, for BERT shapes with random weights.
 * Usage: bench-cuda [--shape base|large] [--tokens N] [--device cpu|cuda] [--reps R]
 *                   [--precision fp32|fp16|bf16] [--no-capture] [--pageable]
 * Prints one line: shape tokens device precision capture ms_per_forward (median of R).
 * The full capture (every probability and trace input) is copied to host memory unless
 * --no-capture (then only the hidden states and the last layer's buffers come back), into
 * page-locked memory (atn_run_options.pinned_host: the run is reused) unless --pageable. */
#include "forward/backend.h"
#include "synth-model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    /* as app/main.c: Debian 12's OpenBLAS picks its slowest kernel on recent CPUs, and
       OPENBLAS_CORETYPE only counts before the library starts, so re-execute once */
    const char *better = atn_blas_better_core();
    if (better && !getenv("OPENBLAS_CORETYPE")) {
        setenv("OPENBLAS_CORETYPE", better, 1);
        execv("/proc/self/exe", argv);
    }
    const char *shape = "base", *device = "cuda", *prec = "fp32";
    int tokens = 128, reps = 10;
    bool capture = true, pinned = true;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--shape") && i + 1 < argc)
            shape = argv[++i];
        else if (!strcmp(argv[i], "--tokens") && i + 1 < argc)
            tokens = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--device") && i + 1 < argc)
            device = argv[++i];
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--precision") && i + 1 < argc)
            prec = argv[++i];
        else if (!strcmp(argv[i], "--no-capture"))
            capture = false;
        else if (!strcmp(argv[i], "--pageable"))
            pinned = false;
        else {
            fprintf(stderr, "usage: %s [--shape base|large] [--tokens N] [--device cpu|cuda] [--reps R] "
                    "[--precision fp32|fp16|bf16] [--no-capture] [--pageable]\n", argv[0]);
            return 2;
        }
    }
    bool large = !strcmp(shape, "large");
    synth_shape sh = large ? (synth_shape){"bert-large", 24, 1024, 16, 4096, 30522, 512, ATN_ACT_GELU, false, false}
                           : (synth_shape){"bert-base", 12, 768, 12, 3072, 30522, 512, ATN_ACT_GELU, false, false};
    if (tokens < 1 || tokens > 512 || reps < 1 || reps > 1000) {
        fprintf(stderr, "bench-cuda: --tokens 1..512, --reps 1..1000\n");
        return 2;
    }
    atn_run_options o;
    atn_run_options_init(&o);
    o.device = !strcmp(device, "cpu") ? ATN_DEVICE_CPU : ATN_DEVICE_CUDA;
    o.precision = !strcmp(prec, "fp16") ? ATN_PRECISION_FP16 : !strcmp(prec, "bf16") ? ATN_PRECISION_BF16
                                                                                      : ATN_PRECISION_FP32;
    o.keep_attention = o.keep_trace_inputs = capture;
    o.pinned_host = pinned;
    atn_model *m = synth_model_new(&sh, 42);
    atn_encoding *enc = m ? synth_encoding(m, tokens, 0, 1) : NULL;
    atn_run *run = m ? atn_run_new(m) : NULL;
    if (!run || !enc) {
        fprintf(stderr, "bench-cuda: out of memory building %s\n", sh.name);
        return 1;
    }
    atn_error err = {0};
    double t0 = now_ms();
    if (atn_run_forward(run, enc, &o, &err) != ATN_OK) {   /* warm-up: module, upload, allocations */
        fprintf(stderr, "bench-cuda: %s\n", err.message);
        return o.device == ATN_DEVICE_CUDA ? 77 : 1;
    }
    double first = now_ms() - t0;
    if (o.device == ATN_DEVICE_CUDA)
        atn_run_forward(run, enc, &o, &err);   /* a second warm-up: cuBLAS picks its kernels */
    double *t = malloc((size_t)reps * sizeof *t);
    for (int r = 0; r < reps; r++) {
        t0 = now_ms();
        if (atn_run_forward(run, enc, &o, &err) != ATN_OK) {
            fprintf(stderr, "bench-cuda: %s\n", err.message);
            return 1;
        }
        t[r] = now_ms() - t0;
    }
    qsort(t, (size_t)reps, sizeof *t, cmp_double);
    printf("%s %d %s %s %s%s %.2f (first run %.0f ms, min %.2f, max %.2f, %d reps; OpenBLAS kernel %s)\n", sh.name,
           tokens, device, prec, capture ? "full-capture" : "no-capture",
           o.device == ATN_DEVICE_CUDA && capture && !pinned ? "-pageable" : "", t[reps / 2], first, t[0], t[reps - 1], reps,
           atn_blas_core_name());
    free(t);
    atn_run_free(run);
    atn_encoding_free(enc);
    atn_model_free(m);
    return 0;
}
