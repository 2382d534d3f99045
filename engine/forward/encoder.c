/* The encoder forward pass on the CPU (post-LN BERT), in the style of llm.c: one plain
 * function per layer kind, outputs first, then inputs and weights, then sizes.
 * Size letters: L layers, H heads, n tokens, d width, k = d/H head width, f ffn width.
 *
 * Two paths compute the same thing:
 *  - BERT models on a CPU with AVX-512 (the fast path, fast_forward below): the layer
 *    weights are packed once per model for the kernels of cpu-kernels.c, and a team of
 *    threads (cpu-team.c) runs each layer together, splitting the products by output
 *    panels, the attention by heads and the row-wise steps by rows.
 *  - everything else (toy models, whose weights the GUI edits; other CPUs; or
 *    ATTNSCOPE_CPU_KERNELS=blas): the plain functions below, through cblas_sgemm.
 * docs/PERFORMANCE.md has the measurements behind this. */
#include "forward/encoder.h"
#include "forward/activation.h"
#include "forward/cpu-kernels.h"
#include "forward/cpu-team.h"
#include "core/family.h"
#include "forward/precision.h"

#include <cblas.h>
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

void *atn_alloc_big(size_t bytes) {
    enum { HUGE = 2 << 20 };
    if (bytes < 2 * (size_t)HUGE)
        return malloc(bytes ? bytes : 1);
    if (bytes > SIZE_MAX - HUGE)
        return NULL;
    size_t rounded = (bytes + HUGE - 1) / HUGE * HUGE;
    void *p = aligned_alloc(HUGE, rounded);
#ifdef MADV_HUGEPAGE
    if (p)
        madvise(p, rounded, MADV_HUGEPAGE);   /* advice only: failure changes nothing */
#endif
    return p;
}

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
    case ATN_ACT_GELU_TANH:
        atn_gelu_tanh(x, count);   /* AVX2 or scalar, the same bits (activation.c) */
        break;
    case ATN_ACT_RELU:
        for (size_t i = 0; i < count; i++)
            x[i] = x[i] > 0.0f ? x[i] : 0.0f;
        break;
    }
}

/* Row-wise masked softmax, max-subtracted.  att_row[j] = exp(s_j - max) / sum; mask_add
 * [n][n], row i for query i. */
static void softmax_rows(float *att, const float *mask_add, int32_t n) {
    for (int32_t i = 0; i < n; i++) {
        float *row = att + (size_t)i * n;
        const float *mrow = mask_add + (size_t)i * n;
        float mx = -FLT_MAX;
        for (int32_t j = 0; j < n; j++) {
            row[j] += mrow[j];
            mx = row[j] > mx ? row[j] : mx;
        }
        double sum = 0;
        for (int32_t j = 0; j < n; j++) {
            /* expf is 0 below -103.98 (it underflows), and libm's underflow path is slow:
               masked keys (a causal model's later ones, padding) take this shortcut, with
               the same result bit for bit */
            float x = row[j] - mx;
            row[j] = x < -110.0f ? 0.0f : expf(x);
            sum += row[j];
        }
        float inv = (float)(1.0 / sum);
        for (int32_t j = 0; j < n; j++)
            row[j] *= inv;
    }
}

/* The softmax with the interventions: row i of head att (scores already scaled) gets
 * mask + ALiBi's -slope |i-j|, is divided by the temperature, softmaxed, and replaced when
 * the head is off (zero: 0; uniform: 1/k over the keys whose mask is 0). */
