/* The Head view's Raw / Norm / Rollout / Flow switch (ui/atn-head-methods.c) in a real window
 * under Xvfb, on the demo BERT and the demo GPT-2: switching the drop-down to each method
 * shows the engine's numbers for the selected layer and head (every cell equal to
 * atn_norm_attention_compute / atn_rollout_compute / atn_flow_compute on the run's capture,
 * and the hover text of a cell prints it), the title says which method, the layer spin moves
 * rollout and flow through fewer layers, Raw brings the head back, a Flow left for Raw is
 * cancelled, and on a long input (120 tokens: seconds of flow) the progress bar moves and
 * Stop ends the work and goes back to Raw.
 *
 * Run with --tap (meson does).  Without a display it reports "1..0 # SKIP no display". */
#include "ui-test-util.h"

#include "analysis.h"
#include "atn-head-methods.h"

static AtnHeadMethods *methods_of(AtnWindow *win) {
    return atn_head_view_get_methods(ATN_HEAD_VIEW(atn_window_get_view_widget(win, "head")));
}

static gboolean method_ready(gpointer data) {
    AtnHeadMethods *m = data;
    return !atn_head_methods_is_busy(m) && atn_head_methods_get_values(m, NULL) != NULL;
}

/* Picks method as a click on the drop-down's item would, waits for its matrix, and checks
 * every cell against the engine on the same capture, and one hovered cell's text. */
static void check_method(AtnWindow *win, AtnHeadMethod method, int layer, int head, const char *title_part) {
    AtnSession *s = atn_window_get_session(win);
    atn_session_select_head(s, layer, head);
    AtnHeadMethods *m = methods_of(win);
    GtkWidget *dd = gtk_widget_get_first_child(atn_head_methods_get_widget(m));   /* the drop-down */
    gtk_drop_down_set_selected(GTK_DROP_DOWN(dd), method);
    g_assert_cmpint(atn_head_methods_get_method(m), ==, method);
    g_assert_true(wait_for(method_ready, m));
    AtnResult *r = atn_session_get_result(s);
    const atn_capture *cap = atn_result_get_capture(r);
    int n = 0;
    const float *shown = atn_head_methods_get_values(m, &n);
    g_assert_cmpint(n, ==, cap->n);
    float *want = g_new(float, (size_t)n * n);
    atn_error err = {0};
    atn_status st = method == ATN_HEAD_METHOD_NORM || method == ATN_HEAD_METHOD_NORM_LAYER
                        ? atn_norm_attention_compute(atn_model_handle_get_model(atn_result_get_model(r)), cap, layer,
                                                     method == ATN_HEAD_METHOD_NORM ? head : -1, want, &err)
                    : method == ATN_HEAD_METHOD_ROLLOUT ? atn_rollout_compute(cap, layer, want, &err)
                                                        : atn_flow_compute(cap, layer, want, NULL, NULL, &err);
    g_assert_cmpint(st, ==, ATN_OK);
    for (int i = 0; i < n * n; i++)
        g_assert_cmpfloat(shown[i], ==, want[i]);
    /* the hover line prints the cell's number: row 2, column 1 */
    AtnHeatmap *hm = head_heatmap(win);
    g_autofree char *cell = atn_heatmap_dup_cell_text_short(hm, 2, 1);
    g_autofree char *num = g_strdup_printf("%.4f", want[2 * n + 1]);
    g_assert_nonnull(strstr(cell, num + (num[0] == '0' ? 1 : 0)));
    /* the "This head" line says what the map now shows */
    const char *summary = atn_head_view_get_summary(ATN_HEAD_VIEW(atn_window_get_view_widget(win, "head")));
    g_assert_cmpstr(summary, ==, atn_head_methods_get_summary(m, NULL));
    g_autofree char *fig_name = atn_head_methods_dup_figure_name(m, layer, head);
    g_assert_nonnull(strstr(fig_name, title_part));
    g_free(want);
}

