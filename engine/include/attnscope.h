/* attnscope engine: the public interface.
 *
 * A BERT-family encoder that keeps every head's attention, plus what is needed to
 * recompute any head by hand (the trace).  No GLib, GTK or cairo: libc, libm,
 * OpenBLAS and cJSON only, so any C program can use it.
 *
 * Conventions
 *  - Every public symbol starts with atn_.  Indices start at 0.
 *  - Functions that can fail return atn_status (0 ok, negative error) and, when the
 *    caller passes a non-NULL atn_error, fill it with a message that names the file,
 *    tensor or offset and what was expected.  The engine never exits or aborts on bad
 *    input.
 *  - A struct that owns memory has one function that frees it and accepts NULL: its _free
 *    (an atn_atomic_file ends with atn_atomic_close, which also keeps or drops the file).
 *  - Ownership: what a function returns through a pointer to pointer (atn_model *,
 *    atn_encoding **out ...) belongs to the caller, who frees it with the matching _free;
 *    on failure *out is set to NULL.  A const pointer returned by an accessor is borrowed
 *    from its owner and valid as long as the owner (the model, the run) lives, unless the
 *    comment says shorter.  Strings the engine is given are copied when it keeps them.
 *  - NULL: err may always be NULL (no message, the status is still returned); progress
 *    callbacks may be NULL.  Any other pointer argument must not be NULL unless its
 *    comment says what NULL does; the entry points that check it answer ATN_E_INVALID.
 *  - Size letters in shape comments: L layers, H heads, n tokens, d model width,
 *    k head width (d / H), f feed-forward width, V vocabulary.  Arrays are C order.
 *
 * Threads
 *  - A model is shared: any number of threads may run, trace, predict, encode and
 *    analyse with one const atn_model at the same time, each with its own atn_run (a run,
 *    its capture and its encodings belong to one thread at a time; a capture may be read
 *    by many threads while nobody calls atn_run_forward on its run).  The caches a model
 *    fills on first use (the CPU's packed weights, the GPU's uploaded weights) are taken
 *    under the engine's locks.
 *  - Must not run concurrently with anything using the same model: atn_model_free and
 *    atn_model_toy_set (it writes the weights a forward reads).
 *  - Process-wide: the CPU fast path's thread team (one per process; a forward holds it,
 *    so two CPU forwards on the fast path take turns; its size follows
 *    atn_run_options.threads, else OpenBLAS's thread count, which the engine reads but
 *    never sets: openblas_set_num_threads and OPENBLAS_NUM_THREADS stay the caller's);
 *    the CUDA module, loaded and probed once per process on the first GPU request
 *    (pthread_once; ATTNSCOPE_CUDA_MODULE and CUDA_VISIBLE_DEVICES must be set before
 *    that), whose answer holds for the process; the data folder (ATTNSCOPE_DATADIR, read
 *    at each atn_model_open of a built-in name).
 *  - Progress callbacks are called on the thread doing the work (atn_similarity_* with
 *    pairs on helper threads still report on the calling thread).
 *  - No function keeps global mutable state besides the above, so atn_error, the
 *    accumulators (atn_similarity, atn_stats) and the traces are per caller.
 *  - Weight matrices are stored as Hugging Face writes nn.Linear weights: [out, in],
 *    so y = x W^T + b.  Toy-model JSON uses the textbook orientation Q = X W_Q
 *    (W_Q is [in, out]); the toy loader transposes.
 */
#ifndef ATTNSCOPE_H
#define ATTNSCOPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- status and errors ------------------------------------------------------ */

typedef enum atn_status {
    ATN_OK = 0,
    ATN_E_INVALID = -1,   /* bad argument or bad input (index out of range, bad text) */
    ATN_E_IO = -2,        /* a file could not be opened or read */
    ATN_E_FORMAT = -3,    /* a file is malformed (JSON, safetensors, vocab) */
    ATN_E_SHAPE = -4,     /* a tensor or matrix has the wrong shape */
    ATN_E_NOMEM = -5,     /* allocation failed, or a request would exceed a limit */
    ATN_E_CANCELLED = -6, /* the progress callback asked to stop */
    ATN_E_DEVICE = -7,    /* the requested compute device is not usable */
    ATN_E_UNSUPPORTED = -8,
} atn_status;

enum { ATN_ERROR_MAX = 1024, ATN_ERROR_ARGS = 8, ATN_ERROR_ARG_MAX = 256 };

/* message is the English text.  The rest lets a caller translate it (atn_error_translate):
 * format is the printf format atn_error_set was given (static storage: the msgid a
 * translation catalogue holds; the engine's formats are extracted by xgettext with the
 * keyword atn_error_set:3), args its n_args arguments each as printed, prefix_len the
 * bytes atn_error_prefix put before it, check a hash of message as set.  format is NULL
 * when the message cannot be rebuilt (more than ATN_ERROR_ARGS arguments, an argument
 * longer than ATN_ERROR_ARG_MAX - 1). */
typedef struct atn_error {
    atn_status status;
    char message[ATN_ERROR_MAX];
    const char *format;
    int32_t n_args, prefix_len;
    uint32_t check;
    char args[ATN_ERROR_ARGS][ATN_ERROR_ARG_MAX];
} atn_error;

/* "ok", "invalid argument", ... (static storage; "unknown status" for other values). */
const char *atn_status_str(atn_status status);

/* Sets err (when not NULL) and returns status, so error paths read
 *   return atn_error_set(err, ATN_E_FORMAT, "%s: header size %llu past end", path, n); */
