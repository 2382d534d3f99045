/* Issue 40's smaller defects (its item 7), each as a person meets it, in a real window under
 * Xvfb: the model's name whole at 1280 px, one number format in a figure and in each column of
 * the trace's tables, a sentence pair's A/B boundary drawn, Chinese text in a PDF in the SC
 * face under an English window, Ctrl+Z after a guess click, the What-if comparison's figures
 * and the Trace's side heatmap in presentation mode.
 *
 * Run with --tap (meson does).  Without a display it reports "1..0 # SKIP no display". */
#include "ui-test-util.h"

#include "atn-get-model-dialog.h"
#include "atn-whatif.h"
#include "atn-whatif-view.h"
#include "render.h"

/* The first widget of type t under w (depth first), or NULL. */
static GtkWidget *first_of_type(GtkWidget *w, GType t) {
    for (GtkWidget *c = gtk_widget_get_first_child(w); c; c = gtk_widget_get_next_sibling(c)) {
        if (G_TYPE_CHECK_INSTANCE_TYPE(c, t))
            return c;
        GtkWidget *d = first_of_type(c, t);
        if (d)
            return d;
    }
    return NULL;
}

/* ---- the model's name at 1280 px ---- */

static GtkLabel *model_label(AtnWindow *win) {
    GtkWidget *sw = atn_window_get_view_switcher(win);
    GtkWidget *header = gtk_widget_get_ancestor(sw, GTK_TYPE_HEADER_BAR);
    GtkWidget *button = first_of_type(header, GTK_TYPE_MENU_BUTTON);   /* the first: the model's */
    g_assert_nonnull(button);
    GtkWidget *label = first_of_type(button, GTK_TYPE_LABEL);
    g_assert_nonnull(label);
    g_assert_cmpstr(gtk_label_get_text(GTK_LABEL(label)), ==, atn_window_get_model_label(win));
    return GTK_LABEL(label);
}

/* A model whose folder has a 27-character name (as hfl/chinese-roberta-wwm-ext's) in a
 * 1280x720 window: the name is drawn whole (the view switcher gives way: its compact row),
 * every page is still reachable; a 44-character name is cut in the middle and the window
 * stays 1280 px wide. */
static void test_model_name_whole_at_1280(void) {
    g_autofree char *dir = g_dir_make_tmp("atn-name-XXXXXX", NULL);
    g_autofree char *mid = g_build_filename(dir, "chinese-roberta-wwm-ext-big", NULL);   /* 27 characters */
    g_autofree char *lng = g_build_filename(dir, "a-model-with-a-name-longer-than-any-course-uses", NULL);
    g_assert_cmpint(symlink(f32_model, mid), ==, 0);
    g_assert_cmpint(symlink(f32_model, lng), ==, 0);
    AtnWindow *win = g_object_new(ATN_TYPE_WINDOW, "default-width", 1280, "default-height", 720, NULL);
    gtk_window_present(GTK_WINDOW(win));
    open_and_wait(win, mid);
    settle(300);
    GtkLabel *label = model_label(win);
    g_assert_cmpstr(gtk_label_get_text(label), ==, "chinese-roberta-wwm-ext-big");
    if (pango_layout_is_ellipsized(gtk_label_get_layout(label)))
        g_error("the model's name is shortened at 1280 px: the label is %d px wide, the view switcher %d px",
                gtk_widget_get_width(GTK_WIDGET(label)), gtk_widget_get_width(atn_window_get_view_switcher(win)));
    g_assert_cmpint(gtk_widget_get_width(GTK_WIDGET(win)), <=, 1280);
    /* the switcher still offers every page, in the form that fits */
    AtnViewSwitcherForm form = atn_view_switcher_get_form(ATN_VIEW_SWITCHER(atn_window_get_view_switcher(win)));
    g_test_message("switcher form %d in %d px", form, gtk_widget_get_width(atn_window_get_view_switcher(win)));
    g_assert_true(form == ATN_VIEW_SWITCHER_COMPACT || form == ATN_VIEW_SWITCHER_MENU);

    open_and_wait(win, lng);
    settle(300);
    label = model_label(win);
    g_assert_true(pango_layout_is_ellipsized(gtk_label_get_layout(label)));
    g_assert_cmpint(gtk_widget_get_width(GTK_WIDGET(win)), <=, 1280);
    destroy_window(win);
    g_unlink(mid);
    g_unlink(lng);
    g_rmdir(dir);
}

