/* What atn-similarity-view.h leaves out: functions only the tests (tests/ui/) call, to read back what
 * the widget shows or to drive it as a user would.  Included by the tests and by the .c
 * files that define them. */
#pragma once

#include "atn-similarity-view.h"

G_BEGIN_DECLS

void atn_similarity_view_set_metric(AtnSimilarityView *self, atn_metric metric);
void atn_similarity_view_set_scope(AtnSimilarityView *self, atn_scope scope);
/* Shows heads a and b (indices into the similarity) side by side. */
void atn_similarity_view_compare(AtnSimilarityView *self, int a, int b);
AtnSimilarityMap *atn_similarity_view_get_map(AtnSimilarityView *self);
/* Comparisons of a new result started while the view was hidden (after it was first
 * shown; the next run cancels one in flight), for tests. */
guint atn_similarity_view_get_n_prefetched(AtnSimilarityView *self);

/* Corpus mode ("Corpus…"): the matrix averages every sentence of a text file (one per line),
 * for the metric and scope chosen (changing them reads the file again), with a progress bar
 * and Cancel; until "This Sentence", another model, or a cancel / failure. */
void atn_similarity_view_load_corpus(AtnSimilarityView *self, const char *path);
void atn_similarity_view_show_sentence(AtnSimilarityView *self);
void atn_similarity_view_cancel(AtnSimilarityView *self);
/* The line beside the controls (what the matrix covers). */
const char *atn_similarity_view_get_info(AtnSimilarityView *self);
GtkWidget *atn_similarity_view_get_info_widget(AtnSimilarityView *self);
/* TRUE while the pair pane (two heads and their difference) is shown beside the matrix: from
 * atn_similarity_view_compare (a click on a cell) until the next matrix. */
gboolean atn_similarity_view_get_pair_shown(AtnSimilarityView *self);
/* The pair's heatmaps: 0 the first head, 1 the second, 2 their difference. */
AtnHeatmap *atn_similarity_view_get_pair_heatmap(AtnSimilarityView *self, int which);

/* "By K/V group" (a grouped-query model's heads gathered by the K/V head they share), as its
 * check button would; the check button (shown only for such a model). */
void atn_similarity_view_set_by_kv_group(AtnSimilarityView *self, gboolean on);
GtkWidget *atn_similarity_view_get_kv_check(AtnSimilarityView *self);

G_END_DECLS
