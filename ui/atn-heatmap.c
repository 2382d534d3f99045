/* AtnHeatmap: one attention matrix, drawn by ui/render into a cached render node.
 * Over 1,000 lines on purpose: drawing, hover, zoom and pan, and export all read and reset
 * the same cached view state; apart, most of the struct would have to be shared.  What
 * stands alone is elsewhere: pooling (atn-heatmap-pool.c), the colour scales
 * (atn-colour-scale.c) and the drag-to-crop gesture's arithmetic (atn-heatmap-crop.c); the
 * ~100 lines the crop added here are its hooks into hover, zoom and the drawn band. */
#include "atn-heatmap.h"
#include "atn-heatmap-test.h"
#include "atn-heatmap-pool.h"
#include "atn-colour-scale.h"
#include "atn-heatmap-crop.h"

#include <glib/gi18n.h>
#include <math.h>
#include <string.h>

struct _AtnHeatmap {
    GtkWidget parent_instance;

    GObject *owner;
    const float *values;
    int rows, cols;
    const char *const *row_labels;
    const char *const *col_labels;
    const int32_t *mask;
    char *title, *row_axis, *col_axis, *colorbar_label;
    atn_colormap cmap;
    atn_value_range range;
    double font_scale;
    gboolean show_colorbar;
    double min_label_scale;   /* atn_heatmap_spec's: 0 = the default rule */
    gboolean wheel_needs_ctrl; /* a plain wheel scrolls what is around (atn_heatmap_set_wheel_needs_ctrl) */
    gboolean causal;   /* cells after the diagonal are masked (a causal model's head) */
    const char *row_word, *col_word;   /* before a cell's tokens in its text ("target"), or NULL */
    const float *cell_mask;   /* [rows][cols] the run's additive mask (borrowed like values), or NULL */
    int split;                /* a pair's first token of sentence B (atn_heatmap_set_split), 0 none */
    double hfw_ratio;         /* atn_heatmap_set_height_for_width: height = width × this; 0 off */
    int hfw_max;

    int selected_row, highlight_token, hover_row, hover_col;
    int mark_row;
    char *colorbar_note;

    /* zoom: zoom >= 1 is how many times larger than the whole matrix a cell is drawn; the
     * visible block starts at (view_r0, view_c0) */
    double zoom;
    int view_r0, view_c0;
    double zoom_start;             /* a pinch's zoom when it began */
    double drag_r0, drag_c0;       /* a drag's view when it began */
    gboolean one_query;            /* the selected row as bars instead of the matrix */
    int cursor_row, cursor_col;    /* the keyboard's cell, -1 none */
    gboolean keyboard;             /* the cursor was moved by the keyboard: draw its focus ring */
    gboolean *mark_cols;   /* [cols] or NULL: all */
    gboolean marks;

    /* caches */
    cairo_surface_t *cells;       /* one pixel per cell, for the current data and colours
                                     (pooled into pool_k × pool_k blocks when pool_k > 1) */
    int pool_k;                   /* the block side cells was made for (atn-heatmap-pool.h); 0 none yet */
    int span_first, span_count;   /* a typed or dragged token span shown (atn_heatmap_show_block),
                                     which the export crops to while it is the view; 0: none */
    gboolean axis_crop;           /* dragging along an axis crops to a span (atn_heatmap_set_axis_crop) */
    AtnHeatmapCropBand band;      /* that drag's span as it goes, drawn over the figure */
    atn_pool_mode pool_mode;      /* max (default) or mean */
    float *pooled;                /* [pooled_rows][pooled_cols] the blocks' values, or NULL at k 1 */
    int pooled_rows, pooled_cols;
    char *pool_legend;            /* the sentence under the title saying what a pixel is (and the
                                     first token's share when it is left out), or NULL */
    AtnColourScaleState cscale;   /* linear, log, rank, first column left out (atn-colour-scale.h) */
    GskRenderNode *base;          /* the figure at base_w × base_h */
    int base_w, base_h;
    atn_heatmap_layout layout;    /* of base */
    atn_query_bars_layout bars;   /* of base, in one-query mode */
    gboolean have_layout;
};

G_DEFINE_FINAL_TYPE(AtnHeatmap, atn_heatmap, GTK_TYPE_WIDGET)

enum { SIGNAL_CELL_HOVERED, SIGNAL_CELL_CLICKED, SIGNAL_VIEW_CHANGED, N_SIGNALS };
static guint signals[N_SIGNALS];

static void announce(AtnHeatmap *self);
static gboolean on_key(GtkEventControllerKey *c, guint keyval, guint keycode, GdkModifierType state,
                       AtnHeatmap *self);
static gboolean on_scroll(GtkEventControllerScroll *c, double dx, double dy, AtnHeatmap *self);
static void on_zoom_begin(GtkGesture *g, GdkEventSequence *seq, AtnHeatmap *self);
static void on_zoom_scale(GtkGestureZoom *g, double scale, AtnHeatmap *self);
static void on_drag_begin(GtkGestureDrag *g, double x, double y, AtnHeatmap *self);
static void on_drag_update(GtkGestureDrag *g, double dx, double dy, AtnHeatmap *self);
static void set_hover(AtnHeatmap *self, int row, int col);
static void set_view(AtnHeatmap *self, double zoom, int r0, int c0);

static void invalidate_cells(AtnHeatmap *self) {
    g_clear_pointer(&self->cells, cairo_surface_destroy);
    g_clear_pointer(&self->pooled, g_free);
    self->pool_k = 0;
    atn_colour_scale_state_clear(&self->cscale);
    g_clear_pointer(&self->base, gsk_render_node_unref);
    self->have_layout = FALSE;
    gtk_widget_queue_draw(GTK_WIDGET(self));
}

static void invalidate_figure(AtnHeatmap *self) {
    g_clear_pointer(&self->base, gsk_render_node_unref);
    self->have_layout = FALSE;
    gtk_widget_queue_draw(GTK_WIDGET(self));
}

static void fill_spec(AtnHeatmap *self, atn_heatmap_spec *spec, const atn_render_style *style) {
    atn_heatmap_spec_init(spec);
    spec->values = self->values;
    spec->rows = self->rows;
    spec->cols = self->cols;
    spec->row_labels = self->row_labels;
    spec->col_labels = self->col_labels;
    spec->row_mask = self->mask;
    spec->col_mask = self->mask;
    spec->title = self->title;
    spec->row_axis = self->row_axis;
    spec->col_axis = self->col_axis;
    spec->colorbar_label = self->colorbar_label;
    spec->colorbar_note = self->colorbar_note;
    spec->colormap = self->cmap;
    spec->range = self->range;
    spec->show_colorbar = self->show_colorbar;
    spec->min_label_scale = self->min_label_scale;
    spec->causal = self->causal;
    spec->cell_mask = self->cell_mask;
    spec->split = self->split;
    spec->max_cell_aspect = 1.6;   /* on screen the figure fills a wide window */
    spec->legend = self->pool_legend;
    if (atn_colour_scale_state_active(&self->cscale)) {   /* log, rank, first column left out */
        atn_colour_scale_state_values(&self->cscale, self->values, self->rows, self->cols, self->causal);
        atn_colour_scale_state_fill(&self->cscale, spec, !self->range.automatic);
    }
    spec->style = style;
    int vr, vc;
    atn_heatmap_get_visible(self, &spec->view_row0, &spec->view_col0, &vr, &vc);
    spec->view_rows = vr;
    spec->view_cols = vc;
}

/* The query row the bars show: the selected one, else the cursor's, else 0. */
static int bars_row(AtnHeatmap *self) {
    if (self->selected_row >= 0 && self->selected_row < self->rows)
        return self->selected_row;
    if (self->cursor_row >= 0 && self->cursor_row < self->rows)
        return self->cursor_row;
    return 0;
}

static void fill_bars(AtnHeatmap *self, atn_query_bars_spec *b, const atn_render_style *style, double vmin,
                      double vmax) {
    atn_query_bars_spec_init(b);
    int q = bars_row(self);
    b->values = self->values + (size_t)q * self->cols;
    b->n = self->cols;
    b->labels = self->col_labels;
    b->mask = self->mask;
    b->colormap = self->cmap;
    b->range = self->range;
    b->vmin = vmin;   /* the whole matrix's range, so bars and cells share their colours */
    b->vmax = vmax;
    b->value_axis = self->colorbar_label;
    b->key_axis = self->col_axis;
    int r0, c0, vr, vc;
    atn_heatmap_get_visible(self, &r0, &c0, &vr, &vc);
    b->view_col0 = c0;
    b->view_cols = vc;
    b->hover_col = self->hover_col;
    b->style = style;
}

/* The cells image for this size and zoom: one pixel per cell, or, when the visible block
 * has more cells than pixels, every cell in the colour of its pool_k × pool_k block's max or
 * mean (atn-heatmap-pool.h), said in the legend under the title. */
