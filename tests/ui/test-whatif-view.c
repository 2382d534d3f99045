/* The What-if view (ui/atn-whatif-view.c) in a real window under Xvfb: a head switched off by
 * clicking its cell in the map gives the same attention and the same diff numbers as the
 * command line (`attnscope run` / `attnscope diff` with the same options, run inside the
 * test); the map draws the change; a sliding window masks the cells outside the band in
 * the Head view's run; restoring the original gives the original attention back.
 *
 * Run with --tap (meson does).  Without a display it reports "1..0 # SKIP no display". */
#include "ui-test-util.h"

#include <float.h>

#include "atn-whatif-view.h"
#include "atn-whatif.h"

G_DEFINE_AUTOPTR_CLEANUP_FUNC(cJSON, cJSON_Delete)

static const char *const TEXT = "the cat [MASK] on the mat";

static AtnWhatifView *whatif_view(AtnWindow *win) {
    return ATN_WHATIF_VIEW(atn_window_get_view_widget(win, "whatif"));
}

typedef struct diff_wait {
    AtnWindow *win;
    gboolean changed;   /* wait for a changed result (TRUE) or the original (FALSE) */
} diff_wait;

/* The session is idle with a result that is (or is not) changed, and the view has compared it. */
static gboolean compared(gpointer data) {
    diff_wait *w = data;
    AtnSession *s = atn_window_get_session(w->win);
    AtnResult *r = atn_session_get_result(s);
    if (atn_session_get_busy(s) || !r || (atn_whatif_of_result(r) != NULL) != w->changed)
        return FALSE;
    AtnWhatifView *v = whatif_view(w->win);
    return !w->changed || (!atn_whatif_view_get_busy(v) && atn_whatif_view_get_diff(v));
}

static void wait_compared(AtnWindow *win, gboolean changed) {
    diff_wait w = {win, changed};
    g_assert_true(wait_for(compared, &w));
}

/* What a test waits for in the result's what-if state (not NULL). */
typedef gboolean (*whatif_holds)(const AtnWhatif *now, gconstpointer data);

/* Iterates until the session is idle with a changed result whose what-if state holds what
 * the test changed (holds(now, data)) and the view has compared it; returns that state. */
static AtnWhatif *wait_whatif(AtnWindow *win, whatif_holds holds, gconstpointer data) {
    AtnSession *s = atn_window_get_session(win);
    diff_wait dw = {win, TRUE};
    AtnWhatif *now = NULL;
    while (!(now = atn_whatif_of_result(atn_session_get_result(s))) || !holds(now, data) || !compared(&dw))
        g_main_context_iteration(NULL, TRUE);
    return now;
}

static gboolean one_global(const AtnWhatif *now, gconstpointer data) {
    return atn_whatif_get(now)->n_global == 1;
}

static gboolean some_layers(const AtnWhatif *now, gconstpointer data) {
    return atn_whatif_get(now)->mask_layers != NULL;
}

static gboolean every_layer(const AtnWhatif *now, gconstpointer data) {
    return atn_whatif_get(now)->mask_layers == NULL;
}

typedef struct head_is {
    int layer, head;
    AtnWhatifHead mode;
} head_is;

static gboolean head_holds(const AtnWhatif *now, gconstpointer data) {
    const head_is *want = data;
    return atn_whatif_get_head(now, want->layer, want->head) == want->mode;
}

/* The demo model on TEXT, the What-if page shown with a sliding window of 1 switched on (its
 * run not waited for); the page. */
static AtnWhatifView *window_of_one(AtnWindow *win) {
    open_and_wait(win, "demo");
    type_and_wait(win, TEXT);
    show_view(win, "whatif");
    AtnWhatifView *v = whatif_view(win);
    gtk_spin_button_set_value(GTK_SPIN_BUTTON(atn_whatif_view_get_control(v, "window-width")), 1);
    gtk_check_button_set_active(GTK_CHECK_BUTTON(atn_whatif_view_get_control(v, "window")), TRUE);
    return v;
}

/* `attnscope <args> -o out.json` read back. */
static cJSON *cli_json(const char *const *args) {
    g_autofree char *dir = g_dir_make_tmp("atn-whatif-XXXXXX", NULL);
    g_assert_nonnull(dir);
    g_autofree char *path = g_build_filename(dir, "out.json", NULL);
    cli_export(args, path);
    g_autofree char *text = NULL;
    g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
    g_unlink(path);
    g_rmdir(dir);
    cJSON *j = cJSON_Parse(text);
    g_assert_nonnull(j);
    return j;
}

/* `attnscope run <args> -o out.npy`: the float32 [L][H][n][n] attention; *count floats. */
static float *cli_attention(const char *const *args, size_t *count) {
    g_autofree char *dir = g_dir_make_tmp("atn-whatif-XXXXXX", NULL);
    g_autofree char *path = g_build_filename(dir, "attn.npy", NULL);
    cli_export(args, path);
    g_autofree char *data = NULL;
    gsize len = 0;
    g_assert_true(g_file_get_contents(path, &data, &len, NULL));
    g_unlink(path);
    g_rmdir(dir);
    g_assert_cmpuint(len, >, 10);
    g_assert_cmpint(memcmp(data, "\x93NUMPY", 6), ==, 0);
    g_assert_cmpint(data[6], ==, 1);   /* version 1.0: a 2-byte header length */
    size_t header = 10 + (size_t)(unsigned char)data[8] + 256 * (size_t)(unsigned char)data[9];
    g_assert_nonnull(strstr(data + 10, "'<f4'"));
    *count = (len - header) / sizeof(float);
    return g_memdup2(data + header, *count * sizeof(float));
}

