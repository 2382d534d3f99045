/* One query's row as bars over the keys (the Head view's "one query" mode and its export).
 * At 512 keys a bar is a pixel or two wide: the labels under the bars are thinned to those
 * that fit, and the largest weights are named above their bars so the row still reads. */
#include "render-private.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void atn_query_bars_spec_init(atn_query_bars_spec *s) {
    memset(s, 0, sizeof *s);
    s->colormap = ATN_CMAP_VIRIDIS;
    s->range.automatic = true;
    s->hover_col = -1;
    s->top_labels = 8;
}

static const char *key_label(const atn_query_bars_spec *s, int32_t j, char *buf, size_t size) {
    if (s->labels && s->labels[j])
        return s->labels[j];
    snprintf(buf, size, "%d", j);
    return buf;
}

static void resolve(const atn_query_bars_spec *s, int32_t *c0, int32_t *nc, double *vmin, double *vmax) {
    int32_t n = s->n > 0 ? s->n : 1;
    *nc = s->view_cols > 0 && s->view_cols < n ? s->view_cols : n;
    *c0 = s->view_col0 < 0 ? 0 : s->view_col0 > n - *nc ? n - *nc : s->view_col0;
    if (s->range.automatic && s->vmax > s->vmin) {
        *vmin = s->vmin;
        *vmax = s->vmax;
    } else {
        atn_value_range_resolve(&s->range, s->values, 1, s->n > 0 ? s->n : 0, 0, s->colormap, vmin, vmax);
    }
}

static void layout_with(rtext *t, const atn_query_bars_spec *s, double w, double h, atn_query_bars_layout *B) {
    memset(B, 0, sizeof *B);
    double fs = t->fs, pad = 10 * fs, gap = 4 * fs;
    double lh = rt_line_height(t, RT_LABEL), sh = rt_line_height(t, RT_SMALL);
    resolve(s, &B->view_col0, &B->view_cols, &B->vmin, &B->vmax);
    double x0 = pad, y0 = pad, x1 = w - pad, y1 = h - pad;
    if (s->title && s->title[0]) {
        double th = rt_line_height(t, RT_TITLE);
        B->title = (atn_rect){x0, y0, x1 - x0, th};
        y0 += th + 2 * gap;
    }
    /* value ticks on the left */
    double ticks[16], step, tw = 0;
    int nt = rt_ticks(B->vmin, B->vmax, 6, ticks, &step);
    char buf[32];
    for (int i = 0; i < nt; i++) {
        double tw1;
        rt_format_tick(buf, sizeof buf, ticks[i], step);
        rt_measure(t, buf, RT_SMALL, false, &tw1, NULL);
        tw = fmax(tw, tw1);
    }
    double ax = (s->value_axis ? sh + gap : 0) + tw + 2 * gap;
    /* room above the bars for the names of the largest ones */
    double top = s->top_labels > 0 ? lh + sh + gap : 0;
    double max_lw = 0;
    for (int32_t j = 0; j < s->n; j++) {
        double lw;
        rt_measure(t, key_label(s, j, buf, sizeof buf), RT_LABEL, true, &lw, NULL);
        max_lw = fmax(max_lw, lw);
    }
    double lab_h = fmin(max_lw, 0.25 * h) + gap;
    double kx = s->key_axis ? sh + gap : 0;
    B->plot = (atn_rect){x0 + ax, y0 + top, fmax(1, x1 - x0 - ax), fmax(1, y1 - y0 - top - lab_h - kx)};
    B->bar_w = B->plot.w / B->view_cols;
    B->labels = (atn_rect){B->plot.x, B->plot.y + B->plot.h + gap, B->plot.w, lab_h - gap};
    B->label_step = B->bar_w >= lh * 0.95 ? 1 : (int32_t)ceil(lh * 0.95 / B->bar_w);
}

void atn_render_query_bars_layout(const atn_query_bars_spec *s, double w, double h, atn_query_bars_layout *out) {
    rtext t;
    rt_begin(&t, s->style);
    layout_with(&t, s, w, h, out);
    rt_end(&t);
}

bool atn_render_query_bars_key_at(const atn_query_bars_spec *s, double w, double h, double x, double y,
                                  int32_t *key) {
    atn_query_bars_layout B;
    atn_render_query_bars_layout(s, w, h, &B);
    *key = -1;
    if (s->n <= 0 || B.bar_w <= 0 || y < B.plot.y || y > B.labels.y + B.labels.h)
        return false;
    double f = (x - B.plot.x) / B.bar_w;
    if (!(f >= 0 && f < B.view_cols))
        return false;
    *key = B.view_col0 + (int32_t)f;
    return true;
}

