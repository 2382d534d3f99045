/* The window fits a 1280x720 screen (issue 14): under Xvfb with a 1280x720 screen, for every
 * view, at Text size 1.0 and 2.0 and in presentation mode with its header shown, the window's
 * minimum size (what the window manager is told it may not go below) is at most 1280x720 and
 * the window laid out at 1280x720 is not wider or taller than the screen (its surface, with
 * the margins around the window).  The header bar's view switcher shows its full row whenever
 * it fits and a narrower form that reaches every view when not.  The What-if page and the
 * Similarity view draw all of what they show (check_drawn_whole).  Run in English (meson's
 * ui-fit) and with LANGUAGE=zh_CN (ui-fit-zh) on a 1280x720 screen, and in English on a
 * 1920x1080 one (ui-fit-1920), where Text size 2.0 keeps the full row.
 *
 * Run with --tap (meson does).  Without a display it reports "1..0 # SKIP no display". */
#include "ui-test-util.h"

#include "atn-lesson.h"
#include "atn-view-switcher.h"
#include "atn-whatif-view.h"

/* the screen (Xvfb's -screen; meson runs 1280x720 and 1920x1080) */
static int SCREEN_W, SCREEN_H;

static const char *const sentence = "The quick brown fox jumps over the lazy dog because it was tired.";

static void min_size(GtkWidget *w, int *mw, int *mh) {
    /* as GtkWindow computes its minimum for the display: the width, then the height for it */
    gtk_widget_measure(w, GTK_ORIENTATION_HORIZONTAL, -1, mw, NULL, NULL, NULL);
    gtk_widget_measure(w, GTK_ORIENTATION_VERTICAL, *mw, mh, NULL, NULL, NULL);
}

/* The What-if page and the Similarity view show all of what they draw (issue 14: at Text size
 * 2.0 on 1280x720 the What-if page's chart, its colour bar's "JS distance" and its intro ran
 * past the pane, cut unseen; the Similarity legend was cut and its matrix ~110 px with every
 * other head's label): nothing past the view's edge, no label ellipsized, the charts' titles
 * and legend whole; the matrix has every head's label and, at Text size 2.0 (not presentation
 * mode), cells of at least 9 px. */
static void check_drawn_whole(const char *name, GtkWidget *view, double scale, gboolean presentation) {
    g_autoptr(GString) bad = g_string_new(NULL);
    widgets_cut(view, bad);
    if (bad->len)
        g_error("text size %.1f%s, %s view:%s", scale, presentation ? " (presentation)" : "", name, bad->str);
    if (!strcmp(name, "whatif")) {
        atn_heatmap_layout L;
        AtnHeatmap *map = atn_whatif_view_get_map(ATN_WHATIF_VIEW(view));
        g_assert_true(atn_heatmap_get_layout(map, &L));
        if (L.title_cut)
            g_error("text size %.1f: the What-if chart's title “%s” is cut (%d px)", scale, atn_heatmap_get_title(map),
                    gtk_widget_get_width(GTK_WIDGET(map)));
    } else if (!strcmp(name, "similarity")) {
        atn_similarity_layout S;
        g_assert_true(atn_similarity_map_get_layout(atn_similarity_view_get_map(ATN_SIMILARITY_VIEW(view)), &S));
        g_test_message("  similarity matrix: cells %.1f px, labels %.1f pt, every %d-th head label, legend %s",
                       S.matrix.cell_w, S.matrix.label_size, S.matrix.row_label_step, S.side ? "beside" : "on top");
        if (S.title_cut || S.legend_cut)
            g_error("text size %.1f%s: the similarity figure's %s is cut", scale, presentation ? " (presentation)" : "",
                    S.title_cut ? "title" : "legend");
        if (S.matrix.row_label_step != 1 || S.matrix.col_label_step != 1)
            g_error("text size %.1f%s: every %d-th head label drawn (cells %.1f px)", scale,
                    presentation ? " (presentation)" : "", MAX(S.matrix.row_label_step, S.matrix.col_label_step),
                    S.matrix.cell_w);
        if (scale > 1 && !presentation && S.matrix.cell_w < 9)
            g_error("text size %.1f: the similarity matrix's cells are %.1f px", scale, S.matrix.cell_w);
    }
}

