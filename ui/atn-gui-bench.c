/* The GUI benchmark harness: times the window's reactions with the real widgets.
 *
 * "Drawn" means: the widget's render node is built (snapshot) and rendered to a texture by
 * the window's own renderer — what a frame does — so caches behave as on screen.  Model
 * runs happen in the session's worker thread, as when a person types. */
#include "atn-gui-bench.h"

#include <gtk/gtk.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "atn-application.h"
#include "atn-head-view.h"
#include "atn-model-grid-view.h"
#include "atn-prefs.h"
#include "atn-similarity-view.h"
#include "atn-token-lines.h"
#include "atn-window.h"
#include "attnscope.h"

typedef struct bench_opts {
    const char *model;   /* built-in name, path, or "random:SHAPE" */
    const char *text;
    int tokens;
    int repeat;
    gboolean json;
    gboolean views_only;   /* only the view switches (D): for profiling them */
} bench_opts;

static double now_ms(void) { return g_get_monotonic_time() / 1000.0; }

/* CPU time of the calling thread: on a busy machine (other jobs on the cores) this is what
 * the same work takes on an idle one, give or take caches. */
static double cpu_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* CPU time of the whole process (every thread). */
static double proc_cpu_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void spin(void) {
    while (g_main_context_pending(NULL))
        g_main_context_iteration(NULL, FALSE);
}

/* Waits (iterating the main loop) until cond(data) or timeout; FALSE on timeout. */
static gboolean wait_for(gboolean (*cond)(gpointer), gpointer data, double timeout_ms) {
    double t0 = now_ms();
    while (!cond(data)) {
        if (now_ms() - t0 > timeout_ms)
            return FALSE;
        g_main_context_iteration(NULL, TRUE);
    }
    return TRUE;
}

GdkTexture *atn_gui_render_widget(GtkWidget *w) {
    GtkWidget *parent = gtk_widget_get_parent(w);
    g_return_val_if_fail(parent != NULL, NULL);
    GtkSnapshot *s = gtk_snapshot_new();
    gtk_widget_snapshot_child(parent, w, s);
    GskRenderNode *node = gtk_snapshot_free_to_node(s);
    if (!node)
        return NULL;
    GskRenderer *r = gtk_native_get_renderer(gtk_widget_get_native(w));
    GdkTexture *tex = gsk_renderer_render_texture(r, node, NULL);
    gsk_render_node_unref(node);
    return tex;
}

static void wait_frame(GtkWidget *w);

/* Snapshot + render of one widget, as a frame would; returns ms.  The widget's pending
 * layout (a keystroke or a switch may have queued a resize) is done first, outside the
 * time: snapshotting an unallocated widget warns, and is not what a frame draws. */
static double draw_widget(GtkWidget *w) {
    wait_frame(w);
    double t0 = now_ms();
    GdkTexture *tex = atn_gui_render_widget(w);
    g_clear_object(&tex);
    return now_ms() - t0;
}

/* The same without waiting: for a caller that has just waited for the frame (a second wait
 * would add a frame-clock period, ~17 ms, that no frame on screen pays). */
static double render_now(GtkWidget *w) {
    double t0 = now_ms();
    GdkTexture *tex = atn_gui_render_widget(w);
    g_clear_object(&tex);
    return now_ms() - t0;
}

static double load_average(void) {
    double l = 0;
    FILE *f = fopen("/proc/loadavg", "r");
    if (f) {
        if (fscanf(f, "%lf", &l) != 1)
            l = 0;
        fclose(f);
    }
    return l;
}

