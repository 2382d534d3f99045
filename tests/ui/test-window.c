/* The window end to end, under Xvfb: open models, type, wait for the worker thread, and check
 * what the views draw and report against the capture and hand-computed numbers.
 *
 * Run with --tap (meson does).  Without a display it reports "1..0 # SKIP no display".
 * With --zh it checks the Chinese translation instead (LANGUAGE=zh_CN set by meson). */
#include <cjson/cJSON.h>
#include <glib/gstdio.h>
#include <gtk/gtk.h>
#include <math.h>
#include <string.h>

#include "atn-application.h"
#include "atn-gui-bench.h"
#include "atn-head-view.h"
#include "atn-heatmap.h"
#include "atn-model-grid-view.h"
#include "atn-predictions.h"
#include "atn-prefs.h"
#include "atn-similarity-view.h"
#include "atn-stats-view.h"
#include "atn-head-stat.h"
#include "atn-token-chips.h"
#include "atn-trace-view.h"
#include "atn-window.h"

#define TIMEOUT_MS 60000

static char *f32_model;   /* tests/hf/models/f32: 2 layers x 4 heads, 48-word vocabulary, 24 positions */

/* ---- helpers --------------------------------------------------------------------------------- */

typedef gboolean (*cond_fn)(gpointer);

static gboolean wait_for(cond_fn cond, gpointer data) {
    gint64 t0 = g_get_monotonic_time();
    while (!cond(data)) {
        if (g_get_monotonic_time() - t0 > TIMEOUT_MS * 1000)
            return FALSE;
        g_main_context_iteration(NULL, FALSE);
        g_usleep(1000);
    }
    /* let pending layout and draws settle */
    for (int i = 0; i < 20; i++)
        while (g_main_context_iteration(NULL, FALSE))
            ;
    return TRUE;
}

static void settle(int ms) {
    gint64 t0 = g_get_monotonic_time();
    while (g_get_monotonic_time() - t0 < ms * 1000) {
        g_main_context_iteration(NULL, FALSE);
        g_usleep(1000);
    }
}

typedef struct model_wait {
    AtnWindow *win;
    const char *name;
    guint runs;   /* wait for more runs than this */
} model_wait;

static gboolean idle_with_result(gpointer data) {
    model_wait *w = data;
    AtnSession *s = atn_window_get_session(w->win);
    AtnModelHandle *m = atn_session_get_model(s);
    return m && !atn_session_get_busy(s) && atn_session_get_result(s) &&
           atn_result_get_model(atn_session_get_result(s)) == m && atn_session_get_n_runs(s) > w->runs &&
           (!w->name || !g_strcmp0(atn_model_handle_get_source(m), w->name));
}

static AtnWindow *new_window(void) {
    AtnWindow *win = g_object_new(ATN_TYPE_WINDOW, "default-width", 1200, "default-height", 780, NULL);
    gtk_window_present(GTK_WINDOW(win));
    return win;
}

static void open_and_wait(AtnWindow *win, const char *source) {
    AtnSession *s = atn_window_get_session(win);
    model_wait w = {win, source, atn_session_get_n_runs(s)};
    atn_session_open_model(s, source);
    g_assert_true(wait_for(idle_with_result, &w));
}

static void type_and_wait(AtnWindow *win, const char *text) {
    AtnSession *s = atn_window_get_session(win);
    model_wait w = {win, NULL, atn_session_get_n_runs(s)};
    atn_window_set_text(win, text);
    g_assert_true(wait_for(idle_with_result, &w));
}

static gboolean is_drawable(gpointer data) {
    GtkWidget *w = data;
    return gtk_widget_get_mapped(w) && gtk_widget_get_width(w) > 0 && gtk_widget_get_height(w) > 0;
}

static void show_view(AtnWindow *win, const char *name) {
    atn_window_show_view(win, name);
    g_assert_true(wait_for(is_drawable, atn_window_get_view_widget(win, name)));
}

/* Draws a widget as the next frame would and returns its pixels. */
static GBytes *render_widget(GtkWidget *w, int *width, int *height) {
    g_autoptr(GdkTexture) tex = atn_gui_render_widget(w);
    g_assert_nonnull(tex);
    *width = gdk_texture_get_width(tex);
    *height = gdk_texture_get_height(tex);
    gsize stride = (gsize)*width * 4, size = stride * *height;
    guchar *data = g_malloc(size);
    gdk_texture_download(tex, data, stride);
    return g_bytes_new_take(data, size);
}

static void destroy_window(AtnWindow *win) {
    gtk_window_destroy(GTK_WINDOW(win));
    settle(20);
}

static AtnHeatmap *head_heatmap(AtnWindow *win) {
    return atn_head_view_get_heatmap(ATN_HEAD_VIEW(atn_window_get_view_widget(win, "head")));
}

/* The number of tokens the engine makes of text (independent of the window's path). */
static int engine_token_count(const char *model, const char *text) {
    atn_error err = {0};
    atn_model *m = atn_model_open(model, NULL, NULL, &err);
    g_assert_nonnull(m);
    atn_encoding *enc = NULL;
    g_assert_cmpint(atn_model_encode(m, text, NULL, &enc, &err), ==, ATN_OK);
    int n = enc->n;
    atn_encoding_free(enc);
    atn_model_free(m);
    return n;
}

/* Clicks a widget at (x, y) through its click gesture, as a pointer press would. */
static void click(GtkWidget *w, double x, double y) {
    g_autoptr(GListModel) ctl = gtk_widget_observe_controllers(w);
    for (guint i = 0; i < g_list_model_get_n_items(ctl); i++) {
        g_autoptr(GObject) c = g_list_model_get_item(ctl, i);
        if (GTK_IS_GESTURE_CLICK(c)) {
            g_signal_emit_by_name(c, "pressed", 1, x, y);
            return;
        }
    }
    g_assert_not_reached();
}

/* ---- tests ----------------------------------------------------------------------------------- */

/* Open the window, switch model, type a sentence, wait for the run: the Head view shows the
 * expected number of tokens. */
static void test_open_switch_type(void) {
    AtnWindow *win = new_window();
    open_and_wait(win, "worked-example");
    show_view(win, "head");
    g_assert_cmpint(atn_heatmap_get_rows(head_heatmap(win)), ==, 3);
    g_assert_cmpint(atn_token_chips_get_n_chips(ATN_TOKEN_CHIPS(atn_window_get_token_chips(win))), ==, 3);

    open_and_wait(win, f32_model);
    const char *text = "the cat sat on the mat";
    type_and_wait(win, text);
    int want = engine_token_count(f32_model, text);
    g_assert_cmpint(want, ==, 8);   /* [CLS] the cat sat on the mat [SEP] */
    g_assert_cmpint(atn_heatmap_get_rows(head_heatmap(win)), ==, want);
    g_assert_cmpint(atn_token_chips_get_n_chips(ATN_TOKEN_CHIPS(atn_window_get_token_chips(win))), ==, want);
    g_assert_false(atn_session_get_busy(atn_window_get_session(win)));
    g_assert_null(atn_window_get_error(win));

    /* typing fast: only the newest text's result is kept */
    AtnSession *s = atn_window_get_session(win);
    model_wait w = {win, NULL, atn_session_get_n_runs(s)};
    atn_window_set_text(win, "the");
    atn_window_set_text(win, "the cat");
    atn_window_set_text(win, "the cat sat");
    g_assert_true(wait_for(idle_with_result, &w));
    settle(150);
    g_assert_cmpint(atn_result_get_n_tokens(atn_session_get_result(s)), ==, 5);
    destroy_window(win);
}

/* Selecting a layer or head changes the drawn figure. */
static void test_layer_head_redraw(void) {
    AtnWindow *win = new_window();
    open_and_wait(win, f32_model);
    type_and_wait(win, "the cat sat on the mat");
    show_view(win, "head");
    GtkWidget *view = atn_window_get_view_widget(win, "head");
    AtnSession *s = atn_window_get_session(win);
    int w1, h1, w2, h2, w3, h3;
    atn_session_select_head(s, 0, 0);
    g_autoptr(GBytes) a = render_widget(view, &w1, &h1);
    atn_session_select_head(s, 0, 1);
    g_autoptr(GBytes) b = render_widget(view, &w2, &h2);
    atn_head_view_step(ATN_HEAD_VIEW(view), 1, 0);   /* the keyboard's Down: next layer */
    g_assert_cmpint(atn_session_get_layer(s), ==, 1);
    g_autoptr(GBytes) c = render_widget(view, &w3, &h3);
    g_assert_cmpint(w1, ==, w2);
    g_assert_cmpint(h1, ==, h2);
    g_assert_false(g_bytes_equal(a, b));
    g_assert_false(g_bytes_equal(b, c));
    /* and back: the same figure again (the cache is keyed right) */
    atn_session_select_head(s, 0, 0);
    g_autoptr(GBytes) d = render_widget(view, &w3, &h3);
    g_assert_true(g_bytes_equal(a, d));
    destroy_window(win);
}

