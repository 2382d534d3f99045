/* Encoder-decoders in the window (T5 / mT5 / Flan-T5, BART, Marian: atn_model_is_encoder_decoder).
 * A run reads a source (the window's sentence) and a target (AtnTargetEntry, the session's
 * target); its capture has three stacks (engine/include/attnscope.h, atn_capture.stacks):
 * encoder self-attention [L][H][n_src][n_src], decoder self-attention [Ld][H][n_tgt][n_tgt]
 * and cross-attention [Ld][H][n_tgt][n_src].  The session's stack (atn_session_get_stack)
 * says which one the Head and Model views show; the session's layer, head and query are that
 * stack's.  See docs/ARCHITECTURE.md, "Encoder-decoders (T5 / mT5 / Flan-T5, BART, Marian) and
 * cross-attention", "In the window". */
#pragma once

#include <gtk/gtk.h>

#include "atn-heatmap.h"
#include "atn-result.h"

G_BEGIN_DECLS

/* The decoder's input for the target text as the command line's --target makes it (teacher
 * forcing, HF's shift_right of the labels: the decoder start token, then the target's tokens
 * but the last, so T5's closing </s> is dropped).  Empty text: the start token alone.  A
 * malloc'd array of *n ids (free), or NULL with err set (the text could not be tokenized, out
 * of memory).  Any thread; m not NULL and an encoder-decoder. */
int32_t *atn_encdec_target_ids(const atn_model *m, const char *text, int32_t *n, atn_error *err);

/* The run's worker, before the result is published (no other thread sees it yet): keeps the
 * target tokens as the views show them with an encoder-decoder's result r, and the statistics
 * of its decoder and cross-attention stacks (atn_result_get_stack_stats).  Nothing for other
 * results. */
void atn_encdec_attach(AtnResult *r);

/* TRUE when r is an encoder-decoder's run (its capture has stacks).  NULL: FALSE. */
gboolean atn_result_is_encdec(AtnResult *r);
/* Stack kind of r's capture (borrowed from the result), or NULL for any other result. */
const atn_stack *atn_result_get_stack(AtnResult *r, atn_stack_kind kind);
/* The labels of stack kind's query rows (keys FALSE) or key columns (keys TRUE): the source
 * tokens (atn_result_get_tokens) or the target's (decoder input) tokens.  Borrowed from r,
 * NULL-terminated; NULL for another result. */
const char *const *atn_result_get_stack_tokens(AtnResult *r, atn_stack_kind kind, gboolean keys);
/* Head (layer, head) of stack kind, [n_q][n_k] (*n_q, *n_k may be NULL), borrowed from r (valid
 * while r lives): an attention file opened lazily reads the head from its mapping on first use
 * and keeps it with r (memory for the heads shown).  NULL out of range, for another result, or
 * where the head cannot be read (a bad value in the file: atn_result_get_stack_error says why,
 * and r emits "head-failed" with that message, which the session shows as the window's error).
 * Main thread only. */
const float *atn_result_get_stack_head(AtnResult *r, atn_stack_kind kind, int layer, int head, int *n_q, int *n_k);
/* Why the last atn_result_get_stack_head of r gave NULL for a head in range (the file, the
 * tensor, the layer, head, query and key), borrowed; NULL when none failed. */
const char *atn_result_get_stack_error(AtnResult *r);
/* The selection's bounds in stack kind: layers, heads and query rows (the result's own for any
 * other result, whatever kind).  r not NULL; any pointer may be NULL. */
void atn_encdec_dims(AtnResult *r, int kind, int *layers, int *heads, int *n_q);

/* "Encoder self-attention", "Decoder self-attention", "Cross-attention" (translated). */
const char *atn_encdec_stack_title(atn_stack_kind kind);
/* The picker's short names: "Encoder self", "Decoder self", "Cross" (translated). */
const char *atn_encdec_stack_label(atn_stack_kind kind);

/* The Head view's heatmap for stack kind of r at (layer, head): the axis titles ("query" /
 * "key" for a self-attention stack, "target" / "source" for cross-attention) always; then, for
 * a decoder or cross head of an encoder-decoder, its [n_q][n_k] matrix with the target tokens
 * down and the source (cross) or target (decoder, causal) tokens across, and TRUE.  FALSE: the
 * caller shows the head as any other model's (the encoder stack is the capture's attention). */
gboolean atn_encdec_show_head(AtnHeatmap *h, AtnResult *r, int kind, int layer, int head);

/* The Head view's token lines (AtnTokenLines) for a decoder or cross head of r at (layer,
 * head): spec's attn[0] the stack's [n_q][n_k] head, the target's tokens on the left (n, tokens,
 * no mask) and the source's (cross: n_k, key_tokens, key_mask the source's mask) or the
 * target's (decoder) on the right, and TRUE; FALSE (spec untouched) for the encoder's stack or
 * another result, or a head out of range.  Borrowed from r.  Main thread. */
gboolean atn_encdec_lines_spec(AtnResult *r, int kind, int layer, int head, atn_headview_spec *spec);

/* The Model view's grid of stack kind of r: spec (filled for the capture's attention) made
 * that of a decoder or cross stack (n_q x n_k heads drawn from the stack, causal for the
 * decoder, no pattern labels: those are the encoder's) and TRUE; FALSE (spec untouched) for
 * the encoder's stack or another result. */
gboolean atn_encdec_grid_spec(AtnResult *r, int kind, atn_grid_spec *spec);

/* What the Similarity and Statistics views say of an encoder-decoder's heads of stack kind
 * (translated, static). */
const char *atn_encdec_heads_note(atn_stack_kind kind);

/* What the Statistics view adds for cross-attention: the columns that are not defined there
 * (translated, static). */
const char *atn_encdec_cross_undefined_note(void);

/* The statistics of stack kind of r (engine/analysis.h, atn_stats_compute_stack): the
 * result's own (atn_result_get_stats) for the encoder or any other result; the decoder's and
 * cross-attention's, made by atn_encdec_attach (cross: its positional figures NaN).  Borrowed
 * from r; NULL when there are none (yet).  Main thread. */
const atn_stats *atn_result_get_stack_stats(AtnResult *r, atn_stack_kind kind);

/* The stack the Similarity and Statistics views show for r: the session's (session_stack,
 * atn_session_get_stack) for an encoder-decoder's result, ATN_STACK_ENCODER for any other. */
int atn_encdec_view_stack(AtnResult *r, int session_stack);

/* Why a view that cannot show an encoder-decoder yet is off (translated; name: the view's
 * title, "Trace", "What-if" ...). A new string. */
char *atn_encdec_view_off_text(const char *name);

G_END_DECLS
