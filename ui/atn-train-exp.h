/* The Train page's Experiments window (ui/atn-train-exp.c): the three experiments of
 * `attnscope train` at one button each: a sweep over one knob with several seeds (--sweep
 * KNOB=V1,V2,... --seeds N), train short / test long per position scheme (--test-lengths),
 * and Post-LN vs Pre-LN gradient norms per layer by depth (--grad-depths).  It does not run
 * the experiments itself: it runs the command (this program, or $ATTNSCOPE_EXE), whose code
 * trains the models and draws the figure, with the page's settings as options; it counts the
 * models finished from the command's per-model lines, cancels it as Ctrl-C does (SIGINT: the
 * finished models' results are kept), and shows the figure and the table it wrote.  Save
 * Figure… copies the figure in the format chosen (the command writes PNG, SVG and PDF), Save
 * CSV… the command's --log.  Main thread only. */
#pragma once

#include <gtk/gtk.h>

#include "train.h"

G_BEGIN_DECLS

#define ATN_TYPE_TRAIN_EXP (atn_train_exp_get_type())
G_DECLARE_FINAL_TYPE(AtnTrainExp, atn_train_exp, ATN, TRAIN_EXP, GtkWindow)

/* Fills o with the settings each experiment's models start from (read at every Run); the
 * options' text path is borrowed and must outlive the run's start. */
typedef void (*AtnTrainExpRead)(gpointer owner, atn_train_options *o);

/* A window transient for parent (NULL: none); read(owner, ...) gives the settings.  The
 * caller destroys it (gtk_window_destroy) before owner goes; a run still going is then
 * killed. */
AtnTrainExp *atn_train_exp_new(GtkWindow *parent, AtnTrainExpRead read, gpointer owner);

/* For the tests (tests/ui/): a control by name ("kind", "knob", "values", "lengths",
 * "schemes", "depths", "placements", "seeds", "run", "cancel", "progress", "status", "plot",
 * "table", "save-figure", "save-csv"), or NULL; whether the command runs; the folder of the
 * last run's files (experiment.csv, .png, .svg, .pdf, table.txt; NULL before one); its exit
 * status (-1 before one ends); the models finished so far and in all. */
GtkWidget *atn_train_exp_get_control(AtnTrainExp *self, const char *name);
gboolean atn_train_exp_get_running(AtnTrainExp *self);
const char *atn_train_exp_get_folder(AtnTrainExp *self);
int atn_train_exp_get_exit_status(AtnTrainExp *self);
void atn_train_exp_get_models(AtnTrainExp *self, int *done, int *total);
/* The running command's process id, 0 when none. */
int atn_train_exp_get_pid(AtnTrainExp *self);

G_END_DECLS
