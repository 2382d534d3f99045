/* AtnWindow and session files (atn-session-file.h, docs/session-file.md): File → Save
 * Session… writes what the window shows; File → Open Session…, the command line, a drop and a
 * file manager open one.  Applying a state (also a lesson step's, atn-window-lessons.c) is
 * staged: the preferences (colour map and scale, precision) at once; the model opened when it
 * is another; once it is shown, the text, the what-if changes and the view; once the result
 * of that text and model has come, the layer, head and query token (a new model starts on its
 * clearest head, so they are set after its first result).  A state whose model does not open
 * is dropped: the session reports the error and keeps the model shown. */
#include "atn-window-private.h"
#include "atn-window-test.h"
#include "atn-session-file.h"
#include "atn-whatif.h"

#include <glib/gi18n.h>
#include <string.h>

typedef struct pending_state {
    AtnSessionState state;
    char *source;        /* the model to wait for, NULL: the one shown */
    int stage;           /* 0: waiting for the model; 1: for its result; 2: for the what-if run */
    guint runs;          /* the session's runs when the stage began: a later one is its */
} pending_state;

static void pending_state_free(gpointer p) {
    pending_state *ps = p;
    atn_session_state_clear(&ps->state);
    g_free(ps->source);
    g_free(ps);
}

#define PENDING_KEY "atn-pending-session"

static gboolean shows_model(AtnWindow *self, const char *source) {
    AtnModelHandle *m = atn_session_get_model(self->session);
    if (atn_session_get_opening(self->session))
        return FALSE;
    if (!source)
        return m != NULL;
    return m && (!g_strcmp0(atn_model_handle_get_source(m), source) || !g_strcmp0(atn_model_handle_get_name(m), source));
}

/* The state's what-if changes for a model of L layers x H heads (NULL: the original). */
static AtnWhatif *whatif_of_state(const AtnSessionState *s, int L, int H) {
    atn_interventions iv;
    atn_interventions_init(&iv);
    g_autofree uint8_t *off = NULL, *mask_layers = NULL;
    if (s->heads_off && s->heads_off->len) {
        off = g_new0(uint8_t, (gsize)L * H);
        for (guint i = 0; i + 1 < s->heads_off->len; i += 2) {
            int l = g_array_index(s->heads_off, int, i), h = g_array_index(s->heads_off, int, i + 1);
            if (l < L && h < H)
                off[(gsize)l * H + h] = 1;
        }
        iv.heads_off = off;
        iv.head_mode = s->uniform ? ATN_HEAD_UNIFORM : ATN_HEAD_ZERO;
    }
    if (s->mask_layers && s->mask_layers->len) {
        mask_layers = g_new0(uint8_t, L);
        for (guint i = 0; i < s->mask_layers->len; i++)
            if (g_array_index(s->mask_layers, int, i) < L)
                mask_layers[g_array_index(s->mask_layers, int, i)] = 1;
        iv.mask_layers = mask_layers;
    }
    iv.causal = s->causal;
    iv.window = s->window;
    iv.strided = s->strided;
    iv.global_tokens = s->global_tokens ? (const int32_t *)s->global_tokens->data : NULL;
    iv.n_global = s->global_tokens ? (int32_t)s->global_tokens->len : 0;
    iv.hide_tokens = s->hide_tokens ? (const int32_t *)s->hide_tokens->data : NULL;
    iv.n_hide = s->hide_tokens ? (int32_t)s->hide_tokens->len : 0;
    iv.alibi = s->alibi;
    iv.no_positions = s->no_positions;
    iv.shuffle = s->shuffle;
    iv.shuffle_seed = s->shuffle_seed;
    iv.temperature = (float)s->temperature;
    return atn_whatif_new(&iv, L, H);
}

/* Out-of-range layer, head or query token of a state applied to a result: said in the
 * notice bar (the nearest one is shown). */
static void say_out_of_range(AtnWindow *self, const pending_state *ps, AtnResult *r) {
    int L = atn_result_get_n_layers(r), H = atn_result_get_n_heads(r), n = atn_result_get_n_tokens(r);
    g_autoptr(GString) msg = g_string_new(NULL);
    if (ps->state.layer >= L)
        g_string_append_printf(msg, _("key “layer”: %d is outside the model’s layers 0 to %d."), ps->state.layer, L - 1);
    if (ps->state.head >= H)
        g_string_append_printf(msg, "%s", msg->len ? " " : ""),
            g_string_append_printf(msg, _("key “head”: %d is outside the model’s heads 0 to %d."), ps->state.head, H - 1);
    if (ps->state.query >= n)
        g_string_append_printf(msg, "%s", msg->len ? " " : ""),
            g_string_append_printf(msg, _("key “query”: %d is outside the text’s tokens 0 to %d."), ps->state.query,
                                   n - 1);
    if (msg->len)
        _atn_window_show_notice(self, msg->str);
}

