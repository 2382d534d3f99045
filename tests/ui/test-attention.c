/* The window on an attention file (docs/attention-file.md, ui/atn-session-attention.c): a file
 * written by `attnscope run -o x.safetensors` on the demo model opens in place of the model,
 * every head's probabilities (and the Head view's cells) are the model run's to the bit, the
 * views switch, what-if, predictions and the trace say they are off, a broken file leaves the
 * file shown with a message naming the tensor, and a model opens again afterwards. */
#include "ui-test-util.h"

#include "atn-encdec.h"
#include "atn-result-test.h"
#include "atn-session-attention-test.h"
#include "analysis.h"
#include "atn-model-grid-test.h"
#include "atn-model-grid-view.h"
#include "atn-window-test.h"
#include "render.h"
#include "attention-file.h"

#include <glib/gi18n.h>
#include <math.h>

#include <fcntl.h>
#include <unistd.h>

#define TEXT "The cat sat on the mat because it was tired."

static char *dir;

/* The session is idle and shows the attention file at path. */
typedef struct file_wait {
    AtnWindow *win;
    const char *path;
} file_wait;

static gboolean showing_file(gpointer data) {
    file_wait *w = data;
    AtnSession *s = atn_window_get_session(w->win);
    AtnModelHandle *m = atn_session_get_model(s);
    AtnResult *r = atn_session_get_result(s);
    return m && !atn_session_get_opening(s) && !atn_session_get_busy(s) && r && atn_result_get_model(r) == m &&
           !atn_model_handle_has_weights(m) && !g_strcmp0(atn_model_handle_get_source(m), w->path);
}

static gboolean error_shown(gpointer data) { return atn_window_get_error(data) != NULL; }

/* `attnscope run --model demo --text TEXT -o path` */
static void write_file(const char *path) {
    const char *const argv[] = {"run", "--model", "demo", "--text", TEXT, NULL};
    cli_export(argv, path);
}

/* A copy of src whose attention holds v at layer l, head h, query q, key k: the header is read
 * (8-byte length, JSON), the tensor found by its data_offsets, the float replaced. */
static void write_changed_copy(const char *src, const char *dst, int H, int n, int l, int h, int q, int k, float v) {
    g_autofree char *bytes = NULL;
    gsize len = 0;
    g_assert_true(g_file_get_contents(src, &bytes, &len, NULL));
    guint64 hlen = 0;
    memcpy(&hlen, bytes, 8);
    g_autofree char *json = g_strndup(bytes + 8, hlen);
    cJSON *root = cJSON_Parse(json);
    g_assert_nonnull(root);
    cJSON *attn = cJSON_GetObjectItem(root, "attn");
    g_assert_nonnull(attn);
    double begin = cJSON_GetArrayItem(cJSON_GetObjectItem(attn, "data_offsets"), 0)->valuedouble;
    cJSON_Delete(root);
    size_t at = 8 + hlen + (size_t)begin + ((((size_t)l * H + h) * n + q) * n + k) * sizeof(float);
    g_assert_cmpuint(at + 4, <=, len);
    memcpy(bytes + at, &v, 4);
    g_assert_true(g_file_set_contents(dst, bytes, len, NULL));
}

