/* What atn-model-grid.h leaves out: functions only the tests (tests/ui/) call, to read back what
 * the widget shows or to drive it as a user would.  Included by the tests and by the .c
 * files that define them. */
#pragma once

#include "atn-model-grid.h"

G_BEGIN_DECLS

gboolean atn_model_grid_head_at(AtnModelGrid *self, double x, double y, int *layer, int *head);

/* The row label of layer (newly allocated): "L3", or "L2 ≡ L0" when the layer runs the
 * stored weights layer 0 runs first (ALBERT); NULL without a result or out of range. */
char *atn_model_grid_dup_layer_label(AtnModelGrid *self, int layer);
/* The tooltip of thumbnail (layer, head), as the pointer shows it (newly allocated; with
 * "shares weights with layers …" on a second line for ALBERT); NULL as above. */
char *atn_model_grid_dup_layer_tooltip(AtnModelGrid *self, int layer, int head);
/* Thumbnail cells this process's Model views have coloured on the main thread (for tests).
 * None for a result whose run coloured its thumbnails in the session's style
 * (atn_session_set_thumb_style) or that a recolour worker coloured; L·H·side² for one
 * that has none, at most L·H·ATN_RESULT_THUMB_MAX², never L·H·n². */
guint64 atn_model_grid_get_cells_coloured(void);

gboolean atn_model_grid_get_recolouring(AtnModelGrid *self);
guint atn_model_grid_get_n_recolours(AtnModelGrid *self);

G_END_DECLS
