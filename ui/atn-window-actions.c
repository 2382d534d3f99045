/* AtnWindow's window actions (win.*) and their keyboard shortcuts: opening models, the
 * examples, the views, saving toy models, presentation mode, stepping through heads.  The
 * export actions are in atn-window-export.c. */
#include "atn-window-private.h"
#include "atn-window-test.h"
#include "atn-get-model-dialog.h"
#include "atn-precision-dialog.h"
#include "atn-prefs.h"

#include <glib/gi18n.h>
#include <string.h>

static void open_model_action(GtkWidget *widget, const char *name, GVariant *param) {
    AtnWindow *self = ATN_WINDOW(widget);
    atn_session_open_model(self->session, g_variant_get_string(param, NULL));
}

static void get_model_action(GtkWidget *widget, const char *name, GVariant *param) {
    AtnGetModelDialog *d = atn_get_model_dialog_new(ATN_WINDOW(widget));
    gtk_window_set_modal(GTK_WINDOW(d), TRUE);
    gtk_window_present(GTK_WINDOW(d));
}

static void on_open_response(GtkNativeDialog *dialog, int response, AtnWindow *self) {
    if (response == GTK_RESPONSE_ACCEPT) {
        g_autoptr(GFile) file = gtk_file_chooser_get_file(GTK_FILE_CHOOSER(dialog));
        g_autofree char *path = file ? g_file_get_path(file) : NULL;
        if (path)
            atn_session_open_model(self->session, path);
        else
            _atn_window_show_error(self, _("Only local folders can be opened."));
    }
    g_object_unref(dialog);
}

static void open_chooser(AtnWindow *self, gboolean folder) {
    GtkFileChooserNative *d = gtk_file_chooser_native_new(
        folder ? _("Open a Hugging Face Model Folder") : _("Open a Toy Model File"), GTK_WINDOW(self),
        folder ? GTK_FILE_CHOOSER_ACTION_SELECT_FOLDER : GTK_FILE_CHOOSER_ACTION_OPEN, _("_Open"), _("_Cancel"));
    gtk_native_dialog_set_modal(GTK_NATIVE_DIALOG(d), TRUE);
    if (!folder) {
        g_autoptr(GtkFileFilter) f = gtk_file_filter_new();
        gtk_file_filter_set_name(f, _("Toy models (JSON)"));
        gtk_file_filter_add_pattern(f, "*.json");
        gtk_file_chooser_add_filter(GTK_FILE_CHOOSER(d), f);
    }
    g_signal_connect(d, "response", G_CALLBACK(on_open_response), self);
    gtk_native_dialog_show(GTK_NATIVE_DIALOG(d));
}

static void open_folder_action(GtkWidget *w, const char *n, GVariant *p) { open_chooser(ATN_WINDOW(w), TRUE); }
static void open_file_action(GtkWidget *w, const char *n, GVariant *p) { open_chooser(ATN_WINDOW(w), FALSE); }

/* win.open-attention: an attention file (docs/attention-file.md), shown without weights. */
static void on_open_attention_response(GtkNativeDialog *dialog, int response, AtnWindow *self) {
    if (response == GTK_RESPONSE_ACCEPT) {
        g_autoptr(GFile) file = gtk_file_chooser_get_file(GTK_FILE_CHOOSER(dialog));
        g_autofree char *path = file ? g_file_get_path(file) : NULL;
        if (path)
            atn_session_open_attention(self->session, path);
        else
            _atn_window_show_error(self, _("Only local files can be opened."));
    }
    g_object_unref(dialog);
}

static void open_attention_action(GtkWidget *widget, const char *name, GVariant *param) {
    AtnWindow *self = ATN_WINDOW(widget);
    GtkFileChooserNative *d = gtk_file_chooser_native_new(_("Open an Attention File"), GTK_WINDOW(self),
                                                          GTK_FILE_CHOOSER_ACTION_OPEN, _("_Open"), _("_Cancel"));
    gtk_native_dialog_set_modal(GTK_NATIVE_DIALOG(d), TRUE);
    g_autoptr(GtkFileFilter) f = gtk_file_filter_new();
    gtk_file_filter_set_name(f, _("Attention files (safetensors, npz, npy)"));
    gtk_file_filter_add_mime_type(f, "application/x-attnscope-attention");
    gtk_file_filter_add_pattern(f, "*.safetensors");
    gtk_file_filter_add_pattern(f, "*.npz");
    gtk_file_filter_add_pattern(f, "*.npy");
    gtk_file_chooser_add_filter(GTK_FILE_CHOOSER(d), f);
    g_signal_connect(d, "response", G_CALLBACK(on_open_attention_response), self);
    gtk_native_dialog_show(GTK_NATIVE_DIALOG(d));
}

static void example_action(GtkWidget *widget, const char *name, GVariant *param) {
    AtnWindow *self = ATN_WINDOW(widget);
    int i = g_variant_get_int32(param);
    if (i < 0 || i >= (int)self->examples->len)
        return;
    g_autofree char *model = NULL;
    const char *text = _atn_window_example_model(g_ptr_array_index(self->examples, i), &model);
    _atn_window_set_example(self, text);
    AtnModelHandle *m = atn_session_get_model(self->session);
    if (model && (!m || g_strcmp0(atn_model_handle_get_name(m), model)))
        atn_session_open_model(self->session, model);   /* the example is about this model */
}

