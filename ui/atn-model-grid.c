/* AtnModelGrid: all heads as thumbnails, drawn by ui/render into a cached node. */
#include "atn-model-grid.h"
#include "atn-model-grid-test.h"

#include "atn-encdec.h"
#include "atn-labels.h"
#include "atn-session.h"
#include "atn-whatif.h"
#include "atn-worker.h"

#include <glib/gi18n.h>

struct _AtnModelGrid {
    GtkWidget parent_instance;
    AtnResult *result;
    atn_colormap cmap;
    double font_scale;
    gboolean shared_range;
    char **notes;
    char **layer_labels;        /* [L] "L2 ≡ L0" for ALBERT's shared layers, or NULL */
    int sel_layer, sel_head, hover_layer, hover_head;
    int stack;                  /* an encoder-decoder's stack drawn (atn_model_grid_set_stack) */
    gboolean stack_shown;       /* fill_spec drew a decoder or cross stack (no thumbnails) */

    /* what is drawn: the result's coloured thumbnails (atn_result_color_thumbs, made in the
       run's worker or a recolour worker), wrapped without copying as image surfaces */
    AtnThumbPixels *pix;
    cairo_surface_t **thumbs;   /* [L*H] or NULL: side x side each, over pix's pixels */
    int n_thumbs;
    double shared[2];           /* pix's shared range */
    GCancellable *recolour;     /* a recolour of result into (cmap, shared_range) in flight */
    guint n_recolours;          /* started (tests) */
    GskRenderNode *base;
    int base_w, base_h;
    atn_rect r00, r11;          /* thumbnail rects of (0,0) and (1,1): the grid's steps */
};

G_DEFINE_FINAL_TYPE(AtnModelGrid, atn_model_grid, GTK_TYPE_WIDGET)

enum { SIGNAL_HEAD_ACTIVATED, SIGNAL_HEAD_MENU, N_SIGNALS };
static guint signals[N_SIGNALS];

static void drop_thumbs(AtnModelGrid *self) {
    for (int i = 0; i < self->n_thumbs; i++)
        if (self->thumbs[i])
            cairo_surface_destroy(self->thumbs[i]);
    g_clear_pointer(&self->thumbs, g_free);
    self->n_thumbs = 0;
    g_clear_pointer(&self->pix, atn_thumb_pixels_unref);
}

static void cancel_recolour(AtnModelGrid *self) { atn_worker_cancel(&self->recolour); }

void atn_model_grid_invalidate(AtnModelGrid *self) {
    g_return_if_fail(ATN_IS_MODEL_GRID(self));
    drop_thumbs(self);
    g_clear_pointer(&self->base, gsk_render_node_unref);
    gtk_widget_queue_draw(GTK_WIDGET(self));
}

static void invalidate_figure(AtnModelGrid *self) {
    g_clear_pointer(&self->base, gsk_render_node_unref);
    gtk_widget_queue_draw(GTK_WIDGET(self));
}

/* The colour map and scale of the picture: those of the pixels it is drawn from (while a
 * recolour runs, the previous style's, so that the colour bar and the layout match them),
 * else the ones asked for. */
static void drawn_style(AtnModelGrid *self, atn_colormap *cm, gboolean *shared) {
    *cm = self->pix ? atn_thumb_pixels_get_colormap(self->pix) : self->cmap;
    *shared = self->pix ? atn_thumb_pixels_get_shared_range(self->pix, NULL, NULL) : self->shared_range;
}