static void softmax_rows_iv(float *att, const float *mask_add, int32_t n, float slope, float temperature,
                            int off, atn_head_mode mode) {
    float inv_t = 1.0f / temperature;
    for (int32_t i = 0; i < n; i++) {
        float *row = att + (size_t)i * n;
        const float *mrow = mask_add + (size_t)i * n;
        if (off && mode == ATN_HEAD_ZERO) {
            memset(row, 0, (size_t)n * sizeof(float));
            continue;
        }
        if (off) {   /* uniform over the keys this query may see */
            int32_t k = 0;
            for (int32_t j = 0; j < n; j++)
                k += mrow[j] == 0.0f;
            for (int32_t j = 0; j < n; j++)
                row[j] = k ? (mrow[j] == 0.0f ? 1.0f / (float)k : 0.0f) : 1.0f / (float)n;
            continue;
        }
        float mx = -FLT_MAX;
        for (int32_t j = 0; j < n; j++) {
            float s = row[j] + mrow[j];
            if (slope != 0.0f)
                s -= slope * (float)(i > j ? i - j : j - i);
            s *= inv_t;
            s = s < -FLT_MAX ? -FLT_MAX : s;   /* a masked score over T < 1 stays finite */
            row[j] = s;
            mx = s > mx ? s : mx;
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

void atn_attention_iv(float *ctx, float *att, const float *q, const float *k, const float *v, const float *mask_add,
                      int32_t n, int32_t d, int32_t h, float scale, const float *slopes, float temperature,
                      const uint8_t *heads_off, atn_head_mode mode) {
    int32_t kd = d / h;
    for (int32_t hh = 0; hh < h; hh++) {
        float *att_h = att + (size_t)hh * n * n;
        int off = heads_off && heads_off[hh];
        if (!(off && mode == ATN_HEAD_ZERO))
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, n, kd, scale, q + hh * kd, d, k + hh * kd, d,
                        0.0f, att_h, n);
        softmax_rows_iv(att_h, mask_add, n, slopes ? slopes[hh] : 0.0f, temperature, off, mode);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, kd, n, 1.0f, att_h, n, v + hh * kd, d, 0.0f,
                    ctx + hh * kd, d);
    }
}

/* ctx[n,d]: head h's columns h*k.. = softmax(Q_h K_h^T / sqrt k + mask) V_h;
 * att[H][n][n] keeps the probabilities.  q, k, v are [n,d] with heads side by side. */
float atn_attn_scale(const atn_model *m, int32_t layer) {
    /* GPT-2 (modeling_gpt2.py, eager): w / value.size(-1) ** 0.5 when scale_attn_weights,
       then w / float(layer_idx + 1) when scale_attn_by_inverse_layer_idx */
    float s = m->attn_no_scale ? 1.0f : 1.0f / sqrtf((float)m->cfg.d_head);
    if (m->attn_scale_by_layer)
        s /= (float)(layer + 1);
    return s;
}

void atn_attention(float *ctx, float *att, const float *q, const float *k, const float *v, const float *mask_add,
                   int32_t n, int32_t d, int32_t h) {
    atn_attention_scaled(ctx, att, q, k, v, mask_add, n, d, h, 1.0f / sqrtf((float)(d / h)));
}

void atn_attention_scaled(float *ctx, float *att, const float *q, const float *k, const float *v,
                          const float *mask_add, int32_t n, int32_t d, int32_t h, float scale) {
    int32_t kd = d / h;
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

/* ---- reduced precision (engine/forward/precision.h): the one rounding hook of the products ---- */

/* The operand a product reads: in itself (fp32), or in rounded into the run's scratch,
 * counting fp16 overflows in row (0: embeddings, l + 1: layer l) under op. */
static const float *operand(const atn_activations *a, const float *in, size_t count, int32_t row, atn_operand op) {
    if (!a || a->precision == ATN_PRECISION_FP32)   /* NULL: the stacked fp32 forward (batch.c) */
        return in;
    int64_t over = atn_round_array(a->round_buf, in, count, a->precision);
    if (a->overflow)
        a->overflow[(size_t)row * ATN_OPERAND_COUNT + op] += over;
    return a->round_buf;
}

static void round_in_place(const atn_activations *a, float *x, size_t count, int32_t row, atn_operand op) {
    int64_t over = atn_round_array(x, x, count, a->precision);
    if (a->overflow)
        a->overflow[(size_t)row * ATN_OPERAND_COUNT + op] += over;
}

/* atn_attention_iv (or atn_attention_scaled without interventions) with the operands
 * rounded: Q, K, V in place, each head's probabilities into the scratch (the capture keeps
 * the fp32 ones). */
static void attention_rounded(float *ctx, float *att, float *q, float *k, float *v, const float *mask_add,
                              int32_t n, int32_t d, int32_t h, float scale, const atn_activations *a, int32_t l) {
    int32_t kd = d / h, row = l + 1;
    size_t nd = (size_t)n * d;
    round_in_place(a, q, nd, row, ATN_OPERAND_Q);
    round_in_place(a, k, nd, row, ATN_OPERAND_K);
    round_in_place(a, v, nd, row, ATN_OPERAND_V);
    const uint8_t *off_l = a->heads_off ? a->heads_off + (size_t)l * h : NULL;
    bool iv = a->alibi_slopes || a->temperature != 1.0f || off_l;
    for (int32_t hh = 0; hh < h; hh++) {
        float *att_h = att + (size_t)hh * n * n;
        int off = off_l && off_l[hh];
        if (!(off && a->head_mode == ATN_HEAD_ZERO))
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, n, kd, scale, q + hh * kd, d, k + hh * kd, d,
                        0.0f, att_h, n);
        if (iv)
            softmax_rows_iv(att_h, mask_add, n, a->alibi_slopes ? a->alibi_slopes[hh] : 0.0f, a->temperature, off,
                            a->head_mode);
        else
            softmax_rows(att_h, mask_add, n);
        const float *p = operand(a, att_h, (size_t)n * n, row, ATN_OPERAND_PROBS);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, kd, n, 1.0f, p, n, v + hh * kd, d, 0.0f,
                    ctx + hh * kd, d);
    }
}

/* hidden0[n,d] = LayerNorm(word[id] + pos[pos_ids[i]] + type[t]), or the toy model's given
 * vectors.  Position ids come from the family's rule (act->pos_ids, made by engine/forward/run.c);
 * a family without token types has no type embeddings (type_emb NULL).  ALBERT and ELECTRA
 * embed at width E and project to d (emb_proj_w): the E-wide rows are built in scratch
 * (n x E floats) and hidden0 = scratch proj^T + b. */
