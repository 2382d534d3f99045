/* The training lab's curves (render.h, atn_render_train_curve): the loss on a log scale
 * against the left axis and the accuracy (0-100 %) against the right one, over the steps
 * or, for a sweep, over the values of one knob with error bars. */
#include "render-private.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void atn_train_curve_spec_init(atn_train_curve_spec *s) { memset(s, 0, sizeof *s); }

typedef struct curve_geom {
    double pad, title_h, left, right, top, bottom;   /* the plot box */
    double lo, hi;                                   /* log10 of the loss axis */
    double x0, x1;                                   /* the x axis */
} curve_geom;

static bool finite_pos(float v) { return isfinite(v) && v > 0; }

static void loss_range(const atn_train_curve_spec *s, double *lo, double *hi) {
    double mn = INFINITY, mx = -INFINITY;
    for (int32_t i = 0; i < s->n; i++) {
        if (!finite_pos(s->loss[i]))
            continue;
        double sd = s->loss_sd ? s->loss_sd[i] : 0;
        double a = s->loss[i] - sd > s->loss[i] * 0.05 ? s->loss[i] - sd : s->loss[i] * 0.05;
        mn = fmin(mn, a), mx = fmax(mx, s->loss[i] + sd);
    }
    if (!isfinite(mn)) {
        *lo = -1, *hi = 1;
        return;
    }
    *lo = floor(log10(mn)), *hi = ceil(log10(mx));
    if (*hi <= *lo)
        *hi = *lo + 1;
}

static double px_x(const curve_geom *g, double x) {
    return g->x1 > g->x0 ? g->left + (x - g->x0) / (g->x1 - g->x0) * (g->right - g->left) : (g->left + g->right) / 2;
}
static double px_loss(const curve_geom *g, double v) {
    return g->bottom - (log10(v) - g->lo) / (g->hi - g->lo) * (g->bottom - g->top);
}
static double px_acc(const curve_geom *g, double a) { return g->bottom - a * (g->bottom - g->top); }

static const double loss_rgb[3] = {0.85, 0.37, 0.01}, acc_rgb[3] = {0.12, 0.47, 0.71};

static void layout(rtext *t, const atn_train_curve_spec *s, double w, double h, curve_geom *g) {
    g->pad = 8 * t->fs;
    g->title_h = s->title ? rt_line_height(t, RT_TITLE) + g->pad : 0;
    double lw, tw;
    rt_measure(t, "1e-10", RT_SMALL, false, &lw, NULL);
    rt_measure(t, "100 %", RT_SMALL, false, &tw, NULL);
    double line = rt_line_height(t, RT_SMALL);
    g->left = g->pad + lw + 6 * t->fs;
    g->right = w - g->pad - (s->accuracy ? line + 4 * t->fs + tw + 6 * t->fs : g->pad);
    g->top = g->pad + g->title_h + line;   /* the legend's line */
    g->bottom = h - g->pad - 2 * line - 6 * t->fs;
    loss_range(s, &g->lo, &g->hi);
    if (s->x_names) {
        g->x0 = -0.5, g->x1 = s->n - 0.5;
    } else {
        g->x0 = s->n ? s->x[0] : 0;
        g->x1 = s->x_max > 0 ? s->x_max : s->n ? s->x[s->n - 1] : 1;
        if (g->x1 <= g->x0)
            g->x1 = g->x0 + 1;
    }
}

