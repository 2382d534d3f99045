/* Model families (internal): one table per architecture family says everything that differs
 * between families and that the loader, the embeddings of every backend and the masked-LM
 * head need to know: the config.json model_type(s) it accepts, the config keys it reads
 * (with their defaults), its tensor names (with the prefixes of task checkpoints), how
 * position ids are made, whether token types exist, the masked-LM head's tensor names and
 * the tokenizer it uses.  BERT is the first entry; RoBERTa, XLM-RoBERTa, DistilBERT, ALBERT
 * and ELECTRA follow (all post-LN encoders that run through the same forward).
 *
 * Adding a family is adding an entry to the table in family.c (and, for a rule the table
 * cannot yet express, a new enum value here and its case in the one function that reads
 * it).  The tables are constant and shared by every thread. */
#ifndef ATN_FAMILY_H
#define ATN_FAMILY_H

#include "attnscope.h"

/* How the position id of each token is made (atn_family_position_ids).  Position ids
 * index rows of the position-embedding table; they are computed once per run on the host
 * (engine/forward/run.c) and read by every backend's embeddings. */
typedef enum atn_position_rule {
    /* BERT: token i of the sequence has position i (absolute learned positions from 0).
       Room for more families (docs/ARCHITECTURE.md, "Add a model family"): RoBERTa / XLM-R count from padding_idx + 1 over non-padding
       tokens (padding gets padding_idx); GPT-2 is from 0 like BERT; sinusoidal or no
       position table are further values. */
    ATN_POSITIONS_FROM_0 = 0,
    /* RoBERTa / XLM-R (create_position_ids_from_input_ids): a token whose id is not the
       config's pad_token_id (padding_idx) gets padding_idx + (its rank among such tokens,
       from 1); a padding token gets padding_idx.  So n tokens need n + padding_idx + 1
       position rows: max_position_embeddings 514 allows 512 tokens. */
    ATN_POSITIONS_AFTER_PAD = 1,
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
    /* NULL key: the family has no such key and the default is used */
    const char *d_embed;         int32_t d_embed_default;   /* ALBERT/ELECTRA embedding_size; 0: d_model */
    const char *n_groups;        /* ALBERT num_hidden_groups (default 1) */
    const char *inner_layers;    /* ALBERT inner_group_num (default 1) */
    const char *pad_id;          int32_t pad_id_default;    /* pad_token_id, for ATN_POSITIONS_AFTER_PAD */
    const char *sinusoidal;      /* DistilBERT sinusoidal_pos_embds (default false) */
    /* d_ffn absent or null: d_ffn_default_mult * d_model (GPT-2's n_inner: None -> 4 * n_embd);
       0: d_ffn is required */
    int32_t d_ffn_default_mult;
    /* GPT-2's attention switches (GPT2Config): "scale_attn_weights" (default true: scores /
       sqrt(head width)), "scale_attn_by_inverse_layer_idx" (default false: scores / (layer
       + 1)), "reorder_and_upcast_attn" (default false: the same arithmetic in float32,
       which is what attnscope computes anyway).  NULL: the family has no such key */
    const char *scale_attn_weights, *scale_attn_by_inverse_layer_idx, *reorder_and_upcast_attn;
    /* rotary decoders (atn_family.rotary; LlamaConfig, Qwen2Config, Qwen3Config,
       MistralConfig): "num_key_value_heads" (default num_attention_heads), "head_dim"
       (default hidden / heads), "rope_theta" (rope_theta_default), "rope_scaling",
       "attention_bias" (q, k, v and o biases; default false), "mlp_bias" (default false),
       "sliding_window" with "use_sliding_window" / "max_window_layers" (Qwen2, Qwen3;
       NULL: the window applies to every layer when set, as Mistral), the default of
       "tie_word_embeddings" (false: an lm_head.weight of its own).  NULL: no such key */
    const char *kv_heads, *head_dim, *rope_theta, *rope_scaling, *attention_bias, *mlp_bias;
    double rope_theta_default;
    /* the defaults of num_key_value_heads and head_dim when absent (Gemma2Config: 4 and 256);
       0: num_attention_heads and hidden / heads */
    int32_t kv_heads_default, head_dim_default;
    const char *sliding_window, *use_sliding_window, *max_window_layers;
    int32_t sliding_window_default, max_window_layers_default;   /* as the config classes set them */
    bool tie_default_false;
    /* other spellings of the keys above, in pairs {other, key}: read as key when key is
       absent (BloomConfig's n_embed -> hidden_size, num_attention_heads -> n_head) */
    const char *aliases[8];
    /* BLOOM: apply_residual_connection_post_layernorm, pretraining_tp and slow_but_exact
       (refused where they change the numbers) */
    const char *residual_post_ln, *pretraining_tp, *slow_but_exact;
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
    /* the projection of the embeddings (width d_embed) to d_model before layer 0 (ALBERT's
       encoder.embedding_hidden_mapping_in, ELECTRA's embeddings_project), NULL: none.  Bound
       when d_embed != d_model, and when present with d_embed == d_model (ALBERT always
       has it) */
    const char *emb_proj_w, *emb_proj_b;
    /* shared layers (ALBERT): when inner is set, the weights of captured layer l are
       "<layer><g><inner><j>." (e.g. "encoder.albert_layer_groups." "0" ".albert_layers." "1"
       "."): inner layer j of layer group g (atn_family_layer_source); NULL: "<layer><l>." */
    const char *inner;
    /* GPT-2: the query/key/value projections are one fused tensor [d, 3d] (qkv_w, bias
       qkv_b [3d]), split at load into wq/wk/wv; wq..bv above are then NULL */
    const char *qkv_w, *qkv_b;
    /* BLOOM's fused query_key_value (nn.Linear [3d, d], bias [3d]): the rows per head, q k v
       of head h at rows 3 h k + (0, k, 2 k) (view(batch, seq, heads, 3, head_dim)) */
    bool qkv_per_head;
    /* GPT-2's Conv1D: every layer weight is stored [in, out] (y = x W + b); the loader
       transposes them into the engine's [out, in] */
    bool weights_in_out;
    /* the final LayerNorm after the last block (GPT-2's ln_f); NULL: none.  The captured
       last hidden state is after it, as Hugging Face's hidden_states tuple has it */
    const char *final_ln_w, *final_ln_b;
    /* the LM head's decoder when stored (GPT2LMHeadModel's lm_head.weight [V, d], full name,
       no prefix), read when config.json says "tie_word_embeddings": false; else the head is
       word_emb, as transformers ties it.  Only for next-token families */
    const char *lm_head_w;
    /* rotary decoders: the gated MLP's gate (mlp.gate_proj; w1/b1 name up_proj, w2/b2
       down_proj), its bias (with mlp_bias), Qwen3's per-head q_norm / k_norm; q, k, v
       biases always present (Qwen2) */
    const char *gate_w, *gate_b, *q_norm_w, *k_norm_w;
    bool qkv_bias;
    /* Gemma's sandwich norms: post_attention_layernorm and post_feedforward_layernorm (ln2_w
       is then pre_feedforward_layernorm); NULL: none */
    const char *post_attn_ln_w, *post_ffn_ln_w;
} atn_family_tensors;

