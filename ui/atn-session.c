/* AtnSession: the open model, the text, the latest result and the selection; runs the model
 * off the main thread (see atn-session.h for the rules; the work done there is in
 * atn-session-jobs.c).
 *
 * Just over 1,000 lines (session 16: a lazy attention file's head that fails when first shown
 * is reported): what stays here is the one GObject's state, its properties and the publishing of a
 * result, which all read the private struct and the props table.  The jobs, attention files
 * and session files already live in atn-session-{jobs,attention,file}.c; the next to move is
 * the head statistics of a published result (the section below), with props exposed through
 * atn-session-private.h. */
#include "atn-session-private.h"
#include "atn-memory-limit.h"
#include "atn-session-test.h"

#include <glib/gi18n.h>
#include <string.h>

#include "analysis.h"
#include "attention-file.h"
#include "atn-whatif.h"
#include "atn-worker.h"
#include "config.h"
#include "atn-encdec.h"
#include "atn-error-text.h"

G_DEFINE_FINAL_TYPE(AtnSession, atn_session, G_TYPE_OBJECT)

enum {
    PROP_0,
    PROP_MODEL,
    PROP_RESULT,
    PROP_LAYER,
    PROP_HEAD,
    PROP_QUERY,
    PROP_HOVER_TOKEN,
    PROP_BUSY,
    PROP_DEVICE,
    PROP_GPU_AVAILABLE,
    PROP_OPENING,
    PROP_OPEN_FRACTION,
    PROP_RUN_FRACTION,
    PROP_STACK,
    N_PROPS
};
static GParamSpec *props[N_PROPS];

enum { SIGNAL_ERROR, SIGNAL_NOTICE, SIGNAL_WHATIF_CHANGED, SIGNAL_STATS_READY, N_SIGNALS };
static guint signals[N_SIGNALS];

static void start_run(AtnSession *self);
static void start_stats(AtnSession *self);
static void schedule_run(AtnSession *self);
static void stop_run_poll(AtnSession *self);

static void clamp_selection(AtnSession *self) {
    if (!self->result)
        return;
    int L, H, nq, n = atn_result_get_n_tokens(self->result);
    atn_encdec_dims(self->result, self->stack, &L, &H, &nq);   /* an encoder-decoder: the stack's */
    if (self->layer >= L)
        atn_session_set_layer(self, L - 1);
    if (self->head >= H)
        atn_session_set_head(self, H - 1);
    if (self->query >= nq)
        atn_session_set_query(self, 0);
    if (self->hover_token >= n)
        atn_session_set_hover_token(self, -1);
}

/* The head a newly opened model starts on: the one with the clearest pattern on the current
 * sentence (the largest mean attention to the previous token, the next token, itself, [CLS]
 * or [SEP]), so that a first look at a trained model shows structure instead of whatever
 * layer 0 head 0 does; a model with no head at ATN_CLEAREST_HEAD_MIN, such as an untrained
 * one, starts on layer 0 head 0 (the rule: engine/analysis/head-stats.c, atn_stats_clearest_head).
 * Toy models start on head 0: their lesson is written about it.  Never the head of the model
 * before: its index means nothing here. */
static void pick_clearest_head(AtnSession *self) {
    int32_t layer = 0, head = 0;
    /* otherwise layer 0 head 0: the index of the model before means nothing in this one */
    if (!atn_model_handle_is_toy(self->model) &&
        !atn_stats_clearest_head(atn_result_get_stats(self->result), &layer, &head))
        layer = head = 0;
    atn_session_select_head(self, layer, head);
}

/* Where a truncated text was cut: "It stops after “WORD”." with the last word the model still
 * reads (as much of it as was kept), for each sentence that lost its end; NULL when that
 * cannot be said (tokens given as ids, no word kept). */
static char *cut_words(const atn_encoding *enc, const char *text, const char *pair) {
    const char *seg_text[2] = {text, pair && *pair ? pair : NULL};
    char *said[2] = {NULL, NULL};
    for (int seg = 0; seg < 2; seg++) {
        const char *t = seg_text[seg];
        if (!t)
            continue;
        int last = -1;
        for (int i = 0; i < enc->n; i++)
            if (enc->tokens[i].segment == seg && enc->tokens[i].start >= 0 && enc->tokens[i].end > enc->tokens[i].start)
                last = i;
        if (last < 0)
            continue;
        const atn_token *lt = &enc->tokens[last];
        size_t len = strlen(t);
        const char *rest = t + MIN((size_t)lt->end, len);
        while (*rest && g_ascii_isspace(*rest))
            rest++;
        if (!*rest)
            continue;   /* this sentence kept its end */
        int32_t start = lt->start;
        for (int i = last - 1; i >= 0 && lt->word >= 0; i--)
            if (enc->tokens[i].segment == seg && enc->tokens[i].word == lt->word && enc->tokens[i].start >= 0)
                start = MIN(start, enc->tokens[i].start);
        if ((size_t)lt->end > len || start < 0)
            continue;
        g_autofree char *word = g_strndup(t + start, (gsize)(lt->end - start));
        g_strstrip(word);
        if (!*word || !g_utf8_validate(word, -1, NULL))
            continue;
        said[seg] = g_strdup_printf(seg == 0 ? _("It stops after “%s”.") : _("The second sentence stops after “%s”."),
                                    word);
    }
    char *out = said[0] && said[1] ? g_strconcat(said[0], " ", said[1], NULL)
                : g_strdup(said[0] ? said[0] : said[1]);
    g_free(said[0]);
    g_free(said[1]);
    return out;
}

/* A head the result could not read (an attention file's bad layer, checked when first shown):
 * the window's error, said after the view that asked has finished drawing. */
typedef struct head_failure {
    GWeakRef session;
    char *message;
} head_failure;

