/* The layer's ops on the portable reference path (atn_ops_ref, engine/forward/layer.h):
 * plain C and cblas_sgemm, one thread (OpenBLAS threads each product itself).  Every other
 * backend is tested against this one.  Also the building blocks the masked-LM head and the
 * embeddings use (atn_linear, atn_layernorm, atn_activate) and the reduced-precision
 * rounding hook (atn_round_operand).
 *
 * In the style of llm.c: one plain function per step, outputs first, then inputs and
 * weights, then sizes.  Size letters: M rows, n tokens of one sequence, d width, k = d/H
 * head width, f ffn width. */
#include "forward/layer.h"
#include "forward/deberta.h"
#include "forward/activation.h"
#include "forward/precision.h"
#include "forward/expf-row.h"

#include <cblas.h>
#include <pthread.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void atn_linear(float *out, const float *in, const float *w, const float *b, int32_t n, int32_t i, int32_t o) {
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
    case ATN_ACT_SILU:   /* torch's silu: x * sigmoid(x) */
        for (size_t i = 0; i < count; i++)
            x[i] = x[i] / (1.0f + expf(-x[i]));
        break;
    }
}

void atn_rmsnorm(float *out, const float *in, const float *g, int32_t n, int32_t d, float eps) {
    /* LlamaRMSNorm: in float32, variance = mean(x^2), x * rsqrt(variance + eps), then
       weight * x; the mean is summed in double here */
    for (int32_t r = 0; r < n; r++) {
        const float *x = in + (size_t)r * d;
        float *y = out + (size_t)r * d;
        double ss = 0;
        for (int32_t c = 0; c < d; c++)
            ss += (double)x[c] * x[c];
        float rstd = (float)(1.0 / sqrt((float)(ss / d) + (double)eps));
        for (int32_t c = 0; c < d; c++)
            y[c] = (g ? g[c] : 1.0f) * (x[c] * rstd);
    }
}

void atn_rope_angles(float *cos_out, float *sin_out, const float *inv_freq, int32_t d_head, int32_t pos) {
    /* HF's LlamaRotaryEmbedding: the angle in float32 (inv_freq @ position_ids), cos and sin
       of it */
    for (int32_t i = 0; i < d_head / 2; i++) {
        float angle = (float)pos * inv_freq[i];
        cos_out[i] = (float)cos((double)angle);
        sin_out[i] = (float)sin((double)angle);
    }
}

void atn_rope_rotate_cs(float *x, const float *c, const float *s, int32_t d_head) {
    /* apply_rotary_pos_emb: x * cos + rotate_half(x) * sin, rotate_half(x) = cat(-x[half:], x[:half]) */
    int32_t half = d_head / 2;
    for (int32_t i = 0; i < half; i++) {
        float a = x[i], b = x[i + half];
        x[i] = a * c[i] - b * s[i];
        x[i + half] = b * c[i] + a * s[i];
    }
}

void atn_rope_rotate(float *x, const float *inv_freq, int32_t d_head, int32_t pos) {
    enum { HALF_MAX = 256 };
    float c[HALF_MAX], s[HALF_MAX];
    for (int32_t i0 = 0; i0 < d_head / 2; i0 += HALF_MAX) {   /* in pieces: any head width */
        int32_t m = d_head / 2 - i0 < HALF_MAX ? d_head / 2 - i0 : HALF_MAX;
        atn_rope_angles(c, s, inv_freq + i0, 2 * m, pos);
        for (int32_t i = 0; i < m; i++) {
            float a = x[i0 + i], b = x[i0 + i + d_head / 2];
            x[i0 + i] = a * c[i] - b * s[i];
            x[i0 + i + d_head / 2] = b * c[i] + a * s[i];
        }
    }
}

/* ---- reduced precision (engine/forward/precision.h): the one rounding hook ---------- */

