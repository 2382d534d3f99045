/* What atn-similarity-map.h leaves out: functions only the tests (tests/ui/) call, to read back what
 * the widget shows or to drive it as a user would.  Included by the tests and by the .c
 * files that define them. */
#pragma once

#include "atn-similarity-map.h"

G_BEGIN_DECLS

/* The pair of heads under (x, y) (head indices, -1 and FALSE outside the matrix), from the
 * figure's layout kept per size and figure (made again after a change of size, similarity,
 * order, colours or text size), so a hover lays nothing out. */
gboolean atn_similarity_map_pair_at(AtnSimilarityMap *self, double x, double y, int *a, int *b);
/* Figure layouts made for hit-testing so far (tests: one per size, none per hover). */
guint atn_similarity_map_get_n_layouts(AtnSimilarityMap *self);

gboolean atn_similarity_map_get_layout(AtnSimilarityMap *self, atn_similarity_layout *out);

G_END_DECLS
