/* What atn-trace-view.h leaves out: functions only the tests (tests/ui/) call, to read back what
 * the widget shows or to drive it as a user would.  Included by the tests and by the .c
 * files that define them. */
#pragma once

#include "atn-trace-view.h"

G_BEGIN_DECLS

/* -1: every step shown alike; 0..ATN_TRACE_STEP_COUNT-1: that step highlighted. */
void atn_trace_view_set_step(AtnTraceView *self, int step);
int atn_trace_view_get_step(AtnTraceView *self);
/* Reveal mode (the Reveal button): the steps after the current one are hidden, and the
 * heatmap (the softmax's result) until step 6; turning it on at "All steps" starts at step 1. */
void atn_trace_view_set_reveal(AtnTraceView *self, gboolean reveal);
gboolean atn_trace_view_get_reveal(AtnTraceView *self);
/* Reset Numbers: a toy model's cells back to the numbers they had when the Trace view first
 * showed them, in every layer; the changed-cell marks (CSS class "changed") go. */
void atn_trace_view_reset_inputs(AtnTraceView *self);
/* The numbers of a step as shown, one table row per line, cells separated by tabs. */
char *atn_trace_view_dup_step_text(AtnTraceView *self, atn_trace_step step);
/* A step's formula and note as shown (their text without markup), a line each; NULL before
 * the step is built. */
char *atn_trace_view_dup_step_words(AtnTraceView *self, atn_trace_step step);
/* The editable cell of a toy model's matrix (X, W_Q ...), or NULL (not a toy model). */
GtkEditable *atn_trace_view_get_input_cell(AtnTraceView *self, atn_toy_matrix which, int row, int col);
/* TRUE when the heatmap's pane is inside the sheet, above the steps, rather than beside it (a
 * view too narrow for a useful side pane: under 240 px of it). */
gboolean atn_trace_view_get_stacked(AtnTraceView *self);
AtnHeatmap *atn_trace_view_get_heatmap(AtnTraceView *self);
/* The trace the view shows (its stack, layer, head, query and numbers), or NULL; borrowed,
 * valid until the next refresh. */
const atn_trace *atn_trace_view_get_trace(AtnTraceView *self);
/* The line over the sheet (which head, or why there is no trace).  Borrowed. */
const char *atn_trace_view_get_intro(AtnTraceView *self);
/* The key table's column widths the sheet is fitted with (px, at the 8-column plan: j and
 * token together in *fixed, the "…" column in *ell, the shown d_k columns in w[0..7]), and how
 * many texts were laid out with Pango for them since the view was made; for tests. */
guint atn_trace_view_get_key_widths(AtnTraceView *self, int *fixed, int *ell, int w[8]);
/* The keys row of a long trace (over 16 keys; issue 35): the "Show all n keys" check and the
 * top-k spin button (borrowed; both exist from the start, the row hidden at 16 keys or fewer). */
GtkCheckButton *atn_trace_view_get_all_keys(AtnTraceView *self);
/* The tables of the picture Export and Copy make (the trace sheet, ui/render), as
 * atn_render_trace_sheet_text gives them at the picture's natural width; NULL without a trace.
 * g_free. */
char *atn_trace_view_dup_figure_text(AtnTraceView *self);
GtkSpinButton *atn_trace_view_get_top_spin(AtnTraceView *self);

G_END_DECLS
