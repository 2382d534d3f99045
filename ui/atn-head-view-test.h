/* What atn-head-view.h leaves out: functions only the tests (tests/ui/) call, to read back what
 * the widget shows or to drive it as a user would.  Included by the tests and by the .c
 * files that define them. */
#pragma once

#include "atn-head-view.h"

G_BEGIN_DECLS

void atn_head_view_set_one_query(AtnHeadView *self, gboolean one_query);

/* Moves the selection as the keyboard does: dlayer/dhead are -1, 0 or +1. */
void atn_head_view_step(AtnHeadView *self, int dlayer, int dhead);

/* The line under the controls, "This head — previous: 97% to the previous token", or "". */
const char *atn_head_view_get_summary(AtnHeadView *self);
/* The widgets of the hover line (beside the selectors: the hovered cell, else the selected
 * query) and of the summary line, for tests of what they show. */
GtkWidget *atn_head_view_get_info_widget(AtnHeadView *self);
GtkWidget *atn_head_view_get_summary_widget(AtnHeadView *self);

/* The box of colour-scale controls (atn-head-view-scale.h's getters read its widgets). */
GtkWidget *atn_head_view_get_scale_controls(AtnHeadView *self);
/* The "Words" check on the same line (the head merged into words while it is on). */
GtkCheckButton *atn_head_view_get_words_check(AtnHeadView *self);

G_END_DECLS
