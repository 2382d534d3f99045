/* The head-to-head similarity matrix: a heatmap in clustering order, heads labelled like
 * L3·H7, with the average-linkage dendrogram drawn above the columns. */
#include "render-private.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void atn_similarity_spec_init(atn_similarity_spec *s) {
    memset(s, 0, sizeof *s);
    s->clustered = true;
    s->colormap = ATN_CMAP_VIRIDIS;
    s->auto_diverging = true;
    s->highlight_a = s->highlight_b = -1;
    s->hover_a = s->hover_b = -1;
    s->show_dendrogram = true;
}

/* Everything the figure needs, built from the spec: the reordered matrix, labels, and
 * where the heatmap and the dendrogram go. */
typedef struct sim_fig {
    float *values;          /* [count][count] in display order */
    char **labels;          /* [count] */
    int32_t *pos_of;        /* [count] display position of head c */
    char title[160];
    const char *legend;     /* what a cell is, under the title (or beside the matrix) */
    atn_heatmap_spec hm;
    double dendro_h;        /* height of the dendrogram strip (0: none) */
    double top;             /* the dendrogram, then the heatmap sub-figure, start here */
    double sub_w, sub_h;    /* the heatmap sub-figure's size (from x = 0, y = top + dendro_h) */
    bool side;              /* the legend in a column right of the matrix (x cap_x, cap_w wide) */
    double cap_x, cap_w;    /* the legend's column (the figure's width less its margins when on top) */
    double title_y, title_h, legend_y, legend_h;
    int title_lines, legend_lines;   /* the most lines each may take */
    bool title_cut, legend_cut;
    bool have_L;            /* L is the matrix's layout at sub_w x sub_h (place made it) */
    atn_heatmap_layout L;
} sim_fig;

static void fig_free(sim_fig *f) {
    if (f->labels)
        for (int32_t i = 0; i < f->hm.rows; i++)
            free(f->labels[i]);
    free(f->labels);
    free(f->values);
    free(f->pos_of);
}

static int32_t display_head(const atn_similarity_spec *s, int32_t p) {
    return s->clustered && s->sim->order ? s->sim->order[p] : p;
}

/* The heatmap's cell size for a sub-figure of sw x sh (its layout in L). */
static double cell_of(const atn_heatmap_spec *hm, double sw, double sh, atn_heatmap_layout *L) {
    atn_render_heatmap_layout(hm, fmax(1, sw), fmax(1, sh), L);
    return fmin(L->cell_w, L->cell_h);
}

/* Where the title, the legend and the matrix go.  On top (the usual figure): the title
 * wrapped on up to two lines, the legend sentence on up to three, then the dendrogram and the
 * matrix.  When the figure is wide and short (the window's pane at a large text size) the
 * matrix, square and bound by the height, leaves a strip of width unused: the legend then
 * goes in a column right of the colour bar, and the matrix takes the height it left (chosen
 * only when that gives clearly larger cells, so a file export at its natural size keeps the
 * legend on top). */
