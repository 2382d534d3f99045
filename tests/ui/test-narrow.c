/* A 1280x720 window (issue 14): nothing a user needs is shortened.  The Head view's hover line
 * (every cell of a 13-token head hovered in turn, the selected-query line, a causal model's
 * masked cells) and its summary line, the Similarity view's summary line and its pair
 * heatmaps' token labels show their full content, at the normal text size and in
 * presentation mode (1.6 times the text); the Trace view's steps stay inside its sheet, and at
 * Text size 2.0 in a 1280- and a 900-px window too.  Run in English (ui-narrow) and in Chinese
 * (ui-narrow-zh, LANGUAGE=zh_CN).
 *
 * The views are measured at a 1280-px allocation: presentation mode in the window itself (no
 * header bar), the normal size in a 1280x720 window of its own holding a second view of the
 * same type on the window's session (as wide as the window's own page, whatever the header
 * bar's minimum width).
 *
 * Run with --tap (meson does).  Without a display it reports "1..0 # SKIP no display". */
#include "ui-test-util.h"

#include "atn-fit-label.h"
#include "atn-view.h"

static const char *const sentence = "The cat sat on the [MASK] because it was tired.";

/* What a status widget shows at its allocation is its whole text: a GtkLabel whose layout is
 * not ellipsized, a fitted label that is not cut, a drawing area (the old "This head — …"
 * line, which ellipsized its layout at its width) whose text fits its width and height. */
static void assert_full(GtkWidget *w, const char *text, const char *what) {
    g_assert_nonnull(w);
    int ww = gtk_widget_get_width(w), wh = gtk_widget_get_height(w);
    if (GTK_IS_LABEL(w)) {
        PangoLayout *l = gtk_label_get_layout(GTK_LABEL(w));
        if (pango_layout_is_ellipsized(l))
            g_error("%s: “%s” is cut (%dx%d px)", what, gtk_label_get_text(GTK_LABEL(w)), ww, wh);
        g_assert_cmpstr(gtk_label_get_text(GTK_LABEL(w)), ==, text);
        return;
    }
    if (ATN_IS_FIT_LABEL(w)) {
        AtnFitLabelShown s;
        g_assert_true(atn_fit_label_get_shown(ATN_FIT_LABEL(w), &s));
        g_assert_cmpstr(atn_fit_label_get_text(ATN_FIT_LABEL(w)), ==, text);
        if (s.cut)
            g_error("%s: “%s” is cut (%dx%d px)", what, s.text, ww, wh);
        if (s.width > ww || s.height > wh)
            g_error("%s: “%s” is %dx%d px in %dx%d", what, s.text, s.width, s.height, ww, wh);
        if (s.text != atn_fit_label_get_text(ATN_FIT_LABEL(w))) {
            /* a shorter wording: every number of the full text is in it */
            for (const char *p = text; *p; p++)
                if (g_ascii_isdigit(*p) && (p == text || !g_ascii_isdigit(p[-1]))) {
                    char num[32];
                    size_t n = strspn(p, "0123456789.");
                    g_snprintf(num, sizeof num, "%.*s", (int)MIN(n, sizeof num - 1), p);
                    if (!strstr(s.text, num))
                        g_error("%s: the shorter “%s” lost the number %s of “%s”", what, s.text, num, text);
                }
        }
        return;
    }
    if (GTK_IS_DRAWING_AREA(w)) {
        PangoLayout *l = gtk_widget_create_pango_layout(w, text);
        int lw, lh;
        pango_layout_get_pixel_size(l, &lw, &lh);
        g_object_unref(l);
        if (lw > ww || lh > wh)
            g_error("%s: “%s” needs %dx%d px and is drawn in %dx%d", what, text, lw, lh, ww, wh);
        return;
    }
    g_error("%s: a %s, not a label", what, G_OBJECT_TYPE_NAME(w));
}

/* The full text of a status widget. */
static const char *text_of(GtkWidget *w) {
    if (GTK_IS_LABEL(w))
        return gtk_label_get_text(GTK_LABEL(w));
    if (ATN_IS_FIT_LABEL(w))
        return atn_fit_label_get_text(ATN_FIT_LABEL(w));
    return NULL;
}

typedef struct narrow {
    AtnWindow *win;
    GtkWindow *own;      /* the 1280x720 window of the normal-size view, or NULL */
    GtkWidget *view;     /* the view under test */
    double scale;        /* its text scale */
    const char *model;   /* what check_head names */
} narrow;

/* The view `name` at 1280x720: presentation mode in the window, else a view of the same type
 * in a window of its own. */
