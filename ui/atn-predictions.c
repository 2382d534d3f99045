/* AtnPredictions: the masked-LM head's guesses under the sentence, or a causal model's
 * next-token guesses. */
#include "atn-predictions.h"
#include "atn-predictions-test.h"
#include "atn-encdec.h"

#include <glib/gi18n.h>
#include <stdlib.h>

struct _AtnPredictions {
    GtkWidget parent_instance;
    GtkWidget *scroller; /* the rows scroll sideways when the window is narrower than a row */
    GtkWidget *box;      /* one row per [MASK], or the no-head label */
    AtnSession *session;
    GString *text;       /* what the rows say (atn_predictions_dup_text) */
};

G_DEFINE_FINAL_TYPE(AtnPredictions, atn_predictions, GTK_TYPE_WIDGET)

enum { SIGNAL_FILL, N_SIGNALS };
static guint signals[N_SIGNALS];

static void on_row_enter(GtkEventControllerMotion *c, double x, double y, AtnPredictions *self) {
    GtkWidget *row = gtk_event_controller_get_widget(GTK_EVENT_CONTROLLER(c));
    AtnResult *r = self->session ? atn_session_get_result(self->session) : NULL;
    if (r && atn_result_is_encdec(r))   /* a target position, not one of the chips (the source's) */
        return;
    if (self->session)
        atn_session_set_hover_token(self->session, GPOINTER_TO_INT(g_object_get_data(G_OBJECT(row), "position")));
}

static void on_row_leave(GtkEventControllerMotion *c, AtnPredictions *self) {
    if (self->session)
        atn_session_set_hover_token(self->session, -1);
}

static void on_guess_clicked(GtkButton *b, AtnPredictions *self) {
    g_signal_emit(self, signals[SIGNAL_FILL], 0, GPOINTER_TO_INT(g_object_get_data(G_OBJECT(b), "position")),
                  GPOINTER_TO_INT(g_object_get_data(G_OBJECT(b), "rank")));
}

/* A guess as every view shows tokens ("␣the", not "\u0120the"). */
static char *guess_label(AtnPredictions *self, const atn_prediction *p) {
    AtnResult *r = self->session ? atn_session_get_result(self->session) : NULL;
    AtnModelHandle *h = r ? atn_result_get_model(r) : NULL;
    char *label = atn_render_prediction_label(h ? atn_model_handle_get_model(h) : NULL, p);
    char *out = g_strdup(label ? label : p->token);
    free(label);
    return out;
}

/* One guess: the word over a bar as long as its probability; clicking it puts the word in
 * the sentence in place of its [MASK]. */
static GtkWidget *guess_widget(AtnPredictions *self, int position, int rank, const atn_prediction *p) {
    gboolean first = rank == 0;
    GtkWidget *box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 2);
    g_autofree char *pct = g_strdup_printf("%.1f%%", 100.0 * p->prob);
    g_autofree char *word = guess_label(self, p);
    g_autofree char *esc = g_markup_escape_text(word, -1);
    g_autofree char *markup = g_strdup_printf(first ? "<b>%s</b>  <small>%s</small>" : "%s  <small>%s</small>", esc,
                                              pct);
    GtkWidget *label = gtk_label_new(NULL);
    gtk_label_set_markup(GTK_LABEL(label), markup);
    gtk_label_set_xalign(GTK_LABEL(label), 0);
    gtk_box_append(GTK_BOX(box), label);
    GtkWidget *bar = gtk_level_bar_new_for_interval(0, 1);
    gtk_level_bar_set_value(GTK_LEVEL_BAR(bar), p->prob);
    /* the default offsets colour low values as a warning: one colour for every bar */
    gtk_level_bar_remove_offset_value(GTK_LEVEL_BAR(bar), GTK_LEVEL_BAR_OFFSET_LOW);
    gtk_level_bar_remove_offset_value(GTK_LEVEL_BAR(bar), GTK_LEVEL_BAR_OFFSET_HIGH);
    gtk_level_bar_remove_offset_value(GTK_LEVEL_BAR(bar), GTK_LEVEL_BAR_OFFSET_FULL);
    gtk_widget_set_size_request(bar, 72, -1);
    gtk_box_append(GTK_BOX(box), bar);
    GtkWidget *button = gtk_button_new();
    gtk_button_set_child(GTK_BUTTON(button), box);
    gtk_widget_add_css_class(button, "flat");
    gtk_widget_add_css_class(button, "guess");
    AtnResult *r = self->session ? atn_session_get_result(self->session) : NULL;
    g_autofree char *tip = r && atn_result_is_encdec(r)
                               /* Translators: an encoder-decoder's next-token guess (not put in the sentence) */
                               ? g_strdup_printf(_("Token id %d · probability %.4f"), p->id, p->prob)
                               : g_strdup_printf(_("Token id %d · probability %.4f — click to put it in the sentence"),
                                                 p->id, p->prob);
    gtk_widget_set_tooltip_text(button, tip);
    g_object_set_data(G_OBJECT(button), "position", GINT_TO_POINTER(position));
    g_object_set_data(G_OBJECT(button), "rank", GINT_TO_POINTER(rank));
    g_signal_connect(button, "clicked", G_CALLBACK(on_guess_clicked), self);
    return button;
}