static void place(rtext *t, const atn_similarity_spec *s, double w, double h, bool allow_side, sim_fig *f) {
    double fs = t->fs, pad = 10 * fs;
    bool dendro = s->show_dendrogram && s->clustered && f->hm.rows > 1 && s->sim->merge_a && s->sim->clustered;
    f->dendro_h = dendro ? fmin(70 * fs, 0.15 * h) : 0;
    /* on top */
    double tw = w - 2 * pad;
    f->side = false;
    f->cap_x = pad;
    f->cap_w = tw;
    f->title_lines = 2;
    f->legend_lines = 3;
    f->title_y = pad;
    f->title_h = rt_wrapped_height(t, f->title, RT_TITLE, true, tw, f->title_lines);
    f->legend_y = f->title_y + f->title_h + 4 * fs;
    f->legend_h = rt_wrapped_height(t, f->legend, RT_SMALL, false, tw, f->legend_lines);
    f->top = f->legend_y + f->legend_h + 8 * fs;
    f->sub_w = w;
    f->sub_h = fmax(1, h - f->top - f->dendro_h);
    if (!allow_side)
        goto fitted;
    atn_heatmap_layout L;
    double cell_top = cell_of(&f->hm, f->sub_w, f->sub_h, &f->L);
    f->have_L = true;   /* on top, unless the legend goes beside below */
    /* beside: the title on top, the matrix as tall as the rest less the dendrogram; the
       legend in the column its square leaves of the width, at least 150 px at normal size */
    double top = f->title_y + f->title_h + 8 * fs;
    double dendro_h = fmin(f->dendro_h, 0.1 * h);   /* a lower tree: the height is short */
    double sub_h = fmax(1, h - top - dendro_h);
    double cell_full = cell_of(&f->hm, w, sub_h, &L);
    double slack = L.colorbar.w > 0 ? (w - pad) - (L.colorbar.x + L.colorbar.w) : 0;   /* each side of the centred block */
    double col = fmin(fmax(2 * slack, 150 * fs), w / 2);
    atn_heatmap_layout Ls = L;
    double cell_side = col > 2 * slack + 0.5 ? cell_of(&f->hm, w - col, sub_h, &Ls) : cell_full;
    if (!(cell_side > 1.15 * cell_top))
        goto fitted;
    /* the column starts after the colour bar (the block, centred in the rest, moves left) */
    if (col <= 2 * slack + 0.5)
        cell_of(&f->hm, w - col, sub_h, &Ls);
    double cx = Ls.colorbar.x + Ls.colorbar.w + 2 * pad, cw = w - pad - cx;
    int legend_lines = 12;
    double legend_h = rt_wrapped_height(t, f->legend, RT_SMALL, false, cw, legend_lines);
    if (cw < 100 * fs || rt_wrapped_cut(t, f->legend, RT_SMALL, false, cw, legend_lines, NULL) ||
        legend_h > h - top - pad)
        goto fitted;
    f->side = true;
    f->cap_x = cx;
    f->cap_w = cw;
    f->legend_lines = legend_lines;
    f->legend_y = top;
    f->legend_h = legend_h;
    f->top = top;
    f->dendro_h = dendro_h;
    f->sub_w = w - col;
    f->sub_h = sub_h;
    f->L = Ls;   /* made at (w - col, sub_h) on either branch above */
fitted:
    f->title_cut = rt_wrapped_cut(t, f->title, RT_TITLE, true, tw, f->title_lines, NULL);
    f->legend_cut = rt_wrapped_cut(t, f->legend, RT_SMALL, false, f->cap_w, f->legend_lines, NULL);
}

