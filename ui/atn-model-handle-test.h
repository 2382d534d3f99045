/* What atn-model-handle.h leaves out: functions only the tests (tests/ui/) call, to read back what
 * the widget shows or to drive it as a user would.  Included by the tests and by the .c
 * files that define them. */
#pragma once

#include "atn-model-handle.h"

G_BEGIN_DECLS

gboolean atn_model_handle_has_spare(AtnModelHandle *self);

G_END_DECLS
