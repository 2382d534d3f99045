/* The training lab's ops: each forward and its backward side by side (llm.c's
 * train_gpt2.c).  The forwards reuse engine/forward/ops-ref.c's atn_linear and
 * atn_activate, and compute LayerNorm and the softmax exactly as it does, so a trained
 * model's forward here and attnscope's forward of the saved folder give the same numbers
 * (tests/train/test-train.c checks it).  Legend in train-ops.h. */
#include "train/train-ops.h"
#include "forward/activation.h"   /* atn_tanh_array */
#include "forward/encoder.h"      /* atn_linear, atn_activate */
#include "forward/precision.h"    /* atn_round_array */

#include <cblas.h>
#include <float.h>
#include <math.h>
#include <string.h>

void atn_tr_linear_forward(float *out, const float *in, const float *w, const float *b, int32_t M, int32_t i,
                           int32_t o) {
    atn_linear(out, in, w, b, M, i, o);
}

void atn_tr_linear_backward(float *din, float *dw, float *db, const float *dout, const float *in, const float *w,
                            int32_t M, int32_t i, int32_t o) {
    /* din[M,i] += dout[M,o] w[o,i] */
    if (din)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, i, o, 1.0f, dout, o, w, i, 1.0f, din, i);
    /* dw[o,i] += dout^T[o,M] in[M,i] */
    if (dw)
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, o, i, M, 1.0f, dout, o, in, i, 1.0f, dw, i);
    if (db)
        for (int32_t r = 0; r < M; r++) {
            const float *g = dout + (size_t)r * o;
            for (int32_t c = 0; c < o; c++)
                db[c] += g[c];
        }
}

void atn_tr_layernorm_forward(float *out, float *mean, float *rstd, const float *in, const float *g,
                              const float *b, int32_t M, int32_t d, float eps) {
    for (int32_t r = 0; r < M; r++) {
        const float *x = in + (size_t)r * d;
        float *y = out + (size_t)r * d;
        /* the arithmetic of atn_layernorm (ops-ref.c), step for step */
        double mu = 0, var = 0;
        for (int32_t c = 0; c < d; c++)
            mu += x[c];
        mu /= d;
        for (int32_t c = 0; c < d; c++) {
            double t = x[c] - mu;
            var += t * t;
        }
        var /= d;
        float rs = (float)(1.0 / sqrt(var + eps));
        float m = (float)mu;
        for (int32_t c = 0; c < d; c++) {
            float t = (x[c] - m) * rs;
            y[c] = t * g[c] + b[c];
        }
        mean[r] = m;
        rstd[r] = rs;
    }
}

void atn_tr_layernorm_backward(float *din, float *dg, float *db, const float *dout, const float *in,
                               const float *mean, const float *rstd, const float *g, int32_t M, int32_t d) {
    for (int32_t r = 0; r < M; r++) {
        const float *x = in + (size_t)r * d, *dy = dout + (size_t)r * d;
        float *dx = din + (size_t)r * d;
        float m = mean[r], rs = rstd[r];
        /* dxhat = dy g; dx = rstd (dxhat - mean(dxhat) - xhat mean(dxhat xhat)) */
        double s1 = 0, s2 = 0;
        for (int32_t c = 0; c < d; c++) {
            float xh = (x[c] - m) * rs;
            float dxh = dy[c] * g[c];
            s1 += dxh;
            s2 += (double)dxh * xh;
            dg[c] += dy[c] * xh;
            db[c] += dy[c];
        }
        float a = (float)(s1 / d), bb = (float)(s2 / d);
        for (int32_t c = 0; c < d; c++) {
            float xh = (x[c] - m) * rs;
            dx[c] += rs * (dy[c] * g[c] - a - xh * bb);
        }
    }
}

void atn_tr_rmsnorm_forward(float *out, float *rstd, const float *in, const float *g, int32_t M, int32_t d,
                            float eps) {
    for (int32_t r = 0; r < M; r++) {
        const float *x = in + (size_t)r * d;
        float *y = out + (size_t)r * d;
        double ms = 0;   /* Llama's LlamaRMSNorm: x rsqrt(mean(x^2) + eps) w */
        for (int32_t c = 0; c < d; c++)
            ms += (double)x[c] * x[c];
        float rs = (float)(1.0 / sqrt(ms / d + eps));
        for (int32_t c = 0; c < d; c++)
            y[c] = x[c] * rs * g[c];
        rstd[r] = rs;
    }
}

void atn_tr_rmsnorm_backward(float *din, float *dg, const float *dout, const float *in, const float *rstd,
                             const float *g, int32_t M, int32_t d) {
    for (int32_t r = 0; r < M; r++) {
        const float *x = in + (size_t)r * d, *dy = dout + (size_t)r * d;
        float *dx = din + (size_t)r * d;
        float rs = rstd[r];
        /* xhat = x rstd; dxhat = dy g; dx = rstd (dxhat - xhat mean(dxhat xhat)) */
        double s2 = 0;
        for (int32_t c = 0; c < d; c++) {
            float xh = x[c] * rs;
            s2 += (double)dy[c] * g[c] * xh;
            dg[c] += dy[c] * xh;
        }
        float bb = (float)(s2 / d);
        for (int32_t c = 0; c < d; c++)
            dx[c] += rs * (dy[c] * g[c] - x[c] * rs * bb);
    }
}