/* the n-th page of the view stack (from 0), if there is one */
static void view_nth_action(GtkWidget *widget, const char *name, GVariant *param) {
    AtnWindow *self = ATN_WINDOW(widget);
    int n = g_variant_get_int32(param);
    GtkWidget *page = gtk_widget_get_first_child(GTK_WIDGET(self->stack));
    for (; page && n > 0; n--)
        page = gtk_widget_get_next_sibling(page);
    if (page && n == 0)
        gtk_stack_set_visible_child(self->stack, page);
}

static void view_action(GtkWidget *widget, const char *name, GVariant *param) {
    atn_window_show_view(ATN_WINDOW(widget), g_variant_get_string(param, NULL));
}

/* ---- toy models: saving, and not losing edits at close ------------------------------------- */

gboolean atn_window_save_toy_to(AtnWindow *self, const char *path, GError **error) {
    g_return_val_if_fail(ATN_IS_WINDOW(self), FALSE);
    AtnModelHandle *m = atn_session_get_model(self->session);
    if (!m || !atn_model_handle_is_toy(m)) {
        g_set_error_literal(error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED, _("Only toy models can be saved."));
        return FALSE;
    }
    return atn_model_handle_save_toy(m, path, error);
}

typedef struct save_toy {
    AtnWindow *window;
    AtnModelHandle *model;
    gboolean then_close;   /* the close prompt asked for it: close once saved */
} save_toy;

static void on_save_toy_response(GtkNativeDialog *d, int response, save_toy *st) {
    AtnWindow *self = st->window;
    g_autoptr(GFile) file = response == GTK_RESPONSE_ACCEPT ? gtk_file_chooser_get_file(GTK_FILE_CHOOSER(d)) : NULL;
    g_autofree char *path = file ? g_file_get_path(file) : NULL;
    if (path && !g_str_has_suffix(path, ".json")) {
        char *with = g_strconcat(path, ".json", NULL);
        g_free(path);
        path = with;
    }
    g_autoptr(GError) error = NULL;
    if (path && !atn_model_handle_save_toy(st->model, path, &error)) {
        _atn_window_show_error(self, error->message);
    } else if (path) {
        g_autofree char *msg = g_strdup_printf(_("Saved %s"), path);
        _atn_window_say(self, msg);
        if (st->then_close)
            gtk_window_close(GTK_WINDOW(self));   /* asks again if another toy model is unsaved */
    }
    g_object_unref(st->model);
    g_object_unref(st->window);
    g_free(st);
    g_object_unref(d);
}

void _atn_window_save_toy_dialog(AtnWindow *self, AtnModelHandle *m, gboolean then_close) {
    save_toy *st = g_new0(save_toy, 1);
    st->window = g_object_ref(self);
    st->model = g_object_ref(m);
    st->then_close = then_close;
    GtkFileChooserNative *d = gtk_file_chooser_native_new(_("Save Toy Model"), GTK_WINDOW(self),
                                                          GTK_FILE_CHOOSER_ACTION_SAVE, _("_Save"), _("_Cancel"));
    gtk_native_dialog_set_modal(GTK_NATIVE_DIALOG(d), TRUE);
    g_autofree char *name = g_strdup_printf("%s.json", atn_model_handle_get_name(m));
    gtk_file_chooser_set_current_name(GTK_FILE_CHOOSER(d), name);
    g_signal_connect(d, "response", G_CALLBACK(on_save_toy_response), st);
    gtk_native_dialog_show(GTK_NATIVE_DIALOG(d));
}

static void save_toy_action(GtkWidget *widget, const char *name, GVariant *param) {
    AtnWindow *self = ATN_WINDOW(widget);
    AtnModelHandle *m = atn_session_get_model(self->session);
    if (m && atn_model_handle_is_toy(m))
        _atn_window_save_toy_dialog(self, m, FALSE);
}

/* Half Precision…: the current sentence in fp32 against the preferred bf16 / fp16 (bf16 when
 * the preference is fp32). */
static void precision_diff_action(GtkWidget *widget, const char *name, GVariant *param) {
    AtnWindow *self = ATN_WINDOW(widget);
    const char *pref = atn_prefs_get_precision(atn_prefs_get_default());
    GtkWidget *d = atn_precision_dialog_new(GTK_WINDOW(self), self->session,
                                            !g_strcmp0(pref, "fp16") ? ATN_PRECISION_FP16 : ATN_PRECISION_BF16);
    gtk_window_present(GTK_WINDOW(d));
}

/* win.revert-toy: the toy model's numbers back as they were opened (the Trace view's Reset
 * uses it too). */
static void revert_toy_action(GtkWidget *widget, const char *name, GVariant *param) {
    AtnWindow *self = ATN_WINDOW(widget);
    AtnModelHandle *m = atn_session_get_model(self->session);
    if (!m || !atn_model_handle_get_edited(m))
        return;
    if (atn_session_revert_toy(self->session))
        _atn_window_say(self, _("Back to the original numbers"));
}