static void assert_map_equals(const cJSON *rows, const float *v, int L, int H, double tol) {
    g_assert_cmpint(cJSON_GetArraySize(rows), ==, L);
    for (int l = 0; l < L; l++) {
        const cJSON *row = cJSON_GetArrayItem(rows, l);
        g_assert_cmpint(cJSON_GetArraySize(row), ==, H);
        for (int h = 0; h < H; h++) {
            double want = cJSON_GetArrayItem(row, h)->valuedouble;
            g_assert_cmpfloat_with_epsilon(v[l * H + h], want, tol + 1e-6 * fabs(want));
        }
    }
}

/* The view's comparison equals `attnscope diff --model MODEL --text TEXT WHATIF_ARGS...` (the
 * command run here): each head's JS distance and largest change, and the hidden-state drift
 * after the embeddings and each layer, to 1e-6.  whatif_args ends with NULL.  The command's
 * JSON in *json (the caller cJSON_Deletes it) when json is not NULL. */
static void assert_diff_is_cli(AtnWhatifView *v, const char *model, const char *text, const char *const *whatif_args,
                               cJSON **json) {
    GPtrArray *args = g_ptr_array_new();
    const char *head[] = {"diff", "--model", model, "--text", text};
    for (size_t i = 0; i < G_N_ELEMENTS(head); i++)
        g_ptr_array_add(args, (gpointer)head[i]);
    for (const char *const *a = whatif_args; *a; a++)
        g_ptr_array_add(args, (gpointer)*a);
    g_ptr_array_add(args, NULL);
    g_autoptr(cJSON) j = cli_json((const char *const *)args->pdata);
    g_ptr_array_free(args, TRUE);
    const atn_capture_diff *d = atn_whatif_view_get_diff(v);
    g_assert_nonnull(d);
    assert_map_equals(cJSON_GetObjectItem(j, "js_distance"), d->js, d->n_layers, d->n_heads, 1e-6);
    assert_map_equals(cJSON_GetObjectItem(j, "max_abs_change"), d->max_abs, d->n_layers, d->n_heads, 1e-6);
    const cJSON *drift = cJSON_GetObjectItem(j, "hidden_drift");
    g_assert_cmpint(cJSON_GetArraySize(drift), ==, d->n_layers + 1);
    for (int l = 0; l <= d->n_layers; l++)
        g_assert_cmpfloat_with_epsilon(d->drift[l], cJSON_GetArrayItem(drift, l)->valuedouble, 1e-6);
    if (json)
        *json = g_steal_pointer(&j);
}

/* A point inside a map cell, in the map widget's coordinates, near its corner (clear of the
 * number drawn in its middle). */
static void cell_centre(AtnHeatmap *map, int row, int col, double *x, double *y) {
    graphene_rect_t rect;
    g_assert_true(atn_heatmap_get_cell_rect(map, row, col, &rect));
    g_assert_cmpfloat(rect.size.width, >, 6);
    g_assert_cmpfloat(rect.size.height, >, 6);
    *x = rect.origin.x + 3;
    *y = rect.origin.y + 3;
}

static void pixel_at(GBytes *pix, int width, double x, double y, guint8 rgb[3]) {
    const guint8 *p = g_bytes_get_data(pix, NULL);
    size_t o = ((size_t)y * width + (size_t)x) * 4;
    /* GDK_MEMORY_DEFAULT is B8G8R8A8 premultiplied on little endian */
    rgb[0] = p[o + 2], rgb[1] = p[o + 1], rgb[2] = p[o];
}

/* Clicking L1 H2 in the map switches it off: the session's run is the CLI's `run --heads-off
 * 1:2`, the view's comparison is the CLI's `diff --heads-off 1:2`, the map draws it, and a
 * second click restores the original attention bit for bit. */