static void draw_axes(cairo_t *cr, rtext *t, const atn_train_curve_spec *s, const curve_geom *g) {
    char buf[64];
    double line = rt_line_height(t, RT_SMALL);
    cairo_set_line_width(cr, 1);
    /* the loss axis: a tick per power of ten */
    for (int e = (int)g->lo; e <= (int)g->hi; e++) {
        double y = px_loss(g, pow(10, e));
        rt_rgb(cr, t->st.fg, 0.12);
        cairo_move_to(cr, g->left, round(y) + 0.5);
        cairo_line_to(cr, g->right, round(y) + 0.5);
        cairo_stroke(cr);
        if (e >= -2 && e <= 2)
            snprintf(buf, sizeof buf, "%g", pow(10, e));
        else
            snprintf(buf, sizeof buf, "1e%d", e);
        rt_rgb(cr, loss_rgb, 1);
        rt_draw(cr, t, buf, RT_SMALL, false, g->left - 4 * t->fs, y - line / 2, 1, 0);
        for (int k = 2; k <= 5 && g->hi - g->lo <= 2 && e < (int)g->hi; k += 3) {   /* 2 and 5 between */
            double v = k * pow(10, e), ym = px_loss(g, v);
            rt_rgb(cr, t->st.fg, 0.06);
            cairo_move_to(cr, g->left, round(ym) + 0.5);
            cairo_line_to(cr, g->right, round(ym) + 0.5);
            cairo_stroke(cr);
            snprintf(buf, sizeof buf, "%g", v);
            rt_rgb(cr, loss_rgb, 1);
            rt_draw(cr, t, buf, RT_SMALL, false, g->left - 4 * t->fs, ym - line / 2, 1, 0);
        }
    }
    if (s->accuracy) {
        for (int k = 0; k <= 4; k++) {
            double y = px_acc(g, k / 4.0);
            snprintf(buf, sizeof buf, "%d %%", 25 * k);
            rt_rgb(cr, acc_rgb, 1);
            rt_draw(cr, t, buf, RT_SMALL, false, g->right + 4 * t->fs, y - line / 2, 0, 0);
        }
    }
    /* the x axis */
    rt_rgb(cr, t->st.fg, 0.6);
    cairo_rectangle(cr, g->left + 0.5, g->top + 0.5, g->right - g->left - 1, g->bottom - g->top - 1);
    cairo_stroke(cr);
    rt_rgb(cr, t->st.fg, 1);
    if (s->x_names) {
        double slot = (g->right - g->left) / (s->n ? s->n : 1);
        for (int32_t i = 0; i < s->n; i++)
            rt_draw(cr, t, s->x_names[i], RT_SMALL, false, px_x(g, i), g->bottom + 3 * t->fs, 0.5, slot);
    } else {
        double ticks[16], step;
        int n = rt_ticks(g->x0, g->x1, 6, ticks, &step);
        for (int i = 0; i < n; i++) {
            rt_format_tick(buf, sizeof buf, ticks[i], step);
            rt_draw(cr, t, buf, RT_SMALL, false, px_x(g, ticks[i]), g->bottom + 3 * t->fs, 0.5, 0);
        }
    }
    const char *xl = s->x_label ? s->x_label : rt_tr(N_("step"));
    rt_draw(cr, t, xl, RT_SMALL, false, (g->left + g->right) / 2, g->bottom + 3 * t->fs + line, 0.5,
            g->right - g->left);
    /* the legend */
    rt_rgb(cr, loss_rgb, 1);
    rt_draw(cr, t, rt_tr(N_("— loss (log scale)")), RT_SMALL, true, g->left, g->top - line - 2 * t->fs, 0, 0);
    if (s->accuracy) {
        double w0;
        rt_measure(t, rt_tr(N_("— loss (log scale)")), RT_SMALL, true, &w0, NULL);
        rt_rgb(cr, acc_rgb, 1);
        rt_draw(cr, t, rt_tr(N_("— accuracy")), RT_SMALL, true, g->left + w0 + 16 * t->fs, g->top - line - 2 * t->fs,
                0, 0);
    }
}

