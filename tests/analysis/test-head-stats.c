/* engine/analysis/head-stats.c: per-head statistics and labels on constructed heads (previous, next,
 * [CLS], [SEP], punctuation, uniform), corpus averaging, shape errors, masking; punctuation
 * tokens; and the pattern classifier (atn_pattern_classify) at every threshold, one ulp
 * below, exactly at and one ulp above, so that moving a threshold or turning a >= into a >
 * fails here; the order in which the rules are tried; the label names; and the clearest-head
 * rule (atn_stats_clearest_head) at its threshold, over its measures and at ties; the
 * progress callback and cancellation of atn_stats_compute_progress. */
#include "analysis.h"
#include "check.h"
#include "fake-capture.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- statistics on constructed captures ---------------------------------------------- */

static void test_stats(void) {
    static const char *const toks[6] = {"[CLS]", "the", "cat", ",", "sat", "[SEP]"};
    static fake f;
    fake_init(&f, 2, 3, 6, toks);
    set_pattern(head_of(&f, 0, 0), 6, 0);
    set_pattern(head_of(&f, 0, 1), 6, 1);
    set_pattern(head_of(&f, 0, 2), 6, 2);
    set_pattern(head_of(&f, 1, 0), 6, 3);
    set_pattern(head_of(&f, 1, 1), 6, 4);
    set_pattern(head_of(&f, 1, 2), 6, 5);
    atn_stats *st;
    CHECK(atn_stats_compute(&f.cap, &st, NULL) == ATN_OK);
    const atn_head_stats *prev = &st->heads[0], *next = &st->heads[1], *cls = &st->heads[2];
    const atn_head_stats *punct = &st->heads[3], *uni = &st->heads[4], *sep = &st->heads[5];
    CHECK_NEAR(prev->prev, 1.0, 1e-12);
    CHECK_NEAR(prev->self, 1.0 / 6, 1e-12);      /* only row 0 */
    CHECK_NEAR(prev->next, 0.0, 1e-12);
    CHECK_NEAR(prev->entropy, 0.0, 1e-12);
    CHECK_NEAR(prev->distance, 5.0 / 6, 1e-12);   /* rows 1..5 at distance 1 */
    CHECK_STR(atn_pattern_name(prev->pattern), "previous");
    CHECK_NEAR(next->next, 1.0, 1e-12);
    CHECK_STR(atn_pattern_name(next->pattern), "next");
    CHECK_NEAR(cls->cls, 1.0, 1e-12);
    CHECK_STR(atn_pattern_name(cls->pattern), "vertical [CLS]");
    CHECK_NEAR(punct->punct, 1.0, 1e-12);
    CHECK_STR(atn_pattern_name(punct->pattern), "vertical punctuation");
    CHECK_NEAR(sep->sep, 1.0, 1e-12);
    CHECK_STR(atn_pattern_name(sep->pattern), "vertical [SEP]");
    /* uniform over 6: entropy log2 6; distance sum_i sum_j |i-j| / 36 = 70 / 36 */
    CHECK_NEAR(uni->entropy, log2(6.0), 1e-6);
    CHECK_NEAR(uni->entropy_norm, 1.0, 1e-6);
    CHECK_NEAR(uni->distance, 70.0 / 36, 1e-6);
    CHECK_NEAR(uni->cls, 1.0 / 6, 1e-6);
    CHECK_NEAR(uni->punct, 1.0 / 6, 1e-6);
    CHECK_STR(atn_pattern_name(uni->pattern), "broad");
    CHECK(st->n_sentences == 1 && st->n_tokens == 6);
    atn_stats_free(st);

    /* corpus averaging: the same slot is a previous head in one sentence, next in another */
    atn_stats *acc = atn_stats_new(2, 3, NULL);
    CHECK(acc != NULL);
    CHECK(atn_stats_add(acc, &f.cap, NULL) == ATN_OK);
    set_pattern(head_of(&f, 0, 0), 6, 1);
    CHECK(atn_stats_add(acc, &f.cap, NULL) == ATN_OK);
    CHECK(atn_stats_finish(acc, NULL) == ATN_OK);
    CHECK_NEAR(acc->heads[0].prev, 0.5, 1e-12);
    CHECK_NEAR(acc->heads[0].next, 0.5, 1e-12);
    CHECK(acc->n_sentences == 2);
    atn_error err = {0};
    CHECK(atn_stats_add(acc, &f.cap, &err) == ATN_E_INVALID);
    CHECK(atn_stats_finish(acc, NULL) == ATN_OK);   /* a second finish does not divide again */
    CHECK_NEAR(acc->heads[0].prev, 0.5, 1e-12);
    atn_stats_free(acc);

    /* shape mismatch is an error with a message */
    atn_stats *wrong = atn_stats_new(3, 3, NULL);
    CHECK(atn_stats_add(wrong, &f.cap, &err) == ATN_E_SHAPE && strstr(err.message, "expected 3 x 3"));
    atn_stats_free(wrong);
    atn_stats_free(NULL);

    /* masking: a padded last token is neither a query row nor a key */
    static fake g;
    static const char *const t2[5] = {"[CLS]", "a", "b", "[SEP]", "[PAD]"};
    fake_init(&g, 1, 1, 5, t2);
    g.mask[4] = 0;
    float *a = head_of(&g, 0, 0);
    for (int i = 0; i < 5; i++)
        a[i * 5 + (i > 0 ? i - 1 : 0)] = 1;
    CHECK(atn_stats_compute(&g.cap, &st, NULL) == ATN_OK);
    CHECK_NEAR(st->heads[0].prev, 1.0, 1e-12);
    CHECK(st->n_tokens == 4);
    atn_stats_free(st);
}

