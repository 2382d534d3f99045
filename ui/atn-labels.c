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
    case ATN_PATTERN_INDUCTION: return C_("pattern", "induction");
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
    case ATN_TRACE_STEP_SCALE: return _("Scale the scores");   /* 1/√d_k, or the model's own factor (Gemma) */
    case ATN_TRACE_STEP_MASK: return _("Mask");
    case ATN_TRACE_STEP_SOFTMAX: return _("Softmax");
    case ATN_TRACE_STEP_VALUES: return _("The value vectors");
    case ATN_TRACE_STEP_OUTPUT: return _("Weighted sum of the values (×V)");
    case ATN_TRACE_STEP_CONCAT: return _("Concatenate the heads");
    case ATN_TRACE_STEP_PROJECT: return _("Output projection (W_O)");
    default: return "";
    }
}

char *atn_label_head_summary(const atn_head_stats *s) {
    const char *name = atn_label_pattern(s->pattern);
    switch (s->pattern) {
    /* Translators: a head's pattern and what it means with its number, e.g. "previous: 97% to the previous token" */
    case ATN_PATTERN_DIAGONAL: return g_strdup_printf(_("%s: %.0f%% to the token itself"), name, 100 * s->self);
    case ATN_PATTERN_PREVIOUS: return g_strdup_printf(_("%s: %.0f%% to the previous token"), name, 100 * s->prev);
    case ATN_PATTERN_NEXT: return g_strdup_printf(_("%s: %.0f%% to the next token"), name, 100 * s->next);
    case ATN_PATTERN_CLS: return g_strdup_printf(_("%s: %.0f%% to [CLS]"), name, 100 * s->cls);
    case ATN_PATTERN_SEP: return g_strdup_printf(_("%s: %.0f%% to [SEP]"), name, 100 * s->sep);
    case ATN_PATTERN_PUNCT: return g_strdup_printf(_("%s: %.0f%% to punctuation"), name, 100 * s->punct);
    case ATN_PATTERN_BLOCK:
        return g_strdup_printf(_("%s: %.0f%% within two tokens of the query (or in its own segment)"), name,
                               100 * s->local);
    case ATN_PATTERN_BROAD:
        return g_strdup_printf(_("%s: spread over many tokens (entropy %.0f%% of uniform)"), name,
                               100 * s->entropy_norm);
    case ATN_PATTERN_INDUCTION:
        return g_strdup_printf(_("%s: %.0f%% to the token after the earlier copy (in repeated text)"), name,
                               100 * s->induction);
    default: {
        double best = MAX(MAX(s->self, s->prev), MAX(s->next, MAX(s->cls, s->sep)));
        const char *what = best == s->self ? _("to itself") : best == s->prev ? _("to the previous token")
                           : best == s->next ? _("to the next token") : best == s->cls ? _("to [CLS]") : _("to [SEP]");
        /* Translators: "mixed: no single pattern (the largest: 32% to itself)" */
        return g_strdup_printf(_("%s: no single pattern (the largest: %.0f%% %s)"), name, 100 * best, what);
    }
    }
}

char *atn_label_pattern_legend(void) {
    static const struct { atn_pattern p; const char *text; } rows[] = {
        {ATN_PATTERN_DIAGONAL, N_("each token looks mostly at itself")},
        {ATN_PATTERN_PREVIOUS, N_("each token looks at the token before it")},
        {ATN_PATTERN_NEXT, N_("each token looks at the token after it")},
        {ATN_PATTERN_CLS, N_("every token looks at [CLS]: a vertical stripe")},
        {ATN_PATTERN_SEP, N_("every token looks at [SEP]: a vertical stripe (often a “no-op”)")},
        {ATN_PATTERN_PUNCT, N_("stripes on punctuation tokens")},
        {ATN_PATTERN_BLOCK, N_("attention stays within a few neighbouring tokens or the query’s own sentence")},
        {ATN_PATTERN_BROAD, N_("attention spread thinly over many tokens")},
        {ATN_PATTERN_INDUCTION, N_("in text that repeats, each token looks at the token that followed its earlier "
                                   "copy: it predicts the repeat (measured on repeated spans only)")},
        {ATN_PATTERN_MIXED, N_("none of the above clearly")},
    };
    GString *g = g_string_new(_("What the pattern names mean (from the head’s statistics, mean over query rows):"));
    for (guint i = 0; i < G_N_ELEMENTS(rows); i++)
        g_string_append_printf(g, "\n• %s — %s", atn_label_pattern(rows[i].p), _(rows[i].text));
    return g_string_free(g, FALSE);
}

char *atn_label_layer_sharing(const atn_model *model, int layer) {
    if (!model)
        return NULL;
    char list[512];
    int32_t g = 0, j = 0;
    if (atn_model_layer_weights(model, layer, &g, &j) < 2)
        return NULL;
    atn_model_layer_sharers(model, layer, list, sizeof list);
    /* Translators: an ALBERT layer runs the same weights as other layers: "shares weights
       with layers 0–11 (group 0, inner 0)"; the list is layer numbers, the group and inner
       numbers name the stored layer (albert_layer_groups.G.albert_layers.J) */
    return g_strdup_printf(_("shares weights with layers %s (group %d, inner %d)"), list, g, j);
}
