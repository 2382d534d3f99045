/* The inside of an atn_model: configuration, weight pointers and where they live.
 * Shared by the loaders (toy JSON, Hugging Face folders) and the backends. */
#ifndef ATN_MODEL_PRIVATE_H
#define ATN_MODEL_PRIVATE_H

#include "attnscope.h"

#include <signal.h>

/* One encoder layer.  Linear weights are [out, in] (y = x W^T + b), as in Hugging Face.
 * A NULL weight means identity (toy models only), a NULL bias or LayerNorm beta means
 * zero, a NULL LayerNorm gamma means one. */
typedef struct atn_layer_weights {
    const float *wq, *bq;        /* [d, d], [d]  attention.self.query */
    const float *wk, *bk;        /* [d, d], [d]  attention.self.key */
    const float *wv, *bv;        /* [d, d], [d]  attention.self.value */
    const float *wo, *bo;        /* [d, d], [d]  attention.output.dense */
    const float *ln1_g, *ln1_b;  /* [d]          attention.output.LayerNorm */
    const float *w1, *b1;        /* [f, d], [f]  intermediate.dense */
    const float *w2, *b2;        /* [d, f], [d]  output.dense */
    const float *ln2_g, *ln2_b;  /* [d]          output.LayerNorm */
    /* rotary decoders (Llama, Qwen, Mistral; atn_rotary): wq is [H k, d], wk and wv
       [KV k, d], wo [d, H k]; RMSNorms have no bias (ln1_b, ln2_b NULL) */
    const float *wg, *bg;        /* [f, d], [f]  mlp.gate_proj (cfg.gated_ffn; w1 is up_proj) */
    const float *q_norm_g;       /* [k]          self_attn.q_norm (Qwen3's per-head RMSNorm), or NULL */
    const float *k_norm_g;       /* [k]          self_attn.k_norm */
    /* Gemma 2 / 3's sandwich norms (RMSNorm, gain 1 + w as stored): the attention's output is
       normalised before its residual, the MLP's before its own; NULL: none (ln2_g is then
       pre_feedforward_layernorm) */
    const float *post_attn_g;    /* [d]          post_attention_layernorm */
    const float *post_ffn_g;     /* [d]          post_feedforward_layernorm */
    /* DeBERTa-v2/v3 (atn_deberta): the relative embeddings' projections into keys (c2p) and
       queries (p2c), attention.self.pos_key_proj / pos_query_proj; with share_att_key they
       point at wk/bk and wq/bq.  NULL when the layer has no such term */
    const float *wpk, *bpk;      /* [d, d], [d] */
    const float *wpq, *bpq;      /* [d, d], [d] */
    /* an encoder-decoder's decoder layer (atn_encdec): the cross-attention, queries from the
       decoder ([H k, d] cq), keys and values from the encoder's output ([H k, d] ck, cv), its
       output [d, H k] co, and its norm (T5: before it; BART: after the residual) */
    const float *cq, *bcq, *ck, *bck, *cv, *bcv, *co, *bco;
    const float *lnc_g, *lnc_b;
} atn_layer_weights;

/* E below is the embedding width, atn_d_embed(cfg): d_model except for ALBERT and ELECTRA. */
typedef struct atn_weights {
    const float *word_emb;       /* [V, E]         embeddings.word_embeddings */
    const float *pos_emb;        /* [max_pos, E]   embeddings.position_embeddings */
    const float *type_emb;       /* [types, E]     embeddings.token_type_embeddings; NULL: none */
    const float *emb_ln_g;       /* [E]            embeddings.LayerNorm */
    const float *emb_ln_b;
    /* [L] captured layers; ALBERT's entries repeat the pointers of the layer they share
       (see layer_groups in atn_model) */
    atn_layer_weights *layers;
    /* masked-LM head (cls.predictions.*); NULL when absent */
    const float *mlm_dense_w, *mlm_dense_b;   /* [E, d], [E] transform.dense */
    const float *mlm_ln_g, *mlm_ln_b;         /* [E] transform.LayerNorm */
    const float *mlm_decoder_w;               /* [V, E]; NULL: tied to word_emb */
    const float *mlm_decoder_b;               /* [V] cls.predictions.bias */
    /* the projection of the embeddings to d before layer 0 (ALBERT's
       embedding_hidden_mapping_in, ELECTRA's embeddings_project); NULL: none (E == d) */
    const float *emb_proj_w, *emb_proj_b;     /* [d, E], [d] */
    /* pre-LN families (GPT-2): the final LayerNorm after the last block (ln_f); NULL when
       the family has none */
    const float *final_ln_g, *final_ln_b;     /* [d] */
    /* next-token families: lm_head.weight when stored; NULL: tied to word_emb */
    const float *lm_head_w;                   /* [V, d] */
} atn_weights;

