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

#endif
