/* The trainer's insides (engine/train/), shared by train-model.c (the model, its forward and
 * backward walk), train-tasks.c (the batches), train-optim.c (the optimisers) and
 * train-save.c (the Hugging Face folder and the gradient dump).  Public contract: train.h. */
#ifndef ATN_TRAIN_PRIVATE_H
#define ATN_TRAIN_PRIVATE_H

#include "train.h"
#include "forward/layer.h"   /* atn_layer_desc: the same description as every family */

#include <stdint.h>

/* A seeded random stream (xoshiro256**). */
typedef struct atn_tr_rng {
    uint64_t s[4];
} atn_tr_rng;
void atn_tr_rng_seed(atn_tr_rng *r, uint64_t seed, uint64_t stream);
uint64_t atn_tr_rng_next(atn_tr_rng *r);
double atn_tr_rng_uniform(atn_tr_rng *r);   /* [0, 1) */
double atn_tr_rng_normal(atn_tr_rng *r);    /* N(0, 1), Box-Muller */
int32_t atn_tr_rng_below(atn_tr_rng *r, int32_t n);   /* 0..n-1 */

/* FP16's dynamic loss scale, torch.amp.GradScaler's (_amp_update_scale_). */
typedef struct atn_tr_scaler {
    float scale;               /* 65536 at first */
    float growth, backoff;     /* 2, 0.5 */
    int32_t interval, tracker; /* 2000; good steps in a row since the last change */
    int32_t skipped;           /* steps skipped for inf / NaN gradients */
    bool found_inf;            /* the last compute's gradients had an inf or NaN */
} atn_tr_scaler;

/* One parameter tensor of the arena: values p, gradient g, Adam's m and v, count floats,
 * [rows][cols] (rows 1 for a vector).  Fixed tables (sinusoidal or no positions) have no
 * gradient taken and are not updated. */
typedef struct atn_tr_param {
    char name[32];             /* internal name, for messages */
    float *p, *g, *m, *v;
    int32_t rows, cols;
    bool fixed;
    bool matrix;               /* a weight matrix even with one row (an attention-only MLP's w1) */
} atn_tr_param;

/* A layer's parameters (indexes into atn_trainer.params; -1: absent). */
typedef struct atn_tr_layer {
    int ln1_g, ln1_b, wq, bq, wk, bk, wv, bv, wo, bo, ln2_g, ln2_b, w1, b1, w2, b2;
    int lin_e, lin_f;          /* Linformer's E and F [k][n] */
} atn_tr_layer;

/* A layer's activations of the last forward ([M][d] unless said). */
typedef struct atn_tr_acts {
    float *x;                  /* the layer's input (hidden[l]) */
    float *attn_in;            /* LN1(x) (pre-LN), else x */
    float *ln1_in, *ln1_mean, *ln1_rstd;   /* LN1's input (x pre-LN, x + attn post-LN), [M] stats */
    float *q, *k, *v, *ctx, *ao;
    float *probs, *probs_d, *keep_attn;    /* [B][H][n][n] (Linformer: [B][H][n][k]) */
    float *kp, *vp;            /* Linformer's E K and F V [B][k][d], or NULL */
    float *keep_ao, *keep_h2;              /* hidden dropout, or NULL */
    float *r;                  /* the stream after attention (post-LN: LN1's output) */
    float *ffn_in;             /* LN2(r) (pre-LN), else r */
    float *ln2_in, *ln2_mean, *ln2_rstd;
    float *f_pre, *f_act;      /* [M][f] */
    float *h2;                 /* the MLP's output (after dropout) */
    float *s;                  /* r + h2: LN2's input post-LN, else the output */
} atn_tr_acts;

/* One HF tensor: the concatenation along the output dimension of nparts parameters,
 * stored [in][out] when in_out (GPT-2's Conv1D), else as the parameters are. */
typedef struct atn_tr_tensor {
    char name[96];
    int parts[3], nparts;
    bool in_out;
    int ndim;
    int64_t shape[2];
} atn_tr_tensor;