static gboolean head_failed_idle(gpointer data) {
    head_failure *hf = data;
    g_autoptr(AtnSession) self = g_weak_ref_get(&hf->session);
    if (self) {
        /* the engine's message names the file, the tensor, the layer, the head, the query and the key */
        g_autofree char *msg = g_strdup_printf(_("Could not show this head: %s"), hf->message);
        g_signal_emit(self, signals[SIGNAL_ERROR], 0, msg);
    }
    g_weak_ref_clear(&hf->session);
    g_free(hf->message);
    g_free(hf);
    return G_SOURCE_REMOVE;
}

static void on_head_failed(AtnResult *r, const char *message, AtnSession *self) {
    if (r != self->result)
        return;
    head_failure *hf = g_new0(head_failure, 1);
    g_weak_ref_init(&hf->session, self);
    hf->message = g_strdup(message);
    g_idle_add(head_failed_idle, hf);
}

static void set_result(AtnSession *self, AtnResult *r) {
    if (r && r != self->result)
        g_signal_connect_object(r, "head-failed", G_CALLBACK(on_head_failed), self, 0);
    g_set_object(&self->result, r);
    if (self->pick_clearest && self->model) {
        pick_clearest_head(self);
        self->pick_clearest = FALSE;
    }
    self->n_runs++;
    g_clear_pointer(&self->run_notice, g_free);
    const atn_capture *cap = atn_result_get_capture(r);
    if (cap->enc->truncated) {
        g_autofree char *where = cut_words(cap->enc, self->ids ? NULL : self->text, self->ids ? NULL : self->text_pair);
        g_autofree char *dropped = g_strdup_printf(
            ngettext("The text is too long for this model: %d word piece was dropped.",
                     "The text is too long for this model: %d word pieces were dropped.", cap->enc->n_dropped),
            cap->enc->n_dropped);
        self->run_notice = where ? g_strconcat(dropped, " ", where, NULL) : g_steal_pointer(&dropped);
    }
    else if (cap->fp16_overflow_total > 0)
        self->run_notice = g_strdup_printf(
            ngettext("fp16 overflow: %lld value became ±inf (beyond 65504) in this run; layer %d onwards may be "
                     "meaningless.",
                     "fp16 overflow: %lld values became ±inf (beyond 65504) in this run; layer %d onwards may be "
                     "meaningless.", (unsigned long)cap->fp16_overflow_total),
            (long long)cap->fp16_overflow_total, cap->nonfinite_layer >= 0 ? cap->nonfinite_layer : 0);
    else if (cap->nonfinite_layer >= 0)
        self->run_notice = g_strdup_printf(_("Layer %d produced NaN or infinite values; its attention may be "
                                             "meaningless."), cap->nonfinite_layer);
    const char *gpu_failure = atn_result_get_gpu_failure(r);
    if (gpu_failure) {
        /* from now on the CPU: the switch shows it, and the GPU stays off with the reason */
        g_free(self->run_notice);
        self->run_notice = g_strdup_printf(_("The GPU failed (%s); the model ran on the CPU instead, and will "
                                             "from now on."), gpu_failure);
        self->device = ATN_DEVICE_CPU;
        self->gpu_available = FALSE;
        g_free(self->gpu_reason);
        self->gpu_reason = g_strdup(gpu_failure);
        g_object_notify_by_pspec(G_OBJECT(self), props[PROP_DEVICE]);
        g_object_notify_by_pspec(G_OBJECT(self), props[PROP_GPU_AVAILABLE]);
    }
    clamp_selection(self);
    g_object_notify_by_pspec(G_OBJECT(self), props[PROP_RESULT]);
}