static gboolean fill_spec(AtnModelGrid *self, atn_grid_spec *spec, const atn_render_style *style) {
    if (!self->result)
        return FALSE;
    const atn_capture *cap = atn_result_get_capture(self->result);
    if (!atn_capture_has_heads(cap))
        return FALSE;
    atn_grid_spec_init(spec);
    spec->attn = cap->attn;
    spec->cap = cap;   /* heads on demand: the thumbnails below, each made once by the result */
    spec->n_layers = cap->n_layers;
    spec->n_heads = cap->n_heads;
    spec->n = cap->n;
    spec->head_notes = (const char *const *)self->notes;
    spec->layer_labels = (const char *const *)self->layer_labels;
    gboolean shared;
    drawn_style(self, &spec->colormap, &shared);
    spec->shared_range = shared;
    spec->style = style;
    spec->causal = atn_result_is_causal(self->result);
    spec->kv_group = cap->n_kv_heads > 0 ? cap->n_heads / cap->n_kv_heads : 1;   /* GQA: heads per K/V head */
    spec->shared_vmin_vmax = self->thumbs ? self->shared : NULL;   /* no pass over every head */
    self->stack_shown = atn_encdec_grid_spec(self->result, self->stack, spec);
    return TRUE;
}

static guint64 cells_coloured;   /* main thread: thumbnail cells coloured, for tests */

guint64 atn_model_grid_get_cells_coloured(void) { return cells_coloured; }

static void use_pixels(AtnModelGrid *self, AtnThumbPixels *pix) {
    drop_thumbs(self);
    self->pix = pix;
    int count = atn_thumb_pixels_get_count(pix), side = atn_thumb_pixels_get_side(pix);
    atn_thumb_pixels_get_shared_range(pix, &self->shared[0], &self->shared[1]);
    self->thumbs = g_new0(cairo_surface_t *, count);
    self->n_thumbs = count;
    for (int c = 0; c < count; c++)   /* no copy: the result keeps the pixels alive through pix */
        self->thumbs[c] = cairo_image_surface_create_for_data(atn_thumb_pixels_get_head(pix, c), CAIRO_FORMAT_ARGB32,
                                                              side, side, side * 4);
}

typedef struct recolour_job {
    AtnResult *result;
    atn_colormap cm;
    gboolean shared;
} recolour_job;

static void recolour_job_free(recolour_job *job) {
    g_clear_object(&job->result);
    g_free(job);
}

static gpointer recolour_run(gpointer data, GCancellable *cancellable) {
    recolour_job *job = data;
    return atn_result_color_thumbs(job->result, job->cm, job->shared, cancellable);
}

/* Only for the recolour still awaited: one cancelled (a new result, a run, another style)
 * is dropped by atn_worker. */
static void recolour_done(gpointer owner, gpointer answer, gpointer data) {
    AtnModelGrid *self = ATN_MODEL_GRID(owner);
    if (answer) {   /* kept by the result: the next draw takes them */
        drop_thumbs(self);
        g_clear_pointer(&self->base, gsk_render_node_unref);
        gtk_widget_queue_draw(GTK_WIDGET(self));
    }
}

/* The result's thumbnails in the style asked for, coloured by a worker when the result does
 * not have them yet (a colour map or scale chosen after its run); the picture meanwhile stays
 * in the style it has. */
static void start_recolour(AtnModelGrid *self) {
    if (!self->result || self->recolour)
        return;
    g_autoptr(AtnThumbPixels) have = atn_result_dup_thumb_pixels(self->result, self->cmap, self->shared_range, FALSE);
    if (have)
        return;
    recolour_job *job = g_new0(recolour_job, 1);
    job->result = g_object_ref(self->result);
    job->cm = self->cmap;
    job->shared = self->shared_range;
    self->n_recolours++;
    atn_worker_start(self, &self->recolour, ATN_WORKER_NICE, recolour_run, job, (GDestroyNotify)recolour_job_free,
                     (GDestroyNotify)atn_thumb_pixels_unref, recolour_done);
}

/* What the figure is drawn from: the result's pixels in the style asked for, kept with it by
 * the worker that coloured them.  Without them: the pixels drawn now while a worker recolours,
 * else the result's pixels of another style (the style its run was coloured in) while a
 * worker recolours, else (a result whose run coloured none) colouring here, once. */
