/* The heatmap of one matrix: cells as a nearest-neighbour-scaled image, token labels on
 * both axes (thinned when they would overlap), a colour bar and a title.  The layout is
 * computed in one place and used both to draw and to hit-test. */
#include "render-private.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void atn_heatmap_spec_init(atn_heatmap_spec *s) {
    memset(s, 0, sizeof *s);
    s->colormap = ATN_CMAP_VIRIDIS;
    s->range.automatic = true;
    s->show_colorbar = true;
    s->show_labels = true;
    s->show_values = true;
    s->square_cells = true;
    s->highlight_row = s->highlight_col = -1;
    s->hover_row = s->hover_col = -1;
}

static const char *label_of(const char *const *labels, int32_t i, char *buf, size_t size) {
    if (labels && labels[i])
        return labels[i];
    snprintf(buf, size, "%d", i);
    return buf;
}

/* Measured bold: a highlighted label is drawn bold and must still fit. */
static double max_label_width(rtext *t, const char *const *labels, int32_t n) {
    double m = 0;
    char buf[16];
    for (int32_t i = 0; i < n; i++) {
        double w;
        rt_measure(t, label_of(labels, i, buf, sizeof buf), RT_LABEL, true, &w, NULL);
        m = fmax(m, w);
    }
    return m;
}

static size_t stride_of(const atn_heatmap_spec *s) { return s->stride ? s->stride : (size_t)s->cols; }

static bool has_nonfinite(const atn_heatmap_spec *s) {
    if (!s->values)
        return false;
    for (int32_t i = 0; i < s->rows; i++) {
        const float *r = s->values + (size_t)i * stride_of(s);
        for (int32_t j = 0; j < s->cols; j++)
            if (!isfinite(r[j]))
                return true;
    }
    return false;
}

/* The layout, measured with t (which the drawing then reuses). */
static void layout_with(rtext *t, const atn_heatmap_spec *s, double w, double h, bool nonfinite,
                        atn_heatmap_layout *L) {
    memset(L, 0, sizeof *L);
    double fs = t->fs, pad = 10 * fs, gap = 4 * fs;
    double lh = rt_line_height(t, RT_LABEL), sh = rt_line_height(t, RT_SMALL);
    atn_value_range_resolve(&s->range, s->values, s->rows, s->cols, stride_of(s), s->colormap, &L->vmin, &L->vmax);
    double x0 = pad, y0 = pad, x1 = w - pad, y1 = h - pad;
    if (s->title && s->title[0]) {
        double th = rt_line_height(t, RT_TITLE);
        L->title = (atn_rect){x0, y0, x1 - x0, th};
        y0 += th + 2 * gap;
    }
    bool labels = s->show_labels && s->rows > 0 && s->cols > 0;
    double ax_w = labels && s->row_axis ? sh + gap : 0;
    double ax_h = labels && s->col_axis ? sh + gap : 0;
    double rl = 0, cl_max = 0;
    if (labels) {
        rl = fmin(max_label_width(t, s->row_labels, s->rows), 0.28 * w) + gap;
        cl_max = fmin(max_label_width(t, s->col_labels, s->cols), 0.28 * h);
    }
    double cb = 0;
    if (s->show_colorbar) {
        cb = rt_colorbar_width(t, L->vmin, L->vmax, nonfinite) + 3 * gap;
        if (s->colorbar_label) {
            double lw;
            rt_measure(t, s->colorbar_label, RT_SMALL, false, &lw, NULL);
            cb = fmax(cb, fmin(lw, 120 * fs) + 3 * gap);
        }
    }
    double avail_w = fmax(1, x1 - x0 - ax_w - rl - cb);
    double cl_h = labels ? lh + gap : 0;
    double avail_h = fmax(1, y1 - y0 - ax_h - cl_h);
    int32_t rows = s->rows > 0 ? s->rows : 1, cols = s->cols > 0 ? s->cols : 1;
    double cw = avail_w / cols, ch = avail_h / rows;
    if (s->square_cells)
        cw = ch = fmin(cw, ch);
    if (labels && cl_max > cw * 0.92) {
        L->col_labels_rotated = true;
        cl_h = cl_max + gap;
        avail_h = fmax(1, y1 - y0 - ax_h - cl_h);
        ch = avail_h / rows;
        if (s->square_cells)
            cw = ch = fmin(avail_w / cols, ch);
    }
    double mw = cw * cols, mh = ch * rows;
    double block = ax_w + rl + mw + cb;
    double extra = fmax(0, (x1 - x0) - block);
    L->cells = (atn_rect){x0 + extra / 2 + ax_w + rl, y0, mw, mh};
    L->cell_w = cw;
    L->cell_h = ch;
    if (labels) {
        L->row_labels = (atn_rect){L->cells.x - rl, y0, rl - gap, mh};
        L->col_labels = (atn_rect){L->cells.x, y0 + mh + gap, mw, cl_h - gap};
        L->row_label_step = ch >= lh * 0.95 ? 1 : (int32_t)ceil(lh * 0.95 / ch);
        if (L->col_labels_rotated)
            L->col_label_step = cw >= lh * 0.95 ? 1 : (int32_t)ceil(lh * 0.95 / cw);
        else
            L->col_label_step = 1;
    }
    if (s->show_colorbar) {
        double cbh = fmax(mh, fmin(200 * fs, y1 - y0));
        L->colorbar = (atn_rect){L->cells.x + mw + 3 * gap, y0, cb - 3 * gap, cbh};
    }
}