/* Every view of a screen-sized window at Text size scale (presentation: in presentation mode
 * with the header bar brought back by the pointer at the top): the minimum at most
 * max_w x max_h, and, when that bound fits the screen, the window as laid out within it. */
static void check_views(double scale, gboolean presentation, int max_w, int max_h) {
    AtnWindow *win = text_size_window(SCREEN_W, SCREEN_H, scale);
    open_and_wait(win, "demo");
    type_and_wait(win, sentence);
    if (presentation) {
        atn_window_set_presentation(win, TRUE);
        settle(200);
        pointer_at(win, 600, 2);   /* the top of the screen: the header bar and sentence come back */
        g_assert_true(atn_window_get_view_switcher_shown(win));
    }
    GtkWidget *w = GTK_WIDGET(win);
    int worst_w = 0, worst_h = 0;
    const char *wide = NULL, *tall = NULL;
    g_autoptr(GString) over = g_string_new(NULL);
    for (const char *const *v = atn_window_get_view_names(); *v; v++) {
        show_view(win, *v);
        if (!strcmp(*v, "similarity"))
            g_assert_true(wait_for(similarity_ready, atn_window_get_view_widget(win, *v)));
        settle(150);
        int mw, mh;
        min_size(w, &mw, &mh);
        /* the window's surface: its allocation and the margins around it (what the screen holds) */
        GdkSurface *surf = gtk_native_get_surface(GTK_NATIVE(w));
        int sw = gdk_surface_get_width(surf), sh = gdk_surface_get_height(surf);
        g_test_message("text size %.1f%s, %s view: minimum %dx%d, laid out at %dx%d (surface %dx%d)", scale,
                       presentation ? " (presentation)" : "", *v, mw, mh, gtk_widget_get_width(w),
                       gtk_widget_get_height(w), sw, sh);
        if (mw > worst_w)
            worst_w = mw, wide = *v;
        if (mh > worst_h)
            worst_h = mh, tall = *v;
        if ((max_w <= SCREEN_W && max_h <= SCREEN_H) && (sw > SCREEN_W || sh > SCREEN_H))
            g_string_append_printf(over, " %s view %dx%d;", *v, sw, sh);
        if ((max_w <= SCREEN_W && max_h <= SCREEN_H) && (!strcmp(*v, "whatif") || !strcmp(*v, "similarity")))
            check_drawn_whole(*v, atn_window_get_view_widget(win, *v), scale, presentation);
    }
    if (over->len)
        g_error("text size %.1f%s: the window is laid out larger than the %dx%d screen:%s", scale,
                presentation ? " (presentation)" : "", SCREEN_W, SCREEN_H, over->str);
    if (worst_w > max_w)
        g_error("text size %.1f%s: the window's minimum width is %d px (%s view), over %d", scale,
                presentation ? " (presentation)" : "", worst_w, wide, max_w);
    if (worst_h > max_h)
        g_error("text size %.1f%s: the window's minimum height is %d px (%s view), over %d", scale,
                presentation ? " (presentation)" : "", worst_h, tall, max_h);
    if (presentation)
        atn_window_set_presentation(win, FALSE);
    text_size_done(win);
}

/* A [MASK] sentence adds a row of the masked-LM head's guesses under it: the window's minimum
 * width stays what it is without one (at Text size 2.0 the row of five guesses made it 1069 px,
 * 885 without), at Text size 1.0 and 2.0, in every view but Similarity (whose matrix does not
 * depend on it; its worker would only slow this); the window laid out on the screen stays on
 * it (wrapping the row made the minimum height at the minimum width 717 px and the window 776
 * px tall on a 720 px screen); in a window at that minimum width the row scrolls sideways:
 * inside the window, every guess inside the scrolled area. */