/* A causal model (GPT-2): one row of next-token guesses after the last token, and one after
 * the selected (clicked) token when that is another. */
static void add_guess_row(AtnPredictions *self, const AtnMaskGuesses *g, const char *head, gboolean first) {
    GtkWidget *row = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 14);
    gtk_widget_add_css_class(row, "guesses");
    g_object_set_data(G_OBJECT(row), "position", GINT_TO_POINTER(g->position));
    GtkWidget *title = gtk_label_new(head);
    gtk_widget_add_css_class(title, "dim-label");
    gtk_widget_set_valign(title, GTK_ALIGN_START);
    gtk_widget_set_margin_top(title, 6);
    gtk_box_append(GTK_BOX(row), title);
    g_string_append_printf(self->text, "%snext after %d:", first ? "" : "\n", g->position);
    for (int k = 0; k < g->n; k++) {
        gtk_box_append(GTK_BOX(row), guess_widget(self, g->position, k, &g->top[k]));
        g_autofree char *word = guess_label(self, &g->top[k]);
        g_string_append_printf(self->text, "%s %s %.4f", k ? "," : "", word, g->top[k].prob);
    }
    GtkEventController *motion = gtk_event_controller_motion_new();
    g_signal_connect(motion, "enter", G_CALLBACK(on_row_enter), self);
    g_signal_connect(motion, "leave", G_CALLBACK(on_row_leave), self);
    gtk_widget_add_controller(row, motion);
    gtk_box_append(GTK_BOX(self->box), row);
}

/* One line of text instead of guesses (why there are none), shown. */
static void add_note(AtnPredictions *self, const char *msg) {
    gtk_widget_set_visible(GTK_WIDGET(self), TRUE);
    GtkWidget *label = gtk_label_new(msg);
    gtk_label_set_xalign(GTK_LABEL(label), 0);
    gtk_label_set_wrap(GTK_LABEL(label), TRUE);
    gtk_widget_add_css_class(label, "dim-label");
    gtk_box_append(GTK_BOX(self->box), label);
    g_string_append(self->text, msg);
}

static void refill_next(AtnPredictions *self, AtnResult *r) {
    gtk_widget_set_visible(GTK_WIDGET(self), TRUE);
    int last = atn_result_get_last_position(r), query = atn_session_get_query(self->session);
    const char *const *tokens = atn_result_get_tokens(r);
    int rows = 0;
    for (int pass = 0; pass < 2; pass++) {
        int pos = pass == 0 ? last : query;
        if (pass == 1 && (pos == last || pos < 0 || pos >= atn_result_get_n_tokens(r)))
            break;
        const AtnMaskGuesses *g = atn_result_get_next_guesses(r, pos);
        if (!g)
            continue;
        /* Translators: before a causal model's guesses for the token that follows token %d ("%s") */
        g_autofree char *head = g_strdup_printf(pass == 0 ? _("next after “%2$s” (%1$d, the last) →")
                                                          : _("next after “%2$s” (%1$d) →"),
                                                pos, tokens[pos]);
        add_guess_row(self, g, head, rows++ == 0);
    }
}

/* An encoder-decoder: the decoder's guesses after the last target position (of the decoder's
 * input: the start token, then the target's tokens but the last), and after the selected
 * target token when a decoder or cross head is shown and it is another. */
