/* Lines of several series over one x axis (render.h, atn_render_line_chart): the training
 * lab's experiments, accuracy by test length per position scheme and gradient norm by
 * layer per norm placement and depth. */
#include "render-private.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void atn_line_chart_spec_init(atn_line_chart_spec *s) { memset(s, 0, sizeof *s); }

typedef struct lc_geom {
    double left, right, top, bottom;
    double x0, x1, y0, y1;   /* the axes' ranges (y: log10 of them with y_log) */
} lc_geom;

static bool lc_ok(const atn_line_chart_spec *s, float v) { return isfinite(v) && (!s->y_log || v > 0); }

static double lc_px(const lc_geom *g, double x) {
    return g->left + (x - g->x0) / (g->x1 - g->x0) * (g->right - g->left);
}
static double lc_py(const atn_line_chart_spec *s, const lc_geom *g, double v) {
    double y = s->y_log ? log10(v) : v;
    return g->bottom - (y - g->y0) / (g->y1 - g->y0) * (g->bottom - g->top);
}

static void lc_ranges(const atn_line_chart_spec *s, lc_geom *g) {
    double xmn = INFINITY, xmx = -INFINITY, ymn = INFINITY, ymx = -INFINITY;
    for (int32_t k = 0; k < s->n_series; k++)
        for (int32_t i = 0; i < s->series[k].n; i++) {
            double x = s->series[k].x[i];
            xmn = fmin(xmn, x), xmx = fmax(xmx, x);
            float v = s->series[k].y[i];
            if (lc_ok(s, v))
                ymn = fmin(ymn, v), ymx = fmax(ymx, v);
            float e = s->series[k].err ? s->series[k].err[i] : 0;   /* the bars inside the axis */
            if (lc_ok(s, v) && e > 0 && isfinite(e)) {
                ymx = fmax(ymx, v + e);
                if (lc_ok(s, v - e))
                    ymn = fmin(ymn, v - e);
            }
        }
    if (!isfinite(xmn))
        xmn = 0, xmx = 1;
    if (xmx <= xmn)
        xmn -= 0.5, xmx += 0.5;
    double pad = 0.04 * (xmx - xmn);
    g->x0 = xmn - pad, g->x1 = xmx + pad;
    if (s->y_fixed) {
        g->y0 = s->y_min, g->y1 = s->y_max;
        if (s->y_log)
            g->y0 = log10(s->y_min), g->y1 = log10(s->y_max);
    } else if (!isfinite(ymn)) {
        g->y0 = 0, g->y1 = 1;
    } else if (s->y_log) {
        g->y0 = floor(log10(ymn)), g->y1 = ceil(log10(ymx));
        if (g->y1 <= g->y0)
            g->y1 = g->y0 + 1;
    } else {
        g->y0 = fmin(0, ymn), g->y1 = ymx > g->y0 ? ymx * 1.05 : g->y0 + 1;
    }
}

/* Draws s at its text size; false (only the background drawn) where the plot area left
 * by the text would be under 20 px. */
