/* AtnModelGridView: the Model page. */
#include "atn-model-grid-view.h"
#include "atn-model-grid-view-test.h"

#include "atn-view.h"
#include "atn-wrap-box.h"

#include <glib/gi18n.h>

#include "analysis.h"
#include "atn-encdec.h"
#include "atn-encdec-widgets.h"
#include "atn-figure.h"
#include "atn-labels.h"
#include "atn-whatif.h"

struct _AtnModelGridView {
    GtkWidget parent_instance;
    GtkWidget *box;
    GtkCheckButton *shared_check, *notes_check;
    AtnStackPicker *stack_picker;   /* an encoder-decoder's stacks */
    AtnModelGrid *grid;
    AtnSession *session;
    gboolean dirty;   /* a new result not yet shown: the labels are computed when the page is */
    GtkWidget *menu;  /* the what-if menu of one head (GtkPopoverMenu on the grid) */
    atn_colormap cmap;
    int menu_layer, menu_head;
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
    AtnWhatif *whatif = atn_whatif_of_result(r);
    for (int c = 0; c < count; c++) {
        const char *off = atn_whatif_head_note(whatif, c / st->n_heads, c % st->n_heads);
        notes[c] = g_strdup(atn_head_stats_absent(&st->heads[c]) ? ""   /* a head the layer lacks: "no head" */
                            : off ? off : atn_label_pattern(st->heads[c].pattern));
    }
    atn_model_grid_set_notes(self->grid, (const char *const *)notes);
}

static void refresh(AtnModelGridView *self) {
    self->dirty = FALSE;
    atn_model_grid_set_result(self->grid, atn_session_get_result(self->session));
    atn_model_grid_set_stack(self->grid, atn_session_get_stack(self->session));
    update_notes(self);
    atn_model_grid_set_selected(self->grid, atn_session_get_layer(self->session), atn_session_get_head(self->session));
}

static void on_result(AtnSession *s, GParamSpec *p, AtnModelGridView *self) {
    self->dirty = TRUE;
    if (gtk_widget_get_mapped(GTK_WIDGET(self)))
        refresh(self);
}

/* the pattern labels: the result's statistics come after it (atn_session_get_analysing) */
static void on_stats_ready(AtnSession *s, AtnModelGridView *self) {
    if (self->dirty)
        return;
    update_notes(self);
    AtnResult *r = atn_session_get_result(s);
    if (r && !atn_result_has_weights(r))   /* a large attention file's thumbnails come with them */
        atn_model_grid_invalidate(self->grid);
}

static void atn_model_grid_view_map(GtkWidget *widget) {
    GTK_WIDGET_CLASS(atn_model_grid_view_parent_class)->map(widget);
    AtnModelGridView *self = ATN_MODEL_GRID_VIEW(widget);
    if (self->dirty)
        refresh(self);
}

static void on_stack(AtnSession *s, GParamSpec *p, AtnModelGridView *self) {
    atn_model_grid_set_stack(self->grid, atn_session_get_stack(s));
}

static void on_selection(AtnSession *s, GParamSpec *p, AtnModelGridView *self) {
    atn_model_grid_set_selected(self->grid, atn_session_get_layer(self->session), atn_session_get_head(self->session));
}

/* The session's runs colour the thumbnails in the view's colour map and scale. */
static void push_thumb_style(AtnModelGridView *self) {
    if (self->session)
        atn_session_set_thumb_style(self->session, self->cmap, gtk_check_button_get_active(self->shared_check));
}

static void on_shared_toggled(GtkCheckButton *b, AtnModelGridView *self) {
    push_thumb_style(self);
    atn_model_grid_set_shared_range(self->grid, gtk_check_button_get_active(b));
}

/* A run starting colours its result in the view's style: a recolour of the result before
   would only take a core from it. */
static void on_busy(AtnSession *s, GParamSpec *p, AtnModelGridView *self) {
    if (atn_session_get_busy(s))
        atn_model_grid_cancel_recolour(self->grid);
    else
        atn_model_grid_update_colours(self->grid);
}

static void on_notes_toggled(GtkCheckButton *b, AtnModelGridView *self) { update_notes(self); }

static void on_head_activated(AtnModelGrid *grid, int layer, int head, AtnModelGridView *self) {
    g_signal_emit(self, signals[SIGNAL_HEAD_ACTIVATED], 0, layer, head);
}

/* ---- the what-if menu of a head: the session's changes, replaced (one source of truth) --- */

static void menu_item(GMenu *section, const char *label, int layer, int head, AtnWhatifHeadChange change) {
    g_autoptr(GMenuItem) item = g_menu_item_new(label, NULL);
    g_menu_item_set_action_and_target_value(
        item, "whatif.head", g_variant_new("(iis)", layer, head, atn_whatif_head_change_name(change)));
    g_menu_append_item(section, item);
}

