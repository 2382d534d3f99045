/* "Get a Model…" (atn-get-model-dialog.h): the Hub client (engine/hub/hub.h) on worker threads,
 * its progress polled on the main thread every 100 ms. */
#include "atn-get-model-dialog.h"
#include "atn-get-model-dialog-test.h"

#include <glib/gi18n.h>

#include "atn-session.h"
#include "atn-worker.h"
#include "hub.h"

struct _AtnGetModelDialog {
    GtkWindow parent_instance;
    AtnWindow *window;          /* weak: the window that opens the result */
    GtkEntry *entry;
    GtkButton *look_up, *download, *cancel;
    GtkLabel *files, *status;
    GtkProgressBar *bar;
    AtnGetModelState state;
    char *message;
    atn_hub_plan *plan;         /* main thread's, lent to the download task while it runs */
    int n_files;
    double fraction;
    guint poll;
    gboolean close_when_done;
    GCancellable *work;         /* the lookup or the download in flight (atn_worker's slot), or NULL */
    /* shared with the download thread */
    GMutex lock;
    atn_hub_progress last;
    char last_file[512];
    gboolean have_progress;
    gint cancel_flag;
    GList *suggestion_buttons;  /* the suggestions' buttons (borrowed widgets), in order */
};

G_DEFINE_FINAL_TYPE(AtnGetModelDialog, atn_get_model_dialog, GTK_TYPE_WINDOW)

/* The models courses use, each a button that looks it up: the id on the Hub, what it is, its
 * parameters and about what its weights download (the Look Up then lists the exact files and
 * sizes the Hub reports).  Every one is a family the engine runs. */
static const struct suggestion {
    const char *id;
    const char *what;    /* translated */
    const char *size;    /* parameters · download, as the model cards and file lists give them */
} suggestions[] = {
    {"google-bert/bert-base-uncased", N_("English BERT, the one most courses use"), "110M · 440 MB"},
    {"google-bert/bert-base-chinese", N_("Chinese BERT, one token per character"), "102M · 412 MB"},
    {"hfl/chinese-roberta-wwm-ext", N_("Chinese RoBERTa, whole-word masking"), "102M · 412 MB"},
    {"distilbert/distilbert-base-uncased", N_("English DistilBERT: 6 layers, quicker"), "66M · 268 MB"},
    {"openai-community/gpt2", N_("GPT-2, causal: next-word guesses"), "124M · 548 MB"},
    {"Qwen/Qwen2.5-0.5B", N_("Qwen2.5, a small modern decoder (English and Chinese)"), "494M · 988 MB"},
    {"answerdotai/ModernBERT-base", N_("ModernBERT: rotary positions, local and global layers"), "149M · 599 MB"},
};

static void on_suggestion(GtkButton *b, AtnGetModelDialog *self) {
    atn_get_model_dialog_set_id(self, g_object_get_data(G_OBJECT(b), "id"));
    atn_get_model_dialog_look_up(self);
}

/* The suggestions as a list of flat buttons: the id in bold, what it is, its size. */
static GtkWidget *build_suggestions(AtnGetModelDialog *self) {
    GtkWidget *box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 2);
    /* Translators: over the list of models courses use, in Get a Model */
    GtkWidget *head = gtk_label_new(_("Models courses use (parameters · download):"));
    gtk_label_set_xalign(GTK_LABEL(head), 0);
    gtk_widget_add_css_class(head, "dim-label");
    gtk_box_append(GTK_BOX(box), head);
    for (size_t i = 0; i < G_N_ELEMENTS(suggestions); i++) {
        GtkWidget *b = gtk_button_new();
        gtk_button_set_has_frame(GTK_BUTTON(b), FALSE);
        g_autofree char *markup = g_markup_printf_escaped("<b>%s</b>  %s  <span alpha=\"70%%\">%s</span>",
                                                          suggestions[i].id, _(suggestions[i].what), suggestions[i].size);
        GtkWidget *l = gtk_label_new(NULL);
        gtk_label_set_markup(GTK_LABEL(l), markup);
        gtk_label_set_xalign(GTK_LABEL(l), 0);
        gtk_label_set_wrap(GTK_LABEL(l), TRUE);
        gtk_button_set_child(GTK_BUTTON(b), l);
        g_object_set_data(G_OBJECT(b), "id", (gpointer)suggestions[i].id);
        gtk_widget_set_tooltip_text(b, _("Look it up on the Hub"));
        g_signal_connect(b, "clicked", G_CALLBACK(on_suggestion), self);
        gtk_box_append(GTK_BOX(box), b);
        self->suggestion_buttons = g_list_append(self->suggestion_buttons, b);
    }
    return box;
}

