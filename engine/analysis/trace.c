/* The trace: one head's arithmetic for one query token, recomputed step by step in double
 * precision from the captured Q, K, V, so the numbers a student reads are the numbers the
 * model used (max_abs_diff checks them against the captured probabilities). */
#include "forward/encoder.h"
#include "forward/deberta.h"
#include "analysis/trace-scale.h"
#include "analysis/trace-private.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void atn_trace_free(atn_trace *t) {
    if (!t)
        return;
    free(t->q);
    free(t->keys);
    free(t->scores);
    free(t->scaled);
    free(t->mask_term);
    free(t->bias_term);
    free(t->shifted);
    free(t->exps);
    free(t->weights);
    free(t->values);
    free(t->output);
    free(t->concat);
    free(t->projected);
    free(t->q_unrotated);
    free(t->keys_unrotated);
    free(t->angles);
    free(t->capped);
    free(t->c2p_term);
    free(t->p2c_term);
    free(t->rel_index);
    free(t->bucket);
    free(t->pos_bias);
    free(t);
}

/* One head's k values of row x [d] of the layer input: RMSNorm (the layer's first norm),
 * x W^T + b for rows r0..r0+k-1 of W [*, d], then (Qwen3) the head's RMSNorm with g. */
static void project_head(double *out, const float *x, const atn_model *m, const atn_layer_weights *lw,
                         const float *W, const float *b, int32_t r0, int32_t k, const float *g) {
    int32_t d = m->cfg.d_model;
    double ss = 0;
    for (int32_t c = 0; c < d; c++)
        ss += (double)x[c] * x[c];
    double rstd = 1.0 / sqrt(ss / d + (double)m->cfg.ln_eps);
    for (int32_t o = 0; o < k; o++) {
        const float *row = W + (size_t)(r0 + o) * d;
        double s = b ? b[r0 + o] : 0.0;
        for (int32_t c = 0; c < d; c++)
            s += row[c] * (lw->ln1_g ? lw->ln1_g[c] : 1.0) * (x[c] * rstd);
        out[o] = s;
    }
    if (g) {
        double hs = 0;
        for (int32_t o = 0; o < k; o++)
            hs += out[o] * out[o];
        double hr = 1.0 / sqrt(hs / k + (double)m->cfg.ln_eps);
        for (int32_t o = 0; o < k; o++)
            out[o] = g[o] * (out[o] * hr);
    }
}

/* The trace's step 0 for a rotary model (atn_trace.q_unrotated, keys_unrotated, angles). */
static atn_status unrotated(atn_trace *t, const atn_model *m, const atn_capture *cap, int32_t layer, int32_t head,
                            int32_t query) {
    int32_t n = cap->n, k = cap->d_head, d = cap->d_model, half = k / 2;
    t->q_unrotated = calloc((size_t)k, sizeof(double));
    t->keys_unrotated = calloc((size_t)n * k, sizeof(double));
    t->angles = calloc((size_t)(half > 0 ? half : 1), sizeof(double));
    if (!t->q_unrotated || !t->keys_unrotated || !t->angles)
        return ATN_E_NOMEM;
    const atn_layer_weights *lw = &m->w.layers[layer];
    t->qk_norm = lw->q_norm_g != NULL;
    const float *X = cap->hidden + (size_t)layer * n * d;   /* the layer's input */
    project_head(t->q_unrotated, X + (size_t)query * d, m, lw, lw->wq, lw->bq, head * k, k, lw->q_norm_g);
    for (int32_t j = 0; j < n; j++)
        project_head(t->keys_unrotated + (size_t)j * k, X + (size_t)j * d, m, lw, lw->wk, lw->bk, t->kv_head * k, k,
                     lw->k_norm_g);
    /* a local layer's own base (Gemma 3's rope_local_base_freq) */
    bool local = atn_rotary_local_layer(&m->rotary, layer) && m->rotary.inv_freq_local;
    t->inv_freq = local ? m->rotary.inv_freq_local : m->rotary.inv_freq;
    if (cap->inv_freq)   /* the what-if lab's base or scaling (the run's own frequencies) */
        t->inv_freq = local && cap->inv_freq_local ? cap->inv_freq_local : cap->inv_freq;
    for (int32_t i = 0; i < half; i++)   /* the forward's float32 angle */
        t->angles[i] = (double)((float)cap->pos_ids[query] * t->inv_freq[i]);
    return ATN_OK;
}

