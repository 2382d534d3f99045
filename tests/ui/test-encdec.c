/* The window on encoder-decoders (issue 34): the F32 T5 v1.0 and BART folders of tests/hf
 * (gen_encdec.py; the BF16 T5 v1.1 and F16 Marian ones for the heads alone) opened with a source and a target typed into the window; the target entry
 * shows only for them; the stack picker switches the Head view between the encoder's
 * self-attention, the decoder's and cross-attention; the cross head shown is the command
 * line's `run --text SRC --target TGT -o x.npz` array "cross" for that layer and head bit for
 * bit, n_tgt rows (target) by n_src columns (source); the token lines draw that head with the
 * target's tokens on the left and the source's on the right; the guesses under the sentence
 * are the decoder's, `predict --target`'s. */
#include "ui-test-util.h"

#include "atn-encdec.h"
#include "atn-encdec-widgets.h"
#include "atn-token-lines-test.h"
#include "formats/zip.h"

#define SOURCE "The cat is in the house."
#define TARGET "I see the cat."

static GtkWidget *find_type(GtkWidget *w, GType type) {
    if (G_TYPE_CHECK_INSTANCE_TYPE(w, type))
        return w;
    for (GtkWidget *c = gtk_widget_get_first_child(w); c; c = gtk_widget_get_next_sibling(c)) {
        GtkWidget *f = find_type(c, type);
        if (f)
            return f;
    }
    return NULL;
}

/* The CLI's stacks for source and target: `attnscope run -o x.npz`, read back through the
 * engine's ZIP and .npy readers.  *arr[3] are [L][H][q][k] (g_free), shapes in shape[3][4]. */
static void cli_stacks(const char *model, float *arr[3], int64_t shape[3][4]) {
    g_autofree char *out = g_strdup_printf("%s/atn-ui-encdec-%d.npz", g_get_tmp_dir(), (int)getpid());
    g_autofree char *exe = g_build_filename(g_getenv("ATN_BUILD_ROOT"), "app", "attnscope", NULL);
    const char *argv[] = {exe, "run", "--model", model, "--text", SOURCE, "--target", TARGET, "-o", out, NULL};
    int status = 0;
    g_autofree char *err = NULL;
    g_assert_true(g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL, NULL, &err, &status,
                               NULL));
    if (!g_spawn_check_wait_status(status, NULL))
        g_error("attnscope run failed: %s", err);
    g_autofree char *buf = NULL;
    gsize len = 0;
    g_assert_true(g_file_get_contents(out, &buf, &len, NULL));
    atn_zip *zip = NULL;
    atn_error e = {0};
    g_assert_cmpint(atn_zip_open(out, buf, len, &zip, &e), ==, ATN_OK);
    const char *names[3] = {"encoder.npy", "decoder.npy", "cross.npy"};
    for (int i = 0; i < 3; i++) {
        const atn_zip_entry *ze = atn_zip_find(zip, names[i]);
        g_assert_nonnull(ze);
        g_autofree char *npy = g_strdup_printf("%s/atn-ui-encdec-%d-%s", g_get_tmp_dir(), (int)getpid(), names[i]);
        g_assert_true(g_file_set_contents(npy, (const char *)ze->data, (gssize)ze->size, NULL));
        int nd = 0;
        float *data = NULL;
        g_assert_cmpint(atn_npy_read_f32(npy, &data, shape[i], &nd, 4, &e), ==, ATN_OK);
        g_assert_cmpint(nd, ==, 4);
        size_t count = (size_t)(shape[i][0] * shape[i][1] * shape[i][2] * shape[i][3]);
        arr[i] = g_memdup2(data, count * sizeof(float));
        free(data);
        g_unlink(npy);
    }
    atn_zip_close(zip);
    g_unlink(out);
}

static gboolean has_label_text(GtkWidget *w, const char *text) {
    if (GTK_IS_LABEL(w) && !g_strcmp0(gtk_label_get_text(GTK_LABEL(w)), text))
        return TRUE;
    for (GtkWidget *c = gtk_widget_get_first_child(w); c; c = gtk_widget_get_next_sibling(c))
        if (has_label_text(c, text))
            return TRUE;
    return FALSE;
}

/* The rows of thumbnails the grid draws: the largest layer under the pointer, scanning down. */
static int grid_layers(AtnModelGrid *grid) {
    int w = gtk_widget_get_width(GTK_WIDGET(grid)), h = gtk_widget_get_height(GTK_WIDGET(grid)), most = -1;
    for (int y = 0; y < h; y += 2)
        for (int x = w / 40; x < w; x += w / 20 + 1) {
            int l, hd;
            if (atn_model_grid_head_at(grid, x, y, &l, &hd) && l > most)
                most = l;
        }
    return most + 1;
}

typedef struct export_wait {
    AtnWindow *win;
    int want;
} export_wait;

