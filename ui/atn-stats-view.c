/* AtnStatsView: the per-head statistics table. */
#include "atn-stats-view.h"
#include "atn-stats-view-test.h"

#include "atn-view.h"
#include "atn-encdec.h"

#include <glib/gi18n.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "atn-corpus-pass.h"
#include "atn-head-stat.h"
#include "atn-stats-file.h"


struct _AtnStatsView {
    GtkWidget parent_instance;
    GtkWidget *box;
    GtkColumnView *table;
    GtkLabel *info_label;
    GtkCheckButton *kv_check;     /* "By K/V group": shown for a grouped-query model only */
    GListStore *store;
    GtkSortListModel *sorted;
    GHashTable *columns;   /* name -> GtkColumnViewColumn (borrowed) */
    AtnSession *session;
    gboolean dirty;
    gboolean resorting;           /* fill_rows sorting new numbers again: no scroll to the top */
    guint n_in_place;             /* refills that updated the rows in place (tests) */
    guint scroll_tick_id;         /* a sort's scroll to the top, on the next frame */
    char *sentence_info;          /* the info label's text for one sentence */

    /* corpus mode: the table averages a text file instead of the sentence */
    GtkButton *corpus_button, *sentence_button, *corpus_cancel_button;
    GtkProgressBar *corpus_bar;
    atn_stats *corpus;            /* finished statistics, or NULL: the sentence's */
    char *corpus_info;
    GCancellable *corpus_cancel;  /* the pass in flight, or NULL */
    char *corpus_path;
    gint corpus_permille;         /* its progress, written by the worker */
    guint corpus_poll_id;
    gint64 corpus_streamed;       /* the last finished pass's sentences made from streamed heads (tests) */
    guint warm_id;                /* an idle making the rows while the view is hidden (warm_cb) */

    /* file mode: a merged statistics file (atn-stats-file.h) instead of a run; it stays until
       "This Sentence", a corpus or another file (not another model: it brings its own) */
    GtkButton *file_button;
    AtnStatsFilePanel *file_panel;
    AtnStatsFile *file;           /* shown, or NULL */
    char *file_info;
    char *file_path;              /* being read, or NULL */
    GCancellable *file_cancel;    /* the read in flight, or NULL */
    gint file_permille;           /* its progress (-1: no fraction), written by the worker */
};

