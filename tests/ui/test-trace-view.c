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
    AtnTraceView *tv = show_trace(win, 0, 0, 0);
    AtnSession *s = atn_window_get_session(win);
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


/* A step's table as rows of cells (the text atn_trace_view_dup_step_text gives). */
static char **step_rows(AtnTraceView *tv, atn_trace_step step) {
    g_autofree char *text = atn_trace_view_dup_step_text(tv, step);
    g_assert_nonnull(text);
    return g_strsplit(text, "\n", -1);
}

/* TRUE when every label under w lies inside the scroller's visible width (nothing runs under
 * the side pane). */
static gboolean inside(GtkWidget *w, GtkWidget *scroller, double *worst) {
    gboolean ok = TRUE;
    for (GtkWidget *c = gtk_widget_get_first_child(w); c; c = gtk_widget_get_next_sibling(c)) {
        if (!gtk_widget_get_visible(c))
            continue;
        if (GTK_IS_LABEL(c)) {
            graphene_rect_t b;
            if (gtk_widget_compute_bounds(c, scroller, &b)) {
                double right = b.origin.x + b.size.width;
                *worst = MAX(*worst, right);
                if (right > gtk_widget_get_width(scroller) + 0.5)
                    ok = FALSE;
            }
        }
        ok = inside(c, scroller, worst) && ok;
    }
    return ok;
}

/* Issue 14, defect 3: on the demo model (d_model 128, 16 heads of 8), head 15's columns
 * 120-127 are all shown in steps 9 and 10 with the engine's numbers, and the wide vectors stay
 * inside the sheet at 1200 px instead of running under the side pane. */
static void test_trace_wide_columns(void) {
    AtnWindow *win = new_window();
    open_and_wait(win, "demo");
    const char *text = "The cat sat on the [MASK] because it was tired.";
    type_and_wait(win, text);
    AtnTraceView *tv = show_trace(win, 1, 15, 0);
    atn_trace_view_set_step(tv, ATN_TRACE_STEP_CONCAT);
    settle(100);

    /* the engine's own run and trace of the same text */
    atn_error err = {0};
    atn_model *m = atn_model_open("demo", NULL, NULL, &err);
    g_assert_nonnull(m);
    atn_encoding *enc = NULL;
    g_assert_cmpint(atn_model_encode(m, text, NULL, &enc, &err), ==, ATN_OK);
    atn_run *run = atn_run_new(m);
    g_assert_cmpint(atn_run_forward(run, enc, NULL, &err), ==, ATN_OK);
    atn_trace *t = NULL;
    g_assert_cmpint(atn_trace_compute(m, atn_run_capture(run), 1, 15, 0, &t, &err), ==, ATN_OK);
    g_assert_cmpint(t->d_model, ==, 128);
    g_assert_cmpint(t->d_head, ==, 8);

    atn_trace_step wide[] = {ATN_TRACE_STEP_CONCAT, ATN_TRACE_STEP_PROJECT};
    for (guint w = 0; w < G_N_ELEMENTS(wide); w++) {
        g_auto(GStrv) rows = step_rows(tv, wide[w]);
        g_auto(GStrv) head = g_strsplit(rows[0], "\t", -1);
        g_auto(GStrv) vals = g_strsplit(rows[1], "\t", -1);
        g_assert_cmpuint(g_strv_length(head), ==, g_strv_length(vals));
        const double *v = wide[w] == ATN_TRACE_STEP_CONCAT ? t->concat : t->projected;
        for (int c = 120; c <= 127; c++) {
            g_autofree char *idx = g_strdup_printf("%d", c);
            int at = -1;
            for (int i = 0; head[i]; i++)
                if (!strcmp(head[i], idx))
                    at = i;
            if (at < 0)
                g_error("step %d hides column %d: %s", wide[w] + 1, c, rows[0]);
            g_autofree char *want = g_strdup_printf("%.4f", v[c]);
            g_assert_cmpstr(vals[at], ==, want);
            if (wide[w] == ATN_TRACE_STEP_CONCAT) {   /* the head's own output, o0 of step 8 */
                g_autofree char *o = g_strdup_printf("%.4f", t->output[c - 120]);
                g_assert_cmpstr(vals[at], ==, o);
            }
        }
        /* nothing of the vector beyond the sheet's visible width */
        GtkWidget *box = atn_trace_view_get_step_widget(tv, wide[w]);
        GtkWidget *scroller = gtk_widget_get_ancestor(box, GTK_TYPE_SCROLLED_WINDOW);
        double worst = 0;
        if (!inside(box, scroller, &worst))
            g_error("step %d runs %.0f px into a %d px sheet", wide[w] + 1, worst, gtk_widget_get_width(scroller));
    }
    atn_trace_free(t);
    atn_run_free(run);
    atn_encoding_free(enc);
    atn_model_free(m);
    destroy_window(win);
}

