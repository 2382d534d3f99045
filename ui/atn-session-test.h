/* What atn-session.h leaves out: functions only the tests (tests/ui/) call, to read back what
 * the widget shows or to drive it as a user would.  Included by the tests and by the .c
 * files that define them. */
#pragma once

#include "atn-session.h"

G_BEGIN_DECLS

int atn_session_get_worker_nice(void);
/* The nice value of the thread that ran the latest run in a worker (G_MININT before any). */
int atn_session_get_last_run_nice(void);

int atn_session_get_worker_nice_of(const char *worker);

atn_precision atn_session_get_precision(AtnSession *self);

G_END_DECLS