/* The process's peak resident memory (VmHWM), bytes; 0 when unknown. */
static double peak_rss_bytes(void) {
    double kb = 0;
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmHWM: %lf kB", &kb) == 1)
            break;
    if (f)
        fclose(f);
    return kb * 1024;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* the median of v[0..n), which stays in its order (the --json output lists the rounds as they ran) */
static double median(const double *v, int n) {
    if (n <= 0)
        return 0;
    double *s = g_new(double, n);
    memcpy(s, v, sizeof *v * (size_t)n);
    qsort(s, n, sizeof *s, cmp_double);
    double m = n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
    g_free(s);
    return m;
}

/* ', "name": [v0, v1, ...]' for the --json output, in v's order */
static void print_array(const char *name, const double *v, int n) {
    printf(", \"%s\": [", name);
    for (int k = 0; k < n; k++)
        printf("%s%.2f", k ? ", " : "", v[k]);
    printf("]");
}

static double max_of(const double *v, int n) {
    double m = 0;
    for (int i = 0; i < n; i++)
        m = MAX(m, v[i]);
    return m;
}

/* A 10 ms ticker on the main loop: how late it fires is how late a typed character's echo
 * would be handled while the model runs. */
typedef struct ticker {
    double last, worst;
} ticker;

static gboolean tick(gpointer data) {
    ticker *t = data;
    double now = now_ms();
    if (t->last > 0)
        t->worst = MAX(t->worst, now - t->last - 10);
    t->last = now;
    return G_SOURCE_CONTINUE;
}

typedef struct run_wait {
    AtnSession *session;
    guint runs;
} run_wait;

static gboolean run_finished(gpointer data) {
    run_wait *w = data;
    return atn_session_get_n_runs(w->session) > w->runs && !atn_session_get_busy(w->session);
}

static gboolean not_analysing(gpointer data) { return !atn_session_get_analysing(data); }

static gboolean model_open(gpointer data) {
    AtnSession *s = data;
    return atn_session_get_model(s) && !atn_session_get_opening(s) && atn_session_get_result(s);
}

static gboolean on_tick(GtkWidget *w, GdkFrameClock *clock, gpointer data) {
    *(gboolean *)data = TRUE;
    return G_SOURCE_REMOVE;
}

static gboolean flag_set(gpointer data) { return *(gboolean *)data; }

/* Runs the main loop until w's next frame has been laid out (a change of what it shows may
 * have queued a resize: snapshotting before that frame draws an unallocated widget). */
static void wait_frame(GtkWidget *w) {
    gboolean ticked = FALSE;
    gtk_widget_add_tick_callback(w, on_tick, &ticked, NULL);
    wait_for(flag_set, &ticked, 1000);
    spin();
}

/* When the session's result last changed: the end of its "notify::result" emission (a
 * handler connected after the views'), main-loop time and main-thread CPU; its start is when
 * the result reached the main thread (atn_result_get_received). */
typedef struct notify_times {
    double end, cpu_end;
} notify_times;

static void on_result_notified(GObject *obj, GParamSpec *pspec, gpointer data) {
    notify_times *t = data;
    t->end = now_ms();
    t->cpu_end = cpu_ms();
}

/* The end of the first frame painted after a view switch (the frame clock's "after-paint"):
 * what the screen shows then, main-loop time and main-thread CPU; end < 0 until then. */
typedef struct paint_times {
    double end, cpu_end;
} paint_times;

static void on_after_paint(GdkFrameClock *clock, gpointer data) {
    paint_times *t = data;
    if (t->end < 0) {
        t->end = now_ms();
        t->cpu_end = cpu_ms();
    }
}

static gboolean painted(gpointer data) { return ((paint_times *)data)->end >= 0; }

static gboolean mapped_and_sized(gpointer data) {
    GtkWidget *w = data;
    return gtk_widget_get_mapped(w) && gtk_widget_get_width(w) > 0;
}

static gboolean parse(int argc, char **argv, bench_opts *o) {
    o->model = "random:bert-base";
    o->tokens = 128;
    o->repeat = 15;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--gui-bench"))
            continue;
        if (!strcmp(a, "--json")) {
            o->json = TRUE;
        } else if (!strcmp(a, "--views-only")) {
            o->views_only = TRUE;
        } else if (!strcmp(a, "--model") && v) {
            o->model = v, i++;
        } else if (!strcmp(a, "--text") && v) {
            o->text = v, i++;
        } else if (!strcmp(a, "--tokens") && v) {
            o->tokens = atoi(v), i++;
        } else if (!strcmp(a, "--repeat") && v) {
            o->repeat = atoi(v), i++;
        } else {
            fprintf(stderr, "Usage: attnscope --gui-bench [--model NAME|PATH|random:bert-base] [--tokens N] "
                            "[--text T] [--repeat R] [--json] [--views-only]\n  (needs a display: run it under xvfb-run)\n");
            return FALSE;
        }
    }
    o->tokens = CLAMP(o->tokens, 3, 512);
    o->repeat = CLAMP(o->repeat, 1, 1000);
    return TRUE;
}