static void ensure_thumbs(AtnModelGrid *self) {
    AtnThumbPixels *p = atn_result_dup_thumb_pixels(self->result, self->cmap, self->shared_range, FALSE);
    if (p && p == self->pix) {
        atn_thumb_pixels_unref(p);
        return;
    }
    if (!p) {
        start_recolour(self);
        if (self->pix)
            return;
        p = atn_result_dup_thumb_pixels(self->result, self->cmap, self->shared_range, TRUE);
    }
    if (!p) {
        cancel_recolour(self);
        p = atn_result_color_thumbs(self->result, self->cmap, self->shared_range, NULL);
        if (!p)
            return;
        cells_coloured += (guint64)atn_thumb_pixels_get_count(p) * atn_thumb_pixels_get_side(p) *
                          atn_thumb_pixels_get_side(p);
    }
    use_pixels(self, p);
}

static void atn_model_grid_snapshot(GtkWidget *widget, GtkSnapshot *s) {
    AtnModelGrid *self = ATN_MODEL_GRID(widget);
    int w = gtk_widget_get_width(widget), h = gtk_widget_get_height(widget);
    if (w <= 0 || h <= 0 || !self->result)
        return;
    if (!self->base || self->base_w != w || self->base_h != h) {
        g_clear_pointer(&self->base, gsk_render_node_unref);
        atn_render_style style;
        atn_render_style_for_widget(widget, self->font_scale, &style);
        atn_grid_spec spec;
        if (atn_capture_has_heads(atn_result_get_capture(self->result)))
            ensure_thumbs(self);
        if (!fill_spec(self, &spec, &style))
            return;
        spec.thumbs = self->stack_shown ? NULL : self->thumbs;
        GtkSnapshot *sub = gtk_snapshot_new();
        cairo_t *cr = gtk_snapshot_append_cairo(sub, &GRAPHENE_RECT_INIT(0, 0, w, h));
        atn_render_model_grid(cr, &spec, w, h);
        cairo_destroy(cr);
        self->base = gtk_snapshot_free_to_node(sub);
        self->base_w = w;
        self->base_h = h;
        self->r00 = atn_render_model_grid_cell_rect(&spec, w, h, 0, 0);
        self->r11 = atn_render_model_grid_cell_rect(&spec, w, h, 1, 1);
    }
    gtk_snapshot_append_node(s, self->base);

    double sx0 = self->r11.x - self->r00.x, sy0 = self->r11.y - self->r00.y, t0 = self->r00.w;
    AtnWhatif *wi = atn_whatif_of_result(self->result);
    int L = atn_result_get_n_layers(self->result), H = atn_result_get_n_heads(self->result);
    for (int l = 0; wi && l < L; l++)   /* the heads the what-if lab switched off in this run */
        for (int hd = 0; hd < H; hd++) {
            AtnWhatifHead st = atn_whatif_get_head(wi, l, hd);
            if (st == ATN_WHATIF_HEAD_ON)
                continue;
            double x0 = self->r00.x + hd * sx0, y0 = self->r00.y + l * sy0;
            cairo_t *cr = gtk_snapshot_append_cairo(s, &GRAPHENE_RECT_INIT(x0 - 2, y0 - 2, t0 + 4, t0 + 4));
            cairo_set_source_rgba(cr, 0, 0, 0, 0.45);   /* dimmed, with a red mark over it */
            cairo_rectangle(cr, x0, y0, t0, t0);
            cairo_fill(cr);
            cairo_set_source_rgb(cr, 0.88, 0.11, 0.14);
            cairo_set_line_width(cr, fmax(1.5, t0 / 24));
            cairo_rectangle(cr, x0 + 1, y0 + 1, t0 - 2, t0 - 2);
            cairo_stroke(cr);
            if (st == ATN_WHATIF_HEAD_OFF) {   /* a cross: its output is zero */
                cairo_move_to(cr, x0 + t0 * 0.15, y0 + t0 * 0.15);
                cairo_line_to(cr, x0 + t0 * 0.85, y0 + t0 * 0.85);
                cairo_move_to(cr, x0 + t0 * 0.85, y0 + t0 * 0.15);
                cairo_line_to(cr, x0 + t0 * 0.15, y0 + t0 * 0.85);
            } else {   /* level bars: it attends uniformly */
                for (int k = 1; k <= 3; k++) {
                    cairo_move_to(cr, x0 + t0 * 0.15, y0 + t0 * (0.25 * k));
                    cairo_line_to(cr, x0 + t0 * 0.85, y0 + t0 * (0.25 * k));
                }
            }
            cairo_set_line_width(cr, fmax(2.0, t0 / 12));
            cairo_stroke(cr);
            cairo_destroy(cr);
        }

    static const GdkRGBA accent = {0.21f, 0.52f, 0.89f, 1.0f};
    GdkRGBA fg;
    gtk_style_context_get_color(gtk_widget_get_style_context(widget), &fg);
    double sx = self->r11.x - self->r00.x, sy = self->r11.y - self->r00.y, t = self->r00.w;
    struct { int l, h; float width; const GdkRGBA *c; } marks[] = {
        {self->hover_layer, self->hover_head, 1.5f, &fg},
        {self->sel_layer, self->sel_head, 3.0f, &accent},
    };
    for (guint i = 0; i < G_N_ELEMENTS(marks); i++) {
        if (marks[i].l < 0 || marks[i].h < 0)
            continue;
        float bw = marks[i].width;
        graphene_rect_t r = GRAPHENE_RECT_INIT(self->r00.x + marks[i].h * sx - bw, self->r00.y + marks[i].l * sy - bw,
                                               t + 2 * bw, t + 2 * bw);
        GskRoundedRect rr;
        gsk_rounded_rect_init_from_rect(&rr, &r, 2);
        float widths[4] = {bw, bw, bw, bw};
        GdkRGBA colors[4] = {*marks[i].c, *marks[i].c, *marks[i].c, *marks[i].c};
        gtk_snapshot_append_border(s, &rr, widths, colors);
    }
}

