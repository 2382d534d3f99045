/* The Trace view on the modern decoders (issue 33: "the trace gains the steps these models add,
 * with their numbers"), in a real window under Xvfb on tests/hf's folders, each run on its
 * fixture's ids.  Checked against figures made here from the torch reference's config
 * (tests/hf/fixtures/<model>.json) and from the numbers the view shows:
 *  - Qwen3 (q/k norm, 4 heads over 2 K/V heads): the query table's rows before the rotation,
 *    the angle of each column (query position x the fixture's inv_freq) and after it, which is
 *    "before" turned by the rotate-half rule; the q_norm note; the keys' K/V head and the heads
 *    sharing it;
 *  - Gemma 2: the factor query_pre_attn_scalar^-1/2 (the fixture's query_scale) named as the
 *    model's own, the soft-capped column c tanh(x / c) with c = 2, the sliding layer's window of
 *    4 (the 8 earlier keys of query 11 hidden) and none in the global layer;
 *  - Mistral (window 4 in every layer): the window named with its hidden keys;
 *  - BLOOM: an ALiBi column of -m |i - j| with the fixture's slope of each head;
 * and for each, the softmax of the mask step's score column is the weights the view shows (the
 * score includes the soft-cap and ALiBi).
 *
 * Run with --tap (meson does).  Without a display it reports "1..0 # SKIP no display". */
#include "ui-test-util.h"

#include <stdlib.h>

static cJSON *fixture(const char *name) {
    const char *src = g_getenv("ATN_SOURCE_ROOT");
    g_autofree char *file = g_strconcat(name, ".json", NULL);
    g_autofree char *path = g_build_filename(src ? src : ".", "tests", "hf", "fixtures", file, NULL);
    g_autofree char *json = NULL;
    g_assert_true(g_file_get_contents(path, &json, NULL, NULL));
    cJSON *fx = cJSON_Parse(json);
    g_assert_nonnull(fx);
    return fx;
}

/* Opens tests/hf/models/name and runs the fixture's case (its ids); returns the token count. */
static int open_case(AtnWindow *win, const char *name, cJSON *fx, const char *case_name) {
    cJSON *c = NULL;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(fx, "cases")) if (!strcmp(cJSON_GetObjectItem(c, "name")->valuestring,
                                                                          case_name)) break;
    g_assert_nonnull(c);
    cJSON *jids = cJSON_GetObjectItem(c, "ids");
    int n = cJSON_GetArraySize(jids);
    int32_t *ids = g_new(int32_t, n);
    for (int i = 0; i < n; i++)
        ids[i] = cJSON_GetArrayItem(jids, i)->valueint;
    const char *src = g_getenv("ATN_SOURCE_ROOT");
    g_autofree char *folder = g_build_filename(src ? src : ".", "tests", "hf", "models", name, NULL);
    AtnSession *s = atn_window_get_session(win);
    atn_session_set_ids(s, ids, n);
    atn_session_open_model(s, folder);
    ids_wait w = {win, ids, n};
    g_assert_true(wait_for(result_of_ids, &w));
    g_free(ids);
    return n;
}

/* A step's table as rows of tab-separated cells. */
static char ***step_table(AtnTraceView *tv, atn_trace_step step, int *rows) {
    g_autofree char *text = atn_trace_view_dup_step_text(tv, step);
    g_assert_nonnull(text);
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    int n = 0;
    while (lines[n] && *lines[n])
        n++;
    char ***t = g_new0(char **, n + 1);
    for (int r = 0; r < n; r++)
        t[r] = g_strsplit(lines[r], "\t", -1);
    *rows = n;
    return t;
}

static void table_free(char ***t) {
    for (int r = 0; t[r]; r++)
        g_strfreev(t[r]);
    g_free(t);
}

static double cell(char ***t, int r, int c) {
    const char *s = t[r][c];
    if (!strcmp(s, "−∞"))
        return -INFINITY;
    return g_ascii_strtod(s, NULL);
}

static void assert_words(AtnTraceView *tv, atn_trace_step step, const char *want, gboolean present) {
    g_autofree char *words = atn_trace_view_dup_step_words(tv, step);
    g_assert_nonnull(words);
    if ((strstr(words, want) != NULL) != present)
        g_error("step %d %s \"%s\":\n%s", step + 1, present ? "does not say" : "says", want, words);
}