static void test_punct(void) {
    CHECK(atn_token_is_punct(","));
    CHECK(atn_token_is_punct("\xe3\x80\x82"));            /* 。 */
    CHECK(atn_token_is_punct("\xe2\x80\x94\xe2\x80\x94")); /* —— */
    CHECK(atn_token_is_punct("##."));
    CHECK(atn_token_is_punct("\xef\xbc\x8c"));            /* ， */
    CHECK(!atn_token_is_punct("a,"));
    CHECK(!atn_token_is_punct("[CLS]"));
    CHECK(!atn_token_is_punct("\xe6\x88\x91"));           /* 我 */
    CHECK(!atn_token_is_punct(""));
    CHECK(!atn_token_is_punct(NULL));
}

/* ---- the classifier at its thresholds --------------------------------------------------- */

/* The thresholds as engine/analysis/head-stats.c documents them (TH_*).  Written out here on purpose:
 * the test pins the values, it does not read them from the code under test. */
#define POSITIONAL 0.5
#define VERTICAL 0.5
#define LOCAL 0.7
#define SEGMENT 0.9
#define BROAD 0.75
#define SEGMENT_SPECIAL 0.5
#define INDUCTION 0.5

static double below(double x) { return nextafter(x, -INFINITY); }
static double above(double x) { return nextafter(x, INFINITY); }

/* A head that passes no rule: nothing on any target, sharp rows (entropy 0), one segment. */
static atn_head_stats neutral(void) {
    atn_head_stats s;
    memset(&s, 0, sizeof s);
    s.same_segment = 1.0;
    return s;
}

static const char *label(const atn_head_stats *s, bool has_pairs) {
    return atn_pattern_name(atn_pattern_classify(s, has_pairs));
}

/* Sets the double at offset in base to one ulp below, at and one ulp above th and checks
 * the three labels. */
