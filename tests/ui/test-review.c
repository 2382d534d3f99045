/* The window's defects a new user's review found (issue 40), each as a person meets it, in a
 * real window under Xvfb: presentation mode keeps a way to the header bar (a pick at the top
 * of the screen finds the view switcher), an export's typed extension decides its format and
 * replacing a file asks, banners never cover a view's controls.
 *
 * Run with --tap (meson does).  Without a display it reports "1..0 # SKIP no display". */
#include "ui-test-util.h"

#include "atn-export.h"
#include "atn-labels.h"
#include "atn-whatif.h"

/* The widget a pointer at window coordinates (x, y) would reach. */
static GtkWidget *picked(AtnWindow *win, double x, double y) {
    return gtk_widget_pick(GTK_WIDGET(win), x, y, GTK_PICK_INSENSITIVE);   /* a greyed-out control is still there */
}

static gboolean is_fullscreen(gpointer data) { return gtk_window_is_fullscreen(GTK_WINDOW(data)); }

/* Presentation mode: GTK hides a fullscreen window's titlebar, so the header bar must live
 * elsewhere.  With the pointer at the top of the screen, what is at the top edge above the
 * middle is the view switcher, and the model button, the export and the main menu are there
 * too, mapped, where the pointer reaches them; leaving puts the header back. */
static void test_presentation_header_reachable(void) {
    atn_prefs_set_font_scale(atn_prefs_get_default(), 1.0);
    AtnWindow *win = g_object_new(ATN_TYPE_WINDOW, "default-width", 1200, "default-height", 780, NULL);
    /* before it is shown: without a window manager (Xvfb) GDK makes the window fullscreen
       itself, as a window manager would */
    atn_window_set_presentation(win, TRUE);
    gtk_window_present(GTK_WINDOW(win));
    open_and_wait(win, "worked-example");
    g_assert_true(wait_for(is_fullscreen, win));
    settle(200);
    int w = gtk_widget_get_width(GTK_WIDGET(win));
    /* the one-time hint is shown, and covers nothing of the figure (it hid the key axis) */
    GtkWidget *hint = atn_window_get_presentation_hint(win);
    g_assert_true(gtk_revealer_get_child_revealed(GTK_REVEALER(hint)));
    graphene_rect_t hb, fb;
    g_assert_true(gtk_widget_compute_bounds(hint, GTK_WIDGET(win), &hb));
    g_assert_true(gtk_widget_compute_bounds(GTK_WIDGET(head_heatmap(win)), GTK_WIDGET(win), &fb));
    g_assert_cmpfloat(hb.size.height, >, 0);
    if (graphene_rect_intersection(&hb, &fb, NULL))
        g_error("the hint (y %.0f..%.0f) lies over the figure (y %.0f..%.0f)", hb.origin.y,
                hb.origin.y + hb.size.height, fb.origin.y, fb.origin.y + fb.size.height);
    g_assert_false(atn_window_get_view_switcher_shown(win));
    pointer_at(win, w / 2.0, 2);   /* the top of the screen */
    settle(300);
    g_assert_true(atn_window_get_view_switcher_shown(win));
    GtkWidget *sw = atn_window_get_view_switcher(win);
    GtkWidget *top = picked(win, w / 2.0, 4);
    g_assert_nonnull(top);
    if (top != sw && !gtk_widget_is_ancestor(top, sw))
        g_error("at the top of the screen the pointer finds a %s, not the view switcher", G_OBJECT_TYPE_NAME(top));
    /* every button of the header bar is where a pointer reaches it */
    GtkWidget *header = gtk_widget_get_ancestor(sw, GTK_TYPE_HEADER_BAR);
    g_assert_nonnull(header);
    int buttons = 0;
    for (GtkWidget *c = gtk_widget_get_first_child(header); c;) {
        if (GTK_IS_MENU_BUTTON(c) && gtk_widget_is_visible(c)) {
            graphene_rect_t b;
            g_assert_true(gtk_widget_get_mapped(c));
            g_assert_true(gtk_widget_compute_bounds(c, GTK_WIDGET(win), &b));
            GtkWidget *p = picked(win, b.origin.x + b.size.width / 2, b.origin.y + b.size.height / 2);
            g_assert_true(p == c || gtk_widget_is_ancestor(p, c));
            buttons++;
        }
        /* depth first through the header bar's boxes */
        if (gtk_widget_get_first_child(c) && !GTK_IS_MENU_BUTTON(c) && c != sw)   /* the switcher's own aside */
            c = gtk_widget_get_first_child(c);
        else {
            while (c && c != header && !gtk_widget_get_next_sibling(c))
                c = gtk_widget_get_parent(c);
            c = c && c != header ? gtk_widget_get_next_sibling(c) : NULL;
        }
    }
    g_assert_cmpint(buttons, ==, 3);   /* the model, export and main menu */
    atn_window_set_presentation(win, FALSE);
    settle(200);
    g_assert_true(GTK_WIDGET(gtk_window_get_titlebar(GTK_WINDOW(win))) == gtk_widget_get_parent(header));
    destroy_window(win);
}

