/* AtnPrecisionDialog: what half precision does to the current sentence.  Runs it in fp32 and in
 * bf16 or fp16 (engine: atn_run_options.precision) on a worker thread and shows the layers x
 * heads map of max |p - p_fp32| (an AtnHeatmap), the head that moves most, the hidden-state
 * drift and the [MASK] guesses that changed.  The command-line twin is
 * `attnscope run --precision bf16 --compare-fp32`. */
#pragma once

#include <gtk/gtk.h>

#include "atn-session.h"

G_BEGIN_DECLS

#define ATN_TYPE_PRECISION_DIALOG (atn_precision_dialog_get_type())
G_DECLARE_FINAL_TYPE(AtnPrecisionDialog, atn_precision_dialog, ATN, PRECISION_DIALOG, GtkWindow)

/* For the session's current result (nothing to show without one); precision BF16 or FP16
 * (anything else: BF16). */
GtkWidget *atn_precision_dialog_new(GtkWindow *parent, AtnSession *session, atn_precision precision);

G_END_DECLS
