/* The heatmap of one matrix: cells as a nearest-neighbour-scaled image, token labels on
 * both axes (thinned when they would overlap), a colour bar and a title.  The layout is
 * computed in one place and used both to draw and to hit-test. */
#include "render-private.h"

#include <math.h>
#include <stdlib.h>
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
    s->show_overview = true;
}

/* The visible block, clamped into the matrix. */
static void resolve_view(const atn_heatmap_spec *s, int32_t *r0, int32_t *c0, int32_t *nr, int32_t *nc) {
    int32_t rows = s->rows > 0 ? s->rows : 1, cols = s->cols > 0 ? s->cols : 1;
    *nr = s->view_rows > 0 && s->view_rows < rows ? s->view_rows : rows;
    *nc = s->view_cols > 0 && s->view_cols < cols ? s->view_cols : cols;
    *r0 = s->view_row0 < 0 ? 0 : s->view_row0 > rows - *nr ? rows - *nr : s->view_row0;
    *c0 = s->view_col0 < 0 ? 0 : s->view_col0 > cols - *nc ? cols - *nc : s->view_col0;
}

void atn_render_cell_number(char *buf, size_t size, double v, int decimals) {
    if (size == 0)
        return;
    if (isnan(v)) {
        snprintf(buf, size, "NaN");
        return;
    }
    if (isinf(v)) {
        snprintf(buf, size, v > 0 ? "Inf" : "-Inf");
        return;
    }
    if (decimals < 1)
        decimals = 1;
    if (decimals > 4)
        decimals = 4;
    if (v == 0) {
        snprintf(buf, size, "0");
        return;
    }
    double least = pow(10, -decimals);
    if (fabs(v) < 0.5 * least) {   /* would print as 0: say how small instead */
        char tail[8];
        snprintf(tail, sizeof tail, "%.*f", decimals, least);   /* "0.001" */
        snprintf(buf, size, "%s%s", v > 0 ? "<" : ">-", tail + 1);
        return;
    }
    char tmp[64];
    snprintf(tmp, sizeof tmp, "%.*f", decimals, v);   /* every number of a figure with the same decimals */
    const char *p = tmp;
    if (tmp[0] == '0' && tmp[1] == '.')
        p = tmp + 1;   /* "0.376" -> ".376" */
    else if (tmp[0] == '-' && tmp[1] == '0' && tmp[2] == '.') {
        tmp[1] = '-';   /* "-0.25" -> "-.25" */
        p = tmp + 1;
    }
    snprintf(buf, size, "%s", p);
}

static const char *label_of(const char *const *labels, int32_t i, char *buf, size_t size) {
    if (labels && labels[i])
        return labels[i];
    snprintf(buf, size, "%d", i);
    return buf;
}

/* A token label as drawn: with its position before it ("120 the") when the labels are
 * thinned to every step-th, so the gaps between them can be read off. */
static const char *label_at(const char *const *labels, int32_t i, int32_t step, char *buf, size_t size) {
    char num[16];
    const char *text = label_of(labels, i, num, sizeof num);
    if (step <= 1 || !labels)
        return text;
    snprintf(buf, size, "%d %s", i, text);
    return buf;
}

/* The label step: every k-th, k a round number (1, 2, 5, 10, 20, 50, ...) at least `need`,
 * so the positions drawn are 0, 20, 40, ... */
int32_t rt_round_step(double need) {
    if (need <= 1)
        return 1;
    for (int32_t p = 1;; p *= 10) {
        if (need <= p)
            return p;
        if (need <= 2 * p)
            return 2 * p;
        if (need <= 5 * p)
            return 5 * p;
        if (p > 100000000)
            return (int32_t)ceil(need);
    }
}

/* Measured bold: a highlighted label is drawn bold and must still fit. */
static double max_label_width(rtext *t, const char *const *labels, int32_t n, double size) {
    double m = 0;
    char buf[16];
    for (int32_t i = 0; i < n; i++) {
        double w;
        rt_measure(t, label_of(labels, i, buf, sizeof buf), size, true, &w, NULL);
        m = fmax(m, w);
    }
    return m;
}

static size_t stride_of(const atn_heatmap_spec *s) { return s->stride ? s->stride : (size_t)s->cols; }
/* The value cell (i, j) prints: the weights (number_values) under a colour scale, else values. */
static double number_of(const atn_heatmap_spec *s, int32_t i, int32_t j) {
    if (s->number_values)
        return s->number_values[(size_t)i * (s->number_stride ? s->number_stride : (size_t)s->cols) + j];
    return s->values[(size_t)i * stride_of(s) + j];
}

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

/* Which decimals the numbers in cells get: the most (4 down to 1) for which every visible
 * cell's number fits inside its cell with a margin; none when even 1 decimal does not. */