static gboolean export_finished(gpointer data) { return !atn_window_get_exporting(data); }

static gboolean is_control(GtkWidget *c) {
    return GTK_IS_BUTTON(c) || GTK_IS_SPIN_BUTTON(c) || GTK_IS_DROP_DOWN(c) || GTK_IS_CHECK_BUTTON(c) ||
           GTK_IS_MENU_BUTTON(c) || GTK_IS_ENTRY(c);
}

/* Whether the middle of bounds b (window coordinates) is scrolled out of the view of c's
 * nearest scrolled window: a control there is reached by scrolling, not covered. */
static gboolean scrolled_away(AtnWindow *win, GtkWidget *c, const graphene_rect_t *b) {
    GtkWidget *sw = gtk_widget_get_ancestor(c, GTK_TYPE_SCROLLED_WINDOW);
    graphene_rect_t v;
    if (!sw || !gtk_widget_compute_bounds(sw, GTK_WIDGET(win), &v))
        return FALSE;
    graphene_point_t mid = GRAPHENE_POINT_INIT(b->origin.x + b->size.width / 2, b->origin.y + b->size.height / 2);
    return !graphene_rect_contains_point(&v, &mid);
}

/* Each mapped control under w whose middle the pointer does not reach (unless it is scrolled
 * out of view): appended to bad. */
static void covered_controls(AtnWindow *win, GtkWidget *w, GString *bad) {
    for (GtkWidget *c = gtk_widget_get_first_child(w); c; c = gtk_widget_get_next_sibling(c)) {
        if (!gtk_widget_get_mapped(c))
            continue;
        if (is_control(c)) {
            graphene_rect_t b;
            if (gtk_widget_compute_bounds(c, GTK_WIDGET(win), &b) && b.size.width > 0 && b.size.height > 0 &&
                !scrolled_away(win, c, &b)) {
                GtkWidget *p = picked(win, b.origin.x + b.size.width / 2, b.origin.y + b.size.height / 2);
                if (p && p != c && !gtk_widget_is_ancestor(p, c))
                    g_string_append_printf(bad, " %s “%s” at (%.0f, %.0f) under a %s in a %s (css %s)",
                                           G_OBJECT_TYPE_NAME(c),
                                           GTK_IS_BUTTON(c) && gtk_button_get_label(GTK_BUTTON(c))
                                               ? gtk_button_get_label(GTK_BUTTON(c)) : gtk_widget_get_name(c),
                                           b.origin.x, b.origin.y, G_OBJECT_TYPE_NAME(p),
                                           G_OBJECT_TYPE_NAME(gtk_widget_get_parent(p)),
                                           gtk_widget_get_css_classes(p)[0] ? gtk_widget_get_css_classes(p)[0] : "");
            }
            continue;
        }
        covered_controls(win, c, bad);
    }
}