static void check_three(const char *what, atn_head_stats base, size_t offset, double th, bool has_pairs,
                        const char *want_below, const char *want_at, const char *want_above) {
    double values[3] = {below(th), th, above(th)};
    const char *want[3] = {want_below, want_at, want_above};
    static const char *const where[3] = {"one ulp below", "at", "one ulp above"};
    for (int k = 0; k < 3; k++) {
        atn_head_stats s = base;
        memcpy((char *)&s + offset, &values[k], sizeof(double));
        const char *got = label(&s, has_pairs);
        CHECK_MSG(!strcmp(got, want[k]), "%s %s %.17g: \"%s\", expected \"%s\"", what, where[k], values[k], got,
                  want[k]);
    }
}

#define FIELD(f) offsetof(atn_head_stats, f)

static void test_positional(void) {
    atn_head_stats s = neutral();
    CHECK_STR(label(&s, false), "mixed");
    check_three("self", s, FIELD(self), POSITIONAL, false, "mixed", "diagonal", "diagonal");
    check_three("prev", s, FIELD(prev), POSITIONAL, false, "mixed", "previous", "previous");
    check_three("next", s, FIELD(next), POSITIONAL, false, "mixed", "next", "next");
    /* the largest of the three wins; ties go previous, then next, then diagonal */
    s.self = 0.6;
    s.prev = 0.3;
    CHECK_STR(label(&s, false), "diagonal");
    s.prev = 0.6;
    CHECK_STR(label(&s, false), "previous");
    s.prev = 0.2;
    s.next = 0.6;
    CHECK_STR(label(&s, false), "next");
    s.prev = 0.6;
    CHECK_STR(label(&s, false), "previous");
    s = neutral();
    s.next = 0.7;
    s.prev = below(0.7);
    CHECK_STR(label(&s, false), "next");
    /* positional comes before every other rule */
    s = neutral();
    s.self = POSITIONAL;
    s.cls = 0.9;
    s.punct = 0.9;
    s.local = 1.0;
    s.entropy_norm = 1.0;
    CHECK_STR(label(&s, true), "diagonal");
}

/* Induction: at and around its threshold, and only when above each positional measure (a
 * previous-token head on text that repeats every other token reads as previous). */
static void test_induction_rule(void) {
    atn_head_stats s = neutral();
    check_three("induction", s, FIELD(induction), INDUCTION, false, "mixed", "induction", "induction");
    s.induction = 0.6;
    s.prev = 0.6;
    CHECK_STR(label(&s, false), "previous");
    s.prev = below(0.6);
    CHECK_STR(label(&s, false), "induction");
    s.self = 0.6;
    CHECK_STR(label(&s, false), "diagonal");
    /* before the vertical and block rules */
    s = neutral();
    s.induction = 0.7;
    s.cls = 0.9;
    s.local = 1.0;
    CHECK_STR(label(&s, true), "induction");
}

/* The measure on a constructed repeated span: [CLS] a b c d a b c d (ids 0 1 2 3 4 1 2 3 4).
 * Rows 6 "b", 7 "c", 8 "d" follow an earlier copy of the pair before them ((a,b) at 1-2,
 * (b,c) at 2-3, (c,d) at 3-4), so their targets are 3, 4 and 5; row 5 "a" follows "d", whose
 * pair (d,a) never came before.  By hand:
 *   head 0 puts all of rows 6-8 on the target, every other row on itself: induction 3/3 = 1,
 *     self 6/9: labelled induction;
 *   head 1 puts 0.25 on the target, 0.75 on itself: induction 0.25, self (6 + 2.25)/9 =
 *     0.9167: diagonal;
 *   head 2 (previous token) puts nothing on a target: 0.
 * A sentence without repeats measures 0, so a corpus of both halves head 0's 1 to 0.5; a
 * masked target drops its row. */
