/* A Hugging Face folder held in memory (engine/formats/hf-model.c): what `attnscope bench
 * --shape qwen2.5-0.5b` builds, so that a random model of a real decoder's shape opens by
 * the same path as the folder would (config.json's keys read and checked by the family,
 * the tensors bound by their Hugging Face names and shapes), without writing gigabytes. */
#ifndef ATN_HF_MEMORY_H
#define ATN_HF_MEMORY_H

#include "attnscope.h"
#include "formats/safetensors.h"

#include <cjson/cJSON.h>

/* Opens the model whose config.json is `config` (borrowed; read as atn_model_open_hf reads
 * the file) and whose model.safetensors is `weights` (taken over, also on failure: e.g.
 * atn_st_adopt over a block the caller filled).  F32 tensors are used in place, so the
 * block they point into must outlive the model (the caller hands it to the model, or keeps
 * it); BF16 / F16 ones are converted into model memory.  No tokenizer.  `name` names the
 * folder in messages ("NAME/config.json: ...") and becomes the model's name and path.
 * Errors: those of atn_model_open_hf (a key refused by name, a tensor missing or of the
 * wrong shape), ATN_E_INVALID for a NULL argument. */
atn_model *atn_hf_open_memory(const char *name, const cJSON *config, atn_st_file *weights, atn_error *err);

#endif
