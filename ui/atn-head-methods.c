/* AtnHeadMethods: Raw / Norm / Rollout / Flow in the Head view (atn-head-methods.h). */
#include "atn-head-methods.h"

#include <glib/gi18n.h>

#include "analysis.h"
#include "atn-result.h"
#include "atn-worker.h"

struct _AtnHeadMethods {
    GObject parent_instance;
    AtnHeatmap *heatmap;             /* borrowed */
    GtkWidget *box, *dropdown, *progress, *stop;
    AtnSession *session;
    AtnHeadMethod method;
    /* the matrix shown: for (result, method, layer, head); head -1 for rollout and flow */
    AtnResult *have_result;
    AtnHeadMethod have_method;
    int have_layer, have_head, have_n;
    GObject *have_holder;            /* keeps "values" (g_free) alive for the heatmap */
    const float *have_values;
    char *have_error;                /* the work failed (its message), instead of values */
    /* the work in flight, and what it is for */
    GCancellable *slot;
    AtnResult *want_result;          /* borrowed: compared only */
    AtnHeadMethod want_method;
    int want_layer, want_head;
    gint progress_permille;          /* written by the worker (atomic), read by the timer */
    guint timer;
    gboolean in_apply;
};

G_DEFINE_FINAL_TYPE(AtnHeadMethods, atn_head_methods, G_TYPE_OBJECT)

enum { SIGNAL_CHANGED, N_SIGNALS };
static guint signals[N_SIGNALS];

typedef struct {
    AtnResult *result;
    AtnHeadMethod method;
    int layer, head, n;
    AtnHeadMethods *self;            /* alive until the task ends (atn_worker keeps the owner) */
    GCancellable *cancellable;
} method_job;

static void job_free(gpointer p) {
    method_job *j = p;
    g_object_unref(j->result);
    g_free(j);
}

static bool flow_progress(double fraction, atn_stage stage, void *user) {
    method_job *j = user;
    (void)stage;
    g_atomic_int_set(&j->self->progress_permille, (gint)(fraction * 1000));
    return !g_cancellable_is_cancelled(j->cancellable);
}

static gpointer run_method(gpointer data, GCancellable *cancellable, GError **error) {
    method_job *j = data;
    const atn_capture *cap = atn_result_get_capture(j->result);
    int n = cap->n;
    float *out = g_try_malloc((size_t)n * n * sizeof *out);
    if (!out) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_FAILED, "%s", _("out of memory"));
        return NULL;
    }
    j->cancellable = cancellable;
    atn_error err = {0};
    atn_status st = ATN_OK;
    switch (j->method) {
    case ATN_HEAD_METHOD_NORM:
    case ATN_HEAD_METHOD_NORM_LAYER:
        st = atn_norm_attention_compute(atn_model_handle_get_model(atn_result_get_model(j->result)), cap, j->layer,
                                        j->head, out, &err);
        break;
    case ATN_HEAD_METHOD_ROLLOUT: st = atn_rollout_compute(cap, j->layer, out, &err); break;
    case ATN_HEAD_METHOD_FLOW: st = atn_flow_compute(cap, j->layer, out, flow_progress, j, &err); break;
    default: st = atn_error_set(&err, ATN_E_INVALID, "raw"); break;
    }
    if (st != ATN_OK) {
        g_free(out);
        g_set_error(error, G_IO_ERROR, st == ATN_E_CANCELLED ? G_IO_ERROR_CANCELLED : G_IO_ERROR_FAILED, "%s",
                    err.message);
        return NULL;
    }
    return out;
}

static void stop_progress(AtnHeadMethods *self) {
    if (self->timer)
        g_source_remove(self->timer);
    self->timer = 0;
    gtk_widget_set_visible(self->progress, FALSE);
    gtk_widget_set_visible(self->stop, FALSE);
}

static void clear_have(AtnHeadMethods *self) {
    g_clear_object(&self->have_result);
    g_clear_object(&self->have_holder);
    g_clear_pointer(&self->have_error, g_free);
    self->have_values = NULL;
}

