/* The Model view (ui/atn-model-grid-view.c) in a real window under Xvfb: clicking a head
 * opens it in the Head view.
 *
 * Run with --tap (meson does).  Without a display it reports "1..0 # SKIP no display". */
#include "ui-test-util.h"

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

/* ALBERT's shared layers, said in the views.  tests/hf/models/albert-f32 has
 * num_hidden_layers 3, num_hidden_groups 2, inner_group_num 2: HF's AlbertTransformer runs
 * application i with group int(i / (3 / 2)) = 0, 0, 1, each group's two inner layers in
 * turn, so the 6 captured layers run (group, inner) = (0,0) (0,1) (0,0) (0,1) (1,0) (1,1):
 * layers 0 and 2 share, 1 and 3 share, 4 and 5 have their own. */
static void test_albert_sharing(void) {
    const char *src = g_getenv("ATN_SOURCE_ROOT");
    g_autofree char *albert = g_build_filename(src ? src : ".", "tests", "hf", "models", "albert-f32", NULL);
    AtnWindow *win = new_window();
    open_and_wait(win, albert);
    type_and_wait(win, "the cat sat");
    show_view(win, "model");
    AtnModelGrid *grid = atn_model_grid_view_get_grid(ATN_MODEL_GRID_VIEW(atn_window_get_view_widget(win, "model")));
    static const char *const want[] = {"L0", "L1", "L2 \u2261 L0", "L3 \u2261 L1", "L4", "L5"};
    for (int l = 0; l < 6; l++) {
        g_autofree char *label = atn_model_grid_dup_layer_label(grid, l);
        g_assert_cmpstr(label, ==, want[l]);
    }
    g_assert_null(atn_model_grid_dup_layer_label(grid, 6));
    g_autofree char *tip2 = atn_model_grid_dup_layer_tooltip(grid, 2, 1);
    g_assert_nonnull(strstr(tip2, "Layer 2, head 1"));
    g_assert_nonnull(strstr(tip2, "\nshares weights with layers 0, 2 (group 0, inner 0)"));
    g_autofree char *tip4 = atn_model_grid_dup_layer_tooltip(grid, 4, 0);
    g_assert_null(strstr(tip4, "shares"));

    /* the Head view's header */
    AtnSession *s = atn_window_get_session(win);
    show_view(win, "head");
    atn_session_select_head(s, 3, 0);
    settle(30);
    const char *title = atn_heatmap_get_title(head_heatmap(win));
    g_assert_nonnull(title);
    if (!g_str_has_suffix(title, "layer 3 · head 0 · shares weights with layers 1, 3 (group 0, inner 1)"))
        g_error("Head view header: \"%s\"", title);
    atn_session_select_head(s, 5, 2);
    settle(30);
    title = atn_heatmap_get_title(head_heatmap(win));
    g_assert_true(g_str_has_suffix(title, "layer 5 · head 2"));

    /* a model without sharing labels its layers as before */
    open_and_wait(win, f32_model);
    type_and_wait(win, "the cat sat");
    g_autofree char *plain = atn_model_grid_dup_layer_label(grid, 1);
    g_assert_cmpstr(plain, ==, "L1");
    destroy_window(win);
}

/* Gemma 2 (GQA 2:1, layer 0 sliding with a window of 4): the grid's tooltip names the K/V
 * head and the heads sharing it, the Head view's header the K/V head and, in the sliding
 * layer only, its window, whose hidden cells are drawn masked. */
static void test_kv_groups(void) {
    const char *src = g_getenv("ATN_SOURCE_ROOT");
    g_autofree char *gemma = g_build_filename(src ? src : ".", "tests", "hf", "models", "gemma2-f32", NULL);
    AtnWindow *win = new_window();
    open_and_wait(win, gemma);
    type_and_wait(win, "the cat sat on the mat");
    show_view(win, "model");
    AtnModelGrid *grid = atn_model_grid_view_get_grid(ATN_MODEL_GRID_VIEW(atn_window_get_view_widget(win, "model")));
    g_autofree char *tip = atn_model_grid_dup_layer_tooltip(grid, 1, 3);
    if (!strstr(tip, "\nReads K/V head 1, shared with heads 2–3"))
        g_error("grid tooltip: \"%s\"", tip);
    AtnSession *s = atn_window_get_session(win);
    show_view(win, "head");
    atn_session_select_head(s, 0, 2);
    settle(30);
    const char *title = atn_heatmap_get_title(head_heatmap(win));
    if (!g_str_has_suffix(title, "layer 0 · head 2 · K/V head 1 · sliding window of 4"))
        g_error("Head view header: \"%s\"", title);
    /* the cells the window hides are drawn masked (hatched, no number), not as 0: the last
       query's first key (i - j >= 4) in the sliding layer, and not in the global one */
    int n = atn_result_get_n_tokens(atn_session_get_result(s));
    g_assert_cmpint(n, >=, 6);
    g_autofree char *hidden = atn_heatmap_dup_cell_text(head_heatmap(win), n - 1, 0);
    g_autofree char *seen = atn_heatmap_dup_cell_text(head_heatmap(win), n - 1, n - 2);
    if (!strstr(hidden, "masked (the mask hides this key from this query)") || strstr(seen, "masked"))
        g_error("sliding layer's cells: \"%s\", \"%s\"", hidden, seen);
    atn_session_select_head(s, 1, 1);
    settle(30);
    title = atn_heatmap_get_title(head_heatmap(win));
    if (!g_str_has_suffix(title, "layer 1 · head 1 · K/V head 0"))   /* layer 1 is global */
        g_error("Head view header: \"%s\"", title);
    g_autofree char *global = atn_heatmap_dup_cell_text(head_heatmap(win), n - 1, 0);
    if (strstr(global, "masked"))
        g_error("global layer's cell: \"%s\"", global);
    destroy_window(win);
}

int main(int argc, char **argv) {
    if (!ui_test_init(&argc, &argv))
        return 0;
    g_test_add_func("/ui/model-grid-click", test_model_grid_click);
    g_test_add_func("/ui/albert-sharing", test_albert_sharing);
    g_test_add_func("/ui/kv-groups", test_kv_groups);
    return g_test_run();
}