static gboolean same_whatif(AtnWhatif *a, AtnWhatif *b) {
    if (!a || !b)
        return a == b;
    g_autofree char *da = atn_whatif_describe(a), *db = atn_whatif_describe(b);
    g_auto(GStrv) ca = atn_whatif_dup_cli_args(a), cb = atn_whatif_dup_cli_args(b);
    g_autofree char *ja = g_strjoinv(" ", ca), *jb = g_strjoinv(" ", cb);
    return !g_strcmp0(da, db) && !g_strcmp0(ja, jb);
}

/* Stage 1 (the model is shown): text, view, selection.  Stage 2 (a result of that model has
 * come: the What-if page has started the new model from the original by then): the what-if
 * changes.  Stage 3 (a run after those): layer, head and query, and done. */
static void advance(AtnWindow *self) {
    pending_state *ps = g_object_get_data(G_OBJECT(self), PENDING_KEY);
    if (!ps || !shows_model(self, ps->source))
        return;
    AtnSessionState *s = &ps->state;
    AtnModelHandle *m = atn_session_get_model(self->session);
    if (ps->stage == 0) {
        ps->stage = 1;
        ps->runs = atn_session_get_n_runs(self->session);
        if (s->text && atn_model_handle_has_weights(m) && !atn_model_handle_is_toy(m)) {
            g_autofree char *t = s->text_pair && *s->text_pair ? g_strdup_printf("%s ||| %s", s->text, s->text_pair)
                                                               : g_strdup(s->text);
            atn_window_set_text(self, t);
        }
        if (s->view)
            atn_window_show_view(self, s->view);
        atn_session_rerun(self->session);
        return;
    }
    AtnResult *r = atn_session_get_result(self->session);
    if (!r || atn_result_get_model(r) != m || atn_session_get_busy(self->session) ||
        atn_session_get_n_runs(self->session) <= ps->runs)
        return;
    if (ps->stage == 1) {
        ps->stage = 2;
        if (s->has_whatif || s->model_kind != ATN_SESSION_MODEL_NONE) {
            g_autoptr(AtnWhatif) w = whatif_of_state(s, atn_result_get_n_layers(r), atn_result_get_n_heads(r));
            if (!same_whatif(w, atn_session_get_whatif(self->session))) {
                ps->runs = atn_session_get_n_runs(self->session);
                atn_session_set_whatif(self->session, w);   /* runs at once */
                return;
            }
        }
    }
    if (s->layer >= 0 || s->head >= 0)
        atn_session_select_head(self->session, s->layer >= 0 ? s->layer : atn_session_get_layer(self->session),
                                s->head >= 0 ? s->head : atn_session_get_head(self->session));
    if (s->query >= 0)
        atn_session_set_query(self->session, MIN(s->query, atn_result_get_n_tokens(r) - 1));
    say_out_of_range(self, ps, r);
    g_object_set_data(G_OBJECT(self), PENDING_KEY, NULL);
    g_signal_emit_by_name(self, "state-applied");
}

static void on_session_changed(AtnSession *s, GParamSpec *p, AtnWindow *self) { advance(self); }

/* The model did not open: the state is dropped (the session keeps the model shown and the
 * window shows its error). */
static void on_session_error(AtnSession *s, const char *message, AtnWindow *self) {
    pending_state *ps = g_object_get_data(G_OBJECT(self), PENDING_KEY);
    if (ps && ps->source && !shows_model(self, ps->source))
        g_object_set_data(G_OBJECT(self), PENDING_KEY, NULL);
}

gboolean atn_window_is_applying_state(AtnWindow *self) {
    return g_object_get_data(G_OBJECT(self), PENDING_KEY) != NULL;
}

void _atn_window_apply_state(AtnWindow *self, const AtnSessionState *s) {
    AtnPrefs *prefs = atn_prefs_get_default();
    if (s->colormap)
        atn_prefs_set_colormap(prefs, s->colormap);
    if (s->color_scale)
        atn_prefs_set_color_scale(prefs, s->color_scale);
    if (s->precision)
        atn_prefs_set_precision(prefs, s->precision);
    pending_state *ps = g_new0(pending_state, 1);
    atn_session_state_init(&ps->state);
    /* a deep copy through the JSON form, which holds every field */
    cJSON *obj = cJSON_CreateObject();
    atn_session_state_to_json(s, obj);
    atn_session_state_from_json(&ps->state, obj, FALSE, "", NULL, NULL);
    cJSON_Delete(obj);
    ps->state.model_kind = s->model_kind;   /* kept as read (a path stays as given) */
    g_free(ps->state.model);
    ps->state.model = g_strdup(s->model);
    ps->source = atn_session_state_model_source(s);
    g_object_set_data_full(G_OBJECT(self), PENDING_KEY, ps, pending_state_free);
    if (ps->source && !shows_model(self, ps->source))
        atn_session_open_model(self->session, ps->source);
    else
        advance(self);
}