static void test_attention_file(void) {
    AtnWindow *win = new_window();
    AtnSession *s = atn_window_get_session(win);
    open_and_wait(win, "demo");
    type_and_wait(win, TEXT);
    g_autoptr(AtnResult) model_run = g_object_ref(atn_session_get_result(s));
    int L = atn_result_get_n_layers(model_run), H = atn_result_get_n_heads(model_run);
    int n = atn_result_get_n_tokens(model_run);

    g_autofree char *path = g_build_filename(dir, "demo.safetensors", NULL);
    write_file(path);
    atn_session_open_attention(s, path);
    file_wait fw = {win, path};
    g_assert_true(wait_for(showing_file, &fw));
    AtnResult *r = atn_session_get_result(s);
    AtnModelHandle *file = atn_session_get_model(s);
    g_assert_false(atn_result_has_weights(r));
    g_assert_null(atn_model_handle_get_model(file));
    g_assert_cmpstr(atn_model_handle_get_name(file), ==, "demo");   /* the file's model_id */
    g_assert_cmpint(atn_result_get_n_layers(r), ==, L);
    g_assert_cmpint(atn_result_get_n_heads(r), ==, H);
    g_assert_cmpint(atn_result_get_n_tokens(r), ==, n);
    for (int i = 0; i < n; i++)
        g_assert_cmpstr(atn_result_get_tokens(r)[i], ==, atn_result_get_tokens(model_run)[i]);
    /* every head, to the bit */
    for (int l = 0; l < L; l++)
        for (int h = 0; h < H; h++)
            g_assert_cmpint(memcmp(atn_result_get_head(r, l, h), atn_result_get_head(model_run, l, h),
                                   (size_t)n * n * sizeof(float)), ==, 0);
    /* the Head view's cells, on a head other than the first */
    show_view(win, "head");
    atn_session_select_head(s, L - 1, H - 1);
    settle(50);
    AtnHeatmap *hm = head_heatmap(win);
    g_assert_cmpint(atn_heatmap_get_rows(hm), ==, n);
    const float *want = atn_result_get_head(model_run, L - 1, H - 1);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            float got = atn_heatmap_get_value(hm, i, j);
            g_assert_cmpint(memcmp(&got, &want[i * n + j], sizeof got), ==, 0);
        }
    /* causal as the file says (demo: not), in the result and the drawing */
    g_assert_cmpint(atn_result_is_causal(r), ==, atn_result_is_causal(model_run));
    g_assert_cmpint(atn_heatmap_get_causal(hm), ==, atn_result_is_causal(model_run));
    /* the status line says what is shown, without a run time */
    g_assert_nonnull(strstr(atn_window_get_status(win), "attention file, no weights"));
    /* the statistics came with the file's result (the clearest head was picked with them) */
    g_assert_nonnull(atn_result_get_stats(r));
    /* the views switch; each that needs no weights shows the file */
    show_view(win, "model");
    show_view(win, "similarity");
    g_assert_true(wait_for(similarity_ready, atn_window_get_view_widget(win, "similarity")));
    show_view(win, "statistics");
    g_autofree char *png = g_build_filename(dir, "model.png", NULL);
    show_view(win, "model");
    g_autoptr(GError) error = NULL;
    g_assert_true(atn_window_export_to(win, png, 1, &error));
    int pw = 0, ph = 0;
    g_assert_true(png_size(png, &pw, &ph));
    g_assert_cmpint(pw, >, 0);
    /* no what-if menu on a head: there is no model to run with the change */
    GtkWidget *grid_view = atn_window_get_view_widget(win, "model");
    gtk_widget_activate_action(grid_view, "whatif.menu", NULL);
    settle(100);
    GtkPopover *menu = atn_model_grid_view_get_head_menu(ATN_MODEL_GRID_VIEW(grid_view), NULL, NULL);
    g_assert_false(gtk_widget_get_visible(GTK_WIDGET(menu)));
    /* the trace: off, and why */
    AtnTraceView *tv = show_trace(win, 0, 0, 1);
    g_assert_nonnull(strstr(atn_trace_view_get_intro(tv), "trace is off"));
    g_assert_cmpint(atn_heatmap_get_rows(atn_trace_view_get_heatmap(tv)), ==, n);
    GtkWidget *step = atn_trace_view_get_step_widget(tv, ATN_TRACE_STEP_KEYS);   /* the demo's, hidden */
    g_assert_true(!step || !gtk_widget_is_drawable(step));
    /* what-if: off, and why */
    show_view(win, "whatif");
    AtnWhatifView *wv = ATN_WHATIF_VIEW(atn_window_get_view_widget(win, "whatif"));
    g_assert_nonnull(strstr(atn_whatif_view_get_status(wv), "What-if is off"));
    g_assert_null(atn_whatif_view_get_diff(wv));
    g_assert_false(gtk_widget_is_sensitive(atn_whatif_view_get_control(wv, "alibi")));
    /* typing runs nothing: the file keeps its result */
    guint runs = atn_session_get_n_runs(s);
    atn_session_set_text(s, "Another sentence.", NULL);
    atn_session_rerun(s);
    settle(200);
    g_assert_true(atn_session_get_result(s) == r);
    g_assert_cmpuint(atn_session_get_n_runs(s), ==, runs);

    /* a broken file: the message names the tensor, the file stays */
    g_autofree char *bad = g_build_filename(dir, "nan.safetensors", NULL);
    write_changed_copy(path, bad, H, n, 1, 2, 3, 4, NAN);
    atn_session_open_attention(s, bad);
    g_assert_true(wait_for(error_shown, win));
    g_assert_true(wait_for(not_opening, s));
    const char *msg = atn_window_get_error(win);
    g_assert_nonnull(strstr(msg, "nan.safetensors"));
    g_assert_nonnull(strstr(msg, "'attn' holds NaN at layer 1, head 2, query 3, key 4"));
    g_assert_true(atn_session_get_model(s) == file);
    g_assert_true(atn_session_get_result(s) == r);
    /* a file that is not an attention file at all */
    g_autofree char *junk = g_build_filename(dir, "junk.safetensors", NULL);
    g_assert_true(g_file_set_contents(junk, "not a safetensors file", -1, NULL));
    atn_session_open_attention(s, junk);
    g_assert_true(wait_for(not_opening, s));
    g_assert_true(atn_session_get_model(s) == file);

    /* a model opens again, and runs */
    open_and_wait(win, "demo");
    type_and_wait(win, TEXT);
    g_assert_true(atn_result_has_weights(atn_session_get_result(s)));
    show_view(win, "whatif");
    g_assert_null(strstr(atn_whatif_view_get_status(wv), "What-if is off"));
    tv = show_trace(win, 0, 0, 1);   /* the trace is back, with its steps */
    g_assert_null(strstr(atn_trace_view_get_intro(tv), "trace is off"));
    g_assert_true(gtk_widget_is_drawable(atn_trace_view_get_step_widget(tv, ATN_TRACE_STEP_KEYS)));
    /* rows that do not sum to 1: shown, with a notice naming the worst row */
    g_autofree char *sum = g_build_filename(dir, "sum.safetensors", NULL);
    write_changed_copy(path, sum, H, n, 0, 0, 0, 0, 2.0f);
    atn_session_open_attention(s, sum);
    fw.path = sum;
    g_assert_true(wait_for(showing_file, &fw));
    g_assert_nonnull(atn_window_get_notice(win));
    g_assert_nonnull(strstr(atn_window_get_notice(win), "do not sum to 1"));
    destroy_window(win);
    g_unlink(sum);
    g_unlink(png);
    g_unlink(junk);
    g_unlink(bad);
    g_unlink(path);
}

/* The trace of an attention file that holds q, k, v (run -o x.safetensors --qkv): the Trace
 * view shows the steps, and steps 1-8 read what the model's trace shows, digit for digit;
 * the weights equal the file's attention; step 10 says why it is off. */