/* ---- one number format ---- */

/* Digits after the point of a cell number (".3760" 4, "1.0" 1), or -1 for the forms that
 * have none of their own ("0", "<.001", "NaN"). */
static int decimals_of(const char *s) {
    if (!strcmp(s, "0") || s[0] == '<' || s[0] == '>' || !strchr(s, '.'))
        return -1;
    return (int)strlen(strchr(s, '.') + 1);
}

/* The worked example's trace heatmap (the textbook's 我 爱 你): every number in its cells has
 * the figure's decimals (".3760" beside ".4487", not ".376"). */
static void test_heatmap_one_format(void) {
    AtnWindow *win = new_window();
    open_and_wait(win, "worked-example");
    AtnTraceView *tv = show_trace(win, 0, 0, 0);
    settle(300);
    AtnHeatmap *hm = atn_trace_view_get_heatmap(tv);
    atn_heatmap_layout L;
    g_assert_true(atn_heatmap_get_layout(hm, &L));
    g_assert_cmpint(L.value_decimals, >, 0);
    int seen = 0;
    for (int i = 0; i < atn_heatmap_get_rows(hm); i++)
        for (int j = 0; j < atn_heatmap_get_rows(hm); j++) {
            char buf[32];
            atn_render_cell_number(buf, sizeof buf, atn_heatmap_get_value(hm, i, j), L.value_decimals);
            int d = decimals_of(buf);
            if (d >= 0 && d != L.value_decimals)
                g_error("cell (%d, %d) reads “%s” in a figure of %d decimals", i, j, buf, L.value_decimals);
            seen += d >= 0;
        }
    g_assert_cmpint(seen, ==, 9);
    char buf[32];
    atn_render_cell_number(buf, sizeof buf, atn_heatmap_get_value(hm, 0, 0), L.value_decimals);
    g_test_message("worked example (0, 0) at %d decimals: %s", L.value_decimals, buf);
    if (L.value_decimals == 4)
        g_assert_cmpstr(buf, ==, ".3760");   /* the textbook's 0.376, corrected in the lesson */
    destroy_window(win);
}

/* A number's format class in a trace table: 'f' fixed with 4 decimals, 'e' with an
 * exponent, '<' too small for 4 decimals, 0 for text (a token, −∞, an ellipsis). */
static char format_class(const char *cell) {
    if (!*cell)
        return 0;
    if (cell[0] == '<' || cell[0] == '>')
        return '<';
    const char *p = cell + (cell[0] == '-');
    if (!g_ascii_isdigit(*p) || (!strchr(cell, '.') && !strchr(cell, 'e')))
        return 0;   /* text, or an index (j, a column number) */
    if (strchr(cell, 'e'))
        return 'e';
    const char *dot = strchr(cell, '.');
    return dot && strlen(dot + 1) == 4 ? 'f' : '?';
}

/* The exported trace sheet of demo's layer 1 head 15 for "the": its weights and exponentials
 * run from about 1 down to 1e-4 and less; every column of every table has one format (it
 * mixed "0.9720" with "7.288e-04"). */
