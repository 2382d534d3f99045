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
/* File mode: a merged statistics file (`attnscope stats merge`; ui/atn-stats-file.h) read in a
 * worker with a progress bar and Cancel, then its means in the table (labels from corpus
 * evidence), the head grid and the selected head's examples beside it.  A file that cannot
 * be read leaves what was shown and emits "file-failed" (message).  Clicking an example
 * emits "exemplar-activated" (layer, head, query, key, sentence, model). */
void atn_stats_view_load_file(AtnStatsView *self, const char *path);
/* The file dialog for it (File → Open Statistics…). */
void atn_stats_view_choose_file(AtnStatsView *self);

G_END_DECLS
