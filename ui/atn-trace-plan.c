/* The trace as tables of text: what the Trace view shows, step by step. */
#include "atn-trace-plan.h"

#include "trace-keys.h"

#include <glib/gi18n.h>
#include <math.h>
#include <string.h>

enum { MAX_ROWS = 16, MAX_COLS = 8, MAX_WIDE_COLS = 16 };

/* ---- the plan ------------------------------------------------------------------------------- */

static void plan_init(AtnTracePlanStep *p, int rows, int cols) {
    p->rows = rows;
    p->cols = cols;
    p->cells = g_new0(char *, (size_t)rows * cols);
    p->flags = g_new0(guint8, (size_t)rows * cols);
}

void atn_trace_plan_step_clear(AtnTracePlanStep *p) {
    for (int i = 0; p->cells && i < p->rows * p->cols; i++)
        g_free(p->cells[i]);
    g_free(p->cells);
    g_free(p->flags);
    g_free(p->formula);
    g_free(p->note);
    memset(p, 0, sizeof *p);
}

static void plan_set(AtnTracePlanStep *p, int r, int c, guint8 flags, char *text /* owned */) {
    g_free(p->cells[r * p->cols + c]);
    p->cells[r * p->cols + c] = text;
    p->flags[r * p->cols + c] = flags;
}

static char *fmt4(double v) {
    if (isinf(v))
        return g_strdup(v < 0 ? "−∞" : "∞");
    return g_strdup_printf("%.4f", v);
}

/* Token rows shown: all (up to MAX_ROWS keys, or top_k 0), or the keys atn_trace_key_rows
 * lists (the top_k by weight, the first and last few, the query, the largest score); a run of
 * keys left out is one row, -1 - (its first key). */
static GArray *rows_shown(const atn_trace *t, int top_k) {
    GArray *a = g_array_new(FALSE, FALSE, sizeof(int));
    int n = t->n;
    int *keys = g_new(int32_t, MAX(n, 1));
    int m = n <= MAX_ROWS || top_k <= 0 ? n : atn_trace_key_rows(t, top_k, ATN_TRACE_EDGE_DEFAULT, keys);
    for (int r = 0; r < m; r++) {
        int j = m == n ? r : keys[r], prev = r > 0 ? (m == n ? r - 1 : keys[r - 1]) : -1;
        if (j > prev + 1) {
            int gap = -1 - (prev + 1);
            g_array_append_val(a, gap);
        }
        g_array_append_val(a, j);
    }
    int last = m == n ? n - 1 : keys[m - 1];
    if (last < n - 1) {
        int gap = -1 - (last + 1);
        g_array_append_val(a, gap);
    }
    g_free(keys);
    return a;
}

/* The keys of the run of left-out keys starting at `first`: up to the next listed key (the
 * next entry of rows after index r), or n. */
static int gap_end(const atn_trace *t, GArray *rows, guint r) {
    return r + 1 < rows->len ? g_array_index(rows, int, r + 1) : t->n;
}

/* Columns shown of a vector of width k; -1 is an ellipsis. */
static GArray *cols_shown(int k, int max) {
    GArray *a = g_array_new(FALSE, FALSE, sizeof(int));
    int ell = -1;
    for (int c = 0; c < k; c++) {
        if (k <= max || c < max / 2 || c >= k - (max / 2 - 1))
            g_array_append_val(a, c);
        else if (g_array_index(a, int, a->len - 1) != -1)
            g_array_append_val(a, ell);
    }
    return a;
}

/* Columns shown of the d-wide concat and output vectors: all when d fits, else the first two,
 * the head's own block a0..a1 (all of it when it is at most max/2 wide, else its first and
 * last quarter of max) with one neighbour each side, and the last two; -1 is an ellipsis.
 * The head's own columns are never behind the "…" (issue 14, defect 3: head 15's column 120 of
 * the demo model was). */
static GArray *cols_around(int d, int max, int a0, int a1) {
    if (d <= max || a0 < 0 || a1 < a0 || a1 >= d)
        return cols_shown(d, max);
    gboolean *want = g_new0(gboolean, d);
    int k = a1 - a0 + 1, q = MAX(2, max / 4);
    want[0] = want[1 % d] = want[d - 1] = want[MAX(0, d - 2)] = TRUE;
    for (int c = a0; c <= a1; c++)
        want[c] = k <= max / 2 || c < a0 + q || c > a1 - q;
    if (a0 > 0)
        want[a0 - 1] = TRUE;
    if (a1 + 1 < d)
        want[a1 + 1] = TRUE;
    GArray *a = g_array_new(FALSE, FALSE, sizeof(int));
    int ell = -1;
    for (int c = 0; c < d; c++) {
        if (want[c])
            g_array_append_val(a, c);
        else if (a->len && g_array_index(a, int, a->len - 1) != -1)
            g_array_append_val(a, ell);
    }
    g_free(want);
    return a;
}

/* Token j as the plan names it: its label when there are labels, else the encoding's text. */
static const char *token_of(const atn_trace *t, const char *const *labels, int j) {
    return labels && labels[j] ? labels[j] : t->enc->tokens[j].text;
}

