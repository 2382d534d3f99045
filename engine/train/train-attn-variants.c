/* The training lab's attention variants beyond full / causal / window (train.h's
 * atn_train_attn): their option checks, the mask of every masked variant, and Linformer's
 * forward and backward, beside train-ops.c's attention, as llm.c writes them.
 *
 * Masked variants (the forward and backward are train-ops.c's attention; only the [n][n]
 * additive mask differs, so a hidden cell's probability is 0 and so is its gradient):
 *   window      hide key j from query i when |i - j| > window;
 *   Longformer  the window, except that a global query sees every key and a global key is
 *               seen by every query (Beltagy et al. 2020, "Longformer", section 3.1; the
 *               what-if lab's --window W --global-tokens, engine/whatif/interventions.c);
 *   chunked     hide key j from query i when they lie in different blocks of chunk tokens
 *               (i / chunk != j / chunk);
 * and a decoder hides every later key (j > i) on top of any of them.
 *
 * Linformer (Wang et al. 2020, "Linformer: Self-Attention with Linear Complexity", eq. 7,
 * with headwise sharing): per sequence K' = E K and V' = F V with E, F [k][n] learned per
 * layer and shared by the heads; per head P = softmax(Q_h K'_h^T scale) [n][k] (no mask),
 * dropped, ctx_h = P_d V'_h.
 *
 * Reduced precision (train-precision.c): E and F come in rounded (atn_tr_mm_w), as K and V
 * do (the layer rounds them); K' and V' are rounded once made (kept so: Q K'^T, P V' and the
 * backward read them), the probabilities into probs_d as train-ops.c's attention does, and in
 * the backward scale dS and the gradients dK', dV' the products E K and F V receive. */
#include "train/train-private.h"
#include "train/train-ops.h"
#include "forward/precision.h"   /* atn_round_array */

#include <cblas.h>
#include <float.h>
#include <math.h>
#include <string.h>

atn_status atn_tr_attn_check(const atn_train_options *o, atn_error *err) {
    int32_t n = atn_tr_task_tokens(o);
    switch (o->attention) {
    case ATN_ATTN_FULL:
    case ATN_ATTN_CAUSAL:
    case ATN_ATTN_WINDOW:
        return ATN_OK;
    case ATN_ATTN_LONGFORMER:
        if (o->global_first < 0 || o->global_first > n)
            return atn_error_set(err, ATN_E_INVALID, "--globals first:%d: between 0 and the task's %d tokens",
                                 (int)o->global_first, (int)n);
        if (o->n_globals < 0 || o->n_globals > ATN_TRAIN_MAX_GLOBALS)
            return atn_error_set(err, ATN_E_INVALID, "--globals: at most %d positions", ATN_TRAIN_MAX_GLOBALS);
        for (int32_t i = 0; i < o->n_globals; i++)
            if (o->globals[i] < 0 || o->globals[i] >= n)
                return atn_error_set(err, ATN_E_INVALID, "--globals: position %d is outside the task's tokens 0..%d",
                                     (int)o->globals[i], (int)n - 1);
        return ATN_OK;
    case ATN_ATTN_CHUNKED:
        if (o->chunk < 1)
            return atn_error_set(err, ATN_E_INVALID, "--chunk %d: a block of at least 1 token", (int)o->chunk);
        return ATN_OK;
    case ATN_ATTN_LINFORMER:
        if (o->decoder)
            return atn_error_set(err, ATN_E_INVALID,
                                 "--attention linformer: its projections mix every token, later ones too, into "
                                 "each key, so it cannot be causal: use --encoder");
        if (o->linformer_k < 1 || o->linformer_k > n)
            return atn_error_set(err, ATN_E_INVALID, "--linformer-k %d: between 1 and the task's %d tokens",
                                 (int)o->linformer_k, (int)n);
        if (o->positions == ATN_POS_ALIBI)
            return atn_error_set(err, ATN_E_INVALID,
                                 "--attention linformer with --positions alibi: ALiBi's -m|i - j| needs a key "
                                 "position, and a projected key has none");
        return ATN_OK;
    }
    return atn_error_set(err, ATN_E_INVALID, "--attention: unknown kind %d", (int)o->attention);
}

