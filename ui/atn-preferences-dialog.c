/* AtnPreferencesDialog: colour map, text size and the runs' arithmetic, applied and saved at once;
 * the runs' memory budget (--memory-limit), shown. */
#include "atn-preferences-dialog.h"

#include <glib/gi18n.h>

#include "atn-labels.h"
#include "atn-memory-limit.h"
#include "atn-prefs.h"
#include "render.h"

struct _AtnPreferencesDialog {
    GtkWindow parent_instance;
    GtkDropDown *colormap_drop;
    GtkAdjustment *font_adj;
    GtkDropDown *precision_drop;
    GtkLabel *memory_label;
};

/* The arithmetic choices, in the drop-down's order, as the preferences name them. */
static const char *const precision_names[] = {"fp32", "bf16", "fp16"};

G_DEFINE_FINAL_TYPE(AtnPreferencesDialog, atn_preferences_dialog, GTK_TYPE_WINDOW)

static void on_colormap(GtkDropDown *d, GParamSpec *p, gpointer data) {
    guint i = gtk_drop_down_get_selected(d);
    if (i < ATN_CMAP_COUNT)
        atn_prefs_set_colormap(atn_prefs_get_default(), atn_colormap_name((atn_colormap)i));
}

static void on_precision(GtkDropDown *d, GParamSpec *p, gpointer data) {
    guint i = gtk_drop_down_get_selected(d);
    if (i < G_N_ELEMENTS(precision_names))
        atn_prefs_set_precision(atn_prefs_get_default(), precision_names[i]);
}

static void on_font(GtkAdjustment *adj, gpointer data) {
    atn_prefs_set_font_scale(atn_prefs_get_default(), gtk_adjustment_get_value(adj));
}

static void atn_preferences_dialog_class_init(AtnPreferencesDialogClass *klass) {
    GtkWidgetClass *wc = GTK_WIDGET_CLASS(klass);
    gtk_widget_class_set_template_from_resource(wc, "/io/github/attnscope/Attnscope/atn-preferences-dialog.ui");
    gtk_widget_class_bind_template_child(wc, AtnPreferencesDialog, colormap_drop);
    gtk_widget_class_bind_template_child(wc, AtnPreferencesDialog, font_adj);
    gtk_widget_class_bind_template_child(wc, AtnPreferencesDialog, precision_drop);
    gtk_widget_class_bind_template_child(wc, AtnPreferencesDialog, memory_label);
    gtk_widget_class_add_binding_action(wc, GDK_KEY_Escape, 0, "window.close", NULL);
}

static void atn_preferences_dialog_init(AtnPreferencesDialog *self) {
    gtk_widget_init_template(GTK_WIDGET(self));
    AtnPrefs *prefs = atn_prefs_get_default();
    g_autoptr(GtkStringList) list = gtk_string_list_new(NULL);
    for (int i = 0; i < ATN_CMAP_COUNT; i++)
        gtk_string_list_append(list, atn_label_colormap((atn_colormap)i));
    gtk_drop_down_set_model(self->colormap_drop, G_LIST_MODEL(list));
    atn_colormap cm = ATN_CMAP_VIRIDIS;
    atn_colormap_from_name(atn_prefs_get_colormap(prefs), &cm);
    gtk_drop_down_set_selected(self->colormap_drop, cm);
    gtk_adjustment_set_value(self->font_adj, atn_prefs_get_font_scale(prefs));
    const char *labels[] = {_("fp32 (full precision)"), _("bf16 (rounded products, fp32 sums)"),
                            _("fp16 (rounded products, fp32 sums)"), NULL};
    g_autoptr(GtkStringList) plist = gtk_string_list_new(labels);
    gtk_drop_down_set_model(self->precision_drop, G_LIST_MODEL(plist));
    guint sel = 0;
    for (guint i = 0; i < G_N_ELEMENTS(precision_names); i++)
        if (!g_strcmp0(atn_prefs_get_precision(prefs), precision_names[i]))
            sel = i;
    gtk_drop_down_set_selected(self->precision_drop, sel);
    g_autofree char *memory = atn_ui_memory_limit_text();
    gtk_label_set_text(self->memory_label, memory);
    g_signal_connect(self->precision_drop, "notify::selected", G_CALLBACK(on_precision), NULL);
    g_signal_connect(self->colormap_drop, "notify::selected", G_CALLBACK(on_colormap), NULL);
    g_signal_connect(self->font_adj, "value-changed", G_CALLBACK(on_font), NULL);
}

GtkWidget *atn_preferences_dialog_new(GtkWindow *parent) {
    return g_object_new(ATN_TYPE_PREFERENCES_DIALOG, "transient-for", parent, NULL);
}
