/* What atn-heatmap.h leaves out: functions only the tests (tests/ui/) call, to read back what
 * the widget shows or to drive it as a user would.  Included by the tests and by the .c
 * files that define them. */
#pragma once

#include "atn-heatmap.h"

G_BEGIN_DECLS

gboolean atn_heatmap_get_causal(AtnHeatmap *self);
int atn_heatmap_get_split(AtnHeatmap *self);   /* atn_heatmap_set_split's, 0 none */

atn_colormap atn_heatmap_get_colormap(AtnHeatmap *self);

const char *atn_heatmap_get_title(AtnHeatmap *self);   /* borrowed; NULL: none */
const char *atn_heatmap_get_colorbar_label(AtnHeatmap *self);   /* borrowed; NULL: none */

/* Widget coordinates -> cell; FALSE (and -1) outside the matrix. */
gboolean atn_heatmap_cell_at(AtnHeatmap *self, double x, double y, int *row, int *col);
/* The rectangle of a cell in widget coordinates (as last laid out); FALSE if none. */
gboolean atn_heatmap_get_cell_rect(AtnHeatmap *self, int row, int col, graphene_rect_t *rect);
float atn_heatmap_get_value(AtnHeatmap *self, int row, int col);
int atn_heatmap_get_rows(AtnHeatmap *self);
/* The query row marked (atn_heatmap_set_selected_row) and the token whose row and column are
 * highlighted (atn_heatmap_set_highlight_token); -1: none. */
int atn_heatmap_get_selected_row(AtnHeatmap *self);
int atn_heatmap_get_highlight_token(AtnHeatmap *self);
/* Simulates the pointer at (x, y) (as the motion controller does): returns the hover text
 * "query → key: weight" shown in the tooltip, or NULL outside the cells. */
char *atn_heatmap_hover(AtnHeatmap *self, double x, double y);

void atn_heatmap_get_visible(AtnHeatmap *self, int *row0, int *col0, int *rows, int *cols);

void atn_heatmap_pan(AtnHeatmap *self, int drows, int dcols);

gboolean atn_heatmap_get_one_query(AtnHeatmap *self);
gboolean atn_heatmap_get_bar(AtnHeatmap *self, int col, double *value, graphene_rect_t *rect);
int atn_heatmap_get_bars_row(AtnHeatmap *self);

/* The figure's layout as last drawn (cells, colour bar, visible block); FALSE when none
 * (no matrix, no size yet, one-query mode). */
gboolean atn_heatmap_get_layout(AtnHeatmap *self, atn_heatmap_layout *out);

/* The keyboard's cell (arrow keys): moves it by (drow, dcol), makes its row the query
 * ("cell-clicked"), hovers it, pans it into view, draws a focus ring around it and sets the
 * accessible description to its "query → key: weight" text for screen readers. */
void atn_heatmap_move_cursor(AtnHeatmap *self, int drow, int dcol);
void atn_heatmap_get_cursor(AtnHeatmap *self, int *row, int *col);

/* The block side the cells are drawn pooled in (1: one cell per block) and the mode; the
 * value drawn for a cell (its block's max or mean, else its own); the legend saying so (NULL
 * at k 1).  Lay the figure out first if it was not. */
int atn_heatmap_get_pool(AtnHeatmap *self, atn_pool_mode *mode);
float atn_heatmap_get_drawn_value(AtnHeatmap *self, int row, int col);
const char *atn_heatmap_get_pool_legend(AtnHeatmap *self);
/* The number cell (row, col) prints as last laid out (newly allocated), or NULL when it prints
 * none (no numbers fit, masked, out of view, one-query mode). */
char *atn_heatmap_dup_cell_number(AtnHeatmap *self, int row, int col);
/* Drives the widget as its controllers do: a press (n_press 2: a double click) at (x, y); a key
 * (TRUE when the heatmap used it). */
void atn_heatmap_press(AtnHeatmap *self, int n_press, double x, double y);
gboolean atn_heatmap_press_key(AtnHeatmap *self, guint keyval, GdkModifierType state);
/* A drag along an axis (atn-heatmap-crop.h) step by step, as its gesture makes it: stage 0
 * the press at (x, y), 1 the pointer moved to (x, y), 2 released there. */
void atn_heatmap_axis_drag(AtnHeatmap *self, int stage, double x, double y);
/* The span being dragged as drawn (axis, first token, count): FALSE when no drag shows one.
 * band may be NULL. */
struct AtnHeatmapCropBand;
gboolean atn_heatmap_get_band(AtnHeatmap *self, struct AtnHeatmapCropBand *band);

/* The colour scale, whether the first column is left out and its share (NaN when linear). */
atn_colour_scale atn_heatmap_get_colour_scale(AtnHeatmap *self, gboolean *drop_first, double *first_share);

G_END_DECLS
