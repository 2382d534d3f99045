/* AtnStatsView: the per-head statistics table. */
#include "atn-stats-view.h"

#include <glib/gi18n.h>

#include "atn-head-stat.h"

struct _AtnStatsView {
    GtkWidget parent_instance;
    GtkWidget *box;
    GtkColumnView *table;
    GtkLabel *info_label;
    GListStore *store;
    GtkSortListModel *sorted;
    GHashTable *columns;   /* name -> GtkColumnViewColumn (borrowed) */
    AtnSession *session;
    gboolean dirty;
};

G_DEFINE_FINAL_TYPE(AtnStatsView, atn_stats_view, GTK_TYPE_WIDGET)

enum { SIGNAL_HEAD_ACTIVATED, N_SIGNALS };
static guint signals[N_SIGNALS];

/* ---- cells --------------------------------------------------------------------------------- */

static void setup_cell(GtkSignalListItemFactory *f, GtkListItem *item, gpointer data) {
    GtkWidget *label = gtk_label_new(NULL);
    const char *prop = data;
    gboolean numeric = g_strcmp0(prop, "pattern") != 0 && g_strcmp0(prop, "index") != 0;
    gtk_label_set_xalign(GTK_LABEL(label), numeric ? 1.0f : 0.0f);
    if (numeric)
        gtk_widget_add_css_class(label, "numeric");
    gtk_list_item_set_child(item, label);
}

static void bind_cell(GtkSignalListItemFactory *f, GtkListItem *item, gpointer data) {
    const char *prop = data;
    AtnHeadStat *row = gtk_list_item_get_item(item);
    GtkLabel *label = GTK_LABEL(gtk_list_item_get_child(item));
    g_autofree char *text = NULL;
    if (!g_strcmp0(prop, "index")) {
        text = g_strdup_printf(_("L%d · H%d"), atn_head_stat_get_layer(row), atn_head_stat_get_head(row));
    } else if (!g_strcmp0(prop, "pattern")) {
        g_object_get(row, "pattern", &text, NULL);
    } else {
        double v;
        g_object_get(row, prop, &v, NULL);
        text = g_strdup_printf(!g_strcmp0(prop, "entropy") || !g_strcmp0(prop, "distance") ? "%.2f" : "%.3f", v);
    }
    gtk_label_set_text(label, text);
}

static void add_column(AtnStatsView *self, const char *prop, const char *title, const char *tooltip) {
    GtkListItemFactory *factory = gtk_signal_list_item_factory_new();
    g_signal_connect(factory, "setup", G_CALLBACK(setup_cell), (gpointer)prop);
    g_signal_connect(factory, "bind", G_CALLBACK(bind_cell), (gpointer)prop);
    GtkColumnViewColumn *col = gtk_column_view_column_new(title, factory);
    GtkSorter *sorter;
    if (!g_strcmp0(prop, "pattern"))
        sorter = GTK_SORTER(gtk_string_sorter_new(gtk_property_expression_new(ATN_TYPE_HEAD_STAT, NULL, prop)));
    else
        sorter = GTK_SORTER(gtk_numeric_sorter_new(gtk_property_expression_new(ATN_TYPE_HEAD_STAT, NULL, prop)));
    gtk_column_view_column_set_sorter(col, sorter);
    g_object_unref(sorter);
    gtk_column_view_column_set_expand(col, TRUE);
    gtk_column_view_append_column(self->table, col);
    g_hash_table_insert(self->columns, (gpointer)prop, col);
    g_object_unref(col);
    (void)tooltip;
}

/* ---- data ------------------------------------------------------------------------------------- */

static void refill(AtnStatsView *self) {
    self->dirty = FALSE;
    g_list_store_remove_all(self->store);
    AtnResult *r = self->session ? atn_session_get_result(self->session) : NULL;
    if (!r)
        return;
    atn_stats *st = NULL;
    atn_error err = {0};
    if (atn_stats_compute(atn_result_get_capture(r), &st, &err) != ATN_OK) {
        gtk_label_set_text(self->info_label, err.message);
        return;
    }
    int count = st->n_layers * st->n_heads;
    g_autoptr(GPtrArray) rows = g_ptr_array_new_with_free_func(g_object_unref);
    for (int c = 0; c < count; c++)
        g_ptr_array_add(rows, atn_head_stat_new(c / st->n_heads, c % st->n_heads, &st->heads[c]));
    g_list_store_splice(self->store, 0, 0, rows->pdata, rows->len);
    atn_stats_free(st);
}

static void on_result(AtnSession *s, GParamSpec *p, AtnStatsView *self) {
    self->dirty = TRUE;
    if (gtk_widget_get_mapped(GTK_WIDGET(self)))
        refill(self);
}

