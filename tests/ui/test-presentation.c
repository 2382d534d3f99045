/* Presentation mode (F11) and large text (issue 14) in a real window under Xvfb with a
 * 1920x1080 screen: at 1920x1080 no label of the Head, Trace or Similarity view is cut that
 * fits (each GtkLabel's Pango layout, and the heatmap's token labels and colour-bar note
 * measured with Pango against the width the figure gave them), step titles and the trace's
 * heatmap grow with the text, at 1280x720 and with Text size 2.0 the Head view keeps every one
 * of 13 token labels, the view switcher comes with the pointer at the top of the screen, and
 * the keys hint is shown once.
 *
 * Run with --tap (meson does).  Without a display it reports "1..0 # SKIP no display". */
#include "ui-test-util.h"

static const char *const sentence = "The quick brown fox jumps over the lazy dog because it was tired.";

/* Every mapped GtkLabel under w whose Pango layout is ellipsized: appended to bad. */
static void ellipsized_labels(GtkWidget *w, GString *bad) {
    for (GtkWidget *c = gtk_widget_get_first_child(w); c; c = gtk_widget_get_next_sibling(c)) {
        if (!gtk_widget_get_mapped(c))
            continue;
        if (GTK_IS_LABEL(c) && pango_layout_is_ellipsized(gtk_label_get_layout(GTK_LABEL(c))))
            g_string_append_printf(bad, " “%s” (%d px)", gtk_label_get_text(GTK_LABEL(c)), gtk_widget_get_width(c));
        ellipsized_labels(c, bad);
    }
}

static void assert_no_ellipsis(GtkWidget *view, const char *name) {
    g_autoptr(GString) bad = g_string_new(NULL);
    ellipsized_labels(view, bad);
    if (bad->len)
        g_error("%s view: cut labels:%s", name, bad->str);
}

static double window_scale(void) { return atn_prefs_get_font_scale(atn_prefs_get_default()) * 1.6; }

/* 1920x1080 presentation mode: nothing cut; the Head view's every token label fits its
 * column at the label size, the colour-bar note fits; the trace's step titles are 1.6 times
 * their normal height and its heatmap has room; similarity too. */
static void test_presentation_1920(void) {
    AtnWindow *win = text_size_window(1920, 1080, 1.0);
    open_and_wait(win, "demo");
    type_and_wait(win, sentence);
    show_view(win, "head");
    AtnSession *s = atn_window_get_session(win);
    atn_session_select_head(s, 1, 15);
    settle(100);
    /* the "This head — …" line (drawn, not a GtkLabel), at the normal size */
    GtkWidget *what = atn_head_view_get_summary_widget(ATN_HEAD_VIEW(atn_window_get_view_widget(win, "head")));
    g_assert_nonnull(what);
    g_assert_nonnull(strstr(atn_head_view_get_summary(ATN_HEAD_VIEW(atn_window_get_view_widget(win, "head"))),
                            "This head"));
    int what_h0 = gtk_widget_get_height(what);

    /* the trace's step title at the normal size, to compare */
    show_view(win, "trace");
    AtnTraceView *tv = ATN_TRACE_VIEW(atn_window_get_view_widget(win, "trace"));
    atn_trace_view_refresh(tv);
    settle(100);
    GtkWidget *title = gtk_widget_get_first_child(atn_trace_view_get_step_widget(tv, ATN_TRACE_STEP_KEYS));
    g_assert_true(GTK_IS_LABEL(title));
    int tw0, th0;
    pango_layout_get_pixel_size(gtk_label_get_layout(GTK_LABEL(title)), &tw0, &th0);

    atn_window_set_presentation(win, TRUE);
    settle(400);
    show_view(win, "head");
    settle(300);
    GtkWidget *head = atn_window_get_view_widget(win, "head");
    assert_no_ellipsis(head, "Head");
    if (gtk_widget_get_height(what) < 1.4 * what_h0)
        g_error("the head's summary line is %d px high in presentation mode, %d normally", gtk_widget_get_height(what),
                what_h0);
    AtnHeatmap *hm = head_heatmap(win);
    atn_heatmap_layout L;
    g_assert_true(atn_heatmap_get_layout(hm, &L));
    g_assert_cmpint(L.row_label_step, ==, 1);
    g_assert_cmpint(L.col_label_step, ==, 1);
    double fs = window_scale();
    AtnResult *r = atn_session_get_result(s);
    const char *const *tok = atn_result_get_tokens(r);
    gboolean saw_brown = FALSE;
    for (int i = 0; tok[i]; i++) {
        double w = render_text_width(tok[i], L.label_size * fs, TRUE);
        if (w > L.row_labels.w + 0.5)
            g_error("row label “%s” is %.1f px in a %.1f px column", tok[i], w, L.row_labels.w);
        if (L.col_labels_rotated ? w > L.col_labels.h + 0.5 : w > L.cell_w + 0.5)
            g_error("key label “%s” is %.1f px for %.1f px", tok[i], w, L.col_labels_rotated ? L.col_labels.h : L.cell_w);
        saw_brown |= !strcmp(tok[i], "brown");
    }
    g_assert_true(saw_brown);
    g_assert_cmpfloat(L.label_size, ==, 12.0);   /* the full size fits: nothing shrunk */
    double note = render_text_width("0 to head max", 10 * fs, FALSE);
    g_assert_cmpfloat(note, <=, L.colorbar.w + 0.5);
    /* the figure fills the screen: the matrix takes most of the heatmap widget's width */
    g_assert_cmpfloat(L.cells.w + L.row_labels.w, >, 0.6 * gtk_widget_get_width(GTK_WIDGET(hm)));

    show_view(win, "trace");
    settle(300);
    assert_no_ellipsis(GTK_WIDGET(tv), "Trace");
    int tw1, th1;
    pango_layout_get_pixel_size(gtk_label_get_layout(GTK_LABEL(title)), &tw1, &th1);
    if (th1 < 1.4 * th0 || tw1 < 1.4 * tw0)
        g_error("a step title is %dx%d px in presentation mode, %dx%d normally", tw1, th1, tw0, th0);
    int hm1 = gtk_widget_get_width(GTK_WIDGET(atn_trace_view_get_heatmap(tv)));
    g_assert_cmpint(hm1, >=, 0.3 * 1920);
    atn_heatmap_layout T;
    g_assert_true(atn_heatmap_get_layout(atn_trace_view_get_heatmap(tv), &T));
    g_assert_cmpfloat(T.cells.w, >, 300);   /* not the ~80 px it was */

    show_view(win, "similarity");
    GtkWidget *sim = atn_window_get_view_widget(win, "similarity");
    g_assert_true(wait_for(similarity_ready, sim));
    settle(300);
    assert_no_ellipsis(sim, "Similarity");
    destroy_window(win);
}

