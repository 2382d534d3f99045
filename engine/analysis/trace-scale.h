/* The factor the scores q.k are multiplied by before the mask and the softmax, as the
 * forward used it: 1/sqrt(k), GPT-2's scale_attn_* switches (none; divided by layer + 1),
 * Gemma's query_pre_attn_scalar^-1/2, DeBERTa's 1/sqrt(k scale_factor).  Shared by the trace
 * and the attention-file writer (which records it as the metadata "scale").  model NULL:
 * 1/sqrt(k).  Internal to the engine. */
#ifndef ATN_TRACE_SCALE_H
#define ATN_TRACE_SCALE_H

#include "forward/encoder.h"

double atn_trace_scale(const atn_model *model, int32_t layer, int32_t k);

#endif
