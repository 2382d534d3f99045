/* The What-if page's rotary knobs (see atn-whatif-rotary.h). */
#include "atn-whatif-rotary.h"
#include "atn-whatif.h"
#include "atn-error-text.h"

#include <glib/gi18n.h>
#include <string.h>

struct AtnWhatifRotary {
    GtkWidget *box;
    GtkCheckButton *theta_check, *factor_check, *llama3_check;
    GtkSpinButton *theta_spin, *factor_spin, *llama3_spin, *window_spin;
    GtkEntry *off_entry, *on_entry;
    GtkLabel *window_note;
    gboolean own_window;   /* the model has a sliding window (its size is not editable) */
    double model_theta;
};

static GtkWidget *section_note(const char *text) {
    GtkWidget *l = gtk_label_new(text);
    gtk_label_set_wrap(GTK_LABEL(l), TRUE);
    gtk_label_set_xalign(GTK_LABEL(l), 0);
    gtk_label_set_max_width_chars(GTK_LABEL(l), 40);
    gtk_widget_add_css_class(l, "dim-label");
    return l;
}

static GtkCheckButton *knob_check(GtkWidget *row, const char *label, GCallback changed, gpointer data) {
    GtkWidget *c = gtk_check_button_new_with_mnemonic(label);
    GtkWidget *l = gtk_widget_get_last_child(c);
    if (GTK_IS_LABEL(l)) {
        gtk_label_set_wrap(GTK_LABEL(l), TRUE);
        gtk_label_set_wrap_mode(GTK_LABEL(l), PANGO_WRAP_WORD_CHAR);
    }
    g_signal_connect_swapped(c, "toggled", changed, data);
    gtk_box_append(GTK_BOX(row), c);
    return GTK_CHECK_BUTTON(c);
}

static GtkSpinButton *knob_spin(GtkWidget *row, double lo, double hi, double step, double value, int digits,
                                GCallback changed, gpointer data) {
    GtkWidget *s = gtk_spin_button_new_with_range(lo, hi, step);
    gtk_spin_button_set_digits(GTK_SPIN_BUTTON(s), (guint)digits);
    gtk_spin_button_set_value(GTK_SPIN_BUTTON(s), value);
    g_signal_connect_swapped(s, "value-changed", changed, data);
    gtk_box_append(GTK_BOX(row), s);
    return GTK_SPIN_BUTTON(s);
}

static GtkEntry *layers_entry(GtkWidget *box, const char *label, GCallback changed, gpointer data) {
    GtkWidget *row = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 6);
    GtkWidget *l = gtk_label_new_with_mnemonic(label);
    gtk_label_set_xalign(GTK_LABEL(l), 0);
    gtk_label_set_wrap(GTK_LABEL(l), TRUE);
    gtk_box_append(GTK_BOX(row), l);
    GtkWidget *e = gtk_entry_new();
    gtk_editable_set_width_chars(GTK_EDITABLE(e), 6);
    gtk_widget_set_hexpand(e, TRUE);
    gtk_entry_set_placeholder_text(GTK_ENTRY(e), _("none"));
    gtk_widget_set_tooltip_text(e, _("For example 0,2-3"));
    gtk_label_set_mnemonic_widget(GTK_LABEL(l), e);
    g_signal_connect_swapped(e, "changed", changed, data);
    gtk_box_append(GTK_BOX(row), e);
    gtk_box_append(GTK_BOX(box), row);
    return GTK_ENTRY(e);
}

static void update_sensitivity(AtnWhatifRotary *r) {
    gtk_widget_set_sensitive(GTK_WIDGET(r->theta_spin), gtk_check_button_get_active(r->theta_check));
    gtk_widget_set_sensitive(GTK_WIDGET(r->factor_spin), gtk_check_button_get_active(r->factor_check));
    gtk_widget_set_sensitive(GTK_WIDGET(r->llama3_spin), gtk_check_button_get_active(r->llama3_check));
    gtk_widget_set_sensitive(GTK_WIDGET(r->window_spin), !r->own_window);
}