static void presentation_activate(GSimpleAction *a, GVariant *p, gpointer data) {
    AtnWindow *self = data;
    atn_window_set_presentation(self, !self->presentation);
}

static void leave_presentation_action(GtkWidget *w, const char *n, GVariant *p) {
    AtnWindow *self = ATN_WINDOW(w);
    if (self->presentation)
        atn_window_set_presentation(self, FALSE);
    else {
        gtk_info_bar_set_revealed(self->error_bar, FALSE);
        gtk_info_bar_set_revealed(self->notice_bar, FALSE);
    }
}

static void focus_text_action(GtkWidget *widget, const char *name, GVariant *param) {
    AtnWindow *self = ATN_WINDOW(widget);
    gtk_widget_grab_focus(GTK_WIDGET(self->text_entry));
}

static void step_action(GtkWidget *widget, const char *name, GVariant *param) {
    AtnWindow *self = ATN_WINDOW(widget);
    int dl = !strcmp(name, "win.layer-next") ? 1 : !strcmp(name, "win.layer-prev") ? -1 : 0;
    int dh = !strcmp(name, "win.head-next") ? 1 : !strcmp(name, "win.head-prev") ? -1 : 0;
    atn_session_step_head(self->session, dl, dh);
}

/* ---- installing them ------------------------------------------------------------------------ */

void _atn_window_class_actions_init(GtkWidgetClass *wc) {
    gtk_widget_class_install_action(wc, "win.open-model", "s", open_model_action);
    gtk_widget_class_install_action(wc, "win.open-folder", NULL, open_folder_action);
    gtk_widget_class_install_action(wc, "win.get-model", NULL, get_model_action);
    gtk_widget_class_install_action(wc, "win.open-file", NULL, open_file_action);
    gtk_widget_class_install_action(wc, "win.open-attention", NULL, open_attention_action);
    gtk_widget_class_install_action(wc, "win.example", "i", example_action);
    gtk_widget_class_install_action(wc, "win.view", "s", view_action);
    gtk_widget_class_install_action(wc, "win.save-toy", NULL, save_toy_action);
    gtk_widget_class_install_action(wc, "win.precision-diff", NULL, precision_diff_action);
    gtk_widget_class_install_action(wc, "win.revert-toy", NULL, revert_toy_action);
    gtk_widget_class_install_action(wc, "win.focus-text", NULL, focus_text_action);
    gtk_widget_class_install_action(wc, "win.escape", NULL, leave_presentation_action);
    gtk_widget_class_install_action(wc, "win.layer-next", NULL, step_action);
    gtk_widget_class_install_action(wc, "win.layer-prev", NULL, step_action);
    gtk_widget_class_install_action(wc, "win.head-next", NULL, step_action);
    gtk_widget_class_install_action(wc, "win.head-prev", NULL, step_action);

    gtk_widget_class_add_binding_action(wc, GDK_KEY_o, GDK_CONTROL_MASK, "win.open-folder", NULL);
    gtk_widget_class_add_binding_action(wc, GDK_KEY_e, GDK_CONTROL_MASK, "win.export", NULL);
    gtk_widget_class_add_binding_action(wc, GDK_KEY_c, GDK_CONTROL_MASK | GDK_SHIFT_MASK, "win.copy-figure", NULL);
    gtk_widget_class_add_binding_action(wc, GDK_KEY_m, GDK_CONTROL_MASK, "win.export-trace", NULL);
    gtk_widget_class_add_binding_action(wc, GDK_KEY_l, GDK_CONTROL_MASK, "win.focus-text", NULL);
    gtk_widget_class_add_binding_action(wc, GDK_KEY_Escape, 0, "win.escape", NULL);
    gtk_widget_class_add_binding_action(wc, GDK_KEY_Down, GDK_ALT_MASK, "win.layer-next", NULL);
    gtk_widget_class_add_binding_action(wc, GDK_KEY_Up, GDK_ALT_MASK, "win.layer-prev", NULL);
    gtk_widget_class_add_binding_action(wc, GDK_KEY_Right, GDK_ALT_MASK, "win.head-next", NULL);
    gtk_widget_class_add_binding_action(wc, GDK_KEY_Left, GDK_ALT_MASK, "win.head-prev", NULL);
    gtk_widget_class_install_action(wc, "win.view-nth", "i", view_nth_action);
    for (int i = 0; i < 9; i++)   /* Alt+1 … Alt+9: the views in the order of the switcher */
        gtk_widget_class_add_binding_action(wc, GDK_KEY_1 + i, GDK_ALT_MASK, "win.view-nth", "i", i);
}

void _atn_window_actions_init(AtnWindow *self) {
    /* presentation: a stateful action, so the menu shows a check */
    static const GActionEntry entries[] = {
        {"presentation", presentation_activate, NULL, "false", NULL},
    };
    g_action_map_add_action_entries(G_ACTION_MAP(self), entries, G_N_ELEMENTS(entries), self);
}