#define VALUE_PAD_X 3.0
#define VALUE_PAD_Y 2.0
static void value_fit(rtext *t, const atn_heatmap_spec *s, atn_heatmap_layout *L) {
    L->value_decimals = 0;
    L->value_w = 0;
    if (!s->show_values || !s->values || s->rows <= 0 || s->cols <= 0)
        return;
    double fs = t->fs, vh, w1;
    rt_measure(t, "1", RT_SMALL, false, &w1, &vh);
    if (L->cell_h < vh + 2 * VALUE_PAD_Y * fs || L->cell_w < w1 + 2 * VALUE_PAD_X * fs)
        return;   /* no number fits (and no loop over thousands of tiny cells) */
    char buf[32], longest[32];
    for (int d = 4; d >= 1; d--) {
        size_t most = 0;
        longest[0] = 0;
        for (int32_t i = L->view_row0; i < L->view_row0 + L->view_rows; i++)
            for (int32_t j = L->view_col0; j < L->view_col0 + L->view_cols; j++) {
                atn_render_cell_number(buf, sizeof buf, number_of(s, i, j), d);
                size_t len = strlen(buf);
                if (len > most) {
                    most = len;
                    memcpy(longest, buf, len + 1);
                }
            }
        /* digits are the same width, but measure a few long ones to be sure of the widest */
        double w;
        rt_measure(t, longest, RT_SMALL, false, &w, NULL);
        double w0;
        char zeros[32];
        memset(zeros, '0', most);
        zeros[most] = 0;
        rt_measure(t, zeros, RT_SMALL, false, &w0, NULL);
        w = fmax(w, w0);
        if (w + 2 * VALUE_PAD_X * fs <= L->cell_w) {
            L->value_decimals = d;
            L->value_w = w;
            return;
        }
    }
}

/* Whether any label has a character outside ASCII (a CJK one needs its taller line). */
static bool any_wide(const char *const *labels, int32_t n) {
    for (int32_t i = 0; labels && i < n; i++)
        for (const unsigned char *p = (const unsigned char *)labels[i]; p && *p; p++)
            if (*p >= 0x80)
                return true;
    return false;
}

/* The height one label needs in its cell: the line of the labels' own script (a small heatmap,
 * min_label_scale: "Ag" when every label is ASCII, as the tokens of an English sentence are
 * in a Chinese window), else the line with a CJK character ("Ag国") whatever the labels. */
static double label_pitch(rtext *t, const atn_heatmap_spec *s, double size) {
    if (s->min_label_scale <= 0 || any_wide(s->row_labels, s->rows) || any_wide(s->col_labels, s->cols))
        return rt_line_height(t, size);
    double h;
    rt_measure(t, "Ag", size, false, NULL, &h);
    return h;
}

