/* AtnResult: one finished run (its model, tokens and capture), immutable and shared by every
 * view.  The [MASK] guesses and the head statistics are computed with it, in the worker
 * thread that ran the model (on the main thread only for toy models, which run there). */
#pragma once

#include <gio/gio.h>

#include "analysis.h"
#include "atn-model-handle.h"
#include "attnscope.h"
#include "render.h"

G_BEGIN_DECLS

#define ATN_TYPE_RESULT (atn_result_get_type())
G_DECLARE_FINAL_TYPE(AtnResult, atn_result, ATN, RESULT, GObject)

/* Takes ownership of run and enc.  Computes the head statistics with the result only when
 * stats_now; else they are pending (atn_result_get_stats_pending) until atn_result_set_stats:
 * the session computes them in a worker after it has published the result, since the Head
 * view's heatmap does not need them (bert-base at 512 tokens: ~0.3 s of two cores, a fifth of
 * the forward). */
AtnResult *atn_result_new_full(AtnModelHandle *model, atn_run *run, atn_encoding *enc, double elapsed_ms,
                               gboolean stats_now);
/* A result of an attention file (atn_model_handle_new_attention) from cap, the file's
 * capture (atn_attn_file_capture, or atn_attn_file_capture_lazy: then nothing is read here,
 * the statistics and thumbnails are made by atn_result_compute_stats and given with
 * atn_result_set_stats, and a head that cannot be read is said by "head-failed"): the file's
 * attention and tokens, no run, no guesses (get_mask_guesses and get_next_guesses NULL),
 * causal as the file says.  Any thread, like new_full. */
AtnResult *atn_result_new_attention(AtnModelHandle *file, const atn_capture *cap, double elapsed_ms,
                                    gboolean stats_now);
/* The handle of the model that ran, or of the attention file (atn_result_has_weights FALSE). */
AtnModelHandle *atn_result_get_model(AtnResult *self);
/* FALSE for an attention file's result: what needs the model (what-if, predictions, the
 * trace) is off. */
gboolean atn_result_has_weights(AtnResult *self);
/* Whether the trace can follow this result: a model's run, or an attention file that holds
 * q, k and v (atn_attn_file_trace). */
gboolean atn_result_can_trace(AtnResult *self);
/* The trace of (layer, head, query): atn_trace_compute for a model's run, atn_attn_file_trace
 * for an attention file (its errors: ATN_E_UNSUPPORTED without q/k/v, with the reason).  *out
 * is the caller's (atn_trace_free).  The main thread (an attention file's layers are read
 * through its object, one thread at a time). */
atn_status atn_result_trace(AtnResult *self, int layer, int head, int query, atn_trace **out, atn_error *err);
/* The same for a head of stack `stack` (atn_trace_compute_stack): an encoder-decoder's decoder
 * or cross head, layer counting the decoder's layers and query the target's tokens.  A result
 * without stacks accepts only ATN_STACK_ENCODER (ATN_E_INVALID naming the stack otherwise). */
atn_status atn_result_trace_stack(AtnResult *self, atn_stack_kind stack, int layer, int head, int query,
                                  atn_trace **out, atn_error *err);
const atn_capture *atn_result_get_capture(AtnResult *self);
const atn_encoding *atn_result_get_encoding(AtnResult *self);
int atn_result_get_n_tokens(AtnResult *self);
int atn_result_get_n_layers(AtnResult *self);
int atn_result_get_n_heads(AtnResult *self);
/* One head's [n][n] probabilities (borrowed; NULL when out of range or out of memory).  A
 * capture with heads on demand (attn_on_demand: the run's full capture did not fit the
 * memory budget) makes the head here, on the calling thread (bert-base 512 tokens: ~10 ms),
 * and keeps the last 8 made: the pointer stays valid until 8 other heads have been asked
 * for.  The main thread only; a worker reads heads with atn_result_read_head. */
const float *atn_result_get_head(AtnResult *self, int layer, int head);
/* The same into the caller's scratch [n][n] (atn_capture_head_read: a full capture's head is
 * returned in place, scratch untouched), for any thread; NULL when out of range. */
