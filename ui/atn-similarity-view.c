/* AtnSimilarityView: the Similarity page; the matrix is computed off the main thread. */
#include "atn-similarity-view.h"
#include "atn-similarity-view-test.h"

#include "atn-view.h"
#include "atn-wrap-box.h"

#include <glib/gi18n.h>
#include <math.h>

#include "atn-corpus-pass.h"
#include "atn-encdec.h"
#include "atn-figure.h"
#include "atn-fit-label.h"
#include "atn-heatmap.h"
#include "atn-labels.h"
#include "atn-session.h"
#include "atn-worker.h"

struct _AtnSimilarityView {
    GtkWidget parent_instance;
    GtkWidget *box;
    GtkDropDown *metric_drop, *scope_drop;
    GtkCheckButton *cluster_check;
    GtkCheckButton *kv_check;  /* "By K/V group": shown for a grouped-query model only */
    GtkSpinner *spinner;
    GtkButton *corpus_button, *sentence_button, *corpus_cancel_button;
    GtkProgressBar *corpus_bar;
    AtnFitLabel *info_label;   /* what the matrix covers: fitted into the controls row */
    GtkLabel *pair_label;
    AtnSimilarityMap *map;
    GtkStack *pair_stack;
    GtkWidget *pair_pane;      /* the paned's end child: shown once a pair is picked */
    GtkLabel *hint_label;      /* "Click a cell…", under the matrix while no pair is shown */
    AtnHeatmap *heat_a, *heat_b, *heat_diff;

    AtnSession *session;
    gboolean dirty;
    GCancellable *cancel;      /* the computation in flight */
    float *diff;               /* [n][n] head a - head b */
    AtnResult *pair_result;    /* the result the pair heatmaps show */
    int pair_a, pair_b;
    char *corpus_path;         /* corpus mode: the matrix averages this file; NULL: the sentence */
    char *corpus_error;        /* why the last corpus failed, said with the sentence's matrix */
    char *covered;             /* what the shown corpus matrix covers (said again on a K/V toggle) */
    gint corpus_permille;      /* the corpus pass's progress, written by its worker */
    guint corpus_poll_id;
    struct sim_job *sim_job;   /* the sentence's comparison in flight (owned by its task), or NULL */
    gboolean shown_once;       /* the view has been shown: new results are compared while hidden */
    gboolean prefetching;      /* the comparison in flight started while the view was hidden */
    guint n_prefetched;        /* comparisons started while hidden (tests) */
    guint sim_poll_id;         /* reads its progress into corpus_bar, ten times a second */
    GtkPaned *paned;
    gboolean paned_by_user;    /* the divider was dragged: keep it where it was put */
    gboolean paned_setting;
};

