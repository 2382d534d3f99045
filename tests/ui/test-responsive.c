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

/* A long input (bert-tiny shape, random weights, 300 tokens): the Model view colours
 * L·H·128² cells on the main thread, not L·H·n², from thumbnails the worker made; each
 * thumbnail cell is the largest probability of its block, computed here from the capture. */
static void test_model_view_thumbnails(void) {
    AtnWindow *win = new_window();
    AtnSession *s = atn_window_get_session(win);
    atn_error err = {0};
    atn_model *m = atn_model_new_random_shape("bert-tiny", 3, &err);
    g_assert_nonnull(m);
    g_autoptr(AtnModelHandle) h = atn_model_handle_new(m, "random:bert-tiny");
    enum { N = 300 };
    int32_t ids[N];
    for (int i = 0; i < N; i++)
        ids[i] = i == 0 ? 101 : i == N - 1 ? 102 : 1000 + (i * 7919) % 20000;
    atn_session_set_debounce_ms(s, 0);
    atn_session_set_ids(s, ids, N);
    model_wait w = {win, NULL, atn_session_get_n_runs(s)};
    atn_session_set_model(s, h);
    g_assert_true(wait_for(idle_with_result, &w));
    AtnResult *r = atn_session_get_result(s);
    int L = atn_result_get_n_layers(r), H = atn_result_get_n_heads(r), n = atn_result_get_n_tokens(r);
    g_assert_cmpint(n, ==, N);

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
        for (int tr = 0; tr < side; tr += 9)
            for (int tc = 0; tc < side; tc += 7) {
                /* the tokens of reduced row tr: floor(i * side / n) == tr */
                float best = -INFINITY;
                for (int i = 0; i < n; i++)
                    for (int j = 0; j < n; j++)
                        if (i * side / n == tr && j * side / n == tc)
                            best = MAX(best, a[(size_t)i * n + j]);
                g_assert_cmpfloat(thumbs[((size_t)c * side + tr) * side + tc], ==, best);
            }
    }

    guint64 before = atn_model_grid_get_cells_coloured();
    show_view(win, "model");
    int pw, ph;
    g_autoptr(GBytes) px = render_widget(atn_window_get_view_widget(win, "model"), &pw, &ph);
    g_assert_cmpint(pw, >, 0);
    g_assert_cmpuint(atn_model_grid_get_cells_coloured() - before, ==, (guint64)L * H * side * side);
    /* drawn again (hover, a resize of the figure): nothing coloured again */
    g_autoptr(GBytes) px2 = render_widget(atn_window_get_view_widget(win, "model"), &pw, &ph);
    g_assert_cmpuint(atn_model_grid_get_cells_coloured() - before, ==, (guint64)L * H * side * side);
    destroy_window(win);
}

int main(int argc, char **argv) {
    if (!ui_test_init(&argc, &argv))
        return 0;
    g_test_add_func("/ui/responsive/typing-reuses-runs", test_typing_reuses_runs);
    g_test_add_func("/ui/responsive/worker-priority", test_worker_priority);
    g_test_add_func("/ui/responsive/lower-priority", test_lower_priority);
    g_test_add_func("/ui/responsive/model-view-thumbnails", test_model_view_thumbnails);
    return g_test_run();
}