static void view_iface_init(AtnViewInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE(AtnStatsView, atn_stats_view, GTK_TYPE_WIDGET,
                              G_IMPLEMENT_INTERFACE(ATN_TYPE_VIEW, view_iface_init))

enum { SIGNAL_HEAD_ACTIVATED, SIGNAL_EXEMPLAR_ACTIVATED, N_SIGNALS };
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

/* The cell's text from its row's property. */
static void show_cell(GtkLabel *label, AtnHeadStat *row, const char *prop) {
    g_autofree char *text = NULL;
    int per = atn_head_stat_get_group_size(row);
    if (!g_strcmp0(prop, "index") && per > 0) {
        int k = atn_head_stat_get_head(row);
        /* Translators: a K/V group's row: layer 1, K/V head 0, the query heads 0 to 6 that read it */
        text = g_strdup_printf(_("L%d · KV%d (H%d–%d)"), atn_head_stat_get_layer(row), k, k * per, k * per + per - 1);
    } else if (!g_strcmp0(prop, "index")) {
        text = g_strdup_printf(_("L%d · H%d"), atn_head_stat_get_layer(row), atn_head_stat_get_head(row));
    } else if (!g_strcmp0(prop, "pattern")) {
        g_object_get(row, "pattern", &text, NULL);
    } else {
        double v;
        g_object_get(row, prop, &v, NULL);
        if (isnan(v))   /* not defined: a cross-attention head's positional figures */
            text = g_strdup("\u2014");
        else
            text = g_strdup_printf(!g_strcmp0(prop, "entropy") || !g_strcmp0(prop, "distance") ? "%.2f" : "%.3f", v);
    }
    gtk_label_set_text(label, text);
}

/* A new result updates the rows in place (fill_rows): a bound cell follows its property. */
static void on_row_notify(AtnHeadStat *row, GParamSpec *pspec, GtkLabel *label) {
    show_cell(label, row, pspec->name);
}

static void bind_cell(GtkSignalListItemFactory *f, GtkListItem *item, gpointer data) {
    const char *prop = data;
    AtnHeadStat *row = gtk_list_item_get_item(item);
    GtkLabel *label = GTK_LABEL(gtk_list_item_get_child(item));
    show_cell(label, row, prop);
    if (g_strcmp0(prop, "index")) {   /* a row keeps its head: the index never changes */
        g_autofree char *signal = g_strconcat("notify::", prop, NULL);
        g_signal_connect_object(row, signal, G_CALLBACK(on_row_notify), label, 0);
    }
}

static void unbind_cell(GtkSignalListItemFactory *f, GtkListItem *item, gpointer data) {
    AtnHeadStat *row = gtk_list_item_get_item(item);
    if (row)
        g_signal_handlers_disconnect_by_func(row, on_row_notify, gtk_list_item_get_child(item));
}

static void add_column(AtnStatsView *self, const char *prop, const char *title, const char *tooltip) {
    GtkListItemFactory *factory = gtk_signal_list_item_factory_new();
    g_signal_connect(factory, "setup", G_CALLBACK(setup_cell), (gpointer)prop);
    g_signal_connect(factory, "bind", G_CALLBACK(bind_cell), (gpointer)prop);
    g_signal_connect(factory, "unbind", G_CALLBACK(unbind_cell), (gpointer)prop);
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

/* The rows of st in place of the old ones.  The same heads (a new result of the model): each
 * row object takes its new numbers and its bound cells follow, and a sorted table is sorted
 * again, so no row widget is rebuilt (rebuilding 144 rows of 9 cells cost ~100-300 ms of the
 * main thread on a switch to this view: docs/PERFORMANCE.md, "View switches").  Otherwise
 * one splice (one sort and one rebind of the visible rows, not two); st NULL: none. */
/* TRUE when the store's rows are the first of st's heads, in order (warm_cb makes them a few
 * at a time). */
/* per: the rows are K/V groups of per query heads each (st's n_heads the K/V heads), 0: heads. */
static gboolean rows_lead(AtnStatsView *self, const atn_stats *st, int per) {
    int count = st ? st->n_layers * st->n_heads : 0;
    guint have = g_list_model_get_n_items(G_LIST_MODEL(self->store));
    if (have > (guint)count)
        return FALSE;
    for (guint c = 0; c < have; c++) {
        g_autoptr(AtnHeadStat) row = g_list_model_get_item(G_LIST_MODEL(self->store), c);
        if (atn_head_stat_get_layer(row) != (int)c / st->n_heads || atn_head_stat_get_head(row) != (int)c % st->n_heads ||
            atn_head_stat_get_group_size(row) != per)
            return FALSE;
    }
    return TRUE;
}

static AtnHeadStat *new_row(const atn_stats *st, int c, int per) {
    return per > 0 ? atn_head_stat_new_group(c / st->n_heads, c % st->n_heads, per, &st->heads[c])
                   : atn_head_stat_new(c / st->n_heads, c % st->n_heads, &st->heads[c]);
}

/* Rows first..last-1 of st's heads, appended to the store. */
static void append_rows(AtnStatsView *self, const atn_stats *st, int first, int last) {
    g_autoptr(GPtrArray) rows = g_ptr_array_new_with_free_func(g_object_unref);
    for (int c = first; c < last; c++)
        g_ptr_array_add(rows, new_row(st, c, 0));
    guint have = g_list_model_get_n_items(G_LIST_MODEL(self->store));
    g_list_store_splice(self->store, have, 0, rows->pdata, rows->len);
}

static void fill_rows_per(AtnStatsView *self, const atn_stats *st, int per) {
    int count = st ? st->n_layers * st->n_heads : 0;
    guint have = g_list_model_get_n_items(G_LIST_MODEL(self->store));
    if (count > 0 && have > 0 && rows_lead(self, st, per) && (per == 0 || have == (guint)count)) {
        for (guint c = 0; c < have; c++) {
            g_autoptr(AtnHeadStat) row = g_list_model_get_item(G_LIST_MODEL(self->store), c);
            atn_head_stat_set_stats(row, &st->heads[c]);
        }
        if (have < (guint)count)   /* the rest of a warm-up cut short by the switch */
            append_rows(self, st, (int)have, count);
        GtkSorter *sorter = gtk_column_view_get_sorter(self->table);
        if (gtk_sorter_get_order(sorter) != GTK_SORTER_ORDER_NONE) {
            self->resorting = TRUE;   /* the same sort: the table stays where it was scrolled */
            gtk_sorter_changed(sorter, GTK_SORTER_CHANGE_DIFFERENT);
            self->resorting = FALSE;
        }
        self->n_in_place++;
        return;
    }
    g_autoptr(GPtrArray) rows = g_ptr_array_new_with_free_func(g_object_unref);
    for (int c = 0; c < count; c++)
        g_ptr_array_add(rows, new_row(st, c, per));
    g_list_store_splice(self->store, 0, have, rows->pdata, rows->len);
}

/* The K/V heads per layer of the model whose heads the table shows: 0 when its query heads do
 * not share K/V heads in groups (an encoder-decoder, no result, a merged file that records none). */
static int kv_heads_of(AtnStatsView *self) {
    if (self->file)   /* a grouped-query model's partial records them */
        return atn_corpus_stats_identity(atn_stats_file_get_stats(self->file))->n_kv_heads;
    AtnResult *r = self->session ? atn_session_get_result(self->session) : NULL;
    const atn_capture *cap = r ? atn_result_get_capture(r) : NULL;
    if (!cap || atn_result_is_encdec(r) || cap->n_kv_heads <= 0 || cap->n_kv_heads >= cap->n_heads ||
        cap->n_heads % cap->n_kv_heads)
        return 0;
    return cap->n_kv_heads;
}

/* st's K/V groups when "By K/V group" is on and the heads have groups (malloc'ed [L][kv], *kv set),
 * else NULL: a merged file's from its exact sums (`stats --from --by-kv-group`), else from st's
 * means (`stats --by-kv-group`). */
static atn_head_stats *groups_of(AtnStatsView *self, const atn_stats *st, int *kv) {
    *kv = kv_heads_of(self);
    atn_head_stats *g = NULL;
    atn_error err = {0};
    if (!st || *kv <= 0 || st->n_heads % *kv || !gtk_check_button_get_active(self->kv_check))
        return NULL;
    atn_status s = self->file ? atn_corpus_stats_by_kv_group(atn_stats_file_get_stats(self->file), &g, &err)
                              : atn_stats_by_kv_group(st, *kv, &g, &err);
    return s == ATN_OK ? g : NULL;
}

/* The rows of st, or with "By K/V group" its groups' (atn_stats_by_kv_group: the CLI's
 * `stats --by-kv-group`). */
static void fill_rows(AtnStatsView *self, const atn_stats *st) {
    int kv = 0;
    atn_head_stats *g = groups_of(self, st, &kv);
    gtk_widget_set_visible(GTK_WIDGET(self->kv_check), kv > 0);
    if (g) {
        atn_stats groups = *st;
        groups.n_heads = kv;
        groups.heads = g;
        fill_rows_per(self, &groups, st->n_heads / kv);
        free(g);
        /* Translators: after the table's description, with "By K/V group" on */
        g_autofree char *note = g_strdup_printf(_("By K/V group: each row is one K/V head of a layer, every number "
                                                  "the mean over its %d query heads."), st->n_heads / kv);
        g_autofree char *info = g_strconcat(gtk_label_get_text(self->info_label), " ", note, NULL);
        gtk_label_set_text(self->info_label, info);
        return;
    }
    fill_rows_per(self, st, 0);
}

/* The file's corpus labels on its rows (NULL: the patterns' names again). */
static void label_rows(AtnStatsView *self, const AtnStatsFile *file) {
    guint have = g_list_model_get_n_items(G_LIST_MODEL(self->store));
    for (guint c = 0; c < have; c++) {
        g_autoptr(AtnHeadStat) row = g_list_model_get_item(G_LIST_MODEL(self->store), c);
        int h = atn_head_stat_get_layer(row) * (file ? atn_stats_file_get_means(file)->n_heads : 0) +
                atn_head_stat_get_head(row);
        /* a K/V group's row: its pattern (the heads' majority), not one head's corpus label */
        atn_head_stat_set_label(row, file && !atn_head_stat_get_group_size(row) ? atn_stats_file_get_label(file, h)
                                                                                  : NULL);
    }
}

/* The sentence's statistics: of the session's stack for an encoder-decoder's result. */
static const atn_stats *sentence_stats(AtnStatsView *self) {
    AtnResult *r = self->session ? atn_session_get_result(self->session) : NULL;
    if (!r)
        return NULL;
    return atn_result_get_stack_stats(r, atn_encdec_view_stack(r, atn_session_get_stack(self->session)));
}

static void refill(AtnStatsView *self) {
    self->dirty = FALSE;
    gtk_widget_set_visible(GTK_WIDGET(self->sentence_button), self->corpus != NULL || self->file != NULL);
    gtk_widget_set_visible(GTK_WIDGET(self->file_panel), self->file != NULL);
    if (self->file) {
        gtk_label_set_text(self->info_label, self->file_info);
        fill_rows(self, atn_stats_file_get_means(self->file));
        label_rows(self, self->file);
        return;
    }
    label_rows(self, NULL);
    if (self->corpus) {
        gtk_label_set_text(self->info_label, self->corpus_info);
        fill_rows(self, self->corpus);
        return;
    }
    gtk_label_set_text(self->info_label, self->sentence_info);
    AtnResult *r = self->session ? atn_session_get_result(self->session) : NULL;
    if (atn_result_is_encdec(r)) {   /* which of an encoder-decoder's heads these are */
        int kind = atn_encdec_view_stack(r, atn_session_get_stack(self->session));
        g_autofree char *info = g_strdup_printf("%s %s%s%s", self->sentence_info, atn_encdec_heads_note(kind),
                                                kind == ATN_STACK_CROSS ? " " : "",
                                                kind == ATN_STACK_CROSS ? atn_encdec_cross_undefined_note() : "");
        gtk_label_set_text(self->info_label, info);
    }
    const atn_stats *st = sentence_stats(self);
    if (r && !st && atn_result_get_stats_pending(r)) {
        /* they follow the result ("stats-ready"): the rows keep their numbers until then, so
           that the new ones go into the same rows (fill_rows) rather than 144 new ones */
        gtk_label_set_text(self->info_label, _("Computing the head statistics…"));
        return;
    }
    if (r && !st)
        gtk_label_set_text(self->info_label, atn_result_get_stats_error(r));
    fill_rows(self, st);
}

/* ---- corpus mode ------------------------------------------------------------------------------ */

/* A corpus pass's statistics and the head sink its forwards feed (worker thread until done). */
typedef struct stats_pass {
    atn_stats *st;
    atn_stats_stream stream;
} stats_pass;

static void stats_pass_free(stats_pass *p) {
    atn_stats_stream_free(&p->stream);
    atn_stats_free(p->st);
    g_free(p);
}

static atn_status add_to_stats(const atn_capture *cap, gpointer data, atn_error *err) {
    stats_pass *p = data;
    return atn_stats_stream_add(&p->stream, cap, 0, err);
}

static void show_corpus_busy(AtnStatsView *self, gboolean busy) {
    gtk_widget_set_visible(GTK_WIDGET(self->corpus_bar), busy);
    gtk_widget_set_visible(GTK_WIDGET(self->corpus_cancel_button), busy);
    gtk_widget_set_sensitive(GTK_WIDGET(self->corpus_button), !busy);
    gtk_widget_set_sensitive(GTK_WIDGET(self->file_button), !busy);
}

static void stop_file(AtnStatsView *self);

static gboolean corpus_poll_cb(gpointer user_data) {
    AtnStatsView *self = user_data;
    gint permille = g_atomic_int_get(self->file_cancel ? &self->file_permille : &self->corpus_permille);
    if (permille < 0)
        gtk_progress_bar_pulse(self->corpus_bar);
    else
        gtk_progress_bar_set_fraction(self->corpus_bar, permille / 1000.0);
    return G_SOURCE_CONTINUE;
}

static void stop_corpus(AtnStatsView *self) {
    if (self->corpus_cancel)
        g_cancellable_cancel(self->corpus_cancel);
    g_clear_object(&self->corpus_cancel);
    g_clear_handle_id(&self->corpus_poll_id, g_source_remove);
    show_corpus_busy(self, FALSE);
}

/* The pass's statistics, taken from the task (the worker is done with them). */
static void corpus_done(GObject *source, GAsyncResult *res, gpointer data) {
    AtnStatsView *self = ATN_STATS_VIEW(source);
    stats_pass *pass = data;
    g_autoptr(GError) error = NULL;
    atn_corpus_report report;
    gboolean ok = atn_corpus_pass_finish(res, &report, &error);
    if (g_task_get_cancellable(G_TASK(res)) != self->corpus_cancel) {   /* superseded or stopped */
        stats_pass_free(pass);
        return;
    }
    atn_stats *st = pass->st;
    int64_t streamed = pass->stream.streamed;
    pass->st = NULL;
    stats_pass_free(pass);
    stop_corpus(self);
    atn_error err = {0};
    if (ok && atn_stats_finish(st, &err) != ATN_OK) {
        g_set_error(&error, G_IO_ERROR, G_IO_ERROR_FAILED, "%s", err.message);
        ok = FALSE;
    }
    if (!ok) {
        atn_stats_free(st);
        if (!g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
            gtk_label_set_text(self->info_label, error->message);
        else
            gtk_label_set_text(self->info_label, self->corpus ? self->corpus_info : self->sentence_info);
        return;
    }
    g_clear_pointer(&self->corpus, atn_stats_free);
    self->corpus = st;
    self->corpus_streamed = streamed;
    g_clear_pointer(&self->file, atn_stats_file_unref);
    atn_stats_file_panel_set_file(self->file_panel, NULL);
    g_autofree char *covered = atn_corpus_pass_describe(self->corpus_path, &report);
    g_free(self->corpus_info);
    self->corpus_info = g_strconcat(covered,
                                    _(". Per sentence the mean over its query tokens, then the mean over sentences."),
                                    NULL);
    refill(self);
}

void atn_stats_view_load_corpus(AtnStatsView *self, const char *path) {
    g_return_if_fail(ATN_IS_STATS_VIEW(self));
    AtnModelHandle *m = self->session ? atn_session_get_model(self->session) : NULL;
    if (!m || !path)
        return;
    if (!atn_model_handle_has_weights(m)) {
        gtk_label_set_text(self->info_label, _("An attention file has no tokenizer or weights: a corpus needs a "
                                               "model (the demo model or a Hugging Face folder)."));
        return;
    }
    if (atn_model_handle_is_toy(m)) {
        gtk_label_set_text(self->info_label, _("A toy model reads its own tokens: a corpus needs a model with a "
                                               "tokenizer (the demo model or a Hugging Face folder)."));
        return;
    }
    stop_corpus(self);
    stop_file(self);
    const atn_config *cfg = atn_model_config(atn_model_handle_get_model(m));
    atn_error err = {0};
    atn_stats *st = atn_stats_new(cfg->n_layers, cfg->n_heads, &err);
    if (!st) {
        gtk_label_set_text(self->info_label, err.message);
        return;
    }
    g_free(self->corpus_path);
    self->corpus_path = g_strdup(path);
    self->corpus_cancel = g_cancellable_new();
    g_autofree char *base = g_path_get_basename(path);
    g_autofree char *text = g_strdup_printf(_("Reading “%s”…"), base);
    gtk_progress_bar_set_text(self->corpus_bar, text);
    gtk_progress_bar_set_fraction(self->corpus_bar, 0);
    show_corpus_busy(self, TRUE);
    self->corpus_poll_id = g_timeout_add(100, corpus_poll_cb, self);
    atn_device dev = atn_session_get_device(self->session) == ATN_DEVICE_CPU ? ATN_DEVICE_CPU : ATN_DEVICE_AUTO;
    stats_pass *pass = g_new0(stats_pass, 1);
    pass->st = st;
    atn_stats_stream_init(&pass->stream, st, NULL);
    atn_corpus_pass_async(G_OBJECT(self), m, path, dev, &pass->stream, add_to_stats, pass, &self->corpus_permille,
                          self->corpus_cancel, corpus_done, pass);
}

gint64 atn_stats_view_get_corpus_streamed(AtnStatsView *self) {
    g_return_val_if_fail(ATN_IS_STATS_VIEW(self), 0);
    return self->corpus ? self->corpus_streamed : 0;
}

gboolean atn_stats_view_get_corpus_busy(AtnStatsView *self) {
    g_return_val_if_fail(ATN_IS_STATS_VIEW(self), FALSE);
    return self->corpus_cancel != NULL;
}

void atn_stats_view_cancel_corpus(AtnStatsView *self) {
    g_return_if_fail(ATN_IS_STATS_VIEW(self));
    if (self->corpus_cancel)
        g_cancellable_cancel(self->corpus_cancel);
    if (self->file_cancel)
        g_cancellable_cancel(self->file_cancel);
}

void atn_stats_view_show_sentence(AtnStatsView *self) {
    g_return_if_fail(ATN_IS_STATS_VIEW(self));
    stop_corpus(self);
    stop_file(self);
    g_clear_pointer(&self->corpus, atn_stats_free);
    g_clear_pointer(&self->file, atn_stats_file_unref);
    atn_stats_file_panel_set_file(self->file_panel, NULL);
    refill(self);
}

/* ---- file mode ---------------------------------------------------------------------------------- */

static void stop_file(AtnStatsView *self) {
    if (!self->file_cancel)
        return;
    g_cancellable_cancel(self->file_cancel);
    g_clear_object(&self->file_cancel);
    g_clear_handle_id(&self->corpus_poll_id, g_source_remove);
    show_corpus_busy(self, FALSE);
}

static void file_done(GObject *source, GAsyncResult *res, gpointer data) {
    AtnStatsView *self = ATN_STATS_VIEW(source);
    g_autoptr(GError) error = NULL;
    g_autoptr(AtnStatsFile) file = atn_stats_file_load_finish(res, &error);
    GCancellable *cancel = g_task_get_cancellable(G_TASK(res));
    if (cancel != self->file_cancel)   /* superseded or stopped */
        return;
    if (file && g_cancellable_is_cancelled(cancel)) {   /* Cancel after the worker finished: as asked */
        g_clear_pointer(&file, atn_stats_file_unref);
        g_set_error_literal(&error, G_IO_ERROR, G_IO_ERROR_CANCELLED, "cancelled");
    }
    stop_file(self);
    if (!file) {
        if (g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED)) {   /* the table keeps what it showed */
            gtk_label_set_text(self->info_label, self->file ? self->file_info
                                                 : self->corpus ? self->corpus_info : self->sentence_info);
            return;
        }
        gtk_label_set_text(self->info_label, error->message);
        g_signal_emit_by_name(self, "file-failed", error->message);
        return;
    }
    g_clear_pointer(&self->corpus, atn_stats_free);
    g_clear_pointer(&self->file, atn_stats_file_unref);
    self->file = atn_stats_file_ref(file);
    g_free(self->file_info);
    self->file_info = atn_stats_file_describe(file);
    atn_stats_file_panel_set_file(self->file_panel, file);
    refill(self);
}

void atn_stats_view_load_file(AtnStatsView *self, const char *path) {
    g_return_if_fail(ATN_IS_STATS_VIEW(self));
    g_return_if_fail(path != NULL);
    stop_corpus(self);
    stop_file(self);
    g_free(self->file_path);
    self->file_path = g_strdup(path);
    self->file_cancel = g_cancellable_new();
    g_autofree char *base = g_path_get_basename(path);
    g_autofree char *text = g_strdup_printf(_("Reading “%s”…"), base);
    gtk_progress_bar_set_text(self->corpus_bar, text);
    gtk_progress_bar_set_fraction(self->corpus_bar, 0);
    show_corpus_busy(self, TRUE);
    self->corpus_poll_id = g_timeout_add(100, corpus_poll_cb, self);
    atn_stats_file_load_async(G_OBJECT(self), path, &self->file_permille, self->file_cancel, file_done, NULL);
}

gboolean atn_stats_view_get_file_busy(AtnStatsView *self) {
    g_return_val_if_fail(ATN_IS_STATS_VIEW(self), FALSE);
    return self->file_cancel != NULL;
}

AtnStatsFilePanel *atn_stats_view_get_file_panel(AtnStatsView *self) {
    g_return_val_if_fail(ATN_IS_STATS_VIEW(self), NULL);
    return self->file_panel;
}

gboolean atn_stats_view_has_file(AtnStatsView *self) {
    g_return_val_if_fail(ATN_IS_STATS_VIEW(self), FALSE);
    return self->file != NULL;
}

static void on_panel_exemplar(AtnStatsFilePanel *p, int layer, int head, int query, int key, const char *text,
                              const char *model, AtnStatsView *self) {
    g_signal_emit(self, signals[SIGNAL_EXEMPLAR_ACTIVATED], 0, layer, head, query, key, text, model);
}

const char *atn_stats_view_get_info(AtnStatsView *self) {
    g_return_val_if_fail(ATN_IS_STATS_VIEW(self), NULL);
    return gtk_label_get_text(self->info_label);
}

char *atn_stats_view_dup_csv(AtnStatsView *self, GError **error) {
    g_return_val_if_fail(ATN_IS_STATS_VIEW(self), NULL);
    const atn_stats *st = self->file ? atn_stats_file_get_means(self->file) : self->corpus;
    atn_error err = {0};
    AtnResult *r = self->session ? atn_session_get_result(self->session) : NULL;
    const char *why = NULL;
    if (!st && r) {
        st = sentence_stats(self);
        why = atn_result_get_stats_error(r);
    }
    if (!st) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND, "%s",
                    why ? why : _("This view has nothing to export yet."));
        return NULL;
    }
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    int kv = 0;   /* "By K/V group": the groups' table, as `stats --by-kv-group --format csv` */
    atn_head_stats *groups = groups_of(self, st, &kv);
    atn_status status = !f ? ATN_E_NOMEM : groups ? atn_stats_write_kv_groups_csv(st, groups, kv, f, &err)
                                                  : atn_stats_write_csv(st, f, &err);
    free(groups);
    if (f)
        fclose(f);
    if (status != ATN_OK) {
        free(text);
        g_set_error_literal(error, G_IO_ERROR, G_IO_ERROR_FAILED, _("Out of memory"));
        return NULL;
    }
    char *copy = g_strndup(text, len);   /* g_free-able */
    free(text);
    return copy;
}

