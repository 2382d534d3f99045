/* What atn-result.h leaves out: functions only the tests (tests/ui/) call, to read back what
 * the widget shows or to drive it as a user would.  Included by the tests and by the .c
 * files that define them. */
#pragma once

#include "atn-result.h"

G_BEGIN_DECLS

const float *atn_result_get_thumb_values(AtnResult *self, int *side);
/* Each head's smallest and largest finite probability, [L·H][2] (NaN, NaN for a head with
 * none), owned by the result: a colour range without reading the head again. */
const float *atn_result_get_head_ranges(AtnResult *self);

guint64 atn_result_get_thumb_cells_coloured(void);

G_END_DECLS
