/* AtnWhatifView: the what-if lab's page (see atn-whatif-view.h).
 * Over 1,000 lines on purpose: the comparison, its display and the change controls all
 * follow one AtnWhatif state and rebuild each other; the page reads best as one file. */
#include "atn-whatif-view.h"
#include "atn-memory-limit.h"
#include "atn-token-spans.h"
#include "atn-whatif-view-test.h"

#include "atn-wrap-box.h"

#include "atn-view.h"

#include <glib/gi18n.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "atn-encdec.h"
#include "atn-error-text.h"
#include "atn-whatif-rotary.h"
#include "atn-figure.h"
#include "atn-whatif.h"
#include "atn-worker.h"

enum { GUESS_K = 3 };

/* What one comparison computed (in a worker thread, or on the main thread for toy models). */
typedef struct diff_out {
    AtnResult *result;          /* the changed run compared */
    atn_run *original;          /* the original model on the same tokens */
    atn_capture_diff *diff;
    GArray *guesses;            /* AtnWhatifGuess */
    char *error;
} diff_out;

static void guess_clear(gpointer data) {
    AtnWhatifGuess *g = data;
    g_free(g->before);
    g_free(g->after);
}

static void diff_out_free(diff_out *o) {
    if (!o)
        return;
    g_clear_object(&o->result);
    atn_run_free(o->original);
    atn_capture_diff_free(o->diff);
    if (o->guesses)
        g_array_unref(o->guesses);
    g_free(o->error);
    g_free(o);
}

struct _AtnWhatifView {
    GtkWidget parent_instance;
    GtkWidget *paned;
    AtnSession *session;
    AtnHeatmap *map, *pair[3];
    GtkLabel *status_label, *summary_label, *cli_label, *drift_label, *guess_label, *pair_label;
    GtkDropDown *mode_drop, *metric_drop;
    GtkCheckButton *keep_check, *every_check, *causal_check, *window_check, *strided_check, *alibi_check,
        *nopos_check, *shuffle_check;
    GtkSpinButton *window_spin, *strided_spin, *seed_spin, *temp_spin;
    AtnWhatifRotary *rotary;   /* the rotary knobs (ui/atn-whatif-rotary.c) */
    GtkButton *reset_button;
    GtkEntry *layers_entry;      /* the layers the masks apply in ("0,2-3"; empty: every layer) */
    AtnWhatif *applied;          /* the changes this page gave the session last */
    GtkFlowBox *global_box, *hide_box;
    GtkWidget *pos_box;          /* the position controls: not for toy models */

    /* the heads chosen: [L][H] 1 = chosen (off, or kept with keep-only) */
    uint8_t *chosen;
    int n_layers, n_heads;
    AtnModelHandle *model;       /* the model the choices are for */
    int n_chip_tokens;           /* tokens the chips were made for */
    GArray *global_tokens, *hide_tokens;   /* int32, sorted */
    gboolean syncing;            /* controls being set by code: no apply */

    diff_out *shown;             /* the comparison shown, or NULL */
    GCancellable *cancel;        /* the comparison in flight */
    gboolean busy;
    atn_colormap cmap;
    double font_scale;
    float *delta;                /* [n][n] after - before of the selected head */
    float *before;               /* [n][n] the original's head when made on demand, or NULL */
    GtkDrawingArea *cost_area;   /* the long-sequence cost chart at this length */
    atn_cost_row cost_rows[ATN_COST_VARIANTS_MAX];
    int n_cost_rows;
    float *zeros;                /* [L][H] for the map before any comparison */
    char **row_labels, **col_labels;
};

