/* atn_batch_forward: every capture of a stacked forward equals atn_run_forward of that
 * sequence alone, bit for bit (attention, hidden states, trace inputs, mask, position ids),
 * in order; on the demo model (real sentences of mixed lengths), a random bert-tiny (8-40
 * tokens), a batch of one, GPT-2 (causal, pre-LN), mask interventions (stacked) and a head
 * gate (run one by one); cancellation, a refused sequence in the middle, a tight memory
 * limit; a stack where one sequence goes NaN in its embeddings and another infinite in
 * layer 1 (the batch names the layer atn_run_forward names). */
#include "attnscope.h"
#include "check.h"
#include "core/model-private.h"
#include "forward/encoder.h"
#include "tokenize/encoding.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Not exact (the cblas path stacked): OpenBLAS adds a row's products in another order in a
 * taller product.  Measured: relative 7e-7 on random bert-tiny, 1.3e-6 on GPT-2, and on the
 * demo model (trained: sharp heads) up to 1.9e-6 in the probabilities. */
#define TOL_INEXACT 4e-6

static int64_t last_alone;
/* each's record of the batch's nonfinite_layer per sequence (the first 64) */
static int32_t batch_nonfinite[64];

typedef struct expect {
    const atn_model *m;
    atn_encoding **encs;
    const atn_run_options *opts;
    int32_t seen;
    double worst;
    int32_t stop_at;   /* each returns ATN_E_CANCELLED at this index (-1: never) */
    bool exact;        /* bit for bit; else within TOL_INEXACT (relative to the array's largest) */
    double worst_rel;
    atn_run *run;      /* for the sequence alone */
} expect;

/* The largest |difference| where both are finite; a value finite in one and not in the
 * other (or NaN against an infinity, or infinities of opposite sign) counts as infinite, two
 * NaNs as equal (whatever their payloads). */
static double max_diff(const float *a, const float *b, size_t n) {
    double w = 0;
    for (size_t i = 0; i < n; i++) {
        double x = a[i], y = b[i];
        if (isfinite(x) && isfinite(y))
            w = fabs(x - y) > w ? fabs(x - y) : w;
        else if (!(isnan(x) && isnan(y)) && x != y)
            return INFINITY;
    }
    return w;
}

/* Bit for bit, but any NaN equals any NaN. */
static bool same_bits(const float *a, const float *b, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (memcmp(&a[i], &b[i], sizeof(float)) != 0 && !(isnan(a[i]) && isnan(b[i])))
            return false;
    return true;
}

/* Both bitwise and as the largest |difference| (reported). */
static void same_floats(expect *x, const char *what, int32_t index, const float *got, const float *want, size_t n) {
    CHECK_MSG((got == NULL) == (want == NULL), "%s of sequence %d: present in one capture only", what, index);
    if (!got || !want)
        return;
    double d = max_diff(got, want, n), big = 0;
    for (size_t i = 0; i < n; i++)
        big = isfinite(want[i]) && fabs(want[i]) > big ? fabs(want[i]) : big;
    double rel = d / (big > 1 ? big : 1);
    x->worst = d > x->worst ? d : x->worst;
    x->worst_rel = rel > x->worst_rel ? rel : x->worst_rel;
    if (x->exact)
        CHECK_MSG(same_bits(got, want, n), "%s of sequence %d differs (max %g)", what, index, d);
    else
        CHECK_MSG(rel <= TOL_INEXACT, "%s of sequence %d: max |difference| %g, relative %g", what, index, d, rel);
}

