/* The window as a whole (ui/atn-window*.c) end to end, under Xvfb: export against the command
 * line, bad model folders, banners, preferences and presentation mode, examples and token
 * chips, falling back to the demo model, cancelling an open, typing, [MASK] guesses, every
 * head's export, toy-model edits kept at close, the GPU fallback, the Chinese translation and
 * the Hugging Face cache in the model chooser.
 * Each view's own tests are in test-<view>.c beside this file.
 *
 * Run with --tap (meson does).  Without a display it reports "1..0 # SKIP no display".
 * With --zh it checks the Chinese translation instead (LANGUAGE=zh_CN set by meson); with
 * --gpu-fallback the GPU fallback (tests/cuda/meson.build). */
#define _GNU_SOURCE   /* nftw */
#include "ui-test-util.h"

#include <ftw.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "atn-corpus-pass.h"
#include "atn-memory-limit.h"
#include "atn-get-model-dialog.h"
#include "atn-precision-dialog.h"
#include "atn-preferences-dialog.h"

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

static gboolean error_shown(gpointer data) {
    AtnWindow *win = data;
    return atn_window_get_error(win) && !atn_session_get_busy(atn_window_get_session(win));
}

/* A model file that changes under the open window (issue 19): a copy of the f32 model is
 * opened and run, then its model.safetensors is cut to half its size.  The next run is
 * refused with a banner naming the file ("changed while the model was open"), the window
 * keeps running, keeps the model and the last result on screen, and opens and runs another
 * model afterwards. */
static void test_model_file_changed(void) {
    g_autofree char *dir = g_dir_make_tmp("atn-changed-XXXXXX", NULL);
    const char *files[] = {"config.json", "model.safetensors", "vocab.txt"};
    for (guint i = 0; i < G_N_ELEMENTS(files); i++) {
        g_autofree char *from = g_build_filename(f32_model, files[i], NULL);
        g_autofree char *to = g_build_filename(dir, files[i], NULL);
        g_autofree char *data = NULL;
        gsize len = 0;
        g_assert_true(g_file_get_contents(from, &data, &len, NULL));
        g_assert_true(g_file_set_contents(to, data, (gssize)len, NULL));
    }
    g_autofree char *weights = g_build_filename(dir, "model.safetensors", NULL);
    AtnWindow *win = new_window();
    show_view(win, "head");
    open_and_wait(win, dir);
    type_and_wait(win, "the cat sat");
    AtnSession *s = atn_window_get_session(win);
    AtnModelHandle *model = atn_session_get_model(s);
    AtnResult *shown = atn_session_get_result(s);
    int rows = atn_heatmap_get_rows(head_heatmap(win));
    g_assert_cmpint(rows, >, 0);

    GStatBuf st;
    g_assert_cmpint(g_stat(weights, &st), ==, 0);
    g_assert_cmpint(truncate(weights, st.st_size / 2), ==, 0);
    atn_window_set_text(win, "the cat sat on the mat");
    g_assert_true(wait_for(error_shown, win));
    const char *error = atn_window_get_error(win);
    g_test_message("banner: %s", error);
    g_assert_nonnull(strstr(error, weights));
    g_assert_nonnull(strstr(error, "changed while the model was open"));
    /* still the same model, the last picture kept */
    g_assert_true(atn_session_get_model(s) == model);
    g_assert_true(atn_session_get_result(s) == shown);
    g_assert_cmpint(atn_heatmap_get_rows(head_heatmap(win)), ==, rows);
    settle(50);
    g_assert_true(atn_session_get_model(s) == model);
    /* and the window goes on: another model opens and runs */
    open_and_wait(win, f32_model);
    type_and_wait(win, "the cat sat on the mat");
    g_assert_cmpint(atn_heatmap_get_rows(head_heatmap(win)), ==, 8);
    destroy_window(win);
    for (guint i = 0; i < G_N_ELEMENTS(files); i++) {
        g_autofree char *f = g_build_filename(dir, files[i], NULL);
        g_remove(f);
    }
    g_rmdir(dir);
}

/* A text longer than the model takes shows a banner. */
/* Where the views start in the window (the banners lie above them and push them down). */
static double views_top(AtnWindow *win) {
    GtkWidget *views = gtk_widget_get_parent(atn_window_get_view_widget(win, "head"));
    graphene_point_t p = GRAPHENE_POINT_INIT(0, 0), out;
    g_assert_true(gtk_widget_compute_point(views, GTK_WIDGET(win), &p, &out));
    return out.y;
}

static void test_truncation_banner(void) {
    AtnWindow *win = new_window();
    open_and_wait(win, f32_model);
    type_and_wait(win, "the cat");
    settle(300);
    double top = views_top(win), height = gtk_widget_get_height(gtk_widget_get_parent(atn_window_get_view_widget(win, "head")));
    /* 30 words, 22 kept (24 positions less [CLS] and [SEP]): the 22nd word is "on" */
    type_and_wait(win, "the cat sat on the mat the cat sat on the mat the cat sat on the mat the cat sat on the mat "
                       "the cat sat on the mat");
    g_assert_nonnull(atn_window_get_notice(win));
    g_assert_nonnull(strstr(atn_window_get_notice(win), "dropped"));
    g_test_message("%s", atn_window_get_notice(win));
    g_assert_nonnull(strstr(atn_window_get_notice(win), "It stops after “on”."));
    g_assert_cmpint(atn_result_get_n_tokens(atn_session_get_result(atn_window_get_session(win))), ==, 24);
    settle(600);   /* the banner's reveal animation */
    /* the banner pushes the views down by its height (over them it hid their controls) */
    double pushed = views_top(win);
    g_assert_cmpfloat(pushed, >, top);
    g_assert_cmpfloat(gtk_widget_get_height(gtk_widget_get_parent(atn_window_get_view_widget(win, "head"))) + (pushed - top),
                      ==, height);
    /* the error banner too */
    atn_session_open_model(atn_window_get_session(win), "/nonexistent/model");
    g_assert_true(wait_for(not_opening, atn_window_get_session(win)));
    settle(600);
    g_assert_nonnull(atn_window_get_error(win));
    g_assert_cmpfloat(views_top(win), >, top);   /* the error banner above the views too */
    /* a pair cut longest-first: the first sentence keeps its end, the second (18 of 30 words
       kept: 24 less [CLS], 3 words, 2 [SEP]) stops after its 18th word, "mat" */
    type_and_wait(win, "the cat sat ||| the cat sat on the mat the cat sat on the mat the cat sat on the mat the cat "
                       "sat on the mat the cat sat on the mat");
    g_test_message("%s", atn_window_get_notice(win));
    g_assert_nonnull(strstr(atn_window_get_notice(win), "The second sentence stops after “mat”."));
    g_assert_null(strstr(atn_window_get_notice(win), "It stops after"));
    type_and_wait(win, "the cat");
    g_assert_null(atn_window_get_notice(win));
    destroy_window(win);
}

/* The entry holds what the model can read plus a margin (24 positions: 1000 characters, the
 * floor) and says so; a 60k-character paste no longer reaches Pango.  The recent-models
 * menu's labels tell folders of the same name apart. */
