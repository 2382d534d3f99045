/* The trace sheet: one head's arithmetic for one query token laid out like a worked
 * solution — q, the keys, the dot products, ÷√d_k, the mask, the softmax, the values and
 * the weighted sum, then the concatenation and W_O — as small tables with their formulas.
 * One walk over the blocks both measures (cr == NULL) and draws, so the step rectangles
 * used for scrolling and hit-testing are the drawn ones. */
#include "render-private.h"
#include "trace-keys.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const step_titles[ATN_TRACE_STEP_COUNT] = {
    N_("Query"), N_("Keys"), N_("Scores q\xc2\xb7k"), N_("Scale \xc3\xb7\xe2\x88\x9a" "d\xe2\x82\x96"), N_("Mask"),
    N_("Softmax"), N_("Values"), N_("Weighted sum"), N_("Concatenate heads"), N_("Output projection"),
};

const char *atn_trace_step_title(atn_trace_step step) {
    return (unsigned)step < ATN_TRACE_STEP_COUNT ? step_titles[step] : "";
}

void atn_trace_sheet_spec_init(atn_trace_sheet_spec *s) {
    memset(s, 0, sizeof *s);
    s->highlight_step = -1;
    s->max_rows = 16;
    s->max_cols = 8;
    s->top_k = ATN_TRACE_TOP_DEFAULT;
}

/* ---- a small table ------------------------------------------------------------------ */

enum { TB_MAX_COLS = 24 };

typedef struct table {
    int rows, cols;                 /* rows include the header row */
    char **cells;                   /* [rows][cols] owned strings (NULL = empty) */
    bool accent_col[TB_MAX_COLS];
    bool left_col[TB_MAX_COLS];     /* left-aligned (labels); numbers are right-aligned */
    bool markup_header;
    bool one_format;                /* every number of the table in one format (a vector) */
    double *nums;                   /* [rows][cols] the numbers tb_num set, formatted by tb_formats */
    bool *is_num;
} table;

static bool tb_init(table *tb, int rows, int cols) {
    memset(tb, 0, sizeof *tb);
    if (cols > TB_MAX_COLS)
        cols = TB_MAX_COLS;
    tb->rows = rows;
    tb->cols = cols;
    tb->cells = calloc((size_t)rows * cols, sizeof *tb->cells);
    tb->nums = calloc((size_t)rows * cols, sizeof *tb->nums);
    tb->is_num = calloc((size_t)rows * cols, sizeof *tb->is_num);
    return tb->cells && tb->nums && tb->is_num;
}

static void tb_free(table *tb) {
    if (tb->cells)
        for (int i = 0; i < tb->rows * tb->cols; i++)
            free(tb->cells[i]);
    free(tb->cells);
    free(tb->nums);
    free(tb->is_num);
    tb->cells = NULL;
    tb->nums = NULL;
    tb->is_num = NULL;
}

static void tb_set(table *tb, int r, int c, const char *text) {
    if (r < 0 || r >= tb->rows || c < 0 || c >= tb->cols || !tb->cells)
        return;
    free(tb->cells[r * tb->cols + c]);
    tb->cells[r * tb->cols + c] = text ? strdup(text) : NULL;
}

/* A number, formatted with the others of its column by tb_formats. */
static void tb_num(table *tb, int r, int c, double v) {
    if (r < 0 || r >= tb->rows || c < 0 || c >= tb->cols || !tb->cells)
        return;
    tb->nums[r * tb->cols + c] = v;
    tb->is_num[r * tb->cols + c] = true;
}

/* One format for every number of a column (of the whole table when one_format): 4 decimals,
 * or 3 significant decimals with an exponent ("1.234e+05") for every one of them when one is
 * 100,000 or more; a tiny one reads "0.0007", not "7.288e-04" beside "0.3760" (issue 40). */
static void tb_formats(table *tb) {
    if (!tb->cells)
        return;
    int groups = tb->one_format ? 1 : tb->cols;
    for (int g = 0; g < groups; g++) {
        bool sci = false;
        for (int c = 0; c < tb->cols; c++)
            for (int r = 0; r < tb->rows; r++)
                if ((tb->one_format || c == g) && tb->is_num[r * tb->cols + c]) {
                    double v = tb->nums[r * tb->cols + c];
                    sci |= isfinite(v) && fabs(v) >= 1e5;
                }
        for (int c = 0; c < tb->cols; c++)
            for (int r = 0; r < tb->rows; r++)
                if ((tb->one_format || c == g) && tb->is_num[r * tb->cols + c]) {
                    char buf[32];
                    rt_format_fixed(buf, sizeof buf, tb->nums[r * tb->cols + c], sci);
                    tb_set(tb, r, c, buf);
                    tb->is_num[r * tb->cols + c] = false;
                }
    }
}

/* Which indices of 0..n-1 to show when at most max fit: the head, an ellipsis (-1), the
 * tail; `keep` (the query token, or -1) stays visible with ellipses around it.  Returns the
 * count written to idx (capacity max + 2). */