static atn_status each(int32_t index, const atn_capture *cap, void *user, atn_error *err) {
    expect *x = user;
    if (index >= 0 && index < 64)
        batch_nonfinite[index] = cap->nonfinite_layer;
    CHECK_MSG(index == x->seen, "sequence %d handed on as %d", x->seen, index);
    x->seen++;
    if (index == x->stop_at)
        return atn_error_set(err, ATN_E_CANCELLED, "stopped at %d", index);
    if (!x->run)
        x->run = atn_run_new(x->m);
    atn_run *run = x->run;
    atn_status st = atn_run_forward(run, x->encs[index], x->opts, err);
    CHECK_MSG(st == ATN_OK, "%s", err->message);
    const atn_capture *a = atn_run_capture(run);
    if (st == ATN_OK) {
        CHECK(a->n == cap->n && a->n_layers == cap->n_layers && a->n_heads == cap->n_heads);
        CHECK(cap->enc && cap->enc->n == cap->n && memcmp(cap->enc->ids, x->encs[index]->ids, cap->n * 4) == 0);
        size_t L = (size_t)a->n_layers, H = (size_t)a->n_heads, n = (size_t)a->n, d = (size_t)a->d_model;
        same_floats(x, "attention", index, cap->attn, a->attn, L * H * n * n);
        same_floats(x, "hidden", index, cap->hidden, a->hidden, (L + 1) * n * d);
        same_floats(x, "mask", index, cap->mask_add, a->mask_add, n * n);
        CHECK(cap->has_trace_inputs == a->has_trace_inputs);
        if (a->has_trace_inputs) {
            same_floats(x, "q", index, cap->q, a->q, L * n * d);
            same_floats(x, "k", index, cap->k, a->k, L * n * d);
            same_floats(x, "v", index, cap->v, a->v, L * n * d);
            same_floats(x, "ctx", index, cap->ctx, a->ctx, L * n * d);
            same_floats(x, "attn_out", index, cap->attn_out, a->attn_out, L * n * d);
        }
        CHECK((cap->pos_ids == NULL) == (a->pos_ids == NULL));
        if (cap->pos_ids && a->pos_ids)
            CHECK(memcmp(cap->pos_ids, a->pos_ids, n * sizeof(int32_t)) == 0);
        CHECK_MSG(cap->nonfinite_layer == a->nonfinite_layer, "sequence %d: nonfinite_layer %d in the batch, %d alone",
                  index, cap->nonfinite_layer, a->nonfinite_layer);
        CHECK((cap->heads_off == NULL) == (a->heads_off == NULL) && cap->temperature == a->temperature);
    }
    return ATN_OK;
}

/* Runs encs through a batch with opts (exact or not) and checks every capture; returns
 * the stacked forwards. */
static int64_t check_batch(const char *what, const atn_model *m, atn_encoding **encs, int32_t count,
                           const atn_run_options *opts, int32_t rows, bool exact) {
    atn_batch *b = atn_batch_new(m);
    CHECK(b != NULL);
    if (rows)
        atn_batch_set_rows(b, rows);
    atn_batch_set_exact(b, exact);
    expect x = {m, encs, opts, 0, 0, -1, exact, 0};
    atn_error err = {0};
    int32_t failed = 7;
    atn_status st = atn_batch_forward(b, encs, count, opts, each, &x, &failed, &err);
    CHECK_MSG(st == ATN_OK, "%s: %s", what, err.message);
    CHECK(failed == -1 && x.seen == count);
    int64_t stacked = 0, alone = 0;
    atn_batch_counts(b, &stacked, &alone);
    last_alone = alone;
    atn_run_free(x.run);
    fprintf(stderr, "%s, %s: %d sequences, %lld stacked forwards, %lld alone, max |difference| %g (relative %g)\n",
            what, exact ? "exact" : "not exact", count, (long long)stacked, (long long)alone, x.worst, x.worst_rel);
    atn_batch_free(b);
    return stacked;
}

/* Both ways: exact (stacked only on the fast path, when fast_ok) and not (stacked on every
 * CPU path); at least `stacks` stacked forwards where stacking applies. */
static void both(const char *what, const atn_model *m, atn_encoding **encs, int32_t count, const atn_run_options *o,
                 int32_t rows, bool fast_ok, int64_t stacks) {
    int64_t s = check_batch(what, m, encs, count, o, rows, true);
    if (atn_cpu_fast_applies(m) && fast_ok)
        CHECK_MSG(s >= stacks, "%s: %lld stacked", what, (long long)s);
    else
        CHECK_MSG(s == 0, "%s: %lld stacked where the bits would differ", what, (long long)s);
    s = check_batch(what, m, encs, count, o, rows, false);
    CHECK_MSG(s >= stacks, "%s: %lld stacked", what, (long long)s);
}