/* Hovering a cell reports the weight under the pointer; clicking a row selects the query. */
static void test_hover_and_click(void) {
    AtnWindow *win = new_window();
    open_and_wait(win, f32_model);
    type_and_wait(win, "the cat sat on the mat");
    show_view(win, "head");
    AtnSession *s = atn_window_get_session(win);
    atn_session_select_head(s, 1, 2);
    settle(30);
    AtnHeatmap *hm = head_heatmap(win);
    AtnResult *r = atn_session_get_result(s);
    int n = atn_result_get_n_tokens(r);
    const float *a = atn_result_get_head(r, 1, 2);
    const char *const *tok = atn_result_get_tokens(r);
    for (int row = 0; row < n; row += 3)
        for (int col = 0; col < n; col += 2) {
            graphene_rect_t rect;
            g_assert_true(atn_heatmap_get_cell_rect(hm, row, col, &rect));
            double x = rect.origin.x + rect.size.width * 0.5, y = rect.origin.y + rect.size.height * 0.5;
            int rr, cc;
            g_assert_true(atn_heatmap_cell_at(hm, x, y, &rr, &cc));
            g_assert_cmpint(rr, ==, row);
            g_assert_cmpint(cc, ==, col);
            g_autofree char *text = atn_heatmap_hover(hm, x, y);
            g_autofree char *weight = g_strdup_printf("%.4f", (double)a[row * n + col]);
            g_assert_nonnull(text);
            g_assert_nonnull(strstr(text, weight));
            g_assert_nonnull(strstr(text, tok[row]));
            g_assert_nonnull(strstr(text, tok[col]));
            g_assert_nonnull(strstr(text, "→"));
        }
    g_assert_null(atn_heatmap_hover(hm, 1, 1));   /* the corner is outside the matrix */
    graphene_rect_t rect;
    g_assert_true(atn_heatmap_get_cell_rect(hm, 4, 1, &rect));
    click(GTK_WIDGET(hm), rect.origin.x + 1, rect.origin.y + 1);
    g_assert_cmpint(atn_session_get_query(s), ==, 4);
    destroy_window(win);
}

/* softmax of the worked example's head 0, query 0 after setting X[0][0] = x00, by hand:
 * q0 = k0 = (x00, 1.1); k1 = (1.0, 1.1); k2 = (1.2, -0.2); scores / sqrt(2). */
static void hand_softmax(double x00, double out[3]) {
    double s[3] = {x00 * x00 + 1.1 * 1.1, x00 * 1.0 + 1.1 * 1.1, x00 * 1.2 + 1.1 * -0.2};
    double m = -INFINITY, sum = 0;
    for (int j = 0; j < 3; j++) {
        s[j] /= sqrt(2.0);
        m = fmax(m, s[j]);
    }
    for (int j = 0; j < 3; j++)
        sum += out[j] = exp(s[j] - m);
    for (int j = 0; j < 3; j++)
        out[j] /= sum;
}

static void assert_weights_shown(AtnTraceView *tv, const double want[3]) {
    g_autofree char *text = atn_trace_view_dup_step_text(tv, ATN_TRACE_STEP_SOFTMAX);
    g_assert_nonnull(text);
    for (int j = 0; j < 3; j++) {
        g_autofree char *w = g_strdup_printf("%.4f", want[j]);
        if (!strstr(text, w))
            g_error("softmax step shows\n%s\nbut not %s", text, w);
    }
}

/* The Trace view on the worked example: 0.3760 / 0.4487 / 0.1752, and editing X[0][0]. */
static void test_trace_worked_example(void) {
    AtnWindow *win = new_window();
    open_and_wait(win, "worked-example");
    show_view(win, "trace");
    AtnSession *s = atn_window_get_session(win);
    atn_session_select_head(s, 0, 0);
    atn_session_set_query(s, 0);
    AtnTraceView *tv = ATN_TRACE_VIEW(atn_window_get_view_widget(win, "trace"));
    atn_trace_view_refresh(tv);
    const double article[3] = {0.3760, 0.4487, 0.1752};
    assert_weights_shown(tv, article);
    g_autofree char *scores = atn_trace_view_dup_step_text(tv, ATN_TRACE_STEP_SCORES);
    g_assert_nonnull(strstr(scores, "1.4600"));   /* 0.5×0.5 + 1.1×1.1 */
    g_assert_nonnull(strstr(scores, "1.7100"));
    g_assert_nonnull(strstr(scores, "0.3800"));

    GtkEditable *x00 = atn_trace_view_get_input_cell(tv, ATN_TOY_X, 0, 0);
    g_assert_nonnull(x00);
    g_assert_cmpstr(gtk_editable_get_text(x00), ==, "0.5");
    gtk_editable_set_text(x00, "1.5");   /* as typing does: "changed" -> model -> run -> trace */
    settle(20);
    double want[3];
    hand_softmax(1.5, want);
    g_assert_cmpfloat_with_epsilon(want[0], 0.5397, 1e-4);   /* the hand check in the issue */
    assert_weights_shown(tv, want);
    g_autofree char *scores2 = atn_trace_view_dup_step_text(tv, ATN_TRACE_STEP_SCORES);
    g_assert_nonnull(strstr(scores2, "3.4600"));
    g_assert_nonnull(strstr(scores2, "2.7100"));
    g_assert_nonnull(strstr(scores2, "1.5800"));
    /* the Head view follows the same edit */
    AtnResult *r = atn_session_get_result(s);
    g_assert_cmpfloat_with_epsilon(atn_result_get_head(r, 0, 0)[0], want[0], 1e-5);
    /* the edited cell kept its text and its focusable widget (no rebuild while typing) */
    g_assert_true(atn_trace_view_get_input_cell(tv, ATN_TOY_X, 0, 0) == x00);

    /* not a number: marked, nothing changes */
    gtk_editable_set_text(x00, "1.5x");
    settle(20);
    g_assert_true(gtk_widget_has_css_class(GTK_WIDGET(x00), "error"));
    assert_weights_shown(tv, want);
    gtk_editable_set_text(x00, "0.5");
    settle(20);
    g_assert_false(gtk_widget_has_css_class(GTK_WIDGET(x00), "error"));
    assert_weights_shown(tv, article);

    /* stepping marks the step */
    atn_trace_view_set_step(tv, ATN_TRACE_STEP_SOFTMAX);
    g_assert_cmpint(atn_trace_view_get_step(tv), ==, ATN_TRACE_STEP_SOFTMAX);

    /* the Markdown export carries the same numbers and LaTeX */
    g_autoptr(GError) error = NULL;
    g_autofree char *md = atn_trace_view_dup_markdown(tv, &error);
    g_assert_no_error(error);
    g_assert_nonnull(strstr(md, "0.3760"));
    g_assert_nonnull(strstr(md, "0.4487"));
    g_assert_nonnull(strstr(md, "0.1752"));
    g_assert_nonnull(strstr(md, "\\sqrt{d_k}"));
    g_assert_nonnull(strstr(md, "$$"));
    destroy_window(win);
}

static gboolean similarity_ready(gpointer data) {
    AtnSimilarityView *v = data;
    return !atn_similarity_view_get_busy(v) && atn_similarity_map_get_similarity(atn_similarity_view_get_map(v));
}

static gboolean png_size(const char *path, int *w, int *h) {
    g_autoptr(GError) error = NULL;
    g_autoptr(GdkTexture) t = gdk_texture_new_from_filename(path, &error);
    if (!t)
        return FALSE;
    *w = gdk_texture_get_width(t);
    *h = gdk_texture_get_height(t);
    return TRUE;
}

