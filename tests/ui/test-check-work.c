/* "Check my work" in the Trace view (ui/atn-check-work.c) in a real window under Xvfb, on the
 * worked example's head 0, query 0 (seeds/README.md, worked by hand): typing the textbook's
 * numbers (scores 1.46 1.71 0.38, softmax 0.325 0.421 0.254, output 0.847 0.872) marks the
 * softmax step and explains it with the exact 0.3760; the correct softmax clears the mark;
 * scores left unscaled mark the scaling step; a word that is not a number is named.
 * With ATN_CHECK_WORK_SHOT=FILE.png (a window size in ATN_CHECK_WORK_SIZE=WxH, a text size
 * in ATN_CHECK_WORK_TEXT_SIZE) the
 * screen is saved after the textbook's numbers, for looking at (`import -window root`).
 *
 * Run with --tap (meson does).  Without a display it reports "1..0 # SKIP no display". */
#include "ui-test-util.h"

#include "atn-check-work.h"
#include "atn-trace-plan.h"

static AtnCheckWork *find_check(GtkWidget *w) {
    if (ATN_IS_CHECK_WORK(w))
        return ATN_CHECK_WORK(w);
    for (GtkWidget *c = gtk_widget_get_first_child(w); c; c = gtk_widget_get_next_sibling(c)) {
        AtnCheckWork *found = find_check(c);
        if (found)
            return found;
    }
    return NULL;
}

static void type(AtnCheckWork *cw, atn_check_step step, const char *text) {
    gtk_editable_set_text(atn_check_work_get_entry(cw, step), text);   /* as typing does: "changed" */
    settle(20);
}

static gboolean marked(AtnTraceView *tv, atn_trace_step step) {
    GtkWidget *box = atn_trace_view_get_step_widget(tv, step);
    g_assert_nonnull(box);
    return gtk_widget_has_css_class(box, "check-differs");
}

static void test_check_textbook(void) {
    const char *size = g_getenv("ATN_CHECK_WORK_SIZE");
    int w = 1200, h = 780;
    if (size)
        g_assert_cmpint(sscanf(size, "%dx%d", &w, &h), ==, 2);
    const char *ts = g_getenv("ATN_CHECK_WORK_TEXT_SIZE");   /* 1.5: as presentation mode's text */
    AtnWindow *win = text_size_window(w, h, ts ? g_ascii_strtod(ts, NULL) : 1.0);
    open_and_wait(win, "worked-example");
    AtnTraceView *tv = show_trace(win, 0, 0, 0);
    AtnCheckWork *cw = find_check(GTK_WIDGET(tv));
    g_assert_nonnull(cw);
    g_assert_cmpint(atn_check_work_get_marked(cw), ==, -1);

    /* the book's numbers: right scores and output, its softmax slipped */
    type(cw, ATN_CHECK_SCORES, "1.46 1.71 0.38");
    g_assert_cmpint(atn_check_work_get_marked(cw), ==, -1);
    g_assert_nonnull(strstr(atn_check_work_get_message(cw), "✓"));
    type(cw, ATN_CHECK_OUTPUT, "0.847 0.872");
    type(cw, ATN_CHECK_WEIGHTS, "0.325 0.421 0.254");
    g_assert_cmpint(atn_check_work_get_marked(cw), ==, ATN_TRACE_STEP_SOFTMAX);
    g_assert_true(marked(tv, ATN_TRACE_STEP_SOFTMAX));
    g_assert_false(marked(tv, ATN_TRACE_STEP_SCORES) || marked(tv, ATN_TRACE_STEP_OUTPUT));
    const char *msg = atn_check_work_get_message(cw);
    if (!strstr(msg, "0.325") || !strstr(msg, "0.3760") || !strstr(msg, "0.8380") || !strstr(msg, "2.2284"))
        g_error("the explanation lacks the typed 0.325, the exact 0.3760 or exp 0.8380 / sum 2.2284: [%zu] %s", strlen(msg), msg);
    const char *shot = g_getenv("ATN_CHECK_WORK_SHOT");
    if (shot) {   /* the panel in view (FILE-panel.png), then the marked step (FILE) */
        gtk_expander_set_expanded(GTK_EXPANDER(gtk_widget_get_first_child(GTK_WIDGET(cw))), TRUE);
        gtk_widget_grab_focus(GTK_WIDGET(atn_check_work_get_entry(cw, ATN_CHECK_WEIGHTS)));
        settle(600);
        g_autofree char *panel = g_strdup_printf("import -window root %.*s-panel.png", (int)(strlen(shot) - 4), shot);
        g_assert_true(g_spawn_command_line_sync(panel, NULL, NULL, NULL, NULL));
        atn_trace_view_set_step(tv, ATN_TRACE_STEP_SOFTMAX);
        settle(600);
        g_autofree char *cmd = g_strdup_printf("import -window root %s", shot);
        g_assert_true(g_spawn_command_line_sync(cmd, NULL, NULL, NULL, NULL));
    }

    /* the correct softmax (3 decimals, rounded): nothing marked any more */
    type(cw, ATN_CHECK_WEIGHTS, "0.376 0.449 0.175");
    g_assert_cmpint(atn_check_work_get_marked(cw), ==, -1);
    g_assert_false(marked(tv, ATN_TRACE_STEP_SOFTMAX));
    g_assert_nonnull(strstr(atn_check_work_get_message(cw), "✓"));

    /* the scores typed as the scaled ones: the scaling step, and why */
    type(cw, ATN_CHECK_SCALED, "1.46 1.71 0.38");
    g_assert_cmpint(atn_check_work_get_marked(cw), ==, ATN_TRACE_STEP_SCALE);
    g_assert_true(marked(tv, ATN_TRACE_STEP_SCALE) && !marked(tv, ATN_TRACE_STEP_SOFTMAX));
    g_assert_nonnull(strstr(atn_check_work_get_message(cw), "1.0324"));
    type(cw, ATN_CHECK_SCALED, "");

    /* a new head: checked again against its numbers (head 1's scores differ) */
    AtnSession *s = atn_window_get_session(win);
    atn_session_select_head(s, 0, 1);
    atn_trace_view_refresh(tv);
    settle(20);
    g_assert_cmpint(atn_check_work_get_marked(cw), ==, ATN_TRACE_STEP_SCORES);
    g_assert_true(marked(tv, ATN_TRACE_STEP_SCORES));
    atn_session_select_head(s, 0, 0);
    atn_trace_view_refresh(tv);
    settle(20);
    g_assert_cmpint(atn_check_work_get_marked(cw), ==, -1);

    /* not a number: named, nothing marked */
    type(cw, ATN_CHECK_OUTPUT, "0.847 abc");
    g_assert_cmpint(atn_check_work_get_marked(cw), ==, -1);
    g_assert_nonnull(strstr(atn_check_work_get_message(cw), "abc"));
    text_size_done(win);
}

