/* The Head view (ui/atn-head-view.c) in a real window under Xvfb: the tokens it shows after
 * opening, switching and typing, redraws on layer/head changes, hover and click, and the head
 * a model opens on (the clearest one).
 *
 * Run with --tap (meson does).  Without a display it reports "1..0 # SKIP no display". */
#include "ui-test-util.h"

#include <unistd.h>

#include "atn-head-view-scale.h"
#include "atn-labels.h"
#include "atn-token-lines.h"

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
 * model arrives (--layer/--head) is kept; a toy model starts on head 0, its lesson's head;
 * no model starts on the head index of the model before. */
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
    /* a toy model: head 0, its lesson's head; not the index of the model before clamped to
       its 2 heads (head 1), which means nothing there */
    atn_session_select_head(s, 1, 3);
    open_and_wait(win, "worked-example");
    g_assert_cmpint(atn_session_get_layer(s), ==, 0);
    g_assert_cmpint(atn_session_get_head(s), ==, 0);
    /* and back: the trained model's clearest head again, not the toy's index */
    atn_session_select_head(s, 0, 1);
    open_and_wait(win, "demo");
    g_assert_cmpint(atn_session_get_layer(s), ==, layer);
    g_assert_cmpint(atn_session_get_head(s), ==, head);
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


/* ---- long inputs: zoom, one query, token lines, keyboard, the fixed colour scale --------------- */

static GtkEventController *controller_of(GtkWidget *w, GType type) {
    g_autoptr(GListModel) ctl = gtk_widget_observe_controllers(w);
    for (guint i = 0; i < g_list_model_get_n_items(ctl); i++) {
        g_autoptr(GObject) c = g_list_model_get_item(ctl, i);
        if (G_TYPE_CHECK_INSTANCE_TYPE(c, type))
            return GTK_EVENT_CONTROLLER(c);
    }
    g_assert_not_reached();
}

static gboolean press_key(GtkWidget *w, guint keyval) {
    gboolean handled = FALSE;
    g_signal_emit_by_name(controller_of(w, GTK_TYPE_EVENT_CONTROLLER_KEY), "key-pressed", keyval, 0, 0, &handled);
    return handled;
}

/* ~110 tokens of the demo model (128 positions) */
static const char *long_text(void) {
    static char buf[2048];
    buf[0] = 0;
    for (int i = 0; i < 10; i++)
        g_strlcat(buf, "the cat sat on the mat because it was tired. ", sizeof buf);
    return buf;
}

/* The wheel, +/−/0 and zoom_at change the visible block of cells; what is drawn and
 * hit-tested follows it. */
static void test_zoom(void) {
    AtnWindow *win = new_window();
    open_and_wait(win, "demo");
    type_and_wait(win, long_text());
    show_view(win, "head");
    AtnHeatmap *hm = head_heatmap(win);
    int n = atn_heatmap_get_rows(hm);
    g_assert_cmpint(n, >, 100);
    int r0, c0, nr, nc;
    atn_heatmap_get_visible(hm, &r0, &c0, &nr, &nc);
    g_assert_cmpint(r0, ==, 0);
    g_assert_cmpint(nr, ==, n);
    g_assert_cmpint(nc, ==, n);
    int w, h;
    g_autoptr(GBytes) before = render_widget(GTK_WIDGET(hm), &w, &h);
    atn_heatmap_layout L;
    g_assert_true(atn_heatmap_get_layout(hm, &L));
    double cell0 = L.cell_w;

    /* the wheel (up = in) at the centre of the cells */
    gboolean handled = FALSE;
    g_signal_emit_by_name(controller_of(GTK_WIDGET(hm), GTK_TYPE_EVENT_CONTROLLER_SCROLL), "scroll", 0.0, -3.0,
                          &handled);
    g_assert_true(handled);
    atn_heatmap_get_visible(hm, &r0, &c0, &nr, &nc);
    g_assert_cmpint(nr, <, n);
    g_assert_cmpint(nr, ==, (int)ceil(n / atn_heatmap_get_zoom(hm)));
    g_assert_cmpint(r0, >, 0);   /* about the centre */
    g_assert_cmpint(r0 + nr, <, n);
    /* keyboard: + doubles, − halves, 0 shows everything */
    double z = atn_heatmap_get_zoom(hm);
    g_assert_true(press_key(GTK_WIDGET(hm), GDK_KEY_plus));
    g_assert_cmpfloat(fabs(atn_heatmap_get_zoom(hm) - 2 * z), <, 1e-9);
    atn_heatmap_get_visible(hm, &r0, &c0, &nr, &nc);
    g_assert_cmpint(nr, ==, (int)ceil(n / (2 * z)));
    settle(30);
    g_autoptr(GBytes) zoomed = render_widget(GTK_WIDGET(hm), &w, &h);
    g_assert_false(g_bytes_equal(before, zoomed));
    g_assert_true(atn_heatmap_get_layout(hm, &L));
    g_assert_cmpint(L.view_row0, ==, r0);
    g_assert_cmpint(L.view_rows, ==, nr);
    g_assert_cmpfloat(L.cell_w, >, 3 * cell0);   /* zoomed about 3.9 times */
    g_assert_cmpfloat(L.overview.w, >, 0);   /* the minimap */
    /* the top-left cell on screen is (r0, c0); its rectangle is there */
    int row, col;
    g_assert_true(atn_heatmap_cell_at(hm, L.cells.x + 1, L.cells.y + 1, &row, &col));
    g_assert_cmpint(row, ==, r0);
    g_assert_cmpint(col, ==, c0);
    graphene_rect_t rect;
    g_assert_false(atn_heatmap_get_cell_rect(hm, 0, 0, &rect));   /* scrolled out of view */
    g_assert_true(atn_heatmap_get_cell_rect(hm, r0 + 1, c0 + 2, &rect));
    g_assert_cmpfloat(fabs(rect.origin.x - (L.cells.x + 2 * L.cell_w)), <, 1e-3);
    /* a click in the overview centres the view there (and selects no query) */
    int q_before = atn_session_get_query(atn_window_get_session(win));
    click(GTK_WIDGET(hm), L.overview.x + L.overview.w * 0.9, L.overview.y + L.overview.h * 0.9);
    int or0, oc0;
    atn_heatmap_get_visible(hm, &or0, &oc0, NULL, NULL);
    g_assert_cmpint(or0, ==, MIN(n - nr, (int)(0.9 * n) - nr / 2));
    g_assert_cmpint(oc0, ==, MIN(n - nc, (int)(0.9 * n) - nc / 2));
    g_assert_cmpint(atn_session_get_query(atn_window_get_session(win)), ==, q_before);
    atn_heatmap_pan(hm, r0 - or0, c0 - oc0);   /* back where it was */
    /* panning moves the block, clamped to the matrix */
    atn_heatmap_pan(hm, 5, -1000);
    atn_heatmap_get_visible(hm, &row, &col, NULL, NULL);
    g_assert_cmpint(row, ==, r0 + 5);
    g_assert_cmpint(col, ==, 0);
    g_assert_true(press_key(GTK_WIDGET(hm), GDK_KEY_minus));
    g_assert_cmpfloat(fabs(atn_heatmap_get_zoom(hm) - z), <, 1e-9);
    g_assert_true(press_key(GTK_WIDGET(hm), GDK_KEY_0));
    atn_heatmap_get_visible(hm, &r0, &c0, &nr, &nc);
    g_assert_cmpint(r0, ==, 0);
    g_assert_cmpint(nr, ==, n);
    destroy_window(win);
}