static void load_chosen(GtkWidget *self, const char *path) { atn_stats_view_load_corpus(ATN_STATS_VIEW(self), path); }

static void on_corpus_clicked(GtkButton *b, AtnStatsView *self) { atn_corpus_choose_file(GTK_WIDGET(self), load_chosen); }

static void on_sentence_clicked(GtkButton *b, AtnStatsView *self) { atn_stats_view_show_sentence(self); }

static void on_file_response(GtkNativeDialog *d, int response, AtnStatsView *self) {
    if (response == GTK_RESPONSE_ACCEPT) {
        g_autoptr(GFile) f = gtk_file_chooser_get_file(GTK_FILE_CHOOSER(d));
        g_autofree char *path = f ? g_file_get_path(f) : NULL;
        if (path)
            atn_stats_view_load_file(self, path);
    }
    g_object_unref(d);
    g_object_unref(self);
}

void atn_stats_view_choose_file(AtnStatsView *self) {
    GtkRoot *root = gtk_widget_get_root(GTK_WIDGET(self));
    GtkFileChooserNative *d =
        gtk_file_chooser_native_new(_("Open a Merged Statistics File"), GTK_IS_WINDOW(root) ? GTK_WINDOW(root) : NULL,
                                    GTK_FILE_CHOOSER_ACTION_OPEN, _("_Open"), _("_Cancel"));
    gtk_native_dialog_set_modal(GTK_NATIVE_DIALOG(d), TRUE);
    GtkFileFilter *f = gtk_file_filter_new();
    gtk_file_filter_set_name(f, _("Corpus statistics (safetensors)"));
    gtk_file_filter_add_mime_type(f, "application/x-attnscope-corpus-stats");
    gtk_file_filter_add_pattern(f, "*.safetensors");
    gtk_file_chooser_add_filter(GTK_FILE_CHOOSER(d), f);
    g_object_unref(f);
    g_signal_connect(d, "response", G_CALLBACK(on_file_response), g_object_ref(self));
    gtk_native_dialog_show(GTK_NATIVE_DIALOG(d));
}

