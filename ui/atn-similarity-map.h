/* AtnSimilarityMap: the head-to-head similarity matrix (ui/render), cached as a render
 * node; the tooltip names the two heads and their value; a click emits "pair-activated"
 * (a, b) with head indices into the similarity (layer_of / head_of). */
#pragma once

#include <gtk/gtk.h>

#include "analysis.h"
#include "atn-figure.h"

G_BEGIN_DECLS

#define ATN_TYPE_SIMILARITY_MAP (atn_similarity_map_get_type())
G_DECLARE_FINAL_TYPE(AtnSimilarityMap, atn_similarity_map, ATN, SIMILARITY_MAP, GtkWidget)

GtkWidget *atn_similarity_map_new(void);
/* Takes ownership of sim (NULL clears). */
void atn_similarity_map_set_similarity(AtnSimilarityMap *self, atn_similarity *sim);
const atn_similarity *atn_similarity_map_get_similarity(AtnSimilarityMap *self);
void atn_similarity_map_set_clustered(AtnSimilarityMap *self, gboolean clustered);
void atn_similarity_map_set_colormap(AtnSimilarityMap *self, atn_colormap cm);
void atn_similarity_map_set_font_scale(AtnSimilarityMap *self, double scale);
void atn_similarity_map_set_highlight(AtnSimilarityMap *self, int a, int b);
/* K/V groups of the similarity shown (atn_similarity_by_kv_group of it; taken, NULL: none):
 * the map draws the group-by-group matrix instead of the heads' (groups in order, "KV1" or
 * "L0·KV1", no clustering), its tooltip and "pair-activated" give group indices.  A new
 * similarity drops them.  Without a similarity: freed, nothing shown. */
void atn_similarity_map_set_kv_groups(AtnSimilarityMap *self, atn_kv_groups *groups);
const atn_kv_groups *atn_similarity_map_get_kv_groups(AtnSimilarityMap *self);   /* borrowed; NULL: none */
/* Group a's name ("KV1", "L0·KV1"), and a sentence for the cell of groups a and b (names,
 * heads, the mean, how many pairs of heads); NULL without groups or out of range. */
char *atn_similarity_map_dup_group_label(AtnSimilarityMap *self, int a);
char *atn_similarity_map_dup_group_pair_text(AtnSimilarityMap *self, int a, int b);
/* The figure's layout at the current allocation and font (atn_render_similarity_layout);
 * FALSE when unallocated or without a similarity. */
AtnFigure *atn_similarity_map_dup_figure(AtnSimilarityMap *self);

G_END_DECLS
