/* Analysis against hand-computed answers: JS distance (identical heads, one-hot vs uniform in
 * closed form, a plain double-precision reference), cosine and Pearson on small maps worked
 * by hand, average-linkage merges on points of a line, planted blocks, masking, per-head
 * statistics and labels on constructed heads, corpus averaging, and a 2-layer rollout. */
#include "analysis.h"
#include "check.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- JS ------------------------------------------------------------------------------ */

static double ref_js_distance(const float *p, const float *q, int rows, int cols) {
    double total = 0;
    for (int r = 0; r < rows; r++) {
        double jsd = 0;
        for (int j = 0; j < cols; j++) {
            double a = p[r * cols + j], b = q[r * cols + j], m = 0.5 * (a + b);
            if (a > 0)
                jsd += 0.5 * a * log2(a / m);
            if (b > 0)
                jsd += 0.5 * b * log2(b / m);
        }
        total += sqrt(jsd > 0 ? jsd : 0);
    }
    return total / rows;
}

static void random_rows(float *x, int rows, int cols, unsigned *seed, double sharp) {
    for (int r = 0; r < rows; r++) {
        double s = 0;
        for (int j = 0; j < cols; j++) {
            *seed = *seed * 1103515245u + 12345u;
            double u = ((*seed >> 8) & 0xffff) / 65536.0;
            x[r * cols + j] = (float)exp(sharp * u);
            s += x[r * cols + j];
        }
        for (int j = 0; j < cols; j++)
            x[r * cols + j] = (float)(x[r * cols + j] / s);
    }
}

static void test_js(void) {
    /* one-hot against uniform, n = 5 and n = 128 (crosses the 16-wide padding) */
    int sizes[] = {5, 128, 37};
    for (int t = 0; t < 3; t++) {
        int n = sizes[t];
        float *heads = calloc((size_t)2 * n * n, sizeof *heads);
        for (int r = 0; r < n; r++) {
            heads[r * n + (r * 7) % n] = 1.0f;                  /* head 0: one-hot rows */
            for (int j = 0; j < n; j++)
                heads[n * n + r * n + j] = 1.0f / (float)n;      /* head 1: uniform */
        }
        double out[4];
        CHECK(atn_similarity_matrix(heads, 2, n, n, ATN_METRIC_JS, out, NULL) == ATN_OK);
        /* M = ((1 + 1/n)/2 once, 1/(2n) n-1 times); JSD = H(M) - (0 + log2 n)/2 */
        double m1 = (1.0 + 1.0 / n) / 2, m0 = 1.0 / (2.0 * n);
        double hm = -m1 * log2(m1) - (n - 1) * m0 * log2(m0);
        double want = sqrt(hm - 0.5 * log2((double)n));
        CHECK_NEAR(out[1], want, 2e-5);
        CHECK_NEAR(out[2], want, 2e-5);
        CHECK(out[0] == 0.0 && out[3] == 0.0);
        free(heads);
    }
    /* random heads: identical ones give exactly 0, the rest match a plain double reference */
    int count = 6, rows = 23, cols = 23;
    float *h = malloc((size_t)count * rows * cols * sizeof *h);
    unsigned seed = 7;
    for (int c = 0; c < count; c++)
        random_rows(h + (size_t)c * rows * cols, rows, cols, &seed, c * 1.5);
    memcpy(h + (size_t)5 * rows * cols, h + (size_t)2 * rows * cols, (size_t)rows * cols * sizeof *h);
    double *out = malloc((size_t)count * count * sizeof *out);
    CHECK(atn_similarity_matrix(h, count, rows, cols, ATN_METRIC_JS, out, NULL) == ATN_OK);
    CHECK_MSG(out[2 * count + 5] == 0.0, "identical heads: %g", out[2 * count + 5]);
    double maxd = 0;
    for (int a = 0; a < count; a++)
        for (int b = 0; b < count; b++) {
            CHECK(out[a * count + b] == out[b * count + a]);
            double want = a == b ? 0 : ref_js_distance(h + (size_t)a * rows * cols, h + (size_t)b * rows * cols, rows,
                                                       cols);
            maxd = fmax(maxd, fabs(out[a * count + b] - want));
        }
    CHECK_MSG(maxd < 1e-4, "JS vs reference: max diff %g", maxd);
    free(h);
    free(out);
}

