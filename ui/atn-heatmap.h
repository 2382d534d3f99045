/* AtnHeatmap: one attention matrix (a head, a difference map) drawn by ui/render, with
 * hover (exact weight and "query → key" tokens), a selected query row, the token hovered
 * anywhere in the window outlined, and cells marked by the trace's steps.
 *
 * The figure is rendered once per change of data, colours or size into a cached render node
 * (the cells as one nearest-neighbour-scaled image, made once per data change); hovering only
 * adds outlines on top. */
#pragma once

#include <gtk/gtk.h>

#include "atn-figure.h"
#include "render.h"

G_BEGIN_DECLS

#define ATN_TYPE_HEATMAP (atn_heatmap_get_type())
G_DECLARE_FINAL_TYPE(AtnHeatmap, atn_heatmap, ATN, HEATMAP, GtkWidget)

GtkWidget *atn_heatmap_new(void);

/* values [rows][cols], labels and mask are borrowed; owner (may be NULL) is referenced
 * until the next call and keeps them alive.  values NULL clears the heatmap. */
void atn_heatmap_set_matrix(AtnHeatmap *self, GObject *owner, const float *values, int rows, int cols,
                            const char *const *row_labels, const char *const *col_labels, const int32_t *mask);
/* A causal model's head (GPT-2): the cells of keys after their query are drawn masked (grey,
 * hatched, no number) and their tooltip says so; exports keep it. */
void atn_heatmap_set_causal(AtnHeatmap *self, gboolean causal);
gboolean atn_heatmap_get_causal(AtnHeatmap *self);
/* The run's additive mask ([rows][cols], atn_capture's mask_add; borrowed like the values,
 * kept alive by the owner given to set_matrix; NULL: none): the cells it hid (the what-if
 * lab's window, stride or hidden keys) are drawn masked, grey and hatched, with no number,
 * as a causal model's future cells are; exports keep it.  set_matrix clears it: set it after. */
void atn_heatmap_set_cell_mask(AtnHeatmap *self, const float *mask);
void atn_heatmap_set_colormap(AtnHeatmap *self, atn_colormap cm);
atn_colormap atn_heatmap_get_colormap(AtnHeatmap *self);
/* NULL: automatic (0..max, or symmetric for a diverging map). */
void atn_heatmap_set_range(AtnHeatmap *self, const atn_value_range *range);
void atn_heatmap_set_title(AtnHeatmap *self, const char *title);
const char *atn_heatmap_get_title(AtnHeatmap *self);   /* borrowed; NULL: none */
void atn_heatmap_set_axes(AtnHeatmap *self, const char *row_axis, const char *col_axis, const char *colorbar_label);
void atn_heatmap_set_font_scale(AtnHeatmap *self, double scale);
void atn_heatmap_set_show_colorbar(AtnHeatmap *self, gboolean show);
/* Token labels may be drawn down to this fraction of the normal label size (atn_heatmap_spec's
 * min_label_scale) when that keeps every one of them: for small companion heatmaps. */
void atn_heatmap_set_min_label_scale(AtnHeatmap *self, double scale);
/* TRUE: the wheel zooms only with Ctrl held; a plain wheel goes on to the widget around it (a
 * heatmap inside a scrolled sheet, which the wheel must still scroll).  FALSE by default. */
void atn_heatmap_set_wheel_needs_ctrl(AtnHeatmap *self, gboolean needs_ctrl);

/* The query row outlined as selected, or -1. */
void atn_heatmap_set_selected_row(AtnHeatmap *self, int row);
/* A token outlined as both row and column, or -1 (the token hovered in another view). */
void atn_heatmap_set_highlight_token(AtnHeatmap *self, int token);
/* Cells marked by a trace step: row (-1 none) and a 0/1 mask over columns (NULL: all). */
void atn_heatmap_set_marks(AtnHeatmap *self, int row, const gboolean *cols, int n_cols);

