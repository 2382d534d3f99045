/* Shared helpers of the window tests (see ui-test-util.h). */
#include "ui-test-util.h"
#include <errno.h>
#include <sys/resource.h>

char *f32_model;

/* G_DEBUG=fatal-warnings makes every warning stop a window test, as it should, but one:
   GTK 4.8 warns "Trying to snapshot GtkButton … without a current allocation" when a frame
   paints a widget shown after that frame's layout (once in ui-window's export dialog at load
   14; 0 in 8 runs alone).  That is a timing report of GTK's own, not an error of ours: it is
   printed and the test goes on.  GLib decides fatality before any handler runs, so warnings
   leave the always-fatal mask and this writer stops the program on every other one, as
   fatal-warnings would (SIGTRAP). */
static GLogWriterOutput warnings_fatal_but_snapshot_race(GLogLevelFlags level, const GLogField *fields,
                                                         gsize n_fields, gpointer data) {
    GLogWriterOutput out = g_log_writer_default(level, fields, n_fields, data);
    if (!(level & G_LOG_LEVEL_WARNING))
        return out;
    const char *domain = NULL, *message = NULL;
    for (gsize i = 0; i < n_fields; i++) {
        if (!strcmp(fields[i].key, "GLIB_DOMAIN"))
            domain = fields[i].value;
        else if (!strcmp(fields[i].key, "MESSAGE"))
            message = fields[i].value;
    }
    if (domain && !strcmp(domain, "Gtk") && message && g_str_has_prefix(message, "Trying to snapshot ") &&
        strstr(message, " without a current allocation"))
        return out;
    G_BREAKPOINT();
    return out;
}

gboolean ui_test_init(int *argc, char ***argv) {
    atn_gui_init_i18n();
    g_test_init(argc, argv, NULL);   /* makes warnings and criticals fatal */
    GLogLevelFlags fatal = g_log_set_always_fatal(G_LOG_FATAL_MASK);
    if (fatal & G_LOG_LEVEL_WARNING)
        g_log_set_writer_func(warnings_fatal_but_snapshot_race, NULL, NULL);
    g_log_set_always_fatal(fatal & ~G_LOG_LEVEL_WARNING);
    if (!gtk_init_check()) {
        printf("1..0 # SKIP no display\n");
        return FALSE;
    }
    atn_gui_load_css();
    const char *src = g_getenv("ATN_SOURCE_ROOT");
    f32_model = g_build_filename(src ? src : ".", "tests", "hf", "models", "f32", NULL);
    return TRUE;
}
gboolean wait_for(cond_fn cond, gpointer data) {
    gint64 t0 = g_get_monotonic_time();
    while (!cond(data)) {
        if (g_get_monotonic_time() - t0 > TIMEOUT_MS * 1000)
            return FALSE;
        g_main_context_iteration(NULL, FALSE);
        g_usleep(1000);
    }
    /* let pending layout and draws settle */
    for (int i = 0; i < 20; i++)
        while (g_main_context_iteration(NULL, FALSE))
            ;
    return TRUE;
}

void settle(int ms) {
    gint64 t0 = g_get_monotonic_time();
    while (g_get_monotonic_time() - t0 < ms * 1000) {
        g_main_context_iteration(NULL, FALSE);
        g_usleep(1000);
    }
}

gboolean idle_with_result(gpointer data) {
    model_wait *w = data;
    AtnSession *s = atn_window_get_session(w->win);
    AtnModelHandle *m = atn_session_get_model(s);
    return m && !atn_session_get_busy(s) && !atn_session_get_analysing(s) && atn_session_get_result(s) &&
           atn_result_get_model(atn_session_get_result(s)) == m && atn_session_get_n_runs(s) > w->runs &&
           (!w->name || !g_strcmp0(atn_model_handle_get_source(m), w->name));
}

gboolean result_of_ids(gpointer data) {
    ids_wait *w = data;
    AtnSession *s = atn_window_get_session(w->win);
    AtnResult *r = atn_session_get_result(s);
    if (!r || atn_session_get_busy(s) || atn_session_get_analysing(s) ||
        atn_result_get_model(r) != atn_session_get_model(s) || atn_result_get_n_tokens(r) != w->n)
        return FALSE;
    const atn_capture *cap = atn_result_get_capture(r);
    for (int i = 0; i < w->n; i++)
        if (cap->enc->ids[i] != w->ids[i])
            return FALSE;
    return TRUE;
}

AtnWindow *new_window(void) {
    AtnWindow *win = g_object_new(ATN_TYPE_WINDOW, "default-width", 1200, "default-height", 780, NULL);
    gtk_window_present(GTK_WINDOW(win));
    return win;
}

AtnWindow *text_size_window(int w, int h, double text_size) {
    atn_prefs_set_font_scale(atn_prefs_get_default(), text_size);
    AtnWindow *win = g_object_new(ATN_TYPE_WINDOW, "default-width", w, "default-height", h, NULL);
    gtk_window_present(GTK_WINDOW(win));
    return win;
}

void text_size_done(AtnWindow *win) {
    destroy_window(win);
    atn_prefs_set_font_scale(atn_prefs_get_default(), 1.0);
}