static void test_cosine_pearson(void) {
    /* x = [1,0;0,1], y = [0.9,0.1;0.2,0.8], by hand:
     * cos = (0.9 + 0.8) / (sqrt(2) * sqrt(0.81 + 0.01 + 0.04 + 0.64)) = 1.7 / (1.41421 * 1.22066) = 0.98478
     * Pearson: dx = [.5,-.5,-.5,.5], dy = [.4,-.4,-.3,.3]: 0.7 / (1 * sqrt(0.5)) = 0.98995 */
    float h[8] = {1, 0, 0, 1, 0.9f, 0.1f, 0.2f, 0.8f};
    double out[4];
    CHECK(atn_similarity_matrix(h, 2, 2, 2, ATN_METRIC_COSINE, out, NULL) == ATN_OK);
    CHECK_NEAR(out[1], 1.7 / (sqrt(2.0) * sqrt(1.5)), 1e-6);
    CHECK_NEAR(out[0], 1.0, 0);
    CHECK(atn_similarity_matrix(h, 2, 2, 2, ATN_METRIC_PEARSON, out, NULL) == ATN_OK);
    CHECK_NEAR(out[1], 0.7 / sqrt(0.5), 1e-6);
    CHECK_NEAR(out[2], out[1], 0);
    /* a constant map has no correlation: reported as 0, not NaN */
    float c[8] = {0.25f, 0.25f, 0.25f, 0.25f, 1, 0, 0, 1};
    CHECK(atn_similarity_matrix(c, 2, 2, 2, ATN_METRIC_PEARSON, out, NULL) == ATN_OK);
    CHECK(out[1] == 0.0);
}

/* ---- clustering ------------------------------------------------------------------------- */

static void test_cluster(void) {
    /* points 0, 1, 3, 7 on a line, average linkage by hand:
     * {0,1} at 1; d({0,1},3) = (3+2)/2 = 2.5, d({0,1},7) = 6.5, d(3,7) = 4 -> {0,1,3} at 2.5;
     * d({0,1,3},7) = (7+6+4)/3 = 5.6667.  scipy: [[0,1,1],[2,4,2.5],[3,5,5.667]], leaves [3,2,0,1] */
    double x[4] = {0, 1, 3, 7}, d[16];
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++)
            d[i * 4 + j] = fabs(x[i] - x[j]);
    int32_t order[4], ma[3], mb[3];
    double mh[3];
    CHECK(atn_cluster_average_linkage(d, 4, order, ma, mb, mh, NULL) == ATN_OK);
    CHECK(ma[0] == 0 && mb[0] == 1);
    CHECK(ma[1] == 2 && mb[1] == 4);
    CHECK(ma[2] == 3 && mb[2] == 5);
    CHECK_NEAR(mh[0], 1.0, 1e-12);
    CHECK_NEAR(mh[1], 2.5, 1e-12);
    CHECK_NEAR(mh[2], 17.0 / 3.0, 1e-12);
    CHECK(order[0] == 3 && order[1] == 2 && order[2] == 0 && order[3] == 1);

    /* planted blocks: {0,2,4,6} and {1,3,5} close inside, far apart; the order keeps each
     * block contiguous and the last merge is at the between-block distance */
    enum { N = 7 };
    double p[N * N];
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
            p[i * N + j] = i == j ? 0 : (i % 2) == (j % 2) ? 0.1 + 0.01 * ((i + j) % 3) : 0.9;
    int32_t o[N], a[N - 1], b[N - 1];
    double hgt[N - 1];
    CHECK(atn_cluster_average_linkage(p, N, o, a, b, hgt, NULL) == ATN_OK);
    int changes = 0;
    for (int i = 1; i < N; i++)
        changes += (o[i] % 2) != (o[i - 1] % 2);
    CHECK_MSG(changes == 1, "blocks interleaved: %d %d %d %d %d %d %d", o[0], o[1], o[2], o[3], o[4], o[5], o[6]);
    CHECK_NEAR(hgt[N - 2], 0.9, 1e-12);
    int seen[N] = {0};
    for (int i = 0; i < N; i++)
        seen[o[i]]++;
    for (int i = 0; i < N; i++)
        CHECK(seen[i] == 1);
}

