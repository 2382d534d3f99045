/* "Check my work" in the Trace view (atn-check-work.h): the entries, the comparison
 * (atn_check_work, engine/analysis/check-work.c) and the explanation, built from the trace's
 * own numbers so that it says why the exact value is what it is. */
#include "atn-check-work.h"
#include "atn-labels.h"
#include "atn-trace-view.h"   /* atn_trace_view_get_step_widget: the step boxes to mark */

#include <glib/gi18n.h>
#include <math.h>
#include <string.h>

struct _AtnCheckWork {
    GtkWidget parent_instance;
    GtkWidget *expander;
    GtkEntry *entries[ATN_CHECK_STEP_COUNT];
    GtkLabel *result;
    const atn_trace *trace;
    const char *const *tokens;
    GtkWidget *view;
    int marked;
    char *message;
};

G_DEFINE_FINAL_TYPE(AtnCheckWork, atn_check_work, GTK_TYPE_WIDGET)

/* The trace step each checkable number belongs to. */
static const atn_trace_step trace_step_of[ATN_CHECK_STEP_COUNT] = {
    ATN_TRACE_STEP_SCORES, ATN_TRACE_STEP_SCALE, ATN_TRACE_STEP_SOFTMAX, ATN_TRACE_STEP_OUTPUT,
};

/* One typed line into entries: numbers separated by spaces or ';' ("?" or "_" skips an index);
 * a comma separates numbers written with a decimal point ("0.3,0.4") and is the decimal mark
 * otherwise ("0,325").  Returns FALSE at the first word that is not a number. */
static gboolean parse_line(const char *text, atn_check_step step, GArray *out, char **bad) {
    g_auto(GStrv) words = g_regex_split_simple("[\\s;]+", text ? text : "", 0, 0);
    int index = 0;
    for (int w = 0; words[w]; w++) {
        const char *word = words[w];
        if (!*word)
            continue;
        g_auto(GStrv) parts = strchr(word, '.') ? g_strsplit(word, ",", -1) : g_strsplit(word, "\x01", -1);
        for (int p = 0; parts[p]; p++) {
            if (!*parts[p])
                continue;
            if (!strcmp(parts[p], "?") || !strcmp(parts[p], "_")) {
                index++;
                continue;
            }
            atn_check_entry e = {step, index++, 0, 0};
            if (!atn_check_parse_number(parts[p], &e.value, &e.decimals)) {
                *bad = g_strdup(parts[p]);
                return FALSE;
            }
            g_array_append_val(out, e);
        }
    }
    return TRUE;
}

static const char *key_label(AtnCheckWork *self, int j) {
    return self->tokens && self->tokens[j] ? self->tokens[j] : self->trace->enc ? self->trace->enc->tokens[j].text : "";
}

