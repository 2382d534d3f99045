/* AtnPrecisionDialog: fp32 against bf16 / fp16 for the current sentence (see the header). */
#include "atn-precision-dialog.h"
#include "atn-memory-limit.h"
#include "atn-precision-dialog-test.h"

#include <glib/gi18n.h>

#include "atn-heatmap.h"
#include "atn-model-handle.h"
#include "atn-prefs.h"
#include "atn-result.h"
#include "atn-worker.h"

struct _AtnPrecisionDialog {
    GtkWindow parent_instance;
    GtkDropDown *precision_drop;
    AtnHeatmap *map;
    GtkLabel *summary;
    GtkSpinner *spinner;
    AtnModelHandle *model;         /* the result's model, or NULL */
    GArray *ids, *types, *mask;    /* the result's tokens (int32), or NULL for a toy model */
    GArray *toy_mask;
    GCancellable *cancel;          /* the computation in flight, or NULL */
    atn_precision precision;
    float *max_abs;                /* [L][H] of the last result */
    int layers, heads;
    char **row_labels, **col_labels;
    char *summary_text;
};

G_DEFINE_FINAL_TYPE(AtnPrecisionDialog, atn_precision_dialog, GTK_TYPE_WINDOW)

/* ---- the worker ----------------------------------------------------------------------- */

typedef struct job {
    AtnModelHandle *model;
    GArray *ids, *types, *mask, *toy_mask;
    atn_precision precision;
} job;

typedef struct job_result {
    int layers, heads;
    float *max_abs, *mean_abs, *hidden_rel;
    int guesses, changed;
    int64_t overflow;
} job_result;

static void job_free(job *j) {
    g_clear_object(&j->model);
    g_clear_pointer(&j->ids, g_array_unref);
    g_clear_pointer(&j->types, g_array_unref);
    g_clear_pointer(&j->mask, g_array_unref);
    g_clear_pointer(&j->toy_mask, g_array_unref);
    g_free(j);
}

static void job_result_free(job_result *r) {
    g_free(r->max_abs);
    g_free(r->mean_abs);
    g_free(r->hidden_rel);
    g_free(r);
}

static bool keep_going(double fraction, atn_stage stage, void *user_data) {
    return !g_cancellable_is_cancelled(user_data);
}

/* The worker (at nice 10 as "precision": two runs of the model, the window comes first). */
static gpointer compute(gpointer data, GCancellable *cancellable, GError **error) {
    job *j = data;
    atn_model *m = atn_model_handle_get_model(j->model);
    atn_error err = {0};
    atn_encoding *enc = NULL;
    atn_status st = j->ids ? atn_model_encode_ids(m, (const int32_t *)j->ids->data, (const int32_t *)j->types->data,
                                                  (const int32_t *)j->mask->data, (int32_t)j->ids->len, &enc, &err)
                           : atn_model_encode_toy(m, (const int32_t *)j->toy_mask->data, &enc, &err);
    atn_run *r32 = st == ATN_OK ? atn_run_new(m) : NULL, *rp = st == ATN_OK ? atn_run_new(m) : NULL;
    job_result *res = NULL;
    if (st == ATN_OK && (!r32 || !rp))
        st = atn_error_set(&err, ATN_E_NOMEM, "out of memory");
    atn_run_options o;
    atn_ui_run_options_init(&o);
    o.keep_trace_inputs = false;
    o.progress = keep_going;
    o.user_data = cancellable;
    if (st == ATN_OK)
        st = atn_run_forward(r32, enc, &o, &err);
    o.precision = j->precision;
    if (st == ATN_OK)
        st = atn_run_forward(rp, enc, &o, &err);
    if (st == ATN_OK) {
        const atn_capture *a = atn_run_capture(r32), *b = atn_run_capture(rp);
        res = g_new0(job_result, 1);
        res->layers = a->n_layers, res->heads = a->n_heads;
        res->max_abs = g_new0(float, (size_t)a->n_layers * a->n_heads);
        res->mean_abs = g_new0(float, (size_t)a->n_layers * a->n_heads);
        res->hidden_rel = g_new0(float, (size_t)a->n_layers + 1);
        res->overflow = b->fp16_overflow_total;
        st = atn_precision_compare(a, b, res->max_abs, res->mean_abs, NULL, res->hidden_rel, &err);
        bool mlm = !atn_model_is_causal(m) && atn_model_has_mlm_head(m);
        for (int32_t i = 0; st == ATN_OK && mlm && i < a->n; i++) {
            if (!a->enc->mask[i] || a->enc->tokens[i].role != ATN_TOKEN_MASK)
                continue;
            atn_prediction pa, pb;
            if (atn_predict_position(m, a, i, 1, &pa, &err) == ATN_OK &&
                atn_predict_position(m, b, i, 1, &pb, &err) == ATN_OK) {
                res->guesses++;
                res->changed += pa.id != pb.id;
            }
        }
    }
    atn_run_free(r32);
    atn_run_free(rp);
    atn_encoding_free(enc);
    if (st == ATN_OK)
        return res;
    if (res)
        job_result_free(res);
    g_set_error(error, G_IO_ERROR, st == ATN_E_CANCELLED ? G_IO_ERROR_CANCELLED : G_IO_ERROR_FAILED, "%s",
                err.message);
    return NULL;
}

