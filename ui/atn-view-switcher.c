/* AtnViewSwitcher (see atn-view-switcher.h): three children, one shown.  The choice is made in
 * size_allocate, from the width given: the first form whose minimum width fits; the others are
 * made child-invisible (not mapped, not drawn, not focusable), as AdwSqueezer does.  Measuring
 * counts every form, so the choice never changes what the parent was told. */
#include "atn-view-switcher.h"
#include "atn-view-switcher-test.h"

#include <glib/gi18n.h>

struct _AtnViewSwitcher {
    GtkWidget parent_instance;
    GtkStack *stack;
    GtkWidget *forms[ATN_VIEW_SWITCHER_N_FORMS];
    GMenu *menu;
    GtkSelectionModel *pages;
    AtnViewSwitcherForm form;
};

G_DEFINE_FINAL_TYPE(AtnViewSwitcher, atn_view_switcher, GTK_TYPE_WIDGET)

enum { PROP_0, PROP_STACK, PROP_VISIBLE_PAGE, N_PROPS };
static GParamSpec *props[N_PROPS];

static void measure(GtkWidget *widget, GtkOrientation o, int for_size, int *min, int *nat, int *min_base,
                    int *nat_base) {
    AtnViewSwitcher *self = ATN_VIEW_SWITCHER(widget);
    *min = o == GTK_ORIENTATION_HORIZONTAL ? G_MAXINT : 0;
    *nat = 0;
    for (int f = 0; f < ATN_VIEW_SWITCHER_N_FORMS; f++) {
        int cm, cn;
        gtk_widget_measure(self->forms[f], o, -1, &cm, &cn, NULL, NULL);
        if (o == GTK_ORIENTATION_HORIZONTAL)
            *min = MIN(*min, cm);   /* the narrowest form */
        else
            *min = MAX(*min, cm);   /* as tall as the tallest: nothing moves when the form changes */
        *nat = MAX(*nat, cn);
    }
    if (*min == G_MAXINT)
        *min = 0;
    *nat = MAX(*nat, *min);
}

static void size_allocate(GtkWidget *widget, int width, int height, int baseline) {
    AtnViewSwitcher *self = ATN_VIEW_SWITCHER(widget);
    AtnViewSwitcherForm pick = ATN_VIEW_SWITCHER_MENU;
    for (int f = 0; f < ATN_VIEW_SWITCHER_N_FORMS; f++) {
        int cm, cn;
        gtk_widget_measure(self->forms[f], GTK_ORIENTATION_HORIZONTAL, -1, &cm, &cn, NULL, NULL);
        if (cm <= width) {
            pick = f;
            break;
        }
    }
    self->form = pick;
    for (int f = 0; f < ATN_VIEW_SWITCHER_N_FORMS; f++)
        gtk_widget_set_child_visible(self->forms[f], f == (int)pick);
    GtkWidget *c = self->forms[pick];
    int cm, cn;
    gtk_widget_measure(c, GTK_ORIENTATION_HORIZONTAL, -1, &cm, &cn, NULL, NULL);
    int w = MIN(MAX(cm, width), MAX(cn, cm));   /* its natural width, centred, when there is room */
    w = MIN(w, MAX(width, cm));
    int x = MAX(0, (width - w) / 2);
    gtk_widget_size_allocate(c, &(GtkAllocation){x, 0, w, height}, baseline);
}

/* ---- the menu form ----------------------------------------------------------------------- */

static const char *visible_page(AtnViewSwitcher *self) {
    return self->stack ? gtk_stack_get_visible_child_name(self->stack) : NULL;
}

static void update_menu_label(AtnViewSwitcher *self) {
    const char *title = NULL;
    GtkWidget *child = self->stack ? gtk_stack_get_visible_child(self->stack) : NULL;
    if (child)
        title = gtk_stack_page_get_title(gtk_stack_get_page(self->stack, child));
    gtk_menu_button_set_label(GTK_MENU_BUTTON(self->forms[ATN_VIEW_SWITCHER_MENU]), title ? title : "");
}

static void rebuild_menu(AtnViewSwitcher *self) {
    g_menu_remove_all(self->menu);
    if (!self->pages)
        return;
    guint n = g_list_model_get_n_items(G_LIST_MODEL(self->pages));
    for (guint i = 0; i < n; i++) {
        GtkStackPage *page = g_list_model_get_item(G_LIST_MODEL(self->pages), i);
        if (gtk_stack_page_get_visible(page) && gtk_stack_page_get_name(page)) {
            g_autoptr(GMenuItem) item = g_menu_item_new(gtk_stack_page_get_title(page), NULL);
            g_menu_item_set_action_and_target_value(item, "switcher.page",
                                                    g_variant_new_string(gtk_stack_page_get_name(page)));
            g_menu_append_item(self->menu, item);
        }
        g_object_unref(page);
    }
    update_menu_label(self);
}

static void on_pages_changed(GListModel *m, guint pos, guint removed, guint added, AtnViewSwitcher *self) {
    rebuild_menu(self);
}

static void on_visible_child(GtkStack *stack, GParamSpec *p, AtnViewSwitcher *self) {
    update_menu_label(self);
    g_object_notify_by_pspec(G_OBJECT(self), props[PROP_VISIBLE_PAGE]);
}