static void test_induction_measure(void) {
    static const char *const toks[9] = {"[CLS]", "a", "b", "c", "d", "a", "b", "c", "d"};
    static const int32_t ids[9] = {0, 1, 2, 3, 4, 1, 2, 3, 4};
    static fake f;
    fake_init(&f, 1, 3, 9, toks);
    memcpy(f.ids, ids, sizeof ids);
    float *h0 = head_of(&f, 0, 0), *h1 = head_of(&f, 0, 1);
    for (int i = 0; i < 9; i++) {
        int target = i >= 6 ? i - 3 : -1;
        h0[i * 9 + (target >= 0 ? target : i)] = 1;
        if (target >= 0) {
            h1[i * 9 + target] = 0.25f;
            h1[i * 9 + i] = 0.75f;
        } else {
            h1[i * 9 + i] = 1;
        }
    }
    set_pattern(head_of(&f, 0, 2), 9, 0);
    atn_stats *st;
    CHECK(atn_stats_compute(&f.cap, &st, NULL) == ATN_OK);
    CHECK_NEAR(st->heads[0].induction, 1.0, 1e-12);
    CHECK_NEAR(st->heads[0].self, 6.0 / 9, 1e-12);
    CHECK_STR(atn_pattern_name(st->heads[0].pattern), "induction");
    CHECK_NEAR(st->heads[1].induction, 0.25, 1e-7);
    CHECK_NEAR(st->heads[1].self, (6 + 3 * 0.75) / 9, 1e-7);
    CHECK_STR(atn_pattern_name(st->heads[1].pattern), "diagonal");
    CHECK_NEAR(st->heads[2].induction, 0.0, 1e-12);
    CHECK_STR(atn_pattern_name(st->heads[2].pattern), "previous");
    atn_stats_free(st);

    /* corpus: the repeated text, then one without repeats (ids 1..8) */
    atn_stats *acc = atn_stats_new(1, 3, NULL);
    CHECK(atn_stats_add(acc, &f.cap, NULL) == ATN_OK);
    for (int i = 0; i < 9; i++)
        f.ids[i] = i;
    CHECK(atn_stats_add(acc, &f.cap, NULL) == ATN_OK);
    CHECK(atn_stats_finish(acc, NULL) == ATN_OK);
    CHECK_NEAR(acc->heads[0].induction, 0.5, 1e-12);
    atn_stats_free(acc);

    /* position 5 masked: row 8 loses its target and row 6 the token before it, so row 7
       alone is measured (head 1: 0.25 / 1) */
    memcpy(f.ids, ids, sizeof ids);
    f.mask[5] = 0;
    CHECK(atn_stats_compute(&f.cap, &st, NULL) == ATN_OK);
    CHECK_NEAR(st->heads[1].induction, 0.25, 1e-7);
    CHECK_NEAR(st->heads[0].induction, 1.0, 1e-12);
    atn_stats_free(st);
}

static void test_vertical(void) {
    atn_head_stats s = neutral();
    check_three("cls", s, FIELD(cls), VERTICAL, false, "mixed", "vertical [CLS]", "vertical [CLS]");
    check_three("sep", s, FIELD(sep), VERTICAL, false, "mixed", "vertical [SEP]", "vertical [SEP]");
    check_three("punct", s, FIELD(punct), VERTICAL, false, "mixed", "vertical punctuation", "vertical punctuation");
    /* the larger of cls and sep names the stripe; a tie is [CLS] */
    s.cls = 0.5;
    s.sep = 0.5;
    CHECK_STR(label(&s, false), "vertical [CLS]");
    s.sep = above(0.5);
    CHECK_STR(label(&s, false), "vertical [SEP]");
    s.cls = 0.4;
    CHECK_STR(label(&s, false), "vertical [SEP]");
    /* [CLS]/[SEP] before punctuation, punctuation before block and broad */
    s = neutral();
    s.cls = VERTICAL;
    s.punct = 0.9;
    CHECK_STR(label(&s, false), "vertical [CLS]");
    s = neutral();
    s.punct = VERTICAL;
    s.local = 1.0;
    s.entropy_norm = 1.0;
    CHECK_STR(label(&s, false), "vertical punctuation");
    /* just below every positional and vertical threshold at once: still none of them */
    s = neutral();
    s.self = s.prev = s.next = below(POSITIONAL);
    s.cls = s.sep = s.punct = below(VERTICAL);
    CHECK_STR(label(&s, false), "mixed");
}

