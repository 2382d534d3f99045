/* The encoder forward pass on the CPU (post-LN BERT), in the style of llm.c: one plain
 * function per layer kind, outputs first, then inputs and weights, then sizes.
 * Size letters: L layers, H heads, n tokens, d width, k = d/H head width, f ffn width.
 * Matrix products go through cblas_sgemm. */
#include "encoder.h"

#include <cblas.h>
#include <float.h>
#include <math.h>
#include <string.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static double PT[16]; static const char *PN[16]={"qkv","attn","wo","ln1","ffn1","gelu","ffn2","ln2"};
static double pnow(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
static void pdump(void){for(int i=0;i<8;i++)fprintf(stderr,"%s %.1f ms\n",PN[i],PT[i]*1e3);}
#define TP(i) do{double _t=pnow(); PT[i]+=_t-_t0; _t0=_t;}while(0)

void atn_linear(float *out, const float *in, const float *w, const float *b, int32_t n, int32_t i,
                int32_t o) {
    if (!w) {   /* identity projection (toy models) */
        memcpy(out, in, (size_t)n * i * sizeof(float));
        if (b)
            for (int32_t r = 0; r < n; r++)
                for (int32_t c = 0; c < o; c++)
                    out[(size_t)r * o + c] += b[c];
        return;
    }
    float beta = 0.0f;
    if (b) {
        for (int32_t r = 0; r < n; r++)
            memcpy(out + (size_t)r * o, b, (size_t)o * sizeof(float));
        beta = 1.0f;
    }
    /* out[n,o] = in[n,i] · w[o,i]^T */
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, o, i, 1.0f, in, i, w, i, beta, out, o);
}

void atn_layernorm(float *out, const float *in, const float *g, const float *b, int32_t n, int32_t d, float eps) {
    for (int32_t r = 0; r < n; r++) {
        const float *x = in + (size_t)r * d;
        float *y = out + (size_t)r * d;
        double mean = 0, var = 0;
        for (int32_t c = 0; c < d; c++)
            mean += x[c];
        mean /= d;
        for (int32_t c = 0; c < d; c++) {
            double t = x[c] - mean;
            var += t * t;
        }
        var /= d;   /* biased variance, as torch.nn.LayerNorm */
        float rstd = (float)(1.0 / sqrt(var + eps));
        float m = (float)mean;
        for (int32_t c = 0; c < d; c++) {
            float t = (x[c] - m) * rstd;
            y[c] = t * (g ? g[c] : 1.0f) + (b ? b[c] : 0.0f);
        }
    }
}

void atn_activate(float *x, size_t count, atn_activation act) {
    switch (act) {
    case ATN_ACT_GELU:
        for (size_t i = 0; i < count; i++)
            x[i] = 0.5f * x[i] * (1.0f + erff(x[i] * (float)M_SQRT1_2));
        break;
    case ATN_ACT_GELU_TANH: {
        const float s = 0.7978845608028654f;   /* sqrt(2/pi) */
        for (size_t i = 0; i < count; i++) {
            float v = x[i];
            x[i] = 0.5f * v * (1.0f + tanhf(s * (v + 0.044715f * v * v * v)));
        }
        break;
    }
    case ATN_ACT_RELU:
        for (size_t i = 0; i < count; i++)
            x[i] = x[i] > 0.0f ? x[i] : 0.0f;
        break;
    }
}

/* Row-wise masked softmax, max-subtracted.  att_row[j] = exp(s_j - max) / sum. */
static void softmax_rows(float *att, const float *mask_add, int32_t n) {
    for (int32_t i = 0; i < n; i++) {
        float *row = att + (size_t)i * n;
        float mx = -FLT_MAX;
        for (int32_t j = 0; j < n; j++) {
            row[j] += mask_add[j];
            mx = row[j] > mx ? row[j] : mx;
        }
        double sum = 0;
        for (int32_t j = 0; j < n; j++) {
            row[j] = expf(row[j] - mx);
            sum += row[j];
        }
        float inv = (float)(1.0 / sum);
        for (int32_t j = 0; j < n; j++)
            row[j] *= inv;
    }
}

/* ctx[n,d]: head h's columns h*k.. = softmax(Q_h K_h^T / sqrt k + mask) V_h;
 * att[H][n][n] keeps the probabilities.  q, k, v are [n,d] with heads side by side. */
void atn_attention(float *ctx, float *att, const float *q, const float *k, const float *v, const float *mask_add,
                   int32_t n, int32_t d, int32_t h) {
    int32_t kd = d / h;
    float scale = 1.0f / sqrtf((float)kd);
    for (int32_t hh = 0; hh < h; hh++) {
        float *att_h = att + (size_t)hh * n * n;
        /* att_h[n,n] = scale · Q_h[n,k] · K_h[n,k]^T */
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, n, kd, scale, q + hh * kd, d, k + hh * kd, d,
                    0.0f, att_h, n);
        softmax_rows(att_h, mask_add, n);
        /* ctx_h[n,k] = att_h[n,n] · V_h[n,k] */
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, kd, n, 1.0f, att_h, n, v + hh * kd, d, 0.0f,
                    ctx + hh * kd, d);
    }
}

