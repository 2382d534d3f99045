/* The Similarity and Statistics views "By K/V group" (issue 33) in a real window under Xvfb:
 * tests/hf/models/mistral-window (8 query heads over 2 K/V heads, 2 layers).  The numbers the
 * window shows equal the command line's JSON for the same model and text:
 *   similarity --by-kv-group: kv_groups' group-by-group matrix, within and between (cosine,
 *     the whole model; Jensen-Shannon, one layer);
 *   stats --by-kv-group: each group's row (entropy, [CLS], [SEP], self, prev, next, distance,
 *     pattern), and the view's CSV export equal to --format csv byte for byte;
 *   a merged statistics file of the model (a partial from `stats --corpus -o`): its groups as
 *     `stats --from FILE --by-kv-group` gives them, and the CSV export byte for byte.
 * The command line prints 9 significant digits; the window's doubles are compared to them
 * within 5e-9 relative.  The check is hidden for a model whose every head has its own K/V head.
 *
 * Run with --tap (meson does).  Without a display it reports "1..0 # SKIP no display". */
#include "ui-test-util.h"

#include "atn-labels.h"

static const char *const TEXT = "the cat sat on the mat and the dog ran to the park";

static char *mistral_folder(void) {
    const char *src = g_getenv("ATN_SOURCE_ROOT");
    return g_build_filename(src ? src : ".", "tests", "hf", "models", "mistral-window", NULL);
}

/* `attnscope <args> -o out`, the file read back (the caller frees). */
static char *cli_output(const char *const *args, const char *name) {
    g_autofree char *dir = g_dir_make_tmp("atn-kv-XXXXXX", NULL);
    g_assert_nonnull(dir);
    g_autofree char *out = g_build_filename(dir, name, NULL);
    cli_export(args, out);
    char *text = NULL;
    g_assert_true(g_file_get_contents(out, &text, NULL, NULL));
    g_unlink(out);
    g_rmdir(dir);
    return text;
}

static void assert_close(double window, double cli, const char *what) {
    if (!(fabs(window - cli) <= 5e-9 * fmax(1.0, fabs(cli))))
        g_error("%s: window %.17g, command line %.9g", what, window, cli);
}

static void check_similarity(AtnWindow *win, const char *model, atn_metric metric, atn_scope scope, int layer) {
    AtnSimilarityView *view = ATN_SIMILARITY_VIEW(atn_window_get_view_widget(win, "similarity"));
    atn_session_set_layer(atn_window_get_session(win), layer);
    atn_similarity_view_set_metric(view, metric);
    atn_similarity_view_set_scope(view, scope);
    settle(20);
    g_assert_true(wait_for(similarity_ready, view));
    AtnSimilarityMap *map = atn_similarity_view_get_map(view);
    const atn_kv_groups *g = atn_similarity_map_get_kv_groups(map);
    g_assert_nonnull(g);
    g_autofree char *layer_arg = g_strdup_printf("%d", layer);
    const char *metric_name = metric == ATN_METRIC_JS ? "js" : "cosine";
    const char *args[] = {"similarity", "--model", model, "--text", TEXT, "--metric", metric_name, "--by-kv-group",
                          scope == ATN_SCOPE_LAYER ? "--layer" : NULL, layer_arg, NULL};
    g_autofree char *json = cli_output(args, "sim.json");
    cJSON *root = cJSON_Parse(json);
    g_assert_nonnull(root);
    cJSON *kg = cJSON_GetObjectItem(root, "kv_groups");
    g_assert_nonnull(kg);
    g_assert_cmpint(cJSON_GetObjectItem(kg, "kv_heads")->valueint, ==, g->kv_heads);
    g_assert_cmpint(cJSON_GetObjectItem(kg, "heads_per_group")->valueint, ==, g->per_group);
    cJSON *values = cJSON_GetObjectItem(kg, "values");
    g_assert_cmpint(cJSON_GetArraySize(values), ==, g->count);
    g_assert_cmpint(g->count, ==, scope == ATN_SCOPE_LAYER ? 2 : 4);
    for (int a = 0; a < g->count; a++)
        for (int b = 0; b < g->count; b++) {
            g_autofree char *what = g_strdup_printf("group cell [%d][%d]", a, b);
            assert_close(g->values[(size_t)a * g->count + b],
                         cJSON_GetArrayItem(cJSON_GetArrayItem(values, a), b)->valuedouble, what);
        }
    assert_close(g->within, cJSON_GetObjectItem(kg, "within")->valuedouble, "within");
    assert_close(g->between, cJSON_GetObjectItem(kg, "between")->valuedouble, "between");
    /* what a person reads: the line beside the controls, the names on the matrix, a cell's sentence */
    g_autofree char *within = g_strdup_printf("%.4f", cJSON_GetObjectItem(kg, "within")->valuedouble);
    const char *info = atn_similarity_view_get_info(view);
    if (!strstr(info, within) || !strstr(info, "K/V groups of 4 heads"))
        g_error("Similarity info \"%s\" does not say the within-group mean %s", info, within);
    g_autofree char *label1 = atn_similarity_map_dup_group_label(map, 1);
    g_assert_cmpstr(label1, ==, scope == ATN_SCOPE_LAYER ? "KV1" : "L0\u00b7KV1");
    g_autofree char *cell = atn_similarity_map_dup_group_pair_text(map, 0, 1);
    g_autofree char *v01 = g_strdup_printf("%.4f", g->values[1]);
    if (!strstr(cell, "heads 0–3") || !strstr(cell, "heads 4–7") || !strstr(cell, v01) || !strstr(cell, "16 pairs"))
        g_error("group cell text \"%s\"", cell);
    cJSON_Delete(root);
}