int atn_gui_bench_main(int argc, char **argv) {
    bench_opts o = {0};
    if (!parse(argc, argv, &o))
        return 2;
    if (!gtk_init_check()) {
        printf("attnscope --gui-bench: no display (run it under xvfb-run); skipped\n");
        return 77;
    }
    atn_gui_load_css();
    /* the window below opens a model and types: the user's remembered ones stay */
    atn_prefs_keep_in_memory(atn_prefs_get_default());
    AtnWindow *win = g_object_new(ATN_TYPE_WINDOW, "default-width", 1280, "default-height", 800, NULL);
    AtnSession *session = atn_window_get_session(win);
    gtk_window_present(GTK_WINDOW(win));

    /* the model: random weights of a real shape (ids, no tokenizer), or a real model with text */
    gboolean use_ids = g_str_has_prefix(o.model, "random:");
    double t_open = now_ms();
    if (use_ids) {
        atn_error err = {0};
        atn_model *m = atn_model_new_random_shape(o.model + 7, 1, &err);   /* in the shape's family */
        if (!m) {
            fprintf(stderr, "attnscope --gui-bench: %s\n", err.message);
            return 1;
        }
        g_autoptr(AtnModelHandle) h = atn_model_handle_new(m, o.model);
        atn_session_set_debounce_ms(session, 60);
        int32_t *ids = g_new(int32_t, o.tokens);
        for (int i = 0; i < o.tokens; i++)
            ids[i] = i == 0 ? 101 : i == o.tokens - 1 ? 102 : 1000 + (i * 7919) % 20000;
        atn_session_set_ids(session, ids, o.tokens);
        g_free(ids);
        atn_session_set_model(session, h);
    } else {
        atn_session_open_model(session, o.model);
        atn_window_set_text(win, o.text ? o.text : "The cat sat on the mat because it was tired.");
    }
    if (!wait_for(model_open, session, 600000)) {
        fprintf(stderr, "attnscope --gui-bench: the model did not open or run: %s\n",
                atn_window_get_error(win) ? atn_window_get_error(win) : "timeout");
        return 1;
    }
    t_open = now_ms() - t_open;
    AtnResult *r = atn_session_get_result(session);
    double first_run = atn_result_get_elapsed_ms(r);   /* of the open: the first forward, in the worker */
    int L = atn_result_get_n_layers(r), H = atn_result_get_n_heads(r), n = atn_result_get_n_tokens(r);

    atn_window_show_view(win, "head");
    GtkWidget *head_view = atn_window_get_view_widget(win, "head");
    wait_for(mapped_and_sized, head_view, 5000);
    spin();
    draw_widget(head_view);   /* warm-up: fonts, glyph caches */

    /* A. keystroke (a changed token) -> result -> Head view drawn, debounce included */
    double *key_ms = g_new0(double, o.repeat), *run_ms = g_new0(double, o.repeat), *draw_ms = g_new0(double, o.repeat);
    double *key_cpu = g_new0(double, o.repeat), *deb = g_new0(double, o.repeat);
    double *wait_cpu = g_new0(double, o.repeat), *work_cpu = g_new0(double, o.repeat);
    double *late = g_new0(double, o.repeat);
    /* where a keystroke's time goes after the run (see the report's breakdown line) */
    double *st_ms = g_new0(double, o.repeat), *th_ms = g_new0(double, o.repeat), *co_ms = g_new0(double, o.repeat);
    double *hand_ms = g_new0(double, o.repeat), *handle_ms = g_new0(double, o.repeat);
    double *handle_cpu = g_new0(double, o.repeat), *frame_ms = g_new0(double, o.repeat);
    double *before_ms = g_new0(double, o.repeat), *stats_at = g_new0(double, o.repeat);
    notify_times nt = {0};
    gulong notified_id = g_signal_connect_after(session, "notify::result", G_CALLBACK(on_result_notified), &nt);
    AtnModelHandle *handle = atn_session_get_model(session);
    guint new_runs0 = atn_model_handle_get_n_new_runs(handle);
    int n_keys = o.views_only ? 0 : o.repeat;
    for (int k = 0; k < n_keys; k++) {
        run_wait w = {session, atn_session_get_n_runs(session)};
        deb[k] = atn_session_get_effective_debounce_ms(session);
        double t0 = now_ms(), c0 = cpu_ms(), p0 = proc_cpu_ms();
        if (use_ids) {
            const atn_encoding *enc = atn_result_get_encoding(atn_session_get_result(session));
            int32_t *ids = g_memdup2(enc->ids, sizeof(int32_t) * enc->n);
            ids[1 + k % (enc->n - 2)] = 2000 + k;
            atn_session_set_ids(session, ids, enc->n);
            g_free(ids);
        } else {
            g_autofree char *t = g_strdup_printf("%s %d", o.text ? o.text : "The cat sat on the mat.", k);
            atn_window_set_text(win, t);
        }
        ticker tk = {0};
        guint tick_id = g_timeout_add(10, tick, &tk);
        gboolean done = wait_for(run_finished, &w, 120000);
        g_source_remove(tick_id);
        late[k] = tk.worst;
        if (!done)
            break;
        wait_cpu[k] = cpu_ms() - c0;   /* the main thread's CPU while the model ran */
        work_cpu[k] = proc_cpu_ms() - p0 - wait_cpu[k];   /* every other thread's: the run and its statistics */
        double t1 = now_ms();
        wait_frame(head_view);
        frame_ms[k] = now_ms() - t1;
        draw_ms[k] = render_now(head_view);
        key_ms[k] = now_ms() - t0;
        key_cpu[k] = cpu_ms() - c0;
        AtnResult *rk = atn_session_get_result(session);
        run_ms[k] = atn_result_get_elapsed_ms(rk);
        gint64 done_us = 0;
        atn_result_get_worker_times(rk, &st_ms[k], NULL, &th_ms[k], &co_ms[k], &done_us);
        double done_at = done_us / 1000.0;
        before_ms[k] = done_at - t0 - run_ms[k] - st_ms[k] - th_ms[k] - co_ms[k];   /* st_ms: in the worker */
        gint64 recv_us = 0, recv_cpu_us = 0;
        atn_result_get_received(rk, &recv_us, &recv_cpu_us);
        hand_ms[k] = recv_us / 1000.0 - done_at;
        handle_ms[k] = nt.end - recv_us / 1000.0;
        handle_cpu[k] = nt.cpu_end - recv_cpu_us / 1000.0;
        frame_ms[k] += t1 - nt.end;
        /* the head statistics follow the result (the Head view's "This head" line, the Model
           view's labels): when they were there, from the keystroke; the next keystroke waits
           for them, as a person who reads the view would */
        wait_for(not_analysing, session, 120000);
        stats_at[k] = now_ms() - t0;
        double late_st = 0;
        atn_result_get_worker_times(rk, NULL, &late_st, NULL, NULL, NULL);
        st_ms[k] += late_st;
    }
    g_signal_handler_disconnect(session, notified_id);
    double st_med = median(st_ms, n_keys), th_med = median(th_ms, n_keys), co_med = median(co_ms, n_keys);
    double hand_med = median(hand_ms, n_keys), handle_med = median(handle_ms, n_keys);
    double handle_cpu_med = median(handle_cpu, n_keys), frame_med = median(frame_ms, n_keys);
    double before_med = median(before_ms, n_keys), stats_at_med = median(stats_at, n_keys);
    g_free(stats_at);
    g_free(st_ms);
    g_free(th_ms);
    g_free(co_ms);
    g_free(hand_ms);
    g_free(handle_ms);
    g_free(handle_cpu);
    g_free(frame_ms);
    g_free(before_ms);
    double key_med = median(key_ms, o.repeat), key_max = max_of(key_ms, o.repeat);
    double run_med = median(run_ms, o.repeat), keydraw_med = median(draw_ms, o.repeat);
    double key_cpu_med = median(key_cpu, o.repeat), deb_med = median(deb, o.repeat);
    double wait_cpu_med = median(wait_cpu, o.repeat), work_cpu_med = median(work_cpu, o.repeat);
    double late_max = max_of(late, o.repeat), late_med = median(late, o.repeat);
    g_free(late);
    guint new_runs = atn_model_handle_get_n_new_runs(handle) - new_runs0;
    g_free(key_cpu);
    g_free(wait_cpu);
    g_free(deb);

    /* B. layer / head switch -> Head view drawn */
    int n_sw = o.views_only ? 0 : MAX(0, MIN(o.repeat * 2, L * H));
    double *sw_ms = g_new0(double, n_sw), *sw_cpu = g_new0(double, n_sw);
    for (int k = 0; k < n_sw; k++) {
        double t0 = now_ms(), c0 = cpu_ms();
        atn_session_select_head(session, (k / H) % L, (k + 1) % H);
        draw_widget(head_view);
        sw_ms[k] = now_ms() - t0;
        sw_cpu[k] = cpu_ms() - c0;
    }
    double sw_med = median(sw_ms, n_sw), sw_max = max_of(sw_ms, n_sw);
    double sw_cpu_med = median(sw_cpu, n_sw), sw_cpu_max = max_of(sw_cpu, n_sw);
    g_free(sw_cpu);
    /* where a switch's time goes: the heatmap and the token lines drawn alone */
    GtkWidget *hm = GTK_WIDGET(atn_head_view_get_heatmap(ATN_HEAD_VIEW(head_view)));
    GtkWidget *lines = atn_head_view_get_token_lines(ATN_HEAD_VIEW(head_view));
    double *hm_ms = g_new0(double, n_sw), *ln_ms = g_new0(double, n_sw);
    for (int k = 0; k < n_sw; k++) {
        atn_session_select_head(session, (k / H) % L, k % H);
        hm_ms[k] = draw_widget(hm);
        double t0 = now_ms();
        draw_widget(lines);   /* starts the worker (long inputs) */
        while (atn_token_lines_get_busy(ATN_TOKEN_LINES(lines)))
            g_main_context_iteration(NULL, TRUE);
        draw_widget(lines);
        ln_ms[k] = now_ms() - t0;
    }
    double hm_med = median(hm_ms, n_sw), ln_med = median(ln_ms, n_sw);
    g_free(hm_ms);
    g_free(ln_ms);

    /* C. Model view: every head as a thumbnail, cold (pixels and figure rebuilt) and warm */
    atn_window_show_view(win, "model");
    GtkWidget *model_view = atn_window_get_view_widget(win, "model");
    wait_for(mapped_and_sized, model_view, 5000);
    spin();
    AtnModelGrid *grid = atn_model_grid_view_get_grid(ATN_MODEL_GRID_VIEW(model_view));
    double *grid_ms = g_new0(double, o.repeat), *grid_warm = g_new0(double, o.repeat);
    double *grid_cpu = g_new0(double, o.repeat);
    for (int k = 0; k < n_keys; k++) {
        atn_model_grid_invalidate(grid);
        double c0 = cpu_ms();
        grid_ms[k] = draw_widget(model_view);
        grid_cpu[k] = cpu_ms() - c0;
        grid_warm[k] = draw_widget(model_view);
    }
    double grid_med = median(grid_ms, o.repeat), grid_max = max_of(grid_ms, o.repeat);
    double grid_cpu_med = median(grid_cpu, o.repeat);
    g_free(grid_cpu);
    double warm_med = median(grid_warm, o.repeat);

    /* D. view switches: Head view -> each other view, drawn (the Similarity view: until its
       comparison is back and drawn), on a fresh result each round as after a keystroke; "head"
       first is no switch: the frame and drawing that every switch pays, for comparison */
    static const char *const views[] = {"head", "model", "similarity", "trace", "statistics"};
    enum { N_VIEWS = G_N_ELEMENTS(views) };
    int n_vs = MAX(1, MIN(o.repeat, 5));
    double vs_ms[N_VIEWS][5], vs_cpu[N_VIEWS][5], vs_med[N_VIEWS], vs_cpu_med[N_VIEWS], vs_max[N_VIEWS];
    /* the main thread's CPU split: showing the page (map, the view's own update), the main loop
       until the frame that lays it out (layout, workers' results), the rest is the drawing */
    double vs_show[N_VIEWS][5], vs_layout[N_VIEWS][5], vs_show_med[N_VIEWS], vs_layout_med[N_VIEWS];
    /* until the frame that laid the page out has painted it (the frame clock runs layout and
       paint in one dispatch): the window's own cost; the harness's render after it draws the
       page a second time, which no frame on screen does */
    double vs_frame[N_VIEWS][5], vs_frame_cpu[N_VIEWS][5], vs_frame_med[N_VIEWS], vs_frame_cpu_med[N_VIEWS];
    /* show -> the end of the first frame painted after it (the one that lays the view out and
       paints it: the frame clock runs update, layout and paint in one go) */
    double vs_paint[N_VIEWS][5], vs_paint_cpu[N_VIEWS][5], vs_paint_med[N_VIEWS], vs_paint_cpu_med[N_VIEWS];
    GdkFrameClock *clock = gtk_widget_get_frame_clock(GTK_WIDGET(win));
    paint_times pt = {-1, 0};
    gulong paint_id = g_signal_connect(clock, "after-paint", G_CALLBACK(on_after_paint), &pt);
    for (int k = 0; k < n_vs; k++) {
        run_wait w = {session, atn_session_get_n_runs(session)};
        atn_window_show_view(win, "head");
        if (use_ids) {
            const atn_encoding *enc = atn_result_get_encoding(atn_session_get_result(session));
            int32_t *ids = g_memdup2(enc->ids, sizeof(int32_t) * enc->n);
            ids[1 + (k + 7) % (enc->n - 2)] = 3000 + k;
            atn_session_set_ids(session, ids, enc->n);
            g_free(ids);
        } else {
            g_autofree char *t = g_strdup_printf("%s %d.", o.text ? o.text : "The cat sat on the mat.", k);
            atn_window_set_text(win, t);
        }
        wait_for(run_finished, &w, 120000);
        wait_for(not_analysing, session, 120000);   /* the switches time the views, not the statistics */
        spin();
        draw_widget(head_view);
        for (int v = 0; v < N_VIEWS; v++) {
            pt.end = -1;
            double t0 = now_ms(), c0 = cpu_ms();
            atn_window_show_view(win, views[v]);
            GtkWidget *vw = atn_window_get_view_widget(win, views[v]);
            double c1 = cpu_ms();
            /* a frame even where the switch queued nothing (the view shown already): the wait ends */
            gdk_frame_clock_request_phase(clock, GDK_FRAME_CLOCK_PHASE_AFTER_PAINT);
            wait_for(painted, &pt, 5000);
            vs_paint[v][k] = pt.end - t0;
            vs_paint_cpu[v][k] = pt.cpu_end - c0;
            wait_for(mapped_and_sized, vw, 5000);   /* allocated, as the frame that shows it */
            spin();
            if (ATN_IS_SIMILARITY_VIEW(vw))
                while (atn_similarity_view_get_busy(ATN_SIMILARITY_VIEW(vw)))
                    g_main_context_iteration(NULL, TRUE);
            wait_frame(vw);
            double c2 = cpu_ms();
            vs_frame[v][k] = now_ms() - t0;
            vs_frame_cpu[v][k] = c2 - c0;
            render_now(vw);   /* that frame laid it out and painted it: drawn again, as the harness always has */
            vs_ms[v][k] = now_ms() - t0;
            vs_cpu[v][k] = cpu_ms() - c0;
            vs_show[v][k] = c1 - c0;
            vs_layout[v][k] = c2 - c1;
            atn_window_show_view(win, "head");
            spin();
        }
    }
    g_signal_handler_disconnect(clock, paint_id);
    for (int v = 0; v < N_VIEWS; v++) {
        vs_max[v] = max_of(vs_ms[v], n_vs);
        vs_med[v] = median(vs_ms[v], n_vs);
        vs_cpu_med[v] = median(vs_cpu[v], n_vs);
        vs_show_med[v] = median(vs_show[v], n_vs);
        vs_layout_med[v] = median(vs_layout[v], n_vs);
        vs_frame_med[v] = median(vs_frame[v], n_vs);
        vs_paint_med[v] = median(vs_paint[v], n_vs);
        vs_paint_cpu_med[v] = median(vs_paint_cpu[v], n_vs);
        vs_frame_cpu_med[v] = median(vs_frame_cpu[v], n_vs);
    }

    GskRenderer *renderer = gtk_native_get_renderer(GTK_NATIVE(win));
    const char *rname = G_OBJECT_TYPE_NAME(renderer);
    int ww = gtk_widget_get_width(head_view), wh = gtk_widget_get_height(head_view);
    if (o.json) {
        printf("{\"model\": \"%s\", \"layers\": %d, \"heads\": %d, \"tokens\": %d, \"renderer\": \"%s\", "
               "\"head_view_px\": [%d, %d], \"open_and_first_run_ms\": %.1f, \"first_run_ms\": %.1f, \"peak_rss_bytes\": %.0f, "
               "\"load_average\": %.2f,\n"
               " \"keystroke_to_head_view_ms\": {\"median\": %.2f, \"max\": %.2f, \"debounce\": %.1f, "
               "\"run_median\": %.2f, \"draw_median\": %.2f, \"main_thread_cpu_median\": %.2f, "
               "\"main_thread_cpu_during_run_median\": %.2f, \"worker_cpu_median\": %.2f, \"new_run_buffers\": %u, "
               "\"main_loop_late_ms_median\": %.2f, \"main_loop_late_ms_max\": %.2f, "
               "\"before_run_median\": %.2f, \"stats_median\": %.2f, \"thumbs_median\": %.2f, "
               "\"colour_median\": %.2f, \"hand_over_median\": %.2f, \"result_handlers_median\": %.2f, "
               "\"result_handlers_cpu_median\": %.2f, \"until_frame_median\": %.2f, "
               "\"stats_ready_median\": %.2f},\n"
               " \"head_switch_redraw_ms\": {\"median\": %.2f, \"max\": %.2f, \"cpu_median\": %.2f, "
               "\"cpu_max\": %.2f, \"count\": %d, "
               "\"heatmap_median\": %.2f, \"token_lines_median\": %.2f},\n"
               " \"model_view_draw_ms\": {\"thumbnails\": %d, \"cold_median\": %.2f, \"cold_max\": %.2f, "
               "\"cold_cpu_median\": %.2f, \"warm_median\": %.2f},\n"
               " \"view_switch_ms\": {",
               o.model, L, H, n, rname, ww, wh, t_open, first_run, peak_rss_bytes(), load_average(), key_med, key_max, deb_med, run_med, keydraw_med, key_cpu_med, wait_cpu_med, work_cpu_med, new_runs, late_med, late_max, before_med, st_med, th_med, co_med, hand_med, handle_med,
               handle_cpu_med, frame_med, stats_at_med, sw_med, sw_max, sw_cpu_med,
               sw_cpu_max, n_sw, hm_med, ln_med, L * H, grid_med, grid_max, grid_cpu_med, warm_med);
        for (int v = 0; v < N_VIEWS; v++) {
            printf("%s\"%s\": {\"median\": %.2f, \"max\": %.2f, \"main_thread_cpu_median\": %.2f, "
                   "\"show_cpu_median\": %.2f, \"layout_cpu_median\": %.2f, \"until_painted_median\": %.2f, "
                   "\"until_painted_cpu_median\": %.2f", v ? ", " : "",
                   views[v], vs_med[v], vs_max[v], vs_cpu_med[v], vs_show_med[v], vs_layout_med[v], vs_frame_med[v],
                   vs_frame_cpu_med[v]);
            printf(", \"first_paint_median\": %.2f, \"first_paint_cpu_median\": %.2f", vs_paint_med[v], vs_paint_cpu_med[v]);
            print_array("first_paint_rounds_ms", vs_paint[v], n_vs);
            print_array("first_paint_rounds_cpu_ms", vs_paint_cpu[v], n_vs);
            print_array("rounds_ms", vs_ms[v], n_vs);   /* each round's, in order: the first one builds the page */
            print_array("rounds_cpu_ms", vs_cpu[v], n_vs);
            printf("}");
        }
        printf("},\n \"keystrokes\": {\"run_ms\": [");   /* each keystroke's, for the spread */
        for (int k = 0; k < n_keys; k++)
            printf("%s%.2f", k ? ", " : "", run_ms[k]);
        printf("], \"keystroke_ms\": [");
        for (int k = 0; k < n_keys; k++)
            printf("%s%.2f", k ? ", " : "", key_ms[k]);
        printf("], \"worker_cpu_ms\": [");
        for (int k = 0; k < n_keys; k++)
            printf("%s%.2f", k ? ", " : "", work_cpu[k]);
        printf("]}}\n");
    } else {
        printf("(wall times include waiting for a core: this machine's load average was %.1f)\n", load_average());
        printf("gui-bench: model %s (%d layers x %d heads), %d tokens, %s, Head view %dx%d px\n", o.model, L, H, n,
               rname, ww, wh);
        printf("  open + first run:                 %8.1f ms  (the first run itself, in the worker: %.1f ms)\n", t_open,
               first_run);
        printf("  peak RSS of the process:          %8.0f MB\n", peak_rss_bytes() / 1e6);
        printf("  keystroke -> Head view drawn:     median %7.1f ms, max %7.1f ms  (%.0f ms debounce included; "
               "model run median %.1f ms in the worker; main-thread CPU %.1f ms of which drawing %.1f ms)\n",
               key_med, key_max, deb_med, run_med, key_cpu_med, keydraw_med);
        printf("    while the model ran:            main-thread CPU median %.1f ms; other threads' CPU %.1f ms (the "
               "run and its statistics); %u new run buffers in %d keystrokes\n", wait_cpu_med, work_cpu_med, new_runs,
               o.repeat);
        printf("    main loop while the model ran:  a 10 ms ticker fired at worst %.1f ms late (median of the "
               "keystrokes), %.1f ms (max)\n", late_med, late_max);
        printf("    after the run (medians):        statistics %.1f ms (after the result when it is published first), "
               "thumbnails %.1f ms, colouring %.1f ms in the worker; hand-over to the main thread %.1f ms; the result's "
               "handlers %.1f ms (%.1f ms CPU); until the frame %.1f ms; drawing %.1f ms; before the run started "
               "%.1f ms\n", st_med, th_med, co_med, hand_med, handle_med, handle_cpu_med, frame_med, keydraw_med,
               before_med);
        printf("    keystroke -> statistics ready:  median %7.1f ms\n", stats_at_med);
        printf("  layer/head switch -> redrawn:     median %7.2f ms, max %7.2f ms; main-thread CPU median %.2f ms, "
               "max %.2f ms  (%d switches; heatmap alone %.2f ms; token lines until drawn %.2f ms, in a worker "
               "thread)\n", sw_med, sw_max, sw_cpu_med, sw_cpu_max, n_sw, hm_med, ln_med);
        printf("  Model view, %3d thumbnails:       cold median %6.2f ms, max %6.2f ms, main-thread CPU %.2f ms; "
               "warm %.2f ms\n", L * H, grid_med, grid_max, grid_cpu_med, warm_med);
        for (int v = 0; v < N_VIEWS; v++)
            printf("  switch to %-10s -> drawn:     median %7.2f ms, max %7.2f ms; main-thread CPU median %.2f ms "
                   "(showing %.2f, until laid out %.2f; %d fresh results); until its frame painted it %.2f ms, "
                   "CPU %.2f ms; until the first frame after the switch painted %.2f ms, CPU %.2f ms\n", views[v], vs_med[v], vs_max[v],
                   vs_cpu_med[v], vs_show_med[v], vs_layout_med[v], n_vs, vs_frame_med[v], vs_frame_cpu_med[v], vs_paint_med[v], vs_paint_cpu_med[v]);
    }
    g_free(key_ms);
    g_free(run_ms);
    g_free(work_cpu);
    g_free(draw_ms);
    g_free(sw_ms);
    g_free(grid_ms);
    g_free(grid_warm);
    gtk_window_destroy(GTK_WINDOW(win));
    return 0;
}
