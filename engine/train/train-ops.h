/* The training lab's ops (engine/train/train-ops.c): each forward with its backward beside
 * it, as llm.c's train_gpt2.c writes them.  Outputs first, then inputs and weights, then
 * sizes.  Size letters: M rows (batch x tokens), n tokens of one sequence, B sequences,
 * d width, H heads, k = d/H head width, f ffn width, V vocabulary.  A backward adds (+=)
 * into the gradients of weights and inputs, so callers zero them once per step. */
#ifndef ATN_TRAIN_OPS_H
#define ATN_TRAIN_OPS_H

#include "attnscope.h"

#include <stddef.h>
#include <stdint.h>

/* out[M, o] = in[M, i] w[o, i]^T + b (b NULL: none): atn_linear. */
void atn_tr_linear_forward(float *out, const float *in, const float *w, const float *b, int32_t M, int32_t i,
                           int32_t o);
/* din[M, i] += dout w (din NULL: skipped), dw[o, i] += dout^T in, db[o] += column sums. */
void atn_tr_linear_backward(float *din, float *dw, float *db, const float *dout, const float *in, const float *w,
                            int32_t M, int32_t i, int32_t o);

/* out[M, d] = (in - mean) rstd g + b, as atn_layernorm (the same bits); mean and rstd [M]
 * are kept for the backward. */
void atn_tr_layernorm_forward(float *out, float *mean, float *rstd, const float *in, const float *g,
                              const float *b, int32_t M, int32_t d, float eps);
void atn_tr_layernorm_backward(float *din, float *dg, float *db, const float *dout, const float *in,
                               const float *mean, const float *rstd, const float *g, int32_t M, int32_t d);

/* out[M, d] = in rstd g with rstd = 1 / sqrt(mean(in^2) + eps), Llama's RMSNorm; rstd [M]
 * kept for the backward, which adds into din and dg. */
void atn_tr_rmsnorm_forward(float *out, float *rstd, const float *in, const float *g, int32_t M, int32_t d,
                            float eps);
void atn_tr_rmsnorm_backward(float *din, float *dg, const float *dout, const float *in, const float *rstd,
                             const float *g, int32_t M, int32_t d);

/* out = act(in) (count values; GELU erf, GELU tanh, ReLU or SiLU: atn_activate), and din +=
 * dout act'(in). */
void atn_tr_act_forward(float *out, const float *in, size_t count, atn_activation act);
void atn_tr_act_backward(float *din, const float *dout, const float *in, size_t count, atn_activation act);

/* Attention of B sequences of n tokens, H heads: for each (b, h) probs[b][h] =
 * softmax(q_h k_h^T scale + mask) ([n][n], row = query; mask [n][n] additive, 0 or -inf
 * style: a cell with mask < -1e30 gets probability 0), then dropped (keep [B][H][n][n]: 0 or
 * 1/(1-p); NULL: none) into probs_d (may be probs when keep is NULL), ctx_h = probs_d v_h.
 * q, k, v, ctx [M][d].  slopes [H] (NULL: none): ALiBi's -slopes[h] |i - j| added after the
 * mask, as ops-ref.c adds it (a constant per cell: the backward does not change).  prec
 * BF16 / FP16 (train-precision.c): probs_d (a buffer of its own then, keep or not) gets the
 * probabilities rounded, which P·V reads; q, k and v the caller rounds. */
void atn_tr_attention_forward(float *ctx, float *probs, float *probs_d, const float *q, const float *k,
                              const float *v, const float *mask, const float *slopes, const float *keep,
                              float scale, int32_t B, int32_t n, int32_t d, int32_t H, atn_precision prec);
/* dq, dk, dv [M][d] += the gradients from dctx; scratch [n][n] floats.  prec BF16 / FP16:
 * scale dS is rounded before the products with k and q; dctx the caller rounds. */
void atn_tr_attention_backward(float *dq, float *dk, float *dv, float *scratch, const float *dctx,
                               const float *q, const float *k, const float *v, const float *probs,
                               const float *probs_d, const float *keep, float scale, int32_t B, int32_t n,
                               int32_t d, int32_t H, atn_precision prec);

/* Rotary positions on x [M][d] in place (B sequences of n rows, H heads of k = d/H): in
 * each head the pairs (i, i + k/2) of row r turn by the angle (r mod n) theta^(-2i/k), as
 * Llama's apply_rotary_pos_emb with rotate_half; sign -1 turns back (the backward). */
void atn_tr_rotary(float *x, int32_t M, int32_t n, int32_t d, int32_t H, float theta, int sign);

/* x[i] *= keep[i] (inverted dropout's scale, or 0); the backward is the same product. */
void atn_tr_dropout(float *x, const float *keep, size_t count);

/* Cross-entropy over rows with a target (target[r] < 0: no loss): the mean loss and the
 * count of rows whose argmax is the target (*correct) and of rows with a target (*count);
 * dlogits[M, V] = (softmax - onehot) / count (0 on rows without a target). */
float atn_tr_crossentropy(float *dlogits, int64_t *correct, int64_t *count, const float *logits,
                          const int32_t *target, int32_t M, int32_t V);

#endif
