/* Typed token positions and spans for the What-if page at any length (atn-token-spans.h). */
#include "atn-token-spans.h"

#include <glib/gi18n.h>
#include <stdlib.h>

static int cmp_int32(gconstpointer a, gconstpointer b) {
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

gboolean atn_token_spans_parse(const char *text, int n, GArray *out, char **error) {
    g_auto(GStrv) items = g_regex_split_simple("[,\\s]+", text ? text : "", 0, 0);
    g_autoptr(GArray) got = g_array_new(FALSE, FALSE, sizeof(int32_t));
    for (int k = 0; items[k]; k++) {
        if (!items[k][0])
            continue;
        int a, b, end = 0;
        if (sscanf(items[k], "%d-%d%n", &a, &b, &end) == 2 && items[k][end] == 0) {
        } else if (sscanf(items[k], "%d%n", &a, &end) == 1 && items[k][end] == 0) {
            b = a;
        } else {
            a = -1, b = -2;
        }
        if (a < 0 || b < a || b >= n) {
            /* Translators: a typed token position or span the What-if page refuses; %d: the last token */
            *error = g_strdup_printf(_("“%s” is not a token or a span first-last of tokens 0 to %d"), items[k], n - 1);
            return FALSE;
        }
        for (int32_t i = a; i <= b; i++)
            g_array_append_val(got, i);
    }
    g_array_sort(got, cmp_int32);
    g_array_set_size(out, 0);
    for (guint i = 0; i < got->len; i++)
        if (i == 0 || g_array_index(got, int32_t, i) != g_array_index(got, int32_t, i - 1))
            g_array_append_val(out, g_array_index(got, int32_t, i));
    return TRUE;
}

char *atn_token_spans_format(const int32_t *p, guint count) {
    GString *s = g_string_new(NULL);
    for (guint i = 0; i < count;) {
        guint j = i;
        while (j + 1 < count && p[j + 1] == p[j] + 1)
            j++;
        if (s->len)
            g_string_append(s, ", ");
        if (j - i >= 2)
            g_string_append_printf(s, "%d-%d", p[i], p[j]);
        else {
            g_string_append_printf(s, "%d", p[i]);
            if (j > i)
                g_string_append_printf(s, ", %d", p[j]);
        }
        i = j + 1;
    }
    return g_string_free(s, FALSE);
}

typedef struct {
    GArray *list;
    int n;
    GCallback changed;
    gpointer user_data;
} spans;

static void on_activate(GtkEntry *e, spans *sp) {
    g_autofree char *err = NULL;
    if (!atn_token_spans_parse(gtk_editable_get_text(GTK_EDITABLE(e)), sp->n, sp->list, &err)) {
        gtk_widget_add_css_class(GTK_WIDGET(e), "error");
        gtk_widget_set_tooltip_text(GTK_WIDGET(e), err);
        return;
    }
    gtk_widget_remove_css_class(GTK_WIDGET(e), "error");
    gtk_widget_set_tooltip_text(GTK_WIDGET(e), _("Tokens by position: 0, 5, 120-180 (Enter)"));
    ((void (*)(gpointer))sp->changed)(sp->user_data);
}

GtkWidget *atn_token_spans_entry_new(GArray *list, int n, GCallback changed, gpointer user_data) {
    spans *sp = g_new0(spans, 1);
    *sp = (spans){list, n, changed, user_data};
    GtkWidget *e = gtk_entry_new();
    gtk_widget_set_hexpand(e, TRUE);
    g_autofree char *now = atn_token_spans_format((const int32_t *)(void *)list->data, list->len);
    gtk_editable_set_text(GTK_EDITABLE(e), now);
    g_autofree char *hint = g_strdup_printf(_("%d tokens: type positions and spans, e.g. 0, 5, 120-180"), n);
    gtk_entry_set_placeholder_text(GTK_ENTRY(e), hint);
    /* Translators: the tooltip of the What-if page's token box at 512 tokens and more */
    gtk_widget_set_tooltip_text(e, _("Tokens by position: 0, 5, 120-180 (Enter)"));
    g_signal_connect(e, "activate", G_CALLBACK(on_activate), sp);
    g_object_set_data_full(G_OBJECT(e), "atn-spans", sp, g_free);
    return e;
}

/* ---- the picker: two positions with their tokens shown, added as a span ------------------- */

typedef struct {
    GtkWidget *entry;
    GtkSpinButton *from, *to;
    GtkLabel *text;
    char **tokens;   /* [n] + NULL, copied */
} picker;

static void picker_free(picker *p) {
    g_strfreev(p->tokens);
    g_free(p);
}

static void picker_show(picker *p) {
    spans *sp = g_object_get_data(G_OBJECT(p->entry), "atn-spans");
    int a = gtk_spin_button_get_value_as_int(p->from), b = gtk_spin_button_get_value_as_int(p->to);
    const char *ta = a < sp->n && p->tokens ? p->tokens[a] : "", *tb = b < sp->n && p->tokens ? p->tokens[b] : "";
    int lo = MIN(a, b), hi = MAX(a, b);
    /* Translators: the What-if page's span picker: the tokens at both ends and how many it takes */
    g_autofree char *text = g_strdup_printf(g_dngettext(NULL, "“%s” … “%s”: %d token", "“%s” … “%s”: %d tokens",
                                                        hi - lo + 1),
                                            a <= b ? ta : tb, a <= b ? tb : ta, hi - lo + 1);
    gtk_label_set_text(p->text, text);
}

static void on_spin(GtkSpinButton *b, picker *p) { picker_show(p); }

static void on_add(GtkButton *button, picker *p) {
    spans *sp = g_object_get_data(G_OBJECT(p->entry), "atn-spans");
    int a = gtk_spin_button_get_value_as_int(p->from), b = gtk_spin_button_get_value_as_int(p->to);
    /* the span merged into the list, through the same path as typing it */
    g_autofree char *now = atn_token_spans_format((const int32_t *)(void *)sp->list->data, sp->list->len);
    g_autofree char *text = g_strdup_printf("%s%s%d-%d", now, *now ? ", " : "", MIN(a, b), MAX(a, b));
    gtk_editable_set_text(GTK_EDITABLE(p->entry), text);
    on_activate(GTK_ENTRY(p->entry), sp);   /* last: the page may make its token rows anew */
}

GtkWidget *atn_token_spans_picker_new(GtkWidget *entry, const char *const *tokens) {
    spans *sp = g_object_get_data(G_OBJECT(entry), "atn-spans");
    g_return_val_if_fail(sp != NULL, NULL);
    picker *p = g_new0(picker, 1);
    p->entry = entry;
    p->tokens = tokens ? g_strdupv((char **)tokens) : NULL;
    GtkWidget *box = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 4);
    p->from = GTK_SPIN_BUTTON(gtk_spin_button_new_with_range(0, sp->n - 1, 1));
    p->to = GTK_SPIN_BUTTON(gtk_spin_button_new_with_range(0, sp->n - 1, 1));
    gtk_editable_set_width_chars(GTK_EDITABLE(p->from), 4);
    gtk_editable_set_width_chars(GTK_EDITABLE(p->to), 4);
    /* Translators: tooltips of the What-if page's span picker's two positions */
    gtk_widget_set_tooltip_text(GTK_WIDGET(p->from), _("The span's first token"));
    gtk_widget_set_tooltip_text(GTK_WIDGET(p->to), _("The span's last token"));
    /* Translators: a button adding the picked span of tokens to the What-if page's list */
    GtkWidget *add = gtk_button_new_with_label(_("Add"));
    gtk_widget_set_tooltip_text(add, _("Add these tokens to the list"));
    p->text = GTK_LABEL(gtk_label_new(""));
    gtk_label_set_ellipsize(p->text, PANGO_ELLIPSIZE_MIDDLE);
    gtk_label_set_width_chars(p->text, 12);
    gtk_widget_add_css_class(GTK_WIDGET(p->text), "dim-label");
    gtk_box_append(GTK_BOX(box), GTK_WIDGET(p->from));
    gtk_box_append(GTK_BOX(box), gtk_label_new("–"));
    gtk_box_append(GTK_BOX(box), GTK_WIDGET(p->to));
    gtk_box_append(GTK_BOX(box), add);
    GtkWidget *col = gtk_box_new(GTK_ORIENTATION_VERTICAL, 2);
    gtk_box_append(GTK_BOX(col), box);
    gtk_box_append(GTK_BOX(col), GTK_WIDGET(p->text));
    g_signal_connect(p->from, "value-changed", G_CALLBACK(on_spin), p);
    g_signal_connect(p->to, "value-changed", G_CALLBACK(on_spin), p);
    g_signal_connect(add, "clicked", G_CALLBACK(on_add), p);
    g_object_set_data_full(G_OBJECT(col), "atn-picker", p, (GDestroyNotify)picker_free);
    picker_show(p);
    return col;
}

void atn_token_spans_picker_get(GtkWidget *picker_widget, GtkSpinButton **from, GtkSpinButton **to, GtkButton **add,
                                GtkLabel **text) {
    picker *p = g_object_get_data(G_OBJECT(picker_widget), "atn-picker");
    g_return_if_fail(p != NULL);
    if (from)
        *from = p->from;
    if (to)
        *to = p->to;
    if (add)   /* the row's last child */
        *add = GTK_BUTTON(gtk_widget_get_last_child(gtk_widget_get_first_child(picker_widget)));
    if (text)
        *text = p->text;
}
