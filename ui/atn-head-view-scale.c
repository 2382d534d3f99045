/* The Head view's colour-scale and pooling controls (atn-head-view-scale.h). */
#include "atn-head-view-scale.h"

#include <glib/gi18n.h>

typedef struct {
    AtnHeatmap *heatmap;
    GtkDropDown *scale, *pool;
    GtkCheckButton *drop_first;
    GtkEntry *span;
    GtkWidget *whole;   /* "Whole input": shown while a span is */
} controls;

static void apply(controls *c) {
    guint s = gtk_drop_down_get_selected(c->scale);
    atn_colour_scale scale = s == 1 ? ATN_SCALE_LOG : s == 2 ? ATN_SCALE_RANK : ATN_SCALE_LINEAR;
    atn_heatmap_set_colour_scale(c->heatmap, scale, gtk_check_button_get_active(c->drop_first));
    atn_heatmap_set_pool_mode(c->heatmap, gtk_drop_down_get_selected(c->pool) == 1 ? ATN_POOL_MEAN : ATN_POOL_MAX);
}

static void on_changed(GObject *o, GParamSpec *p, controls *c) { apply(c); }

/* "120-180" (both ends included) crops both axes to those tokens; "" shows them all. */
gboolean atn_head_view_scale_set_span(GtkWidget *box, const char *text) {
    controls *c = g_object_get_data(G_OBJECT(box), "atn-scale-controls");
    int a, b, end = 0;
    gboolean ok;
    if (!text || !*text) {
        atn_heatmap_reset_zoom(c->heatmap);
        ok = TRUE;
    } else {
        ok = sscanf(text, " %d - %d %n", &a, &b, &end) == 2 && text[end] == 0 && a <= b &&
             atn_heatmap_show_block(c->heatmap, a, b - a + 1);
    }
    if (ok)
        gtk_widget_remove_css_class(GTK_WIDGET(c->span), "error");
    else
        gtk_widget_add_css_class(GTK_WIDGET(c->span), "error");
    return ok;
}

static void on_span(GtkEntry *e, controls *c) {
    GtkWidget *box = gtk_widget_get_parent(GTK_WIDGET(e));
    atn_head_view_scale_set_span(box, gtk_editable_get_text(GTK_EDITABLE(e)));
}
static void on_toggled(GtkCheckButton *b, controls *c) { apply(c); }

/* The span shown, typed or dragged along an axis, in the box; none (zoomed, panned, the whole
 * input): the box empty unless it holds a refused span being corrected. */
static void on_view_changed(AtnHeatmap *h, controls *c) {
    int first, count;
    gboolean on = atn_heatmap_get_span(h, &first, &count);
    if (on) {
        g_autofree char *text = g_strdup_printf("%d-%d", first, first + count - 1);
        gtk_editable_set_text(GTK_EDITABLE(c->span), text);
        gtk_widget_remove_css_class(GTK_WIDGET(c->span), "error");
    } else if (!gtk_widget_has_css_class(GTK_WIDGET(c->span), "error")) {
        gtk_editable_set_text(GTK_EDITABLE(c->span), "");
    }
    gtk_widget_set_visible(c->whole, on);
}

static void on_whole(GtkButton *b, controls *c) {
    gtk_widget_remove_css_class(GTK_WIDGET(c->span), "error");
    atn_heatmap_reset_zoom(c->heatmap);
}

GtkWidget *atn_head_view_scale_controls_new(AtnHeatmap *heatmap) {
    controls *c = g_new0(controls, 1);
    c->heatmap = heatmap;
    GtkWidget *box = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 6);
    const char *const scales[] = {
        /* Translators: the Head view's colour scale: colours proportional to the weight */
        C_("colour scale", "Linear"),
        /* Translators: the Head view's colour scale: colours by log10 of the weight */
        C_("colour scale", "Log"),
        /* Translators: the Head view's colour scale: colours by each weight's rank within its query row */
        C_("colour scale", "Rank in row"), NULL};
    c->scale = GTK_DROP_DOWN(gtk_drop_down_new_from_strings(scales));
    gtk_widget_set_tooltip_text(GTK_WIDGET(c->scale),
                                _("Colour scale: log or rank in its row show the small weights an attention sink "
                                  "leaves dark"));
    c->drop_first = GTK_CHECK_BUTTON(gtk_check_button_new_with_mnemonic(_("Leave out _1st")));
    gtk_widget_set_tooltip_text(GTK_WIDGET(c->drop_first),
                                _("Leave the first token's column ([CLS], <s>) out of the colours; the legend "
                                  "says how much weight it takes"));
    const char *const pools[] = {
        /* Translators: what a pooled block of cells shows when there are more tokens than pixels */
        _("Block max"),
        /* Translators: the same, the mean of the block */
        _("Block mean"), NULL};
    c->pool = GTK_DROP_DOWN(gtk_drop_down_new_from_strings(pools));
    gtk_widget_set_tooltip_text(GTK_WIDGET(c->pool),
                                _("With more tokens than pixels each pixel shows a block of cells: its largest or "
                                  "its mean weight"));
    c->span = GTK_ENTRY(gtk_entry_new());
    gtk_editable_set_width_chars(GTK_EDITABLE(c->span), 8);
    /* Translators: the placeholder of the Head view's token span box */
    gtk_entry_set_placeholder_text(c->span, _("120-180"));
    gtk_widget_set_tooltip_text(GTK_WIDGET(c->span),
                                _("Show only these tokens on both axes (first-last, Enter, or drag along an axis); "
                                  "empty: all of them"));
    /* Translators: a button beside the Head view's token span: show every token again */
    c->whole = gtk_button_new_with_label(_("Whole input"));
    gtk_widget_set_tooltip_text(c->whole, _("Show every token again (Escape, or double-click an axis)"));
    gtk_widget_set_visible(c->whole, FALSE);
    gtk_box_append(GTK_BOX(box), GTK_WIDGET(c->span));
    gtk_box_append(GTK_BOX(box), c->whole);
    gtk_box_append(GTK_BOX(box), GTK_WIDGET(c->scale));
    gtk_box_append(GTK_BOX(box), GTK_WIDGET(c->drop_first));
    gtk_box_append(GTK_BOX(box), GTK_WIDGET(c->pool));
    g_signal_connect(c->scale, "notify::selected", G_CALLBACK(on_changed), c);
    g_signal_connect(c->pool, "notify::selected", G_CALLBACK(on_changed), c);
    g_signal_connect(c->drop_first, "toggled", G_CALLBACK(on_toggled), c);
    g_signal_connect(c->span, "activate", G_CALLBACK(on_span), c);
    g_signal_connect(c->whole, "clicked", G_CALLBACK(on_whole), c);
    g_signal_connect(heatmap, "view-changed", G_CALLBACK(on_view_changed), c);
    g_object_set_data_full(G_OBJECT(box), "atn-scale-controls", c, g_free);
    return box;
}

static controls *of(GtkWidget *box) { return g_object_get_data(G_OBJECT(box), "atn-scale-controls"); }
GtkDropDown *atn_head_view_scale_get_scale_dropdown(GtkWidget *box) { return of(box)->scale; }
GtkCheckButton *atn_head_view_scale_get_drop_first(GtkWidget *box) { return of(box)->drop_first; }
GtkDropDown *atn_head_view_scale_get_pool_dropdown(GtkWidget *box) { return of(box)->pool; }
GtkEntry *atn_head_view_scale_get_span(GtkWidget *box) { return of(box)->span; }
GtkButton *atn_head_view_scale_get_whole(GtkWidget *box) { return GTK_BUTTON(of(box)->whole); }
