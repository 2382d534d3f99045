/* engine/analysis/similarity.c against hand-computed answers: JS distance (identical heads, one-hot
 * vs uniform in closed form, a plain double-precision reference), cosine and Pearson on small
 * maps worked by hand, head similarity on a constructed capture (masking, scopes, labels,
 * corpus averaging) and the progress callback (fractions, cancelling). */
#include "analysis.h"
#include "check.h"
#include "fake-capture.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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
    CHECK(!acc->clustered);   /* still adding */
    atn_similarity *one;
    CHECK(atn_similarity_compute(&f.cap, ATN_METRIC_COSINE, ATN_SCOPE_MODEL, 0, &one, NULL) == ATN_OK);
    CHECK(one->clustered);
    set_pattern(head_of(&f, 0, 1), 5, 0); /* now identical to L0·H0 */
    CHECK(atn_similarity_add(acc, &f.cap, NULL) == ATN_OK);
    CHECK(atn_similarity_finish(acc, NULL) == ATN_OK);
    CHECK(acc->clustered);
    CHECK_NEAR(acc->values[1], 0.5 * (one->values[1] + 1.0), 1e-6);
    CHECK(acc->n_sentences == 2);
    /* the accumulator's state is behind the struct: add after finish is refused, and a
       second finish changes nothing */
    double v1 = acc->values[1];
    CHECK(atn_similarity_add(acc, &f.cap, NULL) == ATN_E_INVALID);
    CHECK(atn_similarity_finish(acc, NULL) == ATN_OK && acc->values[1] == v1 && acc->n_sentences == 2);
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

static bool log_progress(double fraction, atn_stage stage, void *user) {
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

int main(void) {
    test_js();
    test_cosine_pearson();
    test_similarity_capture();
    test_similarity_progress();
    return check_summary("similarity");
}
