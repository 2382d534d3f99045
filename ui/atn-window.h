/* AtnWindow: the main window — header bar (model chooser, device, export, main menu), the
 * sentence entry with its examples, the token chips, the five views and the banners for
 * errors and notices.  It owns the AtnSession every view observes. */
#pragma once

#include <gtk/gtk.h>

#include "atn-session.h"

G_BEGIN_DECLS

#define ATN_TYPE_WINDOW (atn_window_get_type())
G_DECLARE_FINAL_TYPE(AtnWindow, atn_window, ATN, WINDOW, GtkApplicationWindow)

/* Opens model (NULL: the last one) — or, when it does not open, the demo model, then the
 * worked example, saying so in a banner. */
AtnWindow *atn_window_new(GtkApplication *app, const char *model);
AtnSession *atn_window_get_session(AtnWindow *self);

/* The view pages: "head", "model", "similarity", "trace", "statistics" (the NULL-ended
 * list atn_window_get_view_names returns, static; the template's pages, in order). */
const char *const *atn_window_get_view_names(void);
/* The model chooser's menu (borrowed): sections "Built-in Models", "Downloaded Models" (the
 * Hugging Face cache, when it holds a model with config.json and weights), the open
 * entries, "Recent".  atn_window_refresh_models rebuilds it (after a download); it is also
 * rebuilt each time the chooser opens, so a download by another program shows. */
void atn_window_refresh_models(AtnWindow *self);
void atn_window_show_view(AtnWindow *self, const char *name);
/* A merged corpus statistics file (`attnscope stats merge`) in the Statistics view, read in a
 * worker (progress, Cancel); a file that cannot be read is reported and what was shown stays. */
void atn_window_open_stats(AtnWindow *self, const char *path);
/* A file or folder as dropped on the window: a statistics file, an attention file (each told
 * by its header), else a model (a folder, a toy JSON file). */
void atn_window_open_path(AtnWindow *self, const char *path);
/* A session file (docs/session-file.md): read and checked at once (a file that is not a
 * session, of another version, with a key of the wrong type, or naming a model that is not
 * there: the error banner names the file and the key, FALSE, and what is shown stays); then
 * the window goes to that state (the model opened in a worker, then the rest). */
gboolean atn_window_open_session(AtnWindow *self, const char *path);
/* A lesson file (docs/lessons.md), shown in the lesson panel at its first step; a file that
 * cannot be read is reported in the error banner (FALSE) and the lesson shown stays. */
gboolean atn_window_open_lesson(AtnWindow *self, const char *path);
GtkWidget *atn_window_get_view_widget(AtnWindow *self, const char *name);
/* The command line's --layer / --head (-1: not given): selected now; when the first
 * model's result arrives, a layer or head outside that model is said in the notice bar and
 * on stderr, naming the option and the model's range, and the last one is shown. */
void atn_window_start_on_head(AtnWindow *self, int layer, int head);
/* The sentence entry's text (what typing sets). */
void atn_window_set_text(AtnWindow *self, const char *text);
/* The text of the error banner, or NULL when it is hidden. */
const char *atn_window_get_error(AtnWindow *self);
void atn_window_set_presentation(AtnWindow *self, gboolean on);

G_END_DECLS
