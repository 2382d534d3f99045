/* AtnFitLabel: status text fitted into the room its row gives it (see atn-fit-label.h). */
#include "atn-fit-label.h"
#include "atn-fit-label-test.h"

#include <string.h>

struct _AtnFitLabel {
    GtkWidget parent_instance;
    char **texts;     /* [0] the full text, then the shorter wordings; NULL-terminated, or NULL */
    float xalign;
    int max_lines;
    gboolean grow;    /* asks for the lines its width needs (height-for-width), up to max_lines */
};

G_DEFINE_FINAL_TYPE(AtnFitLabel, atn_fit_label, GTK_TYPE_WIDGET)

static const double scales[] = {1.0, 0.9, 0.8, 0.7};

/* A layout of text at scale of the widget's font, wrapped at width (px) when lines > 1. */
static PangoLayout *make_layout(AtnFitLabel *self, const char *text, double scale, int width, gboolean wrap) {
    PangoLayout *l = gtk_widget_create_pango_layout(GTK_WIDGET(self), text);
    if (scale != 1.0) {
        PangoContext *ctx = gtk_widget_get_pango_context(GTK_WIDGET(self));
        PangoFontDescription *fd = pango_font_description_copy(pango_context_get_font_description(ctx));
        int size = pango_font_description_get_size(fd);
        if (pango_font_description_get_size_is_absolute(fd))
            pango_font_description_set_absolute_size(fd, size * scale);
        else
            pango_font_description_set_size(fd, (int)(size * scale));
        pango_layout_set_font_description(l, fd);
        pango_font_description_free(fd);
    }
    pango_layout_set_alignment(l, self->xalign >= 0.75f   ? PANGO_ALIGN_RIGHT
                                  : self->xalign >= 0.25f ? PANGO_ALIGN_CENTER
                                                          : PANGO_ALIGN_LEFT);
    if (wrap) {
        pango_layout_set_width(l, width * PANGO_SCALE);
        pango_layout_set_wrap(l, PANGO_WRAP_WORD_CHAR);
    }
    return l;
}

/* The first try that fits width x height: for each size (largest first), each wording (the
 * full text first), one line, then wrapped onto as many lines as the height holds.  Nothing
 * fits: the shortest wording at the smallest size, ellipsized at the end of its last line. */
static PangoLayout *fit(AtnFitLabel *self, int width, int height, AtnFitLabelShown *shown) {
    memset(shown, 0, sizeof *shown);
    if (!self->texts || !self->texts[0] || !self->texts[0][0] || width <= 0 || height <= 0)
        return NULL;
    int n_texts = (int)g_strv_length(self->texts);
    for (guint si = 0; si < G_N_ELEMENTS(scales); si++) {
        for (int ti = 0; ti < n_texts; ti++) {
            PangoLayout *l = make_layout(self, self->texts[ti], scales[si], width, FALSE);
            int lw, lh;
            pango_layout_get_pixel_size(l, &lw, &lh);
            if (lh > height) {   /* not even one line of this size: a smaller size */
                g_object_unref(l);
                break;
            }
            if (lw <= width) {
                *shown = (AtnFitLabelShown){self->texts[ti], FALSE, 1, scales[si], lw, lh};
                return l;
            }
            g_object_unref(l);
            if (self->max_lines < 2)
                continue;
            l = make_layout(self, self->texts[ti], scales[si], width, TRUE);
            pango_layout_get_pixel_size(l, &lw, &lh);
            int lines = pango_layout_get_line_count(l);
            PangoRectangle ink, logical;
            pango_layout_get_pixel_extents(l, &ink, &logical);
            if (lines <= self->max_lines && lh <= height && logical.width <= width) {
                *shown = (AtnFitLabelShown){self->texts[ti], FALSE, lines, scales[si], logical.width, lh};
                return l;
            }
            g_object_unref(l);
        }
    }
    /* the last resort: cut, with the full text in the tooltip */
    double s = scales[G_N_ELEMENTS(scales) - 1];
    const char *text = self->texts[n_texts - 1];
    PangoLayout *l = make_layout(self, text, s, width, TRUE);
    int lw, lh;
    pango_layout_get_pixel_size(l, &lw, &lh);
    int line_h = lh / MAX(1, pango_layout_get_line_count(l));
    int lines = CLAMP(height / MAX(1, line_h), 1, self->max_lines);
    pango_layout_set_ellipsize(l, PANGO_ELLIPSIZE_END);
    pango_layout_set_height(l, -lines);
    pango_layout_get_pixel_size(l, &lw, &lh);
    *shown = (AtnFitLabelShown){text, pango_layout_is_ellipsized(l), pango_layout_get_line_count(l), s, lw, lh};
    if (!shown->cut)   /* it fitted after all, on fewer lines than asked for (cannot happen: it was tried) */
        shown->cut = lh > height;
    return l;
}