/* A long notice ("Wrote 8 figures to <a long folder>") and an error: every control of every
 * view stays where the pointer reaches it. */
static void test_banners_cover_nothing(void) {
    g_autofree char *base = g_dir_make_tmp("atn-banner-XXXXXX", NULL);
    g_autofree char *dir = g_build_filename(base, "a-folder-with-a-long-name-for-the-figures-of-every-head",
                                            "of-the-model-for-the-lesson-on-tuesday", NULL);
    g_assert_cmpint(g_mkdir_with_parents(dir, 0700), ==, 0);
    AtnWindow *win = new_window();
    open_and_wait(win, f32_model);
    type_and_wait(win, "the cat sat on the mat");
    atn_window_export_all_heads_to(win, dir, "png", 1.0);
    g_assert_true(wait_for(export_finished, win));
    g_assert_nonnull(atn_window_get_notice(win));
    g_assert_nonnull(strstr(atn_window_get_notice(win), "Wrote 8 figures"));
    settle(300);
    const char *const *names = atn_window_get_view_names();
    for (int i = 0; names[i]; i++) {
        show_view(win, names[i]);
        settle(200);
        g_autoptr(GString) bad = g_string_new(NULL);
        covered_controls(win, atn_window_get_view_widget(win, names[i]), bad);
        if (bad->len)
            g_error("with a notice shown, the %s view has controls covered:%s", names[i], bad->str);
    }
    destroy_window(win);
    g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
    const char *name;
    while (d && (name = g_dir_read_name(d))) {
        g_autofree char *f = g_build_filename(dir, name, NULL);
        g_unlink(f);
    }
    g_rmdir(dir);
    g_autofree char *mid = g_path_get_dirname(dir);
    g_rmdir(mid);
    g_rmdir(base);
}

/* ---- export: the typed extension, replacing ---- */

static gboolean chooser_shown(gpointer data) {
    GListModel *tops = gtk_window_get_toplevels();
    for (guint i = 0; i < g_list_model_get_n_items(tops); i++) {
        g_autoptr(GObject) w = g_list_model_get_item(tops, i);
        if (GTK_IS_FILE_CHOOSER(w) && gtk_widget_get_visible(GTK_WIDGET(w))) {
            *(GtkWidget **)data = GTK_WIDGET(w);
            return TRUE;
        }
    }
    return FALSE;
}

static void select_choice(GtkWidget *w, const char *label) {
    if (GTK_IS_DROP_DOWN(w)) {
        GListModel *m = gtk_drop_down_get_model(GTK_DROP_DOWN(w));
        for (guint i = 0; m && i < g_list_model_get_n_items(m); i++) {
            g_autoptr(GObject) it = g_list_model_get_item(m, i);
            if (GTK_IS_STRING_OBJECT(it) && !strcmp(gtk_string_object_get_string(GTK_STRING_OBJECT(it)), label))
                gtk_drop_down_set_selected(GTK_DROP_DOWN(w), i);
        }
        return;
    }
    for (GtkWidget *c = gtk_widget_get_first_child(w); c; c = gtk_widget_get_next_sibling(c))
        select_choice(c, label);
}

/* Export… with name typed into dir and the Format drop-down at format_label, accepted. */
static void export_typed(AtnWindow *win, const char *dir, const char *name, const char *format_label) {
    g_assert_true(gtk_widget_activate_action(GTK_WIDGET(win), "win.export", NULL));
    GtkWidget *d = NULL;
    g_assert_true(wait_for(chooser_shown, &d));
    settle(50);
    select_choice(d, format_label);
    g_autoptr(GFile) folder = g_file_new_for_path(dir);
    g_assert_true(gtk_file_chooser_set_current_folder(GTK_FILE_CHOOSER(d), folder, NULL));
    gtk_file_chooser_set_current_name(GTK_FILE_CHOOSER(d), name);
    settle(50);
    gtk_dialog_response(GTK_DIALOG(d), GTK_RESPONSE_ACCEPT);
}