static void refill_target(AtnPredictions *self, AtnResult *r) {
    gtk_widget_set_visible(GTK_WIDGET(self), TRUE);
    const atn_stack *st = atn_result_get_stack(r, ATN_STACK_DECODER);
    const char *const *tokens = atn_result_get_stack_tokens(r, ATN_STACK_DECODER, FALSE);
    int last = st ? st->n_q - 1 : -1, query = atn_session_get_query(self->session);
    gboolean target_query = atn_session_get_stack(self->session) != ATN_STACK_ENCODER;
    int rows = 0;
    for (int pass = 0; pass < 2 && tokens && last >= 0; pass++) {
        int pos = pass == 0 ? last : query;
        if (pass == 1 && (!target_query || pos == last || pos < 0 || pos > last))
            break;
        const AtnMaskGuesses *g = atn_result_get_next_guesses(r, pos);
        if (!g)
            continue;
        /* Translators: before an encoder-decoder's guesses for the target token that follows
           target token %d ("%s") */
        g_autofree char *head = g_strdup_printf(pass == 0 ? _("next after target “%2$s” (%1$d, the last) →")
                                                          : _("next after target “%2$s” (%1$d) →"),
                                                pos, tokens[pos]);
        add_guess_row(self, g, head, rows++ == 0);
    }
}

static void refill_rows(AtnPredictions *self) {
    GtkWidget *child;
    while ((child = gtk_widget_get_first_child(self->box)))
        gtk_box_remove(GTK_BOX(self->box), child);
    g_string_truncate(self->text, 0);
    AtnResult *r = self->session ? atn_session_get_result(self->session) : NULL;
    if (r && !atn_result_has_weights(r)) {
        add_note(self, _("Predictions are off: an attention file has no weights to guess words with."));
        return;
    }
    if (r && atn_result_is_causal(r) && !atn_model_handle_is_toy(atn_result_get_model(r))) {
        refill_next(self, r);
        return;
    }
    if (r && atn_result_is_encdec(r) && atn_result_get_model(r) &&
        atn_model_handle_get_model(atn_result_get_model(r))) {
        refill_target(self, r);
        return;
    }
    int n = r ? atn_result_get_n_masks(r) : 0;
    AtnModelHandle *m = r ? atn_result_get_model(r) : NULL;
    gtk_widget_set_visible(GTK_WIDGET(self), n > 0 && m && !atn_model_handle_is_toy(m));
    if (!gtk_widget_get_visible(GTK_WIDGET(self)))
        return;
    if (!atn_result_get_mask_guesses(r, 0)) {
        add_note(self, _("This model has no masked-language-model head (cls.predictions.*), so it cannot guess "
                         "the [MASK] words."));
        return;
    }
    for (int i = 0; i < n; i++) {
        const AtnMaskGuesses *g = atn_result_get_mask_guesses(r, i);
        GtkWidget *row = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 14);
        gtk_widget_add_css_class(row, "guesses");
        g_object_set_data(G_OBJECT(row), "position", GINT_TO_POINTER(g->position));
        /* Translators: before the masked-LM head's guesses for the [MASK] token at this position */
        g_autofree char *head = g_strdup_printf(_("[MASK] %d →"), g->position);
        GtkWidget *title = gtk_label_new(head);
        gtk_widget_add_css_class(title, "dim-label");
        gtk_widget_set_valign(title, GTK_ALIGN_START);
        gtk_widget_set_margin_top(title, 6);   /* level with the words inside the guess buttons */
        gtk_box_append(GTK_BOX(row), title);
        g_string_append_printf(self->text, "%s%d:", i ? "\n" : "", g->position);
        for (int k = 0; k < g->n; k++) {
            gtk_box_append(GTK_BOX(row), guess_widget(self, g->position, k, &g->top[k]));
            g_autofree char *word = guess_label(self, &g->top[k]);
        g_string_append_printf(self->text, "%s %s %.4f", k ? "," : "", word, g->top[k].prob);
        }
        GtkEventController *motion = gtk_event_controller_motion_new();
        g_signal_connect(motion, "enter", G_CALLBACK(on_row_enter), self);
        g_signal_connect(motion, "leave", G_CALLBACK(on_row_leave), self);
        gtk_widget_add_controller(row, motion);
        gtk_box_append(GTK_BOX(self->box), row);
    }
}

/* Two rows or more (a causal model's guesses after the last and the clicked token, several
 * [MASK]s) scroll up and down too when the window is short: at 1280x720 with a lesson shown
 * (issue 40) demo-gpt2's two rows (82 px) with the lesson panel made the window's minimum
 * 752 px.  Then the minimum is the scroller's (about one row), and any spare height shows
 * every row (the box gives the rows their natural height before the views grow).  One row
 * does not scroll: a scroller's minimum is more than one row. */
static void refill(AtnPredictions *self) {
    refill_rows(self);
    int rows = 0;
    for (GtkWidget *c = gtk_widget_get_first_child(self->box); c; c = gtk_widget_get_next_sibling(c))
        rows++;
    gtk_scrolled_window_set_policy(GTK_SCROLLED_WINDOW(self->scroller), GTK_POLICY_AUTOMATIC,
                                   rows > 1 ? GTK_POLICY_AUTOMATIC : GTK_POLICY_NEVER);
}

