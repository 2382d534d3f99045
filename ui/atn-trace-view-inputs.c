/* AtnTraceView's editable inputs for a toy model: X and the layer's weights as tables of
 * entries, each cell checked as it is typed (a refused one says why), marked when it
 * differs from the number the model was opened with, and Reset Numbers.  See
 * atn-trace-view-private.h for how the view is split. */
#include "atn-trace-view-private.h"

#include <glib/gi18n.h>
#include <float.h>
#include <math.h>
#include <stdio.h>

/* ---- editable inputs (toy models) ------------------------------------------------------------ */

/* The numbers a toy model had when the Trace view first showed each cell, kept on the model
 * handle ("which:layer:row:col" -> float; X has layer -1): what Reset puts back and what the
 * changed-cell marks compare with. */
#define ORIGINALS_KEY "atn-trace-originals"

static char *original_key(atn_toy_matrix which, int layer, int row, int col) {
    return g_strdup_printf("%d:%d:%d:%d", which, which == ATN_TOY_X ? -1 : layer, row, col);
}

static GHashTable *originals_of(AtnModelHandle *m) {
    GHashTable *o = g_object_get_data(G_OBJECT(m), ORIGINALS_KEY);
    if (!o) {
        o = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
        g_object_set_data_full(G_OBJECT(m), ORIGINALS_KEY, o, (GDestroyNotify)g_hash_table_unref);
    }
    return o;
}

static const char *matrix_name(atn_toy_matrix which) {
    switch (which) {
    case ATN_TOY_X: return "X";
    case ATN_TOY_WQ: return "W_Q";
    case ATN_TOY_WK: return "W_K";
    case ATN_TOY_WV: return "W_V";
    case ATN_TOY_WO: return "W_O";
    default: return "?";
    }
}

/* Marks an entry changed (against its original) or not; TRUE when changed. */
static gboolean mark_changed(AtnTraceView *self, GtkWidget *e, float now) {
    input_cell *ic = g_object_get_data(G_OBJECT(e), "cell");
    GHashTable *o = originals_of(self->inputs_model);
    g_autofree char *key = original_key(ic->which, self->inputs_layer, ic->row, ic->col);
    const float *was = g_hash_table_lookup(o, key);
    gboolean changed = was && *was != now;
    if (changed) {
        gtk_widget_add_css_class(e, "changed");
        g_autofree char *tip = g_strdup_printf(_("Changed: it was %g (Reset puts it back)"), (double)*was);
        gtk_widget_set_tooltip_text(e, tip);
    } else {
        gtk_widget_remove_css_class(e, "changed");
        gtk_widget_set_tooltip_text(e, NULL);
    }
    return changed;
}

/* Any cell of any layer differs from its original. */
static gboolean any_changed(AtnTraceView *self) {
    if (!self->inputs_model)
        return FALSE;
    GHashTableIter it;
    gpointer k, v;
    g_hash_table_iter_init(&it, originals_of(self->inputs_model));
    while (g_hash_table_iter_next(&it, &k, &v)) {
        int which, layer, row, col;
        if (sscanf(k, "%d:%d:%d:%d", &which, &layer, &row, &col) != 4)
            continue;
        if (atn_model_handle_toy_get(self->inputs_model, which, layer < 0 ? 0 : layer, row, col) != *(float *)v)
            return TRUE;
    }
    return FALSE;
}

static void update_reset(AtnTraceView *self) {
    if (self->reset_button)
        gtk_widget_set_sensitive(GTK_WIDGET(self->reset_button), any_changed(self));
}

/* The error line under the inputs: the reason of one refused cell, or hidden. */
static void update_input_error(AtnTraceView *self) {
    if (!self->input_error)
        return;
    const char *why = NULL;
    GHashTableIter it;
    gpointer k, e;
    g_hash_table_iter_init(&it, self->inputs);
    while (!why && g_hash_table_iter_next(&it, &k, &e))
        why = g_object_get_data(G_OBJECT(e), "why");
    gtk_label_set_text(self->input_error, why ? why : "");
    gtk_widget_set_visible(GTK_WIDGET(self->input_error), why != NULL);
}