struct atn_trainer {
    atn_train_options o;
    atn_layer_desc desc;       /* norm place, activation, eps, sizes: as any family's */
    int32_t V, P, n, B, M;     /* vocabulary, position rows, tokens, sequences, rows */
    char **vocab;              /* [V] token texts */
    int32_t n_special;         /* [PAD] [UNK] [CLS] [SEP] [MASK] */
    int32_t sym0, extra0;      /* ids of the first task symbol and of ( ) + = */
    /* the text task's characters as ids */
    int32_t *text_ids;
    int64_t text_len;

    atn_tr_param *params;
    int n_params;
    float *arena;              /* params | grads | m | v, each total floats */
    size_t total;
    int wte, wpe, wtt, emb_g, emb_b, lnf_g, lnf_b, hd_w, hd_b, hln_g, hln_b, h_bias;
    atn_tr_layer *layers;
    atn_tr_tensor *tensors;
    int n_tensors;

    /* the batch [B][n] and the rows' targets [M] (labels shifted for a decoder) */
    int32_t *ids, *labels, *target;
    bool batch_set;
    float *mask;               /* [n][n] additive */
    float *slopes;             /* [H] ALiBi's (used with ATN_POS_ALIBI) */
    /* activations */
    float *act_block;
    float *emb_sum, *emb_mean, *emb_rstd, *keep_emb;   /* [M][d] (+[M] stats) */
    float **hidden;            /* [L+1] -> [M][d] */
    atn_tr_acts *acts;
    float *fin, *fin_mean, *fin_rstd;   /* the final hidden rows (after ln_f) */
    float *hd_pre, *hd_act, *hd_mean, *hd_rstd, *hd_out;   /* the MLM head's steps */
    float *logits, *dlogits;   /* [M][V] */
    /* backward scratch */
    float *d_a, *d_b, *d_c, *d_q, *d_k, *d_v, *d_f, *d_att;
    float *d_lin;              /* Linformer's backward scratch ([n][k] + 2 [k][d]), or NULL */
    int32_t keys;              /* key columns of the attention: n, or Linformer's k */
    float loss, accuracy;
    int32_t steps_done;
    int32_t optim_steps;       /* updates applied (FP16's skipped steps left out): AdamW's t */
    atn_tr_rng data_rng, drop_rng;
    /* reduced precision (train-precision.c): the weights rounded (params' layout, total
       floats; NULL for FP32), two rounding scratches of round_floats each, the loss scale */
    float *rw, *round_a, *round_b;
    size_t round_floats;
    atn_tr_scaler scaler;
    /* checkpointing: the dropout stream at each layer's start [L], each layer's attention of
       sequence 0 [L][H][n][n] (the layers share one set of activations) */
    atn_tr_rng *ckpt_rng;
    float *ckpt_probs;
    size_t act_bytes, act_layer_bytes;   /* atn_trainer_activation_bytes */
};

/* train-model.c */
atn_status atn_tr_model_build(atn_trainer *t, atn_error *err);
void atn_tr_forward_backward(atn_trainer *t);
void atn_tr_forward_eval(atn_trainer *t);   /* no dropout, no backward */
int atn_tr_find_tensor(const atn_trainer *t, const char *name);
/* Layer l's attention [B][H][n][keys] of the last forward (with checkpointing: sequence 0's
 * only, [H][n][keys]). */
const float *atn_tr_layer_probs(const atn_trainer *t, int32_t l);

/* train-attn-variants.c: the attention options' checks (ATN_E_INVALID naming the option),
 * whether position pos is one of Longformer's globals, whether the attention hides key j
 * from query i (the decoder's causal term included), the [n][n] additive mask (0 or -inf),
 * and Linformer's forward (kp, vp [B][k][d] kept for the backward; probs, probs_d, keep
 * [B][H][n][k]) and backward (dq, dk, dv [M][d], dE, dF [k][n] added into; scratch
 * [n][k] + 2 [k][d] floats), as train-ops.h's attention; E and F are what the products
 * read (atn_tr_mm_w: rounded under BF16 / FP16), and prec rounds the rest as train-ops.h's
 * attention does (K' and V' kept rounded in kp, vp). */