void atn_render_heatmap_layout(const atn_heatmap_spec *s, double w, double h, atn_heatmap_layout *out) {
    rtext t;
    rt_begin(&t, s->style);
    layout_with(&t, s, w, h, s->show_colorbar && has_nonfinite(s), out);
    rt_end(&t);
}

bool atn_render_heatmap_cell_at(const atn_heatmap_spec *s, double w, double h, double x, double y, int32_t *row,
                                int32_t *col) {
    atn_heatmap_layout L;
    atn_render_heatmap_layout(s, w, h, &L);
    *row = *col = -1;
    if (s->rows <= 0 || s->cols <= 0 || L.cell_w <= 0 || L.cell_h <= 0)
        return false;
    double fx = (x - L.cells.x) / L.cell_w, fy = (y - L.cells.y) / L.cell_h;
    if (!(fx >= 0 && fy >= 0 && fx < s->cols && fy < s->rows))
        return false;
    *col = (int32_t)fx;
    *row = (int32_t)fy;
    return true;
}

static void draw_labels(cairo_t *cr, rtext *t, const atn_heatmap_spec *s, const atn_heatmap_layout *L) {
    char buf[16];
    double lh = rt_line_height(t, RT_LABEL), gap = 4 * t->fs;
    for (int32_t i = 0; i < s->rows; i += L->row_label_step) {
        bool hi = i == s->highlight_row || i == s->hover_row;
        bool dim = s->row_mask && !s->row_mask[i];
        rt_rgb(cr, hi ? t->st.accent : t->st.fg, dim ? 0.4 : 1.0);
        double yc = L->cells.y + (i + 0.5) * L->cell_h;
        rt_draw(cr, t, label_of(s->row_labels, i, buf, sizeof buf), RT_LABEL, hi, L->cells.x - gap, yc - lh / 2, 1.0,
                L->row_labels.w);
    }
    for (int32_t j = 0; j < s->cols; j += L->col_label_step) {
        bool hi = j == s->highlight_col || j == s->hover_col;
        bool dim = s->col_mask && !s->col_mask[j];
        rt_rgb(cr, hi ? t->st.accent : t->st.fg, dim ? 0.4 : 1.0);
        double xc = L->cells.x + (j + 0.5) * L->cell_w;
        const char *text = label_of(s->col_labels, j, buf, sizeof buf);
        if (L->col_labels_rotated) {
            double tw;
            rt_measure(t, text, RT_LABEL, hi, &tw, NULL);
            double shown = fmin(tw, L->col_labels.h);
            rt_draw_up(cr, t, text, RT_LABEL, hi, xc, L->col_labels.y, shown < tw ? L->col_labels.h : 0);
        } else {
            rt_draw(cr, t, text, RT_LABEL, hi, xc, L->col_labels.y, 0.5, 0);
        }
    }
    rt_rgb(cr, t->st.fg, 0.8);
    if (s->row_axis) {
        double sh = rt_line_height(t, RT_SMALL), tw;
        rt_measure(t, s->row_axis, RT_SMALL, false, &tw, NULL);
        rt_draw_up(cr, t, s->row_axis, RT_SMALL, false, L->row_labels.x - gap - sh / 2,
                   L->cells.y + L->cells.h / 2 - tw / 2, 0);
    }
    if (s->col_axis)
        rt_draw(cr, t, s->col_axis, RT_SMALL, false, L->cells.x + L->cells.w / 2, L->col_labels.y + L->col_labels.h + gap,
                0.5, 0);
}

