/* The Train page (atn-train-view.h): the training worker, the live curves and attention
 * maps, Start / Pause / Step / Stop, the exports and "Open in attnscope".  The knobs (the
 * form of training settings) are in atn-train-knobs.c, the plots' drawing in
 * atn-train-plots.c; the struct both files read is in atn-train-view-private.h. */
#include "atn-train-view-private.h"
#include "atn-train-view-test.h"

#include <glib/gi18n.h>
#include <math.h>
#include <string.h>

#include "atn-figure.h"
#include "atn-export.h"
#include "atn-session.h"
#include "atn-train-exp.h"
#include "atn-train-plots.h"
#include "atn-view.h"
#include "atn-worker.h"
#include "render.h"
#include "train.h"

/* ---- what the worker measured, shared with the main thread -------------------------------- */

typedef struct TrainShared {
    GMutex lock;
    GArray *x, *loss, *acc;   /* float each, one point per step */
    GArray *norms;            /* float, [step][norm_layers]: each layer's gradient norm */
    int32_t norm_layers;
    int32_t steps_total;
    double seconds;           /* training time so far (pauses left out) */
    /* the probe's attention at the last redraw: [layers][heads][n][keys] (keys: n, or
       Linformer's projected keys), and each head's induction score */
    float *attn, *induction;
    int32_t layers, heads, n, keys, attn_step;
    char *probe_text;         /* the probe's tokens, space-separated */
    gboolean induction_task;  /* the induction task: the maps say each head's score */
    gint paused, stop;        /* atomics: set by the main thread */
    gint step_once;           /* atomic: single steps asked while paused (Step), not yet taken */
    gint waiting;             /* atomic: the worker sits paused between steps */
    /* Open in attnscope during a run: the folder to save the model in at the next step
       boundary (under lock), and the atomic state: 0 none, 1 asked, 2 saved, 3 failed
       (save_error says why) */
    char *save_dir, *save_error;
    gint save_state;
    gboolean fp16;            /* the run's precision is fp16: the status counts skipped steps */
    int32_t skipped;          /* fp16 steps skipped for overflowing gradients */
} TrainShared;

static void shared_clear(gpointer p) {
    TrainShared *s = p;
    g_mutex_clear(&s->lock);
    g_array_unref(s->x);
    g_array_unref(s->loss);
    g_array_unref(s->acc);
    g_array_unref(s->norms);
    g_free(s->attn);
    g_free(s->induction);
    g_free(s->probe_text);
    g_free(s->save_dir);
    g_free(s->save_error);
}

static TrainShared *shared_new(int32_t steps) {
    TrainShared *s = g_atomic_rc_box_new0(TrainShared);
    g_mutex_init(&s->lock);
    s->x = g_array_sized_new(FALSE, FALSE, sizeof(float), (guint)MIN(steps, 100000));
    s->loss = g_array_sized_new(FALSE, FALSE, sizeof(float), (guint)MIN(steps, 100000));
    s->acc = g_array_sized_new(FALSE, FALSE, sizeof(float), (guint)MIN(steps, 100000));
    s->norms = g_array_new(FALSE, FALSE, sizeof(float));
    s->steps_total = steps;
    return s;
}
static void shared_unref(gpointer p) { g_atomic_rc_box_release_full(p, shared_clear); }

typedef struct TrainJob {
    atn_train_options o;
    int32_t every;            /* redraw the attention every this many steps */
    TrainShared *sh;
} TrainJob;

static void job_free(gpointer p) {
    TrainJob *j = p;
    shared_unref(j->sh);
    g_free(j);
}

static gint live_workers;

/* ---- the page (its struct: atn-train-view-private.h) ----------------------------------- */