/* ---- the window's state as a session ---------------------------------------------------- */

gboolean atn_window_get_state(AtnWindow *self, AtnSessionState *s, GError **error) {
    atn_session_state_clear(s);
    AtnModelHandle *m = atn_session_get_model(self->session);
    if (!m || !atn_model_handle_has_weights(m)) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                    m ? _("A session needs a model: an attention file cannot be saved as a session.")
                      : _("A session needs a model: none is open."));
        return FALSE;
    }
    atn_session_state_set_model_source(s, atn_model_handle_get_source(m));
    if (!atn_model_handle_is_toy(m)) {
        s->text = g_strdup(atn_session_get_text(self->session) ? atn_session_get_text(self->session) : "");
        const char *pair = atn_session_get_text_pair(self->session);
        s->text_pair = pair && *pair ? g_strdup(pair) : NULL;
    }
    s->view = g_strdup(atn_window_get_view(self));
    s->layer = atn_session_get_layer(self->session);
    s->head = atn_session_get_head(self->session);
    s->query = atn_session_get_query(self->session);
    AtnPrefs *prefs = atn_prefs_get_default();
    s->colormap = g_strdup(atn_prefs_get_colormap(prefs));
    s->color_scale = g_strdup(g_strcmp0(atn_prefs_get_color_scale(prefs), "fixed") ? "head" : "fixed");
    const char *prec = atn_prefs_get_precision(prefs);
    s->precision = g_strdup(!g_strcmp0(prec, "bf16") || !g_strcmp0(prec, "fp16") ? prec : "fp32");
    s->has_whatif = TRUE;
    AtnWhatif *w = atn_session_get_whatif(self->session);
    if (w) {
        const atn_interventions *iv = atn_whatif_get(w);
        int L = atn_whatif_get_n_layers(w), H = atn_whatif_get_n_heads(w);
        if (iv->heads_off) {
            s->heads_off = g_array_new(FALSE, FALSE, sizeof(int));
            for (int l = 0; l < L; l++)
                for (int h = 0; h < H; h++)
                    if (iv->heads_off[(size_t)l * H + h]) {
                        g_array_append_val(s->heads_off, l);
                        g_array_append_val(s->heads_off, h);
                    }
            s->uniform = iv->head_mode == ATN_HEAD_UNIFORM;
        }
        if (iv->mask_layers) {
            s->mask_layers = g_array_new(FALSE, FALSE, sizeof(int));
            for (int l = 0; l < L; l++)
                if (iv->mask_layers[l])
                    g_array_append_val(s->mask_layers, l);
        }
        s->causal = iv->causal;
        s->window = iv->window;
        s->strided = iv->strided;
        if (iv->n_global) {
            s->global_tokens = g_array_new(FALSE, FALSE, sizeof(int));
            g_array_append_vals(s->global_tokens, iv->global_tokens, iv->n_global);
        }
        if (iv->n_hide) {
            s->hide_tokens = g_array_new(FALSE, FALSE, sizeof(int));
            g_array_append_vals(s->hide_tokens, iv->hide_tokens, iv->n_hide);
        }
        s->alibi = iv->alibi;
        s->no_positions = iv->no_positions;
        s->shuffle = iv->shuffle;
        s->shuffle_seed = iv->shuffle_seed;
        s->temperature = iv->temperature > 0 ? iv->temperature : 1.0;
    }
    return TRUE;
}

gboolean atn_window_save_session_to(AtnWindow *self, const char *path, GError **error) {
    g_return_val_if_fail(ATN_IS_WINDOW(self), FALSE);
    AtnSessionState s;
    atn_session_state_init(&s);
    gboolean ok = atn_window_get_state(self, &s, error) && atn_session_file_save(path, &s, error);
    atn_session_state_clear(&s);
    return ok;
}

gboolean atn_window_open_session(AtnWindow *self, const char *path) {
    g_return_val_if_fail(ATN_IS_WINDOW(self), FALSE);
    AtnSessionState s;
    atn_session_state_init(&s);
    GError *error = NULL;
    if (!atn_session_file_load(path, &s, &error) || !atn_session_state_check_model(&s, path, &error)) {
        atn_session_state_clear(&s);   /* a missing model folder: the state was read whole */
        _atn_window_show_error(self, error->message);
        g_error_free(error);
        return FALSE;
    }
    _atn_window_apply_state(self, &s);
    atn_session_state_clear(&s);
    return TRUE;
}