static void figure_source_iface_init(AtnFigureSourceInterface *iface);
static void view_iface_init(AtnViewInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE(AtnSimilarityView, atn_similarity_view, GTK_TYPE_WIDGET,
                              G_IMPLEMENT_INTERFACE(ATN_TYPE_FIGURE_SOURCE, figure_source_iface_init)
                              G_IMPLEMENT_INTERFACE(ATN_TYPE_VIEW, view_iface_init))

static void show_similarity(AtnSimilarityView *self, atn_similarity *sim, const char *covered);
static void set_info(AtnSimilarityView *self, const char *text) {
    atn_fit_label_set_text(self->info_label, text, NULL);
}


typedef struct sim_job {
    AtnResult *result;
    atn_metric metric;
    atn_scope scope;
    int layer;
    int stack;                   /* an encoder-decoder's stack (atn_stack_kind); ENCODER for any other model */
    GCancellable *cancellable;   /* the task's (not owned) */
    gint permille;               /* written by the worker: pairs compared, 0..1000 */
} sim_job;

static void sim_job_free(sim_job *job) {
    g_clear_object(&job->result);
    g_free(job);
}

/* The engine asks this between head pairs: a newer text or option stops the old comparison. */
static bool keep_going(double fraction, atn_stage stage, void *data) {
    sim_job *job = data;
    g_atomic_int_set(&job->permille, (gint)(CLAMP(fraction, 0.0, 1.0) * 1000 + 0.5));
    return !g_cancellable_is_cancelled(job->cancellable);
}

/* The worker (at nice 10: the main thread comes first). */
static gpointer sim_work(gpointer data, GCancellable *cancellable, GError **error) {
    sim_job *job = data;
    job->cancellable = cancellable;
    atn_similarity *sim = NULL;
    atn_error err = {0};
    atn_status st = atn_similarity_compute_stack(atn_result_get_capture(job->result), (atn_stack_kind)job->stack,
                                                 job->metric, job->scope, job->layer, keep_going, job, &sim, &err);
    if (st != ATN_OK)
        g_set_error(error, G_IO_ERROR, st == ATN_E_CANCELLED ? G_IO_ERROR_CANCELLED : G_IO_ERROR_FAILED, "%s",
                    err.message);
    return st == ATN_OK ? sim : NULL;
}

/* No pair: the matrix takes the whole width (at Text size 2.0 the empty pair pane took 45% of
 * it and the matrix was ~115 px) and one line under it says how to pick a pair. */
static void show_hint(AtnSimilarityView *self) {
    gtk_widget_set_visible(self->pair_pane, FALSE);
    gtk_widget_set_visible(GTK_WIDGET(self->hint_label), TRUE);
    atn_heatmap_set_matrix(self->heat_a, NULL, NULL, 0, 0, NULL, NULL, NULL);
    atn_heatmap_set_matrix(self->heat_b, NULL, NULL, 0, 0, NULL, NULL, NULL);
    atn_heatmap_set_matrix(self->heat_diff, NULL, NULL, 0, 0, NULL, NULL, NULL);
    g_clear_pointer(&self->diff, g_free);
    g_clear_object(&self->pair_result);
}

/* The sentence's comparison shows its progress in the bar (a redraw ten times a second),
 * not the spinner (a redraw every frame, taken from the worker on a small machine). */
static gboolean sim_poll_cb(gpointer user_data) {
    AtnSimilarityView *self = user_data;
    if (self->sim_job) {
        gtk_widget_set_visible(GTK_WIDGET(self->corpus_bar), TRUE);
        gtk_progress_bar_set_fraction(self->corpus_bar, g_atomic_int_get(&self->sim_job->permille) / 1000.0);
    }
    return G_SOURCE_CONTINUE;
}

static void stop_sim_progress(AtnSimilarityView *self) {
    if (self->sim_job && !self->corpus_poll_id)
        gtk_widget_set_visible(GTK_WIDGET(self->corpus_bar), FALSE);
    self->sim_job = NULL;
    g_clear_handle_id(&self->sim_poll_id, g_source_remove);
}

/* The comparison still awaited (atn_worker: self->cancel already cleared); takes sim. */
static void sim_done(gpointer owner, gpointer answer, const GError *error, gpointer data) {
    AtnSimilarityView *self = ATN_SIMILARITY_VIEW(owner);
    atn_similarity *sim = answer;
    stop_sim_progress(self);
    if (!sim) {
        set_info(self, error->message);
        return;
    }
    show_similarity(self, sim, NULL);
}

static void recompute(AtnSimilarityView *self);
static void mark_dirty(AtnSimilarityView *self);
static void reset_hint(AtnSimilarityView *self);

static void show_corpus_busy(AtnSimilarityView *self, gboolean busy) {
    gtk_widget_set_visible(GTK_WIDGET(self->corpus_bar), busy);
    gtk_widget_set_visible(GTK_WIDGET(self->corpus_cancel_button), busy);
    gtk_widget_set_sensitive(GTK_WIDGET(self->corpus_button), !busy);
    gtk_widget_set_visible(GTK_WIDGET(self->sentence_button), self->corpus_path != NULL);
    if (!busy)
        g_clear_handle_id(&self->corpus_poll_id, g_source_remove);
}

static gboolean corpus_poll_cb(gpointer user_data) {
    AtnSimilarityView *self = user_data;
    gtk_progress_bar_set_fraction(self->corpus_bar, g_atomic_int_get(&self->corpus_permille) / 1000.0);
    return G_SOURCE_CONTINUE;
}

/* The K/V heads per layer of the model whose heads the matrix compares: 0 when its query heads
 * do not share K/V heads in groups (or an encoder-decoder's, or no result). */
static int kv_heads_of(AtnSimilarityView *self) {
    AtnResult *r = self->session ? atn_session_get_result(self->session) : NULL;
    const atn_capture *cap = r ? atn_result_get_capture(r) : NULL;
    if (!cap || atn_result_is_encdec(r) || cap->n_kv_heads <= 0 || cap->n_kv_heads >= cap->n_heads ||
        cap->n_heads % cap->n_kv_heads)
        return 0;
    return cap->n_kv_heads;
}

/* What the groups' matrix says in one line: how many groups, the within and between means. */
static char *groups_info(const atn_kv_groups *g, atn_metric metric) {
    g_autofree char *between = isnan(g->between) ? g_strdup(_("one group per layer")) : g_strdup_printf("%.4f", g->between);
    /* Translators: "2 K/V groups of 2 heads · mean within a group 0.1234 · between groups 0.5678" */
    return g_strdup_printf(_("%d K/V groups of %d heads · mean within a group %.4f · between groups %s"), g->count,
                           g->per_group, g->within, between);
}

/* The map's groups as the check says: the groups of the similarity it shows, or none. */
static void apply_groups(AtnSimilarityView *self) {
    const atn_similarity *sim = atn_similarity_map_get_similarity(self->map);
    int kv = kv_heads_of(self);
    atn_kv_groups *g = NULL;
    atn_error err = {0};
    if (sim && kv > 0 && gtk_check_button_get_active(self->kv_check) && sim->n_heads % kv == 0 &&
        atn_similarity_by_kv_group(sim, kv, &g, &err) != ATN_OK)
        g = NULL;   /* cannot happen for a finished similarity of this model (or out of memory) */
    atn_similarity_map_set_kv_groups(self->map, g);
    /* the groups stay in their order, K/V head by K/V head */
    gtk_widget_set_sensitive(GTK_WIDGET(self->cluster_check), g == NULL);
}

/* The line beside the controls for the matrix shown: before (what a corpus covered, or why it
 * failed; NULL: nothing), then the heads' count and what the values mean, or the K/V groups'
 * means. */
static void show_info(AtnSimilarityView *self, const char *before) {
    const atn_similarity *sim = atn_similarity_map_get_similarity(self->map);
    if (!sim)
        return;
    gboolean distance = atn_metric_is_distance(sim->metric);
    g_autofree char *info = g_strdup_printf(distance ? _("%d heads · 0 = identical, 1 = nothing in common")
                                                     : _("%d heads · 1 = identical"),
                                            sim->count);
    /* Translators: "%d heads · 0 = identical, 1 = nothing in common" in fewer words, for a narrow window
       (a Jensen-Shannon distance of 1: the two heads never attend to the same key) */
    g_autofree char *brief = g_strdup_printf(distance ? _("%d heads · 0 = same, 1 = disjoint") : _("%d heads · 1 = identical"),
                                             sim->count);
    const atn_kv_groups *groups = atn_similarity_map_get_kv_groups(self->map);
    if (groups) {   /* the groups' figures in place of the heads' count */
        g_free(info);
        info = groups_info(groups, sim->metric);
        g_free(brief);
        brief = g_strdup(info);
    }
    g_autofree char *text = before ? g_strconcat(before, " · ", info, NULL) : g_strdup(info);
    g_autofree char *shorter0 = before ? g_strconcat(before, " · ", brief, NULL) : g_strdup(brief);
    g_auto(GStrv) parts = g_strsplit(shorter0, " = ", -1);
    g_autofree char *shorter = g_strjoinv("\u00a0=\u00a0", parts);   /* wraps as "0 = same," not "0 = / same" */
    atn_fit_label_set_text(self->info_label, text, (const char *const[]){shorter, NULL});
}

static void show_similarity(AtnSimilarityView *self, atn_similarity *sim, const char *covered) {
    atn_similarity_map_set_similarity(self->map, sim);
    apply_groups(self);
    show_hint(self);
    reset_hint(self);
    g_free(self->covered);
    self->covered = g_strdup(covered);
    show_info(self, covered ? covered : self->corpus_error);
    g_clear_pointer(&self->corpus_error, g_free);
}

static atn_status add_to_similarity(const atn_capture *cap, gpointer sim, atn_error *err) {
    return atn_similarity_add(sim, cap, err);
}

static bool keep_going_sim(double fraction, atn_stage stage, void *cancellable) {
    return !g_cancellable_is_cancelled(cancellable);
}

static void corpus_done(GObject *source, GAsyncResult *res, gpointer data) {
    AtnSimilarityView *self = ATN_SIMILARITY_VIEW(source);
    atn_similarity *sim = data;
    g_autoptr(GError) error = NULL;
    atn_corpus_report report;
    gboolean ok = atn_corpus_pass_finish(res, &report, &error);
    if (g_task_get_cancellable(G_TASK(res)) != self->cancel) {   /* superseded */
        atn_similarity_free(sim);
        return;
    }
    g_clear_object(&self->cancel);
    gtk_spinner_set_spinning(self->spinner, FALSE);
    atn_error err = {0};
    if (ok && atn_similarity_finish(sim, &err) != ATN_OK) {
        g_set_error(&error, G_IO_ERROR, G_IO_ERROR_FAILED, "%s", err.message);
        ok = FALSE;
    }
    if (!ok) {
        atn_similarity_free(sim);
        g_free(self->corpus_error);
        self->corpus_error = g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED) ? NULL
                                                                                     : g_strdup(error->message);
        g_clear_pointer(&self->corpus_path, g_free);   /* back to the sentence */
        show_corpus_busy(self, FALSE);
        mark_dirty(self);
        return;
    }
    show_corpus_busy(self, FALSE);
    g_autofree char *covered = atn_corpus_pass_describe(self->corpus_path, &report);
    show_similarity(self, sim, covered);
}