/* ---- constructed captures ----------------------------------------------------------------- */

typedef struct fake {
    atn_capture cap;
    atn_encoding enc;
    atn_token tok[16];
    int32_t ids[16], types[16], mask[16];
    float attn[4 * 4 * 16 * 16];
} fake;

static void fake_init(fake *f, int L, int H, int n, const char *const *texts) {
    memset(f, 0, sizeof *f);
    f->enc.n = n;
    f->enc.tokens = f->tok;
    f->enc.ids = f->ids;
    f->enc.type_ids = f->types;
    f->enc.mask = f->mask;
    for (int i = 0; i < n; i++) {
        f->tok[i].text = (char *)texts[i];
        f->tok[i].special = texts[i][0] == '[';
        f->mask[i] = 1;
    }
    f->cap.n_layers = L;
    f->cap.n_heads = H;
    f->cap.n = n;
    f->cap.enc = &f->enc;
    f->cap.attn = f->attn;
    f->cap.nonfinite_layer = -1;
}

static float *head_of(fake *f, int l, int h) {
    int n = f->cap.n;
    return f->attn + ((size_t)l * f->cap.n_heads + h) * n * n;
}

static void set_pattern(float *a, int n, int kind) {
    memset(a, 0, sizeof(float) * n * n);
    for (int i = 0; i < n; i++)
        switch (kind) {
        case 0: a[i * n + (i > 0 ? i - 1 : 0)] = 1; break;     /* previous (row 0 on itself) */
        case 1: a[i * n + (i + 1 < n ? i + 1 : i)] = 1; break; /* next */
        case 2: a[i * n + 0] = 1; break;                       /* [CLS] */
        case 3: a[i * n + 3] = 1; break;                       /* the comma */
        case 4:
            for (int j = 0; j < n; j++)
                a[i * n + j] = 1.0f / n;                       /* uniform */
            break;
        case 5: a[i * n + n - 1] = 1; break;                   /* [SEP] */
        }
}

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