static void run_done(GObject *source, GAsyncResult *res, gpointer user_data) {
    AtnSession *self = ATN_SESSION(source);
    GTask *task = G_TASK(res);
    run_job *job = g_task_get_task_data(task);
    g_autoptr(GError) error = NULL;
    g_autoptr(AtnResult) r = g_task_propagate_pointer(task, &error);
    if (r)
        atn_result_mark_received(r);
    gboolean was_busy = atn_session_get_busy(self);
    g_clear_object(&self->run_cancel);
    stop_run_poll(self);
    if (self->run_pending) {
        /* a newer request came in: this result (or error) is stale; its run memory goes back
           to the handle first, so that the next run takes it instead of fresh pages */
        g_clear_object(&r);
        self->run_pending = FALSE;
        start_run(self);
        return;
    }
    if (r && g_cancellable_is_cancelled(g_task_get_cancellable(task)))
        g_clear_object(&r);   /* finished before it saw the cancel (the session is going away) */
    if (r && job->model == self->model)
        set_result(self, r);
    else if (error && !g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        g_signal_emit(self, signals[SIGNAL_ERROR], 0, error->message);
    if (was_busy != atn_session_get_busy(self))
        g_object_notify_by_pspec(G_OBJECT(self), props[PROP_BUSY]);
    start_stats(self);
}

/* ---- the head statistics of a published result ------------------------------------------ */

/* A run's worker publishes its result without the head statistics (atn_result_new_full), so
 * that the Head view is drawn ~0.3 s sooner at 512 tokens; they are computed here, in a
 * worker at the workers' nice value, and arrive as "stats-ready" (the Head view's "This head"
 * line, the Model view's pattern labels, the Statistics table).  A run that starts cancels
 * them (start_run): the newer result gets its own. */
typedef struct stats_answer {
    atn_stats *st;   /* or NULL, and then error says why */
    char *error;
} stats_answer;

static void stats_answer_free(stats_answer *a) {
    atn_stats_free(a->st);
    g_free(a->error);
    g_free(a);
}

static gpointer stats_work(gpointer job, GCancellable *cancellable) {
    GError *error = NULL;
    stats_answer *a = g_new0(stats_answer, 1);
    a->st = atn_result_compute_stats(job, cancellable, &error);
    if (!a->st)
        a->error = g_strdup(error ? error->message : "");
    g_clear_error(&error);
    return a;
}

static void stats_done(gpointer owner, gpointer answer, gpointer job) {
    AtnSession *self = owner;
    AtnResult *r = job;
    stats_answer *a = answer;
    if (!a || !atn_result_get_stats_pending(r))
        return;
    atn_result_set_stats(r, g_steal_pointer(&a->st), a->error);
    if (r != self->result)
        return;
    g_signal_emit(self, signals[SIGNAL_STATS_READY], 0);
    /* a large attention file's rows that do not sum to 1, found by the statistics' reading */
    atn_attn_file *f = atn_model_handle_get_attention_file(atn_result_get_model(r));
    const char *warning = f && !atn_attn_file_get_info(f).n_stacks ? atn_attn_file_warning(f) : NULL;
    if (warning) {   /* (a small file's was said when it opened: its statistics were not pending) */
        g_autofree char *msg = g_strdup_printf(_("“%s”: %s"), atn_model_handle_get_source(atn_result_get_model(r)),
                                               warning);
        g_signal_emit(self, signals[SIGNAL_NOTICE], 0, msg);
    }
}

static void start_stats(AtnSession *self) {
    if (!self->result || !atn_result_get_stats_pending(self->result) || self->stats_cancel || self->run_cancel)
        return;
    atn_worker_start(self, &self->stats_cancel, ATN_WORKER_NICE, stats_work, g_object_ref(self->result),
                     g_object_unref, (GDestroyNotify)stats_answer_free, stats_done);
}

gboolean atn_session_get_analysing(AtnSession *self) {
    g_return_val_if_fail(ATN_IS_SESSION(self), FALSE);
    return self->result && atn_result_get_stats_pending(self->result);
}

/* The run's progress, for the window's run bar: read ten times a second (each change is a
 * redraw of one small widget; a spinner would redraw every frame, taking the main thread and
 * the display server from the forward's two threads). */
static gboolean run_poll_cb(gpointer user_data) {
    AtnSession *self = user_data;
    if (!self->run_job)
        return G_SOURCE_CONTINUE;
    double f = g_atomic_int_get(&self->run_job->permille) / 1000.0;
    if (f != self->run_fraction || f == 0) {
        self->run_fraction = f;
        g_object_notify_by_pspec(G_OBJECT(self), props[PROP_RUN_FRACTION]);
    }
    return G_SOURCE_CONTINUE;
}

static void stop_run_poll(AtnSession *self) {
    self->run_job = NULL;
    g_clear_handle_id(&self->run_poll_id, g_source_remove);
    if (self->run_fraction != -1) {
        self->run_fraction = -1;
        g_object_notify_by_pspec(G_OBJECT(self), props[PROP_RUN_FRACTION]);
    }
}

static void start_run(AtnSession *self) {
    g_clear_handle_id(&self->debounce_id, g_source_remove);
    self->start_pending = FALSE;
    if (!self->model || !atn_model_handle_has_weights(self->model))
        return;   /* an attention file's one result came with it */
    if (self->run_cancel) {
        /* newest wins: stop the run in flight, start again when it has returned */
        g_cancellable_cancel(self->run_cancel);
        self->run_pending = TRUE;
        return;
    }
    atn_worker_cancel(&self->stats_cancel);   /* the shown result's statistics: the newer run comes first */
    run_job *job = g_new0(run_job, 1);
    job->model = g_object_ref(self->model);
    job->stats_now = self->pick_clearest || atn_model_handle_is_toy(self->model);
    job->text = g_strdup(self->text);
    job->text_pair = g_strdup(self->text_pair);
    job->target = g_strdup(self->target);
    job->ids = self->ids ? g_array_ref(self->ids) : NULL;
    job->device = self->device;
    job->precision = self->precision;
    job->whatif = atn_whatif_ref(self->whatif);
    job->thumbs = self->thumb_style_set;
    job->thumb_cmap = self->thumb_cmap;
    job->thumb_shared = self->thumb_shared;

    if (atn_model_handle_is_toy(self->model)) {
        g_autoptr(GError) error = NULL;
        g_autoptr(AtnResult) r = _atn_session_do_run(job, NULL, &error);
        _atn_session_run_job_free(job);
        if (r)
            set_result(self, r);
        else
            g_signal_emit(self, signals[SIGNAL_ERROR], 0, error->message);
        return;
    }
    gboolean was_busy = atn_session_get_busy(self);
    self->run_cancel = g_cancellable_new();
    g_autoptr(GTask) task = g_task_new(self, self->run_cancel, run_done, NULL);
    g_task_set_source_tag(task, start_run);
    g_task_set_task_data(task, job, (GDestroyNotify)_atn_session_run_job_free);
    g_task_set_return_on_cancel(task, FALSE);
    /* a run that finished although cancelled still hands its result to run_done, which drops
       it there, before a newer run starts: its run memory is then the spare that run takes
       (else the task would free it only after run_done, and the newer run faulted fresh pages) */
    g_task_set_check_cancellable(task, FALSE);
    self->run_job = job;
    if (!self->run_poll_id)
        self->run_poll_id = g_timeout_add(100, run_poll_cb, self);
    g_task_run_in_thread(task, _atn_session_run_thread);
    if (!was_busy)
        g_object_notify_by_pspec(G_OBJECT(self), props[PROP_BUSY]);
}

static gboolean debounce_cb(gpointer user_data) {
    AtnSession *self = user_data;
    self->debounce_id = 0;
    self->start_pending = FALSE;
    start_run(self);
    return G_SOURCE_REMOVE;
}

static gboolean open_poll_cb(gpointer user_data) {
    AtnSession *self = user_data;
    if (!self->open_job)
        return G_SOURCE_CONTINUE;
    double f = g_atomic_int_get(&self->open_job->permille) / 1000.0;
    const char *stage = _atn_session_stage_title(g_atomic_int_get(&self->open_job->stage));
    if (f != self->open_fraction || g_strcmp0(stage, self->open_stage) != 0) {
        self->open_fraction = f;
        self->open_stage = stage;
        g_object_notify_by_pspec(G_OBJECT(self), props[PROP_OPEN_FRACTION]);
    }
    return G_SOURCE_CONTINUE;
}

static void set_opening(AtnSession *self, const char *source) {
    gboolean was_busy = atn_session_get_busy(self);
    g_free(self->opening);
    self->opening = g_strdup(source);
    self->open_fraction = 0;
    self->open_stage = NULL;
    if (!source) {
        self->open_job = NULL;
        g_clear_handle_id(&self->open_poll_id, g_source_remove);
    } else if (!self->open_poll_id) {
        self->open_poll_id = g_timeout_add(100, open_poll_cb, self);
    }
    g_object_notify_by_pspec(G_OBJECT(self), props[PROP_OPENING]);
    if (was_busy != atn_session_get_busy(self))
        g_object_notify_by_pspec(G_OBJECT(self), props[PROP_BUSY]);
}

/* Shows model from now on: the run in flight is stale, the next result picks the clearest
 * head, and a toy model left with unsaved edits is kept for when it is opened again. */
static void use_model(AtnSession *self, AtnModelHandle *model) {
    if (self->run_cancel) {
        g_cancellable_cancel(self->run_cancel);
        self->run_pending = TRUE;
    }
    if (self->model && model != self->model) {
        self->pick_clearest = TRUE;   /* the first model keeps a head chosen at start-up */
        if (atn_model_handle_get_modified(self->model))
            g_hash_table_replace(self->edited_toys, g_strdup(atn_model_handle_get_source(self->model)),
                                 g_object_ref(self->model));
    }
    g_set_object(&self->model, model);
    g_object_notify_by_pspec(G_OBJECT(self), props[PROP_MODEL]);
    if (!self->run_pending)
        start_run(self);
}

static void open_done(GObject *source, GAsyncResult *res, gpointer user_data) {
    AtnSession *self = ATN_SESSION(source);
    GTask *task = G_TASK(res);
    open_job *job = g_task_get_task_data(task);
    g_autoptr(GError) error = NULL;
    g_autoptr(AtnModelHandle) m = g_task_propagate_pointer(task, &error);
    if (!_atn_session_end_open(self, task))
        return;
    if (!m && g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED)) {
        g_autofree char *msg = g_strdup_printf(_("Opening “%s” was cancelled."), job->sources[0]);
        g_signal_emit(self, signals[SIGNAL_NOTICE], 0, msg);
        if (!self->model && g_strcmp0(job->sources[0], "demo") != 0)
            atn_session_open_default(self, NULL);
        return;
    }
    if (!m) {
        g_autofree char *msg = g_strdup_printf(_("Could not open the model “%s”: %s"), job->sources[0],
                                               error->message);
        g_signal_emit(self, signals[SIGNAL_ERROR], 0, msg);
        return;
    }
    atn_model_handle_set_fallback(m, job->opened > 0);
    if (job->opened > 0 && job->first_error && !job->quiet) {
        g_autofree char *msg = g_strdup_printf(_("Could not open the model “%s” (%s); opened “%s” instead."),
                                               job->sources[0], job->first_error, job->sources[job->opened]);
        g_signal_emit(self, signals[SIGNAL_NOTICE], 0, msg);
    }
    use_model(self, m);
}