/* The weights the softmax step shows are the softmax of the mask step's last column (the
 * score every term went into), to the 4 decimals shown. */
static void assert_softmax_of_scores(AtnTraceView *tv, const char *what) {
    int rm, rs;
    char ***mask = step_table(tv, ATN_TRACE_STEP_MASK, &rm);
    char ***soft = step_table(tv, ATN_TRACE_STEP_SOFTMAX, &rs);
    g_assert_cmpint(rm, ==, rs);
    int last = (int)g_strv_length(mask[0]) - 1, wcol = (int)g_strv_length(soft[0]) - 1;
    double m = -INFINITY, sum = 0;
    for (int r = 1; r < rm; r++)
        m = fmax(m, cell(mask, r, last));
    for (int r = 1; r < rm; r++)
        sum += exp(cell(mask, r, last) - m);
    for (int r = 1; r < rm; r++) {
        double want = exp(cell(mask, r, last) - m) / sum, got = cell(soft, r, wcol);
        if (fabs(want - got) > 1e-3)
            g_error("%s: key %s's weight %.4f is not the softmax of the mask step's scores (%.4f)", what, mask[r][0],
                    got, want);
    }
    table_free(mask);
    table_free(soft);
}

static void test_qwen3(AtnWindow *win) {
    cJSON *fx = fixture("qwen3-f32");
    int n = open_case(win, "qwen3-f32", fx, "single");
    int q = n - 1, k = cJSON_GetObjectItem(fx, "d_head")->valueint, half = k / 2;
    AtnTraceView *tv = show_trace(win, 1, 3, q);
    int rows;
    char ***t = step_table(tv, ATN_TRACE_STEP_QUERY, &rows);
    g_assert_cmpint(rows, ==, 4);   /* indices, before, angle, after */
    g_assert_cmpstr(t[1][0], ==, "before RoPE");
    g_assert_cmpstr(t[2][0], ==, "angle (rad)");
    cJSON *inv = cJSON_GetObjectItem(fx, "inv_freq");
    int cols = (int)g_strv_length(t[0]);
    for (int i = 1; i < cols; i++) {
        if (!strcmp(t[0][i], "…"))
            continue;
        int c = atoi(t[0][i]);
        double angle = q * cJSON_GetArrayItem(inv, c % half)->valuedouble;
        if (fabs(cell(t, 2, i) - angle) > 1e-3)
            g_error("qwen3 column %d's angle %s, want %.4f", c, t[2][i], angle);
        /* rotate_half: x_c cos - x_{c+half} sin, x_{c+half} cos + x_c sin; the partner's column may be
           hidden, so the check reads the trace the view shows for it */
        const atn_trace *tr = atn_trace_view_get_trace(tv);
        double a = tr->q_unrotated[c], b = c < half ? -tr->q_unrotated[c + half] : tr->q_unrotated[c - half];
        double want = a * cos(angle) + b * sin(angle);
        if (fabs(cell(t, 1, i) - a) > 1e-4 || fabs(cell(t, 3, i) - want) > 2e-3)
            g_error("qwen3 column %d: before %s (%.4f), after %s (want %.4f)", c, t[1][i], a, t[3][i], want);
    }
    table_free(t);
    const char *intro = atn_trace_view_get_intro(tv);
    if (!strstr(intro, "4 heads of dk = 12 dimensions (dmodel = 32); it reads K/V head 1 of 2."))
        g_error("qwen3 trace intro: \"%s\"", intro);
    assert_words(tv, ATN_TRACE_STEP_QUERY, "RoPE", TRUE);
    assert_words(tv, ATN_TRACE_STEP_QUERY, "q_norm", TRUE);
    assert_words(tv, ATN_TRACE_STEP_KEYS, "K/V head 1's columns 12–23", TRUE);
    assert_words(tv, ATN_TRACE_STEP_KEYS, "heads 2–3 share", TRUE);
    assert_softmax_of_scores(tv, "qwen3");
    cJSON_Delete(fx);
}