atn_status atn_tr_attn_check(const atn_train_options *o, atn_error *err);
bool atn_tr_attn_global(const atn_train_options *o, int32_t pos);
bool atn_tr_attn_hides(const atn_train_options *o, int32_t i, int32_t j);
void atn_tr_attn_mask(const atn_train_options *o, int32_t n, float *mask);
void atn_tr_linformer_forward(float *ctx, float *probs, float *probs_d, float *kp, float *vp, const float *q,
                              const float *k, const float *v, const float *E, const float *F, const float *keep,
                              float scale, int32_t B, int32_t n, int32_t kk, int32_t d, int32_t H,
                              atn_precision prec);
void atn_tr_linformer_backward(float *dq, float *dk, float *dv, float *dE, float *dF, float *scratch,
                               const float *dctx, const float *q, const float *k, const float *v, const float *E,
                               const float *F, const float *kp, const float *vp, const float *probs,
                               const float *probs_d, const float *keep, float scale, int32_t B, int32_t n,
                               int32_t kk, int32_t d, int32_t H, atn_precision prec);

/* train-tasks.c */
atn_status atn_tr_vocab_build(atn_trainer *t, atn_error *err);
int32_t atn_tr_task_tokens(const atn_train_options *o);   /* n for the task */
void atn_tr_task_batch(atn_trainer *t);

/* train-precision.c */
void atn_tr_scaler_init(atn_tr_scaler *s);
/* After a step: found_inf halves the scale (tracker 0), else the tracker counts, and at
 * interval the scale doubles (when finite) and the tracker restarts. */
void atn_tr_scaler_update(atn_tr_scaler *s, bool found_inf);
/* Allocates the rounding buffers (FP32: none); adds their bytes to t->act_bytes. */
atn_status atn_tr_precision_build(atn_trainer *t, atn_error *err);
void atn_tr_precision_free(atn_trainer *t);
/* Before a forward: the weights rounded into t->rw (FP32: nothing). */
void atn_tr_precision_begin(atn_trainer *t);
/* What a matrix product reads: parameter i's values (rounded unless FP32), x (count floats)
 * rounded into scratch slot 0 or 1 (x itself for FP32; valid until the slot's next use), x
 * rounded in place. */
const float *atn_tr_mm_w(const atn_trainer *t, int i);
const float *atn_tr_mm_x(const atn_trainer *t, const float *x, size_t count, int slot);
void atn_tr_mm_round(const atn_trainer *t, float *x, size_t count);
/* A linear (train-ops.h's, parameter indexes w and b, b -1: none) whose products read
 * their operands through atn_tr_mm_w / atn_tr_mm_x; the backward's bias gradient sums the
 * unrounded dout, as autograd's. */
void atn_tr_p_linear_forward(const atn_trainer *t, float *out, const float *in, int w, int b, int32_t M, int32_t i,
                             int32_t o);
void atn_tr_p_linear_backward(const atn_trainer *t, float *din, int w, int b, const float *dout, const float *in,
                              int32_t M, int32_t i, int32_t o);
/* After the forward's loss: dlogits times the loss scale (FP16). */
void atn_tr_precision_scale_loss(atn_trainer *t);
/* After the backward: the gradients unscaled (times the scale's reciprocal as a float, as
 * GradScaler.unscale_) and checked: t->scaler.found_inf (FP16; FP32 and BF16: false). */
void atn_tr_precision_unscale(atn_trainer *t);

/* train-optim.c */
float atn_tr_grad_norm(const atn_trainer *t);
void atn_tr_optim_step(atn_trainer *t, float lr, float clip_scale);
float atn_tr_lr_at(const atn_train_options *o, int32_t step);

enum { ATN_TR_PAD = 0, ATN_TR_UNK, ATN_TR_CLS, ATN_TR_SEP, ATN_TR_MASK, ATN_TR_NSPECIAL };

#endif
