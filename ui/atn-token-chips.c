/* AtnTokenChips: the tokens as chips in a row. */
#include "atn-token-chips.h"
#include "atn-token-chips-test.h"

#include <glib/gi18n.h>
#include <stdlib.h>
#include <string.h>

#include "atn-encdec.h"
#include "atn-model-handle.h"
#include "atn-result.h"
#include "render.h"

struct _AtnTokenChips {
    GtkWidget parent_instance;
    GtkWidget *scroller;
    GtkWidget *flow;
    GPtrArray *chips;   /* GtkWidget* (owned by flow) */
    AtnSession *session;
    int shown_hover, shown_query;
};

G_DEFINE_FINAL_TYPE(AtnTokenChips, atn_token_chips, GTK_TYPE_WIDGET)

static void set_class(GtkWidget *w, const char *cls, gboolean on) {
    if (on)
        gtk_widget_add_css_class(w, cls);
    else
        gtk_widget_remove_css_class(w, cls);
}

static void update_marks(AtnTokenChips *self) {
    int hover = self->session ? atn_session_get_hover_token(self->session) : -1;
    int query = self->session ? atn_session_get_query(self->session) : -1;
    /* an encoder-decoder's decoder or cross head: the query is a target row (the Head view
       marks its row label), not one of these chips, the source's tokens */
    if (self->session && atn_session_get_stack(self->session) != ATN_STACK_ENCODER &&
        atn_result_is_encdec(atn_session_get_result(self->session)))
        query = -1;
    for (guint i = 0; i < self->chips->len; i++) {
        GtkWidget *chip = g_ptr_array_index(self->chips, i);
        set_class(chip, "hovered", (int)i == hover);
        set_class(chip, "query", (int)i == query);
    }
}

static void on_chip_enter(GtkEventControllerMotion *c, double x, double y, AtnTokenChips *self) {
    GtkWidget *chip = gtk_event_controller_get_widget(GTK_EVENT_CONTROLLER(c));
    if (self->session)
        atn_session_set_hover_token(self->session, GPOINTER_TO_INT(g_object_get_data(G_OBJECT(chip), "token")));
}

static void on_chip_leave(GtkEventControllerMotion *c, AtnTokenChips *self) {
    if (self->session)
        atn_session_set_hover_token(self->session, -1);
}

static void on_chip_pressed(GtkGestureClick *g, int n, double x, double y, AtnTokenChips *self) {
    GtkWidget *chip = gtk_event_controller_get_widget(GTK_EVENT_CONTROLLER(g));
    /* a source token is no query of a decoder or cross head (their rows are the target's) */
    if (self->session && (atn_session_get_stack(self->session) == ATN_STACK_ENCODER ||
                          !atn_result_is_encdec(atn_session_get_result(self->session))))
        atn_session_set_query(self->session, GPOINTER_TO_INT(g_object_get_data(G_OBJECT(chip), "token")));
}

static GtkWidget *new_chip(AtnTokenChips *self, int i) {
    GtkWidget *chip = gtk_label_new(NULL);
    gtk_widget_add_css_class(chip, "chip");
    gtk_widget_set_valign(chip, GTK_ALIGN_START);
    g_object_set_data(G_OBJECT(chip), "token", GINT_TO_POINTER(i));
    GtkEventController *motion = gtk_event_controller_motion_new();
    g_signal_connect(motion, "enter", G_CALLBACK(on_chip_enter), self);
    g_signal_connect(motion, "leave", G_CALLBACK(on_chip_leave), self);
    gtk_widget_add_controller(chip, motion);
    GtkGesture *click = gtk_gesture_click_new();
    g_signal_connect(click, "pressed", G_CALLBACK(on_chip_pressed), self);
    gtk_widget_add_controller(chip, GTK_EVENT_CONTROLLER(click));
    return chip;
}

char *atn_token_chip_label(const char *text, const atn_token_info *info) {
    char *label = atn_render_token_label(text, info);
    char *out = g_strdup(label);
    free(label);
    return out;
}

/* Brings the chips in line with the latest result, reusing the ones already there: typing
 * changes a token or two, and making 128 labels anew on every keystroke cost more main-loop
 * time than drawing the heatmap. */
static void rebuild(AtnTokenChips *self) {
    AtnResult *r = self->session ? atn_session_get_result(self->session) : NULL;
    const atn_encoding *enc = r ? atn_result_get_encoding(r) : NULL;
    int n = enc ? enc->n : 0;
    while ((int)self->chips->len > n) {
        gtk_box_remove(GTK_BOX(self->flow), g_ptr_array_index(self->chips, self->chips->len - 1));
        g_ptr_array_set_size(self->chips, self->chips->len - 1);
    }
    while ((int)self->chips->len < n) {
        GtkWidget *chip = new_chip(self, self->chips->len);
        gtk_box_append(GTK_BOX(self->flow), chip);
        g_ptr_array_add(self->chips, chip);
    }
    AtnModelHandle *h = r ? atn_result_get_model(r) : NULL;
    const atn_model *model = h ? atn_model_handle_get_model(h) : NULL;
    for (int i = 0; i < n; i++) {
        GtkWidget *chip = g_ptr_array_index(self->chips, i);
        atn_token_info info;
        bool have = model && atn_model_token_info(model, enc->tokens[i].id, &info);
        g_autofree char *label = atn_token_chip_label(enc->tokens[i].text, have ? &info : NULL);
        if (g_strcmp0(gtk_label_get_label(GTK_LABEL(chip)), label) != 0)
            gtk_label_set_label(GTK_LABEL(chip), label);
        g_object_set_data(G_OBJECT(chip), "partial-char", GINT_TO_POINTER(have && info.partial_char));
        set_class(chip, "special", enc->tokens[i].special);
        set_class(chip, "second", enc->tokens[i].segment == 1);
        set_class(chip, "padding", enc->mask && !enc->mask[i]);
    }
    update_marks(self);
}