static int elide(int32_t n, int32_t max, int32_t keep, int32_t *idx) {
    if (max < 4)
        max = 4;
    if (n <= max) {
        for (int32_t i = 0; i < n; i++)
            idx[i] = i;
        return n;
    }
    int32_t head = max - 2, k = 0;
    bool middle = keep >= head && keep < n - 1;
    if (middle)
        head -= 2;
    for (int32_t i = 0; i < head; i++)
        idx[k++] = i;
    idx[k++] = -1;
    if (middle) {
        idx[k++] = keep;
        if (keep < n - 2)
            idx[k++] = -1;
    }
    idx[k++] = n - 1;
    return k;
}

#define ELLIPSIS_H "\xe2\x8b\xaf" /* ⋯ */
#define ELLIPSIS_V "\xe2\x8b\xae" /* ⋮ */

/* Draws (cr != NULL) or measures the table; returns the y under it.  out (may be NULL) gets
 * its cells as text: a row a line, cells tab-separated, a blank line after the table. */
static double tb_draw(cairo_t *cr, rtext *t, table *tb, double x, double y, double max_w, GString *out) {
    tb_formats(tb);
    for (int r = 0; out && r < tb->rows; r++)
        for (int c = 0; c < tb->cols; c++) {
            const char *cell = tb->cells[r * tb->cols + c];
            g_string_append_printf(out, "%s%s", cell ? cell : "", c + 1 < tb->cols ? "\t" : r + 1 < tb->rows ? "\n" : "\n\n");
        }
    double fs = t->fs, padx = 6 * fs, pady = 2 * fs;
    double lh = rt_line_height(t, RT_SMALL) + 2 * pady;
    double cw[TB_MAX_COLS] = {0};
    for (int c = 0; c < tb->cols; c++)
        for (int r = 0; r < tb->rows; r++) {
            const char *s = tb->cells[r * tb->cols + c];
            if (!s)
                continue;
            double w;
            if (r == 0 && tb->markup_header) {
                PangoLayout *l = rt_layout(t, s, RT_SMALL, true, true);
                int pw;
                pango_layout_get_size(l, &pw, NULL);
                w = (double)pw / PANGO_SCALE;
                g_object_unref(l);
            } else {
                rt_measure(t, s, RT_SMALL, r == 0, &w, NULL);
            }
            cw[c] = fmax(cw[c], fmin(w, 160 * fs) + 2 * padx);
        }
    double total = 0;
    for (int c = 0; c < tb->cols; c++)
        total += cw[c];
    (void)max_w;
    if (cr) {
        double xx = x;
        for (int c = 0; c < tb->cols; c++) {
            if (tb->accent_col[c]) {
                rt_rgb(cr, t->st.accent, 0.15);
                cairo_rectangle(cr, xx, y, cw[c], lh * tb->rows);
                cairo_fill(cr);
            }
            xx += cw[c];
        }
        rt_rgb(cr, t->st.fg, 0.06);
        cairo_rectangle(cr, x, y, total, lh);
        cairo_fill(cr);
        rt_rgb(cr, t->st.fg, 0.25);
        cairo_set_line_width(cr, 0.75 * fs);
        for (int r = 0; r <= tb->rows; r++) {
            cairo_move_to(cr, x, y + r * lh);
            cairo_line_to(cr, x + total, y + r * lh);
        }
        cairo_stroke(cr);
        for (int r = 0; r < tb->rows; r++) {
            xx = x;
            for (int c = 0; c < tb->cols; c++) {
                const char *s = tb->cells[r * tb->cols + c];
                if (s) {
                    rt_rgb(cr, tb->accent_col[c] && r > 0 ? t->st.accent : t->st.fg, 1.0);
                    if (r == 0 && tb->markup_header) {
                        PangoLayout *l = rt_layout(t, s, RT_SMALL, true, true);
                        int pw;
                        pango_layout_get_size(l, &pw, NULL);
                        cairo_move_to(cr, xx + cw[c] - padx - (double)pw / PANGO_SCALE, y + pady);
                        pango_cairo_show_layout(cr, l);
                        g_object_unref(l);
                    } else if (tb->left_col[c]) {
                        rt_draw(cr, t, s, RT_SMALL, r == 0, xx + padx, y + r * lh + pady, 0.0, cw[c] - 2 * padx);
                    } else {
                        rt_draw(cr, t, s, RT_SMALL, r == 0, xx + cw[c] - padx, y + r * lh + pady, 1.0,
                                cw[c] - 2 * padx);
                    }
                }
                xx += cw[c];
            }
        }
    }
    return y + lh * tb->rows;
}

/* ---- the sheet ------------------------------------------------------------------------- */

typedef struct sheet {
    cairo_t *cr;                  /* NULL: measure only */
    rtext *t;
    const atn_trace_sheet_spec *s;
    const atn_trace *tr;
    const char *const *labels;   /* the spec's token_labels, or NULL */
    double x, width, y;
    atn_rect rects[ATN_TRACE_STEP_COUNT];
    int32_t *idx_rows, n_rows;    /* the token rows shown; -1 - first: the keys first.. (up to the
                                     next row's key, or n) left out, one row */
    int32_t idx_k[64], n_k;       /* head-vector entries shown */
    int32_t idx_d[64], n_d;       /* model-vector entries shown */
    GString *text;                /* atn_render_trace_sheet_text's tables, or NULL */
} sheet;