static void embeddings_forward(float *hidden0, float *scratch, const atn_model *m, const atn_encoding *enc,
                               const int32_t *pos_ids, bool no_positions, const atn_activations *a,
                               const float *proj_w) {
    const atn_config *c = &m->cfg;
    int32_t n = enc->n, d = c->d_model, E = atn_d_embed(c);
    if (!c->use_embeddings) {
        memcpy(hidden0, m->toy_x, (size_t)n * d * sizeof(float));
        return;
    }
    const atn_weights *w = &m->w;
    float *e = w->emb_proj_w ? scratch : hidden0;
    for (int32_t i = 0; i < n; i++) {
        float *x = e + (size_t)i * E;
        const float *we = w->word_emb + (size_t)enc->ids[i] * E;
        const float *pe = w->pos_emb + (size_t)pos_ids[i] * E;
        if (no_positions) {   /* the what-if lab: the same sum without the position term */
            const float *te = w->type_emb ? w->type_emb + (size_t)enc->type_ids[i] * E : NULL;
            for (int32_t j = 0; j < E; j++)
                x[j] = te ? we[j] + te[j] : we[j];
        } else if (w->type_emb) {
            const float *te = w->type_emb + (size_t)enc->type_ids[i] * E;
            for (int32_t j = 0; j < E; j++)
                x[j] = we[j] + pe[j] + te[j];
        } else {
            for (int32_t j = 0; j < E; j++)
                x[j] = we[j] + pe[j];
        }
    }
    if (!m->family->pre_ln)   /* GPT-2 has no embedding LayerNorm: h0 = wte + wpe */
        atn_layernorm(e, e, w->emb_ln_g, w->emb_ln_b, n, E, c->ln_eps);
    if (w->emb_proj_w)
        atn_linear(hidden0, operand(a, e, (size_t)n * E, 0, ATN_OPERAND_INPUT), proj_w, w->emb_proj_b, n, E, d);
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
                          const atn_config *c, int32_t n, const atn_activations *a, int32_t l) {
    int32_t d = c->d_model, f = c->d_ffn, row = l + 1;
    size_t nd = (size_t)n * d;
    const float *xr = operand(a, x, nd, row, ATN_OPERAND_INPUT);
    atn_linear(q, xr, lw->wq, lw->bq, n, d, d);
    atn_linear(k, xr, lw->wk, lw->bk, n, d, d);
    atn_linear(v, xr, lw->wv, lw->bv, n, d, d);
    if (a->precision != ATN_PRECISION_FP32)
        attention_rounded(ctx, att, q, k, v, mask_add, n, d, c->n_heads, 1.0f / sqrtf((float)c->d_head), a, l);
    else if (atn_activations_gated(a))
        atn_attention_iv(ctx, att, q, k, v, mask_add, n, d, c->n_heads, 1.0f / sqrtf((float)c->d_head),
                         a->alibi_slopes, a->temperature,
                         a->heads_off ? a->heads_off + (size_t)l * c->n_heads : NULL, a->head_mode);
    else
        atn_attention(ctx, att, q, k, v, mask_add, n, d, c->n_heads);
    atn_linear(attn_out, operand(a, ctx, nd, row, ATN_OPERAND_CONTEXT), lw->wo, lw->bo, n, d, d);
    memcpy(h1, attn_out, nd * sizeof(float));
    if (c->use_residual)
        add_inplace(h1, x, nd);
    if (c->use_layernorm)
        atn_layernorm(h1, h1, lw->ln1_g, lw->ln1_b, n, d, c->ln_eps);
    if (!c->use_ffn) {
        memcpy(out, h1, nd * sizeof(float));
        return;
    }
    atn_linear(ffn, operand(a, h1, nd, row, ATN_OPERAND_FFN_IN), lw->w1, lw->b1, n, d, f);
    atn_activate(ffn, (size_t)n * f, c->act);
    atn_linear(out, operand(a, ffn, (size_t)n * f, row, ATN_OPERAND_FFN_MID), lw->w2, lw->b2, n, f, d);
    if (c->use_residual)
        add_inplace(out, h1, nd);
    if (c->use_layernorm)
        atn_layernorm(out, out, lw->ln2_g, lw->ln2_b, n, d, c->ln_eps);
}

/* One pre-LN block (GPT-2's GPT2Block): r = x + Attn(LN1(x)) W_O^T, out = r + FFN(LN2(r)).
 * attn_out keeps Attn(LN1(x)) W_O^T + b_O (before the residual), as for BERT. */