/* The embedding width E of a configuration (d_embed, 0 meaning d_model). */
static inline int32_t atn_d_embed(const atn_config *c) { return c->d_embed > 0 ? c->d_embed : c->d_model; }

/* A rotary decoder's attention (Llama, Qwen2, Qwen3, Mistral): what config.json set,
 * read by hf-model.c, used by the layer walk (engine/forward/layer.c) and the trace. */
typedef struct atn_rotary {
    bool on;                  /* false: every other family (absolute positions, LayerNorm) */
    bool rms_norm;            /* RMSNorm: x / sqrt(mean(x^2) + eps) * g */
    bool qk_norm;             /* Qwen3: RMSNorm of each head's q and k before the rotation */
    double theta;             /* rope_theta */
    const char *scaling;      /* rope_scaling's type: "none", "linear", "llama3" (static) */
    double factor, low_freq_factor, high_freq_factor;
    int32_t original_max_positions;
    float *inv_freq;          /* [d_head / 2] the rotation's frequencies after the scaling (model-owned) */
    /* the sliding window (Mistral, Qwen2's use_sliding_window): query i sees key j only when
       i - j < window; 0: none.  Every layer has it (a per-layer window is refused) */
    int32_t window;
    /* ModernBERT: layer l is local when global_every > 0 and l % global_every != 0; a local
       layer turns q and k with inv_freq_local (local_rope_theta, theta_local) and its query i
       sees key j only when |i - j| <= local_half (HF's local_attention // 2); 0: every layer
       global.  rms_norm false there: LayerNorms without bias */
    int32_t global_every, local_half;
    double theta_local;
    float *inv_freq_local;    /* [d_head / 2] (model-owned), NULL unless some layers are local
                                 with a base of their own (ModernBERT, Gemma 3) */
    /* Gemma 2 / 3: local_layers[l] 1 for a sliding layer (layer_types, or the pattern the
       config class derives), whose query i sees key j only when i - j < local_window (HF's
       sliding_window_overlay); model-owned [n_layers], NULL: no such layers.  Gemma 2's
       local layers turn q and k by inv_freq (inv_freq_local NULL), Gemma 3's by
       rope_local_base_freq's */
    uint8_t *local_layers;
    int32_t local_window;
    /* Gemma: scores times query_scale (query_pre_attn_scalar^-1/2; 0: 1/sqrt(d_head)),
       attention soft-cap tanh(s / attn_softcap) attn_softcap before the mask (0: none),
       the LM head's logits soft-capped by final_softcap (0: none), the embeddings times
       embed_scale (sqrt(hidden_size) rounded to the embeddings' dtype; 0: none).  The
       RMSNorm gains 1 + w are made at load (the model's norm gains are those sums) */
    float query_scale, attn_softcap, final_softcap, embed_scale;
} atn_rotary;

/* An encoder-decoder (T5 / mT5 / Flan-T5, BART, Marian): the encoder is the model's usual
 * layers (cfg.n_layers, w.layers, w.final_ln_g); the decoder is read here.  Filled by the
 * loader (engine/formats/hf-encdec.c), run by engine/forward/encoder.c with the one walk. */
typedef enum atn_encdec_kind { ATN_ENCDEC_NONE = 0, ATN_ENCDEC_T5, ATN_ENCDEC_BART, ATN_ENCDEC_MARIAN } atn_encdec_kind;

typedef struct atn_encdec {
    atn_encdec_kind kind;
    int32_t n_dec_layers;
    atn_layer_weights *dec_layers;   /* [n_dec_layers] (model-owned) */
    const float *dec_final_g, *dec_final_b;   /* [d] the decoder's final norm; NULL: none */
    const float *dec_emb;            /* [V, d] the decoder's input embeddings (T5: shared) */
    const float *dec_pos_emb;        /* [rows, d] the decoder's positions (BART / Marian), NULL: none */
    const float *dec_emb_ln_g, *dec_emb_ln_b;   /* BART's decoder layernorm_embedding */
    const float *lm_head;            /* [V, d]: the LM head (tied: the shared embeddings) */
    const float *final_logits_bias;  /* [V] BART / Marian, or NULL */
    float lm_scale;                  /* the decoder output's factor before the head (T5 tied: d^-0.5) */
    float emb_scale;                 /* the embeddings' factor (scale_embedding: sqrt(d)), 1: none */
    int32_t pos_offset;              /* BART's learned positions start at row 2 */
    int32_t decoder_start_id;
    /* T5's relative position buckets: [num_buckets][H] tables from layer 0's
       relative_attention_bias, the encoder's bidirectional, the decoder's causal */
    const float *enc_rel_bias, *dec_rel_bias;
    int32_t num_buckets, max_distance;
} atn_encdec;