static uint64_t rng = 0x1234567;
static uint32_t next_u32(void) {
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (uint32_t)(rng >> 11);
}

static atn_encoding *random_ids(const atn_model *m, int32_t n) {
    int32_t ids[512];
    int32_t vocab = atn_model_config(m)->vocab_size;
    for (int32_t i = 0; i < n; i++)
        ids[i] = (int32_t)(next_u32() % (uint32_t)vocab);
    atn_encoding *e = NULL;
    atn_error err = {0};
    CHECK_MSG(atn_model_encode_ids(m, ids, NULL, NULL, n, &e, &err) == ATN_OK, "%s", err.message);
    return e;
}

static void free_all(atn_encoding **e, int32_t n) {
    for (int32_t i = 0; i < n; i++)
        atn_encoding_free(e[i]);
}

static bool cancel_at_layer(double f, atn_stage stage, void *user) {
    int *calls = user;
    (void)f;
    return stage != ATN_STAGE_LAYER || ++*calls < 3;
}

static void test_demo(void) {
    atn_error err = {0};
    atn_model *m = atn_model_open("demo", NULL, NULL, &err);
    CHECK_MSG(m, "%s", err.message);
    if (!m)
        return;
    const char *src = getenv("ATN_SOURCE_ROOT");
    char path[4096];
    snprintf(path, sizeof path, "%s/data/models/demo/train/heldout.txt", src ? src : ".");
    FILE *f = fopen(path, "r");
    CHECK_MSG(f, "cannot open %s", path);
    atn_encoding *encs[24] = {0};
    int32_t n = 0;
    char line[4096];
    while (f && n < 24 && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = 0;
        if (line[0] && atn_model_encode(m, line, NULL, &encs[n], &err) == ATN_OK)
            n++;
    }
    if (f)
        fclose(f);
    CHECK(n == 24);
    int32_t lo = 1 << 30, hi = 0;
    for (int32_t i = 0; i < n; i++)
        lo = encs[i]->n < lo ? encs[i]->n : lo, hi = encs[i]->n > hi ? encs[i]->n : hi;
    CHECK_MSG(hi > lo, "mixed lengths: %d..%d", lo, hi);
    atn_run_options o;
    atn_run_options_init(&o);
    both("demo, full capture", m, encs, n, &o, 0, true, 1);
    o.keep_trace_inputs = false;   /* what the corpus pass asks for */
    both("demo, attention only", m, encs, n, &o, 0, true, 1);
    both("demo, 64-row stacks", m, encs, n, &o, 64, true, 4);
    both("demo, a batch of one", m, encs + 3, 1, &o, 0, true, 0);
    /* mask interventions: per sequence, stacked */
    atn_interventions iv;
    atn_interventions_init(&iv);
    iv.window = 2;
    int32_t hide[1] = {1};
    iv.hide_tokens = hide, iv.n_hide = 1;
    iv.shuffle = true, iv.shuffle_seed = 7;
    o.interventions = &iv;
    both("demo, window 2 + hidden key 1 + shuffled positions", m, encs, n, &o, 0, true, 1);
    iv.window = -1, iv.n_hide = 0, iv.shuffle = false, iv.causal = true;
    both("demo, causal", m, encs, n, &o, 0, true, 1);
    /* a head gate: one forward per sequence (the cblas path), still the same captures */
    const atn_config *c = atn_model_config(m);
    uint8_t *off = calloc((size_t)c->n_layers * c->n_heads, 1);
    off[1] = 1;
    atn_interventions_init(&iv);
    iv.heads_off = off;
    both("demo, head 0:1 off", m, encs, 6, &o, 0, false, 1);
    iv.head_mode = ATN_HEAD_UNIFORM, iv.alibi = true, iv.temperature = 0.7f;
    both("demo, head 0:1 uniform + ALiBi + temperature 0.7", m, encs, 6, &o, 0, false, 1);
    atn_interventions_init(&iv);
    iv.no_positions = true;
    both("demo, no positions", m, encs, 6, &o, 0, false, 1);
    free(off);
    o.interventions = NULL;

    /* cancelled by the run's progress: ATN_E_CANCELLED, nothing handed on */
    int calls = 0;
    o.progress = cancel_at_layer, o.user_data = &calls;
    atn_batch *b = atn_batch_new(m);
    atn_batch_set_exact(b, false);
    expect x = {m, encs, &o, 0, 0, -1, false, 0};
    int32_t failed = 0;
    atn_status st = atn_batch_forward(b, encs, n, &o, each, &x, &failed, &err);
    CHECK(st == ATN_E_CANCELLED && x.seen == 0 && failed == 0);
    atn_run_free(x.run);
    o.progress = NULL;
    /* each's status ends the batch at that sequence */
    expect y = {m, encs, &o, 0, 0, 5, false, 0};
    st = atn_batch_forward(b, encs, n, &o, each, &y, &failed, &err);
    CHECK(st == ATN_E_CANCELLED && y.seen == 6 && failed == 5);
    atn_run_free(y.run);
    /* a sequence atn_run_forward refuses: the ones before it run, then its own error */
    atn_encoding *bad = atn_encoding_copy(encs[9]);
    bad->ids[2] = 1 << 20;
    atn_encoding *mixed[12];
    memcpy(mixed, encs, sizeof mixed);
    mixed[7] = bad;
    expect z = {m, mixed, &o, 0, 0, -1, false, 0};
    st = atn_batch_forward(b, mixed, 12, &o, each, &z, &failed, &err);
    CHECK_MSG(st == ATN_E_INVALID && failed == 7 && z.seen == 7, "%d %d %d", st, failed, z.seen);
    CHECK(strstr(err.message, "outside the vocabulary") != NULL);
    atn_run_free(z.run);
    atn_encoding_free(bad);
    /* a memory limit a stack would pass: the sequences run one by one */
    o.memory_limit = atn_run_bytes_needed(c, hi, &o);
    atn_batch_free(b);
    check_batch("demo, tight memory limit", m, encs, n, &o, 0, false);
    CHECK(last_alone > 0);
    free_all(encs, n);
    atn_model_free(m);
}