static void test_block_and_broad(void) {
    /* local mass, with sharp rows */
    atn_head_stats s = neutral();
    check_three("local", s, FIELD(local), LOCAL, false, "mixed", "block", "block");
    /* ... only while the rows are not broad: entropy_norm below BROAD */
    s.local = 1.0;
    check_three("entropy_norm (local 1)", s, FIELD(entropy_norm), BROAD, false, "block", "broad", "broad");
    s.local = LOCAL;
    check_three("entropy_norm (local at LOCAL)", s, FIELD(entropy_norm), BROAD, false, "block", "broad", "broad");
    /* broad on its own */
    s = neutral();
    check_three("entropy_norm", s, FIELD(entropy_norm), BROAD, false, "mixed", "broad", "broad");
    s.local = below(LOCAL);
    check_three("entropy_norm (local below)", s, FIELD(entropy_norm), BROAD, false, "mixed", "broad", "broad");

    /* the segment rule: only for sentence pairs */
    s = neutral();
    s.same_segment = 0;
    check_three("same_segment (pairs)", s, FIELD(same_segment), SEGMENT, true, "mixed", "block", "block");
    check_three("same_segment (one text)", s, FIELD(same_segment), SEGMENT, false, "mixed", "mixed", "mixed");
    s.same_segment = 1.0;
    CHECK_STR(label(&s, true), "block");
    CHECK_STR(label(&s, false), "mixed");
    /* ... and only while cls + sep < SEGMENT_SPECIAL (each alone below VERTICAL) */
    s.cls = 0;
    check_three("cls + sep (sep alone)", s, FIELD(sep), SEGMENT_SPECIAL, true, "block", "vertical [SEP]",
                "vertical [SEP]");
    s.cls = 0.25;
    s.sep = 0.25;                      /* sum exactly 0.5 */
    CHECK(s.cls + s.sep == SEGMENT_SPECIAL);
    CHECK_STR(label(&s, true), "mixed");
    s.cls = 0;                         /* (0.25 + below(0.25) rounds back to 0.5: one term) */
    s.sep = below(SEGMENT_SPECIAL);
    CHECK_STR(label(&s, true), "block");
    s.cls = above(0.25);
    s.sep = above(0.25);               /* sum 0.5 + 2^-53, the double just above 0.5 */
    CHECK(s.cls + s.sep == above(SEGMENT_SPECIAL));
    CHECK_STR(label(&s, true), "mixed");
    /* a broad head in a pair whose mass stays in its segment is block (block before broad) */
    s = neutral();
    s.entropy_norm = 1.0;
    CHECK_STR(label(&s, true), "block");
    CHECK_STR(label(&s, false), "broad");
}

static void test_names(void) {
    static const char *const want[ATN_PATTERN_COUNT] = {
        "diagonal", "previous", "next", "vertical [CLS]", "vertical [SEP]", "vertical punctuation", "block", "broad",
        "mixed", "induction",
    };
    for (int p = 0; p < ATN_PATTERN_COUNT; p++)
        CHECK_STR(atn_pattern_name((atn_pattern)p), want[p]);
    CHECK_STR(atn_pattern_name(ATN_PATTERN_COUNT), "mixed");
    CHECK_STR(atn_pattern_name((atn_pattern)-1), "mixed");
}

/* ---- the clearest head (atn_stats_clearest_head) ------------------------------------------ */

/* The head the window opens a model on, at the boundaries of its rule: a score just under, at
 * and over ATN_CLEAREST_HEAD_MIN, each of the five measures it looks at, the measures it
 * ignores, ties (within 1e-9: the first head in layer-major order) and NULL. */
enum { CH_L = 3, CH_H = 4 };   /* the constructed tables of the clearest-head tests */

static atn_stats *clearest_fresh(void) {
    atn_stats *st = atn_stats_new(CH_L, CH_H, NULL);
    CHECK(st != NULL);
    return st;   /* every measure 0 */
}

