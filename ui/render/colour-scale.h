/* Colour scales that survive attention sinks (issue 35): a head whose first token ([CLS],
 * <|endoftext|>, <s>) takes most of every row draws every other cell in the map's darkest
 * colour on a linear scale.  These turn a head's weights into the values a figure colours:
 *
 *   linear  the weights themselves;
 *   log     log10 of each weight (below 1e-6 drawn as -6), colours from log10 of the smallest
 *           positive weight shown (not below -6) to log10 of the largest;
 *   rank    each weight's rank within its query row, 0 (its smallest) to 1 (its largest), ties
 *           sharing their mean rank; colours 0..1;
 *   drop_first (with any of them): the first key column is left out of the colour range (and
 *           of the ranks): its cells are drawn in the top colour; its share (the mean over
 *           the query rows of the weight on the first key) is given for the legend.
 *
 * Cells a causal model masks (key after its query) are left out of the range and ranks.  No
 * GLib, no cairo; any thread. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum {
    ATN_SCALE_LINEAR,
    ATN_SCALE_LOG,
    ATN_SCALE_RANK,
} atn_colour_scale;

/* "linear", "log", "rank" -> the scale; false for any other name (NULL included). */
bool atn_colour_scale_parse(const char *name, atn_colour_scale *out);
const char *atn_colour_scale_name(atn_colour_scale scale);

/* out[i * cols + j] = values[i * stride + j] on scale, for rows × cols (stride >= cols;
 * rows <= cols, the query i being key i when causal); *vmin, *vmax: the colours' range as
 * above; *first_share: the mean of column 0 over the rows (NaN when rows is 0).  values and
 * out must not overlap; out holds rows × cols floats.  Returns false (out untouched) when
 * out of memory (rank needs a row of scratch). */
bool atn_colour_scale_apply(const float *values, int32_t rows, int32_t cols, size_t stride, atn_colour_scale scale,
                            bool drop_first, bool causal, float *out, double *vmin, double *vmax,
                            double *first_share);

/* The colour bar's label for a scale ("weight", "log10 weight", "rank in its row"; English:
 * callers translate) */
const char *atn_colour_scale_label(atn_colour_scale scale);
