/* The Similarity view (ui/atn-similarity-view.c) in a real window under Xvfb: the sentence's
 * head similarity and the corpus mode.
 *
 * Run with --tap (meson does).  Without a display it reports "1..0 # SKIP no display". */
#include "ui-test-util.h"

#include "atn-fit-label.h"

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


/* Once shown, the view compares a new result while hidden (in the worker, as soon as the
 * result is there), so that a switch back finds the matrix made; before it was ever shown it
 * compares nothing; a run that starts cancels a comparison made ahead. */
static gboolean rerun_now = FALSE;
static void rerun_on_result(AtnSession *s, GParamSpec *p, AtnSimilarityView *v) {
    if (!rerun_now)
        return;
    rerun_now = FALSE;
    g_assert_true(atn_similarity_view_get_busy(v));   /* compared ahead, in flight */
    atn_session_rerun(s);                              /* a run starts: the comparison stops */
    g_assert_false(atn_similarity_view_get_busy(v));
}

static void assert_matrix_of_result(AtnSimilarityView *v, AtnSession *s) {
    AtnResult *r = atn_session_get_result(s);
    atn_similarity *want = NULL;
    g_assert_cmpint(atn_similarity_compute(atn_result_get_capture(r), ATN_METRIC_JS, ATN_SCOPE_LAYER,
                                           atn_session_get_layer(s), &want, NULL), ==, ATN_OK);
    const atn_similarity *got = atn_similarity_map_get_similarity(atn_similarity_view_get_map(v));
    g_assert_nonnull(got);
    g_assert_cmpint(got->count, ==, want->count);
    for (int i = 0; i < want->count * want->count; i++)
        g_assert_cmpfloat(got->values[i], ==, want->values[i]);
    atn_similarity_free(want);
}

static void test_similarity_ahead(void) {
    AtnWindow *win = new_window();
    AtnSession *s = atn_window_get_session(win);
    open_and_wait(win, f32_model);
    AtnSimilarityView *v = ATN_SIMILARITY_VIEW(atn_window_get_view_widget(win, "similarity"));
    type_and_wait(win, "the cat sat on the mat");
    type_and_wait(win, "we like tea");
    g_assert_cmpuint(atn_similarity_view_get_n_prefetched(v), ==, 0);   /* never shown: nothing */
    g_assert_false(atn_similarity_view_get_busy(v));
    show_view(win, "similarity");
    g_assert_true(wait_for(similarity_ready, v));
    show_view(win, "head");

    type_and_wait(win, "the dog sat on the mat");
    g_assert_cmpuint(atn_similarity_view_get_n_prefetched(v), ==, 1);
    g_assert_true(wait_for(similarity_ready, v));
    g_assert_false(gtk_widget_get_mapped(GTK_WIDGET(v)));
    assert_matrix_of_result(v, s);   /* made while hidden, for the result shown now */
    show_view(win, "similarity");
    g_assert_false(atn_similarity_view_get_busy(v));   /* nothing to compare on the switch */
    assert_matrix_of_result(v, s);

    show_view(win, "head");
    g_signal_connect(s, "notify::result", G_CALLBACK(rerun_on_result), v);
    rerun_now = TRUE;
    type_and_wait(win, "the mat sat on the dog");
    g_assert_false(rerun_now);
    settle(50);
    g_assert_true(wait_for(similarity_ready, v));   /* the rerun's result, compared ahead again */
    g_assert_cmpuint(atn_similarity_view_get_n_prefetched(v), ==, 3);
    assert_matrix_of_result(v, s);
    g_signal_handlers_disconnect_by_func(s, rerun_on_result, v);
    destroy_window(win);
}

/* cond_fns for the layout to follow a change (a slow machine, AddressSanitizer): */
typedef struct width_wait {
    GtkWidget *w;
    int at_least, not_equal;   /* the width reaches at_least, or differs from not_equal (-1: unused) */
} width_wait;

static gboolean width_reached(gpointer data) {
    width_wait *ww = data;
    int w = gtk_widget_get_width(ww->w);
    return gtk_widget_get_mapped(ww->w) && (ww->not_equal >= 0 ? w != ww->not_equal && w > 0 : w >= ww->at_least);
}