static void cli_export(const char *const *extra, const char *out) {
    g_autoptr(GPtrArray) argv = g_ptr_array_new();
    g_autofree char *exe = g_build_filename(g_getenv("ATN_BUILD_ROOT"), "app", "attnscope", NULL);
    g_ptr_array_add(argv, exe);
    for (const char *const *e = extra; *e; e++)
        g_ptr_array_add(argv, (char *)*e);
    g_ptr_array_add(argv, "-o");
    g_ptr_array_add(argv, (char *)out);
    g_ptr_array_add(argv, NULL);
    int status = 0;
    g_autofree char *err = NULL;
    g_autoptr(GError) error = NULL;
    g_assert_true(g_spawn_sync(NULL, (char **)argv->pdata, NULL, G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL, NULL, &err,
                               &status, &error));
    if (!g_spawn_check_wait_status(status, NULL))
        g_error("attnscope export failed: %s", err);
}

static void compare_pngs(const char *gui, const char *cli) {
    int gw = 0, gh = 0, cw = 0, ch = 0;
    g_assert_true(png_size(gui, &gw, &gh));
    g_assert_true(png_size(cli, &cw, &ch));
    g_assert_cmpint(gw, ==, cw);
    g_assert_cmpint(gh, ==, ch);
}

/* Export from the GUI writes a PNG of the same size as the command line's export. */
static void test_export_matches_cli(void) {
    g_autofree char *dir = g_dir_make_tmp("atn-ui-XXXXXX", NULL);
    g_autofree char *gui1 = g_build_filename(dir, "gui-we.png", NULL);
    g_autofree char *cli1 = g_build_filename(dir, "cli-we.png", NULL);
    g_autofree char *gui2 = g_build_filename(dir, "gui-f32.png", NULL);
    g_autofree char *cli2 = g_build_filename(dir, "cli-f32.png", NULL);
    g_autofree char *gui3 = g_build_filename(dir, "gui-f32@2.png", NULL);
    g_autofree char *cli3 = g_build_filename(dir, "cli-f32@2.png", NULL);
    AtnWindow *win = new_window();
    open_and_wait(win, "worked-example");
    show_view(win, "head");
    g_autoptr(GError) error = NULL;
    g_assert_true(atn_window_export_to(win, gui1, 1.0, &error));
    g_assert_no_error(error);
    const char *we[] = {"export", "heatmap", "--model", "worked-example", "--layer", "0", "--head", "0", NULL};
    cli_export(we, cli1);
    compare_pngs(gui1, cli1);

    open_and_wait(win, f32_model);
    type_and_wait(win, "the cat sat on the mat");
    atn_session_select_head(atn_window_get_session(win), 1, 3);
    settle(20);
    g_assert_true(atn_window_export_to(win, gui2, 1.0, &error));
    g_assert_true(atn_window_export_to(win, gui3, 2.0, &error));
    const char *f32[] = {"export", "heatmap", "--model", f32_model, "--text", "the cat sat on the mat", "--layer", "1",
                         "--head", "3", NULL};
    cli_export(f32, cli2);
    compare_pngs(gui2, cli2);
    const char *f32x2[] = {"export", "heatmap", "--model", f32_model, "--text", "the cat sat on the mat", "--layer",
                           "1", "--head", "3", "--scale", "2", NULL};
    cli_export(f32x2, cli3);
    compare_pngs(gui3, cli3);

    /* the other formats write files too */
    g_autofree char *svg = g_build_filename(dir, "fig.svg", NULL);
    g_autofree char *pdf = g_build_filename(dir, "fig.pdf", NULL);
    g_assert_true(atn_window_export_to(win, svg, 1.0, &error));
    g_assert_true(atn_window_export_to(win, pdf, 1.0, &error));
    g_assert_true(g_file_test(svg, G_FILE_TEST_IS_REGULAR));
    g_assert_true(g_file_test(pdf, G_FILE_TEST_IS_REGULAR));
    /* every view with a figure exports */
    const char *views[] = {"model", "similarity", "trace"};
    for (guint i = 0; i < G_N_ELEMENTS(views); i++) {
        show_view(win, views[i]);
        if (!g_strcmp0(views[i], "similarity"))
            g_assert_true(wait_for(similarity_ready, atn_window_get_view_widget(win, "similarity")));
        g_autofree char *p = g_strdup_printf("%s/%s.png", dir, views[i]);
        settle(300);
        g_assert_true(atn_window_export_to(win, p, 1.0, &error));
        g_assert_no_error(error);
        int w = 0, h = 0;
        g_assert_true(png_size(p, &w, &h));
        g_assert_cmpint(w, >, 50);
    }
    destroy_window(win);
    const char *files[] = {gui1, cli1, gui2, cli2, gui3, cli3, svg, pdf};
    for (guint i = 0; i < G_N_ELEMENTS(files); i++)
        g_remove(files[i]);
    for (guint i = 0; i < G_N_ELEMENTS(views); i++) {
        g_autofree char *p = g_strdup_printf("%s/%s.png", dir, views[i]);
        g_remove(p);
    }
    g_rmdir(dir);
}

static gboolean not_opening(gpointer data) { return atn_session_get_opening(data) == NULL; }

/* A bad model folder shows an error in the window; the previous model stays usable. */
static void test_bad_model_folder(void) {
    g_autofree char *dir = g_dir_make_tmp("atn-bad-XXXXXX", NULL);
    g_autofree char *cfg = g_build_filename(dir, "config.json", NULL);
    g_assert_true(g_file_set_contents(cfg, "{\"hidden_size\": 32, \"num_attention_heads\": ", -1, NULL));
    AtnWindow *win = new_window();
    open_and_wait(win, f32_model);
    type_and_wait(win, "the cat");
    AtnSession *s = atn_window_get_session(win);
    AtnModelHandle *before = atn_session_get_model(s);
    atn_session_open_model(s, dir);
    g_assert_true(wait_for(not_opening, s));
    const char *error = atn_window_get_error(win);
    g_assert_nonnull(error);
    g_assert_nonnull(strstr(error, dir));
    g_assert_true(atn_session_get_model(s) == before);
    /* still usable: type, run, draw */
    type_and_wait(win, "the cat sat on the mat");
    g_assert_cmpint(atn_heatmap_get_rows(head_heatmap(win)), ==, 8);
    /* a folder that does not exist at all */
    g_autofree char *missing = g_build_filename(dir, "nothing-here", NULL);
    atn_session_open_model(s, missing);
    g_assert_true(wait_for(not_opening, s));
    g_assert_nonnull(atn_window_get_error(win));
    g_assert_true(atn_session_get_model(s) == before);
    destroy_window(win);
    g_remove(cfg);
    g_rmdir(dir);
}

/* A text longer than the model takes shows a banner. */
static void test_truncation_banner(void) {
    AtnWindow *win = new_window();
    open_and_wait(win, f32_model);
    type_and_wait(win, "the cat sat on the mat the cat sat on the mat the cat sat on the mat the cat sat on the mat "
                       "the cat sat on the mat");
    g_assert_nonnull(atn_window_get_notice(win));
    g_assert_nonnull(strstr(atn_window_get_notice(win), "dropped"));
    g_assert_cmpint(atn_result_get_n_tokens(atn_session_get_result(atn_window_get_session(win))), ==, 24);
    type_and_wait(win, "the cat");
    g_assert_null(atn_window_get_notice(win));
    destroy_window(win);
}

/* Model view: clicking a thumbnail opens that head in the Head view. */
static void test_model_grid_click(void) {
    AtnWindow *win = new_window();
    open_and_wait(win, f32_model);
    type_and_wait(win, "the cat sat");
    show_view(win, "model");
    GtkWidget *view = atn_window_get_view_widget(win, "model");
    AtnModelGrid *grid = atn_model_grid_view_get_grid(ATN_MODEL_GRID_VIEW(view));
    int w = 0, h = 0;
    g_autoptr(GBytes) pix = render_widget(view, &w, &h);
    gboolean clicked = FALSE;
    int gw = gtk_widget_get_width(GTK_WIDGET(grid)), gh = gtk_widget_get_height(GTK_WIDGET(grid));
    for (int y = 0; y < gh && !clicked; y += 3)
        for (int x = 0; x < gw && !clicked; x += 3) {
            int l, hd;
            if (atn_model_grid_head_at(grid, x, y, &l, &hd) && l == 1 && hd == 2) {
                click(GTK_WIDGET(grid), x + 4, y + 4);
                clicked = TRUE;
            }
        }
    g_assert_true(clicked);
    AtnSession *s = atn_window_get_session(win);
    g_assert_cmpint(atn_session_get_layer(s), ==, 1);
    g_assert_cmpint(atn_session_get_head(s), ==, 2);
    g_assert_cmpstr(atn_window_get_view(win), ==, "head");
    destroy_window(win);
}