static void view_iface_init(AtnViewInterface *iface);
static void figure_source_iface_init(AtnFigureSourceInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE(AtnTrainView, atn_train_view, GTK_TYPE_WIDGET,
                              G_IMPLEMENT_INTERFACE(ATN_TYPE_FIGURE_SOURCE, figure_source_iface_init)
                              G_IMPLEMENT_INTERFACE(ATN_TYPE_VIEW, view_iface_init))

static GtkWidget *control(AtnTrainView *self, const char *name) { return atn_train_control(self, name); }
static int spin_int(AtnTrainView *self, const char *name) {
    return gtk_spin_button_get_value_as_int(GTK_SPIN_BUTTON(control(self, name)));
}

/* ---- the worker ---------------------------------------------------------------------------- */

/* Open in attnscope during the run (paused): the model as it is now, saved by the worker that
 * owns it, between two steps. */
static void serve_save(TrainShared *sh, const atn_trainer *t) {
    if (g_atomic_int_get(&sh->save_state) != 1)
        return;
    g_mutex_lock(&sh->lock);
    char *dir = g_strdup(sh->save_dir);
    g_mutex_unlock(&sh->lock);
    atn_error err = {0};
    gboolean ok = atn_trainer_save(t, dir, &err) == ATN_OK;
    g_free(dir);
    if (!ok) {
        g_mutex_lock(&sh->lock);
        g_free(sh->save_error);
        sh->save_error = g_strdup(err.message);
        g_mutex_unlock(&sh->lock);
    }
    g_atomic_int_set(&sh->save_state, ok ? 2 : 3);
}

static gpointer train_work(gpointer data, GCancellable *cancellable, GError **error) {
    TrainJob *job = data;
    TrainShared *sh = job->sh;
    g_atomic_int_inc(&live_workers);
    atn_error err = {0};
    atn_trainer *t = atn_trainer_new(&job->o, &err);
    if (!t) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_FAILED, "%s", err.message);
        g_atomic_int_dec_and_test(&live_workers);
        return NULL;
    }
    int32_t n = atn_trainer_tokens(t), L = job->o.layers, H = job->o.heads, K = atn_trainer_attention_keys(t);
    int32_t *probe = g_new(int32_t, n);
    float *attn = g_new(float, (size_t)L * H * n * K), *ind = g_new(float, (size_t)L * H);
    float *norms = g_new(float, (size_t)L);
    gint64 t0 = g_get_monotonic_time();
    double paused_s = 0;
    atn_train_stats st;
    atn_status status = ATN_OK;
    for (int32_t s = 0; s < job->o.steps; s++) {
        gint64 p0 = g_get_monotonic_time();
        gboolean single = FALSE;   /* Step: one step taken while paused, the maps redrawn after it */
        serve_save(sh, t);
        while (g_atomic_int_get(&sh->paused) && !g_atomic_int_get(&sh->stop) &&
               !g_cancellable_is_cancelled(cancellable)) {
            if (g_atomic_int_get(&sh->step_once) > 0) {
                g_atomic_int_add(&sh->step_once, -1);
                single = TRUE;
                break;
            }
            serve_save(sh, t);
            g_atomic_int_set(&sh->waiting, 1);
            g_usleep(10000);
        }
        g_atomic_int_set(&sh->waiting, 0);
        paused_s += (double)(g_get_monotonic_time() - p0) / 1e6;
        if (g_cancellable_is_cancelled(cancellable) || g_atomic_int_get(&sh->stop))
            break;
        if ((status = atn_trainer_compute(t, &st, &err)) != ATN_OK || (status = atn_trainer_update(t, &st, &err)) != ATN_OK)
            break;
        if (s == 0) {   /* the probe: the first batch's first sequence, fixed for the whole run */
            const int32_t *ids, *labels;
            int32_t b, nn;
            atn_trainer_batch(t, &ids, &labels, &b, &nn);
            memcpy(probe, ids, (size_t)n * sizeof *probe);
            GString *text = g_string_new(NULL);
            for (int32_t i = 0; i < n; i++)
                g_string_append_printf(text, "%s%s", i ? " " : "", atn_trainer_token(t, probe[i]));
            g_mutex_lock(&sh->lock);
            sh->probe_text = g_string_free(text, FALSE);
            g_mutex_unlock(&sh->lock);
        }
        float x = (float)(s + 1);
        for (int32_t l = 0; l < L; l++)   /* the gradients are kept until the next compute */
            norms[l] = atn_trainer_layer_grad_norm(t, l);
        g_mutex_lock(&sh->lock);
        sh->norm_layers = L;
        g_array_append_vals(sh->norms, norms, (guint)L);
        g_array_append_val(sh->x, x);
        g_array_append_val(sh->loss, st.loss);
        g_array_append_val(sh->acc, st.accuracy);
        sh->skipped = st.skipped_steps;
        sh->seconds = (double)(g_get_monotonic_time() - t0) / 1e6 - paused_s;
        g_mutex_unlock(&sh->lock);
        if ((s + 1) % job->every == 0 || s + 1 == job->o.steps || s == 0 || single) {
            if ((status = atn_trainer_probe(t, probe, n, &err)) != ATN_OK)
                break;
            for (int32_t l = 0; l < L; l++)
                memcpy(attn + (size_t)l * H * n * K, atn_trainer_attention(t, l, NULL), (size_t)H * n * K * sizeof(float));
            atn_trainer_induction_scores(t, ind);
            g_mutex_lock(&sh->lock);
            if (!sh->attn) {
                sh->attn = g_new(float, (size_t)L * H * n * K);
                sh->induction = g_new(float, (size_t)L * H);
                sh->layers = L, sh->heads = H, sh->n = n, sh->keys = K;
            }
            memcpy(sh->attn, attn, (size_t)L * H * n * K * sizeof(float));
            memcpy(sh->induction, ind, (size_t)L * H * sizeof(float));
            sh->attn_step = s + 1;
            g_mutex_unlock(&sh->lock);
        }
    }
    g_free(probe);
    g_free(norms);
    g_free(attn);
    g_free(ind);
    if (status != ATN_OK || g_cancellable_is_cancelled(cancellable)) {
        if (status != ATN_OK)
            g_set_error(error, G_IO_ERROR, G_IO_ERROR_FAILED, "%s", err.message);
        else
            g_set_error_literal(error, G_IO_ERROR, G_IO_ERROR_CANCELLED, "cancelled");
        atn_trainer_free(t);
        g_atomic_int_dec_and_test(&live_workers);
        return NULL;
    }
    g_atomic_int_dec_and_test(&live_workers);
    return t;
}

static void update_buttons(AtnTrainView *self) {
    gboolean running = self->train_slot != NULL, saving = self->save_slot != NULL;
    gtk_widget_set_sensitive(self->start, !running && !saving);
    gtk_widget_set_sensitive(self->pause, running);
    gtk_widget_set_sensitive(self->stop, running);
    gtk_widget_set_sensitive(self->step, running && self->sh && g_atomic_int_get(&self->sh->paused));
    atn_error err = {0};
    /* the finished run's model, or the paused run's as it is now */
    gboolean paused = running && self->sh && g_atomic_int_get(&self->sh->paused);
    const atn_train_options *model = self->trainer ? &self->trained : paused ? &self->running : NULL;
    gboolean can_save = model && atn_train_options_check(model, true, &err) == ATN_OK;
    gtk_widget_set_sensitive(self->open, can_save && !saving && !self->saving_paused && self->session);
    if (model && !can_save)
        gtk_widget_set_tooltip_text(self->open, err.message);
    else
        gtk_widget_set_tooltip_text(self->open, _("Save the trained model as a Hugging Face folder and show it in the "
                                                  "other views"));
    gtk_button_set_label(GTK_BUTTON(self->pause), self->sh && g_atomic_int_get(&self->sh->paused) ? _("Resume")
                                                                                                  : _("Pause"));
}