/* ---- the window --------------------------------------------------------------------- */

static void set_labels(AtnPrecisionDialog *self, int layers, int heads) {
    g_strfreev(self->row_labels);
    g_strfreev(self->col_labels);
    self->row_labels = g_new0(char *, (gsize)layers + 1);
    self->col_labels = g_new0(char *, (gsize)heads + 1);
    for (int l = 0; l < layers; l++)
        self->row_labels[l] = g_strdup_printf("%d", l);
    for (int h = 0; h < heads; h++)
        self->col_labels[h] = g_strdup_printf("%d", h);
}

/* The computation still awaited (atn_worker: self->cancel already cleared); r is freed after. */
static void computed(gpointer owner, gpointer answer, const GError *error, gpointer data) {
    AtnPrecisionDialog *self = ATN_PRECISION_DIALOG(owner);
    job_result *r = answer;
    if (g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        return;
    gtk_spinner_stop(self->spinner);
    g_free(self->summary_text);
    if (!r) {
        self->summary_text = g_strdup_printf(_("The comparison could not run: %s"), error->message);
        gtk_label_set_text(self->summary, self->summary_text);
        return;
    }
    g_free(self->max_abs);
    self->max_abs = g_memdup2(r->max_abs, (gsize)r->layers * r->heads * sizeof(float));
    self->layers = r->layers, self->heads = r->heads;
    set_labels(self, r->layers, r->heads);
    int worst = 0;
    double mean = 0;
    for (int i = 0; i < r->layers * r->heads; i++) {
        if (!(self->max_abs[i] <= self->max_abs[worst]))
            worst = i;
        mean += r->mean_abs[i];
    }
    mean /= r->layers * r->heads;
    const char *name = self->precision == ATN_PRECISION_FP16 ? "fp16" : "bf16";
    g_autofree char *title = g_strdup_printf(_("Largest |p_%s − p_fp32| of each head"), name);
    atn_heatmap_set_title(self->map, title);
    atn_heatmap_set_matrix(self->map, NULL, self->max_abs, r->layers, r->heads,
                           (const char *const *)self->row_labels, (const char *const *)self->col_labels, NULL);
    g_autofree char *guesses = r->guesses
        ? g_strdup_printf(ngettext("%d of %d [MASK] guess changed.", "%d of %d [MASK] guesses changed.",
                                   (unsigned long)r->guesses), r->changed, r->guesses)
        : g_strdup(_("No [MASK] in the sentence."));
    g_autofree char *over = r->overflow > 0
        ? g_strdup_printf(ngettext(" fp16 overflow: %lld value became ±inf.", " fp16 overflow: %lld values became ±inf.",
                                   (unsigned long)r->overflow), (long long)r->overflow)
        : g_strdup("");
    self->summary_text = g_strdup_printf(_("Moves most: layer %d, head %d (%.2e). Mean |Δp| over all heads: %.2e. "
                                           "Hidden state after the last layer: %.3f%% off. %s%s"),
                                         worst / r->heads, worst % r->heads, self->max_abs[worst], mean,
                                         100.0 * r->hidden_rel[r->layers], guesses, over);
    gtk_label_set_text(self->summary, self->summary_text);
}

static void start(AtnPrecisionDialog *self) {
    atn_worker_cancel(&self->cancel);
    if (!self->model)
        return;
    job *j = g_new0(job, 1);
    j->model = g_object_ref(self->model);
    j->ids = self->ids ? g_array_ref(self->ids) : NULL;
    j->types = self->types ? g_array_ref(self->types) : NULL;
    j->mask = self->mask ? g_array_ref(self->mask) : NULL;
    j->toy_mask = self->toy_mask ? g_array_ref(self->toy_mask) : NULL;
    j->precision = self->precision;
    gtk_spinner_start(self->spinner);
    gtk_label_set_text(self->summary, _("Running the sentence in fp32 and in reduced precision…"));
    atn_worker_start_fallible(self, &self->cancel, ATN_WORKER_NICE, "precision", compute, j, (GDestroyNotify)job_free,
                              (GDestroyNotify)job_result_free, computed);
}

static void on_precision(GtkDropDown *d, GParamSpec *p, AtnPrecisionDialog *self) {
    atn_precision_dialog_set_precision(self, gtk_drop_down_get_selected(d) == 1 ? ATN_PRECISION_FP16
                                                                                : ATN_PRECISION_BF16);
}

static void atn_precision_dialog_dispose(GObject *object) {
    AtnPrecisionDialog *self = ATN_PRECISION_DIALOG(object);
    atn_worker_cancel(&self->cancel);
    g_clear_object(&self->model);
    g_clear_pointer(&self->ids, g_array_unref);
    g_clear_pointer(&self->types, g_array_unref);
    g_clear_pointer(&self->mask, g_array_unref);
    g_clear_pointer(&self->toy_mask, g_array_unref);
    G_OBJECT_CLASS(atn_precision_dialog_parent_class)->dispose(object);
}

static void atn_precision_dialog_finalize(GObject *object) {
    AtnPrecisionDialog *self = ATN_PRECISION_DIALOG(object);
    g_free(self->max_abs);
    g_strfreev(self->row_labels);
    g_strfreev(self->col_labels);
    g_free(self->summary_text);
    G_OBJECT_CLASS(atn_precision_dialog_parent_class)->finalize(object);
}

static void atn_precision_dialog_class_init(AtnPrecisionDialogClass *klass) {
    G_OBJECT_CLASS(klass)->dispose = atn_precision_dialog_dispose;
    G_OBJECT_CLASS(klass)->finalize = atn_precision_dialog_finalize;
    gtk_widget_class_add_binding_action(GTK_WIDGET_CLASS(klass), GDK_KEY_Escape, 0, "window.close", NULL);
}

static void atn_precision_dialog_init(AtnPrecisionDialog *self) {
    gtk_window_set_title(GTK_WINDOW(self), _("Half Precision"));
    gtk_window_set_default_size(GTK_WINDOW(self), 640, 560);
    GtkWidget *box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 12);
    gtk_widget_set_margin_start(box, 18);
    gtk_widget_set_margin_end(box, 18);
    gtk_widget_set_margin_top(box, 18);
    gtk_widget_set_margin_bottom(box, 18);
    GtkWidget *row = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 12);
    GtkWidget *label = gtk_label_new_with_mnemonic(_("Compare fp32 _with"));
    const char *names[] = {"bf16", "fp16", NULL};
    self->precision_drop = GTK_DROP_DOWN(gtk_drop_down_new_from_strings(names));
    gtk_label_set_mnemonic_widget(GTK_LABEL(label), GTK_WIDGET(self->precision_drop));
    self->spinner = GTK_SPINNER(gtk_spinner_new());
    gtk_box_append(GTK_BOX(row), label);
    gtk_box_append(GTK_BOX(row), GTK_WIDGET(self->precision_drop));
    gtk_box_append(GTK_BOX(row), GTK_WIDGET(self->spinner));
    gtk_box_append(GTK_BOX(box), row);
    self->map = ATN_HEATMAP(atn_heatmap_new());
    gtk_widget_set_vexpand(GTK_WIDGET(self->map), TRUE);
    gtk_widget_set_hexpand(GTK_WIDGET(self->map), TRUE);
    atn_heatmap_set_axes(self->map, _("layer"), _("head"), _("max |Δp|"));
    atn_colormap cm = ATN_CMAP_VIRIDIS;
    atn_colormap_from_name(atn_prefs_get_colormap(atn_prefs_get_default()), &cm);
    atn_heatmap_set_colormap(self->map, cm);
    gtk_box_append(GTK_BOX(box), GTK_WIDGET(self->map));
    self->summary = GTK_LABEL(gtk_label_new(""));
    gtk_label_set_wrap(self->summary, TRUE);
    gtk_label_set_xalign(self->summary, 0);
    gtk_label_set_selectable(self->summary, TRUE);
    gtk_box_append(GTK_BOX(box), GTK_WIDGET(self->summary));
    GtkWidget *note = gtk_label_new(_("Each matrix product's operands rounded to bf16 or fp16 and added up in fp32, as "
                                      "autocast runs; on a CPU without bf16/fp16 arithmetic the numbers are made by "
                                      "rounding."));
    gtk_label_set_wrap(GTK_LABEL(note), TRUE);
    gtk_label_set_xalign(GTK_LABEL(note), 0);
    gtk_widget_add_css_class(note, "dim-label");
    gtk_box_append(GTK_BOX(box), note);
    gtk_window_set_child(GTK_WINDOW(self), box);
    self->precision = ATN_PRECISION_BF16;
    g_signal_connect(self->precision_drop, "notify::selected", G_CALLBACK(on_precision), self);
}