/* The window's export of every head has ended, having written want figures (its notice). */
static gboolean all_written(gpointer data) {
    export_wait *w = data;
    const char *notice = atn_window_get_notice(w->win);
    g_autofree char *said = g_strdup_printf("Wrote %d figures", w->want);
    return notice && strstr(notice, said);
}

static void set_target_and_wait(AtnWindow *win, GtkEntry *entry, const char *target) {
    AtnSession *s = atn_window_get_session(win);
    model_wait w = {win, NULL, atn_session_get_n_runs(s)};
    gtk_editable_set_text(GTK_EDITABLE(entry), target);
    g_assert_true(wait_for(idle_with_result, &w));
}

/* The heatmap shows exactly head (layer, head) of the CLI's stack a: same shape, same bits. */
static void assert_head_equals(AtnHeatmap *hm, const float *a, const int64_t *shape, int layer, int head) {
    int rows = atn_heatmap_get_rows(hm), r0, c0, vr, cols;
    atn_heatmap_reset_zoom(hm);
    atn_heatmap_get_visible(hm, &r0, &c0, &vr, &cols);
    g_assert_cmpint(rows, ==, shape[2]);
    g_assert_cmpint(cols, ==, shape[3]);
    const float *want = a + ((size_t)layer * shape[1] + head) * (size_t)(shape[2] * shape[3]);
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < cols; j++) {
            float got = atn_heatmap_get_value(hm, i, j);
            if (memcmp(&got, &want[(size_t)i * cols + j], sizeof got))
                g_error("cell (%d, %d) of layer %d head %d: window %.9g, command line %.9g", i, j, layer, head, got,
                        want[(size_t)i * cols + j]);
        }
}

/* TRUE when a label under w has text containing sub. */
static gboolean label_contains(GtkWidget *w, const char *sub) {
    if (GTK_IS_LABEL(w) && strstr(gtk_label_get_text(GTK_LABEL(w)), sub))
        return TRUE;
    for (GtkWidget *c = gtk_widget_get_first_child(w); c; c = gtk_widget_get_next_sibling(c))
        if (label_contains(c, sub))
            return TRUE;
    return FALSE;
}

/* The Trace view on stack kind's last layer, head 1, the last target token: the trace is of
   that stack; its weights are row q of the CLI's head (a, [L][H][q][k]) within 1e-6 and the
   engine's atn_trace_compute_stack's bit for bit; the intro and the query's step name the
   target token, the keys' the source (cross) or target (decoder) tokens; T5's decoder head
   has its position bias; the markdown says which stack. */
static void check_trace(AtnWindow *win, const char *model, atn_stack_kind kind, const float *a, const int64_t *shape) {
    AtnSession *s = atn_window_get_session(win);
    atn_session_set_stack(s, kind);
    int L = (int)shape[0] - 1, H = 1, q = (int)shape[2] - 1, nk = (int)shape[3];
    AtnTraceView *tv = show_trace(win, L, H, q);
    g_test_message("trace: %s", atn_trace_view_get_intro(tv));
    const atn_trace *t = atn_trace_view_get_trace(tv);
    g_assert_nonnull(t);
    g_assert_cmpint(t->stack, ==, kind);
    g_assert_cmpint(t->layer, ==, L);
    g_assert_cmpint(t->head, ==, H);
    g_assert_cmpint(t->query, ==, q);
    g_assert_cmpint(t->n, ==, nk);
    g_assert_cmpint(t->n_queries, ==, shape[2]);
    const float *row = a + (((size_t)L * shape[1] + H) * shape[2] + q) * shape[3];
    double sum = 0;
    for (int j = 0; j < nk; j++) {
        g_assert_cmpfloat(fabs(t->weights[j] - row[j]), <, 1e-6);
        sum += t->weights[j];
    }
    g_assert_cmpfloat(fabs(sum - 1.0), <, 1e-9);
    AtnResult *r = atn_session_get_result(s);
    atn_trace *e = NULL;
    atn_error err = {0};
    g_assert_cmpint(atn_trace_compute_stack(atn_model_handle_get_model(atn_result_get_model(r)),
                                            atn_result_get_capture(r), kind, L, H, q, &e, &err), ==, ATN_OK);
    g_assert_cmpmem(e->weights, nk * sizeof(double), t->weights, nk * sizeof(double));
    atn_trace_free(e);
    /* the query is a target token, the keys the stack's */
    const char *qtok = atn_result_get_stack_tokens(r, kind, FALSE)[q];
    const char *const *keys = atn_result_get_stack_tokens(r, kind, TRUE);
    g_autofree char *quoted = g_strdup_printf("“%s”", qtok);
    g_assert_nonnull(strstr(atn_trace_view_get_intro(tv), quoted));
    g_assert_nonnull(strstr(atn_trace_view_get_intro(tv), kind == ATN_STACK_CROSS ? "Cross-attention" : "Decoder"));
    /* the query drop-down lists the target's tokens, the query's selected */
    GtkDropDown *drop = GTK_DROP_DOWN(find_type(GTK_WIDGET(tv), GTK_TYPE_DROP_DOWN));
    GListModel *items = gtk_drop_down_get_model(drop);
    g_assert_cmpint(g_list_model_get_n_items(items), ==, shape[2]);
    g_assert_cmpint(gtk_drop_down_get_selected(drop), ==, q);
    g_autofree char *item = g_strdup_printf("%d  %s", q, qtok);
    g_assert_cmpstr(gtk_string_list_get_string(GTK_STRING_LIST(items), q), ==, item);
    g_autofree char *qstep = atn_trace_view_dup_step_text(tv, ATN_TRACE_STEP_QUERY);
    g_assert_nonnull(strstr(qstep, quoted));
    g_autofree char *kstep = atn_trace_view_dup_step_text(tv, ATN_TRACE_STEP_KEYS);
    g_assert_nonnull(strstr(kstep, keys[nk - 1]));
    if (kind == ATN_STACK_CROSS)   /* the formulas: q from the decoder, k from the encoder's output */
        g_assert_true(label_contains(atn_trace_view_get_step_widget(tv, ATN_TRACE_STEP_KEYS), "encoder's output") &&
                      label_contains(atn_trace_view_get_step_widget(tv, ATN_TRACE_STEP_QUERY), "decoder's hidden"));
    gboolean t5 = strstr(model, "t5") != NULL;
    g_assert_true((t->pos_bias != NULL) == (t5 && kind == ATN_STACK_DECODER));   /* T5: self-attention only */
    if (t5)   /* the scaling step's note: T5 does not scale; the decoder's bias, the cross's none */
        g_assert_true(label_contains(atn_trace_view_get_step_widget(tv, ATN_TRACE_STEP_SCALE),
                                     kind == ATN_STACK_CROSS ? "no position bias" : "relative position bias"));
    g_autoptr(GError) merr = NULL;
    g_autofree char *md = atn_trace_view_dup_markdown(tv, &merr);
    g_assert_no_error(merr);
    g_assert_nonnull(strstr(md, quoted));
    g_assert_nonnull(strstr(md, kind == ATN_STACK_CROSS ? "cross-attention" : "decoder's self-attention"));
}