static double bar_x(const atn_query_bars_layout *B, int32_t j) { return B->plot.x + (j - B->view_col0) * B->bar_w; }

static double bar_top(const atn_query_bars_layout *B, double v) {
    double f = (v - B->vmin) / (B->vmax - B->vmin);
    f = f < 0 ? 0 : f > 1 ? 1 : f;
    return B->plot.y + B->plot.h * (1 - f);
}

/* The k largest finite values of v[c0 .. c0+n-1], largest first, into idx; returns how many. */
static int32_t top_k(const float *v, int32_t c0, int32_t n, int32_t k, int32_t *idx) {
    int32_t m = 0;
    for (int32_t j = c0; j < c0 + n; j++) {
        if (!isfinite(v[j]))
            continue;
        int32_t p = m < k ? m++ : k;
        if (p == k && !(v[j] > v[idx[k - 1]]))
            continue;
        if (p == k)
            p = k - 1;
        while (p > 0 && v[idx[p - 1]] < v[j]) {
            idx[p] = idx[p - 1];
            p--;
        }
        idx[p] = j;
    }
    return m;
}

void atn_render_query_bars(cairo_t *cr, const atn_query_bars_spec *s, double w, double h) {
    rtext t;
    rt_begin(&t, s->style);
    atn_query_bars_layout B;
    layout_with(&t, s, w, h, &B);
    double fs = t.fs, gap = 4 * fs, lh = rt_line_height(&t, RT_LABEL), sh = rt_line_height(&t, RT_SMALL);
    char buf[32];
    cairo_save(cr);
    rt_background(cr, &t, w, h);
    rt_rgb(cr, t.st.fg, 1.0);
    if (s->title && s->title[0])
        rt_draw(cr, &t, s->title, RT_TITLE, true, B.title.x + B.title.w / 2, B.title.y, 0.5, B.title.w);
    /* value axis: ticks and faint grid lines */
    double ticks[16], step;
    int nt = rt_ticks(B.vmin, B.vmax, 6, ticks, &step);
    cairo_set_line_width(cr, 1);
    for (int i = 0; i < nt; i++) {
        double y = bar_top(&B, ticks[i]);
        rt_rgb(cr, t.st.fg, 0.15);
        cairo_move_to(cr, B.plot.x, y);
        cairo_line_to(cr, B.plot.x + B.plot.w, y);
        cairo_stroke(cr);
        rt_rgb(cr, t.st.fg, 1.0);
        rt_format_tick(buf, sizeof buf, ticks[i], step);
        rt_draw(cr, &t, buf, RT_SMALL, false, B.plot.x - gap, y - sh / 2, 1.0, 0);
    }
    if (s->value_axis) {
        double tw;
        rt_measure(&t, s->value_axis, RT_SMALL, false, &tw, NULL);
        rt_rgb(cr, t.st.fg, 0.8);
        rt_draw_up(cr, &t, s->value_axis, RT_SMALL, false, 10 * fs + sh / 2, B.plot.y + B.plot.h / 2 - tw / 2, 0);
    }
    /* the bars, in the colour their cells have */
    int32_t c1 = B.view_col0 + B.view_cols;
    double base = B.plot.y + B.plot.h;
    double inset = B.bar_w >= 4 ? B.bar_w * 0.12 : 0;
    for (int32_t j = B.view_col0; j < c1 && s->values; j++) {
        double v = s->values[j], rgb[3];
        if (!isfinite(v)) {
            cairo_set_source_rgb(cr, ATN_RENDER_NONFINITE_RGB);
            cairo_rectangle(cr, bar_x(&B, j) + inset, B.plot.y, fmax(0.5, B.bar_w - 2 * inset), B.plot.h);
            cairo_fill(cr);
            continue;
        }
        atn_colormap_rgb(s->colormap, (v - B.vmin) / (B.vmax - B.vmin), rgb);
        cairo_set_source_rgb(cr, rgb[0], rgb[1], rgb[2]);
        double top = bar_top(&B, v);
        cairo_rectangle(cr, bar_x(&B, j) + inset, top, fmax(0.5, B.bar_w - 2 * inset), base - top);
        cairo_fill(cr);
    }
    rt_rgb(cr, t.st.fg, 1.0);
    cairo_move_to(cr, B.plot.x, base + 0.5);
    cairo_line_to(cr, B.plot.x + B.plot.w, base + 0.5);
    cairo_stroke(cr);
    /* key labels that fit, rotated like the heatmap's */
    bool rotate = true;
    for (int32_t j = B.view_col0; j < c1; j++) {
        bool hi = j == s->hover_col;
        if (j % B.label_step != 0 && !hi)
            continue;
        const char *text = key_label(s, j, buf, sizeof buf);
        double tw;
        rt_measure(&t, text, RT_LABEL, hi, &tw, NULL);
        double xc = bar_x(&B, j) + B.bar_w / 2;
        if (hi) {
            rt_rgb(cr, t.st.bg, 1.0);
            cairo_rectangle(cr, xc - lh / 2, B.labels.y, lh, fmin(tw, B.labels.h) + 2);
            cairo_fill(cr);
        }
        bool dim = s->mask && !s->mask[j];
        rt_rgb(cr, hi ? t.st.accent : t.st.fg, dim ? 0.4 : 1.0);
        if (rotate)
            rt_draw_up(cr, &t, text, RT_LABEL, hi, xc, B.labels.y, tw > B.labels.h ? B.labels.h : 0);
    }
    if (s->key_axis) {
        rt_rgb(cr, t.st.fg, 0.8);
        rt_draw(cr, &t, s->key_axis, RT_SMALL, false, B.plot.x + B.plot.w / 2, B.labels.y + B.labels.h + gap, 0.5, 0);
    }
    /* the largest bars named above them: "token .42", skipping names that would overlap */
    if (s->top_labels > 0 && s->values && B.view_cols > 0) {
        int32_t *idx = malloc((size_t)(s->top_labels + 1) * sizeof *idx);
        double *used = malloc((size_t)(s->top_labels + 1) * 2 * sizeof *used);
        if (idx && used) {
            int32_t m = top_k(s->values, B.view_col0, B.view_cols, s->top_labels, idx);
            int n_used = 0;
            for (int32_t k = 0; k < m; k++) {
                int32_t j = idx[k];
                double v = s->values[j];
                if (!(v > B.vmin + 1e-3 * (B.vmax - B.vmin)))
                    break;
                char num[32], text[160];
                atn_render_cell_number(num, sizeof num, v, 2);
                snprintf(text, sizeof text, "%s %s", key_label(s, j, buf, sizeof buf), num);
                double tw;
                rt_measure(&t, text, RT_SMALL, true, &tw, NULL);
                double xc = bar_x(&B, j) + B.bar_w / 2;
                double xl = fmax(B.plot.x, fmin(xc - tw / 2, B.plot.x + B.plot.w - tw));
                bool clash = false;
                for (int u = 0; u < n_used; u++)
                    if (xl < used[2 * u + 1] + gap && xl + tw + gap > used[2 * u])
                        clash = true;
                if (clash)
                    continue;
                used[2 * n_used] = xl;
                used[2 * n_used + 1] = xl + tw;
                n_used++;
                double top = bar_top(&B, v);
                double ty = fmax(B.plot.y - sh - gap, top - sh - gap);
                rt_rgb(cr, t.st.fg, 0.5);
                cairo_move_to(cr, xc, ty + sh);
                cairo_line_to(cr, xc, top);
                cairo_stroke(cr);
                rt_rgb(cr, t.st.fg, 1.0);
                rt_draw(cr, &t, text, RT_SMALL, true, xl, ty, 0.0, 0);
            }
        }
        free(idx);
        free(used);
    }
    if (s->hover_col >= B.view_col0 && s->hover_col < c1) {
        double lw = fmax(1.0, 2.0 * fs);
        cairo_set_line_width(cr, lw);
        rt_rgb(cr, t.st.accent, 1.0);
        cairo_rectangle(cr, bar_x(&B, s->hover_col), B.plot.y, fmax(B.bar_w, 1), B.plot.h);
        cairo_stroke(cr);
    }
    cairo_restore(cr);
    rt_end(&t);
}

void atn_render_query_bars_natural_size(const atn_query_bars_spec *s, double *width, double *height) {
    rtext t;
    rt_begin(&t, s->style);
    double fs = t.fs;
    double bar = s->n <= 16 ? 36 : s->n <= 64 ? 16 : fmax(2.5, 1400.0 / (s->n > 0 ? s->n : 1));
    *width = ceil(fmax(420 * fs, 80 * fs + bar * fs * s->n));
    *height = ceil(420 * fs);
    rt_end(&t);
}
