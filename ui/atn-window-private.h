/* AtnWindow's insides, shared by atn-window.c (the window, its banners, progress bar,
 * sentence entry and views), atn-window-actions.c (the win.* actions and shortcuts) and
 * atn-window-export.c (Export, Copy Figure, every head, the trace as Markdown).  Not for
 * other files: they use atn-window.h. */
#pragma once

#include "atn-window.h"

#include "atn-encdec-widgets.h"
#include "atn-predictions.h"
#include "atn-session-file.h"
#include "atn-prefs.h"
#include "atn-token-chips.h"
#include "atn-view-switcher.h"
#include "atn-view.h"

G_BEGIN_DECLS

struct _AtnWindow {
    GtkApplicationWindow parent_instance;

    /* template children */
    GtkHeaderBar *header;
    GtkBox *titlebar_slot;        /* the window's titlebar: holds header except in presentation mode */
    GtkBox *content;              /* the window's child: holds header first in presentation mode */
    GtkMenuButton *model_button;
    GtkToggleButton *cpu_button, *gpu_button;
    GtkWidget *close_prompt;      /* "Save the changes …?" while it is shown */
    gboolean closing_anyway;      /* the user chose to close without saving */
    gboolean syncing_device;      /* the switch follows the session, not the user */
    GtkSpinner *spinner;          /* while a model opens */
    GtkProgressBar *run_bar;      /* while a run lasts: its layers, ten updates a second (a line
                                     over the top of the views, not in the header bar) */
    AtnViewSwitcher *switcher;    /* the header bar's title: the views, in the form that fits */
    GtkLabel *model_label;        /* model_button's label (ellipsized in the middle) */
    GtkInfoBar *error_bar, *notice_bar;
    GtkLabel *error_label, *notice_label;
    GtkRevealer *controls_revealer;
    GtkRevealer *whatif_revealer; /* the what-if badge: shown while the session's model is changed */
    GtkLabel *whatif_label;
    GtkButton *whatif_restore_button;
    /* the bar for long work, with Cancel: opening a model (shown once it has lasted 300 ms)
       or exporting every head */
    GtkRevealer *progress_revealer;
    GtkLabel *progress_label;
    GtkProgressBar *progress_bar;
    GtkButton *progress_cancel_button;
    guint open_reveal_id;
    GCancellable *export_cancel;  /* the export of every head in flight, or NULL */
    GtkEntry *text_entry, *pair_entry;
    GtkToggleButton *pair_toggle;
    GtkMenuButton *examples_button;
    GtkLabel *toy_label;
    AtnTokenChips *chips;
    AtnTargetEntry *target_entry; /* an encoder-decoder's target (atn-encdec-widgets.h) */
    AtnPredictions *predictions;
    GtkStack *stack;              /* the views: every page's child is an AtnView */
    GtkLabel *status_label;

    AtnSession *session;
    AtnPrefs *prefs;
    GMenu *model_menu;
    GPtrArray *examples;          /* char* "text" or "text ||| pair" */
    GtkCssProvider *font_css;
    gboolean presentation;
    guint hide_controls_id;
    double last_motion_x, last_motion_y;
    gboolean pointer_in;          /* the pointer is over the window */
    GtkRevealer *hint_revealer;   /* presentation mode's keys, over the top of the views */
    GtkLabel *hint_label;
    gboolean hint_done;           /* the hint was shown (once per window) */
    guint hint_id;
    gboolean want_gpu;            /* the saved preference, applied when the probe says yes */
    int start_layer, start_head;  /* the command line's --layer / --head (-1: not given) */
    gboolean notice_is_run;
    char *run_status;             /* the status line for the latest result ("demo · 13 tokens …") */
    guint say_timeout_id;         /* a _atn_window_say message is shown until this fires */
    char *entry_note;             /* the text entry's note at the length cap, or NULL */
    int entry_cap_positions;      /* the positions the entries' length cap was made for */
    gboolean toy_text_shown;      /* the entries are emptied for a toy model (the sentence waits) */
    GMenu *lessons_menu;          /* the main menu's Lessons submenu (atn-window-lessons.c) */
    gboolean syncing_text;        /* the entries follow the model, not the user */       /* the notice is about the latest run (hidden by the next) */
};

/* The banners at the top of the window (atn-window.c). */
void _atn_window_show_error(AtnWindow *self, const char *message);
void _atn_window_show_notice(AtnWindow *self, const char *message);
/* Says what an action did ("Saved …", "Figure copied …") on the status line, until the
 * next change of result, model, view, layer, head or query, or for 8 s at most; then the
 * line shows the latest result again. */
void _atn_window_say(AtnWindow *self, const char *message);
/* The bar for long work: shows text with the progress bar at fraction (0..1). */
void _atn_window_show_progress(AtnWindow *self, const char *text, const char *tooltip, double fraction);
/* Shows or hides the bar for what is going on now (an open in progress, or nothing). */
void _atn_window_sync_progress(AtnWindow *self);
/* An example line's model ("{demo-gpt2} the and you …": the example shows that model at
 * work) into *model (newly allocated; NULL when the line names none) and the rest of the line
 * (borrowed from line). */
const char *_atn_window_example_model(const char *line, char **model);
/* Sets both sentence entries from "text" or "text ||| pair". */
void _atn_window_set_example(AtnWindow *self, const char *example);

/* The view on the page called name ("head", "trace" …), or NULL. */
AtnView *_atn_window_get_view(AtnWindow *self, const char *name);

/* Installs the win.* actions and shortcuts (atn-window-actions.c) and the export actions
 * (atn-window-export.c) on the class; adds the stateful actions to a new window. */
void _atn_window_class_actions_init(GtkWidgetClass *wc);
void _atn_window_class_export_init(GtkWidgetClass *wc);
void _atn_window_actions_init(AtnWindow *self);
/* atn-window-stats.c: win.open-stats, drag and drop, a merged file's examples opened */
void _atn_window_class_stats_init(GtkWidgetClass *wc);
void _atn_window_stats_init(AtnWindow *self);
/* atn-window-session.c: win.open-session, win.save-session; applying a state (a session
 * file's or a lesson step's): the preferences now, the model opened when it is another, then
 * text, what-if and view, then layer, head and query once their result has come (the window
 * emits "state-applied" then).  s is copied. */
void _atn_window_class_session_init(GtkWidgetClass *wc);
void _atn_window_session_init(AtnWindow *self);
void _atn_window_apply_state(AtnWindow *self, const AtnSessionState *s);
/* atn-window-lessons.c: the Lessons submenu, win.lesson / open-lesson / lesson-next / -back /
 * -reveal, and the lesson panel above the views. */
void _atn_window_class_lessons_init(GtkWidgetClass *wc);
void _atn_window_lessons_init(AtnWindow *self);
void _atn_window_fill_lessons_menu(AtnWindow *self, GMenu *menu);
/* The save dialog for toy model m; then_close closes the window once it is saved. */
void _atn_window_save_toy_dialog(AtnWindow *self, AtnModelHandle *m, gboolean then_close);

G_END_DECLS