static void test_gemma2(AtnWindow *win) {
    cJSON *fx = fixture("gemma2-f32");
    int n = open_case(win, "gemma2-f32", fx, "long");
    g_assert_cmpint(n, ==, 12);
    double factor = cJSON_GetObjectItem(fx, "query_scale")->valuedouble;
    double c = cJSON_GetObjectItem(fx, "attn_softcap")->valuedouble;
    AtnTraceView *tv = show_trace(win, 0, 1, 11);   /* layer 0 slides (window 4) */
    g_autofree char *f = g_strdup_printf("× %.4f: the model's own factor", factor);
    assert_words(tv, ATN_TRACE_STEP_SCALE, f, TRUE);
    assert_words(tv, ATN_TRACE_STEP_SCALE, "Soft-cap: c · tanh(score / c) with c = 2", TRUE);
    int rows;
    char ***t = step_table(tv, ATN_TRACE_STEP_SCALE, &rows);
    g_assert_cmpint((int)g_strv_length(t[0]), ==, 5);   /* j, token, s_j, × factor, soft-capped */
    for (int r = 1; r < rows; r++) {
        double s = cell(t, r, 2), scaled = cell(t, r, 3), capped = cell(t, r, 4);
        if (fabs(scaled - s * factor) > 2e-4 || fabs(capped - c * tanh(scaled / c)) > 2e-4)
            g_error("gemma2 key %s: s %s, × factor %s, soft-capped %s", t[r][0], t[r][2], t[r][3], t[r][4]);
    }
    table_free(t);
    assert_words(tv, ATN_TRACE_STEP_MASK, "sliding window of 4 tokens: the 8 earlier keys more than 3", TRUE);
    assert_softmax_of_scores(tv, "gemma2 layer 0");
    tv = show_trace(win, 1, 1, 11);   /* the global layer */
    assert_words(tv, ATN_TRACE_STEP_MASK, "sliding window", FALSE);
    assert_softmax_of_scores(tv, "gemma2 layer 1");
    cJSON_Delete(fx);
}

static void test_mistral(AtnWindow *win) {
    cJSON *fx = fixture("mistral-window");
    int n = open_case(win, "mistral-window", fx, "long");
    AtnTraceView *tv = show_trace(win, 1, 5, n - 1);
    g_autofree char *w = g_strdup_printf("sliding window of 4 tokens: the %d earlier keys", n - 4);
    assert_words(tv, ATN_TRACE_STEP_MASK, w, TRUE);
    assert_words(tv, ATN_TRACE_STEP_KEYS, "K/V head 1's columns 4–7", TRUE);
    assert_words(tv, ATN_TRACE_STEP_KEYS, "heads 4–7 share", TRUE);
    assert_softmax_of_scores(tv, "mistral");
    cJSON_Delete(fx);
}

static void test_bloom(AtnWindow *win) {
    cJSON *fx = fixture("bloom-6heads");
    int n = open_case(win, "bloom-6heads", fx, "single");
    int q = n - 1;
    for (int h = 0; h < 6; h += 4) {
        AtnTraceView *tv = show_trace(win, 1, h, q);
        double m = cJSON_GetArrayItem(cJSON_GetObjectItem(fx, "alibi_slopes"), h)->valuedouble;
        int rows;
        char ***t = step_table(tv, ATN_TRACE_STEP_MASK, &rows);
        g_assert_cmpstr(t[0][3], ==, "ALiBi");
        for (int r = 1; r < rows; r++) {
            int j = atoi(t[r][0]);
            if (fabs(cell(t, r, 3) - (-m * abs(q - j))) > 1e-4)
                g_error("bloom head %d key %d: ALiBi %s, want %.4f", h, j, t[r][3], -m * abs(q - j));
        }
        table_free(t);
        assert_softmax_of_scores(tv, "bloom");
    }
    cJSON_Delete(fx);
}

static void test_trace_decoders(void) {
    AtnWindow *win = new_window();
    test_qwen3(win);
    test_gemma2(win);
    test_mistral(win);
    test_bloom(win);
    destroy_window(win);
}

int main(int argc, char **argv) {
    if (!ui_test_init(&argc, &argv))
        return 0;
    g_test_add_func("/ui/trace-decoders", test_trace_decoders);
    return g_test_run();
}