static void refuse(AtnTraceView *self, GtkEditable *e, const char *reason) {
    input_cell *ic = g_object_get_data(G_OBJECT(e), "cell");
    /* Translators: a refused cell of the editable inputs, e.g. "X[0][1]: “1.5x” is not a number…" */
    char *why = g_strdup_printf(_("%s[%d][%d]: %s"), matrix_name(ic->which), ic->row, ic->col, reason);
    gtk_widget_add_css_class(GTK_WIDGET(e), "error");
    gtk_widget_set_tooltip_text(GTK_WIDGET(e), why);
    g_object_set_data_full(G_OBJECT(e), "why", why, g_free);
    update_input_error(self);
}

static void on_input_changed(GtkEditable *e, AtnTraceView *self) {
    if (self->syncing || !self->session)
        return;
    AtnModelHandle *m = atn_session_get_model(self->session);
    input_cell *ic = g_object_get_data(G_OBJECT(e), "cell");
    if (!m || !ic || m != self->inputs_model)
        return;
    const char *text = gtk_editable_get_text(e);
    g_autofree char *norm = g_strdelimit(g_strstrip(g_strdup(text)), ",", '.');   /* accept a decimal comma */
    char *end = NULL;
    double v = g_ascii_strtod(norm, &end);
    if (!*norm) {
        refuse(self, e, _("empty: type a number, such as 0.5"));
        return;
    }
    if (!end || *end) {
        g_autofree char *r = g_strdup_printf(_("“%s” is not a number: type digits with a decimal point, such as -1.25"),
                                             text);
        refuse(self, e, r);
        return;
    }
    if (!isfinite(v) || fabs(v) > FLT_MAX) {
        g_autofree char *r = g_strdup_printf(_("“%s” is not a finite number a float can hold (up to ±3.4e38)"), text);
        refuse(self, e, r);
        return;
    }
    g_autoptr(GError) error = NULL;
    if (!atn_model_handle_toy_set(m, ic->which, self->inputs_layer, ic->row, ic->col, (float)v, &error)) {
        refuse(self, e, error->message);
        return;
    }
    gtk_widget_remove_css_class(GTK_WIDGET(e), "error");
    g_object_set_data(G_OBJECT(e), "why", NULL);
    mark_changed(self, GTK_WIDGET(e), (float)v);
    update_input_error(self);
    update_reset(self);
    atn_session_rerun(self->session);   /* toy models run synchronously: the trace follows at once */
}

static char *input_key(atn_toy_matrix which, int row, int col) { return g_strdup_printf("%d:%d:%d", which, row, col); }

void atn_trace_view_reset_inputs(AtnTraceView *self) {
    g_return_if_fail(ATN_IS_TRACE_VIEW(self));
    AtnModelHandle *m = self->inputs_model;
    if (!m || !self->session || m != atn_session_get_model(self->session))
        return;
    GHashTableIter it;
    gpointer k, v;
    gboolean any = FALSE;
    g_hash_table_iter_init(&it, originals_of(m));
    while (g_hash_table_iter_next(&it, &k, &v)) {
        int which, layer, row, col;
        if (sscanf(k, "%d:%d:%d:%d", &which, &layer, &row, &col) != 4)
            continue;
        int l = layer < 0 ? 0 : layer;
        if (atn_model_handle_toy_get(m, which, l, row, col) != *(float *)v) {
            atn_model_handle_toy_set(m, which, l, row, col, *(float *)v, NULL);
            any = TRUE;
        }
    }
    /* every shown cell gets its number back, refused text included */
    self->syncing = TRUE;
    g_hash_table_iter_init(&it, self->inputs);
    while (g_hash_table_iter_next(&it, &k, &v)) {
        GtkWidget *e = v;
        input_cell *ic = g_object_get_data(G_OBJECT(e), "cell");
        float now = atn_model_handle_toy_get(m, ic->which, self->inputs_layer, ic->row, ic->col);
        g_autofree char *txt = g_strdup_printf("%g", (double)now);
        gtk_editable_set_text(GTK_EDITABLE(e), txt);
        gtk_widget_remove_css_class(e, "error");
        g_object_set_data(G_OBJECT(e), "why", NULL);
        mark_changed(self, e, now);
    }
    self->syncing = FALSE;
    update_input_error(self);
    update_reset(self);
    if (any)
        atn_session_rerun(self->session);
}