/* ---- non-finite values in one sequence of a stack ----------------------------------
 * bert-tiny with two tokens of its own: NF_NAN's embedding holds a NaN (its sequence is
 * NaN from the embeddings on: layer 0), NF_BIG's is 1000 in dimension NF_DIM alone, which
 * after the LayerNorms leaves it, in layer 0's output, more than 2.5 times any other
 * token's |value| there (`big`).  Layer 1's FFN unit NF_UNIT reads that dimension alone:
 * scale (big - big/2) with scale = 1.05 FLT_MAX / big, so NF_BIG's pre-activation is half
 * of FLT_MAX or more (+inf where the product is rounded before the bias is added) and every
 * other token's is negative and finite: GELU gives them exactly 0, and NF_BIG's value
 * times 4 (the unit's weight into every dimension) overflows.  Only NF_BIG's sequence
 * becomes infinite, then NaN, in layer 1's output; every other one is finite and does
 * not see the unit at all. */
enum { NF_COUNT = 12, NF_NAN_SEQ = 8, NF_BIG_SEQ = 3, NF_NAN = 1001, NF_BIG = 1000, NF_DIM = 5, NF_UNIT = 7 };

/* big 0: layer 1 as drawn */
static atn_model *nonfinite_model(double big) {
    atn_error err = {0};
    atn_model *m = atn_model_new_random_shape("bert-tiny", 23, &err);
    CHECK_MSG(m, "%s", err.message);
    if (!m)
        return NULL;
    size_t d = (size_t)m->cfg.d_model, f = (size_t)m->cfg.d_ffn;
    float *we = (float *)m->w.word_emb;
    memset(we + NF_BIG * d, 0, d * sizeof(float));
    we[NF_BIG * d + NF_DIM] = 1000.0f;
    we[NF_NAN * d + 3] = NAN;
    if (big > 0) {
        atn_layer_weights *lw = &m->w.layers[1];
        float *w1 = (float *)lw->w1, *b1 = (float *)lw->b1, *w2 = (float *)lw->w2;
        double scale = 1.05 * FLT_MAX / big;
        memset(w1 + NF_UNIT * d, 0, d * sizeof(float));
        w1[NF_UNIT * d + NF_DIM] = (float)scale;
        b1[NF_UNIT] = (float)(-scale * big / 2);
        for (size_t j = 0; j < d; j++)
            w2[j * f + NF_UNIT] = 4.0f;
    }
    return m;
}