/* The n-th (from 0) descendant of w of type t, depth first. */
static GtkWidget *find_nth(GtkWidget *w, GType t, int n, int *seen) {
    for (GtkWidget *c = gtk_widget_get_first_child(w); c; c = gtk_widget_get_next_sibling(c)) {
        if (G_TYPE_CHECK_INSTANCE_TYPE(c, t) && (*seen)++ == n)
            return c;
        GtkWidget *f = find_nth(c, t, n, seen);
        if (f)
            return f;
    }
    return NULL;
}

/* The Trace view's own layer and head picker: it changes the session's head (the Head view
 * follows) and the trace's numbers, and follows a change made elsewhere. */
static void test_trace_picker(void) {
    AtnWindow *win = new_window();
    open_and_wait(win, "worked-example");
    AtnTraceView *tv = show_trace(win, 0, 0, 0);
    AtnSession *s = atn_window_get_session(win);
    /* the view's spin buttons, in order: Layer, Head */
    int seen = 0;
    GtkSpinButton *head_spin = GTK_SPIN_BUTTON(find_nth(GTK_WIDGET(tv), GTK_TYPE_SPIN_BUTTON, 1, &seen));
    g_assert_nonnull(head_spin);
    double lo, hi;
    gtk_spin_button_get_range(head_spin, &lo, &hi);
    g_assert_cmpfloat(hi, ==, 1);   /* 2 heads */
    gtk_spin_button_set_value(head_spin, 1);
    settle(20);
    g_assert_cmpint(atn_session_get_head(s), ==, 1);
    /* head 1 (dims 2-3), query 0: q0 = k0 = (0.2, 0.1); k1 = (0.3, 0.2); k2 = (0.1, 0.4):
       scores 0.05, 0.08, 0.06 */
    g_autofree char *scores = atn_trace_view_dup_step_text(tv, ATN_TRACE_STEP_SCORES);
    g_assert_nonnull(strstr(scores, "0.0500"));
    g_assert_nonnull(strstr(scores, "0.0800"));
    g_assert_nonnull(strstr(scores, "0.0600"));
    atn_session_set_head(s, 0);   /* elsewhere: the picker follows */
    settle(20);
    g_assert_cmpint(gtk_spin_button_get_value_as_int(head_spin), ==, 0);
    destroy_window(win);
}

/* Reveal mode: at step k the steps after k are hidden (and the heatmap until the softmax);
 * each Step shows the next one with its numbers; All shows everything. */