char *atn_trace_plan_intro(const atn_trace *t, const char *token, int n_heads) {
    if (t->n_kv_heads > 0 && (t->n_kv_heads < n_heads || n_heads * t->d_head != t->d_model))
        return g_markup_printf_escaped(_("How head %d of layer %d mixes the tokens for token %d “%s”: %d heads of "
                                         "d<sub>k</sub> = %d dimensions (d<sub>model</sub> = %d); it reads K/V head "
                                         "%d of %d."),
                                       t->head, t->layer, t->query, token, n_heads, t->d_head, t->d_model, t->kv_head,
                                       t->n_kv_heads);
    return g_markup_printf_escaped(_("How head %d of layer %d mixes the tokens for token %d “%s”: d<sub>model</sub> = "
                                     "%d split into %d heads of d<sub>k</sub> = %d dimensions."),
                                   t->head, t->layer, t->query, token, t->d_model, n_heads, t->d_head);
}

double atn_trace_plan_score(const atn_trace *t, int j) {
    double sc = t->capped ? t->capped[j] : t->scaled[j];   /* Gemma 2: soft-capped before the mask */
    double rel = t->c2p_term ? t->c2p_term[j] + t->p2c_term[j] : t->pos_bias ? t->pos_bias[j] : 0.0;
    return sc + rel + t->bias_term[j] + t->mask_term[j];
}

int atn_trace_plan_mask_counts(const atn_trace *t, int *future, int *padded, int *earlier) {
    int n = t->n, i = t->query, fu = 0, pa = 0, ea = 0, last = -1;
    gboolean after = FALSE;   /* a real key at or after the query hidden: not a window */
    /* the encoding's padding is the keys' only where the keys are its tokens (not a decoder's) */
    gboolean own = t->stack != ATN_STACK_DECODER && t->enc && t->enc->mask;
    for (int j = 0; j < n; j++) {
        if (t->mask_term[j] == 0)
            continue;
        if (t->causal && j > i && t->stack != ATN_STACK_CROSS)
            fu++;
        else if (!own || !t->enc->mask[j])
            pa++;
        else {
            ea++;
            after |= j >= i;
            last = j;
        }
    }
    int window = 0;
    if (ea > 0 && !after) {   /* a sliding window hides exactly the real keys j <= i - W */
        gboolean clean = TRUE;
        for (int j = 0; j <= last && clean; j++)
            clean = !t->enc->mask[j] || t->mask_term[j] != 0;
        window = clean ? i - last : 0;
    }
    if (future)
        *future = fu;
    if (padded)
        *padded = pa;
    if (earlier)
        *earlier = ea;
    return window;
}

/* A vector as a header row of indices and one row of values (the columns cs, -1 an
 * ellipsis); accent columns a0..a1. */
static void plan_vector_cols(AtnTracePlanStep *p, const char *name, const double *v, GArray *cs, int a0, int a1) {
    plan_init(p, 2, 1 + cs->len);
    p->vector = TRUE;
    plan_set(p, 0, 0, ATN_TRACE_CELL_HEADER, g_strdup(""));
    plan_set(p, 1, 0, ATN_TRACE_CELL_HEADER, g_strdup(name));
    for (guint i = 0; i < cs->len; i++) {
        int c = g_array_index(cs, int, i);
        guint8 acc = c >= 0 && c >= a0 && c <= a1 ? ATN_TRACE_CELL_ACCENT : 0;
        plan_set(p, 0, 1 + i, ATN_TRACE_CELL_HEADER, c < 0 ? g_strdup("…") : g_strdup_printf("%d", c));
        plan_set(p, 1, 1 + i, acc, c < 0 ? g_strdup("…") : fmt4(v[c]));
    }
}

static void plan_vector(AtnTracePlanStep *p, const char *name, const double *v, int k, int max, int a0, int a1) {
    g_autoptr(GArray) cs = cols_shown(k, max);
    plan_vector_cols(p, name, v, cs, a0, a1);
}

/* Token rows with extra columns filled by fill(). */
/* Fills the extra columns of token j's row r from column first_col; cols: the vector columns shown. */
typedef void (*row_fill_fn)(const atn_trace *t, int j, AtnTracePlanStep *p, int r, int first_col, GArray *cols);

static void fill_softmax(const atn_trace *t, int j, AtnTracePlanStep *p, int r, int c0, GArray *cs);

