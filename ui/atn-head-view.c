/* AtnHeadView: one head's heatmap, its selectors and its token lines. */
#include "atn-head-view.h"

#include "atn-view.h"

#include <glib/gi18n.h>

#include "atn-figure.h"
#include "atn-token-lines.h"

struct _AtnHeadView {
    GtkWidget parent_instance;
    GtkWidget *box;
    GtkAdjustment *layer_adj, *head_adj;
    GtkLabel *info_label;
    AtnHeatmap *heatmap;
    AtnTokenLines *lines;
    AtnSession *session;
    gboolean syncing;   /* adjustments being set from the session */
};

static void figure_source_iface_init(AtnFigureSourceInterface *iface);
static void view_iface_init(AtnViewInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE(AtnHeadView, atn_head_view, GTK_TYPE_WIDGET,
                              G_IMPLEMENT_INTERFACE(ATN_TYPE_FIGURE_SOURCE, figure_source_iface_init)
                              G_IMPLEMENT_INTERFACE(ATN_TYPE_VIEW, view_iface_init))

static void update_info(AtnHeadView *self, int row, int col) {
    AtnResult *r = self->session ? atn_session_get_result(self->session) : NULL;
    if (!r) {
        gtk_label_set_text(self->info_label, "");
        return;
    }
    g_autofree char *cell = atn_heatmap_dup_cell_text(self->heatmap, row, col);
    if (cell) {
        gtk_label_set_text(self->info_label, cell);
        return;
    }
    int q = atn_session_get_query(self->session);
    const char *const *tokens = atn_result_get_tokens(r);
    g_autofree char *text = g_strdup_printf(_("Query %d “%s” selected · click a row to select another"), q,
                                            q < atn_result_get_n_tokens(r) ? tokens[q] : "");
    gtk_label_set_text(self->info_label, text);
}

static void update_title(AtnHeadView *self) {
    AtnResult *r = atn_session_get_result(self->session);
    if (!r)
        return;
    g_autofree char *title = g_strdup_printf(_("%s · layer %d · head %d"),
                                             atn_model_handle_get_name(atn_result_get_model(r)),
                                             atn_session_get_layer(self->session), atn_session_get_head(self->session));
    atn_heatmap_set_title(self->heatmap, title);
}

static void update_matrix(AtnHeadView *self) {
    AtnResult *r = self->session ? atn_session_get_result(self->session) : NULL;
    if (!r) {
        atn_heatmap_set_matrix(self->heatmap, NULL, NULL, 0, 0, NULL, NULL, NULL);
        return;
    }
    int n = atn_result_get_n_tokens(r);
    const float *m = atn_result_get_head(r, atn_session_get_layer(self->session), atn_session_get_head(self->session));
    atn_heatmap_set_causal(self->heatmap, atn_result_is_causal(r));
    atn_heatmap_set_matrix(self->heatmap, G_OBJECT(r), m, n, n, atn_result_get_tokens(r), atn_result_get_tokens(r),
                           atn_result_get_mask(r));
    atn_heatmap_set_selected_row(self->heatmap, atn_session_get_query(self->session));
    atn_heatmap_set_highlight_token(self->heatmap, atn_session_get_hover_token(self->session));
    update_title(self);
    update_info(self, -1, -1);
}

static void sync_adjustments(AtnHeadView *self) {
    AtnResult *r = atn_session_get_result(self->session);
    self->syncing = TRUE;
    gtk_adjustment_set_upper(self->layer_adj, r ? atn_result_get_n_layers(r) - 1 : 0);
    gtk_adjustment_set_upper(self->head_adj, r ? atn_result_get_n_heads(r) - 1 : 0);
    gtk_adjustment_set_value(self->layer_adj, atn_session_get_layer(self->session));
    gtk_adjustment_set_value(self->head_adj, atn_session_get_head(self->session));
    self->syncing = FALSE;
}

static void on_result(AtnSession *s, GParamSpec *p, AtnHeadView *self) {
    sync_adjustments(self);
    update_matrix(self);
}

static void on_selection(AtnSession *s, GParamSpec *p, AtnHeadView *self) {
    sync_adjustments(self);
    update_matrix(self);
}

static void on_query(AtnSession *s, GParamSpec *p, AtnHeadView *self) {
    atn_heatmap_set_selected_row(self->heatmap, atn_session_get_query(self->session));
    update_info(self, -1, -1);
}

static void on_hover(AtnSession *s, GParamSpec *p, AtnHeadView *self) {
    atn_heatmap_set_highlight_token(self->heatmap, atn_session_get_hover_token(self->session));
}

static void on_layer_changed(GtkAdjustment *adj, AtnHeadView *self) {
    if (!self->syncing && self->session)
        atn_session_set_layer(self->session, (int)gtk_adjustment_get_value(adj));
}

static void on_head_changed(GtkAdjustment *adj, AtnHeadView *self) {
    if (!self->syncing && self->session)
        atn_session_set_head(self->session, (int)gtk_adjustment_get_value(adj));
}

static void on_cell_clicked(AtnHeatmap *h, int row, int col, AtnHeadView *self) {
    if (self->session)
        atn_session_set_query(self->session, row);
}

static void on_cell_hovered(AtnHeatmap *h, int row, int col, AtnHeadView *self) { update_info(self, row, col); }

void atn_head_view_step(AtnHeadView *self, int dlayer, int dhead) {
    g_return_if_fail(ATN_IS_HEAD_VIEW(self));
    if (self->session)
        atn_session_step_head(self->session, dlayer, dhead);
}

static gboolean on_key(GtkEventControllerKey *c, guint keyval, guint keycode, GdkModifierType state,
                       AtnHeadView *self) {
    if (state & (GDK_CONTROL_MASK | GDK_ALT_MASK | GDK_SHIFT_MASK))
        return FALSE;
    switch (keyval) {
    case GDK_KEY_Left: case GDK_KEY_KP_Left: atn_head_view_step(self, 0, -1); return TRUE;
    case GDK_KEY_Right: case GDK_KEY_KP_Right: atn_head_view_step(self, 0, 1); return TRUE;
    case GDK_KEY_Up: case GDK_KEY_KP_Up: case GDK_KEY_Page_Up: atn_head_view_step(self, -1, 0); return TRUE;
    case GDK_KEY_Down: case GDK_KEY_KP_Down: case GDK_KEY_Page_Down: atn_head_view_step(self, 1, 0); return TRUE;
    default: return FALSE;
    }
}

static AtnFigure *head_view_dup_figure(AtnFigureSource *source) {
    AtnHeadView *self = ATN_HEAD_VIEW(source);
    if (!self->session || !atn_session_get_result(self->session))
        return NULL;
    g_autofree char *name = g_strdup_printf("head-L%d-H%d", atn_session_get_layer(self->session),
                                            atn_session_get_head(self->session));
    return atn_heatmap_dup_figure(self->heatmap, name);
}

static void figure_source_iface_init(AtnFigureSourceInterface *iface) { iface->dup_figure = head_view_dup_figure; }

static void atn_head_view_dispose(GObject *object) {
    AtnHeadView *self = ATN_HEAD_VIEW(object);
    if (self->session)
        g_signal_handlers_disconnect_by_data(self->session, self);
    g_clear_object(&self->session);
    gtk_widget_dispose_template(GTK_WIDGET(self), ATN_TYPE_HEAD_VIEW);
    G_OBJECT_CLASS(atn_head_view_parent_class)->dispose(object);
}

static void atn_head_view_class_init(AtnHeadViewClass *klass) {
    GtkWidgetClass *widget_class = GTK_WIDGET_CLASS(klass);
    G_OBJECT_CLASS(klass)->dispose = atn_head_view_dispose;
    g_type_ensure(ATN_TYPE_HEATMAP);
    g_type_ensure(ATN_TYPE_TOKEN_LINES);
    gtk_widget_class_set_template_from_resource(widget_class, "/io/github/attnscope/Attnscope/atn-head-view.ui");
    gtk_widget_class_bind_template_child(widget_class, AtnHeadView, box);
    gtk_widget_class_bind_template_child(widget_class, AtnHeadView, layer_adj);
    gtk_widget_class_bind_template_child(widget_class, AtnHeadView, head_adj);
    gtk_widget_class_bind_template_child(widget_class, AtnHeadView, info_label);
    gtk_widget_class_bind_template_child(widget_class, AtnHeadView, heatmap);
    gtk_widget_class_bind_template_child(widget_class, AtnHeadView, lines);
    gtk_widget_class_set_layout_manager_type(widget_class, GTK_TYPE_BIN_LAYOUT);
    gtk_widget_class_set_css_name(widget_class, "headview");
}

static void atn_head_view_init(AtnHeadView *self) {
    gtk_widget_init_template(GTK_WIDGET(self));
    g_signal_connect(self->layer_adj, "value-changed", G_CALLBACK(on_layer_changed), self);
    g_signal_connect(self->head_adj, "value-changed", G_CALLBACK(on_head_changed), self);
    g_signal_connect(self->heatmap, "cell-clicked", G_CALLBACK(on_cell_clicked), self);
    g_signal_connect(self->heatmap, "cell-hovered", G_CALLBACK(on_cell_hovered), self);
    /* keys not used by the focused child (the spin buttons keep their arrows) */
    GtkEventController *keys = gtk_event_controller_key_new();
    g_signal_connect(keys, "key-pressed", G_CALLBACK(on_key), self);
    gtk_widget_add_controller(GTK_WIDGET(self), keys);
}

GtkWidget *atn_head_view_new(void) { return g_object_new(ATN_TYPE_HEAD_VIEW, NULL); }

void atn_head_view_set_session(AtnHeadView *self, AtnSession *session) {
    g_return_if_fail(ATN_IS_HEAD_VIEW(self));
    if (self->session)
        g_signal_handlers_disconnect_by_data(self->session, self);
    g_set_object(&self->session, session);
    atn_token_lines_set_session(self->lines, session);
    if (session) {
        g_signal_connect(session, "notify::result", G_CALLBACK(on_result), self);
        g_signal_connect(session, "notify::layer", G_CALLBACK(on_selection), self);
        g_signal_connect(session, "notify::head", G_CALLBACK(on_selection), self);
        g_signal_connect(session, "notify::query", G_CALLBACK(on_query), self);
        g_signal_connect(session, "notify::hover-token", G_CALLBACK(on_hover), self);
        on_result(session, NULL, self);
    }
}

void atn_head_view_set_colormap(AtnHeadView *self, atn_colormap cm) {
    g_return_if_fail(ATN_IS_HEAD_VIEW(self));
    atn_heatmap_set_colormap(self->heatmap, cm);
}

void atn_head_view_set_font_scale(AtnHeadView *self, double scale) {
    g_return_if_fail(ATN_IS_HEAD_VIEW(self));
    atn_heatmap_set_font_scale(self->heatmap, scale);
    atn_token_lines_set_font_scale(self->lines, scale);
}

AtnHeatmap *atn_head_view_get_heatmap(AtnHeadView *self) {
    g_return_val_if_fail(ATN_IS_HEAD_VIEW(self), NULL);
    return self->heatmap;
}

GtkWidget *atn_head_view_get_token_lines(AtnHeadView *self) {
    g_return_val_if_fail(ATN_IS_HEAD_VIEW(self), NULL);
    return GTK_WIDGET(self->lines);
}

/* ---- AtnView ---------------------------------------------------------------------------------- */

static void view_set_session(AtnView *view, AtnSession *session) { atn_head_view_set_session(ATN_HEAD_VIEW(view), session); }
static void view_set_colormap(AtnView *view, atn_colormap cm) { atn_head_view_set_colormap(ATN_HEAD_VIEW(view), cm); }
static void view_set_font_scale(AtnView *view, double scale) { atn_head_view_set_font_scale(ATN_HEAD_VIEW(view), scale); }

ATN_VIEW_REGISTER(atn_head_view)

static void view_iface_init(AtnViewInterface *iface) {
    iface->set_session = view_set_session;
    iface->set_colormap = view_set_colormap;
    iface->set_font_scale = view_set_font_scale;
}