/* What one stack's head reads: this layer's rows of Q and the concatenated heads' output
 * [n_q][d_q], of K and V [n_k][d_kv], the mask [n_q][n_k], the captured probabilities of the
 * head [n_q][n_k] (NULL: none to check against), W_O and b_O, the T5 bias table [buckets][H]. */
typedef struct trace_src {
    const float *Q, *K, *V, *C, *mask, *P, *wo, *bo, *bias_table;
    int32_t n_q, n_k;
    bool causal, bidirectional;
} trace_src;

/* src for stack of an encoder-decoder's capture (cap->n_stacks > 0), after the range checks. */
static atn_status stack_src(trace_src *src, const atn_model *m, const atn_capture *cap, atn_stack_kind stack,
                            int32_t layer, int32_t head, int32_t dq, int32_t dkv, atn_error *err) {
    const atn_stack *st = atn_capture_stack(cap, stack);
    if (!st)
        return atn_error_set(err, ATN_E_INVALID, "this capture has no %s stack", stack == ATN_STACK_CROSS ? "cross"
                             : stack == ATN_STACK_DECODER ? "decoder" : "encoder");
    int32_t n = cap->n, t = cap->n_tgt;
    const atn_layer_weights *lw = &m->encdec.dec_layers[layer];
    src->n_q = st->n_q, src->n_k = st->n_k;
    src->P = st->attn ? st->attn + (((size_t)layer * st->n_heads + head) * st->n_q) * st->n_k : NULL;
    if (stack == ATN_STACK_DECODER) {
        if (!cap->dec_q || !cap->dec_mask)
            return atn_error_set(err, ATN_E_INVALID, "this run kept no trace inputs (Q, K, V) of the decoder");
        src->Q = cap->dec_q + (size_t)layer * t * dq, src->C = cap->dec_ctx + (size_t)layer * t * dq;
        src->K = cap->dec_k + (size_t)layer * t * dkv, src->V = cap->dec_v + (size_t)layer * t * dkv;
        src->mask = cap->dec_mask, src->causal = true;
        src->wo = lw->wo, src->bo = lw->bo;
        src->bias_table = m->encdec.kind == ATN_ENCDEC_T5 ? m->encdec.dec_rel_bias : NULL;
    } else {   /* cross: the decoder's queries, the encoder's output as keys and values */
        if (!cap->cross_q || !cap->cross_mask)
            return atn_error_set(err, ATN_E_INVALID, "this run kept no trace inputs (Q, K, V) of the cross-attention");
        src->Q = cap->cross_q + (size_t)layer * t * dq, src->C = cap->cross_ctx + (size_t)layer * t * dq;
        src->K = cap->cross_k + (size_t)layer * n * dkv, src->V = cap->cross_v + (size_t)layer * n * dkv;
        src->mask = cap->cross_mask;
        src->wo = lw->co, src->bo = lw->bco;
        src->bias_table = NULL;   /* T5's cross-attention has no position bias */
    }
    return ATN_OK;
}

atn_trace *atn_trace_alloc(int32_t n, int32_t k, int32_t concat_len, int32_t projected_len) {
    atn_trace *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->q = calloc((size_t)k, sizeof(double));
    t->keys = calloc((size_t)n * k, sizeof(double));
    t->scores = calloc((size_t)n, sizeof(double));
    t->scaled = calloc((size_t)n, sizeof(double));
    t->mask_term = calloc((size_t)n, sizeof(double));
    t->bias_term = calloc((size_t)n, sizeof(double));
    t->shifted = calloc((size_t)n, sizeof(double));
    t->exps = calloc((size_t)n, sizeof(double));
    t->weights = calloc((size_t)n, sizeof(double));
    t->values = calloc((size_t)n * k, sizeof(double));
    t->output = calloc((size_t)k, sizeof(double));
    t->concat = calloc((size_t)concat_len, sizeof(double));
    t->projected = projected_len > 0 ? calloc((size_t)projected_len, sizeof(double)) : NULL;
    if (!t->q || !t->keys || !t->scores || !t->scaled || !t->mask_term || !t->bias_term || !t->shifted || !t->exps ||
        !t->weights || !t->values || !t->output || !t->concat || (projected_len > 0 && !t->projected)) {
        atn_trace_free(t);
        return NULL;
    }
    return t;
}

