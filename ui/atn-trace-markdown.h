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

G_END_DECLS
