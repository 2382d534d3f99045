/* AtnSimilarityMap: the similarity matrix, drawn by ui/render into a cached node. */
#include "atn-similarity-map.h"
#include "atn-similarity-map-test.h"

#include <glib/gi18n.h>

#include "atn-labels.h"

struct _AtnSimilarityMap {
    GtkWidget parent_instance;
    atn_similarity *sim;
    /* K/V groups (atn_similarity_map_set_kv_groups): sim gathered by group, drawn as gsim (the
       group-by-group matrix in group order, no clustering) with glabels; NULL: the heads */
    atn_kv_groups *groups;
    atn_similarity *gsim;
    char **glabels;            /* [gsim->count] */
    gboolean clustered;
    atn_colormap cmap;
    double font_scale;
    int hl_a, hl_b;
    GskRenderNode *base;
    int base_w, base_h;
    /* the figure's layout for hit-testing, at lay_w x lay_h: a hover (a tooltip query on every
       motion) laid out 144 heads' labels three times, 18.5 ms of the main thread */
    atn_similarity_layout lay;
    int lay_w, lay_h;          /* 0: none */
    guint n_layouts;           /* figure layouts made for hit-testing (tests) */
};

G_DEFINE_FINAL_TYPE(AtnSimilarityMap, atn_similarity_map, GTK_TYPE_WIDGET)

enum { SIGNAL_PAIR_ACTIVATED, N_SIGNALS };
static guint signals[N_SIGNALS];

static void invalidate(AtnSimilarityMap *self) {
    g_clear_pointer(&self->base, gsk_render_node_unref);
    self->lay_w = self->lay_h = 0;
    gtk_widget_queue_draw(GTK_WIDGET(self));
}

/* What the map draws: the groups' matrix while there are groups, else the heads'. */
static const atn_similarity *shown(AtnSimilarityMap *self) { return self->gsim ? self->gsim : self->sim; }

static char *title_of(const atn_similarity *sim, gboolean groups) {
    if (groups && sim->scope == ATN_SCOPE_LAYER)
        /* Translators: %s is a metric ("Jensen-Shannon distance"); each cell a mean over pairs of heads */
        return g_strdup_printf(_("%s between the K/V groups of layer %d (mean over pairs of heads)"),
                               atn_label_metric(sim->metric), sim->layer);
    if (groups)
        return g_strdup_printf(_("%s between the K/V groups of every layer (mean over pairs of heads)"),
                               atn_label_metric(sim->metric));
    if (sim->scope == ATN_SCOPE_LAYER)
        return g_strdup_printf(_("%s between the heads of layer %d"), atn_label_metric(sim->metric), sim->layer);
    return g_strdup_printf(_("%s between every pair of heads"), atn_label_metric(sim->metric));
}

static const char *groups_legend(void) {
    return _("A cell: the mean over the pairs of heads of two K/V groups (query heads that share one K/V head); "
             "the diagonal, over the pairs of heads within one group.");
}

static void fill_spec(AtnSimilarityMap *self, atn_similarity_spec *spec, const atn_render_style *style) {
    atn_similarity_spec_init(spec);
    spec->sim = shown(self);
    spec->clustered = self->clustered && !self->gsim;   /* groups in their order, K/V head by K/V head */
    spec->show_dendrogram = spec->clustered;
    if (self->gsim) {
        spec->labels = (const char *const *)self->glabels;
        spec->legend = groups_legend();
    }
    spec->colormap = self->cmap;
    spec->highlight_a = self->hl_a;
    spec->highlight_b = self->hl_b;
    spec->style = style;
}

/* The spec the widget draws and hit-tests with, in its own style at its text size; returns
 * the title the spec points to (the caller frees it after the spec's last use). */
static char *widget_spec(AtnSimilarityMap *self, atn_similarity_spec *spec, atn_render_style *style) {
    atn_render_style_for_widget(GTK_WIDGET(self), self->font_scale, style);
    fill_spec(self, spec, style);
    char *title = title_of(shown(self), self->gsim != NULL);
    spec->title = title;
    return title;
}