static void test_methods(const char *folder, const char *text, int layer, int head) {
    AtnWindow *win = new_window();
    open_and_wait(win, folder);
    type_and_wait(win, text);
    show_view(win, "head");
    AtnSession *s = atn_window_get_session(win);
    check_method(win, ATN_HEAD_METHOD_NORM, layer, head, "norm-L");
    check_method(win, ATN_HEAD_METHOD_NORM_LAYER, layer, head, "norm-sum-L");
    check_method(win, ATN_HEAD_METHOD_ROLLOUT, layer, head, "rollout-L0-");
    check_method(win, ATN_HEAD_METHOD_FLOW, layer, head, "flow-L0-");
    /* the layer spin: flow through layer 0 only */
    check_method(win, ATN_HEAD_METHOD_FLOW, 0, head, "flow-L0-0");
    /* Raw: the head as the model computed it, again */
    AtnHeadMethods *m = methods_of(win);
    atn_head_methods_set_method(m, ATN_HEAD_METHOD_RAW);
    atn_session_select_head(s, layer, head);
    settle(50);
    g_assert_null(atn_head_methods_get_values(m, NULL));
    AtnResult *r = atn_session_get_result(s);
    const float *raw = atn_result_get_head(r, layer, head);
    int n = atn_result_get_n_tokens(r);
    g_autofree char *cell = atn_heatmap_dup_cell_text_short(head_heatmap(win), n - 1, 0);
    g_autofree char *num = g_strdup_printf("%.4f", raw[(size_t)(n - 1) * n]);
    g_assert_nonnull(strstr(cell, num + (num[0] == '0' ? 1 : 0)));
    /* Flow asked for on another layer, then Raw at once: the work is cancelled, nothing shown */
    atn_session_select_head(s, 0, 0);
    atn_head_methods_set_method(m, ATN_HEAD_METHOD_FLOW);
    atn_head_methods_set_method(m, ATN_HEAD_METHOD_RAW);
    g_assert_false(atn_head_methods_is_busy(m));
    settle(100);
    g_assert_null(atn_head_methods_get_values(m, NULL));
    destroy_window(win);
}

static void test_bert(void) {
    g_autofree char *folder = g_build_filename(g_getenv("ATN_SOURCE_ROOT"), "data", "models", "demo", NULL);
    test_methods(folder, "the cat sat on the mat because it was tired", 2, 5);
}

static gboolean progress_moved(gpointer data) {
    GtkWidget *bar = data;
    return gtk_widget_get_visible(bar) && gtk_progress_bar_get_fraction(GTK_PROGRESS_BAR(bar)) > 0;
}

static gboolean not_busy(gpointer data) { return !atn_head_methods_is_busy(data); }

static void test_stop(void) {
    g_autofree char *folder = g_build_filename(g_getenv("ATN_SOURCE_ROOT"), "data", "models", "demo", NULL);
    AtnWindow *win = new_window();
    open_and_wait(win, folder);
    GString *text = g_string_new("");
    for (int i = 0; i < 20; i++)
        g_string_append(text, "the cat sat on the mat ");
    type_and_wait(win, text->str);
    g_string_free(text, TRUE);
    show_view(win, "head");
    AtnSession *s = atn_window_get_session(win);
    g_assert_cmpint(atn_result_get_n_tokens(atn_session_get_result(s)), >=, 100);
    AtnHeadMethods *m = methods_of(win);
    GtkWidget *dd = gtk_widget_get_first_child(atn_head_methods_get_widget(m));
    GtkWidget *bar = gtk_widget_get_next_sibling(dd), *stop = gtk_widget_get_next_sibling(bar);
    g_assert_true(GTK_IS_PROGRESS_BAR(bar) && GTK_IS_BUTTON(stop));
    g_assert_false(gtk_widget_get_visible(stop));
    gtk_drop_down_set_selected(GTK_DROP_DOWN(dd), ATN_HEAD_METHOD_FLOW);
    g_assert_true(atn_head_methods_is_busy(m));
    g_assert_true(gtk_widget_get_visible(stop));
    g_assert_true(wait_for(progress_moved, bar));
    g_assert_true(atn_head_methods_is_busy(m));   /* still computing: 100+ tokens take seconds */
    g_signal_emit_by_name(stop, "clicked");
    g_assert_true(wait_for(not_busy, m));
    g_assert_cmpint(atn_head_methods_get_method(m), ==, ATN_HEAD_METHOD_RAW);
    g_assert_cmpuint(gtk_drop_down_get_selected(GTK_DROP_DOWN(dd)), ==, ATN_HEAD_METHOD_RAW);
    g_assert_false(gtk_widget_get_visible(bar));
    g_assert_null(atn_head_methods_get_values(m, NULL));
    destroy_window(win);
}

static void test_gpt2(void) {
    g_autofree char *folder = g_build_filename(g_getenv("ATN_SOURCE_ROOT"), "data", "models", "demo-gpt2", NULL);
    test_methods(folder, "the cat sat on the mat", 1, 3);
}

int main(int argc, char **argv) {
    if (!ui_test_init(&argc, &argv))
        return 0;
    g_test_add_func("/head-methods/bert", test_bert);
    g_test_add_func("/head-methods/gpt2", test_gpt2);
    g_test_add_func("/head-methods/stop", test_stop);
    return g_test_run();
}