static void update_status(AtnTrainView *self, const char *state) {
    if (!self->sh)
        return;
    g_mutex_lock(&self->sh->lock);
    guint n = self->sh->x->len;
    float loss = n ? g_array_index(self->sh->loss, float, n - 1) : NAN;
    float acc = n ? g_array_index(self->sh->acc, float, n - 1) : NAN;
    double secs = self->sh->seconds;
    gboolean fp16 = self->sh->fp16;
    int32_t skipped = self->sh->skipped;
    int32_t total = self->sh->steps_total;
    g_autofree char *probe = g_strdup(self->sh->probe_text);
    float best = 0;
    for (int32_t i = 0; self->sh->induction && i < self->sh->layers * self->sh->heads; i++)
        best = fmaxf(best, self->sh->induction[i]);
    g_mutex_unlock(&self->sh->lock);
    self->best_induction = best;
    g_autofree char *line = NULL;
    if (n)
        line = g_strdup_printf(_("%s · step %u of %d · loss %.4f · accuracy %.1f %% · %.0f steps/s"), state, n, total,
                               (double)loss, 100.0 * acc, secs > 0 ? n / secs : 0.0);
    else
        line = g_strdup_printf("%s", state);
    if (n && fp16) {
        g_autofree char *head = line;
        line = g_strdup_printf(_("%s · fp16: %d steps skipped (gradient overflow)"), head, (int)skipped);
    }
    gtk_label_set_text(self->status, line);
    if (probe) {
        g_autofree char *p = g_strdup_printf(_("Probe: %s"), probe);
        gtk_label_set_text(self->probe_label, p);
    }
}

static void check_paused_save(AtnTrainView *self);

static gboolean poll_tick(gpointer data) {
    AtnTrainView *self = data;
    check_paused_save(self);
    update_status(self, self->sh && g_atomic_int_get(&self->sh->paused) ? _("Paused") : _("Training"));
    gtk_widget_queue_draw(self->curve);
    gtk_widget_queue_draw(self->norms);
    gtk_widget_queue_draw(self->map);
    return G_SOURCE_CONTINUE;
}

static void stop_poll(AtnTrainView *self) {
    if (self->poll)
        g_source_remove(self->poll), self->poll = 0;
}

static void train_done(gpointer owner, gpointer answer, const GError *error, gpointer data) {
    AtnTrainView *self = owner;
    TrainJob *job = data;
    stop_poll(self);
    check_paused_save(self);
    if (self->saving_paused) {   /* asked as the run ended: dropped (Open then opens the finished model) */
        self->saving_paused = FALSE;
        g_atomic_int_set(&job->sh->save_state, 0);
    }
    if (error) {
        g_autofree char *msg = g_strdup_printf(_("Training failed: %s"), error->message);
        gtk_label_set_text(self->status, msg);
    } else {
        self->trainer = answer;
        self->trained = job->o;
        update_status(self, g_atomic_int_get(&job->sh->stop) ? _("Stopped") : _("Finished"));
    }
    gtk_widget_queue_draw(self->curve);
    gtk_widget_queue_draw(self->norms);
    gtk_widget_queue_draw(self->map);
    update_buttons(self);
}

static void on_start(GtkButton *b, AtnTrainView *self) {
    (void)b;
    atn_train_options o;
    atn_train_knobs_read(self, &o);
    atn_error err = {0};
    if (atn_train_options_check(&o, false, &err) != ATN_OK) {
        gtk_label_set_text(self->status, err.message);
        return;
    }
    atn_trainer_free(self->trainer);
    self->trainer = NULL;
    if (self->sh)
        shared_unref(self->sh);
    self->sh = shared_new(o.steps);
    self->sh->induction_task = o.task == ATN_TASK_INDUCTION;
    self->sh->fp16 = o.precision == ATN_PRECISION_FP16;
    TrainJob *job = g_new0(TrainJob, 1);
    job->o = o;
    self->running = o;
    self->saving_paused = FALSE;
    job->every = MAX(1, spin_int(self, "every"));
    job->sh = g_atomic_rc_box_acquire(self->sh);
    atn_worker_start_fallible(self, &self->train_slot, ATN_WORKER_NICE | ATN_WORKER_TAKE, "train", train_work, job,
                              job_free, (GDestroyNotify)atn_trainer_free, train_done);
    gtk_label_set_text(self->status, _("Training"));
    gtk_label_set_text(self->probe_label, "");
    self->best_induction = 0;
    stop_poll(self);
    self->poll = g_timeout_add(100, poll_tick, self);
    update_buttons(self);
}

static void on_pause(GtkButton *b, AtnTrainView *self) {
    (void)b;
    if (!self->sh || !self->train_slot)
        return;
    g_atomic_int_set(&self->sh->paused, !g_atomic_int_get(&self->sh->paused));
    update_buttons(self);
    poll_tick(self);
}

/* One optimiser step while paused; the poll redraws the curves and the maps after it. */
static void on_step(GtkButton *b, AtnTrainView *self) {
    (void)b;
    if (!self->sh || !self->train_slot || !g_atomic_int_get(&self->sh->paused))
        return;
    g_atomic_int_inc(&self->sh->step_once);
}

static void on_stop(GtkButton *b, AtnTrainView *self) {
    (void)b;
    if (!self->sh || !self->train_slot)
        return;
    g_atomic_int_set(&self->sh->stop, 1);
    g_atomic_int_set(&self->sh->paused, 0);
    g_atomic_int_set(&self->sh->step_once, 0);
    update_buttons(self);
}

/* ---- Open in attnscope ----------------------------------------------------------------- */

typedef struct SaveJob {
    const atn_trainer *t;     /* the page's, kept (Start is off) until done */
    char *dir;
} SaveJob;

static void save_job_free(gpointer p) {
    SaveJob *j = p;
    g_free(j->dir);
    g_free(j);
}

static gpointer save_work(gpointer data, GCancellable *c, GError **error) {
    (void)c;
    SaveJob *j = data;
    atn_error err = {0};
    if (atn_trainer_save(j->t, j->dir, &err) != ATN_OK) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_FAILED, "%s", err.message);
        return NULL;
    }
    return g_strdup(j->dir);
}