void atn_view_switcher_set_stack(AtnViewSwitcher *self, GtkStack *stack) {
    g_return_if_fail(ATN_IS_VIEW_SWITCHER(self));
    g_return_if_fail(stack == NULL || GTK_IS_STACK(stack));
    if (stack == self->stack)
        return;
    if (self->stack) {
        g_signal_handlers_disconnect_by_data(self->stack, self);
        g_signal_handlers_disconnect_by_data(self->pages, self);
        g_clear_object(&self->pages);
        g_clear_object(&self->stack);
    }
    if (stack) {
        self->stack = g_object_ref(stack);
        self->pages = gtk_stack_get_pages(stack);
        g_signal_connect(self->pages, "items-changed", G_CALLBACK(on_pages_changed), self);
        g_signal_connect(stack, "notify::visible-child", G_CALLBACK(on_visible_child), self);
    }
    for (int f = ATN_VIEW_SWITCHER_WIDE; f <= ATN_VIEW_SWITCHER_COMPACT; f++)
        gtk_stack_switcher_set_stack(GTK_STACK_SWITCHER(self->forms[f]), stack);
    rebuild_menu(self);
    g_object_notify_by_pspec(G_OBJECT(self), props[PROP_STACK]);
    g_object_notify_by_pspec(G_OBJECT(self), props[PROP_VISIBLE_PAGE]);
}

GtkStack *atn_view_switcher_get_stack(AtnViewSwitcher *self) {
    g_return_val_if_fail(ATN_IS_VIEW_SWITCHER(self), NULL);
    return self->stack;
}

AtnViewSwitcherForm atn_view_switcher_get_form(AtnViewSwitcher *self) {
    g_return_val_if_fail(ATN_IS_VIEW_SWITCHER(self), ATN_VIEW_SWITCHER_WIDE);
    return self->form;
}

GtkWidget *atn_view_switcher_get_form_widget(AtnViewSwitcher *self, AtnViewSwitcherForm form) {
    g_return_val_if_fail(ATN_IS_VIEW_SWITCHER(self), NULL);
    g_return_val_if_fail(form < ATN_VIEW_SWITCHER_N_FORMS, NULL);
    return self->forms[form];
}

GtkWidget *atn_view_switcher_new(void) { return g_object_new(ATN_TYPE_VIEW_SWITCHER, NULL); }

/* ---- GObject ------------------------------------------------------------------------------ */

static void get_property(GObject *o, guint id, GValue *v, GParamSpec *p) {
    AtnViewSwitcher *self = ATN_VIEW_SWITCHER(o);
    switch (id) {
    case PROP_STACK: g_value_set_object(v, self->stack); break;
    case PROP_VISIBLE_PAGE: g_value_set_string(v, visible_page(self)); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID(o, id, p);
    }
}

static void set_property(GObject *o, guint id, const GValue *v, GParamSpec *p) {
    AtnViewSwitcher *self = ATN_VIEW_SWITCHER(o);
    switch (id) {
    case PROP_STACK: atn_view_switcher_set_stack(self, g_value_get_object(v)); break;
    case PROP_VISIBLE_PAGE:
        if (self->stack && g_value_get_string(v) && gtk_stack_get_child_by_name(self->stack, g_value_get_string(v)))
            gtk_stack_set_visible_child_name(self->stack, g_value_get_string(v));
        break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID(o, id, p);
    }
}

static void dispose(GObject *o) {
    AtnViewSwitcher *self = ATN_VIEW_SWITCHER(o);
    atn_view_switcher_set_stack(self, NULL);
    for (int f = 0; f < ATN_VIEW_SWITCHER_N_FORMS; f++)
        g_clear_pointer(&self->forms[f], gtk_widget_unparent);
    g_clear_object(&self->menu);
    G_OBJECT_CLASS(atn_view_switcher_parent_class)->dispose(o);
}

static void atn_view_switcher_class_init(AtnViewSwitcherClass *klass) {
    GObjectClass *oc = G_OBJECT_CLASS(klass);
    GtkWidgetClass *wc = GTK_WIDGET_CLASS(klass);
    oc->get_property = get_property;
    oc->set_property = set_property;
    oc->dispose = dispose;
    wc->measure = measure;
    wc->size_allocate = size_allocate;
    props[PROP_STACK] = g_param_spec_object("stack", NULL, NULL, GTK_TYPE_STACK,
                                            G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
    /* the visible page's name: the menu's radio action (switcher.page) */
    props[PROP_VISIBLE_PAGE] = g_param_spec_string("visible-page", NULL, NULL, NULL,
                                                   G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
    g_object_class_install_properties(oc, N_PROPS, props);
    gtk_widget_class_install_property_action(wc, "switcher.page", "visible-page");
    gtk_widget_class_set_css_name(wc, "viewswitcher");
    gtk_widget_class_set_accessible_role(wc, GTK_ACCESSIBLE_ROLE_GROUP);
}

static void atn_view_switcher_init(AtnViewSwitcher *self) {
    self->forms[ATN_VIEW_SWITCHER_WIDE] = gtk_stack_switcher_new();
    self->forms[ATN_VIEW_SWITCHER_COMPACT] = gtk_stack_switcher_new();
    gtk_widget_add_css_class(self->forms[ATN_VIEW_SWITCHER_COMPACT], "compact");
    self->menu = g_menu_new();
    GtkWidget *mb = gtk_menu_button_new();
    gtk_menu_button_set_menu_model(GTK_MENU_BUTTON(mb), G_MENU_MODEL(self->menu));
    gtk_menu_button_set_always_show_arrow(GTK_MENU_BUTTON(mb), TRUE);
    gtk_widget_set_tooltip_text(mb, _("Choose the view"));
    self->forms[ATN_VIEW_SWITCHER_MENU] = mb;
    for (int f = 0; f < ATN_VIEW_SWITCHER_N_FORMS; f++) {
        gtk_widget_set_parent(self->forms[f], GTK_WIDGET(self));
        gtk_widget_set_child_visible(self->forms[f], f == ATN_VIEW_SWITCHER_WIDE);
    }
}
