/* AtnSession's work off the main thread: a run of the model (encode, forward, the result
 * and its thumbnails), an open of a model, and the worker threads' scheduling priority
 * (nice, so that typing and drawing come first).  See docs/ARCHITECTURE.md, "Threads",
 * and atn-session-private.h for how the session is split. */
#include "atn-session-private.h"
#include "atn-memory-limit.h"

#include <errno.h>
#include <glib/gi18n.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "atn-encdec.h"
#include "atn-error-text.h"

/* ---- running the model ------------------------------------------------------------ */

void _atn_session_run_job_free(run_job *job) {
    g_clear_object(&job->model);
    g_free(job->text);
    g_free(job->text_pair);
    g_free(job->target);
    if (job->ids)
        g_array_unref(job->ids);
    atn_whatif_unref(job->whatif);
    g_free(job);
}

static bool cancel_cb(double fraction, atn_stage stage, void *user_data) {
    run_job *job = user_data;
    g_atomic_int_set(&job->permille, (gint)(CLAMP(fraction, 0.0, 1.0) * 1000 + 0.5));
    return !job->cancellable || !g_cancellable_is_cancelled(job->cancellable);
}

#define WORKER_NICE 10

static GPrivate worker_niced;
static gint last_run_nice = G_MININT;   /* the nice value the last run's worker thread had */

/* Linux scheduling priority is per thread: nice WORKER_NICE for this one (never lower than
 * it already is), once per pool thread.  Threads it starts (the engine's CPU team, the
 * statistics threads) inherit it. */
void atn_session_lower_thread_priority(void) {
    if (g_private_get(&worker_niced))
        return;
    g_private_set(&worker_niced, GINT_TO_POINTER(1));
#ifdef SYS_gettid
    id_t tid = (id_t)syscall(SYS_gettid);
    errno = 0;
    int now = getpriority(PRIO_PROCESS, tid);
    if (errno == 0 && now < WORKER_NICE)
        (void)setpriority(PRIO_PROCESS, tid, WORKER_NICE);
#endif
}

int atn_session_get_worker_nice(void) { return WORKER_NICE; }

int atn_session_get_last_run_nice(void) { return g_atomic_int_get(&last_run_nice); }

/* The nice values of the named workers (atn_session_lower_worker_priority): a handful of
 * static names, so a small table under a lock. */
#define N_NAMED_WORKERS 8
static struct {
    const char *name;
    int nice;
} named_workers[N_NAMED_WORKERS];
G_LOCK_DEFINE_STATIC(named_workers);

void atn_session_lower_worker_priority(const char *worker) {
    atn_session_lower_thread_priority();
    int now = G_MININT;
#ifdef SYS_gettid
    errno = 0;
    int p = getpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid));
    if (errno == 0)
        now = p;
#endif
    G_LOCK(named_workers);
    for (int i = 0; i < N_NAMED_WORKERS; i++)
        if (!named_workers[i].name || strcmp(named_workers[i].name, worker) == 0) {
            named_workers[i].name = worker;
            named_workers[i].nice = now;
            break;
        }
    G_UNLOCK(named_workers);
}

int atn_session_get_worker_nice_of(const char *worker) {
    int nice = G_MININT;
    G_LOCK(named_workers);
    for (int i = 0; i < N_NAMED_WORKERS && named_workers[i].name; i++)
        if (strcmp(named_workers[i].name, worker) == 0)
            nice = named_workers[i].nice;
    G_UNLOCK(named_workers);
    return nice;
}

