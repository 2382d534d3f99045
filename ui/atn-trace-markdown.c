/* The trace as Markdown with LaTeX maths. */
#include "atn-trace-markdown.h"

#include <glib/gi18n.h>
#include <math.h>

#include "atn-trace-plan.h"
#include "trace-keys.h"

/* Markdown table cells must not contain '|' or newlines; tokens like "##ing" are fine. */
static char *cell_text(const char *s) {
    GString *g = g_string_new(NULL);
    for (const char *p = s; *p; p++) {
        if (*p == '|')
            g_string_append(g, "\\|");
        else if (*p == '\n')
            g_string_append_c(g, ' ');
        else
            g_string_append_c(g, *p);
    }
    return g_string_free(g, FALSE);
}

static void num(GString *g, double v) {
    if (isinf(v))
        g_string_append(g, v < 0 ? "$-\\infty$" : "$\\infty$");
    else if (isnan(v))
        g_string_append(g, "NaN");
    else
        g_string_append_printf(g, "%.4f", v);
}

/* Rows to show: all, or the first and last few plus the query; -1 marks an ellipsis. */
static GArray *rows_shown(int n, int query, int max_rows) {
    GArray *a = g_array_new(FALSE, FALSE, sizeof(int));
    if (max_rows <= 0 || n <= max_rows) {
        for (int j = 0; j < n; j++)
            g_array_append_val(a, j);
        return a;
    }
    int head = max_rows / 2, tail = max_rows - head - 1, ell = -1;
    for (int j = 0; j < n; j++) {
        gboolean show = j < head || j >= n - tail || j == query;
        if (show)
            g_array_append_val(a, j);
        else if (a->len == 0 || g_array_index(a, int, a->len - 1) != -1)
            g_array_append_val(a, ell);
    }
    return a;
}

/* The rows the Trace view lists (atn_trace_plan_make_top): above 16 keys the keys
 * atn_trace_key_rows picks, each run left out one row, -1 - (its first key); top_k 0: all. */
static GArray *rows_top(const atn_trace *t, int top_k) {
    int n = t->n;
    if (n <= 16 || top_k <= 0)
        return rows_shown(n, t->query, 0);
    GArray *a = g_array_new(FALSE, FALSE, sizeof(int));
    int32_t *keys = g_new(int32_t, n);
    int m = atn_trace_key_rows(t, top_k, ATN_TRACE_EDGE_DEFAULT, keys);
    for (int r = 0; r <= m; r++) {
        int first = r > 0 ? keys[r - 1] + 1 : 0, end = r < m ? keys[r] : n;
        if (end > first) {
            int gap = -1 - first;
            g_array_append_val(a, gap);
        }
        if (r < m)
            g_array_append_val(a, keys[r]);
    }
    g_free(keys);
    return a;
}

/* A run of left-out keys (rows entry r, -1 - first): its first key and its end (the next
 * listed key, or n); the old first/last elision (-1 alone) has first 0 and end 0. */
static void gap_of(const atn_trace *t, GArray *rows, guint r, gboolean top, int *first, int *end) {
    *first = *end = 0;
    if (!top)
        return;
    *first = -1 - g_array_index(rows, int, r);
    *end = r + 1 < rows->len ? g_array_index(rows, int, r + 1) : t->n;
}

static void vec_table(GString *g, const char *name, const double *v, int k) {
    g_string_append(g, "| |");
    for (int c = 0; c < k; c++)
        g_string_append_printf(g, " %d |", c);
    g_string_append(g, "\n|---|");
    for (int c = 0; c < k; c++)
        g_string_append(g, "---:|");
    g_string_append_printf(g, "\n| %s |", name);
    for (int c = 0; c < k; c++) {
        g_string_append_c(g, ' ');
        num(g, v[c]);
        g_string_append(g, " |");
    }
    g_string_append(g, "\n\n");
}

/* Token j as the trace names it: its label when there are labels, else the encoding's text. */
static const char *token_of(const atn_trace *t, const char *const *labels, int j) {
    return labels && labels[j] ? labels[j] : t->enc->tokens[j].text;
}

