/* Model families (internal): one table per architecture family says everything that differs
 * between families and that the loader, the embeddings of every backend and the masked-LM
 * head need to know: the config.json model_type(s) it accepts, the config keys it reads
 * (with their defaults), its tensor names (with the prefixes of task checkpoints), how
 * position ids are made, whether token types exist, the masked-LM head's tensor names and
 * the tokenizer it uses.  BERT is the first (today the only) entry.
 *
 * Adding a family is adding an entry to the table in family.c (and, for a rule the table
 * cannot yet express, a new enum value here and its case in the one function that reads
 * it).  The tables are constant and shared by every thread. */
#ifndef ATN_FAMILY_H
#define ATN_FAMILY_H

#include "attnscope.h"

/* How the position id of each token is made (atn_family_position_ids).  Position ids
 * index rows of the position-embedding table; they are computed once per run on the host
 * (engine/run.c) and read by every backend's embeddings. */
typedef enum atn_position_rule {
    /* BERT: token i of the sequence has position i (absolute learned positions from 0).
       Room for more families (docs/ARCHITECTURE.md, "Add a model family"): RoBERTa / XLM-R count from padding_idx + 1 over non-padding
       tokens (padding gets padding_idx); GPT-2 is from 0 like BERT; sinusoidal or no
       position table are further values. */
    ATN_POSITIONS_FROM_0 = 0,
} atn_position_rule;

/* The config.json keys a family reads.  The five size keys are required; the others fall
 * back to the default given when absent (the defaults of transformers' config class, so a
 * sparse config reads as transformers reads it). */
typedef struct atn_family_config {
    const char *d_model, *n_layers, *n_heads, *d_ffn, *vocab_size;
    const char *max_positions;   int32_t max_positions_default;
    const char *type_vocab_size; int32_t type_vocab_size_default;
    const char *act;             const char *act_default;
    const char *ln_eps;          float ln_eps_default;
    const char *position_type;   const char *position_type_default;   /* only "absolute" is run */
} atn_family_config;

/* Tensor names of the encoder.  Each is the full name after a prefix; a layer's names
 * follow "<prefix><layer><i>.", e.g. "bert." "encoder.layer." "3." "attention.self.query.weight". */
typedef struct atn_family_tensors {
    /* the prefixes a checkpoint may put before every encoder name, tried in order against
       word_emb: BertForMaskedLM & co. write "bert.", BertModel none; NULL-terminated, the
       last one is used when none matches (so the error names the unprefixed tensor) */
    const char *prefixes[4];
    const char *word_emb, *pos_emb, *type_emb, *emb_ln_w, *emb_ln_b;
    const char *layer;   /* "encoder.layer." */
    const char *wq, *bq, *wk, *bk, *wv, *bv, *wo, *bo;
    const char *ln1_w, *ln1_b, *w1, *b1, *w2, *b2, *ln2_w, *ln2_b;
    /* old TensorFlow-converted checkpoints: "LayerNorm.gamma" / "LayerNorm.beta" accepted
       where "LayerNorm.weight" / "LayerNorm.bias" are absent */
    bool legacy_layernorm;
} atn_family_tensors;

/* The masked-LM head's tensors (full names, no prefix); optional as a whole: when
 * dense_w is absent the model has no head.  Computed by engine/mlm.c as
 * logits = LN(act(h dense^T + b)) decoder^T + bias, decoder NULL meaning tied to word_emb. */
typedef struct atn_family_mlm {
    const char *what;   /* how messages name the head: "cls.predictions.*" */
    const char *dense_w, *dense_b, *ln_w, *ln_b;
    const char *decoder_w;   /* optional: usually tied to the word embeddings */
    const char *bias[2];     /* the first one present is the decoder bias */
} atn_family_mlm;

typedef struct atn_family {
    const char *name;                /* "BERT" */
    const char *model_types[4];      /* config.json "model_type" values; NULL-terminated */
    atn_family_config config;
    atn_family_tensors tensors;
    atn_position_rule positions;
    bool token_types;                /* has a token-type embedding (segment A/B) */
    atn_family_mlm mlm;
    /* the tokenizer, by the kind atn_tokenizer_kind() reports (engine/tokenizer.h):
       "wordpiece" is WordPiece (engine/wordpiece.h) from vocab_file */
    const char *tokenizer;
    const char *vocab_file;          /* "vocab.txt" */
} atn_family;

/* The BERT family (also what toy and random models are: post-LN BERT encoders). */
const atn_family *atn_family_bert(void);

/* Number of families and the i-th (0 <= i < count), in table order. */
int32_t atn_family_count(void);
const atn_family *atn_family_at(int32_t i);

/* The family whose table accepts model_type (exact, case-sensitive, as transformers
 * compares it).  NULL model_type or an unknown one: NULL and ATN_E_UNSUPPORTED in err,
 * the message "<where>: "model_type" is "<value>": ... (supported: "bert", ...)"
 * naming where it came from (config.json's path; NULL: "config.json"). */
const atn_family *atn_family_lookup(const char *model_type, const char *where, atn_error *err);

/* pos[i] for each of enc's n tokens, by the family's position rule (pos has n entries,
 * caller's memory).  Called once per run by engine/run.c, whose input check keeps every
 * id below the model's max_positions (for FROM_0: n <= max_positions). */
void atn_family_position_ids(const atn_family *f, const atn_encoding *enc, int32_t *pos);

#endif