static void test_trace_reveal(void) {
    AtnWindow *win = new_window();
    open_and_wait(win, "worked-example");
    AtnTraceView *tv = show_trace(win, 0, 0, 0);
    atn_trace_view_set_step(tv, -1);
    atn_trace_view_set_reveal(tv, TRUE);
    g_assert_true(atn_trace_view_get_reveal(tv));
    g_assert_cmpint(atn_trace_view_get_step(tv), ==, 0);   /* a lesson starts at step 1 */
    AtnHeatmap *hm = atn_trace_view_get_heatmap(tv);
    for (int k = 0; k < ATN_TRACE_STEP_COUNT; k++) {
        settle(10);
        for (int st = 0; st < ATN_TRACE_STEP_COUNT; st++) {
            GtkWidget *box = atn_trace_view_get_step_widget(tv, st);
            g_assert_nonnull(box);
            if (gtk_widget_get_visible(box) != (st <= k))
                g_error("at step %d, step %d is %s", k + 1, st + 1, st <= k ? "hidden" : "shown");
        }
        g_assert_cmpint(gtk_widget_get_visible(GTK_WIDGET(hm)), ==, k >= ATN_TRACE_STEP_SOFTMAX);
        if (k == ATN_TRACE_STEP_SOFTMAX) {   /* reached: the weights are shown and drawn */
            GtkWidget *box = atn_trace_view_get_step_widget(tv, k);
            g_assert_true(gtk_widget_get_mapped(box));
            const double article[3] = {0.3760, 0.4487, 0.1752};
            assert_weights_shown(tv, article);
        }
        if (k + 1 < ATN_TRACE_STEP_COUNT)
            atn_trace_view_set_step(tv, k + 1);
    }
    atn_trace_view_set_step(tv, -1);   /* All */
    settle(10);
    for (int st = 0; st < ATN_TRACE_STEP_COUNT; st++)
        g_assert_true(gtk_widget_get_visible(atn_trace_view_get_step_widget(tv, st)));
    g_assert_true(gtk_widget_get_visible(GTK_WIDGET(hm)));
    /* off again: every step shows whatever the current one is */
    atn_trace_view_set_step(tv, 2);
    atn_trace_view_set_reveal(tv, FALSE);
    settle(10);
    for (int st = 0; st < ATN_TRACE_STEP_COUNT; st++)
        g_assert_true(gtk_widget_get_visible(atn_trace_view_get_step_widget(tv, st)));
    destroy_window(win);
}

/* Reset Numbers: edited cells (also of another layer's weights) are marked "changed" with
 * their old number, Reset puts every original back (the softmax is the article's again) and
 * clears the marks; a refused cell says why in words, and Reset clears that too. */