/* The lines of a head [nq][nk] (a, the command line's array) the token lines should draw:
 * query q's (q >= 0) or those into key j (j >= 0), weight above 0.01, in row-major order. */
static int64_t want_lines(const float *a, int nq, int nk, int q, int j, int32_t *from, int32_t *to) {
    int64_t c = 0;
    for (int i = 0; i < nq; i++)
        for (int k = 0; k < nk; k++)
            if ((q < 0 || i == q) && (j < 0 || k == j) && a[(size_t)i * nk + k] > 0.01f) {
                from[c] = i;
                to[c] = k;
                c++;
            }
    return c;
}

/* The token lines of the head shown (stack kind, layer, head; a the CLI's [L][H][q][k] array):
 * the target's tokens on the left, the stack's keys on the right, as bertviz draws
 * cross-attention.  The selected target token's lines are row q of the CLI's head; hovering
 * the last source token (an index past the target's length) draws the lines into it from
 * target tokens; neither hover is the session's (its index is the view's own sequence); a
 * click on the left selects that target token as the query; every line on request. */
static void check_lines(AtnWindow *win, atn_stack_kind kind, const float *a, const int64_t *shape, int layer,
                        int head) {
    AtnSession *s = atn_window_get_session(win);
    GtkWidget *hv = atn_window_get_view_widget(win, "head");
    AtnTokenLines *tl = ATN_TOKEN_LINES(atn_head_view_get_token_lines(ATN_HEAD_VIEW(hv)));
    g_assert_true(gtk_widget_get_visible(gtk_widget_get_parent(GTK_WIDGET(tl))));
    int nq = (int)shape[2], nk = (int)shape[3];
    const float *m = a + ((size_t)layer * shape[1] + head) * (size_t)nq * nk;
    enum { MAX = 4096 };
    static int32_t from[MAX], to[MAX], wf[MAX], wt[MAX];
    int q = nq - 1;
    atn_session_set_query(s, q);
    int64_t c = atn_token_lines_get_lines(tl, from, to, MAX), w = want_lines(m, nq, nk, q, -1, wf, wt);
    g_test_message("%s L%d H%d: %lld lines from target %d", kind == ATN_STACK_CROSS ? "cross" : "decoder", layer, head,
                   (long long)c, q);
    g_assert_cmpint(c, ==, w);
    g_assert_cmpint(c, >, 0);
    g_assert_cmpmem(from, c * sizeof *from, wf, w * sizeof *wf);
    g_assert_cmpmem(to, c * sizeof *to, wt, w * sizeof *wt);
    /* the last key: past the target's length for cross (a square head's index would not reach it) */
    int key = nk - 1;
    atn_token_lines_hover(tl, 1, key);
    g_assert_cmpint(atn_session_get_hover_token(s), ==, -1);
    c = atn_token_lines_get_lines(tl, from, to, MAX);
    w = want_lines(m, nq, nk, -1, key, wf, wt);
    g_assert_cmpint(c, ==, w);
    g_assert_cmpmem(from, c * sizeof *from, wf, w * sizeof *wf);
    g_assert_cmpmem(to, c * sizeof *to, wt, w * sizeof *wt);
    /* hovering target token 0 on the left: its lines */
    atn_token_lines_hover(tl, 0, 0);
    g_assert_cmpint(atn_session_get_hover_token(s), ==, -1);
    c = atn_token_lines_get_lines(tl, from, to, MAX);
    w = want_lines(m, nq, nk, 0, -1, wf, wt);
    g_assert_cmpint(c, ==, w);
    g_assert_cmpmem(to, c * sizeof *to, wt, w * sizeof *wt);
    atn_token_lines_hover(tl, -1, -1);
    /* every line (these heads have fewer than 512 above 0.01) */
    atn_token_lines_set_all_lines(tl, TRUE);
    c = atn_token_lines_get_lines(tl, from, to, MAX);
    w = want_lines(m, nq, nk, -1, -1, wf, wt);
    g_assert_cmpint(w, <=, 512);
    g_assert_cmpint(c, ==, w);
    g_assert_cmpmem(to, c * sizeof *to, wt, w * sizeof *wt);
    atn_token_lines_set_all_lines(tl, FALSE);
    /* drawn: the widget's pixels change with the query */
    settle(30);
    int pw, ph;
    g_autoptr(GBytes) last = render_widget(GTK_WIDGET(tl), &pw, &ph);
    atn_session_set_query(s, 0);
    settle(30);
    g_autoptr(GBytes) first = render_widget(GTK_WIDGET(tl), &pw, &ph);
    g_assert_false(g_bytes_equal(last, first));
}

