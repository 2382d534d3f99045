/* shoot: the window at a given size with a model, a sentence and a view, after some actions,
 * saved as a PNG (the window's own drawing, no window manager needed).  For the screenshots
 * in data/screenshots/ (data/screenshots/take-long.sh); not a test.
 *
 *   shoot OUT.png WIDTH HEIGHT MODEL TEXT-FILE VIEW [ACTION...]
 * MODEL random:SHAPE[#POSITIONS]: TEXT-FILE is a number of token ids instead.
 * ACTIONS: colour-scale=0|1|2 (linear, log, rank) drop-first span=A-B layer=L head=H query=Q zoom=F pan=R,C one-query fixed hover=R,C lines-hover=SIDE,T
 *          axis-drag=r|c,F0,F1[,end] (a drag along the rows' or columns' axis from F0 to F1 of the
 *          cells, held, or released with ",end")
 *          all-lines present pointer-top (the pointer at the top of the screen) font-scale=F step=S (the Trace view's step) reveal (its reveal
 *          mode) trace-end (scroll the trace sheet to the bottom) all-keys (its "Show all n keys"); words (the Head view's "Words"); the what-if lab: off=L,H
 *          uniform=L,H keep=L,H (the Model view's head menu items) menu (that menu for the
 *          selected head) view=NAME whatif-control=NAME:VALUE (a What-if page control)
 *          whatif-scroll=PX (its controls scrolled down) attention=PATH (an attention file
 *          opened in place of the model) stats=PATH (a merged statistics file in the Statistics
 *          view) stats-head=L,H stats-colour=S (its grid's head and statistic) example=I (that
 *          example clicked)
 *          train-control=NAME:VALUE (a Train page knob) train-run (Start, then wait until it ends)
 *          get-model (the Get a Model dialog) model-menu (the model picker's menu)
 *          target=TEXT (an encoder-decoder's target) stack=KIND (encoder, decoder or cross)
 *          pair=A,B (the Similarity view's heads A and B side by side; with kv-group: groups A and B)
 *          kv-group ("By K/V group" in the Similarity and Statistics views)
 *          root=PATH (the whole X screen, popovers included, by ImageMagick's import)
 *          method=N (the Head view's Raw/Norm/Rollout/Flow switch: 0..3; waits for it)
 *          method-running=N (the same, drawn 1.5 s later while it may still compute: progress, Stop)
 *          lesson=PATH lesson-step=N lesson-reveal (a lesson opened, at step N, its answer shown) */
#include "ui-test-util.h"

#include "atn-encdec-widgets.h"
#include "atn-stats-file.h"
#include "atn-whatif-view.h"
#include "atn-head-methods.h"

#include "atn-token-lines.h"
#include "atn-head-view-scale.h"

/* The menu button under w whose menu is menu (the model picker's), or NULL. */
static GtkMenuButton *find_menu_button(GtkWidget *w, GMenuModel *menu) {
    if (GTK_IS_MENU_BUTTON(w) && gtk_menu_button_get_menu_model(GTK_MENU_BUTTON(w)) == menu)
        return GTK_MENU_BUTTON(w);
    for (GtkWidget *c = gtk_widget_get_first_child(w); c; c = gtk_widget_get_next_sibling(c)) {
        GtkMenuButton *b = find_menu_button(c, menu);
        if (b)
            return b;
    }
    return NULL;
}