static void test_attention_file_trace(void) {
    AtnWindow *win = new_window();
    AtnSession *s = atn_window_get_session(win);
    open_and_wait(win, "demo-gpt2");
    type_and_wait(win, TEXT);
    enum { L = 1, H = 3, Q = 5 };
    AtnTraceView *tv = show_trace(win, L, H, Q);
    char *want[ATN_TRACE_STEP_COUNT] = {0};
    for (int st = ATN_TRACE_STEP_QUERY; st <= ATN_TRACE_STEP_OUTPUT; st++)
        want[st] = atn_trace_view_dup_step_text(tv, st);

    g_autofree char *path = g_build_filename(dir, "qkv.safetensors", NULL);
    const char *const argv[] = {"run", "--model", "demo-gpt2", "--text", TEXT, "--qkv", NULL};
    cli_export(argv, path);
    atn_session_open_attention(s, path);
    file_wait fw = {win, path};
    g_assert_true(wait_for(showing_file, &fw));
    AtnResult *r = atn_session_get_result(s);
    g_assert_false(atn_result_has_weights(r));
    g_assert_true(atn_result_can_trace(r));
    tv = show_trace(win, L, H, Q);
    const char *intro = atn_trace_view_get_intro(tv);
    g_assert_null(strstr(intro, "trace is off"));
    g_assert_nonnull(strstr(intro, "from the attention file's q, k and v"));
    g_assert_true(gtk_widget_is_drawable(atn_trace_view_get_step_widget(tv, ATN_TRACE_STEP_KEYS)));
    for (int st = ATN_TRACE_STEP_QUERY; st <= ATN_TRACE_STEP_OUTPUT; st++) {
        g_autofree char *got = atn_trace_view_dup_step_text(tv, st);
        g_assert_nonnull(got);
        g_assert_cmpstr(got, ==, want[st]);
        g_free(want[st]);
    }
    /* the weights are the file's attention (the heatmap shows that row too) */
    atn_trace *t = NULL;
    atn_error err = {0};
    g_assert_cmpint(atn_result_trace(r, L, H, Q, &t, &err), ==, ATN_OK);
    int n = atn_result_get_n_tokens(r);
    const float *row = atn_result_get_head(r, L, H) + (size_t)Q * n;
    for (int j = 0; j < n; j++)
        g_assert_cmpfloat(fabs(t->weights[j] - row[j]), <, 1e-6);
    g_assert_cmpfloat(t->max_abs_diff, <, 1e-6);
    g_assert_null(t->projected);
    atn_trace_free(t);
    /* the copy as Markdown says where the numbers came from and why step 10 is empty */
    g_autoptr(GError) error = NULL;
    g_autofree char *md = atn_trace_view_dup_markdown(tv, &error);
    g_assert_nonnull(md);
    g_assert_nonnull(strstr(md, "does not hold"));
    g_assert_nonnull(strstr(md, "file's attention"));
    destroy_window(win);
    g_unlink(path);
}

/* A second instance hands its file to the running window (G_APPLICATION_HANDLES_OPEN), as
 * GNOME applications do: this process is the primary (registered on the session bus that
 * meson's ui-single-instance gives it: dbus-run-session), then `attnscope view A` and a file
 * manager's `attnscope B` each exit 0 at once and the one window shows their file. */
typedef struct child {
    gboolean done;
    int status;
} child;

static void child_exited(GPid pid, int status, gpointer data) {
    child *c = data;
    c->status = status;
    c->done = TRUE;
    g_spawn_close_pid(pid);
}

static gboolean child_done(gpointer data) { return ((child *)data)->done; }

static void second_instance(AtnWindow *win, const char *const *args, const char *path) {
    g_autofree char *exe = g_build_filename(g_getenv("ATN_BUILD_ROOT"), "app", "attnscope", NULL);
    const char *argv[16] = {exe};
    for (int i = 0; args[i]; i++)
        argv[i + 1] = args[i];
    GPid pid;
    g_autoptr(GError) error = NULL;
    /* posix_spawn (GLib takes it with LEAVE_DESCRIPTORS_OPEN), not fork: fork runs OpenBLAS's
       atfork handler, which stops its threads under the window's run in flight, and that run
       then never returns (the window stays busy); a file manager's attnscope is not forked
       from the window */
    g_assert_true(g_spawn_async(NULL, (char **)argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_LEAVE_DESCRIPTORS_OPEN,
                                NULL, NULL, &pid, &error));
    child c = {0};
    g_child_watch_add(pid, child_exited, &c);
    gint64 t0 = g_get_monotonic_time();
    g_assert_true(wait_for(child_done, &c));
    double secs = (g_get_monotonic_time() - t0) / 1e6;
    g_assert_true(g_spawn_check_wait_status(c.status, NULL));   /* exit 0: handed over */
    g_test_message("%s handed over in %.2f s", args[0], secs);
    g_assert_cmpfloat(secs, <, 20.0);
    file_wait fw = {win, path};
    if (!wait_for(showing_file, &fw)) {
        AtnModelHandle *m = atn_session_get_model(atn_window_get_session(win));
        AtnSession *ss = atn_window_get_session(win);
        AtnResult *rr = atn_session_get_result(ss);
        g_error("%s not shown: the window shows %s (error: %s; notice: %s; opening %d busy %d result of %s)", path,
                m ? atn_model_handle_get_source(m) : "nothing", atn_window_get_error(win),
                atn_window_get_notice(win), atn_session_get_opening(ss) != NULL, atn_session_get_busy(ss),
                rr ? atn_model_handle_get_source(atn_result_get_model(rr)) : "none");
    }
}

