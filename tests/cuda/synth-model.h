/* Synthetic BERT-shaped models with random weights, built in C through model-private.h,
 * for comparing the GPU with the CPU and for timing them (no files, any shape). */
#ifndef ATN_TEST_SYNTH_MODEL_H
#define ATN_TEST_SYNTH_MODEL_H

#include "core/model-private.h"

typedef struct synth_shape {
    const char *name;
    int32_t layers, d_model, heads, d_ffn;
    int32_t vocab, max_positions;
    atn_activation act;
    bool null_biases;      /* every bias and LayerNorm beta NULL, every gamma NULL (identity) */
    bool identity_qkv;     /* W_Q, W_K, W_V NULL: identity projections, as toy models have */
} synth_shape;

/* Random weights with BERT's initialiser scale (std 0.02; Q and K 0.08 so the maps are not
 * flat; embeddings std 1), LayerNorm gamma 1 +- 0.1, beta +- 0.1; uniformly distributed
 * (cheap), deterministic for a seed.  NULL on out of memory. */
atn_model *synth_model_new(const synth_shape *shape, uint64_t seed);

/* n random token ids (type 0 for the first half, 1 for the rest), the last n_pad masked. */
atn_encoding *synth_encoding(const atn_model *model, int32_t n, int32_t n_pad, uint64_t seed);

#endif
