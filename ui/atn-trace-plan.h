/* The trace as tables of text: per step (QKᵀ → ÷√d_k → mask → softmax → ×V → concat → W_O)
 * a formula (Pango markup), a small table of numbers (4 decimals; long token lists elided in
 * the middle, the query token always kept) and an optional note.  No widgets: the Trace view
 * puts these strings into labels, and tests can read them directly. */
#pragma once

#include <glib.h>

#include "attnscope.h"
#include "render.h"

G_BEGIN_DECLS

enum { ATN_TRACE_CELL_HEADER = 1, ATN_TRACE_CELL_ACCENT = 2 };

typedef struct AtnTracePlanStep {
    char *formula;   /* Pango markup */
    char *note;      /* Pango markup or NULL */
    int rows, cols;
    gboolean vector; /* a header row of indices over one row of values: may wrap into lines */
    char **cells;    /* [rows][cols], NULL for an empty cell */
    guint8 *flags;   /* [rows][cols] ATN_TRACE_CELL_* */
} AtnTracePlanStep;

/* Fills steps (zeroed by the caller) for trace; n_heads is the model's. */
void atn_trace_plan_make(const atn_trace *trace, int n_heads, AtnTracePlanStep steps[ATN_TRACE_STEP_COUNT]);
/* The same with the key and value tables at most max_cols columns of d_k wide (4..8; the
 * window gives fewer when the sheet is narrow, so a table never runs under the side pane). */
void atn_trace_plan_make_cols(const atn_trace *trace, int n_heads, int max_cols,
                              AtnTracePlanStep steps[ATN_TRACE_STEP_COUNT]);
/* The same with the tokens named by labels (atn_result_get_tokens: "␣the", not the raw
 * "\u0120the"; [trace->n]; NULL: the encoding's texts). */
void atn_trace_plan_make_labelled(const atn_trace *trace, const char *const *labels, int n_heads, int max_cols,
                                  AtnTracePlanStep steps[ATN_TRACE_STEP_COUNT]);
/* The same for a head of any stack (atn_trace.stack): labels are the keys' tokens [trace->n]
 * (the target's for a decoder head, the source's for a cross head), query_label the query
 * token's (the target's for decoder and cross; NULL: labels[query]).  A cross head's q, k and
 * v formulas say where they come from: the decoder's hidden state, the encoder's output. */
void atn_trace_plan_make_stack(const atn_trace *trace, const char *const *labels, const char *query_label,
                               int n_heads, int max_cols, AtnTracePlanStep steps[ATN_TRACE_STEP_COUNT]);
/* The same listing at any length (issue 35): above 16 keys the token tables list the top_k keys
 * by weight, the first and last ATN_TRACE_EDGE_DEFAULT, the query and the largest score
 * (atn_trace_key_rows), and each run of keys left out is one row: "…" cells, "m others" in
 * the token column and, in the softmax table, "Σ w" (their total weight) in the a_j column;
 * the softmax note says how many are listed and the others' weight.  top_k 0: every key (the
 * view's "show all n keys").  atn_trace_plan_make_stack is this with ATN_TRACE_TOP_DEFAULT. */
void atn_trace_plan_make_top(const atn_trace *trace, const char *const *labels, const char *query_label,
                             int n_heads, int max_cols, int top_k, AtnTracePlanStep steps[ATN_TRACE_STEP_COUNT]);
void atn_trace_plan_step_clear(AtnTracePlanStep *step);
/* The line over a model's trace (Pango markup, escaped; g_free): which head mixes the tokens for
 * which token (its text `token`), d_model split into n_heads heads of d_k, or, when the heads are
 * not d_model wide together (Qwen3, Gemma) or share K/V heads, the heads' width and the K/V head
 * this one reads. */
char *atn_trace_plan_intro(const atn_trace *trace, const char *token, int n_heads);
/* Key j's score as the softmax reads it, before the temperature: the scaled score (soft-capped
 * for Gemma 2), DeBERTa's or T5's relative terms, ALiBi's bias and the mask term. */
double atn_trace_plan_score(const atn_trace *trace, int j);
/* What trace's mask row hides: keys after a causal query (*future), padded keys or, for a head
 * not of the encoder's tokens, any other masked key (*padded), and the other real keys the mask
 * hides (*earlier; each may be NULL).  When those are exactly the real keys j <= query - W (a
 * sliding window), returns W; else 0. */
int atn_trace_plan_mask_counts(const atn_trace *trace, int *future, int *padded, int *earlier);

G_END_DECLS
