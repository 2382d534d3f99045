/* What atn-window.h leaves out: functions only the tests (tests/ui/) call, to read back what
 * the widget shows or to drive it as a user would.  Included by the tests and by the .c
 * files that define them. */
#pragma once

#include "atn-window.h"
#include "atn-session-file.h"

G_BEGIN_DECLS

GMenuModel *atn_window_get_model_menu(AtnWindow *self);

const char *atn_window_get_view(AtnWindow *self);

/* What the sentence entry shows now ("" for a toy model, which reads its own tokens). */
const char *atn_window_get_text(AtnWindow *self);
/* The recent-models menu's label for path among all (NULL-terminated): the fewest last
 * components that no other entry ends with ("…/a/model" beside "…/b/model"), the whole path
 * (home as "~") when it needs every one.  Free with g_free. */
/* The note the sentence entry shows when its text reached the length cap (what the model can
 * read plus a margin), NULL when none. */
const char *atn_window_get_entry_note(AtnWindow *self);
char *atn_window_recent_label(const char *const *all, const char *path);
/* Saves the toy model shown as JSON (no dialog; tests, scripts). */
gboolean atn_window_save_toy_to(AtnWindow *self, const char *path, GError **error);
/* The "Save the changes …?" dialog a close with unsaved toy-model edits shows, or NULL. */
GtkWidget *atn_window_get_close_prompt(AtnWindow *self);
/* Exports every head's heatmap into folder (no dialog; tests, scripts) as the menu's
 * "Export Every Head…" does: in a worker, with the progress bar and Cancel. */
void atn_window_export_all_heads_to(AtnWindow *self, const char *folder, const char *format, double scale);
gboolean atn_window_get_exporting(AtnWindow *self);
void atn_window_cancel_export(AtnWindow *self);
/* Exports the visible view's figure without a dialog (tests, scripts). */
gboolean atn_window_export_to(AtnWindow *self, const char *path, double scale, GError **error);
/* The status line under the views (the latest result, or what an action just did). */
const char *atn_window_get_status(AtnWindow *self);

const char *atn_window_get_notice(AtnWindow *self);

/* Presentation mode: whether the header bar with the view switcher is shown now (the pointer
 * at the top of the screen shows it); the revealer of the hint shown the first time
 * (F11/Esc, Alt+1…5), borrowed. */
gboolean atn_window_get_view_switcher_shown(AtnWindow *self);
/* The header bar's view switcher (an AtnViewSwitcher, borrowed). */
GtkWidget *atn_window_get_view_switcher(AtnWindow *self);
GtkWidget *atn_window_get_presentation_hint(AtnWindow *self);
GtkWidget *atn_window_get_token_chips(AtnWindow *self);
/* Whether the "Opening …" bar with its progress and Cancel button is shown (it appears
 * when an open lasts over 300 ms). */
gboolean atn_window_get_open_progress_shown(AtnWindow *self);
/* The progress line's text ("Opening “NAME”: stage") and the model button's label. */
const char *atn_window_get_progress_text(AtnWindow *self);
const char *atn_window_get_model_label(AtnWindow *self);
/* The masked-word guesses under the sentence (an AtnPredictions). */
GtkWidget *atn_window_get_predictions(AtnWindow *self);
/* The what-if badge's line above the views ("What-if: 1 head switched off — …"), NULL while
 * hidden; its button back to the original model. */
const char *atn_window_get_whatif_badge(AtnWindow *self);
GtkWidget *atn_window_get_whatif_restore_button(AtnWindow *self);

/* Sessions (atn-window-session.c): what the window shows as a session state (FALSE with error
 * for an attention file or no model), saved without a dialog; TRUE while a state opened or a
 * lesson step is still being applied (the window emits "state-applied" when it is done). */
gboolean atn_window_get_state(AtnWindow *self, AtnSessionState *s, GError **error);
gboolean atn_window_save_session_to(AtnWindow *self, const char *path, GError **error);
gboolean atn_window_is_applying_state(AtnWindow *self);
/* Lessons (atn-window-lessons.c): the step shown (-1: no lesson), going to a step (as Back /
 * Next do), revealing the answer, closing; the panel's texts: "title", "question", "answer"
 * (NULL while the answer is hidden); the answer filled from the result shown (g_free). */
int atn_window_get_lesson_step(AtnWindow *self);
void atn_window_lesson_go(AtnWindow *self, int index);
void atn_window_lesson_reveal(AtnWindow *self);
void atn_window_close_lesson(AtnWindow *self);
const char *atn_window_get_lesson_text(AtnWindow *self, const char *which);
char *atn_window_dup_lesson_answer(AtnWindow *self);
/* The main menu's Lessons submenu (borrowed): a section of the built-in lessons, then Open
 * Lesson File…. */
GMenuModel *atn_window_get_lessons_menu(AtnWindow *self);

G_END_DECLS