static void draw_series(cairo_t *cr, const atn_train_curve_spec *s, const curve_geom *g, const float *v,
                        const float *sd, bool is_loss, const double rgb[3], double fs) {
    rt_rgb(cr, rgb, 1);
    cairo_set_line_width(cr, 1.5 * fs);
    bool pen = false;
    /* many points: at most one vertex per pixel column (its mean), so a curve of 100,000 steps
       draws as fast as one of 1,000 */
    int32_t n = s->n;
    double last_col = -1e9, sum = 0;
    int cnt = 0;
    for (int32_t i = 0; i <= n; i++) {
        double x = i < n ? px_x(g, s->x_names ? i : s->x[i]) : 1e18;
        if (!s->x_names && cnt && floor(x) != last_col) {
            double val = sum / cnt, y = is_loss ? px_loss(g, val) : px_acc(g, val);
            if (pen)
                cairo_line_to(cr, last_col, y);
            else
                cairo_move_to(cr, last_col, y), pen = true;
            sum = 0, cnt = 0;
        }
        if (i == n)
            break;
        bool ok = is_loss ? finite_pos(v[i]) : isfinite(v[i]);
        if (!ok) {
            if (pen && !s->x_names)
                cairo_stroke(cr), pen = false;
            continue;
        }
        if (s->x_names) {
            double y = is_loss ? px_loss(g, v[i]) : px_acc(g, v[i]);
            if (pen)
                cairo_line_to(cr, x, y);
            else
                cairo_move_to(cr, x, y), pen = true;
        } else {
            last_col = floor(x), sum += v[i], cnt++;
        }
    }
    if (pen)
        cairo_stroke(cr);
    if (!s->x_names && n == 1) {   /* one point: a dot */
        double y = is_loss ? (finite_pos(v[0]) ? px_loss(g, v[0]) : NAN) : px_acc(g, v[0]);
        if (isfinite(y)) {
            cairo_arc(cr, px_x(g, s->x[0]), y, 2.5 * fs, 0, 2 * M_PI);
            cairo_fill(cr);
        }
    }
    if (s->x_names) {   /* a dot per value, its error bar (one standard deviation) */
        for (int32_t i = 0; i < n; i++) {
            if (is_loss ? !finite_pos(v[i]) : !isfinite(v[i]))
                continue;
            double x = px_x(g, i), y = is_loss ? px_loss(g, v[i]) : px_acc(g, v[i]);
            cairo_arc(cr, x, y, 3 * fs, 0, 2 * M_PI);
            cairo_fill(cr);
            if (sd && sd[i] > 0) {
                double a = v[i] - sd[i], b = v[i] + sd[i];
                double ya = is_loss ? (a > 0 ? px_loss(g, a) : g->bottom) : px_acc(g, fmax(0, a));
                double yb = is_loss ? px_loss(g, b) : px_acc(g, fmin(1, b));
                cairo_move_to(cr, x, ya), cairo_line_to(cr, x, yb);
                cairo_move_to(cr, x - 4 * fs, ya), cairo_line_to(cr, x + 4 * fs, ya);
                cairo_move_to(cr, x - 4 * fs, yb), cairo_line_to(cr, x + 4 * fs, yb);
                cairo_stroke(cr);
            }
        }
    }
}

/* Draws s at its text size; false (only the background drawn) where the plot area left
 * by the text would be under 20 px. */
static bool draw_at(cairo_t *cr, const atn_train_curve_spec *s, double w, double h) {
    rtext t;
    rt_begin(&t, s->style);
    rt_background(cr, &t, w, h);
    curve_geom g;
    layout(&t, s, w, h, &g);
    if (g.right - g.left < 20 || g.bottom - g.top < 20) {
        rt_end(&t);
        return false;
    }
    if (s->title) {
        rt_rgb(cr, t.st.fg, 1);
        rt_draw(cr, &t, s->title, RT_TITLE, true, g.pad, g.pad, 0, w - 2 * g.pad);
    }
    draw_axes(cr, &t, s, &g);
    if (s->n > 0 && s->loss) {
        cairo_save(cr);
        cairo_rectangle(cr, g.left, g.top, g.right - g.left, g.bottom - g.top);
        cairo_clip(cr);
        if (s->accuracy)
            draw_series(cr, s, &g, s->accuracy, s->accuracy_sd, false, acc_rgb, t.fs);
        draw_series(cr, s, &g, s->loss, s->loss_sd, true, loss_rgb, t.fs);
        cairo_restore(cr);
    } else if (s->empty_text) {
        rt_rgb(cr, t.st.fg, 0.6);
        rt_draw_wrapped(cr, &t, s->empty_text, RT_LABEL, false, (g.left + g.right) / 2, (g.top + g.bottom) / 2 - 10,
                        g.right - g.left - 20, 3);
    }
    rt_end(&t);
    return true;
}

/* Too small for its text at the style's size (text size 2.0 in a narrow window): the text
 * shrinks, by 0.8 each time down to half of 1.0, rather than the plot drawing nothing. */
void atn_render_train_curve(cairo_t *cr, const atn_train_curve_spec *s, double w, double h) {
    atn_render_style st;
    if (s->style)
        st = *s->style;
    else
        atn_render_style_init(&st, false);
    atn_train_curve_spec c = *s;
    c.style = &st;
    while (!draw_at(cr, &c, w, h) && st.font_scale > 0.5)
        st.font_scale = fmax(0.5, st.font_scale * 0.8);
}