static void figure_source_iface_init(AtnFigureSourceInterface *iface);
static void view_iface_init(AtnViewInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE(AtnWhatifView, atn_whatif_view, GTK_TYPE_WIDGET,
                              G_IMPLEMENT_INTERFACE(ATN_TYPE_FIGURE_SOURCE, figure_source_iface_init)
                              G_IMPLEMENT_INTERFACE(ATN_TYPE_VIEW, view_iface_init))

/* ---- the comparison -------------------------------------------------------------------------- */

static bool cancel_cb(double fraction, atn_stage stage, void *user_data) {
    return !user_data || !g_cancellable_is_cancelled(user_data);
}

/* "␣cat 0.3120 · ␣dog 0.1104 · …": each guess as every view shows tokens, apart. */
static char *guess_list(const atn_model *m, const atn_prediction *p, int k) {
    GString *s = g_string_new(NULL);
    for (int i = 0; i < k; i++) {
        char *label = atn_render_prediction_label(m, &p[i]);
        g_string_append_printf(s, "%s%s %.4f", i ? "  ·  " : "", label ? label : p[i].token, (double)p[i].prob);
        free(label);
    }
    return g_string_free(s, FALSE);
}

/* One position's guesses before and after; orig < 0: the original model's first guess. */
static gboolean add_guess(GArray *out, const atn_model *m, const atn_capture *a, const atn_capture *b, int pos,
                          int orig, gboolean causal, atn_error *err) {
    atn_prediction pa[GUESS_K], pb[GUESS_K];
    atn_status st = causal ? atn_predict_next(m, a, pos, GUESS_K, pa, err) : atn_predict_position(m, a, pos, GUESS_K, pa, err);
    if (st == ATN_OK)
        st = causal ? atn_predict_next(m, b, pos, GUESS_K, pb, err) : atn_predict_position(m, b, pos, GUESS_K, pb, err);
    if (st != ATN_OK)
        return FALSE;
    AtnWhatifGuess g = {.position = pos, .original_id = orig >= 0 ? orig : pa[0].id};
    double la, lb;
    st = causal ? atn_predict_next_log_prob(m, a, pos, g.original_id, &la, err)
                : atn_predict_log_prob(m, a, pos, g.original_id, &la, err);
    if (st == ATN_OK)
        st = causal ? atn_predict_next_log_prob(m, b, pos, g.original_id, &lb, err)
                    : atn_predict_log_prob(m, b, pos, g.original_id, &lb, err);
    if (st != ATN_OK)
        return FALSE;
    g.p_before = exp(la);
    g.p_after = exp(lb);
    g.before = guess_list(m, pa, GUESS_K);
    g.after = guess_list(m, pb, GUESS_K);
    g_array_append_val(out, g);
    return TRUE;
}

/* The original run on the changed result's tokens, the diff and the guesses. */
static diff_out *compare(AtnResult *r, GCancellable *cancellable) {
    diff_out *o = g_new0(diff_out, 1);
    o->result = g_object_ref(r);
    atn_model *m = atn_model_handle_get_model(atn_result_get_model(r));
    const atn_capture *b = atn_result_get_capture(r);
    atn_error err = {0};
    o->original = atn_run_new(m);
    if (!o->original) {
        o->error = g_strdup(_("Out of memory"));
        return o;
    }
    atn_run_options opts;
    atn_ui_run_options_init(&opts);
    opts.progress = cancel_cb;
    opts.user_data = cancellable;
    if (atn_run_forward(o->original, atn_result_get_encoding(r), &opts, &err) != ATN_OK ||
        atn_capture_diff_compute(atn_run_capture(o->original), b, &o->diff, &err) != ATN_OK) {
        o->error = g_strdup(err.message);
        return o;
    }
    const atn_capture *a = atn_run_capture(o->original);
    o->guesses = g_array_new(FALSE, TRUE, sizeof(AtnWhatifGuess));
    g_array_set_clear_func(o->guesses, guess_clear);
    gboolean ok = TRUE;
    if (atn_model_is_causal(m)) {
        ok = add_guess(o->guesses, m, a, b, atn_result_get_last_position(r), -1, TRUE, &err);
    } else if (atn_model_has_mlm_head(m)) {
        gboolean any_mask = FALSE;
        for (int i = 0; i < a->n; i++)
            any_mask |= a->enc->tokens[i].role == ATN_TOKEN_MASK;
        for (int i = 0; ok && i < a->n; i++) {
            const atn_token *t = &a->enc->tokens[i];
            if (any_mask ? t->role != ATN_TOKEN_MASK : (t->special || !a->enc->mask[i]))
                continue;
            ok = add_guess(o->guesses, m, a, b, i, any_mask ? -1 : a->enc->ids[i], FALSE, &err);
        }
    }
    if (!ok)
        o->error = g_strdup(err.message);
    return o;
}

/* The worker (at nice 10 as "whatif": it runs the model twice, typing comes first). */
static gpointer compare_work(gpointer data, GCancellable *cancellable, GError **error) {
    return compare(data, cancellable);
}

static void show_comparison(AtnWhatifView *self);

static void set_shown(AtnWhatifView *self, diff_out *o) {
    diff_out *old = self->shown;   /* freed once the heatmaps no longer show its cells */
    self->shown = o;
    show_comparison(self);
    diff_out_free(old);
}

/* The comparison still awaited (atn_worker: self->cancel already cleared); takes o. */
static void compare_done(gpointer owner, gpointer answer, const GError *error, gpointer job) {
    AtnWhatifView *self = owner;
    diff_out *o = answer;
    if (error || !self->session) {   /* cancelled */
        diff_out_free(o);
        return;
    }
    self->busy = FALSE;
    if (o && o->result == atn_session_get_result(self->session))
        set_shown(self, o);
    else
        diff_out_free(o);
}

static void compare_start(AtnWhatifView *self) {
    atn_worker_cancel(&self->cancel);
    self->busy = FALSE;
    AtnResult *r = self->session ? atn_session_get_result(self->session) : NULL;
    if (!r || !atn_whatif_of_result(r)) {
        set_shown(self, NULL);
        return;
    }
    if (atn_model_handle_is_toy(atn_result_get_model(r))) {
        /* toy models run on the main thread (and may be edited there) */
        set_shown(self, compare(r, NULL));
        return;
    }
    self->busy = TRUE;
    atn_worker_start_fallible(self, &self->cancel, ATN_WORKER_NICE | ATN_WORKER_TAKE, "whatif", compare_work,
                              g_object_ref(r), g_object_unref, (GDestroyNotify)diff_out_free, compare_done);
    show_comparison(self);
}

/* ---- showing it ------------------------------------------------------------------------------ */

static void free_labels(AtnWhatifView *self) {
    g_clear_pointer(&self->row_labels, g_strfreev);
    g_clear_pointer(&self->col_labels, g_strfreev);
}

static void show_map(AtnWhatifView *self) {
    if (!self->n_layers) {
        atn_heatmap_set_matrix(self->map, NULL, NULL, 0, 0, NULL, NULL, NULL);
        return;
    }
    gboolean max_abs = gtk_drop_down_get_selected(self->metric_drop) == 1;
    const float *v = self->zeros;
    if (self->shown && self->shown->diff && self->shown->diff->n_layers == self->n_layers &&
        self->shown->diff->n_heads == self->n_heads)
        v = max_abs ? self->shown->diff->max_abs : self->shown->diff->js;
    atn_heatmap_set_matrix(self->map, NULL, v, self->n_layers, self->n_heads, (const char *const *)self->row_labels,
                           (const char *const *)self->col_labels, NULL);
    atn_value_range range = {.automatic = false, .vmin = 0, .vmax = 1};
    atn_heatmap_set_range(self->map, &range);
    atn_heatmap_set_axes(self->map, _("layer"), _("head"), max_abs ? _("largest |Δ|") : _("JS distance"));
    /* the chosen heads, named in the title: the map's colours are the change */
    GString *t = g_string_new(max_abs ? _("Largest change of each head's attention")
                                      : _("Change of each head's attention (Jensen-Shannon distance)"));
    int count = 0;
    for (int i = 0; i < self->n_layers * self->n_heads; i++)
        count += self->chosen[i];
    if (count) {
        g_string_append(t, gtk_check_button_get_active(self->keep_check) ? _(" · kept: ") : _(" · off: "));
        int shown = 0;
        for (int l = 0; l < self->n_layers; l++)
            for (int h = 0; h < self->n_heads; h++)
                if (self->chosen[l * self->n_heads + h] && shown++ < 8)
                    g_string_append_printf(t, "%sL%d H%d", shown > 1 ? ", " : "", l, h);
        if (shown > 8)
            g_string_append(t, "…");
    }
    atn_heatmap_set_title(self->map, t->str);
    g_string_free(t, TRUE);
}

static void show_pair(AtnWhatifView *self) {
    AtnResult *r = self->session ? atn_session_get_result(self->session) : NULL;
    const atn_capture *a = self->shown && self->shown->diff ? atn_run_capture(self->shown->original) : NULL;
    if (!r || !a || self->shown->result != r) {
        for (int i = 0; i < 3; i++)
            atn_heatmap_set_matrix(self->pair[i], NULL, NULL, 0, 0, NULL, NULL, NULL);
        gtk_label_set_text(self->pair_label, "");
        return;
    }
    int layer = atn_session_get_layer(self->session), head = atn_session_get_head(self->session);
    int n = atn_result_get_n_tokens(r);
    if (layer >= a->n_layers || head >= a->n_heads || n != a->n)
        return;
    g_autofree float *old_before = self->before;   /* freed once the heatmap has the new one */
    self->before = a->attn ? NULL : g_try_new(float, (size_t)n * n);
    const float *before = atn_capture_head_read(a, layer, head, self->before, NULL);
    const float *after = atn_result_get_head(r, layer, head);
    if (!before || !after) {   /* out of memory making a head */
        for (int i = 0; i < 3; i++)
            atn_heatmap_set_matrix(self->pair[i], NULL, NULL, 0, 0, NULL, NULL, NULL);
        return;
    }
    g_autofree float *old_delta = self->delta;   /* freed once the heatmap has the new one */
    self->delta = g_new(float, (size_t)n * n);
    for (size_t i = 0; i < (size_t)n * n; i++)
        self->delta[i] = after[i] - before[i];
    const char *const *tok = atn_result_get_tokens(r);
    const int32_t *mask = atn_result_get_mask(r);
    /* the original's cells are kept alive by the comparison (self->shown), the changed ones by r */
    atn_heatmap_set_matrix(self->pair[0], NULL, before, n, n, tok, tok, mask);
    atn_heatmap_set_matrix(self->pair[1], G_OBJECT(r), after, n, n, tok, tok, mask);
    atn_heatmap_set_matrix(self->pair[2], G_OBJECT(r), self->delta, n, n, tok, tok, mask);
    for (int i = 0; i < 3; i++)
        atn_heatmap_set_split(self->pair[i], atn_result_get_split(r));   /* a pair's A/B boundary */
    atn_heatmap_set_title(self->pair[0], _("Original"));
    atn_heatmap_set_title(self->pair[1], _("Changed"));
    atn_heatmap_set_title(self->pair[2], _("Changed − original"));
    atn_value_range unit = {.automatic = false, .vmin = 0, .vmax = 1};
    atn_heatmap_set_range(self->pair[0], &unit);
    atn_heatmap_set_range(self->pair[1], &unit);
    float m = 1e-6f;
    for (size_t i = 0; i < (size_t)n * n; i++)
        m = fmaxf(m, fabsf(self->delta[i]));
    atn_value_range sym = {.automatic = false, .vmin = -m, .vmax = m};
    atn_heatmap_set_range(self->pair[2], &sym);
    atn_heatmap_set_colormap(self->pair[2], ATN_CMAP_RDBU);
    /* its colours are differences of weights, not weights */
    atn_heatmap_set_axes(self->pair[2], _("query"), _("key"), _("Δ weight"));
    const atn_capture_diff *d = self->shown->diff;
    size_t c = (size_t)layer * d->n_heads + head;
    g_autofree char *text = g_strdup_printf(_("Layer %d · head %d: JS distance %.4f · largest |Δ| %.4f"), layer,
                                            head, (double)d->js[c], (double)d->max_abs[c]);
    gtk_label_set_text(self->pair_label, text);
}

/* The cost chart's variants for the result's length, the model's shape and the mask chosen
 * on the left (its window, global tokens and stride are the variants' parameters). */
static void update_cost(AtnWhatifView *self) {
    AtnResult *r = self->session ? atn_session_get_result(self->session) : NULL;
    self->n_cost_rows = 0;
    if (r) {
        const atn_capture *c = atn_result_get_capture(r);
        AtnWhatif *w = atn_whatif_of_result(r);
        atn_interventions iv;
        atn_whatif_for_tokens(w, c->n_layers, c->n_heads, c->n, &iv);
        int window = gtk_check_button_get_active(self->window_check)
                         ? gtk_spin_button_get_value_as_int(self->window_spin) : -1;
        int strided = gtk_check_button_get_active(self->strided_check)
                          ? gtk_spin_button_get_value_as_int(self->strided_spin) : 0;
        atn_error err = {0};
        int count = atn_cost_variants(c->n, c->n_layers, c->n_heads, c->d_head, 32, window,
                                      window >= 0 ? iv.global_tokens : NULL, window >= 0 ? iv.n_global : 0, strided,
                                      w ? &iv : NULL, self->cost_rows, &err);
        self->n_cost_rows = count > 0 ? count : 0;
    }
    gtk_widget_queue_draw(GTK_WIDGET(self->cost_area));
}

static void draw_cost(GtkDrawingArea *area, cairo_t *cr, int width, int height, gpointer data) {
    AtnWhatifView *self = data;
    if (!self->n_cost_rows)
        return;
    atn_render_style st;
    atn_render_style_for_widget(GTK_WIDGET(area), self->font_scale, &st);
    g_autofree char *title = g_strdup_printf(_("What the attention costs at %d tokens"), self->cost_rows[0].cost.n);
    atn_cost_chart_spec spec = {.rows = self->cost_rows, .n_rows = self->n_cost_rows, .title = title, .style = &st};
    atn_render_cost_chart(cr, &spec, width, height);
}

static void show_comparison(AtnWhatifView *self) {
    AtnResult *r = self->session ? atn_session_get_result(self->session) : NULL;
    AtnWhatif *w = r ? atn_whatif_of_result(r) : NULL;
    show_map(self);
    show_pair(self);
    if (!r) {
        gtk_label_set_text(self->status_label, _("Open a model to change it."));
    } else if (!atn_result_has_weights(r)) {
        gtk_label_set_text(self->status_label, _("What-if is off: it runs the model again with the changes, and an "
                                                 "attention file has no weights to run."));
    } else if (atn_result_is_encdec(r)) {   /* the engine refuses their interventions by name */
        g_autofree char *why = atn_encdec_view_off_text(_("What-if"));
        gtk_label_set_text(self->status_label, why);
    } else if (!w) {
        gtk_label_set_text(self->status_label,
                           _("Nothing is changed: every view shows the original model. Choose a change on the "
                             "left, or click a head in the map to switch it off."));
    } else if (self->busy) {
        gtk_label_set_text(self->status_label, _("Running the original model to compare…"));
    } else if (self->shown && self->shown->error) {
        g_autofree char *t = g_strdup_printf(_("The comparison failed: %s"), self->shown->error);
        gtk_label_set_text(self->status_label, t);
    } else {
        gtk_label_set_text(self->status_label,
                           _("Every view shows the changed model; here it is compared with the original on "
                             "the same tokens."));
    }
    g_autofree char *desc = atn_whatif_describe(w);
    g_autofree char *summary = g_strdup_printf(_("Now: %s"), desc);
    gtk_label_set_text(self->summary_label, summary);
    g_auto(GStrv) args = atn_whatif_dup_cli_args(w);
    g_autofree char *joined = g_strjoinv(" ", args);
    g_autofree char *cli = w ? g_strdup_printf(_("The same on the command line: attnscope diff %s"), joined)
                             : g_strdup("");
    gtk_label_set_text(self->cli_label, cli);

    const atn_capture_diff *d = self->shown ? self->shown->diff : NULL;
    if (d) {
        GString *s = g_string_new(_("Hidden-state drift (1 − cos) after each layer:"));
        for (int l = 0; l <= d->n_layers; l++) {
            if (l == 0)
                g_string_append_printf(s, _(" embeddings %.4f"), (double)d->drift[0]);
            else
                g_string_append_printf(s, " · L%d %.4f", l - 1, (double)d->drift[l]);
        }
        gtk_label_set_text(self->drift_label, s->str);
        g_string_free(s, TRUE);
    } else {
        gtk_label_set_text(self->drift_label, "");
    }
    GString *g = g_string_new(NULL);
    if (d && self->shown->guesses && r) {
        const char *const *tok = atn_result_get_tokens(r);
        gboolean causal = atn_result_is_causal(r);
        for (guint i = 0; i < self->shown->guesses->len; i++) {
            const AtnWhatifGuess *q = &g_array_index(self->shown->guesses, AtnWhatifGuess, i);
            if (i)
                g_string_append(g, "\n\n");
            /* a heading line, then before and after each on its own line */
            if (causal)
                g_string_append_printf(g, _("After “%s”: the original guess %.4f → %.4f"), tok[q->position],
                                       q->p_before, q->p_after);
            else
                g_string_append_printf(g, _("“%s” (%d): the original word %.4f → %.4f"), tok[q->position],
                                       q->position, q->p_before, q->p_after);
            g_string_append_printf(g, "\n%s  %s\n%s  %s", _("before:"), q->before, _("after:"), q->after);
        }
    }
    gtk_label_set_text(self->guess_label, g->str);
    g_string_free(g, TRUE);
    update_cost(self);
}

/* ---- the changes ----------------------------------------------------------------------------- */

/* The controls' state as interventions, to the session. */
static void apply(AtnWhatifView *self) {
    if (self->syncing || !self->session)
        return;
    atn_interventions iv;
    atn_interventions_init(&iv);
    g_autofree uint8_t *off = NULL;
    gboolean any_chosen = FALSE;
    for (int i = 0; i < self->n_layers * self->n_heads; i++)
        any_chosen |= self->chosen[i];
    if (any_chosen) {
        size_t lh = (size_t)self->n_layers * self->n_heads;
        off = g_memdup2(self->chosen, lh);
        if (gtk_check_button_get_active(self->keep_check))   /* keep only: the others in those layers off */
            for (int l = 0; l < self->n_layers; l++) {
                uint8_t *row = off + (size_t)l * self->n_heads;
                gboolean named = FALSE;
                for (int h = 0; h < self->n_heads; h++)
                    named |= row[h];
                for (int h = 0; named && h < self->n_heads; h++)
                    row[h] = !row[h];
            }
        iv.heads_off = off;
        iv.head_mode = gtk_drop_down_get_selected(self->mode_drop) == 1 ? ATN_HEAD_UNIFORM : ATN_HEAD_ZERO;
    }
    iv.causal = gtk_check_button_get_active(self->causal_check);
    if (gtk_check_button_get_active(self->window_check)) {
        iv.window = gtk_spin_button_get_value_as_int(self->window_spin);
        iv.global_tokens = (const int32_t *)self->global_tokens->data;
        iv.n_global = (int32_t)self->global_tokens->len;
    }
    if (gtk_check_button_get_active(self->strided_check))
        iv.strided = gtk_spin_button_get_value_as_int(self->strided_spin);
    iv.hide_tokens = (const int32_t *)self->hide_tokens->data;
    iv.n_hide = (int32_t)self->hide_tokens->len;
    /* the layers the masks apply in, read by the engine's one parser (as --mask-layers) */
    g_autofree uint8_t *layers = NULL;
    const char *ltext = gtk_editable_get_text(GTK_EDITABLE(self->layers_entry));
    while (*ltext == ' ')
        ltext++;
    gtk_widget_remove_css_class(GTK_WIDGET(self->layers_entry), "error");
    gtk_widget_set_tooltip_text(GTK_WIDGET(self->layers_entry), _("For example 0,2-3; empty: every layer"));
    if (*ltext && self->n_layers > 0) {
        layers = g_new0(uint8_t, self->n_layers);
        atn_error err = {0};
        if (atn_parse_layer_list(ltext, self->n_layers, layers, &err) == ATN_OK) {
            iv.mask_layers = layers;
        } else {   /* said at the entry; the masks apply in every layer meanwhile */
            g_autofree char *why = atn_error_text(&err);
            gtk_widget_add_css_class(GTK_WIDGET(self->layers_entry), "error");
            gtk_widget_set_tooltip_text(GTK_WIDGET(self->layers_entry), why);
        }
    }
    gboolean toy = self->model && atn_model_handle_is_toy(self->model);
    iv.alibi = gtk_check_button_get_active(self->alibi_check);
    iv.no_positions = !toy && gtk_check_button_get_active(self->nopos_check);
    if (!toy && gtk_check_button_get_active(self->shuffle_check)) {
        iv.shuffle = true;
        iv.shuffle_seed = (uint64_t)gtk_spin_button_get_value_as_int(self->seed_spin);
    }
    iv.temperature = (float)gtk_spin_button_get_value(self->temp_spin);
    g_autofree int8_t *sliding = NULL;
    atn_whatif_rotary_read(self->rotary, self->n_layers, &iv, &sliding);
    g_autoptr(AtnWhatif) w = atn_whatif_new(&iv, self->n_layers, self->n_heads);
    atn_whatif_unref(self->applied);
    self->applied = atn_whatif_ref(w);
    atn_session_set_whatif(self->session, w);
    show_map(self);
}

static void update_sensitivity(AtnWhatifView *self) {
    gtk_widget_set_sensitive(GTK_WIDGET(self->window_spin), gtk_check_button_get_active(self->window_check));
    gtk_widget_set_sensitive(GTK_WIDGET(self->global_box), gtk_check_button_get_active(self->window_check));
    gtk_widget_set_sensitive(GTK_WIDGET(self->strided_spin), gtk_check_button_get_active(self->strided_check));
    gtk_widget_set_sensitive(GTK_WIDGET(self->seed_spin), gtk_check_button_get_active(self->shuffle_check));
}

static void on_control_changed(AtnWhatifView *self) {
    update_sensitivity(self);
    apply(self);
}

static void make_chips(AtnWhatifView *self, AtnResult *r);

/* The controls set from changes made elsewhere (the Model view's head menu): the session's
 * changes are the one source, this page shows them.  Heads are shown as switched off
 * (keep-only is a way of choosing them here, not a state). */
static void sync_from(AtnWhatifView *self, AtnWhatif *w) {
    const atn_interventions *iv = atn_whatif_get(w);
    atn_interventions none;
    atn_interventions_init(&none);
    if (!iv)
        iv = &none;
    self->syncing = TRUE;
    size_t lh = (size_t)self->n_layers * self->n_heads;
    gboolean shape = w && atn_whatif_get_n_layers(w) == self->n_layers && atn_whatif_get_n_heads(w) == self->n_heads;
    if (self->chosen)
        memset(self->chosen, 0, lh);
    if (self->chosen && iv->heads_off && shape)
        memcpy(self->chosen, iv->heads_off, lh);
    gtk_check_button_set_active(self->keep_check, FALSE);
    gtk_drop_down_set_selected(self->mode_drop, iv->head_mode == ATN_HEAD_UNIFORM ? 1 : 0);
    gtk_check_button_set_active(self->causal_check, iv->causal);
    gtk_check_button_set_active(self->window_check, iv->window >= 0);
    if (iv->window >= 0)
        gtk_spin_button_set_value(self->window_spin, iv->window);
    gtk_check_button_set_active(self->strided_check, iv->strided > 0);
    if (iv->strided > 0)
        gtk_spin_button_set_value(self->strided_spin, iv->strided);
    g_array_set_size(self->global_tokens, 0);
    g_array_append_vals(self->global_tokens, iv->global_tokens, (guint)MAX(iv->n_global, 0));
    g_array_set_size(self->hide_tokens, 0);
    g_array_append_vals(self->hide_tokens, iv->hide_tokens, (guint)MAX(iv->n_hide, 0));
    g_autofree char *layers = iv->mask_layers && shape ? atn_whatif_format_layers(iv->mask_layers, self->n_layers, TRUE)
                                                       : g_strdup("");
    gtk_editable_set_text(GTK_EDITABLE(self->layers_entry), layers);
    gtk_check_button_set_active(self->alibi_check, iv->alibi);
    gtk_check_button_set_active(self->nopos_check, iv->no_positions);
    gtk_check_button_set_active(self->shuffle_check, iv->shuffle);
    if (iv->shuffle)
        gtk_spin_button_set_value(self->seed_spin, (double)iv->shuffle_seed);
    gtk_spin_button_set_value(self->temp_spin, iv->temperature > 0 ? iv->temperature : 1.0);
    atn_whatif_rotary_sync(self->rotary, shape ? iv : NULL, self->n_layers);
    self->syncing = FALSE;
    atn_whatif_unref(self->applied);
    self->applied = atn_whatif_ref(w);
    make_chips(self, self->session ? atn_session_get_result(self->session) : NULL);
    update_sensitivity(self);
    show_map(self);
}

static void on_whatif_changed(AtnSession *s, AtnWhatifView *self) {
    AtnWhatif *w = atn_session_get_whatif(s);
    if (w != self->applied)
        sync_from(self, w);
}

gboolean atn_whatif_view_get_head_chosen(AtnWhatifView *self, int layer, int head) {
    g_return_val_if_fail(ATN_IS_WHATIF_VIEW(self), FALSE);
    return layer >= 0 && layer < self->n_layers && head >= 0 && head < self->n_heads &&
           self->chosen[layer * self->n_heads + head];
}

void atn_whatif_view_toggle_head(AtnWhatifView *self, int layer, int head) {
    g_return_if_fail(ATN_IS_WHATIF_VIEW(self));
    if (layer < 0 || layer >= self->n_layers || head < 0 || head >= self->n_heads)
        return;
    uint8_t v = !self->chosen[layer * self->n_heads + head];
    if (gtk_check_button_get_active(self->every_check))
        for (int l = 0; l < self->n_layers; l++)
            self->chosen[l * self->n_heads + head] = v;
    else
        self->chosen[layer * self->n_heads + head] = v;
    atn_session_select_head(self->session, layer, head);
    apply(self);
}

static void on_map_clicked(AtnHeatmap *map, int row, int col, AtnWhatifView *self) {
    atn_whatif_view_toggle_head(self, row, col);
}

static void on_chip_toggled(GtkToggleButton *b, AtnWhatifView *self) {
    if (self->syncing)
        return;
    GArray *list = g_object_get_data(G_OBJECT(b), "atn-list");
    int32_t tok = GPOINTER_TO_INT(g_object_get_data(G_OBJECT(b), "atn-token"));
    for (guint i = 0; i < list->len; i++)
        if (g_array_index(list, int32_t, i) == tok) {
            g_array_remove_index(list, i);
            break;
        }
    if (gtk_toggle_button_get_active(b)) {
        guint at = 0;
        while (at < list->len && g_array_index(list, int32_t, at) < tok)
            at++;
        g_array_insert_val(list, at, tok);
    }
    apply(self);
}

/* The token chips of both rows, for the result's tokens (kept when the tokens are as many). */
static void make_chips(AtnWhatifView *self, AtnResult *r) {
    int n = r ? atn_result_get_n_tokens(r) : 0;
    const char *const *tok = r ? atn_result_get_tokens(r) : NULL;
    self->syncing = TRUE;
    GtkFlowBox *boxes[2] = {self->global_box, self->hide_box};
    GArray *lists[2] = {self->global_tokens, self->hide_tokens};
    for (int b = 0; b < 2; b++) {
        /* positions beyond the new text go */
        while (lists[b]->len && g_array_index(lists[b], int32_t, lists[b]->len - 1) >= n)
            g_array_set_size(lists[b], lists[b]->len - 1);
        GtkWidget *child;
        while ((child = gtk_widget_get_first_child(GTK_WIDGET(boxes[b]))))
            gtk_flow_box_remove(boxes[b], child);
        if (n >= ATN_TOKEN_SPANS_MIN) {   /* 512+ tokens: positions and spans typed, not n chips */
            GtkWidget *entry = atn_token_spans_entry_new(lists[b], n, G_CALLBACK(apply), self);
            gtk_flow_box_append(boxes[b], entry);
            gtk_flow_box_append(boxes[b], atn_token_spans_picker_new(entry, tok));   /* a span by its ends */
            continue;
        }
        for (int i = 0; i < n; i++) {
            GtkWidget *chip = gtk_toggle_button_new_with_label(tok[i]);
            gtk_widget_add_css_class(chip, "whatif-chip");
            g_object_set_data(G_OBJECT(chip), "atn-list", lists[b]);
            g_object_set_data(G_OBJECT(chip), "atn-token", GINT_TO_POINTER(i));
            for (guint k = 0; k < lists[b]->len; k++)
                if (g_array_index(lists[b], int32_t, k) == i)
                    gtk_toggle_button_set_active(GTK_TOGGLE_BUTTON(chip), TRUE);
            g_autofree char *tip = g_strdup_printf(_("Token %d"), i);
            gtk_widget_set_tooltip_text(chip, tip);
            g_signal_connect(chip, "toggled", G_CALLBACK(on_chip_toggled), self);
            gtk_flow_box_append(boxes[b], chip);
        }
    }
    self->n_chip_tokens = n;
    self->syncing = FALSE;
}

static void reset_controls(AtnWhatifView *self) {
    self->syncing = TRUE;
    memset(self->chosen, 0, (size_t)self->n_layers * self->n_heads);
    g_array_set_size(self->global_tokens, 0);
    g_array_set_size(self->hide_tokens, 0);
    gtk_drop_down_set_selected(self->mode_drop, 0);
    GtkCheckButton *checks[] = {self->keep_check,   self->every_check, self->causal_check, self->window_check,
                                self->strided_check, self->alibi_check, self->nopos_check,  self->shuffle_check};
    for (guint i = 0; i < G_N_ELEMENTS(checks); i++)
        gtk_check_button_set_active(checks[i], FALSE);
    gtk_spin_button_set_value(self->temp_spin, 1.0);
    gtk_editable_set_text(GTK_EDITABLE(self->layers_entry), "");
    atn_whatif_rotary_reset(self->rotary);
    self->syncing = FALSE;
    AtnResult *r = self->session ? atn_session_get_result(self->session) : NULL;
    make_chips(self, r);
    on_control_changed(self);
}

static void on_reset(GtkButton *b, AtnWhatifView *self) { reset_controls(self); }

/* A new model: the heads chosen were for another one. */
static void use_model(AtnWhatifView *self, AtnResult *r) {
    AtnModelHandle *m = atn_result_get_model(r);
    int L = atn_result_get_n_layers(r), H = atn_result_get_n_heads(r);
    if (m == self->model && L == self->n_layers && H == self->n_heads)
        return;
    g_set_object(&self->model, m);
    self->n_layers = L;
    self->n_heads = H;
    g_free(self->chosen);
    self->chosen = g_new0(uint8_t, (size_t)L * H);
    g_free(self->zeros);
    self->zeros = g_new0(float, (size_t)L * H);
    free_labels(self);
    self->row_labels = g_new0(char *, L + 1);
    for (int l = 0; l < L; l++)
        self->row_labels[l] = g_strdup_printf("L%d", l);
    self->col_labels = g_new0(char *, H + 1);
    for (int h = 0; h < H; h++)
        self->col_labels[h] = g_strdup_printf("H%d", h);
    gboolean toy = atn_model_handle_is_toy(m);
    gtk_widget_set_sensitive(self->pos_box, !toy);
    atn_whatif_rotary_set_model(self->rotary, atn_model_handle_get_model(m));
    /* an attention file: nothing to run, so no changes (the status line says why) */
    gtk_widget_set_sensitive(gtk_paned_get_start_child(GTK_PANED(self->paned)),
                             atn_model_handle_has_weights(m) &&
                                 !atn_model_is_encoder_decoder(atn_model_handle_get_model(m)));   /* nor T5, BART */
    /* the changes stay as far as they mean something for this model: a new model starts
       from the original (its heads are others) */
    if (self->session && atn_session_get_whatif(self->session))
        reset_controls(self);
}

static void on_result(AtnSession *s, GParamSpec *p, AtnWhatifView *self) {
    AtnResult *r = atn_session_get_result(s);
    if (r) {
        use_model(self, r);
        if (atn_result_get_n_tokens(r) != self->n_chip_tokens)
            make_chips(self, r);
    }
    compare_start(self);
}

static void on_selection(AtnSession *s, GParamSpec *p, AtnWhatifView *self) { show_pair(self); }

/* ---- building the page ----------------------------------------------------------------------- */

static GtkWidget *heading(const char *text) {
    GtkWidget *l = gtk_label_new(text);
    gtk_widget_add_css_class(l, "heading");
    gtk_label_set_xalign(GTK_LABEL(l), 0);
    gtk_widget_set_margin_top(l, 8);
    return l;
}

static GtkWidget *note(const char *text) {
    GtkWidget *l = gtk_label_new(text);
    gtk_label_set_wrap(GTK_LABEL(l), TRUE);
    gtk_label_set_xalign(GTK_LABEL(l), 0);
    gtk_label_set_max_width_chars(GTK_LABEL(l), 40);
    gtk_widget_add_css_class(l, "dim-label");
    return l;
}

/* A label and its control: one line, or the label above the control when the pane is
 * narrower than both (a large text size), so the pane is not as wide as its longest row. */
static GtkWidget *label_row(const char *text, GtkWidget **label) {
    GtkWidget *row = atn_wrap_box_new(6);
    GtkWidget *l = gtk_label_new_with_mnemonic(text);
    gtk_label_set_xalign(GTK_LABEL(l), 0);
    gtk_widget_set_parent(l, row);
    if (label)
        *label = l;
    return row;
}

/* Adds w at the end of a row (a GtkBox or an AtnWrapBox). */
static void row_add(GtkWidget *row, GtkWidget *w) {
    if (GTK_IS_BOX(row))
        gtk_box_append(GTK_BOX(row), w);
    else
        gtk_widget_set_parent(w, row);
}

static GtkCheckButton *check(AtnWhatifView *self, GtkWidget *box, const char *label) {
    GtkWidget *c = gtk_check_button_new_with_mnemonic(label);
    /* its own label (the last child) wraps too */
    GtkWidget *l = gtk_widget_get_last_child(c);
    if (GTK_IS_LABEL(l)) {
        gtk_label_set_wrap(GTK_LABEL(l), TRUE);
        gtk_label_set_wrap_mode(GTK_LABEL(l), PANGO_WRAP_WORD_CHAR);
    }
    g_signal_connect_swapped(c, "toggled", G_CALLBACK(on_control_changed), self);
    gtk_box_append(GTK_BOX(box), c);
    return GTK_CHECK_BUTTON(c);
}

static GtkSpinButton *spin(AtnWhatifView *self, GtkWidget *row, double lo, double hi, double step, double value,
                           int digits) {
    GtkWidget *s = gtk_spin_button_new_with_range(lo, hi, step);
    gtk_spin_button_set_digits(GTK_SPIN_BUTTON(s), (guint)digits);
    gtk_spin_button_set_value(GTK_SPIN_BUTTON(s), value);
    g_signal_connect_swapped(s, "value-changed", G_CALLBACK(on_control_changed), self);
    row_add(row, s);
    return GTK_SPIN_BUTTON(s);
}

static GtkWidget *hbox(void) { return gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 6); }