static GMenuModel *head_menu_model(AtnModelGridView *self, int layer, int head) {
    AtnWhatif *w = atn_session_get_whatif(self->session);
    AtnResult *r = atn_session_get_result(self->session);
    gboolean shape = w && r && atn_whatif_get_n_layers(w) == atn_result_get_n_layers(r) &&
                     atn_whatif_get_n_heads(w) == atn_result_get_n_heads(r);
    AtnWhatifHead st = shape ? atn_whatif_get_head(w, layer, head) : ATN_WHATIF_HEAD_ON;
    GMenu *menu = g_menu_new();
    g_autoptr(GMenu) heads = g_menu_new();
    if (st != ATN_WHATIF_HEAD_OFF)
        menu_item(heads, _("Switch Off (Output Zero)"), layer, head, ATN_WHATIF_SWITCH_OFF);
    if (st != ATN_WHATIF_HEAD_UNIFORM)
        menu_item(heads, _("Switch Off (Attend Uniformly)"), layer, head, ATN_WHATIF_MAKE_UNIFORM);
    menu_item(heads, _("Keep Only This Head in Its Layer"), layer, head, ATN_WHATIF_KEEP_ONLY);
    if (st != ATN_WHATIF_HEAD_ON)
        menu_item(heads, _("Switch Back On"), layer, head, ATN_WHATIF_SWITCH_ON);
    g_autofree char *title = g_strdup_printf(_("Layer %d, head %d"), layer, head);
    g_menu_append_section(menu, title, G_MENU_MODEL(heads));
    g_autoptr(GMenu) rest = g_menu_new();
    g_menu_append(rest, _("Compare on the What-if Page"), "win.view::whatif");
    if (w)
        g_menu_append(rest, _("Restore the Original Model"), "whatif.restore");
    g_menu_append_section(menu, NULL, G_MENU_MODEL(rest));
    return G_MENU_MODEL(menu);
}

static void open_head_menu(AtnModelGridView *self, int layer, int head) {
    graphene_rect_t rect;
    if (!self->session || !atn_model_grid_get_head_rect(self->grid, layer, head, &rect))
        return;
    AtnResult *r = atn_session_get_result(self->session);
    if (r && !atn_result_has_weights(r))
        return;   /* an attention file: its what-if changes would have no model to run */
    self->menu_layer = layer;
    self->menu_head = head;
    g_autoptr(GMenuModel) model = head_menu_model(self, layer, head);
    gtk_popover_menu_set_menu_model(GTK_POPOVER_MENU(self->menu), model);
    GdkRectangle at = {(int)rect.origin.x, (int)rect.origin.y, (int)rect.size.width, (int)rect.size.height};
    gtk_popover_set_pointing_to(GTK_POPOVER(self->menu), &at);
    gtk_popover_popup(GTK_POPOVER(self->menu));
}

static void on_head_menu(AtnModelGrid *grid, int layer, int head, AtnModelGridView *self) {
    atn_session_select_head(self->session, layer, head);
    if (atn_result_is_encdec(atn_session_get_result(self->session)))
        return;   /* the what-if lab is off for encoder-decoders (the engine refuses their interventions) */
    open_head_menu(self, layer, head);
}

static void head_action(GtkWidget *widget, const char *name, GVariant *param) {
    AtnModelGridView *self = ATN_MODEL_GRID_VIEW(widget);
    AtnResult *r = self->session ? atn_session_get_result(self->session) : NULL;
    int layer, head;
    const char *what;
    g_variant_get(param, "(ii&s)", &layer, &head, &what);
    int change = atn_whatif_head_change_from_name(what);
    if (!r || change < 0 || layer < 0 || layer >= atn_result_get_n_layers(r) || head < 0 ||
        head >= atn_result_get_n_heads(r))
        return;
    g_autoptr(AtnWhatif) w = atn_whatif_change_head(atn_session_get_whatif(self->session), atn_result_get_n_layers(r),
                                                    atn_result_get_n_heads(r), layer, head, change);
    atn_session_select_head(self->session, layer, head);
    atn_session_set_whatif(self->session, w);
}

static void restore_action(GtkWidget *widget, const char *name, GVariant *param) {
    AtnModelGridView *self = ATN_MODEL_GRID_VIEW(widget);
    if (self->session)
        atn_session_set_whatif(self->session, NULL);
}

static void menu_action(GtkWidget *widget, const char *name, GVariant *param) {
    AtnModelGridView *self = ATN_MODEL_GRID_VIEW(widget);
    if (self->session && atn_session_get_result(self->session))
        open_head_menu(self, atn_session_get_layer(self->session), atn_session_get_head(self->session));
}