static void ensure_cells(AtnHeatmap *self, atn_heatmap_spec *spec, int w, int h) {
    int k = 1;
    if (!self->one_query) {
        atn_heatmap_layout L;
        spec->legend = NULL;
        atn_render_heatmap_layout(spec, w, h, &L);
        k = MAX(atn_pool_factor(L.view_rows, L.cells.h), atn_pool_factor(L.view_cols, L.cells.w));
        if (k > 1 || self->cscale.legend) {   /* the legend takes a line: measure again with it */
            spec->legend = "-";
            atn_render_heatmap_layout(spec, w, h, &L);
            k = MAX(k, MAX(atn_pool_factor(L.view_rows, L.cells.h), atn_pool_factor(L.view_cols, L.cells.w)));
        }
    }
    if (self->cells && k == self->pool_k)
        return;
    g_clear_pointer(&self->cells, cairo_surface_destroy);
    g_clear_pointer(&self->pooled, g_free);
    g_clear_pointer(&self->pool_legend, g_free);
    self->pool_k = k;
    const float *dv = spec->values;   /* the values coloured: the weights, or their log / rank */
    double vmin, vmax;
    atn_value_range_resolve(&spec->range, dv, self->rows, self->cols, self->cols, self->cmap, &vmin, &vmax);
    if (k == 1) {
        self->cells = atn_render_matrix_surface(dv, self->rows, self->cols, self->cols, self->cmap, vmin, vmax, NULL);
        self->pool_legend = g_strdup(self->cscale.legend);
        return;
    }
    self->pooled = atn_pool_blocks(dv, self->rows, self->cols, k, self->pool_mode, self->causal, self->cell_mask,
                                   &self->pooled_rows, &self->pooled_cols);
    self->cells = atn_pool_surface(self->pooled, self->rows, self->cols, k, self->cmap, vmin, vmax);
    g_autofree char *pool = self->pool_mode == ATN_POOL_MAX
                            /* Translators: under the Head view's title when there are more tokens than pixels */
                            ? g_strdup_printf(_("Each pixel: the largest weight of %d×%d tokens · zoom in for single cells"), k, k)
                            /* Translators: the same with the mean of each block */
                            : g_strdup_printf(_("Each pixel: the mean weight of %d×%d tokens · zoom in for single cells"), k, k);
    self->pool_legend = self->cscale.legend ? g_strdup_printf("%s · %s", pool, self->cscale.legend) : g_steal_pointer(&pool);
}

static void ensure_base(AtnHeatmap *self, int w, int h) {
    if (self->base && self->base_w == w && self->base_h == h)
        return;
    g_clear_pointer(&self->base, gsk_render_node_unref);
    self->base_w = w;
    self->base_h = h;
    atn_render_style style;
    atn_render_style_for_widget(GTK_WIDGET(self), self->font_scale, &style);
    atn_heatmap_spec spec;
    fill_spec(self, &spec, &style);
    ensure_cells(self, &spec, w, h);   /* pooled when the visible block has more cells than pixels */
    spec.cells = self->cells;
    spec.legend = self->pool_legend;
    atn_render_heatmap_layout(&spec, w, h, &self->layout);
    self->have_layout = TRUE;
    GtkSnapshot *s = gtk_snapshot_new();
    cairo_t *cr = gtk_snapshot_append_cairo(s, &GRAPHENE_RECT_INIT(0, 0, w, h));
    if (self->one_query) {
        atn_query_bars_spec b;
        fill_bars(self, &b, &style, self->layout.vmin, self->layout.vmax);
        b.hover_col = -1;   /* hovering is drawn on top */
        int q = bars_row(self);
        g_autofree char *bt = g_strdup_printf(_("%s · query %d “%s”"), self->title ? self->title : "", q,
                                              self->row_labels ? self->row_labels[q] : "");
        b.title = bt;
        atn_render_query_bars_layout(&b, w, h, &self->bars);
        atn_render_query_bars(cr, &b, w, h);
    } else {
        atn_render_heatmap_laid_out(cr, &spec, w, h, &self->layout);
    }
    cairo_destroy(cr);
    self->base = gtk_snapshot_free_to_node(s);
}

/* The rectangle of a block of cells, clipped to the visible block; FALSE when none of it
 * shows (or in one-query mode, where there are no cells). */
static gboolean cell_rect(AtnHeatmap *self, int r0, int c0, int nr, int nc, graphene_rect_t *out) {
    if (!self->have_layout || self->one_query || r0 < 0 || c0 < 0 || r0 + nr > self->rows || c0 + nc > self->cols)
        return FALSE;
    const atn_heatmap_layout *L = &self->layout;
    int vr0 = L->view_row0, vc0 = L->view_col0, vr1 = vr0 + L->view_rows, vc1 = vc0 + L->view_cols;
    int a0 = MAX(r0, vr0), a1 = MIN(r0 + nr, vr1), b0 = MAX(c0, vc0), b1 = MIN(c0 + nc, vc1);
    if (a0 >= a1 || b0 >= b1)
        return FALSE;
    graphene_rect_init(out, L->cells.x + (b0 - vc0) * L->cell_w, L->cells.y + (a0 - vr0) * L->cell_h,
                       (b1 - b0) * L->cell_w, (a1 - a0) * L->cell_h);
    return TRUE;
}

/* The column of key col's bar over the plot's height (one-query mode). */
static gboolean bar_rect(AtnHeatmap *self, int col, graphene_rect_t *out) {
    const atn_query_bars_layout *B = &self->bars;
    if (!self->have_layout || !self->one_query || col < B->view_col0 || col >= B->view_col0 + B->view_cols)
        return FALSE;
    graphene_rect_init(out, B->plot.x + (col - B->view_col0) * B->bar_w, B->plot.y, MAX(B->bar_w, 1), B->plot.h);
    return TRUE;
}

static void outline(GtkSnapshot *s, const graphene_rect_t *r, float width, const GdkRGBA *color) {
    GskRoundedRect rr;
    gsk_rounded_rect_init_from_rect(&rr, r, 0);
    float w[4] = {width, width, width, width};
    GdkRGBA c[4] = {*color, *color, *color, *color};
    gtk_snapshot_append_border(s, &rr, w, c);
}

static void atn_heatmap_snapshot(GtkWidget *widget, GtkSnapshot *s) {
    AtnHeatmap *self = ATN_HEATMAP(widget);
    int w = gtk_widget_get_width(widget), h = gtk_widget_get_height(widget);
    if (!self->values || w <= 0 || h <= 0)
        return;
    ensure_base(self, w, h);
    gtk_snapshot_append_node(s, self->base);

    static const GdkRGBA accent = {0.21f, 0.52f, 0.89f, 1.0f};
    static const GdkRGBA accent_soft = {0.21f, 0.52f, 0.89f, 0.75f};
    static const GdkRGBA mark = {1.0f, 0.47f, 0.0f, 1.0f};
    static const GdkRGBA white = {1, 1, 1, 1}, black = {0, 0, 0, 1};
    graphene_rect_t r;
    if (self->highlight_token >= 0) {
        if (cell_rect(self, self->highlight_token, 0, 1, self->cols, &r))
            outline(s, &r, 1.5f, &accent_soft);
        if (cell_rect(self, 0, self->highlight_token, self->rows, 1, &r))
            outline(s, &r, 1.5f, &accent_soft);
    }
    if (self->selected_row >= 0 && cell_rect(self, self->selected_row, 0, 1, self->cols, &r))
        outline(s, &r, 2.5f, &accent);
    if (self->marks) {
        for (int j = 0; j < self->cols; j++) {
            if (self->mark_cols && !self->mark_cols[j])
                continue;
            if (self->mark_row >= 0) {
                if (cell_rect(self, self->mark_row, j, 1, 1, &r))
                    outline(s, &r, 2.5f, &mark);
            } else if (cell_rect(self, 0, j, self->rows, 1, &r)) {
                outline(s, &r, 2.5f, &mark);
            }
        }
    }
    if (self->hover_row >= 0 && cell_rect(self, self->hover_row, self->hover_col, 1, 1, &r)) {
        outline(s, &r, 2, &black);
        graphene_rect_inset(&r, 2, 2);
        if (r.size.width > 2 && r.size.height > 2)
            outline(s, &r, 1, &white);
    }
    /* the keyboard's cell: a focus ring a little outside the cell, in the accent colour */
    if (self->keyboard && gtk_widget_has_focus(widget) && self->cursor_row >= 0) {
        gboolean ok = self->one_query ? bar_rect(self, self->cursor_col, &r)
                                      : cell_rect(self, self->cursor_row, self->cursor_col, 1, 1, &r);
        if (ok) {
            graphene_rect_inset(&r, -3, -3);
            outline(s, &r, 2.5f, &accent);
        }
    }
    if (self->one_query && self->hover_col >= 0 && bar_rect(self, self->hover_col, &r)) {
        outline(s, &r, 2, &accent);
    }
    /* the hovered row and column named at the edges (cheap: two labels) */
    if ((self->hover_row >= 0 || self->hover_col >= 0) && !self->one_query && self->band.count <= 0) {
        atn_render_style style;
        atn_render_style_for_widget(widget, self->font_scale, &style);
        style.transparent = FALSE;
        atn_heatmap_spec spec;
        fill_spec(self, &spec, &style);
        spec.hover_row = self->hover_row;
        spec.hover_col = self->hover_col;
        spec.cells = self->cells;
        cairo_t *cr = gtk_snapshot_append_cairo(s, &GRAPHENE_RECT_INIT(0, 0, w, h));
        atn_render_heatmap_hover_labels(cr, &spec, w, h, &self->layout);
        cairo_destroy(cr);
    }
    if (self->band.count > 0 && self->have_layout && !self->one_query)   /* an axis being dragged */
        atn_heatmap_crop_snapshot(widget, s, &self->layout, &self->band);
}

