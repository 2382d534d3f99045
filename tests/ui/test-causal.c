/* A causal model (GPT-2, tests/hf/models/gpt2-f32 from gen_gpt2.py) in a real window under
 * Xvfb: the Head view's heatmap draws the future cells as masked (grey, not the colour of a
 * weight of 0) and says so in their tooltip, the Model grid's thumbnails do too, the Trace
 * view's mask step names the causal mask and shows −∞ for the later keys, and the guesses
 * under the sentence are next-token guesses, after the last token and after a clicked one,
 * equal to the torch reference's top 5 (tests/hf/fixtures/gpt2-f32.json, case "text").
 *
 * Run with --tap (meson does).  Without a display it reports "1..0 # SKIP no display". */
#include "ui-test-util.h"

static char *gpt2_model, *fixture_path;

/* The fixture's case "text": its next-token top 5 after position pos (ids, probabilities). */
static void reference_guesses(int pos, int ids[5], double probs[5]) {
    g_autofree char *text = NULL;
    g_assert_true(g_file_get_contents(fixture_path, &text, NULL, NULL));
    cJSON *meta = cJSON_Parse(text);
    g_assert_nonnull(meta);
    const cJSON *c = NULL, *k;
    cJSON_ArrayForEach(k, cJSON_GetObjectItem(meta, "cases"))
        if (strcmp(cJSON_GetObjectItem(k, "name")->valuestring, "text") == 0)
            c = k;
    g_assert_nonnull(c);
    const cJSON *np = cJSON_GetObjectItem(c, "next_positions");
    int r = -1;
    for (int i = 0; i < cJSON_GetArraySize(np); i++)
        if (cJSON_GetArrayItem(np, i)->valueint == pos)
            r = i;
    g_assert_cmpint(r, >=, 0);
    for (int t = 0; t < 5; t++) {
        ids[t] = cJSON_GetArrayItem(cJSON_GetArrayItem(cJSON_GetObjectItem(c, "next_top_ids"), r), t)->valueint;
        probs[t] = cJSON_GetArrayItem(cJSON_GetArrayItem(cJSON_GetObjectItem(c, "next_top_probs"), r), t)->valuedouble;
    }
    cJSON_Delete(meta);
}

/* The vocabulary line of id (vocab.txt of the test folder). */
static char *vocab_token(int id) {
    g_autofree char *path = g_build_filename(gpt2_model, "vocab.txt", NULL);
    g_autofree char *text = NULL;
    g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    g_assert_cmpint(id, <, (int)g_strv_length(lines));
    return g_strdup(lines[id]);
}

/* The "next after P:" line of the predictions' text shows the reference's tokens and
 * probabilities, in order. */
static void assert_next_line(const char *text, int pos) {
    g_autofree char *head = g_strdup_printf("next after %d:", pos);
    const char *line = strstr(text, head);
    if (!line)
        g_error("no \"%s\" in the predictions:\n%s", head, text);
    const char *end = strchr(line, '\n');
    g_autofree char *one = end ? g_strndup(line, (gsize)(end - line)) : g_strdup(line);
    int ids[5];
    double probs[5];
    reference_guesses(pos, ids, probs);
    const char *at = one;
    for (int t = 0; t < 5; t++) {
        g_autofree char *tok = vocab_token(ids[t]);
        g_autofree char *want = g_strdup_printf(" %s %.4f", tok, probs[t]);
        const char *hit = strstr(at, want);
        if (!hit)
            g_error("guess %d after %d: expected \"%s\" in \"%s\"", t, pos, want, one);
        at = hit + strlen(want);
    }
}

static gboolean is_grey(const guchar *px) {
    return abs(px[0] - px[1]) < 10 && abs(px[1] - px[2]) < 10 && px[0] > 100 && px[0] < 230;
}

static const guchar *pixel_at(GBytes *b, int w, double x, double y) {
    gsize size;
    const guchar *data = g_bytes_get_data(b, &size);
    return data + ((size_t)y * w + (size_t)x) * 4;
}

/* Pixels of the Model grid in the causal mask's grey (199, 199, 199 +- 2). */
static int mask_grey_pixels(AtnWindow *win) {
    GtkWidget *grid = GTK_WIDGET(atn_model_grid_view_get_grid(ATN_MODEL_GRID_VIEW(atn_window_get_view_widget(win, "model"))));
    int w, h;
    g_autoptr(GBytes) gp = render_widget(grid, &w, &h);
    gsize size;
    const guchar *d = g_bytes_get_data(gp, &size);
    int count = 0;
    for (gsize i = 0; i + 3 < size; i += 4)
        count += abs(d[i] - 199) <= 2 && abs(d[i + 1] - 199) <= 2 && abs(d[i + 2] - 199) <= 2;
    return count;
}

