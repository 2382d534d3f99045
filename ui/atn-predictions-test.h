/* What atn-predictions.h leaves out: functions only the tests (tests/ui/) call, to read back what
 * the widget shows or to drive it as a user would.  Included by the tests and by the .c
 * files that define them. */
#pragma once

#include "atn-predictions.h"

G_BEGIN_DECLS

/* Acts as a click on guess number guess (0 = likeliest) of the mask-th [MASK] (tests). */
void atn_predictions_activate(AtnPredictions *self, int mask, int guess);
/* What the rows say, one line per [MASK] ("6: world 0.0812, problem 0.0405, …"), or the
 * no-head message; "" when hidden (tests). */
char *atn_predictions_dup_text(AtnPredictions *self);

G_END_DECLS
