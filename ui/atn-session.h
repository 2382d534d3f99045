/* AtnSession: what the window is looking at — the open model, the sentence, the latest run's
 * result and the selected layer / head / query token — and the machinery that keeps the
 * result up to date without blocking the main loop:
 *
 *  - models open in a worker thread (GTask); a failure leaves the previous model in place and
 *    is reported through the "error" signal;
 *  - a change after a pause runs at once; changes in a burst are debounced (60 ms, or the last
 *    run's time when shorter); runs happen in a worker thread; a newer request cancels
 *    the run in flight (the engine's progress callback sees the GCancellable) and only the
 *    newest text's result is kept;
 *  - toy models (a few numbers) run synchronously on the main thread, so editing one of their
 *    cells updates every view before the next frame.
 *
 * Views observe the properties (notify::result, notify::layer ...) and never run the model. */
#pragma once

#include <gio/gio.h>

#include "atn-model-handle.h"
#include "atn-result.h"

G_BEGIN_DECLS

#define ATN_TYPE_SESSION (atn_session_get_type())
G_DECLARE_FINAL_TYPE(AtnSession, atn_session, ATN, SESSION, GObject)

AtnSession *atn_session_new(void);

/* Opens a model (built-in name, toy JSON or Hugging Face folder) in a worker thread.  On
 * failure "error" is emitted and the current model stays. */
void atn_session_open_model(AtnSession *self, const char *source);
/* Opens an attention file (engine/include/attention-file.h: attention computed elsewhere,
 * no weights) in a worker thread: the header, then every layer read and checked through the
 * file's mapping, the statistics and thumbnails.  It then shows as the model (a handle with
 * atn_model_handle_has_weights FALSE) with its one result; the text is not run.  On failure
 * "error" names the file and the tensor or key (as the command line does) and the current
 * model stays.  (ui/atn-session-attention.c) */
void atn_session_open_attention(AtnSession *self, const char *path);
/* Toy models with edits not saved to a file: the one shown and those switched away from
 * (opening the same source again brings those back, edits and all).  A new array of refs. */
GPtrArray *atn_session_dup_unsaved_toys(AtnSession *self);
/* Opens the first of preferred, "demo", "worked-example" that opens. */
void atn_session_open_default(AtnSession *self, const char *preferred);
/* Uses a model opened elsewhere (benchmarks); runs it. */
void atn_session_set_model(AtnSession *self, AtnModelHandle *model);
AtnModelHandle *atn_session_get_model(AtnSession *self);
/* The source of the model being opened, or NULL. */
const char *atn_session_get_opening(AtnSession *self);
/* How far the open has come (0..1) and what it is doing ("converting weights", translated),
 * updated about ten times a second while it lasts ("notify::open-fraction"). */
double atn_session_get_open_fraction(AtnSession *self);
/* How far the run in flight is (layers done / layers, 0..1), read from the worker about ten
 * times a second while it lasts ("notify::run-fraction"); -1 when no run is in flight. */
double atn_session_get_run_fraction(AtnSession *self);
/* Worker threads that run the model call this first: the calling thread's nice value
 * becomes atn_session_get_worker_nice() (if lower), so the main thread (typing, drawing)
 * takes a core from the forward at once; threads it starts inherit it.  Any thread. */
void atn_session_lower_thread_priority(void);
/* The other model-running workers (the What-if comparison "whatif", the Half Precision
 * window's runs "precision", the corpus pass "corpus") call this instead: it lowers the
 * calling thread's priority as above and records its nice value under WORKER (a static
 * string), which atn_session_get_worker_nice_of() returns (G_MININT for a worker that has not
 * run).  Any thread. */
void atn_session_lower_worker_priority(const char *worker);
const char *atn_session_get_open_stage(AtnSession *self);
/* Stops the open in progress: the current model stays (the demo model opens when there is
 * none) and "notice" says so. */
void atn_session_cancel_open(AtnSession *self);

/* Sets the sentence (and the optional second one; NULL or "" for none) and schedules a run
 * after the debounce delay.  Toy models ignore the text: they carry their own tokens. */
void atn_session_set_text(AtnSession *self, const char *text, const char *text_pair);
const char *atn_session_get_text(AtnSession *self);
/* An encoder-decoder's target text (T5, BART, Marian: the decoder's input, teacher-forced as
 * the command line's --target makes it, atn_encdec_target_ids; NULL or "": the decoder start
 * token alone).  Debounced like the text; other models ignore it. */