static void layer_forward_pre_ln(float *out, float *q, float *k, float *v, float *ctx, float *attn_out, float *att,
                                 float *h1, float *ffn, const float *x, const float *mask_add,
                                 const atn_layer_weights *lw, const atn_config *c, int32_t n, float scale,
                                 const atn_activations *a, int32_t l) {
    int32_t d = c->d_model, f = c->d_ffn, row = l + 1;
    size_t nd = (size_t)n * d;
    atn_layernorm(h1, x, lw->ln1_g, lw->ln1_b, n, d, c->ln_eps);
    const float *xr = operand(a, h1, nd, row, ATN_OPERAND_INPUT);
    atn_linear(q, xr, lw->wq, lw->bq, n, d, d);
    atn_linear(k, xr, lw->wk, lw->bk, n, d, d);
    atn_linear(v, xr, lw->wv, lw->bv, n, d, d);
    if (a->precision != ATN_PRECISION_FP32)
        attention_rounded(ctx, att, q, k, v, mask_add, n, d, c->n_heads, scale, a, l);
    else if (atn_activations_gated(a))
        atn_attention_iv(ctx, att, q, k, v, mask_add, n, d, c->n_heads, scale, a->alibi_slopes, a->temperature,
                         a->heads_off ? a->heads_off + (size_t)l * c->n_heads : NULL, a->head_mode);
    else
        atn_attention_scaled(ctx, att, q, k, v, mask_add, n, d, c->n_heads, scale);
    atn_linear(attn_out, operand(a, ctx, nd, row, ATN_OPERAND_CONTEXT), lw->wo, lw->bo, n, d, d);
    for (size_t i = 0; i < nd; i++)
        out[i] = x[i] + attn_out[i];
    atn_layernorm(h1, out, lw->ln2_g, lw->ln2_b, n, d, c->ln_eps);
    atn_linear(ffn, operand(a, h1, nd, row, ATN_OPERAND_FFN_IN), lw->w1, lw->b1, n, d, f);
    atn_activate(ffn, (size_t)n * f, c->act);
    atn_linear(h1, operand(a, ffn, (size_t)n * f, row, ATN_OPERAND_FFN_MID), lw->w2, lw->b2, n, f, d);
    add_inplace(out, h1, nd);
}

/* ---- the fast path -------------------------------------------------------------- */

enum { MAX_THREADS = 64 };

/* One process-wide team; a forward holds the lock while it uses it (and while it packs a
 * model's weights, which writes model->cpu_packed). */
static pthread_mutex_t team_lock = PTHREAD_MUTEX_INITIALIZER;
static atn_team *team;

/* The packed copy of one model's layer weights (model->cpu_packed). */
typedef atn_packed_layer packed_layer;   /* encoder.h */

typedef struct packed_weights {
    int32_t n_layers;
    size_t bytes;
    packed_layer *layers;
} packed_weights;

size_t atn_cpu_packed_bytes(const atn_model *model) {
    pthread_mutex_lock(&team_lock);
    const packed_weights *pk = model->cpu_packed;
    size_t bytes = pk ? pk->bytes : 0;   /* shared layers (ALBERT) counted once */
    pthread_mutex_unlock(&team_lock);
    return bytes;
}

/* fork() copies the team pointer but not its threads: a child must start its own.  The
 * lock is taken around the fork, so no forward is halfway through in the child. */
static void before_fork(void) { pthread_mutex_lock(&team_lock); }
static void after_fork_parent(void) { pthread_mutex_unlock(&team_lock); }
static void after_fork_child(void) {
    team = NULL;   /* its memory is leaked in the child; its threads do not exist there */
    pthread_mutex_unlock(&team_lock);
}
static void register_fork_handlers(void) { pthread_atfork(before_fork, after_fork_parent, after_fork_child); }
static pthread_once_t fork_once = PTHREAD_ONCE_INIT;

__attribute__((destructor)) static void team_release(void) {
    if (pthread_mutex_trylock(&team_lock) == 0) {
        atn_team_free(team);
        team = NULL;
        pthread_mutex_unlock(&team_lock);
    }
}

static bool fast_path_applies(const atn_model *m) {
    const atn_config *c = &m->cfg;
    if (m->kind != ATN_MODEL_BERT || !c->use_embeddings || !c->use_bias || !c->use_layernorm || !c->use_ffn ||
        !c->use_residual || !atn_cpu_kernels_usable() || !m->w.layers)   /* no layers: nothing to pack */
        return false;
    for (int32_t l = 0; l < c->n_layers; l++) {
        const atn_layer_weights *w = &m->w.layers[l];
        if (!w->wq || !w->wk || !w->wv || !w->wo || !w->w1 || !w->w2)
            return false;
    }
    return true;
}

static size_t pack_bytes(const atn_config *c) {
    int32_t d = c->d_model, f = c->d_ffn;
    size_t per_layer = 4 * atn_packed_floats(d, d) + atn_packed_floats(f, d) + atn_packed_floats(d, f);
    return (size_t)c->n_layers * per_layer * sizeof(float);
}

size_t atn_cpu_pack_pending_bytes(const atn_model *model) {
    if (!fast_path_applies(model))
        return 0;
    pthread_mutex_lock(&team_lock);
    size_t bytes = model->cpu_packed ? 0 : pack_bytes(&model->cfg);
    pthread_mutex_unlock(&team_lock);
    return bytes;
}

typedef struct pack_job {
    const atn_model *m;
    packed_weights *pk;
    atn_team *team;        /* NULL: one thread */
} pack_job;

/* The first captured layer that runs the same weights as layer l (ALBERT shares them):
 * l itself when none before it does. */
static int32_t first_sharing(const atn_model *m, int32_t l) {
    const atn_layer_weights *w = &m->w.layers[l];
    for (int32_t e = 0; e < l; e++) {
        const atn_layer_weights *x = &m->w.layers[e];
        if (x->wq == w->wq && x->wk == w->wk && x->wv == w->wv && x->wo == w->wo && x->w1 == w->w1 && x->w2 == w->w2)
            return e;
    }
    return l;
}