static void recompute(AtnSimilarityView *self) {
    AtnResult *r = self->session ? atn_session_get_result(self->session) : NULL;
    if (self->cancel)
        g_cancellable_cancel(self->cancel);
    g_clear_object(&self->cancel);
    stop_sim_progress(self);
    self->dirty = FALSE;
    self->prefetching = FALSE;
    if (!r) {
        atn_similarity_map_set_similarity(self->map, NULL);
        return;
    }
    atn_metric metric = (atn_metric)gtk_drop_down_get_selected(self->metric_drop);
    atn_scope scope = (atn_scope)gtk_drop_down_get_selected(self->scope_drop);
    int layer = atn_session_get_layer(self->session);
    if (self->corpus_path) {
        self->cancel = g_cancellable_new();
        gtk_spinner_set_spinning(self->spinner, TRUE);
        AtnModelHandle *m = atn_result_get_model(r);
        atn_error err = {0};
        atn_similarity *sim = atn_similarity_new(atn_result_get_n_layers(r), atn_result_get_n_heads(r), metric,
                                                 scope, layer, &err);
        if (!sim) {
            set_info(self, err.message);
            return;
        }
        atn_similarity_set_progress(sim, keep_going_sim, self->cancel);
        g_autofree char *base = g_path_get_basename(self->corpus_path);
        g_autofree char *text = g_strdup_printf(_("Reading “%s”…"), base);
        set_info(self, text);
        gtk_progress_bar_set_fraction(self->corpus_bar, 0);
        show_corpus_busy(self, TRUE);
        if (!self->corpus_poll_id)
            self->corpus_poll_id = g_timeout_add(100, corpus_poll_cb, self);
        atn_device dev = atn_session_get_device(self->session) == ATN_DEVICE_CPU ? ATN_DEVICE_CPU : ATN_DEVICE_AUTO;
        atn_corpus_pass_async(G_OBJECT(self), m, self->corpus_path, dev, NULL, add_to_similarity, sim,
                              &self->corpus_permille, self->cancel, corpus_done, sim);
        return;
    }
    sim_job *job = g_new0(sim_job, 1);
    job->result = g_object_ref(r);
    job->metric = metric;
    job->scope = scope;
    job->layer = layer;
    job->stack = atn_encdec_view_stack(r, atn_session_get_stack(self->session));
    self->sim_job = job;
    self->sim_poll_id = g_timeout_add(100, sim_poll_cb, self);
    atn_worker_start_fallible(self, &self->cancel, ATN_WORKER_NICE | ATN_WORKER_TAKE, NULL, sim_work, job,
                              (GDestroyNotify)sim_job_free, (GDestroyNotify)atn_similarity_free, sim_done);
    set_info(self, _("Comparing the heads…"));
}

