/* The window's Stop during tokenizing (issue 41): a run's worker (_atn_session_do_run) whose
 * GCancellable is cancelled ends in a fraction of the time the tokenizing takes, with
 * G_IO_ERROR_CANCELLED (a cancel, not "Could not read the text"), instead of tokenizing the
 * whole text first.  The model is tests/bad/base with a Unigram tokenizer.json of the pieces
 * "a" ... 19 "a": 2,000,000 characters take each a 19-step trie walk.  GLib alone (no
 * display).  Usage: test-run-cancel SOURCE_ROOT */
#include "atn-model-handle.h"
#include "atn-result.h"
#include "atn-session-private.h"

#include <glib/gstdio.h>
#include <stdio.h>
#include <string.h>

static char *folder;

static void copy(const char *src_root, const char *name) {
    g_autofree char *from = g_build_filename(src_root, "tests", "bad", "base", name, NULL);
    g_autofree char *to = g_build_filename(folder, name, NULL);
    g_autofree char *data = NULL;
    gsize len = 0;
    g_assert_true(g_file_get_contents(from, &data, &len, NULL));
    g_assert_true(g_file_set_contents(to, data, (gssize)len, NULL));
}

static double run_once(AtnModelHandle *h, const char *text, gboolean cancel_first, GError **error,
                       AtnResult **out) {
    run_job job = {0};
    job.model = h;
    job.text = (char *)text;
    g_autoptr(GCancellable) c = g_cancellable_new();
    if (cancel_first)
        g_cancellable_cancel(c);
    gint64 t0 = g_get_monotonic_time();
    *out = _atn_session_do_run(&job, c, error);
    return (double)(g_get_monotonic_time() - t0) / 1e6;
}

static void test_cancel_tokenizing(gconstpointer src_root) {
    g_autofree char *tmpl = g_build_filename(g_get_tmp_dir(), "atn-run-cancel-XXXXXX", NULL);
    folder = g_mkdtemp(tmpl);
    g_assert_nonnull(folder);
    copy(src_root, "config.json");
    copy(src_root, "model.safetensors");
    GString *tj = g_string_new("{\"version\": \"1.0\", \"pre_tokenizer\": {\"type\": \"WhitespaceSplit\"}, "
                               "\"model\": {\"type\": \"Unigram\", \"unk_id\": 1, \"vocab\": [[\"[PAD]\", -10], "
                               "[\"[UNK]\", -10], [\"[CLS]\", -10], [\"[SEP]\", -10], [\"[MASK]\", -10]");
    for (int k = 1; k <= 19; k++) {
        g_string_append(tj, ", [\"");
        for (int i = 0; i < k; i++)
            g_string_append_c(tj, 'a');
        g_string_append_printf(tj, "\", %d]", -k);
    }
    g_string_append(tj, "]}}");
    g_autofree char *tpath = g_build_filename(folder, "tokenizer.json", NULL);
    g_assert_true(g_file_set_contents(tpath, tj->str, (gssize)tj->len, NULL));
    g_string_free(tj, TRUE);

    atn_error err = {0};
    atn_model *m = atn_model_open_hf(folder, NULL, NULL, &err);
    g_assert_nonnull(m);
    AtnModelHandle *h = atn_model_handle_new(m, folder);
    char *text = g_malloc(2000001);
    memset(text, 'a', 2000000);
    text[2000000] = '\0';

    GError *error = NULL;
    AtnResult *r = NULL;
    double full = run_once(h, text, FALSE, &error, &r);
    g_assert_no_error(error);
    g_assert_nonnull(r);
    g_object_unref(r);
    double stopped = run_once(h, text, TRUE, &error, &r);
    g_assert_null(r);
    g_assert_error(error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
    g_clear_error(&error);
    g_test_message("a run of 2,000,000 characters: %.3f s; cancelled before it started: %.4f s", full, stopped);
    g_assert_cmpfloat(stopped, <, full / 4);

    g_free(text);
    g_object_unref(h);
    g_unlink(tpath);
    g_autofree char *c = g_build_filename(folder, "config.json", NULL);
    g_autofree char *w = g_build_filename(folder, "model.safetensors", NULL);
    g_unlink(c);
    g_unlink(w);
    g_rmdir(folder);
}

int main(int argc, char **argv) {
    g_test_init(&argc, &argv, NULL);
    const char *src = argc > 1 ? argv[1] : getenv("ATN_SOURCE_ROOT");
    g_test_add_data_func("/ui/run-cancel-tokenizing", src ? src : ".", test_cancel_tokenizing);
    return g_test_run();
}