/* Packs every matrix, the panels of each split between the threads; a layer whose weights
 * an earlier layer already has is not packed again (packed_for points it there).  Once a
 * layer is packed, the pages of its F32 matrices that are a mapping of the model's file are
 * given back (atn_model_release_file_pages): from here on the forward reads the packed copy,
 * and keeping both would hold the layer weights twice (issue 18: bert-base at 512 tokens
 * peaked at 1.58x weights + capture).  Layer by layer, so that the peak never holds both
 * copies of more than one layer. */
static void pack_worker(void *arg, int tid, int nt) {
    pack_job *j = arg;
    const atn_config *c = &j->m->cfg;
    int32_t d = c->d_model, f = c->d_ffn;
    for (int32_t l = 0; l < c->n_layers; l++) {
        if (first_sharing(j->m, l) != l)
            continue;
        const atn_layer_weights *w = &j->m->w.layers[l];
        packed_layer *p = &j->pk->layers[l];
        const float *src[6] = {w->wq, w->wk, w->wv, w->wo, w->w1, w->w2};
        const float *dst[6] = {p->wq, p->wk, p->wv, p->wo, p->w1, p->w2};
        int32_t outs[6] = {d, d, d, d, f, d}, ins[6] = {d, d, d, d, d, f};
        for (int t = 0; t < 6; t++) {
            int lo, hi;
            atn_team_split(atn_panels(outs[t]), tid, nt, &lo, &hi);
            atn_pack_weight((float *)dst[t], src[t], outs[t], ins[t], lo, hi);
        }
        if (j->team)
            atn_team_barrier(j->team);   /* every thread is done reading this layer's matrices */
        if (tid == 0)
            for (int t = 0; t < 6; t++)
                (void)atn_model_release_file_pages(j->m, src[t], (size_t)outs[t] * ins[t] * sizeof(float));
    }
}

/* The model's packed weights, made on first use by team t (NULL: this thread alone), with
 * team_lock held.  NULL when memory is short: the forward then fails with ATN_E_NOMEM. */
static const packed_weights *packed_for(const atn_model *model, atn_team *t) {
    atn_model *m = (atn_model *)model;   /* cpu_packed is a cache: filling it does not change the model */
    if (m->cpu_packed)
        return m->cpu_packed;
    const atn_config *c = &m->cfg;
    int32_t d = c->d_model, f = c->d_ffn, L = c->n_layers;
    size_t per_layer = 4 * atn_packed_floats(d, d) + atn_packed_floats(f, d) + atn_packed_floats(d, f);
    packed_weights *pk = calloc(1, sizeof *pk + (size_t)L * sizeof(packed_layer));
    if (!pk)
        return NULL;
    int32_t distinct = 0;   /* ALBERT: the stored layers, packed once however often they run */
    for (int32_t l = 0; l < L; l++)
        distinct += first_sharing(m, l) == l;
    size_t bytes = (size_t)distinct * per_layer * sizeof(float);
    pk->n_layers = L;
    pk->bytes = bytes;
    pk->layers = (packed_layer *)(pk + 1);
    float *block = atn_alloc_big(bytes);
    if (!block) {
        free(pk);
        return NULL;
    }
    float *p = block;
    for (int32_t l = 0; l < L; l++) {
        packed_layer *pl = &pk->layers[l];
        int32_t first = first_sharing(m, l);
        if (first != l) {
            *pl = pk->layers[first];
            continue;
        }
        pl->wq = p, p += atn_packed_floats(d, d);
        pl->wk = p, p += atn_packed_floats(d, d);
        pl->wv = p, p += atn_packed_floats(d, d);
        pl->wo = p, p += atn_packed_floats(d, d);
        pl->w1 = p, p += atn_packed_floats(f, d);
        pl->w2 = p, p += atn_packed_floats(d, f);
    }
    pack_job job = {m, pk, t};
    if (t)
        atn_team_run(t, pack_worker, &job);
    else
        pack_worker(&job, 0, 1);
    if (!atn_model_own(m, block, bytes, false)) {   /* frees block */
        free(pk);
        return NULL;
    }
    if (!atn_model_own(m, pk, sizeof *pk, false))   /* the block stays owned; only pk is lost */
        return NULL;
    m->cpu_packed = pk;
    return pk;
}

typedef struct fast_job {
    atn_team *team;            /* NULL: one thread */
    const atn_model *m;
    const packed_weights *pk;
    atn_activations *a;
    const atn_run_options *opts;
    int32_t n;
    float *scratch;            /* [threads][scratch_floats] for the attention */
    size_t scratch_floats;
    bool stop;                 /* set by thread 0 when the progress callback cancels */
    int32_t stop_layer;
    bool bad[MAX_THREADS];     /* a thread's rows of this layer's output had NaN/Inf */
} fast_job;

static void sync_threads(const fast_job *j) {
    if (j->team)
        atn_team_barrier(j->team);
}

/* One thread's share of every layer.  Between the phases, a barrier: each phase reads
 * what all threads wrote in the one before. */