/* One query: the selected row as bars; each bar's height reads back the capture's weight. */
static void test_one_query(void) {
    AtnWindow *win = new_window();
    open_and_wait(win, f32_model);
    const char *text = "the cat sat on the mat";
    type_and_wait(win, text);
    show_view(win, "head");
    AtnSession *s = atn_window_get_session(win);
    atn_session_select_head(s, 1, 2);
    atn_session_set_query(s, 3);
    GtkWidget *view = atn_window_get_view_widget(win, "head");
    AtnHeatmap *hm = head_heatmap(win);
    int w, h;
    g_autoptr(GBytes) matrix = render_widget(GTK_WIDGET(hm), &w, &h);
    atn_head_view_set_one_query(ATN_HEAD_VIEW(view), TRUE);
    g_assert_true(atn_heatmap_get_one_query(hm));
    settle(30);
    g_autoptr(GBytes) bars = render_widget(GTK_WIDGET(hm), &w, &h);
    g_assert_false(g_bytes_equal(matrix, bars));
    g_assert_cmpint(atn_heatmap_get_bars_row(hm), ==, 3);

    /* the engine's own run of the same text, not the window's */
    atn_error err = {0};
    atn_model *m = atn_model_open(f32_model, NULL, NULL, &err);
    g_assert_nonnull(m);
    atn_encoding *enc = NULL;
    g_assert_cmpint(atn_model_encode(m, text, NULL, &enc, &err), ==, ATN_OK);
    atn_run *run = atn_run_new(m);
    g_assert_nonnull(run);
    g_assert_cmpint(atn_run_forward(run, enc, NULL, &err), ==, ATN_OK);
    const atn_capture *cap = atn_run_capture(run);
    int n = cap->n;
    const float *a = cap->attn + ((size_t)1 * cap->n_heads + 2) * n * n;
    double top = 0;
    for (int j = 0; j < n; j++) {
        double v;
        graphene_rect_t rect;
        g_assert_true(atn_heatmap_get_bar(hm, j, &v, &rect));
        g_assert_cmpfloat(fabs(v - a[3 * n + j]), <, 1e-6);
        top = MAX(top, rect.size.height);
        int row, col;   /* the bar hit-tests as key j of query 3 */
        g_assert_true(atn_heatmap_cell_at(hm, rect.origin.x + rect.size.width / 2, rect.origin.y + rect.size.height - 1,
                                          &row, &col));
        g_assert_cmpint(row, ==, 3);
        g_assert_cmpint(col, ==, j);
    }
    g_assert_cmpfloat(top, >, 50);
    /* another query: the bars follow */
    atn_session_set_query(s, 5);
    double v;
    g_assert_true(atn_heatmap_get_bar(hm, 0, &v, NULL));
    g_assert_cmpfloat(fabs(v - a[5 * n + 0]), <, 1e-6);
    /* exported as the bar chart */
    g_autoptr(AtnFigure) fig = atn_figure_source_dup_figure(ATN_FIGURE_SOURCE(view));
    g_assert_nonnull(fig);
    atn_head_view_set_one_query(ATN_HEAD_VIEW(view), FALSE);
    g_assert_false(atn_heatmap_get_bar(hm, 0, &v, NULL));
    atn_run_free(run);
    atn_encoding_free(enc);
    atn_model_free(m);
    destroy_window(win);
}