void atn_trace_attend(atn_trace *t, const float *mask_row, double slope, const float *P) {
    int32_t n = t->n, k = t->d_head, query = t->query;
    t->max = -INFINITY;
    double *x = t->shifted;   /* the divided scores, shifted below */
    for (int32_t j = 0; j < n; j++) {
        double s = 0;
        for (int32_t c = 0; c < k; c++)
            s += t->q[c] * t->keys[(size_t)j * k + c];
        t->scores[j] = s;
        t->scaled[j] = s * t->scale;
        t->mask_term[j] = mask_row[j];
        int32_t dist = query > j ? query - j : j - query;
        t->bias_term[j] = dist ? -slope * (double)dist : 0.0;
        double sc = t->scaled[j];
        if (t->capped)   /* Gemma 2: tanh(s / c) c, before the mask */
            sc = t->capped[j] = t->softcap * tanh(sc / t->softcap);
        double rel = t->c2p_term ? t->c2p_term[j] + t->p2c_term[j] : t->pos_bias ? t->pos_bias[j] : 0.0;
        x[j] = (sc + rel + t->mask_term[j] + t->bias_term[j]) / t->temperature;
        if (x[j] > t->max)
            t->max = x[j];
    }
    /* step 3: softmax, max-subtracted; then a switched-off head's replacement */
    t->sum = 0;
    for (int32_t j = 0; j < n; j++) {
        t->shifted[j] = x[j] - t->max;
        t->exps[j] = exp(t->shifted[j]);
        t->sum += t->exps[j];
    }
    int32_t visible = 0;
    for (int32_t j = 0; j < n; j++)
        visible += t->mask_term[j] == 0.0;
    for (int32_t j = 0; j < n; j++) {
        t->weights[j] = t->exps[j] / t->sum;
        if (t->head_off == 1)
            t->weights[j] = 0.0;
        else if (t->head_off == 2)
            t->weights[j] = visible ? (t->mask_term[j] == 0.0 ? 1.0 / visible : 0.0) : 1.0 / n;
        if (t->xsoftmax && !visible)   /* XSoftmax: a padded query's row is all zero */
            t->weights[j] = 0.0;
        if (P) {
            float diff = (float)fabs(t->weights[j] - P[j]);
            if (diff > t->max_abs_diff)
                t->max_abs_diff = diff;
        }
    }
    /* step 4: weighted sum of the values */
    for (int32_t j = 0; j < n; j++)
        for (int32_t c = 0; c < k; c++)
            t->output[c] += t->weights[j] * t->values[(size_t)j * k + c];
}

double atn_trace_scale(const atn_model *model, int32_t layer, int32_t k) {
    if (model && model->deberta.on)   /* 1 / sqrt(k scale_factor) */
        return 1.0 / sqrt((double)k * model->deberta.scale_factor);
    double scale = model && model->attn_no_scale ? 1.0 : 1.0 / sqrt((double)k);
    if (model && model->attn_scale_by_layer)
        scale /= (double)(layer + 1);
    if (model && model->rotary.query_scale > 0.0f)   /* Gemma: the forward's float factor */
        scale = model->rotary.query_scale;
    return scale;
}

atn_status atn_trace_compute(const atn_model *model, const atn_capture *cap, int32_t layer, int32_t head,
                             int32_t query, atn_trace **out, atn_error *err) {
    return atn_trace_compute_stack(model, cap, ATN_STACK_ENCODER, layer, head, query, out, err);
}