static const char *const STAT_NAMES[] = {"entropy", "cls", "sep", "self", "prev", "next", "distance"};

static void check_stats(AtnWindow *win, const char *model) {
    show_view(win, "statistics");
    AtnStatsView *view = ATN_STATS_VIEW(atn_window_get_view_widget(win, "statistics"));
    GListModel *rows = atn_stats_view_get_model(view);
    g_assert_cmpint(g_list_model_get_n_items(rows), ==, 16);   /* heads first */
    g_assert_true(gtk_widget_get_visible(atn_stats_view_get_kv_check(view)));
    atn_stats_view_set_by_kv_group(view, TRUE);
    rows = atn_stats_view_get_model(view);
    g_assert_cmpint(g_list_model_get_n_items(rows), ==, 4);
    atn_stats_view_sort_by(view, "index", GTK_SORT_ASCENDING);
    const char *args[] = {"stats", "--model", model, "--text", TEXT, "--by-kv-group", "--format", "json", NULL};
    g_autofree char *json = cli_output(args, "stats.json");
    cJSON *root = cJSON_Parse(json);
    g_assert_nonnull(root);
    cJSON *groups = cJSON_GetObjectItem(root, "groups");
    g_assert_cmpint(cJSON_GetArraySize(groups), ==, 4);
    for (int i = 0; i < 4; i++) {
        g_autoptr(AtnHeadStat) row = g_list_model_get_item(rows, i);
        cJSON *grp = cJSON_GetArrayItem(groups, i);
        g_assert_cmpint(atn_head_stat_get_layer(row), ==, cJSON_GetObjectItem(grp, "layer")->valueint);
        g_assert_cmpint(atn_head_stat_get_head(row), ==, cJSON_GetObjectItem(grp, "kv_head")->valueint);
        g_assert_cmpint(atn_head_stat_get_group_size(row), ==, 4);
        for (size_t k = 0; k < G_N_ELEMENTS(STAT_NAMES); k++) {
            double v;
            g_object_get(row, STAT_NAMES[k], &v, NULL);
            g_autofree char *what = g_strdup_printf("group %d %s", i, STAT_NAMES[k]);
            assert_close(v, cJSON_GetObjectItem(grp, STAT_NAMES[k])->valuedouble, what);
        }
        g_assert_cmpstr(atn_pattern_name(atn_head_stat_get_stats(row)->pattern), ==,
                        cJSON_GetObjectItem(grp, "pattern")->valuestring);
    }
    const char *info = atn_stats_view_get_info(view);
    if (!strstr(info, "mean over its 4 query heads"))
        g_error("Statistics info \"%s\"", info);
    /* the export: the command line's CSV, byte for byte */
    g_autoptr(GError) error = NULL;
    g_autofree char *csv = atn_stats_view_dup_csv(view, &error);
    g_assert_no_error(error);
    const char *cargs[] = {"stats", "--model", model, "--text", TEXT, "--by-kv-group", "--format", "csv", NULL};
    g_autofree char *want = cli_output(cargs, "stats.csv");
    g_assert_cmpstr(csv, ==, want);
    /* a group's row opens its first query head */
    AtnSession *s = atn_window_get_session(win);
    atn_stats_view_activate_row(view, 3);   /* layer 1, K/V head 1: heads 4-7 */
    g_assert_cmpint(atn_session_get_layer(s), ==, 1);
    g_assert_cmpint(atn_session_get_head(s), ==, 4);
    atn_stats_view_set_by_kv_group(view, FALSE);
    g_assert_cmpint(g_list_model_get_n_items(atn_stats_view_get_model(view)), ==, 16);
    cJSON_Delete(root);
}

static gboolean file_idle(gpointer data) { return !atn_stats_view_get_file_busy(data); }

/* A merged statistics file of mistral-window (a partial written by `stats --corpus -o`): "By K/V group"
 * shows `stats --from FILE --by-kv-group`'s rows, and exports its CSV byte for byte. */
