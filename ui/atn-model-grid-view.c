/* AtnModelGridView: the Model page. */
#include "atn-model-grid-view.h"

#include "atn-view.h"
#include "atn-wrap-box.h"

#include <glib/gi18n.h>

#include "analysis.h"
#include "atn-figure.h"
#include "atn-labels.h"

struct _AtnModelGridView {
    GtkWidget parent_instance;
    GtkWidget *box;
    GtkCheckButton *shared_check, *notes_check;
    AtnModelGrid *grid;
    AtnSession *session;
    gboolean dirty;   /* a new result not yet shown: the labels are computed when the page is */
};

static void figure_source_iface_init(AtnFigureSourceInterface *iface);
static void view_iface_init(AtnViewInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE(AtnModelGridView, atn_model_grid_view, GTK_TYPE_WIDGET,
                              G_IMPLEMENT_INTERFACE(ATN_TYPE_FIGURE_SOURCE, figure_source_iface_init)
                              G_IMPLEMENT_INTERFACE(ATN_TYPE_VIEW, view_iface_init))

enum { SIGNAL_HEAD_ACTIVATED, N_SIGNALS };
static guint signals[N_SIGNALS];

/* The pattern label of every head (engine/include/analysis.h), translated. */
static void update_notes(AtnModelGridView *self) {
    AtnResult *r = self->session ? atn_session_get_result(self->session) : NULL;
    if (!r || !gtk_check_button_get_active(self->notes_check)) {
        atn_model_grid_set_notes(self->grid, NULL);
        return;
    }
    const atn_stats *st = atn_result_get_stats(r);
    if (!st) {
        atn_model_grid_set_notes(self->grid, NULL);
        return;
    }
    int count = st->n_layers * st->n_heads;
    g_auto(GStrv) notes = g_new0(char *, count + 1);
    for (int c = 0; c < count; c++)
        notes[c] = g_strdup(atn_label_pattern(st->heads[c].pattern));
    atn_model_grid_set_notes(self->grid, (const char *const *)notes);
}

static void refresh(AtnModelGridView *self) {
    self->dirty = FALSE;
    atn_model_grid_set_result(self->grid, atn_session_get_result(self->session));
    update_notes(self);
    atn_model_grid_set_selected(self->grid, atn_session_get_layer(self->session), atn_session_get_head(self->session));
}

static void on_result(AtnSession *s, GParamSpec *p, AtnModelGridView *self) {
    self->dirty = TRUE;
    if (gtk_widget_get_mapped(GTK_WIDGET(self)))
        refresh(self);
}

static void atn_model_grid_view_map(GtkWidget *widget) {
    GTK_WIDGET_CLASS(atn_model_grid_view_parent_class)->map(widget);
    AtnModelGridView *self = ATN_MODEL_GRID_VIEW(widget);
    if (self->dirty)
        refresh(self);
}

static void on_selection(AtnSession *s, GParamSpec *p, AtnModelGridView *self) {
    atn_model_grid_set_selected(self->grid, atn_session_get_layer(self->session), atn_session_get_head(self->session));
}

static void on_shared_toggled(GtkCheckButton *b, AtnModelGridView *self) {
    atn_model_grid_set_shared_range(self->grid, gtk_check_button_get_active(b));
}

static void on_notes_toggled(GtkCheckButton *b, AtnModelGridView *self) { update_notes(self); }

static void on_head_activated(AtnModelGrid *grid, int layer, int head, AtnModelGridView *self) {
    g_signal_emit(self, signals[SIGNAL_HEAD_ACTIVATED], 0, layer, head);
}

static AtnFigure *dup_figure(AtnFigureSource *source) {
    AtnModelGridView *self = ATN_MODEL_GRID_VIEW(source);
    if (self->dirty)
        refresh(self);
    return atn_model_grid_dup_figure(self->grid);
}

static void figure_source_iface_init(AtnFigureSourceInterface *iface) { iface->dup_figure = dup_figure; }

static void atn_model_grid_view_dispose(GObject *object) {
    AtnModelGridView *self = ATN_MODEL_GRID_VIEW(object);
    if (self->session)
        g_signal_handlers_disconnect_by_data(self->session, self);
    g_clear_object(&self->session);
    gtk_widget_dispose_template(GTK_WIDGET(self), ATN_TYPE_MODEL_GRID_VIEW);
    G_OBJECT_CLASS(atn_model_grid_view_parent_class)->dispose(object);
}

static void atn_model_grid_view_class_init(AtnModelGridViewClass *klass) {
    GtkWidgetClass *wc = GTK_WIDGET_CLASS(klass);
    G_OBJECT_CLASS(klass)->dispose = atn_model_grid_view_dispose;
    wc->map = atn_model_grid_view_map;
    g_type_ensure(ATN_TYPE_MODEL_GRID);
    g_type_ensure(ATN_TYPE_WRAP_BOX);
    gtk_widget_class_set_template_from_resource(wc, "/io/github/attnscope/Attnscope/atn-model-grid-view.ui");
    gtk_widget_class_bind_template_child(wc, AtnModelGridView, box);
    gtk_widget_class_bind_template_child(wc, AtnModelGridView, shared_check);
    gtk_widget_class_bind_template_child(wc, AtnModelGridView, notes_check);
    gtk_widget_class_bind_template_child(wc, AtnModelGridView, grid);
    gtk_widget_class_set_layout_manager_type(wc, GTK_TYPE_BIN_LAYOUT);
    signals[SIGNAL_HEAD_ACTIVATED] = g_signal_new("head-activated", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0,
                                                  NULL, NULL, NULL, G_TYPE_NONE, 2, G_TYPE_INT, G_TYPE_INT);
}

static void atn_model_grid_view_init(AtnModelGridView *self) {
    gtk_widget_init_template(GTK_WIDGET(self));
    g_signal_connect(self->shared_check, "toggled", G_CALLBACK(on_shared_toggled), self);
    g_signal_connect(self->notes_check, "toggled", G_CALLBACK(on_notes_toggled), self);
    g_signal_connect(self->grid, "head-activated", G_CALLBACK(on_head_activated), self);
}

GtkWidget *atn_model_grid_view_new(void) { return g_object_new(ATN_TYPE_MODEL_GRID_VIEW, NULL); }

void atn_model_grid_view_set_session(AtnModelGridView *self, AtnSession *session) {
    g_return_if_fail(ATN_IS_MODEL_GRID_VIEW(self));
    if (self->session)
        g_signal_handlers_disconnect_by_data(self->session, self);
    g_set_object(&self->session, session);
    if (session) {
        g_signal_connect(session, "notify::result", G_CALLBACK(on_result), self);
        g_signal_connect(session, "notify::layer", G_CALLBACK(on_selection), self);
        g_signal_connect(session, "notify::head", G_CALLBACK(on_selection), self);
        on_result(session, NULL, self);
    }
}

void atn_model_grid_view_set_colormap(AtnModelGridView *self, atn_colormap cm) {
    g_return_if_fail(ATN_IS_MODEL_GRID_VIEW(self));
    atn_model_grid_set_colormap(self->grid, cm);
}

void atn_model_grid_view_set_font_scale(AtnModelGridView *self, double scale) {
    g_return_if_fail(ATN_IS_MODEL_GRID_VIEW(self));
    atn_model_grid_set_font_scale(self->grid, scale);
}

AtnModelGrid *atn_model_grid_view_get_grid(AtnModelGridView *self) {
    g_return_val_if_fail(ATN_IS_MODEL_GRID_VIEW(self), NULL);
    if (self->dirty && self->session)
        refresh(self);
    return self->grid;
}

/* ---- AtnView ---------------------------------------------------------------------------------- */

static void view_set_session(AtnView *view, AtnSession *session) { atn_model_grid_view_set_session(ATN_MODEL_GRID_VIEW(view), session); }
static void view_set_colormap(AtnView *view, atn_colormap cm) { atn_model_grid_view_set_colormap(ATN_MODEL_GRID_VIEW(view), cm); }
static void view_set_font_scale(AtnView *view, double scale) { atn_model_grid_view_set_font_scale(ATN_MODEL_GRID_VIEW(view), scale); }

ATN_VIEW_REGISTER(atn_model_grid_view)

static void view_iface_init(AtnViewInterface *iface) {
    iface->set_session = view_set_session;
    iface->set_colormap = view_set_colormap;
    iface->set_font_scale = view_set_font_scale;
}