/* Row r of the token tables left keys out (idx_rows[r] < 0): "m others" in the token column
 * and, where the column is the softmax weights, their Σ. */
static int32_t gap_end(const sheet *sh, int r) {
    for (int q = r + 1; q < sh->n_rows; q++)
        if (sh->idx_rows[q] >= 0)
            return sh->idx_rows[q];
    return sh->tr->n;
}

static void others_cells(const sheet *sh, table *tb, int r, int first_col, int ncols, const double *const *cols) {
    int32_t first = -1 - sh->idx_rows[r], end = gap_end(sh, r);
    char buf[64];
    tb_set(tb, r + 1, 0, ELLIPSIS_V);
    if (end - first == 1)
        snprintf(buf, sizeof buf, "%s", rt_tr(N_("1 other")));
    else
        snprintf(buf, sizeof buf, rt_tr(N_("%d others")), end - first);
    tb_set(tb, r + 1, 1, buf);
    for (int c = 0; cols && c < ncols; c++)
        if (cols[c] == sh->tr->weights) {
            snprintf(buf, sizeof buf, "\xce\xa3 %.4f", atn_trace_weight_sum(sh->tr, first, end));
            tb_set(tb, r + 1, first_col + c, buf);
        }
}

static const char *tok(const sheet *sh, int32_t j) {
    if (sh->labels && sh->labels[j])
        return sh->labels[j];
    const atn_encoding *e = sh->tr->enc;
    return e && e->tokens && e->tokens[j].text ? e->tokens[j].text : "?";
}

static void text_line(sheet *sh, const char *markup, double size) {
    PangoLayout *l = rt_layout(sh->t, markup, size, false, true);
    pango_layout_set_width(l, (int)(sh->width * PANGO_SCALE));
    pango_layout_set_wrap(l, PANGO_WRAP_WORD_CHAR);
    int pw, ph;
    pango_layout_get_size(l, &pw, &ph);
    if (sh->cr) {
        rt_rgb(sh->cr, sh->t->st.fg, 1.0);
        cairo_move_to(sh->cr, sh->x, sh->y);
        pango_cairo_show_layout(sh->cr, l);
    }
    sh->y += (double)ph / PANGO_SCALE;
    g_object_unref(l);
}

static void step_begin(sheet *sh, atn_trace_step step, const char *formula_markup) {
    double fs = sh->t->fs;
    sh->y += 10 * fs;
    sh->rects[step] = (atn_rect){sh->x - 6 * fs, sh->y - 4 * fs, sh->width + 12 * fs, 0};
    char buf[1600];   /* the formulas are built in 1024-byte buffers */
    snprintf(buf, sizeof buf, "<b>%d  %s</b>   %s", (int)step + 1, rt_tr(atn_trace_step_title(step)),
             formula_markup);
    text_line(sh, buf, RT_LABEL);
    sh->y += 4 * fs;
}

static void step_end(sheet *sh, atn_trace_step step) {
    sh->rects[step].h = sh->y + 4 * sh->t->fs - sh->rects[step].y;
}

/* a vector as a one-row table, entries picked by idx (-1 = ellipsis) */
static void vec_table(sheet *sh, const char *row_label, const double *v, const int32_t *idx, int n_idx,
                      int32_t accent_from, int32_t accent_to) {
    table tb;
    if (!tb_init(&tb, 2, n_idx + 1))
        return;
    tb.left_col[0] = true;
    tb.one_format = true;   /* one row: its entries are one column's worth */
    tb_set(&tb, 1, 0, row_label);
    for (int c = 0; c < n_idx && c + 1 < TB_MAX_COLS; c++) {
        char buf[32];
        if (idx[c] < 0) {
            tb_set(&tb, 0, c + 1, ELLIPSIS_H);
            tb_set(&tb, 1, c + 1, ELLIPSIS_H);
            continue;
        }
        snprintf(buf, sizeof buf, "%d", idx[c]);
        tb_set(&tb, 0, c + 1, buf);
        tb_num(&tb, 1, c + 1, v[idx[c]]);
        tb.accent_col[c + 1] = idx[c] >= accent_from && idx[c] <= accent_to;
    }
    sh->y = tb_draw(sh->cr, sh->t, &tb, sh->x, sh->y, sh->width, sh->text);
    tb_free(&tb);
}

/* token rows × the head-vector entries of a [n][k] matrix */
static void mat_table(sheet *sh, const char *name, const double *m) {
    int32_t k = sh->tr->d_head;
    table tb;
    if (!tb_init(&tb, sh->n_rows + 1, sh->n_k + 2))
        return;
    tb.left_col[0] = tb.left_col[1] = true;
    tb_set(&tb, 0, 0, "j");
    tb_set(&tb, 0, 1, rt_tr(N_("token")));
    for (int c = 0; c < sh->n_k && c + 2 < TB_MAX_COLS; c++) {
        char buf[48];
        if (sh->idx_k[c] < 0)
            snprintf(buf, sizeof buf, ELLIPSIS_H);
        else
            snprintf(buf, sizeof buf, "%s[%d]", name, sh->idx_k[c]);
        tb_set(&tb, 0, c + 2, buf);
    }
    for (int r = 0; r < sh->n_rows; r++) {
        int32_t j = sh->idx_rows[r];
        if (j < 0) {
            others_cells(sh, &tb, r, 2, 0, NULL);
            continue;
        }
        char buf[16];
        snprintf(buf, sizeof buf, "%d", j);
        tb_set(&tb, r + 1, 0, buf);
        tb_set(&tb, r + 1, 1, tok(sh, j));
        for (int c = 0; c < sh->n_k && c + 2 < TB_MAX_COLS; c++)
            if (sh->idx_k[c] >= 0)
                tb_num(&tb, r + 1, c + 2, m[(size_t)j * k + sh->idx_k[c]]);
    }
    sh->y = tb_draw(sh->cr, sh->t, &tb, sh->x, sh->y, sh->width, sh->text);
    tb_free(&tb);
}

