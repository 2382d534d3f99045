/* What atn-head-stat.h leaves out: functions only the tests (tests/ui/) call, to read back what
 * the widget shows or to drive it as a user would.  Included by the tests and by the .c
 * files that define them. */
#pragma once

#include "atn-head-stat.h"

G_BEGIN_DECLS

const atn_head_stats *atn_head_stat_get_stats(AtnHeadStat *self);

G_END_DECLS
