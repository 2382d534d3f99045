/* A merged corpus statistics file in the window (ui/atn-stats-file.c, the Statistics view's file
 * mode, ui/atn-window-stats.c) under Xvfb.  The file is written by the command line beside the
 * test (`attnscope stats --model demo --corpus c.txt -o s.safetensors`) and read back here
 * through the engine (corpus-stats.h) as the independent figures:
 *  - the table shows the file's means and corpus labels, the info line its sentence count;
 *  - the grid's cells hold each head's mean of the chosen statistic, the smallest coloured as
 *    viridis 0 and the largest as viridis 1;
 *  - a head's Examples are the file's exemplars (weight, line, tokens); clicking one runs that
 *    corpus line (read here from the corpus) and shows the head with the example's query
 *    selected and key outlined, and the run's tokens at those positions are the example's;
 *  - the note under a head's examples starts with its label's evidence, in English the engine's
 *    own words (atn_corpus_stats_label's why: atn_stats_file_explain words the same figures in
 *    the UI's language);
 *  - a file made from `--corpus @LIST` finds the list and its files beside it: the examples show
 *    their sentences (lines counted across the files);
 *  - a file that is not a statistics file is reported naming it and the file shown stays;
 *    Cancel leaves the file shown; a dropped path (atn_window_open_path) opens by contents.
 *
 * Run with --tap (meson does).  Without a display it reports "1..0 # SKIP no display". */
#include "ui-test-util.h"

#include "atn-stats-file.h"
#include "corpus-stats.h"
#include "render.h"

#include <glib/gstdio.h>

static char *tmp, *corpus, *stats_path;

static const char *const lines[] = {
    "the cat sat on the mat .",
    "a dog ran to the park , and she said that he would come home soon .",
    "",
    "birds fly over the river while children play in the garden ?",
    "the cat sat on the mat and the cat sat on the mat .",
    "she said that he would come .",
};

static void make_file(void) {
    tmp = g_dir_make_tmp("atn-stats-file-XXXXXX", NULL);
    g_assert_nonnull(tmp);
    corpus = g_build_filename(tmp, "c.txt", NULL);
    GString *text = g_string_new(NULL);
    for (guint i = 0; i < G_N_ELEMENTS(lines); i++)
        g_string_append_printf(text, "%s\n", lines[i]);
    g_assert_true(g_file_set_contents(corpus, text->str, (gssize)text->len, NULL));
    g_string_free(text, TRUE);
    stats_path = g_build_filename(tmp, "s.safetensors", NULL);
    const char *args[] = {"stats", "--model", "demo", "--corpus", corpus, "--top", "5", NULL};
    cli_export(args, stats_path);
}

static gboolean file_idle(gpointer data) { return !atn_stats_view_get_file_busy(data); }

static AtnStatsView *open_file(AtnWindow *win, const char *path) {
    atn_window_open_stats(win, path);
    AtnStatsView *sv = ATN_STATS_VIEW(atn_window_get_view_widget(win, "statistics"));
    g_assert_true(wait_for(file_idle, sv));
    return sv;
}

typedef struct apply_wait {
    AtnSession *s;
    int query, key;
} apply_wait;

static gboolean example_applied(gpointer data) {
    apply_wait *w = data;
    return !atn_session_get_busy(w->s) && !atn_session_get_opening(w->s) && atn_session_get_result(w->s) &&
           atn_session_get_query(w->s) == w->query && atn_session_get_hover_token(w->s) == w->key;
}