static void test_head_off_matches_cli(void) {
    AtnWindow *win = new_window();
    open_and_wait(win, "demo");
    type_and_wait(win, TEXT);
    AtnSession *s = atn_window_get_session(win);
    size_t n_orig = 0;
    const char *run_plain[] = {"run", "--model", "demo", "--text", TEXT, NULL};
    g_autofree float *orig = cli_attention(run_plain, &n_orig);
    {   /* the window's original run is the command line's */
        const atn_capture *c = atn_result_get_capture(atn_session_get_result(s));
        g_assert_cmpuint(n_orig, ==, (size_t)c->n_layers * c->n_heads * c->n * c->n);
        for (size_t i = 0; i < n_orig; i++)
            g_assert_cmpfloat_with_epsilon(c->attn[i], orig[i], 1e-6);
    }

    show_view(win, "whatif");
    AtnWhatifView *v = whatif_view(win);
    AtnHeatmap *map = atn_whatif_view_get_map(v);
    g_assert_true(wait_for(is_drawable, map));
    int w = 0, h = 0;
    g_autoptr(GBytes) before_pix = render_widget(GTK_WIDGET(map), &w, &h);
    double x, y;
    cell_centre(map, 1, 2, &x, &y);
    click(GTK_WIDGET(map), x, y);
    wait_compared(win, TRUE);
    g_assert_cmpint(atn_session_get_layer(s), ==, 1);
    g_assert_cmpint(atn_session_get_head(s), ==, 2);
    /* the comparison's two runs ran in a worker at the workers' priority */
    g_assert_cmpint(atn_session_get_worker_nice_of("whatif"), ==, expected_worker_nice());

    /* the changed run against `attnscope run --heads-off 1:2` */
    AtnResult *r = atn_session_get_result(s);
    const atn_capture *c = atn_result_get_capture(r);
    g_assert_nonnull(c->heads_off);
    g_assert_cmpint(c->heads_off[1 * c->n_heads + 2], ==, 1);
    const char *run_off[] = {"run", "--model", "demo", "--text", TEXT, "--heads-off", "1:2", NULL};
    size_t n_off = 0;
    g_autofree float *off = cli_attention(run_off, &n_off);
    g_assert_cmpuint(n_off, ==, n_orig);
    double worst = 0;
    for (size_t i = 0; i < n_off; i++)
        worst = fmax(worst, fabs((double)c->attn[i] - off[i]));
    g_assert_cmpfloat(worst, <, 1e-6);
    const float *zeroed = atn_result_get_head(r, 1, 2);
    for (int i = 0; i < c->n * c->n; i++)
        g_assert_cmpfloat(zeroed[i], ==, 0.0f);

    /* the comparison against `attnscope diff --heads-off 1:2` */
    g_auto(GStrv) args = atn_whatif_dup_cli_args(atn_whatif_of_result(r));
    g_assert_cmpstr(args[0], ==, "--heads-off");
    g_assert_cmpstr(args[1], ==, "1:2");
    g_assert_null(args[2]);
    g_autoptr(cJSON) j = NULL;
    assert_diff_is_cli(v, "demo", TEXT, (const char *const[]){"--heads-off", "1:2", NULL}, &j);
    const atn_capture_diff *d = atn_whatif_view_get_diff(v);
    g_assert_cmpfloat(d->js[1 * d->n_heads + 2], ==, 1.0f);   /* a zeroed head's rows: distance 1 */
    /* the [MASK]'s guesses and the original word's probability before and after */
    const cJSON *guesses = cJSON_GetObjectItem(j, "guesses");
    g_assert_cmpint(cJSON_GetArraySize(guesses), ==, 1);
    g_assert_cmpint(atn_whatif_view_get_n_guesses(v), ==, 1);
    const AtnWhatifGuess *g = atn_whatif_view_get_guess(v, 0);
    const cJSON *cg = cJSON_GetArrayItem(guesses, 0);
    g_assert_cmpint(g->position, ==, cJSON_GetObjectItem(cg, "position")->valueint);
    g_assert_cmpint(g->original_id, ==, cJSON_GetObjectItem(cg, "original_id")->valueint);
    g_assert_cmpfloat_with_epsilon(g->p_before, cJSON_GetObjectItem(cg, "p_original_before")->valuedouble, 1e-6);
    g_assert_cmpfloat_with_epsilon(g->p_after, cJSON_GetObjectItem(cg, "p_original_after")->valuedouble, 1e-6);
    g_assert_cmpfloat(g->p_before, !=, g->p_after);

    /* the map draws the change: L1 H2's cell is now the colour of 1, L0 H0's still of 0 */
    g_assert_cmpfloat(atn_heatmap_get_value(map, 1, 2), ==, 1.0f);
    g_autoptr(GBytes) after_pix = render_widget(GTK_WIDGET(map), &w, &h);
    guint8 hot[3], cold[3], was[3];
    cell_centre(map, 1, 2, &x, &y);
    pixel_at(after_pix, w, x, y, hot);
    pixel_at(before_pix, w, x, y, was);
    double cx, cy;
    cell_centre(map, 0, 0, &cx, &cy);
    pixel_at(after_pix, w, cx, cy, cold);
    double vmax[3], vmin[3];
    atn_colormap_rgb(ATN_CMAP_VIRIDIS, 1.0, vmax);
    atn_colormap_rgb(ATN_CMAP_VIRIDIS, 0.0, vmin);
    for (int k = 0; k < 3; k++) {
        g_assert_cmpint(abs(hot[k] - (int)lround(vmax[k] * 255)), <=, 3);
        g_assert_cmpint(abs(cold[k] - (int)lround(vmin[k] * 255)), <=, 3);
        g_assert_cmpint(abs(was[k] - (int)lround(vmin[k] * 255)), <=, 3);
    }
    /* the pair: original, changed (all 0) and their difference for the selected head */
    const atn_capture *a = atn_whatif_view_get_original(v);
    int n = c->n;
    for (int q = 0; q < n; q++)
        for (int k = 0; k < n; k++) {
            float o = a->attn[((size_t)(1 * a->n_heads + 2) * n + q) * n + k];
            g_assert_cmpfloat(atn_heatmap_get_value(atn_whatif_view_get_pair(v, 0), q, k), ==, o);
            g_assert_cmpfloat(atn_heatmap_get_value(atn_whatif_view_get_pair(v, 1), q, k), ==, 0.0f);
            g_assert_cmpfloat(atn_heatmap_get_value(atn_whatif_view_get_pair(v, 2), q, k), ==, -o);
        }

    const char *shots = g_getenv("ATN_SHOT_DIR");   /* a picture of the page to look at, when asked */
    if (shots) {
        g_autoptr(GdkTexture) tex = atn_gui_render_widget(GTK_WIDGET(v));
        g_autofree char *png = g_build_filename(shots, "whatif.png", NULL);
        gdk_texture_save_to_png(tex, png);
    }

    /* clicking it again restores the original */
    click(GTK_WIDGET(map), x, y);
    wait_compared(win, FALSE);
    c = atn_result_get_capture(atn_session_get_result(s));
    g_assert_null(c->heads_off);
    for (size_t i = 0; i < n_orig; i++)
        g_assert_cmpfloat_with_epsilon(c->attn[i], orig[i], 1e-6);
    g_assert_null(atn_whatif_view_get_diff(v));
    destroy_window(win);
}

/* A sliding window of 1 with a global token, and uniform heads with "keep only": the
 * session's run masks the cells outside the band (the Head view's heatmap shows them as 0
 * weight), and the comparison equals `attnscope diff --window 1 --global-tokens 0`; then
 * the Restore button gives the original model back. */