gboolean atn_fit_label_get_shown(AtnFitLabel *self, AtnFitLabelShown *shown) {
    g_return_val_if_fail(ATN_IS_FIT_LABEL(self) && shown, FALSE);
    PangoLayout *l = fit(self, gtk_widget_get_width(GTK_WIDGET(self)), gtk_widget_get_height(GTK_WIDGET(self)), shown);
    if (!l)
        return FALSE;
    g_object_unref(l);
    return TRUE;
}

static void atn_fit_label_snapshot(GtkWidget *widget, GtkSnapshot *snapshot) {
    AtnFitLabel *self = ATN_FIT_LABEL(widget);
    int w = gtk_widget_get_width(widget), h = gtk_widget_get_height(widget);
    AtnFitLabelShown shown;
    PangoLayout *l = fit(self, w, h, &shown);
    if (!l)
        return;
    PangoRectangle ink, logical;
    pango_layout_get_pixel_extents(l, &ink, &logical);
    /* a wrapped layout is width wide and aligns its lines itself; a single line is placed */
    double x = pango_layout_get_width(l) > 0 ? 0 : (w - logical.width) * self->xalign;
    double y = MAX(0, (h - shown.height) / 2);
    GdkRGBA fg;
    G_GNUC_BEGIN_IGNORE_DEPRECATIONS
    gtk_style_context_get_color(gtk_widget_get_style_context(widget), &fg);
    G_GNUC_END_IGNORE_DEPRECATIONS
    gtk_snapshot_save(snapshot);
    gtk_snapshot_push_clip(snapshot, &GRAPHENE_RECT_INIT(0, 0, w, h));
    gtk_snapshot_translate(snapshot, &GRAPHENE_POINT_INIT((float)x, (float)y));
    gtk_snapshot_append_layout(snapshot, l, &fg);
    gtk_snapshot_pop(snapshot);
    gtk_snapshot_restore(snapshot);
    g_object_unref(l);
}

/* The height of n lines of the normal font. */
static int lines_height(GtkWidget *widget, int n) {
    PangoLayout *l = gtk_widget_create_pango_layout(widget, n >= 3 ? "Ag国\nAg国\nAg国" : n == 2 ? "Ag国\nAg国" : "Ag国");
    int lw, lh;
    pango_layout_get_pixel_size(l, &lw, &lh);
    g_object_unref(l);
    return lh;
}

/* No width of its own; one line of the normal font in height, or (grow) as few lines as let the
 * text fit that width without a cut, up to max_lines. */
static void atn_fit_label_measure(GtkWidget *widget, GtkOrientation o, int for_size, int *min, int *nat, int *min_base,
                                  int *nat_base) {
    AtnFitLabel *self = ATN_FIT_LABEL(widget);
    if (o == GTK_ORIENTATION_HORIZONTAL) {
        *min = *nat = 0;
        return;
    }
    *min = *nat = lines_height(widget, 1);
    if (!self->grow || for_size <= 0)
        return;
    for (int n = 1; n <= MIN(3, self->max_lines); n++) {
        int h = lines_height(widget, n);
        *min = *nat = h;
        AtnFitLabelShown shown;
        PangoLayout *l = fit(self, for_size, h, &shown);
        if (!l)
            return;
        g_object_unref(l);
        if (!shown.cut)
            return;
    }
}

