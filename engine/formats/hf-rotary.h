/* config.json of a rotary decoder (Llama, Qwen2, Qwen3, Mistral): grouped K/V heads,
 * head_dim, rope_theta and rope_scaling, the biases, the sliding window
 * (engine/formats/hf-rotary.c, called by hf-model.c's read_config). */
#ifndef ATN_HF_ROTARY_H
#define ATN_HF_ROTARY_H

#include "core/family.h"
#include "core/model-private.h"
#include "formats/safetensors.h"

#include <cjson/cJSON.h>

/* What the keys say, beside atn_config's n_kv_heads / d_head / gated_ffn. */
typedef struct atn_hf_rotary {
    atn_rotary rotary;          /* inv_freq NULL here: atn_hf_rotary_inv_freq makes it */
    bool attention_bias;        /* q, k, v and o biases (Llama's and Qwen3's attention_bias) */
    bool mlp_bias;              /* the MLP's biases (Llama's mlp_bias) */
    bool tie_word_embeddings;   /* the LM head is embed_tokens (default false for these families) */
    /* ModernBERT's head: classifier_bias (head.dense.bias), decoder_bias (decoder.bias) */
    bool classifier_bias, decoder_bias;
    /* Gemma: sliding[l] 1 for a sliding layer (has_sliding: any), copied into the model's
       rotary.local_layers by the loader */
    uint8_t sliding[1000];
    bool has_sliding;
} atn_hf_rotary;

/* Reads the rotary keys of config.json (root, from path) for family fam into out, and
 * n_kv_heads, d_head (head_dim) and gated_ffn into c (n_heads, d_model, n_layers read
 * already).  ATN_E_FORMAT for a malformed key, ATN_E_UNSUPPORTED naming a key whose value
 * would change the numbers in a way attnscope does not compute (a rope_scaling type other
 * than linear / llama3, partial_rotary_factor, a window in some layers only), each message
 * "PATH: \"key\" ...". */
atn_status atn_hf_rotary_config(const char *path, const cJSON *root, const atn_family *fam, atn_config *c,
                                atn_hf_rotary *out, atn_error *err);

/* The rotation's frequencies inv_freq[d_head / 2] after the scaling, as transformers'
 * ROPE_INIT_FUNCTIONS compute them (default, linear, llama3), into out (caller's memory). */
void atn_hf_rotary_inv_freq(const atn_rotary *r, int32_t d_head, float *out);

/* ModernBERT's keys (ModernBertConfig): global_rope_theta / local_rope_theta (or
 * rope_parameters' full_attention / sliding_attention rope_theta), global_attn_every_n_layers,
 * local_attention (the window |i - j| <= local_attention // 2), layer_types (must be the
 * pattern global_attn_every_n_layers makes), attention_bias, mlp_bias, classifier_bias,
 * decoder_bias, tie_word_embeddings (default true).  Refused by name: norm_bias true, a
 * classifier_activation other than gelu, a rope type other than default, layer_types of
 * another pattern.  Errors as atn_hf_rotary_config. */
atn_status atn_hf_modernbert_config(const char *path, const cJSON *root, atn_config *c, atn_hf_rotary *out,
                                    atn_error *err);

/* Gemma 2 / Gemma 3 text's own keys (Gemma2Config, Gemma3TextConfig), after
 * atn_hf_rotary_config read the shared ones into out: query_pre_attn_scalar (default 256),
 * attn_logit_softcapping (Gemma 2: default 50; null: none), final_logit_softcapping
 * (Gemma 2: default 30, Gemma 3: none), sliding_window (default 4096) and the sliding layers
 * (layer_types; else every other layer from 0 for Gemma 2, (l + 1) % sliding_window_pattern
 * != 0 for Gemma 3, pattern default 6), Gemma 3's rope_local_base_freq (default 10000; or
 * transformers 5's rope_parameters full_attention / sliding_attention).  Refused by name:
 * use_bidirectional_attention true, Gemma 3 with attn_logit_softcapping set, a null
 * sliding_window, other layer_types.  Errors as atn_hf_rotary_config. */
atn_status atn_hf_gemma_config(const char *path, const cJSON *root, const atn_family *fam, atn_config *c,
                               atn_hf_rotary *out, atn_error *err);

/* Gemma's embedding factor: sqrt(d_model) as a tensor of the embeddings' stored dtype
 * (Gemma2Model's normalizer, Gemma3TextScaledWordEmbedding's embed_scale.to(weight.dtype)):
 * BF16 rounds sqrt(640) 25.298 to 25.25, F32 keeps it. */
float atn_hf_gemma_embed_scale(int32_t d_model, atn_st_dtype dtype);

/* Gemma's RMSNorm multiplies by 1 + w (Gemma2RMSNorm's 1.0 + weight.float()): every norm gain
 * of m (each layer's four, the q/k norms, the final norm) is replaced by a model-owned copy of
 * 1 + g, so every op and the trace read the gain they use.  Call once, after the weights are
 * converted (the gains may point into a read-only file mapping).  ATN_E_NOMEM. */
atn_status atn_hf_gemma_norm_gains(atn_model *m, atn_error *err);

#endif