void atn_tr_act_forward(float *out, const float *in, size_t count, atn_activation act) {
    if (out != in)
        memcpy(out, in, count * sizeof(float));
    atn_activate(out, count, act);
}

void atn_tr_act_backward(float *din, const float *dout, const float *in, size_t count, atn_activation act) {
    switch (act) {
    case ATN_ACT_GELU:
        for (size_t i = 0; i < count; i++) {
            float x = in[i];
            float cdf = 0.5f * (1.0f + erff(x * (float)M_SQRT1_2));
            float pdf = expf(-0.5f * x * x) * 0.3989422804f;   /* 1/sqrt(2 pi) */
            din[i] += dout[i] * (cdf + x * pdf);
        }
        break;
    case ATN_ACT_GELU_TANH: {
        /* d/dx 0.5 x (1 + t), t = tanh(c (x + 0.044715 x^3)): the tanh of a chunk at once
           with the forward's vector tanh (a third of a step was libm's tanh) */
        const float c = 0.7978845608f;
        float t[512];
        for (size_t i0 = 0; i0 < count; i0 += 512) {
            size_t m = count - i0 < 512 ? count - i0 : 512;
            for (size_t i = 0; i < m; i++) {
                float x = in[i0 + i];
                t[i] = c * (x + 0.044715f * x * x * x);
            }
            atn_tanh_array(t, t, m);
            for (size_t i = 0; i < m; i++) {
                float x = in[i0 + i], th = t[i];
                float dy = 0.5f * (1.0f + th) + 0.5f * x * (1.0f - th * th) * c * (1.0f + 3.0f * 0.044715f * x * x);
                din[i0 + i] += dout[i0 + i] * dy;
            }
        }
        break;
    }
    case ATN_ACT_RELU:
        for (size_t i = 0; i < count; i++)
            din[i] += in[i] > 0.0f ? dout[i] : 0.0f;
        break;
    case ATN_ACT_SILU:   /* x sigmoid(x): s (1 + x (1 - s)) (no trainer layout uses it yet) */
        for (size_t i = 0; i < count; i++) {
            float x = in[i], s = 1.0f / (1.0f + expf(-x));
            din[i] += dout[i] * s * (1.0f + x * (1.0f - s));
        }
        break;
    }
}

void atn_tr_attention_forward(float *ctx, float *probs, float *probs_d, const float *q, const float *k,
                              const float *v, const float *mask, const float *slopes, const float *keep,
                              float scale, int32_t B, int32_t n, int32_t d, int32_t H, atn_precision prec) {
    int32_t kd = d / H;
    bool round = prec != ATN_PRECISION_FP32;
    size_t nn = (size_t)n * n;
    for (int32_t b = 0; b < B; b++)
        for (int32_t h = 0; h < H; h++) {
            const float *q_h = q + (size_t)b * n * d + h * kd, *k_h = k + (size_t)b * n * d + h * kd;
            const float *v_h = v + (size_t)b * n * d + h * kd;
            float *att = probs + ((size_t)b * H + h) * nn;
            float *att_d = probs_d + ((size_t)b * H + h) * nn;
            /* scores, then the masked softmax of ops-ref.c's softmax_rows (softmax_rows_iv with
               ALiBi's slope) */
            float slope = slopes ? slopes[h] : 0.0f;
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, n, kd, scale, q_h, d, k_h, d, 0.0f, att, n);
            for (int32_t i = 0; i < n; i++) {
                float *row = att + (size_t)i * n;
                const float *mrow = mask + (size_t)i * n;
                float mx = -FLT_MAX;
                for (int32_t j = 0; j < n; j++) {
                    row[j] += mrow[j];
                    if (slope != 0.0f)
                        row[j] -= slope * (float)(i > j ? i - j : j - i);
                    mx = row[j] > mx ? row[j] : mx;
                }
                double sum = 0;
                for (int32_t j = 0; j < n; j++) {
                    float x = row[j] - mx;
                    row[j] = x < -110.0f ? 0.0f : expf(x);
                    sum += row[j];
                }
                float inv = (float)(1.0 / sum);
                for (int32_t j = 0; j < n; j++)
                    row[j] *= inv;
            }
            if (keep) {
                const float *kp = keep + ((size_t)b * H + h) * nn;
                for (size_t i = 0; i < nn; i++)
                    att_d[i] = att[i] * kp[i];
            }
            if (round)   /* P·V reads the probabilities rounded (kept so for the backward) */
                atn_round_array(att_d, keep ? att_d : att, nn, prec);
            float *c_h = ctx + (size_t)b * n * d + h * kd;
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, kd, n, 1.0f, keep || round ? att_d : att, n,
                        v_h, d, 0.0f, c_h, d);
        }
}