/* token rows × a few per-token columns */
static void token_table(sheet *sh, int ncols, const char *const *headers, const double *const *cols,
                        int accent_col) {
    table tb;
    if (!tb_init(&tb, sh->n_rows + 1, ncols + 2))
        return;
    tb.left_col[0] = tb.left_col[1] = true;
    tb.markup_header = true;
    tb_set(&tb, 0, 0, "j");
    tb_set(&tb, 0, 1, rt_tr(N_("token")));
    for (int c = 0; c < ncols; c++) {
        tb_set(&tb, 0, c + 2, headers[c]);
        tb.accent_col[c + 2] = c == accent_col;
    }
    for (int r = 0; r < sh->n_rows; r++) {
        int32_t j = sh->idx_rows[r];
        if (j < 0) {
            others_cells(sh, &tb, r, 2, ncols, cols);
            continue;
        }
        char buf[16];
        snprintf(buf, sizeof buf, "%d", j);
        tb_set(&tb, r + 1, 0, buf);
        tb_set(&tb, r + 1, 1, tok(sh, j));
        for (int c = 0; c < ncols; c++) {
            double v = cols[c][j];
            if (v < -1e30)
                tb_set(&tb, r + 1, c + 2, "\xe2\x88\x92\xe2\x88\x9e"); /* −∞ */
            else
                tb_num(&tb, r + 1, c + 2, v);
        }
    }
    /* markup headers need escaping-free text: the headers below are fixed strings */
    sh->y = tb_draw(sh->cr, sh->t, &tb, sh->x, sh->y, sh->width, sh->text);
    tb_free(&tb);
}

static double value_norm(const atn_trace *t, int32_t j) {
    double ss = 0;
    for (int32_t c = 0; c < t->d_head; c++)
        ss += t->values[(size_t)j * t->d_head + c] * t->values[(size_t)j * t->d_head + c];
    return sqrt(ss);
}

/* The weighted sum at any length, as the Trace view's table: the top_k keys by a_j·‖v_j‖
 * (atn_trace_top_contributions), largest first, with a_j, ‖v_j‖, the contribution, its share
 * of Σ_j a_j·‖v_j‖ and a_j v_j's entries; one row for the others (their sums: Σ a_j v_j is
 * the exact rest of o); o's row. */
