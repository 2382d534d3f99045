/* Reduced precision on the CPU: rounding (bf16 by bit operations, fp16 by F16C or the
 * scalar function) and the model's rounded weights.  See precision.h. */
#include "forward/precision.h"
#include "forward/fp16.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define ATN_HAVE_F16C_BUILD 1
#endif

float atn_round_fp16(float x) { return atn_f16_to_f32(atn_f32_to_f16_bits(x)); }

static int64_t round_scalar(float *dst, const float *src, size_t count, atn_precision p) {
    int64_t over = 0;
    if (p == ATN_PRECISION_BF16) {
        for (size_t i = 0; i < count; i++) {
            float x = src[i], r = atn_round_bf16(x);
            over += isinf(r) && !isinf(x);
            dst[i] = r;
        }
    } else if (p == ATN_PRECISION_FP16) {
        for (size_t i = 0; i < count; i++) {
            float x = src[i], r = atn_round_fp16(x);
            over += isinf(r) && !isinf(x);
            dst[i] = r;
        }
    } else if (dst != src) {
        memcpy(dst, src, count * sizeof(float));
    }
    return over;
}

int64_t atn_round_array_scalar(float *dst, const float *src, size_t count, atn_precision p) {
    return round_scalar(dst, src, count, p);
}

#ifdef ATN_HAVE_F16C_BUILD
/* 8 floats at a time: vcvtps2ph with round-to-nearest-even (the immediate, not MXCSR), back
 * with vcvtph2ps (exact).  Overflow: finite inputs whose result is infinite. */
__attribute__((target("avx,f16c"))) static int64_t round_fp16_f16c(float *dst, const float *src, size_t count) {
    int64_t over = 0;
    const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
    const __m256 inf = _mm256_set1_ps(INFINITY);
    size_t i = 0;
    for (; i + 8 <= count; i += 8) {
        __m256 x = _mm256_loadu_ps(src + i);
        __m128i h = _mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        __m256 r = _mm256_cvtph_ps(h);
        __m256 r_inf = _mm256_cmp_ps(_mm256_and_ps(r, abs_mask), inf, _CMP_EQ_OQ);
        __m256 x_fin = _mm256_cmp_ps(_mm256_and_ps(x, abs_mask), inf, _CMP_LT_OQ);
        over += __builtin_popcount((unsigned)_mm256_movemask_ps(_mm256_and_ps(r_inf, x_fin)));
        _mm256_storeu_ps(dst + i, r);
    }
    return over + round_scalar(dst + i, src + i, count - i, ATN_PRECISION_FP16);
}
#endif

bool atn_round_uses_f16c(void) {
#ifdef ATN_HAVE_F16C_BUILD
    return atn_cpu_features()->f16c_rounding;
#else
    return false;
#endif
}

int64_t atn_round_array(float *dst, const float *src, size_t count, atn_precision p) {
#ifdef ATN_HAVE_F16C_BUILD
    if (p == ATN_PRECISION_FP16 && atn_round_uses_f16c())
        return round_fp16_f16c(dst, src, count);
#endif
    return round_scalar(dst, src, count, p);
}

size_t atn_round_scratch_floats(const atn_config *c, int32_t n) {
    size_t w = (size_t)c->d_model;
    if (c->use_ffn && (size_t)c->d_ffn > w)
        w = (size_t)c->d_ffn;
    if ((size_t)atn_d_embed(c) > w)
        w = (size_t)atn_d_embed(c);
    size_t a = (size_t)n * w, b = (size_t)n * n;
    return a > b ? a : b;
}

/* ---- the rounded weights ---------------------------------------------------------- */

static pthread_mutex_t rounded_lock = PTHREAD_MUTEX_INITIALIZER;

enum { N_MATS = 6 };

static void layer_mats(const atn_layer_weights *w, const float *const **out) {
    out[0] = &w->wq, out[1] = &w->wk, out[2] = &w->wv, out[3] = &w->wo, out[4] = &w->w1, out[5] = &w->w2;
}

static void mat_shapes(const atn_config *c, size_t *counts) {
    size_t d = (size_t)c->d_model, f = (size_t)c->d_ffn;
    counts[0] = counts[1] = counts[2] = counts[3] = d * d;
    counts[4] = counts[5] = f * d;
}

/* The earlier layer whose matrix m of layer l is the same storage (ALBERT), or -1. */
static int32_t shared_with(const atn_model *m, int32_t l, int t) {
    const float *const *ml[N_MATS];
    layer_mats(&m->w.layers[l], ml);
    for (int32_t e = 0; e < l; e++) {
        const float *const *me[N_MATS];
        layer_mats(&m->w.layers[e], me);
        if (*me[t] == *ml[t])
            return e;
    }
    return -1;
}