void atn_session_set_target(AtnSession *self, const char *target);
const char *atn_session_get_target(AtnSession *self);
/* Which of an encoder-decoder's stacks the Head and Model views show (an atn_stack_kind:
 * ATN_STACK_ENCODER, the default, _DECODER or _CROSS; "notify::stack").  The layer, head
 * and query are that stack's: they are clamped to its layers and query rows.  Kept when the
 * model changes; meaningless (and the capture's attention shown) for any other model. */
void atn_session_set_stack(AtnSession *self, int stack);
int atn_session_get_stack(AtnSession *self);
const char *atn_session_get_text_pair(AtnSession *self);
/* Token ids instead of text (for models without a tokenizer, such as the benchmark's random
 * BERT): used while set; NULL goes back to the text.  Debounced like the text. */
void atn_session_set_ids(AtnSession *self, const int32_t *ids, int n);
/* The what-if lab's changes (ui/atn-whatif.h; NULL: the original model): every run from now
 * on gets them (atn_run_options' interventions, as the command line's what-if options), and
 * its result carries them (atn_whatif_of_result).  Runs at once; emits "whatif-changed"
 * first when they are other than before (the one source the What-if page and the Model
 * view's head menu both read and replace). */
typedef struct AtnWhatif AtnWhatif;
void atn_session_set_whatif(AtnSession *self, AtnWhatif *whatif);
AtnWhatif *atn_session_get_whatif(AtnSession *self);
/* The colour map and scale the Model view shows its thumbnails in (its AtnView colour map,
 * its "same scale for every head" check): each run's worker colours the result's thumbnails
 * in them after the forward (atn_result_color_thumbs), so that showing the view colours
 * nothing on the main thread.  Until it is set, runs colour none.  Takes effect from the next
 * run; a result that has them in another style is recoloured by the view, in a worker. */
void atn_session_set_thumb_style(AtnSession *self, atn_colormap cm, gboolean shared_range);
/* Runs now (skipping the debounce): toy models before returning, others in the worker. */
void atn_session_rerun(AtnSession *self);
/* The toy model shown back to its numbers as opened (atn_model_handle_revert_toy), and run
 * again at once.  FALSE when the model shown is not a toy model.  (Choosing the toy model
 * shown again keeps it as it is, edits and all.) */
gboolean atn_session_revert_toy(AtnSession *self);
/* The debounce delay in ms (default 60; tests and benchmarks may set 0).  The delay used
 * (atn_session_get_effective_debounce_ms, for the next change) is none for a change after a
 * pause with no run in flight, else the smaller of this and the time the latest run took (a
 * model that runs in 1 ms gets no pause). */
void atn_session_set_debounce_ms(AtnSession *self, guint ms);
guint atn_session_get_effective_debounce_ms(AtnSession *self);

AtnResult *atn_session_get_result(AtnSession *self);
/* What to tell about the latest result (the text was truncated, NaN appeared), or NULL. */
const char *atn_session_get_run_notice(AtnSession *self);
gboolean atn_session_get_busy(AtnSession *self);
/* TRUE while the shown result's head statistics are still being computed (they follow the
 * result: signal "stats-ready"). */
gboolean atn_session_get_analysing(AtnSession *self);

int atn_session_get_layer(AtnSession *self);
void atn_session_set_layer(AtnSession *self, int layer);
int atn_session_get_head(AtnSession *self);
void atn_session_set_head(AtnSession *self, int head);
/* Selects layer and head at once (one notify each, layer first). */
void atn_session_select_head(AtnSession *self, int layer, int head);
/* Moves the selection by dlayer layers and dhead heads, stopping at the first and last
 * (Alt+arrows, the Head view's arrow keys); nothing without a result. */
void atn_session_step_head(AtnSession *self, int dlayer, int dhead);
int atn_session_get_query(AtnSession *self);
void atn_session_set_query(AtnSession *self, int query);
/* The token under the pointer in any view, or -1: every view highlights it. */
int atn_session_get_hover_token(AtnSession *self);
void atn_session_set_hover_token(AtnSession *self, int token);

atn_device atn_session_get_device(AtnSession *self);
void atn_session_set_device(AtnSession *self, atn_device device);
/* The arithmetic of the session's runs (default FP32; BF16 / FP16 as atn_precision says);
 * a change reruns the current text. */
void atn_session_set_precision(AtnSession *self, atn_precision precision);
/* Whether a GPU can run the model (probed once in a worker thread); when not, why. */
gboolean atn_session_get_gpu_available(AtnSession *self);
const char *atn_session_get_gpu_reason(AtnSession *self);

/* The number of runs finished (tests wait for it to change). */
guint atn_session_get_n_runs(AtnSession *self);

G_END_DECLS
