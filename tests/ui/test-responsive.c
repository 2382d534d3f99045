/* What keeps the window responsive while the model runs (issue 18), asserted as structure,
 * not timing (the machines these run on are shared and noisy): run memory is reused from
 * keystroke to keystroke, the run's worker thread runs at a lower priority than the main
 * thread (and threads it starts inherit it), the window does not animate a spinner during a
 * run (a frame every 16 ms taken from the forward's threads), and the run's progress reads
 * -1 when nothing runs.
 *
 * Run with --tap (meson does).  Without a display it reports "1..0 # SKIP no display". */
#include "ui-test-util.h"

#include <errno.h>
#include <pthread.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "atn-model-grid.h"
#include "atn-model-handle.h"

static int thread_nice(void) {
    errno = 0;
    int v = getpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid));
    g_assert_cmpint(errno, ==, 0);
    return v;
}

static GtkWidget *find_spinner(GtkWidget *w) {
    if (GTK_IS_SPINNER(w))
        return w;
    for (GtkWidget *c = gtk_widget_get_first_child(w); c; c = gtk_widget_get_next_sibling(c)) {
        GtkWidget *s = find_spinner(c);
        if (s)
            return s;
    }
    return NULL;
}

typedef struct spin_watch {
    GtkWidget *spinner;
    int busy_seen;       /* times busy turned on */
    int spinning_seen;   /* of those, with the spinner turning */
} spin_watch;

/* connected after the window's own handler: sees what it did */
static void on_busy(AtnSession *s, GParamSpec *p, spin_watch *w) {
    if (!atn_session_get_busy(s) || atn_session_get_opening(s))
        return;
    w->busy_seen++;
    w->spinning_seen += gtk_spinner_get_spinning(GTK_SPINNER(w->spinner));
}

/* Typing: every run after the first two reuses run memory (no fresh pages per keystroke);
 * the window's spinner never turns during a run; the progress is -1 at rest. */
static void test_typing_reuses_runs(void) {
    AtnWindow *win = new_window();
    open_and_wait(win, f32_model);
    AtnSession *s = atn_window_get_session(win);
    atn_session_set_debounce_ms(s, 0);
    show_view(win, "head");
    spin_watch sw = {find_spinner(GTK_WIDGET(win))};
    g_assert_nonnull(sw.spinner);
    gulong id = g_signal_connect(s, "notify::busy", G_CALLBACK(on_busy), &sw);
    AtnModelHandle *h = atn_session_get_model(s);
    guint before = atn_model_handle_get_n_new_runs(h);
    static const char *const texts[] = {"the cat sat", "the dog sat", "the cat ran", "a cat sat",
                                        "the cat sat on", "the dog sat on", "the mat", "on the mat"};
    GtkWidget *head = atn_window_get_view_widget(win, "head");
    for (guint i = 0; i < G_N_ELEMENTS(texts); i++) {
        type_and_wait(win, texts[i]);
        int pw, ph;
        g_autoptr(GBytes) px = render_widget(head, &pw, &ph);   /* the frame that shows it */
        /* the result it replaced gives its run back once nothing holds it (a figure being
           drawn may, for a moment): then the next keystroke must take it */
        g_assert_true(wait_for((cond_fn)atn_model_handle_has_spare, h));
    }
    g_signal_handler_disconnect(s, id);
    /* the shown result holds one run, the spare is the other */
    g_assert_cmpuint(atn_model_handle_get_n_new_runs(h) - before, <=, 2);
    g_assert_cmpint(sw.busy_seen, >=, (int)G_N_ELEMENTS(texts));
    g_assert_cmpint(sw.spinning_seen, ==, 0);
    g_assert_cmpfloat(atn_session_get_run_fraction(s), ==, -1);
    destroy_window(win);
}

/* The run's worker thread has the workers' nice value; the main thread keeps its own. */
static void test_worker_priority(void) {
    int main_nice = thread_nice();
    AtnWindow *win = new_window();
    open_and_wait(win, f32_model);
    type_and_wait(win, "the cat sat on the mat");
    int want = MAX(main_nice, atn_session_get_worker_nice());
    g_assert_cmpint(atn_session_get_last_run_nice(), ==, want);
    g_assert_cmpint(thread_nice(), ==, main_nice);
    destroy_window(win);
}