static size_t rounded_bytes(const atn_model *m) {
    const atn_config *c = &m->cfg;
    size_t counts[N_MATS], floats = 0;
    mat_shapes(c, counts);
    for (int32_t l = 0; l < c->n_layers; l++) {
        const float *const *ml[N_MATS];
        layer_mats(&m->w.layers[l], ml);
        for (int t = 0; t < N_MATS; t++)
            if (*ml[t] && shared_with(m, l, t) < 0)
                floats += counts[t];
    }
    if (m->w.emb_proj_w)
        floats += (size_t)c->d_model * atn_d_embed(c);
    return floats * sizeof(float) + (size_t)c->n_layers * sizeof(atn_layer_weights) +
           (size_t)(c->n_layers + 1) * sizeof(int64_t) + sizeof(atn_rounded_weights);
}

/* One allocation: the struct, the layer table, the overflow counts, the matrices. */
static atn_rounded_weights *make_rounded(const atn_model *m, atn_precision p, size_t *bytes_out) {
    const atn_config *c = &m->cfg;
    int32_t L = c->n_layers;
    size_t bytes = rounded_bytes(m);
    char *block = atn_alloc_big(bytes);
    if (!block)
        return NULL;
    atn_rounded_weights *rw = (atn_rounded_weights *)block;
    memset(rw, 0, sizeof *rw);
    rw->precision = p;
    rw->layers = (atn_layer_weights *)(rw + 1);
    rw->weight_overflow = (int64_t *)(rw->layers + L);
    float *next = (float *)(rw->weight_overflow + L + 1);
    memset(rw->weight_overflow, 0, (size_t)(L + 1) * sizeof(int64_t));
    if (m->w.emb_proj_w) {
        size_t cnt = (size_t)c->d_model * atn_d_embed(c);
        rw->weight_overflow[0] += atn_round_array(next, m->w.emb_proj_w, cnt, p);
        rw->emb_proj_w = next;
        next += cnt;
    }
    size_t counts[N_MATS];
    mat_shapes(c, counts);
    for (int32_t l = 0; l < L; l++) {
        rw->layers[l] = m->w.layers[l];
        const float *const *src[N_MATS];
        layer_mats(&m->w.layers[l], src);
        const float **dst[N_MATS] = {&rw->layers[l].wq, &rw->layers[l].wk, &rw->layers[l].wv,
                                     &rw->layers[l].wo, &rw->layers[l].w1, &rw->layers[l].w2};
        for (int t = 0; t < N_MATS; t++) {
            if (!*src[t])
                continue;   /* identity (toy): nothing to round */
            int32_t e = shared_with(m, l, t);
            if (e >= 0) {
                const float *const *de[N_MATS];
                layer_mats(&rw->layers[e], de);
                *dst[t] = *de[t];
                continue;
            }
            rw->weight_overflow[l + 1] += atn_round_array(next, *src[t], counts[t], p);
            *dst[t] = next;
            next += counts[t];
        }
    }
    *bytes_out = bytes;
    return rw;
}

const atn_rounded_weights *atn_rounded_weights_get(const atn_model *model, atn_precision p) {
    if (p != ATN_PRECISION_BF16 && p != ATN_PRECISION_FP16)
        return NULL;
    atn_model *m = (atn_model *)model;   /* a cache: filling it does not change the model */
    size_t bytes;
    if (m->kind == ATN_MODEL_TOY) {
        atn_rounded_weights *rw = make_rounded(m, p, &bytes);
        if (rw)
            rw->temporary = true;
        return rw;
    }
    pthread_mutex_lock(&rounded_lock);
    atn_rounded_weights *rw = m->cpu_rounded[p];
    if (!rw) {
        rw = make_rounded(m, p, &bytes);
        if (rw && !atn_model_own(m, rw, bytes, false))   /* frees rw */
            rw = NULL;
        m->cpu_rounded[p] = rw;
    }
    pthread_mutex_unlock(&rounded_lock);
    return rw;
}

void atn_rounded_weights_free(const atn_rounded_weights *rw) {
    if (rw && rw->temporary)
        free((void *)rw);
}

size_t atn_rounded_pending_bytes(const atn_model *m, atn_precision p) {
    if (p != ATN_PRECISION_BF16 && p != ATN_PRECISION_FP16)
        return 0;
    if (m->kind == ATN_MODEL_TOY)
        return rounded_bytes(m);
    pthread_mutex_lock(&rounded_lock);
    size_t b = m->cpu_rounded[p] ? 0 : rounded_bytes(m);
    pthread_mutex_unlock(&rounded_lock);
    return b;
}

/* ---- the public face ------------------------------------------------------------ */

const char *atn_precision_name(atn_precision p) {
    switch (p) {
    case ATN_PRECISION_FP32: return "fp32";
    case ATN_PRECISION_FP16: return "fp16";
    case ATN_PRECISION_BF16: return "bf16";
    }
    return "?";
}

