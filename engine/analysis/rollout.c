/* Attention rollout (Abnar & Zuidema 2020, "Quantifying Attention Flow in Transformers"):
 * the residual connection is modelled by mixing each layer's head-averaged attention with
 * the identity, A' = 0.5 A + 0.5 I (rows renormalised), and the layers are chained by
 * matrix products, R = A'_last ... A'_1 A'_0.  Double precision, one dgemm per layer. */
#include "analysis.h"
#include "rollout-private.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

atn_status atn_rollout_layer_matrix(const atn_capture *cap, int32_t l, double *a, float *scratch, atn_error *err) {
    int32_t n = cap->n, H = cap->layer_heads ? cap->layer_heads[l] : cap->n_heads;   /* the heads layer l has */
    size_t nn = (size_t)n * n;
    memset(a, 0, nn * sizeof *a);
    for (int32_t h = 0; h < H; h++) {
        const float *ah = atn_capture_head_read(cap, l, h, scratch, err);
        if (!ah)
            return err ? err->status : ATN_E_INVALID;
        for (size_t i = 0; i < nn; i++) {
            double v = ah[i];
            a[i] += isfinite(v) ? v : 0.0;
        }
    }
    for (int32_t i = 0; i < n; i++) {
        double *row = a + (size_t)i * n, sum = 0;
        for (int32_t j = 0; j < n; j++) {
            row[j] = 0.5 * row[j] / H + (i == j ? 0.5 : 0.0);
            sum += row[j];
        }
        for (int32_t j = 0; j < n; j++)
            row[j] /= sum; /* sum >= 0.5: the identity part */
    }
    return ATN_OK;
}

atn_status atn_rollout_compute(const atn_capture *cap, int32_t last_layer, float *out, atn_error *err) {
    if (!cap || !out)
        return atn_error_set(err, ATN_E_INVALID, "rollout: no capture or output");
    if (!atn_capture_has_heads(cap))
        return atn_error_set(err, ATN_E_INVALID, "rollout: the run kept no attention (keep_attention is off)");
    if (last_layer < 0)
        last_layer = cap->n_layers - 1;
    if (last_layer >= cap->n_layers)
        return atn_error_set(err, ATN_E_INVALID, "rollout: layer %d is out of range (the model has layers 0..%d)",
                             last_layer, cap->n_layers - 1);
    int32_t n = cap->n;
    if (n <= 0)
        return atn_error_set(err, ATN_E_INVALID, "rollout: no tokens");
    size_t nn = (size_t)n * n;
    double *r = malloc(nn * sizeof *r), *a = malloc(nn * sizeof *a), *t = malloc(nn * sizeof *t);
    float *scratch = cap->attn ? NULL : malloc(nn * sizeof *scratch);   /* a head made on demand */
    if (!r || !a || !t || (!cap->attn && !scratch)) {
        free(r), free(a), free(t), free(scratch);
        return atn_error_set(err, ATN_E_NOMEM, "rollout: out of memory for %d tokens", n);
    }
    for (int32_t l = 0; l <= last_layer; l++) {
        atn_status st = atn_rollout_layer_matrix(cap, l, a, scratch, err);
        if (st) {
            free(r), free(a), free(t), free(scratch);
            return st;
        }
        if (l == 0) {
            memcpy(r, a, nn * sizeof *r);
        } else {
            /* R <- A'_l R */
            cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, a, n, r, n, 0.0, t, n);
            double *sw = r;
            r = t;
            t = sw;
        }
    }
    for (size_t i = 0; i < nn; i++)
        out[i] = (float)r[i];
    free(r), free(a), free(t), free(scratch);
    return ATN_OK;
}