GList *atn_get_model_dialog_get_suggestions(AtnGetModelDialog *self) {
    g_return_val_if_fail(ATN_IS_GET_MODEL_DIALOG(self), NULL);
    return self->suggestion_buttons;
}

static char *human(gint64 b) { return b < 0 ? g_strdup("?") : g_format_size((guint64)b); }

static void set_state(AtnGetModelDialog *self, AtnGetModelState st, char *message /* taken */) {
    self->state = st;
    g_free(self->message);
    self->message = message ? message : g_strdup("");
    gtk_label_set_text(self->status, self->message);
    gboolean busy = st == ATN_GET_MODEL_LOOKING_UP || st == ATN_GET_MODEL_DOWNLOADING;
    gtk_editable_set_editable(GTK_EDITABLE(self->entry), !busy);   /* stays focusable: no lost focus-out */
    gtk_widget_set_sensitive(GTK_WIDGET(self->look_up), !busy);
    gtk_widget_set_sensitive(GTK_WIDGET(self->download), st == ATN_GET_MODEL_READY || st == ATN_GET_MODEL_CANCELLED);
    gtk_button_set_label(self->cancel, busy ? _("_Cancel") : _("_Close"));
}

/* ---- looking up ------------------------------------------------------------------------ */

static bool lookup_keep_going(void *c) {
    return !g_cancellable_is_cancelled(c);
}

static gpointer lookup_work(gpointer id, GCancellable *c, GError **error) {
    atn_hub_plan *plan = NULL;
    atn_error err = {0};
    if (atn_hub_plan_fetch(id, c ? lookup_keep_going : NULL, c, &plan, &err) != ATN_OK)
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_FAILED, "%s", err.message);
    return plan;
}

static void show_plan(AtnGetModelDialog *self) {
    GString *s = g_string_new(NULL);
    for (int32_t i = 0; i < self->plan->n_files; i++) {
        const atn_hub_file *f = &self->plan->files[i];
        g_autofree char *size = human(f->size);
        g_string_append_printf(s, "%s%s  —  %s%s", i ? "\n" : "", f->name, size, f->cached ? _(" (in the cache)") : "");
    }
    gtk_label_set_text(self->files, s->str);
    g_string_free(s, TRUE);
    self->n_files = self->plan->n_files;
}

/* Takes plan. */
static void lookup_done(gpointer owner, gpointer answer, const GError *error, gpointer job) {
    AtnGetModelDialog *self = ATN_GET_MODEL_DIALOG(owner);
    atn_hub_plan *plan = answer;
    if (self->close_when_done) {   /* closed while asking */
        atn_hub_plan_free(plan);
        gtk_window_destroy(GTK_WINDOW(self));
        return;
    }
    if (!plan) {
        set_state(self, ATN_GET_MODEL_FAILED, g_strdup(error->message));
        return;
    }
    atn_hub_plan_free(self->plan);
    self->plan = plan;
    show_plan(self);
    g_autofree char *total = human(plan->total_bytes), *fetch = human(plan->fetch_bytes);
    set_state(self, ATN_GET_MODEL_READY,
              g_strdup_printf(_("%s at commit %.12s: %d files, %s (%s to download), %s weights"), plan->id,
                              plan->commit, plan->n_files, total, fetch, plan->weights));
}

void atn_get_model_dialog_look_up(AtnGetModelDialog *self) {
    g_return_if_fail(ATN_IS_GET_MODEL_DIALOG(self));
    if (self->state == ATN_GET_MODEL_LOOKING_UP || self->state == ATN_GET_MODEL_DOWNLOADING)
        return;
    const char *id = gtk_editable_get_text(GTK_EDITABLE(self->entry));
    if (!id || !*id) {
        set_state(self, ATN_GET_MODEL_FAILED, g_strdup(_("Type a model id, e.g. google-bert/bert-base-uncased")));
        return;
    }
    atn_hub_plan_free(self->plan);
    self->plan = NULL;
    self->n_files = 0;
    gtk_label_set_text(self->files, "");
    gtk_progress_bar_set_fraction(self->bar, 0);
    self->fraction = 0;
    set_state(self, ATN_GET_MODEL_LOOKING_UP, g_strdup_printf(_("Asking the Hub about %s…"), id));
    atn_worker_start_fallible(self, &self->work, ATN_WORKER_TAKE, NULL, lookup_work, g_strdup(id), g_free,
                              (GDestroyNotify)atn_hub_plan_free, lookup_done);
}