static void contrib_table(sheet *sh, int32_t top_k) {
    const atn_trace *t = sh->tr;
    int32_t n = t->n, k = t->d_head, fixed = 6;
    int32_t nk = sh->n_k < TB_MAX_COLS - fixed ? sh->n_k : TB_MAX_COLS - fixed;
    int32_t *keys = malloc((size_t)n * sizeof *keys);
    double *rest = calloc((size_t)k, sizeof *rest);
    bool *listed = calloc((size_t)n, sizeof *listed);
    int32_t m = keys && rest && listed ? atn_trace_top_contributions(t, top_k, keys) : -1;
    table tb;
    if (m <= 0 || !tb_init(&tb, 1 + m + (m < n) + 1, fixed + nk)) {
        free(keys), free(rest), free(listed);
        return;
    }
    double total = atn_trace_contribution_total(t), rest_w = 0, rest_c = 0;
    for (int32_t r = 0; r < m; r++)
        listed[keys[r]] = true;
    for (int32_t j = 0; j < n; j++) {
        if (listed[j])
            continue;
        rest_w += t->weights[j];
        rest_c += atn_trace_contribution(t, j);
        for (int32_t c = 0; c < k; c++)
            rest[c] += t->weights[j] * t->values[(size_t)j * k + c];
    }
    tb.left_col[0] = tb.left_col[1] = true;
    tb.markup_header = true;
    tb.accent_col[4] = true;
    const char *hd[] = {"j", rt_tr(N_("token")), "a<sub>j</sub>", "\xe2\x80\x96v<sub>j</sub>\xe2\x80\x96",
                        "a<sub>j</sub>\xe2\x80\x96v<sub>j</sub>\xe2\x80\x96", rt_tr(N_("share"))};
    for (int c = 0; c < fixed; c++)
        tb_set(&tb, 0, c, hd[c]);
    char buf[64];
    for (int32_t c = 0; c < nk; c++) {
        if (sh->idx_k[c] < 0)
            snprintf(buf, sizeof buf, ELLIPSIS_H);
        else
            snprintf(buf, sizeof buf, "a<sub>j</sub>v<sub>j</sub>[%d]", sh->idx_k[c]);
        tb_set(&tb, 0, fixed + c, buf);
    }
    for (int32_t r = 0; r < m; r++) {
        int32_t j = keys[r];
        double cj = atn_trace_contribution(t, j);
        snprintf(buf, sizeof buf, "%d", j);
        tb_set(&tb, r + 1, 0, buf);
        tb_set(&tb, r + 1, 1, tok(sh, j));
        tb_num(&tb, r + 1, 2, t->weights[j]);
        tb_num(&tb, r + 1, 3, value_norm(t, j));
        tb_num(&tb, r + 1, 4, cj);
        snprintf(buf, sizeof buf, "%.2f%%", total > 0 ? 100 * cj / total : 0.0);
        tb_set(&tb, r + 1, 5, buf);
        for (int32_t c = 0; c < nk; c++)
            if (sh->idx_k[c] >= 0)
                tb_num(&tb, r + 1, fixed + c, t->weights[j] * t->values[(size_t)j * k + sh->idx_k[c]]);
    }
    int32_t r = m + 1;
    if (m < n) {
        tb_set(&tb, r, 0, ELLIPSIS_V);
        if (n - m == 1)
            snprintf(buf, sizeof buf, "%s", rt_tr(N_("1 other")));
        else
            snprintf(buf, sizeof buf, rt_tr(N_("%d others")), n - m);
        tb_set(&tb, r, 1, buf);
        snprintf(buf, sizeof buf, "\xce\xa3 %.4f", rest_w);
        tb_set(&tb, r, 2, buf);
        snprintf(buf, sizeof buf, "\xce\xa3 %.4f", rest_c);
        tb_set(&tb, r, 4, buf);
        snprintf(buf, sizeof buf, "%.2f%%", total > 0 ? 100 * rest_c / total : 0.0);
        tb_set(&tb, r, 5, buf);
        for (int32_t c = 0; c < nk; c++)
            if (sh->idx_k[c] >= 0)
                tb_num(&tb, r, fixed + c, rest[sh->idx_k[c]]);
        r++;
    }
    tb_set(&tb, r, 0, "o");
    tb_set(&tb, r, 1, rt_tr(N_("all keys")));
    tb_num(&tb, r, 2, atn_trace_weight_sum(t, 0, n));
    tb_num(&tb, r, 4, total);
    tb_set(&tb, r, 5, total > 0 ? "100%" : "0%");
    for (int32_t c = 0; c < nk; c++)
        if (sh->idx_k[c] >= 0)
            tb_num(&tb, r, fixed + c, t->output[sh->idx_k[c]]);
    char line[512];
    snprintf(line, sizeof line, rt_tr(N_("the %d keys that contribute most, by a<sub>j</sub>\xe2\x80\x96v<sub>j</sub>"
                                       "\xe2\x80\x96, of %d")), m, n);
    text_line(sh, line, RT_SMALL);
    sh->y += 3 * sh->t->fs;
    sh->y = tb_draw(sh->cr, sh->t, &tb, sh->x, sh->y, sh->width, sh->text);
    tb_free(&tb);
    free(keys), free(rest), free(listed);
}

/* The token rows: above max_rows keys and with top_k > 0 the Trace view's listing
 * (atn_trace_key_rows), else every row or the first and last ones around the query (elide);
 * each run left out is one entry -1 - (its first key).  false: out of memory. */
static bool pick_rows(sheet *sh, int32_t max_rows, int32_t top_k) {
    int32_t n = sh->tr->n;
    if (n > max_rows && top_k > 0) {
        int32_t *keys = malloc((size_t)n * sizeof *keys);
        sh->idx_rows = keys ? malloc((size_t)(2 * n + 2) * sizeof *sh->idx_rows) : NULL;
        if (!sh->idx_rows) {
            free(keys);
            return false;
        }
        int32_t m = atn_trace_key_rows(sh->tr, top_k, ATN_TRACE_EDGE_DEFAULT, keys), prev = -1;
        sh->n_rows = 0;
        for (int32_t r = 0; r < m; r++) {
            if (keys[r] > prev + 1)
                sh->idx_rows[sh->n_rows++] = -1 - (prev + 1);
            sh->idx_rows[sh->n_rows++] = prev = keys[r];
        }
        if (prev < n - 1)
            sh->idx_rows[sh->n_rows++] = -1 - (prev + 1);
        free(keys);
        return true;
    }
    sh->idx_rows = malloc((size_t)(max_rows + 2 > 64 ? max_rows + 2 : 64) * sizeof *sh->idx_rows);
    if (!sh->idx_rows)
        return false;
    sh->n_rows = elide(n, max_rows, sh->tr->query, sh->idx_rows);
    for (int32_t r = 0; r < sh->n_rows; r++)   /* elide's -1: the keys after the previous row's */
        if (sh->idx_rows[r] == -1)
            sh->idx_rows[r] = -1 - (r > 0 ? sh->idx_rows[r - 1] + 1 : 0);
    return true;
}

