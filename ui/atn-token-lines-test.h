/* What atn-token-lines.h leaves out: functions only the tests (tests/ui/) call, to read back what
 * the widget shows or to drive it as a user would.  Included by the tests and by the .c
 * files that define them. */
#pragma once

#include "atn-token-lines.h"

G_BEGIN_DECLS

/* The pointer over token `token` of side 0 (queries) or 1 (keys), as the motion controller
 * reports it; token -1: left. */
void atn_token_lines_hover(AtnTokenLines *self, int side, int token);
/* The lines drawn now (query -> key pairs): their count and the first max in from/to. */
int64_t atn_token_lines_get_lines(AtnTokenLines *self, int32_t *from, int32_t *to, int64_t max);
/* What the lines are drawn between: how many tokens (or words) each column lists, the label
 * of item i (borrowed; NULL out of range) and the weight line from -> to stands for (NaN out
 * of range). */
int atn_token_lines_get_n(AtnTokenLines *self);
const char *atn_token_lines_get_label(AtnTokenLines *self, int i);
double atn_token_lines_get_weight(AtnTokenLines *self, int from, int to);

G_END_DECLS