atn_status atn_trace_compute_stack(const atn_model *model, const atn_capture *cap, atn_stack_kind stack,
                                   int32_t layer, int32_t head, int32_t query, atn_trace **out, atn_error *err) {
    *out = NULL;
    if (!cap)
        return atn_error_set(err, ATN_E_INVALID, "no capture: run the model first");
    if (stack != ATN_STACK_ENCODER && stack != ATN_STACK_DECODER && stack != ATN_STACK_CROSS)
        return atn_error_set(err, ATN_E_INVALID, "unknown stack %d", (int)stack);
    if (stack != ATN_STACK_ENCODER && !cap->n_stacks)
        return atn_error_set(err, ATN_E_INVALID, "model \"%s\" has one stack of attention: the %s stack is an "
                             "encoder-decoder's (T5, BART, Marian)", model ? atn_model_name(model) : "?",
                             stack == ATN_STACK_CROSS ? "cross" : "decoder");
    if (cap->n_stacks && !model)
        return atn_error_set(err, ATN_E_INVALID, "an encoder-decoder's trace needs its model");
    if (!cap->has_trace_inputs)
        return atn_error_set(err, ATN_E_INVALID, "this run kept no trace inputs (Q, K, V)");
    if (!cap->mask_add)
        return atn_error_set(err, ATN_E_INVALID, "this capture has no attention mask");
    bool enc_stack = stack == ATN_STACK_ENCODER;
    int32_t n_layers = enc_stack ? cap->n_layers : cap->n_dec_layers, n_q = enc_stack ? cap->n : cap->n_tgt;
    const char *which = !cap->n_stacks ? "the model has" : enc_stack ? "the encoder has" : "the decoder has";
    if (layer < 0 || layer >= n_layers)
        return atn_error_set(err, ATN_E_INVALID, "layer %d out of range: %s layers 0..%d", layer, which, n_layers - 1);
    if (head < 0 || head >= cap->n_heads)
        return atn_error_set(err, ATN_E_INVALID, "head %d out of range: %s heads 0..%d", head, which,
                             cap->n_heads - 1);
    if (query < 0 || query >= n_q)
        return atn_error_set(err, ATN_E_INVALID, "query token %d out of range: the %s has tokens 0..%d", query,
                             enc_stack ? (cap->n_stacks ? "source" : "input") : "target", n_q - 1);
    int32_t d = cap->d_model, k = cap->d_head;
    /* the attention's row widths (a capture from before they existed has 0: d_model) */
    int32_t dq = cap->d_q > 0 ? cap->d_q : d, dkv = cap->d_kv > 0 ? cap->d_kv : d;
    int32_t kvh = cap->n_kv_heads > 0 ? cap->n_kv_heads : cap->n_heads;
    /* where this stack's head reads: the run's usual capture (the encoder), or the decoder's */
    trace_src src = {
        .Q = cap->q + (size_t)layer * cap->n * dq, .C = cap->ctx + (size_t)layer * cap->n * dq,
        .K = cap->k + (size_t)layer * cap->n * dkv, .V = cap->v + (size_t)layer * cap->n * dkv,
        .mask = atn_capture_layer_mask(cap, layer), .n_q = cap->n, .n_k = cap->n,
        .causal = atn_model_is_causal(model), .bidirectional = true,
    };
    if (model && enc_stack) {   /* a decoder's layer indexes its own weights (stack_src) */
        const atn_layer_weights *lw = &model->w.layers[layer];
        src.wo = lw->wo, src.bo = lw->bo;
        if (cap->n_stacks && model->encdec.kind == ATN_ENCDEC_T5)
            src.bias_table = model->encdec.enc_rel_bias;
    }
    if (!enc_stack) {
        atn_status st = stack_src(&src, model, cap, stack, layer, head, dq, dkv, err);
        if (st)
            return st;
    }
    int32_t n = src.n_k;
    /* Qwen3's heads may be wider (or narrower) than d_model together */
    atn_trace *t = atn_trace_alloc(n, k, dq > d ? dq : d, d);
    if (!t)
        return atn_error_set(err, ATN_E_NOMEM, "out of memory");
    t->layer = layer, t->head = head, t->query = query;
    t->causal = src.causal;
    t->n = n, t->d_head = k, t->d_model = d;
    t->enc = cap->enc;
    t->stack = stack;
    t->n_queries = src.n_q;
    t->q_ids = stack == ATN_STACK_ENCODER ? cap->enc->ids : cap->target_ids;
    t->k_ids = stack == ATN_STACK_DECODER ? cap->target_ids : cap->enc->ids;
    t->d_concat = dq;
    const float *Q = src.Q, *C = src.C, *K = src.K, *V = src.V;
    int32_t off = head * k;
    t->kv_head = head / (cap->n_heads / kvh);   /* grouped-query attention: the group's K/V head */
    t->n_kv_heads = enc_stack ? kvh : cap->n_heads;
    int32_t kv_off = t->kv_head * k;
    for (int32_t c = 0; c < k; c++)
        t->q[c] = Q[(size_t)query * dq + off + c];
    for (int32_t j = 0; j < n; j++)
        for (int32_t c = 0; c < k; c++) {
            t->keys[(size_t)j * k + c] = K[(size_t)j * dkv + kv_off + c];
            t->values[(size_t)j * k + c] = V[(size_t)j * dkv + kv_off + c];
        }
    /* step 0 of a rotary model: q and k before the rotation, and the angles */
    if (enc_stack && model && model->rotary.on && model->rotary.rms_norm && cap->pos_ids && !cap->no_positions && cap->hidden &&
        unrotated(t, model, cap, layer, head, query) != ATN_OK) {
        atn_trace_free(t);
        return atn_error_set(err, ATN_E_NOMEM, "out of memory");
    }
    /* steps 1-2: scores and scaling; the mask, ALiBi's bias and the temperature */
    /* the forward's factor, exactly (1/sqrt(k); GPT-2's scale_attn_* switches change it) */
    t->scale = atn_trace_scale(model, layer, k);
    t->softcap = model ? model->rotary.attn_softcap : 0.0;
    if (t->softcap > 0 && !(t->capped = calloc((size_t)n, sizeof(double)))) {
        atn_trace_free(t);
        return atn_error_set(err, ATN_E_NOMEM, "out of memory");
    }
    /* DeBERTa: 1 / sqrt(k scale_factor), then the c2p and p2c terms of every key */
    if (model && model->deberta.on) {
        const atn_deberta *r = &model->deberta;
        t->scale_factor = r->scale_factor;
        t->xsoftmax = true;
        if (r->relative && (r->c2p || r->p2c) && !cap->no_positions) {
            t->rel_span = r->span;
            t->c2p_term = calloc((size_t)n, sizeof(double));
            t->p2c_term = calloc((size_t)n, sizeof(double));
            t->rel_index = calloc((size_t)n, sizeof(int32_t));
            if (!t->c2p_term || !t->p2c_term || !t->rel_index) {
                atn_trace_free(t);
                return atn_error_set(err, ATN_E_NOMEM, "out of memory");
            }
            atn_deberta_trace_terms(model, layer, head, query, t->q, t->keys, n, t->scale, t->c2p_term, t->p2c_term,
                                    t->rel_index);
        }
    }
    /* T5: the relative position bias, layer 0's table read at each key's bucket */
    if (src.bias_table && !cap->no_positions) {
        const atn_encdec *ed = &model->encdec;
        t->bias_bidirectional = src.bidirectional && !src.causal;
        t->num_buckets = ed->num_buckets, t->max_distance = ed->max_distance;
        t->bucket = calloc((size_t)n, sizeof(int32_t));
        t->pos_bias = calloc((size_t)n, sizeof(double));
        if (!t->bucket || !t->pos_bias) {
            atn_trace_free(t);
            return atn_error_set(err, ATN_E_NOMEM, "out of memory");
        }
        for (int32_t j = 0; j < n; j++) {
            t->bucket[j] = atn_t5_bucket(j - query, t->bias_bidirectional, ed->num_buckets, ed->max_distance);
            t->pos_bias[j] = src.bias_table[(size_t)t->bucket[j] * cap->n_heads + head];
        }
    }
    /* the what-if lab's terms (the encoder's stack only: the decoder never has them) */
    t->temperature = enc_stack && cap->temperature > 0.0f ? cap->temperature : 1.0;
    t->head_off = enc_stack && cap->heads_off && cap->heads_off[(size_t)layer * cap->n_heads + head]
                      ? (cap->head_mode == ATN_HEAD_UNIFORM ? 2 : 1) : 0;
    double slope = enc_stack && cap->alibi_slopes ? cap->alibi_slopes[head] : 0.0;
    /* the captured row, to check the recomputation against (a head on demand made for it) */
    float *made = !enc_stack || cap->attn || !cap->attn_on_demand ? NULL : malloc((size_t)n * n * sizeof *made);
    const float *P = !enc_stack ? src.P : cap->attn || made ? atn_capture_head_read(cap, layer, head, made, NULL) : NULL;
    /* steps 1-4, the mask the forward added in this layer */
    atn_trace_attend(t, src.mask + (size_t)query * n, slope, P ? P + (size_t)query * n : NULL);
    free(made);
    /* step 5: concatenation of all heads for this token, and the output projection */
    for (int32_t c = 0; c < dq; c++)
        t->concat[c] = C[(size_t)query * dq + c];
    for (int32_t c = 0; c < k; c++)   /* this head's slice from the exact recomputation */
        t->concat[off + c] = t->output[c];
    for (int32_t o = 0; o < d; o++) {
        double s = src.bo ? src.bo[o] : 0.0;
        if (src.wo) {
            const float *row = src.wo + (size_t)o * dq;   /* W_O [d, H k] (the cross block's for cross) */
            for (int32_t c = 0; c < dq; c++)
                s += row[c] * t->concat[c];
        } else {
            s += t->concat[o];
        }
        t->projected[o] = s;
    }
    *out = t;
    return ATN_OK;
}