static double walk(cairo_t *cr, rtext *t, const atn_trace_sheet_spec *s, double width, atn_rect *rects_out,
                   GString *text) {
    sheet sh = {0};
    sh.text = text;
    sh.cr = cr;
    sh.t = t;
    sh.s = s;
    sh.tr = s->trace;
    sh.labels = s->token_labels;
    double fs = t->fs, pad = 14 * fs;
    sh.x = pad;
    sh.width = fmax(100, width - 2 * pad);
    sh.y = pad;
    const atn_trace *tr = s->trace;
    if (!tr) {
        text_line(&sh, rt_tr(N_("no trace")), RT_LABEL);
        return sh.y + pad;
    }
    int32_t max_rows = s->max_rows > 0 ? s->max_rows : 16, max_cols = s->max_cols > 0 ? s->max_cols : 8;
    if (max_rows > 60)
        max_rows = 60;
    if (max_cols > TB_MAX_COLS - 4)
        max_cols = TB_MAX_COLS - 4;
    if (!pick_rows(&sh, max_rows, s->top_k)) {
        text_line(&sh, rt_tr(N_("no trace")), RT_LABEL);
        return sh.y + pad;
    }
    sh.n_k = elide(tr->d_head, max_cols, -1, sh.idx_k);
    sh.n_d = elide(tr->d_model, max_cols + 4 > TB_MAX_COLS - 2 ? TB_MAX_COLS - 2 : max_cols + 4, -1, sh.idx_d);
    int32_t i = tr->query, k = tr->d_head, n = tr->n;
    char buf[1024], esc_tok[256];
    {
        gchar *e = g_markup_escape_text(tok(&sh, i), -1);
        snprintf(esc_tok, sizeof esc_tok, "%s", e);
        g_free(e);
    }
    char *model = s->model_name ? g_markup_escape_text(s->model_name, -1) : NULL;
    /* TRANSLATORS: the trace figure's heading: model name, separator, layer, head, query index, token */
    snprintf(buf, sizeof buf, rt_tr(N_("<span size='larger' weight='bold'>%s%slayer %d \xc2\xb7 head %d \xc2\xb7 query "
                                       "%d \xe2\x80\x9c%s\xe2\x80\x9d</span>")),
             model ? model : "", model ? " \xc2\xb7 " : "", tr->layer, tr->head, i, esc_tok);
    g_free(model);
    text_line(&sh, buf, RT_LABEL);
    snprintf(buf, sizeof buf, rt_tr(N_("d<sub>model</sub> = %d, %d heads, so each head works in d<sub>k</sub> = %d "
                                       "dimensions (columns %d\xe2\x80\xa6%d of Q, K, V).")), tr->d_model, s->n_heads > 0 ? s->n_heads : 0, k,
             tr->head * k, tr->head * k + k - 1);
    text_line(&sh, buf, RT_SMALL);

    int hl = s->highlight_step;
    /* 1 query */
    snprintf(buf, sizeof buf, rt_tr(N_("q<sub>%d</sub> = x<sub>%d</sub> W<sub>Q</sub> + b<sub>Q</sub>, head %d's "
                                       "columns")), i, i, tr->head);
    step_begin(&sh, ATN_TRACE_STEP_QUERY, buf);
    snprintf(buf, sizeof buf, "q_%d", i);
    vec_table(&sh, buf, tr->q, sh.idx_k, sh.n_k, -1, -2);
    step_end(&sh, ATN_TRACE_STEP_QUERY);
    /* 2 keys */
    step_begin(&sh, ATN_TRACE_STEP_KEYS,
               rt_tr(N_("k<sub>j</sub> = x<sub>j</sub> W<sub>K</sub> + b<sub>K</sub>, one per token")));
    mat_table(&sh, "k", tr->keys);
    step_end(&sh, ATN_TRACE_STEP_KEYS);
    /* 3 scores */
    snprintf(buf, sizeof buf, rt_tr(N_("s<sub>j</sub> = q<sub>%d</sub> \xc2\xb7 k<sub>j</sub>  (row %d of Q "
                                       "K<sup>T</sup>)")), i, i);
    step_begin(&sh, ATN_TRACE_STEP_SCORES, buf);
    if (k <= 4 && n > 0) {
        /* the first dot product written out */
        int len = snprintf(buf, sizeof buf, "%s", rt_tr(N_("e.g. s<sub>0</sub> = ")));
        for (int32_t c = 0; c < k && len < (int)sizeof buf - 64; c++)
            len += snprintf(buf + len, sizeof buf - len, "%s%.4f\xc3\x97%.4f", c ? " + " : "", tr->q[c], tr->keys[c]);
        snprintf(buf + len, sizeof buf - len, " = %.4f", tr->scores[0]);
        text_line(&sh, buf, RT_SMALL);
        sh.y += 3 * fs;
    }
    {
        const char *h[] = {"s<sub>j</sub>"};
        const double *c[] = {tr->scores};
        token_table(&sh, 1, h, c, -1);
    }
    step_end(&sh, ATN_TRACE_STEP_SCORES);
    /* 4 scale */
    if (!tr->c2p_term && !tr->pos_bias && tr->scale != 1.0 && fabs(tr->scale * sqrt((double)k) - 1.0) > 1e-6)
        /* Gemma: query_pre_attn_scalar^-1/2; its soft-cap comes before the mask */
        snprintf(buf, sizeof buf, rt_tr(N_("s<sub>j</sub> \xc3\x97 %.4f: the model's own factor, not "
                                           "1/\xe2\x88\x9a" "d<sub>k</sub>%s")), tr->scale,
                 tr->capped ? rt_tr(N_("; then the soft-cap c tanh(s / c) before the mask")) : "");
    else
        snprintf(buf, sizeof buf, "s<sub>j</sub> / \xe2\x88\x9a" "d<sub>k</sub> = s<sub>j</sub> / \xe2\x88\x9a%d = "
                 "s<sub>j</sub> \xc3\x97 %.4f", k, tr->scale);
    step_begin(&sh, ATN_TRACE_STEP_SCALE, buf);
    {
        const char *h[] = {"s<sub>j</sub>", "s<sub>j</sub>/\xe2\x88\x9a" "d<sub>k</sub>"};
        const double *c[] = {tr->scores, tr->scaled};
        token_table(&sh, 2, h, c, 1);
    }
    step_end(&sh, ATN_TRACE_STEP_SCALE);
    /* 5 mask */
    int32_t masked = 0;
    for (int32_t j = 0; j < n; j++)
        masked += tr->mask_term[j] != 0;
    step_begin(&sh, ATN_TRACE_STEP_MASK,
               tr->causal ? rt_tr(N_("causal mask: keys after the query and padded keys get a huge negative number "
                                     "added (finfo.min), so their weight becomes 0"))
               : masked   ? rt_tr(N_("padded keys get a huge negative number added, so their weight becomes 0"))
                          : rt_tr(N_("no padded tokens: nothing is added")));
    if (masked) {
        double *after = malloc((size_t)n * sizeof *after);
        if (after) {
            for (int32_t j = 0; j < n; j++) {   /* every term the softmax reads: the soft-cap, relative terms, ALiBi */
                double sc = tr->capped ? tr->capped[j] : tr->scaled[j];
                double rel = tr->c2p_term ? tr->c2p_term[j] + tr->p2c_term[j] : tr->pos_bias ? tr->pos_bias[j] : 0.0;
                after[j] = tr->mask_term[j] != 0 ? -INFINITY : sc + rel + tr->bias_term[j];
            }
            const char *h[] = {"mask", "s\xe2\x80\xb2<sub>j</sub>"};
            const double *c[] = {tr->mask_term, after};
            token_table(&sh, 2, h, c, 1);
            free(after);
        }
    }
    step_end(&sh, ATN_TRACE_STEP_MASK);
    /* 6 softmax */
    snprintf(buf, sizeof buf, rt_tr(N_("a<sub>j</sub> = exp(s\xe2\x80\xb2<sub>j</sub> \xe2\x88\x92 m) / \xce\xa3 "
                                       "exp(\xe2\x80\xa6), with m = max = %.4f and \xce\xa3 = %.4f")),
             tr->max, tr->sum);
    step_begin(&sh, ATN_TRACE_STEP_SOFTMAX, buf);
    {
        const char *h[] = {"s\xe2\x80\xb2<sub>j</sub> \xe2\x88\x92 m", "exp", "a<sub>j</sub>"};
        const double *c[] = {tr->shifted, tr->exps, tr->weights};
        token_table(&sh, 3, h, c, 2);
    }
    step_end(&sh, ATN_TRACE_STEP_SOFTMAX);
    /* 7 values */
    step_begin(&sh, ATN_TRACE_STEP_VALUES, "v<sub>j</sub> = x<sub>j</sub> W<sub>V</sub> + b<sub>V</sub>");
    mat_table(&sh, "v", tr->values);
    step_end(&sh, ATN_TRACE_STEP_VALUES);
    /* 8 weighted sum */
    snprintf(buf, sizeof buf, rt_tr(N_("o = \xce\xa3<sub>j</sub> a<sub>j</sub> v<sub>j</sub>: head %d's output for "
                                       "token %d")), tr->head, i);
    step_begin(&sh, ATN_TRACE_STEP_OUTPUT, buf);
    if (n <= 6 && k <= 4) {
        for (int32_t c = 0; c < k; c++) {
            int len = snprintf(buf, sizeof buf, "o[%d] =", c);
            for (int32_t j = 0; j < n && len < (int)sizeof buf - 64; j++)
                len += snprintf(buf + len, sizeof buf - len, "%s%.4f\xc3\x97%.4f", j ? " + " : " ", tr->weights[j],
                                tr->values[(size_t)j * k + c]);
            snprintf(buf + len, sizeof buf - len, " = %.4f", tr->output[c]);
            text_line(&sh, buf, RT_SMALL);
        }
        sh.y += 3 * fs;
    }
    if (n > max_rows)   /* a long trace: the keys that contribute most, then o */
        contrib_table(&sh, s->top_k > 0 ? s->top_k : ATN_TRACE_TOP_DEFAULT);
    else
        vec_table(&sh, "o", tr->output, sh.idx_k, sh.n_k, -1, -2);
    step_end(&sh, ATN_TRACE_STEP_OUTPUT);
    /* 9 concat */
    snprintf(buf, sizeof buf, rt_tr(N_("every head's output for token %d side by side; head %d fills columns "
                                       "%d\xe2\x80\xa6%d")), i, tr->head, tr->head * k, tr->head * k + k - 1);
    step_begin(&sh, ATN_TRACE_STEP_CONCAT, buf);
    /* show this head's columns even when the vector is elided */
    int32_t idx[64];
    int n_idx = 0;
    int32_t dc = tr->d_concat > 0 ? tr->d_concat : tr->d_model;   /* Qwen3's heads: not d_model wide */
    if (dc <= max_cols + 4) {
        for (int32_t c = 0; c < dc; c++)
            idx[n_idx++] = c;
    } else {
        int32_t from = tr->head * k, to = tr->head * k + (k < max_cols ? k : max_cols) - 1;
        if (from > 0)
            idx[n_idx++] = 0;
        if (from > 1)
            idx[n_idx++] = -1;
        for (int32_t c = from; c <= to; c++)
            idx[n_idx++] = c;
        if (to < dc - 2)
            idx[n_idx++] = -1;
        if (to < dc - 1)
            idx[n_idx++] = dc - 1;
    }
    vec_table(&sh, "concat", tr->concat, idx, n_idx, tr->head * k, tr->head * k + k - 1);
    step_end(&sh, ATN_TRACE_STEP_CONCAT);
    /* 10 projection */
    if (tr->projected) {
        step_begin(&sh, ATN_TRACE_STEP_PROJECT, "concat W<sub>O</sub> + b<sub>O</sub>");
        vec_table(&sh, "out", tr->projected, sh.idx_d, sh.n_d, -1, -2);
    } else {   /* an attention file: W_O is not in it */
        step_begin(&sh, ATN_TRACE_STEP_PROJECT, rt_tr(N_("concat W<sub>O</sub> + b<sub>O</sub> needs the model's "
                                                         "W<sub>O</sub>, which an attention file does not hold")));
    }
    step_end(&sh, ATN_TRACE_STEP_PROJECT);
    sh.y += 8 * fs;
    snprintf(buf, sizeof buf, tr->from_file ? rt_tr(N_("<small>check: these weights differ from the file's attention "
                                                       "by at most %.2g</small>"))
                                            : rt_tr(N_("<small>check: these weights differ from the captured attention by at most "
                                       "%.2g</small>")), (double)tr->max_abs_diff);
    text_line(&sh, buf, RT_SMALL);
    if (cr && hl >= 0 && hl < ATN_TRACE_STEP_COUNT) {
        atn_rect r = sh.rects[hl];
        rt_rgb(cr, t->st.accent, 1.0);
        cairo_set_line_width(cr, 2 * fs);
        cairo_rectangle(cr, r.x, r.y, r.w, r.h);
        cairo_stroke(cr);
    }
    if (rects_out)
        memcpy(rects_out, sh.rects, sizeof sh.rects);
    free(sh.idx_rows);
    return sh.y + pad;
}