/* The work itself: encode, run.  Any thread (the main thread for toy models). */
AtnResult *_atn_session_do_run(run_job *job, GCancellable *cancellable, GError **error) {
    atn_model *m = atn_model_handle_get_model(job->model);
    atn_error err = {0};
    atn_encoding *enc = NULL;
    gint64 t0 = g_get_monotonic_time();
    atn_status st;
    job->cancellable = cancellable;   /* cancel_cb reads it from the tokenizing on */
    if (atn_model_kind_of(m) == ATN_MODEL_TOY)
        st = atn_model_encode_toy(m, NULL, &enc, &err);
    else if (job->ids)
        st = atn_model_encode_ids(m, (const int32_t *)job->ids->data, NULL, NULL, (int32_t)job->ids->len, &enc, &err);
    else
        st = atn_model_encode_cancellable(m, job->text ? job->text : "",
                                          job->text_pair && *job->text_pair ? job->text_pair : NULL,
                                          cancel_cb, job, &enc, &err);   /* Stop ends a long tokenizing */
    if (st == ATN_E_CANCELLED) {
        g_set_error_literal(error, G_IO_ERROR, G_IO_ERROR_CANCELLED, "cancelled");
        return NULL;
    }
    if (st != ATN_OK) {
        g_autofree char *why = atn_error_text(&err);
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, _("Could not read the text: %s"), why);
        return NULL;
    }
    atn_run *run = atn_model_handle_take_run(job->model);
    if (!run) {
        atn_encoding_free(enc);
        g_set_error_literal(error, G_IO_ERROR, G_IO_ERROR_NO_SPACE, _("Out of memory"));
        return NULL;
    }
    atn_run_options opts;
    atn_ui_run_options_init(&opts);
    /* GPU: AUTO, so that when the GPU fails (out of memory, a driver error ...) the engine
       runs it on the CPU, which gives the same capture, and says why
       (atn_run_fallback_reason): the text and the view stay as they were */
    opts.device = job->device == ATN_DEVICE_CUDA ? ATN_DEVICE_AUTO : job->device;
    opts.precision = job->precision;
    opts.progress = cancel_cb;
    opts.user_data = job;
    /* the what-if lab: the same interventions as the command line's options */
    atn_interventions iv;
    if (job->whatif) {
        const atn_config *c = atn_model_config(m);
        atn_whatif_for_tokens(job->whatif, c->n_layers, c->n_heads, enc->n, &iv);
        opts.interventions = &iv;
    }
    int32_t *target = NULL;   /* an encoder-decoder's decoder input, as the command line's --target */
    if (atn_model_is_encoder_decoder(m)) {
        target = atn_encdec_target_ids(m, job->target, &opts.n_target, &err);
        if (!target) {
            atn_model_handle_give_run(job->model, run);
            atn_encoding_free(enc);
            g_autofree char *why = atn_error_text(&err);
            g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, _("Could not read the target: %s"), why);
            return NULL;
        }
        opts.target_ids = target;
    }
    st = atn_run_forward(run, enc, &opts, &err);
    free(target);
    if (st != ATN_OK) {
        atn_model_handle_give_run(job->model, run);   /* a stopped run's memory serves the next one */
        atn_encoding_free(enc);
        if (st == ATN_E_CANCELLED)
            g_set_error_literal(error, G_IO_ERROR, G_IO_ERROR_CANCELLED, "cancelled");
        else {
            g_autofree char *why = atn_error_text(&err);
            g_set_error(error, G_IO_ERROR, G_IO_ERROR_FAILED, _("The model could not run: %s"), why);
        }
        return NULL;
    }
    double ms = (g_get_monotonic_time() - t0) / 1000.0;
    AtnResult *r = atn_result_new_full(job->model, run, enc, ms, job->stats_now);
    if (job->whatif)
        atn_whatif_attach(r, job->whatif);
    atn_encdec_attach(r);   /* an encoder-decoder's target tokens, before any view sees r */
    gint64 t1 = g_get_monotonic_time();
    if (job->thumbs)   /* the Model view's pixels, here rather than on the main thread when it is shown */
        atn_thumb_pixels_unref(atn_result_color_thumbs(r, job->thumb_cmap, job->thumb_shared, cancellable));
    const char *gpu_failure = atn_run_fallback_reason(run);
    if (gpu_failure)
        atn_result_set_gpu_failure(r, gpu_failure);
    atn_result_set_worker_done(r, (g_get_monotonic_time() - t1) / 1000.0);
    return r;
}

void _atn_session_run_thread(GTask *task, gpointer source, gpointer data, GCancellable *cancellable) {
    atn_session_lower_thread_priority();   /* the window's main thread comes first */
#ifdef SYS_gettid
    errno = 0;
    int nice_now = getpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid));
    g_atomic_int_set(&last_run_nice, errno ? G_MININT : nice_now);
#endif
    GError *error = NULL;
    AtnResult *r = _atn_session_do_run(data, cancellable, &error);
    if (r)
        g_task_return_pointer(task, r, g_object_unref);
    else
        g_task_return_error(task, error);
}


/* ---- opening models ------------------------------------------------------------------ */

void _atn_session_open_job_free(open_job *job) {
    g_strfreev(job->sources);
    g_free(job->first_error);
    g_clear_object(&job->cancellable);
    g_free(job);
}

static bool open_progress(double fraction, atn_stage stage, void *user_data) {
    open_job *job = user_data;
    g_atomic_int_set(&job->permille, (gint)(CLAMP(fraction, 0.0, 1.0) * 1000 + 0.5));
    g_atomic_int_set(&job->stage, (gint)stage);
    return !g_cancellable_is_cancelled(job->cancellable);
}

/* The engine's stages, in the window's language ("" before the first report). */
const char *_atn_session_stage_title(gint stage) {
    static const char *const titles[ATN_STAGE_COUNT] = {
        [ATN_STAGE_READ_CONFIG] = N_("reading config.json"),
        [ATN_STAGE_MAP_WEIGHTS] = N_("mapping the weights"),
        [ATN_STAGE_CONVERT_WEIGHTS] = N_("converting the weights to 32-bit floats"),
        [ATN_STAGE_READ_VOCAB] = N_("reading vocab.txt"),
        [ATN_STAGE_LAYER] = N_("running the layers"),
        [ATN_STAGE_CORPUS] = N_("reading the corpus"),
        [ATN_STAGE_SIMILARITY] = N_("comparing the heads"),
        [ATN_STAGE_DONE] = N_("done"),
        [ATN_STAGE_STATISTICS] = N_("computing the head statistics"),
        [ATN_STAGE_TOKENIZE] = N_("tokenizing the text"),
        [ATN_STAGE_FLOW] = N_("computing the attention flow"),
    };
    if (stage < 0 || stage >= ATN_STAGE_COUNT)
        return "";
    return _(titles[stage]);
}

void _atn_session_open_thread(GTask *task, gpointer source, gpointer data, GCancellable *cancellable) {
    atn_session_lower_thread_priority();
    open_job *job = data;
    for (int i = 0; job->sources[i]; i++) {
        atn_error err = {0};
        atn_model *m = atn_model_open(job->sources[i], open_progress, job, &err);
        if (m) {
            job->opened = i;
            g_task_return_pointer(task, atn_model_handle_new(m, job->sources[i]), g_object_unref);
            return;
        }
        if (err.status == ATN_E_CANCELLED || g_cancellable_is_cancelled(cancellable)) {
            g_task_return_new_error(task, G_IO_ERROR, G_IO_ERROR_CANCELLED, "cancelled");
            return;
        }
        if (i == 0)
            job->first_error = atn_error_text(&err);   /* in the window's language */
    }
    g_task_return_new_error(task, G_IO_ERROR, G_IO_ERROR_FAILED, "%s", job->first_error);
}