static void test_trace_reset(void) {
    AtnWindow *win = new_window();
    open_and_wait(win, "worked-example");
    AtnTraceView *tv = show_trace(win, 0, 0, 0);
    AtnSession *s = atn_window_get_session(win);
    const double article[3] = {0.3760, 0.4487, 0.1752};
    GtkEditable *x00 = atn_trace_view_get_input_cell(tv, ATN_TOY_X, 0, 0);
    GtkEditable *x11 = atn_trace_view_get_input_cell(tv, ATN_TOY_X, 1, 1);
    GtkEditable *wq = atn_trace_view_get_input_cell(tv, ATN_TOY_WQ, 0, 0);
    g_assert_nonnull(x00);
    g_assert_nonnull(wq);
    g_assert_false(gtk_widget_has_css_class(GTK_WIDGET(x00), "changed"));
    gtk_editable_set_text(x00, "1.5");
    gtk_editable_set_text(wq, "2");
    settle(20);
    double want[3];
    hand_softmax(1.5, want);
    g_assert_true(gtk_widget_has_css_class(GTK_WIDGET(x00), "changed"));
    g_assert_true(gtk_widget_has_css_class(GTK_WIDGET(wq), "changed"));
    g_assert_false(gtk_widget_has_css_class(GTK_WIDGET(x11), "changed"));
    const char *tip = gtk_widget_get_tooltip_text(GTK_WIDGET(x00));
    g_assert_nonnull(strstr(tip, "0.5"));   /* "Changed: it was 0.5" */
    /* typed back by hand: no longer marked */
    gtk_editable_set_text(wq, "1");
    settle(20);
    g_assert_false(gtk_widget_has_css_class(GTK_WIDGET(wq), "changed"));
    gtk_editable_set_text(wq, "3");
    settle(20);
    /* by hand: q0 = (3 × 1.5, 1.1), keys unchanged (1.5, 1.1), (1.0, 1.1), (1.2, -0.2) */
    {
        double sc[3] = {4.5 * 1.5 + 1.21, 4.5 * 1.0 + 1.21, 4.5 * 1.2 - 0.22}, m = 0, sum = 0;
        for (int j = 0; j < 3; j++)
            m = fmax(m, sc[j] / sqrt(2.0));
        for (int j = 0; j < 3; j++)
            sum += want[j] = exp(sc[j] / sqrt(2.0) - m);
        for (int j = 0; j < 3; j++)
            want[j] /= sum;
        assert_weights_shown(tv, want);
    }

    /* a refused cell says why, not only red */
    gtk_editable_set_text(x11, "1.1.1");
    settle(20);
    g_assert_true(gtk_widget_has_css_class(GTK_WIDGET(x11), "error"));
    GtkWidget *why = NULL;
    GtkWidget *sheet = gtk_widget_get_ancestor(GTK_WIDGET(x11), GTK_TYPE_BOX);
    while (sheet && !why) {
        for (GtkWidget *c = gtk_widget_get_first_child(sheet); c; c = gtk_widget_get_next_sibling(c))
            if (GTK_IS_LABEL(c) && gtk_widget_has_css_class(c, "input-error"))
                why = c;
        sheet = gtk_widget_get_ancestor(gtk_widget_get_parent(sheet), GTK_TYPE_BOX);
    }
    g_assert_nonnull(why);
    g_assert_true(gtk_widget_get_visible(why));
    const char *msg = gtk_label_get_text(GTK_LABEL(why));
    g_assert_nonnull(strstr(msg, "X[1][1]"));
    g_assert_nonnull(strstr(msg, "“1.1.1” is not a number"));
    const char *etip = gtk_widget_get_tooltip_text(GTK_WIDGET(x11));
    g_assert_cmpstr(etip, ==, msg);
    gtk_editable_set_text(x11, "");
    settle(20);
    g_assert_nonnull(strstr(gtk_label_get_text(GTK_LABEL(why)), "empty"));

    /* Reset: every original number back, marks and the reason gone */
    atn_trace_view_reset_inputs(tv);
    settle(20);
    g_assert_cmpstr(gtk_editable_get_text(x00), ==, "0.5");
    g_assert_cmpstr(gtk_editable_get_text(x11), ==, "1.1");
    g_assert_cmpstr(gtk_editable_get_text(wq), ==, "1");
    g_assert_false(gtk_widget_has_css_class(GTK_WIDGET(x00), "changed"));
    g_assert_false(gtk_widget_has_css_class(GTK_WIDGET(wq), "changed"));
    g_assert_false(gtk_widget_has_css_class(GTK_WIDGET(x11), "error"));
    g_assert_false(gtk_widget_get_visible(why));
    AtnModelHandle *mh = atn_session_get_model(s);
    g_assert_cmpfloat(atn_model_handle_toy_get(mh, ATN_TOY_X, 0, 0, 0), ==, 0.5f);
    g_assert_cmpfloat(atn_model_handle_toy_get(mh, ATN_TOY_WQ, 0, 0, 0), ==, 1.0f);
    assert_weights_shown(tv, article);
    AtnResult *r = atn_session_get_result(s);
    g_assert_cmpfloat_with_epsilon(atn_result_get_head(r, 0, 0)[0], 0.3760, 1e-4);
    destroy_window(win);
}


/* The query drop-down lists "i  token" for the shown result's tokens.  A new text keeps the
 * list object and replaces only the items that differ (a new list for 512 tokens made a
 * switch to this view 20-50 ms slower): same tokens but one, fewer tokens, more tokens. */