static void on_file_clicked(GtkButton *b, AtnStatsView *self) { atn_stats_view_choose_file(self); }
static void on_corpus_cancel_clicked(GtkButton *b, AtnStatsView *self) { atn_stats_view_cancel_corpus(self); }

/* a corpus belongs to the model it was read with */
static void on_model(AtnSession *s, GParamSpec *p, AtnStatsView *self) {
    if (self->corpus || self->corpus_cancel) {   /* a file stays: it is not of this model's runs */
        stop_corpus(self);
        g_clear_pointer(&self->corpus, atn_stats_free);
        refill(self);
    }
}

/* ---- making the rows while hidden -------------------------------------------------------------- */

/* The first switch to this view after a model is opened made its 144 rows (bert-base), and the
 * column view made cells for every one of them, not only the visible ones (1296 "setup" calls
 * counted at 512 tokens): labels made, bound and laid out for the first time, ~150-210 ms of the
 * main thread at once against ~15-25 ms for a switch that finds them (docs/PERFORMANCE.md,
 * "first switch").  So statistics that reach the hidden view make the rows, WARM_ROWS per idle
 * at low priority (3-4 ms each: a keystroke is never kept waiting a frame); the switch then
 * updates them in place (fill_rows). */
enum { WARM_ROWS = 12 };

