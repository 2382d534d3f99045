/* Save dialogs for figures and text; the writing happens in a worker thread. */
#include "atn-export.h"
#include "atn-export-test.h"

#include <glib/gi18n.h>
#include <stdlib.h>
#include <string.h>

#include "atn-encdec.h"
#include "attnscope.h"
#include "render.h"

typedef struct export_job {
    AtnFigure *fig;   /* or NULL for text */
    char *files[3];   /* or the figure's PNG, SVG and PDF, written already */
    char *text;
    char *path;
    double scale;
} export_job;

static void export_job_free(export_job *job) {
    atn_figure_free(job->fig);
    for (int i = 0; i < 3; i++)
        g_free(job->files[i]);
    g_free(job->text);
    g_free(job->path);
    g_free(job);
}

static void write_thread(GTask *task, gpointer source, gpointer data, GCancellable *cancellable) {
    export_job *job = data;
    GError *error = NULL;
    if (job->fig) {
        if (!atn_figure_save(job->fig, job->path, job->scale, &error)) {
            g_task_return_error(task, error);
            return;
        }
    } else if (job->files[0]) {   /* the written figure of the path's format, copied */
        atn_output_format f = ATN_OUTPUT_PNG;
        atn_output_format_from_path(job->path, &f);
        const char *from = job->files[f == ATN_OUTPUT_SVG ? 1 : f == ATN_OUTPUT_PDF ? 2 : 0];
        char *bytes = NULL;
        gsize len = 0;
        atn_error err = {0};
        if (!g_file_get_contents(from, &bytes, &len, &error)) {
            g_task_return_error(task, error);
            return;
        }
        atn_status st = atn_write_file_atomic(job->path, bytes, len, &err);
        g_free(bytes);
        if (st != ATN_OK) {
            g_task_return_new_error(task, G_IO_ERROR, G_IO_ERROR_FAILED, "%s", err.message);
            return;
        }
    } else {
        atn_error err = {0};
        if (atn_write_file_atomic(job->path, job->text, strlen(job->text), &err) != ATN_OK) {
            g_task_return_new_error(task, G_IO_ERROR, G_IO_ERROR_FAILED, "%s", err.message);
            return;
        }
    }
    g_task_return_pointer(task, g_strdup(job->path), g_free);
}

static const char *const formats[] = {"png", "svg", "pdf", NULL};

/* Where the last export from a dialog went (main thread): the next dialog opens there, else
 * in the working directory. */
static char *last_folder;

static void remember_folder(const char *folder) {
    g_free(last_folder);
    last_folder = g_strdup(folder);
}

static void start_in_last_folder(GtkFileChooser *d) {
    g_autofree char *cwd = g_get_current_dir();
    g_autoptr(GFile) start = g_file_new_for_path(last_folder ? last_folder : cwd);
    gtk_file_chooser_set_current_folder(d, start, NULL);
}

/* The Format and Scale choices of the figure dialogs (PNG at 2x by default: slides). */
static void add_figure_choices(GtkFileChooser *d) {
    const char *format_labels[] = {_("PNG image"), _("SVG drawing"), _("PDF document"), NULL};
    gtk_file_chooser_add_choice(d, "format", _("Format"), (const char **)formats, format_labels);
    gtk_file_chooser_set_choice(d, "format", "png");
    static const char *const scales[] = {"1", "2", "3", "4", NULL};
    const char *scale_labels[] = {_("1× (screen)"), _("2× (slides)"), _("3×"), _("4× (print)"), NULL};
    gtk_file_chooser_add_choice(d, "scale", _("Scale"), (const char **)scales, scale_labels);
    gtk_file_chooser_set_choice(d, "scale", "2");
}

/* Selects the option labelled `label` in the drop-downs under w that offer it, and hides the
 * drop-downs that offer nothing. */
static void tidy_dropdowns(GtkWidget *w, const char *label) {
    if (GTK_IS_DROP_DOWN(w)) {
        GListModel *m = gtk_drop_down_get_model(GTK_DROP_DOWN(w));
        guint n = m ? g_list_model_get_n_items(m) : 0;
        if (n == 0)
            gtk_widget_set_visible(w, FALSE);
        for (guint i = 0; i < n && label; i++) {
            g_autoptr(GObject) item = g_list_model_get_item(m, i);
            if (GTK_IS_STRING_OBJECT(item) && !strcmp(gtk_string_object_get_string(GTK_STRING_OBJECT(item)), label))
                gtk_drop_down_set_selected(GTK_DROP_DOWN(w), i);
        }
        return;
    }
    for (GtkWidget *c = gtk_widget_get_first_child(w); c; c = gtk_widget_get_next_sibling(c))
        tidy_dropdowns(c, label);
}

