/* The Trace view at any length (issue 35): 2,048 tokens of random:bert-tiny in a real window
 * under Xvfb.  The softmax table lists the 8 keys with the largest weights, the first and last
 * 2 and the query, each weight equal to the captured head's (the forward's float row, not the
 * trace's arithmetic); each "m others" row's Σ equals the captured row's sum over its keys, and
 * the listed and left-out weights add up to 1; "Show all 2048 keys" lists every key.  The times
 * from the switch to the tables are printed (each asserted under 5 s).
 *
 * Run with --tap (meson does).  Without a display it reports "1..0 # SKIP no display". */
#include "ui-test-util.h"

#include "atn-trace-view-test.h"

#include <math.h>
#include <sys/resource.h>

/* This process's CPU seconds (user + system): the machine may be shared, the wall clock not ours. */
static double cpu_s(void) {
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_utime.tv_sec + u.ru_stime.tv_sec + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

enum { N = 2048, QUERY = 700 };

static AtnWindow *long_window(void) {
    AtnWindow *win = g_object_new(ATN_TYPE_WINDOW, "default-width", 1280, "default-height", 720, NULL);
    gtk_window_present(GTK_WINDOW(win));
    show_view(win, "head");   /* as ui-long: the Model view's 2,048-token thumbnails are not this test's */
    AtnSession *s = atn_window_get_session(win);
    atn_error err = {0};
    atn_model *m = atn_model_open("random:bert-tiny#2048", NULL, NULL, &err);   /* 2,048 positions */
    g_assert_nonnull(m);
    AtnModelHandle *handle = atn_model_handle_new(m, "random:bert-tiny#2048");
    int32_t *ids = g_new(int32_t, N);
    for (int i = 0; i < N; i++)
        ids[i] = i == 0 ? 101 : i == N - 1 ? 102 : 1000 + (i * 7919) % 20000;
    atn_session_set_ids(s, ids, N);
    g_free(ids);
    atn_session_set_model(s, handle);
    g_object_unref(handle);
    model_wait mw = {win, NULL, 0};
    if (!wait_for(idle_with_result, &mw))
        g_error("no result: busy %d analysing %d result %p runs %d model %p", atn_session_get_busy(s),
                atn_session_get_analysing(s), (void *)atn_session_get_result(s), atn_session_get_n_runs(s),
                (void *)atn_session_get_model(s));
    return win;
}

/* The softmax table's rows: [j, token, s-m, exp, a_j] split on tabs. */
static char ***softmax_rows(AtnTraceView *tv, int *n_rows) {
    g_autofree char *text = atn_trace_view_dup_step_text(tv, ATN_TRACE_STEP_SOFTMAX);
    g_assert_nonnull(text);
    char **lines = g_strsplit(text, "\n", -1);
    int n = 0;
    char ***rows = g_new0(char **, g_strv_length(lines) + 1);
    for (int i = 1; lines[i]; i++)   /* line 0: the header */
        if (lines[i][0])
            rows[n++] = g_strsplit(lines[i], "\t", -1);
    g_strfreev(lines);
    *n_rows = n;
    return rows;
}

static void free_rows(char ***rows) {
    for (int i = 0; rows[i]; i++)
        g_strfreev(rows[i]);
    g_free(rows);
}

/* The weighted sum's table (issue 35): the 8 keys with the largest a_j·‖v_j‖, largest first,
 * from the captured row and the capture's V (head 0: columns 0..d_k-1 of layer 1's V), not
 * from the trace; their shares of Σ a_j·‖v_j‖; one "m others" row with the rest's Σ. */
static void check_contributions(AtnTraceView *tv, AtnResult *r, const float *row) {
    const atn_capture *cap = atn_result_get_capture(r);
    g_assert_nonnull(cap->v);
    int d = cap->d_model, dk = d / cap->n_heads;
    const float *v = cap->v + (size_t)1 * N * d;   /* layer 1 */
    double *c = g_new(double, N), total = 0;
    for (int j = 0; j < N; j++) {
        double ss = 0;
        for (int x = 0; x < dk; x++)
            ss += (double)v[(size_t)j * d + x] * v[(size_t)j * d + x];
        c[j] = row[j] * sqrt(ss);
        total += c[j];
    }
    int order[8];   /* the 8 largest, counted here */
    for (int t = 0; t < 8; t++) {
        int best = -1;
        for (int j = 0; j < N; j++) {
            gboolean taken = FALSE;
            for (int u = 0; u < t; u++)
                taken |= order[u] == j;
            if (!taken && (best < 0 || c[j] > c[best]))
                best = j;
        }
        order[t] = best;
    }
    g_autofree char *text = atn_trace_view_dup_step_text(tv, ATN_TRACE_STEP_OUTPUT);
    g_assert_nonnull(text);
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    g_assert_true(g_str_has_prefix(lines[0], "j\ttoken\ta_j\t‖v_j‖\ta_j‖v_j‖\tshare\t0\t"));
    double listed = 0;
    for (int t = 0; t < 8; t++) {
        g_auto(GStrv) cell = g_strsplit(lines[1 + t], "\t", -1);
        int j = atoi(cell[0]);
        /* rank t holds the t-th largest contribution (the trace's doubles and these floats may
           swap keys closer than 1e-6) */
        if (fabs(c[j] - c[order[t]]) > 1e-6)
            g_error("row %d: key %d (a_j‖v_j‖ %.6f), the %d-th largest is key %d (%.6f)", t + 1, j, c[j], t + 1,
                    order[t], c[order[t]]);
        if (fabs(g_ascii_strtod(cell[2], NULL) - row[j]) > 6e-5 || fabs(g_ascii_strtod(cell[4], NULL) - c[j]) > 6e-5)
            g_error("key %d: a_j %s, a_j‖v_j‖ %s; the capture's %.6f, %.6f", j, cell[2], cell[4], row[j], c[j]);
        if (fabs(g_ascii_strtod(cell[5], NULL) - 100 * c[j] / total) > 6e-3)
            g_error("key %d: share %s, the capture's %.4f%%", j, cell[5], 100 * c[j] / total);
        listed += c[j];
    }
    g_assert_cmpint(atoi(lines[1]), ==, order[0]);   /* the largest contribution is never left out */
    g_auto(GStrv) rest = g_strsplit(lines[9], "\t", -1);
    g_assert_cmpstr(rest[1], ==, "2040 others");
    g_assert_true(g_str_has_prefix(rest[4], "Σ "));
    if (fabs(g_ascii_strtod(rest[4] + strlen("Σ "), NULL) - (total - listed)) > 6e-5)
        g_error("the others' Σ a_j‖v_j‖ %s, the capture's %.6f", rest[4], total - listed);
    g_assert_true(g_str_has_prefix(lines[10], "o700\t"));
    g_free(c);
}

/* The picture Export and Copy make lists the same rows as the view's tables: the softmax's keys
 * and "m others" rows with their Σ, and the weighted sum's 8 contributions (not the first and
 * last 16 rows it drew before). */
static void check_figure(AtnTraceView *tv) {
    g_autofree char *fig = atn_trace_view_dup_figure_text(tv);
    g_assert_nonnull(fig);
    g_auto(GStrv) tables = g_strsplit(fig, "\n\n", -1);
    const char *soft = NULL, *contrib = NULL;
    for (int t = 0; tables[t]; t++) {
        if (strstr(tables[t], "\texp\t"))
            soft = tables[t];
        if (strstr(tables[t], "\tshare\t"))
            contrib = tables[t];
    }
    g_assert_nonnull(soft);
    g_assert_nonnull(contrib);
    int n_rows;
    char ***rows = softmax_rows(tv, &n_rows);
    g_auto(GStrv) flines = g_strsplit(soft, "\n", -1);
    g_assert_cmpint(g_strv_length(flines) - 1, ==, n_rows);
    for (int i = 0; i < n_rows; i++) {
        g_auto(GStrv) fc = g_strsplit(flines[1 + i], "\t", -1);
        if (!strcmp(rows[i][0], "…")) {
            g_assert_cmpstr(fc[0], ==, "⋮");
            g_assert_cmpstr(fc[1], ==, rows[i][1]);   /* "m others" */
            g_assert_cmpstr(fc[4], ==, rows[i][4]);   /* "Σ w" */
        } else {
            g_assert_cmpstr(fc[0], ==, rows[i][0]);
            g_assert_cmpstr(fc[4], ==, rows[i][4]);
        }
    }
    free_rows(rows);
    g_autofree char *text = atn_trace_view_dup_step_text(tv, ATN_TRACE_STEP_OUTPUT);
    g_auto(GStrv) vlines = g_strsplit(text, "\n", -1);
    g_auto(GStrv) clines = g_strsplit(contrib, "\n", -1);
    g_assert_cmpuint(g_strv_length(clines), ==, 11);   /* header, 8 keys, others, o */
    for (int i = 1; i <= 9; i++) {
        g_auto(GStrv) a = g_strsplit(vlines[i], "\t", -1);
        g_auto(GStrv) b = g_strsplit(clines[i], "\t", -1);
        g_assert_cmpstr(b[0], ==, i == 9 ? "⋮" : a[0]);
        g_assert_cmpstr(b[4], ==, a[4]);
        g_assert_cmpstr(b[5], ==, a[5]);
    }
}

static void test_trace_top(void) {
    AtnWindow *win = long_window();
    AtnSession *s = atn_window_get_session(win);
    AtnResult *r = atn_session_get_result(s);
    g_assert_cmpint(atn_result_get_n_tokens(r), ==, N);
    const float *head = atn_result_get_head(r, 1, 0);
    g_assert_nonnull(head);
    const float *row = head + (size_t)QUERY * N;
    /* the 8 largest weights of the captured row, counted here (ties: the lower index) */
    int top[8];
    for (int t = 0; t < 8; t++) {
        int best = -1;
        for (int j = 0; j < N; j++) {
            gboolean taken = FALSE;
            for (int u = 0; u < t; u++)
                taken |= top[u] == j;
            if (!taken && (best < 0 || row[j] > row[best]))
                best = j;
        }
        top[t] = best;
    }

    gint64 t0 = g_get_monotonic_time();
    double c0 = cpu_s();
    AtnTraceView *tv = show_trace(win, 1, 0, QUERY);
    settle(50);
    double ms = (g_get_monotonic_time() - t0) / 1000.0;
    g_test_message("Trace view at %d tokens: tables shown %.0f ms after the switch (%.0f ms of CPU)", N, ms,
                   1000 * (cpu_s() - c0));
    g_assert_cmpfloat(cpu_s() - c0, <, 5.0);   /* "within a few seconds", on any machine's load */
    g_assert_true(gtk_widget_is_visible(GTK_WIDGET(atn_trace_view_get_all_keys(tv))));

    int n_rows;
    char ***rows = softmax_rows(tv, &n_rows);
    g_assert_cmpint(n_rows, <, 40);
    double listed = 0, others = 0;
    int n_listed = 0, prev = -1;
    gboolean seen[8] = {0}, seen_query = FALSE;
    for (int i = 0; i < n_rows; i++) {
        char **c = rows[i];
        g_assert_cmpint(g_strv_length(c), ==, 5);
        if (!strcmp(c[0], "…")) {   /* keys prev+1 .. (the next listed)-1 left out */
            int next = i + 1 < n_rows ? atoi(rows[i + 1][0]) : N;
            double sum = 0;
            for (int j = prev + 1; j < next; j++)
                sum += row[j];
            g_autofree char *count = g_strdup_printf("%d others", next - prev - 1);
            g_assert_cmpstr(c[1], ==, count);
            g_assert_true(g_str_has_prefix(c[4], "Σ "));
            double shown = g_ascii_strtod(c[4] + strlen("Σ "), NULL);
            if (fabs(shown - sum) > 6e-5)
                g_error("keys %d..%d: the window says Σ %s, the capture %.6f", prev + 1, next - 1, c[4], sum);
            others += shown;
            continue;
        }
        int j = atoi(c[0]);
        g_assert_cmpint(j, >, prev);
        prev = j;
        n_listed++;
        double a = g_ascii_strtod(c[4], NULL);
        if (fabs(a - row[j]) > 6e-5)
            g_error("key %d: the window says %s, the capture %.6f", j, c[4], row[j]);
        listed += row[j];
        for (int t = 0; t < 8; t++)
            seen[t] |= top[t] == j;
        seen_query |= j == QUERY;
    }
    for (int t = 0; t < 8; t++)
        if (!seen[t])
            g_error("key %d (weight %.6f, %d-th largest) is not listed", top[t], row[top[t]], t + 1);
    g_assert_true(seen_query);
    g_assert_cmpfloat(fabs(listed + others - 1.0), <, 12 * 6e-5);   /* Σ rounded to 4 decimals */
    free_rows(rows);
    /* the Markdown export lists the same keys: the largest weight's row, "m others" rows */
    g_autofree char *md = atn_trace_view_dup_markdown(tv, NULL);
    g_assert_nonnull(md);
    g_autofree char *top_row = g_strdup_printf("\n| %d | ", top[0]);
    g_assert_nonnull(strstr(md, top_row));
    g_assert_nonnull(strstr(md, " others* | … | … | … | Σ "));
    g_assert_cmpuint(strlen(md), <, 40000);

    check_contributions(tv, r, row);
    check_figure(tv);

    /* "Show all 2048 keys": every key, in order, each weight the capture's */
    g_assert_cmpstr(gtk_check_button_get_label(atn_trace_view_get_all_keys(tv)), ==, "Show all 2048 keys");
    t0 = g_get_monotonic_time();
    c0 = cpu_s();
    gtk_check_button_set_active(atn_trace_view_get_all_keys(tv), TRUE);
    settle(50);
    ms = (g_get_monotonic_time() - t0) / 1000.0;
    g_test_message("Show all %d keys: %.0f ms (%.0f ms of CPU)", N, ms, 1000 * (cpu_s() - c0));
    g_assert_cmpfloat(cpu_s() - c0, <, 5.0);
    rows = softmax_rows(tv, &n_rows);
    g_assert_cmpint(n_rows, ==, N);
    for (int j = 0; j < N; j++) {
        g_assert_cmpint(atoi(rows[j][0]), ==, j);
        if (fabs(g_ascii_strtod(rows[j][4], NULL) - row[j]) > 6e-5)
            g_error("all keys: key %d says %s, the capture %.6f", j, rows[j][4], row[j]);
    }
    free_rows(rows);
    destroy_window(win);
}

int main(int argc, char **argv) {
    if (!ui_test_init(&argc, &argv))
        return 0;
    g_test_add_func("/ui/trace-long/top", test_trace_top);
    return g_test_run();
}