/* Token lines: only the hovered token's (out of a query, into a key), else the selected
 * query's; every token's on request; a threshold hides faint lines. */
static void test_token_lines_focus(void) {
    AtnWindow *win = new_window();
    open_and_wait(win, f32_model);
    type_and_wait(win, "the cat sat on the mat");
    show_view(win, "head");
    AtnSession *s = atn_window_get_session(win);
    atn_session_select_head(s, 0, 1);
    atn_session_set_query(s, 2);
    GtkWidget *view = atn_window_get_view_widget(win, "head");
    AtnTokenLines *tl = ATN_TOKEN_LINES(atn_head_view_get_token_lines(ATN_HEAD_VIEW(view)));
    AtnResult *r = atn_session_get_result(s);
    int n = atn_result_get_n_tokens(r);
    const float *a = atn_result_get_head(r, 0, 1);
    int32_t from[4096], to[4096];
    int64_t c = atn_token_lines_get_lines(tl, from, to, 4096);
    g_assert_cmpint(c, >, 0);
    g_assert_cmpint(c, <=, n);
    for (int64_t k = 0; k < c; k++)
        g_assert_cmpint(from[k], ==, 2);
    int w, h;
    settle(30);
    g_autoptr(GBytes) q2 = render_widget(GTK_WIDGET(tl), &w, &h);
    /* hovering query token 4 here: its lines */
    atn_token_lines_hover(tl, 0, 4);
    c = atn_token_lines_get_lines(tl, from, to, 4096);
    g_assert_cmpint(c, >, 0);
    for (int64_t k = 0; k < c; k++)
        g_assert_cmpint(from[k], ==, 4);
    settle(30);
    g_autoptr(GBytes) q4 = render_widget(GTK_WIDGET(tl), &w, &h);
    g_assert_false(g_bytes_equal(q2, q4));
    /* hovering key token 5: the lines into it, from several queries */
    atn_token_lines_hover(tl, 1, 5);
    c = atn_token_lines_get_lines(tl, from, to, 4096);
    int expect = 0;
    for (int i = 0; i < n; i++)
        expect += a[i * n + 5] > 0.01;
    g_assert_cmpint(c, ==, expect);
    g_assert_cmpint(c, >, 1);
    for (int64_t k = 0; k < c; k++)
        g_assert_cmpint(to[k], ==, 5);
    /* a token hovered in another view is a query here */
    atn_token_lines_hover(tl, -1, -1);
    atn_session_set_hover_token(s, 1);
    c = atn_token_lines_get_lines(tl, from, to, 4096);
    for (int64_t k = 0; k < c; k++)
        g_assert_cmpint(from[k], ==, 1);
    atn_session_set_hover_token(s, -1);
    /* every line: more than one token's, all above the default 0.01 */
    atn_token_lines_set_all_lines(tl, TRUE);
    int64_t all = atn_token_lines_get_lines(tl, from, to, 4096);
    expect = 0;
    for (int i = 0; i < n * n; i++)
        expect += a[i] > 0.01;
    g_assert_cmpint(all, ==, expect);
    g_assert_cmpint(all, >, n);
    /* the threshold: only lines above it */
    atn_token_lines_set_threshold(tl, 0.2);
    c = atn_token_lines_get_lines(tl, from, to, 4096);
    expect = 0;
    for (int i = 0; i < n * n; i++)
        expect += a[i] > 0.2;
    g_assert_cmpint(c, ==, expect);
    g_assert_cmpint(c, <, all);
    for (int64_t k = 0; k < c; k++)
        g_assert_cmpfloat(a[from[k] * n + to[k]], >, 0.2);
    destroy_window(win);
}

/* The settled picture of token lines drawn in a worker: drawn again until no worker is left. */
static GBytes *worker_lines_picture(AtnTokenLines *tl, int *w, int *h) {
    for (int i = 0; i < 10; i++) {
        GBytes *b = render_widget(GTK_WIDGET(tl), w, h);
        if (!atn_token_lines_get_busy(tl))
            return b;
        g_bytes_unref(b);
        while (atn_token_lines_get_busy(tl))
            g_main_context_iteration(NULL, TRUE);
    }
    g_assert_not_reached();
}

/* Every line of a long input (40 tokens or more) is drawn in a worker thread: a head's
 * picture comes back and is the same each time; a drawing made stale by another head before
 * it is back is dropped, not shown (the picture is the newer head's); a window closed while
 * one is in flight drops it. */