/* Shows a chooser.  Without a portal GtkFileChooserNative shows GTK's own dialog, which in
 * GTK 4.8 starts every choice at its first option whatever gtk_file_chooser_set_choice said
 * (the Scale read "1×" and 1× was written, though 2× is the default), and shows an empty
 * filter drop-down reading "(None)" beside the choices: both are put right on that dialog,
 * found among the toplevels as the visible file chooser over parent. */
static void show_chooser(GtkFileChooserNative *d, GtkWindow *parent) {
    gboolean figure = gtk_file_chooser_get_choice(GTK_FILE_CHOOSER(d), "scale") != NULL;
    gtk_native_dialog_show(GTK_NATIVE_DIALOG(d));
    GListModel *tops = gtk_window_get_toplevels();
    for (guint i = 0; i < g_list_model_get_n_items(tops); i++) {
        g_autoptr(GObject) w = g_list_model_get_item(tops, i);
        if (GTK_IS_FILE_CHOOSER(w) && GTK_IS_WINDOW(w) && gtk_widget_get_visible(GTK_WIDGET(w)) &&
            gtk_window_get_transient_for(GTK_WINDOW(w)) == parent)
            tidy_dropdowns(GTK_WIDGET(w), figure ? _("2× (slides)") : NULL);
    }
}

/* The format ("png" ...) and scale chosen. */
static const char *read_figure_choices(GtkFileChooser *d, double *scale) {
    const char *fmt = gtk_file_chooser_get_choice(d, "format");
    const char *sc = gtk_file_chooser_get_choice(d, "scale");
    *scale = sc ? g_ascii_strtod(sc, NULL) : 2.0;
    if (*scale <= 0)
        *scale = 2.0;
    return fmt ? fmt : "png";
}

char *atn_export_figure_path(const char *typed, const char *chosen_format) {
    g_return_val_if_fail(typed != NULL, NULL);
    atn_output_format f;
    if (atn_output_format_from_path(typed, &f))
        return g_strdup(typed);   /* the typed extension decides: Format follows it */
    return g_strconcat(typed, ".", chosen_format ? chosen_format : "png", NULL);
}

/* Decides the path (the typed name, or with the chosen format's extension when it has none)
 * and the scale; returns FALSE with the task already answered when there is nothing to write.
 * *typed is the name the dialog returned (which it already asked about replacing). */
static gboolean take_path(GtkNativeDialog *dialog, int response, GTask *task, char **typed) {
    export_job *job = g_task_get_task_data(task);
    if (response != GTK_RESPONSE_ACCEPT) {
        g_task_return_new_error(task, G_IO_ERROR, G_IO_ERROR_CANCELLED, "cancelled");
        return FALSE;
    }
    g_autoptr(GFile) file = gtk_file_chooser_get_file(GTK_FILE_CHOOSER(dialog));
    char *path = file ? g_file_get_path(file) : NULL;
    if (!path) {
        g_task_return_new_error(task, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED, _("Only local files can be written."));
        return FALSE;
    }
    *typed = g_strdup(path);
    if (job->fig || job->files[0]) {
        const char *fmt = read_figure_choices(GTK_FILE_CHOOSER(dialog), &job->scale);
        char *decided = atn_export_figure_path(path, fmt);
        g_free(path);
        path = decided;
    }
    job->path = path;
    g_autofree char *folder = g_path_get_dirname(path);
    remember_folder(folder);
    return TRUE;
}

/* The question shown before replacing a file the dialog did not ask about (NULL when none). */
static GtkWidget *replace_question;

GtkWidget *atn_export_get_replace_question(void) { return replace_question; }

static void on_replace_response(GtkDialog *d, int response, GTask *task) {
    replace_question = NULL;
    gtk_window_destroy(GTK_WINDOW(d));
    if (response == GTK_RESPONSE_ACCEPT)
        g_task_run_in_thread(task, write_thread);
    else
        g_task_return_new_error(task, G_IO_ERROR, G_IO_ERROR_CANCELLED, "cancelled");
    g_object_unref(task);
}