/* T5's _relative_position_bucket (modeling_t5.py) for key position minus query position rel. */
int32_t atn_t5_bucket(int32_t rel, bool bidirectional, int32_t num_buckets, int32_t max_distance);
/* out[H][nq][nk] = table[bucket(j - i)][h], T5Attention.compute_bias. */
void atn_t5_position_bias(float *out, const float *table, int32_t H, int32_t nq, int32_t nk, bool bidirectional,
                          int32_t num_buckets, int32_t max_distance);

/* Whether layer l of a model with rotary r is a local layer (ModernBERT's, Gemma's sliding ones). */
static inline bool atn_rotary_local_layer(const atn_rotary *r, int32_t l) {
    if (r->local_layers)
        return r->local_layers[l] != 0;
    return r->global_every > 0 && l % r->global_every != 0;
}

/* Whether some layers of r are local (a second mask per run: the local layers' and the others'). */
static inline bool atn_rotary_has_local(const atn_rotary *r) {
    return r->global_every > 0 || r->local_layers != NULL;
}
/* DeBERTa-v2/v3's disentangled attention (modeling_deberta_v2.py, DisentangledSelfAttention):
 * what config.json set, read by engine/formats/hf-deberta.c, used by the layer walk's attend
 * (engine/forward/deberta.c adds the terms) and the trace.  Query i and key j read relative
 * embedding row atn_deberta_index(i, j) = clamp(bucket(i - j) + span, 0, 2 span - 1). */
typedef struct atn_deberta {
    bool on;                  /* false: every other family */
    bool relative;            /* relative_attention: the c2p / p2c terms are added */
    bool c2p, p2c;            /* pos_att_type: content->position, position->content */
    bool share_att_key;       /* the terms project with the layer's own key_proj / query_proj */
    bool norm_rel_ebd;        /* norm_rel_ebd "layer_norm": LayerNorm over rel_embeddings */
    bool position_biased_input;   /* absolute position embeddings added to the input */
    int32_t buckets;          /* position_buckets (<= 0: none, the distances clamped) */
    int32_t max_relative;     /* max_relative_positions (< 1 in config.json: max_position_embeddings) */
    int32_t span;             /* att_span: buckets when > 0, else max_relative */
    int32_t scale_factor;     /* 1 + the number of pos_att_type terms: scores / sqrt(k scale_factor) */
    const float *rel_emb;     /* [2 span, d] encoder.rel_embeddings, after its LayerNorm (model-owned
                                 when normalised) */
    const float *rel_ln_g, *rel_ln_b;   /* [d] encoder.LayerNorm (norm_rel_ebd), as stored */
} atn_deberta;

struct atn_tokenizer;   /* engine/tokenize/tokenizer.h: the interface (WordPiece today) */
struct atn_family;      /* engine/core/family.h */

/* A block of memory the model owns; freed with the model. */
typedef struct atn_model_block {
    void *ptr;
    size_t len;
    bool mapped;   /* munmap instead of free */
    /* a mapping of a file (atn_model_own_file): the file as it was at open, checked before
       each forward (atn_model_check_files); NULL path otherwise */
    char *path;
    unsigned long long dev, ino;
    long long size, mtime_ns;
} atn_model_block;

struct atn_model {
    atn_model_kind kind;
    /* the architecture family's table (engine/core/family.h): never NULL; BERT unless the loader
       found another model_type (toy and random models are BERT-layout encoders) */
    const struct atn_family *family;
    atn_config cfg;
    atn_weights w;
    /* ALBERT's sharing (atn_model_layer_weights): cfg.n_layers = layer_applied x
       layer_inner captured layers run layer_groups x layer_inner stored layers; all 0 when
       each layer has its own weights */
    int32_t layer_groups, layer_inner, layer_applied;
    char *name;
    char *path;

    /* toy models: their tokens and input vectors X [n, d] (mutable: the GUI edits them) */
    int32_t toy_n;
    char **toy_tokens;
    float *toy_x;
    /* toy models own every weight they have (malloc'ed through atn_model_alloc_floats),
       so toy-model.c may write through the const pointers of w */