static GtkFlowBox *chip_box(void) {
    GtkWidget *f = gtk_flow_box_new();
    gtk_flow_box_set_selection_mode(GTK_FLOW_BOX(f), GTK_SELECTION_NONE);
    gtk_flow_box_set_max_children_per_line(GTK_FLOW_BOX(f), 64);
    gtk_flow_box_set_row_spacing(GTK_FLOW_BOX(f), 2);
    gtk_flow_box_set_column_spacing(GTK_FLOW_BOX(f), 2);
    return GTK_FLOW_BOX(f);
}

static GtkWidget *build_controls(AtnWhatifView *self) {
    GtkWidget *box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 4);
    gtk_widget_set_margin_start(box, 12);
    gtk_widget_set_margin_end(box, 12);
    gtk_widget_set_margin_bottom(box, 12);

    gtk_box_append(GTK_BOX(box), heading(_("Heads")));
    gtk_box_append(GTK_BOX(box), note(_("Click a head in the map to switch it off; click it again to switch it "
                                        "back on.")));
    GtkWidget *row = label_row(_("A head switched off:"), NULL);
    const char *modes[] = {N_("outputs zero"), N_("attends uniformly"), NULL};
    const char *tmodes[] = {_(modes[0]), _(modes[1]), NULL};
    self->mode_drop = GTK_DROP_DOWN(gtk_drop_down_new_from_strings(tmodes));
    g_signal_connect_swapped(self->mode_drop, "notify::selected", G_CALLBACK(on_control_changed), self);
    row_add(row, GTK_WIDGET(self->mode_drop));
    gtk_box_append(GTK_BOX(box), row);
    self->keep_check = check(self, box, _("_Keep only the chosen heads (in their layers)"));
    self->every_check = check(self, box, _("A click chooses the head in _every layer"));

    gtk_box_append(GTK_BOX(box), heading(_("Mask")));
    self->causal_check = check(self, box, _("_Causal: each token sees only those before it"));
    row = hbox();
    self->window_check = check(self, row, _("Sliding _window, each side:"));
    self->window_spin = spin(self, row, 0, 4096, 1, 2, 0);
    gtk_box_append(GTK_BOX(box), row);
    gtk_box_append(GTK_BOX(box), note(_("Global tokens (Longformer: they see and are seen by every token):")));
    self->global_box = chip_box();
    gtk_box_append(GTK_BOX(box), GTK_WIDGET(self->global_box));
    row = hbox();
    self->strided_check = check(self, row, _("_Strided (block-sparse), step:"));
    self->strided_spin = spin(self, row, 1, 4096, 1, 2, 0);
    gtk_box_append(GTK_BOX(box), row);
    gtk_box_append(GTK_BOX(box), note(_("Hide these keys from every query:")));
    self->hide_box = chip_box();
    gtk_box_append(GTK_BOX(box), GTK_WIDGET(self->hide_box));
    GtkWidget *ll;
    row = label_row(_("Masks only in _layers:"), &ll);
    self->layers_entry = GTK_ENTRY(gtk_entry_new());
    gtk_editable_set_width_chars(GTK_EDITABLE(self->layers_entry), 8);
    gtk_widget_set_hexpand(GTK_WIDGET(self->layers_entry), TRUE);
    gtk_entry_set_placeholder_text(self->layers_entry, _("every layer"));
    gtk_widget_set_tooltip_text(GTK_WIDGET(self->layers_entry), _("For example 0,2-3; empty: every layer"));
    gtk_label_set_mnemonic_widget(GTK_LABEL(ll), GTK_WIDGET(self->layers_entry));
    g_signal_connect_swapped(self->layers_entry, "changed", G_CALLBACK(on_control_changed), self);
    row_add(row, GTK_WIDGET(self->layers_entry));
    gtk_box_append(GTK_BOX(box), row);

    gtk_box_append(GTK_BOX(box), heading(_("Positions")));
    self->alibi_check = check(self, box, _("_ALiBi: scores minus slope × distance"));
    self->pos_box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 4);
    self->nopos_check = check(self, self->pos_box, _("_No position embeddings"));
    row = hbox();
    self->shuffle_check = check(self, row, _("S_huffle the word order, seed:"));
    self->seed_spin = spin(self, row, 0, 1e9, 1, 7, 0);
    gtk_box_append(GTK_BOX(self->pos_box), row);
    gtk_box_append(GTK_BOX(box), self->pos_box);
    self->rotary = atn_whatif_rotary_new(G_CALLBACK(on_control_changed), self);
    gtk_box_append(GTK_BOX(box), atn_whatif_rotary_widget(self->rotary));

    gtk_box_append(GTK_BOX(box), heading(_("Softmax")));
    row = label_row(_("Temperature (scores ÷ T):"), NULL);
    self->temp_spin = spin(self, row, 0.05, 100, 0.05, 1, 2);
    gtk_box_append(GTK_BOX(box), row);

    self->reset_button = GTK_BUTTON(gtk_button_new_with_mnemonic(_("_Restore the original model")));
    GtkWidget *rl = gtk_button_get_child(self->reset_button);
    if (GTK_IS_LABEL(rl)) {   /* wraps in a narrow pane */
        gtk_label_set_wrap(GTK_LABEL(rl), TRUE);
        gtk_label_set_justify(GTK_LABEL(rl), GTK_JUSTIFY_CENTER);
    }
    gtk_widget_set_margin_top(GTK_WIDGET(self->reset_button), 12);
    g_signal_connect(self->reset_button, "clicked", G_CALLBACK(on_reset), self);
    gtk_box_append(GTK_BOX(box), GTK_WIDGET(self->reset_button));
    self->summary_label = GTK_LABEL(note(""));
    self->cli_label = GTK_LABEL(note(""));
    gtk_label_set_selectable(self->cli_label, TRUE);
    gtk_box_append(GTK_BOX(box), GTK_WIDGET(self->summary_label));
    gtk_box_append(GTK_BOX(box), GTK_WIDGET(self->cli_label));

    GtkWidget *scroll = gtk_scrolled_window_new();
    gtk_scrolled_window_set_policy(GTK_SCROLLED_WINDOW(scroll), GTK_POLICY_NEVER, GTK_POLICY_AUTOMATIC);
    gtk_scrolled_window_set_child(GTK_SCROLLED_WINDOW(scroll), box);
    gtk_widget_set_size_request(scroll, 320, -1);
    return scroll;
}