static void atn_heatmap_measure(GtkWidget *widget, GtkOrientation orientation, int for_size, int *minimum,
                                int *natural, int *minimum_baseline, int *natural_baseline) {
    AtnHeatmap *self = ATN_HEATMAP(widget);
    *minimum = 160;
    *natural = 480;
    if (self->hfw_ratio > 0 && orientation == GTK_ORIENTATION_VERTICAL && for_size > 0)
        *minimum = *natural = CLAMP((int)(for_size * self->hfw_ratio), 160, MAX(160, self->hfw_max));
}

static GtkSizeRequestMode atn_heatmap_get_request_mode(GtkWidget *widget) {
    return ATN_HEATMAP(widget)->hfw_ratio > 0 ? GTK_SIZE_REQUEST_HEIGHT_FOR_WIDTH : GTK_SIZE_REQUEST_CONSTANT_SIZE;
}

void atn_heatmap_set_height_for_width(AtnHeatmap *self, double ratio, int max_height) {
    g_return_if_fail(ATN_IS_HEATMAP(self));
    self->hfw_ratio = ratio > 0 ? ratio : 0;
    self->hfw_max = max_height;
    gtk_widget_queue_resize(GTK_WIDGET(self));
}

static void atn_heatmap_size_allocate(GtkWidget *widget, int width, int height, int baseline) {
    AtnHeatmap *self = ATN_HEATMAP(widget);
    if (width != self->base_w || height != self->base_h)
        invalidate_figure(self);
}

static void atn_heatmap_css_changed(GtkWidget *widget, GtkCssStyleChange *change) {
    GTK_WIDGET_CLASS(atn_heatmap_parent_class)->css_changed(widget, change);
    invalidate_figure(ATN_HEATMAP(widget));   /* light/dark switch: text colour */
}

/* The same in fewer words, every number kept: for a status line with little room. */
/* A cell's token as its text names it: "▁c", or "source ▁c" with a word. */
static char *cell_label(const char *word, const char *const *labels, int i) {
    if (!labels)
        return g_strdup_printf("%d", i);
    return word ? g_strdup_printf("%s %s", word, labels[i]) : g_strdup(labels[i]);
}

int atn_heatmap_get_selected_row(AtnHeatmap *self) { return ATN_IS_HEATMAP(self) ? self->selected_row : -1; }
int atn_heatmap_get_highlight_token(AtnHeatmap *self) { return ATN_IS_HEATMAP(self) ? self->highlight_token : -1; }

void atn_heatmap_set_cell_words(AtnHeatmap *self, const char *row_word, const char *col_word) {
    g_return_if_fail(ATN_IS_HEATMAP(self));
    self->row_word = row_word;
    self->col_word = col_word;
}

char *atn_heatmap_dup_cell_text_short(AtnHeatmap *self, int row, int col) {
    g_return_val_if_fail(ATN_IS_HEATMAP(self), NULL);
    if (!self->values || row < 0 || col < 0 || row >= self->rows || col >= self->cols)
        return NULL;
    g_autofree char *rl = cell_label(self->row_word, self->row_labels, row);
    g_autofree char *cl = cell_label(self->col_word, self->col_labels, col);
    if ((self->cell_mask && self->cell_mask[(size_t)row * self->cols + col] < -1e30f) || (self->causal && col > row))
        /* Translators: a masked heatmap cell in few words (a narrow window's status line) */
        return g_strdup_printf(_("%s %d → %s %d: masked"), rl, row, cl, col);
    /* Translators: a heatmap cell in few words: query token and index → key token and index: weight */
    return g_strdup_printf(_("%s %d → %s %d: %.4f"), rl, row, cl, col,
                           (double)self->values[(size_t)row * self->cols + col]);
}

char *atn_heatmap_dup_cell_text(AtnHeatmap *self, int row, int col) {
    g_return_val_if_fail(ATN_IS_HEATMAP(self), NULL);
    if (!self->values || row < 0 || col < 0 || row >= self->rows || col >= self->cols)
        return NULL;
    g_autofree char *rl = cell_label(self->row_word, self->row_labels, row);
    g_autofree char *cl = cell_label(self->col_word, self->col_labels, col);
    if (self->cell_mask && self->cell_mask[(size_t)row * self->cols + col] < -1e30f && !(self->causal && col > row))
        /* Translators: the tooltip of a cell the run's mask hid (a what-if window, stride, hidden key, padding) */
        return g_strdup_printf(_("%s (%d) → %s (%d): masked (the mask hides this key from this query)"), rl, row,
                               cl, col);
    if (self->causal && col > row)
        /* Translators: the tooltip of a masked cell of a causal model (GPT-2): the key comes after the query */
        return g_strdup_printf(_("%s (%d) → %s (%d): masked (a later token: the model cannot see it)"), rl, row, cl,
                               col);
    /* Translators: the tooltip of a heatmap cell: query token → key token: weight */
    char *text = g_strdup_printf(_("%s (%d) → %s (%d): %.4f"), rl, row, cl, col, (double)self->values[(size_t)row * self->cols + col]);
    int k = self->pool_k;
    if (k > 1) {   /* a pooled overview: the pixel shows the block, so name it and its value */
        int a = row / k * k, b = col / k * k;
        double v = atn_pool_block_value(self->values, self->rows, self->cols, k, self->pool_mode, self->causal,
                                        self->cell_mask, row, col);
        char *more = self->pool_mode == ATN_POOL_MAX
                         /* Translators: added to a cell's tooltip in a pooled overview: the block of queries × keys its pixel shows */
                         ? g_strdup_printf(_("%s · block %d–%d × %d–%d: largest %.4f"), text, a, MIN(self->rows, a + k) - 1,
                                           b, MIN(self->cols, b + k) - 1, v)
                         /* Translators: the same with the block's mean */
                         : g_strdup_printf(_("%s · block %d–%d × %d–%d: mean %.4f"), text, a, MIN(self->rows, a + k) - 1,
                                           b, MIN(self->cols, b + k) - 1, v);
        g_free(text);
        text = more;
    }
    return text;
}

static void set_hover(AtnHeatmap *self, int row, int col) {
    if (row == self->hover_row && col == self->hover_col)
        return;
    self->hover_row = row;
    self->hover_col = col;
    gtk_widget_queue_draw(GTK_WIDGET(self));
    g_signal_emit(self, signals[SIGNAL_CELL_HOVERED], 0, row, col);
}

char *atn_heatmap_hover(AtnHeatmap *self, double x, double y) {
    g_return_val_if_fail(ATN_IS_HEATMAP(self), NULL);
    int row, col;
    atn_heatmap_cell_at(self, x, y, &row, &col);
    set_hover(self, row, col);
    return atn_heatmap_dup_cell_text(self, row, col);
}

static void on_motion(GtkEventControllerMotion *c, double x, double y, AtnHeatmap *self) {
    int row, col;
    atn_heatmap_cell_at(self, x, y, &row, &col);
    set_hover(self, row, col);
}

static void on_leave(GtkEventControllerMotion *c, AtnHeatmap *self) { set_hover(self, -1, -1); }

static void on_pressed(GtkGestureClick *g, int n_press, double x, double y, AtnHeatmap *self) {
    atn_heatmap_press(self, n_press, x, y);
}

void atn_heatmap_press(AtnHeatmap *self, int n_press, double x, double y) {
    int row, col;
    gtk_widget_grab_focus(GTK_WIDGET(self));
    self->keyboard = FALSE;
    /* a double click on an axis (where a drag crops) gives the whole input back */
    if (n_press == 2 && self->axis_crop && self->have_layout && !self->one_query &&
        atn_heatmap_crop_axis_at(&self->layout, x, y) != ATN_CROP_AXIS_NONE) {
        atn_heatmap_reset_zoom(self);
        return;
    }
    /* a click in the overview centres the view there */
    const atn_rect *o = &self->layout.overview;
    if (self->have_layout && !self->one_query && o->w > 0 && x >= o->x && x < o->x + o->w && y >= o->y &&
        y < o->y + o->h) {
        int nr, nc;
        atn_heatmap_get_visible(self, NULL, NULL, &nr, &nc);
        int r = (int)((y - o->y) / o->h * self->rows), c = (int)((x - o->x) / o->w * self->cols);
        set_view(self, self->zoom, r - nr / 2, c - nc / 2);
        return;
    }
    if (atn_heatmap_cell_at(self, x, y, &row, &col)) {
        self->cursor_row = row;
        self->cursor_col = col;
        announce(self);
        if (!self->one_query)   /* a click on a bar keeps the query */
            g_signal_emit(self, signals[SIGNAL_CELL_CLICKED], 0, row, col);
    }
}

static gboolean on_query_tooltip(GtkWidget *widget, int x, int y, gboolean keyboard, GtkTooltip *tooltip,
                                 gpointer data) {
    AtnHeatmap *self = ATN_HEATMAP(widget);
    int row, col;
    if (!atn_heatmap_cell_at(self, x, y, &row, &col))
        return FALSE;
    g_autofree char *text = atn_heatmap_dup_cell_text(self, row, col);
    gtk_tooltip_set_text(tooltip, text);
    return TRUE;
}

static void atn_heatmap_dispose(GObject *object) {
    AtnHeatmap *self = ATN_HEATMAP(object);
    g_clear_object(&self->owner);
    g_clear_pointer(&self->cells, cairo_surface_destroy);
    g_clear_pointer(&self->pooled, g_free);
    atn_colour_scale_state_clear(&self->cscale);
    g_clear_pointer(&self->base, gsk_render_node_unref);
    G_OBJECT_CLASS(atn_heatmap_parent_class)->dispose(object);
}