const float *atn_result_read_head(AtnResult *self, int layer, int head, float *scratch);
/* The tokens as every view shows them (atn_render_token_label: "␣the" for GPT-2's
 * "\u0120the"), NULL-terminated (borrowed); the raw texts are in atn_result_get_encoding. */
const char *const *atn_result_get_tokens(AtnResult *self);
const int32_t *atn_result_get_mask(AtnResult *self);
double atn_result_get_elapsed_ms(AtnResult *self);
/* Where the worker's time went after the run, for the GUI harness (ui/atn-gui-bench.c): the
 * [MASK] guesses and statistics made in atn_result_new_full (0 when the statistics were left
 * pending), the statistics made later by atn_result_compute_stats (0 until set), the
 * thumbnails, their colouring (atn_session's run job), and when the worker handed the result
 * over (g_get_monotonic_time, µs; 0 until atn_result_set_worker_done).  Any of the out
 * pointers may be NULL. */
void atn_result_get_worker_times(AtnResult *self, double *stats_ms, double *late_stats_ms, double *thumbs_ms,
                                 double *colour_ms, gint64 *done_us);
/* The worker, once the result is complete: the time it spent colouring thumbnails. */
void atn_result_set_worker_done(AtnResult *self, double colour_ms);
/* The main thread, as the result arrives (before the session publishes it): when, in
 * g_get_monotonic_time µs, and the main thread's CPU time then (CLOCK_THREAD_CPUTIME_ID, µs). */
void atn_result_mark_received(AtnResult *self);
void atn_result_get_received(AtnResult *self, gint64 *received_us, gint64 *received_cpu_us);

/* The masked-LM head's guesses for each [MASK] token, computed with the run (in the worker
 * thread) when the model has the head: up to ATN_RESULT_TOP_GUESSES words, most likely first. */
enum { ATN_RESULT_TOP_GUESSES = 5 };
typedef struct AtnMaskGuesses {
    int position;                                       /* the [MASK] token's index */
    int n;                                              /* guesses filled */
    atn_prediction top[ATN_RESULT_TOP_GUESSES];         /* token strings borrowed from the model */
} AtnMaskGuesses;
int atn_result_get_n_masks(AtnResult *self);            /* [MASK] tokens in the input */
/* The i-th [MASK]'s guesses, or NULL when the model has no masked-LM head (or i is out of
 * range). */
const AtnMaskGuesses *atn_result_get_mask_guesses(AtnResult *self, int i);
/* A causal model's run (GPT-2): future cells are masked by construction (views draw them
 * as masked), and instead of [MASK] guesses it has next-token guesses. */
gboolean atn_result_is_causal(AtnResult *self);
/* A sentence pair: the first token of the second sentence (the first of type id 1, else of
 * segment 1), where views draw the A/B boundary; 0 for one sentence (or no result). */
int atn_result_get_split(AtnResult *self);
/* The last real (unpadded) token: where the next-token guesses after the text start. */
int atn_result_get_last_position(AtnResult *self);
/* A causal model's next-token guesses after the token at position (up to
 * ATN_RESULT_TOP_GUESSES, most likely first, in an AtnMaskGuesses whose position is that
 * token), or NULL for a model that is not causal or a position out of range.  An
 * encoder-decoder's: the decoder's guesses after target (decoder input) position, 0 ..
 * n_tgt - 1 (atn_predict_next).  The last token's are computed with the run (in the worker);
 * another position's on first request, on the calling thread (the main thread: views only),
 * then kept. */
const AtnMaskGuesses *atn_result_get_next_guesses(AtnResult *self, int position);
/* The head statistics of this sentence (engine/analysis.h: atn_stats_compute), computed once
 * per result (by atn_result_new_full with stats_now, else by atn_result_compute_stats and
 * handed over with atn_result_set_stats): every view reads these, none computes its own.
 * Borrowed, alive as long as the result; NULL while pending or when they could not be
 * computed (atn_result_get_stats_error says why). */