static void test_window_and_reset(void) {
    int w = 0, h = 0;
    AtnWindow *win = new_window();
    AtnWhatifView *v = window_of_one(win);
    AtnSession *s = atn_window_get_session(win);
    wait_compared(win, TRUE);
    /* the global token: the first chip of the global row ([CLS], token 0) */
    GtkWidget *chips = atn_whatif_view_get_control(v, "global-chips");
    GtkWidget *chip0 = gtk_flow_box_child_get_child(gtk_flow_box_get_child_at_index(GTK_FLOW_BOX(chips), 0));
    g_assert_true(GTK_IS_TOGGLE_BUTTON(chip0));
    gtk_toggle_button_set_active(GTK_TOGGLE_BUTTON(chip0), TRUE);
    wait_whatif(win, one_global, NULL);
    const atn_capture *c = atn_result_get_capture(atn_session_get_result(s));
    for (int i = 0; i < c->n; i++)
        for (int j = 0; j < c->n; j++) {
            gboolean hidden = abs(i - j) > 1 && i != 0 && j != 0;
            g_assert_cmpint(c->mask_add[i * c->n + j] == -FLT_MAX, ==, hidden);
        }
    show_view(win, "head");
    AtnHeatmap *hm = head_heatmap(win);
    g_autoptr(GBytes) hpix = render_widget(GTK_WIDGET(hm), &w, &h);
    for (int i = 0; i < c->n; i++)
        for (int j = 0; j < c->n; j++) {
            gboolean hidden = abs(i - j) > 1 && i != 0 && j != 0;
            if (hidden)
                g_assert_cmpfloat(atn_heatmap_get_value(hm, i, j), ==, 0.0f);
            /* the Head view draws the cells the window hides as masked: grey, and says so */
            g_autofree char *tip = atn_heatmap_dup_cell_text(hm, i, j);
            g_assert_cmpint(strstr(tip, "masked") != NULL, ==, hidden);
            graphene_rect_t rect;
            g_assert_true(atn_heatmap_get_cell_rect(hm, i, j, &rect));
            guint8 rgb[3];
            pixel_at(hpix, w, rect.origin.x + 1, rect.origin.y + 1, rgb);
            gboolean grey = abs(rgb[0] - rgb[1]) < 6 && abs(rgb[1] - rgb[2]) < 6 && rgb[0] > 120;
            if (hidden)
                g_assert_true(grey);
            else   /* viridis has no grey: a visible cell is coloured */
                g_assert_false(grey);
        }
    assert_diff_is_cli(v, "demo", TEXT, (const char *const[]){"--window", "1", "--global-tokens", "0", NULL}, NULL);

    /* the cost chart at this length: its counts worked by hand, and it draws */
    show_view(win, "whatif");
    int nc = 0, n = c->n;
    const atn_cost_row *cost = atn_whatif_view_get_cost(v, &nc);
    g_assert_nonnull(cost);
    g_assert_cmpint(nc, ==, 5);   /* the chosen mask is the Longformer row: not repeated */
    g_assert_cmpint(cost[0].cost.cells_head, ==, n * n);
    g_assert_cmpint(cost[0].cost.bytes_capture, ==, 4LL * n * n * c->n_layers * c->n_heads);
    g_assert_cmpint(cost[1].cost.kept_head, ==, n * (n + 1) / 2);
    g_assert_cmpint(cost[2].cost.kept_head, ==, n + 2 * (n - 1));            /* window ±1 */
    g_assert_cmpint(cost[3].cost.kept_head, ==, n + 2 * (n - 1) + 2 * (n - 2));   /* + [CLS] global */
    GtkWidget *area = atn_whatif_view_get_cost_area(v);
    g_assert_true(wait_for(is_drawable, area));
    int aw = 0, ah = 0;
    g_autoptr(GBytes) cpix = render_widget(area, &aw, &ah);
    const guint8 *px = g_bytes_get_data(cpix, NULL);
    int distinct = 0;   /* bars and text: many colours, not an empty area */
    guint32 seen[8] = {0};
    for (int i = 0; i < aw * ah && distinct < 8; i += 7) {
        guint32 p;
        memcpy(&p, px + 4 * i, 4);
        gboolean known = FALSE;
        for (int k = 0; k < distinct; k++)
            known |= seen[k] == p;
        if (!known)
            seen[distinct++] = p;
    }
    g_assert_cmpint(distinct, >=, 4);
    if (g_getenv("ATN_SHOT_DIR")) {   /* a picture to look at, when asked */
        g_autoptr(GdkTexture) tex = atn_gui_render_widget(area);
        g_autofree char *png = g_build_filename(g_getenv("ATN_SHOT_DIR"), "whatif-cost.png", NULL);
        gdk_texture_save_to_png(tex, png);
    }

    g_signal_emit_by_name(atn_whatif_view_get_control(v, "reset"), "clicked");
    wait_compared(win, FALSE);
    c = atn_result_get_capture(atn_session_get_result(s));
    for (int i = 0; i < c->n * c->n; i++)
        g_assert_cmpfloat(c->mask_add[i], ==, 0.0f);
    g_assert_false(gtk_check_button_get_active(GTK_CHECK_BUTTON(atn_whatif_view_get_control(v, "window"))));
    destroy_window(win);
}

/* A causal model (tests/hf/models/gpt2-f32): switching a head off compares the next-token
 * guesses after the last token, the original guess's probability before and after equal to
 * an independent engine run of the same two models; the diff equals `attnscope diff`. */