static void atn_heatmap_finalize(GObject *object) {
    AtnHeatmap *self = ATN_HEATMAP(object);
    g_free(self->title);
    g_free(self->row_axis);
    g_free(self->col_axis);
    g_free(self->colorbar_label);
    g_free(self->colorbar_note);
    g_free(self->mark_cols);
    g_free(self->pool_legend);
    G_OBJECT_CLASS(atn_heatmap_parent_class)->finalize(object);
}

static void atn_heatmap_class_init(AtnHeatmapClass *klass) {
    GObjectClass *object_class = G_OBJECT_CLASS(klass);
    GtkWidgetClass *widget_class = GTK_WIDGET_CLASS(klass);
    object_class->dispose = atn_heatmap_dispose;
    object_class->finalize = atn_heatmap_finalize;
    widget_class->snapshot = atn_heatmap_snapshot;
    widget_class->measure = atn_heatmap_measure;
    widget_class->get_request_mode = atn_heatmap_get_request_mode;
    widget_class->size_allocate = atn_heatmap_size_allocate;
    widget_class->css_changed = atn_heatmap_css_changed;
    gtk_widget_class_set_css_name(widget_class, "heatmap");
    gtk_widget_class_set_accessible_role(widget_class, GTK_ACCESSIBLE_ROLE_IMG);   /* a figure for screen readers */
    /* The pointer moved to another cell (-1, -1 when it left the matrix). */
    signals[SIGNAL_CELL_HOVERED] = g_signal_new("cell-hovered", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL,
                                                NULL, NULL, G_TYPE_NONE, 2, G_TYPE_INT, G_TYPE_INT);
    /* The zoom or the visible block changed. */
    signals[SIGNAL_VIEW_CHANGED] = g_signal_new("view-changed", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL,
                                                NULL, NULL, G_TYPE_NONE, 0);
    /* A cell was clicked. */
    signals[SIGNAL_CELL_CLICKED] = g_signal_new("cell-clicked", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL,
                                                NULL, NULL, G_TYPE_NONE, 2, G_TYPE_INT, G_TYPE_INT);
}

static void atn_heatmap_init(AtnHeatmap *self) {
    self->cmap = ATN_CMAP_VIRIDIS;
    self->range.automatic = TRUE;
    self->font_scale = 1.0;
    self->show_colorbar = TRUE;
    self->selected_row = self->highlight_token = self->hover_row = self->hover_col = -1;
    self->mark_row = -1;
    self->zoom = 1.0;
    self->cursor_row = self->cursor_col = -1;
    self->row_axis = g_strdup(_("query"));
    self->col_axis = g_strdup(_("key"));
    self->colorbar_label = g_strdup(_("weight"));
    gtk_widget_set_focusable(GTK_WIDGET(self), TRUE);
    gtk_widget_set_hexpand(GTK_WIDGET(self), TRUE);
    gtk_widget_set_vexpand(GTK_WIDGET(self), TRUE);
    gtk_widget_set_has_tooltip(GTK_WIDGET(self), TRUE);
    g_signal_connect(self, "query-tooltip", G_CALLBACK(on_query_tooltip), NULL);

    GtkEventController *motion = gtk_event_controller_motion_new();
    g_signal_connect(motion, "motion", G_CALLBACK(on_motion), self);
    g_signal_connect(motion, "leave", G_CALLBACK(on_leave), self);
    gtk_widget_add_controller(GTK_WIDGET(self), motion);
    GtkGesture *click = gtk_gesture_click_new();
    g_signal_connect(click, "pressed", G_CALLBACK(on_pressed), self);
    gtk_widget_add_controller(GTK_WIDGET(self), GTK_EVENT_CONTROLLER(click));
    GtkEventController *keys = gtk_event_controller_key_new();
    g_signal_connect(keys, "key-pressed", G_CALLBACK(on_key), self);
    gtk_widget_add_controller(GTK_WIDGET(self), keys);
    GtkEventController *scroll = gtk_event_controller_scroll_new(GTK_EVENT_CONTROLLER_SCROLL_BOTH_AXES);
    g_signal_connect(scroll, "scroll", G_CALLBACK(on_scroll), self);
    gtk_widget_add_controller(GTK_WIDGET(self), scroll);
    GtkGesture *zoom = gtk_gesture_zoom_new();
    g_signal_connect(zoom, "begin", G_CALLBACK(on_zoom_begin), self);
    g_signal_connect(zoom, "scale-changed", G_CALLBACK(on_zoom_scale), self);
    gtk_widget_add_controller(GTK_WIDGET(self), GTK_EVENT_CONTROLLER(zoom));
    GtkGesture *drag = gtk_gesture_drag_new();
    g_signal_connect(drag, "drag-begin", G_CALLBACK(on_drag_begin), self);
    g_signal_connect(drag, "drag-update", G_CALLBACK(on_drag_update), self);
    gtk_widget_add_controller(GTK_WIDGET(self), GTK_EVENT_CONTROLLER(drag));
}

GtkWidget *atn_heatmap_new(void) { return g_object_new(ATN_TYPE_HEATMAP, NULL); }

void atn_heatmap_set_causal(AtnHeatmap *self, gboolean causal) {
    g_return_if_fail(ATN_IS_HEATMAP(self));
    if (!causal == !self->causal)
        return;
    self->causal = causal;
    if (self->pool_k > 1)   /* the blocks leave out other cells */
        invalidate_cells(self);
    else
        invalidate_figure(self);
}

void atn_heatmap_set_cell_mask(AtnHeatmap *self, const float *mask) {
    g_return_if_fail(ATN_IS_HEATMAP(self));
    if (mask == self->cell_mask)
        return;
    self->cell_mask = mask;
    if (self->pool_k > 1)   /* the blocks leave out other cells */
        invalidate_cells(self);
    else
        invalidate_figure(self);
}

void atn_heatmap_set_split(AtnHeatmap *self, int split) {
    g_return_if_fail(ATN_IS_HEATMAP(self));
    if (split == self->split)
        return;
    self->split = split;
    invalidate_figure(self);
}

int atn_heatmap_get_split(AtnHeatmap *self) {
    g_return_val_if_fail(ATN_IS_HEATMAP(self), 0);
    return self->split;
}

gboolean atn_heatmap_get_causal(AtnHeatmap *self) {
    g_return_val_if_fail(ATN_IS_HEATMAP(self), FALSE);
    return self->causal;
}

void atn_heatmap_set_matrix(AtnHeatmap *self, GObject *owner, const float *values, int rows, int cols,
                            const char *const *row_labels, const char *const *col_labels, const int32_t *mask) {
    g_return_if_fail(ATN_IS_HEATMAP(self));
    if (owner)
        g_object_ref(owner);
    g_clear_object(&self->owner);
    self->owner = owner;
    int new_rows = values ? rows : 0, new_cols = values ? cols : 0;
    gboolean reset = (new_rows != self->rows || new_cols != self->cols) &&
                     (self->zoom != 1.0 || self->view_r0 || self->view_c0 || self->span_count);
    if (new_rows != self->rows || new_cols != self->cols) {   /* another input: the whole matrix again */
        self->zoom = 1.0;
        self->view_r0 = self->view_c0 = 0;
        self->span_count = 0;
        self->cursor_row = self->cursor_col = -1;
        self->band.count = 0;
    }
    self->values = values;
    self->rows = new_rows;
    self->cols = new_cols;
    self->row_labels = row_labels;
    self->col_labels = col_labels;
    self->mask = mask;
    self->cell_mask = NULL;   /* it belonged to the matrix before: the caller sets this one's */
    self->split = 0;          /* likewise */
    if (self->selected_row >= self->rows)
        self->selected_row = -1;
    if (self->hover_row >= self->rows || self->hover_col >= self->cols)
        self->hover_row = self->hover_col = -1;
    if (self->highlight_token >= MIN(self->rows, self->cols))
        self->highlight_token = -1;
    g_clear_pointer(&self->mark_cols, g_free);
    self->marks = FALSE;
    invalidate_cells(self);
    if (reset)   /* the zoom label and the span box follow */
        g_signal_emit(self, signals[SIGNAL_VIEW_CHANGED], 0);
}

void atn_heatmap_set_colormap(AtnHeatmap *self, atn_colormap cm) {
    g_return_if_fail(ATN_IS_HEATMAP(self));
    if (cm == self->cmap)
        return;
    self->cmap = cm;
    invalidate_cells(self);
}

atn_colormap atn_heatmap_get_colormap(AtnHeatmap *self) { return self->cmap; }

void atn_heatmap_set_range(AtnHeatmap *self, const atn_value_range *range) {
    g_return_if_fail(ATN_IS_HEATMAP(self));
    if (range)
        self->range = *range;
    else {
        self->range.automatic = TRUE;
        self->range.vmin = self->range.vmax = 0;
    }
    invalidate_cells(self);
}

static void replace_string(AtnHeatmap *self, char **field, const char *value) {
    if (g_strcmp0(*field, value) == 0)
        return;
    g_free(*field);
    *field = g_strdup(value);
    invalidate_figure(self);
}

const char *atn_heatmap_get_colorbar_label(AtnHeatmap *self) {
    g_return_val_if_fail(ATN_IS_HEATMAP(self), NULL);
    return self->colorbar_label;
}

const char *atn_heatmap_get_title(AtnHeatmap *self) {
    g_return_val_if_fail(ATN_IS_HEATMAP(self), NULL);
    return self->title;
}

