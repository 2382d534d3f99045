/* The colour bar: the colour map as a vertical strip, tick values on its right, a label on
 * top and a "NaN/Inf" swatch below when the figure has non-finite values. */
#include "render-private.h"

#include <math.h>
#include <stdio.h>

#define BAR_W 14.0
#define GAP 4.0

double rt_colorbar_width(rtext *t, double vmin, double vmax, bool show_nonfinite) {
    double ticks[16], step, wmax = 0;
    int n = rt_ticks(vmin, vmax, 6, ticks, &step);
    char buf[32];
    for (int i = 0; i < n; i++) {
        double w;
        rt_format_tick(buf, sizeof buf, ticks[i], step);
        rt_measure(t, buf, RT_SMALL, false, &w, NULL);
        wmax = fmax(wmax, w);
    }
    if (show_nonfinite) {
        double w;
        rt_measure(t, "NaN/Inf", RT_SMALL, false, &w, NULL);
        wmax = fmax(wmax, w);
    }
    return (BAR_W + GAP + 2) * t->fs + wmax;
}

static void draw_bar(cairo_t *cr, rtext *t, atn_colormap cm, double vmin, double vmax, const char *label,
                     const char *note, bool reversed, bool show_nonfinite, atn_rect box) {
    double fs = t->fs, lh = rt_line_height(t, RT_SMALL);
    double y0 = box.y, y1 = box.y + box.h;
    rt_rgb(cr, t->st.fg, 1.0);
    if (label && label[0]) {
        rt_draw(cr, t, label, RT_SMALL, false, box.x, y0, 0, box.w);
        y0 += lh + 2 * fs;
    }
    if (note && note[0]) {
        rt_rgb(cr, t->st.fg, 0.75);
        rt_draw(cr, t, note, RT_SMALL, false, box.x, y0, 0, box.w);
        rt_rgb(cr, t->st.fg, 1.0);
        y0 += lh + 2 * fs;
    }
    if (show_nonfinite)
        y1 -= lh + 4 * fs;
    y0 += lh / 2; /* room for the top tick's text */
    y1 -= lh / 2;
    if (y1 - y0 < 8)
        return;
    double bw = BAR_W * fs;

    /* the strip: a 1 x 256 image, top = high, drawn with nearest filtering */
    cairo_surface_t *s = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, 1, 256);
    cairo_surface_flush(s);
    uint32_t *px = (uint32_t *)(void *)cairo_image_surface_get_data(s);
    int stride = cairo_image_surface_get_stride(s) / 4;
    const uint32_t *tab = atn_colormap_table(cm);
    for (int i = 0; i < 256; i++)
        px[i * stride] = 0xff000000u | tab[reversed ? i : 255 - i];
    cairo_surface_mark_dirty(s);
    cairo_save(cr);
    cairo_rectangle(cr, box.x, y0, bw, y1 - y0);
    cairo_clip(cr);
    cairo_translate(cr, box.x, y0);
    cairo_scale(cr, bw, (y1 - y0) / 256.0);
    cairo_set_source_surface(cr, s, 0, 0);
    cairo_pattern_set_filter(cairo_get_source(cr), CAIRO_FILTER_NEAREST);
    cairo_paint(cr);
    cairo_restore(cr);
    cairo_surface_destroy(s);

    rt_rgb(cr, t->st.fg, 1.0);
    cairo_set_line_width(cr, 1.0 * fs);
    cairo_rectangle(cr, box.x, y0, bw, y1 - y0);
    cairo_stroke(cr);

    /* as many ticks (up to 6) as the strip holds with their labels apart: a short strip at a
       large text size (a 1280x720 window at Text size 2.0) drew six labels over each other */
    int fit = (int)floor((y1 - y0) / (1.25 * lh)) + 1;
    double ticks[16], step;
    int n = rt_ticks(vmin, vmax, fit < 3 ? 6 : fit > 6 ? 6 : fit, ticks, &step);
    if (fit < 3 && vmax > vmin) {   /* room for two labels only: the two ends, exactly */
        ticks[0] = vmin;
        ticks[1] = vmax;
        n = 2;
        step /= 10;
    }
    char buf[32];
    for (int i = 0; i < n; i++) {
        double y = y1 - (ticks[i] - vmin) / (vmax - vmin) * (y1 - y0);
        cairo_move_to(cr, box.x + bw, y);
        cairo_line_to(cr, box.x + bw + 3 * fs, y);
        cairo_stroke(cr);
        rt_format_tick(buf, sizeof buf, ticks[i], step);
        rt_draw(cr, t, buf, RT_SMALL, false, box.x + bw + (GAP + 1) * fs, y - lh / 2, 0, 0);
    }
    if (show_nonfinite) {
        double y = box.y + box.h - lh;
        cairo_set_source_rgb(cr, ATN_RENDER_NONFINITE_RGB);
        cairo_rectangle(cr, box.x, y + 1, bw, lh - 2);
        cairo_fill(cr);
        rt_rgb(cr, t->st.fg, 1.0);
        rt_draw(cr, t, "NaN/Inf", RT_SMALL, false, box.x + bw + (GAP + 1) * fs, y, 0, 0);
    }
}

void rt_colorbar(cairo_t *cr, rtext *t, atn_colormap cm, double vmin, double vmax, const char *label,
                 bool show_nonfinite, atn_rect box) {
    draw_bar(cr, t, cm, vmin, vmax, label, NULL, false, show_nonfinite, box);
}

void rt_colorbar_noted(cairo_t *cr, rtext *t, atn_colormap cm, double vmin, double vmax, const char *label,
                       const char *note, bool reversed, bool show_nonfinite, atn_rect box) {
    draw_bar(cr, t, cm, vmin, vmax, label, note, reversed, show_nonfinite, box);
}

void atn_render_colorbar(cairo_t *cr, const atn_render_style *st, atn_colormap cm, double vmin, double vmax,
                         const char *label, bool show_nonfinite, atn_rect box) {
    rtext t;
    rt_begin(&t, st);
    cairo_save(cr);
    draw_bar(cr, &t, cm, vmin, vmax, label, NULL, false, show_nonfinite, box);
    cairo_restore(cr);
    rt_end(&t);
}