bool atn_tr_attn_global(const atn_train_options *o, int32_t pos) {
    if (pos < o->global_first)
        return true;
    for (int32_t i = 0; i < o->n_globals; i++)
        if (o->globals[i] == pos)
            return true;
    return false;
}

bool atn_tr_attn_hides(const atn_train_options *o, int32_t i, int32_t j) {
    bool causal = o->decoder || o->attention == ATN_ATTN_CAUSAL;
    if (causal && j > i)
        return true;
    int32_t dist = i > j ? i - j : j - i;
    switch (o->attention) {
    case ATN_ATTN_WINDOW:
        return dist > o->window;
    case ATN_ATTN_LONGFORMER:
        return dist > o->window && !atn_tr_attn_global(o, i) && !atn_tr_attn_global(o, j);
    case ATN_ATTN_CHUNKED:
        return i / o->chunk != j / o->chunk;
    default:
        return false;
    }
}

void atn_tr_attn_mask(const atn_train_options *o, int32_t n, float *mask) {
    for (int32_t i = 0; i < n; i++)
        for (int32_t j = 0; j < n; j++)
            mask[(size_t)i * n + j] = atn_tr_attn_hides(o, i, j) ? -INFINITY : 0.0f;
}

/* ---- Linformer ---------------------------------------------------------------------------- */

void atn_tr_linformer_forward(float *ctx, float *probs, float *probs_d, float *kp, float *vp, const float *q,
                              const float *k, const float *v, const float *E, const float *F, const float *keep,
                              float scale, int32_t B, int32_t n, int32_t kk, int32_t d, int32_t H,
                              atn_precision prec) {
    int32_t kd = d / H;
    bool round = prec != ATN_PRECISION_FP32;
    size_t nk = (size_t)n * kk;
    for (int32_t b = 0; b < B; b++) {
        const float *k_b = k + (size_t)b * n * d, *v_b = v + (size_t)b * n * d;
        float *kp_b = kp + (size_t)b * kk * d, *vp_b = vp + (size_t)b * kk * d;
        /* K' = E K, V' = F V: [kk][d], every head at once (E and F are shared by the heads) */
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, kk, d, n, 1.0f, E, n, k_b, d, 0.0f, kp_b, d);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, kk, d, n, 1.0f, F, n, v_b, d, 0.0f, vp_b, d);
        if (round) {   /* Q K'^T and P V' read them rounded */
            atn_round_array(kp_b, kp_b, (size_t)kk * d, prec);
            atn_round_array(vp_b, vp_b, (size_t)kk * d, prec);
        }
        for (int32_t h = 0; h < H; h++) {
            const float *q_h = q + (size_t)b * n * d + h * kd;
            float *att = probs + ((size_t)b * H + h) * nk;
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, kk, kd, scale, q_h, d, kp_b + h * kd, d, 0.0f,
                        att, kk);
            for (int32_t i = 0; i < n; i++) {   /* the softmax of train-ops.c, no mask */
                float *row = att + (size_t)i * kk;
                float mx = -FLT_MAX;
                for (int32_t j = 0; j < kk; j++)
                    mx = row[j] > mx ? row[j] : mx;
                double sum = 0;
                for (int32_t j = 0; j < kk; j++) {
                    float x = row[j] - mx;
                    row[j] = x < -110.0f ? 0.0f : expf(x);
                    sum += row[j];
                }
                float inv = (float)(1.0 / sum);
                for (int32_t j = 0; j < kk; j++)
                    row[j] *= inv;
            }
            const float *use = att;
            if (keep) {
                float *att_d = probs_d + ((size_t)b * H + h) * nk;
                const float *kp_keep = keep + ((size_t)b * H + h) * nk;
                for (size_t i = 0; i < nk; i++)
                    att_d[i] = att[i] * kp_keep[i];
                use = att_d;
            }
            if (round) {   /* P V' reads the probabilities rounded (kept so for the backward) */
                float *att_d = probs_d + ((size_t)b * H + h) * nk;
                atn_round_array(att_d, use, nk, prec);
                use = att_d;
            }
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, kd, kk, 1.0f, use, kk, vp_b + h * kd, d, 0.0f,
                        ctx + (size_t)b * n * d + h * kd, d);
        }
    }
}