static void plan_token_table(AtnTracePlanStep *p, const atn_trace *t, const char *const *labels, GArray *rows,
                             const char *const *headers, int n_extra, row_fill_fn fill, GArray *cols) {
    plan_init(p, 1 + rows->len, 2 + n_extra);
    plan_set(p, 0, 0, ATN_TRACE_CELL_HEADER, g_strdup("j"));
    plan_set(p, 0, 1, ATN_TRACE_CELL_HEADER, g_strdup(_("token")));
    for (int c = 0; c < n_extra; c++)
        plan_set(p, 0, 2 + c, ATN_TRACE_CELL_HEADER, g_strdup(headers[c]));
    for (guint r = 0; r < rows->len; r++) {
        int j = g_array_index(rows, int, r);
        /* a cross head's query is a target token: no source row is the query's own */
        guint8 acc = j == t->query && t->stack != ATN_STACK_CROSS ? ATN_TRACE_CELL_ACCENT : 0;
        if (j < 0) {   /* keys first..end-1 left out: how many, and (softmax) their weight */
            int first = -1 - j, end = gap_end(t, rows, r);
            for (int c = 0; c < 2 + n_extra; c++)
                plan_set(p, 1 + r, c, 0, g_strdup("…"));
            plan_set(p, 1 + r, 1, 0, g_strdup_printf(ngettext("%d other", "%d others", end - first), end - first));
            if (fill == fill_softmax)
                plan_set(p, 1 + r, 1 + n_extra, ATN_TRACE_CELL_ACCENT,
                         g_strdup_printf("Σ %.4f", atn_trace_weight_sum(t, first, end)));
            continue;
        }
        plan_set(p, 1 + r, 0, ATN_TRACE_CELL_HEADER | acc, g_strdup_printf("%d", j));
        plan_set(p, 1 + r, 1, ATN_TRACE_CELL_HEADER | acc, g_strdup(token_of(t, labels, j)));
        fill(t, j, p, 1 + r, 2, cols);
    }
}

static void fill_matrix_row(const atn_trace *t, const double *m, int j, AtnTracePlanStep *p, int r, int c0, GArray *cs) {
    for (guint i = 0; i < cs->len; i++) {
        int c = g_array_index(cs, int, i);
        plan_set(p, r, c0 + i, 0, c < 0 ? g_strdup("…") : fmt4(m[(size_t)j * t->d_head + c]));
    }
}

static void fill_keys(const atn_trace *t, int j, AtnTracePlanStep *p, int r, int c0, GArray *cs) {
    fill_matrix_row(t, t->keys, j, p, r, c0, cs);
}

static void fill_values(const atn_trace *t, int j, AtnTracePlanStep *p, int r, int c0, GArray *cs) {
    fill_matrix_row(t, t->values, j, p, r, c0, cs);
}

static void fill_scores(const atn_trace *t, int j, AtnTracePlanStep *p, int r, int c0, GArray *cs) {
    int k = t->d_head;
    if (p->cols == c0 + 2) {
        GString *e = g_string_new(NULL);
        for (int c = 0; c < k; c++)
            g_string_append_printf(e, "%s%.4g×%.4g", c ? " + " : "", t->q[c], t->keys[(size_t)j * k + c]);
        plan_set(p, r, c0, 0, g_string_free(e, FALSE));
        plan_set(p, r, c0 + 1, 0, fmt4(t->scores[j]));
    } else {
        plan_set(p, r, c0, 0, fmt4(t->scores[j]));
    }
}

static void fill_scaled(const atn_trace *t, int j, AtnTracePlanStep *p, int r, int c0, GArray *cs) {
    plan_set(p, r, c0, 0, fmt4(t->scores[j]));
    plan_set(p, r, c0 + 1, 0, fmt4(t->scaled[j]));
    if (t->capped && p->cols > c0 + 2)   /* Gemma 2's soft-cap */
        plan_set(p, r, c0 + 2, 0, fmt4(t->capped[j]));
}

static gboolean has_bias(const atn_trace *t) {
    for (int j = 0; j < t->n; j++)
        if (t->bias_term[j] != 0)
            return TRUE;
    return FALSE;
}

static void fill_mask(const atn_trace *t, int j, AtnTracePlanStep *p, int r, int c0, GArray *cs) {
    plan_set(p, r, c0, 0, t->mask_term[j] != 0 ? g_strdup("−∞") : g_strdup("0"));
    int c = c0 + 1;
    if (p->cols > c0 + 2)   /* ALiBi's -m |i - j| */
        plan_set(p, r, c++, 0, fmt4(t->bias_term[j]));
    /* a masked key's score is finfo.min, about -3.4e38: shown as what it does, −∞; the score
       has every term the softmax reads (the soft-cap, DeBERTa's or T5's relative terms, ALiBi) */
    plan_set(p, r, c, 0, t->mask_term[j] != 0 ? g_strdup("−∞") : fmt4(atn_trace_plan_score(t, j)));
}

/* A rotary model's query: index, q before the rotation, each column's angle at the query's
 * position (pair (c, c + k/2) shares angle c), q after it. */
static void plan_rotation(AtnTracePlanStep *p, const atn_trace *t, int max, const char *qname) {
    int k = t->d_head, half = k / 2;
    g_autoptr(GArray) cs = cols_shown(k, max);
    plan_init(p, 4, 1 + cs->len);
    const char *names[] = {"", _("before RoPE"), _("angle (rad)"), qname};
    for (int r = 0; r < 4; r++)
        plan_set(p, r, 0, ATN_TRACE_CELL_HEADER, g_strdup(names[r]));
    for (guint i = 0; i < cs->len; i++) {
        int c = g_array_index(cs, int, i);
        plan_set(p, 0, 1 + i, ATN_TRACE_CELL_HEADER, c < 0 ? g_strdup("…") : g_strdup_printf("%d", c));
        plan_set(p, 1, 1 + i, 0, c < 0 ? g_strdup("…") : fmt4(t->q_unrotated[c]));
        plan_set(p, 2, 1 + i, 0, c < 0 ? g_strdup("…") : fmt4(t->angles[half > 0 ? c % half : 0]));
        plan_set(p, 3, 1 + i, ATN_TRACE_CELL_ACCENT, c < 0 ? g_strdup("…") : fmt4(t->q[c]));
    }
}

