/* A corpus pass in a worker thread (see atn-corpus-pass.h). */
#include "atn-corpus-pass.h"
#include "atn-memory-limit.h"
#include "atn-error-text.h"
#include "atn-session.h"

#include <errno.h>
#include <glib/gi18n.h>
#include <stdio.h>
#include <sys/stat.h>

typedef struct pass_job {
    AtnModelHandle *model;
    char *path;
    atn_device device;
    atn_stats_stream *stream;
    AtnCorpusConsume consume;
    gpointer consume_data;
    gint *permille;
    GCancellable *cancellable;
    atn_corpus_report report;
} pass_job;

static void pass_job_free(pass_job *job) {
    g_clear_object(&job->model);
    g_free(job->path);
    g_clear_object(&job->cancellable);
    g_free(job);
}

static bool pass_progress(double fraction, atn_stage stage, void *user) {
    pass_job *job = user;
    g_atomic_int_set(job->permille, (gint)(fraction * 1000 + 0.5));
    return !g_cancellable_is_cancelled(job->cancellable);
}

static atn_status pass_consume(const atn_capture *cap, void *user, atn_error *err) {
    pass_job *job = user;
    return job->consume(cap, job->consume_data, err);
}

static void pass_thread(GTask *task, gpointer source, gpointer data, GCancellable *cancellable) {
    pass_job *job = data;
    atn_session_lower_worker_priority("corpus");   /* a forward per sentence: the window comes first */
    FILE *f = fopen(job->path, "rb");
    if (!f) {
        g_task_return_new_error(task, G_IO_ERROR, G_IO_ERROR_FAILED, _("Cannot open “%s”: %s"), job->path,
                                g_strerror(errno));
        return;
    }
    struct stat sb;
    double total = fstat(fileno(f), &sb) == 0 && S_ISREG(sb.st_mode) ? (double)sb.st_size : 0;
    atn_run_options opts;
    atn_ui_run_options_init(&opts);
    opts.device = job->device;
    opts.keep_trace_inputs = false;   /* only the attention is needed */
    opts.pinned_host = true;          /* one run for every sentence */
    if (job->stream)                  /* statistics only: from the heads as they are made */
        atn_stats_stream_use(job->stream, &opts);
    atn_error err = {0};
    atn_status st = atn_corpus_run(atn_model_handle_get_model(job->model), f, total, &opts, pass_consume,
                                   pass_progress, job, &job->report, &err);
    fclose(f);
    if (st == ATN_E_CANCELLED)
        g_task_return_new_error(task, G_IO_ERROR, G_IO_ERROR_CANCELLED, "cancelled");
    else if (st != ATN_OK) {
        g_autofree char *why = atn_error_text(&err);
        g_task_return_new_error(task, G_IO_ERROR, G_IO_ERROR_FAILED, "%s: %s", job->path, why);
    }
    else if (job->report.sentences == 0)
        g_task_return_new_error(task, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                                _("“%s” has no sentences (no non-empty lines that are UTF-8 text)."), job->path);
    else
        g_task_return_boolean(task, TRUE);
}

void atn_corpus_pass_async(GObject *source, AtnModelHandle *model, const char *path, atn_device device,
                           atn_stats_stream *stream, AtnCorpusConsume consume, gpointer consume_data, gint *permille,
                           GCancellable *cancel, GAsyncReadyCallback callback, gpointer user_data) {
    g_return_if_fail(ATN_IS_MODEL_HANDLE(model));
    g_return_if_fail(path != NULL);
    g_return_if_fail(consume != NULL);
    g_return_if_fail(permille != NULL);
    pass_job *job = g_new0(pass_job, 1);
    job->model = g_object_ref(model);
    job->path = g_strdup(path);
    job->device = device;
    job->stream = stream;
    job->consume = consume;
    job->consume_data = consume_data;
    job->permille = permille;
    job->cancellable = cancel ? g_object_ref(cancel) : g_cancellable_new();
    g_atomic_int_set(permille, 0);
    g_autoptr(GTask) task = g_task_new(source, job->cancellable, callback, user_data);
    g_task_set_task_data(task, job, (GDestroyNotify)pass_job_free);
    g_task_run_in_thread(task, pass_thread);
}