/* ---- the dialogs ------------------------------------------------------------------------ */

/* A new filter (the chooser takes a reference of its own). */
static GtkFileFilter *session_filter(void) {
    GtkFileFilter *f = gtk_file_filter_new();
    gtk_file_filter_set_name(f, _("attnscope sessions"));
    gtk_file_filter_add_mime_type(f, "application/x-attnscope-session");
    gtk_file_filter_add_pattern(f, "*.attnscope-session");
    gtk_file_filter_add_pattern(f, "*.json");
    return f;
}

static void on_open_response(GtkNativeDialog *d, int response, AtnWindow *self) {
    if (response == GTK_RESPONSE_ACCEPT) {
        g_autoptr(GFile) file = gtk_file_chooser_get_file(GTK_FILE_CHOOSER(d));
        g_autofree char *path = file ? g_file_get_path(file) : NULL;
        if (path)
            atn_window_open_session(self, path);
    }
    g_object_unref(d);
}

static void open_session_action(GtkWidget *widget, const char *name, GVariant *param) {
    AtnWindow *self = ATN_WINDOW(widget);
    GtkFileChooserNative *d = gtk_file_chooser_native_new(_("Open Session"), GTK_WINDOW(self),
                                                          GTK_FILE_CHOOSER_ACTION_OPEN, _("_Open"), _("_Cancel"));
    gtk_native_dialog_set_modal(GTK_NATIVE_DIALOG(d), TRUE);
    g_autoptr(GtkFileFilter) f = session_filter();
    gtk_file_chooser_add_filter(GTK_FILE_CHOOSER(d), f);
    g_signal_connect(d, "response", G_CALLBACK(on_open_response), self);
    gtk_native_dialog_show(GTK_NATIVE_DIALOG(d));
}

static void on_save_response(GtkNativeDialog *d, int response, AtnWindow *self) {
    if (response == GTK_RESPONSE_ACCEPT) {
        g_autoptr(GFile) file = gtk_file_chooser_get_file(GTK_FILE_CHOOSER(d));
        g_autofree char *path = file ? g_file_get_path(file) : NULL;
        GError *error = NULL;
        if (path && !atn_window_save_session_to(self, path, &error)) {
            _atn_window_show_error(self, error->message);
            g_error_free(error);
        } else if (path) {
            g_autofree char *base = g_path_get_basename(path);
            g_autofree char *msg = g_strdup_printf(_("Saved the session as “%s”"), base);
            _atn_window_say(self, msg);
        }
    }
    g_object_unref(d);
}

static void save_session_action(GtkWidget *widget, const char *name, GVariant *param) {
    AtnWindow *self = ATN_WINDOW(widget);
    GtkFileChooserNative *d = gtk_file_chooser_native_new(_("Save Session"), GTK_WINDOW(self),
                                                          GTK_FILE_CHOOSER_ACTION_SAVE, _("_Save"), _("_Cancel"));
    gtk_native_dialog_set_modal(GTK_NATIVE_DIALOG(d), TRUE);
    g_autoptr(GtkFileFilter) f = session_filter();
    gtk_file_chooser_add_filter(GTK_FILE_CHOOSER(d), f);
    AtnModelHandle *m = atn_session_get_model(self->session);
    g_autofree char *suggested = g_strdup_printf("%s.attnscope-session", m ? atn_model_handle_get_name(m) : "session");
    g_strdelimit(suggested, "/", '-');
    gtk_file_chooser_set_current_name(GTK_FILE_CHOOSER(d), suggested);
    g_signal_connect(d, "response", G_CALLBACK(on_save_response), self);
    gtk_native_dialog_show(GTK_NATIVE_DIALOG(d));
}

void _atn_window_class_session_init(GtkWidgetClass *wc) {
    gtk_widget_class_install_action(wc, "win.open-session", NULL, open_session_action);
    gtk_widget_class_install_action(wc, "win.save-session", NULL, save_session_action);
    gtk_widget_class_add_binding_action(wc, GDK_KEY_s, GDK_CONTROL_MASK | GDK_SHIFT_MASK, "win.save-session", NULL);
    g_signal_new("state-applied", G_TYPE_FROM_CLASS(wc), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL, G_TYPE_NONE, 0);
}

void _atn_window_session_init(AtnWindow *self) {
    g_signal_connect_object(self->session, "notify::model", G_CALLBACK(on_session_changed), self, 0);
    g_signal_connect_object(self->session, "notify::result", G_CALLBACK(on_session_changed), self, 0);
    g_signal_connect_object(self->session, "notify::busy", G_CALLBACK(on_session_changed), self, 0);
    g_signal_connect_object(self->session, "error", G_CALLBACK(on_session_error), self, 0);
}
