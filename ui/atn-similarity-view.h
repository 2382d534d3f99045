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
/* TRUE while a computation is in flight (tests wait for it). */
gboolean atn_similarity_view_get_busy(AtnSimilarityView *self);

G_END_DECLS