static void test_fit_mask(void) {
    for (int i = 0; i < 2; i++) {
        double scale = i ? 2.0 : 1.0;
        AtnWindow *win = text_size_window(SCREEN_W, SCREEN_H, scale);
        open_and_wait(win, "demo");
        GtkWidget *w = GTK_WIDGET(win), *pred = atn_window_get_predictions(win);
        for (const char *const *v = atn_window_get_view_names(); *v; v++) {
            if (!strcmp(*v, "similarity"))
                continue;
            show_view(win, *v);
            int mw[2], mh[2];
            for (int m = 0; m < 2; m++) {
                type_and_wait(win, m ? "The quick brown fox jumps over the [MASK] dog because it was tired."
                                     : "The quick brown fox jumps over the lazy dog because it was tired.");
                settle(150);
                g_assert_true(gtk_widget_get_visible(pred) == (m == 1));
                min_size(w, &mw[m], &mh[m]);
                GdkSurface *surf = gtk_native_get_surface(GTK_NATIVE(w));
                int sw = gdk_surface_get_width(surf), sh = gdk_surface_get_height(surf);
                if (sw > SCREEN_W || sh > SCREEN_H)
                    g_error("text size %.1f, %s view %s a [MASK]: the window is laid out %dx%d on a %dx%d screen", scale,
                            *v, m ? "with" : "without", sw, sh, SCREEN_W, SCREEN_H);
            }
            g_autofree char *text = atn_predictions_dup_text(ATN_PREDICTIONS(pred));
            g_test_message("text size %.1f, %s view: minimum %dx%d px without a [MASK], %dx%d px with (%s)", scale, *v,
                           mw[0], mh[0], mw[1], mh[1], text);
            g_assert_cmpint(strlen(text), >, 0);
            if (mw[1] > mw[0])
                g_error("text size %.1f, %s view: a [MASK] makes the window's minimum width %d px, %d px without",
                        scale, *v, mw[1], mw[0]);
            g_assert_cmpint(mh[1], <=, SCREEN_H);
            /* at its minimum width the row scrolls: the scroller inside the window, each guess
               inside what it scrolls over */
            gtk_window_set_default_size(GTK_WINDOW(win), mw[1], SCREEN_H);
            settle(250);
            graphene_rect_t b;
            g_assert_true(gtk_widget_compute_bounds(pred, w, &b));
            if (b.origin.x + b.size.width > gtk_widget_get_width(w) + 0.5)
                g_error("text size %.1f, %s view at %d px: the guesses reach %.0f px", scale, *v,
                        gtk_widget_get_width(w), b.origin.x + b.size.width);
            GtkWidget *sc = gtk_widget_get_first_child(pred);
            g_assert_true(GTK_IS_SCROLLED_WINDOW(sc));
            GtkAdjustment *adj = gtk_scrolled_window_get_hadjustment(GTK_SCROLLED_WINDOW(sc));
            GtkWidget *content = gtk_scrolled_window_get_child(GTK_SCROLLED_WINDOW(sc));
            int nat;
            gtk_widget_measure(content, GTK_ORIENTATION_HORIZONTAL, -1, NULL, &nat, NULL, NULL);
            g_test_message("  at %d px: the guesses %d px wide in a %.0f px view of %.0f", gtk_widget_get_width(w), nat,
                           gtk_adjustment_get_page_size(adj), gtk_adjustment_get_upper(adj));
            g_assert_cmpfloat(gtk_adjustment_get_upper(adj), >=, nat);
            gtk_window_set_default_size(GTK_WINDOW(win), SCREEN_W, SCREEN_H);
            settle(150);
        }
        text_size_done(win);
    }
}

static gboolean lesson_state_applied(gpointer data) {
    AtnWindow *win = data;
    AtnSession *s = atn_window_get_session(win);
    return !atn_window_is_applying_state(win) && !atn_session_get_busy(s) && !atn_session_get_opening(s) &&
           atn_session_get_result(s) != NULL;
}

/* A lesson shown (issue 40): demo-gpt2's lesson (03-decoder-heads) adds the lesson panel and,
 * on a causal model, two rows of next-word guesses above the views: at 1280x720 the window's
 * minimum height at the screen's width was 752 px (laid out 742 px tall, its surface 752 on a
 * 720 px screen).  At every step, with the answer hidden and revealed, in normal and
 * presentation mode (header brought back): that minimum is at most the screen's height and
 * the window is laid out on the screen.  (The natural height, ~1000 px, is the views' wish
 * for large maps with or without a lesson; the window is given the screen's size.) */
