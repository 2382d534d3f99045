/* The stacked forward of several sequences (engine/batch.c, public API atn_batch_* in
 * attnscope.h) and what it borrows from engine/run.c. */
#ifndef ATN_BATCH_H
#define ATN_BATCH_H

#include "model-private.h"

/* atn_run_forward's checks of one input (engine/run.c): the encoding fits the model
 * (ATN_E_INVALID as atn_run_forward says it) and iv (may be NULL) passes
 * atn_interventions_check. */
atn_status atn_run_check(const atn_model *model, const atn_encoding *enc, const atn_interventions *iv,
                         atn_error *err);

/* The inputs atn_run_forward builds for enc (engine/run.c): pos_ids [n] by the family's rule
 * (shuffled when iv says so) and the additive mask [n][n] (padding, the causal term, iv's
 * masks). */
void atn_run_inputs(const atn_model *model, const atn_encoding *enc, const atn_interventions *iv, int32_t *pos_ids,
                    float *mask_add);

#endif