static bool fig_build(rtext *t, const atn_similarity_spec *s, double w, double h, bool allow_side, sim_fig *f) {
    memset(f, 0, sizeof *f);
    const atn_similarity *sim = s->sim;
    if (!sim || sim->count <= 0)
        return false;
    int32_t c = sim->count;
    f->values = malloc((size_t)c * c * sizeof *f->values);
    f->labels = calloc((size_t)c, sizeof *f->labels);
    f->pos_of = malloc((size_t)c * sizeof *f->pos_of);
    if (!f->values || !f->labels || !f->pos_of) {
        fig_free(f);
        return false;
    }
    atn_heatmap_spec_init(&f->hm);
    f->hm.rows = f->hm.cols = c;
    for (int32_t p = 0; p < c; p++) {
        int32_t a = display_head(s, p);
        f->pos_of[a] = p;
        char buf[32];
        f->labels[p] = strdup(s->labels && s->labels[a] ? s->labels[a] : atn_similarity_label(sim, a, buf, sizeof buf));
        for (int32_t q = 0; q < c; q++)
            f->values[(size_t)p * c + q] = (float)sim->values[(size_t)a * c + display_head(s, q)];
    }
    atn_heatmap_spec *hm = &f->hm;
    hm->values = f->values;
    hm->row_labels = hm->col_labels = (const char *const *)f->labels;
    hm->colormap = s->colormap;
    if (s->auto_diverging && sim->metric == ATN_METRIC_PEARSON && s->colormap == ATN_CMAP_VIRIDIS)
        hm->colormap = ATN_CMAP_RDBU;
    hm->colorbar_label = rt_tr(sim->metric == ATN_METRIC_JS       ? N_("JS distance")
                               : sim->metric == ATN_METRIC_COSINE ? N_("cosine")
                                                                  : N_("Pearson r"));
    /* the same meaning of the colours for every metric: bright = the two heads attend alike
       (a JS distance is drawn with the map upside down, small = bright) */
    hm->reversed = sim->metric == ATN_METRIC_JS;
    hm->colorbar_note = hm->colormap == ATN_CMAP_RDBU ? rt_tr(N_("red = alike")) : rt_tr(N_("bright = alike"));
    f->legend = rt_tr(sim->metric == ATN_METRIC_JS
                          ? N_("A cell: how differently two heads spread each query's attention (Jensen–Shannon "
                               "distance of their rows, mean over the queries); bright = alike.")
                      : sim->metric == ATN_METRIC_COSINE
                          ? N_("A cell: the cosine similarity of two heads' attention maps (1 = the same map); "
                               "bright = alike.")
                          : N_("A cell: the Pearson correlation of two heads' attention weights; red = alike, "
                               "blue = opposite."));
    if (s->legend)
        f->legend = s->legend;
    hm->style = s->style;
    /* every head's label, smaller rather than every other one (a 16-head layer in a short pane) */
    hm->min_label_scale = 0.6;
    hm->highlight_row = s->highlight_a >= 0 && s->highlight_a < c ? f->pos_of[s->highlight_a] : -1;
    hm->highlight_col = s->highlight_b >= 0 && s->highlight_b < c ? f->pos_of[s->highlight_b] : -1;
    hm->hover_row = s->hover_a >= 0 && s->hover_a < c ? f->pos_of[s->hover_a] : -1;
    hm->hover_col = s->hover_b >= 0 && s->hover_b < c ? f->pos_of[s->hover_b] : -1;
    if (s->title)
        snprintf(f->title, sizeof f->title, "%s", s->title);
    else if (sim->scope == ATN_SCOPE_LAYER)
        snprintf(f->title, sizeof f->title, "%s between the heads of layer %d%s", atn_metric_title(sim->metric),
                 sim->layer, s->clustered ? " (clustered)" : "");
    else
        snprintf(f->title, sizeof f->title, "%s between all %d heads%s", atn_metric_title(sim->metric), c,
                 s->clustered ? " (clustered)" : "");
    if (sim->n_sentences > 1) {
        size_t len = strlen(f->title);
        snprintf(f->title + len, sizeof f->title - len, ", mean of %lld sentences", (long long)sim->n_sentences);
    }
    place(t, s, w, h, allow_side, f);
    return true;
}

/* The matrix's layout at its sub-figure's size: the one place made, else made now. */
static void matrix_layout(sim_fig *f, atn_heatmap_layout *L) {
    if (!f->have_L) {
        atn_render_heatmap_layout(&f->hm, f->sub_w, f->sub_h, &f->L);
        f->have_L = true;
    }
    *L = f->L;
}

static void sub_size(const sim_fig *f, double w, double h, double *sw, double *sh) {
    *sw = f->sub_w;
    *sh = f->sub_h;
}

