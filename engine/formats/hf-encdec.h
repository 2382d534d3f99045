/* config.json and the tensors of an encoder-decoder (T5 / mT5 / Flan-T5; BART and Marian
 * next): engine/formats/hf-encdec.c, called by hf-model.c's read_config and bind_weights. */
#ifndef ATN_HF_ENCDEC_H
#define ATN_HF_ENCDEC_H

#include "core/family.h"
#include "core/model-private.h"

#include <cjson/cJSON.h>

/* What the keys say, beside atn_config's (d_head = d_kv, gated_ffn, act). */
typedef struct atn_hf_encdec {
    atn_encdec_kind kind;
    int32_t n_dec_layers, num_buckets, max_distance, decoder_start_id;
    bool tie_word_embeddings;
    float emb_scale;   /* BART / Marian scale_embedding: sqrt(d_model), else 1 */
} atn_hf_encdec;

/* Reads T5Config's keys (root, from path) into c and out: d_kv, num_decoder_layers (default
 * num_layers), relative_attention_num_buckets (32), relative_attention_max_distance (128),
 * feed_forward_proj ("relu", "gelu", "gated-gelu" = gelu_new as T5Config maps it,
 * "gated-<act>" for relu / gelu / gelu_new / silu), tie_word_embeddings (true),
 * decoder_start_token_id (pad_token_id, 0).  ATN_E_FORMAT for a malformed key,
 * ATN_E_UNSUPPORTED naming a value attnscope does not compute ("PATH: \"key\" ..."). */
atn_status atn_hf_encdec_config(const char *path, const cJSON *root, const atn_family *fam, atn_config *c,
                                atn_hf_encdec *out, atn_error *err);

/* How hf-model.c binds a tensor: *dst to the tensor named name, of shape [d0] or [d0, d1]
 * (d1 < 0: 1-D), checked against it (absent and optional: *dst NULL). */
typedef struct atn_hf_binder {
    void *loader;
    atn_status (*want)(void *loader, const float **dst, bool optional, int64_t d0, int64_t d1, const char *name);
    bool (*has)(void *loader, const char *name);
} atn_hf_binder;

/* Binds an encoder-decoder's tensors in the model's w (the encoder: word_emb = shared,
 * layers, final_ln_g) and encdec (the decoder, the relative-position tables, the LM head);
 * allocates the decoder's layer array in the model.  Errors from b->want. */
atn_status atn_hf_encdec_bind(const atn_hf_binder *b, atn_model *m, const atn_hf_encdec *cfg, atn_error *err);

/* After the conversions (the tensors' final addresses): BART's position tables start at row
 * 2 (pos_offset); Marian's sinusoidal table is made.  ATN_E_NOMEM. */
atn_status atn_hf_encdec_finish(atn_model *m, atn_error *err);

#endif