static void draw_values(cairo_t *cr, rtext *t, const atn_heatmap_spec *s, const atn_heatmap_layout *L) {
    double vw, vh;
    rt_measure(t, "-0.0000", RT_SMALL, false, &vw, &vh);
    if (L->cell_w < vw + 6 * t->fs || L->cell_h < vh + 4 * t->fs)
        return;
    char buf[32];
    for (int32_t i = 0; i < s->rows; i++)
        for (int32_t j = 0; j < s->cols && !(s->causal && j > i); j++) {   /* masked cells: no number */
            double v = s->values[(size_t)i * stride_of(s) + j], rgb[3];
            atn_colormap_rgb(s->colormap, (v - L->vmin) / (L->vmax - L->vmin), rgb);
            if (rt_luminance(rgb) > 0.45)
                cairo_set_source_rgb(cr, 0, 0, 0);
            else
                cairo_set_source_rgb(cr, 1, 1, 1);
            rt_format(buf, sizeof buf, v);
            rt_draw(cr, t, buf, RT_SMALL, false, L->cells.x + (j + 0.5) * L->cell_w,
                    L->cells.y + (i + 0.5) * L->cell_h - vh / 2, 0.5, 0);
        }
}

/* SVG viewers (and cairo 1.16's SVG writer, which has no image-rendering hint) smooth a
 * scaled image, smearing small cells into each other.  For SVG targets the cells image is
 * enlarged first by repeating pixels, k x k per cell, so smoothing only touches a thin
 * border of each cell.  PDF keeps /Interpolate false and image surfaces honour NEAREST. */
static cairo_surface_t *enlarge(cairo_surface_t *img, int32_t rows, int32_t cols, int k) {
    cairo_surface_t *big = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, cols * k, rows * k);
    if (cairo_surface_status(big) != CAIRO_STATUS_SUCCESS) {
        cairo_surface_destroy(big);
        return NULL;
    }
    cairo_surface_flush(img);
    cairo_surface_flush(big);
    const unsigned char *src = cairo_image_surface_get_data(img);
    unsigned char *dst = cairo_image_surface_get_data(big);
    int ss = cairo_image_surface_get_stride(img), ds = cairo_image_surface_get_stride(big);
    for (int32_t i = 0; i < rows; i++) {
        const uint32_t *sp = (const uint32_t *)(const void *)(src + (size_t)i * ss);
        uint32_t *d0 = (uint32_t *)(void *)(dst + (size_t)i * k * ds);
        for (int32_t j = 0; j < cols; j++)
            for (int t = 0; t < k; t++)
                d0[j * k + t] = sp[j];
        for (int t = 1; t < k; t++)
            memcpy(dst + ((size_t)i * k + t) * ds, d0, (size_t)cols * k * 4);
    }
    cairo_surface_mark_dirty(big);
    return big;
}