void _atn_session_show_attention(AtnSession *self, AtnModelHandle *file, AtnResult *r) {
    use_model(self, file);   /* runs nothing: the file has no weights */
    set_result(self, r);
    start_stats(self);
}

void _atn_session_start_open(AtnSession *self, char **sources, gboolean quiet, GAsyncReadyCallback done,
                             GTaskThreadFunc thread) {
    if (self->open_cancel)
        g_cancellable_cancel(self->open_cancel);
    g_clear_object(&self->open_cancel);
    self->open_cancel = g_cancellable_new();
    open_job *job = g_new0(open_job, 1);
    job->stage = -1;
    job->sources = sources;
    job->quiet = quiet;
    job->cancellable = g_object_ref(self->open_cancel);
    set_opening(self, sources[0]);
    self->open_job = job;
    g_autoptr(GTask) task = g_task_new(self, self->open_cancel, done, NULL);
    g_task_set_source_tag(task, _atn_session_start_open);
    g_task_set_task_data(task, job, (GDestroyNotify)_atn_session_open_job_free);
    g_task_run_in_thread(task, thread);
}

/* An open of one of sources (in order); its done callback is open_done. */
static void open_sources(AtnSession *self, char **sources, gboolean quiet) {
    _atn_session_start_open(self, sources, quiet, open_done, _atn_session_open_thread);
}

/* Whether task (an open's) is still the newest open; if so, the session is no longer opening. */
gboolean _atn_session_end_open(AtnSession *self, GTask *task) {
    if (g_task_get_cancellable(task) != self->open_cancel)
        return FALSE;   /* a newer open replaced this one */
    g_clear_object(&self->open_cancel);
    set_opening(self, NULL);
    return TRUE;
}

double atn_session_get_run_fraction(AtnSession *self) {
    g_return_val_if_fail(ATN_IS_SESSION(self), -1);
    return self->run_fraction;
}

double atn_session_get_open_fraction(AtnSession *self) {
    g_return_val_if_fail(ATN_IS_SESSION(self), 0);
    return self->open_fraction;
}
const char *atn_session_get_open_stage(AtnSession *self) {
    g_return_val_if_fail(ATN_IS_SESSION(self), NULL);
    return self->open_stage ? self->open_stage : "";
}

void atn_session_cancel_open(AtnSession *self) {
    g_return_if_fail(ATN_IS_SESSION(self));
    if (self->open_cancel)
        g_cancellable_cancel(self->open_cancel);   /* open_done says so and keeps the model */
}