/* Statistics: sortable, and a row opens its head. */
static void test_stats_sort_activate(void) {
    AtnWindow *win = new_window();
    open_and_wait(win, f32_model);
    type_and_wait(win, "the cat sat on the mat");
    show_view(win, "statistics");
    AtnStatsView *sv = ATN_STATS_VIEW(atn_window_get_view_widget(win, "statistics"));
    atn_stats_view_sort_by(sv, "entropy", GTK_SORT_ASCENDING);
    GListModel *m = atn_stats_view_get_model(sv);
    g_assert_cmpuint(g_list_model_get_n_items(m), ==, 8);
    double prev = -1;
    for (guint i = 0; i < g_list_model_get_n_items(m); i++) {
        g_autoptr(AtnHeadStat) row = g_list_model_get_item(m, i);
        double e = atn_head_stat_get_stats(row)->entropy;
        g_assert_cmpfloat(e, >=, prev);
        prev = e;
    }
    g_autoptr(AtnHeadStat) last = g_list_model_get_item(m, 7);
    atn_stats_view_activate_row(sv, 7);
    AtnSession *s = atn_window_get_session(win);
    g_assert_cmpint(atn_session_get_layer(s), ==, atn_head_stat_get_layer(last));
    g_assert_cmpint(atn_session_get_head(s), ==, atn_head_stat_get_head(last));
    g_assert_cmpstr(atn_window_get_view(win), ==, "head");
    destroy_window(win);
}

static gboolean corpus_done(gpointer data) { return !atn_stats_view_get_corpus_busy(data); }

/* The per-head numbers of the sentence typed now, by (layer, head), from the table. */
static void sentence_rows(AtnStatsView *sv, atn_head_stats *out, int count) {
    GListModel *m = atn_stats_view_get_model(sv);
    g_assert_cmpuint(g_list_model_get_n_items(m), ==, (guint)count);
    for (guint i = 0; i < (guint)count; i++) {
        g_autoptr(AtnHeadStat) row = g_list_model_get_item(m, i);
        int H = count / 2;   /* f32: 2 layers */
        out[atn_head_stat_get_layer(row) * H + atn_head_stat_get_head(row)] = *atn_head_stat_get_stats(row);
    }
}

/* Corpus mode: the table over a file equals the mean of the sentences' own tables (typed one
 * by one); a line that is not UTF-8 is skipped and said; "This Sentence" goes back; a pass
 * can be cancelled. */
static void test_stats_corpus(void) {
    AtnWindow *win = new_window();
    open_and_wait(win, f32_model);
    show_view(win, "statistics");
    AtnStatsView *sv = ATN_STATS_VIEW(atn_window_get_view_widget(win, "statistics"));
    atn_head_stats a[8], b[8];
    type_and_wait(win, "the cat sat on the mat");
    sentence_rows(sv, a, 8);
    type_and_wait(win, "we like tea");
    sentence_rows(sv, b, 8);

    g_autofree char *dir = g_dir_make_tmp("atn-corpus-XXXXXX", NULL);
    g_autofree char *path = g_build_filename(dir, "corpus.txt", NULL);
    static const char text[] = "the cat sat on the mat\n\nnot \xff utf-8\nwe like tea\n";
    g_assert_true(g_file_set_contents(path, text, sizeof text - 1, NULL));
    atn_stats_view_load_corpus(sv, path);
    g_assert_true(atn_stats_view_get_corpus_busy(sv));
    g_assert_true(wait_for(corpus_done, sv));
    const char *info = atn_stats_view_get_info(sv);
    g_test_message("%s", info);
    g_assert_nonnull(strstr(info, "2 sentences"));
    g_assert_nonnull(strstr(info, "1 line skipped"));
    GListModel *m = atn_stats_view_get_model(sv);
    g_assert_cmpuint(g_list_model_get_n_items(m), ==, 8);
    for (guint i = 0; i < 8; i++) {
        g_autoptr(AtnHeadStat) row = g_list_model_get_item(m, i);
        int k = atn_head_stat_get_layer(row) * 4 + atn_head_stat_get_head(row);
        const atn_head_stats *c = atn_head_stat_get_stats(row);
        g_assert_cmpfloat_with_epsilon(c->prev, (a[k].prev + b[k].prev) / 2, 1e-9);
        g_assert_cmpfloat_with_epsilon(c->entropy, (a[k].entropy + b[k].entropy) / 2, 1e-9);
        g_assert_cmpfloat_with_epsilon(c->cls, (a[k].cls + b[k].cls) / 2, 1e-9);
    }
    /* exported as CSV: the command line's numbers for the same file, to the byte */
    g_autoptr(GError) error = NULL;
    g_autofree char *csv = atn_stats_view_dup_csv(sv, &error);
    g_assert_nonnull(csv);
    g_autofree char *cli_csv = g_build_filename(dir, "cli.csv", NULL);
    {
        g_autofree char *exe = g_build_filename(g_getenv("ATN_BUILD_ROOT"), "app", "attnscope", NULL);
        const char *argv[] = {exe, "stats", "--model", f32_model, "--corpus", path, "--format", "csv", "-o", cli_csv, NULL};
        int status = 0;
        g_assert_true(g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL, NULL, NULL,
                                   &status, NULL));
        g_assert_true(g_spawn_check_wait_status(status, NULL));
        g_autofree char *want = NULL;
        g_assert_true(g_file_get_contents(cli_csv, &want, NULL, NULL));
        g_assert_cmpstr(csv, ==, want);
        g_unlink(cli_csv);
    }
    /* a new sentence does not replace the corpus numbers; This Sentence does */
    type_and_wait(win, "the mat");
    g_assert_nonnull(strstr(atn_stats_view_get_info(sv), "2 sentences"));
    atn_stats_view_show_sentence(sv);
    g_assert_null(strstr(atn_stats_view_get_info(sv), "sentences of"));

    /* cancelled at once: the sentence's numbers stay */
    atn_stats_view_load_corpus(sv, path);
    atn_stats_view_cancel_corpus(sv);
    g_assert_true(wait_for(corpus_done, sv));
    g_assert_null(strstr(atn_stats_view_get_info(sv), "sentences of"));
    /* a file that is not there: said, nothing replaced */
    g_autofree char *missing = g_build_filename(dir, "missing.txt", NULL);
    atn_stats_view_load_corpus(sv, missing);
    g_assert_true(wait_for(corpus_done, sv));
    g_assert_nonnull(strstr(atn_stats_view_get_info(sv), "missing.txt"));
    destroy_window(win);
    g_unlink(path);
    g_rmdir(dir);
}

/* The similarity the view shows now, copied ([count][count]). */
static double *similarity_values(AtnSimilarityView *v, int *count) {
    const atn_similarity *sim = atn_similarity_map_get_similarity(atn_similarity_view_get_map(v));
    g_assert_nonnull(sim);
    *count = sim->count;
    return g_memdup2(sim->values, sizeof(double) * sim->count * sim->count);
}

/* Similarity over a corpus: the mean of the sentences' own matrices (each computed by the
 * view in sentence mode), for the whole model; back to the sentence; cancel; a bad file. */