/* A model saved (dir) or not (error): said, and opened in the other views. */
static void saved(AtnTrainView *self, const char *dir, const char *error) {
    if (error) {
        g_autofree char *msg = g_strdup_printf(_("Could not save the model: %s"), error);
        gtk_label_set_text(self->status, msg);
    } else {
        g_free(self->saved_dir);
        self->saved_dir = g_strdup(dir);
        g_autofree char *msg = g_strdup_printf(_("Saved in %s; opening it."), self->saved_dir);
        gtk_label_set_text(self->status, msg);
        if (self->session) {
            atn_session_open_model(self->session, self->saved_dir);
            gtk_widget_activate_action(GTK_WIDGET(self), "win.view", "s", "head");
        }
    }
    update_buttons(self);
}

static void save_done(gpointer owner, gpointer answer, const GError *error, gpointer data) {
    (void)data;
    saved(owner, answer, error ? error->message : NULL);
}

/* Where Open in attnscope saves: $ATTNSCOPE_TRAINED_DIR or the data folder's
 * attnscope/trained, a folder named by the task and the time (and the step, for a run still
 * training). */
static char *save_folder(const atn_train_options *o, int step) {
    g_autoptr(GDateTime) now = g_date_time_new_now_local();
    g_autofree char *stamp = g_date_time_format(now, "%Y%m%d-%H%M%S");
    g_autofree char *name = step ? g_strdup_printf("%s-%s-step%d", atn_train_task_name(o->task), stamp, step)
                                 : g_strdup_printf("%s-%s", atn_train_task_name(o->task), stamp);
    const char *root = g_getenv("ATTNSCOPE_TRAINED_DIR");
    return root && *root ? g_build_filename(root, name, NULL)
                         : g_build_filename(g_get_user_data_dir(), "attnscope", "trained", name, NULL);
}

/* The paused run's save, once its worker has done it (from the poll). */
static void check_paused_save(AtnTrainView *self) {
    if (!self->saving_paused || !self->sh)
        return;
    int state = g_atomic_int_get(&self->sh->save_state);
    if (state < 2)
        return;
    self->saving_paused = FALSE;
    g_mutex_lock(&self->sh->lock);
    g_autofree char *dir = g_strdup(self->sh->save_dir);
    g_autofree char *why = g_strdup(self->sh->save_error);
    g_mutex_unlock(&self->sh->lock);
    g_atomic_int_set(&self->sh->save_state, 0);
    saved(self, dir, state == 2 ? NULL : why ? why : "?");
}

static void on_open(GtkButton *b, AtnTrainView *self) {
    (void)b;
    if (self->save_slot || self->saving_paused)
        return;
    if (!self->trainer) {   /* paused: the worker saves the model as it is now, between steps */
        if (!self->train_slot || !self->sh || !g_atomic_int_get(&self->sh->paused))
            return;
        g_mutex_lock(&self->sh->lock);
        g_free(self->sh->save_dir);
        self->sh->save_dir = save_folder(&self->running, (int)self->sh->x->len);
        g_mutex_unlock(&self->sh->lock);
        self->saving_paused = TRUE;
        g_atomic_int_set(&self->sh->save_state, 1);
        gtk_label_set_text(self->status, _("Saving the model as it is now…"));
        update_buttons(self);
        return;
    }
    SaveJob *job = g_new0(SaveJob, 1);
    job->t = self->trainer;
    job->dir = save_folder(&self->trained, 0);
    atn_worker_start_fallible(self, &self->save_slot, ATN_WORKER_NORMAL, NULL, save_work, job, save_job_free, g_free,
                              save_done);
    update_buttons(self);
}

/* ---- drawing ------------------------------------------------------------------------------ */

static void draw_curve(GtkDrawingArea *area, cairo_t *cr, int width, int height, gpointer data) {
    AtnTrainView *self = data;
    atn_render_style st;
    atn_render_style_for_widget(GTK_WIDGET(area), self->font_scale, &st);
    atn_train_curve_spec spec;
    atn_train_curve_spec_init(&spec);
    spec.style = &st;
    spec.title = _("Loss and accuracy");
    spec.empty_text = _("Pick a task and press Start: the loss and accuracy are drawn here as the model learns.");
    if (!self->sh) {
        atn_render_train_curve(cr, &spec, width, height);
        return;
    }
    g_mutex_lock(&self->sh->lock);
    spec.x = (const float *)(void *)self->sh->x->data;
    spec.loss = (const float *)(void *)self->sh->loss->data;
    spec.accuracy = (const float *)(void *)self->sh->acc->data;
    spec.n = (int32_t)self->sh->x->len;
    spec.x_max = (float)self->sh->steps_total;
    atn_render_train_curve(cr, &spec, width, height);
    g_mutex_unlock(&self->sh->lock);
}

/* The run's curves copied out of the shared record (NULL before the first step). */
static AtnTrainCurves *dup_curves(AtnTrainView *self) {
    if (!self->sh)
        return NULL;
    g_mutex_lock(&self->sh->lock);
    TrainShared *sh = self->sh;
    guint n = sh->x->len;
    if (sh->norm_layers && sh->norms->len < n * (guint)sh->norm_layers)
        n = sh->norms->len / (guint)sh->norm_layers;
    AtnTrainCurves *c = n ? atn_train_curves_new((const float *)(void *)sh->x->data, (const float *)(void *)sh->loss->data,
                                                 (const float *)(void *)sh->acc->data,
                                                 sh->norm_layers ? (const float *)(void *)sh->norms->data : NULL,
                                                 (int32_t)n, sh->norm_layers, sh->steps_total)
                          : NULL;
    g_mutex_unlock(&self->sh->lock);
    return c;
}

static void draw_norms(GtkDrawingArea *area, cairo_t *cr, int width, int height, gpointer data) {
    AtnTrainView *self = data;
    atn_render_style st;
    atn_render_style_for_widget(GTK_WIDGET(area), self->font_scale, &st);
    AtnTrainCurves *c = dup_curves(self);
    atn_train_curves_draw_norms(cr, c, &st, width, height, _("Each layer's gradient norm, before clipping."));
    atn_train_curves_free(c);
}