void atn_heatmap_set_title(AtnHeatmap *self, const char *title) {
    g_return_if_fail(ATN_IS_HEATMAP(self));
    replace_string(self, &self->title, title);
    gtk_accessible_update_property(GTK_ACCESSIBLE(self), GTK_ACCESSIBLE_PROPERTY_LABEL, title ? title : "", -1);
}

void atn_heatmap_set_axes(AtnHeatmap *self, const char *row_axis, const char *col_axis, const char *colorbar_label) {
    g_return_if_fail(ATN_IS_HEATMAP(self));
    replace_string(self, &self->row_axis, row_axis);
    replace_string(self, &self->col_axis, col_axis);
    replace_string(self, &self->colorbar_label, colorbar_label);
}

void atn_heatmap_set_font_scale(AtnHeatmap *self, double scale) {
    g_return_if_fail(ATN_IS_HEATMAP(self));
    if (scale == self->font_scale)
        return;
    self->font_scale = scale;
    invalidate_figure(self);
}

void atn_heatmap_set_show_colorbar(AtnHeatmap *self, gboolean show) {
    g_return_if_fail(ATN_IS_HEATMAP(self));
    if (show == self->show_colorbar)
        return;
    self->show_colorbar = show;
    invalidate_figure(self);
}

void atn_heatmap_set_wheel_needs_ctrl(AtnHeatmap *self, gboolean needs_ctrl) {
    g_return_if_fail(ATN_IS_HEATMAP(self));
    self->wheel_needs_ctrl = needs_ctrl;
}

void atn_heatmap_set_min_label_scale(AtnHeatmap *self, double scale) {
    g_return_if_fail(ATN_IS_HEATMAP(self));
    scale = CLAMP(scale, 0.0, 1.0);
    if (scale == self->min_label_scale)
        return;
    self->min_label_scale = scale;
    invalidate_figure(self);
}

void atn_heatmap_set_selected_row(AtnHeatmap *self, int row) {
    g_return_if_fail(ATN_IS_HEATMAP(self));
    if (row >= self->rows)
        row = -1;
    if (row == self->selected_row)
        return;
    self->selected_row = row;
    if (self->one_query)
        invalidate_figure(self);   /* another row's bars */
    gtk_widget_queue_draw(GTK_WIDGET(self));
}

void atn_heatmap_set_highlight_token(AtnHeatmap *self, int token) {
    g_return_if_fail(ATN_IS_HEATMAP(self));
    if (token >= MIN(self->rows, self->cols))
        token = -1;
    if (token == self->highlight_token)
        return;
    self->highlight_token = token;
    gtk_widget_queue_draw(GTK_WIDGET(self));
}

void atn_heatmap_set_marks(AtnHeatmap *self, int row, const gboolean *cols, int n_cols) {
    g_return_if_fail(ATN_IS_HEATMAP(self));
    g_clear_pointer(&self->mark_cols, g_free);
    self->marks = row >= 0 || cols != NULL;
    self->mark_row = row;
    if (cols && n_cols == self->cols)
        self->mark_cols = g_memdup2(cols, sizeof(gboolean) * n_cols);
    gtk_widget_queue_draw(GTK_WIDGET(self));
}


static void ensure_layout(AtnHeatmap *self) {
    if (self->have_layout || !self->values)
        return;
    int w = gtk_widget_get_width(GTK_WIDGET(self)), h = gtk_widget_get_height(GTK_WIDGET(self));
    if (w > 0 && h > 0)
        ensure_base(self, w, h);
}

gboolean atn_heatmap_cell_at(AtnHeatmap *self, double x, double y, int *row, int *col) {
    g_return_val_if_fail(ATN_IS_HEATMAP(self), FALSE);
    *row = *col = -1;
    if (!self->values)
        return FALSE;
    ensure_layout(self);
    if (!self->have_layout)
        return FALSE;
    if (self->one_query) {
        const atn_query_bars_layout *B = &self->bars;
        if (B->bar_w <= 0 || y < B->plot.y || y > B->labels.y + B->labels.h)
            return FALSE;
        int c = (int)floor((x - B->plot.x) / B->bar_w);
        if (x < B->plot.x || c >= B->view_cols)
            return FALSE;
        *row = bars_row(self);
        *col = B->view_col0 + c;
        return TRUE;
    }
    const atn_heatmap_layout *L = &self->layout;
    if (x < L->cells.x || y < L->cells.y || L->cell_w <= 0 || L->cell_h <= 0)
        return FALSE;
    int c = (int)floor((x - L->cells.x) / L->cell_w), r = (int)floor((y - L->cells.y) / L->cell_h);
    if (r < 0 || c < 0 || r >= L->view_rows || c >= L->view_cols)
        return FALSE;
    *row = L->view_row0 + r;
    *col = L->view_col0 + c;
    return TRUE;
}

gboolean atn_heatmap_get_cell_rect(AtnHeatmap *self, int row, int col, graphene_rect_t *rect) {
    g_return_val_if_fail(ATN_IS_HEATMAP(self), FALSE);
    ensure_layout(self);
    return cell_rect(self, row, col, 1, 1, rect);
}

/* ---- zoom, pan, one query, keyboard ---------------------------------------------------- */

/* The most a cell is enlarged: until two tokens fill the view (a 4,096-token crop to 10 of
 * them is shown exactly, as the export writes it). */
static double zoom_max(AtnHeatmap *self) { return MAX(1.0, MAX(self->rows, self->cols) / 2.0); }

static int vis_count(int n, double zoom) {
    int v = (int)ceil(n / zoom);
    return v < 1 ? 1 : v > n ? n : v;
}

void atn_heatmap_get_visible(AtnHeatmap *self, int *row0, int *col0, int *rows, int *cols) {
    g_return_if_fail(ATN_IS_HEATMAP(self));
    int nr = vis_count(self->rows, self->zoom), nc = vis_count(self->cols, self->zoom);
    int r0 = CLAMP(self->view_r0, 0, MAX(0, self->rows - nr)), c0 = CLAMP(self->view_c0, 0, MAX(0, self->cols - nc));
    if (row0)
        *row0 = r0;
    if (col0)
        *col0 = c0;
    if (rows)
        *rows = nr;
    if (cols)
        *cols = nc;
}

double atn_heatmap_get_zoom(AtnHeatmap *self) {
    g_return_val_if_fail(ATN_IS_HEATMAP(self), 1);
    return self->zoom;
}

/* The view; a span (atn_heatmap_show_block's, count 0: none) is set before "view-changed" is
 * emitted, so its handlers read the new one. */
static void set_view_span(AtnHeatmap *self, double zoom, int r0, int c0, int span_first, int span_count) {
    gboolean span_changed = span_count != self->span_count || (span_count && span_first != self->span_first);
    self->span_first = span_first;
    self->span_count = span_count;
    zoom = CLAMP(zoom, 1.0, zoom_max(self));
    int nr = vis_count(self->rows, zoom), nc = vis_count(self->cols, zoom);
    r0 = CLAMP(r0, 0, MAX(0, self->rows - nr));
    c0 = CLAMP(c0, 0, MAX(0, self->cols - nc));
    if (zoom == self->zoom && r0 == self->view_r0 && c0 == self->view_c0) {
        if (span_changed)
            g_signal_emit(self, signals[SIGNAL_VIEW_CHANGED], 0);
        return;
    }
    self->zoom = zoom;
    self->view_r0 = r0;
    self->view_c0 = c0;
    invalidate_figure(self);
    g_signal_emit(self, signals[SIGNAL_VIEW_CHANGED], 0);
}

/* Any other change of view ends a span. */
static void set_view(AtnHeatmap *self, double zoom, int r0, int c0) { set_view_span(self, zoom, r0, c0, 0, 0); }

/* Zooms by factor keeping the cell under the widget point (x, y) where it is (the centre
 * of the visible block when x < 0). */
void atn_heatmap_zoom_at(AtnHeatmap *self, double factor, double x, double y) {
    g_return_if_fail(ATN_IS_HEATMAP(self));
    if (!self->values || !(factor > 0))
        return;
    ensure_layout(self);
    int r0, c0, nr, nc;
    atn_heatmap_get_visible(self, &r0, &c0, &nr, &nc);
    /* the point as a fraction of the visible block and as a (fractional) cell */
    double fx = 0.5, fy = 0.5;
    if (x >= 0 && self->have_layout && !self->one_query && self->layout.cells.w > 0) {
        fx = CLAMP((x - self->layout.cells.x) / self->layout.cells.w, 0, 1);
        fy = CLAMP((y - self->layout.cells.y) / self->layout.cells.h, 0, 1);
    } else if (x >= 0 && self->have_layout && self->one_query && self->bars.plot.w > 0) {
        fx = CLAMP((x - self->bars.plot.x) / self->bars.plot.w, 0, 1);
    }
    double cr = r0 + fy * nr, cc = c0 + fx * nc;
    double z = self->zoom * factor;
    z = CLAMP(z, 1.0, zoom_max(self));
    int nr2 = vis_count(self->rows, z), nc2 = vis_count(self->cols, z);
    set_view(self, z, (int)lround(cr - fy * nr2), (int)lround(cc - fx * nc2));
}

void atn_heatmap_reset_zoom(AtnHeatmap *self) {
    g_return_if_fail(ATN_IS_HEATMAP(self));
    set_view(self, 1.0, 0, 0);
}