void rt_draw_cells(cairo_t *cr, cairo_surface_t *img, atn_rect r, int32_t rows, int32_t cols) {
    cairo_surface_t *big = NULL;
    if (cairo_surface_get_type(cairo_get_target(cr)) == CAIRO_SURFACE_TYPE_SVG &&
        cairo_surface_get_type(img) == CAIRO_SURFACE_TYPE_IMAGE) {
        double cell = fmax(r.w / cols, r.h / rows);
        int32_t side = rows > cols ? rows : cols;
        int k = (int)fmin(ceil(2 * cell), floor(2048.0 / side));
        if (k > 1 && (big = enlarge(img, rows, cols, k))) {
            img = big;
            rows *= k;
            cols *= k;
        }
    }
    cairo_save(cr);
    cairo_rectangle(cr, r.x, r.y, r.w, r.h);
    cairo_clip(cr);
    cairo_translate(cr, r.x, r.y);
    cairo_scale(cr, r.w / cols, r.h / rows);
    cairo_set_source_surface(cr, img, 0, 0);
    cairo_pattern_set_filter(cairo_get_source(cr), CAIRO_FILTER_NEAREST);
    cairo_pattern_set_extend(cairo_get_source(cr), CAIRO_EXTEND_PAD);
    cairo_rectangle(cr, 0, 0, cols, rows);
    cairo_fill(cr);
    cairo_restore(cr);
    if (big)
        cairo_surface_destroy(big);
}

void rt_draw_causal_mask(cairo_t *cr, atn_rect r, int32_t rows, int32_t cols, bool hatch, double fs) {
    if (rows <= 0 || cols <= 1)
        return;
    double cw = r.w / cols, ch = r.h / rows;
    cairo_save(cr);
    /* the staircase above the diagonal: row i covers columns i+1 .. cols-1 */
    cairo_new_path(cr);
    cairo_move_to(cr, r.x + cw, r.y);
    cairo_line_to(cr, r.x + r.w, r.y);
    int32_t last = rows < cols - 1 ? rows : cols - 1;   /* rows that have a masked cell */
    cairo_line_to(cr, r.x + r.w, r.y + last * ch);
    for (int32_t i = last - 1; i >= 0; i--) {
        cairo_line_to(cr, r.x + (i + 1) * cw, r.y + (i + 1) * ch);
        cairo_line_to(cr, r.x + (i + 1) * cw, r.y + i * ch);
    }
    cairo_close_path(cr);
    cairo_set_source_rgb(cr, 0.78, 0.78, 0.78);
    cairo_fill_preserve(cr);
    if (hatch) {
        cairo_clip(cr);
        double step = fmax(5 * fs, 4), lw = fmax(0.8, fs);
        cairo_set_source_rgb(cr, 0.55, 0.55, 0.55);
        cairo_set_line_width(cr, lw);
        for (double x = r.x - r.h; x < r.x + r.w; x += step) {
            cairo_move_to(cr, x, r.y + r.h);
            cairo_line_to(cr, x + r.h, r.y);
        }
        cairo_stroke(cr);
    }
    cairo_new_path(cr);
    cairo_restore(cr);
}

