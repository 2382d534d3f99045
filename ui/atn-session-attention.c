/* AtnSession: opening an attention file (engine/include/attention-file.h), attention computed
 * by another program, shown without weights.  The worker opens the file; a file whose
 * attention is under the lazy size (ATN_SESSION_ATTENTION_LAZY_BYTES) has every layer read
 * and checked through its mapping (atn_attn_file_capture: a bad layer is refused here, before
 * the window leaves the model it shows) and its one result made with its statistics and
 * thumbnails; a larger one is opened lazily (atn_attn_file_capture_lazy: the header only, a
 * layer read and checked when a head of it is first shown, a bad one then said as the window's
 * error; statistics and thumbnails made afterwards in the statistics' worker).  The main thread
 * then shows it as the session's model (a handle without weights: atn_model_handle_has_weights).
 * See docs/ARCHITECTURE.md, "The window's session". */
#include "atn-encdec.h"
#include "atn-session-private.h"

#include <glib/gi18n.h>

#include "atn-error-text.h"
#include "atn-session-attention-test.h"
#include "attention-file.h"

static guint64 lazy_bytes = ATN_SESSION_ATTENTION_LAZY_BYTES;   /* atomic */

void atn_session_set_attention_lazy_bytes(guint64 bytes) { __atomic_store_n(&lazy_bytes, bytes, __ATOMIC_RELAXED); }

typedef struct attn_answer {
    AtnModelHandle *file;
    AtnResult *result;
} attn_answer;

static void attn_answer_free(attn_answer *a) {
    g_clear_object(&a->file);
    g_clear_object(&a->result);
    g_free(a);
}

static bool attn_progress(double fraction, atn_stage stage, void *user_data) {
    open_job *job = user_data;
    g_atomic_int_set(&job->permille, (gint)(CLAMP(fraction, 0.0, 1.0) * 1000 + 0.5));
    g_atomic_int_set(&job->stage, (gint)stage);
    return !g_cancellable_is_cancelled(job->cancellable);
}

static void attn_open_thread(GTask *task, gpointer source, gpointer data, GCancellable *cancellable) {
    atn_session_lower_thread_priority();
    open_job *job = data;
    const char *path = job->sources[0];
    atn_error err = {0};
    atn_attn_file *f = NULL;
    const atn_capture *cap = NULL;
    gint64 t0 = g_get_monotonic_time();
    gboolean lazy = FALSE;
    atn_status st = atn_attn_file_open(path, &f, &err);
    if (st == ATN_OK) {
        atn_attn_file_info info = atn_attn_file_get_info(f);
        double bytes = (double)info.n_layers * info.n_heads * info.n * info.n * sizeof(float);
        lazy = bytes >= (double)__atomic_load_n(&lazy_bytes, __ATOMIC_RELAXED);
        st = lazy ? atn_attn_file_capture_lazy(f, &cap, &err) : atn_attn_file_capture(f, &cap, attn_progress, job, &err);
    }
    if (st != ATN_OK) {
        atn_attn_file_free(f);
        if (err.status == ATN_E_CANCELLED || g_cancellable_is_cancelled(cancellable))
            g_task_return_new_error(task, G_IO_ERROR, G_IO_ERROR_CANCELLED, "cancelled");
        else {
            g_autofree char *why = atn_error_text(&err);
            g_task_return_new_error(task, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "%s", why);
        }
        return;
    }
    attn_answer *a = g_new0(attn_answer, 1);
    a->file = atn_model_handle_new_attention(f, path);   /* from here the file is only read */
    /* the statistics now: the first head shown is the clearest one (lazily: after it, with the
       thumbnails) */
    a->result = atn_result_new_attention(a->file, cap, (g_get_monotonic_time() - t0) / 1000.0, !lazy);
    atn_encdec_attach(a->result);   /* an encoder-decoder file's target tokens (and stacks' statistics) */
    g_task_return_pointer(task, a, (GDestroyNotify)attn_answer_free);
}

static void attn_open_done(GObject *source, GAsyncResult *res, gpointer user_data) {
    AtnSession *self = ATN_SESSION(source);
    GTask *task = G_TASK(res);
    open_job *job = g_task_get_task_data(task);
    g_autoptr(GError) error = NULL;
    attn_answer *a = g_task_propagate_pointer(task, &error);
    if (!_atn_session_end_open(self, task)) {
        g_clear_pointer(&a, attn_answer_free);
        return;
    }
    if (!a) {
        g_autofree char *msg =
            g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED)
                ? g_strdup_printf(_("Opening “%s” was cancelled."), job->sources[0])
                : g_strdup_printf(_("Could not open the attention file “%s”: %s"), job->sources[0], error->message);
        g_signal_emit_by_name(self, g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED) ? "notice" : "error",
                              msg);
        if (!atn_session_get_model(self))
            atn_session_open_default(self, NULL);   /* a window never stays empty */
        return;
    }
    _atn_session_show_attention(self, a->file, a->result);
    atn_attn_file *f = atn_model_handle_get_attention_file(a->file);
    const char *warning = atn_attn_file_warning(f);
    if (warning) {
        g_autofree char *msg = g_strdup_printf(_("“%s”: %s"), job->sources[0], warning);
        g_signal_emit_by_name(self, "notice", msg);
    }
    attn_answer_free(a);
}

void atn_session_open_attention(AtnSession *self, const char *path) {
    g_return_if_fail(ATN_IS_SESSION(self) && path);
    char **v = g_new0(char *, 2);
    v[0] = g_strdup(path);
    _atn_session_start_open(self, v, FALSE, attn_open_done, attn_open_thread);
}
