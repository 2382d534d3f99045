/* The Train page's curves as data (atn-train-plots.h). */
#include "atn-train-plots.h"

#include <glib/gi18n.h>
#include <math.h>
#include <string.h>

AtnTrainCurves *atn_train_curves_new(const float *x, const float *loss, const float *acc, const float *norms,
                                     int32_t n, int32_t layers, int32_t steps_total) {
    AtnTrainCurves *c = g_new0(AtnTrainCurves, 1);
    c->n = n, c->layers = norms ? layers : 0, c->steps_total = steps_total;
    c->x = g_memdup2(x, (gsize)n * sizeof(float));
    c->loss = g_memdup2(loss, (gsize)n * sizeof(float));
    c->acc = g_memdup2(acc, (gsize)n * sizeof(float));
    c->norms = norms ? g_memdup2(norms, (gsize)n * (gsize)layers * sizeof(float)) : NULL;
    atn_render_style_init(&c->style, false);
    return c;
}

void atn_train_curves_free(gpointer p) {
    AtnTrainCurves *c = p;
    if (!c)
        return;
    g_free(c->x), g_free(c->loss), g_free(c->acc), g_free(c->norms);
    g_free(c);
}

#define MAX_POINTS 400

void atn_train_curves_draw_norms(cairo_t *cr, const AtnTrainCurves *c, const atn_render_style *style, double w,
                                 double h, const char *empty_text) {
    atn_line_chart_spec spec;
    atn_line_chart_spec_init(&spec);
    spec.style = style, spec.y_log = true;
    spec.title = _("Gradient norm per layer");
    spec.x_label = _("step");
    spec.empty_text = empty_text;
    int32_t L = c && c->norms ? c->layers : 0, n = c ? c->n : 0;
    if (!L || !n) {
        atn_render_line_chart(cr, &spec, w, h);
        return;
    }
    /* a run of `per` steps per point, its mean */
    int32_t per = (n + MAX_POINTS - 1) / MAX_POINTS, m = (n + per - 1) / per;
    float *xs = g_new(float, (gsize)m), *ys = g_new(float, (gsize)m * L);
    for (int32_t p = 0; p < m; p++) {
        int32_t a = p * per, b = MIN(n, a + per);
        double sx = 0;
        for (int32_t i = a; i < b; i++)
            sx += c->x[i];
        xs[p] = (float)(sx / (b - a));
        for (int32_t k = 0; k < L; k++) {
            double sy = 0;
            for (int32_t i = a; i < b; i++)
                sy += c->norms[(size_t)i * L + k];
            ys[(size_t)k * m + p] = (float)(sy / (b - a));
        }
    }
    atn_line_series *series = g_new0(atn_line_series, (gsize)L);
    char **names = g_new0(char *, (gsize)L);
    for (int32_t k = 0; k < L; k++) {
        names[k] = g_strdup_printf(_("layer %d"), (int)k);
        series[k] = (atn_line_series){.name = names[k], .x = xs, .y = ys + (size_t)k * m, .n = m};
    }
    spec.series = series, spec.n_series = L;
    atn_render_line_chart(cr, &spec, w, h);
    for (int32_t k = 0; k < L; k++)
        g_free(names[k]);
    g_free(names), g_free(series), g_free(xs), g_free(ys);
}

void atn_train_curves_draw_figure(cairo_t *cr, double w, double h, void *user) {
    const AtnTrainCurves *c = user;
    atn_train_curve_spec spec;
    atn_train_curve_spec_init(&spec);
    spec.style = &c->style;
    spec.title = _("Loss and accuracy");
    spec.x = c->x, spec.loss = c->loss, spec.accuracy = c->acc, spec.n = c->n;
    spec.x_max = (float)c->steps_total;
    double left = c->layers ? w * 0.55 : w;
    cairo_save(cr);
    atn_render_train_curve(cr, &spec, left, h);
    cairo_restore(cr);
    if (c->layers) {
        cairo_save(cr);
        cairo_translate(cr, left, 0);
        atn_train_curves_draw_norms(cr, c, &c->style, w - left, h, NULL);
        cairo_restore(cr);
    }
}

char *atn_train_curves_csv(const AtnTrainCurves *c) {
    GString *s = g_string_new("step,loss,accuracy");
    for (int32_t k = 0; k < c->layers; k++)
        g_string_append_printf(s, ",grad_norm_layer%d", (int)k);
    g_string_append_c(s, '\n');
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    for (int32_t i = 0; i < c->n; i++) {
        /* %g through g_ascii_formatd: a dot whatever the locale */
        g_string_append_printf(s, "%d,", (int)c->x[i]);
        g_string_append(s, g_ascii_formatd(buf, sizeof buf, "%.7g", c->loss[i]));
        g_string_append_c(s, ',');
        g_string_append(s, g_ascii_formatd(buf, sizeof buf, "%.6g", c->acc[i]));
        for (int32_t k = 0; k < c->layers; k++) {
            g_string_append_c(s, ',');
            g_string_append(s, g_ascii_formatd(buf, sizeof buf, "%.7g", c->norms[(size_t)i * c->layers + k]));
        }
        g_string_append_c(s, '\n');
    }
    return g_string_free(s, FALSE);
}
