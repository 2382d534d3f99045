/* What atn-prefs.h leaves out: functions only the tests (tests/ui/) call, to read back what
 * the widget shows or to drive it as a user would.  Included by the tests and by the .c
 * files that define them. */
#pragma once

#include "atn-prefs.h"

G_BEGIN_DECLS

/* "gsettings" or "keyfile" (tests and the about dialog's debug info). */
const char *atn_prefs_get_backend_name(AtnPrefs *self);

G_END_DECLS