static void on_reset(GtkButton *b, AtnTraceView *self) { atn_trace_view_reset_inputs(self); }

static GtkWidget *input_grid(AtnTraceView *self, AtnModelHandle *m, atn_toy_matrix which, int rows, int cols,
                             const char *const *row_labels, const char *col_prefix) {
    GtkWidget *grid = gtk_grid_new();
    gtk_grid_set_column_spacing(GTK_GRID(grid), 4);
    gtk_grid_set_row_spacing(GTK_GRID(grid), 2);
    gtk_widget_set_halign(grid, GTK_ALIGN_START);
    gtk_widget_add_css_class(grid, "input-table");
    for (int c = 0; c < cols; c++) {
        g_autofree char *h = g_strdup_printf("%s%d", col_prefix, c);
        GtkWidget *l = gtk_label_new(h);
        gtk_widget_add_css_class(l, "header");
        gtk_grid_attach(GTK_GRID(grid), l, 1 + c, 0, 1, 1);
    }
    for (int r = 0; r < rows; r++) {
        g_autofree char *rl = row_labels ? g_strdup(row_labels[r]) : g_strdup_printf("%d", r);
        GtkWidget *l = gtk_label_new(rl);
        gtk_label_set_xalign(GTK_LABEL(l), 0);
        gtk_widget_add_css_class(l, "header");
        gtk_grid_attach(GTK_GRID(grid), l, 0, 1 + r, 1, 1);
        for (int c = 0; c < cols; c++) {
            GtkWidget *e = gtk_entry_new();
            gtk_editable_set_width_chars(GTK_EDITABLE(e), 6);
            gtk_editable_set_max_width_chars(GTK_EDITABLE(e), 8);
            gtk_editable_set_alignment(GTK_EDITABLE(e), 1.0f);
            gtk_widget_add_css_class(e, "cell-entry");
            float now = atn_model_handle_toy_get(m, which, self->inputs_layer, r, c);
            g_autofree char *txt = g_strdup_printf("%g", (double)now);
            gtk_editable_set_text(GTK_EDITABLE(e), txt);
            input_cell *ic = g_new(input_cell, 1);
            *ic = (input_cell){which, r, c};
            g_object_set_data_full(G_OBJECT(e), "cell", ic, g_free);
            /* the first time a cell is shown its number is the original one */
            GHashTable *o = originals_of(m);
            char *okey = original_key(which, self->inputs_layer, r, c);
            if (!g_hash_table_contains(o, okey))
                g_hash_table_insert(o, okey, g_memdup2(&now, sizeof now));
            else
                g_free(okey);
            mark_changed(self, e, now);
            g_signal_connect(e, "changed", G_CALLBACK(on_input_changed), self);
            gtk_grid_attach(GTK_GRID(grid), e, 1 + c, 1 + r, 1, 1);
            g_hash_table_insert(self->inputs, input_key(which, r, c), e);
        }
    }
    return grid;
}