/* Recomputes now when shown, else when next shown. */
static void mark_dirty(AtnSimilarityView *self) {
    self->dirty = TRUE;
    if (gtk_widget_get_mapped(GTK_WIDGET(self)))
        recompute(self);
}

/* The line under the matrix: how to pick a pair (of heads, or of K/V groups), or which of an
 * encoder-decoder's heads these are. */
static void reset_hint(AtnSimilarityView *self) {
    AtnResult *r = self->session ? atn_session_get_result(self->session) : NULL;
    /* a corpus has no targets: its matrix is the encoder's */
    int kind = self->corpus_path || !r ? ATN_STACK_ENCODER : atn_encdec_view_stack(r, atn_session_get_stack(self->session));
    const char *note = atn_result_is_encdec(r) ? atn_encdec_heads_note(kind) : NULL;
    if (!note && atn_similarity_map_get_kv_groups(self->map))
        gtk_label_set_text(self->hint_label, _("Click a cell for the mean over the pairs of heads of two groups."));
    else
        gtk_label_set_text(self->hint_label, note ? note : _("Click a cell to compare its two heads side by side."));
    gtk_widget_set_tooltip_text(GTK_WIDGET(self->hint_label), note);
}

/* A corpus's matrix does not depend on the sentence.  Once the view has been used, a new
 * result is compared at once, in the worker, even while the view is hidden, so that a switch
 * to it finds the matrix made (or on its way) instead of starting the comparison then: at 512
 * tokens that took 250-330 ms of a switch (docs/PERFORMANCE.md, "View switches").  The next
 * run cancels a comparison made ahead (the two cores go to the forward). */
static void on_result(AtnSession *s, GParamSpec *p, AtnSimilarityView *self) {
    reset_hint(self);
    gtk_widget_set_visible(GTK_WIDGET(self->kv_check), kv_heads_of(self) > 0);
    if (self->corpus_path)
        return;
    mark_dirty(self);
    if (self->dirty && self->shown_once && atn_session_get_result(s)) {
        recompute(self);
        self->prefetching = self->cancel != NULL;
        self->n_prefetched += self->prefetching;
    }
}

static void on_busy(AtnSession *s, GParamSpec *p, AtnSimilarityView *self) {
    if (!atn_session_get_busy(s) || !self->prefetching || !self->cancel)
        return;
    g_cancellable_cancel(self->cancel);
    g_clear_object(&self->cancel);
    stop_sim_progress(self);
    self->prefetching = FALSE;
    self->dirty = TRUE;   /* compared when shown, if no newer result comes first */
}

void atn_similarity_view_load_corpus(AtnSimilarityView *self, const char *path) {
    g_return_if_fail(ATN_IS_SIMILARITY_VIEW(self));
    AtnResult *r = self->session ? atn_session_get_result(self->session) : NULL;
    if (!r || !path)
        return;
    if (!atn_result_has_weights(r)) {
        set_info(self, _("An attention file has no tokenizer or weights: a corpus needs a model (the demo model "
                         "or a Hugging Face folder)."));
        return;
    }
    if (atn_model_handle_is_toy(atn_result_get_model(r))) {
        set_info(self, _("A toy model reads its own tokens: a corpus needs a model with a "
                                               "tokenizer (the demo model or a Hugging Face folder)."));
        return;
    }
    g_free(self->corpus_path);
    self->corpus_path = g_strdup(path);
    recompute(self);
}

