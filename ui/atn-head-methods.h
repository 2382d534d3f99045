/* AtnHeadMethods: the Head view's "Raw / Norm / Rollout / Flow" switch (issue #40, beyond raw
 * attention).  It owns a small row of widgets (a drop-down, and while the flow is computed a
 * progress bar and a Stop button) and, when a method other than Raw is chosen, replaces the
 * matrix the Head view's heatmap shows with the method's, so the hover, the tooltip, the
 * Export and the colour bar all read the method's numbers:
 *   Norm     ||alpha f(x)|| of the selected layer and head (atn_norm_attention_compute);
 *   Norm Σ   the same of the layer's heads summed before the norm (head -1);
 *   Rollout  the model's rollout through layers 0..the selected layer (atn_rollout_compute);
 *   Flow     the model's attention flow through layers 0..the selected layer
 *            (atn_flow_compute: slow, so off the main thread, with progress and Stop).
 * Every method is computed in an atn_worker thread and kept for the last (result, layer,
 * head) asked; a result without weights (an attention file) or of a family norm-based
 * attention does not read offers Norm greyed out with the reason in its tooltip.
 * Main thread only. */
#pragma once

#include <gtk/gtk.h>

#include "atn-heatmap.h"
#include "atn-session.h"

G_BEGIN_DECLS

typedef enum {
    ATN_HEAD_METHOD_RAW = 0,
    ATN_HEAD_METHOD_NORM,
    ATN_HEAD_METHOD_ROLLOUT,
    ATN_HEAD_METHOD_FLOW,
    ATN_HEAD_METHOD_NORM_LAYER,   /* ||sum_h alpha^h f_h(x)|| of the selected layer (head -1) */
} AtnHeadMethod;

#define ATN_TYPE_HEAD_METHODS (atn_head_methods_get_type())
G_DECLARE_FINAL_TYPE(AtnHeadMethods, atn_head_methods, ATN, HEAD_METHODS, GObject)

/* For heatmap (borrowed: it must outlive the object, as the Head view's child does).  The
 * object emits "changed" when the method or its matrix changes: the Head view then draws
 * its raw head again and calls atn_head_methods_apply. */
AtnHeadMethods *atn_head_methods_new(AtnHeatmap *heatmap);
/* The row of widgets to put among the Head view's controls (owned by the object's caller's
 * widget tree once added). */
GtkWidget *atn_head_methods_get_widget(AtnHeadMethods *self);
void atn_head_methods_set_session(AtnHeadMethods *self, AtnSession *session);
void atn_head_methods_set_method(AtnHeadMethods *self, AtnHeadMethod method);
AtnHeadMethod atn_head_methods_get_method(AtnHeadMethods *self);
/* After the Head view has set the raw head: with a method other than Raw, puts the method's
 * matrix, title, axes and scale on the heatmap (or an empty heatmap and "computing…" while it
 * is being computed, starting the work if needed).  TRUE when it replaced the raw head. */
gboolean atn_head_methods_apply(AtnHeadMethods *self);
/* With a method other than Raw, a line saying what the heatmap now shows (for the Head view's
 * "This head" line, which otherwise describes the raw head), and a shorter one in *shorter (may
 * be NULL) for a narrow line; NULL with Raw.  Static, translated. */
const char *atn_head_methods_get_summary(AtnHeadMethods *self, const char **shorter);
/* A name for exported files: "head-L1-H2", "norm-L1-H2", "norm-sum-L1", "rollout-L0-3", "flow-L0-3"
 * (g_free). */
char *atn_head_methods_dup_figure_name(AtnHeadMethods *self, int layer, int head);
/* For tests: the matrix shown (n x n, borrowed, NULL while computing or with Raw), and
 * whether work is in flight. */
const float *atn_head_methods_get_values(AtnHeadMethods *self, int *n);
gboolean atn_head_methods_is_busy(AtnHeadMethods *self);

G_END_DECLS