static void *child_nice(void *p) {
    *(int *)p = thread_nice();
    return NULL;
}

static gpointer lowered_thread(gpointer data) {
    int *out = data;
    atn_session_lower_thread_priority();
    out[0] = thread_nice();
    atn_session_lower_thread_priority();   /* once is enough; a second call changes nothing */
    out[1] = thread_nice();
    pthread_t t;
    g_assert_cmpint(pthread_create(&t, NULL, child_nice, &out[2]), ==, 0);   /* the engine's team */
    pthread_join(t, NULL);
    return NULL;
}

/* atn_session_lower_thread_priority: this thread only, inherited by threads it starts. */
static void test_lower_priority(void) {
    int main_nice = thread_nice();
    int got[3] = {0};
    GThread *t = g_thread_new("lowered", lowered_thread, got);
    g_thread_join(t);
    int want = MAX(main_nice, atn_session_get_worker_nice());
    g_assert_cmpint(got[0], ==, want);
    g_assert_cmpint(got[1], ==, want);
    g_assert_cmpint(got[2], ==, want);
    g_assert_cmpint(thread_nice(), ==, main_nice);
}

/* The session's window with bert-tiny's shape (random weights) run on a long input, N tokens. */
/* 510 tokens: 63 columns of eight for AVX2, one of four for SSE2 and two left for the scalar
 * loop, and 4 heads of 510² weights, over the size at which the result shares its heads out
 * between threads (ui/atn-result.c, THUMBS_PARALLEL_MIN) */
enum { N_LONG = 510 };
static AtnWindow *long_input_window(void) {
    AtnWindow *win = new_window();
    AtnSession *s = atn_window_get_session(win);
    atn_error err = {0};
    atn_model *m = atn_model_new_random_shape("bert-tiny", 3, &err);
    g_assert_nonnull(m);
    g_autoptr(AtnModelHandle) h = atn_model_handle_new(m, "random:bert-tiny");
    int32_t ids[N_LONG];
    for (int i = 0; i < N_LONG; i++)
        ids[i] = i == 0 ? 101 : i == N_LONG - 1 ? 102 : 1000 + (i * 7919) % 20000;
    atn_session_set_debounce_ms(s, 0);
    atn_session_set_ids(s, ids, N_LONG);
    model_wait w = {win, NULL, atn_session_get_n_runs(s)};
    atn_session_set_model(s, h);
    g_assert_true(wait_for(idle_with_result, &w));
    g_assert_cmpint(atn_result_get_n_tokens(atn_session_get_result(s)), ==, N_LONG);
    return win;
}

/* Each head's thumbnail cell (r, c): the largest probability of the queries i and keys j with
 * floor(i·side/n) = r, floor(j·side/n) = c, straight from the capture. */
static float *pool_by_hand(AtnResult *r, int c, int side) {
    int H = atn_result_get_n_heads(r), n = atn_result_get_n_tokens(r);
    const float *a = atn_result_get_head(r, c / H, c % H);
    float *t = g_new(float, (size_t)side * side);
    for (int k = 0; k < side * side; k++)
        t[k] = -INFINITY;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            float *cell = &t[(size_t)(i * side / n) * side + j * side / n];
            *cell = MAX(*cell, a[(size_t)i * n + j]);
        }
    return t;
}

/* pix equals the capture coloured directly: pooled by hand, in cm over each head's own
 * values (or every head's, shared), as the Model view colours a heatmap. */
static void assert_pixels_of_capture(AtnResult *r, AtnThumbPixels *pix, atn_colormap cm, gboolean shared) {
    int L = atn_result_get_n_layers(r), H = atn_result_get_n_heads(r), n = atn_result_get_n_tokens(r);
    int side = atn_thumb_pixels_get_side(pix);
    g_assert_cmpint(side, ==, MIN(n, ATN_RESULT_THUMB_MAX));
    g_assert_cmpint(atn_thumb_pixels_get_count(pix), ==, L * H);
    g_assert_cmpint(atn_thumb_pixels_get_colormap(pix), ==, cm);
    g_assert_cmpint(atn_thumb_pixels_get_shared_range(pix, NULL, NULL), ==, shared);
    atn_value_range vr = {.automatic = true};
    double all_lo, all_hi;
    atn_value_range_resolve(&vr, atn_result_get_capture(r)->attn, L * H * n, n, 0, cm, &all_lo, &all_hi);
    guint8 *want = g_malloc((size_t)side * side * 4);
    for (int c = 0; c < L * H; c++) {
        double lo = all_lo, hi = all_hi;
        if (!shared)
            atn_value_range_resolve(&vr, atn_result_get_head(r, c / H, c % H), n, n, 0, cm, &lo, &hi);
        g_autofree float *t = pool_by_hand(r, c, side);
        atn_render_matrix_pixels(t, side, side, 0, cm, lo, hi, want, (size_t)side * 4);
        g_assert_cmpmem(atn_thumb_pixels_get_head(pix, c), (gsize)side * side * 4, want, (gsize)side * side * 4);
    }
    g_free(want);
}