static void test_fit_lesson(void) {
    for (int pres = 0; pres < 2; pres++) {
        AtnWindow *win = text_size_window(SCREEN_W, SCREEN_H, 1.0);
        open_and_wait(win, "demo");
        g_autofree char *dir = atn_lesson_builtin_dir();
        g_autofree char *path = g_build_filename(dir, "03-decoder-heads.json", NULL);
        g_assert_true(atn_window_open_lesson(win, path));
        g_assert_true(wait_for(lesson_state_applied, win));
        if (pres) {
            atn_window_set_presentation(win, TRUE);
            settle(200);
            pointer_at(win, 600, 2);
            g_assert_true(atn_window_get_view_switcher_shown(win));
        }
        GtkWidget *w = GTK_WIDGET(win);
        for (int step = 0; step < 3; step++) {
            atn_window_lesson_go(win, step);
            g_assert_true(wait_for(lesson_state_applied, win));
            for (int rev = 0; rev < 2; rev++) {
                if (rev)
                    atn_window_lesson_reveal(win);
                settle(300);
                g_assert_true(gtk_widget_get_visible(atn_window_get_predictions(win)));
                int mh, nh;
                gtk_widget_measure(w, GTK_ORIENTATION_VERTICAL, SCREEN_W, &mh, &nh, NULL, NULL);
                GdkSurface *surf = gtk_native_get_surface(GTK_NATIVE(w));
                int sw = gdk_surface_get_width(surf), sh = gdk_surface_get_height(surf);
                g_test_message("lesson step %d%s%s: height at %d px minimum %d, natural %d; surface %dx%d", step + 1,
                               rev ? ", answer shown" : "", pres ? " (presentation)" : "", SCREEN_W, mh, nh, sw, sh);
                if (mh > SCREEN_H || sw > SCREEN_W || sh > SCREEN_H)
                    g_error("lesson step %d%s%s: the window's minimum height at %d px is %d px and it is laid out "
                            "%dx%d on a %dx%d screen", step + 1, rev ? " (answer shown)" : "",
                            pres ? " in presentation mode" : "", SCREEN_W, mh, sw, sh, SCREEN_W, SCREEN_H);
            }
        }
        if (pres)
            atn_window_set_presentation(win, FALSE);
        atn_window_close_lesson(win);
        text_size_done(win);
    }
}

static const char *const form_names[] = {"wide", "compact", "menu"};

/* The number of buttons of a GtkStackSwitcher (mapped or not). */
static int n_buttons(GtkWidget *sw) {
    int n = 0;
    for (GtkWidget *c = gtk_widget_get_first_child(sw); c; c = gtk_widget_get_next_sibling(c))
        n += GTK_IS_TOGGLE_BUTTON(c);
    return n;
}

/* The view switcher in a w x h window at Text size scale: the form it shows (the full row
 * whenever it fits: want_wide), every view reachable from it, nothing of the header bar
 * outside the window. */
static AtnViewSwitcherForm check_switcher(int w, int h, double scale, gboolean want_wide) {
    AtnWindow *win = text_size_window(w, h, scale);
    open_and_wait(win, "demo");
    settle(200);
    AtnViewSwitcher *sw = ATN_VIEW_SWITCHER(atn_window_get_view_switcher(win));
    AtnViewSwitcherForm form = atn_view_switcher_get_form(sw);
    GtkWidget *fw = atn_view_switcher_get_form_widget(sw, form);
    g_test_message("%dx%d at text size %.1f: the %s switcher, %d px of the header bar's %d", w, h, scale,
                   form_names[form], gtk_widget_get_width(fw), gtk_widget_get_width(atn_window_get_view_switcher(win)));
    g_assert_true(gtk_widget_get_mapped(fw));
    for (int f = 0; f < ATN_VIEW_SWITCHER_N_FORMS; f++)   /* one form at a time */
        g_assert_true(f == (int)form || !gtk_widget_get_mapped(atn_view_switcher_get_form_widget(sw, f)));
    if (want_wide)
        g_assert_cmpint(form, ==, ATN_VIEW_SWITCHER_WIDE);
    /* the form shown fits its allocation: nothing cut */
    int fmin;
    gtk_widget_measure(fw, GTK_ORIENTATION_HORIZONTAL, -1, &fmin, NULL, NULL, NULL);
    g_assert_cmpint(gtk_widget_get_width(fw), >=, fmin);
    graphene_rect_t b;
    g_assert_true(gtk_widget_compute_bounds(fw, GTK_WIDGET(win), &b));
    g_assert_cmpfloat(b.origin.x, >=, 0);
    g_assert_cmpfloat(b.origin.x + b.size.width, <=, gtk_widget_get_width(GTK_WIDGET(win)));
    /* every view from it: six buttons, or six menu items whose action shows the view */
    int n_views = (int)g_strv_length((char **)atn_window_get_view_names());
    if (form != ATN_VIEW_SWITCHER_MENU) {
        g_assert_cmpint(n_buttons(fw), ==, n_views);
    } else {
        GMenuModel *menu = gtk_menu_button_get_menu_model(GTK_MENU_BUTTON(fw));
        g_assert_cmpint(g_menu_model_get_n_items(menu), ==, n_views);
        for (int i = 0; i < n_views; i++) {
            g_autofree char *action = NULL, *target = NULL;
            g_assert_true(g_menu_model_get_item_attribute(menu, i, G_MENU_ATTRIBUTE_ACTION, "s", &action));
            g_assert_true(g_menu_model_get_item_attribute(menu, i, G_MENU_ATTRIBUTE_TARGET, "s", &target));
            g_assert_cmpstr(target, ==, atn_window_get_view_names()[i]);
            g_assert_true(gtk_widget_activate_action(fw, action, "s", target));
            g_assert_cmpstr(atn_window_get_view(win), ==, target);
            /* the button says which view is shown */
            const char *title = gtk_stack_page_get_title(
                gtk_stack_get_page(atn_view_switcher_get_stack(sw), atn_window_get_view_widget(win, target)));
            g_assert_cmpstr(gtk_menu_button_get_label(GTK_MENU_BUTTON(fw)), ==, title);
        }
    }
    text_size_done(win);
    return form;
}