static void atn_stats_view_map(GtkWidget *widget) {
    GTK_WIDGET_CLASS(atn_stats_view_parent_class)->map(widget);
    AtnStatsView *self = ATN_STATS_VIEW(widget);
    if (self->dirty)
        refill(self);
}

void atn_stats_view_activate_row(AtnStatsView *self, guint i) {
    if (self->dirty)
        refill(self);
    g_autoptr(AtnHeadStat) row = g_list_model_get_item(G_LIST_MODEL(self->sorted), i);
    if (row)
        g_signal_emit(self, signals[SIGNAL_HEAD_ACTIVATED], 0, atn_head_stat_get_layer(row),
                      atn_head_stat_get_head(row));
}

static void on_activate(GtkColumnView *view, guint position, AtnStatsView *self) {
    atn_stats_view_activate_row(self, position);
}

GListModel *atn_stats_view_get_model(AtnStatsView *self) {
    if (self->dirty)
        refill(self);
    return G_LIST_MODEL(self->sorted);
}

void atn_stats_view_sort_by(AtnStatsView *self, const char *column, GtkSortType order) {
    GtkColumnViewColumn *col = g_hash_table_lookup(self->columns, column);
    gtk_column_view_sort_by_column(self->table, col, order);
}

/* ---- GObject ----------------------------------------------------------------------------------- */

static void atn_stats_view_dispose(GObject *object) {
    AtnStatsView *self = ATN_STATS_VIEW(object);
    if (self->session)
        g_signal_handlers_disconnect_by_data(self->session, self);
    g_clear_object(&self->session);
    gtk_widget_dispose_template(GTK_WIDGET(self), ATN_TYPE_STATS_VIEW);
    g_clear_object(&self->store);
    g_clear_pointer(&self->columns, g_hash_table_unref);
    G_OBJECT_CLASS(atn_stats_view_parent_class)->dispose(object);
}

static void atn_stats_view_class_init(AtnStatsViewClass *klass) {
    GtkWidgetClass *wc = GTK_WIDGET_CLASS(klass);
    G_OBJECT_CLASS(klass)->dispose = atn_stats_view_dispose;
    wc->map = atn_stats_view_map;
    gtk_widget_class_set_template_from_resource(wc, "/io/github/attnscope/Attnscope/atn-stats-view.ui");
    gtk_widget_class_bind_template_child(wc, AtnStatsView, box);
    gtk_widget_class_bind_template_child(wc, AtnStatsView, table);
    gtk_widget_class_bind_template_child(wc, AtnStatsView, info_label);
    gtk_widget_class_set_layout_manager_type(wc, GTK_TYPE_BIN_LAYOUT);
    signals[SIGNAL_HEAD_ACTIVATED] = g_signal_new("head-activated", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0,
                                                  NULL, NULL, NULL, G_TYPE_NONE, 2, G_TYPE_INT, G_TYPE_INT);
}

static void atn_stats_view_init(AtnStatsView *self) {
    gtk_widget_init_template(GTK_WIDGET(self));
    self->columns = g_hash_table_new(g_str_hash, g_str_equal);
    self->store = g_list_store_new(ATN_TYPE_HEAD_STAT);
    add_column(self, "index", _("Head"), NULL);
    add_column(self, "pattern", _("Pattern"), NULL);
    add_column(self, "entropy", _("Entropy (bits)"), NULL);
    add_column(self, "cls", _("→ [CLS]"), NULL);
    add_column(self, "sep", _("→ [SEP]"), NULL);
    add_column(self, "self", _("→ itself"), NULL);
    add_column(self, "prev", _("→ previous"), NULL);
    add_column(self, "next", _("→ next"), NULL);
    add_column(self, "distance", _("Distance"), NULL);
    GtkSorter *sorter = gtk_column_view_get_sorter(self->table);
    self->sorted = gtk_sort_list_model_new(G_LIST_MODEL(g_object_ref(self->store)), g_object_ref(sorter));
    GtkSelectionModel *sel = GTK_SELECTION_MODEL(gtk_single_selection_new(G_LIST_MODEL(self->sorted)));
    gtk_single_selection_set_autoselect(GTK_SINGLE_SELECTION(sel), FALSE);
    gtk_single_selection_set_can_unselect(GTK_SINGLE_SELECTION(sel), TRUE);
    gtk_column_view_set_model(self->table, sel);
    g_object_unref(sel);
    g_signal_connect(self->table, "activate", G_CALLBACK(on_activate), self);
}

GtkWidget *atn_stats_view_new(void) { return g_object_new(ATN_TYPE_STATS_VIEW, NULL); }

void atn_stats_view_set_session(AtnStatsView *self, AtnSession *session) {
    if (self->session)
        g_signal_handlers_disconnect_by_data(self->session, self);
    g_set_object(&self->session, session);
    if (session)
        g_signal_connect(session, "notify::result", G_CALLBACK(on_result), self);
    self->dirty = TRUE;
}
