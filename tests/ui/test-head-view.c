/* The Head view (ui/atn-head-view.c) in a real window under Xvfb: the tokens it shows after
 * opening, switching and typing, redraws on layer/head changes, hover and click, and the head
 * a model opens on (the clearest one).
 *
 * Run with --tap (meson does).  Without a display it reports "1..0 # SKIP no display". */
#include "ui-test-util.h"

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

int main(int argc, char **argv) {
    if (!ui_test_init(&argc, &argv))
        return 0;
    g_test_add_func("/ui/open-switch-type", test_open_switch_type);
    g_test_add_func("/ui/layer-head-redraw", test_layer_head_redraw);
    g_test_add_func("/ui/hover-and-click", test_hover_and_click);
    g_test_add_func("/ui/opens-on-clearest-head", test_opens_on_clearest_head);
    return g_test_run();
}