/* The layout with token labels of font size label_size, measured with t. */
static void layout_sized(rtext *t, const atn_heatmap_spec *s, double w, double h, bool nonfinite, double label_size,
                         atn_heatmap_layout *L) {
    memset(L, 0, sizeof *L);
    L->label_size = label_size;
    double fs = t->fs, pad = 10 * fs, gap = 4 * fs;
    double lh = rt_line_height(t, label_size), sh = rt_line_height(t, RT_SMALL);
    atn_value_range_resolve(&s->range, s->values, s->rows, s->cols, stride_of(s), s->colormap, &L->vmin, &L->vmax);
    double x0 = pad, y0 = pad, x1 = w - pad, y1 = h - pad;
    if (s->title && s->title[0]) {
        /* one line, or two when it is wider than the figure (a long title at a large text size) */
        double th = rt_line_height(t, RT_TITLE), tw;
        rt_measure(t, s->title, RT_TITLE, true, &tw, NULL);
        L->title_lines = 1;
        if (tw > x1 - x0) {
            int lines;
            L->title_cut = rt_wrapped_cut(t, s->title, RT_TITLE, true, x1 - x0, 2, &lines);
            L->title_lines = lines;
            th = rt_wrapped_height(t, s->title, RT_TITLE, true, x1 - x0, 2);
        }
        L->title = (atn_rect){x0, y0, x1 - x0, th};
        y0 += th + 2 * gap;
    }
    if (s->legend && s->legend[0])
        y0 += sh + 2 * gap;   /* the legend sentence, under the title */
    bool labels = s->show_labels && s->rows > 0 && s->cols > 0;
    double ax_w = labels && s->row_axis ? sh + gap : 0;
    double ax_h = labels && s->col_axis ? sh + gap : 0;
    double rl = 0, cl_max = 0;
    if (labels) {
        double rw = max_label_width(t, s->row_labels, s->rows, label_size);
        /* one matrix of the same tokens both ways (a head): measured once (512 labels ~ 5 ms) */
        double cw0 = s->col_labels == s->row_labels && s->cols == s->rows
                         ? rw
                         : max_label_width(t, s->col_labels, s->cols, label_size);
        /* more labels than lines: they will be thinned and drawn with their positions */
        double pitch0 = label_pitch(t, s, label_size), nw = 0;
        char num[16];
        snprintf(num, sizeof num, "%d ", (int)MAX(s->rows, s->cols) - 1);
        rt_measure(t, num, label_size, true, &nw, NULL);
        if (s->row_labels && s->rows * pitch0 * 0.95 > y1 - y0)
            rw += nw;
        if (s->col_labels && s->cols * pitch0 * 0.95 > x1 - x0)
            cw0 += nw;
        rl = fmin(rw, 0.28 * w) + gap;
        cl_max = fmin(cw0, 0.28 * h);
    }
    double cb = 0;
    if (s->show_colorbar) {
        cb = rt_colorbar_width(t, L->vmin, L->vmax, nonfinite) + 3 * gap;
        if (s->colorbar_label) {
            double lw;
            rt_measure(t, s->colorbar_label, RT_SMALL, false, &lw, NULL);
            cb = fmax(cb, fmin(lw, 120 * fs) + 3 * gap);
        }
        if (s->colorbar_note) {
            double lw;
            rt_measure(t, s->colorbar_note, RT_SMALL, false, &lw, NULL);
            cb = fmax(cb, fmin(lw, 140 * fs) + 3 * gap);
        }
    }
    double avail_w = fmax(1, x1 - x0 - ax_w - rl - cb);
    double cl_h = labels ? lh + gap : 0;
    double avail_h = fmax(1, y1 - y0 - ax_h - cl_h);
    int32_t r0, c0, rows, cols;
    resolve_view(s, &r0, &c0, &rows, &cols);
    L->view_row0 = r0;
    L->view_col0 = c0;
    L->view_rows = rows;
    L->view_cols = cols;
    double aspect = s->max_cell_aspect > 1 ? s->max_cell_aspect : 1;
    double cw = avail_w / cols, ch = avail_h / rows;
    if (s->square_cells) {
        ch = fmin(cw, ch);
        cw = fmin(cw, ch * aspect);
    }
    if (labels && cl_max > cw * 0.92) {
        L->col_labels_rotated = true;
        cl_h = cl_max + gap;
        avail_h = fmax(1, y1 - y0 - ax_h - cl_h);
        cw = avail_w / cols;
        ch = avail_h / rows;
        if (s->square_cells) {
            ch = fmin(cw, ch);
            cw = fmin(cw, ch * aspect);
        }
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
        double pitch = label_pitch(t, s, label_size);
        L->row_label_step = ch >= pitch * 0.95 ? 1 : rt_round_step(pitch * 0.95 / ch);
        if (L->col_labels_rotated)
            L->col_label_step = cw >= pitch * 0.95 ? 1 : rt_round_step(pitch * 0.95 / cw);
        else
            L->col_label_step = 1;
    }
    if (s->show_colorbar) {
        double cbh = fmax(mh, fmin(200 * fs, y1 - y0));
        L->colorbar = (atn_rect){L->cells.x + mw + 3 * gap, y0, cb - 3 * gap, cbh};
    }
    bool zoomed = rows < s->rows || cols < s->cols;
    if (zoomed && s->show_overview && s->rows > 0 && s->cols > 0) {
        double side = fmin(140 * fs, 0.3 * fmin(mw, mh));
        double ow = s->cols >= s->rows ? side : side * s->cols / s->rows;
        double oh = s->rows >= s->cols ? side : side * s->rows / s->cols;
        if (ow >= 24 && oh >= 24)
            L->overview = (atn_rect){L->cells.x + mw - ow - gap, L->cells.y + mh - oh - gap, ow, oh};
    }
    value_fit(t, s, L);
}

/* The layout, measured with t (which the drawing then reuses).  With text larger than
 * normal (presentation mode, the Text size preference) labels that would be thinned to every
 * k-th are drawn smaller instead, down to 0.8 of the normal size, so 13 tokens keep all 13 labels
 * (issue 14); at the normal size nothing changes, unless the spec's min_label_scale lets a
 * small heatmap keep every label at down to that fraction of the normal size. */
static unsigned long n_layouts;   /* atn_render_heatmap_layout_count */

unsigned long atn_render_heatmap_layout_count(void) { return __atomic_load_n(&n_layouts, __ATOMIC_RELAXED); }