static void test_causal_window(void) {
    AtnWindow *win = new_window();
    open_and_wait(win, gpt2_model);
    type_and_wait(win, "The cat sat on the MAT");
    AtnSession *s = atn_window_get_session(win);
    AtnResult *r = atn_session_get_result(s);
    g_assert_true(atn_result_is_causal(r));
    int n = atn_result_get_n_tokens(r);
    g_assert_cmpint(n, ==, 8);   /* the WordPiece fallback: [CLS] the cat sat on the mat [SEP] */
    g_assert_cmpint(atn_result_get_last_position(r), ==, n - 1);

    /* Head view: future cells are masked, drawn grey; the lower triangle is coloured */
    show_view(win, "head");
    atn_session_select_head(s, 1, 0);
    atn_session_set_query(s, n - 1);
    settle(30);
    AtnHeatmap *hm = head_heatmap(win);
    g_assert_true(atn_heatmap_get_causal(hm));
    const float *a = atn_result_get_head(r, 1, 0);
    int w, h;
    g_autoptr(GBytes) pix = render_widget(GTK_WIDGET(hm), &w, &h);
    int grey_masked = 0, grey_seen = 0;
    for (int row = 0; row < n; row++)
        for (int col = 0; col < n; col++) {
            graphene_rect_t rect;
            g_assert_true(atn_heatmap_get_cell_rect(hm, row, col, &rect));
            /* a corner of the cell, away from any printed number */
            double x = rect.origin.x + rect.size.width * 0.12, y = rect.origin.y + rect.size.height * 0.12;
            g_assert_true(x >= 0 && y >= 0 && x < w && y < h);
            gboolean grey = is_grey(pixel_at(pix, w, x, y)) && is_grey(pixel_at(pix, w, x + 1, y + 1));
            g_autofree char *tip = atn_heatmap_dup_cell_text(hm, row, col);
            if (col > row) {
                g_assert_cmpfloat(a[row * n + col], ==, 0.0f);   /* the engine: exactly 0 */
                grey_masked += grey;
                g_assert_nonnull(strstr(tip, "masked"));
            } else {
                grey_seen += grey;
                g_assert_null(strstr(tip, "masked"));
                g_autofree char *weight = g_strdup_printf("%.4f", (double)a[row * n + col]);
                g_assert_nonnull(strstr(tip, weight));
            }
        }
    g_assert_cmpint(grey_masked, ==, n * (n - 1) / 2);
    g_assert_cmpint(grey_seen, ==, 0);

    /* Model grid: the thumbnails' masked halves are the mask's grey (0.78: 199), which a
       BERT model's grid (below) does not have */
    show_view(win, "model");
    settle(30);
    int causal_grey = mask_grey_pixels(win);
    int thumbs = atn_result_get_n_layers(r) * atn_result_get_n_heads(r);
    g_assert_cmpint(causal_grey, >, thumbs * 200);

    /* Trace view: the mask step names the causal mask and shows −∞ for each later key */
    AtnTraceView *tv = show_trace(win, -1, -1, 2);
    g_autofree char *mask = atn_trace_view_dup_step_text(tv, ATN_TRACE_STEP_MASK);
    g_assert_nonnull(mask);
    /* rows: j, token, mask, score; keys 0..2 get 0, keys 3..7 −∞ (mask and score) */
    g_auto(GStrv) rows = g_strsplit(mask, "\n", -1);
    for (int j = 0; j < n; j++) {
        g_auto(GStrv) cells = g_strsplit(rows[j + 1], "\t", -1);
        g_assert_cmpint(g_strv_length(cells), ==, 4);
        g_assert_cmpint(atoi(cells[0]), ==, j);
        g_assert_cmpstr(cells[2], ==, j > 2 ? "−∞" : "0");
        if (j > 2)
            g_assert_cmpstr(cells[3], ==, "−∞");
        else
            g_assert_cmpstr(cells[3], !=, "−∞");
    }
    g_autofree char *md = atn_trace_view_dup_markdown(tv, NULL);
    g_assert_nonnull(md);
    if (!strstr(md, "Causal mask: the 5 keys after token 2"))
        g_error("trace markdown:\n%s", md);
    g_autofree char *soft = atn_trace_view_dup_step_text(tv, ATN_TRACE_STEP_SOFTMAX);
    g_assert_nonnull(soft);

    /* the guesses: next token after the last one, and after the clicked token 2 */
    AtnPredictions *pred = ATN_PREDICTIONS(atn_window_get_predictions(win));
    g_assert_true(gtk_widget_get_visible(GTK_WIDGET(pred)));
    g_autofree char *text = atn_predictions_dup_text(pred);
    assert_next_line(text, n - 1);
    assert_next_line(text, 2);
    atn_session_set_query(s, n - 1);
    settle(20);
    g_autofree char *text2 = atn_predictions_dup_text(pred);
    g_assert_null(strstr(text2, "next after 2:"));   /* only the last token's row now */
    g_assert_null(strstr(text2, "[MASK]"));

    /* clicking the likeliest guess after the last token appends it to the sentence */
    int ids[5];
    double probs[5];
    reference_guesses(n - 1, ids, probs);
    g_autofree char *tok = vocab_token(ids[0]);
    atn_predictions_activate(pred, 0, 0);
    g_autofree char *want = g_strdup_printf("The cat sat on the MAT %s", tok);
    g_assert_cmpstr(atn_window_get_text(win), ==, want);

    /* a BERT model: no masked cells anywhere, no next-token row */
    open_and_wait(win, f32_model);
    type_and_wait(win, "the cat sat on the mat");
    g_assert_false(atn_result_is_causal(atn_session_get_result(s)));
    g_assert_false(atn_heatmap_get_causal(head_heatmap(win)));
    show_view(win, "model");
    settle(30);
    int bert_grey = mask_grey_pixels(win);
    g_assert_cmpint(bert_grey, <, causal_grey / 20);
    g_autofree char *none = atn_predictions_dup_text(pred);
    g_assert_null(strstr(none, "next after"));
    destroy_window(win);
}