static void on_metric(GtkDropDown *d, GParamSpec *p, AtnWhatifView *self) { show_map(self); }

static GtkLabel *wrap_label(void) {
    GtkWidget *l = gtk_label_new("");
    gtk_label_set_wrap(GTK_LABEL(l), TRUE);
    gtk_label_set_xalign(GTK_LABEL(l), 0);
    return GTK_LABEL(l);
}

static GtkWidget *build_effect(AtnWhatifView *self) {
    GtkWidget *box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 6);
    gtk_widget_set_margin_start(box, 12);
    gtk_widget_set_margin_end(box, 12);
    gtk_widget_set_margin_top(box, 8);
    gtk_widget_set_margin_bottom(box, 8);
    self->status_label = wrap_label();
    gtk_box_append(GTK_BOX(box), GTK_WIDGET(self->status_label));
    /* the label over its choice when the pane is narrow */
    GtkWidget *row = atn_wrap_box_new(6);
    GtkWidget *ml = gtk_label_new(_("Change per head:"));
    gtk_widget_set_parent(ml, row);
    const char *metrics[] = {_("Jensen-Shannon distance"), _("largest |Δ|"), NULL};
    self->metric_drop = GTK_DROP_DOWN(gtk_drop_down_new_from_strings(metrics));
    g_signal_connect(self->metric_drop, "notify::selected", G_CALLBACK(on_metric), self);
    gtk_widget_set_parent(GTK_WIDGET(self->metric_drop), row);
    gtk_box_append(GTK_BOX(box), row);
    self->map = ATN_HEATMAP(atn_heatmap_new());
    gtk_widget_set_vexpand(GTK_WIDGET(self->map), TRUE);
    gtk_widget_set_size_request(GTK_WIDGET(self->map), -1, 220);
    atn_heatmap_set_min_label_scale(self->map, 0.6);   /* every layer's and head's label, smaller */
    g_signal_connect(self->map, "cell-clicked", G_CALLBACK(on_map_clicked), self);
    gtk_box_append(GTK_BOX(box), GTK_WIDGET(self->map));
    self->drift_label = wrap_label();
    gtk_box_append(GTK_BOX(box), GTK_WIDGET(self->drift_label));
    self->pair_label = wrap_label();
    gtk_box_append(GTK_BOX(box), GTK_WIDGET(self->pair_label));
    GtkWidget *pairs = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 6);
    gtk_box_set_homogeneous(GTK_BOX(pairs), TRUE);
    for (int i = 0; i < 3; i++) {
        self->pair[i] = ATN_HEATMAP(atn_heatmap_new());
        gtk_widget_set_hexpand(GTK_WIDGET(self->pair[i]), TRUE);
        gtk_widget_set_vexpand(GTK_WIDGET(self->pair[i]), TRUE);
        gtk_widget_set_size_request(GTK_WIDGET(self->pair[i]), 120, 200);
        /* as tall as wide: a third of the pane wide, the cells fill it (at 200 px high they were
           about 100 px across in a 1920-px window, issue 40) */
        atn_heatmap_set_height_for_width(self->pair[i], 1.0, 640);
        atn_heatmap_set_min_label_scale(self->pair[i], 0.6);   /* small multiples: every token's label, smaller */
        gtk_box_append(GTK_BOX(pairs), GTK_WIDGET(self->pair[i]));
    }
    gtk_box_append(GTK_BOX(box), pairs);
    self->guess_label = wrap_label();
    gtk_label_set_selectable(self->guess_label, TRUE);
    gtk_box_append(GTK_BOX(box), GTK_WIDGET(self->guess_label));
    self->cost_area = GTK_DRAWING_AREA(gtk_drawing_area_new());
    gtk_drawing_area_set_content_height(self->cost_area, 230);
    gtk_drawing_area_set_draw_func(self->cost_area, draw_cost, self, NULL);
    gtk_widget_set_margin_top(GTK_WIDGET(self->cost_area), 8);
    gtk_box_append(GTK_BOX(box), GTK_WIDGET(self->cost_area));
    /* sideways too when even its narrowest is wider than the pane (rather than cut at the
       right, unseen) */
    GtkWidget *scroll = gtk_scrolled_window_new();
    gtk_scrolled_window_set_policy(GTK_SCROLLED_WINDOW(scroll), GTK_POLICY_AUTOMATIC, GTK_POLICY_AUTOMATIC);
    gtk_scrolled_window_set_child(GTK_SCROLLED_WINDOW(scroll), box);
    gtk_widget_set_hexpand(scroll, TRUE);
    return scroll;
}

