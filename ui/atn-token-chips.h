/* AtnTokenChips: the tokens of the latest run as chips.  Hovering a chip highlights that
 * token's row and column in every view; clicking selects it as the query. */
#pragma once

#include <gtk/gtk.h>

#include "atn-session.h"

G_BEGIN_DECLS

#define ATN_TYPE_TOKEN_CHIPS (atn_token_chips_get_type())
G_DECLARE_FINAL_TYPE(AtnTokenChips, atn_token_chips, ATN, TOKEN_CHIPS, GtkWidget)

GtkWidget *atn_token_chips_new(void);
void atn_token_chips_set_session(AtnTokenChips *self, AtnSession *session);

G_END_DECLS