static void test_causal_guesses(void) {
    g_autofree char *gpt2 = g_build_filename(g_getenv("ATN_SOURCE_ROOT") ? g_getenv("ATN_SOURCE_ROOT") : ".",
                                             "tests", "hf", "models", "gpt2-f32", NULL);
    const char *text = "the cat sat on the mat";
    AtnWindow *win = new_window();
    open_and_wait(win, gpt2);
    type_and_wait(win, text);
    show_view(win, "whatif");
    AtnWhatifView *v = whatif_view(win);
    atn_whatif_view_toggle_head(v, 1, 2);
    wait_compared(win, TRUE);
    g_assert_cmpint(atn_whatif_view_get_n_guesses(v), ==, 1);
    const AtnWhatifGuess *g = atn_whatif_view_get_guess(v, 0);

    /* the same two runs, straight through the engine */
    atn_error err = {0};
    atn_model *m = atn_model_open(gpt2, NULL, NULL, &err);
    g_assert_nonnull(m);
    atn_encoding *enc = NULL;
    g_assert_cmpint(atn_model_encode(m, text, NULL, &enc, &err), ==, ATN_OK);
    atn_run *ra = atn_run_new(m), *rb = atn_run_new(m);
    g_assert_cmpint(atn_run_forward(ra, enc, NULL, &err), ==, ATN_OK);
    const atn_config *c = atn_model_config(m);
    uint8_t *off = g_new0(uint8_t, (size_t)c->n_layers * c->n_heads);
    off[1 * c->n_heads + 2] = 1;
    atn_interventions iv;
    atn_interventions_init(&iv);
    iv.heads_off = off;
    atn_run_options opts;
    atn_run_options_init(&opts);
    opts.interventions = &iv;
    g_assert_cmpint(atn_run_forward(rb, enc, &opts, &err), ==, ATN_OK);
    int last = enc->n - 1;
    atn_prediction top;
    g_assert_cmpint(atn_predict_next(m, atn_run_capture(ra), last, 1, &top, &err), ==, ATN_OK);
    double la, lb;
    g_assert_cmpint(atn_predict_next_log_prob(m, atn_run_capture(ra), last, top.id, &la, &err), ==, ATN_OK);
    g_assert_cmpint(atn_predict_next_log_prob(m, atn_run_capture(rb), last, top.id, &lb, &err), ==, ATN_OK);
    g_assert_cmpint(g->position, ==, last);
    g_assert_cmpint(g->original_id, ==, top.id);
    g_assert_cmpfloat_with_epsilon(g->p_before, exp(la), 1e-7);
    g_assert_cmpfloat_with_epsilon(g->p_after, exp(lb), 1e-7);
    g_assert_cmpfloat_with_epsilon(g->p_before, top.prob, 1e-6);
    g_assert_cmpfloat(fabs(g->p_before - g->p_after), >, 1e-6);
    atn_run_free(ra);
    atn_run_free(rb);
    atn_encoding_free(enc);
    atn_model_free(m);
    g_free(off);

    assert_diff_is_cli(v, gpt2, text, (const char *const[]){"--heads-off", "1:2", NULL}, NULL);
    destroy_window(win);
}

/* A toy model (the worked example, run on the main thread): switching head 1 off compares at
 * once (JS distance 1 for it, 0 for head 0: one layer, the heads are independent), the
 * position controls are off for a model without position embeddings, and opening another
 * model starts it from the original with the choices cleared. */
static void test_toy_and_model_switch(void) {
    AtnWindow *win = new_window();
    open_and_wait(win, "worked-example");
    show_view(win, "whatif");
    AtnWhatifView *v = whatif_view(win);
    AtnSession *s = atn_window_get_session(win);
    g_assert_false(gtk_widget_is_sensitive(atn_whatif_view_get_control(v, "no-positions")));
    atn_whatif_view_toggle_head(v, 0, 1);
    wait_compared(win, TRUE);
    const atn_capture_diff *d = atn_whatif_view_get_diff(v);
    g_assert_nonnull(d);
    g_assert_cmpint(d->n_layers, ==, 1);
    g_assert_cmpint(d->n_heads, ==, 2);
    g_assert_cmpfloat(d->js[0], ==, 0.0f);
    g_assert_cmpfloat(d->js[1], ==, 1.0f);
    g_assert_cmpint(atn_whatif_view_get_n_guesses(v), ==, 0);
    /* the worked example's head 0 for token 0 is still the hand-worked 0.3760, 0.4487, 0.1752 */
    const float *h0 = atn_result_get_head(atn_session_get_result(s), 0, 0);
    g_assert_cmpfloat_with_epsilon(h0[0], 0.3760, 1e-4);
    g_assert_cmpfloat_with_epsilon(h0[1], 0.4487, 1e-4);
    g_assert_cmpfloat_with_epsilon(h0[2], 0.1752, 1e-4);
    open_and_wait(win, "demo");
    wait_compared(win, FALSE);
    g_assert_null(atn_session_get_whatif(s));
    g_assert_true(gtk_widget_is_sensitive(atn_whatif_view_get_control(v, "no-positions")));
    destroy_window(win);
}

/* The Model view's item (action "whatif.head", target (layer, head, change)) in the menu the
 * view opened: the target a click on that item would activate. */
static GVariant *menu_target(GtkPopover *menu, int layer, int head, const char *change) {
    GMenuModel *model = gtk_popover_menu_get_menu_model(GTK_POPOVER_MENU(menu));
    g_assert_nonnull(model);
    for (int i = 0; i < g_menu_model_get_n_items(model); i++) {
        g_autoptr(GMenuModel) sec = g_menu_model_get_item_link(model, i, G_MENU_LINK_SECTION);
        for (int k = 0; sec && k < g_menu_model_get_n_items(sec); k++) {
            g_autofree char *action = NULL;
            g_menu_model_get_item_attribute(sec, k, G_MENU_ATTRIBUTE_ACTION, "s", &action);
            g_autoptr(GVariant) t = g_menu_model_get_item_attribute_value(sec, k, G_MENU_ATTRIBUTE_TARGET, NULL);
            if (!action || strcmp(action, "whatif.head") || !t)
                continue;
            int l, h;
            const char *c;
            g_variant_get(t, "(ii&s)", &l, &h, &c);
            if (l == layer && h == head && !strcmp(c, change))
                return g_variant_ref(t);
        }
    }
    return NULL;
}