const char *atn_operand_name(atn_operand op) {
    static const char *const names[ATN_OPERAND_COUNT] = {
        "weights", "layer input (read by W_Q, W_K, W_V)", "Q", "K", "V", "attention probabilities",
        "heads' context (read by W_O)", "feed-forward input (read by W_1)", "feed-forward activation (read by W_2)",
    };
    return (unsigned)op < ATN_OPERAND_COUNT ? names[op] : "?";
}

const char *atn_cpu_precision_note(atn_precision p) {
    bool bf16_insn = false, fp16_insn = false;
    if (p == ATN_PRECISION_FP32)
        return "";
    bf16_insn = atn_cpu_features()->avx512_bf16;
    fp16_insn = atn_cpu_features()->avx512_fp16;
    if (p == ATN_PRECISION_BF16)
        return bf16_insn ? "bf16 on the CPU: this CPU has AVX512_BF16, which attnscope does not use yet; the "
                           "numbers are emulated by rounding each product's operands to bf16 in fp32 (the same "
                           "values, slower than the instructions)"
                         : "bf16 on the CPU: this CPU has no bf16 arithmetic (no AVX512_BF16), so the numbers are "
                           "emulated by rounding each product's operands to bf16 in fp32 (the same values, not "
                           "faster than fp32)";
    if (fp16_insn)
        return atn_round_uses_f16c()
                   ? "fp16 on the CPU: this CPU has AVX512_FP16, which attnscope does not use yet; the numbers "
                     "are emulated by rounding each product's operands to fp16 (F16C) in fp32"
                   : "fp16 on the CPU: this CPU has AVX512_FP16, which attnscope does not use yet; the numbers "
                     "are emulated by rounding each product's operands to fp16 in fp32";
    return atn_round_uses_f16c()
               ? "fp16 on the CPU: this CPU has no fp16 arithmetic (no AVX512_FP16), so the numbers are emulated "
                 "by rounding each product's operands to fp16 (F16C conversions) in fp32 (not faster than fp32)"
               : "fp16 on the CPU: this CPU has no fp16 arithmetic (no AVX512_FP16; F16C not in use), so the numbers are "
                 "emulated by rounding each product's operands to fp16 in fp32 (not faster than fp32)";
}

atn_status atn_precision_compare(const atn_capture *a, const atn_capture *b, float *max_abs, float *mean_abs,
                                 float *hidden_max, float *hidden_rel, atn_error *err) {
    if (!a || !b || !max_abs || !mean_abs)
        return atn_error_set(err, ATN_E_INVALID, "atn_precision_compare: NULL argument");
    if (!a->attn || !b->attn)
        return atn_error_set(err, ATN_E_INVALID, "atn_precision_compare: a capture without attention");
    if (a->n_layers != b->n_layers || a->n_heads != b->n_heads || a->n != b->n || a->d_model != b->d_model)
        return atn_error_set(err, ATN_E_INVALID, "atn_precision_compare: captures of different shapes "
                             "(%d x %d heads, %d tokens vs %d x %d, %d)", a->n_layers, a->n_heads, a->n,
                             b->n_layers, b->n_heads, b->n);
    size_t nn = (size_t)a->n * a->n;
    for (int32_t lh = 0; lh < a->n_layers * a->n_heads; lh++) {
        const float *pa = a->attn + (size_t)lh * nn, *pb = b->attn + (size_t)lh * nn;
        double mx = 0, sum = 0;
        for (size_t i = 0; i < nn; i++) {
            double dd = fabs((double)pb[i] - pa[i]);
            if (!(dd <= mx))   /* NaN counts as the worst */
                mx = dd;
            sum += dd;
        }
        max_abs[lh] = (float)mx;
        mean_abs[lh] = (float)(sum / (double)nn);
    }
    if (!hidden_max && !hidden_rel)
        return ATN_OK;
    if (!a->hidden || !b->hidden)
        return atn_error_set(err, ATN_E_INVALID, "atn_precision_compare: a capture without hidden states");
    int32_t n = a->n, d = a->d_model;
    for (int32_t l = 0; l <= a->n_layers; l++) {
        double mx = 0, num = 0, den = 0;
        for (int32_t i = 0; i < n; i++) {
            if (a->enc && !a->enc->mask[i])
                continue;
            const float *ha = a->hidden + ((size_t)l * n + i) * d, *hb = b->hidden + ((size_t)l * n + i) * d;
            for (int32_t j = 0; j < d; j++) {
                double dd = fabs((double)hb[j] - ha[j]);
                if (!(dd <= mx))
                    mx = dd;
                num += dd * dd;
                den += (double)ha[j] * ha[j];
            }
        }
        if (hidden_max)
            hidden_max[l] = (float)mx;
        if (hidden_rel)
            hidden_rel[l] = (float)(den > 0 ? sqrt(num / den) : sqrt(num));
    }
    return ATN_OK;
}