void atn_heatmap_pan(AtnHeatmap *self, int drows, int dcols) {
    g_return_if_fail(ATN_IS_HEATMAP(self));
    int r0, c0;
    atn_heatmap_get_visible(self, &r0, &c0, NULL, NULL);
    set_view(self, self->zoom, r0 + drows, c0 + dcols);
}

/* Pans just enough that (row, col) is visible. */
static void scroll_to(AtnHeatmap *self, int row, int col) {
    int r0, c0, nr, nc;
    atn_heatmap_get_visible(self, &r0, &c0, &nr, &nc);
    if (row >= 0 && row < r0)
        r0 = row;
    else if (row >= r0 + nr)
        r0 = row - nr + 1;
    if (col >= 0 && col < c0)
        c0 = col;
    else if (col >= c0 + nc)
        c0 = col - nc + 1;
    set_view(self, self->zoom, r0, c0);
}

void atn_heatmap_set_one_query(AtnHeatmap *self, gboolean one_query) {
    g_return_if_fail(ATN_IS_HEATMAP(self));
    one_query = !!one_query;
    if (one_query == self->one_query)
        return;
    self->one_query = one_query;
    invalidate_figure(self);
}

gboolean atn_heatmap_get_one_query(AtnHeatmap *self) {
    g_return_val_if_fail(ATN_IS_HEATMAP(self), FALSE);
    return self->one_query;
}

gboolean atn_heatmap_get_bar(AtnHeatmap *self, int col, double *value, graphene_rect_t *rect) {
    g_return_val_if_fail(ATN_IS_HEATMAP(self), FALSE);
    ensure_layout(self);
    const atn_query_bars_layout *B = &self->bars;
    if (!self->one_query || !self->have_layout || col < B->view_col0 || col >= B->view_col0 + B->view_cols)
        return FALSE;
    /* the value as drawn: the bar's height over the plot's, on the value axis */
    double v = atn_heatmap_get_value(self, bars_row(self), col);
    double f = CLAMP((v - B->vmin) / (B->vmax - B->vmin), 0, 1);
    if (rect)
        graphene_rect_init(rect, B->plot.x + (col - B->view_col0) * B->bar_w, B->plot.y + B->plot.h * (1 - f),
                           B->bar_w, B->plot.h * f);
    if (value)
        *value = B->vmin + f * (B->vmax - B->vmin);
    return TRUE;
}

gboolean atn_heatmap_get_layout(AtnHeatmap *self, atn_heatmap_layout *out) {
    g_return_val_if_fail(ATN_IS_HEATMAP(self), FALSE);
    ensure_layout(self);
    if (!self->have_layout || self->one_query)
        return FALSE;
    *out = self->layout;
    return TRUE;
}

char *atn_heatmap_dup_cell_number(AtnHeatmap *self, int row, int col) {
    g_return_val_if_fail(ATN_IS_HEATMAP(self), NULL);
    ensure_layout(self);
    if (!self->have_layout || self->one_query)
        return NULL;
    atn_render_style style;
    atn_render_style_for_widget(GTK_WIDGET(self), self->font_scale, &style);
    atn_heatmap_spec spec;
    fill_spec(self, &spec, &style);   /* as the draw: the colour scale's values, the weights' numbers */
    char buf[32];
    return atn_render_heatmap_cell_text(&spec, &self->layout, row, col, buf, sizeof buf) ? g_strdup(buf) : NULL;
}

int atn_heatmap_get_bars_row(AtnHeatmap *self) {
    g_return_val_if_fail(ATN_IS_HEATMAP(self), -1);
    return self->values ? bars_row(self) : -1;
}

void atn_heatmap_set_colorbar_note(AtnHeatmap *self, const char *note) {
    g_return_if_fail(ATN_IS_HEATMAP(self));
    if (g_strcmp0(note, self->colorbar_note) == 0)
        return;
    g_free(self->colorbar_note);
    self->colorbar_note = g_strdup(note);
    invalidate_figure(self);
}

/* What a screen reader reads for the keyboard's cell: the tooltip's words. */
static void announce(AtnHeatmap *self) {
    g_autofree char *text = atn_heatmap_dup_cell_text(self, self->cursor_row, self->cursor_col);
    gtk_accessible_update_property(GTK_ACCESSIBLE(self), GTK_ACCESSIBLE_PROPERTY_DESCRIPTION, text ? text : "", -1);
}

void atn_heatmap_move_cursor(AtnHeatmap *self, int drow, int dcol) {
    g_return_if_fail(ATN_IS_HEATMAP(self));
    if (!self->values || self->rows <= 0 || self->cols <= 0)
        return;
    int r = self->cursor_row, c = self->cursor_col;
    if (r < 0 || c < 0) {   /* start from the selected row (its diagonal cell) */
        r = self->selected_row >= 0 ? self->selected_row : 0;
        c = self->hover_col >= 0 ? self->hover_col : MIN(r, self->cols - 1);
    } else {
        r = CLAMP(r + drow, 0, self->rows - 1);
        c = CLAMP(c + dcol, 0, self->cols - 1);
    }
    self->cursor_row = r;
    self->cursor_col = c;
    self->keyboard = TRUE;
    scroll_to(self, self->one_query ? -1 : r, c);
    set_hover(self, r, c);
    if (drow != 0 || r != self->selected_row)
        g_signal_emit(self, signals[SIGNAL_CELL_CLICKED], 0, r, c);   /* the row becomes the query */
    announce(self);
    gtk_widget_queue_draw(GTK_WIDGET(self));
}

void atn_heatmap_get_cursor(AtnHeatmap *self, int *row, int *col) {
    g_return_if_fail(ATN_IS_HEATMAP(self));
    *row = self->cursor_row;
    *col = self->cursor_col;
}

static gboolean on_key(GtkEventControllerKey *c, guint keyval, guint keycode, GdkModifierType state,
                       AtnHeatmap *self) {
    return atn_heatmap_press_key(self, keyval, state);
}

gboolean atn_heatmap_press_key(AtnHeatmap *self, guint keyval, GdkModifierType state) {
    if (state & (GDK_CONTROL_MASK | GDK_ALT_MASK))
        return FALSE;
    int big = MAX(1, vis_count(self->rows, self->zoom) / 2);
    switch (keyval) {
    case GDK_KEY_Up: case GDK_KEY_KP_Up: atn_heatmap_move_cursor(self, -1, 0); return TRUE;
    case GDK_KEY_Down: case GDK_KEY_KP_Down: atn_heatmap_move_cursor(self, 1, 0); return TRUE;
    case GDK_KEY_Left: case GDK_KEY_KP_Left: atn_heatmap_move_cursor(self, 0, -1); return TRUE;
    case GDK_KEY_Right: case GDK_KEY_KP_Right: atn_heatmap_move_cursor(self, 0, 1); return TRUE;
    case GDK_KEY_Home: atn_heatmap_move_cursor(self, 0, -self->cols); return TRUE;
    case GDK_KEY_End: atn_heatmap_move_cursor(self, 0, self->cols); return TRUE;
    case GDK_KEY_plus: case GDK_KEY_equal: case GDK_KEY_KP_Add:
        atn_heatmap_zoom_at(self, 2.0, -1, -1);
        if (self->cursor_row >= 0)
            scroll_to(self, self->cursor_row, self->cursor_col);
        return TRUE;
    case GDK_KEY_minus: case GDK_KEY_KP_Subtract: atn_heatmap_zoom_at(self, 0.5, -1, -1); return TRUE;
    case GDK_KEY_0: case GDK_KEY_KP_0: atn_heatmap_reset_zoom(self); return TRUE;
    case GDK_KEY_Escape:   /* ends an axis drag, else a crop or zoom; nothing to end: the window's */
        if (self->band.count > 0) {
            atn_heatmap_crop_cancel(self);
            return TRUE;
        }
        if (self->zoom <= 1)
            return FALSE;
        atn_heatmap_reset_zoom(self);
        return TRUE;
    case GDK_KEY_Page_Up: if (state & GDK_SHIFT_MASK) { atn_heatmap_move_cursor(self, -big, 0); return TRUE; } return FALSE;
    case GDK_KEY_Page_Down: if (state & GDK_SHIFT_MASK) { atn_heatmap_move_cursor(self, big, 0); return TRUE; } return FALSE;
    default: return FALSE;
    }
}

static gboolean on_scroll(GtkEventControllerScroll *c, double dx, double dy, AtnHeatmap *self) {
    GdkModifierType state = gtk_event_controller_get_current_event_state(GTK_EVENT_CONTROLLER(c));
    double x = -1, y = -1;
    GdkEvent *ev = gtk_event_controller_get_current_event(GTK_EVENT_CONTROLLER(c));
    if (ev)
        gdk_event_get_position(ev, &x, &y);
    if (state & GDK_SHIFT_MASK) {   /* Shift+wheel pans sideways */
        int step = MAX(1, vis_count(self->cols, self->zoom) / 8);
        atn_heatmap_pan(self, 0, (int)(dy > 0 ? step : dy < 0 ? -step : 0));
        return TRUE;
    }
    if (dx != 0 && dy == 0 && self->zoom > 1) {
        int step = MAX(1, vis_count(self->cols, self->zoom) / 8);
        atn_heatmap_pan(self, 0, dx > 0 ? step : -step);
        return TRUE;
    }
    if (dy == 0 || (self->wheel_needs_ctrl && !(state & GDK_CONTROL_MASK)))
        return FALSE;
    /* the wheel (with or without Ctrl) zooms at the pointer; a touchpad sends small steps */
    double factor = pow(1.25, -CLAMP(dy, -4, 4));
    atn_heatmap_zoom_at(self, factor, x, y);
    return TRUE;
}

