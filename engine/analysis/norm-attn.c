/* Norm-based attention (Kobayashi, Kuribayashi, Yokoi & Inui 2020, "Attention is Not Only a
 * Weight: Analyzing Transformers with Vector Norms", §3 and their reference code
 * gorokoba560/norm-analysis-of-transformer): head h's output for query i is
 * sum_j alpha_ij f_h(x_j) with f_h(x) = (x W_V^h + b_V^h) W_O^h, so the size of what token j
 * actually contributes is ||alpha_ij f_h(x_j)|| = alpha_ij ||f_h(x_j)||.  The bias of W_O is
 * left out, as the paper does: it is added once after the sum over j and over the heads,
 * and belongs to no token.  The layer's version sums the heads before the norm,
 * ||sum_h alpha^h_ij f_h(x_j)||.
 *
 * Nothing is recomputed from the layer's input: the capture's V (cap->v, x W_V + b_V as the
 * forward made it, trace inputs) and the model's W_O give f_h(x_j) exactly, in double
 * precision, so the forward and its numbers are untouched. */
#include "forward/encoder.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* the families whose one attention is softmax(QK^T) V W_O with V and W_O as above */
static const char *const norm_families[] = {"BERT", "RoBERTa", "XLM-RoBERTa", "DistilBERT", "ALBERT", "ELECTRA",
                                            "GPT-2", NULL};

bool atn_norm_attention_supported(const atn_model *model) {
    if (!model)
        return false;
    const char *fam = atn_model_family_name(model);
    for (int i = 0; norm_families[i]; i++)
        if (!strcmp(fam, norm_families[i]))
            return true;
    return false;
}

atn_status atn_norm_attention_compute(const atn_model *model, const atn_capture *cap, int32_t layer, int32_t head,
                                      float *out, atn_error *err) {
    if (!model || !cap || !out)
        return atn_error_set(err, ATN_E_INVALID, "norm-based attention: no model, capture or output");
    if (!atn_norm_attention_supported(model))
        return atn_error_set(err, ATN_E_UNSUPPORTED,
                             "norm-based attention: %s models are not supported (BERT-like encoders and GPT-2 "
                             "only)", atn_model_family_name(model));
    if (cap->n_stacks)
        return atn_error_set(err, ATN_E_UNSUPPORTED, "norm-based attention: encoder-decoder runs are not supported");
    if (!atn_capture_has_heads(cap))
        return atn_error_set(err, ATN_E_INVALID, "norm-based attention: the run kept no attention");
    if (!cap->has_trace_inputs || !cap->v)
        return atn_error_set(err, ATN_E_INVALID, "norm-based attention: this run kept no trace inputs (V)");
    if (layer < 0 || layer >= cap->n_layers)
        return atn_error_set(err, ATN_E_INVALID, "norm-based attention: layer %d is out of range (the model has "
                             "layers 0..%d)", layer, cap->n_layers - 1);
    if (head < -1 || head >= cap->n_heads)
        return atn_error_set(err, ATN_E_INVALID, "norm-based attention: head %d is out of range (the model has "
                             "heads 0..%d)", head, cap->n_heads - 1);
    int32_t n = cap->n, d = cap->d_model, k = cap->d_head, H = cap->n_heads;
    int32_t dq = cap->d_q > 0 ? cap->d_q : d, dkv = cap->d_kv > 0 ? cap->d_kv : d;
    if (n <= 0)
        return atn_error_set(err, ATN_E_INVALID, "norm-based attention: no tokens");
    if (dq != H * k || dkv != dq)
        return atn_error_set(err, ATN_E_SHAPE, "norm-based attention: the heads' widths (%d, %d) are not %d x %d",
                             dq, dkv, H, k);
    const float *wo = model->w.layers[layer].wo;   /* [d][H k]; NULL (a toy model): the identity */
    int32_t h0 = head < 0 ? 0 : head, h1 = head < 0 ? H : head + 1, nh = h1 - h0;
    size_t nn = (size_t)n * n;
    /* fv[hh][j][o] = f_h(x_j)[o] = sum_c V[j][h k + c] W_O[o][h k + c] */
    double *fv = malloc((size_t)nh * n * d * sizeof *fv), *acc = malloc((size_t)d * sizeof *acc);
    float *scratch = cap->attn ? NULL : malloc((size_t)nh * nn * sizeof *scratch);
    const float **alpha = malloc((size_t)nh * sizeof *alpha);
    if (!fv || !acc || !alpha || (!cap->attn && !scratch)) {
        free(fv), free(acc), free(scratch), free(alpha);
        return atn_error_set(err, ATN_E_NOMEM, "norm-based attention: out of memory for %d tokens", n);
    }
    const float *V = cap->v + (size_t)layer * n * dkv;
    for (int32_t hh = 0; hh < nh; hh++) {
        int32_t h = h0 + hh;
        alpha[hh] = atn_capture_head_read(cap, layer, h, scratch ? scratch + (size_t)hh * nn : NULL, err);
        if (!alpha[hh]) {
            free(fv), free(acc), free(scratch), free(alpha);
            return err ? err->status : ATN_E_INVALID;
        }
        for (int32_t j = 0; j < n; j++) {
            const float *vj = V + (size_t)j * dkv + (size_t)h * k;
            double *f = fv + ((size_t)hh * n + j) * d;
            for (int32_t o = 0; o < d; o++) {
                double s = 0;
                if (wo) {
                    const float *row = wo + (size_t)o * dq + (size_t)h * k;
                    for (int32_t c = 0; c < k; c++)
                        s += (double)row[c] * vj[c];
                } else {
                    s = (o >= h * k && o < h * k + k) ? vj[o - h * k] : 0.0;
                }
                f[o] = s;
            }
        }
    }
    if (nh == 1) {   /* one head: ||alpha f|| = alpha ||f||, n^2 rather than n^2 d */
        for (int32_t j = 0; j < n; j++) {
            const double *f = fv + (size_t)j * d;
            double s = 0;
            for (int32_t o = 0; o < d; o++)
                s += f[o] * f[o];
            fv[(size_t)j * d] = sqrt(s);   /* f[0] was read above; it now holds ||f_h(x_j)|| */
        }
        for (int32_t i = 0; i < n; i++)
            for (int32_t j = 0; j < n; j++) {
                double a = alpha[0][(size_t)i * n + j];
                out[(size_t)i * n + j] = isfinite(a) ? (float)(fabs(a) * fv[(size_t)j * d]) : 0.0f;
            }
        free(fv), free(acc), free(scratch), free(alpha);
        return ATN_OK;
    }
    for (int32_t i = 0; i < n; i++)
        for (int32_t j = 0; j < n; j++) {
            memset(acc, 0, (size_t)d * sizeof *acc);
            for (int32_t hh = 0; hh < nh; hh++) {
                double a = alpha[hh][(size_t)i * n + j];
                if (!isfinite(a) || a == 0)
                    continue;
                const double *f = fv + ((size_t)hh * n + j) * d;
                for (int32_t o = 0; o < d; o++)
                    acc[o] += a * f[o];
            }
            double s = 0;
            for (int32_t o = 0; o < d; o++)
                s += acc[o] * acc[o];
            out[(size_t)i * n + j] = (float)sqrt(s);
        }
    free(fv), free(acc), free(scratch), free(alpha);
    return ATN_OK;
}