/* Why the exact value is what it is, from the trace's numbers (Pango markup). */
static char *because(AtnCheckWork *self, const atn_check_result *r) {
    const atn_trace *t = self->trace;
    int j = r->index, k = t->d_head;
    switch (r->step) {
    case ATN_CHECK_SCORES: {
        GString *g = g_string_new(NULL);
        for (int c = 0; c < k && k <= 8; c++)
            g_string_append_printf(g, "%s%.4g×%.4g", c ? " + " : "", t->q[c], t->keys[(size_t)j * k + c]);
        if (k > 8)
            g_string_append(g, "Σ<sub>c</sub> q[c]·k[c]");
        g_autofree char *sum = g_string_free(g, FALSE);
        /* Translators: why a score is what it is: "q · k_2 = 0.5×1.2 + 1.1×-0.2 = 0.3800" */
        return g_markup_printf_escaped(_("q · k<sub>%d</sub> = %s = %.4f"), j, sum, t->scores[j]);
    }
    case ATN_CHECK_SCALED:
        if (t->scale == 1.0)
            return g_markup_printf_escaped(_("this model does not scale its scores: s<sub>%d</sub> = %.4f"), j,
                                           t->scores[j]);
        return g_markup_printf_escaped(_("s<sub>%d</sub> × %.4f = %.4f × %.4f = %.4f"), j, t->scale, t->scores[j],
                                       t->scale, t->scaled[j]);
    case ATN_CHECK_WEIGHTS:
        if (t->mask_term[j] != 0)
            return g_strdup(_("this key is masked, so its weight is 0"));
        /* Translators: a softmax weight: "a_0 = exp(1.0324 − 1.2092) / Σ exp = 0.8379 / 2.2284 = 0.3760" */
        return g_markup_printf_escaped(_("a<sub>%d</sub> = exp(%.4f − %.4f) / Σ exp = %.4f / %.4f = %.4f"), j,
                                       (t->shifted[j] + t->max) * t->temperature, t->max * t->temperature,
                                       t->exps[j], t->sum, t->weights[j]);
    case ATN_CHECK_OUTPUT: {
        GString *g = g_string_new(NULL);
        for (int i = 0; i < t->n && t->n <= 8; i++)
            g_string_append_printf(g, "%s%.4f×%.4f", i ? " + " : "", t->weights[i], t->values[(size_t)i * k + j]);
        if (t->n > 8)
            g_string_append(g, "Σ<sub>j</sub> a<sub>j</sub> v<sub>j</sub>");
        g_autofree char *sum = g_string_free(g, FALSE);
        return g_markup_printf_escaped(_("o[%d] = %s = %.4f"), j, sum, t->output[j]);
    }
    default:
        return g_strdup("");
    }
}

static const char *slip_text(atn_check_slip slip) {
    switch (slip) {
    case ATN_SLIP_UNSCALED: return _("It looks like the division by √d<sub>k</sub> was left out.");
    case ATN_SLIP_SOFTMAX_UNSCALED:
        return _("That is the softmax of the unscaled scores: divide by √d<sub>k</sub> first.");
    case ATN_SLIP_NO_EXP:
        return _("That is the score divided by the sum of the scores: the softmax exponentiates each score first.");
    case ATN_SLIP_OWN_INPUTS: return _("It follows from your own numbers of the step before: check those.");
    default: return "";
    }
}

/* "your softmax used 0.325" in the step's words. */
static char *you_used(atn_check_step step, int index, const char *key, const char *typed) {
    switch (step) {
    case ATN_CHECK_SCORES:
        return g_markup_printf_escaped(_("your score for key %d “%s” was %s"), index, key, typed);
    case ATN_CHECK_SCALED:
        return g_markup_printf_escaped(_("your scaled score for key %d “%s” was %s"), index, key, typed);
    case ATN_CHECK_WEIGHTS:
        return g_markup_printf_escaped(_("your softmax used %s for key %d “%s”"), typed, index, key);
    default:
        return g_markup_printf_escaped(_("your output component %d was %s"), index, typed);
    }
}

static void set_marked(AtnCheckWork *self, int step) {
    self->marked = step;
    for (int s = 0; self->view && s < ATN_TRACE_STEP_COUNT; s++) {
        GtkWidget *box = atn_trace_view_get_step_widget((AtnTraceView *)self->view, (atn_trace_step)s);
        if (!box)
            continue;
        if (s == step)
            gtk_widget_add_css_class(box, "check-differs");
        else
            gtk_widget_remove_css_class(box, "check-differs");
    }
}

static void show(AtnCheckWork *self, const char *markup, gboolean bad) {
    g_free(self->message);
    self->message = g_strdup(markup);
    gtk_label_set_markup(self->result, markup);
    if (bad)
        gtk_widget_add_css_class(GTK_WIDGET(self->result), "check-differs");
    else
        gtk_widget_remove_css_class(GTK_WIDGET(self->result), "check-differs");
}

