/* AtnTokenLines: the bertviz-style drawing of one head — the tokens in two columns, a line
 * from each query on the left to each key on the right, as strong as the weight.  Hovering
 * a token shows only its lines (and highlights it in every view); clicking a query token on
 * the left selects it. */
#pragma once

#include <gtk/gtk.h>

#include "atn-figure.h"
#include "atn-session.h"

G_BEGIN_DECLS

#define ATN_TYPE_TOKEN_LINES (atn_token_lines_get_type())
G_DECLARE_FINAL_TYPE(AtnTokenLines, atn_token_lines, ATN, TOKEN_LINES, GtkWidget)

GtkWidget *atn_token_lines_new(void);
void atn_token_lines_set_session(AtnTokenLines *self, AtnSession *session);
void atn_token_lines_set_font_scale(AtnTokenLines *self, double scale);
AtnFigure *atn_token_lines_dup_figure(AtnTokenLines *self);
/* Which lines are drawn.  By default (all_lines FALSE) only the focused token's, as bertviz
 * does: the token hovered here (its lines out of it on the query side, into it on the key
 * side), else the token hovered in another view (as a query), else the selected query.
 * all_lines TRUE: every token's (the strongest 512).  threshold: lines at or below this
 * weight are not drawn (default 0.01). */
void atn_token_lines_set_all_lines(AtnTokenLines *self, gboolean all);
gboolean atn_token_lines_get_all_lines(AtnTokenLines *self);
void atn_token_lines_set_threshold(AtnTokenLines *self, double threshold);
/* Words mode (the Head view's "Words"): the lines join words, not tokens — the head merged as
 * the heatmap shows it (atn-head-words.h: a word's row the mean of its pieces' rows, its
 * column the sum of their columns), the columns list the words; the selected query and the
 * hovered token are shown as their words, and hovering or clicking a word hovers or selects its
 * first token.  owner keeps words alive (referenced until the next call); words NULL: tokens
 * again.  Words made for another input than the session's are not drawn (tokens are). */
struct AtnHeadWords;
void atn_token_lines_set_words(AtnTokenLines *self, GObject *owner, const struct AtnHeadWords *words);
/* Only tokens (words in words mode) first .. first + count - 1 drawn, as the heatmap's crop
 * (atn_heatmap_get_span): their lines among themselves, labels with their positions in the
 * input; count 0: all (the default).  A span past the end draws all. */
void atn_token_lines_set_span(AtnTokenLines *self, int first, int count);
/* TRUE while long inputs are being drawn in a worker thread. */
gboolean atn_token_lines_get_busy(AtnTokenLines *self);

G_END_DECLS