/* The controls take their natural width (their labels on one line), at least 360 px, but no
 * more than 40% of the page nor so much that the change pane beside them gets less than its
 * least width: at a large text size they wrap, so the change map keeps the room its title and
 * colour bar need.  Set again as the page's width or the text
 * size changes (a divider dragged stays until then). */
static void place_divider(AtnWhatifView *self) {
    int max = 0, nat = 0;
    g_object_get(self->paned, "max-position", &max, NULL);
    if (max <= 0)
        return;
    GtkWidget *controls = gtk_paned_get_start_child(GTK_PANED(self->paned));
    GtkWidget *effect = gtk_paned_get_end_child(GTK_PANED(self->paned));
    int effect_min = 0;
    gtk_widget_measure(gtk_scrolled_window_get_child(GTK_SCROLLED_WINDOW(controls)), GTK_ORIENTATION_HORIZONTAL, -1,
                       NULL, &nat, NULL, NULL);
    gtk_widget_measure(gtk_scrolled_window_get_child(GTK_SCROLLED_WINDOW(effect)), GTK_ORIENTATION_HORIZONTAL, -1,
                       &effect_min, NULL, NULL, NULL);
    /* and the effect pane its least width where the page has it (the paned keeps the controls'
       least width whatever is asked) */
    int want = MIN(MAX(360, (int)MIN(nat, 0.4 * max)), max - effect_min);
    if (gtk_paned_get_position(GTK_PANED(self->paned)) != want)
        gtk_paned_set_position(GTK_PANED(self->paned), want);
}

