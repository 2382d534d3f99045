/* AtnWhatifView: the What-if page — the what-if lab in the window.
 *
 * Left, the changes (each one the command line's what-if option of the same name): heads
 * switched off (click a head in the map; zero its output or make it uniform; keep only the
 * chosen heads; in every layer), masks (causal, sliding window with Longformer's global
 * tokens, strided, hidden keys: click the token chips), positions (ALiBi, no position
 * embeddings, shuffled order with a seed) and the softmax temperature.  They go to the
 * session (atn_session_set_whatif), so every view shows the changed run.
 *
 * Right, the effect: the original model is run on the same tokens in a worker thread and
 * compared with the changed run (atn_capture_diff_compute, as `attnscope diff`): per-head
 * change (JS distance or largest |Δ|) as a layers x heads map, the selected head's two
 * heatmaps and their difference, the hidden-state drift per layer, and the guesses before
 * and after ([MASK] or next token) with the probability of the original word.  Below, the
 * long-sequence cost at this length: cells and bytes of the maps, and what the dense,
 * causal, sliding-window, Longformer and strided variants (and the chosen mask) keep. */
#pragma once

#include <gtk/gtk.h>

#include "analysis.h"
#include "atn-heatmap.h"
#include "atn-session.h"
#include "render.h"

G_BEGIN_DECLS

#define ATN_TYPE_WHATIF_VIEW (atn_whatif_view_get_type())
G_DECLARE_FINAL_TYPE(AtnWhatifView, atn_whatif_view, ATN, WHATIF_VIEW, GtkWidget)

GtkWidget *atn_whatif_view_new(void);

/* The layers x heads map (clicking a cell switches that head off or on again, and selects it). */
AtnHeatmap *atn_whatif_view_get_map(AtnWhatifView *self);
/* The selected head before (0), after (1) and after - before (2). */
AtnHeatmap *atn_whatif_view_get_pair(AtnWhatifView *self, int which);
/* A control by name, for tests and shortcuts: "head-mode" (GtkDropDown), "keep-only",
 * "every-layer", "causal", "window", "strided", "alibi", "no-positions", "shuffle" (check
 * buttons), "window-width", "strided-step", "seed", "temperature" (spin buttons), "metric"
 * (GtkDropDown: JS distance, largest |Δ|), "reset" (GtkButton), "global-chips",
 * "hide-chips" (GtkFlowBox of GtkToggleButtons, one per token), "mask-layers" (GtkEntry: the
 * layers the masks apply in, "0,2-3"; empty: every layer); NULL for another name. */
GtkWidget *atn_whatif_view_get_control(AtnWhatifView *self, const char *name);
/* Switches head (layer, head) off, or on again (as a click on its cell does). */
void atn_whatif_view_toggle_head(AtnWhatifView *self, int layer, int head);

/* The comparison of the current result with the original model, or NULL while it is being
 * computed or when nothing is changed.  Borrowed until the next result. */
const atn_capture_diff *atn_whatif_view_get_diff(AtnWhatifView *self);
/* The original model's capture on the same tokens (borrowed like the diff), or NULL. */
const atn_capture *atn_whatif_view_get_original(AtnWhatifView *self);
gboolean atn_whatif_view_get_busy(AtnWhatifView *self);

/* The long-sequence cost chart's rows (ui/render's atn_cost_variants for the result's length,
 * with the window, global tokens, stride and mask chosen on the page): *count of them, rows[0]
 * dense; NULL (0) without a result.  Borrowed until the next result or change.  And the
 * drawing area that draws them. */
const atn_cost_row *atn_whatif_view_get_cost(AtnWhatifView *self, int *count);
GtkWidget *atn_whatif_view_get_cost_area(AtnWhatifView *self);

/* The guesses compared: at each [MASK] (the original word: the original model's first guess),
 * at every word when there is none (the token itself), or after the last token of a causal
 * model (the original model's first guess). */
typedef struct AtnWhatifGuess {
    int position;
    int original_id;
    double p_before, p_after;   /* the original word's probability */
    char *before, *after;       /* the first guesses, "cat 0.41, dog 0.12, …" */
} AtnWhatifGuess;
int atn_whatif_view_get_n_guesses(AtnWhatifView *self);
const AtnWhatifGuess *atn_whatif_view_get_guess(AtnWhatifView *self, int i);

/* Whether head (layer, head) is chosen on the page (switched off, or kept with keep-only):
 * set by its map and by the session's changes from elsewhere (the Model view's menu). */
gboolean atn_whatif_view_get_head_chosen(AtnWhatifView *self, int layer, int head);

G_END_DECLS