/* The dialog asked about replacing the name as typed; a name the format's extension was added
 * to may be another file that exists: ask about that one, as the dialog would have. */
static void ask_replace(GtkWindow *parent, GTask *task) {
    export_job *job = g_task_get_task_data(task);
    g_autofree char *base = g_path_get_basename(job->path);
    g_autofree char *dir = g_path_get_dirname(job->path);
    g_autofree char *dir_name = g_filename_display_basename(dir);
    GtkWidget *d = gtk_message_dialog_new(parent, GTK_DIALOG_MODAL | GTK_DIALOG_DESTROY_WITH_PARENT,
                                          GTK_MESSAGE_QUESTION, GTK_BUTTONS_NONE,
                                          _("A file named “%s” already exists. Do you want to replace it?"), base);
    gtk_message_dialog_format_secondary_text(GTK_MESSAGE_DIALOG(d),
                                             _("The file already exists in “%s”. Replacing it will overwrite its contents."),
                                             dir_name);
    gtk_dialog_add_buttons(GTK_DIALOG(d), _("_Cancel"), GTK_RESPONSE_CANCEL, _("_Replace"), GTK_RESPONSE_ACCEPT, NULL);
    gtk_dialog_set_default_response(GTK_DIALOG(d), GTK_RESPONSE_CANCEL);
    g_signal_connect(d, "response", G_CALLBACK(on_replace_response), task);
    replace_question = d;
    gtk_window_present(GTK_WINDOW(d));
}

static void on_response(GtkNativeDialog *dialog, int response, GTask *task) {
    g_autofree char *typed = NULL;
    if (take_path(dialog, response, task, &typed)) {
        export_job *job = g_task_get_task_data(task);
        if (strcmp(job->path, typed) && g_file_test(job->path, G_FILE_TEST_EXISTS)) {
            ask_replace(gtk_native_dialog_get_transient_for(dialog), task);   /* takes the task */
            g_object_unref(dialog);
            return;
        }
        g_task_run_in_thread(task, write_thread);
    }
    g_object_unref(task);
    g_object_unref(dialog);
}

static void run_dialog(GtkWindow *parent, export_job *job, const char *title, const char *suggested,
                       GAsyncReadyCallback callback, gpointer user_data) {
    GTask *task = g_task_new(parent, NULL, callback, user_data);
    g_task_set_task_data(task, job, (GDestroyNotify)export_job_free);
    GtkFileChooserNative *d =
        gtk_file_chooser_native_new(title, parent,
                                    GTK_FILE_CHOOSER_ACTION_SAVE, _("_Export"), _("_Cancel"));
    gtk_native_dialog_set_modal(GTK_NATIVE_DIALOG(d), TRUE);
    start_in_last_folder(GTK_FILE_CHOOSER(d));
    gtk_file_chooser_set_current_name(GTK_FILE_CHOOSER(d), suggested);
    if (job->fig || job->files[0])
        add_figure_choices(GTK_FILE_CHOOSER(d));
    g_signal_connect(d, "response", G_CALLBACK(on_response), task);
    show_chooser(d, parent);
}

void atn_export_figure_async(GtkWindow *parent, AtnFigure *fig, GAsyncReadyCallback callback, gpointer user_data) {
    g_return_if_fail(parent == NULL || GTK_IS_WINDOW(parent));
    g_return_if_fail(fig != NULL);
    export_job *job = g_new0(export_job, 1);
    job->fig = fig;
    g_autofree char *name = g_strconcat(fig->basename, ".png", NULL);
    run_dialog(parent, job, _("Export Figure"), name, callback, user_data);
}

void atn_export_figure_files_async(GtkWindow *parent, const char *png, const char *svg, const char *pdf,
                                   const char *basename, GAsyncReadyCallback callback, gpointer user_data) {
    g_return_if_fail(parent == NULL || GTK_IS_WINDOW(parent));
    g_return_if_fail(png && svg && pdf && basename);
    export_job *job = g_new0(export_job, 1);
    job->files[0] = g_strdup(png), job->files[1] = g_strdup(svg), job->files[2] = g_strdup(pdf);
    g_autofree char *name = g_strconcat(basename, ".png", NULL);
    run_dialog(parent, job, _("Export Figure"), name, callback, user_data);
}