static void test_token_lines_worker(void) {
    AtnWindow *win = new_window();
    open_and_wait(win, "demo");
    GString *text = g_string_new("");
    for (int i = 0; i < 8; i++)
        g_string_append(text, "the cat sat on the mat ");
    type_and_wait(win, text->str);
    g_string_free(text, TRUE);
    show_view(win, "head");
    AtnSession *s = atn_window_get_session(win);
    g_assert_cmpint(atn_result_get_n_tokens(atn_session_get_result(s)), >=, 40);   /* ASYNC_MIN_TOKENS */
    GtkWidget *view = atn_window_get_view_widget(win, "head");
    AtnTokenLines *tl = ATN_TOKEN_LINES(atn_head_view_get_token_lines(ATN_HEAD_VIEW(view)));
    atn_token_lines_set_all_lines(tl, TRUE);
    settle(30);
    int w, h;
    atn_session_select_head(s, 0, 1);
    g_autoptr(GBytes) first = render_widget(GTK_WIDGET(tl), &w, &h);
    g_assert_true(atn_token_lines_get_busy(tl));   /* a new head: drawn in a worker */
    g_autoptr(GBytes) a = worker_lines_picture(tl, &w, &h);
    atn_session_select_head(s, 0, 2);
    g_autoptr(GBytes) b = worker_lines_picture(tl, &w, &h);
    g_assert_false(g_bytes_equal(a, b));
    atn_session_select_head(s, 0, 1);
    g_autoptr(GBytes) a2 = worker_lines_picture(tl, &w, &h);
    g_assert_true(g_bytes_equal(a, a2));
    /* head 1 asked for, head 2 chosen before its drawing is back: that drawing is dropped */
    atn_session_select_head(s, 0, 2);
    g_autoptr(GBytes) b2 = worker_lines_picture(tl, &w, &h);
    g_assert_true(g_bytes_equal(b, b2));
    atn_session_select_head(s, 0, 1);
    g_autoptr(GBytes) old = render_widget(GTK_WIDGET(tl), &w, &h);
    g_assert_true(atn_token_lines_get_busy(tl));
    g_assert_true(g_bytes_equal(old, b));   /* the old picture stays while the new is drawn */
    atn_session_select_head(s, 0, 2);
    while (atn_token_lines_get_busy(tl))
        g_main_context_iteration(NULL, TRUE);
    g_autoptr(GBytes) b3 = worker_lines_picture(tl, &w, &h);
    g_assert_true(g_bytes_equal(b, b3));
    /* closed with a drawing in flight */
    atn_session_select_head(s, 0, 1);
    g_autoptr(GBytes) last = render_widget(GTK_WIDGET(tl), &w, &h);
    g_assert_true(atn_token_lines_get_busy(tl));
    destroy_window(win);
}

/* The arrow keys move the keyboard's cell (its row becomes the query) with a focus ring, and
 * the heatmap's accessible description reads the cell's value. */
static void test_keyboard_cell(void) {
    AtnWindow *win = new_window();
    open_and_wait(win, f32_model);
    type_and_wait(win, "the cat sat on the mat");
    show_view(win, "head");
    AtnSession *s = atn_window_get_session(win);
    atn_session_set_query(s, 2);
    AtnHeatmap *hm = head_heatmap(win);
    gtk_widget_grab_focus(GTK_WIDGET(hm));
    settle(30);
    int w, h;
    g_autoptr(GBytes) plain = render_widget(GTK_WIDGET(hm), &w, &h);
    g_assert_true(press_key(GTK_WIDGET(hm), GDK_KEY_Down));   /* first press: the cursor appears on row 2 */
    g_assert_true(press_key(GTK_WIDGET(hm), GDK_KEY_Down));
    g_assert_true(press_key(GTK_WIDGET(hm), GDK_KEY_Right));
    int row, col;
    atn_heatmap_get_cursor(hm, &row, &col);
    g_assert_cmpint(row, ==, 3);
    g_assert_cmpint(col, ==, 3);
    g_assert_cmpint(atn_session_get_query(s), ==, 3);
    g_autofree char *text = atn_heatmap_dup_cell_text(hm, 3, 3);
    g_autofree char *weight = g_strdup_printf("%.4f", (double)atn_heatmap_get_value(hm, 3, 3));
    g_assert_nonnull(strstr(text, weight));
    char *diff = gtk_test_accessible_check_property(GTK_ACCESSIBLE(hm), GTK_ACCESSIBLE_PROPERTY_DESCRIPTION, text);
    g_assert_cmpstr(diff, ==, NULL);
    /* the focus ring: the drawing differs from the same cells without the keyboard's cell */
    settle(30);
    g_autoptr(GBytes) ring = render_widget(GTK_WIDGET(hm), &w, &h);
    g_assert_false(g_bytes_equal(plain, ring));
    /* at the edge the cursor stays in the matrix */
    for (int i = 0; i < 40; i++)
        press_key(GTK_WIDGET(hm), GDK_KEY_Up);
    atn_heatmap_get_cursor(hm, &row, &col);
    g_assert_cmpint(row, ==, 0);
    g_assert_cmpint(atn_session_get_query(s), ==, 0);
    destroy_window(win);
}