static void test_trace_columns_one_format(void) {
    AtnWindow *win = new_window();
    open_and_wait(win, "demo");
    type_and_wait(win, "the cat sat on the mat because it was tired.");
    AtnSession *s = atn_window_get_session(win);
    AtnResult *r = atn_session_get_result(s);
    atn_trace *t = NULL;
    atn_error err = {0};
    g_assert_cmpint(atn_trace_compute(atn_model_handle_get_model(atn_result_get_model(r)), atn_result_get_capture(r), 1,
                                      15, 1, &t, &err), ==, ATN_OK);
    int tiny = 0;
    for (int j = 0; j < t->n; j++)
        tiny += t->weights[j] > 0 && t->weights[j] < 1e-3;
    g_assert_cmpint(tiny, >, 0);   /* the case that mixed formats */
    atn_trace_sheet_spec spec;
    atn_trace_sheet_spec_init(&spec);
    spec.trace = t;
    spec.token_labels = atn_result_get_tokens(r);
    spec.n_heads = atn_result_get_n_heads(r);
    char *text = atn_render_trace_sheet_text(&spec, 900);
    g_auto(GStrv) tables = g_strsplit(text, "\n\n", -1);
    int checked = 0;
    for (int k = 0; tables[k]; k++) {
        g_auto(GStrv) rows = g_strsplit(tables[k], "\n", -1);
        g_auto(GStrv) head = rows[0] ? g_strsplit(rows[0], "\t", -1) : NULL;
        int cols = head ? (int)g_strv_length(head) : 0;
        /* a one-row vector is one column's worth: its numbers share one format */
        gboolean vector = g_strv_length(rows) == 2;
        for (int c = 0; c < cols; c++) {
            char want = 0;
            for (int i = 1; rows[i]; i++) {
                g_auto(GStrv) cells = g_strsplit(rows[i], "\t", -1);
                int from = vector ? 1 : c, to = vector ? (int)g_strv_length(cells) - 1 : c;
                for (int cc = from; cc <= to && cc < (int)g_strv_length(cells); cc++) {
                    char f = format_class(cells[cc]);
                    if (!f || f == '<')
                        continue;
                    if (f == '?')
                        g_error("table %d: “%s” has not 4 decimals", k, cells[cc]);
                    if (want && f != want)
                        g_error("table %d, column %d mixes formats: “%s” among %s ones\n%s", k, cc, cells[cc],
                                want == 'f' ? "fixed" : "exponent", tables[k]);
                    want = f;
                    checked++;
                }
            }
            if (vector)
                break;
        }
    }
    g_test_message("%d numbers checked", checked);
    g_assert_cmpint(checked, >, 100);
    free(text);
    atn_trace_free(t);
    destroy_window(win);
}

/* ---- the A/B boundary of a sentence pair ---- */

/* The brightest pixel's luma in a 5x5 block around (x, y) of an ARGB32 image: 255 only where
 * something white is drawn (viridis' brightest yellow is 215). */
static double luma_at(GBytes *px, int w, double x, double y) {
    const guint8 *d = g_bytes_get_data(px, NULL);
    double best = 0;
    for (int dy = -2; dy <= 2; dy++)
        for (int dx = -2; dx <= 2; dx++) {
            const guint8 *p = d + ((size_t)((int)y + dy) * w + (int)x + dx) * 4;
            best = MAX(best, 0.299 * p[2] + 0.587 * p[1] + 0.114 * p[0]);
        }
    return best;
}

/* A pair "the cat sat" + "on the mat": the Head view's heatmap knows the boundary (the first
 * token of type id 1) and draws it: on the cells' edge before that row and that column there
 * is the line's white, where between two rows of A there are only the cells' colours. */
static void test_pair_boundary(void) {
    AtnWindow *win = new_window();
    open_and_wait(win, f32_model);
    AtnSession *s = atn_window_get_session(win);
    model_wait w = {win, NULL, atn_session_get_n_runs(s)};
    atn_session_set_text(s, "the cat sat", "on the mat");
    g_assert_true(wait_for(idle_with_result, &w));
    show_view(win, "head");
    atn_session_select_head(s, 0, 0);
    settle(300);
    AtnResult *r = atn_session_get_result(s);
    const atn_encoding *enc = atn_result_get_encoding(r);
    int split = 0;
    while (split < enc->n && enc->tokens[split].type_id != 1)
        split++;
    g_assert_cmpint(split, ==, 5);   /* [CLS] the cat sat [SEP] | on the mat [SEP] */
    AtnHeatmap *hm = head_heatmap(win);
    g_assert_cmpint(atn_heatmap_get_split(hm), ==, split);
    int pw, ph;
    g_autoptr(GBytes) px = render_widget(GTK_WIDGET(hm), &pw, &ph);
    graphene_rect_t a, b, c;
    g_assert_true(atn_heatmap_get_cell_rect(hm, split, 2, &a));       /* row 5: its top edge is the boundary */
    g_assert_true(atn_heatmap_get_cell_rect(hm, 2, 2, &b));           /* row 2: an edge inside A */
    g_assert_true(atn_heatmap_get_cell_rect(hm, 1, split, &c));       /* column 5: its left edge */
    double on_row = luma_at(px, pw, a.origin.x + a.size.width / 2, a.origin.y);
    double on_col = luma_at(px, pw, c.origin.x, c.origin.y + c.size.height / 2);
    double inside = luma_at(px, pw, b.origin.x + b.size.width / 2, b.origin.y);
    g_test_message("luma on the boundary row %.0f, column %.0f; between two rows of A %.0f", on_row, on_col, inside);
    g_assert_cmpfloat(on_row, >, 250);
    g_assert_cmpfloat(on_col, >, 250);
    g_assert_cmpfloat(inside, <, 230);
    destroy_window(win);
}