static void test_similarity_capture(void) {
    static const char *const toks[5] = {"[CLS]", "x", "y", "[SEP]", "[PAD]"};
    static fake f;
    fake_init(&f, 2, 2, 5, toks);
    f.mask[4] = 0;
    set_pattern(head_of(&f, 0, 0), 5, 0);
    set_pattern(head_of(&f, 0, 1), 5, 4);
    set_pattern(head_of(&f, 1, 0), 5, 2);
    set_pattern(head_of(&f, 1, 1), 5, 0);
    /* L1·H1 differs from L0·H0 only in the padded row: masked, so they are identical */
    head_of(&f, 1, 1)[4 * 5 + 4] = 1;
    head_of(&f, 1, 1)[4 * 5 + 3] = 0;
    atn_similarity *s;
    CHECK(atn_similarity_compute(&f.cap, ATN_METRIC_JS, ATN_SCOPE_MODEL, 0, &s, NULL) == ATN_OK);
    CHECK(s->count == 4 && s->n_sentences == 1);
    CHECK(s->values[0 * 4 + 3] == 0.0);
    CHECK(s->values[0 * 4 + 1] > 0.3);
    /* the identical pair sits next to each other in the order */
    int p0 = -1, p3 = -1;
    for (int i = 0; i < 4; i++) {
        if (s->order[i] == 0)
            p0 = i;
        if (s->order[i] == 3)
            p3 = i;
    }
    CHECK(abs(p0 - p3) == 1);
    char buf[32];
    CHECK_STR(atn_similarity_label(s, 3, buf, sizeof buf), "L1\xc2\xb7H1");
    atn_similarity_free(s);

    CHECK(atn_similarity_compute(&f.cap, ATN_METRIC_COSINE, ATN_SCOPE_LAYER, 1, &s, NULL) == ATN_OK);
    CHECK(s->count == 2 && s->layer_of[0] == 1 && s->head_of[1] == 1);
    CHECK_STR(atn_similarity_label(s, 1, buf, sizeof buf), "H1");
    atn_similarity_free(s);

    atn_error err = {0};
    CHECK(atn_similarity_compute(&f.cap, ATN_METRIC_JS, ATN_SCOPE_LAYER, 2, &s, &err) == ATN_E_INVALID);
    CHECK(s == NULL && strstr(err.message, "layer 2"));

    /* corpus mode: the mean of two sentences */
    atn_similarity *acc = atn_similarity_new(2, 2, ATN_METRIC_COSINE, ATN_SCOPE_MODEL, 0, NULL);
    CHECK(atn_similarity_add(acc, &f.cap, NULL) == ATN_OK);
    atn_similarity *one;
    CHECK(atn_similarity_compute(&f.cap, ATN_METRIC_COSINE, ATN_SCOPE_MODEL, 0, &one, NULL) == ATN_OK);
    set_pattern(head_of(&f, 0, 1), 5, 0); /* now identical to L0·H0 */
    CHECK(atn_similarity_add(acc, &f.cap, NULL) == ATN_OK);
    CHECK(atn_similarity_finish(acc, NULL) == ATN_OK);
    CHECK_NEAR(acc->values[1], 0.5 * (one->values[1] + 1.0), 1e-6);
    CHECK(acc->n_sentences == 2);
    atn_similarity_free(acc);
    atn_similarity_free(one);
    atn_similarity_free(NULL);

    atn_metric m;
    CHECK(atn_metric_from_name("pearson", &m) && m == ATN_METRIC_PEARSON);
    CHECK(!atn_metric_from_name("kl", &m));
}

/* The progress callback: called while the pairs are compared, fractions in [0, 1] and not
 * going back; returning true changes nothing; returning false stops with ATN_E_CANCELLED. */
typedef struct progress_log {
    int calls, stop_at;
    double last;
    bool went_back, out_of_range;
} progress_log;

static bool log_progress(double fraction, const char *what, void *user) {
    progress_log *p = user;
    p->calls++;
    if (fraction < p->last)
        p->went_back = true;
    if (!(fraction >= 0 && fraction <= 1))
        p->out_of_range = true;
    p->last = fraction;
    return p->stop_at == 0 || p->calls < p->stop_at;
}

