/* AtnSimilarityView: the Similarity page — which heads attend alike (metric and scope
 * selectors, clustering order); clicking a cell shows the two heads side by side with their
 * difference.  The matrix is computed in a worker thread, only while the page is shown. */
#pragma once

#include <gtk/gtk.h>

#include "atn-session.h"
#include "atn-heatmap.h"
#include "atn-similarity-map.h"
#include "render.h"

G_BEGIN_DECLS

#define ATN_TYPE_SIMILARITY_VIEW (atn_similarity_view_get_type())
G_DECLARE_FINAL_TYPE(AtnSimilarityView, atn_similarity_view, ATN, SIMILARITY_VIEW, GtkWidget)

GtkWidget *atn_similarity_view_new(void);
void atn_similarity_view_set_session(AtnSimilarityView *self, AtnSession *session);
void atn_similarity_view_set_colormap(AtnSimilarityView *self, atn_colormap cm);
void atn_similarity_view_set_font_scale(AtnSimilarityView *self, double scale);
void atn_similarity_view_set_metric(AtnSimilarityView *self, atn_metric metric);
void atn_similarity_view_set_scope(AtnSimilarityView *self, atn_scope scope);
/* Shows heads a and b (indices into the similarity) side by side. */
void atn_similarity_view_compare(AtnSimilarityView *self, int a, int b);
AtnSimilarityMap *atn_similarity_view_get_map(AtnSimilarityView *self);
/* Comparisons of a new result started while the view was hidden (after it was first
 * shown; the next run cancels one in flight), for tests. */
guint atn_similarity_view_get_n_prefetched(AtnSimilarityView *self);
/* TRUE while a computation is in flight (tests wait for it). */
gboolean atn_similarity_view_get_busy(AtnSimilarityView *self);

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

G_END_DECLS