/* The masked-LM head's tensors (full names, no prefix); optional as a whole: when
 * dense_w is absent the model has no head.  Computed by engine/analysis/mlm.c as
 * logits = LN(act(h dense^T + b)) decoder^T + bias, decoder NULL meaning tied to word_emb.
 * dense maps d_model to d_embed (ALBERT, ELECTRA's generator; d_model elsewhere), the
 * LayerNorm is d_embed wide and the decoder is [vocab, d_embed]. */
typedef struct atn_family_mlm {
    const char *what;   /* how messages name the head: "cls.predictions.*" */
    const char *dense_w, *dense_b, *ln_w, *ln_b;
    const char *decoder_w;   /* optional: usually tied to the word embeddings */
    const char *bias[2];     /* the first one present is the decoder bias */
    /* the head's activation is exact gelu whatever hidden_act says (RobertaLMHead,
       ElectraGeneratorPredictions); false: hidden_act (BERT, ALBERT, DistilBERT) */
    bool act_gelu;
} atn_family_mlm;

typedef struct atn_family {
    const char *name;                /* "BERT" */
    const char *model_types[4];      /* config.json "model_type" values; NULL-terminated */
    atn_family_config config;
    atn_family_tensors tensors;
    atn_position_rule positions;
    bool token_types;                /* has a token-type embedding (segment A/B) */
    atn_family_mlm mlm;
    /* the tokenizer, by the kind atn_tokenizer_kind() reports (engine/tokenize/tokenizer.h):
       "wordpiece" is WordPiece (engine/tokenize/wordpiece.h) from vocab_file */
    const char *tokenizer;
    /* the family's own vocabulary file ("vocab.txt", "vocab.json", "spiece.model"): which
       file a folder is tokenized from is engine/tokenize/tok-folder.h's one rule */
    const char *vocab_file;
    /* GPT-2: pre-LN blocks (h + Attn(LN1(h)), then h + FFN(LN2(h))), no embedding
       LayerNorm (emb_ln_w NULL), the final LayerNorm of tensors.final_ln_w; false: BERT's
       post-LN blocks */
    bool pre_ln;
    /* a causal (decoder) model: query i sees keys 0..i only (engine/forward/run.c's build_mask
       adds ATN_MASK_MIN for later keys), and its head guesses the next token
       (logits = h_L word_emb^T, the tied LM head) instead of masked words */
    bool causal;
    const char *merges_file;         /* BPE merges next to vocab_file ("merges.txt"); NULL: none */
    /* a rotary decoder (Llama, Qwen2, Qwen3, Mistral): pre-norm blocks with RMSNorm, a gated
       MLP, rotary positions on q and k (no position table), grouped K/V heads, a final
       RMSNorm (tensors.final_ln_w) and a next-token head (pre_ln and causal are set too) */
    bool rotary;
    /* ALiBi (BLOOM): no position table, each head's scores get -slope_h |i - j| before the
       mask (build_alibi_tensor's slopes, atn_alibi_slopes), LayerNorm on the embeddings
       (tensors.emb_ln_w) although the blocks are pre-LN (pre_ln and causal are set too) */
    bool alibi;
    /* ModernBERT: a bidirectional pre-norm encoder with rotary positions (no position table),
       LayerNorms (bias per norm_bias), the fused Wqkv [3d, d] (rows q | k | v) and Wi [2f, d]
       (rows input | gate: act(input) * gate), layer 0 without an attention norm, global layers
       every global_attn_every_n_layers and a local window in the others
       (engine/formats/hf-rotary.c, atn_hf_modernbert_config), the masked-LM head */
    bool rotary_encoder;
    /* Gemma 2 / Gemma 3 text (rotary is set too): embeddings times sqrt(hidden_size), RMSNorm
       gains 1 + w, four norms per layer (tensors.post_attn_ln_w / post_ffn_ln_w), GeGLU,
       query_pre_attn_scalar, soft-caps, sliding and global layers (engine/formats/
       hf-rotary.c, atn_hf_gemma_config) */
    bool gemma;
    /* DeBERTa-v2/v3, mDeBERTa: BERT's post-LN layers with disentangled attention (content and
       relative-position terms, log buckets; engine/formats/hf-deberta.c reads its keys,
       engine/forward/deberta.c adds the terms), XSoftmax (a padded query's row is all zero,
       its embedding row too), absolute positions only with position_biased_input, token types
       only with type_vocab_size > 0, the masked-LM head as cls.predictions.* or
       lm_predictions.lm_head.* */
    bool disentangled;
    /* an encoder-decoder (T5 / mT5 / Flan-T5): config and tensors read by
       engine/formats/hf-encdec.c into atn_model.encdec, the decoder and its cross-attention
       run by the same layer walk (engine/forward/encoder.c, atn_walk.cross_seq) */
    int encdec;   /* atn_encdec_kind (model-private.h): 1 T5, 2 BART, 3 Marian; 0 none */
} atn_family;

