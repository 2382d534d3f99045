/* Shared helpers of the window tests (tests/ui/test-*.c): a real AtnWindow under Xvfb, the
 * f32 test model, waiting for the worker thread, drawing widgets, the command line for
 * comparisons.  Each test program calls ui_test_init first. */
#pragma once

#include <cjson/cJSON.h>
#include <glib/gstdio.h>
#include <gtk/gtk.h>
#include <math.h>
#include <string.h>

#include "atn-application.h"
#include "atn-gui-bench.h"
#include "atn-head-stat.h"
#include "atn-head-view.h"
#include "atn-heatmap.h"
#include "atn-model-grid-view.h"
#include "atn-predictions.h"
#include "atn-prefs.h"
#include "atn-similarity-map.h"
#include "atn-similarity-view.h"
#include "atn-stats-view.h"
#include "atn-token-chips.h"
#include "atn-trace-view.h"
#include "atn-window.h"
/* the functions the widgets keep for the tests (ui/atn-*-test.h) */
#include "atn-fit-label-test.h"
#include "atn-export-test.h"
#include "atn-get-model-dialog-test.h"
#include "atn-head-stat-test.h"
#include "atn-head-view-test.h"
#include "atn-heatmap-test.h"
#include "atn-model-grid-test.h"
#include "atn-model-grid-view-test.h"
#include "atn-model-handle-test.h"
#include "atn-precision-dialog-test.h"
#include "atn-predictions-test.h"
#include "atn-prefs-test.h"
#include "atn-result-test.h"
#include "atn-session-test.h"
#include "atn-similarity-map-test.h"
#include "atn-similarity-view-test.h"
#include "atn-stats-view-test.h"
#include "atn-token-chips-test.h"
#include "atn-token-lines-test.h"
#include "atn-trace-view-test.h"
#include "atn-view-switcher-test.h"
#include "atn-whatif-view-test.h"
#include "atn-train-view-test.h"
#include "atn-window-test.h"

#define TIMEOUT_MS 60000

extern char *f32_model;   /* tests/hf/models/f32: 2 layers x 4 heads, 48-word vocabulary, 24 positions */

/* Sets up GTest, the translations, GTK and the CSS, and f32_model.  FALSE when there is no
 * display: the caller returns 0 (it has printed the TAP skip line). */
gboolean ui_test_init(int *argc, char ***argv);

typedef gboolean (*cond_fn)(gpointer);

typedef struct model_wait {
    AtnWindow *win;
    const char *name;
    guint runs;   /* wait for more runs than this */
} model_wait;

/* Runs the main loop until cond(data) holds (FALSE after TIMEOUT_MS), then lets layout and
 * draws settle. */
gboolean wait_for(cond_fn cond, gpointer data);
/* Runs the main loop for ms milliseconds. */
void settle(int ms);
/* A model_wait: the session is idle with a result of its model, after more than runs runs. */
gboolean idle_with_result(gpointer data);
/* An ids_wait: the session is idle with a result of its model for exactly these n ids. */
typedef struct ids_wait {
    AtnWindow *win;
    const int32_t *ids;
    int n;
} ids_wait;
gboolean result_of_ids(gpointer data);
/* A presented 1200x780 window; open_and_wait / type_and_wait open a model / set the text and
 * wait for the result; show_view shows a view page and waits until it is drawable. */
AtnWindow *new_window(void);
/* A presented w x h window at Text size text_size (the preference, which every window follows);
 * text_size_done destroys it and puts the preference back to 1.0. */
AtnWindow *text_size_window(int w, int h, double text_size);
void text_size_done(AtnWindow *win);
/* The window's pointer motion controllers told of (x, y), as the pointer moving there would
 * (presentation mode's header bar comes back at the top of the screen). */
void pointer_at(AtnWindow *win, double x, double y);
/* Width of text as ui/render measures it: Pango at 72 dpi, "Sans" at an absolute size. */
double render_text_width(const char *text, double size, gboolean bold);
/* What of a view is cut: each mapped widget under it that reaches past its right edge (cut
 * off unseen, as a pane's content wider than the pane) and each mapped GtkLabel whose layout
 * is ellipsized, appended to bad. */
void widgets_cut(GtkWidget *view, GString *bad);
void open_and_wait(AtnWindow *win, const char *source);
void type_and_wait(AtnWindow *win, const char *text);
gboolean is_drawable(gpointer data);
void show_view(AtnWindow *win, const char *name);
/* Shows the Trace view (show_view), selects layer and head (layer < 0: the session's stay)
 * and the query token (query < 0: the session's stays), refreshes the view and returns it. */
AtnTraceView *show_trace(AtnWindow *win, int layer, int head, int query);
/* Draws a widget as the next frame would and returns its pixels. */
GBytes *render_widget(GtkWidget *w, int *width, int *height);
void destroy_window(AtnWindow *win);
AtnHeatmap *head_heatmap(AtnWindow *win);
/* The number of tokens the engine makes of text (independent of the window's path). */
int engine_token_count(const char *model, const char *text);
/* Clicks a widget at (x, y) through its primary click gesture, as a pointer press would. */
void click(GtkWidget *w, double x, double y);
/* An AtnSimilarityView that is done computing and shows a similarity. */
gboolean similarity_ready(gpointer data);
gboolean png_size(const char *path, int *w, int *h);
/* Runs `attnscope <extra> -o out` (the command line beside the test); compare_pngs asserts two
 * PNGs have the same size. */
void cli_export(const char *const *extra, const char *out);
void compare_pngs(const char *gui, const char *cli);
/* An AtnSession with no open in progress. */
gboolean not_opening(gpointer data);
/* The right edge of the rightmost mapped label under w, in scroller coordinates. */
double trace_label_right(GtkWidget *w, GtkWidget *scroller);
/* A cond_fn: every step of the AtnTraceView data lies inside its sheet's scroller. */
gboolean trace_steps_inside(gpointer data);
/* The nice value a model-running worker thread should have: the workers' (10), or the
 * test's own when it already runs nicer than that (a pool thread inherits it). */
int expected_worker_nice(void);