static bool draw_at(cairo_t *cr, const atn_line_chart_spec *s, double w, double h) {
    rtext t;
    rt_begin(&t, s->style);
    rt_background(cr, &t, w, h);
    double pad = 8 * t.fs, line = rt_line_height(&t, RT_SMALL), buf_w;
    char buf[64];
    rt_measure(&t, "1e-10", RT_SMALL, false, &buf_w, NULL);
    double title_h = s->title ? rt_line_height(&t, RT_TITLE) + pad : 0;
    /* the legend: one entry per series, in rows as wide as the plot */
    double legend_w = w - 2 * pad, x = 0;
    int rows = s->n_series ? 1 : 0;
    for (int32_t k = 0; k < s->n_series; k++) {
        double lw;
        rt_measure(&t, s->series[k].name ? s->series[k].name : "", RT_SMALL, false, &lw, NULL);
        lw += 28 * t.fs;
        if (x > 0 && x + lw > legend_w)
            rows++, x = 0;
        x += lw;
    }
    lc_geom g;
    g.left = pad + buf_w + (s->y_label ? line + 4 * t.fs : 0) + 6 * t.fs;
    g.right = w - pad - 12 * t.fs;
    g.top = pad + title_h + rows * (line + 2 * t.fs) + 4 * t.fs;
    g.bottom = h - pad - 2 * line - 6 * t.fs;
    if (g.right - g.left < 20 || g.bottom - g.top < 20) {
        rt_end(&t);
        return false;
    }
    lc_ranges(s, &g);
    if (s->title) {
        rt_rgb(cr, t.st.fg, 1);
        rt_draw(cr, &t, s->title, RT_TITLE, true, pad, pad, 0, w - 2 * pad);
    }
    /* the y axis: powers of ten (log) or nice ticks */
    cairo_set_line_width(cr, 1);
    double ticks[16], step;
    int nt;
    if (s->y_log) {
        nt = 0;
        for (int e = (int)floor(g.y0); e <= (int)ceil(g.y1) && nt < 16; e++)
            if (e >= g.y0 - 1e-9 && e <= g.y1 + 1e-9)
                ticks[nt++] = e;
        step = 1;
    } else {
        nt = rt_ticks(g.y0, g.y1, 6, ticks, &step);
    }
    for (int i = 0; i < nt; i++) {
        double v = s->y_log ? pow(10, ticks[i]) : ticks[i];
        double y = lc_py(s, &g, v);
        rt_rgb(cr, t.st.fg, 0.12);
        cairo_move_to(cr, g.left, round(y) + 0.5);
        cairo_line_to(cr, g.right, round(y) + 0.5);
        cairo_stroke(cr);
        if (s->y_log)
            (ticks[i] >= -2 && ticks[i] <= 2) ? snprintf(buf, sizeof buf, "%g", v)
                                              : snprintf(buf, sizeof buf, "1e%d", (int)ticks[i]);
        else if (s->y_percent)
            snprintf(buf, sizeof buf, "%g %%", 100 * v);
        else
            rt_format_tick(buf, sizeof buf, v, step);
        rt_rgb(cr, t.st.fg, 1);
        rt_draw(cr, &t, buf, RT_SMALL, false, g.left - 4 * t.fs, y - line / 2, 1, 0);
    }
    if (s->y_label) {   /* centred on the axis: its top end half its length above the middle */
        double yw;
        rt_measure(&t, s->y_label, RT_SMALL, false, &yw, NULL);
        yw = fmin(yw, g.bottom - g.top);
        rt_draw_up(cr, &t, s->y_label, RT_SMALL, false, pad + line / 2, (g.top + g.bottom - yw) / 2, g.bottom - g.top);
    }
    /* the x axis: the points' own x when there are few distinct ones (lengths, layers) */
    rt_rgb(cr, t.st.fg, 0.6);
    cairo_rectangle(cr, g.left + 0.5, g.top + 0.5, g.right - g.left - 1, g.bottom - g.top - 1);
    cairo_stroke(cr);
    rt_rgb(cr, t.st.fg, 1);
    nt = rt_ticks(g.x0, g.x1, 8, ticks, &step);
    if (s->x_integer) {   /* the points' own x when there are at most 16 of them, else whole ticks */
        double xs[16];
        int nx = 0;
        bool few = true;
        for (int32_t k = 0; k < s->n_series && few; k++)
            for (int32_t i = 0; i < s->series[k].n && few; i++) {
                double v = s->series[k].x[i];
                int j = 0;
                while (j < nx && xs[j] != v)
                    j++;
                if (j == nx)
                    few = nx < 16 ? (xs[nx++] = v, true) : false;
            }
        if (few && nx) {
            for (int i = 0; i < nx; i++)
                ticks[i] = xs[i];
            nt = nx, step = 1;
        } else if (step < 1) {
            nt = 0;
            for (double v = ceil(g.x0); v <= g.x1 && nt < 16; v++)
                ticks[nt++] = v;
            step = 1;
        }
    }
    for (int i = 0; i < nt; i++) {
        rt_format_tick(buf, sizeof buf, ticks[i], step);
        rt_draw(cr, &t, buf, RT_SMALL, false, lc_px(&g, ticks[i]), g.bottom + 3 * t.fs, 0.5, 0);
    }
    if (s->x_label)
        rt_draw(cr, &t, s->x_label, RT_SMALL, false, (g.left + g.right) / 2, g.bottom + 3 * t.fs + line, 0.5,
                g.right - g.left);
    /* the series: a line through the finite points (a gap at each other one), a dot on each
       when there are at most 50 */
    cairo_save(cr);
    cairo_rectangle(cr, g.left - 4 * t.fs, g.top - 4 * t.fs, g.right - g.left + 8 * t.fs, g.bottom - g.top + 8 * t.fs);
    cairo_clip(cr);
    for (int32_t k = 0; k < s->n_series; k++) {
        const atn_line_series *se = &s->series[k];
        double rgb[3];
        atn_render_head_color(se->own_color ? se->color : k, rgb);
        rt_rgb(cr, rgb, 1);
        cairo_set_line_width(cr, 1.5 * t.fs);
        if (se->dashed) {
            double dash[2] = {5 * t.fs, 3 * t.fs};
            cairo_set_dash(cr, dash, 2, 0);
        }
        bool pen = false;
        for (int32_t i = 0; i < se->n; i++) {
            if (!lc_ok(s, se->y[i])) {
                if (pen)
                    cairo_stroke(cr), pen = false;
                continue;
            }
            double px = lc_px(&g, se->x[i]), py = lc_py(s, &g, se->y[i]);
            if (pen)
                cairo_line_to(cr, px, py);
            else
                cairo_move_to(cr, px, py), pen = true;
        }
        if (pen)
            cairo_stroke(cr);
        cairo_set_dash(cr, NULL, 0, 0);
        for (int32_t i = 0; se->err && i < se->n; i++) {   /* error bars, with caps */
            float e = se->err[i];
            if (!lc_ok(s, se->y[i]) || !(e > 0) || !isfinite(e))
                continue;
            double px = lc_px(&g, se->x[i]), hi = lc_py(s, &g, se->y[i] + e);
            double lo = lc_ok(s, se->y[i] - e) ? lc_py(s, &g, se->y[i] - e) : g.bottom;
            cairo_set_line_width(cr, 1.2 * t.fs);
            cairo_move_to(cr, px, lo), cairo_line_to(cr, px, hi);
            cairo_move_to(cr, px - 3 * t.fs, hi), cairo_line_to(cr, px + 3 * t.fs, hi);
            if (lo < g.bottom)
                cairo_move_to(cr, px - 3 * t.fs, lo), cairo_line_to(cr, px + 3 * t.fs, lo);
            cairo_stroke(cr);
        }
        for (int32_t i = 0; i < se->n && se->n <= 50; i++)   /* a dot per point unless a curve */
            if (lc_ok(s, se->y[i])) {
                cairo_arc(cr, lc_px(&g, se->x[i]), lc_py(s, &g, se->y[i]), 2.5 * t.fs, 0, 2 * M_PI);
                cairo_fill(cr);
            }
    }
    cairo_restore(cr);
    /* the legend */
    double lx = pad, ly = pad + title_h;
    for (int32_t k = 0; k < s->n_series; k++) {
        const char *name = s->series[k].name ? s->series[k].name : "";
        double lw;
        rt_measure(&t, name, RT_SMALL, false, &lw, NULL);
        if (lx > pad && lx + lw + 28 * t.fs > pad + legend_w)
            lx = pad, ly += line + 2 * t.fs;
        double rgb[3];
        atn_render_head_color(s->series[k].own_color ? s->series[k].color : k, rgb);
        rt_rgb(cr, rgb, 1);
        cairo_set_line_width(cr, 2 * t.fs);
        if (s->series[k].dashed) {
            double dash[2] = {4 * t.fs, 2 * t.fs};
            cairo_set_dash(cr, dash, 2, 0);
        }
        cairo_move_to(cr, lx, ly + line / 2), cairo_line_to(cr, lx + 16 * t.fs, ly + line / 2);
        cairo_stroke(cr);
        cairo_set_dash(cr, NULL, 0, 0);
        rt_rgb(cr, t.st.fg, 1);
        rt_draw(cr, &t, name, RT_SMALL, false, lx + 20 * t.fs, ly, 0, 0);
        lx += lw + 28 * t.fs;
    }
    if (s->n_series == 0 && s->empty_text) {
        rt_rgb(cr, t.st.fg, 0.6);
        rt_draw_wrapped(cr, &t, s->empty_text, RT_LABEL, false, (g.left + g.right) / 2, (g.top + g.bottom) / 2 - 10,
                        g.right - g.left - 20, 3);
    }
    rt_end(&t);
    return true;
}

/* Too small for its text at the style's size (text size 2.0 in a narrow window): the text
 * shrinks, by 0.8 each time down to half of 1.0, rather than the plot drawing nothing. */
void atn_render_line_chart(cairo_t *cr, const atn_line_chart_spec *s, double w, double h) {
    atn_render_style st;
    if (s->style)
        st = *s->style;
    else
        atn_render_style_init(&st, false);
    atn_line_chart_spec c = *s;
    c.style = &st;
    while (!draw_at(cr, &c, w, h) && st.font_scale > 0.5)
        st.font_scale = fmax(0.5, st.font_scale * 0.8);
}