void atn_session_open_model(AtnSession *self, const char *source) {
    g_return_if_fail(ATN_IS_SESSION(self) && source);
    if (self->model && atn_model_handle_is_toy(self->model) &&
        !g_strcmp0(source, atn_model_handle_get_source(self->model))) {
        /* the toy model shown, chosen again: it stays, edits and all (reading the file again
           stashed the edited copy and showed it back on the next choice, alternating);
           atn_session_revert_toy is the way back to the numbers as opened */
        if (self->open_cancel)
            g_cancellable_cancel(self->open_cancel);
        g_clear_object(&self->open_cancel);
        set_opening(self, NULL);
        start_run(self);   /* a toy model runs before this returns */
        return;
    }
    AtnModelHandle *edited = g_hash_table_lookup(self->edited_toys, source);
    if (edited) {
        g_autoptr(AtnModelHandle) m = g_object_ref(edited);
        g_hash_table_remove(self->edited_toys, source);
        atn_session_set_model(self, m);
        return;
    }
    char **v = g_new0(char *, 2);
    v[0] = g_strdup(source);
    open_sources(self, v, FALSE);
}

void atn_session_set_model(AtnSession *self, AtnModelHandle *model) {
    g_return_if_fail(ATN_IS_SESSION(self));
    if (self->open_cancel)
        g_cancellable_cancel(self->open_cancel);
    g_clear_object(&self->open_cancel);
    set_opening(self, NULL);
    use_model(self, model);
}

void atn_session_open_default(AtnSession *self, const char *preferred) {
    g_return_if_fail(ATN_IS_SESSION(self));
    g_autoptr(GStrvBuilder) b = g_strv_builder_new();
    if (preferred && *preferred)
        g_strv_builder_add(b, preferred);
    if (g_strcmp0(preferred, "demo") != 0)
        g_strv_builder_add(b, "demo");
    if (g_strcmp0(preferred, "worked-example") != 0)
        g_strv_builder_add(b, "worked-example");
    open_sources(self, g_strv_builder_end(b), !(preferred && *preferred));
}

/* ---- GPU probe ------------------------------------------------------------------------ */

typedef struct gpu_probe {
    gboolean ok;
    char *reason;
} gpu_probe;

static gpu_probe probe_result;
static gsize probe_done;

/* Runs the worked example on the GPU: the engine says why when it cannot. */
static gpointer gpu_probe_work(gpointer job, GCancellable *cancellable) {
    if (g_once_init_enter(&probe_done)) {
        atn_error err = {0};
        atn_model *m = atn_model_open("worked-example", NULL, NULL, &err);
        atn_encoding *enc = NULL;
        atn_run *run = NULL;
        if (m && atn_model_encode_toy(m, NULL, &enc, &err) == ATN_OK && (run = atn_run_new(m))) {
            atn_run_options opts;
            atn_ui_run_options_init(&opts);
            opts.device = ATN_DEVICE_CUDA;
            probe_result.ok = atn_run_forward(run, enc, &opts, &err) == ATN_OK &&
                              atn_run_device_used(run) == ATN_DEVICE_CUDA;
        }
        if (!probe_result.ok)
            probe_result.reason = g_strdup(err.message[0] ? err.message : "no usable GPU");
        atn_run_free(run);
        atn_encoding_free(enc);
        atn_model_free(m);
        g_once_init_leave(&probe_done, 1);
    }
    return NULL;
}

static void gpu_probe_done(gpointer owner, gpointer answer, gpointer job) {
    AtnSession *self = ATN_SESSION(owner);
    self->gpu_available = probe_result.ok;
    g_free(self->gpu_reason);
    self->gpu_reason = g_strdup(probe_result.reason);
    g_object_notify_by_pspec(G_OBJECT(self), props[PROP_GPU_AVAILABLE]);
}

/* ---- GObject ---------------------------------------------------------------------------- */

static void atn_session_dispose(GObject *object) {
    AtnSession *self = ATN_SESSION(object);
    g_clear_handle_id(&self->debounce_id, g_source_remove);
    g_clear_handle_id(&self->open_poll_id, g_source_remove);
    g_clear_handle_id(&self->run_poll_id, g_source_remove);
    self->run_job = NULL;
    self->open_job = NULL;
    if (self->run_cancel)
        g_cancellable_cancel(self->run_cancel);
    atn_worker_cancel(&self->stats_cancel);
    atn_worker_cancel(&self->gpu_probe_cancel);
    if (self->open_cancel)
        g_cancellable_cancel(self->open_cancel);
    g_clear_object(&self->run_cancel);
    g_clear_object(&self->open_cancel);
    g_clear_object(&self->result);
    g_clear_object(&self->model);
    g_clear_pointer(&self->edited_toys, g_hash_table_unref);
    G_OBJECT_CLASS(atn_session_parent_class)->dispose(object);
}

static void atn_session_finalize(GObject *object) {
    AtnSession *self = ATN_SESSION(object);
    g_free(self->text);
    g_free(self->text_pair);
    g_free(self->target);
    if (self->ids)
        g_array_unref(self->ids);
    g_free(self->run_notice);
    g_free(self->opening);
    g_free(self->gpu_reason);
    atn_whatif_unref(self->whatif);
    G_OBJECT_CLASS(atn_session_parent_class)->finalize(object);
}

static void atn_session_get_property(GObject *object, guint prop_id, GValue *value, GParamSpec *pspec) {
    AtnSession *self = ATN_SESSION(object);
    switch (prop_id) {
    case PROP_MODEL: g_value_set_object(value, self->model); break;
    case PROP_RESULT: g_value_set_object(value, self->result); break;
    case PROP_LAYER: g_value_set_int(value, self->layer); break;
    case PROP_HEAD: g_value_set_int(value, self->head); break;
    case PROP_QUERY: g_value_set_int(value, self->query); break;
    case PROP_HOVER_TOKEN: g_value_set_int(value, self->hover_token); break;
    case PROP_BUSY: g_value_set_boolean(value, atn_session_get_busy(self)); break;
    case PROP_DEVICE: g_value_set_int(value, self->device); break;
    case PROP_GPU_AVAILABLE: g_value_set_boolean(value, self->gpu_available); break;
    case PROP_OPENING: g_value_set_string(value, self->opening); break;
    case PROP_OPEN_FRACTION: g_value_set_double(value, self->open_fraction); break;
    case PROP_RUN_FRACTION: g_value_set_double(value, self->run_fraction); break;
    case PROP_STACK: g_value_set_int(value, self->stack); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
    }
}