static void layout_with(rtext *t, const atn_heatmap_spec *s, double w, double h, bool nonfinite,
                        atn_heatmap_layout *L) {
    __atomic_add_fetch(&n_layouts, 1, __ATOMIC_RELAXED);
    layout_sized(t, s, w, h, nonfinite, RT_LABEL, L);
    bool small = s->min_label_scale > 0;
    if ((t->fs <= 1.0 && !small) || !s->show_labels || (L->row_label_step <= 1 && L->col_label_step <= 1))
        return;
    if (small) {
        /* the largest size, down to min_label_scale of the normal one, that keeps every label:
           the smallest first (none: the rule below), then halving the interval a few times */
        double lo = fmin(1.0, s->min_label_scale / t->fs), hi = 1.0;
        atn_heatmap_layout first = *L, best;
        layout_sized(t, s, w, h, nonfinite, RT_LABEL * lo, &best);
        if (best.row_label_step <= 1 && best.col_label_step <= 1) {
            for (int i = 0; i < 6; i++) {
                double mid = (lo + hi) / 2;
                layout_sized(t, s, w, h, nonfinite, RT_LABEL * mid, L);
                if (L->row_label_step <= 1 && L->col_label_step <= 1) {
                    lo = mid;
                    best = *L;
                } else {
                    hi = mid;
                }
            }
            *L = best;
            return;
        }
        *L = first;
        if (t->fs <= 1.0)   /* not even the smallest keeps them all: the normal size, thinned */
            return;
    }
    double lh = rt_line_height(t, RT_LABEL);
    double room = L->col_labels_rotated ? fmin(L->cell_h, L->cell_w) : L->cell_h;
    double k = fmax(0.8 / t->fs, fmin(1.0, room / (lh * 0.95)));   /* at least 0.8 of the normal size */
    if (k < 1.0)
        layout_sized(t, s, w, h, nonfinite, RT_LABEL * k, L);   /* smaller labels: the cells only grow */
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
    if (!(fx >= 0 && fy >= 0 && fx < L.view_cols && fy < L.view_rows))
        return false;
    *col = L.view_col0 + (int32_t)fx;
    *row = L.view_row0 + (int32_t)fy;
    return true;
}

static double cell_x(const atn_heatmap_layout *L, int32_t j) { return L->cells.x + (j - L->view_col0) * L->cell_w; }
static double cell_y(const atn_heatmap_layout *L, int32_t i) { return L->cells.y + (i - L->view_row0) * L->cell_h; }

/* A sentence pair's boundary (spec.split): a white line with a dark edge on each side, seen
 * on every colour of every map, before the first row and the first column of sentence B,
 * where that edge is inside the visible block. */
static void draw_split(cairo_t *cr, const atn_heatmap_spec *s, const atn_heatmap_layout *L, double lw) {
    int32_t k = s->split;
    if (k <= 0 || k >= s->rows || k >= s->cols)
        return;
    bool row = k > L->view_row0 && k < L->view_row0 + L->view_rows;
    bool col = k > L->view_col0 && k < L->view_col0 + L->view_cols;
    for (int pass = 0; pass < 2; pass++) {
        cairo_set_line_width(cr, pass ? lw : 2 * lw);
        if (pass)
            cairo_set_source_rgb(cr, 1, 1, 1);
        else
            cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
        if (row) {
            cairo_move_to(cr, L->cells.x, cell_y(L, k));
            cairo_line_to(cr, L->cells.x + L->cells.w, cell_y(L, k));
        }
        if (col) {
            cairo_move_to(cr, cell_x(L, k), L->cells.y);
            cairo_line_to(cr, cell_x(L, k), L->cells.y + L->cells.h);
        }
        cairo_stroke(cr);
    }
}

/* One row label right-aligned before the cells; boxed: on a background box (hover). */
static void draw_row_label(cairo_t *cr, rtext *t, const atn_heatmap_spec *s, const atn_heatmap_layout *L, int32_t i,
                           bool hi, bool boxed) {
    char buf[256];
    double lh = rt_line_height(t, L->label_size), gap = 4 * t->fs;
    const char *text = label_at(s->row_labels, i, L->row_label_step, buf, sizeof buf);
    double yc = cell_y(L, i) + 0.5 * L->cell_h;
    if (boxed) {
        double tw;
        rt_measure(t, text, L->label_size, true, &tw, NULL);
        tw = fmin(tw, L->row_labels.w);
        rt_rgb(cr, t->st.bg, 1.0);
        cairo_rectangle(cr, L->cells.x - gap - tw - gap / 2, yc - lh / 2, tw + gap, lh);
        cairo_fill(cr);
    }
    bool dim = s->row_mask && !s->row_mask[i];
    rt_rgb(cr, hi ? t->st.accent : t->st.fg, dim ? 0.4 : 1.0);
    rt_draw(cr, t, text, L->label_size, hi, L->cells.x - gap, yc - lh / 2, 1.0, L->row_labels.w);
}

static void draw_col_label(cairo_t *cr, rtext *t, const atn_heatmap_spec *s, const atn_heatmap_layout *L, int32_t j,
                           bool hi, bool boxed) {
    char buf[256];
    double lh = rt_line_height(t, L->label_size);
    double xc = cell_x(L, j) + 0.5 * L->cell_w;
    const char *text = label_at(s->col_labels, j, L->col_label_step, buf, sizeof buf);
    double tw;
    rt_measure(t, text, L->label_size, hi, &tw, NULL);
    if (boxed) {
        rt_rgb(cr, t->st.bg, 1.0);
        if (L->col_labels_rotated)
            cairo_rectangle(cr, xc - lh / 2, L->col_labels.y, lh, fmin(tw, L->col_labels.h) + 2);
        else
            cairo_rectangle(cr, xc - tw / 2 - 2, L->col_labels.y, tw + 4, lh);
        cairo_fill(cr);
    }
    bool dim = s->col_mask && !s->col_mask[j];
    rt_rgb(cr, hi ? t->st.accent : t->st.fg, dim ? 0.4 : 1.0);
    if (L->col_labels_rotated) {
        double shown = fmin(tw, L->col_labels.h);
        rt_draw_up(cr, t, text, L->label_size, hi, xc, L->col_labels.y, shown < tw ? L->col_labels.h : 0);
    } else {
        rt_draw(cr, t, text, L->label_size, hi, xc, L->col_labels.y, 0.5, 0);
    }
}