atn_status atn_error_set(atn_error *err, atn_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Prefixes an existing message: "context: old message"; returns err->status (ATN_OK for a
 * NULL err). */
atn_status atn_error_prefix(atn_error *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void atn_error_clear(atn_error *err);   /* status ATN_OK, empty message; NULL: nothing */
/* Writes err's message with translated (a translation of err->format: the same
 * conversions, in order or numbered "%2$s") in place of its English format, after the
 * prefix atn_error_prefix added, into out[size].  Each conversion takes the argument as
 * the engine printed it.  Returns false (out gets the English message) when err is NULL,
 * has no format, translated is NULL or names other arguments than the format has, or the
 * message was changed since it was set. */
bool atn_error_translate(const atn_error *err, const char *translated, char *out, size_t size);

/* ---- model description ------------------------------------------------------ */

typedef enum atn_activation {
    ATN_ACT_GELU = 0,  /* 0.5 x (1 + erf(x / sqrt 2)), HF "gelu" */
    ATN_ACT_GELU_TANH, /* tanh approximation, HF "gelu_new" / "gelu_pytorch_tanh" */
    ATN_ACT_RELU,
    ATN_ACT_SILU,      /* x sigmoid(x), HF "silu" / "swish" (the gate of SwiGLU MLPs) */
} atn_activation;

const char *atn_activation_name(atn_activation act);   /* "gelu", "gelu_tanh", "relu", "silu"; "?" (static) */

typedef struct atn_config {
    int32_t n_layers;        /* L */
    int32_t d_model;         /* d */
    int32_t n_heads;         /* H, divides d */
    int32_t d_head;          /* k = d / H (a rotary decoder's head_dim may differ: H k != d) */
    int32_t d_ffn;           /* f */
    atn_activation act;
    float ln_eps;
    int32_t max_positions;   /* 0 for toy models without position embeddings */
    int32_t vocab_size;      /* 0 for toy models */
    int32_t type_vocab_size;
    /* switches used by toy models; all true for BERT */
    bool use_bias;
    bool use_layernorm;
    bool use_ffn;
    bool use_residual;
    bool use_embeddings;     /* false: the input is given vectors, not token ids */
    /* E, the width of the embedding tables (ALBERT, ELECTRA: embedding_size), projected to
       d_model before layer 0 when the model has that projection; 0 means d_model */
    int32_t d_embed;
    /* the padding token's id where the family's position ids depend on it (RoBERTa's
       padding_idx); 0 otherwise */
    int32_t pad_token_id;
    /* the K/V heads of grouped-query attention (Llama's num_key_value_heads): query head h
       reads K/V head h / (n_heads / n_kv_heads); 0 means n_heads (every head its own) */
    int32_t n_kv_heads;
    /* a gated feed-forward (SwiGLU): act(x Wg^T) * (x W1^T), then W2 */
    bool gated_ffn;
} atn_config;

/* Checks the numbers agree with each other (heads divide d, positive sizes ...):
 * ATN_OK or ATN_E_INVALID naming the first field that is wrong. */
atn_status atn_config_validate(const atn_config *cfg, atn_error *err);

/* ---- models ----------------------------------------------------------------- */

typedef struct atn_model atn_model;

typedef enum atn_model_kind {
    ATN_MODEL_TOY = 0,  /* JSON: tokens with given vectors */
    ATN_MODEL_BERT,     /* a transformer of one of the families (BERT ... GPT-2; atn_model_family_name):
                           a Hugging Face folder or a random model (atn_model_new_random) */
} atn_model_kind;

/* The stage a long piece of work is in, as the progress callback reports it.  Callers
 * translate by value; atn_stage_name gives the English words. */
typedef enum atn_stage {
    ATN_STAGE_READ_CONFIG = 0,   /* opening a Hugging Face folder: reading config.json */
    ATN_STAGE_MAP_WEIGHTS,       /* ... mapping the weight files (a shard index's names too) */
    ATN_STAGE_CONVERT_WEIGHTS,   /* ... converting fp16/bf16 weights to fp32 */
    ATN_STAGE_READ_VOCAB,        /* ... reading the tokenizer's files */
    ATN_STAGE_LAYER,             /* a forward pass: fraction = layers done / L */
    ATN_STAGE_CORPUS,            /* a corpus pass: fraction of the bytes read */
    ATN_STAGE_SIMILARITY,        /* comparing head pairs: fraction of the pairs done */
    ATN_STAGE_DONE,              /* the work is finished (fraction 1) */
    ATN_STAGE_STATISTICS,        /* head statistics of one capture: fraction of the heads done */
    ATN_STAGE_TOKENIZE,          /* tokenizing a text (fraction 0: asked only whether to go on) */
    ATN_STAGE_FLOW,              /* attention flow (atn_flow_compute): fraction of the token pairs done */
    ATN_STAGE_COUNT
} atn_stage;

/* "reading config.json", "mapping weights", "converting weights", "reading vocab.txt",
 * "layer", "reading the corpus", "similarity", "done", "statistics", "tokenizing", "attention flow"; "?" for a value out
 * of range.  Static storage. */
const char *atn_stage_name(atn_stage stage);

/* Progress of long work: called on the thread doing the work, with fractions 0..1 that
 * never go back within one call of the function it was given to, and the stage; returns
 * false to cancel (the work then ends with ATN_E_CANCELLED).  Every progress parameter
 * and field may be NULL: no reports, no cancelling. */
typedef bool (*atn_progress_fn)(double fraction, atn_stage stage, void *user_data);

/* The atn_model_open* functions return a model the caller owns (atn_model_free), or NULL
 * with err set: ATN_E_INVALID (NULL or empty name, a bad configuration), ATN_E_IO (cannot
 * open or read; a name that is neither a file or folder, a built-in name nor a cached
 * model), ATN_E_FORMAT (malformed JSON, safetensors, vocabulary), ATN_E_SHAPE (a tensor of
 * the wrong shape), ATN_E_NOMEM, ATN_E_CANCELLED (progress returned false),
 * ATN_E_UNSUPPORTED (a model_type, dtype or activation it does not know). */

/* Opens a model by path (a toy JSON file or a Hugging Face folder, as
 * atn_model_open_toy_json / atn_model_open_hf), else "random:SHAPE[@SEED][#POSITIONS]" (a
 * name that is no file: atn_model_new_random_shape_positions's model of that shape, seed 1
 * unless given, at least POSITIONS position rows, named by
 * the whole spec; no tokenizer, so it takes ids), else by built-in name
 * (atn_builtin_model_names), else as "org/name[@rev]" from the Hugging Face cache
 * (atn_hf_cache_resolve in hf-cache.h), reporting the ATN_STAGE_READ_CONFIG .. READ_VOCAB
 * and DONE stages to progress (Hugging Face folders only).  An unknown shape, a seed that
 * is not a non-negative integer or a position count outside 1..2^20 is ATN_E_INVALID. */
#define ATN_RANDOM_PREFIX "random:"
atn_model *atn_model_open(const char *name_or_path, atn_progress_fn progress, void *user_data,
                          atn_error *err);
atn_model *atn_model_open_toy_json(const char *path, atn_error *err);   /* files up to 64 MB */
/* A toy model from JSON text in memory (len bytes, need not be NUL-terminated); origin
 * names it in messages. */
atn_model *atn_model_parse_toy_json(const char *json_text, size_t len, const char *origin,
                                    atn_error *err);
/* A Hugging Face folder (config.json, weights, vocab.txt).  Weights: the first present of
 * model.safetensors, model.safetensors.index.json (shards), pytorch_model.bin,
 * pytorch_model.bin.index.json (shards); a .bin is read without executing its pickle
 * (only a state_dict's globals are allowed; others are refused by name, ATN_E_UNSUPPORTED).
 * Weights are mapped, not copied, where they are fp32 and contiguous. */
atn_model *atn_model_open_hf(const char *folder, atn_progress_fn progress, void *user_data,
                             atn_error *err);
/* Frees the model, its weights, its tokenizer and its GPU copy.  NULL: nothing.  No run,
 * capture, trace or encoding made from it may be used afterwards (captures and traces
 * borrow its vocabulary and shapes). */
void atn_model_free(atn_model *model);

/* Accessors: model must not be NULL; the results are borrowed from the model. */
const atn_config *atn_model_config(const atn_model *model);
atn_model_kind atn_model_kind_of(const atn_model *model);
const char *atn_model_name(const atn_model *model);  /* short display name */
bool atn_model_has_mlm_head(const atn_model *model);  /* cls.predictions.* weights present */
/* A causal (decoder) model, GPT-2: query i attends to keys 0..i only (the capture's mask
 * has ATN_MASK_MIN, HF's finfo.min, for later keys: views draw those cells as masked), and
 * its LM head guesses the next token (atn_predict_next) instead of masked words.
 * false for NULL. */
bool atn_model_is_causal(const atn_model *model);

/* Whether model is an encoder-decoder (T5, BART, Marian): a run then takes a source (the
 * encoding) and a target (atn_run_options.target_ids) and its capture has three stacks
 * (atn_capture.stacks); atn_predict_next guesses the decoder's next token after target
 * position p.  False for NULL. */
bool atn_model_is_encoder_decoder(const atn_model *model);
/* The decoder's layers (0 for any other model) and the id its input starts with
 * (config.json's decoder_start_token_id; -1 for any other model).  model not NULL. */
int32_t atn_model_decoder_layers(const atn_model *model);
int32_t atn_model_decoder_start_id(const atn_model *model);

/* Which stored weights captured layer `layer` runs.  ALBERT shares weights between layers:
 * its num_hidden_layers applications of inner_group_num inner layers are
 * num_hidden_layers x inner_group_num captured layers, and captured layer l runs inner
 * layer *inner of layer group *group (the tensors
 * albert.encoder.albert_layer_groups.<group>.albert_layers.<inner>.*).  Every other model
 * has its own weights per layer: *group = layer, *inner = 0.  group and inner may be NULL.
 * Returns how many captured layers run those same weights (1: not shared; 12 for each
 * layer of albert-base-v2), or 0 when layer is outside 0..n_layers-1 (group and inner
 * then untouched).  model must not be NULL. */
int32_t atn_model_layer_weights(const atn_model *model, int32_t layer, int32_t *group, int32_t *inner);

/* The captured layers that run the same stored weights as `layer` (atn_model_layer_weights),
 * as 0-based layer numbers in increasing order, runs of three or more written as a range
 * with an en dash: "0–11", "1, 3, 5", "0–3, 8–11".  Written into buf (size bytes, always
 * NUL-terminated when size > 0; a list that does not fit ends in "…" at a whole entry).  The
 * text has only digits, ", " and "–", so every language can put it into its own sentence.
 * Returns the count atn_model_layer_weights returns (1: not shared, buf then holds `layer`
 * alone), or 0 when layer is outside 0..n_layers-1 (buf then "").  model must not be NULL;
 * buf may be NULL when size is 0. */
int32_t atn_model_layer_sharers(const atn_model *model, int32_t layer, char *buf, size_t size);

/* The model family's name: "BERT", "RoBERTa", "XLM-RoBERTa", "DistilBERT", "ALBERT",
 * "ELECTRA", "GPT-2", "Llama", "Qwen2", "Qwen3", "Mistral" (static storage; toy and random
 * BERT models are "BERT").  model must not be NULL. */
const char *atn_model_family_name(const atn_model *model);

/* A rotary decoder's positions (Llama, Qwen2, Qwen3, Mistral, Gemma 2 / 3), as config.json set them. */
typedef struct atn_rotary_info {
    double theta;              /* rope_theta */
    const char *scaling;       /* "none", "linear", "llama3" (static) */
    double factor;             /* the scaling's factor (1 for none) */
    int32_t window;            /* the sliding window of every layer (query i sees keys i-window+1..i); 0: none */
    bool qk_norm;              /* q and k RMS-normalised per head before the rotation (Qwen3) */
    /* ModernBERT: layers 0, global_every, 2 global_every... are global (theta); the others
       local: theta_local, and query i sees keys j with |i - j| <= local_half.  global_every 0:
       every layer alike */
    int32_t global_every, local_half;
    double theta_local;
    /* Gemma 2 / 3, Qwen2 / Qwen3 with the window in some layers: local_layers[l] 1 for a
       sliding layer ([n_layers], borrowed from the model; NULL: none), whose query i sees keys
       i-local_window+1..i; Gemma 3's sliding layers turn by theta_local.  Gemma: the score
       factor query_scale (query_pre_attn_scalar^-1/2; 0: 1/sqrt(head width)), the attention's
       soft-cap attn_softcap and the head's final_softcap (c tanh(x / c); 0: none), the
       embeddings' factor embed_scale (sqrt(hidden_size) in the weights' dtype; 0: none) */
    const uint8_t *local_layers;
    int32_t local_window;
    double query_scale, attn_softcap, final_softcap, embed_scale;
} atn_rotary_info;

/* Fills *out and returns true for a rotary decoder or ModernBERT; false (out untouched) for every other
 * model.  model and out must not be NULL. */
bool atn_model_rotary_info(const atn_model *model, atn_rotary_info *out);

/* DeBERTa-v2/v3's relative positions (disentangled attention), as config.json set them. */
typedef struct atn_relative_info {
    bool relative;             /* relative_attention: the terms below are added to the scores */
    bool c2p, p2c;             /* pos_att_type: content->position, position->content */
    bool share_att_key;        /* the terms project with the layer's own key / query projections */
    bool norm_rel_ebd;         /* rel_embeddings through a LayerNorm */
    bool absolute;             /* position_biased_input: absolute position embeddings too */
    int32_t buckets;           /* position_buckets (<= 0: none, distances clamped at max_relative) */
    int32_t max_relative;      /* max_relative_positions (after HF's fallback) */
    int32_t span;              /* the relative embeddings have 2 span rows */
    int32_t scale_factor;      /* scores / sqrt(d_head scale_factor) */
} atn_relative_info;

/* Fills *out and returns true for a DeBERTa-v2/v3 model; false (out untouched) otherwise.
 * model and out must not be NULL. */
bool atn_model_relative_info(const atn_model *model, atn_relative_info *out);

/* What the weights of a Hugging Face folder cost in memory: *converted the bytes of the
 * float32 copies made at open (F16 / BF16 tensors, unaligned F32 ones, GPT-2's transposed
 * Conv1D matrices), *from the bytes those tensors take in the files.  0 and 0 when every
 * weight is read in place from the file's mapping (and for toy and random models).  Either
 * pointer may be NULL. */
void atn_model_converted_bytes(const atn_model *model, uint64_t *converted, uint64_t *from);

/* Built-in models: a NULL-terminated list of names (static storage).  Their files are in
 * the data folder: $ATTNSCOPE_DATADIR, else the source tree's data/ when running from the
 * build tree, else the install prefix's. */
const char *const *atn_builtin_model_names(void);

/* Toy models carry their own tokens and input vectors: their count (0 for other models),
 * and token i's text (borrowed; NULL when i is out of range). */
int32_t atn_model_toy_n_tokens(const atn_model *model);
const char *atn_model_toy_token(const atn_model *model, int32_t i);

/* A toy model's matrices: the input vectors X and each layer's weights. */
typedef enum atn_toy_matrix {
    ATN_TOY_X = 0, ATN_TOY_WQ, ATN_TOY_WK, ATN_TOY_WV, ATN_TOY_WO,
} atn_toy_matrix;
/* Reading and editing a toy model (the GUI's editable cells).  Matrices in the textbook
 * orientation of the JSON file: X is [n, d]; W_Q, W_K, W_V, W_O are [in, out].
 * layer is ignored for ATN_TOY_X.  Setting a weight that was implicit (identity)
 * materialises it first.  ATN_E_INVALID for a model that is not a toy model, an unknown
 * matrix, a layer, row or column out of range (the message says the range); ATN_E_NOMEM.
 * value must not be NULL.  set must not run while another thread uses the model (see
 * Threads). */
atn_status atn_model_toy_get(const atn_model *model, atn_toy_matrix which, int32_t layer,
                             int32_t row, int32_t col, float *value, atn_error *err);
atn_status atn_model_toy_set(atn_model *model, atn_toy_matrix which, int32_t layer,
                             int32_t row, int32_t col, float value, atn_error *err);
/* Writes the toy model back as JSON through atn_write_file_atomic (its errors);
 * ATN_E_INVALID for a model that is not a toy model; ATN_E_NOMEM. */
atn_status atn_model_toy_save_json(const atn_model *model, const char *path, atn_error *err);

/* ---- tokens and input ------------------------------------------------------- */

/* What a token is for, set by the tokenizer: code that needs to know whether a token is
 * the [CLS], a [MASK] or a "##" piece asks the role, never the text (a tokenizer whose
 * mask token is spelled "<mask>" gives the same roles). */
typedef enum atn_token_role {
    ATN_TOKEN_WORD = 0,  /* a piece of the text (every toy-model token; a token given as an
                            id that is none of the special tokens below) */
    ATN_TOKEN_CLS,       /* sequence start ([CLS]) */
    ATN_TOKEN_SEP,       /* separator / sequence end ([SEP]) */
    ATN_TOKEN_MASK,      /* the masked-LM head's blank ([MASK]) */
    ATN_TOKEN_PAD,       /* padding ([PAD]) */
    ATN_TOKEN_UNK,       /* unknown: a word the vocabulary cannot spell, or [UNK] written out */
} atn_token_role;

typedef struct atn_token {
    char *text;        /* owned UTF-8, e.g. "[CLS]", "play", "##ing", "我" */
    int32_t id;        /* vocabulary id; -1 for toy-model tokens */
    int32_t type_id;   /* 0 first segment, 1 second */
    int32_t start;     /* byte span [start, end) in its segment's original text; -1 for the
                          [CLS]/[SEP] the tokenizer adds and for tokens given as ids */
    int32_t end;
    int32_t segment;   /* 0: text, 1: text pair; -1 for added [CLS]/[SEP] */
    bool special;      /* [CLS], [SEP], [PAD], [MASK] (a [MASK] typed in the text keeps its span);
                          an [UNK] standing for an unknown word is not special; a token given
                          as an id is special when its vocabulary entry is bracketed, "[unused1]" */
    atn_token_role role;
    bool continuation; /* continues the word of the token before it (WordPiece's "##ing"); false
                          for the first piece of a word, a punctuation mark, a special token
                          and every toy-model token.  A zeroed token is a word start */
    int32_t word;      /* the word it belongs to in its segment (Hugging Face's word_ids: the
                          pre-tokenizer's pieces, counted from 0); -1 for the special tokens
                          added around the segments and where the tokenizer does not say */
} atn_token;

typedef struct atn_encoding {
    int32_t n;
    atn_token *tokens;    /* [n] */
    int32_t *ids;         /* [n] */
    int32_t *type_ids;    /* [n] */
    int32_t *mask;        /* [n] 1 = real token, 0 = padding */
    bool truncated;       /* input did not fit max_positions */
    int32_t n_dropped;    /* word pieces dropped by truncation */
} atn_encoding;

void atn_encoding_free(atn_encoding *enc);   /* frees contents and the struct; NULL: nothing */

/* Tokenizes text (and text_pair, NULL for none) with the model's tokenizer into
 * [CLS] A [SEP] (B [SEP]); *out (n tokens, every array [n]) is the caller's.  A text
 * longer than max_positions is truncated (enc->truncated set, longest-first like HF).
 * ATN_E_INVALID: NULL text (say "" for a sentence with no words: [CLS] [SEP]), invalid
 * UTF-8 (the message gives the byte offset), a toy model or one without a tokenizer, a
 * text_pair for a family without token types (GPT-2); ATN_E_NOMEM. */
atn_status atn_model_encode(const atn_model *model, const char *text, const char *text_pair,
                            atn_encoding **out, atn_error *err);
/* As atn_model_encode, asking progress (may be NULL: never stops) whether to go on now and
 * then (about every 4,096 steps of the tokenizer's long loops: the characters of the text,
 * added-token matching, the normalizers, pre-tokenizing, each word's BPE merges, WordPiece
 * longest matches or Unigram lattice) with fraction 0 and ATN_STAGE_TOKENIZE, from the
 * calling thread.  When it returns false the encoding ends with ATN_E_CANCELLED ("cancelled
 * while tokenizing") and *out stays NULL: Ctrl-C or a window's Stop ends the tokenizing of a
 * huge text promptly. */
atn_status atn_model_encode_cancellable(const atn_model *model, const char *text,
                                        const char *text_pair, atn_progress_fn progress,
                                        void *user_data, atn_encoding **out, atn_error *err);

/* ---- a tokenizer on its own ------------------------------------------------------ */

/* What a tokenizer knows of one vocabulary id.  Strings are borrowed from the tokenizer
 * (or the model) and live as long as it. */
typedef struct atn_token_info {
    const char *text;     /* the vocabulary entry: "##ing", "\u0120the", "\u2581the", "[MASK]" */
    const char *surface;  /* how it reads in a text: "ing", " the" (a word start shows its
                             space), "[MASK]"; a byte-level piece that is only part of a
                             UTF-8 character shows its bytes as \xNN */
    bool partial_char;    /* a byte-level piece that is part of one UTF-8 character */
    bool continuation;    /* a WordPiece "##" piece */
    bool special;         /* a control token ([CLS], <s>, an added special token) */
    atn_token_role role;
} atn_token_info;

/* How a token text reads when no tokenizer is at hand (an attention file's "tokens"): a
 * GPT-2 byte-level piece ("\u0120the", as Hugging Face's convert_ids_to_tokens gives it)
 * decoded to " the" when every character is in the byte-level alphabet and the bytes are
 * whole UTF-8; else a SentencePiece piece with the metaspace U+2581 ("\u2581the", T5,
 * Marian) with each U+2581 read as a space.  A newly allocated string (the caller frees it), or NULL when the text is not
 * such a piece, reads as it is, or memory ran out.  Thread-safe; text NULL gives NULL. */
char *atn_token_surface_guess(const char *text);

/* A folder's tokenizer without its model (tokenizer.json, or vocab.json + merges.txt, or
 * vocab.txt, with tokenizer_config.json and special_tokens_map.json), chosen as Hugging
 * Face's AutoTokenizer does; no config.json or weights needed. */
typedef struct atn_text_tokenizer atn_text_tokenizer;

/* NULL on error: ATN_E_INVALID (NULL folder), ATN_E_IO (not a folder, none of the files:
 * the message lists them), ATN_E_FORMAT (malformed: the message names the file and JSON
 * path), ATN_E_UNSUPPORTED (a part this build does not read), ATN_E_NOMEM. */
atn_text_tokenizer *atn_text_tokenizer_open(const char *folder, atn_error *err);
/* The same, asking progress (may be NULL) whether to go on while the vocabulary and merges
 * load (fraction 0, ATN_STAGE_READ_VOCAB, about every 4,096 entries): false ends it with
 * ATN_E_CANCELLED ("cancelled while reading the vocabulary") and NULL. */
atn_text_tokenizer *atn_text_tokenizer_open_cancellable(const char *folder, atn_progress_fn progress,
                                                        void *user_data, atn_error *err);
void atn_text_tokenizer_free(atn_text_tokenizer *t);   /* NULL: nothing */
/* "tokenizer.json" or "wordpiece"; "" for NULL. */
const char *atn_text_tokenizer_kind(const atn_text_tokenizer *t);
/* tokenizer_config.json's model_max_length; 0 when it gives none (or NULL). */
int32_t atn_text_tokenizer_max_length(const atn_text_tokenizer *t);
/* As atn_model_encode, truncating to max_len tokens (0: no limit).  ATN_E_INVALID for
 * NULL t, text or out, invalid UTF-8 or a max_len below the special tokens' count;
 * ATN_E_NOMEM.  *out is the caller's. */
atn_status atn_text_tokenizer_encode(const atn_text_tokenizer *t, const char *text,
                                     const char *text_pair, int32_t max_len,
                                     atn_encoding **out, atn_error *err);
/* The same, cancellable as atn_model_encode_cancellable is. */
atn_status atn_text_tokenizer_encode_cancellable(const atn_text_tokenizer *t, const char *text,
                                                 const char *text_pair, int32_t max_len,
                                                 atn_progress_fn progress, void *user_data,
                                                 atn_encoding **out, atn_error *err);
/* false (out untouched) for NULL arguments or an id out of range. */
bool atn_text_tokenizer_token_info(const atn_text_tokenizer *t, int32_t id, atn_token_info *out);
/* The same for a model's tokenizer; false for a model without one (toy models). */
bool atn_model_token_info(const atn_model *model, int32_t id, atn_token_info *out);

/* Builds an encoding from n explicit ids (the CLI's --ids; tokens get the vocabulary's
 * text).  type_ids and mask ([n] each) may be NULL: all 0, all 1.  Each token's role,
 * continuation and special flag come from the vocabulary entry of its id (the id of
 * "[MASK]" is ATN_TOKEN_MASK); without a tokenizer the text is "#id" and the role
 * ATN_TOKEN_WORD.  Tokens have no span (start = end = segment = -1).  ATN_E_INVALID: n < 1,
 * more than max_positions, an id outside the vocabulary, a mask value other than 0/1, a
 * model that takes input vectors; ATN_E_NOMEM. */
atn_status atn_model_encode_ids(const atn_model *model, const int32_t *ids,
                                const int32_t *type_ids, const int32_t *mask, int32_t n,
                                atn_encoding **out, atn_error *err);

/* For toy models: their own tokens, with mask ([toy tokens], 0/1; NULL: all 1).  Every
 * token has role ATN_TOKEN_WORD, whatever it is named (a toy token called "[CLS]" is a word).
 * ATN_E_INVALID for a model that is not a toy model or a mask value other than 0/1. */
atn_status atn_model_encode_toy(const atn_model *model, const int32_t *mask,
                                atn_encoding **out, atn_error *err);

/* ---- running the encoder ---------------------------------------------------- */

/* How a switched-off head is replaced (atn_interventions, below). */
typedef enum atn_head_mode {
    ATN_HEAD_ZERO = 0,   /* Hugging Face's head_mask: the head's probabilities are multiplied by
                            0, so its context is 0 and its captured map is all 0 */
    ATN_HEAD_UNIFORM,    /* Kovaleva et al.: the head's probabilities are 1/k over the k keys the
                            query may see (those whose additive mask is 0), captured as such */
} atn_head_mode;

/* The arithmetic of a run's matrix products.  FP16 / BF16 are autocast's products: the
 * operands of every product (the weights W_Q, W_K, W_V, W_O, W_1, W_2 and the embedding
 * projection; the activations they multiply; Q, K for QK^T; the probabilities and V for PV)
 * rounded to the format (nearest, ties to even; fp16 overflow gives +-inf), the sums in
 * fp32; biases, softmax, LayerNorm, activations, residual adds and the masked-LM /
 * next-token heads in fp32.  The CPU emulates it by rounding in fp32 storage (the same
 * numbers the instructions would give); the GPU uses cublasGemmEx. */
typedef enum atn_precision {
    ATN_PRECISION_FP32 = 0,
    ATN_PRECISION_FP16,
    ATN_PRECISION_BF16,
} atn_precision;

/* "fp32", "fp16", "bf16" ("?" outside the enum; static storage). */
const char *atn_precision_name(atn_precision p);
/* One sentence on how this CPU runs p (static storage): that bf16/fp16 products are
 * emulated by rounding in fp32 because the CPU lacks AVX512_BF16 / AVX512_FP16 (or that it
 * has them and they are not used yet), and whether fp16 rounding uses F16C.  "" for FP32. */
const char *atn_cpu_precision_note(atn_precision p);

/* What a product reads, for the fp16 overflow counts (atn_capture.fp16_overflow). */
typedef enum atn_operand {
    ATN_OPERAND_WEIGHTS = 0,   /* the layer's weight matrices (rounded once per model) */
    ATN_OPERAND_INPUT,         /* the layer input read by W_Q, W_K, W_V (row 0: the embeddings
                                  read by the embedding projection) */
    ATN_OPERAND_Q,
    ATN_OPERAND_K,
    ATN_OPERAND_V,
    ATN_OPERAND_PROBS,         /* the attention probabilities read by PV */
    ATN_OPERAND_CONTEXT,       /* the heads' outputs read by W_O */
    ATN_OPERAND_FFN_IN,        /* the input of W_1 */
    ATN_OPERAND_FFN_MID,       /* act(x W_1^T + b_1), the input of W_2 */
    ATN_OPERAND_COUNT
} atn_operand;
/* "weights", "layer input", "Q", ... (static storage; "?" outside the enum). */
const char *atn_operand_name(atn_operand op);

/* The capture: everything one run keeps.  All arrays are owned by the run and valid
 * until the next atn_run_forward on the same run or atn_run_free. */
typedef struct atn_capture {
    int32_t n_layers, n_heads, n, d_model, d_head;
    const atn_encoding *enc;    /* the tokens of this run */
    const float *attn;          /* [L][H][n][n] probabilities; row = query, column = key */
    const float *hidden;        /* [L+1][n][d] hidden[0] = embeddings output, hidden[l] = input of layer l,
                                   hidden[L] = final output (HF's hidden_states) */
    const float *q, *k, *v;     /* [L][n][d] projections with bias; head h is columns h*k..h*k+k-1
                                   (rows d_q wide for q, d_kv for k and v: see below) */
    const float *ctx;           /* [L][n][d] concatenated head outputs (softmax(QK^T/sqrt k) V), before W_O
                                   (rows d_q wide) */
    const float *attn_out;      /* [L][n][d] ctx W_O^T + b_O (before residual and LayerNorm) */
    const float *mask_add;      /* [n][n] the additive mask the softmax added to the scaled scores
                                   (row = query, column = key): 0, or -FLT_MAX for a padded key
                                   or one an intervention hides (atn_interventions); with
                                   mask_layers, the mask of the layers flagged there only */
    const float *mask_base;     /* [n][n] the mask of the layers the what-if masks skipped
                                   (atn_interventions.mask_layers): padding and the family's
                                   causal term only; NULL when every layer added mask_add */
    const uint8_t *mask_layers; /* [L] 1 = that layer added mask_add, 0 = mask_base; NULL
                                   with mask_base.  atn_capture_layer_mask picks the row */
    /* the run's per-head interventions (atn_interventions), owned by the run: */
    const float *alibi_slopes;  /* [H] ALiBi's m_h (scores += -m_h |i-j|), NULL: none */
    float temperature;          /* the scores (after scale, mask and ALiBi) were divided by it; 1: none */
    const uint8_t *heads_off;   /* [L][H] 1 = that head was switched off; NULL: none */
    atn_head_mode head_mode;    /* how (meaningful with heads_off) */
    const int32_t *pos_ids;     /* [n] the position ids the embeddings used (shuffled by
                                   atn_interventions.shuffle); NULL for a toy model */
    bool no_positions;          /* the embeddings had no position term (rotary: no rotation) */
    /* the what-if rotary frequencies the run turned q and k by (rope_theta, rope_factor),
       [d_head / 2] each, owned by the run; NULL: the model's (inv_freq_local: its local layers') */
    const float *inv_freq, *inv_freq_local;
    int32_t nonfinite_layer;    /* first layer whose output had NaN/Inf; -1 if none */
    bool has_trace_inputs;      /* q/k/v/ctx/attn_out/hidden are filled */
    atn_precision precision;    /* the products' arithmetic (q, k, v then hold the rounded
                                   operands QK^T and PV read) */
    const int64_t *fp16_overflow;   /* [L+1][ATN_OPERAND_COUNT] finite values that became +-inf
                                       when rounded to fp16 (row 0: the embedding projection,
                                       row l+1: layer l); NULL unless an fp16 run on the CPU
                                       (the GPU does not count them) */
    int64_t fp16_overflow_total;    /* their sum */
    /* attn is NULL but every head can be made again (atn_capture_head): the run kept each
       layer's Q, K and V instead of [L][H][n][n] (atn_run_options.attention_on_demand, or
       a full capture that did not fit the memory budget) */
    bool attn_on_demand;
    const struct atn_run *run;      /* the run this capture belongs to */
    /* the attention's widths, d_model and n_heads for every encoder and GPT-2: a rotary
       decoder (Llama, Qwen, Mistral) may have fewer K/V heads (query head h reads K/V head
       h / (n_heads / n_kv_heads)) and heads whose widths do not add up to d_model.  q and
       ctx are then [L][n][d_q] (d_q = n_heads d_head), k and v [L][n][d_kv] (d_kv =
       n_kv_heads d_head), q and k after the rotation (what the scores read) */
    int32_t n_kv_heads, d_q, d_kv;
    /* An encoder-decoder's run (T5, mT5, Flan-T5, BART, Marian; atn_model_is_encoder_decoder):
       the fields above are the encoder's (attn [L][H][n][n] its self-attention, enc the source
       tokens, hidden its [L+1][n][d]); the decoder's are here.  n_stacks is 3 and stacks[]
       is ATN_STACK_ENCODER (= attn), ATN_STACK_DECODER (the decoder's causal self-attention
       [L_dec][H][n_tgt][n_tgt]), ATN_STACK_CROSS (the decoder's queries over the encoder's
       output [L_dec][H][n_tgt][n]), all owned by the run.  0 and NULL for every other model. */
    int32_t n_stacks;
    const struct atn_stack *stacks;
    int32_t n_dec_layers, n_tgt;
    const int32_t *target_ids;      /* [n_tgt] the decoder's input ids (decoder start first) */
    const float *dec_hidden;        /* [L_dec+1][n_tgt][d] the decoder's hidden states, the
                                       last after its final norm (HF's decoder_hidden_states) */
    const float *dec_mask;          /* [n_tgt][n_tgt] the decoder's causal mask (0 / ATN_MASK_MIN) */
    const float *cross_mask;        /* [n_tgt][n] the source's padding in every cross row */
    /* the decoder's trace inputs (has_trace_inputs; NULL otherwise), as the forward used them:
       self-attention dec_q, dec_ctx [L_dec][n_tgt][d_q], dec_k, dec_v [L_dec][n_tgt][d_kv];
       cross-attention cross_q, cross_ctx [L_dec][n_tgt][d_q] (from the decoder's rows after
       the layer's self-attention block), cross_k, cross_v [L_dec][n][d_kv] (the encoder's
       output projected by each layer's cross-attention weights) */
    const float *dec_q, *dec_k, *dec_v, *dec_ctx;
    const float *cross_q, *cross_k, *cross_v, *cross_ctx;
    /* An attention file whose layers have different head counts (one attn.L{l} of H_l heads
       per layer; attention-file.h): n_heads is the largest H_l, and layer l has heads
       0..layer_heads[l]-1.  Its other heads are absent (atn_capture_head_present false): read
       as zeros, but never counted as heads: their statistics are NaN, similarity leaves them
       out (atn_similarity_new_capture), rollout averages the heads a layer has, and figures
       and views draw "no head".  NULL: every layer has n_heads heads (every run). */
    const int32_t *layer_heads;
} atn_capture;

/* The three kinds of attention an encoder-decoder has (atn_capture.stacks). */
typedef enum atn_stack_kind {
    ATN_STACK_ENCODER = 0,   /* source tokens over source tokens, bidirectional */
    ATN_STACK_DECODER,       /* target tokens over earlier target tokens (causal) */
    ATN_STACK_CROSS,         /* target tokens (queries) over source tokens (keys) */
} atn_stack_kind;

/* One stack of attention maps: n_layers x n_heads maps of n_q query rows by n_k key
 * columns, row-major, [L][H][n_q][n_k] (rows sum to 1).  q_ids / k_ids are the token ids
 * of the query and key rows (the source's for the encoder, the decoder input's for the
 * decoder).  Everything is borrowed from the run that made it (valid until its next
 * forward or atn_run_free). */
typedef struct atn_stack {
    atn_stack_kind kind;
    const char *name;               /* "encoder", "decoder", "cross" (static) */
    int32_t n_layers, n_heads, n_q, n_k;
    const float *attn;
    const int32_t *q_ids, *k_ids;
} atn_stack;

/* The stack of kind in cap (NULL: cap is not an encoder-decoder's, or NULL). */
const atn_stack *atn_capture_stack(const atn_capture *cap, atn_stack_kind kind);
/* Writes an encoder-decoder's stacks to path as a NumPy .npz (numpy.savez's layout, stored):
 * float32 arrays named by atn_stack.name, [L][H][n_q][n_k] each, atomically.  ATN_E_INVALID
 * for a capture without stacks; ATN_E_NOMEM; ATN_E_IO from the writer (naming path). */
atn_status atn_capture_write_stacks_npz(const char *path, const atn_capture *cap, atn_error *err);
/* Head `head` of layer `layer` of stack s (one of cap's stacks, atn_capture_stack) [n_q][n_k]:
 * the one way a reader gets a stack's head.  A pointer into s->attn when the stack is held whole
 * (a run's, an attention file read whole; scratch is not touched and may be NULL), else scratch
 * (the caller's, s->n_q * s->n_k floats) filled and returned: the encoder's through
 * atn_capture_head_read, an attention file's lazy decoder or cross head read through its mapping
 * and checked (atn_attn_file_capture_lazy).  Borrowed as atn_capture_head_read.  NULL with err
 * set: NULL cap or s, layer or head out of range, a NULL scratch where one is needed
 * (ATN_E_INVALID), a bad value in the file (ATN_E_FORMAT, naming the file, the tensor, the
 * layer, head, query and key).  Threads as atn_capture_head. */
const float *atn_stack_head_read(const atn_capture *cap, const atn_stack *s, int32_t layer, int32_t head,
                                 float *scratch, atn_error *err);
/* "encoder" / "decoder" / "cross" -> *kind; false for anything else. */
bool atn_stack_kind_parse(const char *name, atn_stack_kind *kind);

/* Head `head` of layer `layer` [n][n] (row = query, column = key) into out: a copy of
 * cap->attn's block when the run kept the attention, else made again from the Q, K and V
 * the run kept, by the attend op of the same ops the forward ran (the reference or the
 * packed ops, with the run's mask, interventions and precision), so bit for bit what the
 * full capture holds.  ATN_E_INVALID: NULL cap or out, layer or head out of range, a
 * capture with neither attention nor on-demand heads; ATN_E_NOMEM.  Reads the run only:
 * several threads may make heads of one capture at once (each its own out), while no
 * forward runs on that run.  bert-base at 512 tokens: ~10 ms a head on one core. */
atn_status atn_capture_head(const atn_capture *cap, int32_t layer, int32_t head, float *out, atn_error *err);

/* The one way a reader (the CLI, the analysis, the window) gets a head, whichever capture
 * the run made: a pointer into cap->attn when the run kept the attention (scratch is not
 * touched and may be NULL), else scratch [n][n] (the caller's) filled by atn_capture_head
 * and returned.  Borrowed: valid until the next forward on the run, or until scratch is
 * written again.  NULL with err set where atn_capture_head fails (an on-demand capture
 * and a NULL scratch: ATN_E_INVALID).  Threads as atn_capture_head. */
const float *atn_capture_head_read(const atn_capture *cap, int32_t layer, int32_t head, float *scratch,
                                   atn_error *err);
/* True when every head can be read (cap->attn, or heads on demand); false for NULL. */
bool atn_capture_has_heads(const atn_capture *cap);
/* Whether layer `layer` has head `head` (see atn_capture.layer_heads: false for a head past
 * the layer's count; true for every head of a capture without layer_heads).  false for a
 * NULL cap or a layer or head out of range. */
bool atn_capture_head_present(const atn_capture *cap, int32_t layer, int32_t head);

/* The [n][n] additive mask layer's softmax added (cap->mask_add, or cap->mask_base in a
 * layer the what-if masks skipped); NULL for a NULL capture, a layer outside 0..L-1 or a
 * capture without a mask.  Borrowed from the capture. */
const float *atn_capture_layer_mask(const atn_capture *cap, int32_t layer);

typedef struct atn_run atn_run;

typedef enum atn_device {
    ATN_DEVICE_CPU = 0,
    ATN_DEVICE_CUDA,
    ATN_DEVICE_AUTO,
} atn_device;


/* ---- interventions: the what-if lab ------------------------------------------- */

/* Changes to the model for one run, applied in every layer (the head gate per head; the
 * masks in the layers mask_layers names).  Every
 * backend applies the same terms, in this order, to head h's scores of query i, key j:
 *   s = q_i.k_j / sqrt(d_k) + mask[i][j] + alibi_h(i, j);  s = s / temperature;
 *   p = softmax_j(s);  then a switched-off head's p is replaced (zero or uniform).
 * mask[i][j] is the run's one additive mask (engine/forward/run.c build_mask): 0, or ATN_MASK_MIN
 * (the float's lowest value, as padding) where key j is hidden from query i by padding,
 * causal (j > i), window (|i-j| > window, unless i or j is a global token), strided
 * (|i-j| >= strided and |i-j| mod strided != 0, the Sparse Transformer's local + stride
 * pattern, both directions) or hide_tokens (key j listed).  ALiBi (Press et al. 2022) adds
 * -m_h |i-j| with m_h = 2^(-8(h+1)/H) for a power-of-two head count H, and for another H
 * the slopes of the largest power of two P < H followed by every other slope of 2P
 * (atn_alibi_slopes); it is a per-head term, not part of the [n][n] mask.  mask_layers
 * limits the what-if masks (not padding or a causal family's own term) to chosen layers:
 * the run then keeps two [n][n] masks and each layer adds its own (atn_capture_layer_mask).  no_positions
 * drops the position embedding from the embeddings (word + type only); in a rotary family
 * (Llama, Qwen, Mistral, Gemma, ModernBERT) q and k are not rotated at all (NoPE).
 * The rotary knobs (rotary families only, else ATN_E_UNSUPPORTED from the run): rope_theta
 * > 0 recomputes the rotation's frequencies with that base (the model's own scaling, linear
 * or llama3, still applied; a second local base, Gemma 3's or ModernBERT's, is kept),
 * rope_factor > 0 divides every frequency by it on top (transformers' linear scaling:
 * position p turns as p / factor did), rope_llama3 > 0 makes the (global) frequencies with
 * _compute_llama3_parameters' rule and that factor instead of the model's scaling; sliding[l] turns a layer's sliding window on (1, the
 * model's window, or sliding_window tokens in a model without one: query i sees key j
 * only when i - j < window, as HF's sliding_window_overlay) or off (-1, the layer then sees
 * every earlier key), 0 leaving it as the model has it.  sliding cannot be combined with
 * the what-if masks above (ATN_E_UNSUPPORTED).  shuffle permutes
 * the position ids of the tokens that are not special ([CLS], [SEP], [PAD], <s>...) with
 * a fixed seed (Fisher-Yates on splitmix64), so the model reads the words in another order
 * while the capture keeps the sentence's token order.  All arrays are borrowed for the
 * call (the run copies what it keeps).  A zeroed struct (atn_interventions_init) changes
 * nothing. */
typedef struct atn_interventions {
    const uint8_t *heads_off;      /* [L][H] 1 = switched off, 0 = on; NULL: all on */
    atn_head_mode head_mode;       /* how a switched-off head is replaced */
    bool causal;                   /* query i sees keys j <= i */
    int32_t window;                /* >= 0: query i sees keys |i-j| <= window; -1: no window */
    const int32_t *global_tokens;  /* [n_global] token positions that see and are seen by all
                                      (Longformer; only with a window) */
    int32_t n_global;
    int32_t strided;               /* > 0: the strided pattern above; 0: none */
    const int32_t *hide_tokens;    /* [n_hide] key positions no query may see */
    int32_t n_hide;
    const uint8_t *mask_layers;    /* [L] 1 = the masks above (causal, window + global,
                                      strided, hide_tokens) apply in that layer, 0 = not
                                      there (it keeps only padding and the family's causal
                                      term); NULL: in every layer.  The head gate, ALiBi,
                                      temperature and positions are not affected */
    bool alibi;                    /* add ALiBi's per-head linear biases */
    bool no_positions;             /* embeddings without the position term; rotary: no rotation */
    bool shuffle;                  /* permute the word positions with shuffle_seed */
    uint64_t shuffle_seed;
    float temperature;             /* > 0; 1 (or 0, read as 1): none */
    double rope_theta;             /* > 0: the rotation's base; 0: the model's */
    double rope_factor;            /* > 0: frequencies divided by it (linear); 0 or 1: none */
    double rope_llama3;            /* > 0: Llama 3's scaling with this factor in place of the
                                      model's scaling (its low/high-frequency factors and
                                      original_max_position_embeddings when it has llama3
                                      scaling, else Llama 3.1's 1, 4 and 8192), on the rope_theta
                                      base; rope_factor then divides on top; 0: none */
    const int8_t *sliding;         /* [L] 1 window on, -1 off, 0 as the model; NULL: none */
    int32_t sliding_window;        /* > 0: the window of an "on" layer in a model without one */
} atn_interventions;

void atn_interventions_init(atn_interventions *iv);   /* nothing changed; window -1, temperature 1 */
/* True when iv sets a rotary knob (rope_theta, rope_factor, sliding with a nonzero entry of
 * n_layers; no_positions is not counted).  NULL: false. */
bool atn_interventions_rotary(const atn_interventions *iv, int32_t n_layers);
/* True when iv (NULL: none) changes nothing. */
bool atn_interventions_none(const atn_interventions *iv);
/* Checks iv against a model of n_layers x n_heads and an input of n tokens (n <= 0: skip the
 * token checks).  ATN_E_INVALID naming the field: a window below -1, global tokens without a
 * window, strided < 0, a token position outside 0..n-1, temperature < 0 or not finite, a
 * head mode out of range.  ATN_OK otherwise. */
atn_status atn_interventions_check(const atn_interventions *iv, int32_t n_layers, int32_t n_heads, int32_t n,
                                   atn_error *err);
/* Reads a list of layers and ranges ("0,2-3") into mark[n_layers] (1 = named; the others
 * are left as they are), as atn_interventions.mask_layers takes it.  ATN_E_INVALID with the
 * reason (not naming any option: the caller adds its own): NULL or empty text, a piece that
 * is not a number or a range, a range that runs backwards, a layer outside 0..n_layers-1. */
atn_status atn_parse_layer_list(const char *text, int32_t n_layers, uint8_t *mark, atn_error *err);
/* ALiBi's slopes for n_heads heads into slopes[n_heads] (Press et al.'s rule above; their
 * reference code get_slopes).  n_heads < 1: nothing written. */
void atn_alibi_slopes(int32_t n_heads, float *slopes);

/* A consumer of a forward's heads as they are made (atn_run_options.head_sink). */
typedef struct atn_head_sink {
    atn_status (*begin)(void *user, const atn_encoding *enc, atn_error *err);
    void (*head)(void *user, int32_t layer, int32_t head, const float *att, int32_t n);
    void *user;
} atn_head_sink;

typedef struct atn_run_options {
    atn_device device;          /* default CPU */
    atn_precision precision;    /* default FP32; FP16 / BF16 on the CPU and the GPU (see atn_precision) */
    bool keep_attention;        /* default true: fill capture->attn */
    bool keep_trace_inputs;     /* default true: fill q/k/v/ctx/attn_out/hidden */
    int32_t threads;            /* 0: leave OpenBLAS's setting */
    size_t memory_limit;        /* bytes a run may allocate; 0: a default from physical memory */
    atn_progress_fn progress;   /* called per layer; returns false to cancel */
    void *user_data;
    /* GPU runs: allocate the run's memory page-locked (cudaHostAlloc), so the capture comes
       back at the bus's full speed instead of through the driver's staging buffers.  Pinning
       costs about what one copy saves, so it pays off for a run that is reused (benchmarks,
       corpora), not for one forward pass.  Ignored on the CPU and when pinning fails. */
    bool pinned_host;
    /* The what-if lab's changes to the model (borrowed for the call; NULL: none).  The CPU
       applies all of them; the CUDA backend applies the masks (they are in the uploaded mask)
       and the shuffle (in the position ids, made before any backend), and refuses the head
       gate, ALiBi, temperature, no_positions and masks limited to some layers (mask_layers)
       with ATN_E_DEVICE, so AUTO falls back to the
       CPU and says why (atn_run_fallback_reason).  atn_run_forward returns ATN_E_INVALID
       for interventions atn_interventions_check refuses. */
    const atn_interventions *interventions;
    /* Keep each layer's Q, K and V (the trace inputs) but not the [L][H][n][n] attention:
       capture->attn is NULL, capture->attn_on_demand true and atn_capture_head makes any
       head, the same bits.  Default false. */
    bool attention_on_demand;
    /* For callers that read heads through atn_capture_head (and the statistics): a CPU or
       AUTO run that keeps attention turns attention_on_demand on by itself when the full
       capture does not fit the memory budget but Q, K, V do; without it such a run is
       refused with ATN_E_NOMEM.  Default true: a caller that reads cap->attn directly
       (rather than atn_capture_head_read) sets it false or checks cap->attn_on_demand. */
    bool on_demand_over_budget;
    /* Not NULL: the forward adds every head's query rows to these statistics as it makes
       them (atn_stats_rows_add, analysis.h; each head's rows in query order, so the numbers
       are atn_stats_add's bit for bit), on the reference ops inside the walk, without a
       layer's n x n; after the walk, one head at a time, where the packed ops ran.  The CPU
       only (a GPU run leaves them empty: atn_stats_rows_fold refuses), every layer (a forward
       from a middle layer leaves the lower ones empty).  Borrowed for the call. */
    struct atn_stats_rows *stats_rows;
    /* Not NULL (borrowed for the call): statistics made from each head's probabilities as
       the forward makes them, so that a run with keep_attention false never holds
       [L][H][n][n] (docs/ARCHITECTURE.md, "Attention at any length").  With keep_attention
       false, on the CPU, not an encoder-decoder: begin is called once with the run's
       encoding (the capture's enc, which outlives the forward until the next one) before the
       first layer (its error ends the run), then head once per layer and head with its
       probabilities att[n][n] (row = query), heads in layer order on the reference ops; the
       packed ops call it from their threads as each head is made, several heads at once
       (each head from one thread, layers in order, so a sink keeping a head's state apart
       needs no lock).  The forward then holds one [n][n] (reference ops) or one per thread
       that makes heads (packed ops, min(threads, H)), never the capture and never a
       layer's [H][n][n] below H threads: capture->attn is NULL and atn_capture_has_heads
       false.
       Otherwise (keep_attention true, a GPU run or AUTO on a machine with one, an
       encoder-decoder, atn_batch_forward's stacks) neither is called and the capture keeps
       the attention as without a sink: a consumer reads the capture's heads when
       atn_capture_has_heads, else what its sink got. */
    const struct atn_head_sink *head_sink;
    /* An encoder-decoder's decoder input (borrowed for the call): n_target ids, the first
       normally the decoder start token (atn_model_decoder_start_id), as teacher forcing feeds
       them (HF's shift_right of the labels).  NULL: the decoder start token alone.  Ignored
       by every other model.  Ids outside the vocabulary: ATN_E_INVALID. */
    const int32_t *target_ids;
    int32_t n_target;
} atn_run_options;

void atn_run_options_init(atn_run_options *opts);   /* the defaults above */

/* A run for model (borrowed: it must outlive the run), or NULL when out of memory.  It
 * allocates nothing more until its first forward; its memory grows to the largest input
 * and is reused.  One thread at a time per run. */
atn_run *atn_run_new(const atn_model *model);
void atn_run_free(atn_run *run);   /* NULL: nothing */

/* A size as people write it for --memory-limit: "2G", "1.5GiB", "512M", "20000" (bytes; K, M,
 * G, T are powers of 1024, an optional "B" or "iB" after them).  Writes *out and returns true;
 * false (and *out untouched) for anything else, 0, or sizes past 9e18.  Thread-safe. */
bool atn_parse_size(const char *text, size_t *out);

/* Which bound a run's default memory budget is (atn_default_memory_budget). */
typedef enum atn_memory_bound {
    ATN_MEMORY_BOUND_PHYSICAL = 0,   /* 3/4 of physical memory */
    ATN_MEMORY_BOUND_CGROUP,         /* what the process's memory cgroup has left */
    ATN_MEMORY_BOUND_RLIMIT_AS,      /* what RLIMIT_AS (ulimit -v) leaves */
} atn_memory_bound;

/* The bytes a run may allocate now when atn_run_options.memory_limit is 0: the least of the
 * bounds above (the last two less a margin), as atn_run_forward checks them, and in *bound
 * (NULL: not wanted) which one it is.  It changes as the cgroup's usage does.  Thread-safe. */
size_t atn_default_memory_budget(atn_memory_bound *bound);

/* Bytes a run of n tokens will allocate with these options (the refusal check); SIZE_MAX
 * when it would not fit in an address space. */
size_t atn_run_bytes_needed(const atn_config *cfg, int32_t n, const atn_run_options *opts);

/* Runs the encoder on enc (whose ids / toy vectors come from the model) with opts (NULL:
 * the defaults).  The run keeps a copy of enc; enc may be freed afterwards.  Returns
 * ATN_OK, ATN_E_INVALID (NULL or empty enc, a toy encoding of another length, an id or
 * type id outside the model's vocabularies, every token masked), ATN_E_NOMEM (more than opts->memory_limit, or
 * allocation failed), ATN_E_CANCELLED (progress said stop), ATN_E_DEVICE (device CUDA
 * and the GPU cannot run it: module missing, no driver, no device, out of GPU memory;
 * AUTO falls back to the CPU instead, see atn_run_fallback_reason).  After a failure the
 * run has no capture. */
atn_status atn_run_forward(atn_run *run, const atn_encoding *enc, const atn_run_options *opts,
                           atn_error *err);
/* The last successful forward's capture (borrowed from the run: valid until its next
 * forward or atn_run_free), or NULL before one or after a failed one. */
const atn_capture *atn_run_capture(const atn_run *run);
/* Which device the last forward actually used (AUTO resolves to CPU or CUDA). */
atn_device atn_run_device_used(const atn_run *run);
/* Why the last forward ran on the CPU although it asked for ATN_DEVICE_AUTO: the GPU's
 * error message ("the CUDA module is missing: ...", "no CUDA device ...", "out of GPU
 * memory: ..."), owned by the run and valid until its next forward or atn_run_free; NULL
 * when the last forward did not fall back (it used the GPU, asked for the CPU or CUDA
 * outright, or failed) or run is NULL.  The engine decides the fallback in this one
 * place; the CLI and the window only report it. */
const char *atn_run_fallback_reason(const atn_run *run);

/* ---- devices ---------------------------------------------------------------- */

/* One GPU the CUDA module can run on. */
typedef struct atn_device_info {
    int32_t index;
    char name[256];          /* "NVIDIA H200" */
    uint64_t total_bytes;    /* device memory */
    uint64_t free_bytes;
    int32_t cc_major, cc_minor;   /* compute capability */
    int32_t multiprocessors;
    char runtime[128];       /* "CUDA runtime 13.0, driver 13.0, cuBLAS 13.0.0" */
} atn_device_info;

/* The number of GPUs the CUDA module sees (loading the module on the first call, see
 * Threads), or 0 with the reason in err (ATN_E_DEVICE): module missing or unloadable, ABI
 * mismatch, no driver, no device.  err may be NULL. */
int32_t atn_cuda_device_count(atn_error *err);
/* Fills *info for GPU index (0 .. atn_cuda_device_count() - 1).  ATN_E_DEVICE when no GPU
 * is usable, ATN_E_INVALID for an index out of range or a NULL info, or the module's error
 * when it cannot read the properties. */
atn_status atn_cuda_device_info(int32_t index, atn_device_info *info, atn_error *err);
/* The CUDA module file that was loaded or last tried ("" before the first try; never
 * NULL; static storage). */
const char *atn_cuda_module_path(void);

/* How far reduced-precision attention moves from fp32: runs enc on the GPU in fp32 and in
 * precision (FP16 or BF16) and writes, per layer and head ([L][H], caller's arrays of
 * L*H floats), the max and mean |p_prec - p_fp32| over that head's n x n probabilities.
 * ATN_E_DEVICE when no GPU is usable, ATN_E_INVALID for a NULL argument or precision FP32,
 * ATN_E_NOMEM, or the forward pass's error. */
atn_status atn_compare_precision(const atn_model *model, const atn_encoding *enc, atn_precision precision,
                                 float *max_abs, float *mean_abs, atn_error *err);

/* How a reduced-precision capture b moves from the fp32 capture a of the same input (any
 * device): per layer and head ([L][H], caller's arrays) the max and mean |b - a| over the
 * head's n x n probabilities (NaN counts as the largest); per hidden state ([L+1], caller's
 * arrays, either may be NULL) the max |b - a| and ||b - a|| / ||a|| over the real tokens
 * (a's enc->mask).  ATN_E_INVALID: NULL a/b/max_abs/mean_abs, a capture without attention,
 * shapes that differ. */
atn_status atn_precision_compare(const atn_capture *a, const atn_capture *b, float *max_abs, float *mean_abs,
                                 float *hidden_max, float *hidden_rel, atn_error *err);

/* ---- the trace: one head's arithmetic, step by step ------------------------- */

typedef struct atn_trace {
    int32_t layer, head, query;
    int32_t n, d_head, d_model;
    const atn_encoding *enc;   /* borrowed from the capture */
    double *q;          /* [k]     q_i, the query row of this head */
    double *keys;       /* [n][k]  every k_j */
    double *scores;     /* [n]     q_i . k_j */
    double scale;       /* 1 / sqrt(k) (GPT-2: as its scale_attn_* switches say; Gemma:
                           query_pre_attn_scalar^-1/2) */
    double *scaled;     /* [n]     scores * scale */
    double *mask_term;  /* [n]     row query of the capture's mask_add: what the forward added */
    double *bias_term;  /* [n]     ALiBi's -m_h |query - j| (all 0 without ALiBi) */
    double temperature; /* the scores (scaled + mask + bias) were divided by it before the
                           softmax (1: none); max, shifted and exps are of the divided scores */
    int32_t head_off;   /* 0: head on; 1: switched off, zeroed (weights and output 0); 2: switched
                           off, uniform (weights 1/k over the unmasked keys) */
    double max;         /* max_j (scaled + mask + bias) / temperature */
    double *shifted;    /* [n]     (scaled + mask + bias) / temperature - max */
    double *exps;       /* [n]     exp(shifted) */
    double sum;         /* sum of exps */
    double *weights;    /* [n]     exps / sum: the softmax */
    double *values;     /* [n][k]  every v_j */
    double *output;     /* [k]     sum_j weights_j v_j: this head's output for token i */
    /* layer level, for token i */
    double *concat;     /* [d]     all heads' outputs for token i, concatenated ([d_concat], below) */
    double *projected;  /* [d]     concat W_O^T + b_O */
    float max_abs_diff; /* |weights - captured probabilities|, a self-check */
    bool causal;        /* a causal model (GPT-2): keys after the query are masked (their
                           mask_term is ATN_MASK_MIN, finfo.min) as well as padded ones */
    int32_t kv_head;    /* the K/V head this query head reads (grouped-query attention:
                           head / (n_heads / n_kv_heads)); keys and values are its rows.  q and
                           keys are after the rotation of a rotary model (what the scores read) */
    /* a rotary model (atn_model_rotary_info) whose run rotated (not "no positions"): q and the
       keys before the rotation, recomputed in double from the layer's input (its RMSNorm,
       the projection and bias, Qwen3's per-head q/k norm), and the angle of each of the
       k / 2 pairs (i, i + k/2) at the query's position (position id x inv_freq[i]); a key
       j's angles are its own position id times the same frequencies.  NULL otherwise */
    double *q_unrotated;       /* [k] */
    double *keys_unrotated;    /* [n][k] */
    double *angles;            /* [k / 2] */
    const float *inv_freq;     /* [k / 2] the rotation's frequencies (borrowed from the model, or the run's what-if ones) */
    /* concat's length: n_heads k, which is d_model but for a rotary decoder whose head_dim
       says otherwise (Qwen3-0.6B: 16 heads of 128 over d_model 1024); concat then holds
       d_concat values (and is at least d_model long, zeros past d_concat), projected d_model */
    int32_t d_concat;
    /* Gemma 2's attention soft-cap c (attn_logit_softcapping): capped[j] = c tanh(scaled[j] / c)
       is what the mask and the bias are added to (max, shifted and exps are of it); 0 and
       NULL without a soft-cap.  scale above is then query_pre_attn_scalar^-1/2 (Gemma) */
    double softcap;
    double *capped;     /* [n] or NULL */
    /* DeBERTa-v2/v3 (disentangled attention): scale is 1 / sqrt(k scale_factor); the
       content->position and position->content terms of each key, already times scale, which
       the score adds to scaled before the mask (so shifted = scaled + c2p + p2c + mask + bias
       - max), and the relative-embedding row each key read (clamp(bucket(query - j) + span,
       0, 2 span - 1)).  NULL (scale_factor 0) for every other model, and for a run with "no
       positions"; a term the model's pos_att_type lacks is all 0 */
    double *c2p_term, *p2c_term;   /* [n] */
    int32_t *rel_index;            /* [n] */
    int32_t scale_factor, rel_span;
    bool xsoftmax;      /* DeBERTa: a query whose every key is masked (padding) gets all weights 0 */
    /* which stack the head is in (atn_trace_compute_stack): ATN_STACK_ENCODER for every model
       without stacks.  n_queries: the query rows of that stack (the source's tokens for the
       encoder, the target's for the decoder and cross), query indexes them; n above is the
       keys' count (the source's for the encoder and cross, the target's for the decoder).
       q_ids [n_queries] and k_ids [n]: the tokens' ids, borrowed from the capture (enc's
       ids for the encoder stack).  For cross-attention q comes from the decoder's hidden
       state after the layer's self-attention block and keys and values from the encoder's
       output; concat and projected are the cross-attention's (W_O of the cross block) */
    atn_stack_kind stack;
    int32_t n_queries;
    const int32_t *q_ids, *k_ids;
    /* T5's relative position bias (the encoder's and the decoder's self-attention; scale is
       then 1: T5 does not scale its scores): key j's bucket of the distance j - query
       (bidirectional in the encoder, causal in the decoder; num_buckets, max_distance) and
       the head's learned bias for that bucket (layer 0's relative_attention_bias, shared by
       every layer), which the score adds before the mask (shifted = scaled + pos_bias + mask
       - max).  NULL for cross-attention, which has no position term, and other models */
    int32_t *bucket;    /* [n] */
    double *pos_bias;   /* [n] */
    bool bias_bidirectional;
    int32_t num_buckets, max_distance;
    bool from_file;     /* made from an attention file's q, k, v (atn_attn_file_trace): no
                           weights, so projected is NULL and d_model is d_concat */
    int32_t n_kv_heads; /* K/V heads per layer (grouped-query attention: heads kv_head * g ..
                           kv_head * g + g - 1 share this head's keys and values, g = n_heads /
                           n_kv_heads); as many as query heads when each has its own */
    bool qk_norm;       /* q and k were RMS-normalised per head before the rotation (Qwen3's and
                           Gemma 3's q_norm / k_norm): q_unrotated and keys_unrotated are after it */
} atn_trace;

/* Recomputes head (layer, head)'s attention for token query in double precision from the
 * capture's Q, K, V (so the run must keep trace inputs).  *out is the caller's
 * (atn_trace_free); every array in it is owned by the trace, shapes as above; enc is
 * borrowed from cap.  ATN_E_INVALID: NULL cap, no trace inputs, no mask_add, layer/head/query
 * out of range (the message gives the range); ATN_E_NOMEM.  The encoder stack of an
 * encoder-decoder's capture (atn_trace_compute_stack with ATN_STACK_ENCODER). */
atn_status atn_trace_compute(const atn_model *model, const atn_capture *cap, int32_t layer,
                             int32_t head, int32_t query, atn_trace **out, atn_error *err);
/* The same for a head of stack `stack` of an encoder-decoder's capture (cap->n_stacks 3):
 * layer counts the decoder's layers for ATN_STACK_DECODER and ATN_STACK_CROSS, query the
 * target's tokens (cap->n_tgt).  For a capture without stacks only ATN_STACK_ENCODER is
 * accepted (ATN_E_INVALID naming the stack otherwise).  Errors as atn_trace_compute; the
 * ranges in the messages are the stack's. */
atn_status atn_trace_compute_stack(const atn_model *model, const atn_capture *cap, atn_stack_kind stack,
                                   int32_t layer, int32_t head, int32_t query, atn_trace **out,
                                   atn_error *err);
void atn_trace_free(atn_trace *trace);   /* NULL: nothing */

/* ---- masked-word prediction ------------------------------------------------- */

typedef struct atn_prediction {
    int32_t id;
    const char *token;   /* borrowed from the model's vocabulary: "cat", "##s" ("?" when the
                            model has no tokenizer) */
    float prob;
    const char *surface; /* how the token reads in a text: "s" for "##s" (borrowed) */
    bool continuation;   /* it continues the word before it (a "##" piece) */
} atn_prediction;

/* The masked-LM head (cls.predictions.*: dense + activation + LayerNorm, decoder tied to
 * the word embeddings + bias) at one position of a capture: the top_k most likely
 * tokens, most likely first, into out[top_k] (the caller's array; top_k below 1 counts as
 * 1, above V as V).  Needs atn_model_has_mlm_head() (else ATN_E_UNSUPPORTED) and the
 * capture's hidden states; ATN_E_INVALID: position outside 0..n-1 or a NULL cap;
 * ATN_E_NOMEM. */
atn_status atn_predict_position(const atn_model *model, const atn_capture *cap, int32_t position,
                                int32_t top_k, atn_prediction *out, atn_error *err);

/* The next-token guesses of a causal model (atn_model_is_causal, else ATN_E_UNSUPPORTED)
 * after the token at position of a capture: its LM head (GPT-2: the tied head,
 * logits = h_L wte^T with h_L the captured last hidden state, after ln_f), the top_k most
 * likely tokens, most likely first, into out[top_k] (caller's array; top_k below 1 counts
 * as 1, above V as V).  Position n-1 guesses what follows the text; an earlier position
 * what the model expected there (seeing only tokens 0..position).  ATN_E_INVALID:
 * position outside 0..n-1 or a NULL cap; ATN_E_NOMEM. */
atn_status atn_predict_next(const atn_model *model, const atn_capture *cap, int32_t position, int32_t top_k,
                            atn_prediction *out, atn_error *err);

/* A causal model's next-token log-probability (natural log) of token id after position (the
 * LM head of atn_predict_next, log-softmax over the vocabulary), into *logp: the next-token
 * loss (attnscope importance on GPT-2) and the window's before/after guesses.
 * ATN_E_UNSUPPORTED for a model that is not causal; ATN_E_INVALID: position or id out of
 * range, NULL cap/logp; ATN_E_NOMEM. */
atn_status atn_predict_next_log_prob(const atn_model *model, const atn_capture *cap, int32_t position, int32_t id,
                                     double *logp, atn_error *err);

/* The masked-LM head's log-probability (natural log) of token id at one position of a
 * capture, into *logp: for the probability of the original word (attnscope diff) and the
 * masked-LM loss (attnscope importance).  ATN_E_UNSUPPORTED without a masked-LM head;
 * ATN_E_INVALID: position or id out of range, NULL cap/logp; ATN_E_NOMEM. */
atn_status atn_predict_log_prob(const atn_model *model, const atn_capture *cap, int32_t position, int32_t id,
                                double *logp, atn_error *err);

/* Fills a guess into the text it was encoded from: the byte span [start, end) of tok (a
 * [MASK] written in the text) in text (the text of tok's own segment, tok->segment)
 * becomes guess->surface; a guess that continues a word (guess->continuation) joins the
 * word before it, so the spaces before the span go too ("the [MASK]" + "##s" -> "thes").
 * Only the span is replaced: the same letters elsewhere in the text are left alone.
 * Returns a malloc'ed string (free it), or NULL when an argument is NULL, tok has no span
 * (an added [CLS]/[SEP], a token given as an id), the span lies outside text or no longer
 * reads as tok->text (the text changed since it was encoded), or memory runs out. */
char *atn_fill_guess(const char *text, const atn_token *tok, const atn_prediction *guess);

/* ---- batches: several sequences per forward ----------------------------------- */

typedef struct atn_batch atn_batch;

/* A batch runner for model (borrowed: it must outlive the batch): its memory grows to the
 * largest stack it ran and is reused, as a run's.  NULL when out of memory.  One thread at a
 * time per batch. */
atn_batch *atn_batch_new(const atn_model *model);
void atn_batch_free(atn_batch *batch);   /* NULL: nothing */

/* Token rows of one stacked forward (default ATN_BATCH_ROWS): consecutive sequences are
 * stacked until their tokens reach it.  1 runs one sequence per forward (the plain loop,
 * for comparisons). */
enum { ATN_BATCH_ROWS = 256 };
void atn_batch_set_rows(atn_batch *batch, int32_t rows);

/* exact (the default): stack only where every capture is bit for bit what one forward of
 * that sequence gives (the CPU's AVX-512 path).  false: stack on the cblas path too, where
 * OpenBLAS gives a row other last bits in a taller product (relative differences ~1e-7 in
 * the hidden states, ~1e-8 in the probabilities; tests/engine/test-batch.c measures them). */
void atn_batch_set_exact(atn_batch *batch, bool exact);

/* Called with sequence index's capture, in the order of the input (valid until the call
 * returns); any status but ATN_OK ends the batch with it. */
typedef atn_status (*atn_batch_fn)(int32_t index, const atn_capture *cap, void *user_data, atn_error *err);

/* Runs encs[0..count) through the model with opts (NULL: the defaults) and hands each
 * capture to each, in order.  Every capture is what atn_run_forward would give for that
 * sequence alone, bit for bit (but see atn_batch_set_exact): on the CPU's fast path
 * (AVX-512, no per-head intervention: no head gate, ALiBi, temperature or no_positions)
 * consecutive sequences are stacked into one forward (their token rows concatenated for
 * every product, attention per sequence and head with each one's own mask, position ids
 * and interventions), and every row is computed by the same arithmetic in the same order
 * as alone; otherwise (toy models, the GPU), and for a sequence longer than the rows of a
 * stack, or one whose stack would pass the memory limit, one atn_run_forward each.
 * opts->progress is called per layer of each forward.  Returns ATN_OK, each's status, or
 * the status atn_run_forward returns for the first sequence it refuses (its message); then
 * *failed (may be NULL) is that sequence's index (-1 on success or before any sequence).
 * Sequences before it have been handed to each.  ATN_E_INVALID for NULL batch or encs
 * (count > 0) or each. */
atn_status atn_batch_forward(atn_batch *batch, atn_encoding *const *encs, int32_t count, const atn_run_options *opts,
                             atn_batch_fn each, void *user_data, int32_t *failed, atn_error *err);

/* Forwards the last atn_batch_forward ran stacked (several sequences at once) and one at a
 * time: for benchmarks and tests. */
void atn_batch_counts(const atn_batch *batch, int64_t *stacked, int64_t *single);

/* ---- corpora ---------------------------------------------------------------- */

/* What a pass over a corpus did. */
typedef struct atn_corpus_report {
    int64_t lines;          /* lines read */
    int64_t sentences;      /* non-empty lines run and consumed */
    int64_t truncated;      /* of those, cut to the model's positions */
    int64_t cut;            /* lines longer than ATN_CORPUS_LINE_MAX bytes, cut there */
    int64_t skipped;        /* lines refused: invalid UTF-8, a NUL byte */
    int64_t skip_line[3];   /* the first three skipped lines (1-based) and why */
    char skip_reason[3][160];
    int64_t current_line;   /* while consume runs: the line (1-based, as numbered by
                               atn_corpus_options.first_line) of the sentence it is handed */
} atn_corpus_report;

/* A corpus line is read up to this many bytes (at a character boundary) and the rest of it
 * skipped: the model's positions need far less text, and memory stays bounded by this,
 * not by the line (a run costs ~46x its text).  A line with no end after
 * ATN_CORPUS_RUNAWAY bytes (an endless input such as /dev/zero) ends the pass. */
enum { ATN_CORPUS_LINE_MAX = 64 * 1024, ATN_CORPUS_RUNAWAY = 64 * 1024 * 1024 };

/* Called with each sentence's capture (valid until the next call). */
typedef atn_status (*atn_capture_fn)(const atn_capture *cap, void *user_data, atn_error *err);

/* Runs every non-empty line of f (one sentence per line, "\n" or "\r\n") through model with
 * run_opts (one run reused for all: memory stays flat) and hands each capture to consume.
 * A line the tokenizer refuses, or one with a NUL byte ("a NUL byte at byte K: not text"),
 * is skipped and counted, not fatal; a line longer than ATN_CORPUS_LINE_MAX is cut
 * (report->cut) and run; a line with no end within ATN_CORPUS_RUNAWAY bytes ends the pass
 * with ATN_E_FORMAT ("line N has no end after 64 MiB: ...").  progress (may be NULL)
 * gets the fraction of total_bytes read (0: unknown) every few lines, and ends the pass
 * with ATN_E_CANCELLED when it returns false (stage ATN_STAGE_CORPUS, ending with 1.0).
 * report must not be NULL; it is filled.  Toy models have no tokenizer: ATN_E_INVALID, as
 * for a NULL model, f or consume.  A forward's error (ATN_E_NOMEM ...) and consume's own
 * status end the pass and are returned ("line N: ..."); ATN_E_IO when reading f fails.
 * run_opts may be NULL (defaults); its own progress, if any, is called per forward. */
atn_status atn_corpus_run(const atn_model *model, FILE *f, double total_bytes, const atn_run_options *run_opts,
                          atn_capture_fn consume, atn_progress_fn progress, void *user_data,
                          atn_corpus_report *report, atn_error *err);

/* How a corpus pass runs its sentences (atn_corpus_run_ex): consecutive sentences are
 * stacked into forwards of up to `rows` token rows (atn_batch_forward; 0: ATN_BATCH_ROWS, 1:
 * one forward per sentence), `exact` as atn_batch_set_exact.  Consume sees the same
 * sentences, in the same order, with the same progress steps between them.
 * A part of a file (the shards of `stats --shard`): the caller positions f at a line's
 * start and says its number, first_line (1-based; the report's and the messages' line
 * numbers count from it); max_lines > 0 ends the pass after that many lines (0: at the end). */
typedef struct atn_corpus_options {
    int32_t rows;
    bool exact;
    int64_t first_line;
    int64_t max_lines;
} atn_corpus_options;

/* rows 0, exact true, first_line 1, max_lines 0: atn_corpus_run's */
void atn_corpus_options_init(atn_corpus_options *o);

/* atn_corpus_run with copts (NULL: the defaults). */
atn_status atn_corpus_run_ex(const atn_model *model, FILE *f, double total_bytes, const atn_run_options *run_opts,
                             const atn_corpus_options *copts, atn_capture_fn consume, atn_progress_fn progress,
                             void *user_data, atn_corpus_report *report, atn_error *err);

/* ---- writers ---------------------------------------------------------------- */

/* NumPy .npy v1.0, little-endian float32, C order: data [shape[0]]...[shape[ndim-1]].
 * Written through atn_write_file_atomic (its errors); ATN_E_NOMEM. */
atn_status atn_npy_write_f32(const char *path, const float *data, const int64_t *shape,
                             int ndim, atn_error *err);
/* The capture's attention [L][H][n][n] as a .npy file (the same bytes atn_npy_write_f32
 * writes from cap->attn), one head at a time through atn_capture_head_read, so an
 * on-demand capture needs one [n][n] head more, not the whole array.  Atomic as
 * atn_atomic_open (its errors); ATN_E_INVALID for a capture without heads; ATN_E_NOMEM.
 * progress (NULL: none) is called after each head with the fraction done and
 * ATN_STAGE_LAYER; false cancels (ATN_E_CANCELLED, the old file left). */
atn_status atn_npy_write_attention(const char *path, const atn_capture *cap, atn_progress_fn progress,
                                   void *user_data, atn_error *err);
/* Reads a float32 .npy (used by tests and tools): *data malloc'ed (the caller frees; NULL
 * on failure), shape[max_dims] and *ndim filled.  ATN_E_IO (cannot open), ATN_E_FORMAT
 * (not .npy v1.0, not little-endian float32 in C order, a truncated header, more than
 * max_dims dimensions, data shorter than the shape), ATN_E_NOMEM. */
atn_status atn_npy_read_f32(const char *path, float **data, int64_t *shape, int *ndim,
                            int max_dims, atn_error *err);

/* Writes len bytes of data to path.  A regular file (or a missing one) is replaced
 * atomically: a temporary ".atn-XXXXXX" in the same folder, with the old file's mode (a new
 * file: 0666 less the umask), renamed into place, so an interrupted write leaves the old file
 * as it was.  A symlink is followed (its target is replaced, the link stays).  A device, a
 * FIFO, "-" (standard output) and names that lead into /proc (/dev/stdout) are written
 * directly.  ATN_E_INVALID for a NULL or empty path, ATN_E_IO (a folder, a missing parent
 * folder, no permission, a full disk ...: the message names the path and the system's
 * reason), ATN_E_NOMEM. */
atn_status atn_write_file_atomic(const char *path, const void *data, size_t len, atn_error *err);

/* Output onto input: after atn_input_guard_enable (the command line calls it once, first),
 * every regular file the engine reads (atn_read_file, the weight files, the tokenizer's) and
 * every path given to atn_input_guard_note (a corpus the caller reads itself) is
 * remembered by device and inode, and atn_atomic_open / atn_write_file_atomic refuse to
 * replace one of them: ATN_E_INVALID "OUT: is one of this command's inputs (IN); write the
 * output elsewhere".  Off by default (the window saves the toy model it read).  Thread-safe;
 * atn_input_guard_note ignores NULL, a missing file and anything but a regular file. */
void atn_input_guard_enable(void);
void atn_input_guard_note(const char *path);
/* Forgets path (NULL, missing: nothing): a command that reads its own earlier output on
 * purpose and then replaces it (stats --resume with its partial) says so after reading. */
void atn_input_guard_forget(const char *path);

/* The same for a file written piece by piece with stdio: atn_atomic_open creates the
 * temporary file (*out, or NULL on error: ATN_E_INVALID for a NULL or empty path,
 * ATN_E_IO, ATN_E_NOMEM); write to atn_atomic_stream(af) (NULL for a NULL af); then
 * atn_atomic_close(af, keep, err) closes it and renames it into place when keep is true
 * and every write succeeded, or removes it.  It frees af in every case and returns ATN_OK
 * (renamed), ATN_E_IO (a write, the close or the rename failed: the old file is left as it
 * was; the message has the system's reason, e.g. "No space left on device"), ATN_E_CANCELLED
 * (keep was false) or ATN_E_INVALID (af NULL).  Where the file is written directly (a
 * device, a FIFO, "-", /dev/stdout: see atn_write_file_atomic) what was written stays
 * written whatever keep says.  Opening a FIFO waits for its reader; a signal delivered to a
 * handler without SA_RESTART ends the wait (ATN_E_IO, "Interrupted system call"). */
typedef struct atn_atomic_file atn_atomic_file;
atn_status atn_atomic_open(const char *path, atn_atomic_file **out, atn_error *err);
FILE *atn_atomic_stream(atn_atomic_file *af);
atn_status atn_atomic_close(atn_atomic_file *af, bool keep, atn_error *err);

/* ---- benchmarks: models with random weights, memory ------------------------- */

/* Models with random weights in the real shapes (bert-tiny, bert-base, bert-large and the
 * other families' base sizes) without downloading anything (`attnscope bench --shape`,
 * --gui-bench). */

/* The shape names atn_random_shape_config knows, NULL-terminated (static storage). */
const char *const *atn_random_shape_names(void);

/* Fills *cfg with a named shape: "bert-tiny" (2 layers, d 128, 2 heads, f 512),
 * "bert-base" (12, 768, 12, 3072), "bert-large" (24, 1024, 16, 4096); all with
 * vocabulary 30522, 512 positions, 2 token types, erf GELU, LayerNorm eps 1e-12.  The
 * other families at their base sizes (d 768, 12 heads, f 3072): "roberta-base" (12
 * layers, vocabulary 50265, 514 positions, 1 token type, pad_token_id 1),
 * "distilbert-base" (6 layers, no token types), "albert-base" (12 layers, vocabulary
 * 30000, d_embed 128, gelu_new), "gpt2" (12 layers, vocabulary 50257, 1024 positions,
 * 1 token type, tanh GELU, eps 1e-5).  The shapes opened as Hugging Face folders
 * (core/random-decoder.h): "qwen2.5-0.5b", "smollm2-135m", "llama-3.2-1b", "modernbert-base"
 * (22 layers, d 768, 12 heads, GeGLU 1152) and "t5-small" (6 + 6 layers, d 512, 8 heads of 64,
 * ReLU 2048; max_positions 2^20: relative positions).  ATN_E_INVALID (message lists the
 * names) for an unknown or NULL shape. */
atn_status atn_random_shape_config(const char *shape, atn_config *cfg, atn_error *err);

/* The model of a named shape with random weights from the generator below (same order;
 * BERT shapes: exactly atn_model_new_random's model), in its family: RoBERTa's position
 * rule, DistilBERT without token types, ALBERT with 128-wide embeddings projected to 768
 * (the projection's weight and bias are the two tensors after the layers) and one stored
 * layer that all 12 captured layers run; "gpt2" is a GPT-2 (pre-LN blocks, the causal mask;
 * ln1/ln2 read as ln_1/ln_2, no token types, the embedding LayerNorm unused, ln_f's gamma
 * and beta the two tensors after the layers).  No tokenizer.  Errors as
 * atn_random_shape_config and atn_model_new_random.  The caller owns the model. */
atn_model *atn_model_new_random_shape(const char *shape, uint64_t seed, atn_error *err);
/* The same with at least `positions` position rows (0 or fewer than the shape's: the
 * shape's).  Each tensor is drawn from its own counter, so the extra rows leave every other
 * number as it was: up to the shape's length the attention is atn_model_new_random_shape's
 * bit for bit (for inputs longer than the real model allows: GPT-2 at 4,096 tokens). */
atn_model *atn_model_new_random_shape_positions(const char *shape, uint64_t seed, int32_t positions, atn_error *err);

/* A BERT model (ATN_MODEL_BERT, no tokenizer: encode with atn_model_encode_ids) of the
 * shape cfg (its d_embed and pad_token_id are not used: BERT embeddings), every weight drawn from a counter-based generator so that any tool can
 * recompute it (bench/peer_torch.py does):
 *   tensor t (numbered as below), element i (row-major, weights [out, in]):
 *     x = splitmix64_mix(seed * 0x9E3779B97F4A7C15 + (t << 40) + i)
 *     u = (x >> 40) * 2^-24                      (uniform in [0, 1))
 *     value = center + scale * (2u - 1)
 *   scale 0.0346 (std 0.02, BERT's init) for matrices and embeddings, 0.02 for biases
 *   and LayerNorm betas, 0.1 around a center of 1 for LayerNorm gammas.
 * One allocation holds every weight (bert-base: 110M floats, 440 MB).  The config is
 * validated first (its error); ATN_E_NOMEM when the weights do not fit in memory.  name
 * (may be NULL: "random") is copied.  The caller owns the model (atn_model_free). */
atn_model *atn_model_new_random(const atn_config *cfg, const char *name, uint64_t seed, atn_error *err);

/* The tensor order used by the generator above: embeddings first, then per layer
 * (query.w, query.b, key.w, key.b, value.w, value.b, out.w, out.b, ln1.g, ln1.b,
 * ffn1.w, ffn1.b, ffn2.w, ffn2.b, ln2.g, ln2.b).  Tensor index of layer l's j-th
 * tensor = 5 + 16 l + j. */
enum { ATN_RANDOM_EMBEDDING_TENSORS = 5, ATN_RANDOM_LAYER_TENSORS = 16 };

/* Bytes of the packed copy of the layer weights the CPU kernels made for this model on its
 * first forward (0 before that, for NULL, or when the model takes the cblas_sgemm path). */
size_t atn_cpu_packed_bytes(const atn_model *model);

/* Memory for a big array (weights, a run's activations), released with free(): aligned to
 * 2 MB and advised for transparent huge pages when it is 4 MB or more.  NULL when out of
 * memory.  Page faults are what first use of fresh memory costs, and in the VMs this runs
 * on a 4 KB fault costs tens of microseconds: 340 MB took 3 s to touch in 4 KB pages,
 * 0.07-1.5 s in 2 MB ones. */
void *atn_alloc_big(size_t bytes);

/* ---- CPU features ----------------------------------------------------------- */

/* What this CPU and its OS can run (an AVX or AVX-512 set counts only when the OS saves its
 * registers, XGETBV), named as /proc/cpuinfo's flags; then which of the engine's vector
 * paths are on, after the overrides in the environment (read once, with the probe). */
typedef struct atn_cpu_flags {
    bool avx, avx2, fma, f16c;
    bool avx512f, avx512bw, avx512vl, avx512_bf16, avx512_fp16;
    bool packed_kernels;     /* the packed AVX-512 forward: avx512f, and ATTNSCOPE_CPU_KERNELS
                                is not "blas" (the cblas_sgemm path, for comparisons) */
    bool avx2_activations;   /* tanh/GELU arrays in AVX2: avx2 and fma, and ATTNSCOPE_NO_AVX2
                                is not set (the scalar twin gives the same bits) */
    bool f16c_rounding;      /* fp16 rounding with F16C: f16c, and ATTNSCOPE_NO_F16C is not set */
} atn_cpu_flags;

/* The one CPU-feature probe: computed once per process (pthread_once, so any thread may ask
 * first), static storage, never NULL.  Every feature is false on a CPU other than x86-64. */
const atn_cpu_flags *atn_cpu_features(void);
/* The features above that this CPU has, space-separated in that order ("avx avx2 fma f16c";
 * empty when none; static storage): `attnscope devices` prints it. */
const char *atn_cpu_features_str(void);

/* ---- BLAS kernel check ------------------------------------------------------ */

/* The OpenBLAS core in use ("SkylakeX", "Haswell", "Prescott" ...; static storage). */
const char *atn_blas_core_name(void);
/* The core OpenBLAS should use on this CPU, or NULL when the current one is fine.
 * Debian 12's OpenBLAS 0.3.21 falls back to Prescott on newer CPUs (5x slower sgemm). */
const char *atn_blas_better_core(void);

const char *atn_version(void);   /* "0.1.0" (static storage) */

#ifdef __cplusplus
}
#endif
#endif
