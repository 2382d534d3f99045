/* The training lab (engine/train/): small transformers trained on the CPU, an encoder
 * (masked-LM) or a decoder (next token), on toy tasks or a text file, saved as Hugging Face
 * folders that attnscope opens in every view.
 *
 * A trainer owns one model (parameters, gradients and the optimiser's state in one arena),
 * the task's batch and the activations of the last forward.  One step is
 * atn_trainer_compute (draw a batch, forward, backward: the loss and every gradient) then
 * atn_trainer_update (clip, learning rate, SGD or AdamW).  Tensors are named as Hugging
 * Face names them: a decoder as GPT2LMHeadModel ("transformer.h.0.attn.c_attn.weight",
 * Conv1D [in, out], Q/K/V fused), an encoder as BertForMaskedLM ("bert.encoder.layer.0.
 * attention.self.query.weight", [out, in], the cls.predictions.* head).
 *
 * Deterministic: the same options (seed included) and the same OpenBLAS thread count give
 * the same numbers bit for bit.  Threads: a trainer is used by one thread at a time;
 * different trainers are independent.  Errors: ATN_E_INVALID names the option; ATN_E_NOMEM;
 * the writers' ATN_E_IO. */
#ifndef ATN_TRAIN_H
#define ATN_TRAIN_H

#include "attnscope.h"

typedef enum atn_train_task {
    ATN_TASK_COPY = 0,   /* y = x */
    ATN_TASK_REVERSE,    /* y = x reversed */
    ATN_TASK_SORT,       /* y = x sorted */
    ATN_TASK_INDUCTION,  /* a random run, repeated: the repeat is predicted */
    ATN_TASK_BRACKETS,   /* a string of ( and ): one answer, balanced or not */
    ATN_TASK_MODADD,     /* a + b = (a + b) mod p */
    ATN_TASK_TEXT,       /* next token / masked-LM on a text file, one token per character */
} atn_train_task;

typedef enum atn_train_norm { ATN_TRAIN_POST_LN = 0, ATN_TRAIN_PRE_LN, ATN_TRAIN_NO_LN } atn_train_norm;
typedef enum atn_train_init { ATN_INIT_NORMAL = 0, ATN_INIT_XAVIER, ATN_INIT_ORTHOGONAL } atn_train_init;
/* ALiBi: no position table (a zero one is saved), -m_h |i - j| added to head h's scores
 * (atn_alibi_slopes; a saved model runs with the what-if --alibi).  Rotary: no position
 * table, each head's q and k rotated by position (Llama's rotate_half pairs (i, i + k/2),
 * theta 10000); saved as a Llama folder when the model is one (rms_norm, attention_only,
 * a pre-LN decoder: atn_train_options_check). */
typedef enum atn_train_pos {
    ATN_POS_LEARNED = 0, ATN_POS_SINUSOIDAL, ATN_POS_NONE, ATN_POS_ALIBI, ATN_POS_ROTARY
} atn_train_pos;
/* Attention (train-attn-variants.c): full; causal; a window (keys within window of the
 * query); Longformer (Beltagy et al. 2020: the window, and the global positions attend to
 * every key and every query attends to them); chunked (keys in the query's block of chunk
 * tokens); Linformer (Wang et al. 2020: keys and values projected along the sequence by a
 * learned E and F [linformer_k][n] per layer, shared by the heads; each head's attention is
 * then [n][linformer_k]; an encoder only, not saved).  A decoder adds the causal mask to the
 * first five. */
typedef enum atn_train_attn {
    ATN_ATTN_FULL = 0, ATN_ATTN_CAUSAL, ATN_ATTN_WINDOW, ATN_ATTN_LONGFORMER, ATN_ATTN_CHUNKED,
    ATN_ATTN_LINFORMER
} atn_train_attn;
#define ATN_TRAIN_MAX_GLOBALS 32
typedef enum atn_train_optim { ATN_OPTIM_ADAMW = 0, ATN_OPTIM_SGD } atn_train_optim;

