/* AtnWindow and merged corpus statistics files (ui/atn-stats-file.h): File → Open
 * Statistics…, files dropped on the window (statistics, session files, attention files, model
 * folders and toy JSON, told apart by their contents), and an example clicked in the Statistics view opened as
 * its sentence in the Head view with the example's query selected and its key outlined. */
#include "atn-window-private.h"
#include "atn-window-test.h"
#include "atn-stats-view.h"
#include "corpus-stats.h"

#include <glib/gi18n.h>
#include <string.h>

void atn_window_open_stats(AtnWindow *self, const char *path) {
    g_return_if_fail(ATN_IS_WINDOW(self));
    atn_window_show_view(self, "statistics");
    atn_stats_view_load_file(ATN_STATS_VIEW(atn_window_get_view_widget(self, "statistics")), path);
}

static void open_stats_action(GtkWidget *widget, const char *name, GVariant *param) {
    AtnWindow *self = ATN_WINDOW(widget);
    atn_window_show_view(self, "statistics");
    atn_stats_view_choose_file(ATN_STATS_VIEW(atn_window_get_view_widget(self, "statistics")));
}

/* ---- drag and drop ------------------------------------------------------------------------------ */

/* "attnscope-attention/1" in the first 64 KiB of a safetensors header (as the MIME magic). */
static gboolean is_attention_file(const char *path) {
    g_autoptr(GFile) f = g_file_new_for_path(path);
    g_autoptr(GFileInputStream) in = g_file_read(f, NULL, NULL);
    if (!in)
        return FALSE;
    char buf[65536 + 9];
    gsize got = 0;
    if (!g_input_stream_read_all(G_INPUT_STREAM(in), buf, sizeof buf - 1, &got, NULL, NULL) || got < 9)
        return FALSE;
    buf[got] = 0;
    for (gsize i = 8; i + 21 <= got; i++)
        if (!memcmp(buf + i, "attnscope-attention/1", 21))
            return TRUE;
    return FALSE;
}

void atn_window_open_path(AtnWindow *self, const char *path) {
    g_return_if_fail(ATN_IS_WINDOW(self));
    if (atn_corpus_stats_sniff(path))
        atn_window_open_stats(self, path);
    else if (g_file_test(path, G_FILE_TEST_IS_REGULAR) && atn_session_file_sniff(path))
        atn_window_open_session(self, path);
    else if (g_file_test(path, G_FILE_TEST_IS_REGULAR) && is_attention_file(path))
        atn_session_open_attention(self->session, path);
    else   /* a model folder or a toy JSON file; its own error otherwise */
        atn_session_open_model(self->session, path);
}

static gboolean on_drop(GtkDropTarget *target, const GValue *value, double x, double y, AtnWindow *self) {
    if (!G_VALUE_HOLDS(value, GDK_TYPE_FILE_LIST))
        return FALSE;
    GSList *files = g_value_get_boxed(value);
    g_autofree char *path = files ? g_file_get_path(files->data) : NULL;
    if (!path) {
        _atn_window_show_error(self, _("Only local files and folders can be opened."));
        return FALSE;
    }
    atn_window_open_path(self, path);
    return TRUE;
}

/* ---- an example opened --------------------------------------------------------------------------- */

typedef struct pending {
    int layer, head, query, key;
    char *model;
} pending;

static void pending_free(gpointer p) {
    pending *e = p;
    g_free(e->model);
    g_free(e);
}

static gboolean model_is(AtnSession *s, const char *model) {
    AtnModelHandle *m = atn_session_get_model(s);
    return m && atn_model_handle_has_weights(m) && !atn_session_get_opening(s) &&
           (!g_strcmp0(atn_model_handle_get_source(m), model) || !g_strcmp0(atn_model_handle_get_name(m), model));
}

/* The pending example's query and key on the result, once it is of the example's model. */
static void apply_pending(AtnWindow *self) {
    pending *e = g_object_get_data(G_OBJECT(self), "atn-pending-example");
    AtnResult *r = atn_session_get_result(self->session);
    if (!e || !r || !model_is(self->session, e->model))
        return;
    int n = atn_result_get_n_tokens(r);
    atn_session_select_head(self->session, e->layer, e->head);   /* a new model starts on its clearest head */
    if (e->query < n)
        atn_session_set_query(self->session, e->query);
    if (e->key < n)
        atn_session_set_hover_token(self->session, e->key);
    g_object_set_data(G_OBJECT(self), "atn-pending-example", NULL);
}

static void on_result_for_example(AtnSession *s, GParamSpec *p, AtnWindow *self) { apply_pending(self); }

static void on_exemplar(GtkWidget *view, int layer, int head, int query, int key, const char *text, const char *model,
                        AtnWindow *self) {
    pending *e = g_new0(pending, 1);
    e->layer = layer, e->head = head, e->query = query, e->key = key, e->model = g_strdup(model);
    g_object_set_data_full(G_OBJECT(self), "atn-pending-example", e, pending_free);
    gboolean same_model = model_is(self->session, model);
    gboolean same_text = !g_strcmp0(atn_session_get_text(self->session), text) &&
                         !atn_session_get_text_pair(self->session);
    if (!same_model)   /* the file's model: its tokens are the example's */
        atn_session_open_model(self->session, model);
    atn_window_set_text(self, text);
    atn_session_select_head(self->session, layer, head);
    atn_window_show_view(self, "head");
    if (same_model && same_text && !atn_session_get_busy(self->session))
        apply_pending(self);   /* nothing runs: the result shown is the sentence's */
}

static void on_file_failed(GtkWidget *view, const char *message, AtnWindow *self) { _atn_window_show_error(self, message); }

/* ---- installing --------------------------------------------------------------------------------- */

void _atn_window_class_stats_init(GtkWidgetClass *wc) {
    gtk_widget_class_install_action(wc, "win.open-stats", NULL, open_stats_action);
}

void _atn_window_stats_init(AtnWindow *self) {
    GtkWidget *view = atn_window_get_view_widget(self, "statistics");
    if (view) {
        g_signal_connect(view, "exemplar-activated", G_CALLBACK(on_exemplar), self);
        g_signal_connect(view, "file-failed", G_CALLBACK(on_file_failed), self);
    }
    g_signal_connect_object(self->session, "notify::result", G_CALLBACK(on_result_for_example), self, 0);
    GtkDropTarget *drop = gtk_drop_target_new(GDK_TYPE_FILE_LIST, GDK_ACTION_COPY);
    g_signal_connect(drop, "drop", G_CALLBACK(on_drop), self);
    gtk_widget_add_controller(GTK_WIDGET(self), GTK_EVENT_CONTROLLER(drop));
}
