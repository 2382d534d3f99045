/* The heatmap widget's colour scale (ui/render/colour-scale.h: linear, log, per-row rank,
 * the first key column left out): the values its figure colours, made once per data change
 * and kept with their range; the colour bar's label and note and the legend's sentence in the
 * interface's language.  Owned by one AtnHeatmap; main thread. */
#pragma once

#include <glib.h>

#include "colour-scale.h"
#include "render.h"

G_BEGIN_DECLS

typedef struct AtnColourScaleState {
    atn_colour_scale scale;
    gboolean drop_first;
    float *scaled;           /* [rows][cols] the values drawn, or NULL: not made yet / linear */
    double vmin, vmax;       /* their colour range */
    double first_share;      /* the mean weight on the first key over the rows */
    char *note, *legend;     /* the colour bar's note and the sentence under the title, or NULL */
} AtnColourScaleState;

/* TRUE when the figure draws other values than the weights (not linear, or drop_first). */
gboolean atn_colour_scale_state_active(const AtnColourScaleState *st);
/* Forgets the values made (the data changed). */
void atn_colour_scale_state_clear(AtnColourScaleState *st);
/* The values to colour: values itself when not active, else the scaled copy, made here
 * (values [rows][cols] borrowed); NULL when out of memory. */
const float *atn_colour_scale_state_values(AtnColourScaleState *st, const float *values, int rows, int cols,
                                           gboolean causal);
/* Puts the scale's values, range (unless linear with a fixed range asked for: fixed_range),
 * colour bar label and note into spec (strings borrowed from st); leaves spec alone when not
 * active.  Call after atn_colour_scale_state_values. */
void atn_colour_scale_state_fill(AtnColourScaleState *st, atn_heatmap_spec *spec, gboolean fixed_range);

G_END_DECLS