static void check_stats_file(AtnWindow *win, const char *model) {
    g_autofree char *dir = g_dir_make_tmp("atn-kvf-XXXXXX", NULL);
    g_autofree char *corpus = g_build_filename(dir, "c.txt", NULL);
    g_autofree char *part = g_build_filename(dir, "part.safetensors", NULL);
    g_assert_true(g_file_set_contents(corpus, "the cat sat on the mat\na dog ran to the park\nwe like tea\n", -1, NULL));
    const char *make[] = {"stats", "--model", model, "--corpus", corpus, NULL};
    cli_export(make, part);
    show_view(win, "statistics");
    AtnStatsView *view = ATN_STATS_VIEW(atn_window_get_view_widget(win, "statistics"));
    atn_stats_view_set_by_kv_group(view, FALSE);
    atn_stats_view_load_file(view, part);
    g_assert_true(wait_for(file_idle, view));
    g_assert_true(atn_stats_view_has_file(view));
    g_assert_cmpint(g_list_model_get_n_items(atn_stats_view_get_model(view)), ==, 16);
    g_assert_true(gtk_widget_get_visible(atn_stats_view_get_kv_check(view)));
    atn_stats_view_set_by_kv_group(view, TRUE);
    GListModel *rows = atn_stats_view_get_model(view);
    g_assert_cmpint(g_list_model_get_n_items(rows), ==, 4);
    atn_stats_view_sort_by(view, "index", GTK_SORT_ASCENDING);
    const char *args[] = {"stats", "--from", part, "--by-kv-group", "--format", "json", NULL};
    g_autofree char *json = cli_output(args, "from.json");
    cJSON *root = cJSON_Parse(json);
    g_assert_nonnull(root);
    cJSON *groups = cJSON_GetObjectItem(root, "groups");
    g_assert_cmpint(cJSON_GetArraySize(groups), ==, 4);
    for (int i = 0; i < 4; i++) {
        g_autoptr(AtnHeadStat) row = g_list_model_get_item(rows, i);
        cJSON *grp = cJSON_GetArrayItem(groups, i);
        g_assert_cmpint(atn_head_stat_get_head(row), ==, cJSON_GetObjectItem(grp, "kv_head")->valueint);
        for (size_t k = 0; k < G_N_ELEMENTS(STAT_NAMES); k++) {
            double v;
            g_object_get(row, STAT_NAMES[k], &v, NULL);
            g_autofree char *what = g_strdup_printf("file group %d %s", i, STAT_NAMES[k]);
            assert_close(v, cJSON_GetObjectItem(grp, STAT_NAMES[k])->valuedouble, what);
        }
        g_autofree char *pattern = NULL;   /* the heads' majority pattern, not one head's corpus label */
        g_object_get(row, "pattern", &pattern, NULL);
        g_assert_cmpstr(pattern, ==, atn_label_pattern(atn_head_stat_get_stats(row)->pattern));
        g_assert_cmpstr(atn_pattern_name(atn_head_stat_get_stats(row)->pattern), ==,
                        cJSON_GetObjectItem(grp, "pattern")->valuestring);
    }
    g_autoptr(GError) error = NULL;
    g_autofree char *csv = atn_stats_view_dup_csv(view, &error);
    g_assert_no_error(error);
    const char *cargs[] = {"stats", "--from", part, "--by-kv-group", "--format", "csv", NULL};
    g_autofree char *want = cli_output(cargs, "from.csv");
    g_assert_cmpstr(csv, ==, want);
    cJSON_Delete(root);
    atn_stats_view_show_sentence(view);
    atn_stats_view_set_by_kv_group(view, FALSE);
    g_unlink(part);
    g_unlink(corpus);
    g_rmdir(dir);
}

static void test_kv_groups(void) {
    g_autofree char *model = mistral_folder();
    AtnWindow *win = new_window();
    /* a model whose every head has its own K/V head: no such choice */
    open_and_wait(win, f32_model);
    type_and_wait(win, "the cat sat");
    show_view(win, "similarity");
    AtnSimilarityView *sv = ATN_SIMILARITY_VIEW(atn_window_get_view_widget(win, "similarity"));
    g_assert_true(wait_for(similarity_ready, sv));
    g_assert_false(gtk_widget_get_visible(atn_similarity_view_get_kv_check(sv)));
    show_view(win, "statistics");
    AtnStatsView *tv = ATN_STATS_VIEW(atn_window_get_view_widget(win, "statistics"));
    atn_stats_view_get_model(tv);
    g_assert_false(gtk_widget_get_visible(atn_stats_view_get_kv_check(tv)));

    open_and_wait(win, model);
    type_and_wait(win, TEXT);
    show_view(win, "similarity");
    g_assert_true(wait_for(similarity_ready, sv));
    g_assert_true(gtk_widget_get_visible(atn_similarity_view_get_kv_check(sv)));
    atn_similarity_view_set_by_kv_group(sv, TRUE);
    check_similarity(win, model, ATN_METRIC_COSINE, ATN_SCOPE_MODEL, 0);
    check_similarity(win, model, ATN_METRIC_JS, ATN_SCOPE_LAYER, 1);
    /* off again: the heads' matrix */
    atn_similarity_view_set_by_kv_group(sv, FALSE);
    g_assert_null(atn_similarity_map_get_kv_groups(atn_similarity_view_get_map(sv)));
    g_assert_cmpint(atn_similarity_map_get_similarity(atn_similarity_view_get_map(sv))->count, ==, 8);
    check_stats(win, model);
    check_stats_file(win, model);
    destroy_window(win);
}

int main(int argc, char **argv) {
    if (!ui_test_init(&argc, &argv))
        return 0;
    g_test_add_func("/ui/kv-groups-views", test_kv_groups);
    return g_test_run();
}