gboolean atn_corpus_pass_finish(GAsyncResult *result, atn_corpus_report *report, GError **error) {
    g_return_val_if_fail(G_IS_TASK(result), FALSE);
    pass_job *job = g_task_get_task_data(G_TASK(result));
    if (report)
        *report = job->report;
    return g_task_propagate_boolean(G_TASK(result), error);
}

char *atn_corpus_pass_describe(const char *path, const atn_corpus_report *r) {
    g_return_val_if_fail(path != NULL && r != NULL, NULL);
    g_autofree char *base = g_path_get_basename(path);
    GString *info = g_string_new(NULL);
    g_string_printf(info, ngettext("Averaged over %lld sentence of “%s”", "Averaged over %lld sentences of “%s”",
                                   (unsigned long)r->sentences),
                    (long long)r->sentences, base);
    if (r->skipped)
        g_string_append_printf(info, ngettext(" (%lld line skipped: not UTF-8 text)",
                                              " (%lld lines skipped: not UTF-8 text)", (unsigned long)r->skipped),
                               (long long)r->skipped);
    if (r->cut)
        g_string_append_printf(info, ngettext(", %lld line cut at %d KB", ", %lld lines cut at %d KB",
                                              (unsigned long)r->cut),
                               (long long)r->cut, (int)(ATN_CORPUS_LINE_MAX / 1024));
    if (r->truncated)
        g_string_append_printf(info, ngettext(", %lld cut to the model's length", ", %lld cut to the model's length",
                                              (unsigned long)r->truncated),
                               (long long)r->truncated);
    return g_string_free(info, FALSE);
}

typedef struct choose {
    GtkWidget *from;
    AtnCorpusChosen chosen;
} choose;

/* The folder of the last corpus chosen (main thread). */
static char *last_corpus_folder;

static void on_chosen(GtkNativeDialog *d, int response, choose *c) {
    g_autoptr(GFile) file = response == GTK_RESPONSE_ACCEPT ? gtk_file_chooser_get_file(GTK_FILE_CHOOSER(d)) : NULL;
    g_autofree char *path = file ? g_file_get_path(file) : NULL;
    if (path) {
        g_free(last_corpus_folder);
        last_corpus_folder = g_path_get_dirname(path);
        c->chosen(c->from, path);
    }
    g_object_unref(c->from);
    g_free(c);
    g_object_unref(d);
}

void atn_corpus_choose_file(GtkWidget *from, AtnCorpusChosen chosen) {
    GtkRoot *root = gtk_widget_get_root(from);
    GtkFileChooserNative *d = gtk_file_chooser_native_new(_("Corpus: a text file, one sentence per line"),
                                                          GTK_IS_WINDOW(root) ? GTK_WINDOW(root) : NULL,
                                                          GTK_FILE_CHOOSER_ACTION_OPEN, _("_Open"), _("_Cancel"));
    gtk_native_dialog_set_modal(GTK_NATIVE_DIALOG(d), TRUE);
    GtkFileFilter *text = gtk_file_filter_new();
    gtk_file_filter_set_name(text, _("Text files"));
    gtk_file_filter_add_mime_type(text, "text/plain");
    gtk_file_chooser_add_filter(GTK_FILE_CHOOSER(d), text);
    g_object_unref(text);
    GtkFileFilter *all = gtk_file_filter_new();
    gtk_file_filter_set_name(all, _("All files"));
    gtk_file_filter_add_pattern(all, "*");
    gtk_file_chooser_add_filter(GTK_FILE_CHOOSER(d), all);
    g_object_unref(all);
    /* the folder of the last corpus, else the working directory; GTK's open dialog starts in
       Recent otherwise, where a corpus text file seldom is */
    g_autofree char *cwd = g_get_current_dir();
    g_autoptr(GFile) start = g_file_new_for_path(last_corpus_folder ? last_corpus_folder : cwd);
    gtk_file_chooser_set_current_folder(GTK_FILE_CHOOSER(d), start, NULL);
    choose *c = g_new0(choose, 1);
    c->from = g_object_ref(from);
    c->chosen = chosen;
    g_signal_connect(d, "response", G_CALLBACK(on_chosen), c);
    gtk_native_dialog_show(GTK_NATIVE_DIALOG(d));
}