static void assert_query_items(GtkDropDown *drop, AtnResult *r) {
    GListModel *m = gtk_drop_down_get_model(drop);
    g_assert_true(GTK_IS_STRING_LIST(m));
    int n = atn_result_get_n_tokens(r);
    g_assert_cmpuint(g_list_model_get_n_items(m), ==, (guint)n);
    const char *const *tok = atn_result_get_tokens(r);
    for (int i = 0; i < n; i++) {
        g_autofree char *want = g_strdup_printf("%d  %s", i, tok[i]);
        g_assert_cmpstr(gtk_string_list_get_string(GTK_STRING_LIST(m), i), ==, want);
    }
}

static void test_trace_query_list(void) {
    AtnWindow *win = new_window();
    open_and_wait(win, f32_model);
    type_and_wait(win, "the cat sat on the mat");
    show_view(win, "trace");
    AtnSession *s = atn_window_get_session(win);
    AtnTraceView *tv = ATN_TRACE_VIEW(atn_window_get_view_widget(win, "trace"));
    int seen = 0;
    GtkDropDown *drop = GTK_DROP_DOWN(find_nth(GTK_WIDGET(tv), GTK_TYPE_DROP_DOWN, 0, &seen));
    g_assert_nonnull(drop);
    atn_trace_view_refresh(tv);
    assert_query_items(drop, atn_session_get_result(s));
    GListModel *list = gtk_drop_down_get_model(drop);
    const char *texts[] = {"the dog sat on the mat", "the dog sat", "we like tea and the cat sat on the mat"};
    for (guint k = 0; k < G_N_ELEMENTS(texts); k++) {
        type_and_wait(win, texts[k]);
        settle(20);
        g_assert_true(gtk_drop_down_get_model(drop) == list);   /* the same list, spliced */
        assert_query_items(drop, atn_session_get_result(s));
    }
    atn_session_set_query(s, 2);
    settle(20);
    g_assert_cmpuint(gtk_drop_down_get_selected(drop), ==, 2);
    destroy_window(win);
}

/* The width Pango gives text in the cells' font (style.css: monospace; bold for headers and
 * the query's row), at the view's text size. */
static int cell_width(GtkWidget *view, const char *text, gboolean bold) {
    PangoContext *ctx = gtk_widget_get_pango_context(view);
    PangoFontDescription *fd = pango_font_description_copy(pango_context_get_font_description(ctx));
    pango_font_description_set_family(fd, "monospace");
    if (bold)
        pango_font_description_set_weight(fd, PANGO_WEIGHT_BOLD);
    PangoLayout *l = pango_layout_new(ctx);
    pango_layout_set_font_description(l, fd);
    pango_layout_set_text(l, text, -1);
    PangoRectangle logical;
    pango_layout_get_pixel_extents(l, NULL, &logical);
    g_object_unref(l);
    pango_font_description_free(fd);
    return logical.width;
}

/* The widths the sheet is fitted with are, column by column, the widest cell of the key table
 * as Pango lays it out; returns the table's cell count. */
static int assert_key_widths(AtnTraceView *tv, int query) {
    int fixed, ell, w[8];
    atn_trace_view_get_key_widths(tv, &fixed, &ell, w);
    g_auto(GStrv) rows = step_rows(tv, ATN_TRACE_STEP_KEYS);
    int want[10] = {0}, ncols = 0, cells = 0;
    g_autofree char *q = g_strdup_printf("%d", query);
    g_auto(GStrv) head = g_strsplit(rows[0], "\t", -1);
    for (int r = 0; rows[r] && rows[r][0]; r++) {
        g_auto(GStrv) c = g_strsplit(rows[r], "\t", -1);
        ncols = (int)g_strv_length(c);
        g_assert_cmpint(ncols, ==, 10);   /* j, token and all 8 of d_k: the 8-column plan */
        for (int k = 0; k < ncols; k++, cells++)
            want[k] = MAX(want[k], cell_width(GTK_WIDGET(tv), c[k], r == 0 || k < 2 || !strcmp(c[0], q)));
    }
    g_assert_cmpint(fixed, ==, want[0] + want[1]);
    for (int k = 2; k < ncols; k++)
        if (strcmp(head[k], "…"))
            g_assert_cmpint(w[k - 2], ==, want[k]);
    g_assert_cmpint(ell, ==, cell_width(GTK_WIDGET(tv), "…", TRUE));
    return cells;
}

