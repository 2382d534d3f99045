/* AtnTraceView: the Trace page — the arithmetic of the selected layer / head / query token
 * laid out like the worked example: each step (QKᵀ → ÷√d_k → mask → softmax → ×V → concat
 * → W_O) with its formula and a small table of numbers.  Step buttons walk through it and
 * mark the heatmap cells each step uses.  For toy models the input vectors and the weight
 * matrices are editable cells; every number updates as you type. */
#pragma once

#include <gtk/gtk.h>

#include "atn-heatmap.h"
#include "atn-session.h"
#include "render.h"

G_BEGIN_DECLS

#define ATN_TYPE_TRACE_VIEW (atn_trace_view_get_type())
G_DECLARE_FINAL_TYPE(AtnTraceView, atn_trace_view, ATN, TRACE_VIEW, GtkWidget)

GtkWidget *atn_trace_view_new(void);
void atn_trace_view_set_session(AtnTraceView *self, AtnSession *session);
void atn_trace_view_set_colormap(AtnTraceView *self, atn_colormap cm);
void atn_trace_view_set_font_scale(AtnTraceView *self, double scale);
/* Recomputes now if anything changed (it does so by itself when shown). */
void atn_trace_view_refresh(AtnTraceView *self);

/* The trace as Markdown with LaTeX maths; NULL with error when there is none. */
char *atn_trace_view_dup_markdown(AtnTraceView *self, GError **error);

/* The box of one step (title, formula, table, note), or NULL before a trace; borrowed.  Check
 * my work (atn-check-work.c) marks the first step where a student's numbers differ on it. */
GtkWidget *atn_trace_view_get_step_widget(AtnTraceView *self, atn_trace_step step);

G_END_DECLS
