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
#include "atn-heatmap-pool.h"
#include "colour-scale.h"
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
/* Words put before the row's and the column's token in a cell's text (the tooltip and
 * atn_heatmap_dup_cell_text: "target ▁I (1) → source ▁c (2): 0.1234" for a cross-attention
 * head); static strings (translated), NULL: none (the default). */
void atn_heatmap_set_cell_words(AtnHeatmap *self, const char *row_word, const char *col_word);
/* The run's additive mask ([rows][cols], atn_capture's mask_add; borrowed like the values,
 * kept alive by the owner given to set_matrix; NULL: none): the cells it hid (the what-if
 * lab's window, stride or hidden keys) are drawn masked, grey and hatched, with no number,
 * as a causal model's future cells are; exports keep it.  set_matrix clears it: set it after. */
void atn_heatmap_set_cell_mask(AtnHeatmap *self, const float *mask);
/* A sentence pair's boundary: split is the first token of the second sentence (a token
 * matrix's row and column; atn_result_get_split), drawn as a line before that row and column,
 * on screen and in exports; 0: none.  set_matrix clears it: set it after. */
void atn_heatmap_set_split(AtnHeatmap *self, int split);
/* Asks for a height of its width × ratio (at least 160 px, at most max_height): a figure in
 * a scrolled column (the What-if comparison) is as tall as its width needs rather than the
 * least height.  ratio 0 (the default): a fixed request, the container decides. */
void atn_heatmap_set_height_for_width(AtnHeatmap *self, double ratio, int max_height);
void atn_heatmap_set_colormap(AtnHeatmap *self, atn_colormap cm);
/* NULL: automatic (0..max, or symmetric for a diverging map). */
void atn_heatmap_set_range(AtnHeatmap *self, const atn_value_range *range);
void atn_heatmap_set_title(AtnHeatmap *self, const char *title);
void atn_heatmap_set_axes(AtnHeatmap *self, const char *row_axis, const char *col_axis, const char *colorbar_label);
void atn_heatmap_set_font_scale(AtnHeatmap *self, double scale);
void atn_heatmap_set_show_colorbar(AtnHeatmap *self, gboolean show);
/* Token labels may be drawn down to this fraction of the normal label size (atn_heatmap_spec's
 * min_label_scale) when that keeps every one of them: for small companion heatmaps. */
void atn_heatmap_set_min_label_scale(AtnHeatmap *self, double scale);
/* TRUE: the wheel zooms only with Ctrl held; a plain wheel goes on to the widget around it (a
 * heatmap inside a scrolled sheet, which the wheel must still scroll).  FALSE by default. */
void atn_heatmap_set_wheel_needs_ctrl(AtnHeatmap *self, gboolean needs_ctrl);

/* With more tokens than pixels the cells are drawn pooled into blocks (atn-heatmap-pool.h),
 * each in the colour of its largest weight (ATN_POOL_MAX, the default) or its mean; the
 * sentence under the title says which and how large the blocks are. */
void atn_heatmap_set_pool_mode(AtnHeatmap *self, atn_pool_mode mode);

/* The colour scale (ui/render/colour-scale.h): linear (the default), log or per-row rank, and
 * the first key column left out of the colours (its share said in the legend).  Tooltips keep
 * the weights; the figure's colours, colour bar and exports follow the scale. */
void atn_heatmap_set_colour_scale(AtnHeatmap *self, atn_colour_scale scale, gboolean drop_first);

/* The query row outlined as selected, or -1. */
void atn_heatmap_set_selected_row(AtnHeatmap *self, int row);
/* A token outlined as both row and column, or -1 (the token hovered in another view). */
void atn_heatmap_set_highlight_token(AtnHeatmap *self, int token);
/* Cells marked by a trace step: row (-1 none) and a 0/1 mask over columns (NULL: all). */
void atn_heatmap_set_marks(AtnHeatmap *self, int row, const gboolean *cols, int n_cols);

/* The tooltip text of a cell. */
char *atn_heatmap_dup_cell_text(AtnHeatmap *self, int row, int col);
/* The same in fewer words, every number kept ("[MASK] 6 → because 7: 0.0002"). */
char *atn_heatmap_dup_cell_text_short(AtnHeatmap *self, int row, int col);

/* Zoom and pan.  The visible block of cells (what ui/render draws: atn_heatmap_spec's
 * view_*): first row and column and how many; the whole matrix at zoom 1.  zoom_at
 * multiplies the zoom by factor keeping the cell under widget point (x, y) in place (x < 0:
 * the centre); the wheel, a pinch, +/−/0 and dragging call these. */
double atn_heatmap_get_zoom(AtnHeatmap *self);
void atn_heatmap_zoom_at(AtnHeatmap *self, double factor, double x, double y);
void atn_heatmap_reset_zoom(AtnHeatmap *self);
/* Crops both axes to tokens first .. first + count - 1 (a square block on the diagonal, as a
 * zoom: the overview shows where it lies), a span the export crops to while it is the view;
 * FALSE (nothing changed) when that is not inside the matrix or is one token of several (the
 * zoom stops at two).  Any other change of view (zoom, pan, reset) ends the span; every
 * change emits "view-changed". */
gboolean atn_heatmap_show_block(AtnHeatmap *self, int first, int count);
/* The span shown (a square matrix showing exactly show_block's tokens): TRUE and its first
 * token and count, else FALSE and 0, 0.  first, count may be NULL. */
gboolean atn_heatmap_get_span(AtnHeatmap *self, int *first, int *count);
/* TRUE: dragging along the row or column labels crops both axes to the tokens dragged over,
 * drawn as it goes; a double click there or Escape shows the whole matrix again
 * (atn-heatmap-crop.h; the Head view's).  Off by default; once on it stays on. */
void atn_heatmap_set_axis_crop(AtnHeatmap *self, gboolean on);
gboolean atn_heatmap_get_axis_crop(AtnHeatmap *self);

/* One-query mode: the selected row (else row 0) as bars over the keys instead of the matrix.
 * get_bar: key col's bar as drawn (its value read back from its height, and its rectangle
 * in widget coordinates); FALSE when not shown. */
void atn_heatmap_set_one_query(AtnHeatmap *self, gboolean one_query);

/* A second line under the colour bar's label (what the colours span), or NULL. */
void atn_heatmap_set_colorbar_note(AtnHeatmap *self, const char *note);

/* The figure as the command line's `export heatmap` draws it (light style). */
AtnFigure *atn_heatmap_dup_figure(AtnHeatmap *self, const char *basename);

/* The heatmap's look without its values (labels, mask, axis names, colour map, range,
 * colour bar), copied, so other matrices of the same tokens can be drawn the same way from
 * any thread: the export of every head. */
typedef struct AtnHeatmapLook AtnHeatmapLook;
AtnHeatmapLook *atn_heatmap_dup_look(AtnHeatmap *self);
void atn_heatmap_look_free(AtnHeatmapLook *look);
/* The look's colours over vmin..vmax whatever the values, with note under the colour bar's
 * label (copied; NULL: none). */
void atn_heatmap_look_set_range(AtnHeatmapLook *look, double vmin, double vmax, const char *note);
/* A figure of values ([rows][cols] of the look, copied) titled title; NULL without values. */
AtnFigure *atn_heatmap_look_figure(const AtnHeatmapLook *look, const float *values, const char *title,
                                   const char *basename);

G_END_DECLS
