/* BERT-shaped models with random weights, for benchmarks: the real shapes (bert-tiny,
 * bert-base, bert-large) without downloading anything. */
#ifndef ATN_RANDOM_MODEL_H
#define ATN_RANDOM_MODEL_H

#include "attnscope.h"

/* The shape names atn_random_shape_config knows, NULL-terminated. */
const char *const *atn_random_shape_names(void);

/* Fills cfg with a named shape: "bert-tiny" (2 layers, d 128, 2 heads, f 512),
 * "bert-base" (12, 768, 12, 3072), "bert-large" (24, 1024, 16, 4096); all with
 * vocabulary 30522, 512 positions, 2 token types, erf GELU, LayerNorm eps 1e-12.
 * ATN_E_INVALID (message lists the names) for an unknown shape. */
atn_status atn_random_shape_config(const char *shape, atn_config *cfg, atn_error *err);

/* A BERT model (ATN_MODEL_BERT, no tokenizer: encode with atn_model_encode_ids) of the
 * shape cfg, every weight drawn from a counter-based generator so that any tool can
 * recompute it (bench/peer_torch.py does):
 *   tensor t (numbered as below), element i (row-major, weights [out, in]):
 *     x = splitmix64_mix(seed * 0x9E3779B97F4A7C15 + (t << 40) + i)
 *     u = (x >> 40) * 2^-24                      (uniform in [0, 1))
 *     value = center + scale * (2u - 1)
 *   scale 0.0346 (std 0.02, BERT's init) for matrices and embeddings, 0.02 for biases
 *   and LayerNorm betas, 0.1 around a center of 1 for LayerNorm gammas.
 * One allocation holds every weight (bert-base: 110M floats, 440 MB).  The config is
 * validated first; ATN_E_NOMEM when the weights do not fit in memory. */
atn_model *atn_model_new_random(const atn_config *cfg, const char *name, uint64_t seed, atn_error *err);

/* The tensor order used by the generator above: embeddings first, then per layer
 * (query.w, query.b, key.w, key.b, value.w, value.b, out.w, out.b, ln1.g, ln1.b,
 * ffn1.w, ffn1.b, ffn2.w, ffn2.b, ln2.g, ln2.b).  Tensor index of layer l's j-th
 * tensor = 5 + 16 l + j. */
enum { ATN_RANDOM_EMBEDDING_TENSORS = 5, ATN_RANDOM_LAYER_TENSORS = 16 };

#endif
