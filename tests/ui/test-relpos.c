/* The window on ModernBERT and DeBERTa-v3 (issue 34): the F32 folders of tests/hf
 * (gen_modernbert.py, gen_deberta.py; hf-modernbert and hf-deberta check the engine and the
 * command line against their torch references within 1e-4) opened in the window with a sentence
 * holding a [MASK].  Every head the Head view shows (ModernBERT's global layer 0 and local
 * layer 1 among them: the local one's cells outside the window 0) is the command line's
 * `run -o x.npy` bit for bit, and the [MASK] guesses under the sentence are `predict`'s: the
 * same five words with the same probabilities. */
#include "ui-test-util.h"

#define TEXT "big red [MASK] new it happy"

/* The command line's attention for TEXT: [L][H][n][n] (g_free), its shape in shape[4]. */
static float *cli_attention(const char *model, int64_t shape[4]) {
    g_autofree char *out = g_strdup_printf("%s/atn-ui-relpos-%d.npy", g_get_tmp_dir(), (int)getpid());
    g_autofree char *exe = g_build_filename(g_getenv("ATN_BUILD_ROOT"), "app", "attnscope", NULL);
    const char *argv[] = {exe, "run", "--model", model, "--text", TEXT, "-o", out, NULL};
    int status = 0;
    g_autofree char *err = NULL;
    g_assert_true(g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL, NULL, &err, &status,
                               NULL));
    if (!g_spawn_check_wait_status(status, NULL))
        g_error("attnscope run failed: %s", err);
    float *data = NULL;
    int nd = 0;
    atn_error e = {0};
    g_assert_cmpint(atn_npy_read_f32(out, &data, shape, &nd, 4, &e), ==, ATN_OK);
    g_assert_cmpint(nd, ==, 4);
    float *copy = g_memdup2(data, (gsize)(shape[0] * shape[1] * shape[2] * shape[3]) * sizeof(float));
    free(data);
    g_unlink(out);
    return copy;
}

/* `attnscope predict`'s lines for TEXT: "   1. word   0.1234" -> "word 0.1234", in order. */
static GPtrArray *cli_guesses(const char *model) {
    g_autofree char *exe = g_build_filename(g_getenv("ATN_BUILD_ROOT"), "app", "attnscope", NULL);
    const char *argv[] = {exe, "predict", "--model", model, "--text", TEXT, NULL};
    int status = 0;
    g_autofree char *out = NULL, *err = NULL;
    g_assert_true(g_spawn_sync(NULL, (char **)argv, NULL, 0, NULL, NULL, &out, &err, &status, NULL));
    if (!g_spawn_check_wait_status(status, NULL))
        g_error("attnscope predict failed: %s", err);
    GPtrArray *g = g_ptr_array_new_with_free_func(g_free);
    g_auto(GStrv) lines = g_strsplit(out, "\n", -1);
    for (int i = 0; lines[i]; i++) {
        char word[256];
        double p;
        int rank;
        if (sscanf(lines[i], " %d. %255s %lf", &rank, word, &p) == 3)
            g_ptr_array_add(g, g_strdup_printf("%s %.4f", word, p));
    }
    return g;
}

static void check_model(const char *folder, const char *family) {
    g_autofree char *model = g_build_filename(g_getenv("ATN_SOURCE_ROOT"), "tests", "hf", "models", folder, NULL);
    AtnWindow *win = new_window();
    AtnSession *s = atn_window_get_session(win);
    atn_session_set_debounce_ms(s, 0);
    open_and_wait(win, model);
    type_and_wait(win, TEXT);
    AtnResult *r = atn_session_get_result(s);
    g_assert_nonnull(r);
    g_assert_cmpstr(atn_model_family_name(atn_model_handle_get_model(atn_result_get_model(r))), ==, family);
    int64_t shape[4];
    float *cli = cli_attention(model, shape);
    int n = atn_result_get_n_tokens(r);
    g_assert_cmpint(shape[2], ==, n);
    show_view(win, "head");
    AtnHeatmap *hm = head_heatmap(win);
    for (int l = 0; l < shape[0]; l++)
        for (int h = 0; h < shape[1]; h++) {
            atn_session_select_head(s, l, h);
            settle(10);
            int r0, c0, rows, cols;
            atn_heatmap_reset_zoom(hm);
            atn_heatmap_get_visible(hm, &r0, &c0, &rows, &cols);
            g_assert_cmpint(atn_heatmap_get_rows(hm), ==, n);
            g_assert_cmpint(cols, ==, n);
            const float *want = cli + ((size_t)l * shape[1] + h) * (size_t)n * n;
            for (int i = 0; i < n; i++)
                for (int j = 0; j < n; j++) {
                    float got = atn_heatmap_get_value(hm, i, j);
                    if (memcmp(&got, &want[(size_t)i * n + j], sizeof got))
                        g_error("%s L%d H%d cell (%d, %d): window %.9g, command line %.9g", folder, l, h, i, j, got,
                                want[(size_t)i * n + j]);
                }
        }
    /* the [MASK] guesses: predict's five words and probabilities, in order */
    AtnPredictions *pred = ATN_PREDICTIONS(atn_window_get_predictions(win));
    g_assert_true(gtk_widget_get_visible(GTK_WIDGET(pred)));
    g_autofree char *text = atn_predictions_dup_text(pred);
    g_autoptr(GPtrArray) want = cli_guesses(model);
    g_test_message("%s window: %s", folder, text);
    g_assert_cmpint(want->len, ==, 5);
    const char *at = text;
    for (guint k = 0; k < want->len; k++) {
        const char *hit = strstr(at, g_ptr_array_index(want, k));
        if (!hit)
            g_error("%s: guess %u \"%s\" not in the window's \"%s\" (in order)", folder, k,
                    (char *)g_ptr_array_index(want, k), text);
        at = hit + 1;
    }
    g_free(cli);
    destroy_window(win);
}

static void test_modernbert(void) { check_model("modernbert-f32", "ModernBERT"); }
static void test_deberta(void) { check_model("deberta-v3-f32", "DeBERTa-v2"); }

int main(int argc, char **argv) {
    if (!ui_test_init(&argc, &argv))
        return 0;
    g_test_add_func("/ui/relpos/modernbert", test_modernbert);
    g_test_add_func("/ui/relpos/deberta-v3", test_deberta);
    return g_test_run();
}