static void test_clearest_threshold(void) {
    atn_stats *st = clearest_fresh();
    int32_t layer = -7, head = -7;
    CHECK(!atn_stats_clearest_head(st, &layer, &head));   /* all 0: none */
    CHECK(layer == -7 && head == -7);                      /* untouched */

    st->heads[1 * CH_H + 2].prev = ATN_CLEAREST_HEAD_MIN - 1e-6;   /* just under */
    CHECK(!atn_stats_clearest_head(st, &layer, &head));
    CHECK(layer == -7 && head == -7);

    st->heads[1 * CH_H + 2].prev = ATN_CLEAREST_HEAD_MIN;          /* at: qualifies */
    CHECK(atn_stats_clearest_head(st, &layer, &head));
    CHECK(layer == 1 && head == 2);

    st->heads[1 * CH_H + 2].prev = 0.3000001;                        /* just over */
    layer = head = -7;
    CHECK(atn_stats_clearest_head(st, &layer, &head));
    CHECK(layer == 1 && head == 2);
    CHECK(ATN_CLEAREST_HEAD_MIN == 0.3);
    atn_stats_free(st);
}

static void test_clearest_measures(void) {
    /* each of prev, next, self, cls, sep counts; entropy, distance, punct, local do not */
    for (int m = 0; m < 5; m++) {
        atn_stats *st = clearest_fresh();
        atn_head_stats *h = &st->heads[2 * CH_H + 3];
        double *f[] = {&h->prev, &h->next, &h->self, &h->cls, &h->sep};
        *f[m] = 0.5;
        int32_t layer = -1, head = -1;
        CHECK_MSG(atn_stats_clearest_head(st, &layer, &head), "measure %d", m);
        CHECK_MSG(layer == 2 && head == 3, "measure %d: CH_L%d CH_H%d", m, layer, head);
        atn_stats_free(st);
    }
    atn_stats *st = clearest_fresh();
    atn_head_stats *h = &st->heads[0];
    h->entropy = 5;
    h->distance = 9;
    h->punct = 0.9;
    h->local = 0.9;
    h->same_segment = 1;
    h->entropy_norm = 1;
    CHECK(!atn_stats_clearest_head(st, NULL, NULL));
    /* the largest measure of the best head decides, not a sum */
    st->heads[1].prev = 0.2;
    st->heads[1].next = 0.2;
    st->heads[1].self = 0.2;   /* sum 0.6, max 0.2 */
    CHECK(!atn_stats_clearest_head(st, NULL, NULL));
    atn_stats_free(st);
}

static void test_clearest_ties(void) {
    atn_stats *st = clearest_fresh();
    int32_t layer = -1, head = -1;
    st->heads[0 * CH_H + 3].cls = 0.6;
    st->heads[2 * CH_H + 0].sep = 0.6;   /* equal: the first in layer-major order */
    CHECK(atn_stats_clearest_head(st, &layer, &head));
    CHECK(layer == 0 && head == 3);
    st->heads[2 * CH_H + 0].sep = 0.6 + 5e-10;   /* within 1e-9: still a tie */
    CHECK(atn_stats_clearest_head(st, &layer, &head));
    CHECK(layer == 0 && head == 3);
    st->heads[2 * CH_H + 0].sep = 0.6 + 1e-8;    /* clearly larger: the later head */
    CHECK(atn_stats_clearest_head(st, &layer, &head));
    CHECK(layer == 2 && head == 0);
    st->heads[1 * CH_H + 1].self = 0.9;          /* the largest anywhere wins */
    CHECK(atn_stats_clearest_head(st, &layer, &head));
    CHECK(layer == 1 && head == 1);
    /* one out-param may be NULL */
    layer = -1;
    CHECK(atn_stats_clearest_head(st, &layer, NULL));
    CHECK(layer == 1);
    head = -1;
    CHECK(atn_stats_clearest_head(st, NULL, &head));
    CHECK(head == 1);
    atn_stats_free(st);
}