static void test_second_instance(void) {
    if (!g_getenv("ATN_TEST_SESSION_BUS")) {   /* only under ui-single-instance's private bus */
        g_test_skip("needs the private session bus of the ui-single-instance test");
        return;
    }
    /* the files first: cli_export forks (g_spawn_sync), and a fork while the window's run has
       OpenBLAS's threads busy leaves that run hanging (second_instance) */
    g_autofree char *a = g_build_filename(dir, "second-a.safetensors", NULL);
    g_autofree char *b = g_build_filename(dir, "second-b.safetensors", NULL);
    write_file(a);
    const char *const run_b[] = {"run", "--model", "demo-gpt2", "--text", TEXT, NULL};
    cli_export(run_b, b);
    g_autoptr(AtnApplication) app = atn_application_new();
    g_autoptr(GError) error = NULL;
    g_assert_true(g_application_register(G_APPLICATION(app), NULL, &error));
    g_assert_nonnull(g_application_get_dbus_connection(G_APPLICATION(app)));
    g_assert_false(g_application_get_is_remote(G_APPLICATION(app)));
    g_application_activate(G_APPLICATION(app));
    AtnWindow *win = ATN_WINDOW(gtk_application_get_active_window(GTK_APPLICATION(app)));
    g_assert_nonnull(win);
    AtnSession *s = atn_window_get_session(win);
    /* the files are handed over as the window's first run starts (busy), not after it */
    g_assert_true(wait_for(not_opening, s));
    g_test_message("handed over while %s", atn_session_get_busy(s) ? "the first run is in flight" : "idle");
    const char *const view_a[] = {"view", a, NULL};
    second_instance(win, view_a, a);   /* attnscope view A */
    g_assert_cmpstr(atn_model_handle_get_name(atn_session_get_model(s)), ==, "demo");
    const char *const open_b[] = {b, NULL};
    second_instance(win, open_b, b);   /* a file manager: attnscope B */
    g_assert_cmpstr(atn_model_handle_get_name(atn_session_get_model(s)), ==, "demo-gpt2");
    /* the window options come with the file: the view at once, the head once the file is
       shown (not the clearest head the window would pick), and a head outside the file is
       said in the notice bar as at start-up */
    const char *const view_a_at[] = {"view", a, "--view", "similarity", "--layer", "1", "--head", "3", NULL};
    second_instance(win, view_a_at, a);
    g_assert_cmpstr(atn_model_handle_get_name(atn_session_get_model(s)), ==, "demo");
    g_assert_cmpstr(atn_window_get_view(win), ==, "similarity");
    g_assert_cmpint(atn_session_get_layer(s), ==, 1);
    g_assert_cmpint(atn_session_get_head(s), ==, 3);
    const char *const view_b_at[] = {"view", b, "--layer", "0", "--head", "9", NULL};
    second_instance(win, view_b_at, b);
    g_assert_cmpint(atn_session_get_layer(s), ==, 0);
    g_assert_cmpint(atn_session_get_head(s), ==, atn_result_get_n_heads(atn_session_get_result(s)) - 1);
    g_assert_nonnull(atn_window_get_notice(win));
    g_assert_nonnull(strstr(atn_window_get_notice(win), "--head 9: “demo-gpt2” has heads 0 to"));
    /* still one window */
    g_assert_cmpuint(g_list_length(gtk_application_get_windows(GTK_APPLICATION(app))), ==, 1);
    destroy_window(win);
    g_unlink(a);
    g_unlink(b);
}

typedef struct result_wait {
    AtnSession *s;
    AtnResult *old;
} result_wait;

/* Another result than old, shown and settled. */
static gboolean new_result(gpointer data) {
    result_wait *w = data;
    AtnResult *r = atn_session_get_result(w->s);
    return r && r != w->old && !atn_session_get_opening(w->s) && !atn_session_get_busy(w->s);
}

/* An encoder-decoder's attention file (run -o x.safetensors on the T5 fixture): the window
 * shows the encoder, every head bit for bit what `run --stack encoder -o x.npy` wrote, and
 * the file's capture keeps the decoder and cross stacks with the decoder's tokens. */