static void token_matrix(GString *g, const atn_trace *t, const char *const *labels, GArray *rows, gboolean top,
                         const char *sym, const double *m, int k) {
    g_string_append(g, "| $j$ | token |");
    for (int c = 0; c < k; c++)
        g_string_append_printf(g, " $%s_{j,%d}$ |", sym, c);
    g_string_append(g, "\n|---:|---|");
    for (int c = 0; c < k; c++)
        g_string_append(g, "---:|");
    g_string_append_c(g, '\n');
    for (guint r = 0; r < rows->len; r++) {
        int j = g_array_index(rows, int, r);
        if (j < 0) {
            int first, end;
            gap_of(t, rows, r, top, &first, &end);
            if (end > first) {
                g_autofree char *others = g_strdup_printf(ngettext("%d other", "%d others", end - first), end - first);
                g_string_append_printf(g, "| … | *%s* |", others);
            } else
                g_string_append(g, "| … | … |");
            for (int c = 0; c < k; c++)
                g_string_append(g, " … |");
            g_string_append_c(g, '\n');
            continue;
        }
        g_autofree char *tok = cell_text(token_of(t, labels, j));
        g_string_append_printf(g, "| %d | %s |", j, tok);
        for (int c = 0; c < k; c++) {
            g_string_append_c(g, ' ');
            num(g, m[(size_t)j * k + c]);
            g_string_append(g, " |");
        }
        g_string_append_c(g, '\n');
    }
    g_string_append_c(g, '\n');
}

static char *markdown(const atn_trace *t, const char *const *labels, const char *query_label, const char *model_name,
                      int n_heads, GArray *rows_owned, gboolean top);

char *atn_trace_to_markdown(const atn_trace *t, const char *const *labels, const char *model_name, int n_heads,
                            int max_rows) {
    return atn_trace_to_markdown_stack(t, labels, NULL, model_name, n_heads, max_rows);
}

char *atn_trace_to_markdown_stack(const atn_trace *t, const char *const *labels, const char *query_label,
                                  const char *model_name, int n_heads, int max_rows) {
    return markdown(t, labels, query_label, model_name, n_heads, rows_shown(t->n, t->query, max_rows), FALSE);
}

char *atn_trace_to_markdown_top(const atn_trace *t, const char *const *labels, const char *query_label,
                                const char *model_name, int n_heads, int top_k) {
    return markdown(t, labels, query_label, model_name, n_heads, rows_top(t, top_k), TRUE);
}