static void test_clearest_empty(void) {
    int32_t layer = -3, head = -3;
    CHECK(!atn_stats_clearest_head(NULL, &layer, &head));
    CHECK(layer == -3 && head == -3);
}

/* ---- with a progress callback ----------------------------------------------------------------- */

typedef struct progress_count {
    int calls, stop_after, ones;
    double last;
} progress_count;

static bool count_progress(double fraction, atn_stage stage, void *user_data) {
    progress_count *c = user_data;
    CHECK(stage == ATN_STAGE_STATISTICS);
    CHECK(fraction > 0 && fraction <= 1);
    __atomic_fetch_add(&c->calls, 1, __ATOMIC_RELAXED);
    if (fraction == 1)
        __atomic_fetch_add(&c->ones, 1, __ATOMIC_RELAXED);
    return !c->stop_after || __atomic_load_n(&c->calls, __ATOMIC_RELAXED) < c->stop_after;
}

/* atn_stats_compute_progress (the window's call, in a worker after the result is published):
 * large enough to share the heads between threads; the same bits as atn_stats_compute, one
 * call per head, each thread's last at 1; a false answer stops every thread at its next head
 * with ATN_E_CANCELLED and nothing out. */
static void test_stats_progress(void) {
    enum { L = 2, H = 8, N = 256 };   /* N² · L·H = 1M weights: the threaded split */
    float *attn = malloc(sizeof(float) * L * H * N * N);
    CHECK(attn != NULL);
    uint32_t x = 12345;
    for (size_t r = 0; r < (size_t)L * H * N; r++) {
        float *row = attn + r * N, sum = 0;
        for (int j = 0; j < N; j++) {
            x = x * 1664525u + 1013904223u;
            row[j] = (float)(x >> 8) / 16777216.0f;
            sum += row[j];
        }
        for (int j = 0; j < N; j++)
            row[j] /= sum;
    }
    atn_capture cap = {0};
    cap.n = N;
    cap.n_layers = L;
    cap.n_heads = H;
    cap.attn = attn;
    atn_stats *want = NULL, *got = NULL;
    CHECK(atn_stats_compute(&cap, &want, NULL) == ATN_OK);
    progress_count c = {0};
    CHECK(atn_stats_compute_progress(&cap, count_progress, &c, &got, NULL) == ATN_OK);
    CHECK(got != NULL && want != NULL);
    CHECK(c.calls == L * H);
    CHECK(c.ones >= 1 && c.ones <= L * H);
    CHECK(memcmp(got->heads, want->heads, sizeof(atn_head_stats) * L * H) == 0);
    CHECK(got->n_sentences == 1 && got->n_tokens == N);
    atn_stats_free(got);
    got = NULL;

    progress_count stop = {.stop_after = 3};
    atn_error err = {0};
    CHECK(atn_stats_compute_progress(&cap, count_progress, &stop, &got, &err) == ATN_E_CANCELLED);
    CHECK(got == NULL);
    CHECK(strstr(err.message, "cancelled") != NULL);
    CHECK_MSG(stop.calls < L * H, "%d calls", stop.calls);   /* the threads stopped early */
    CHECK(atn_stats_compute_progress(&cap, NULL, NULL, &got, NULL) == ATN_OK);   /* NULL: none */
    CHECK(memcmp(got->heads, want->heads, sizeof(atn_head_stats) * L * H) == 0);
    atn_stats_free(got);
    atn_stats_free(want);
    free(attn);
}

int main(void) {
    test_stats();
    test_stats_progress();
    test_punct();
    test_positional();
    test_induction_rule();
    test_induction_measure();
    test_vertical();
    test_block_and_broad();
    test_names();
    test_clearest_threshold();
    test_clearest_measures();
    test_clearest_ties();
    test_clearest_empty();
    return check_summary("head-stats");
}