/* The grid's secondary-click gesture (the Model view's what-if menu). */
static GtkGesture *secondary_gesture(GtkWidget *w) {
    g_autoptr(GListModel) ctl = gtk_widget_observe_controllers(w);
    for (guint i = 0; i < g_list_model_get_n_items(ctl); i++) {
        g_autoptr(GObject) c = g_list_model_get_item(ctl, i);
        if (GTK_IS_GESTURE_CLICK(c) && gtk_gesture_single_get_button(GTK_GESTURE_SINGLE(c)) == GDK_BUTTON_SECONDARY)
            return GTK_GESTURE(c);
    }
    g_assert_not_reached();
}

/* `attnscope run` with the window's changes (atn_whatif_dup_cli_args) equals its run. */
static void assert_run_is_cli_for(AtnSession *s, const char *model, const char *text) {
    AtnResult *r = atn_session_get_result(s);
    g_auto(GStrv) iv = atn_whatif_dup_cli_args(atn_whatif_of_result(r));
    GPtrArray *a = g_ptr_array_new();
    const char *head[] = {"run", "--model", model, "--text", text};
    for (guint i = 0; i < G_N_ELEMENTS(head); i++)
        g_ptr_array_add(a, (gpointer)head[i]);
    for (char **p = iv; *p; p++)
        g_ptr_array_add(a, *p);
    g_ptr_array_add(a, NULL);
    size_t count = 0;
    g_autofree float *want = cli_attention((const char *const *)a->pdata, &count);
    g_ptr_array_free(a, TRUE);
    const atn_capture *c = atn_result_get_capture(r);
    g_assert_cmpuint(count, ==, (size_t)c->n_layers * c->n_heads * c->n * c->n);
    double worst = 0;
    for (size_t i = 0; i < count; i++)
        worst = fmax(worst, fabs((double)c->attn[i] - want[i]));
    g_assert_cmpfloat(worst, <, 1e-6);
}

static void assert_run_is_cli(AtnSession *s) { assert_run_is_cli_for(s, "demo", TEXT); }

/* The Model view's head menu: a secondary click on L1 H2's thumbnail opens it for that head;
 * its "switch off" item changes the session's what-if state, so the run that follows equals
 * `attnscope run --heads-off 1:2`, the What-if page (not shown) compares it as `attnscope
 * diff --heads-off 1:2` does, shows the head chosen in its map, and the thumbnail is marked
 * in red.  The keyboard's Shift+F10 action opens it for the selected head (L0 H3: keep
 * only it); the What-if page's own map then edits the same state; Restore clears it. */
