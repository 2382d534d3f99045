/* AtnHeatmap: one attention matrix, drawn by ui/render into a cached render node. */
#include "atn-heatmap.h"

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
    gboolean causal;   /* cells after the diagonal are masked (a causal model's head) */

    int selected_row, highlight_token, hover_row, hover_col;
    int mark_row;
    gboolean *mark_cols;   /* [cols] or NULL: all */
    gboolean marks;

    /* caches */
    cairo_surface_t *cells;       /* one pixel per cell, for the current data and colours */
    GskRenderNode *base;          /* the figure at base_w × base_h */
    int base_w, base_h;
    atn_heatmap_layout layout;    /* of base */
    gboolean have_layout;
};

G_DEFINE_FINAL_TYPE(AtnHeatmap, atn_heatmap, GTK_TYPE_WIDGET)

enum { SIGNAL_CELL_HOVERED, SIGNAL_CELL_CLICKED, N_SIGNALS };
static guint signals[N_SIGNALS];

static void invalidate_cells(AtnHeatmap *self) {
    g_clear_pointer(&self->cells, cairo_surface_destroy);
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
    spec->colormap = self->cmap;
    spec->range = self->range;
    spec->show_colorbar = self->show_colorbar;
    spec->causal = self->causal;
    spec->style = style;
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
    if (!self->cells) {
        double vmin, vmax;
        atn_value_range_resolve(&self->range, self->values, self->rows, self->cols, self->cols, self->cmap, &vmin,
                                &vmax);
        self->cells = atn_render_matrix_surface(self->values, self->rows, self->cols, self->cols, self->cmap, vmin,
                                                vmax, NULL);
    }
    spec.cells = self->cells;
    atn_render_heatmap_layout(&spec, w, h, &self->layout);
    self->have_layout = TRUE;
    GtkSnapshot *s = gtk_snapshot_new();
    cairo_t *cr = gtk_snapshot_append_cairo(s, &GRAPHENE_RECT_INIT(0, 0, w, h));
    atn_render_heatmap(cr, &spec, w, h);
    cairo_destroy(cr);
    self->base = gtk_snapshot_free_to_node(s);
}

static gboolean cell_rect(AtnHeatmap *self, int r0, int c0, int nr, int nc, graphene_rect_t *out) {
    if (!self->have_layout || r0 < 0 || c0 < 0 || r0 + nr > self->rows || c0 + nc > self->cols)
        return FALSE;
    const atn_heatmap_layout *L = &self->layout;
    graphene_rect_init(out, L->cells.x + c0 * L->cell_w, L->cells.y + r0 * L->cell_h, nc * L->cell_w,
                       nr * L->cell_h);
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
}