void atn_tr_linformer_backward(float *dq, float *dk, float *dv, float *dE, float *dF, float *scratch,
                               const float *dctx, const float *q, const float *k, const float *v, const float *E,
                               const float *F, const float *kp, const float *vp, const float *probs,
                               const float *probs_d, const float *keep, float scale, int32_t B, int32_t n,
                               int32_t kk, int32_t d, int32_t H, atn_precision prec) {
    int32_t kd = d / H;
    bool round = prec != ATN_PRECISION_FP32;
    size_t nk = (size_t)n * kk;
    float *dp = scratch, *dkp = scratch + nk, *dvp = dkp + (size_t)kk * d;   /* [n][kk], [kk][d] x 2 */
    for (int32_t b = 0; b < B; b++) {
        size_t off = (size_t)b * n * d;
        const float *kp_b = kp + (size_t)b * kk * d, *vp_b = vp + (size_t)b * kk * d;
        memset(dkp, 0, (size_t)kk * d * sizeof(float));
        memset(dvp, 0, (size_t)kk * d * sizeof(float));
        for (int32_t h = 0; h < H; h++) {
            const float *att = probs + ((size_t)b * H + h) * nk;
            const float *att_d = keep || round ? probs_d + ((size_t)b * H + h) * nk : att;
            const float *dc = dctx + off + h * kd;
            /* dV'_h = P_d^T dctx_h; dP_d = dctx_h V'_h^T */
            cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, kk, kd, n, 1.0f, att_d, kk, dc, d, 0.0f,
                        dvp + h * kd, d);
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, kk, kd, 1.0f, dc, d, vp_b + h * kd, d, 0.0f, dp,
                        kk);
            if (keep) {
                const float *kp_keep = keep + ((size_t)b * H + h) * nk;
                for (size_t i = 0; i < nk; i++)
                    dp[i] *= kp_keep[i];
            }
            /* softmax: dS = P (dP - sum_j dP P) */
            for (int32_t i = 0; i < n; i++) {
                float *g = dp + (size_t)i * kk;
                const float *p = att + (size_t)i * kk;
                double dot = 0;
                for (int32_t j = 0; j < kk; j++)
                    dot += (double)g[j] * p[j];
                float fd = (float)dot;
                for (int32_t j = 0; j < kk; j++)
                    g[j] = p[j] * (g[j] - fd);
            }
            /* dq_h += scale dS K'_h; dK'_h = scale dS^T q_h (reduced precision: scale dS rounded) */
            float alpha = scale;
            if (round) {
                for (size_t i = 0; i < nk; i++)
                    dp[i] *= scale;
                atn_round_array(dp, dp, nk, prec);
                alpha = 1.0f;
            }
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, kd, kk, alpha, dp, kk, kp_b + h * kd, d, 1.0f,
                        dq + off + h * kd, d);
            cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, kk, kd, n, alpha, dp, kk, q + off + h * kd, d, 0.0f,
                        dkp + h * kd, d);
        }
        if (round) {   /* the gradients the products E K and F V receive */
            atn_round_array(dkp, dkp, (size_t)kk * d, prec);
            atn_round_array(dvp, dvp, (size_t)kk * d, prec);
        }
        /* K' = E K: dK += E^T dK', dE += dK' K^T; the same for V' = F V */
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, n, d, kk, 1.0f, E, n, dkp, d, 1.0f, dk + off, d);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, kk, n, d, 1.0f, dkp, d, k + off, d, 1.0f, dE, n);
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, n, d, kk, 1.0f, F, n, dvp, d, 1.0f, dv + off, d);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, kk, n, d, 1.0f, dvp, d, v + off, d, 1.0f, dF, n);
    }
}