/* Stops the batch at the first sequence with a non-finite layer (after each's checks). */
static atn_status stop_at_nonfinite(int32_t index, const atn_capture *cap, void *user, atn_error *err) {
    atn_status st = each(index, cap, user, err);
    if (st == ATN_OK && cap->nonfinite_layer >= 0)
        return atn_error_set(err, ATN_E_INVALID, "sequence %d is not finite from layer %d", index,
                             cap->nonfinite_layer);
    return st;
}

static void test_nonfinite(void) {
    atn_error err = {0};
    atn_encoding *encs[NF_COUNT];
    int32_t ids[40];
    /* layer 0's output in dimension NF_DIM: NF_BIG's value against every other token's */
    atn_model *m0 = nonfinite_model(0);
    if (!m0)
        return;
    for (int32_t s = 0; s < NF_COUNT; s++) {
        int32_t n = 8 + (int32_t)(next_u32() % 33);
        for (int32_t i = 0; i < n; i++) {
            ids[i] = 2000 + (int32_t)(next_u32() % 20000);
        }
        if (s == NF_NAN_SEQ)
            ids[n / 2] = NF_NAN;
        if (s == NF_BIG_SEQ)
            ids[2] = NF_BIG;
        encs[s] = NULL;
        CHECK_MSG(atn_model_encode_ids(m0, ids, NULL, NULL, n, &encs[s], &err) == ATN_OK, "%s", err.message);
    }
    atn_run *run = atn_run_new(m0);
    double big = 0, other = 0;
    for (int32_t s = 0; s < NF_COUNT; s++) {
        CHECK(atn_run_forward(run, encs[s], NULL, &err) == ATN_OK);
        const atn_capture *c = atn_run_capture(run);
        CHECK_MSG(c->nonfinite_layer == (s == NF_NAN_SEQ ? 0 : -1), "sequence %d: nonfinite_layer %d before layer 1's change",
                  s, c->nonfinite_layer);
        for (int32_t i = 0; s != NF_NAN_SEQ && i < c->n; i++) {
            double v = c->hidden[((size_t)c->n + i) * c->d_model + NF_DIM];   /* hidden[1][i][NF_DIM] */
            if (encs[s]->ids[i] == NF_BIG)
                big = v;
            else
                other = fabs(v) > other ? fabs(v) : other;
        }
    }
    atn_run_free(run);
    atn_model_free(m0);
    CHECK_MSG(big > 2.5 * other, "NF_BIG's value %g in layer 0's output, the others' up to %g: no margin", big, other);
    fprintf(stderr, "non-finite: NF_BIG's value in layer 0's output %g, the other tokens' |values| up to %g\n", big,
            other);

    atn_model *m = nonfinite_model(big);
    if (!m)
        return;
    run = atn_run_new(m);
    for (int32_t s = 0; s < NF_COUNT; s++) {
        CHECK(atn_run_forward(run, encs[s], NULL, &err) == ATN_OK);
        int32_t want = s == NF_NAN_SEQ ? 0 : s == NF_BIG_SEQ ? 1 : -1;
        CHECK_MSG(atn_run_capture(run)->nonfinite_layer == want, "sequence %d alone: nonfinite_layer %d, expected %d", s,
                  atn_run_capture(run)->nonfinite_layer, want);
    }
    atn_run_free(run);
    atn_run_options o;
    atn_run_options_init(&o);
    /* exact (stacked where AVX-512 runs) and not (stacked on the cblas path everywhere) */
    for (int exact = 1; exact >= 0; exact--) {
        for (int32_t s = 0; s < NF_COUNT; s++)
            batch_nonfinite[s] = -2;
        int64_t stacked = check_batch("bert-tiny, a NaN and an inf sequence", m, encs, NF_COUNT, &o, 0, exact);
        CHECK_MSG(stacked >= 1 || (exact && !atn_cpu_fast_applies(m)), "%lld stacked", (long long)stacked);
        for (int32_t s = 0; s < NF_COUNT; s++) {
            int32_t want = s == NF_NAN_SEQ ? 0 : s == NF_BIG_SEQ ? 1 : -1;
            CHECK_MSG(batch_nonfinite[s] == want, "sequence %d in the batch: nonfinite_layer %d, expected %d", s,
                      batch_nonfinite[s], want);
        }
    }
    /* a callback that fails at the first non-finite sequence: the batch ends there, naming it */
    atn_batch *b = atn_batch_new(m);
    atn_batch_set_exact(b, false);
    expect x = {m, encs, &o, 0, 0, -1, false, 0};
    int32_t failed = -5;
    atn_status st = atn_batch_forward(b, encs, NF_COUNT, &o, stop_at_nonfinite, &x, &failed, &err);
    CHECK_MSG(st == ATN_E_INVALID && failed == NF_BIG_SEQ && x.seen == NF_BIG_SEQ + 1, "status %d, failed %d, seen %d",
              st, failed, x.seen);
    CHECK(strstr(err.message, "sequence 3 is not finite from layer 1") != NULL);
    atn_run_free(x.run);
    atn_batch_free(b);
    free_all(encs, NF_COUNT);
    atn_model_free(m);
}