/* The BERT family (also what toy and random models are: post-LN BERT encoders). */
const atn_family *atn_family_bert(void);
/* The GPT-2 family (model_type "gpt2"; random models of the "gpt2" shape). */
const atn_family *atn_family_gpt2(void);

/* Number of families and the i-th (0 <= i < count), in table order. */
int32_t atn_family_count(void);
const atn_family *atn_family_at(int32_t i);

/* The family whose table accepts model_type (exact, case-sensitive, as transformers
 * compares it).  NULL model_type or an unknown one: NULL and ATN_E_UNSUPPORTED in err,
 * the message "<where>: "model_type" is "<value>": ... (supported: "bert", ...)"
 * naming where it came from (config.json's path; NULL: "config.json"). */
const atn_family *atn_family_lookup(const char *model_type, const char *where, atn_error *err);

/* pos[i] for each of enc's n tokens, by the family's position rule (pos has n entries,
 * caller's memory; c gives pad_token_id for AFTER_PAD).  Called once per run by
 * engine/forward/run.c, whose input check keeps every id below the model's max_positions
 * (n <= atn_family_max_tokens). */
void atn_family_position_ids(const atn_family *f, const atn_config *c, const atn_encoding *enc, int32_t *pos);

/* The most tokens one run may have: max_positions (FROM_0), max_positions - pad_token_id - 1
 * (AFTER_PAD; roberta-base: 514 - 1 - 1 = 512), at least 0. */
int32_t atn_family_max_tokens(const atn_family *f, const atn_config *c);

/* The stored weights captured layer l (0 <= l < c->n_layers) runs, for a family with
 * shared layers (tensors.inner): inner = l % inner_layers, application i = l / inner_layers,
 * group = int(i / (applied / n_groups)) as AlbertTransformer computes it in floating point.
 * applied is num_hidden_layers (the group applications), n_groups num_hidden_groups. */
void atn_family_layer_source(int32_t l, int32_t applied, int32_t n_groups, int32_t inner_layers, int32_t *group,
                             int32_t *inner);

#endif