/* A toy model whose W_Q is zero: every score is 0, every weight 1/3 of the 3 tokens. */
static char *uniform_model(void) {
    char *path = g_build_filename(g_get_tmp_dir(), "attnscope-uniform-XXXXXX.json", NULL);
    int fd = g_mkstemp(path);
    g_assert_cmpint(fd, >=, 0);
    const char *json = "{\"name\": \"uniform\", \"tokens\": [\"a\", \"b\", \"c\"],"
                       " \"inputs\": [[0.5, 1.1, 0.2, 0.1], [1.0, 1.1, 0.3, 0.2], [1.2, -0.2, 0.1, 0.4]],"
                       " \"d_model\": 4, \"heads\": 2, \"layernorm\": false, \"ffn\": false, \"residual\": false,"
                       " \"layers\": [{\"W_Q\": [[0,0,0,0],[0,0,0,0],[0,0,0,0],[0,0,0,0]]}]}";
    g_assert_true(write(fd, json, strlen(json)) == (ssize_t)strlen(json));
    close(fd);
    return path;
}

static guint32 texel(const guchar *px, int w, double x, double y) {
    const guchar *p = px + ((size_t)(int)y * w + (int)x) * 4;   /* BGRA premultiplied, opaque here */
    return ((guint32)p[2] << 16) | ((guint32)p[1] << 8) | p[0];
}

/* The fixed 0–1 scale: a uniform 1/3 head is drawn in the colour the colour bar shows at 1/3
 * (on its own 0..max scale it would be the top colour), and the bar says which scale. */
/* A typed token span ("2-5") is what Export writes: the figure of tokens 2..5 on both axes, the
 * size of `attnscope export heatmap --range 2:6` of the same head and title (the whole matrix's
 * is larger); an empty span exports the whole matrix again (issue 35). */
static void test_span_export(void) {
    AtnWindow *win = new_window();
    open_and_wait(win, "demo");
    const char *text = "the cat sat on the mat because it was tired";
    type_and_wait(win, text);
    show_view(win, "head");
    settle(50);
    AtnSession *s = atn_window_get_session(win);
    GtkWidget *view = atn_window_get_view_widget(win, "head");
    GtkWidget *box = atn_head_view_get_scale_controls(ATN_HEAD_VIEW(view));
    AtnHeatmap *hm = head_heatmap(win);
    g_autoptr(AtnFigure) whole = atn_figure_source_dup_figure(ATN_FIGURE_SOURCE(view));
    g_assert_true(atn_head_view_scale_set_span(box, "2-5"));
    settle(30);
    g_autoptr(AtnFigure) crop = atn_figure_source_dup_figure(ATN_FIGURE_SOURCE(view));
    g_assert_nonnull(crop);
    g_assert_cmpfloat(crop->width * crop->height, <, whole->width * whole->height);
    g_autofree char *dir = g_dir_make_tmp("atn-span-XXXXXX", NULL);
    g_autofree char *gui = g_build_filename(dir, "gui.png", NULL), *cli = g_build_filename(dir, "cli.png", NULL);
    g_assert_true(atn_figure_save(crop, gui, 1.0, NULL));
    g_autofree char *layer = g_strdup_printf("%d", atn_session_get_layer(s));
    g_autofree char *head = g_strdup_printf("%d", atn_session_get_head(s));
    const char *const args[] = {"export", "heatmap", "--model", "demo", "--text", text, "--layer", layer, "--head",
                                head, "--range", "2:6", "--title", atn_heatmap_get_title(hm), NULL};
    cli_export(args, cli);
    compare_pngs(gui, cli);
    {   /* the same picture: the window's crop and the command line's --range, pixel for pixel */
        g_autoptr(GdkTexture) a = gdk_texture_new_from_filename(gui, NULL), b = gdk_texture_new_from_filename(cli, NULL);
        g_assert_nonnull(a);
        g_assert_nonnull(b);
        int w = gdk_texture_get_width(a), h = gdk_texture_get_height(a);
        g_autofree guchar *pa = g_malloc((gsize)w * h * 4), *pb = g_malloc((gsize)w * h * 4);
        gdk_texture_download(a, pa, (gsize)w * 4);
        gdk_texture_download(b, pb, (gsize)w * 4);
        int differ = 0;
        for (gsize i = 0; i < (gsize)w * h * 4; i++)
            differ += pa[i] != pb[i];
        g_test_message("window crop vs export --range: %d of %d bytes differ", differ, w * h * 4);
        g_assert_cmpint(differ, ==, 0);
    }
    /* the whole matrix again once the span is emptied */
    g_assert_true(atn_head_view_scale_set_span(box, ""));
    settle(30);
    g_autoptr(AtnFigure) again = atn_figure_source_dup_figure(ATN_FIGURE_SOURCE(view));
    g_assert_cmpfloat(again->width, ==, whole->width);
    g_assert_cmpfloat(again->height, ==, whole->height);
    g_unlink(gui);
    g_unlink(cli);
    g_rmdir(dir);
    destroy_window(win);
}

/* "Words": the head merged into words as exBERT/bertviz users do, each cell worked out here
 * from the result's head and the tokens' "##" (a word's row: the mean over its pieces' rows of
 * the sum over the key word's pieces); the labels are the words; clicking a word's row selects
 * its first token; the token lines list the words with the same merged weights and draw the
 * selected query's word's lines; off again: the tokens (issue 35). */