AtnWhatifRotary *atn_whatif_rotary_new(GCallback changed, gpointer data) {
    AtnWhatifRotary *r = g_new0(AtnWhatifRotary, 1);
    r->model_theta = 10000.0;
    r->box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 4);
    GtkWidget *h = gtk_label_new(_("Rotary positions"));
    gtk_widget_add_css_class(h, "heading");
    gtk_label_set_xalign(GTK_LABEL(h), 0);
    gtk_widget_set_margin_top(h, 8);
    gtk_box_append(GTK_BOX(r->box), h);
    GtkWidget *row = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 6);
    r->theta_check = knob_check(row, _("RoPE _base θ:"), changed, data);
    r->theta_spin = knob_spin(row, 1, 1e9, 1000, 10000, 0, changed, data);
    gtk_box_append(GTK_BOX(r->box), row);
    row = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 6);
    r->factor_check = knob_check(row, _("Linear _scaling, positions ÷"), changed, data);
    r->factor_spin = knob_spin(row, 0.05, 1024, 0.5, 2, 2, changed, data);
    gtk_box_append(GTK_BOX(r->box), row);
    row = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 6);
    r->llama3_check = knob_check(row, _("Llama _3 scaling, factor"), changed, data);
    r->llama3_spin = knob_spin(row, 0.05, 1024, 1, 8, 2, changed, data);
    gtk_widget_set_tooltip_text(GTK_WIDGET(r->llama3_check),
                                _("Llama 3's RoPE scaling with this factor in place of the model's: long wavelengths "
                                  "divided by it, short ones kept, those between blended"));
    gtk_box_append(GTK_BOX(r->box), row);
    gtk_box_append(GTK_BOX(r->box), section_note(_("“No position embeddings” above leaves q and k unrotated "
                                                    "(NoPE).")));
    r->off_entry = layers_entry(r->box, _("Sliding window _off in layers:"), changed, data);
    r->on_entry = layers_entry(r->box, _("Sliding window o_n in layers:"), changed, data);
    row = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 6);
    GtkWidget *wl = gtk_label_new(_("Window (tokens):"));
    gtk_box_append(GTK_BOX(row), wl);
    r->window_spin = knob_spin(row, 1, 1 << 20, 1, 4, 0, changed, data);
    gtk_box_append(GTK_BOX(r->box), row);
    r->window_note = GTK_LABEL(section_note(""));
    gtk_box_append(GTK_BOX(r->box), GTK_WIDGET(r->window_note));
    g_signal_connect_swapped(r->theta_check, "toggled", G_CALLBACK(update_sensitivity), r);
    g_signal_connect_swapped(r->factor_check, "toggled", G_CALLBACK(update_sensitivity), r);
    g_signal_connect_swapped(r->llama3_check, "toggled", G_CALLBACK(update_sensitivity), r);
    update_sensitivity(r);
    gtk_widget_set_visible(r->box, FALSE);
    return r;
}

void atn_whatif_rotary_free(AtnWhatifRotary *r) { g_free(r); }

GtkWidget *atn_whatif_rotary_widget(AtnWhatifRotary *r) { return r->box; }

void atn_whatif_rotary_set_model(AtnWhatifRotary *r, const atn_model *m) {
    atn_rotary_info info;
    gboolean rotary = m && atn_model_rotary_info(m, &info);
    gtk_widget_set_visible(r->box, rotary);
    if (!rotary)
        return;
    r->model_theta = info.theta > 0 ? info.theta : 10000.0;
    int32_t own = info.window > 0 ? info.window : info.local_layers ? info.local_window
                : info.global_every > 0 ? 2 * info.local_half + 1 : 0;
    r->own_window = own > 0;
    if (!gtk_check_button_get_active(r->theta_check))
        gtk_spin_button_set_value(r->theta_spin, r->model_theta);
    if (own > 0) {
        gtk_spin_button_set_value(r->window_spin, own);
        g_autofree char *t = g_strdup_printf(_("The model's sliding window: %d tokens."), own);
        gtk_label_set_text(r->window_note, t);
    } else {
        gtk_label_set_text(r->window_note, _("The model has no sliding window: layers turned on use the "
                                             "window above."));
    }
    update_sensitivity(r);
}

/* A layer list entry into mark[n_layers]; FALSE (marked at the entry) when it does not parse. */
static gboolean read_layers(GtkEntry *e, int n_layers, uint8_t *mark) {
    const char *text = gtk_editable_get_text(GTK_EDITABLE(e));
    while (*text == ' ')
        text++;
    gtk_widget_remove_css_class(GTK_WIDGET(e), "error");
    gtk_widget_set_tooltip_text(GTK_WIDGET(e), _("For example 0,2-3"));
    if (!*text || n_layers <= 0)
        return TRUE;
    atn_error err = {0};
    if (atn_parse_layer_list(text, n_layers, mark, &err) == ATN_OK)
        return TRUE;
    g_autofree char *why = atn_error_text(&err);
    gtk_widget_add_css_class(GTK_WIDGET(e), "error");
    gtk_widget_set_tooltip_text(GTK_WIDGET(e), why);
    memset(mark, 0, (size_t)n_layers);
    return FALSE;
}

