/* Which keys a long trace lists (issue 35, "the Trace at any length"): the keys with the
 * largest weights, the first and last few, the query's own key and the key with the largest
 * score, in token order; what lies between two listed keys is one "… m others, total weight w"
 * line, whose weight is summed here from the trace's exact weights (every softmax sum and the
 * output stay over all n keys: only the listing is shortened).  The weighted sum lists the keys
 * by their contribution a_j·‖v_j‖ instead.  Plain C, any thread (the trace is only read). */
#ifndef ATN_TRACE_KEYS_H
#define ATN_TRACE_KEYS_H

#include "attnscope.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The default number of keys by weight a shortened trace lists, and the first/last keys. */
#define ATN_TRACE_TOP_DEFAULT 8
#define ATN_TRACE_EDGE_DEFAULT 2

/* Writes the indices of the keys to list, ascending, into rows (the caller's, at least
 * trace->n entries) and returns how many (m, 1..n).  Listed: the top_k keys by weight (ties:
 * the lower index first), the first `edge` and the last `edge` keys, the query's key (not for
 * a cross head, whose query is a target token) and the key with the largest score (shifted),
 * so the elision never hides it.  top_k <= 0, or a trace short enough that at most one key
 * would be left out, lists all n keys (rows = 0..n-1).  edge < 0 counts as 0.  Returns 0 for
 * a NULL trace or rows. */
int32_t atn_trace_key_rows(const atn_trace *trace, int32_t top_k, int32_t edge, int32_t *rows);

/* The sum of weights[from..to) in double (0 when the range is empty or out of the trace);
 * NULL trace: 0.  The weight of the keys left out between two listed keys a < b is
 * atn_trace_weight_sum(t, a + 1, b). */
double atn_trace_weight_sum(const atn_trace *trace, int32_t from, int32_t to);

/* The weighted sum's contributions (the step o = Σ_j a_j v_j at any length): key j adds
 * a_j v_j to the head's output, whose size a_j·‖v_j‖ (‖·‖ the Euclidean norm over the head's
 * d_head values) ranks it; its share is a_j·‖v_j‖ / Σ_j a_j·‖v_j‖ over all n keys.
 * atn_trace_contribution: key j's a_j·‖v_j‖ (0 for a NULL trace or j out of 0..n-1). */
double atn_trace_contribution(const atn_trace *trace, int32_t j);
/* Σ_j a_j·‖v_j‖ over all n keys (0 for a NULL trace). */
double atn_trace_contribution_total(const atn_trace *trace);
/* Writes the keys that contribute most into rows (the caller's, at least min(top_k, n)
 * entries, or n when top_k <= 0), largest a_j·‖v_j‖ first (ties: the lower index first), and
 * returns how many: min(top_k, n), or n for top_k <= 0, so the largest contribution is always
 * rows[0].  Returns 0 for a NULL trace or rows, -1 when out of memory (it allocates n pairs
 * for the sort).  Any thread (the trace is only read). */
int32_t atn_trace_top_contributions(const atn_trace *trace, int32_t top_k, int32_t *rows);

#ifdef __cplusplus
}
#endif

#endif
