/* The Similarity view (ui/atn-similarity-view.c) in a real window under Xvfb: the sentence's
 * head similarity and the corpus mode.
 *
 * Run with --tap (meson does).  Without a display it reports "1..0 # SKIP no display". */
#include "ui-test-util.h"

/* The similarity the view shows now, copied ([count][count]). */
static double *similarity_values(AtnSimilarityView *v, int *count) {
    const atn_similarity *sim = atn_similarity_map_get_similarity(atn_similarity_view_get_map(v));
    g_assert_nonnull(sim);
    *count = sim->count;
    return g_memdup2(sim->values, sizeof(double) * sim->count * sim->count);
}

/* Similarity over a corpus: the mean of the sentences' own matrices (each computed by the
 * view in sentence mode), for the whole model; back to the sentence; cancel; a bad file. */
static void test_similarity_corpus(void) {
    AtnWindow *win = new_window();
    open_and_wait(win, f32_model);
    show_view(win, "similarity");
    AtnSimilarityView *v = ATN_SIMILARITY_VIEW(atn_window_get_view_widget(win, "similarity"));
    atn_similarity_view_set_scope(v, ATN_SCOPE_MODEL);
    int ca = 0, cb = 0, cc = 0;
    type_and_wait(win, "the cat sat on the mat");
    g_assert_true(wait_for(similarity_ready, v));
    g_autofree double *a = similarity_values(v, &ca);
    type_and_wait(win, "we like tea");
    g_assert_true(wait_for(similarity_ready, v));
    g_autofree double *b = similarity_values(v, &cb);
    g_assert_cmpint(ca, ==, 8);
    g_assert_cmpint(cb, ==, 8);

    g_autofree char *dir = g_dir_make_tmp("atn-simc-XXXXXX", NULL);
    g_autofree char *path = g_build_filename(dir, "corpus.txt", NULL);
    g_assert_true(g_file_set_contents(path, "the cat sat on the mat\n\nwe like tea\n", -1, NULL));
    atn_similarity_view_load_corpus(v, path);
    g_assert_true(atn_similarity_view_get_busy(v));
    g_assert_true(wait_for(similarity_ready, v));
    g_test_message("%s", atn_similarity_view_get_info(v));
    g_assert_nonnull(strstr(atn_similarity_view_get_info(v), "2 sentences"));
    g_autofree double *c = similarity_values(v, &cc);
    g_assert_cmpint(cc, ==, 8);
    for (int i = 0; i < 64; i++)
        g_assert_cmpfloat_with_epsilon(c[i], (a[i] + b[i]) / 2, 1e-9);
    /* typing does not replace it; This Sentence does */
    type_and_wait(win, "the mat");
    g_assert_true(wait_for(similarity_ready, v));
    g_assert_nonnull(strstr(atn_similarity_view_get_info(v), "2 sentences"));
    atn_similarity_view_show_sentence(v);
    g_assert_true(wait_for(similarity_ready, v));
    g_assert_null(strstr(atn_similarity_view_get_info(v), "sentences of"));
    /* cancelled: the sentence's matrix again */
    atn_similarity_view_load_corpus(v, path);
    atn_similarity_view_cancel(v);
    g_assert_true(wait_for(similarity_ready, v));
    g_assert_null(strstr(atn_similarity_view_get_info(v), "sentences of"));
    /* a file that is not there: said */
    g_autofree char *missing = g_build_filename(dir, "missing.txt", NULL);
    atn_similarity_view_load_corpus(v, missing);
    g_assert_true(wait_for(similarity_ready, v));
    g_assert_nonnull(strstr(atn_similarity_view_get_info(v), "missing.txt"));
    destroy_window(win);
    g_unlink(path);
    g_rmdir(dir);
}

/* Similarity: the matrix for the layer, and a pair side by side. */
static void test_similarity(void) {
    AtnWindow *win = new_window();
    open_and_wait(win, f32_model);
    type_and_wait(win, "the cat sat on the mat");
    show_view(win, "similarity");
    AtnSimilarityView *v = ATN_SIMILARITY_VIEW(atn_window_get_view_widget(win, "similarity"));
    g_assert_true(wait_for(similarity_ready, v));
    const atn_similarity *sim = atn_similarity_map_get_similarity(atn_similarity_view_get_map(v));
    g_assert_cmpint(sim->count, ==, 4);
    for (int c = 0; c < 4; c++)
        g_assert_cmpfloat_with_epsilon(sim->values[c * 4 + c], 0.0, 1e-9);   /* JS distance to itself */
    atn_similarity_view_set_scope(v, ATN_SCOPE_MODEL);
    g_assert_true(wait_for(similarity_ready, v));
    sim = atn_similarity_map_get_similarity(atn_similarity_view_get_map(v));
    g_assert_cmpint(sim->count, ==, 8);
    atn_similarity_view_compare(v, 1, 6);
    settle(30);
    destroy_window(win);
}

int main(int argc, char **argv) {
    if (!ui_test_init(&argc, &argv))
        return 0;
    g_test_add_func("/ui/similarity", test_similarity);
    g_test_add_func("/ui/similarity-corpus", test_similarity_corpus);
    return g_test_run();
}