static void fill_softmax(const atn_trace *t, int j, AtnTracePlanStep *p, int r, int c0, GArray *cs) {
    gboolean masked = t->mask_term[j] != 0;
    plan_set(p, r, c0, 0, masked ? g_strdup("−∞") : fmt4(t->shifted[j]));
    plan_set(p, r, c0 + 1, 0, fmt4(t->exps[j]));
    plan_set(p, r, c0 + 2, ATN_TRACE_CELL_ACCENT, fmt4(t->weights[j]));
}

static double value_norm(const atn_trace *t, int j) {
    double ss = 0;
    for (int c = 0; c < t->d_head; c++)
        ss += t->values[(size_t)j * t->d_head + c] * t->values[(size_t)j * t->d_head + c];
    return sqrt(ss);
}

/* The weighted sum at any length: the top_k keys by contribution a_j·‖v_j‖ (every key for
 * top_k 0, the view's "show all"), largest first, with a_j, ‖v_j‖, the contribution, its share
 * of Σ_j a_j·‖v_j‖ and a_j v_j's columns cs; then one row for the keys left out ("m others":
 * their total weight, contribution, share and Σ a_j v_j, the exact rest of o) and o's row. */
static void plan_contributions(AtnTracePlanStep *p, const atn_trace *t, const char *const *labels, int top_k,
                               int max_cols, const char *oname) {
    int n = t->n, k = t->d_head;
    /* four columns fewer than the key table's, which has four fewer before its entries: as
       wide, so the table stays beside the side pane; at 4 or 5 (too few for "0 … k-1") none, so
       the step fits a 900 px window at text size 2 (test ui-narrow); nor ‖v_j‖ (a_j‖v_j‖ / a_j)
       then, so it fits beside the heatmap at 1280 px too */
    int want = CLAMP(max_cols, 4, MAX_COLS) - 4;
    g_autoptr(GArray) cs = want >= 2 || k <= want ? cols_shown(k, want) : g_array_new(FALSE, FALSE, sizeof(int));
    int *keys = g_new(int32_t, n);
    int m = atn_trace_top_contributions(t, top_k, keys);
    if (m < 0)
        m = 0;
    double total = atn_trace_contribution_total(t), rest_w = 0, rest_c = 0;
    double *rest = g_new0(double, k);
    gboolean *listed = g_new0(gboolean, n);
    for (int r = 0; r < m; r++)
        listed[keys[r]] = TRUE;
    for (int j = 0; j < n; j++) {
        if (listed[j])
            continue;
        rest_w += t->weights[j];
        rest_c += atn_trace_contribution(t, j);
        for (int c = 0; c < k; c++)
            rest[c] += t->weights[j] * t->values[(size_t)j * k + c];
    }
    gboolean vn = cs->len > 0;   /* the ‖v_j‖ column */
    int fixed = vn ? 6 : 5, rows = 1 + m + (m < n) + 1, cc4 = fixed - 2, cc5 = fixed - 1;
    plan_init(p, rows, fixed + cs->len);
    const char *hd[] = {"j", _("token"), _("a_j"), "‖v_j‖", "a_j‖v_j‖", _("share")};
    for (int c = 0, o = 0; c < 6; c++)
        if (c != 3 || vn)
            plan_set(p, 0, o++, ATN_TRACE_CELL_HEADER, g_strdup(hd[c]));
    for (guint c = 0; c < cs->len; c++) {   /* a_j v_j's entries */
        int cc = g_array_index(cs, int, c);
        plan_set(p, 0, fixed + c, ATN_TRACE_CELL_HEADER, cc < 0 ? g_strdup("…") : g_strdup_printf("%d", cc));
    }
    for (int r = 0; r < m; r++) {
        int j = keys[r];
        double cj = atn_trace_contribution(t, j);
        guint8 acc = j == t->query && t->stack != ATN_STACK_CROSS ? ATN_TRACE_CELL_ACCENT : 0;
        plan_set(p, 1 + r, 0, ATN_TRACE_CELL_HEADER | acc, g_strdup_printf("%d", j));
        plan_set(p, 1 + r, 1, ATN_TRACE_CELL_HEADER | acc, g_strdup(token_of(t, labels, j)));
        plan_set(p, 1 + r, 2, 0, fmt4(t->weights[j]));
        if (vn)
            plan_set(p, 1 + r, 3, 0, fmt4(value_norm(t, j)));
        plan_set(p, 1 + r, cc4, ATN_TRACE_CELL_ACCENT, fmt4(cj));
        plan_set(p, 1 + r, cc5, 0, g_strdup_printf("%.2f%%", total > 0 ? 100 * cj / total : 0.0));
        for (guint i = 0; i < cs->len; i++) {
            int c = g_array_index(cs, int, i);
            plan_set(p, 1 + r, fixed + i, 0, c < 0 ? g_strdup("…") : fmt4(t->weights[j] * t->values[(size_t)j * k + c]));
        }
    }
    int r = 1 + m;
    if (m < n) {   /* the others, summed */
        plan_set(p, r, 0, 0, g_strdup("…"));
        plan_set(p, r, 1, 0, g_strdup_printf(ngettext("%d other", "%d others", n - m), n - m));
        plan_set(p, r, 2, 0, g_strdup_printf("Σ %.4f", rest_w));
        if (vn)
            plan_set(p, r, 3, 0, g_strdup("…"));
        plan_set(p, r, cc4, ATN_TRACE_CELL_ACCENT, g_strdup_printf("Σ %.4f", rest_c));
        plan_set(p, r, cc5, 0, g_strdup_printf("%.2f%%", total > 0 ? 100 * rest_c / total : 0.0));
        for (guint i = 0; i < cs->len; i++) {
            int c = g_array_index(cs, int, i);
            plan_set(p, r, fixed + i, 0, c < 0 ? g_strdup("…") : g_strdup_printf("Σ %.4f", rest[c]));
        }
        r++;
    }
    plan_set(p, r, 0, ATN_TRACE_CELL_HEADER, g_strdup(oname));
    plan_set(p, r, 1, ATN_TRACE_CELL_HEADER, g_strdup(_("all keys")));
    plan_set(p, r, 2, 0, fmt4(atn_trace_weight_sum(t, 0, n)));
    plan_set(p, r, cc4, 0, fmt4(total));
    plan_set(p, r, cc5, 0, g_strdup(total > 0 ? "100%" : "0%"));
    for (guint i = 0; i < cs->len; i++) {
        int c = g_array_index(cs, int, i);
        plan_set(p, r, fixed + i, ATN_TRACE_CELL_ACCENT, c < 0 ? g_strdup("…") : fmt4(t->output[c]));
    }
    p->note = g_strdup_printf(
        _("The %d keys that contribute most to <i>o</i>, by <i>a</i><sub>j</sub>·‖<i>v</i><sub>j</sub>‖ (largest "
          "first); share: of Σ<sub>j</sub> <i>a</i><sub>j</sub>·‖<i>v</i><sub>j</sub>‖ = %.4f over all %d keys; "
          "the numbered columns are <i>a</i><sub>j</sub> <i>v</i><sub>j</sub>'s entries."),
        m, total, n);
    g_free(rest);
    g_free(listed);
    g_free(keys);
}