static void method_done(gpointer owner, gpointer answer, const GError *error, gpointer data) {
    AtnHeadMethods *self = owner;
    method_job *j = data;
    stop_progress(self);
    clear_have(self);
    self->want_result = NULL;
    if (error && g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED)) {
        /* Stop: back to the raw head */
        atn_head_methods_set_method(self, ATN_HEAD_METHOD_RAW);
        return;
    }
    self->have_result = g_object_ref(j->result);
    self->have_method = j->method, self->have_layer = j->layer, self->have_head = j->head, self->have_n = j->n;
    if (error) {
        self->have_error = g_strdup(error->message);
    } else {
        self->have_holder = g_object_new(G_TYPE_OBJECT, NULL);
        g_object_set_data_full(self->have_holder, "values", answer, g_free);   /* ATN_WORKER_TAKE */
        self->have_values = answer;
    }
    g_signal_emit(self, signals[SIGNAL_CHANGED], 0);
}

static gboolean on_timer(gpointer data) {
    AtnHeadMethods *self = data;
    gtk_progress_bar_set_fraction(GTK_PROGRESS_BAR(self->progress),
                                  g_atomic_int_get(&self->progress_permille) / 1000.0);
    return G_SOURCE_CONTINUE;
}

static void start(AtnHeadMethods *self, AtnResult *r, int layer, int head) {
    atn_worker_cancel(&self->slot);
    stop_progress(self);
    method_job *j = g_new0(method_job, 1);
    j->result = g_object_ref(r);
    j->method = self->method, j->layer = layer, j->head = head, j->n = atn_result_get_n_tokens(r);
    j->self = self;
    self->want_result = r, self->want_method = self->method, self->want_layer = layer, self->want_head = head;
    g_atomic_int_set(&self->progress_permille, 0);
    if (self->method == ATN_HEAD_METHOD_FLOW) {   /* the slow one shows its progress and can stop */
        gtk_progress_bar_set_fraction(GTK_PROGRESS_BAR(self->progress), 0);
        gtk_widget_set_visible(self->progress, TRUE);
        gtk_widget_set_visible(self->stop, TRUE);
        self->timer = g_timeout_add(100, on_timer, self);
    }
    atn_worker_start_fallible(self, &self->slot, ATN_WORKER_TAKE, NULL, run_method, j, job_free, g_free,
                              method_done);
}

static const char *method_key(AtnHeadMethod m) {
    switch (m) {
    case ATN_HEAD_METHOD_NORM: return "norm";
    case ATN_HEAD_METHOD_NORM_LAYER: return "norm-sum";
    case ATN_HEAD_METHOD_ROLLOUT: return "rollout";
    case ATN_HEAD_METHOD_FLOW: return "flow";
    default: return "head";
    }
}

const char *atn_head_methods_get_summary(AtnHeadMethods *self, const char **shorter) {
    g_return_val_if_fail(ATN_IS_HEAD_METHODS(self), NULL);
    if (shorter)   /* Translators: the summary line's short forms, for a narrow window */
        *shorter = self->method == ATN_HEAD_METHOD_NORM      ? _("Norm: weight × ‖f(x)‖")
                   : self->method == ATN_HEAD_METHOD_NORM_LAYER ? _("Norm of the heads’ sum")
                   : self->method == ATN_HEAD_METHOD_ROLLOUT ? _("Rollout through these layers")
                   : self->method == ATN_HEAD_METHOD_FLOW    ? _("Flow through these layers")
                                                             : NULL;
    switch (self->method) {
    case ATN_HEAD_METHOD_NORM:
        /* Translators: the Head view's summary line with Norm chosen */
        return _("Norm — each weight times the length of what the key token sends: a weight on a tiny vector counts for little");
    case ATN_HEAD_METHOD_ROLLOUT:
        /* Translators: the Head view's summary line with Rollout chosen */
        return _("Rollout — how much each token draws on each input token after these layers, residual included");
    case ATN_HEAD_METHOD_NORM_LAYER:
        /* Translators: the Head view's summary line with "Norm Σ" chosen */
        return _("Norm Σ — the length of what the key token adds to the query through all heads of this layer together");
    case ATN_HEAD_METHOD_FLOW:
        /* Translators: the Head view's summary line with Flow chosen */
        return _("Flow — the most that can pass from each input token to each token through these layers");
    default: return NULL;
    }
}