/* hidden0[n,d] = LayerNorm(word[id] + pos[i] + type[t]), or the toy model's given vectors. */
static void embeddings_forward(float *hidden0, const atn_model *m, const atn_encoding *enc) {
    const atn_config *c = &m->cfg;
    int32_t n = enc->n, d = c->d_model;
    if (!c->use_embeddings) {
        memcpy(hidden0, m->toy_x, (size_t)n * d * sizeof(float));
        return;
    }
    const atn_weights *w = &m->w;
    for (int32_t i = 0; i < n; i++) {
        float *x = hidden0 + (size_t)i * d;
        const float *we = w->word_emb + (size_t)enc->ids[i] * d;
        const float *pe = w->pos_emb + (size_t)i * d;
        const float *te = w->type_emb + (size_t)enc->type_ids[i] * d;
        for (int32_t j = 0; j < d; j++)
            x[j] = we[j] + pe[j] + te[j];
    }
    atn_layernorm(hidden0, hidden0, w->emb_ln_g, w->emb_ln_b, n, d, c->ln_eps);
}

static bool all_finite(const float *x, size_t count) {
    for (size_t i = 0; i < count; i++)
        if (!isfinite(x[i]))
            return false;
    return true;
}

static void add_inplace(float *x, const float *y, size_t count) {
    for (size_t i = 0; i < count; i++)
        x[i] += y[i];
}

/* One post-LN encoder layer: out = LN2(h1 + FFN(h1)), h1 = LN1(x + Attn(x) W_O^T). */
static void layer_forward(float *out, float *q, float *k, float *v, float *ctx, float *attn_out, float *att,
                          float *h1, float *ffn, const float *x, const float *mask_add, const atn_layer_weights *lw,
                          const atn_config *c, int32_t n) {
    int32_t d = c->d_model, f = c->d_ffn;
    size_t nd = (size_t)n * d;
    static int reg; if(!reg){reg=1; atexit(pdump);} double _t0=pnow();
    atn_linear(q, x, lw->wq, lw->bq, n, d, d);
    atn_linear(k, x, lw->wk, lw->bk, n, d, d);
    atn_linear(v, x, lw->wv, lw->bv, n, d, d);TP(0);
    atn_attention(ctx, att, q, k, v, mask_add, n, d, c->n_heads);TP(1);
    atn_linear(attn_out, ctx, lw->wo, lw->bo, n, d, d);TP(2);
    memcpy(h1, attn_out, nd * sizeof(float));
    if (c->use_residual)
        add_inplace(h1, x, nd);
    if (c->use_layernorm)
        atn_layernorm(h1, h1, lw->ln1_g, lw->ln1_b, n, d, c->ln_eps);TP(3);
    if (!c->use_ffn) {
        memcpy(out, h1, nd * sizeof(float));
        return;
    }
    atn_linear(ffn, h1, lw->w1, lw->b1, n, d, f);TP(4);
    atn_activate(ffn, (size_t)n * f, c->act);TP(5);
    atn_linear(out, ffn, lw->w2, lw->b2, n, f, d);TP(6);
    if (c->use_residual)
        add_inplace(out, h1, nd);
    if (c->use_layernorm)
        atn_layernorm(out, out, lw->ln2_g, lw->ln2_b, n, d, c->ln_eps);TP(7);
}

atn_status atn_cpu_forward(const atn_model *m, const atn_encoding *enc, atn_activations *a,
                           const atn_run_options *opts, atn_error *err) {
    const atn_config *c = &m->cfg;
    int32_t n = enc->n, d = c->d_model;
    size_t nd = (size_t)n * d;
    for (int32_t j = 0; j < n; j++)
        a->mask_add[j] = enc->mask[j] ? 0.0f : ATN_MASK_MIN;
    embeddings_forward(a->hidden, m, enc);
    a->nonfinite_layer = all_finite(a->hidden, nd) ? -1 : 0;
    for (int32_t l = 0; l < c->n_layers; l++) {
        if (opts->progress && !opts->progress((double)l / c->n_layers, "layer", opts->user_data))
            return atn_error_set(err, ATN_E_CANCELLED, "cancelled at layer %d", l);
        size_t t = a->trace_stride * l;
        layer_forward(a->hidden + (size_t)(l + 1) * nd, a->q + t, a->k + t, a->v + t, a->ctx + t, a->attn_out + t,
                      a->attn + a->attn_stride * l, a->h1, a->ffn, a->hidden + (size_t)l * nd, a->mask_add,
                      &m->w.layers[l], c, n);
        if (a->nonfinite_layer < 0 && !all_finite(a->hidden + (size_t)(l + 1) * nd, nd))
            a->nonfinite_layer = l;
    }
    if (opts->progress)
        opts->progress(1.0, "done", opts->user_data);
    return ATN_OK;
}