static void on_zoom_begin(GtkGesture *g, GdkEventSequence *seq, AtnHeatmap *self) { self->zoom_start = self->zoom; }

static void on_zoom_scale(GtkGestureZoom *g, double scale, AtnHeatmap *self) {
    double x, y;
    if (!gtk_gesture_get_bounding_box_center(GTK_GESTURE(g), &x, &y))
        x = y = -1;
    atn_heatmap_zoom_at(self, self->zoom_start * scale / self->zoom, x, y);
}

static void on_drag_begin(GtkGestureDrag *g, double x, double y, AtnHeatmap *self) {
    /* a drag along an axis crops (atn-heatmap-crop.c's gesture), it does not pan */
    if (self->axis_crop && self->have_layout && !self->one_query &&
        atn_heatmap_crop_axis_at(&self->layout, x, y) != ATN_CROP_AXIS_NONE) {
        gtk_gesture_set_state(GTK_GESTURE(g), GTK_EVENT_SEQUENCE_DENIED);
        return;
    }
    int r0, c0;
    atn_heatmap_get_visible(self, &r0, &c0, NULL, NULL);
    self->drag_r0 = r0;
    self->drag_c0 = c0;
}

static void on_drag_update(GtkGestureDrag *g, double dx, double dy, AtnHeatmap *self) {
    if (self->zoom <= 1 || !self->have_layout)
        return;
    double cw = self->one_query ? self->bars.bar_w : self->layout.cell_w;
    double ch = self->one_query ? 1e9 : self->layout.cell_h;
    if (cw <= 0 || ch <= 0)
        return;
    set_view(self, self->zoom, (int)lround(self->drag_r0 - dy / ch), (int)lround(self->drag_c0 - dx / cw));
}

float atn_heatmap_get_value(AtnHeatmap *self, int row, int col) {
    g_return_val_if_fail(ATN_IS_HEATMAP(self), 0);
    if (!self->values || row < 0 || col < 0 || row >= self->rows || col >= self->cols)
        return NAN;
    return self->values[(size_t)row * self->cols + col];
}

int atn_heatmap_get_rows(AtnHeatmap *self) {
    g_return_val_if_fail(ATN_IS_HEATMAP(self), 0);
    return self->rows;
}

/* ---- export -------------------------------------------------------------------------- */

typedef struct heatmap_figure {
    atn_heatmap_spec spec;
    gboolean bars;                /* one query's bars (from the spec's values and bars_row) */
    atn_query_bars_spec bars_spec;
    atn_render_style style;
    float *values;
    float *numbers;               /* the weights the cells print under a colour scale, or NULL */
    char **row_labels, **col_labels;
    int32_t *mask;
    float *cell_mask;
    char *title, *row_axis, *col_axis, *colorbar_label, *colorbar_note;
} heatmap_figure;

static void heatmap_figure_free(gpointer data) {
    heatmap_figure *f = data;
    g_free(f->values);
    g_free(f->numbers);
    g_strfreev(f->row_labels);
    g_strfreev(f->col_labels);
    g_free(f->mask);
    g_free(f->cell_mask);
    g_free(f->title);
    g_free(f->row_axis);
    g_free(f->col_axis);
    g_free(f->colorbar_label);
    g_free(f->colorbar_note);
    g_free(f);
}

static void heatmap_figure_draw(cairo_t *cr, double width, double height, void *data) {
    heatmap_figure *f = data;
    if (f->bars)
        atn_render_query_bars(cr, &f->bars_spec, width, height);
    else
        atn_render_heatmap(cr, &f->spec, width, height);
}

static AtnFigure *look_figure(const AtnHeatmapLook *look, const float *values, const float *numbers,
                              const char *title, const char *basename);

static char **copy_labels(const char *const *labels, int n) {
    if (!labels)
        return NULL;
    char **v = g_new0(char *, n + 1);
    for (int i = 0; i < n; i++)
        v[i] = g_strdup(labels[i]);
    return v;
}

struct AtnHeatmapLook {
    int rows, cols;
    char **row_labels, **col_labels;
    int32_t *mask;
    char *row_axis, *col_axis, *colorbar_label, *colorbar_note;
    atn_colormap cmap;
    atn_value_range range;
    gboolean show_colorbar;
    gboolean causal;
    float *cell_mask;
};

AtnHeatmapLook *atn_heatmap_dup_look(AtnHeatmap *self) {
    g_return_val_if_fail(ATN_IS_HEATMAP(self), NULL);
    AtnHeatmapLook *look = g_new0(AtnHeatmapLook, 1);
    look->rows = self->rows;
    look->cols = self->cols;
    look->row_labels = copy_labels(self->row_labels, self->rows);
    look->col_labels = copy_labels(self->col_labels, self->cols);
    look->mask = self->mask ? g_memdup2(self->mask, sizeof(int32_t) * MAX(self->rows, self->cols)) : NULL;
    look->row_axis = g_strdup(self->row_axis);
    look->col_axis = g_strdup(self->col_axis);
    look->colorbar_label = g_strdup(self->colorbar_label);
    look->colorbar_note = g_strdup(self->colorbar_note);
    look->cmap = self->cmap;
    look->range = self->range;
    look->show_colorbar = self->show_colorbar;
    look->causal = self->causal;
    look->cell_mask = self->cell_mask ? g_memdup2(self->cell_mask, sizeof(float) * (size_t)self->rows * self->cols)
                                      : NULL;
    return look;
}

void atn_heatmap_look_set_range(AtnHeatmapLook *look, double vmin, double vmax, const char *note) {
    g_return_if_fail(look != NULL);
    look->range = (atn_value_range){.automatic = false, .vmin = vmin, .vmax = vmax};
    g_free(look->colorbar_note);
    look->colorbar_note = g_strdup(note);
}

void atn_heatmap_look_free(AtnHeatmapLook *look) {
    if (!look)
        return;
    g_strfreev(look->row_labels);
    g_strfreev(look->col_labels);
    g_free(look->mask);
    g_free(look->cell_mask);
    g_free(look->row_axis);
    g_free(look->col_axis);
    g_free(look->colorbar_label);
    g_free(look->colorbar_note);
    g_free(look);
}

AtnFigure *atn_heatmap_look_figure(const AtnHeatmapLook *look, const float *values, const char *title,
                                   const char *basename) {
    return look_figure(look, values, NULL, title, basename);
}

/* The block first..first+count-1 of both axes of a [rows][cols] matrix, newly allocated. */
static float *crop_block(const float *v, int cols, int first, int count) {
    float *out = g_new(float, (size_t)count * count);
    for (int i = 0; i < count; i++)
        memcpy(out + (size_t)i * count, v + (size_t)(first + i) * cols + first, sizeof(float) * count);
    return out;
}

/* The look of the tokens first..first+count-1 on both axes (a typed span: the export's crop). */
static void look_crop(AtnHeatmapLook *look, int first, int count) {
    char **rl = look->row_labels ? copy_labels((const char *const *)look->row_labels + first, count) : NULL;
    char **cl = look->col_labels ? copy_labels((const char *const *)look->col_labels + first, count) : NULL;
    g_strfreev(look->row_labels);
    g_strfreev(look->col_labels);
    look->row_labels = rl;
    look->col_labels = cl;
    if (look->mask) {
        int32_t *m = g_memdup2(look->mask + first, sizeof(int32_t) * count);
        g_free(look->mask);
        look->mask = m;
    }
    if (look->cell_mask) {
        float *cm = crop_block(look->cell_mask, look->cols, first, count);
        g_free(look->cell_mask);
        look->cell_mask = cm;
    }
    look->rows = look->cols = count;
}

static AtnFigure *look_figure(const AtnHeatmapLook *look, const float *values, const float *numbers,
                              const char *title, const char *basename) {
    if (!values || look->rows <= 0 || look->cols <= 0)
        return NULL;
    heatmap_figure *f = g_new0(heatmap_figure, 1);
    atn_render_style_init(&f->style, FALSE);
    f->values = g_memdup2(values, sizeof(float) * (size_t)look->rows * look->cols);
    f->numbers = numbers ? g_memdup2(numbers, sizeof(float) * (size_t)look->rows * look->cols) : NULL;
    f->row_labels = copy_labels((const char *const *)look->row_labels, look->rows);
    f->col_labels = copy_labels((const char *const *)look->col_labels, look->cols);
    f->mask = look->mask ? g_memdup2(look->mask, sizeof(int32_t) * MAX(look->rows, look->cols)) : NULL;
    f->title = g_strdup(title);
    f->row_axis = g_strdup(look->row_axis);
    f->col_axis = g_strdup(look->col_axis);
    f->colorbar_label = g_strdup(look->colorbar_label);
    f->colorbar_note = g_strdup(look->colorbar_note);
    atn_heatmap_spec *s = &f->spec;
    atn_heatmap_spec_init(s);
    s->values = f->values;
    s->rows = look->rows;
    s->cols = look->cols;
    s->row_labels = (const char *const *)f->row_labels;
    s->col_labels = (const char *const *)f->col_labels;
    s->row_mask = f->mask;
    s->col_mask = f->mask;
    s->title = f->title;
    s->row_axis = f->row_axis;
    s->col_axis = f->col_axis;
    s->colorbar_label = f->colorbar_label;
    s->colorbar_note = f->colorbar_note;
    s->colormap = look->cmap;
    s->range = look->range;
    s->show_colorbar = look->show_colorbar;
    s->causal = look->causal;
    f->cell_mask = look->cell_mask ? g_memdup2(look->cell_mask, sizeof(float) * (size_t)look->rows * look->cols)
                                   : NULL;
    s->cell_mask = f->cell_mask;
    s->number_values = f->numbers;
    s->style = &f->style;
    double w, h;
    atn_render_heatmap_natural_size(s, &w, &h);
    return atn_figure_new(w, h, heatmap_figure_draw, f, heatmap_figure_free, basename);
}