static void atn_model_grid_measure(GtkWidget *widget, GtkOrientation o, int for_size, int *minimum, int *natural,
                                   int *mb, int *nb) {
    *minimum = 200;
    *natural = 600;
}

gboolean atn_model_grid_head_at(AtnModelGrid *self, double x, double y, int *layer, int *head) {
    g_return_val_if_fail(ATN_IS_MODEL_GRID(self), FALSE);
    *layer = *head = -1;
    atn_render_style style;
    atn_render_style_for_widget(GTK_WIDGET(self), self->font_scale, &style);
    atn_grid_spec spec;
    if (!fill_spec(self, &spec, &style))
        return FALSE;
    int32_t l, h;
    if (!atn_render_model_grid_head_at(&spec, gtk_widget_get_width(GTK_WIDGET(self)),
                                       gtk_widget_get_height(GTK_WIDGET(self)), x, y, &l, &h))
        return FALSE;
    *layer = l;
    *head = h;
    return TRUE;
}

static void on_motion(GtkEventControllerMotion *c, double x, double y, AtnModelGrid *self) {
    int l, h;
    atn_model_grid_head_at(self, x, y, &l, &h);
    if (l != self->hover_layer || h != self->hover_head) {
        self->hover_layer = l;
        self->hover_head = h;
        gtk_widget_queue_draw(GTK_WIDGET(self));
        gtk_widget_trigger_tooltip_query(GTK_WIDGET(self));
    }
}

static void on_leave(GtkEventControllerMotion *c, AtnModelGrid *self) {
    self->hover_layer = self->hover_head = -1;
    gtk_widget_queue_draw(GTK_WIDGET(self));
}

/* A head the layer has (an attention file's layers may have fewer: their empty places open nothing). */
static gboolean present_at(AtnModelGrid *self, double x, double y, int *l, int *h) {
    return atn_model_grid_head_at(self, x, y, l, h) &&
           (self->stack_shown || atn_capture_head_present(atn_result_get_capture(self->result), *l, *h));
}