/* ---- Chinese text in a PDF under an English window ---- */

/* The first n-byte needle in the len bytes at h (NUL bytes and all), or NULL. */
static const char *find_bytes(const char *h, gsize len, const char *needle) {
    gsize n = strlen(needle);
    for (gsize i = 0; i + n <= len; i++)
        if (h[i] == needle[0] && !memcmp(h + i, needle, n))
            return h + i;
    return NULL;
}

/* Whether the PDF names a font containing `name`: in the file as it is, or in one of its
 * zlib streams (cairo puts font dictionaries in compressed object streams). */
static gboolean pdf_mentions(const char *data, gsize len, const char *name) {
    if (find_bytes(data, len, name))
        return TRUE;
    const char *end = data + len;
    for (const char *p = data; p < end;) {
        const char *st = find_bytes(p, end - p, "stream");
        if (!st)
            break;
        const char *body = st + 6;
        if (body < end && *body == '\r')
            body++;
        if (body < end && *body == '\n')
            body++;
        const char *stop = find_bytes(body, end - body, "endstream");
        if (!stop)
            break;
        g_autoptr(GConverter) z = G_CONVERTER(g_zlib_decompressor_new(G_ZLIB_COMPRESSOR_FORMAT_ZLIB));
        g_autoptr(GByteArray) out = g_byte_array_new();
        const char *in = body;
        char buf[65536];
        for (;;) {
            gsize r = 0, w = 0;
            GConverterResult res = g_converter_convert(z, in, stop - in, buf, sizeof buf, G_CONVERTER_INPUT_AT_END,
                                                       &r, &w, NULL);
            g_byte_array_append(out, (const guint8 *)buf, (guint)w);
            in += r;
            if (res == G_CONVERTER_ERROR || res == G_CONVERTER_FINISHED || (r == 0 && w == 0))
                break;
        }
        if (out->len && find_bytes((const char *)out->data, out->len, name))
            return TRUE;
        p = stop + 9;
    }
    return FALSE;
}

/* The worked example (我 爱 你) exported as PDF from a window in English: the Han labels are
 * in Noto Sans CJK SC, the face of the language they are written in, not fontconfig's first
 * CJK face (JP, whose forms of some characters differ).  The embedded font's name
 * ("/FontName /ABCDEF+NotoSansCJKsc-Regular") is in the PDF's font descriptor; the font
 * program itself names every face of the collection, so the subset tag's "+" is searched. */
static void test_pdf_chinese_face(void) {
    g_assert_cmpstr(atn_gui_language(), ==, "en");
    g_autofree char *dir = g_dir_make_tmp("atn-pdf-XXXXXX", NULL);
    g_autofree char *pdf = g_build_filename(dir, "head.pdf", NULL);
    AtnWindow *win = new_window();
    open_and_wait(win, "worked-example");
    show_view(win, "head");
    settle(200);
    g_autoptr(GError) err = NULL;
    g_assert_true(atn_window_export_to(win, pdf, 1.0, &err));
    g_autofree char *data = NULL;
    gsize len = 0;
    g_assert_true(g_file_get_contents(pdf, &data, &len, NULL));
    gboolean sc = pdf_mentions(data, len, "+NotoSansCJKsc-");
    gboolean jp = pdf_mentions(data, len, "+NotoSansCJKjp-");
    g_test_message("%zu bytes: SC %d, JP %d", len, sc, jp);
    if (!sc && !jp)
        g_test_skip("no Noto Sans CJK on this machine");
    else {
        g_assert_false(jp);
        g_assert_true(sc);
    }
    destroy_window(win);
    g_unlink(pdf);
    g_rmdir(dir);
}