/* `attnscope predict --target`'s guesses after target position pos: "0.1234" x 5, in order. */
static GPtrArray *cli_next(const char *model, int pos) {
    g_autofree char *exe = g_build_filename(g_getenv("ATN_BUILD_ROOT"), "app", "attnscope", NULL);
    const char *argv[] = {exe, "predict", "--model", model, "--text", SOURCE, "--target", TARGET, NULL};
    int status = 0;
    g_autofree char *out = NULL, *err = NULL;
    g_assert_true(g_spawn_sync(NULL, (char **)argv, NULL, 0, NULL, NULL, &out, &err, &status, NULL));
    if (!g_spawn_check_wait_status(status, NULL))
        g_error("attnscope predict failed: %s", err);
    GPtrArray *g = g_ptr_array_new_with_free_func(g_free);
    g_autofree char *head = g_strdup_printf("after target position %d (", pos);
    const char *at = strstr(out, head);
    g_assert_nonnull(at);
    g_auto(GStrv) lines = g_strsplit(strchr(at, '\n') + 1, "\n", 6);
    for (int i = 0; i < 5 && lines[i]; i++) {
        const char *sp = strrchr(lines[i], ' ');
        g_assert_nonnull(sp);
        g_ptr_array_add(g, g_strdup(sp + 1));
    }
    return g;
}

/* The guesses under the sentence: the decoder's after the last target position, and after the
 * selected target token of a cross head: `predict --target`'s probabilities, in order. */
static void check_next(AtnWindow *win, const char *model, int n_tgt) {
    AtnSession *s = atn_window_get_session(win);
    AtnPredictions *pred = ATN_PREDICTIONS(atn_window_get_predictions(win));
    atn_session_set_stack(s, ATN_STACK_CROSS);
    atn_session_set_query(s, 3);
    settle(20);
    g_assert_true(gtk_widget_get_visible(GTK_WIDGET(pred)));
    g_autofree char *text = atn_predictions_dup_text(pred);
    g_test_message("next: %s", text);
    int positions[2] = {n_tgt - 1, 3};
    for (int k = 0; k < 2; k++) {
        g_autofree char *row = g_strdup_printf("next after %d:", positions[k]);
        const char *at = strstr(text, row);
        if (!at)
            g_error("no \"%s\" in the window's \"%s\"", row, text);
        g_autoptr(GPtrArray) want = cli_next(model, positions[k]);
        g_assert_cmpint(want->len, ==, 5);
        for (guint i = 0; i < want->len; i++) {
            const char *hit = strstr(at, g_ptr_array_index(want, i));
            if (!hit || (strchr(at, '\n') && hit > strchr(at, '\n')))
                g_error("after target %d: guess %u (%s) not in the window's row \"%s\"", positions[k], i,
                        (char *)g_ptr_array_index(want, i), at);
            at = hit + 1;
        }
    }
    /* the encoder's stack: the query is a source token, so only the last target's row */
    atn_session_set_stack(s, ATN_STACK_ENCODER);
    settle(20);
    g_autofree char *enc = atn_predictions_dup_text(pred);
    g_assert_null(strstr(enc, "next after 3:"));
    g_assert_nonnull(strstr(enc, "next after"));
    atn_session_set_stack(s, ATN_STACK_CROSS);
}