/* The matrix gets the room (issue 14): until a pair is picked, the pair pane is not shown and
 * the matrix has the view's whole width, with a hint line under it (at Text size 2.0 in a
 * 1280x720 window the empty pane took 45% of the width and the matrix's cells were ~7 px,
 * ~95 px in all in a 900-px window, every second head labelled); picking a cell brings the
 * pair pane back beside it; the next matrix collapses it again.  At Text size 1.0 and 2.0, in
 * 1280x720 and 900x700 windows, the demo model's 16 heads of a layer. */
static void test_similarity_room(void) {
    /* cells before: 1280x720 ~12 px at 1.0, 9.7 px at 2.0; 900x700 at 2.0 ~3 px (the window's
       height is then the limit: 6.1 px, every second head labelled) */
    static const struct { int w, h; double scale; double min_cell; gboolean every_label; } sizes[] = {
        {1280, 720, 1.0, 18, TRUE}, {1280, 720, 2.0, 11, TRUE}, {900, 700, 2.0, 5.5, FALSE}};
    for (guint i = 0; i < G_N_ELEMENTS(sizes); i++) {
        AtnWindow *win = text_size_window(sizes[i].w, sizes[i].h, sizes[i].scale);
        open_and_wait(win, "demo");
        type_and_wait(win, "The quick brown fox jumps over the lazy dog because it was tired.");
        gtk_window_set_default_size(GTK_WINDOW(win), sizes[i].w, sizes[i].h);
        show_view(win, "similarity");
        AtnSimilarityView *v = ATN_SIMILARITY_VIEW(atn_window_get_view_widget(win, "similarity"));
        g_assert_true(wait_for(similarity_ready, v));
        settle(300);
        AtnSimilarityMap *map = atn_similarity_view_get_map(v);
        atn_similarity_layout S;
        g_assert_true(atn_similarity_map_get_layout(map, &S));
        int vw = gtk_widget_get_width(GTK_WIDGET(v)), mw = gtk_widget_get_width(GTK_WIDGET(map));
        g_test_message("text size %.1f, %dx%d window, no pair: matrix widget %d of the view's %d px, cells %.1f px, "
                       "every %d-th label, legend %s", sizes[i].scale, gtk_widget_get_width(GTK_WIDGET(win)),
                       gtk_widget_get_height(GTK_WIDGET(win)), mw, vw, S.matrix.cell_w, S.matrix.row_label_step,
                       S.side ? "beside" : "on top");
        g_assert_false(atn_similarity_view_get_pair_shown(v));
        if (mw < vw * 0.95)
            g_error("text size %.1f, %d px window: with no pair the matrix has %d of the view's %d px",
                    sizes[i].scale, sizes[i].w, mw, vw);
        if (S.matrix.cell_w < sizes[i].min_cell ||
            (sizes[i].every_label && (S.matrix.row_label_step != 1 || S.matrix.col_label_step != 1)))
            g_error("text size %.1f, %d px window: the matrix's cells are %.1f px (at least %.0f wanted), every %d-th "
                    "head labelled", sizes[i].scale, sizes[i].w, S.matrix.cell_w, sizes[i].min_cell,
                    S.matrix.row_label_step);
        g_autoptr(GString) bad = g_string_new(NULL);
        widgets_cut(GTK_WIDGET(v), bad);
        if (bad->len)
            g_error("text size %.1f, %d px window, no pair:%s", sizes[i].scale, sizes[i].w, bad->str);
        /* the summary has a line of its own rather than a sliver (in the 900 px window at Text
           size 2.0 it was a character a line, "1 6 …", cut, and its line 110 px tall) */
        AtnFitLabelShown shown;
        g_assert_true(atn_fit_label_get_shown(ATN_FIT_LABEL(atn_similarity_view_get_info_widget(v)), &shown));
        g_test_message("  summary: “%s”, %d line(s) at %.1f of the font%s", shown.text, shown.lines, shown.scale,
                       shown.cut ? ", cut" : "");
        g_assert_false(shown.cut);
        g_assert_cmpint(shown.lines, ==, 1);
        g_assert_cmpfloat(shown.scale, ==, 1.0);
        /* a pair: the pane beside the matrix, its heatmaps drawn */
        atn_similarity_view_compare(v, 2, 9);
        g_assert_true(atn_similarity_view_get_pair_shown(v));
        AtnHeatmap *a = atn_similarity_view_get_pair_heatmap(v, 0);
        g_assert_true(wait_for(is_drawable, a));
        settle(100);
        atn_heatmap_layout L;
        g_assert_true(atn_heatmap_get_layout(a, &L));
        g_test_message("  with a pair: matrix widget %d px, the pair's heatmaps %d px wide",
                       gtk_widget_get_width(GTK_WIDGET(map)), gtk_widget_get_width(GTK_WIDGET(a)));
        g_assert_cmpint(gtk_widget_get_width(GTK_WIDGET(map)), <, vw * 0.8);
        g_assert_cmpint(gtk_widget_get_width(GTK_WIDGET(a)), >, 0);
        /* the next matrix (another metric) has no pair picked: collapsed again */
        atn_similarity_view_set_metric(v, ATN_METRIC_COSINE);
        g_assert_true(wait_for(similarity_ready, v));
        g_assert_false(atn_similarity_view_get_pair_shown(v));
        width_wait full = {GTK_WIDGET(map), (int)ceil(vw * 0.95), -1};
        g_assert_true(wait_for(width_reached, &full));
        text_size_done(win);
    }
}

