/* The what-if lab's interventions (atn_interventions, attnscope.h) as the run applies them:
 * the terms added to the run's one additive mask, and the shuffled position ids. */
#ifndef ATN_INTERVENTIONS_H
#define ATN_INTERVENTIONS_H

#include "attnscope.h"

/* Sets mask_add[i][j] (row = query) to ATN_MASK_MIN where iv hides key j from query i
 * (causal, window with global tokens, strided, hidden tokens); other cells are left as
 * they are.  iv NULL: nothing. */
void atn_interventions_apply_mask(float *mask_add, int32_t n, const atn_interventions *iv);

/* True when iv has a mask term (causal, window, strided, hidden keys) and mask_layers
 * leaves at least one of the n_layers layers without it: the run then needs a second mask. */
bool atn_interventions_masks_some_layers(const atn_interventions *iv, int32_t n_layers);

/* Permutes pos_ids[i] among the positions i whose token is not special, with iv's seed
 * (Fisher-Yates on splitmix64).  Nothing unless iv->shuffle. */
void atn_interventions_shuffle_positions(int32_t *pos_ids, const atn_encoding *enc, const atn_interventions *iv);

/* atn_run_forward, but layers 0..start_layer-1 are taken from base (a capture of the same
 * model and input whose hidden states those layers would give again: the interventions
 * differ only in layers >= start_layer, which the caller promises).  The capture's
 * attention / Q / K / V of the layers below are not filled (keep_attention and
 * keep_trace_inputs false is the intended use).  CPU only (the GPU refuses, AUTO falls
 * back).  ATN_E_INVALID: no base, a base of another shape, start_layer out of 0..L. */
atn_status atn_run_forward_from(atn_run *run, const atn_encoding *enc, const atn_run_options *opts,
                                const atn_capture *base, int32_t start_layer, atn_error *err);

#endif
