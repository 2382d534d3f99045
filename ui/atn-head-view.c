/* AtnHeadView: one head's heatmap, its selectors and its token lines. */
#include "atn-head-view.h"
#include "atn-head-view-test.h"

#include "atn-view.h"
#include "atn-wrap-box.h"

#include <glib/gi18n.h>

#include "atn-encdec.h"
#include "atn-encdec-widgets.h"
#include "atn-figure.h"
#include "atn-head-methods.h"
#include "atn-fit-label.h"
#include "atn-head-view-scale.h"
#include "atn-head-mask.h"
#include "atn-labels.h"
#include "atn-prefs.h"
#include "atn-token-lines.h"
#include "atn-whatif.h"
#include "atn-head-words.h"

struct _AtnHeadView {
    GtkWidget parent_instance;
    GtkWidget *box;
    AtnStackPicker *stack_picker;   /* an encoder-decoder's stacks (atn-encdec.h) */
    GtkWidget *what_box, *scale_controls;   /* the "This head" line; the colour scale's controls on it */
    GtkAdjustment *layer_adj, *head_adj;
    AtnFitLabel *info_label;   /* the hovered cell, else the selected query: fitted into the row */
    AtnHeatmap *heatmap;
    AtnTokenLines *lines;
    GtkToggleButton *one_query_button;
    GtkCheckButton *fixed_scale_check, *all_lines_check;
    GtkButton *zoom_in_button, *zoom_out_button, *zoom_reset_button;
    GtkLabel *zoom_label, *legend_label;
    AtnFitLabel *what_label;   /* "This head — …": a new text needs only a draw (no new layout of the
                                  window), and it measures itself in the current font */
    GtkAdjustment *threshold_adj;
    AtnPrefs *prefs;
    AtnSession *session;
    gboolean syncing;   /* adjustments being set from the session */
    AtnHeadMethods *methods;   /* Raw / Norm / Rollout / Flow (atn-head-methods.c) */
    GtkCheckButton *words_check;   /* "Words": the head merged into words (atn-head-words.h) */
    GObject *words_owner;          /* holds the AtnHeadWords shown (the heatmap refs it too), or NULL */
    const AtnHeadWords *words;     /* borrowed from words_owner */
};

