/* What atn-precision-dialog.h leaves out: functions only the tests (tests/ui/) call, to read back what
 * the widget shows or to drive it as a user would.  Included by the tests and by the .c
 * files that define them. */
#pragma once

#include "atn-precision-dialog.h"

G_BEGIN_DECLS

/* Recomputes with another precision (BF16 / FP16). */
void atn_precision_dialog_set_precision(AtnPrecisionDialog *self, atn_precision precision);
/* TRUE while the two runs are in flight. */
gboolean atn_precision_dialog_is_busy(AtnPrecisionDialog *self);
/* The last map, [layers][heads] max |p - p_fp32| (borrowed; NULL before the first result),
 * and its shape. */
const float *atn_precision_dialog_get_max_abs(AtnPrecisionDialog *self, int *layers, int *heads);
/* The summary line under the map (borrowed). */
const char *atn_precision_dialog_get_summary(AtnPrecisionDialog *self);

G_END_DECLS
