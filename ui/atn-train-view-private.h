/* What the Train page's files share (ui/atn-train-view.c: the run, the plots, the buttons;
 * ui/atn-train-knobs.c: the form of training settings).  Main thread only. */
#pragma once

#include <gtk/gtk.h>

#include "atn-session.h"
#include "atn-train-view.h"
#include "render.h"
#include "train.h"

G_BEGIN_DECLS

typedef struct TrainShared TrainShared;   /* what the worker measured (atn-train-view.c) */

typedef enum { PRESET_CUSTOM, PRESET_COPY, PRESET_INDUCTION, PRESET_SORT, PRESET_MODADD } train_preset;

struct _AtnTrainView {
    GtkWidget parent_instance;
    AtnSession *session;
    atn_colormap cm;
    double font_scale;
    GHashTable *controls;     /* name -> widget (borrowed) */
    GtkWidget *paned;
    GtkLabel *status, *probe_label, *note;
    GtkWidget *curve, *map, *norms;
    GtkWidget *start, *pause, *step, *stop, *open;
    GCancellable *train_slot, *save_slot;
    TrainShared *sh;          /* the run shown (NULL before the first) */
    atn_trainer *trainer;     /* the finished run's model (NULL while training or before) */
    atn_train_options trained;   /* its options */
    atn_train_options running;   /* the options of the run training now */
    gboolean saving_paused;   /* Open in attnscope asked the paused run's worker to save */
    guint poll;
    gboolean applying_preset;
    char *saved_dir;
    float best_induction;
    GPtrArray *text_paths;    /* every text file chosen (a trainer borrows its options' path) */
    const char *text_path;    /* the last of them, NULL: none */
    GtkWidget *experiments;   /* the Experiments window (atn-train-exp.h), NULL before it opens */
};

/* The page's control called name (borrowed; the names are atn-train-view-test.h's), or NULL. */
GtkWidget *atn_train_control(AtnTrainView *self, const char *name);

/* Builds the knobs (Task, Model, Optimiser: every control added to self->controls by name)
 * with the "Copy, quick" preset applied; the box is the caller's to place. */
GtkWidget *atn_train_knobs_build(AtnTrainView *self);

/* Fills o (atn_train_options_init first) with what the knobs say; the text task's path is
 * borrowed from the page (self->text_paths keeps every path chosen alive). */
void atn_train_knobs_read(AtnTrainView *self, atn_train_options *o);

/* The text task's file, as the file chooser sets it (path copied). */
void atn_train_knobs_set_text_file(AtnTrainView *self, const char *path);

G_END_DECLS