static void test_stats_file(void) {
    atn_error err = {0};
    atn_corpus_stats *cs = atn_corpus_stats_load(stats_path, &err);
    g_assert_nonnull(cs);
    atn_stats *means = NULL;
    g_assert_cmpint(atn_corpus_stats_means(cs, &means, &err), ==, ATN_OK);
    const int L = means->n_layers, H = means->n_heads;
    AtnWindow *win = new_window();
    open_and_wait(win, "demo");
    AtnStatsView *sv = open_file(win, stats_path);
    g_assert_cmpstr(atn_window_get_view(win), ==, "statistics");
    g_assert_true(atn_stats_view_has_file(sv));
    int64_t sentences = 0;
    atn_corpus_stats_counts(cs, &sentences, NULL, NULL, NULL, NULL);
    g_assert_cmpint(sentences, ==, 5);   /* the empty line is covered, not run */
    g_assert_nonnull(strstr(atn_stats_view_get_info(sv), "5"));
    g_assert_nonnull(strstr(atn_stats_view_get_info(sv), "c.txt"));

    /* the table: the file's means, its labels */
    atn_stats_view_sort_by(sv, "index", GTK_SORT_ASCENDING);
    GListModel *m = atn_stats_view_get_model(sv);
    g_assert_cmpuint(g_list_model_get_n_items(m), ==, (guint)(L * H));
    for (int c = 0; c < L * H; c++) {
        g_autoptr(AtnHeadStat) row = g_list_model_get_item(m, (guint)c);
        g_assert_cmpint(atn_head_stat_get_layer(row) * H + atn_head_stat_get_head(row), ==, c);
        g_assert_cmpfloat(atn_head_stat_get_stats(row)->entropy, ==, means->heads[c].entropy);
        g_assert_cmpfloat(atn_head_stat_get_stats(row)->prev, ==, means->heads[c].prev);
        g_autofree char *pattern = NULL;
        g_object_get(row, "pattern", &pattern, NULL);
        const char *label = atn_corpus_stats_label(cs, c / H, c % H, NULL, 0);
        g_assert_cmpstr(pattern, ==, atn_stats_file_translate_label(label));
    }

    /* the grid, coloured by → previous (statistic 6): values and the ends of the colour map */
    AtnStatsFilePanel *panel = atn_stats_view_get_file_panel(sv);
    g_assert_true(gtk_widget_get_mapped(GTK_WIDGET(panel)));
    atn_stats_file_panel_set_statistic(panel, 6);
    double lo = G_MAXDOUBLE, hi = -G_MAXDOUBLE;
    int lo_c = 0, hi_c = 0;
    for (int c = 0; c < L * H; c++) {
        double v, rgb[3], mean, sd, mn, mx;
        g_assert_true(atn_stats_file_panel_get_cell(panel, c / H, c % H, &v, rgb));
        g_assert_true(atn_corpus_stats_spread(cs, c / H, c % H, 6, &mean, &sd, &mn, &mx));
        g_assert_cmpfloat(v, ==, mean);
        g_assert_cmpfloat(fabs(v - means->heads[c].prev), <, 1e-12);
        if (v < lo)
            lo = v, lo_c = c;
        if (v > hi)
            hi = v, hi_c = c;
    }
    g_assert_cmpfloat(hi, >, lo);
    double v, rgb[3], want[3];
    atn_stats_file_panel_get_cell(panel, lo_c / H, lo_c % H, &v, rgb);
    atn_colormap_rgb(ATN_CMAP_VIRIDIS, 0, want);
    for (int i = 0; i < 3; i++)
        g_assert_cmpfloat(fabs(rgb[i] - want[i]), <, 1e-9);
    atn_stats_file_panel_get_cell(panel, hi_c / H, hi_c % H, &v, rgb);
    atn_colormap_rgb(ATN_CMAP_VIRIDIS, 1, want);
    for (int i = 0; i < 3; i++)
        g_assert_cmpfloat(fabs(rgb[i] - want[i]), <, 1e-9);
    g_assert_false(atn_stats_file_panel_get_cell(panel, L, 0, &v, rgb));

    /* a row selects its head's examples: the file's exemplars */
    int layer = hi_c / H, head = hi_c % H;
    atn_stats_view_activate_row(sv, (guint)hi_c);
    g_assert_cmpstr(atn_window_get_view(win), ==, "statistics");   /* a file's row stays here */
    int gl, gh;
    atn_stats_file_panel_get_head(panel, &gl, &gh);
    g_assert_cmpint(gl, ==, layer);
    g_assert_cmpint(gh, ==, head);
    const atn_cs_exemplar *ex = NULL;
    int32_t n_ex = atn_corpus_stats_exemplars(cs, layer, head, &ex);
    g_assert_cmpint(n_ex, ==, 5);
    /* the note: the label's evidence, the engine's English words */
    char why[320];
    g_assert_nonnull(atn_corpus_stats_label(cs, layer, head, why, sizeof why));
    g_test_message("note: %s", atn_stats_file_panel_get_note(panel));
    g_assert_true(g_str_has_prefix(atn_stats_file_panel_get_note(panel), why));
    g_assert_cmpuint(strlen(why), >, 20);
    g_assert_cmpuint(atn_stats_file_panel_get_n_examples(panel), ==, (guint)n_ex);
    for (int32_t i = 0; i < n_ex; i++) {
        const char *t = atn_stats_file_panel_get_example_text(panel, (guint)i);
        g_autofree char *w = g_strdup_printf("%.3f", ex[i].weight);
        g_autofree char *ln = g_strdup_printf("line %lld ", (long long)ex[i].line);
        g_test_message("example %d: %s", i, t);
        g_assert_true(g_str_has_prefix(t, w));
        g_assert_nonnull(strstr(t, ln));
        g_assert_nonnull(strstr(t, ex[i].query_text));
        g_assert_nonnull(strstr(t, ex[i].key_text));
        g_assert_nonnull(strstr(t, lines[ex[i].line - 1]));   /* the sentence, from the corpus beside */
    }

    /* click the last example: its sentence runs, the head shows with query and key */
    int32_t pick = n_ex - 1;
    AtnSession *s = atn_window_get_session(win);
    atn_stats_file_panel_activate_example(panel, (guint)pick);
    g_assert_cmpstr(atn_window_get_view(win), ==, "head");
    apply_wait w = {s, ex[pick].query, ex[pick].key};
    g_assert_true(wait_for(example_applied, &w));
    g_assert_cmpstr(atn_session_get_text(s), ==, lines[ex[pick].line - 1]);
    g_assert_cmpint(atn_session_get_layer(s), ==, layer);
    g_assert_cmpint(atn_session_get_head(s), ==, head);
    AtnResult *r = atn_session_get_result(s);
    const char *const *tokens = atn_result_get_tokens(r);
    g_assert_cmpstr(tokens[ex[pick].query], ==, ex[pick].query_text);
    g_assert_cmpstr(tokens[ex[pick].key], ==, ex[pick].key_text);
    /* the head's weight there is the example's */
    const float *a = atn_result_get_head(r, layer, head);
    g_assert_cmpfloat(a[ex[pick].query * atn_result_get_n_tokens(r) + ex[pick].key], ==, ex[pick].weight);

    /* a text file is refused naming it; the file shown stays */
    show_view(win, "statistics");
    sv = open_file(win, corpus);
    g_assert_nonnull(strstr(atn_window_get_error(win), "c.txt"));
    g_assert_true(atn_stats_view_has_file(sv));
    g_assert_cmpuint(g_list_model_get_n_items(atn_stats_view_get_model(sv)), ==, (guint)(L * H));
    /* Cancel: the file shown stays */
    atn_window_open_stats(win, stats_path);
    g_assert_true(atn_stats_view_get_file_busy(sv));
    atn_stats_view_cancel_corpus(sv);
    g_assert_true(wait_for(file_idle, sv));
    g_assert_true(atn_stats_view_has_file(sv));
    /* This Sentence leaves file mode; a path dropped opens by its contents */
    atn_stats_view_show_sentence(sv);
    g_assert_false(atn_stats_view_has_file(sv));
    atn_window_open_path(win, stats_path);
    g_assert_true(wait_for(file_idle, sv));
    g_assert_true(atn_stats_view_has_file(sv));
    destroy_window(win);
    atn_stats_free(means);
    atn_corpus_stats_free(cs);
}