static void test_words(void) {
    AtnWindow *win = new_window();
    open_and_wait(win, "demo");
    type_and_wait(win, "the transformers were unbelievably tokenized");
    show_view(win, "head");
    settle(50);
    AtnSession *s = atn_window_get_session(win);
    AtnResult *r = atn_session_get_result(s);
    int n = atn_result_get_n_tokens(r);
    const char *const *tok = atn_result_get_tokens(r);
    const float *v = atn_result_get_head(r, atn_session_get_layer(s), atn_session_get_head(s));
    int start[64], nw = 0;
    for (int i = 0; i < n && nw < 63; i++)   /* a piece starting "##" continues the word before */
        if (i == 0 || !g_str_has_prefix(tok[i], "##"))
            start[nw++] = i;
    start[nw] = n;
    g_assert_cmpint(nw, <, n);   /* something to merge */
    AtnHeadView *view = ATN_HEAD_VIEW(atn_window_get_view_widget(win, "head"));
    AtnHeatmap *hm = head_heatmap(win);
    gtk_check_button_set_active(atn_head_view_get_words_check(view), TRUE);
    settle(50);
    g_assert_cmpint(atn_heatmap_get_rows(hm), ==, nw);
    for (int a = 0; a < nw; a++)
        for (int b = 0; b < nw; b++) {
            double sum = 0;
            for (int i = start[a]; i < start[a + 1]; i++)
                for (int j = start[b]; j < start[b + 1]; j++)
                    sum += v[(size_t)i * n + j];
            double want = sum / (start[a + 1] - start[a]);
            if (fabs(atn_heatmap_get_value(hm, a, b) - want) > 1e-6)
                g_error("word cell %d,%d: %.7f drawn, %.7f by hand", a, b, atn_heatmap_get_value(hm, a, b), want);
        }
    gboolean found = FALSE;
    for (int a = 0; a < nw; a++) {
        g_autofree char *cell = atn_heatmap_dup_cell_text(hm, a, a);
        found |= cell && strstr(cell, "transformers") != NULL;
    }
    g_assert_true(found);
    int last = nw - 2;   /* "tokenized"'s word (before [SEP]) */
    g_signal_emit_by_name(hm, "cell-clicked", last, 0);
    g_assert_cmpint(atn_session_get_query(s), ==, start[last]);
    /* the token lines join the same words: each word listed, each line's weight the merge's */
    AtnTokenLines *lines = ATN_TOKEN_LINES(atn_head_view_get_token_lines(view));
    g_assert_cmpint(atn_token_lines_get_n(lines), ==, nw);
    for (int a = 0; a < nw; a++) {
        g_autofree char *cell = atn_heatmap_dup_cell_text(hm, a, a);
        g_assert_nonnull(strstr(cell, atn_token_lines_get_label(lines, a)));
        for (int b = 0; b < nw; b++) {
            double sum = 0;
            for (int i = start[a]; i < start[a + 1]; i++)
                for (int j = start[b]; j < start[b + 1]; j++)
                    sum += v[(size_t)i * n + j];
            double want = sum / (start[a + 1] - start[a]), got = atn_token_lines_get_weight(lines, a, b);
            if (fabs(got - want) > 1e-6)
                g_error("word line %d -> %d: weight %.7f, %.7f by hand", a, b, got, want);
        }
    }
    /* the selected query's word: a query on a word's second piece draws that word's lines,
       to each word weighing over the threshold (0.01) in the merge by hand */
    int multi = -1;
    for (int a = 0; a < nw && multi < 0; a++)
        if (start[a + 1] - start[a] > 1)
            multi = a;
    atn_session_set_query(s, start[multi] + 1);
    settle(30);
    g_assert_cmpint(atn_heatmap_get_selected_row(hm), ==, multi);
    int32_t from[64], to[64];
    int64_t nl = atn_token_lines_get_lines(lines, from, to, 64);
    int want_lines = 0;
    for (int b = 0; b < nw; b++) {
        double sum = 0;
        for (int i = start[multi]; i < start[multi + 1]; i++)
            for (int j = start[b]; j < start[b + 1]; j++)
                sum += v[(size_t)i * n + j];
        gboolean drawn = FALSE;
        for (int64_t l = 0; l < nl; l++)
            drawn |= from[l] == multi && to[l] == b;
        g_assert_cmpint(drawn, ==, sum / (start[multi + 1] - start[multi]) > 0.01);
        want_lines += drawn;
    }
    g_assert_cmpint(nl, ==, want_lines);
    g_assert_cmpint(nl, >, 0);
    /* hovering a word hovers its first token; clicking it selects that token */
    atn_token_lines_hover(lines, 0, last);
    g_assert_cmpint(atn_session_get_hover_token(s), ==, start[last]);
    atn_token_lines_hover(lines, -1, -1);
    gtk_check_button_set_active(atn_head_view_get_words_check(view), FALSE);
    settle(50);
    g_assert_cmpint(atn_heatmap_get_rows(hm), ==, n);
    g_assert_cmpint(atn_token_lines_get_n(lines), ==, n);   /* tokens again */
    destroy_window(win);
}

/* Under the log and rank colour scales and "leave out 1st" the cells print the weights
 * (".0123"), not log10 values ("-1.9101") or ranks: only the colours are scaled (issue 35).
 * Each printed number read back equals the result's weight to its decimals; log still colours
 * log10 of the weight. */