char *atn_head_methods_dup_figure_name(AtnHeadMethods *self, int layer, int head) {
    g_return_val_if_fail(ATN_IS_HEAD_METHODS(self), NULL);
    if (self->method == ATN_HEAD_METHOD_ROLLOUT || self->method == ATN_HEAD_METHOD_FLOW)
        return g_strdup_printf("%s-L0-%d", method_key(self->method), layer);
    if (self->method == ATN_HEAD_METHOD_NORM_LAYER)
        return g_strdup_printf("%s-L%d", method_key(self->method), layer);
    return g_strdup_printf("%s-L%d-H%d", method_key(self->method), layer, head);
}

gboolean atn_head_methods_apply(AtnHeadMethods *self) {
    g_return_val_if_fail(ATN_IS_HEAD_METHODS(self), FALSE);
    AtnResult *r = self->session ? atn_session_get_result(self->session) : NULL;
    if (self->method == ATN_HEAD_METHOD_RAW || !r || self->in_apply)
        return FALSE;
    self->in_apply = TRUE;
    int layer = atn_session_get_layer(self->session);
    int head = self->method == ATN_HEAD_METHOD_NORM ? atn_session_get_head(self->session) : -1;
    const char *name = atn_model_handle_get_name(atn_result_get_model(r));
    int n = atn_result_get_n_tokens(r);
    const char *const *tokens = atn_result_get_tokens(r);
    g_autofree char *title = NULL;
    const atn_model *model = atn_model_handle_get_model(atn_result_get_model(r));
    gboolean norm = self->method == ATN_HEAD_METHOD_NORM || self->method == ATN_HEAD_METHOD_NORM_LAYER;
    if (norm && (!atn_result_has_weights(r) || !atn_norm_attention_supported(model))) {
        atn_heatmap_set_matrix(self->heatmap, NULL, NULL, 0, 0, NULL, NULL, NULL);
        /* Translators: %s is a model family ("Llama") or "an attention file" */
        title = g_strdup_printf(_("Norm-based attention needs a BERT-like encoder or GPT-2 with its weights (not %s)"),
                                model ? atn_model_family_name(model) : _("an attention file"));
        atn_heatmap_set_title(self->heatmap, title);
        self->in_apply = FALSE;
        return TRUE;
    }
    gboolean have = self->have_result == r && self->have_method == self->method && self->have_layer == layer &&
                    self->have_head == head;
    if (!have) {
        gboolean wanted = self->slot && self->want_result == r && self->want_method == self->method &&
                          self->want_layer == layer && self->want_head == head;
        if (!wanted)
            start(self, r, layer, head);
        atn_heatmap_set_matrix(self->heatmap, NULL, NULL, 0, 0, NULL, NULL, NULL);
        atn_heatmap_set_title(self->heatmap, _("Computing…"));
        self->in_apply = FALSE;
        return TRUE;
    }
    if (self->have_error) {
        atn_heatmap_set_matrix(self->heatmap, NULL, NULL, 0, 0, NULL, NULL, NULL);
        atn_heatmap_set_title(self->heatmap, self->have_error);
        self->in_apply = FALSE;
        return TRUE;
    }
    atn_heatmap_set_matrix(self->heatmap, self->have_holder, self->have_values, n, n, tokens, tokens,
                           atn_result_get_mask(r));
    atn_heatmap_set_split(self->heatmap, atn_result_get_split(r));
    atn_heatmap_set_selected_row(self->heatmap, atn_session_get_query(self->session));
    atn_heatmap_set_highlight_token(self->heatmap, atn_session_get_hover_token(self->session));
    atn_heatmap_set_range(self->heatmap, NULL);   /* norms are not shares: never the fixed 0–1 scale */
    if (self->method == ATN_HEAD_METHOD_NORM) {
        atn_heatmap_set_causal(self->heatmap, atn_result_is_causal(r));
        /* Translators: the Head view's title with Norm chosen: model · layer · head · ‖α f(x)‖ */
        title = g_strdup_printf(_("%s · layer %d · head %d · norm-based attention ‖α f(x)‖"), name, layer, head);
        atn_heatmap_set_axes(self->heatmap, _("query"), _("key"), "‖α f(x)‖");
        atn_heatmap_set_colorbar_note(self->heatmap, _("0 to head max"));
    } else if (self->method == ATN_HEAD_METHOD_NORM_LAYER) {
        atn_heatmap_set_causal(self->heatmap, atn_result_is_causal(r));
        /* Translators: the Head view's title with "Norm Σ" chosen: model · layer · ‖Σ_h α f(x)‖ */
        title = g_strdup_printf(_("%s · layer %d · norm-based attention of all heads ‖Σ α f(x)‖"), name, layer);
        atn_heatmap_set_axes(self->heatmap, _("query"), _("key"), "‖Σ α f(x)‖");
        /* Translators: under the colour bar: the colours span 0 to the largest value shown */
        atn_heatmap_set_colorbar_note(self->heatmap, _("0 to max"));
    } else {
        atn_heatmap_set_causal(self->heatmap, atn_result_is_causal(r));
        title = self->method == ATN_HEAD_METHOD_FLOW
                    ? g_strdup_printf(_("%s · attention flow through layers 0–%d"), name, layer)
                    : g_strdup_printf(_("%s · attention rollout through layers 0–%d"), name, layer);
        /* Translators: the axes of rollout and flow: a token after the layers, the input token it draws on */
        atn_heatmap_set_axes(self->heatmap, _("output token"), _("input token"), _("share"));
        /* Translators: under the colour bar: the colours span 0 to the largest value shown */
        atn_heatmap_set_colorbar_note(self->heatmap, _("0 to max"));
    }
    atn_heatmap_set_title(self->heatmap, title);
    self->in_apply = FALSE;
    return TRUE;
}