static void test_attention_file_encdec(void) {
    AtnWindow *win = new_window();
    AtnSession *s = atn_window_get_session(win);
    g_autofree char *model = g_build_filename(g_getenv("ATN_SOURCE_ROOT"), "tests", "hf", "models", "t5-v1-f32", NULL);
    g_autofree char *path = g_build_filename(dir, "t5.safetensors", NULL);
    g_autofree char *npy = g_build_filename(dir, "t5-encoder.npy", NULL);
    const char *const run_file[] = {"run", "--model", model, "--text", TEXT, "--target", "Die Katze", NULL};
    cli_export(run_file, path);
    const char *const run_npy[] = {"run", "--model", model, "--text", TEXT, "--target", "Die Katze", "--stack",
                                   "encoder", NULL};
    cli_export(run_npy, npy);
    float *want = NULL;
    int64_t shape[8];
    int nd = 0;
    atn_error err = {0};
    g_assert_cmpint(atn_npy_read_f32(npy, &want, shape, &nd, 8, &err), ==, ATN_OK);
    g_assert_cmpint(nd, ==, 4);
    atn_session_open_attention(s, path);
    file_wait fw = {win, path};
    g_assert_true(wait_for(showing_file, &fw));
    AtnResult *r = atn_session_get_result(s);
    g_assert_cmpint(atn_result_get_n_layers(r), ==, shape[0]);
    g_assert_cmpint(atn_result_get_n_heads(r), ==, shape[1]);
    int n = atn_result_get_n_tokens(r);
    g_assert_cmpint(n, ==, shape[2]);
    for (int l = 0; l < shape[0]; l++)
        for (int h = 0; h < shape[1]; h++)
            g_assert_cmpint(memcmp(atn_result_get_head(r, l, h), want + ((size_t)l * shape[1] + h) * n * n,
                                   (size_t)n * n * sizeof(float)), ==, 0);
    const atn_capture *cap = atn_result_get_capture(r);
    g_assert_cmpint(cap->n_stacks, ==, 3);
    int32_t nq = 0;
    atn_attn_file *f = atn_model_handle_get_attention_file(atn_session_get_model(s));
    g_assert_nonnull(atn_attn_file_query_tokens(f, &nq));
    g_assert_cmpint(nq, ==, cap->n_tgt);
    g_assert_cmpint(atn_capture_stack(cap, ATN_STACK_CROSS)->n_k, ==, n);
    /* the rows of a decoder or cross head are the file's query_tokens (no model to make them),
       and the Statistics view has the decoder's and cross statistics, as after a model's run */
    const char *const *qt = atn_attn_file_query_tokens(f, NULL);
    const char *const *rows = atn_result_get_stack_tokens(r, ATN_STACK_CROSS, FALSE);
    g_assert_nonnull(rows);
    for (int32_t i = 0; i < nq; i++)
        g_assert_cmpstr(rows[i], ==, qt[i]);
    g_assert_true(atn_result_get_stack_stats(r, ATN_STACK_DECODER) != atn_result_get_stats(r));
    g_assert_nonnull(atn_result_get_stack_stats(r, ATN_STACK_DECODER));
    g_assert_nonnull(atn_result_get_stack_stats(r, ATN_STACK_CROSS));
    show_view(win, "model");   /* the views that need no weights take it */
    show_view(win, "head");
    /* opened lazily (as a file of 256 MB or more is): the encoder's heads read one at a time,
       the same bits; the decoder and cross stacks too (attn NULL), each head the same floats */
    g_autoptr(AtnResult) eager = g_object_ref(r);
    atn_session_set_attention_lazy_bytes(0);
    atn_session_open_attention(s, path);
    result_wait rw = {s, eager};
    g_assert_true(wait_for(new_result, &rw));
    AtnResult *lr = atn_session_get_result(s);
    const atn_capture *lcap = atn_result_get_capture(lr);
    g_assert_null(lcap->attn);   /* lazy */
    g_assert_cmpint(lcap->n_stacks, ==, 3);
    const char *const *lrows = atn_result_get_stack_tokens(lr, ATN_STACK_DECODER, FALSE);
    g_assert_nonnull(lrows);
    g_assert_cmpstr(lrows[nq - 1], ==, qt[nq - 1]);
    for (int l = 0; l < shape[0]; l++)
        for (int h = 0; h < shape[1]; h++)
            g_assert_cmpint(memcmp(atn_result_get_head(lr, l, h), want + ((size_t)l * shape[1] + h) * n * n,
                                   (size_t)n * n * sizeof(float)), ==, 0);
    for (int k = ATN_STACK_DECODER; k <= ATN_STACK_CROSS; k++) {
        const atn_stack *a = atn_capture_stack(cap, (atn_stack_kind)k), *b = atn_capture_stack(lcap, (atn_stack_kind)k);
        g_assert_true(a->n_layers == b->n_layers && a->n_q == b->n_q && a->n_k == b->n_k);
        g_assert_null(b->attn);   /* read a head at a time */
        for (int l = 0; l < a->n_layers; l++)
            for (int h = 0; h < a->n_heads; h++) {
                int nq2 = 0, nk2 = 0;
                const float *hb = atn_result_get_stack_head(lr, (atn_stack_kind)k, l, h, &nq2, &nk2);
                g_assert_nonnull(hb);
                g_assert_true(hb == atn_result_get_stack_head(lr, (atn_stack_kind)k, l, h, NULL, NULL));   /* kept */
                g_assert_cmpint(memcmp(hb, a->attn + ((size_t)l * a->n_heads + h) * a->n_q * a->n_k,
                                       (size_t)a->n_q * a->n_k * sizeof(float)), ==, 0);
            }
    }
    g_assert_null(atn_result_get_stack_error(lr));
    show_view(win, "model");
    show_view(win, "head");
    g_assert_null(atn_window_get_error(win));
    /* a NaN in cross layer 0 head 0 (query 0, key 1): the file still opens lazily, that head alone
       is refused, named, and the next head is the clean file's */
    gchar *bytes = NULL;
    gsize len = 0;
    g_assert_true(g_file_get_contents(path, &bytes, &len, NULL));
    uint64_t hl = 0;
    memcpy(&hl, bytes, 8);
    g_autofree char *header = g_strndup(bytes + 8, (gsize)hl);
    const char *at = strstr(header, "\"cross\"");
    g_assert_nonnull(at);
    at = strstr(at, "\"data_offsets\"");
    g_assert_nonnull(at);
    unsigned long long b0 = 0;
    g_assert_cmpint(sscanf(strchr(at, '[') + 1, "%llu", &b0), ==, 1);
    float nan_value = NAN;
    memcpy(bytes + 8 + hl + b0 + sizeof(float), &nan_value, sizeof nan_value);
    g_autofree char *bad = g_build_filename(dir, "t5-cross-nan.safetensors", NULL);
    g_assert_true(g_file_set_contents(bad, bytes, (gssize)len, NULL));
    g_free(bytes);
    atn_session_open_attention(s, bad);
    result_wait rw2 = {s, lr};
    g_assert_true(wait_for(new_result, &rw2));
    AtnResult *br = atn_session_get_result(s);
    const atn_stack *sc = atn_capture_stack(cap, ATN_STACK_CROSS);
    g_assert_null(atn_result_get_stack_head(br, ATN_STACK_CROSS, 0, 0, NULL, NULL));
    g_assert_nonnull(strstr(atn_result_get_stack_error(br), "'cross' holds NaN at layer 0, head 0, query 0, key 1"));
    g_assert_true(wait_for(error_shown, win));   /* said as the encoder's bad heads are */
    const char *bad_msg = atn_window_get_error(win);
    g_assert_true(g_str_has_prefix(bad_msg, _("Could not show this head: ")));
    g_assert_nonnull(strstr(bad_msg, "t5-cross-nan.safetensors: 'cross' holds NaN at layer 0, head 0, query 0, key 1"));
    const float *h01 = atn_result_get_stack_head(br, ATN_STACK_CROSS, 0, 1, NULL, NULL);
    g_assert_nonnull(h01);
    g_assert_cmpint(memcmp(h01, sc->attn + (size_t)sc->n_q * sc->n_k, (size_t)sc->n_q * sc->n_k * sizeof(float)), ==, 0);
    atn_session_set_stack(s, ATN_STACK_CROSS);   /* the Model view draws the other heads, the window goes on */
    show_view(win, "model");
    show_view(win, "head");
    g_assert_true(atn_session_get_result(s) == br);
    atn_session_set_stack(s, ATN_STACK_ENCODER);
    g_unlink(bad);
    atn_session_set_attention_lazy_bytes(ATN_SESSION_ATTENTION_LAZY_BYTES);
    free(want);
    destroy_window(win);
    g_unlink(path);
    g_unlink(npy);
}

static gboolean stats_settled(gpointer data) { return !atn_session_get_analysing(data); }

/* A file opened lazily (as a 4 GB one is; here every file, atn_session_set_attention_lazy_bytes
 * 0): one whose head 1 of the last layer holds NaN opens and shows layer 0, to the bit; the bad
 * head is said when it is first shown, naming the file, the tensor, the layer and the head, and
 * the window keeps the file and shows its other heads; the statistics (which read every head)
 * say why they are missing, and the thumbnails come after, the bad head's empty. */
