/* What engine/forward/run.c offers the rest of the engine beyond the public atn_run_*
 * functions (attnscope.h): one input's checks and inputs, for the stacked forward
 * (engine/forward/batch.c), and a forward from a middle layer, for the what-if lab's head
 * importance (engine/whatif/importance.c). */
#ifndef ATN_RUN_H
#define ATN_RUN_H

#include "core/model-private.h"

/* atn_run_forward's checks of one input (engine/forward/run.c): the encoding fits the model
 * (ATN_E_INVALID as atn_run_forward says it) and iv (may be NULL) passes
 * atn_interventions_check. */
atn_status atn_run_check(const atn_model *model, const atn_encoding *enc, const atn_interventions *iv,
                         atn_error *err);

/* The inputs atn_run_forward builds for enc (engine/forward/run.c): pos_ids [n] by the family's rule
 * (shuffled when iv says so) and the additive mask [n][n] (padding, the causal term, iv's
 * masks). */
void atn_run_inputs(const atn_model *model, const atn_encoding *enc, const atn_interventions *iv, int32_t *pos_ids,
                    float *mask_add);

/* atn_run_forward, but layers 0..start_layer-1 are taken from base (a capture of the same
 * model and input whose hidden states those layers would give again: the interventions
 * differ only in layers >= start_layer, which the caller promises).  The capture's
 * attention / Q / K / V of the layers below are not filled (keep_attention and
 * keep_trace_inputs false is the intended use).  CPU only (the GPU refuses, AUTO falls
 * back).  ATN_E_INVALID: no base, a base of another shape, start_layer out of 0..L. */
atn_status atn_run_forward_from(atn_run *run, const atn_encoding *enc, const atn_run_options *opts,
                                const atn_capture *base, int32_t start_layer, atn_error *err);

#endif