static void atn_session_set_property(GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec) {
    AtnSession *self = ATN_SESSION(object);
    switch (prop_id) {
    case PROP_LAYER: atn_session_set_layer(self, g_value_get_int(value)); break;
    case PROP_HEAD: atn_session_set_head(self, g_value_get_int(value)); break;
    case PROP_QUERY: atn_session_set_query(self, g_value_get_int(value)); break;
    case PROP_HOVER_TOKEN: atn_session_set_hover_token(self, g_value_get_int(value)); break;
    case PROP_DEVICE: atn_session_set_device(self, g_value_get_int(value)); break;
    case PROP_STACK: atn_session_set_stack(self, g_value_get_int(value)); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
    }
}

static void atn_session_class_init(AtnSessionClass *klass) {
    GObjectClass *object_class = G_OBJECT_CLASS(klass);
    object_class->dispose = atn_session_dispose;
    object_class->finalize = atn_session_finalize;
    object_class->get_property = atn_session_get_property;
    object_class->set_property = atn_session_set_property;

    GParamFlags ro = G_PARAM_READABLE | G_PARAM_STATIC_STRINGS;
    GParamFlags rw = G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS;
    props[PROP_MODEL] = g_param_spec_object("model", NULL, NULL, ATN_TYPE_MODEL_HANDLE, ro);
    props[PROP_RESULT] = g_param_spec_object("result", NULL, NULL, ATN_TYPE_RESULT, ro);
    props[PROP_LAYER] = g_param_spec_int("layer", NULL, NULL, 0, G_MAXINT, 0, rw);
    props[PROP_HEAD] = g_param_spec_int("head", NULL, NULL, 0, G_MAXINT, 0, rw);
    props[PROP_QUERY] = g_param_spec_int("query", NULL, NULL, 0, G_MAXINT, 0, rw);
    props[PROP_HOVER_TOKEN] = g_param_spec_int("hover-token", NULL, NULL, -1, G_MAXINT, -1, rw);
    props[PROP_BUSY] = g_param_spec_boolean("busy", NULL, NULL, FALSE, ro);
    props[PROP_DEVICE] = g_param_spec_int("device", NULL, NULL, ATN_DEVICE_CPU, ATN_DEVICE_AUTO, ATN_DEVICE_CPU, rw);
    props[PROP_GPU_AVAILABLE] = g_param_spec_boolean("gpu-available", NULL, NULL, FALSE, ro);
    props[PROP_OPENING] = g_param_spec_string("opening", NULL, NULL, NULL, ro);
    props[PROP_OPEN_FRACTION] = g_param_spec_double("open-fraction", NULL, NULL, 0, 1, 0, ro);
    props[PROP_RUN_FRACTION] = g_param_spec_double("run-fraction", NULL, NULL, -1, 1, -1, ro);
    props[PROP_STACK] = g_param_spec_int("stack", NULL, NULL, ATN_STACK_ENCODER, ATN_STACK_CROSS, ATN_STACK_ENCODER,
                                         rw);
    g_object_class_install_properties(object_class, N_PROPS, props);

    /* The what-if changes were replaced (atn_session_set_whatif): the What-if page and the
       Model view show the one set the session runs with. */
    signals[SIGNAL_WHATIF_CHANGED] = g_signal_new("whatif-changed", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0,
                                                  NULL, NULL, NULL, G_TYPE_NONE, 0);
    /* The shown result's head statistics have arrived (atn_result_get_stats): they are
       computed after the result is published (start_stats). */
    signals[SIGNAL_STATS_READY] = g_signal_new("stats-ready", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0,
                                               NULL, NULL, NULL, G_TYPE_NONE, 0);
    /* A message for the window's error banner (the model could not open or run). */
    signals[SIGNAL_ERROR] = g_signal_new("error", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                                         G_TYPE_NONE, 1, G_TYPE_STRING);
    /* A message for the information banner (another model was opened instead ...). */
    signals[SIGNAL_NOTICE] = g_signal_new("notice", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                                          G_TYPE_NONE, 1, G_TYPE_STRING);
}

GPtrArray *atn_session_dup_unsaved_toys(AtnSession *self) {
    g_return_val_if_fail(ATN_IS_SESSION(self), NULL);
    GPtrArray *v = g_ptr_array_new_with_free_func(g_object_unref);
    if (self->model && atn_model_handle_get_modified(self->model))
        g_ptr_array_add(v, g_object_ref(self->model));
    GHashTableIter it;
    gpointer value;
    g_hash_table_iter_init(&it, self->edited_toys);
    while (g_hash_table_iter_next(&it, NULL, &value))
        if (atn_model_handle_get_modified(value))
            g_ptr_array_add(v, g_object_ref(value));
    return v;
}

static void atn_session_init(AtnSession *self) {
    self->edited_toys = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_object_unref);
    self->hover_token = -1;
    self->run_fraction = -1;
    self->pick_clearest = TRUE;
    self->debounce_ms = 60;
    self->text = g_strdup("");
    self->text_pair = g_strdup("");
    self->target = g_strdup("");
    self->gpu_reason = g_strdup(_("Looking for a GPU…"));
}

AtnSession *atn_session_new(void) {
    AtnSession *self = g_object_new(ATN_TYPE_SESSION, NULL);
    atn_worker_start(self, &self->gpu_probe_cancel, ATN_WORKER_NORMAL, gpu_probe_work, NULL, NULL, NULL,
                     gpu_probe_done);
    return self;
}