static AtnFigure *dup_figure(AtnFigureSource *src) {
    AtnTrainCurves *c = dup_curves(ATN_TRAIN_VIEW(src));
    return c ? atn_figure_new(900, 380, atn_train_curves_draw_figure, c, atn_train_curves_free, "train-curves") : NULL;
}

static void figure_source_iface_init(AtnFigureSourceInterface *iface) { iface->dup_figure = dup_figure; }

static void export_done(GObject *source, GAsyncResult *res, gpointer data) {
    AtnTrainView *self = data;
    g_autoptr(GError) error = NULL;
    g_autofree char *path = atn_export_finish(res, &error);
    if (error && !g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        gtk_label_set_text(self->status, error->message);
    else if (path) {
        g_autofree char *msg = g_strdup_printf(_("Saved %s"), path);
        gtk_label_set_text(self->status, msg);
    }
    g_object_unref(self);
}

static void on_export_csv(GtkButton *b, AtnTrainView *self) {
    (void)b;
    AtnTrainCurves *c = dup_curves(self);
    if (!c)
        return;
    GtkRoot *root = gtk_widget_get_root(GTK_WIDGET(self));
    atn_export_text_async(GTK_IS_WINDOW(root) ? GTK_WINDOW(root) : NULL, atn_train_curves_csv(c),
                          _("Save the Curves as CSV"), "train-curves.csv", export_done, g_object_ref(self));
    atn_train_curves_free(c);
}

static void on_export_figure(GtkButton *b, AtnTrainView *self) {
    (void)b;
    AtnFigure *fig = dup_figure(ATN_FIGURE_SOURCE(self));
    if (!fig)
        return;
    GtkRoot *root = gtk_widget_get_root(GTK_WIDGET(self));
    atn_export_figure_async(GTK_IS_WINDOW(root) ? GTK_WINDOW(root) : NULL, fig, export_done, g_object_ref(self));
}

/* The settings every experiment's models start from: the knobs'. */
static void read_for_experiment(gpointer owner, atn_train_options *o) { atn_train_knobs_read(owner, o); }

static void on_experiments(GtkButton *b, AtnTrainView *self) {
    (void)b;
    if (!self->experiments) {
        GtkRoot *root = gtk_widget_get_root(GTK_WIDGET(self));
        self->experiments = GTK_WIDGET(
            atn_train_exp_new(GTK_IS_WINDOW(root) ? GTK_WINDOW(root) : NULL, read_for_experiment, self));
        gtk_window_set_hide_on_close(GTK_WINDOW(self->experiments), TRUE);
    }
    gtk_window_present(GTK_WINDOW(self->experiments));
}

/* Every head's map on the probe: layers as rows, heads as columns, each titled with its
 * induction score. */
static void draw_map(GtkDrawingArea *area, cairo_t *cr, int width, int height, gpointer data) {
    AtnTrainView *self = data;
    if (!self->sh)
        return;
    atn_render_style st;
    atn_render_style_for_widget(GTK_WIDGET(area), self->font_scale, &st);
    g_mutex_lock(&self->sh->lock);
    int32_t L = self->sh->layers, H = self->sh->heads, n = self->sh->n, K = self->sh->keys;
    if (!self->sh->attn || L < 1 || H < 1) {
        g_mutex_unlock(&self->sh->lock);
        return;
    }
    PangoLayout *lay = gtk_widget_create_pango_layout(GTK_WIDGET(area), NULL);
    PangoFontDescription *fd = pango_font_description_new();
    pango_font_description_set_size(fd, (int)(9 * self->font_scale * PANGO_SCALE));
    pango_layout_set_font_description(lay, fd);
    pango_font_description_free(fd);
    int lh;
    pango_layout_set_text(lay, "Lg", -1);
    pango_layout_get_pixel_size(lay, NULL, &lh);
    g_autofree char *head =
        K != n ? g_strdup_printf(_("Attention on the probe at step %d: a row per token, a column per Linformer "
                                   "key (%d, each a learned mix of every token)"),
                                 self->sh->attn_step, (int)K)
        : self->sh->induction_task
            ? g_strdup_printf(_("Attention on the probe at step %d; after each head its induction score"),
                              self->sh->attn_step)
            : g_strdup_printf(_("Attention on the probe at step %d"), self->sh->attn_step);
    cairo_set_source_rgb(cr, st.fg[0], st.fg[1], st.fg[2]);
    pango_layout_set_text(lay, head, -1);
    cairo_move_to(cr, 4, 0);
    pango_cairo_show_layout(cr, lay);
    double top = lh + 6, gap = 6;
    double cell_w = (width - 8 - gap * (H - 1)) / H, cell_h = (height - top - L * (lh + 2) - gap * (L - 1)) / L;
    double side = fmin(cell_w, cell_h);
    if (side >= 8) {
        for (int32_t l = 0; l < L; l++)
            for (int32_t h = 0; h < H; h++) {
                double x = 4 + h * (side + gap), y = top + l * (side + lh + 2 + gap);
                const float *m = self->sh->attn + ((size_t)l * H + h) * n * K;
                g_autofree char *label =
                    self->sh->induction_task && K == n
                        ? g_strdup_printf(_("L%d H%d · %.2f"), l, h, (double)self->sh->induction[l * H + h])
                        : g_strdup_printf(_("L%d H%d"), l, h);
                cairo_set_source_rgb(cr, st.fg[0], st.fg[1], st.fg[2]);
                pango_layout_set_text(lay, label, -1);
                pango_layout_set_width(lay, (int)(side * PANGO_SCALE));
                pango_layout_set_ellipsize(lay, PANGO_ELLIPSIZE_END);
                cairo_move_to(cr, x, y);
                pango_cairo_show_layout(cr, lay);
                cairo_surface_t *img = atn_render_matrix_surface(m, n, K, 0, self->cm, 0.0, 1.0, NULL);
                if (img) {   /* n x K in a square: Linformer's few columns drawn wide */
                    cairo_save(cr);
                    cairo_translate(cr, x, y + lh + 2);
                    cairo_scale(cr, side / K, side / n);
                    cairo_set_source_surface(cr, img, 0, 0);
                    cairo_pattern_set_filter(cairo_get_source(cr), CAIRO_FILTER_NEAREST);
                    cairo_rectangle(cr, 0, 0, K, n);
                    cairo_fill(cr);
                    cairo_restore(cr);
                    cairo_surface_destroy(img);
                }
            }
    }
    g_mutex_unlock(&self->sh->lock);
    g_object_unref(lay);
}

/* Start, Pause, Stop and Open above the knobs. */
static GtkWidget *build_column(AtnTrainView *self) {
    GtkWidget *box = atn_train_knobs_build(self);
    GtkWidget *buttons = gtk_flow_box_new();
    gtk_flow_box_set_selection_mode(GTK_FLOW_BOX(buttons), GTK_SELECTION_NONE);
    gtk_flow_box_set_max_children_per_line(GTK_FLOW_BOX(buttons), 4);
    gtk_flow_box_set_homogeneous(GTK_FLOW_BOX(buttons), TRUE);
    gtk_widget_set_margin_top(buttons, 6);
    self->start = gtk_button_new_with_mnemonic(_("_Start"));
    gtk_widget_add_css_class(self->start, "suggested-action");
    self->pause = gtk_button_new_with_label(_("Pause"));
    self->step = gtk_button_new_with_label(_("Step"));
    gtk_widget_set_tooltip_text(self->step, _("One optimiser step while paused; the curves and the maps are redrawn"));
    self->stop = gtk_button_new_with_label(_("Stop"));
    gtk_flow_box_append(GTK_FLOW_BOX(buttons), self->start);
    gtk_flow_box_append(GTK_FLOW_BOX(buttons), self->pause);
    gtk_flow_box_append(GTK_FLOW_BOX(buttons), self->step);
    gtk_flow_box_append(GTK_FLOW_BOX(buttons), self->stop);
    self->open = gtk_button_new_with_mnemonic(_("_Open in attnscope"));
    g_hash_table_insert(self->controls, (gpointer) "start", self->start);
    g_hash_table_insert(self->controls, (gpointer) "pause", self->pause);
    g_hash_table_insert(self->controls, (gpointer) "step", self->step);
    g_hash_table_insert(self->controls, (gpointer) "stop", self->stop);
    g_hash_table_insert(self->controls, (gpointer) "open", self->open);
    g_signal_connect(self->start, "clicked", G_CALLBACK(on_start), self);
    g_signal_connect(self->pause, "clicked", G_CALLBACK(on_pause), self);
    g_signal_connect(self->step, "clicked", G_CALLBACK(on_step), self);
    g_signal_connect(self->stop, "clicked", G_CALLBACK(on_stop), self);
    g_signal_connect(self->open, "clicked", G_CALLBACK(on_open), self);

    GtkWidget *scroll = gtk_scrolled_window_new();
    gtk_scrolled_window_set_policy(GTK_SCROLLED_WINDOW(scroll), GTK_POLICY_NEVER, GTK_POLICY_AUTOMATIC);
    gtk_scrolled_window_set_child(GTK_SCROLLED_WINDOW(scroll), box);
    gtk_scrolled_window_set_propagate_natural_width(GTK_SCROLLED_WINDOW(scroll), TRUE);
    gtk_widget_set_vexpand(scroll, TRUE);
    /* Start, Pause, Stop and Open above the knobs, never scrolled away */
    GtkWidget *column = gtk_box_new(GTK_ORIENTATION_VERTICAL, 4);
    gtk_widget_set_margin_start(buttons, 10);
    gtk_widget_set_margin_end(buttons, 10);
    gtk_widget_set_margin_start(self->open, 14);
    gtk_widget_set_margin_end(self->open, 14);
    gtk_box_append(GTK_BOX(column), buttons);
    gtk_box_append(GTK_BOX(column), self->open);
    gtk_box_append(GTK_BOX(column), scroll);
    return column;
}

/* ---- the widget ---------------------------------------------------------------------------- */

static void atn_train_view_init(AtnTrainView *self) {
    self->cm = ATN_CMAP_VIRIDIS;
    self->font_scale = 1.0;
    self->controls = g_hash_table_new(g_str_hash, g_str_equal);
    self->text_paths = g_ptr_array_new_with_free_func(g_free);
    GtkWidget *knobs = build_column(self);
    GtkWidget *right = gtk_box_new(GTK_ORIENTATION_VERTICAL, 6);
    gtk_widget_set_margin_start(right, 6);
    gtk_widget_set_margin_end(right, 10);
    gtk_widget_set_margin_top(right, 6);
    gtk_widget_set_margin_bottom(right, 6);
    self->status = GTK_LABEL(gtk_label_new(_("Not trained yet.")));
    gtk_label_set_xalign(self->status, 0);
    gtk_label_set_wrap(self->status, TRUE);
    gtk_widget_set_hexpand(GTK_WIDGET(self->status), TRUE);
    GtkWidget *top = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 6);
    gtk_box_append(GTK_BOX(top), GTK_WIDGET(self->status));
    GtkWidget *csv = gtk_button_new_with_mnemonic(_("Save _CSV…"));
    GtkWidget *fig = gtk_button_new_with_mnemonic(_("Save _Figure…"));
    gtk_widget_set_tooltip_text(csv, _("The loss, accuracy and each layer's gradient norm at every step"));
    gtk_widget_set_tooltip_text(fig, _("The curves as PNG, SVG or PDF"));
    g_signal_connect(csv, "clicked", G_CALLBACK(on_export_csv), self);
    g_signal_connect(fig, "clicked", G_CALLBACK(on_export_figure), self);
    /* under Open, above the knobs: beside the status they made the curves' column 771 px wide at
       text size 2.0 and the window's minimum 1658 px (over 1366); the knobs' column has room */
    GtkWidget *exports = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 6);
    gtk_widget_set_halign(exports, GTK_ALIGN_CENTER);
    gtk_widget_set_margin_start(exports, 10);
    gtk_widget_set_margin_end(exports, 10);
    gtk_box_append(GTK_BOX(exports), csv);
    gtk_box_append(GTK_BOX(exports), fig);
    /* the experiments of attnscope train, one button each, in a window of their own */
    GtkWidget *exp = gtk_button_new_with_mnemonic(_("_Experiments…"));
    gtk_widget_set_tooltip_text(exp, _("Sweep one knob over several seeds, train short and test long, Post-LN vs "
                                       "Pre-LN gradient norms: each a figure with error bars"));
    gtk_widget_set_halign(exp, GTK_ALIGN_CENTER);
    g_signal_connect(exp, "clicked", G_CALLBACK(on_experiments), self);
    gtk_box_insert_child_after(GTK_BOX(knobs), exports, self->open);
    /* at the top of the scrolled knobs: above them it made the window 7 px taller than a
       1280x720 screen in Chinese at text size 2.0 */
    GtkWidget *viewport = gtk_scrolled_window_get_child(GTK_SCROLLED_WINDOW(gtk_widget_get_last_child(knobs)));
    gtk_widget_set_margin_top(exp, 4);
    gtk_box_prepend(GTK_BOX(gtk_viewport_get_child(GTK_VIEWPORT(viewport))), exp);
    gtk_box_append(GTK_BOX(right), top);
    /* the curves and, beside them, each layer's gradient norm */
    GtkWidget *plots = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 6);
    gtk_widget_set_vexpand(plots, TRUE);
    self->curve = gtk_drawing_area_new();
    gtk_widget_set_hexpand(self->curve, TRUE);
    /* 140 and 120 px at least: with 200 and 160 the page beside the knobs (541 px at text size
       2.0) made the window 958 px wide, over a 900 px one */
    gtk_widget_set_size_request(self->curve, 140, 160);
    gtk_drawing_area_set_draw_func(GTK_DRAWING_AREA(self->curve), draw_curve, self, NULL);
    gtk_box_append(GTK_BOX(plots), self->curve);
    self->norms = gtk_drawing_area_new();
    gtk_widget_set_hexpand(self->norms, TRUE);
    gtk_widget_set_size_request(self->norms, 120, 160);
    gtk_drawing_area_set_draw_func(GTK_DRAWING_AREA(self->norms), draw_norms, self, NULL);
    gtk_box_append(GTK_BOX(plots), self->norms);
    gtk_box_append(GTK_BOX(right), plots);
    self->map = gtk_drawing_area_new();
    gtk_widget_set_vexpand(self->map, TRUE);
    gtk_widget_set_size_request(self->map, 200, 160);
    gtk_drawing_area_set_draw_func(GTK_DRAWING_AREA(self->map), draw_map, self, NULL);
    gtk_box_append(GTK_BOX(right), self->map);
    self->probe_label = GTK_LABEL(gtk_label_new(""));
    gtk_label_set_xalign(self->probe_label, 0);
    gtk_label_set_wrap(self->probe_label, TRUE);
    gtk_label_set_wrap_mode(self->probe_label, PANGO_WRAP_WORD_CHAR);
    gtk_widget_add_css_class(GTK_WIDGET(self->probe_label), "dim-label");
    gtk_box_append(GTK_BOX(right), GTK_WIDGET(self->probe_label));
    g_hash_table_insert(self->controls, (gpointer) "status", self->status);
    g_hash_table_insert(self->controls, (gpointer) "curve", self->curve);
    g_hash_table_insert(self->controls, (gpointer) "grad-norms", self->norms);
    g_hash_table_insert(self->controls, (gpointer) "save-csv", csv);
    g_hash_table_insert(self->controls, (gpointer) "save-figure", fig);
    g_hash_table_insert(self->controls, (gpointer) "experiments", exp);
    g_hash_table_insert(self->controls, (gpointer) "heads-map", self->map);

    self->paned = gtk_paned_new(GTK_ORIENTATION_HORIZONTAL);
    gtk_paned_set_start_child(GTK_PANED(self->paned), knobs);
    gtk_paned_set_end_child(GTK_PANED(self->paned), right);
    gtk_paned_set_resize_start_child(GTK_PANED(self->paned), FALSE);
    gtk_paned_set_shrink_start_child(GTK_PANED(self->paned), FALSE);
    gtk_paned_set_shrink_end_child(GTK_PANED(self->paned), FALSE);
    gtk_widget_set_parent(self->paned, GTK_WIDGET(self));
    update_buttons(self);
}