/* Row entropy in bits over keys [0, nk) of a row, in double: the test's own. */
static double row_entropy(const float *row, int nk) {
    double e = 0;
    for (int j = 0; j < nk; j++)
        if (row[j] > 0)
            e -= row[j] * log2(row[j]);
    return e;
}

/* Mean over the rows of the Jensen-Shannon distance (bits) between two heads [nq][nk]. */
static double js_distance(const float *a, const float *b, int nq, int nk) {
    double total = 0;
    for (int i = 0; i < nq; i++) {
        double hm = 0, hp = 0, hq = 0;
        for (int j = 0; j < nk; j++) {
            double p = a[(size_t)i * nk + j], q = b[(size_t)i * nk + j], m = (p + q) / 2;
            hm -= m > 0 ? m * log2(m) : 0;
            hp -= p > 0 ? p * log2(p) : 0;
            hq -= q > 0 ? q * log2(q) : 0;
        }
        double d = hm - (hp + hq) / 2;
        total += d > 0 ? sqrt(d) : 0;
    }
    return total / nq;
}

/* The Statistics view follows the session's stack (and a row opens that stack's head): on the
 * cross stack its rows are the decoder layers' cross heads with each head's mean row entropy over the source tokens
 * computed here from the command line's "cross" array (cli[2]: no padding in the source),
 * and self / previous (a target and a source index) not defined, shown "—"; on the decoder's
 * stack the decoder's heads (cli[1]).  The Similarity view compares the stack's heads: the
 * Jensen-Shannon distance of cross heads L0·H0 and L0·H1 is this file's over cli[2]. */
static void check_stack_stats(AtnWindow *win, float *cli[3], int64_t shape[3][4]) {
    AtnSession *s = atn_window_get_session(win);
    for (int kind = ATN_STACK_CROSS; kind >= ATN_STACK_DECODER; kind--) {
        atn_session_set_stack(s, kind);
        show_view(win, "statistics");
        AtnStatsView *sv = ATN_STATS_VIEW(atn_window_get_view_widget(win, "statistics"));
        g_assert_nonnull(strstr(atn_stats_view_get_info(sv), atn_encdec_heads_note(kind)));
        const int64_t *sh = shape[kind];
        int Ls = (int)sh[0], Hs = (int)sh[1], nq = (int)sh[2], nk = (int)sh[3];
        GListModel *rows = atn_stats_view_get_model(sv);
        g_assert_cmpint(g_list_model_get_n_items(rows), ==, Ls * Hs);
        for (guint i = 0; i < g_list_model_get_n_items(rows); i++) {
            g_autoptr(AtnHeadStat) row = g_list_model_get_item(rows, i);
            int l = atn_head_stat_get_layer(row), h = atn_head_stat_get_head(row);
            const float *a = cli[kind] + ((size_t)l * Hs + h) * (size_t)nq * nk;
            double want = 0;
            for (int q = 0; q < nq; q++)
                want += row_entropy(a + (size_t)q * nk, nk);
            want /= nq;
            double entropy, self;
            g_object_get(row, "entropy", &entropy, "self", &self, NULL);
            if (fabs(entropy - want) > 1e-5)
                g_error("%s L%d H%d: entropy %.9g in the view, %.9g from the command line's array",
                        kind == ATN_STACK_CROSS ? "cross" : "decoder", l, h, entropy, want);
            g_assert_true(kind == ATN_STACK_CROSS ? isnan(self) : !isnan(self));
        }
        if (kind == ATN_STACK_CROSS)   /* the undefined figures are a dash */
            g_assert_true(has_label_text(GTK_WIDGET(sv), "\u2014"));
        /* a row opens that head of the stack in the Head view */
        guint last = g_list_model_get_n_items(rows) - 1;
        g_autoptr(AtnHeadStat) row = g_list_model_get_item(rows, last);
        atn_stats_view_activate_row(sv, last);
        g_assert_cmpint(atn_session_get_stack(s), ==, kind);
        g_assert_cmpint(atn_session_get_layer(s), ==, atn_head_stat_get_layer(row));
        g_assert_cmpint(atn_session_get_head(s), ==, atn_head_stat_get_head(row));
    }
    atn_session_set_stack(s, ATN_STACK_CROSS);
    show_view(win, "similarity");
    GtkWidget *simw = atn_window_get_view_widget(win, "similarity");
    g_assert_true(has_label_text(simw, atn_encdec_heads_note(ATN_STACK_CROSS)));
    AtnSimilarityView *simv = ATN_SIMILARITY_VIEW(simw);
    atn_similarity_view_set_metric(simv, ATN_METRIC_JS);
    atn_similarity_view_set_scope(simv, ATN_SCOPE_MODEL);
    const int64_t *sh = shape[ATN_STACK_CROSS];
    int count = (int)(sh[0] * sh[1]);
    const atn_similarity *sim = NULL;
    for (int tries = 0; tries < 400; tries++) {   /* the comparison runs in a worker */
        settle(10);
        sim = atn_similarity_map_get_similarity(atn_similarity_view_get_map(simv));
        if (sim && sim->count == count && sim->metric == ATN_METRIC_JS)
            break;
    }
    g_assert_nonnull(sim);
    g_assert_cmpint(sim->count, ==, count);
    size_t map = (size_t)(sh[2] * sh[3]);
    double want = js_distance(cli[2], cli[2] + map, (int)sh[2], (int)sh[3]);
    g_test_message("cross L0·H0 vs L0·H1: Jensen-Shannon %.6f in the view, %.6f here", sim->values[1], want);
    g_assert_cmpfloat(fabs(sim->values[1] - want), <, 1e-4);
    /* a pair shows the two cross heads: target rows by source columns */
    atn_similarity_view_compare(simv, 0, 1);
    AtnHeatmap *pa = atn_similarity_view_get_pair_heatmap(simv, 0);
    g_assert_cmpint(atn_heatmap_get_rows(pa), ==, sh[2]);
    g_assert_false(atn_heatmap_get_causal(pa));
    g_autofree char *pcell = atn_heatmap_dup_cell_text(pa, 1, 2);
    g_assert_true(g_str_has_prefix(pcell, "target ") && strstr(pcell, "→ source "));
    /* a decoder pair is causal */
    atn_session_set_stack(s, ATN_STACK_DECODER);
    settle(50);   /* the pair reads the session stack's heads: the decoder's */
    atn_similarity_view_compare(simv, 0, 1);
    g_assert_true(atn_heatmap_get_causal(pa));
    g_autofree char *dcell = atn_heatmap_dup_cell_text(pa, 1, 2);
    g_assert_true(strstr(dcell, "masked") && !strstr(dcell, "target "));
    atn_session_set_stack(s, ATN_STACK_CROSS);
}