static void test_attention_file_lazy(void) {
    AtnWindow *win = new_window();
    AtnSession *s = atn_window_get_session(win);
    open_and_wait(win, "demo");
    type_and_wait(win, TEXT);
    g_autoptr(AtnResult) model_run = g_object_ref(atn_session_get_result(s));
    int L = atn_result_get_n_layers(model_run), H = atn_result_get_n_heads(model_run);
    int n = atn_result_get_n_tokens(model_run);
    g_assert_cmpint(L, >=, 2);
    g_assert_cmpint(H, >=, 2);
    g_autofree char *path = g_build_filename(dir, "lazy.safetensors", NULL);
    g_autofree char *bad = g_build_filename(dir, "lazy-nan.safetensors", NULL);
    write_file(path);
    write_changed_copy(path, bad, H, n, L - 1, 1, 2, 3, NAN);
    atn_session_set_attention_lazy_bytes(0);
    show_view(win, "head");
    atn_session_open_attention(s, bad);
    file_wait fw = {win, bad};
    g_assert_true(wait_for(showing_file, &fw));
    g_assert_null(atn_window_get_error(win));   /* not at open */
    AtnResult *r = atn_session_get_result(s);
    AtnModelHandle *file = atn_session_get_model(s);
    settle(50);
    /* the first head shown: layer 0's, the model run's to the bit */
    int l0 = atn_session_get_layer(s), h0 = atn_session_get_head(s);
    g_assert_cmpint(l0, <, L - 1);
    AtnHeatmap *hm = head_heatmap(win);
    g_assert_cmpint(atn_heatmap_get_rows(hm), ==, n);
    const float *want = atn_result_get_head(model_run, l0, h0);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            float got = atn_heatmap_get_value(hm, i, j);
            g_assert_cmpint(memcmp(&got, &want[i * n + j], sizeof got), ==, 0);
        }
    g_assert_null(atn_window_get_error(win));
    /* the bad head, when first shown */
    atn_session_select_head(s, L - 1, 1);
    g_assert_true(wait_for(error_shown, win));
    const char *msg = atn_window_get_error(win);
    g_assert_true(g_str_has_prefix(msg, _("Could not show this head: ")));   /* translated (po/zh_CN.po) */
    g_assert_nonnull(strstr(msg, "lazy-nan.safetensors"));
    g_autofree char *what = g_strdup_printf("'attn' holds NaN at layer %d, head 1, query 2, key 3", L - 1);
    g_assert_nonnull(strstr(msg, what));
    /* the window keeps running, on the file: another head of that layer, to the bit */
    g_assert_true(atn_session_get_model(s) == file);
    g_assert_true(atn_session_get_result(s) == r);
    atn_session_select_head(s, L - 1, 0);
    settle(50);
    hm = head_heatmap(win);
    want = atn_result_get_head(model_run, L - 1, 0);
    g_assert_cmpint(atn_heatmap_get_rows(hm), ==, n);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            float got = atn_heatmap_get_value(hm, i, j);
            g_assert_cmpint(memcmp(&got, &want[i * n + j], sizeof got), ==, 0);
        }
    /* the statistics read every layer: missing, and why; the thumbnails came with them */
    g_assert_true(wait_for(stats_settled, s));
    g_assert_null(atn_result_get_stats(r));
    g_assert_nonnull(strstr(atn_result_get_stats_error(r), what));
    const float *ranges = atn_result_get_head_ranges(r);
    g_assert_nonnull(ranges);
    const float *mr = atn_result_get_head_ranges(model_run);
    for (int c = 0; c < L * H; c++) {
        if (c == (L - 1) * H + 1) {   /* the bad head's */
            g_assert_true(isnan(ranges[2 * c]));
        } else {
            g_assert_cmpfloat(ranges[2 * c], ==, mr[2 * c]);
            g_assert_cmpfloat(ranges[2 * c + 1], ==, mr[2 * c + 1]);
        }
    }
    show_view(win, "model");
    g_autofree char *png = g_build_filename(dir, "lazy-model.png", NULL);
    g_autoptr(GError) error = NULL;
    g_assert_true(atn_window_export_to(win, png, 1, &error));
    atn_session_set_attention_lazy_bytes(ATN_SESSION_ATTENTION_LAZY_BYTES);
    destroy_window(win);
    g_unlink(png);
    g_unlink(bad);
    g_unlink(path);
}

static long vm_kb(const char *key) {
    g_autofree char *status = NULL;
    g_assert_true(g_file_get_contents("/proc/self/status", &status, NULL, NULL));
    const char *at = strstr(status, key);
    return at ? atol(at + strlen(key) + 1) : -1;
}

/* Opt-in (make test-attention-big, ATN_TEST_BIG=1): a 4.3 GB attention file (12 layers x 12
 * heads x 2,730 tokens, F32, sparse: zeros but the last head's diagonal) opens in under a
 * second with the resident memory bounded; its last head shows its diagonal. */