static void on_paned_max(GtkPaned *paned, GParamSpec *p, AtnWhatifView *self) { place_divider(self); }

static void atn_whatif_view_dispose(GObject *object) {
    AtnWhatifView *self = ATN_WHATIF_VIEW(object);
    atn_worker_cancel(&self->cancel);
    if (self->session)
        g_signal_handlers_disconnect_by_data(self->session, self);
    g_clear_object(&self->session);
    g_clear_pointer(&self->paned, gtk_widget_unparent);
    g_clear_pointer(&self->shown, diff_out_free);
    g_clear_object(&self->model);
    g_clear_pointer(&self->applied, atn_whatif_unref);
    G_OBJECT_CLASS(atn_whatif_view_parent_class)->dispose(object);
}

static void atn_whatif_view_finalize(GObject *object) {
    AtnWhatifView *self = ATN_WHATIF_VIEW(object);
    g_free(self->chosen);
    g_free(self->zeros);
    g_free(self->delta);
    g_free(self->before);
    free_labels(self);
    g_array_unref(self->global_tokens);
    g_array_unref(self->hide_tokens);
    atn_whatif_rotary_free(self->rotary);
    G_OBJECT_CLASS(atn_whatif_view_parent_class)->finalize(object);
}

static void atn_whatif_view_class_init(AtnWhatifViewClass *klass) {
    GtkWidgetClass *wc = GTK_WIDGET_CLASS(klass);
    G_OBJECT_CLASS(klass)->dispose = atn_whatif_view_dispose;
    G_OBJECT_CLASS(klass)->finalize = atn_whatif_view_finalize;
    gtk_widget_class_set_layout_manager_type(wc, GTK_TYPE_BIN_LAYOUT);
}