static void view_at_1280(narrow *n, const char *name, gboolean presentation) {
    if (presentation) {
        atn_window_set_presentation(n->win, TRUE);
        show_view(n->win, name);
        settle(400);
        n->own = NULL;
        n->view = atn_window_get_view_widget(n->win, name);
        n->scale = 1.6;
        g_assert_cmpint(gtk_widget_get_width(GTK_WIDGET(n->win)), <=, 1280);   /* less its frame */
    } else {
        atn_window_set_presentation(n->win, FALSE);
        show_view(n->win, name);
        GType t = G_OBJECT_TYPE(atn_window_get_view_widget(n->win, name));
        n->view = g_object_new(t, NULL);
        atn_view_set_session(ATN_VIEW(n->view), atn_window_get_session(n->win));
        atn_view_set_colormap(ATN_VIEW(n->view), ATN_CMAP_VIRIDIS);
        atn_view_set_font_scale(ATN_VIEW(n->view), 1.0);
        gtk_widget_set_margin_start(n->view, 12);   /* the window's page padding (style.css) */
        gtk_widget_set_margin_end(n->view, 12);
        n->own = GTK_WINDOW(gtk_window_new());
        gtk_widget_add_css_class(GTK_WIDGET(n->own), "atn-window");
        gtk_window_set_default_size(n->own, 1280, 720);
        gtk_window_set_child(n->own, n->view);
        gtk_window_present(n->own);
        g_assert_true(wait_for(is_drawable, n->view));
        settle(400);
        n->scale = 1.0;
        g_assert_cmpint(gtk_widget_get_width(GTK_WIDGET(n->own)), <=, 1280);
    }
    g_assert_cmpint(gtk_widget_get_width(n->view), >=, 1200);
    g_test_message("%s view at %d px, text scale %.1f", name, gtk_widget_get_width(n->view), n->scale);
}

static void done_view(narrow *n) {
    if (n->own)
        gtk_window_destroy(n->own);
    n->own = NULL;
    settle(50);
}

/* The view `name` at 1280 px checked by check at the normal size, then in presentation mode
 * (text_only: only its text size, 1.6, in a 1280-px window of its own with the window in
 * presentation mode). */
static void at_both_sizes(narrow *n, const char *name, gboolean text_only, void (*check)(narrow *)) {
    for (int p = 0; p < 2; p++) {
        view_at_1280(n, name, p && !text_only);
        if (p && text_only) {
            atn_window_set_presentation(n->win, TRUE);
            atn_view_set_font_scale(ATN_VIEW(n->view), 1.6);
            n->scale = 1.6;
        }
        check(n);
        done_view(n);
    }
}

/* A 1280x720 window with the demo model, the sentence and layer 1's head 15. */
static narrow narrow_window(void) {
    narrow n = {.win = g_object_new(ATN_TYPE_WINDOW, "default-width", 1280, "default-height", 720, NULL)};
    gtk_window_present(GTK_WINDOW(n.win));
    open_and_wait(n.win, "demo");
    type_and_wait(n.win, sentence);
    atn_session_select_head(atn_window_get_session(n.win), 1, 15);
    return n;
}

/* Hovers every cell of the Head view's heatmap in turn: the line shows all of each text. */
static void check_head(narrow *n) {
    const char *model = n->model;
    AtnHeadView *hv = ATN_HEAD_VIEW(n->view);
    AtnHeatmap *hm = atn_head_view_get_heatmap(hv);
    GtkWidget *info = atn_head_view_get_info_widget(hv);
    AtnSession *s = atn_window_get_session(n->win);
    int nt = atn_result_get_n_tokens(atn_session_get_result(s));
    g_autofree char *what = g_strdup_printf("%s head view's hover line (%s)", n->own ? "normal" : "presentation", model);
    assert_full(atn_head_view_get_summary_widget(hv), atn_head_view_get_summary(hv), "the head's summary line");
    int checked = 0;
    for (int q = 0; q < nt; q += 3) {   /* the selected-query line */
        atn_session_set_query(s, q);
        settle(30);
        const char *t = text_of(info);
        g_assert_nonnull(t);
        g_assert_nonnull(strstr(t, atn_result_get_tokens(atn_session_get_result(s))[q]));
        assert_full(info, t, what);
    }
    for (int r = 0; r < nt; r++)
        for (int c = 0; c < nt; c++) {
            graphene_rect_t rect;
            g_assert_true(atn_heatmap_get_cell_rect(hm, r, c, &rect));
            g_autofree char *tip = atn_heatmap_hover(hm, rect.origin.x + rect.size.width / 2,
                                                     rect.origin.y + rect.size.height / 2);
            g_assert_nonnull(tip);
            settle(8);
            while (g_main_context_iteration(NULL, FALSE))
                ;
            g_assert_cmpstr(text_of(info), ==, tip);
            assert_full(info, tip, what);
            checked++;
        }
    g_test_message("%d hover texts shown in full", checked);
}