/* One tooltip for the whole row ("Token 3, id 2140"), looked up when asked for: a tooltip
 * set on each chip makes GTK ask the X server where the pointer is, once per chip. */
static gboolean on_query_tooltip(GtkWidget *flow, int x, int y, gboolean keyboard, GtkTooltip *tooltip,
                                 AtnTokenChips *self) {
    AtnResult *r = self->session ? atn_session_get_result(self->session) : NULL;
    GtkWidget *w = gtk_widget_pick(flow, x, y, GTK_PICK_DEFAULT);
    while (w && w != flow && !g_object_get_data(G_OBJECT(w), "token") && gtk_widget_get_parent(w) != flow)
        w = gtk_widget_get_parent(w);
    if (!r || !w || w == flow)
        return FALSE;
    int i = GPOINTER_TO_INT(g_object_get_data(G_OBJECT(w), "token"));
    const atn_encoding *enc = atn_result_get_encoding(r);
    if (i < 0 || i >= enc->n)
        return FALSE;
    g_autofree char *tip = g_strdup_printf(_("Token %d, id %d"), i, enc->tokens[i].id);
    if (g_object_get_data(G_OBJECT(w), "partial-char")) {
        char *longer = g_strconcat(tip, " ", _("(part of a character: a byte-level piece)"), NULL);
        g_free(tip);
        tip = longer;
    }
    gtk_tooltip_set_text(tooltip, tip);
    return TRUE;
}

static void on_result(AtnSession *s, GParamSpec *p, AtnTokenChips *self) { rebuild(self); }
static void on_marks(AtnSession *s, GParamSpec *p, AtnTokenChips *self) { update_marks(self); }

static void atn_token_chips_dispose(GObject *object) {
    AtnTokenChips *self = ATN_TOKEN_CHIPS(object);
    if (self->session)
        g_signal_handlers_disconnect_by_data(self->session, self);
    g_clear_object(&self->session);
    g_clear_pointer(&self->scroller, gtk_widget_unparent);
    g_clear_pointer(&self->chips, g_ptr_array_unref);
    G_OBJECT_CLASS(atn_token_chips_parent_class)->dispose(object);
}

static void atn_token_chips_class_init(AtnTokenChipsClass *klass) {
    G_OBJECT_CLASS(klass)->dispose = atn_token_chips_dispose;
    gtk_widget_class_set_layout_manager_type(GTK_WIDGET_CLASS(klass), GTK_TYPE_BIN_LAYOUT);
    gtk_widget_class_set_css_name(GTK_WIDGET_CLASS(klass), "tokenchips");
}

static void atn_token_chips_init(AtnTokenChips *self) {
    self->chips = g_ptr_array_new();
    /* one line of chips, scrolled sideways: a predictable height for any number of tokens */
    self->flow = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 3);
    gtk_widget_set_valign(self->flow, GTK_ALIGN_START);
    gtk_widget_set_has_tooltip(self->flow, TRUE);
    g_signal_connect(self->flow, "query-tooltip", G_CALLBACK(on_query_tooltip), self);
    self->scroller = gtk_scrolled_window_new();
    gtk_scrolled_window_set_policy(GTK_SCROLLED_WINDOW(self->scroller), GTK_POLICY_AUTOMATIC, GTK_POLICY_NEVER);
    gtk_scrolled_window_set_propagate_natural_height(GTK_SCROLLED_WINDOW(self->scroller), TRUE);
    gtk_scrolled_window_set_child(GTK_SCROLLED_WINDOW(self->scroller), self->flow);
    gtk_widget_set_parent(self->scroller, GTK_WIDGET(self));
}

GtkWidget *atn_token_chips_new(void) { return g_object_new(ATN_TYPE_TOKEN_CHIPS, NULL); }

void atn_token_chips_set_session(AtnTokenChips *self, AtnSession *session) {
    g_return_if_fail(ATN_IS_TOKEN_CHIPS(self));
    if (self->session)
        g_signal_handlers_disconnect_by_data(self->session, self);
    g_set_object(&self->session, session);
    if (session) {
        g_signal_connect(session, "notify::result", G_CALLBACK(on_result), self);
        g_signal_connect(session, "notify::hover-token", G_CALLBACK(on_marks), self);
        g_signal_connect(session, "notify::query", G_CALLBACK(on_marks), self);
        g_signal_connect(session, "notify::stack", G_CALLBACK(on_marks), self);
    }
    rebuild(self);
}

int atn_token_chips_get_n_chips(AtnTokenChips *self) {
    g_return_val_if_fail(ATN_IS_TOKEN_CHIPS(self), 0);
    return (int)self->chips->len;
}

GtkWidget *atn_token_chips_get_chip(AtnTokenChips *self, int i) {
    g_return_val_if_fail(ATN_IS_TOKEN_CHIPS(self), NULL);
    return i >= 0 && i < (int)self->chips->len ? g_ptr_array_index(self->chips, i) : NULL;
}
