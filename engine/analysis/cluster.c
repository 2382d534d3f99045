/* Agglomerative clustering with average linkage (UPGMA) and its dendrogram leaf order, used
 * to put similar heads next to each other.  O(count^3) with a plain distance matrix: at
 * bert-large's 384 heads that is ~0.1 s worst case, at bert-base's 144 a few ms. */
#include "analysis.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

atn_status atn_cluster_average_linkage(const double *dist, int32_t count, int32_t *order, int32_t *merge_a,
                                       int32_t *merge_b, double *merge_height, atn_error *err) {
    if (count <= 0 || !dist || !order)
        return atn_error_set(err, ATN_E_INVALID, "clustering: bad arguments (count %d)", count);
    if (count == 1) {
        order[0] = 0;
        return ATN_OK;
    }
    size_t cc = (size_t)count * count;
    double *d = malloc(cc * sizeof *d);
    int32_t *size = malloc((size_t)count * sizeof *size);
    int32_t *id = malloc((size_t)count * sizeof *id);           /* cluster id held by each slot */
    bool *active = malloc((size_t)count * sizeof *active);
    int32_t *left = malloc((size_t)(count - 1) * sizeof *left);  /* the merges, scipy's convention */
    int32_t *right = malloc((size_t)(count - 1) * sizeof *right);
    int32_t *stack = malloc((size_t)(2 * count) * sizeof *stack);
    if (!d || !size || !id || !active || !left || !right || !stack) {
        free(d), free(size), free(id), free(active), free(left), free(right), free(stack);
        return atn_error_set(err, ATN_E_NOMEM, "clustering: out of memory for %d items", count);
    }
    /* symmetric, and a NaN distance counts as "very far" so it merges last */
    for (int32_t i = 0; i < count; i++)
        for (int32_t j = 0; j < count; j++) {
            double a = dist[(size_t)i * count + j], b = dist[(size_t)j * count + i];
            double v = 0.5 * ((isfinite(a) ? a : 1e300) + (isfinite(b) ? b : 1e300));
            d[(size_t)i * count + j] = i == j ? 0.0 : v;
        }
    for (int32_t i = 0; i < count; i++) {
        size[i] = 1;
        id[i] = i;
        active[i] = true;
    }
    for (int32_t m = 0; m < count - 1; m++) {
        int32_t bi = -1, bj = -1;
        double best = INFINITY;
        for (int32_t i = 0; i < count; i++) {
            if (!active[i])
                continue;
            const double *row = d + (size_t)i * count;
            for (int32_t j = i + 1; j < count; j++)
                if (active[j] && row[j] < best) { /* strict: the first (smallest) pair wins ties */
                    best = row[j];
                    bi = i;
                    bj = j;
                }
        }
        if (bi < 0) { /* all remaining distances infinite: merge the first two active */
            for (int32_t i = 0; i < count && bj < 0; i++)
                if (active[i]) {
                    if (bi < 0)
                        bi = i;
                    else
                        bj = i;
                }
            best = d[(size_t)bi * count + bj];
        }
        int32_t a = id[bi], b = id[bj];
        left[m] = a < b ? a : b;
        right[m] = a < b ? b : a;
        if (merge_a)
            merge_a[m] = left[m];
        if (merge_b)
            merge_b[m] = right[m];
        if (merge_height)
            merge_height[m] = best >= 1e299 ? INFINITY : best;
        double si = size[bi], sj = size[bj];
        for (int32_t k = 0; k < count; k++) {
            if (!active[k] || k == bi || k == bj)
                continue;
            double v = (si * d[(size_t)bi * count + k] + sj * d[(size_t)bj * count + k]) / (si + sj);
            d[(size_t)bi * count + k] = d[(size_t)k * count + bi] = v;
        }
        size[bi] += size[bj];
        id[bi] = count + m;
        active[bj] = false;
    }
    /* leaf order: depth-first from the root, left child first */
    int32_t sp = 0, n_out = 0;
    stack[sp++] = 2 * count - 2;
    while (sp > 0) {
        int32_t node = stack[--sp];
        if (node < count) {
            order[n_out++] = node;
        } else {
            int32_t m = node - count;
            stack[sp++] = right[m]; /* pushed first, popped after the left subtree */
            stack[sp++] = left[m];
        }
    }
    free(d), free(size), free(id), free(active), free(left), free(right), free(stack);
    return ATN_OK;
}