const float *atn_round_operand(const atn_activations *a, const float *in, size_t count, int32_t row,
                               atn_operand op) {
    if (!a || a->precision == ATN_PRECISION_FP32)
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

/* ---- two halves at once: the element-wise steps on both cores ----------------------- */

/* The reference ops run on one thread and let OpenBLAS thread each product; the steps
 * between products (the softmax rows, the activation) then ran on one core while OpenBLAS's
 * other threads waited (perf: 12% of a SmolLM2 forward's samples at 512 tokens, with the
 * other core in sched_yield).  Large ones are cut in two: a helper thread does the second
 * half, the same code on the same rows, so every number is the same. */
enum { SPLIT_MIN = 1 << 16 };   /* elements below which a thread costs more than it gives */

typedef struct half_job {
    void (*fn)(void *arg, int32_t lo, int32_t hi);
    void *arg;
    int32_t lo, hi;
} half_job;

static void *half_thread(void *p) {
    half_job *j = p;
    j->fn(j->arg, j->lo, j->hi);
    return NULL;
}

/* fn(arg, 0, count) in two halves when `work` elements are worth it, else on this thread. */
static void in_two(void (*fn)(void *arg, int32_t lo, int32_t hi), void *arg, int32_t count, size_t work) {
    pthread_t t;
    half_job j = {fn, arg, count / 2, count};
    if (count < 2 || work < SPLIT_MIN || pthread_create(&t, NULL, half_thread, &j) != 0) {
        fn(arg, 0, count);
        return;
    }
    fn(arg, 0, count / 2);
    pthread_join(t, NULL);
}

typedef struct act_job {
    float *x;
    size_t chunk, count;
    atn_activation act;
} act_job;

static void act_part(void *arg, int32_t lo, int32_t hi) {
    act_job *j = arg;
    size_t a = (size_t)lo * j->chunk, b = (size_t)hi * j->chunk < j->count ? (size_t)hi * j->chunk : j->count;
    if (b > a)
        atn_activate(j->x + a, b - a, j->act);
}

/* ---- the softmax, plain and with the what-if gates ----------------------------------- */

/* Rows r[0..count) (count <= 4) of n exponentials each: row /= its sum, the sum in double
 * in the row's order.  Four rows' sums side by side (four chains of additions, not one
 * waiting on each add), each the same additions in the same order as one row alone. */
static void sum_scale_rows(float *const *r, int count, int32_t n) {
    double sum[4] = {0, 0, 0, 0};
    if (count == 4)
        for (int32_t j = 0; j < n; j++) {
            sum[0] += r[0][j];
            sum[1] += r[1][j];
            sum[2] += r[2][j];
            sum[3] += r[3][j];
        }
    else
        for (int c = 0; c < count; c++)
            for (int32_t j = 0; j < n; j++)
                sum[c] += r[c][j];
    for (int c = 0; c < count; c++) {
        float inv = (float)(1.0 / sum[c]);
        for (int32_t j = 0; j < n; j++)
            r[c][j] *= inv;
    }
}

/* Row-wise masked softmax, max-subtracted.  att_row[j] = exp(s_j - max) / sum; mask_add
 * [n][n], row i for query i; rows `stride` floats apart (n: the whole rows). */
static void softmax_rows_stride(float *att, const float *mask_add, int32_t nq, int32_t n, size_t stride) {
    for (int32_t i0 = 0; i0 < nq; i0 += 4) {
        float *r[4];
        int count = nq - i0 < 4 ? nq - i0 : 4;
        for (int c = 0; c < count; c++) {
            int32_t i = i0 + c;
            float *row = r[c] = att + (size_t)i * stride;
            const float *mrow = mask_add + (size_t)i * stride;
            float mx = -FLT_MAX;
            for (int32_t j = 0; j < n; j++) {
                row[j] += mrow[j];
                mx = row[j] > mx ? row[j] : mx;
            }
            /* expf(row[j] - mx), or 0 below -110: expf is 0 below -103.98 (it underflows),
               and libm's underflow path is slow: masked keys (a causal model's later ones,
               padding) take this shortcut, with the same result bit for bit; four at a time
               where the CPU allows, the same bits (expf-row.h) */
            atn_expf_row(row, mx, n);
        }
        sum_scale_rows(r, count, n);
    }
}

static void softmax_rows(float *att, const float *mask_add, int32_t nq, int32_t n) {
    softmax_rows_stride(att, mask_add, nq, n, (size_t)n);
}

/* ---- local layers: only the keys a block of queries sees ----------------------------- */

/* ModernBERT's local layers (a +-64 window) hide most keys from each query; the products
 * and the softmax over the hidden ones give exactly 0 (exp underflows; softmax_rows' shortcut)
 * and cost as much as the rest.  A local layer is cut into blocks of BAND_BLOCK query rows,
 * each computed over the keys [j0, j1) that some row of it sees; the rest of its rows is 0.
 * Every probability is the one the whole row gives: the same visible scores (each a k-long
 * dot product), the same maximum (a hidden score is s + ATN_MASK_MIN), the same sum in the
 * same order (the hidden terms are +0).  The context sums over [j0, j1) only (the hidden
 * terms were 0 · v): it may differ from the whole row's in the last bits. */
enum { BAND_BLOCK = 64 };

/* The span [j0, j1) of keys each block of BAND_BLOCK query rows sees through mask [n][nk]
 * (malloc'd, 2 per block), or NULL when the spans cover more than 3/4 of the map (nothing
 * to gain) or memory is short.  A row that sees no key makes its block whole (the full
 * row's softmax spreads it over every key). */
static int32_t *band_spans(const float *mask, int32_t n, int32_t nk) {
    int32_t nb = (n + BAND_BLOCK - 1) / BAND_BLOCK;
    int32_t *span = malloc((size_t)nb * 2 * sizeof *span);
    if (!span)
        return NULL;
    size_t covered = 0;
    for (int32_t b = 0; b < nb; b++) {
        int32_t i0 = b * BAND_BLOCK, i1 = i0 + BAND_BLOCK < n ? i0 + BAND_BLOCK : n, lo = nk, hi = 0;
        for (int32_t i = i0; i < i1; i++) {
            const float *m = mask + (size_t)i * nk;
            int32_t a = 0, z = nk;
            while (a < nk && m[a] <= ATN_MASK_MIN)
                a++;
            if (a == nk) {   /* sees nothing */
                lo = 0, hi = nk;
                break;
            }
            while (m[z - 1] <= ATN_MASK_MIN)
                z--;
            lo = a < lo ? a : lo;
            hi = z > hi ? z : hi;
        }
        span[2 * b] = lo;
        span[2 * b + 1] = hi;
        covered += (size_t)(hi - lo) * (size_t)(i1 - i0);
    }
    if (covered * 4 > (size_t)n * (size_t)nk * 3) {
        free(span);
        return NULL;
    }
    return span;
}

typedef struct band_job {
    float *att;
    const float *mask;
    const int32_t *span;
    int32_t n, nk;
} band_job;

/* Blocks [lo, hi) of one head: the rows 0 outside their span, the softmax inside it. */
static void band_softmax_part(void *arg, int32_t lo, int32_t hi) {
    band_job *j = arg;
    for (int32_t b = lo; b < hi; b++) {
        int32_t i0 = b * BAND_BLOCK, i1 = i0 + BAND_BLOCK < j->n ? i0 + BAND_BLOCK : j->n;
        int32_t j0 = j->span[2 * b], j1 = j->span[2 * b + 1];
        for (int32_t i = i0; i < i1; i++) {
            float *row = j->att + (size_t)i * j->nk;
            memset(row, 0, (size_t)j0 * sizeof(float));
            memset(row + j1, 0, (size_t)(j->nk - j1) * sizeof(float));
        }
        size_t off = (size_t)i0 * j->nk + j0;
        softmax_rows_stride(j->att + off, j->mask + off, i1 - i0, j1 - j0, (size_t)j->nk);
    }
}

/* softmax_rows for rows [lo, hi) of [n][n] whose mask is `form` (ATN_MASK_ZEROS or
 * ATN_MASK_CAUSAL), not read: each cell adds the value the mask holds there (0, or
 * ATN_MASK_MIN after the diagonal), in the same order, so every number is softmax_rows'. */
static void softmax_rows_form(float *att, atn_mask_form form, int32_t lo, int32_t hi, int32_t n) {
    for (int32_t i0 = lo; i0 < hi; i0 += 4) {
        float *r[4];
        int count = hi - i0 < 4 ? hi - i0 : 4;
        for (int c = 0; c < count; c++) {
            int32_t i = i0 + c;
            float *row = r[c] = att + (size_t)i * n;
            int32_t seen = form == ATN_MASK_CAUSAL && i + 1 < n ? i + 1 : n;   /* keys [0, seen) add 0 */
            float mx = -FLT_MAX;
            for (int32_t j = 0; j < seen; j++) {
                row[j] += 0.0f;   /* as softmax_rows (it turns -0 into +0) */
                mx = row[j] > mx ? row[j] : mx;
            }
            for (int32_t j = seen; j < n; j++) {
                row[j] += ATN_MASK_MIN;
                mx = row[j] > mx ? row[j] : mx;
            }
            atn_expf_row(row, mx, n);   /* softmax_rows' exponentials */
        }
        sum_scale_rows(r, count, n);
    }
}

typedef struct softmax_job {
    float *att;
    const float *mask;
    int32_t n;
    atn_mask_form form;
} softmax_job;

static void softmax_part(void *arg, int32_t lo, int32_t hi) {
    softmax_job *j = arg;
    if (j->form != ATN_MASK_READ)
        softmax_rows_form(j->att, j->form, lo, hi, j->n);
    else
        softmax_rows(j->att + (size_t)lo * j->n, j->mask + (size_t)lo * j->n, hi - lo, j->n);
}

/* softmax_rows over nq rows, in two halves of rows when they are many; a mask of a known
 * form (not ATN_MASK_READ) is made by index, not read. */
static void softmax_rows_par(float *att, const float *mask_add, int32_t nq, int32_t n, atn_mask_form form) {
    softmax_job j = {att, mask_add, n, form};
    in_two(softmax_part, &j, nq, (size_t)nq * n);
}

/* The softmax with the interventions: row i of head att (scores already scaled) gets
 * mask + ALiBi's -slope |i-j|, is divided by the temperature, softmaxed, and replaced when
 * the head is off (zero: 0; uniform: 1/k over the keys whose mask is 0). */
static void softmax_rows_iv(float *att, const float *mask_add, int32_t nq, int32_t n, float slope,
                            float temperature, int off, atn_head_mode mode) {
    float inv_t = 1.0f / temperature;
    for (int32_t i = 0; i < nq; i++) {
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

/* XSoftmax (DeBERTa): a row whose every key is masked (a padded query's) is all zero, where
 * the plain softmax spreads it evenly; masked keys are already 0 in the others. */
static void xsoftmax_rows(float *att, const float *mask_add, int32_t n) {
    for (int32_t i = 0; i < n; i++) {
        const float *mrow = mask_add + (size_t)i * n;
        bool all = true;
        for (int32_t j = 0; j < n && all; j++)
            all = mrow[j] <= ATN_MASK_MIN;
        if (all)
            memset(att + (size_t)i * n, 0, (size_t)n * sizeof(float));
    }
}

/* ---- the ops --------------------------------------------------------------------------- */

static const float *ref_operand(const atn_walk *w, const float *in, size_t count, int32_t l, atn_operand op) {
    return atn_round_operand(w->round, in, count, l + 1, op);
}

static void ref_project(const atn_walk *w, int tid, int nt, float *out, const float *in, int32_t l,
                        atn_weight_id which, const float *res, int act, int32_t i, int32_t o) {
    (void)tid, (void)nt;
    const float *b, *W = atn_layer_weight(&w->layers[l], which, &b);
    atn_linear(out, in, W, b, w->M, i, o);
    if (act >= 0) {   /* element-wise: in two halves of 4096-element chunks */
        act_job j = {out, 4096, (size_t)w->M * o, (atn_activation)act};
        in_two(act_part, &j, (int32_t)((j.count + j.chunk - 1) / j.chunk), j.count);
    }
    if (res)
        for (size_t x = 0, count = (size_t)w->M * o; x < count; x++)
            out[x] += res[x];
}

static void ref_norm(const atn_walk *w, int tid, int nt, float *out, const float *in, const float *res,
                     const float *g, const float *b) {
    (void)tid, (void)nt;
    int32_t M = w->M, d = w->desc.d;
    if (res) {
        for (size_t x = 0, count = (size_t)M * d; x < count; x++)
            out[x] = in[x] + res[x];
        in = out;
    }
    if (w->desc.norm_type == ATN_NORM_RMSNORM)
        atn_rmsnorm(out, in, g, M, d, w->desc.eps);
    else
        atn_layernorm(out, in, g, b, M, d, w->desc.eps);
}

/* Each sequence's q and k rows, head by head: Qwen3's per-head RMSNorm, then the rotation
 * by the token's position id (the run's, so the what-if shuffle moves it too).  A token's
 * cos and sin are made once for all its heads (H + KV of them: 40 for Llama-3.2-1B), the
 * same numbers atn_rope_rotate makes for each. */
static void ref_positions(const atn_walk *w, int tid, int nt, int32_t l, float *q, float *k) {
    (void)tid, (void)nt;
    const atn_layer_desc *D = &w->desc;
    const atn_layer_weights *lw = &w->layers[l];
    int32_t kd = D->d_head, dq = atn_desc_d_q(D), dkv = atn_desc_d_kv(D), KV = atn_desc_kv_heads(D);
    const float *inv_freq = atn_desc_inv_freq(D, l);   /* ModernBERT's local layers: their own base */
    enum { HALF_MAX = 256 };
    float cs[2 * HALF_MAX];
    bool table = kd / 2 <= HALF_MAX;   /* wider heads (none known) rotate with atn_rope_rotate */
    for (int32_t s = 0; s < w->count; s++) {
        const atn_walk_seq *sq = &w->seq[s];
        for (int32_t i = 0; i < sq->n; i++) {
            int32_t row = sq->row + i, pos = sq->pos_ids ? sq->pos_ids[i] : i;
            bool rotate = !w->no_positions;   /* the what-if lab's NoPE: no rotation */
            if (rotate && table)
                atn_rope_angles(cs, cs + HALF_MAX, inv_freq, kd, pos);
            for (int32_t h = 0; h < D->heads + KV; h++) {
                float *x = h < D->heads ? q + (size_t)row * dq + (size_t)h * kd
                                        : k + (size_t)row * dkv + (size_t)(h - D->heads) * kd;
                if (D->qk_norm)
                    atn_rmsnorm(x, x, h < D->heads ? lw->q_norm_g : lw->k_norm_g, 1, kd, D->eps);
                if (rotate && table)
                    atn_rope_rotate_cs(x, cs, cs + HALF_MAX, kd);
                else if (rotate)
                    atn_rope_rotate(x, inv_freq, kd, pos);
            }
        }
    }
}

static void ref_mul(const atn_walk *w, int tid, int nt, float *out, const float *by, size_t count) {
    (void)w, (void)tid, (void)nt;
    for (size_t i = 0; i < count; i++)
        out[i] *= by[i];
}

/* One sequence's heads: att[h] = softmax(scale Q_h K_h^T + mask (+ the gates)), ctx_h =
 * att[h] V_h, the operands rounded when the run is reduced-precision (Q, K, V in place, so
 * the capture holds what the products read; P into the scratch, the capture keeps fp32). */
static void attend_seq(const atn_walk *w, const atn_walk_seq *s, int32_t l, float *q, float *k, float *v,
                       float *ctx) {
    const atn_layer_desc *D = &w->desc;
    int32_t n = s->n, nk = s->n_keys > 0 ? s->n_keys : n, H = D->heads, kd = D->d_head > 0 ? D->d_head : D->d / H;
    int32_t row = l + 1;
    int32_t dq = atn_desc_d_q(D), dkv = atn_desc_d_kv(D), group = H / atn_desc_kv_heads(D);   /* head h reads K/V head h / group */
    float scale = atn_layer_scale(D, l);
    const float *mask = s->mask_base && !s->mask_layers[l] ? s->mask_base : s->mask;
    const uint8_t *off_l = s->heads_off ? s->heads_off + (size_t)l * H : NULL;
    float *att = s->attn + s->attn_stride * l;
    const atn_activations *a = w->round;
    /* the softmax's own gates (ALiBi, the temperature, heads off).  The walk's `gated` also
       counts the masks of other layers (mask_base: ModernBERT's and Gemma's global layers),
       NoPE and a later start, none of which the softmax reads: the plain softmax gives the
       same numbers bit for bit (its only difference, the underflow shortcut, makes the same
       0), in two halves of rows, without libm's slow underflow path on every hidden key */
    bool gated = w->slopes || w->temperature != 1.0f || off_l;
    if (a && !w->one_head) {   /* (one head: the forward rounded them in place already) */
        round_in_place(a, q, (size_t)n * dq, row, ATN_OPERAND_Q);
        round_in_place(a, k, (size_t)nk * dkv, row, ATN_OPERAND_K);
        round_in_place(a, v, (size_t)nk * dkv, row, ATN_OPERAND_V);
    }
    /* DeBERTa: the layer's relative rows, for the c2p / p2c terms of every head */
    atn_deberta_layer *rel = NULL;
    if (D->disentangled && !w->no_positions && !(rel = atn_deberta_layer_new(w->m, l, n)) && w->status)
        *w->status = ATN_E_NOMEM;   /* the walk stops after this layer; the caller names it */
    /* a local layer's blocks of queries and the keys they see (nothing else in the scores) */
    int32_t *span = atn_desc_local_layer(D, l) && !gated && !a && !rel && !s->score_bias && D->softcap <= 0.0f &&
                            !D->xsoftmax && nk == n && n >= 2 * BAND_BLOCK
                        ? band_spans(mask, n, nk)
                        : NULL;
    int32_t nb = (n + BAND_BLOCK - 1) / BAND_BLOCK;
    for (int32_t h = w->one_head ? w->head : 0; h < (w->one_head ? w->head + 1 : H); h++) {
        float *att_h = w->one_head || s->attn_one_head ? att : att + (size_t)h * n * nk;
        int off = off_l && off_l[h];
        size_t kv = (size_t)(h / group) * kd;
        if (span) {   /* a local layer: each block's span of keys */
            for (int32_t b = 0; b < nb; b++) {
                int32_t i0 = b * BAND_BLOCK, i1 = i0 + BAND_BLOCK < n ? i0 + BAND_BLOCK : n;
                int32_t j0 = span[2 * b], j1 = span[2 * b + 1];
                cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, i1 - i0, j1 - j0, kd, scale,
                            q + (size_t)i0 * dq + h * kd, dq, k + (size_t)j0 * dkv + kv, dkv, 0.0f,
                            att_h + (size_t)i0 * nk + j0, nk);
            }
            band_job bj = {att_h, mask, span, n, nk};
            in_two(band_softmax_part, &bj, nb, (size_t)n * (size_t)(span[1] - span[0]));
        }
        /* att_h[n,nk] = scale · Q_h[n,k] · K_g[nk,k]^T, g = h / group (+ T5's position bias) */
        else if (!(off && w->head_mode == ATN_HEAD_ZERO)) {
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, nk, kd, scale, q + h * kd, dq, k + kv, dkv, 0.0f,
                        att_h, nk);
            if (D->softcap > 0.0f)   /* Gemma 2: tanh(s / c) c after the scale, before the mask */
                for (size_t x = 0; x < (size_t)n * nk; x++)
                    att_h[x] = tanhf(att_h[x] / D->softcap) * D->softcap;
            if (s->score_bias) {
                const float *bias = s->score_bias + (size_t)h * n * nk;
                for (size_t x = 0, count = (size_t)n * nk; x < count; x++)
                    att_h[x] += bias[x];
            }
            atn_deberta_head_add(rel, h, q, dq, k, dkv, scale, att_h);   /* NULL: nothing (keys = queries there) */
        }
        if (span)
            ;   /* done block by block */
        else if (gated)
            softmax_rows_iv(att_h, mask, n, nk, w->slopes ? w->slopes[h] : 0.0f, w->temperature, off, w->head_mode);
        else
            softmax_rows_par(att_h, mask, n, nk, mask == s->mask && nk == n && !s->n_keys ? s->mask_form : ATN_MASK_READ);
        if (D->xsoftmax)
            xsoftmax_rows(att_h, mask, n);
        if (s->head_done && !w->one_head)
            s->head_done(s->head_user, l, h, att_h, n);
        if (w->one_head)
            break;   /* the probabilities were asked for, not the context */
        const float *p = atn_round_operand(a, att_h, (size_t)n * nk, row, ATN_OPERAND_PROBS);
        /* ctx_h[n,k] = att_h[n,nk] · V_g[nk,k] (a local layer: each block over its span) */
        for (int32_t b = 0; span && b < nb; b++) {
            int32_t i0 = b * BAND_BLOCK, i1 = i0 + BAND_BLOCK < n ? i0 + BAND_BLOCK : n;
            int32_t j0 = span[2 * b], j1 = span[2 * b + 1];
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, i1 - i0, kd, j1 - j0, 1.0f,
                        p + (size_t)i0 * nk + j0, nk, v + (size_t)j0 * dkv + kv, dkv, 0.0f,
                        ctx + (size_t)i0 * dq + h * kd, dq);
        }
        if (!span)
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, kd, nk, 1.0f, p, nk, v + kv, dkv, 0.0f,
                        ctx + h * kd, dq);
    }
    free(span);
    atn_deberta_layer_free(rel);
}

static void ref_attend(const atn_walk *w, int tid, int nt, int32_t l, float *q, float *k, float *v, float *ctx) {
    (void)tid, (void)nt;
    size_t dq = (size_t)atn_desc_d_q(&w->desc), dkv = (size_t)atn_desc_d_kv(&w->desc);
    for (int32_t s = 0; s < w->count; s++) {
        size_t r = (size_t)w->seq[s].row, rk = w->seq[s].n_keys > 0 ? (size_t)w->seq[s].key_row : r;
        attend_seq(w, &w->seq[s], l, q + r * dq, k + rk * dkv, v + rk * dkv, ctx + r * dq);
    }
}

const atn_layer_ops atn_ops_ref = {
    .name = "reference",
    .operand = ref_operand,
    .project = ref_project,
    .norm = ref_norm,
    .attend = ref_attend,
    .positions = ref_positions,
    .mul = ref_mul,
    .add = atn_walk_add_rows,
    .end_layer = atn_walk_check_finite,
};