/* ---- Ctrl+Z after a guess ---- */

static GtkWidget *first_guess(GtkWidget *w) {
    for (GtkWidget *c = gtk_widget_get_first_child(w); c; c = gtk_widget_get_next_sibling(c)) {
        if (GTK_IS_BUTTON(c) && gtk_widget_has_css_class(c, "guess"))
            return c;
        GtkWidget *d = first_guess(c);
        if (d)
            return d;
    }
    return NULL;
}

/* "the cat [MASK] on the mat": a click on the first guess fills the sentence; Ctrl+Z then
 * (the "text.undo" action of the focused widget, as the key does) undoes the fill in the
 * sentence, twice puts "[MASK]" back; the Layer spin keeps its number (it emptied: the focus
 * had fallen to it). */
static void test_undo_after_guess(void) {
    AtnWindow *win = new_window();
    open_and_wait(win, "demo");
    const char *masked = "the cat [MASK] on the mat";
    type_and_wait(win, masked);
    show_view(win, "head");
    AtnSession *s = atn_window_get_session(win);
    atn_session_select_head(s, 1, 3);
    settle(300);
    GtkWidget *layer = first_of_type(atn_window_get_view_widget(win, "head"), GTK_TYPE_SPIN_BUTTON);
    g_assert_nonnull(layer);
    g_assert_cmpstr(gtk_editable_get_text(GTK_EDITABLE(layer)), ==, "1");
    GtkWidget *guess = first_guess(atn_window_get_predictions(win));
    g_assert_nonnull(guess);
    /* a pointer click: the button takes the focus, then it is clicked */
    g_assert_true(gtk_widget_grab_focus(guess));
    model_wait w = {win, NULL, atn_session_get_n_runs(s)};
    g_signal_emit_by_name(guess, "clicked");
    g_assert_true(wait_for(idle_with_result, &w));
    settle(300);
    g_autofree char *filled = g_strdup(atn_window_get_text(win));
    g_test_message("filled: %s", filled);
    g_assert_null(strstr(filled, "[MASK]"));
    GtkWidget *focus = gtk_window_get_focus(GTK_WINDOW(win));
    if (!focus)
        g_error("after the guess click nothing has the focus: Ctrl+Z undoes nothing");
    g_test_message("focus: %s", G_OBJECT_TYPE_NAME(focus));
    w.runs = atn_session_get_n_runs(s);
    g_assert_true(gtk_widget_activate_action(focus, "text.undo", NULL));
    settle(100);
    g_assert_cmpstr(gtk_editable_get_text(GTK_EDITABLE(layer)), ==, "1");
    g_assert_cmpstr(atn_window_get_text(win), ==, "the cat  on the mat");   /* GTK 4.8: the insertion */
    g_assert_true(gtk_widget_activate_action(gtk_window_get_focus(GTK_WINDOW(win)), "text.undo", NULL));
    settle(300);
    g_assert_cmpstr(gtk_editable_get_text(GTK_EDITABLE(layer)), ==, "1");
    g_assert_cmpstr(atn_window_get_text(win), ==, masked);   /* then the deletion */
    g_assert_true(wait_for(idle_with_result, &w));
    g_assert_cmpint(atn_session_get_layer(s), ==, 1);
    destroy_window(win);
}

/* ---- the What-if comparison's figures ---- */

static gboolean whatif_done(gpointer data) {
    return !atn_whatif_view_get_busy(data) && atn_whatif_view_get_diff(data) != NULL;
}

/* demo with head 3 of layer 1 switched off, in a w x h window: the What-if page's three
 * figures (original, changed, difference) fill their third of the pane, their cells at least
 * half the figure's width at 1920 px (at 200 px high they were about 100 px across), 0.4 of it
 * at 1280 px (labels and colour bar take the rest), every token labelled. */