/* A long input (bert-tiny shape, random weights, N_LONG tokens): the worker reduces each head
 * to 128² thumbnail cells (the largest probability of its block, computed here from the
 * capture) and colours them in the Model view's colour map, so showing the view colours
 * nothing on the main thread (before: L·H·128² cells there at each switch to a new result). */
static void test_model_view_thumbnails(void) {
    AtnWindow *win = long_input_window();
    AtnSession *s = atn_window_get_session(win);
    AtnResult *r = atn_session_get_result(s);
    int L = atn_result_get_n_layers(r), H = atn_result_get_n_heads(r), n = atn_result_get_n_tokens(r);

    int side = 0;
    const float *thumbs = atn_result_get_thumb_values(r, &side);
    const float *ranges = atn_result_get_head_ranges(r);
    g_assert_cmpint(side, ==, ATN_RESULT_THUMB_MAX);
    for (int c = 0; c < L * H; c++) {
        const float *a = atn_result_get_head(r, c / H, c % H);
        float mn = INFINITY, mx = -INFINITY;
        for (int i = 0; i < n * n; i++)
            mn = MIN(mn, a[i]), mx = MAX(mx, a[i]);
        g_assert_cmpfloat(ranges[2 * c], ==, mn);
        g_assert_cmpfloat(ranges[2 * c + 1], ==, mx);
        g_autofree float *t = pool_by_hand(r, c, side);
        g_assert_cmpmem(thumbs + (size_t)c * side * side, (gsize)side * side * sizeof(float), t,
                        (gsize)side * side * sizeof(float));
    }

    /* the run's worker coloured them in the view's colour map (the preference), own ranges */
    atn_colormap cm = ATN_CMAP_VIRIDIS;
    g_assert_true(atn_colormap_from_name(atn_prefs_get_colormap(atn_prefs_get_default()), &cm));
    g_autoptr(AtnThumbPixels) pix = atn_result_dup_thumb_pixels(r, cm, FALSE, FALSE);
    g_assert_nonnull(pix);
    assert_pixels_of_capture(r, pix, cm, FALSE);

    guint64 before = atn_model_grid_get_cells_coloured(), any_before = atn_result_get_thumb_cells_coloured();
    show_view(win, "model");
    int pw, ph;
    g_autoptr(GBytes) px = render_widget(atn_window_get_view_widget(win, "model"), &pw, &ph);
    g_assert_cmpint(pw, >, 0);
    g_assert_cmpuint(atn_model_grid_get_cells_coloured() - before, ==, 0);
    g_assert_cmpuint(atn_result_get_thumb_cells_coloured() - any_before, ==, 0);   /* nor anywhere */
    /* drawn again (hover, a resize of the figure): nothing coloured again */
    g_autoptr(GBytes) px2 = render_widget(atn_window_get_view_widget(win, "model"), &pw, &ph);
    g_assert_cmpuint(atn_model_grid_get_cells_coloured() - before, ==, 0);
    g_assert_cmpuint(atn_result_get_thumb_cells_coloured() - any_before, ==, 0);
    destroy_window(win);
}

static gboolean not_recolouring(gpointer data) { return !atn_model_grid_get_recolouring(data); }

/* Another colour map (the preference) or the shared scale: the shown result is recoloured in a
 * worker, nothing on the main thread, and the pixels are the capture's in the new style; the
 * next run colours its result in it.  A run that starts cancels a recolour in flight. */