static void atn_whatif_view_init(AtnWhatifView *self) {
    self->global_tokens = g_array_new(FALSE, FALSE, sizeof(int32_t));
    self->hide_tokens = g_array_new(FALSE, FALSE, sizeof(int32_t));
    self->font_scale = 1.0;
    self->paned = gtk_paned_new(GTK_ORIENTATION_HORIZONTAL);
    gtk_paned_set_start_child(GTK_PANED(self->paned), build_controls(self));
    gtk_paned_set_end_child(GTK_PANED(self->paned), build_effect(self));
    gtk_paned_set_shrink_start_child(GTK_PANED(self->paned), FALSE);
    gtk_paned_set_resize_start_child(GTK_PANED(self->paned), FALSE);
    gtk_paned_set_position(GTK_PANED(self->paned), 360);
    g_signal_connect(self->paned, "notify::max-position", G_CALLBACK(on_paned_max), self);
    gtk_widget_set_parent(self->paned, GTK_WIDGET(self));
    on_control_changed(self);   /* sensitivity */
}

GtkWidget *atn_whatif_view_new(void) { return g_object_new(ATN_TYPE_WHATIF_VIEW, NULL); }

static void set_session(AtnWhatifView *self, AtnSession *session) {
    if (self->session)
        g_signal_handlers_disconnect_by_data(self->session, self);
    g_set_object(&self->session, session);
    if (session) {
        g_signal_connect(session, "notify::result", G_CALLBACK(on_result), self);
        g_signal_connect(session, "notify::layer", G_CALLBACK(on_selection), self);
        g_signal_connect(session, "notify::head", G_CALLBACK(on_selection), self);
        g_signal_connect(session, "whatif-changed", G_CALLBACK(on_whatif_changed), self);
        on_result(session, NULL, self);
    }
}

