/* The stacked forward of several sequences (engine/forward/batch.c, public API atn_batch_* in
 * attnscope.h). */
#ifndef ATN_BATCH_H
#define ATN_BATCH_H

#include "core/model-private.h"

/* Runs enc `copies` times, copy i with the head gate gates[i] ([copies][L][H], 1 = off, in
 * mode), each as atn_run_forward (start 0) or atn_run_forward_from(base, start) would, and
 * hands capture i to each in order.  Stacked on the reference ops when the batch is not
 * exact (atn_batch_set_exact false) and more than one copy fits its rows; then within ~1e-7
 * (relative) of one at a time, else one forward per copy (bit for bit).  opts' own
 * interventions are ignored. */
atn_status atn_batch_forward_gates(atn_batch *batch, const atn_encoding *enc, int32_t copies, const uint8_t *gates,
                                   atn_head_mode mode, const atn_capture *base, int32_t start,
                                   const atn_run_options *opts, atn_batch_fn each, void *user, atn_error *err);

#endif