static void atn_similarity_map_snapshot(GtkWidget *widget, GtkSnapshot *s) {
    AtnSimilarityMap *self = ATN_SIMILARITY_MAP(widget);
    int w = gtk_widget_get_width(widget), h = gtk_widget_get_height(widget);
    if (!shown(self) || w <= 0 || h <= 0)
        return;
    if (!self->base || self->base_w != w || self->base_h != h) {
        g_clear_pointer(&self->base, gsk_render_node_unref);
        atn_render_style style;
        atn_similarity_spec spec;
        g_autofree char *title = widget_spec(self, &spec, &style);
        GtkSnapshot *sub = gtk_snapshot_new();
        cairo_t *cr = gtk_snapshot_append_cairo(sub, &GRAPHENE_RECT_INIT(0, 0, w, h));
        atn_render_similarity(cr, &spec, w, h);
        cairo_destroy(cr);
        self->base = gtk_snapshot_free_to_node(sub);
        self->base_w = w;
        self->base_h = h;
    }
    gtk_snapshot_append_node(s, self->base);
}

static void atn_similarity_map_measure(GtkWidget *widget, GtkOrientation o, int for_size, int *minimum,
                                       int *natural, int *mb, int *nb) {
    *minimum = 200;
    *natural = 560;
}

gboolean atn_similarity_map_pair_at(AtnSimilarityMap *self, double x, double y, int *a, int *b) {
    g_return_val_if_fail(ATN_IS_SIMILARITY_MAP(self), FALSE);
    *a = *b = -1;
    if (!shown(self))
        return FALSE;
    int w = gtk_widget_get_width(GTK_WIDGET(self)), h = gtk_widget_get_height(GTK_WIDGET(self));
    atn_render_style style;
    atn_similarity_spec spec;
    g_autofree char *title = widget_spec(self, &spec, &style);
    if (w <= 0 || h <= 0)
        return FALSE;
    if (self->lay_w != w || self->lay_h != h) {   /* once per size and figure (invalidate) */
        if (!atn_render_similarity_layout(&spec, w, h, &self->lay))
            return FALSE;
        self->lay_w = w;
        self->lay_h = h;
        self->n_layouts++;
    }
    int32_t ia, ib;
    if (!atn_render_similarity_cell_at_layout(&spec, &self->lay, x, y, &ia, &ib))
        return FALSE;
    *a = ia;
    *b = ib;
    return TRUE;
}

guint atn_similarity_map_get_n_layouts(AtnSimilarityMap *self) {
    g_return_val_if_fail(ATN_IS_SIMILARITY_MAP(self), 0);
    return self->n_layouts;
}

gboolean atn_similarity_map_get_layout(AtnSimilarityMap *self, atn_similarity_layout *out) {
    g_return_val_if_fail(ATN_IS_SIMILARITY_MAP(self) && out, FALSE);
    int w = gtk_widget_get_width(GTK_WIDGET(self)), h = gtk_widget_get_height(GTK_WIDGET(self));
    if (!shown(self) || w <= 0 || h <= 0)
        return FALSE;
    atn_render_style style;
    atn_similarity_spec spec;
    g_autofree char *title = widget_spec(self, &spec, &style);
    return atn_render_similarity_layout(&spec, w, h, out);
}

static gboolean on_query_tooltip(GtkWidget *w, int x, int y, gboolean kb, GtkTooltip *tip, gpointer data) {
    AtnSimilarityMap *self = ATN_SIMILARITY_MAP(w);
    int a, b;
    if (!atn_similarity_map_pair_at(self, x, y, &a, &b))
        return FALSE;
    if (self->gsim) {
        g_autofree char *text = atn_similarity_map_dup_group_pair_text(self, a, b);
        gtk_tooltip_set_text(tip, text);
        return TRUE;
    }
    char la[32], lb[32];
    atn_similarity_label(self->sim, a, la, sizeof la);
    atn_similarity_label(self->sim, b, lb, sizeof lb);
    g_autofree char *text = g_strdup_printf(_("%s and %s: %.4f — click to compare"), la, lb,
                                            self->sim->values[(size_t)a * self->sim->count + b]);
    gtk_tooltip_set_text(tip, text);
    return TRUE;
}