static gboolean warm_cb(gpointer data) {
    AtnStatsView *self = ATN_STATS_VIEW(data);
    const atn_stats *st = sentence_stats(self);
    if (gtk_widget_get_mapped(GTK_WIDGET(self)) || self->corpus || self->corpus_cancel || self->file || !st ||
        (kv_heads_of(self) > 0 && gtk_check_button_get_active(self->kv_check))) {
        self->warm_id = 0;   /* shown meanwhile (refilled at map), or not the sentence's rows */
        return G_SOURCE_REMOVE;
    }
    if (!rows_lead(self, st, 0)) {   /* another model's rows */
        g_list_store_remove_all(self->store);
        return G_SOURCE_CONTINUE;
    }
    int count = st->n_layers * st->n_heads;
    int have = (int)g_list_model_get_n_items(G_LIST_MODEL(self->store));
    append_rows(self, st, have, MIN(have + WARM_ROWS, count));
    if (have + WARM_ROWS < count)
        return G_SOURCE_CONTINUE;
    self->warm_id = 0;
    return G_SOURCE_REMOVE;
}

static void on_result(AtnSession *s, GParamSpec *p, AtnStatsView *self) {
    self->dirty = TRUE;
    if (gtk_widget_get_mapped(GTK_WIDGET(self))) {
        refill(self);
        return;
    }
    const atn_stats *st = sentence_stats(self);
    if (!self->warm_id && st && !self->corpus && !self->corpus_cancel && !self->file &&
        (g_list_model_get_n_items(G_LIST_MODEL(self->store)) != (guint)(st->n_layers * st->n_heads) ||
         !rows_lead(self, st, 0)))
        self->warm_id = g_idle_add_full(G_PRIORITY_LOW, warm_cb, self, NULL);
}