static void check_model(const char *folder, gboolean full) {
    g_autofree char *model = g_build_filename(g_getenv("ATN_SOURCE_ROOT"), "tests", "hf", "models", folder, NULL);
    AtnWindow *win = new_window();
    AtnSession *s = atn_window_get_session(win);
    atn_session_set_debounce_ms(s, 0);
    AtnTargetEntry *te = ATN_TARGET_ENTRY(find_type(GTK_WIDGET(win), ATN_TYPE_TARGET_ENTRY));
    g_assert_nonnull(te);
    g_assert_false(gtk_widget_get_visible(GTK_WIDGET(te)));   /* the start-up model is not an encoder-decoder */
    open_and_wait(win, model);
    g_assert_true(gtk_widget_get_visible(GTK_WIDGET(te)));
    type_and_wait(win, SOURCE);
    set_target_and_wait(win, atn_target_entry_get_entry(te), TARGET);
    g_assert_cmpstr(atn_session_get_target(s), ==, TARGET);
    AtnResult *r = atn_session_get_result(s);
    g_assert_true(atn_result_is_encdec(r));

    float *cli[3];
    int64_t shape[3][4];
    cli_stacks(model, cli, shape);
    /* the window ran what the command line ran: the same source and target lengths */
    const atn_stack *cross = atn_result_get_stack(r, ATN_STACK_CROSS);
    g_assert_cmpint(cross->n_q, ==, shape[2][2]);
    g_assert_cmpint(cross->n_k, ==, shape[2][3]);
    g_assert_cmpint(cross->n_q, >, 1);
    g_assert_cmpint(cross->n_q, !=, cross->n_k);   /* non-square, so a transposed head cannot pass */
    g_autofree char *counts = g_strdup_printf("%d source + %d target tokens · %d encoder + %d decoder layers",
                                              (int)shape[2][3], (int)shape[2][2], (int)shape[0][0], (int)shape[2][0]);
    g_test_message("status: %s", atn_window_get_status(win));
    g_assert_nonnull(strstr(atn_window_get_status(win), counts));

    show_view(win, "head");
    GtkWidget *hv = atn_window_get_view_widget(win, "head");
    AtnStackPicker *picker = ATN_STACK_PICKER(find_type(hv, ATN_TYPE_STACK_PICKER));
    g_assert_nonnull(picker);
    g_assert_true(gtk_widget_get_visible(GTK_WIDGET(picker)));
    AtnHeatmap *hm = head_heatmap(win);

    /* Cross: the last decoder layer (BART has more decoder than encoder layers), the last head */
    gtk_toggle_button_set_active(atn_stack_picker_get_button(picker, ATN_STACK_CROSS), TRUE);
    g_assert_cmpint(atn_session_get_stack(s), ==, ATN_STACK_CROSS);
    int Ld = (int)shape[2][0], H = (int)shape[2][1];
    atn_session_select_head(s, Ld - 1, H - 1);
    g_assert_cmpint(atn_session_get_layer(s), ==, Ld - 1);
    settle(50);
    assert_head_equals(hm, cli[2], shape[2], Ld - 1, H - 1);
    atn_session_select_head(s, 0, 1);
    settle(50);
    assert_head_equals(hm, cli[2], shape[2], 0, 1);
    g_assert_false(atn_heatmap_get_causal(hm));
    g_assert_nonnull(strstr(atn_heatmap_get_title(hm), atn_encdec_stack_title(ATN_STACK_CROSS)));
    /* the hover names the target token, the source token and the weight */
    g_autofree char *cell = atn_heatmap_dup_cell_text(hm, 1, 2);
    const char *const *tgt = atn_result_get_stack_tokens(r, ATN_STACK_CROSS, FALSE);
    const char *const *src = atn_result_get_stack_tokens(r, ATN_STACK_CROSS, TRUE);
    g_autofree char *weight = g_strdup_printf("%.4f", (double)cli[2][(size_t)(0 * H + 1) * shape[2][2] * shape[2][3] +
                                                                     1 * shape[2][3] + 2]);
    g_assert_nonnull(strstr(cell, tgt[1]));
    g_assert_nonnull(strstr(cell, src[2]));
    g_assert_nonnull(strstr(cell, weight));
    /* ... and says which is which: "target ▁I (1) → source a (2): 0.1234" */
    g_autofree char *said = g_strdup_printf("target %s (1) → source %s (2): %s", tgt[1], src[2], weight);
    g_test_message("cross cell: %s", cell);
    g_assert_cmpstr(cell, ==, said);
    /* the chips are the source's tokens: a cross head's query (a target row, marked on the
       heatmap) marks none of them, and a source chip hovered marks no heatmap row */
    atn_session_set_query(s, 1);
    g_assert_cmpint(atn_heatmap_get_selected_row(hm), ==, 1);
    AtnTokenChips *chips = ATN_TOKEN_CHIPS(atn_window_get_token_chips(win));
    g_assert_cmpint(atn_token_chips_get_n_chips(chips), ==, shape[2][3]);
    for (int i = 0; i < atn_token_chips_get_n_chips(chips); i++)
        g_assert_false(gtk_widget_has_css_class(atn_token_chips_get_chip(chips, i), "query"));
    atn_session_set_hover_token(s, 1);
    g_assert_cmpint(atn_heatmap_get_highlight_token(hm), ==, -1);
    atn_session_set_hover_token(s, -1);
    /* the token lines: target tokens left, source tokens right */
    check_lines(win, ATN_STACK_CROSS, cli[2], shape[2], 0, 1);
    /* the decoder's next-token guesses under the sentence */
    check_next(win, model, (int)shape[2][2]);
    atn_session_set_query(s, 1);
    if (full) {   /* the exports, the Model view: on the first two folders */
        /* the export of the Head view: the cross head, its axes "target" and "source" */
        g_autoptr(AtnFigure) fig = atn_figure_source_dup_figure(ATN_FIGURE_SOURCE(hv));
        g_assert_nonnull(fig);
        g_assert_cmpstr(fig->basename, ==, "cross-L0-H1");
        g_autofree char *pdf = g_strdup_printf("%s/atn-ui-encdec-%d.pdf", g_get_tmp_dir(), (int)getpid());
        g_autoptr(GError) error = NULL;
        g_assert_true(atn_window_export_to(win, pdf, 1.0, &error));
        g_autofree char *text = NULL;
        const char *pargv[] = {"pdftotext", "-enc", "UTF-8", pdf, "-", NULL};
        g_assert_true(g_spawn_sync(NULL, (char **)pargv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, &text, NULL, NULL,
                                   &error));
        g_test_message("exported: %.300s", text);
        g_assert_nonnull(strstr(text, "target"));
        g_assert_nonnull(strstr(text, "source"));
        g_assert_null(strstr(text, "query"));
        g_unlink(pdf);
        /* Export Every Head: the cross stack's heads, every decoder layer, named as the command
           line's --all-heads --stack cross names them */
        g_autofree char *all_dir = g_dir_make_tmp("atn-ui-encdec-XXXXXX", NULL);
        atn_window_export_all_heads_to(win, all_dir, "png", 1.0);
        export_wait ew = {win, Ld * H};
        g_assert_true(wait_for(all_written, &ew));
        for (int l = 0; l < Ld; l++)
            for (int h = 0; h < H; h++) {
                g_autofree char *name = atn_render_head_file_name("cross", l, h, Ld, H, "png");
                g_autofree char *f = g_build_filename(all_dir, name, NULL);
                g_assert_true(g_file_test(f, G_FILE_TEST_EXISTS));
                g_unlink(f);
            }
        g_rmdir(all_dir);

        /* the Model view: the chosen stack's grid (BART's third decoder layer only in the decoder's
           and the cross stacks), its export titled with the stack */
        show_view(win, "model");
        GtkWidget *mv = atn_window_get_view_widget(win, "model");
        AtnStackPicker *mpicker = ATN_STACK_PICKER(find_type(mv, ATN_TYPE_STACK_PICKER));
        g_assert_true(gtk_widget_get_visible(GTK_WIDGET(mpicker)));
        g_assert_true(gtk_toggle_button_get_active(atn_stack_picker_get_button(mpicker, ATN_STACK_CROSS)));
        AtnModelGrid *grid = ATN_MODEL_GRID(find_type(mv, ATN_TYPE_MODEL_GRID));
        settle(100);
        g_assert_cmpint(grid_layers(grid), ==, Ld);
        g_autoptr(AtnFigure) mfig = atn_figure_source_dup_figure(ATN_FIGURE_SOURCE(mv));
        g_assert_cmpstr(mfig->basename, ==, "model-cross");
        gtk_toggle_button_set_active(atn_stack_picker_get_button(mpicker, ATN_STACK_ENCODER), TRUE);
        settle(100);
        g_assert_cmpint(grid_layers(grid), ==, shape[0][0]);
        gtk_toggle_button_set_active(atn_stack_picker_get_button(mpicker, ATN_STACK_CROSS), TRUE);
        g_assert_true(gtk_toggle_button_get_active(atn_stack_picker_get_button(picker, ATN_STACK_CROSS)));
        show_view(win, "head");
    }

    /* Decoder self: target x target, causal */
    gtk_toggle_button_set_active(atn_stack_picker_get_button(picker, ATN_STACK_DECODER), TRUE);
    g_assert_cmpint(atn_session_get_stack(s), ==, ATN_STACK_DECODER);
    settle(50);
    assert_head_equals(hm, cli[1], shape[1], 0, 1);
    g_assert_true(atn_heatmap_get_causal(hm));
    check_lines(win, ATN_STACK_DECODER, cli[1], shape[1], 0, 1);
    /* Encoder self: the capture's attention, source x source; layer clamped into the encoder */
    atn_session_set_stack(s, ATN_STACK_CROSS);
    atn_session_select_head(s, Ld - 1, 0);
    gtk_toggle_button_set_active(atn_stack_picker_get_button(picker, ATN_STACK_ENCODER), TRUE);
    g_assert_cmpint(atn_session_get_stack(s), ==, ATN_STACK_ENCODER);
    g_assert_cmpint(atn_session_get_layer(s), <=, shape[0][0] - 1);
    settle(50);
    assert_head_equals(hm, cli[0], shape[0], atn_session_get_layer(s), 0);
    g_assert_false(atn_heatmap_get_causal(hm));
    /* the picker follows the session */
    atn_session_set_stack(s, ATN_STACK_CROSS);
    g_assert_true(gtk_toggle_button_get_active(atn_stack_picker_get_button(picker, ATN_STACK_CROSS)));

    if (full) {   /* the other views: on the first two folders */
        /* the Trace follows the session's stack: a cross head and a decoder head, their weights
           the command line's captured rows and the engine's atn_trace_compute_stack */
        check_trace(win, model, ATN_STACK_CROSS, cli[2], shape[2]);
        check_trace(win, model, ATN_STACK_DECODER, cli[1], shape[1]);
        atn_session_set_stack(s, ATN_STACK_CROSS);
        /* the views that cannot show an encoder-decoder yet say why; Similarity and Statistics say
           whose heads theirs are; a head opened from them is the encoder's */
        show_view(win, "whatif");
        AtnWhatifView *wv = ATN_WHATIF_VIEW(atn_window_get_view_widget(win, "whatif"));
        g_test_message("what-if: %s", atn_whatif_view_get_status(wv));
        g_assert_nonnull(strstr(atn_whatif_view_get_status(wv), "What-if is off for encoder–decoder models"));
        check_stack_stats(win, cli, shape);
        show_view(win, "head");
    }

    /* another model hides both again */
    open_and_wait(win, f32_model);
    g_assert_false(gtk_widget_get_visible(GTK_WIDGET(te)));
    g_assert_false(gtk_widget_get_visible(GTK_WIDGET(picker)));
    g_assert_false(atn_heatmap_get_causal(hm));
    for (int i = 0; i < 3; i++)
        g_free(cli[i]);
    atn_session_set_stack(s, ATN_STACK_ENCODER);
    destroy_window(win);
}

static void test_t5(void) { check_model("t5-v1-f32", TRUE); }
static void test_bart(void) { check_model("bart-f32", TRUE); }
/* more decoder than encoder layers, bf16 weights; Marian's sinusoidal positions, f16 weights */
static void test_t5_v11(void) { check_model("t5-v11-bf16", FALSE); }
static void test_marian(void) { check_model("marian-f16", FALSE); }

int main(int argc, char **argv) {
    if (!ui_test_init(&argc, &argv))
        return 0;
    g_test_add_func("/ui/encdec/t5", test_t5);
    g_test_add_func("/ui/encdec/bart", test_bart);
    g_test_add_func("/ui/encdec/t5-v11-bf16", test_t5_v11);
    g_test_add_func("/ui/encdec/marian-f16", test_marian);
    return g_test_run();
}