/* A new result's key table is fitted from cached widths (texts keyed with their digits as 0:
 * every digit has one advance in a monospace font): a handful of Pango layouts, not one per
 * cell of every new trace as before (170 at bert-base's d_k = 64, 8% of a switch to this view),
 * and the widths are still the ones Pango gives each cell. */
static void test_trace_widths_cached(void) {
    AtnWindow *win = new_window();
    open_and_wait(win, f32_model);
    type_and_wait(win, "the cat sat on the mat");
    AtnTraceView *tv = show_trace(win, 1, 2, 0);
    settle(50);
    int fixed, ell, w[8];
    guint n0 = atn_trace_view_get_key_widths(tv, &fixed, &ell, w);
    int cells = assert_key_widths(tv, 0);
    g_assert_cmpuint(n0, >, 0);
    const char *texts[] = {"the dog sat on the mat", "a mat sat on the cat"};
    for (guint k = 0; k < G_N_ELEMENTS(texts); k++) {
        type_and_wait(win, texts[k]);
        settle(50);
        guint n = atn_trace_view_get_key_widths(tv, &fixed, &ell, w);
        if (n - n0 >= (guint)cells / 4)
            g_error("a new result laid out %u texts for the key table's %d cells", n - n0, cells);
        assert_key_widths(tv, 0);
        n0 = n;
    }
    destroy_window(win);
}

/* The steps' tables under w (GtkGrid or GtkFlowBox of class "trace-table"), in order, into a;
 * nothing is refreshed (atn_trace_view_get_step_widget would). */
static void collect_tables(GtkWidget *w, GPtrArray *a) {
    for (GtkWidget *c = gtk_widget_get_first_child(w); c; c = gtk_widget_get_next_sibling(c)) {
        if ((GTK_IS_GRID(c) || GTK_IS_FLOW_BOX(c)) && gtk_widget_has_css_class(c, "trace-table"))
            g_ptr_array_add(a, c);
        collect_tables(c, a);
    }
}

static gboolean same_tables(GPtrArray *a, GPtrArray *b) {
    if (a->len != b->len)
        return FALSE;
    for (guint i = 0; i < a->len; i++)
        if (a->pdata[i] != b->pdata[i])
            return FALSE;
    return TRUE;
}

/* Each step's text as a window that had never built its tables shows it (the reference). */
static void assert_steps_as_cold(AtnTraceView *tv, AtnSession *ws, const char *model, const char *text) {
    AtnWindow *cold = new_window();
    open_and_wait(cold, model);
    if (text)   /* NULL: a toy model, with its own tokens */
        type_and_wait(cold, text);
    AtnSession *s = atn_window_get_session(cold);
    atn_session_select_head(s, atn_session_get_layer(ws), atn_session_get_head(ws));
    AtnTraceView *ctv = show_trace(cold, -1, -1, atn_session_get_query(ws));
    for (int st = 0; st < ATN_TRACE_STEP_COUNT; st++) {
        g_autofree char *want = atn_trace_view_dup_step_text(ctv, st);
        g_autofree char *got = atn_trace_view_dup_step_text(tv, st);
        g_assert_cmpstr(got, ==, want);
    }
    destroy_window(cold);
}