/* The Similarity view's summary line and the labels of the pair's heatmaps. */
static void check_similarity(narrow *n) {
    AtnSimilarityView *sv = ATN_SIMILARITY_VIEW(n->view);
    g_assert_true(wait_for(similarity_ready, sv));
    settle(200);
    GtkWidget *info = atn_similarity_view_get_info_widget(sv);
    const char *t = atn_similarity_view_get_info(sv);
    g_assert_nonnull(strstr(t, "16"));   /* "16 heads · …" */
    assert_full(info, t, n->own ? "normal similarity summary" : "presentation similarity summary");
    const char *const *tok = atn_result_get_tokens(atn_session_get_result(atn_window_get_session(n->win)));
    atn_similarity_view_compare(sv, 2, 9);
    settle(300);
    for (int i = 0; i < 3; i++) {
        AtnHeatmap *hm = atn_similarity_view_get_pair_heatmap(sv, i);
        atn_heatmap_layout L;
        g_assert_true(atn_heatmap_get_layout(hm, &L));
        if (L.row_label_step != 1 || L.col_label_step != 1)
            g_error("pair heatmap %d (%s, %d px wide): every %d-th row label and %d-th key label drawn, cells %.1fx%.1f px, "
                    "labels %.1f pt", i, n->own ? "normal" : "presentation", gtk_widget_get_width(GTK_WIDGET(hm)),
                    L.row_label_step, L.col_label_step, L.cell_w, L.cell_h, L.label_size * n->scale);
        for (int j = 0; tok[j]; j++) {
            double w = render_text_width(tok[j], L.label_size * n->scale, TRUE);
            if (w > L.row_labels.w + 0.5)
                g_error("pair heatmap %d: row label “%s” is %.1f px in a %.1f px column", i, tok[j], w, L.row_labels.w);
            if (L.col_labels_rotated ? w > L.col_labels.h + 0.5 : w > L.cell_w + 0.5)
                g_error("pair heatmap %d: key label “%s” is %.1f px for %.1f px", i, tok[j], w,
                        L.col_labels_rotated ? L.col_labels.h : L.cell_w);
        }
        /* still legible: at least 7 px */
        g_assert_cmpfloat(L.label_size * n->scale, >=, 7.0);
    }
}

/* The summary and pair labels for the JS distance and for the cosine. */
static void check_similarity_metrics(narrow *n) {
    check_similarity(n);
    atn_similarity_view_set_metric(ATN_SIMILARITY_VIEW(n->view), ATN_METRIC_COSINE);
    check_similarity(n);
}

/* The Trace view's key and value tables at a 1280-px allocation: inside the sheet (fewer
 * columns of d_k in presentation mode), settled within a few frames of being shown, and
 * staying so (the fitting does not oscillate). */
static void check_trace(narrow *n) {
    AtnTraceView *tv = ATN_TRACE_VIEW(n->view);
    gint64 t0 = g_get_monotonic_time();
    g_assert_true(wait_for(trace_steps_inside, tv));
    g_test_message("trace steps inside the sheet after %.2f s", (g_get_monotonic_time() - t0) / 1e6);
    g_autofree char *keys = atn_trace_view_dup_step_text(tv, ATN_TRACE_STEP_KEYS);
    for (int i = 0; i < 20; i++) {
        settle(20);
        g_assert_true(trace_steps_inside(tv));
        g_autofree char *again = atn_trace_view_dup_step_text(tv, ATN_TRACE_STEP_KEYS);
        g_assert_cmpstr(again, ==, keys);
    }
    if (n->scale > 1)
        g_assert_nonnull(strstr(keys, "…"));   /* d_k = 8 does not fit at 1.6 times the text */
    else
        g_assert_null(strstr(keys, "…"));      /* all of it at the normal size */
}

static void test_trace(void) {
    narrow n = narrow_window();
    at_both_sizes(&n, "trace", TRUE, check_trace);
    /* the window's own page in presentation mode, entered from the Head view while the Trace
       page was hidden (the old frame-tick fitting measured the hidden page before the new text
       size applied to it, and never again) */
    show_view(n.win, "trace");
    settle(200);
    show_view(n.win, "head");
    atn_window_set_presentation(n.win, TRUE);
    settle(400);
    view_at_1280(&n, "trace", TRUE);
    check_trace(&n);
    atn_window_set_presentation(n.win, FALSE);
    destroy_window(n.win);
}

/* Text size 2.0 in a 1280-px and a 900-px window: the side pane gives way, every step is
 * inside the sheet (it ran under the heatmap's pane, the sheet 221 px of a 900-px window); the
 * heatmap stays of use: beside the sheet at 1280 px, inside it above the steps at 900 px, where
 * a side pane would have had 160 px. */