static void fast_worker(void *arg, int tid, int nt) {
    fast_job *j = arg;
    const atn_model *m = j->m;
    const atn_config *c = &m->cfg;
    atn_activations *a = j->a;
    int32_t n = j->n, d = c->d_model, f = c->d_ffn, H = c->n_heads, kd = d / H;
    size_t nd = (size_t)n * d;
    bool pre_ln = m->family->pre_ln;
    float *scratch = j->scratch + (size_t)tid * j->scratch_floats;
    int lo, hi;
    for (int32_t l = 0; l < c->n_layers; l++) {
        if (tid == 0) {
            const atn_run_options *o = j->opts;
            if (o->progress && !o->progress((double)l / c->n_layers, ATN_STAGE_LAYER, o->user_data)) {
                j->stop = true;
                j->stop_layer = l;
            }
        }
        sync_threads(j);
        if (j->stop)
            return;
        const atn_layer_weights *w = &m->w.layers[l];
        const packed_layer *pw = &j->pk->layers[l];
        size_t t = a->trace_stride * l;
        const float *x = a->hidden + (size_t)l * nd;   /* [n,d] layer input */
        float *out = a->hidden + (size_t)(l + 1) * nd;
        float *q = a->q + t, *k = a->k + t, *v = a->v + t, *ctx = a->ctx + t, *ao = a->attn_out + t;
        float *att = a->attn + a->attn_stride * l;       /* [H][n][n] */
        float scale = atn_attn_scale(m, l);

        /* pre-LN (GPT-2): the projections read LN1(x), in h1 */
        const float *xin = x;
        if (pre_ln) {
            atn_team_split(n, tid, nt, &lo, &hi);
            atn_layernorm_rows(a->h1, x, NULL, w->ln1_g, w->ln1_b, lo, hi, d, c->ln_eps);
            sync_threads(j);
            xin = a->h1;
        }

        /* q, k, v [n,d] = x W^T + b */
        atn_team_split(atn_panels(d), tid, nt, &lo, &hi);
        atn_gemm_packed(q, d, xin, d, pw->wq, w->bq, NULL, 0, n, d, d, lo, hi, -1);
        atn_gemm_packed(k, d, xin, d, pw->wk, w->bk, NULL, 0, n, d, d, lo, hi, -1);
        atn_gemm_packed(v, d, xin, d, pw->wv, w->bv, NULL, 0, n, d, d, lo, hi, -1);
        sync_threads(j);

        /* attention: whole heads per thread when they divide evenly, else each head's
           query rows split between the threads too */
        int32_t chunks = H % nt == 0 ? 1 : nt, last_head = -1;
        atn_team_split(H * chunks, tid, nt, &lo, &hi);
        for (int32_t item = lo; item < hi; item++) {
            int32_t h = item / chunks, r0, r1;
            atn_team_split(n, item % chunks, chunks, &r0, &r1);
            size_t col = (size_t)h * kd;
            atn_attention_rows(ctx + col, att + (size_t)h * n * n, q + col, k + col, v + col, d, a->mask_add, n, kd,
                               r0, r1, scale, scratch, h != last_head);
            last_head = h;
        }
        sync_threads(j);

        /* attn_out = ctx W_O^T + b_O;  h1 = LN1(x + attn_out) */
        atn_team_split(atn_panels(d), tid, nt, &lo, &hi);
        atn_gemm_packed(ao, d, ctx, d, pw->wo, w->bo, NULL, 0, n, d, d, lo, hi, -1);
        sync_threads(j);
        if (pre_ln) {
            /* out = x + attn_out (the residual stream); h1 = LN2(out); then
               h1 = ffn W2^T + b2 + out (into h1: the product may not write where its
               residual is read), copied back into out; ln_f after the last block */
            atn_team_split(n, tid, nt, &lo, &hi);
            for (size_t i = (size_t)lo * d; i < (size_t)hi * d; i++)
                out[i] = x[i] + ao[i];
            atn_layernorm_rows(a->h1, out, NULL, w->ln2_g, w->ln2_b, lo, hi, d, c->ln_eps);
            sync_threads(j);
            atn_team_split(atn_panels(f), tid, nt, &lo, &hi);
            atn_gemm_packed(a->ffn, f, a->h1, d, pw->w1, w->b1, NULL, 0, n, f, d, lo, hi, (int)c->act);
            sync_threads(j);
            atn_team_split(atn_panels(d), tid, nt, &lo, &hi);
            atn_gemm_packed(a->h1, d, a->ffn, f, pw->w2, w->b2, out, d, n, d, f, lo, hi, -1);
            sync_threads(j);
            atn_team_split(n, tid, nt, &lo, &hi);
            memcpy(out + (size_t)lo * d, a->h1 + (size_t)lo * d, (size_t)(hi - lo) * d * sizeof(float));
            if (l == c->n_layers - 1)
                atn_layernorm_rows(out, out, NULL, m->w.final_ln_g, m->w.final_ln_b, lo, hi, d, c->ln_eps);
            j->bad[tid] = !all_finite(out + (size_t)lo * d, (size_t)(hi - lo) * d);
            sync_threads(j);
            if (tid == 0 && a->nonfinite_layer < 0)
                for (int i = 0; i < nt; i++)
                    if (j->bad[i]) {
                        a->nonfinite_layer = l;
                        break;
                    }
            continue;
        }
        atn_team_split(n, tid, nt, &lo, &hi);
        atn_layernorm_rows(a->h1, ao, x, w->ln1_g, w->ln1_b, lo, hi, d, c->ln_eps);
        sync_threads(j);

        /* ffn = act(h1 W1^T + b1);  out = LN2(ffn W2^T + b2 + h1) */
        atn_team_split(atn_panels(f), tid, nt, &lo, &hi);
        atn_gemm_packed(a->ffn, f, a->h1, d, pw->w1, w->b1, NULL, 0, n, f, d, lo, hi, (int)c->act);
        sync_threads(j);
        atn_team_split(atn_panels(d), tid, nt, &lo, &hi);
        atn_gemm_packed(out, d, a->ffn, f, pw->w2, w->b2, a->h1, d, n, d, f, lo, hi, -1);
        sync_threads(j);
        atn_team_split(n, tid, nt, &lo, &hi);
        j->bad[tid] = !atn_layernorm_rows(out, out, NULL, w->ln2_g, w->ln2_b, lo, hi, d, c->ln_eps);
        sync_threads(j);   /* thread 0 reads bad[] before anyone writes it again */
        if (tid == 0 && a->nonfinite_layer < 0)
            for (int i = 0; i < nt; i++)
                if (j->bad[i]) {
                    a->nonfinite_layer = l;
                    break;
                }
    }
}