/* The steps' tables are built while the view is hidden, a step per idle (the first switch to
 * it built ~700 labels at once at 512 tokens, ~90-140 ms), and the switch fills in the numbers
 * as a window that never built them shows them; another model's tables of another shape are
 * built again while hidden, with the column count the sheet's width gave, and the switch keeps
 * them. */
static void test_trace_tables_built_hidden(void) {
    AtnWindow *win = new_window();
    AtnSession *s = atn_window_get_session(win);
    AtnTraceView *tv = ATN_TRACE_VIEW(atn_window_get_view_widget(win, "trace"));
    g_autoptr(GPtrArray) none = g_ptr_array_new();
    collect_tables(GTK_WIDGET(tv), none);
    g_assert_cmpuint(none->len, ==, 0);   /* no result yet: nothing built */
    open_and_wait(win, "demo");
    const char *text = "the cat sat on the mat because it was tired.";
    type_and_wait(win, text);
    settle(100);
    g_assert_false(gtk_widget_get_mapped(GTK_WIDGET(tv)));
    g_autoptr(GPtrArray) built = g_ptr_array_new();
    collect_tables(GTK_WIDGET(tv), built);
    g_assert_cmpuint(built->len, ==, ATN_TRACE_STEP_COUNT);   /* one per step, while hidden */
    show_view(win, "trace");
    assert_steps_as_cold(tv, s, "demo", text);
    g_autoptr(GPtrArray) demo_tables = g_ptr_array_new();
    collect_tables(GTK_WIDGET(tv), demo_tables);
    gpointer alive[ATN_TRACE_STEP_COUNT];   /* NULL once a table is destroyed (rebuilt) */
    for (int st = 0; st < ATN_TRACE_STEP_COUNT; st++) {
        alive[st] = demo_tables->pdata[st];
        g_object_add_weak_pointer(G_OBJECT(alive[st]), &alive[st]);
    }

    show_view(win, "head");
    open_and_wait(win, "worked-example");   /* 3 tokens, d_k = 2: other shapes */
    settle(100);
    g_assert_false(gtk_widget_get_mapped(GTK_WIDGET(tv)));
    g_autoptr(GPtrArray) other = g_ptr_array_new();
    collect_tables(GTK_WIDGET(tv), other);
    g_assert_cmpuint(other->len, ==, ATN_TRACE_STEP_COUNT);
    int rebuilt = 0;   /* the tables of another shape: built again while hidden */
    for (int st = 0; st < ATN_TRACE_STEP_COUNT; st++)
        if (!alive[st])
            rebuilt++;
        else
            g_object_remove_weak_pointer(G_OBJECT(alive[st]), &alive[st]);
    g_test_message("%d of %d tables built again for the other model", rebuilt, ATN_TRACE_STEP_COUNT);
    g_assert_cmpint(rebuilt, >, 0);
    show_view(win, "trace");
    g_autoptr(GPtrArray) shown = g_ptr_array_new();
    collect_tables(GTK_WIDGET(tv), shown);
    g_assert_true(same_tables(other, shown));   /* kept by the switch */
    assert_steps_as_cold(tv, s, "worked-example", NULL);
    destroy_window(win);
}

int main(int argc, char **argv) {
    if (!ui_test_init(&argc, &argv))
        return 0;
    g_test_add_func("/ui/trace-worked-example", test_trace_worked_example);
    g_test_add_func("/ui/trace-wide-columns", test_trace_wide_columns);
    g_test_add_func("/ui/trace-picker", test_trace_picker);
    g_test_add_func("/ui/trace-reveal", test_trace_reveal);
    g_test_add_func("/ui/trace-reset", test_trace_reset);
    g_test_add_func("/ui/trace-query-list", test_trace_query_list);
    g_test_add_func("/ui/trace-widths-cached", test_trace_widths_cached);
    g_test_add_func("/ui/trace-tables-built-hidden", test_trace_tables_built_hidden);
    return g_test_run();
}