/* Stops the run for good: its answer will be dropped and the worker frees its model at its
 * next step. */
static void cancel_all(AtnTrainView *self) {
    if (self->sh) {
        g_atomic_int_set(&self->sh->stop, 1);
        g_atomic_int_set(&self->sh->paused, 0);
    }
    atn_worker_cancel(&self->train_slot);
    atn_worker_cancel(&self->save_slot);
    stop_poll(self);
}

/* The Experiments window goes with the page (its command killed if it still runs). */
static void close_experiments(AtnTrainView *self) {
    if (self->experiments)
        gtk_window_destroy(GTK_WINDOW(self->experiments));
    self->experiments = NULL;
}

static void atn_train_view_unroot(GtkWidget *w) {
    cancel_all(ATN_TRAIN_VIEW(w));
    GTK_WIDGET_CLASS(atn_train_view_parent_class)->unroot(w);
}

static void atn_train_view_dispose(GObject *object) {
    AtnTrainView *self = ATN_TRAIN_VIEW(object);
    cancel_all(self);
    close_experiments(self);
    g_clear_pointer(&self->paned, gtk_widget_unparent);
    g_clear_object(&self->session);
    G_OBJECT_CLASS(atn_train_view_parent_class)->dispose(object);
}

static void atn_train_view_finalize(GObject *object) {
    AtnTrainView *self = ATN_TRAIN_VIEW(object);
    atn_trainer_free(self->trainer);
    if (self->sh)
        shared_unref(self->sh);
    g_hash_table_unref(self->controls);
    g_ptr_array_unref(self->text_paths);
    g_free(self->saved_dir);
    G_OBJECT_CLASS(atn_train_view_parent_class)->finalize(object);
}