/* 1280x720 presentation mode and the Text size 2.0 preference: all 13 labels of the Head
 * view's heatmap are drawn (none thinned). */
static void test_presentation_small(void) {
    const char *text = "The cat sat on the [MASK] because it was tired.";
    AtnWindow *win = text_size_window(1280, 720, 1.0);
    open_and_wait(win, "demo");
    type_and_wait(win, text);
    show_view(win, "head");
    g_assert_cmpint(atn_result_get_n_tokens(atn_session_get_result(atn_window_get_session(win))), ==, 13);
    /* at the normal size the trace's key table shows all 8 columns of d_k */
    show_view(win, "trace");
    AtnTraceView *tv = ATN_TRACE_VIEW(atn_window_get_view_widget(win, "trace"));
    atn_trace_view_refresh(tv);
    settle(300);
    g_autofree char *keys_wide = atn_trace_view_dup_step_text(tv, ATN_TRACE_STEP_KEYS);
    g_assert_null(strstr(keys_wide, "…"));
    show_view(win, "head");
    atn_window_set_presentation(win, TRUE);
    settle(400);
    atn_heatmap_layout L;
    g_assert_true(atn_heatmap_get_layout(head_heatmap(win), &L));
    g_assert_cmpint(L.row_label_step, ==, 1);
    g_assert_cmpint(L.col_label_step, ==, 1);
    /* the trace's tables keep inside the sheet: fewer columns of d_k rather than running under
       the side pane */
    show_view(win, "trace");
    settle(600);
    wait_for(trace_steps_inside, tv);
    for (int st = 0; st < ATN_TRACE_STEP_COUNT; st++) {
        GtkWidget *box = atn_trace_view_get_step_widget(tv, st);
        GtkWidget *scroller = gtk_widget_get_ancestor(box, GTK_TYPE_SCROLLED_WINDOW);
        double right = trace_label_right(box, scroller);
        if (right > gtk_widget_get_width(scroller) + 0.5)
            g_error("trace step %d reaches %.0f px in a %d px sheet", st + 1, right, gtk_widget_get_width(scroller));
    }
    g_autofree char *keys = atn_trace_view_dup_step_text(tv, ATN_TRACE_STEP_KEYS);
    g_assert_nonnull(strstr(keys, "…"));   /* d_k = 8 did not fit: elided in the middle */
    atn_window_set_presentation(win, FALSE);
    destroy_window(win);

    /* the worked example's editable inputs too (the weights expander's title wraps) */
    win = text_size_window(1280, 720, 1.0);
    open_and_wait(win, "worked-example");
    show_view(win, "trace");
    atn_window_set_presentation(win, TRUE);
    settle(600);
    tv = ATN_TRACE_VIEW(atn_window_get_view_widget(win, "trace"));
    GtkWidget *scroller = gtk_widget_get_ancestor(atn_trace_view_get_step_widget(tv, 0), GTK_TYPE_SCROLLED_WINDOW);
    double right = trace_label_right(gtk_scrolled_window_get_child(GTK_SCROLLED_WINDOW(scroller)), scroller);
    if (right > gtk_widget_get_width(scroller) + 0.5)
        g_error("the toy trace sheet reaches %.0f px in a %d px sheet", right, gtk_widget_get_width(scroller));
    atn_window_set_presentation(win, FALSE);
    destroy_window(win);

    win = text_size_window(1200, 780, 2.0);
    open_and_wait(win, "demo");
    type_and_wait(win, text);
    show_view(win, "head");
    settle(300);
    g_assert_true(atn_heatmap_get_layout(head_heatmap(win), &L));
    g_assert_cmpint(L.row_label_step, ==, 1);
    g_assert_cmpint(L.col_label_step, ==, 1);
    g_assert_cmpfloat(L.label_size * 2.0, >=, 0.8 * 12.0 - 1e-9);   /* never below 0.8 of the normal size */
    text_size_done(win);
}

