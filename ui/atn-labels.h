/* Translated names for the engine's enums (the engine and ui/render speak English only). */
#pragma once

#include "analysis.h"
#include "render.h"

const char *atn_label_pattern(atn_pattern p);
const char *atn_label_metric(atn_metric m);
const char *atn_label_scope(atn_scope s);
const char *atn_label_colormap(atn_colormap cm);
const char *atn_label_trace_step(atn_trace_step step);

/* What a head does, in words, from its statistics: "previous: 97% to the previous token"
 * (the pattern's own number), or "mixed: no single pattern (32% to itself)".  Newly
 * allocated. */
char *atn_label_head_summary(const atn_head_stats *s);
/* One sentence per pattern name, for a legend ("previous: each token looks at the token
 * before it"), lines joined by newlines.  Newly allocated. */
char *atn_label_pattern_legend(void);
/* Which stored weights a captured layer runs, when it shares them (ALBERT): "shares weights
 * with layers 0–11 (group 0, inner 0)"; NULL (nothing to say) for a layer with its own
 * weights, a layer out of range or a NULL model.  Newly allocated. */
char *atn_label_layer_sharing(const atn_model *model, int layer);
