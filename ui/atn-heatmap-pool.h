/* The Head view's overview at any length: when a figure has more tokens than pixels (512
 * tokens in 416 px, 4,096 in 600), nearest-neighbour scaling of one pixel per cell would
 * show an arbitrary cell of every block and could hide the largest weight.  Instead the
 * cells are pooled into k × k blocks (k = the tokens per pixel, rounded up; blocks aligned at
 * multiples of k from token 0, the last ones cut at the matrix's edge), each block drawn in
 * the colour of its largest weight or its mean, and zooming in until a cell gets a pixel
 * shows single cells again (k = 1).  GLib and cairo only; any thread. */
#pragma once

#include <glib.h>
#include <cairo.h>

#include "render.h"

G_BEGIN_DECLS

typedef enum {
    ATN_POOL_MAX,    /* a block shows its largest weight: a sharp key is never lost */
    ATN_POOL_MEAN,   /* a block shows its mean weight (over the cells that are not masked) */
} atn_pool_mode;

/* The block side for `cells` cells drawn over `pixels` pixels: 1 when every cell gets at
 * least one pixel, else ceil(cells / pixels) (so a block spans at least one pixel and the
 * nearest-neighbour scaling samples every block).  cells <= 0 or pixels <= 0: 1. */
int atn_pool_factor(int cells, double pixels);

/* The pooled matrix: [ceil(rows/k)][ceil(cols/k)] floats, newly allocated (g_free), block
 * (a, b) = the max or mean of values[i][j] for i in [a·k, min(rows, a·k + k)) and j likewise,
 * leaving out the cells a causal model masks (j > i when causal) and the cells cell_mask
 * ([rows][cols] additive mask, NULL none) hides (below -1e30); a block with no cell left is
 * 0.  Non-finite values are kept (a NaN in a block makes its max/mean NaN, drawn as such).
 * values: [rows][cols] row-major, borrowed.  k >= 1.  *prows, *pcols: the pooled size. */
float *atn_pool_blocks(const float *values, int rows, int cols, int k, atn_pool_mode mode, gboolean causal,
                       const float *cell_mask, int *prows, int *pcols);

/* The value of the one block holding cell (row, col): atn_pool_blocks' for that block,
 * without pooling the rest (a tooltip's). */
double atn_pool_block_value(const float *values, int rows, int cols, int k, atn_pool_mode mode, gboolean causal,
                            const float *cell_mask, int row, int col);

/* The figure's cells image at one pixel per cell (cols × rows, as atn_render_matrix_surface
 * makes it, so the renderer's cached `cells` stays valid for every zoom) with every pixel of
 * block (a, b) in the colour of pooled[a][b] over vmin..vmax.  pooled: atn_pool_blocks' for
 * this k, rows and cols.  NULL when out of memory. */
cairo_surface_t *atn_pool_surface(const float *pooled, int rows, int cols, int k, atn_colormap cm, double vmin,
                                  double vmax);

G_END_DECLS