typedef struct saved_wait {
    AtnWindow *win;
    const char *path;
} saved_wait;

static gboolean file_saved(gpointer data) {
    saved_wait *w = data;
    const char *st = atn_window_get_status(w->win);
    return st && strstr(st, w->path) != NULL;
}

static gboolean question_shown(gpointer data) { return atn_export_get_replace_question() != NULL; }

static char *contents(const char *path) {
    char *data = NULL;
    g_assert_true(g_file_get_contents(path, &data, NULL, NULL));
    return data;
}

/* head.svg typed with Format at PNG writes an SVG named head.svg (nothing else); "plain" with
 * SVG where plain.svg exists asks first: Cancel keeps the file, Replace writes it. */
static void test_export_typed_extension(void) {
    g_autofree char *dir = g_dir_make_tmp("atn-ext-XXXXXX", NULL);
    AtnWindow *win = new_window();
    open_and_wait(win, "worked-example");
    show_view(win, "head");
    export_typed(win, dir, "head.svg", "PNG image");
    g_autofree char *svg = g_build_filename(dir, "head.svg", NULL);
    g_autofree char *png = g_build_filename(dir, "head.png", NULL);
    saved_wait sw = {win, svg};
    g_assert_true(wait_for(file_saved, &sw));
    g_autofree char *s = contents(svg);
    g_assert_true(g_str_has_prefix(s, "<?xml"));
    g_assert_false(g_file_test(png, G_FILE_TEST_EXISTS));
    /* the pure rule */
    g_autofree char *a = atn_export_figure_path("/x/head.PDF", "png");
    g_autofree char *b = atn_export_figure_path("/x/head", "svg");
    g_autofree char *c = atn_export_figure_path("/x/head.jpg", "pdf");
    g_assert_cmpstr(a, ==, "/x/head.PDF");
    g_assert_cmpstr(b, ==, "/x/head.svg");
    g_assert_cmpstr(c, ==, "/x/head.jpg.pdf");

    /* plain → plain.svg, which exists: asked; Cancel keeps it as it was */
    g_autofree char *plain = g_build_filename(dir, "plain.svg", NULL);
    g_assert_true(g_file_set_contents(plain, "keep me", -1, NULL));
    export_typed(win, dir, "plain", "SVG drawing");
    g_assert_true(wait_for(question_shown, NULL));
    GtkWidget *q = atn_export_get_replace_question();
    g_assert_true(gtk_widget_get_visible(q));
    g_clear_pointer(&s, g_free);   /* the SVG read above */
    g_object_get(q, "text", &s, NULL);
    g_test_message("asked: %s", s);
    g_assert_nonnull(strstr(s, "plain.svg"));
    g_clear_pointer(&s, g_free);
    gtk_dialog_response(GTK_DIALOG(q), GTK_RESPONSE_CANCEL);
    settle(300);
    g_assert_null(atn_export_get_replace_question());
    s = contents(plain);
    g_assert_cmpstr(s, ==, "keep me");
    g_clear_pointer(&s, g_free);
    /* again, Replace: written */
    export_typed(win, dir, "plain", "SVG drawing");
    g_assert_true(wait_for(question_shown, NULL));
    gtk_dialog_response(GTK_DIALOG(atn_export_get_replace_question()), GTK_RESPONSE_ACCEPT);
    sw.path = plain;
    g_assert_true(wait_for(file_saved, &sw));
    s = contents(plain);
    g_assert_true(g_str_has_prefix(s, "<?xml"));
    destroy_window(win);
    g_unlink(svg);
    g_unlink(plain);
    g_rmdir(dir);
}


/* ---- GPT-2's byte-level pieces as surface text ---- */

static gboolean has_raw_piece(const char *s) { return s && strstr(s, "\u0120") != NULL; }