/* A partial of role filters says so in the info line; its exemplars are of those roles. */
static void test_stats_file_roles(void) {
    g_autofree char *roles = g_build_filename(tmp, "roles.safetensors", NULL);
    const char *args[] = {"stats", "--model", "demo", "--corpus", corpus, "--top", "3", "--query-role", "word",
                          "--key-role", "special", NULL};
    cli_export(args, roles);
    AtnWindow *win = new_window();
    AtnStatsView *sv = open_file(win, roles);
    g_assert_nonnull(strstr(atn_stats_view_get_info(sv), "queries: word · keys: special"));
    AtnStatsFilePanel *panel = atn_stats_view_get_file_panel(sv);
    g_assert_cmpuint(atn_stats_file_panel_get_n_examples(panel), ==, 3);
    for (guint i = 0; i < 3; i++) {
        const char *t = atn_stats_file_panel_get_example_text(panel, i);
        g_assert_true(strstr(t, "→ 0 “[CLS]”") || strstr(t, "“[SEP]”"));
    }
    destroy_window(win);
    g_unlink(roles);
}

/* Without the corpus beside it the examples show their tokens only and a click runs nothing. */
static void test_stats_file_no_corpus(void) {
    g_autofree char *folder = g_build_filename(tmp, "alone", NULL);
    g_mkdir(folder, 0700);
    g_autofree char *copy = g_build_filename(folder, "s.safetensors", NULL);
    g_autofree char *bytes = NULL;
    gsize len = 0;
    g_assert_true(g_file_get_contents(stats_path, &bytes, &len, NULL));
    g_assert_true(g_file_set_contents(copy, bytes, (gssize)len, NULL));
    AtnWindow *win = new_window();
    AtnStatsView *sv = open_file(win, copy);
    AtnStatsFilePanel *panel = atn_stats_view_get_file_panel(sv);
    g_assert_cmpuint(atn_stats_file_panel_get_n_examples(panel), ==, 5);
    g_assert_nonnull(strstr(atn_stats_file_panel_get_note(panel), "c.txt"));
    g_assert_null(strstr(atn_stats_file_panel_get_example_text(panel, 0), "\n"));
    atn_stats_file_panel_activate_example(panel, 0);
    g_assert_cmpstr(atn_window_get_view(win), ==, "statistics");
    destroy_window(win);
    g_unlink(copy);
    g_rmdir(folder);
}