static void on_motion(GtkEventControllerMotion *c, double x, double y, AtnSimilarityMap *self) {
    gtk_widget_trigger_tooltip_query(GTK_WIDGET(self));
}

static void on_pressed(GtkGestureClick *g, int n, double x, double y, AtnSimilarityMap *self) {
    int a, b;
    if (atn_similarity_map_pair_at(self, x, y, &a, &b))
        g_signal_emit(self, signals[SIGNAL_PAIR_ACTIVATED], 0, a, b);
}

static void atn_similarity_map_css_changed(GtkWidget *widget, GtkCssStyleChange *change) {
    GTK_WIDGET_CLASS(atn_similarity_map_parent_class)->css_changed(widget, change);
    invalidate(ATN_SIMILARITY_MAP(widget));
}

static void atn_similarity_map_dispose(GObject *object) {
    AtnSimilarityMap *self = ATN_SIMILARITY_MAP(object);
    atn_similarity_map_set_kv_groups(self, NULL);
    g_clear_pointer(&self->sim, atn_similarity_free);
    g_clear_pointer(&self->base, gsk_render_node_unref);
    G_OBJECT_CLASS(atn_similarity_map_parent_class)->dispose(object);
}

static void atn_similarity_map_class_init(AtnSimilarityMapClass *klass) {
    GtkWidgetClass *wc = GTK_WIDGET_CLASS(klass);
    G_OBJECT_CLASS(klass)->dispose = atn_similarity_map_dispose;
    wc->snapshot = atn_similarity_map_snapshot;
    wc->measure = atn_similarity_map_measure;
    wc->css_changed = atn_similarity_map_css_changed;
    gtk_widget_class_set_css_name(wc, "similaritymap");
    gtk_widget_class_set_accessible_role(wc, GTK_ACCESSIBLE_ROLE_IMG);   /* a figure for screen readers */
    signals[SIGNAL_PAIR_ACTIVATED] = g_signal_new("pair-activated", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0,
                                                  NULL, NULL, NULL, G_TYPE_NONE, 2, G_TYPE_INT, G_TYPE_INT);
}

static void atn_similarity_map_init(AtnSimilarityMap *self) {
    gtk_accessible_update_property(GTK_ACCESSIBLE(self), GTK_ACCESSIBLE_PROPERTY_LABEL, _("How alike the heads attend: a head-by-head matrix"), -1);
    self->clustered = TRUE;
    self->font_scale = 1.0;
    self->hl_a = self->hl_b = -1;
    gtk_widget_set_hexpand(GTK_WIDGET(self), TRUE);
    gtk_widget_set_vexpand(GTK_WIDGET(self), TRUE);
    gtk_widget_set_has_tooltip(GTK_WIDGET(self), TRUE);
    g_signal_connect(self, "query-tooltip", G_CALLBACK(on_query_tooltip), NULL);
    GtkEventController *motion = gtk_event_controller_motion_new();
    g_signal_connect(motion, "motion", G_CALLBACK(on_motion), self);
    gtk_widget_add_controller(GTK_WIDGET(self), motion);
    GtkGesture *click = gtk_gesture_click_new();
    g_signal_connect(click, "pressed", G_CALLBACK(on_pressed), self);
    gtk_widget_add_controller(GTK_WIDGET(self), GTK_EVENT_CONTROLLER(click));
}

GtkWidget *atn_similarity_map_new(void) { return g_object_new(ATN_TYPE_SIMILARITY_MAP, NULL); }

void atn_similarity_map_set_similarity(AtnSimilarityMap *self, atn_similarity *sim) {
    g_return_if_fail(ATN_IS_SIMILARITY_MAP(self));
    atn_similarity_map_set_kv_groups(self, NULL);   /* they were the old similarity's */
    g_clear_pointer(&self->sim, atn_similarity_free);
    self->sim = sim;
    self->hl_a = self->hl_b = -1;
    invalidate(self);
}