/* Widget coordinates -> cell; FALSE (and -1) outside the matrix. */
gboolean atn_heatmap_cell_at(AtnHeatmap *self, double x, double y, int *row, int *col);
/* The rectangle of a cell in widget coordinates (as last laid out); FALSE if none. */
gboolean atn_heatmap_get_cell_rect(AtnHeatmap *self, int row, int col, graphene_rect_t *rect);
float atn_heatmap_get_value(AtnHeatmap *self, int row, int col);
int atn_heatmap_get_rows(AtnHeatmap *self);
/* Simulates the pointer at (x, y) (as the motion controller does): returns the hover text
 * "query → key: weight" shown in the tooltip, or NULL outside the cells. */
char *atn_heatmap_hover(AtnHeatmap *self, double x, double y);
/* The tooltip text of a cell. */
char *atn_heatmap_dup_cell_text(AtnHeatmap *self, int row, int col);
/* The same in fewer words, every number kept ("[MASK] 6 → because 7: 0.0002"). */
char *atn_heatmap_dup_cell_text_short(AtnHeatmap *self, int row, int col);

/* Zoom and pan.  The visible block of cells (what ui/render draws: atn_heatmap_spec's
 * view_*): first row and column and how many; the whole matrix at zoom 1.  zoom_at
 * multiplies the zoom by factor keeping the cell under widget point (x, y) in place (x < 0:
 * the centre); the wheel, a pinch, +/−/0 and dragging call these. */
void atn_heatmap_get_visible(AtnHeatmap *self, int *row0, int *col0, int *rows, int *cols);
double atn_heatmap_get_zoom(AtnHeatmap *self);
void atn_heatmap_zoom_at(AtnHeatmap *self, double factor, double x, double y);
void atn_heatmap_reset_zoom(AtnHeatmap *self);
void atn_heatmap_pan(AtnHeatmap *self, int drows, int dcols);

/* One-query mode: the selected row (else row 0) as bars over the keys instead of the matrix.
 * get_bar: key col's bar as drawn (its value read back from its height, and its rectangle
 * in widget coordinates); FALSE when not shown. */
void atn_heatmap_set_one_query(AtnHeatmap *self, gboolean one_query);
gboolean atn_heatmap_get_one_query(AtnHeatmap *self);
gboolean atn_heatmap_get_bar(AtnHeatmap *self, int col, double *value, graphene_rect_t *rect);
int atn_heatmap_get_bars_row(AtnHeatmap *self);

/* The figure's layout as last drawn (cells, colour bar, visible block); FALSE when none
 * (no matrix, no size yet, one-query mode). */
gboolean atn_heatmap_get_layout(AtnHeatmap *self, atn_heatmap_layout *out);

/* A second line under the colour bar's label (what the colours span), or NULL. */
void atn_heatmap_set_colorbar_note(AtnHeatmap *self, const char *note);

/* The keyboard's cell (arrow keys): moves it by (drow, dcol), makes its row the query
 * ("cell-clicked"), hovers it, pans it into view, draws a focus ring around it and sets the
 * accessible description to its "query → key: weight" text for screen readers. */
void atn_heatmap_move_cursor(AtnHeatmap *self, int drow, int dcol);
void atn_heatmap_get_cursor(AtnHeatmap *self, int *row, int *col);

/* The figure as the command line's `export heatmap` draws it (light style). */
AtnFigure *atn_heatmap_dup_figure(AtnHeatmap *self, const char *basename);

/* The heatmap's look without its values (labels, mask, axis names, colour map, range,
 * colour bar), copied, so other matrices of the same tokens can be drawn the same way from
 * any thread: the export of every head. */
typedef struct AtnHeatmapLook AtnHeatmapLook;
AtnHeatmapLook *atn_heatmap_dup_look(AtnHeatmap *self);
void atn_heatmap_look_free(AtnHeatmapLook *look);
/* A figure of values ([rows][cols] of the look, copied) titled title; NULL without values. */
AtnFigure *atn_heatmap_look_figure(const AtnHeatmapLook *look, const float *values, const char *title,
                                   const char *basename);

G_END_DECLS