static void figure_source_iface_init(AtnFigureSourceInterface *iface);
static void view_iface_init(AtnViewInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE(AtnHeadView, atn_head_view, GTK_TYPE_WIDGET,
                              G_IMPLEMENT_INTERFACE(ATN_TYPE_FIGURE_SOURCE, figure_source_iface_init)
                              G_IMPLEMENT_INTERFACE(ATN_TYPE_VIEW, view_iface_init))

static void update_info(AtnHeadView *self, int row, int col) {
    AtnResult *r = self->session ? atn_session_get_result(self->session) : NULL;
    if (!r) {
        atn_fit_label_set_text(self->info_label, "", NULL);
        return;
    }
    g_autofree char *cell = atn_heatmap_dup_cell_text(self->heatmap, row, col);
    if (cell) {
        g_autofree char *shorter = atn_heatmap_dup_cell_text_short(self->heatmap, row, col);
        atn_fit_label_set_text(self->info_label, cell, (const char *const[]){shorter, NULL});
        return;
    }
    int q = atn_session_get_query(self->session);
    /* an encoder-decoder's decoder or cross head: the query rows are the target's */
    int stack = atn_session_get_stack(self->session), nq;
    const char *const *tokens = atn_result_get_stack_tokens(r, stack, FALSE);
    atn_encdec_dims(r, stack, NULL, NULL, &nq);
    tokens = tokens ? tokens : atn_result_get_tokens(r);
    const char *tok = q < nq ? tokens[q] : "";
    g_autofree char *text = g_strdup_printf(_("Query %d “%s” selected · click a row to select another"), q, tok);
    /* Translators: the same as "Query %d “%s” selected · click a row to select another", for a narrow window */
    g_autofree char *shorter = g_strdup_printf(_("Query %d “%s” selected"), q, tok);
    atn_fit_label_set_text(self->info_label, text, (const char *const[]){shorter, NULL});
}

/* ---- the "This head — …" line ------------------------------------------------------------ */

static void set_what(AtnHeadView *self, const char *text, const char *shorter) {
    atn_fit_label_set_text(self->what_label, text, (const char *const[]){shorter, NULL});
}

const char *atn_head_view_get_summary(AtnHeadView *self) {
    g_return_val_if_fail(ATN_IS_HEAD_VIEW(self), NULL);
    return atn_fit_label_get_text(self->what_label);
}

static void update_title(AtnHeadView *self) {
    AtnResult *r = atn_session_get_result(self->session);
    if (!r)
        return;
    g_autofree char *plain = g_strdup_printf(_("%s · layer %d · head %d"),
                                             atn_model_handle_get_name(atn_result_get_model(r)),
                                             atn_session_get_layer(self->session), atn_session_get_head(self->session));
    /* a changed model says so in the title, on screen and in every export */
    AtnWhatif *whatif = atn_whatif_of_result(r);
    g_autofree char *title = atn_whatif_title(whatif, plain);
    g_autofree char *shared = atn_label_layer_sharing(atn_model_handle_get_model(atn_result_get_model(r)),
                                                      atn_session_get_layer(self->session));
    GString *full = g_string_new(title);
    if (shared)   /* ALBERT: which stored weights this layer runs */
        g_string_append_printf(full, " · %s", shared);
    /* grouped-query attention: the K/V head this query head reads; a sliding layer's window
       (Gemma, Qwen2 with the window in some layers) */
    const atn_capture *cap = atn_result_get_capture(r);
    int group = cap->n_kv_heads > 0 ? cap->n_heads / cap->n_kv_heads : 1;
    if (group > 1) {
        g_autofree char *kv = g_strdup_printf(_("K/V head %d"), atn_session_get_head(self->session) / group);
        g_string_append_printf(full, " · %s", kv);
    }
    const atn_model *m = atn_model_handle_get_model(atn_result_get_model(r));
    atn_rotary_info ri;
    int lyr = atn_session_get_layer(self->session);
    if (m && atn_model_rotary_info(m, &ri) && ri.local_layers && lyr >= 0 && lyr < cap->n_layers &&
        ri.local_layers[lyr]) {
        g_autofree char *win = g_strdup_printf(_("sliding window of %d"), ri.local_window);
        g_string_append_printf(full, " · %s", win);
    }
    if (atn_result_is_encdec(r))   /* which of the three stacks */
        g_string_append_printf(full, " · %s", atn_encdec_stack_title(atn_session_get_stack(self->session)));
    atn_heatmap_set_title(self->heatmap, full->str);
    g_string_free(full, TRUE);
    /* what the head does, from the statistics the run computed once */
    const atn_stats *st = atn_result_get_stats(r);
    int layer = atn_session_get_layer(self->session), head = atn_session_get_head(self->session);
    const char *note = atn_whatif_head_note(whatif, layer, head);
    if (note) {   /* not its pattern: the head does not run as it was */
        g_autofree char *line = g_strdup_printf(_("This head — %s"), note);
        set_what(self, line, note);
    } else if (st && layer < st->n_layers && head < st->n_heads) {
        g_autofree char *what = atn_label_head_summary(&st->heads[(size_t)layer * st->n_heads + head]);
        /* Translators: the line under the Head view's controls: "This head — previous: 97% to the previous token" */
        g_autofree char *line = g_strdup_printf(_("This head — %s"), what);
        set_what(self, line, what);   /* shorter: without "This head —" */
    } else {
        set_what(self, "", NULL);
    }
    if (atn_head_methods_apply(self->methods)) {   /* a method other than Raw: its matrix, title, summary */
        const char *shorter = NULL;
        const char *what = atn_head_methods_get_summary(self->methods, &shorter);
        set_what(self, what, shorter);
    }
}

static void update_scale(AtnHeadView *self) {
    gboolean fixed = g_strcmp0(atn_prefs_get_color_scale(self->prefs), "fixed") == 0;
    if (gtk_check_button_get_active(self->fixed_scale_check) != fixed)
        gtk_check_button_set_active(self->fixed_scale_check, fixed);
    if (fixed) {
        atn_value_range r = {.automatic = FALSE, .vmin = 0, .vmax = 1};
        atn_heatmap_set_range(self->heatmap, &r);
        /* Translators: under the colour bar: the colours span 0 to 1 for every head */
        atn_heatmap_set_colorbar_note(self->heatmap, _("fixed 0–1"));
    } else {
        atn_heatmap_set_range(self->heatmap, NULL);
        /* Translators: under the colour bar: the colours span 0 to this head's largest weight */
        atn_heatmap_set_colorbar_note(self->heatmap, _("0 to head max"));
    }
}

static void update_zoom_label(AtnHeadView *self) {
    double z = atn_heatmap_get_zoom(self->heatmap);
    g_autofree char *text = z < 9.95 ? g_strdup_printf("%.1f×", z) : g_strdup_printf("%.0f×", z);
    gtk_label_set_text(self->zoom_label, text);
    gtk_widget_set_sensitive(GTK_WIDGET(self->zoom_reset_button), z > 1);
}

/* "Words" on: the head merged into words (rows: a word's pieces' mean, columns: their sum), the
 * selected query's word outlined.  FALSE (and words mode left) when it is off or m is NULL. */
static gboolean show_words(AtnHeadView *self, AtnResult *r, const float *m, int n) {
    if (!m || !gtk_check_button_get_active(self->words_check) || !gtk_widget_get_visible(GTK_WIDGET(self->words_check)))
        return FALSE;
    AtnHeadWords *w = atn_head_words_new(atn_result_get_encoding(r), atn_result_get_tokens(r), m, n);
    if (!w)
        return FALSE;
    self->words_owner = g_object_new(G_TYPE_OBJECT, NULL);
    g_object_set_data_full(self->words_owner, "words", w, (GDestroyNotify)atn_head_words_free);
    self->words = w;
    atn_token_lines_set_words(self->lines, self->words_owner, w);   /* the lines join the same words */
    atn_heatmap_set_causal(self->heatmap, FALSE);   /* a word's pieces see each other */
    atn_heatmap_set_matrix(self->heatmap, self->words_owner, w->values, w->n_words, w->n_words,
                           (const char *const *)w->labels, (const char *const *)w->labels, NULL);
    atn_heatmap_set_cell_mask(self->heatmap, NULL);
    atn_heatmap_set_selected_row(self->heatmap, atn_head_words_word_of(w, atn_session_get_query(self->session)));
    atn_heatmap_set_highlight_token(self->heatmap,
                                    atn_head_words_word_of(w, atn_session_get_hover_token(self->session)));
    update_title(self);
    update_info(self, -1, -1);
    return TRUE;
}

static void update_matrix(AtnHeadView *self) {
    AtnResult *r = self->session ? atn_session_get_result(self->session) : NULL;
    self->words = NULL;   /* show_words sets them again (the heatmap keeps its own reference) */
    g_clear_object(&self->words_owner);
    atn_token_lines_set_words(self->lines, NULL, NULL);
    if (!r) {
        atn_heatmap_set_matrix(self->heatmap, NULL, NULL, 0, 0, NULL, NULL, NULL);
        return;
    }
    int stack = atn_session_get_stack(self->session);
    /* the token lines draw every stack's head: a cross head's target tokens on the left, the
       source's on the right (atn_encdec_lines_spec) */
    if (atn_encdec_show_head(self->heatmap, r, stack, atn_session_get_layer(self->session),
                             atn_session_get_head(self->session))) {   /* a decoder or cross head */
        gtk_widget_set_visible(GTK_WIDGET(self->words_check), FALSE);
        atn_heatmap_set_selected_row(self->heatmap, atn_session_get_query(self->session));
        atn_heatmap_set_highlight_token(self->heatmap, -1);
        update_title(self);
        set_what(self, "", NULL);   /* the statistics are the encoder's */
        update_info(self, -1, -1);
        return;
    }
    int n = atn_result_get_n_tokens(r);
    const float *m = atn_result_get_head(r, atn_session_get_layer(self->session), atn_session_get_head(self->session));
    /* "Words" only where pieces make words (it takes room on a line that must fit 1280 px at
       text size 2.0) */
    gtk_widget_set_visible(GTK_WIDGET(self->words_check), atn_head_words_count(atn_result_get_encoding(r), n) < n);
    if (show_words(self, r, m, n))
        return;
    atn_heatmap_set_causal(self->heatmap, atn_result_is_causal(r));
    atn_heatmap_set_matrix(self->heatmap, G_OBJECT(r), m, n, n, atn_result_get_tokens(r), atn_result_get_tokens(r),
                           atn_result_get_mask(r));
    atn_heatmap_set_split(self->heatmap, atn_result_get_split(r));   /* a pair's A/B boundary */
    /* a what-if mask (window, stride, hidden keys) or the model's sliding window: the cells
       it hides are drawn masked (hatched), not as 0 */
    atn_heatmap_set_cell_mask(self->heatmap, atn_head_cell_mask(r, atn_session_get_layer(self->session)));
    atn_heatmap_set_selected_row(self->heatmap, atn_session_get_query(self->session));
    atn_heatmap_set_highlight_token(self->heatmap, atn_session_get_hover_token(self->session));
    update_title(self);
    update_info(self, -1, -1);
}

static void sync_adjustments(AtnHeadView *self) {
    AtnResult *r = atn_session_get_result(self->session);
    self->syncing = TRUE;
    int L = 1, H = 1;
    if (r)   /* an encoder-decoder: the stack's layers (the decoder may have more) */
        atn_encdec_dims(r, atn_session_get_stack(self->session), &L, &H, NULL);
    gtk_adjustment_set_upper(self->layer_adj, L - 1);
    gtk_adjustment_set_upper(self->head_adj, H - 1);
    gtk_adjustment_set_value(self->layer_adj, atn_session_get_layer(self->session));
    gtk_adjustment_set_value(self->head_adj, atn_session_get_head(self->session));
    self->syncing = FALSE;
}

static void on_result(AtnSession *s, GParamSpec *p, AtnHeadView *self) {
    sync_adjustments(self);
    update_matrix(self);
}

static void on_selection(AtnSession *s, GParamSpec *p, AtnHeadView *self) {
    sync_adjustments(self);
    update_matrix(self);
}

static void on_query(AtnSession *s, GParamSpec *p, AtnHeadView *self) {
    int q = atn_session_get_query(self->session);
    atn_heatmap_set_selected_row(self->heatmap, self->words ? atn_head_words_word_of(self->words, q) : q);
    update_info(self, -1, -1);
}

static void on_hover(AtnSession *s, GParamSpec *p, AtnHeadView *self) {
    /* a source chip hovered: its row and column are the same token only in a self-attention
       head over the source (a decoder or cross head's rows are the target's) */
    gboolean other = atn_result_is_encdec(atn_session_get_result(s)) && atn_session_get_stack(s) != ATN_STACK_ENCODER;
    int t = atn_session_get_hover_token(self->session);
    if (self->words)   /* words mode: the word holding it */
        t = atn_head_words_word_of(self->words, t);
    atn_heatmap_set_highlight_token(self->heatmap, other ? -1 : t);
}

static void on_layer_changed(GtkAdjustment *adj, AtnHeadView *self) {
    if (!self->syncing && self->session)
        atn_session_set_layer(self->session, (int)gtk_adjustment_get_value(adj));
}

static void on_head_changed(GtkAdjustment *adj, AtnHeadView *self) {
    if (!self->syncing && self->session)
        atn_session_set_head(self->session, (int)gtk_adjustment_get_value(adj));
}

static void on_cell_clicked(AtnHeatmap *h, int row, int col, AtnHeadView *self) {
    if (self->session)   /* a word's row selects its first token */
        atn_session_set_query(self->session, self->words && row < self->words->n_words ? self->words->start[row] : row);
}

static void on_cell_hovered(AtnHeatmap *h, int row, int col, AtnHeadView *self) { update_info(self, row, col); }

static void on_words_toggled(GtkCheckButton *b, AtnHeadView *self) { update_matrix(self); }

static void on_one_query_toggled(GtkToggleButton *b, AtnHeadView *self) {
    atn_heatmap_set_one_query(self->heatmap, gtk_toggle_button_get_active(b));
}

static void on_fixed_toggled(GtkCheckButton *b, AtnHeadView *self) {
    atn_prefs_set_color_scale(self->prefs, gtk_check_button_get_active(b) ? "fixed" : "head");
}

static void on_prefs_scale(AtnPrefs *p, GParamSpec *ps, AtnHeadView *self) { update_scale(self); }

static void on_zoom_in(GtkButton *b, AtnHeadView *self) {
    atn_heatmap_zoom_at(self->heatmap, 2.0, -1, -1);
    update_zoom_label(self);
}

static void on_zoom_out(GtkButton *b, AtnHeadView *self) {
    atn_heatmap_zoom_at(self->heatmap, 0.5, -1, -1);
    update_zoom_label(self);
}

static void on_zoom_reset(GtkButton *b, AtnHeadView *self) {
    atn_heatmap_reset_zoom(self->heatmap);
    update_zoom_label(self);
}

static void on_all_lines(GtkCheckButton *b, AtnHeadView *self) {
    atn_token_lines_set_all_lines(self->lines, gtk_check_button_get_active(b));
}

static void on_threshold(GtkAdjustment *adj, AtnHeadView *self) {
    atn_token_lines_set_threshold(self->lines, gtk_adjustment_get_value(adj));
}

/* The zoom changes by scroll/pinch/keys inside the heatmap: follow it in the label; a crop to a
 * token span (typed or dragged): the token lines show the same tokens. */
static void on_view_changed(AtnHeatmap *h, AtnHeadView *self) {
    update_zoom_label(self);
    int first, count;
    atn_heatmap_get_span(h, &first, &count);
    atn_token_lines_set_span(self->lines, first, count);
}

void atn_head_view_step(AtnHeadView *self, int dlayer, int dhead) {
    g_return_if_fail(ATN_IS_HEAD_VIEW(self));
    if (self->session)
        atn_session_step_head(self->session, dlayer, dhead);
}

/* The method or its matrix changed: the raw head and scale, then the method's (update_title). */
static void on_methods_changed(AtnHeadView *self) {
    update_scale(self);
    update_matrix(self);
}

static gboolean on_key(GtkEventControllerKey *c, guint keyval, guint keycode, GdkModifierType state,
                       AtnHeadView *self) {
    if (state & (GDK_CONTROL_MASK | GDK_ALT_MASK | GDK_SHIFT_MASK))
        return FALSE;
    switch (keyval) {
    case GDK_KEY_Left: case GDK_KEY_KP_Left: atn_head_view_step(self, 0, -1); return TRUE;
    case GDK_KEY_Right: case GDK_KEY_KP_Right: atn_head_view_step(self, 0, 1); return TRUE;
    case GDK_KEY_Up: case GDK_KEY_KP_Up: case GDK_KEY_Page_Up: atn_head_view_step(self, -1, 0); return TRUE;
    case GDK_KEY_Down: case GDK_KEY_KP_Down: case GDK_KEY_Page_Down: atn_head_view_step(self, 1, 0); return TRUE;
    default: return FALSE;
    }
}

static AtnFigure *head_view_dup_figure(AtnFigureSource *source) {
    AtnHeadView *self = ATN_HEAD_VIEW(source);
    if (!self->session || !atn_session_get_result(self->session))
        return NULL;
    AtnResult *r = atn_session_get_result(self->session);
    const atn_stack *st = atn_result_get_stack(r, atn_session_get_stack(self->session));
    g_autofree char *name = NULL;
    if (st && atn_head_methods_get_method(self->methods) == ATN_HEAD_METHOD_RAW)   /* cross-L0-H1, as the CLI */
        name = g_strdup_printf("%s-L%d-H%d", st->name, atn_session_get_layer(self->session),
                               atn_session_get_head(self->session));
    else
        name = atn_head_methods_dup_figure_name(self->methods, atn_session_get_layer(self->session),
                                                atn_session_get_head(self->session));
    return atn_heatmap_dup_figure(self->heatmap, name);
}

static void figure_source_iface_init(AtnFigureSourceInterface *iface) { iface->dup_figure = head_view_dup_figure; }

static void atn_head_view_dispose(GObject *object) {
    AtnHeadView *self = ATN_HEAD_VIEW(object);
    if (self->session)
        g_signal_handlers_disconnect_by_data(self->session, self);
    g_clear_object(&self->session);
    if (self->prefs)
        g_signal_handlers_disconnect_by_data(self->prefs, self);
    self->prefs = NULL;
    if (self->methods)
        g_signal_handlers_disconnect_by_data(self->methods, self);
    g_clear_object(&self->methods);
    gtk_widget_dispose_template(GTK_WIDGET(self), ATN_TYPE_HEAD_VIEW);
    self->words = NULL;
    g_clear_object(&self->words_owner);
    G_OBJECT_CLASS(atn_head_view_parent_class)->dispose(object);
}

static void atn_head_view_class_init(AtnHeadViewClass *klass) {
    GtkWidgetClass *widget_class = GTK_WIDGET_CLASS(klass);
    G_OBJECT_CLASS(klass)->dispose = atn_head_view_dispose;
    g_type_ensure(ATN_TYPE_HEATMAP);
    g_type_ensure(ATN_TYPE_TOKEN_LINES);
    g_type_ensure(ATN_TYPE_WRAP_BOX);
    g_type_ensure(ATN_TYPE_FIT_LABEL);
    g_type_ensure(ATN_TYPE_STACK_PICKER);
    gtk_widget_class_set_template_from_resource(widget_class, "/io/github/attnscope/Attnscope/atn-head-view.ui");
    gtk_widget_class_bind_template_child(widget_class, AtnHeadView, box);
    gtk_widget_class_bind_template_child(widget_class, AtnHeadView, stack_picker);
    gtk_widget_class_bind_template_child(widget_class, AtnHeadView, what_box);
    gtk_widget_class_bind_template_child(widget_class, AtnHeadView, layer_adj);
    gtk_widget_class_bind_template_child(widget_class, AtnHeadView, head_adj);
    gtk_widget_class_bind_template_child(widget_class, AtnHeadView, info_label);
    gtk_widget_class_bind_template_child(widget_class, AtnHeadView, heatmap);
    gtk_widget_class_bind_template_child(widget_class, AtnHeadView, lines);
    gtk_widget_class_bind_template_child(widget_class, AtnHeadView, one_query_button);
    gtk_widget_class_bind_template_child(widget_class, AtnHeadView, fixed_scale_check);
    gtk_widget_class_bind_template_child(widget_class, AtnHeadView, all_lines_check);
    gtk_widget_class_bind_template_child(widget_class, AtnHeadView, zoom_in_button);
    gtk_widget_class_bind_template_child(widget_class, AtnHeadView, zoom_out_button);
    gtk_widget_class_bind_template_child(widget_class, AtnHeadView, zoom_reset_button);
    gtk_widget_class_bind_template_child(widget_class, AtnHeadView, zoom_label);
    gtk_widget_class_bind_template_child(widget_class, AtnHeadView, what_label);
    gtk_widget_class_bind_template_child(widget_class, AtnHeadView, legend_label);
    gtk_widget_class_bind_template_child(widget_class, AtnHeadView, threshold_adj);
    gtk_widget_class_set_layout_manager_type(widget_class, GTK_TYPE_BIN_LAYOUT);
    gtk_widget_class_set_css_name(widget_class, "headview");
}

static void atn_head_view_init(AtnHeadView *self) {
    gtk_widget_init_template(GTK_WIDGET(self));
    g_signal_connect(self->layer_adj, "value-changed", G_CALLBACK(on_layer_changed), self);
    g_signal_connect(self->head_adj, "value-changed", G_CALLBACK(on_head_changed), self);
    g_signal_connect(self->heatmap, "cell-clicked", G_CALLBACK(on_cell_clicked), self);
    g_signal_connect(self->heatmap, "cell-hovered", G_CALLBACK(on_cell_hovered), self);
    g_signal_connect(self->one_query_button, "toggled", G_CALLBACK(on_one_query_toggled), self);
    g_signal_connect(self->fixed_scale_check, "toggled", G_CALLBACK(on_fixed_toggled), self);
    g_signal_connect(self->all_lines_check, "toggled", G_CALLBACK(on_all_lines), self);
    g_signal_connect(self->threshold_adj, "value-changed", G_CALLBACK(on_threshold), self);
    g_signal_connect(self->zoom_in_button, "clicked", G_CALLBACK(on_zoom_in), self);
    g_signal_connect(self->zoom_out_button, "clicked", G_CALLBACK(on_zoom_out), self);
    g_signal_connect(self->zoom_reset_button, "clicked", G_CALLBACK(on_zoom_reset), self);
    g_signal_connect(self->heatmap, "view-changed", G_CALLBACK(on_view_changed), self);
    atn_heatmap_set_axis_crop(self->heatmap, TRUE);   /* drag along an axis: a token span */
    self->scale_controls = atn_head_view_scale_controls_new(self->heatmap);   /* log / rank / 1st left out */
    /* on the "This head — …" line, before its legend button: the row of selectors stays as it was */
    gtk_widget_insert_before(self->scale_controls, self->what_box, gtk_widget_get_last_child(self->what_box));
    self->words_check = GTK_CHECK_BUTTON(gtk_check_button_new_with_mnemonic(_("_Words")));
    gtk_widget_set_tooltip_text(GTK_WIDGET(self->words_check),
                                _("Merge word pieces into words: a word's row is the mean of its pieces' rows, its "
                                  "column the sum of their columns"));
    /* on the selectors' row, after "Fixed 0–1 colours": that row's query text gives way to it
       (on the "This head" line it made the window wider than 1366 px at text size 2.0) */
    gtk_widget_insert_after(GTK_WIDGET(self->words_check), gtk_widget_get_parent(GTK_WIDGET(self->fixed_scale_check)),
                            GTK_WIDGET(self->fixed_scale_check));
    g_signal_connect(self->words_check, "toggled", G_CALLBACK(on_words_toggled), self);
    g_autofree char *legend = atn_label_pattern_legend();
    gtk_label_set_text(self->legend_label, legend);
    self->prefs = atn_prefs_get_default();
    g_signal_connect(self->prefs, "notify::color-scale", G_CALLBACK(on_prefs_scale), self);
    update_scale(self);
    update_zoom_label(self);
    /* the Show switch on the "This head" line, before the legend button: the controls' row has
       no room to spare at 1280 px in presentation mode, and this row is a button tall already */
    self->methods = atn_head_methods_new(self->heatmap);
    gtk_widget_insert_before(atn_head_methods_get_widget(self->methods), self->what_box,
                             gtk_widget_get_last_child(self->what_box));
    g_signal_connect_swapped(self->methods, "changed", G_CALLBACK(on_methods_changed), self);
    /* keys not used by the focused child (the spin buttons keep their arrows) */
    GtkEventController *keys = gtk_event_controller_key_new();
    g_signal_connect(keys, "key-pressed", G_CALLBACK(on_key), self);
    gtk_widget_add_controller(GTK_WIDGET(self), keys);
}

GtkWidget *atn_head_view_new(void) { return g_object_new(ATN_TYPE_HEAD_VIEW, NULL); }

void atn_head_view_set_session(AtnHeadView *self, AtnSession *session) {
    g_return_if_fail(ATN_IS_HEAD_VIEW(self));
    if (self->session)
        g_signal_handlers_disconnect_by_data(self->session, self);
    g_set_object(&self->session, session);
    atn_head_methods_set_session(self->methods, session);
    atn_token_lines_set_session(self->lines, session);
    atn_stack_picker_set_session(self->stack_picker, session);
    if (session) {
        g_signal_connect(session, "notify::stack", G_CALLBACK(on_selection), self);
        g_signal_connect(session, "notify::result", G_CALLBACK(on_result), self);
        g_signal_connect(session, "notify::layer", G_CALLBACK(on_selection), self);
        g_signal_connect(session, "notify::head", G_CALLBACK(on_selection), self);
        g_signal_connect(session, "notify::query", G_CALLBACK(on_query), self);
        g_signal_connect(session, "notify::hover-token", G_CALLBACK(on_hover), self);
        g_signal_connect_swapped(session, "stats-ready", G_CALLBACK(update_title), self);   /* "This head" */
        on_result(session, NULL, self);
    }
}

void atn_head_view_set_colormap(AtnHeadView *self, atn_colormap cm) {
    g_return_if_fail(ATN_IS_HEAD_VIEW(self));
    atn_heatmap_set_colormap(self->heatmap, cm);
}

void atn_head_view_set_font_scale(AtnHeadView *self, double scale) {
    g_return_if_fail(ATN_IS_HEAD_VIEW(self));
    atn_heatmap_set_font_scale(self->heatmap, scale);
    atn_token_lines_set_font_scale(self->lines, scale);
}

void atn_head_view_set_one_query(AtnHeadView *self, gboolean one_query) {
    g_return_if_fail(ATN_IS_HEAD_VIEW(self));
    gtk_toggle_button_set_active(self->one_query_button, one_query);
}

GtkCheckButton *atn_head_view_get_words_check(AtnHeadView *self) {
    g_return_val_if_fail(ATN_IS_HEAD_VIEW(self), NULL);
    return self->words_check;
}

GtkWidget *atn_head_view_get_scale_controls(AtnHeadView *self) {
    g_return_val_if_fail(ATN_IS_HEAD_VIEW(self), NULL);
    return self->scale_controls;
}

GtkWidget *atn_head_view_get_info_widget(AtnHeadView *self) {
    g_return_val_if_fail(ATN_IS_HEAD_VIEW(self), NULL);
    return GTK_WIDGET(self->info_label);
}

GtkWidget *atn_head_view_get_summary_widget(AtnHeadView *self) {
    g_return_val_if_fail(ATN_IS_HEAD_VIEW(self), NULL);
    return GTK_WIDGET(self->what_label);
}

AtnHeatmap *atn_head_view_get_heatmap(AtnHeadView *self) {
    g_return_val_if_fail(ATN_IS_HEAD_VIEW(self), NULL);
    return self->heatmap;
}

AtnHeadMethods *atn_head_view_get_methods(AtnHeadView *self) {
    g_return_val_if_fail(ATN_IS_HEAD_VIEW(self), NULL);
    return self->methods;
}

GtkWidget *atn_head_view_get_token_lines(AtnHeadView *self) {
    g_return_val_if_fail(ATN_IS_HEAD_VIEW(self), NULL);
    return GTK_WIDGET(self->lines);
}

/* ---- AtnView ---------------------------------------------------------------------------------- */

static void view_set_session(AtnView *view, AtnSession *session) { atn_head_view_set_session(ATN_HEAD_VIEW(view), session); }
static void view_set_colormap(AtnView *view, atn_colormap cm) { atn_head_view_set_colormap(ATN_HEAD_VIEW(view), cm); }
static void view_set_font_scale(AtnView *view, double scale) { atn_head_view_set_font_scale(ATN_HEAD_VIEW(view), scale); }

ATN_VIEW_REGISTER(atn_head_view)

static void view_iface_init(AtnViewInterface *iface) {
    iface->set_session = view_set_session;
    iface->set_colormap = view_set_colormap;
    iface->set_font_scale = view_set_font_scale;
}
