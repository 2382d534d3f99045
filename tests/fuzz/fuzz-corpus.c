/* Fuzz target: a corpus file (arbitrary bytes: any line lengths, CR/LF mixes, NUL bytes,
 * invalid UTF-8, text over the position limit) streamed through atn_corpus_run on the small
 * Hugging Face test model.  Checks: the counts add up (sentences + skipped <= lines, every
 * skip has a reason), every capture has finite probabilities whose unmasked rows sum to 1,
 * and a stop from the progress callback is obeyed (progress runs every few lines: a stop
 * may come a few sentences after it was first wanted, never before). */
#include "fuzz-common.h"

#include <math.h>

static atn_model *model;

typedef struct pass {
    int64_t captures;
    int stop_at;   /* progress says stop after this many captures (0: never) */
} pass;

static atn_status check_capture(const atn_capture *cap, void *user, atn_error *err) {
    pass *p = user;
    p->captures++;
    if (!cap || cap->n < 2 || !cap->attn)
        fuzz_fail("corpus capture", "empty");
    const int32_t *mask = cap->enc->mask;
    size_t n = (size_t)cap->n;
    for (size_t r = 0; r < (size_t)cap->n_layers * cap->n_heads * n; r++) {
        if (mask && !mask[r % n])
            continue;
        double sum = 0;
        for (size_t j = 0; j < n; j++) {
            float v = cap->attn[r * n + j];
            if (!isfinite(v) || v < 0)
                fuzz_fail("corpus capture", "a probability is not finite or negative");
            sum += v;
        }
        if (fabs(sum - 1.0) > 1e-4)
            fuzz_fail("corpus capture", "a row does not sum to 1");
    }
    return ATN_OK;
}

static bool progress(double fraction, atn_stage stage, void *user) {
    pass *p = user;
    if (!(fraction >= 0 && fraction <= 1))
        fuzz_fail("corpus progress", "fraction out of [0, 1]");
    return !(p->stop_at && p->captures >= p->stop_at);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!model) {
        char path[4096];
        snprintf(path, sizeof path, "%s/tests/hf/models/f32", fuzz_source_root());
        atn_error err = {0};
        model = atn_model_open(path, NULL, NULL, &err);
        if (!model) {
            fprintf(stderr, "%s\n", err.message);
            exit(1);
        }
    }
    if (size < 1 || size > 1 << 16)
        return 0;
    pass p = {0, data[0] & 3};   /* byte 0: stop after 0 (never) .. 3 captures */
    static char empty[1];          /* fmemopen refuses a size of 0: one NUL byte, a blank line */
    FILE *f = size > 1 ? fmemopen((void *)(data + 1), size - 1, "rb") : fmemopen(empty, 1, "rb");
    if (!f)
        return 0;
    atn_run_options opts;
    atn_run_options_init(&opts);
    opts.keep_trace_inputs = false;
    atn_corpus_report rep;
    atn_error err = {0};
    atn_status st = atn_corpus_run(model, f, (double)(size - 1), &opts, check_capture, progress, &p, &rep, &err);
    fclose(f);
    if (st != ATN_OK && st != ATN_E_CANCELLED)
        fuzz_fail("corpus run failed", err.message);
    if (st == ATN_E_CANCELLED && (!p.stop_at || p.captures < p.stop_at))
        fuzz_fail("corpus", "cancelled without being asked");
    if (rep.sentences != p.captures || rep.sentences + rep.skipped > rep.lines)
        fuzz_fail("corpus", "the report's counts do not add up");
    for (int64_t i = 0; i < rep.skipped && i < 3; i++)
        if (!rep.skip_reason[i][0] || rep.skip_line[i] < 1 || rep.skip_line[i] > rep.lines)
            fuzz_fail("corpus", "a skipped line without a reason or a line number");
    return 0;
}