const atn_stats *atn_result_get_stats(AtnResult *self);
const char *atn_result_get_stats_error(AtnResult *self);
/* TRUE while the statistics are still to come (new_full without stats_now): get_stats and
 * get_stats_error are then NULL.  compute: any thread, the statistics of the result's capture
 * (atn_stats_compute_progress; NULL with *error set when cancelled through cancellable or when
 * they cannot be computed); set: the main thread, once, takes st (or NULL with the reason)
 * and ends the pending state. */
gboolean atn_result_get_stats_pending(AtnResult *self);
atn_stats *atn_result_compute_stats(AtnResult *self, GCancellable *cancellable, GError **error);
void atn_result_set_stats(AtnResult *self, atn_stats *st, const char *error);

/* The Model view's thumbnails, made once per result in the worker (atn_result_new_full), so that
 * no view reads all L·H·n² probabilities on the main thread: each head reduced to side x side
 * cells, side = MIN(n, ATN_RESULT_THUMB_MAX); reduced cell (r, c) is the largest finite
 * probability of the queries i and keys j with floor(i·side/n) = r and floor(j·side/n) = c
 * (NaN when there is none), so a one-cell-wide pattern stays visible.  For n <= ATN_RESULT_THUMB_MAX the
 * values are the capture's own.  [L·H][side][side], owned by the result. */
#define ATN_RESULT_THUMB_MAX 128
/* The thumbnails coloured for the Model view: one colour map and scale (each head its own
 * range, or one range shared by every head, as atn_value_range_resolve gives them from the
 * head ranges above), [L·H][side][side] pixels in ui/render's format (cairo ARGB32, opaque:
 * atn_render_matrix_pixels of the thumbnail values), rows of side·4 bytes.  Immutable once
 * made and refcounted, so any thread may read them while the result lives and the main thread
 * only wraps them in image surfaces (no colouring there). */
typedef struct AtnThumbPixels AtnThumbPixels;
AtnThumbPixels *atn_thumb_pixels_ref(AtnThumbPixels *pix);
void atn_thumb_pixels_unref(AtnThumbPixels *pix);   /* NULL: nothing */
G_DEFINE_AUTOPTR_CLEANUP_FUNC(AtnThumbPixels, atn_thumb_pixels_unref)
atn_colormap atn_thumb_pixels_get_colormap(const AtnThumbPixels *pix);
gboolean atn_thumb_pixels_get_shared_range(const AtnThumbPixels *pix, double *vmin, double *vmax);
int atn_thumb_pixels_get_side(const AtnThumbPixels *pix);
int atn_thumb_pixels_get_count(const AtnThumbPixels *pix);   /* L·H */
/* Head c's (c = layer·H + head) first pixel row, of atn_thumb_pixels_get_side() rows
 * side·4 bytes apart; NULL out of range.  Borrowed from pix. */
guint8 *atn_thumb_pixels_get_head(AtnThumbPixels *pix, int c);
/* Colours the thumbnails in (cm, shared_range) on the calling thread (any thread: the run's
 * worker does it for the session's style, atn_session_set_thumb_style) and keeps them with
 * the result (its last two styles), or returns the kept ones of that style without colouring.
 * A new reference; NULL without attention in the capture, when out of memory, or when
 * cancellable was cancelled before the colouring finished (nothing kept then). */
AtnThumbPixels *atn_result_color_thumbs(AtnResult *self, atn_colormap cm, gboolean shared_range,
                                        GCancellable *cancellable);
/* The kept pixels of that style (a new reference), or NULL: never colours.  With
 * any_style, the most recently kept of any style when that one is not there. */
AtnThumbPixels *atn_result_dup_thumb_pixels(AtnResult *self, atn_colormap cm, gboolean shared_range,
                                            gboolean any_style);
/* Thumbnail cells coloured by atn_result_color_thumbs in this process, on any thread (tests). */
atn_device atn_result_get_device(AtnResult *self);
/* Why the GPU failed when this run was asked of it and went to the CPU instead, or NULL. */
const char *atn_result_get_gpu_failure(AtnResult *self);
void atn_result_set_gpu_failure(AtnResult *self, const char *why);

G_END_DECLS