AtnModelHandle *atn_session_get_model(AtnSession *self) {
    g_return_val_if_fail(ATN_IS_SESSION(self), NULL);
    return self->model;
}
const char *atn_session_get_opening(AtnSession *self) {
    g_return_val_if_fail(ATN_IS_SESSION(self), NULL);
    return self->opening;
}
AtnResult *atn_session_get_result(AtnSession *self) {
    g_return_val_if_fail(ATN_IS_SESSION(self), NULL);
    return self->result;
}
const char *atn_session_get_run_notice(AtnSession *self) {
    g_return_val_if_fail(ATN_IS_SESSION(self), NULL);
    return self->run_notice;
}
gboolean atn_session_get_busy(AtnSession *self) {
    g_return_val_if_fail(ATN_IS_SESSION(self), FALSE);
    return self->run_cancel != NULL || self->opening != NULL;
}
const char *atn_session_get_text(AtnSession *self) {
    g_return_val_if_fail(ATN_IS_SESSION(self), NULL);
    return self->text;
}
const char *atn_session_get_text_pair(AtnSession *self) {
    g_return_val_if_fail(ATN_IS_SESSION(self), NULL);
    return self->text_pair;
}
int atn_session_get_layer(AtnSession *self) {
    g_return_val_if_fail(ATN_IS_SESSION(self), 0);
    return self->layer;
}
int atn_session_get_head(AtnSession *self) {
    g_return_val_if_fail(ATN_IS_SESSION(self), 0);
    return self->head;
}
void atn_session_step_head(AtnSession *self, int dlayer, int dhead) {
    g_return_if_fail(ATN_IS_SESSION(self));
    if (!self->result)
        return;
    int L, H;
    atn_encdec_dims(self->result, self->stack, &L, &H, NULL);
    int l = self->layer + dlayer, h = self->head + dhead;
    atn_session_select_head(self, CLAMP(l, 0, L - 1), CLAMP(h, 0, H - 1));
}

int atn_session_get_query(AtnSession *self) {
    g_return_val_if_fail(ATN_IS_SESSION(self), 0);
    return self->query;
}
int atn_session_get_hover_token(AtnSession *self) {
    g_return_val_if_fail(ATN_IS_SESSION(self), 0);
    return self->hover_token;
}
atn_device atn_session_get_device(AtnSession *self) {
    g_return_val_if_fail(ATN_IS_SESSION(self), ATN_DEVICE_CPU);
    return self->device;
}
gboolean atn_session_get_gpu_available(AtnSession *self) {
    g_return_val_if_fail(ATN_IS_SESSION(self), FALSE);
    return self->gpu_available;
}
const char *atn_session_get_gpu_reason(AtnSession *self) {
    g_return_val_if_fail(ATN_IS_SESSION(self), NULL);
    return self->gpu_reason;
}
guint atn_session_get_n_runs(AtnSession *self) {
    g_return_val_if_fail(ATN_IS_SESSION(self), 0);
    return self->n_runs;
}
void atn_session_set_debounce_ms(AtnSession *self, guint ms) {
    g_return_if_fail(ATN_IS_SESSION(self));
    self->debounce_ms = ms;
}

guint atn_session_get_effective_debounce_ms(AtnSession *self) {
    g_return_val_if_fail(ATN_IS_SESSION(self), 0);
    if (!self->result || self->debounce_ms == 0)
        return self->debounce_ms;
    /* a change after a pause, with nothing running, starts at once: the pause is there to
       let a burst of typing settle, and there is no burst */
    gint64 since_ms = (g_get_monotonic_time() - self->last_change_us) / 1000;
    if (!self->run_cancel && !self->debounce_id && since_ms >= self->debounce_ms)
        return 0;
    /* waiting longer than a run takes saves nothing: the demo model runs in well under a
       millisecond, so its keystrokes need no pause at all */
    double ms = atn_result_get_elapsed_ms(self->result);
    return ms < self->debounce_ms ? (guint)ms : self->debounce_ms;
}

/* After a change of text: runs after the debounce delay (a newer change restarts it).  "At
 * once" means on the next main-loop turn, so that the changes one edit makes together (an
 * entry's set_text deletes, then inserts) come as one run. */
static void schedule_run(AtnSession *self) {
    guint ms = self->start_pending ? 0 : atn_session_get_effective_debounce_ms(self);
    self->last_change_us = g_get_monotonic_time();
    g_clear_handle_id(&self->debounce_id, g_source_remove);
    self->start_pending = ms == 0;
    if (ms == 0 && self->debounce_ms == 0)
        start_run(self);   /* tests and benchmarks asked for no delay at all */
    else if (ms == 0)   /* before this turn's redraws (an idle would wait behind them) */
        self->debounce_id = g_idle_add_full(G_PRIORITY_DEFAULT, debounce_cb, self, NULL);
    else
        self->debounce_id = g_timeout_add(ms, debounce_cb, self);
}

void atn_session_set_text(AtnSession *self, const char *text, const char *text_pair) {
    g_return_if_fail(ATN_IS_SESSION(self));
    text = text ? text : "";
    text_pair = text_pair ? text_pair : "";
    if (!g_strcmp0(text, self->text) && !g_strcmp0(text_pair, self->text_pair))
        return;
    g_free(self->text);
    g_free(self->text_pair);
    self->text = g_strdup(text);
    self->text_pair = g_strdup(text_pair);
    if (!self->model || atn_model_handle_is_toy(self->model))
        return;
    schedule_run(self);
}

void atn_session_set_target(AtnSession *self, const char *target) {
    g_return_if_fail(ATN_IS_SESSION(self));
    target = target ? target : "";
    if (!g_strcmp0(target, self->target))
        return;
    g_free(self->target);
    self->target = g_strdup(target);
    AtnModelHandle *m = self->model;
    if (m && atn_model_handle_has_weights(m) && atn_model_is_encoder_decoder(atn_model_handle_get_model(m)))
        schedule_run(self);
}

const char *atn_session_get_target(AtnSession *self) {
    g_return_val_if_fail(ATN_IS_SESSION(self), NULL);
    return self->target;
}