static void atn_heatmap_measure(GtkWidget *widget, GtkOrientation orientation, int for_size, int *minimum,
                                int *natural, int *minimum_baseline, int *natural_baseline) {
    *minimum = 160;
    *natural = 480;
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

char *atn_heatmap_dup_cell_text(AtnHeatmap *self, int row, int col) {
    g_return_val_if_fail(ATN_IS_HEATMAP(self), NULL);
    if (!self->values || row < 0 || col < 0 || row >= self->rows || col >= self->cols)
        return NULL;
    g_autofree char *rl = self->row_labels ? g_strdup(self->row_labels[row]) : g_strdup_printf("%d", row);
    g_autofree char *cl = self->col_labels ? g_strdup(self->col_labels[col]) : g_strdup_printf("%d", col);
    if (self->causal && col > row)
        /* Translators: the tooltip of a masked cell of a causal model (GPT-2): the key comes after the query */
        return g_strdup_printf(_("%s (%d) → %s (%d): masked (a later token: the model cannot see it)"), rl, row, cl,
                               col);
    /* Translators: the tooltip of a heatmap cell: query token → key token: weight */
    return g_strdup_printf(_("%s (%d) → %s (%d): %.4f"), rl, row, cl, col, (double)self->values[(size_t)row * self->cols + col]);
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
    int row, col;
    gtk_widget_grab_focus(GTK_WIDGET(self));
    if (atn_heatmap_cell_at(self, x, y, &row, &col))
        g_signal_emit(self, signals[SIGNAL_CELL_CLICKED], 0, row, col);
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
    g_clear_pointer(&self->base, gsk_render_node_unref);
    G_OBJECT_CLASS(atn_heatmap_parent_class)->dispose(object);
}

static void atn_heatmap_finalize(GObject *object) {
    AtnHeatmap *self = ATN_HEATMAP(object);
    g_free(self->title);
    g_free(self->row_axis);
    g_free(self->col_axis);
    g_free(self->colorbar_label);
    g_free(self->mark_cols);
    G_OBJECT_CLASS(atn_heatmap_parent_class)->finalize(object);
}

static void atn_heatmap_class_init(AtnHeatmapClass *klass) {
    GObjectClass *object_class = G_OBJECT_CLASS(klass);
    GtkWidgetClass *widget_class = GTK_WIDGET_CLASS(klass);
    object_class->dispose = atn_heatmap_dispose;
    object_class->finalize = atn_heatmap_finalize;
    widget_class->snapshot = atn_heatmap_snapshot;
    widget_class->measure = atn_heatmap_measure;
    widget_class->size_allocate = atn_heatmap_size_allocate;
    widget_class->css_changed = atn_heatmap_css_changed;
    gtk_widget_class_set_css_name(widget_class, "heatmap");
    gtk_widget_class_set_accessible_role(widget_class, GTK_ACCESSIBLE_ROLE_IMG);   /* a figure for screen readers */
    /* The pointer moved to another cell (-1, -1 when it left the matrix). */
    signals[SIGNAL_CELL_HOVERED] = g_signal_new("cell-hovered", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL,
                                                NULL, NULL, G_TYPE_NONE, 2, G_TYPE_INT, G_TYPE_INT);
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
}

GtkWidget *atn_heatmap_new(void) { return g_object_new(ATN_TYPE_HEATMAP, NULL); }

void atn_heatmap_set_causal(AtnHeatmap *self, gboolean causal) {
    g_return_if_fail(ATN_IS_HEATMAP(self));
    if (!causal == !self->causal)
        return;
    self->causal = causal;
    invalidate_figure(self);
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
    self->values = values;
    self->rows = values ? rows : 0;
    self->cols = values ? cols : 0;
    self->row_labels = row_labels;
    self->col_labels = col_labels;
    self->mask = mask;
    if (self->selected_row >= self->rows)
        self->selected_row = -1;
    if (self->hover_row >= self->rows || self->hover_col >= self->cols)
        self->hover_row = self->hover_col = -1;
    if (self->highlight_token >= MIN(self->rows, self->cols))
        self->highlight_token = -1;
    g_clear_pointer(&self->mark_cols, g_free);
    self->marks = FALSE;
    invalidate_cells(self);
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

void atn_heatmap_set_selected_row(AtnHeatmap *self, int row) {
    g_return_if_fail(ATN_IS_HEATMAP(self));
    if (row >= self->rows)
        row = -1;
    if (row == self->selected_row)
        return;
    self->selected_row = row;
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


gboolean atn_heatmap_cell_at(AtnHeatmap *self, double x, double y, int *row, int *col) {
    g_return_val_if_fail(ATN_IS_HEATMAP(self), FALSE);
    *row = *col = -1;
    if (!self->values)
        return FALSE;
    if (!self->have_layout) {
        int w = gtk_widget_get_width(GTK_WIDGET(self)), h = gtk_widget_get_height(GTK_WIDGET(self));
        if (w <= 0 || h <= 0)
            return FALSE;
        ensure_base(self, w, h);
    }
    const atn_heatmap_layout *L = &self->layout;
    if (x < L->cells.x || y < L->cells.y || L->cell_w <= 0 || L->cell_h <= 0)
        return FALSE;
    int c = (int)floor((x - L->cells.x) / L->cell_w), r = (int)floor((y - L->cells.y) / L->cell_h);
    if (r < 0 || c < 0 || r >= self->rows || c >= self->cols)
        return FALSE;
    *row = r;
    *col = c;
    return TRUE;
}

gboolean atn_heatmap_get_cell_rect(AtnHeatmap *self, int row, int col, graphene_rect_t *rect) {
    g_return_val_if_fail(ATN_IS_HEATMAP(self), FALSE);
    if (!self->have_layout && self->values) {
        int w = gtk_widget_get_width(GTK_WIDGET(self)), h = gtk_widget_get_height(GTK_WIDGET(self));
        if (w > 0 && h > 0)
            ensure_base(self, w, h);
    }
    return cell_rect(self, row, col, 1, 1, rect);
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
    atn_render_style style;
    float *values;
    char **row_labels, **col_labels;
    int32_t *mask;
    char *title, *row_axis, *col_axis, *colorbar_label;
} heatmap_figure;

static void heatmap_figure_free(gpointer data) {
    heatmap_figure *f = data;
    g_free(f->values);
    g_strfreev(f->row_labels);
    g_strfreev(f->col_labels);
    g_free(f->mask);
    g_free(f->title);
    g_free(f->row_axis);
    g_free(f->col_axis);
    g_free(f->colorbar_label);
    g_free(f);
}

static void heatmap_figure_draw(cairo_t *cr, double width, double height, void *data) {
    heatmap_figure *f = data;
    atn_render_heatmap(cr, &f->spec, width, height);
}

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
    char *row_axis, *col_axis, *colorbar_label;
    atn_colormap cmap;
    atn_value_range range;
    gboolean show_colorbar;
    gboolean causal;
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
    look->cmap = self->cmap;
    look->range = self->range;
    look->show_colorbar = self->show_colorbar;
    look->causal = self->causal;
    return look;
}

void atn_heatmap_look_free(AtnHeatmapLook *look) {
    if (!look)
        return;
    g_strfreev(look->row_labels);
    g_strfreev(look->col_labels);
    g_free(look->mask);
    g_free(look->row_axis);
    g_free(look->col_axis);
    g_free(look->colorbar_label);
    g_free(look);
}

AtnFigure *atn_heatmap_look_figure(const AtnHeatmapLook *look, const float *values, const char *title,
                                   const char *basename) {
    if (!values || look->rows <= 0 || look->cols <= 0)
        return NULL;
    heatmap_figure *f = g_new0(heatmap_figure, 1);
    atn_render_style_init(&f->style, FALSE);
    f->values = g_memdup2(values, sizeof(float) * (size_t)look->rows * look->cols);
    f->row_labels = copy_labels((const char *const *)look->row_labels, look->rows);
    f->col_labels = copy_labels((const char *const *)look->col_labels, look->cols);
    f->mask = look->mask ? g_memdup2(look->mask, sizeof(int32_t) * MAX(look->rows, look->cols)) : NULL;
    f->title = g_strdup(title);
    f->row_axis = g_strdup(look->row_axis);
    f->col_axis = g_strdup(look->col_axis);
    f->colorbar_label = g_strdup(look->colorbar_label);
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
    s->colormap = look->cmap;
    s->range = look->range;
    s->show_colorbar = look->show_colorbar;
    s->causal = look->causal;
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
    AtnFigure *fig = atn_heatmap_look_figure(look, self->values, self->title, basename);
    atn_heatmap_look_free(look);
    return fig;
}
