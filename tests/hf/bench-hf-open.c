/* How long opening a Hugging Face folder takes (config, header validation, mapping,
 * tokenizer; F16/BF16 conversion when the file has them).  The folder comes from argv[1]
 * or ATN_HF_BENCH_MODEL; make a bert-base sized one with
 *   /usr/bin/python3 tests/hf/gen_models.py --bert-base /tmp/attnscope-bert-base
 * Without one the benchmark is skipped (exit 77). */
#include "attnscope.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    const char *dir = argc > 1 ? argv[1] : getenv("ATN_HF_BENCH_MODEL");
    struct stat st;
    if (!dir || stat(dir, &st) != 0) {
        fprintf(stderr, "bench-hf-open: no model folder (argv[1] or ATN_HF_BENCH_MODEL); "
                "skipped\n");
        return 77;
    }
    enum { RUNS = 10 };
    double t[RUNS];
    atn_error err = {0};
    for (int i = 0; i < RUNS; i++) {
        double t0 = now_ms();
        atn_model *m = atn_model_open_hf(dir, NULL, NULL, &err);
        t[i] = now_ms() - t0;
        if (!m) {
            fprintf(stderr, "bench-hf-open: %s\n", err.message);
            return 1;
        }
        if (i == RUNS - 1) {
            const atn_config *c = atn_model_config(m);
            printf("%s: %d layers, d %d, %d heads, vocab %d\n", dir, c->n_layers, c->d_model,
                   c->n_heads, c->vocab_size);
        }
        atn_model_free(m);
    }
    qsort(t, RUNS, sizeof t[0], cmp_double);
    printf("open: min %.1f ms, median %.1f ms, max %.1f ms (%d runs, first included)\n", t[0],
           t[RUNS / 2], t[RUNS - 1], RUNS);
    return 0;
}
