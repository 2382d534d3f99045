/* AtnTrainView: the Train page — the training lab (engine/include/train.h) in the window.
 *
 * Left, the knobs: a preset (the induction-head recipe among them), the task, the model
 * (objective, layers, heads, d_model, positions, attention, LayerNorm placement), the
 * optimiser (AdamW or SGD, learning rate, warm-up, clipping, batch, steps, seed) and how
 * often the attention is redrawn; Start, Pause / Resume, Stop and "Open in attnscope".
 * Right, while it trains: the loss and accuracy curves and every head's attention on one
 * fixed probe sequence of the task (with each head's induction score), redrawn as it learns.
 *
 * The training runs in an atn_worker thread (nice 10, "train"); the worker writes what it
 * measured under a mutex and the main thread redraws from it every 100 ms, so the window
 * stays responsive.  Stop ends the run keeping the model; removing the page from its window
 * (closing it) cancels the run, which frees its model at its next step.  "Open in attnscope"
 * saves the trained model as a Hugging Face folder (atn_trainer_save, in a worker) under
 * $XDG_DATA_HOME/attnscope/trained/ and opens it in the session, then shows the Head view. */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define ATN_TYPE_TRAIN_VIEW (atn_train_view_get_type())
G_DECLARE_FINAL_TYPE(AtnTrainView, atn_train_view, ATN, TRAIN_VIEW, GtkWidget)

GtkWidget *atn_train_view_new(void);

G_END_DECLS