static void test_attention_file_big(void) {
    if (!g_getenv("ATN_TEST_BIG")) {
        g_test_skip("opt-in: make test-attention-big");
        return;
    }
    enum { L = 12, H = 12, N = 2730 };
    const char *where = g_getenv("ATN_TEST_BIG_DIR") ? g_getenv("ATN_TEST_BIG_DIR") : dir;
    g_autofree char *path = g_build_filename(where, "big.safetensors", NULL);
    guint64 bytes = (guint64)L * H * N * N * 4;
    g_autofree char *json = g_strdup_printf("{\"__metadata__\":{\"format\":\"\\\"attnscope-attention/1\\\"\"},"
                                            "\"attn\":{\"dtype\":\"F32\",\"shape\":[%d,%d,%d,%d],"
                                            "\"data_offsets\":[0,%" G_GUINT64_FORMAT "]}}", L, H, N, N, bytes);
    GString *hdr = g_string_new(json);
    while (hdr->len % 8)
        g_string_append_c(hdr, ' ');
    int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644);
    g_assert_cmpint(fd, >=, 0);
    guint64 hlen = hdr->len;
    g_assert_cmpint(write(fd, &hlen, 8), ==, 8);
    g_assert_cmpint(write(fd, hdr->str, hdr->len), ==, (gssize)hdr->len);
    g_assert_cmpint(ftruncate(fd, (off_t)(8 + hlen + bytes)), ==, 0);
    const float one = 1.0f;
    off_t base = (off_t)(8 + hlen) + (off_t)(((guint64)(L - 1) * H + (H - 1)) * N * N * 4);
    for (int i = 0; i < N; i++)
        g_assert_cmpint(pwrite(fd, &one, 4, base + ((off_t)i * N + i) * 4), ==, 4);
    g_assert_cmpint(close(fd), ==, 0);
    g_string_free(hdr, TRUE);

    AtnWindow *win = new_window();
    AtnSession *s = atn_window_get_session(win);
    open_and_wait(win, "demo");
    show_view(win, "head");
    long rss0 = vm_kb("VmRSS:");
    gint64 t0 = g_get_monotonic_time();
    atn_session_open_attention(s, path);
    file_wait fw = {win, path};
    g_assert_true(wait_for(showing_file, &fw));
    double open_s = (g_get_monotonic_time() - t0) / 1e6;   /* opened, and its first head shown */
    double worker_s = atn_result_get_elapsed_ms(atn_session_get_result(s)) / 1e3;   /* the file opened */
    long rss1 = vm_kb("VmRSS:");
    atn_session_select_head(s, L - 1, H - 1);
    settle(50);
    double show_s = (g_get_monotonic_time() - t0) / 1e6;
    AtnHeatmap *hm = head_heatmap(win);
    g_assert_cmpint(atn_heatmap_get_rows(hm), ==, N);
    g_assert_cmpfloat(atn_heatmap_get_value(hm, N - 1, N - 1), ==, 1.0f);
    g_assert_cmpfloat(atn_heatmap_get_value(hm, N - 1, 0), ==, 0.0f);
    long rss2 = vm_kb("VmRSS:"), anon2 = vm_kb("RssAnon:");
    g_printerr("# big: opened in %.3f s, first head shown at %.3f s (VmRSS %ld -> %ld MB); last head shown at "
               "%.3f s, VmRSS %ld MB, RssAnon %ld MB\n", worker_s, open_s, rss0 / 1024, rss1 / 1024, show_s,
               rss2 / 1024, anon2 / 1024);
    g_assert_cmpfloat(worker_s, <, 1.0);
    g_assert_cmpfloat(open_s, <, 3.0);   /* with the Head view's first head of 2,730 tokens drawn */
    g_assert_cmpint(rss1 - rss0, <, 200 * 1024);   /* the header, not the 4.3 GB */
    destroy_window(win);
    g_unlink(path);
}

/* The window's export of every head has ended, having written 6 figures (its notice). */
static gboolean six_written(gpointer data) {
    const char *notice = atn_window_get_notice(data);
    return notice && strstr(notice, "Wrote 6 figures");
}

/* One attn.L{l} per layer, 4 heads in layer 0 and 2 in layer 1 (written byte by byte here):
 * the window shows 4 heads a layer, layer 1's heads 2 and 3 absent: the session never
 * selects them (asked for head 3 of layer 1, or moved to layer 1 from head 3, it shows head
 * 1), the Head view shows layer 1 head 1 bit for bit, the statistics call 2 heads absent
 * (NaN, "no head" in the table) and count none of them, the Model view's tooltip says the
 * layer has no such head and a click there opens nothing, the Similarity view compares 6
 * heads, and Export Every Head writes 6 files. */