static void whatif_figures_at(int w, int h) {
    AtnWindow *win = g_object_new(ATN_TYPE_WINDOW, "default-width", w, "default-height", h, NULL);
    gtk_window_present(GTK_WINDOW(win));
    open_and_wait(win, "demo");
    type_and_wait(win, "the cat sat on the mat because it was tired.");
    AtnSession *s = atn_window_get_session(win);
    model_wait mw = {win, NULL, atn_session_get_n_runs(s)};
    g_autoptr(AtnWhatif) off = atn_whatif_change_head(NULL, 4, 16, 1, 3, ATN_WHATIF_SWITCH_OFF);
    atn_session_set_whatif(s, off);
    g_assert_true(wait_for(idle_with_result, &mw));
    show_view(win, "whatif");
    AtnWhatifView *wv = ATN_WHATIF_VIEW(atn_window_get_view_widget(win, "whatif"));
    g_assert_true(wait_for(whatif_done, wv));
    settle(400);
    for (int i = 0; i < 3; i++) {
        AtnHeatmap *hm = atn_whatif_view_get_pair(wv, i);
        atn_heatmap_layout L;
        g_assert_true(atn_heatmap_get_layout(hm, &L));
        int fw = gtk_widget_get_width(GTK_WIDGET(hm));
        g_test_message("%dx%d: figure %d is %dx%d px, its cells %.0f px across, labels every %d", w, h, i, fw,
                       gtk_widget_get_height(GTK_WIDGET(hm)), L.cells.w, L.row_label_step);
        if (L.cells.w < (w >= 1920 ? 0.5 : 0.4) * fw)   /* at 1280 px three figures share about 830 px */
            g_error("at %dx%d the What-if figure %d draws its cells %.0f px across in %d px", w, h, i, L.cells.w, fw);
        g_assert_cmpint(L.row_label_step, ==, 1);
        g_assert_cmpint(L.col_label_step, ==, 1);
    }
    destroy_window(win);
}

static void test_whatif_figures_fill(void) {
    whatif_figures_at(1280, 720);
    whatif_figures_at(1920, 1080);
}

/* ---- the Trace's side heatmap at a large text size ---- */

static gboolean is_fullscreen(gpointer data) { return gtk_window_is_fullscreen(GTK_WINDOW(data)); }

/* The side heatmap of demo's 13 tokens draws every label, none smaller than at the normal
 * text size (12 px): it drew them at 0.8 of that, half the size of the rest of the page. */
static void assert_trace_labels(AtnWindow *win, double scale, const char *where) {
    AtnTraceView *tv = show_trace(win, 1, 15, 0);
    settle(400);
    atn_heatmap_layout L;
    g_assert_true(atn_heatmap_get_layout(atn_trace_view_get_heatmap(tv), &L));
    g_test_message("%s: labels at %.1f px (every %d), cells %.0f px", where, L.label_size * scale, L.row_label_step,
                   L.cells.w);
    g_assert_cmpint(L.row_label_step, ==, 1);
    g_assert_cmpint(L.col_label_step, ==, 1);
    if (L.label_size * scale < 12.0 - 1e-6)
        g_error("%s: the trace's side heatmap labels are %.1f px, below the normal 12", where, L.label_size * scale);
}

/* Presentation mode on the 1920x1080 screen, and Text size 1.6 (presentation's scale) in a
 * 1280x720 window. */
static void test_trace_labels_large_text(void) {
    AtnWindow *win = g_object_new(ATN_TYPE_WINDOW, "default-width", 1200, "default-height", 780, NULL);
    atn_window_set_presentation(win, TRUE);
    gtk_window_present(GTK_WINDOW(win));
    open_and_wait(win, "demo");
    type_and_wait(win, "the cat sat on the mat because it was tired.");
    g_assert_true(wait_for(is_fullscreen, win));
    assert_trace_labels(win, 1.6 * atn_prefs_get_font_scale(atn_prefs_get_default()), "presentation 1920x1080");
    destroy_window(win);
    win = text_size_window(1280, 720, 1.6);
    open_and_wait(win, "demo");
    type_and_wait(win, "the cat sat on the mat because it was tired.");
    assert_trace_labels(win, 1.6, "Text size 1.6 at 1280x720");
    text_size_done(win);
}

