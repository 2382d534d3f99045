/* Which keys a long trace lists (issue 35, "the Trace at any length"): the keys with the
 * largest weights, the first and last few, the query's own key and the key with the largest
 * score, in token order; what lies between two listed keys is one "… m others, total weight w"
 * line, whose weight is summed here from the trace's exact weights (every softmax sum and the
 * output stay over all n keys: only the listing is shortened).  Plain C, no allocation, any
 * thread (the trace is only read). */
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

#ifdef __cplusplus
}
#endif

#endif
