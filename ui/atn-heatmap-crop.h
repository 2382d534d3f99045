/* Cropping a heatmap to a token span by dragging along one of its axes (issue 35): pressing on
 * the row labels (left of the cells) or the column labels (under them) and dragging marks a
 * span of tokens on that axis, drawn as it goes (a band over the labels, the square it keeps on
 * the diagonal outlined, "tokens a–b" beside the pointer); releasing shows both axes cropped to
 * it (atn_heatmap_show_block: what typing "a-b" in the Head view does, and what its Export and
 * Copy write).  With more tokens than pixels the cells are pooled into k × k blocks aligned at
 * multiples of k (atn-heatmap-pool.h): a drag then takes whole blocks, so the block whose colour
 * caught the eye is inside the crop.  A double click on an axis or Escape gives the whole input
 * back.  Shared by atn-heatmap.c and atn-heatmap-crop.c only; main thread. */
#pragma once

#include <gtk/gtk.h>

#include "render.h"

G_BEGIN_DECLS

typedef struct _AtnHeatmap AtnHeatmap;

typedef enum { ATN_CROP_AXIS_NONE = -1, ATN_CROP_AXIS_ROWS = 0, ATN_CROP_AXIS_COLS = 1 } atn_crop_axis;

/* A span being dragged: tokens first .. first + count - 1 of axis; count 0: none. */
typedef struct AtnHeatmapCropBand {
    atn_crop_axis axis;
    int first, count;
} AtnHeatmapCropBand;

/* The axis whose labels widget point (x, y) is on in a figure laid out as L: left of the cells
 * and level with them (rows), or under the cells and within their width (columns). */
atn_crop_axis atn_heatmap_crop_axis_at(const atn_heatmap_layout *L, double x, double y);

/* The span between two points p0 and p1 along axis (x for columns, y for rows; either order;
 * clamped to the visible cells) of a figure laid out as L whose cells are pooled in k × k
 * blocks (k >= 1) over n tokens: the tokens under them, widened to whole blocks.  FALSE (and
 * count 0) for ATN_CROP_AXIS_NONE or an empty layout. */
gboolean atn_heatmap_crop_span(const atn_heatmap_layout *L, int k, int n, atn_crop_axis axis, double p0, double p1,
                               int *first, int *count);

/* Adds the drag gesture to hm (atn_heatmap_set_axis_crop calls it once). */
void atn_heatmap_crop_attach(AtnHeatmap *hm);
/* Ends a drag in progress without cropping (Escape). */
void atn_heatmap_crop_cancel(AtnHeatmap *hm);
/* Draws band over the figure laid out as L (atn-heatmap.c's snapshot). */
void atn_heatmap_crop_snapshot(GtkWidget *widget, GtkSnapshot *s, const atn_heatmap_layout *L,
                               const AtnHeatmapCropBand *band);

/* In atn-heatmap.c: the span being dragged, drawn (NULL: none). */
void atn_heatmap_set_band(AtnHeatmap *self, const AtnHeatmapCropBand *band);

G_END_DECLS
