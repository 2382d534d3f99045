/* The Statistics view (ui/atn-stats-view.c) in a real window under Xvfb: sorting, activating a
 * row, the corpus mode against the engine, and the head statistics computed once per result,
 * in a worker after the result (atn_stats_compute_progress is wrapped at link time to count
 * its callers).
 *
 * Run with --tap (meson does).  Without a display it reports "1..0 # SKIP no display". */
#include "ui-test-util.h"

#include "atn-labels.h"

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

static GtkWidget *find_descendant(GtkWidget *w, GType type) {
    if (G_TYPE_CHECK_INSTANCE_TYPE(w, type))
        return w;
    for (GtkWidget *c = gtk_widget_get_first_child(w); c; c = gtk_widget_get_next_sibling(c)) {
        GtkWidget *found = find_descendant(c, type);
        if (found)
            return found;
    }
    return NULL;
}

/* Sorting shows the top of the table, wherever it was scrolled (the demo model's 64 heads do
 * not fit): from the bottom and from the middle, by clicking a column's header order again. */
static void test_stats_sort_shows_top(void) {
    AtnWindow *win = new_window();
    open_and_wait(win, "demo");
    type_and_wait(win, "the cat sat on the mat because it was tired.");
    show_view(win, "statistics");
    AtnStatsView *sv = ATN_STATS_VIEW(atn_window_get_view_widget(win, "statistics"));
    GtkScrolledWindow *sw = GTK_SCROLLED_WINDOW(find_descendant(GTK_WIDGET(sv), GTK_TYPE_SCROLLED_WINDOW));
    g_assert_nonnull(sw);
    GtkAdjustment *adj = gtk_scrolled_window_get_vadjustment(sw);
    const char *columns[] = {"entropy", "prev", "distance", "index"};
    for (int k = 0; k < 4; k++) {
        settle(50);
        double range = gtk_adjustment_get_upper(adj) - gtk_adjustment_get_page_size(adj);
        g_assert_cmpfloat(range, >, 100);   /* it scrolls */
        double where = k % 2 ? range / 2 : range;
        gtk_adjustment_set_value(adj, where);
        settle(50);
        g_assert_cmpfloat(gtk_adjustment_get_value(adj), >, 50);
        atn_stats_view_sort_by(sv, columns[k], k % 2 ? GTK_SORT_ASCENDING : GTK_SORT_DESCENDING);
        settle(100);
        g_test_message("sorted by %s from %.0f of %.0f: now at %.0f", columns[k], where, range,
                       gtk_adjustment_get_value(adj));
        g_assert_cmpfloat(gtk_adjustment_get_value(adj), ==, gtk_adjustment_get_lower(adj));
    }
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
    g_assert_cmpint(atn_session_get_worker_nice_of("corpus"), ==, expected_worker_nice());
    const char *info = atn_stats_view_get_info(sv);
    g_test_message("%s", info);
    g_assert_nonnull(strstr(info, "2 sentences"));
    g_assert_nonnull(strstr(info, "1 line skipped"));
    /* both made from the heads as the forward made them, keeping no capture (CPU) */
    g_assert_cmpint(atn_stats_view_get_corpus_streamed(sv), ==, 2);
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

/* ---- head statistics once per result ----------------------------------------------------------- */

/* atn_stats_compute_progress (what atn_stats_compute and the window call), wrapped at link
 * time (meson: -Wl,--wrap): counts every call from the UI library, those made on the main
 * thread and those cancelled, then runs the real one. */
static GThread *main_thread;
static gint n_computed, n_on_main, n_cancelled;
atn_status __real_atn_stats_compute_progress(const atn_capture *cap, atn_progress_fn progress, void *user_data,
                                             atn_stats **out, atn_error *err);
atn_status __wrap_atn_stats_compute_progress(const atn_capture *cap, atn_progress_fn progress, void *user_data,
                                             atn_stats **out, atn_error *err);
atn_status __wrap_atn_stats_compute_progress(const atn_capture *cap, atn_progress_fn progress, void *user_data,
                                             atn_stats **out, atn_error *err) {
    g_atomic_int_inc(&n_computed);
    if (g_thread_self() == main_thread)
        g_atomic_int_inc(&n_on_main);
    atn_status s = __real_atn_stats_compute_progress(cap, progress, user_data, out, err);
    if (s == ATN_E_CANCELLED)
        g_atomic_int_inc(&n_cancelled);
    return s;
}

static char *stats_csv(const atn_stats *st) {
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    g_assert_nonnull(f);
    g_assert_cmpint(atn_stats_write_csv(st, f, NULL), ==, ATN_OK);
    fclose(f);
    return text;
}

/* Head statistics are computed once per result, in the worker thread that ran the model:
 * showing every view (the Model grid's pattern labels, the Statistics table), exporting the
 * CSV, picking other heads and drawing again compute none, and all of them show the
 * result's own atn_result_get_stats. */
static void test_stats_once_per_result(void) {
    AtnWindow *win = new_window();
    AtnSession *s = atn_window_get_session(win);
    open_and_wait(win, f32_model);
    type_and_wait(win, "the cat sat on the mat");
    for (int round = 0; round < 2; round++) {
        g_atomic_int_set(&n_computed, 0);
        g_atomic_int_set(&n_on_main, 0);
        /* one text, straight to the session: exactly one run, nothing cancelled */
        model_wait w = {win, NULL, atn_session_get_n_runs(s)};
        atn_session_set_text(s, round ? "we like tea" : "the dog ran to the cat", NULL);
        g_assert_true(wait_for(idle_with_result, &w));
        guint runs = atn_session_get_n_runs(s) - w.runs;
        g_assert_cmpuint(runs, ==, 1);
        AtnResult *r = atn_session_get_result(s);
        const atn_stats *st = atn_result_get_stats(r);
        g_assert_nonnull(st);
        g_assert_null(atn_result_get_stats_error(r));
        g_assert_true(atn_result_get_stats(r) == st);   /* cached, not recomputed */

        const char *views[] = {"head", "model", "similarity", "trace", "statistics"};
        for (guint i = 0; i < G_N_ELEMENTS(views); i++)
            show_view(win, views[i]);
        AtnStatsView *sv = ATN_STATS_VIEW(atn_window_get_view_widget(win, "statistics"));
        atn_head_stats rows[8];
        sentence_rows(sv, rows, 8);
        for (int k = 0; k < 8; k++) {   /* the table shows the result's numbers, bit for bit */
            g_assert_cmpfloat(rows[k].entropy, ==, st->heads[k].entropy);
            g_assert_cmpfloat(rows[k].prev, ==, st->heads[k].prev);
            g_assert_cmpfloat(rows[k].cls, ==, st->heads[k].cls);
            g_assert_cmpint(rows[k].pattern, ==, st->heads[k].pattern);
        }
        g_autoptr(GError) error = NULL;
        g_autofree char *csv = atn_stats_view_dup_csv(sv, &error);
        g_assert_no_error(error);
        char *want = stats_csv(st);
        g_assert_cmpstr(csv, ==, want);
        free(want);
        atn_session_select_head(s, 1, 2);
        show_view(win, "model");
        show_view(win, "head");
        settle(50);

        g_assert_cmpint(g_atomic_int_get(&n_on_main), ==, 0);
        g_assert_cmpint(g_atomic_int_get(&n_computed), ==, (int)runs);
    }
    destroy_window(win);
}


/* ---- the statistics after the result ------------------------------------------------------------ */

typedef struct published {
    int n;                      /* results published */
    gboolean pending[4];        /* ... with their statistics still to come */
    gboolean had_stats[4];
    gboolean summary_empty[4];  /* the Head view's "This head" line, as the result was shown */
    const char *then_type;      /* typed as the next result is published, or NULL */
    AtnHeadView *head_view;
} published;

static void on_published(AtnSession *s, GParamSpec *p, published *pub) {
    AtnResult *r = atn_session_get_result(s);
    int k = MIN(pub->n, 3);
    pub->pending[k] = atn_result_get_stats_pending(r);
    pub->had_stats[k] = atn_result_get_stats(r) != NULL;
    pub->summary_empty[k] = !*atn_head_view_get_summary(pub->head_view);
    pub->n++;
    if (pub->then_type) {
        const char *t = pub->then_type;
        pub->then_type = NULL;
        atn_session_set_text(s, t, NULL);
    }
}

static void count_ready(AtnSession *s, int *n) { (*n)++; }

/* A run's result is published before its head statistics (the Head view's heatmap does not
 * need them: at 512 tokens they were ~0.3 s of two cores between the run and the drawn view).
 * They follow once per result, in a worker, as "stats-ready"; they are the engine's numbers,
 * and the Head view's "This head" line shows them then.  A text typed as a result arrives
 * starts its run at once, and that result's statistics are never computed. */
static void test_stats_after_result(void) {
    AtnWindow *win = new_window();
    AtnSession *s = atn_window_get_session(win);
    open_and_wait(win, f32_model);
    type_and_wait(win, "the cat sat on the mat");
    atn_session_set_debounce_ms(s, 0);   /* a change starts its run at once, in the handler */
    published pub = {.head_view = ATN_HEAD_VIEW(atn_window_get_view_widget(win, "head"))};
    int n_ready = 0;
    gulong h1 = g_signal_connect_after(s, "notify::result", G_CALLBACK(on_published), &pub);
    gulong h2 = g_signal_connect(s, "stats-ready", G_CALLBACK(count_ready), &n_ready);

    g_atomic_int_set(&n_computed, 0);
    g_atomic_int_set(&n_on_main, 0);
    model_wait w = {win, NULL, atn_session_get_n_runs(s)};
    atn_session_set_text(s, "the dog ran to the cat", NULL);
    g_assert_true(wait_for(idle_with_result, &w));
    g_assert_cmpint(pub.n, ==, 1);
    g_assert_true(pub.pending[0]);
    g_assert_false(pub.had_stats[0]);
    g_assert_true(pub.summary_empty[0]);
    g_assert_cmpint(n_ready, ==, 1);
    g_assert_cmpint(g_atomic_int_get(&n_computed), ==, 1);
    g_assert_cmpint(g_atomic_int_get(&n_on_main), ==, 0);
    AtnResult *r = atn_session_get_result(s);
    g_assert_false(atn_result_get_stats_pending(r));
    g_assert_false(atn_session_get_analysing(s));
    const atn_stats *st = atn_result_get_stats(r);
    g_assert_nonnull(st);
    atn_stats *want = NULL;
    g_assert_cmpint(atn_stats_compute(atn_result_get_capture(r), &want, NULL), ==, ATN_OK);
    char *a = stats_csv(st), *b = stats_csv(want);
    g_assert_cmpstr(a, ==, b);
    free(a);
    free(b);
    int layer = atn_session_get_layer(s), head = atn_session_get_head(s);
    g_autofree char *what = atn_label_head_summary(&want->heads[layer * want->n_heads + head]);
    g_assert_nonnull(strstr(atn_head_view_get_summary(pub.head_view), what));
    atn_stats_free(want);

    g_atomic_int_set(&n_computed, 0);
    g_atomic_int_set(&n_cancelled, 0);
    pub.n = 0;
    n_ready = 0;
    pub.then_type = "we like tea";
    w.runs = atn_session_get_n_runs(s);
    atn_session_set_text(s, "a bird sang", NULL);
    g_assert_true(wait_for(idle_with_result, &w));
    g_assert_cmpint(pub.n, ==, 2);
    g_assert_true(pub.pending[0] && pub.pending[1]);
    g_assert_cmpint(g_atomic_int_get(&n_computed), ==, 1);   /* the second result's only */
    g_assert_cmpint(n_ready, ==, 1);
    g_assert_nonnull(atn_result_get_stats(atn_session_get_result(s)));
    g_signal_handler_disconnect(s, h1);
    g_signal_handler_disconnect(s, h2);
    destroy_window(win);
}

/* A new result of the same model puts its numbers into the rows already there (no row or
 * cell widget rebuilt: that cost 100-300 ms of a switch to this view at bert-base's 144
 * heads), the table is sorted again by the same column, and the cells show the new
 * numbers. */
static void collect_labels(GtkWidget *w, GPtrArray *out) {
    if (GTK_IS_LABEL(w) && gtk_widget_get_mapped(w))
        g_ptr_array_add(out, (gpointer)gtk_label_get_text(GTK_LABEL(w)));
    for (GtkWidget *c = gtk_widget_get_first_child(w); c; c = gtk_widget_get_next_sibling(c))
        collect_labels(c, out);
}

static gboolean shows_text(AtnStatsView *sv, const char *text) {
    g_autoptr(GPtrArray) labels = g_ptr_array_new();
    collect_labels(GTK_WIDGET(sv), labels);
    for (guint i = 0; i < labels->len; i++)
        if (!g_strcmp0(labels->pdata[i], text))
            return TRUE;
    return FALSE;
}

static void test_stats_rows_in_place(void) {
    AtnWindow *win = new_window();
    AtnSession *s = atn_window_get_session(win);
    open_and_wait(win, f32_model);
    type_and_wait(win, "the cat sat on the mat");
    show_view(win, "statistics");
    AtnStatsView *sv = ATN_STATS_VIEW(atn_window_get_view_widget(win, "statistics"));
    atn_stats_view_sort_by(sv, "entropy", GTK_SORT_DESCENDING);
    GListModel *m = atn_stats_view_get_model(sv);
    AtnHeadStat *before[8];
    for (guint i = 0; i < 8; i++) {
        before[i] = g_list_model_get_item(m, i);
        g_object_unref(before[i]);   /* the store keeps them */
    }
    const char *texts[] = {"we like tea", "the mat sat on the cat because it was tired"};
    for (guint k = 0; k < G_N_ELEMENTS(texts); k++) {
        guint in_place = atn_stats_view_get_n_in_place(sv);
        type_and_wait(win, texts[k]);
        settle(50);
        g_assert_cmpuint(atn_stats_view_get_n_in_place(sv), >, in_place);
        const atn_stats *st = atn_result_get_stats(atn_session_get_result(s));
        g_assert_nonnull(st);
        g_assert_cmpuint(g_list_model_get_n_items(m), ==, 8);
        double prev = INFINITY;
        for (guint i = 0; i < 8; i++) {
            g_autoptr(AtnHeadStat) row = g_list_model_get_item(m, i);
            gboolean kept = FALSE;
            for (int j = 0; j < 8; j++)
                kept |= row == before[j];
            g_assert_true(kept);   /* one of the first result's row objects */
            const atn_head_stats *h = atn_head_stat_get_stats(row);
            const atn_head_stats *want = &st->heads[atn_head_stat_get_layer(row) * 4 + atn_head_stat_get_head(row)];
            g_assert_cmpfloat(h->entropy, ==, want->entropy);   /* the new result's, bit for bit */
            g_assert_cmpfloat(h->prev, ==, want->prev);
            g_assert_cmpint(h->pattern, ==, want->pattern);
            g_assert_cmpfloat(h->entropy, <=, prev);   /* sorted again, descending */
            prev = h->entropy;
        }
        /* the top row's cells show its new numbers */
        g_autoptr(AtnHeadStat) top = g_list_model_get_item(m, 0);
        g_autofree char *e = g_strdup_printf("%.2f", atn_head_stat_get_stats(top)->entropy);
        g_autofree char *d = g_strdup_printf("%.2f", atn_head_stat_get_stats(top)->distance);
        g_assert_true(shows_text(sv, e));
        g_assert_true(shows_text(sv, d));
    }
    destroy_window(win);
}

static guint store_items(AtnStatsView *sv) { return atn_stats_view_get_n_rows_made(sv); }

/* The rows match the session's statistics, head by head, bit for bit. */
static void assert_rows_are(AtnStatsView *sv, const atn_stats *st) {
    GListModel *m = atn_stats_view_get_model(sv);
    g_assert_cmpuint(g_list_model_get_n_items(m), ==, (guint)(st->n_layers * st->n_heads));
    gboolean *seen = g_new0(gboolean, st->n_layers * st->n_heads);
    for (guint i = 0; i < g_list_model_get_n_items(m); i++) {
        g_autoptr(AtnHeadStat) row = g_list_model_get_item(m, i);
        int c = atn_head_stat_get_layer(row) * st->n_heads + atn_head_stat_get_head(row);
        g_assert_false(seen[c]);
        seen[c] = TRUE;
        const atn_head_stats *h = atn_head_stat_get_stats(row), *want = &st->heads[c];
        g_assert_cmpfloat(h->entropy, ==, want->entropy);
        g_assert_cmpfloat(h->distance, ==, want->distance);
        g_assert_cmpint(h->pattern, ==, want->pattern);
    }
    g_free(seen);
}

/* The rows are made while the view is hidden, a few per idle (the first switch to it made all
 * 1296 cells of bert-base at once, ~150-210 ms), and the first switch then updates those rows in
 * place; a switch in the middle of that finishes them; another model's rows replace them. */
static void test_stats_rows_made_hidden(void) {
    AtnWindow *win = new_window();
    AtnSession *s = atn_window_get_session(win);
    AtnStatsView *sv = ATN_STATS_VIEW(atn_window_get_view_widget(win, "statistics"));
    open_and_wait(win, "demo");   /* 4 layers x 16 heads */
    type_and_wait(win, "the cat sat on the mat because it was tired.");
    settle(100);
    g_assert_false(gtk_widget_get_mapped(GTK_WIDGET(sv)));
    const atn_stats *st = atn_result_get_stats(atn_session_get_result(s));
    g_assert_nonnull(st);
    g_assert_cmpuint(store_items(sv), ==, 64);   /* made while hidden */
    guint in_place = atn_stats_view_get_n_in_place(sv);
    GListModel *m = atn_stats_view_get_model(sv);   /* refilled: into those rows */
    g_assert_cmpuint(atn_stats_view_get_n_in_place(sv), ==, in_place + 1);
    assert_rows_are(sv, st);
    AtnHeadStat *before[64];
    for (guint i = 0; i < 64; i++) {
        before[i] = g_list_model_get_item(m, i);
        g_object_unref(before[i]);   /* the store keeps them */
    }
    type_and_wait(win, "we like tea");   /* a new result while hidden: no rows made, the same rows updated at the switch */
    settle(100);
    st = atn_result_get_stats(atn_session_get_result(s));
    in_place = atn_stats_view_get_n_in_place(sv);
    show_view(win, "statistics");
    g_assert_cmpuint(atn_stats_view_get_n_in_place(sv), ==, in_place + 1);
    for (guint i = 0; i < 64; i++) {
        g_autoptr(AtnHeadStat) row = g_list_model_get_item(m, i);
        g_assert_true(row == before[i]);
    }
    assert_rows_are(sv, st);

    /* another model while hidden: its rows, made a few per idle; shown half-way, all of them */
    show_view(win, "head");
    open_and_wait(win, f32_model);   /* 2 x 4 heads */
    type_and_wait(win, "the cat sat on the mat");
    settle(100);
    st = atn_result_get_stats(atn_session_get_result(s));
    assert_rows_are(sv, st);
    show_view(win, "head");
    atn_session_open_model(s, "demo");   /* and watch the rows being made */
    gboolean partial = FALSE;
    gint64 give_up = g_get_monotonic_time() + 60 * G_USEC_PER_SEC;
    while (!partial && g_get_monotonic_time() < give_up) {
        if (!g_main_context_iteration(NULL, FALSE))
            g_usleep(500);
        AtnResult *r = atn_session_get_result(s);
        const atn_stats *now = r ? atn_result_get_stats(r) : NULL;
        guint n = store_items(sv);   /* 12 per idle: a multiple of 12 is the demo's, not the 8 of before */
        partial = now && now->n_layers * now->n_heads == 64 && n > 0 && n < 64 && n % 12 == 0;
    }
    g_test_message("shown with %u of 64 rows made", store_items(sv));
    g_assert_true(partial);
    show_view(win, "statistics");
    assert_rows_are(sv, atn_result_get_stats(atn_session_get_result(s)));
    destroy_window(win);
}

int main(int argc, char **argv) {
    main_thread = g_thread_self();
    if (!ui_test_init(&argc, &argv))
        return 0;
    g_test_add_func("/ui/stats-sort-activate", test_stats_sort_activate);
    g_test_add_func("/ui/stats-sort-shows-top", test_stats_sort_shows_top);
    g_test_add_func("/ui/stats-corpus", test_stats_corpus);
    g_test_add_func("/ui/stats-once-per-result", test_stats_once_per_result);
    g_test_add_func("/ui/stats-after-result", test_stats_after_result);
    g_test_add_func("/ui/stats-rows-in-place", test_stats_rows_in_place);
    g_test_add_func("/ui/stats-rows-made-hidden", test_stats_rows_made_hidden);
    return g_test_run();
}