static char *markdown(const atn_trace *t, const char *const *labels, const char *query_label, const char *model_name,
                      int n_heads, GArray *rows_owned, gboolean top) {
    g_autoptr(GArray) rows = rows_owned;
    GString *g = g_string_new(NULL);
    int n = t->n, k = t->d_head, d = t->d_model, i = t->query;
    gboolean cross = t->stack == ATN_STACK_CROSS;
    g_autofree char *qtok = cell_text(query_label ? query_label : token_of(t, labels, i));
    g_string_append_printf(g, "# %s\n\n", _("Attention, worked out"));
    gboolean grouped = t->n_kv_heads > 0 && t->n_kv_heads < n_heads;
    if (grouped || n_heads * k != d)   /* grouped-query attention, or Qwen3's head_dim */
        g_string_append_printf(g, _("Model **%s**, layer %d, head %d of %d, query token %d “%s”. "
                                    "$d_{model} = %d$; each head works in $d_k = %d$ dimensions (columns %d to %d "
                                    "of $Q$; its K/V head %d of %d: columns %d to %d of $K$ and $V$)."),
                               model_name ? model_name : "?", t->layer, t->head, n_heads, i, qtok, d, k, t->head * k,
                               t->head * k + k - 1, t->kv_head, grouped ? t->n_kv_heads : n_heads, t->kv_head * k,
                               t->kv_head * k + k - 1);
    else
        g_string_append_printf(g, _("Model **%s**, layer %d, head %d of %d, query token %d “%s”. "
                                    "$d_{model} = %d$, so each head works in $d_k = %d / %d = %d$ dimensions "
                                    "(columns %d to %d of $Q$, $K$, $V$)."),
                               model_name ? model_name : "?", t->layer, t->head, n_heads, i, qtok, d, d, n_heads, k,
                               t->head * k, t->head * k + k - 1);
    if (t->stack == ATN_STACK_DECODER)
        g_string_append_printf(g, " %s", _("A head of the decoder's self-attention: the layer is the decoder's, the "
                                           "query and the keys are target tokens, and it is causal."));
    else if (cross)
        g_string_append_printf(g, " %s", _("A head of the cross-attention: the layer is the decoder's, the query "
                                           "comes from the decoder (a target token), the keys and values from the "
                                           "encoder's output (the source tokens)."));
    g_string_append(g, "\n\n");

    g_string_append_printf(g, cross ? "## 1. %s\n\n$$\\mathbf{q}_{%d} = \\mathbf{y}_{%d} W_Q$$ "
                                      "($\\mathbf{y}$: the decoder's hidden states)\n\n"
                                    : "## 1. %s\n\n$$\\mathbf{q}_{%d} = \\mathbf{x}_{%d} W_Q + \\mathbf{b}_Q$$\n\n",
                           _("The query"), i, i);
    g_autofree char *qname = g_strdup_printf("$\\mathbf{q}_{%d}$", i);
    gboolean rotary = !cross && !t->from_file && t->q_unrotated && t->angles;
    if (rotary) {   /* RoPE: q and k turned pair by pair by their positions' angles */
        g_string_append_printf(g, _("Rotary positions: each pair of columns $(c, c + %d)$ of $\\mathbf{q}_{%d}$ is "
                                    "turned by the angle $p\\,\\theta_c$ of token %d's position $p$ (the keys by "
                                    "their own positions')%s."),
                               k / 2, i, i, t->qk_norm ? _(", after each head's RMSNorm (q_norm, k_norm)") : "");
        g_string_append(g, "\n\n| |");
        for (int c = 0; c < k; c++)
            g_string_append_printf(g, " %d |", c);
        g_string_append(g, "\n|---|");
        for (int c = 0; c < k; c++)
            g_string_append(g, "---:|");
        const char *names[] = {_("before RoPE"), _("angle (rad)")};
        for (int r = 0; r < 3; r++) {
            g_string_append_printf(g, "\n| %s |", r < 2 ? names[r] : qname);
            for (int c = 0; c < k; c++) {
                g_string_append_c(g, ' ');
                num(g, r == 0 ? t->q_unrotated[c] : r == 1 ? t->angles[c % (k / 2 > 0 ? k / 2 : 1)] : t->q[c]);
                g_string_append(g, " |");
            }
        }
        g_string_append(g, "\n\n");
    } else
        vec_table(g, qname, t->q, k);

    g_string_append_printf(g, cross ? "## 2. %s\n\n$$\\mathbf{k}_j = \\mathbf{e}_j W_K$$ "
                                      "($\\mathbf{e}$: the encoder's output)\n\n"
                                    : "## 2. %s\n\n$$\\mathbf{k}_j = \\mathbf{x}_j W_K + \\mathbf{b}_K$$\n\n",
                           _("The keys"));
    token_matrix(g, t, labels, rows, top, "k", t->keys, k);

    g_string_append_printf(g, "## 3. %s\n\n$$s_j = \\mathbf{q}_{%d} \\cdot \\mathbf{k}_j = \\sum_{c} q_{%d,c}\\, k_{j,c}$$\n\n",
                           _("Dot products"), i, i);
    if (!t->c2p_term && !t->pos_bias && t->scale != 1.0 && fabs(t->scale * sqrt((double)k) - 1.0) > 1e-6)
        g_string_append_printf(g, "## 4. %s\n\n$$\\tilde{s}_j = %.4f\\, s_j$$\n\n%s\n\n", _("Scaling"), t->scale,
                               _("The model's own factor (Gemma: query_pre_attn_scalar$^{-1/2}$), not "
                                 "$1/\\sqrt{d_k}$."));
    else
        g_string_append_printf(g, "## 4. %s\n\n$$\\tilde{s}_j = \\frac{s_j}{\\sqrt{d_k}} = \\frac{s_j}{\\sqrt{%d}} = %.4f\\, s_j$$\n\n",
                               _("Scaling"), k, t->scale);
    if (t->capped)   /* Gemma 2's soft-cap, before the mask */
        g_string_append_printf(g, _("Soft-cap before the mask: $\\tilde{s}_j \\leftarrow c \\tanh(\\tilde{s}_j / c)$ "
                                    "with $c = %g$ (attn_logit_softcapping).\n\n"), t->softcap);
    if (t->pos_bias)   /* T5: unscaled, plus the head's relative position bias */
        g_string_append_printf(g, "%s\n\n", _("T5: the factor is 1, and each score gets the head's relative "
                                              "position bias for the bucket of its distance (included in "
                                              "$\\tilde{s}_j$ below)."));
    int masked = 0, padded = 0, earlier = 0;
    for (int j = 0; j < n; j++)
        masked += t->mask_term[j] != 0;
    int window = atn_trace_plan_mask_counts(t, NULL, &padded, &earlier);
    g_string_append_printf(g, "## 5. %s\n\n", _("Mask"));
    if (t->stack == ATN_STACK_ENCODER && earlier > 0 && window > 0)
        g_string_append_printf(g, _("Sliding window of %d tokens (and causal): the %d keys after token %d, the %d "
                                    "keys more than %d before it and any padded keys get $-\\infty$ added "
                                    "(finfo.min), so their weight becomes 0 (%d keys in all)."),
                               window, t->causal ? n - 1 - i : 0, i, earlier, window - 1, masked);
    else if (t->stack == ATN_STACK_ENCODER && earlier > 0)
        g_string_append_printf(g, _("The run's mask hides %d keys (and the future and padded ones): they get "
                                    "$-\\infty$ added, so their weight becomes 0 (%d keys in all)."), earlier, masked);
    else if (t->causal)
        g_string_append_printf(g, _("Causal mask: the %d keys after token %d (the future) and any padded keys get "
                                    "$-\\infty$ added (finfo.min), so their weight becomes 0 (%d keys in all)."),
                               n - 1 - i, i, masked);
    else if (masked)
        g_string_append_printf(g, _("Padded keys get $-\\infty$ added, so their weight becomes 0 (%d keys)."),
                               masked);
    else
        g_string_append(g, _("No padded tokens: nothing is added."));
    g_string_append(g, "\n\n");
    double slope = n > 1 ? -t->bias_term[i > 0 ? i - 1 : 1] : 0.0;
    if (slope != 0.0)   /* ALiBi: BLOOM's, or the what-if lab's */
        g_string_append_printf(g, _("ALiBi adds $-m\\,|%d - j|$ to every score, $m = %.6g$ (included in "
                                    "$\\tilde{s}_j$ below).\n\n"), i, slope);
    g_string_append_printf(g, "## 6. %s\n\n$$a_j = \\frac{\\exp(\\tilde{s}_j - m)}{\\sum_{j'} \\exp(\\tilde{s}_{j'} - m)},"
                              "\\quad m = \\max_j \\tilde{s}_j = %.4f$$\n\n",
                           _("Softmax"), t->max);
    g_string_append(g, "| $j$ | token | $s_j$ | $\\tilde{s}_j$ | $\\exp(\\tilde{s}_j - m)$ | $a_j$ |\n"
                       "|---:|---|---:|---:|---:|---:|\n");
    for (guint r = 0; r < rows->len; r++) {
        int j = g_array_index(rows, int, r);
        if (j < 0) {   /* a run of keys left out: how many, and their total weight */
            int first, end;
            gap_of(t, rows, r, top, &first, &end);
            if (end > first) {
                g_autofree char *others = g_strdup_printf(ngettext("%d other", "%d others", end - first), end - first);
                g_string_append_printf(g, "| … | *%s* | … | … | … | Σ %.4f |\n", others,
                                       atn_trace_weight_sum(t, first, end));
            } else {
                g_string_append(g, "| … | … | … | … | … | … |\n");
            }
            continue;
        }
        g_autofree char *tok = cell_text(token_of(t, labels, j));
        g_string_append_printf(g, "| %d | %s | ", j, tok);
        num(g, t->scores[j]);
        g_string_append(g, " | ");
        num(g, atn_trace_plan_score(t, j));
        g_string_append(g, " | ");
        num(g, t->exps[j]);
        g_string_append(g, " | ");
        num(g, t->weights[j]);
        g_string_append(g, " |\n");
    }
    g_string_append_printf(g, "\n$$\\sum_j \\exp(\\tilde{s}_j - m) = %.4f$$\n\n", t->sum);

    g_string_append_printf(g, cross ? "## 7. %s\n\n$$\\mathbf{v}_j = \\mathbf{e}_j W_V$$\n\n"
                                    : "## 7. %s\n\n$$\\mathbf{v}_j = \\mathbf{x}_j W_V + \\mathbf{b}_V$$\n\n",
                           _("The values"));
    token_matrix(g, t, labels, rows, top, "v", t->values, k);

    g_string_append_printf(g, "## 8. %s\n\n$$\\mathbf{o}_{%d} = \\sum_j a_j\\, \\mathbf{v}_j$$\n\n",
                           _("Weighted sum of the values"), i);
    g_autofree char *oname = g_strdup_printf("$\\mathbf{o}_{%d}$", i);
    vec_table(g, oname, t->output, k);

    g_string_append_printf(g, "## 9. %s\n\n$$\\mathrm{concat}(\\mathbf{o}^{(0)}_{%d}, \\dots, \\mathbf{o}^{(%d)}_{%d})$$\n\n",
                           _("Concatenate the heads"), i, n_heads - 1, i);
    vec_table(g, _("concat"), t->concat, t->d_concat > 0 ? t->d_concat : d);
    g_string_append_printf(g, "## 10. %s\n\n$$\\mathrm{concat}\\; W_O + \\mathbf{b}_O$$\n\n", _("Output projection"));
    if (t->projected)
        vec_table(g, _("output"), t->projected, d);
    else   /* an attention file */
        g_string_append_printf(g, "%s\n\n", _("It needs the model's W_O, which an attention file does not hold."));
    g_string_append_printf(g, t->from_file ? _("*Check: these weights differ from the file's attention by at most %.2g.*\n")
                                           : _("*Check: these weights differ from the model's own attention by at most %.2g.*\n"),
                           (double)t->max_abs_diff);
    return g_string_free(g, FALSE);
}