AtnFigure *atn_heatmap_dup_figure(AtnHeatmap *self, const char *basename) {
    g_return_val_if_fail(ATN_IS_HEATMAP(self), NULL);
    if (!self->values)
        return NULL;
    AtnHeatmapLook *look = atn_heatmap_dup_look(self);
    AtnFigure *fig;
    if (self->one_query) {
        heatmap_figure *f = g_new0(heatmap_figure, 1);
        atn_render_style_init(&f->style, FALSE);
        int q = bars_row(self);
        double vmin, vmax;
        atn_value_range_resolve(&self->range, self->values, self->rows, self->cols, self->cols, self->cmap, &vmin,
                                &vmax);
        f->bars = TRUE;
        f->values = g_memdup2(self->values + (size_t)q * self->cols, sizeof(float) * self->cols);
        f->col_labels = copy_labels(self->col_labels, self->cols);
        f->mask = look->mask ? g_memdup2(look->mask, sizeof(int32_t) * MAX(self->rows, self->cols)) : NULL;
        f->col_axis = g_strdup(self->col_axis);
        f->colorbar_label = g_strdup(self->colorbar_label);
        /* Translators: the title of one query's bar chart: the heatmap's title, the query token */
        f->title = g_strdup_printf(_("%s · query %d “%s”"), self->title ? self->title : "", q,
                                   self->row_labels ? self->row_labels[q] : "");
        atn_query_bars_spec *b = &f->bars_spec;
        atn_query_bars_spec_init(b);
        b->values = f->values;
        b->n = self->cols;
        b->labels = (const char *const *)f->col_labels;
        b->mask = f->mask;
        b->title = f->title;
        b->value_axis = f->colorbar_label;
        b->key_axis = f->col_axis;
        b->colormap = self->cmap;
        b->range = self->range;
        b->vmin = vmin;
        b->vmax = vmax;
        b->style = &f->style;
        double w, h;
        atn_render_query_bars_natural_size(b, &w, &h);
        fig = atn_figure_new(w, h, heatmap_figure_draw, f, heatmap_figure_free, basename);
    } else {
        /* the colour scale on screen goes into the file: its values, range, label and note */
        const float *dv = atn_colour_scale_state_values(&self->cscale, self->values, self->rows, self->cols,
                                                        self->causal);
        if (dv != self->values && dv) {
            atn_heatmap_spec sp;
            atn_heatmap_spec_init(&sp);
            sp.range = look->range;
            sp.colorbar_label = look->colorbar_label;
            sp.colorbar_note = look->colorbar_note;
            atn_colour_scale_state_fill(&self->cscale, &sp, !self->range.automatic);
            g_autofree char *label = g_strdup(sp.colorbar_label);
            g_free(look->colorbar_label);
            look->colorbar_label = g_steal_pointer(&label);
            atn_heatmap_look_set_range(look, sp.range.automatic ? 0 : sp.range.vmin,
                                       sp.range.automatic ? 1 : sp.range.vmax, sp.colorbar_note);
            if (sp.range.automatic)
                look->range.automatic = TRUE;
        }
        const float *cv = dv ? dv : self->values, *nv = cv != self->values ? self->values : NULL;
        int r0, c0, vr, vc;
        atn_heatmap_get_visible(self, &r0, &c0, &vr, &vc);
        if (self->span_count > 0 && r0 == self->span_first && c0 == self->span_first && vr == self->span_count &&
            vc == self->span_count && self->rows == self->cols) {
            /* a typed span on screen: the file holds those tokens only, as `export --range` */
            int first = self->span_first, count = self->span_count, cols = self->cols;
            g_autofree float *cc = crop_block(cv, cols, first, count);
            g_autofree float *nc = nv ? crop_block(nv, cols, first, count) : NULL;
            look_crop(look, first, count);
            fig = look_figure(look, cc, nc, self->title, basename);
        } else {
            fig = look_figure(look, cv, nv, self->title, basename);
        }
    }
    atn_heatmap_look_free(look);
    return fig;
}

/* ---- pooling (atn-heatmap-pool.h) ---------------------------------------------------------- */

void atn_heatmap_set_pool_mode(AtnHeatmap *self, atn_pool_mode mode) {
    g_return_if_fail(ATN_IS_HEATMAP(self));
    if (mode == self->pool_mode)
        return;
    self->pool_mode = mode;
    invalidate_cells(self);
}

int atn_heatmap_get_pool(AtnHeatmap *self, atn_pool_mode *mode) {
    g_return_val_if_fail(ATN_IS_HEATMAP(self), 1);
    ensure_layout(self);
    if (mode)
        *mode = self->pool_mode;
    return MAX(self->pool_k, 1);
}

const char *atn_heatmap_get_pool_legend(AtnHeatmap *self) {
    g_return_val_if_fail(ATN_IS_HEATMAP(self), NULL);
    return self->pool_legend;
}

float atn_heatmap_get_drawn_value(AtnHeatmap *self, int row, int col) {
    g_return_val_if_fail(ATN_IS_HEATMAP(self), NAN);
    if (row < 0 || col < 0 || row >= self->rows || col >= self->cols)
        return NAN;
    ensure_layout(self);
    if (!self->pooled || self->pool_k <= 1) {
        const float *dv = atn_colour_scale_state_values(&self->cscale, self->values, self->rows, self->cols,
                                                        self->causal);
        return dv ? dv[(size_t)row * self->cols + col] : NAN;
    }
    return self->pooled[(size_t)(row / self->pool_k) * self->pooled_cols + col / self->pool_k];
}

void atn_heatmap_set_colour_scale(AtnHeatmap *self, atn_colour_scale scale, gboolean drop_first) {
    g_return_if_fail(ATN_IS_HEATMAP(self));
    if (scale == self->cscale.scale && !drop_first == !self->cscale.drop_first)
        return;
    self->cscale.scale = scale;
    self->cscale.drop_first = drop_first;
    invalidate_cells(self);
}

atn_colour_scale atn_heatmap_get_colour_scale(AtnHeatmap *self, gboolean *drop_first, double *first_share) {
    g_return_val_if_fail(ATN_IS_HEATMAP(self), ATN_SCALE_LINEAR);
    ensure_layout(self);
    if (drop_first)
        *drop_first = self->cscale.drop_first;
    if (first_share)
        *first_share = self->cscale.scaled ? self->cscale.first_share : NAN;
    return self->cscale.scale;
}

gboolean atn_heatmap_show_block(AtnHeatmap *self, int first, int count) {
    g_return_val_if_fail(ATN_IS_HEATMAP(self), FALSE);
    int n = MIN(self->rows, self->cols);
    if (count < 2 && count != n)   /* one token: the zoom stops at two */
        return FALSE;
    if (count < 1 || first < 0 || first + count > n)
        return FALSE;
    /* n / zoom = count - 0.5: vis_count's ceil gives count */
    set_view_span(self, count >= n ? 1.0 : MAX(self->rows, self->cols) / (count - 0.5), first, first, first,
                  count < n ? count : 0);
    return TRUE;
}

gboolean atn_heatmap_get_span(AtnHeatmap *self, int *first, int *count) {
    g_return_val_if_fail(ATN_IS_HEATMAP(self), FALSE);
    int r0, c0, vr, vc;
    atn_heatmap_get_visible(self, &r0, &c0, &vr, &vc);
    gboolean on = self->span_count > 0 && r0 == self->span_first && c0 == self->span_first &&
                  vr == self->span_count && vc == self->span_count && self->rows == self->cols;
    if (first)
        *first = on ? self->span_first : 0;
    if (count)
        *count = on ? self->span_count : 0;
    return on;
}

/* ---- crop by dragging along an axis (atn-heatmap-crop.c holds the gesture) ------------------ */

void atn_heatmap_set_axis_crop(AtnHeatmap *self, gboolean on) {
    g_return_if_fail(ATN_IS_HEATMAP(self));
    if (on && !self->axis_crop)
        atn_heatmap_crop_attach(self);
    self->axis_crop = self->axis_crop || on;
}

gboolean atn_heatmap_get_axis_crop(AtnHeatmap *self) {
    g_return_val_if_fail(ATN_IS_HEATMAP(self), FALSE);
    return self->axis_crop;
}

void atn_heatmap_set_band(AtnHeatmap *self, const AtnHeatmapCropBand *band) {
    g_return_if_fail(ATN_IS_HEATMAP(self));
    AtnHeatmapCropBand none = {ATN_CROP_AXIS_NONE, 0, 0};
    band = band ? band : &none;
    if (!memcmp(band, &self->band, sizeof *band))
        return;
    self->band = *band;
    gtk_widget_queue_draw(GTK_WIDGET(self));
}

gboolean atn_heatmap_get_band(AtnHeatmap *self, AtnHeatmapCropBand *band) {
    g_return_val_if_fail(ATN_IS_HEATMAP(self), FALSE);
    if (band)
        *band = self->band;
    return self->band.count > 0;
}