static void atn_train_view_class_init(AtnTrainViewClass *klass) {
    G_OBJECT_CLASS(klass)->dispose = atn_train_view_dispose;
    G_OBJECT_CLASS(klass)->finalize = atn_train_view_finalize;
    GTK_WIDGET_CLASS(klass)->unroot = atn_train_view_unroot;
    gtk_widget_class_set_layout_manager_type(GTK_WIDGET_CLASS(klass), GTK_TYPE_BIN_LAYOUT);
}

GtkWidget *atn_train_view_new(void) { return g_object_new(ATN_TYPE_TRAIN_VIEW, NULL); }

static void view_set_session(AtnView *view, AtnSession *session) {
    AtnTrainView *self = ATN_TRAIN_VIEW(view);
    g_set_object(&self->session, session);
    update_buttons(self);
}
static void view_set_colormap(AtnView *view, atn_colormap cm) {
    AtnTrainView *self = ATN_TRAIN_VIEW(view);
    self->cm = cm;
    gtk_widget_queue_draw(self->map);
}
static void view_set_font_scale(AtnView *view, double scale) {
    AtnTrainView *self = ATN_TRAIN_VIEW(view);
    self->font_scale = scale;
    gtk_widget_queue_draw(self->curve);
    gtk_widget_queue_draw(self->norms);
    gtk_widget_queue_draw(self->map);
}
static AtnViewExport view_get_export(AtnView *view) {
    (void)view;
    return ATN_VIEW_EXPORT_FIGURE;   /* the curves (dup_figure; "nothing yet" before a step) */
}

