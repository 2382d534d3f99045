/* Translated names for the engine's enums (the engine and ui/render speak English only). */
#pragma once

#include "analysis.h"
#include "render.h"

const char *atn_label_pattern(atn_pattern p);
const char *atn_label_metric(atn_metric m);
const char *atn_label_scope(atn_scope s);
const char *atn_label_colormap(atn_colormap cm);
const char *atn_label_trace_step(atn_trace_step step);