/* The built-in causal demo model is in the model menu's "Built-in Models" beside the BERT
 * demo; activating that item opens it, and the window shows next-token guesses after the
 * last token that equal the engine's own (atn_predict_next on a fresh run). */
static void test_demo_gpt2_menu(void) {
    AtnWindow *win = new_window();
    GMenuModel *menu = atn_window_get_model_menu(win);
    GMenuModel *builtin = g_menu_model_get_item_link(menu, 0, G_MENU_LINK_SECTION);
    g_assert_nonnull(builtin);
    gboolean found = FALSE;
    for (int i = 0; i < g_menu_model_get_n_items(builtin); i++) {
        g_autofree char *label = NULL, *action = NULL;
        g_assert_true(g_menu_model_get_item_attribute(builtin, i, G_MENU_ATTRIBUTE_LABEL, "s", &label));
        if (g_strcmp0(label, "demo-gpt2") != 0)
            continue;
        g_assert_true(g_menu_model_get_item_attribute(builtin, i, G_MENU_ATTRIBUTE_ACTION, "s", &action));
        g_assert_cmpstr(action, ==, "win.open-model");
        g_autoptr(GVariant) target = g_menu_model_get_item_attribute_value(builtin, i, G_MENU_ATTRIBUTE_TARGET,
                                                                           G_VARIANT_TYPE_STRING);
        g_assert_cmpstr(g_variant_get_string(target, NULL), ==, "demo-gpt2");
        found = TRUE;
    }
    g_object_unref(builtin);
    g_assert_true(found);
    open_and_wait(win, "demo-gpt2");
    const char *text = "This License applies to any program";
    type_and_wait(win, text);
    AtnResult *r = atn_session_get_result(atn_window_get_session(win));
    g_assert_true(atn_result_is_causal(r));
    int n = atn_result_get_n_tokens(r);
    g_assert_cmpint(n, ==, engine_token_count("demo-gpt2", text));

    atn_error err = {0};
    atn_model *m = atn_model_open("demo-gpt2", NULL, NULL, &err);
    g_assert_nonnull(m);
    atn_encoding *e = NULL;
    g_assert_cmpint(atn_model_encode(m, text, NULL, &e, &err), ==, ATN_OK);
    atn_run *run = atn_run_new(m);
    atn_run_options o;
    atn_run_options_init(&o);
    g_assert_cmpint(atn_run_forward(run, e, &o, &err), ==, ATN_OK);
    atn_prediction top[5];
    g_assert_cmpint(atn_predict_next(m, atn_run_capture(run), n - 1, 5, top, &err), ==, ATN_OK);
    AtnPredictions *pred = ATN_PREDICTIONS(atn_window_get_predictions(win));
    g_autofree char *shown = atn_predictions_dup_text(pred);
    g_autofree char *head = g_strdup_printf("next after %d:", n - 1);
    const char *line = strstr(shown, head);
    if (!line)
        g_error("no \"%s\" in the predictions:\n%s", head, shown);
    for (int k = 0; k < 5; k++) {
        g_autofree char *want = g_strdup_printf(" %.4f", top[k].prob);
        g_assert_nonnull(strstr(line, want));
    }
    atn_run_free(run);
    atn_encoding_free(e);
    atn_model_free(m);
    destroy_window(win);
}

int main(int argc, char **argv) {
    if (!ui_test_init(&argc, &argv))
        return 0;
    const char *src = g_getenv("ATN_SOURCE_ROOT");
    gpt2_model = g_build_filename(src ? src : ".", "tests", "hf", "models", "gpt2-f32", NULL);
    fixture_path = g_build_filename(src ? src : ".", "tests", "hf", "fixtures", "gpt2-f32.json", NULL);
    g_test_add_func("/ui/causal-window", test_causal_window);
    g_test_add_func("/ui/demo-gpt2-menu", test_demo_gpt2_menu);
    return g_test_run();
}
