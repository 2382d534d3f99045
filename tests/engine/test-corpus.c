/* atn_corpus_run: every non-empty line becomes one capture, in order, each the same as a
 * run of that line alone; invalid UTF-8 lines are skipped and reported with their line
 * numbers; the progress callback sees fractions up to 1 and can stop the pass; toy models
 * are refused.  On the small Hugging Face test model (tests/hf/models/f32). */
#include "attnscope.h"
#include "check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct seen {
    const atn_model *model;
    int count;
    const char *const *expect;   /* the sentences, in order */
    int stop_after;              /* progress says stop once count reaches this (0: never) */
    double last_fraction;
    int progress_calls;
} seen;

static atn_status consume(const atn_capture *cap, void *user, atn_error *err) {
    seen *s = user;
    /* the capture equals a run of the same sentence on its own */
    atn_encoding *enc = NULL;
    CHECK(atn_model_encode(s->model, s->expect[s->count], NULL, &enc, err) == ATN_OK);
    atn_run *run = atn_run_new(s->model);
    atn_run_options o;
    atn_run_options_init(&o);
    CHECK(atn_run_forward(run, enc, &o, err) == ATN_OK);
    const atn_capture *alone = atn_run_capture(run);
    CHECK(alone->n == cap->n);
    if (alone->n == cap->n) {
        size_t count = (size_t)cap->n_layers * cap->n_heads * cap->n * cap->n;
        CHECK(memcmp(alone->attn, cap->attn, count * sizeof(float)) == 0);
    }
    atn_run_free(run);
    atn_encoding_free(enc);
    s->count++;
    return ATN_OK;
}

static atn_status count_only(const atn_capture *cap, void *user, atn_error *err) {
    (void)cap, (void)err;
    ((seen *)user)->count++;
    return ATN_OK;
}

static bool progress(double fraction, atn_stage stage, void *user) {
    seen *s = user;
    CHECK(fraction >= s->last_fraction && fraction <= 1.0);
    s->last_fraction = fraction;
    s->progress_calls++;
    return !(s->stop_after && s->count >= s->stop_after);
}

int main(void) {
    const char *src = getenv("ATN_SOURCE_ROOT");
    char path[4096];
    snprintf(path, sizeof path, "%s/tests/hf/models/f32", src ? src : ".");
    atn_error err = {0};
    atn_model *m = atn_model_open(path, NULL, NULL, &err);
    CHECK_MSG(m != NULL, "%s", err.message);
    if (!m)
        return check_summary("corpus");
    static const char text[] = "the cat sat on the mat\n"
                               "\n"
                               "   \t \r\n"
                               "bad \xff\xfe bytes\n"
                               "we like tea\r\n"
                               "another \xc3 broken line\n"
                               "the mat\n";   /* 7 lines: 3 sentences, 2 skipped, 2 blank */
    static const char *const sentences[] = {"the cat sat on the mat", "we like tea", "the mat"};
    FILE *f = fmemopen((void *)text, sizeof text - 1, "rb");
    seen s = {m, 0, sentences, 0, 0, 0};
    atn_corpus_report rep;
    CHECK(atn_corpus_run(m, f, sizeof text - 1, NULL, consume, progress, &s, &rep, &err) == ATN_OK);
    fclose(f);
    CHECK(s.count == 3 && rep.sentences == 3 && rep.lines == 7 && rep.skipped == 2 && rep.truncated == 0);
    CHECK(rep.skip_line[0] == 4 && rep.skip_line[1] == 6);
    CHECK(strstr(rep.skip_reason[0], "UTF-8") != NULL);
    CHECK(s.progress_calls >= 2 && s.last_fraction == 1.0);

    /* stopped by progress: ATN_E_CANCELLED, with what was done so far */
    f = fmemopen((void *)text, sizeof text - 1, "rb");
    seen s2 = {m, 0, sentences, 1, 0, 0};
    CHECK(atn_corpus_run(m, f, 0, NULL, consume, progress, &s2, &rep, &err) == ATN_E_CANCELLED);
    fclose(f);
    CHECK(rep.sentences == 1 && s2.count == 1);

    /* a NUL byte makes a line a bad one (it would cut the sentence); a line longer than
     * ATN_CORPUS_LINE_MAX is cut there, at a character boundary, and still runs */
    static const char *const nul_sentences[] = {"the cat sat on the mat", "the mat"};
    static const char nul_text[] = "the cat sat on the mat\nthe\0cat\nthe mat\n";
    f = fmemopen((void *)nul_text, sizeof nul_text - 1, "rb");
    seen s3 = {m, 0, nul_sentences, 0, 0, 0};
    CHECK(atn_corpus_run(m, f, 0, NULL, consume, NULL, &s3, &rep, &err) == ATN_OK);
    fclose(f);
    CHECK(rep.lines == 3 && rep.sentences == 2 && rep.skipped == 1 && rep.skip_line[0] == 2 && rep.cut == 0);
    CHECK_STR(rep.skip_reason[0], "a NUL byte at byte 3: not text");
    size_t long_len = ATN_CORPUS_LINE_MAX + 1000;   /* "\xc3\xa9" (é) repeated: the cut lands inside one */
    char *long_text = malloc(long_len + 2);
    long_text[0] = 'x';   /* the pairs start at odd offsets: byte LINE_MAX - 1 is a lead byte */
    for (size_t i = 1; i + 1 < long_len; i += 2)
        long_text[i] = '\xc3', long_text[i + 1] = '\xa9';
    long_text[long_len - 1] = 'x';
    long_text[long_len] = '\n';
    long_text[long_len + 1] = 0;
    f = fmemopen(long_text, long_len + 1, "rb");
    CHECK(atn_corpus_run(m, f, 0, NULL, count_only, NULL, &s3, &rep, &err) == ATN_OK);
    fclose(f);
    CHECK(rep.lines == 1 && rep.sentences == 1 && rep.cut == 1 && rep.skipped == 0);
    free(long_text);

    /* a toy model has no tokenizer */
    atn_model *toy = atn_model_open("worked-example", NULL, NULL, &err);
    f = fmemopen((void *)text, sizeof text - 1, "rb");
    CHECK(toy && atn_corpus_run(toy, f, 0, NULL, consume, NULL, &s, &rep, &err) == ATN_E_INVALID);
    CHECK(strstr(err.message, "toy model") != NULL);
    fclose(f);
    atn_model_free(toy);
    atn_model_free(m);
    return check_summary("corpus");
}
