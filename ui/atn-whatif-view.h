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

/* The guesses compared: at each [MASK] (the original word: the original model's first guess),
 * at every word when there is none (the token itself), or after the last token of a causal
 * model (the original model's first guess). */
typedef struct AtnWhatifGuess {
    int position;
    int original_id;
    double p_before, p_after;   /* the original word's probability */
    char *before, *after;       /* the first guesses, "cat 0.41, dog 0.12, …" */
} AtnWhatifGuess;

G_END_DECLS