/* Each mapped GtkToggleButton label under w, joined by " | ". */
static void toggle_labels(GtkWidget *w, GString *out) {
    for (GtkWidget *c = gtk_widget_get_first_child(w); c; c = gtk_widget_get_next_sibling(c)) {
        if (GTK_IS_TOGGLE_BUTTON(c) && gtk_button_get_label(GTK_BUTTON(c)))
            g_string_append_printf(out, "%s | ", gtk_button_get_label(GTK_BUTTON(c)));
        toggle_labels(c, out);
    }
}

/* demo-gpt2 reads "This License applies to the License" as byte-level pieces ("\u0120License"): the
 * Head view's hover, the Trace's tables and Markdown, the guesses and the What-if chips all
 * say "␣License" (the chips' mark for the leading space), never "\u0120License". */
static void test_gpt2_surface_tokens(void) {
    AtnWindow *win = new_window();
    open_and_wait(win, "demo-gpt2");
    type_and_wait(win, "This License applies to the License");
    AtnSession *s = atn_window_get_session(win);
    AtnResult *r = atn_session_get_result(s);
    const atn_encoding *enc = atn_result_get_encoding(r);
    int j = -1;
    for (int i = 0; i < enc->n && j < 0; i++)
        if (!strcmp(enc->tokens[i].text, "\u0120License"))
            j = i;
    g_assert_cmpint(j, >, 0);   /* the raw piece, as the tokenizer gives it */
    const char *want = "\u2423License";
    g_assert_cmpstr(atn_result_get_tokens(r)[j], ==, want);

    show_view(win, "head");
    atn_session_select_head(s, 0, 0);
    settle(200);
    AtnHeatmap *hm = head_heatmap(win);
    graphene_rect_t rc;
    g_assert_true(atn_heatmap_get_cell_rect(hm, j, 0, &rc));
    g_autofree char *hover = atn_heatmap_hover(hm, rc.origin.x + rc.size.width / 2, rc.origin.y + rc.size.height / 2);
    g_test_message("hover: %s", hover);
    g_assert_nonnull(strstr(hover, want));
    g_assert_false(has_raw_piece(hover));

    AtnTraceView *tv = show_trace(win, 0, 0, j);
    for (int st = 0; st < ATN_TRACE_STEP_COUNT; st++) {
        g_autofree char *text = atn_trace_view_dup_step_text(tv, st);
        if (has_raw_piece(text))
            g_error("trace step %d shows a raw piece: %s", st + 1, text);
    }
    g_autofree char *keys = atn_trace_view_dup_step_text(tv, ATN_TRACE_STEP_KEYS);
    g_assert_nonnull(strstr(keys, want));
    g_autofree char *md = atn_trace_view_dup_markdown(tv, NULL);
    g_assert_nonnull(strstr(md, want));
    g_assert_false(has_raw_piece(md));

    g_autofree char *guesses = atn_predictions_dup_text(ATN_PREDICTIONS(atn_window_get_predictions(win)));
    g_test_message("guesses: %s", guesses);
    g_assert_nonnull(strstr(guesses, "\u2423"));
    g_assert_false(has_raw_piece(guesses));

    show_view(win, "whatif");
    settle(300);
    GtkWidget *chips = atn_whatif_view_get_control(ATN_WHATIF_VIEW(atn_window_get_view_widget(win, "whatif")),
                                                   "hide-chips");
    g_autoptr(GString) labels = g_string_new(NULL);
    toggle_labels(chips, labels);
    g_assert_nonnull(strstr(labels->str, want));
    g_assert_false(has_raw_piece(labels->str));
    destroy_window(win);
}


/* ---- the what-if state, visible in every view ---- */

static gboolean whatif_done(gpointer data) {
    return !atn_whatif_view_get_busy(data) && atn_whatif_view_get_diff(data) != NULL;
}

/* Head 1 of layer 0 switched off in the what-if lab: every view but the What-if page (which says
 * it at length) has the badge above it (mapped,
 * where the pointer reaches it) naming the change; the Head view's line says "switched off
 * (what-if)", not the pattern of a head that no longer runs, and its title (on screen and in
 * exports) names the change; Restore the Original brings the original model back and the badge
 * goes. */