typedef struct atn_train_options {
    bool decoder;                 /* true: next token (causal attention); false: masked-LM */
    int32_t layers, d_model, heads, d_ffn;   /* d_ffn 0: 4 d_model */
    atn_train_norm norm;
    atn_train_init init;
    float init_std;               /* ATN_INIT_NORMAL's sigma (and the embeddings' always) */
    atn_train_pos positions;      /* all but learned have fixed tables (no gradient) */
    atn_train_attn attention;     /* a decoder is causal whatever this says, and WINDOW keeps
                                     keys within window of the query (and not later ones) */
    int32_t window;
    float dropout_attn, dropout_hidden;   /* probability of dropping, 0: off */
    uint64_t seed;
    atn_train_optim optim;
    float lr, beta1, beta2, adam_eps, weight_decay, momentum;
    int32_t warmup;               /* steps of linear warm-up, 0: none */
    float clip;                   /* global gradient-norm clip, 0: none */
    int32_t batch, steps;
    atn_train_task task;
    int32_t length;               /* the task's input length (text: tokens per window) */
    int32_t symbols;              /* the task's alphabet (2..62); modadd's p */
    float mask_prob;              /* masked-LM on text: share of tokens masked */
    const char *text_path;        /* ATN_TASK_TEXT's file (UTF-8), borrowed while the trainer lives */
    bool attention_only;          /* no MLP: each layer's MLP is one unit wide with weights fixed
                                     at 0 (saved so: the folder runs the same arithmetic) */
    bool rms_norm;                /* Llama's RMSNorm (no mean, no bias) in place of LayerNorm;
                                     a decoder's tensors are then named as LlamaForCausalLM's */
    /* Mixed precision (engine/train/train-precision.c), as torch.autocast + GradScaler:
       BF16 / FP16 round the operands of every matrix product of the forward and the
       backward (the weights, the activations, Q and K, the probabilities and V, and the
       gradients they multiply) to the format, nearest-even, as atn_precision says; sums,
       softmax, norms, activations, the loss and the optimiser stay FP32 on FP32 master
       weights.  FP16 scales the loss dynamically (GradScaler's defaults: 2^16 at first,
       x2 after 2000 steps without overflow, x0.5 and the step skipped when a gradient is
       inf or NaN). */
    atn_precision precision;
    /* Gradient checkpointing: keep only each layer's input in the forward and recompute the
       layer's activations in the backward (the same arithmetic, the same dropout masks: the
       gradients are equal bit for bit); atn_trainer_activation_bytes says what it saves. */
    bool checkpoint;
    /* ATN_ATTN_LONGFORMER's global positions: the first global_first tokens and the
       n_globals positions in globals (each < the task's tokens; both may be 0: a window) */
    int32_t global_first, n_globals;
    int32_t globals[ATN_TRAIN_MAX_GLOBALS];
    int32_t chunk;                /* ATN_ATTN_CHUNKED's block size (>= 1) */
    int32_t linformer_k;          /* ATN_ATTN_LINFORMER's projected length (1..tokens) */
} atn_train_options;

/* The defaults: decoder, 2 layers, d_model 64, 4 heads, pre-LN, normal 0.02, learned
 * positions (window 4; Longformer's first token global; chunk 4; Linformer k 4), AdamW lr 1e-3 (0.9, 0.999, 1e-8, weight decay 0.01), no warm-up, clip 1,
 * batch 32, 1000 steps, copy of length 16 over 10 symbols, seed 1, no dropout. */
void atn_train_options_init(atn_train_options *o);

/* The induction-head recipe (docs/training.md): the defaults changed to a 2-layer
 * attention-only decoder on the induction task with the steps, learning rate and sizes that
 * form an induction head (score >= 0.5 on held-out repeated runs) in about a minute on two
 * cores. */
void atn_train_options_induction(atn_train_options *o);

/* "copy", "reverse", ... and back (-1 for an unknown name). */
const char *atn_train_task_name(atn_train_task t);
int atn_train_task_parse(const char *name);

/* Checks o: ATN_E_INVALID with a message naming the option; also whether the model can
 * be written as a Hugging Face folder (for_saving): a decoder with pre-LN (GPT-2) or an
 * encoder with post-LN (BERT), positions other than rotary, LayerNorm; or a Llama: a
 * pre-LN decoder with rotary positions, rms_norm and attention_only; not Linformer (no
 * family holds its E and F); ATN_E_UNSUPPORTED otherwise.  The attention knobs are checked
 * as far as the options tell (globals and Linformer's k against the task's tokens: the
 * layout of every task but text). */
atn_status atn_train_options_check(const atn_train_options *o, bool for_saving, atn_error *err);

typedef struct atn_trainer atn_trainer;

/* A new trainer with initialised weights (o is copied; text_path is read now).  NULL with
 * err set on failure. */
atn_trainer *atn_trainer_new(const atn_train_options *o, atn_error *err);
void atn_trainer_free(atn_trainer *t);   /* NULL: nothing */

/* What one step measured. */
typedef struct atn_train_stats {
    int32_t step;          /* the steps done before this one (0 for the first) */
    float loss;            /* mean cross-entropy over the batch's labelled positions */
    float accuracy;        /* share of labelled positions whose argmax is the label */
    float grad_norm;       /* global norm before clipping */
    float lr;              /* the learning rate this step used (after warm-up) */
    /* FP16's loss scale (GradScaler): the scale this step's backward used (1 for FP32 and
       BF16), whether its gradients had an inf or NaN so the update skipped it, and the
       steps skipped so far (this one included).  compute fills loss_scale and overflow
       (the gradients it leaves are unscaled); update fills skipped_steps. */
    float loss_scale;
    bool overflow;
    int32_t skipped_steps;
} atn_train_stats;

/* Draws the next batch from the task (unless one was set), runs forward and backward:
 * the loss, accuracy and every gradient (kept until the next compute; FP16: unscaled, inf
 * or NaN on an overflow, which is no error: update skips the step).  out may be NULL. */
atn_status atn_trainer_compute(atn_trainer *t, atn_train_stats *out, atn_error *err);
/* Clips the gradients and applies one optimiser step; fills out's grad_norm and lr.  FP16:
 * a step whose gradients overflowed is skipped (the weights and the optimiser's state stay)
 * and the loss scale halves; otherwise it doubles after 2000 good steps in a row. */
