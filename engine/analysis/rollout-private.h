/* What rollout.c shares with flow.c (engine/analysis only). */
#ifndef ATN_ROLLOUT_PRIVATE_H
#define ATN_ROLLOUT_PRIVATE_H

#include "attnscope.h"

/* Layer l's residual-augmented head mean, the matrix rollout multiplies and flow uses as its
 * capacities: A' = 0.5 mean_h(A_h) + 0.5 I, each row divided by its sum (non-finite weights
 * read as 0), into a [n][n] (n = cap->n).  scratch [n][n] for a head made on demand (NULL when
 * cap->attn holds every head).  Errors: atn_capture_head_read's. */
atn_status atn_rollout_layer_matrix(const atn_capture *cap, int32_t l, double *a, float *scratch, atn_error *err);

#endif
