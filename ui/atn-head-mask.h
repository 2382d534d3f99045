/* Which cells of a head's map the Head view draws masked (hatched, no number): those the run's
 * additive mask hid in that layer, when that mask is more than padding and the causal term:
 * a what-if mask, or the model's own sliding window (Mistral, Qwen2 with use_sliding_window,
 * Gemma's sliding layers, ModernBERT's local layers).  Main thread only. */
#ifndef ATN_HEAD_MASK_H
#define ATN_HEAD_MASK_H

#include "atn-result.h"

/* The layer's [n][n] additive mask (borrowed from r's capture) for atn_heatmap_set_cell_mask,
 * or NULL when only padding and causality hide cells (r NULL: NULL). */
const float *atn_head_cell_mask(AtnResult *r, int layer);

#endif
