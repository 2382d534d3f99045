/* The heatmap widget's colour scale (atn-colour-scale.h). */
#include "atn-colour-scale.h"

#include <glib/gi18n.h>
#include <math.h>

gboolean atn_colour_scale_state_active(const AtnColourScaleState *st) {
    return st->scale != ATN_SCALE_LINEAR || st->drop_first;
}

void atn_colour_scale_state_clear(AtnColourScaleState *st) {
    g_clear_pointer(&st->scaled, g_free);
    g_clear_pointer(&st->note, g_free);
    g_clear_pointer(&st->legend, g_free);
}

const float *atn_colour_scale_state_values(AtnColourScaleState *st, const float *values, int rows, int cols,
                                           gboolean causal) {
    if (!atn_colour_scale_state_active(st) || !values)
        return values;
    if (st->scaled)
        return st->scaled;
    st->scaled = g_try_new(float, (size_t)rows * cols);
    if (!st->scaled || !atn_colour_scale_apply(values, rows, cols, (size_t)cols, st->scale, st->drop_first, causal,
                                               st->scaled, &st->vmin, &st->vmax, &st->first_share)) {
        g_clear_pointer(&st->scaled, g_free);
        return NULL;
    }
    g_clear_pointer(&st->note, g_free);
    g_clear_pointer(&st->legend, g_free);
    if (st->scale == ATN_SCALE_LOG)
        /* Translators: under the colour bar of a log colour scale */
        st->note = g_strdup(_("smallest to largest"));
    else if (st->scale == ATN_SCALE_RANK)
        /* Translators: under the colour bar of a per-row rank colour scale */
        st->note = g_strdup(_("0 lowest, 1 highest"));
    else
        /* Translators: under the colour bar when the first key column is left out of the colours */
        st->note = g_strdup(_("0 to max without 1st"));
    if (st->drop_first)
        /* Translators: the sentence under a heatmap's title; %.0f%% is the mean weight on the first token */
        st->legend = g_strdup_printf(_("First token's column left out of the colours (top colour): it takes %.0f%% of each row on average"),
                                     100 * st->first_share);
    return st->scaled;
}

void atn_colour_scale_state_fill(AtnColourScaleState *st, atn_heatmap_spec *spec, gboolean fixed_range) {
    if (!atn_colour_scale_state_active(st) || !st->scaled)
        return;
    spec->number_values = spec->values;   /* the numbers stay the weights: only the colours are scaled */
    spec->number_stride = spec->stride;
    spec->values = st->scaled;
    spec->stride = 0;
    if (!(st->scale == ATN_SCALE_LINEAR && fixed_range))
        spec->range = (atn_value_range){.automatic = false, .vmin = st->vmin, .vmax = st->vmax};
    if (st->scale == ATN_SCALE_LOG)
        /* Translators: the colour bar's label of a log colour scale */
        spec->colorbar_label = _("log₁₀ weight");
    else if (st->scale == ATN_SCALE_RANK)
        /* Translators: the colour bar's label of a per-row rank colour scale */
        spec->colorbar_label = _("rank in its row");
    if (!(st->scale == ATN_SCALE_LINEAR && fixed_range))
        spec->colorbar_note = st->note;
}