void atn_render_heatmap(cairo_t *cr, const atn_heatmap_spec *s, double w, double h) {
    rtext t;
    rt_begin(&t, s->style);
    bool nonfinite = has_nonfinite(s);
    atn_heatmap_layout L;
    layout_with(&t, s, w, h, nonfinite && s->show_colorbar, &L);
    cairo_save(cr);
    rt_background(cr, &t, w, h);
    if (s->title && s->title[0]) {
        rt_rgb(cr, t.st.fg, 1.0);
        rt_draw(cr, &t, s->title, RT_TITLE, true, L.title.x + L.title.w / 2, L.title.y, 0.5, L.title.w);
    }
    if (s->values && s->rows > 0 && s->cols > 0) {
        cairo_surface_t *img = s->cells;
        if (!img)
            img = atn_render_matrix_surface(s->values, s->rows, s->cols, stride_of(s), s->colormap, L.vmin, L.vmax,
                                            NULL);
        if (img)
            rt_draw_cells(cr, img, L.cells, s->rows, s->cols);
        if (img && img != s->cells)
            cairo_surface_destroy(img);
        if (s->causal)
            rt_draw_causal_mask(cr, L.cells, s->rows, s->cols, true, t.fs);
        if (s->show_values)
            draw_values(cr, &t, s, &L);
        if (s->show_labels)
            draw_labels(cr, &t, s, &L);

        double lw = fmax(1.0, 2.0 * t.fs);
        cairo_set_line_width(cr, lw);
        rt_rgb(cr, t.st.accent, 1.0);
        if (s->highlight_row >= 0 && s->highlight_row < s->rows) {
            cairo_rectangle(cr, L.cells.x, L.cells.y + s->highlight_row * L.cell_h, L.cells.w, L.cell_h);
            cairo_stroke(cr);
        }
        if (s->highlight_col >= 0 && s->highlight_col < s->cols) {
            cairo_rectangle(cr, L.cells.x + s->highlight_col * L.cell_w, L.cells.y, L.cell_w, L.cells.h);
            cairo_stroke(cr);
        }
        if (s->hover_row >= 0 && s->hover_row < s->rows && s->hover_col >= 0 && s->hover_col < s->cols) {
            double x = L.cells.x + s->hover_col * L.cell_w, y = L.cells.y + s->hover_row * L.cell_h;
            cairo_set_source_rgb(cr, 1, 1, 1);
            cairo_rectangle(cr, x - lw, y - lw, L.cell_w + 2 * lw, L.cell_h + 2 * lw);
            cairo_stroke(cr);
            cairo_set_source_rgb(cr, 0, 0, 0);
            cairo_set_line_width(cr, lw / 2);
            cairo_rectangle(cr, x - lw * 1.75, y - lw * 1.75, L.cell_w + 3.5 * lw, L.cell_h + 3.5 * lw);
            cairo_stroke(cr);
        }
    }
    if (s->show_colorbar)
        rt_colorbar(cr, &t, s->colormap, L.vmin, L.vmax, s->colorbar_label, nonfinite, L.colorbar);
    cairo_restore(cr);
    rt_end(&t);
}

void atn_render_heatmap_natural_size(const atn_heatmap_spec *s, double *width, double *height) {
    rtext t;
    rt_begin(&t, s->style);
    double fs = t.fs;
    int32_t n = s->rows > s->cols ? s->rows : s->cols;
    double cell = n <= 4 ? 72 : n <= 8 ? 56 : n <= 16 ? 36 : n <= 32 ? 22 : n <= 64 ? 13 : fmax(1.5, 900.0 / n);
    cell *= fs;
    double lh = rt_line_height(&t, RT_LABEL);
    if (n <= 48 && cell < lh) /* up to 48 tokens every label fits */
        cell = lh;
    double mw = cell * s->cols, mh = cell * s->rows;
    double lw = s->show_labels ? fmin(max_label_width(&t, s->row_labels, s->rows), 300 * fs) + 4 * fs : 0;
    double cl = s->show_labels ? fmin(max_label_width(&t, s->col_labels, s->cols), 300 * fs) : 0;
    double clh = s->show_labels ? (cl > cell * 0.92 ? cl : lh) + 4 * fs : 0;
    double sh = rt_line_height(&t, RT_SMALL);
    double cb = s->show_colorbar ? rt_colorbar_width(&t, 0, 1, true) + 12 * fs : 0;
    double th = s->title ? rt_line_height(&t, RT_TITLE) + 8 * fs : 0;
    double title_w = 0;
    if (s->title)
        rt_measure(&t, s->title, RT_TITLE, true, &title_w, NULL);
    double w = 20 * fs + lw + mw + cb + (s->row_axis ? sh + 4 * fs : 0);
    double h = 20 * fs + th + fmax(mh, s->show_colorbar ? 200 * fs : 0) + clh + (s->col_axis ? sh + 4 * fs : 0);
    *width = ceil(fmax(w, title_w + 20 * fs));
    *height = ceil(h);
    rt_end(&t);
}