void _atn_trace_view_build_inputs(AtnTraceView *self) {
    AtnModelHandle *m = self->session ? atn_session_get_model(self->session) : NULL;
    int layer = self->session ? atn_session_get_layer(self->session) : 0;
    if (m == self->inputs_model && layer == self->inputs_layer)
        return;
    GtkWidget *child;
    while ((child = gtk_widget_get_first_child(GTK_WIDGET(self->inputs_box))))
        gtk_box_remove(self->inputs_box, child);
    g_hash_table_remove_all(self->inputs);
    self->reset_button = NULL;
    self->input_error = NULL;
    g_set_object(&self->inputs_model, m);
    self->inputs_layer = layer;
    if (!m || !atn_model_handle_is_toy(m))
        return;
    self->syncing = TRUE;
    atn_model *am = atn_model_handle_get_model(m);
    const atn_config *cfg = atn_model_config(am);
    int n = atn_model_toy_n_tokens(am), d = cfg->d_model;
    const char **toks = g_new0(const char *, n + 1);
    for (int i = 0; i < n; i++)
        toks[i] = atn_model_toy_token(am, i);

    GtkWidget *head = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 12);
    GtkWidget *title = gtk_label_new(_("Inputs — type to change any number"));
    gtk_label_set_xalign(GTK_LABEL(title), 0);
    gtk_widget_add_css_class(title, "heading");
    gtk_box_append(GTK_BOX(head), title);
    GtkWidget *reset = gtk_button_new_with_mnemonic(_("Reset _Numbers"));
    gtk_widget_set_tooltip_text(reset, _("Put back the numbers the model was opened with (changed cells are marked)"));
    g_signal_connect(reset, "clicked", G_CALLBACK(on_reset), self);
    gtk_box_append(GTK_BOX(head), reset);
    self->reset_button = GTK_BUTTON(reset);
    gtk_box_append(self->inputs_box, head);
    GtkWidget *xl = gtk_label_new(NULL);
    gtk_label_set_markup(GTK_LABEL(xl), _("<i>X</i>: one input vector per token (a row each)"));
    gtk_label_set_xalign(GTK_LABEL(xl), 0);
    gtk_box_append(self->inputs_box, xl);
    gtk_box_append(self->inputs_box, input_grid(self, m, ATN_TOY_X, n, d, toks, "x"));

    GtkWidget *exp = gtk_expander_new(NULL);
    g_autofree char *exp_label = g_strdup_printf(_("Weights of layer %d: W_Q, W_K, W_V, W_O (identity unless the file gives them)"), layer);
    GtkWidget *exp_title = gtk_label_new(exp_label);   /* wraps: an expander's own label never does */
    gtk_label_set_wrap(GTK_LABEL(exp_title), TRUE);
    gtk_label_set_xalign(GTK_LABEL(exp_title), 0);
    gtk_expander_set_label_widget(GTK_EXPANDER(exp), exp_title);
    GtkWidget *wbox = gtk_flow_box_new();
    gtk_flow_box_set_selection_mode(GTK_FLOW_BOX(wbox), GTK_SELECTION_NONE);
    gtk_flow_box_set_max_children_per_line(GTK_FLOW_BOX(wbox), 4);
    gtk_flow_box_set_column_spacing(GTK_FLOW_BOX(wbox), 18);
    static const struct { atn_toy_matrix which; const char *name; } mats[] = {
        {ATN_TOY_WQ, "W_Q"}, {ATN_TOY_WK, "W_K"}, {ATN_TOY_WV, "W_V"}, {ATN_TOY_WO, "W_O"},
    };
    for (guint i = 0; i < G_N_ELEMENTS(mats); i++) {
        GtkWidget *b = gtk_box_new(GTK_ORIENTATION_VERTICAL, 2);
        GtkWidget *l = gtk_label_new(mats[i].name);
        gtk_label_set_xalign(GTK_LABEL(l), 0);
        gtk_box_append(GTK_BOX(b), l);
        gtk_box_append(GTK_BOX(b), input_grid(self, m, mats[i].which, d, d, NULL, ""));
        gtk_flow_box_append(GTK_FLOW_BOX(wbox), b);
    }
    gtk_expander_set_child(GTK_EXPANDER(exp), wbox);
    gtk_box_append(self->inputs_box, exp);
    GtkWidget *err = gtk_label_new(NULL);
    gtk_label_set_xalign(GTK_LABEL(err), 0);
    gtk_label_set_wrap(GTK_LABEL(err), TRUE);
    gtk_widget_add_css_class(err, "input-error");
    gtk_widget_set_visible(err, FALSE);
    gtk_box_append(self->inputs_box, err);
    self->input_error = GTK_LABEL(err);
    g_free(toks);
    self->syncing = FALSE;
    update_reset(self);
}

GtkEditable *atn_trace_view_get_input_cell(AtnTraceView *self, atn_toy_matrix which, int row, int col) {
    g_return_val_if_fail(ATN_IS_TRACE_VIEW(self), NULL);
    _atn_trace_view_build_inputs(self);
    g_autofree char *key = input_key(which, row, col);
    return g_hash_table_lookup(self->inputs, key);
}