/* Threads for a forward of n tokens: opts->threads (0: as many as OpenBLAS would use), but
 * at least ~25 MFLOP of each layer per thread.  Below that a layer takes well under a
 * millisecond and its eight barriers would cost more than a second thread saves (on a
 * loaded machine, a barrier can cost a whole scheduler time slice). */
static int team_threads(const atn_config *c, int32_t n, const atn_run_options *opts) {
    int nt = opts->threads > 0 ? opts->threads : openblas_get_num_threads();
    double d = c->d_model, layer_flops = 8.0 * n * d * d + 4.0 * n * n * d + 4.0 * n * d * c->d_ffn;
    double most = layer_flops / 25e6;
    if (nt > most)
        nt = (int)most;
    return nt < 1 ? 1 : nt > MAX_THREADS ? MAX_THREADS : nt;
}

/* ATN_E_NOMEM (nothing touched) when the packed weights cannot be made: memory is short, and
 * the cblas path would then go into OpenBLAS's allocator, which under RLIMIT_AS loops instead
 * of failing; never fall back into a path that cannot fail cleanly. */
static atn_status fast_forward(const atn_model *m, const atn_encoding *enc, atn_activations *a,
                               const atn_run_options *opts, atn_error *err) {
    const atn_config *c = &m->cfg;
    int32_t n = enc->n;
    int nt = team_threads(c, n, opts);
    size_t per_thread = (atn_attention_scratch_floats(n, c->d_model / c->n_heads) + 15) / 16 * 16;
    float *scratch = aligned_alloc(64, (size_t)nt * per_thread * sizeof(float));
    if (!scratch)
        return atn_error_set(err, ATN_E_NOMEM, "out of memory for the attention scratch of %d tokens", n);
    pthread_once(&fork_once, register_fork_handlers);
    pthread_mutex_lock(&team_lock);
    if (nt > 1 && (!team || atn_team_size(team) != nt)) {
        atn_team_free(team);
        team = atn_team_new(nt);
        if (!team)
            nt = 1;   /* no threads to be had: run on this one */
    }
    atn_team *use = nt > 1 ? team : NULL;   /* a one-thread forward leaves the team as it is */
    const packed_weights *pk = packed_for(m, use);
    if (!pk) {
        pthread_mutex_unlock(&team_lock);
        free(scratch);
        return atn_error_set(err, ATN_E_NOMEM, "out of memory packing the weights for the CPU (%.1f MB)",
                             pack_bytes(c) / 1e6);
    }
    fast_job job;
    memset(&job, 0, sizeof job);
    job.team = use, job.m = m, job.pk = pk, job.a = a, job.opts = opts, job.n = n;
    job.scratch = scratch, job.scratch_floats = per_thread;
    if (use)
        atn_team_run(use, fast_worker, &job);
    else
        fast_worker(&job, 0, 1);
    pthread_mutex_unlock(&team_lock);
    free(scratch);
    if (job.stop)
        return atn_error_set(err, ATN_E_CANCELLED, "cancelled at layer %d", job.stop_layer);
    return ATN_OK;
}

/* ---- for the stacked forward of several sequences (engine/forward/batch.c) ------------- */

bool atn_cpu_fast_applies(const atn_model *m) { return fast_path_applies(m); }

void atn_cpu_embeddings(float *hidden0, float *scratch, const atn_model *m, const atn_encoding *enc,
                        const int32_t *pos_ids, bool no_positions) {
    embeddings_forward(hidden0, scratch, m, enc, pos_ids, no_positions, NULL, m->w.emb_proj_w);
}

typedef struct packed_call {
    atn_packed_worker fn;
    void *arg;
    atn_team *team;
    const atn_packed_layer *layers;
} packed_call;

