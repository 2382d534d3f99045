/* Random-weight models of real decoders', ModernBERT's and T5's shapes (engine/core/random-decoder.c), reached
 * through atn_random_shape_config / atn_model_new_random_shape(_positions) (attnscope.h). */
#ifndef ATN_RANDOM_DECODER_H
#define ATN_RANDOM_DECODER_H

#include "attnscope.h"

/* Whether name is one of the shapes opened as folders ("qwen2.5-0.5b", "smollm2-135m",
 * "llama-3.2-1b", "modernbert-base", "t5-small"). */
bool atn_random_decoder_known(const char *name);

/* The atn_config a folder of that shape opens with (as atn_model_open_hf reads its
 * config.json).  ATN_E_INVALID for a name atn_random_decoder_known refuses. */
atn_status atn_random_decoder_config(const char *name, atn_config *cfg, atn_error *err);

/* The model of that shape with random weights, opened as the folder would be
 * (atn_hf_open_memory): config.json with the published model's keys (max_position_embeddings
 * raised to `positions` when that is larger), model.safetensors in F32 with *ForCausalLM's
 * tensor names, filled in this order by atn_random_fill, tensor number t from 0:
 * model.embed_tokens.weight (W), then per layer input_layernorm.weight (G),
 * self_attn.{q,k,v}_proj.weight (W) each followed by its bias (B) where the family has
 * one (Qwen2), self_attn.o_proj.weight (W), post_attention_layernorm.weight (G),
 * mlp.{gate,up,down}_proj.weight (W), and model.norm.weight (G); W: 0 ± 0.0346, B: 0 ±
 * 0.02, G: 1 ± 0.1.  The head is tied (as the three published models have it).
 * "modernbert-base" has ModernBertForMaskedLM's tensors and "t5-small"
 * T5ForConditionalGeneration's, in the orders random-decoder.c's list_modernbert and list_t5
 * give (the same W / B / G draws).  The
 * weights are one F32 block the model owns, used in place (no copy).  No tokenizer.
 * Errors: ATN_E_INVALID for an unknown name, ATN_E_NOMEM naming the bytes.  The caller owns
 * the model. */
atn_model *atn_random_decoder_new(const char *name, uint64_t seed, int32_t positions, atn_error *err);

#endif