/* the result's statistics follow it (atn_session_get_analysing) */
static void on_stats_ready(AtnSession *s, AtnStatsView *self) { on_result(s, NULL, self); }

static void atn_stats_view_map(GtkWidget *widget) {
    GTK_WIDGET_CLASS(atn_stats_view_parent_class)->map(widget);
    AtnStatsView *self = ATN_STATS_VIEW(widget);
    if (self->dirty)
        refill(self);
}

/* A new order shows its first rows: the list keeps its scroll anchor on the row that was at
 * the top, which a sort moves anywhere (the bottom, the middle).  The list view takes the
 * scroll once it has laid out the new order, so it is asked for it on the next frame's
 * layout. */
static void scroll_to_top(GtkWidget *list) { gtk_widget_activate_action(list, "list.scroll-to-item", "u", 0u); }

static gboolean scroll_to_top_tick(GtkWidget *table, GdkFrameClock *clock, gpointer data) {
    GtkWidget *list = gtk_widget_get_first_child(table);
    while (list && !GTK_IS_LIST_VIEW(list))   /* the column view's rows: a GtkListView inside */
        list = gtk_widget_get_next_sibling(list);
    GtkAdjustment *adj = gtk_scrollable_get_vadjustment(GTK_SCROLLABLE(table));
    if (list)
        scroll_to_top(list);
    if (!list && adj)
        gtk_adjustment_set_value(adj, gtk_adjustment_get_lower(adj));
    ATN_STATS_VIEW(data)->scroll_tick_id = 0;
    return G_SOURCE_REMOVE;
}