static void packed_trampoline(void *arg, int tid, int nt) {
    packed_call *pc = arg;
    pc->fn(pc->arg, tid, nt, pc->team, pc->layers);
}

atn_status atn_cpu_run_packed(const atn_model *m, int nt, atn_packed_worker fn, void *arg, atn_error *err) {
    nt = nt < 1 ? 1 : nt > MAX_THREADS ? MAX_THREADS : nt;
    pthread_once(&fork_once, register_fork_handlers);
    pthread_mutex_lock(&team_lock);
    if (nt > 1 && (!team || atn_team_size(team) != nt)) {
        atn_team_free(team);
        team = atn_team_new(nt);
        if (!team)
            nt = 1;
    }
    atn_team *use = nt > 1 ? team : NULL;
    const packed_weights *pk = packed_for(m, use);
    if (!pk) {
        pthread_mutex_unlock(&team_lock);
        return atn_error_set(err, ATN_E_NOMEM, "out of memory packing the weights for the CPU (%.1f MB)",
                             pack_bytes(&m->cfg) / 1e6);
    }
    packed_call pc = {fn, arg, use, pk->layers};
    if (use)
        atn_team_run(use, packed_trampoline, &pc);
    else
        packed_trampoline(&pc, 0, 1);
    pthread_mutex_unlock(&team_lock);
    return ATN_OK;
}

atn_status atn_cpu_forward(const atn_model *m, const atn_encoding *enc, atn_activations *a,
                           const atn_run_options *opts, atn_error *err) {
    const atn_config *c = &m->cfg;
    int32_t n = enc->n, d = c->d_model;
    size_t nd = (size_t)n * d;
    /* reduced precision: the model's rounded weights (made once; a toy model's per run) */
    const atn_rounded_weights *rw = NULL;
    if (a->precision != ATN_PRECISION_FP32) {
        if (!a->round_buf || !(rw = atn_rounded_weights_get(m, a->precision)))
            return atn_error_set(err, ATN_E_NOMEM, "out of memory rounding the weights to %s",
                                 atn_precision_name(a->precision));
        for (int32_t r = a->start_layer > 0 ? a->start_layer + 1 : 0; a->overflow && r <= c->n_layers; r++)
            a->overflow[(size_t)r * ATN_OPERAND_COUNT + ATN_OPERAND_WEIGHTS] += rw->weight_overflow[r];
    }
    const atn_layer_weights *layers = rw ? rw->layers : m->w.layers;
    /* the embeddings before their projection: E-wide rows in the ffn buffer (run.c sizes it
       for them), or in h1 when E == d (ALBERT always projects) */
    if (a->start_layer == 0)
        embeddings_forward(a->hidden, atn_d_embed(c) == d ? a->h1 : a->ffn, m, enc, a->pos_ids, a->no_positions, a,
                           rw ? rw->emb_proj_w : m->w.emb_proj_w);
    a->nonfinite_layer = all_finite(a->hidden, nd) ? -1 : 0;
    /* the fast path reads the mask (so masks need nothing of it) but applies no per-head
       intervention and no rounding: with one, the cblas path below runs */
    if (fast_path_applies(m) && !atn_activations_gated(a) && !rw) {
        atn_status st = fast_forward(m, enc, a, opts, err);
        if (st == ATN_OK && opts->progress)
            opts->progress(1.0, ATN_STAGE_DONE, opts->user_data);
        return st;
    }
    for (int32_t l = a->start_layer; l < c->n_layers; l++) {
        if (opts->progress && !opts->progress((double)l / c->n_layers, ATN_STAGE_LAYER, opts->user_data)) {
            atn_rounded_weights_free(rw);
            return atn_error_set(err, ATN_E_CANCELLED, "cancelled at layer %d", l);
        }
        size_t t = a->trace_stride * l;
        float *out = a->hidden + (size_t)(l + 1) * nd;
        if (m->family->pre_ln) {
            layer_forward_pre_ln(out, a->q + t, a->k + t, a->v + t, a->ctx + t, a->attn_out + t,
                                 a->attn + a->attn_stride * l, a->h1, a->ffn, a->hidden + (size_t)l * nd,
                                 atn_layer_mask(a, l), &layers[l], c, n, atn_attn_scale(m, l), a, l);
            if (l == c->n_layers - 1)   /* ln_f: the last hidden state is after it, as HF's */
                atn_layernorm(out, out, m->w.final_ln_g, m->w.final_ln_b, n, d, c->ln_eps);
        } else {
            layer_forward(out, a->q + t, a->k + t, a->v + t, a->ctx + t, a->attn_out + t,
                          a->attn + a->attn_stride * l, a->h1, a->ffn, a->hidden + (size_t)l * nd, atn_layer_mask(a, l),
                          &layers[l], c, n, a, l);
        }
        if (a->nonfinite_layer < 0 && !all_finite(out, nd))
            a->nonfinite_layer = l;
    }
    atn_rounded_weights_free(rw);
    if (opts->progress)
        opts->progress(1.0, ATN_STAGE_DONE, opts->user_data);
    return ATN_OK;
}
