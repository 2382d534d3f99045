/* What atn-stats-view.h leaves out: functions only the tests (tests/ui/) call, to read back what
 * the widget shows or to drive it as a user would.  Included by the tests and by the .c
 * files that define them. */
#pragma once

#include "atn-stats-view.h"
#include "atn-stats-file.h"

G_BEGIN_DECLS

/* The rows as shown (sorted), a GListModel of AtnHeadStat (borrowed). */
GListModel *atn_stats_view_get_model(AtnStatsView *self);
/* How many times a new result's numbers went into the existing rows (same heads: no row or
 * cell widget rebuilt) instead of new rows; for tests. */
guint atn_stats_view_get_n_in_place(AtnStatsView *self);
/* How many rows the table holds now, as made so far (possibly of an earlier result, or some
 * of the rows while the view is hidden): unlike atn_stats_view_get_model, nothing is refilled;
 * for tests. */
guint atn_stats_view_get_n_rows_made(AtnStatsView *self);
/* Sorts by a column ("index", "pattern", "entropy", "cls" ...). */
void atn_stats_view_sort_by(AtnStatsView *self, const char *column, GtkSortType order);
/* Acts as a click on row i of the sorted table. */
void atn_stats_view_activate_row(AtnStatsView *self, guint i);

/* Corpus mode ("Corpus…"): the table averages every non-empty line of a text file, read in
 * a worker with the current model, with a progress bar and Cancel; lines that are not UTF-8
 * are skipped and counted.  It stays until "This Sentence" or another model. */
void atn_stats_view_load_corpus(AtnStatsView *self, const char *path);
gboolean atn_stats_view_get_corpus_busy(AtnStatsView *self);
void atn_stats_view_cancel_corpus(AtnStatsView *self);
/* Of the corpus shown, how many sentences were made from the heads as the forward made them
 * (atn_stats_stream: no capture of [L][H][n][n]) rather than from a capture's heads; 0 when
 * no corpus is shown. */
gint64 atn_stats_view_get_corpus_streamed(AtnStatsView *self);
void atn_stats_view_show_sentence(AtnStatsView *self);
/* The table as CSV (the command line's `stats --format csv`): the corpus's numbers in corpus
 * mode, else the sentence's.  NULL with error when there is nothing yet. */
char *atn_stats_view_dup_csv(AtnStatsView *self, GError **error);
/* File mode (atn_stats_view_load_file): a read in flight; a file shown; the panel beside. */
gboolean atn_stats_view_get_file_busy(AtnStatsView *self);
gboolean atn_stats_view_has_file(AtnStatsView *self);
AtnStatsFilePanel *atn_stats_view_get_file_panel(AtnStatsView *self);
/* The line above the table (what the numbers are averaged over). */
const char *atn_stats_view_get_info(AtnStatsView *self);

/* "By K/V group" (a grouped-query model's heads gathered by the K/V head they share), as its
 * check button would; the check button (shown only for such a model). */
void atn_stats_view_set_by_kv_group(AtnStatsView *self, gboolean on);
GtkWidget *atn_stats_view_get_kv_check(AtnStatsView *self);

G_END_DECLS