static void test_whatif_visible(void) {
    AtnWindow *win = new_window();
    open_and_wait(win, f32_model);
    type_and_wait(win, "the cat sat on the mat");
    AtnSession *s = atn_window_get_session(win);
    show_view(win, "head");
    atn_session_select_head(s, 0, 1);
    settle(200);
    AtnHeadView *hv = ATN_HEAD_VIEW(atn_window_get_view_widget(win, "head"));
    g_assert_null(atn_window_get_whatif_badge(win));
    g_assert_null(strstr(atn_head_view_get_summary(hv), "what-if"));

    model_wait w = {win, NULL, atn_session_get_n_runs(s)};
    g_autoptr(AtnWhatif) off = atn_whatif_change_head(NULL, 2, 4, 0, 1, ATN_WHATIF_SWITCH_OFF);
    atn_session_set_whatif(s, off);
    g_assert_true(wait_for(idle_with_result, &w));
    settle(300);
    const char *badge = atn_window_get_whatif_badge(win);
    g_assert_nonnull(badge);
    g_test_message("badge: %s", badge);
    g_assert_nonnull(strstr(badge, "1 head switched off"));
    GtkWidget *restore = atn_window_get_whatif_restore_button(win);
    const char *const *names = atn_window_get_view_names();
    for (int i = 0; names[i]; i++) {
        show_view(win, names[i]);
        settle(100);
        if (!strcmp(names[i], "whatif")) {   /* the page says it at length, with its own Reset */
            g_assert_null(atn_window_get_whatif_badge(win));
            continue;
        }
        g_assert_true(gtk_widget_get_mapped(restore));
        graphene_rect_t b;
        g_assert_true(gtk_widget_compute_bounds(restore, GTK_WIDGET(win), &b));
        GtkWidget *p = picked(win, b.origin.x + b.size.width / 2, b.origin.y + b.size.height / 2);
        if (p != restore && !gtk_widget_is_ancestor(p, restore))
            g_error("in the %s view the Restore button is under a %s", names[i], G_OBJECT_TYPE_NAME(p));
    }
    show_view(win, "head");
    settle(200);
    g_test_message("summary: %s", atn_head_view_get_summary(hv));
    g_assert_nonnull(strstr(atn_head_view_get_summary(hv), "switched off (what-if)"));
    const char *title = atn_heatmap_get_title(head_heatmap(win));
    g_test_message("title: %s", title);
    g_assert_nonnull(strstr(title, "what-if: 1 head switched off"));
    /* the What-if page's difference map says its colours are differences */
    show_view(win, "whatif");
    AtnWhatifView *wv = ATN_WHATIF_VIEW(atn_window_get_view_widget(win, "whatif"));
    g_assert_true(wait_for(whatif_done, wv));
    settle(200);
    g_assert_cmpstr(atn_heatmap_get_colorbar_label(atn_whatif_view_get_pair(wv, 2)), ==, "Δ weight");
    g_assert_cmpstr(atn_heatmap_get_colorbar_label(atn_whatif_view_get_pair(wv, 0)), ==, "weight");
    show_view(win, "head");
    /* another head still shows its pattern */
    atn_session_select_head(s, 0, 2);
    settle(200);
    g_assert_null(strstr(atn_head_view_get_summary(hv), "what-if"));

    w.runs = atn_session_get_n_runs(s);
    gtk_widget_activate(restore);
    g_assert_true(wait_for(idle_with_result, &w));
    settle(200);
    g_assert_null(atn_session_get_whatif(s));
    g_assert_null(atn_window_get_whatif_badge(win));
    g_assert_null(strstr(atn_heatmap_get_title(head_heatmap(win)), "what-if"));
    destroy_window(win);
}

/* ---- demo-gpt2's induction example ---- */

static gboolean model_is(gpointer data) {
    model_wait *w = data;
    AtnSession *s = atn_window_get_session(w->win);
    AtnResult *r = atn_session_get_result(s);
    return r && !atn_session_get_busy(s) && !g_strcmp0(atn_model_handle_get_name(atn_result_get_model(r)), w->name) &&
           atn_result_get_stats(r) != NULL;
}