static void on_result(AtnSession *s, GParamSpec *p, AtnPredictions *self) { refill(self); }

static void on_query(AtnSession *s, GParamSpec *p, AtnPredictions *self) {
    AtnResult *r = atn_session_get_result(s);
    if (r && (atn_result_is_causal(r) || atn_result_is_encdec(r)))   /* the row after the clicked token follows it */
        refill(self);
}

static void atn_predictions_dispose(GObject *object) {
    AtnPredictions *self = ATN_PREDICTIONS(object);
    if (self->session)
        g_signal_handlers_disconnect_by_data(self->session, self);
    g_clear_object(&self->session);
    self->box = NULL;   /* the scroller's */
    g_clear_pointer(&self->scroller, gtk_widget_unparent);
    if (self->text)
        g_string_free(self->text, TRUE);
    self->text = NULL;
    G_OBJECT_CLASS(atn_predictions_parent_class)->dispose(object);
}

static void atn_predictions_class_init(AtnPredictionsClass *klass) {
    G_OBJECT_CLASS(klass)->dispose = atn_predictions_dispose;
    gtk_widget_class_set_layout_manager_type(GTK_WIDGET_CLASS(klass), GTK_TYPE_BIN_LAYOUT);
    gtk_widget_class_set_css_name(GTK_WIDGET_CLASS(klass), "predictions");
    /* fill (position of the [MASK] token, rank of the guess in its AtnMaskGuesses.top): a guess
       was clicked */
    signals[SIGNAL_FILL] = g_signal_new("fill", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                                        G_TYPE_NONE, 2, G_TYPE_INT, G_TYPE_INT);
}

static void atn_predictions_init(AtnPredictions *self) {
    self->text = g_string_new(NULL);
    self->box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 4);
    /* A row of five guesses at Text size 2.0 needs 1069 px, more than the rest of the window's
       minimum (885): it scrolls sideways below its width rather than widen the window, and
       does not wrap (a second line raised the window's minimum height at its minimum width
       to 717 px, and the window was laid out 776 px tall on a 720 px screen). */
    self->scroller = gtk_scrolled_window_new();
    gtk_scrolled_window_set_policy(GTK_SCROLLED_WINDOW(self->scroller), GTK_POLICY_AUTOMATIC, GTK_POLICY_NEVER);
    gtk_scrolled_window_set_propagate_natural_width(GTK_SCROLLED_WINDOW(self->scroller), TRUE);
    gtk_scrolled_window_set_propagate_natural_height(GTK_SCROLLED_WINDOW(self->scroller), TRUE);
    gtk_scrolled_window_set_child(GTK_SCROLLED_WINDOW(self->scroller), self->box);
    gtk_widget_set_parent(self->scroller, GTK_WIDGET(self));
    gtk_widget_set_visible(GTK_WIDGET(self), FALSE);
}

GtkWidget *atn_predictions_new(void) { return g_object_new(ATN_TYPE_PREDICTIONS, NULL); }

void atn_predictions_set_session(AtnPredictions *self, AtnSession *session) {
    g_return_if_fail(ATN_IS_PREDICTIONS(self));
    if (self->session)
        g_signal_handlers_disconnect_by_data(self->session, self);
    g_set_object(&self->session, session);
    if (session) {
        g_signal_connect(session, "notify::result", G_CALLBACK(on_result), self);
        g_signal_connect(session, "notify::query", G_CALLBACK(on_query), self);
        g_signal_connect(session, "notify::stack", G_CALLBACK(on_query), self);   /* whose query it is */
    }
    refill(self);
}

void atn_predictions_activate(AtnPredictions *self, int mask, int guess) {
    g_return_if_fail(ATN_IS_PREDICTIONS(self));
    GtkWidget *row = gtk_widget_get_first_child(self->box);
    for (int i = 0; row && i < mask; i++)
        row = gtk_widget_get_next_sibling(row);
    GtkWidget *b = row ? gtk_widget_get_first_child(row) : NULL;   /* the "[MASK] 6 →" label */
    for (int k = 0; b && k <= guess; k++)
        b = gtk_widget_get_next_sibling(b);
    if (b && GTK_IS_BUTTON(b))
        on_guess_clicked(GTK_BUTTON(b), self);
}

char *atn_predictions_dup_text(AtnPredictions *self) {
    g_return_val_if_fail(ATN_IS_PREDICTIONS(self), NULL);
    return g_strdup(gtk_widget_get_visible(GTK_WIDGET(self)) ? self->text->str : "");
}