static void test_scale_numbers(void) {
    AtnWindow *win = new_window();
    open_and_wait(win, "demo");
    type_and_wait(win, "the cat sat on the mat");
    show_view(win, "head");
    settle(50);
    AtnSession *s = atn_window_get_session(win);
    AtnResult *r = atn_session_get_result(s);
    int n = atn_result_get_n_tokens(r);
    const float *v = atn_result_get_head(r, atn_session_get_layer(s), atn_session_get_head(s));
    AtnHeatmap *hm = head_heatmap(win);
    GtkWidget *box = atn_head_view_get_scale_controls(ATN_HEAD_VIEW(atn_window_get_view_widget(win, "head")));
    for (int mode = 0; mode < 4; mode++) {   /* linear, log, rank, linear with the 1st left out */
        gtk_drop_down_set_selected(atn_head_view_scale_get_scale_dropdown(box), mode < 3 ? (guint)mode : 0);
        gtk_check_button_set_active(atn_head_view_scale_get_drop_first(box), mode == 3);
        settle(50);
        atn_heatmap_layout L;
        g_assert_true(atn_heatmap_get_layout(hm, &L));
        g_assert_cmpint(L.value_decimals, >=, 2);
        if (mode == 1)   /* the colours are the log's */
            g_assert_cmpfloat(atn_heatmap_get_drawn_value(hm, 1, 2), ==, (float)log10(v[1 * n + 2]));
        int printed = 0;
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++) {
                g_autofree char *t = atn_heatmap_dup_cell_number(hm, i, j);
                if (!t)
                    continue;
                printed++;
                double w = v[(size_t)i * n + j];
                if (t[0] == '<') {   /* "<.001": under half the last decimal */
                    g_assert_cmpfloat(w, <, 0.5 * pow(10, -L.value_decimals));
                    continue;
                }
                char num[40];
                g_snprintf(num, sizeof num, "%s%s", t[0] == '.' ? "0" : "", t);   /* ".0123" */
                double got = g_ascii_strtod(num, NULL);
                if (fabs(got - w) > 0.5 * pow(10, -L.value_decimals) + 1e-9)
                    g_error("scale %d, cell %d,%d prints \"%s\", its weight is %.6f", mode, i, j, t, w);
            }
        g_assert_cmpint(printed, >=, n * n / 2);
    }
    destroy_window(win);
}

static void test_fixed_scale(void) {
    g_autofree char *model = uniform_model();
    AtnWindow *win = new_window();
    open_and_wait(win, model);
    show_view(win, "head");
    AtnHeatmap *hm = head_heatmap(win);
    g_assert_cmpfloat(fabs(atn_heatmap_get_value(hm, 1, 2) - 1.0 / 3), <, 1e-6);
    AtnPrefs *prefs = atn_prefs_get_default();
    const uint32_t *tab = atn_colormap_table(ATN_CMAP_VIRIDIS);
    for (int fixed = 1; fixed >= 0; fixed--) {
        atn_prefs_set_color_scale(prefs, fixed ? "fixed" : "head");
        settle(30);
        int w, h;
        g_autoptr(GBytes) bytes = render_widget(GTK_WIDGET(hm), &w, &h);
        const guchar *px = g_bytes_get_data(bytes, NULL);
        atn_heatmap_layout L;
        g_assert_true(atn_heatmap_get_layout(hm, &L));
        graphene_rect_t rect;
        g_assert_true(atn_heatmap_get_cell_rect(hm, 1, 2, &rect));
        /* near the cell's corner: its number (".3333") is printed in the middle */
        guint32 cell = texel(px, w, rect.origin.x + rect.size.width * 0.15, rect.origin.y + rect.size.height * 0.15);
        /* the bar: the column 7 px into the colour bar's box, its rows in the map's colours */
        double bx = L.colorbar.x + 7;
        int top = -1, bottom = -1, same0 = -1, same1 = -1;
        for (int y = (int)L.colorbar.y; y < (int)(L.colorbar.y + L.colorbar.h) && y < h; y++) {
            guint32 p = texel(px, w, bx, y);
            gboolean in_map = FALSE;
            for (int k = 0; k < 256; k++)
                in_map |= tab[k] == p;
            if (in_map && top < 0)
                top = y;
            if (in_map)
                bottom = y;
            if (p == cell && same0 < 0)
                same0 = y;
            if (p == cell)
                same1 = y;
        }
        g_test_message("%s: cell %06x, bar rows %d..%d, the cell's colour at %d..%d", fixed ? "fixed" : "head", cell,
                       top, bottom, same0, same1);
        g_assert_cmpint(top, >, 0);
        g_assert_cmpint(bottom, >, top + 50);
        if (fixed) {
            double third = bottom + 1 - (bottom + 1 - top) / 3.0;
            g_assert_cmpint(same0, >, 0);
            g_assert_cmpfloat(fabs((same0 + same1 + 1) / 2.0 - third), <=, 1.5);
            g_assert_cmpuint(cell, ==, tab[(int)(256.0 / 3)]);
        } else {
            g_assert_cmpuint(cell, ==, 0xfde725);   /* its own max: the top colour */
        }
    }
    destroy_window(win);
    g_unlink(model);
}

