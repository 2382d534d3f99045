/* Translated names for the engine's enums. */
#include "atn-labels.h"

#include <glib/gi18n.h>

const char *atn_label_pattern(atn_pattern p) {
    switch (p) {
    case ATN_PATTERN_DIAGONAL: return C_("pattern", "diagonal");
    case ATN_PATTERN_PREVIOUS: return C_("pattern", "previous");
    case ATN_PATTERN_NEXT: return C_("pattern", "next");
    case ATN_PATTERN_CLS: return C_("pattern", "vertical [CLS]");
    case ATN_PATTERN_SEP: return C_("pattern", "vertical [SEP]");
    case ATN_PATTERN_PUNCT: return C_("pattern", "vertical punctuation");
    case ATN_PATTERN_BLOCK: return C_("pattern", "block");
    case ATN_PATTERN_BROAD: return C_("pattern", "broad");
    default: return C_("pattern", "mixed");
    }
}

const char *atn_label_metric(atn_metric m) {
    switch (m) {
    case ATN_METRIC_COSINE: return _("Cosine similarity");
    case ATN_METRIC_PEARSON: return _("Pearson correlation");
    default: return _("Jensen-Shannon distance");
    }
}

const char *atn_label_scope(atn_scope s) {
    return s == ATN_SCOPE_MODEL ? _("Whole model") : _("Heads of this layer");
}

const char *atn_label_colormap(atn_colormap cm) {
    switch (cm) {
    case ATN_CMAP_MAGMA: return C_("colour map", "Magma");
    case ATN_CMAP_CIVIDIS: return C_("colour map", "Cividis (colour-blind friendly)");
    case ATN_CMAP_GREYS: return C_("colour map", "Greys");
    case ATN_CMAP_RDBU: return C_("colour map", "Red–blue (diverging)");
    default: return C_("colour map", "Viridis");
    }
}

const char *atn_label_trace_step(atn_trace_step step) {
    switch (step) {
    case ATN_TRACE_STEP_QUERY: return _("The query vector");
    case ATN_TRACE_STEP_KEYS: return _("The key vectors");
    case ATN_TRACE_STEP_SCORES: return _("Dot products (a row of QKᵀ)");
    case ATN_TRACE_STEP_SCALE: return _("Scale by 1/√d_k");
    case ATN_TRACE_STEP_MASK: return _("Mask");
    case ATN_TRACE_STEP_SOFTMAX: return _("Softmax");
    case ATN_TRACE_STEP_VALUES: return _("The value vectors");
    case ATN_TRACE_STEP_OUTPUT: return _("Weighted sum of the values (×V)");
    case ATN_TRACE_STEP_CONCAT: return _("Concatenate the heads");
    case ATN_TRACE_STEP_PROJECT: return _("Output projection (W_O)");
    default: return "";
    }
}