static void recheck(AtnCheckWork *self) {
    for (int s = 0; s < ATN_CHECK_STEP_COUNT; s++)
        gtk_widget_remove_css_class(GTK_WIDGET(self->entries[s]), "error");
    if (!self->trace) {
        set_marked(self, -1);
        show(self, "", FALSE);
        return;
    }
    g_autoptr(GArray) typed = g_array_new(FALSE, FALSE, sizeof(atn_check_entry));
    for (int s = 0; s < ATN_CHECK_STEP_COUNT; s++) {
        g_autofree char *bad = NULL;
        if (!parse_line(gtk_editable_get_text(GTK_EDITABLE(self->entries[s])), (atn_check_step)s, typed, &bad)) {
            gtk_widget_add_css_class(GTK_WIDGET(self->entries[s]), "error");
            g_autofree char *msg = g_markup_printf_escaped(_("“%s” is not a number (write 0.325 or 0,325; ? skips one)."),
                                                           bad);
            set_marked(self, -1);
            show(self, msg, TRUE);
            return;
        }
    }
    atn_check_result r;
    atn_error err = {0};
    if (atn_check_work(self->trace, (const atn_check_entry *)typed->data, (int32_t)typed->len, &r, &err) != ATN_OK) {
        set_marked(self, -1);
        show(self, err.message, TRUE);
        return;
    }
    if (r.checked == 0) {
        set_marked(self, -1);
        show(self, _("Type your numbers for a step to compare them with the model’s."), FALSE);
        return;
    }
    if (!r.differs) {
        set_marked(self, -1);
        g_autofree char *msg = g_markup_printf_escaped(
            g_dngettext(NULL, "✓ Your number agrees with the model’s (to one unit of its last decimal).",
                        "✓ All %d of your numbers agree with the model’s (each to one unit of its last decimal).",
                        r.checked),
            r.checked);
        show(self, msg, FALSE);
        return;
    }
    atn_trace_step ts = trace_step_of[r.step];
    set_marked(self, ts);
    gtk_widget_add_css_class(GTK_WIDGET(self->entries[r.step]), "error");
    int decimals = 0;
    for (guint i = 0; i < typed->len; i++) {
        const atn_check_entry *e = &g_array_index(typed, atn_check_entry, i);
        if (e->step == r.step && e->index == r.index)
            decimals = e->decimals;
    }
    g_autofree char *typed_s = g_strdup_printf("%.*f", decimals, r.typed);
    g_autofree char *used = you_used(r.step, r.index, r.step == ATN_CHECK_OUTPUT ? "" : key_label(self, r.index),
                                     typed_s);
    g_autofree char *why = because(self, &r);
    g_autofree char *title = g_strdup_printf("%d · %s", ts + 1, atn_label_trace_step(ts));
    /* Translators: "✗ Step 6 · Softmax: your softmax used 0.325 for key 0 “我”; the exact value is
       0.3760 because a_0 = … . (hint)" */
    g_autofree char *head = g_markup_printf_escaped(_("✗ First difference at step %s:"), title);
    g_autofree char *exact = g_strdup_printf("%.4f", r.exact);
    g_autofree char *msg = g_strdup_printf(_("<b>%s</b> %s; the exact value is <b>%s</b> because %s. %s"), head, used,
                                           exact, why, slip_text(r.slip));
    g_strstrip(msg);
    show(self, msg, TRUE);
}

static void on_changed(GtkEditable *e, AtnCheckWork *self) { recheck(self); }

void atn_check_work_set_trace(AtnCheckWork *self, const atn_trace *trace, const char *const *tokens,
                              GtkWidget *trace_view) {
    g_return_if_fail(ATN_IS_CHECK_WORK(self));
    self->trace = trace;
    self->tokens = trace ? tokens : NULL;
    self->view = trace_view;
    recheck(self);
}

GtkEditable *atn_check_work_get_entry(AtnCheckWork *self, atn_check_step step) {
    g_return_val_if_fail(ATN_IS_CHECK_WORK(self) && step >= 0 && step < ATN_CHECK_STEP_COUNT, NULL);
    return GTK_EDITABLE(self->entries[step]);
}