/* ---- downloading ----------------------------------------------------------------------- */

static bool on_progress(const atn_hub_progress *p, void *data) {
    AtnGetModelDialog *self = data;
    g_mutex_lock(&self->lock);
    self->last = *p;
    g_strlcpy(self->last_file, p->file ? p->file : "", sizeof self->last_file);
    self->last.file = NULL;
    self->have_progress = TRUE;
    g_mutex_unlock(&self->lock);
    return !g_atomic_int_get(&self->cancel_flag);
}

/* job: the dialog, whose plan it reads (lent: nothing changes it while the download runs)
 * and whose progress it writes under the lock.  Cancel sets cancel_flag, read by on_progress.
 * The answer is only a "done" mark. */
static gpointer download_work(gpointer job, GCancellable *c, GError **error) {
    AtnGetModelDialog *self = job;
    atn_error err = {0};
    atn_status st = atn_hub_download(self->plan, on_progress, self, &err);
    if (st != ATN_OK)
        g_set_error(error, G_IO_ERROR, st == ATN_E_CANCELLED ? G_IO_ERROR_CANCELLED : G_IO_ERROR_FAILED, "%s",
                    err.message);
    return st == ATN_OK ? GINT_TO_POINTER(1) : NULL;
}

static gboolean poll_progress(gpointer data) {
    AtnGetModelDialog *self = data;
    g_mutex_lock(&self->lock);
    atn_hub_progress p = self->last;
    char file[512];
    g_strlcpy(file, self->last_file, sizeof file);
    gboolean have = self->have_progress;
    g_mutex_unlock(&self->lock);
    if (!have)
        return G_SOURCE_CONTINUE;
    self->fraction = p.total > 0 ? CLAMP((double)p.done / (double)p.total, 0, 1) : 0;
    gtk_progress_bar_set_fraction(self->bar, self->fraction);
    g_autofree char *done = human(p.done), *total = human(p.total), *rate = human((gint64)p.rate);
    g_autofree char *left = p.eta >= 0 ? g_strdup_printf(_(", %d:%02d left"), (int)(p.eta / 60), (int)p.eta % 60)
                                       : g_strdup("");
    g_autofree char *text = g_strdup_printf(_("%s (%d of %d): %s of %s, %s/s%s"), file, p.file_index + 1, p.n_files,
                                            done, total, rate, left);
    gtk_progress_bar_set_text(self->bar, text);
    gtk_progress_bar_set_show_text(self->bar, TRUE);
    return G_SOURCE_CONTINUE;
}

static void download_done(gpointer owner, gpointer answer, const GError *error, gpointer job) {
    AtnGetModelDialog *self = ATN_GET_MODEL_DIALOG(owner);
    gboolean ok = answer != NULL;
    g_clear_handle_id(&self->poll, g_source_remove);
    poll_progress(self);
    if (!ok) {
        gboolean cancelled = g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
        set_state(self, cancelled ? ATN_GET_MODEL_CANCELLED : ATN_GET_MODEL_FAILED,
                  cancelled ? g_strdup(_("Cancelled. What was downloaded is kept: Download continues from there."))
                            : g_strdup(error->message));
    } else {
        self->fraction = 1;
        gtk_progress_bar_set_fraction(self->bar, 1);
        const atn_hub_plan *p = self->plan;
        g_autofree char *spec = !strcmp(p->revision, "main") ? g_strdup(p->id)
                                                             : g_strdup_printf("%s@%s", p->id, p->revision);
        set_state(self, ATN_GET_MODEL_DONE, g_strdup_printf(_("Downloaded %s into %s"), spec, p->snapshot));
        if (self->window) {
            atn_window_refresh_models(self->window);
            atn_session_open_model(atn_window_get_session(self->window), spec);
        }
        self->close_when_done = TRUE;
    }
    if (self->close_when_done)
        gtk_window_destroy(GTK_WINDOW(self));
}