static void test_similarity_progress(void) {
    enum { L = 4, H = 16, N = 40 };   /* 2,016 pairs of 40 x 40: enough work for the threads */
    float *attn = malloc(sizeof(float) * L * H * N * N);
    unsigned seed = 7;
    random_rows(attn, L * H * N, N, &seed, 4.0);
    atn_capture cap = {.n_layers = L, .n_heads = H, .n = N, .attn = attn, .nonfinite_layer = -1};
    atn_similarity *plain = NULL, *s = NULL;
    CHECK(atn_similarity_compute(&cap, ATN_METRIC_JS, ATN_SCOPE_MODEL, 0, &plain, NULL) == ATN_OK);
    progress_log go = {0};
    CHECK(atn_similarity_compute_progress(&cap, ATN_METRIC_JS, ATN_SCOPE_MODEL, 0, log_progress, &go, &s, NULL) ==
          ATN_OK);
    CHECK(s != NULL && go.calls > 10 && !go.went_back && !go.out_of_range);
    CHECK(s && memcmp(s->values, plain->values, sizeof(double) * L * H * L * H) == 0);
    CHECK(s && memcmp(s->order, plain->order, sizeof(int32_t) * L * H) == 0);
    atn_similarity_free(s);

    progress_log stop = {.stop_at = 5};
    atn_error err = {0};
    s = (atn_similarity *)&stop;   /* must be reset to NULL */
    CHECK(atn_similarity_compute_progress(&cap, ATN_METRIC_JS, ATN_SCOPE_MODEL, 0, log_progress, &stop, &s, &err) ==
          ATN_E_CANCELLED);
    CHECK(s == NULL && stop.calls == 5 && strstr(err.message, "cancelled"));

    /* the corpus mode: each add reports, a stop leaves the sums untouched */
    atn_similarity *acc = atn_similarity_new(L, H, ATN_METRIC_JS, ATN_SCOPE_MODEL, 0, NULL);
    progress_log stop2 = {.stop_at = 3};
    atn_similarity_set_progress(acc, log_progress, &stop2);
    CHECK(atn_similarity_add(acc, &cap, NULL) == ATN_E_CANCELLED && acc->n_sentences == 0);
    atn_similarity_set_progress(acc, NULL, NULL);
    CHECK(atn_similarity_add(acc, &cap, NULL) == ATN_OK && atn_similarity_finish(acc, NULL) == ATN_OK);
    CHECK(acc->n_sentences == 1 && memcmp(acc->values, plain->values, sizeof(double) * L * H * L * H) == 0);
    atn_similarity_free(acc);
    atn_similarity_free(plain);
    free(attn);
}

static void test_rollout(void) {
    /* H = 2, n = 2.  Layer 0 heads [[1,0],[0,1]] and [[1,0],[1,0]]: mean [[1,0],[.5,.5]];
     * A'0 = 0.5 A + 0.5 I = [[1,0],[.25,.75]].  Layer 1 heads both [[0,1],[1,0]]:
     * A'1 = [[.5,.5],[.5,.5]].  R = A'1 A'0 = [[.625,.375],[.625,.375]]. */
    static const char *const toks[2] = {"a", "b"};
    static fake f;
    fake_init(&f, 2, 2, 2, toks);
    float l0h0[4] = {1, 0, 0, 1}, l0h1[4] = {1, 0, 1, 0}, l1[4] = {0, 1, 1, 0};
    memcpy(head_of(&f, 0, 0), l0h0, sizeof l0h0);
    memcpy(head_of(&f, 0, 1), l0h1, sizeof l0h1);
    memcpy(head_of(&f, 1, 0), l1, sizeof l1);
    memcpy(head_of(&f, 1, 1), l1, sizeof l1);
    float r[4];
    CHECK(atn_rollout_compute(&f.cap, -1, r, NULL) == ATN_OK);
    float want[4] = {0.625f, 0.375f, 0.625f, 0.375f};
    CHECK_ARRAY_NEAR("rollout", r, want, 4, 1e-7);
    CHECK(atn_rollout_compute(&f.cap, 0, r, NULL) == ATN_OK);
    float want0[4] = {1.0f, 0.0f, 0.25f, 0.75f};
    CHECK_ARRAY_NEAR("rollout layer 0", r, want0, 4, 1e-7);
    atn_error err = {0};
    CHECK(atn_rollout_compute(&f.cap, 2, r, &err) == ATN_E_INVALID);
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

int main(void) {
    test_js();
    test_cosine_pearson();
    test_cluster();
    test_stats();
    test_similarity_capture();
    test_similarity_progress();
    test_rollout();
    test_punct();
    return check_summary("analysis");
}