static void draw_dendrogram(cairo_t *cr, rtext *t, const atn_similarity *sim, const sim_fig *f,
                            const atn_heatmap_layout *L, double y_top, double y_bottom) {
    int32_t c = sim->count;
    double *x = malloc((size_t)(2 * c) * sizeof *x), *hgt = malloc((size_t)(2 * c) * sizeof *hgt);
    if (!x || !hgt) {
        free(x);
        free(hgt);
        return;
    }
    double hmax = 0;
    for (int32_t m = 0; m < c - 1; m++)
        if (isfinite(sim->merge_height[m]))
            hmax = fmax(hmax, sim->merge_height[m]);
    if (!(hmax > 0))
        hmax = 1;
    for (int32_t i = 0; i < c; i++) {
        x[i] = L->cells.x + (f->pos_of[i] + 0.5) * L->cell_w;
        hgt[i] = 0;
    }
    double span = y_bottom - y_top;
    rt_rgb(cr, t->st.fg, 0.8);
    cairo_set_line_width(cr, fmax(0.5, 1.0 * t->fs));
    for (int32_t m = 0; m < c - 1; m++) {
        int32_t a = sim->merge_a[m], b = sim->merge_b[m];
        double hm = isfinite(sim->merge_height[m]) ? sim->merge_height[m] : hmax * 1.05;
        hgt[c + m] = hm;
        x[c + m] = 0.5 * (x[a] + x[b]);
        double ya = y_bottom - hgt[a] / (hmax * 1.05) * span, yb = y_bottom - hgt[b] / (hmax * 1.05) * span;
        double ym = y_bottom - hm / (hmax * 1.05) * span;
        cairo_move_to(cr, x[a], ya);
        cairo_line_to(cr, x[a], ym);
        cairo_line_to(cr, x[b], ym);
        cairo_line_to(cr, x[b], yb);
        cairo_stroke(cr);
    }
    free(x);
    free(hgt);
}

void atn_render_similarity(cairo_t *cr, const atn_similarity_spec *s, double w, double h) {
    rtext t;
    rt_begin(&t, s->style);
    sim_fig f;
    cairo_save(cr);
    rt_background(cr, &t, w, h);
    if (!fig_build(&t, s, w, h, true, &f)) {
        rt_rgb(cr, t.st.fg, 1.0);
        rt_draw(cr, &t, rt_tr(N_("no similarity computed")), RT_LABEL, false, w / 2, h / 2, 0.5, 0);
        cairo_restore(cr);
        rt_end(&t);
        return;
    }
    rt_rgb(cr, t.st.fg, 1.0);
    rt_draw_wrapped(cr, &t, f.title, RT_TITLE, true, w / 2, f.title_y, w - 20 * t.fs, f.title_lines);
    rt_rgb(cr, t.st.fg, 0.8);
    if (f.side)
        rt_draw_wrapped_left(cr, &t, f.legend, RT_SMALL, false, f.cap_x, f.legend_y, f.cap_w, f.legend_lines);
    else
        rt_draw_wrapped(cr, &t, f.legend, RT_SMALL, false, w / 2, f.legend_y, f.cap_w, f.legend_lines);
    double sw, sh;
    sub_size(&f, w, h, &sw, &sh);
    atn_heatmap_spec hm = f.hm;
    atn_render_style st = t.st;
    st.transparent = true;
    hm.style = &st;
    /* one layout for the cells and the tree (the style's transparency does not change it) */
    atn_heatmap_layout L;
    matrix_layout(&f, &L);
    cairo_save(cr);
    cairo_translate(cr, 0, f.top + f.dendro_h);
    atn_render_heatmap_laid_out(cr, &hm, sw, sh, &L);
    cairo_restore(cr);
    if (f.dendro_h > 0) {
        /* the sub-figure's own top padding sits between the tree and the cells */
        draw_dendrogram(cr, &t, s->sim, &f, &L, f.top, f.top + f.dendro_h + L.cells.y - 2 * t.fs);
    }
    cairo_restore(cr);
    fig_free(&f);
    rt_end(&t);
}

bool atn_render_similarity_cell_at(const atn_similarity_spec *s, double w, double h, double x, double y, int32_t *a,
                                   int32_t *b) {
    *a = *b = -1;
    rtext t;
    rt_begin(&t, s->style);
    sim_fig f;
    bool ok = fig_build(&t, s, w, h, true, &f);
    rt_end(&t);
    if (!ok)
        return false;
    atn_similarity_layout out = {.side = f.side};
    matrix_layout(&f, &out.matrix);
    out.matrix.cells.y += f.top + f.dendro_h;
    ok = atn_render_similarity_cell_at_layout(s, &out, x, y, a, b);
    fig_free(&f);
    return ok;
}