void pointer_at(AtnWindow *win, double x, double y) {
    g_autoptr(GListModel) cs = gtk_widget_observe_controllers(GTK_WIDGET(win));
    for (guint i = 0; i < g_list_model_get_n_items(cs); i++) {
        g_autoptr(GObject) c = g_list_model_get_item(cs, i);
        if (GTK_IS_EVENT_CONTROLLER_MOTION(c))
            g_signal_emit_by_name(c, "motion", x, y);
    }
    settle(50);
}

double render_text_width(const char *text, double size, gboolean bold) {
    PangoContext *ctx = pango_font_map_create_context(pango_cairo_font_map_get_default());
    pango_cairo_context_set_resolution(ctx, 72.0);
    cairo_font_options_t *fo = cairo_font_options_create();
    cairo_font_options_set_hint_style(fo, CAIRO_HINT_STYLE_NONE);
    cairo_font_options_set_hint_metrics(fo, CAIRO_HINT_METRICS_OFF);
    pango_cairo_context_set_font_options(ctx, fo);
    cairo_font_options_destroy(fo);
    PangoLayout *l = pango_layout_new(ctx);
    PangoFontDescription *fd = pango_font_description_from_string("Sans");
    pango_font_description_set_absolute_size(fd, size * PANGO_SCALE);
    pango_font_description_set_weight(fd, bold ? PANGO_WEIGHT_BOLD : PANGO_WEIGHT_NORMAL);
    pango_layout_set_font_description(l, fd);
    pango_font_description_free(fd);
    pango_layout_set_text(l, text, -1);
    int w, h;
    pango_layout_get_size(l, &w, &h);
    g_object_unref(l);
    g_object_unref(ctx);
    return (double)w / PANGO_SCALE;
}

static void cut_under(GtkWidget *w, GtkWidget *view, GString *bad) {
    for (GtkWidget *c = gtk_widget_get_first_child(w); c; c = gtk_widget_get_next_sibling(c)) {
        /* a scroll bar's slider overhangs its trough by the theme's -1 px margin: not content */
        if (!gtk_widget_get_mapped(c) || GTK_IS_NATIVE(c) || GTK_IS_SCROLLBAR(c))
            continue;
        graphene_rect_t b;
        const char *text = GTK_IS_LABEL(c) ? gtk_label_get_text(GTK_LABEL(c)) : "";
        if (gtk_widget_compute_bounds(c, view, &b) && b.origin.x + b.size.width > gtk_widget_get_width(view) + 0.5)
            g_string_append_printf(bad, " a %s (%s) “%.40s” reaching %.0f px of %d;", G_OBJECT_TYPE_NAME(c),
                                   gtk_widget_get_css_name(c), text,
                                   b.origin.x + b.size.width, gtk_widget_get_width(view));
        else if (GTK_IS_LABEL(c) && pango_layout_is_ellipsized(gtk_label_get_layout(GTK_LABEL(c))))
            g_string_append_printf(bad, " “%s” ellipsized (%d px);", text, gtk_widget_get_width(c));
        else
            cut_under(c, view, bad);
    }
}

void widgets_cut(GtkWidget *view, GString *bad) { cut_under(view, view, bad); }

void open_and_wait(AtnWindow *win, const char *source) {
    AtnSession *s = atn_window_get_session(win);
    model_wait w = {win, source, atn_session_get_n_runs(s)};
    atn_session_open_model(s, source);
    g_assert_true(wait_for(idle_with_result, &w));
}

void type_and_wait(AtnWindow *win, const char *text) {
    AtnSession *s = atn_window_get_session(win);
    model_wait w = {win, NULL, atn_session_get_n_runs(s)};
    atn_window_set_text(win, text);
    g_assert_true(wait_for(idle_with_result, &w));
}

gboolean is_drawable(gpointer data) {
    GtkWidget *w = data;
    return gtk_widget_get_mapped(w) && gtk_widget_get_width(w) > 0 && gtk_widget_get_height(w) > 0;
}

void show_view(AtnWindow *win, const char *name) {
    atn_window_show_view(win, name);
    g_assert_true(wait_for(is_drawable, atn_window_get_view_widget(win, name)));
}

AtnTraceView *show_trace(AtnWindow *win, int layer, int head, int query) {
    show_view(win, "trace");
    AtnSession *s = atn_window_get_session(win);
    if (layer >= 0)
        atn_session_select_head(s, layer, head);
    if (query >= 0)
        atn_session_set_query(s, query);
    AtnTraceView *tv = ATN_TRACE_VIEW(atn_window_get_view_widget(win, "trace"));
    atn_trace_view_refresh(tv);
    return tv;
}

/* Draws a widget as the next frame would and returns its pixels. */
GBytes *render_widget(GtkWidget *w, int *width, int *height) {
    g_autoptr(GdkTexture) tex = atn_gui_render_widget(w);
    g_assert_nonnull(tex);
    *width = gdk_texture_get_width(tex);
    *height = gdk_texture_get_height(tex);
    gsize stride = (gsize)*width * 4, size = stride * *height;
    guchar *data = g_malloc(size);
    gdk_texture_download(tex, data, stride);
    return g_bytes_new_take(data, size);
}