void atn_get_model_dialog_download(AtnGetModelDialog *self) {
    g_return_if_fail(ATN_IS_GET_MODEL_DIALOG(self));
    if (!self->plan || (self->state != ATN_GET_MODEL_READY && self->state != ATN_GET_MODEL_CANCELLED))
        return;
    g_atomic_int_set(&self->cancel_flag, 0);
    self->have_progress = FALSE;
    set_state(self, ATN_GET_MODEL_DOWNLOADING, g_strdup_printf(_("Downloading %s…"), self->plan->id));
    self->poll = g_timeout_add(100, poll_progress, self);
    atn_worker_start_fallible(self, &self->work, ATN_WORKER_NORMAL, NULL, download_work, self, NULL, NULL,
                              download_done);
}

void atn_get_model_dialog_cancel(AtnGetModelDialog *self) {
    g_return_if_fail(ATN_IS_GET_MODEL_DIALOG(self));
    if (self->state == ATN_GET_MODEL_DOWNLOADING) {
        g_atomic_int_set(&self->cancel_flag, 1);   /* the worker stops at its next chunk */
        return;
    }
    if (self->state != ATN_GET_MODEL_LOOKING_UP)
        gtk_window_destroy(GTK_WINDOW(self));
}

void atn_get_model_dialog_set_id(AtnGetModelDialog *self, const char *id) {
    g_return_if_fail(ATN_IS_GET_MODEL_DIALOG(self));
    gtk_editable_set_text(GTK_EDITABLE(self->entry), id ? id : "");
}

AtnGetModelState atn_get_model_dialog_get_state(AtnGetModelDialog *self) {
    g_return_val_if_fail(ATN_IS_GET_MODEL_DIALOG(self), ATN_GET_MODEL_IDLE);
    return self->state;
}

const char *atn_get_model_dialog_get_message(AtnGetModelDialog *self) {
    g_return_val_if_fail(ATN_IS_GET_MODEL_DIALOG(self), NULL);
    return self->message;
}

int atn_get_model_dialog_get_n_files(AtnGetModelDialog *self) {
    g_return_val_if_fail(ATN_IS_GET_MODEL_DIALOG(self), 0);
    return self->n_files;
}

double atn_get_model_dialog_get_fraction(AtnGetModelDialog *self) {
    g_return_val_if_fail(ATN_IS_GET_MODEL_DIALOG(self), 0);
    return self->fraction;
}

/* ---- the widget ------------------------------------------------------------------------ */

static void on_entry_changed(GtkEditable *e, AtnGetModelDialog *self) {
    if (self->state != ATN_GET_MODEL_LOOKING_UP && self->state != ATN_GET_MODEL_DOWNLOADING &&
        self->state != ATN_GET_MODEL_IDLE)
        set_state(self, ATN_GET_MODEL_IDLE, NULL);
}

static gboolean on_close_request(GtkWindow *w, AtnGetModelDialog *self) {
    if (self->state == ATN_GET_MODEL_DOWNLOADING || self->state == ATN_GET_MODEL_LOOKING_UP) {
        /* stop the worker first; its callback closes us */
        self->close_when_done = TRUE;
        g_atomic_int_set(&self->cancel_flag, 1);
        gtk_widget_set_visible(GTK_WIDGET(w), FALSE);
        return TRUE;
    }
    return FALSE;
}

static void atn_get_model_dialog_finalize(GObject *o) {
    AtnGetModelDialog *self = ATN_GET_MODEL_DIALOG(o);
    g_clear_handle_id(&self->poll, g_source_remove);
    g_clear_object(&self->work);   /* NULL: a task keeps the dialog alive until its done */
    atn_hub_plan_free(self->plan);
    g_free(self->message);
    g_list_free(self->suggestion_buttons);
    g_mutex_clear(&self->lock);
    g_clear_weak_pointer(&self->window);
    G_OBJECT_CLASS(atn_get_model_dialog_parent_class)->finalize(o);
}

static void atn_get_model_dialog_class_init(AtnGetModelDialogClass *klass) {
    G_OBJECT_CLASS(klass)->finalize = atn_get_model_dialog_finalize;
}