/* The Examples menu's last line (data/examples.txt: "{demo-gpt2}  the and you …") opens
 * demo-gpt2 with the sentence, space first, so " the" stays one token; the Head view then
 * labels layer 1 head 1 "induction" with the share the statistics measured, and the pattern
 * legend explains the name. */
static void test_induction_example(void) {
    g_autofree char *path = g_build_filename(g_getenv("ATN_SOURCE_ROOT"), "data", "examples.txt", NULL);
    g_autofree char *all = NULL;
    g_assert_true(g_file_get_contents(path, &all, NULL, NULL));
    g_auto(GStrv) lines = g_strsplit(all, "\n", -1);
    int last = -1;
    for (int i = 0, k = 0; lines[i]; i++) {
        g_strstrip(lines[i]);
        if (*lines[i] && *lines[i] != '#')
            last = k++;
    }
    g_assert_true(g_str_has_prefix(lines[g_strv_length(lines) - 2], "{demo-gpt2}"));
    AtnWindow *win = new_window();
    open_and_wait(win, f32_model);
    show_view(win, "head");
    g_assert_true(gtk_widget_activate_action(GTK_WIDGET(win), "win.example", "i", last));
    model_wait w = {win, "demo-gpt2", 0};
    AtnSession *s = atn_window_get_session(win);
    if (!wait_for(model_is, &w)) {
        AtnResult *now = atn_session_get_result(s);
        g_error("the example did not open demo-gpt2 with its sentence: model %s, text “%s”, %s; error %s",
                now ? atn_model_handle_get_name(atn_result_get_model(now)) : "(none)", atn_session_get_text(s),
                now && atn_result_get_stats(now) ? "statistics" : "no statistics", atn_window_get_error(w.win));
    }
    AtnResult *r = atn_session_get_result(s);
    g_assert_true(g_str_has_prefix(atn_session_get_text(s), " the and you"));
    const atn_encoding *enc = atn_result_get_encoding(r);
    g_assert_cmpstr(enc->tokens[0].text, ==, "\u0120the");   /* one token, not t + he */
    const atn_stats *st = atn_result_get_stats(r);
    const atn_head_stats *h = &st->heads[1 * st->n_heads + 1];
    g_assert_cmpint(h->pattern, ==, ATN_PATTERN_INDUCTION);
    g_assert_cmpfloat(h->induction, >, 0.8);
    atn_session_select_head(s, 1, 1);
    settle(200);
    const char *summary = atn_head_view_get_summary(ATN_HEAD_VIEW(atn_window_get_view_widget(win, "head")));
    g_test_message("summary: %s", summary);
    g_autofree char *want = g_strdup_printf("induction: %.0f%% to the token after the earlier copy", 100 * h->induction);
    g_assert_nonnull(strstr(summary, want));
    g_autofree char *legend = atn_label_pattern_legend();
    g_assert_nonnull(strstr(legend, "• induction — "));
    destroy_window(win);
}

/* ---- the smaller items ---- */

/* Export Every Head draws each head on one 0..1 scale, as `attnscope export --all-heads`
 * does: the window's file of layer 1 head 3 and the command line's are the same picture. */