static void test_similarity_corpus(void) {
    AtnWindow *win = new_window();
    open_and_wait(win, f32_model);
    show_view(win, "similarity");
    AtnSimilarityView *v = ATN_SIMILARITY_VIEW(atn_window_get_view_widget(win, "similarity"));
    atn_similarity_view_set_scope(v, ATN_SCOPE_MODEL);
    int ca = 0, cb = 0, cc = 0;
    type_and_wait(win, "the cat sat on the mat");
    g_assert_true(wait_for(similarity_ready, v));
    g_autofree double *a = similarity_values(v, &ca);
    type_and_wait(win, "we like tea");
    g_assert_true(wait_for(similarity_ready, v));
    g_autofree double *b = similarity_values(v, &cb);
    g_assert_cmpint(ca, ==, 8);
    g_assert_cmpint(cb, ==, 8);

    g_autofree char *dir = g_dir_make_tmp("atn-simc-XXXXXX", NULL);
    g_autofree char *path = g_build_filename(dir, "corpus.txt", NULL);
    g_assert_true(g_file_set_contents(path, "the cat sat on the mat\n\nwe like tea\n", -1, NULL));
    atn_similarity_view_load_corpus(v, path);
    g_assert_true(atn_similarity_view_get_busy(v));
    g_assert_true(wait_for(similarity_ready, v));
    g_test_message("%s", atn_similarity_view_get_info(v));
    g_assert_nonnull(strstr(atn_similarity_view_get_info(v), "2 sentences"));
    g_autofree double *c = similarity_values(v, &cc);
    g_assert_cmpint(cc, ==, 8);
    for (int i = 0; i < 64; i++)
        g_assert_cmpfloat_with_epsilon(c[i], (a[i] + b[i]) / 2, 1e-9);
    /* typing does not replace it; This Sentence does */
    type_and_wait(win, "the mat");
    g_assert_true(wait_for(similarity_ready, v));
    g_assert_nonnull(strstr(atn_similarity_view_get_info(v), "2 sentences"));
    atn_similarity_view_show_sentence(v);
    g_assert_true(wait_for(similarity_ready, v));
    g_assert_null(strstr(atn_similarity_view_get_info(v), "sentences of"));
    /* cancelled: the sentence's matrix again */
    atn_similarity_view_load_corpus(v, path);
    atn_similarity_view_cancel(v);
    g_assert_true(wait_for(similarity_ready, v));
    g_assert_null(strstr(atn_similarity_view_get_info(v), "sentences of"));
    /* a file that is not there: said */
    g_autofree char *missing = g_build_filename(dir, "missing.txt", NULL);
    atn_similarity_view_load_corpus(v, missing);
    g_assert_true(wait_for(similarity_ready, v));
    g_assert_nonnull(strstr(atn_similarity_view_get_info(v), "missing.txt"));
    destroy_window(win);
    g_unlink(path);
    g_rmdir(dir);
}

/* Similarity: the matrix for the layer, and a pair side by side. */
static void test_similarity(void) {
    AtnWindow *win = new_window();
    open_and_wait(win, f32_model);
    type_and_wait(win, "the cat sat on the mat");
    show_view(win, "similarity");
    AtnSimilarityView *v = ATN_SIMILARITY_VIEW(atn_window_get_view_widget(win, "similarity"));
    g_assert_true(wait_for(similarity_ready, v));
    const atn_similarity *sim = atn_similarity_map_get_similarity(atn_similarity_view_get_map(v));
    g_assert_cmpint(sim->count, ==, 4);
    for (int c = 0; c < 4; c++)
        g_assert_cmpfloat_with_epsilon(sim->values[c * 4 + c], 0.0, 1e-9);   /* JS distance to itself */
    atn_similarity_view_set_scope(v, ATN_SCOPE_MODEL);
    g_assert_true(wait_for(similarity_ready, v));
    sim = atn_similarity_map_get_similarity(atn_similarity_view_get_map(v));
    g_assert_cmpint(sim->count, ==, 8);
    atn_similarity_view_compare(v, 1, 6);
    settle(30);
    destroy_window(win);
}

/* Colour map preference and presentation mode change what is drawn. */
static void test_prefs_presentation(void) {
    AtnWindow *win = new_window();
    open_and_wait(win, "worked-example");
    show_view(win, "head");
    GtkWidget *view = atn_window_get_view_widget(win, "head");
    int w = 0, h = 0;
    g_autoptr(GBytes) a = render_widget(view, &w, &h);
    /* uninstalled, the schema compiled into the build tree is found (no abort, no key file) */
    g_assert_cmpstr(atn_prefs_get_backend_name(atn_prefs_get_default()), ==, "gsettings");
    atn_prefs_set_colormap(atn_prefs_get_default(), "magma");
    g_assert_cmpint(atn_heatmap_get_colormap(head_heatmap(win)), ==, ATN_CMAP_MAGMA);
    g_autoptr(GBytes) b = render_widget(view, &w, &h);
    g_assert_false(g_bytes_equal(a, b));
    atn_prefs_set_colormap(atn_prefs_get_default(), "viridis");
    atn_window_set_presentation(win, TRUE);
    g_assert_true(gtk_widget_has_css_class(GTK_WIDGET(win), "presentation"));
    atn_window_set_presentation(win, FALSE);
    g_assert_false(gtk_widget_has_css_class(GTK_WIDGET(win), "presentation"));
    destroy_window(win);
}

/* The example sentences menu sets the entries (and the pair) and runs; hovering a token chip
 * outlines that token in the heatmap. */
static void test_examples_and_chips(void) {
    AtnWindow *win = new_window();
    open_and_wait(win, f32_model);
    show_view(win, "head");
    AtnSession *s = atn_window_get_session(win);
    /* the examples come from data/examples.txt: line 6 is "I went to the bank ... ||| Then ..." */
    model_wait w = {win, NULL, atn_session_get_n_runs(s)};
    g_assert_true(gtk_widget_activate_action(GTK_WIDGET(win), "win.example", "i", 5));
    g_assert_true(wait_for(idle_with_result, &w));
    g_assert_true(g_str_has_prefix(atn_session_get_text(s), "I went to the bank"));
    g_assert_true(g_str_has_prefix(atn_session_get_text_pair(s), "Then I sat"));
    const atn_encoding *enc = atn_result_get_encoding(atn_session_get_result(s));
    int seps = 0, second = 0;
    for (int i = 0; i < enc->n; i++) {
        seps += !g_strcmp0(enc->tokens[i].text, "[SEP]");
        second += enc->type_ids[i] == 1;
    }
    g_assert_cmpint(seps, ==, 2);   /* [CLS] A [SEP] B [SEP] */
    g_assert_cmpint(second, >, 0);

    type_and_wait(win, "the cat sat");
    AtnTokenChips *chips = ATN_TOKEN_CHIPS(atn_window_get_token_chips(win));
    GtkWidget *chip = atn_token_chips_get_chip(chips, 2);
    g_assert_cmpstr(gtk_label_get_text(GTK_LABEL(chip)), ==, "cat");
    GtkWidget *view = atn_window_get_view_widget(win, "head");
    int w1, h1, w2, h2;
    g_autoptr(GBytes) before = render_widget(view, &w1, &h1);
    g_autoptr(GListModel) ctl = gtk_widget_observe_controllers(chip);
    for (guint i = 0; i < g_list_model_get_n_items(ctl); i++) {
        g_autoptr(GObject) c = g_list_model_get_item(ctl, i);
        if (GTK_IS_EVENT_CONTROLLER_MOTION(c))
            g_signal_emit_by_name(c, "enter", 3.0, 3.0);
    }
    g_assert_cmpint(atn_session_get_hover_token(s), ==, 2);
    g_assert_true(gtk_widget_has_css_class(chip, "hovered"));
    g_autoptr(GBytes) after = render_widget(view, &w2, &h2);
    g_assert_false(g_bytes_equal(before, after));   /* row and column 2 outlined */
    destroy_window(win);
}

/* A model that does not open at start-up falls back without being remembered as the choice. */
static void test_fallback(void) {
    atn_prefs_set_last_model(atn_prefs_get_default(), "");
    AtnWindow *win = atn_window_new(NULL, "/nonexistent/model-folder");
    gtk_window_present(GTK_WINDOW(win));
    model_wait w = {win, NULL, 0};
    g_assert_true(wait_for(idle_with_result, &w));
    AtnModelHandle *m = atn_session_get_model(atn_window_get_session(win));
    g_assert_true(atn_model_handle_get_fallback(m));
    g_assert_nonnull(atn_window_get_notice(win));
    g_assert_nonnull(strstr(atn_window_get_notice(win), "/nonexistent/model-folder"));
    g_assert_cmpstr(atn_prefs_get_last_model(atn_prefs_get_default()), ==, "");
    destroy_window(win);
}

/* The clearest pattern of a head, computed from its attention matrix here: the largest of the
 * mean weight on the previous token, the next token, itself, [CLS] (column 0) and the final
 * [SEP] (column n-1) — one sentence, no padding. */