/* A 144-head similarity (bert-base's 12 x 12, whole model) made by hand: the values of a
 * fixed pattern, clustered by the engine; the caller owns it. */
static atn_similarity *similarity_144(void) {
    atn_similarity *sim = atn_similarity_new(12, 12, ATN_METRIC_JS, ATN_SCOPE_MODEL, -1, NULL);
    g_assert_nonnull(sim);
    g_assert_cmpint(atn_similarity_finish(sim, NULL), ==, ATN_OK);
    int c = sim->count;
    g_assert_cmpint(c, ==, 144);
    double *dist = g_new(double, (size_t)c * c);
    for (int a = 0; a < c; a++)
        for (int b = 0; b < c; b++)
            sim->values[(size_t)a * c + b] = dist[(size_t)a * c + b] =
                a == b ? 0.0 : 0.1 + 0.8 * fabs(sin(0.37 * (a + 1) * (b + 1) + a + b));
    g_assert_cmpint(atn_cluster_average_linkage(dist, c, sim->order, sim->merge_a, sim->merge_b, sim->merge_height, NULL),
                    ==, ATN_OK);
    g_free(dist);
    return sim;
}

/* Hovering the Similarity figure (issue 14): with bert-base's 144 heads each hover (a tooltip
 * query, atn_similarity_map_pair_at) laid the whole figure out again, 3-4 heatmap layouts of
 * 144 labels.  The widget keeps the layout per size and similarity: a hover makes no layout
 * and gives the same pair as the renderer's own hit test; a new size or text size makes one
 * figure layout, then hovers are free again. */