static void on_pressed(GtkGestureClick *g, int n, double x, double y, AtnModelGrid *self) {
    int l, h;
    if (present_at(self, x, y, &l, &h))
        g_signal_emit(self, signals[SIGNAL_HEAD_ACTIVATED], 0, l, h);
}

static void on_secondary(GtkGestureClick *g, int n, double x, double y, AtnModelGrid *self) {
    int l, h;
    if (present_at(self, x, y, &l, &h)) {
        gtk_gesture_set_state(GTK_GESTURE(g), GTK_EVENT_SEQUENCE_CLAIMED);
        g_signal_emit(self, signals[SIGNAL_HEAD_MENU], 0, l, h);
    }
}

static char *grid_tooltip_text(AtnModelGrid *self, int l, int h) {
    int H = atn_result_get_n_heads(self->result);
    const atn_capture *lc = atn_result_get_capture(self->result);
    if (!self->stack_shown && lc->layer_heads && !atn_capture_head_present(lc, l, h))   /* an attention file's */
        return g_strdup_printf(_("Layer %d has no head %d: it has %d heads (the file's layers differ)"), l, h,
                               lc->layer_heads[l]);
    g_autofree char *text = self->notes && !self->stack_shown && self->notes[l * H + h]
                                ? g_strdup_printf(_("Layer %d, head %d: %s — click to open"), l, h, self->notes[l * H + h])
                                : g_strdup_printf(_("Layer %d, head %d — click to open"), l, h);
    g_autofree char *shared = atn_label_layer_sharing(atn_model_handle_get_model(atn_result_get_model(self->result)), l);
    if (shared) {   /* ALBERT: the layer runs weights other layers run too */
        char *both = g_strdup_printf("%s\n%s", text, shared);
        g_free(text);
        text = both;
    }
    const atn_capture *cap = atn_result_get_capture(self->result);
    int group = cap->n_kv_heads > 0 ? cap->n_heads / cap->n_kv_heads : 1;
    if (group > 1) {   /* grouped-query attention: the K/V head this query head reads */
        char *kv = g_strdup_printf(_("Reads K/V head %d, shared with heads %d–%d"), h / group, h / group * group,
                                   h / group * group + group - 1);
        char *both = g_strdup_printf("%s\n%s", text, kv);
        g_free(kv);
        g_free(text);
        text = both;
    }
    AtnWhatifHead st = atn_whatif_get_head(atn_whatif_of_result(self->result), l, h);
    const char *state = st == ATN_WHATIF_HEAD_OFF       ? _("What-if: switched off, it outputs zero")
                        : st == ATN_WHATIF_HEAD_UNIFORM ? _("What-if: switched off, it attends uniformly")
                                                        : NULL;
    return g_strdup_printf("%s%s%s\n%s", text, state ? "\n" : "", state ? state : "",
                           _("Right-click (or Shift+F10): switch it off, make it uniform, keep only it"));
}

static gboolean on_query_tooltip(GtkWidget *w, int x, int y, gboolean kb, GtkTooltip *tip, gpointer data) {
    AtnModelGrid *self = ATN_MODEL_GRID(w);
    int l, h;
    if (!atn_model_grid_head_at(self, x, y, &l, &h))
        return FALSE;
    g_autofree char *text = grid_tooltip_text(self, l, h);
    gtk_tooltip_set_text(tip, text);
    return TRUE;
}

/* A popover child (the Model view's what-if menu) is placed by its parent. */
static void atn_model_grid_size_allocate(GtkWidget *widget, int width, int height, int baseline) {
    for (GtkWidget *c = gtk_widget_get_first_child(widget); c; c = gtk_widget_get_next_sibling(c))
        if (GTK_IS_POPOVER(c))
            gtk_popover_present(GTK_POPOVER(c));
}

static void atn_model_grid_css_changed(GtkWidget *widget, GtkCssStyleChange *change) {
    GTK_WIDGET_CLASS(atn_model_grid_parent_class)->css_changed(widget, change);
    invalidate_figure(ATN_MODEL_GRID(widget));
}

