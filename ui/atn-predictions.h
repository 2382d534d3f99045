/* AtnPredictions: under the sentence, the masked-LM head's guesses for every [MASK] token
 * ("[MASK] 6 → world 8.1 %, problem 4.1 % …", each with a small bar), or a line saying the
 * model has no masked-LM head.  Hidden when the text has no [MASK].  Hovering a row
 * highlights its [MASK] token in every view; clicking a guess emits "fill" (the [MASK]
 * token's position, the guess's rank in that [MASK]'s AtnMaskGuesses.top) for the window to
 * put it in the sentence.
 *
 * For a causal model (GPT-2) it shows next-token guesses instead: a row after the last token
 * ("next after “mat” (6, the last) → …") and, when the selected query token is another, a
 * row after that one; dup_text lines read "next after 6: the 0.1234, …".  Clicking a guess
 * after the last token emits "fill" with that position: the window appends the word. */
#pragma once

#include <gtk/gtk.h>

#include "atn-session.h"

G_BEGIN_DECLS

#define ATN_TYPE_PREDICTIONS (atn_predictions_get_type())
G_DECLARE_FINAL_TYPE(AtnPredictions, atn_predictions, ATN, PREDICTIONS, GtkWidget)

GtkWidget *atn_predictions_new(void);
void atn_predictions_set_session(AtnPredictions *self, AtnSession *session);

G_END_DECLS