void atn_similarity_view_show_sentence(AtnSimilarityView *self) {
    g_return_if_fail(ATN_IS_SIMILARITY_VIEW(self));
    if (self->cancel)
        g_cancellable_cancel(self->cancel);
    g_clear_object(&self->cancel);
    g_clear_pointer(&self->corpus_path, g_free);
    show_corpus_busy(self, FALSE);
    mark_dirty(self);
}

void atn_similarity_view_cancel(AtnSimilarityView *self) {
    g_return_if_fail(ATN_IS_SIMILARITY_VIEW(self));
    if (self->cancel)
        g_cancellable_cancel(self->cancel);
}

const char *atn_similarity_view_get_info(AtnSimilarityView *self) {
    g_return_val_if_fail(ATN_IS_SIMILARITY_VIEW(self), NULL);
    return atn_fit_label_get_text(self->info_label);
}

static void load_chosen(GtkWidget *self, const char *path) { atn_similarity_view_load_corpus(ATN_SIMILARITY_VIEW(self), path); }

static void on_corpus_clicked(GtkButton *b, AtnSimilarityView *self) { atn_corpus_choose_file(GTK_WIDGET(self), load_chosen); }

static void on_sentence_clicked(GtkButton *b, AtnSimilarityView *self) { atn_similarity_view_show_sentence(self); }
static void on_corpus_cancel_clicked(GtkButton *b, AtnSimilarityView *self) { atn_similarity_view_cancel(self); }

/* a corpus belongs to the model it was read with */
static void on_model(AtnSession *s, GParamSpec *p, AtnSimilarityView *self) {
    if (self->corpus_path)
        atn_similarity_view_show_sentence(self);
}

static void on_layer(AtnSession *s, GParamSpec *p, AtnSimilarityView *self) {
    if (gtk_drop_down_get_selected(self->scope_drop) == ATN_SCOPE_LAYER)
        mark_dirty(self);
}

static void on_option_changed(GObject *o, GParamSpec *p, AtnSimilarityView *self) { mark_dirty(self); }

/* an encoder-decoder's stack picked (Head or Model view): its heads are compared */
static void on_stack(AtnSession *s, GParamSpec *p, AtnSimilarityView *self) {
    if (!atn_result_is_encdec(atn_session_get_result(s)) || self->corpus_path)
        return;
    on_result(s, p, self);
}

/* "By K/V group": the same similarity, gathered by group or not (nothing recomputed). */
static void on_kv_toggled(GtkCheckButton *b, AtnSimilarityView *self) {
    apply_groups(self);
    show_hint(self);
    reset_hint(self);
    show_info(self, self->covered);
}

static void on_cluster_toggled(GtkCheckButton *b, AtnSimilarityView *self) {
    atn_similarity_map_set_clustered(self->map, gtk_check_button_get_active(b));
}

static void atn_similarity_view_map(GtkWidget *widget) {
    GTK_WIDGET_CLASS(atn_similarity_view_parent_class)->map(widget);
    AtnSimilarityView *self = ATN_SIMILARITY_VIEW(widget);
    self->shown_once = TRUE;
    self->prefetching = FALSE;   /* a comparison made ahead is now the shown one's */
    if (self->dirty)
        recompute(self);
}

