/* Which keys a long trace lists: top-k by weight, the first and last keys, the query and the
 * largest score (trace-keys.h). */
#include "trace-keys.h"

#include <math.h>
#include <stdlib.h>

int32_t atn_trace_key_rows(const atn_trace *t, int32_t top_k, int32_t edge, int32_t *rows) {
    if (!t || !rows || t->n <= 0)
        return 0;
    int32_t n = t->n;
    if (edge < 0)
        edge = 0;
    /* all keys: asked for, or at most one key would be left out (a "… 1 other" line is as
       long as the key itself) */
    if (top_k <= 0 || (int64_t)top_k + 2 * (int64_t)edge + 2 >= n - 1) {
        for (int32_t j = 0; j < n; j++)
            rows[j] = j;
        return n;
    }
    /* rows as the marks first (1: listed), then compacted in place (the m-th listed key has
       an index >= m, so the write never overtakes the read) */
    for (int32_t j = 0; j < n; j++)
        rows[j] = j < edge || j >= n - edge;
    if (t->stack != ATN_STACK_CROSS && t->query >= 0 && t->query < n)
        rows[t->query] = 1;
    int32_t best = 0;   /* the largest score the softmax saw */
    for (int32_t j = 1; j < n; j++)
        if (t->shifted[j] > t->shifted[best])
            best = j;
    rows[best] = 1;
    /* top_k by weight: k passes, each taking the largest weight not yet taken by this
       selection (a mark of 2), ties to the lower index; O(n k), k small */
    for (int32_t r = 0; r < top_k; r++) {
        int32_t pick = -1;
        for (int32_t j = 0; j < n; j++)
            if (rows[j] != 2 && (pick < 0 || t->weights[j] > t->weights[pick]))
                pick = j;
        if (pick < 0)
            break;
        rows[pick] = 2;
    }
    int32_t m = 0;
    for (int32_t j = 0; j < n; j++)
        if (rows[j])
            rows[m++] = j;
    return m;
}

double atn_trace_weight_sum(const atn_trace *t, int32_t from, int32_t to) {
    if (!t || !t->weights)
        return 0.0;
    if (from < 0)
        from = 0;
    if (to > t->n)
        to = t->n;
    double s = 0.0;
    for (int32_t j = from; j < to; j++)
        s += t->weights[j];
    return s;
}

double atn_trace_contribution(const atn_trace *t, int32_t j) {
    if (!t || !t->weights || !t->values || j < 0 || j >= t->n)
        return 0.0;
    const double *v = t->values + (size_t)j * t->d_head;
    double ss = 0.0;
    for (int32_t c = 0; c < t->d_head; c++)
        ss += v[c] * v[c];
    return t->weights[j] * sqrt(ss);
}

double atn_trace_contribution_total(const atn_trace *t) {
    double s = 0.0;
    for (int32_t j = 0; t && j < t->n; j++)
        s += atn_trace_contribution(t, j);
    return s;
}

typedef struct contrib_pair {
    double c;
    int32_t j;
} contrib_pair;

static int by_contribution(const void *a, const void *b) {
    const contrib_pair *x = a, *y = b;
    if (x->c != y->c)
        return x->c > y->c ? -1 : 1;
    return (x->j > y->j) - (x->j < y->j);
}

int32_t atn_trace_top_contributions(const atn_trace *t, int32_t top_k, int32_t *rows) {
    if (!t || !rows || t->n <= 0)
        return 0;
    int32_t n = t->n, m = top_k <= 0 || top_k > n ? n : top_k;
    contrib_pair *p = malloc((size_t)n * sizeof *p);
    if (!p)
        return -1;
    for (int32_t j = 0; j < n; j++)
        p[j] = (contrib_pair){atn_trace_contribution(t, j), j};
    qsort(p, (size_t)n, sizeof *p, by_contribution);
    for (int32_t r = 0; r < m; r++)
        rows[r] = p[r].j;
    free(p);
    return m;
}
