/* What atn-train-view.h leaves out: functions only the tests (tests/ui/) call, to drive the
 * Train page as a user would and read back what it shows. */
#pragma once

#include "atn-train-view.h"

G_BEGIN_DECLS

/* One of the page's controls by name ("preset", "task", "objective", "layers", "heads",
 * "d-model", "positions", "attention", "window", "norm", "init", "init-std", "dropout-attn", "dropout-hidden", "length", "symbols", "text-file", "optim", "lr",
 * "warmup", "clip", "batch", "steps", "seed", "every", "start", "pause", "step", "stop", "open",
 * "status", "curve", "grad-norms", "save-csv", "save-figure", "experiments", "heads-map"), or NULL. */
GtkWidget *atn_train_view_get_control(AtnTrainView *self, const char *name);
/* The run: TRUE while a worker trains. */
gboolean atn_train_view_get_running(AtnTrainView *self);
/* Steps done and the points recorded so far (the first and the last loss and accuracy,
 * each the mean over the first / last `window` steps); FALSE before any step. */
gboolean atn_train_view_get_progress(AtnTrainView *self, int window, int *steps, float *first_loss,
                                     float *last_loss, float *last_accuracy);
/* The best induction score among the heads on the probe at the last redraw (0 before one). */
float atn_train_view_get_best_induction(AtnTrainView *self);
/* The shape of each head's map at the last redraw: rows (tokens) and columns (keys: the
 * tokens, or Linformer's projected keys); FALSE before one. */
gboolean atn_train_view_get_map_shape(AtnTrainView *self, int *rows, int *cols);
/* Where "Open in attnscope" saved the model last (NULL before), and whether it is saving. */
const char *atn_train_view_get_saved_dir(AtnTrainView *self);
gboolean atn_train_view_get_saving(AtnTrainView *self);
/* The text task's file, as choosing it in the page's file chooser does. */
void atn_train_view_set_text_file(AtnTrainView *self, const char *path);
/* What "Save CSV…" writes (g_free), NULL before the first step. */
char *atn_train_view_dup_curves_csv(AtnTrainView *self);
/* The step of the heads' maps shown (0 before the first redraw). */
int atn_train_view_get_map_step(AtnTrainView *self);
/* TRUE while the run's worker sits paused between steps (after Pause, and after each Step). */
gboolean atn_train_view_get_waiting(AtnTrainView *self);
/* The Experiments window (an AtnTrainExp, atn-train-exp.h) once "Experiments…" opened it, else
 * NULL. */
GtkWidget *atn_train_view_get_experiments(AtnTrainView *self);
/* Training workers alive in this process (any page): 0 once a cancelled run has stopped. */
int atn_train_view_get_live_workers(void);

G_END_DECLS