void atn_similarity_view_compare(AtnSimilarityView *self, int a, int b) {
    g_return_if_fail(ATN_IS_SIMILARITY_VIEW(self));
    const atn_similarity *sim = atn_similarity_map_get_similarity(self->map);
    AtnResult *r = self->session ? atn_session_get_result(self->session) : NULL;
    if (atn_similarity_map_get_kv_groups(self->map)) {   /* two groups: their mean, said under the matrix */
        g_autofree char *text = atn_similarity_map_dup_group_pair_text(self->map, a, b);
        if (!text)
            return;
        show_hint(self);
        gtk_label_set_text(self->hint_label, text);
        atn_similarity_map_set_highlight(self->map, a, b);
        return;
    }
    if (!sim || !r || a < 0 || b < 0 || a >= sim->count || b >= sim->count)
        return;
    int n = atn_result_get_n_tokens(r), nk = n;
    /* an encoder-decoder's decoder or cross heads (the matrix's stack): target rows, and target
       (decoder) or source (cross) columns */
    int kind = self->corpus_path ? ATN_STACK_ENCODER : atn_encdec_view_stack(r, atn_session_get_stack(self->session));
    const float *ha, *hb;
    const char *const *tok = atn_result_get_tokens(r), *const *ktok = tok;
    const int32_t *mask = atn_result_get_mask(r);
    if (kind != ATN_STACK_ENCODER) {
        ha = atn_result_get_stack_head(r, kind, sim->layer_of[a], sim->head_of[a], &n, &nk);
        hb = atn_result_get_stack_head(r, kind, sim->layer_of[b], sim->head_of[b], NULL, NULL);
        tok = atn_result_get_stack_tokens(r, kind, FALSE);
        ktok = atn_result_get_stack_tokens(r, kind, TRUE);
        mask = NULL;
    } else {
        ha = atn_result_get_head(r, sim->layer_of[a], sim->head_of[a]);
        hb = atn_result_get_head(r, sim->layer_of[b], sim->head_of[b]);
    }
    if (!ha || !hb)
        return;
    g_set_object(&self->pair_result, r);
    float *diff = g_new(float, (size_t)n * nk);
    for (size_t i = 0; i < (size_t)n * nk; i++)
        diff[i] = ha[i] - hb[i];
    char la[32], lb[32];
    atn_similarity_label(sim, a, la, sizeof la);
    atn_similarity_label(sim, b, lb, sizeof lb);
    g_autofree char *ta = g_strdup_printf(_("Layer %d · head %d"), sim->layer_of[a], sim->head_of[a]);
    g_autofree char *tb = g_strdup_printf(_("Layer %d · head %d"), sim->layer_of[b], sim->head_of[b]);
    g_autofree char *td = g_strdup_printf(_("Difference %s − %s"), la, lb);
    atn_heatmap_set_matrix(self->heat_a, G_OBJECT(r), ha, n, nk, tok, ktok, mask);
    atn_heatmap_set_title(self->heat_a, ta);
    atn_heatmap_set_matrix(self->heat_b, G_OBJECT(r), hb, n, nk, tok, ktok, mask);
    atn_heatmap_set_title(self->heat_b, tb);
    atn_heatmap_set_matrix(self->heat_diff, G_OBJECT(r), diff, n, nk, tok, ktok, mask);
    atn_heatmap_set_title(self->heat_diff, td);
    /* a decoder pair: later target tokens masked; a cross pair: target rows, source columns */
    gboolean cross = kind == ATN_STACK_CROSS;
    AtnHeatmap *three[3] = {self->heat_a, self->heat_b, self->heat_diff};
    for (int i = 0; i < 3; i++) {
        atn_heatmap_set_axes(three[i], cross ? _("target") : _("query"), cross ? _("source") : _("key"),
                             i == 2 ? _("difference") : _("weight"));
        atn_heatmap_set_causal(three[i], kind == ATN_STACK_DECODER);
        atn_heatmap_set_cell_words(three[i], cross ? _("target") : NULL, cross ? _("source") : NULL);
    }
    atn_heatmap_set_split(self->heat_a, atn_result_get_split(r));   /* a pair's A/B boundary */
    atn_heatmap_set_split(self->heat_b, atn_result_get_split(r));
    atn_heatmap_set_split(self->heat_diff, atn_result_get_split(r));
    g_free(self->diff);   /* after the heatmap let go of it */
    self->diff = diff;
    self->pair_a = a;
    self->pair_b = b;
    g_autofree char *label = g_strdup_printf(_("%s and %s: %s %.4f"), la, lb, atn_label_metric(sim->metric),
                                             sim->values[(size_t)a * sim->count + b]);
    if (sim->n_sentences > 1) {
        /* Translators: after "H7 and H5: Jensen-Shannon distance 0.5924" in corpus mode */
        g_autofree char *more = g_strdup_printf(_("%s (the mean over %lld sentences; the maps below are the "
                                                  "sentence above)"), label, (long long)sim->n_sentences);
        gtk_label_set_text(self->pair_label, more);
    } else {
        gtk_label_set_text(self->pair_label, label);
    }
    gtk_stack_set_visible_child_name(self->pair_stack, "pair");
    gtk_widget_set_visible(GTK_WIDGET(self->hint_label), FALSE);
    gtk_widget_set_visible(self->pair_pane, TRUE);
    atn_similarity_map_set_highlight(self->map, a, b);
}

static void on_pair(AtnSimilarityMap *map, int a, int b, AtnSimilarityView *self) {
    atn_similarity_view_compare(self, a, b);
}

static AtnFigure *dup_figure(AtnFigureSource *source) {
    return atn_similarity_map_dup_figure(ATN_SIMILARITY_VIEW(source)->map);
}

static void figure_source_iface_init(AtnFigureSourceInterface *iface) { iface->dup_figure = dup_figure; }

static void atn_similarity_view_dispose(GObject *object) {
    AtnSimilarityView *self = ATN_SIMILARITY_VIEW(object);
    if (self->session)
        g_signal_handlers_disconnect_by_data(self->session, self);
    g_clear_object(&self->session);
    if (self->cancel)
        g_cancellable_cancel(self->cancel);
    g_clear_object(&self->cancel);
    gtk_widget_dispose_template(GTK_WIDGET(self), ATN_TYPE_SIMILARITY_VIEW);
    g_clear_pointer(&self->diff, g_free);
    g_clear_object(&self->pair_result);
    g_clear_pointer(&self->corpus_path, g_free);
    g_clear_pointer(&self->corpus_error, g_free);
    g_clear_pointer(&self->covered, g_free);
    g_clear_handle_id(&self->corpus_poll_id, g_source_remove);
    g_clear_handle_id(&self->sim_poll_id, g_source_remove);
    self->sim_job = NULL;
    G_OBJECT_CLASS(atn_similarity_view_parent_class)->dispose(object);
}