GtkPopover *atn_model_grid_view_get_head_menu(AtnModelGridView *self, int *layer, int *head) {
    g_return_val_if_fail(ATN_IS_MODEL_GRID_VIEW(self), NULL);
    if (layer)
        *layer = self->menu_layer;
    if (head)
        *head = self->menu_head;
    return GTK_POPOVER(self->menu);
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
    g_clear_pointer(&self->menu, gtk_widget_unparent);
    gtk_widget_dispose_template(GTK_WIDGET(self), ATN_TYPE_MODEL_GRID_VIEW);
    G_OBJECT_CLASS(atn_model_grid_view_parent_class)->dispose(object);
}

static void atn_model_grid_view_class_init(AtnModelGridViewClass *klass) {
    GtkWidgetClass *wc = GTK_WIDGET_CLASS(klass);
    G_OBJECT_CLASS(klass)->dispose = atn_model_grid_view_dispose;
    wc->map = atn_model_grid_view_map;
    g_type_ensure(ATN_TYPE_MODEL_GRID);
    g_type_ensure(ATN_TYPE_WRAP_BOX);
    g_type_ensure(ATN_TYPE_STACK_PICKER);
    gtk_widget_class_set_template_from_resource(wc, "/io/github/attnscope/Attnscope/atn-model-grid-view.ui");
    gtk_widget_class_bind_template_child(wc, AtnModelGridView, box);
    gtk_widget_class_bind_template_child(wc, AtnModelGridView, shared_check);
    gtk_widget_class_bind_template_child(wc, AtnModelGridView, notes_check);
    gtk_widget_class_bind_template_child(wc, AtnModelGridView, grid);
    gtk_widget_class_bind_template_child(wc, AtnModelGridView, stack_picker);
    gtk_widget_class_set_layout_manager_type(wc, GTK_TYPE_BIN_LAYOUT);
    signals[SIGNAL_HEAD_ACTIVATED] = g_signal_new("head-activated", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0,
                                                  NULL, NULL, NULL, G_TYPE_NONE, 2, G_TYPE_INT, G_TYPE_INT);
    /* the what-if menu: a head off / uniform / kept alone / back on, the original model */
    gtk_widget_class_install_action(wc, "whatif.head", "(iis)", head_action);
    gtk_widget_class_install_action(wc, "whatif.restore", NULL, restore_action);
    gtk_widget_class_install_action(wc, "whatif.menu", NULL, menu_action);
    gtk_widget_class_add_binding_action(wc, GDK_KEY_F10, GDK_SHIFT_MASK, "whatif.menu", NULL);
    gtk_widget_class_add_binding_action(wc, GDK_KEY_Menu, 0, "whatif.menu", NULL);
}

static void atn_model_grid_view_init(AtnModelGridView *self) {
    gtk_widget_init_template(GTK_WIDGET(self));
    g_signal_connect(self->shared_check, "toggled", G_CALLBACK(on_shared_toggled), self);
    g_signal_connect(self->notes_check, "toggled", G_CALLBACK(on_notes_toggled), self);
    g_signal_connect(self->grid, "head-activated", G_CALLBACK(on_head_activated), self);
    g_signal_connect(self->grid, "head-menu", G_CALLBACK(on_head_menu), self);
    self->menu = gtk_popover_menu_new_from_model(NULL);
    gtk_popover_set_has_arrow(GTK_POPOVER(self->menu), TRUE);
    gtk_widget_set_parent(self->menu, GTK_WIDGET(self->grid));
    self->menu_layer = self->menu_head = -1;
}

GtkWidget *atn_model_grid_view_new(void) { return g_object_new(ATN_TYPE_MODEL_GRID_VIEW, NULL); }

void atn_model_grid_view_set_session(AtnModelGridView *self, AtnSession *session) {
    g_return_if_fail(ATN_IS_MODEL_GRID_VIEW(self));
    if (self->session)
        g_signal_handlers_disconnect_by_data(self->session, self);
    g_set_object(&self->session, session);
    atn_stack_picker_set_session(self->stack_picker, session);
    if (session) {
        g_signal_connect(session, "notify::stack", G_CALLBACK(on_stack), self);
        g_signal_connect(session, "notify::result", G_CALLBACK(on_result), self);
        g_signal_connect(session, "stats-ready", G_CALLBACK(on_stats_ready), self);
        g_signal_connect(session, "notify::layer", G_CALLBACK(on_selection), self);
        g_signal_connect(session, "notify::head", G_CALLBACK(on_selection), self);
        g_signal_connect(session, "notify::busy", G_CALLBACK(on_busy), self);
        push_thumb_style(self);
        on_result(session, NULL, self);
    }
}

void atn_model_grid_view_set_colormap(AtnModelGridView *self, atn_colormap cm) {
    g_return_if_fail(ATN_IS_MODEL_GRID_VIEW(self));
    self->cmap = cm;
    push_thumb_style(self);
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