static double hand_pattern_score(const float *a, int n) {
    double prev = 0, next = 0, self = 0, cls = 0, sep = 0;
    for (int i = 0; i < n; i++) {
        self += a[i * n + i] / n;
        cls += a[i * n] / n;
        sep += a[i * n + n - 1] / n;
        if (i > 0)
            prev += a[i * n + i - 1] / (n - 1);
        if (i < n - 1)
            next += a[i * n + i + 1] / (n - 1);
    }
    return MAX(MAX(prev, next), MAX(self, MAX(cls, sep)));
}

/* A trained model opens on its clearest head, not on layer 0 head 0; a head chosen before the
 * model arrives (--layer/--head) is kept; a toy model keeps head 0, its lesson's head. */
static void test_opens_on_clearest_head(void) {
    AtnWindow *win = new_window();
    AtnSession *s = atn_window_get_session(win);
    atn_window_set_text(win, "the cat sat on the mat because it was tired.");
    open_and_wait(win, "demo");
    AtnResult *r = atn_session_get_result(s);
    int L = atn_result_get_n_layers(r), H = atn_result_get_n_heads(r), n = atn_result_get_n_tokens(r);
    g_assert_cmpint(n, ==, 13);
    double best = 0;
    for (int l = 0; l < L; l++)
        for (int h = 0; h < H; h++)
            best = MAX(best, hand_pattern_score(atn_result_get_head(r, l, h), n));
    int layer = atn_session_get_layer(s), head = atn_session_get_head(s);
    double chosen = hand_pattern_score(atn_result_get_head(r, layer, head), n);
    g_test_message("opened on L%d H%d: %.3f (best %.3f)", layer, head, chosen, best);
    g_assert_false(layer == 0 && head == 0);
    g_assert_cmpfloat(chosen, >=, 0.5);
    g_assert_cmpfloat(chosen, >=, best - 1e-4);
    /* the user's choice stands, also across re-runs */
    atn_session_select_head(s, 0, 0);
    type_and_wait(win, "the dog ran to the park.");
    g_assert_cmpint(atn_session_get_layer(s), ==, 0);
    g_assert_cmpint(atn_session_get_head(s), ==, 0);
    /* a toy model: head 0 */
    atn_session_select_head(s, 1, 3);
    open_and_wait(win, "worked-example");
    g_assert_cmpint(atn_session_get_layer(s), ==, 0);
    g_assert_cmpint(atn_session_get_head(s), ==, 1);   /* clamped to its 2 heads, not re-chosen */
    destroy_window(win);

    /* the random-weight test model: the rule's threshold decides (0.3) */
    win = new_window();
    s = atn_window_get_session(win);
    atn_window_set_text(win, "the cat sat on the mat");
    open_and_wait(win, f32_model);
    r = atn_session_get_result(s);
    n = atn_result_get_n_tokens(r);
    best = 0;
    int bl = 0, bh = 0;
    for (int l = 0; l < atn_result_get_n_layers(r); l++)
        for (int h = 0; h < atn_result_get_n_heads(r); h++) {
            double v = hand_pattern_score(atn_result_get_head(r, l, h), n);
            if (v > best + 1e-4)
                best = v, bl = l, bh = h;
        }
    g_test_message("f32 model: best %.3f at L%d H%d, opened on L%d H%d", best, bl, bh, atn_session_get_layer(s),
                   atn_session_get_head(s));
    if (best < 0.3 - 1e-3) {
        g_assert_cmpint(atn_session_get_layer(s), ==, 0);
        g_assert_cmpint(atn_session_get_head(s), ==, 0);
    } else if (best > 0.3 + 1e-3) {
        g_assert_cmpfloat(hand_pattern_score(atn_result_get_head(r, atn_session_get_layer(s), atn_session_get_head(s)),
                                             n), >=, best - 1e-4);
    }
    destroy_window(win);

    /* chosen before the first model arrives: kept */
    win = new_window();
    s = atn_window_get_session(win);
    atn_session_select_head(s, 2, 5);
    open_and_wait(win, "demo");
    g_assert_cmpint(atn_session_get_layer(s), ==, 2);
    g_assert_cmpint(atn_session_get_head(s), ==, 5);
    destroy_window(win);
}

/* Cancel while a model opens: the current model stays, a notice says so, the progress bar
 * goes away.  (GTask reports a cancelled task as cancelled even when its thread finished, so
 * this holds however fast the open is.) */
static void test_cancel_open(void) {
    AtnWindow *win = new_window();
    AtnSession *s = atn_window_get_session(win);
    open_and_wait(win, "worked-example");
    AtnModelHandle *before = atn_session_get_model(s);
    atn_session_open_model(s, f32_model);
    g_assert_nonnull(atn_session_get_opening(s));
    atn_session_cancel_open(s);
    g_assert_true(wait_for(not_opening, s));
    settle(50);
    g_assert_true(atn_session_get_model(s) == before);
    g_assert_nonnull(atn_window_get_notice(win));
    g_assert_nonnull(strstr(atn_window_get_notice(win), "cancelled"));
    g_assert_false(atn_window_get_open_progress_shown(win));
    /* and the next open works */
    open_and_wait(win, f32_model);
    g_assert_true(atn_session_get_model(s) != before);
    g_assert_cmpfloat(atn_session_get_open_fraction(s), ==, 0.0);   /* reset once done */
    destroy_window(win);
}

/* Typing after a pause runs at once; a burst is debounced and the newest text wins. */
static void test_typing_starts_at_once(void) {
    AtnWindow *win = new_window();
    AtnSession *s = atn_window_get_session(win);
    open_and_wait(win, f32_model);
    type_and_wait(win, "the cat");
    atn_session_set_debounce_ms(s, 60);
    settle(80);
    g_assert_cmpuint(atn_session_get_effective_debounce_ms(s), ==, 0);
    model_wait w = {win, NULL, atn_session_get_n_runs(s)};
    atn_window_set_text(win, "the cat sat");
    /* started on the next turns of the main loop, not 60 ms later */
    gboolean started = FALSE;
    for (int i = 0; i < 5 && !started; i++) {
        g_main_context_iteration(NULL, FALSE);
        started = atn_session_get_busy(s) || atn_session_get_n_runs(s) > w.runs;
    }
    g_assert_true(started);
    atn_window_set_text(win, "the cat sat on the mat");
    g_assert_true(wait_for(idle_with_result, &w));
    settle(150);   /* the debounced run of the newest text */
    g_assert_true(wait_for(idle_with_result, &w));
    g_assert_cmpint(atn_result_get_n_tokens(atn_session_get_result(s)), ==,
                    engine_token_count(f32_model, "the cat sat on the mat"));
    destroy_window(win);
}

static gboolean export_finished(gpointer data) { return !atn_window_get_exporting(data); }

static int count_files(const char *dir) {
    g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
    int n = 0;
    while (d && g_dir_read_name(d))
        n++;
    return n;
}

/* Export Every Head: one PNG per head, each the size of the command line's export of that
 * head, different heads different pictures; cancelled, it stops, keeps what it wrote, says so. */