static void test_similarity_hover_cost(void) {
    GtkWindow *win = GTK_WINDOW(gtk_window_new());
    AtnSimilarityMap *map = ATN_SIMILARITY_MAP(atn_similarity_map_new());
    gtk_window_set_child(win, GTK_WIDGET(map));
    gtk_window_set_default_size(win, 1000, 760);
    gtk_window_present(win);
    g_assert_true(wait_for(is_drawable, map));
    atn_similarity_map_set_similarity(map, similarity_144());
    settle(300);
    int w = gtk_widget_get_width(GTK_WIDGET(map)), h = gtk_widget_get_height(GTK_WIDGET(map));
    atn_similarity_layout S;
    g_assert_true(atn_similarity_map_get_layout(map, &S));
    const atn_rect *cells = &S.matrix.cells;
    g_test_message("144 heads in %dx%d px: cells %.1f px", w, h, S.matrix.cell_w);
    enum { N = 400 };
    double xs[N], ys[N];
    int got_a[N], got_b[N], hits = 0;
    for (int i = 0; i < N; i++) {   /* a walk over the matrix and a little around it */
        xs[i] = cells->x - 5 + (cells->w + 10) * ((i * 37) % N) / (double)N;
        ys[i] = cells->y - 5 + (cells->h + 10) * ((i * 91) % N) / (double)N;
    }
    atn_similarity_map_pair_at(map, xs[0], ys[0], &got_a[0], &got_b[0]);   /* the first lays out */
    guint n0 = atn_similarity_map_get_n_layouts(map);
    g_assert_cmpuint(n0, >=, 1);
    unsigned long l0 = atn_render_heatmap_layout_count();
    gint64 t0 = g_get_monotonic_time();
    for (int i = 0; i < N; i++)
        hits += atn_similarity_map_pair_at(map, xs[i], ys[i], &got_a[i], &got_b[i]);
    double per_hover_ms = (g_get_monotonic_time() - t0) / 1000.0 / N;
    unsigned long layouts = atn_render_heatmap_layout_count() - l0;
    g_test_message("%d hovers (%d on a cell): %.4f ms each, %lu heatmap layouts (%.2f per hover)", N, hits, per_hover_ms,
                   layouts, (double)layouts / N);
    g_assert_cmpint(hits, >, N / 2);
    g_assert_cmpint(hits, <, N);   /* some just outside the cells */
    g_assert_cmpuint(layouts, ==, 0);
    g_assert_cmpuint(atn_similarity_map_get_n_layouts(map), ==, n0);
    /* the same pairs as the renderer's own hit test (which lays the figure out) with the
       widget's spec: the tooltip's spec, at its text size, in its style */
    atn_render_style style;
    atn_render_style_for_widget(GTK_WIDGET(map), 1.0, &style);
    atn_similarity_spec spec;
    atn_similarity_spec_init(&spec);
    spec.sim = atn_similarity_map_get_similarity(map);
    spec.style = &style;
    spec.title = "Jensen-Shannon distance between every pair of heads";
    for (int i = 0; i < N; i += 7) {
        int32_t a, b;
        gboolean on = atn_render_similarity_cell_at(&spec, w, h, xs[i], ys[i], &a, &b);
        if (on != (got_a[i] >= 0) || a != got_a[i] || b != got_b[i])
            g_error("hover at (%.1f, %.1f): the widget says %d,%d, the renderer %d,%d", xs[i], ys[i], got_a[i],
                    got_b[i], a, b);
    }
    /* the tooltip query of a motion event goes through the same path: no layout */
    l0 = atn_render_heatmap_layout_count();
    gtk_widget_trigger_tooltip_query(GTK_WIDGET(map));
    settle(50);
    g_assert_cmpuint(atn_render_heatmap_layout_count() - l0, ==, 0);
    /* a new size or text size: one more figure layout, then hovers are free again */
    atn_similarity_map_set_font_scale(map, 2.0);
    settle(200);
    for (int i = 0; i < 50; i++)
        atn_similarity_map_pair_at(map, xs[i], ys[i], &got_a[i], &got_b[i]);
    g_assert_cmpuint(atn_similarity_map_get_n_layouts(map), ==, n0 + 1);
    width_wait resized = {GTK_WIDGET(map), 0, gtk_widget_get_width(GTK_WIDGET(map))};
    gtk_window_set_default_size(win, 900, 700);
    g_assert_true(wait_for(width_reached, &resized));
    for (int i = 0; i < 50; i++)
        atn_similarity_map_pair_at(map, xs[i], ys[i], &got_a[i], &got_b[i]);
    g_assert_cmpuint(atn_similarity_map_get_n_layouts(map), ==, n0 + 2);
    gtk_window_destroy(win);
    settle(50);
}

int main(int argc, char **argv) {
    if (!ui_test_init(&argc, &argv))
        return 0;
    g_test_add_func("/ui/similarity", test_similarity);
    g_test_add_func("/ui/similarity-corpus", test_similarity_corpus);
    g_test_add_func("/ui/similarity-ahead", test_similarity_ahead);
    g_test_add_func("/ui/similarity-room", test_similarity_room);
    g_test_add_func("/ui/similarity-hover-cost", test_similarity_hover_cost);
    return g_test_run();
}