void atn_whatif_rotary_read(AtnWhatifRotary *r, int n_layers, atn_interventions *iv, int8_t **sliding) {
    *sliding = NULL;
    if (!gtk_widget_get_visible(r->box))
        return;
    if (gtk_check_button_get_active(r->theta_check))
        iv->rope_theta = gtk_spin_button_get_value(r->theta_spin);
    if (gtk_check_button_get_active(r->factor_check))
        iv->rope_factor = gtk_spin_button_get_value(r->factor_spin);
    if (gtk_check_button_get_active(r->llama3_check))
        iv->rope_llama3 = gtk_spin_button_get_value(r->llama3_spin);
    if (n_layers <= 0)
        return;
    g_autofree uint8_t *off = g_new0(uint8_t, n_layers), *on = g_new0(uint8_t, n_layers);
    read_layers(r->off_entry, n_layers, off);
    read_layers(r->on_entry, n_layers, on);
    gboolean any = FALSE;
    int8_t *s = g_new0(int8_t, n_layers);
    for (int l = 0; l < n_layers; l++) {
        s[l] = on[l] ? 1 : off[l] ? -1 : 0;   /* a layer in both lists: on */
        any |= s[l] != 0;
    }
    if (!any) {
        g_free(s);
        return;
    }
    *sliding = s;
    iv->sliding = s;
    if (!r->own_window)
        iv->sliding_window = gtk_spin_button_get_value_as_int(r->window_spin);
}

void atn_whatif_rotary_sync(AtnWhatifRotary *r, const atn_interventions *iv, int n_layers) {
    gtk_check_button_set_active(r->theta_check, iv && iv->rope_theta > 0);
    gtk_spin_button_set_value(r->theta_spin, iv && iv->rope_theta > 0 ? iv->rope_theta : r->model_theta);
    gboolean f = iv && iv->rope_factor > 0 && iv->rope_factor != 1.0;
    gtk_check_button_set_active(r->factor_check, f);
    if (f)
        gtk_spin_button_set_value(r->factor_spin, iv->rope_factor);
    gtk_check_button_set_active(r->llama3_check, iv && iv->rope_llama3 > 0);
    if (iv && iv->rope_llama3 > 0)
        gtk_spin_button_set_value(r->llama3_spin, iv->rope_llama3);
    g_autofree uint8_t *off = g_new0(uint8_t, MAX(n_layers, 1)), *on = g_new0(uint8_t, MAX(n_layers, 1));
    for (int l = 0; iv && iv->sliding && l < n_layers; l++)
        off[l] = iv->sliding[l] < 0, on[l] = iv->sliding[l] > 0;
    g_autofree char *toff = atn_whatif_format_layers(off, n_layers, TRUE);
    g_autofree char *ton = atn_whatif_format_layers(on, n_layers, TRUE);
    gtk_editable_set_text(GTK_EDITABLE(r->off_entry), toff);
    gtk_editable_set_text(GTK_EDITABLE(r->on_entry), ton);
    if (iv && iv->sliding_window > 0)
        gtk_spin_button_set_value(r->window_spin, iv->sliding_window);
    update_sensitivity(r);
}

void atn_whatif_rotary_reset(AtnWhatifRotary *r) { atn_whatif_rotary_sync(r, NULL, 0); }

GtkWidget *atn_whatif_rotary_get_control(AtnWhatifRotary *r, const char *name) {
    const struct {
        const char *name;
        gpointer w;
    } c[] = {{"rope-theta", r->theta_check},   {"rope-theta-value", r->theta_spin},
             {"rope-factor", r->factor_check}, {"rope-factor-value", r->factor_spin},
             {"rope-llama3", r->llama3_check}, {"rope-llama3-value", r->llama3_spin},
             {"sliding-off", r->off_entry},    {"sliding-on", r->on_entry},
             {"sliding-window", r->window_spin}};
    for (guint i = 0; i < G_N_ELEMENTS(c); i++)
        if (!strcmp(c[i].name, name))
            return GTK_WIDGET(c[i].w);
    return NULL;
}