void atn_export_text_async(GtkWindow *parent, char *text, const char *title, const char *suggested_name,
                           GAsyncReadyCallback callback,
                           gpointer user_data) {
    g_return_if_fail(parent == NULL || GTK_IS_WINDOW(parent));
    g_return_if_fail(text != NULL);
    export_job *job = g_new0(export_job, 1);
    job->text = text;
    run_dialog(parent, job, title, suggested_name, callback, user_data);
}

char *atn_export_finish(GAsyncResult *result, GError **error) {
    g_return_val_if_fail(G_IS_TASK(result), NULL);
    return g_task_propagate_pointer(G_TASK(result), error);
}

/* ---- every head ---------------------------------------------------------------------- */

typedef struct heads_job {
    AtnResult *result;
    AtnHeatmapLook *look;
    char *prefix, *folder, *format, *model_name;
    double scale;
    AtnExportProgress progress;
    gpointer progress_data;
    GtkWindow *parent;        /* kept alive for the progress calls */
    gint written;             /* files written so far (worker; read after it ends) */
} heads_job;

static void heads_job_free(heads_job *job) {
    g_clear_object(&job->result);
    atn_heatmap_look_free(job->look);
    g_free(job->prefix);
    g_free(job->folder);
    g_free(job->format);
    g_free(job->model_name);
    g_clear_object(&job->parent);
    g_free(job);
}

typedef struct progress_call {
    heads_job *job;
    GTask *task;   /* holds job alive */
    int done, total;
} progress_call;

static gboolean progress_idle(gpointer data) {
    progress_call *c = data;
    if (c->job->progress)
        c->job->progress(c->done, c->total, c->job->progress_data);
    g_object_unref(c->task);
    g_free(c);
    return G_SOURCE_REMOVE;
}

static void heads_thread(GTask *task, gpointer source, gpointer data, GCancellable *cancellable) {
    heads_job *job = data;
    int L = atn_result_get_n_layers(job->result), H = atn_result_get_n_heads(job->result);
    int n = atn_result_get_n_tokens(job->result);
    /* prefix "decoder" or "cross": that stack of an encoder-decoder's result, its own layers */
    atn_stack_kind kind = ATN_STACK_ENCODER;
    const atn_stack *st = atn_stack_kind_parse(job->prefix, &kind) && kind != ATN_STACK_ENCODER
                              ? atn_result_get_stack(job->result, kind) : NULL;
    if (st)
        L = st->n_layers;
    /* this thread's room for a head made on demand (a full capture's are read in place) */
    const atn_capture *cap = atn_result_get_capture(job->result);
    g_autofree float *scratch = (st ? st->attn : cap->attn) ? NULL
                                : g_try_new(float, st ? (size_t)st->n_q * st->n_k : (size_t)n * n);
    for (int l = 0; l < L; l++) {
        for (int h = 0; h < H; h++) {
            if (g_cancellable_is_cancelled(cancellable)) {
                g_task_return_new_error(task, G_IO_ERROR, G_IO_ERROR_CANCELLED, "cancelled");
                return;
            }
            if (!st && !atn_capture_head_present(atn_result_get_capture(job->result), l, h))
                continue;   /* a head an attention file's layer lacks: no file, not zeros */
            g_autofree char *title = st ? g_strdup_printf(_("%s · layer %d · head %d · %s"), job->model_name, l, h,
                                                          atn_encdec_stack_title(kind))
                                        : g_strdup_printf(_("%s · layer %d · head %d"), job->model_name, l, h);
            char *name = atn_render_head_file_name(job->prefix, l, h, L, H, job->format);
            g_autofree char *path = name ? g_build_filename(job->folder, name, NULL) : NULL;
            atn_error herr = {0};   /* a stack's head read here, into this thread's scratch */
            const float *values = st ? atn_stack_head_read(cap, st, l, h, scratch, &herr)
                                     : atn_result_read_head(job->result, l, h, scratch);
            AtnFigure *fig = atn_heatmap_look_figure(job->look, values, title, name);
            GError *error = NULL;
            gboolean ok = fig && path && atn_figure_save(fig, path, job->scale, &error);
            atn_figure_free(fig);
            free(name);
            if (!ok) {
                if (!error && herr.message[0])
                    error = g_error_new_literal(G_IO_ERROR, G_IO_ERROR_FAILED, herr.message);
                if (!error)
                    error = g_error_new(G_IO_ERROR, G_IO_ERROR_FAILED, _("Nothing to draw for layer %d head %d"), l,
                                        h);
                g_task_return_error(task, error);
                return;
            }
            g_atomic_int_inc(&job->written);
            progress_call *c = g_new0(progress_call, 1);
            *c = (progress_call){job, g_object_ref(task), l * H + h + 1, L * H};
            g_main_context_invoke(NULL, progress_idle, c);
        }
    }
    g_task_return_int(task, g_atomic_int_get(&job->written));
}