GtkWidget *atn_precision_dialog_new(GtkWindow *parent, AtnSession *session, atn_precision precision) {
    g_return_val_if_fail(ATN_IS_SESSION(session), NULL);
    AtnPrecisionDialog *self = g_object_new(ATN_TYPE_PRECISION_DIALOG, "transient-for", parent, NULL);
    AtnResult *r = atn_session_get_result(session);
    if (r) {
        self->model = g_object_ref(atn_result_get_model(r));
        const atn_encoding *enc = atn_result_get_encoding(r);
        GArray *arrays[3];
        for (int a = 0; a < 3; a++)
            arrays[a] = g_array_sized_new(FALSE, FALSE, sizeof(int32_t), (guint)enc->n);
        for (int32_t i = 0; i < enc->n; i++) {
            g_array_append_val(arrays[0], enc->ids[i]);
            g_array_append_val(arrays[1], enc->type_ids[i]);
            g_array_append_val(arrays[2], enc->mask[i]);
        }
        if (atn_model_handle_is_toy(self->model)) {
            self->toy_mask = arrays[2];
            g_array_unref(arrays[0]);
            g_array_unref(arrays[1]);
        } else {
            self->ids = arrays[0], self->types = arrays[1], self->mask = arrays[2];
        }
    } else {
        gtk_label_set_text(self->summary, _("Run a sentence first."));
    }
    self->precision = precision == ATN_PRECISION_FP16 ? ATN_PRECISION_FP16 : ATN_PRECISION_BF16;
    g_signal_handlers_block_by_func(self->precision_drop, on_precision, self);
    gtk_drop_down_set_selected(self->precision_drop, self->precision == ATN_PRECISION_FP16 ? 1 : 0);
    g_signal_handlers_unblock_by_func(self->precision_drop, on_precision, self);
    start(self);
    return GTK_WIDGET(self);
}

void atn_precision_dialog_set_precision(AtnPrecisionDialog *self, atn_precision precision) {
    g_return_if_fail(ATN_IS_PRECISION_DIALOG(self));
    self->precision = precision == ATN_PRECISION_FP16 ? ATN_PRECISION_FP16 : ATN_PRECISION_BF16;
    start(self);
}

gboolean atn_precision_dialog_is_busy(AtnPrecisionDialog *self) {
    g_return_val_if_fail(ATN_IS_PRECISION_DIALOG(self), FALSE);
    return self->cancel != NULL;
}

const float *atn_precision_dialog_get_max_abs(AtnPrecisionDialog *self, int *layers, int *heads) {
    g_return_val_if_fail(ATN_IS_PRECISION_DIALOG(self), NULL);
    if (layers)
        *layers = self->layers;
    if (heads)
        *heads = self->heads;
    return self->max_abs;
}

const char *atn_precision_dialog_get_summary(AtnPrecisionDialog *self) {
    g_return_val_if_fail(ATN_IS_PRECISION_DIALOG(self), NULL);
    return self->summary_text ? self->summary_text : "";
}