static void on_sort_changed(GtkSorter *sorter, GtkSorterChange change, AtnStatsView *self) {
    if (self->table && !self->scroll_tick_id && !self->resorting)
        self->scroll_tick_id = gtk_widget_add_tick_callback(GTK_WIDGET(self->table), scroll_to_top_tick, self, NULL);
}

void atn_stats_view_activate_row(AtnStatsView *self, guint i) {
    g_return_if_fail(ATN_IS_STATS_VIEW(self));
    if (self->dirty)
        refill(self);
    g_autoptr(AtnHeadStat) row = g_list_model_get_item(G_LIST_MODEL(self->sorted), i);
    if (row && self->file)   /* a file's head (a group's first): its examples, beside (its sentences open a head) */
        atn_stats_file_panel_select_head(self->file_panel, atn_head_stat_get_layer(row),
                                         atn_head_stat_get_head(row) * MAX(1, atn_head_stat_get_group_size(row)));
    else if (row) {
        if (self->corpus && self->session)   /* a corpus's heads: an encoder-decoder's encoder's */
            atn_session_set_stack(self->session, ATN_STACK_ENCODER);
        int per = atn_head_stat_get_group_size(row);   /* a K/V group: its first query head */
        g_signal_emit(self, signals[SIGNAL_HEAD_ACTIVATED], 0, atn_head_stat_get_layer(row),
                      per > 0 ? atn_head_stat_get_head(row) * per : atn_head_stat_get_head(row));
    }
}

static void on_activate(GtkColumnView *view, guint position, AtnStatsView *self) {
    atn_stats_view_activate_row(self, position);
}

guint atn_stats_view_get_n_in_place(AtnStatsView *self) {
    g_return_val_if_fail(ATN_IS_STATS_VIEW(self), 0);
    return self->n_in_place;
}

guint atn_stats_view_get_n_rows_made(AtnStatsView *self) {
    g_return_val_if_fail(ATN_IS_STATS_VIEW(self), 0);
    return g_list_model_get_n_items(G_LIST_MODEL(self->store));
}

GListModel *atn_stats_view_get_model(AtnStatsView *self) {
    g_return_val_if_fail(ATN_IS_STATS_VIEW(self), NULL);
    if (self->dirty)
        refill(self);
    return G_LIST_MODEL(self->sorted);
}

void atn_stats_view_sort_by(AtnStatsView *self, const char *column, GtkSortType order) {
    g_return_if_fail(ATN_IS_STATS_VIEW(self));
    GtkColumnViewColumn *col = g_hash_table_lookup(self->columns, column);
    gtk_column_view_sort_by_column(self->table, col, order);
}

void atn_stats_view_set_by_kv_group(AtnStatsView *self, gboolean on) {
    g_return_if_fail(ATN_IS_STATS_VIEW(self));
    gtk_check_button_set_active(self->kv_check, on);
}

GtkWidget *atn_stats_view_get_kv_check(AtnStatsView *self) {
    g_return_val_if_fail(ATN_IS_STATS_VIEW(self), NULL);
    return GTK_WIDGET(self->kv_check);
}

/* ---- GObject ----------------------------------------------------------------------------------- */

static void atn_stats_view_dispose(GObject *object) {
    AtnStatsView *self = ATN_STATS_VIEW(object);
    if (self->session)
        g_signal_handlers_disconnect_by_data(self->session, self);
    g_clear_object(&self->session);
    if (self->corpus_cancel)
        g_cancellable_cancel(self->corpus_cancel);
    g_clear_object(&self->corpus_cancel);
    g_clear_handle_id(&self->corpus_poll_id, g_source_remove);
    g_clear_handle_id(&self->warm_id, g_source_remove);
    g_clear_pointer(&self->corpus, atn_stats_free);
    g_clear_pointer(&self->corpus_path, g_free);
    if (self->file_cancel)
        g_cancellable_cancel(self->file_cancel);
    g_clear_object(&self->file_cancel);
    g_clear_pointer(&self->file, atn_stats_file_unref);
    g_clear_pointer(&self->file_info, g_free);
    g_clear_pointer(&self->file_path, g_free);
    g_clear_pointer(&self->corpus_info, g_free);
    g_clear_pointer(&self->sentence_info, g_free);
    if (self->scroll_tick_id && self->table)
        gtk_widget_remove_tick_callback(GTK_WIDGET(self->table), self->scroll_tick_id);
    self->scroll_tick_id = 0;
    gtk_widget_dispose_template(GTK_WIDGET(self), ATN_TYPE_STATS_VIEW);
    g_clear_object(&self->store);
    g_clear_pointer(&self->columns, g_hash_table_unref);
    G_OBJECT_CLASS(atn_stats_view_parent_class)->dispose(object);
}

