/* What atn-whatif-view.h leaves out: functions only the tests (tests/ui/) call, to read back what
 * the widget shows or to drive it as a user would.  Included by the tests and by the .c
 * files that define them. */
#pragma once

#include "atn-whatif-view.h"

G_BEGIN_DECLS

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
/* The status line's text (what the page is doing, or why it is off).  Borrowed. */
const char *atn_whatif_view_get_status(AtnWhatifView *self);

/* The long-sequence cost chart's rows (ui/render's atn_cost_variants for the result's length,
 * with the window, global tokens, stride and mask chosen on the page): *count of them, rows[0]
 * dense; NULL (0) without a result.  Borrowed until the next result or change.  And the
 * drawing area that draws them. */
const atn_cost_row *atn_whatif_view_get_cost(AtnWhatifView *self, int *count);
GtkWidget *atn_whatif_view_get_cost_area(AtnWhatifView *self);

int atn_whatif_view_get_n_guesses(AtnWhatifView *self);
const AtnWhatifGuess *atn_whatif_view_get_guess(AtnWhatifView *self, int i);

/* Whether head (layer, head) is chosen on the page (switched off, or kept with keep-only):
 * set by its map and by the session's changes from elsewhere (the Model view's menu). */
gboolean atn_whatif_view_get_head_chosen(AtnWhatifView *self, int layer, int head);

G_END_DECLS