static void test_model_view_recolour(void) {
    AtnWindow *win = long_input_window();
    AtnSession *s = atn_window_get_session(win);
    AtnResult *r = atn_session_get_result(s);
    show_view(win, "model");
    GtkWidget *view = atn_window_get_view_widget(win, "model");
    AtnModelGrid *grid = atn_model_grid_view_get_grid(ATN_MODEL_GRID_VIEW(view));
    int pw, ph;
    g_autoptr(GBytes) px0 = render_widget(view, &pw, &ph);
    guint64 before = atn_model_grid_get_cells_coloured();
    AtnPrefs *prefs = atn_prefs_get_default();
    g_autofree char *was = g_strdup(atn_prefs_get_colormap(prefs));

    /* a colour map: a worker recolours; until it is back the picture keeps the old colours */
    guint n0 = atn_model_grid_get_n_recolours(grid);
    atn_prefs_set_colormap(prefs, "magma");
    g_assert_true(atn_model_grid_get_recolouring(grid));
    g_assert_cmpuint(atn_model_grid_get_n_recolours(grid), ==, n0 + 1);
    g_assert_true(wait_for(not_recolouring, grid));
    g_autoptr(GBytes) px1 = render_widget(view, &pw, &ph);
    g_assert_false(g_bytes_equal(px0, px1));   /* drawn in the new colours */
    g_autoptr(AtnThumbPixels) magma = atn_result_dup_thumb_pixels(r, ATN_CMAP_MAGMA, FALSE, FALSE);
    g_assert_nonnull(magma);
    assert_pixels_of_capture(r, magma, ATN_CMAP_MAGMA, FALSE);

    /* the shared scale, the same way */
    atn_model_grid_set_shared_range(grid, TRUE);
    g_assert_true(wait_for(not_recolouring, grid));
    g_autoptr(GBytes) px2 = render_widget(view, &pw, &ph);
    g_autoptr(AtnThumbPixels) shared = atn_result_dup_thumb_pixels(r, ATN_CMAP_MAGMA, TRUE, FALSE);
    g_assert_nonnull(shared);
    assert_pixels_of_capture(r, shared, ATN_CMAP_MAGMA, TRUE);
    atn_model_grid_set_shared_range(grid, FALSE);   /* kept by the result: no worker */
    g_assert_false(atn_model_grid_get_recolouring(grid));
    g_assert_cmpuint(atn_model_grid_get_cells_coloured() - before, ==, 0);

    /* a run that starts cancels the recolour in flight (no main-loop turn in between, so it
       cannot have finished); the run's worker colours its own result in the new colour map */
    atn_prefs_set_colormap(prefs, "cividis");
    g_assert_true(atn_model_grid_get_recolouring(grid));
    guint runs = atn_session_get_n_runs(s);
    atn_session_rerun(s);
    g_assert_true(atn_session_get_busy(s));
    g_assert_false(atn_model_grid_get_recolouring(grid));
    model_wait w = {win, NULL, runs};
    g_assert_true(wait_for(idle_with_result, &w));
    AtnResult *r2 = atn_session_get_result(s);
    g_assert_true(r2 != r);
    g_autoptr(AtnThumbPixels) cividis = atn_result_dup_thumb_pixels(r2, ATN_CMAP_CIVIDIS, FALSE, FALSE);
    g_assert_nonnull(cividis);
    assert_pixels_of_capture(r2, cividis, ATN_CMAP_CIVIDIS, FALSE);
    g_autoptr(GBytes) px3 = render_widget(view, &pw, &ph);
    g_assert_false(atn_model_grid_get_recolouring(grid));
    g_assert_cmpuint(atn_model_grid_get_cells_coloured() - before, ==, 0);
    atn_prefs_set_colormap(prefs, was);
    destroy_window(win);
}

int main(int argc, char **argv) {
    if (!ui_test_init(&argc, &argv))
        return 0;
    g_test_add_func("/ui/responsive/typing-reuses-runs", test_typing_reuses_runs);
    g_test_add_func("/ui/responsive/worker-priority", test_worker_priority);
    g_test_add_func("/ui/responsive/lower-priority", test_lower_priority);
    g_test_add_func("/ui/responsive/model-view-thumbnails", test_model_view_thumbnails);
    g_test_add_func("/ui/responsive/model-view-recolour", test_model_view_recolour);
    return g_test_run();
}
