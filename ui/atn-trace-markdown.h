/* The trace of one head as Markdown with LaTeX maths ($…$), for lecture notes: each step's
 * formula and its numbers as a table (4 decimals), long token lists elided in the middle
 * (the query token always shown).  Plain C on top of GLib strings. */
#pragma once

#include <glib.h>

#include "attnscope.h"

G_BEGIN_DECLS

/* labels: [trace->n] the tokens as shown (atn_result_get_tokens; NULL: the encoding's
 * texts).  n_heads: the model's heads (for the concatenation step).  max_rows: token rows
 * shown before eliding (0: all).  Returns a newly allocated UTF-8 string. */
char *atn_trace_to_markdown(const atn_trace *trace, const char *const *labels, const char *model_name, int n_heads,
                            int max_rows);
/* The same for a head of any stack (atn_trace.stack): labels the keys' tokens [trace->n],
 * query_label the query token's (NULL: labels[query]); a decoder or cross head says so, and a
 * cross head's q, k, v formulas name the decoder's hidden states and the encoder's output. */
char *atn_trace_to_markdown_stack(const atn_trace *trace, const char *const *labels, const char *query_label,
                                  const char *model_name, int n_heads, int max_rows);

/* The same listing the Trace view shows at any length (issue 35): above 16 keys the tables list
 * the top_k keys by weight, the first and last ATN_TRACE_EDGE_DEFAULT, the query and the
 * largest score (atn_trace_key_rows), each run left out one row "… | *m others*" (the softmax
 * table's a_j: "Σ w", their total weight); top_k 0: every key. */
char *atn_trace_to_markdown_top(const atn_trace *trace, const char *const *labels, const char *query_label,
                                const char *model_name, int n_heads, int top_k);

G_END_DECLS