void atn_tr_attention_backward(float *dq, float *dk, float *dv, float *scratch, const float *dctx,
                               const float *q, const float *k, const float *v, const float *probs,
                               const float *probs_d, const float *keep, float scale, int32_t B, int32_t n,
                               int32_t d, int32_t H, atn_precision prec) {
    int32_t kd = d / H;
    bool round = prec != ATN_PRECISION_FP32;
    size_t nn = (size_t)n * n;
    for (int32_t b = 0; b < B; b++)
        for (int32_t h = 0; h < H; h++) {
            size_t off = (size_t)b * n * d + h * kd;
            const float *att = probs + ((size_t)b * H + h) * nn;
            const float *att_d = keep || round ? probs_d + ((size_t)b * H + h) * nn : att;
            float *dp = scratch;   /* [n][n] */
            /* dv_h += P_d^T dctx_h; dP_d = dctx_h v_h^T */
            cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, n, kd, n, 1.0f, att_d, n, dctx + off, d, 1.0f,
                        dv + off, d);
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, n, kd, 1.0f, dctx + off, d, v + off, d, 0.0f,
                        dp, n);
            if (keep) {
                const float *kp = keep + ((size_t)b * H + h) * nn;
                for (size_t i = 0; i < nn; i++)
                    dp[i] *= kp[i];
            }
            /* softmax: dS = P (dP - sum_j dP P) */
            for (int32_t i = 0; i < n; i++) {
                float *g = dp + (size_t)i * n;
                const float *p = att + (size_t)i * n;
                double dot = 0;
                for (int32_t j = 0; j < n; j++)
                    dot += (double)g[j] * p[j];
                float fd = (float)dot;
                for (int32_t j = 0; j < n; j++)
                    g[j] = p[j] * (g[j] - fd);
            }
            /* dq_h += scale dS k_h; dk_h += scale dS^T q_h (reduced precision: scale dS rounded,
               the gradient QK^T's product receives) */
            float alpha = scale;
            if (round) {
                for (size_t i = 0; i < nn; i++)
                    dp[i] *= scale;
                atn_round_array(dp, dp, nn, prec);
                alpha = 1.0f;
            }
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, kd, n, alpha, dp, n, k + off, d, 1.0f,
                        dq + off, d);
            cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, n, kd, n, alpha, dp, n, q + off, d, 1.0f,
                        dk + off, d);
        }
}

void atn_tr_rotary(float *x, int32_t M, int32_t n, int32_t d, int32_t H, float theta, int sign) {
    int32_t k = d / H, half = k / 2;
    for (int32_t r = 0; r < M; r++) {
        int32_t pos = r % n;
        for (int32_t i = 0; i < half; i++) {
            /* HF computes inv_freq in float32 and the angle pos * inv_freq in float32 */
            float inv_freq = 1.0f / powf(theta, (float)(2 * i) / (float)k);
            float angle = (float)pos * inv_freq;
            float c = cosf(angle), s = sign * sinf(angle);
            for (int32_t h = 0; h < H; h++) {
                float *xh = x + (size_t)r * d + (size_t)h * k;
                float a = xh[i], b = xh[i + half];
                xh[i] = a * c - b * s;
                xh[i + half] = b * c + a * s;
            }
        }
    }
}

void atn_tr_dropout(float *x, const float *keep, size_t count) {
    for (size_t i = 0; i < count; i++)
        x[i] *= keep[i];
}

float atn_tr_crossentropy(float *dlogits, int64_t *correct, int64_t *count, const float *logits,
                          const int32_t *target, int32_t M, int32_t V) {
    int64_t cnt = 0, ok = 0;
    for (int32_t r = 0; r < M; r++)
        cnt += target[r] >= 0;
    double loss = 0;
    for (int32_t r = 0; r < M; r++) {
        const float *x = logits + (size_t)r * V;
        float *g = dlogits + (size_t)r * V;
        if (target[r] < 0) {
            memset(g, 0, (size_t)V * sizeof(float));
            continue;
        }
        float mx = -FLT_MAX;
        int32_t arg = 0;
        for (int32_t c = 0; c < V; c++)
            if (x[c] > mx)
                mx = x[c], arg = c;
        double sum = 0;
        for (int32_t c = 0; c < V; c++)
            sum += exp((double)x[c] - mx);
        double lse = mx + log(sum);
        loss += lse - x[target[r]];
        ok += arg == target[r];
        for (int32_t c = 0; c < V; c++)
            g[c] = (float)(exp((double)x[c] - lse) / (double)cnt);
        g[target[r]] -= (float)(1.0 / (double)cnt);
    }
    *correct = ok;
    *count = cnt;
    return cnt ? (float)(loss / (double)cnt) : 0.0f;
}