void atn_session_set_stack(AtnSession *self, int stack) {
    g_return_if_fail(ATN_IS_SESSION(self));
    g_return_if_fail(stack >= ATN_STACK_ENCODER && stack <= ATN_STACK_CROSS);
    if (stack == self->stack)
        return;
    self->stack = stack;
    clamp_selection(self);   /* the decoder may have more or fewer layers, the target other rows */
    g_object_notify_by_pspec(G_OBJECT(self), props[PROP_STACK]);
}

int atn_session_get_stack(AtnSession *self) {
    g_return_val_if_fail(ATN_IS_SESSION(self), ATN_STACK_ENCODER);
    return self->stack;
}

void atn_session_set_ids(AtnSession *self, const int32_t *ids, int n) {
    g_return_if_fail(ATN_IS_SESSION(self));
    if (self->ids)
        g_array_unref(self->ids);
    self->ids = NULL;
    if (ids) {
        self->ids = g_array_sized_new(FALSE, FALSE, sizeof(int32_t), n);
        g_array_append_vals(self->ids, ids, n);
    }
    if (!self->model || atn_model_handle_is_toy(self->model))
        return;
    schedule_run(self);
}

void atn_session_set_whatif(AtnSession *self, AtnWhatif *whatif) {
    g_return_if_fail(ATN_IS_SESSION(self));
    if (whatif == self->whatif)
        return;
    atn_whatif_unref(self->whatif);
    self->whatif = atn_whatif_ref(whatif);
    g_signal_emit(self, signals[SIGNAL_WHATIF_CHANGED], 0);
    start_run(self);
}

void atn_session_set_thumb_style(AtnSession *self, atn_colormap cm, gboolean shared_range) {
    g_return_if_fail(ATN_IS_SESSION(self));
    self->thumb_style_set = TRUE;
    self->thumb_cmap = cm;
    self->thumb_shared = !!shared_range;
}

AtnWhatif *atn_session_get_whatif(AtnSession *self) {
    g_return_val_if_fail(ATN_IS_SESSION(self), NULL);
    return self->whatif;
}

void atn_session_rerun(AtnSession *self) {
    g_return_if_fail(ATN_IS_SESSION(self));
    start_run(self);
}

gboolean atn_session_revert_toy(AtnSession *self) {
    g_return_val_if_fail(ATN_IS_SESSION(self), FALSE);
    if (!self->model || !atn_model_handle_revert_toy(self->model))
        return FALSE;
    start_run(self);   /* toy models run before this returns: every view shows the original */
    return TRUE;
}

static int clamp_index(AtnSession *self, int v, int which) {
    if (v < 0)
        return 0;
    if (!self->result)
        return v;
    int L, H, nq;
    atn_encdec_dims(self->result, self->stack, &L, &H, &nq);   /* an encoder-decoder: the stack's */
    int max = which == PROP_LAYER ? L : which == PROP_HEAD ? H : nq;
    const atn_capture *cap = atn_result_get_capture(self->result);
    if (which == PROP_HEAD && cap && cap->layer_heads && self->stack == ATN_STACK_ENCODER && self->layer >= 0 &&
        self->layer < cap->n_layers)
        max = cap->layer_heads[self->layer];   /* an attention file's layer with fewer heads: never an absent one */
    return MIN(v, MAX(max - 1, 0));
}

void atn_session_set_layer(AtnSession *self, int layer) {
    g_return_if_fail(ATN_IS_SESSION(self));
    self->pick_clearest = FALSE;
    layer = clamp_index(self, layer, PROP_LAYER);
    if (layer == self->layer)
        return;
    self->layer = layer;
    g_object_notify_by_pspec(G_OBJECT(self), props[PROP_LAYER]);
    int head = clamp_index(self, self->head, PROP_HEAD);   /* a layer with fewer heads (an attention file's) */
    if (head != self->head) {
        self->head = head;
        g_object_notify_by_pspec(G_OBJECT(self), props[PROP_HEAD]);
    }
}

void atn_session_set_head(AtnSession *self, int head) {
    g_return_if_fail(ATN_IS_SESSION(self));
    self->pick_clearest = FALSE;
    head = clamp_index(self, head, PROP_HEAD);
    if (head == self->head)
        return;
    self->head = head;
    g_object_notify_by_pspec(G_OBJECT(self), props[PROP_HEAD]);
}

void atn_session_select_head(AtnSession *self, int layer, int head) {
    g_return_if_fail(ATN_IS_SESSION(self));
    atn_session_set_layer(self, layer);
    atn_session_set_head(self, head);
}

void atn_session_set_query(AtnSession *self, int query) {
    g_return_if_fail(ATN_IS_SESSION(self));
    query = clamp_index(self, query, PROP_QUERY);
    if (query == self->query)
        return;
    self->query = query;
    g_object_notify_by_pspec(G_OBJECT(self), props[PROP_QUERY]);
}

void atn_session_set_hover_token(AtnSession *self, int token) {
    g_return_if_fail(ATN_IS_SESSION(self));
    if (token < -1 || (self->result && token >= atn_result_get_n_tokens(self->result)))
        token = -1;
    if (token == self->hover_token)
        return;
    self->hover_token = token;
    g_object_notify_by_pspec(G_OBJECT(self), props[PROP_HOVER_TOKEN]);
}

atn_precision atn_session_get_precision(AtnSession *self) {
    g_return_val_if_fail(ATN_IS_SESSION(self), ATN_PRECISION_FP32);
    return self->precision;
}

void atn_session_set_precision(AtnSession *self, atn_precision precision) {
    g_return_if_fail(ATN_IS_SESSION(self));
    g_return_if_fail(precision == ATN_PRECISION_FP32 || precision == ATN_PRECISION_BF16 ||
                     precision == ATN_PRECISION_FP16);
    if (precision == self->precision)
        return;
    self->precision = precision;
    start_run(self);
}

void atn_session_set_device(AtnSession *self, atn_device device) {
    g_return_if_fail(ATN_IS_SESSION(self));
    if (device == self->device)
        return;
    self->device = device;
    g_object_notify_by_pspec(G_OBJECT(self), props[PROP_DEVICE]);
    start_run(self);
}
