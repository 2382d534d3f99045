/* The what-if lab's comparison of two captures of one input (analysis.h,
 * atn_capture_diff): per-head Jensen-Shannon distance and largest change, per-layer
 * hidden-state drift. */
#include "analysis.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void atn_capture_diff_free(atn_capture_diff *d) {
    if (!d)
        return;
    free(d->js);
    free(d->max_abs);
    free(d->drift);
    free(d);
}

/* sqrt(JSD(p, q)) in bits for two rows of n probabilities. */
static double js_distance(const float *p, const float *q, int32_t n) {
    double sp = 0, sq = 0;
    for (int32_t j = 0; j < n; j++)
        sp += p[j], sq += q[j];
    if (sp == 0 || sq == 0)
        return sp == sq ? 0.0 : 1.0;
    double jsd = 0;
    for (int32_t j = 0; j < n; j++) {
        double a = p[j] / sp, b = q[j] / sq, m = 0.5 * (a + b);
        if (a > 0)
            jsd += 0.5 * a * log2(a / m);
        if (b > 0)
            jsd += 0.5 * b * log2(b / m);
    }
    return sqrt(jsd > 0 ? (jsd < 1 ? jsd : 1) : 0);
}

atn_status atn_capture_diff_compute(const atn_capture *a, const atn_capture *b, atn_capture_diff **out,
                                    atn_error *err) {
    if (out)
        *out = NULL;
    if (!a || !b || !out)
        return atn_error_set(err, ATN_E_INVALID, "diff: NULL capture or result");
    if (!atn_capture_has_heads(a) || !atn_capture_has_heads(b))
        return atn_error_set(err, ATN_E_INVALID, "diff: a capture without attention (keep_attention was false)");
    if (a->n_layers != b->n_layers || a->n_heads != b->n_heads || a->n != b->n || a->d_model != b->d_model)
        return atn_error_set(err, ATN_E_INVALID, "diff: the captures differ in shape (%d x %d heads, %d tokens "
                             "vs %d x %d heads, %d tokens)", a->n_layers, a->n_heads, a->n, b->n_layers, b->n_heads,
                             b->n);
    int32_t L = a->n_layers, H = a->n_heads, n = a->n, d = a->d_model;
    atn_capture_diff *r = calloc(1, sizeof *r);
    if (!r)
        return atn_error_set(err, ATN_E_NOMEM, "out of memory");
    r->n_layers = L, r->n_heads = H, r->n = n;
    r->js = calloc((size_t)L * H, sizeof(float));
    r->max_abs = calloc((size_t)L * H, sizeof(float));
    r->drift = calloc((size_t)L + 1, sizeof(float));
    if (!r->js || !r->max_abs || !r->drift) {
        atn_capture_diff_free(r);
        return atn_error_set(err, ATN_E_NOMEM, "out of memory");
    }
    const int32_t *mask = a->enc ? a->enc->mask : NULL;
    int32_t real = 0;
    for (int32_t i = 0; i < n; i++)
        real += !mask || mask[i];
    /* one head of each at a time: room for the heads made on demand */
    float *sa = a->attn ? NULL : malloc((size_t)n * n * sizeof(float));
    float *sb = b->attn ? NULL : malloc((size_t)n * n * sizeof(float));
    if ((!a->attn && !sa) || (!b->attn && !sb)) {
        free(sa), free(sb);
        atn_capture_diff_free(r);
        return atn_error_set(err, ATN_E_NOMEM, "out of memory");
    }
    for (int32_t lh = 0; lh < L * H; lh++) {
        const float *pa = atn_capture_head_read(a, lh / H, lh % H, sa, err);
        const float *pb = pa ? atn_capture_head_read(b, lh / H, lh % H, sb, err) : NULL;
        if (!pb) {
            free(sa), free(sb);
            atn_capture_diff_free(r);
            return err ? err->status : ATN_E_INVALID;
        }
        double js = 0, mx = 0;
        for (int32_t i = 0; i < n; i++) {
            if (mask && !mask[i])
                continue;
            js += js_distance(pa + (size_t)i * n, pb + (size_t)i * n, n);
        }
        for (size_t c = 0; c < (size_t)n * n; c++) {
            double t = fabs((double)pa[c] - pb[c]);
            mx = t > mx ? t : mx;
        }
        r->js[lh] = (float)(real ? js / real : 0);
        r->max_abs[lh] = (float)mx;
    }
    free(sa), free(sb);
    for (int32_t l = 0; l <= L && a->hidden && b->hidden; l++) {
        double s = 0;
        for (int32_t i = 0; i < n; i++) {
            if (mask && !mask[i])
                continue;
            const float *x = a->hidden + ((size_t)l * n + i) * d, *y = b->hidden + ((size_t)l * n + i) * d;
            double xy = 0, xx = 0, yy = 0;
            for (int32_t c = 0; c < d; c++)
                xy += (double)x[c] * y[c], xx += (double)x[c] * x[c], yy += (double)y[c] * y[c];
            s += xx > 0 && yy > 0 ? 1.0 - xy / sqrt(xx * yy) : (xx == yy ? 0.0 : 1.0);
        }
        r->drift[l] = (float)(real ? s / real : 0);
    }
    *out = r;
    return ATN_OK;
}