int atn_check_work_get_marked(AtnCheckWork *self) { return self->marked; }
const char *atn_check_work_get_message(AtnCheckWork *self) { return self->message ? self->message : ""; }

static void atn_check_work_dispose(GObject *object) {
    AtnCheckWork *self = ATN_CHECK_WORK(object);
    g_clear_pointer(&self->expander, gtk_widget_unparent);
    G_OBJECT_CLASS(atn_check_work_parent_class)->dispose(object);
}

static void atn_check_work_finalize(GObject *object) {
    g_free(ATN_CHECK_WORK(object)->message);
    G_OBJECT_CLASS(atn_check_work_parent_class)->finalize(object);
}

static void atn_check_work_class_init(AtnCheckWorkClass *klass) {
    G_OBJECT_CLASS(klass)->dispose = atn_check_work_dispose;
    G_OBJECT_CLASS(klass)->finalize = atn_check_work_finalize;
    gtk_widget_class_set_layout_manager_type(GTK_WIDGET_CLASS(klass), GTK_TYPE_BIN_LAYOUT);
    gtk_widget_class_set_css_name(GTK_WIDGET_CLASS(klass), "checkwork");
}

static void atn_check_work_init(AtnCheckWork *self) {
    self->marked = -1;
    self->expander = gtk_expander_new(NULL);
    GtkWidget *title = gtk_label_new(_("Check my work"));
    gtk_widget_add_css_class(title, "heading");
    gtk_expander_set_label_widget(GTK_EXPANDER(self->expander), title);
    gtk_widget_set_parent(self->expander, GTK_WIDGET(self));
    GtkWidget *box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 6);
    gtk_widget_set_margin_top(box, 6);
    GtkWidget *hint = gtk_label_new(_("Type your own numbers for a step, separated by spaces (0.325 0.421 0.254); the "
                                      "first step where they differ from the model’s is marked and explained. Each "
                                      "number is held to one unit of its last decimal."));
    gtk_label_set_wrap(GTK_LABEL(hint), TRUE);
    gtk_label_set_xalign(GTK_LABEL(hint), 0);
    gtk_widget_add_css_class(hint, "dim-label");
    gtk_box_append(GTK_BOX(box), hint);
    GtkGrid *grid = GTK_GRID(gtk_grid_new());
    gtk_grid_set_row_spacing(grid, 4);
    gtk_grid_set_column_spacing(grid, 8);
    for (int s = 0; s < ATN_CHECK_STEP_COUNT; s++) {
        atn_trace_step ts = trace_step_of[s];
        g_autofree char *name = g_strdup_printf("%d · %s", ts + 1, atn_label_trace_step(ts));
        GtkWidget *l = gtk_label_new(name);
        gtk_label_set_xalign(GTK_LABEL(l), 0);
        gtk_grid_attach(grid, l, 0, s, 1, 1);
        self->entries[s] = GTK_ENTRY(gtk_entry_new());
        gtk_widget_set_hexpand(GTK_WIDGET(self->entries[s]), TRUE);
        gtk_accessible_update_property(GTK_ACCESSIBLE(self->entries[s]), GTK_ACCESSIBLE_PROPERTY_LABEL, name, -1);
        g_signal_connect(self->entries[s], "changed", G_CALLBACK(on_changed), self);
        gtk_grid_attach(grid, GTK_WIDGET(self->entries[s]), 1, s, 1, 1);
    }
    gtk_box_append(GTK_BOX(box), GTK_WIDGET(grid));
    self->result = GTK_LABEL(gtk_label_new(NULL));
    gtk_label_set_wrap(self->result, TRUE);
    gtk_label_set_xalign(self->result, 0);
    gtk_label_set_selectable(self->result, TRUE);
    gtk_box_append(GTK_BOX(box), GTK_WIDGET(self->result));
    gtk_expander_set_child(GTK_EXPANDER(self->expander), box);
}

GtkWidget *atn_check_work_new(void) { return g_object_new(ATN_TYPE_CHECK_WORK, NULL); }