AtnHeatmap *atn_whatif_view_get_map(AtnWhatifView *self) {
    g_return_val_if_fail(ATN_IS_WHATIF_VIEW(self), NULL);
    return self->map;
}

AtnHeatmap *atn_whatif_view_get_pair(AtnWhatifView *self, int which) {
    g_return_val_if_fail(ATN_IS_WHATIF_VIEW(self) && which >= 0 && which < 3, NULL);
    return self->pair[which];
}

GtkWidget *atn_whatif_view_get_control(AtnWhatifView *self, const char *name) {
    g_return_val_if_fail(ATN_IS_WHATIF_VIEW(self) && name, NULL);
    const struct {
        const char *name;
        gpointer w;
    } c[] = {{"head-mode", self->mode_drop},       {"keep-only", self->keep_check},
             {"every-layer", self->every_check},   {"causal", self->causal_check},
             {"window", self->window_check},       {"strided", self->strided_check},
             {"alibi", self->alibi_check},         {"no-positions", self->nopos_check},
             {"shuffle", self->shuffle_check},     {"window-width", self->window_spin},
             {"strided-step", self->strided_spin}, {"seed", self->seed_spin},
             {"temperature", self->temp_spin},     {"metric", self->metric_drop},
             {"reset", self->reset_button},        {"global-chips", self->global_box},
             {"hide-chips", self->hide_box},       {"mask-layers", self->layers_entry}};
    for (guint i = 0; i < G_N_ELEMENTS(c); i++)
        if (!strcmp(c[i].name, name))
            return GTK_WIDGET(c[i].w);
    return atn_whatif_rotary_get_control(self->rotary, name);   /* rope-theta, sliding-on, ... */
}

const atn_capture_diff *atn_whatif_view_get_diff(AtnWhatifView *self) {
    g_return_val_if_fail(ATN_IS_WHATIF_VIEW(self), NULL);
    return self->shown && !self->busy ? self->shown->diff : NULL;
}

const atn_capture *atn_whatif_view_get_original(AtnWhatifView *self) {
    g_return_val_if_fail(ATN_IS_WHATIF_VIEW(self), NULL);
    return self->shown && self->shown->diff ? atn_run_capture(self->shown->original) : NULL;
}

const char *atn_whatif_view_get_status(AtnWhatifView *self) {
    g_return_val_if_fail(ATN_IS_WHATIF_VIEW(self), NULL);
    return gtk_label_get_text(self->status_label);
}

gboolean atn_whatif_view_get_busy(AtnWhatifView *self) {
    g_return_val_if_fail(ATN_IS_WHATIF_VIEW(self), FALSE);
    return self->busy;
}

const atn_cost_row *atn_whatif_view_get_cost(AtnWhatifView *self, int *count) {
    g_return_val_if_fail(ATN_IS_WHATIF_VIEW(self) && count, NULL);
    *count = self->n_cost_rows;
    return self->n_cost_rows ? self->cost_rows : NULL;
}

GtkWidget *atn_whatif_view_get_cost_area(AtnWhatifView *self) {
    g_return_val_if_fail(ATN_IS_WHATIF_VIEW(self), NULL);
    return GTK_WIDGET(self->cost_area);
}

int atn_whatif_view_get_n_guesses(AtnWhatifView *self) {
    g_return_val_if_fail(ATN_IS_WHATIF_VIEW(self), 0);
    return self->shown && self->shown->guesses ? (int)self->shown->guesses->len : 0;
}

const AtnWhatifGuess *atn_whatif_view_get_guess(AtnWhatifView *self, int i) {
    g_return_val_if_fail(ATN_IS_WHATIF_VIEW(self), NULL);
    if (i < 0 || i >= atn_whatif_view_get_n_guesses(self))
        return NULL;
    return &g_array_index(self->shown->guesses, AtnWhatifGuess, i);
}

/* ---- AtnFigureSource, AtnView ----------------------------------------------------------------- */

static AtnFigure *dup_figure(AtnFigureSource *source) {
    AtnWhatifView *self = ATN_WHATIF_VIEW(source);
    return self->n_layers ? atn_heatmap_dup_figure(self->map, "whatif-diff") : NULL;
}

static void figure_source_iface_init(AtnFigureSourceInterface *iface) { iface->dup_figure = dup_figure; }

static void view_set_session(AtnView *view, AtnSession *session) { set_session(ATN_WHATIF_VIEW(view), session); }

static void view_set_colormap(AtnView *view, atn_colormap cm) {
    AtnWhatifView *self = ATN_WHATIF_VIEW(view);
    self->cmap = cm;
    atn_heatmap_set_colormap(self->map, cm);
    atn_heatmap_set_colormap(self->pair[0], cm);
    atn_heatmap_set_colormap(self->pair[1], cm);
}

static void view_set_font_scale(AtnView *view, double scale) {
    AtnWhatifView *self = ATN_WHATIF_VIEW(view);
    self->font_scale = scale;
    atn_heatmap_set_font_scale(self->map, scale);
    gtk_widget_set_size_request(GTK_WIDGET(self->map), -1, (int)(220 * MAX(1.0, scale)));   /* its title and labels grow */
    for (int i = 0; i < 3; i++) {
        atn_heatmap_set_font_scale(self->pair[i], scale);
        atn_heatmap_set_height_for_width(self->pair[i], 1.0, (int)(640 * MAX(1.0, scale)));
    }
    place_divider(self);
}

ATN_VIEW_REGISTER(atn_whatif_view)

static void view_iface_init(AtnViewInterface *iface) {
    iface->set_session = view_set_session;
    iface->set_colormap = view_set_colormap;
    iface->set_font_scale = view_set_font_scale;
}