/* The view switcher: hidden in presentation mode, back with the pointer at the top of the
 * screen (not when it moves over the figure), gone again a while after it leaves; the hint
 * (F11/Esc, Alt+1…7) is shown the first time only. */
static void test_presentation_switcher(void) {
    AtnWindow *win = text_size_window(1920, 1080, 1.0);
    open_and_wait(win, "worked-example");
    g_assert_true(atn_window_get_view_switcher_shown(win));
    GtkRevealer *hint = GTK_REVEALER(atn_window_get_presentation_hint(win));
    g_assert_false(gtk_revealer_get_reveal_child(hint));
    atn_window_set_presentation(win, TRUE);
    settle(100);
    g_assert_false(atn_window_get_view_switcher_shown(win));
    g_assert_true(gtk_revealer_get_reveal_child(hint));
    const char *ht = gtk_label_get_text(GTK_LABEL(gtk_revealer_get_child(hint)));
    g_assert_nonnull(strstr(ht, "F11"));
    g_assert_nonnull(strstr(ht, "Esc"));
    g_assert_nonnull(strstr(ht, "Alt+1…7"));

    pointer_at(win, 900, 600);   /* pointing at the figure */
    pointer_at(win, 950, 640);
    g_assert_false(atn_window_get_view_switcher_shown(win));
    pointer_at(win, 900, 3);     /* the top of the screen */
    g_assert_true(atn_window_get_view_switcher_shown(win));
    /* the switcher is a real, mapped GtkStackSwitcher the mouse can use */
    pointer_at(win, 900, 20);    /* over the header bar: stays */
    settle(3000);
    g_assert_true(atn_window_get_view_switcher_shown(win));
    pointer_at(win, 900, 700);   /* away: gone after a while */
    g_assert_true(atn_window_get_view_switcher_shown(win));
    settle(3200);
    g_assert_false(atn_window_get_view_switcher_shown(win));

    /* once: leaving and coming back shows no hint */
    atn_window_set_presentation(win, FALSE);
    g_assert_true(atn_window_get_view_switcher_shown(win));
    g_assert_false(gtk_revealer_get_reveal_child(hint));
    atn_window_set_presentation(win, TRUE);
    settle(100);
    g_assert_false(gtk_revealer_get_reveal_child(hint));
    atn_window_set_presentation(win, FALSE);
    destroy_window(win);
}

int main(int argc, char **argv) {
    if (!ui_test_init(&argc, &argv))
        return 0;
    atn_prefs_keep_in_memory(atn_prefs_get_default());
    g_test_add_func("/ui/presentation-1920", test_presentation_1920);
    g_test_add_func("/ui/presentation-small", test_presentation_small);
    g_test_add_func("/ui/presentation-switcher", test_presentation_switcher);
    return g_test_run();
}