double atn_render_trace_sheet_height(const atn_trace_sheet_spec *s, double width) {
    rtext t;
    rt_begin(&t, s->style);
    double h = walk(NULL, &t, s, width, NULL, NULL);
    rt_end(&t);
    return ceil(h);
}

void atn_render_trace_sheet(cairo_t *cr, const atn_trace_sheet_spec *s, double width, double height) {
    rtext t;
    rt_begin(&t, s->style);
    cairo_save(cr);
    rt_background(cr, &t, width, height);
    walk(cr, &t, s, width, NULL, NULL);
    cairo_restore(cr);
    rt_end(&t);
}

void atn_render_trace_sheet_step_rects(const atn_trace_sheet_spec *s, double width,
                                       atn_rect rects[ATN_TRACE_STEP_COUNT]) {
    rtext t;
    rt_begin(&t, s->style);
    memset(rects, 0, sizeof(atn_rect) * ATN_TRACE_STEP_COUNT);
    walk(NULL, &t, s, width, rects, NULL);
    rt_end(&t);
}

int atn_render_trace_sheet_step_at(const atn_trace_sheet_spec *s, double width, double x, double y) {
    atn_rect r[ATN_TRACE_STEP_COUNT];
    atn_render_trace_sheet_step_rects(s, width, r);
    for (int i = 0; i < ATN_TRACE_STEP_COUNT; i++)
        if (r[i].h > 0 && x >= r[i].x && x < r[i].x + r[i].w && y >= r[i].y && y < r[i].y + r[i].h)
            return i;
    return -1;
}

void atn_render_trace_sheet_natural_size(const atn_trace_sheet_spec *s, double *width, double *height) {
    double w = 640;
    if (s->trace && s->trace->d_head > 4)
        w = 760;
    rtext t;
    rt_begin(&t, s->style);
    w *= t.fs;
    rt_end(&t);
    *width = w;
    *height = atn_render_trace_sheet_height(s, w);
}

char *atn_render_trace_sheet_text(const atn_trace_sheet_spec *s, double width) {
    rtext t;
    rt_begin(&t, s->style);
    GString *g = g_string_new(NULL);
    walk(NULL, &t, s, width, NULL, g);
    rt_end(&t);
    char *out = strdup(g->str);
    g_string_free(g, TRUE);
    return out;
}