/* The matrix takes the larger share of a wide window (half, or 560 px at least) until the
 * divider is dragged. */
static void on_paned_max(GtkPaned *paned, GParamSpec *p, AtnSimilarityView *self) {
    if (self->paned_by_user)
        return;
    int max = 0;
    g_object_get(paned, "max-position", &max, NULL);
    int want = MAX(560, (int)(max * 0.55));
    if (max > 0 && want < max && gtk_paned_get_position(paned) != want) {
        self->paned_setting = TRUE;
        gtk_paned_set_position(paned, want);
        self->paned_setting = FALSE;
    }
}

static void on_paned_position(GtkPaned *paned, GParamSpec *p, AtnSimilarityView *self) {
    if (!self->paned_setting && gtk_widget_get_mapped(GTK_WIDGET(paned)) && gtk_widget_get_width(GTK_WIDGET(paned)) > 0 &&
        gtk_widget_get_visible(self->pair_pane)) {
        int max = 0;
        g_object_get(paned, "max-position", &max, NULL);
        if (gtk_paned_get_position(paned) != MAX(560, (int)(max * 0.55)))
            self->paned_by_user = TRUE;
    }
}

static void atn_similarity_view_class_init(AtnSimilarityViewClass *klass) {
    GtkWidgetClass *wc = GTK_WIDGET_CLASS(klass);
    G_OBJECT_CLASS(klass)->dispose = atn_similarity_view_dispose;
    wc->map = atn_similarity_view_map;
    g_type_ensure(ATN_TYPE_SIMILARITY_MAP);
    g_type_ensure(ATN_TYPE_HEATMAP);
    g_type_ensure(ATN_TYPE_WRAP_BOX);
    g_type_ensure(ATN_TYPE_FIT_LABEL);
    gtk_widget_class_set_template_from_resource(wc, "/io/github/attnscope/Attnscope/atn-similarity-view.ui");
#define BIND(name) gtk_widget_class_bind_template_child(wc, AtnSimilarityView, name)
    BIND(box);
    BIND(metric_drop);
    BIND(scope_drop);
    BIND(cluster_check);
    BIND(kv_check);
    BIND(spinner);
    BIND(corpus_button);
    BIND(sentence_button);
    BIND(corpus_bar);
    BIND(corpus_cancel_button);
    BIND(info_label);
    BIND(pair_label);
    BIND(map);
    BIND(pair_stack);
    BIND(pair_pane);
    BIND(hint_label);
    BIND(heat_a);
    BIND(heat_b);
    BIND(heat_diff);
    BIND(paned);
#undef BIND
    gtk_widget_class_set_layout_manager_type(wc, GTK_TYPE_BIN_LAYOUT);
}

static void atn_similarity_view_init(AtnSimilarityView *self) {
    gtk_widget_init_template(GTK_WIDGET(self));
    atn_fit_label_set_xalign(self->info_label, 1.0f);
    atn_fit_label_set_grow(self->info_label, TRUE);   /* a second or third line at narrow widths */
    self->pair_a = self->pair_b = -1;
    atn_heatmap_set_colormap(self->heat_diff, ATN_CMAP_RDBU);
    atn_heatmap_set_axes(self->heat_diff, _("query"), _("key"), _("difference"));
    atn_heatmap_set_show_colorbar(self->heat_a, FALSE);
    atn_heatmap_set_show_colorbar(self->heat_b, FALSE);
    /* three small heatmaps side by side: every token's label, smaller, rather than every other one */
    atn_heatmap_set_min_label_scale(self->heat_a, 0.6);
    atn_heatmap_set_min_label_scale(self->heat_b, 0.6);
    atn_heatmap_set_min_label_scale(self->heat_diff, 0.6);
    g_signal_connect(self->paned, "notify::max-position", G_CALLBACK(on_paned_max), self);
    g_signal_connect(self->paned, "notify::position", G_CALLBACK(on_paned_position), self);
    g_signal_connect(self->metric_drop, "notify::selected", G_CALLBACK(on_option_changed), self);
    g_signal_connect(self->scope_drop, "notify::selected", G_CALLBACK(on_option_changed), self);
    g_signal_connect(self->cluster_check, "toggled", G_CALLBACK(on_cluster_toggled), self);
    g_signal_connect(self->kv_check, "toggled", G_CALLBACK(on_kv_toggled), self);
    g_signal_connect(self->map, "pair-activated", G_CALLBACK(on_pair), self);
    g_signal_connect(self->corpus_button, "clicked", G_CALLBACK(on_corpus_clicked), self);
    g_signal_connect(self->sentence_button, "clicked", G_CALLBACK(on_sentence_clicked), self);
    g_signal_connect(self->corpus_cancel_button, "clicked", G_CALLBACK(on_corpus_cancel_clicked), self);
}

GtkWidget *atn_similarity_view_new(void) { return g_object_new(ATN_TYPE_SIMILARITY_VIEW, NULL); }