static void test_every_head_scale_matches_cli(void) {
    g_autofree char *dir = g_dir_make_tmp("atn-heads-XXXXXX", NULL);
    g_autofree char *gui = g_build_filename(dir, "gui", NULL);
    g_autofree char *cli = g_build_filename(dir, "cli", NULL);
    g_assert_cmpint(g_mkdir(gui, 0700), ==, 0);
    AtnWindow *win = new_window();
    open_and_wait(win, f32_model);
    type_and_wait(win, "the cat sat on the mat");
    show_view(win, "head");
    atn_window_export_all_heads_to(win, gui, "png", 1.0);
    g_assert_true(wait_for(export_finished, win));
    destroy_window(win);
    g_autofree char *cli_dir = g_strconcat(cli, "/", NULL);
    const char *args[] = {"export", "heatmap", "--model", f32_model, "--text", "the cat sat on the mat", "--all-heads",
                          NULL};
    cli_export(args, cli_dir);
    for (int c = 0; c < 8; c++) {
        g_autofree char *name = g_strdup_printf("heatmap-L%02d-H%02d.png", c / 4, c % 4);
        g_autofree char *a = g_build_filename(gui, name, NULL), *b = g_build_filename(cli, name, NULL);
        g_autofree char *da = NULL, *db = NULL;
        gsize la = 0, lb = 0;
        g_assert_true(g_file_get_contents(a, &da, &la, NULL));
        g_assert_true(g_file_get_contents(b, &db, &lb, NULL));
        if (la != lb || memcmp(da, db, la))
            g_error("%s differs between Export Every Head (%zu bytes) and --all-heads (%zu bytes)", name, la, lb);
        g_unlink(a);
        g_unlink(b);
    }
    g_rmdir(gui);
    g_rmdir(cli);
    g_rmdir(dir);
}

/* Ctrl+? lists the seven views under Alt+1…7 (it said 1…5, without What-if), and --help-all
 * names whatif among the --view values. */
static void test_keys_and_help_name_every_view(void) {
    g_autoptr(GtkBuilder) b = gtk_builder_new_from_resource("/io/github/attnscope/Attnscope/gtk/help-overlay.ui");
    g_autoptr(GSList) objects = gtk_builder_get_objects(b);
    gboolean seen = FALSE;
    for (GSList *o = objects; o; o = o->next) {
        if (!GTK_IS_SHORTCUTS_SHORTCUT(o->data))
            continue;
        g_autofree char *title = NULL, *accel = NULL;
        g_object_get(o->data, "title", &title, "accelerator", &accel, NULL);
        if (!title || !g_str_has_prefix(title, "Head, Model"))
            continue;
        seen = TRUE;
        g_assert_cmpstr(accel, ==, "<Alt>1...7");
        g_assert_nonnull(strstr(title, "What-if"));
    }
    g_assert_true(seen);
    gtk_window_destroy(GTK_WINDOW(gtk_builder_get_object(b, "help_overlay")));
    g_autofree char *exe = g_build_filename(g_getenv("ATN_BUILD_ROOT"), "app", "attnscope", NULL);
    const char *argv[] = {exe, "--help-all", NULL};
    g_autofree char *out = NULL;
    int status = 0;
    g_assert_true(g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL, &out, NULL, &status,
                               NULL));
    const char *view = strstr(out, "--view");
    g_assert_nonnull(view);
    const char *eol = strchr(view, '\n');
    g_autofree char *line = g_strndup(view, eol ? (gsize)(eol - view) : strlen(view));
    g_test_message("%s", line);
    for (const char *const *n = atn_window_get_view_names(); *n; n++)
        g_assert_nonnull(strstr(line, *n));
}

int main(int argc, char **argv) {
    if (!ui_test_init(&argc, &argv))
        return 0;
    atn_prefs_keep_in_memory(atn_prefs_get_default());
    g_test_add_func("/ui/review/presentation-header-reachable", test_presentation_header_reachable);
    g_test_add_func("/ui/review/banners-cover-nothing", test_banners_cover_nothing);
    g_test_add_func("/ui/review/export-typed-extension", test_export_typed_extension);
    g_test_add_func("/ui/review/gpt2-surface-tokens", test_gpt2_surface_tokens);
    g_test_add_func("/ui/review/whatif-visible", test_whatif_visible);
    g_test_add_func("/ui/review/induction-example", test_induction_example);
    g_test_add_func("/ui/review/keys-and-help-name-every-view", test_keys_and_help_name_every_view);
    g_test_add_func("/ui/review/every-head-scale-matches-cli", test_every_head_scale_matches_cli);
    return g_test_run();
}
