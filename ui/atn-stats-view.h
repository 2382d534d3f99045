/* AtnStatsView: the Statistics page — one row per head (entropy, attention to [CLS], [SEP],
 * itself, the previous and next token, mean distance, pattern label), sortable by any
 * column; activating a row emits "head-activated" (layer, head). */
#pragma once

#include <gtk/gtk.h>

#include "atn-session.h"

G_BEGIN_DECLS

#define ATN_TYPE_STATS_VIEW (atn_stats_view_get_type())
G_DECLARE_FINAL_TYPE(AtnStatsView, atn_stats_view, ATN, STATS_VIEW, GtkWidget)

GtkWidget *atn_stats_view_new(void);
void atn_stats_view_set_session(AtnStatsView *self, AtnSession *session);

G_END_DECLS