void atn_head_methods_set_method(AtnHeadMethods *self, AtnHeadMethod method) {
    g_return_if_fail(ATN_IS_HEAD_METHODS(self));
    if (method == self->method)
        return;
    self->method = method;
    if (gtk_drop_down_get_selected(GTK_DROP_DOWN(self->dropdown)) != (guint)method)
        gtk_drop_down_set_selected(GTK_DROP_DOWN(self->dropdown), method);
    if (method == ATN_HEAD_METHOD_RAW) {
        atn_worker_cancel(&self->slot);
        stop_progress(self);
        atn_heatmap_set_axes(self->heatmap, _("query"), _("key"), _("weight"));
    }
    g_signal_emit(self, signals[SIGNAL_CHANGED], 0);
}

AtnHeadMethod atn_head_methods_get_method(AtnHeadMethods *self) {
    g_return_val_if_fail(ATN_IS_HEAD_METHODS(self), ATN_HEAD_METHOD_RAW);
    return self->method;
}

const float *atn_head_methods_get_values(AtnHeadMethods *self, int *n) {
    g_return_val_if_fail(ATN_IS_HEAD_METHODS(self), NULL);
    AtnResult *r = self->session ? atn_session_get_result(self->session) : NULL;
    if (self->method == ATN_HEAD_METHOD_RAW || !r || self->have_result != r || self->have_method != self->method ||
        !self->have_values)
        return NULL;
    if (n)
        *n = self->have_n;
    return self->have_values;
}

gboolean atn_head_methods_is_busy(AtnHeadMethods *self) {
    g_return_val_if_fail(ATN_IS_HEAD_METHODS(self), FALSE);
    return self->slot != NULL;
}

static void on_selected(GtkDropDown *dd, GParamSpec *p, AtnHeadMethods *self) {
    atn_head_methods_set_method(self, (AtnHeadMethod)gtk_drop_down_get_selected(dd));
}