static void atn_get_model_dialog_init(AtnGetModelDialog *self) {
    g_mutex_init(&self->lock);
    self->message = g_strdup("");
    gtk_window_set_title(GTK_WINDOW(self), _("Get a Model"));
    gtk_window_set_default_size(GTK_WINDOW(self), 680, 560);
    GtkWidget *box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 8);
    gtk_widget_set_margin_start(box, 12);
    gtk_widget_set_margin_end(box, 12);
    gtk_widget_set_margin_top(box, 12);
    gtk_widget_set_margin_bottom(box, 12);
    GtkWidget *intro = gtk_label_new(_("A model from the Hugging Face Hub (or the mirror in HF_ENDPOINT), saved in "
                                       "the cache that Python's transformers uses too."));
    gtk_label_set_wrap(GTK_LABEL(intro), TRUE);
    gtk_label_set_xalign(GTK_LABEL(intro), 0);
    gtk_box_append(GTK_BOX(box), intro);
    GtkWidget *row = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 6);
    self->entry = GTK_ENTRY(gtk_entry_new());
    gtk_entry_set_placeholder_text(self->entry, _("org/name or org/name@revision"));
    gtk_widget_set_hexpand(GTK_WIDGET(self->entry), TRUE);
    self->look_up = GTK_BUTTON(gtk_button_new_with_mnemonic(_("_Look Up")));
    gtk_box_append(GTK_BOX(row), GTK_WIDGET(self->entry));
    gtk_box_append(GTK_BOX(row), GTK_WIDGET(self->look_up));
    gtk_box_append(GTK_BOX(box), row);
    gtk_box_append(GTK_BOX(box), build_suggestions(self));
    GtkWidget *scroll = gtk_scrolled_window_new();
    gtk_widget_set_vexpand(scroll, TRUE);
    self->files = GTK_LABEL(gtk_label_new(""));
    gtk_label_set_xalign(self->files, 0);
    gtk_label_set_yalign(self->files, 0);
    gtk_label_set_selectable(self->files, TRUE);
    gtk_scrolled_window_set_child(GTK_SCROLLED_WINDOW(scroll), GTK_WIDGET(self->files));
    gtk_box_append(GTK_BOX(box), scroll);
    self->bar = GTK_PROGRESS_BAR(gtk_progress_bar_new());
    gtk_box_append(GTK_BOX(box), GTK_WIDGET(self->bar));
    self->status = GTK_LABEL(gtk_label_new(""));
    gtk_label_set_wrap(self->status, TRUE);
    gtk_label_set_xalign(self->status, 0);
    gtk_label_set_selectable(self->status, TRUE);
    gtk_box_append(GTK_BOX(box), GTK_WIDGET(self->status));
    GtkWidget *buttons = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 6);
    gtk_widget_set_halign(buttons, GTK_ALIGN_END);
    self->cancel = GTK_BUTTON(gtk_button_new_with_mnemonic(_("_Close")));
    self->download = GTK_BUTTON(gtk_button_new_with_mnemonic(_("_Download and Open")));
    gtk_widget_add_css_class(GTK_WIDGET(self->download), "suggested-action");
    gtk_box_append(GTK_BOX(buttons), GTK_WIDGET(self->cancel));
    gtk_box_append(GTK_BOX(buttons), GTK_WIDGET(self->download));
    gtk_box_append(GTK_BOX(box), buttons);
    gtk_window_set_child(GTK_WINDOW(self), box);
    g_signal_connect_swapped(self->look_up, "clicked", G_CALLBACK(atn_get_model_dialog_look_up), self);
    g_signal_connect_swapped(self->entry, "activate", G_CALLBACK(atn_get_model_dialog_look_up), self);
    g_signal_connect_swapped(self->download, "clicked", G_CALLBACK(atn_get_model_dialog_download), self);
    g_signal_connect_swapped(self->cancel, "clicked", G_CALLBACK(atn_get_model_dialog_cancel), self);
    g_signal_connect(self->entry, "changed", G_CALLBACK(on_entry_changed), self);
    g_signal_connect(self, "close-request", G_CALLBACK(on_close_request), self);
    set_state(self, ATN_GET_MODEL_IDLE, NULL);
}

AtnGetModelDialog *atn_get_model_dialog_new(AtnWindow *parent) {
    AtnGetModelDialog *self = g_object_new(ATN_TYPE_GET_MODEL_DIALOG, NULL);
    if (parent) {
        gtk_window_set_transient_for(GTK_WINDOW(self), GTK_WINDOW(parent));
        g_set_weak_pointer(&self->window, parent);
    }
    return self;
}