static void test_export_all_heads(void) {
    g_autofree char *dir = g_dir_make_tmp("atn-all-XXXXXX", NULL);
    AtnWindow *win = new_window();
    open_and_wait(win, f32_model);
    type_and_wait(win, "the cat sat on the mat");
    AtnResult *r = atn_session_get_result(atn_window_get_session(win));
    int L = atn_result_get_n_layers(r), H = atn_result_get_n_heads(r);
    atn_window_export_all_heads_to(win, dir, "png", 1.0);
    g_assert_true(atn_window_get_exporting(win));
    g_assert_true(wait_for(export_finished, win));
    g_assert_cmpint(count_files(dir), ==, L * H);
    g_assert_nonnull(strstr(atn_window_get_notice(win), dir));
    g_autofree char *cli = g_build_filename(dir, "cli.png", NULL);
    const char *args[] = {"export", "heatmap", "--model", f32_model, "--text", "the cat sat on the mat", "--layer", "1",
                          "--head", "3", NULL};
    cli_export(args, cli);
    g_autofree char *gui13 = g_build_filename(dir, "heatmap-L1-H3.png", NULL);
    g_autofree char *gui00 = g_build_filename(dir, "heatmap-L0-H0.png", NULL);
    compare_pngs(gui13, cli);
    g_autofree char *a = NULL, *b = NULL;
    gsize la = 0, lb = 0;
    g_assert_true(g_file_get_contents(gui13, &a, &la, NULL));
    g_assert_true(g_file_get_contents(gui00, &b, &lb, NULL));
    g_assert_false(la == lb && memcmp(a, b, la) == 0);

    /* cancelled at once: fewer files than heads (or all, if the worker won), and a notice */
    g_autofree char *dir2 = g_dir_make_tmp("atn-all-XXXXXX", NULL);
    atn_window_export_all_heads_to(win, dir2, "svg", 1.0);
    atn_window_cancel_export(win);
    g_assert_true(wait_for(export_finished, win));
    g_assert_cmpint(count_files(dir2), <=, L * H);
    g_assert_nonnull(strstr(atn_window_get_notice(win), "cancelled"));
    destroy_window(win);
    g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
    const char *name;
    while ((name = g_dir_read_name(d))) {
        g_autofree char *f = g_build_filename(dir, name, NULL);
        g_unlink(f);
    }
    g_rmdir(dir);
    g_autoptr(GDir) d2 = g_dir_open(dir2, 0, NULL);
    while ((name = g_dir_read_name(d2))) {
        g_autofree char *f = g_build_filename(dir2, name, NULL);
        g_unlink(f);
    }
    g_rmdir(dir2);
}

/* [MASK] guesses under the sentence: the ids and probabilities PyTorch's BertForMaskedLM gave
 * for the same input (tests/hf/fixtures/mlm.json); hidden without a [MASK]; a model without
 * the masked-LM head says so. */
static void test_mask_predictions(void) {
    const char *src = g_getenv("ATN_SOURCE_ROOT");
    g_autofree char *fixture = g_build_filename(src ? src : ".", "tests", "hf", "fixtures", "mlm.json", NULL);
    g_autofree char *json = NULL;
    g_assert_true(g_file_get_contents(fixture, &json, NULL, NULL));
    cJSON *root = cJSON_Parse(json), *want = NULL, *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(root, "cases"))
        if (!g_strcmp0(cJSON_GetStringValue(cJSON_GetObjectItem(c, "name")), "masked"))
            want = c;
    g_assert_nonnull(want);
    int32_t ids[64];
    int n = 0;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(want, "ids")) ids[n++] = (int32_t)c->valueint;

    AtnWindow *win = new_window();
    AtnSession *s = atn_window_get_session(win);
    g_autofree char *mlm = g_build_filename(src ? src : ".", "tests", "hf", "models", "mlm", NULL);
    open_and_wait(win, mlm);
    AtnPredictions *pred = ATN_PREDICTIONS(atn_window_get_predictions(win));
    g_assert_false(gtk_widget_get_visible(GTK_WIDGET(pred)));   /* no [MASK] in the sentence */
    model_wait w = {win, NULL, atn_session_get_n_runs(s)};
    atn_session_set_ids(s, ids, n);
    g_assert_true(wait_for(idle_with_result, &w));
    AtnResult *r = atn_session_get_result(s);
    g_assert_cmpint(atn_result_get_n_masks(r), ==, 1);
    const AtnMaskGuesses *g = atn_result_get_mask_guesses(r, 0);
    g_assert_nonnull(g);
    g_assert_cmpint(g->position, ==, cJSON_GetObjectItem(want, "mlm_position")->valueint);
    g_assert_cmpint(g->n, ==, 5);
    for (int k = 0; k < 5; k++) {
        g_assert_cmpint(g->top[k].id, ==, cJSON_GetArrayItem(cJSON_GetObjectItem(want, "mlm_top_ids"), k)->valueint);
        g_assert_cmpfloat_with_epsilon(g->top[k].prob,
                                       cJSON_GetArrayItem(cJSON_GetObjectItem(want, "mlm_top_probs"), k)->valuedouble,
                                       1e-5);
    }
    g_assert_true(gtk_widget_get_visible(GTK_WIDGET(pred)));
    g_autofree char *text = atn_predictions_dup_text(pred);
    g_autofree char *first = g_strdup_printf("3: %s %.4f", g->top[0].token, g->top[0].prob);
    g_test_message("%s", text);
    g_assert_true(g_str_has_prefix(text, first));
    cJSON_Delete(root);

    /* clicking a guess puts it in the sentence (the text path: the demo model's tokenizer) */
    atn_session_set_ids(s, NULL, 0);   /* back to the text */
    open_and_wait(win, "demo");
    type_and_wait(win, "the cat sat on the [MASK] .");
    r = atn_session_get_result(s);
    g = atn_result_get_mask_guesses(r, 0);
    g_assert_nonnull(g);
    g_autofree char *word = g_strdup(g->top[1].token);
    w.runs = atn_session_get_n_runs(s);
    atn_predictions_activate(pred, 0, 1);
    g_assert_true(wait_for(idle_with_result, &w));
    g_autofree char *filled = g_str_has_prefix(word, "##") ? g_strdup_printf("the cat sat on the%s .", word + 2)
                                                             : g_strdup_printf("the cat sat on the %s .", word);
    g_assert_cmpstr(atn_session_get_text(s), ==, filled);
    g_assert_cmpint(atn_result_get_n_masks(atn_session_get_result(s)), ==, 0);
    g_assert_false(gtk_widget_get_visible(GTK_WIDGET(pred)));

    /* with "[MASK]" inside a word and twice more, the third guess row fills the third [MASK]'s
       own byte span and leaves the other two as they were */
    type_and_wait(win, "x[MASK]y [MASK] sat on the [MASK] .");
    r = atn_session_get_result(s);
    g_assert_cmpint(atn_result_get_n_masks(r), ==, 3);
    g = atn_result_get_mask_guesses(r, 2);
    g_assert_nonnull(g);
    const atn_prediction *p2 = &g->top[0];
    g_autofree char *filled2 = p2->continuation ? g_strdup_printf("x[MASK]y [MASK] sat on the%s .", p2->surface)
                                                : g_strdup_printf("x[MASK]y [MASK] sat on the %s .", p2->surface);
    w.runs = atn_session_get_n_runs(s);
    atn_predictions_activate(pred, 2, 0);
    g_assert_true(wait_for(idle_with_result, &w));
    g_assert_cmpstr(atn_session_get_text(s), ==, filled2);
    g_assert_cmpint(atn_result_get_n_masks(atn_session_get_result(s)), ==, 2);

    /* a model without the head says so */
    open_and_wait(win, f32_model);
    w.runs = atn_session_get_n_runs(s);
    atn_session_set_ids(s, ids, n);
    g_assert_true(wait_for(idle_with_result, &w));
    g_autofree char *none = atn_predictions_dup_text(pred);
    g_assert_nonnull(strstr(none, "cls.predictions"));
    destroy_window(win);
}

/* The GPU fails while the window is open (run with the CUDA stand-in and 1 KB of its
 * "memory", see tests/cuda/meson.build): the run goes to the CPU, the device switch goes
 * back to CPU and is greyed out with the reason, a notice says so, the text and the selected
 * head stay. */
static void test_gpu_fallback(void) {
    AtnWindow *win = new_window();
    AtnSession *s = atn_window_get_session(win);
    open_and_wait(win, f32_model);
    type_and_wait(win, "the cat sat on the mat");
    atn_session_select_head(s, 1, 2);
    model_wait w = {win, NULL, atn_session_get_n_runs(s)};
    atn_session_set_device(s, ATN_DEVICE_CUDA);   /* as the GPU button does */
    g_assert_true(wait_for(idle_with_result, &w));
    AtnResult *r = atn_session_get_result(s);
    g_test_message("gpu failure: %s", atn_result_get_gpu_failure(r));
    g_assert_nonnull(atn_result_get_gpu_failure(r));
    g_assert_cmpint(atn_result_get_device(r), ==, ATN_DEVICE_CPU);
    g_assert_cmpint(atn_session_get_device(s), ==, ATN_DEVICE_CPU);
    g_assert_false(atn_session_get_gpu_available(s));
    g_assert_nonnull(atn_window_get_notice(win));
    g_assert_nonnull(strstr(atn_window_get_notice(win), "GPU"));
    /* the engine's reason (the stand-in's 1 KB runs out) reaches the result and the notice */
    g_assert_nonnull(strstr(atn_result_get_gpu_failure(r), "out of GPU memory"));
    g_assert_nonnull(strstr(atn_window_get_notice(win), atn_result_get_gpu_failure(r)));
    g_assert_null(atn_window_get_error(win));
    g_assert_cmpstr(atn_session_get_text(s), ==, "the cat sat on the mat");
    g_assert_cmpint(atn_result_get_n_tokens(r), ==, engine_token_count(f32_model, "the cat sat on the mat"));
    g_assert_cmpint(atn_session_get_layer(s), ==, 1);
    g_assert_cmpint(atn_session_get_head(s), ==, 2);
    destroy_window(win);
}