static void test_random(const char *shape) {
    atn_error err = {0};
    atn_model *m = atn_model_new_random_shape(shape, 11, &err);
    CHECK_MSG(m, "%s", err.message);
    if (!m)
        return;
    atn_encoding *encs[30];
    for (int32_t i = 0; i < 30; i++)
        encs[i] = random_ids(m, 8 + (int32_t)(next_u32() % 33));   /* 8..40 tokens */
    atn_run_options o;
    atn_run_options_init(&o);
    char what[64];
    snprintf(what, sizeof what, "%s, 8-40 tokens", shape);
    both(what, m, encs, 30, &o, 0, true, 2);
    o.threads = 1;
    snprintf(what, sizeof what, "%s, one thread", shape);
    both(what, m, encs, 30, &o, 0, true, 2);
    free_all(encs, 30);
    atn_model_free(m);
}

static void test_gpt2(void) {
    const char *src = getenv("ATN_SOURCE_ROOT");
    char path[4096];
    snprintf(path, sizeof path, "%s/tests/hf/models/gpt2-f32", src ? src : ".");
    atn_error err = {0};
    atn_model *m = atn_model_open(path, NULL, NULL, &err);
    CHECK_MSG(m, "%s", err.message);
    if (!m)
        return;
    atn_encoding *encs[10];
    for (int32_t i = 0; i < 10; i++)
        encs[i] = random_ids(m, 3 + i * 2);
    atn_run_options o;
    atn_run_options_init(&o);
    both("gpt2 (causal, pre-LN)", m, encs, 10, &o, 0, true, 1);
    free_all(encs, 10);
    atn_model_free(m);
}

int main(void) {
    test_demo();
    test_random("bert-tiny");
    test_gpt2();
    test_nonfinite();
    atn_error err = {0};
    CHECK(atn_batch_forward(NULL, NULL, 0, NULL, each, NULL, NULL, &err) == ATN_E_INVALID);
    return check_summary("batch");
}