atn_status atn_trainer_update(atn_trainer *t, atn_train_stats *out, atn_error *err);

/* Uses ids and labels ([batch][n] each, Hugging Face's convention: labels -100 where no
 * loss is taken; a decoder's labels are shifted inside, as GPT2LMHeadModel does) for the
 * next compute instead of drawing one.  ATN_E_INVALID: n out of range, an id outside the
 * vocabulary. */
atn_status atn_trainer_set_batch(atn_trainer *t, const int32_t *ids, const int32_t *labels, int32_t batch,
                                 int32_t n, atn_error *err);
/* The last batch (borrowed, valid until the next compute): ids and labels [batch][n]. */
void atn_trainer_batch(const atn_trainer *t, const int32_t **ids, const int32_t **labels, int32_t *batch,
                       int32_t *n);

/* The model's tensors by Hugging Face name: count of them, the i-th name (borrowed) and
 * shape (up to 2 dims).  Copies the tensor's values (grad false) or gradient (true) into
 * out (its element count), or sets the values from in.  ATN_E_INVALID: unknown name or a
 * size that differs. */
int32_t atn_trainer_tensor_count(const atn_trainer *t);
const char *atn_trainer_tensor_name(const atn_trainer *t, int32_t i, int64_t shape[2], int *ndim);
atn_status atn_trainer_tensor_get(const atn_trainer *t, const char *name, bool grad, float *out, size_t count,
                                  atn_error *err);
atn_status atn_trainer_tensor_set(atn_trainer *t, const char *name, const float *in, size_t count,
                                  atn_error *err);

/* Runs the forward without dropout and without a gradient on ids ([n], n the trainer's
 * tokens per sequence; every sequence of the batch gets them): afterwards
 * atn_trainer_attention gives its attention and the loss is not kept.  ATN_E_INVALID: n
 * differs, an id outside the vocabulary. */
atn_status atn_trainer_probe(atn_trainer *t, const int32_t *ids, int32_t n, atn_error *err);
/* The attention of layer's first sequence in the last forward, [heads][n][keys] (borrowed,
 * valid until the next compute or probe): keys is n, or Linformer's linformer_k (a column
 * is then a projected key, a learned mix of every token, not a token); NULL for a layer
 * out of range. */
const float *atn_trainer_attention(const atn_trainer *t, int32_t layer, int32_t *n);
/* The key columns of atn_trainer_attention: n, or linformer_k under ATN_ATTN_LINFORMER. */
int32_t atn_trainer_attention_keys(const atn_trainer *t);
/* Every head's induction score in the last forward's first sequence (after a probe: the
 * probe's ids), defined as atn_head_stats.induction is (analysis.h, Olsson et al. 2022):
 * over the query rows i whose pair (ids[i-1], ids[i]) occurred earlier at (j-1, j),
 * j + 1 < i, the mean of the attention on those j + 1.  out [layers][heads] (0 where no row
 * qualifies); returns the number of such rows (0: the sequence repeats nothing, or Linformer,
 * whose keys are not tokens). */
int32_t atn_trainer_induction_scores(const atn_trainer *t, float *out);
/* Tokens per sequence (the task's layout). */
int32_t atn_trainer_tokens(const atn_trainer *t);
/* The vocabulary (token i's text, borrowed) and its size. */
int32_t atn_trainer_vocab_size(const atn_trainer *t);
const char *atn_trainer_token(const atn_trainer *t, int32_t id);
/* The norm of layer's parameter gradients from the last compute (before clipping): its
 * LayerNorms, Q/K/V/O and MLP weights and biases; -1 for a layer out of range. */
float atn_trainer_layer_grad_norm(const atn_trainer *t, int32_t layer);
/* Steps done (updates called, FP16's skipped steps included). */
int32_t atn_trainer_steps_done(const atn_trainer *t);

/* The bytes the trainer allocated for activations (every buffer a step's forward and
 * backward write: the layers' kept activations, the head, the backward's scratch, the
 * reduced-precision rounding scratch), counted as they are allocated.  *per_layer (may be
 * NULL) gets the part kept for the layers, which gradient checkpointing cuts to each
 * layer's input plus one layer's set. */
size_t atn_trainer_activation_bytes(const atn_trainer *t, size_t *per_layer);

/* Writes the model as a Hugging Face folder (config.json, model.safetensors, vocab.txt,
 * tokenizer_config.json, training.json with the options) into dir (created if needed;
 * each file written atomically).  ATN_E_UNSUPPORTED: a layout no family holds
 * (atn_train_options_check). */
atn_status atn_trainer_save(const atn_trainer *t, const char *dir, atn_error *err);
/* Writes path (.npz, as numpy.savez): the last batch (input_ids, labels, attention_mask:
 * int64 [batch][n]), the loss (a float32 0-d array) and every parameter's gradient (float32)
 * under its tensor name; fixed position tables (sinusoidal, none) are not parameters. */
atn_status atn_trainer_dump_grads(const atn_trainer *t, const char *path, atn_error *err);

#endif