static void test_attention_file_layer_heads(void) {
    enum { N = 3 };
    float l0[4][N][N], l1[2][N][N];
    static const float rows[5][N] = {{1, 0, 0}, {0.5f, 0.5f, 0}, {0.25f, 0.25f, 0.5f}, {0, 0, 1}, {0.5f, 0, 0.5f}};
    for (int h = 0; h < 4; h++)
        for (int i = 0; i < N; i++) {
            memcpy(l0[h][i], rows[(3 * i + 2 * h) % 5], sizeof l0[h][i]);
            if (h < 2)
                memcpy(l1[h][i], rows[(3 * i + 1 + 2 * h) % 5], sizeof l1[h][i]);
        }
    g_autofree char *header = g_strdup_printf(
        "{\"__metadata__\": {\"format\": \"\\\"attnscope-attention/1\\\"\", \"tokens\": "
        "\"[\\\"the\\\", \\\"cat\\\", \\\"sat\\\"]\", \"model_id\": \"\\\"layers\\\"\"}, "
        "\"attn.L0\": {\"dtype\": \"F32\", \"shape\": [4, %d, %d], \"data_offsets\": [0, %zu]}, "
        "\"attn.L1\": {\"dtype\": \"F32\", \"shape\": [2, %d, %d], \"data_offsets\": [%zu, %zu]}}",
        N, N, sizeof l0, N, N, sizeof l0, sizeof l0 + sizeof l1);
    GString *file = g_string_new(NULL);
    size_t hl = strlen(header), pad = (8 - hl % 8) % 8;
    guint64 len = hl + pad;
    g_string_append_len(file, (const char *)&len, 8);
    g_string_append(file, header);
    for (size_t i = 0; i < pad; i++)
        g_string_append_c(file, ' ');
    g_string_append_len(file, (const char *)l0, sizeof l0);
    g_string_append_len(file, (const char *)l1, sizeof l1);
    g_autofree char *path = g_build_filename(dir, "layer-heads.safetensors", NULL);
    g_assert_true(g_file_set_contents(path, file->str, (gssize)file->len, NULL));
    g_string_free(file, TRUE);

    AtnWindow *win = new_window();
    AtnSession *s = atn_window_get_session(win);
    show_view(win, "head");
    atn_session_open_attention(s, path);
    file_wait fw = {win, path};
    g_assert_true(wait_for(showing_file, &fw));
    g_assert_null(atn_window_get_error(win));
    AtnResult *r = atn_session_get_result(s);
    const atn_capture *cap = atn_result_get_capture(r);
    g_assert_cmpint(atn_result_get_n_layers(r), ==, 2);
    g_assert_cmpint(atn_result_get_n_heads(r), ==, 4);
    g_assert_nonnull(cap->layer_heads);
    g_assert_cmpint(cap->layer_heads[1], ==, 2);
    /* never an absent head */
    atn_session_select_head(s, 1, 3);
    g_assert_cmpint(atn_session_get_layer(s), ==, 1);
    g_assert_cmpint(atn_session_get_head(s), ==, 1);
    atn_session_select_head(s, 0, 3);
    atn_session_set_layer(s, 1);
    g_assert_cmpint(atn_session_get_head(s), ==, 1);
    settle(50);
    AtnHeatmap *hm = head_heatmap(win);
    g_assert_cmpint(atn_heatmap_get_rows(hm), ==, N);
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            float got = atn_heatmap_get_value(hm, i, j);
            g_assert_cmpint(memcmp(&got, &l1[1][i][j], sizeof got), ==, 0);
        }
    /* the statistics: 6 heads with numbers, 2 absent */
    g_assert_true(wait_for(stats_settled, s));
    const atn_stats *st = atn_result_get_stats(r);
    g_assert_nonnull(st);
    int absent = 0;
    for (int c = 0; c < 8; c++)
        absent += atn_head_stats_absent(&st->heads[c]) ? 1 : 0;
    g_assert_cmpint(absent, ==, 2);
    g_assert_true(atn_head_stats_absent(&st->heads[1 * 4 + 3]) && atn_head_stats_absent(&st->heads[1 * 4 + 2]));
    /* layer 0 head 0: rows[0], rows[3], rows[1]: a00 + a11 + a22 = 1 + 0 + 0 */
    g_assert_cmpfloat(fabs(st->heads[0].self - 1.0 / 3), <, 1e-12);
    show_view(win, "statistics");
    settle(50);
    /* the Model view: the tooltip of an empty place, and a click there opens nothing */
    show_view(win, "model");
    settle(50);
    AtnModelGrid *grid = atn_model_grid_view_get_grid(ATN_MODEL_GRID_VIEW(atn_window_get_view_widget(win, "model")));
    g_autofree char *tip = atn_model_grid_dup_layer_tooltip(grid, 1, 3);
    g_assert_nonnull(tip);
    g_autofree char *want_tip = g_strdup_printf(_("Layer %d has no head %d: it has %d heads (the file's layers differ)"),
                                                1, 3, 2);
    g_assert_nonnull(strstr(tip, want_tip));
    gboolean clicked = FALSE;
    int gw = gtk_widget_get_width(GTK_WIDGET(grid)), gh = gtk_widget_get_height(GTK_WIDGET(grid));
    for (int y = 0; y < gh && !clicked; y += 3)
        for (int x = 0; x < gw && !clicked; x += 3) {
            int l, hd;
            if (atn_model_grid_head_at(grid, x, y, &l, &hd) && l == 1 && hd == 3) {
                click(GTK_WIDGET(grid), x + 4, y + 4);
                clicked = TRUE;
            }
        }
    g_assert_true(clicked);
    settle(20);
    g_assert_cmpstr(atn_window_get_view(win), ==, "model");
    g_autofree char *png = g_build_filename(dir, "layer-heads-model.png", NULL);
    g_autoptr(GError) error = NULL;
    g_assert_true(atn_window_export_to(win, png, 1, &error));
    /* the Similarity view's comparison: the 6 heads there are */
    atn_similarity *sim = NULL;
    atn_error err = {0};
    g_assert_cmpint(atn_similarity_compute(cap, ATN_METRIC_JS, ATN_SCOPE_MODEL, -1, &sim, &err), ==, ATN_OK);
    g_assert_cmpint(sim->count, ==, 6);
    atn_similarity_free(sim);
    show_view(win, "similarity");
    settle(100);
    g_assert_null(atn_window_get_error(win));
    /* Export Every Head: a file for each of the 6 heads there are, none for an absent one */
    show_view(win, "head");
    g_autofree char *all_dir = g_dir_make_tmp("atn-ui-layer-heads-XXXXXX", NULL);
    atn_window_export_all_heads_to(win, all_dir, "svg", 1.0);
    g_assert_true(wait_for(six_written, win));
    for (int l = 0; l < 2; l++)
        for (int h = 0; h < 4; h++) {
            g_autofree char *name = atn_render_head_file_name("heatmap", l, h, 2, 4, "svg");
            g_autofree char *f = g_build_filename(all_dir, name, NULL);
            g_assert_cmpint(g_file_test(f, G_FILE_TEST_EXISTS), ==, atn_capture_head_present(cap, l, h));
            g_unlink(f);
        }
    g_rmdir(all_dir);
    destroy_window(win);
    g_unlink(png);
    g_unlink(path);
}

int main(int argc, char **argv) {
    if (!ui_test_init(&argc, &argv))
        return 0;
    dir = g_dir_make_tmp("attnscope-ui-attention-XXXXXX", NULL);
    g_assert_nonnull(dir);
    g_test_add_func("/ui/attention-file", test_attention_file);
    g_test_add_func("/ui/attention-file-trace", test_attention_file_trace);
    g_test_add_func("/ui/attention-file-encdec", test_attention_file_encdec);
    g_test_add_func("/ui/attention-file-lazy", test_attention_file_lazy);
    g_test_add_func("/ui/attention-file-big", test_attention_file_big);
    g_test_add_func("/ui/attention-file-layer-heads", test_attention_file_layer_heads);
    g_test_add_func("/ui/second-instance", test_second_instance);
    int rc = g_test_run();
    g_rmdir(dir);
    g_free(dir);
    return rc;
}