int main(int argc, char **argv) {
    if (argc < 7) {
        fprintf(stderr, "usage: shoot OUT.png WIDTH HEIGHT MODEL TEXT-FILE VIEW [ACTION...]\n");
        return 2;
    }
    int targc = 1;
    char *targv0[] = {argv[0], NULL};
    char **targv = targv0;
    if (!ui_test_init(&targc, &targv))
        return 1;
    atn_prefs_keep_in_memory(atn_prefs_get_default());
    g_autofree char *text = NULL;
    gboolean random = g_str_has_prefix(argv[4], "random:");   /* TEXT-FILE is then a number of token ids */
    if (!random && !g_file_get_contents(argv[5], &text, NULL, NULL))
        return 1;
    if (text)
        g_strstrip(text);
    AtnWindow *win = g_object_new(ATN_TYPE_WINDOW, "default-width", atoi(argv[2]), "default-height", atoi(argv[3]),
                                  NULL);
    gtk_window_present(GTK_WINDOW(win));
    if (random) {   /* random:SHAPE[#N] with N ids, as the window's --gui-bench gives them */
        int n = atoi(argv[5]);
        atn_error err = {0};
        atn_model *m = atn_model_open(argv[4], NULL, NULL, &err);
        if (!m || n < 2) {
            fprintf(stderr, "shoot: %s\n", m ? "give a number of tokens" : err.message);
            return 1;
        }
        AtnModelHandle *h = atn_model_handle_new(m, argv[4]);
        int32_t *ids = g_new(int32_t, n);
        for (int i = 0; i < n; i++)
            ids[i] = i == 0 ? 101 : i == n - 1 ? 102 : 1000 + (i * 7919) % 20000;
        atn_session_set_ids(atn_window_get_session(win), ids, n);
        g_free(ids);
        atn_session_set_model(atn_window_get_session(win), h);
        g_object_unref(h);
        model_wait w = {win, NULL, 0};
        if (!wait_for(idle_with_result, &w))
            return 1;
    } else {
        open_and_wait(win, argv[4]);
        type_and_wait(win, text);
    }
    show_view(win, argv[6]);
    AtnSession *s = atn_window_get_session(win);
    AtnHeadView *hv = ATN_HEAD_VIEW(atn_window_get_view_widget(win, "head"));
    AtnHeatmap *hm = atn_head_view_get_heatmap(hv);
    for (int i = 7; i < argc; i++) {
        const char *a = argv[i];
        int x, y;
        double f;
        if (sscanf(a, "layer=%d", &x) == 1)
            atn_session_set_layer(s, x);
        else if (sscanf(a, "head=%d", &x) == 1)
            atn_session_set_head(s, x);
        else if (sscanf(a, "query=%d", &x) == 1)
            atn_session_set_query(s, x);
        else if (sscanf(a, "zoom=%lf", &f) == 1) {
            settle(100);
            atn_heatmap_zoom_at(hm, f, -1, -1);
        } else if (sscanf(a, "pan=%d,%d", &x, &y) == 2)
            atn_heatmap_pan(hm, x, y);
        else if (!strncmp(a, "target=", 7)) {   /* an encoder-decoder's target, typed into its entry */
            model_wait w = {win, NULL, atn_session_get_n_runs(s)};
            GtkWidget *te = GTK_WIDGET(win);
            while (te && !ATN_IS_TARGET_ENTRY(te)) {   /* depth first, to the first target entry */
                GtkWidget *next = gtk_widget_get_first_child(te);
                while (!next && te) {
                    next = gtk_widget_get_next_sibling(te);
                    te = next ? te : gtk_widget_get_parent(te);
                }
                te = next;
            }
            gtk_editable_set_text(GTK_EDITABLE(atn_target_entry_get_entry(ATN_TARGET_ENTRY(te))), a + 7);
            wait_for(idle_with_result, &w);
        } else if (!strncmp(a, "stack=", 6)) {   /* encoder, decoder or cross */
            atn_stack_kind k;
            if (atn_stack_kind_parse(a + 6, &k))
                atn_session_set_stack(s, k);
        } else if (!strcmp(a, "kv-group")) {   /* "By K/V group" in the Similarity and Statistics views */
            settle(500);
            atn_similarity_view_set_by_kv_group(ATN_SIMILARITY_VIEW(atn_window_get_view_widget(win, "similarity")), TRUE);
            atn_stats_view_set_by_kv_group(ATN_STATS_VIEW(atn_window_get_view_widget(win, "statistics")), TRUE);
        } else if (sscanf(a, "pair=%d,%d", &x, &y) == 2) {   /* the Similarity view's heads x and y side by side */
            settle(500);   /* the matrix is made in a worker */
            atn_similarity_view_compare(ATN_SIMILARITY_VIEW(atn_window_get_view_widget(win, "similarity")), x, y);
        } else if (sscanf(a, "colour-scale=%d", &x) == 1)   /* 0 linear, 1 log, 2 rank (the Head view's) */
            gtk_drop_down_set_selected(atn_head_view_scale_get_scale_dropdown(atn_head_view_get_scale_controls(hv)), x);
        else if (!strncmp(a, "span=", 5)) {   /* the Head view's token span, "120-180" */
            settle(100);
            atn_head_view_scale_set_span(atn_head_view_get_scale_controls(hv), a + 5);
            gtk_editable_set_text(GTK_EDITABLE(atn_head_view_scale_get_span(atn_head_view_get_scale_controls(hv))), a + 5);
        } else if (!strncmp(a, "axis-drag=", 10)) {   /* r|c,F0,F1[,end]: a drag along an axis, F: fraction of the cells */
            char ax = 0, end[8] = "";
            double f0, f1;
            atn_heatmap_layout L;
            settle(200);
            if (sscanf(a + 10, "%c,%lf,%lf,%7s", &ax, &f0, &f1, end) >= 3 && atn_heatmap_get_layout(hm, &L)) {
                gboolean rows = ax == 'r';
                double px = rows ? L.cells.x - 6 : L.cells.x + f0 * L.cells.w;
                double py = rows ? L.cells.y + f0 * L.cells.h : L.cells.y + L.cells.h + 8;
                double qx = rows ? px : L.cells.x + f1 * L.cells.w, qy = rows ? L.cells.y + f1 * L.cells.h : py;
                atn_heatmap_axis_drag(hm, 0, px, py);
                atn_heatmap_axis_drag(hm, 1, qx, qy);
                if (!strcmp(end, "end"))
                    atn_heatmap_axis_drag(hm, 2, qx, qy);
            }
        } else if (!strcmp(a, "drop-first"))
            gtk_check_button_set_active(atn_head_view_scale_get_drop_first(atn_head_view_get_scale_controls(hv)), TRUE);
        else if (!strcmp(a, "one-query"))
            atn_head_view_set_one_query(hv, TRUE);
        else if (sscanf(a, "method-running=%d", &x) == 1) {
            atn_head_methods_set_method(atn_head_view_get_methods(hv), (AtnHeadMethod)x);
            settle(1500);
        } else if (sscanf(a, "method=%d", &x) == 1) {
            atn_head_methods_set_method(atn_head_view_get_methods(hv), (AtnHeadMethod)x);
            while (atn_head_methods_is_busy(atn_head_view_get_methods(hv)))
                settle(50);
        }
        else if (!strcmp(a, "fixed"))
            atn_prefs_set_color_scale(atn_prefs_get_default(), "fixed");
        else if (!strcmp(a, "all-lines"))
            atn_token_lines_set_all_lines(ATN_TOKEN_LINES(atn_head_view_get_token_lines(hv)), TRUE);
        else if (sscanf(a, "lines-hover=%d,%d", &x, &y) == 2)
            atn_token_lines_hover(ATN_TOKEN_LINES(atn_head_view_get_token_lines(hv)), x, y);
        else if (sscanf(a, "hover=%d,%d", &x, &y) == 2) {
            settle(200);
            graphene_rect_t r;
            if (atn_heatmap_get_cell_rect(hm, x, y, &r))
                g_free(atn_heatmap_hover(hm, r.origin.x + r.size.width / 2, r.origin.y + r.size.height / 2));
            else if (atn_heatmap_get_bar(hm, y, NULL, &r))
                g_free(atn_heatmap_hover(hm, r.origin.x + r.size.width / 2, r.origin.y + r.size.height - 1));
        } else if (!strcmp(a, "present"))
            atn_window_set_presentation(win, TRUE);
        else if (!strcmp(a, "pointer-top")) {   /* presentation mode's header bar comes back */
            pointer_at(win, gtk_widget_get_width(GTK_WIDGET(win)) / 2.0, 2);
            settle(400);
        } else if (sscanf(a, "font-scale=%lf", &f) == 1)
            atn_prefs_set_font_scale(atn_prefs_get_default(), f);
        else if (sscanf(a, "step=%d", &x) == 1) {
            settle(300);
            atn_trace_view_set_step(ATN_TRACE_VIEW(atn_window_get_view_widget(win, "trace")), x);
        } else if (!strcmp(a, "reveal"))
            atn_trace_view_set_reveal(ATN_TRACE_VIEW(atn_window_get_view_widget(win, "trace")), TRUE);
        else if (!strcmp(a, "words")) {   /* the Head view's "Words" */
            gtk_check_button_set_active(
                atn_head_view_get_words_check(ATN_HEAD_VIEW(atn_window_get_view_widget(win, "head"))), TRUE);
            settle(300);
        } else if (!strcmp(a, "all-keys")) {   /* the Trace view's "Show all n keys" */
            gtk_check_button_set_active(
                atn_trace_view_get_all_keys(ATN_TRACE_VIEW(atn_window_get_view_widget(win, "trace"))), TRUE);
            settle(300);
        }
        else if (sscanf(a, "off=%d,%d", &x, &y) == 2 || sscanf(a, "uniform=%d,%d", &x, &y) == 2 ||
                 sscanf(a, "keep=%d,%d", &x, &y) == 2) {   /* the Model view's what-if menu items */
            const char *what = a[0] == 'o' ? "switch-off" : a[0] == 'u' ? "uniform" : "keep-only";
            gtk_widget_activate_action(atn_window_get_view_widget(win, "model"), "whatif.head", "(iis)", x, y, what);
            settle(300);
        } else if (!strcmp(a, "menu")) {   /* the selected head's what-if menu (Shift+F10) */
            settle(500);
            gtk_widget_activate_action(atn_window_get_view_widget(win, "model"), "whatif.menu", NULL);
        } else if (!strncmp(a, "view=", 5)) {
            settle(300);
            show_view(win, a + 5);
        } else if (!strncmp(a, "whatif-control=", 15)) {   /* whatif-control=NAME:VALUE */
            g_auto(GStrv) kv = g_strsplit(a + 15, ":", 2);
            GtkWidget *c = atn_whatif_view_get_control(ATN_WHATIF_VIEW(atn_window_get_view_widget(win, "whatif")),
                                                       kv[0]);
            if (GTK_IS_CHECK_BUTTON(c))
                gtk_check_button_set_active(GTK_CHECK_BUTTON(c), atoi(kv[1]));
            else if (GTK_IS_SPIN_BUTTON(c))
                gtk_spin_button_set_value(GTK_SPIN_BUTTON(c), g_ascii_strtod(kv[1], NULL));
            else if (GTK_IS_EDITABLE(c))
                gtk_editable_set_text(GTK_EDITABLE(c), kv[1]);
            settle(300);
        } else if (!strncmp(a, "train-control=", 14)) {   /* train-control=NAME:VALUE (a Train page knob) */
            g_auto(GStrv) kv = g_strsplit(a + 14, ":", 2);
            GtkWidget *c = atn_train_view_get_control(ATN_TRAIN_VIEW(atn_window_get_view_widget(win, "train")), kv[0]);
            if (GTK_IS_DROP_DOWN(c))
                gtk_drop_down_set_selected(GTK_DROP_DOWN(c), (guint)atoi(kv[1]));
            else if (GTK_IS_CHECK_BUTTON(c))
                gtk_check_button_set_active(GTK_CHECK_BUTTON(c), atoi(kv[1]));
            else if (GTK_IS_SPIN_BUTTON(c))
                gtk_spin_button_set_value(GTK_SPIN_BUTTON(c), g_ascii_strtod(kv[1], NULL));
            settle(100);
        } else if (!strcmp(a, "train-run")) {   /* Start on the Train page, then wait until it ends */
            AtnTrainView *tv = ATN_TRAIN_VIEW(atn_window_get_view_widget(win, "train"));
            g_signal_emit_by_name(atn_train_view_get_control(tv, "start"), "clicked");
            while (atn_train_view_get_running(tv))
                settle(100);
        } else if (sscanf(a, "whatif-scroll=%d", &x) == 1) {   /* the page's controls scrolled down x px */
            settle(500);
            GtkWidget *paned = gtk_widget_get_first_child(atn_window_get_view_widget(win, "whatif"));
            GtkWidget *sw = gtk_paned_get_start_child(GTK_PANED(paned));
            gtk_adjustment_set_value(gtk_scrolled_window_get_vadjustment(GTK_SCROLLED_WINDOW(sw)), x);
        } else if (!strcmp(a, "model-menu")) {   /* the model picker's menu open (take it with root=) */
            GtkMenuButton *b = find_menu_button(GTK_WIDGET(win), atn_window_get_model_menu(win));
            if (b)
                gtk_menu_button_popup(b);
            settle(500);
        } else if (!strcmp(a, "get-model")) {   /* the Get a Model dialog (take it with root=) */
            gtk_widget_activate_action(GTK_WIDGET(win), "win.get-model", NULL);
            settle(500);
        } else if (!strncmp(a, "root=", 5)) {   /* the whole X screen (popovers too), by ImageMagick */
            settle(2000);
            g_autofree char *cmd = g_strdup_printf("import -window root %s", a + 5);
            g_spawn_command_line_sync(cmd, NULL, NULL, NULL, NULL);
        } else if (!strncmp(a, "lesson=", 7) || !strncmp(a, "lesson-step=", 12)) {   /* a lesson, at a step */
            if (a[6] == '=')
                atn_window_open_lesson(win, a + 7);
            else
                atn_window_lesson_go(win, atoi(a + 12));
            settle(100);
            while (atn_window_is_applying_state(win) || atn_session_get_opening(s) || atn_session_get_busy(s) ||
                   atn_session_get_analysing(s))
                settle(50);
            settle(300);
        } else if (!strcmp(a, "lesson-reveal")) {   /* its answer shown */
            atn_window_lesson_reveal(win);
            settle(300);
        } else if (!strncmp(a, "attention=", 10)) {   /* an attention file in place of the model */
            atn_session_open_attention(s, a + 10);
            settle(100);
            while (atn_session_get_opening(s) || atn_session_get_busy(s) || atn_session_get_analysing(s))
                settle(50);
            settle(300);
        } else if (!strncmp(a, "stats=", 6)) {   /* a merged statistics file in the Statistics view */
            atn_window_open_stats(win, a + 6);
            AtnStatsView *sv = ATN_STATS_VIEW(atn_window_get_view_widget(win, "statistics"));
            while (atn_stats_view_get_file_busy(sv))
                settle(50);
            settle(300);
        } else if (sscanf(a, "stats-head=%d,%d", &x, &y) == 2) {   /* its head's examples */
            AtnStatsView *sv = ATN_STATS_VIEW(atn_window_get_view_widget(win, "statistics"));
            atn_stats_file_panel_select_head(atn_stats_view_get_file_panel(sv), x, y);
            settle(300);
        } else if (sscanf(a, "stats-colour=%d", &x) == 1) {   /* the statistic the grid shows */
            AtnStatsView *sv = ATN_STATS_VIEW(atn_window_get_view_widget(win, "statistics"));
            atn_stats_file_panel_set_statistic(atn_stats_view_get_file_panel(sv), x);
            settle(300);
        } else if (sscanf(a, "example=%d", &x) == 1) {   /* that example clicked: its sentence, head, query, key */
            AtnStatsView *sv = ATN_STATS_VIEW(atn_window_get_view_widget(win, "statistics"));
            atn_stats_file_panel_activate_example(atn_stats_view_get_file_panel(sv), (guint)x);
            settle(300);
            while (atn_session_get_opening(s) || atn_session_get_busy(s) || atn_session_get_analysing(s))
                settle(50);
            settle(500);
        } else if (!strcmp(a, "focus")) {
            gtk_widget_grab_focus(GTK_WIDGET(hm));
            atn_heatmap_move_cursor(hm, 0, 0);
        } else {
            fprintf(stderr, "shoot: unknown action %s\n", a);
            return 2;
        }
    }
    settle(1500);
    AtnTokenLines *tl = ATN_TOKEN_LINES(atn_head_view_get_token_lines(hv));
    while (atn_token_lines_get_busy(tl))
        settle(50);
    settle(300);
    g_autoptr(GdkPaintable) p = gtk_widget_paintable_new(GTK_WIDGET(win));
    int w = gtk_widget_get_width(GTK_WIDGET(win)), h = gtk_widget_get_height(GTK_WIDGET(win));
    GtkSnapshot *snap = gtk_snapshot_new();
    gdk_paintable_snapshot(p, GDK_SNAPSHOT(snap), w, h);
    GskRenderNode *node = gtk_snapshot_free_to_node(snap);
    GskRenderer *r = gtk_native_get_renderer(GTK_NATIVE(win));
    g_autoptr(GdkTexture) tex = gsk_renderer_render_texture(r, node, &GRAPHENE_RECT_INIT(0, 0, w, h));
    gsk_render_node_unref(node);
    gboolean ok = gdk_texture_save_to_png(tex, argv[1]);
    printf("%s: %dx%d\n", argv[1], w, h);
    gtk_window_destroy(GTK_WINDOW(win));
    return ok ? 0 : 1;
}