/* Labels of the visible block, every step-th (counted from 0, so panning keeps the same
 * labels), and the highlighted ones wherever they fall. */
static void draw_labels(cairo_t *cr, rtext *t, const atn_heatmap_spec *s, const atn_heatmap_layout *L) {
    double gap = 4 * t->fs;
    int32_t r1 = L->view_row0 + L->view_rows, c1 = L->view_col0 + L->view_cols;
    for (int32_t i = L->view_row0; i < r1; i++) {
        bool hi = i == s->highlight_row || i == s->hover_row;
        if (i == s->highlight_row || (i % L->row_label_step == 0 && !atn_render_heatmap_label_hidden(s, L, i, true)))
            draw_row_label(cr, t, s, L, i, hi, false);
    }
    for (int32_t j = L->view_col0; j < c1; j++) {
        bool hi = j == s->highlight_col || j == s->hover_col;
        if (j == s->highlight_col || (j % L->col_label_step == 0 && !atn_render_heatmap_label_hidden(s, L, j, false)))
            draw_col_label(cr, t, s, L, j, hi, false);
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

bool atn_render_heatmap_label_hidden(const atn_heatmap_spec *s, const atn_heatmap_layout *L, int32_t i, bool row) {
    int32_t step = row ? L->row_label_step : L->col_label_step;
    if (step <= 1)
        return false;
    /* within one label step of the selected or hovered one: it would overlap that label */
    int32_t hl = row ? s->highlight_row : s->highlight_col, hv = row ? s->hover_row : s->hover_col;
    return (hl >= 0 && i != hl && abs(i - hl) < step) || (hv >= 0 && i != hv && abs(i - hv) < step);
}

static bool visible_row(const atn_heatmap_layout *L, int32_t i) {
    return i >= L->view_row0 && i < L->view_row0 + L->view_rows;
}
static bool visible_col(const atn_heatmap_layout *L, int32_t j) {
    return j >= L->view_col0 && j < L->view_col0 + L->view_cols;
}

static void draw_hover_labels(cairo_t *cr, rtext *t, const atn_heatmap_spec *s, const atn_heatmap_layout *L) {
    if (!s->show_labels || L->row_labels.w <= 0)
        return;
    /* the figure under it was drawn without the hover: the labels it would overlap (those within
       a label step, the selected one too) are covered first, so the hovered one stands alone */
    double lh = rt_line_height(t, L->label_size), gap = 4 * t->fs;
    rt_rgb(cr, t->st.bg, 1.0);
    if (s->hover_row >= 0 && s->hover_row < s->rows && visible_row(L, s->hover_row) && L->row_label_step > 1)
        for (int32_t i = MAX(L->view_row0, s->hover_row - L->row_label_step + 1);
             i < MIN(L->view_row0 + L->view_rows, s->hover_row + L->row_label_step); i++)
            if (i != s->hover_row && (i % L->row_label_step == 0 || i == s->highlight_row)) {
                cairo_rectangle(cr, L->row_labels.x, cell_y(L, i) + 0.5 * L->cell_h - lh / 2, L->row_labels.w + gap, lh);
                cairo_fill(cr);
            }
    if (s->hover_col >= 0 && s->hover_col < s->cols && visible_col(L, s->hover_col) && L->col_label_step > 1 &&
        L->col_labels_rotated)
        for (int32_t j = MAX(L->view_col0, s->hover_col - L->col_label_step + 1);
             j < MIN(L->view_col0 + L->view_cols, s->hover_col + L->col_label_step); j++)
            if (j != s->hover_col && (j % L->col_label_step == 0 || j == s->highlight_col)) {
                cairo_rectangle(cr, cell_x(L, j) + 0.5 * L->cell_w - lh / 2, L->col_labels.y, lh, L->col_labels.h + 2);
                cairo_fill(cr);
            }
    if (s->hover_row >= 0 && s->hover_row < s->rows && visible_row(L, s->hover_row))
        draw_row_label(cr, t, s, L, s->hover_row, true, true);
    if (s->hover_col >= 0 && s->hover_col < s->cols && visible_col(L, s->hover_col))
        draw_col_label(cr, t, s, L, s->hover_col, true, true);
}

void atn_render_heatmap_hover_labels(cairo_t *cr, const atn_heatmap_spec *s, double w, double h,
                                     const atn_heatmap_layout *layout) {
    rtext t;
    rt_begin(&t, s->style);
    atn_heatmap_layout L;
    if (layout)
        L = *layout;
    else
        layout_with(&t, s, w, h, s->show_colorbar && has_nonfinite(s), &L);
    cairo_save(cr);
    draw_hover_labels(cr, &t, s, &L);
    cairo_restore(cr);
    rt_end(&t);
}

/* The spec's masked cells: a causal model's future ones and those its cell_mask hides. */
static rt_cell_mask mask_of(const atn_heatmap_spec *s) {
    return (rt_cell_mask){.causal = s->causal, .add = s->cell_mask, .cols = s->cols};
}

/* Whether cell (i, j) gets its number. */
static bool cell_shows_number(const atn_heatmap_spec *s, int32_t i, int32_t j) {
    /* a causal model's future cells, and those the run's mask hid, are masked: no number */
    rt_cell_mask m = mask_of(s);
    return !rt_cell_masked(&m, i, j);
}

bool atn_render_heatmap_cell_text(const atn_heatmap_spec *s, const atn_heatmap_layout *L, int32_t i, int32_t j,
                                  char *buf, size_t size) {
    if (size)
        buf[0] = 0;
    if (!s || !L || !s->values || L->value_decimals <= 0 || i < L->view_row0 || i >= L->view_row0 + L->view_rows ||
        j < L->view_col0 || j >= L->view_col0 + L->view_cols || !cell_shows_number(s, i, j))
        return false;
    double v = number_of(s, i, j);
    /* with one or two decimals a field of "<.1" says little: such cells stay blank (the colour
       says it, the tooltip gives the number) */
    if (L->value_decimals < 3 && v != 0 && fabs(v) < 0.5 * pow(10, -L->value_decimals))
        return false;
    atn_render_cell_number(buf, size, v, L->value_decimals);
    return true;
}

static void draw_values(cairo_t *cr, rtext *t, const atn_heatmap_spec *s, const atn_heatmap_layout *L) {
    if (L->value_decimals <= 0)
        return;
    double vh, fs = t->fs;
    rt_measure(t, "0", RT_SMALL, false, NULL, &vh);
    char buf[32];
    for (int32_t i = L->view_row0; i < L->view_row0 + L->view_rows; i++)
        for (int32_t j = L->view_col0; j < L->view_col0 + L->view_cols; j++) {
            if (!atn_render_heatmap_cell_text(s, L, i, j, buf, sizeof buf))
                continue;
            double v = s->values[(size_t)i * stride_of(s) + j], rgb[3];   /* the colour under it */
            double tw;
            rt_measure(t, buf, RT_SMALL, false, &tw, NULL);
            if (tw + 2 * VALUE_PAD_X * fs > L->cell_w)
                continue;   /* never spills into the next cell */
            double tv = (v - L->vmin) / (L->vmax - L->vmin);
            atn_colormap_rgb(s->colormap, s->reversed ? 1 - tv : tv, rgb);
            if (rt_luminance(rgb) > 0.45)
                cairo_set_source_rgb(cr, 0, 0, 0);
            else
                cairo_set_source_rgb(cr, 1, 1, 1);
            rt_draw(cr, t, buf, RT_SMALL, false, cell_x(L, j) + 0.5 * L->cell_w, cell_y(L, i) + 0.5 * L->cell_h - vh / 2,
                    0.5, 0);
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

void rt_draw_cells_part(cairo_t *cr, cairo_surface_t *img, atn_rect r, int32_t rows, int32_t cols, int32_t r0,
                        int32_t c0, int32_t nr, int32_t nc) {
    cairo_surface_t *big = NULL;
    int k = 1;
    if (cairo_surface_get_type(cairo_get_target(cr)) == CAIRO_SURFACE_TYPE_SVG &&
        cairo_surface_get_type(img) == CAIRO_SURFACE_TYPE_IMAGE) {
        double cell = fmax(r.w / nc, r.h / nr);
        int32_t side = rows > cols ? rows : cols;
        k = (int)fmin(ceil(2 * cell), floor(2048.0 / side));
        /* the figure's budget for enlarged cells (a model grid has one image per head): once
         * spent, the cells go in at their own size, so a figure's memory stays bounded */
        static const cairo_user_data_key_t spent_key;
        cairo_surface_t *target = cairo_get_target(cr);
        double *spent = cairo_surface_get_user_data(target, &spent_key);
        if (!spent && (spent = calloc(1, sizeof *spent)) &&
            cairo_surface_set_user_data(target, &spent_key, spent, free) != CAIRO_STATUS_SUCCESS) {
            free(spent);
            spent = NULL;
        }
        double px = (double)rows * cols * k * k;
        if (!spent || *spent + px > ATN_RENDER_MAX_SVG_CELL_PIXELS)
            k = 1;
        else
            *spent += px;
        if (k > 1 && (big = enlarge(img, rows, cols, k)))
            img = big;
        else
            k = 1;
    }
    cairo_save(cr);
    cairo_rectangle(cr, r.x, r.y, r.w, r.h);
    cairo_clip(cr);
    /* pixel (c0*k, r0*k) of the image lands on (r.x, r.y); only the visible block is filled */
    double sx = r.w / ((double)nc * k), sy = r.h / ((double)nr * k);
    cairo_translate(cr, r.x - (double)c0 * k * sx, r.y - (double)r0 * k * sy);
    cairo_scale(cr, sx, sy);
    cairo_set_source_surface(cr, img, 0, 0);
    cairo_pattern_set_filter(cairo_get_source(cr), CAIRO_FILTER_NEAREST);
    cairo_pattern_set_extend(cairo_get_source(cr), CAIRO_EXTEND_PAD);
    cairo_rectangle(cr, (double)c0 * k, (double)r0 * k, (double)nc * k, (double)nr * k);
    cairo_fill(cr);
    cairo_restore(cr);
    if (big)
        cairo_surface_destroy(big);
}

static bool add_masked(const rt_cell_mask *m, int32_t row, int32_t col) {
    return m->add && m->add[(size_t)row * m->cols + col] < -1e30f;
}

bool rt_cell_masked(const rt_cell_mask *m, int32_t row, int32_t col) {
    return (m->causal && col > row) || add_masked(m, row, col);
}

void rt_draw_cell_mask(cairo_t *cr, const rt_cell_mask *m, atn_rect r, int32_t row0, int32_t col0, int32_t rows,
                       int32_t cols, bool hatch, double fs) {
    if (rows <= 0 || cols <= 0 || (!m->causal && !m->add))
        return;
    double cw = r.w / cols, ch = r.h / rows;
    cairo_save(cr);
    cairo_new_path(cr);
    bool any = false;
    for (int32_t i = 0; i < rows; i++) {
        /* a causal row is masked from its first future column (in the block) to the end */
        int32_t tail = cols;
        if (m->causal) {
            int32_t first = row0 + i + 1 - col0;
            tail = first < 0 ? 0 : first < cols ? first : cols;
        }
        int32_t j = m->add ? 0 : tail;
        while (j < tail) {   /* the additive mask's runs before it, each one rectangle */
            if (!add_masked(m, row0 + i, col0 + j)) {
                j++;
                continue;
            }
            int32_t e = j + 1;
            while (e < tail && add_masked(m, row0 + i, col0 + e))
                e++;
            if (e == tail)   /* a run that reaches the causal part (or the end) joins it */
                break;
            cairo_rectangle(cr, r.x + j * cw, r.y + i * ch, (e - j) * cw, ch);
            any = true;
            j = e;
        }
        if (j < cols) {   /* from j to the end: the causal part and a run that reached it */
            cairo_rectangle(cr, r.x + j * cw, r.y + i * ch, (cols - j) * cw, ch);
            any = true;
        }
    }
    if (any) {
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
    }
    cairo_new_path(cr);
    cairo_restore(cr);
}

void rt_draw_cells(cairo_t *cr, cairo_surface_t *img, atn_rect r, int32_t rows, int32_t cols) {
    rt_draw_cells_part(cr, img, r, rows, cols, 0, 0, rows, cols);
}

/* The whole matrix small, the visible block outlined (drawn once zoomed). */
static void draw_overview(cairo_t *cr, rtext *t, cairo_surface_t *img, const atn_heatmap_spec *s,
                          const atn_heatmap_layout *L) {
    atn_rect o = L->overview;
    if (o.w <= 0 || !img)
        return;
    double fs = t->fs;
    cairo_save(cr);
    rt_rgb(cr, t->st.bg, 0.9);
    cairo_rectangle(cr, o.x - 3 * fs, o.y - 3 * fs, o.w + 6 * fs, o.h + 6 * fs);
    cairo_fill(cr);
    rt_draw_cells(cr, img, o, s->rows, s->cols);
    rt_cell_mask m = mask_of(s);
    rt_draw_cell_mask(cr, &m, o, 0, 0, s->rows, s->cols, false, fs);
    double x = o.x + o.w * L->view_col0 / s->cols, y = o.y + o.h * L->view_row0 / s->rows;
    double w = fmax(2, o.w * L->view_cols / s->cols), h = fmax(2, o.h * L->view_rows / s->rows);
    cairo_set_line_width(cr, 2 * fs);
    cairo_set_source_rgb(cr, 1, 1, 1);
    cairo_rectangle(cr, x, y, w, h);
    cairo_stroke(cr);
    cairo_set_line_width(cr, 1 * fs);
    cairo_set_source_rgb(cr, 0, 0, 0);
    cairo_rectangle(cr, x - 1.5 * fs, y - 1.5 * fs, w + 3 * fs, h + 3 * fs);
    cairo_stroke(cr);
    rt_rgb(cr, t->st.fg, 1.0);
    cairo_rectangle(cr, o.x - 3 * fs, o.y - 3 * fs, o.w + 6 * fs, o.h + 6 * fs);
    cairo_stroke(cr);
    cairo_restore(cr);
}

void atn_render_heatmap(cairo_t *cr, const atn_heatmap_spec *s, double w, double h) {
    atn_render_heatmap_laid_out(cr, s, w, h, NULL);
}

void atn_render_heatmap_laid_out(cairo_t *cr, const atn_heatmap_spec *s, double w, double h,
                                 const atn_heatmap_layout *layout) {
    rtext t;
    rt_begin(&t, s->style);
    bool nonfinite = has_nonfinite(s);
    atn_heatmap_layout L;
    if (layout)
        L = *layout;   /* the same spec and size: measuring 512 token labels again cost a window's frame */
    else
        layout_with(&t, s, w, h, nonfinite && s->show_colorbar, &L);
    cairo_save(cr);
    rt_background(cr, &t, w, h);
    if (s->title && s->title[0]) {
        rt_rgb(cr, t.st.fg, 1.0);
        if (L.title_lines > 1)
            rt_draw_wrapped(cr, &t, s->title, RT_TITLE, true, L.title.x + L.title.w / 2, L.title.y, L.title.w, 2);
        else
            rt_draw(cr, &t, s->title, RT_TITLE, true, L.title.x + L.title.w / 2, L.title.y, 0.5, L.title.w);
    }
    if (s->legend && s->legend[0]) {
        double y = L.title.h > 0 ? L.title.y + L.title.h + 4 * t.fs : 10 * t.fs;
        rt_rgb(cr, t.st.fg, 0.8);
        rt_draw(cr, &t, s->legend, RT_SMALL, false, w / 2, y, 0.5, w - 20 * t.fs);
    }
    if (s->values && s->rows > 0 && s->cols > 0) {
        cairo_surface_t *img = s->cells;
        if (!img)
            img = atn_render_matrix_surface(s->values, s->rows, s->cols, stride_of(s), s->colormap,
                                            s->reversed ? L.vmax : L.vmin, s->reversed ? L.vmin : L.vmax, NULL);
        if (img)
            rt_draw_cells_part(cr, img, L.cells, s->rows, s->cols, L.view_row0, L.view_col0, L.view_rows,
                               L.view_cols);
        rt_cell_mask m = mask_of(s);
        rt_draw_cell_mask(cr, &m, L.cells, L.view_row0, L.view_col0, L.view_rows, L.view_cols, true, t.fs);
        draw_values(cr, &t, s, &L);
        if (s->show_labels)
            draw_labels(cr, &t, s, &L);

        double lw = fmax(1.0, 2.0 * t.fs);
        draw_split(cr, s, &L, lw);
        cairo_set_line_width(cr, lw);
        rt_rgb(cr, t.st.accent, 1.0);
        cairo_save(cr);
        cairo_rectangle(cr, L.cells.x - lw, L.cells.y - lw, L.cells.w + 2 * lw, L.cells.h + 2 * lw);
        cairo_clip(cr);
        if (s->highlight_row >= 0 && s->highlight_row < s->rows && visible_row(&L, s->highlight_row)) {
            cairo_rectangle(cr, L.cells.x, cell_y(&L, s->highlight_row), L.cells.w, L.cell_h);
            cairo_stroke(cr);
        }
        if (s->highlight_col >= 0 && s->highlight_col < s->cols && visible_col(&L, s->highlight_col)) {
            cairo_rectangle(cr, cell_x(&L, s->highlight_col), L.cells.y, L.cell_w, L.cells.h);
            cairo_stroke(cr);
        }
        cairo_restore(cr);
        if (s->hover_row >= 0 && s->hover_row < s->rows && s->hover_col >= 0 && s->hover_col < s->cols &&
            visible_row(&L, s->hover_row) && visible_col(&L, s->hover_col)) {
            double x = cell_x(&L, s->hover_col), y = cell_y(&L, s->hover_row);
            cairo_set_source_rgb(cr, 1, 1, 1);
            cairo_rectangle(cr, x - lw, y - lw, L.cell_w + 2 * lw, L.cell_h + 2 * lw);
            cairo_stroke(cr);
            cairo_set_source_rgb(cr, 0, 0, 0);
            cairo_set_line_width(cr, lw / 2);
            cairo_rectangle(cr, x - lw * 1.75, y - lw * 1.75, L.cell_w + 3.5 * lw, L.cell_h + 3.5 * lw);
            cairo_stroke(cr);
        }
        draw_overview(cr, &t, img, s, &L);
        if (img && img != s->cells)
            cairo_surface_destroy(img);
        draw_hover_labels(cr, &t, s, &L);
    }
    if (s->show_colorbar)
        rt_colorbar_noted(cr, &t, s->colormap, L.vmin, L.vmax, s->colorbar_label, s->colorbar_note, s->reversed,
                          nonfinite, L.colorbar);
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
    double lw = s->show_labels ? fmin(max_label_width(&t, s->row_labels, s->rows, RT_LABEL), 300 * fs) + 4 * fs : 0;
    double cl = s->show_labels ? fmin(max_label_width(&t, s->col_labels, s->cols, RT_LABEL), 300 * fs) : 0;
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
