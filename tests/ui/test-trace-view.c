/* The Trace view (ui/atn-trace-view.c) in a real window under Xvfb: the worked example's
 * numbers against a hand-computed softmax, and editing a cell.
 *
 * Run with --tap (meson does).  Without a display it reports "1..0 # SKIP no display". */
#include "ui-test-util.h"

/* softmax of the worked example's head 0, query 0 after setting X[0][0] = x00, by hand:
 * q0 = k0 = (x00, 1.1); k1 = (1.0, 1.1); k2 = (1.2, -0.2); scores / sqrt(2). */
static void hand_softmax(double x00, double out[3]) {
    double s[3] = {x00 * x00 + 1.1 * 1.1, x00 * 1.0 + 1.1 * 1.1, x00 * 1.2 + 1.1 * -0.2};
    double m = -INFINITY, sum = 0;
    for (int j = 0; j < 3; j++) {
        s[j] /= sqrt(2.0);
        m = fmax(m, s[j]);
    }
    for (int j = 0; j < 3; j++)
        sum += out[j] = exp(s[j] - m);
    for (int j = 0; j < 3; j++)
        out[j] /= sum;
}

static void assert_weights_shown(AtnTraceView *tv, const double want[3]) {
    g_autofree char *text = atn_trace_view_dup_step_text(tv, ATN_TRACE_STEP_SOFTMAX);
    g_assert_nonnull(text);
    for (int j = 0; j < 3; j++) {
        g_autofree char *w = g_strdup_printf("%.4f", want[j]);
        if (!strstr(text, w))
            g_error("softmax step shows\n%s\nbut not %s", text, w);
    }
}

/* The Trace view on the worked example: 0.3760 / 0.4487 / 0.1752, and editing X[0][0]. */
static void test_trace_worked_example(void) {
    AtnWindow *win = new_window();
    open_and_wait(win, "worked-example");
    show_view(win, "trace");
    AtnSession *s = atn_window_get_session(win);
    atn_session_select_head(s, 0, 0);
    atn_session_set_query(s, 0);
    AtnTraceView *tv = ATN_TRACE_VIEW(atn_window_get_view_widget(win, "trace"));
    atn_trace_view_refresh(tv);
    const double article[3] = {0.3760, 0.4487, 0.1752};
    assert_weights_shown(tv, article);
    g_autofree char *scores = atn_trace_view_dup_step_text(tv, ATN_TRACE_STEP_SCORES);
    g_assert_nonnull(strstr(scores, "1.4600"));   /* 0.5×0.5 + 1.1×1.1 */
    g_assert_nonnull(strstr(scores, "1.7100"));
    g_assert_nonnull(strstr(scores, "0.3800"));

    GtkEditable *x00 = atn_trace_view_get_input_cell(tv, ATN_TOY_X, 0, 0);
    g_assert_nonnull(x00);
    g_assert_cmpstr(gtk_editable_get_text(x00), ==, "0.5");
    gtk_editable_set_text(x00, "1.5");   /* as typing does: "changed" -> model -> run -> trace */
    settle(20);
    double want[3];
    hand_softmax(1.5, want);
    g_assert_cmpfloat_with_epsilon(want[0], 0.5397, 1e-4);   /* by hand: scores [3.46, 2.71, 1.58] / sqrt 2 -> 0.5397 */
    assert_weights_shown(tv, want);
    g_autofree char *scores2 = atn_trace_view_dup_step_text(tv, ATN_TRACE_STEP_SCORES);
    g_assert_nonnull(strstr(scores2, "3.4600"));
    g_assert_nonnull(strstr(scores2, "2.7100"));
    g_assert_nonnull(strstr(scores2, "1.5800"));
    /* the Head view follows the same edit */
    AtnResult *r = atn_session_get_result(s);
    g_assert_cmpfloat_with_epsilon(atn_result_get_head(r, 0, 0)[0], want[0], 1e-5);
    /* the edited cell kept its text and its focusable widget (no rebuild while typing) */
    g_assert_true(atn_trace_view_get_input_cell(tv, ATN_TOY_X, 0, 0) == x00);

    /* not a number: marked, nothing changes */
    gtk_editable_set_text(x00, "1.5x");
    settle(20);
    g_assert_true(gtk_widget_has_css_class(GTK_WIDGET(x00), "error"));
    assert_weights_shown(tv, want);
    gtk_editable_set_text(x00, "0.5");
    settle(20);
    g_assert_false(gtk_widget_has_css_class(GTK_WIDGET(x00), "error"));
    assert_weights_shown(tv, article);

    /* stepping marks the step */
    atn_trace_view_set_step(tv, ATN_TRACE_STEP_SOFTMAX);
    g_assert_cmpint(atn_trace_view_get_step(tv), ==, ATN_TRACE_STEP_SOFTMAX);

    /* the Markdown export carries the same numbers and LaTeX */
    g_autoptr(GError) error = NULL;
    g_autofree char *md = atn_trace_view_dup_markdown(tv, &error);
    g_assert_no_error(error);
    g_assert_nonnull(strstr(md, "0.3760"));
    g_assert_nonnull(strstr(md, "0.4487"));
    g_assert_nonnull(strstr(md, "0.1752"));
    g_assert_nonnull(strstr(md, "\\sqrt{d_k}"));
    g_assert_nonnull(strstr(md, "$$"));
    destroy_window(win);
}

int main(int argc, char **argv) {
    if (!ui_test_init(&argc, &argv))
        return 0;
    g_test_add_func("/ui/trace-worked-example", test_trace_worked_example);
    return g_test_run();
}