const atn_similarity *atn_similarity_map_get_similarity(AtnSimilarityMap *self) {
    g_return_val_if_fail(ATN_IS_SIMILARITY_MAP(self), NULL);
    return self->sim;
}

void atn_similarity_map_set_clustered(AtnSimilarityMap *self, gboolean clustered) {
    g_return_if_fail(ATN_IS_SIMILARITY_MAP(self));
    self->clustered = clustered;
    invalidate(self);
}

void atn_similarity_map_set_colormap(AtnSimilarityMap *self, atn_colormap cm) {
    g_return_if_fail(ATN_IS_SIMILARITY_MAP(self));
    self->cmap = cm;
    invalidate(self);
}

void atn_similarity_map_set_font_scale(AtnSimilarityMap *self, double scale) {
    g_return_if_fail(ATN_IS_SIMILARITY_MAP(self));
    self->font_scale = scale;
    invalidate(self);
}

void atn_similarity_map_set_highlight(AtnSimilarityMap *self, int a, int b) {
    g_return_if_fail(ATN_IS_SIMILARITY_MAP(self));
    self->hl_a = a;
    self->hl_b = b;
    invalidate(self);
}

typedef struct sim_figure {
    atn_similarity_spec spec;
    atn_render_style style;
    atn_similarity *sim;   /* a private copy */
    char *title;
    char **labels;         /* the groups' names (a copy), or NULL */
} sim_figure;

static void similarity_copy_free(atn_similarity *c);

static void sim_figure_free(gpointer data) {
    sim_figure *f = data;
    similarity_copy_free(f->sim);
    g_free(f->title);
    g_strfreev(f->labels);
    g_free(f);
}

static void sim_figure_draw(cairo_t *cr, double width, double height, void *data) {
    sim_figure *f = data;
    atn_render_similarity(cr, &f->spec, width, height);
}

/* A deep copy, so an export in a worker thread never races a recompute. */
static atn_similarity *similarity_copy(const atn_similarity *s) {
    atn_similarity *c = g_new0(atn_similarity, 1);
    *c = *s;
    size_t n = (size_t)s->count;
    c->layer_of = g_memdup2(s->layer_of, n * sizeof(int32_t));
    c->head_of = g_memdup2(s->head_of, n * sizeof(int32_t));
    c->values = g_memdup2(s->values, n * n * sizeof(double));
    c->order = g_memdup2(s->order, n * sizeof(int32_t));
    c->merge_a = n > 1 && s->merge_a ? g_memdup2(s->merge_a, (n - 1) * sizeof(int32_t)) : NULL;
    c->merge_b = n > 1 && s->merge_b ? g_memdup2(s->merge_b, (n - 1) * sizeof(int32_t)) : NULL;
    c->merge_height = n > 1 && s->merge_height ? g_memdup2(s->merge_height, (n - 1) * sizeof(double)) : NULL;
    return c;
}

static void similarity_copy_free(atn_similarity *c) {
    if (!c)
        return;
    g_free(c->layer_of);
    g_free(c->head_of);
    g_free(c->values);
    g_free(c->order);
    g_free(c->merge_a);
    g_free(c->merge_b);
    g_free(c->merge_height);
    g_free(c);
}

AtnFigure *atn_similarity_map_dup_figure(AtnSimilarityMap *self) {
    g_return_val_if_fail(ATN_IS_SIMILARITY_MAP(self), NULL);
    if (!shown(self))
        return NULL;
    sim_figure *f = g_new0(sim_figure, 1);
    atn_render_style_init(&f->style, FALSE);
    f->sim = similarity_copy(shown(self));
    fill_spec(self, &f->spec, &f->style);
    f->spec.sim = f->sim;
    if (self->glabels) {
        f->labels = g_strdupv(self->glabels);
        f->spec.labels = (const char *const *)f->labels;
    }
    f->title = title_of(shown(self), self->gsim != NULL);
    f->spec.title = f->title;
    double w, h;
    atn_render_similarity_natural_size(&f->spec, &w, &h);
    return atn_figure_new(w, h, sim_figure_draw, f, sim_figure_free, "similarity");
}

