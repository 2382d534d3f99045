/* What atn-token-chips.h leaves out: functions only the tests (tests/ui/) call, to read back what
 * the widget shows or to drive it as a user would.  Included by the tests and by the .c
 * files that define them. */
#pragma once

#include "atn-token-chips.h"

G_BEGIN_DECLS

int atn_token_chips_get_n_chips(AtnTokenChips *self);
/* The chip of token i (tests). */
GtkWidget *atn_token_chips_get_chip(AtnTokenChips *self, int i);

/* What a chip shows for a token whose vocabulary entry is text and whose tokenizer says
 * info (NULL: no tokenizer, e.g. a toy model): pieces as users know them.  A byte-level or
 * SentencePiece word start ("\u0120the", "\u2581the", whose surface is " the") shows as
 * "␣the"; a byte-level piece that is only part of a UTF-8 character shows its bytes and
 * "(part of a character)" goes in the tooltip; WordPiece's "##ing" and special tokens stay
 * as they are.  Newly allocated. */
char *atn_token_chip_label(const char *text, const atn_token_info *info);

G_END_DECLS