static void on_heads_response(GtkNativeDialog *dialog, int response, GTask *task) {
    heads_job *job = g_task_get_task_data(task);
    g_autoptr(GFile) file = response == GTK_RESPONSE_ACCEPT ? gtk_file_chooser_get_file(GTK_FILE_CHOOSER(dialog))
                                                             : NULL;
    job->folder = file ? g_file_get_path(file) : NULL;
    if (response != GTK_RESPONSE_ACCEPT) {
        g_task_return_new_error(task, G_IO_ERROR, G_IO_ERROR_CANCELLED, "cancelled");
    } else if (!job->folder) {
        g_task_return_new_error(task, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED, _("Only local folders can be written."));
    } else {
        remember_folder(job->folder);
        job->format = g_strdup(read_figure_choices(GTK_FILE_CHOOSER(dialog), &job->scale));
        g_task_run_in_thread(task, heads_thread);
    }
    g_object_unref(task);
    g_object_unref(dialog);
}

static GTask *heads_task(GtkWindow *parent, AtnResult *result, AtnHeatmapLook *look, const char *prefix,
                         GCancellable *cancel, AtnExportProgress progress, GAsyncReadyCallback callback,
                         gpointer user_data) {
    heads_job *job = g_new0(heads_job, 1);
    job->result = g_object_ref(result);
    job->look = look;
    job->prefix = g_strdup(prefix && *prefix ? prefix : "head");
    job->model_name = g_strdup(atn_model_handle_get_name(atn_result_get_model(result)));
    job->progress = progress;
    job->progress_data = user_data;
    job->parent = parent ? g_object_ref(parent) : NULL;
    GTask *task = g_task_new(parent, cancel, callback, user_data);
    g_task_set_task_data(task, job, (GDestroyNotify)heads_job_free);
    return task;
}

void atn_export_all_heads_async(GtkWindow *parent, AtnResult *result, AtnHeatmapLook *look, const char *prefix,
                                GCancellable *cancel, AtnExportProgress progress, GAsyncReadyCallback callback,
                                gpointer user_data) {
    g_return_if_fail(ATN_IS_RESULT(result));
    g_return_if_fail(look != NULL);
    GTask *task = heads_task(parent, result, look, prefix, cancel, progress, callback, user_data);
    GtkFileChooserNative *d = gtk_file_chooser_native_new(_("Export Every Head"), parent,
                                                          GTK_FILE_CHOOSER_ACTION_SELECT_FOLDER, _("_Export"),
                                                          _("_Cancel"));
    gtk_native_dialog_set_modal(GTK_NATIVE_DIALOG(d), TRUE);
    start_in_last_folder(GTK_FILE_CHOOSER(d));
    add_figure_choices(GTK_FILE_CHOOSER(d));
    g_signal_connect(d, "response", G_CALLBACK(on_heads_response), task);
    show_chooser(d, parent);
}

void atn_export_all_heads_to_async(GtkWindow *parent, AtnResult *result, AtnHeatmapLook *look, const char *prefix,
                                   const char *folder, const char *format, double scale, GCancellable *cancel,
                                   AtnExportProgress progress, GAsyncReadyCallback callback, gpointer user_data) {
    g_return_if_fail(ATN_IS_RESULT(result));
    g_return_if_fail(look != NULL);
    g_return_if_fail(folder != NULL);
    GTask *task = heads_task(parent, result, look, prefix, cancel, progress, callback, user_data);
    heads_job *job = g_task_get_task_data(task);
    job->folder = g_strdup(folder);
    job->format = g_strdup(format ? format : "png");
    job->scale = scale > 0 ? scale : 1.0;
    g_task_run_in_thread(task, heads_thread);
    g_object_unref(task);
}

int atn_export_all_heads_finish(GAsyncResult *result, char **folder, int *written, GError **error) {
    g_return_val_if_fail(G_IS_TASK(result), -1);
    heads_job *job = g_task_get_task_data(G_TASK(result));
    if (folder)
        *folder = g_strdup(job->folder);
    if (written)
        *written = g_atomic_int_get(&job->written);
    return (int)g_task_propagate_int(G_TASK(result), error);
}