ATN_VIEW_REGISTER(atn_train_view)

static void view_iface_init(AtnViewInterface *iface) {
    iface->set_session = view_set_session;
    iface->set_colormap = view_set_colormap;
    iface->set_font_scale = view_set_font_scale;
    iface->get_export = view_get_export;
}

/* ---- for the tests -------------------------------------------------------------------------- */

GtkWidget *atn_train_view_get_control(AtnTrainView *self, const char *name) {
    g_return_val_if_fail(ATN_IS_TRAIN_VIEW(self), NULL);
    return control(self, name);
}

gboolean atn_train_view_get_running(AtnTrainView *self) {
    g_return_val_if_fail(ATN_IS_TRAIN_VIEW(self), FALSE);
    return self->train_slot != NULL;
}

static float mean_of(GArray *a, guint from, guint to) {
    double s = 0;
    for (guint i = from; i < to; i++)
        s += g_array_index(a, float, i);
    return to > from ? (float)(s / (to - from)) : NAN;
}

gboolean atn_train_view_get_progress(AtnTrainView *self, int window, int *steps, float *first_loss,
                                     float *last_loss, float *last_accuracy) {
    g_return_val_if_fail(ATN_IS_TRAIN_VIEW(self), FALSE);
    if (!self->sh)
        return FALSE;
    g_mutex_lock(&self->sh->lock);
    guint n = self->sh->x->len, w = (guint)MAX(1, window);
    if (n) {
        *steps = (int)n;
        *first_loss = mean_of(self->sh->loss, 0, MIN(w, n));
        *last_loss = mean_of(self->sh->loss, n > w ? n - w : 0, n);
        *last_accuracy = mean_of(self->sh->acc, n > w ? n - w : 0, n);
    }
    g_mutex_unlock(&self->sh->lock);
    return n > 0;
}

float atn_train_view_get_best_induction(AtnTrainView *self) {
    g_return_val_if_fail(ATN_IS_TRAIN_VIEW(self), 0);
    return self->best_induction;
}
gboolean atn_train_view_get_map_shape(AtnTrainView *self, int *rows, int *cols) {
    g_return_val_if_fail(ATN_IS_TRAIN_VIEW(self), FALSE);
    if (!self->sh)
        return FALSE;
    g_mutex_lock(&self->sh->lock);
    gboolean any = self->sh->attn != NULL;
    *rows = self->sh->n, *cols = self->sh->keys;
    g_mutex_unlock(&self->sh->lock);
    return any;
}
const char *atn_train_view_get_saved_dir(AtnTrainView *self) {
    g_return_val_if_fail(ATN_IS_TRAIN_VIEW(self), NULL);
    return self->saved_dir;
}
gboolean atn_train_view_get_saving(AtnTrainView *self) {
    g_return_val_if_fail(ATN_IS_TRAIN_VIEW(self), FALSE);
    return self->save_slot != NULL || self->saving_paused;
}
char *atn_train_view_dup_curves_csv(AtnTrainView *self) {
    g_return_val_if_fail(ATN_IS_TRAIN_VIEW(self), NULL);
    AtnTrainCurves *c = dup_curves(self);
    char *csv = c ? atn_train_curves_csv(c) : NULL;
    atn_train_curves_free(c);
    return csv;
}

int atn_train_view_get_map_step(AtnTrainView *self) {
    g_return_val_if_fail(ATN_IS_TRAIN_VIEW(self), 0);
    if (!self->sh)
        return 0;
    g_mutex_lock(&self->sh->lock);
    int step = self->sh->attn_step;
    g_mutex_unlock(&self->sh->lock);
    return step;
}

gboolean atn_train_view_get_waiting(AtnTrainView *self) {
    g_return_val_if_fail(ATN_IS_TRAIN_VIEW(self), FALSE);
    return self->sh && self->train_slot && g_atomic_int_get(&self->sh->waiting);
}

GtkWidget *atn_train_view_get_experiments(AtnTrainView *self) {
    g_return_val_if_fail(ATN_IS_TRAIN_VIEW(self), NULL);
    return self->experiments;
}

int atn_train_view_get_live_workers(void) { return g_atomic_int_get(&live_workers); }

void atn_train_view_set_text_file(AtnTrainView *self, const char *path) {
    g_return_if_fail(ATN_IS_TRAIN_VIEW(self) && path);
    atn_train_knobs_set_text_file(self, path);
}