/* A file of `--corpus @list.txt` (two files): the examples show their sentences, read through the
 * list beside the file, the second file's lines numbered after the first's. */
static void test_stats_file_list(void) {
    g_autofree char *a = g_build_filename(tmp, "a.txt", NULL), *b = g_build_filename(tmp, "b.txt", NULL);
    g_autofree char *list = g_build_filename(tmp, "list.txt", NULL), *out = g_build_filename(tmp, "l.safetensors", NULL);
    g_assert_true(g_file_set_contents(a, "the cat sat on the mat .\nbirds fly over the river .\n", -1, NULL));
    g_assert_true(g_file_set_contents(b, "she said that he would come .\na dog ran to the park , and home .\n", -1,
                                      NULL));
    g_assert_true(g_file_set_contents(list, "a.txt\n# a comment\nb.txt\n", -1, NULL));
    const char *const all[] = {"the cat sat on the mat .", "birds fly over the river .", "she said that he would come .",
                               "a dog ran to the park , and home ."};
    g_autofree char *arg = g_strdup_printf("@%s", list);
    const char *args[] = {"stats", "--model", "demo", "--corpus", arg, "--top", "4", NULL};
    cli_export(args, out);
    AtnWindow *win = new_window();
    AtnStatsView *sv = open_file(win, out);
    AtnStatsFilePanel *panel = atn_stats_view_get_file_panel(sv);
    atn_error err = {0};
    atn_corpus_stats *cs = atn_corpus_stats_load(out, &err);
    g_assert_nonnull(cs);
    g_assert_true(g_str_has_prefix(atn_corpus_stats_identity(cs)->corpus, "@list.txt ("));
    gboolean second_file = FALSE;
    for (int hd = 0; hd < 4; hd++) {
        atn_stats_file_panel_select_head(panel, 1, hd);
        const atn_cs_exemplar *ex = NULL;
        int32_t n = atn_corpus_stats_exemplars(cs, 1, hd, &ex);
        g_assert_cmpuint(atn_stats_file_panel_get_n_examples(panel), ==, (guint)n);
        for (int32_t i = 0; i < n; i++) {
            g_assert_nonnull(strstr(atn_stats_file_panel_get_example_text(panel, (guint)i), all[ex[i].line - 1]));
            second_file |= ex[i].line > 2;
        }
    }
    g_assert_true(second_file);
    g_assert_null(strstr(atn_stats_file_panel_get_note(panel), "not beside"));
    destroy_window(win);
    atn_corpus_stats_free(cs);
    g_unlink(out), g_unlink(list), g_unlink(a), g_unlink(b);
}

int main(int argc, char **argv) {
    if (!ui_test_init(&argc, &argv))
        return 0;
    make_file();
    g_test_add_func("/ui/stats-file", test_stats_file);
    g_test_add_func("/ui/stats-file-no-corpus", test_stats_file_no_corpus);
    g_test_add_func("/ui/stats-file-roles", test_stats_file_roles);
    g_test_add_func("/ui/stats-file-list", test_stats_file_list);
    int rc = g_test_run();
    g_unlink(stats_path);
    g_unlink(corpus);
    g_rmdir(tmp);
    return rc;
}