static void test_model_view_menu(void) {
    AtnWindow *win = new_window();
    open_and_wait(win, "demo");
    type_and_wait(win, TEXT);
    AtnSession *s = atn_window_get_session(win);
    show_view(win, "model");
    AtnModelGridView *mv = ATN_MODEL_GRID_VIEW(atn_window_get_view_widget(win, "model"));
    AtnModelGrid *grid = atn_model_grid_view_get_grid(mv);
    g_assert_true(wait_for(is_drawable, grid));
    graphene_rect_t rect;
    g_assert_true(atn_model_grid_get_head_rect(grid, 1, 2, &rect));
    double x = rect.origin.x + rect.size.width / 2, y = rect.origin.y + rect.size.height / 2;
    int w = 0, h = 0;
    g_autoptr(GBytes) before = render_widget(GTK_WIDGET(grid), &w, &h);
    g_signal_emit_by_name(secondary_gesture(GTK_WIDGET(grid)), "pressed", 1, x, y);
    int ml = -1, mh = -1;
    GtkPopover *menu = atn_model_grid_view_get_head_menu(mv, &ml, &mh);
    g_assert_true(gtk_widget_get_visible(GTK_WIDGET(menu)));
    g_assert_cmpint(ml, ==, 1);
    g_assert_cmpint(mh, ==, 2);
    g_assert_cmpint(atn_session_get_layer(s), ==, 1);
    g_assert_cmpint(atn_session_get_head(s), ==, 2);
    g_assert_null(menu_target(menu, 1, 2, "switch-on"));   /* it is on: no "back on" */
    g_autoptr(GVariant) off = menu_target(menu, 1, 2, "switch-off");
    g_assert_nonnull(off);
    gtk_popover_popdown(menu);
    g_assert_true(gtk_widget_activate_action_variant(GTK_WIDGET(mv), "whatif.head", off));
    wait_compared(win, TRUE);
    g_assert_cmpstr(atn_window_get_view(win), ==, "model");
    AtnResult *r = atn_session_get_result(s);
    const atn_capture *c = atn_result_get_capture(r);
    g_assert_nonnull(c->heads_off);
    for (int i = 0; i < c->n_layers * c->n_heads; i++)
        g_assert_cmpint(c->heads_off[i], ==, i == 1 * c->n_heads + 2);
    g_auto(GStrv) args = atn_whatif_dup_cli_args(atn_whatif_of_result(r));
    g_assert_cmpstr(args[0], ==, "--heads-off");
    g_assert_cmpstr(args[1], ==, "1:2");
    g_assert_null(args[2]);
    assert_run_is_cli(s);
    AtnWhatifView *v = whatif_view(win);
    assert_diff_is_cli(v, "demo", TEXT, (const char *const[]){"--heads-off", "1:2", NULL}, NULL);
    g_assert_true(atn_whatif_view_get_head_chosen(v, 1, 2));
    g_assert_false(atn_whatif_view_get_head_chosen(v, 0, 0));
    /* the thumbnail is marked: red at its centre (the cross), which viridis never is */
    settle(50);
    g_autoptr(GBytes) after = render_widget(GTK_WIDGET(grid), &w, &h);
    guint8 was[3], now[3];
    pixel_at(before, w, x, y, was);
    pixel_at(after, w, x, y, now);
    g_assert_cmpint(now[0], >, 150);
    g_assert_cmpint(now[1], <, 90);
    g_assert_cmpint(now[2], <, 90);
    g_assert_false(was[0] > 150 && was[1] < 90 && was[2] < 90);
    g_autofree char *tip = atn_model_grid_dup_layer_tooltip(grid, 1, 2);
    g_assert_nonnull(strstr(tip, "switched off, it outputs zero"));

    /* the keyboard: Shift+F10 (the view's "whatif.menu") opens the selected head's menu */
    atn_session_select_head(s, 0, 3);
    gtk_widget_grab_focus(GTK_WIDGET(grid));
    g_assert_true(gtk_widget_activate_action(GTK_WIDGET(mv), "whatif.menu", NULL));
    menu = atn_model_grid_view_get_head_menu(mv, &ml, &mh);
    g_assert_true(gtk_widget_get_visible(GTK_WIDGET(menu)));
    g_assert_cmpint(ml, ==, 0);
    g_assert_cmpint(mh, ==, 3);
    g_autoptr(GVariant) keep = menu_target(menu, 0, 3, "keep-only");
    g_assert_nonnull(keep);
    gtk_popover_popdown(menu);
    g_assert_true(gtk_widget_activate_action_variant(GTK_WIDGET(mv), "whatif.head", keep));
    wait_whatif(win, head_holds, &(head_is){0, 0, ATN_WHATIF_HEAD_OFF});
    c = atn_result_get_capture(atn_session_get_result(s));
    for (int hd = 0; hd < c->n_heads; hd++) {
        g_assert_cmpint(c->heads_off[hd], ==, hd != 3);                     /* layer 0: only H3 on */
        g_assert_cmpint(c->heads_off[c->n_heads + hd], ==, hd == 2);        /* layer 1: H2 still off */
        g_assert_cmpint(atn_whatif_view_get_head_chosen(v, 0, hd), ==, hd != 3);
    }
    assert_run_is_cli(s);

    /* the What-if page's map edits the same state: L1 H2 back on there, layer 0 stays */
    show_view(win, "whatif");
    AtnHeatmap *map = atn_whatif_view_get_map(v);
    g_assert_true(wait_for(is_drawable, map));
    double cx, cy;
    cell_centre(map, 1, 2, &cx, &cy);
    click(GTK_WIDGET(map), cx, cy);
    wait_whatif(win, head_holds, &(head_is){1, 2, ATN_WHATIF_HEAD_ON});
    c = atn_result_get_capture(atn_session_get_result(s));
    for (int hd = 0; hd < c->n_heads; hd++)
        g_assert_cmpint(c->heads_off[hd], ==, hd != 3);
    g_assert_cmpint(c->heads_off[c->n_heads + 2], ==, 0);
    assert_run_is_cli(s);

    /* uniform from the Model view's menu, then Restore the original model */
    show_view(win, "model");
    g_signal_emit_by_name(secondary_gesture(GTK_WIDGET(grid)), "pressed", 1, x, y);
    menu = atn_model_grid_view_get_head_menu(mv, &ml, &mh);
    g_autoptr(GVariant) uni = menu_target(menu, 1, 2, "uniform");
    g_assert_nonnull(uni);
    gtk_popover_popdown(menu);
    g_assert_true(gtk_widget_activate_action_variant(GTK_WIDGET(mv), "whatif.head", uni));
    wait_whatif(win, head_holds, &(head_is){1, 2, ATN_WHATIF_HEAD_UNIFORM});
    g_assert_cmpint(gtk_drop_down_get_selected(GTK_DROP_DOWN(atn_whatif_view_get_control(v, "head-mode"))), ==, 1);
    assert_run_is_cli(s);
    g_assert_true(gtk_widget_activate_action(GTK_WIDGET(mv), "whatif.restore", NULL));
    wait_compared(win, FALSE);
    g_assert_null(atn_result_get_capture(atn_session_get_result(s))->heads_off);
    for (int l = 0; l < c->n_layers; l++)
        for (int hd = 0; hd < c->n_heads; hd++)
            g_assert_false(atn_whatif_view_get_head_chosen(v, l, hd));
    destroy_window(win);
}

/* Masks in chosen layers only: the page's layer entry "0,2-3" with a window of 1 runs the
 * window in layers 0, 2 and 3 alone (the capture's per-layer masks), equal to `attnscope run
 * --window 1 --mask-layers 0,2-3`; a bad entry is marked and the window then applies in
 * every layer. */
static void test_mask_layers(void) {
    AtnWindow *win = new_window();
    AtnWhatifView *v = window_of_one(win);
    AtnSession *s = atn_window_get_session(win);
    GtkWidget *entry = atn_whatif_view_get_control(v, "mask-layers");
    gtk_editable_set_text(GTK_EDITABLE(entry), "0,2-3");
    AtnWhatif *now = wait_whatif(win, some_layers, NULL);
    const atn_capture *c = atn_result_get_capture(atn_session_get_result(s));
    g_assert_nonnull(c->mask_base);
    static const uint8_t want[4] = {1, 0, 1, 1};
    for (int l = 0; l < 4; l++)
        g_assert_cmpint(c->mask_layers[l], ==, want[l]);
    const float *l1 = atn_capture_layer_mask(c, 1);
    for (int i = 0; i < c->n * c->n; i++)
        g_assert_cmpfloat(l1[i], ==, 0.0f);   /* layer 1: no mask at all (no padding here) */
    const float *a1 = atn_result_get_head(atn_session_get_result(s), 1, 0);
    gboolean outside = FALSE;   /* layer 1 attends outside the band; layer 2 does not */
    const float *a2 = atn_result_get_head(atn_session_get_result(s), 2, 0);
    for (int i = 0; i < c->n; i++)
        for (int j = 0; j < c->n; j++)
            if (abs(i - j) > 1) {
                outside |= a1[i * c->n + j] > 0;
                g_assert_cmpfloat(a2[i * c->n + j], ==, 0.0f);
            }
    g_assert_true(outside);
    g_auto(GStrv) args = atn_whatif_dup_cli_args(now);
    g_autofree char *joined = g_strjoinv(" ", args);
    g_assert_cmpstr(joined, ==, "--window 1 --mask-layers 0,2-3");
    assert_run_is_cli(s);
    g_autofree char *desc = atn_whatif_describe(now);
    g_assert_nonnull(strstr(desc, "masks in layers 0, 2\u20133 only"));
    g_assert_false(gtk_widget_has_css_class(entry, "error"));

    /* a layer the model lacks: said at the entry, and the window is back in every layer */
    gtk_editable_set_text(GTK_EDITABLE(entry), "0,7");
    now = wait_whatif(win, every_layer, NULL);
    g_assert_true(gtk_widget_has_css_class(entry, "error"));
    g_assert_nonnull(strstr(gtk_widget_get_tooltip_text(entry), "layer 7 is outside"));
    c = atn_result_get_capture(atn_session_get_result(s));
    g_assert_null(c->mask_base);
    destroy_window(win);
}