static void on_stop(GtkButton *b, AtnHeadMethods *self) {
    /* the worker sees the cancellable at its next pair and its answer is dropped */
    atn_worker_cancel(&self->slot);
    stop_progress(self);
    self->want_result = NULL;
    atn_head_methods_set_method(self, ATN_HEAD_METHOD_RAW);
}

void atn_head_methods_set_session(AtnHeadMethods *self, AtnSession *session) {
    g_return_if_fail(ATN_IS_HEAD_METHODS(self));
    atn_worker_cancel(&self->slot);
    stop_progress(self);
    self->want_result = NULL;
    clear_have(self);
    g_set_object(&self->session, session);
}

GtkWidget *atn_head_methods_get_widget(AtnHeadMethods *self) {
    g_return_val_if_fail(ATN_IS_HEAD_METHODS(self), NULL);
    return self->box;
}

static void atn_head_methods_dispose(GObject *object) {
    AtnHeadMethods *self = ATN_HEAD_METHODS(object);
    atn_worker_cancel(&self->slot);
    if (self->timer)
        g_source_remove(self->timer);
    self->timer = 0;
    clear_have(self);
    g_clear_object(&self->session);
    g_clear_object(&self->box);
    G_OBJECT_CLASS(atn_head_methods_parent_class)->dispose(object);
}

static void atn_head_methods_class_init(AtnHeadMethodsClass *klass) {
    G_OBJECT_CLASS(klass)->dispose = atn_head_methods_dispose;
    signals[SIGNAL_CHANGED] = g_signal_new("changed", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                                           NULL, G_TYPE_NONE, 0);
}

static void atn_head_methods_init(AtnHeadMethods *self) {
    self->box = g_object_ref_sink(gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 6));
    const char *const names[] = {
        /* Translators: the Head view's methods (short: they share a line with the head's summary):
           the attention weights as the model computed them */
        _("Raw"),
        /* Translators: Kobayashi et al.'s ‖α f(x)‖: how much each token's vector really adds */
        _("Norm"),
        /* Translators: Abnar & Zuidema's attention rollout */
        _("Rollout"),
        /* Translators: Abnar & Zuidema's attention flow */
        _("Flow"),
        /* Translators: Kobayashi et al.'s norm of the layer's heads summed, ‖Σ_h α f(x)‖ */
        _("Norm Σ"), NULL};
    self->dropdown = gtk_drop_down_new_from_strings(names);
    gtk_widget_set_valign(self->dropdown, GTK_ALIGN_CENTER);
    gtk_widget_set_tooltip_text(self->dropdown,
                                _("Raw: this head's weights. Norm: the weight times the size of what the key "
                                  "token sends (Kobayashi et al.); Norm Σ: the same for all heads of the layer together. Rollout and Flow: how much each input token "
                                  "reaches each token after layers 0 to the selected layer (Abnar & Zuidema)."));
    self->progress = gtk_progress_bar_new();
    gtk_widget_set_valign(self->progress, GTK_ALIGN_CENTER);
    gtk_widget_set_size_request(self->progress, 80, -1);
    /* the percentage on the bar, and what it is, since the heatmap stays empty meanwhile */
    gtk_progress_bar_set_show_text(GTK_PROGRESS_BAR(self->progress), TRUE);
    gtk_widget_set_tooltip_text(self->progress, _("computing the attention flow"));
    /* Translators: stops computing the attention flow */
    self->stop = gtk_button_new_with_label(_("Stop"));
    gtk_widget_set_visible(self->progress, FALSE);
    gtk_widget_set_visible(self->stop, FALSE);
    gtk_box_append(GTK_BOX(self->box), self->dropdown);
    gtk_box_append(GTK_BOX(self->box), self->progress);
    gtk_box_append(GTK_BOX(self->box), self->stop);
    g_signal_connect(self->dropdown, "notify::selected", G_CALLBACK(on_selected), self);
    g_signal_connect(self->stop, "clicked", G_CALLBACK(on_stop), self);
}

AtnHeadMethods *atn_head_methods_new(AtnHeatmap *heatmap) {
    AtnHeadMethods *self = g_object_new(ATN_TYPE_HEAD_METHODS, NULL);
    self->heatmap = heatmap;
    return self;
}