static GtkSizeRequestMode atn_fit_label_get_request_mode(GtkWidget *widget) {
    return ATN_FIT_LABEL(widget)->grow ? GTK_SIZE_REQUEST_HEIGHT_FOR_WIDTH : GTK_SIZE_REQUEST_CONSTANT_SIZE;
}

static gboolean on_query_tooltip(GtkWidget *widget, int x, int y, gboolean keyboard, GtkTooltip *tooltip,
                                 gpointer data) {
    AtnFitLabel *self = ATN_FIT_LABEL(widget);
    AtnFitLabelShown shown;
    if (!atn_fit_label_get_shown(self, &shown))
        return FALSE;
    if (!shown.cut && shown.text == self->texts[0])
        return FALSE;   /* all of it is on screen */
    gtk_tooltip_set_text(tooltip, self->texts[0]);
    return TRUE;
}

static void atn_fit_label_finalize(GObject *object) {
    g_strfreev(ATN_FIT_LABEL(object)->texts);
    G_OBJECT_CLASS(atn_fit_label_parent_class)->finalize(object);
}

static void atn_fit_label_class_init(AtnFitLabelClass *klass) {
    GtkWidgetClass *wc = GTK_WIDGET_CLASS(klass);
    G_OBJECT_CLASS(klass)->finalize = atn_fit_label_finalize;
    wc->snapshot = atn_fit_label_snapshot;
    wc->measure = atn_fit_label_measure;
    wc->get_request_mode = atn_fit_label_get_request_mode;
    gtk_widget_class_set_css_name(wc, "label");
    gtk_widget_class_set_accessible_role(wc, GTK_ACCESSIBLE_ROLE_LABEL);
}

static void atn_fit_label_init(AtnFitLabel *self) {
    self->max_lines = 3;
    gtk_widget_set_has_tooltip(GTK_WIDGET(self), TRUE);
    g_signal_connect(self, "query-tooltip", G_CALLBACK(on_query_tooltip), NULL);
}

GtkWidget *atn_fit_label_new(void) { return g_object_new(ATN_TYPE_FIT_LABEL, NULL); }

void atn_fit_label_set_text(AtnFitLabel *self, const char *text, const char *const *shorter) {
    g_return_if_fail(ATN_IS_FIT_LABEL(self));
    GStrvBuilder *b = g_strv_builder_new();
    g_strv_builder_add(b, text ? text : "");
    for (int i = 0; shorter && shorter[i]; i++)
        if (g_strcmp0(shorter[i], text))
            g_strv_builder_add(b, shorter[i]);
    char **texts = g_strv_builder_end(b);
    g_strv_builder_unref(b);
    if (self->texts && g_strv_equal((const char *const *)texts, (const char *const *)self->texts)) {
        g_strfreev(texts);
        return;
    }
    g_strfreev(self->texts);
    self->texts = texts;
    gtk_accessible_update_property(GTK_ACCESSIBLE(self), GTK_ACCESSIBLE_PROPERTY_LABEL, texts[0], -1);
    if (self->grow)
        gtk_widget_queue_resize(GTK_WIDGET(self));   /* its height depends on its text */
    else
        gtk_widget_queue_draw(GTK_WIDGET(self));
}

const char *atn_fit_label_get_text(AtnFitLabel *self) {
    g_return_val_if_fail(ATN_IS_FIT_LABEL(self), "");
    return self->texts ? self->texts[0] : "";
}

void atn_fit_label_set_xalign(AtnFitLabel *self, float xalign) {
    g_return_if_fail(ATN_IS_FIT_LABEL(self));
    self->xalign = CLAMP(xalign, 0.0f, 1.0f);
    gtk_widget_queue_draw(GTK_WIDGET(self));
}

void atn_fit_label_set_grow(AtnFitLabel *self, gboolean grow) {
    g_return_if_fail(ATN_IS_FIT_LABEL(self));
    self->grow = !!grow;
    gtk_widget_queue_resize(GTK_WIDGET(self));
}

void atn_fit_label_set_max_lines(AtnFitLabel *self, int lines) {
    g_return_if_fail(ATN_IS_FIT_LABEL(self));
    self->max_lines = MAX(1, lines);
    gtk_widget_queue_resize(GTK_WIDGET(self));
}