static void atn_model_grid_dispose(GObject *object) {
    AtnModelGrid *self = ATN_MODEL_GRID(object);
    cancel_recolour(self);
    drop_thumbs(self);
    g_clear_pointer(&self->base, gsk_render_node_unref);
    g_clear_object(&self->result);
    g_clear_pointer(&self->notes, g_strfreev);
    g_clear_pointer(&self->layer_labels, g_strfreev);
    G_OBJECT_CLASS(atn_model_grid_parent_class)->dispose(object);
}

static void atn_model_grid_class_init(AtnModelGridClass *klass) {
    GtkWidgetClass *wc = GTK_WIDGET_CLASS(klass);
    G_OBJECT_CLASS(klass)->dispose = atn_model_grid_dispose;
    wc->snapshot = atn_model_grid_snapshot;
    wc->measure = atn_model_grid_measure;
    wc->size_allocate = atn_model_grid_size_allocate;
    wc->css_changed = atn_model_grid_css_changed;
    gtk_widget_class_set_css_name(wc, "modelgrid");
    gtk_widget_class_set_accessible_role(wc, GTK_ACCESSIBLE_ROLE_IMG);   /* a figure for screen readers */
    signals[SIGNAL_HEAD_ACTIVATED] = g_signal_new("head-activated", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0,
                                                  NULL, NULL, NULL, G_TYPE_NONE, 2, G_TYPE_INT, G_TYPE_INT);
    /* a secondary click on a thumbnail: the Model view opens its what-if menu */
    signals[SIGNAL_HEAD_MENU] = g_signal_new("head-menu", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                                             NULL, G_TYPE_NONE, 2, G_TYPE_INT, G_TYPE_INT);
}

static void atn_model_grid_init(AtnModelGrid *self) {
    gtk_accessible_update_property(GTK_ACCESSIBLE(self), GTK_ACCESSIBLE_PROPERTY_LABEL, _("Every layer and head of the model as small heatmaps"), -1);
    self->font_scale = 1.0;
    self->sel_layer = self->sel_head = self->hover_layer = self->hover_head = -1;
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
    GtkGesture *menu = gtk_gesture_click_new();
    gtk_gesture_single_set_button(GTK_GESTURE_SINGLE(menu), GDK_BUTTON_SECONDARY);
    g_signal_connect(menu, "pressed", G_CALLBACK(on_secondary), self);
    gtk_widget_add_controller(GTK_WIDGET(self), GTK_EVENT_CONTROLLER(menu));
    gtk_widget_set_focusable(GTK_WIDGET(self), TRUE);   /* Shift+F10 / Menu: the selected head's menu */
}

gboolean atn_model_grid_get_head_rect(AtnModelGrid *self, int layer, int head, graphene_rect_t *rect) {
    g_return_val_if_fail(ATN_IS_MODEL_GRID(self) && rect, FALSE);
    atn_render_style style;
    atn_render_style_for_widget(GTK_WIDGET(self), self->font_scale, &style);
    atn_grid_spec spec;
    int w = gtk_widget_get_width(GTK_WIDGET(self)), h = gtk_widget_get_height(GTK_WIDGET(self));
    if (!fill_spec(self, &spec, &style) || w <= 0 || h <= 0 || layer < 0 || layer >= spec.n_layers || head < 0 ||
        head >= spec.n_heads)
        return FALSE;
    atn_rect r = atn_render_model_grid_cell_rect(&spec, w, h, layer, head);
    *rect = GRAPHENE_RECT_INIT(r.x, r.y, r.w, r.h);
    return TRUE;
}

/* Row labels when layers share weights (ALBERT): "L2 ≡ L0" names the first layer that runs
 * the same stored weights; NULL when every layer has its own. */