void atn_similarity_view_set_session(AtnSimilarityView *self, AtnSession *session) {
    g_return_if_fail(ATN_IS_SIMILARITY_VIEW(self));
    if (self->session)
        g_signal_handlers_disconnect_by_data(self->session, self);
    g_set_object(&self->session, session);
    if (session) {
        g_signal_connect(session, "notify::result", G_CALLBACK(on_result), self);
        g_signal_connect(session, "notify::layer", G_CALLBACK(on_layer), self);
        g_signal_connect(session, "notify::model", G_CALLBACK(on_model), self);
        g_signal_connect(session, "notify::busy", G_CALLBACK(on_busy), self);
        g_signal_connect(session, "notify::stack", G_CALLBACK(on_stack), self);
    }
    mark_dirty(self);
}

void atn_similarity_view_set_colormap(AtnSimilarityView *self, atn_colormap cm) {
    g_return_if_fail(ATN_IS_SIMILARITY_VIEW(self));
    atn_similarity_map_set_colormap(self->map, cm);
    atn_heatmap_set_colormap(self->heat_a, cm);
    atn_heatmap_set_colormap(self->heat_b, cm);
}

void atn_similarity_view_set_font_scale(AtnSimilarityView *self, double scale) {
    g_return_if_fail(ATN_IS_SIMILARITY_VIEW(self));
    atn_similarity_map_set_font_scale(self->map, scale);
    atn_heatmap_set_font_scale(self->heat_a, scale);
    atn_heatmap_set_font_scale(self->heat_b, scale);
    atn_heatmap_set_font_scale(self->heat_diff, scale);
    /* the summary takes the controls' second line rather than a sliver of the first (a few
       characters a line, cut, at Text size 2.0 in Chinese) */
    atn_wrap_box_set_child_want(GTK_WIDGET(self->info_label), (int)(150 * scale));
}

void atn_similarity_view_set_metric(AtnSimilarityView *self, atn_metric metric) {
    g_return_if_fail(ATN_IS_SIMILARITY_VIEW(self));
    gtk_drop_down_set_selected(self->metric_drop, metric);
}

void atn_similarity_view_set_scope(AtnSimilarityView *self, atn_scope scope) {
    g_return_if_fail(ATN_IS_SIMILARITY_VIEW(self));
    gtk_drop_down_set_selected(self->scope_drop, scope);
}

AtnSimilarityMap *atn_similarity_view_get_map(AtnSimilarityView *self) {
    g_return_val_if_fail(ATN_IS_SIMILARITY_VIEW(self), NULL);
    return self->map;
}

GtkWidget *atn_similarity_view_get_info_widget(AtnSimilarityView *self) {
    g_return_val_if_fail(ATN_IS_SIMILARITY_VIEW(self), NULL);
    return GTK_WIDGET(self->info_label);
}

gboolean atn_similarity_view_get_pair_shown(AtnSimilarityView *self) {
    g_return_val_if_fail(ATN_IS_SIMILARITY_VIEW(self), FALSE);
    return gtk_widget_get_visible(self->pair_pane);
}

AtnHeatmap *atn_similarity_view_get_pair_heatmap(AtnSimilarityView *self, int which) {
    g_return_val_if_fail(ATN_IS_SIMILARITY_VIEW(self), NULL);
    return which == 0 ? self->heat_a : which == 1 ? self->heat_b : which == 2 ? self->heat_diff : NULL;
}

guint atn_similarity_view_get_n_prefetched(AtnSimilarityView *self) {
    g_return_val_if_fail(ATN_IS_SIMILARITY_VIEW(self), 0);
    return self->n_prefetched;
}

gboolean atn_similarity_view_get_busy(AtnSimilarityView *self) {
    g_return_val_if_fail(ATN_IS_SIMILARITY_VIEW(self), FALSE);
    return self->cancel != NULL;
}

void atn_similarity_view_set_by_kv_group(AtnSimilarityView *self, gboolean on) {
    g_return_if_fail(ATN_IS_SIMILARITY_VIEW(self));
    gtk_check_button_set_active(self->kv_check, on);
}

GtkWidget *atn_similarity_view_get_kv_check(AtnSimilarityView *self) {
    g_return_val_if_fail(ATN_IS_SIMILARITY_VIEW(self), NULL);
    return GTK_WIDGET(self->kv_check);
}

/* ---- AtnView ---------------------------------------------------------------------------------- */

static void view_set_session(AtnView *view, AtnSession *session) { atn_similarity_view_set_session(ATN_SIMILARITY_VIEW(view), session); }
static void view_set_colormap(AtnView *view, atn_colormap cm) { atn_similarity_view_set_colormap(ATN_SIMILARITY_VIEW(view), cm); }
static void view_set_font_scale(AtnView *view, double scale) { atn_similarity_view_set_font_scale(ATN_SIMILARITY_VIEW(view), scale); }

ATN_VIEW_REGISTER(atn_similarity_view)

static void view_iface_init(AtnViewInterface *iface) {
    iface->set_session = view_set_session;
    iface->set_colormap = view_set_colormap;
    iface->set_font_scale = view_set_font_scale;
}