static void test_trace_large_text(void) {
    for (int i = 0; i < 2; i++) {
        int w = i ? 1280 : 900;
        AtnWindow *win = text_size_window(w, 700, 2.0);
        open_and_wait(win, "demo");
        /* no [MASK]: its guesses' row makes the window at least 1069 px wide at this size */
        type_and_wait(win, "The quick brown fox jumps over the lazy dog because it was tired.");
        AtnTraceView *tv = show_trace(win, 1, 15, 0);
        /* the window first shows the remembered sentence, which may be wider: sized again */
        gtk_window_set_default_size(GTK_WINDOW(win), w, 700);
        settle(300);
        g_assert_cmpint(gtk_widget_get_width(GTK_WIDGET(win)), <=, w);
        gboolean inside = wait_for(trace_steps_inside, tv);
        GtkWidget *scroller = gtk_widget_get_ancestor(atn_trace_view_get_step_widget(tv, 0), GTK_TYPE_SCROLLED_WINDOW);
        GtkWidget *heat = GTK_WIDGET(atn_trace_view_get_heatmap(tv));
        g_test_message("text size 2.0, %d px window: sheet %d px, heatmap %d px", gtk_widget_get_width(GTK_WIDGET(win)),
                       gtk_widget_get_width(scroller), gtk_widget_get_width(heat));
        if (!inside)
            for (int st = 0; st < ATN_TRACE_STEP_COUNT; st++) {
                double right = trace_label_right(atn_trace_view_get_step_widget(tv, st), scroller);
                if (right > gtk_widget_get_width(scroller) + 0.5)
                    g_error("%d px window at text size 2.0: trace step %d reaches %.0f px in a %d px sheet",
                            gtk_widget_get_width(GTK_WIDGET(win)), st + 1, right, gtk_widget_get_width(scroller));
            }
        g_assert_true(inside);
        /* the intro above the steps is whole too */
        g_autoptr(GString) bad = g_string_new(NULL);
        widgets_cut(gtk_scrolled_window_get_child(GTK_SCROLLED_WINDOW(scroller)), bad);
        if (bad->len)
            g_error("%d px window at text size 2.0: the trace sheet:%s", w, bad->str);
        /* the heatmap is of use: at least 240 px wide beside the sheet, or inside the sheet above
           the steps, as wide as the sheet (before: a 160 px side pane in the 900 px window) */
        gboolean stacked = atn_trace_view_get_stacked(tv);
        g_test_message("  the heatmap %s, %dx%d px", stacked ? "inside the sheet" : "beside it", gtk_widget_get_width(heat),
                       gtk_widget_get_height(heat));
        g_assert_cmpint(gtk_widget_get_width(heat), >=, 240);
        g_assert_cmpint(gtk_widget_get_height(heat), >=, 240);
        g_assert_true(stacked == gtk_widget_is_ancestor(heat, scroller));
        if (stacked) {   /* above the steps */
            graphene_point_t hp, sp;
            g_assert_true(gtk_widget_compute_point(heat, scroller, &GRAPHENE_POINT_INIT(0, 0), &hp));
            g_assert_true(gtk_widget_compute_point(atn_trace_view_get_step_widget(tv, 0), scroller,
                                                   &GRAPHENE_POINT_INIT(0, 0), &sp));
            g_assert_cmpfloat(hp.y, <, sp.y);
        }
        g_assert_true(w == 900 ? stacked : !stacked);   /* 503 px beside the sheet at 1280 */
        text_size_done(win);
    }
}

static void test_head(void) {
    narrow n = narrow_window();
    n.model = "demo";
    at_both_sizes(&n, "head", FALSE, check_head);
    /* a causal model: the masked cells' longer text */
    atn_window_set_presentation(n.win, FALSE);
    open_and_wait(n.win, "demo-gpt2");
    type_and_wait(n.win, "The cat sat on the mat because it was tired.");
    n.model = "demo-gpt2";
    at_both_sizes(&n, "head", FALSE, check_head);
    atn_window_set_presentation(n.win, FALSE);
    destroy_window(n.win);
}

static void test_similarity(void) {
    narrow n = narrow_window();
    at_both_sizes(&n, "similarity", FALSE, check_similarity_metrics);
    atn_window_set_presentation(n.win, FALSE);
    destroy_window(n.win);
}

int main(int argc, char **argv) {
    if (!ui_test_init(&argc, &argv))
        return 0;
    atn_prefs_keep_in_memory(atn_prefs_get_default());
    g_test_add_func("/ui/narrow/head", test_head);
    g_test_add_func("/ui/narrow/similarity", test_similarity);
    g_test_add_func("/ui/narrow/trace", test_trace);
    g_test_add_func("/ui/narrow/trace-large-text", test_trace_large_text);
    return g_test_run();
}