/* ---- Get a Model's suggestions ---- */

static gboolean not_idle(gpointer data) { return atn_get_model_dialog_get_state(data) != ATN_GET_MODEL_IDLE; }

/* The dialog lists the models courses use (the five among them), each with its size;
 * clicking gpt2's puts its id in the entry and looks it up (against a Hub that is not there:
 * port 9 of this machine, which fails at once, so the lookup's failure is what is seen). */
static void test_get_model_suggestions(void) {
    g_setenv("HF_ENDPOINT", "http://127.0.0.1:9", TRUE);
    g_setenv("HF_HUB_ETAG_TIMEOUT", "2", TRUE);
    AtnWindow *win = new_window();
    AtnGetModelDialog *d = g_object_ref(atn_get_model_dialog_new(win));
    gtk_window_present(GTK_WINDOW(d));
    settle(200);
    GList *buttons = atn_get_model_dialog_get_suggestions(d);
    const char *want[] = {"google-bert/bert-base-uncased", "google-bert/bert-base-chinese", "hfl/chinese-roberta-wwm-ext",
                          "openai-community/gpt2", "Qwen/Qwen2.5-0.5B"};
    GtkWidget *gpt2 = NULL;
    for (size_t k = 0; k < G_N_ELEMENTS(want); k++) {
        gboolean seen = FALSE;
        for (GList *b = buttons; b; b = b->next) {
            const char *id = g_object_get_data(b->data, "id");
            if (strcmp(id, want[k]))
                continue;
            seen = TRUE;
            g_assert_true(gtk_widget_get_mapped(b->data));
            GtkWidget *label = gtk_button_get_child(GTK_BUTTON(b->data));
            const char *text = gtk_label_get_text(GTK_LABEL(label));
            g_test_message("%s", text);
            g_assert_nonnull(strstr(text, id));
            g_assert_nonnull(strstr(text, " MB"));   /* its size */
            if (!strcmp(id, "openai-community/gpt2"))
                gpt2 = b->data;
        }
        if (!seen)
            g_error("Get a Model does not suggest %s", want[k]);
    }
    g_signal_emit_by_name(gpt2, "clicked");
    g_assert_true(wait_for(not_idle, d));
    AtnGetModelState st = atn_get_model_dialog_get_state(d);
    g_assert_true(st == ATN_GET_MODEL_LOOKING_UP || st == ATN_GET_MODEL_FAILED);
    settle(100);
    g_test_message("%s", atn_get_model_dialog_get_message(d));
    g_assert_nonnull(strstr(atn_get_model_dialog_get_message(d), "openai-community/gpt2"));
    atn_get_model_dialog_cancel(d);
    gtk_window_destroy(GTK_WINDOW(d));
    g_object_unref(d);
    destroy_window(win);
    g_unsetenv("HF_ENDPOINT");
}

int main(int argc, char **argv) {
    if (!ui_test_init(&argc, &argv))
        return 0;
    atn_prefs_keep_in_memory(atn_prefs_get_default());
    g_test_add_func("/ui/polish/model-name-whole-at-1280", test_model_name_whole_at_1280);
    g_test_add_func("/ui/polish/heatmap-one-format", test_heatmap_one_format);
    g_test_add_func("/ui/polish/trace-columns-one-format", test_trace_columns_one_format);
    g_test_add_func("/ui/polish/pair-boundary", test_pair_boundary);
    g_test_add_func("/ui/polish/pdf-chinese-face", test_pdf_chinese_face);
    g_test_add_func("/ui/polish/undo-after-guess", test_undo_after_guess);
    g_test_add_func("/ui/polish/whatif-figures-fill", test_whatif_figures_fill);
    g_test_add_func("/ui/polish/trace-labels-large-text", test_trace_labels_large_text);
    g_test_add_func("/ui/polish/get-model-suggestions", test_get_model_suggestions);
    return g_test_run();
}
