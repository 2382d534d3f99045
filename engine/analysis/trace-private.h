/* The trace's one arithmetic (analysis/trace.c), shared by its two sources: a run's capture
 * (atn_trace_compute_stack) and an attention file's q, k, v (formats/attention-trace.c,
 * atn_attn_file_trace).  Private to the engine. */
#ifndef ATN_TRACE_PRIVATE_H
#define ATN_TRACE_PRIVATE_H

#include "attnscope.h"

/* A trace with its arrays for n keys of k values: q [k], keys and values [n][k], the
 * per-key steps [n], output [k], concat [concat_len] and, when projected_len > 0, projected
 * [projected_len] (else NULL), all zero.  NULL when out of memory.  The caller's
 * (atn_trace_free). */
atn_trace *atn_trace_alloc(int32_t n, int32_t k, int32_t concat_len, int32_t projected_len);

/* Steps 1-4 for the query t->query over t->n keys, from what the source filled: t->q,
 * t->keys, t->values, t->scale, t->temperature (> 0), and where the model has them t->capped
 * (Gemma 2's soft-cap, t->softcap), t->c2p_term / t->p2c_term (DeBERTa) or t->pos_bias (T5),
 * t->head_off, t->xsoftmax.  mask_row [n]: the additive mask the forward added for this
 * query (0 or ATN_MASK_MIN); slope: ALiBi's m_h (0: none); P [n]: the probabilities the
 * source holds for the query, which max_abs_diff compares with (NULL: not compared).
 * Fills scores, scaled, mask_term, bias_term, shifted, max, exps, sum, weights,
 * max_abs_diff and output (added to: zero from atn_trace_alloc). */
void atn_trace_attend(atn_trace *t, const float *mask_row, double slope, const float *P);

#endif