static void groups_clear(AtnSimilarityMap *self) {
    g_clear_pointer(&self->groups, atn_kv_groups_free);
    g_clear_pointer(&self->gsim, similarity_copy_free);
    g_clear_pointer(&self->glabels, g_strfreev);
}

void atn_similarity_map_set_kv_groups(AtnSimilarityMap *self, atn_kv_groups *groups) {
    g_return_if_fail(ATN_IS_SIMILARITY_MAP(self));
    if (!groups && !self->groups)
        return;
    groups_clear(self);
    self->hl_a = self->hl_b = -1;
    if (groups && self->sim) {
        /* the groups' matrix as a similarity of g->count "heads", for the renderer */
        int32_t n = groups->count;
        atn_similarity *g = g_new0(atn_similarity, 1);
        *g = *self->sim;
        g->count = n;
        g->n_heads = groups->kv_heads;
        g->layer_of = g_memdup2(groups->layer_of, (size_t)n * sizeof(int32_t));
        g->head_of = g_memdup2(groups->kv_of, (size_t)n * sizeof(int32_t));
        g->values = g_memdup2(groups->values, (size_t)n * n * sizeof(double));
        g->order = g_new(int32_t, n);
        g->merge_a = g->merge_b = NULL;
        g->merge_height = NULL;
        self->glabels = g_new0(char *, n + 1);
        for (int32_t a = 0; a < n; a++) {
            g->order[a] = a;
            self->glabels[a] = self->sim->scope == ATN_SCOPE_LAYER
                                   ? g_strdup_printf("KV%d", groups->kv_of[a])
                                   : g_strdup_printf("L%d\u00b7KV%d", groups->layer_of[a], groups->kv_of[a]);
        }
        self->gsim = g;
        self->groups = groups;
    } else if (groups) {
        atn_kv_groups_free(groups);
    }
    invalidate(self);
}

const atn_kv_groups *atn_similarity_map_get_kv_groups(AtnSimilarityMap *self) {
    g_return_val_if_fail(ATN_IS_SIMILARITY_MAP(self), NULL);
    return self->groups;
}

char *atn_similarity_map_dup_group_label(AtnSimilarityMap *self, int a) {
    g_return_val_if_fail(ATN_IS_SIMILARITY_MAP(self), NULL);
    return self->gsim && a >= 0 && a < self->gsim->count ? g_strdup(self->glabels[a]) : NULL;
}

char *atn_similarity_map_dup_group_pair_text(AtnSimilarityMap *self, int a, int b) {
    g_return_val_if_fail(ATN_IS_SIMILARITY_MAP(self), NULL);
    const atn_kv_groups *g = self->groups;
    if (!g || a < 0 || b < 0 || a >= g->count || b >= g->count)
        return NULL;
    int per = g->per_group;
    /* pairs of distinct heads: within one group each pair once, across two every head with every head */
    int pairs = a == b ? per * (per - 1) / 2 : per * per;
    double v = g->values[(size_t)a * g->count + b];
    g_autofree char *ha = g_strdup_printf(_("heads %d–%d"), g->kv_of[a] * per, g->kv_of[a] * per + per - 1);
    g_autofree char *hb = g_strdup_printf(_("heads %d–%d"), g->kv_of[b] * per, g->kv_of[b] * per + per - 1);
    if (a == b)
        /* Translators: "KV1 (heads 2–3): mean Jensen-Shannon distance 0.1234 over the 1 pairs of heads within the group" */
        return g_strdup_printf(_("%s (%s): mean %s %.4f over the %d pairs of heads within the group"),
                               self->glabels[a], ha, atn_label_metric(self->sim->metric), v, pairs);
    /* Translators: "KV0 (heads 0–1) and KV1 (heads 2–3): mean cosine similarity 0.8123 over 4 pairs of heads" */
    return g_strdup_printf(_("%s (%s) and %s (%s): mean %s %.4f over %d pairs of heads"), self->glabels[a], ha,
                           self->glabels[b], hb, atn_label_metric(self->sim->metric), v, pairs);
}