static void test_entry_cap_and_recent_labels(void) {
    AtnWindow *win = new_window();
    open_and_wait(win, f32_model);
    GString *big = g_string_new("the cat ");
    while (big->len < 60000)
        g_string_append(big, "sat ");
    type_and_wait(win, big->str);
    g_assert_cmpint(g_utf8_strlen(atn_window_get_text(win), -1), ==, 1000);
    g_assert_cmpint(strlen(atn_session_get_text(atn_window_get_session(win))), ==, 1000);
    g_assert_cmpstr(atn_window_get_entry_note(win), ==,
                    "The sentence stops at 1000 characters: the model reads at most 24 tokens");
    type_and_wait(win, "the cat");
    g_assert_null(atn_window_get_entry_note(win));
    g_string_free(big, TRUE);
    destroy_window(win);

    const char *all[] = {"/x/a/model", "/x/b/model", "/y/other", "/p/model2", "/q/p/model2", NULL};
    const char *want[] = {"…/a/model", "…/b/model", "other", "/p/model2", "/q/p/model2"};
    for (int i = 0; all[i]; i++) {
        g_autofree char *label = atn_window_recent_label(all, all[i]);
        g_assert_cmpstr(label, ==, want[i]);
    }
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

/* The arithmetic preference: Preferences' drop-down sets it, the session reruns in bf16, and
 * the window's numbers are the engine's own bf16 run of the same input bit for bit (and not
 * the fp32 ones); back to fp32 gives the fp32 numbers again. */
static GtkDropDown *find_precision_drop(GtkWidget *w) {
    if (GTK_IS_DROP_DOWN(w)) {
        GListModel *m = gtk_drop_down_get_model(GTK_DROP_DOWN(w));
        if (m && g_list_model_get_n_items(m) == 3 && GTK_IS_STRING_LIST(m) &&
            g_str_has_prefix(gtk_string_list_get_string(GTK_STRING_LIST(m), 1), "bf16"))
            return GTK_DROP_DOWN(w);
    }
    for (GtkWidget *c = gtk_widget_get_first_child(w); c; c = gtk_widget_get_next_sibling(c)) {
        GtkDropDown *d = find_precision_drop(c);
        if (d)
            return d;
    }
    return NULL;
}

/* The first label under w whose text has `part`, or NULL. */
static GtkLabel *find_label_with(GtkWidget *w, const char *part) {
    if (GTK_IS_LABEL(w) && strstr(gtk_label_get_text(GTK_LABEL(w)), part))
        return GTK_LABEL(w);
    for (GtkWidget *c = gtk_widget_get_first_child(w); c; c = gtk_widget_get_next_sibling(c)) {
        GtkLabel *l = find_label_with(c, part);
        if (l)
            return l;
    }
    return NULL;
}

static void test_precision_pref(void) {
    AtnWindow *win = new_window();
    AtnSession *s = atn_window_get_session(win);
    open_and_wait(win, "demo");
    type_and_wait(win, "the cat sat on the [MASK] .");
    const atn_capture *c32 = atn_result_get_capture(atn_session_get_result(s));
    g_assert_cmpint(c32->precision, ==, ATN_PRECISION_FP32);
    size_t na = (size_t)c32->n_layers * c32->n_heads * c32->n * c32->n;
    g_autofree float *fp32 = g_memdup2(c32->attn, na * sizeof(float));

    /* the engine's own runs of the same tokens */
    atn_model *m = atn_model_handle_get_model(atn_session_get_model(s));
    atn_run *r = atn_run_new(m);
    atn_run_options o;
    atn_run_options_init(&o);
    o.precision = ATN_PRECISION_BF16;
    atn_error err = {0};
    g_assert_cmpint(atn_run_forward(r, c32->enc, &o, &err), ==, ATN_OK);
    const atn_capture *ref = atn_run_capture(r);

    GtkWidget *dlg = atn_preferences_dialog_new(GTK_WINDOW(win));
    gtk_window_present(GTK_WINDOW(dlg));
    GtkDropDown *drop = find_precision_drop(dlg);
    g_assert_nonnull(drop);
    g_assert_cmpuint(gtk_drop_down_get_selected(drop), ==, 0);
    model_wait w = {win, NULL, atn_session_get_n_runs(s)};
    gtk_drop_down_set_selected(drop, 1);
    g_assert_cmpstr(atn_prefs_get_precision(atn_prefs_get_default()), ==, "bf16");
    g_assert_cmpint(atn_session_get_precision(s), ==, ATN_PRECISION_BF16);
    g_assert_true(wait_for(idle_with_result, &w));
    const atn_capture *cb = atn_result_get_capture(atn_session_get_result(s));
    g_assert_cmpint(cb->precision, ==, ATN_PRECISION_BF16);
    g_assert_cmpint(memcmp(cb->attn, ref->attn, na * sizeof(float)), ==, 0);
    g_assert_cmpint(memcmp(cb->attn, fp32, na * sizeof(float)), !=, 0);

    w.runs = atn_session_get_n_runs(s);
    gtk_drop_down_set_selected(drop, 0);
    g_assert_true(wait_for(idle_with_result, &w));
    const atn_capture *c2 = atn_result_get_capture(atn_session_get_result(s));
    g_assert_cmpint(c2->precision, ==, ATN_PRECISION_FP32);
    g_assert_cmpint(memcmp(c2->attn, fp32, na * sizeof(float)), ==, 0);
    gtk_window_destroy(GTK_WINDOW(dlg));
    atn_run_free(r);
    destroy_window(win);
}

/* Half Precision…: the dialog's layers x heads map is the engine's own comparison of the
 * sentence's fp32 and bf16 (then fp16) runs, and the menu action opens it. */
static gboolean precision_dialog_done(gpointer data) { return !atn_precision_dialog_is_busy(data); }

static void check_precision_map(AtnPrecisionDialog *d, atn_model *m, const atn_encoding *enc, atn_precision p) {
    g_assert_true(wait_for(precision_dialog_done, d));
    atn_run *r32 = atn_run_new(m), *rp = atn_run_new(m);
    atn_run_options o;
    atn_run_options_init(&o);
    atn_error err = {0};
    g_assert_cmpint(atn_run_forward(r32, enc, &o, &err), ==, ATN_OK);
    o.precision = p;
    g_assert_cmpint(atn_run_forward(rp, enc, &o, &err), ==, ATN_OK);
    const atn_config *c = atn_model_config(m);
    size_t lh = (size_t)c->n_layers * c->n_heads;
    g_autofree float *mx = g_new0(float, lh);
    g_autofree float *mean = g_new0(float, lh);
    g_assert_cmpint(atn_precision_compare(atn_run_capture(r32), atn_run_capture(rp), mx, mean, NULL, NULL, &err), ==,
                    ATN_OK);
    int L = 0, H = 0;
    const float *got = atn_precision_dialog_get_max_abs(d, &L, &H);
    g_assert_nonnull(got);
    g_assert_cmpint(L, ==, c->n_layers);
    g_assert_cmpint(H, ==, c->n_heads);
    g_assert_cmpint(memcmp(got, mx, lh * sizeof(float)), ==, 0);
    float worst = 0;
    for (size_t i = 0; i < lh; i++)
        worst = mx[i] > worst ? mx[i] : worst;
    g_assert_cmpfloat(worst, >, 1e-5);
    g_assert_cmpfloat(worst, <, 5e-2);
    g_assert_nonnull(strstr(atn_precision_dialog_get_summary(d), "of 1 [MASK] guess"));
    atn_run_free(r32);
    atn_run_free(rp);
}

static void test_precision_dialog(void) {
    AtnWindow *win = new_window();
    AtnSession *s = atn_window_get_session(win);
    open_and_wait(win, "demo");
    type_and_wait(win, "the cat sat on the [MASK] .");
    const atn_encoding *enc = atn_result_get_encoding(atn_session_get_result(s));
    atn_model *m = atn_model_handle_get_model(atn_session_get_model(s));
    GtkWidget *d = atn_precision_dialog_new(GTK_WINDOW(win), s, ATN_PRECISION_BF16);
    gtk_window_present(GTK_WINDOW(d));
    check_precision_map(ATN_PRECISION_DIALOG(d), m, enc, ATN_PRECISION_BF16);
    g_assert_cmpint(atn_session_get_worker_nice_of("precision"), ==, expected_worker_nice());
    atn_precision_dialog_set_precision(ATN_PRECISION_DIALOG(d), ATN_PRECISION_FP16);
    check_precision_map(ATN_PRECISION_DIALOG(d), m, enc, ATN_PRECISION_FP16);
    gtk_window_destroy(GTK_WINDOW(d));
    /* the menu's action opens one (for the preferred precision) */
    guint before = g_list_model_get_n_items(gtk_window_get_toplevels());
    g_assert_true(gtk_widget_activate_action(GTK_WIDGET(win), "win.precision-diff", NULL));
    g_assert_cmpuint(g_list_model_get_n_items(gtk_window_get_toplevels()), ==, before + 1);
    AtnPrecisionDialog *opened = NULL;
    for (guint i = 0; i < g_list_model_get_n_items(gtk_window_get_toplevels()); i++) {
        g_autoptr(GObject) w = g_list_model_get_item(gtk_window_get_toplevels(), i);
        if (ATN_IS_PRECISION_DIALOG(w))
            opened = ATN_PRECISION_DIALOG(w);
    }
    g_assert_nonnull(opened);
    g_assert_true(wait_for(precision_dialog_done, opened));
    gtk_window_destroy(GTK_WINDOW(opened));
    destroy_window(win);
}

/* The example sentences menu sets the entries (and the pair) and runs; hovering a token chip
 * outlines that token in the heatmap. */
/* Chips show pieces as users know them: GPT-2's real vocab.json + merges.txt (byte-level
 * BPE) give "Hello" and "\u0120world", shown as "Hello" and "␣world"; "爱" is split over
 * byte-level pieces that are each part of one character; WordPiece's "##ing" and a toy
 * model's tokens stay as they are. */
static void test_chip_labels(void) {
    g_autofree char *dir = g_dir_make_tmp("atn-chips-XXXXXX", NULL);
    g_assert_nonnull(dir);
    g_autofree char *src = g_build_filename(g_getenv("ATN_SOURCE_ROOT"), "tests", "tokenizer", "models", NULL);
    g_autofree char *vs = g_build_filename(src, "gpt2-vocab.json", NULL);
    g_autofree char *ms = g_build_filename(src, "gpt2-merges.txt", NULL);
    g_autofree char *vd = g_build_filename(dir, "vocab.json", NULL);
    g_autofree char *md = g_build_filename(dir, "merges.txt", NULL);
    g_assert_cmpint(symlink(vs, vd), ==, 0);
    g_assert_cmpint(symlink(ms, md), ==, 0);
    atn_error err = {0};
    atn_text_tokenizer *t = atn_text_tokenizer_open(dir, &err);
    g_assert_nonnull(t);
    atn_encoding *enc = NULL;
    g_assert_cmpint(atn_text_tokenizer_encode(t, "Hello world", NULL, 0, &enc, &err), ==, ATN_OK);
    g_assert_cmpint(enc->n, ==, 2);
    const char *want[2] = {"Hello", "\u2423world"};
    for (int i = 0; i < 2; i++) {
        atn_token_info info;
        g_assert_true(atn_text_tokenizer_token_info(t, enc->tokens[i].id, &info));
        g_autofree char *label = atn_token_chip_label(enc->tokens[i].text, &info);
        g_assert_cmpstr(label, ==, want[i]);
    }
    g_assert_cmpstr(enc->tokens[1].text, ==, "\u0120world");
    atn_encoding_free(enc);
    enc = NULL;
    g_assert_cmpint(atn_text_tokenizer_encode(t, "\u7231", NULL, 0, &enc, &err), ==, ATN_OK);
    g_assert_cmpint(enc->n, >=, 2);
    for (int i = 0; i < enc->n; i++) {
        atn_token_info info;
        g_assert_true(atn_text_tokenizer_token_info(t, enc->tokens[i].id, &info));
        g_assert_true(info.partial_char);
    }
    atn_encoding_free(enc);
    atn_text_tokenizer_free(t);
    atn_token_info wp = {.text = "##ing", .surface = "ing", .continuation = true};
    g_autofree char *l1 = atn_token_chip_label("##ing", &wp);
    g_assert_cmpstr(l1, ==, "##ing");
    g_autofree char *l2 = atn_token_chip_label("[CLS]", NULL);
    g_assert_cmpstr(l2, ==, "[CLS]");
    unlink(vd);
    unlink(md);
    g_rmdir(dir);
}

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

/* Opening a folder shows its name and the progress bar at once, and the model shown stays
 * the session's (usable) until the new one is ready; a built-in model over a shown one
 * (milliseconds) shows no bar. */
static void test_open_progress_at_once(void) {
    AtnWindow *win = new_window();
    AtnSession *s = atn_window_get_session(win);
    open_and_wait(win, "worked-example");
    AtnModelHandle *before = atn_session_get_model(s);
    AtnResult *r_before = atn_session_get_result(s);
    g_autofree char *base = g_path_get_basename(f32_model);
    atn_session_open_model(s, f32_model);
    /* no main-loop turn yet: what the window shows the moment the open starts */
    g_assert_true(atn_window_get_open_progress_shown(win));
    g_test_message("progress: %s", atn_window_get_progress_text(win));
    g_assert_nonnull(strstr(atn_window_get_progress_text(win), base));
    g_assert_cmpstr(atn_window_get_model_label(win), ==, "worked-example");
    g_assert_true(atn_session_get_model(s) == before);
    g_assert_true(atn_session_get_result(s) == r_before);
    g_assert_true(wait_for(not_opening, s));
    settle(50);
    g_assert_false(atn_window_get_open_progress_shown(win));
    g_assert_true(atn_session_get_model(s) != before);
    g_assert_cmpstr(atn_model_handle_get_source(atn_session_get_model(s)), ==, f32_model);
    atn_session_open_model(s, "demo");
    g_assert_false(atn_window_get_open_progress_shown(win));
    g_assert_true(wait_for(not_opening, s));
    destroy_window(win);

    /* a new window, nothing open yet: the button names the model being opened */
    win = new_window();
    s = atn_window_get_session(win);
    g_assert_null(atn_session_get_model(s));
    atn_session_open_model(s, f32_model);
    g_autofree char *label = g_strdup_printf("Opening %s…", base);
    g_assert_cmpstr(atn_window_get_model_label(win), ==, label);
    g_assert_true(atn_window_get_open_progress_shown(win));
    g_assert_true(wait_for(not_opening, s));
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
    /* started on the next turn of the main loop that dispatches anything, not 60 ms later:
       the start is a default-priority source, ahead of the frame clock's layout and paint, so
       however slow those are (a loaded machine, ASan) nothing else runs first but input */
    gboolean started = FALSE;
    for (int turns = 0, i = 0; turns < 2 && i < 10000 && !started; i++) {
        turns += g_main_context_iteration(NULL, FALSE);
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
    g_autofree char *gui13 = g_build_filename(dir, "heatmap-L01-H03.png", NULL);
    g_autofree char *gui00 = g_build_filename(dir, "heatmap-L00-H00.png", NULL);
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

/* Choosing the edited toy model shown again keeps it, edits and all (it alternated between
 * the edits and a copy read again from the file); win.revert-toy puts the numbers back. */
static void test_toy_reselect_and_revert(void) {
    AtnWindow *win = new_window();
    AtnSession *s = atn_window_get_session(win);
    open_and_wait(win, "worked-example");
    AtnModelHandle *m = atn_session_get_model(s);
    AtnResult *r = atn_session_get_result(s);
    int n = atn_result_get_n_tokens(r);
    g_autofree float *orig = g_memdup2(atn_result_get_head(r, 0, 0), sizeof(float) * n * n);
    float x00 = atn_model_handle_toy_get(m, ATN_TOY_X, 0, 0, 0);
    float wq = atn_model_handle_toy_get(m, ATN_TOY_WQ, 0, 1, 0);
    g_assert_false(gtk_widget_activate_action(GTK_WIDGET(win), "win.revert-toy", NULL) &&
                   atn_model_handle_get_edited(m));   /* nothing to revert: disabled */
    /* edited as the Trace view does: a cell, then a run */
    g_assert_true(atn_model_handle_toy_set(m, ATN_TOY_X, 0, 0, 0, 1.5f, NULL));
    g_assert_true(atn_model_handle_toy_set(m, ATN_TOY_WQ, 0, 1, 0, 0.25f, NULL));
    atn_session_rerun(s);
    settle(20);
    const float *edited = atn_result_get_head(atn_session_get_result(s), 0, 0);
    g_assert_true(memcmp(edited, orig, sizeof(float) * n * n) != 0);
    g_autofree float *edited_copy = g_memdup2(edited, sizeof(float) * n * n);
    for (int k = 0; k < 3; k++) {   /* chosen again, three times: the same edited model */
        atn_session_open_model(s, "worked-example");
        settle(100);
        g_assert_null(atn_session_get_opening(s));
        g_assert_true(atn_session_get_model(s) == m);
        g_assert_cmpfloat(atn_model_handle_toy_get(m, ATN_TOY_X, 0, 0, 0), ==, 1.5f);
        g_assert_true(memcmp(atn_result_get_head(atn_session_get_result(s), 0, 0), edited_copy,
                             sizeof(float) * n * n) == 0);
    }
    g_autoptr(GPtrArray) unsaved = atn_session_dup_unsaved_toys(s);
    g_assert_cmpuint(unsaved->len, ==, 1);   /* the one shown, not a hidden copy besides */
    g_assert_true(atn_model_handle_get_modified(m));

    /* Revert to the original numbers: the same model, the numbers as opened, its attention
       exactly the first run's, nothing left unsaved */
    g_assert_true(gtk_widget_activate_action(GTK_WIDGET(win), "win.revert-toy", NULL));
    settle(20);
    g_assert_true(atn_session_get_model(s) == m);
    g_assert_cmpfloat(atn_model_handle_toy_get(m, ATN_TOY_X, 0, 0, 0), ==, x00);
    g_assert_cmpfloat(atn_model_handle_toy_get(m, ATN_TOY_WQ, 0, 1, 0), ==, wq);
    g_assert_false(atn_model_handle_get_edited(m));
    g_assert_false(atn_model_handle_get_modified(m));
    g_assert_true(memcmp(atn_result_get_head(atn_session_get_result(s), 0, 0), orig, sizeof(float) * n * n) == 0);
    g_assert_cmpstr(atn_window_get_status(win), ==, "Back to the original numbers");
    destroy_window(win);
}

/* The keyboard-shortcuts window lists the heatmap's keys and Save Session (Ctrl+Shift+S, issue
 * 40: a row added to General made a second page), on one page: GTK 4.8's page switcher warned
 * "GtkLabel reported min width -4" (fatal here: G_DEBUG=fatal-warnings). */
static void collect_shortcuts(GtkWidget *w, GString *titles, int *stacks_pages) {
    if (GTK_IS_SHORTCUTS_SHORTCUT(w) && gtk_widget_get_visible(w)) {
        g_autofree char *title = NULL;
        g_object_get(w, "title", &title, NULL);
        g_string_append_printf(titles, "%s|", title);
    }
    if (GTK_IS_STACK(w)) {
        int shown = 0;
        for (GtkWidget *c = gtk_widget_get_first_child(w); c; c = gtk_widget_get_next_sibling(c))
            shown++;
        *stacks_pages = MAX(*stacks_pages, shown);
    }
    for (GtkWidget *c = gtk_widget_get_first_child(w); c; c = gtk_widget_get_next_sibling(c))
        collect_shortcuts(c, titles, stacks_pages);
}

static void test_help_overlay(void) {
    g_autoptr(GtkBuilder) b = gtk_builder_new_from_resource("/io/github/attnscope/Attnscope/gtk/help-overlay.ui");
    GtkWidget *help = GTK_WIDGET(gtk_builder_get_object(b, "help_overlay"));
    g_assert_nonnull(help);
    gtk_window_set_default_size(GTK_WINDOW(help), 1280, 800);
    gtk_window_present(GTK_WINDOW(help));
    g_assert_true(wait_for(is_drawable, help));
    settle(500);   /* laid out and drawn on the screen: a size warning would have aborted */
    g_autoptr(GString) titles = g_string_new(NULL);
    int pages = 0;
    collect_shortcuts(help, titles, &pages);
    g_test_message("shortcuts: %s (%d)", titles->str, pages);
    const char *want[] = {"Zoom in", "Zoom out", "The whole matrix again", "Move the cell: query row, key column",
                          "First / last key", "Half a view up / down", "Zoom at the pointer", "Pan when zoomed",
                          "Save the session"};
    for (guint i = 0; i < G_N_ELEMENTS(want); i++) {
        g_autofree char *t = g_strdup_printf("|%s|", want[i]);
        g_autofree char *all = g_strdup_printf("|%s", titles->str);
        g_assert_nonnull(strstr(all, t));
    }
    gtk_window_destroy(GTK_WINDOW(help));
    settle(50);
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
    /* the first sentence is a Chinese one (settings in memory: nothing remembered) */
    g_assert_cmpstr(atn_gui_language(), ==, "zh-cn");
    g_assert_cmpstr(atn_window_get_text(win), ==, "他把书放在桌子上，然后开始读它。");
    {   /* Preferences' memory budget in Chinese */
        atn_ui_set_memory_limit((size_t)2 << 30);
        GtkWidget *dlg = atn_preferences_dialog_new(GTK_WINDOW(win));
        gtk_window_present(GTK_WINDOW(dlg));
        GtkLabel *lab = find_label_with(dlg, "由 --memory-limit 设定");
        g_assert_nonnull(lab);
        g_assert_nonnull(find_label_with(dlg, "内存预算"));
        gtk_window_destroy(GTK_WINDOW(dlg));
        atn_ui_set_memory_limit(0);
    }
    /* the widgets' Han characters in the Simplified Chinese face too: a token chip's label
       and the sentence entry (fontconfig's first CJK face, JP, before) */
    open_and_wait(win, "demo");
    GtkWidget *chip = atn_token_chips_get_chip(ATN_TOKEN_CHIPS(atn_window_get_token_chips(win)), 1);
    GtkWidget *label = GTK_IS_LABEL(chip) ? chip : gtk_widget_get_first_child(chip);
    while (label && !GTK_IS_LABEL(label))
        label = gtk_widget_get_first_child(label);
    g_assert_nonnull(label);
    g_assert_cmpstr(gtk_label_get_text(GTK_LABEL(label)), ==, "他");
    PangoLayoutIter *it = pango_layout_get_iter(gtk_label_get_layout(GTK_LABEL(label)));
    PangoLayoutRun *run = pango_layout_iter_get_run_readonly(it);
    g_assert_nonnull(run);
    PangoFontDescription *d = pango_font_describe(run->item->analysis.font);
    g_test_message("chip face: %s", pango_font_description_get_family(d));
    g_assert_cmpstr(pango_font_description_get_family(d), ==, "Noto Sans CJK SC");
    pango_font_description_free(d);
    pango_layout_iter_free(it);

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
        /* Han characters in the Simplified Chinese face, although the locale is C.UTF-8
           (fontconfig's first CJK face, JP, before) */
        g_autofree char *fonts = NULL, *pdffonts = g_find_program_in_path("pdffonts");
        const char *fargv[] = {"pdffonts", pdf, NULL};
        if (pdffonts &&
            g_spawn_sync(NULL, (char **)fargv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, &fonts, NULL, NULL, NULL)) {
            g_test_message("%s fonts: %s", cases[c].view, fonts);
            g_assert_nonnull(strstr(fonts, "NotoSansCJKsc"));
            g_assert_null(strstr(fonts, "NotoSansCJKjp"));
        }
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

/* LANGUAGE=zh_CN: an engine reason inside the banner is Chinese too (the engine's format
 * translated by po/zh_CN.po, its arguments kept): a config.json without hidden_size. */
static void test_chinese_engine_error(void) {
    g_autofree char *dir = g_dir_make_tmp("atn-zh-bad-XXXXXX", NULL);
    g_autofree char *cfg = g_build_filename(dir, "config.json", NULL);
    g_assert_true(g_file_set_contents(cfg, "{\"model_type\": \"bert\", \"num_attention_heads\": 2}", -1, NULL));
    AtnWindow *win = new_window();
    open_and_wait(win, "worked-example");
    AtnSession *s = atn_window_get_session(win);
    AtnModelHandle *before = atn_session_get_model(s);
    atn_session_open_model(s, dir);
    g_assert_true(wait_for(not_opening, s));
    const char *error = atn_window_get_error(win);
    g_assert_nonnull(error);
    g_test_message("banner: %s", error);
    g_autofree char *want = g_strdup_printf("%s/config.json：缺少键“hidden_size”", dir);
    g_assert_nonnull(strstr(error, want));          /* the reason, in Chinese, naming file and key */
    g_assert_null(strstr(error, "missing key"));    /* no English left */
    g_assert_null(strstr(error, "Could not open")); /* the banner's own sentence too */
    g_assert_true(atn_session_get_model(s) == before);
    destroy_window(win);
    g_remove(cfg);
    g_rmdir(dir);
}

/* The status line says what an action did only until the next action; a toy model's
 * entries do not show the sentence of the model before (it comes back after). */
static void test_status_and_toy_text(void) {
    AtnWindow *win = new_window();
    AtnSession *s = atn_window_get_session(win);
    open_and_wait(win, "demo");
    type_and_wait(win, "the cat sat on the mat.");
    show_view(win, "head");
    int n = atn_result_get_n_tokens(atn_session_get_result(s));
    g_autofree char *run = g_strdup_printf("demo · %d tokens", n);
    g_assert_true(g_str_has_prefix(atn_window_get_status(win), run));
    g_assert_true(gtk_widget_activate_action(GTK_WIDGET(win), "win.copy-figure", NULL));
    g_assert_cmpstr(atn_window_get_status(win), ==, "Figure copied to the clipboard");
    atn_session_select_head(s, 1, 2);
    settle(20);
    g_assert_true(g_str_has_prefix(atn_window_get_status(win), run));
    g_assert_true(gtk_widget_activate_action(GTK_WIDGET(win), "win.copy-figure", NULL));
    show_view(win, "model");
    g_assert_true(g_str_has_prefix(atn_window_get_status(win), run));
    g_assert_true(gtk_widget_activate_action(GTK_WIDGET(win), "win.copy-figure", NULL));
    atn_session_set_query(s, 3);
    g_assert_true(g_str_has_prefix(atn_window_get_status(win), run));

    /* a toy model: empty entries, the sentence kept (session and preferences) for later */
    g_assert_cmpstr(atn_window_get_text(win), ==, "the cat sat on the mat.");
    open_and_wait(win, "worked-example");
    g_assert_cmpstr(atn_window_get_text(win), ==, "");
    g_assert_cmpstr(atn_session_get_text(s), ==, "the cat sat on the mat.");
    g_assert_cmpstr(atn_prefs_get_example_text(atn_prefs_get_default()), ==, "the cat sat on the mat.");
    g_assert_true(g_str_has_prefix(atn_window_get_status(win), "worked-example · 3 tokens"));
    open_and_wait(win, "demo");
    g_assert_cmpstr(atn_window_get_text(win), ==, "the cat sat on the mat.");
    g_assert_cmpint(atn_result_get_n_tokens(atn_session_get_result(s)), ==, n);
    destroy_window(win);
}

static gboolean run_refused(gpointer data) {
    AtnWindow *win = data;
    AtnSession *s = atn_window_get_session(win);
    return !atn_session_get_busy(s) && !atn_session_get_opening(s) && atn_window_get_error(win) &&
           *atn_window_get_error(win);
}

/* The window's command-line options: --view with no such view exits 2 naming the option and
 * the views (before any window), as --memory-limit with a text that is not a size; a budget
 * set (atn_ui_set_memory_limit, what --memory-limit sets) bounds the window's runs; the view names are the template's pages; --layer/--head
 * outside the model say so in the notice bar, naming each option and the model's range. */
static void test_start_options(void) {
    g_autofree char *exe = g_build_filename(g_getenv("ATN_BUILD_ROOT"), "app", "attnscope", NULL);
    const char *argv[] = {exe, "--view", "nonsense", NULL};
    int status = 0;
    g_autofree char *out = NULL, *err = NULL;
    /* no display: without the check it would fail to open one rather than wait for a user */
    g_auto(GStrv) env = g_environ_unsetenv(g_environ_unsetenv(g_get_environ(), "DISPLAY"), "WAYLAND_DISPLAY");
    g_assert_true(g_spawn_sync(NULL, (char **)argv, env, G_SPAWN_DEFAULT, NULL, NULL, &out, &err, &status, NULL));
    g_test_message("--view nonsense: status %d, stderr %s", status, err);
    g_assert_true(WIFEXITED(status));
    g_assert_cmpint(WEXITSTATUS(status), ==, 2);
    g_assert_cmpstr(err, ==, "attnscope: --view nonsense: no such view; the views are head, model, similarity, "
                             "trace, statistics, whatif, train\n");
    /* --memory-limit: a size as the commands read it, else exit 2 naming the option and the text */
    const char *argv_lim[] = {exe, "--memory-limit", "12X", NULL};
    g_clear_pointer(&out, g_free);
    g_clear_pointer(&err, g_free);
    g_assert_true(g_spawn_sync(NULL, (char **)argv_lim, env, G_SPAWN_DEFAULT, NULL, NULL, &out, &err, &status, NULL));
    g_assert_true(WIFEXITED(status));
    g_assert_cmpint(WEXITSTATUS(status), ==, 2);
    g_assert_cmpstr(err, ==, "attnscope: --memory-limit must be a size such as 800M, 2G or 1500000000 (bytes), not "
                             "\"12X\"\n");
    size_t bytes = 0;
    g_assert_true(atn_ui_parse_size("1.5GiB", &bytes));
    g_assert_cmpuint(bytes, ==, 1610612736);
    g_assert_true(atn_ui_parse_size("20000", &bytes) && bytes == 20000);
    g_assert_false(atn_ui_parse_size("0", &bytes) || atn_ui_parse_size("2Q", &bytes) || atn_ui_parse_size(" 1", &bytes));
    {   /* the window's runs use it: demo's run of 8 tokens needs 0.1 MB, over a 20,000-byte budget */
        atn_ui_set_memory_limit(20000);
        AtnWindow *lw = new_window();
        AtnSession *ls = atn_window_get_session(lw);
        atn_session_open_model(ls, "demo");
        g_assert_true(wait_for(run_refused, lw));
        g_test_message("20000-byte budget: %s", atn_window_get_error(lw));
        g_assert_nonnull(strstr(atn_window_get_error(lw), "more than the 0.0 MB allowed"));
        g_assert_null(atn_session_get_result(ls));
        /* the budget is shown in Preferences: --memory-limit's, else the default's bound now */
        atn_ui_set_memory_limit((size_t)800 << 20);
        GtkWidget *dlg = atn_preferences_dialog_new(GTK_WINDOW(lw));
        gtk_window_present(GTK_WINDOW(dlg));
        GtkLabel *lab = find_label_with(dlg, "MiB");
        g_assert_nonnull(lab);
        g_assert_cmpstr(gtk_label_get_text(lab), ==, "800.0\u00a0MiB, from --memory-limit");   /* GLib: a no-break space */
        gtk_window_destroy(GTK_WINDOW(dlg));
        atn_ui_set_memory_limit(0);
        dlg = atn_preferences_dialog_new(GTK_WINDOW(lw));
        gtk_window_present(GTK_WINDOW(dlg));
        lab = find_label_with(dlg, "now: the default, ");
        g_assert_nonnull(lab);
        atn_memory_bound bound;
        size_t budget = atn_default_memory_budget(&bound);
        g_autofree char *size = g_format_size_full(budget, G_FORMAT_SIZE_IEC_UNITS);
        g_test_message("default budget: %s", gtk_label_get_text(lab));
        if (bound == ATN_MEMORY_BOUND_PHYSICAL)   /* a cgroup's usage moves between the two reads */
            g_assert_true(g_str_has_prefix(gtk_label_get_text(lab), size));
        g_assert_nonnull(strstr(gtk_label_get_text(lab), bound == ATN_MEMORY_BOUND_PHYSICAL ? "3/4 of this computer's memory"
                                                         : bound == ATN_MEMORY_BOUND_CGROUP ? "memory cgroup" : "ulimit -v"));
        gtk_window_destroy(GTK_WINDOW(dlg));
        destroy_window(lw);
    }

    AtnWindow *win = new_window();
    const char *const *names = atn_window_get_view_names();
    int k = 0;
    for (GtkWidget *page = gtk_widget_get_first_child(atn_window_get_view_widget(win, "head") ?
                                                      gtk_widget_get_parent(atn_window_get_view_widget(win, "head"))
                                                      : NULL); page; page = gtk_widget_get_next_sibling(page), k++) {
        GtkStackPage *sp = gtk_stack_get_page(GTK_STACK(gtk_widget_get_parent(page)), page);
        g_assert_nonnull(names[k]);
        g_assert_cmpstr(gtk_stack_page_get_name(sp), ==, names[k]);
    }
    g_assert_null(names[k]);

    AtnSession *s = atn_window_get_session(win);
    atn_window_start_on_head(win, 99, 99);
    open_and_wait(win, "demo");
    AtnResult *r = atn_session_get_result(s);
    int L = atn_result_get_n_layers(r), H = atn_result_get_n_heads(r);
    g_assert_cmpint(atn_session_get_layer(s), ==, L - 1);
    g_assert_cmpint(atn_session_get_head(s), ==, H - 1);
    g_autofree char *want = g_strdup_printf("--layer 99: “demo” has layers 0 to %d; showing layer %d. --head 99: "
                                            "“demo” has heads 0 to %d; showing head %d.", L - 1, L - 1, H - 1, H - 1);
    g_assert_cmpstr(atn_window_get_notice(win), ==, want);
    /* in range: no notice, the head is selected */
    destroy_window(win);
    win = new_window();
    s = atn_window_get_session(win);
    atn_window_start_on_head(win, 1, 2);
    open_and_wait(win, "demo");
    g_assert_null(atn_window_get_notice(win));
    g_assert_cmpint(atn_session_get_layer(s), ==, 1);
    g_assert_cmpint(atn_session_get_head(s), ==, 2);
    destroy_window(win);
}

/* A model in huggingface_hub's cache layout (blobs, relative symlinks, refs) built from the
 * f32 test model: commit c1 is main, c2 is the tag v1. */
static char *make_hf_cache(void) {
    char *cache = g_dir_make_tmp("atn-hub-XXXXXX", NULL);
    const char *c1 = "1111111111111111111111111111111111111111", *c2 = "2222222222222222222222222222222222222222";
    const char *files[] = {"config.json", "model.safetensors", "vocab.txt"};
    g_autofree char *repo = g_build_filename(cache, "models--org--tiny", NULL);
    g_autofree char *blobs = g_build_filename(repo, "blobs", NULL);
    g_autofree char *refs = g_build_filename(repo, "refs", NULL);
    g_assert_cmpint(g_mkdir_with_parents(blobs, 0755), ==, 0);
    g_assert_cmpint(g_mkdir_with_parents(refs, 0755), ==, 0);
    const char *commits[] = {c1, c2};
    for (int c = 0; c < 2; c++) {
        g_autofree char *snap = g_build_filename(repo, "snapshots", commits[c], NULL);
        g_assert_cmpint(g_mkdir_with_parents(snap, 0755), ==, 0);
        for (int i = 0; i < 3; i++) {
            g_autofree char *from = g_build_filename(f32_model, files[i], NULL);
            g_autofree char *data = NULL;
            gsize len = 0;
            g_assert_true(g_file_get_contents(from, &data, &len, NULL));
            g_autofree char *tag = g_compute_checksum_for_data(G_CHECKSUM_SHA1, (const guchar *)data, len);
            g_autofree char *blob = g_build_filename(blobs, tag, NULL);
            g_assert_true(g_file_set_contents(blob, data, (gssize)len, NULL));
            g_autofree char *link = g_build_filename(snap, files[i], NULL);
            g_autofree char *target = g_strconcat("../../blobs/", tag, NULL);
            g_assert_cmpint(symlink(target, link), ==, 0);
        }
    }
    g_autofree char *main_ref = g_build_filename(refs, "main", NULL);
    g_autofree char *v1_ref = g_build_filename(refs, "v1", NULL);
    g_assert_true(g_file_set_contents(main_ref, c1, -1, NULL));
    g_assert_true(g_file_set_contents(v1_ref, c2, -1, NULL));
    return cache;
}

static int rm_tree(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
    return remove(path);
}

/* The model chooser's "Downloaded Models" lists the Hugging Face cache; choosing one opens it. */
static void test_downloaded_models(void) {
    g_autofree char *cache = make_hf_cache();
    g_setenv("HF_HUB_CACHE", cache, TRUE);
    AtnWindow *win = new_window();
    GMenuModel *menu = atn_window_get_model_menu(win);
    GMenuModel *down = NULL;
    for (int i = 0; i < g_menu_model_get_n_items(menu); i++) {
        g_autofree char *label = NULL;
        if (g_menu_model_get_item_attribute(menu, i, G_MENU_ATTRIBUTE_LABEL, "s", &label) &&
            !g_strcmp0(label, "Downloaded Models")) {
            g_assert_cmpint(i, ==, 1);   /* right after the built-in models */
            down = g_menu_model_get_item_link(menu, i, G_MENU_LINK_SECTION);
        }
    }
    g_assert_nonnull(down);
    g_assert_cmpint(g_menu_model_get_n_items(down), ==, 2);
    const char *want_labels[] = {"org/tiny", "org/tiny @ v1"};
    const char *want_targets[] = {"org/tiny", "org/tiny@2222222222222222222222222222222222222222"};
    for (int i = 0; i < 2; i++) {
        g_autofree char *label = NULL, *action = NULL;
        g_assert_true(g_menu_model_get_item_attribute(down, i, G_MENU_ATTRIBUTE_LABEL, "s", &label));
        g_assert_true(g_menu_model_get_item_attribute(down, i, G_MENU_ATTRIBUTE_ACTION, "s", &action));
        g_autoptr(GVariant) target = g_menu_model_get_item_attribute_value(down, i, G_MENU_ATTRIBUTE_TARGET,
                                                                           G_VARIANT_TYPE_STRING);
        g_assert_cmpstr(label, ==, want_labels[i]);
        g_assert_cmpstr(action, ==, "win.open-model");
        g_assert_cmpstr(g_variant_get_string(target, NULL), ==, want_targets[i]);
    }
    g_object_unref(down);
    /* choosing the v1 entry opens that snapshot, named as chosen */
    AtnSession *s = atn_window_get_session(win);
    model_wait w = {win, want_targets[1], atn_session_get_n_runs(s)};
    g_assert_true(gtk_widget_activate_action(GTK_WIDGET(win), "win.open-model", "s", want_targets[1]));
    g_assert_true(wait_for(idle_with_result, &w));
    g_assert_cmpstr(atn_model_handle_get_name(atn_session_get_model(s)), ==, want_targets[1]);
    /* an id that is not in the cache: the error says where it looked */
    atn_session_open_model(s, "org/nothere");
    g_assert_true(wait_for(not_opening, s));
    g_assert_nonnull(atn_window_get_error(win));
    g_assert_nonnull(strstr(atn_window_get_error(win), "models--org--nothere"));
    destroy_window(win);
    /* an empty cache: no such section */
    g_autofree char *empty = g_build_filename(cache, "empty", NULL);
    g_setenv("HF_HUB_CACHE", empty, TRUE);
    win = new_window();
    menu = atn_window_get_model_menu(win);
    for (int i = 0; i < g_menu_model_get_n_items(menu); i++) {
        g_autofree char *label = NULL;
        if (g_menu_model_get_item_attribute(menu, i, G_MENU_ATTRIBUTE_LABEL, "s", &label))
            g_assert_cmpstr(label, !=, "Downloaded Models");
    }
    /* the cache fills while the window is open (another program downloads): the chooser
       lists it the next time it opens */
    g_setenv("HF_HUB_CACHE", cache, TRUE);
    GtkWidget *button = NULL;
    for (GtkWidget *it = GTK_WIDGET(win); it && !button;) {
        if (GTK_IS_MENU_BUTTON(it) && gtk_menu_button_get_menu_model(GTK_MENU_BUTTON(it)) == menu)
            button = it;
        else if (gtk_widget_get_first_child(it))
            it = gtk_widget_get_first_child(it);
        else {
            while (it && !gtk_widget_get_next_sibling(it) && it != GTK_WIDGET(win))
                it = gtk_widget_get_parent(it);
            it = it && it != GTK_WIDGET(win) ? gtk_widget_get_next_sibling(it) : NULL;
        }
    }
    g_assert_nonnull(button);
    gtk_menu_button_popup(GTK_MENU_BUTTON(button));
    gboolean listed = FALSE;
    for (int i = 0; i < g_menu_model_get_n_items(menu); i++) {
        g_autofree char *label = NULL;
        if (g_menu_model_get_item_attribute(menu, i, G_MENU_ATTRIBUTE_LABEL, "s", &label))
            listed |= !g_strcmp0(label, "Downloaded Models");
    }
    g_assert_true(listed);
    gtk_menu_button_popdown(GTK_MENU_BUTTON(button));
    destroy_window(win);
    g_unsetenv("HF_HUB_CACHE");
    nftw(cache, rm_tree, 16, FTW_DEPTH | FTW_PHYS);
}

/* ---- Get a Model…, against the fake Hub of tests/hub ---------------------------------------- */

typedef struct state_wait {
    AtnGetModelDialog *d;
    AtnGetModelState state;
} state_wait;

static gboolean in_state(gpointer data) {
    state_wait *w = data;
    return atn_get_model_dialog_get_state(w->d) == w->state;
}

static gboolean some_progress(gpointer data) {
    return atn_get_model_dialog_get_fraction(data) > 0.05;
}

static void test_get_model(void) {
    g_autofree char *python = g_find_program_in_path("python3");
    if (!python) {
        g_test_skip("no python3 for the fake Hub");
        return;
    }
    g_autofree char *dir = g_dir_make_tmp("atn-getmodel-XXXXXX", NULL);
    g_autofree char *server = g_build_filename(g_getenv("ATN_SOURCE_ROOT"), "tests", "hub", "fake_hub.py", NULL);
    g_autofree char *models = g_build_filename(g_getenv("ATN_SOURCE_ROOT"), "tests", "hf", "models", NULL);
    g_autofree char *port_file = g_build_filename(dir, "port", NULL);
    g_autofree char *log = g_build_filename(dir, "log", NULL);
    g_autofree char *cache = g_build_filename(dir, "hub", NULL);
    const char *argv[] = {python, server, "--models", models, "--port-file", port_file, "--log", log, NULL};
    GPid pid;
    /* its output not on ours: a test that fails must not leave meson waiting on the pipe */
    g_assert_true(g_spawn_async(NULL, (char **)argv, NULL,
                                G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_STDOUT_TO_DEV_NULL | G_SPAWN_STDERR_TO_DEV_NULL,
                                NULL, NULL, &pid, NULL));
    for (int i = 0; i < 400 && !g_file_test(port_file, G_FILE_TEST_EXISTS); i++)
        g_usleep(20000);
    g_autofree char *port = NULL;
    g_assert_true(g_file_get_contents(port_file, &port, NULL, NULL));
    g_autofree char *endpoint = g_strdup_printf("http://127.0.0.1:%s", port);
    g_setenv("HF_ENDPOINT", endpoint, TRUE);
    g_setenv("HF_HUB_CACHE", cache, TRUE);
    g_unsetenv("HF_TOKEN");
    g_unsetenv("HF_HUB_OFFLINE");

    AtnWindow *win = new_window();
    AtnSession *s = atn_window_get_session(win);
    open_and_wait(win, "demo");
    AtnGetModelDialog *d = g_object_ref(atn_get_model_dialog_new(win));
    gtk_window_present(GTK_WINDOW(d));
    /* an unknown id: the Hub's 404, said */
    atn_get_model_dialog_set_id(d, "org/nothere");
    atn_get_model_dialog_look_up(d);
    state_wait w = {d, ATN_GET_MODEL_FAILED};
    g_assert_true(wait_for(in_state, &w));
    g_assert_nonnull(strstr(atn_get_model_dialog_get_message(d), "no model repository \"org/nothere\""));
    /* the file list, then Download and Open */
    atn_get_model_dialog_set_id(d, "org/tiny");
    atn_get_model_dialog_look_up(d);
    w.state = ATN_GET_MODEL_READY;
    g_assert_true(wait_for(in_state, &w));
    g_assert_cmpint(atn_get_model_dialog_get_n_files(d), ==, 3);
    g_assert_nonnull(strstr(atn_get_model_dialog_get_message(d), "3 files"));
    model_wait mw = {win, "org/tiny", atn_session_get_n_runs(s)};
    atn_get_model_dialog_download(d);
    g_assert_true(wait_for(idle_with_result, &mw));
    g_assert_cmpint(atn_get_model_dialog_get_state(d), ==, ATN_GET_MODEL_DONE);
    g_assert_cmpfloat(atn_get_model_dialog_get_fraction(d), ==, 1.0);
    g_assert_cmpstr(atn_model_handle_get_name(atn_session_get_model(s)), ==, "org/tiny");
    g_assert_false(gtk_widget_get_visible(GTK_WIDGET(d)));   /* closed itself */
    /* the chooser lists it now */
    GMenuModel *menu = atn_window_get_model_menu(win);
    g_autofree char *label = NULL;
    g_assert_true(g_menu_model_get_item_attribute(menu, 1, G_MENU_ATTRIBUTE_LABEL, "s", &label));
    g_assert_cmpstr(label, ==, "Downloaded Models");
    g_object_unref(d);

    /* Cancel while downloading: the partial file kept; Download again finishes it */
    d = g_object_ref(atn_get_model_dialog_new(win));
    gtk_window_present(GTK_WINDOW(d));
    atn_get_model_dialog_set_id(d, "org/slow");
    atn_get_model_dialog_look_up(d);
    w = (state_wait){d, ATN_GET_MODEL_READY};
    g_assert_true(wait_for(in_state, &w));
    atn_get_model_dialog_download(d);
    g_assert_true(wait_for(some_progress, d));
    atn_get_model_dialog_cancel(d);
    w.state = ATN_GET_MODEL_CANCELLED;
    g_assert_true(wait_for(in_state, &w));
    g_assert_nonnull(strstr(atn_get_model_dialog_get_message(d), "Cancelled"));
    g_autofree char *blobs = g_build_filename(cache, "models--org--slow", "blobs", NULL);
    GDir *bd = g_dir_open(blobs, 0, NULL);
    g_assert_nonnull(bd);
    int incomplete = 0;
    for (const char *n; (n = g_dir_read_name(bd));)
        incomplete += g_str_has_suffix(n, ".incomplete");
    g_dir_close(bd);
    g_assert_cmpint(incomplete, ==, 1);
    mw = (model_wait){win, "org/slow", atn_session_get_n_runs(s)};
    atn_get_model_dialog_download(d);
    g_assert_true(wait_for(idle_with_result, &mw));
    g_assert_cmpint(atn_get_model_dialog_get_state(d), ==, ATN_GET_MODEL_DONE);
    g_object_unref(d);
    destroy_window(win);

    kill(pid, SIGTERM);
    waitpid(pid, NULL, 0);
    g_spawn_close_pid(pid);
    g_unsetenv("HF_ENDPOINT");
    g_unsetenv("HF_HUB_CACHE");
    nftw(dir, rm_tree, 16, FTW_DEPTH | FTW_PHYS);
}

/* ---- the export dialogs (GtkFileChooserNative's own dialog: no portal under Xvfb) ---------- */

static GtkWidget *find_chooser_dialog(void) {
    GListModel *tops = gtk_window_get_toplevels();
    for (guint i = 0; i < g_list_model_get_n_items(tops); i++) {
        g_autoptr(GObject) w = g_list_model_get_item(tops, i);
        if (GTK_IS_FILE_CHOOSER(w) && gtk_widget_get_visible(GTK_WIDGET(w)))
            return GTK_WIDGET(w);
    }
    return NULL;
}

static gboolean chooser_shown(gpointer data) {
    *(GtkWidget **)data = find_chooser_dialog();
    return *(GtkWidget **)data != NULL;
}

/* The text each visible drop-down shows, "|"-joined, in tree order. */
static void dropdowns_shown(GtkWidget *w, GString *out) {
    if (GTK_IS_DROP_DOWN(w) && gtk_widget_get_visible(w)) {
        GObject *item = gtk_drop_down_get_selected_item(GTK_DROP_DOWN(w));
        const char *text = item && GTK_IS_STRING_OBJECT(item) ? gtk_string_object_get_string(GTK_STRING_OBJECT(item))
                           : item && GTK_IS_FILE_FILTER(item) ? gtk_file_filter_get_name(GTK_FILE_FILTER(item))
                                                               : item ? G_OBJECT_TYPE_NAME(item) : "(no item)";
        g_string_append_printf(out, "%s|", text);
        return;
    }
    for (GtkWidget *c = gtk_widget_get_first_child(w); c; c = gtk_widget_get_next_sibling(c))
        if (gtk_widget_get_visible(c))
            dropdowns_shown(c, out);
}

static void select_choice(GtkWidget *w, const char *label) {
    if (GTK_IS_DROP_DOWN(w)) {
        GListModel *m = gtk_drop_down_get_model(GTK_DROP_DOWN(w));
        for (guint i = 0; m && i < g_list_model_get_n_items(m); i++) {
            g_autoptr(GObject) it = g_list_model_get_item(m, i);
            if (GTK_IS_STRING_OBJECT(it) && !strcmp(gtk_string_object_get_string(GTK_STRING_OBJECT(it)), label))
                gtk_drop_down_set_selected(GTK_DROP_DOWN(w), i);
        }
        return;
    }
    for (GtkWidget *c = gtk_widget_get_first_child(w); c; c = gtk_widget_get_next_sibling(c))
        select_choice(c, label);
}

typedef struct saved_wait {
    AtnWindow *win;
    const char *path;
} saved_wait;

static gboolean file_saved(gpointer data) {
    saved_wait *w = data;
    const char *st = atn_window_get_status(w->win);
    return st && strstr(st, w->path) != NULL;
}

/* Opens Export…, optionally picks a format label, types name, accepts; returns the folder
 * the dialog opened in.  The written file is dir/expected. */
static char *export_via_dialog(AtnWindow *win, const char *dir, const char *name, const char *format_label,
                               const char *expected, GString *shown) {
    g_assert_true(gtk_widget_activate_action(GTK_WIDGET(win), "win.export", NULL));
    GtkWidget *d = NULL;
    g_assert_true(wait_for(chooser_shown, &d));
    settle(50);
    g_autoptr(GFile) start = gtk_file_chooser_get_current_folder(GTK_FILE_CHOOSER(d));
    char *opened = start ? g_file_get_path(start) : g_strdup("");
    if (shown)
        dropdowns_shown(d, shown);
    /* no filter list: the dialog has no "(None)" entry to choose */
    g_autoptr(GListModel) filters = gtk_file_chooser_get_filters(GTK_FILE_CHOOSER(d));
    g_assert_cmpuint(g_list_model_get_n_items(filters), ==, 0);
    if (format_label)
        select_choice(d, format_label);
    g_autoptr(GFile) folder = g_file_new_for_path(dir);
    g_assert_true(gtk_file_chooser_set_current_folder(GTK_FILE_CHOOSER(d), folder, NULL));
    gtk_file_chooser_set_current_name(GTK_FILE_CHOOSER(d), name);
    settle(50);
    gtk_dialog_response(GTK_DIALOG(d), GTK_RESPONSE_ACCEPT);
    g_autofree char *path = g_build_filename(dir, expected, NULL);
    saved_wait w = {win, path};
    g_assert_true(wait_for(file_saved, &w));
    return opened;
}

static gboolean has_magic(const char *path, const char *magic) {
    g_autofree char *data = NULL;
    gsize len = 0;
    return g_file_get_contents(path, &data, &len, NULL) && len > strlen(magic) &&
           !memcmp(data, magic, strlen(magic));
}

static void corpus_chosen(GtkWidget *from, const char *path) {}

static void test_export_dialog(void) {
    g_autofree char *dir = g_dir_make_tmp("atn-dlg-XXXXXX", NULL);
    AtnWindow *win = new_window();
    open_and_wait(win, "worked-example");
    show_view(win, "head");
    /* the figure at 1x, to compare sizes */
    g_autofree char *one = g_build_filename(dir, "one.png", NULL);
    g_assert_true(atn_window_export_to(win, one, 1.0, NULL));
    int w1, h1, w2, h2;
    g_assert_true(png_size(one, &w1, &h1));

    /* the scale shown is the one used: 2x (slides) */
    g_autoptr(GString) shown = g_string_new(NULL);
    g_autofree char *first = export_via_dialog(win, dir, "head.png", NULL, "head.png", shown);
    g_autofree char *cwd = g_get_current_dir();
    g_assert_cmpstr(first, ==, cwd);   /* nothing exported yet: the working directory */
    g_test_message("drop-downs: %s", shown->str);
    g_assert_nonnull(strstr(shown->str, "2× (slides)"));
    g_assert_null(strstr(shown->str, "(no item)"));   /* the empty filter list, "(None)" */
    g_assert_null(strstr(shown->str, "1× (screen)"));
    g_autofree char *head = g_build_filename(dir, "head.png", NULL);
    g_assert_true(png_size(head, &w2, &h2));
    g_assert_cmpint(w2, ==, 2 * w1);
    g_assert_cmpint(h2, ==, 2 * h1);

    /* the typed extension wins over the Format choice: PDF with head.pdf typed writes a PDF
       (the Format drop-down at PNG); the next dialog opens where that export went */
    g_autofree char *sub = g_build_filename(dir, "sub", NULL);
    g_mkdir(sub, 0700);
    g_free(export_via_dialog(win, sub, "head.pdf", "PNG image", "head.pdf", NULL));
    g_autofree char *pdf = g_build_filename(sub, "head.pdf", NULL);
    g_autofree char *png_in_sub = g_build_filename(sub, "head.png", NULL);
    g_assert_true(has_magic(pdf, "%PDF"));
    g_assert_false(g_file_test(png_in_sub, G_FILE_TEST_EXISTS));
    /* a name without an extension gets the format's; SVG chosen */
    g_autofree char *opened = export_via_dialog(win, sub, "plain", "SVG drawing", "plain.svg", NULL);
    g_assert_cmpstr(opened, ==, sub);
    g_autofree char *svg = g_build_filename(sub, "plain.svg", NULL);
    g_assert_true(has_magic(svg, "<?xml"));

    /* Corpus… opens in the file system (the working directory), not in Recent */
    atn_corpus_choose_file(GTK_WIDGET(win), corpus_chosen);
    GtkWidget *d = NULL;
    g_assert_true(wait_for(chooser_shown, &d));
    g_autoptr(GFile) corpus_start = gtk_file_chooser_get_current_folder(GTK_FILE_CHOOSER(d));
    g_autofree char *corpus_dir = corpus_start ? g_file_get_path(corpus_start) : NULL;
    g_assert_cmpstr(corpus_dir, ==, cwd);
    gtk_dialog_response(GTK_DIALOG(d), GTK_RESPONSE_CANCEL);
    settle(50);
    destroy_window(win);
    const char *files[] = {one, head, pdf, svg};
    for (guint i = 0; i < G_N_ELEMENTS(files); i++)
        g_unlink(files[i]);
    g_rmdir(sub);
    g_rmdir(dir);
}

int main(int argc, char **argv) {
    gboolean zh = FALSE, gpu = FALSE;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--zh"))
            zh = TRUE, argv[i] = (char *)"--tap";
        else if (!strcmp(argv[i], "--gpu-fallback"))
            gpu = TRUE, argv[i] = (char *)"--tap";
    }
    if (!ui_test_init(&argc, &argv))
        return 0;
    if (zh) {
        g_test_add_func("/ui/chinese", test_chinese);
        g_test_add_func("/ui/chinese-engine-error", test_chinese_engine_error);
    } else if (gpu) {
        g_test_add_func("/ui/gpu-fallback", test_gpu_fallback);
    } else {
        g_test_add_func("/ui/export-matches-cli", test_export_matches_cli);
        g_test_add_func("/ui/bad-model-folder", test_bad_model_folder);
        g_test_add_func("/ui/model-file-changed", test_model_file_changed);
        g_test_add_func("/ui/truncation-banner", test_truncation_banner);
        g_test_add_func("/ui/entry-cap-and-recent-labels", test_entry_cap_and_recent_labels);
        g_test_add_func("/ui/prefs-presentation", test_prefs_presentation);
        g_test_add_func("/ui/precision-pref", test_precision_pref);
        g_test_add_func("/ui/precision-dialog", test_precision_dialog);
        g_test_add_func("/ui/examples-and-chips", test_examples_and_chips);
        g_test_add_func("/ui/chip-labels", test_chip_labels);
        g_test_add_func("/ui/fallback", test_fallback);
        g_test_add_func("/ui/mask-predictions", test_mask_predictions);
        g_test_add_func("/ui/cancel-open", test_cancel_open);
        g_test_add_func("/ui/open-progress-at-once", test_open_progress_at_once);
        g_test_add_func("/ui/typing-starts-at-once", test_typing_starts_at_once);
        g_test_add_func("/ui/toy-edits-kept", test_toy_edits_kept);
        g_test_add_func("/ui/toy-reselect-and-revert", test_toy_reselect_and_revert);
        g_test_add_func("/ui/export-all-heads", test_export_all_heads);
        g_test_add_func("/ui/export-dialog", test_export_dialog);
        g_test_add_func("/ui/help-overlay", test_help_overlay);
        g_test_add_func("/ui/start-options", test_start_options);
        g_test_add_func("/ui/status-and-toy-text", test_status_and_toy_text);
        g_test_add_func("/ui/downloaded-models", test_downloaded_models);
        g_test_add_func("/ui/get-model", test_get_model);
    }
    return g_test_run();
}