/* Edits to a toy model are never lost: switching models and back keeps them; closing the
 * window with edits in no file asks first; saved, the file holds them. */
static void test_toy_edits_kept(void) {
    AtnWindow *win = new_window();
    g_object_add_weak_pointer(G_OBJECT(win), (gpointer *)&win);
    AtnSession *s = atn_window_get_session(win);
    open_and_wait(win, "worked-example");
    AtnModelHandle *m = atn_session_get_model(s);
    g_assert_false(atn_model_handle_get_modified(m));
    g_assert_cmpfloat(atn_model_handle_toy_get(m, ATN_TOY_X, 0, 0, 0), !=, 1.5f);
    g_assert_true(atn_model_handle_toy_set(m, ATN_TOY_X, 0, 0, 0, 1.5f, NULL));
    g_assert_true(atn_model_handle_get_modified(m));
    open_and_wait(win, f32_model);
    g_autoptr(GPtrArray) unsaved = atn_session_dup_unsaved_toys(s);
    g_assert_cmpuint(unsaved->len, ==, 1);
    open_and_wait(win, "worked-example");
    g_assert_true(atn_session_get_model(s) == m);
    g_assert_cmpfloat(atn_model_handle_toy_get(m, ATN_TOY_X, 0, 0, 0), ==, 1.5f);

    /* closing asks */
    gtk_window_close(GTK_WINDOW(win));
    settle(50);
    g_assert_nonnull(win);
    GtkWidget *prompt = atn_window_get_close_prompt(win);
    g_assert_nonnull(prompt);
    /* saved (as the prompt's Save As… would), then closed: nothing left unsaved */
    g_autofree char *dir = g_dir_make_tmp("atn-toy-XXXXXX", NULL);
    g_autofree char *path = g_build_filename(dir, "edited.json", NULL);
    g_autoptr(GError) error = NULL;
    g_assert_true(atn_window_save_toy_to(win, path, &error));
    g_assert_false(atn_model_handle_get_modified(m));
    atn_error err = {0};
    atn_model *back = atn_model_open_toy_json(path, &err);
    g_assert_nonnull(back);
    float v = 0;
    g_assert_cmpint(atn_model_toy_get(back, ATN_TOY_X, 0, 0, 0, &v, &err), ==, ATN_OK);
    g_assert_cmpfloat(v, ==, 1.5f);
    atn_model_free(back);
    gtk_dialog_response(GTK_DIALOG(prompt), GTK_RESPONSE_CANCEL);
    settle(20);
    g_assert_nonnull(win);   /* cancelled: still open */
    gtk_window_close(GTK_WINDOW(win));   /* nothing unsaved now: closes */
    settle(50);
    g_assert_null(win);
    g_unlink(path);
    g_rmdir(dir);
}

/* LANGUAGE=zh_CN: the Chinese interface. */
static void test_chinese(void) {
    AtnWindow *win = new_window();
    GtkStack *stack = GTK_STACK(gtk_widget_get_parent(atn_window_get_view_widget(win, "head")));
    GtkStackPage *page = gtk_stack_get_page(stack, atn_window_get_view_widget(win, "trace"));
    const char *title = gtk_stack_page_get_title(page);
    g_assert_cmpstr(title, !=, "Trace");
    g_assert_true(g_utf8_get_char(title) >= 0x2E80);   /* Chinese characters */
    g_assert_cmpstr(g_dgettext("attnscope", "Head"), !=, "Head");

    /* an exported figure speaks the window's language: the trace sheet and the similarity
       colour bar as PDF, read back with pdftotext */
    open_and_wait(win, "worked-example");
    g_autofree char *dir = g_dir_make_tmp("atn-zh-XXXXXX", NULL);
    struct { const char *view, *want, *unwanted; } cases[] = {
        {"trace", "加权求和", "Weighted sum"},
        {"similarity", "JS 距离", "JS distance"},
    };
    for (guint c = 0; c < G_N_ELEMENTS(cases); c++) {
        show_view(win, cases[c].view);
        if (!strcmp(cases[c].view, "similarity"))
            g_assert_true(wait_for(similarity_ready, atn_window_get_view_widget(win, "similarity")));
        g_autofree char *pdf = g_build_filename(dir, "fig.pdf", NULL);
        g_autoptr(GError) error = NULL;
        g_assert_true(atn_window_export_to(win, pdf, 1.0, &error));
        g_autofree char *out = NULL;
        const char *argv[] = {"pdftotext", "-enc", "UTF-8", pdf, "-", NULL};
        g_assert_true(g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, &out, NULL, NULL,
                                   &error));
        g_test_message("%s: %.200s", cases[c].view, out);
        g_assert_nonnull(strstr(out, cases[c].want));
        g_assert_null(strstr(out, cases[c].unwanted));
        g_unlink(pdf);
        const char *keep = g_getenv("ATN_KEEP_EXPORTS");   /* a folder: the PNGs, to look at */
        if (keep) {
            g_autofree char *name = g_strdup_printf("%s-zh_CN.png", cases[c].view);
            g_autofree char *png = g_build_filename(keep, name, NULL);
            g_assert_true(atn_window_export_to(win, png, 1.0, &error));
        }
    }
    g_rmdir(dir);
    destroy_window(win);
}

int main(int argc, char **argv) {
    gboolean zh = FALSE, gpu = FALSE;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--zh"))
            zh = TRUE, argv[i] = (char *)"--tap";
        else if (!strcmp(argv[i], "--gpu-fallback"))
            gpu = TRUE, argv[i] = (char *)"--tap";
    }
    atn_gui_init_i18n();
    g_test_init(&argc, &argv, NULL);
    if (!gtk_init_check()) {
        printf("1..0 # SKIP no display\n");
        return 0;
    }
    atn_gui_load_css();
    const char *src = g_getenv("ATN_SOURCE_ROOT");
    f32_model = g_build_filename(src ? src : ".", "tests", "hf", "models", "f32", NULL);
    if (zh) {
        g_test_add_func("/ui/chinese", test_chinese);
    } else if (gpu) {
        g_test_add_func("/ui/gpu-fallback", test_gpu_fallback);
    } else {
        g_test_add_func("/ui/open-switch-type", test_open_switch_type);
        g_test_add_func("/ui/layer-head-redraw", test_layer_head_redraw);
        g_test_add_func("/ui/hover-and-click", test_hover_and_click);
        g_test_add_func("/ui/trace-worked-example", test_trace_worked_example);
        g_test_add_func("/ui/export-matches-cli", test_export_matches_cli);
        g_test_add_func("/ui/bad-model-folder", test_bad_model_folder);
        g_test_add_func("/ui/truncation-banner", test_truncation_banner);
        g_test_add_func("/ui/model-grid-click", test_model_grid_click);
        g_test_add_func("/ui/stats-sort-activate", test_stats_sort_activate);
        g_test_add_func("/ui/stats-corpus", test_stats_corpus);
        g_test_add_func("/ui/similarity", test_similarity);
        g_test_add_func("/ui/similarity-corpus", test_similarity_corpus);
        g_test_add_func("/ui/prefs-presentation", test_prefs_presentation);
        g_test_add_func("/ui/examples-and-chips", test_examples_and_chips);
        g_test_add_func("/ui/fallback", test_fallback);
        g_test_add_func("/ui/opens-on-clearest-head", test_opens_on_clearest_head);
        g_test_add_func("/ui/mask-predictions", test_mask_predictions);
        g_test_add_func("/ui/cancel-open", test_cancel_open);
        g_test_add_func("/ui/typing-starts-at-once", test_typing_starts_at_once);
        g_test_add_func("/ui/toy-edits-kept", test_toy_edits_kept);
        g_test_add_func("/ui/export-all-heads", test_export_all_heads);
    }
    return g_test_run();
}
