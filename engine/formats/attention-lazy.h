/* How atn_capture_head reaches an attention file's lazy capture (attention-lazy.c).
 * Private to the engine. */
#ifndef ATN_ATTENTION_LAZY_H
#define ATN_ATTENTION_LAZY_H

#include "attnscope.h"

/* Head `head` of layer `layer` of a capture made by atn_attn_file_capture_lazy (attn NULL,
 * attn_on_demand true, run NULL: only that function makes such a capture) into out [n][n]:
 * the layer's floats through the mapping (F16/BF16 converted and kept), the head checked on
 * its first read (atn_attn_file_layer's errors, naming the file, the tensor, the layer and the
 * head), then copied.  ATN_E_INVALID for any other capture.
 * Several threads at once (the file's lock guards its layer cache). */
atn_status atn_attn_file_capture_head(const atn_capture *cap, int32_t layer, int32_t head, float *out,
                                      atn_error *err);

/* Head `head` of layer `layer` of an encoder-decoder file's stack kind, for a capture made by
 * atn_attn_file_capture_lazy, into out [n_q][n_k] (the stack's): the encoder's as
 * atn_attn_file_capture_head; the decoder's or the cross head's bytes read through the mapping,
 * F16/BF16 converted, and checked on every read (NaN, Inf, a negative value: ATN_E_FORMAT
 * naming the file, the tensor, the layer, head, query and key).  Nothing is kept.
 * ATN_E_INVALID: any other capture, a layer or head out of range.  Any thread. */
atn_status atn_attn_file_stack_head(const atn_capture *cap, atn_stack_kind kind, int32_t layer, int32_t head,
                                    float *out, atn_error *err);

#endif