static void atn_stats_view_class_init(AtnStatsViewClass *klass) {
    GtkWidgetClass *wc = GTK_WIDGET_CLASS(klass);
    G_OBJECT_CLASS(klass)->dispose = atn_stats_view_dispose;
    wc->map = atn_stats_view_map;
    g_type_ensure(ATN_TYPE_STATS_FILE_PANEL);
    gtk_widget_class_set_template_from_resource(wc, "/io/github/attnscope/Attnscope/atn-stats-view.ui");
    gtk_widget_class_bind_template_child(wc, AtnStatsView, box);
    gtk_widget_class_bind_template_child(wc, AtnStatsView, table);
    gtk_widget_class_bind_template_child(wc, AtnStatsView, info_label);
    gtk_widget_class_bind_template_child(wc, AtnStatsView, kv_check);
    gtk_widget_class_bind_template_child(wc, AtnStatsView, corpus_button);
    gtk_widget_class_bind_template_child(wc, AtnStatsView, sentence_button);
    gtk_widget_class_bind_template_child(wc, AtnStatsView, corpus_bar);
    gtk_widget_class_bind_template_child(wc, AtnStatsView, corpus_cancel_button);
    gtk_widget_class_bind_template_child(wc, AtnStatsView, file_button);
    gtk_widget_class_bind_template_child(wc, AtnStatsView, file_panel);
    gtk_widget_class_set_layout_manager_type(wc, GTK_TYPE_BIN_LAYOUT);
    signals[SIGNAL_HEAD_ACTIVATED] = g_signal_new("head-activated", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0,
                                                  NULL, NULL, NULL, G_TYPE_NONE, 2, G_TYPE_INT, G_TYPE_INT);
    /* a merged file's example clicked: layer, head, query, key, the sentence, the file's model */
    signals[SIGNAL_EXEMPLAR_ACTIVATED] =
        g_signal_new("exemplar-activated", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                     G_TYPE_NONE, 6, G_TYPE_INT, G_TYPE_INT, G_TYPE_INT, G_TYPE_INT, G_TYPE_STRING, G_TYPE_STRING);
    /* a merged file could not be read: the message (naming the file and the tensor or key) */
    g_signal_new("file-failed", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL, G_TYPE_NONE, 1,
                 G_TYPE_STRING);
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
    /* after the sort model's own handler: the rows are in their new order */
    g_signal_connect_object(sorter, "changed", G_CALLBACK(on_sort_changed), self, G_CONNECT_AFTER);
    GtkSelectionModel *sel = GTK_SELECTION_MODEL(gtk_single_selection_new(G_LIST_MODEL(self->sorted)));
    gtk_single_selection_set_autoselect(GTK_SINGLE_SELECTION(sel), FALSE);
    gtk_single_selection_set_can_unselect(GTK_SINGLE_SELECTION(sel), TRUE);
    gtk_column_view_set_model(self->table, sel);
    g_object_unref(sel);
    g_signal_connect(self->table, "activate", G_CALLBACK(on_activate), self);
    g_signal_connect(self->corpus_button, "clicked", G_CALLBACK(on_corpus_clicked), self);
    g_signal_connect(self->sentence_button, "clicked", G_CALLBACK(on_sentence_clicked), self);
    g_signal_connect(self->file_button, "clicked", G_CALLBACK(on_file_clicked), self);
    g_signal_connect(self->file_panel, "exemplar-activated", G_CALLBACK(on_panel_exemplar), self);
    g_signal_connect(self->corpus_cancel_button, "clicked", G_CALLBACK(on_corpus_cancel_clicked), self);
    g_signal_connect_swapped(self->kv_check, "toggled", G_CALLBACK(refill), self);
    self->sentence_info = g_strdup(gtk_label_get_text(self->info_label));
}

GtkWidget *atn_stats_view_new(void) { return g_object_new(ATN_TYPE_STATS_VIEW, NULL); }

void atn_stats_view_set_session(AtnStatsView *self, AtnSession *session) {
    g_return_if_fail(ATN_IS_STATS_VIEW(self));
    if (self->session)
        g_signal_handlers_disconnect_by_data(self->session, self);
    g_set_object(&self->session, session);
    if (session) {
        g_signal_connect(session, "notify::result", G_CALLBACK(on_result), self);
        g_signal_connect(session, "stats-ready", G_CALLBACK(on_stats_ready), self);
        g_signal_connect(session, "notify::model", G_CALLBACK(on_model), self);
        g_signal_connect(session, "notify::stack", G_CALLBACK(on_result), self);   /* an encoder-decoder's */
    }
    self->dirty = TRUE;
}

/* ---- AtnView ---------------------------------------------------------------------------------- */

static void view_set_session(AtnView *view, AtnSession *session) { atn_stats_view_set_session(ATN_STATS_VIEW(view), session); }
static AtnViewExport view_get_export(AtnView *view) { return ATN_VIEW_EXPORT_TEXT; }   /* a table: CSV */
static char *view_dup_export_text(AtnView *view, GError **error) { return atn_stats_view_dup_csv(ATN_STATS_VIEW(view), error); }

ATN_VIEW_REGISTER(atn_stats_view)

static void view_iface_init(AtnViewInterface *iface) {
    iface->set_session = view_set_session;
    iface->get_export = view_get_export;
    iface->dup_export_text = view_dup_export_text;
    iface->export_title = N_("Export Statistics");
    iface->export_file_name = "head-statistics.csv";
}