static char **make_layer_labels(AtnResult *result) {
    const atn_model *m = result ? atn_model_handle_get_model(atn_result_get_model(result)) : NULL;
    int L = result ? atn_result_get_n_layers(result) : 0;
    gboolean any = FALSE;
    for (int l = 0; m && l < L; l++)
        any |= atn_model_layer_weights(m, l, NULL, NULL) > 1;
    if (!any)
        return NULL;
    char **labels = g_new0(char *, (gsize)L + 1);
    for (int l = 0; l < L; l++) {
        int32_t g, j, first = l;
        atn_model_layer_weights(m, l, &g, &j);
        for (int k = 0; k < l && first == l; k++) {
            int32_t g2, j2;
            if (atn_model_layer_weights(m, k, &g2, &j2) && g2 == g && j2 == j)
                first = k;
        }
        labels[l] = first == l ? g_strdup_printf("L%d", l) : g_strdup_printf("L%d \u2261 L%d", l, first);
    }
    return labels;
}

GtkWidget *atn_model_grid_new(void) { return g_object_new(ATN_TYPE_MODEL_GRID, NULL); }

void atn_model_grid_set_result(AtnModelGrid *self, AtnResult *result) {
    g_return_if_fail(ATN_IS_MODEL_GRID(self));
    if (result == self->result)
        return;
    cancel_recolour(self);   /* it was for the result before */
    g_set_object(&self->result, result);
    g_clear_pointer(&self->notes, g_strfreev);
    g_clear_pointer(&self->layer_labels, g_strfreev);
    self->layer_labels = make_layer_labels(result);
    atn_model_grid_invalidate(self);
}

/* Another colour map or scale: recoloured in a worker now (even while hidden, so that showing
 * the view finds them), the figure redrawn when they are there; at once when the result
 * already has them. */
static void restyle(AtnModelGrid *self) {
    cancel_recolour(self);
    start_recolour(self);
    if (!self->recolour)   /* the result has them (or there is nothing to colour): now */
        invalidate_figure(self);
}

void atn_model_grid_cancel_recolour(AtnModelGrid *self) {
    g_return_if_fail(ATN_IS_MODEL_GRID(self));
    cancel_recolour(self);
}

void atn_model_grid_update_colours(AtnModelGrid *self) {
    g_return_if_fail(ATN_IS_MODEL_GRID(self));
    if (self->pix && !self->recolour) {
        g_autoptr(AtnThumbPixels) have =
            self->result ? atn_result_dup_thumb_pixels(self->result, self->cmap, self->shared_range, FALSE) : NULL;
        if (have != self->pix)
            restyle(self);
    }
}

gboolean atn_model_grid_get_recolouring(AtnModelGrid *self) {
    g_return_val_if_fail(ATN_IS_MODEL_GRID(self), FALSE);
    return self->recolour != NULL;
}

guint atn_model_grid_get_n_recolours(AtnModelGrid *self) {
    g_return_val_if_fail(ATN_IS_MODEL_GRID(self), 0);
    return self->n_recolours;
}

void atn_model_grid_set_colormap(AtnModelGrid *self, atn_colormap cm) {
    g_return_if_fail(ATN_IS_MODEL_GRID(self));
    if (cm == self->cmap)
        return;
    self->cmap = cm;
    restyle(self);
}

void atn_model_grid_set_font_scale(AtnModelGrid *self, double scale) {
    g_return_if_fail(ATN_IS_MODEL_GRID(self));
    if (scale == self->font_scale)
        return;
    self->font_scale = scale;
    invalidate_figure(self);
}

void atn_model_grid_set_shared_range(AtnModelGrid *self, gboolean shared) {
    g_return_if_fail(ATN_IS_MODEL_GRID(self));
    if (shared == self->shared_range)
        return;
    self->shared_range = shared;
    restyle(self);
}

void atn_model_grid_set_notes(AtnModelGrid *self, const char *const *notes) {
    g_return_if_fail(ATN_IS_MODEL_GRID(self));
    g_clear_pointer(&self->notes, g_strfreev);
    self->notes = notes ? g_strdupv((char **)notes) : NULL;
    invalidate_figure(self);
}

void atn_model_grid_set_selected(AtnModelGrid *self, int layer, int head) {
    g_return_if_fail(ATN_IS_MODEL_GRID(self));
    self->sel_layer = layer;
    self->sel_head = head;
    gtk_widget_queue_draw(GTK_WIDGET(self));
}