bool atn_render_similarity_cell_at_layout(const atn_similarity_spec *s, const atn_similarity_layout *layout, double x,
                                          double y, int32_t *a, int32_t *b) {
    *a = *b = -1;
    const atn_heatmap_layout *M = &layout->matrix;
    if (!s->sim || s->sim->count <= 0 || M->cell_w <= 0 || M->cell_h <= 0)
        return false;
    double fx = (x - M->cells.x) / M->cell_w, fy = (y - M->cells.y) / M->cell_h;
    if (!(fx >= 0 && fy >= 0 && fx < M->view_cols && fy < M->view_rows))
        return false;
    *a = display_head(s, M->view_row0 + (int32_t)fy);
    *b = display_head(s, M->view_col0 + (int32_t)fx);
    return true;
}

void atn_render_similarity_natural_size(const atn_similarity_spec *s, double *width, double *height) {
    rtext t;
    rt_begin(&t, s->style);
    sim_fig f;
    if (!fig_build(&t, s, 800, 800, false, &f)) {
        *width = 400;
        *height = 300;
        rt_end(&t);
        return;
    }
    int32_t c = s->sim->count;
    double cell = (c <= 16 ? 44 : c <= 48 ? 22 : fmax(6, 1100.0 / c)) * t.fs;
    f.hm.show_values = false;
    double hw, hh;
    atn_render_heatmap_natural_size(&f.hm, &hw, &hh);
    /* the heatmap picks its own cell size; scale to ours */
    double lw = 0, cb = rt_colorbar_width(&t, 0, 1, false) + 12 * t.fs;
    for (int32_t i = 0; i < c; i++) {
        double tw;
        rt_measure(&t, f.labels[i], RT_LABEL, false, &tw, NULL);
        lw = fmax(lw, tw);
    }
    double title_w, legend_w;
    rt_measure(&t, f.title, RT_TITLE, true, &title_w, NULL);
    rt_measure(&t, f.legend, RT_SMALL, false, &legend_w, NULL);
    title_w = fmax(title_w, legend_w);
    double dendro = s->show_dendrogram && s->clustered ? 70 * t.fs : 0;
    *width = ceil(fmax(20 * t.fs + lw + 8 * t.fs + c * cell + cb + 24 * t.fs, title_w + 20 * t.fs));
    *height = ceil(f.top + dendro + 20 * t.fs + c * cell + lw + 8 * t.fs);
    fig_free(&f);
    rt_end(&t);
}

static void shift(atn_rect *r, double dy) {
    if (r->w > 0 || r->h > 0)
        r->y += dy;
}

bool atn_render_similarity_layout(const atn_similarity_spec *s, double w, double h, atn_similarity_layout *out) {
    memset(out, 0, sizeof *out);
    rtext t;
    rt_begin(&t, s->style);
    sim_fig f;
    bool ok = fig_build(&t, s, w, h, true, &f);
    double fs = t.fs;
    rt_end(&t);
    if (!ok)
        return false;
    atn_heatmap_layout *L = &out->matrix;
    matrix_layout(&f, L);
    double dy = f.top + f.dendro_h;
    shift(&L->title, dy);
    shift(&L->cells, dy);
    shift(&L->overview, dy);
    shift(&L->row_labels, dy);
    shift(&L->col_labels, dy);
    shift(&L->colorbar, dy);
    out->title = (atn_rect){10 * fs, f.title_y, w - 20 * fs, f.title_h};
    out->legend = (atn_rect){f.cap_x, f.legend_y, f.cap_w, f.legend_h};
    out->title_cut = f.title_cut;
    out->legend_cut = f.legend_cut;
    out->side = f.side;
    fig_free(&f);
    return true;
}