void atn_trace_plan_make(const atn_trace *t, int n_heads, AtnTracePlanStep plans[ATN_TRACE_STEP_COUNT]) {
    atn_trace_plan_make_cols(t, n_heads, MAX_COLS, plans);
}

void atn_trace_plan_make_cols(const atn_trace *t, int n_heads, int max_cols,
                              AtnTracePlanStep plans[ATN_TRACE_STEP_COUNT]) {
    atn_trace_plan_make_labelled(t, NULL, n_heads, max_cols, plans);
}

void atn_trace_plan_make_labelled(const atn_trace *t, const char *const *labels, int n_heads, int max_cols,
                                  AtnTracePlanStep plans[ATN_TRACE_STEP_COUNT]) {
    atn_trace_plan_make_stack(t, labels, NULL, n_heads, max_cols, plans);
}

void atn_trace_plan_make_stack(const atn_trace *t, const char *const *labels, const char *query_label, int n_heads,
                               int max_cols, AtnTracePlanStep plans[ATN_TRACE_STEP_COUNT]) {
    atn_trace_plan_make_top(t, labels, query_label, n_heads, max_cols, ATN_TRACE_TOP_DEFAULT, plans);
}

void atn_trace_plan_make_top(const atn_trace *t, const char *const *labels, const char *query_label, int n_heads,
                             int max_cols, int top_k, AtnTracePlanStep plans[ATN_TRACE_STEP_COUNT]) {
    gboolean cross = t->stack == ATN_STACK_CROSS;   /* queries from the decoder, keys and values from the encoder */
    int n = t->n, k = t->d_head, d = t->d_model, i = t->query, h = t->head;
    g_autoptr(GArray) rows = rows_shown(t, top_k);
    g_autoptr(GArray) kc = cols_shown(k, CLAMP(max_cols, 4, MAX_COLS));
    g_autoptr(GPtrArray) kh = g_ptr_array_new_with_free_func(g_free);
    for (guint c = 0; c < kc->len; c++) {
        int cc = g_array_index(kc, int, c);
        g_ptr_array_add(kh, cc < 0 ? g_strdup("…") : g_strdup_printf("%d", cc));
    }
    const char *qtok = query_label ? query_label : token_of(t, labels, i);

    AtnTracePlanStep *p = &plans[ATN_TRACE_STEP_QUERY];
    if (cross)
        p->formula = g_strdup_printf(_("<i>q</i><sub>%d</sub> = <i>y</i><sub>%d</sub> W<sub>Q</sub>: the decoder's "
                                       "hidden state of target token %d times the cross-attention's W<sub>Q</sub>, "
                                       "columns %d–%d (head %d)"), i, i, i, h * k, h * k + k - 1, h);
    else if (t->from_file)   /* an attention file: no x, no W_Q; its q as it is */
        p->formula = g_strdup_printf(_("<i>q</i><sub>%d</sub>: head %d's row of the file's q"), i, h);
    else if (t->q_unrotated && t->angles)   /* a rotary model: the rotation, and its angles */
        p->formula = g_strdup_printf(_("<i>q</i><sub>%d</sub> = RoPE(<i>x</i><sub>%d</sub> W<sub>Q</sub> + "
                                       "b<sub>Q</sub>), columns %d–%d (head %d): each pair of columns (c, c + %d) "
                                       "turned by the angle position × θ<sub>c</sub> of token %d's position"),
                                     i, i, h * k, h * k + k - 1, h, k / 2, i);
    else
        p->formula = g_strdup_printf(_("<i>q</i><sub>%d</sub> = <i>x</i><sub>%d</sub> W<sub>Q</sub> + b<sub>Q</sub>, "
                                       "columns %d–%d (head %d)"), i, i, h * k, h * k + k - 1, h);
    g_autofree char *qname = g_strdup_printf("q%d “%s”", i, qtok);
    if (!cross && !t->from_file && t->q_unrotated && t->angles) {
        plan_rotation(p, t, MAX_COLS, qname);
        p->note = t->qk_norm ? g_strdup(_("Before the rotation each head's q and k go through their own RMSNorm "
                                          "(q_norm, k_norm): “before” is after it. The keys below are turned by "
                                          "their own positions' angles."))
                             : g_strdup(_("The keys below are turned by their own positions' angles, so a score "
                                          "depends on how far apart the two tokens are."));
    } else
        plan_vector(p, qname, t->q, k, MAX_COLS, -1, -1);

    p = &plans[ATN_TRACE_STEP_KEYS];
    p->formula = cross ? g_strdup(_("<i>k</i><sub>j</sub> = <i>e</i><sub>j</sub> W<sub>K</sub>: the encoder's "
                                    "output for source token j times the cross-attention's W<sub>K</sub>, one key "
                                    "per source token"))
                 : t->from_file
                     ? g_strdup_printf(_("<i>k</i><sub>j</sub>: K/V head %d's rows of the file's k, one key per token"),
                                       t->kv_head)
                 : t->n_kv_heads > 0 && t->n_kv_heads < n_heads
                     /* grouped-query attention: the query head's group's K/V head */
                     ? g_strdup_printf(_("<i>k</i><sub>j</sub> = <i>x</i><sub>j</sub> W<sub>K</sub> + "
                                         "b<sub>K</sub>, K/V head %d's columns %d–%d, one key per token: heads "
                                         "%d–%d share these keys and the values"),
                                       t->kv_head, t->kv_head * k, t->kv_head * k + k - 1,
                                       t->kv_head * (n_heads / t->n_kv_heads),
                                       (t->kv_head + 1) * (n_heads / t->n_kv_heads) - 1)
                     : g_strdup(_("<i>k</i><sub>j</sub> = <i>x</i><sub>j</sub> W<sub>K</sub> + b<sub>K</sub>, one key per token"));
    plan_token_table(p, t, labels, rows, (const char *const *)kh->pdata, kc->len, fill_keys, kc);
    if (!cross && !t->from_file && t->q_unrotated)
        p->note = g_strdup(_("After the rotation: key j turned by the angles of its own position."));

    p = &plans[ATN_TRACE_STEP_SCORES];
    p->formula = g_strdup_printf(_("<i>s</i><sub>j</sub> = <i>q</i><sub>%d</sub> · <i>k</i><sub>j</sub>  "
                                   "(row %d of Q Kᵀ)"), i, i);
    if (k <= 4) {
        const char *hd[] = {_("q · k"), _("s_j")};
        plan_token_table(p, t, labels, rows, hd, 2, fill_scores, kc);
    } else {
        const char *hd[] = {_("s_j")};
        plan_token_table(p, t, labels, rows, hd, 1, fill_scores, kc);
    }

    p = &plans[ATN_TRACE_STEP_SCALE];
    gboolean own_scale = !t->c2p_term && !t->pos_bias && t->scale != 1.0 && fabs(t->scale * sqrt((double)k) - 1.0) > 1e-6;
    if (own_scale)   /* Gemma's query_pre_attn_scalar^-1/2 (GPT-2's scale switches) */
        p->formula = g_strdup_printf(_("<i>s</i><sub>j</sub> × %.4f: the model's own factor (Gemma: "
                                       "query_pre_attn_scalar<sup>−½</sup>), not 1/√<i>d</i><sub>k</sub> = %.4f"),
                                     t->scale, 1.0 / sqrt((double)k));
    else
        p->formula = g_strdup_printf(_("<i>s</i><sub>j</sub> / √<i>d</i><sub>k</sub> = <i>s</i><sub>j</sub> / √%d "
                                       "= <i>s</i><sub>j</sub> × %.4f"), k, t->scale);
    if (t->capped) {   /* Gemma 2: c tanh(s / c), before the mask */
        const char *hd[] = {_("s_j"), own_scale ? _("× factor") : _("s_j / √d_k"), _("soft-capped")};
        plan_token_table(p, t, labels, rows, hd, 3, fill_scaled, kc);
    } else {
        const char *hd[] = {_("s_j"), own_scale ? _("× factor") : _("s_j / √d_k")};
        plan_token_table(p, t, labels, rows, hd, 2, fill_scaled, kc);
    }
    if (t->capped)
        p->note = g_strdup_printf(_("Soft-cap: c · tanh(score / c) with c = %g (attn_logit_softcapping), before the "
                                    "mask: no score gets past ±%g."), t->softcap, t->softcap);
    if (t->c2p_term)   /* DeBERTa's disentangled attention */
        p->note = g_strdup_printf(_("DeBERTa: the score also gets the relative-position terms c2p + p2c, each "
                                    "scaled by 1/√(d_k·%d); the next step's scores include them (attnscope trace "
                                    "lists them)."), t->scale_factor);
    else if (cross && t->scale == 1.0)   /* T5's cross-attention: neither scaled nor biased */
        p->note = g_strdup(_("T5's cross-attention: the scores are not scaled (the factor is 1) and get no "
                             "position bias."));
    else if (t->pos_bias)   /* T5's relative position bias */
        p->note = g_strdup(_("T5: the scores are not scaled (the factor is 1), and each gets the head's relative "
                             "position bias for the bucket of its distance; the next step's scores include it "
                             "(attnscope trace lists each key's bucket and bias)."));

    p = &plans[ATN_TRACE_STEP_MASK];
    int masked = 0, future = 0, earlier = 0;
    int window = atn_trace_plan_mask_counts(t, &future, &masked, &earlier);
    if (earlier > 0 && t->stack == ATN_STACK_ENCODER) {
        /* keys before the query hidden too: a sliding window (Mistral, Qwen2, Gemma's sliding
           layers, the what-if lab's), or the what-if lab's other masks */
        g_autofree char *w = window > 0
            ? g_strdup_printf(ngettext("this layer's sliding window of %d token: the %d earlier key more than %d "
                                       "before the query is hidden",
                                       "this layer's sliding window of %d tokens: the %d earlier keys more than %d "
                                       "before the query are hidden", earlier),
                              window, earlier, window - 1)
            : g_strdup_printf(ngettext("%d key hidden by the run's mask", "%d keys hidden by the run's mask",
                                       earlier), earlier);
        p->formula = g_strdup(t->causal ? _("causal mask with a window: keys after the query, keys outside the "
                                            "window and padded keys get −∞ added (finfo.min), so their weight "
                                            "becomes 0")
                                        : _("keys the mask hides and padded keys get −∞ added, so their weight "
                                            "becomes 0"));
        g_autofree char *f = g_strdup_printf(ngettext("%d future key is masked", "%d future keys are masked", future),
                                             future);
        g_autofree char *pd = g_strdup_printf(ngettext("%d padded key.", "%d padded keys.", masked), masked);
        p->note = t->causal ? g_strdup_printf("%s; %s; %s", f, w, pd) : g_strdup_printf("%s; %s", w, pd);
    } else if (t->causal) {
        /* GPT-2: query i sees keys 0..i only; Hugging Face adds finfo.min, the most negative
           float, which the exponential turns into exactly 0 */
        p->formula = g_strdup(_("causal mask: keys after the query (the future) and padded keys get −∞ added "
                                "(finfo.min), so their weight becomes 0"));
        g_autofree char *f = g_strdup_printf(ngettext("%d future key is masked", "%d future keys are masked", future),
                                             future);
        g_autofree char *pd = g_strdup_printf(ngettext("%d padded key.", "%d padded keys.", masked), masked);
        p->note = g_strdup_printf("%s; %s", f, pd);
    } else {
        p->formula = g_strdup(_("padded keys get −∞ added, so their weight becomes 0"));
        p->note = masked ? g_strdup_printf(ngettext("%d padded key.", "%d padded keys.", masked), masked)
                         : g_strdup(_("No padded tokens: nothing is added."));
    }
    if (has_bias(t)) {   /* ALiBi (BLOOM's, or the what-if lab's): -m |i - j| added with the mask */
        const char *hd[] = {_("mask"), _("ALiBi"), _("score")};
        plan_token_table(p, t, labels, rows, hd, 3, fill_mask, kc);
        double m = t->n > 1 ? -t->bias_term[t->query > 0 ? t->query - 1 : 1] : 0.0;
        g_autofree char *al = g_strdup_printf(_("ALiBi adds −m·|i − j| to every score, m = %.6g for head %d."), m,
                                              t->head);
        g_autofree char *was = p->note;
        p->note = was ? g_strdup_printf("%s %s", was, al) : g_strdup(al);
    } else {
        const char *hd[] = {_("mask"), _("score")};
        plan_token_table(p, t, labels, rows, hd, 2, fill_mask, kc);
    }

    p = &plans[ATN_TRACE_STEP_SOFTMAX];
    p->formula = g_strdup(_("<i>a</i><sub>j</sub> = exp(<i>s</i><sub>j</sub> − <i>m</i>) / Σ exp(<i>s</i> − <i>m</i>), "
                            "<i>m</i> = the largest score"));
    p->note = g_strdup_printf(_("<i>m</i> = %.4f, Σ exp = %.4f; the weights add up to 1."), t->max, t->sum);
    int listed = 0;
    double others = 0;
    for (guint r = 0; r < rows->len; r++) {
        int j = g_array_index(rows, int, r);
        if (j >= 0)
            listed++;
        else
            others += atn_trace_weight_sum(t, -1 - j, gap_end(t, rows, r));
    }
    if (listed < n) {   /* the listing is shortened; m and Σ exp are over every key */
        g_autofree char *more = g_strdup_printf(
            _("Listed: %d of %d keys (the %d with the largest weights, the first and last %d, the query and the "
              "largest score); the %d others have total weight %.4f. <i>m</i>, Σ exp and the output are over all "
              "%d keys."),
            listed, n, top_k, ATN_TRACE_EDGE_DEFAULT, n - listed, others, n);
        char *both = g_strconcat(p->note, " ", more, NULL);
        g_free(p->note);
        p->note = both;
    }
    {
        const char *hd[] = {_("s_j − m"), _("exp"), _("a_j")};
        plan_token_table(p, t, labels, rows, hd, 3, fill_softmax, kc);
    }

    p = &plans[ATN_TRACE_STEP_VALUES];
    p->formula = cross ? g_strdup(_("<i>v</i><sub>j</sub> = <i>e</i><sub>j</sub> W<sub>V</sub>: the encoder's "
                                    "output for source token j times the cross-attention's W<sub>V</sub>, one value "
                                    "per source token"))
                 : t->from_file
                     ? g_strdup_printf(_("<i>v</i><sub>j</sub>: K/V head %d's rows of the file's v, one value per token"),
                                       t->kv_head)
                     : g_strdup(_("<i>v</i><sub>j</sub> = <i>x</i><sub>j</sub> W<sub>V</sub> + b<sub>V</sub>, one value per token"));
    plan_token_table(p, t, labels, rows, (const char *const *)kh->pdata, kc->len, fill_values, kc);

    p = &plans[ATN_TRACE_STEP_OUTPUT];
    p->formula = g_strdup_printf(_("<i>o</i><sub>%d</sub> = Σ<sub>j</sub> <i>a</i><sub>j</sub> <i>v</i><sub>j</sub>"), i);
    g_autofree char *oname = g_strdup_printf("o%d", i);
    if (n > MAX_ROWS)   /* a long trace: the keys that contribute most, then o */
        plan_contributions(p, t, labels, top_k, max_cols, oname);
    else
        plan_vector(p, oname, t->output, k, MAX_COLS, -1, -1);
    if (n <= 8) {
        GString *e = g_string_new(NULL);
        g_string_append_printf(e, "<i>o</i><sub>%d</sub>[0] =", i);
        for (int j = 0; j < n; j++)
            g_string_append_printf(e, "%s %.4f × %.4g", j ? " +" : "", t->weights[j], t->values[(size_t)j * k]);
        g_string_append_printf(e, " = %.4f", t->output[0]);
        p->note = g_string_free(e, FALSE);
    }

    p = &plans[ATN_TRACE_STEP_CONCAT];
    p->formula = g_strdup_printf(_("every head's output for token %d side by side; head %d fills columns %d–%d"), i, h,
                                 h * k, h * k + k - 1);
    /* the same columns in both wide steps, so they line up (a concat wider or narrower than
       d_model, Qwen3's heads, gets its own) */
    int dc = t->d_concat > 0 ? t->d_concat : d;
    g_autoptr(GArray) wide = cols_around(d, MAX_WIDE_COLS, h * k, h * k + k - 1);
    g_autoptr(GArray) wide_c = dc == d ? NULL : cols_around(dc, MAX_WIDE_COLS, h * k, h * k + k - 1);
    plan_vector_cols(p, _("concat"), t->concat, wide_c ? wide_c : wide, h * k, h * k + k - 1);
    (void)n_heads;

    p = &plans[ATN_TRACE_STEP_PROJECT];
    if (!t->projected) {   /* an attention file: W_O is not in it */
        p->formula = g_strdup(_("concat W<sub>O</sub> + b<sub>O</sub> needs the model's W<sub>O</sub>, which an "
                                "attention file does not hold"));
        g_autoptr(GArray) none = g_array_new(FALSE, FALSE, sizeof(int));
        plan_vector_cols(p, "—", NULL, none, -1, -1);
        return;
    }
    p->formula = g_strdup(_("concat W<sub>O</sub> + b<sub>O</sub>: the attention layer's output for this token"));
    plan_vector_cols(p, _("output"), t->projected, wide, -1, -1);
}