    /* Hugging Face models */
    struct atn_tokenizer *tokenizer;

    atn_model_block *blocks;
    int32_t n_blocks;

    /* opaque per-backend state (weights uploaded to a GPU ...), freed with the model */
    void *backend_state;
    void (*backend_state_free)(void *state);

    /* the CPU forward's copy of the layer weights packed for its GEMM kernel (encoder.c),
       made on the first forward of a BERT model; its memory is one of blocks.  Toy models
       (editable) never get one; code that changes a BERT model's weights must drop it */
    void *cpu_packed;
    /* reduced-precision runs on the CPU: the weights rounded to bf16 / fp16 (index
       atn_precision; engine/forward/precision.c), made on the first such run; memory in blocks.
       Toy models never keep them; code that changes a model's weights must drop them */
    struct atn_rounded_weights *cpu_rounded[3];

    /* GPT-2's attention scaling (config.json; atn_attn_scale in encoder.c reads them):
       attn_no_scale: scale_attn_weights false (no 1/sqrt(k)); attn_scale_by_layer:
       scale_attn_by_inverse_layer_idx (scores / (layer + 1) too).  Both false for BERT */
    bool attn_no_scale;
    bool attn_scale_by_layer;
    /* a rotary decoder's attention (Llama, Qwen2, Qwen3, Mistral); on false otherwise */
    atn_rotary rotary;
    /* DeBERTa-v2/v3's disentangled attention; on false otherwise */
    atn_deberta deberta;
    /* an encoder-decoder's decoder (kind NONE for every other model) */
    atn_encdec encdec;
    /* the float32 copies hf-model.c made at open (atn_model_converted_bytes) and the bytes
       their tensors take in the files */
    uint64_t converted_bytes, converted_from_bytes;
    /* set by the SIGBUS guard (mapguard.h) when a mapped file turned out shorter */
    volatile sig_atomic_t file_changed;
};

/* Whether a model reads its token type ids: a family with type embeddings, unless the
 * checkpoint has none (DeBERTa-v3's type_vocab_size 0: the ids are ignored, as HF does). */
static inline bool atn_model_reads_types(const atn_model *m, bool family_types) {
    return family_types && !(m->deberta.on && !m->w.type_emb);
}

/* Hands a read-only mapping of path to the model (as atn_model_own(..., true)), guarded
 * against SIGBUS (mapguard.h) and remembered for atn_model_check_files.  False when out of
 * memory (the mapping is then unmapped). */
bool atn_model_own_file(atn_model *model, void *ptr, size_t len, const char *path);
/* ATN_E_IO, "PATH: the file changed while the model was open (it is now N bytes, was M);
 * reopen the model", when a mapped file is no longer as it was at open (size, modification
 * time, inode) or the guard caught a read past its end; ATN_OK otherwise. */
atn_status atn_model_check_files(const atn_model *model, atn_error *err);
/* Gives back this process's copy of the pages wholly inside [ptr, ptr + len) when that range
 * lies in one of the model's read-only mappings of a file (atn_model_own_file): the packed
 * copy of the layer weights (engine/forward/encoder.c) makes the mapped F32 matrices idle, and both
 * resident would be two copies of the weights.  The data stay as they were: a later read
 * (the cblas path, a reduced precision, the GPU upload, the trace) faults the pages back in
 * from the page cache or the file.  Memory that is not such a mapping (a random model, F16
 * converted to F32) is left alone.  Returns the bytes given back; safe to call while other
 * threads read the range. */
size_t atn_model_release_file_pages(const atn_model *model, const void *ptr, size_t len);

/* "token type T at position P is outside 0..N-1"; for a model with one token type it says so
 * and that sentence pairs are not supported (a pair's second segment has type 1).
 * Returns ATN_E_INVALID. */
atn_status atn_type_id_error(const atn_model *m, int32_t type_id, int32_t pos, atn_error *err);

/* Allocates and zeroes a model (family: BERT); name/path are copied. */
atn_model *atn_model_alloc(atn_model_kind kind, const char *name, const char *path);
/* Takes ownership of ptr (malloc'ed, or mmap'ed when mapped). Returns false on OOM
 * (and frees/unmaps ptr). */
bool atn_model_own(atn_model *model, void *ptr, size_t len, bool mapped);
/* Allocates floats owned by the model (zeroed). */
float *atn_model_alloc_floats(atn_model *model, size_t count);

#endif