/* A row of buttons on the screen with normal text: the full row at 1920, at 1280 the full or
 * the compact one (seven views since the Train page: the full row needs more than the 803 px
 * the header bar leaves it); the full row with Text size 2.0 at 1920; a narrower form where
 * the row does not fit (a 700 px window, Text size 2.0 at 1280), which still reaches every
 * view. */
static void test_fit_switcher(void) {
    g_assert_cmpint(check_switcher(SCREEN_W, SCREEN_H, 1.0, SCREEN_W >= 1920), !=, ATN_VIEW_SWITCHER_MENU);
    check_switcher(SCREEN_W, SCREEN_H, 2.0, SCREEN_W >= 1920);
    g_assert_cmpint(check_switcher(700, 600, 1.0, FALSE), !=, ATN_VIEW_SWITCHER_WIDE);
    g_assert_cmpint(check_switcher(700, 600, 2.0, FALSE), ==, ATN_VIEW_SWITCHER_MENU);
}

static void test_fit_normal(void) { check_views(1.0, FALSE, 1280, 720); }
static void test_fit_large_text(void) { check_views(2.0, FALSE, 1280, 720); }
static void test_fit_presentation(void) { check_views(1.0, TRUE, 1280, 720); }
/* Presentation mode at Text size 2.0 is 3.2 times the normal text: the header bar's and the
 * views' controls then need more than 1280 px (1337 px in English, the Similarity view's bar
 * on three lines would be next); the honest bound is a 1366x768 screen. */
static void test_fit_presentation_large(void) { check_views(2.0, TRUE, 1366, 768); }

int main(int argc, char **argv) {
    if (!ui_test_init(&argc, &argv))
        return 0;
    atn_prefs_keep_in_memory(atn_prefs_get_default());
    GListModel *monitors = gdk_display_get_monitors(gdk_display_get_default());
    g_autoptr(GdkMonitor) mon = g_list_model_get_item(monitors, 0);
    GdkRectangle geo;
    gdk_monitor_get_geometry(mon, &geo);
    SCREEN_W = geo.width, SCREEN_H = geo.height;
    g_test_message("screen %dx%d", SCREEN_W, SCREEN_H);
    g_test_add_func("/ui/fit/normal", test_fit_normal);
    g_test_add_func("/ui/fit/large-text", test_fit_large_text);
    g_test_add_func("/ui/fit/presentation", test_fit_presentation);
    g_test_add_func("/ui/fit/presentation-large-text", test_fit_presentation_large);
    g_test_add_func("/ui/fit/switcher", test_fit_switcher);
    g_test_add_func("/ui/fit/mask", test_fit_mask);
    g_test_add_func("/ui/fit/lesson", test_fit_lesson);
    return g_test_run();
}