/* The first GtkMenuButton under w whose popover holds a GtkLabel, that label's text. */
static const char *popover_label_text(GtkWidget *w) {
    if (GTK_IS_MENU_BUTTON(w)) {
        GtkPopover *pop = gtk_menu_button_get_popover(GTK_MENU_BUTTON(w));
        GtkWidget *child = pop ? gtk_popover_get_child(pop) : NULL;
        if (child && GTK_IS_LABEL(child))
            return gtk_label_get_text(GTK_LABEL(child));
    }
    for (GtkWidget *c = gtk_widget_get_first_child(w); c; c = gtk_widget_get_next_sibling(c)) {
        const char *t = popover_label_text(c);
        if (t)
            return t;
    }
    return NULL;
}

/* The Head view says what the head does (issue 14, "honest colour"): on the demo model the
 * head with the largest share on the previous token, computed here from its attention matrix
 * (the mean over query rows 1..n-1 of a[i][i-1]), is summed up as "This head — previous: P%
 * to the previous token" with that share; a head whose rows go mostly to [CLS] names [CLS]
 * with its share; the view's legend names every pattern. */
static void test_head_summary(void) {
    AtnWindow *win = new_window();
    AtnSession *s = atn_window_get_session(win);
    open_and_wait(win, "demo");
    type_and_wait(win, "The quick brown fox jumps over the lazy dog because it was tired.");
    show_view(win, "head");
    AtnHeadView *hv = ATN_HEAD_VIEW(atn_window_get_view_widget(win, "head"));
    AtnResult *r = atn_session_get_result(s);
    int n = atn_result_get_n_tokens(r), L = atn_result_get_n_layers(r), H = atn_result_get_n_heads(r);
    int best_l = -1, best_h = -1, cls_l = -1, cls_h = -1;
    double best = 0, best_cls = 0;
    for (int l = 0; l < L; l++)
        for (int h = 0; h < H; h++) {
            const float *a = atn_result_get_head(r, l, h);
            double prev = 0, cls = 0, sep = 0, self = 0, next = 0;
            for (int i = 1; i < n; i++)
                prev += a[(size_t)i * n + i - 1];
            for (int i = 0; i < n; i++) {
                cls += a[(size_t)i * n];
                sep += a[(size_t)i * n + n - 1];   /* the last token is [SEP] */
                self += a[(size_t)i * n + i];
            }
            for (int i = 0; i + 1 < n; i++)
                next += a[(size_t)i * n + i + 1];
            prev /= n - 1, cls /= n, sep /= n, self /= n, next /= n - 1;
            if (prev > best)
                best = prev, best_l = l, best_h = h;
            if (cls > best_cls && cls > MAX(MAX(prev, next), MAX(self, sep)))
                best_cls = cls, cls_l = l, cls_h = h;
        }
    g_assert_cmpfloat(best, >=, 0.5);   /* the demo model's previous-token head */
    atn_session_select_head(s, best_l, best_h);
    settle(50);
    g_autofree char *want = g_strdup_printf("This head — previous: %.0f%% to the previous token", 100 * best);
    g_test_message("L%d H%d: %s", best_l, best_h, atn_head_view_get_summary(hv));
    g_assert_cmpstr(atn_head_view_get_summary(hv), ==, want);
    if (cls_l >= 0 && best_cls >= 0.5) {
        atn_session_select_head(s, cls_l, cls_h);
        settle(50);
        g_autofree char *cls = g_strdup_printf("%.0f%% to [CLS]", 100 * best_cls);
        g_test_message("L%d H%d: %s", cls_l, cls_h, atn_head_view_get_summary(hv));
        g_assert_nonnull(strstr(atn_head_view_get_summary(hv), cls));
    }
    const char *legend = popover_label_text(GTK_WIDGET(hv));
    g_assert_nonnull(legend);
    for (int p = 0; p < ATN_PATTERN_COUNT; p++) {
        g_autofree char *item = g_strdup_printf("• %s — ", atn_label_pattern(p));
        if (!strstr(legend, item))
            g_error("the pattern legend does not explain “%s”:\n%s", atn_label_pattern(p), legend);
    }
    destroy_window(win);
}

int main(int argc, char **argv) {
    /* GTK's test accessibility context keeps what screen readers would be told, so the
       keyboard test can read the heatmap's description back (meson's GTK_A11Y=none has none) */
    g_setenv("GTK_A11Y", "test", TRUE);
    if (!ui_test_init(&argc, &argv))
        return 0;
    g_test_add_func("/ui/open-switch-type", test_open_switch_type);
    g_test_add_func("/ui/zoom", test_zoom);
    g_test_add_func("/ui/head-summary", test_head_summary);
    g_test_add_func("/ui/one-query", test_one_query);
    g_test_add_func("/ui/token-lines-focus", test_token_lines_focus);
    g_test_add_func("/ui/token-lines-worker", test_token_lines_worker);
    g_test_add_func("/ui/keyboard-cell", test_keyboard_cell);
    g_test_add_func("/ui/fixed-scale", test_fixed_scale);
    g_test_add_func("/ui/scale-numbers", test_scale_numbers);
    g_test_add_func("/ui/span-export", test_span_export);
    g_test_add_func("/ui/words", test_words);
    g_test_add_func("/ui/layer-head-redraw", test_layer_head_redraw);
    g_test_add_func("/ui/hover-and-click", test_hover_and_click);
    g_test_add_func("/ui/opens-on-clearest-head", test_opens_on_clearest_head);
    return g_test_run();
}
