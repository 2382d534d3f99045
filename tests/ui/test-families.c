/* The window opens one folder per modern decoder family (issue 33): tests/hf/models' Llama,
 * Qwen2, Qwen3, Mistral, Gemma 2, Gemma 3 and BLOOM test folders, each run on its fixture's
 * "single" case (token ids; tests/hf/gen_decoders.py's from-scratch torch reference following
 * Hugging Face's eager modeling code, which never calls attnscope).  Through the window's own
 * capture (the session's AtnResult): every attention weight and every layer's hidden state
 * within 1e-4 of the reference, and the next-token log-probabilities of every id after each
 * of the fixture's positions within 1e-4; the Predictions row under the tokens names the
 * reference's likeliest next token.
 *
 * Run with --tap (meson does).  Without a display it reports "1..0 # SKIP no display". */
#include "ui-test-util.h"

#include <stdlib.h>

static const char *const FAMILIES[] = {"llama-f32",  "qwen2-f32",  "qwen3-f32",   "mistral-window",
                                       "gemma2-f32", "gemma3-f32", "bloom-6heads"};

static char *hf_path(const char *sub, const char *name) {
    const char *src = g_getenv("ATN_SOURCE_ROOT");
    return g_build_filename(src ? src : ".", "tests", "hf", sub, name, NULL);
}

/* The largest |window - reference| over a fixture array of count floats. */
static double npy_worst(const char *fixture, const float *got, size_t count) {
    float *want = NULL;
    int64_t shape[4];
    int nd = 0;
    atn_error err = {0};
    if (atn_npy_read_f32(fixture, &want, shape, &nd, 4, &err) != ATN_OK)
        g_error("%s", err.message);
    size_t total = 1;
    for (int i = 0; i < nd; i++)
        total *= (size_t)shape[i];
    if (total != count)
        g_error("%s: %zu values, the window has %zu", fixture, total, count);
    double worst = 0;
    for (size_t i = 0; i < count; i++)
        worst = fmax(worst, fabs((double)got[i] - (double)want[i]));
    free(want);
    return worst;
}

static void check_family(AtnWindow *win, const char *name) {
    g_autofree char *folder = hf_path("models", name);
    g_autofree char *json_name = g_strconcat(name, ".json", NULL);
    g_autofree char *json_path = hf_path("fixtures", json_name);
    g_autofree char *json = NULL;
    g_assert_true(g_file_get_contents(json_path, &json, NULL, NULL));
    cJSON *fx = cJSON_Parse(json);
    g_assert_nonnull(fx);
    cJSON *c = NULL;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(fx, "cases")) if (!strcmp(cJSON_GetObjectItem(c, "name")->valuestring,
                                                                          "single")) break;
    g_assert_nonnull(c);
    cJSON *jids = cJSON_GetObjectItem(c, "ids");
    int n = cJSON_GetArraySize(jids);
    int32_t *ids = g_new(int32_t, n);
    for (int i = 0; i < n; i++)
        ids[i] = cJSON_GetArrayItem(jids, i)->valueint;

    AtnSession *s = atn_window_get_session(win);
    atn_session_set_ids(s, ids, n);   /* before the folder opens: its first run is of these ids */
    atn_session_open_model(s, folder);
    ids_wait w = {win, ids, n};
    g_assert_true(wait_for(result_of_ids, &w));
    AtnResult *r = atn_session_get_result(s);
    const atn_capture *cap = atn_result_get_capture(r);
    for (int i = 0; i < n; i++)
        g_assert_cmpint(cap->enc->ids[i], ==, ids[i]);
    const atn_model *m = atn_model_handle_get_model(atn_result_get_model(r));
    const atn_config *cfg = atn_model_config(m);
    int L = cfg->n_layers, H = cfg->n_heads, d = cfg->d_model;

    g_autofree char *attn_name = g_strdup_printf("%s-single-attn.npy", name);
    g_autofree char *attn_path = hf_path("fixtures", attn_name);
    double wa = npy_worst(attn_path, cap->attn, (size_t)L * H * n * n);
    g_autofree char *hid_name = g_strdup_printf("%s-single-hidden.npy", name);
    g_autofree char *hid_path = hf_path("fixtures", hid_name);
    double wh = npy_worst(hid_path, cap->hidden, (size_t)(L + 1) * n * d);

    /* next-token log-probabilities of every id after each fixture position */
    const cJSON *np = cJSON_GetObjectItem(c, "next_positions"), *lps = cJSON_GetObjectItem(c, "next_log_probs");
    const cJSON *tops = cJSON_GetObjectItem(c, "next_top_ids");
    double wl = 0;
    atn_error err = {0};
    for (int p = 0; p < cJSON_GetArraySize(np); p++) {
        int pos = cJSON_GetArrayItem(np, p)->valueint;
        for (int id = 0; id < cfg->vocab_size; id++) {
            double got = 0;
            g_assert_cmpint(atn_predict_next_log_prob(m, cap, pos, id, &got, &err), ==, ATN_OK);
            wl = fmax(wl, fabs(got - cJSON_GetArrayItem(cJSON_GetArrayItem(lps, p), id)->valuedouble));
        }
    }
    if (wa > 1e-4 || wh > 1e-4 || wl > 1e-4)
        g_error("%s through the window: attention %.3g, hidden states %.3g, next-token log-probabilities %.3g "
                "from the reference (at most 1e-4)", name, wa, wh, wl);
    g_test_message("%s: %d layers x %d heads over %d K/V heads; attention %.2g, hidden %.2g, log-probs %.2g", name, L,
                   H, cap->n_kv_heads > 0 ? cap->n_kv_heads : H, wa, wh, wl);

    /* the window's guesses after the last token: the reference's likeliest first */
    int last = n - 1, row = -1;
    for (int p = 0; p < cJSON_GetArraySize(np); p++)
        if (cJSON_GetArrayItem(np, p)->valueint == last)
            row = p;
    if (row >= 0) {
        settle(50);
        g_autofree char *shown = atn_predictions_dup_text(ATN_PREDICTIONS(atn_window_get_predictions(win)));
        int top = cJSON_GetArrayItem(cJSON_GetArrayItem(tops, row), 0)->valueint;
        atn_prediction best[1];
        g_assert_cmpint(atn_predict_next(m, cap, last, 1, best, &err), ==, ATN_OK);
        g_assert_cmpint(best[0].id, ==, top);
        if (!shown || !strstr(shown, best[0].token))
            g_error("%s: the Predictions row \"%s\" does not name the likeliest next token \"%s\"", name,
                    shown ? shown : "", best[0].token);
    }
    g_free(ids);
    cJSON_Delete(fx);
}

static void test_families(void) {
    AtnWindow *win = new_window();
    for (size_t f = 0; f < G_N_ELEMENTS(FAMILIES); f++)
        check_family(win, FAMILIES[f]);
    destroy_window(win);
}

int main(int argc, char **argv) {
    if (!ui_test_init(&argc, &argv))
        return 0;
    g_test_add_func("/ui/families", test_families);
    return g_test_run();
}
