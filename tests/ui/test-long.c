/* The Head view at any length (issue 35): a random model's 512 and 4,096 tokens in a real
 * window under Xvfb (a 1920x1080 screen).  The figure uses the view (at 512 tokens in a
 * 1580x980 window the cells are at least 560 px on their short side); with more tokens than
 * pixels the cells are drawn pooled in k x k blocks, each block's colour its largest weight (or
 * its mean), checked against the max / mean of the block computed here from the result's head
 * and against the pixels drawn; zooming in resolves to single cells again.  The time from the
 * model to the first heatmap at 4,096 tokens is printed.
 *
 * Run with --tap (meson does).  Without a display it reports "1..0 # SKIP no display". */
#include "ui-test-util.h"

#include <sys/resource.h>

#include "atn-head-view-scale.h"
#include "atn-heatmap-crop.h"
#include "atn-memory-limit.h"
#include "atn-token-spans.h"
#include "atn-whatif.h"

/* This process's CPU seconds (user + system): the machine is shared, the wall clock not ours. */
static double cpu_s(void) {
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_utime.tv_sec + u.ru_stime.tv_sec + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

static double result_cpu;   /* cpu_s() when the first result came */
static double first_cpu;    /* cpu_s() when the first heatmap was laid out */

static void note_time(gint64 *t) {
    if (!*t)
        result_cpu = cpu_s();
    if (!*t)
        *t = g_get_monotonic_time();
}

/* A window w x h on random:SHAPE with n token ids (no tokenizer), the Head view shown; the
 * milliseconds from the session's first result (the forward done) to the heatmap's first layout. */
static AtnWindow *long_window(int w, int h, const char *source, int n, double *first_ms) {
    AtnWindow *win = g_object_new(ATN_TYPE_WINDOW, "default-width", w, "default-height", h, NULL);
    gtk_window_present(GTK_WINDOW(win));
    show_view(win, "head");
    AtnSession *s = atn_window_get_session(win);
    atn_error err = {0};
    atn_model *m = atn_model_open(source, NULL, NULL, &err);
    g_assert_nonnull(m);
    AtnModelHandle *handle = atn_model_handle_new(m, source);
    int32_t *ids = g_new(int32_t, n);
    for (int i = 0; i < n; i++)
        ids[i] = i == 0 ? 101 : i == n - 1 ? 102 : 1000 + (i * 7919) % 20000;
    atn_session_set_ids(s, ids, n);
    g_free(ids);
    gint64 t_result = 0;
    gulong id = g_signal_connect_swapped(s, "notify::result", G_CALLBACK(note_time), &t_result);
    atn_session_set_model(s, handle);
    g_object_unref(handle);
    /* the first heatmap: the Head view's figure laid out (drawn) after the result came */
    AtnHeatmap *hm = head_heatmap(win);
    atn_heatmap_layout L;
    while (!t_result || atn_heatmap_get_rows(hm) != n || !atn_heatmap_get_layout(hm, &L))
        g_main_context_iteration(NULL, TRUE);
    if (first_ms)
        *first_ms = (g_get_monotonic_time() - t_result) / 1000.0;
    first_cpu = cpu_s();
    g_signal_handler_disconnect(s, id);
    model_wait mw = {win, NULL, 0};
    g_assert_true(wait_for(idle_with_result, &mw));
    settle(100);
    return win;
}

/* The head the Head view shows, from the session's result (not through the heatmap). */
static const float *shown_head(AtnWindow *win) {
    AtnSession *s = atn_window_get_session(win);
    return atn_result_get_head(atn_session_get_result(s), atn_session_get_layer(s), atn_session_get_head(s));
}

/* Max or mean of the k x k block of cell (row, col), counted here. */
static double block_of(const float *v, int n, int k, int row, int col, gboolean mean) {
    int a = row / k * k, b = col / k * k;
    double best = -INFINITY, sum = 0;
    int count = 0;
    for (int i = a; i < MIN(n, a + k); i++)
        for (int j = b; j < MIN(n, b + k); j++) {
            best = fmax(best, v[(size_t)i * n + j]);
            sum += v[(size_t)i * n + j];
            count++;
        }
    return mean ? sum / count : best;
}

static void test_size_512(void) {
    AtnWindow *win = long_window(1580, 980, "random:bert-tiny", 512, NULL);
    AtnHeatmap *hm = head_heatmap(win);
    atn_heatmap_layout L;
    g_assert_true(atn_heatmap_get_layout(hm, &L));
    GtkWidget *view = atn_window_get_view_widget(win, "head");
    printf("# 512 tokens, 1580x980 window: Head view %dx%d, heatmap widget %dx%d, cells %.0fx%.0f px\n",
           gtk_widget_get_width(view), gtk_widget_get_height(view), gtk_widget_get_width(GTK_WIDGET(hm)),
           gtk_widget_get_height(GTK_WIDGET(hm)), L.cells.w, L.cells.h);
    g_assert_cmpfloat(fmin(L.cells.w, L.cells.h), >=, 560);
    /* labels every k-th token, k round, and none within a step of the selected query's */
    AtnSession *s = atn_window_get_session(win);
    atn_session_set_query(s, 201);
    settle(50);
    g_assert_true(atn_heatmap_get_layout(hm, &L));
    int step = L.row_label_step;
    printf("# 512 tokens: a row label every %d tokens (%.1f px apart), a column label every %d\n", step,
           step * L.cell_h, L.col_label_step);
    g_assert_cmpint(step, >, 1);
    g_assert_true(step == 2 || step == 5 || step == 10 || step == 20 || step == 50);
    atn_heatmap_spec spec;
    atn_heatmap_spec_init(&spec);
    spec.rows = spec.cols = 512;
    spec.highlight_row = 201;
    spec.highlight_col = spec.hover_row = spec.hover_col = -1;
    double nearest = INFINITY;
    for (int i = 0; i < 512; i += step)
        if (!atn_render_heatmap_label_hidden(&spec, &L, i, TRUE))
            nearest = fmin(nearest, abs(i - 201) * L.cell_h);
    /* a label is a line of the label font; thinned labels are at least 0.95 of one apart */
    g_assert_cmpfloat(nearest, >=, step * L.cell_h - 1e-9);
    g_assert_true(atn_render_heatmap_label_hidden(&spec, &L, 201 / step * step, TRUE));
    destroy_window(win);
}

/* One pixel of an RGBA download at widget point (x, y), against cm's colour of v. */
static void assert_pixel(GBytes *px, int width, double x, double y, atn_colormap cm, double v, double vmin,
                         double vmax) {
    const guchar *p = (const guchar *)g_bytes_get_data(px, NULL) + ((size_t)floor(y) * width + (size_t)floor(x)) * 4;
    double rgb[3];
    atn_colormap_rgb(cm, (v - vmin) / (vmax - vmin), rgb);
    /* GdkTexture's default download: B8G8R8A8 premultiplied (opaque) on little-endian */
    int want[3] = {(int)lround(rgb[0] * 255), (int)lround(rgb[1] * 255), (int)lround(rgb[2] * 255)};
    int got[3] = {p[2], p[1], p[0]};
    for (int c = 0; c < 3; c++)
        g_assert_cmpint(abs(got[c] - want[c]), <=, 2);
}

static void test_pooled(void) {
    /* 2,048 tokens (blocks of 4) in the suite; ATN_TEST_LONG=1 (make test-long) takes 4,096 */
    int n = g_getenv("ATN_TEST_LONG") ? 4096 : 2048;
    double first_ms = 0;
    g_autofree char *source = g_strdup_printf("random:bert-tiny#%d", n);
    AtnWindow *win = long_window(1580, 980, source, n, &first_ms);
    AtnHeatmap *hm = head_heatmap(win);
    printf("# %d tokens (random bert-tiny): forward %.0f ms, then the first heatmap laid out %.0f ms later\n", n,
           atn_result_get_elapsed_ms(atn_session_get_result(atn_window_get_session(win))), first_ms);
    const float *v = shown_head(win);
    atn_pool_mode mode;
    int k = atn_heatmap_get_pool(hm, &mode);
    atn_heatmap_layout L;
    g_assert_true(atn_heatmap_get_layout(hm, &L));
    printf("# %d tokens: cells %.0fx%.0f px, blocks of %dx%d\n", n, L.cells.w, L.cells.h, k, k);
    g_assert_cmpint(mode, ==, ATN_POOL_MAX);
    g_assert_cmpint(k, ==, (int)ceil(n / fmin(L.cells.w, L.cells.h)));
    g_assert_nonnull(atn_heatmap_get_pool_legend(hm));
    g_autofree char *want_legend = g_strdup_printf("%d×%d", k, k);
    g_assert_nonnull(strstr(atn_heatmap_get_pool_legend(hm), want_legend));
    /* the largest weight off the first column and a few other cells: the block's max */
    size_t arg = 0;
    for (size_t i = 0; i < (size_t)n * n; i++)
        if (i % n != 0 && v[i] > v[arg])
            arg = i;
    int probes[][2] = {{(int)(arg / n), (int)(arg % n)}, {0, 0}, {n - 1, n - 1}, {1000, 37}, {n / 2 - 1, n - 77}};
    for (size_t p = 0; p < G_N_ELEMENTS(probes); p++) {
        int r = probes[p][0], c = probes[p][1];
        g_assert_cmpfloat(atn_heatmap_get_drawn_value(hm, r, c), ==, (float)block_of(v, n, k, r, c, FALSE));
    }
    /* the pixels: the argmax's block is drawn in the colour of the argmax */
    int w, h;
    g_autoptr(GBytes) px = render_widget(GTK_WIDGET(hm), &w, &h);
    int ar = (int)(arg / n), ac = (int)(arg % n);
    double cx = L.cells.x + (ac / k * k + k / 2.0) * L.cell_w, cy = L.cells.y + (ar / k * k + k / 2.0) * L.cell_h;
    assert_pixel(px, w, cx, cy, atn_heatmap_get_colormap(hm), v[arg], L.vmin, L.vmax);
    /* the tooltip of a pooled pixel names its block and the block's largest weight */
    g_autofree char *tip = atn_heatmap_dup_cell_text(hm, ar, ac);
    g_autofree char *want_tip = g_strdup_printf("block %d–%d × %d–%d: largest %.4f", ar / k * k, ar / k * k + k - 1,
                                                ac / k * k, ac / k * k + k - 1, v[arg]);
    g_assert_nonnull(strstr(tip, want_tip));
    /* mean blocks */
    atn_heatmap_set_pool_mode(hm, ATN_POOL_MEAN);
    g_assert_cmpint(atn_heatmap_get_pool(hm, &mode), ==, k);
    g_assert_cmpint(mode, ==, ATN_POOL_MEAN);
    for (size_t p = 0; p < G_N_ELEMENTS(probes); p++) {
        int r = probes[p][0], c = probes[p][1];
        g_assert_cmpfloat(fabs(atn_heatmap_get_drawn_value(hm, r, c) - block_of(v, n, k, r, c, TRUE)), <=, 1e-7);
    }
    atn_heatmap_set_pool_mode(hm, ATN_POOL_MAX);
    /* zooming in resolves to single cells: each visible cell gets a pixel */
    for (int i = 0; i < 8 && atn_heatmap_get_pool(hm, NULL) > 1; i++) {
        atn_heatmap_zoom_at(hm, 2.0, -1, -1);
        settle(30);
    }
    g_assert_cmpint(atn_heatmap_get_pool(hm, NULL), ==, 1);
    g_assert_null(atn_heatmap_get_pool_legend(hm));
    g_assert_true(atn_heatmap_get_layout(hm, &L));
    g_assert_cmpfloat(L.cell_w, >=, 1);
    g_assert_cmpfloat(L.cell_h, >=, 1);
    int r = L.view_row0 + 3, c = L.view_col0 + 5;
    g_assert_cmpfloat(atn_heatmap_get_drawn_value(hm, r, c), ==, v[(size_t)r * n + c]);
    destroy_window(win);
}

/* The Head view's colour scales, set from its controls as a user does: log draws log10 of
 * each weight, rank each weight's rank in its row, and "leave out 1st" takes the first key out
 * of the range and says its share; the numbers are worked out here from the result's head. */
static void test_scales(void) {
    int n = 96;
    AtnWindow *win = long_window(1580, 980, "random:bert-tiny", n, NULL);
    AtnHeatmap *hm = head_heatmap(win);
    const float *v = shown_head(win);
    GtkWidget *box = atn_head_view_get_scale_controls(ATN_HEAD_VIEW(atn_window_get_view_widget(win, "head")));
    g_assert_true(gtk_widget_get_mapped(box));
    const int cells[][2] = {{0, 0}, {5, 17}, {40, 3}, {95, 95}, {60, 80}};
    /* log */
    gtk_drop_down_set_selected(atn_head_view_scale_get_scale_dropdown(box), 1);
    settle(50);
    gboolean drop;
    g_assert_cmpint(atn_heatmap_get_colour_scale(hm, &drop, NULL), ==, ATN_SCALE_LOG);
    double lo = INFINITY, hi = 0;
    for (int i = 0; i < n * n; i++)
        if (v[i] > 0)
            lo = fmin(lo, v[i]), hi = fmax(hi, v[i]);
    for (size_t c = 0; c < G_N_ELEMENTS(cells); c++) {
        float w = v[cells[c][0] * n + cells[c][1]];
        g_assert_cmpfloat(atn_heatmap_get_drawn_value(hm, cells[c][0], cells[c][1]), ==, (float)log10(w));
    }
    atn_heatmap_layout L;
    g_assert_true(atn_heatmap_get_layout(hm, &L));
    g_assert_cmpfloat(fabs(L.vmin - log10(lo)), <, 1e-9);
    g_assert_cmpfloat(fabs(L.vmax - log10(hi)), <, 1e-9);
    g_assert_cmpstr(atn_heatmap_get_colorbar_label(hm), ==, "weight");   /* the widget's own: tooltips keep weights */
    /* rank in its row: how many of the row are smaller, ties counted half */
    gtk_drop_down_set_selected(atn_head_view_scale_get_scale_dropdown(box), 2);
    settle(50);
    g_assert_cmpint(atn_heatmap_get_colour_scale(hm, NULL, NULL), ==, ATN_SCALE_RANK);
    for (size_t c = 0; c < G_N_ELEMENTS(cells); c++) {
        int r = cells[c][0];
        float w = v[r * n + cells[c][1]];
        int less = 0, same = 0;
        for (int j = 0; j < n; j++)
            less += v[r * n + j] < w, same += v[r * n + j] == w;
        double want = (less + (same - 1) / 2.0) / (n - 1);
        g_assert_cmpfloat(fabs(atn_heatmap_get_drawn_value(hm, r, cells[c][1]) - want), <, 1e-6);
    }
    g_assert_true(atn_heatmap_get_layout(hm, &L));
    g_assert_cmpfloat(L.vmin, ==, 0);
    g_assert_cmpfloat(L.vmax, ==, 1);
    /* linear with the first key left out: the range is the rest's, the share is said */
    gtk_drop_down_set_selected(atn_head_view_scale_get_scale_dropdown(box), 0);
    gtk_check_button_set_active(atn_head_view_scale_get_drop_first(box), TRUE);
    settle(50);
    double share = 0, share_got;
    hi = 0;
    for (int i = 0; i < n; i++) {
        share += v[i * n];
        for (int j = 1; j < n; j++)
            hi = fmax(hi, v[i * n + j]);
    }
    share /= n;
    g_assert_cmpint(atn_heatmap_get_colour_scale(hm, &drop, &share_got), ==, ATN_SCALE_LINEAR);
    g_assert_true(drop);
    g_assert_cmpfloat(fabs(share_got - share), <, 1e-9);
    g_assert_true(atn_heatmap_get_layout(hm, &L));
    g_assert_cmpfloat(L.vmax, ==, hi);
    g_autofree char *pct = g_strdup_printf("%.0f%%", 100 * share);
    g_assert_nonnull(atn_heatmap_get_pool_legend(hm));
    g_assert_nonnull(strstr(atn_heatmap_get_pool_legend(hm), pct));
    /* the Block mean control */
    gtk_drop_down_set_selected(atn_head_view_scale_get_pool_dropdown(box), 1);
    atn_pool_mode mode;
    atn_heatmap_get_pool(hm, &mode);
    g_assert_cmpint(mode, ==, ATN_POOL_MEAN);
    destroy_window(win);
}

/* A token span typed in the Head view ("120-180"): both axes show tokens 120..180 and each
 * cell drawn is the head's, cut here by hand; a bad span is refused and changes nothing; ""
 * gives the whole matrix back. */
static void test_span(void) {
    int n = 512;
    AtnWindow *win = long_window(1580, 980, "random:bert-tiny", n, NULL);
    AtnHeatmap *hm = head_heatmap(win);
    const float *v = shown_head(win);
    GtkWidget *box = atn_head_view_get_scale_controls(ATN_HEAD_VIEW(atn_window_get_view_widget(win, "head")));
    GtkEntry *e = atn_head_view_scale_get_span(box);
    gtk_editable_set_text(GTK_EDITABLE(e), "120-180");
    g_signal_emit_by_name(e, "activate");
    settle(50);
    int r0, c0, nr, nc;
    atn_heatmap_get_visible(hm, &r0, &c0, &nr, &nc);
    g_assert_cmpint(r0, ==, 120);
    g_assert_cmpint(c0, ==, 120);
    g_assert_cmpint(nr, ==, 61);
    g_assert_cmpint(nc, ==, 61);
    g_assert_false(gtk_widget_has_css_class(GTK_WIDGET(e), "error"));
    float *crop = g_new(float, 61 * 61);   /* cut by hand from the capture's head */
    for (int i = 0; i < 61; i++)
        memcpy(crop + i * 61, v + (size_t)(120 + i) * n + 120, 61 * sizeof *crop);
    atn_heatmap_layout L;
    g_assert_true(atn_heatmap_get_layout(hm, &L));
    g_assert_cmpint(atn_heatmap_get_pool(hm, NULL), ==, 1);   /* 61 tokens: single cells */
    for (int i = 0; i < 61; i++)
        for (int j = 0; j < 61; j++) {
            int row, col;   /* the cell under the centre of (i, j)'s place in the crop */
            g_assert_true(atn_heatmap_cell_at(hm, L.cells.x + (j + 0.5) * L.cell_w, L.cells.y + (i + 0.5) * L.cell_h,
                                              &row, &col));
            g_assert_cmpfloat(atn_heatmap_get_drawn_value(hm, row, col), ==, crop[i * 61 + j]);
        }
    g_free(crop);
    /* refused: reversed, past the end, not a span */
    const char *bad[] = {"180-120", "500-512", "12O-180", "-5-3"};
    for (size_t k = 0; k < G_N_ELEMENTS(bad); k++) {
        g_assert_false(atn_head_view_scale_set_span(box, bad[k]));
        g_assert_true(gtk_widget_has_css_class(GTK_WIDGET(e), "error"));
        atn_heatmap_get_visible(hm, &r0, &c0, &nr, &nc);
        g_assert_true(r0 == 120 && nr == 61);
    }
    g_assert_true(atn_head_view_scale_set_span(box, ""));
    atn_heatmap_get_visible(hm, &r0, &c0, &nr, &nc);
    g_assert_true(r0 == 0 && c0 == 0 && nr == n && nc == n);
    destroy_window(win);
}

/* The span a drag from p0 to p1 (pixels along the axis) takes, worked out here from the layout
 * and the pooling as atn-heatmap-pool.h draws it: the tokens under the two pixels, widened to
 * the k x k blocks they fall in (blocks start at multiples of k). */
static void span_by_hand(const atn_heatmap_layout *L, int k, int n, gboolean rows, double p0, double p1, int *first,
                         int *last) {
    double origin = rows ? L->cells.y : L->cells.x, size = rows ? L->cell_h : L->cell_w;
    int view0 = rows ? L->view_row0 : L->view_col0;
    int a = view0 + (int)((fmin(p0, p1) - origin) / size), b = view0 + (int)((fmax(p0, p1) - origin) / size);
    *first = a - a % k;
    *last = MIN(n - 1, b - b % k + k - 1);
}

/* The widget's pixel at (x, y) as 0xRRGGBB. */
static guint32 pixel_at(GBytes *px, int width, double x, double y) {
    const guchar *p = (const guchar *)g_bytes_get_data(px, NULL) + ((size_t)floor(y) * width + (size_t)floor(x)) * 4;
    return ((guint32)p[2] << 16) | ((guint32)p[1] << 8) | p[0];
}

/* Both axes' visible block is first..last, the span box says so and Whole input shows. */
static void assert_cropped(AtnHeatmap *hm, GtkWidget *box, int first, int last) {
    int r0, c0, nr, nc, f, c;
    atn_heatmap_get_visible(hm, &r0, &c0, &nr, &nc);
    g_assert_cmpint(r0, ==, first);
    g_assert_cmpint(c0, ==, first);
    g_assert_cmpint(nr, ==, last - first + 1);
    g_assert_cmpint(nc, ==, last - first + 1);
    g_assert_true(atn_heatmap_get_span(hm, &f, &c));
    g_assert_true(f == first && c == last - first + 1);
    g_autofree char *want = g_strdup_printf("%d-%d", first, last);
    g_assert_cmpstr(gtk_editable_get_text(GTK_EDITABLE(atn_head_view_scale_get_span(box))), ==, want);
    g_assert_true(gtk_widget_get_visible(GTK_WIDGET(atn_head_view_scale_get_whole(box))));
}

static void assert_whole(AtnHeatmap *hm, GtkWidget *box, int n) {
    int r0, c0, nr, nc;
    atn_heatmap_get_visible(hm, &r0, &c0, &nr, &nc);
    g_assert_true(r0 == 0 && c0 == 0 && nr == n && nc == n);
    g_assert_false(atn_heatmap_get_span(hm, NULL, NULL));
    g_assert_cmpstr(gtk_editable_get_text(GTK_EDITABLE(atn_head_view_scale_get_span(box))), ==, "");
    g_assert_false(gtk_widget_get_visible(GTK_WIDGET(atn_head_view_scale_get_whole(box))));
}

/* Dragging along an axis of the pooled overview crops both axes to the tokens dragged over,
 * widened to the pooled blocks (worked out here from the layout); the drag is drawn as it goes
 * (the labels under it tinted in the accent colour); the crop is what Export writes (the same
 * picture as typing the span); the token lines show the crop's tokens, their weights and the
 * query's lines among them; a double click on an axis, Escape and "Whole input" give the
 * whole input back; a short press is no crop; a drag on the cells does not crop. */
static void test_drag_crop(void) {
    int n = g_getenv("ATN_TEST_LONG") ? 4096 : 1024;   /* blocks of 2 here, of 8 in make test-long */
    g_autofree char *source = g_strdup_printf("random:bert-tiny#%d", n);
    AtnWindow *win = long_window(1580, 980, source, n, NULL);
    AtnHeatmap *hm = head_heatmap(win);
    GtkWidget *view = atn_window_get_view_widget(win, "head");
    GtkWidget *box = atn_head_view_get_scale_controls(ATN_HEAD_VIEW(view));
    const float *v = shown_head(win);
    atn_heatmap_layout L;
    g_assert_true(atn_heatmap_get_layout(hm, &L));
    int k = atn_heatmap_get_pool(hm, NULL);
    g_assert_cmpint(k, >, 1);   /* the pooled overview */
    assert_whole(hm, box, n);
    /* along the rows' labels, downwards, from 100.3 px to 121.7 px into the cells */
    double x = L.cells.x - 6, y0 = L.cells.y + 100.3, y1 = L.cells.y + 121.7;
    int first, last;
    span_by_hand(&L, k, n, TRUE, y0, y1, &first, &last);
    printf("# %d tokens, blocks of %d: a drag over %.1f px of the rows' axis takes tokens %d-%d\n", n, k, y1 - y0,
           first, last);
    g_autoptr(GBytes) before = NULL;
    int w, h;
    before = render_widget(GTK_WIDGET(hm), &w, &h);
    atn_heatmap_axis_drag(hm, 0, x, y0);
    atn_heatmap_axis_drag(hm, 1, x, y0 + 1);   /* under 3 px: still a click */
    g_assert_false(atn_heatmap_get_band(hm, NULL));
    atn_heatmap_axis_drag(hm, 1, x, y1);
    AtnHeatmapCropBand band;
    g_assert_true(atn_heatmap_get_band(hm, &band));
    g_assert_cmpint(band.axis, ==, ATN_CROP_AXIS_ROWS);
    g_assert_cmpint(band.first, ==, first);
    g_assert_cmpint(band.count, ==, last - first + 1);
    {   /* drawn: the labels' strip under the drag turns to the accent colour (blue over them) */
        g_autoptr(GBytes) during = render_widget(GTK_WIDGET(hm), &w, &h);
        double py = L.cells.y + ((first + last + 1) / 2.0 - L.view_row0) * L.cell_h, px = 2;
        guint32 a = pixel_at(before, w, px, py), b = pixel_at(during, w, px, py);
        g_assert_cmpuint(a, !=, b);
        g_assert_cmpint((int)(b & 0xff), >, (int)(b >> 16) + 20);   /* blue over red */
        g_assert_cmpint((int)(a & 0xff), <=, (int)(a >> 16) + 20);
    }
    atn_heatmap_axis_drag(hm, 2, x, y1);
    settle(30);
    g_assert_false(atn_heatmap_get_band(hm, NULL));
    assert_cropped(hm, box, first, last);
    /* each cell drawn is the head's, cut here by hand */
    int count = last - first + 1;
    g_assert_true(atn_heatmap_get_layout(hm, &L));
    g_assert_cmpint(atn_heatmap_get_pool(hm, NULL), ==, 1);
    for (int i = 0; i < count; i += 3)
        for (int j = 0; j < count; j += 2) {
            int row, col;
            g_assert_true(atn_heatmap_cell_at(hm, L.cells.x + (j + 0.5) * L.cell_w, L.cells.y + (i + 0.5) * L.cell_h,
                                              &row, &col));
            g_assert_cmpint(row, ==, first + i);
            g_assert_cmpint(col, ==, first + j);
            g_assert_cmpfloat(atn_heatmap_get_drawn_value(hm, row, col), ==, v[(size_t)(first + i) * n + first + j]);
        }
    /* the token lines show the same tokens: labels, weights and the query's lines of the crop */
    AtnTokenLines *lines = ATN_TOKEN_LINES(atn_head_view_get_token_lines(ATN_HEAD_VIEW(view)));
    const char *const *tokens = atn_result_get_tokens(atn_session_get_result(atn_window_get_session(win)));
    g_assert_cmpint(atn_token_lines_get_n(lines), ==, count);
    for (int i = 0; i < count; i += 7) {
        g_assert_cmpstr(atn_token_lines_get_label(lines, i), ==, tokens[first + i]);
        for (int j = 0; j < count; j += 5)
            g_assert_cmpfloat(atn_token_lines_get_weight(lines, i, j), ==, v[(size_t)(first + i) * n + first + j]);
    }
    atn_session_set_query(atn_window_get_session(win), first + 5);
    atn_token_lines_set_threshold(lines, 0);   /* every key of the query's row (inside the crop) */
    int32_t from[1024], to[1024];
    g_assert_cmpint(atn_token_lines_get_lines(lines, from, to, 1024), ==, count);
    g_assert_true(from[0] == 5 && from[count - 1] == 5 && to[0] == 0 && to[count - 1] == count - 1);
    atn_token_lines_set_threshold(lines, 0.01);
    /* Export writes the crop: the same picture as the span typed (itself `export --range`'s,
       /ui/span-export), smaller than the whole matrix's */
    g_autoptr(AtnFigure) dragged = atn_figure_source_dup_figure(ATN_FIGURE_SOURCE(view));
    g_autofree char *dir = g_dir_make_tmp("atn-crop-XXXXXX", NULL);
    g_autofree char *pa = g_build_filename(dir, "dragged.png", NULL), *pb = g_build_filename(dir, "typed.png", NULL);
    g_assert_true(atn_figure_save(dragged, pa, 1.0, NULL));
    /* a double click on the columns' axis: the whole input */
    atn_heatmap_press(hm, 2, L.cells.x + L.cells.w / 2, L.cells.y + L.cells.h + 8);
    assert_whole(hm, box, n);
    g_autoptr(AtnFigure) whole = atn_figure_source_dup_figure(ATN_FIGURE_SOURCE(view));
    g_assert_cmpfloat(dragged->width * dragged->height, <, whole->width * whole->height);
    g_autofree char *typed_span = g_strdup_printf("%d-%d", first, last);
    g_assert_true(atn_head_view_scale_set_span(box, typed_span));
    g_autoptr(AtnFigure) typed = atn_figure_source_dup_figure(ATN_FIGURE_SOURCE(view));
    g_assert_true(atn_figure_save(typed, pb, 1.0, NULL));
    {
        gsize la, lb;
        g_autofree char *ba = NULL, *bb = NULL;
        g_assert_true(g_file_get_contents(pa, &ba, &la, NULL));
        g_assert_true(g_file_get_contents(pb, &bb, &lb, NULL));
        g_assert_cmpuint(la, ==, lb);
        g_assert_true(memcmp(ba, bb, la) == 0);
    }
    g_unlink(pa);
    g_unlink(pb);
    g_rmdir(dir);
    /* "Whole input" */
    g_signal_emit_by_name(atn_head_view_scale_get_whole(box), "clicked");
    assert_whole(hm, box, n);
    g_assert_cmpint(atn_token_lines_get_n(lines), ==, n);   /* the lines: every token again */
    /* along the columns' labels, leftwards (from the right end to the left) */
    g_assert_true(atn_heatmap_get_layout(hm, &L));
    double y = L.cells.y + L.cells.h + 10, x0 = L.cells.x + 400.2, x1 = L.cells.x + 371.9;
    span_by_hand(&L, k, n, FALSE, x0, x1, &first, &last);
    atn_heatmap_axis_drag(hm, 0, x0, y);
    atn_heatmap_axis_drag(hm, 1, x1, y);
    g_assert_true(atn_heatmap_get_band(hm, &band));
    g_assert_cmpint(band.axis, ==, ATN_CROP_AXIS_COLS);
    atn_heatmap_axis_drag(hm, 2, x1, y);
    assert_cropped(hm, box, first, last);
    /* a narrow span (a few pixels: under 1/64 of the input) is shown exactly too, beyond 64x */
    g_assert_true(atn_heatmap_press_key(hm, GDK_KEY_Escape, 0));
    span_by_hand(&L, k, n, FALSE, L.cells.x + 600.2, L.cells.x + 606.7, &first, &last);
    g_assert_cmpint(last - first + 1, <, n / 64);
    atn_heatmap_axis_drag(hm, 0, L.cells.x + 600.2, y);
    atn_heatmap_axis_drag(hm, 1, L.cells.x + 606.7, y);
    atn_heatmap_axis_drag(hm, 2, L.cells.x + 606.7, y);
    assert_cropped(hm, box, first, last);
    /* Escape: the whole input (and then it is the window's: nothing left to end) */
    g_assert_true(atn_heatmap_press_key(hm, GDK_KEY_Escape, 0));
    assert_whole(hm, box, n);
    g_assert_false(atn_heatmap_press_key(hm, GDK_KEY_Escape, 0));
    /* Escape during a drag ends it without a crop */
    atn_heatmap_axis_drag(hm, 0, x0, y);
    atn_heatmap_axis_drag(hm, 1, x1, y);
    g_assert_true(atn_heatmap_get_band(hm, NULL));
    g_assert_true(atn_heatmap_press_key(hm, GDK_KEY_Escape, 0));
    g_assert_false(atn_heatmap_get_band(hm, NULL));
    atn_heatmap_axis_drag(hm, 2, x1, y);
    assert_whole(hm, box, n);
    /* a short press is no crop; a drag starting on the cells is none either */
    atn_heatmap_axis_drag(hm, 0, x0, y);
    atn_heatmap_axis_drag(hm, 2, x0 + 2, y);
    assert_whole(hm, box, n);
    atn_heatmap_axis_drag(hm, 0, L.cells.x + 50, L.cells.y + 50);
    atn_heatmap_axis_drag(hm, 1, L.cells.x + 50, L.cells.y + 150);
    g_assert_false(atn_heatmap_get_band(hm, NULL));
    atn_heatmap_axis_drag(hm, 2, L.cells.x + 50, L.cells.y + 150);
    assert_whole(hm, box, n);
    destroy_window(win);
}

static gboolean whatif_idle(gpointer data) { return !atn_whatif_view_get_busy(data); }

/* The What-if page at 512 tokens: one box where positions and spans are typed, and a picker of
 * a span's two ends showing their tokens, stand in for 512 chips in each row; "0, 100-103"
 * hides exactly those keys in the run's what-if; a bad span is refused and changes nothing;
 * the picker's 300..297 adds 297-300. */
static void test_whatif_spans(void) {
    int n = 512;
    AtnWindow *win = long_window(1580, 980, "random:bert-tiny", n, NULL);
    show_view(win, "whatif");
    AtnWhatifView *wv = ATN_WHATIF_VIEW(atn_window_get_view_widget(win, "whatif"));
    GtkWidget *hide = atn_whatif_view_get_control(wv, "hide-chips");
    int children = 0;
    GtkWidget *kids[2] = {NULL, NULL};
    for (GtkWidget *c = gtk_widget_get_first_child(hide); c; c = gtk_widget_get_next_sibling(c), children++)
        if (children < 2)
            kids[children] = GTK_IS_FLOW_BOX_CHILD(c) ? gtk_flow_box_child_get_child(GTK_FLOW_BOX_CHILD(c)) : c;
    g_assert_cmpint(children, ==, 2);   /* the box and the picker of a span's ends */
    GtkWidget *entry = kids[0], *picker = kids[1];
    g_assert_true(GTK_IS_ENTRY(entry));
    AtnSession *s = atn_window_get_session(win);
    model_wait mw = {win, NULL, atn_session_get_n_runs(s)};
    gtk_editable_set_text(GTK_EDITABLE(entry), "0, 100-103");
    g_signal_emit_by_name(entry, "activate");
    g_assert_true(wait_for(idle_with_result, &mw));
    const atn_interventions *iv = atn_whatif_get(atn_session_get_whatif(s));
    g_assert_nonnull(iv);
    g_assert_cmpint(iv->n_hide, ==, 5);
    const int32_t want[] = {0, 100, 101, 102, 103};
    for (int i = 0; i < 5; i++)
        g_assert_cmpint(iv->hide_tokens[i], ==, want[i]);
    gtk_editable_set_text(GTK_EDITABLE(entry), "7, 600");
    g_signal_emit_by_name(entry, "activate");
    settle(50);
    g_assert_true(gtk_widget_has_css_class(entry, "error"));
    g_assert_nonnull(strstr(gtk_widget_get_tooltip_text(entry), "600"));
    g_assert_cmpint(atn_whatif_get(atn_session_get_whatif(s))->n_hide, ==, 5);
    /* the picker: the ends 300 and 297 (either order), their tokens shown, Add puts 297-300 in */
    GtkSpinButton *from, *to;
    GtkButton *add;
    GtkLabel *ends;
    atn_token_spans_picker_get(picker, &from, &to, &add, &ends);
    gtk_spin_button_set_value(from, 300);
    gtk_spin_button_set_value(to, 297);
    const char *const *tokens = atn_result_get_tokens(atn_session_get_result(s));
    g_autofree char *want_ends = g_strdup_printf("“%s” … “%s”: 4 tokens", tokens[297], tokens[300]);
    g_assert_cmpstr(gtk_label_get_text(ends), ==, want_ends);
    mw.runs = atn_session_get_n_runs(s);
    g_signal_emit_by_name(add, "clicked");
    g_assert_true(wait_for(idle_with_result, &mw));
    iv = atn_whatif_get(atn_session_get_whatif(s));
    const int32_t want2[] = {0, 100, 101, 102, 103, 297, 298, 299, 300};
    g_assert_cmpint(iv->n_hide, ==, G_N_ELEMENTS(want2));
    for (guint i = 0; i < G_N_ELEMENTS(want2); i++)
        g_assert_cmpint(iv->hide_tokens[i], ==, want2[i]);
    /* the text a list is shown as */
    const int32_t p[] = {0, 1, 2, 5, 7, 8, 120, 121, 122, 123};
    g_autofree char *text = atn_token_spans_format(p, G_N_ELEMENTS(p));
    g_assert_cmpstr(text, ==, "0-2, 5, 7, 8, 120-123");
    /* the page's comparison of both runs ends before the window goes (a worker left inside
       OpenBLAS at exit hangs its shutdown) */
    AtnWhatifView *page = wv;
    g_assert_true(wait_for(whatif_idle, page));
    destroy_window(win);
}

/* make test-long only: issue 35's targets on a decoder's shape, random:qwen2.5-0.5b (24 layers,
 * 14 heads over 2 K/V heads, rotary) at 4,096 tokens (ATN_TEST_LONG_MODEL, ATN_TEST_LONG_TOKENS
 * change them), its heads on demand (a 6 GB memory limit, ATN_TEST_LONG_LIMIT; the full capture
 * would be 22.5 GB):
 * the forward, then the first heatmap (wall and this process's CPU from the result to the
 * figure's first layout, target 1 s) and one more head made on demand (target 150 ms). */
static void test_decoder(void) {
    const char *model = g_getenv("ATN_TEST_LONG_MODEL") ? g_getenv("ATN_TEST_LONG_MODEL") : "random:qwen2.5-0.5b";
    int n = g_getenv("ATN_TEST_LONG_TOKENS") ? atoi(g_getenv("ATN_TEST_LONG_TOKENS")) : 4096;
    size_t limit = (size_t)6 << 30;   /* ATN_TEST_LONG_LIMIT: another, e.g. 100M for a small model */
    if (g_getenv("ATN_TEST_LONG_LIMIT"))
        g_assert_true(atn_ui_parse_size(g_getenv("ATN_TEST_LONG_LIMIT"), &limit));
    atn_ui_set_memory_limit(limit);
    double first_ms = 0, c0 = cpu_s();
    /* at least n positions (random:SHAPE#n), as the commands' --tokens */
    g_autofree char *source = strchr(model, '#') ? g_strdup(model) : g_strdup_printf("%s#%d", model, n);
    AtnWindow *win = long_window(1580, 980, source, n, &first_ms);
    AtnResult *r = atn_session_get_result(atn_window_get_session(win));
    g_assert_null(atn_result_get_capture(r)->attn);   /* heads on demand */
    printf("# %s, %d tokens, heads on demand: forward %.0f ms (process CPU %.1f s to the result); first heatmap "
           "laid out %.0f ms after the result (%.0f ms of CPU)\n", model, n, atn_result_get_elapsed_ms(r),
           result_cpu - c0, first_ms, 1000 * (first_cpu - result_cpu));
    gint64 t0 = g_get_monotonic_time();
    double c1 = cpu_s();
    const atn_capture *cap = atn_result_get_capture(r);
    int hl = MIN(5, cap->n_layers - 1), hh = MIN(3, cap->n_heads - 1);
    g_assert_nonnull(atn_result_get_head(r, hl, hh));
    printf("# one more head on demand (layer %d, head %d): %.0f ms (%.0f ms of this process's CPU, every thread)\n", hl, hh,
           (g_get_monotonic_time() - t0) / 1000.0, 1000 * (cpu_s() - c1));
    destroy_window(win);
    atn_ui_set_memory_limit(0);
}

int main(int argc, char **argv) {
    if (!ui_test_init(&argc, &argv))
        return 0;
    g_test_add_func("/ui/long/size-512", test_size_512);
    g_test_add_func("/ui/long/pooled", test_pooled);
    g_test_add_func("/ui/long/scales", test_scales);
    g_test_add_func("/ui/long/span", test_span);
    g_test_add_func("/ui/long/drag-crop", test_drag_crop);
    g_test_add_func("/ui/long/whatif-spans", test_whatif_spans);
    if (g_getenv("ATN_TEST_LONG"))   /* minutes of forward on the 2-core machine */
        g_test_add_func("/ui/long/decoder", test_decoder);
    return g_test_run();
}
