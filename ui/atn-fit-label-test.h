/* What atn-fit-label.h leaves out: functions only the tests (tests/ui/) call, to read back what
 * the widget shows or to drive it as a user would.  Included by the tests and by the .c
 * files that define them. */
#pragma once

#include "atn-fit-label.h"

G_BEGIN_DECLS

/* Fills shown for the current allocation and font; FALSE when unallocated or empty. */
gboolean atn_fit_label_get_shown(AtnFitLabel *self, AtnFitLabelShown *shown);

G_END_DECLS