static gboolean rotary_set(const AtnWhatif *now, gconstpointer data) {
    const atn_interventions *iv = atn_whatif_get(now);
    return iv->rope_theta == 7.0 && iv->sliding && iv->sliding[1] == 1;
}

/* The rotary knobs (ui/atn-whatif-rotary.c) on a random Llama folder: shown for it (not for
 * BERT), RoPE base 7 and a window of 3 turned on in layer 1 make the run that `attnscope run
 * --rope-theta 7 --sliding-on 1 --sliding-window 3` makes, named so in the description;
 * Restore clears them; "Llama 3 scaling, factor" 2 makes `--rope-llama3 2`'s run. */
static gboolean llama3_set(const AtnWhatif *now, gconstpointer data) {
    return atn_whatif_get(now)->rope_llama3 == 2.0;
}

static void test_rotary_knobs(void) {
    g_autofree char *llama = g_build_filename(g_getenv("ATN_SOURCE_ROOT") ? g_getenv("ATN_SOURCE_ROOT") : ".",
                                              "tests", "hf", "models", "llama-f32", NULL);
    const char *text = "the cat sat on the mat";
    AtnWindow *win = new_window();
    open_and_wait(win, "demo");
    type_and_wait(win, text);
    show_view(win, "whatif");
    AtnWhatifView *v = whatif_view(win);
    g_assert_false(gtk_widget_is_visible(atn_whatif_view_get_control(v, "rope-theta")));
    open_and_wait(win, llama);
    g_assert_true(gtk_widget_is_visible(atn_whatif_view_get_control(v, "rope-theta")));
    gtk_spin_button_set_value(GTK_SPIN_BUTTON(atn_whatif_view_get_control(v, "rope-theta-value")), 7);
    gtk_check_button_set_active(GTK_CHECK_BUTTON(atn_whatif_view_get_control(v, "rope-theta")), TRUE);
    gtk_spin_button_set_value(GTK_SPIN_BUTTON(atn_whatif_view_get_control(v, "sliding-window")), 3);
    gtk_editable_set_text(GTK_EDITABLE(atn_whatif_view_get_control(v, "sliding-on")), "1");
    AtnWhatif *now = wait_whatif(win, rotary_set, NULL);
    g_auto(GStrv) args = atn_whatif_dup_cli_args(now);
    g_autofree char *joined = g_strjoinv(" ", args);
    g_assert_cmpstr(joined, ==, "--rope-theta 7 --sliding-on 1 --sliding-window 3");
    AtnSession *s = atn_window_get_session(win);
    assert_run_is_cli_for(s, llama, text);
    g_autofree char *desc = atn_whatif_describe(now);
    g_assert_nonnull(strstr(desc, "RoPE \u03b8 7"));
    g_assert_nonnull(strstr(desc, "window of 3 on in layers 1"));
    g_signal_emit_by_name(atn_whatif_view_get_control(v, "reset"), "clicked");
    wait_compared(win, FALSE);
    g_assert_false(gtk_check_button_get_active(GTK_CHECK_BUTTON(atn_whatif_view_get_control(v, "rope-theta"))));
    g_assert_cmpstr(gtk_editable_get_text(GTK_EDITABLE(atn_whatif_view_get_control(v, "sliding-on"))), ==, "");
    /* Llama 3's scaling with factor 2 (llama-f32 has none: Llama 3.1's other parameters) */
    gtk_spin_button_set_value(GTK_SPIN_BUTTON(atn_whatif_view_get_control(v, "rope-llama3-value")), 2);
    gtk_check_button_set_active(GTK_CHECK_BUTTON(atn_whatif_view_get_control(v, "rope-llama3")), TRUE);
    now = wait_whatif(win, llama3_set, NULL);
    g_auto(GStrv) args3 = atn_whatif_dup_cli_args(now);
    g_autofree char *joined3 = g_strjoinv(" ", args3);
    g_assert_cmpstr(joined3, ==, "--rope-llama3 2");
    assert_run_is_cli_for(s, llama, text);
    g_autofree char *desc3 = atn_whatif_describe(now);
    g_assert_nonnull(strstr(desc3, "Llama 3 scaling \u00d7 2"));
    destroy_window(win);
}

int main(int argc, char **argv) {
    if (!ui_test_init(&argc, &argv))
        return 0;
    g_test_add_func("/ui/whatif-head-off-matches-cli", test_head_off_matches_cli);
    g_test_add_func("/ui/whatif-window-and-reset", test_window_and_reset);
    g_test_add_func("/ui/whatif-causal-guesses", test_causal_guesses);
    g_test_add_func("/ui/whatif-toy-and-model-switch", test_toy_and_model_switch);
    g_test_add_func("/ui/whatif-model-view-menu", test_model_view_menu);
    g_test_add_func("/ui/whatif-mask-layers", test_mask_layers);
    g_test_add_func("/ui/whatif-rotary-knobs", test_rotary_knobs);
    return g_test_run();
}
