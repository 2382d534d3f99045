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
/* TRUE while long inputs are being drawn in a worker thread. */
gboolean atn_token_lines_get_busy(AtnTokenLines *self);

G_END_DECLS