typedef struct grid_figure {
    atn_grid_spec spec;
    double shared[2];
    atn_render_style style;
    AtnResult *result;
    char **notes;
    char **layer_labels;
    char *title;
} grid_figure;

static void grid_figure_free(gpointer data) {
    grid_figure *f = data;
    g_clear_object(&f->result);
    g_strfreev(f->notes);
    g_strfreev(f->layer_labels);
    g_free(f->title);
    g_free(f);
}

static void grid_figure_draw(cairo_t *cr, double width, double height, void *data) {
    grid_figure *f = data;
    atn_render_model_grid(cr, &f->spec, width, height);
}

AtnFigure *atn_model_grid_dup_figure(AtnModelGrid *self) {
    g_return_val_if_fail(ATN_IS_MODEL_GRID(self), NULL);
    grid_figure *f = g_new0(grid_figure, 1);
    atn_render_style_init(&f->style, FALSE);
    if (!fill_spec(self, &f->spec, &f->style)) {
        g_free(f);
        return NULL;
    }
    /* the style asked for, whatever a recolour in flight still shows; the cells at full size */
    f->spec.colormap = self->cmap;
    f->spec.shared_range = self->shared_range;
    f->spec.shared_vmin_vmax = NULL;
    if (!self->stack_shown && self->pix && atn_thumb_pixels_get_colormap(self->pix) == self->cmap &&
        atn_thumb_pixels_get_shared_range(self->pix, &f->shared[0], &f->shared[1]) == self->shared_range)
        f->spec.shared_vmin_vmax = f->shared;   /* no pass over every head */
    f->result = g_object_ref(self->result);
    if (!self->stack_shown) {   /* a decoder or cross stack has neither */
        f->notes = self->notes ? g_strdupv(self->notes) : NULL;
        f->spec.head_notes = (const char *const *)f->notes;
        f->layer_labels = self->layer_labels ? g_strdupv(self->layer_labels) : NULL;
        f->spec.layer_labels = (const char *const *)f->layer_labels;
    }
    f->title = atn_whatif_title(atn_whatif_of_result(self->result),
                                atn_model_handle_get_name(atn_result_get_model(self->result)));
    if (atn_result_is_encdec(self->result)) {   /* which of the three stacks */
        char *t = g_strdup_printf("%s · %s", f->title, atn_encdec_stack_title(self->stack));
        g_free(f->title);
        f->title = t;
    }
    f->spec.title = f->title;
    double w, h;
    atn_render_model_grid_natural_size(&f->spec, &w, &h);
    const atn_stack *st = self->stack_shown ? atn_result_get_stack(self->result, self->stack) : NULL;
    return atn_figure_new(w, h, grid_figure_draw, f, grid_figure_free, st ? (st->kind == ATN_STACK_CROSS ? "model-cross"
                                                                                  : "model-decoder") : "model");
}

void atn_model_grid_set_stack(AtnModelGrid *self, int stack) {
    g_return_if_fail(ATN_IS_MODEL_GRID(self));
    if (stack == self->stack)
        return;
    self->stack = stack;
    invalidate_figure(self);
}

char *atn_model_grid_dup_layer_label(AtnModelGrid *self, int layer) {
    g_return_val_if_fail(ATN_IS_MODEL_GRID(self), NULL);
    int L = self->result ? atn_result_get_n_layers(self->result) : 0;
    if (layer < 0 || layer >= L)
        return NULL;
    return self->layer_labels ? g_strdup(self->layer_labels[layer]) : g_strdup_printf("L%d", layer);
}

char *atn_model_grid_dup_layer_tooltip(AtnModelGrid *self, int layer, int head) {
    g_return_val_if_fail(ATN_IS_MODEL_GRID(self), NULL);
    if (!self->result || layer < 0 || layer >= atn_result_get_n_layers(self->result))
        return NULL;
    return grid_tooltip_text(self, layer, head);
}