/* The Trace view's plan of a T5 encoder head: the mask step's scores include the relative
 * position bias (scaled + bias, as `attnscope trace` lists them), and the scale step says so. */
static void test_plan_t5_bias(void) {
    g_autofree char *dir = g_build_filename(g_getenv("ATN_SOURCE_ROOT") ? g_getenv("ATN_SOURCE_ROOT") : ".",
                                            "tests", "hf", "models", "t5-v1-f32", NULL);
    atn_error err = {0};
    atn_model *m = atn_model_open_hf(dir, NULL, NULL, &err);
    g_assert_nonnull(m);
    int32_t ids[] = {5, 6, 7, 8, 1};
    atn_encoding *enc = NULL;
    g_assert_cmpint(atn_model_encode_ids(m, ids, NULL, NULL, 5, &enc, &err), ==, ATN_OK);
    atn_run *run = atn_run_new(m);
    g_assert_cmpint(atn_run_forward(run, enc, NULL, &err), ==, ATN_OK);
    atn_trace *t = NULL;
    g_assert_cmpint(atn_trace_compute(m, atn_run_capture(run), 1, 2, 1, &t, &err), ==, ATN_OK);
    g_assert_nonnull(t->pos_bias);
    AtnTracePlanStep plans[ATN_TRACE_STEP_COUNT];
    memset(plans, 0, sizeof plans);
    atn_trace_plan_make(t, 4, plans);
    GString *cells = g_string_new(NULL);
    const AtnTracePlanStep *mk = &plans[ATN_TRACE_STEP_MASK];
    for (int c = 0; c < mk->rows * mk->cols; c++)
        g_string_append_printf(cells, "%s|", mk->cells[c] ? mk->cells[c] : "");
    for (int j = 0; j < t->n; j++) {
        g_autofree char *want = g_strdup_printf("%.4f", t->scaled[j] + t->pos_bias[j]);
        if (!strstr(cells->str, want))
            g_error("the mask step lacks scaled + bias %s for key %d: %s", want, j, cells->str);
    }
    g_assert_nonnull(plans[ATN_TRACE_STEP_SCALE].note);
    g_assert_nonnull(strstr(plans[ATN_TRACE_STEP_SCALE].note, "T5"));
    g_string_free(cells, TRUE);
    for (int s = 0; s < ATN_TRACE_STEP_COUNT; s++)
        atn_trace_plan_step_clear(&plans[s]);
    atn_trace_free(t);
    atn_run_free(run);
    atn_encoding_free(enc);
    atn_model_free(m);
}

int main(int argc, char **argv) {
    if (!ui_test_init(&argc, &argv))
        return 0;
    g_test_add_func("/ui/check-work-textbook", test_check_textbook);
    g_test_add_func("/ui/trace-plan-t5-bias", test_plan_t5_bias);
    return g_test_run();
}