void destroy_window(AtnWindow *win) {
    gtk_window_destroy(GTK_WINDOW(win));
    settle(20);
}

AtnHeatmap *head_heatmap(AtnWindow *win) {
    return atn_head_view_get_heatmap(ATN_HEAD_VIEW(atn_window_get_view_widget(win, "head")));
}

/* The number of tokens the engine makes of text (independent of the window's path). */
int engine_token_count(const char *model, const char *text) {
    atn_error err = {0};
    atn_model *m = atn_model_open(model, NULL, NULL, &err);
    g_assert_nonnull(m);
    atn_encoding *enc = NULL;
    g_assert_cmpint(atn_model_encode(m, text, NULL, &enc, &err), ==, ATN_OK);
    int n = enc->n;
    atn_encoding_free(enc);
    atn_model_free(m);
    return n;
}

/* Clicks a widget at (x, y) through its click gesture, as a pointer press would. */
void click(GtkWidget *w, double x, double y) {
    g_autoptr(GListModel) ctl = gtk_widget_observe_controllers(w);
    for (guint i = 0; i < g_list_model_get_n_items(ctl); i++) {
        g_autoptr(GObject) c = g_list_model_get_item(ctl, i);
        guint button = GTK_IS_GESTURE_CLICK(c) ? gtk_gesture_single_get_button(GTK_GESTURE_SINGLE(c)) : 99;
        if (button == 0 || button == GDK_BUTTON_PRIMARY) {   /* a primary press (not a context menu's) */
            g_signal_emit_by_name(c, "pressed", 1, x, y);
            return;
        }
    }
    g_assert_not_reached();
}


gboolean similarity_ready(gpointer data) {
    AtnSimilarityView *v = data;
    return !atn_similarity_view_get_busy(v) && atn_similarity_map_get_similarity(atn_similarity_view_get_map(v));
}

gboolean png_size(const char *path, int *w, int *h) {
    g_autoptr(GError) error = NULL;
    g_autoptr(GdkTexture) t = gdk_texture_new_from_filename(path, &error);
    if (!t)
        return FALSE;
    *w = gdk_texture_get_width(t);
    *h = gdk_texture_get_height(t);
    return TRUE;
}

void cli_export(const char *const *extra, const char *out) {
    g_autoptr(GPtrArray) argv = g_ptr_array_new();
    g_autofree char *exe = g_build_filename(g_getenv("ATN_BUILD_ROOT"), "app", "attnscope", NULL);
    g_ptr_array_add(argv, exe);
    for (const char *const *e = extra; *e; e++)
        g_ptr_array_add(argv, (char *)*e);
    g_ptr_array_add(argv, "-o");
    g_ptr_array_add(argv, (char *)out);
    g_ptr_array_add(argv, NULL);
    int status = 0;
    g_autofree char *err = NULL;
    g_autoptr(GError) error = NULL;
    g_assert_true(g_spawn_sync(NULL, (char **)argv->pdata, NULL, G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL, NULL, &err,
                               &status, &error));
    if (!g_spawn_check_wait_status(status, NULL))
        g_error("attnscope export failed: %s", err);
}

void compare_pngs(const char *gui, const char *cli) {
    int gw = 0, gh = 0, cw = 0, ch = 0;
    g_assert_true(png_size(gui, &gw, &gh));
    g_assert_true(png_size(cli, &cw, &ch));
    g_assert_cmpint(gw, ==, cw);
    g_assert_cmpint(gh, ==, ch);
}

gboolean not_opening(gpointer data) { return atn_session_get_opening(data) == NULL; }

double trace_label_right(GtkWidget *w, GtkWidget *scroller) {
    double worst = 0;
    for (GtkWidget *c = gtk_widget_get_first_child(w); c; c = gtk_widget_get_next_sibling(c)) {
        if (!gtk_widget_get_mapped(c))
            continue;
        graphene_rect_t b;
        if (GTK_IS_LABEL(c) && gtk_widget_compute_bounds(c, scroller, &b))
            worst = MAX(worst, b.origin.x + b.size.width);
        worst = MAX(worst, trace_label_right(c, scroller));
    }
    return worst;
}

gboolean trace_steps_inside(gpointer data) {
    AtnTraceView *tv = data;
    for (int st = 0; st < ATN_TRACE_STEP_COUNT; st++) {
        GtkWidget *box = atn_trace_view_get_step_widget(tv, st);
        GtkWidget *scroller = box ? gtk_widget_get_ancestor(box, GTK_TYPE_SCROLLED_WINDOW) : NULL;
        if (!scroller || trace_label_right(box, scroller) > gtk_widget_get_width(scroller) + 0.5)
            return FALSE;
    }
    return TRUE;
}

int expected_worker_nice(void) {
    errno = 0;
    int own = getpriority(PRIO_PROCESS, 0);   /* Linux: the calling thread's */
    g_assert_cmpint(errno, ==, 0);
    return MAX(own, atn_session_get_worker_nice());
}
